//! Answers written by a chat model from the numbered context (METHOD.md §6), and the check
//! that keeps them honest: every citation in the output — a `[n]` marker or a
//! `《法》第N条` — must name an article of the context; any other is cut from the answer
//! and reported. Nothing outside the context can be cited.

use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

use super::answer::ContextArticle;

#[derive(Debug, Clone, Serialize)]
pub struct RemovedCitation {
    /// The words cut from the answer.
    pub text: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Generated {
    pub text: String,
    /// Indexes into the context of the articles the answer cites, in order of first use.
    pub cited: Vec<usize>,
    pub removed: Vec<RemovedCitation>,
}

/// Said in place of a citation that was cut.
pub const CUT: &str = "〔无效引用已删除〕";

pub fn system_prompt() -> &'static str {
    // A bare 可以。 answers nobody: the consultation answers the sets hold (and users
    // want) give the conclusion, then what the provision says and why it applies.
    "你是严谨的中国法律助手。只依据用户给出的编号条文回答，不得引用未给出的条文。\
     先用一句话直接回答问题，再用两到四句说明适用的条文规定了什么、为什么适用于这个问题。\
     引用时在句末标注条文编号，如[1]，也可写出《法律名称》第N条（必须是给出的条文）。\
     条文不足以回答时，直说不足。用中文作答。"
}

/// The user message: the numbered context, then the question.
pub fn user_prompt(question: &str, context: &[ContextArticle]) -> String {
    let mut out = String::from("条文：\n");
    for (i, c) in context.iter().enumerate() {
        out.push_str(&format!("[{}] {}\n", i + 1, super::answer::cite_line(c)));
    }
    out.push_str(&format!("\n问题：{question}\n"));
    out
}

fn citation_re() -> &'static Regex {
    static R: OnceLock<Regex> = OnceLock::new();
    R.get_or_init(|| {
        Regex::new(r"\[(\d+)\]|《([^》]{1,60})》(第[零〇一二三四五六七八九十百千两]+条(?:之[一二三四五六七八九十]+)?)").unwrap()
    })
}

fn short(title: &str) -> String {
    coal_corpus::short_name(title)
}

/// Checks the model's output against the context. `exists(law, label)` tells whether an
/// article exists in the store at all (for the reason given when it is cut).
pub fn validate(
    output: &str,
    context: &[ContextArticle],
    exists: &dyn Fn(&str, &str) -> bool,
) -> Generated {
    let mut text = String::with_capacity(output.len());
    let mut cited = Vec::new();
    let mut removed = Vec::new();
    let mut last = 0;
    for m in citation_re().captures_iter(output) {
        let whole = m.get(0).unwrap();
        let hit = if let Some(n) = m.get(1) {
            let n: usize = n.as_str().parse().unwrap_or(0);
            (1..=context.len())
                .contains(&n)
                .then_some(n - 1)
                .ok_or_else(|| {
                    format!("[{n}] is not one of the {} context articles", context.len())
                })
        } else {
            let (law, label) = (&m[2], &m[3]);
            context
                .iter()
                .position(|c| short(&c.law_title) == short(law) && c.label == label)
                .ok_or_else(|| {
                    if exists(law, label) {
                        format!("《{law}》{label} exists but is not in the context")
                    } else {
                        format!("《{law}》{label} does not exist")
                    }
                })
        };
        text.push_str(&output[last..whole.start()]);
        match hit {
            Ok(i) => {
                if !cited.contains(&i) {
                    cited.push(i);
                }
                text.push_str(whole.as_str());
            }
            Err(reason) => {
                removed.push(RemovedCitation {
                    text: whole.as_str().to_owned(),
                    reason,
                });
                text.push_str(CUT);
            }
        }
        last = whole.end();
    }
    text.push_str(&output[last..]);
    Generated {
        text,
        cited,
        removed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(law: &str, label: &str) -> ContextArticle {
        ContextArticle {
            iri: format!("x/{label}"),
            law_title: law.into(),
            version_date: "2012-12-28".into(),
            label: label.into(),
            text: format!("{label} 用人单位应当支付经济补偿。"),
            score: 1.0,
            via: "test".into(),
        }
    }

    #[test]
    fn invented_citations_are_cut_and_reported() {
        let c = vec![
            ctx("中华人民共和国劳动合同法", "第四十六条"),
            ctx("中华人民共和国劳动合同法", "第四十七条"),
        ];
        let exists = |_: &str, label: &str| label == "第三十九条";
        let g = validate(
            "应当支付经济补偿[1]，标准见《劳动合同法》第四十七条。另见《劳动合同法》第九百条[7]，以及《劳动合同法》第三十九条。",
            &c,
            &exists,
        );
        assert_eq!(g.cited, vec![0, 1]);
        assert_eq!(g.removed.len(), 3);
        assert!(
            g.removed[0].reason.contains("does not exist"),
            "{:?}",
            g.removed
        );
        assert!(g.removed[1].reason.contains("[7] is not one of the 2"));
        assert!(
            g.removed[2]
                .reason
                .contains("exists but is not in the context")
        );
        assert!(
            !g.text.contains("第九百条")
                && !g.text.contains("[7]")
                && !g.text.contains("第三十九条")
        );
        assert!(g.text.contains("[1]") && g.text.contains("《劳动合同法》第四十七条"));
        assert_eq!(g.text.matches(CUT).count(), 3);
    }

    #[test]
    fn the_prompt_numbers_the_context() {
        let c = vec![ctx("中华人民共和国劳动合同法", "第四十六条")];
        let p = user_prompt("要补偿吗？", &c);
        assert!(p.starts_with(
            "条文：\n[1] 《中华人民共和国劳动合同法》（2012-12-28）第四十六条：用人单位"
        ));
        assert!(p.ends_with("问题：要补偿吗？\n"));
    }
}
