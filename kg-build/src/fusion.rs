//! Entity fusion: concepts defined in different laws that denote the same thing become
//! one `coal:Entity`, with every surface form kept and every decision recorded.
//!
//! Candidates are pairs of concepts of different laws whose normalized labels are equal,
//! whose labels are similar (character-bigram Dice), or whose embeddings (label and
//! definition) are near. Rules merge when the evidence is strong, keep apart when it
//! is weak or the kinds differ without an equal label, and leave the rest unsure: an
//! LLM decides those when one is configured; without one they stay apart. A merge that
//! would join two concepts an earlier decision kept apart is refused, so fused entities
//! never chain through a weak link.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use coal_ontology::{iri, vocab};
use serde::Serialize;

use crate::rdf::QuadSink;

/// A concept as its law defines it (the latest version that defines it).
#[derive(Debug, Clone, PartialEq)]
pub struct ConceptRecord {
    pub iri: String,
    pub term: String,
    /// Long forms of an abbreviation (以下简称).
    pub alt_labels: Vec<String>,
    /// The defining sentence.
    pub definition: String,
    /// meaning, abbreviation or enumeration.
    pub kind: String,
    /// The law's short name.
    pub law: String,
}

/// Candidate pairs: labels at least this similar (bigram Dice)…
pub const CANDIDATE_LABEL: f64 = 0.6;
/// …or embeddings of the definitions at least this near. e5 puts most short legal
/// definitions above 0.9 of each other, so only near-identical ones qualify.
pub const CANDIDATE_COSINE: f64 = 0.97;
/// A shared label merges when the definitions agree this much (cosine of the
/// definitions' content; bigram Dice of it without embeddings). Measured on the eval
/// profile: same-label pairs that mean the same (用人单位 in five laws, 以上/以内 …) lie at
/// 0.90–1.0 cosine, and 财产 of 海商法 against 财产 elsewhere at 0.91.
pub const AGREE_COSINE: f64 = 0.93;
pub const AGREE_DICE: f64 = 0.5;
/// Different labels are never merged by rules (保险人/被保险人 and 土地使用权出让/出租
/// differ by one character and are 0.94 apart): the pair is unsure (for the LLM) when
/// the labels are this similar and the definitions this near…
pub const UNSURE_LABEL: f64 = 0.8;
pub const UNSURE_COSINE: f64 = 0.93;
/// …or the definitions this near whatever the labels.
pub const UNSURE_COSINE_ANY_LABEL: f64 = 0.97;

/// A label without what does not change its meaning: spaces, punctuation, full-width
/// forms, a leading 中华人民共和国, a trailing 的.
pub fn normalize(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| match c {
            '\u{FF01}'..='\u{FF5E}' => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            '\u{3000}' => ' ',
            c => c,
        })
        .filter(|c| !c.is_whitespace() && !is_punctuation(*c))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    let s = s.strip_prefix("中华人民共和国").unwrap_or(&s);
    let s = s.strip_suffix('的').unwrap_or(s);
    s.to_owned()
}

/// What a definition says beyond its boilerplate: the term, 本法所称, 是指 and
/// punctuation removed, so that two definitions are compared by their content.
pub fn definition_core(definition: &str, term: &str) -> String {
    let mut s = normalize(definition);
    let t = normalize(term);
    if !t.is_empty() {
        s = s.replace(&t, "");
    }
    for boilerplate in [
        "本法所称",
        "本条例所称",
        "本规定所称",
        "本办法所称",
        "本解释所称",
        "所称",
        "是指",
        "以下简称",
    ] {
        s = s.replace(boilerplate, "");
    }
    s
}

/// What is embedded for a concept: an abbreviation's long form, else the content of its
/// definition (the shared term and boilerplate would make every pair of one term look
/// alike), else its term.
pub fn embedded_text(c: &ConceptRecord) -> String {
    if c.kind == "abbreviation"
        && let Some(long) = c.alt_labels.first()
    {
        return long.clone();
    }
    let core = definition_core(&c.definition, &c.term);
    if core.is_empty() {
        c.term.clone()
    } else {
        core
    }
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || "“”‘’《》〈〉「」『』、，。；：！？（）【】·—…".contains(c)
}

