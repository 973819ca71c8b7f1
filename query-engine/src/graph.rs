//! The statute graph the graph tiers walk: the latest version of every article with its
//! containment siblings, citations (both ways), defined concepts and the laws it yields
//! to, loaded once from the store with SPARQL into a petgraph.

use std::collections::HashMap;

use kg_store::oxigraph::model::Term;
use kg_store::{GraphBackend, SparqlOutput};
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::Serialize;

use crate::QueryError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    /// article → cited article (from a paragraph/item, folded to its article)
    Cites,
    /// cited article → citing article
    CitedBy,
    /// article → concept it defines
    Defines,
    /// article → concept it mentions
    Mentions,
    /// concept → article that defines it
    DefinedBy,
    /// concept → article that mentions it
    MentionedBy,
    /// article → next/previous article in the same division
    Sibling,
}

impl Relation {
    /// How much evidence a step along this relation carries.
    pub fn weight(self) -> f64 {
        match self {
            Relation::Cites => 0.6,
            Relation::CitedBy => 0.4,
            Relation::DefinedBy => 1.0,
            Relation::MentionedBy => 0.5,
            Relation::Defines | Relation::Mentions => 0.8,
            Relation::Sibling => 0.3,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NodeKind {
    Article { law: String },
    Concept { label: String, law: String },
}

/// A law's latest version, with its domain (the corpus folder).
#[derive(Debug, Clone, Serialize)]
pub struct LawInfo {
    pub short_name: String,
    pub title: String,
    pub version_iri: String,
    pub version_date: Option<String>,
    pub domain: String,
}

pub struct StatuteGraph {
    pub graph: DiGraph<(String, NodeKind), Relation>,
    index: HashMap<String, NodeIndex>,
    pub laws: Vec<LawInfo>,
    /// Concepts by label (a label defined by several laws has several nodes).
    pub concepts: HashMap<String, Vec<NodeIndex>>,
    /// Article IRI → law version IRIs it yields to (另有规定的，依照其规定).
    pub defers_to: HashMap<String, Vec<String>>,
}

fn rows(g: &dyn GraphBackend, q: &str) -> Result<Vec<Vec<String>>, QueryError> {
    let SparqlOutput::Solutions { rows, .. } = g.query(q)? else {
        unreachable!("SELECT")
    };
    Ok(rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|t| match t {
                    Some(Term::Literal(l)) => l.value().to_owned(),
                    Some(Term::NamedNode(n)) => n.as_str().to_owned(),
                    _ => String::new(),
                })
                .collect()
        })
        .collect())
}

/// `…/art_47/par_2/pnt_1` → `…/art_47`.
pub fn article_of(provision: &str) -> &str {
    match provision.find("/par_") {
        Some(i) => &provision[..i],
        None => provision,
    }
}

const LATEST: &str = "FILTER NOT EXISTS { ?newer coal:supersedes ?v }";

