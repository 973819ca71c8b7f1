//! Stage 1, analyse: the question cleaned and checked, its date checked, its articles
//! and laws found by name, and its decomposition (rules, or the chat model).

use crate::QueryError;
use crate::complexity::{self, Decomposition};
use crate::graph::NodeId;

use super::Engine;

/// Characters of a question the engine reads (the rest is dropped with a warning).
pub const MAX_QUESTION_CHARS: usize = 2_000;

/// `第N条` with the law named right before it, in a question.
#[derive(Debug, Clone)]
pub(crate) struct ArticleMention {
    /// Index of the law in the graph's laws.
    pub law: usize,
    /// 第四十七条 (or 第一百三十三条之一)
    pub label: String,
    pub main: u32,
    pub suffix: u32,
}

/// What the later stages know of the question.
pub(crate) struct Analysis {
    pub question: String,
    pub warnings: Vec<String>,
    pub as_of: Option<String>,
    pub decomposition: Decomposition,
    pub decomposed_by: String,
    pub mentions: Vec<ArticleMention>,
    /// Law names the question cites (X法第N条, 《X》) that the store does not hold.
    pub unknown_laws: Vec<String>,
    /// Those of them whose articles it cites (X法第N条): what it asks is not in the store.
    pub unknown_cited: Vec<String>,
    /// The question asks for an article's text ("X法第N条的内容是什么").
    pub is_lookup: bool,
}

/// Words joining two citations (…第三条和火星殖民法第三条), trimmed after a citation only.
const CONNECTIVES: &[char] = &['和', '与', '及', '或', '跟', '同', '以', '者'];
/// How a question points back at a law it has named (本法第三条, 该条例第五条): not a name.
const ANAPHORA: &[&str] = &["本", "该", "此", "这", "上述", "前述", "上面", "前面"];
/// Suffixes that make a name a law's (火星殖民法, 某某条例, …).
const LAW_SUFFIXES: &[&str] = &[
    "法", "法典", "条例", "规定", "办法", "细则", "解释", "决定", "规则", "章程",
];
/// Words a question puts before a law's name (请问刑法第三条…).
const LEAD_INS: &[&str] = &[
    "请问",
    "我想问",
    "想问",
    "问一下",
    "根据",
    "依据",
    "依照",
    "按照",
    "关于",
    "对于",
    "依",
    "按",
];

/// Checks a `YYYY-MM-DD` date: the form and the calendar (no 2020-13-45, no 2023-02-29).
pub fn check_date(d: &str) -> Result<(), QueryError> {
    let bad = |why: &str| QueryError::BadDate {
        date: d.to_owned(),
        reason: why.to_owned(),
    };
    let b = d.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if !(b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && digits(0..4)
        && digits(5..7)
        && digits(8..10))
    {
        return Err(bad("expected YYYY-MM-DD"));
    }
    let (y, m, day): (u32, u32, u32) = (
        d[0..4].parse().unwrap(),
        d[5..7].parse().unwrap(),
        d[8..10].parse().unwrap(),
    );
    if !(1..=12).contains(&m) {
        return Err(bad(&format!("there is no month {m}")));
    }
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = match m {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    if day == 0 || day > days {
        return Err(bad(&format!("month {m} of {y} has {days} days")));
    }
    Ok(())
}

/// The question with control characters read as spaces, bounded, with warnings.
pub(crate) fn clean(question: &str, warnings: &mut Vec<String>) -> Result<String, QueryError> {
    let q: String = question
        .trim()
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let q = q.trim().to_owned();
    if q.is_empty() {
        return Err(QueryError::EmptyQuestion);
    }
    // ？？？ would be answered with whatever ranks first for nothing.
    if !q.chars().any(char::is_alphanumeric) {
        return Err(QueryError::NoWords);
    }
    // The statutes are Chinese: a question without a Chinese character matches them
    // only by accident (numbers, the multilingual embedding's rough alignment).
    if !q.chars().any(han) {
        warnings.push(
            "the question has no Chinese characters; the statutes are Chinese, so the articles found may not concern it (ask in Chinese)".into(),
        );
    }
    let n = q.chars().count();
    if n > MAX_QUESTION_CHARS {
        warnings.push(format!(
            "the question has {n} characters; only the first {MAX_QUESTION_CHARS} were read"
        ));
        return Ok(q.chars().take(MAX_QUESTION_CHARS).collect());
    }
    Ok(q)
}

fn han(c: char) -> bool {
    ('\u{4e00}'..='\u{9fff}').contains(&c)
}

/// `第N条` anywhere in a question (compiled once: `ask` is on the hot path).
fn article_mention_re() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            "第([零〇一二三四五六七八九十百千两0-9]+)条(?:之([一二三四五六七八九十]+))?",
        )
        .unwrap()
    })
}

