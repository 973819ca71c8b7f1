//! SPARQL and metadata over a real on-disk store built from the social16 profile.

use std::sync::OnceLock;

use coal_tests::{BuiltStore, build_store, profile, select};
use kg_store::{GraphBackend, SparqlOutput, Store, StoreError};

fn built() -> &'static BuiltStore {
    static BUILT: OnceLock<BuiltStore> = OnceLock::new();
    BUILT.get_or_init(|| build_store(profile("social16"), false))
}

fn store() -> Store {
    Store::open(built().store_path(), false).unwrap()
}

#[test]
fn summary_counts_what_was_built() {
    let s = &built().summary;
    assert_eq!(s.files_read, 18);
    assert_eq!(s.versions, 18);
    assert_eq!(s.laws, 16);
    assert_eq!(s.nodes_by_type["Article"], s.articles);
    assert_eq!(s.nodes_by_type["LawVersion"], 18);
    assert!(s.edges_by_type["contains"] > s.articles);
    assert!(s.triples > s.nodes + s.edges);
    assert!(s.store_bytes > 0);
}

#[test]
fn an_articles_text_by_law_and_number() {
    let st = store();
    let rows = select(
        &st,
        r#"SELECT ?text WHERE {
             ?v coal:shortName "劳动合同法"@zh .
             ?a coal:inLaw ?v ; a coal:Article ; coal:number 47 ; coal:text ?text }"#,
    );
    assert_eq!(rows.len(), 1);
    assert!(
        rows[0][0].starts_with("第四十七条 经济补偿按劳动者在本单位工作的年限"),
        "{}",
        rows[0][0]
    );

    let hits =
        query_engine::lookup_article(st.graph(), "中华人民共和国劳动合同法", "第四十七条").unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].text, rows[0][0]);
    assert_eq!(hits[0].version_date.as_deref(), Some("2012-12-28"));
    assert!(
        query_engine::lookup_article(st.graph(), "劳动合同法", "第九百条")
            .unwrap()
            .is_empty()
    );
}

#[test]
fn chapters_contain_the_articles_of_a_law() {
    let st = store();
    let rows = select(
        &st,
        r#"SELECT ?label ?heading (COUNT(?a) AS ?n) WHERE {
             ?v coal:shortName "劳动合同法"@zh ; coal:contains ?c .
             ?c a coal:Chapter ; coal:label ?label ; coal:heading ?heading ; coal:order ?o .
             ?c coal:contains+ ?a . ?a a coal:Article
           } GROUP BY ?label ?heading ?o ORDER BY ?o"#,
    );
    let labels: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(
        labels,
        [
            "第一章",
            "第二章",
            "第三章",
            "第四章",
            "第五章",
            "第六章",
            "第七章",
            "第八章"
        ]
    );
    assert_eq!(rows[0][1], "总则");
    let total: usize = rows.iter().map(|r| r[2].parse::<usize>().unwrap()).sum();
    assert_eq!(total, 98);
    // A section-level path is kept on each article too.
    let path = select(
        &st,
        r#"SELECT ?p WHERE { ?v coal:shortName "劳动合同法"@zh . ?a coal:inLaw ?v ; coal:number 47 ; coal:hierarchyPath ?p }"#,
    );
    assert_eq!(path[0][0], "第四章 劳动合同的解除和终止");
}

#[test]
fn the_versions_of_a_law_and_their_validity() {
    let st = store();
    let rows = select(
        &st,
        r#"SELECT ?date ?until WHERE {
             ?w a coal:LawWork ; coal:shortName "妇女权益保障法"@zh ; coal:hasVersion ?v .
             ?v coal:versionDate ?date . OPTIONAL { ?v coal:validUntil ?until }
           } ORDER BY ?date"#,
    );
    assert_eq!(rows, [["2018-10-26", "2022-10-30"], ["2022-10-30", ""]]);
    let ask = st
        .graph()
        .query(
            r#"ASK { ?new coal:supersedes ?old . ?new coal:versionDate "2022-10-30"^^xsd:date .
                     ?old coal:versionDate "2018-10-26"^^xsd:date }"#,
        )
        .unwrap();
    assert_eq!(ask, SparqlOutput::Boolean(true));
}

#[test]
fn update_is_refused_on_a_read_only_store() {
    let st = store();
    let update =
        r#"INSERT DATA { GRAPH <http://ex/g> { <http://ex/a> coal:cites <http://ex/b> } }"#;
    assert!(kg_store::is_update(update));
    assert!(matches!(
        st.graph().update(update),
        Err(StoreError::UpdateRefused)
    ));
    let ask = st
        .graph()
        .query("ASK { <http://ex/a> coal:cites <http://ex/b> }")
        .unwrap();
    assert_eq!(ask, SparqlOutput::Boolean(false));
}

#[test]
fn metadata_database_holds_every_article_with_its_path() {
    let st = store();
    let meta = st.metadata(None).unwrap();
    let (articles, laws) = (meta.articles(None).unwrap(), meta.laws().unwrap().len());
    assert_eq!(articles.len(), built().summary.articles);
    assert_eq!(laws, 16);
    let a = articles
        .iter()
        .find(|a| a.label == "第四十七条" && a.law_iri.ends_with("/劳动合同法"))
        .unwrap();
    assert_eq!(a.hierarchy_path, "第四章 劳动合同的解除和终止");
    assert_eq!(a.source_file, "社会法/劳动合同法(2012-12-28).md");
    assert_eq!(a.text_hash.len(), 64);
}

#[test]
fn the_ontology_is_in_its_own_graph() {
    let st = store();
    let rows = select(
        &st,
        "SELECT ?c WHERE { GRAPH <https://w3id.org/coal/ontology> { ?c rdfs:subClassOf eli:LegalExpression } }",
    );
    assert_eq!(rows, [["https://w3id.org/coal/ontology#LawVersion"]]);
}

#[test]
fn versions_are_aligned_article_by_article() {
    let store = store();
    let d = query_engine::versions::diff(store.graph(), "妇女权益保障法", None, None).unwrap();
    let count = |k: &str| {
        d.counts
            .iter()
            .find(|(kind, _)| kind == k)
            .map(|c| c.1)
            .unwrap_or(0)
    };
    // Every article of each version is in exactly one change.
    assert_eq!(
        count("unchanged") + count("modified") + count("renumbered") + count("removed"),
        d.from.articles
    );
    assert_eq!(
        count("unchanged") + count("modified") + count("renumbered") + count("added"),
        d.to.articles
    );
    assert_eq!((d.from.articles, d.to.articles), (61, 86));
    // Read by hand: 2018 第六条 (government duties) became 2022 第三条 with a new first
    // sentence; 2018 第七条 (the women's federations) became 第六条.
    let moved = |from: &str, to: &str| {
        d.changes.iter().any(|c| {
            c.kind == "renumbered"
                && c.from.as_ref().is_some_and(|f| f.label == from)
                && c.to.as_ref().is_some_and(|t| t.label == to)
        })
    };
    assert!(
        moved("第六条", "第三条") && moved("第七条", "第六条"),
        "{:?}",
        d.counts
    );
    // A changed article overrides its older text.
    let rows = select(
        &store,
        "SELECT ?old WHERE { <https://w3id.org/coal/eli/cn/妇女权益保障法/2022-10-30/art_3> coal:overrides ?old }",
    );
    assert_eq!(
        rows,
        vec![vec![
            "https://w3id.org/coal/eli/cn/妇女权益保障法/2018-10-26/art_6".to_owned()
        ]]
    );
}
