//! What a SPARQL 1.1 Protocol endpoint needs of the local graph beyond `coal sparql`: the
//! request's dataset (`default-graph-uri`, `named-graph-uri`), a bound on the rows kept,
//! cancellation (a timeout), graph results in every RDF syntax oxigraph writes, and the
//! Graph Store Protocol's reads of one graph.

use std::io::Write;

use oxigraph::io::{RdfFormat, RdfSerializer};
use oxigraph::model::{GraphName, GraphNameRef, NamedNode, NamedOrBlankNode, Triple};
use oxigraph::sparql::{CancellationToken, QueryEvaluationError, QueryResults};

use crate::error::{Result, StoreError};
use crate::graph::{LocalGraph, SparqlOutput, evaluator};

/// How one protocol request runs its query.
#[derive(Clone, Default)]
pub struct QueryOptions {
    /// `default-graph-uri`: the default graph is the merge of these. Empty: the query's
    /// own `FROM`, or else the union of all graphs (as `coal sparql`).
    pub default_graphs: Vec<String>,
    /// `named-graph-uri`: the graphs `GRAPH ?g` ranges over. Empty: the query's own
    /// `FROM NAMED`, or else every graph.
    pub named_graphs: Vec<String>,
    /// Solutions (or triples) kept at most; the outcome says when more were cut.
    pub max_rows: Option<usize>,
    /// Cancelled from outside (a timeout): evaluation stops with [`StoreError::Cancelled`].
    pub cancel: Option<CancellationToken>,
}

/// A query's results and whether `max_rows` cut them.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryOutcome {
    pub output: SparqlOutput,
    pub truncated: bool,
}

fn iri(s: &str, field: &str) -> Result<NamedNode> {
    NamedNode::new(s).map_err(|e| StoreError::BadRequest(format!("{field} `{s}`: {e}")))
}

fn evaluation(e: QueryEvaluationError) -> StoreError {
    match e {
        QueryEvaluationError::Cancelled => StoreError::Cancelled,
        e => StoreError::SparqlEvaluation(e.to_string()),
    }
}

impl LocalGraph {
    /// Runs a SELECT, ASK, CONSTRUCT or DESCRIBE as a protocol request asks.
    pub fn query_with(&self, sparql: &str, opts: &QueryOptions) -> Result<QueryOutcome> {
        let mut ev = evaluator();
        if let Some(token) = &opts.cancel {
            ev = ev.with_cancellation_token(token.clone());
        }
        let mut prepared = ev
            .parse_query(sparql)
            .map_err(|e| StoreError::SparqlSyntax(e.to_string()))?;
        let (defaults, named) = (&opts.default_graphs, &opts.named_graphs);
        if !defaults.is_empty() || !named.is_empty() {
            let d = prepared.dataset_mut();
            if !defaults.is_empty() {
                d.set_default_graph(
                    defaults
                        .iter()
                        .map(|g| iri(g, "default-graph-uri").map(GraphName::NamedNode))
                        .collect::<Result<_>>()?,
                );
            } else {
                d.set_default_graph_as_union();
            }
            if !named.is_empty() {
                d.set_available_named_graphs(
                    named
                        .iter()
                        .map(|g| iri(g, "named-graph-uri").map(NamedOrBlankNode::NamedNode))
                        .collect::<Result<_>>()?,
                );
            }
        } else if prepared.dataset().is_default_dataset() {
            prepared.dataset_mut().set_default_graph_as_union();
        }
        let max = opts.max_rows.unwrap_or(usize::MAX);
        let mut truncated = false;
        let output = match prepared
            .on_store(self.oxigraph())
            .execute()
            .map_err(evaluation)?
        {
            QueryResults::Boolean(b) => SparqlOutput::Boolean(b),
            QueryResults::Solutions(solutions) => {
                let variables = crate::graph::variable_names(solutions.variables());
                let mut rows = Vec::new();
                for s in solutions {
                    let s = s.map_err(evaluation)?;
                    if rows.len() == max {
                        truncated = true;
                        break;
                    }
                    rows.push(crate::graph::solution_row(&variables, &s));
                }
                SparqlOutput::Solutions { variables, rows }
            }
            QueryResults::Graph(triples) => {
                let mut out = Vec::new();
                for t in triples {
                    let t = t.map_err(evaluation)?;
                    if out.len() == max {
                        truncated = true;
                        break;
                    }
                    out.push(t);
                }
                SparqlOutput::Graph(out)
            }
        };
        Ok(QueryOutcome { output, truncated })
    }

    /// True when the store holds a named graph `iri`.
    pub fn has_graph(&self, iri_: &str) -> Result<bool> {
        let node = iri(iri_, "graph")?;
        Ok(self.oxigraph().contains_named_graph(&node)?)
    }

    /// The triples of one named graph (`Some`), or of the default graph as queries see it
    /// (`None`: the union of all graphs), up to `max` (and whether more were cut).
    pub fn graph_triples(&self, graph: Option<&str>, max: usize) -> Result<(Vec<Triple>, bool)> {
        let node = graph.map(|g| iri(g, "graph")).transpose()?;
        let name = node.as_ref().map(|n| GraphNameRef::NamedNode(n.as_ref()));
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for q in self.oxigraph().quads_for_pattern(None, None, None, name) {
            let t = Triple::from(q?);
            // The union: a triple in two graphs is one triple of the merge.
            if graph.is_none() && !seen.insert(t.clone()) {
                continue;
            }
            if out.len() == max {
                return Ok((out, true));
            }
            out.push(t);
        }
        Ok((out, false))
    }
}

