//! `coal ask`, `coal eval answer` and `coal calibrate` on a fixture store.

use super::*;

#[test]
fn ask_answers_an_article_lookup_from_the_graph() {
    let dir = tempfile::tempdir().unwrap();
    let s = ask_store(dir.path());
    let a = ask_json(&s, &[], "示范劳动法第五条的内容是什么？");
    assert_eq!(a["kind"], "article_text", "{a}");
    assert_eq!(a["citations"].as_array().unwrap().len(), 1);
    assert_eq!(a["citations"][0]["label"], "第五条");
    assert!(
        a["answer"]
            .as_str()
            .unwrap()
            .contains("违反本法第三条规定的"),
        "{a}"
    );
    // An article that does not exist: said so, nothing cited, nothing invented.
    let a = ask_json(&s, &[], "示范劳动法第九百条的内容是什么？");
    assert_eq!(a["kind"], "no_such_article", "{a}");
    assert!(
        a["answer"].as_str().unwrap().contains("没有第九百条"),
        "{a}"
    );
    assert!(a["citations"].as_array().unwrap().is_empty());
}

#[test]
fn ask_routes_every_tier_and_cites_only_articles_of_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let s = ask_store(dir.path());
    let question = "用人单位违反订立劳动合同的原则，要承担什么责任？";
    for tier in ["1", "2", "3", "4"] {
        let a = ask_json(&s, &["--tier", tier], question);
        assert_eq!(a["tier"].to_string(), tier, "{a}");
        let cites = a["citations"].as_array().unwrap();
        assert!(!cites.is_empty(), "tier {tier}: {a}");
        for c in cites {
            let iri = c["iri"].as_str().unwrap();
            let q = format!("ASK {{ <{iri}> a coal:Article }}");
            let out = coal(&["sparql", "--store", &s, "--format", "json", &q]);
            let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(
                v["boolean"], true,
                "tier {tier} cites {iri}, not an article"
            );
        }
        let cx = &a["trace"]["complexity"];
        let c = cx["c_final"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&c), "{cx}");
        assert_eq!(cx["intrinsic"]["dimensions"].as_array().unwrap().len(), 5);
        if tier == "3" {
            assert!(!a["trace"]["graph"].as_array().unwrap().is_empty(), "{a}");
        }
        if tier == "2" {
            // Tier 2 ranks the re-ranked union of BM25, bigram BM25 and dense first.
            let t = &a["trace"];
            assert!(!t["bigram"].as_array().unwrap().is_empty(), "{a}");
            assert_eq!(t["ranked"][0], t["reranked"][0]["iri"], "{a}");
            // The trace times the query embedding apart from each vector search.
            for stage in ["bm25", "embed", "dense", "paragraphs"] {
                assert!(t["timings_ms"][stage].as_f64().is_some(), "{stage}: {a}");
            }
        }
    }
    // Routed: the explanation names every score.
    let out = coal(&["ask", "--store", &s, "--explain", question]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for needle in [
        "C_base",
        "QSI",
        "RDI",
        "C_consistency",
        "C_final",
        "reranked:",
        "引用",
        "timings",
    ] {
        assert!(text.contains(needle), "{needle} missing: {text}");
    }
}

#[test]
fn ask_rejects_empty_questions_and_survives_huge_and_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let s = ask_store(dir.path());
    for q in ["", "   \n\t"] {
        let out = coal(&["ask", "--store", &s, q]);
        assert!(!out.status.success());
        assert!(stderr(&out).contains("empty"), "{}", stderr(&out));
    }
    // ~100 kB (one argument may not exceed 128 kB).
    let huge = "劳动合同".repeat(8_500);
    let out = coal(&["ask", "--store", &s, &huge]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("only the first 2000"),
        "{}",
        stderr(&out)
    );
    let out = coal(&[
        "ask",
        "--store",
        &s,
        "What are the principles of labour contracts?",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no Chinese characters"),
        "{}",
        stderr(&out)
    );
    let out = coal(&["ask", "--store", &s, "劳动\u{7}合同\u{1b}[31m的订立原则"]);
    assert!(
        !stderr(&out).contains("no Chinese characters"),
        "{}",
        stderr(&out)
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("第三条"), "{}", stdout(&out));
}