/// Character-bigram Dice coefficient (multiset), 1 for equal strings.
pub fn dice(a: &str, b: &str) -> f64 {
    coal_corpus::bigram_dice(a, b)
}

/// What the rules say about a pair.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    Merge(String),
    Apart(String),
    Unsure(String),
}

/// The rules for one pair, given the similarity of labels (1: a shared surface form) and
/// of definitions (`with_embeddings`: a cosine, else a Dice of their content).
pub fn judge(
    a: &ConceptRecord,
    b: &ConceptRecord,
    label: f64,
    definition: f64,
    with_embeddings: bool,
) -> Verdict {
    let agree = if with_embeddings {
        AGREE_COSINE
    } else {
        AGREE_DICE
    };
    let long = |c: &ConceptRecord| c.alt_labels.first().map(|l| normalize(l));
    if label >= 1.0 {
        // An abbreviation means its long form: equal long forms are the same thing;
        // otherwise the long forms (what is embedded for them) are compared below.
        if a.kind == "abbreviation"
            && b.kind == "abbreviation"
            && let (Some(x), Some(y)) = (long(a), long(b))
            && x == y
        {
            return Verdict::Merge(format!("same abbreviation of the same long form ({x})"));
        }
        if definition >= agree {
            Verdict::Merge(format!(
                "same normalized label; definitions agree ({definition:.2})"
            ))
        } else {
            Verdict::Unsure(format!(
                "same label, definitions differ ({definition:.2}): the laws may mean different things"
            ))
        }
    } else if a.kind != b.kind {
        Verdict::Apart(format!(
            "different kinds ({} / {}) and different labels",
            a.kind, b.kind
        ))
    } else if with_embeddings
        && ((label >= UNSURE_LABEL && definition >= UNSURE_COSINE)
            || definition >= UNSURE_COSINE_ANY_LABEL)
    {
        Verdict::Unsure(format!(
            "different labels ({label:.2}) with near definitions ({definition:.2})"
        ))
    } else {
        Verdict::Apart(format!(
            "different labels ({label:.2}); definitions {definition:.2}"
        ))
    }
}

/// One judged pair (indexes into the concept list).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub a: usize,
    pub b: usize,
    pub label_similarity: f64,
    pub definition_similarity: f64,
    pub merged: bool,
    /// Nobody could decide (no LLM, or it failed): kept apart, but no obstacle to a
    /// merge through other pairs.
    pub unsure: bool,
    pub evidence: String,
    /// `rules` or the chat model's id.
    pub decided_by: String,
}

/// Asks someone about an unsure pair: `Some(Ok((same, reason)))` from an LLM,
/// `Some(Err(why))` when it failed, `None` when there is no one to ask.
pub trait Arbiter {
    fn id(&self) -> &str;
    fn same(&self, a: &ConceptRecord, b: &ConceptRecord) -> Option<Result<(bool, String), String>>;
}

/// No LLM: unsure pairs stay apart.
pub struct NoArbiter;
impl Arbiter for NoArbiter {
    fn id(&self) -> &str {
        "rules"
    }
    fn same(&self, _: &ConceptRecord, _: &ConceptRecord) -> Option<Result<(bool, String), String>> {
        None
    }
}

/// An LLM asked about unsure pairs, through the build's reply cache.
pub struct LlmArbiter<'a> {
    pub chat: &'a dyn coal_models::ChatModel,
    pub cache: &'a crate::extract::ReplyCache,
}

pub const ARBITER_SYSTEM: &str = "你判断两部中国法律中定义的两个概念是否指同一事物。只输出 JSON，不要任何其他文字。\
     格式：{\"same\": true 或 false, \"reason\": \"一句话理由\"}。";

