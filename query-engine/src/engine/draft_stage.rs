//! Stage 4a, draft: with a chat model and `[method] draft_from_tier`, the tiers from that
//! one up have the model draft a short answer before they rank. The draft's nearest
//! articles and 款 join the question's dense lists ((sim(question) + w·sim(draft)) / (1 + w),
//! [`crate::draft`]) and the hybrid and tier 2's re-ranking are made again from it, so
//! tier 3 walks from, and tier 4 verifies, lists that name the law and the rule a
//! layperson's question only describes. It costs a generation (seconds on a CPU): what a
//! harder tier spends that an easier one does not.

use super::analyse::Analysis;
use super::retrieval::{PARAGRAPH_CANDIDATES, Retrieval};
use super::{AskOptions, Engine};
use crate::retrieve::{Fusion, HYBRID_CANDIDATES, Retriever};

impl Engine {
    /// Whether `tier` drafts for this question: a chat model, a tier at or above
    /// `draft_from_tier`, the latest versions (the draft's search covers those only) and
    /// no fixed top-N ablation.
    fn drafts(&self, tier: u8, a: &Analysis, opts: &AskOptions) -> bool {
        self.chat.is_some()
            && self.cfg.draft_from_tier.is_some_and(|from| tier >= from)
            && a.as_of.is_none()
            && opts.fixed_top.is_none()
    }

    /// Drafts an answer when `tier` does and fuses its dense list into `r`; the draft, if
    /// one was made. A model that fails leaves the question's lists as they were, with a
    /// warning.
    pub(crate) fn draft_stage(
        &self,
        tier: u8,
        a: &Analysis,
        opts: &AskOptions,
        r: &mut Retrieval,
        warnings: &mut Vec<String>,
    ) -> Option<String> {
        let chat = self
            .chat
            .as_deref()
            .filter(|_| self.drafts(tier, a, opts))?;
        let listed = crate::draft::draft_answer(chat, &a.question).and_then(|draft| {
            let v = self.retriever.embed_query(&draft)?;
            let listed = self
                .retriever
                .dense_by_vector(&v, HYBRID_CANDIDATES, false)?;
            let paragraphs = self.retriever.dense_paragraphs(&v, PARAGRAPH_CANDIDATES)?;
            Ok((draft, listed, paragraphs))
        });
        let (draft, listed, paragraphs) = match listed {
            Ok(d) if !d.0.is_empty() => d,
            Ok(_) => {
                warnings.push(format!(
                    "the chat model's draft was empty: tier {tier} searched with the question alone"
                ));
                return None;
            }
            Err(e) => {
                warnings.push(format!(
                    "no draft answer ({e}): tier {tier} searched with the question alone"
                ));
                return None;
            }
        };
        let weight = self.cfg.draft_weight as f32;
        r.dense = crate::draft::fuse_with_draft(&r.dense, &listed, weight, HYBRID_CANDIDATES);
        r.paragraphs = crate::draft::fuse_paragraphs_with_draft(
            &r.paragraphs,
            &paragraphs,
            weight,
            PARAGRAPH_CANDIDATES,
        );
        r.hybrid = Retriever::fuse(&r.bm25, &r.dense, Fusion::Weighted, HYBRID_CANDIDATES);
        r.reranked =
            crate::rerank::rerank(&r.dense, &r.bm25, &r.bigram, Some(&self.graph), &self.cfg);
        Some(draft)
    }
}
