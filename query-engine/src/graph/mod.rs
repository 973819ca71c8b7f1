//! The statute graph the query side walks: the build's graph (`kg_store::statute_graph`)
//! as a compact typed petgraph — integer node ids, interned labels, one enum for node
//! kinds and one for edge kinds — with every edge stored in both directions so a walk can
//! go up and down the hierarchy, along citations both ways, from a concept to the
//! articles that define it and back.
//!
//! Nodes: laws (current version), 编/分编/章/节/other divisions, 条, 款, 项, concepts,
//! fused entities, topic clusters and domains, and the terms of LLM triples. Edges:
//! containment, citation (at the precision the reference had), definition and mention,
//! fusion, topic membership and broader, deferral (另有规定的，依照其规定) and triples.

mod build;
pub mod paths;

use std::collections::HashMap;

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::EdgeRef;
use serde::Serialize;

pub use build::GraphStats;

pub type NodeId = NodeIndex<u32>;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    Law,
    Part,
    SubPart,
    Chapter,
    Section,
    Division,
    Article,
    Paragraph,
    Item,
    Concept,
    Entity,
    Topic,
    Domain,
    /// A subject or object of an LLM-extracted triple.
    Term,
}

impl NodeKind {
    /// A level of the statute hierarchy (law → 编 → … → 项).
    pub fn is_hierarchy(self) -> bool {
        !matches!(
            self,
            NodeKind::Concept
                | NodeKind::Entity
                | NodeKind::Topic
                | NodeKind::Domain
                | NodeKind::Term
        )
    }

    pub fn is_division(self) -> bool {
        matches!(
            self,
            NodeKind::Part
                | NodeKind::SubPart
                | NodeKind::Chapter
                | NodeKind::Section
                | NodeKind::Division
        )
    }

    pub fn is_provision(self) -> bool {
        matches!(
            self,
            NodeKind::Article | NodeKind::Paragraph | NodeKind::Item
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// parent → child in the hierarchy
    Contains,
    /// child → parent
    ContainedIn,
    /// citing provision → cited provision or law
    Cites,
    CitedBy,
    /// article → concept it defines
    Defines,
    DefinedBy,
    /// article → concept it mentions
    Mentions,
    MentionedBy,
    /// concept → the entity it was fused into
    FusedInto,
    FusedFrom,
    /// article → its topic cluster
    InTopic,
    TopicOf,
    /// topic → domain
    Broader,
    Narrower,
    /// article → the law it yields to (另有规定的，依照其规定)
    DefersTo,
    DeferredBy,
    /// provision → a term an LLM triple of it names
    States,
    StatedIn,
    /// subject term → object term of an LLM triple (the relation is in the trace)
    Relates,
    RelatedFrom,
    /// article → the next article of its law, in document order (an article and its
    /// neighbours are often read together: 第四十六条 sets the severance, 第四十七条 its amount)
    Precedes,
    Follows,
}

impl EdgeKind {
    /// How many kinds there are (the last one's index + 1).
    pub const COUNT: usize = EdgeKind::Follows as usize + 1;

    /// Every kind, in declaration order.
    pub const ALL: [EdgeKind; EdgeKind::COUNT] = {
        use EdgeKind::*;
        [
            Contains,
            ContainedIn,
            Cites,
            CitedBy,
            Defines,
            DefinedBy,
            Mentions,
            MentionedBy,
            FusedInto,
            FusedFrom,
            InTopic,
            TopicOf,
            Broader,
            Narrower,
            DefersTo,
            DeferredBy,
            States,
            StatedIn,
            Relates,
            RelatedFrom,
            Precedes,
            Follows,
        ]
    };

    /// The same edge walked the other way.
    pub fn reverse(self) -> EdgeKind {
        use EdgeKind::*;
        match self {
            Contains => ContainedIn,
            ContainedIn => Contains,
            Cites => CitedBy,
            CitedBy => Cites,
            Defines => DefinedBy,
            DefinedBy => Defines,
            Mentions => MentionedBy,
            MentionedBy => Mentions,
            FusedInto => FusedFrom,
            FusedFrom => FusedInto,
            InTopic => TopicOf,
            TopicOf => InTopic,
            Broader => Narrower,
            Narrower => Broader,
            DefersTo => DeferredBy,
            DeferredBy => DefersTo,
            States => StatedIn,
            StatedIn => States,
            Relates => RelatedFrom,
            RelatedFrom => Relates,
            Precedes => Follows,
            Follows => Precedes,
        }
    }

    /// How an explained path names the step.
    pub fn verb(self) -> &'static str {
        use EdgeKind::*;
        match self {
            Contains | ContainedIn => "",
            Cites => "cites",
            CitedBy => "cited by",
            Defines => "defines",
            DefinedBy => "defined by",
            Mentions => "mentions",
            MentionedBy => "mentioned by",
            FusedInto => "same entity as",
            FusedFrom => "same entity as",
            InTopic => "in topic",
            TopicOf => "topic of",
            Broader => "in domain",
            Narrower => "domain of",
            DefersTo => "yields to",
            DeferredBy => "yielded to by",
            States => "states",
            StatedIn => "stated in",
            Relates | RelatedFrom => "relates to",
            Precedes => "next",
            Follows => "previous",
        }
    }
}

/// Interned strings: labels repeat (第一条, par_1, 总则) across laws.
#[derive(Debug, Default)]
pub struct Interner {
    strings: Vec<Box<str>>,
    index: HashMap<Box<str>, u32>,
}

impl Interner {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.into());
        self.index.insert(s.into(), i);
        i
    }

    pub fn get(&self, i: u32) -> &str {
        &self.strings[i as usize]
    }

    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }

    fn bytes(&self) -> usize {
        self.strings.iter().map(|s| s.len() + 16).sum::<usize>() * 2
    }
}

