//! Build versions on disk: listing them and removing the ones nobody reads (`coal gc`).
//!
//! A build being written holds `builds/<id>/WRITER` with its process id until it commits.
//! A folder that no manifest names is either such a live build (kept) or the remains of a
//! build that died (removed by `gc`).

use std::path::Path;

use sea_orm::{ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use serde::Serialize;

use crate::layout::{Manifest, StoreDir, now_rfc3339};
use crate::{Result, StoreError, dir_size, meta};

pub const WRITER_FILE: &str = "WRITER";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BuildState {
    /// The build readers see.
    Current,
    /// Committed earlier, still on disk.
    Previous,
    /// Being written by a live process.
    Writing,
    /// Never committed and no live writer: what a killed or failed build left.
    Abandoned,
}

#[derive(Debug, Clone, Serialize)]
pub struct BuildInfo {
    pub id: String,
    pub state: BuildState,
    pub bytes: u64,
    /// The build's summary (laws, articles, timings), when it committed.
    pub summary: Option<serde_json::Value>,
}

fn process_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// The pid in `WRITER`, if the folder has one.
fn writer_pid(build_dir: &Path) -> Option<u32> {
    std::fs::read_to_string(build_dir.join(WRITER_FILE))
        .ok()
        .and_then(|s| s.trim().parse().ok())
}

impl StoreDir {
    /// Every build folder, oldest first, with its state.
    pub fn list_builds(&self) -> Result<Vec<BuildInfo>> {
        let manifest = self.manifest()?;
        let committed: Vec<String> = manifest
            .as_ref()
            .map(|m| m.builds.clone())
            .unwrap_or_default();
        let current = manifest.as_ref().map(|m| m.build.clone());
        let root = self.root().join("builds");
        let mut ids: Vec<String> = match std::fs::read_dir(&root) {
            Ok(rd) => rd
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(StoreError::io(root, e)),
        };
        ids.sort();
        Ok(ids
            .into_iter()
            .map(|id| {
                let dir = self.build_dir(&id);
                let state = if current.as_deref() == Some(id.as_str()) {
                    BuildState::Current
                } else if committed.contains(&id) {
                    BuildState::Previous
                } else if writer_pid(&dir).is_some_and(process_alive) {
                    BuildState::Writing
                } else {
                    BuildState::Abandoned
                };
                let summary = std::fs::read(dir.join("summary.json"))
                    .ok()
                    .and_then(|b| serde_json::from_slice(&b).ok());
                BuildInfo {
                    bytes: dir_size(&dir),
                    id,
                    state,
                    summary,
                }
            })
            .collect())
    }

    /// Removes abandoned folders and all committed builds but the current one and the
    /// `keep - 1` newest others. The manifest is rewritten (atomically) before any folder
    /// goes, so a crash in between leaves only abandoned folders for the next `gc`.
    /// Returns what was removed.
    /// Deletes the metadata rows of removed builds (`db_url`, else the recorded or the
    /// store's own database).
    pub fn forget_builds(&self, db_url: Option<&str>, ids: &[String]) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        crate::rows::forget_builds_blocking(&self.db_url(db_url), ids)
    }

    pub fn gc(&self, keep: usize) -> Result<Vec<BuildInfo>> {
        let builds = self.list_builds()?;
        let mut previous: Vec<&BuildInfo> = builds
            .iter()
            .filter(|b| b.state == BuildState::Previous)
            .collect();
        // Newest last (ids are time-ordered); keep the newest `keep - 1`.
        let keep_previous = keep.saturating_sub(1);
        let drop_previous = previous.len().saturating_sub(keep_previous);
        previous.truncate(drop_previous);
        let removed: Vec<BuildInfo> = builds
            .iter()
            .filter(|b| b.state == BuildState::Abandoned || previous.iter().any(|p| p.id == b.id))
            .cloned()
            .collect();
        if let Some(m) = self.manifest()? {
            let builds: Vec<String> = m
                .builds
                .iter()
                .filter(|id| !removed.iter().any(|r| &r.id == *id))
                .cloned()
                .collect();
            if builds.len() != m.builds.len() {
                self.commit_manifest(&Manifest {
                    build: m.build.clone(),
                    committed_at: now_rfc3339(),
                    builds,
                })?;
            }
        }
        for b in &removed {
            let dir = self.build_dir(&b.id);
            std::fs::remove_dir_all(&dir).map_err(|e| StoreError::io(&dir, e))?;
        }
        Ok(removed)
    }
}

/// What pruning the embedding cache did.
#[derive(Debug, Clone, Serialize)]
pub enum CachePrune {
    /// Entries removed, per model id.
    Pruned(Vec<(String, usize)>),
    /// Nothing removed, and why.
    Skipped(String),
}

impl StoreDir {
    /// Removes embedding-cache entries that no build on disk uses (texts of removed
    /// builds, of laws that left the corpus). Skipped while a build is being written (its
    /// fresh vectors are cached before any index names them) and when a build predates
    /// recorded text keys.
    pub fn prune_embedding_cache(&self) -> Result<CachePrune> {
        use std::collections::{BTreeMap, HashSet};
        let mut used: BTreeMap<String, (usize, HashSet<crate::TextKey>)> = BTreeMap::new();
        for b in self.list_builds()? {
            match b.state {
                BuildState::Writing => {
                    return Ok(CachePrune::Skipped(format!(
                        "build {} is being written",
                        b.id
                    )));
                }
                BuildState::Abandoned => continue,
                BuildState::Current | BuildState::Previous => {}
            }
            let extra = crate::vectors::extra_keys(&self.build_dir(&b.id));
            for found in [
                extra,
                crate::index_keys(&self.vectors_dir(&b.id)),
                crate::index_keys(&self.paragraph_vectors_dir(&b.id)),
            ] {
                match found {
                    Ok(None) => {}
                    Ok(Some(k)) => {
                        let e = used.entry(k.model_id).or_insert((k.dim, HashSet::new()));
                        e.1.extend(k.keys);
                    }
                    Err(e) => return Ok(CachePrune::Skipped(e.to_string())),
                }
            }
        }
        let mut pruned = Vec::new();
        for (model, (dim, keys)) in used {
            let mut cache = crate::EmbeddingCache::open(&self.root().join("cache"), &model, dim)?;
            pruned.push((model, cache.retain(&keys)?));
        }
        Ok(CachePrune::Pruned(pruned))
    }
}

/// Deletes the metadata rows of removed builds, their build records included.
pub(crate) async fn forget_builds(db: &DatabaseConnection, ids: &[String]) -> Result<()> {
    if ids.is_empty() {
        return Ok(());
    }
    forget_rows(db, ids).await?;
    meta::build::Entity::delete_many()
        .filter(meta::build::Column::Id.is_in(ids.to_vec()))
        .exec(db)
        .await?;
    Ok(())
}

/// Deletes what builds wrote (laws, versions, articles), keeping their build records.
pub(crate) async fn forget_rows(db: &DatabaseConnection, ids: &[String]) -> Result<()> {
    meta::article::Entity::delete_many()
        .filter(meta::article::Column::BuildId.is_in(ids.to_vec()))
        .exec(db)
        .await?;
    meta::law_version::Entity::delete_many()
        .filter(meta::law_version::Column::BuildId.is_in(ids.to_vec()))
        .exec(db)
        .await?;
    meta::law::Entity::delete_many()
        .filter(meta::law::Column::BuildId.is_in(ids.to_vec()))
        .exec(db)
        .await?;
    Ok(())
}
