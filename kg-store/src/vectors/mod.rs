//! Dense vectors: a store-wide embedding cache (so a rebuild never re-embeds an
//! unchanged text) and a per-build HNSW index of article vectors.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use hnsw_rs::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

mod exact;
use exact::{Approximate, QuantizedRows, Scanned, rescore};

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

    /// Keeps only the entries in `keep`: the file is rewritten beside the old one and
    /// renamed over it, so a crash leaves one or the other. Returns how many went.
    pub fn retain(&mut self, keep: &std::collections::HashSet<TextKey>) -> Result<usize> {
        let before = self.vectors.len();
        self.vectors.retain(|k, _| keep.contains(k));
        let removed = before - self.vectors.len();
        if removed == 0 {
            return Ok(0);
        }
        let tmp = self.path.with_extension("bin.tmp");
        let mut buf = Vec::with_capacity(self.vectors.len() * (36 + self.dim * 4));
        for (key, v) in &self.vectors {
            Self::encode(&mut buf, key, v);
        }
        let mut f = std::fs::File::create(&tmp).map_err(io(&tmp))?;
        f.write_all(&buf).map_err(io(&tmp))?;
        f.sync_all().map_err(io(&tmp))?;
        std::fs::rename(&tmp, &self.path).map_err(io(&self.path))?;
        Ok(removed)
    }

    fn encode(buf: &mut Vec<u8>, key: &TextKey, v: &[f32]) {
        buf.extend_from_slice(key);
        buf.extend_from_slice(&(v.len() as u32).to_le_bytes());
        for x in v {
            buf.extend_from_slice(&x.to_le_bytes());
        }
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
            Self::encode(&mut buf, key, v);
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
    /// For each vector, its article's position in `articles`, or [`RETIRED`] for a vector
    /// kept in the graph of an incrementally extended index whose text left the corpus.
    owner: Vec<u32>,
    /// For each vector, the embedding-cache key of its text (hex): what lets the next
    /// build reuse it, and `coal gc` keep its cache entry. Empty in older builds.
    #[serde(default)]
    keys: Vec<String>,
    /// For each vector, the number of the 款 whose passage it is (0: a vector of a whole
    /// article or of a group of paragraphs), so that the same index answers for articles
    /// and for 款 and a 款 vector is inserted once. Empty in builds made before this (their
    /// 款 vectors are in a second index).
    #[serde(default)]
    paragraph: Vec<u32>,
}

impl VectorMeta {
    fn read(dir: &Path) -> Result<VectorMeta> {
        let meta_path = dir.join("vectors.json");
        if !meta_path.exists() {
            return Err(StoreError::NoEmbeddings(dir.to_path_buf()));
        }
        let meta: VectorMeta =
            serde_json::from_slice(&std::fs::read(&meta_path).map_err(io(&meta_path))?)
                .map_err(|e| StoreError::VectorIndex(format!("{}: {e}", meta_path.display())))?;
        if !meta.paragraph.is_empty() && meta.paragraph.len() != meta.owner.len() {
            return Err(StoreError::VectorIndex(format!(
                "{}: `paragraph` has {} entries for {} vectors",
                meta_path.display(),
                meta.paragraph.len(),
                meta.owner.len()
            )));
        }
        Ok(meta)
    }

    fn write(&self, dir: &Path) -> Result<()> {
        let meta_path = dir.join("vectors.json");
        std::fs::write(&meta_path, serde_json::to_vec(self).expect("serializes"))
            .map_err(io(&meta_path))
    }
}

/// The owner of a vector no article of the build has any more.
const RETIRED: u32 = u32::MAX;

/// Past this share of retired vectors an index is rebuilt rather than extended: they
/// still cost search time and memory.
const MAX_RETIRED_SHARE: f64 = 0.2;

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

/// Below this many vectors they are inserted one by one: parallel insertion races on
/// a tiny graph can leave a point without the links that make it reachable.
const SERIAL_INSERT_BELOW: usize = 1_000;

fn insert_all(hnsw: &Hnsw<'_, f32, DistDot>, data: &[(&Vec<f32>, usize)]) {
    if data.len() < SERIAL_INSERT_BELOW {
        for (v, id) in data {
            hnsw.insert((v.as_slice(), *id));
        }
    } else {
        hnsw.parallel_insert(data);
    }
}

/// How a build's vector index was made.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct VectorIndexReport {
    /// Vectors carried over from the previous build's index (same text, same model).
    pub reused: usize,
    /// Vectors inserted by this build.
    pub inserted: usize,
    /// Vectors of the index no article uses any more (skipped by searches).
    pub retired: usize,
    /// The previous index was extended rather than rebuilt.
    pub extended: bool,
}

