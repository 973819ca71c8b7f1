//! The retrievers: BM25, dense (e5 + HNSW) and their hybrid, over one build.

use rustc_hash::FxHashMap as HashMap;

use coal_models::{Embedder, TextKind};
use kg_store::{IndexedArticle, Store, TextIndex, VectorIndex};
use serde::Serialize;

use crate::QueryError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Bm25,
    /// BM25 over character bigrams.
    Bigram,
    Dense,
    Hybrid,
}

/// How hybrid fuses the two lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Fusion {
    /// The method's 0.7·minmax(dense) + 0.3·minmax(BM25) over the union of both lists.
    Weighted,
    /// Reciprocal-rank fusion, Σ 1/(60 + rank).
    Rrf,
}

/// Candidates each retriever contributes to the hybrid union.
pub const HYBRID_CANDIDATES: usize = 100;
pub const DENSE_WEIGHT: f32 = 0.7;
const RRF_K: f32 = 60.0;

#[derive(Debug, Clone, Serialize)]
pub struct Hit {
    pub iri: String,
    pub score: f32,
    pub bm25: Option<f32>,
    pub dense: Option<f32>,
}

/// Dense hits from (IRI, similarity) pairs: best first, ties by IRI, at most `k`.
pub(crate) fn ranked_dense_hits(scored: impl Iterator<Item = (String, f32)>, k: usize) -> Vec<Hit> {
    let mut out: Vec<Hit> = scored
        .map(|(iri, score)| Hit {
            iri,
            score,
            bm25: None,
            dense: Some(score),
        })
        .collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.iri.cmp(&b.iri)));
    out.truncate(k);
    out
}

/// One search's result, with what the caller should know about the question.
#[derive(Debug, Clone, Serialize)]
pub struct SearchResult {
    pub hits: Vec<Hit>,
    pub warnings: Vec<String>,
}

pub struct Retriever {
    text: TextIndex,
    vectors: Option<VectorIndex>,
    /// 款 vectors (owned by paragraph IRIs), for the graph tiers.
    paragraphs: Option<VectorIndex>,
    embedder: Option<Box<dyn Embedder>>,
}

/// A 款 that matched a question: its IRI, its article's and the similarity.
#[derive(Debug, Clone, Serialize)]
pub struct ParagraphHit {
    pub iri: String,
    pub article: String,
    pub score: f32,
}

pub(crate) fn minmax(scores: &HashMap<String, f32>) -> HashMap<String, f32> {
    let (lo, hi) = scores
        .values()
        .fold((f32::MAX, f32::MIN), |(l, h), &s| (l.min(s), h.max(s)));
    scores
        .iter()
        .map(|(k, &s)| (k.clone(), if hi > lo { (s - lo) / (hi - lo) } else { 1.0 }))
        .collect()
}

fn dense_hits(hits: Vec<kg_store::VectorHit>) -> Vec<Hit> {
    hits.into_iter()
        .map(|h| Hit {
            iri: h.iri,
            score: h.score,
            bm25: None,
            dense: Some(h.score),
        })
        .collect()
}

fn paragraph_hits(hits: Vec<kg_store::VectorHit>) -> Vec<ParagraphHit> {
    hits.into_iter()
        .map(|h| ParagraphHit {
            article: kg_store::statute_graph::article_of(&h.iri).to_owned(),
            iri: h.iri,
            score: h.score,
        })
        .collect()
}

impl Retriever {
    /// Opens the build's indexes. Dense search needs both the vector index and an
    /// embedder of the same model.
    pub fn open(
        store: &Store,
        embedder: Option<Box<dyn Embedder>>,
    ) -> Result<Retriever, QueryError> {
        let text = store.text_index()?;
        let (vectors, paragraphs) = match &embedder {
            Some(_) => (Some(store.vector_index()?), store.paragraph_vector_index()?),
            None => (None, None),
        };
        Retriever::from_parts(text, vectors, paragraphs, embedder)
    }

    /// A retriever over indexes opened by the caller (in parallel, say): the checks of
    /// [`Retriever::open`] without the loading.
    pub fn from_parts(
        text: TextIndex,
        vectors: Option<VectorIndex>,
        paragraphs: Option<VectorIndex>,
        embedder: Option<Box<dyn Embedder>>,
    ) -> Result<Retriever, QueryError> {
        if let (Some(v), Some(e)) = (&vectors, &embedder)
            && v.model_id() != e.model_id()
        {
            return Err(QueryError::ModelMismatch {
                index: "vectors",
                stored: v.model_id().to_owned(),
                configured: e.model_id().to_owned(),
            });
        }
        if let (Some(p), Some(e)) = (&paragraphs, &embedder)
            && p.model_id() != e.model_id()
        {
            return Err(QueryError::ModelMismatch {
                index: "款 vectors",
                stored: p.model_id().to_owned(),
                configured: e.model_id().to_owned(),
            });
        }
        Ok(Retriever {
            text,
            vectors,
            paragraphs,
            embedder,
        })
    }

