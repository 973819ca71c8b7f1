//! Candidate judging: a chat model reads the question beside each of the ranking's first
//! few articles and says whether the article is one the answer rests on. The answer is
//! read from the model's logits (the probability of 是 against 否), not sampled, so the
//! threshold that decides the context is a number (`[method] judge_keep`).
//!
//! Why: the score cliff decides how many articles the context keeps from the retrieval
//! scores alone, and those scores say little about how many articles a question needs
//! (README: a per-question oracle cut would lift tier 2's article F1 from .38 to .50 on
//! lecoqa.dev). Reading the article against the question is the text half of METHOD.md
//! §5's graph-text verification.

use coal_models::ChatModel;
use serde::Serialize;

use crate::QueryError;

/// The answers the model chooses between, each one token.
pub use coal_models::YES_NO as OPTIONS;

/// The article is shown up to this many characters (its opening states the rule; a long
/// article's tail costs prefill time, seconds on a CPU).
pub const ARTICLE_CHARS: usize = 360;

pub const JUDGE_SYSTEM: &str = "你是中国律师。给你一个法律问题和一条法律条文，判断回答这个问题是否需要引用这条条文。\
     条文直接规定了问题所问的权利、义务、责任、条件或程序时回答“是”；\
     只是同一部法律中话题相近、但不能回答问题的条文回答“否”。只回答“是”或“否”。";

/// The question and the article as the model reads them.
pub fn user_prompt(question: &str, law_title: &str, label: &str, text: &str) -> String {
    let text: String = text.chars().take(ARTICLE_CHARS).collect();
    format!(
        "问题：{question}\n条文：《{law_title}》{label}：{text}\n回答这个问题需要引用这条条文吗？"
    )
}

/// An article as the judge shows it.
pub struct Shown<'a> {
    pub law_title: &'a str,
    pub label: &'a str,
    pub text: &'a str,
}

/// The model's probability, for each article, that the answer to `question` needs it
/// (one call: a local model reads the question's tokens once).
pub fn judge(
    chat: &dyn ChatModel,
    question: &str,
    articles: &[Shown<'_>],
) -> Result<Vec<f64>, QueryError> {
    let users: Vec<String> = articles
        .iter()
        .map(|a| user_prompt(question, a.law_title, a.label, a.text))
        .collect();
    let users: Vec<&str> = users.iter().map(String::as_str).collect();
    let p = chat.option_probabilities_many(JUDGE_SYSTEM, &users, &OPTIONS)?;
    Ok(p.iter()
        .map(|o| o.first().copied().unwrap_or(0.0))
        .collect())
}

/// One judged candidate, in the trace.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Judged {
    pub iri: String,
    /// Its place in the tier's ranking before the judgement (0 first).
    pub rank: usize,
    /// The model's probability of 是.
    pub p: f64,
}

/// The order the judged head takes and how many of it the context keeps: the judged
/// articles by probability, highest first (ties keep the ranking's order), and as many as
/// reach `keep` (at least one: the model doubting every candidate says less about the
/// question than about the model). Indices into the judged head.
pub fn judged_order(probabilities: &[f64], keep: f64) -> (Vec<usize>, usize) {
    let mut order: Vec<usize> = (0..probabilities.len()).collect();
    order.sort_by(|&a, &b| probabilities[b].total_cmp(&probabilities[a]));
    let kept = probabilities.iter().filter(|&&p| p >= keep).count().max(1);
    (order, kept.min(probabilities.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_judged_head_is_ordered_by_probability_and_cut_at_the_threshold() {
        let (order, kept) = judged_order(&[0.2, 0.9, 0.6, 0.9], 0.5);
        assert_eq!(order, vec![1, 3, 2, 0], "ties keep the ranking's order");
        assert_eq!(kept, 3);
    }

    #[test]
    fn a_head_the_model_doubts_throughout_keeps_its_most_likely_article() {
        let (order, kept) = judged_order(&[0.1, 0.3, 0.2], 0.5);
        assert_eq!(order, vec![1, 2, 0]);
        assert_eq!(kept, 1);
        assert_eq!(judged_order(&[], 0.5), (vec![], 0));
    }

    #[test]
    fn the_prompt_cuts_a_long_article() {
        let long = "甲".repeat(ARTICLE_CHARS + 50);
        let p = user_prompt("问题？", "劳动合同法", "第四十六条", &long);
        assert!(p.contains("《劳动合同法》第四十六条"));
        assert_eq!(p.matches('甲').count(), ARTICLE_CHARS);
    }
}
