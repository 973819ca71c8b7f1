//! Incremental graph writing: a build may start from a checkpoint of the previous build's
//! RDF store and rewrite only the named graphs whose content changed.
//!
//! Every named graph's content is summarized by an order-independent digest of its
//! triples ([`crate::rdf::triple_digest`]), stored with the build in `graphs.json`. A
//! graph made again with the same digest is kept as it is in the checkpoint; one with a
//! new digest is cleared and loaded; one no longer made is removed. What depends on a
//! changed law — references that resolve into it, for instance — changes the digest of
//! the citing version's graph, so it is rewritten without being tracked separately.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use kg_store::LocalGraph;
use kg_store::oxigraph::model::Quad;
use serde::{Deserialize, Serialize};

use crate::BuildError;
use crate::rdf::QuadSink;

pub const STATE_FILE: &str = "graphs.json";

/// Bumped when what a digest covers changes meaning; a previous build with another
/// format is not used as a base.
const FORMAT: u32 = 1;

/// What a build wrote: the digest of every named graph and the content hash of every
/// law, by work IRI.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct GraphState {
    format: u32,
    pub graphs: BTreeMap<String, String>,
    /// Work IRI → (short name, content hash of all its versions).
    pub laws: BTreeMap<String, (String, String)>,
}

impl GraphState {
    pub fn read(build_dir: &Path) -> Option<GraphState> {
        let bytes = std::fs::read(build_dir.join(STATE_FILE)).ok()?;
        let state: GraphState = serde_json::from_slice(&bytes).ok()?;
        (state.format == FORMAT).then_some(state)
    }

    pub fn write(&self, build_dir: &Path) -> Result<(), BuildError> {
        let path = build_dir.join(STATE_FILE);
        let json = serde_json::to_vec(self).expect("serializes");
        std::fs::write(&path, json)
            .map_err(|e| BuildError::Store(kg_store::StoreError::Io { path, source: e }))
    }
}

/// Quads pending a bulk load are flushed past this many, to bound memory.
const FLUSH_QUADS: usize = 500_000;

/// Writes named graphs into a build's store, skipping those the base already holds.
pub struct GraphDelta<'g> {
    graph: &'g LocalGraph,
    base: Option<GraphState>,
    pub state: GraphState,
    pending: Vec<Quad>,
    /// Graphs kept from the base and graphs (re)written.
    pub kept: usize,
    pub written: usize,
}

impl<'g> GraphDelta<'g> {
    /// `base`: what the build whose checkpoint `graph` starts from wrote; `None` for an
    /// empty store.
    pub fn new(graph: &'g LocalGraph, base: Option<GraphState>) -> GraphDelta<'g> {
        GraphDelta {
            graph,
            base,
            state: GraphState {
                format: FORMAT,
                ..Default::default()
            },
            pending: Vec::new(),
            kept: 0,
            written: 0,
        }
    }

    /// Puts a whole named graph (all its quads in one sink). Returns whether it was
    /// written (false: the base holds the same content).
    pub fn put(&mut self, sink: QuadSink) -> Result<bool, BuildError> {
        let iri = sink.graph_iri().to_owned();
        let digest = format!("{:032x}", sink.digest);
        let before = self.base.as_ref().and_then(|b| b.graphs.get(&iri));
        let write = before != Some(&digest);
        if write {
            if before.is_some() {
                self.graph.clear_graph(&iri)?;
            }
            self.pending.extend(sink.quads);
            if self.pending.len() > FLUSH_QUADS {
                self.graph.bulk_load(std::mem::take(&mut self.pending))?;
            }
            self.written += 1;
        } else {
            self.kept += 1;
        }
        self.state.graphs.insert(iri, digest);
        Ok(write)
    }

    /// Loads what is pending and removes the base's graphs that were not put again.
    pub fn finish(&mut self) -> Result<usize, BuildError> {
        self.graph.bulk_load(std::mem::take(&mut self.pending))?;
        let mut removed = 0;
        if let Some(base) = &self.base {
            let now: BTreeSet<&String> = self.state.graphs.keys().collect();
            for iri in base.graphs.keys().filter(|g| !now.contains(g)) {
                self.graph.clear_graph(iri)?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}