    /// How much the law title, hierarchy path, label and text count in BM25.
    /// Whether dense retrieval can run (an embedder was given).
    pub fn has_embedder(&self) -> bool {
        self.embedder.is_some()
    }

    pub fn set_bm25_weights(&mut self, weights: kg_store::FieldWeights) {
        self.text.set_weights(weights);
    }

    /// Stored fields of an article (law title, label, text) by IRI.
    pub fn article(&self, iri: &str) -> Result<Option<IndexedArticle>, QueryError> {
        Ok(self.text.get(iri)?)
    }

    fn check_question(
        &self,
        question: &str,
        warnings: &mut Vec<String>,
    ) -> Result<String, QueryError> {
        let q = question.trim();
        if q.is_empty() {
            return Err(QueryError::EmptyQuestion);
        }
        let q: String = q
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if let Some(e) = &self.embedder {
            let window = e.window_tokens();
            if e.token_count(&q, TextKind::Query) > window {
                // Keep the head that fits: questions state their point first.
                let mut cut = q.chars().count();
                while cut > 1
                    && e.token_count(&q.chars().take(cut).collect::<String>(), TextKind::Query)
                        > window
                {
                    cut = cut * 9 / 10;
                }
                warnings.push(format!("the question is longer than the model's {window}-token window; its first {cut} characters were used"));
                return Ok(q.chars().take(cut).collect());
            }
        }
        Ok(q)
    }

    pub fn bm25(
        &self,
        question: &str,
        k: usize,
        include_old: bool,
    ) -> Result<Vec<Hit>, QueryError> {
        Ok(self
            .text
            .search(question, k, include_old)?
            .into_iter()
            .map(|(iri, score)| Hit {
                iri,
                score,
                bm25: Some(score),
                dense: None,
            })
            .collect())
    }

    /// A warning when the build's BM25 index predates the bigram field (its bigram search
    /// finds nothing).
    pub fn bigram_warning(&self) -> Option<String> {
        (!self.text.has_bigrams()).then(|| {
            "this build's BM25 index has no bigram field (written by an older coal): bigram \
             search finds nothing; rebuild with `coal build` for the full re-ranking"
                .to_owned()
        })
    }

    /// BM25 over character bigrams of each article's law name and body: catches the
    /// compounds and phrasings jieba's words split apart.
    pub fn bigram(
        &self,
        question: &str,
        k: usize,
        include_old: bool,
    ) -> Result<Vec<Hit>, QueryError> {
        Ok(self
            .text
            .search_bigrams(question, k, include_old)?
            .into_iter()
            .map(|(iri, score)| Hit {
                iri,
                score,
                bm25: None,
                dense: None,
            })
            .collect())
    }

    pub fn dense(
        &self,
        question: &str,
        k: usize,
        include_old: bool,
    ) -> Result<Vec<Hit>, QueryError> {
        let q = self.embed_query(question)?;
        self.dense_by_vector(&q, k, include_old)
    }

    /// The question's embedding (the model's query form).
    pub fn embed_query(&self, question: &str) -> Result<Vec<f32>, QueryError> {
        let (Some(_), Some(embedder)) = (&self.vectors, &self.embedder) else {
            return Err(QueryError::DenseNeedsModel);
        };
        let mut q = embedder.embed(&[question], TextKind::Query)?;
        Ok(q.swap_remove(0))
    }

    /// Dense search with an already embedded question.
    pub fn dense_by_vector(
        &self,
        q: &[f32],
        k: usize,
        include_old: bool,
    ) -> Result<Vec<Hit>, QueryError> {
        let Some(vectors) = &self.vectors else {
            return Err(QueryError::DenseNeedsEmbeddings);
        };
        Ok(dense_hits(vectors.search(q, k, include_old)?))
    }

    /// Does the build have 款 vectors (builds before they existed do not)?
    pub fn has_paragraph_vectors(&self) -> bool {
        self.paragraphs.is_some() || self.vectors.as_ref().is_some_and(|v| v.has_paragraphs())
    }

    /// The `k` 款 nearest to an embedded question (current versions), best first; empty
    /// without 款 vectors. They are in the article index, or in an index of their own
    /// (builds with `ArticleVectors::Whole`, and builds made before they shared one).
    pub fn dense_paragraphs(&self, q: &[f32], k: usize) -> Result<Vec<ParagraphHit>, QueryError> {
        let hits = match (&self.paragraphs, &self.vectors) {
            (Some(p), _) => p.search(q, k, false)?,
            (None, Some(v)) => v.search_paragraphs(q, k)?,
            (None, None) => return Ok(Vec::new()),
        };
        Ok(paragraph_hits(hits))
    }