/// A node: what it is, where it sits and what it is called.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    pub kind: NodeKind,
    /// Index into the graph's laws (`u32::MAX` for nodes outside every law).
    pub law: u32,
    /// 第四章 / 第四十七条 / （一） / a concept's label (interned).
    pub label: u32,
    /// A division's heading or a topic's label (interned; 0 is the empty string).
    pub heading: u32,
    /// The hierarchy parent (`u32::MAX` for roots and non-hierarchy nodes).
    pub parent: u32,
    /// The IRI's last segment (interned): the whole IRI of laws, concepts, entities,
    /// topics and domains.
    pub segment: u32,
    /// Position among its parent's children, or its number.
    pub order: i32,
}

/// A law's current version.
#[derive(Debug, Clone, Serialize)]
pub struct LawInfo {
    pub short_name: String,
    pub title: String,
    pub work_iri: String,
    pub version_iri: String,
    pub version_date: Option<String>,
    /// The corpus folder it came from (社会法, 民法商法, …).
    pub folder: String,
    #[serde(skip)]
    pub node: NodeId,
    /// How many (current) articles it has.
    pub articles: u32,
}

/// A topic cluster: its label, summary, domain and centroid.
#[derive(Debug, Clone)]
pub struct TopicInfo {
    pub node: NodeId,
    pub label: String,
    pub summary: Option<String>,
    pub domain: Option<NodeId>,
    pub centroid: Vec<f32>,
}

/// An override clause with the provision that states it.
#[derive(Debug, Clone)]
pub struct ClauseInfo {
    pub provision: NodeId,
    pub prevails: bool,
    pub subject: String,
    pub text: String,
}

/// The hierarchy children of a node, in their order (the builder walks its graph before
/// it is a [`StatuteGraph`]).
fn children_in(graph: &DiGraph<Node, EdgeKind, u32>, n: NodeId) -> Vec<NodeId> {
    let mut kids: Vec<NodeId> = graph
        .edges(n)
        .filter(|e| *e.weight() == EdgeKind::Contains)
        .map(|e| e.target())
        .collect();
    kids.sort_by_key(|&k| graph[k].order);
    kids
}

/// Articles below a node of the hierarchy, in document order (itself for an article).
fn articles_below_in(graph: &DiGraph<Node, EdgeKind, u32>, n: NodeId) -> Vec<NodeId> {
    let mut out = Vec::new();
    let mut stack = vec![n];
    while let Some(m) = stack.pop() {
        match graph[m].kind {
            NodeKind::Article => out.push(m),
            k if k == NodeKind::Law || k.is_division() => {
                stack.extend(children_in(graph, m).into_iter().rev());
            }
            _ => {}
        }
    }
    out
}

