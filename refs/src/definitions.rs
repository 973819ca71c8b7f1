//! Definitions: 本法所称X，是指…; X，是指… (at the start of a paragraph or item);
//! （以下简称X）; 下列…属于X：.

use std::ops::Range;

use crate::scan::{collect, is_clause_break, starts_with, starts_with_any};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefinitionKind {
    /// 本法所称X，是指… / X，是指…: the meaning of a term.
    Meaning,
    /// （以下简称X）: a short name for the phrase before it (kept as `long_form`).
    Abbreviation { long_form: String },
    /// 下列…属于X：: the items that follow fall under X.
    Enumeration,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Definition {
    pub term: String,
    /// Where the term is written.
    pub span: Range<usize>,
    pub kind: DefinitionKind,
    /// The defining sentence (up to its end), for display.
    pub sentence: String,
}

/// Scopes narrower than the statute (本法所称 … is read with [`crate::scan::SELF_NAMES`]).
const DIVISION_SCOPES: &[&str] = &["本章", "本节", "本条", "本款"];
const MEANS: &[&str] = &["，是指", "是指", "，指", "，包括", "包括", "，是", "指"];
const MAX_TERM: usize = 20;

fn sentence_from(text: &[char], start: usize) -> String {
    let end = (start..text.len())
        .find(|&j| matches!(text[j], '。' | '\n'))
        .map(|j| j + 1)
        .unwrap_or(text.len());
    collect(text, start..end)
}

fn plausible_term(t: &str) -> bool {
    let n = t.chars().count();
    (2..=MAX_TERM).contains(&n)
        && !t
            .chars()
            .any(|c| is_clause_break(c) || matches!(c, '（' | '）' | '(' | ')' | '“' | '”'))
}

fn strip_quotes(text: &[char], mut r: Range<usize>) -> Range<usize> {
    while r.start < r.end && matches!(text[r.start], '“' | '"' | '「') {
        r.start += 1;
    }
    while r.end > r.start && matches!(text[r.end - 1], '”' | '"' | '」') {
        r.end -= 1;
    }
    r
}

/// Every definition in `text` (one paragraph or item), in order.
pub fn definitions(text: &str) -> Vec<Definition> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    scoped_meanings(&chars, &mut out);
    // Each line: an item's text holds its 目 (1. 2. …) one per line.
    let mut line_start = 0;
    for (i, &c) in chars.iter().enumerate() {
        if i == line_start {
            leading_meaning(&chars, i, &mut out);
        }
        if c == '\n' {
            line_start = i + 1;
        }
    }
    abbreviations(&chars, &mut out);
    enumerations(&chars, &mut out);
    out.sort_by_key(|d| d.span.start);
    out.dedup_by(|a, b| a.span == b.span);
    out
}

/// 本法所称X，是指… (several terms joined by 、 each become a definition).
fn scoped_meanings(text: &[char], out: &mut Vec<Definition>) {
    for i in 0..text.len() {
        // The statute's own names first: 本条例 before 本条.
        let Some((_, slen)) = starts_with_any(text, i, crate::scan::SELF_NAMES)
            .or_else(|| starts_with_any(text, i, DIVISION_SCOPES))
        else {
            continue;
        };
        let mut at = i + slen;
        if !starts_with(text, at, "所称") {
            continue;
        }
        at += 2;
        if text.get(at) == Some(&'的') {
            at += 1;
        }
        let Some(end) = (at..text.len().min(at + 3 * MAX_TERM))
            .find(|&j| starts_with_any(text, j, MEANS).is_some() || is_clause_break(text[j]))
        else {
            continue;
        };
        let sentence = sentence_from(text, i);
        // 用人单位、劳动者 → two terms.
        let mut s = at;
        for j in at..=end {
            if j == end || text[j] == '、' || starts_with(text, j, "和") {
                let r = strip_quotes(text, s..j);
                let term = collect(text, r.clone());
                if plausible_term(&term) {
                    out.push(Definition {
                        term,
                        span: r,
                        kind: DefinitionKind::Meaning,
                        sentence: sentence.clone(),
                    });
                }
                s = j + 1;
            }
        }
    }
}

/// X，是指… at the start of a line (from `at`), after an item label such as （一） or a
/// sub-item label such as 1.
fn leading_meaning(text: &[char], at: usize, out: &mut Vec<Definition>) {
    let mut start = at;
    if matches!(text.get(at), Some('（' | '(')) {
        if let Some(close) = text[at..]
            .iter()
            .take(8)
            .position(|&c| c == '）' || c == ')')
        {
            start = at + close + 1;
        }
    } else {
        let digits = text[at..].iter().take_while(|c| c.is_ascii_digit()).count();
        if (1..=2).contains(&digits) && matches!(text.get(at + digits), Some('.' | '．' | '、')) {
            start = at + digits + 1;
        }
    }
    for j in start..text.len().min(start + MAX_TERM + 2) {
        if starts_with(text, j, "，是指") || starts_with(text, j, "是指") {
            let r = strip_quotes(text, start..j);
            let term = collect(text, r.clone());
            if plausible_term(&term) && !term.starts_with('本') {
                out.push(Definition {
                    term,
                    span: r,
                    kind: DefinitionKind::Meaning,
                    sentence: sentence_from(text, start),
                });
            }
            return;
        }
        if is_clause_break(text[j]) {
            return;
        }
    }
}

