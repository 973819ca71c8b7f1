//! Question → graph linking: which nodes of the statute graph a question names or is
//! about, each link with its evidence.
//!
//! - laws by name (title or short name, 中华人民共和国, brackets and spaces ignored, or a
//!   short form in common use: 民诉法, 道交法, [`LAW_ALIASES`]);
//! - articles named with their law (劳动合同法第四十七条);
//! - concepts, fused entities and the terms of LLM triples by label or alternative label,
//!   exactly (longest match first) or fuzzily (most of a label's character bigrams in one
//!   clause of the question, in order: 劳动的合同 for 劳动合同 is not, 解除劳动合同 for
//!   劳动合同解除 is);
//! - divisions by heading (第十六章 保理合同 for a question about 保理), when the heading is
//!   specific (a heading that dozens of laws share, 法律责任, links nothing);
//! - topic clusters by the question's embedding against their centroids.
//!
//! The domains of what is linked (the top level of the build's clustering) are the
//! question's D_aug (METHOD.md §3); without clusters, the laws' corpus folders.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;

use crate::graph::{NodeId, NodeKind, StatuteGraph};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkKind {
    Law,
    Article,
    Concept,
    Entity,
    Term,
    Heading,
    Topic,
}

/// One node the question links to.
#[derive(Debug, Clone, Serialize)]
pub struct Link {
    pub kind: LinkKind,
    #[serde(skip)]
    pub node: NodeId,
    pub iri: String,
    /// How the node reads (《劳动合同法》, 第四章 劳动合同的解除和终止, 「用人单位」).
    pub name: String,
    /// Why it was linked.
    pub evidence: String,
    /// How strongly (1 for an exact name; the similarity otherwise).
    pub weight: f64,
    /// The graph domain of the node, when the build clustered articles.
    pub domain: Option<String>,
}

/// Headings shared by more divisions than this are too generic to link (总则, 法律责任).
const GENERIC_HEADING: usize = 8;
/// A fuzzy link needs this share of the label's bigrams, in order, in one clause.
const FUZZY_SHARE: f64 = 0.75;
/// Topics linked by embedding: the nearest two by centred cosine (`make topic-link-analysis`,
/// 128 topics: the first holds a gold article for 39% of lecoqa.dev's questions and 39% of
/// lawbench-3-8.dev's, either of the two for 53% and 55%, a random pick by size for 4%).
const TOPICS: usize = 2;

/// What linking needs from the graph, indexed once at start-up.
pub struct Linker {
    /// Laws by [`coal_corpus::question_name`] of their short name and title.
    pub law_names: HashMap<String, usize>,
    pub longest_law_name: usize,
    /// Concept, entity and term names (labels and alternative labels, two characters or
    /// more) → nodes.
    names: HashMap<String, Vec<NodeId>>,
    longest_name: usize,
    /// For fuzzy matches: names of three characters or more by their first bigram.
    fuzzy: HashMap<(char, char), Vec<String>>,
    /// Specific headings with their divisions and distinct bigrams, and which headings
    /// hold each bigram.
    headings: Vec<(String, Vec<NodeId>, usize)>,
    heading_bigrams: HashMap<(char, char), Vec<u32>>,
    /// Article → domain label, law → domain label (majority of its articles).
    article_domain: HashMap<NodeId, u32>,
    law_domain: Vec<Option<u32>>,
    domain_labels: Vec<String>,
    /// The topics' centroids with their mean taken out, unit length, and that mean
    /// ([`centred`]).
    topic_centroids: Vec<Vec<f32>>,
    topic_mean: Vec<f32>,
}

/// `v − mean`, unit length. The encoder's vectors share a large common direction (any
/// two statute texts have cosine ~.8), so raw cosines to topic centroids differ in the
/// third decimal and rank topics by how typical they are; with the mean taken out they
/// rank them by what they are about.
fn centred(v: &[f32], mean: &[f32]) -> Vec<f32> {
    let mut c: Vec<f32> = v.iter().zip(mean).map(|(a, m)| a - m).collect();
    let n = c.iter().map(|a| a * a).sum::<f32>().sqrt();
    if n > 1e-12 {
        c.iter_mut().for_each(|a| *a /= n);
    }
    c
}