pub struct StatuteGraph {
    pub graph: DiGraph<Node, EdgeKind, u32>,
    pub strings: Interner,
    pub laws: Vec<LawInfo>,
    /// Article nodes by IRI.
    /// FxHash: every question looks up hundreds of IRIs (SipHash took ~0.1 µs each).
    articles: rustc_hash::FxHashMap<Box<str>, NodeId>,
    /// Concept and entity nodes by every label and alternative label.
    pub names: HashMap<String, Vec<NodeId>>,
    pub topics: Vec<TopicInfo>,
    pub clauses: Vec<ClauseInfo>,
    /// Article → its clauses (indexes into `clauses`).
    clause_index: HashMap<NodeId, Vec<u32>>,
    /// Relations of LLM triples, for edges `Relates` (subject, object) → relation.
    pub relations: HashMap<(NodeId, NodeId), String>,
    /// Article → how many distinct articles cite it; and the largest such count.
    cited_by: HashMap<NodeId, u32>,
    max_cited_by: u32,
    /// By node index, an article's 款 (at most 255): counted once at load, because tier
    /// 2's re-ranking reads it for every candidate of every question.
    paragraph_counts: Vec<u8>,
    /// Outgoing edges by node ([`StatuteGraph::step_table`]): node i's are
    /// `step_list[step_offsets[i]..step_offsets[i + 1]]`.
    step_offsets: Vec<u32>,
    step_list: Vec<WalkStep>,
    /// The distinct ln(fan-out) of the steps (0 for a fan-out of one).
    ln_fan_outs: Vec<f64>,
    /// Every version of every law with its validity.
    pub versions: Vec<kg_store::statute_graph::VersionEntry>,
    pub stats: GraphStats,
}

/// One outgoing edge of a node as the walks read it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WalkStep {
    pub to: u32,
    pub kind: EdgeKind,
    /// Into a 款 or 项 of the node, or out of one: a free step.
    pub inside: bool,
    /// Where [`StatuteGraph::ln_fan_outs`] holds ln of how many edges of this kind leave
    /// the node: an index keeps a step in 8 bytes where the ln itself would take 16 (the
    /// whole corpus has millions of steps; the walks' time measured the same either way).
    fan_out: u16,
}

impl StatuteGraph {
    /// The article node of an IRI (current versions only).
    pub fn get(&self, iri: &str) -> Option<NodeId> {
        self.articles.get(iri).copied()
    }

    /// The node of any provision IRI: an article, or a 款/项 below one.
    pub fn provision(&self, iri: &str) -> Option<NodeId> {
        let article = kg_store::statute_graph::article_of(iri);
        let mut n = self.get(article)?;
        let rest = &iri[article.len()..];
        for seg in rest.split('/').filter(|s| !s.is_empty()) {
            n = self
                .children(n)
                .find(|&c| self.strings.get(self.graph[c].segment) == seg)?;
        }
        Some(n)
    }

    pub fn node(&self, n: NodeId) -> &Node {
        &self.graph[n]
    }

    pub fn kind(&self, n: NodeId) -> NodeKind {
        self.graph[n].kind
    }

    pub fn is_article(&self, n: NodeId) -> bool {
        self.graph[n].kind == NodeKind::Article
    }

    pub fn label(&self, n: NodeId) -> &str {
        self.strings.get(self.graph[n].label)
    }