/// Collects article vectors for one build, then writes the HNSW index: a new one, or the
/// previous build's extended by the vectors it lacks.
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
                keys: Vec::new(),
                paragraph: Vec::new(),
            },
            vectors: Vec::new(),
        }
    }

    /// Adds an article with all of its vectors (normalized), each with its text's key.
    pub fn add(&mut self, iri: &str, latest: bool, vectors: Vec<(TextKey, Vec<f32>)>) {
        self.add_numbered(iri, latest, vectors.into_iter().map(|(k, v)| (0, k, v)));
    }

    /// Adds an article whose vectors are its 款' (numbered from 1, normalized): it is
    /// found by its nearest 款, and [`VectorIndex::search_paragraphs`] finds each 款.
    pub fn add_paragraphs(
        &mut self,
        iri: &str,
        latest: bool,
        paragraphs: Vec<(u32, TextKey, Vec<f32>)>,
    ) {
        assert!(paragraphs.iter().all(|p| p.0 > 0), "款 are numbered from 1");
        self.add_numbered(iri, latest, paragraphs.into_iter());
    }

    fn add_numbered(
        &mut self,
        iri: &str,
        latest: bool,
        vectors: impl Iterator<Item = (u32, TextKey, Vec<f32>)>,
    ) {
        let owner = self.meta.articles.len() as u32;
        self.meta.articles.push((iri.to_owned(), latest));
        for (paragraph, key, v) in vectors {
            self.meta.owner.push(owner);
            self.meta.keys.push(hex::encode(key));
            self.meta.paragraph.push(paragraph);
            self.vectors.push(v.iter().map(|x| x * SHRINK).collect());
        }
    }

    /// Writes the index. With `previous` (the index of the build this one replaces) every
    /// vector whose text it already holds is reused and only the others are inserted into
    /// a copy of its graph, unless the retired share would pass [`MAX_RETIRED_SHARE`] or
    /// the model differs; then the index is built anew.
    pub fn finish(self, previous: Option<&Path>) -> Result<VectorIndexReport> {
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        if let Some(prev) = previous
            && let Some(report) = self.try_extend(prev)?
        {
            return Ok(report);
        }
        let n = self.vectors.len().max(1);
        let hnsw = Hnsw::<f32, DistDot>::new(16, n, 16, EF_CONSTRUCTION, DistDot {});
        let data: Vec<(&Vec<f32>, usize)> = self.vectors.iter().zip(0..).collect();
        insert_all(&hnsw, &data);
        self.dump(&hnsw, &self.meta)?;
        Ok(VectorIndexReport {
            inserted: self.vectors.len(),
            ..Default::default()
        })
    }

    fn dump(&self, hnsw: &Hnsw<'_, f32, DistDot>, meta: &VectorMeta) -> Result<()> {
        hnsw.file_dump(&self.dir, BASENAME)
            .map_err(|e| StoreError::VectorIndex(format!("{}: {e}", self.dir.display())))?;
        meta.write(&self.dir)
    }

    /// The incremental path; `None` when the previous index cannot or should not be
    /// extended.
    fn try_extend(&self, prev_dir: &Path) -> Result<Option<VectorIndexReport>> {
        let Ok(prev) = VectorMeta::read(prev_dir) else {
            return Ok(None);
        };
        if prev.model_id != self.meta.model_id
            || prev.dim != self.meta.dim
            || prev.keys.len() != prev.owner.len()
        {
            return Ok(None);
        }
        // Vectors of the previous index by text; one text may have several (the same
        // article text in two versions). Retired ones count too: a text that comes back
        // (a law restored) gets its old vector again, identical for the same model.
        let mut by_key: HashMap<&str, Vec<usize>> = HashMap::new();
        for (id, key) in prev.keys.iter().enumerate().rev() {
            by_key.entry(key.as_str()).or_default().push(id);
        }
        let total_prev = prev.owner.len();
        let mut owner = vec![RETIRED; total_prev];
        let mut paragraph = vec![0; total_prev];
        let mut keys = prev.keys.clone();
        let mut fresh = Vec::new();
        for (i, key) in self.meta.keys.iter().enumerate() {
            match by_key.get_mut(key.as_str()).and_then(|ids| ids.pop()) {
                Some(id) => {
                    owner[id] = self.meta.owner[i];
                    paragraph[id] = self.meta.paragraph[i];
                }
                None => fresh.push(i),
            }
        }
        let total = total_prev + fresh.len();
        let retired = owner.iter().filter(|&&o| o == RETIRED).count();
        if retired as f64 > MAX_RETIRED_SHARE * total as f64 {
            return Ok(None);
        }
        let mut loader = HnswIo::new(prev_dir, BASENAME);
        let hnsw = loader
            .load_hnsw::<f32, DistDot>()
            .map_err(|e| StoreError::VectorIndex(format!("{}: {e}", prev_dir.display())))?;
        let data: Vec<(&Vec<f32>, usize)> = fresh
            .iter()
            .enumerate()
            .map(|(n, &i)| (&self.vectors[i], total_prev + n))
            .collect();
        insert_all(&hnsw, &data);
        for &i in &fresh {
            owner.push(self.meta.owner[i]);
            keys.push(self.meta.keys[i].clone());
            paragraph.push(self.meta.paragraph[i]);
        }
        let meta = VectorMeta {
            model_id: self.meta.model_id.clone(),
            dim: self.meta.dim,
            articles: self.meta.articles.clone(),
            owner,
            keys,
            paragraph,
        };
        self.dump(&hnsw, &meta)?;
        Ok(Some(VectorIndexReport {
            reused: self.meta.keys.len() - fresh.len(),
            inserted: fresh.len(),
            retired,
            extended: true,
        }))
    }
}

/// The keys of the texts a build's vector index uses, with its model.
pub struct IndexKeys {
    pub model_id: String,
    pub dim: usize,
    pub keys: Vec<TextKey>,
}

fn decode_keys<'k>(keys: impl Iterator<Item = &'k String>) -> Option<Vec<TextKey>> {
    keys.map(|k| hex::decode(k).ok()?.try_into().ok()).collect()
}

/// What the vector index in `dir` uses: `Ok(None)` for a build without one, an error for
/// an index that predates recorded keys (nothing can be pruned safely then).
pub fn index_keys(dir: &Path) -> Result<Option<IndexKeys>> {
    if !dir.join("vectors.json").exists() {
        return Ok(None);
    }
    let meta = VectorMeta::read(dir)?;
    let unknown = || StoreError::VectorIndex(format!("{}: no text keys recorded", dir.display()));
    if meta.keys.len() != meta.owner.len() {
        return Err(unknown());
    }
    let live = meta
        .keys
        .iter()
        .zip(&meta.owner)
        .filter(|(_, o)| **o != RETIRED)
        .map(|(k, _)| k);
    let keys = decode_keys(live).ok_or_else(unknown)?;
    Ok(Some(IndexKeys {
        model_id: meta.model_id,
        dim: meta.dim,
        keys,
    }))
}

const EXTRA_KEYS_FILE: &str = "extra-embedding-keys.json";

#[derive(Serialize, Deserialize)]
struct ExtraKeys {
    model_id: String,
    dim: usize,
    keys: Vec<String>,
}

pub(crate) fn write_extra_keys(build_dir: &Path, extra: &IndexKeys) -> Result<()> {
    let path = build_dir.join(EXTRA_KEYS_FILE);
    let extra = ExtraKeys {
        model_id: extra.model_id.clone(),
        dim: extra.dim,
        keys: extra.keys.iter().map(hex::encode).collect(),
    };
    std::fs::write(&path, serde_json::to_vec(&extra).expect("serializes")).map_err(io(&path))
}

