//! The query engine: the method of METHOD.md §3–6. [`engine::Engine::ask`] scores a
//! question's complexity (intrinsic: [`complexity::intrinsic`]; consistency of BM25 and
//! dense retrieval: [`complexity::consistency`]), routes it to dense, hybrid, graph or
//! graph-verified retrieval, filters the context by score cliff ([`context`]) and answers
//! with the articles it rests on.
//!
//! Architecture invariant: the query engine reads a built store through
//! [`kg_store::GraphBackend`] and never depends on kg-build.

pub mod answer_metrics;
pub mod calibrate;
pub mod complexity;
pub mod context;
pub mod draft;
pub mod engine;
pub mod eval;
pub mod eval_answer;
pub mod eval_retrieval;
pub mod excerpt;
pub mod graph;
pub mod judge;
pub mod link;
pub mod method;
pub mod rerank;
pub mod rerank_fit;
pub mod retrieve;
pub mod versions;

use kg_store::oxigraph::model::Term;
use kg_store::{GraphBackend, SparqlOutput};

#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Store(#[from] kg_store::StoreError),
    #[error("the question is empty")]
    EmptyQuestion,
    #[error("the question has no words, only punctuation or symbols")]
    NoWords,
    #[error("a law name and an article label are needed")]
    LookupNeedsLawAndLabel,
    /// The store's vectors and the configured encoder are different models.
    #[error(
        "the store's {index} come from {stored} but the configured model is {configured}; rebuild the store or configure that model"
    )]
    ModelMismatch {
        index: &'static str,
        stored: String,
        configured: String,
    },
    #[error("dense search needs the embedding model and a store built with embeddings")]
    DenseNeedsModel,
    #[error("dense search needs a store built with embeddings")]
    DenseNeedsEmbeddings,
    #[error(transparent)]
    Model(#[from] coal_models::ModelError),
    #[error(transparent)]
    Method(#[from] crate::method::MethodError),
    #[error("a start-up thread panicked")]
    StartupPanic,
    /// A line of an evaluation set that does not parse, or a set that cannot be read.
    #[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
    BadEvalSet {
        path: std::path::PathBuf,
        line: Option<usize>,
        message: String,
    },
    #[error(
        "item {item}: gold {law} {article} ({file}) {why}; build the store with the profile that contains it"
    )]
    UnmappableGold {
        item: String,
        law: String,
        article: String,
        file: String,
        why: &'static str,
    },
    #[error("a law name is needed")]
    NoLawName,
    #[error("no law named 《{0}》 in this store")]
    UnknownLaw(String),
    #[error("`{0}` is neither a version date, a version IRI nor a date (YYYY-MM-DD)")]
    BadVersion(String),
    #[error("no version was in force on {date}; the first is of {first}")]
    NoVersionInForce { date: String, first: String },
    #[error("《{0}》 has one version in this store; nothing to compare")]
    OneVersion(String),
    #[error("the `from` version must be older than the `to` version")]
    VersionsOutOfOrder,
    /// Tier 2's re-ranking was asked for without the statute graph and method constants.
    #[error("re-ranking needs the statute graph and the method's constants")]
    RerankWithoutGraph,
    #[error("cannot write the result as JSON: {0}")]
    Json(#[from] serde_json::Error),
    #[error("the encoder did not load: {0}")]
    Encoder(String),
    #[error("the date {date} is impossible: {reason}")]
    BadDate { date: String, reason: String },
    /// Fitting the re-ranking on a half of the dev sets found no candidate that is a gold
    /// article (or found only gold ones).
    #[error(
        "nothing to fit the re-ranking on in the {0} items: no candidate is a gold article (or every one is)"
    )]
    NothingToFit(&'static str),
}

/// An article as found in the graph.
impl QueryError {
    /// Whether the request itself is at fault (the question, a name, a date, a version,
    /// a set, a search the store cannot serve), not the store, the model or the machine.
    pub fn is_bad_request(&self) -> bool {
        !matches!(
            self,
            QueryError::Store(_)
                | QueryError::Encoder(_)
                | QueryError::Model(_)
                | QueryError::Method(_)
                | QueryError::StartupPanic
                | QueryError::RerankWithoutGraph
                | QueryError::Json(_)
        )
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ArticleHit {
    pub iri: String,
    pub law_title: String,
    pub version_date: Option<String>,
    pub label: String,
    pub text: String,
}

fn literal_escape(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

fn value(t: &Option<Term>) -> Option<String> {
    match t {
        Some(Term::Literal(l)) => Some(l.value().to_owned()),
        Some(Term::NamedNode(n)) => Some(n.as_str().to_owned()),
        _ => None,
    }
}

/// Finds an article by law (full title or short name) and label (`第四十七条`), in every
/// version of the law, latest version first.
pub fn lookup_article(
    graph: &dyn GraphBackend,
    law: &str,
    label: &str,
) -> Result<Vec<ArticleHit>, QueryError> {
    let short = coal_corpus::typed_law_name(law);
    let short = short.as_str();
    if short.is_empty() || label.trim().is_empty() {
        return Err(QueryError::LookupNeedsLawAndLabel);
    }
    let q = format!(
        r#"SELECT ?a ?title ?date ?text WHERE {{
  ?v a coal:LawVersion ; coal:shortName "{short}"@zh ; coal:title ?title .
  OPTIONAL {{ ?v coal:versionDate ?date }}
  ?a coal:inLaw ?v ; a coal:Article ; coal:label "{label}"@zh ; coal:text ?text .
}} ORDER BY DESC(?date)"#,
        short = literal_escape(short),
        label = literal_escape(label.trim())
    );
    let SparqlOutput::Solutions { rows, .. } = graph.query(&q)? else {
        unreachable!("a SELECT query returns solutions")
    };
    Ok(rows
        .iter()
        .map(|r| ArticleHit {
            iri: value(&r[0]).unwrap_or_default(),
            law_title: value(&r[1]).unwrap_or_default(),
            version_date: value(&r[2]),
            label: label.trim().to_owned(),
            text: value(&r[3]).unwrap_or_default(),
        })
        .collect())
}