/// The question about one pair.
pub fn arbiter_prompt(a: &ConceptRecord, b: &ConceptRecord) -> String {
    format!(
        "概念一：{}（《{}》）定义：{}\n概念二：{}（《{}》）定义：{}",
        a.term, a.law, a.definition, b.term, b.law, b.definition
    )
}

/// `{"same": bool, "reason": "…"}`; anything else is an error.
pub fn parse_verdict(reply: &str) -> Result<(bool, String), String> {
    let v = crate::extract::reply_json(reply)?;
    let same = v
        .get("same")
        .and_then(|s| s.as_bool())
        .ok_or_else(|| "no boolean \"same\" in the reply".to_owned())?;
    let reason = v
        .get("reason")
        .and_then(|r| r.as_str())
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect();
    Ok((same, reason))
}

impl Arbiter for LlmArbiter<'_> {
    fn id(&self) -> &str {
        self.chat.id()
    }
    fn same(&self, a: &ConceptRecord, b: &ConceptRecord) -> Option<Result<(bool, String), String>> {
        let user = arbiter_prompt(a, b);
        Some(
            crate::extract::ask_cached(self.chat, self.cache, ARBITER_SYSTEM, &user, parse_verdict)
                .outcome,
        )
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FusionReport {
    pub concepts: usize,
    pub candidates: usize,
    /// Candidates by how they were found (a pair may be found several ways).
    pub same_label: usize,
    pub similar_label: usize,
    pub near_embedding: usize,
    pub merged_by_rules: usize,
    pub merged_by_llm: usize,
    pub apart_by_rules: usize,
    pub apart_by_llm: usize,
    /// Unsure pairs nobody could decide (no LLM, or it failed): kept apart.
    pub unsure_kept_apart: usize,
    /// Merges refused because they would join two concepts kept apart.
    pub refused_by_constraint: usize,
    pub llm_failures: usize,
    pub entities: usize,
    pub concepts_fused: usize,
    /// Whether definitions were compared by embeddings (else by text).
    pub embeddings: bool,
}

/// Candidate pairs (i < j, different laws), with the similarity of labels.
fn candidates(
    concepts: &[ConceptRecord],
    neighbours: Option<&[Vec<(usize, f64)>]>,
    report: &mut FusionReport,
) -> BTreeMap<(usize, usize), f64> {
    let norm: Vec<String> = concepts.iter().map(|c| normalize(&c.term)).collect();
    // Every surface form (the term and the long forms of an abbreviation).
    let forms: Vec<BTreeSet<String>> = concepts
        .iter()
        .map(|c| {
            std::iter::once(&c.term)
                .chain(&c.alt_labels)
                .map(|f| normalize(f))
                .filter(|f| !f.is_empty())
                .collect()
        })
        .collect();
    let mut out = BTreeMap::new();
    let add = |i: usize, j: usize, out: &mut BTreeMap<(usize, usize), f64>| {
        if i == j || concepts[i].law == concepts[j].law {
            return false;
        }
        let key = (i.min(j), i.max(j));
        if out.contains_key(&key) {
            return false;
        }
        let shared = !forms[i].is_disjoint(&forms[j]);
        out.insert(
            key,
            if shared {
                1.0
            } else {
                dice(&norm[i], &norm[j])
            },
        );
        true
    };
    // A shared normalized surface form.
    let mut by_label: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, f) in forms.iter().enumerate() {
        for n in f {
            by_label.entry(n.as_str()).or_default().push(i);
        }
    }
    for group in by_label.values() {
        for (x, &i) in group.iter().enumerate() {
            for &j in &group[x + 1..] {
                if add(i, j, &mut out) {
                    report.same_label += 1;
                }
            }
        }
    }
    // Similar labels: pairs that share a bigram, then Dice.
    let mut by_bigram: HashMap<(char, char), Vec<usize>> = HashMap::new();
    for (i, n) in norm.iter().enumerate() {
        for g in coal_corpus::Bigrams::of(n).distinct() {
            by_bigram.entry(g).or_default().push(i);
        }
    }
    let mut seen = BTreeSet::new();
    for members in by_bigram.values() {
        for (x, &i) in members.iter().enumerate() {
            for &j in &members[x + 1..] {
                // Pairs of one law are dropped by `add`; skip them before the Dice.
                if concepts[i].law != concepts[j].law
                    && seen.insert((i, j))
                    && dice(&norm[i], &norm[j]) >= CANDIDATE_LABEL
                {
                    report.similar_label += add(i, j, &mut out) as usize;
                }
            }
        }
    }
    // Near embeddings.
    if let Some(neighbours) = neighbours {
        for (i, near) in neighbours.iter().enumerate() {
            for &(j, cos) in near {
                if cos >= CANDIDATE_COSINE {
                    report.near_embedding += add(i, j, &mut out) as usize;
                }
            }
        }
    }
    out
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x * y) as f64).sum()
}

