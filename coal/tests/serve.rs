//! `coal serve` run for real: the binary on a loopback port over a real store, spoken to
//! over HTTP (SPARQL 1.1 Protocol, Graph Store Protocol reads, the JSON API, abuse).

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{coal, stderr};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/tests/fixtures")
}

/// A running `coal serve`; killed when dropped.
struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(store: &Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_coal"))
        .args([
            "serve",
            "--store",
            store.to_str().unwrap(),
            "--bind",
            "127.0.0.1:0",
        ])
        .args(extra)
        .env_remove("COAL_STORE")
        .env(
            "COAL_MODEL",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/models/e5-small-q4.bin"),
        )
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let Some(base) = line.trim().strip_prefix("listening on ") else {
        let mut err = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        panic!("coal serve did not start: {line}{err}");
    };
    Server {
        base: base.to_owned(),
        child,
    }
}

/// A store of the two versions of 示范保障法 and 示范劳动法.
fn store(dir: &Path) -> PathBuf {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(corpus.join("versions")).unwrap();
    for f in [
        "示范劳动法(2020-01-01).md",
        "versions/示范保障法(2018-10-26).md",
        "versions/示范保障法(2022-10-30).md",
    ] {
        std::fs::copy(fixtures().join(f), corpus.join(f)).unwrap();
    }
    let store = dir.join("store");
    common::build(&store, &corpus);
    store
}

fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

fn get(url: &str, accept: &str) -> reqwest::blocking::Response {
    client().get(url).header("Accept", accept).send().unwrap()
}

