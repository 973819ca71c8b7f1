//! The store: one directory with an oxigraph RDF store per build, a metadata database
//! (sea-orm) and an atomically replaced manifest that says which build readers see.
//!
//! Architecture invariant: kg-store knows the ontology's IRIs but nothing of statute
//! parsing or retrieval; it stores and serves what a build hands it.

mod bigrams;
pub mod builds;
mod error;
mod graph;
mod layout;
pub(crate) mod meta;
pub mod protocol;
pub mod publish;
mod remote;
mod rows;
pub mod statute_graph;
mod text_index;
mod vectors;

use sea_orm::{ActiveValue::Set, DatabaseConnection, EntityTrait};

pub use error::{Result, StoreError};
pub use graph::{GraphBackend, LocalGraph, ResultFormat, SparqlOutput, is_update, named_graph};
pub use layout::{Manifest, StoreDir, now_rfc3339};
pub use oxigraph;
pub use remote::RemoteGraph;
pub use rows::{ArticleRow, LawRow, LawVersionRow, Metadata};
pub use text_index::{FieldWeights, IndexedArticle, LawArticles, TextIndex, TextIndexWriter};
pub use vectors::{
    EmbeddingCache, IndexKeys, TextKey, VectorHit, VectorIndex, VectorIndexReport,
    VectorIndexWriter, index_keys,
};

/// A committed build, opened for reading (or, with `writable`, for SPARQL UPDATE).
pub struct Store {
    dir: StoreDir,
    build: String,
    graph: LocalGraph,
}

impl Store {
    /// Opens the build named by the manifest. Fails with a sentence that says how to
    /// build one when the store is missing or empty.
    pub fn open(root: impl Into<std::path::PathBuf>, writable: bool) -> Result<Store> {
        let dir = StoreDir::new(root, false)?;
        let build = dir.current_build()?;
        let rdf = dir.rdf_dir(&build);
        let graph = if writable {
            // The build no longer matches what its build recorded (graph digests): the
            // next build must not take it as its base.
            let marker = dir.build_dir(&build).join(UPDATED_FILE);
            std::fs::write(&marker, now_rfc3339()).map_err(|e| StoreError::io(&marker, e))?;
            LocalGraph::open_writable(&rdf)?
        } else {
            LocalGraph::open_read_only(&rdf)?
        };
        Ok(Store { dir, build, graph })
    }

    pub fn build_id(&self) -> &str {
        &self.build
    }

    pub fn dir(&self) -> &StoreDir {
        &self.dir
    }

    pub fn graph(&self) -> &LocalGraph {
        &self.graph
    }

    /// The build's BM25 index.
    pub fn text_index(&self) -> Result<TextIndex> {
        TextIndex::open(&self.dir.bm25_dir(&self.build))
    }

    /// The graph the query side walks: the stored file, else extracted now with SPARQL
    /// (builds made before the file existed, which also lack the topic centroids).
    pub fn statute_graph(&self) -> Result<statute_graph::StatuteGraphData> {
        match statute_graph::StatuteGraphData::read(&self.dir.build_dir(&self.build))? {
            Some(g) => Ok(g),
            None => statute_graph::StatuteGraphData::extract(
                &self.graph,
                &statute_graph::Centroids::new(),
            ),
        }
    }

    /// The build's dense vector index.
    pub fn vector_index(&self) -> Result<VectorIndex> {
        VectorIndex::open(&self.dir.vectors_dir(&self.build))
    }

    /// The build's index of 款 vectors, owned by paragraph IRIs (`None` for builds
    /// without one: structure-only, or made before it existed).
    pub fn paragraph_vector_index(&self) -> Result<Option<VectorIndex>> {
        let dir = self.dir.paragraph_vectors_dir(&self.build);
        if !dir.join("vectors.json").exists() {
            return Ok(None);
        }
        VectorIndex::open(&dir).map(Some)
    }

    /// The current build's metadata (`db_url`, else the database the store recorded,
    /// else its own SQLite file), read with blocking calls.
    pub fn metadata(&self, db_url: Option<&str>) -> Result<Metadata> {
        Metadata::open(&self.dir.db_url(db_url), &self.build)
    }
}

/// Marks a build whose RDF was changed after it committed (SPARQL UPDATE).
pub const UPDATED_FILE: &str = "UPDATED";

/// A build being written beside the committed one. Nothing is visible to readers until
/// [`BuildWriter::commit`] replaces the manifest.
pub struct BuildWriter {
    dir: StoreDir,
    id: String,
    graph: LocalGraph,
    db: DatabaseConnection,
    /// The build whose RDF checkpoint this one started from.
    base: Option<String>,
}

