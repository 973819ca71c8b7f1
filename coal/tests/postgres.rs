//! The metadata database on a real PostgreSQL server: builds, an incremental build, a
//! failed and a killed build, gc, and two stores in one database, read back with `psql`.
//! `.ci/run` starts a throw-away server (`scripts/postgres.sh`) and sets
//! `COAL_TEST_POSTGRES_URL` (an administrator's URL) and `COAL_REQUIRE_POSTGRES=1`, which
//! turns a missing server into a failure.

mod common;

use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};

use common::{coal, corpus_of, statutes as fixtures, stderr, stdout};

/// A database of its own on the test server, dropped at the end.
struct Database {
    admin: String,
    name: String,
    url: String,
}

impl Database {
    fn create(admin: &str, name: &str) -> Database {
        psql(admin, &format!("DROP DATABASE IF EXISTS {name}"));
        psql(admin, &format!("CREATE DATABASE {name}"));
        let (base, _) = admin.rsplit_once('/').expect("a URL naming a database");
        Database {
            admin: admin.to_owned(),
            name: name.to_owned(),
            url: format!("{base}/{name}"),
        }
    }

    fn rows(&self, sql: &str) -> Vec<String> {
        psql(&self.url, sql)
            .lines()
            .map(str::to_owned)
            .filter(|l| !l.is_empty())
            .collect()
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = Command::new("psql")
            .args(["-X", "-q", &self.admin, "-c"])
            .arg(format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ))
            .output();
    }
}

fn psql(url: &str, sql: &str) -> String {
    let out = Command::new("psql")
        .args(["-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", url, "-c", sql])
        .output()
        .expect("psql runs");
    assert!(out.status.success(), "{sql}: {}", stderr(&out));
    stdout(&out)
}

/// The administrator's URL of the test server, or `None` (allowed only when
/// `COAL_REQUIRE_POSTGRES` is unset).
fn server() -> Option<String> {
    match std::env::var("COAL_TEST_POSTGRES_URL") {
        Ok(url) => Some(url),
        Err(_) => {
            assert!(
                std::env::var_os("COAL_REQUIRE_POSTGRES").is_none(),
                "COAL_REQUIRE_POSTGRES is set but COAL_TEST_POSTGRES_URL is not (scripts/postgres.sh starts a server and prints it)"
            );
            eprintln!("no PostgreSQL server (COAL_TEST_POSTGRES_URL): nothing to run");
            None
        }
    }
}

fn build(store: &Path, corpus: &Path, db: Option<&str>) -> serde_json::Value {
    match db {
        Some(url) => common::build_json(store, corpus, &["--db-url", url]),
        None => common::build_json(store, corpus, &[]),
    }
}

fn id(summary: &serde_json::Value) -> String {
    summary["build_id"].as_str().unwrap().to_owned()
}

/// `build_id|count` of the article rows, by build.
fn articles_by_build(db: &Database) -> Vec<String> {
    db.rows("SELECT build_id || '|' || COUNT(*) FROM article GROUP BY build_id ORDER BY build_id")
}

/// A scripted embeddings endpoint: the first request (the client's probe) gets vectors,
/// every later one a 400.
struct ProbeThenRefuse(std::sync::atomic::AtomicUsize);

impl wiremock::Respond for ProbeThenRefuse {
    fn respond(&self, req: &wiremock::Request) -> wiremock::ResponseTemplate {
        if self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) > 0 {
            return wiremock::ResponseTemplate::new(400).set_body_string("refused");
        }
        let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap();
        let n = body["input"].as_array().map_or(1, Vec::len);
        let data: Vec<_> = (0..n)
            .map(|i| serde_json::json!({ "index": i, "embedding": [1.0, 0.0, 0.5] }))
            .collect();
        wiremock::ResponseTemplate::new(200).set_body_json(serde_json::json!({ "data": data }))
    }
}

