//! The embedding stage: article passages (law title + article text, split at paragraph
//! boundaries when longer than the model's window), embedded through the store's cache,
//! then written to the build's HNSW index.

use coal_corpus::{Article, Corpus, LawVersion};
use coal_models::{Embedder, TextKind};
use kg_store::{BuildWriter, EmbeddingCache, TextKey};

use crate::{BuildError, BuildObserver, placed_articles};

/// The embedding model with the store's embedding cache, opened once per build.
pub(crate) struct Encoder<'a> {
    pub model: &'a dyn Embedder,
    pub cache: kg_store::EmbeddingCache,
}

impl<'a> Encoder<'a> {
    pub fn open(writer: &BuildWriter, model: &'a dyn Embedder) -> Result<Self, BuildError> {
        let cache = writer.embedding_cache(model.model_id(), model.dim())?;
        Ok(Encoder { model, cache })
    }
}

/// Texts embedded per call: large enough that the encoder's workers seldom wait for each
/// other at the end of a call (its passes are ~512 tokens, a call's last one runs alone),
/// small enough that an interrupted build loses little (the cache is written after each
/// call, every few seconds).
const BATCH: usize = 256;

/// What the stage did, for the build summary.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct EmbedReport {
    pub model_id: String,
    pub passages: usize,
    pub embedded: usize,
    pub from_cache: usize,
    pub tokens_embedded: usize,
    pub split_articles: usize,
    /// How articles with several 款 got their vectors, and how many took their 款'.
    pub article_vectors: ArticleVectors,
    pub paragraph_vector_articles: usize,
    /// How the vector index was made (extended from the previous build's or new).
    pub index: kg_store::VectorIndexReport,
    /// 款 passages (current articles with several 款 or with 项).
    pub paragraph_passages: usize,
    /// With [`ArticleVectors::Whole`] the 款 passages have an index of their own: how many
    /// of them its stage embedded, and how it was made. `None` by default, when the
    /// article index holds them (as its articles' vectors) and answers for them too.
    pub paragraphs_embedded: usize,
    pub paragraph_index: Option<kg_store::VectorIndexReport>,
    /// Wall seconds spent writing the vector indexes (HNSW inserts and files), part of the
    /// build's `embed` time.
    pub index_seconds: f64,
}

