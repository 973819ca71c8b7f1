//! Builds: every output format, failures that leave the previous build, bad input,
//! build versions and gc, killed builds, domains, incremental rebuilds.

use std::process::Command;

use super::*;

#[test]
fn build_then_query_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let summary = build(&store, &fixtures().join("versions"));
    assert_eq!(summary["laws"], 1);
    assert_eq!(summary["versions"], 2);
    assert_eq!(summary["articles"], 5);
    assert_eq!(summary["nodes_by_type"]["Article"], 5);
    let s = store.to_str().unwrap();
    let q = r#"SELECT ?label ?date WHERE { ?a a coal:Article ; coal:label ?label ; coal:inLaw ?v . ?v coal:versionDate ?date } ORDER BY ?date ?label"#;

    let table = coal(&["sparql", "--store", s, q]);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(
        text.contains("| ?label") && text.contains("第三条") && text.contains("5 row(s)"),
        "{text}"
    );

    let json = coal(&["sparql", "--store", s, "--format", "json", q]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["results"]["bindings"].as_array().unwrap().len(), 5);
    assert_eq!(v["results"]["bindings"][0]["date"]["value"], "2018-10-26");

    let csv = coal(&["sparql", "--store", s, "--format", "csv", q]);
    assert!(stdout(&csv).starts_with("label,date"), "{}", stdout(&csv));
    let tsv = coal(&["sparql", "--store", s, "--format", "tsv", q]);
    assert!(
        stdout(&tsv).starts_with("?label\t?date"),
        "{}",
        stdout(&tsv)
    );

    let ask = coal(&["sparql", "--store", s, "ASK { ?v coal:supersedes ?old }"]);
    assert_eq!(stdout(&ask).trim(), "true");

    let qfile = dir.path().join("q.rq");
    std::fs::write(
        &qfile,
        "SELECT (COUNT(*) AS ?n) WHERE { ?a a coal:Paragraph }",
    )
    .unwrap();
    let from_file = coal(&[
        "sparql",
        "--store",
        s,
        "--format",
        "csv",
        "--file",
        qfile.to_str().unwrap(),
    ]);
    assert!(stdout(&from_file).contains("\n5"), "{}", stdout(&from_file));

    let construct = coal(&[
        "sparql",
        "--store",
        s,
        "--format",
        "json",
        "CONSTRUCT { ?a coal:label ?l } WHERE { ?a a coal:Article ; coal:label ?l }",
    ]);
    assert!(construct.status.success(), "{}", stderr(&construct));
    assert!(stdout(&construct).contains("第三条"));
}

#[test]
fn update_is_refused_unless_allowed() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    build(&store, &fixtures().join("versions"));
    let s = store.to_str().unwrap();
    let update = "INSERT DATA { GRAPH <http://ex/g> { <http://ex/a> coal:cites <http://ex/b> } }";
    let refused = coal(&["sparql", "--store", s, update]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--allow-update"),
        "{}",
        stderr(&refused)
    );
    assert_eq!(
        stdout(&coal(&[
            "sparql",
            "--store",
            s,
            "ASK { <http://ex/a> ?p ?o }"
        ]))
        .trim(),
        "false"
    );
    let allowed = coal(&["sparql", "--store", s, "--allow-update", update]);
    assert!(allowed.status.success(), "{}", stderr(&allowed));
    assert_eq!(
        stdout(&coal(&[
            "sparql",
            "--store",
            s,
            "ASK { <http://ex/a> ?p ?o }"
        ]))
        .trim(),
        "true"
    );
}

#[test]
fn export_writes_parseable_rdf() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    build(&store, &fixtures().join("versions"));
    let s = store.to_str().unwrap();
    for (format, needle) in [
        (
            "nquads",
            "> <https://w3id.org/coal/eli/cn/示范保障法/2022-10-30> .",
        ),
        ("turtle", "coal:LawVersion"),
        ("trig", "GRAPH"),
    ] {
        let out = coal(&["export", "--store", s, "--format", format]);
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains(needle) || (format == "trig" && text.contains("{")),
            "{format}: no `{needle}`"
        );
        assert!(text.contains("为了保障妇女的合法权益"), "{format}");
    }
}

