//! Dense vectors: a store-wide embedding cache (so a rebuild never re-embeds an
//! unchanged text) and a per-build HNSW index of article vectors.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use hnsw_rs::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

/// A text's key in the cache: sha256 of the exact text embedded (prefix excluded).
pub type TextKey = [u8; 32];

/// Append-only file of `(key, dim, dim × f32)` records, one file per model id. A torn
/// last record (a build killed mid-write) is cut off when the cache is opened.
pub struct EmbeddingCache {
    path: PathBuf,
    dim: usize,
    vectors: HashMap<TextKey, Vec<f32>>,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> StoreError + '_ {
    move |e| StoreError::io(path, e)
}

impl EmbeddingCache {
    pub fn open(dir: &Path, model_id: &str, dim: usize) -> Result<EmbeddingCache> {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let safe: String = model_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("embeddings-{safe}.bin"));
        let mut vectors = HashMap::new();
        if path.exists() {
            let mut bytes = Vec::new();
            std::fs::File::open(&path)
                .map_err(io(&path))?
                .read_to_end(&mut bytes)
                .map_err(io(&path))?;
            let record = 32 + 4 + dim * 4;
            let mut at = 0;
            while at + record <= bytes.len() {
                let key: TextKey = bytes[at..at + 32].try_into().unwrap();
                let d = u32::from_le_bytes(bytes[at + 32..at + 36].try_into().unwrap()) as usize;
                if d != dim {
                    return Err(StoreError::RdfModel(format!(
                        "{}: record of dimension {d}, expected {dim}",
                        path.display()
                    )));
                }
                let v = bytes[at + 36..at + record]
                    .chunks_exact(4)
                    .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
                    .collect();
                vectors.insert(key, v);
                at += record;
            }
            if at != bytes.len() {
                let f = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(io(&path))?;
                f.set_len(at as u64).map_err(io(&path))?;
            }
        }
        Ok(EmbeddingCache { path, dim, vectors })
    }

    pub fn key(text: &str) -> TextKey {
        use sha2::{Digest, Sha256};
        Sha256::digest(text.as_bytes()).into()
    }

    pub fn get(&self, key: &TextKey) -> Option<&[f32]> {
        self.vectors.get(key).map(|v| v.as_slice())
    }

    pub fn len(&self) -> usize {
        self.vectors.len()
    }

    pub fn is_empty(&self) -> bool {
        self.vectors.is_empty()
    }

    /// Appends new vectors and syncs them to disk.
    pub fn insert(&mut self, items: Vec<(TextKey, Vec<f32>)>) -> Result<()> {
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.path)
            .map_err(io(&self.path))?;
        let mut buf = Vec::with_capacity(items.len() * (36 + self.dim * 4));
        for (key, v) in &items {
            assert_eq!(v.len(), self.dim, "vector dimension");
            buf.extend_from_slice(key);
            buf.extend_from_slice(&(self.dim as u32).to_le_bytes());
            for x in v {
                buf.extend_from_slice(&x.to_le_bytes());
            }
        }
        f.write_all(&buf).map_err(io(&self.path))?;
        f.sync_data().map_err(io(&self.path))?;
        self.vectors.extend(items);
        Ok(())
    }
}

/// Which article a vector belongs to (an article longer than the encoder's window has
/// one vector per group of paragraphs).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct VectorMeta {
    model_id: String,
    dim: usize,
    /// Article IRIs and whether each is of its law's latest version.
    articles: Vec<(String, bool)>,
    /// For each vector, its article's position in `articles`.
    owner: Vec<u32>,
}

const BASENAME: &str = "vectors";

/// Stored and query vectors are scaled by this, so that a dot product of two unit
/// vectors stays below 1 even with rounding: DistDot (the fast distance for normalized
/// vectors) panics on `1 − dot < 0`, which identical texts in two versions produce.
/// Scores are divided by SHRINK² again.
const SHRINK: f32 = 0.9999;
/// HNSW candidate list while building: 100 builds the eval profile's index 2.5x faster
/// than 200 (10.7 s against 26.5 s) with the same Recall@10 on its dev sets
/// (`make eval-retrieval`); 64 began to lose recall at 100.
const EF_CONSTRUCTION: usize = 100;

