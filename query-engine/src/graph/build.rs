//! Turning the stored snapshot into the walkable graph.

use std::collections::{HashMap, HashSet};

use kg_store::statute_graph::{self as sg, StatuteGraphData};
use petgraph::graph::{DiGraph, NodeIndex};
use serde::Serialize;

use super::{
    ClauseInfo, EdgeKind, Interner, LawInfo, Node, NodeId, NodeKind, StatuteGraph, TopicInfo,
};

/// Node and edge counts, and what the graph takes in memory.
#[derive(Debug, Clone, Default, Serialize)]
pub struct GraphStats {
    pub nodes_by_kind: std::collections::BTreeMap<String, usize>,
    /// Edges counted once (each is stored in both directions).
    pub edges_by_kind: std::collections::BTreeMap<String, usize>,
    pub nodes: usize,
    pub edges: usize,
    pub strings: usize,
    /// An estimate of the heap the graph holds, in bytes.
    pub memory_bytes: usize,
}

fn kind_of(k: sg::NodeKind) -> NodeKind {
    match k {
        sg::NodeKind::Law => NodeKind::Law,
        sg::NodeKind::Part => NodeKind::Part,
        sg::NodeKind::SubPart => NodeKind::SubPart,
        sg::NodeKind::Chapter => NodeKind::Chapter,
        sg::NodeKind::Section => NodeKind::Section,
        sg::NodeKind::Division => NodeKind::Division,
        sg::NodeKind::Article => NodeKind::Article,
        sg::NodeKind::Paragraph => NodeKind::Paragraph,
        sg::NodeKind::Item => NodeKind::Item,
    }
}

fn name(v: &impl Serialize) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

struct Builder {
    graph: DiGraph<Node, EdgeKind, u32>,
    strings: Interner,
    edges_by_kind: HashMap<EdgeKind, usize>,
}

impl Builder {
    fn add(&mut self, node: Node) -> NodeId {
        self.graph.add_node(node)
    }

    /// An edge and its reverse.
    fn link(&mut self, a: NodeId, b: NodeId, kind: EdgeKind) {
        self.graph.add_edge(a, b, kind);
        self.graph.add_edge(b, a, kind.reverse());
        *self.edges_by_kind.entry(kind).or_default() += 1;
    }

    fn plain(
        &mut self,
        kind: NodeKind,
        label: &str,
        heading: &str,
        segment: &str,
        law: u32,
    ) -> Node {
        Node {
            kind,
            law,
            label: self.strings.intern(label),
            heading: self.strings.intern(heading),
            parent: u32::MAX,
            segment: self.strings.intern(segment),
            order: 0,
        }
    }
}

