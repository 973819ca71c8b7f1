//! Publishing a build's named graphs to a SPARQL 1.1 Graph Store Protocol endpoint,
//! incrementally.
//!
//! The endpoint keeps what was published in a graph of its own, [`MANIFEST_GRAPH`]: one
//! `coal:publishedDigest` per graph. A publish compares the build's graphs (their
//! order-independent digests) with it, PUTs the graphs that are new or changed, DELETEs
//! the graphs the build no longer has, and then PUTs the manifest. Before it writes any
//! graph it PUTs a manifest in which the graphs about to be written have an empty digest,
//! so a publish that fails halfway (a refused write, a timeout, a 500) leaves an endpoint
//! whose manifest marks them unfinished: the next run rewrites them and deletes any that
//! the build no longer has. PUT and DELETE are idempotent, so re-running converges.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use oxigraph::io::RdfFormat;
use oxigraph::model::{GraphNameRef, Literal, NamedNode, NamedOrBlankNode, Term, Triple};
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::Result;
use crate::graph::LocalGraph;
use crate::remote::{client, describe, ok_body, parse_triples, remote_error, url_encode};

/// Every graph a build writes is named below this.
pub const GRAPH_NAMESPACE: &str = "https://w3id.org/coal/";
/// The endpoint's record of what was published.
pub const MANIFEST_GRAPH: &str = "https://w3id.org/coal/graph/published";
const DIGEST: &str = "https://w3id.org/coal/ontology#publishedDigest";
const TRIPLES: &str = "https://w3id.org/coal/ontology#publishedTriples";

/// Where to publish.
#[derive(Debug, Clone)]
pub struct PublishTarget {
    /// The Graph Store Protocol endpoint (Virtuoso: `http://HOST:8890/sparql-graph-crud`).
    pub endpoint: String,
    /// Per request.
    pub timeout: Duration,
}

/// What a publish did.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct PublishReport {
    pub endpoint: String,
    pub graphs: usize,
    pub written: Vec<String>,
    pub kept: usize,
    pub deleted: Vec<String>,
    pub triples_written: usize,
    pub bytes_written: usize,
    pub seconds: f64,
}

/// Told of each graph as it is sent (the CLI shows progress).
pub trait PublishObserver {
    fn started(&self, _to_write: usize, _to_delete: usize) {}
    fn graph_done(&self, _iri: &str) {}
}

impl PublishObserver for () {}

/// A graph's digest: the wrapping sum of the sha256 (first 128 bits) of its triples in
/// N-Triples, so the order the store yields them in does not matter; then the count.
#[derive(Default)]
struct GraphDigest {
    sum: u128,
    triples: usize,
}

impl GraphDigest {
    fn add(&mut self, t: &Triple) {
        let h: [u8; 32] = Sha256::digest(t.to_string().as_bytes()).into();
        self.sum = self
            .sum
            .wrapping_add(u128::from_le_bytes(h[..16].try_into().expect("16 bytes")));
        self.triples += 1;
    }

    fn finish(&self) -> String {
        format!("{:032x}-{}", self.sum, self.triples)
    }
}

#[cfg(test)]
fn graph_digest(triples: &[Triple]) -> String {
    let mut d = GraphDigest::default();
    triples.iter().for_each(|t| d.add(t));
    d.finish()
}

/// One named graph's triples, read from the store as they are needed.
fn graph_triples<'a>(
    graph: &'a LocalGraph,
    name: &'a NamedNode,
) -> impl Iterator<Item = Result<Triple>> + 'a {
    graph
        .oxigraph()
        .quads_for_pattern(
            None,
            None,
            None,
            Some(GraphNameRef::NamedNode(name.as_ref())),
        )
        .map(|q| Ok(Triple::from(q?)))
}

