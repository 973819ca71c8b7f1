//! The JSON API: the CLI's `ask --json`, `search --json`, `history --json` and
//! `diff --json`, and an article with its hierarchy, citations both ways, concepts and
//! versions (what the page shows).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kg_store::oxigraph::model::{NamedNode, Term};
use kg_store::{GraphBackend, SparqlOutput};
use query_engine::QueryError;
use query_engine::engine::AskOptions;
use query_engine::retrieve::{Fusion, Mode};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::App;
use crate::served::Served;
use crate::sparql::error;

fn query_error(e: QueryError) -> Response {
    let status = if e.is_bad_request() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    error(status, e.to_string())
}

/// Runs `f` on the current build on a blocking thread (the engine's work is CPU-bound).
async fn on_build<F>(app: &App, f: F) -> Response
where
    F: FnOnce(&Served) -> Result<Value, QueryError> + Send + 'static,
{
    on_build_found(app, String::new(), move |s| f(s).map(Some)).await
}

/// [`on_build`] for a lookup: `Ok(None)` is a 404 saying `missing`.
async fn on_build_found<F>(app: &App, missing: String, f: F) -> Response
where
    F: FnOnce(&Served) -> Result<Option<Value>, QueryError> + Send + 'static,
{
    let served = app.current.get();
    let build = served.build().to_owned();
    match tokio::task::spawn_blocking(move || f(&served)).await {
        Ok(Ok(Some(v))) => crate::sparql::from_build(Json(v).into_response(), &build),
        Ok(Ok(None)) => error(StatusCode::NOT_FOUND, missing),
        Ok(Err(e)) => query_error(e),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the request's thread failed",
        ),
    }
}

#[derive(Deserialize, Default)]
pub(crate) struct AskRequest {
    #[serde(alias = "q")]
    question: Option<String>,
    /// Skip routing and use this tier (1–4).
    tier: Option<u8>,
    /// Answer from the versions in force on this date (YYYY-MM-DD).
    as_of: Option<String>,
    /// Keep the trace (complexity, links, tiers, timings).
    #[serde(default)]
    explain: bool,
}

async fn ask(app: Arc<App>, req: AskRequest) -> Response {
    let Some(question) = req.question else {
        return error(
            StatusCode::BAD_REQUEST,
            "no question: pass `q` (GET) or {\"question\": …} (POST)",
        );
    };
    if let Some(t) = req.tier
        && !(1..=4).contains(&t)
    {
        return error(
            StatusCode::BAD_REQUEST,
            format!("tier {t}: use 1, 2, 3 or 4"),
        );
    }
    let opts = AskOptions {
        force_tier: req.tier,
        as_of: req.as_of,
        ..AskOptions::default()
    };
    let explain = req.explain;
    on_build(&app, move |s| {
        let answer = s.engine.ask(&question, &opts)?;
        let mut v = serde_json::to_value(&answer).map_err(QueryError::from)?;
        if !explain && let Some(o) = v.as_object_mut() {
            o.remove("trace");
        }
        v["build"] = json!(s.build());
        Ok(v)
    })
    .await
}

pub(crate) async fn ask_get(
    State(app): State<Arc<App>>,
    Query(req): Query<AskRequest>,
) -> Response {
    ask(app, req).await
}

pub(crate) async fn ask_post(
    State(app): State<Arc<App>>,
    body: Result<Json<AskRequest>, axum::extract::rejection::JsonRejection>,
) -> Response {
    match body {
        Ok(Json(req)) => ask(app, req).await,
        Err(e) => error(
            e.status(),
            format!("the body is not the JSON asked for: {e}"),
        ),
    }
}

#[derive(Deserialize)]
pub(crate) struct SearchRequest {
    q: Option<String>,
    k: Option<usize>,
    /// bm25, bigram, dense or hybrid (default).
    mode: Option<String>,
}

pub(crate) async fn search(
    State(app): State<Arc<App>>,
    Query(req): Query<SearchRequest>,
) -> Response {
    let Some(q) = req.q else {
        return error(StatusCode::BAD_REQUEST, "no question: pass `q`");
    };
    let mode = match req.mode.as_deref().unwrap_or("hybrid") {
        "bm25" => Mode::Bm25,
        "bigram" => Mode::Bigram,
        "dense" => Mode::Dense,
        "hybrid" => Mode::Hybrid,
        m => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("mode `{m}`: use bm25, bigram, dense or hybrid"),
            );
        }
    };
    let k = req.k.unwrap_or(10).clamp(1, 1000);
    on_build(&app, move |s| {
        let r = s.engine.retriever();
        let result = r.search(&q, mode, Fusion::Weighted, k, false)?;
        let mut hits = Vec::new();
        for h in &result.hits {
            hits.push(json!({ "hit": h, "article": r.article(&h.iri)? }));
        }
        Ok(json!({ "hits": hits, "warnings": result.warnings, "build": s.build() }))
    })
    .await
}

