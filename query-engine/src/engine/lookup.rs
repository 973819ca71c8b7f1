//! "X法第N条的内容是什么": answered from the graph exactly, in the version in force on the
//! question's date; and what the other stages need of law versions.

use std::collections::HashMap;

use super::Engine;
use super::analyse::{Analysis, ArticleMention};
use super::answer::{Answer, AnswerKind, ContextArticle, Trace};

/// When a law version is in force: from its date until the next version's.
#[derive(Debug, Clone)]
pub(crate) struct Validity {
    /// The law's work IRI.
    pub work: String,
    pub from: Option<String>,
    pub until: Option<String>,
}

impl Validity {
    pub fn covers(&self, date: &str) -> bool {
        self.from.as_deref().is_some_and(|f| f <= date)
            && self.until.as_deref().is_none_or(|u| date < u)
    }
}

pub(crate) fn validity_table(
    versions: &[kg_store::statute_graph::VersionEntry],
) -> HashMap<String, Validity> {
    versions
        .iter()
        .map(|v| {
            (
                v.iri.clone(),
                Validity {
                    work: v.work.clone(),
                    from: v.valid_from.clone(),
                    until: v.valid_until.clone(),
                },
            )
        })
        .collect()
}

/// `…/劳动合同法/2012-12-28/art_47` → `…/劳动合同法/2012-12-28`.
pub(crate) fn version_of(article_iri: &str) -> &str {
    coal_ontology::iri::article_parent(article_iri)
}

impl Engine {
    /// The version of the mentioned law in force on `as_of` (the current one without a
    /// date); `None` when the law was not yet in force then.
    pub(crate) fn version_for(&self, m: &ArticleMention, as_of: Option<&str>) -> Option<String> {
        let current = &self.graph.laws[m.law].version_iri;
        let Some(date) = as_of else {
            return Some(current.clone());
        };
        let work = &self.validity.get(current)?.work;
        let mut found: Vec<&String> = self
            .validity
            .iter()
            .filter(|(_, v)| &v.work == work && v.covers(date))
            .map(|(iri, _)| iri)
            .collect();
        found.sort();
        found.first().map(|s| (*s).clone())
    }

    pub(crate) fn article_iri(&self, m: &ArticleMention, as_of: Option<&str>) -> Option<String> {
        self.version_for(m, as_of)
            .map(|v| coal_ontology::iri::article(&v, m.main, m.suffix))
    }

    /// A retrieval list restricted to the versions in force on `as_of`.
    pub(crate) fn in_force(
        &self,
        hits: Vec<crate::retrieve::Hit>,
        as_of: Option<&str>,
        k: usize,
    ) -> Vec<crate::retrieve::Hit> {
        let Some(date) = as_of else {
            return hits;
        };
        hits.into_iter()
            .filter(|h| {
                self.validity
                    .get(version_of(&h.iri))
                    .is_some_and(|v| v.covers(date))
            })
            .take(k)
            .collect()
    }

    /// An article read back from the store, as context.
    pub(crate) fn context_article(
        &self,
        iri: &str,
        score: f64,
        via: &str,
    ) -> Option<ContextArticle> {
        let a = self.retriever.article(iri).ok().flatten()?;
        Some(ContextArticle {
            iri: iri.to_owned(),
            law_title: a.law_title,
            version_date: a.version_date,
            label: a.label,
            text: a.text,
            score,
            via: via.to_owned(),
        })
    }

    /// Does `label` (第N条, 第N条之M) exist in the current version of the law named `law`?
    pub(crate) fn article_exists(&self, law: &str, label: &str) -> bool {
        let Some(&l) = self.linker.law_names.get(&coal_corpus::question_name(law)) else {
            return false;
        };
        let Some(c) = label_re().captures(label) else {
            return false;
        };
        let (Some(main), suffix) = (
            super::analyse::numeral(&c[1]),
            c.get(2)
                .and_then(|m| super::analyse::numeral(m.as_str()))
                .unwrap_or(0),
        ) else {
            return false;
        };
        let iri = coal_ontology::iri::article(&self.graph.laws[l].version_iri, main, suffix);
        self.is_article(&iri)
    }

    /// The refusal of a question that cites only articles of laws the store does not
    /// hold (火星殖民法第三条…), or asks for the text of one it names (《火星殖民法》里第三条
    /// 是什么), whatever its forced tier: any articles found would answer a question it
    /// did not ask.
    pub(crate) fn refusal(&self, a: &Analysis, trace: impl FnOnce() -> Trace) -> Option<Answer> {
        if !a.mentions.is_empty() {
            return None;
        }
        let law = match a.unknown_cited.first() {
            Some(law) => law,
            None => a
                .unknown_laws
                .iter()
                .find(|n| !self.may_abbreviate_a_law(n))
                .filter(|_| a.is_lookup)?,
        };
        Some(self.law_not_in_store(a, law, trace()))
    }

    fn law_not_in_store(&self, a: &Analysis, law: &str, trace: Trace) -> Answer {
        let mut warnings = a.warnings.clone();
        warnings.push(format!(
            "refused: the question asks for an article of 《{law}》, which is not a law of this store"
        ));
        Answer::new(
            a.question.clone(),
            1,
            AnswerKind::LawNotInStore,
            format!("本库没有《{law}》，无法回答其条文。"),
            Vec::new(),
            warnings,
            trace,
        )
    }

    /// The answer to an article lookup, when the question is one: the article's text, or
    /// the reason there is none.
    pub(crate) fn lookup(&self, a: &Analysis, trace: Trace) -> Option<Answer> {
        let q = &a.question;
        if !a.is_lookup {
            return None;
        }
        let warnings = a.warnings.clone();
        let m = a.mentions.first()?;
        let as_of = a.as_of.as_deref();
        let law = &self.graph.laws[m.law];
        let found = self
            .article_iri(m, as_of)
            .and_then(|iri| self.context_article(&iri, 1.0, "graph lookup"));
        let (kind, answer, context) = match (found, as_of) {
            (Some(c), _) => (AnswerKind::ArticleText, c.text.clone(), vec![c]),
            (None, Some(d)) if self.version_for(m, as_of).is_none() => (
                AnswerKind::NoSuchArticle,
                format!("《{}》在{d}尚未施行。", law.title),
                Vec::new(),
            ),
            (None, _) => (
                AnswerKind::NoSuchArticle,
                format!(
                    "《{}》（{}）没有{}。",
                    law.title,
                    self.version_for(m, as_of)
                        .and_then(|v| self.validity.get(&v).and_then(|x| x.from.clone()))
                        .unwrap_or_else(|| "未注明日期".into()),
                    m.label
                ),
                Vec::new(),
            ),
        };
        Some(Answer::new(
            q.clone(),
            1,
            kind,
            answer,
            context,
            warnings,
            trace,
        ))
    }
}

/// A whole article label, `第N条` or `第N条之M`.
fn label_re() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            "^第([零〇一二三四五六七八九十百千两]+)条(?:之([一二三四五六七八九十]+))?$",
        )
        .unwrap()
    })
}