/// The digest and triple count of each of the build's named graphs (the non-empty
/// ones), one graph at a time: nothing but the digests is held.
fn local_digests(graph: &LocalGraph) -> Result<BTreeMap<String, (NamedNode, GraphDigest)>> {
    let mut out = BTreeMap::new();
    for name in graph.oxigraph().named_graphs() {
        let NamedOrBlankNode::NamedNode(name) = name? else {
            continue;
        };
        let mut d = GraphDigest::default();
        for t in graph_triples(graph, &name) {
            d.add(&t?);
        }
        // An incremental build clears a removed law's graphs; oxigraph keeps their names.
        if d.triples > 0 {
            out.insert(name.as_str().to_owned(), (name, d));
        }
    }
    Ok(out)
}

fn graph_url(endpoint: &str, iri: &str) -> String {
    let sep = if endpoint.contains('?') { '&' } else { '?' };
    format!("{endpoint}{sep}graph={}", url_encode(iri))
}

fn ntriples(triples: &[Triple]) -> Vec<u8> {
    let mut body = Vec::new();
    crate::protocol::write_triples(triples, RdfFormat::NTriples, &mut body)
        .expect("writing to memory does not fail");
    body
}

/// The endpoint's manifest: graph IRI → digest ("" for unfinished), empty when absent.
fn read_manifest(
    http: &reqwest::blocking::Client,
    endpoint: &str,
) -> Result<BTreeMap<String, String>> {
    let url = graph_url(endpoint, MANIFEST_GRAPH);
    let r = http
        .get(&url)
        .header(
            reqwest::header::ACCEPT,
            "application/n-triples, text/turtle;q=0.9",
        )
        .send()
        .map_err(|e| remote_error(&url, describe(&e)))?;
    if r.status() == reqwest::StatusCode::NOT_FOUND {
        return Ok(BTreeMap::new());
    }
    let (media, body) = ok_body(&url, Ok(r))?;
    let mut out = BTreeMap::new();
    for t in parse_triples(&url, &media, &body)? {
        if t.predicate.as_str() != DIGEST {
            continue;
        }
        if let (NamedOrBlankNode::NamedNode(g), Term::Literal(l)) = (&t.subject, &t.object) {
            out.insert(g.as_str().to_owned(), l.value().to_owned());
        }
    }
    Ok(out)
}

fn manifest_triples(entries: &BTreeMap<String, String>) -> Vec<Triple> {
    let digest = NamedNode::new_unchecked(DIGEST);
    let count = NamedNode::new_unchecked(TRIPLES);
    let mut out = Vec::new();
    for (g, d) in entries {
        let s = NamedNode::new_unchecked(g);
        out.push(Triple::new(
            s.clone(),
            digest.clone(),
            Literal::new_simple_literal(d),
        ));
        if let Some(n) = d.rsplit_once('-').and_then(|(_, n)| n.parse::<i64>().ok()) {
            out.push(Triple::new(s, count.clone(), Literal::from(n)));
        }
    }
    out
}

fn put(http: &reqwest::blocking::Client, endpoint: &str, iri: &str, body: Vec<u8>) -> Result<()> {
    let url = graph_url(endpoint, iri);
    let sent = http
        .put(&url)
        .header(reqwest::header::CONTENT_TYPE, "application/n-triples")
        .body(body)
        .send();
    ok_body(&url, sent).map(|_| ())
}

fn delete(http: &reqwest::blocking::Client, endpoint: &str, iri: &str) -> Result<()> {
    let url = graph_url(endpoint, iri);
    let r = http
        .delete(&url)
        .send()
        .map_err(|e| remote_error(&url, describe(&e)))?;
    // Already gone is what was wanted.
    if r.status() == reqwest::StatusCode::NOT_FOUND {
        return Ok(());
    }
    ok_body(&url, Ok(r)).map(|_| ())
}

