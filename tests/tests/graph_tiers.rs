//! The graph tiers on real statutes, with the real embedding model: question → graph
//! linking, path retrieval (tier 3) and graph-text verification (tier 4), each drop on a
//! real pair of statutes.

use std::sync::OnceLock;

use kg_store::Store;
use query_engine::engine::{AskOptions, Engine};
use query_engine::graph::paths::{Bounds, Scratch, ShortestPaths, describe};
use query_engine::link::LinkKind;
use query_engine::method::MethodConfig;

const ELI: &str = "https://w3id.org/coal/eli/cn/";

/// 劳动合同法 and 劳动法, 著作权法 and 计算机软件保护条例 (which defers to it by name),
/// 妇女权益保障法 in its 2018 and 2022 versions.
const FILES: &[&str] = &[
    "社会法/劳动合同法(2012-12-28).md",
    "社会法/劳动法(2018-12-29).md",
    "民法商法/著作权法(2020-11-11).md",
    "行政法规/计算机软件保护条例(2013-01-30).md",
    "社会法/妇女权益保障法(2018-10-26).md",
    "社会法/妇女权益保障法(2022-10-30).md",
];

fn model() -> coal_models::LocalE5 {
    coal_models::load_default_e5(None, 2, false).expect("the embedding model (make model)")
}

fn store_dir() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let e = model();
        let dir = coal_tests::process_tempdir();
        coal_tests::build_files_into(&dir, FILES, Some(&e), kg_build::ArticleVectors::default());
        dir
    })
}

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let store = Store::open(store_dir().join("store"), false).unwrap();
        Engine::open(&store, Some(Box::new(model())), MethodConfig::default()).unwrap()
    })
}

/// An engine over `files` alone, built and opened without embeddings: for checks of the
/// graph and the verification that no text search takes part in.
fn text_only_engine(files: &[&str]) -> Engine {
    let dir = coal_tests::process_tempdir();
    coal_tests::build_files_into(&dir, files, None, kg_build::ArticleVectors::default());
    let store = Store::open(dir.join("store"), false).unwrap();
    Engine::open(&store, None, MethodConfig::default()).unwrap()
}

fn tier(t: u8) -> AskOptions {
    AskOptions {
        force_tier: Some(t),
        ..AskOptions::default()
    }
}

#[test]
fn the_query_graph_holds_the_builds_hierarchy_and_walks_it() {
    let g = engine().graph();
    assert_eq!(g.laws.len(), 5);
    // Every 条, 款 and 项 is found by its IRI, 之N included.
    let mut provisions = 0;
    for n in g.graph.node_indices() {
        if g.kind(n).is_provision() {
            assert_eq!(g.provision(&g.iri(n)), Some(n), "{}", g.iri(n));
            provisions += 1;
        }
    }
    assert!(provisions > 1_000, "{provisions}");
    // 劳动合同法 第八十七条 cites 第四十七条 (the 经济补偿标准): one step.
    let a87 = g
        .get(&format!("{ELI}劳动合同法/2012-12-28/art_87"))
        .unwrap();
    let a47 = g
        .get(&format!("{ELI}劳动合同法/2012-12-28/art_47"))
        .unwrap();
    let mut scratch = Scratch::new(g);
    let from = ShortestPaths::from(g, a87, Bounds::default(), &mut scratch);
    let path = describe(g, a87, &from.path(a47).unwrap());
    assert_eq!(
        path,
        "《劳动合同法》第八十七条 → 第八十七条第一款 → cites → 第四十七条"
    );
    // Neighbours in document order are one step apart; without that edge two articles of
    // one chapter are two hops apart, through the chapter.
    let a46 = g
        .get(&format!("{ELI}劳动合同法/2012-12-28/art_46"))
        .unwrap();
    let steps = from.path(a46).map(|s| s.len());
    let from46 = ShortestPaths::from(g, a46, Bounds::default(), &mut scratch);
    let next = describe(g, a46, &from46.path(a47).unwrap());
    assert_eq!(next, "《劳动合同法》第四十六条 → next → 第四十七条");
    let no_order = Bounds {
        adjacent_cost: 10.0,
        ..Bounds::default()
    };
    let from46 = ShortestPaths::from(g, a46, no_order, &mut scratch);
    let via_chapter = describe(g, a46, &from46.path(a47).unwrap());
    assert_eq!(
        via_chapter,
        "《劳动合同法》第四十六条 → 第四章 劳动合同的解除和终止 → 第四十七条"
    );
    assert!(steps.is_some());
    // The graph's memory and load time are measured.
    assert!(g.stats.memory_bytes > 0 && engine().graph_load_ms() > 0.0);
}