/// The [`TOPICS`] centred centroids nearest `q` once centred by `mean`: (topic, centred
/// cosine, rank from 1). A centroid of another dimension (none: `Vec::new()`) is skipped.
fn nearest_topics(centroids: &[Vec<f32>], mean: &[f32], q: &[f32]) -> Vec<(usize, f32, usize)> {
    if q.len() != mean.len() {
        return Vec::new();
    }
    let q = centred(q, mean);
    let mut sims: Vec<(usize, f32)> = centroids
        .iter()
        .enumerate()
        .filter(|(_, c)| c.len() == q.len())
        .map(|(i, c)| (i, c.iter().zip(&q).map(|(a, b)| a * b).sum()))
        .collect();
    sims.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    sims.into_iter()
        .take(TOPICS)
        .enumerate()
        .map(|(rank, (t, s))| (t, s, rank + 1))
        .collect()
}

fn han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// Short forms of laws' names in common use (民诉法 for 民事诉讼法), each read as the law
/// when the store holds it under the full short name. A list, not a rule: a rule such as
/// "the name's characters in order" reads 合同法 (repealed) as 合同违法行为监督处理办法.
/// Forms that other words contain are left out (消法 in 取消法人资格, 老年法 in 老年法律).
pub const LAW_ALIASES: &[(&str, &str)] = &[
    ("民诉法", "民事诉讼法"),
    ("刑诉法", "刑事诉讼法"),
    ("行诉法", "行政诉讼法"),
    ("道交法", "道路交通安全法"),
    ("消保法", "消费者权益保护法"),
    ("个税法", "个人所得税法"),
    ("治安处罚法", "治安管理处罚法"),
    ("未保法", "未成年人保护法"),
    ("妇保法", "妇女权益保障法"),
    ("残保法", "残疾人保障法"),
    ("国赔法", "国家赔偿法"),
    ("劳动仲裁法", "劳动争议调解仲裁法"),
    ("社保法", "社会保险法"),
    ("环保法", "环境保护法"),
    ("食安法", "食品安全法"),
    ("税收征管法", "税收征收管理法"),
    ("土管法", "土地管理法"),
    ("个保法", "个人信息保护法"),
    ("网安法", "网络安全法"),
    ("电商法", "电子商务法"),
    ("反家暴法", "反家庭暴力法"),
    ("工伤条例", "工伤保险条例"),
];