/// Publishes `graph`'s named graphs to `target` (see the module comment).
pub fn publish(
    graph: &LocalGraph,
    target: &PublishTarget,
    observer: &dyn PublishObserver,
) -> Result<PublishReport> {
    let start = Instant::now();
    let endpoint = target.endpoint.as_str();
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return Err(remote_error(endpoint, "not an http(s) URL"));
    }
    let http = client(target.timeout)?;
    let local = local_digests(graph)?;
    let digests: BTreeMap<String, String> = local
        .iter()
        .map(|(g, (_, d))| (g.clone(), d.finish()))
        .collect();
    let remote = read_manifest(&http, endpoint)?;
    let to_write: Vec<&String> = digests
        .iter()
        .filter(|(g, d)| remote.get(*g) != Some(*d))
        .map(|(g, _)| g)
        .collect();
    let to_delete: Vec<String> = remote
        .keys()
        .filter(|g| !digests.contains_key(*g) && g.as_str() != MANIFEST_GRAPH)
        .cloned()
        .collect();
    let mut report = PublishReport {
        endpoint: endpoint.to_owned(),
        graphs: local.len(),
        kept: local.len() - to_write.len(),
        ..PublishReport::default()
    };
    observer.started(to_write.len(), to_delete.len());
    if !to_write.is_empty() || !to_delete.is_empty() {
        // Unfinished marks first: what this run may leave half-done is on record.
        let mut pending = remote.clone();
        for g in &to_write {
            pending.insert((*g).clone(), String::new());
        }
        put(
            &http,
            endpoint,
            MANIFEST_GRAPH,
            ntriples(&manifest_triples(&pending)),
        )?;
        for g in &to_write {
            // One graph in memory at a time.
            let (name, d) = &local[*g];
            let triples = graph_triples(graph, name).collect::<Result<Vec<_>>>()?;
            let body = ntriples(&triples);
            report.bytes_written += body.len();
            report.triples_written += d.triples;
            put(&http, endpoint, g, body)?;
            report.written.push((*g).clone());
            observer.graph_done(g);
        }
        for g in &to_delete {
            delete(&http, endpoint, g)?;
            report.deleted.push(g.clone());
            observer.graph_done(g);
        }
        put(
            &http,
            endpoint,
            MANIFEST_GRAPH,
            ntriples(&manifest_triples(&digests)),
        )?;
    }
    report.seconds = start.elapsed().as_secs_f64();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_ignore_order_and_see_every_triple() {
        let t = |o: &str| {
            Triple::new(
                NamedNode::new_unchecked("http://ex/s"),
                NamedNode::new_unchecked("http://ex/p"),
                Literal::new_simple_literal(o),
            )
        };
        let a = graph_digest(&[t("一"), t("二")]);
        assert_eq!(a, graph_digest(&[t("二"), t("一")]));
        assert_ne!(a, graph_digest(&[t("一"), t("三")]));
        assert!(a.ends_with("-2"));
    }

    #[test]
    fn graph_iris_are_sent_percent_encoded() {
        assert_eq!(
            graph_url("http://h/crud", "https://w3id.org/coal/eli/cn/法/2020"),
            "http://h/crud?graph=https%3A%2F%2Fw3id.org%2Fcoal%2Feli%2Fcn%2F%E6%B3%95%2F2020"
        );
        assert!(graph_url("http://h/crud?x=1", "http://g").starts_with("http://h/crud?x=1&graph="));
    }

    #[test]
    fn the_manifest_round_trips_through_n_triples() {
        let mut m = BTreeMap::new();
        m.insert(
            "https://w3id.org/coal/graph/a".to_owned(),
            "00ff-3".to_owned(),
        );
        m.insert("https://w3id.org/coal/graph/b".to_owned(), String::new());
        let body = ntriples(&manifest_triples(&m));
        let back = parse_triples("x", "application/n-triples", &body).unwrap();
        let read: BTreeMap<String, String> = back
            .into_iter()
            .filter(|t| t.predicate.as_str() == DIGEST)
            .map(|t| match (t.subject, t.object) {
                (NamedOrBlankNode::NamedNode(g), Term::Literal(l)) => {
                    (g.into_string(), l.value().to_owned())
                }
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(read, m);
    }
}
