//! The statute graph the query side walks, extracted once at build time from the build's
//! own RDF graph and stored beside the indexes (`statute-graph.json`), so that `ask`
//! starts in milliseconds instead of running the same SPARQL joins at every start.
//!
//! It holds the current version of every law with its whole hierarchy (law → 编 → 分编 →
//! 章 → 节 → 条 → 款 → 项), citations at paragraph/item precision, concepts with the
//! articles that define and mention them and the entities they were fused into, the topic
//! clusters and domains with their labels, summaries and centroids, override clauses
//! (另有规定 / 以本法为准) and what they defer to, every version of every law with its
//! validity and succession, and the triples an LLM extracted. Node IRIs are not stored
//! whole: a node keeps the last segment of its IRI and its parent, and the query side
//! rebuilds IRIs when it needs them (a tenth of the memory on the whole corpus).
//!
//! Architecture invariant: this is a projection of the RDF graph, nothing more. Every
//! node and edge here comes from a SPARQL query over the build's store, so the query
//! side reads what the build wrote and SPARQL users see the same graph. (An incremental
//! build takes what belongs to its unchanged version graphs from the previous snapshot,
//! which queried those same graphs: see [`Reuse`].)

use std::collections::HashMap;
use std::path::Path;

use oxigraph::model::Term;
use serde::{Deserialize, Serialize};

use crate::{GraphBackend, Result, SparqlOutput, StoreError};

pub const FILE_NAME: &str = "statute-graph.json";

/// Bumped when the file's meaning changes; an older file is re-extracted with SPARQL.
pub const FORMAT: u32 = 1;

