//! Tier 4, graph-text verification: tier 3's candidates cross-checked against the
//! statute graph. A candidate is dropped, with the reason and the edge, when
//!
//! - it is a superseded version (a newer version of its law `coal:supersedes` its own);
//! - the question names a law or an article, and no path within the bound reaches the
//!   candidate from any of its explicit links (laws, articles, concepts, entities,
//!   headings);
//! - it yields to another law in play: its article says 另有规定的，依照其规定 and
//!   either names that law (`coal:defersTo`) or defers to 法律/行政法规 in general while
//!   a candidate of another law of that rank ranks above it — the special provision
//!   governs;
//! - a law in play says 以本法为准 over the kind of rules the candidate's law is (本法施行
//!   前制定的有关仲裁的规定, 本院以前的司法解释) and is newer.
//!
//! The candidates the deferrals point to are kept with the reason (they govern).

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use super::Engine;
use super::answer::{Dropped, Kept};
use super::tiers::{Ranked, Ranking};
use crate::graph::NodeId;
use crate::graph::paths::{Bounds, ShortestPaths};
use crate::link::{Link, LinkKind};

/// What tier 4 did to a candidate list: the IRIs kept (in order), the dropped, the kept
/// with their evidence.
pub type Verified = (Vec<String>, Vec<Dropped>, Vec<Kept>);

/// Candidates checked; the context is cut well before.
const CHECKED: usize = 20;
/// The first candidates are never dropped as off-path: the text agrees with them most.
const TRUSTED: usize = 3;

/// What a deferral clause's subject names: 法律 (statutes), 行政法规, 司法解释, or a law.
fn defers_to_rank(subject: &str, folder: &str) -> bool {
    let statute = !matches!(
        folder,
        "行政法规" | "司法解释" | "部门规章" | "地方性法规" | "DLC"
    );
    (subject.contains("法律") && statute)
        || (subject.contains("行政法规") && (statute || folder == "行政法规"))
        || (subject.contains("司法解释") && folder == "司法解释")
}

impl Engine {
    pub(crate) fn verify(&self, t: &mut Ranking, links: &[Link]) {
        let g = &self.graph;
        let mut ranked = std::mem::take(&mut t.ranked);
        let unchecked = ranked.split_off(CHECKED.min(ranked.len()));
        let candidates: Vec<(Ranked, Option<NodeId>)> = ranked
            .into_iter()
            .map(|r| {
                let n = g.get(&r.iri);
                (r, n)
            })
            .collect();
        // Laws in play: linked ones and those of the candidates.
        let mut in_play: HashSet<usize> = links
            .iter()
            .filter(|l| l.kind != LinkKind::Topic)
            .map(|l| g.node(l.node).law as usize)
            .filter(|&l| l < g.laws.len())
            .collect();
        in_play.extend(
            candidates
                .iter()
                .filter_map(|(_, n)| n.map(|n| g.node(n).law as usize)),
        );
        // What the explicit links reach. Only a question that names a law or an article
        // marks out where its answer lies: a concept, entity or heading found in it is
        // one idea of the question, and an article off its paths may answer another
        // (on lecoqa.dev the concept-only check dropped 125 gold articles from tier 3's
        // top 10 and let 25 in).
        let names_where = links
            .iter()
            .any(|l| matches!(l.kind, LinkKind::Law | LinkKind::Article));
        let explicit: Vec<&Link> = links
            .iter()
            .filter(|l| names_where && l.kind != LinkKind::Topic)
            .collect();
        let mut reachable: HashSet<NodeId> = HashSet::default();
        if !explicit.is_empty() {
            let bounds = Bounds::of_method(&self.cfg);
            self.with_scratch(|scratch| {
                for l in &explicit {
                    let paths = ShortestPaths::from(g, l.node, bounds, scratch);
                    reachable.extend(paths.reached().map(|x| x.0).filter(|&n| g.is_article(n)));
                }
            });
        }
        // Rank of the first candidate of each law.
        let mut first_of_law: HashMap<usize, usize> = HashMap::default();
        for (i, (_, n)) in candidates.iter().enumerate() {
            if let Some(n) = n {
                first_of_law.entry(g.node(*n).law as usize).or_insert(i);
            }
        }
        let mut kept = Vec::new();
        for (rank, (r, n)) in candidates.into_iter().enumerate() {
            let Some(n) = n else {
                t.dropped.push(self.superseded(&r.iri));
                continue;
            };
            let law = g.node(n).law as usize;
            if !explicit.is_empty() && rank >= TRUSTED && !reachable.contains(&n) {
                t.dropped.push(Dropped {
                    iri: r.iri,
                    reason: format!(
                        "on no graph path from the question's links ({})",
                        explicit
                            .iter()
                            .map(|l| l.name.as_str())
                            .collect::<Vec<_>>()
                            .join("、")
                    ),
                    edge: None,
                });
                continue;
            }
            if let Some((target, edge, reason)) =
                self.yields_to(n, law, rank, &in_play, &first_of_law)
            {
                let target_law = &g.laws[target].short_name;
                t.dropped.push(Dropped {
                    iri: r.iri.clone(),
                    reason: format!("yields to 《{target_law}》 ({reason}), which is in play"),
                    edge: Some(edge),
                });
                t.kept.push(Kept {
                    iri: g.laws[target].version_iri.clone(),
                    reason: format!(
                        "governs: {} of 《{}》 yields to it",
                        g.label(n),
                        g.laws[law].short_name
                    ),
                });
                continue;
            }
            if let Some((by, clause)) = self.prevailed_over(law, &in_play) {
                t.dropped.push(Dropped {
                    iri: r.iri,
                    reason: format!("《{}》 prevails over it ({clause})", g.laws[by].short_name),
                    edge: Some(format!(
                        "OverrideClause 以本法为准 of 《{}》",
                        g.laws[by].short_name
                    )),
                });
                continue;
            }
            kept.push(Ranked {
                via: "graph, verified",
                ..r
            });
        }
        // Below the checked candidates the ranking goes on unverified (the context never
        // reaches there; recall@100 still counts them).
        kept.extend(unchecked);
        t.ranked = kept;
    }