impl Linker {
    pub fn new(g: &StatuteGraph) -> Linker {
        let mut law_names = HashMap::new();
        for (i, l) in g.laws.iter().enumerate() {
            law_names
                .entry(coal_corpus::question_name(&l.short_name))
                .or_insert(i);
            law_names
                .entry(coal_corpus::question_name(&l.title))
                .or_insert(i);
        }
        for (alias, full) in LAW_ALIASES {
            if let Some(&i) = law_names.get(*full) {
                law_names.entry((*alias).to_owned()).or_insert(i);
            }
        }
        let longest_law_name = law_names
            .keys()
            .map(|k| k.chars().count())
            .max()
            .unwrap_or(0);
        let mut names: HashMap<String, Vec<NodeId>> = HashMap::new();
        for (name, nodes) in &g.names {
            if name.chars().count() >= 2 && !law_names.contains_key(name) {
                names.entry(name.clone()).or_default().extend(nodes);
            }
        }
        let longest_name = names.keys().map(|k| k.chars().count()).max().unwrap_or(0);
        let mut fuzzy: HashMap<(char, char), Vec<String>> = HashMap::new();
        for name in names.keys() {
            let c: Vec<char> = name.chars().collect();
            if c.len() >= 3 {
                fuzzy.entry((c[0], c[1])).or_default().push(name.clone());
            }
        }
        let mut by_heading: HashMap<String, Vec<NodeId>> = HashMap::new();
        for n in g.graph.node_indices() {
            if g.kind(n).is_division() {
                let h = g.heading(n).trim();
                if h.chars().filter(|&c| han(c)).count() >= 2 {
                    by_heading.entry(h.to_owned()).or_default().push(n);
                }
            }
        }
        by_heading.retain(|_, v| v.len() <= GENERIC_HEADING);
        let mut by_heading: Vec<(String, Vec<NodeId>)> = by_heading.into_iter().collect();
        by_heading.sort();
        let mut headings = Vec::new();
        let mut heading_bigrams: HashMap<(char, char), Vec<u32>> = HashMap::new();
        for (h, nodes) in by_heading {
            let grams: HashSet<(char, char)> = coal_corpus::Bigrams::of(&h).distinct().collect();
            if grams.len() < 2 {
                continue;
            }
            for g in &grams {
                heading_bigrams
                    .entry(*g)
                    .or_default()
                    .push(headings.len() as u32);
            }
            headings.push((h, nodes, grams.len()));
        }
        // Domains: an article's is its topic's; a law's the most common of its articles'.
        let mut domain_labels = Vec::new();
        let mut domain_index: HashMap<NodeId, u32> = HashMap::new();
        let mut article_domain = HashMap::new();
        for t in &g.topics {
            let Some(d) = t.domain else { continue };
            let di = *domain_index.entry(d).or_insert_with(|| {
                domain_labels.push(g.heading(d).to_owned());
                domain_labels.len() as u32 - 1
            });
            for (a, kind) in g.steps(t.node) {
                if kind == crate::graph::EdgeKind::TopicOf {
                    article_domain.insert(a, di);
                }
            }
        }
        let mut votes: Vec<HashMap<u32, usize>> = vec![HashMap::new(); g.laws.len()];
        for (&a, &d) in &article_domain {
            if let Some(l) = votes.get_mut(g.node(a).law as usize) {
                *l.entry(d).or_default() += 1;
            }
        }
        let law_domain = votes
            .into_iter()
            .map(|v| {
                v.into_iter()
                    .max_by_key(|&(d, c)| (c, std::cmp::Reverse(d)))
                    .map(|x| x.0)
            })
            .collect();
        let dim = g.topics.first().map_or(0, |t| t.centroid.len());
        let mut topic_mean = vec![0f32; dim];
        let same_dim = || g.topics.iter().filter(|t| t.centroid.len() == dim);
        for t in same_dim() {
            topic_mean
                .iter_mut()
                .zip(&t.centroid)
                .for_each(|(m, c)| *m += c);
        }
        let count = same_dim().count().max(1) as f32;
        topic_mean.iter_mut().for_each(|m| *m /= count);
        let topic_centroids = g
            .topics
            .iter()
            .map(|t| match t.centroid.len() == dim {
                true => centred(&t.centroid, &topic_mean),
                false => Vec::new(),
            })
            .collect();
        Linker {
            law_names,
            longest_law_name,
            names,
            longest_name,
            fuzzy,
            headings,
            heading_bigrams,
            article_domain,
            law_domain,
            domain_labels,
            topic_centroids,
            topic_mean,
        }
    }

    /// The graph domain of a node: an article's topic's, a provision's article's, a
    /// division's or law's law's, a concept's defining law's; the corpus folder when the
    /// build has no clusters.
    pub fn domain_of(&self, g: &StatuteGraph, n: NodeId) -> Option<String> {
        if self.domain_labels.is_empty() {
            return g.law_of(n).map(|l| l.folder.clone());
        }
        let by_article = g
            .article_of(n)
            .and_then(|a| self.article_domain.get(&a))
            .copied();
        let d = by_article.or_else(|| {
            self.law_domain
                .get(g.node(n).law as usize)
                .copied()
                .flatten()
        });
        d.map(|d| self.domain_labels[d as usize].clone())
    }

    /// The domain of a law (by index).
    pub fn law_domain(&self, g: &StatuteGraph, law: usize) -> String {
        match self.law_domain.get(law).copied().flatten() {
            Some(d) => self.domain_labels[d as usize].clone(),
            None if self.domain_labels.is_empty() => g.laws[law].folder.clone(),
            None => String::new(),
        }
    }

    /// The law a name denotes, by the longest suffix of `before` that is a law's name.
    pub fn law_ending(&self, before: &str) -> Option<(usize, usize)> {
        let chars: Vec<char> = coal_corpus::question_name(before).chars().collect();
        (2..=chars.len().min(self.longest_law_name))
            .rev()
            .find_map(|len| {
                let name: String = chars[chars.len() - len..].iter().collect();
                self.law_names.get(&name).map(|&l| (l, len))
            })
    }

