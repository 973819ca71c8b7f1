//! What a parsed statute file is made of.

use serde::Serialize;

/// A calendar date as statutes write it (no time zone, no time).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

impl Date {
    pub fn new(year: u16, month: u8, day: u8) -> Option<Date> {
        let valid = (1..=12).contains(&month) && (1..=31).contains(&day) && year >= 1900;
        valid.then_some(Date { year, month, day })
    }

    /// Parses `YYYY-MM-DD`.
    pub fn parse_iso(s: &str) -> Option<Date> {
        let mut parts = s.trim().splitn(3, '-');
        let y = parts.next()?.parse().ok()?;
        let m = parts.next()?.parse().ok()?;
        let d = parts.next()?.parse().ok()?;
        Date::new(y, m, d)
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// The structural levels above the article, in nesting order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub enum DivisionKind {
    /// 序言: a preamble before the body.
    Preamble,
    /// 编
    Part,
    /// 分编
    SubPart,
    /// 章 (also 附则 and the 一、二、 headings of judicial interpretations)
    Chapter,
    /// 节
    Section,
    /// 附件 / 附录: appended material after the body.
    Appendix,
    /// A heading whose kind the text does not tell (reported as a warning).
    Other,
}

impl DivisionKind {
    /// Nesting rank: a heading closes every open division of equal or deeper rank.
    pub fn rank(self) -> u8 {
        match self {
            DivisionKind::Preamble | DivisionKind::Appendix => 0,
            DivisionKind::Part => 1,
            DivisionKind::SubPart => 2,
            DivisionKind::Chapter => 3,
            DivisionKind::Section => 4,
            DivisionKind::Other => 5,
        }
    }

    /// The short name used in IRIs and hierarchy paths.
    pub fn slug(self) -> &'static str {
        match self {
            DivisionKind::Preamble => "preamble",
            DivisionKind::Part => "part",
            DivisionKind::SubPart => "subpart",
            DivisionKind::Chapter => "chp",
            DivisionKind::Section => "sec",
            DivisionKind::Appendix => "annex",
            DivisionKind::Other => "div",
        }
    }
}

/// A heading-level division (编, 分编, 章, 节, …) of one law version.
#[derive(Debug, Clone, Serialize)]
pub struct Division {
    /// Index of this division in [`LawVersion::divisions`].
    pub index: usize,
    pub parent: Option<usize>,
    pub kind: DivisionKind,
    /// The number in the label (第二章 → 2); `None` for 附则, 序言 and the like.
    pub number: Option<u32>,
    /// Normalised label: `第二章`, `附则`.
    pub label: String,
    /// Title after the label with inner spacing removed: `监护`.
    pub title: String,
    /// The heading exactly as written.
    pub heading: String,
    pub source: SourceRef,
}

/// An article number: 第一百三十三条之一 is `{ main: 133, suffix: 1 }`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ArticleNumber {
    pub main: u32,
    /// The `之N` suffix, 0 when there is none.
    pub suffix: u32,
}

impl ArticleNumber {
    /// The label as statutes write it: `第一百三十三条之一`.
    pub fn label(&self) -> String {
        let mut s = format!("第{}条", crate::to_chinese_numeral(self.main));
        if self.suffix > 0 {
            s.push('之');
            s.push_str(&crate::to_chinese_numeral(self.suffix));
        }
        s
    }

    /// The identifier used in IRIs: `133` or `133-1`.
    pub fn slug(&self) -> String {
        if self.suffix > 0 {
            format!("{}-{}", self.main, self.suffix)
        } else {
            self.main.to_string()
        }
    }
}

/// Where a piece of text came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SourceRef {
    /// Index into [`LawVersion::files`].
    pub file: usize,
    /// 1-based line number.
    pub line: usize,
}

/// 项: an enumerated item such as `（一）…` inside a paragraph.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    pub number: u32,
    /// `（一）`
    pub label: String,
    pub text: String,
    pub source: SourceRef,
}

/// 款: a paragraph of an article, with the items that follow it.
#[derive(Debug, Clone, Serialize)]
pub struct Paragraph {
    /// 1-based.
    pub number: u32,
    pub text: String,
    pub items: Vec<Item>,
    pub source: SourceRef,
}

/// 条: an article.
#[derive(Debug, Clone, Serialize)]
pub struct Article {
    pub number: ArticleNumber,
    /// The label exactly as written (`第一百三十三条之一`).
    pub label: String,
    /// The innermost division that holds the article.
    pub division: Option<usize>,
    pub paragraphs: Vec<Paragraph>,
    pub source: SourceRef,
}

impl Article {
    /// The article's full text: label, then paragraphs and items, one per line.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for p in &self.paragraphs {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&p.text);
            for item in &p.items {
                out.push('\n');
                out.push_str(&item.text);
            }
        }
        out
    }

    /// The text without the label, for indexing and display.
    pub fn body(&self) -> String {
        let text = self.text();
        text.strip_prefix(&self.label)
            .map(|s| s.trim_start_matches([' ', '\u{3000}']).to_owned())
            .unwrap_or(text)
    }
}

