//! The statute graph the graph tiers walk: the latest version of every article with its
//! containment siblings, citations (both ways), defined concepts and the laws it yields
//! to, as a petgraph built from the store's retrieval graph.

use std::collections::HashMap;

use kg_store::retrieval_graph::RetrievalGraph;
use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::Serialize;

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
    /// Article node → its division (the chapter or section holding it), interned.
    division: HashMap<NodeIndex, u32>,
    /// Article node → how many distinct articles cite it; and the largest such count.
    cited_by: HashMap<NodeIndex, u32>,
    max_cited_by: u32,
}

impl StatuteGraph {
    /// Builds the walkable graph from the store's retrieval graph.
    pub fn new(rg: RetrievalGraph) -> StatuteGraph {
        let mut sg = StatuteGraph {
            graph: DiGraph::new(),
            index: HashMap::new(),
            laws: rg
                .laws
                .into_iter()
                .map(|l| LawInfo {
                    short_name: l.short_name,
                    title: l.title,
                    version_iri: l.version_iri,
                    version_date: l.version_date,
                    domain: l.domain,
                })
                .collect(),
            concepts: HashMap::new(),
            defers_to: HashMap::new(),
            division: HashMap::new(),
            cited_by: HashMap::new(),
            max_cited_by: 0,
        };
        let law_name = |sg: &StatuteGraph, i: u32| sg.laws[i as usize].short_name.clone();
        let mut articles = Vec::with_capacity(rg.articles.len());
        let mut by_parent: HashMap<String, Vec<(i64, NodeIndex)>> = HashMap::new();
        for a in rg.articles {
            let law = law_name(&sg, a.law);
            let n = sg.node(&a.iri, NodeKind::Article { law });
            articles.push(n);
            by_parent.entry(a.parent).or_default().push((a.order, n));
        }
        for (d, (_, mut kids)) in by_parent.into_iter().enumerate() {
            sg.division.extend(kids.iter().map(|&(_, n)| (n, d as u32)));
            kids.sort();
            for w in kids.windows(2) {
                sg.graph.add_edge(w[0].1, w[1].1, Relation::Sibling);
                sg.graph.add_edge(w[1].1, w[0].1, Relation::Sibling);
            }
        }
        let distinct: std::collections::HashSet<(u32, u32)> = rg.cites.iter().copied().collect();
        for &(_, t) in &distinct {
            *sg.cited_by.entry(articles[t as usize]).or_default() += 1;
        }
        sg.max_cited_by = sg.cited_by.values().copied().max().unwrap_or(0);
        for (a, t) in rg.cites {
            let (a, t) = (articles[a as usize], articles[t as usize]);
            sg.graph.add_edge(a, t, Relation::Cites);
            sg.graph.add_edge(t, a, Relation::CitedBy);
        }
        for c in rg.concepts {
            let law = law_name(&sg, c.law);
            let n = sg.node(
                &c.iri,
                NodeKind::Concept {
                    label: c.label.clone(),
                    law,
                },
            );
            sg.concepts.entry(c.label).or_default().push(n);
            for (list, fwd, back) in [
                (&c.defined_by, Relation::Defines, Relation::DefinedBy),
                (&c.mentioned_by, Relation::Mentions, Relation::MentionedBy),
            ] {
                for &a in list {
                    sg.graph.add_edge(articles[a as usize], n, fwd);
                    sg.graph.add_edge(n, articles[a as usize], back);
                }
            }
        }
        for (a, v) in rg.defers_to {
            let iri = sg.iri(articles[a as usize]).to_owned();
            sg.defers_to.entry(iri).or_default().push(v);
        }
        sg
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

    /// The division (chapter or section) an article sits in, as an opaque id.
    pub fn division(&self, n: NodeIndex) -> Option<u32> {
        self.division.get(&n).copied()
    }

    /// How central an article is in the citation graph: ln(1 + articles citing it),
    /// scaled so the most cited article of the corpus has 1.
    pub fn centrality(&self, n: NodeIndex) -> f64 {
        let c = self.cited_by.get(&n).copied().unwrap_or(0);
        if self.max_cited_by == 0 {
            return 0.0;
        }
        (c as f64).ln_1p() / (self.max_cited_by as f64).ln_1p()
    }

    pub fn article_count(&self) -> usize {
        self.graph
            .node_indices()
            .filter(|&n| self.is_article(n))
            .count()
    }
}
