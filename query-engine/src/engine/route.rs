//! Stage 3, route: the question linked to the graph (its D_aug are the linked nodes'
//! domains), its intrinsic complexity (Eq. 1–4), its consistency complexity from the
//! retrievers' lists (Eq. 5–8), C_final (Eq. 9) and the tier.

use super::analyse::Analysis;
use super::retrieval::Retrieval;
use super::{AskOptions, Engine};
use crate::complexity::{self, Complexity};
use crate::link::{Link, Linker};

pub(crate) struct Route {
    pub links: Vec<Link>,
    pub complexity: Complexity,
    pub tier: u8,
    pub warnings: Vec<String>,
}

impl Engine {
    pub(crate) fn route(&self, a: &Analysis, r: &Retrieval, opts: &AskOptions) -> Route {
        let named: Vec<_> = a
            .mentions
            .iter()
            .filter_map(|m| {
                self.mention_node(m).map(|n| {
                    let law = &self.graph.laws[m.law].short_name;
                    (n, format!("article named 《{law}》{}", m.label))
                })
            })
            .collect();
        let links = self
            .linker
            .link(&self.graph, &a.question, &named, Some(&r.query));
        let mut d = a.decomposition.clone();
        // D_aug: the graph domains of what the question links to, and of the entities
        // the decomposition found.
        let mut domains = Linker::domains(&links);
        domains.extend(
            d.entities
                .iter()
                .map(|e| e.domain.clone())
                .filter(|x| !x.is_empty()),
        );
        domains.sort();
        domains.dedup();
        d.domains = domains;
        let intrinsic = complexity::intrinsic::from_decomposition(&a.question, d, &self.cfg);
        let k = self.cfg.consistency_k;
        fn top(l: &[crate::retrieve::Hit], k: usize) -> Vec<&str> {
            l.iter().take(k).map(|h| h.iri.as_str()).collect()
        }
        let consistency = complexity::consistency(
            r.bm25.first().map(|h| h.score as f64).unwrap_or(0.0),
            &top(&r.bm25, k),
            &top(&r.dense, k),
            &self.cfg,
        );
        let cx = complexity::combine(
            intrinsic,
            consistency,
            &self.cfg,
            !opts.without_intrinsic,
            !opts.without_consistency,
        );
        let mut warnings = Vec::new();
        let mut tier = opts.force_tier.unwrap_or(cx.tier).clamp(1, 4);
        if a.as_of.is_some() && tier >= 3 {
            warnings.push(format!(
                "tier {tier} walks the graph of the current versions; for an as-of date tier 2 (re-ranked hybrid) answered"
            ));
            tier = 2;
        }
        Route {
            links,
            complexity: cx,
            tier,
            warnings,
        }
    }
}