/// The passages of one article: its law title and text, in groups of whole paragraphs
/// that fit the window (a single paragraph longer than the window stays whole and the
/// encoder windows it).
pub fn article_passages(v: &LawVersion, a: &Article, embedder: &dyn Embedder) -> Vec<String> {
    let whole = format!("{}\n{}", v.title, a.text());
    let window = embedder.window_tokens();
    if embedder.token_count(&whole, TextKind::Passage) <= window {
        return vec![whole];
    }
    let mut out = Vec::new();
    let mut current = String::new();
    for p in &a.paragraphs {
        let mut para = p.text.clone();
        for it in &p.items {
            para.push('\n');
            para.push_str(&it.text);
        }
        let candidate = if current.is_empty() {
            format!("{}\n{}", v.title, para)
        } else {
            format!("{current}\n{para}")
        };
        if current.is_empty() || embedder.token_count(&candidate, TextKind::Passage) <= window {
            current = candidate;
        } else {
            out.push(std::mem::take(&mut current));
            current = format!("{}\n{}", v.title, para);
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The 款 passages of an article that has several 款 or any 项: (款 number, law title +
/// the 款's text with its 项). The query side's graph tier matches a question against
/// them, so an article whose one 款 answers it is not drowned by its others.
pub fn paragraph_passages(v: &LawVersion, a: &Article) -> Vec<(u32, String)> {
    if a.paragraphs.len() < 2 && a.paragraphs.iter().all(|p| p.items.is_empty()) {
        return Vec::new();
    }
    a.paragraphs
        .iter()
        .map(|p| {
            let mut text = format!("{}\n{}", v.title, p.text);
            for it in &p.items {
                text.push('\n');
                text.push_str(&it.text);
            }
            (p.number, text)
        })
        .collect()
}

/// Embeds `missing` (texts the cache lacks, each once) in batches, caching each batch as
/// it comes so an interrupted build loses little. Returns (texts, tokens) embedded.
fn fill_cache(
    encoder: &mut Encoder<'_>,
    missing: &[&str],
    stage: &str,
    observer: &dyn BuildObserver,
) -> Result<(usize, usize), BuildError> {
    let embedder = encoder.model;
    observer.stage(stage, Some(missing.len() as u64));
    let mut tokens = 0;
    for (done, batch) in missing.chunks(BATCH).enumerate() {
        let vectors = embedder
            .embed(batch, TextKind::Passage)
            .map_err(BuildError::Model)?;
        tokens += batch
            .iter()
            .map(|t| embedder.token_count(t, TextKind::Passage))
            .sum::<usize>();
        encoder.cache.insert(
            batch
                .iter()
                .map(|t| EmbeddingCache::key(t))
                .zip(vectors)
                .collect(),
        )?;
        observer.progress(((done + 1) * BATCH).min(missing.len()) as u64);
    }
    Ok((missing.len(), tokens))
}

/// Unit passage embeddings of `texts`, through the store's cache (what it lacks is
/// embedded and cached); the keys are recorded with the build so that `coal gc` keeps them.
pub fn cached_vectors(
    writer: &BuildWriter,
    encoder: &mut Encoder<'_>,
    texts: &[String],
    observer: &dyn BuildObserver,
) -> Result<Vec<Vec<f32>>, BuildError> {
    let keys: Vec<TextKey> = texts.iter().map(|t| EmbeddingCache::key(t)).collect();
    let mut seen = std::collections::HashSet::new();
    let missing: Vec<&str> = texts
        .iter()
        .zip(&keys)
        .filter(|(_, k)| encoder.cache.get(k).is_none() && seen.insert(**k))
        .map(|(t, _)| t.as_str())
        .collect();
    fill_cache(encoder, &missing, "fusion embeddings", observer)?;
    let vectors = keys
        .iter()
        .map(|k| {
            let v = encoder.cache.get(k).expect("every text was embedded");
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            v.iter().map(|x| x / norm).collect()
        })
        .collect();
    writer.record_extra_embedding_keys(&kg_store::IndexKeys {
        model_id: encoder.model.model_id().to_owned(),
        dim: encoder.model.dim(),
        keys,
    })?;
    Ok(vectors)
}

/// How an article with several 款 (or with 项) gets its vectors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArticleVectors {
    /// Its own text, embedded (window by window when long).
    Whole,
    /// Its 款 passages' vectors, so the article is as near as its nearest 款. Those
    /// passages are embedded for the 款 index anyway, so no text is embedded twice, and
    /// dense search finds more (`make eval-article-vectors`).
    #[default]
    Paragraphs,
}

/// One article's passages and their cache keys.
struct ArticleEntry {
    iri: String,
    latest: bool,
    texts: Vec<String>,
    keys: Vec<TextKey>,
    /// The 款 number of each text when the article's vectors are its 款' (else empty).
    paragraphs: Vec<u32>,
}

impl ArticleEntry {
    fn plan(a: &crate::PlacedArticle<'_>, embedder: &dyn Embedder, mode: ArticleVectors) -> Self {
        let by_paragraph = match mode {
            ArticleVectors::Whole => Vec::new(),
            ArticleVectors::Paragraphs => paragraph_passages(a.version, a.article),
        };
        let (paragraphs, texts): (Vec<u32>, Vec<String>) = if by_paragraph.is_empty() {
            (Vec::new(), article_passages(a.version, a.article, embedder))
        } else {
            by_paragraph.into_iter().unzip()
        };
        let keys = texts.iter().map(|t| EmbeddingCache::key(t)).collect();
        ArticleEntry {
            iri: a.iri.clone(),
            latest: a.latest,
            texts,
            keys,
            paragraphs,
        }
    }

    fn by_paragraphs(&self) -> bool {
        !self.paragraphs.is_empty()
    }
}

/// Embeds what the cache lacks and writes the vector index (`incremental`: extending the
/// previous build's when it can). Returns the report and, for
/// every article in [`placed_articles`] order, the cache keys of its passages.
pub fn embed_stage(
    writer: &BuildWriter,
    corpus: &Corpus,
    encoder: &mut Encoder<'_>,
    mode: ArticleVectors,
    incremental: bool,
    observer: &dyn BuildObserver,
) -> Result<(EmbedReport, Vec<Vec<TextKey>>), BuildError> {
    let embedder = encoder.model;
    let mut report = EmbedReport {
        model_id: embedder.model_id().to_owned(),
        article_vectors: mode,
        ..Default::default()
    };
    let mut articles = Vec::new();
    for a in placed_articles(corpus) {
        let entry = ArticleEntry::plan(&a, embedder, mode);
        report.split_articles += (!entry.by_paragraphs() && entry.texts.len() > 1) as usize;
        report.paragraph_vector_articles += entry.by_paragraphs() as usize;
        if entry.latest {
            report.paragraph_passages += entry.paragraphs.len();
        }
        articles.push(entry);
    }
    let mut missing: Vec<&str> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for e in &articles {
        for (p, key) in e.texts.iter().zip(&e.keys) {
            report.passages += 1;
            if encoder.cache.get(key).is_some() {
                report.from_cache += 1;
            } else if seen.insert(*key) {
                missing.push(p);
            }
        }
    }
    let (embedded, tokens) = fill_cache(encoder, &missing, "embed", observer)?;
    report.embedded = embedded;
    report.tokens_embedded = tokens;
    observer.stage("vectors", None);
    let started = std::time::Instant::now();
    let mut index = writer.vector_index_writer(embedder.model_id(), embedder.dim());
    let mut keys_per_article = Vec::with_capacity(articles.len());
    for e in articles {
        let vector = |k: &TextKey| {
            let v = encoder.cache.get(k).expect("every passage was embedded");
            v.to_vec()
        };
        if e.by_paragraphs() {
            let numbered = e
                .paragraphs
                .iter()
                .zip(&e.keys)
                .map(|(&n, k)| (n, *k, vector(k)))
                .collect();
            index.add_paragraphs(&e.iri, e.latest, numbered);
        } else {
            index.add(
                &e.iri,
                e.latest,
                e.keys.iter().map(|k| (*k, vector(k))).collect(),
            );
        }
        keys_per_article.push(e.keys);
    }
    let previous = writer.previous_vectors_dir().filter(|_| incremental);
    report.index = index.finish(previous.as_deref())?;
    report.index_seconds = started.elapsed().as_secs_f64();
    if mode == ArticleVectors::Whole {
        paragraph_stage(writer, corpus, encoder, incremental, observer, &mut report)?;
    }
    Ok((report, keys_per_article))
}

/// Embeds the 款 passages of the current articles into their own index (when the article
/// index holds whole articles' vectors, it cannot answer for 款).
fn paragraph_stage(
    writer: &BuildWriter,
    corpus: &Corpus,
    encoder: &mut Encoder<'_>,
    incremental: bool,
    observer: &dyn BuildObserver,
    report: &mut EmbedReport,
) -> Result<(), BuildError> {
    let embedder = encoder.model;
    let passages: Vec<(String, String, TextKey)> = placed_articles(corpus)
        .filter(|a| a.latest)
        .flat_map(|a| {
            paragraph_passages(a.version, a.article)
                .into_iter()
                .map(move |(n, text)| (coal_ontology::iri::paragraph(&a.iri, n), text))
        })
        .map(|(iri, text)| {
            let key = EmbeddingCache::key(&text);
            (iri, text, key)
        })
        .collect();
    let mut seen = std::collections::HashSet::new();
    let missing: Vec<&str> = passages
        .iter()
        .filter(|(_, _, k)| encoder.cache.get(k).is_none() && seen.insert(*k))
        .map(|(_, t, _)| t.as_str())
        .collect();
    report.paragraph_passages = passages.len();
    let (embedded, tokens) = fill_cache(encoder, &missing, "embed paragraphs", observer)?;
    report.paragraphs_embedded = embedded;
    report.tokens_embedded += tokens;
    if passages.is_empty() {
        // No article with several 款 or with 项: no index (HNSW cannot hold nothing).
        return Ok(());
    }
    observer.stage("paragraph vectors", None);
    let started = std::time::Instant::now();
    let mut index = writer.paragraph_vector_index_writer(embedder.model_id(), embedder.dim());
    for (iri, _, key) in &passages {
        let v = encoder.cache.get(key).expect("every passage was embedded");
        index.add(iri, true, vec![(*key, v.to_vec())]);
    }
    let previous = writer
        .previous_paragraph_vectors_dir()
        .filter(|_| incremental);
    report.paragraph_index = Some(index.finish(previous.as_deref())?);
    report.index_seconds += started.elapsed().as_secs_f64();
    Ok(())
}
