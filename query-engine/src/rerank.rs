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

use rustc_hash::FxHashMap as HashMap;

use crate::graph::StatuteGraph;
use crate::method::MethodConfig;
use crate::retrieve::{Hit, minmax};

/// How many of a section's best fused scores make its evidence.
const SECTION_TOP: usize = 3;

/// The candidates of all three lists, re-scored and sorted best first.
pub fn rerank(
    dense: &[Hit],
    bm25: &[Hit],
    bigram: &[Hit],
    graph: Option<&StatuteGraph>,
    cfg: &MethodConfig,
) -> Vec<Hit> {
    let (w_centrality, w_section) = match graph {
        Some(_) => (cfg.rerank_centrality, cfg.rerank_section),
        None => (0.0, 0.0),
    };
    let total = cfg.rerank_dense + cfg.rerank_bm25 + cfg.rerank_bigram + w_centrality + w_section;
    let total = if total > 0.0 { total } else { 1.0 };
    let normalized = |hits: &[Hit]| {
        minmax(
            &hits
                .iter()
                .map(|h| (h.iri.clone(), h.score))
                .collect::<HashMap<_, _>>(),
        )
    };
    let (d, b, g) = (normalized(dense), normalized(bm25), normalized(bigram));
    let raw = |hits: &[Hit]| -> HashMap<String, f32> {
        hits.iter().map(|h| (h.iri.clone(), h.score)).collect()
    };
    let (raw_dense, raw_bm25) = (raw(dense), raw(bm25));
    let mut fused: HashMap<&str, f64> = HashMap::default();
    for (list, w) in [
        (&d, cfg.rerank_dense),
        (&b, cfg.rerank_bm25),
        (&g, cfg.rerank_bigram),
    ] {
        for (iri, s) in list {
            *fused.entry(iri.as_str()).or_default() += w * *s as f64;
        }
    }
    let nodes: HashMap<&str, _> = match graph {
        Some(g) => fused
            .keys()
            .filter_map(|&iri| g.get(iri).map(|n| (iri, (g, n))))
            .collect(),
        None => HashMap::default(),
    };
    let mut by_section: HashMap<u32, Vec<f64>> = HashMap::default();
    for (iri, &s) in &fused {
        if let Some(div) = nodes.get(iri).and_then(|&(g, n)| g.division(n)) {
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
    let mut out: Vec<Hit> = fused
        .iter()
        .map(|(&iri, &s)| {
            let mut score = s;
            if let Some(&(g, n)) = nodes.get(iri) {
                score += w_centrality * g.centrality(n);
                if let Some(div) = g.division(n) {
                    score += w_section * section_mm(div);
                }
            }
            Hit {
                iri: iri.to_owned(),
                score: (score / total) as f32,
                bm25: raw_bm25.get(iri).copied(),
                dense: raw_dense.get(iri).copied(),
            }
        })
        .collect();
    out.sort_by(|x, y| y.score.total_cmp(&x.score).then_with(|| x.iri.cmp(&y.iri)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use kg_store::statute_graph::{
        HierarchyKind as NodeKind, HierarchyNode, LawRecord, StatuteGraphData,
    };

    /// One law, two chapters: a1–a3 in chapter 1, a4–a5 in chapter 2; a1 and a2 both cite
    /// a3. Node IRIs: the law is `v`, articles `v/a1` … `v/a5`.
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
            let chapter = if i <= 3 { 1 } else { 2 };
            nodes.push(node(
                NodeKind::Article,
                Some(chapter),
                &format!("a{i}"),
                i as i64,
            ));
        }
        // a1 = node 3 … a5 = node 7
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
}
