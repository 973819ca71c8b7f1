//! The relevant 款/项 of an article for the offline answer (issue: "the applicable
//! articles … the relevant 款/项 text"): a long article is cut to the paragraphs and items
//! that share words with the question, with "……" where text was left out. The context
//! (and `ask --json`) keeps every article whole.

use coal_corpus::Bigrams;

/// Articles of at most this many lines are shown whole.
const SHORT_ARTICLE_LINES: usize = 2;
/// A line is relevant when it holds at least this many of the question's character
/// bigrams, and at least half as many as the line that holds the most.
const MIN_SHARED_BIGRAMS: usize = 2;

/// Where a line sits in an article: a 款 (paragraph), a 项 (`（一）`, `(1)`) or a 目
/// (`1.`, `1．`, `1、`), which belongs to the 项 before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Paragraph,
    Item,
    SubItem,
}

fn level(line: &str) -> Level {
    let t = line.trim_start();
    if t.starts_with('（') || t.starts_with('(') {
        let inner: String = t
            .trim_start_matches(['（', '('])
            .chars()
            .take_while(|c| !matches!(c, '）' | ')'))
            .collect();
        let chinese = !inner.is_empty()
            && inner.chars().count() <= 4
            && inner.chars().all(|c| "一二三四五六七八九十".contains(c));
        let arabic = (1..=2).contains(&inner.len()) && inner.chars().all(|c| c.is_ascii_digit());
        if chinese || arabic {
            return Level::Item;
        }
    }
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if (1..=2).contains(&digits) && matches!(t[digits..].chars().next(), Some('.' | '．' | '、'))
    {
        return Level::SubItem;
    }
    Level::Paragraph
}

/// One 项 and its 目, as line indexes.
struct Item {
    line: usize,
    sub_items: Vec<usize>,
}

/// One 款: its lead line and its 项.
struct Paragraph {
    lead: usize,
    items: Vec<Item>,
}

fn structure(lines: &[&str]) -> Vec<Paragraph> {
    let mut paragraphs: Vec<Paragraph> = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(p) = paragraphs.last_mut() else {
            paragraphs.push(Paragraph {
                lead: i,
                items: Vec::new(),
            });
            continue;
        };
        match level(l) {
            Level::Paragraph => paragraphs.push(Paragraph {
                lead: i,
                items: Vec::new(),
            }),
            Level::SubItem if !p.items.is_empty() => {
                p.items.last_mut().expect("checked").sub_items.push(i)
            }
            // A 项, or a 目 with no 项 before it (numbered items directly under a 款).
            _ => p.items.push(Item {
                line: i,
                sub_items: Vec::new(),
            }),
        }
    }
    paragraphs
}

/// The article body (label already stripped) cut to what concerns `question`: every
/// 款 with a relevant line — a relevant lead-in keeps all its 项 and 目 (the question is
/// about the rule they complete), a relevant 项 keeps its lead-in and its 目, a relevant
/// 目 keeps its 项 and the lead-in — in order, "……" marking each gap. Short articles, and
/// articles where nothing matches, are whole.
pub fn relevant_text(question: &str, body: &str) -> String {
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.len() <= SHORT_ARTICLE_LINES {
        return body.trim().to_owned();
    }
    let q = Bigrams::of(question);
    let shared: Vec<usize> = lines.iter().map(|l| Bigrams::of(l).shared(&q)).collect();
    let best = shared.iter().copied().max().unwrap_or(0);
    let bar = MIN_SHARED_BIGRAMS.max(best.div_ceil(2));
    let relevant: Vec<bool> = shared.iter().map(|&s| s >= bar).collect();
    let mut keep = vec![false; lines.len()];
    for p in structure(&lines) {
        let whole = relevant[p.lead];
        for item in &p.items {
            let item_hit = whole || relevant[item.line];
            let sub_hits: Vec<usize> = item
                .sub_items
                .iter()
                .copied()
                .filter(|&i| item_hit || relevant[i])
                .collect();
            if item_hit || !sub_hits.is_empty() {
                keep[p.lead] = true;
                keep[item.line] = true;
                sub_hits.iter().for_each(|&i| keep[i] = true);
            }
        }
        keep[p.lead] |= whole;
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

    /// 行政复议法 (2017) 第二十八条, shortened: 目 under the third 项.
    const REVIEW_DECISIONS: &str = "经审查，按照下列规定作出行政复议决定:\n\
        （一）具体行政行为认定事实清楚的，决定维持；\n\
        （二）被申请人不履行法定职责的，决定其在一定期限内履行；\n\
        （三）具体行政行为有下列情形之一的，决定撤销:\n\
        1.主要事实不清、证据不足的；\n\
        2.适用依据错误的；\n\
        （四）被申请人不提出书面答复、提交证据的，视为没有证据。\n\
        复议机关责令重新作出的，被申请人不得以同一事实作出相同的行为。";

    #[test]
    fn sub_items_belong_to_their_item_and_an_item_keeps_its_lead_in() {
        // The fourth 项 is filed under the lead-in, not under the 目 before it.
        let out = relevant_text("被申请人不提出书面答复怎么办", REVIEW_DECISIONS);
        assert_eq!(
            out,
            "经审查，按照下列规定作出行政复议决定:\n……\n（四）被申请人不提出书面答复、提交证据的，视为没有证据。\n……",
        );
        // A relevant 目 brings its 项 and the lead-in.
        let out = relevant_text("适用依据错误怎么处理", REVIEW_DECISIONS);
        assert_eq!(
            out,
            "经审查，按照下列规定作出行政复议决定:\n……\n（三）具体行政行为有下列情形之一的，决定撤销:\n……\n2.适用依据错误的；\n……",
        );
        // A relevant lead-in keeps every 项 and 目 under it, and only them.
        let out = relevant_text("怎样作出行政复议决定", REVIEW_DECISIONS);
        assert!(
            out.contains("1.主要事实不清") && out.contains("（四）"),
            "{out}"
        );
        assert!(out.ends_with("\n……"), "{out}");
    }

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
        assert_eq!(level("（十二）其他"), Level::Item);
        assert_eq!(level("(3) other"), Level::Item);
        assert_eq!(level("1.主要事实不清的；"), Level::SubItem);
        assert_eq!(level("12、其他"), Level::SubItem);
        assert_eq!(level("（注：本条已修改）"), Level::Paragraph);
        assert_eq!(level("（2020）年度"), Level::Paragraph);
        assert_eq!(level("2020.1起施行"), Level::Paragraph);
    }
}
