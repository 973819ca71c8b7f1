//! A second look at extracted triples (`[llm] verify_triples`): the model reads each
//! triple the grounding rules kept, written out as a plain statement beside its article,
//! and says whether the article says that. The answer is read from the model's logits
//! (the probability of 是 against 否) rather than sampled, so the threshold is a number a
//! user sets, and a triple the model doubts is dropped.
//!
//! Why: the grounding rules check cue words and conventions, not meaning; the wrong
//! triples they keep give a duty to the wrong actor, drop a negation (不得拒绝检查 →
//! 拒绝检查) or cut the object short, which a reader of the sentence sees at once.

use coal_models::ChatModel;
use serde::Serialize;

use crate::extract::{Asked, Job, ReplyCache, Triple};

/// The answers the model chooses between, each one token.
pub use coal_models::YES_NO as OPTIONS;

pub fn system_prompt() -> &'static str {
    "你审核从法律条文中抽取的陈述。给你一条条文和一句陈述，判断陈述是否忠实于条文：\
     主体必须是条文中承担这项权利、义务或责任的一方，行为和对象与条文一致，\
     否定词（不得、不、禁止）不能丢失或添加，内容不能残缺。只回答“是”或“否”。"
}

/// The triple as a sentence a reader can check against the article.
pub fn statement(t: &Triple) -> String {
    let (s, o) = (&t.subject, &t.object);
    match t.relation.as_str() {
        "规定" => format!("「{s}」规定了「{o}」。"),
        "定义" => format!("「{s}」是指「{o}」。"),
        "适用于" => format!("「{s}」适用于「{o}」。"),
        "引用" => format!("「{s}」引用了「{o}」。"),
        "依据" => format!("「{s}」的依据是「{o}」。"),
        "修改" => format!("「{s}」修改了「{o}」。"),
        "废止" => format!("「{s}」废止了「{o}」。"),
        "解释" => format!("「{s}」解释了「{o}」。"),
        "主体-权利" => format!("「{s}」享有这项权利：「{o}」。"),
        "主体-义务" => format!("「{s}」负有这项义务：「{o}」。"),
        "主体-责任" => format!("「{s}」承担这项责任：「{o}」。"),
        "条件-结果" => format!("在「{s}」的情况下，「{o}」。"),
        "程序-步骤" => format!("「{s}」的程序包括「{o}」。"),
        "层级" | "隶属" => format!("「{s}」隶属于「{o}」。"),
        "地域范围" => format!("「{s}」的地域范围是「{o}」。"),
        "时间" => format!("「{s}」的时间是「{o}」。"),
        "生效" => format!("「{s}」自「{o}」起施行。"),
        other => format!("「{s}」{other}「{o}」。"),
    }
}

/// `article` is the article as the extraction prompt gave it (《statute》label：text).
pub fn user_prompt(article: &str, t: &Triple) -> String {
    format!(
        "条文：{article}\n陈述：{}\n这句陈述忠实于条文吗？",
        statement(t)
    )
}

/// The model's probability that `article` says what `t` says, through the reply cache
/// (a cached judgement costs no call; a failing backend is asked again, then `Err`).
pub fn judge(chat: &dyn ChatModel, cache: &ReplyCache, article: &str, t: &Triple) -> Asked<f64> {
    let system = system_prompt();
    let user = user_prompt(article, t);
    crate::extract::ask_cached_with(
        chat,
        cache,
        system,
        &user,
        || Ok(chat.option_probabilities(system, &user, &OPTIONS)?[0].to_string()),
        |p| {
            p.parse::<f64>()
                .map_err(|e| format!("not a probability: {e}"))
        },
    )
}

/// One line of a hand-checked sample (`tests/fixtures/checked-triples*.jsonl`): a triple
/// an extraction kept, its law (path under the corpus) and article, and the judgement.
#[derive(Debug, Clone, serde::Deserialize, Serialize)]
pub struct CheckedTriple {
    pub law: String,
    pub article: String,
    pub subject: String,
    pub relation: String,
    pub object: String,
    pub correct: bool,
}

impl CheckedTriple {
    pub fn triple(&self) -> Triple {
        Triple {
            subject: self.subject.clone(),
            relation: self.relation.clone(),
            object: self.object.clone(),
        }
    }
}

/// What the verification did, for the build summary.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VerifyReport {
    /// Triples below this probability of 是 were dropped.
    pub threshold: f64,
    pub judged: usize,
    pub calls: usize,
    pub from_cache: usize,
    pub refused: usize,
    /// Triples the model could not judge (kept: the grounding rules decided them).
    pub failed: usize,
    pub failed_examples: Vec<String>,
    /// Prompt tokens and seconds of the judgements made (backends that count).
    pub generation: Option<coal_models::ChatTotals>,
}