    /// Every link of a question. `articles` are the articles it names (already resolved
    /// with their law), `query` its embedding when there is one.
    pub fn link(
        &self,
        g: &StatuteGraph,
        question: &str,
        articles: &[(NodeId, String)],
        query: Option<&[f32]>,
    ) -> Vec<Link> {
        let mut out = Vec::new();
        let mut seen: HashSet<NodeId> = HashSet::new();
        let mut push = |out: &mut Vec<Link>, kind, n: NodeId, evidence: String, weight: f64| {
            if seen.insert(n) {
                out.push(Link {
                    kind,
                    node: n,
                    iri: g.iri(n),
                    name: g.display(n),
                    evidence,
                    weight,
                    domain: self.domain_of(g, n),
                });
            }
        };
        for (n, evidence) in articles {
            push(&mut out, LinkKind::Article, *n, evidence.clone(), 1.0);
        }
        let q = coal_corpus::question_name(question);
        let (laws, names) = self.exact_spans(&q);
        for (l, s) in laws {
            push(
                &mut out,
                LinkKind::Law,
                g.laws[l].node,
                format!("law named 「{s}」"),
                1.0,
            );
        }
        for (nodes, s) in names {
            for &n in nodes {
                let kind = name_kind(g, n);
                push(&mut out, kind, n, format!("exact name 「{s}」"), 1.0);
            }
        }
        for (name, share) in self.fuzzy_names(&q) {
            for &n in &self.names[&name] {
                let kind = name_kind(g, n);
                push(
                    &mut out,
                    kind,
                    n,
                    format!(
                        "fuzzy name 「{name}」 ({:.0}% of its bigrams in order)",
                        share * 100.0
                    ),
                    share,
                );
            }
        }
        for (heading, nodes, share) in self.heading_matches(&q) {
            for &n in nodes {
                push(
                    &mut out,
                    LinkKind::Heading,
                    n,
                    format!(
                        "heading 「{heading}」 ({:.0}% of its bigrams)",
                        share * 100.0
                    ),
                    share,
                );
            }
        }
        if let Some(qv) = query {
            for (t, sim, rank) in self.topics(qv) {
                let topic = &g.topics[t];
                push(
                    &mut out,
                    LinkKind::Topic,
                    topic.node,
                    format!(
                        "question embedding near the topic's centroid (centred cosine {sim:.3}, rank {rank})"
                    ),
                    sim as f64,
                );
            }
        }
        out
    }

    /// Law names, then other names, found exactly in the question: longest first at each
    /// position, without overlaps (a law name's characters are not read again).
    #[allow(clippy::type_complexity)]
    fn exact_spans<'q, 's>(
        &'s self,
        q: &'q str,
    ) -> (Vec<(usize, &'q str)>, Vec<(&'s [NodeId], &'q str)>) {
        // Byte offsets of every character and the end: windows are slices, not copies.
        let at: Vec<usize> = q
            .char_indices()
            .map(|(i, _)| i)
            .chain(std::iter::once(q.len()))
            .collect();
        let n = at.len() - 1;
        let window = |i: usize, len: usize| &q[at[i]..at[i + len]];
        let mut covered = vec![false; n];
        let mut laws = Vec::new();
        let mut i = 0;
        while i < n {
            let max = self.longest_law_name.min(n - i);
            let law = (2..=max).rev().find_map(|len| {
                let s = window(i, len);
                self.law_names.get(s).map(|&l| (l, len, s))
            });
            match law {
                Some((l, len, s)) => {
                    laws.push((l, s));
                    covered[i..i + len].iter_mut().for_each(|c| *c = true);
                    i += len;
                }
                None => i += 1,
            }
        }
        let mut names = Vec::new();
        let mut i = 0;
        while i < n {
            if covered[i] {
                i += 1;
                continue;
            }
            let max = self.longest_name.min(n - i);
            let hit = (2..=max).rev().find_map(|len| {
                if covered[i..i + len].iter().any(|&c| c) {
                    return None;
                }
                let s = window(i, len);
                self.names.get(s).map(|nodes| (nodes, len, s))
            });
            match hit {
                Some((nodes, len, s)) => {
                    names.push((nodes.as_slice(), s));
                    covered[i..i + len].iter_mut().for_each(|c| *c = true);
                    i += len;
                }
                None => i += 1,
            }
        }
        (laws, names)
    }

    /// Names most of whose bigrams occur in order within one clause, not found exactly.
    fn fuzzy_names(&self, q: &str) -> Vec<(String, f64)> {
        let mut out = Vec::new();
        let mut done = HashSet::new();
        for clause in q.split(|c: char| !han(c) && !c.is_alphanumeric()) {
            let c: Vec<char> = clause.chars().collect();
            for w in c.windows(2) {
                let Some(cands) = self.fuzzy.get(&(w[0], w[1])) else {
                    continue;
                };
                for name in cands {
                    if clause.contains(name.as_str()) || !done.insert(name.clone()) {
                        continue;
                    }
                    let share = in_order_share(name, clause);
                    if share >= FUZZY_SHARE {
                        out.push((name.clone(), share));
                    }
                }
            }
        }
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }

    /// Specific headings most of whose bigrams the question has.
    fn heading_matches(&self, q: &str) -> Vec<(&str, &[NodeId], f64)> {
        let mut shared: HashMap<u32, usize> = HashMap::new();
        for g in coal_corpus::Bigrams::of(q).distinct() {
            for &h in self.heading_bigrams.get(&g).into_iter().flatten() {
                *shared.entry(h).or_default() += 1;
            }
        }
        let mut out: Vec<(&str, &[NodeId], f64)> = shared
            .into_iter()
            .filter_map(|(h, n)| {
                let (heading, nodes, total) = &self.headings[h as usize];
                let share = n as f64 / *total as f64;
                (share >= FUZZY_SHARE).then_some((heading.as_str(), nodes.as_slice(), share))
            })
            .collect();
        out.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(b.0)));
        out.truncate(5);
        out
    }

    /// The topics whose centroids are nearest the question, both centred ([`centred`]):
    /// (topic, centred cosine, rank).
    fn topics(&self, q: &[f32]) -> Vec<(usize, f32, usize)> {
        nearest_topics(&self.topic_centroids, &self.topic_mean, q)
    }

    /// The question's D_aug: the distinct domains of its links.
    pub fn domains(links: &[Link]) -> Vec<String> {
        links
            .iter()
            .filter_map(|l| l.domain.clone())
            .filter(|d| !d.is_empty())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }
}

