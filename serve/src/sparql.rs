//! SPARQL 1.1 Protocol (`/query`, `/update`) and Graph Store Protocol reads (`/store`).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use kg_store::oxigraph::io::RdfFormat;
use kg_store::oxigraph::sparql::CancellationToken;
use kg_store::protocol::{QueryOptions, QueryOutcome};
use kg_store::{GraphBackend, ResultFormat, SparqlOutput, StoreError};

use crate::App;

/// The header that says a response was cut at the server's row limit.
pub const TRUNCATED_HEADER: &str = "coal-results-truncated";
/// The build a response was computed from (the one served when its request started).
pub const BUILD_HEADER: &str = "coal-build";

/// `r` with the [`BUILD_HEADER`] of the build it came from.
pub(crate) fn from_build(mut r: Response, build: &str) -> Response {
    if let Ok(v) = HeaderValue::from_str(build) {
        r.headers_mut().insert(BUILD_HEADER, v);
    }
    r
}

/// Media types for SELECT and ASK results, the default first.
const RESULT_TYPES: &[(&str, ResultFormat)] = &[
    ("application/sparql-results+json", ResultFormat::Json),
    ("application/json", ResultFormat::Json),
    ("application/sparql-results+xml", ResultFormat::Xml),
    ("application/xml", ResultFormat::Xml),
    ("text/csv", ResultFormat::Csv),
    ("text/tab-separated-values", ResultFormat::Tsv),
];

/// Media types for CONSTRUCT and DESCRIBE results and graphs, the default first.
fn graph_types() -> [(&'static str, RdfFormat); 5] {
    [
        ("text/turtle", RdfFormat::Turtle),
        ("application/n-triples", RdfFormat::NTriples),
        ("application/rdf+xml", RdfFormat::RdfXml),
        (
            "application/ld+json",
            RdfFormat::JsonLd {
                profile: Default::default(),
            },
        ),
        ("text/plain", RdfFormat::NTriples),
    ]
}

/// `?format=` names, for links a browser follows (it cannot set `Accept`).
fn format_alias(name: &str) -> Option<&'static str> {
    Some(match name {
        "json" => "application/sparql-results+json",
        "xml" => "application/sparql-results+xml",
        "csv" => "text/csv",
        "tsv" => "text/tab-separated-values",
        "turtle" | "ttl" => "text/turtle",
        "ntriples" | "nt" => "application/n-triples",
        "rdfxml" => "application/rdf+xml",
        "jsonld" => "application/ld+json",
        _ => return None,
    })
}

pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        message.into() + "\n",
    )
        .into_response()
}

/// The media ranges of an `Accept` header, most wanted first (q=0 ones dropped).
fn accepted(headers: &HeaderMap) -> Vec<String> {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return vec!["*/*".into()];
    };
    let mut ranges: Vec<(String, f32)> = accept
        .split(',')
        .filter_map(|part| {
            let mut bits = part.split(';');
            let media = bits.next()?.trim().to_ascii_lowercase();
            let q = bits
                .filter_map(|b| b.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            (!media.is_empty() && q > 0.0).then_some((media, q))
        })
        .collect();
    ranges.sort_by(|a, b| b.1.total_cmp(&a.1));
    ranges.into_iter().map(|(m, _)| m).collect()
}

/// The first of `offered` that a range of `wanted` matches (`*/*`, `text/*`, exact).
fn negotiate<T: Copy>(
    wanted: &[String],
    offered: &[(&'static str, T)],
) -> Option<(&'static str, T)> {
    for w in wanted {
        let hit = offered.iter().find(|(media, _)| {
            w == "*/*"
                || w == media
                || w.strip_suffix("/*")
                    .is_some_and(|top| media.split('/').next() == Some(top))
        });
        if let Some(h) = hit {
            return Some(*h);
        }
    }
    None
}

/// A protocol request's parameters, from the URL and a form body.
#[derive(Default)]
struct Params {
    query: Option<String>,
    update: Option<String>,
    default_graphs: Vec<String>,
    named_graphs: Vec<String>,
    format: Option<String>,
    graph: Option<String>,
    default: bool,
}

impl Params {
    fn add(&mut self, raw: &[u8]) {
        for (k, v) in form_urlencoded::parse(raw) {
            let v = v.into_owned();
            match k.as_ref() {
                "query" => self.query = Some(v),
                "update" => self.update = Some(v),
                "default-graph-uri" => self.default_graphs.push(v),
                "named-graph-uri" => self.named_graphs.push(v),
                "format" => self.format = Some(v),
                "graph" => self.graph = Some(v),
                "default" => self.default = true,
                _ => {}
            }
        }
    }

    fn from_url(raw: &Option<String>) -> Params {
        let mut p = Params::default();
        p.add(raw.as_deref().unwrap_or("").as_bytes());
        p
    }

    /// The media ranges asked for: `?format=` first, then `Accept`.
    #[allow(clippy::result_large_err)] // the error is the response itself, built once
    fn wanted(&self, headers: &HeaderMap) -> Result<Vec<String>, Response> {
        match self.format.as_deref() {
            None => Ok(accepted(headers)),
            // Clients such as SPARQLWrapper send a media type here as well as in `Accept`.
            Some(f) if f.contains('/') => Ok(vec![f.trim().to_ascii_lowercase()]),
            Some(f) => format_alias(f).map(|m| vec![m.to_owned()]).ok_or_else(|| {
                error(
                    StatusCode::BAD_REQUEST,
                    format!("format `{f}` is unknown: json, xml, csv, tsv, turtle, ntriples, rdfxml or jsonld"),
                )
            }),
        }
    }
}

fn media_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

const UPDATE_REFUSED: &str = "SPARQL UPDATE is not accepted at /query: send it to /update, \
     which a server started with --allow-update accepts";

pub(crate) async fn query_get(
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let p = Params::from_url(&raw);
    if p.update.is_some() {
        return error(StatusCode::BAD_REQUEST, UPDATE_REFUSED);
    }
    run(app, p, &headers).await
}

pub(crate) async fn query_post(
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut p = Params::from_url(&raw);
    match media_type(&headers).as_str() {
        "application/x-www-form-urlencoded" => p.add(&body),
        "application/sparql-query" => match String::from_utf8(body.to_vec()) {
            Ok(q) => p.query = Some(q),
            Err(_) => return error(StatusCode::BAD_REQUEST, "the query is not UTF-8"),
        },
        "application/sparql-update" => return error(StatusCode::BAD_REQUEST, UPDATE_REFUSED),
        other => {
            return error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "POST /query takes application/x-www-form-urlencoded or application/sparql-query, not `{other}`"
                ),
            );
        }
    }
    if p.update.is_some() {
        return error(StatusCode::BAD_REQUEST, UPDATE_REFUSED);
    }
    run(app, p, &headers).await
}