/// Keys a build used outside its vector index (`Ok(None)`: none recorded).
pub(crate) fn extra_keys(build_dir: &Path) -> Result<Option<IndexKeys>> {
    let path = build_dir.join(EXTRA_KEYS_FILE);
    let Ok(bytes) = std::fs::read(&path) else {
        return Ok(None);
    };
    let bad = |e: String| StoreError::VectorIndex(format!("{}: {e}", path.display()));
    let extra: ExtraKeys = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
    let keys = decode_keys(extra.keys.iter()).ok_or_else(|| bad("bad key".into()))?;
    Ok(Some(IndexKeys {
        model_id: extra.model_id,
        dim: extra.dim,
        keys,
    }))
}

/// A dense hit: article IRI and cosine similarity.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VectorHit {
    pub iri: String,
    pub score: f32,
}

/// An opened vector index: searched exactly when small, through the HNSW graph when
/// large.
pub struct VectorIndex {
    search: Search,
    meta: VectorMeta,
    /// Some vector is a 款's (counted once at opening).
    has_paragraphs: bool,
    /// Shares of the vectors that an article search (current versions) and a 款 search
    /// let through: an HNSW search asks for that many more neighbours.
    current_share: f64,
    paragraph_share: f64,
}

enum Search {
    Hnsw(Hnsw<'static, f32, DistDot>),
    /// Every vector of the index in one row-major block, with the vector id of each row.
    /// Scanning the eval profile's ~24,000 current vectors of 384 dimensions through their
    /// byte codes, then rescoring in floats every row the codes' error bounds cannot rule
    /// out (~800 a search), takes ~1.1 ms for articles and 款 together (the floats took
    /// ~4–5 ms a scan). It is exact, and opening it reads the data file without
    /// rebuilding the HNSW graph (about 200 ms per index of the eval profile, most of
    /// `ask`'s start-up).
    Exact {
        ids: Vec<usize>,
        rows: Vec<f32>,
        /// The same rows quantized to bytes, scanned first (see [`QuantizedRows`]).
        codes: QuantizedRows,
        /// The rows of current versions' vectors, which most searches scan.
        current_rows: Vec<usize>,
        /// Per row, whether it is a 款's vector.
        paragraph_rows: Vec<bool>,
    },
}

/// Indexes with fewer vectors than this are searched exactly.
const EXACT_BELOW: usize = 40_000;

impl VectorIndex {
    /// Opens a build's index. An HNSW loader must outlive the index it returns, so it is
    /// kept for the life of the process (one per opened build).
    pub fn open(dir: &Path) -> Result<VectorIndex> {
        Self::open_exact_below(dir, EXACT_BELOW)
    }

    fn open_exact_below(dir: &Path, exact_below: usize) -> Result<VectorIndex> {
        let meta = VectorMeta::read(dir)?;
        let failed = |e: String| StoreError::VectorIndex(format!("{}: {e}", dir.display()));
        let search = if meta.owner.len() < exact_below {
            let map =
                hnsw_rs::datamap::DataMap::from_hnswdump::<f32>(dir, BASENAME).map_err(failed)?;
            let mut ids: Vec<usize> = map.get_dataid_iter().copied().collect();
            ids.sort_unstable();
            let mut rows = Vec::with_capacity(ids.len() * meta.dim);
            for id in &ids {
                match map.get_data::<f32>(id) {
                    Some(v) if v.len() == meta.dim => rows.extend_from_slice(v),
                    _ => {
                        return Err(failed(format!(
                            "vector {id} is missing or not of dimension {}",
                            meta.dim
                        )));
                    }
                }
            }
            let codes = QuantizedRows::of(&rows, meta.dim);
            let current_rows = (0..ids.len())
                .filter(|&row| meta.is_current(ids[row]))
                .collect();
            let paragraph_rows = ids.iter().map(|&id| meta.paragraph[id] > 0).collect();
            Search::Exact {
                ids,
                rows,
                codes,
                current_rows,
                paragraph_rows,
            }
        } else {
            let loader: &'static mut HnswIo = Box::leak(Box::new(HnswIo::new(dir, BASENAME)));
            let hnsw = loader
                .load_hnsw::<f32, DistDot>()
                .map_err(|e| failed(e.to_string()))?;
            Search::Hnsw(hnsw)
        };
        let has_paragraphs = meta.paragraph.iter().any(|&p| p > 0);
        let share = |pass: &dyn Fn(usize) -> bool| {
            let n = (0..meta.owner.len()).filter(|&id| pass(id)).count();
            n as f64 / meta.owner.len().max(1) as f64
        };
        let current_share = share(&|id| meta.is_current(id));
        let paragraph_share = share(&|id| meta.is_current(id) && meta.paragraph[id] > 0);
        Ok(VectorIndex {
            search,
            meta,
            has_paragraphs,
            current_share,
            paragraph_share,
        })
    }

    pub fn model_id(&self) -> &str {
        &self.meta.model_id
    }

    pub fn dim(&self) -> usize {
        self.meta.dim
    }

    /// Vectors that belong to an article of the build (retired ones excluded).
    pub fn vector_count(&self) -> usize {
        self.meta.owner.iter().filter(|&&o| o != RETIRED).count()
    }

    /// Does the index hold 款 vectors (builds since 款 vectors share the article index)?
    pub fn has_paragraphs(&self) -> bool {
        self.has_paragraphs
    }

    /// The `k` articles nearest to `query` (normalized), by their best vector.
    pub fn search(&self, query: &[f32], k: usize, include_old: bool) -> Result<Vec<VectorHit>> {
        let wanted = |id: usize| {
            let owner = self.meta.owner[id];
            owner != RETIRED && (include_old || self.meta.articles[owner as usize].1)
        };
        // A few articles have several vectors: ask for a few more, keep each article's best.
        let found = self.nearest(query, candidates(k), &wanted, self.current_share)?;
        Ok(self.article_hits(found, k))
    }