fn enc(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// GET `url` asking for `accept`: a 200 in that media type, its body.
fn negotiated(url: &str, accept: &str) -> String {
    let r = get(url, accept);
    assert_eq!(r.status(), 200, "{accept}");
    let media = r.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(media.starts_with(accept), "{accept}: {media}");
    r.text().unwrap()
}

const COUNT_ARTICLES: &str = "SELECT (COUNT(?a) AS ?n) WHERE { ?a a coal:Article }";

fn json_count(r: reqwest::blocking::Response) -> u64 {
    let v: serde_json::Value = r.json().unwrap();
    v["results"]["bindings"][0]["n"]["value"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn serve_speaks_the_sparql_protocol_in_every_result_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let s = serve(&store, &["--max-rows", "5"]);
    let q = format!("{}/query?query={}", s.base, enc(COUNT_ARTICLES));
    // GET, POST form and POST application/sparql-query give one answer.
    let r = get(&q, "application/sparql-results+json");
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["content-type"],
        "application/sparql-results+json"
    );
    let articles = json_count(r);
    assert!(articles >= 5, "{articles}");
    let form = client()
        .post(format!("{}/query", s.base))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(format!("query={}", enc(COUNT_ARTICLES)))
        .send()
        .unwrap();
    assert_eq!(json_count(form), articles);
    let direct = client()
        .post(format!("{}/query", s.base))
        .header("Content-Type", "application/sparql-query")
        .body(COUNT_ARTICLES)
        .send()
        .unwrap();
    assert_eq!(json_count(direct), articles);
    // The four result formats.
    for (accept, needle) in [
        ("application/sparql-results+xml", "<sparql"),
        ("text/csv", "n\r\n"),
        ("text/tab-separated-values", "?n\n"),
    ] {
        let body = negotiated(&q, accept);
        assert!(body.contains(needle), "{accept}: {body}");
        assert!(body.contains(&articles.to_string()), "{accept}: {body}");
    }
    let ask = get(
        &format!(
            "{}/query?query={}",
            s.base,
            enc("ASK { ?a a coal:Article }")
        ),
        "application/sparql-results+json",
    );
    assert_eq!(ask.json::<serde_json::Value>().unwrap()["boolean"], true);
    // CONSTRUCT in every RDF syntax.
    let construct = format!(
        "{}/query?query={}",
        s.base,
        enc("CONSTRUCT { ?v coal:title ?t } WHERE { ?v a coal:LawVersion ; coal:title ?t }")
    );
    for (accept, needle) in [
        ("text/turtle", "coal:title"),
        ("application/n-triples", "<https://"),
        ("application/rdf+xml", "rdf:RDF"),
        ("application/ld+json", "\"@id\""),
    ] {
        let body = negotiated(&construct, accept);
        assert!(
            body.contains(needle) && body.contains("示范保障法"),
            "{accept}: {body}"
        );
    }
    // default-graph-uri: one version's graph instead of the union.
    let graphs = get(
        &format!(
            "{}/query?query={}",
            s.base,
            enc("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?a a coal:Article } } ORDER BY ?g")
        ),
        "application/sparql-results+json",
    )
    .json::<serde_json::Value>()
    .unwrap();
    let first = graphs["results"]["bindings"][0]["g"]["value"]
        .as_str()
        .unwrap()
        .to_owned();
    let one = json_count(get(
        &format!("{q}&default-graph-uri={}", enc(&first)),
        "application/sparql-results+json",
    ));
    assert!(one > 0 && one < articles, "{one} of {articles} in {first}");
    // Graph Store Protocol reads.
    let g = get(
        &format!("{}/store?graph={}", s.base, enc(&first)),
        "text/turtle",
    );
    assert_eq!(g.status(), 200);
    // The graph has more triples than this server's 5-row limit.
    assert_eq!(g.headers()["coal-results-truncated"], "5");
    let turtle = g.text().unwrap();
    assert!(
        turtle.contains("@prefix coal:") && turtle.contains(&first),
        "{turtle}"
    );
    let missing = get(
        &format!("{}/store?graph={}", s.base, enc("https://example.org/none")),
        "text/turtle",
    );
    assert_eq!(missing.status(), 404);
    // A result past the row limit is cut and says so.
    let big = get(
        &format!(
            "{}/query?query={}",
            s.base,
            enc("SELECT * WHERE { ?a ?b ?c . ?d ?e ?f }")
        ),
        "application/sparql-results+json",
    );
    assert_eq!(big.headers()["coal-results-truncated"], "5");
    let v: serde_json::Value = big.json().unwrap();
    assert_eq!(v["results"]["bindings"].as_array().unwrap().len(), 5);
    // Health and metrics count what was asked.
    let h: serde_json::Value = get(&format!("{}/healthz", s.base), "*/*").json().unwrap();
    assert_eq!(h["status"], "ok");
    let m = get(&format!("{}/metrics", s.base), "*/*").text().unwrap();
    assert!(
        m.contains("coal_requests_total{route=\"/query\",status=\"200\"}"),
        "{m}"
    );
}

#[test]
fn serve_refuses_bad_requests_clearly_and_keeps_answering() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let s = serve(
        &store,
        &[
            "--query-timeout-secs",
            "1",
            "--header-timeout-secs",
            "1",
            "--max-body-bytes",
            "65536",
        ],
    );
    let query = |q: &str| {
        get(
            &format!("{}/query?query={}", s.base, enc(q)),
            "application/sparql-results+json",
        )
    };
    // Malformed SPARQL: 400 with the parser's message and position.
    let r = query("SELECT ?a WHERE { ?a ?b }");
    assert_eq!(r.status(), 400);
    let body = r.text().unwrap();
    assert!(
        body.contains("SPARQL syntax") && body.contains("1:"),
        "{body}"
    );
    // UPDATE: refused at /query, and /update is closed without --allow-update.
    let r = query("INSERT DATA { <http://ex/a> <http://ex/b> <http://ex/c> }");
    assert_eq!(r.status(), 400);
    assert!(r.text().unwrap().contains("/update"));
    let r = client()
        .post(format!("{}/update", s.base))
        .header("Content-Type", "application/sparql-update")
        .body("INSERT DATA { <http://ex/a> <http://ex/b> <http://ex/c> }")
        .send()
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(r.text().unwrap().contains("--allow-update"));
    // A format nobody writes: 406; a body over the limit: 413.
    assert_eq!(
        get(
            &format!("{}/query?query={}", s.base, enc("ASK {}")),
            "image/png"
        )
        .status(),
        406
    );
    let r = client()
        .post(format!("{}/query", s.base))
        .header("Content-Type", "application/sparql-query")
        .body(format!("ASK {{}} #{}", "x".repeat(100_000)))
        .send()
        .unwrap();
    assert_eq!(r.status(), 413);
    // A query past the time limit is cancelled (503) and the next one is answered.
    let started = Instant::now();
    let r = query("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }");
    assert_eq!(r.status(), 503);
    assert!(r.text().unwrap().contains("limit"));
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(query(COUNT_ARTICLES).status(), 200);
    // A client that trickles its headers is cut off; others are still served.
    let addr = s.base.strip_prefix("http://").unwrap();
    let mut slow = std::net::TcpStream::connect(addr).unwrap();
    slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut buf = Vec::new();
    // The server closes the connection (EOF) within its 1 s header deadline; without
    // one the read would wait out its own 10 s and fail.
    let cut = slow.read_to_end(&mut buf);
    assert!(
        cut.is_ok(),
        "the half-sent request was not cut off: {cut:?}"
    );
    assert_eq!(query(COUNT_ARTICLES).status(), 200);
    // The API: an empty question and an unknown article are the client's errors.
    assert_eq!(get(&format!("{}/api/ask?q=", s.base), "*/*").status(), 400);
    assert_eq!(
        get(
            &format!(
                "{}/api/article?iri={}",
                s.base,
                enc("https://example.org/x")
            ),
            "*/*"
        )
        .status(),
        404
    );
}

