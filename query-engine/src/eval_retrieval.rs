//! `eval retrieval`'s runs: every retrieval mode on a set's questions, each question's
//! BM25, bigram and dense lists computed once and shared by the modes built on them
//! (hybrid fuses them; tier 2's re-ranking adds the statute graph and the method's
//! weights), with each mode's latency.

use std::collections::HashSet;
use std::time::Instant;

use crate::QueryError;
use crate::eval::{EvalItem, RetrievalMetrics, score};
use crate::graph::StatuteGraph;
use crate::method::MethodConfig;
use crate::retrieve::{Fusion, HYBRID_CANDIDATES, Hit, Retriever};

/// The modes scored, in table order, with the embedder and without.
pub const BM25_MODES: [&str; 2] = ["bm25", "bigram"];
pub const ALL_MODES: [&str; 5] = ["bm25", "bigram", "dense", "hybrid", "reranked"];
/// With a chat model drafting answers ([`crate::draft`]): dense, hybrid and the
/// re-ranking again, on the question's dense list fused with the draft's.
pub const DRAFT_MODES: [&str; 3] = ["dense+draft", "hybrid+draft", "reranked+draft"];

/// What the modes run on. Without an embedder only BM25 and bigram are run; `rerank`
/// (tier 2's re-ranking) needs the statute graph and the method's weights.
pub struct RetrievalRun<'a> {
    pub retriever: &'a Retriever,
    pub rerank: Option<(&'a StatuteGraph, &'a MethodConfig)>,
    pub fusion: Fusion,
    /// Search older versions too (as `ask --as-of` does): re-ranking then runs without
    /// the graph's signals, which describe the latest versions.
    pub include_old: bool,
    /// The longest ranked list kept per mode (the largest k scored).
    pub max_k: usize,
    /// A chat model that drafts an answer to each question, the draft's weight in the
    /// fused dense list and how many are drafted at once: adds [`DRAFT_MODES`] (needs
    /// the embedder).
    pub draft: Option<crate::draft::Drafting<'a>>,
}

/// One question's retriever lists, as `--dump` writes them.
pub struct QuestionLists<'a> {
    pub bm25: &'a [Hit],
    pub bigram: &'a [Hit],
    pub dense: &'a [Hit],
    pub query_vector: &'a [f32],
}

/// One mode over a set: ranked IRIs and milliseconds per question.
#[derive(Debug, Clone)]
pub struct ModeRun {
    pub mode: &'static str,
    pub ranked: Vec<Vec<String>>,
    pub latency_ms: Vec<f64>,
}

/// A mode's scores: the metrics and its latency quantiles (nearest rank).
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModeReport {
    pub metrics: RetrievalMetrics,
    pub p50_ms: f64,
    pub p95_ms: f64,
}

impl ModeRun {
    pub fn report(&self, gold: &[Vec<HashSet<String>>], ks: &[usize]) -> ModeReport {
        let mut latency = self.latency_ms.clone();
        latency.sort_by(f64::total_cmp);
        ModeReport {
            metrics: score(&self.ranked, gold, ks),
            p50_ms: crate::eval_answer::quantile(&latency, 0.50),
            p95_ms: crate::eval_answer::quantile(&latency, 0.95),
        }
    }
}