    /// The `k` 款 of current articles nearest to `query` (normalized), each named by its
    /// IRI (`…/par_N`); empty when the index holds no 款 vectors.
    pub fn search_paragraphs(&self, query: &[f32], k: usize) -> Result<Vec<VectorHit>> {
        if !self.has_paragraphs {
            return Ok(Vec::new());
        }
        let wanted = |id: usize| self.meta.is_current(id) && self.meta.paragraph[id] > 0;
        // As many candidates as an article search asks for (the same HNSW effort).
        let found = self.nearest(query, candidates(k), &wanted, self.paragraph_share)?;
        Ok(self.paragraph_hits(found, k))
    }

    /// [`VectorIndex::search`] of current versions and [`VectorIndex::search_paragraphs`]
    /// at once: the same results, from one scan of the index when it is searched exactly
    /// (the 款 are among the current vectors an article search reads anyway).
    pub fn search_with_paragraphs(
        &self,
        query: &[f32],
        k: usize,
        k_paragraphs: usize,
    ) -> Result<(Vec<VectorHit>, Vec<VectorHit>)> {
        let Search::Exact {
            ids,
            rows,
            codes,
            current_rows,
            paragraph_rows,
        } = &self.search
        else {
            return Ok((
                self.search(query, k, false)?,
                self.search_paragraphs(query, k_paragraphs)?,
            ));
        };
        self.check_dimension(query)?;
        let q: Vec<f32> = query.iter().map(|x| x * SHRINK).collect();
        let Scanned {
            approximate,
            all,
            marked: of_paragraphs,
        } = codes.scan(
            &q,
            current_rows,
            self.has_paragraphs.then_some(paragraph_rows.as_slice()),
        );
        let is_paragraph = |a: &Approximate| paragraph_rows[a.row];
        let (want, want_paragraphs) = (candidates(k), candidates(k_paragraphs));
        let paragraphs = match self.has_paragraphs {
            true => rescore(
                &approximate,
                is_paragraph,
                &of_paragraphs,
                want_paragraphs,
                ids,
                rows,
                &q,
            ),
            false => Vec::new(),
        };
        let articles = rescore(&approximate, |_| true, &all, want, ids, rows, &q);
        Ok((
            self.article_hits(cosines(articles), k),
            self.paragraph_hits(cosines(paragraphs), k_paragraphs),
        ))
    }

    /// Each article's best vector among `found` (vector id, cosine): its `k` best articles.
    fn article_hits(&self, found: Vec<(usize, f32)>, k: usize) -> Vec<VectorHit> {
        let mut best: HashMap<u32, f32> = HashMap::new();
        for (id, score) in found {
            let e = best.entry(self.meta.owner[id]).or_insert(f32::MIN);
            *e = e.max(score);
        }
        let hits = best.into_iter().map(|(o, score)| VectorHit {
            iri: self.meta.articles[o as usize].0.clone(),
            score,
        });
        best_first(hits, k)
    }

    /// `found`'s (vector id, cosine) 款 vectors named by their IRIs, the `k` best.
    fn paragraph_hits(&self, found: Vec<(usize, f32)>, k: usize) -> Vec<VectorHit> {
        let hits = found.into_iter().map(|(id, score)| VectorHit {
            iri: coal_ontology::iri::paragraph(
                &self.meta.articles[self.meta.owner[id] as usize].0,
                self.meta.paragraph[id],
            ),
            score,
        });
        best_first(hits, k)
    }

    fn check_dimension(&self, query: &[f32]) -> Result<()> {
        if query.len() != self.meta.dim {
            return Err(StoreError::VectorIndex(format!(
                "query of dimension {}, index of {}",
                query.len(),
                self.meta.dim
            )));
        }
        Ok(())
    }

    /// The `want` vectors nearest to `query` among those `wanted` lets through (about
    /// `share` of them, or more): (vector id, cosine).
    fn nearest(
        &self,
        query: &[f32],
        want: usize,
        wanted: &dyn Fn(usize) -> bool,
        share: f64,
    ) -> Result<Vec<(usize, f32)>> {
        self.check_dimension(query)?;
        let q: Vec<f32> = query.iter().map(|x| x * SHRINK).collect();
        // (vector id, 1 − dot of the scaled vectors)
        let found: Vec<(usize, f32)> = match &self.search {
            Search::Exact {
                ids, rows, codes, ..
            } => {
                let wanted: Vec<usize> = (0..ids.len()).filter(|&row| wanted(ids[row])).collect();
                let scanned = codes.scan(&q, &wanted, None);
                rescore(
                    &scanned.approximate,
                    |_| true,
                    &scanned.all,
                    want,
                    ids,
                    rows,
                    &q,
                )
            }
            Search::Hnsw(hnsw) => unfiltered_then_filtered(hnsw, &q, want, wanted, share),
        };
        Ok(cosines(found))
    }
}

/// (vector id, 1 − dot of the scaled vectors) as (vector id, cosine).
fn cosines(found: Vec<(usize, f32)>) -> Vec<(usize, f32)> {
    found
        .into_iter()
        .map(|(id, distance)| (id, (1.0 - distance) / (SHRINK * SHRINK)))
        .collect()
}

/// The `want` nearest vectors that `wanted` lets through: (vector id, distance).
///
/// hnsw_rs's own filtered search never stops early (with a filter its greedy layer search
/// runs until the candidate heap is empty), so the graph is searched without one, for
/// `want / share` neighbours and a tenth more, and the filter applied to what comes back;
/// the search is widened, doubling, while too few pass. Most vectors pass (old versions
/// are ~4% of the whole corpus, 款 ~2/3 of its vectors).
fn unfiltered_then_filtered(
    hnsw: &Hnsw<'static, f32, DistDot>,
    q: &[f32],
    want: usize,
    wanted: &dyn Fn(usize) -> bool,
    share: f64,
) -> Vec<(usize, f32)> {
    let total = hnsw.get_nb_point();
    let mut ask = (want as f64 * 1.1 / share.max(0.01)).ceil() as usize;
    loop {
        let found = hnsw.search(q, ask, ask.max(64));
        let exhausted = found.len() < ask || ask >= total;
        let mut passed: Vec<(usize, f32)> = found
            .into_iter()
            .filter(|n| wanted(n.d_id))
            .map(|n| (n.d_id, n.distance))
            .collect();
        if passed.len() >= want || exhausted {
            passed.truncate(want);
            return passed;
        }
        ask *= 2;
    }
}

impl VectorMeta {
    /// Does vector `id` belong to the current version of an article of the build?
    fn is_current(&self, id: usize) -> bool {
        let owner = self.owner[id];
        owner != RETIRED && self.articles[owner as usize].1
    }
}

/// How many vectors a search for `k` hits asks the index for: a few more than `k`.
fn candidates(k: usize) -> usize {
    k + k / 4 + 8
}

/// The `k` best hits, ties by IRI.
fn best_first(hits: impl Iterator<Item = VectorHit>, k: usize) -> Vec<VectorHit> {
    let mut hits: Vec<VectorHit> = hits.collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.iri.cmp(&b.iri)));
    hits.truncate(k);
    hits
}