#[test]
fn a_failed_build_leaves_the_previous_build_queryable() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let first = build(&store, &fixtures().join("versions"));
    let s = store.to_str().unwrap();
    // A profile that names a missing file fails before anything is written.
    let profile = dir.path().join("p.txt");
    std::fs::write(&profile, "不存在(2020-01-01).md\n").unwrap();
    let failed = coal(&[
        "build",
        "--corpus",
        fixtures().to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--store",
        s,
    ]);
    assert!(!failed.status.success());
    assert!(stderr(&failed).contains("p.txt:1"), "{}", stderr(&failed));
    // --strict with a warning in the input fails too.
    let strict = coal(&[
        "build",
        "--corpus",
        fixtures().to_str().unwrap(),
        "--store",
        s,
        "--strict",
    ]);
    assert!(!strict.status.success());
    assert!(stderr(&strict).contains("--strict"), "{}", stderr(&strict));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(store.join("CURRENT")).unwrap()).unwrap();
    assert_eq!(manifest["build"], first["build_id"]);
    let count = coal(&[
        "sparql",
        "--store",
        s,
        "--format",
        "csv",
        "SELECT (COUNT(?a) AS ?n) WHERE { ?a a coal:Article }",
    ]);
    assert!(stdout(&count).contains("\n5"), "{}", stdout(&count));
    // Only the committed build's folder is left.
    assert_eq!(std::fs::read_dir(store.join("builds")).unwrap().count(), 1);
}

#[test]
fn a_second_build_replaces_the_first_for_readers() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let first = build(&store, &fixtures().join("versions"));
    let second = build(&store, &fixtures().join("code"));
    assert_ne!(first["build_id"], second["build_id"]);
    let out = coal(&[
        "sparql",
        "--store",
        store.to_str().unwrap(),
        "--format",
        "csv",
        "SELECT ?n WHERE { ?w a coal:LawWork ; coal:shortName ?n }",
    ]);
    assert_eq!(stdout(&out).replace("\r\n", "\n").trim(), "n\n示范法典");
}