/// A dated line of the header ("2007年6月29日 第十届全国人民代表大会常务委员会…通过").
#[derive(Debug, Clone, Serialize)]
pub struct HistoryLine {
    pub text: String,
    pub date: Option<Date>,
    pub source: SourceRef,
}

/// One input file as it was read.
#[derive(Debug, Clone, Serialize)]
pub struct SourceFile {
    /// The path as given (relative to the corpus root when there is one).
    pub path: String,
    /// sha256 of the file's bytes, hex.
    pub content_hash: String,
    /// The part title for statutes split over several files (民法典's `总则`).
    pub part_title: Option<String>,
    pub format: SourceFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SourceFormat {
    /// LawRefBook Markdown (`#` headings, `<!-- INFO END -->`).
    Markdown,
    /// Plain text as copied from the national database (headings as plain lines).
    PlainText,
}

/// A version (expression) of a law: one file, or several files that form one statute.
#[derive(Debug, Clone, Serialize)]
pub struct LawVersion {
    /// Full title (`中华人民共和国劳动合同法`).
    pub title: String,
    /// Title without `中华人民共和国` (`劳动合同法`): the key of the work.
    pub short_name: String,
    pub version_date: Option<Date>,
    pub history: Vec<HistoryLine>,
    pub files: Vec<SourceFile>,
    /// Paragraphs before the first article that belong to no article (序言 text and the like).
    pub preamble: Vec<Paragraph>,
    pub divisions: Vec<Division>,
    pub articles: Vec<Article>,
}

impl LawVersion {
    /// sha256 over the content hashes of the files, in order: the version's identity.
    pub fn content_hash(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        for f in &self.files {
            h.update(f.content_hash.as_bytes());
        }
        hex::encode(h.finalize())
    }

    /// The chain of divisions from the top down to `division`.
    pub fn division_path(&self, division: Option<usize>) -> Vec<&Division> {
        let mut path = Vec::new();
        let mut cur = division;
        while let Some(i) = cur {
            let d = &self.divisions[i];
            path.push(d);
            cur = d.parent;
        }
        path.reverse();
        path
    }

    /// A readable hierarchy path: `第一编 总则 / 第二章 自然人 / 第一节 民事权利能力和民事行为能力`.
    pub fn hierarchy_label(&self, division: Option<usize>) -> String {
        self.division_path(division)
            .iter()
            .map(|d| {
                if d.title.is_empty() {
                    d.label.clone()
                } else if d.label.is_empty() {
                    d.title.clone()
                } else {
                    format!("{} {}", d.label, d.title)
                }
            })
            .collect::<Vec<_>>()
            .join(" / ")
    }
}

/// A law's name as citations write it, reduced to its short name: spaces and a trailing
/// version note go, then `中华人民共和国` (《中华人民共和国刑法（2020年修正）》's name →
/// 刑法). For resolving citations between laws.
pub fn citation_name(name: &str) -> String {
    let mut n = name.trim().replace([' ', '\u{3000}'], "");
    if let Some(open) = n.find(['（', '('])
        && n.ends_with(['）', ')'])
        && open > 0
    {
        n.truncate(open);
    }
    short_name(&n)
}

/// A law's name as questions write it: brackets, book-title marks and spaces go, their
/// content stays (宪法修正案（2004年） is asked as 宪法修正案2004年). For finding laws named
/// in a question, where the note in brackets tells two laws apart.
pub fn question_name(name: &str) -> String {
    name.chars()
        .filter(|c| !matches!(c, '（' | '）' | '(' | ')' | '《' | '》' | ' ' | '\u{3000}'))
        .collect()
}

/// A law's name as a user types it (`《中华人民共和国劳动法》`, `劳动法`): book-title marks,
/// spaces and `中华人民共和国` go. For finding the law a command or an API call names.
pub fn typed_law_name(name: &str) -> String {
    short_name(name.trim().trim_start_matches('《').trim_end_matches('》'))
}

/// Strips `中华人民共和国` and surrounding spaces from a law title.
pub fn short_name(title: &str) -> String {
    let t = title.trim();
    t.strip_prefix("中华人民共和国")
        .unwrap_or(t)
        .trim()
        .to_owned()
}

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn names_for_citations_and_for_questions() {
        assert_eq!(citation_name("中华人民共和国刑法（2020年修正）"), "刑法");
        assert_eq!(citation_name(" 中华人民共和国 劳动法 "), "劳动法");
        assert_eq!(typed_law_name(" 《中华人民共和国劳动法》 "), "劳动法");
        assert_eq!(typed_law_name("劳动法"), "劳动法");
        // A bracket that is not a trailing note stays.
        assert_eq!(citation_name("（试行）办法"), "（试行）办法");
        assert_eq!(question_name("宪法修正案（2004年）"), "宪法修正案2004年");
        assert_eq!(
            question_name("《中华人民共和国 劳动法》"),
            "中华人民共和国劳动法"
        );
    }
}