#[cfg(test)]
mod tests {
    use super::exact::*;
    use super::*;

    /// An exactly searched index's ids, rows, byte codes and rows of current vectors.
    fn exact_parts(idx: &VectorIndex) -> (&[usize], &[f32], &QuantizedRows, &[usize]) {
        match &idx.search {
            Search::Exact {
                ids,
                rows,
                codes,
                current_rows,
                ..
            } => (ids, rows, codes, current_rows),
            Search::Hnsw(_) => panic!("searched through the HNSW graph, not exactly"),
        }
    }

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
            vec![kv("a1", &[1.0, 0.0, 0.0]), kv("a2", &[0.0, 1.0, 0.0])],
        );
        w.add("b", true, vec![kv("b", &[0.7, 0.7, 0.1])]);
        w.add("a-old", false, vec![kv("a-old", &[1.0, 0.01, 0.0])]);
        w.add("c", true, vec![kv("c", &[0.0, 0.0, 1.0])]);
        // The same vector twice (one text in two versions) must not upset the index.
        w.add("c-old", false, vec![kv("c", &[0.0, 0.0, 1.0])]);
        assert!(!w.finish(None).unwrap().extended);
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

    fn kv(text: &str, v: &[f32]) -> (TextKey, Vec<f32>) {
        (EmbeddingCache::key(text), unit(v))
    }

    /// `n` unit vectors of 16 dimensions from xorshift64: fixed, dependency-free
    /// pseudo-random numbers in [-1, 1).
    fn random_units(mut state: u64, n: usize) -> Vec<Vec<f32>> {
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 40) as f32 / (1u64 << 23) as f32 - 1.0
        };
        (0..n)
            .map(|_| unit(&(0..16).map(|_| next()).collect::<Vec<f32>>()))
            .collect()
    }

    fn iris(hits: Vec<VectorHit>) -> Vec<String> {
        hits.into_iter().map(|h| h.iri).collect()
    }

    #[test]
    fn an_index_is_extended_with_new_texts_and_retires_the_gone_ones() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("1"), dir.path().join("2"));
        let mut w = VectorIndexWriter::new(&first, "m", 3);
        w.add("a", true, vec![kv("a", &[1.0, 0.0, 0.0])]);
        w.add("b", true, vec![kv("b", &[0.0, 1.0, 0.0])]);
        w.add("c", true, vec![kv("c", &[0.0, 0.0, 1.0])]);
        w.add("d", true, vec![kv("d", &[0.5, 0.5, 0.0])]);
        w.add("e", true, vec![kv("e", &[0.0, 0.5, 0.5])]);
        w.finish(None).unwrap();
        // a and c, d, e unchanged (c moves to another IRI), b's text changed, f is new.
        let mut w = VectorIndexWriter::new(&second, "m", 3);
        w.add("a", true, vec![kv("a", &[1.0, 0.0, 0.0])]);
        w.add("b2", true, vec![kv("b2", &[0.1, 1.0, 0.0])]);
        w.add("c-moved", false, vec![kv("c", &[0.0, 0.0, 1.0])]);
        w.add("d", true, vec![kv("d", &[0.5, 0.5, 0.0])]);
        w.add("e", true, vec![kv("e", &[0.0, 0.5, 0.5])]);
        w.add("f", true, vec![kv("f", &[0.5, 0.0, 0.5])]);
        let report = w.finish(Some(&first)).unwrap();
        assert_eq!(
            report,
            VectorIndexReport {
                reused: 4,
                inserted: 2,
                retired: 1,
                extended: true
            }
        );
        let idx = VectorIndex::open(&second).unwrap();
        assert_eq!(idx.vector_count(), 6);
        let near_b = iris(idx.search(&unit(&[0.0, 1.0, 0.0]), 1, false).unwrap());
        assert_eq!(near_b, ["b2"], "the retired vector of b is never returned");
        let near_f = iris(idx.search(&unit(&[0.5, 0.0, 0.5]), 1, false).unwrap());
        assert_eq!(near_f, ["f"]);
        // A reused vector takes its new article's IRI and latest flag.
        let near_c = iris(idx.search(&unit(&[0.0, 0.0, 1.0]), 1, true).unwrap());
        assert_eq!(near_c, ["c-moved"]);
        assert!(
            !iris(idx.search(&unit(&[0.0, 0.0, 1.0]), 6, false).unwrap())
                .contains(&"c-moved".to_owned())
        );
        // The first build's index still answers as before.
        let old = VectorIndex::open(&first).unwrap();
        assert_eq!(
            iris(old.search(&unit(&[0.0, 1.0, 0.0]), 1, false).unwrap()),
            ["b"]
        );
        // Keys in use: the retired text is not among them; the cache can drop it.
        let keys = index_keys(&second).unwrap().unwrap();
        assert_eq!(keys.keys.len(), 6);
        assert!(!keys.keys.contains(&EmbeddingCache::key("b")));
        let mut cache = EmbeddingCache::open(dir.path(), "m", 3).unwrap();
        cache
            .insert(vec![kv("a", &[1.0, 0.0, 0.0]), kv("b", &[0.0, 1.0, 0.0])])
            .unwrap();
        let keep = keys.keys.into_iter().collect();
        assert_eq!(cache.retain(&keep).unwrap(), 1);
        let cache = EmbeddingCache::open(dir.path(), "m", 3).unwrap();
        assert_eq!(cache.len(), 1);
        assert!(cache.get(&EmbeddingCache::key("a")).is_some());
    }

    #[test]
    fn paragraph_vectors_answer_for_their_article_and_for_each_paragraph() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("1"), dir.path().join("2"));
        // Unchanged articles, so that the rebuild extends the index.
        let others = |w: &mut VectorIndexWriter| {
            for i in 0..8 {
                let name = format!("o{i}");
                w.add(&name, true, vec![kv(&name, &[1.0, i as f32 * 0.1, 0.0])]);
            }
        };
        let mut w = VectorIndexWriter::new(&first, "m", 3);
        others(&mut w);
        let (b1, b2) = (kv("b1", &[0.0, 1.0, 0.0]), kv("b2", &[0.0, 0.0, 1.0]));
        w.add_paragraphs(
            "b",
            true,
            vec![(1, b1.0, b1.1.clone()), (2, b2.0, b2.1.clone())],
        );
        let old = kv("b-old", &[0.0, 0.1, 1.0]);
        w.add_paragraphs("b-old", false, vec![(1, old.0, old.1)]);
        w.finish(None).unwrap();
        let idx = VectorIndex::open(&first).unwrap();
        assert!(idx.has_paragraphs());
        let q = unit(&[0.0, 0.05, 1.0]);
        assert_eq!(iris(idx.search(&q, 1, false).unwrap()), ["b"]);
        // 款 of current articles only, each by its own IRI; whole-article vectors never.
        assert_eq!(
            iris(idx.search_paragraphs(&q, 5).unwrap()),
            ["b/par_2", "b/par_1"]
        );
        // A rebuild where b lost its first 款: the reused vector takes its new number.
        let mut w = VectorIndexWriter::new(&second, "m", 3);
        others(&mut w);
        let c = kv("c1", &[0.7, 0.7, 0.0]);
        w.add_paragraphs("b", true, vec![(1, b2.0, b2.1), (2, c.0, c.1)]);
        assert!(w.finish(Some(&first)).unwrap().extended);
        let idx = VectorIndex::open(&second).unwrap();
        assert_eq!(
            iris(idx.search_paragraphs(&q, 5).unwrap()),
            ["b/par_1", "b/par_2"]
        );
        // An index of whole articles has no 款 to give.
        let third = dir.path().join("3");
        let mut w = VectorIndexWriter::new(&third, "m", 3);
        w.add("a", true, vec![kv("a", &[1.0, 0.0, 0.0])]);
        w.finish(None).unwrap();
        let idx = VectorIndex::open(&third).unwrap();
        assert!(!idx.has_paragraphs());
        assert!(idx.search_paragraphs(&q, 5).unwrap().is_empty());
    }

    #[test]
    fn a_large_index_is_searched_through_the_hnsw_graph() {
        // Past the exact threshold the HNSW graph answers; each stored vector finds itself.
        let dir = tempfile::tempdir().unwrap();
        let n = 1_200;
        let vectors = random_units(0x9E37_79B9_7F4A_7C15, n);
        let mut w = VectorIndexWriter::new(dir.path(), "m", 16);
        for (i, v) in vectors.iter().enumerate() {
            w.add(
                &format!("a{i}"),
                true,
                vec![(EmbeddingCache::key(&i.to_string()), v.clone())],
            );
        }
        w.finish(None).unwrap();
        let idx = VectorIndex::open_exact_below(dir.path(), 1_000).unwrap();
        assert!(matches!(idx.search, Search::Hnsw(_)));
        // The same index scanned exactly finds every vector.
        let exact = VectorIndex::open(dir.path()).unwrap();
        assert!(matches!(exact.search, Search::Exact { .. }));
        assert!(
            (0..n)
                .step_by(13)
                .all(|i| exact.search(&vectors[i], 1, false).unwrap()[0].iri == format!("a{i}"))
        );
        let found = (0..n)
            .step_by(37)
            .filter(|&i| idx.search(&vectors[i], 1, false).unwrap()[0].iri == format!("a{i}"))
            .count();
        let asked = n.div_ceil(37);
        assert!(found * 100 >= asked * 95, "{found}/{asked}");
    }

    #[test]
    fn near_ties_past_the_pool_are_rescored_so_the_scan_stays_exact() {
        // 9,000 vectors of 48 dimensions (the AVX2 loop and its tail; two threads) that
        // differ from one direction by a thousandth: the codes' errors scramble their
        // order, so the float top 40 reaches past the codes' top 80, and the error bounds
        // must bring the rest in.
        let dir = tempfile::tempdir().unwrap();
        let (n, dim) = (9_000, 48);
        let base: Vec<f32> = random_units(0x5DEE_CE66_D1CE_4E5B, 3)
            .concat()
            .into_iter()
            .take(dim)
            .collect();
        let noise = random_units(0x2545_F491_4F6C_DD1D, n * 3);
        let vectors: Vec<Vec<f32>> = (0..n)
            .map(|i| {
                let wiggle = [&noise[3 * i][..], &noise[3 * i + 1], &noise[3 * i + 2]].concat();
                unit(
                    &base
                        .iter()
                        .zip(&wiggle)
                        .map(|(b, w)| b + 0.001 * w)
                        .collect::<Vec<f32>>(),
                )
            })
            .collect();
        let mut w = VectorIndexWriter::new(dir.path(), "m", dim);
        for (i, v) in vectors.iter().enumerate() {
            let key = EmbeddingCache::key(&i.to_string());
            w.add(&format!("a{i}"), true, vec![(key, v.clone())]);
        }
        w.finish(None).unwrap();
        let idx = VectorIndex::open(dir.path()).unwrap();
        let (ids, rows, codes, current_rows) = exact_parts(&idx);
        let q: Vec<f32> = {
            let wiggle = [&noise[0][..], &noise[5], &noise[7]].concat();
            unit(
                &base
                    .iter()
                    .zip(&wiggle)
                    .map(|(b, w)| b + 0.002 * w)
                    .collect::<Vec<f32>>(),
            )
        };
        let want = 40;
        let scanned = codes.scan(&q, current_rows, None);
        let approximate = &scanned.approximate;
        let mut by_code: Vec<(f32, usize)> =
            approximate.iter().map(|a| (a.dot, ids[a.row])).collect();
        by_code.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        // A pool of the codes' best twice as large as asked for would miss some.
        let pool: std::collections::HashSet<usize> =
            by_code.iter().take(2 * want).map(|x| x.1).collect();
        let mut exact: Vec<(f32, usize)> = (0..ids.len())
            .map(|row| (1.0 - dot(&rows[row * dim..(row + 1) * dim], &q), ids[row]))
            .collect();
        exact.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let exact: Vec<usize> = exact.into_iter().take(want).map(|x| x.1).collect();
        assert!(
            exact.iter().any(|id| !pool.contains(id)),
            "the data must put some of the float top {want} past the codes' top {}",
            2 * want
        );
        let got: Vec<usize> = rescore(approximate, |_| true, &scanned.all, want, ids, rows, &q)
            .into_iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(got, exact);
    }

    #[test]
    fn the_byte_code_scan_returns_the_exact_ranking_of_the_floats() {
        // 3,000 articles, one in three an old version: for 60 queries the scan through
        // byte codes (then rescored) gives the same top 40 as every float dot product.
        let dir = tempfile::tempdir().unwrap();
        let n = 3_000;
        let vectors = random_units(0x0123_4567_89AB_CDEF, n);
        let paragraphs = random_units(0x0F1E_2D3C_4B5A_6978, n);
        let mut w = VectorIndexWriter::new(dir.path(), "m", 16);
        for (i, v) in vectors.iter().enumerate() {
            // Every fifth article is embedded by its two 款, as a build does articles of
            // several 款.
            if i % 5 == 0 {
                let par = |p: usize| {
                    let key = EmbeddingCache::key(&format!("{i}/{p}"));
                    (p as u32, key, paragraphs[(i + p) % n].clone())
                };
                w.add_paragraphs(&format!("a{i}"), i % 3 != 0, vec![par(1), par(2)]);
            } else {
                let key = EmbeddingCache::key(&i.to_string());
                w.add(&format!("a{i}"), i % 3 != 0, vec![(key, v.clone())]);
            }
        }
        w.finish(None).unwrap();
        let idx = VectorIndex::open(dir.path()).unwrap();
        assert!(matches!(idx.search, Search::Exact { .. }));
        for q in random_units(0xFEDC_BA98_7654_3210, 60) {
            let cos = |v: &[f32]| -> f32 { v.iter().zip(&q).map(|(a, b)| a * b).sum() };
            // An article embedded by its 款 scores its best 款.
            let mut expected: Vec<(f32, String)> = (0..n)
                .filter(|i| i % 3 != 0)
                .map(|i| {
                    let best = match i % 5 {
                        0 => cos(&paragraphs[(i + 1) % n]).max(cos(&paragraphs[(i + 2) % n])),
                        _ => cos(&vectors[i]),
                    };
                    (best, format!("a{i}"))
                })
                .collect();
            expected.sort_by(|a, b| b.0.total_cmp(&a.0));
            let expected: Vec<String> = expected.into_iter().take(40).map(|x| x.1).collect();
            let articles = idx.search(&q, 40, false).unwrap();
            assert_eq!(iris(articles.clone()), expected);
            // One scan for articles and 款 gives what the two searches give.
            let (both_articles, both_paragraphs) = idx.search_with_paragraphs(&q, 40, 25).unwrap();
            assert_eq!(both_articles, articles);
            // At the level of vectors: the nearest 40 current ones, exactly.
            let (ids, rows, codes, current_rows) = exact_parts(&idx);
            let current = |id: usize| idx.meta.is_current(id);
            let got: Vec<usize> = {
                let scanned = codes.scan(&q, current_rows, None);
                rescore(
                    &scanned.approximate,
                    |_| true,
                    &scanned.all,
                    40,
                    ids,
                    rows,
                    &q,
                )
            }
            .into_iter()
            .map(|x| x.0)
            .collect();
            let mut exact: Vec<(f32, usize)> = (0..ids.len())
                .filter(|&row| current(ids[row]))
                .map(|row| (dot(&rows[row * 16..(row + 1) * 16], &q), ids[row]))
                .collect();
            exact.sort_by(|a, b| b.0.total_cmp(&a.0));
            let exact: Vec<usize> = exact.into_iter().take(40).map(|x| x.1).collect();
            assert_eq!(got, exact);
            let paragraphs_alone = idx.search_paragraphs(&q, 25).unwrap();
            assert_eq!(paragraphs_alone.len(), 25);
            assert_eq!(both_paragraphs, paragraphs_alone);
        }
        // The byte dot products, tail included, are the integers' sums.
        let bytes = |m: i32, c: i32| -> Vec<i8> {
            (0..389).map(|i| ((i * m + c) % 255 - 127) as i8).collect()
        };
        let (a, high, low) = (bytes(37, 0), bytes(91, 7), bytes(53, 11));
        let sum = |b: &[i8]| -> i32 { a.iter().zip(b).map(|(&x, &y)| x as i32 * y as i32).sum() };
        let byte_query = QuantizedQuery {
            sums: byte_sums(&high, &low),
            high: high.clone(),
            low: low.clone(),
            scale: 1.0,
            norm: 0.0,
            residual: 0.0,
        };
        let both = (sum(&high), sum(&low));
        assert_eq!(dot_i8_scalar(&a, &byte_query), both);
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2.
                assert_eq!(unsafe { dot_i8_avx2(&a, &byte_query) }, both);
            }
            if has_vnni() {
                // SAFETY: the CPU has AVX-512 VNNI.
                assert_eq!(unsafe { dot_i8_vnni(&a, &byte_query) }, both);
                // Bytes at both ends of the range, where a shift could overflow.
                let ends: Vec<i8> = (0..389)
                    .map(|i| if i % 3 == 0 { -127 } else { 127 })
                    .collect();
                let end_query = QuantizedQuery {
                    sums: byte_sums(&ends, &high),
                    high: ends.clone(),
                    low: high.clone(),
                    ..byte_query
                };
                assert_eq!(
                    unsafe { dot_i8_vnni(&ends, &end_query) },
                    dot_i8_scalar(&ends, &end_query)
                );
            }
        }
        // The codes' approximate dot products stay within their error bounds of the
        // floats', and those within a hundredth.
        let rows: Vec<f32> = vectors.concat();
        let codes = QuantizedRows::of(&rows, 16);
        let q = QuantizedQuery::of(&vectors[0]);
        for (row, v) in vectors.iter().enumerate() {
            let exact: f32 = v.iter().zip(&vectors[0]).map(|(a, b)| a * b).sum();
            assert!((codes.dot(row, &q) - exact).abs() < 0.01, "row {row}");
        }
        let all: Vec<usize> = (0..vectors.len()).collect();
        // Every other row marked: the marked rows' lower bounds are counted apart.
        let marked: Vec<bool> = (0..vectors.len()).map(|i| i % 2 == 0).collect();
        let scanned = codes.scan(&vectors[0], &all, Some(&marked));
        let total = |b: &LowerBounds| b.counts.iter().map(|&c| c as usize).sum::<usize>();
        assert_eq!(total(&scanned.all), vectors.len());
        assert_eq!(total(&scanned.marked), vectors.len().div_ceil(2));
        let mut lower: Vec<f32> = scanned
            .approximate
            .iter()
            .map(|a| a.dot - a.error)
            .collect();
        lower.sort_by(|a, b| b.total_cmp(a));
        for want in [1, 40, 1_000] {
            let floor = scanned.all.floor(want);
            assert!(
                floor <= lower[want - 1],
                "{floor} above the {want}th {}",
                lower[want - 1]
            );
            assert!(floor > lower[want - 1] - 0.002, "{floor}: too far below");
        }
        assert_eq!(scanned.all.floor(vectors.len() + 1), f32::NEG_INFINITY);
        for a in scanned.approximate {
            let exact: f32 = dot(&vectors[a.row], &vectors[0]);
            assert!(
                (a.dot - exact).abs() <= a.error,
                "row {}: {a:?} {exact}",
                a.row
            );
            assert!(a.error < 0.01, "{a:?}");
        }
    }

    #[test]
    fn an_hnsw_search_widens_until_enough_vectors_pass_its_filter() {
        // Three articles in four are old versions: a current-only search through the HNSW
        // graph still returns k current articles, nearly the exact scan's.
        let dir = tempfile::tempdir().unwrap();
        let n = 1_600;
        let vectors = random_units(0x2545_F491_4F6C_DD1D, n);
        let mut w = VectorIndexWriter::new(dir.path(), "m", 16);
        for (i, v) in vectors.iter().enumerate() {
            let key = EmbeddingCache::key(&i.to_string());
            w.add(
                &format!("a{i}"),
                i.is_multiple_of(4),
                vec![(key, v.clone())],
            );
        }
        w.finish(None).unwrap();
        let idx = VectorIndex::open_exact_below(dir.path(), 1_000).unwrap();
        let exact = VectorIndex::open(dir.path()).unwrap();
        assert!((idx.current_share - 0.25).abs() < 1e-9);
        let (mut same, mut asked) = (0, 0);
        for q in vectors.iter().skip(1).step_by(41) {
            let got = iris(idx.search(q, 10, false).unwrap());
            assert_eq!(got.len(), 10);
            assert!(
                got.iter()
                    .all(|a| a[1..].parse::<usize>().unwrap().is_multiple_of(4))
            );
            let truth = iris(exact.search(q, 10, false).unwrap());
            same += got.iter().filter(|a| truth.contains(a)).count();
            asked += 10;
        }
        assert!(same * 100 >= asked * 90, "{same}/{asked}");
        // Told that every vector passes, the search doubles until a quarter of them gives
        // the 30 asked for.
        let Search::Hnsw(hnsw) = &idx.search else {
            panic!("not searched through the graph")
        };
        let current = |id: usize| id.is_multiple_of(4);
        let q: Vec<f32> = vectors[7].iter().map(|x| x * SHRINK).collect();
        let found = unfiltered_then_filtered(hnsw, &q, 30, &current, 1.0);
        assert_eq!(found.len(), 30);
        assert!(found.iter().all(|(id, _)| current(*id)));
        assert!(found.windows(2).all(|w| w[0].1 <= w[1].1));
    }

    #[test]
    fn an_index_with_too_much_gone_is_built_anew() {
        let dir = tempfile::tempdir().unwrap();
        let (first, second) = (dir.path().join("1"), dir.path().join("2"));
        let mut w = VectorIndexWriter::new(&first, "m", 3);
        w.add("a", true, vec![kv("a", &[1.0, 0.0, 0.0])]);
        w.add("b", true, vec![kv("b", &[0.0, 1.0, 0.0])]);
        w.finish(None).unwrap();
        let mut w = VectorIndexWriter::new(&second, "m", 3);
        w.add("a", true, vec![kv("a", &[1.0, 0.0, 0.0])]);
        w.add("c", true, vec![kv("c", &[0.0, 0.0, 1.0])]);
        let report = w.finish(Some(&first)).unwrap();
        assert!(!report.extended, "{report:?}");
        assert_eq!(VectorIndex::open(&second).unwrap().vector_count(), 2);
        // Another model: never mixed into the old index.
        let third = dir.path().join("3");
        let mut w = VectorIndexWriter::new(&third, "other", 3);
        w.add("a", true, vec![kv("a", &[1.0, 0.0, 0.0])]);
        assert!(!w.finish(Some(&second)).unwrap().extended);
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
