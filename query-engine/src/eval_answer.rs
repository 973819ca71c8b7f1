//! `coal eval answer`: the engine's answers on question sets, routed and under each
//! ablation, scored by article precision/recall/F1, ROUGE-1/2/L, BLEU-4, tiers, latency.

use std::collections::{BTreeMap, HashSet};
use std::time::Instant;

use serde::Serialize;

use crate::QueryError;
use crate::answer_metrics::{article_prf, bleu4, rouge_l, rouge_n};
use crate::engine::{AskOptions, Engine};
use crate::eval::EvalItem;

/// One configuration of the engine: routed, or one ablation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Variant {
    Routed,
    Tier(u8),
    WithoutIntrinsic,
    WithoutConsistency,
    FixedTop10,
}

pub const ALL_VARIANTS: [Variant; 8] = [
    Variant::Routed,
    Variant::Tier(1),
    Variant::Tier(2),
    Variant::Tier(3),
    Variant::Tier(4),
    Variant::WithoutIntrinsic,
    Variant::WithoutConsistency,
    Variant::FixedTop10,
];

impl Variant {
    pub fn name(self) -> String {
        match self {
            Variant::Routed => "routed".into(),
            Variant::Tier(t) => format!("tier {t}"),
            Variant::WithoutIntrinsic => "w/o intrinsic".into(),
            Variant::WithoutConsistency => "w/o consistency".into(),
            Variant::FixedTop10 => "fixed top-10".into(),
        }
    }

    pub fn parse(s: &str) -> Option<Variant> {
        Some(match s {
            "routed" => Variant::Routed,
            "tier1" => Variant::Tier(1),
            "tier2" => Variant::Tier(2),
            "tier3" => Variant::Tier(3),
            "tier4" => Variant::Tier(4),
            "no-intrinsic" => Variant::WithoutIntrinsic,
            "no-consistency" => Variant::WithoutConsistency,
            "top10" => Variant::FixedTop10,
            _ => return None,
        })
    }