/// Judges every candidate pair and fuses the merged ones. `vectors`: unit embeddings of
/// each concept's label and definition, when the build has a model.
pub fn fuse(
    concepts: &[ConceptRecord],
    vectors: Option<&[Vec<f32>]>,
    arbiter: &dyn Arbiter,
) -> (Vec<Decision>, Vec<Vec<usize>>, FusionReport) {
    let mut report = FusionReport {
        concepts: concepts.len(),
        embeddings: vectors.is_some(),
        ..Default::default()
    };
    let neighbours = vectors.map(|v| crate::domains::neighbours(v, 10));
    let pairs = candidates(concepts, neighbours.as_deref(), &mut report);
    report.candidates = pairs.len();
    let mut judged: Vec<Decision> = pairs
        .into_iter()
        .map(|((a, b), label)| decide(concepts, vectors, arbiter, (a, b), label, &mut report))
        .collect();
    let entities = group(concepts, &mut judged, &mut report);
    report.entities = entities.len();
    report.concepts_fused = entities.iter().map(Vec::len).sum();
    (judged, entities, report)
}

/// One candidate pair: the rules decide, or the arbiter when they are unsure (kept apart
/// when it fails or there is none).
fn decide(
    concepts: &[ConceptRecord],
    vectors: Option<&[Vec<f32>]>,
    arbiter: &dyn Arbiter,
    (a, b): (usize, usize),
    label: f64,
    report: &mut FusionReport,
) -> Decision {
    let definition = match vectors {
        Some(v) => cosine(&v[a], &v[b]),
        None => dice(
            &definition_core(&concepts[a].definition, &concepts[a].term),
            &definition_core(&concepts[b].definition, &concepts[b].term),
        ),
    };
    let mut unsure = false;
    let (merged, evidence, decided_by) = match judge(
        &concepts[a],
        &concepts[b],
        label,
        definition,
        vectors.is_some(),
    ) {
        Verdict::Merge(e) => {
            report.merged_by_rules += 1;
            (true, e, "rules".to_owned())
        }
        Verdict::Apart(e) => {
            report.apart_by_rules += 1;
            (false, e, "rules".to_owned())
        }
        Verdict::Unsure(e) => match arbiter.same(&concepts[a], &concepts[b]) {
            Some(Ok((same, reason))) => {
                if same {
                    report.merged_by_llm += 1;
                } else {
                    report.apart_by_llm += 1;
                }
                (same, format!("{e}; LLM: {reason}"), arbiter.id().to_owned())
            }
            Some(Err(why)) => {
                report.llm_failures += 1;
                report.unsure_kept_apart += 1;
                unsure = true;
                (
                    false,
                    format!("{e}; LLM failed ({why}): kept apart"),
                    "rules".to_owned(),
                )
            }
            None => {
                report.unsure_kept_apart += 1;
                unsure = true;
                (
                    false,
                    format!("{e}; no LLM configured: kept apart"),
                    "rules".to_owned(),
                )
            }
        },
    };
    Decision {
        a,
        b,
        label_similarity: label,
        definition_similarity: definition,
        merged,
        unsure,
        evidence,
        decided_by,
    }
}

