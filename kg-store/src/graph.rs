//! Graph access behind a small interface, so that a remote SPARQL 1.1 endpoint can stand
//! in for the local oxigraph store later.

use std::io::Write;
use std::path::Path;

use coal_ontology::{ONTOLOGY_IRI, ONTOLOGY_TTL};
use oxigraph::io::{RdfFormat, RdfSerializer};
use oxigraph::model::{GraphName, NamedNode, Quad, Term, Triple};
use oxigraph::sparql::results::{QueryResultsFormat, QueryResultsSerializer};
use oxigraph::sparql::{SparqlEvaluator, Variable};
use oxigraph::store::Store;

use crate::error::{Result, StoreError};

/// The result of a SPARQL query, materialized.
#[derive(Debug, Clone, PartialEq)]
pub enum SparqlOutput {
    Boolean(bool),
    Solutions {
        variables: Vec<String>,
        rows: Vec<Vec<Option<Term>>>,
    },
    Graph(Vec<Triple>),
}

/// Result formats of `coal sparql`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultFormat {
    Json,
    Csv,
    Tsv,
    Xml,
}

impl SparqlOutput {
    /// Writes SELECT/ASK results in a standard SPARQL results format, CONSTRUCT/DESCRIBE
    /// results as N-Triples (csv/tsv) or Turtle (json/xml have no graph form; Turtle then).
    pub fn write(&self, format: ResultFormat, mut out: impl Write) -> Result<()> {
        let ser_err = |e: std::io::Error| StoreError::Serialize(e.to_string());
        let rf = match format {
            ResultFormat::Json => QueryResultsFormat::Json,
            ResultFormat::Csv => QueryResultsFormat::Csv,
            ResultFormat::Tsv => QueryResultsFormat::Tsv,
            ResultFormat::Xml => QueryResultsFormat::Xml,
        };
        match self {
            SparqlOutput::Boolean(b) => {
                QueryResultsSerializer::from_format(rf)
                    .serialize_boolean_to_writer(&mut out, *b)
                    .map_err(ser_err)?;
            }
            SparqlOutput::Solutions { variables, rows } => {
                let vars: Vec<Variable> = variables
                    .iter()
                    .map(|v| Variable::new_unchecked(v.clone()))
                    .collect();
                let mut ser = QueryResultsSerializer::from_format(rf)
                    .serialize_solutions_to_writer(&mut out, vars.clone())
                    .map_err(ser_err)?;
                for row in rows {
                    let pairs = vars
                        .iter()
                        .zip(row)
                        .filter_map(|(v, t)| t.as_ref().map(|t| (v.as_ref(), t.as_ref())));
                    ser.serialize(pairs).map_err(ser_err)?;
                }
                ser.finish().map_err(ser_err)?;
            }
            SparqlOutput::Graph(triples) => {
                let fmt = if matches!(format, ResultFormat::Csv | ResultFormat::Tsv) {
                    RdfFormat::NTriples
                } else {
                    RdfFormat::Turtle
                };
                crate::protocol::write_triples(triples, fmt, &mut out)?;
            }
        }
        Ok(())
    }
}

/// What query-side code needs from a graph. Implemented by [`LocalGraph`]; a remote
/// SPARQL 1.1 endpoint client would implement the same.
pub trait GraphBackend: Send + Sync {
    /// SELECT, ASK, CONSTRUCT or DESCRIBE. Without FROM clauses the default graph is the
    /// union of all named graphs. The `coal:`, `eli:`, `skos:`, … prefixes are predeclared.
    fn query(&self, sparql: &str) -> Result<SparqlOutput>;
    /// SPARQL UPDATE; refused unless the graph was opened for writing.
    fn update(&self, sparql: &str) -> Result<()>;
    /// Number of quads.
    fn len(&self) -> Result<usize>;
    fn is_empty(&self) -> Result<bool> {
        Ok(self.len()? == 0)
    }
}

/// The names of a result's variables, in order.
pub(crate) fn variable_names(variables: &[oxigraph::sparql::Variable]) -> Vec<String> {
    variables.iter().map(|v| v.as_str().to_owned()).collect()
}

/// One solution as a row, a cell per variable of `variables` (unbound: `None`); the
/// local store and a remote endpoint's results both become rows this way.
pub(crate) fn solution_row(
    variables: &[String],
    s: &oxigraph::sparql::QuerySolution,
) -> Vec<Option<Term>> {
    variables
        .iter()
        .map(|v| s.get(v.as_str()).cloned())
        .collect()
}

pub(crate) fn evaluator() -> SparqlEvaluator {
    let mut ev = SparqlEvaluator::new();
    for (p, iri) in coal_ontology::ns::PREFIXES {
        ev = ev.with_prefix(p, iri).expect("valid prefix IRI");
    }
    ev
}

/// The local oxigraph store (RocksDB on disk).
#[derive(Clone)]
pub struct LocalGraph {
    store: Store,
    writable: bool,
}

impl LocalGraph {
    /// Opens an existing build's graph for reading. Several readers may share it.
    pub fn open_read_only(path: &Path) -> Result<LocalGraph> {
        Ok(LocalGraph {
            store: Store::open_read_only(path)?,
            writable: false,
        })
    }

    /// Opens (creating if needed) a graph for writing; one writer per directory.
    pub fn open_writable(path: &Path) -> Result<LocalGraph> {
        Ok(LocalGraph {
            store: Store::open(path)?,
            writable: true,
        })
    }