#[test]
fn bad_paths_get_one_clear_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let out = coal(&[
        "build",
        "--corpus",
        "/nonexistent/corpus",
        "--store",
        dir.path().join("s").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out).trim(),
        "error: corpus folder /nonexistent/corpus does not exist"
    );

    let out = coal(&[
        "sparql",
        "--store",
        dir.path().join("missing").to_str().unwrap(),
        "ASK {}",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("run `coal build --store"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("panicked"));

    let file = dir.path().join("f");
    std::fs::write(&file, "x").unwrap();
    let out = coal(&[
        "build",
        "--corpus",
        fixtures().join("versions").to_str().unwrap(),
        "--store",
        file.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("is not a directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bad_files_are_reported_and_the_rest_builds() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    std::fs::copy(
        fixtures().join("versions/示范保障法(2022-10-30).md"),
        corpus.join("示范保障法(2022-10-30).md"),
    )
    .unwrap();
    std::fs::write(corpus.join("empty.md"), "").unwrap();
    std::fs::write(
        corpus.join("gbk.md"),
        [0xb5u8, 0xda, 0xd2, 0xbb, 0xcc, 0xf5],
    )
    .unwrap();
    let out = coal(&[
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--store",
        dir.path().join("s").to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("empty.md: error (file skipped) [empty_file]"),
        "{err}"
    );
    assert!(
        err.contains("gbk.md:1: error (file skipped) [invalid_utf8]"),
        "{err}"
    );
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(summary["articles"], 3);
    assert_eq!(summary["errors_by_kind"]["empty_file"], 1);
}

#[test]
fn help_documents_every_subcommand() {
    let out = coal(&["--help"]);
    let text = stdout(&out);
    for cmd in [
        "build", "sparql", "export", "search", "ask", "eval", "bench",
    ] {
        assert!(text.contains(cmd), "{text}");
    }
    let out = coal(&["build", "--help"]);
    assert!(stdout(&out).contains("--profile") && stdout(&out).contains("--strict"));
}

#[test]
fn builds_lists_build_versions_and_gc_removes_the_unread_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    build(&store, &fixtures().join("versions"));
    build(&store, &fixtures().join("versions"));
    let s = store.to_str().unwrap();
    // What a killed build leaves (its writer is gone), and a build still being written
    // (its writer, this test, is alive).
    let dead = store.join("builds/b0000000001-000000000");
    std::fs::create_dir_all(dead.join("rdf")).unwrap();
    std::fs::write(dead.join("WRITER"), "999999999").unwrap();
    let live = store.join("builds/b0000000002-000000000");
    std::fs::create_dir_all(&live).unwrap();
    std::fs::write(live.join("WRITER"), std::process::id().to_string()).unwrap();
    let list = |s: &str| -> Vec<(String, String)> {
        let out = coal(&["builds", "--store", s, "--json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["id"].as_str().unwrap().to_owned(),
                    b["state"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    let states: Vec<String> = list(s).into_iter().map(|b| b.1).collect();
    assert_eq!(states, ["abandoned", "writing", "previous", "current"]);
    let out = coal(&["gc", "--store", s, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let gc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(gc["removed"].as_array().unwrap().len(), 2, "{gc}");
    // A build is being written: its fresh vectors may be cached with no index naming them.
    assert!(
        gc["embedding_cache"]["Skipped"]
            .as_str()
            .unwrap()
            .contains("being written"),
        "{gc}"
    );
    let states: Vec<String> = list(s).into_iter().map(|b| b.1).collect();
    assert_eq!(states, ["writing", "current"]);
    assert!(!dead.exists() && live.exists());
    // The current build still answers.
    let q = coal(&[
        "sparql",
        "--store",
        s,
        "SELECT (COUNT(?a) AS ?n) WHERE { ?a a coal:Article }",
    ]);
    assert!(stdout(&q).contains('5'), "{}", stdout(&q));
    let zero = coal(&["gc", "--store", s, "--keep", "0"]);
    assert!(!zero.status.success());
}

#[test]
fn a_build_killed_at_any_stage_leaves_the_previous_build_answering() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    build(&store, &fixtures().join("versions"));
    let s = store.to_str().unwrap();
    let count = || {
        let out = coal(&[
            "sparql",
            "--store",
            s,
            "--format",
            "csv",
            "SELECT (COUNT(?a) AS ?n) WHERE { ?a a coal:Article }",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        stdout(&out).lines().nth(1).unwrap().trim().to_owned()
    };
    assert_eq!(count(), "5");
    let profile = eval_fixture("ask_profile.txt");
    let corpus = fixtures();
    let args = [
        "build",
        "--corpus",
        corpus.to_str().unwrap(),
        "--profile",
        profile.to_str().unwrap(),
        "--store",
        s,
    ];
    let stages = [
        "parse",
        "graph",
        "bm25",
        "embed",
        "vectors",
        "statute graph",
        "commit",
    ];
    for stage in stages {
        let mut child = Command::new(env!("CARGO_BIN_EXE_coal"))
            .args(args)
            .env("COAL_TEST_PAUSE_AT", stage)
            .env(
                "COAL_MODEL",
                Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/models/e5-small-q4.bin"),
            )
            .stderr(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut paused = false;
        for line in err.lines() {
            if line.unwrap().contains(&format!("paused at {stage}")) {
                paused = true;
                break;
            }
        }
        assert!(paused, "the build never reached {stage}");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // The previous build answers, whole.
        assert_eq!(count(), "5", "after a kill at {stage}");
        let search = coal(&["search", "--store", s, "--mode", "bm25", "男女平等"]);
        assert!(search.status.success(), "{}", stderr(&search));
    }
    let out = coal(&["builds", "--store", s, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let abandoned = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["state"] == "abandoned")
        .count();
    // Parsing comes before the build's folder exists: that kill leaves nothing behind.
    assert_eq!(abandoned, stages.len() - 1);
    // The next build finishes cleanly and is what readers see; gc clears the remains.
    let out = coal(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(count(), "12");
    let out = coal(&["gc", "--store", s, "--json"]);
    let gc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(gc["removed"].as_array().unwrap().len(), abandoned + 1);
}

#[test]
fn every_current_article_is_in_a_topic_cluster_of_a_domain() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let summary = build(&store, &fixtures().join("versions"));
    assert_eq!(summary["domains"]["articles"], 3, "{}", summary["domains"]);
    assert_eq!(summary["domains"]["reused"], false);
    // Nothing changed: the next build keeps the clusters instead of computing them again.
    let again = build(&store, &fixtures().join("versions"));
    assert_eq!(again["domains"]["reused"], true, "{}", again["domains"]);
    assert_eq!(again["domains"]["changed_share"], 0.0);
    let q = "SELECT (COUNT(DISTINCT ?a) AS ?n) WHERE { ?a coal:inDomain ?t . ?t a coal:Domain ; skos:broader ?d . ?d a coal:Domain ; coal:label ?l }";
    let out = coal(&[
        "sparql",
        "--store",
        store.to_str().unwrap(),
        "--format",
        "csv",
        q,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().nth(1).unwrap().trim(), "3");
}

/// The store's quads in N-Quads, one per line, sorted, without the graph of build records
/// (it names the build).
fn sorted_quads(store: &Path) -> Vec<String> {
    let out = coal(&[
        "export",
        "--store",
        store.to_str().unwrap(),
        "--format",
        "nquads",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut lines: Vec<String> = stdout(&out)
        .lines()
        .filter(|l| !l.ends_with("<https://w3id.org/coal/graph/builds> ."))
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// BM25 hits (old versions included) of a few questions, as (question, article, score).
fn bm25_scores(store: &Path) -> Vec<(String, String, String)> {
    let index = kg_store::Store::open(store, false)
        .unwrap()
        .text_index()
        .unwrap();
    let mut all = Vec::new();
    for q in [
        "妇女的权利",
        "劳动者的权利",
        "国家采取什么措施保障妇女权益",
        "用人单位",
    ] {
        for (iri, score) in index.search(q, 100, true).unwrap() {
            all.push((q.to_owned(), iri, format!("{score:.6}")));
        }
    }
    all.sort();
    assert!(all.len() > 4, "{all:?}");
    all
}

/// The current build's metadata rows, sorted (row ids and order aside).
fn metadata_rows(store: &Path) -> Vec<String> {
    let meta = kg_store::Store::open(store, false)
        .unwrap()
        .metadata(None)
        .unwrap();
    let mut rows: Vec<String> = meta
        .laws()
        .unwrap()
        .iter()
        .map(|r| format!("{r:?}"))
        .chain(
            meta.law_versions()
                .unwrap()
                .iter()
                .map(|r| format!("{r:?}")),
        )
        .chain(
            meta.articles(None)
                .unwrap()
                .iter()
                .map(|r| format!("{r:?}")),
        )
        .collect();
    rows.sort();
    rows
}

/// The statute graph a build wrote (`statute-graph.json`).
fn statute_graph(store: &Path, build: &serde_json::Value) -> serde_json::Value {
    let path = store
        .join("builds")
        .join(build["build_id"].as_str().unwrap())
        .join("statute-graph.json");
    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap()
}

fn s_of(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn names(v: &serde_json::Value) -> Vec<&str> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect()
}

#[test]
fn a_base_build_without_its_bm25_record_is_extended_in_all_but_bm25() {
    // A store whose current build predates the record of what its BM25 index holds: the
    // next build starts from it for the graph and writes the BM25 index whole.
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let corpus = fixtures().join("versions");
    let first = build(&store, &corpus);
    let first_dir = store
        .join("builds")
        .join(first["build_id"].as_str().unwrap());
    std::fs::remove_file(first_dir.join("bm25-laws.json")).unwrap();
    let second = build(&store, &corpus);
    let r = &second["reuse"];
    assert_eq!(r["base_build"], first["build_id"], "{r}");
    assert!(r["bm25_laws_reindexed"].is_null(), "{r}");
    assert_eq!(r["metadata_laws_copied"], 1, "{r}");
    assert_eq!(bm25_scores(&store).len(), {
        let scratch = dir.path().join("scratch");
        build(&scratch, &corpus);
        bm25_scores(&scratch).len()
    });
    assert!(
        first_dir.join("bm25/meta.json").exists(),
        "the base build is untouched"
    );
}

#[test]
fn an_incremental_rebuild_rewrites_only_what_changed_and_equals_a_build_from_scratch() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("corpus");
    std::fs::create_dir_all(&corpus).unwrap();
    for f in [
        "示范劳动法(2020-01-01).md",
        "versions/示范保障法(2018-10-26).md",
    ] {
        let from = fixtures().join(f);
        std::fs::copy(&from, corpus.join(from.file_name().unwrap())).unwrap();
    }
    // A law that cites the one about to change: its references must follow the new version.
    std::fs::write(
        corpus.join("示范引用法(2023-01-01).md"),
        "# 示范引用法\n\n<!-- INFO END -->\n\n第一条 妇女的权利依照《示范保障法》第二条的规定。\n\n\
         第二条 劳动者的权利依照《示范劳动法》第二条的规定。\n\n\
         第三条 本法所称权利人，是指依照本法享有权利的妇女和劳动者。\n\n\
         第四条 权利人可以依法申请保护。\n",
    )
    .unwrap();
    let store = dir.path().join("store");
    let first = build(&store, &corpus);
    assert!(first["reuse"]["base_build"].is_null(), "{}", first["reuse"]);
    let first_id = first["build_id"].as_str().unwrap().to_owned();

    // The new version of 示范保障法 arrives.
    std::fs::copy(
        fixtures().join("versions/示范保障法(2022-10-30).md"),
        corpus.join("示范保障法(2022-10-30).md"),
    )
    .unwrap();
    let second = build(&store, &corpus);
    let r = &second["reuse"];
    assert_eq!(r["base_build"], first_id.as_str(), "{r}");
    assert_eq!(r["laws_unchanged"], 1, "{r}");
    assert_eq!(names(&r["laws_changed"]), ["示范保障法"], "{r}");
    assert_eq!(names(&r["laws_relinked"]), ["示范引用法"], "{r}");
    assert!(names(&r["laws_added"]).is_empty() && names(&r["laws_removed"]).is_empty());
    // Kept: 示范劳动法's work and version graphs, 示范引用法's work graph and the fusion
    // graph (no concept is defined twice here). Written:
    // 示范保障法's work (a new version), its 2018 version (it gains an end of validity)
    // and its 2022 version, 示范引用法's version (references), the domains, the build record.
    assert_eq!(r["graphs_kept"], 4, "{r}");
    assert_eq!(r["graphs_written"], 6, "{r}");
    // Only the new version's texts are embedded; the index is extended, not rebuilt.
    let e = &second["embeddings"];
    assert_eq!(e["embedded"], 3, "{e}");
    assert_eq!(e["index"]["extended"], true, "{e}");
    assert_eq!(e["index"]["inserted"], 3, "{e}");
    assert_eq!(
        e["index"]["reused"],
        e["passages"].as_u64().unwrap() - 3,
        "{e}"
    );

    // The same corpus built from scratch holds exactly the same graph.
    let scratch = dir.path().join("scratch");
    let full = build(&scratch, &corpus);
    assert!(full["reuse"]["base_build"].is_null());
    assert_eq!(sorted_quads(&store), sorted_quads(&scratch));
    assert_eq!(second["triples"], full["triples"]);
    // The statute graph took 示范劳动法's hierarchy from the first build's snapshot (its
    // version graph was kept) and queried the other two; it is the scratch build's.
    assert_eq!(r["statute_graph_reused"], 1, "{r}");
    let links = statute_graph(&store, &second)["concepts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            c["defined_by"].as_array().unwrap().len() + c["mentioned_by"].as_array().unwrap().len()
        })
        .sum::<usize>();
    assert!(links >= 2, "the fixture defines and mentions a concept");
    // BM25 re-indexed the changed law's group (these few laws make one group), the
    // metadata copied the other two laws' rows; both hold what the scratch build's hold.
    assert_eq!(r["bm25_laws_reindexed"], 3, "{r}");
    assert_eq!(r["metadata_laws_copied"], 2, "{r}");
    assert_eq!(bm25_scores(&store), bm25_scores(&scratch));
    assert_eq!(metadata_rows(&store), metadata_rows(&scratch));
    assert_eq!(
        statute_graph(&store, &second),
        statute_graph(&scratch, &full)
    );
    // The citing law now cites the 2022 version.
    let cited = coal(&[
        "sparql",
        "--store",
        store.to_str().unwrap(),
        "--format",
        "csv",
        "SELECT ?t WHERE { ?r a coal:Reference ; coal:rawText ?raw ; coal:refersTo ?t . FILTER(CONTAINS(?raw, \"示范保障法\")) }",
    ]);
    assert!(stdout(&cited).contains("2022-10-30"), "{}", stdout(&cited));
    // The article diff of the two versions, counted by hand: 第一条 and 第二条 reworded,
    // 第三条 new.
    let diff = coal(&["diff", "--store", s_of(&store), "示范保障法", "--json"]);
    let diff: serde_json::Value = serde_json::from_slice(&diff.stdout).unwrap();
    assert_eq!(
        diff["counts"],
        serde_json::json!([["added", 1], ["modified", 2]]),
        "nothing removed or renumbered: {diff}"
    );
    // Dense search sees the new version and not the old one.
    let out = coal(&[
        "search",
        "--store",
        store.to_str().unwrap(),
        "--mode",
        "dense",
        "--json",
        "--k",
        "1",
        "国家采取什么措施保障妇女权益",
    ]);
    let hits: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hits[0]["article"]["label"], "第三条", "{hits}");

    // A build changed by SPARQL UPDATE is not a base: the next build starts from scratch.
    let s = store.to_str().unwrap();
    let update = "INSERT DATA { GRAPH <http://ex/g> { <http://ex/a> coal:cites <http://ex/b> } }";
    assert!(
        coal(&["sparql", "--store", s, "--allow-update", update])
            .status
            .success()
    );
    let third = build(&store, &corpus);
    assert!(third["reuse"]["base_build"].is_null(), "{}", third["reuse"]);
    assert_eq!(sorted_quads(&store), sorted_quads(&scratch));
    // Unchanged input, unchanged store: everything kept.
    let fourth = build(&store, &corpus);
    assert_eq!(fourth["reuse"]["laws_unchanged"], 3, "{}", fourth["reuse"]);
    assert_eq!(
        fourth["reuse"]["graphs_written"], 1,
        "only the build record"
    );
    assert_eq!(fourth["embeddings"]["index"]["inserted"], 0);
    assert_eq!(sorted_quads(&store), sorted_quads(&scratch));
    assert_eq!(fourth["reuse"]["statute_graph_reused"], 3);
    assert_eq!(fourth["reuse"]["bm25_laws_reindexed"], 0);
    assert_eq!(fourth["reuse"]["metadata_laws_copied"], 3);
    assert_eq!(bm25_scores(&store), bm25_scores(&scratch));
    assert_eq!(metadata_rows(&store), metadata_rows(&scratch));
    assert_eq!(
        statute_graph(&store, &fourth),
        statute_graph(&scratch, &full)
    );
    let bad = coal(&[
        "build",
        "--corpus",
        s_of(&corpus),
        "--store",
        s,
        "--recluster-share",
        "2",
    ]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("--recluster-share 2"),
        "{}",
        stderr(&bad)
    );
}