/// A node of the hierarchy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HierarchyKind {
    /// The current version of a law (its IRI is the version IRI).
    Law,
    /// 编
    Part,
    /// 分编
    SubPart,
    /// 章
    Chapter,
    /// 节
    Section,
    /// 附则 and other unnumbered divisions, 附件.
    Division,
    /// 条
    Article,
    /// 款
    Paragraph,
    /// 项
    Item,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HierarchyNode {
    pub kind: HierarchyKind,
    /// Index of the containing node (`None` for a law).
    pub parent: Option<u32>,
    /// Index into `laws`.
    pub law: u32,
    /// The IRI's last segment (`art_47`, `par_2`, `chp_4`); a law's whole version IRI.
    /// An article's IRI is its law version's IRI plus this segment (articles are named
    /// below the version, not below their chapter); other nodes' are their parent's.
    pub segment: String,
    /// 第四章, 第四十七条, （一）; empty for paragraphs.
    pub label: String,
    /// A division's heading (劳动合同的解除和终止).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub heading: String,
    /// Position among its parent's children (1-based), or the paragraph/item number.
    pub order: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LawRecord {
    pub work_iri: String,
    pub version_iri: String,
    pub short_name: String,
    pub title: String,
    pub version_date: Option<String>,
    /// The first folder of the law's source file (社会法, 民法商法, …).
    pub folder: String,
    /// Its node in `nodes`.
    pub node: u32,
}

/// Every version of every law (not only the current one) with its validity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VersionEntry {
    pub iri: String,
    /// The law's work IRI.
    pub work: String,
    pub valid_from: Option<String>,
    pub valid_until: Option<String>,
    /// The version this one replaced (coal:supersedes).
    #[serde(default)]
    pub supersedes: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConceptRecord {
    pub iri: String,
    pub label: String,
    /// skos:altLabel (the long form of a 以下简称).
    #[serde(default)]
    pub alt_labels: Vec<String>,
    /// Index into `laws` (the law that defines it).
    pub law: u32,
    /// Article nodes that define it.
    pub defined_by: Vec<u32>,
    /// Article nodes that mention it.
    pub mentioned_by: Vec<u32>,
    /// Index into `entities`: the entity it was fused into.
    pub entity: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntityRecord {
    pub iri: String,
    pub label: String,
    #[serde(default)]
    pub alt_labels: Vec<String>,
}

/// A topic cluster (articles) or a domain (topics), from the build's GMM clustering.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClusterRecord {
    pub iri: String,
    pub label: String,
    #[serde(default)]
    pub summary: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicRecord {
    pub cluster: ClusterRecord,
    /// Index into `domains` (skos:broader).
    pub domain: Option<u32>,
    /// Unit mean embedding of its articles (empty when the build did not record it).
    #[serde(default)]
    pub centroid: Vec<f32>,
    /// Article nodes in the topic (coal:inDomain).
    pub articles: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ClauseKind {
    /// 另有规定的，依照其规定: the provision yields to another rule.
    Defers,
    /// 以本法为准: the law prevails.
    Prevails,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClauseRecord {
    pub iri: String,
    /// The paragraph or item node that states it.
    pub provision: u32,
    pub kind: ClauseKind,
    /// The words naming what it defers to or prevails over (法律、行政法规).
    #[serde(default)]
    pub subject: String,
    pub text: String,
}

/// An LLM-extracted (subject, relation, object) triple of a provision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TripleRecord {
    pub provision: u32,
    pub subject: String,
    pub relation: String,
    pub object: String,
    pub extracted_by: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct StatuteGraphData {
    pub format: u32,
    pub laws: Vec<LawRecord>,
    pub nodes: Vec<HierarchyNode>,
    /// (citing provision, cited node): a paragraph or item (an article when the
    /// reference sits in no 款) to an article, paragraph, item or law node.
    pub cites: Vec<(u32, u32)>,
    pub concepts: Vec<ConceptRecord>,
    pub entities: Vec<EntityRecord>,
    pub topics: Vec<TopicRecord>,
    pub domains: Vec<ClusterRecord>,
    pub clauses: Vec<ClauseRecord>,
    /// (article node, law it yields to), from coal:defersTo.
    pub defers_to: Vec<(u32, u32)>,
    pub versions: Vec<VersionEntry>,
    pub triples: Vec<TripleRecord>,
}

/// A topic's centroid, by topic IRI, handed over by the build (the RDF graph has the
/// clusters but not the vectors).
pub type Centroids = HashMap<String, Vec<f32>>;

/// The rows of `q` sorted by the columns `by` (stably, so ties keep the query's order).
/// Sorting here rather than with ORDER BY: oxigraph's sort decodes both terms at every
/// comparison, which made the paragraphs query (238k rows on the whole corpus) take 59 s
/// instead of 21 s.
fn sorted_rows(g: &dyn GraphBackend, q: &str, by: &[usize]) -> Result<Vec<Vec<String>>> {
    let mut found = rows(g, q)?;
    sort_rows(&mut found, by);
    Ok(found)
}

/// Sorts rows by the columns `by`, stably (ties keep their order).
fn sort_rows(rows: &mut [Vec<String>], by: &[usize]) {
    rows.sort_by(|a, b| {
        by.iter()
            .map(|&c| a[c].cmp(&b[c]))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
}

fn rows(g: &dyn GraphBackend, q: &str) -> Result<Vec<Vec<String>>> {
    let SparqlOutput::Solutions { rows, .. } = g.query(q)? else {
        unreachable!("a SELECT query returns solutions")
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

/// Only the laws query filters to the current versions with this: oxigraph evaluates a
/// FILTER NOT EXISTS once per solution, about a quarter of each hierarchy query's time
/// on the whole corpus (the paragraphs, counted: 14.9–16.8 s with it, 11.7–12.6 s
/// without). The hierarchy queries keep a row only when its version, article or 款 is
/// already in the graph.
const LATEST: &str = "FILTER NOT EXISTS { ?newer coal:supersedes ?v }";

fn some(s: &str) -> Option<String> {
    (!s.is_empty()).then(|| s.to_owned())
}

fn node_kind(class: &str) -> Option<HierarchyKind> {
    Some(match class.rsplit('#').next()? {
        "Part" => HierarchyKind::Part,
        "SubPart" => HierarchyKind::SubPart,
        "Chapter" => HierarchyKind::Chapter,
        "Section" => HierarchyKind::Section,
        "Appendix" | "Division" | "Preamble" => HierarchyKind::Division,
        _ => return None,
    })
}

/// The part of `iri` after `parent` and a slash; the whole IRI when it is not below it.
fn segment_below(iri: &str, parent: &str) -> String {
    iri.strip_prefix(parent)
        .and_then(|s| s.strip_prefix('/'))
        .unwrap_or(iri)
        .to_owned()
}

/// What an incremental build can take from the build it started from: that build's
/// snapshot and the version graphs the new build kept unchanged (same digest). A version
/// graph holds its whole hierarchy, its references and its concept links, so an
/// unchanged one has the same divisions, articles, 款 and 项, citations and
/// defines/mentions rows; they are taken from the base snapshot instead of being queried
/// again (the rows are rebuilt from it and go through the same code as queried rows, so
/// the result is byte-identical to a whole extraction).
pub struct Reuse<'a> {
    pub data: &'a StatuteGraphData,
    pub kept_graphs: &'a std::collections::HashSet<String>,
}

/// Past this many new or changed versions the hierarchy is queried over the whole store
/// at once: a query per version graph costs milliseconds, so a few hundred of them are
/// still well under the whole-store queries' minute on the whole corpus.
const MAX_GRAPHS_QUERIED_APART: usize = 300;

/// Which current versions an extraction takes from the base snapshot.
struct Plan<'a> {
    base: &'a StatuteGraphData,
    /// Base law index → version IRI, for the versions whose graphs were kept.
    reused: HashMap<u32, String>,
    /// The other current versions, queried inside their own graphs.
    fresh: Vec<String>,
    /// Whether the base's citations may be reused (see [`Extraction::plan`]).
    citations: bool,
}

impl Plan<'_> {
    /// Whether base node `n` belongs to a reused version.
    fn reuses(&self, n: u32) -> bool {
        self.reused.contains_key(&self.base.nodes[n as usize].law)
    }
}

/// The division, article, 款 and 项 rows, as the hierarchy queries return them.
#[derive(Default)]
struct HierarchyRows {
    /// ?d ?parent ?class ?v ?order ?label ?heading
    divisions: Vec<Vec<String>>,
    /// ?a ?v ?parent ?order ?label
    articles: Vec<Vec<String>>,
    /// ?p ?a ?n
    paragraphs: Vec<Vec<String>>,
    /// ?i ?p ?n ?label
    items: Vec<Vec<String>>,
}

const DIVISIONS: (&str, &str) = (
    "?d ?parent ?class ?v ?order ?label ?heading",
    "?d coal:inLaw ?v ; a ?class ; coal:order ?order . ?parent coal:contains ?d .
     VALUES ?class { coal:Part coal:SubPart coal:Chapter coal:Section coal:Appendix coal:Division coal:Preamble }
     OPTIONAL { ?d coal:label ?label } OPTIONAL { ?d coal:heading ?heading }",
);
const ARTICLES: (&str, &str) = (
    "?a ?v ?parent ?order ?label",
    "?a a coal:Article ; coal:inLaw ?v ; coal:order ?order ; coal:label ?label .
     ?parent coal:contains ?a .",
);
const PARAGRAPHS: (&str, &str) = (
    "?p ?a ?n",
    "?a a coal:Article ; coal:inLaw ?v ; coal:contains ?p . ?p coal:number ?n .",
);
const ITEMS: (&str, &str) = (
    "?i ?p ?n ?label",
    "?a a coal:Article ; coal:inLaw ?v ; coal:contains ?p . ?p coal:contains ?i .
     ?i coal:number ?n . OPTIONAL { ?i coal:label ?label }",
);

impl HierarchyRows {
    /// Over the whole store (`None`), or inside one version graph.
    fn query(g: &dyn GraphBackend, graph: Option<&str>) -> Result<HierarchyRows> {
        let q = |(vars, pattern): (&str, &str)| match graph {
            None => rows(g, &format!("SELECT {vars} WHERE {{ {pattern} }}")),
            Some(graph) => rows(
                g,
                &format!("SELECT {vars} WHERE {{ GRAPH <{graph}> {{ {pattern} }} }}"),
            ),
        };
        Ok(HierarchyRows {
            divisions: q(DIVISIONS)?,
            articles: q(ARTICLES)?,
            paragraphs: q(PARAGRAPHS)?,
            items: q(ITEMS)?,
        })
    }

    /// The rows that made `nodes` (one law's, in `data`) when `data` was extracted.
    fn from_snapshot(data: &StatuteGraphData, nodes: &[u32]) -> HierarchyRows {
        let mut rows = HierarchyRows::default();
        for &n in nodes {
            let node = &data.nodes[n as usize];
            let iri = data.iri(n);
            let parent = node.parent.map(|p| data.iri(p)).unwrap_or_default();
            let version = || data.laws[node.law as usize].version_iri.clone();
            let order = node.order.to_string();
            let class = match node.kind {
                HierarchyKind::Part => "Part",
                HierarchyKind::SubPart => "SubPart",
                HierarchyKind::Chapter => "Chapter",
                HierarchyKind::Section => "Section",
                HierarchyKind::Division => "Division",
                HierarchyKind::Article => {
                    rows.articles
                        .push(vec![iri, version(), parent, order, node.label.clone()]);
                    continue;
                }
                HierarchyKind::Paragraph => {
                    rows.paragraphs.push(vec![iri, parent, order]);
                    continue;
                }
                HierarchyKind::Item => {
                    rows.items
                        .push(vec![iri, parent, order, node.label.clone()]);
                    continue;
                }
                HierarchyKind::Law => continue,
            };
            rows.divisions.push(vec![
                iri,
                parent,
                format!("{}{class}", coal_ontology::ns::COAL),
                version(),
                order,
                node.label.clone(),
                node.heading.clone(),
            ]);
        }
        rows
    }

    fn extend(&mut self, other: HierarchyRows) {
        self.divisions.extend(other.divisions);
        self.articles.extend(other.articles);
        self.paragraphs.extend(other.paragraphs);
        self.items.extend(other.items);
    }

    /// The order the nodes are numbered in, whatever the rows came from: divisions by
    /// IRI length (a parent's IRI is a prefix of its children's), then IRI; the rest by
    /// IRI (stably). Sorting here rather than with ORDER BY: see `sorted_rows`.
    fn sort(&mut self) {
        self.divisions
            .sort_by(|a, b| a[0].len().cmp(&b[0].len()).then_with(|| a[0].cmp(&b[0])));
        for list in [&mut self.articles, &mut self.paragraphs, &mut self.items] {
            sort_rows(list, &[0]);
        }
    }
}

/// Builds the snapshot while the queries come in: node IRIs are known only here.
struct Extraction {
    data: StatuteGraphData,
    index: HashMap<String, u32>,
    law_of_version: HashMap<String, u32>,
}

impl Extraction {
    fn add_node(&mut self, iri: &str, node: HierarchyNode) -> u32 {
        let n = self.data.nodes.len() as u32;
        self.data.nodes.push(node);
        self.index.insert(iri.to_owned(), n);
        n
    }

    fn laws(&mut self, g: &dyn GraphBackend) -> Result<()> {
        for r in rows(
            g,
            &format!(
                "SELECT ?v ?w ?short ?title ?date (SAMPLE(?file) AS ?f) WHERE {{
                   ?v a coal:LawVersion ; coal:versionOf ?w ; coal:shortName ?short ;
                      coal:title ?title ; coal:sourceFile ?file .
                   OPTIONAL {{ ?v coal:versionDate ?date }} {LATEST} }}
                 GROUP BY ?v ?w ?short ?title ?date ORDER BY ?v"
            ),
        )? {
            let law = self.data.laws.len() as u32;
            let node = self.add_node(
                &r[0],
                HierarchyNode {
                    kind: HierarchyKind::Law,
                    parent: None,
                    law,
                    segment: r[0].clone(),
                    label: r[2].clone(),
                    heading: String::new(),
                    order: 0,
                },
            );
            self.law_of_version.insert(r[0].clone(), law);
            self.data.laws.push(LawRecord {
                version_iri: r[0].clone(),
                work_iri: r[1].clone(),
                short_name: r[2].clone(),
                title: r[3].clone(),
                version_date: some(&r[4]),
                folder: r[5].split('/').next().unwrap_or_default().to_owned(),
                node,
            });
        }
        Ok(())
    }

    /// The hierarchy below the laws, from its rows: divisions (parents before children:
    /// a division's IRI extends its parent's), then articles, 款 and 项.
    fn hierarchy(&mut self, mut rows: HierarchyRows) {
        rows.sort();
        for r in rows.divisions {
            let (Some(&law), Some(&parent), Some(kind)) = (
                self.law_of_version.get(&r[3]),
                self.index.get(&r[1]),
                node_kind(&r[2]),
            ) else {
                continue;
            };
            let segment = segment_below(&r[0], &r[1]);
            self.add_node(
                &r[0],
                HierarchyNode {
                    kind,
                    parent: Some(parent),
                    law,
                    segment,
                    label: r[5].clone(),
                    heading: r[6].clone(),
                    order: r[4].parse().unwrap_or(0),
                },
            );
        }
        for r in rows.articles {
            let (Some(&law), Some(&parent)) =
                (self.law_of_version.get(&r[1]), self.index.get(&r[2]))
            else {
                continue;
            };
            let segment = segment_below(&r[0], &r[1]);
            self.add_node(
                &r[0],
                HierarchyNode {
                    kind: HierarchyKind::Article,
                    parent: Some(parent),
                    law,
                    segment,
                    label: r[4].clone(),
                    heading: String::new(),
                    order: r[3].parse().unwrap_or(0),
                },
            );
        }
        for (list, kind) in [
            (rows.paragraphs, HierarchyKind::Paragraph),
            (rows.items, HierarchyKind::Item),
        ] {
            for r in list {
                let Some(&parent) = self.index.get(&r[1]) else {
                    continue;
                };
                let law = self.data.nodes[parent as usize].law;
                let segment = segment_below(&r[0], &r[1]);
                self.add_node(
                    &r[0],
                    HierarchyNode {
                        kind,
                        parent: Some(parent),
                        law,
                        segment,
                        label: r.get(3).cloned().unwrap_or_default(),
                        heading: String::new(),
                        order: r[2].parse().unwrap_or(0),
                    },
                );
            }
        }
    }

    /// What to take from the base snapshot and what to query: `None` (query everything
    /// over the whole store) without a base or past [`MAX_GRAPHS_QUERIED_APART`] new or
    /// changed versions.
    fn plan<'b>(&self, base: Option<&Reuse<'b>>) -> Option<Plan<'b>> {
        let base = base?;
        let base_laws: HashMap<&str, u32> = base
            .data
            .laws
            .iter()
            .enumerate()
            .map(|(i, l)| (l.version_iri.as_str(), i as u32))
            .collect();
        let mut plan = Plan {
            base: base.data,
            reused: HashMap::new(),
            fresh: Vec::new(),
            citations: true,
        };
        let old_in_base: std::collections::HashSet<&str> =
            base.data.versions.iter().map(|v| v.iri.as_str()).collect();
        for law in &self.data.laws {
            let v = law.version_iri.as_str();
            match base_laws.get(v) {
                Some(&b) if base.kept_graphs.contains(v) => {
                    plan.reused.insert(b, v.to_owned());
                }
                _ => plan.fresh.push(v.to_owned()),
            }
            // A version current now but superseded in the base: the base dropped the
            // citations into it (they pointed at no current node), which a kept graph
            // may still hold.
            if !base_laws.contains_key(v) && old_in_base.contains(v) {
                plan.citations = false;
            }
        }
        (plan.fresh.len() <= MAX_GRAPHS_QUERIED_APART).then_some(plan)
    }

    /// The hierarchy rows of the current versions: each reused version's from the base
    /// snapshot, the others' from SPARQL (one query per table over the whole store, or
    /// per version graph when only a few are new).
    fn hierarchy_rows(
        &self,
        g: &dyn GraphBackend,
        plan: Option<&Plan<'_>>,
    ) -> Result<HierarchyRows> {
        let Some(plan) = plan else {
            return HierarchyRows::query(g, None);
        };
        let mut rows = HierarchyRows::default();
        let mut below: Vec<Vec<u32>> = vec![Vec::new(); plan.base.laws.len()];
        for (n, node) in plan.base.nodes.iter().enumerate() {
            if node.kind != HierarchyKind::Law && plan.reused.contains_key(&node.law) {
                below[node.law as usize].push(n as u32);
            }
        }
        for nodes in below.iter().filter(|b| !b.is_empty()) {
            rows.extend(HierarchyRows::from_snapshot(plan.base, nodes));
        }
        for v in &plan.fresh {
            rows.extend(HierarchyRows::query(g, Some(v))?);
        }
        Ok(rows)
    }

    /// (citing provision, cited IRI) rows: a reused version's citations from the base
    /// snapshot, the others' from SPARQL.
    fn citation_rows(
        &self,
        g: &dyn GraphBackend,
        plan: Option<&Plan<'_>>,
    ) -> Result<Vec<Vec<String>>> {
        const CITATIONS: &str =
            "?r a coal:Reference ; coal:fromProvision ?from ; coal:refersTo ?to";
        let Some(plan) = plan.filter(|p| p.citations) else {
            return rows(
                g,
                &format!("SELECT DISTINCT ?from ?to WHERE {{ {CITATIONS} }}"),
            );
        };
        let mut found: Vec<Vec<String>> = plan
            .base
            .cites
            .iter()
            .filter(|(from, _)| plan.reuses(*from))
            .map(|&(from, to)| vec![plan.base.iri(from), plan.base.iri(to)])
            .collect();
        for v in &plan.fresh {
            found.extend(rows(
                g,
                &format!("SELECT DISTINCT ?from ?to WHERE {{ GRAPH <{v}> {{ {CITATIONS} }} }}"),
            )?);
        }
        Ok(found)
    }

    /// (article, defines|mentions, concept) rows: a reused version's from the base
    /// snapshot, the others' from SPARQL; sorted by concept, then article.
    fn concept_link_rows(
        &self,
        g: &dyn GraphBackend,
        plan: Option<&Plan<'_>>,
    ) -> Result<Vec<Vec<String>>> {
        const LINKS: &str = "VALUES ?p { coal:defines coal:mentions } ?a ?p ?c .";
        let Some(plan) = plan else {
            return sorted_rows(
                g,
                &format!("SELECT ?a ?p ?c WHERE {{ {LINKS} ?c a coal:Concept }}"),
                &[2, 0],
            );
        };
        let mut found = Vec::new();
        for c in &plan.base.concepts {
            for (articles, p) in [(&c.defined_by, "defines"), (&c.mentioned_by, "mentions")] {
                for &a in articles.iter().filter(|&&a| plan.reuses(a)) {
                    found.push(vec![
                        plan.base.iri(a),
                        format!("{}{p}", coal_ontology::ns::COAL),
                        c.iri.clone(),
                    ]);
                }
            }
        }
        for v in &plan.fresh {
            found.extend(rows(
                g,
                &format!("SELECT ?a ?p ?c WHERE {{ GRAPH <{v}> {{ {LINKS} }} ?c a coal:Concept }}"),
            )?);
        }
        sort_rows(&mut found, &[2, 0]);
        Ok(found)
    }

    /// Citations from the provision that holds each reference to what it resolved to.
    fn citations(&mut self, g: &dyn GraphBackend, plan: Option<&Plan<'_>>) -> Result<()> {
        let mut cites = Vec::new();
        for r in self.citation_rows(g, plan)? {
            let Some(&from) = self.index.get(&r[0]) else {
                continue;
            };
            // A target in an older version or outside the store is not walked.
            let to = self
                .index
                .get(&r[1])
                .or_else(|| self.index.get(article_of(&r[1])))
                .copied();
            if let Some(to) = to
                && to != from
            {
                cites.push((from, to));
            }
        }
        cites.sort_unstable();
        cites.dedup();
        self.data.cites = cites;
        Ok(())
    }

    fn concepts(&mut self, g: &dyn GraphBackend, plan: Option<&Plan<'_>>) -> Result<()> {
        let mut entities: HashMap<String, u32> = HashMap::new();
        for r in rows(
            g,
            "SELECT ?e ?label (GROUP_CONCAT(?alt; separator=\"\\u001f\") AS ?alts) WHERE {
               ?e a coal:Entity ; skos:prefLabel ?label . OPTIONAL { ?e skos:altLabel ?alt } }
             GROUP BY ?e ?label ORDER BY ?e",
        )? {
            entities.insert(r[0].clone(), self.data.entities.len() as u32);
            self.data.entities.push(EntityRecord {
                iri: r[0].clone(),
                label: r[1].clone(),
                alt_labels: split_alts(&r[2]),
            });
        }
        let mut concepts: HashMap<String, usize> = HashMap::new();
        for r in rows(
            g,
            "SELECT ?c ?label ?entity (GROUP_CONCAT(?alt; separator=\"\\u001f\") AS ?alts) WHERE {
               ?c a coal:Concept ; coal:label ?label .
               OPTIONAL { ?c coal:fusedInto ?entity } OPTIONAL { ?c skos:altLabel ?alt } }
             GROUP BY ?c ?label ?entity ORDER BY ?c",
        )? {
            concepts.insert(r[0].clone(), self.data.concepts.len());
            self.data.concepts.push(ConceptRecord {
                iri: r[0].clone(),
                label: r[1].clone(),
                alt_labels: split_alts(&r[3]),
                law: u32::MAX,
                defined_by: Vec::new(),
                mentioned_by: Vec::new(),
                entity: entities.get(&r[2]).copied(),
            });
        }
        for r in self.concept_link_rows(g, plan)? {
            let (Some(&a), Some(&c)) = (self.index.get(&r[0]), concepts.get(&r[2])) else {
                continue;
            };
            let concept = &mut self.data.concepts[c];
            if r[1].ends_with("#defines") {
                concept.defined_by.push(a);
            } else {
                concept.mentioned_by.push(a);
            }
        }
        // A concept's law: its defining article's (else the first mentioning one's); a
        // concept of older versions only is not in the current graph.
        let nodes = &self.data.nodes;
        self.data
            .concepts
            .retain_mut(|c| match c.defined_by.first().or(c.mentioned_by.first()) {
                Some(&a) => {
                    c.law = nodes[a as usize].law;
                    true
                }
                None => false,
            });
        Ok(())
    }

    fn clusters(&mut self, g: &dyn GraphBackend, centroids: &Centroids) -> Result<()> {
        let mut domains: HashMap<String, u32> = HashMap::new();
        let mut topics: HashMap<String, usize> = HashMap::new();
        let clusters = rows(
            g,
            "SELECT ?d ?label ?summary ?broader WHERE { ?d a coal:Domain ; coal:label ?label .
               OPTIONAL { ?d coal:summary ?summary } OPTIONAL { ?d skos:broader ?broader } }
             ORDER BY ?d",
        )?;
        for r in clusters.iter().filter(|r| r[3].is_empty()) {
            domains.insert(r[0].clone(), self.data.domains.len() as u32);
            self.data.domains.push(ClusterRecord {
                iri: r[0].clone(),
                label: r[1].clone(),
                summary: some(&r[2]),
            });
        }
        for r in clusters.iter().filter(|r| !r[3].is_empty()) {
            topics.insert(r[0].clone(), self.data.topics.len());
            self.data.topics.push(TopicRecord {
                cluster: ClusterRecord {
                    iri: r[0].clone(),
                    label: r[1].clone(),
                    summary: some(&r[2]),
                },
                domain: domains.get(&r[3]).copied(),
                centroid: centroids.get(&r[0]).cloned().unwrap_or_default(),
                articles: Vec::new(),
            });
        }
        // Without `?a a coal:Article`, which made oxigraph visit every article of every
        // version (2.3 s on the whole corpus against 0.05 s); the node's kind is checked
        // here instead.
        for r in sorted_rows(g, "SELECT ?a ?t WHERE { ?a coal:inDomain ?t }", &[1, 0])? {
            if let (Some(&a), Some(&t)) = (self.index.get(&r[0]), topics.get(&r[1]))
                && self.data.nodes[a as usize].kind == HierarchyKind::Article
            {
                self.data.topics[t].articles.push(a);
            }
        }
        Ok(())
    }

    fn clauses(&mut self, g: &dyn GraphBackend) -> Result<()> {
        for r in sorted_rows(
            g,
            "SELECT ?c ?p ?kind ?subject ?text WHERE { ?c a coal:OverrideClause ;
               coal:fromProvision ?p ; coal:clauseKind ?kind ; coal:rawText ?text .
               OPTIONAL { ?c coal:subjectText ?subject } }",
            &[0],
        )? {
            let Some(&provision) = self.index.get(&r[1]) else {
                continue;
            };
            self.data.clauses.push(ClauseRecord {
                iri: r[0].clone(),
                provision,
                kind: if r[2] == "prevails" {
                    ClauseKind::Prevails
                } else {
                    ClauseKind::Defers
                },
                subject: r[3].clone(),
                text: r[4].clone(),
            });
        }
        let law_of_work: HashMap<&str, u32> = self
            .data
            .laws
            .iter()
            .enumerate()
            .map(|(i, l)| (l.work_iri.as_str(), i as u32))
            .collect();
        for r in sorted_rows(
            g,
            "SELECT ?a ?v ?w WHERE { ?a coal:defersTo ?v . OPTIONAL { ?v coal:versionOf ?w } }",
            &[0, 1],
        )? {
            // The deferred-to law, in whichever version the build resolved: its current one.
            let law = self
                .law_of_version
                .get(&r[1])
                .or_else(|| law_of_work.get(r[2].as_str()))
                .copied();
            if let (Some(&a), Some(law)) = (self.index.get(&r[0]), law) {
                self.data.defers_to.push((a, law));
            }
        }
        self.data.defers_to.dedup();
        Ok(())
    }

    fn triples(&mut self, g: &dyn GraphBackend) -> Result<()> {
        for r in rows(
            g,
            "SELECT ?p ?s ?rel ?o ?by WHERE { ?t a coal:ExtractedTriple ; coal:fromProvision ?p ;
               coal:tripleSubject ?s ; coal:tripleRelation ?rel ; coal:tripleObject ?o .
               OPTIONAL { ?t coal:extractedBy ?by } } ORDER BY ?t",
        )? {
            if let Some(&provision) = self.index.get(&r[0]) {
                self.data.triples.push(TripleRecord {
                    provision,
                    subject: r[1].clone(),
                    relation: r[2].clone(),
                    object: r[3].clone(),
                    extracted_by: r[4].clone(),
                });
            }
        }
        Ok(())
    }
}

