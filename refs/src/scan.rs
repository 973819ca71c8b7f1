//! Character-level helpers: statute text is scanned as a `[char]` so spans are character
//! offsets, the unit every consumer (SPARQL, the CLI, fixtures) counts in.

/// How a statute names itself (本法, 本条例, …), longer names first where one begins
/// another. The one list references, definitions and override clauses all read.
pub const SELF_NAMES: &[&str] = &[
    "本条例",
    "本规定",
    "本办法",
    "本细则",
    "本解释",
    "本决定",
    "本准则",
    "本规则",
    "本通则",
    "本章程",
    "本法",
];

/// Does `text[at..]` start with `pat`?
pub fn starts_with(text: &[char], at: usize, pat: &str) -> bool {
    pat.chars()
        .enumerate()
        .all(|(k, c)| text.get(at + k) == Some(&c))
}

/// The first of `pats` that `text[at..]` starts with (list longer patterns first), with
/// its length in characters.
pub fn starts_with_any<'p>(text: &[char], at: usize, pats: &[&'p str]) -> Option<(&'p str, usize)> {
    pats.iter()
        .find(|p| starts_with(text, at, p))
        .map(|p| (*p, p.chars().count()))
}

fn is_numeral(c: char) -> bool {
    matches!(
        c,
        '零' | '〇'
            | '一'
            | '二'
            | '三'
            | '四'
            | '五'
            | '六'
            | '七'
            | '八'
            | '九'
            | '十'
            | '百'
            | '千'
            | '两'
    ) || c.is_ascii_digit()
}

/// A Chinese or Arabic numeral at `text[at..]`: its value and length in characters.
pub fn numeral(text: &[char], at: usize) -> Option<(u32, usize)> {
    let mut end = at;
    while end < text.len() && is_numeral(text[end]) && end - at < 12 {
        end += 1;
    }
    if end == at {
        return None;
    }
    let s: String = text[at..end].iter().collect();
    let value = if s.chars().all(|c| c.is_ascii_digit()) {
        s.parse().ok()?
    } else {
        coal_corpus::parse_chinese_numeral(&s.replace('两', "二"))?
    };
    Some((value, end - at))
}

/// `第N<unit>` at `text[at..]`: the number and the length including 第 and the unit.
/// Items are also written with their label's brackets: 第（三）项.
pub fn numbered(text: &[char], at: usize, unit: char) -> Option<(u32, usize)> {
    if text.get(at) != Some(&'第') {
        return None;
    }
    let bracket = matches!(text.get(at + 1), Some('（' | '('));
    let start = at + 1 + usize::from(bracket);
    let (n, len) = numeral(text, start)?;
    let mut end = start + len;
    if bracket {
        if !matches!(text.get(end), Some('）' | ')')) {
            return None;
        }
        end += 1;
    }
    (text.get(end) == Some(&unit)).then_some((n, end + 1 - at))
}

pub fn collect(text: &[char], range: std::ops::Range<usize>) -> String {
    text[range].iter().collect()
}

/// Characters that end a clause: a term or subject never spans them.
pub fn is_clause_break(c: char) -> bool {
    matches!(
        c,
        '，' | '。' | '；' | '：' | ',' | ';' | ':' | '\n' | '！' | '？'
    )
}
