//! Stage 4, the tier: what each of the four strategies ranks (METHOD.md §5).
//!
//! | tier | strategy | what it costs |
//! |---|---|---|
//! | 1 | dense retrieval over articles | one vector search |
//! | 2 | tier 2's re-ranking of three lists, refined once through citations | + two BM25 searches |
//! | 3 | graph retrieval: 款-level matches, paths from the question's links, the hierarchy | + a 款 search and bounded path searches |
//! | 4 | tier 3's candidates verified against the graph (paths, versions, override clauses) | + the checks |

use std::collections::HashMap;

use super::Engine;
use super::answer::{Dropped, ExplainedPath, Kept};
use super::retrieval::Retrieval;
use crate::graph::EdgeKind;
use crate::link::Link;
use crate::retrieve::Hit;

/// One article of a tier's ranking.
#[derive(Debug, Clone)]
pub(crate) struct Ranked {
    pub iri: String,
    pub score: f64,
    pub via: &'static str,
}

/// What a tier produced.
#[derive(Debug, Default)]
pub(crate) struct Ranking {
    pub ranked: Vec<Ranked>,
    /// The graph tiers' scores (tiers 3–4).
    pub graph: Vec<Hit>,
    pub paths: Vec<ExplainedPath>,
    /// Linked headings the graph tiers left out: no article below them ranks in tier 3's
    /// text ranking's top [`super::graph_tier::HEADING_CONFIRMED_WITHIN`] (their names).
    pub unconfirmed_headings: Vec<String>,
    /// The links the graph tiers walked from and verify against: the question's, less
    /// the headings left out.
    pub walked_links: Vec<Link>,
    pub dropped: Vec<Dropped>,
    pub kept: Vec<Kept>,
}

pub(crate) fn from_hits(hits: &[Hit], via: &'static str) -> Vec<Ranked> {
    hits.iter()
        .map(|h| Ranked {
            iri: h.iri.clone(),
            score: h.score as f64,
            via,
        })
        .collect()
}

impl Engine {
    pub(crate) fn rank(
        &self,
        tier: u8,
        fixed_top: Option<usize>,
        r: &Retrieval,
        links: &[Link],
        question: &str,
    ) -> Ranking {
        if let Some(n) = fixed_top {
            return Ranking {
                ranked: from_hits(&r.hybrid[..n.min(r.hybrid.len())], "hybrid"),
                ..Default::default()
            };
        }
        match tier {
            1 => Ranking {
                ranked: from_hits(&r.dense, "dense"),
                ..Default::default()
            },
            2 => Ranking {
                ranked: self.refine(&r.reranked),
                ..Default::default()
            },
            3 => self.graph_tier(r, links, question),
            _ => {
                let mut t3 = self.graph_tier(r, links, question);
                let walked = t3.walked_links.clone();
                self.verify(&mut t3, &walked);
                t3
            }
        }
    }

    /// Tier 2: the re-ranked list, refined once: the articles the top five cite join with
    /// a share of their citer's score, then everything is sorted again.
    fn refine(&self, candidates: &[Hit]) -> Vec<Ranked> {
        let mut scores: HashMap<String, (f64, &'static str)> = candidates
            .iter()
            .map(|h| (h.iri.clone(), (h.score as f64, "re-ranked")))
            .collect();
        for h in candidates.iter().take(5) {
            let Some(n) = self.graph.get(&h.iri) else {
                continue;
            };
            for cited in self.graph.cited_articles(n) {
                let s = h.score as f64 * CITED_SHARE;
                let e = scores
                    .entry(self.graph.iri(cited))
                    .or_insert((0.0, "cited by a re-ranked hit"));
                e.0 = e.0.max(s);
            }
        }
        sorted(scores)
    }
}

/// The share of a citing article's score a cited article gets in tier 2's refinement.
const CITED_SHARE: f64 = 0.6;

pub(crate) fn sorted(scores: HashMap<String, (f64, &'static str)>) -> Vec<Ranked> {
    let mut v: Vec<Ranked> = scores
        .into_iter()
        .map(|(iri, (score, via))| Ranked { iri, score, via })
        .collect();
    v.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.iri.cmp(&b.iri)));
    v
}

impl crate::graph::StatuteGraph {
    /// The articles an article cites (from any of its 款 and 项), without itself.
    pub fn cited_articles(&self, article: crate::graph::NodeId) -> Vec<crate::graph::NodeId> {
        let mut provisions = vec![article];
        let mut i = 0;
        while i < provisions.len() {
            let kids: Vec<_> = self.children(provisions[i]).collect();
            provisions.extend(kids);
            i += 1;
        }
        let mut out: Vec<crate::graph::NodeId> = provisions
            .iter()
            .flat_map(|&p| {
                self.steps(p)
                    .filter(|s| s.1 == EdgeKind::Cites)
                    .map(|s| s.0)
            })
            .filter_map(|t| self.article_of(t))
            .filter(|&t| t != article)
            .collect();
        out.sort();
        out.dedup();
        out
    }
}
