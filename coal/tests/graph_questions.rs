//! Questions the graph tiers must survive, on small fixture statutes: a law the store does
//! not hold, an impossible date, a question that links nothing, a law without divisions, a
//! chapter of one article, a cycle of citations, a concept defined by two laws.

mod common;

use common::{ask_json, build, coal, fixture, stderr};

fn store(dir: &std::path::Path) -> String {
    let s = dir.join("store");
    build(&s, &fixture("graph"));
    s.to_str().unwrap().to_owned()
}

#[test]
fn a_law_the_store_does_not_hold_and_an_impossible_date_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    // Asked for its article, as a lookup, with a tier forced, or inside another question:
    // refused, with the law named.
    let refused = [
        (
            "中华人民共和国火星殖民法第三条的内容是什么？",
            &[][..],
            "火星殖民法》",
        ),
        (
            "中华人民共和国火星殖民法第三条的内容是什么？",
            &["--tier", "3"][..],
            "火星殖民法》",
        ),
        (
            "根据火星殖民法第三条，用人单位要安排劳动者休息吗？",
            &["--tier", "2"][..],
            "火星殖民法》",
        ),
        (
            "根据火星殖民法第三条，用人单位要安排劳动者休息吗？",
            &[][..],
            "火星殖民法》",
        ),
        // Its name ends with a held law's (示范循环法): still not that law.
        (
            "《中华人民共和国火星示范循环法》第三条的内容是什么？",
            &[][..],
            "火星示范循环法》",
        ),
        // Named in 《》, then its article, with a tier forced.
        (
            "《火星殖民法》里第三条是什么？",
            &["--tier", "2"][..],
            "《火星殖民法》",
        ),
    ];
    for (q, extra, law) in refused {
        let out = coal(&[&["ask", "--store", &s][..], extra, &[q]].concat());
        assert!(!out.status.success(), "{q} {extra:?}");
        let err = stderr(&out);
        assert!(err.contains(law), "{q} {extra:?}: {err}");
        assert!(
            err.contains("not a law of this store"),
            "{q} {extra:?}: {err}"
        );
    }
    // Punctuation alone is no question.
    let out = coal(&["ask", "--store", &s, "？？？ ……"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("no words"), "{}", stderr(&out));
    // A pointer back (本法) is no law's name, and a name that could abbreviate a held law
    // (示循法 for 示范循环法) is warned about: neither is refused.
    let a = ask_json(&s, &[], "本法第三条规定劳动者每周休息几天？");
    assert!(!a["warnings"].to_string().contains("本法》"), "{a}");
    let a = ask_json(&s, &[], "示循法第三条规定劳动者每周休息几天？");
    assert!(
        a["warnings"]
            .to_string()
            .contains("《示循法》 is not a law of this store"),
        "{a}"
    );
    // After a separator, a held law's name in 《》 is that law (sociallawqa writes
    // 《社会法-安全生产法》).
    let a = ask_json(
        &s,
        &[],
        "这家单位是否符合《社会法-示范循环法》第三条的规定？",
    );
    assert!(
        a["citations"]
            .to_string()
            .contains("示范循环法/2021-01-01/art_3"),
        "{a}"
    );
    // Beside an article of a law it holds, the unknown one is only warned about.
    let a = ask_json(&s, &[], "示范循环法第三条和火星殖民法第三条有什么不同？");
    assert!(
        a["warnings"]
            .to_string()
            .contains("《火星殖民法》 is not a law of this store"),
        "{a}"
    );
    assert!(a["citations"].to_string().contains("示范循环法"), "{a}");
    // Named in passing, an unknown law is warned about, and the question answered.
    let out = coal(&[
        "ask",
        "--store",
        &s,
        "按照《火星殖民法》，用人单位要安排劳动者休息吗？",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("《火星殖民法》 is not a law of this store"),
        "{}",
        stderr(&out)
    );
    for (date, why) in [
        ("2020-13-45", "no month 13"),
        ("2023-02-29", "has 28 days"),
        ("20200101", "YYYY-MM-DD"),
    ] {
        let out = coal(&["ask", "--store", &s, "--as-of", date, "劳动者休息"]);
        assert!(!out.status.success(), "{date}");
        assert!(
            stderr(&out).contains("impossible") && stderr(&out).contains(why),
            "{date}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn awkward_graphs_and_questions_get_a_tier_a_trace_and_an_answer_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let questions = [
        // links nothing in the graph
        "今天晚饭吃什么好？",
        // a law without divisions
        "家政服务机构拖欠报酬怎么办？",
        // a chapter of one article (第三章 法律责任)
        "用人单位不安排休息休假要承担什么法律责任？",
        // 第二条 and 第三条 cite each other
        "劳动者每周休息几天，休息时间怎么安排？",
        // 劳动者 is defined by both laws
        "什么是劳动者？",
    ];
    for q in questions {
        for (forced, extra) in [
            (None, &[][..]),
            (Some(3), &["--tier", "3"][..]),
            (Some(4), &["--tier", "4"][..]),
        ] {
            let a = ask_json(&s, extra, q);
            let tier = a["tier"].as_u64().unwrap();
            if let Some(t) = forced {
                assert_eq!(tier, t, "{q}: {a}");
            }
            assert_eq!(a["kind"], "applicable_articles", "{q}: {a}");
            assert!(a["trace"]["complexity"].is_object(), "{q}: {a}");
            let answer = a["answer"].as_str().unwrap();
            assert!(!answer.is_empty(), "{q}");
            if a["citations"].as_array().unwrap().is_empty() {
                assert_eq!(answer, "没有找到可适用的条文。", "{q}: {a}");
            }
        }
    }
    // The law without divisions and the chapter of one article answer with their article
    // first, in every tier.
    for (q, article) in [
        (questions[1], "示范无章法/2021-01-01/art_3"),
        (questions[2], "示范循环法/2021-01-01/art_5"),
    ] {
        for extra in [&[][..], &["--tier", "3"][..], &["--tier", "4"][..]] {
            let a = ask_json(&s, extra, q);
            let first = a["trace"]["ranked"][0].to_string();
            assert!(first.contains(article), "{q} {extra:?}: {a}");
            assert!(
                a["citations"].to_string().contains(article),
                "{q} {extra:?}: {a}"
            );
        }
    }
    // The question that links nothing says so when a graph tier answers it.
    let a = ask_json(&s, &["--tier", "3"], questions[0]);
    let warnings = a["warnings"].to_string();
    assert!(warnings.contains("links to no node of the graph"), "{a}");
    // The concept defined by two laws links both definitions.
    let a = ask_json(&s, &["--tier", "3"], questions[4]);
    let concepts: Vec<&serde_json::Value> = a["trace"]["links"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["kind"] == "concept")
        .collect();
    assert_eq!(concepts.len(), 2, "{a}");
    // The cycle is walked without looping: both articles of it are reached.
    let a = ask_json(&s, &["--tier", "3"], questions[3]);
    let ranked = a["trace"]["ranked"].to_string();
    assert!(ranked.contains("art_2") && ranked.contains("art_3"), "{a}");
    // --explain prints the links and paths.
    let out = coal(&[
        "ask",
        "--store",
        &s,
        "--tier",
        "3",
        "--explain",
        questions[3],
    ]);
    let text = common::stdout(&out);
    assert!(
        text.contains("links to the graph:") && text.contains("graph paths:"),
        "{text}"
    );
}

#[test]
fn coal_graph_reports_what_the_query_side_loads_and_its_cost() {
    let dir = tempfile::tempdir().unwrap();
    let s = store(dir.path());
    let out = coal(&["graph", "--store", &s, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["laws"], 2, "{v}");
    // Two laws, five and three articles: containment and the cycle's citations.
    assert_eq!(v["nodes_by_kind"]["article"], 8, "{v}");
    assert!(v["edges_by_kind"]["contains"].as_u64().unwrap() >= 8, "{v}");
    assert!(v["edges_by_kind"]["cites"].as_u64().unwrap() >= 3, "{v}");
    assert!(v["memory_bytes"].as_u64().unwrap() > 0, "{v}");
    assert!(v["read_ms"].is_f64() && v["build_ms"].is_f64(), "{v}");
    // On Linux the process's growth while loading is measured, not estimated.
    if cfg!(target_os = "linux") {
        assert!(v["resident_growth_bytes"].is_u64(), "{v}");
    }
    let text = common::stdout(&coal(&["graph", "--store", &s]));
    assert!(
        text.contains("loaded in") && text.contains("2 laws"),
        "{text}"
    );
}
