//! Turning the stored snapshot into the walkable graph.

use std::collections::{HashMap, HashSet};

use kg_store::statute_graph::{self as sg, StatuteGraphData};
use petgraph::graph::{DiGraph, NodeIndex};
use serde::Serialize;

use super::{
    ClauseInfo, EdgeKind, Interner, LawInfo, Node, NodeId, NodeKind, StatuteGraph, TopicInfo,
    articles_below_in,
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

/// The file's hierarchy levels are the first kinds of the query graph, which adds the
/// knowledge nodes (concepts, entities, topics, domains, terms).
impl From<sg::HierarchyKind> for NodeKind {
    fn from(k: sg::HierarchyKind) -> NodeKind {
        match k {
            sg::HierarchyKind::Law => NodeKind::Law,
            sg::HierarchyKind::Part => NodeKind::Part,
            sg::HierarchyKind::SubPart => NodeKind::SubPart,
            sg::HierarchyKind::Chapter => NodeKind::Chapter,
            sg::HierarchyKind::Section => NodeKind::Section,
            sg::HierarchyKind::Division => NodeKind::Division,
            sg::HierarchyKind::Article => NodeKind::Article,
            sg::HierarchyKind::Paragraph => NodeKind::Paragraph,
            sg::HierarchyKind::Item => NodeKind::Item,
        }
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

/// The article a provision (article, 款 or 项 node) belongs to.
fn article_of(data: &StatuteGraphData, mut n: u32) -> Option<u32> {
    loop {
        let node = &data.nodes[n as usize];
        match node.kind {
            sg::HierarchyKind::Article => return Some(n),
            sg::HierarchyKind::Paragraph | sg::HierarchyKind::Item => n = node.parent?,
            _ => return None,
        }
    }
}

fn id(i: u32) -> NodeId {
    NodeIndex::<u32>::new(i as usize)
}

/// Names (labels and alternative labels) → the nodes that bear them.
type Names = HashMap<String, Vec<NodeId>>;

// The graph is built in a fixed order (hierarchy, citations, entities, concepts, domains,
// topics, deferrals, clauses, triples): node ids and the order of each node's edges
// follow from it, and walks break ties by that order.
impl Builder {
    /// Hierarchy nodes keep their snapshot index: node i of the file is NodeIndex i.
    fn hierarchy(
        &mut self,
        data: &StatuteGraphData,
    ) -> (Vec<LawInfo>, rustc_hash::FxHashMap<Box<str>, NodeId>) {
        for n in &data.nodes {
            let node = Node {
                kind: n.kind.into(),
                law: n.law,
                label: self.strings.intern(&n.label),
                heading: self.strings.intern(&n.heading),
                parent: n.parent.unwrap_or(u32::MAX),
                segment: self.strings.intern(&n.segment),
                order: n.order.clamp(i32::MIN as i64, i32::MAX as i64) as i32,
            };
            self.add(node);
        }
        for (i, n) in data.nodes.iter().enumerate() {
            if let Some(p) = n.parent {
                self.link(id(p), id(i as u32), EdgeKind::Contains);
            }
        }
        // Document order: each article → the next of its law, across chapters.
        for law in &data.laws {
            for pair in articles_below_in(&self.graph, id(law.node)).windows(2) {
                self.link(pair[0], pair[1], EdgeKind::Precedes);
            }
        }
        let mut laws: Vec<LawInfo> = data
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
                articles: 0,
            })
            .collect();
        let mut articles = rustc_hash::FxHashMap::default();
        for (i, n) in data.nodes.iter().enumerate() {
            if n.kind == sg::HierarchyKind::Article {
                let iri = format!("{}/{}", laws[n.law as usize].version_iri, n.segment);
                articles.insert(iri.into_boxed_str(), id(i as u32));
                laws[n.law as usize].articles += 1;
            }
        }
        (laws, articles)
    }

    /// Citation edges, and how many distinct articles cite each article.
    fn citations(&mut self, data: &StatuteGraphData) -> HashMap<NodeId, u32> {
        let mut citing: HashSet<(u32, u32)> = HashSet::new();
        for &(from, to) in &data.cites {
            self.link(id(from), id(to), EdgeKind::Cites);
            if let (Some(a), Some(t)) = (article_of(data, from), article_of(data, to))
                && a != t
            {
                citing.insert((a, t));
            }
        }
        let mut cited_by: HashMap<NodeId, u32> = HashMap::new();
        for &(_, t) in &citing {
            *cited_by.entry(id(t)).or_default() += 1;
        }
        cited_by
    }

    /// Entities, then the concepts fused into them, with defines/mentions edges.
    fn concepts(&mut self, data: &StatuteGraphData) -> Names {
        let mut names: Names = HashMap::new();
        let entity_nodes: Vec<NodeId> = data
            .entities
            .iter()
            .map(|e| {
                let node = self.plain(NodeKind::Entity, &e.label, "", &e.iri, u32::MAX);
                let n = self.add(node);
                for l in std::iter::once(&e.label).chain(&e.alt_labels) {
                    names.entry(l.clone()).or_default().push(n);
                }
                n
            })
            .collect();
        for c in &data.concepts {
            let node = self.plain(NodeKind::Concept, &c.label, "", &c.iri, c.law);
            let n = self.add(node);
            for l in std::iter::once(&c.label).chain(&c.alt_labels) {
                names.entry(l.clone()).or_default().push(n);
            }
            for &a in &c.defined_by {
                self.link(id(a), n, EdgeKind::Defines);
            }
            for &a in &c.mentioned_by {
                self.link(id(a), n, EdgeKind::Mentions);
            }
            if let Some(e) = c.entity {
                self.link(n, entity_nodes[e as usize], EdgeKind::FusedInto);
            }
        }
        names
    }

    /// Domains, topics (→ domain) and their articles.
    fn topics(&mut self, data: &StatuteGraphData) -> Vec<TopicInfo> {
        let domain_nodes: Vec<NodeId> = data
            .domains
            .iter()
            .map(|d| {
                let node = self.plain(NodeKind::Domain, "", &d.label, &d.iri, u32::MAX);
                self.add(node)
            })
            .collect();
        let mut topics = Vec::new();
        for t in &data.topics {
            let node = self.plain(
                NodeKind::Topic,
                "",
                &t.cluster.label,
                &t.cluster.iri,
                u32::MAX,
            );
            let n = self.add(node);
            let domain = t.domain.map(|d| domain_nodes[d as usize]);
            if let Some(d) = domain {
                self.link(n, d, EdgeKind::Broader);
            }
            for &a in &t.articles {
                self.link(id(a), n, EdgeKind::InTopic);
            }
            topics.push(TopicInfo {
                node: n,
                label: t.cluster.label.clone(),
                summary: t.cluster.summary.clone(),
                domain,
                centroid: t.centroid.clone(),
            });
        }
        topics
    }

    /// LLM triples: each subject and object a term node (one per text), linked to the
    /// provision that states it, to the concepts of the same label, and to each other.
    fn triples(
        &mut self,
        data: &StatuteGraphData,
        names: &mut Names,
    ) -> HashMap<(NodeId, NodeId), String> {
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
            let (s, o) = (term(self, &t.subject), term(self, &t.object));
            let p = id(t.provision);
            for x in [s, o] {
                if !self.graph.contains_edge(p, x) {
                    self.link(p, x, EdgeKind::States);
                }
            }
            if s != o && !self.graph.contains_edge(s, o) {
                self.link(s, o, EdgeKind::Relates);
                relations.insert((s, o), t.relation.clone());
            }
        }
        for (text, &n) in &terms {
            let same: Vec<NodeId> = names.get(text).cloned().unwrap_or_default();
            for c in same {
                self.link(n, c, EdgeKind::FusedInto);
            }
            names.entry(text.clone()).or_default().push(n);
        }
        relations
    }
}