/// `《…》` in a question.
fn quoted_re() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| regex::Regex::new("《([^《》]{2,60})》").unwrap())
}

pub(crate) fn numeral(s: &str) -> Option<u32> {
    if s.chars().all(|c| c.is_ascii_digit()) {
        return s.parse().ok();
    }
    coal_corpus::parse_chinese_numeral(&s.replace('两', "二"))
}

/// `第N条`, `第N款`, `第N项`: where a citation before a name ends.
fn provision_re() -> &'static regex::Regex {
    static R: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    R.get_or_init(|| {
        regex::Regex::new(
            "第[零〇一二三四五六七八九十百千两0-9]+[条款项](?:之[一二三四五六七八九十]+)?",
        )
        .unwrap()
    })
}

/// The name a question gives a law it cites but the store lacks: the run of Chinese
/// characters (and digits) before `第`, without lead-ins, when it ends like a law's name
/// and is not a pointer back (本法, 该条例) or a bare kind of rules (司法解释).
fn unknown_law_name(before: &str) -> Option<String> {
    let run: String = before
        .chars()
        .rev()
        .take_while(|&c| han(c) || c.is_ascii_digit() || matches!(c, '《' | '》'))
        .collect::<Vec<char>>()
        .into_iter()
        .rev()
        .filter(|c| !matches!(c, '《' | '》'))
        .collect();
    // Not past a provision cited before it (X法第三条第二款和火星殖民法第三条), nor the word
    // joining them.
    let after_provision = provision_re().find_iter(&run).last().map(|m| m.end());
    let mut name = match after_provision {
        Some(end) => run[end..].trim_start_matches(CONNECTIVES),
        None => run.as_str(),
    };
    if let Some(i) = name.rfind("中华人民共和国") {
        name = &name[i..];
    } else if let Some((i, w)) = LEAD_INS
        .iter()
        .filter_map(|w| name.rfind(w).map(|i| (i, *w)))
        .max_by_key(|x| x.0)
    {
        name = &name[i + w.len()..];
    }
    let pointer = ANAPHORA.iter().any(|a| name.starts_with(a));
    let bare_kind = LAW_SUFFIXES.iter().any(|s| {
        name.strip_suffix(s)
            .is_some_and(|rest| rest.is_empty() || rest == "司法" || rest == "有关")
    });
    (name.chars().count() >= 2
        && !pointer
        && !bare_kind
        && LAW_SUFFIXES.iter().any(|s| name.ends_with(s)))
    .then(|| name.to_owned())
}

/// The name in the 《…》 that `before` ends with, if it does.
fn last_quoted(before: &str) -> Option<&str> {
    let inner = before.trim_end().strip_suffix('》')?;
    let start = inner.rfind('《')?;
    Some(inner[start + '《'.len_utf8()..].trim())
}

/// Whether `name` could be an abbreviation of one of `laws` (民诉法 of 民事诉讼法): its
/// characters in order within a law's name, first and last included.
fn abbreviates_any<'a>(name: &str, mut laws: impl Iterator<Item = &'a String>) -> bool {
    let short: Vec<char> = name.chars().collect();
    laws.any(|law| {
        let mut want = short.iter().peekable();
        for c in law.chars() {
            if want.peek() == Some(&&c) {
                want.next();
            }
        }
        want.peek().is_none() && law.starts_with(short[0]) && law.ends_with(short[short.len() - 1])
    })
}