fn root(g: &mut [usize], mut i: usize) -> usize {
    while g[i] != i {
        g[i] = g[g[i]];
        i = g[i];
    }
    i
}

/// Merges join groups strongest first; a merge that would put two concepts decided apart
/// into one group is refused (and marked so in its decision). The groups of 2+ concepts.
fn group(
    concepts: &[ConceptRecord],
    judged: &mut [Decision],
    report: &mut FusionReport,
) -> Vec<Vec<usize>> {
    let mut group: Vec<usize> = (0..concepts.len()).collect();
    let apart: Vec<(usize, usize)> = judged
        .iter()
        .filter(|d| !d.merged && !d.unsure)
        .map(|d| (d.a, d.b))
        .collect();
    let mut order: Vec<usize> = (0..judged.len()).filter(|&i| judged[i].merged).collect();
    order.sort_by(|&x, &y| {
        let (p, q) = (&judged[x], &judged[y]);
        (q.label_similarity, q.definition_similarity)
            .partial_cmp(&(p.label_similarity, p.definition_similarity))
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(x.cmp(&y))
    });
    for i in order {
        let (ra, rb) = (root(&mut group, judged[i].a), root(&mut group, judged[i].b));
        if ra == rb {
            continue;
        }
        let conflict = apart.iter().find(|&&(x, y)| {
            let (gx, gy) = (root(&mut group, x), root(&mut group, y));
            (gx == ra && gy == rb) || (gx == rb && gy == ra)
        });
        match conflict {
            Some(&(x, y)) => {
                let d = &mut judged[i];
                d.merged = false;
                d.evidence = format!(
                    "{}; refused: it would join {} ({}) and {} ({}), kept apart",
                    d.evidence,
                    concepts[x].term,
                    concepts[x].law,
                    concepts[y].term,
                    concepts[y].law
                );
                report.refused_by_constraint += 1;
            }
            None => group[ra] = rb,
        }
    }
    let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for i in 0..concepts.len() {
        let r = root(&mut group, i);
        members.entry(r).or_default().push(i);
    }
    members.into_values().filter(|m| m.len() > 1).collect()
}

/// The fusion graph: every decision with its evidence, every fused entity with its labels.
pub fn quads(
    concepts: &[ConceptRecord],
    decisions: &[Decision],
    entities: &[Vec<usize>],
) -> QuadSink {
    let mut g = QuadSink::new(iri::FUSION_GRAPH);
    let mut used = BTreeSet::new();
    for members in entities {
        // The most frequent surface form names the entity (ties: the shortest, then first).
        let mut forms: BTreeMap<&str, usize> = BTreeMap::new();
        for &m in members {
            *forms.entry(concepts[m].term.as_str()).or_default() += 1;
        }
        let pref = forms
            .iter()
            .max_by(|a, b| {
                a.1.cmp(b.1)
                    .then(b.0.chars().count().cmp(&a.0.chars().count()))
            })
            .map(|(f, _)| *f)
            .expect("an entity has members");
        let base = iri::entity(&normalize(pref));
        let mut e = base.clone();
        let mut n = 2;
        while !used.insert(e.clone()) {
            e = format!("{base}-{n}");
            n += 1;
        }
        g.node(&e, vocab::ENTITY);
        g.zh(&e, vocab::SKOS_PREF_LABEL, pref);
        let mut alts = BTreeSet::new();
        for &m in members {
            let c = &concepts[m];
            alts.insert(c.term.as_str());
            alts.extend(c.alt_labels.iter().map(String::as_str));
            g.edge(&c.iri, vocab::FUSED_INTO, &e);
        }
        for alt in alts.into_iter().filter(|a| *a != pref) {
            g.zh(&e, vocab::SKOS_ALT_LABEL, alt);
        }
    }
    for (n, d) in decisions.iter().enumerate() {
        let node = iri::fusion_decision(n);
        g.node(&node, vocab::FUSION_DECISION);
        g.edge(&node, vocab::FUSION_MEMBER, &concepts[d.a].iri);
        g.edge(&node, vocab::FUSION_MEMBER, &concepts[d.b].iri);
        let decision = match (d.merged, d.unsure) {
            (true, _) => "merged",
            (false, false) => "apart",
            (false, true) => "unsure",
        };
        g.string(&node, vocab::DECISION, decision);
        g.zh(&node, vocab::EVIDENCE, &d.evidence);
        g.double(&node, vocab::LABEL_SIMILARITY, d.label_similarity);
        g.double(&node, vocab::DEFINITION_SIMILARITY, d.definition_similarity);
        g.string(&node, vocab::DECIDED_BY, &d.decided_by);
    }
    g
}

