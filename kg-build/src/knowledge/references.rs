//! Resolving the references `coal-refs` finds to provisions of this corpus.

use std::collections::HashMap;

use coal_corpus::{Article, Corpus, Date, Law, LawVersion};
use coal_ontology::iri;
use coal_refs::{ArticleSpec, LawSpec, ParagraphSpec, Reference};

use crate::rdf::law_iris;

/// Laws by every name a statute may cite them by: full title, title without
/// 中华人民共和国, with or without a trailing （…） note.
pub struct LawNames {
    by_name: HashMap<String, usize>,
    /// The longest name, in characters (bounds the substring searches).
    longest: usize,
}

impl LawNames {
    pub fn new(corpus: &Corpus) -> LawNames {
        let mut by_name = HashMap::new();
        for (i, law) in corpus.laws.iter().enumerate() {
            by_name.entry(law.short_name.clone()).or_insert(i);
            for v in &law.versions {
                by_name
                    .entry(coal_corpus::citation_name(&v.title))
                    .or_insert(i);
            }
        }
        let longest = by_name.keys().map(|n| n.chars().count()).max().unwrap_or(0);
        LawNames { by_name, longest }
    }

    pub fn lookup(&self, name: &str) -> Option<usize> {
        self.by_name.get(&coal_corpus::citation_name(name)).copied()
    }

    /// The law with the longest name of 3+ characters inside `text` (2-character names
    /// such as 刑法 only count right before 有关规定 / 的规定).
    fn name_within(&self, text: &str) -> Option<usize> {
        let chars: Vec<char> = text.chars().collect();
        let mut best: Option<(usize, usize)> = None; // (length, law)
        for start in 0..chars.len() {
            let max = self.longest.min(chars.len() - start);
            for len in (2..=max).rev() {
                if best.is_some_and(|(l, _)| l >= len) {
                    break;
                }
                let end = start + len;
                let name: String = chars[start..end].iter().collect();
                let Some(&law) = self.by_name.get(&name) else {
                    continue;
                };
                // 公司法律 is "company laws", not 公司法.
                if matches!(chars.get(end), Some('律' | '规')) {
                    continue;
                }
                let rest: String = chars[end..].iter().collect();
                if len >= 3 || rest.starts_with("有关规定") || rest.starts_with("的规定") {
                    best = Some((len, law));
                }
            }
        }
        best.map(|(_, law)| law)
    }

    /// The law whose name (2+ characters) `before` ends with, longest first, for
    /// 刑法第X条; with the name's length in characters.
    fn name_ending(&self, before: &[char]) -> Option<(usize, usize)> {
        (2..=self.longest.min(before.len())).rev().find_map(|len| {
            let name: String = before[before.len() - len..].iter().collect();
            self.by_name.get(&name).map(|&law| (law, len))
        })
    }
}

/// The version of `law` in force on `date`: the latest dated on or before it, else the
/// earliest; the latest when `date` is unknown.
pub fn version_in_force(law: &Law, date: Option<Date>) -> usize {
    let Some(date) = date else {
        return law.versions.len() - 1;
    };
    law.versions
        .iter()
        .rposition(|v| v.version_date.is_some_and(|d| d <= date))
        .unwrap_or(0)
}

/// Where a reference was read: law, version, article, paragraph (0-based indexes).
#[derive(Clone, Copy)]
pub struct Place {
    pub law: usize,
    pub version: usize,
    pub article: usize,
    pub paragraph: usize,
}

/// A reference with what it resolved to.
pub struct Resolved {
    pub reference: Reference,
    /// IRIs of the cited provisions (or law version for a whole law), in order.
    pub targets: Vec<String>,
    /// Why nothing (or not everything) resolved.
    pub unresolved: Option<String>,
    /// Written with an article number (本法第X条, 第X条, 《…》第X条): the kind the
    /// resolution goal is measured on.
    pub numbered: bool,
}

pub struct Resolver<'c> {
    corpus: &'c Corpus,
    names: LawNames,
    versions: Vec<Vec<String>>,
}

