//! Stage 5, context: the tier's ranking cut at the first score cliff (METHOD.md §5, with
//! the tier's bounds), read back from the store, with the articles the question names
//! first.

use super::Engine;
use super::analyse::Analysis;
use super::answer::{ContextArticle, RANKED_KEPT};
use super::tiers::Ranked;
use crate::context::cliff_cut;

impl Engine {
    pub(crate) fn context(
        &self,
        a: &Analysis,
        tier: u8,
        ranked: &[Ranked],
        fixed_top: Option<usize>,
    ) -> (Vec<ContextArticle>, Vec<String>) {
        let scores: Vec<f64> = ranked.iter().map(|r| r.score).collect();
        let ti = tier as usize - 1;
        let keep = match fixed_top {
            Some(n) => n.min(ranked.len()),
            None => cliff_cut(
                &scores,
                self.cfg.cliff_sigma,
                self.cfg.context_min[ti],
                self.cfg.context_max[ti],
            ),
        };
        let mut context: Vec<ContextArticle> = ranked
            .iter()
            .take(keep)
            .filter_map(|r| self.context_article(&r.iri, r.score, r.via))
            .collect();
        // An article the question names is always in the context, first.
        let as_of = a.as_of.as_deref();
        for m in a.mentions.iter().rev() {
            let Some(iri) = self.article_iri(m, as_of) else {
                continue;
            };
            context.retain(|c| c.iri != iri);
            if let Some(c) = self.context_article(&iri, f64::INFINITY, "named in the question") {
                context.insert(0, c);
            }
        }
        let mut routed_top: Vec<String> = Vec::with_capacity(RANKED_KEPT);
        let named = context
            .iter()
            .take_while(|c| c.named_in_question())
            .map(|c| c.iri.clone());
        for iri in named.chain(ranked.iter().map(|r| r.iri.clone())) {
            if routed_top.len() == RANKED_KEPT {
                break;
            }
            if !routed_top.contains(&iri) {
                routed_top.push(iri);
            }
        }
        (context, routed_top)
    }
}