impl Engine {
    pub(crate) fn analyse(
        &self,
        question: &str,
        as_of: Option<&str>,
        rule_decomposition: bool,
    ) -> Result<Analysis, QueryError> {
        let mut warnings = Vec::new();
        let q = clean(question, &mut warnings)?;
        if let Some(d) = as_of {
            check_date(d)?;
        }
        let (mentions, cited) = self.article_mentions(&q);
        let mut unknown_laws = cited.clone();
        // A name that could abbreviate a law of the store (民诉法) is warned about, not
        // refused.
        let unknown_cited = cited
            .into_iter()
            .filter(|n| !self.may_abbreviate_a_law(n))
            .collect();
        for m in quoted_re().captures_iter(&q) {
            let name = m[1].trim();
            if self
                .linker
                .law_names
                .contains_key(&coal_corpus::question_name(name))
            {
                continue;
            }
            if LAW_SUFFIXES.iter().any(|s| name.ends_with(s))
                && !unknown_laws.iter().any(|u| u == name)
            {
                unknown_laws.push(name.to_owned());
            }
        }
        for law in &unknown_laws {
            warnings.push(format!(
                "《{law}》 is not a law of this store; what is found comes from the laws it holds"
            ));
        }
        // With a chat model the LLM decomposes the question; the rules do otherwise, and
        // when the LLM fails.
        let chat = self.chat.as_ref().filter(|_| !rule_decomposition);
        let (decomposition, decomposed_by) = match chat {
            Some(chat) => match complexity::llm::decompose(chat.as_ref(), &q, &self.lexicon) {
                Ok(d) => (d, chat.id().to_owned()),
                Err(e) => {
                    warnings.push(format!(
                        "the LLM decomposition failed ({e}); the rules decomposed the question"
                    ));
                    (
                        complexity::intrinsic::decompose(&q, &self.lexicon),
                        "rules".to_owned(),
                    )
                }
            },
            None => (
                complexity::intrinsic::decompose(&q, &self.lexicon),
                "rules".to_owned(),
            ),
        };
        let is_lookup = complexity::intrinsic::classify(&q, &decomposition)
            == crate::complexity::QuestionType::ArticleLookup;
        Ok(Analysis {
            is_lookup,
            question: q,
            warnings,
            as_of: as_of.map(str::to_owned),
            decomposition,
            decomposed_by,
            mentions,
            unknown_laws,
            unknown_cited,
        })
    }

    /// `X法第N条` in the question: the law by the longest name ending right before 第;
    /// and the names of laws cited that way that the store does not hold.
    fn article_mentions(&self, q: &str) -> (Vec<ArticleMention>, Vec<String>) {
        let mut out = Vec::new();
        let mut unknown = Vec::new();
        for m in article_mention_re().captures_iter(q) {
            let whole = m.get(0).unwrap();
            let before = &q[..whole.start()];
            let (Some(main), suffix) = (
                numeral(&m[1]),
                m.get(2).and_then(|s| numeral(s.as_str())).unwrap_or(0),
            ) else {
                continue;
            };
            // 《中华人民共和国火星劳动法》第三条 is not 劳动法's, though its name ends so;
            // 《社会法-劳动法》第三条 is.
            let quoted_unknown = last_quoted(before)
                .filter(|name| !self.quoted_law_is_held(name))
                .filter(|name| LAW_SUFFIXES.iter().any(|s| name.ends_with(s)));
            if let Some(name) = quoted_unknown {
                if !unknown.iter().any(|u| u == name) {
                    unknown.push(name.to_owned());
                }
                continue;
            }
            match self.linker.law_ending(before) {
                Some((law, _)) => out.push(ArticleMention {
                    law,
                    label: coal_corpus::ArticleNumber { main, suffix }.label(),
                    main,
                    suffix,
                }),
                None => {
                    if let Some(name) = unknown_law_name(before)
                        && !unknown.contains(&name)
                    {
                        unknown.push(name);
                    }
                }
            }
        }
        (out, unknown)
    }