/// Runs one step of the extraction and logs its time (`COAL_LOG=kg_store=debug`).
fn timed<T>(step: &str, f: impl FnOnce() -> T) -> T {
    let t = std::time::Instant::now();
    let out = f();
    tracing::debug!(step, secs = t.elapsed().as_secs_f64(), "statute graph");
    out
}

fn split_alts(s: &str) -> Vec<String> {
    let mut v: Vec<String> = s
        .split('\u{1f}')
        .filter(|x| !x.is_empty())
        .map(str::to_owned)
        .collect();
    v.sort();
    v.dedup();
    v
}

impl StatuteGraphData {
    /// Extracts the graph with SPARQL (current versions; every version's validity).
    /// `centroids` are the topic vectors the build computed (empty: none recorded).
    pub fn extract(g: &dyn GraphBackend, centroids: &Centroids) -> Result<StatuteGraphData> {
        Ok(Self::extract_reusing(g, centroids, None)?.0)
    }

    /// [`Self::extract`], taking the hierarchy of unchanged versions from a base build's
    /// snapshot (the same graph as a whole extraction, in less time). Returns the graph
    /// and how many versions' hierarchies were reused.
    pub fn extract_reusing(
        g: &dyn GraphBackend,
        centroids: &Centroids,
        base: Option<&Reuse<'_>>,
    ) -> Result<(StatuteGraphData, usize)> {
        let mut x = Extraction {
            data: StatuteGraphData {
                format: FORMAT,
                ..Default::default()
            },
            index: HashMap::new(),
            law_of_version: HashMap::new(),
        };
        timed("laws", || x.laws(g))?;
        let plan = x.plan(base);
        let rows = timed("hierarchy rows", || x.hierarchy_rows(g, plan.as_ref()))?;
        timed("hierarchy", || x.hierarchy(rows));
        timed("citations", || x.citations(g, plan.as_ref()))?;
        timed("concepts", || x.concepts(g, plan.as_ref()))?;
        timed("clusters", || x.clusters(g, centroids))?;
        timed("clauses", || x.clauses(g))?;
        timed("triples", || x.triples(g))?;
        x.data.versions = timed("versions", || Self::extract_versions(g))?;
        let reused = plan.map_or(0, |p| p.reused.len());
        Ok((x.data, reused))
    }