async fn run(app: Arc<App>, p: Params, headers: &HeaderMap) -> Response {
    let Some(query) = p.query.clone().filter(|q| !q.trim().is_empty()) else {
        return error(
            StatusCode::BAD_REQUEST,
            "no query: pass it as `query` (URL or form) or as an application/sparql-query body",
        );
    };
    let wanted = match p.wanted(headers) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let graphs = graph_types();
    if negotiate(&wanted, RESULT_TYPES).is_none() && negotiate(&wanted, &graphs).is_none() {
        return error(
            StatusCode::NOT_ACCEPTABLE,
            "none of the accepted media types is one this endpoint writes (SPARQL JSON/XML/CSV/TSV results; Turtle, N-Triples, RDF/XML or JSON-LD graphs)",
        );
    }
    if kg_store::is_update(&query) {
        return error(StatusCode::BAD_REQUEST, UPDATE_REFUSED);
    }
    let served = app.current.get();
    let build = served.build().to_owned();
    let token = CancellationToken::new();
    let opts = QueryOptions {
        default_graphs: p.default_graphs,
        named_graphs: p.named_graphs,
        max_rows: Some(app.config.max_rows),
        cancel: Some(token.clone()),
    };
    let job = tokio::task::spawn_blocking(move || served.store.graph().query_with(&query, &opts));
    let timeout = app.config.query_timeout;
    let outcome = match tokio::time::timeout(timeout, job).await {
        Err(_) => {
            token.cancel();
            return store_error(StoreError::Cancelled, timeout);
        }
        Ok(Err(_)) => return error(StatusCode::INTERNAL_SERVER_ERROR, "the query thread failed"),
        Ok(Ok(Err(e))) => return store_error(e, timeout),
        Ok(Ok(Ok(o))) => o,
    };
    from_build(write_outcome(outcome, &wanted, app.config.max_rows), &build)
}

pub(crate) fn store_error(e: StoreError, timeout: std::time::Duration) -> Response {
    match e {
        StoreError::SparqlSyntax(m) => {
            error(StatusCode::BAD_REQUEST, format!("SPARQL syntax: {m}"))
        }
        StoreError::BadRequest(m) => error(StatusCode::BAD_REQUEST, m),
        StoreError::Cancelled => error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "the query ran past this server's {} s limit and was cancelled",
                timeout.as_secs_f64()
            ),
        ),
        e => error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

fn write_outcome(outcome: QueryOutcome, wanted: &[String], max_rows: usize) -> Response {
    let mut body = Vec::new();
    let media = match &outcome.output {
        SparqlOutput::Graph(triples) => {
            let graphs = graph_types();
            let Some((media, format)) = negotiate(wanted, &graphs) else {
                return error(
                    StatusCode::NOT_ACCEPTABLE,
                    "a CONSTRUCT or DESCRIBE result is a graph: accept Turtle, N-Triples, RDF/XML or JSON-LD",
                );
            };
            if let Err(e) = kg_store::protocol::write_triples(triples, format, &mut body) {
                return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
            }
            media
        }
        output => {
            let Some((media, format)) = negotiate(wanted, RESULT_TYPES) else {
                return error(
                    StatusCode::NOT_ACCEPTABLE,
                    "SELECT and ASK results are SPARQL JSON, XML, CSV or TSV",
                );
            };
            if let Err(e) = output.write(format, &mut body) {
                return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string());
            }
            media
        }
    };
    let mut r = Response::new(axum::body::Body::from(body));
    let content_type = if media.starts_with("text/") {
        format!("{media}; charset=utf-8")
    } else {
        media.to_owned()
    };
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(&content_type).expect("a media type"),
    );
    if outcome.truncated {
        r.headers_mut()
            .insert(TRUNCATED_HEADER, HeaderValue::from(max_rows));
    }
    r
}

