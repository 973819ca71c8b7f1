//! The relevant 款/项 of an article for the offline answer (issue: "the applicable
//! articles … the relevant 款/项 text"): a long article is cut to the paragraphs and items
//! that share words with the question, with "……" where text was left out. The context
//! (and `ask --json`) keeps every article whole.

use std::collections::HashSet;

/// Articles of at most this many lines are shown whole.
const SHORT_ARTICLE_LINES: usize = 2;
/// A line is relevant when it holds at least this many of the question's character
/// bigrams, and at least half as many as the line that holds the most.
const MIN_SHARED_BIGRAMS: usize = 2;

/// Character bigrams of the runs of letters and digits (as the bigram BM25 field has them).
fn bigrams(s: &str) -> HashSet<(char, char)> {
    let chars: Vec<char> = s.chars().collect();
    chars
        .windows(2)
        .filter(|w| w[0].is_alphanumeric() && w[1].is_alphanumeric())
        .map(|w| (w[0], w[1]))
        .collect()
}

/// `（一）`, `(1)`, `1.` …: the line is an item of the paragraph before it.
fn is_item(line: &str) -> bool {
    let t = line.trim_start();
    let opens = t.starts_with('（') || t.starts_with('(');
    let inner: String = t
        .trim_start_matches(['（', '('])
        .chars()
        .take_while(|c| !matches!(c, '）' | ')'))
        .collect();
    opens
        && !inner.is_empty()
        && inner.chars().count() <= 4
        && inner
            .chars()
            .all(|c| c.is_ascii_digit() || "一二三四五六七八九十".contains(c))
}

/// The article body (label already stripped) cut to what concerns `question`: every
/// paragraph with a relevant line — a relevant lead-in keeps all its items (the question
/// is about the rule they complete), a relevant item keeps its lead-in — in order, "……"
/// marking each gap. Short articles, and articles where nothing matches, are whole.
pub fn relevant_text(question: &str, body: &str) -> String {
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() <= SHORT_ARTICLE_LINES {
        return body.trim().to_owned();
    }
    let q = bigrams(question);
    let shared: Vec<usize> = lines
        .iter()
        .map(|l| bigrams(l).intersection(&q).count())
        .collect();
    let best = shared.iter().copied().max().unwrap_or(0);
    let bar = MIN_SHARED_BIGRAMS.max(best.div_ceil(2));
    let relevant: Vec<bool> = shared.iter().map(|&s| s >= bar).collect();
    // Paragraphs: a lead line and the items under it.
    let mut paragraphs: Vec<(usize, Vec<usize>)> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        match paragraphs.last_mut() {
            Some((_, items)) if is_item(l) => items.push(i),
            _ => paragraphs.push((i, Vec::new())),
        }
    }
    let mut keep = vec![false; lines.len()];
    for (lead, items) in &paragraphs {
        if relevant[*lead] {
            keep[*lead] = true;
            items.iter().for_each(|&i| keep[i] = true);
        } else if items.iter().any(|&i| relevant[i]) {
            keep[*lead] = true;
            items
                .iter()
                .filter(|&&i| relevant[i])
                .for_each(|&i| keep[i] = true);
        }
    }
    if !keep.iter().any(|&k| k) {
        return body.trim().to_owned();
    }
    let mut out: Vec<&str> = Vec::new();
    let mut gap = false;
    for (i, l) in lines.iter().enumerate() {
        if keep[i] {
            if gap {
                out.push("……");
            }
            out.push(l.trim());
            gap = false;
        } else {
            gap = true;
        }
    }
    if gap {
        out.push("……");
    }
    out.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const ARTICLE_46: &str = "有下列情形之一的，用人单位应当向劳动者支付经济补偿：\n\
        （一）劳动者依照本法第三十八条规定解除劳动合同的；\n\
        （二）用人单位依照本法第四十条规定解除劳动合同的；\n\
        （三）依照本法第四十四条第一项规定终止固定期限劳动合同的；\n\
        （四）法律、行政法规规定的其他情形。";

    #[test]
    fn a_relevant_item_comes_with_its_lead_in_and_gaps_are_marked() {
        let out = relevant_text("固定期限劳动合同终止了有补偿吗", ARTICLE_46);
        assert!(out.starts_with("有下列情形之一的"), "{out}");
        assert!(out.contains("（三）依照本法第四十四条"), "{out}");
        assert!(!out.contains("（四）"), "{out}");
        assert!(out.contains("……"), "{out}");
    }

    #[test]
    fn a_matching_lead_in_keeps_all_its_items() {
        let out = relevant_text("用人单位什么时候应当支付经济补偿", ARTICLE_46);
        assert_eq!(out, ARTICLE_46);
    }

    #[test]
    fn short_articles_and_articles_without_a_match_are_whole() {
        let short = "用人单位与劳动者协商一致，可以解除劳动合同。";
        assert_eq!(relevant_text("交通事故", short), short);
        assert_eq!(relevant_text("交通事故怎么赔", ARTICLE_46), ARTICLE_46);
    }

    #[test]
    fn only_the_matching_paragraphs_of_a_long_article_stay() {
        let body =
            "国家实行劳动合同制度。\n用人单位应当建立职工名册备查。\n劳动者有权拒绝违章指挥。";
        let out = relevant_text("职工名册要备查吗", body);
        assert_eq!(out, "……\n用人单位应当建立职工名册备查。\n……");
        assert!(is_item("（十二）其他"));
        assert!(is_item("(3) other"));
        assert!(!is_item("（注：本条已修改）"));
    }
}