/// Collects article vectors for one build, then writes the HNSW index.
pub struct VectorIndexWriter {
    dir: PathBuf,
    meta: VectorMeta,
    vectors: Vec<Vec<f32>>,
}

impl VectorIndexWriter {
    pub fn new(dir: &Path, model_id: &str, dim: usize) -> VectorIndexWriter {
        VectorIndexWriter {
            dir: dir.to_owned(),
            meta: VectorMeta {
                model_id: model_id.to_owned(),
                dim,
                articles: Vec::new(),
                owner: Vec::new(),
            },
            vectors: Vec::new(),
        }
    }

    /// Adds an article with all of its vectors (normalized).
    pub fn add(&mut self, iri: &str, latest: bool, vectors: Vec<Vec<f32>>) {
        let owner = self.meta.articles.len() as u32;
        self.meta.articles.push((iri.to_owned(), latest));
        for v in vectors {
            self.meta.owner.push(owner);
            self.vectors.push(v.iter().map(|x| x * SHRINK).collect());
        }
    }

    pub fn finish(self) -> Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let n = self.vectors.len().max(1);
        let hnsw = Hnsw::<f32, DistDot>::new(16, n, 16, EF_CONSTRUCTION, DistDot {});
        let data: Vec<(&Vec<f32>, usize)> = self.vectors.iter().zip(0..).collect();
        hnsw.parallel_insert(&data);
        hnsw.file_dump(&self.dir, BASENAME)
            .map_err(|e| StoreError::VectorIndex(format!("{}: {e}", self.dir.display())))?;
        let meta_path = self.dir.join("vectors.json");
        std::fs::write(
            &meta_path,
            serde_json::to_vec(&self.meta).expect("serializes"),
        )
        .map_err(io(&meta_path))?;
        Ok(())
    }
}

/// A dense hit: article IRI and cosine similarity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VectorHit {
    pub iri: String,
    pub score: f32,
}

/// An opened HNSW index.
pub struct VectorIndex {
    hnsw: Hnsw<'static, f32, DistDot>,
    meta: VectorMeta,
}