#[derive(Deserialize)]
pub(crate) struct ArticleRequest {
    iri: String,
}

pub(crate) async fn article_query(
    State(app): State<Arc<App>>,
    Query(req): Query<ArticleRequest>,
) -> Response {
    article(app, req.iri).await
}

/// `/api/article/{iri}`: the IRI after the prefix, `https://…` whole.
pub(crate) async fn article_path(State(app): State<Arc<App>>, Path(iri): Path<String>) -> Response {
    let iri = iri
        .strip_prefix("https:/")
        .filter(|r| !r.starts_with('/'))
        .map(|r| format!("https://{r}"))
        .unwrap_or(iri);
    article(app, iri).await
}

fn strings(out: SparqlOutput) -> Vec<Vec<String>> {
    match out {
        SparqlOutput::Solutions { rows, .. } => rows
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .map(|t| match t {
                        Some(Term::Literal(l)) => l.value().to_owned(),
                        Some(Term::NamedNode(n)) => n.into_string(),
                        Some(t) => t.to_string(),
                        None => String::new(),
                    })
                    .collect()
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `{ "iri": …, "label": … }` rows of a two-column query.
fn pairs(rows: Vec<Vec<String>>, keys: &[&str]) -> Value {
    Value::Array(
        rows.into_iter()
            .map(|r| {
                Value::Object(
                    keys.iter()
                        .zip(r)
                        .map(|(k, v)| ((*k).to_owned(), Value::String(v)))
                        .collect(),
                )
            })
            .collect(),
    )
}

async fn article(app: Arc<App>, iri: String) -> Response {
    if NamedNode::new(&iri).is_err() {
        return error(StatusCode::BAD_REQUEST, format!("`{iri}` is not an IRI"));
    }
    let missing = format!("<{iri}> is not an article of this store");
    on_build_found(&app, missing, move |s| {
        let Some(a) = s.engine.retriever().article(&iri)? else {
            return Ok(None);
        };
        let g = s.store.graph();
        let q = |sparql: String| g.query(&sparql).map(strings);
        // The IRI was checked above: it is safe inside <…>.
        // Outermost first: a node's depth is the number of nodes containing it.
        let ancestors = q(format!(
            "SELECT ?node (SAMPLE(?kind_) AS ?kind) (SAMPLE(?label_) AS ?label) (SAMPLE(?heading_) AS ?heading) \
             WHERE {{ {{ SELECT ?node (COUNT(DISTINCT ?up) AS ?depth) WHERE {{ ?node coal:contains+ <{iri}> . \
             OPTIONAL {{ ?up coal:contains+ ?node }} }} GROUP BY ?node }} \
             ?node a ?k . BIND(STRAFTER(STR(?k), STR(coal:)) AS ?kind_) \
             OPTIONAL {{ ?node coal:label ?label_ }} \
             OPTIONAL {{ {{ ?node coal:heading ?heading_ }} UNION {{ ?node coal:title ?heading_ }} }} }} \
             GROUP BY ?node ?depth ORDER BY ?depth"
        ))?;
        let parts = q(format!(
            "SELECT ?node ?kind ?text WHERE {{ <{iri}> coal:contains+ ?node . ?node a ?k ; coal:text ?text . \
             BIND(STRAFTER(STR(?k), STR(coal:)) AS ?kind) }} ORDER BY STR(?node)"
        ))?;
        let cites = q(format!(
            "SELECT DISTINCT ?article ?label ?target WHERE {{ \
             {{ <{iri}> coal:cites ?target }} UNION {{ <{iri}> coal:contains+ ?p . ?p coal:cites ?target }} \
             ?article coal:contains* ?target ; a coal:Article ; coal:label ?label }} ORDER BY STR(?article)"
        ))?;
        let cited_by = q(format!(
            "SELECT DISTINCT ?article ?label ?source WHERE {{ \
             {{ ?source coal:cites <{iri}> }} UNION {{ <{iri}> coal:contains+ ?t . ?source coal:cites ?t }} \
             ?article coal:contains* ?source ; a coal:Article ; coal:label ?label }} ORDER BY STR(?article)"
        ))?;
        let concepts = q(format!(
            "SELECT DISTINCT ?concept ?label ?how WHERE {{ \
             {{ <{iri}> coal:defines ?concept BIND(\"defines\" AS ?how) }} UNION \
             {{ <{iri}> coal:mentions ?concept BIND(\"mentions\" AS ?how) }} \
             ?concept coal:label ?label }} ORDER BY ?how ?label"
        ))?;
        let versions = q(format!(
            "SELECT DISTINCT ?article ?date WHERE {{ <{iri}> coal:realizesArticle ?work . \
             ?article coal:realizesArticle ?work . ?version coal:contains+ ?article ; coal:versionDate ?date }} \
             ORDER BY ?date"
        ))?;
        Ok(Some(json!({
            "article": a,
            "hierarchy": pairs(ancestors, &["iri", "kind", "label", "heading"]),
            "parts": pairs(parts, &["iri", "kind", "text"]),
            "cites": pairs(cites, &["article", "label", "target"]),
            "cited_by": pairs(cited_by, &["article", "label", "source"]),
            "concepts": pairs(concepts, &["iri", "label", "how"]),
            "versions": pairs(versions, &["article", "date"]),
            "build": s.build(),
        })))
    })
    .await
}

#[derive(Deserialize)]
pub(crate) struct NodeRequest {
    iri: String,
}

/// One node of the hierarchy (a law version, 编, 章, 节, or an article) and what it
/// contains directly, in order: what the page walks down from a crumb.
pub(crate) async fn node(State(app): State<Arc<App>>, Query(req): Query<NodeRequest>) -> Response {
    let iri = req.iri;
    if NamedNode::new(&iri).is_err() {
        return error(StatusCode::BAD_REQUEST, format!("`{iri}` is not an IRI"));
    }
    let missing = format!("<{iri}> contains nothing in this store");
    on_build_found(&app, missing, move |s| {
        let g = s.store.graph();
        let head = strings(g.query(&format!(
            "SELECT (SAMPLE(?kind_) AS ?kind) (SAMPLE(?label_) AS ?label) (SAMPLE(?heading_) AS ?heading) WHERE {{ \
             <{iri}> a ?k . BIND(STRAFTER(STR(?k), STR(coal:)) AS ?kind_) \
             OPTIONAL {{ <{iri}> coal:label ?label_ }} \
             OPTIONAL {{ {{ <{iri}> coal:heading ?heading_ }} UNION {{ <{iri}> coal:title ?heading_ }} }} }}"
        ))?);
        let children = strings(g.query(&format!(
            "SELECT ?node (SAMPLE(?kind_) AS ?kind) (SAMPLE(?label_) AS ?label) (SAMPLE(?heading_) AS ?heading) WHERE {{ \
             <{iri}> coal:contains ?node . ?node a ?k . BIND(STRAFTER(STR(?k), STR(coal:)) AS ?kind_) \
             OPTIONAL {{ ?node coal:order ?order }} OPTIONAL {{ ?node coal:label ?label_ }} \
             OPTIONAL {{ ?node coal:heading ?heading_ }} }} GROUP BY ?node ?order ORDER BY ?order STR(?node)"
        ))?);
        if children.is_empty() {
            return Ok(None);
        }
        let head = head.into_iter().next().unwrap_or_default();
        let field = |i: usize| head.get(i).cloned().unwrap_or_default();
        Ok(Some(json!({
            "iri": iri,
            "kind": field(0),
            "label": field(1),
            "heading": field(2),
            "children": pairs(children, &["iri", "kind", "label", "heading"]),
            "build": s.build(),
        })))
    })
    .await
}

pub(crate) async fn history(State(app): State<Arc<App>>, Path(law): Path<String>) -> Response {
    on_build(&app, move |s| {
        let h = query_engine::versions::history(s.store.graph(), &law)?;
        serde_json::to_value(h).map_err(QueryError::from)
    })
    .await
}

#[derive(Deserialize)]
pub(crate) struct DiffRequest {
    from: Option<String>,
    to: Option<String>,
}

pub(crate) async fn diff(
    State(app): State<Arc<App>>,
    Path(law): Path<String>,
    Query(req): Query<DiffRequest>,
) -> Response {
    on_build(&app, move |s| {
        let d = query_engine::versions::diff(
            s.store.graph(),
            &law,
            req.from.as_deref(),
            req.to.as_deref(),
        )?;
        serde_json::to_value(d).map_err(QueryError::from)
    })
    .await
}

pub(crate) async fn healthz(State(app): State<Arc<App>>) -> Response {
    let served = app.current.get();
    Json(json!({
        "status": "ok",
        "build": served.build(),
        "reload_error": app.current.reload_error(),
    }))
    .into_response()
}