impl BuildWriter {
    /// Creates the store directory if needed, a fresh build folder and its RDF store,
    /// and records the build as running. With `base` (a committed build's id) the RDF
    /// store starts as a checkpoint of that build's (hard links to its immutable files),
    /// for an incremental build to change; the ontology graph is loaded afresh either way.
    pub async fn begin(
        root: impl Into<std::path::PathBuf>,
        db_url: Option<&str>,
        corpus: &str,
        base: Option<&str>,
    ) -> Result<BuildWriter> {
        let dir = StoreDir::new(root, true)?;
        // The database first: a wrong or unreachable URL fails before anything is written.
        let db = meta::connect(&dir.db_url(db_url)).await?;
        if let Some(url) = db_url {
            dir.record_db_url(url)?;
        }
        let id = dir.new_build_id();
        let build_dir = dir.build_dir(&id);
        std::fs::create_dir_all(&build_dir).map_err(|e| StoreError::io(&build_dir, e))?;
        let writer = build_dir.join(builds::WRITER_FILE);
        std::fs::write(&writer, std::process::id().to_string())
            .map_err(|e| StoreError::io(&writer, e))?;
        let rdf = dir.rdf_dir(&id);
        let graph = match base {
            Some(base) => {
                LocalGraph::open_read_only(&dir.rdf_dir(base))?
                    .oxigraph()
                    .backup(&rdf)?;
                let graph = LocalGraph::open_writable(&rdf)?;
                graph.clear_graph(coal_ontology::ONTOLOGY_IRI)?;
                graph
            }
            None => {
                std::fs::create_dir_all(&rdf).map_err(|e| StoreError::io(&rdf, e))?;
                LocalGraph::open_writable(&rdf)?
            }
        };
        graph.load_ontology()?;
        meta::build::Entity::insert(meta::build::ActiveModel {
            id: Set(id.clone()),
            started_at: Set(now_rfc3339()),
            finished_at: Set(None),
            status: Set("running".into()),
            corpus: Set(corpus.to_owned()),
            summary: Set(String::new()),
        })
        .exec_without_returning(&db)
        .await?;
        Ok(BuildWriter {
            dir,
            id,
            graph,
            db,
            base: base.map(str::to_owned),
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn graph(&self) -> &LocalGraph {
        &self.graph
    }

    /// Writes the build's metadata rows (one transaction per table); those of laws whose
    /// rows the base build holds the same are copied inside the database. Returns how
    /// many laws were copied so (`None`: every row was sent).
    pub async fn write_metadata(
        &self,
        laws: Vec<LawRow>,
        versions: Vec<LawVersionRow>,
        articles: Vec<ArticleRow>,
    ) -> Result<Option<usize>> {
        let base_dir = self.base.as_ref().map(|b| self.dir.build_dir(b));
        let base = self
            .base
            .as_deref()
            .zip(base_dir.as_deref())
            .map(|(id, dir)| rows::RowsBase { id, dir });
        rows::insert_reusing(
            &self.db,
            &self.id,
            &self.dir.build_dir(&self.id),
            base,
            laws,
            versions,
            articles,
        )
        .await
    }

    /// A writer for this build's vector index.
    pub fn vector_index_writer(&self, model_id: &str, dim: usize) -> VectorIndexWriter {
        VectorIndexWriter::new(&self.dir.vectors_dir(&self.id), model_id, dim)
    }

    /// The folder of the build readers see now (the one this build will replace), if any:
    /// what an incremental stage may reuse.
    pub fn previous_build_dir(&self) -> Option<std::path::PathBuf> {
        let id = self.dir.current_build().ok()?;
        Some(self.dir.build_dir(&id))
    }

    /// The vector index folder of the build this one will replace, if any.
    pub fn previous_vectors_dir(&self) -> Option<std::path::PathBuf> {
        let id = self.dir.current_build().ok()?;
        Some(self.dir.vectors_dir(&id))
    }

    /// A writer for this build's index of 款 vectors.
    pub fn paragraph_vector_index_writer(&self, model_id: &str, dim: usize) -> VectorIndexWriter {
        VectorIndexWriter::new(&self.dir.paragraph_vectors_dir(&self.id), model_id, dim)
    }

    /// The 款 vector index folder of the build this one will replace, if any.
    pub fn previous_paragraph_vectors_dir(&self) -> Option<std::path::PathBuf> {
        let id = self.dir.current_build().ok()?;
        Some(self.dir.paragraph_vectors_dir(&id))
    }

    /// This build's own folder (for files a stage stores with the build).
    pub fn build_dir(&self) -> std::path::PathBuf {
        self.dir.build_dir(&self.id)
    }

    /// The store-wide folder for caches that outlive builds (embeddings, LLM replies).
    pub fn cache_dir(&self) -> std::path::PathBuf {
        self.dir.root().join("cache")
    }

    /// The store-wide embedding cache of `model_id`.
    pub fn embedding_cache(&self, model_id: &str, dim: usize) -> Result<EmbeddingCache> {
        EmbeddingCache::open(&self.dir.root().join("cache"), model_id, dim)
    }

    /// Records embedding-cache keys this build used outside its vector index (so that
    /// `coal gc` keeps their cache entries).
    pub fn record_extra_embedding_keys(&self, keys: &IndexKeys) -> Result<()> {
        vectors::write_extra_keys(&self.build_dir(), keys)
    }

    /// A writer for this build's BM25 index.
    pub fn text_index_writer(&self, articles: usize) -> Result<TextIndexWriter> {
        TextIndexWriter::create(&self.dir.bm25_dir(&self.id), articles)
    }

    /// A writer for this build's BM25 index that starts as a copy of the base build's,
    /// for the caller to delete changed versions from and add them again; `None` without a
    /// base build, when the base has no BM25 index, or one with another schema.
    pub fn text_index_extending_base(&self) -> Result<Option<TextIndexWriter>> {
        let Some(base) = &self.base else {
            return Ok(None);
        };
        let from = self.dir.bm25_dir(base);
        if !from.join("meta.json").exists() {
            return Ok(None);
        }
        let to = self.dir.bm25_dir(&self.id);
        let writer = TextIndexWriter::extend(&from, &to)?;
        // What a refused extension copied goes, so that a fresh index can be made there.
        if writer.is_none() && to.exists() {
            std::fs::remove_dir_all(&to).map_err(|e| StoreError::io(&to, e))?;
        }
        Ok(writer)
    }

    /// Extracts the statute graph from this build's RDF (with the topic centroids the
    /// build computed) and stores it with the build. `kept_graphs`: the version graphs
    /// this build kept unchanged from its base, whose hierarchy is taken from the base
    /// build's snapshot. Returns the graph and how many versions were taken so.
    pub fn write_statute_graph(
        &self,
        centroids: &statute_graph::Centroids,
        kept_graphs: &std::collections::HashSet<String>,
    ) -> Result<(statute_graph::StatuteGraphData, usize)> {
        let base = match &self.base {
            Some(base) => statute_graph::StatuteGraphData::read(&self.dir.build_dir(base))?,
            None => None,
        };
        let reuse = base
            .as_ref()
            .map(|data| statute_graph::Reuse { data, kept_graphs });
        let (g, reused) = statute_graph::StatuteGraphData::extract_reusing(
            self.graph(),
            centroids,
            reuse.as_ref(),
        )?;
        g.write(&self.dir.build_dir(&self.id))?;
        Ok((g, reused))
    }

    /// Disk use of this build's folder so far, in bytes.
    pub fn disk_usage(&self) -> u64 {
        dir_size(&self.dir.build_dir(&self.id))
    }

    /// Flushes and closes the RDF store, writes the summary, marks the build committed and
    /// switches the manifest to it. Returns the new manifest.
    pub async fn commit(self, summary: &serde_json::Value) -> Result<Manifest> {
        self.graph.flush()?;
        // A build from scratch is compacted once for reading. A build from a checkpoint is
        // not: its unchanged files stay hard links shared with the base build (a few MB
        // of disk per build instead of the whole store), and RocksDB compacts on its own
        // as later builds write.
        if self.base.is_none() {
            self.graph.oxigraph().optimize()?;
        }
        drop(self.graph);
        let summary_text = serde_json::to_string_pretty(summary).expect("summary serializes");
        let path = self.dir.build_dir(&self.id).join("summary.json");
        std::fs::write(&path, &summary_text).map_err(|e| StoreError::io(&path, e))?;
        record_finish(&self.db, &self.id, "committed", Some(summary_text)).await?;
        let mut builds = self.dir.manifest()?.map(|m| m.builds).unwrap_or_default();
        builds.push(self.id.clone());
        let manifest = Manifest {
            build: self.id.clone(),
            committed_at: now_rfc3339(),
            builds,
        };
        self.dir.commit_manifest(&manifest)?;
        // Only now: until the manifest names it, the marker keeps `gc` away.
        let writer = self.dir.build_dir(&self.id).join(builds::WRITER_FILE);
        std::fs::remove_file(&writer).map_err(|e| StoreError::io(&writer, e))?;
        Ok(manifest)
    }

    /// Gives up: the build folder and its metadata rows are removed and the build
    /// recorded as failed. The committed build is untouched.
    pub async fn abort(self) -> Result<()> {
        drop(self.graph);
        builds::forget_rows(&self.db, std::slice::from_ref(&self.id)).await?;
        record_finish(&self.db, &self.id, "failed", None).await?;
        let path = self.dir.build_dir(&self.id);
        std::fs::remove_dir_all(&path).map_err(|e| StoreError::io(&path, e))
    }
}

/// Records how a build ended in the metadata database.
async fn record_finish(
    db: &DatabaseConnection,
    id: &str,
    status: &str,
    summary: Option<String>,
) -> Result<()> {
    let model = meta::build::ActiveModel {
        id: Set(id.to_owned()),
        finished_at: Set(Some(now_rfc3339())),
        status: Set(status.to_owned()),
        summary: summary.map(Set).unwrap_or_default(),
        ..Default::default()
    };
    meta::build::Entity::update(model).exec(db).await?;
    Ok(())
}

/// Total size of the files below `path`.
pub fn dir_size(path: &std::path::Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(path) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => dir_size(&e.path()),
            _ => e.metadata().map(|m| m.len()).unwrap_or(0),
        })
        .sum()
}