#[test]
fn postgres_holds_the_metadata_of_builds_failures_gc_and_two_stores() {
    let Some(admin) = server() else { return };
    let db = Database::create(&admin, &format!("coal_test_{}", std::process::id()));
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus_of(dir.path(), &["versions/示范保障法(2018-10-26).md"]);
    let store = dir.path().join("store");
    let first = build(&store, &corpus, Some(&db.url));
    let n1 = first["articles"].as_u64().unwrap();
    assert_eq!(articles_by_build(&db), [format!("{}|{n1}", id(&first))]);
    assert_eq!(
        db.rows(
            "SELECT status || '|' || short_name FROM build JOIN law ON law.build_id = build.id"
        ),
        ["committed|示范保障法"]
    );
    // The store remembers its database: later commands need no --db-url.
    let recorded = std::fs::read_to_string(store.join("METADATA-DB")).unwrap();
    assert_eq!(recorded.trim(), db.url);
    assert!(!store.join("meta.sqlite").exists());

    // An incremental build: the new version of the law, rows of its own.
    std::fs::copy(
        fixtures().join("versions/示范保障法(2022-10-30).md"),
        corpus.join("示范保障法(2022-10-30).md"),
    )
    .unwrap();
    let second = build(&store, &corpus, None);
    assert_eq!(second["reuse"]["base_build"], id(&first).as_str());
    // The one law changed: nothing to copy from the base build's rows.
    assert_eq!(second["reuse"]["metadata_laws_copied"], 0);
    let n2 = second["articles"].as_u64().unwrap();
    assert!(n2 > n1);
    assert_eq!(
        articles_by_build(&db),
        [
            format!("{}|{n1}", id(&first)),
            format!("{}|{n2}", id(&second))
        ]
    );
    assert_eq!(
        db.rows(&format!(
            "SELECT COUNT(*) FROM law_version WHERE build_id = '{}'",
            id(&second)
        )),
        ["2"]
    );

    // A build that fails after it began (an embedding endpoint that answers the probe,
    // then refuses: a scripted server) leaves a failed record and no rows; the committed
    // build is what readers see.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let embeddings = rt.block_on(wiremock::MockServer::start());
    rt.block_on(
        wiremock::Mock::given(wiremock::matchers::path("/v1/embeddings"))
            .respond_with(ProbeThenRefuse(Default::default()))
            .mount(&embeddings),
    );
    let config = dir.path().join("coal.toml");
    std::fs::write(
        &config,
        format!(
            "[embedder]\nkind = \"openai\"\nurl = \"{}\"\nmodel = \"scripted\"\n",
            embeddings.uri()
        ),
    )
    .unwrap();
    let failed = coal(&[
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--from-scratch",
        "--config",
        config.to_str().unwrap(),
    ]);
    assert!(!failed.status.success());
    let failed_ids = db.rows("SELECT id FROM build WHERE status = 'failed'");
    assert_eq!(failed_ids.len(), 1, "{}", stderr(&failed));
    assert_eq!(articles_by_build(&db).len(), 2);
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.join("CURRENT")).unwrap()).unwrap();
    assert_eq!(manifest["build"], id(&second).as_str());

    // A build killed at its commit, its rows written: they stay until gc, which also
    // forgets the previous build (keeping one).
    let mut child = Command::new(env!("CARGO_BIN_EXE_coal"))
        .args(["build", "--corpus", corpus.to_str().unwrap()])
        .args(["--store", store.to_str().unwrap(), "--from-scratch"])
        .env("COAL_TEST_PAUSE_AT", "commit")
        .env(
            "COAL_MODEL",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/models/e5-small-q4.bin"),
        )
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let paused = std::io::BufReader::new(child.stderr.take().unwrap())
        .lines()
        .any(|l| l.unwrap().contains("paused at commit"));
    assert!(paused, "the build never reached commit");
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(articles_by_build(&db).len(), 3, "the killed build's rows");
    assert_eq!(
        db.rows("SELECT COUNT(*) FROM build WHERE status = 'running'"),
        ["1"]
    );
    let gc = coal(&[
        "gc",
        "--store",
        store.to_str().unwrap(),
        "--keep",
        "1",
        "--json",
    ]);
    assert!(gc.status.success(), "{}", stderr(&gc));
    assert_eq!(articles_by_build(&db), [format!("{}|{n2}", id(&second))]);
    assert_eq!(
        db.rows("SELECT status FROM build ORDER BY status"),
        ["committed", "failed"]
    );

    // A second store in the same database: its rows beside the first store's, and its gc
    // leaves the first store's alone.
    let other_corpus = corpus_of(&dir.path().join("other"), &["示范劳动法(2020-01-01).md"]);
    let other = dir.path().join("other-store");
    let third = build(&other, &other_corpus, Some(&db.url));
    // Unchanged: its rows are copied from the first build's inside PostgreSQL.
    let fourth = build(&other, &other_corpus, None);
    assert_eq!(
        fourth["reuse"]["metadata_laws_copied"], 1,
        "{}",
        fourth["reuse"]
    );
    let count = |build: &serde_json::Value, table: &str| {
        db.rows(&format!(
            "SELECT COUNT(*) FROM {table} WHERE build_id = '{}'",
            id(build)
        ))
    };
    for table in ["law", "law_version", "article"] {
        assert_eq!(count(&fourth, table), count(&third, table), "{table}");
    }
    assert_eq!(count(&fourth, "article"), [third["articles"].to_string()]);
    let gc = coal(&["gc", "--store", other.to_str().unwrap(), "--keep", "1"]);
    assert!(gc.status.success(), "{}", stderr(&gc));
    let laws = db.rows("SELECT short_name FROM law ORDER BY short_name");
    assert_eq!(laws, ["示范保障法", "示范劳动法"]);
    assert!(
        db.rows(&format!("SELECT id FROM build WHERE id = '{}'", id(&third)))
            .is_empty()
    );
    // The same corpus into SQLite gives the same rows.
    let sqlite_store = dir.path().join("sqlite-store");
    let local = build(&sqlite_store, &corpus, None);
    assert_eq!(local["articles"].as_u64(), Some(n2));
    assert!(sqlite_store.join("meta.sqlite").exists());
}

#[test]
fn a_wrong_or_unreachable_database_is_one_clear_error_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let corpus = fixtures().join("versions");
    build(&store, &corpus, None);
    let before = std::fs::read(store.join("CURRENT")).unwrap();
    let builds = || std::fs::read_dir(store.join("builds")).unwrap().count();
    let count = builds();
    // Nothing listens on port 1; the password must not be printed.
    let out = coal(&[
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--store",
        store.to_str().unwrap(),
        "--db-url",
        "postgres://coal:hunter2@127.0.0.1:1/coal",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("cannot connect to the metadata database postgres://coal@127.0.0.1:1/coal"),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
    assert_eq!(std::fs::read(store.join("CURRENT")).unwrap(), before);
    assert_eq!(builds(), count, "no build folder left behind");
    assert!(!store.join("METADATA-DB").exists());
    // A database that does not exist on a live server, when there is one.
    if let Some(admin) = server() {
        let (base, _) = admin.rsplit_once('/').unwrap();
        let url = format!("{base}/coal_no_such_database");
        let out = coal(&[
            "build",
            "--corpus",
            corpus.to_str().unwrap(),
            "--store",
            store.to_str().unwrap(),
            "--db-url",
            &url,
        ]);
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains("coal_no_such_database"),
            "{}",
            stderr(&out)
        );
        assert_eq!(builds(), count);
    }
}
