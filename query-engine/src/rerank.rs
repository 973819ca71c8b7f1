//! Tier 2's re-ranking ("hybrid dense + BM25 (fused), re-ranked", METHOD.md §5): three
//! retrievers' scores and two signals from the statute graph, in one linear score.
//!
//! score(a) = (w_d·mm(dense) + w_b·mm(BM25) + w_g·mm(bigram BM25)
//!           + w_c·centrality(a) + w_s·mm(section(a))) / Σw
//!
//! where mm is min-max over each list (0 when absent), centrality is ln(1 + articles
//! citing a) scaled to [0, 1] over the corpus, and section(a) is the sum of the three best
//! fused scores in a's chapter or section: questions are about a topic, and the articles of
//! one topic sit together. Why these: on the dev sets (eval profile) each of the method's
//! own alternatives — a law prior, chapter or law embedding centroids, neighbour smoothing,
//! reciprocal ranks — moved Recall@10 by less than ±0.01, while bigram BM25 and these two
//! graph signals moved it by +0.01 to +0.04 on every set (`make fusion-experiments`). The
//! weights live in `MethodConfig` (`rerank_*`); dividing by their sum keeps scores in
//! [0, 1] like the hybrid's, which tier 3 mixes with its graph evidence.
//!
//! Without a graph (`--as-of`: the graph holds the current versions only, so an article
//! of a law amended since would miss signals the others get) only the three lists count.
//!
//! A learned alternative (`[method.rerank_learned]`, fitted by `coal fit-rerank`): a
//! logistic regression over [`Features`] — the three normalized scores, how far dense and
//! bigram scores fall below their list's best, whether each list has the article at all,
//! centrality, section evidence, the size of the article's law and the article's shape
//! in the hierarchy (how many 款, where in its chapter or section) — scored as the
//! probability of being a gold article divided by the best candidate's, so the top is 1
//! as with the hand weights. Why: on the held-out halves of lecoqa.dev and lawbench-3-8.dev
//! it lifts Recall@10 by .01–.06 over the hand weights (`coal fit-rerank` prints it);
//! being in all three lists and the gap to a list's best score carry much of the gain,
//! which no weighted sum of min-max scores can express.

use rustc_hash::FxHashMap as HashMap;
use serde::{Deserialize, Serialize};

use crate::graph::{NodeId, StatuteGraph};
use crate::method::MethodConfig;
use crate::retrieve::Hit;

/// How many of a section's best fused scores make its evidence.
const SECTION_TOP: usize = 3;

/// One candidate's features: min-max dense; raw dense − the list's best (the list's
/// worst stands in when absent); 1 when dense listed it; min-max BM25; 1 when listed;
/// min-max bigram; its gap; listed; centrality; min-max section evidence; ln(1 + the
/// articles of its law); and the article's shape in the hierarchy: ln(1 + its 款),
/// 1 when it has one 款 at most, ln(1 + its position among its parent's children), 1 when
/// that is 1, 1 when it is 1–3 (a chapter that holds articles and sections too counts the
/// sections). The graph's eight are 0 without a graph.
///
/// Why the shape: a chapter's opening articles state what the rest applies (definitions,
/// scope), and the fit on the dev sets favours them and single-款 articles (the shipped
/// `coal.toml`: position −0.28, first +0.28, one 款 +0.19). On the held-out halves the
/// five moved the learned model's Recall@10 from .608/.613 to .623/.631 on lecoqa.dev
/// and from .329/.444 to .333/.431 on lawbench-3-8.dev (`coal fit-rerank`, 2026-12-07).
pub type Features = [f64; 16];

/// The learned re-ranking: a logistic regression over [`Features`] (raw units; the
/// fields are the features' names, in order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LearnedRerank {
    pub intercept: f64,
    pub dense: f64,
    pub dense_gap: f64,
    pub dense_listed: f64,
    pub bm25: f64,
    pub bm25_listed: f64,
    pub bigram: f64,
    pub bigram_gap: f64,
    pub bigram_listed: f64,
    pub centrality: f64,
    pub section: f64,
    pub law_size: f64,
    /// The article-shape weights (0 in a model fitted before them).
    #[serde(default)]
    pub paragraphs: f64,
    #[serde(default)]
    pub single_paragraph: f64,
    #[serde(default)]
    pub position: f64,
    #[serde(default)]
    pub first_in_division: f64,
    #[serde(default)]
    pub among_first_three: f64,
}

