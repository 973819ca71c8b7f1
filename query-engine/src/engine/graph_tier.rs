//! Tier 3, graph retrieval: the question's links and its best text matches are seeds in
//! the statute graph; bounded shortest paths from them reach articles through chapters
//! and sections, the articles next to them, citations, concepts, entities, topics and
//! deferrals, and every article is scored by
//!
//! score(a) = text(a) + w_path·mm(path(a)) + w_heading·heading(a)
//!
//! where text(a) is tier 2's re-ranking with the dense signal taken at 款 level (an
//! article's similarity blended with its best 款's, so an article whose one 款 answers the
//! question is not drowned by its others), path(a) the evidence
//! the seeds send along the paths that reach it (Σ seed weight · e^(−cost)), and
//! heading(a) the strength of a linked heading above it (第十六章 保理合同; a heading counts
//! only when the text ranking's top 10 hold an article below it). Dense and BM25
//! are one signal among these; the graph brings in articles no list had.
//!
//! `[method.graph_learned]` (`coal fit-rerank --tier 3`) scores the same candidates by a
//! logistic regression over tier 2's score, the text score, path evidence, a path from a
//! link and heading support instead. Measured on held-out halves of lecoqa.dev and
//! lawbench-3-8.dev it ranks worse than the sum above (`coal fit-rerank --tier 3` with the
//! shipped `coal.toml`, 2026-12-07, with
//! the shape features and confirmed headings: Recall@10 .591/.608 against .605/.629 on
//! lecoqa; .382/.419 against .383/.438 on lawbench), so the shipped
//! `coal.toml` does not set it: fitting likelihood over ~160 candidates per question
//! is not fitting the top 10.

// Integer and short-string keys hashed on every question: FxHash, not SipHash.
use rustc_hash::FxHashMap as HashMap;

use super::Engine;
use super::answer::ExplainedPath;
use super::retrieval::Retrieval;
use super::tiers::{Ranked, Ranking};
use crate::QueryError;
use crate::graph::NodeId;
use crate::graph::paths::{Bounds, ShortestPaths, describe};
use crate::link::{Link, LinkKind};
use crate::rerank::{GraphFeatures, graph_hand_score, relative_probabilities};
use crate::retrieve::{HYBRID_CANDIDATES, Hit};

/// How deep in the text ranking a linked heading must have an article below it to count.
pub const HEADING_CONFIRMED_WITHIN: usize = 10;
/// Candidates the tier scores at most.
const CANDIDATES: usize = 200;
/// Paths explained in the trace.
const EXPLAINED: usize = 10;

/// A seed of the walk: where it starts and how much evidence it sends.
struct Seed {
    node: NodeId,
    weight: f64,
    /// The link it comes from (`None`: a text anchor).
    link: Option<LinkKind>,
    name: String,
}

/// The 款-level dense list: each article's similarity blended with its best 款's,
/// (1 − λ)·article + λ·max(article, best 款) (an article found only through a 款 counts
/// that 款 for both).
pub(crate) fn paragraph_level_dense(r: &Retrieval, lambda: f64) -> Vec<Hit> {
    let mut article: HashMap<&str, f32> = HashMap::default();
    for h in &r.dense {
        article.insert(h.iri.as_str(), h.score);
    }
    let mut paragraph: HashMap<&str, f32> = HashMap::default();
    for p in &r.paragraphs {
        let e = paragraph.entry(p.article.as_str()).or_insert(f32::MIN);
        *e = e.max(p.score);
    }
    let lambda = lambda as f32;
    let scored = article
        .keys()
        .chain(paragraph.keys())
        .copied()
        .collect::<std::collections::BTreeSet<&str>>()
        .into_iter()
        .map(|iri| {
            let p = paragraph.get(iri).copied();
            let a = article.get(iri).copied().or(p).unwrap_or(0.0);
            let best = p.map_or(a, |p| a.max(p));
            (iri.to_owned(), (1.0 - lambda) * a + lambda * best)
        });
    crate::retrieve::ranked_dense_hits(scored, HYBRID_CANDIDATES)
}

/// What the walks from the seeds found: per article the evidence they sent and its
/// best path (from a link first, else an anchor): (from a link, cost, seed index).
struct Evidence {
    sent: HashMap<NodeId, f64>,
    best_path: HashMap<NodeId, (bool, f64, usize)>,
}