    /// An in-memory graph with the same behaviour, for tests.
    pub fn in_memory() -> Result<LocalGraph> {
        Ok(LocalGraph {
            store: Store::new()?,
            writable: true,
        })
    }

    /// The underlying store, for bulk loading during a build.
    pub fn oxigraph(&self) -> &Store {
        &self.store
    }

    /// Loads the ontology into its own named graph.
    pub fn load_ontology(&self) -> Result<()> {
        let graph =
            NamedNode::new(ONTOLOGY_IRI).map_err(|e| StoreError::RdfModel(e.to_string()))?;
        self.store
            .load_from_reader(
                oxigraph::io::RdfParser::from_format(RdfFormat::Turtle).with_default_graph(graph),
                ONTOLOGY_TTL.as_bytes(),
            )
            .map_err(|e| StoreError::RdfModel(e.to_string()))
    }

    /// Removes every quad of a named graph.
    pub fn clear_graph(&self, iri: &str) -> Result<()> {
        let node = NamedNode::new(iri).map_err(|e| StoreError::RdfModel(format!("{iri}: {e}")))?;
        Ok(self.store.clear_graph(&node)?)
    }

    /// Bulk-loads quads (much faster than inserting one by one).
    pub fn bulk_load(&self, quads: impl IntoIterator<Item = Quad>) -> Result<()> {
        let mut loader = self.store.bulk_loader();
        loader.load_quads(quads)?;
        loader.commit()?;
        Ok(())
    }

    /// Writes the whole store (all named graphs) in a quad format, or the union as Turtle.
    pub fn export(&self, format: RdfFormat, out: impl Write) -> Result<()> {
        if format.supports_datasets() {
            self.store
                .dump_to_writer(RdfSerializer::from_format(format), out)
                .map(|_| ())
                .map_err(|e| StoreError::Serialize(e.to_string()))
        } else {
            // Turtle has no graph names: write every triple once, named graphs merged.
            let mut ser = crate::protocol::serializer(format).for_writer(out);
            for q in self.store.iter() {
                let q = q?;
                ser.serialize_triple(&Triple::from(q))
                    .map_err(|e| StoreError::Serialize(e.to_string()))?;
            }
            ser.finish()
                .map_err(|e| StoreError::Serialize(e.to_string()))
                .map(|_| ())
        }
    }

    pub fn flush(&self) -> Result<()> {
        Ok(self.store.flush()?)
    }
}

impl GraphBackend for LocalGraph {
    fn query(&self, sparql: &str) -> Result<SparqlOutput> {
        self.query_with(sparql, &crate::protocol::QueryOptions::default())
            .map(|o| o.output)
    }

    fn update(&self, sparql: &str) -> Result<()> {
        if !self.writable {
            return Err(StoreError::UpdateRefused);
        }
        evaluator()
            .parse_update(sparql)
            .map_err(|e| StoreError::SparqlSyntax(e.to_string()))?
            .on_store(&self.store)
            .execute()
            .map_err(|e| StoreError::SparqlEvaluation(e.to_string()))
    }

    fn len(&self) -> Result<usize> {
        Ok(self.store.len()?)
    }
}

/// True when `sparql` parses as a SPARQL UPDATE rather than a query.
pub fn is_update(sparql: &str) -> bool {
    evaluator().parse_query(sparql).is_err() && evaluator().parse_update(sparql).is_ok()
}

/// A graph name for a law version's named graph.
pub fn named_graph(iri: &str) -> Result<GraphName> {
    NamedNode::new(iri)
        .map(GraphName::NamedNode)
        .map_err(|e| StoreError::RdfModel(format!("bad IRI {iri}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LocalGraph {
        let g = LocalGraph::in_memory().unwrap();
        g.load_ontology().unwrap();
        g.update("INSERT DATA { GRAPH <http://ex/g1> { <http://ex/a> coal:cites <http://ex/b> } }")
            .unwrap();
        g
    }

    #[test]
    fn default_graph_is_the_union_of_named_graphs() {
        let g = sample();
        let out = g
            .query("SELECT ?b WHERE { <http://ex/a> coal:cites ?b }")
            .unwrap();
        let SparqlOutput::Solutions { rows, .. } = out else {
            panic!("not solutions")
        };
        assert_eq!(rows.len(), 1);
        let ask = g
            .query("ASK { coal:Article rdfs:subClassOf coal:Provision }")
            .unwrap();
        assert_eq!(ask, SparqlOutput::Boolean(true));
    }

    #[test]
    fn results_serialize_in_standard_formats() {
        let g = sample();
        let out = g.query("SELECT ?b WHERE { ?a coal:cites ?b }").unwrap();
        let mut json = Vec::new();
        out.write(ResultFormat::Json, &mut json).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["results"]["bindings"][0]["b"]["value"], "http://ex/b");
        let mut csv = Vec::new();
        out.write(ResultFormat::Csv, &mut csv).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap().replace("\r\n", "\n"),
            "b\nhttp://ex/b\n"
        );
        let mut tsv = Vec::new();
        out.write(ResultFormat::Tsv, &mut tsv).unwrap();
        assert!(String::from_utf8(tsv).unwrap().contains("<http://ex/b>"));
    }

    #[test]
    fn syntax_errors_are_reported_not_panicked() {
        let g = sample();
        assert!(matches!(
            g.query("SELEC ?x"),
            Err(StoreError::SparqlSyntax(_))
        ));
    }
}