impl LearnedRerank {
    pub fn weights(&self) -> Features {
        [
            self.dense,
            self.dense_gap,
            self.dense_listed,
            self.bm25,
            self.bm25_listed,
            self.bigram,
            self.bigram_gap,
            self.bigram_listed,
            self.centrality,
            self.section,
            self.law_size,
            self.paragraphs,
            self.single_paragraph,
            self.position,
            self.first_in_division,
            self.among_first_three,
        ]
    }

    pub fn from_weights(intercept: f64, w: &Features) -> LearnedRerank {
        LearnedRerank {
            intercept,
            dense: w[0],
            dense_gap: w[1],
            dense_listed: w[2],
            bm25: w[3],
            bm25_listed: w[4],
            bigram: w[5],
            bigram_gap: w[6],
            bigram_listed: w[7],
            centrality: w[8],
            section: w[9],
            law_size: w[10],
            paragraphs: w[11],
            single_paragraph: w[12],
            position: w[13],
            first_in_division: w[14],
            among_first_three: w[15],
        }
    }

    /// The log-odds of a candidate being a gold article.
    pub fn logit(&self, f: &Features) -> f64 {
        self.intercept + dot(&self.weights(), f)
    }
}

/// Tier 3's candidate: tier 2's re-ranked score (0 when it lacks the article); the
/// 款-level text score; 1 when the text ranking has it; min-max path evidence; 1 when
/// its best path starts at a question link; the linked heading's strength above it.
pub type GraphFeatures = [f64; 6];

/// Tier 3's learned scoring: a logistic regression over [`GraphFeatures`], fitted by
/// `coal fit-rerank --tier 3` with tier 2's model in place.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphLearned {
    pub intercept: f64,
    pub reranked: f64,
    pub text: f64,
    pub text_listed: f64,
    pub path: f64,
    pub from_link: f64,
    pub heading: f64,
}

impl GraphLearned {
    pub fn weights(&self) -> GraphFeatures {
        [
            self.reranked,
            self.text,
            self.text_listed,
            self.path,
            self.from_link,
            self.heading,
        ]
    }

    pub fn from_weights(intercept: f64, w: &GraphFeatures) -> GraphLearned {
        GraphLearned {
            intercept,
            reranked: w[0],
            text: w[1],
            text_listed: w[2],
            path: w[3],
            from_link: w[4],
            heading: w[5],
        }
    }

    pub fn logit(&self, f: &GraphFeatures) -> f64 {
        self.intercept + dot(&self.weights(), f)
    }
}

pub(crate) fn dot(w: &[f64], f: &[f64]) -> f64 {
    w.iter().zip(f).map(|(w, x)| w * x).sum()
}

/// Tier 3's hand-weighted score of its features: text + graph_path·path +
/// graph_heading·heading (`engine/graph_tier.rs`; `rerank_fit` measures against it).
pub(crate) fn graph_hand_score(f: &GraphFeatures, cfg: &MethodConfig) -> f64 {
    f[1] + cfg.graph_path * f[3] + cfg.graph_heading * f[5]
}

/// A candidate with its features and its retrievers' raw scores.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub iri: String,
    pub features: Features,
    /// The hand-weighted score (the module's formula), in [0, 1].
    pub hand: f64,
    pub bm25: Option<f32>,
    pub dense: Option<f32>,
}

/// The three lists (dense, BM25, bigram) by candidate: each IRI once, numbered in the
/// order first listed, so that each is hashed once where a map per list hashed it for
/// every feature.
struct Lists<'a> {
    iris: Vec<&'a str>,
    /// Per candidate, its raw score in each list.
    raw: Vec<[Option<f32>; 3]>,
    /// Per list, its lowest and highest score (what min-max needs).
    range: [(f32, f32); 3],
}