    /// Tier 4's checks on a given candidate list (best first), as `ask` makes them for
    /// `question`: the candidates kept, and those dropped with the reason and edge. For
    /// tests and tools that check the verification on chosen statutes.
    pub fn verify_candidates(
        &self,
        question: &str,
        candidates: &[&str],
    ) -> Result<Verified, crate::QueryError> {
        let a = self.analyse(question, None, false)?;
        let links = self.linker.link(&self.graph, &a.question, &[], None);
        let mut t = Ranking {
            ranked: candidates
                .iter()
                .enumerate()
                .map(|(i, iri)| Ranked {
                    iri: (*iri).to_owned(),
                    score: 1.0 / (i + 1) as f64,
                    via: "given",
                })
                .collect(),
            ..Ranking::default()
        };
        self.verify(&mut t, &links);
        Ok((
            t.ranked.into_iter().map(|r| r.iri).collect(),
            t.dropped,
            t.kept,
        ))
    }

    /// A candidate outside the current graph: superseded by the law's newer version.
    fn superseded(&self, iri: &str) -> Dropped {
        let version = super::lookup::version_of(iri);
        let newer = self
            .graph
            .versions
            .iter()
            .find(|v| v.supersedes.as_deref() == Some(version))
            .map(|v| v.iri.clone());
        Dropped {
            iri: iri.to_owned(),
            reason: match &newer {
                Some(_) => "a superseded version of its law".into(),
                None => "not in the current version of its law".into(),
            },
            edge: newer.map(|v| format!("{v} coal:supersedes {version}")),
        }
    }

    /// The law an article yields to (index), the edge and the clause, when that law is
    /// in play.
    fn yields_to(
        &self,
        article: NodeId,
        law: usize,
        rank: usize,
        in_play: &HashSet<usize>,
        first_of_law: &HashMap<usize, usize>,
    ) -> Option<(usize, String, String)> {
        let g = &self.graph;
        for target in g.defers_to(article) {
            if target != law && in_play.contains(&target) {
                return Some((
                    target,
                    format!("coal:defersTo 《{}》", g.laws[target].short_name),
                    "另有规定的，依照其规定".into(),
                ));
            }
        }
        // A clause of the article (in any of its 款/项) deferring to a rank of rules: the
        // best-ranked candidate of another law of that rank, above this one, governs.
        for c in g.clauses_of(article).filter(|c| !c.prevails) {
            let best = first_of_law
                .iter()
                .filter(|&(&l, &r)| {
                    l != law && r < rank && defers_to_rank(&c.subject, &g.laws[l].folder)
                })
                .min_by_key(|&(_, &r)| r);
            if let Some((&l, _)) = best {
                return Some((
                    l,
                    format!("OverrideClause {}", c.text),
                    format!("{}另有规定的，依照其规定", c.subject),
                ));
            }
        }
        None
    }

