//! The store directory and its atomic manifest.
//!
//! ```text
//! STORE/
//!   CURRENT              manifest: which build readers see (replaced atomically by rename)
//!   meta.sqlite          metadata database (default; rows are keyed by build id)
//!   METADATA-DB          the database URL a build was given (`--db-url`), password
//!                        removed, so later commands find the same database
//!   builds/<build-id>/
//!     rdf/               oxigraph RocksDB store of that build
//!     bm25/              tantivy index of the articles (jieba segmentation)
//!     vectors/           HNSW index of article embeddings
//!     retrieval-graph.json  what the graph tiers walk (articles, citations, concepts)
//!   cache/               embeddings by (model, text hash), shared by all builds
//!     summary.json       the build's summary
//! ```
//! A build writes everything under its own folder and then replaces `CURRENT`; until
//! then readers keep the previous build. A build that dies leaves a folder that no
//! manifest names, and nothing else changes.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

const MANIFEST: &str = "CURRENT";
const METADATA_DB: &str = "METADATA-DB";

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Manifest {
    /// The committed build readers use.
    pub build: String,
    /// RFC 3339 time of the commit.
    pub committed_at: String,
    /// Builds that are still on disk, oldest first (including `build`).
    #[serde(default)]
    pub builds: Vec<String>,
}

/// A store directory.
#[derive(Debug, Clone)]
pub struct StoreDir {
    root: PathBuf,
}

impl StoreDir {
    /// Opens (or, with `create`, creates) a store directory.
    pub fn new(root: impl Into<PathBuf>, create: bool) -> Result<StoreDir> {
        let root = root.into();
        if root.exists() && !root.is_dir() {
            return Err(StoreError::NotADirectory(root));
        }
        if !root.exists() {
            if !create {
                return Err(StoreError::NoBuild(root));
            }
            std::fs::create_dir_all(&root).map_err(|e| StoreError::io(&root, e))?;
        }
        Ok(StoreDir { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn build_dir(&self, build: &str) -> PathBuf {
        self.root.join("builds").join(build)
    }

    pub fn rdf_dir(&self, build: &str) -> PathBuf {
        self.build_dir(build).join("rdf")
    }

    pub fn bm25_dir(&self, build: &str) -> PathBuf {
        self.build_dir(build).join("bm25")
    }

    pub fn vectors_dir(&self, build: &str) -> PathBuf {
        self.build_dir(build).join("vectors")
    }

    /// The index of 款 vectors (paragraphs of articles with several 款 or with 项).
    pub fn paragraph_vectors_dir(&self, build: &str) -> PathBuf {
        self.build_dir(build).join("paragraph-vectors")
    }

    pub fn default_db_url(&self) -> String {
        format!(
            "sqlite://{}?mode=rwc",
            self.root.join("meta.sqlite").display()
        )
    }

    /// The metadata database to use: `explicit` (a `--db-url`), else the one the last
    /// build with an explicit URL recorded, else the store's own SQLite file.
    pub fn db_url(&self, explicit: Option<&str>) -> String {
        if let Some(url) = explicit {
            return url.to_owned();
        }
        match std::fs::read_to_string(self.root.join(METADATA_DB)) {
            Ok(url) if !url.trim().is_empty() => url.trim().to_owned(),
            _ => self.default_db_url(),
        }
    }

    /// Records the database a build was given, without its password (pass it again with
    /// `--db-url` or `COAL_DB_URL` where the server wants one).
    pub fn record_db_url(&self, url: &str) -> Result<()> {
        let path = self.root.join(METADATA_DB);
        std::fs::write(&path, without_password(url) + "\n").map_err(|e| StoreError::io(&path, e))
    }

    /// The committed manifest, if any build was ever committed.
    pub fn manifest(&self) -> Result<Option<Manifest>> {
        let path = self.root.join(MANIFEST);
        let bytes = match std::fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(path, e)),
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| StoreError::CorruptManifest {
                path,
                message: e.to_string(),
            })
    }

    /// The build readers see, or an error that says how to make one.
    pub fn current_build(&self) -> Result<String> {
        self.manifest()?
            .map(|m| m.build)
            .ok_or_else(|| StoreError::NoBuild(self.root.clone()))
    }

    /// Makes `manifest` current: written to a temporary file, synced, then renamed over
    /// `CURRENT` (atomic on POSIX file systems), and the directory synced.
    pub fn commit_manifest(&self, manifest: &Manifest) -> Result<()> {
        let tmp = self.root.join(format!("{MANIFEST}.tmp"));
        let target = self.root.join(MANIFEST);
        let bytes = serde_json::to_vec_pretty(manifest).expect("manifest serializes");
        {
            use std::io::Write;
            let mut f = std::fs::File::create(&tmp).map_err(|e| StoreError::io(&tmp, e))?;
            f.write_all(&bytes).map_err(|e| StoreError::io(&tmp, e))?;
            f.sync_all().map_err(|e| StoreError::io(&tmp, e))?;
        }
        std::fs::rename(&tmp, &target).map_err(|e| StoreError::io(&target, e))?;
        if let Ok(dir) = std::fs::File::open(&self.root) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// A fresh, unique build id: time-ordered so that listings sort by age.
    pub fn new_build_id(&self) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let mut id = format!("b{}-{:09}", now.as_secs(), now.subsec_nanos());
        let mut n = 1;
        while self.build_dir(&id).exists() {
            n += 1;
            id = format!("b{}-{:09}-{n}", now.as_secs(), now.subsec_nanos());
        }
        id
    }
}

/// `scheme://user:secret@host/db` → `scheme://user@host/db`.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let user = rest[..at].split(':').next().unwrap_or("");
            format!("{scheme}://{user}{}", &rest[at..])
        }
        None => url.to_owned(),
    }
}