    pub fn heading(&self, n: NodeId) -> &str {
        self.strings.get(self.graph[n].heading)
    }

    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        let p = self.graph[n].parent;
        (p != u32::MAX).then(|| NodeIndex::new(p as usize))
    }

    /// Whether `ancestor` is `n` or above it in the hierarchy.
    pub fn is_below(&self, n: NodeId, ancestor: NodeId) -> bool {
        let mut cur = Some(n);
        while let Some(c) = cur {
            if c == ancestor {
                return true;
            }
            cur = self.parent(c);
        }
        false
    }

    /// The hierarchy children of a node, in their order.
    pub fn children(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        children_in(&self.graph, n).into_iter()
    }

    /// The article a provision belongs to (itself for an article).
    pub fn article_of(&self, n: NodeId) -> Option<NodeId> {
        let mut cur = n;
        loop {
            match self.kind(cur) {
                NodeKind::Article => return Some(cur),
                NodeKind::Paragraph | NodeKind::Item => cur = self.parent(cur)?,
                _ => return None,
            }
        }
    }

    /// The nearest chapter (or other division, or the law) above an article.
    pub fn chapter_of(&self, n: NodeId) -> Option<NodeId> {
        let mut cur = self.parent(n)?;
        loop {
            match self.kind(cur) {
                NodeKind::Section | NodeKind::SubPart => match self.parent(cur) {
                    Some(p) if self.kind(p) != NodeKind::Law => cur = p,
                    _ => return Some(cur),
                },
                _ => return Some(cur),
            }
        }
    }

    /// The law of a node (`None` for concepts of no law, topics, domains, terms).
    pub fn law_of(&self, n: NodeId) -> Option<&LawInfo> {
        self.laws.get(self.graph[n].law as usize)
    }

    /// The short name of a node's law.
    pub fn law_name(&self, n: NodeId) -> Option<&str> {
        self.law_of(n).map(|l| l.short_name.as_str())
    }

    /// The IRI of a node.
    pub fn iri(&self, n: NodeId) -> String {
        let node = &self.graph[n];
        let seg = self.strings.get(node.segment);
        match node.kind {
            NodeKind::Article => format!("{}/{seg}", self.laws[node.law as usize].version_iri),
            k if k.is_division() || matches!(k, NodeKind::Paragraph | NodeKind::Item) => {
                match self.parent(n) {
                    Some(p) => format!("{}/{seg}", self.iri(p)),
                    None => seg.to_owned(),
                }
            }
            _ => seg.to_owned(),
        }
    }

    /// Outgoing steps of a node (every edge is stored both ways).
    pub fn steps(&self, n: NodeId) -> impl Iterator<Item = (NodeId, EdgeKind)> + '_ {
        self.steps_with_fan_out(n)
            .iter()
            .map(|s| (NodeId::new(s.to as usize), s.kind))
    }

    /// Outgoing steps of a node with what the walks of tier 3 read of each.
    pub(crate) fn steps_with_fan_out(&self, n: NodeId) -> &[WalkStep] {
        let (from, to) = (
            self.step_offsets[n.index()] as usize,
            self.step_offsets[n.index() + 1] as usize,
        );
        &self.step_list[from..to]
    }

    /// Every node's outgoing edges in one array (compressed sparse rows), in the order
    /// petgraph lists them: the walks of tier 3 read them contiguously instead of
    /// following petgraph's linked edge lists (with the pruning in `paths.rs`, tier 3's
    /// own stage 1.40 → 1.15 ms p50, `make bench-ask`); each step's fan-out and whether
    /// it stays inside an article are found here, once, not on every walk (which made no
    /// measurable difference to the walks' time on lecoqa.dev).
    fn step_table(graph: &DiGraph<Node, EdgeKind>) -> (Vec<u32>, Vec<WalkStep>, Vec<f64>) {
        let mut offsets = Vec::with_capacity(graph.node_count() + 1);
        let mut list = Vec::with_capacity(graph.edge_count());
        // Fan-out → its index in the table of ln values.
        let mut fan_outs: std::collections::BTreeMap<u32, u16> = Default::default();
        let mut ln_fan_outs = Vec::new();
        offsets.push(0);
        for n in graph.node_indices() {
            let mut fan = [0u32; EdgeKind::COUNT];
            for e in graph.edges(n) {
                fan[*e.weight() as usize] += 1;
            }
            let from_kind = graph[n].kind;
            list.extend(graph.edges(n).map(|e| {
                let kind = *e.weight();
                let to_kind = graph[e.target()].kind;
                let fan = fan[kind as usize].max(1);
                let fan_out = *fan_outs.entry(fan).or_insert_with(|| {
                    ln_fan_outs.push(if fan > 1 { (fan as f64).ln() } else { 0.0 });
                    // 65,536 distinct fan-outs would take over two billion edges.
                    u16::try_from(ln_fan_outs.len() - 1).expect("fewer than 65,536 fan-outs")
                });
                WalkStep {
                    to: e.target().index() as u32,
                    kind,
                    // 款 and 项 are inside their article: no hop of their own.
                    inside: matches!(
                        (from_kind, to_kind, kind),
                        (_, NodeKind::Paragraph | NodeKind::Item, EdgeKind::Contains)
                            | (
                                NodeKind::Paragraph | NodeKind::Item,
                                _,
                                EdgeKind::ContainedIn
                            )
                    ),
                    fan_out,
                }
            }));
            offsets.push(list.len() as u32);
        }
        (offsets, list, ln_fan_outs)
    }

    /// ln of how many edges of `step`'s kind leave the node it leaves (0 for one).
    pub(crate) fn ln_fan_out(&self, step: &WalkStep) -> f64 {
        self.ln_fan_outs[step.fan_out as usize]
    }

    /// The division (chapter or section) directly holding an article, as an opaque id.
    pub fn division(&self, n: NodeId) -> Option<u32> {
        let p = self.graph[n].parent;
        (p != u32::MAX).then_some(p)
    }

    /// An article's shape in its division: how many 款 it has and its position among
    /// its parent's children (1 for the first article of a chapter or section, or of a
    /// law without divisions; the build numbers a parent's divisions and articles with
    /// one counter, so an article after a chapter's sections comes after them).
    pub fn article_shape(&self, n: NodeId) -> (u32, i32) {
        (self.paragraph_counts[n.index()] as u32, self.graph[n].order)
    }

    /// The 款 each node contains, by node index (0 for all but articles).
    fn count_paragraphs(graph: &DiGraph<Node, EdgeKind>) -> Vec<u8> {
        graph
            .node_indices()
            .map(|n| {
                let paragraphs = graph
                    .edges(n)
                    .filter(|e| *e.weight() == EdgeKind::Contains)
                    .filter(|e| graph[e.target()].kind == NodeKind::Paragraph)
                    .count();
                paragraphs.min(u8::MAX as usize) as u8
            })
            .collect()
    }

    /// How central an article is in the citation graph: ln(1 + articles citing it),
    /// scaled so the most cited article of the corpus has 1.
    pub fn centrality(&self, n: NodeId) -> f64 {
        let c = self.cited_by.get(&n).copied().unwrap_or(0);
        if self.max_cited_by == 0 {
            return 0.0;
        }
        (c as f64).ln_1p() / (self.max_cited_by as f64).ln_1p()
    }

    pub fn article_count(&self) -> usize {
        self.articles.len()
    }

    /// Every current article node.
    pub fn articles(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.articles.values().copied()
    }

    /// Articles below a node of the hierarchy, in order (itself for an article).
    pub fn articles_below(&self, n: NodeId) -> Vec<NodeId> {
        articles_below_in(&self.graph, n)
    }

    /// A readable name of a node: 《劳动合同法》 for a law, 第四章 劳动合同的解除和终止 for a
    /// chapter (its law is not named), 第四十七条 for an article, 第四十七条第二款 for a
    /// paragraph, a concept's label in 「」.
    pub fn display(&self, n: NodeId) -> String {
        let node = &self.graph[n];
        match node.kind {
            NodeKind::Law => format!("《{}》", self.label(n)),
            NodeKind::Article => self.label(n).to_owned(),
            NodeKind::Paragraph => {
                let a = self
                    .parent(n)
                    .map(|a| self.label(a).to_owned())
                    .unwrap_or_default();
                format!(
                    "{a}第{}款",
                    coal_corpus::to_chinese_numeral(node.order.max(0) as u32)
                )
            }
            NodeKind::Item => {
                let p = self.parent(n).map(|p| self.display(p)).unwrap_or_default();
                format!("{p}第{}项", self.label(n).trim_matches(['（', '）']))
            }
            k if k.is_division() => {
                let h = self.heading(n);
                let l = self.label(n);
                match (l.is_empty(), h.is_empty()) {
                    (false, false) => format!("{l} {h}"),
                    (false, true) => l.to_owned(),
                    _ => h.to_owned(),
                }
            }
            NodeKind::Topic => format!("topic「{}」", self.heading(n)),
            NodeKind::Domain => format!("domain「{}」", self.heading(n)),
            NodeKind::Entity => format!("entity「{}」", self.label(n)),
            NodeKind::Concept | NodeKind::Term => format!("「{}」", self.label(n)),
            _ => self.label(n).to_owned(),
        }
    }

    /// The override clauses stated in an article's 款 and 项.
    pub fn clauses_of(&self, article: NodeId) -> impl Iterator<Item = &ClauseInfo> + '_ {
        self.clause_index
            .get(&article)
            .into_iter()
            .flatten()
            .map(|&i| &self.clauses[i as usize])
    }

    /// Articles that yield to another law (另有规定的，依照其规定), with that law's index.
    pub fn defers_to(&self, article: NodeId) -> impl Iterator<Item = usize> + '_ {
        self.graph
            .edges(article)
            .filter(|e| *e.weight() == EdgeKind::DefersTo)
            .map(|e| self.graph[e.target()].law as usize)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::paths::{Bounds, Scratch, ShortestPaths, describe};
    use super::*;
    use kg_store::statute_graph::{
        ConceptRecord, HierarchyKind as K, HierarchyNode, LawRecord, StatuteGraphData,
    };

    /// 甲法: 第一章 (第一条 with two 款, 第二条), 第二章 (第三条 alone); 第一条第二款 cites
    /// 第三条 and 第三条 cites 第一条 (a cycle). 乙法 has no divisions: 第一条. Both
    /// define 「用人单位」.
    pub(crate) fn sample() -> StatuteGraph {
        sample_citing(vec![(7, 5), (5, 3)])
    }

    /// [`sample`] with other citations (node indices as [`sample`] numbers them).
    fn sample_citing(cites: Vec<(u32, u32)>) -> StatuteGraph {
        let n = |kind, parent: Option<u32>, law, segment: &str, label: &str, order| HierarchyNode {
            kind,
            parent,
            law,
            segment: segment.into(),
            label: label.into(),
            heading: if kind == K::Chapter {
                format!("{label}的标题")
            } else {
                String::new()
            },
            order,
        };
        let nodes = vec![
            n(K::Law, None, 0, "http://x/甲法/2020", "甲法", 0), // 0
            n(K::Chapter, Some(0), 0, "chp_1", "第一章", 1),     // 1
            n(K::Chapter, Some(0), 0, "chp_2", "第二章", 2),     // 2
            n(K::Article, Some(1), 0, "art_1", "第一条", 1),     // 3
            n(K::Article, Some(1), 0, "art_2", "第二条", 2),     // 4
            n(K::Article, Some(2), 0, "art_3", "第三条", 1),     // 5
            n(K::Paragraph, Some(3), 0, "par_1", "", 1),         // 6
            n(K::Paragraph, Some(3), 0, "par_2", "", 2),         // 7
            n(K::Item, Some(7), 0, "pnt_1", "（一）", 1),        // 8
            n(K::Law, None, 1, "http://x/乙法/2021", "乙法", 0), // 9
            n(K::Article, Some(9), 1, "art_1", "第一条", 1),     // 10
            n(K::Article, Some(1), 0, "art_133-1", "第一百三十三条之一", 3), // 11
        ];
        let law = |i: u32, name: &str, v: &str| LawRecord {
            work_iri: format!("http://x/{name}"),
            version_iri: v.into(),
            short_name: name.into(),
            title: format!("中华人民共和国{name}"),
            version_date: None,
            folder: "社会法".into(),
            node: i,
        };
        let concept = |law: u32, by: u32| ConceptRecord {
            iri: format!("http://x/c/{law}"),
            label: "用人单位".into(),
            alt_labels: Vec::new(),
            law,
            defined_by: vec![by],
            mentioned_by: Vec::new(),
            entity: Some(0),
        };
        StatuteGraph::new(StatuteGraphData {
            format: kg_store::statute_graph::FORMAT,
            laws: vec![
                law(0, "甲法", "http://x/甲法/2020"),
                law(9, "乙法", "http://x/乙法/2021"),
            ],
            nodes,
            cites,
            concepts: vec![concept(0, 4), concept(1, 10)],
            entities: vec![kg_store::statute_graph::EntityRecord {
                iri: "http://x/e".into(),
                label: "用人单位".into(),
                alt_labels: Vec::new(),
            }],
            ..Default::default()
        })
    }

    #[test]
    fn every_node_has_its_iri_and_provisions_are_found_by_it() {
        let g = sample();
        let id = |i: usize| NodeId::new(i);
        assert_eq!(g.iri(id(5)), "http://x/甲法/2020/art_3");
        assert_eq!(g.iri(id(8)), "http://x/甲法/2020/art_1/par_2/pnt_1");
        assert_eq!(g.iri(id(2)), "http://x/甲法/2020/chp_2");
        assert_eq!(g.iri(id(11)), "http://x/甲法/2020/art_133-1");
        for i in [3, 4, 5, 6, 7, 8, 10, 11] {
            assert_eq!(g.provision(&g.iri(id(i))), Some(id(i)), "{}", g.iri(id(i)));
        }
        assert_eq!(g.provision("http://x/甲法/2020/art_9"), None);
        assert_eq!(g.article_of(id(8)), Some(id(3)));
        assert_eq!(g.chapter_of(id(5)), Some(id(2)));
        // A law without divisions: its articles' "chapter" is the law.
        assert_eq!(g.chapter_of(id(10)), Some(id(9)));
        assert_eq!(g.display(id(8)), "第一条第二款第一项");
        assert_eq!(g.display(id(2)), "第二章 第二章的标题");
        assert_eq!(g.articles_below(id(0)), vec![id(3), id(4), id(11), id(5)]);
        // A concept defined by two laws: one name, two nodes.
        assert_eq!(
            g.names["用人单位"].len(),
            3,
            "two concepts and their entity"
        );
        assert_eq!(g.stats.nodes_by_kind["article"], 5);
        assert_eq!(g.stats.edges_by_kind["cites"], 2);
        assert!(g.stats.memory_bytes > 0);
    }

    #[test]
    fn an_article_knows_its_paragraphs_its_position_and_what_holds_it() {
        let g = sample();
        let id = |i: usize| NodeId::new(i);
        // 第一条 has two 款 and opens 第一章; 第三条 opens 第二章 with no 款 nodes;
        // 乙法's 第一条 stands directly under its law.
        assert_eq!(g.article_shape(id(3)), (2, 1));
        assert_eq!(g.article_shape(id(4)), (0, 2));
        assert_eq!(g.article_shape(id(5)), (0, 1));
        assert_eq!(g.article_shape(id(10)), (0, 1));
        // Below: the article itself, its chapter and law; not the other chapter or law.
        assert!(g.is_below(id(3), id(3)));
        assert!(g.is_below(id(3), id(1)) && g.is_below(id(3), id(0)));
        assert!(
            g.is_below(id(8), id(1)),
            "an item is below its article's chapter"
        );
        assert!(!g.is_below(id(3), id(2)) && !g.is_below(id(3), id(9)));
        assert!(
            !g.is_below(id(1), id(3)),
            "a chapter is not below its article"
        );
    }

    #[test]
    fn paths_go_through_chapters_and_citations_and_survive_a_cycle() {
        let g = sample();
        let id = |i: usize| NodeId::new(i);
        // Document order dearer than any path here, so the other edges are what is walked.
        let bounds = Bounds {
            fan_out_penalty: 0.0,
            adjacent_cost: 10.0,
            ..Bounds::default()
        };
        let mut scratch = Scratch::new(&g);
        let from = ShortestPaths::from(&g, id(4), bounds, &mut scratch);
        // Two articles of one chapter are two steps apart through it.
        assert_eq!(from.cost(id(3)), Some(2.0));
        let steps = from.path(id(3)).unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0].node, id(1));
        assert_eq!(
            describe(&g, id(4), &steps),
            "《甲法》第二条 → 第一章 第一章的标题 → 第一条"
        );
        // 第三条 cites 第一条 and 第一条's second 款 cites 第三条: one step either way, the
        // 款 no hop of its own.
        let from = ShortestPaths::from(&g, id(3), bounds, &mut scratch);
        assert_eq!(from.cost(id(5)), Some(1.0));
        let d = describe(&g, id(3), &from.path(id(5)).unwrap());
        assert_eq!(d, "《甲法》第一条 → cited by → 第三条");
        let from = ShortestPaths::from(&g, id(7), bounds, &mut scratch);
        assert_eq!(from.cost(id(5)), Some(1.0));
        let d = describe(&g, id(7), &from.path(id(5)).unwrap());
        assert_eq!(d, "《甲法》第一条第二款 → cites → 第三条");
        // The fused entity links the two laws' concepts of one name.
        let from = ShortestPaths::from(&g, id(4), bounds, &mut scratch);
        assert_eq!(from.cost(id(10)), Some(3.0));
        let d = describe(&g, id(4), &from.path(id(10)).unwrap());
        assert_eq!(
            d,
            "《甲法》第二条 → defines → 「用人单位」 → same entity as → entity「用人单位」 → same entity as → 「用人单位」 → defined by → 《乙法》第一条"
        );
        // A bound stops the walk.
        let near = ShortestPaths::from(
            &g,
            id(4),
            Bounds {
                max_cost: 1.0,
                ..bounds
            },
            &mut scratch,
        );
        assert_eq!(near.cost(id(3)), None);
        // The fan-out penalty makes a hub's many edges dearer.
        let hub = Bounds {
            fan_out_penalty: 1.0,
            ..bounds
        };
        let from = ShortestPaths::from(&g, id(4), hub, &mut scratch);
        assert!(from.cost(id(3)).unwrap() > 2.0);
    }

    #[test]
    fn the_walks_skip_only_what_reaches_no_article() {
        // Past its last step a search does not settle the 款 and 项 below a node (they
        // lead only to each other and back): every article's cost is still that of a plain
        // relaxation over all the steps, from every seed, under tight and loose bounds.
        let g = sample();
        let id = |i: usize| NodeId::new(i);
        let mut scratch = Scratch::new(&g);
        for (max_cost, adjacent_cost, fan_out_penalty) in [
            (1.0, 10.0, 0.0),
            (2.0, 10.0, 0.0),
            (2.5, 1.0, 0.25),
            (4.0, 0.5, 1.0),
        ] {
            let bounds = Bounds {
                max_cost,
                adjacent_cost,
                fan_out_penalty,
                ..Bounds::default()
            };
            for seed in 0..g.graph.node_count() {
                let reference = relaxed_costs(&g, id(seed), &bounds);
                let from = ShortestPaths::from(&g, id(seed), bounds, &mut scratch);
                for a in (0..g.graph.node_count()).filter(|&a| g.is_article(id(a))) {
                    assert_eq!(
                        from.cost(id(a)),
                        reference[a],
                        "article {a} from {seed} within {max_cost}"
                    );
                }
            }
        }
        // From 第二条 within 2: 第一条 is reached through 第一章 at the last step, its 款
        // and 项 are not walked.
        let bounds = Bounds {
            max_cost: 2.0,
            adjacent_cost: 10.0,
            fan_out_penalty: 0.0,
            ..Bounds::default()
        };
        let from = ShortestPaths::from(&g, id(4), bounds, &mut scratch);
        assert_eq!(from.cost(id(3)), Some(2.0));
        assert_eq!(from.cost(id(7)), None);
        // A 款 a citation reaches at the last step still leads up to its article: from
        // 第三条 within 1, 第一条第二款 (which cites it) and so 第一条, not its 项, when
        // 第三条 does not cite 第一条 itself.
        let g = sample_citing(vec![(7, 5)]);
        let from = ShortestPaths::from(
            &g,
            id(5),
            Bounds {
                max_cost: 1.0,
                ..bounds
            },
            &mut scratch,
        );
        assert_eq!(from.cost(id(7)), Some(1.0));
        assert_eq!(from.cost(id(3)), Some(1.0));
        assert_eq!(from.cost(id(8)), None);
    }

    /// Each node's cheapest cost from `seed` within the bounds, by relaxing every step
    /// until nothing changes (the reference the walks must match on articles).
    fn relaxed_costs(g: &StatuteGraph, seed: NodeId, bounds: &Bounds) -> Vec<Option<f64>> {
        let n = g.graph.node_count();
        let mut cost = vec![f64::INFINITY; n];
        cost[seed.index()] = 0.0;
        loop {
            let mut changed = false;
            for from in 0..n {
                if cost[from].is_infinite() {
                    continue;
                }
                let steps: Vec<(NodeId, EdgeKind)> = g.steps(NodeId::new(from)).collect();
                for &(to, kind) in &steps {
                    let Some(base) = super::paths::edge_cost(kind, bounds) else {
                        continue;
                    };
                    let inside = matches!(
                        (g.kind(NodeId::new(from)), g.kind(to), kind),
                        (_, NodeKind::Paragraph | NodeKind::Item, EdgeKind::Contains)
                            | (
                                NodeKind::Paragraph | NodeKind::Item,
                                _,
                                EdgeKind::ContainedIn
                            )
                    );
                    let fan = steps.iter().filter(|s| s.1 == kind).count();
                    let step = match inside {
                        true => (0.0, 0.0),
                        false if fan > 1 => (base, bounds.fan_out_penalty * (fan as f64).ln()),
                        false => (base, bounds.fan_out_penalty * 0.0),
                    };
                    // Summed as the walks sum: cost + base, then the penalty.
                    let c = cost[from] + step.0 + step.1;
                    if c <= bounds.max_cost && c < cost[to.index()] {
                        cost[to.index()] = c;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
        cost.into_iter()
            .map(|c| c.is_finite().then_some(c))
            .collect()
    }

    #[test]
    fn document_order_links_each_article_to_the_next_across_chapters() {
        let g = sample();
        let id = |i: usize| NodeId::new(i);
        // 甲法 reads 第一条, 第二条, 第一百三十三条之一 (第一章), 第三条 (第二章); 乙法's one
        // article has no neighbour.
        assert_eq!(g.stats.edges_by_kind["precedes"], 3);
        let next = |n: usize| -> Vec<NodeId> {
            g.steps(id(n))
                .filter(|s| s.1 == EdgeKind::Precedes)
                .map(|s| s.0)
                .collect()
        };
        assert_eq!(next(3), vec![id(4)]);
        assert_eq!(next(11), vec![id(5)], "from the end of 第一章 into 第二章");
        assert!(next(5).is_empty() && next(10).is_empty());
        let bounds = Bounds {
            fan_out_penalty: 0.0,
            adjacent_cost: 0.5,
            ..Bounds::default()
        };
        let mut scratch = Scratch::new(&g);
        let from = ShortestPaths::from(&g, id(5), bounds, &mut scratch);
        assert_eq!(from.cost(id(11)), Some(0.5));
        assert_eq!(from.cost(id(4)), Some(1.0), "two articles back");
        assert_eq!(
            describe(&g, id(5), &from.path(id(4)).unwrap()),
            "《甲法》第三条 → previous → 第一百三十三条之一 → previous → 第二条"
        );
        // Never into another law.
        assert!(from.cost(id(10)).is_none_or(|c| c >= 2.0));
    }
}