#[test]
fn a_question_links_to_laws_articles_concepts_and_topics_with_evidence() {
    let a = engine()
        .ask(
            "劳动合同法第四十七条规定的经济补偿按什么标准计算？",
            &tier(3),
        )
        .unwrap();
    let links = &a.trace.links;
    let find = |k: LinkKind| links.iter().filter(move |l| l.kind == k);
    let article = find(LinkKind::Article).next().expect("the named article");
    assert!(
        article.iri.ends_with("劳动合同法/2012-12-28/art_47"),
        "{links:?}"
    );
    assert!(article.evidence.contains("article named"), "{article:?}");
    let law = find(LinkKind::Law).next().expect("the named law");
    assert_eq!(law.name, "《劳动合同法》");
    let topic = find(LinkKind::Topic)
        .next()
        .expect("a topic by the embedding");
    assert!(topic.evidence.contains("cosine"), "{topic:?}");
    // D_aug comes from the graph's domains of the links.
    let cx = a.trace.complexity.as_ref().unwrap();
    assert!(!cx.intrinsic.decomposition.domains.is_empty(), "{cx:?}");
    // The named article is cited first.
    assert!(a.citations[0].iri.ends_with("art_47"), "{:?}", a.citations);
}

#[test]
fn tier_three_ranks_by_graph_paths_and_explains_them() {
    let q = "用人单位违反本法规定解除劳动合同的，应当向劳动者支付多少赔偿金？";
    let a = engine().ask(q, &tier(3)).unwrap();
    assert_eq!(a.tier, 3);
    assert!(!a.trace.graph.is_empty());
    assert!(!a.trace.paragraphs.is_empty(), "款 vectors are searched");
    assert!(!a.trace.paths.is_empty(), "{:?}", a.trace);
    for p in &a.trace.paths {
        assert!(p.path.contains(" → ") || p.cost == 0.0, "{p:?}");
        assert!(a.trace.ranked.contains(&p.article));
    }
    let cited: Vec<&str> = a.citations.iter().map(|c| c.iri.as_str()).collect();
    assert!(
        cited
            .iter()
            .any(|c| c.ends_with("劳动合同法/2012-12-28/art_87")),
        "{cited:?}"
    );
    // Tier 3 reaches articles through the graph that tier 2's lists did not hold.
    let t2 = engine().ask(q, &tier(2)).unwrap();
    assert_ne!(a.trace.ranked, t2.trace.ranked);
}

#[test]
fn tier_four_drops_a_provision_that_yields_to_a_named_law_in_play() {
    // 计算机软件保护条例 第二十三条: 除《中华人民共和国著作权法》或者本条例另有规定外….
    let cond = format!("{ELI}计算机软件保护条例/2013-01-30/art_23");
    let law = format!("{ELI}著作权法/2020-11-11/art_52");
    let (kept, dropped, governs) = engine()
        .verify_candidates(
            "根据著作权法，侵犯软件著作权要承担什么责任？",
            &[&law, &cond],
        )
        .unwrap();
    assert_eq!(kept, vec![law.clone()]);
    assert_eq!(dropped.len(), 1);
    assert_eq!(dropped[0].iri, cond);
    assert!(
        dropped[0].reason.contains("yields to 《著作权法》"),
        "{dropped:?}"
    );
    assert!(
        dropped[0]
            .edge
            .as_deref()
            .unwrap()
            .contains("coal:defersTo"),
        "{dropped:?}"
    );
    assert!(governs[0].reason.contains("governs"), "{governs:?}");
    // Without 著作权法 in play the regulation stands.
    let (kept, dropped, _) = engine()
        .verify_candidates("这种行为要承担什么责任？", &[&cond])
        .unwrap();
    assert_eq!((kept.len(), dropped.len()), (1, 0), "{dropped:?}");
}