    /// [`Retriever::dense_by_vector`] of current versions and
    /// [`Retriever::dense_paragraphs`] together: one scan of the index when the 款 share
    /// the article index (builds since they do), the two searches otherwise.
    pub fn dense_with_paragraphs(
        &self,
        q: &[f32],
        k: usize,
        k_paragraphs: usize,
    ) -> Result<(Vec<Hit>, Vec<ParagraphHit>), QueryError> {
        match (&self.paragraphs, &self.vectors) {
            (None, Some(v)) => {
                let (articles, paragraphs) = v.search_with_paragraphs(q, k, k_paragraphs)?;
                Ok((dense_hits(articles), paragraph_hits(paragraphs)))
            }
            _ => Ok((
                self.dense_by_vector(q, k, false)?,
                self.dense_paragraphs(q, k_paragraphs)?,
            )),
        }
    }

    /// Fuses BM25 and dense candidate lists (both computed once, reusable by callers that
    /// also need them separately).
    pub fn fuse(bm25: &[Hit], dense: &[Hit], fusion: Fusion, k: usize) -> Vec<Hit> {
        let mut fused: HashMap<String, Hit> = HashMap::default();
        match fusion {
            Fusion::Weighted => {
                let b = minmax(&bm25.iter().map(|h| (h.iri.clone(), h.score)).collect());
                let d = minmax(&dense.iter().map(|h| (h.iri.clone(), h.score)).collect());
                for h in bm25.iter().chain(dense) {
                    let e = fused.entry(h.iri.clone()).or_insert(Hit {
                        iri: h.iri.clone(),
                        score: 0.0,
                        bm25: None,
                        dense: None,
                    });
                    e.bm25 = e.bm25.or(h.bm25);
                    e.dense = e.dense.or(h.dense);
                }
                for h in fused.values_mut() {
                    h.score = DENSE_WEIGHT * d.get(&h.iri).copied().unwrap_or(0.0)
                        + (1.0 - DENSE_WEIGHT) * b.get(&h.iri).copied().unwrap_or(0.0);
                }
            }
            Fusion::Rrf => {
                for list in [bm25, dense] {
                    for (rank, h) in list.iter().enumerate() {
                        let e = fused.entry(h.iri.clone()).or_insert(Hit {
                            iri: h.iri.clone(),
                            score: 0.0,
                            bm25: None,
                            dense: None,
                        });
                        e.score += 1.0 / (RRF_K + rank as f32 + 1.0);
                        e.bm25 = e.bm25.or(h.bm25);
                        e.dense = e.dense.or(h.dense);
                    }
                }
            }
        }
        let mut hits: Vec<Hit> = fused.into_values().collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.iri.cmp(&b.iri)));
        hits.truncate(k);
        hits
    }

    pub fn search(
        &self,
        question: &str,
        mode: Mode,
        fusion: Fusion,
        k: usize,
        include_old: bool,
    ) -> Result<SearchResult, QueryError> {
        let mut warnings = Vec::new();
        let q = self.check_question(question, &mut warnings)?;
        if mode == Mode::Bigram {
            warnings.extend(self.bigram_warning());
        }
        let hits = match mode {
            Mode::Bm25 => self.bm25(&q, k, include_old)?,
            Mode::Bigram => self.bigram(&q, k, include_old)?,
            Mode::Dense => self.dense(&q, k, include_old)?,
            Mode::Hybrid => {
                let n = k.max(HYBRID_CANDIDATES);
                let b = self.bm25(&q, n, include_old)?;
                let d = self.dense(&q, n, include_old)?;
                Self::fuse(&b, &d, fusion, k)
            }
        };
        Ok(SearchResult { hits, warnings })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit(iri: &str, score: f32, bm25: bool) -> Hit {
        Hit {
            iri: iri.into(),
            score,
            bm25: bm25.then_some(score),
            dense: (!bm25).then_some(score),
        }
    }

    #[test]
    fn weighted_fusion_is_the_methods_formula() {
        let b = [
            hit("a", 30.0, true),
            hit("b", 20.0, true),
            hit("c", 10.0, true),
        ];
        let d = [
            hit("b", 0.9, false),
            hit("d", 0.8, false),
            hit("a", 0.7, false),
        ];
        let f = Retriever::fuse(&b, &d, Fusion::Weighted, 10);
        let score = |iri: &str| f.iter().find(|h| h.iri == iri).unwrap().score;
        // b: 0.7·1.0 + 0.3·0.5; a: 0.7·0 + 0.3·1; d: 0.7·0.5 + 0; c: 0 + 0.3·0
        assert!((score("b") - 0.85).abs() < 1e-6);
        assert!((score("a") - 0.30).abs() < 1e-6);
        assert!((score("d") - 0.35).abs() < 1e-6);
        assert!(score("c").abs() < 1e-6);
        assert_eq!(f[0].iri, "b");
        assert_eq!(f.len(), 4);
        assert_eq!(f[0].bm25, Some(20.0));
        assert_eq!(f[0].dense, Some(0.9));
    }

    #[test]
    fn rrf_rewards_agreement() {
        let b = [hit("a", 3.0, true), hit("b", 2.0, true)];
        let d = [hit("b", 0.9, false), hit("c", 0.8, false)];
        let f = Retriever::fuse(&b, &d, Fusion::Rrf, 2);
        assert_eq!(f[0].iri, "b");
        assert_eq!(f.len(), 2);
    }
}