/// `coal eval answer --json` of one set on a store, with `extra` arguments.
fn eval_answer_json(store: &str, set: &std::path::Path, extra: &[&str]) -> serde_json::Value {
    let mut args = vec![
        "eval",
        "answer",
        "--store",
        store,
        "--set",
        set.to_str().unwrap(),
        "--json",
    ];
    args.extend_from_slice(extra);
    let out = coal(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn eval_answer_scores_routed_and_ablated_answers_side_by_side() {
    let dir = tempfile::tempdir().unwrap();
    let s = ask_store(dir.path());
    let set = eval_fixture("answers.jsonl");
    let r = eval_answer_json(&s, &set, &["--variants", "routed,tier1,top10"]);
    let routed = &r["answers"]["routed"];
    assert_eq!(routed["questions"], 3, "{r}");
    assert_eq!(routed["with_gold"], 3);
    assert_eq!(routed["invalid_citations"], 0);
    // Every gold article is cited; the lookup answer is the article text itself.
    assert_eq!(routed["recall"].as_f64().unwrap(), 1.0, "{routed}");
    assert!(routed["rouge1"].as_f64().unwrap() > 0.4, "{routed}");
    // The lookup question's first (only) citation is its gold article.
    assert!(
        routed["hit_at_1"].as_f64().unwrap() >= 1.0 / 3.0 - 1e-9,
        "{routed}"
    );
    // The routed ranking's top 10 holds the (at most 10) context articles and more.
    let r10 = routed["recall_at_10"].as_f64().unwrap();
    assert!(
        r10 >= routed["recall"].as_f64().unwrap() && r10 <= 1.0,
        "{routed}"
    );
    // Ten articles for three gold ones: precision falls, recall stays.
    let top10 = &r["answers"]["fixed top-10"];
    assert_eq!(
        top10["recall_at_10"], top10["recall"],
        "the same ten articles: {top10}"
    );
    assert!(top10["precision"].as_f64().unwrap() < routed["precision"].as_f64().unwrap());
    assert_eq!(r["answers"]["tier 1"]["tiers"]["1"], 3);
    // By question type: every question counted once, the per-type figures averaging
    // back to the run's; routed, the lookup is answered from the graph before routing.
    assert!(
        r["answers"]["routed"]["by_type"]["ArticleLookup (graph)"]["questions"] == 1,
        "{r}"
    );
    for v in ["routed", "tier 1", "fixed top-10"] {
        let run = &r["answers"][v];
        let types = run["by_type"].as_object().unwrap();
        let n: u64 = types
            .values()
            .map(|t| t["questions"].as_u64().unwrap())
            .sum();
        assert_eq!(n, 3, "{run}");
        let weighted = |key: &str| -> f64 {
            types
                .values()
                .map(|t| t[key].as_f64().unwrap() * t["questions"].as_f64().unwrap())
                .sum::<f64>()
                / 3.0
        };
        assert!(
            (weighted("f1") - run["f1"].as_f64().unwrap()).abs() < 1e-9,
            "{run}"
        );
        assert!(
            (weighted("mean_context") - run["mean_context"].as_f64().unwrap()).abs() < 1e-9,
            "{run}"
        );
    }
    let table = coal(&[
        "eval",
        "answer",
        "--store",
        &s,
        "--set",
        set.to_str().unwrap(),
        "--variants",
        "routed",
        "--by-type",
    ]);
    assert!(table.status.success(), "{}", stderr(&table));
    let text = stdout(&table);
    assert!(
        text.contains("| set | question type | variant |")
            && text.contains("| answers | ArticleLookup (graph) | routed | 1 |"),
        "{text}"
    );
    let bad = coal(&[
        "eval",
        "answer",
        "--store",
        &s,
        "--set",
        set.to_str().unwrap(),
        "--variants",
        "tier9",
    ]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("unknown `tier9`"), "{}", stderr(&bad));
}

#[test]
fn calibrate_writes_a_config_that_ask_reads_and_never_overwrites() {
    let dir = tempfile::tempdir().unwrap();
    let s = ask_store(dir.path());
    let set = eval_fixture("answers.jsonl");
    let written = dir.path().join("calibrated.toml");
    let w = written.to_str().unwrap();
    let args = [
        "calibrate",
        "--store",
        &s,
        "--set",
        set.to_str().unwrap(),
        "--write",
        w,
        "--json",
    ];
    let out = coal(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["questions"], 3);
    assert!(c["best_f1"].as_f64().unwrap() >= c["default_f1"].as_f64().unwrap());
    for t in 0..4 {
        assert!(c["best_f1"].as_f64().unwrap() >= c["forced_f1"][t].as_f64().unwrap() - 1e-9);
    }
    // The context arithmetic calibrate searches with is the context stage's own.
    assert_eq!(c["recomputed_mismatches"], 0, "{c}");
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.starts_with("[method]"), "{text}");
    for key in ["cliff_sigma", "context_min", "context_max"] {
        assert!(text.contains(key), "{text}");
    }
    // What calibrate promises for its constants is what `eval answer` measures with them.
    let r = eval_answer_json(&s, &set, &["--variants", "routed", "--config", w]);
    let measured = r["answers"]["routed"]["f1"].as_f64().unwrap();
    let promised = c["best_f1"].as_f64().unwrap();
    assert!(
        (measured - promised).abs() < 1e-9,
        "{measured} vs {promised}"
    );
    // Each question's observations, one line each, with every forced tier's ranking.
    let obs_file = dir.path().join("observations.jsonl");
    let out = coal(&[
        "calibrate",
        "--store",
        &s,
        "--set",
        set.to_str().unwrap(),
        "--observations",
        obs_file.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("best: "), "{}", stdout(&out));
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&obs_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert!(
        lines
            .iter()
            .all(|l| l["runs"].as_array().unwrap().len() == 4)
    );
    assert!(
        lines
            .iter()
            .any(|l| !l["runs"][1]["ranked"].as_array().unwrap().is_empty())
    );
    // Each line names its set and counts its gold articles, and the gold matching marks
    // some ranked article of some tier as gold (the fixture's retrieval finds them).
    assert!(
        lines
            .iter()
            .all(|l| l["set"] == "answers" && l["golds"].as_u64() >= Some(1))
    );
    let gold_ranked = |l: &serde_json::Value| {
        l["runs"].as_array().unwrap().iter().any(|r| {
            r["ranked"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["gold"].as_u64() != Some(0))
        })
    };
    assert!(lines.iter().any(gold_ranked), "{lines:?}");
    let a = coal(&[
        "ask",
        "--store",
        &s,
        "--config",
        w,
        "--json",
        "订立劳动合同应当遵循哪些原则？",
    ]);
    assert!(a.status.success(), "{}", stderr(&a));
    // A second run does not overwrite the file.
    let again = coal(&args);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("exists"), "{}", stderr(&again));
    // A bad constant is named.
    std::fs::write(dir.path().join("bad.toml"), "[method]\ngamma = 2.0\n").unwrap();
    let bad = dir.path().join("bad.toml");
    let out = coal(&[
        "ask",
        "--store",
        &s,
        "--config",
        bad.to_str().unwrap(),
        "劳动合同",
    ]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("method.gamma"), "{}", stderr(&out));
}

#[test]
fn ask_as_of_a_date_cites_the_version_then_in_force() {
    let dir = tempfile::tempdir().unwrap();
    let s = ask_store(dir.path());
    let question = "妇女享有哪些平等权利？";
    let date = |a: &serde_json::Value| {
        a["citations"][0]["version_date"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let before = ask_json(&s, &["--as-of", "2019-06-01"], question);
    let after = ask_json(&s, &["--as-of", "2023-06-01"], question);
    assert_eq!(date(&before), "2018-10-26", "{before}");
    assert_eq!(date(&after), "2022-10-30", "{after}");
    for a in [&before, &after] {
        let d = date(a);
        assert!(
            a["citations"]
                .as_array()
                .unwrap()
                .iter()
                .all(|c| c["version_date"] == d.as_str()),
            "{a}"
        );
    }
    // Article lookup picks the version too, and says when a law was not yet in force.
    let a = ask_json(
        &s,
        &["--as-of", "2019-06-01"],
        "示范保障法第二条的内容是什么？",
    );
    assert!(
        a["answer"]
            .as_str()
            .unwrap()
            .contains("妇女享有与男子平等的权利"),
        "{a}"
    );
    let a = ask_json(
        &s,
        &["--as-of", "2023-06-01"],
        "示范保障法第二条的内容是什么？",
    );
    assert!(a["answer"].as_str().unwrap().contains("基本国策"), "{a}");
    let a = ask_json(
        &s,
        &["--as-of", "2010-01-01"],
        "示范保障法第二条的内容是什么？",
    );
    assert!(a["answer"].as_str().unwrap().contains("尚未施行"), "{a}");
    assert!(a["citations"].as_array().unwrap().is_empty());
    let bad = coal(&["ask", "--store", &s, "--as-of", "2019/06/01", question]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("YYYY-MM-DD"), "{}", stderr(&bad));
}

#[test]
fn fit_rerank_writes_a_model_that_eval_retrieval_measures_as_promised() {
    let dir = tempfile::tempdir().unwrap();
    let s = ask_store(dir.path());
    let set = eval_fixture("answers.jsonl");
    let written = dir.path().join("rerank.toml");
    let w = written.to_str().unwrap();
    let dumped = dir.path().join("candidates.jsonl");
    let args = [
        "fit-rerank",
        "--store",
        &s,
        "--set",
        set.to_str().unwrap(),
        "--write",
        w,
        "--candidates",
        dumped.to_str().unwrap(),
        "--json",
    ];
    let out = coal(&args);
    assert!(out.status.success(), "{}", stderr(&out));
    let c: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c["in_sample"][0]["questions"], 3, "{c}");
    let model = c["model"].as_object().unwrap();
    assert_eq!(model.len(), 17, "intercept + 16 weights: {c}");
    // The dumped candidates: one line a question, 16 features a candidate, and the gold
    // article among the candidates of a question whose retrievers found it.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&dumped)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{lines:?}");
    for q in &lines {
        let iris = q["iris"].as_array().unwrap();
        assert!(!iris.is_empty(), "{q}");
        assert_eq!(q["features"].as_array().unwrap().len(), iris.len());
        assert_eq!(q["hand"].as_array().unwrap().len(), iris.len());
        assert!(
            q["features"]
                .as_array()
                .unwrap()
                .iter()
                .all(|f| f.as_array().unwrap().len() == 16)
        );
    }
    assert!(
        lines.iter().any(|q| q["gold"][0]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| q["iris"].as_array().unwrap().contains(g))),
        "{lines:?}"
    );
    assert!(
        model
            .values()
            .all(|v| v.as_f64().is_some_and(f64::is_finite))
    );
    let text = std::fs::read_to_string(&written).unwrap();
    assert!(text.starts_with("[method]"), "{text}");
    assert!(
        text.contains("[method.rerank_learned]") && text.contains("dense_gap"),
        "{text}"
    );
    // What fit-rerank reports for the hand weights and for its model is what `eval
    // retrieval` measures for tier 2's re-ranking without and with the written file.
    let recall = |extra: &[&str]| {
        let mut a = vec![
            "eval",
            "retrieval",
            "--store",
            &s,
            "--set",
            set.to_str().unwrap(),
            "--json",
        ];
        a.extend_from_slice(extra);
        let out = coal(&a);
        assert!(out.status.success(), "{}", stderr(&out));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        r["answers"]["reranked"]["metrics"]["recall_at"]["10"]
            .as_f64()
            .unwrap()
    };
    let hand = c["in_sample"][0]["hand_recall"].as_f64().unwrap();
    let learned = c["in_sample"][0]["learned_recall"].as_f64().unwrap();
    assert!((recall(&[]) - hand).abs() < 1e-9, "hand {hand}");
    assert!(
        (recall(&["--config", w]) - learned).abs() < 1e-9,
        "learned {learned}"
    );
    // Two folds under a learned re-ranking fit it on each fold's half as well.
    let folds = |config: &str| -> serde_json::Value {
        let out = coal(&[
            "calibrate",
            "--store",
            &s,
            "--set",
            set.to_str().unwrap(),
            "--config",
            config,
            "--two-folds",
            "--json",
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let refit = folds(w);
    assert_eq!(refit["two_folds_refit_rerank"], true, "{refit}");
    // Each fold's constants hold a re-ranking of its own, neither the one fitted on all
    // three questions.
    let model = |f: &serde_json::Value, i: usize| {
        f["two_folds"][i]["fitted"]["best"]["rerank_learned"].clone()
    };
    let everywhere = c["model"].clone();
    assert!(model(&refit, 0).is_object(), "{refit}");
    assert_ne!(model(&refit, 0), model(&refit, 1));
    assert_ne!(model(&refit, 0), everywhere);
    assert_ne!(model(&refit, 1), everywhere);
    let plain = folds("/dev/null");
    assert_eq!(plain["two_folds_refit_rerank"], false, "{plain}");
    assert!(model(&plain, 0).is_null(), "{plain}");
    for f in [&refit, &plain] {
        let two = f["two_folds"].as_array().unwrap();
        assert_eq!(two.len(), 2, "{f}");
        // Items 0 and 2 fit the even fold, item 1 the odd one; each reports the others.
        let n = |i: usize| two[i]["held_out"][0][1]["questions"].as_u64().unwrap();
        assert_eq!((n(0), n(1)), (1, 2), "{f}");
    }
    // `ask` reads the model.
    let a = coal(&[
        "ask",
        "--store",
        &s,
        "--config",
        w,
        "--json",
        "订立劳动合同应当遵循哪些原则？",
    ]);
    assert!(a.status.success(), "{}", stderr(&a));
    // Tier 3's scoring, fitted with that tier-2 model in place: both models are written,
    // and tier 3 reads its own.
    let graph = dir.path().join("graph.toml");
    let out = coal(&[
        "fit-rerank",
        "--tier",
        "3",
        "--store",
        &s,
        "--set",
        set.to_str().unwrap(),
        "--config",
        w,
        "--write",
        graph.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("tier 3's scoring"),
        "{}",
        stdout(&out)
    );
    let text3 = std::fs::read_to_string(&graph).unwrap();
    assert!(
        text3.contains("[method.graph_learned]") && text3.contains("[method.rerank_learned]"),
        "{text3}"
    );
    let t3 = ask_json(
        &s,
        &["--config", graph.to_str().unwrap(), "--tier", "3"],
        "订立劳动合同应当遵循哪些原则？",
    );
    // Tier 3 scored by its model: probability ratios, the best at exactly 1.
    let scores: Vec<f64> = t3["trace"]["graph"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["score"].as_f64().unwrap())
        .collect();
    assert_eq!(scores.first(), Some(&1.0), "{scores:?}");
    assert!(scores.iter().all(|s| *s > 0.0 && *s <= 1.0), "{scores:?}");
    assert!(
        !coal(&[
            "fit-rerank",
            "--tier",
            "4",
            "--store",
            &s,
            "--set",
            set.to_str().unwrap()
        ])
        .status
        .success()
    );
    // A second run does not overwrite the file.
    let again = coal(&args);
    assert!(!again.status.success());
    assert!(stderr(&again).contains("exists"), "{}", stderr(&again));
    // A bad weight is named.
    std::fs::write(&written, text.replace("law_size = ", "law_size = nan\n#")).unwrap();
    let bad = coal(&[
        "ask",
        "--store",
        &s,
        "--config",
        w,
        "订立劳动合同应当遵循哪些原则？",
    ]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("rerank_learned"), "{}", stderr(&bad));
}