pub(crate) async fn update_post(
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !app.config.allow_update {
        return error(
            StatusCode::FORBIDDEN,
            "this server was started without --allow-update: the graph is read-only",
        );
    }
    let mut p = Params::from_url(&raw);
    match media_type(&headers).as_str() {
        "application/x-www-form-urlencoded" => p.add(&body),
        "application/sparql-update" => p.update = String::from_utf8(body.to_vec()).ok(),
        other => {
            return error(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                format!(
                    "POST /update takes application/x-www-form-urlencoded or application/sparql-update, not `{other}`"
                ),
            );
        }
    }
    let Some(update) = p.update else {
        return error(StatusCode::BAD_REQUEST, "no update: pass it as `update`");
    };
    let served = app.current.get();
    let timeout = app.config.query_timeout;
    match tokio::task::spawn_blocking(move || served.store.graph().update(&update)).await {
        Ok(Ok(())) => StatusCode::NO_CONTENT.into_response(),
        Ok(Err(e)) => store_error(e, timeout),
        Err(_) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "the update thread failed",
        ),
    }
}

/// Graph Store Protocol, reads: `?graph=IRI` (404 when the store has no such graph) or
/// `?default` (the default graph as queries see it: the union of all graphs).
pub(crate) async fn store_get(
    State(app): State<Arc<App>>,
    RawQuery(raw): RawQuery,
    headers: HeaderMap,
) -> Response {
    let p = Params::from_url(&raw);
    let graph = match (&p.graph, p.default) {
        (Some(_), true) | (None, false) => {
            return error(
                StatusCode::BAD_REQUEST,
                "name one graph: `?graph=IRI` or `?default`",
            );
        }
        (g, _) => g.clone(),
    };
    let wanted = match p.wanted(&headers) {
        Ok(w) => w,
        Err(r) => return r,
    };
    let graphs = graph_types();
    let Some((_, _)) = negotiate(&wanted, &graphs) else {
        return error(
            StatusCode::NOT_ACCEPTABLE,
            "a graph is written as Turtle, N-Triples, RDF/XML or JSON-LD",
        );
    };
    let served = app.current.get();
    let build = served.build().to_owned();
    let max = app.config.max_rows;
    let timeout = app.config.query_timeout;
    let read = tokio::task::spawn_blocking(move || {
        let g = served.store.graph();
        if let Some(iri) = &graph
            && !g.has_graph(iri)?
        {
            return Ok(None);
        }
        g.graph_triples(graph.as_deref(), max).map(Some)
    });
    match read.await {
        Ok(Ok(Some((triples, truncated)))) => from_build(
            write_outcome(
                QueryOutcome {
                    output: SparqlOutput::Graph(triples),
                    truncated,
                },
                &wanted,
                max,
            ),
            &build,
        ),
        Ok(Ok(None)) => error(
            StatusCode::NOT_FOUND,
            format!("the store has no graph <{}>", p.graph.unwrap_or_default()),
        ),
        Ok(Err(e)) => store_error(e, timeout),
        Err(_) => error(StatusCode::INTERNAL_SERVER_ERROR, "the read thread failed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(accept: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_str(accept).unwrap());
        h
    }

    #[test]
    fn accept_headers_are_negotiated_by_quality_and_wildcards() {
        let csv = accepted(&headers("application/sparql-results+json;q=0.5, text/csv"));
        assert_eq!(negotiate(&csv, RESULT_TYPES).unwrap().0, "text/csv");
        let any = accepted(&HeaderMap::new());
        assert_eq!(
            negotiate(&any, RESULT_TYPES).unwrap().0,
            "application/sparql-results+json"
        );
        let text = accepted(&headers("text/*"));
        assert_eq!(negotiate(&text, &graph_types()).unwrap().0, "text/turtle");
        let none = accepted(&headers("image/png, text/csv;q=0"));
        assert!(negotiate(&none, RESULT_TYPES).is_none());
        let browsers = accepted(&headers(
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        ));
        assert_eq!(
            negotiate(&browsers, RESULT_TYPES).unwrap().0,
            "application/xml"
        );
    }

    #[test]
    fn protocol_parameters_repeat_and_decode() {
        let p = Params::from_url(&Some(
            "query=SELECT%20*&default-graph-uri=http%3A%2F%2Fex%2Fa&default-graph-uri=http%3A%2F%2Fex%2Fb&named-graph-uri=http%3A%2F%2Fex%2Fc".into(),
        ));
        assert_eq!(p.query.as_deref(), Some("SELECT *"));
        assert_eq!(p.default_graphs, ["http://ex/a", "http://ex/b"]);
        assert_eq!(p.named_graphs, ["http://ex/c"]);
    }
}
