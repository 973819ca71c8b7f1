//! Entity fusion on real statutes (the eval profile, rules only: no model, no LLM).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use coal_tests::{BuiltStore, build_store, profile, select};
use kg_build::fusion::normalize;
use kg_store::Store;

fn built() -> &'static BuiltStore {
    static BUILT: OnceLock<BuiltStore> = OnceLock::new();
    BUILT.get_or_init(|| build_store(profile("eval"), true))
}

/// Entity → (every surface form, the laws of its concepts).
fn entities() -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let store = Store::open(built().store_path(), false).unwrap();
    let mut out: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
    for row in select(
        &store,
        "SELECT ?e ?label ?law WHERE { ?c coal:fusedInto ?e ; coal:label ?label .
           ?c ^coal:defines/coal:inLaw/coal:shortName ?law }",
    ) {
        let e = out.entry(row[0].clone()).or_default();
        e.0.insert(row[1].clone());
        e.1.insert(row[2].clone());
    }
    out
}

#[test]
fn concepts_of_different_laws_that_mean_the_same_are_one_entity() {
    let f = &built().summary.fusion;
    assert!(f.concepts >= 500, "{f:?}");
    assert!(!f.embeddings);
    assert!(f.entities >= 10, "{f:?}");
    let found = entities();
    let laws_of = |label: &str| -> BTreeSet<String> {
        found
            .values()
            .find(|(labels, _)| labels.contains(label))
            .map(|(_, laws)| laws.clone())
            .unwrap_or_default()
    };
    // Checked by hand: the same definitions, word for word or nearly.
    for (label, laws) in [
        (
            "农村土地",
            &["农村土地承包法", "农村土地承包经营纠纷调解仲裁法"][..],
        ),
        ("外国人", &["出境入境管理法", "道路交通事故处理程序规定"]),
        ("投保人", &["保险法", "机动车交通事故责任强制保险条例"]),
        ("技术措施", &["著作权法", "信息网络传播权保护条例"]),
    ] {
        let got = laws_of(label);
        for law in laws {
            assert!(got.contains(*law), "{label}: {got:?}");
        }
    }
    // One character apart, opposite meanings: never one entity.
    for (x, y) in [("保险人", "被保险人"), ("土地使用权出让", "土地使用权出租")]
    {
        assert!(
            !found
                .values()
                .any(|(labels, _)| labels.contains(x) && labels.contains(y)),
            "{x} / {y}"
        );
    }
    // Rules merge only concepts that share a surface form, never two of one law.
    for (e, (labels, laws)) in &found {
        let forms: BTreeSet<String> = labels.iter().map(|l| normalize(l)).collect();
        assert_eq!(forms.len(), 1, "{e}: {labels:?}");
        assert!(laws.len() >= 2, "{e}: {laws:?}");
    }
}

#[test]
fn every_decision_is_queryable_with_its_evidence() {
    let store = Store::open(built().store_path(), false).unwrap();
    let rows = select(
        &store,
        "SELECT ?d ?decision ?by ?evidence (COUNT(?m) AS ?members) WHERE {
           ?d a coal:FusionDecision ; coal:decision ?decision ; coal:decidedBy ?by ;
              coal:evidence ?evidence ; coal:fusionMember ?m }
         GROUP BY ?d ?decision ?by ?evidence",
    );
    assert_eq!(rows.len(), built().summary.fusion.candidates);
    for r in &rows {
        assert!(
            ["merged", "apart", "unsure"].contains(&r[1].as_str()),
            "{r:?}"
        );
        assert_eq!(r[2], "rules", "no LLM in this build: {r:?}");
        assert!(!r[3].is_empty() && r[4] == "2", "{r:?}");
    }
    let merged = rows.iter().filter(|r| r[1] == "merged").count();
    assert_eq!(merged, built().summary.fusion.merged_by_rules);
    // The example query that lists the merges for checking by hand covers every one.
    let example = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/fusion-merges.rq"),
    )
    .unwrap();
    let listed = select(&store, &example);
    assert!(listed.len() >= merged, "{} < {merged}", listed.len());
    assert!(
        listed
            .iter()
            .any(|r| r[0] == "农村土地" && r[1] != r[2] && !r[4].is_empty() && !r[5].is_empty()),
        "{listed:?}"
    );
    // Every surface form of a fused entity is kept.
    let labels = select(
        &store,
        "SELECT ?pref (COUNT(DISTINCT ?c) AS ?n) WHERE { ?e a coal:Entity ; skos:prefLabel ?pref .
           ?c coal:fusedInto ?e } GROUP BY ?pref",
    );
    assert_eq!(labels.len(), built().summary.fusion.entities);
}