#[test]
fn tier_four_drops_a_general_deferral_when_a_statute_of_that_rank_ranks_above() {
    // 劳动合同法 第九十六条: 事业单位…法律、行政法规或者国务院另有规定的，依照其规定.
    let general = format!("{ELI}劳动合同法/2012-12-28/art_96");
    let statute = format!("{ELI}劳动法/2018-12-29/art_16");
    let (kept, dropped, _) = engine()
        .verify_candidates(
            "事业单位与聘用制工作人员解除劳动合同依照什么规定？",
            &[&statute, &general],
        )
        .unwrap();
    assert_eq!(kept, vec![statute.clone()], "{dropped:?}");
    assert!(
        dropped[0].reason.contains("yields to 《劳动法》"),
        "{dropped:?}"
    );
    assert!(
        dropped[0]
            .edge
            .as_deref()
            .unwrap()
            .contains("OverrideClause")
    );
    // Ranked above the statute, the deferring article stays.
    let (kept, _, _) = engine()
        .verify_candidates(
            "事业单位与聘用制工作人员解除劳动合同依照什么规定？",
            &[&general, &statute],
        )
        .unwrap();
    assert_eq!(kept.len(), 2);
}

#[test]
fn tier_four_drops_a_superseded_version_and_articles_on_no_path_from_the_question() {
    let old = format!("{ELI}妇女权益保障法/2018-10-26/art_2");
    let new = format!("{ELI}妇女权益保障法/2022-10-30/art_2");
    let (kept, dropped, _) = engine()
        .verify_candidates("妇女享有哪些权利？", &[&new, &old])
        .unwrap();
    assert_eq!(kept, vec![new]);
    assert_eq!(dropped[0].reason, "a superseded version of its law");
    assert!(
        dropped[0]
            .edge
            .as_deref()
            .unwrap()
            .contains("2022-10-30 coal:supersedes"),
        "{dropped:?}"
    );
    // The question names 劳动合同法: an article of 著作权法 past the first three is on no
    // path from it.
    let art = |law: &str, n: u32| format!("{ELI}{law}/art_{n}");
    let candidates = [
        art("劳动合同法/2012-12-28", 46),
        art("劳动合同法/2012-12-28", 47),
        art("劳动合同法/2012-12-28", 87),
        art("著作权法/2020-11-11", 10),
        art("劳动合同法/2012-12-28", 48),
    ];
    let refs: Vec<&str> = candidates.iter().map(String::as_str).collect();
    let (kept, dropped, _) = engine()
        .verify_candidates("劳动合同法规定的经济补偿怎么算？", &refs)
        .unwrap();
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].iri, candidates[3]);
    assert!(
        dropped[0].reason.contains("on no graph path"),
        "{dropped:?}"
    );
    assert!(dropped[0].reason.contains("《劳动合同法》"), "{dropped:?}");
    assert_eq!(kept.len(), 4);
    // Without a named law or article, a concept of the question does not mark out where
    // the answer lies: the same candidates are all kept.
    let question = "用人单位支付经济补偿怎么算？";
    let links = engine().ask(question, &tier(4)).unwrap().trace.links;
    assert!(
        links.iter().any(|l| l.kind == LinkKind::Concept),
        "{links:?}"
    );
    assert!(
        !links
            .iter()
            .any(|l| matches!(l.kind, LinkKind::Law | LinkKind::Article)),
        "{links:?}"
    );
    let (kept, dropped, _) = engine().verify_candidates(question, &refs).unwrap();
    assert!(dropped.is_empty(), "{dropped:?}");
    assert_eq!(kept.len(), 5);
}