/// A serializer for `format` that writes the predeclared prefixes (Turtle and friends).
pub(crate) fn serializer(format: RdfFormat) -> RdfSerializer {
    let mut ser = RdfSerializer::from_format(format);
    for (p, ns) in coal_ontology::ns::PREFIXES {
        ser = ser.with_prefix(p, ns).expect("valid prefix");
    }
    ser
}

/// Writes triples in an RDF syntax (Turtle, N-Triples, RDF/XML, JSON-LD, …) with the
/// ontology's prefixes where the syntax has them.
pub fn write_triples(triples: &[Triple], format: RdfFormat, out: impl Write) -> Result<()> {
    let ser_err = |e: std::io::Error| StoreError::Serialize(e.to_string());
    let mut w = serializer(format).for_writer(out);
    for t in triples {
        w.serialize_triple(t).map_err(ser_err)?;
    }
    w.finish().map_err(ser_err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GraphBackend;

    fn sample() -> LocalGraph {
        let g = LocalGraph::in_memory().unwrap();
        g.update(
            "INSERT DATA { GRAPH <http://ex/g1> { <http://ex/a> coal:cites <http://ex/b> . <http://ex/a> coal:cites <http://ex/c> } \
             GRAPH <http://ex/g2> { <http://ex/a> coal:cites <http://ex/b> . <http://ex/d> coal:cites <http://ex/e> } }",
        )
        .unwrap();
        g
    }

    fn rows(o: &QueryOutcome) -> usize {
        match &o.output {
            SparqlOutput::Solutions { rows, .. } => rows.len(),
            SparqlOutput::Graph(t) => t.len(),
            SparqlOutput::Boolean(_) => 1,
        }
    }

    #[test]
    fn the_request_dataset_replaces_the_union() {
        let g = sample();
        let q = "SELECT DISTINCT ?s ?o WHERE { ?s coal:cites ?o }";
        let all = g.query_with(q, &QueryOptions::default()).unwrap();
        assert_eq!(rows(&all), 3);
        let one = QueryOptions {
            default_graphs: vec!["http://ex/g2".into()],
            ..Default::default()
        };
        assert_eq!(rows(&g.query_with(q, &one).unwrap()), 2);
        let named = QueryOptions {
            named_graphs: vec!["http://ex/g1".into()],
            ..Default::default()
        };
        let q = "SELECT ?g WHERE { GRAPH ?g { ?s coal:cites ?o } }";
        let out = g.query_with(q, &named).unwrap();
        assert_eq!(rows(&out), 2, "{out:?}");
        let bad = QueryOptions {
            default_graphs: vec!["not an iri".into()],
            ..Default::default()
        };
        let err = g.query_with(q, &bad).unwrap_err().to_string();
        assert!(err.contains("default-graph-uri"), "{err}");
    }

    #[test]
    fn rows_past_the_limit_are_cut_and_said_so() {
        let g = sample();
        let opts = QueryOptions {
            max_rows: Some(2),
            ..Default::default()
        };
        let out = g
            .query_with("SELECT * WHERE { ?s ?p ?o . ?x ?y ?z }", &opts)
            .unwrap();
        assert!(out.truncated && rows(&out) == 2, "{out:?}");
        let out = g
            .query_with("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", &opts)
            .unwrap();
        assert!(out.truncated && rows(&out) == 2, "{out:?}");
    }

    #[test]
    fn a_cancelled_query_stops() {
        let g = sample();
        let token = CancellationToken::new();
        token.cancel();
        let opts = QueryOptions {
            cancel: Some(token),
            ..Default::default()
        };
        let err = g
            .query_with("SELECT * WHERE { ?s ?p ?o . ?x ?y ?z }", &opts)
            .unwrap_err();
        assert!(matches!(err, StoreError::Cancelled), "{err}");
    }

    #[test]
    fn one_graph_or_the_union_reads_as_triples_in_any_syntax() {
        let g = sample();
        assert!(g.has_graph("http://ex/g1").unwrap());
        assert!(!g.has_graph("http://ex/nope").unwrap());
        assert_eq!(
            g.graph_triples(Some("http://ex/g2"), 100).unwrap().0.len(),
            2
        );
        // The union holds <a> cites <b> once although two graphs have it.
        assert_eq!(
            g.graph_triples(None, 100).unwrap(),
            (g.graph_triples(None, 3).unwrap().0, false)
        );
        assert!(g.graph_triples(None, 2).unwrap().1);
        let (t, _) = g.graph_triples(Some("http://ex/g1"), 100).unwrap();
        for (format, needle) in [
            (RdfFormat::Turtle, "coal:cites"),
            (RdfFormat::NTriples, "<http://ex/a>"),
            (RdfFormat::RdfXml, "rdf:RDF"),
            (
                RdfFormat::JsonLd {
                    profile: Default::default(),
                },
                "\"@id\"",
            ),
        ] {
            let mut out = Vec::new();
            write_triples(&t, format, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            assert!(text.contains(needle), "{format:?}: {text}");
        }
    }
}
