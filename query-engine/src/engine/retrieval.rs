//! Stage 2, retrieve: each retriever once (BM25, bigram BM25, dense over articles, dense
//! over 款), the method's hybrid and tier 2's re-ranking. Consistency, the tiers and the
//! trace all use these lists.

use std::time::Instant;

use super::Engine;
use super::analyse::Analysis;
use crate::QueryError;
use crate::retrieve::{Fusion, HYBRID_CANDIDATES, Hit, ParagraphHit, Retriever};

/// 款 asked of the paragraph index: several per article are common.
pub const PARAGRAPH_CANDIDATES: usize = 150;

pub(crate) struct Retrieval {
    pub bm25: Vec<Hit>,
    pub bigram: Vec<Hit>,
    pub dense: Vec<Hit>,
    /// 款 nearest the question (current versions; empty without a 款 index or with a date).
    pub paragraphs: Vec<ParagraphHit>,
    pub hybrid: Vec<Hit>,
    pub reranked: Vec<Hit>,
    /// The question's embedding.
    pub query: Vec<f32>,
    /// (stage, milliseconds)
    pub timings: Vec<(&'static str, f64)>,
}

impl Engine {
    pub(crate) fn retrieve(&self, a: &Analysis) -> Result<Retrieval, QueryError> {
        let q = &a.question;
        let as_of = a.as_of.as_deref();
        let mut timings = Vec::new();
        let mut t = Instant::now();
        let mut lap = |name: &'static str, t: &mut Instant| {
            timings.push((name, t.elapsed().as_secs_f64() * 1e3));
            *t = Instant::now();
        };
        // With --as-of, every version is searched and those not in force are left out.
        let (n, old_too) = match as_of {
            Some(_) => (HYBRID_CANDIDATES * 4, true),
            None => (HYBRID_CANDIDATES, false),
        };
        let bm25 = self.in_force(
            self.retriever.bm25(q, n, old_too)?,
            as_of,
            HYBRID_CANDIDATES,
        );
        lap("bm25", &mut t);
        let bigram = self.in_force(
            self.retriever.bigram(q, n, old_too)?,
            as_of,
            HYBRID_CANDIDATES,
        );
        lap("bigram", &mut t);
        let query = self.retriever.embed_query(q)?;
        lap("embed", &mut t);
        // The 款 index holds current versions: the graph tiers, which use it, give way to
        // tier 2 with a date. Without a date both lists come from one scan, timed as
        // "dense"; "paragraphs" stays in the trace (~0 ms) so that traces keep their shape.
        let (dense, paragraphs) = match as_of {
            None => self.retriever.dense_with_paragraphs(
                &query,
                HYBRID_CANDIDATES,
                PARAGRAPH_CANDIDATES,
            )?,
            Some(_) => (
                self.in_force(
                    self.retriever.dense_by_vector(&query, n, old_too)?,
                    as_of,
                    HYBRID_CANDIDATES,
                ),
                Vec::new(),
            ),
        };
        lap("dense", &mut t);
        lap("paragraphs", &mut t);
        let hybrid = Retriever::fuse(&bm25, &dense, Fusion::Weighted, HYBRID_CANDIDATES);
        // The graph holds the current versions only: with --as-of, an article of a law
        // amended since would miss the graph's signals that an unchanged law's articles get.
        let graph = as_of.is_none().then_some(&self.graph);
        let reranked = crate::rerank::rerank(&dense, &bm25, &bigram, graph, &self.cfg);
        lap("rerank", &mut t);
        Ok(Retrieval {
            bm25,
            bigram,
            dense,
            paragraphs,
            hybrid,
            reranked,
            query,
            timings,
        })
    }
}
