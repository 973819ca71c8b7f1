//! The last stage and what `ask` returns: the answer (extractive, or written by a chat
//! model from the numbered context with every citation checked), its citations, the
//! context and the trace every stage filled.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::complexity::Complexity;
use crate::link::Link;
use crate::retrieve::{Hit, ParagraphHit};

#[derive(Debug, Clone, Serialize)]
pub struct ContextArticle {
    pub iri: String,
    pub law_title: String,
    pub version_date: String,
    pub label: String,
    pub text: String,
    pub score: f64,
    /// Which retriever or graph path brought it.
    pub via: String,
}

impl ContextArticle {
    /// The question names this article: the context stage put it first, with an infinite
    /// score, whatever the ranking said.
    pub fn named_in_question(&self) -> bool {
        self.score == f64::INFINITY
    }
}

/// A candidate a tier left out, with the reason and the graph edge that decided it.
#[derive(Debug, Clone, Serialize)]
pub struct Dropped {
    pub iri: String,
    pub reason: String,
    /// The edge or node that made the decision (`defersTo 《保险法》`, `supersedes …`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub edge: Option<String>,
}

/// A candidate a tier kept because the graph says it governs.
#[derive(Debug, Clone, Serialize)]
pub struct Kept {
    pub iri: String,
    pub reason: String,
}