fn ms_since(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

impl RetrievalRun<'_> {
    pub fn modes(&self) -> Vec<&'static str> {
        if !self.retriever.has_embedder() {
            return BM25_MODES.to_vec();
        }
        let mut modes = ALL_MODES.to_vec();
        if self.draft.is_some() {
            modes.extend(DRAFT_MODES);
        }
        modes
    }

    /// Runs every mode on every item; `each` sees each question's retriever lists (and
    /// may fail with an error of its own, which stops the run).
    pub fn run<E: From<QueryError>>(
        &self,
        items: &[EvalItem],
        mut each: impl FnMut(usize, &QuestionLists<'_>) -> Result<(), E>,
    ) -> Result<Vec<ModeRun>, E> {
        let modes = self.modes();
        let dense_on = self.retriever.has_embedder();
        // Hybrid fuses the top 100 of each list; alone, each retriever is asked for what
        // is scored.
        let candidates = if dense_on {
            self.max_k.max(HYBRID_CANDIDATES)
        } else {
            self.max_k
        };
        let mut runs: Vec<ModeRun> = modes
            .iter()
            .map(|&mode| ModeRun {
                mode,
                ranked: Vec::with_capacity(items.len()),
                latency_ms: Vec::with_capacity(items.len()),
            })
            .collect();
        // Drafts of the batch `qi` is in, and the generation time each took (the batch's
        // time shared out: questions drafted side by side finish together).
        let (mut drafts, mut draft_ms_each) = (Vec::new(), 0.0);
        for (qi, it) in items.iter().enumerate() {
            if let (Some(d), true) = (self.draft, dense_on) {
                let batch = d.batch.max(1);
                if qi % batch == 0 {
                    let t = Instant::now();
                    let end = (qi + batch).min(items.len());
                    let questions: Vec<&str> =
                        items[qi..end].iter().map(|i| i.question.as_str()).collect();
                    drafts = crate::draft::draft_answers(d.chat, &questions)?;
                    draft_ms_each = ms_since(t) / questions.len() as f64;
                }
            }
            let t = Instant::now();
            let bm25 = self
                .retriever
                .bm25(&it.question, candidates, self.include_old)?;
            let t_bm25 = ms_since(t);
            let t = Instant::now();
            let bigram = self
                .retriever
                .bigram(&it.question, candidates, self.include_old)?;
            let t_bigram = ms_since(t);
            let (mut dense, mut query_vector, mut t_dense) = (Vec::new(), Vec::new(), 0.0);
            if dense_on {
                let t = Instant::now();
                query_vector = self.retriever.embed_query(&it.question)?;
                dense =
                    self.retriever
                        .dense_by_vector(&query_vector, candidates, self.include_old)?;
                t_dense = ms_since(t);
            }
            // The draft's own dense list, fused with the question's (its time includes the
            // draft's share of its batch's generation).
            let (mut drafted, mut t_draft) = (Vec::new(), 0.0);
            if let (Some(d), true) = (self.draft, dense_on) {
                let t = Instant::now();
                let text = &drafts[qi % d.batch.max(1)];
                let v = self.retriever.embed_query(text)?;
                let listed = self
                    .retriever
                    .dense_by_vector(&v, candidates, self.include_old)?;
                drafted = crate::draft::fuse_with_draft(&dense, &listed, d.weight, candidates);
                t_draft = t_dense + draft_ms_each + ms_since(t);
            }
            each(
                qi,
                &QuestionLists {
                    bm25: &bm25,
                    bigram: &bigram,
                    dense: &dense,
                    query_vector: &query_vector,
                },
            )?;
            let head = |l: &[Hit]| l.len().min(HYBRID_CANDIDATES);
            let (b, g) = (&bm25[..head(&bm25)], &bigram[..head(&bigram)]);
            for run in &mut runs {
                let with_draft = run.mode.ends_with("+draft");
                let (whole, t_dense) = match with_draft {
                    true => (&drafted, t_draft),
                    false => (&dense, t_dense),
                };
                let d = &whole[..head(whole)];
                let (list, ms) = match run.mode {
                    "bm25" => (bm25.clone(), t_bm25),
                    "bigram" => (bigram.clone(), t_bigram),
                    "dense" | "dense+draft" => (whole.clone(), t_dense),
                    "hybrid" | "hybrid+draft" => {
                        let t = Instant::now();
                        let fused = Retriever::fuse(b, d, self.fusion, self.max_k);
                        (fused, t_bm25 + t_dense + ms_since(t))
                    }
                    _ => {
                        let (graph, method) = self.rerank.ok_or(QueryError::RerankWithoutGraph)?;
                        let graph = (!self.include_old).then_some(graph);
                        let t = Instant::now();
                        let list = crate::rerank::rerank(d, b, g, graph, method);
                        (list, t_bm25 + t_bigram + t_dense + ms_since(t))
                    }
                };
                run.ranked
                    .push(list.into_iter().take(self.max_k).map(|h| h.iri).collect());
                run.latency_ms.push(ms);
            }
        }
        Ok(runs)
    }
}