/// Drops from `found` (article IRI, triples) every triple the model gives a probability
/// below `threshold` of being what its article says. `jobs` are the extraction's, for
/// the article texts. Never fails on model output: an unjudged triple is kept.
pub fn verify(
    chat: &dyn ChatModel,
    cache: &ReplyCache,
    jobs: &[Job],
    found: &mut [(String, Vec<Triple>)],
    threshold: f64,
    progress: &dyn Fn(u64),
) -> VerifyReport {
    let article: std::collections::HashMap<&str, &str> = jobs
        .iter()
        .map(|j| (j.iri.as_str(), j.user.as_str()))
        .collect();
    let mut report = VerifyReport {
        threshold,
        ..Default::default()
    };
    let before = chat.totals();
    for (iri, triples) in found.iter_mut() {
        let text = article.get(iri.as_str()).copied().unwrap_or_default();
        triples.retain(|t| {
            let asked = judge(chat, cache, text, t);
            report.judged += 1;
            report.calls += asked.calls;
            report.from_cache += asked.from_cache as usize;
            progress(report.judged as u64);
            match asked.outcome {
                Ok(p) if p < threshold => {
                    report.refused += 1;
                    false
                }
                Ok(_) => true,
                Err(why) => {
                    report.failed += 1;
                    if report.failed_examples.len() < 20 {
                        report.failed_examples.push(format!("{iri}: {why}"));
                    }
                    true
                }
            }
        });
    }
    report.generation = chat
        .totals()
        .zip(before)
        .map(|(after, before)| after.since(&before));
    report
}

#[cfg(test)]
mod tests {
    use super::*;
    use coal_models::ModelError;

    /// A scripted judge (not a model): 是 with probability .9 for statements that keep the
    /// negation 不得, .1 for the others, and a failure for statements about 失败.
    struct ScriptedJudge;

    impl ChatModel for ScriptedJudge {
        fn id(&self) -> &str {
            "scripted-judge"
        }
        fn complete(&self, _: &str, _: &str) -> Result<String, ModelError> {
            unreachable!("the verification reads probabilities")
        }
        fn option_probabilities(
            &self,
            _: &str,
            user: &str,
            options: &[&str],
        ) -> Result<Vec<f64>, ModelError> {
            assert_eq!(options, OPTIONS);
            let statement = user.split("陈述：").nth(1).unwrap();
            if statement.contains("失败") {
                return Err(ModelError::Chat("scripted failure".into()));
            }
            let yes = if statement.contains("不得") {
                0.9
            } else {
                0.1
            };
            Ok(vec![yes, 1.0 - yes])
        }
    }

    fn triple(s: &str, r: &str, o: &str) -> Triple {
        Triple {
            subject: s.into(),
            relation: r.into(),
            object: o.into(),
        }
    }

    #[test]
    fn triples_the_model_doubts_are_dropped_and_unjudged_ones_kept() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ReplyCache::open(&dir.path().join("replies.jsonl")).unwrap();
        let article = "《社会保险法》第七十九条：用人单位不得拒绝检查。";
        let jobs = vec![Job {
            iri: "a".into(),
            user: article.into(),
            article: "用人单位不得拒绝检查。".into(),
            statute: "社会保险法".into(),
        }];
        let kept = triple("用人单位", "主体-义务", "不得拒绝检查");
        let dropped = triple("用人单位", "主体-义务", "拒绝检查");
        let unjudged = triple("用人单位", "主体-义务", "失败");
        let mut found = vec![(
            "a".to_owned(),
            vec![kept.clone(), dropped, unjudged.clone()],
        )];
        let report = verify(&ScriptedJudge, &cache, &jobs, &mut found, 0.5, &|_| {});
        assert_eq!(found[0].1, vec![kept.clone(), unjudged.clone()]);
        assert_eq!(
            (report.judged, report.refused, report.failed, report.calls),
            (3, 1, 1, 4)
        );
        assert!(report.failed_examples[0].contains("scripted failure"));
        // The judgements are cached: the next build (the cache opened again) asks only
        // for the failed one.
        let cache = ReplyCache::open(&dir.path().join("replies.jsonl")).unwrap();
        let mut again = vec![("a".to_owned(), vec![kept.clone(), unjudged])];
        let report = verify(&ScriptedJudge, &cache, &jobs, &mut again, 0.95, &|_| {});
        assert_eq!((report.from_cache, report.calls), (1, 2));
        // At a threshold above the model's .9 the kept one goes too.
        assert_eq!(again[0].1.len(), 1);
        assert_eq!(again[0].1[0].object, "失败");
    }

    #[test]
    fn every_relation_reads_as_a_sentence_with_both_terms() {
        for r in crate::extract::RELATIONS {
            let s = statement(&triple("用人单位", r, "支付劳动报酬"));
            assert!(
                s.contains("「用人单位」") && s.contains("「支付劳动报酬」"),
                "{s}"
            );
            assert!(!s.contains('-'), "{r} is not spelt out: {s}");
        }
    }
}
