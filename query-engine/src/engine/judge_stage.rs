//! Stage 4c, judge: with a chat model and `[method] judge_from_tier`, the tiers from that
//! one up have the model read each of their ranking's first `judge_top` articles against
//! the question ([`crate::judge`]). Those articles are ordered by the model's probability
//! that the answer needs them, and the context keeps the ones at `judge_keep` or above in
//! place of the score cliff's cut: how many articles a question needs is what the
//! retrieval scores predict worst.

use super::analyse::Analysis;
use super::tiers::Ranked;
use super::{AskOptions, Engine};
use crate::judge::{Judged, Shown, judge, judged_order};

/// What the judge decided: every judged article with its probability, in the ranking's
/// new order, and how many of them the context keeps.
pub(crate) struct Judgement {
    pub judged: Vec<Judged>,
    pub kept: usize,
}

impl Engine {
    /// Whether `tier` judges its candidates: a chat model, a tier at or above
    /// `judge_from_tier` and no fixed top-N ablation.
    fn judges(&self, tier: u8, opts: &AskOptions) -> bool {
        self.chat.is_some()
            && self.cfg.judge_from_tier.is_some_and(|from| tier >= from)
            && opts.fixed_top.is_none()
    }

    /// Judges the head of `ranked` when `tier` does and reorders it; the judgement, if
    /// one was made. A model that fails leaves the ranking and the score cliff's cut as
    /// they were, with a warning.
    pub(crate) fn judge_stage(
        &self,
        tier: u8,
        a: &Analysis,
        opts: &AskOptions,
        ranked: &mut [Ranked],
        warnings: &mut Vec<String>,
    ) -> Option<Judgement> {
        let chat = self.chat.as_deref().filter(|_| self.judges(tier, opts))?;
        let head = ranked.len().min(self.cfg.judge_top);
        let mut articles = Vec::with_capacity(head);
        for r in &ranked[..head] {
            let Some(article) = self.retriever.article(&r.iri).ok().flatten() else {
                warnings.push(format!(
                    "{} is not in the store: tier {tier}'s context was cut at the score cliff",
                    r.iri
                ));
                return None;
            };
            articles.push(article);
        }
        let shown: Vec<Shown<'_>> = articles
            .iter()
            .map(|a| Shown {
                law_title: &a.law_title,
                label: &a.label,
                text: &a.text,
            })
            .collect();
        let probabilities = match judge(chat, &a.question, &shown) {
            Ok(p) => p,
            Err(e) => {
                warnings.push(format!(
                    "the chat model did not judge the candidates ({e}): tier {tier}'s context was cut at the score cliff"
                ));
                return None;
            }
        };
        let (order, kept) = judged_order(&probabilities, self.cfg.judge_keep);
        let reordered: Vec<Ranked> = order.iter().map(|&i| ranked[i].clone()).collect();
        let judged = order
            .iter()
            .zip(&reordered)
            .map(|(&i, r)| Judged {
                iri: r.iri.clone(),
                rank: i,
                p: probabilities[i],
            })
            .collect();
        ranked[..head].clone_from_slice(&reordered);
        Some(Judgement { judged, kept })
    }
}