impl VectorIndex {
    /// Opens a build's index. The HNSW loader must outlive the index it returns, so it
    /// is kept for the life of the process (one per opened build).
    pub fn open(dir: &Path) -> Result<VectorIndex> {
        let meta_path = dir.join("vectors.json");
        if !meta_path.exists() {
            return Err(StoreError::VectorIndex(format!(
                "{}: this build has no embeddings; rebuild without --no-embeddings/--structure-only to use dense or hybrid search",
                dir.display()
            )));
        }
        let meta: VectorMeta =
            serde_json::from_slice(&std::fs::read(&meta_path).map_err(io(&meta_path))?)
                .map_err(|e| StoreError::VectorIndex(format!("{}: {e}", meta_path.display())))?;
        let loader: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, BASENAME)));
        let hnsw = loader
            .load_hnsw::<f32, DistDot>()
            .map_err(|e| StoreError::VectorIndex(format!("{}: {e}", dir.display())))?;
        Ok(VectorIndex { hnsw, meta })
    }

    pub fn model_id(&self) -> &str {
        &self.meta.model_id
    }

    pub fn dim(&self) -> usize {
        self.meta.dim
    }

    pub fn vector_count(&self) -> usize {
        self.meta.owner.len()
    }

    /// The `k` articles nearest to `query` (normalized), by their best vector.
    pub fn search(&self, query: &[f32], k: usize, include_old: bool) -> Result<Vec<VectorHit>> {
        if query.len() != self.meta.dim {
            return Err(StoreError::VectorIndex(format!(
                "query of dimension {}, index of {}",
                query.len(),
                self.meta.dim
            )));
        }
        let latest_only =
            |id: &usize| include_old || self.meta.articles[self.meta.owner[*id] as usize].1;
        // A few articles have several vectors: ask for a few more, keep each article's best.
        let want = k + k / 4 + 8;
        let q: Vec<f32> = query.iter().map(|x| x * SHRINK).collect();
        let found = self
            .hnsw
            .search_filter(&q, want, want.max(64), Some(&latest_only));
        let mut best: HashMap<u32, f32> = HashMap::new();
        for n in found {
            let owner = self.meta.owner[n.d_id];
            let score = (1.0 - n.distance) / (SHRINK * SHRINK);
            let e = best.entry(owner).or_insert(f32::MIN);
            *e = e.max(score);
        }
        let mut hits: Vec<VectorHit> = best
            .into_iter()
            .map(|(o, score)| VectorHit {
                iri: self.meta.articles[o as usize].0.clone(),
                score,
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.iri.cmp(&b.iri)));
        hits.truncate(k);
        Ok(hits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    #[test]
    fn cache_survives_reopening_and_a_torn_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = EmbeddingCache::open(dir.path(), "m/1", 3).unwrap();
        assert!(c.is_empty());
        c.insert(vec![
            (EmbeddingCache::key("甲"), vec![1.0, 2.0, 3.0]),
            (EmbeddingCache::key("乙"), vec![4.0, 5.0, 6.0]),
        ])
        .unwrap();
        let file = dir.path().join("embeddings-m_1.bin");
        // A killed writer leaves half a record.
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        f.write_all(&[7u8; 20]).unwrap();
        drop(f);
        let mut c = EmbeddingCache::open(dir.path(), "m/1", 3).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            c.get(&EmbeddingCache::key("乙")),
            Some(&[4.0, 5.0, 6.0][..])
        );
        c.insert(vec![(EmbeddingCache::key("丙"), vec![0.0, 0.0, 1.0])])
            .unwrap();
        let c = EmbeddingCache::open(dir.path(), "m/1", 3).unwrap();
        assert_eq!(c.len(), 3);
        assert!(c.get(&EmbeddingCache::key("丁")).is_none());
    }

    #[test]
    fn index_round_trip_with_multi_vector_articles_and_old_versions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hnsw");
        let mut w = VectorIndexWriter::new(&path, "m", 3);
        w.add(
            "a",
            true,
            vec![unit(&[1.0, 0.0, 0.0]), unit(&[0.0, 1.0, 0.0])],
        );
        w.add("b", true, vec![unit(&[0.7, 0.7, 0.1])]);
        w.add("a-old", false, vec![unit(&[1.0, 0.01, 0.0])]);
        w.add("c", true, vec![unit(&[0.0, 0.0, 1.0])]);
        // The same vector twice (one text in two versions) must not upset the index.
        w.add("c-old", false, vec![unit(&[0.0, 0.0, 1.0])]);
        w.finish().unwrap();
        let idx = VectorIndex::open(&path).unwrap();
        assert_eq!(idx.vector_count(), 6);
        let hits = idx.search(&unit(&[0.0, 1.0, 0.0]), 2, false).unwrap();
        assert_eq!(hits[0].iri, "a", "an article is found by its second vector");
        assert!((hits[0].score - 1.0).abs() < 1e-5);
        assert_eq!(hits[1].iri, "b");
        let q = unit(&[1.0, 0.0, 0.0]);
        assert!(
            idx.search(&q, 4, false)
                .unwrap()
                .iter()
                .all(|h| h.iri != "a-old")
        );
        assert!(
            idx.search(&q, 4, true)
                .unwrap()
                .iter()
                .any(|h| h.iri == "a-old")
        );
        assert!(idx.search(&[1.0, 0.0], 1, false).is_err());
    }

    #[test]
    fn a_build_without_embeddings_says_how_to_get_them() {
        let dir = tempfile::tempdir().unwrap();
        let Err(e) = VectorIndex::open(dir.path()) else {
            panic!("opened")
        };
        assert!(e.to_string().contains("no embeddings"), "{e}");
    }
}