#[test]
fn serve_answers_questions_and_walks_articles() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let s = serve(&store, &[]);
    let q = "劳动者享有哪些权利？";
    let a: serde_json::Value = get(
        &format!("{}/api/ask?q={}&explain=true", s.base, enc(q)),
        "*/*",
    )
    .json()
    .unwrap();
    let citations = a["citations"].as_array().unwrap();
    assert!(!citations.is_empty(), "{a}");
    assert!((1..=4).contains(&a["tier"].as_u64().unwrap()), "{a}");
    assert!(a["trace"]["complexity"].is_object(), "{a}");
    // POST gives the same answer as GET, and as `coal ask --json`.
    let post: serde_json::Value = client()
        .post(format!("{}/api/ask", s.base))
        .json(&serde_json::json!({ "question": q }))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(post["citations"], a["citations"]);
    assert!(post.get("trace").is_none());
    let cli = common::ask_json(store.to_str().unwrap(), &[], q);
    assert_eq!(cli["citations"], a["citations"]);
    // The cited article: its text, the hierarchy up to the law, its concepts.
    let iri = citations[0]["iri"].as_str().unwrap();
    let art: serde_json::Value = get(&format!("{}/api/article?iri={}", s.base, enc(iri)), "*/*")
        .json()
        .unwrap();
    assert_eq!(art["article"]["iri"], iri);
    let kinds: Vec<&str> = art["hierarchy"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds.first(), Some(&"LawVersion"), "{art}");
    // Down from the law version: its chapters, in order.
    let law = art["hierarchy"][0]["iri"].as_str().unwrap();
    let node: serde_json::Value = get(&format!("{}/api/node?iri={}", s.base, enc(law)), "*/*")
        .json()
        .unwrap();
    let chapters: Vec<&str> = node["children"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["kind"] == "Chapter")
        .map(|c| c["label"].as_str().unwrap())
        .collect();
    assert_eq!(chapters.first(), Some(&"第一章"), "{node}");
    let by_path: serde_json::Value = get(&format!("{}/api/article/{}", s.base, iri), "*/*")
        .json()
        .unwrap();
    assert_eq!(by_path["article"], art["article"]);
    // Search, history and diff: the CLI's JSON.
    let hits: serde_json::Value = get(&format!("{}/api/search?q={}&k=3", s.base, enc(q)), "*/*")
        .json()
        .unwrap();
    assert_eq!(hits["hits"].as_array().unwrap().len(), 3);
    let h: serde_json::Value = get(
        &format!("{}/api/history/{}", s.base, enc("示范保障法")),
        "*/*",
    )
    .json()
    .unwrap();
    assert_eq!(h.as_array().unwrap().len(), 2, "{h}");
    let d: serde_json::Value = get(&format!("{}/api/diff/{}", s.base, enc("示范保障法")), "*/*")
        .json()
        .unwrap();
    assert!(!d["changes"].as_array().unwrap().is_empty(), "{d}");
    // The page and its assets are served from the binary.
    let page = get(&format!("{}/", s.base), "text/html").text().unwrap();
    assert!(page.contains("labor-contract-chapters.rq") && page.contains("/assets/app.js"));
    assert_eq!(
        get(&format!("{}/assets/app.js", s.base), "*/*").status(),
        200
    );
}