#[test]
fn a_linked_heading_the_text_does_not_support_is_left_out_and_named_in_the_trace() {
    // 「法律责任」 links the 法律责任 chapter of every law here (six laws: on the whole
    // corpus it heads too many chapters to link at all); the text finds the software
    // regulation's, not 妇女权益保障法's.
    let q = "侵犯计算机软件著作权的，应当承担什么法律责任？";
    for t in [3, 4] {
        let a = engine().ask(q, &tier(t)).unwrap();
        let headings = a
            .trace
            .links
            .iter()
            .filter(|l| l.kind == LinkKind::Heading && l.name.ends_with("法律责任"))
            .count();
        assert!(headings >= 4, "{:?}", a.trace.links);
        assert!(
            a.trace
                .links
                .iter()
                .any(|l| l.kind == LinkKind::Heading && l.iri.contains("计算机软件保护条例")),
            "{:?}",
            a.trace.links
        );
        let left_out = &a.trace.unconfirmed_headings;
        assert!(
            left_out
                .iter()
                .any(|h| h == "《妇女权益保障法》第九章 法律责任"),
            "{left_out:?}"
        );
        assert!(
            !left_out
                .iter()
                .any(|h| h.starts_with("《计算机软件保护条例》")),
            "{left_out:?}"
        );
        let all_headings = a
            .trace
            .links
            .iter()
            .filter(|l| l.kind == LinkKind::Heading)
            .count();
        assert!(left_out.len() < all_headings, "{left_out:?}");
        // The chapter left out sends no article into the top 10.
        assert!(
            a.trace.ranked[..10]
                .iter()
                .all(|iri| !iri.contains("/妇女权益保障法/")),
            "{:?}",
            a.trace.ranked
        );
    }
    // Tier 2 walks no graph: nothing is left out.
    let a = engine().ask(q, &tier(2)).unwrap();
    assert!(a.trace.unconfirmed_headings.is_empty());
}

#[test]
fn every_tier_answers_with_a_reason_and_cites_only_the_store() {
    for q in [
        "今天天气怎么样？",
        "劳动者",
        "单位不给加班费，还扣了我三个月工资，能不能去仲裁？",
    ] {
        for t in 1..=4 {
            let a = engine().ask(q, &tier(t)).unwrap();
            assert_eq!(a.tier, t);
            assert!(!a.answer.is_empty());
            for c in &a.citations {
                assert!(engine().is_article(&c.iri), "{}", c.iri);
            }
        }
    }
}

#[test]
fn start_up_loads_in_parallel_and_reports_an_encoder_that_fails() {
    let store = Store::open(store_dir().join("store"), false).unwrap();
    // Every stage of the start-up is timed, the encoder's among them.
    let names: Vec<&str> = engine().open_ms().iter().map(|(n, _)| *n).collect();
    for stage in ["encoder", "vectors", "款 vectors", "graph", "linker"] {
        assert!(names.contains(&stage), "{names:?}");
    }
    // An encoder that does not load is an error that says why, not a panic.
    let failed = Engine::open_loading(
        &store,
        || Err("model file truncated".into()),
        MethodConfig::default(),
    );
    match failed {
        Err(query_engine::QueryError::Encoder(m)) => assert!(m.contains("truncated"), "{m}"),
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("opened without its encoder"),
    }
    // Without an encoder the engine opens (the graph and BM25 load), and a question that
    // needs dense search says what is missing.
    let text_only = Engine::open_loading(&store, || Ok(None), MethodConfig::default()).unwrap();
    assert_eq!(text_only.graph().laws.len(), engine().graph().laws.len());
    let e = text_only
        .ask(
            "用人单位解除劳动合同应当支付经济补偿吗？",
            &AskOptions::default(),
        )
        .unwrap_err();
    assert!(e.to_string().contains("embedding model"), "{e}");
}

#[test]
fn tier_four_drops_an_older_interpretation_a_newer_one_prevails_over() {
    // 危害生产安全刑事案件 解释（二）(2022) 第十二条: 此前发布的司法解释与本解释不一致的，
    // 以本解释为准 — over the 2015 interpretation of the same matter, built beside it.
    let engine = text_only_engine(&[
        "司法解释/最高人民法院、最高人民检察院关于办理危害生产安全刑事案件适用法律若干问题的解释(2015-12-14).md",
        "司法解释/最高人民法院、最高人民检察院关于办理危害生产安全刑事案件适用法律若干问题的解释（二）(2022-12-15).md",
    ]);
    let law = |newer: bool| {
        engine
            .graph()
            .laws
            .iter()
            .find(|l| l.title.contains("危害生产安全") && l.title.contains("（二）") == newer)
            .unwrap_or_else(|| panic!("{:?}", engine.graph().laws))
            .version_iri
            .clone()
    };
    // The same rule in both: 强令他人违章冒险作业 (2015 第五条, 2022 第一条).
    let (old, new) = (
        format!("{}/art_5", law(false)),
        format!("{}/art_1", law(true)),
    );
    let q = "强令他人违章冒险作业包括哪些情形？";
    let (kept, dropped, _) = engine.verify_candidates(q, &[&new, &old]).unwrap();
    assert_eq!(kept, vec![new.clone()], "{dropped:?}");
    assert_eq!(dropped.len(), 1, "{dropped:?}");
    assert_eq!(dropped[0].iri, old);
    assert!(
        dropped[0].reason.contains("prevails over it") && dropped[0].reason.contains("为准"),
        "{dropped:?}"
    );
    assert!(
        dropped[0].edge.as_deref().unwrap().contains("以本法为准"),
        "{dropped:?}"
    );
    // Without the newer interpretation in play the older one stands; the newer one is
    // never dropped for the older.
    let (kept, dropped, _) = engine.verify_candidates(q, &[&old]).unwrap();
    assert_eq!((kept.len(), dropped.len()), (1, 0), "{dropped:?}");
    let (kept, _, _) = engine.verify_candidates(q, &[&old, &new]).unwrap();
    assert_eq!(
        kept,
        vec![new],
        "the older one is dropped wherever it ranks"
    );
}