impl StatuteGraph {
    pub fn load(g: &dyn GraphBackend) -> Result<StatuteGraph, QueryError> {
        let mut sg = StatuteGraph {
            graph: DiGraph::new(),
            index: HashMap::new(),
            laws: Vec::new(),
            concepts: HashMap::new(),
            defers_to: HashMap::new(),
        };
        for r in rows(
            g,
            &format!(
                "SELECT ?v ?short ?title ?date (SAMPLE(?file) AS ?f) WHERE {{
                   ?v a coal:LawVersion ; coal:shortName ?short ; coal:title ?title ; coal:sourceFile ?file .
                   OPTIONAL {{ ?v coal:versionDate ?date }} {LATEST} }} GROUP BY ?v ?short ?title ?date"
            ),
        )? {
            let domain = r[4].split('/').next().unwrap_or_default().to_owned();
            sg.laws.push(LawInfo {
                version_iri: r[0].clone(),
                short_name: r[1].clone(),
                title: r[2].clone(),
                version_date: (!r[3].is_empty()).then(|| r[3].clone()),
                domain,
            });
        }
        let law_of_version: HashMap<String, String> = sg
            .laws
            .iter()
            .map(|l| (l.version_iri.clone(), l.short_name.clone()))
            .collect();
        // Articles in reading order per parent, for siblings.
        let mut by_parent: HashMap<String, Vec<(i64, NodeIndex)>> = HashMap::new();
        for r in rows(
            g,
            &format!(
                "SELECT ?a ?v ?parent ?order WHERE {{ ?a a coal:Article ; coal:inLaw ?v ; coal:order ?order .
                   ?parent coal:contains ?a . {LATEST} }}"
            ),
        )? {
            let law = law_of_version.get(&r[1]).cloned().unwrap_or_default();
            let n = sg.node(&r[0], NodeKind::Article { law });
            let order = r[3].parse().unwrap_or(0);
            by_parent.entry(r[2].clone()).or_default().push((order, n));
        }
        for (_, mut kids) in by_parent {
            kids.sort();
            for w in kids.windows(2) {
                sg.graph.add_edge(w[0].1, w[1].1, Relation::Sibling);
                sg.graph.add_edge(w[1].1, w[0].1, Relation::Sibling);
            }
        }
        for r in rows(
            g,
            "SELECT DISTINCT ?a ?t WHERE { ?a a coal:Article ; coal:cites ?t }",
        )? {
            let (Some(&a), Some(&t)) = (sg.index.get(&r[0]), sg.index.get(article_of(&r[1])))
            else {
                continue; // an older version, or a whole law
            };
            if a != t {
                sg.graph.add_edge(a, t, Relation::Cites);
                sg.graph.add_edge(t, a, Relation::CitedBy);
            }
        }
        for r in rows(
            g,
            "SELECT ?a ?p ?c ?label WHERE { VALUES ?p { coal:defines coal:mentions }
               ?a ?p ?c . ?c coal:label ?label }",
        )? {
            let Some(&a) = sg.index.get(&r[0]) else {
                continue;
            };
            let law = match &sg.graph[a].1 {
                NodeKind::Article { law } => law.clone(),
                NodeKind::Concept { .. } => continue,
            };
            let c = match sg.index.get(&r[2]) {
                Some(&c) => c,
                None => {
                    let c = sg.node(
                        &r[2],
                        NodeKind::Concept {
                            label: r[3].clone(),
                            law,
                        },
                    );
                    sg.concepts.entry(r[3].clone()).or_default().push(c);
                    c
                }
            };
            let defines = r[1].ends_with("#defines");
            let (fwd, back) = if defines {
                (Relation::Defines, Relation::DefinedBy)
            } else {
                (Relation::Mentions, Relation::MentionedBy)
            };
            sg.graph.add_edge(a, c, fwd);
            sg.graph.add_edge(c, a, back);
        }
        for r in rows(g, "SELECT ?a ?v WHERE { ?a coal:defersTo ?v }")? {
            sg.defers_to
                .entry(r[0].clone())
                .or_default()
                .push(r[1].clone());
        }
        Ok(sg)
    }

    fn node(&mut self, iri: &str, kind: NodeKind) -> NodeIndex {
        if let Some(&n) = self.index.get(iri) {
            return n;
        }
        let n = self.graph.add_node((iri.to_owned(), kind));
        self.index.insert(iri.to_owned(), n);
        n
    }

    pub fn get(&self, iri: &str) -> Option<NodeIndex> {
        self.index.get(iri).copied()
    }

    pub fn iri(&self, n: NodeIndex) -> &str {
        &self.graph[n].0
    }

    pub fn is_article(&self, n: NodeIndex) -> bool {
        matches!(self.graph[n].1, NodeKind::Article { .. })
    }

    pub fn law_of(&self, n: NodeIndex) -> Option<&str> {
        match &self.graph[n].1 {
            NodeKind::Article { law } | NodeKind::Concept { law, .. } => Some(law),
        }
    }

    /// Outgoing steps of a node.
    pub fn steps(&self, n: NodeIndex) -> impl Iterator<Item = (NodeIndex, Relation)> + '_ {
        self.graph.edges(n).map(|e| (e.target(), *e.weight()))
    }

    pub fn article_count(&self) -> usize {
        self.graph
            .node_indices()
            .filter(|&n| self.is_article(n))
            .count()
    }
}