#[test]
fn two_servers_sharing_a_store_pick_up_a_new_build_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    // Two server processes over one store folder, as read replicas sharing it would.
    let s = serve(&store, &[]);
    let s2 = serve(&store, &[]);
    let health_of = |base: &str| -> serde_json::Value {
        get(&format!("{base}/healthz"), "*/*").json().unwrap()
    };
    let health = || health_of(&s.base);
    let before = health()["build"].as_str().unwrap().to_owned();
    assert_eq!(health_of(&s2.base)["build"], before.as_str());
    let count_of = |base: &str| {
        json_count(get(
            &format!("{base}/query?query={}", enc(COUNT_ARTICLES)),
            "application/sparql-results+json",
        ))
    };
    let count = || count_of(&s.base);
    let articles = count();
    // Readers run through the swap; each response names the build it came from
    // (`Coal-Build`) and must carry that build's count, never a mix.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|i| {
            let base = if i % 2 == 0 { &s.base } else { &s2.base };
            let (stop, url) = (
                stop.clone(),
                format!("{base}/query?query={}", enc(COUNT_ARTICLES)),
            );
            std::thread::spawn(move || {
                let mut seen = Vec::new();
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let r = get(&url, "application/sparql-results+json");
                    let build = r.headers()["coal-build"].to_str().unwrap().to_owned();
                    seen.push((build, json_count(r)));
                }
                seen
            })
        })
        .collect();
    // A new law in the corpus, built while the server runs.
    let corpus = dir.path().join("corpus");
    std::fs::write(
        corpus.join("示范新法(2024-01-01).md"),
        "# 中华人民共和国示范新法\n\n<!-- INFO END -->\n\n第一条 为了测试，制定本法。\n\n第二条 本法自公布之日起施行。\n",
    )
    .unwrap();
    common::build(&store, &corpus);
    let deadline = Instant::now() + Duration::from_secs(60);
    while health()["build"] == before.as_str() || health_of(&s2.base)["build"] == before.as_str() {
        assert!(Instant::now() < deadline, "the new build was not picked up");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(count(), articles + 2);
    assert_eq!(count_of(&s2.base), articles + 2);
    assert_eq!(health_of(&s2.base)["build"], health()["build"]);
    assert!(health()["reload_error"].is_null());
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let after = health()["build"].as_str().unwrap().to_owned();
    let mut by_build = std::collections::BTreeMap::new();
    for (build, n) in readers.into_iter().flat_map(|r| r.join().unwrap()) {
        by_build
            .entry(build)
            .or_insert_with(std::collections::BTreeSet::new)
            .insert(n);
    }
    let one = |n: u64| std::collections::BTreeSet::from([n]);
    assert_eq!(by_build.get(&before), Some(&one(articles)), "{by_build:?}");
    assert_eq!(
        by_build.get(&after),
        Some(&one(articles + 2)),
        "{by_build:?}"
    );
    assert_eq!(by_build.len(), 2, "{by_build:?}");
}

