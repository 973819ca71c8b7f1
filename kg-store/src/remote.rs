//! A graph read from a SPARQL 1.1 Protocol endpoint instead of the local store
//! (Virtuoso, Fuseki, GraphDB, another `coal serve`), and the HTTP both it and
//! [`crate::publish`] speak.
//!
//! The query is parsed here first, with the ontology's prefixes predeclared as in
//! `coal sparql`, so a syntax error reads the same locally and remotely and the endpoint
//! receives the query with full IRIs. The endpoint must answer a query without `FROM`
//! over the union of its graphs (Virtuoso does; Fuseki with `unionDefaultGraph`).

use std::time::Duration;

use oxigraph::io::{RdfFormat, RdfParser};
use oxigraph::model::{Term, Triple};
use oxigraph::sparql::results::{
    QueryResultsFormat, QueryResultsParser, SliceQueryResultsParserOutput,
};
use spargebra::Query;

use crate::error::{Result, StoreError};
use crate::graph::{GraphBackend, SparqlOutput};

/// An HTTP client with one timeout per request.
pub(crate) fn client(timeout: Duration) -> Result<reqwest::blocking::Client> {
    reqwest::blocking::Client::builder()
        .timeout(timeout)
        .build()
        .map_err(|e| StoreError::Remote {
            url: String::new(),
            message: e.to_string(),
        })
}

/// A remote failure: the URL and what happened (the status and the start of the body).
pub(crate) fn remote_error(url: &str, message: impl std::fmt::Display) -> StoreError {
    StoreError::Remote {
        url: url.to_owned(),
        message: message.to_string(),
    }
}

/// The body of a successful response; anything else is an error that quotes the server.
pub(crate) fn ok_body(
    url: &str,
    r: reqwest::Result<reqwest::blocking::Response>,
) -> Result<(String, Vec<u8>)> {
    let r = r.map_err(|e| remote_error(url, describe(&e)))?;
    let status = r.status();
    let media = r
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let body = r.bytes().map_err(|e| remote_error(url, describe(&e)))?;
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body);
        let text: String = text.trim().chars().take(300).collect();
        return Err(remote_error(url, format!("HTTP {status}: {text}")));
    }
    Ok((media, body.to_vec()))
}

pub(crate) fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "no answer within the time limit".to_owned()
    } else if e.is_connect() {
        "cannot connect".to_owned()
    } else {
        e.to_string()
    }
}

/// `application/x-www-form-urlencoded` / query-string escaping (RFC 3986 unreserved kept).
pub(crate) fn url_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// A SPARQL 1.1 query endpoint, read-only.
pub struct RemoteGraph {
    url: String,
    http: reqwest::blocking::Client,
}

impl RemoteGraph {
    pub fn new(url: &str, timeout: Duration) -> Result<RemoteGraph> {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(remote_error(url, "not an http(s) URL"));
        }
        Ok(RemoteGraph {
            url: url.to_owned(),
            http: client(timeout)?,
        })
    }

    pub fn url(&self) -> &str {
        &self.url
    }
}

/// `sparql` with the ontology's prefixes predeclared, parsed.
fn parse(sparql: &str) -> Result<Query> {
    let mut parser = spargebra::SparqlParser::new();
    for (p, iri) in coal_ontology::ns::PREFIXES {
        parser = parser.with_prefix(p, iri).expect("valid prefix IRI");
    }
    parser
        .parse_query(sparql)
        .map_err(|e| StoreError::SparqlSyntax(e.to_string()))
}

impl GraphBackend for RemoteGraph {
    fn query(&self, sparql: &str) -> Result<SparqlOutput> {
        let query = parse(sparql)?;
        let graph_result = matches!(query, Query::Construct { .. } | Query::Describe { .. });
        let accept = if graph_result {
            "application/n-triples, text/turtle;q=0.9"
        } else {
            "application/sparql-results+json"
        };
        let text = query.to_string();
        let sent = self
            .http
            .post(&self.url)
            .header(reqwest::header::ACCEPT, accept)
            .header(
                reqwest::header::CONTENT_TYPE,
                "application/x-www-form-urlencoded",
            )
            .body(format!("query={}", url_encode(&text)))
            .send();
        let (media, body) = ok_body(&self.url, sent)?;
        if graph_result {
            return Ok(SparqlOutput::Graph(parse_triples(
                &self.url, &media, &body,
            )?));
        }
        let parsed = QueryResultsParser::from_format(QueryResultsFormat::Json)
            .for_slice(&body)
            .map_err(|e| {
                remote_error(&self.url, format!("the results are not SPARQL JSON: {e}"))
            })?;
        match parsed {
            SliceQueryResultsParserOutput::Boolean(b) => Ok(SparqlOutput::Boolean(b)),
            SliceQueryResultsParserOutput::Solutions(solutions) => {
                let variables = crate::graph::variable_names(solutions.variables());
                let mut rows = Vec::new();
                for s in solutions {
                    let s = s.map_err(|e| remote_error(&self.url, e))?;
                    rows.push(crate::graph::solution_row(&variables, &s));
                }
                Ok(SparqlOutput::Solutions { variables, rows })
            }
        }
    }

    fn update(&self, _sparql: &str) -> Result<()> {
        Err(StoreError::UpdateRefused)
    }

    fn len(&self) -> Result<usize> {
        let out = self.query(&format!(
            "SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH ?g {{ ?s ?p ?o }} FILTER(STRSTARTS(STR(?g), \"{}\")) }}",
            crate::publish::GRAPH_NAMESPACE
        ))?;
        match out {
            SparqlOutput::Solutions { rows, .. } => Ok(rows
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .and_then(|t| match t {
                    Term::Literal(l) => l.value().parse().ok(),
                    _ => None,
                })
                .unwrap_or(0)),
            _ => Err(remote_error(&self.url, "COUNT(*) did not return solutions")),
        }
    }
}

/// Triples of an RDF body in the syntax its media type names (N-Triples when unnamed).
pub(crate) fn parse_triples(url: &str, media: &str, body: &[u8]) -> Result<Vec<Triple>> {
    let base = media.split(';').next().unwrap_or("").trim();
    let format = RdfFormat::from_media_type(base).unwrap_or(RdfFormat::NTriples);
    let mut out = Vec::new();
    for q in RdfParser::from_format(format).for_slice(body) {
        let q =
            q.map_err(|e| remote_error(url, format!("the graph ({base}) does not parse: {e}")))?;
        out.push(Triple::new(q.subject, q.predicate, q.object));
    }
    Ok(out)
}
