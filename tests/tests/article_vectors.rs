//! Articles found by their 款 passages' vectors (the default) against the article's own
//! text embedded again: fewer tokens, the same articles found. Real model, real law.

use coal_models::{Embedder, TextKind};
use kg_build::ArticleVectors;
use kg_store::Store;

const LAW: &[&str] = &["社会法/劳动合同法(2012-12-28).md"];

fn model() -> coal_models::LocalE5 {
    coal_models::load_default_e5(None, 2, false).expect("the embedding model (make model)")
}

/// (article IRI, text of its second 款) for every article with a second 款.
fn second_paragraphs(store: &Store) -> Vec<(String, String)> {
    coal_tests::select(
        store,
        "SELECT ?a ?t WHERE { ?a a coal:Article ; coal:contains ?p .
           ?p a coal:Paragraph ; coal:number 2 ; coal:text ?t }",
    )
    .into_iter()
    .map(|r| (r[0].clone(), r[1].clone()))
    .collect()
}

/// How many of `probes` find their article in the store's dense top 3.
fn found_in_top3(store: &Store, e5: &dyn Embedder, probes: &[(String, String)]) -> usize {
    let index = store.vector_index().unwrap();
    let texts: Vec<&str> = probes.iter().map(|(_, t)| t.as_str()).collect();
    let queries = e5.embed(&texts, TextKind::Query).unwrap();
    probes
        .iter()
        .zip(&queries)
        .filter(|((article, _), q)| {
            index
                .search(q, 3, false)
                .unwrap()
                .iter()
                .any(|h| &h.iri == article)
        })
        .count()
}

#[test]
fn articles_with_several_paragraphs_are_found_by_their_paragraphs_for_fewer_tokens() {
    let e5 = model();
    let (whole_dir, paragraph_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let whole =
        coal_tests::build_files_into(whole_dir.path(), LAW, Some(&e5), ArticleVectors::Whole);
    let by_paragraph = coal_tests::build_files_into(
        paragraph_dir.path(),
        LAW,
        Some(&e5),
        ArticleVectors::Paragraphs,
    );
    let (w, m) = (whole.embeddings.unwrap(), by_paragraph.embeddings.unwrap());
    assert_eq!(w.paragraph_vector_articles, 0);
    assert!(m.paragraph_vector_articles >= 30, "{m:?}");
    // The 款 passages are embedded once, for both indexes: no article text twice.
    assert!(
        (m.tokens_embedded as f64) < 0.8 * w.tokens_embedded as f64,
        "{} vs {}",
        m.tokens_embedded,
        w.tokens_embedded
    );
    assert_eq!(m.paragraph_passages, w.paragraph_passages);
    // Every passage is a vector of its article's: its 款' for those with several.
    let vectors = |dir: &tempfile::TempDir| {
        Store::open(dir.path().join("store"), false)
            .unwrap()
            .vector_index()
            .unwrap()
            .vector_count()
    };
    assert_eq!(vectors(&paragraph_dir), m.passages);
    assert!(
        m.passages > w.passages + 30,
        "{} vs {}",
        m.passages,
        w.passages
    );

    let probes =
        second_paragraphs(&Store::open(paragraph_dir.path().join("store"), false).unwrap());
    assert!(probes.len() >= 30, "{}", probes.len());
    let by_paragraphs = found_in_top3(
        &Store::open(paragraph_dir.path().join("store"), false).unwrap(),
        &e5,
        &probes,
    );
    let by_whole = found_in_top3(
        &Store::open(whole_dir.path().join("store"), false).unwrap(),
        &e5,
        &probes,
    );
    let n = probes.len();
    assert!(
        by_paragraphs * 10 >= n * 8,
        "{by_paragraphs} of {n} (whole text: {by_whole})"
    );
    assert!(
        by_paragraphs + n / 20 >= by_whole,
        "{by_paragraphs} vs {by_whole} of {n}"
    );

    // The 款 vectors are the article index's own: no second index, and the 款 the query
    // side finds are those the separate 款 index of the whole-text build finds.
    let (whole_store, paragraph_store) = (
        Store::open(whole_dir.path().join("store"), false).unwrap(),
        Store::open(paragraph_dir.path().join("store"), false).unwrap(),
    );
    assert!(paragraph_store.paragraph_vector_index().unwrap().is_none());
    let separate = whole_store.paragraph_vector_index().unwrap().unwrap();
    let shared =
        query_engine::retrieve::Retriever::open(&paragraph_store, Some(Box::new(model()))).unwrap();
    assert!(shared.has_paragraph_vectors());
    for (_, text) in &probes {
        let q = shared.embed_query(text).unwrap();
        let (a, b) = (
            separate.search(&q, 3, false).unwrap(),
            shared.dense_paragraphs(&q, 3).unwrap(),
        );
        assert_eq!(a.len(), 3);
        assert_eq!(a[0].iri, b[0].iri, "{text}");
        for (x, y) in a.iter().zip(&b) {
            assert!((x.score - y.score).abs() < 1e-4, "{text}: {a:?} vs {b:?}");
        }
    }

    // A rebuild of the unchanged law takes every vector from the cache.
    let again = coal_tests::build_files_into(
        paragraph_dir.path(),
        LAW,
        Some(&e5),
        ArticleVectors::Paragraphs,
    )
    .embeddings
    .unwrap();
    assert_eq!(again.tokens_embedded, 0, "{again:?}");
    assert_eq!(again.from_cache, again.passages);
}