/// SPARQL clients from outside the project (PyPI's SPARQLWrapper and rdflib), against a
/// live server: `tests/clients/sparqlwrapper_client.py`. `.ci/run` installs them and sets
/// `COAL_REQUIRE_CLIENTS=1`, which turns their absence into a failure.
#[test]
fn serve_passes_sparqlwrapper_and_rdflib_clients() {
    let have = Command::new("python3")
        .args(["-c", "import SPARQLWrapper, rdflib"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        assert!(
            std::env::var_os("COAL_REQUIRE_CLIENTS").is_none(),
            "COAL_REQUIRE_CLIENTS is set but python3 cannot import SPARQLWrapper and rdflib (pip install SPARQLWrapper rdflib)"
        );
        eprintln!(
            "SPARQLWrapper/rdflib not installed: the external-client test has nothing to run"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let s = serve(&store, &[]);
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/clients/sparqlwrapper_client.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(&s.base)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for check in [
        "select json:",
        "select xml:",
        "select csv:",
        "select tsv:",
        "ask: True",
        "construct turtle:",
        "rdflib SPARQLStore:",
    ] {
        assert!(text.contains(check), "{check} missing from:\n{text}");
    }
}

/// The page in headless Chromium (Debian's `chromium`, driven by playwright-core from
/// `tests/browser`): ask, see citations, follow one to its article, run SPARQL; the
/// screenshots are kept under `target/tmp/browser`. `.ci/run` installs Chromium and the
/// npm package and sets `COAL_REQUIRE_BROWSER=1`, which turns their absence into a failure.
#[test]
fn serve_page_works_in_headless_chromium() {
    let browser_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/browser");
    let have = Path::new("/usr/bin/chromium").is_file()
        && browser_dir.join("node_modules/playwright-core").is_dir();
    if !have {
        assert!(
            std::env::var_os("COAL_REQUIRE_BROWSER").is_none(),
            "COAL_REQUIRE_BROWSER is set but /usr/bin/chromium or tests/browser/node_modules is missing (apt-get install chromium; npm ci --prefix tests/browser)"
        );
        eprintln!("chromium or playwright-core not installed: the page test has nothing to run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let store = store(dir.path());
    let s = serve(&store, &[]);
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("browser");
    let out = Command::new("node")
        .arg(browser_dir.join("page.mjs"))
        .arg(&s.base)
        .arg("劳动者享有哪些权利？")
        .arg(&shots)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for step in ["answer:", "article:", "node:", "diff:", "sparql:"] {
        assert!(text.contains(step), "{step} missing from:\n{text}");
    }
    assert!(
        text.contains("示范保障法") || text.contains("示范劳动法"),
        "{text}"
    );
    for shot in [
        "1-answer.png",
        "2-article.png",
        "3-node.png",
        "4-sparql.png",
    ] {
        let len = std::fs::metadata(shots.join(shot))
            .map(|m| m.len())
            .unwrap_or(0);
        assert!(len > 1000, "{shot}: {len} bytes");
    }
}

#[test]
fn serve_refuses_a_missing_store_and_updates_only_when_allowed() {
    let dir = tempfile::tempdir().unwrap();
    // No build in the folder: a clear error at start-up, not a server with nothing in it.
    let out = coal(&[
        "serve",
        "--store",
        dir.path().join("nothing").to_str().unwrap(),
        "--bind",
        "127.0.0.1:0",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("coal build --store"), "{err}");
    // With --allow-update, /update changes the served graph and /query sees it.
    let store = store(dir.path());
    let s = serve(&store, &["--allow-update"]);
    let r = client()
        .post(format!("{}/update", s.base))
        .header("Content-Type", "application/sparql-update")
        .body("INSERT DATA { GRAPH <https://example.org/notes> { <https://example.org/a> <https://example.org/says> \"注\" } }")
        .send()
        .unwrap();
    assert_eq!(r.status(), 204, "{:?}", r.text());
    let ask = get(
        &format!(
            "{}/query?query={}",
            s.base,
            enc("ASK { <https://example.org/a> <https://example.org/says> \"注\" }")
        ),
        "application/sparql-results+json",
    );
    assert_eq!(ask.json::<serde_json::Value>().unwrap()["boolean"], true);
    let g = get(
        &format!(
            "{}/store?graph={}",
            s.base,
            enc("https://example.org/notes")
        ),
        "application/n-triples",
    );
    assert_eq!(g.status(), 200);
    assert!(g.text().unwrap().contains("<https://example.org/says>"));
}
