//! Article vectors as the mean of their 款 passages' (the default) against the article's
//! own text embedded again: fewer tokens, the same articles found. Real model, real law.

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
fn articles_with_several_paragraphs_take_their_paragraphs_mean_and_are_found_as_well() {
    let e5 = model();
    let (whole_dir, mean_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let whole =
        coal_tests::build_files_into(whole_dir.path(), LAW, Some(&e5), ArticleVectors::Whole);
    let mean = coal_tests::build_files_into(
        mean_dir.path(),
        LAW,
        Some(&e5),
        ArticleVectors::ParagraphMean,
    );
    let (w, m) = (whole.embeddings.unwrap(), mean.embeddings.unwrap());
    assert_eq!(w.paragraph_mean_articles, 0);
    assert!(m.paragraph_mean_articles >= 30, "{m:?}");
    // The 款 passages are embedded once, for both indexes: no article text twice.
    assert!(
        (m.tokens_embedded as f64) < 0.8 * w.tokens_embedded as f64,
        "{} vs {}",
        m.tokens_embedded,
        w.tokens_embedded
    );
    assert_eq!(m.paragraph_passages, w.paragraph_passages);

    let probes = second_paragraphs(&Store::open(mean_dir.path().join("store"), false).unwrap());
    assert!(probes.len() >= 30, "{}", probes.len());
    let by_mean = found_in_top3(
        &Store::open(mean_dir.path().join("store"), false).unwrap(),
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
        by_mean * 10 >= n * 8,
        "{by_mean} of {n} (whole text: {by_whole})"
    );
    assert!(
        by_mean + n / 20 >= by_whole,
        "{by_mean} vs {by_whole} of {n}"
    );

    // A rebuild of the unchanged law takes every vector, the means included, from the cache.
    let again = coal_tests::build_files_into(
        mean_dir.path(),
        LAW,
        Some(&e5),
        ArticleVectors::ParagraphMean,
    )
    .embeddings
    .unwrap();
    assert_eq!(again.tokens_embedded, 0, "{again:?}");
    assert_eq!(again.from_cache, again.passages);
}