fn name_kind(g: &StatuteGraph, n: NodeId) -> LinkKind {
    match g.kind(n) {
        NodeKind::Entity => LinkKind::Entity,
        NodeKind::Term => LinkKind::Term,
        _ => LinkKind::Concept,
    }
}

/// Share of `name`'s bigrams found in `text` in the same order (a greedy scan).
fn in_order_share(name: &str, text: &str) -> f64 {
    let n: Vec<char> = name.chars().collect();
    let t: Vec<char> = text.chars().collect();
    if n.len() < 2 {
        return 0.0;
    }
    let mut at = 0;
    let mut found = 0;
    for w in n.windows(2) {
        if let Some(p) = t[at..]
            .windows(2)
            .position(|x| x[0] == w[0] && x[1] == w[1])
        {
            found += 1;
            at += p + 1;
        }
    }
    found as f64 / (n.len() - 1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bigrams_in_order() {
        assert_eq!(in_order_share("劳动合同解除", "用人单位解除劳动合同"), 0.6);
        assert!(in_order_share("劳动合同", "签了劳动合同吗") >= 1.0);
        assert!(in_order_share("劳动合同", "劳动的合同") < FUZZY_SHARE);
        assert!(in_order_share("经济补偿金", "要付经济补偿吗") >= 0.75);
    }

    #[test]
    fn topics_rank_by_what_they_are_about_once_the_common_direction_is_out() {
        // Dimension 0 is what every statute text shares. Topics 0 and 1 are tight
        // clusters close to it; topic 2 is broader and about dimension 3, as the question
        // is a little.
        let unit = |v: [f32; 4]| -> Vec<f32> {
            let n = v.iter().map(|a| a * a).sum::<f32>().sqrt();
            v.iter().map(|a| a / n).collect()
        };
        let raw = [
            unit([1.0, 0.3, 0.0, 0.0]),
            unit([1.0, 0.0, 0.3, 0.0]),
            unit([1.0, 0.0, 0.0, 0.6]),
        ];
        let q = unit([1.0, 0.0, 0.0, 0.15]);
        let cos = |t: &[f32]| t.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>();
        assert!(
            cos(&raw[0]) > cos(&raw[2]),
            "raw cosine prefers the typical topic"
        );
        let mean: Vec<f32> = (0..4)
            .map(|i| raw.iter().map(|t| t[i]).sum::<f32>() / 3.0)
            .collect();
        let centroids: Vec<Vec<f32>> = raw.iter().map(|t| centred(t, &mean)).collect();
        let nearest = nearest_topics(&centroids, &mean, &q);
        assert_eq!(nearest.len(), TOPICS);
        assert_eq!((nearest[0].0, nearest[0].2), (2, 1));
        assert!(nearest[0].1 > nearest[1].1);
        // A question of another dimension links no topic.
        assert!(nearest_topics(&centroids, &mean, &[1.0, 0.0]).is_empty());
    }
}