/// （以下简称X） / （以下称X）: X abbreviates the phrase just before the bracket.
fn abbreviations(text: &[char], out: &mut Vec<Definition>) {
    for i in 0..text.len() {
        if !matches!(text[i], '（' | '(') {
            continue;
        }
        let Some((_, plen)) = starts_with_any(text, i + 1, &["以下简称", "以下称", "下称", "简称"])
        else {
            continue;
        };
        let at = i + 1 + plen;
        let Some(close) =
            (at..text.len().min(at + MAX_TERM + 4)).find(|&j| matches!(text[j], '）' | ')'))
        else {
            continue;
        };
        let r = strip_quotes(text, at..close);
        let term = collect(text, r.clone());
        if !plausible_term(&term) {
            continue;
        }
        // The long form: back to the last clause break or verb-like boundary.
        let mut s = i;
        while s > 0
            && !is_clause_break(text[s - 1])
            && !matches!(text[s - 1], '、' | '“' | '”')
            && i - s < 40
        {
            s -= 1;
        }
        let long_form = collect(text, s..i);
        out.push(Definition {
            term,
            span: r,
            kind: DefinitionKind::Abbreviation { long_form },
            sentence: sentence_from(text, s),
        });
    }
}

/// 下列…属于X： / 下列…为X：.
fn enumerations(text: &[char], out: &mut Vec<Definition>) {
    for i in 0..text.len() {
        if !starts_with(text, i, "下列") {
            continue;
        }
        let Some(colon) =
            (i + 2..text.len().min(i + 2 + 3 * MAX_TERM)).find(|&j| matches!(text[j], '：' | ':'))
        else {
            continue;
        };
        // 属于 anywhere, else the last 为 (行为 contains one too).
        let (verb, vlen) = match (i + 2..colon).find(|&j| starts_with(text, j, "属于")) {
            Some(j) => (j, 2),
            None => match (i + 2..colon).rev().find(|&j| text[j] == '为') {
                Some(j) => (j, 1),
                None => continue,
            },
        };
        if (i..colon).any(|j| is_clause_break(text[j])) {
            continue;
        }
        let r = strip_quotes(text, verb + vlen..colon);
        let term = collect(text, r.clone());
        if plausible_term(&term) {
            out.push(Definition {
                term,
                span: r,
                kind: DefinitionKind::Enumeration,
                sentence: sentence_from(text, i),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        definitions(text).into_iter().map(|d| d.term).collect()
    }

    #[test]
    fn scoped_and_leading_meanings() {
        // The statute's names come from the one table (本通则 was missing here).
        assert_eq!(
            terms("本通则所称民事主体，是指自然人和法人。"),
            ["民事主体"]
        );
        assert_eq!(
            terms("本法所称未成年人是指未满十八周岁的公民。"),
            ["未成年人"]
        );
        assert_eq!(
            terms("本条例所称的“社会保险费”，是指基本养老保险费。"),
            ["社会保险费"]
        );
        assert_eq!(
            terms("本法所称用人单位、劳动者，包括…"),
            ["用人单位", "劳动者"]
        );
        assert_eq!(
            terms("（一）家庭暴力，是指家庭成员之间以殴打实施的侵害行为；"),
            ["家庭暴力"]
        );
        // 目 inside an item's text, one per line (机动车登记规定 第八十二条).
        let item = "（一）机动车所有人，包括：\n1.个人是指我国内地的居民；\n2.单位是指机关、企业。";
        assert_eq!(terms(item), ["个人", "单位"]);
        let d = &definitions(item)[0];
        assert_eq!(
            collect(&item.chars().collect::<Vec<_>>(), d.span.clone()),
            "个人"
        );
        assert_eq!(d.sentence, "个人是指我国内地的居民；\n");
        let d = &definitions("本法所称未成年人是指未满十八周岁的公民。")[0];
        assert_eq!(d.span, 4..8);
        assert_eq!(d.kind, DefinitionKind::Meaning);
    }

    #[test]
    fn abbreviations_keep_the_long_form() {
        let d = definitions("国务院劳动行政部门（以下简称劳动行政部门）负责全国工作。");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].term, "劳动行政部门");
        assert_eq!(
            d[0].kind,
            DefinitionKind::Abbreviation {
                long_form: "国务院劳动行政部门".into()
            }
        );
    }

    #[test]
    fn enumerations_and_non_definitions() {
        assert_eq!(
            terms("夫妻在婚姻关系存续期间所得的下列财产，为夫妻的共同财产："),
            Vec::<String>::new()
        );
        assert_eq!(
            terms("下列财产为夫妻一方的个人财产："),
            ["夫妻一方的个人财产"]
        );
        assert_eq!(terms("下列行为属于不正当竞争："), ["不正当竞争"]);
        assert!(terms("用人单位应当依法建立和完善劳动规章制度。").is_empty());
    }
}