/// RFC 3339 UTC timestamp without a date library.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs() as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (H. Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorded_database_url_is_used_without_its_password() {
        assert_eq!(
            without_password("postgres://coal:s3cr@t@db.example:5432/coal?sslmode=disable"),
            "postgres://coal@db.example:5432/coal?sslmode=disable"
        );
        assert_eq!(
            without_password("postgres://coal@h/db"),
            "postgres://coal@h/db"
        );
        assert_eq!(
            without_password("sqlite:///tmp/a@b.sqlite"),
            "sqlite:///tmp/a@b.sqlite"
        );
        let dir = tempfile::tempdir().unwrap();
        let store = StoreDir::new(dir.path().join("s"), true).unwrap();
        assert!(store.db_url(None).starts_with("sqlite://"));
        store.record_db_url("postgres://u:p@h/db").unwrap();
        assert_eq!(store.db_url(None), "postgres://u@h/db");
        assert_eq!(store.db_url(Some("mysql://x@y/z")), "mysql://x@y/z");
    }

    #[test]
    fn manifest_commit_replaces_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let store = StoreDir::new(dir.path().join("s"), true).unwrap();
        assert!(store.manifest().unwrap().is_none());
        assert!(matches!(store.current_build(), Err(StoreError::NoBuild(_))));
        let m = Manifest {
            build: "b1".into(),
            committed_at: now_rfc3339(),
            builds: vec!["b1".into()],
        };
        store.commit_manifest(&m).unwrap();
        assert_eq!(store.current_build().unwrap(), "b1");
        let m2 = Manifest {
            build: "b2".into(),
            committed_at: now_rfc3339(),
            builds: vec!["b1".into(), "b2".into()],
        };
        store.commit_manifest(&m2).unwrap();
        assert_eq!(store.manifest().unwrap().unwrap(), m2);
        assert!(!store.root().join("CURRENT.tmp").exists());
        // Killed halfway through writing the next manifest: readers still see b2, and the
        // next commit writes over the half-written file.
        std::fs::write(
            store.root().join("CURRENT.tmp"),
            b"{\"build\": \"b3\", \"comm",
        )
        .unwrap();
        assert_eq!(store.current_build().unwrap(), "b2");
        store.commit_manifest(&m).unwrap();
        assert_eq!(store.current_build().unwrap(), "b1");
    }

    #[test]
    fn corrupt_manifest_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let store = StoreDir::new(dir.path(), true).unwrap();
        std::fs::write(dir.path().join("CURRENT"), b"{not json").unwrap();
        let err = store.current_build().unwrap_err().to_string();
        assert!(err.contains("CURRENT") && err.contains("corrupt"), "{err}");
    }

    #[test]
    fn timestamps_look_like_rfc3339() {
        let t = now_rfc3339();
        assert_eq!(t.len(), 20);
        assert!(t.starts_with("20") && t.ends_with('Z'));
    }
}
