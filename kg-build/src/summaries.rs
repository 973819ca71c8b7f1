//! One-line LLM summaries of topic clusters and domains (when a chat endpoint is
//! configured), asked through the build's reply cache like every other LLM request.

use coal_models::ChatModel;

use crate::extract::{ReplyCache, ask_cached, reply_json};

pub const SYSTEM: &str = "你为一组中国法律条文写一个简短的主题概括。只输出 JSON，不要任何其他文字。\
     格式：{\"summary\": \"不超过二十个字的概括\"}。";

/// Longest summary kept (characters); a longer reply is refused as not a summary.
const MAX_CHARS: usize = 40;
/// Characters of each sample article shown to the model.
const SAMPLE_CHARS: usize = 120;

/// The question about a topic: its distinctive terms and the articles nearest its centre.
pub fn topic_prompt(label: &str, samples: &[&str]) -> String {
    let mut p = format!("关键词：{label}\n代表条文：");
    for s in samples {
        p.push('\n');
        p.extend(s.chars().take(SAMPLE_CHARS));
    }
    p
}

/// The question about a domain: its distinctive terms and its topics' summaries.
pub fn domain_prompt(label: &str, topics: &[&str]) -> String {
    format!("关键词：{label}\n下属主题：{}", topics.join("；"))
}

/// `{"summary": "…"}` with a non-empty summary of at most [`MAX_CHARS`] characters.
pub fn parse_summary(reply: &str) -> Result<String, String> {
    let v = reply_json(reply)?;
    let s = v
        .get("summary")
        .and_then(|s| s.as_str())
        .map(str::trim)
        .ok_or_else(|| "no string \"summary\" in the reply".to_owned())?;
    match s.chars().count() {
        0 => Err("an empty summary".to_owned()),
        n if n > MAX_CHARS => Err(format!("a summary of {n} characters")),
        _ => Ok(s.to_owned()),
    }
}

/// Asks every prompt in order; returns each summary (`None` when every attempt failed)
/// and how many failed. Never fails on model output.
pub fn ask_all(
    chat: &dyn ChatModel,
    cache: &ReplyCache,
    prompts: &[String],
    progress: &dyn Fn(usize),
) -> (Vec<Option<String>>, usize) {
    let mut failed = 0;
    let out = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let asked = ask_cached(chat, cache, SYSTEM, p, parse_summary);
            progress(i + 1);
            asked.outcome.map_err(|_| failed += 1).ok()
        })
        .collect();
    (out, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summaries_are_short_json_strings() {
        assert_eq!(
            parse_summary("{\"summary\": \" 劳动合同 \"}").unwrap(),
            "劳动合同"
        );
        assert_eq!(
            parse_summary("```json\n{\"summary\":\"婚姻家庭\"}\n```").unwrap(),
            "婚姻家庭"
        );
        assert!(parse_summary("{\"summary\": \"\"}").is_err());
        assert!(parse_summary(&format!("{{\"summary\": \"{}\"}}", "长".repeat(41))).is_err());
        assert!(parse_summary("这是劳动合同").is_err());
        let p = topic_prompt("劳动 合同", &["第一条 为了完善劳动合同制度", "第二条"]);
        assert!(p.contains("劳动 合同") && p.contains("第二条"));
    }
}