    /// Whether a name in 《》 is a held law's: the name itself, or a held law's name after
    /// a separator (社会法-劳动法), not after more of a word (火星劳动法).
    fn quoted_law_is_held(&self, name: &str) -> bool {
        let q = coal_corpus::question_name(name);
        if self.linker.law_names.contains_key(&q) {
            return true;
        }
        let Some((_, len)) = self.linker.law_ending(&q) else {
            return false;
        };
        let chars: Vec<char> = q.chars().collect();
        !han(chars[chars.len() - len - 1])
    }

    /// Whether a name the store does not hold could be short for a law it does (民诉法).
    pub(crate) fn may_abbreviate_a_law(&self, name: &str) -> bool {
        let n = coal_corpus::question_name(name);
        !n.is_empty() && abbreviates_any(&n, self.linker.law_names.keys())
    }

    /// The article node a mention names in the current version, if it exists.
    pub(crate) fn mention_node(&self, m: &ArticleMention) -> Option<NodeId> {
        let v = &self.graph.laws[m.law].version_iri;
        self.graph
            .get(&coal_ontology::iri::article(v, m.main, m.suffix))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abbreviations_of_held_laws_and_quoted_names_are_recognised() {
        let laws = ["民事诉讼法".to_owned(), "劳动合同法".to_owned()];
        assert!(abbreviates_any("民诉法", laws.iter()));
        assert!(abbreviates_any("劳动合同法", laws.iter()));
        assert!(!abbreviates_any("火星殖民法", laws.iter()));
        // In order, first and last characters kept.
        assert!(!abbreviates_any("诉民法", laws.iter()));
        assert!(!abbreviates_any("事诉讼法", laws.iter()));
        assert_eq!(last_quoted("请问《火星劳动法》 "), Some("火星劳动法"));
        assert_eq!(last_quoted("请问火星劳动法"), None);
        assert_eq!(last_quoted("》"), None);
    }

    #[test]
    fn impossible_dates_are_refused_with_the_reason() {
        assert!(check_date("2020-02-29").is_ok());
        assert!(check_date("2024-12-31").is_ok());
        let e = |d: &str| check_date(d).unwrap_err().to_string();
        assert!(
            e("2020-13-45").contains("no month 13"),
            "{}",
            e("2020-13-45")
        );
        assert!(
            e("2023-02-29").contains("has 28 days"),
            "{}",
            e("2023-02-29")
        );
        assert!(e("2023-04-31").contains("has 30 days"));
        assert!(e("2023-1-5").contains("YYYY-MM-DD"));
        assert!(e("abcd-ef-gh").contains("YYYY-MM-DD"));
    }

    #[test]
    fn an_unknown_law_is_named_without_the_words_before_it() {
        for (before, name) in [
            ("中华人民共和国火星殖民法", "中华人民共和国火星殖民法"),
            ("请问月球采矿条例", "月球采矿条例"),
            ("《星际航行法》", "星际航行法"),
            // Not the provision cited before it, nor the word joining them.
            ("示范循环法第三条和火星殖民法", "火星殖民法"),
            ("劳动法第十条之一以及月球采矿条例", "月球采矿条例"),
            ("劳动法第3条和火星殖民法", "火星殖民法"),
            ("劳动法第三条第二款和火星殖民法", "火星殖民法"),
            // Without a citation before it, a name starting like a connective keeps it.
            ("同居关系解除办法", "同居关系解除办法"),
        ] {
            assert_eq!(unknown_law_name(before).as_deref(), Some(name), "{before}");
        }
        // Pointers back and bare kinds of rules are not names.
        for before in ["本法", "该条例", "根据上述规定", "司法解释", "这部法"] {
            assert_eq!(unknown_law_name(before), None, "{before}");
        }
        assert_eq!(unknown_law_name("我想知道第"), None);
        assert_eq!(unknown_law_name("合同"), None);
    }
}