    pub fn options(self) -> AskOptions {
        let mut o = AskOptions::default();
        match self {
            Variant::Routed => {}
            Variant::Tier(t) => o.force_tier = Some(t),
            Variant::WithoutIntrinsic => o.without_intrinsic = true,
            Variant::WithoutConsistency => o.without_consistency = true,
            Variant::FixedTop10 => o.fixed_top = Some(10),
        }
        o
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct AnswerReport {
    pub questions: usize,
    /// Questions with gold articles (the article metrics average over these).
    pub with_gold: usize,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    /// Share of questions (with gold) whose first citation is a gold article.
    pub hit_at_1: f64,
    /// Recall of the first 10 and 100 articles of the routed ranking (before the score
    /// cliff).
    pub recall_at_10: f64,
    pub recall_at_100: f64,
    /// The same three over the questions with two or more gold articles.
    pub multi_gold: usize,
    pub multi_f1: f64,
    pub multi_recall_at_10: f64,
    pub multi_recall_at_100: f64,
    /// Articles in the context, on average.
    pub mean_context: f64,
    /// Questions with a reference answer (the text metrics average over these).
    pub with_answer: usize,
    pub rouge1: f64,
    pub rouge2: f64,
    pub rouge_l: f64,
    pub bleu4: f64,
    pub tiers: BTreeMap<u8, usize>,
    /// Questions by what decomposed them: `rules`, or a chat model's id (a model whose
    /// reply did not parse leaves the question to the rules).
    pub decomposed_by: BTreeMap<String, usize>,
    pub p50_ms: f64,
    pub p95_ms: f64,
    /// Citations that are not articles of the store (must be 0).
    pub invalid_citations: usize,
    /// Citations of generated answers that the validator removed before they reached
    /// the answer (unknown article, a source number outside the context).
    pub removed_citations: usize,
    /// The same run by question type (what each tier wins on and what it costs there).
    pub by_type: BTreeMap<String, TypeStats>,
    /// Each question's outcome, for error analysis (`--per-item`).
    #[serde(skip)]
    pub per_item: Vec<ItemResult>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ItemResult {
    pub id: String,
    pub tier: u8,
    pub decomposed_by: String,
    pub kind: crate::engine::AnswerKind,
    pub cited: Vec<String>,
    pub f1: Option<f64>,
    /// Gold articles, and the recall of the first 10 of the ranking.
    pub gold: usize,
    pub recall_at_10: Option<f64>,
    /// The IRIs that count for each gold article, and the tier's ranking (its first
    /// [`PER_ITEM_RANKED`]): what re-ranking experiments replay without asking again.
    pub gold_iris: Vec<Vec<String>>,
    pub ranked: Vec<String>,
    /// The routing signals (absent for lookups).
    pub c_intrinsic: Option<f64>,
    pub c_consistency: Option<f64>,
    pub c_final: Option<f64>,
    pub question_type: Option<crate::complexity::QuestionType>,
    /// Links to the graph, each as `kind IRI`, best first within a kind (what
    /// scripts/topic_link_analysis.py checks against the gold articles).
    pub links: Vec<String>,
    /// The candidates the chat model judged, as (IRI, place in the tier's ranking before
    /// the judgement, probability), in the order they took (`[method] judge_from_tier`;
    /// empty otherwise).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub judged: Vec<(String, usize, f64)>,
    /// Articles in the context, and the question's wall time.
    pub context: usize,
    pub ms: f64,
}

/// One question type's share of a run: article F1 and Recall@10 over its questions with
/// gold, the mean context and the median time.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TypeStats {
    pub questions: usize,
    pub f1: f64,
    pub recall_at_10: f64,
    pub mean_context: f64,
    pub p50_ms: f64,
}

/// What the article lookups answered from the graph before routing are reported as
/// among the question types (they carry no routing signals).
pub const GRAPH_LOOKUP_TYPE: &str = "ArticleLookup (graph)";

/// The name a question type is reported under: the classifier's, or [`GRAPH_LOOKUP_TYPE`].
fn type_name(it: &ItemResult) -> String {
    it.question_type
        .map_or_else(|| GRAPH_LOOKUP_TYPE.to_owned(), |t| format!("{t:?}"))
}

/// [`TypeStats`] of each question type among `items`.
pub fn by_question_type(items: &[ItemResult]) -> BTreeMap<String, TypeStats> {
    let mut groups: BTreeMap<String, Vec<&ItemResult>> = BTreeMap::new();
    for it in items {
        groups.entry(type_name(it)).or_default().push(it);
    }
    groups
        .into_iter()
        .map(|(name, its)| {
            let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
            let mut ms: Vec<f64> = its.iter().map(|i| i.ms).collect();
            ms.sort_by(f64::total_cmp);
            let stats = TypeStats {
                questions: its.len(),
                f1: mean(its.iter().filter_map(|i| i.f1).collect()),
                recall_at_10: mean(its.iter().filter_map(|i| i.recall_at_10).collect()),
                mean_context: mean(its.iter().map(|i| i.context as f64).collect()),
                p50_ms: quantile(&ms, 0.5),
            };
            (name, stats)
        })
        .collect()
}

/// How much of each question's ranking `--per-item` keeps.
pub const PER_ITEM_RANKED: usize = 30;

/// What a configured chat model is used for in an evaluation (by default: all it can
/// do; drafting is `[method] draft_from_tier`'s).
#[derive(Debug, Clone, Copy, Default)]
pub struct ModelUse {
    /// It does not write the answers: they stay extractive.
    pub extractive: bool,
    /// It does not decompose the questions: the rules do.
    pub rule_decomposition: bool,
}

/// The `q` quantile of sorted values (nearest rank; 0 for none).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() - 1) as f64 * q).round() as usize]
}

/// Runs `variant` on every item; `gold[i]` holds one set of acceptable IRIs per gold
/// article of item `i`.
pub fn evaluate(
    engine: &Engine,
    items: &[EvalItem],
    gold: &[Vec<HashSet<String>>],
    variant: Variant,
    model_use: ModelUse,
) -> Result<AnswerReport, QueryError> {
    evaluate_reporting(engine, items, gold, variant, model_use, &mut |_| {})
}

/// [`evaluate`], calling `answered(n)` after the n-th question: with a model a question
/// takes seconds, and the caller shows how far a run of hundreds has come.
pub fn evaluate_reporting(
    engine: &Engine,
    items: &[EvalItem],
    gold: &[Vec<HashSet<String>>],
    variant: Variant,
    model_use: ModelUse,
    answered: &mut dyn FnMut(usize),
) -> Result<AnswerReport, QueryError> {
    let mut opts = variant.options();
    opts.extractive = model_use.extractive;
    opts.rule_decomposition = model_use.rule_decomposition;
    let mut r = AnswerReport {
        questions: items.len(),
        ..Default::default()
    };
    for (n, (item, golds)) in items.iter().zip(gold).enumerate() {
        let t = Instant::now();
        let a = engine.ask(&item.question, &opts)?;
        answered(n + 1);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        *r.tiers.entry(a.tier).or_default() += 1;
        *r.decomposed_by
            .entry(a.trace.decomposed_by.clone())
            .or_default() += 1;
        let cited: Vec<String> = a.citations.iter().map(|c| c.iri.clone()).collect();
        r.invalid_citations += cited.iter().filter(|c| !engine.is_article(c)).count();
        r.removed_citations += a.trace.removed_citations.len();
        let prf = article_prf(&cited, golds);
        let cx = a.trace.complexity.as_ref();
        let links = a
            .trace
            .links
            .iter()
            .map(|l| format!("{} {}", format!("{:?}", l.kind).to_lowercase(), l.iri))
            .collect();
        r.per_item.push(ItemResult {
            id: item.id.clone(),
            tier: a.tier,
            decomposed_by: a.trace.decomposed_by.clone(),
            kind: a.kind.clone(),
            cited: cited.clone(),
            f1: prf.map(|x| x.2),
            gold: golds.len(),
            recall_at_10: article_prf(&a.trace.ranked[..a.trace.ranked.len().min(10)], golds)
                .map(|x| x.1),
            gold_iris: golds
                .iter()
                .map(|g| {
                    let mut v: Vec<String> = g.iter().cloned().collect();
                    v.sort();
                    v
                })
                .collect(),
            ranked: a
                .trace
                .ranked
                .iter()
                .take(PER_ITEM_RANKED)
                .cloned()
                .collect(),
            c_intrinsic: cx.map(|c| c.intrinsic.c_intrinsic),
            c_consistency: cx.map(|c| c.consistency.c_consistency),
            c_final: cx.map(|c| c.c_final),
            question_type: cx.map(|c| c.intrinsic.question_type),
            links,
            judged: a
                .trace
                .judged
                .iter()
                .map(|j| (j.iri.clone(), j.rank, j.p))
                .collect(),
            context: a.context.len(),
            ms,
        });
        if prf.is_some()
            && cited
                .first()
                .is_some_and(|c| golds.iter().any(|g| g.contains(c)))
        {
            r.hit_at_1 += 1.0;
        }
        r.mean_context += a.context.len() as f64;
        let top10 = &a.trace.ranked[..a.trace.ranked.len().min(10)];
        let rec10 = article_prf(top10, golds).map(|x| x.1);
        let rec100 = article_prf(&a.trace.ranked, golds).map(|x| x.1);
        if let (Some(r10), Some(r100)) = (rec10, rec100) {
            r.recall_at_10 += r10;
            r.recall_at_100 += r100;
            if golds.len() >= 2 {
                r.multi_recall_at_10 += r10;
                r.multi_recall_at_100 += r100;
            }
        }
        if let Some((p, rec, f)) = prf {
            r.with_gold += 1;
            r.precision += p;
            r.recall += rec;
            r.f1 += f;
            if golds.len() >= 2 {
                r.multi_gold += 1;
                r.multi_f1 += f;
            }
        }
        if !item.answer.trim().is_empty() {
            r.with_answer += 1;
            r.rouge1 += rouge_n(&a.answer, &item.answer, 1);
            r.rouge2 += rouge_n(&a.answer, &item.answer, 2);
            r.rouge_l += rouge_l(&a.answer, &item.answer);
            r.bleu4 += bleu4(&a.answer, &item.answer);
        }
    }
    let g = r.with_gold.max(1) as f64;
    r.precision /= g;
    r.recall /= g;
    r.f1 /= g;
    r.hit_at_1 /= g;
    r.recall_at_10 /= g;
    r.recall_at_100 /= g;
    let m = r.multi_gold.max(1) as f64;
    r.multi_f1 /= m;
    r.multi_recall_at_10 /= m;
    r.multi_recall_at_100 /= m;
    r.mean_context /= r.questions.max(1) as f64;
    let n = r.with_answer.max(1) as f64;
    r.rouge1 /= n;
    r.rouge2 /= n;
    r.rouge_l /= n;
    r.bleu4 /= n;
    let mut lat: Vec<f64> = r.per_item.iter().map(|i| i.ms).collect();
    lat.sort_by(f64::total_cmp);
    r.p50_ms = quantile(&lat, 0.5);
    r.p95_ms = quantile(&lat, 0.95);
    r.by_type = by_question_type(&r.per_item);
    Ok(r)
}