    /// Every law version with its validity and the version it supersedes.
    pub fn extract_versions(g: &dyn GraphBackend) -> Result<Vec<VersionEntry>> {
        Ok(rows(
            g,
            "SELECT ?v ?w ?from ?until ?old WHERE { ?v a coal:LawVersion ; coal:versionOf ?w .
               OPTIONAL { ?v coal:validFrom ?from } OPTIONAL { ?v coal:validUntil ?until }
               OPTIONAL { ?v coal:supersedes ?old } }
             ORDER BY ?v",
        )?
        .into_iter()
        .map(|r| VersionEntry {
            iri: r[0].clone(),
            work: r[1].clone(),
            valid_from: some(&r[2]),
            valid_until: some(&r[3]),
            supersedes: some(&r[4]),
        })
        .collect())
    }

    pub fn write(&self, dir: &Path) -> Result<()> {
        let path = dir.join(FILE_NAME);
        let json = serde_json::to_vec(self).map_err(|e| StoreError::Serialize(e.to_string()))?;
        std::fs::write(&path, json).map_err(|e| StoreError::io(&path, e))
    }

    /// `None` when the build has no such file, or one of an older format.
    pub fn read(dir: &Path) -> Result<Option<StatuteGraphData>> {
        let path = dir.join(FILE_NAME);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(&path, e)),
        };
        let data: StatuteGraphData = serde_json::from_slice(&bytes)
            .map_err(|e| StoreError::Serialize(format!("{}: {e}", path.display())))?;
        Ok((data.format == FORMAT).then_some(data))
    }

    /// The IRI of node `n`.
    pub fn iri(&self, n: u32) -> String {
        let node = &self.nodes[n as usize];
        match (node.kind, node.parent) {
            (HierarchyKind::Law, _) | (_, None) => node.segment.clone(),
            (HierarchyKind::Article, _) => format!(
                "{}/{}",
                self.laws[node.law as usize].version_iri, node.segment
            ),
            (_, Some(p)) if !node.segment.starts_with("http") => {
                format!("{}/{}", self.iri(p), node.segment)
            }
            _ => node.segment.clone(),
        }
    }
}