/// The question's links, then the text ranking's first `anchors` articles
/// (`[method] graph_anchors`).
fn seeds(
    g: &crate::graph::StatuteGraph,
    links: &[Link],
    text: &[Hit],
    anchors: usize,
) -> Vec<Seed> {
    let mut seeds: Vec<Seed> = links
        .iter()
        .map(|l| Seed {
            node: l.node,
            weight: l.weight * link_weight(l.kind),
            link: Some(l.kind),
            name: l.name.clone(),
        })
        .collect();
    for h in text.iter().take(anchors) {
        if let Some(n) = g.get(&h.iri) {
            seeds.push(Seed {
                node: n,
                weight: h.score as f64,
                link: None,
                name: format!("text match {}", g.display(n)),
            });
        }
    }
    seeds
}

/// The links the walk uses, and the headings it leaves out: a heading counts only when
/// tier 3's text ranking's top
/// [`HEADING_CONFIRMED_WITHIN`] hold an article below it. A heading matched by a word of
/// the question (第七章 知识产权 of 涉外民事关系法律适用法 for 「可以以知识产权设立质权吗？」)
/// would otherwise push a whole chapter of an unrelated law above the articles the text
/// found. Measured on lecoqa.dev (c74c566): tier 3 R@10 .614 → .617, on its 2+ gold
/// questions .527 → .530; lawbench-3-8.dev .412 → .411. Confirmed headings still cost
/// lecoqa.dev's 2+ gold questions that link one (tier 3 − tier 2: −.03 to −.07) and gain
/// lawbench-3-8.dev's: the graph's value differs by set.
fn confirmed_links(
    g: &crate::graph::StatuteGraph,
    links: &[Link],
    text: &[Hit],
) -> (Vec<Link>, Vec<Link>) {
    let top: Vec<NodeId> = text
        .iter()
        .take(HEADING_CONFIRMED_WITHIN)
        .filter_map(|h| g.get(&h.iri))
        .collect();
    links
        .iter()
        .cloned()
        .partition(|l| l.kind != LinkKind::Heading || top.iter().any(|&a| g.is_below(a, l.node)))
}

/// A linked heading vouches for the articles below it.
fn heading_support(g: &crate::graph::StatuteGraph, links: &[Link]) -> HashMap<NodeId, f64> {
    let mut heading: HashMap<NodeId, f64> = HashMap::default();
    for l in links.iter().filter(|l| l.kind == LinkKind::Heading) {
        for a in g.articles_below(l.node) {
            let h = heading.entry(a).or_default();
            *h = h.max(l.weight);
        }
    }
    heading
}

fn gather(g: &crate::graph::StatuteGraph, seeds: &[Seed], searches: &[ShortestPaths]) -> Evidence {
    let mut ev = Evidence {
        sent: HashMap::default(),
        best_path: HashMap::default(),
    };
    for (si, (seed, paths)) in seeds.iter().zip(searches).enumerate() {
        for (n, cost) in paths.reached() {
            if !g.is_article(n) || n == seed.node && seed.link.is_none() {
                continue;
            }
            *ev.sent.entry(n).or_default() += seed.weight * (-cost).exp();
            let from_link = seed.link.is_some();
            let better = match ev.best_path.get(&n) {
                None => true,
                Some(&(l, c, _)) => (from_link, -cost) > (l, -c),
            };
            if better {
                ev.best_path.insert(n, (from_link, cost, si));
            }
        }
    }
    ev
}

/// A candidate of tier 3: its node, score, path evidence and features.
pub(crate) struct Scored {
    pub node: NodeId,
    pub score: f64,
    pub evidence: f64,
    pub features: GraphFeatures,
}

