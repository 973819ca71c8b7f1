//! Shared helpers for the integration tests that run on the real corpus in `../shared`.

use std::path::PathBuf;
use std::sync::{Mutex, Once};

/// The shared data folder: `$COAL_SHARED`, else `../shared` beside the checkout.
pub fn shared() -> PathBuf {
    std::env::var_os("COAL_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared")))
}

pub fn lawrefbook() -> PathBuf {
    shared().join("corpus/lawrefbook")
}

pub fn profile(name: &str) -> PathBuf {
    shared().join("corpus/profiles").join(format!("{name}.txt"))
}

/// The paths a profile lists.
pub fn profile_entries(name: &str) -> Vec<String> {
    std::fs::read_to_string(profile(name))
        .expect("profile exists")
        .lines()
        .map(|l| l.trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

/// A build of real statutes in a temporary store, kept for the whole test binary.
pub struct BuiltStore {
    pub dir: PathBuf,
    pub summary: kg_build::BuildSummary,
}

impl BuiltStore {
    pub fn store_path(&self) -> PathBuf {
        self.dir.join("store")
    }
}

/// Builds `profile_path` (paths relative to the LawRefBook folder) without a model.
pub fn build_store(profile_path: PathBuf, structure_only: bool) -> BuiltStore {
    let dir = process_tempdir();
    let opts = kg_build::BuildOptions {
        corpus: coal_corpus::CorpusSpec::folder(lawrefbook()).with_profile(profile_path),
        store: dir.join("store"),
        db_url: None,
        strict: false,
        structure_only,
        incremental: true,
        recluster_share: kg_build::domains::RECLUSTER_SHARE,
        article_vectors: kg_build::ArticleVectors::default(),
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let summary = rt
        .block_on(kg_build::build(&opts, None, &kg_build::Quiet))
        .unwrap();
    BuiltStore { dir, summary }
}

/// The folders `process_tempdir` made, removed when the process exits.
static REMOVE_AT_EXIT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// A temporary folder for a store that every test of this binary shares, removed when the
/// process exits. A `TempDir` held in a `static` is never dropped: each run left one store
/// per test binary in the temporary folder (~400 MB a run).
pub fn process_tempdir() -> PathBuf {
    static REGISTER: Once = Once::new();
    // SAFETY: `remove_registered` is an `extern "C" fn` taking nothing, as `atexit` wants;
    // it cannot unwind (it ignores every error).
    REGISTER.call_once(|| unsafe {
        libc::atexit(remove_registered);
    });
    let path = tempfile::tempdir().unwrap().keep();
    REMOVE_AT_EXIT.lock().unwrap().push(path.clone());
    path
}

extern "C" fn remove_registered() {
    if let Ok(paths) = REMOVE_AT_EXIT.lock() {
        for path in paths.iter() {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// The local chat model the real-LLM tests run on: `$COAL_LLM_MODEL`, else the 0.5B file
/// `make llm-model` writes to `.models/`. `None` when it is absent, unless
/// `COAL_REQUIRE_LLM` is set (CI), which makes a missing model a failure.
pub fn local_llm_model() -> Option<PathBuf> {
    let path = std::env::var_os("COAL_LLM_MODEL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../.models/qwen2.5-coder-0.5b-instruct-q4.gguf"
            ))
        });
    if path.is_file() {
        return Some(path);
    }
    assert!(
        std::env::var_os("COAL_REQUIRE_LLM").is_none(),
        "COAL_REQUIRE_LLM is set but {} is missing (make llm-model)",
        path.display()
    );
    None
}

/// Builds the LawRefBook `files` (paths relative to its folder) with `embedder` into
/// `DIR/store` of a new temporary folder.
pub fn build_files(
    files: &[&str],
    embedder: Option<&dyn coal_models::Embedder>,
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    build_files_into(
        dir.path(),
        files,
        embedder,
        kg_build::ArticleVectors::default(),
    );
    dir
}

/// Builds the LawRefBook `files` into `dir/store` (incrementally over what it holds).
pub fn build_files_into(
    dir: &std::path::Path,
    files: &[&str],
    embedder: Option<&dyn coal_models::Embedder>,
    article_vectors: kg_build::ArticleVectors,
) -> kg_build::BuildSummary {
    let profile = dir.join("profile.txt");
    std::fs::write(&profile, files.join("\n")).unwrap();
    let opts = kg_build::BuildOptions {
        corpus: coal_corpus::CorpusSpec::folder(lawrefbook()).with_profile(profile),
        store: dir.join("store"),
        db_url: None,
        strict: false,
        structure_only: false,
        incremental: true,
        recluster_share: kg_build::domains::RECLUSTER_SHARE,
        article_vectors,
    };
    tokio::runtime::Runtime::new()
        .unwrap()
        .block_on(kg_build::build(&opts, embedder, &kg_build::Quiet))
        .unwrap()
}

/// A SELECT query's rows: literals as their value, IRIs whole, unbound as "".
pub fn select(store: &kg_store::Store, q: &str) -> Vec<Vec<String>> {
    use kg_store::oxigraph::model::Term;
    use kg_store::{GraphBackend, SparqlOutput};
    let SparqlOutput::Solutions { rows, .. } = store.graph().query(q).unwrap() else {
        panic!("not a SELECT")
    };
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|t| match t {
                    Some(Term::Literal(l)) => l.value().to_owned(),
                    Some(Term::NamedNode(n)) => n.as_str().to_owned(),
                    Some(other) => other.to_string(),
                    None => String::new(),
                })
                .collect()
        })
        .collect()
}