/// A path of the statute graph from a linked node to an article of the ranking.
#[derive(Debug, Clone, Serialize)]
pub struct ExplainedPath {
    pub article: String,
    /// The node the path starts from: a link of the question or a retrieved article.
    pub from: String,
    /// 《劳动合同法》第四章 → 第四十六条 → cites → 第四十七条
    pub path: String,
    pub cost: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Citation {
    pub law_title: String,
    pub version_date: String,
    pub label: String,
    pub iri: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AnswerKind {
    /// The question asked for an article and the graph has it: the answer is its text.
    ArticleText,
    /// The question asked for an article that the graph does not have.
    NoSuchArticle,
    /// The question asked for an article of a law this store does not hold.
    LawNotInStore,
    /// The applicable articles, most relevant first.
    ApplicableArticles,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Trace {
    pub complexity: Option<Complexity>,
    /// Who decomposed the question: `rules` or the chat model's id.
    pub decomposed_by: String,
    /// The graph nodes the question links to, with the evidence.
    pub links: Vec<Link>,
    /// The chat model's draft answer the tier searched with (`[method] draft_from_tier`).
    pub draft: Option<String>,
    /// The candidates the chat model judged (`[method] judge_from_tier`), in the order
    /// they took, with its probability that the answer needs each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub judged: Vec<crate::judge::Judged>,
    /// How many of the judged candidates the context kept (what `calibrate` cuts the tier's
    /// ranking at in place of the cliff).
    #[serde(skip)]
    pub judged_keep: Option<usize>,
    /// Citations cut from a generated answer, with the reason.
    pub removed_citations: Vec<super::generate::RemovedCitation>,
    pub bm25: Vec<Hit>,
    /// BM25 over character bigrams.
    pub bigram: Vec<Hit>,
    pub dense: Vec<Hit>,
    /// 款 nearest the question (the graph tiers' finer dense signal).
    pub paragraphs: Vec<ParagraphHit>,
    /// The method's fusion, 0.7·dense + 0.3·BM25.
    pub hybrid: Vec<Hit>,
    /// Tier 2's re-ranking of all three lists with the graph's signals (`rerank.rs`).
    pub reranked: Vec<Hit>,
    /// Tier 3/4's graph scores.
    pub graph: Vec<Hit>,
    /// The paths that reached the articles of the context (tiers 3–4).
    pub paths: Vec<ExplainedPath>,
    /// Linked headings tiers 3–4 left out: no article below them ranks in tier 3's text
    /// ranking's top [`super::HEADING_CONFIRMED_WITHIN`].
    pub unconfirmed_headings: Vec<String>,
    pub dropped: Vec<Dropped>,
    pub kept: Vec<Kept>,
    /// The first [`RANKED_KEPT`] articles of the routed ranking (named articles first),
    /// before the score cliff cuts the context: what routed Recall@10 and @100 measure.
    pub ranked: Vec<String>,
    /// The tier's own ranking before the score cliff (first [`TIER_RANKING_KEPT`], with
    /// scores): what `calibrate` recomputes the context from for other cliff bounds.
    #[serde(skip)]
    pub tier_ranking: Vec<(String, f64)>,
    pub timings_ms: BTreeMap<String, f64>,
}

/// Articles of the tier's own ranking kept in [`Trace::tier_ranking`]: more than any
/// context bound `calibrate` tries.
pub const TIER_RANKING_KEPT: usize = 16;

/// Articles of the routed ranking kept in the trace.
pub const RANKED_KEPT: usize = 100;

#[derive(Debug, Clone, Serialize)]
pub struct Answer {
    pub question: String,
    /// The chat model that wrote the answer; `None` for the offline, extractive answer.
    pub generated_by: Option<String>,
    pub tier: u8,
    pub kind: AnswerKind,
    pub answer: String,
    pub citations: Vec<Citation>,
    pub context: Vec<ContextArticle>,
    pub warnings: Vec<String>,
    pub trace: Trace,
}

impl Answer {
    /// An answer citing exactly its context.
    pub(crate) fn new(
        question: String,
        tier: u8,
        kind: AnswerKind,
        answer: String,
        context: Vec<ContextArticle>,
        warnings: Vec<String>,
        mut trace: Trace,
    ) -> Answer {
        if trace.ranked.is_empty() {
            // A lookup: the article looked up is the whole ranking.
            trace.ranked = context.iter().map(|c| c.iri.clone()).collect();
        }
        let citations = context
            .iter()
            .map(|c| Citation {
                law_title: c.law_title.clone(),
                version_date: c.version_date.clone(),
                label: c.label.clone(),
                iri: c.iri.clone(),
            })
            .collect();
        Answer {
            question,
            generated_by: None,
            tier,
            kind,
            answer,
            citations,
            context,
            warnings,
            trace,
        }
    }
}

/// 《law》（version）label — how every answer names an article.
fn cite_head(c: &ContextArticle) -> String {
    format!(
        "《{}》（{}）{}",
        c.law_title,
        if c.version_date.is_empty() {
            "未注明日期"
        } else {
            &c.version_date
        },
        c.label
    )
}

fn body(c: &ContextArticle) -> &str {
    c.text.strip_prefix(&c.label).unwrap_or(&c.text).trim()
}

/// An article named with its whole text (the numbered context of a prompt).
pub(crate) fn cite_line(c: &ContextArticle) -> String {
    format!("{}：{}", cite_head(c), body(c))
}

/// The offline answer: the applicable articles in order, each with its law, version and
/// the 款/项 that concern the question (`excerpt.rs`). Nothing is said that the context
/// does not hold.
pub(crate) fn structured_answer(question: &str, context: &[ContextArticle]) -> String {
    if context.is_empty() {
        return "没有找到可适用的条文。".into();
    }
    let mut out = String::from("可适用的条文（按相关性排序）：\n");
    for (i, c) in context.iter().enumerate() {
        let text = crate::excerpt::relevant_text(question, body(c));
        out.push_str(&format!("{}. {}：{}\n", i + 1, cite_head(c), text));
    }
    out
}

/// What the generation stage produced.
pub(crate) struct Written {
    pub answer: String,
    pub context: Vec<ContextArticle>,
    pub generated_by: Option<String>,
    pub removed: Vec<super::generate::RemovedCitation>,
}

/// The answer: the chat model's from the numbered context when there is one (its
/// citations checked, the context narrowed to what it cites), else extractive.
pub(crate) fn write(
    chat: Option<&dyn coal_models::ChatModel>,
    question: &str,
    context: Vec<ContextArticle>,
    exists: &dyn Fn(&str, &str) -> bool,
    warnings: &mut Vec<String>,
) -> Written {
    let extractive = structured_answer(question, &context);
    let Some(chat) = chat.filter(|_| !context.is_empty()) else {
        return Written {
            answer: extractive,
            context,
            generated_by: None,
            removed: Vec::new(),
        };
    };
    let user = super::generate::user_prompt(question, &context);
    match chat.complete(super::generate::system_prompt(), &user) {
        Ok(out) => {
            let g = super::generate::validate(&out, &context, exists);
            let context = if g.cited.is_empty() {
                warnings.push(
                    "the generated answer cites no article; the context articles are listed".into(),
                );
                context
            } else {
                g.cited.iter().map(|&i| context[i].clone()).collect()
            };
            Written {
                answer: g.text,
                context,
                generated_by: Some(chat.id().to_owned()),
                removed: g.removed,
            }
        }
        Err(e) => {
            warnings.push(format!("{e}; the answer is extractive"));
            Written {
                answer: extractive,
                context,
                generated_by: None,
                removed: Vec::new(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offline_answer_lists_each_article_once_with_its_law_and_version() {
        let c = |label: &str, text: &str| ContextArticle {
            iri: format!("x/{label}"),
            law_title: "中华人民共和国示范法".into(),
            version_date: "2020-01-01".into(),
            label: label.into(),
            text: text.into(),
            score: 1.0,
            via: "test".into(),
        };
        let a = structured_answer(
            "保护",
            &[
                c("第一条", "第一条 为了保护。"),
                c("第二条", "适用于境内。"),
            ],
        );
        assert_eq!(
            a,
            "可适用的条文（按相关性排序）：\n1. 《中华人民共和国示范法》（2020-01-01）第一条：为了保护。\n2. 《中华人民共和国示范法》（2020-01-01）第二条：适用于境内。\n"
        );
        assert_eq!(structured_answer("保护", &[]), "没有找到可适用的条文。");
        // A long article is cut to the 款 that concern the question.
        let long = c(
            "第三条",
            "第三条 国家实行劳动合同制度。\n用人单位应当建立职工名册备查。\n劳动者有权拒绝违章指挥。",
        );
        let a = structured_answer("职工名册要备查吗", &[long]);
        assert!(
            a.ends_with("第三条：……\n用人单位应当建立职工名册备查。\n……\n"),
            "{a}"
        );
    }
}