/// Candidates (the text ranking's, then the articles the most evidence reached) scored
/// text + w_path·mm(path) + w_heading·heading, or by `[method.graph_learned]` when set,
/// best first.
fn score_candidates(
    cfg: &crate::method::MethodConfig,
    reranked: &HashMap<NodeId, f64>,
    text_score: &HashMap<NodeId, f64>,
    text_order: &[NodeId],
    ev: &Evidence,
    heading: &HashMap<NodeId, f64>,
) -> Vec<Scored> {
    let mut candidates: Vec<NodeId> = text_order.to_vec();
    let mut reached: Vec<(NodeId, f64)> = ev
        .sent
        .iter()
        .filter(|(n, _)| !text_score.contains_key(n))
        .map(|(&n, &e)| (n, e))
        .collect();
    reached.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    candidates.extend(
        reached
            .into_iter()
            .take(CANDIDATES.saturating_sub(candidates.len()))
            .map(|x| x.0),
    );
    let (lo, hi) = candidates
        .iter()
        .map(|n| ev.sent.get(n).copied().unwrap_or(0.0))
        .fold((f64::MAX, f64::MIN), |(l, h), e| (l.min(e), h.max(e)));
    let mm = |e: f64| if hi > lo { (e - lo) / (hi - lo) } else { 0.0 };
    let mut scored: Vec<Scored> = candidates
        .iter()
        .map(|&n| {
            let e = ev.sent.get(&n).copied().unwrap_or(0.0);
            let text = text_score.get(&n).copied();
            let features = [
                reranked.get(&n).copied().unwrap_or(0.0),
                text.unwrap_or(0.0),
                text.is_some() as u8 as f64,
                mm(e),
                matches!(ev.best_path.get(&n), Some((true, ..))) as u8 as f64,
                heading.get(&n).copied().unwrap_or(0.0),
            ];
            Scored {
                node: n,
                score: graph_hand_score(&features, cfg),
                evidence: e,
                features,
            }
        })
        .collect();
    if let Some(model) = &cfg.graph_learned {
        let logits: Vec<f64> = scored.iter().map(|c| model.logit(&c.features)).collect();
        for (c, p) in scored.iter_mut().zip(relative_probabilities(&logits)) {
            c.score = p;
        }
    }
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.node.cmp(&b.node)));
    scored
}

/// What tier 3 computed for a question, before it is turned into a ranking.
pub(crate) struct GraphRun {
    /// Linked headings left out (see [`confirmed_links`]), and the links walked from.
    unconfirmed: Vec<String>,
    walked: Vec<Link>,
    seeds: Vec<Seed>,
    searches: Vec<ShortestPaths>,
    ev: Evidence,
    pub scored: Vec<Scored>,
}

impl Engine {
    /// Tier 3's walk and scoring (the ranking and the trace's paths come from it).
    pub(crate) fn graph_run(&self, r: &Retrieval, links: &[Link]) -> GraphRun {
        let g = &self.graph;
        let cfg = &self.cfg;
        let dense = paragraph_level_dense(r, cfg.graph_paragraph);
        let text = crate::rerank::rerank(&dense, &r.bm25, &r.bigram, Some(g), cfg);
        let (confirmed, left_out) = confirmed_links(g, links, &text);
        let unconfirmed = left_out
            .iter()
            .map(|l| match g.law_name(l.node) {
                Some(law) => format!("《{law}》{}", l.name),
                None => l.name.clone(),
            })
            .collect();
        let seeds = seeds(g, &confirmed, &text, cfg.graph_anchors);
        let bounds = Bounds::of_method(cfg);
        let searches: Vec<ShortestPaths> = self.with_scratch(|scratch| {
            seeds
                .iter()
                .map(|s| ShortestPaths::from(g, s.node, bounds, scratch))
                .collect()
        });
        let heading = heading_support(g, &confirmed);
        let ev = gather(g, &seeds, &searches);
        let mut text_order: Vec<NodeId> = Vec::new();
        let mut text_score: HashMap<NodeId, f64> = HashMap::default();
        for h in &text {
            if let Some(n) = g.get(&h.iri) {
                text_score.insert(n, h.score as f64);
                text_order.push(n);
            }
        }
        let reranked: HashMap<NodeId, f64> = r
            .reranked
            .iter()
            .filter_map(|h| g.get(&h.iri).map(|n| (n, h.score as f64)))
            .collect();
        let scored = score_candidates(cfg, &reranked, &text_score, &text_order, &ev, &heading);
        GraphRun {
            unconfirmed,
            walked: confirmed,
            seeds,
            searches,
            ev,
            scored,
        }
    }

    /// Tier 3's candidates of a question with their features, for fitting
    /// `[method.graph_learned]` (`coal fit-rerank --tier 3`): the question analysed,
    /// retrieved and linked as `ask` does.
    pub fn graph_candidates(
        &self,
        question: &str,
    ) -> Result<Vec<(String, GraphFeatures)>, QueryError> {
        let a = self.analyse(question, None, false)?;
        let r = self.retrieve(&a)?;
        let route = self.route(&a, &r, &super::AskOptions::default());
        let run = self.graph_run(&r, &route.links);
        Ok(run
            .scored
            .into_iter()
            .map(|c| (self.graph.iri(c.node), c.features))
            .collect())
    }