/// Override clauses, and per article the clauses of its provisions.
fn clauses(data: &StatuteGraphData) -> (Vec<ClauseInfo>, HashMap<NodeId, Vec<u32>>) {
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
        if let Some(a) = article_of(data, c.provision) {
            clause_index.entry(id(a)).or_default().push(i as u32);
        }
    }
    (clauses, clause_index)
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
        let (laws, articles) = b.hierarchy(&data);
        let cited_by = b.citations(&data);
        let max_cited_by = cited_by.values().copied().max().unwrap_or(0);
        let mut names = b.concepts(&data);
        let topics = b.topics(&data);
        for &(a, law) in &data.defers_to {
            b.link(id(a), laws[law as usize].node, EdgeKind::DefersTo);
        }
        let (clauses, clause_index) = clauses(&data);
        let relations = b.triples(&data, &mut names);
        let paragraph_counts = StatuteGraph::count_paragraphs(&b.graph);
        let (step_offsets, step_list, ln_fan_outs) = StatuteGraph::step_table(&b.graph);
        let mut graph = StatuteGraph {
            paragraph_counts,
            step_offsets,
            step_list,
            ln_fan_outs,
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
            + map(self.cited_by.len(), 8)
            + self.paragraph_counts.len()
            + self.step_offsets.len() * 4
            + self.step_list.len() * std::mem::size_of::<super::WalkStep>()
            + self.ln_fan_outs.len() * 8;
        s
    }
}