    /// A law in play whose 以本法为准 clause covers `law`'s kind of rules and is newer.
    fn prevailed_over(&self, law: usize, in_play: &HashSet<usize>) -> Option<(usize, String)> {
        let g = &self.graph;
        let mine = &g.laws[law];
        for c in g.clauses.iter().filter(|c| c.prevails) {
            let by = g.node(c.provision).law as usize;
            if by == law || !in_play.contains(&by) {
                continue;
            }
            let newer = match (&g.laws[by].version_date, &mine.version_date) {
                (Some(a), Some(b)) => a > b,
                _ => false,
            };
            let s = &c.subject;
            // 以前作出的相关司法解释: older interpretations of the same matter (their titles
            // share what the matter is called); 有关仲裁的规定: rules named by the matter.
            let covers = (s.contains("司法解释")
                && mine.folder == "司法解释"
                && share_matter(&mine.title, &g.laws[by].title))
                || topic_of_subject(s).is_some_and(|t| mine.title.contains(t));
            if newer && covers {
                return Some((by, c.text.clone()));
            }
        }
        None
    }
}

/// Words every judicial interpretation's title has (最高人民法院关于审理…案件适用法律若干
/// 问题的解释): what is left names the matter.
const TITLE_BOILERPLATE: &[&str] = &[
    "中华人民共和国",
    "最高人民法院",
    "最高人民检察院",
    "关于",
    "审理",
    "办理",
    "案件",
    "适用",
    "法律",
    "若干",
    "问题",
    "具体",
    "应用",
    "的",
    "规定",
    "解释",
    "（一）",
    "（二）",
    "（三）",
    "（四）",
    "（五）",
    "《",
    "》",
    " ",
];

/// Do two titles name the same matter (a shared bigram once the boilerplate is gone)?
fn share_matter(a: &str, b: &str) -> bool {
    let strip = |t: &str| {
        let mut t = t.to_owned();
        for w in TITLE_BOILERPLATE {
            t = t.replace(w, "|");
        }
        t
    };
    let (a, b) = (strip(a), strip(b));
    let grams = |t: &str| -> std::collections::HashSet<(char, char)> {
        t.split('|')
            .flat_map(|part| {
                let c: Vec<char> = part.chars().collect();
                c.windows(2).map(|w| (w[0], w[1])).collect::<Vec<_>>()
            })
            .collect()
    };
    !grams(&a).is_disjoint(&grams(&b))
}

/// 本法施行前制定的有关仲裁的规定 → 仲裁.
fn topic_of_subject(s: &str) -> Option<&str> {
    let start = s.find("有关")? + "有关".len();
    let rest = &s[start..];
    let end = rest.find('的')?;
    let t = &rest[..end];
    (t.chars().count() >= 2).then_some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_deferral_subject_covers() {
        assert!(defers_to_rank("法律", "社会法"));
        assert!(!defers_to_rank("法律", "行政法规"));
        assert!(defers_to_rank("法律、行政法规", "行政法规"));
        assert!(defers_to_rank("司法解释", "司法解释"));
        assert!(!defers_to_rank("国务院", "行政法规"));
        assert_eq!(
            topic_of_subject("本法施行前制定的有关仲裁的规定"),
            Some("仲裁")
        );
        assert_eq!(topic_of_subject("公安部以前制定的规定"), None);
        assert!(share_matter(
            "最高人民法院关于审理民间借贷案件适用法律若干问题的规定",
            "最高人民法院关于审理民间借贷案件适用法律若干问题的规定（旧）"
        ));
        assert!(!share_matter(
            "最高人民法院关于审理民间借贷案件适用法律若干问题的规定",
            "最高人民法院关于审理劳动争议案件适用法律若干问题的解释（三）"
        ));
    }
}