impl<'c> Resolver<'c> {
    pub fn new(corpus: &'c Corpus) -> Resolver<'c> {
        Resolver {
            corpus,
            names: LawNames::new(corpus),
            versions: corpus.laws.iter().map(|l| law_iris(l).versions).collect(),
        }
    }

    pub fn names(&self) -> &LawNames {
        &self.names
    }

    pub fn version_iri(&self, law: usize, version: usize) -> &str {
        &self.versions[law][version]
    }

    /// Resolves the references found in `text` (the paragraph or item at `at`, with
    /// `offset` characters cut from its start, e.g. the article label).
    pub fn resolve(&self, at: Place, text: &str, offset: usize) -> Vec<Resolved> {
        let here = &self.corpus.laws[at.law].versions[at.version];
        let chars: Vec<char> = text.chars().collect();
        let mut antecedent: Option<Antecedent> = None;
        let mut out = Vec::new();
        for mut r in coal_refs::references(text) {
            // 该条 continues the provision's last reference; a bare 第六项 only within
            // the same sentence.
            let same_sentence = antecedent
                .is_some_and(|a| !chars[a.end.min(r.span.start)..r.span.start].contains(&'。'));
            let end = r.span.end;
            r.span = r.span.start + offset..r.span.end + offset;
            let (resolved, last) =
                self.resolve_one(at, here, &chars, offset, r, antecedent, same_sentence);
            if let Some(mut last) = last {
                last.end = end;
                antecedent = Some(last);
            }
            out.push(resolved);
        }
        out
    }

    /// The versions of `law` to try for a citation made from `here`: the one in force,
    /// then earlier ones (latest first), then later ones. Statutes cite the numbering of
    /// the version they were written against, which an amendment may have moved.
    fn candidate_versions(&self, law: usize, here: &LawVersion) -> Vec<usize> {
        let l = &self.corpus.laws[law];
        let v0 = version_in_force(l, here.version_date);
        std::iter::once(v0)
            .chain((0..v0).rev())
            .chain(v0 + 1..l.versions.len())
            .collect()
    }

    #[allow(clippy::too_many_arguments)]
    fn resolve_one(
        &self,
        at: Place,
        here: &LawVersion,
        text: &[char],
        offset: usize,
        mut r: Reference,
        ante: Option<Antecedent>,
        same_sentence: bool,
    ) -> (Resolved, Option<Antecedent>) {
        let numbered = r.targets.iter().any(|t| {
            matches!(
                t.article,
                Some(ArticleSpec::Number { .. } | ArticleSpec::Range { .. })
            )
        });
        let done = |targets: Vec<String>, unresolved: Option<String>, r: Reference| Resolved {
            reference: r,
            targets,
            unresolved,
            numbered,
        };
        let other = |l: usize| (l, self.candidate_versions(l, here));
        // Which law, and which of its versions to try.
        let (law, versions) = match &r.law {
            LawSpec::This => (at.law, vec![at.version]),
            // 依照刑法有关规定: a law named without brackets is a whole-law reference.
            LawSpec::Generic => {
                let raw: String = r.text.clone();
                return match self.names.name_within(&raw) {
                    Some(l) if l != at.law => {
                        let v = version_in_force(&self.corpus.laws[l], here.version_date);
                        r.law = LawSpec::Named(self.corpus.laws[l].short_name.clone());
                        (done(vec![self.versions[l][v].clone()], None, r), None)
                    }
                    _ => (done(Vec::new(), Some("names no provision".into()), r), None),
                };
            }
            LawSpec::Named(name) => match self.names.lookup(name) {
                Some(l) if l == at.law => (at.law, vec![at.version]),
                Some(l) => other(l),
                None => {
                    let why = format!("《{name}》 is not in the corpus");
                    return (done(Vec::new(), Some(why), r), None);
                }
            },
            LawSpec::Unstated => {
                let start = r.span.start - offset;
                match self.names.name_ending(&text[..start]).filter(|_| numbered) {
                    Some((l, len)) => {
                        r.span.start -= len;
                        let name: String = text[start - len..start].iter().collect();
                        r.text = name + &r.text;
                        r.law = LawSpec::Named(self.corpus.laws[l].short_name.clone());
                        if l == at.law {
                            (at.law, vec![at.version])
                        } else {
                            other(l)
                        }
                    }
                    None => (at.law, vec![at.version]),
                }
            }
        };
        if r.targets.is_empty() {
            let v = versions[0];
            return (done(vec![self.versions[law][v].clone()], None, r), None);
        }
        let mut first = None;
        for &version in &versions {
            let attempt = self.resolve_targets(at, &r, law, version, ante, same_sentence);
            if attempt.problems.is_empty() {
                return (done(attempt.iris, None, r), attempt.last);
            }
            first.get_or_insert(attempt);
        }
        let a = first.expect("at least one version is tried");
        let unresolved = Some(a.problems.join("; "));
        (done(a.iris, unresolved, r), a.last)
    }

    fn resolve_targets(
        &self,
        at: Place,
        r: &Reference,
        law: usize,
        version: usize,
        ante: Option<Antecedent>,
        same_sentence: bool,
    ) -> Attempt {
        let mut out = Attempt {
            iris: Vec::new(),
            problems: Vec::new(),
            last: None,
        };
        for t in &r.targets {
            // (law, version, article index, paragraph inherited from the antecedent)
            let mut inherited_paragraph = None;
            let (law, version, articles) = match (t.article, t.paragraph, ante) {
                (Some(ArticleSpec::Antecedent), _, Some(a)) => (a.law, a.version, vec![a.article]),
                (Some(ArticleSpec::Antecedent), _, None) => {
                    out.problems
                        .push(format!("{}: no article cited before it", r.text));
                    continue;
                }
                // 前款第二项至第五项…；第六项、第七项: the list goes on.
                // Or, past the sentence, when this paragraph has no such item.
                (None, None, Some(a))
                    if a.paragraph.is_some()
                        && t.item
                            .is_some_and(|n| same_sentence || !self.has_item(at, n)) =>
                {
                    inherited_paragraph = a.paragraph;
                    (a.law, a.version, vec![a.article])
                }
                _ => {
                    let same_place = law == at.law && version == at.version;
                    let v = &self.corpus.laws[law].versions[version];
                    match self.articles(t.article, same_place, at, v) {
                        Ok(found) => (law, version, found),
                        Err(why) => {
                            out.problems.push(why);
                            continue;
                        }
                    }
                }
            };
            let v = &self.corpus.laws[law].versions[version];
            let viri = &self.versions[law][version];
            let is_here = |ai: usize| law == at.law && version == at.version && ai == at.article;
            for ai in articles {
                let a = &v.articles[ai];
                let airi = iri::article(viri, a.number.main, a.number.suffix);
                let paragraphs: Vec<u32> = match (t.paragraph, t.item, inherited_paragraph) {
                    (_, _, Some(p)) => vec![p],
                    (None, None, _) => {
                        out.iris.push(airi);
                        out.last = Some(Antecedent::new(law, version, ai, None));
                        continue;
                    }
                    (None, Some(_), _) if t.article.is_none() => vec![at.paragraph as u32 + 1],
                    (None, Some(_), _) => vec![1],
                    (Some(ParagraphSpec::Number(n)), _, _) => vec![n],
                    (Some(ParagraphSpec::This), _, _) if is_here(ai) => {
                        vec![at.paragraph as u32 + 1]
                    }
                    (Some(ParagraphSpec::Previous(k)), _, _) if is_here(ai) => {
                        let cur = at.paragraph as u32 + 1;
                        if cur <= k {
                            out.problems.push(format!("{} in paragraph {cur}", r.text));
                            continue;
                        }
                        (cur - k..cur).collect()
                    }
                    (Some(_), _, _) => {
                        out.problems
                            .push(format!("{} outside its own article", r.text));
                        continue;
                    }
                };
                for pn in paragraphs {
                    let Some(p) = a.paragraphs.iter().find(|p| p.number == pn) else {
                        out.problems
                            .push(format!("{} has no paragraph {pn}", a.label));
                        continue;
                    };
                    let piri = iri::paragraph(&airi, pn);
                    out.last = Some(Antecedent::new(law, version, ai, Some(pn)));
                    match t.item {
                        None => out.iris.push(piri),
                        Some(n) if p.items.iter().any(|i| i.number == n) => {
                            out.iris.push(iri::item(&piri, n))
                        }
                        Some(n) => out
                            .problems
                            .push(format!("{} paragraph {pn} has no item {n}", a.label)),
                    }
                }
            }
        }
        out.iris.dedup();
        out
    }

    /// Does the paragraph being read have item `n`?
    fn has_item(&self, at: Place, n: u32) -> bool {
        let a = &self.corpus.laws[at.law].versions[at.version].articles[at.article];
        a.paragraphs
            .get(at.paragraph)
            .is_some_and(|p| p.items.iter().any(|i| i.number == n))
    }

    /// The articles an article spec names in version `v` (indexes).
    fn articles(
        &self,
        spec: Option<ArticleSpec>,
        same_place: bool,
        at: Place,
        v: &LawVersion,
    ) -> Result<Vec<usize>, String> {
        match spec {
            None | Some(ArticleSpec::This) if same_place => Ok(vec![at.article]),
            None | Some(ArticleSpec::This) => Err("本条 outside its own law".to_owned()),
            Some(ArticleSpec::Previous) if same_place && at.article > 0 => Ok(vec![at.article - 1]),
            Some(ArticleSpec::Previous) => Err("前条 of the first article".to_owned()),
            Some(ArticleSpec::Antecedent) => Err("该条 without an antecedent".to_owned()),
            Some(ArticleSpec::Number { main, suffix }) => find_article(v, main, suffix)
                .map(|i| vec![i])
                .ok_or_else(|| {
                    let s = if suffix > 0 {
                        format!("之{suffix}")
                    } else {
                        String::new()
                    };
                    format!("{} has no article {main}{s}", v.title)
                }),
            Some(ArticleSpec::Range { from, to }) => {
                let has = |n| v.articles.iter().any(|a| a.number.main == n);
                if !has(from) || !has(to) {
                    let missing = if has(from) { to } else { from };
                    return Err(format!("{} has no article {missing}", v.title));
                }
                Ok(v.articles
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| (from..=to).contains(&a.number.main))
                    .map(|(i, _)| i)
                    .collect())
            }
        }
    }
}

/// The provision a reference resolved to last, for the references after it.
#[derive(Clone, Copy)]
pub struct Antecedent {
    law: usize,
    version: usize,
    article: usize,
    paragraph: Option<u32>,
    /// Where the reference ended in the text (characters, without the offset).
    end: usize,
}

impl Antecedent {
    fn new(law: usize, version: usize, article: usize, paragraph: Option<u32>) -> Antecedent {
        Antecedent {
            law,
            version,
            article,
            paragraph,
            end: 0,
        }
    }
}

struct Attempt {
    iris: Vec<String>,
    problems: Vec<String>,
    last: Option<Antecedent>,
}

fn find_article(v: &LawVersion, main: u32, suffix: u32) -> Option<usize> {
    v.articles
        .iter()
        .position(|a: &Article| a.number.main == main && a.number.suffix == suffix)
}