#[test]
fn concepts_and_fused_entities_link_exactly_and_fuzzily_with_their_evidence() {
    let concept = |q: &str, label: &str| {
        let links = engine().ask(q, &tier(3)).unwrap().trace.links;
        links
            .into_iter()
            .find(|l| l.kind == LinkKind::Concept && l.name.contains(label))
            .unwrap_or_else(|| panic!("{q}: no concept {label}"))
    };
    // 计算机软件保护条例 第三条 defines 软件开发者.
    let exact = concept("软件开发者对软件享有哪些权利？", "软件开发者");
    assert_eq!(exact.weight, 1.0, "{exact:?}");
    assert!(exact.evidence.starts_with("exact name"), "{exact:?}");
    // 软件的开发者: three of the label's four bigrams, in order.
    let fuzzy = concept("软件的开发者对软件享有哪些权利？", "软件开发者");
    assert!(fuzzy.evidence.starts_with("fuzzy name"), "{fuzzy:?}");
    assert!((0.75..1.0).contains(&fuzzy.weight), "{fuzzy:?}");
    // Out of order is not the concept: 开发者的软件 has 软件 and 开发者 the wrong way round.
    let links = engine()
        .ask("开发者的软件享有哪些权利？", &tier(3))
        .unwrap()
        .trace
        .links;
    assert!(
        !links.iter().any(|l| l.name.contains("软件开发者")),
        "{links:?}"
    );
    // A fused entity: 技术措施, defined by 著作权法 and by 信息网络传播权保护条例, is one
    // coal:Entity in a store that holds both.
    let two = text_only_engine(&[
        "民法商法/著作权法(2020-11-11).md",
        "行政法规/信息网络传播权保护条例(2013-01-30).md",
    ]);
    let g = two.graph();
    let linker = query_engine::link::Linker::new(g);
    let links = linker.link(g, "规避技术措施要承担什么责任？", &[], None);
    let entity = links
        .iter()
        .find(|l| l.kind == LinkKind::Entity)
        .unwrap_or_else(|| panic!("{links:?}"));
    assert!(entity.name.contains("技术措施"), "{entity:?}");
    assert!(entity.evidence.contains("技术措施"), "{entity:?}");
}

#[test]
fn a_law_is_found_by_its_short_form_in_common_use() {
    // 妇保法 is 妇女权益保障法: its article is looked up in the version in force.
    let a = engine()
        .ask("妇保法第二条的内容是什么？", &AskOptions::default())
        .unwrap();
    assert_eq!(
        a.citations
            .iter()
            .map(|c| c.iri.as_str())
            .collect::<Vec<_>>(),
        vec![format!("{ELI}妇女权益保障法/2022-10-30/art_2").as_str()],
        "{a:?}"
    );
    assert!(
        a.warnings.iter().all(|w| !w.contains("not a law")),
        "{:?}",
        a.warnings
    );
    // And it links the law, with the form the question used as evidence.
    let links = engine()
        .ask("妇保法规定妇女享有哪些权利？", &tier(3))
        .unwrap()
        .trace
        .links;
    let law = links
        .iter()
        .find(|l| l.kind == LinkKind::Law)
        .unwrap_or_else(|| panic!("{links:?}"));
    assert_eq!(law.name, "《妇女权益保障法》");
    assert!(law.evidence.contains("妇保法"), "{law:?}");
}
