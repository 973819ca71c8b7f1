//! `coal publish` and `--endpoint`: a build's graphs pushed to a SPARQL 1.1 Graph Store
//! Protocol endpoint and read back through its query endpoint.
//!
//! The real server is Virtuoso Open Source 7 (Debian's `virtuoso-opensource`, which runs
//! DBpedia's endpoint): `.ci/run` starts one (`scripts/virtuoso.sh`) and sets
//! `COAL_TEST_VIRTUOSO_URL` and `COAL_REQUIRE_VIRTUOSO=1`. The failure cases (refused
//! writes, a 500 halfway, a timeout) run against a scripted in-memory Graph Store server.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use common::{build, coal, corpus_of as corpus, statutes as fixtures, stderr, stdout};

fn publish(store: &Path, endpoint: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "publish",
        "--store",
        store.to_str().unwrap(),
        "--endpoint",
        endpoint,
        "--json",
    ];
    args.extend_from_slice(extra);
    coal(&args)
}

fn report(out: &std::process::Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", stderr(out));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `coal sparql` as sorted CSV lines, from the store or from `--endpoint`.
fn rows(source: &[&str], query: &str) -> Vec<String> {
    let mut args = vec!["sparql", "--format", "csv"];
    args.extend_from_slice(source);
    args.push(query);
    let out = coal(&args);
    assert!(out.status.success(), "{query}: {}", stderr(&out));
    let text = stdout(&out).replace("\r\n", "\n");
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

const QUERIES: &[&str] = &[
    "SELECT ?law (COUNT(?a) AS ?n) WHERE { ?v a coal:LawVersion ; coal:title ?law . ?v coal:contains+ ?a . ?a a coal:Article } GROUP BY ?law",
    "SELECT ?a ?text WHERE { ?a a coal:Article ; coal:text ?text } ",
    "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } FILTER(STRSTARTS(STR(?g), \"https://w3id.org/coal/\") && !STRSTARTS(STR(?g), \"https://w3id.org/coal/graph/published\")) } GROUP BY ?g",
    "ASK { ?r a coal:Reference }",
    "CONSTRUCT { ?a coal:label ?l } WHERE { ?a a coal:Article ; coal:label ?l }",
];

#[test]
fn virtuoso_takes_a_published_build_and_answers_as_the_store_does() {
    let Ok(base) = std::env::var("COAL_TEST_VIRTUOSO_URL") else {
        assert!(
            std::env::var_os("COAL_REQUIRE_VIRTUOSO").is_none(),
            "COAL_REQUIRE_VIRTUOSO is set but COAL_TEST_VIRTUOSO_URL is not (scripts/virtuoso.sh starts a server and prints it)"
        );
        eprintln!("no Virtuoso server (COAL_TEST_VIRTUOSO_URL): nothing to run");
        return;
    };
    let crud = format!("{base}/sparql-graph-crud");
    let sparql = format!("{base}/sparql");
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(
        dir.path(),
        &[
            "示范劳动法(2020-01-01).md",
            "versions/示范保障法(2018-10-26).md",
        ],
    );
    let store = dir.path().join("store");
    build(&store, &corpus);
    let s = store.to_str().unwrap();
    let first = report(&publish(&store, &crud, &[]));
    let graphs = first["graphs"].as_u64().unwrap();
    assert!(graphs >= 5, "{first}");
    assert_eq!(
        first["written"].as_array().unwrap().len() as u64,
        graphs,
        "{first}"
    );
    // Nothing changed: nothing is sent.
    let again = report(&publish(&store, &crud, &[]));
    assert_eq!(again["written"], serde_json::json!([]), "{again}");
    assert_eq!(again["kept"].as_u64(), Some(graphs));

    let compare = |label: &str, laws: &[&str]| {
        let mut queries: Vec<String> = QUERIES.iter().map(|q| q.to_string()).collect();
        for f in [
            "examples/labor-contract-chapters.rq",
            "examples/fusion-merges.rq",
        ] {
            queries.push(
                std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(f))
                    .unwrap(),
            );
        }
        for q in &queries {
            let local = rows(&["--store", s], q);
            let remote = rows(&["--endpoint", &sparql], q);
            assert!(!local.is_empty(), "{q}");
            assert_eq!(local, remote, "{label}: {q}");
        }
        // The query engine's version history, read through the endpoint.
        for &law in laws {
            let h = |src: &[&str]| {
                let mut args = vec!["history", law, "--json"];
                args.extend_from_slice(src);
                let out = coal(&args);
                assert!(out.status.success(), "{}", stderr(&out));
                serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
            };
            assert_eq!(
                h(&["--store", s]),
                h(&["--endpoint", &sparql]),
                "{label}: {law}"
            );
        }
    };
    compare("first publish", &["示范保障法", "示范劳动法"]);

    // The law gains a version and the other law leaves the corpus: only what changed is
    // sent, the removed law's graphs are deleted, and the endpoint matches the store.
    std::fs::remove_file(corpus.join("示范劳动法(2020-01-01).md")).unwrap();
    std::fs::copy(
        fixtures().join("versions/示范保障法(2022-10-30).md"),
        corpus.join("示范保障法(2022-10-30).md"),
    )
    .unwrap();
    build(&store, &corpus);
    let third = report(&publish(&store, &crud, &[]));
    let written = third["written"].as_array().unwrap().len();
    assert!(
        written >= 2 && (written as u64) < third["graphs"].as_u64().unwrap(),
        "{third}"
    );
    let deleted = third["deleted"].as_array().unwrap();
    assert!(!deleted.is_empty(), "{third}");
    assert!(
        deleted
            .iter()
            .all(|g| !g.as_str().unwrap().contains("示范保障法")),
        "{third}"
    );
    compare("after the change", &["示范保障法"]);
    let diff = |src: &[&str]| {
        let mut args = vec!["diff", "示范保障法", "--json"];
        args.extend_from_slice(src);
        let out = coal(&args);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    // Virtuoso writes doubles with six significant digits: similarities to four places.
    let rounded = |mut d: serde_json::Value| {
        for c in d["changes"].as_array_mut().unwrap() {
            let x = c["similarity"].as_f64().unwrap();
            c["similarity"] = serde_json::json!((x * 1e4).round() / 1e4);
        }
        d
    };
    assert_eq!(
        rounded(diff(&["--store", s])),
        rounded(diff(&["--endpoint", &sparql]))
    );
    // An update through --endpoint is refused here (the endpoint is read-only for coal).
    let out = coal(&[
        "sparql",
        "--endpoint",
        &sparql,
        "--allow-update",
        "INSERT DATA { <http://ex/a> <http://ex/b> <http://ex/c> }",
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("read-only"), "{}", stderr(&out));
}

/// A scripted Graph Store Protocol server in memory: graphs by IRI, a write budget after
/// which it answers 500, an optional refusal of all writes and an optional delay.
#[derive(Default)]
struct ScriptedGraphStore {
    graphs: Mutex<BTreeMap<String, Vec<u8>>>,
    writes_left: Mutex<Option<usize>>,
    refuse_writes: std::sync::atomic::AtomicBool,
    delay: Mutex<Option<Duration>>,
}

impl wiremock::Respond for &'static ScriptedGraphStore {
    fn respond(&self, req: &wiremock::Request) -> wiremock::ResponseTemplate {
        use wiremock::ResponseTemplate as R;
        let graph = req
            .url
            .query_pairs()
            .find(|(k, _)| k == "graph")
            .map(|(_, v)| v.into_owned())
            .unwrap_or_default();
        let delay = self.delay.lock().unwrap().unwrap_or_default();
        let method = req.method.as_str();
        if method != "GET" {
            if self.refuse_writes.load(std::sync::atomic::Ordering::SeqCst) {
                return R::new(401).set_body_string("writes need credentials");
            }
            let mut left = self.writes_left.lock().unwrap();
            if let Some(n) = left.as_mut() {
                if *n == 0 {
                    return R::new(500).set_body_string("the disk is full");
                }
                *n -= 1;
            }
        }
        let mut graphs = self.graphs.lock().unwrap();
        let r = match method {
            "GET" => match graphs.get(&graph) {
                Some(body) => R::new(200)
                    .insert_header("content-type", "application/n-triples")
                    .set_body_bytes(body.clone()),
                None => R::new(404),
            },
            "PUT" => {
                graphs.insert(graph, req.body.clone());
                R::new(201)
            }
            "DELETE" => match graphs.remove(&graph) {
                Some(_) => R::new(204),
                None => R::new(404),
            },
            _ => R::new(405),
        };
        r.set_delay(delay)
    }
}

#[test]
fn protocol_publish_stops_clearly_on_refusals_500s_and_timeouts_then_completes_on_a_rerun() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(wiremock::MockServer::start());
    let state: &'static ScriptedGraphStore = Box::leak(Box::default());
    rt.block_on(
        wiremock::Mock::given(wiremock::matchers::path("/crud"))
            .respond_with(state)
            .mount(&server),
    );
    let crud = format!("{}/crud", server.uri());
    let dir = tempfile::tempdir().unwrap();
    let corpus = corpus(
        dir.path(),
        &[
            "示范劳动法(2020-01-01).md",
            "versions/示范保障法(2018-10-26).md",
        ],
    );
    let store = dir.path().join("store");
    build(&store, &corpus);
    let current = || std::fs::read(store.join("CURRENT")).unwrap();
    let before = current();

    // Refused writes: the status and the server's words, nothing written.
    state
        .refuse_writes
        .store(true, std::sync::atomic::Ordering::SeqCst);
    let out = publish(&store, &crud, &[]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("401") && err.contains("writes need credentials"),
        "{err}"
    );
    assert!(err.contains("can be run again"), "{err}");
    assert!(state.graphs.lock().unwrap().is_empty());
    state
        .refuse_writes
        .store(false, std::sync::atomic::Ordering::SeqCst);

    // A 500 after three writes (the pending manifest and two graphs).
    *state.writes_left.lock().unwrap() = Some(3);
    let out = publish(&store, &crud, &[]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("500") && stderr(&out).contains("the disk is full"));
    {
        let graphs = state.graphs.lock().unwrap();
        assert_eq!(graphs.len(), 3, "the manifest and two graphs");
        let manifest =
            String::from_utf8(graphs["https://w3id.org/coal/graph/published"].clone()).unwrap();
        // Every graph of the build is on record as unfinished.
        assert!(manifest.contains("publishedDigest> \"\""), "{manifest}");
    }

    // A server slower than --timeout-secs.
    *state.writes_left.lock().unwrap() = None;
    *state.delay.lock().unwrap() = Some(Duration::from_secs(3));
    let out = publish(&store, &crud, &["--timeout-secs", "1"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no answer within the time limit"),
        "{}",
        stderr(&out)
    );
    *state.delay.lock().unwrap() = None;

    // The rerun completes: every graph of the build, the same triples, a final manifest.
    let done = report(&publish(&store, &crud, &[]));
    let graphs = done["graphs"].as_u64().unwrap() as usize;
    assert_eq!(done["written"].as_array().unwrap().len(), graphs, "{done}");
    let local = rows(
        &["--store", store.to_str().unwrap()],
        "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
    );
    {
        let held = state.graphs.lock().unwrap();
        assert_eq!(
            held.len(),
            graphs + 1,
            "the build's graphs and the manifest"
        );
        for line in local.iter().filter(|l| l.starts_with("http")) {
            let (g, n) = line.rsplit_once(',').unwrap();
            let body = String::from_utf8(held[g].clone()).unwrap();
            assert_eq!(body.lines().count().to_string(), n, "{g}");
        }
        assert!(
            !String::from_utf8(held["https://w3id.org/coal/graph/published"].clone())
                .unwrap()
                .contains("publishedDigest> \"\"")
        );
    }
    let again = report(&publish(&store, &crud, &[]));
    assert_eq!(again["written"], serde_json::json!([]));
    assert_eq!(current(), before, "the local build is untouched");

    // Bad endpoints: one sentence each.
    for (endpoint, needle) in [
        ("ftp://example.org/crud", "not an http(s) URL"),
        ("http://127.0.0.1:1/crud", "cannot connect"),
    ] {
        let out = publish(&store, endpoint, &[]);
        assert!(!out.status.success());
        assert!(
            stderr(&out).contains(needle),
            "{endpoint}: {}",
            stderr(&out)
        );
    }
    let out = coal(&[
        "sparql",
        "--endpoint",
        "http://127.0.0.1:1/sparql",
        "ASK {}",
    ]);
    assert!(stderr(&out).contains("cannot connect"), "{}", stderr(&out));
    let out = coal(&["sparql", "--endpoint", &crud, "SELEC nothing"]);
    assert!(stderr(&out).contains("SPARQL syntax"), "{}", stderr(&out));
}