    pub(crate) fn graph_tier(&self, r: &Retrieval, links: &[Link], _question: &str) -> Ranking {
        let g = &self.graph;
        let GraphRun {
            unconfirmed,
            walked,
            seeds,
            searches,
            ev,
            scored,
        } = self.graph_run(r, links);
        let mut out = Ranking {
            unconfirmed_headings: unconfirmed,
            walked_links: walked,
            ..Ranking::default()
        };
        for c in &scored {
            let (n, s) = (c.node, c.score);
            let via = match ev.best_path.get(&n) {
                Some((true, ..)) => "graph path from the question",
                // features[2]: the text ranking has it.
                _ if c.features[2] == 1.0 => "graph: 款-level text match",
                _ => "graph neighbourhood",
            };
            out.ranked.push(Ranked {
                iri: g.iri(n),
                score: s,
                via,
            });
        }
        out.graph = scored
            .iter()
            .take(HYBRID_CANDIDATES)
            .map(|c| Hit {
                iri: g.iri(c.node),
                score: c.score as f32,
                bm25: None,
                dense: Some(c.evidence as f32),
            })
            .collect();
        for n in scored.iter().take(EXPLAINED).map(|c| c.node) {
            let Some(&(_, cost, si)) = ev.best_path.get(&n) else {
                continue;
            };
            let Some(steps) = searches[si].path(n) else {
                continue;
            };
            out.paths.push(ExplainedPath {
                article: g.iri(n),
                from: seeds[si].name.clone(),
                path: describe(g, seeds[si].node, &steps),
                cost,
            });
        }
        out
    }
}

/// How much evidence a link of each kind sends (a named article or law is explicit; a
/// topic is a guess from the embedding).
fn link_weight(kind: LinkKind) -> f64 {
    match kind {
        LinkKind::Article => 1.0,
        LinkKind::Law => 0.5,
        LinkKind::Concept | LinkKind::Entity | LinkKind::Term => 0.5,
        LinkKind::Heading => 0.7,
        LinkKind::Topic => 0.2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use petgraph::graph::NodeIndex;

    fn link(kind: LinkKind, node: u32) -> Link {
        Link {
            kind,
            node: NodeIndex::new(node as usize),
            iri: String::new(),
            name: String::new(),
            evidence: String::new(),
            weight: 1.0,
            domain: None,
        }
    }

    #[test]
    fn a_heading_counts_only_when_the_text_ranking_found_an_article_below_it() {
        // 甲法 第一章 holds 第一条 (node 3); 第二章 holds 第三条 (node 5); 乙法 第一条 is
        // node 10.
        let g = crate::graph::tests::sample();
        let hit = |n: u32| Hit {
            iri: g.iri(NodeIndex::new(n as usize)),
            score: 1.0,
            bm25: None,
            dense: None,
        };
        let links = [
            link(LinkKind::Heading, 1),
            link(LinkKind::Heading, 2),
            link(LinkKind::Concept, 4),
        ];
        let kept = |text: &[Hit]| -> Vec<(LinkKind, usize)> {
            confirmed_links(&g, &links, text)
                .0
                .iter()
                .map(|l| (l.kind, l.node.index()))
                .collect()
        };
        assert_eq!(
            kept(&[hit(10), hit(3)]),
            [(LinkKind::Heading, 1), (LinkKind::Concept, 4)]
        );
        assert_eq!(
            kept(&[hit(5)]),
            [(LinkKind::Heading, 2), (LinkKind::Concept, 4)]
        );
        // Below the top 10 a chapter's article does not confirm it.
        let mut deep: Vec<Hit> = (0..HEADING_CONFIRMED_WITHIN).map(|_| hit(10)).collect();
        deep.push(hit(5));
        assert_eq!(kept(&deep), [(LinkKind::Concept, 4)]);
        // Its heading support then goes too.
        let (walked, left_out) = confirmed_links(&g, &links, &deep);
        assert!(heading_support(&g, &walked).is_empty());
        assert_eq!(left_out.len(), 2, "{left_out:?}");
    }
}