#[cfg(test)]
mod tests {
    use super::*;

    fn concept(term: &str, law: &str, definition: &str, kind: &str) -> ConceptRecord {
        ConceptRecord {
            iri: format!("https://w3id.org/coal/eli/cn/{law}/concept/{term}"),
            term: term.to_owned(),
            alt_labels: Vec::new(),
            definition: definition.to_owned(),
            kind: kind.to_owned(),
            law: law.to_owned(),
        }
    }

    #[test]
    fn labels_are_normalized_and_compared_by_bigrams() {
        assert_eq!(normalize("“未成年人”"), "未成年人");
        assert_eq!(normalize("中华人民共和国 公民"), "公民");
        assert_eq!(normalize("ＡＢＣ 单位"), "abc单位");
        assert_eq!(normalize("用人单位的"), "用人单位");
        assert_eq!(dice("未成年人", "未成年人"), 1.0);
        // 未成/成年/年人 against 未成/成年: 2·2/(3+2).
        assert!((dice("未成年人", "未成年") - 0.8).abs() < 1e-12);
        assert!((dice("用人单位", "用工单位") - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(dice("甲", "乙"), 0.0);
        assert_eq!(
            definition_core("本法所称近亲属，是指配偶、父母。", "近亲属"),
            "配偶父母"
        );
    }

    #[test]
    fn rules_merge_strong_evidence_and_ask_about_the_rest() {
        let a = concept(
            "近亲属",
            "甲法",
            "本法所称近亲属，是指配偶、父母、子女",
            "meaning",
        );
        let b = concept(
            "近亲属",
            "乙法",
            "本法所称近亲属，是指配偶、父母、子女、兄弟姐妹",
            "meaning",
        );
        let c = concept(
            "近亲属",
            "丙法",
            "本法所称近亲属，是指夫、妻、父、母",
            "meaning",
        );
        let e = concept(
            "未成年人",
            "丁法",
            "未成年人是指未满十八周岁的公民",
            "enumeration",
        );
        assert!(matches!(judge(&a, &b, 1.0, 0.95, true), Verdict::Merge(_)));
        assert!(matches!(judge(&a, &c, 1.0, 0.9, true), Verdict::Unsure(_)));
        // Different kinds with different labels: never merged on similarity alone.
        assert!(matches!(judge(&a, &e, 0.8, 0.99, true), Verdict::Apart(_)));
        // Different labels are at most unsure (保险人 / 被保险人).
        assert!(matches!(
            judge(&a, &b, 0.85, 0.95, true),
            Verdict::Unsure(_)
        ));
        assert!(matches!(judge(&a, &b, 0.3, 0.98, true), Verdict::Unsure(_)));
        assert!(matches!(judge(&a, &b, 0.3, 0.5, true), Verdict::Apart(_)));
        assert!(matches!(judge(&a, &b, 0.7, 0.9, true), Verdict::Apart(_)));
        assert!(matches!(
            judge(&a, &b, 0.85, 0.99, false),
            Verdict::Apart(_)
        ));
        // Abbreviations are the same when their long forms are.
        let abbr = |law: &str, long: &str| ConceptRecord {
            alt_labels: vec![long.to_owned()],
            ..concept("婚姻法", law, "", "abbreviation")
        };
        let (x, y, z) = (
            abbr("甲法", "中华人民共和国婚姻法"),
            abbr("乙法", "《婚姻法》"),
            abbr("丙法", "婚姻登记法"),
        );
        assert!(matches!(judge(&x, &y, 1.0, 0.0, true), Verdict::Merge(_)));
        assert!(matches!(judge(&x, &z, 1.0, 0.8, true), Verdict::Unsure(_)));
    }

    struct Scripted(Vec<(&'static str, &'static str, bool)>);
    impl Arbiter for Scripted {
        fn id(&self) -> &str {
            "scripted"
        }
        fn same(
            &self,
            a: &ConceptRecord,
            b: &ConceptRecord,
        ) -> Option<Result<(bool, String), String>> {
            self.0
                .iter()
                .find(|(x, y, _)| (a.law == *x && b.law == *y) || (a.law == *y && b.law == *x))
                .map(|(_, _, same)| Ok((*same, "scripted".to_owned())))
                .or(Some(Err("no script".to_owned())))
        }
    }

    #[test]
    fn fusion_keeps_surface_forms_records_evidence_and_never_chains_through_a_refusal() {
        let concepts = vec![
            concept(
                "近亲属",
                "甲法",
                "本法所称近亲属，是指配偶、父母、子女、兄弟姐妹",
                "meaning",
            ),
            concept(
                "近亲属",
                "乙法",
                "本法所称近亲属，是指配偶、父母、子女、兄弟姐妹、祖父母",
                "meaning",
            ),
            concept(
                "近亲属",
                "丙法",
                "本法所称近亲属，是指夫、妻、父、母、子、女、同胞兄弟姊妹",
                "meaning",
            ),
            concept("用人单位", "甲法", "本法所称用人单位，是指企业", "meaning"),
            concept(
                "用工单位",
                "乙法",
                "本法所称用工单位，是指接受派遣的单位",
                "meaning",
            ),
        ];
        // Without embeddings, definitions are compared as text.
        let (decisions, entities, report) = fuse(&concepts, None, &NoArbiter);
        assert_eq!(report.same_label, 3, "{report:?}");
        assert!(
            decisions
                .iter()
                .all(|d| concepts[d.a].law != concepts[d.b].law)
        );
        assert_eq!(entities, vec![vec![0, 1]], "{decisions:#?}");
        let unsure: Vec<_> = decisions
            .iter()
            .filter(|d| d.evidence.contains("no LLM"))
            .collect();
        assert_eq!(
            unsure.len(),
            2,
            "丙法's wording is too different: {decisions:#?}"
        );
        // An LLM that says 甲/丙 are the same but 乙/丙 are not: 丙 must not join 甲+乙.
        let (decisions, entities, report) = fuse(
            &concepts,
            None,
            &Scripted(vec![("甲法", "丙法", true), ("乙法", "丙法", false)]),
        );
        assert_eq!(entities, vec![vec![0, 1]]);
        assert_eq!(report.merged_by_llm, 1);
        assert_eq!(report.apart_by_llm, 1);
        assert_eq!(report.refused_by_constraint, 1);
        assert!(decisions.iter().any(|d| d.evidence.contains("refused")));
        let g = quads(&concepts, &decisions, &entities);
        let text: Vec<String> = g.quads.iter().map(|q| q.to_string()).collect();
        assert!(
            text.iter()
                .any(|q| q.contains("prefLabel") && q.contains("近亲属"))
        );
        assert_eq!(text.iter().filter(|q| q.contains("#fusedInto")).count(), 2);
        assert_eq!(
            text.iter().filter(|q| q.contains("#decision>")).count(),
            decisions.len()
        );
    }
}