impl<'a> Lists<'a> {
    fn new(lists: [&'a [Hit]; 3]) -> Lists<'a> {
        let mut index: HashMap<&str, usize> = HashMap::default();
        let (mut iris, mut raw) = (Vec::new(), Vec::<[Option<f32>; 3]>::new());
        for (l, hits) in lists.iter().enumerate() {
            for h in hits.iter() {
                let i = *index.entry(h.iri.as_str()).or_insert_with(|| {
                    iris.push(h.iri.as_str());
                    raw.push([None; 3]);
                    iris.len() - 1
                });
                raw[i][l] = Some(h.score);
            }
        }
        let range = std::array::from_fn(|l| {
            raw.iter()
                .filter_map(|r| r[l])
                .fold(None, |acc: Option<(f32, f32)>, s| match acc {
                    None => Some((s, s)),
                    Some((lo, hi)) => Some((lo.min(s), hi.max(s))),
                })
                .unwrap_or((0.0, 0.0))
        });
        Lists { iris, raw, range }
    }

    /// Min-max as `retrieve::minmax` computes it (1 when all scores are equal), 0 when absent.
    fn mm(&self, i: usize, list: usize) -> f64 {
        let (lo, hi) = self.range[list];
        self.raw[i][list].map_or(0.0, |s| {
            (if hi > lo { (s - lo) / (hi - lo) } else { 1.0 }) as f64
        })
    }

    /// Raw score − the list's best (its worst stands in when absent).
    fn gap(&self, i: usize, list: usize) -> f64 {
        let (lo, hi) = self.range[list];
        self.raw[i][list].unwrap_or(lo) as f64 - hi as f64
    }

    fn listed(&self, i: usize, list: usize) -> f64 {
        self.raw[i][list].is_some() as u8 as f64
    }
}

const DENSE: usize = 0;
const BM25: usize = 1;
const BIGRAM: usize = 2;

/// The candidates of all three lists with their features, in the order first listed.
pub fn candidates(
    dense: &[Hit],
    bm25: &[Hit],
    bigram: &[Hit],
    graph: Option<&StatuteGraph>,
    cfg: &MethodConfig,
) -> Vec<Candidate> {
    let (w_centrality, w_section) = match graph {
        Some(_) => (cfg.rerank_centrality, cfg.rerank_section),
        None => (0.0, 0.0),
    };
    let total = cfg.rerank_dense + cfg.rerank_bm25 + cfg.rerank_bigram + w_centrality + w_section;
    let total = if total > 0.0 { total } else { 1.0 };
    let lists = Lists::new([dense, bm25, bigram]);
    let weights = [cfg.rerank_dense, cfg.rerank_bm25, cfg.rerank_bigram];
    let fused: Vec<f64> = (0..lists.iris.len())
        .map(|i| {
            let mut s = 0.0;
            for (l, w) in weights.iter().enumerate() {
                if lists.raw[i][l].is_some() {
                    s += w * lists.mm(i, l);
                }
            }
            s
        })
        .collect();
    let nodes: Vec<Option<(&StatuteGraph, NodeId)>> = lists
        .iris
        .iter()
        .map(|iri| graph.and_then(|g| g.get(iri).map(|n| (g, n))))
        .collect();
    let mut by_section: HashMap<u32, Vec<f64>> = HashMap::default();
    for (node, &s) in nodes.iter().zip(&fused) {
        if let Some(div) = node.and_then(|(g, n)| g.division(n)) {
            by_section.entry(div).or_default().push(s);
        }
    }
    let section: HashMap<u32, f64> = by_section
        .into_iter()
        .map(|(div, mut v)| {
            v.sort_by(|a, b| b.total_cmp(a));
            (div, v.iter().take(SECTION_TOP).sum())
        })
        .collect();
    let (lo, hi) = section
        .values()
        .fold((f64::MAX, f64::MIN), |(l, h), &s| (l.min(s), h.max(s)));
    let section_mm = |div: u32| {
        let s = section[&div];
        if hi > lo { (s - lo) / (hi - lo) } else { 1.0 }
    };
    (0..lists.iris.len())
        .map(|i| {
            let (mut centrality, mut section, mut law_size) = (0.0, 0.0, 0.0);
            let mut shape = [0.0; 5];
            if let Some((g, n)) = nodes[i] {
                centrality = g.centrality(n);
                section = g.division(n).map_or(0.0, section_mm);
                law_size = g.law_of(n).map_or(0.0, |l| (l.articles as f64).ln_1p());
                shape = shape_features(g.article_shape(n));
            }
            Candidate {
                iri: lists.iris[i].to_owned(),
                features: [
                    lists.mm(i, DENSE),
                    lists.gap(i, DENSE),
                    lists.listed(i, DENSE),
                    lists.mm(i, BM25),
                    lists.listed(i, BM25),
                    lists.mm(i, BIGRAM),
                    lists.gap(i, BIGRAM),
                    lists.listed(i, BIGRAM),
                    centrality,
                    section,
                    law_size,
                    shape[0],
                    shape[1],
                    shape[2],
                    shape[3],
                    shape[4],
                ],
                hand: (fused[i] + w_centrality * centrality + w_section * section) / total,
                bm25: lists.raw[i][BM25],
                dense: lists.raw[i][DENSE],
            }
        })
        .collect()
}

/// ln(1 + 款), one 款 at most, ln(1 + position), first, among the first three.
fn shape_features((paragraphs, position): (u32, i32)) -> [f64; 5] {
    let position = position.max(0) as f64;
    [
        (paragraphs as f64).ln_1p(),
        (paragraphs <= 1) as u8 as f64,
        position.ln_1p(),
        (position == 1.0) as u8 as f64,
        (1.0..=3.0).contains(&position) as u8 as f64,
    ]
}

/// The candidates of all three lists, re-scored and sorted best first: by the learned
/// model when `cfg` has one, else by the hand weights.
pub fn rerank(
    dense: &[Hit],
    bm25: &[Hit],
    bigram: &[Hit],
    graph: Option<&StatuteGraph>,
    cfg: &MethodConfig,
) -> Vec<Hit> {
    let candidates = candidates(dense, bm25, bigram, graph, cfg);
    let scores = match &cfg.rerank_learned {
        Some(model) => learned_scores(model, &candidates),
        None => candidates.iter().map(|c| c.hand).collect(),
    };
    let mut out: Vec<Hit> = candidates
        .into_iter()
        .zip(scores)
        .map(|(c, s)| Hit {
            iri: c.iri,
            score: s as f32,
            bm25: c.bm25,
            dense: c.dense,
        })
        .collect();
    out.sort_by(|x, y| y.score.total_cmp(&x.score).then_with(|| x.iri.cmp(&y.iri)));
    out
}

/// Each candidate's probability of being gold over the best candidate's: the top is 1,
/// and the relative drop between neighbours (what the context's cliff reads) is the
/// ratio of their probabilities.
pub fn learned_scores(model: &LearnedRerank, candidates: &[Candidate]) -> Vec<f64> {
    let logits: Vec<f64> = candidates
        .iter()
        .map(|c| model.logit(&c.features))
        .collect();
    relative_probabilities(&logits)
}

/// σ(z)/σ(z_max) for each logit z, computed without overflow for any z.
pub fn relative_probabilities(logits: &[f64]) -> Vec<f64> {
    let best = logits.iter().copied().fold(f64::MIN, f64::max);
    let log_sigmoid = |z: f64| {
        if z >= 0.0 {
            -(-z).exp().ln_1p()
        } else {
            z - z.exp().ln_1p()
        }
    };
    let top = log_sigmoid(best);
    logits
        .iter()
        .map(|&z| (log_sigmoid(z) - top).exp())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use kg_store::statute_graph::{
        HierarchyKind as NodeKind, HierarchyNode, LawRecord, StatuteGraphData,
    };

    /// One law, two chapters: a1–a3 in chapter 1, a4–a5 in chapter 2 (orders are positions
    /// in the chapter); a5 has two 款; a1 and a2 both cite a3. Node IRIs: the law is `v`,
    /// articles `v/a1` … `v/a5`.
    fn graph() -> StatuteGraph {
        let node = |kind, parent: Option<u32>, segment: &str, order| HierarchyNode {
            kind,
            parent,
            law: 0,
            segment: segment.into(),
            label: segment.into(),
            heading: String::new(),
            order,
        };
        let mut nodes = vec![
            node(NodeKind::Law, None, "v", 0),
            node(NodeKind::Chapter, Some(0), "c1", 1),
            node(NodeKind::Chapter, Some(0), "c2", 2),
        ];
        for i in 1..=5u32 {
            let (chapter, position) = if i <= 3 { (1, i) } else { (2, i - 3) };
            nodes.push(node(
                NodeKind::Article,
                Some(chapter),
                &format!("a{i}"),
                position as i64,
            ));
        }
        // a1 = node 3 … a5 = node 7; a5's 款 are nodes 8 and 9
        for k in 1..=2 {
            nodes.push(node(NodeKind::Paragraph, Some(7), &format!("par_{k}"), k));
        }
        StatuteGraph::new(StatuteGraphData {
            format: kg_store::statute_graph::FORMAT,
            laws: vec![LawRecord {
                work_iri: "w".into(),
                version_iri: "v".into(),
                short_name: "示范法".into(),
                title: "示范法".into(),
                version_date: None,
                folder: "社会法".into(),
                node: 0,
            }],
            nodes,
            cites: vec![(3, 5), (4, 5)],
            ..Default::default()
        })
    }

    fn hits(list: &[(&str, f32)]) -> Vec<Hit> {
        list.iter()
            .map(|&(iri, score)| Hit {
                iri: iri.into(),
                score,
                bm25: None,
                dense: None,
            })
            .collect()
    }

    fn only(dense: f64, bm25: f64, bigram: f64, centrality: f64, section: f64) -> MethodConfig {
        MethodConfig {
            rerank_dense: dense,
            rerank_bm25: bm25,
            rerank_bigram: bigram,
            rerank_centrality: centrality,
            rerank_section: section,
            ..MethodConfig::default()
        }
    }

    fn score(out: &[Hit], iri: &str) -> f64 {
        out.iter()
            .find(|h| h.iri == iri)
            .map(|h| h.score as f64)
            .unwrap()
    }

    #[test]
    fn the_three_lists_are_min_max_normalized_and_weighted() {
        let g = graph();
        let dense = hits(&[("v/a4", 0.9), ("v/a5", 0.8), ("v/a1", 0.7)]);
        let bm25 = hits(&[("v/a1", 30.0), ("v/a4", 10.0)]);
        let bigram = hits(&[("v/a5", 5.0), ("v/a1", 1.0)]);
        let out = rerank(
            &dense,
            &bm25,
            &bigram,
            Some(&g),
            &only(0.5, 0.2, 0.3, 0.0, 0.0),
        );
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6;
        assert!(close(score(&out, "v/a4"), 0.5), "{out:?}");
        assert!(close(score(&out, "v/a5"), 0.5 * 0.5 + 0.3), "{out:?}");
        assert!(close(score(&out, "v/a1"), 0.2), "{out:?}");
        assert!(out.windows(2).all(|w| w[0].score >= w[1].score));
        // Raw retriever scores are kept for the trace.
        let a1 = out.iter().find(|h| h.iri == "v/a1").unwrap();
        assert_eq!((a1.bm25, a1.dense), (Some(30.0), Some(0.7)));
    }

    #[test]
    fn a_cited_article_and_an_article_of_a_strong_section_move_up() {
        let g = graph();
        // a3 (cited by two articles) and a4 tie on dense alone.
        let dense = hits(&[("v/a3", 0.5), ("v/a4", 0.5), ("v/a5", 0.1)]);
        let out = rerank(&dense, &[], &[], Some(&g), &only(1.0, 0.0, 0.0, 0.2, 0.0));
        assert_eq!(out[0].iri, "v/a3", "{out:?}");
        // Scores are divided by the weights' sum (1.2): the most cited article has
        // centrality 1, so a3 reaches the maximum.
        assert!((score(&out, "v/a3") - 1.0).abs() < 1e-6, "{out:?}");
        assert!((score(&out, "v/a4") - 1.0 / 1.2).abs() < 1e-6, "{out:?}");
        // Without the graph (--as-of) neither signal counts and the two tie again.
        let out = rerank(&dense, &[], &[], None, &only(1.0, 0.0, 0.0, 0.2, 0.5));
        assert_eq!(score(&out, "v/a3"), score(&out, "v/a4"), "{out:?}");
        assert!((score(&out, "v/a3") - 1.0).abs() < 1e-6, "{out:?}");
        // Section evidence: a4's chapter also holds a5 (0.9), a1's holds nothing else.
        let dense = hits(&[("v/a1", 0.6), ("v/a4", 0.55), ("v/a5", 0.5), ("v/a2", 0.0)]);
        let plain = rerank(&dense, &[], &[], Some(&g), &only(1.0, 0.0, 0.0, 0.0, 0.0));
        assert_eq!(plain[0].iri, "v/a1");
        let out = rerank(&dense, &[], &[], Some(&g), &only(1.0, 0.0, 0.0, 0.0, 0.5));
        assert_eq!(out[0].iri, "v/a4", "{out:?}");
        // An article outside the graph (an older version) gets neither signal.
        let dense = hits(&[("old", 0.5), ("v/a3", 0.5)]);
        let out = rerank(&dense, &[], &[], Some(&g), &only(1.0, 0.0, 0.0, 0.2, 0.3));
        assert!((score(&out, "old") - 1.0 / 1.5).abs() < 1e-6, "{out:?}");
        assert!(
            out.iter().all(|h| (0.0..=1.0).contains(&h.score)),
            "{out:?}"
        );
    }

    #[test]
    fn the_learned_model_scores_probability_ratios_with_the_best_at_one() {
        let g = graph();
        let dense = hits(&[("v/a4", 0.9), ("v/a5", 0.8), ("v/a1", 0.7)]);
        let bm25 = hits(&[("v/a1", 30.0), ("v/a4", 10.0)]);
        let bigram = hits(&[("v/a1", 5.0)]);
        // Being listed by BM25 and bigram outweighs dense: a1 (in all three lists) first.
        let model = LearnedRerank::from_weights(
            -3.0,
            &[
                1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            ],
        );
        let cfg = MethodConfig {
            rerank_learned: Some(model.clone()),
            ..MethodConfig::default()
        };
        let out = rerank(&dense, &bm25, &bigram, Some(&g), &cfg);
        assert_eq!(out[0].iri, "v/a1", "{out:?}");
        assert!((out[0].score - 1.0).abs() < 1e-6, "{out:?}");
        // Hand weights (dense first) put a4 first.
        let plain = rerank(&dense, &bm25, &bigram, Some(&g), &MethodConfig::default());
        assert_eq!(plain[0].iri, "v/a4", "{plain:?}");
        // Scores are σ(z)/σ(z_best): a4 has z = −3 + 1 + 2 = 0, a1 z = −3 + 0 + 2 + 2 = 1.
        let sigma = |z: f64| 1.0 / (1.0 + (-z).exp());
        let a4 = score(&out, "v/a4");
        assert!((a4 - sigma(0.0) / sigma(1.0)).abs() < 1e-6, "{out:?}");
        // Features as documented: a5 is dense's second, absent from both BM25 lists.
        let c = candidates(&dense, &bm25, &bigram, Some(&g), &cfg);
        let a5 = &c.iter().find(|c| c.iri == "v/a5").unwrap().features;
        assert!(
            (a5[0] - 0.5).abs() < 1e-6 && (a5[1] + 0.1).abs() < 1e-6,
            "{a5:?}"
        );
        assert_eq!((a5[2], a5[3], a5[4], a5[7]), (1.0, 0.0, 0.0, 0.0));
        // A list's worst stands in for the gap of an article it lacks.
        let a4f = &c.iter().find(|c| c.iri == "v/a4").unwrap().features;
        assert_eq!(a4f[6], 0.0, "bigram lists only a1: worst = best");
        // The law has 5 articles.
        assert!((a5[10] - 6f64.ln()).abs() < 1e-9, "{a5:?}");
        // The article's shape: a5 has two 款 and is chapter 2's second article; a4, with
        // none, opens chapter 2.
        let ln = |x: f64| x.ln_1p();
        assert_eq!(&a5[11..], &[ln(2.0), 0.0, ln(2.0), 0.0, 1.0], "{a5:?}");
        assert_eq!(&a4f[11..], &[0.0, 1.0, ln(1.0), 1.0, 1.0], "{a4f:?}");
        // Without a graph the shape is unknown: all 0.
        let bare = candidates(&dense, &bm25, &bigram, None, &cfg);
        let a4b = &bare.iter().find(|c| c.iri == "v/a4").unwrap().features;
        assert_eq!(&a4b[11..], &[0.0; 5], "{a4b:?}");
        // Far-out logits neither overflow nor vanish into NaN (σ(z) of −1000 is 0 in f64:
        // a plain ratio of probabilities would be 0/0).
        let huge = LearnedRerank::from_weights(
            -1000.0,
            &[
                800.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
            ],
        );
        let s = learned_scores(&huge, &c);
        assert!(
            s.iter().all(|x| x.is_finite() && (0.0..=1.0).contains(x)),
            "{s:?}"
        );
        assert_eq!(s.iter().copied().fold(0.0, f64::max), 1.0);
    }

    #[test]
    fn a_model_fitted_before_the_shape_features_still_loads_with_them_at_zero() {
        let old = "intercept = -8.0\ndense = 2.2\ndense_gap = 21.7\ndense_listed = 0.6\n\
                   bm25 = 0.9\nbm25_listed = 0.0\nbigram = 1.6\nbigram_gap = 0.0\n\
                   bigram_listed = 0.2\ncentrality = 3.1\nsection = 1.2\nlaw_size = 0.2\n";
        let m: LearnedRerank = toml::from_str(old).unwrap();
        assert_eq!(
            m.weights()[..11],
            [2.2, 21.7, 0.6, 0.9, 0.0, 1.6, 0.0, 0.2, 3.1, 1.2, 0.2]
        );
        assert_eq!(m.weights()[11..], [0.0; 5]);
        // An unknown key is still refused.
        assert!(toml::from_str::<LearnedRerank>(&format!("{old}depth = 1.0\n")).is_err());
    }
}
