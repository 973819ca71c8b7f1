//! The embedding stage: article passages (law title + article text, split at paragraph
//! boundaries when longer than the model's window), embedded through the store's cache,
//! then written to the build's HNSW index.

use coal_corpus::{Article, Corpus, LawVersion};
use coal_models::{Embedder, TextKind};
use kg_store::{BuildWriter, EmbeddingCache, TextKey};

use crate::{BuildError, BuildObserver, placed_articles};

/// Texts embedded per call: large enough for batching, small enough that an interrupted
/// build loses little (the cache is written after each batch).
const BATCH: usize = 64;

/// What the stage did, for the build summary.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct EmbedReport {
    pub model_id: String,
    pub passages: usize,
    pub embedded: usize,
    pub from_cache: usize,
    pub tokens_embedded: usize,
    pub split_articles: usize,
    /// How the vector index was made (extended from the previous build's or new).
    pub index: kg_store::VectorIndexReport,
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

/// Embeds `missing` (texts the cache lacks, each once) in batches, caching each batch as
/// it comes so an interrupted build loses little. Returns (texts, tokens) embedded.
fn fill_cache(
    cache: &mut EmbeddingCache,
    embedder: &dyn Embedder,
    missing: &[&str],
    stage: &str,
    observer: &dyn BuildObserver,
) -> Result<(usize, usize), BuildError> {
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
        cache.insert(
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
/// embedded and cached).
pub fn cached_vectors(
    writer: &BuildWriter,
    embedder: &dyn Embedder,
    texts: &[String],
    observer: &dyn BuildObserver,
) -> Result<Vec<Vec<f32>>, BuildError> {
    let mut cache = writer.embedding_cache(embedder.model_id(), embedder.dim())?;
    let mut seen = std::collections::HashSet::new();
    let missing: Vec<&str> = texts
        .iter()
        .filter(|t| cache.get(&EmbeddingCache::key(t)).is_none() && seen.insert(t.as_str()))
        .map(String::as_str)
        .collect();
    fill_cache(
        &mut cache,
        embedder,
        &missing,
        "fusion embeddings",
        observer,
    )?;
    let keys: Vec<TextKey> = texts.iter().map(|t| EmbeddingCache::key(t)).collect();
    writer.record_extra_embedding_keys(embedder.model_id(), &keys)?;
    Ok(texts
        .iter()
        .map(|t| {
            let v = cache
                .get(&EmbeddingCache::key(t))
                .expect("every text was embedded");
            let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
            v.iter().map(|x| x / norm).collect()
        })
        .collect())
}

/// Embeds what the cache lacks and writes the vector index (`incremental`: extending the
/// previous build's when it can). Returns the report and, for
/// every article in [`placed_articles`] order, the cache keys of its passages.
pub fn embed_stage(
    writer: &BuildWriter,
    corpus: &Corpus,
    embedder: &dyn Embedder,
    incremental: bool,
    observer: &dyn BuildObserver,
) -> Result<(EmbedReport, Vec<Vec<TextKey>>), BuildError> {
    let mut report = EmbedReport {
        model_id: embedder.model_id().to_owned(),
        ..Default::default()
    };
    // (article IRI, latest?, passage texts)
    let mut articles = Vec::new();
    for a in placed_articles(corpus) {
        let passages = article_passages(a.version, a.article, embedder);
        report.split_articles += (passages.len() > 1) as usize;
        articles.push((a.iri, a.latest, passages));
    }
    let mut cache = writer.embedding_cache(embedder.model_id(), embedder.dim())?;
    let mut missing: Vec<&str> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (_, _, passages) in &articles {
        for p in passages {
            report.passages += 1;
            let key = EmbeddingCache::key(p);
            if cache.get(&key).is_some() {
                report.from_cache += 1;
            } else if seen.insert(key) {
                missing.push(p);
            }
        }
    }
    let (embedded, tokens) = fill_cache(&mut cache, embedder, &missing, "embed", observer)?;
    report.embedded = embedded;
    report.tokens_embedded = tokens;
    observer.stage("vectors", None);
    let mut index = writer.vector_index_writer(embedder.model_id(), embedder.dim());
    let mut keys_per_article = Vec::with_capacity(articles.len());
    for (iri, latest, passages) in articles {
        let keys: Vec<TextKey> = passages.iter().map(|p| EmbeddingCache::key(p)).collect();
        let vectors = keys
            .iter()
            .map(|k| {
                let v = cache.get(k).expect("every passage was embedded").to_vec();
                (*k, v)
            })
            .collect();
        index.add(&iri, latest, vectors);
        keys_per_article.push(keys);
    }
    let previous = writer.previous_vectors_dir().filter(|_| incremental);
    report.index = index.finish(previous.as_deref())?;
    Ok((report, keys_per_article))
}