impl StatuteGraph {
    /// Builds the walkable graph from the build's snapshot.
    pub fn new(data: StatuteGraphData) -> StatuteGraph {
        let mut b = Builder {
            graph: DiGraph::with_capacity(
                data.nodes.len() + data.concepts.len(),
                data.nodes.len() * 4,
            ),
            strings: Interner::default(),
            edges_by_kind: HashMap::new(),
        };
        b.strings.intern("");
        // Hierarchy nodes keep their snapshot index: node i of the file is NodeIndex i.
        let mut articles = HashMap::new();
        for n in &data.nodes {
            let node = Node {
                kind: kind_of(n.kind),
                law: n.law,
                label: b.strings.intern(&n.label),
                heading: b.strings.intern(&n.heading),
                parent: n.parent.unwrap_or(u32::MAX),
                segment: b.strings.intern(&n.segment),
                order: n.order.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            };
            b.add(node);
        }
        let id = |i: u32| NodeIndex::<u32>::new(i as usize);
        for (i, n) in data.nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                b.link(id(p), id(i as u32), EdgeKind::Contains);
            }
        }
        let laws: Vec<LawInfo> = data
            .laws
            .iter()
            .map(|l| LawInfo {
                short_name: l.short_name.clone(),
                title: l.title.clone(),
                work_iri: l.work_iri.clone(),
                version_iri: l.version_iri.clone(),
                version_date: l.version_date.clone(),
                folder: l.folder.clone(),
                node: id(l.node),
            })
            .collect();
        for (i, n) in data.nodes.iter().enumerate() {
            if n.kind == sg::NodeKind::Article {
                let iri = format!("{}/{}", laws[n.law as usize].version_iri, n.segment);
                articles.insert(iri.into_boxed_str(), id(i as u32));
            }
        }
        // Citations, and how many distinct articles cite each article.
        let article_of = |mut n: u32| loop {
            let node = &data.nodes[n as usize];
            match node.kind {
                sg::NodeKind::Article => return Some(n),
                sg::NodeKind::Paragraph | sg::NodeKind::Item => n = node.parent?,
                _ => return None,
            }
        };
        let mut citing: HashSet<(u32, u32)> = HashSet::new();
        for &(from, to) in &data.cites {
            b.link(id(from), id(to), EdgeKind::Cites);
            if let (Some(a), Some(t)) = (article_of(from), article_of(to))
                && a != t
            {
                citing.insert((a, t));
            }
        }
        let mut cited_by: HashMap<NodeId, u32> = HashMap::new();
        for &(_, t) in &citing {
            *cited_by.entry(id(t)).or_default() += 1;
        }
        let max_cited_by = cited_by.values().copied().max().unwrap_or(0);
        // Entities, then concepts fused into them.
        let mut names: HashMap<String, Vec<NodeId>> = HashMap::new();
        let entity_nodes: Vec<NodeId> = data
            .entities
            .iter()
            .map(|e| {
                let node = b.plain(NodeKind::Entity, &e.label, "", &e.iri, u32::MAX);
                let n = b.add(node);
                for l in std::iter::once(&e.label).chain(&e.alt_labels) {
                    names.entry(l.clone()).or_default().push(n);
                }
                n
            })
            .collect();
        for c in &data.concepts {
            let node = b.plain(NodeKind::Concept, &c.label, "", &c.iri, c.law);
            let n = b.add(node);
            for l in std::iter::once(&c.label).chain(&c.alt_labels) {
                names.entry(l.clone()).or_default().push(n);
            }
            for &a in &c.defined_by {
                b.link(id(a), n, EdgeKind::Defines);
            }
            for &a in &c.mentioned_by {
                b.link(id(a), n, EdgeKind::Mentions);
            }
            if let Some(e) = c.entity {
                b.link(n, entity_nodes[e as usize], EdgeKind::FusedInto);
            }
        }
        // Domains, topics and their articles.
        let domain_nodes: Vec<NodeId> = data
            .domains
            .iter()
            .map(|d| {
                let node = b.plain(NodeKind::Domain, "", &d.label, &d.iri, u32::MAX);
                b.add(node)
            })
            .collect();
        let mut topics = Vec::new();
        for t in &data.topics {
            let node = b.plain(
                NodeKind::Topic,
                "",
                &t.cluster.label,
                &t.cluster.iri,
                u32::MAX,
            );
            let n = b.add(node);
            let domain = t.domain.map(|d| domain_nodes[d as usize]);
            if let Some(d) = domain {
                b.link(n, d, EdgeKind::Broader);
            }
            for &a in &t.articles {
                b.link(id(a), n, EdgeKind::InTopic);
            }
            topics.push(TopicInfo {
                node: n,
                label: t.cluster.label.clone(),
                summary: t.cluster.summary.clone(),
                domain,
                centroid: t.centroid.clone(),
            });
        }
        for &(a, law) in &data.defers_to {
            b.link(id(a), laws[law as usize].node, EdgeKind::DefersTo);
        }
        let clauses: Vec<ClauseInfo> = data
            .clauses
            .iter()
            .map(|c| ClauseInfo {
                provision: id(c.provision),
                prevails: c.kind == sg::ClauseKind::Prevails,
                subject: c.subject.clone(),
                text: c.text.clone(),
            })
            .collect();
        let mut clause_index: HashMap<NodeId, Vec<u32>> = HashMap::new();
        for (i, c) in data.clauses.iter().enumerate() {
            if let Some(a) = article_of(c.provision) {
                clause_index.entry(id(a)).or_default().push(i as u32);
            }
        }
        // LLM triples: each subject and object a term node (one per text), linked to the
        // provision that states it, to the concepts of the same label, and to each other.
        let mut terms: HashMap<String, NodeId> = HashMap::new();
        let mut relations = HashMap::new();
        for t in &data.triples {
            let mut term = |b: &mut Builder, text: &str| -> NodeId {
                if let Some(&n) = terms.get(text) {
                    return n;
                }
                let node = b.plain(NodeKind::Term, text, "", "", u32::MAX);
                let n = b.add(node);
                terms.insert(text.to_owned(), n);
                n
            };
            let (s, o) = (term(&mut b, &t.subject), term(&mut b, &t.object));
            let p = id(t.provision);
            for x in [s, o] {
                if !b.graph.contains_edge(p, x) {
                    b.link(p, x, EdgeKind::States);
                }
            }
            if s != o && !b.graph.contains_edge(s, o) {
                b.link(s, o, EdgeKind::Relates);
                relations.insert((s, o), t.relation.clone());
            }
        }
        for (text, &n) in &terms {
            let same: Vec<NodeId> = names.get(text).cloned().unwrap_or_default();
            for c in same {
                b.link(n, c, EdgeKind::FusedInto);
            }
            names.entry(text.clone()).or_default().push(n);
        }
        let mut graph = StatuteGraph {
            graph: b.graph,
            strings: b.strings,
            laws,
            articles,
            names,
            topics,
            clauses,
            clause_index,
            relations,
            cited_by,
            max_cited_by,
            versions: data.versions,
            stats: GraphStats::default(),
        };
        graph.stats = graph.measure(&b.edges_by_kind);
        graph
    }

    fn measure(&self, edges: &HashMap<EdgeKind, usize>) -> GraphStats {
        let mut s = GraphStats::default();
        for n in self.graph.node_weights() {
            *s.nodes_by_kind.entry(name(&n.kind)).or_default() += 1;
        }
        for (k, &c) in edges {
            *s.edges_by_kind.entry(name(k)).or_default() += c;
        }
        s.nodes = self.graph.node_count();
        s.edges = edges.values().sum();
        s.strings = self.strings.len();
        let node = std::mem::size_of::<Node>() + 8;
        let edge = std::mem::size_of::<EdgeKind>() + 16;
        let map = |n: usize, each: usize| n * (each + 8);
        s.memory_bytes = self.graph.node_count() * node
            + self.graph.edge_count() * edge
            + self.strings.bytes()
            + self.articles.keys().map(|k| k.len()).sum::<usize>()
            + map(self.articles.len(), 24)
            + self.names.keys().map(|k| k.len() + 48).sum::<usize>()
            + self
                .topics
                .iter()
                .map(|t| t.centroid.len() * 4 + t.label.len() + 64)
                .sum::<usize>()
            + map(self.cited_by.len(), 8);
        s
    }
}
