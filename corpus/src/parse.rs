//! Parsing one statute file (LawRefBook Markdown or plain text) into a [`LawVersion`].

use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest, Sha256};

use crate::model::*;
use crate::numerals::parse_chinese_numeral;
use crate::problem::{Problem, ProblemKind};

/// Lines longer than this many bytes are skipped: no statute paragraph comes near it.
pub const MAX_LINE_BYTES: usize = 256 * 1024;
const INFO_END: &str = "<!-- INFO END -->";

static ARTICLE_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^第([零〇一二三四五六七八九十百千]+)条(?:之([一二三四五六七八九十]+))?[ \u{3000}]")
        .unwrap()
});
static ITEM_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[（(]([一二三四五六七八九十]+)[）)]").unwrap());
/// A 目 (`1.`, `2．`, `3、`): a subdivision of the 项 before it.
static SUB_ITEM_RE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^[0-9]{1,2}[.．、]").unwrap());
static NUMBERED_HEADING_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^第([零〇一二三四五六七八九十百千0-9]+)(分编|编|章|节)[\s\u{3000}]*(.*)$").unwrap()
});
static ENUMERATED_HEADING_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([一二三四五六七八九十]+)、(.+)$").unwrap());
static HISTORY_DATE_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d{4})\s*年\s*(\d{1,2})\s*月\s*(\d{1,2})\s*日").unwrap());
static FILE_DATE_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\((\d{4}-\d{2}-\d{2})\)(?:\.[A-Za-z]+)?$").unwrap());

/// The result of parsing one file: the version (unless the file had to be skipped) and
/// every problem found.
#[derive(Debug)]
pub struct ParseOutcome {
    pub version: Option<LawVersion>,
    pub problems: Vec<Problem>,
}

/// A classified heading.
#[derive(Debug, Clone, PartialEq)]
pub struct Heading {
    pub kind: DivisionKind,
    pub number: Option<u32>,
    pub label: String,
    pub title: String,
}

fn squeeze(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace() && *c != '\u{200b}')
        .collect()
}

/// Tells a heading's kind from its text (depth of `#` is not reliable in the corpus).
pub fn classify_heading(text: &str) -> Option<Heading> {
    let text = text.trim_matches(|c: char| c.is_whitespace() || c == '\u{200b}');
    if let Some(c) = NUMBERED_HEADING_RE.captures(text) {
        let number = parse_chinese_numeral(&c[1])?;
        let kind = match &c[2] {
            "编" => DivisionKind::Part,
            "分编" => DivisionKind::SubPart,
            "章" => DivisionKind::Chapter,
            _ => DivisionKind::Section,
        };
        let label = format!("第{}{}", &c[1], &c[2]);
        let title = c.get(3).map(|m| squeeze(m.as_str())).unwrap_or_default();
        return Some(Heading {
            kind,
            number: Some(number),
            label,
            title,
        });
    }
    let squeezed = squeeze(text);
    match squeezed.as_str() {
        "附则" => {
            return Some(Heading {
                kind: DivisionKind::Chapter,
                number: None,
                label: "附则".into(),
                title: String::new(),
            });
        }
        "序言" => {
            return Some(Heading {
                kind: DivisionKind::Preamble,
                number: None,
                label: "序言".into(),
                title: String::new(),
            });
        }
        _ => {}
    }
    for prefix in ["附件", "附录"] {
        if let Some(rest) = squeezed.strip_prefix(prefix) {
            // 附件一, 附件1：… are appendices; 附件 alone too.
            return Some(Heading {
                kind: DivisionKind::Appendix,
                number: None,
                label: prefix.to_owned(),
                title: rest.trim_start_matches(['：', ':']).to_owned(),
            });
        }
    }
    if let Some(c) = ENUMERATED_HEADING_RE.captures(text) {
        // 一、一般规定: section headings of judicial interpretations.
        let number = parse_chinese_numeral(&c[1])?;
        if c[2].chars().count() <= 40 && !c[2].contains('。') {
            return Some(Heading {
                kind: DivisionKind::Chapter,
                number: Some(number),
                label: format!("{}、", &c[1]),
                title: squeeze(&c[2]),
            });
        }
    }
    None
}

/// Reads a version date from a file name such as `劳动合同法(2012-12-28).md`.
pub fn date_from_file_name(path: &str) -> Option<Date> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    FILE_DATE_RE
        .captures(name)
        .and_then(|c| Date::parse_iso(&c[1]))
}

fn title_from_file_name(path: &str) -> String {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = name.rsplit_once('.').map(|(s, _)| s).unwrap_or(name);
    match FILE_DATE_RE.find(name) {
        Some(m) => name[..m.start()].to_owned(),
        None => stem.to_owned(),
    }
}

fn history_date(line: &str) -> Option<Date> {
    let c = HISTORY_DATE_RE.captures(line)?;
    Date::new(c[1].parse().ok()?, c[2].parse().ok()?, c[3].parse().ok()?)
}

/// Checks the raw bytes: binary junk and invalid UTF-8 make the file unusable.
fn decode<'a>(path: &str, bytes: &'a [u8]) -> Result<&'a str, Problem> {
    let head = &bytes[..bytes.len().min(64 * 1024)];
    let controls = head
        .iter()
        .filter(|&&b| b == 0 || (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c)))
        .count();
    if head.contains(&0) || controls * 100 > head.len().max(1) {
        return Err(Problem::error(
            path,
            None,
            ProblemKind::BinaryContent,
            format!(
                "{controls} control bytes in the first {} bytes: not a text file",
                head.len()
            ),
        ));
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(s.strip_prefix('\u{feff}').unwrap_or(s)),
        Err(e) => {
            let at = e.valid_up_to();
            let line = bytes[..at].iter().filter(|&&b| b == b'\n').count() + 1;
            Err(Problem::error(
                path,
                Some(line),
                ProblemKind::InvalidUtf8,
                format!(
                    "invalid UTF-8 at byte {at} (GBK or another legacy encoding?); convert the file to UTF-8"
                ),
            ))
        }
    }
}

fn is_blank(line: &str) -> bool {
    line.chars()
        .all(|c| c.is_whitespace() || c == '\u{200b}' || c == '\u{feff}')
}

fn clean(line: &str) -> &str {
    line.trim_matches(|c: char| c.is_whitespace() || c == '\u{200b}' || c == '\u{feff}')
}

struct Builder {
    version: LawVersion,
    problems: Vec<Problem>,
    /// Open divisions, outermost first.
    stack: Vec<usize>,
    /// First line and count of paragraphs before the first article outside any 序言.
    untitled_preamble: Option<(usize, usize)>,
}

impl Builder {
    fn src(&self, line: usize) -> SourceRef {
        SourceRef { file: 0, line }
    }

    fn open_division(&mut self, h: Heading, heading: &str, line: usize) {
        while let Some(&top) = self.stack.last() {
            if self.version.divisions[top].kind.rank() >= h.kind.rank() {
                self.stack.pop();
            } else {
                break;
            }
        }
        // A preamble or appendix stands at the top, outside every other division.
        if h.kind.rank() == 0 {
            self.stack.clear();
            if let Some(&first) = self.version.divisions.first().map(|d| &d.index)
                && self.version.files[0].part_title.is_some()
            {
                self.stack.push(first);
            }
        }
        let index = self.version.divisions.len();
        self.version.divisions.push(Division {
            index,
            parent: self.stack.last().copied(),
            kind: h.kind,
            number: h.number,
            label: h.label,
            title: h.title,
            heading: heading.to_owned(),
            source: self.src(line),
        });
        self.stack.push(index);
    }

    fn start_article(&mut self, number: ArticleNumber, label: &str, text: &str, line: usize) {
        let source = self.src(line);
        self.version.articles.push(Article {
            number,
            label: label.to_owned(),
            division: self.stack.last().copied(),
            paragraphs: vec![Paragraph {
                number: 1,
                text: text.to_owned(),
                items: Vec::new(),
                source: source.clone(),
            }],
            source,
        });
    }

    fn add_text(&mut self, text: &str, line: usize) {
        let source = self.src(line);
        let item = ITEM_RE
            .captures(text)
            .and_then(|c| parse_chinese_numeral(&c[1]).map(|n| (n, c[0].to_owned())));
        let in_appendix = self.stack.last().is_some_and(|&d| {
            matches!(
                self.version.divisions[d].kind,
                DivisionKind::Appendix | DivisionKind::Preamble
            )
        });
        let Some(article) = self.version.articles.last_mut().filter(|_| !in_appendix) else {
            let number = self.version.preamble.len() as u32 + 1;
            if self.version.articles.is_empty()
                && !in_appendix
                && self
                    .version
                    .divisions
                    .iter()
                    .all(|d| d.kind != DivisionKind::Preamble)
            {
                self.untitled_preamble.get_or_insert((line, 0)).1 += 1;
            }
            self.version.preamble.push(Paragraph {
                number,
                text: text.to_owned(),
                items: Vec::new(),
                source,
            });
            return;
        };
        match item {
            Some((number, label)) => {
                let para = article
                    .paragraphs
                    .last_mut()
                    .expect("an article starts with a paragraph");
                para.items.push(Item {
                    number,
                    label,
                    text: text.to_owned(),
                    source,
                });
            }
            // The model has no 目 level: a 目 joins its 项's text (one line each, so the
            // article's text is unchanged), and the 项 after it stays in the same 款.
            None if SUB_ITEM_RE.is_match(text)
                && article
                    .paragraphs
                    .last()
                    .is_some_and(|p| !p.items.is_empty()) =>
            {
                let item = article
                    .paragraphs
                    .last_mut()
                    .and_then(|p| p.items.last_mut())
                    .expect("checked");
                item.text.push('\n');
                item.text.push_str(text);
            }
            None => {
                let number = article.paragraphs.len() as u32 + 1;
                article.paragraphs.push(Paragraph {
                    number,
                    text: text.to_owned(),
                    items: Vec::new(),
                    source,
                });
            }
        }
    }
}

/// Parses one file's bytes. `path` names the file in every problem and in the result.
pub fn parse_file(path: &str, bytes: &[u8]) -> ParseOutcome {
    let content_hash = hex::encode(Sha256::digest(bytes));
    let text = match decode(path, bytes) {
        Ok(t) => t,
        Err(p) => {
            return ParseOutcome {
                version: None,
                problems: vec![p],
            };
        }
    };
    if is_blank(text) {
        return ParseOutcome {
            version: None,
            problems: vec![Problem::error(
                path,
                None,
                ProblemKind::EmptyFile,
                "the file is empty",
            )],
        };
    }
    let mut problems = Vec::new();
    let lines = kept_lines(path, text, &mut problems);
    let header = read_header(path, &lines, &mut problems);
    let mut b = Builder {
        version: LawVersion {
            short_name: short_name(&header.title),
            title: header.title,
            version_date: header.version_date,
            history: header.history,
            files: vec![SourceFile {
                path: path.to_owned(),
                content_hash,
                part_title: header.part_title.clone(),
                format: header.format,
            }],
            preamble: Vec::new(),
            divisions: Vec::new(),
            articles: Vec::new(),
        },
        problems,
        stack: Vec::new(),
        untitled_preamble: None,
    };
    if let Some(pt) = &header.part_title {
        // A statute split over files: each file is one 编; numbered when the files are merged.
        b.open_division(
            Heading {
                kind: DivisionKind::Part,
                number: None,
                label: String::new(),
                title: squeeze(pt),
            },
            pt,
            header.part_line,
        );
    }
    for &(n, raw) in &lines[header.body_start.min(lines.len())..] {
        b.body_line(path, header.format, n, raw);
    }
    b.finish(path)
}

/// The file's non-blank lines with their 1-based numbers; an over-long line is skipped
/// with a warning.
fn kept_lines<'t>(path: &str, text: &'t str, problems: &mut Vec<Problem>) -> Vec<(usize, &'t str)> {
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.len() > MAX_LINE_BYTES {
            problems.push(Problem::warning(
                path,
                Some(i + 1),
                ProblemKind::LineTooLong,
                format!(
                    "line of {} bytes skipped (limit {MAX_LINE_BYTES})",
                    line.len()
                ),
            ));
            continue;
        }
        if !is_blank(line) {
            lines.push((i + 1, line));
        }
    }
    lines
}

/// What the lines before the body say: title, part title, history, version date.
struct Header {
    format: SourceFormat,
    title: String,
    part_title: Option<String>,
    /// The line of the part title (for the 编 it opens).
    part_line: usize,
    history: Vec<HistoryLine>,
    version_date: Option<Date>,
    /// Index in the kept lines of the body's first line.
    body_start: usize,
}

/// The header is everything before `<!-- INFO END -->`, or else before the first
/// structural line (heading or article).
fn read_header(path: &str, lines: &[(usize, &str)], problems: &mut Vec<Problem>) -> Header {
    let has_info_end = lines.iter().any(|(_, l)| clean(l) == INFO_END);
    let format = if has_info_end || lines.first().is_some_and(|(_, l)| l.starts_with('#')) {
        SourceFormat::Markdown
    } else {
        SourceFormat::PlainText
    };
    let is_structural = |l: &str| {
        let c = clean(l);
        ARTICLE_RE.is_match(c)
            || (l.starts_with("##"))
            || (!l.starts_with('#') && classify_heading(c).is_some())
    };
    let header_end = if has_info_end {
        lines
            .iter()
            .position(|(_, l)| clean(l) == INFO_END)
            .unwrap()
    } else {
        if format == SourceFormat::Markdown {
            let line = lines.first().map(|(n, _)| *n);
            problems.push(Problem::warning(
                path,
                line,
                ProblemKind::MissingInfoEnd,
                "no `<!-- INFO END -->` line; the header ends at the first heading or article",
            ));
        }
        lines
            .iter()
            .position(|(_, l)| is_structural(l))
            .unwrap_or(lines.len())
    };
    let header = &lines[..header_end];
    let body_start = if has_info_end {
        header_end + 1
    } else {
        header_end
    };
    let mut titles = Vec::new();
    let mut history = Vec::new();
    for (i, (n, l)) in header.iter().enumerate() {
        let c = clean(l);
        if let Some(t) = c.strip_prefix('#') {
            titles.push(clean(t.trim_start_matches('#')).to_owned());
        } else if format == SourceFormat::PlainText && i == 0 && history_date(c).is_none() {
            titles.push(c.to_owned());
        } else {
            history.push(HistoryLine {
                text: c.to_owned(),
                date: history_date(c),
                source: SourceRef { file: 0, line: *n },
            });
        }
    }
    let title = match titles.first() {
        Some(t) if !t.is_empty() => t.clone(),
        _ => {
            let fallback = title_from_file_name(path);
            problems.push(Problem::warning(
                path,
                lines.first().map(|(n, _)| *n),
                ProblemKind::MissingTitle,
                format!("no title line; using the file name `{fallback}`"),
            ));
            fallback
        }
    };
    let version_date =
        date_from_file_name(path).or_else(|| history.iter().rev().find_map(|h| h.date));
    Header {
        format,
        title,
        part_title: titles.get(1).cloned().filter(|t| !t.is_empty()),
        part_line: header.get(1).map(|(n, _)| *n).unwrap_or(1),
        history,
        version_date,
        body_start,
    }
}

impl Builder {
    /// One body line: a Markdown heading, an article's first line, a plain-text heading,
    /// or text of the current article (or the preamble).
    fn body_line(&mut self, path: &str, format: SourceFormat, n: usize, raw: &str) {
        let line = clean(raw);
        if format == SourceFormat::Markdown && raw.starts_with('#') {
            let heading = clean(raw.trim_start_matches('#'));
            match classify_heading(heading) {
                Some(h) => self.open_division(h, heading, n),
                None => {
                    self.problems.push(Problem::warning(path, Some(n), ProblemKind::UnknownHeading, format!("heading `{heading}` is not 编/分编/章/节/附则/附件; kept as an untyped division")));
                    self.open_division(
                        Heading {
                            kind: DivisionKind::Other,
                            number: None,
                            label: String::new(),
                            title: squeeze(heading),
                        },
                        heading,
                        n,
                    );
                }
            }
            return;
        }
        if let Some(c) = ARTICLE_RE.captures(line) {
            let main = parse_chinese_numeral(&c[1]);
            let suffix = c
                .get(2)
                .map(|m| parse_chinese_numeral(m.as_str()))
                .unwrap_or(Some(0));
            if let (Some(main), Some(suffix)) = (main, suffix) {
                let label = c[0].trim_end_matches([' ', '\u{3000}']);
                self.start_article(ArticleNumber { main, suffix }, label, line, n);
                return;
            }
        }
        if format == SourceFormat::PlainText
            && line.chars().count() <= 40
            && !line.contains('。')
            && let Some(h) = classify_heading(line)
        {
            self.open_division(h, line, n);
            return;
        }
        self.add_text(line, n);
    }

    /// The version with the whole file's problems: no article at all, text before the
    /// first article, and the numbering checks.
    fn finish(self, path: &str) -> ParseOutcome {
        let untitled_preamble = self.untitled_preamble;
        let mut version = self.version;
        let mut problems = self.problems;
        if version.articles.is_empty() {
            problems.push(Problem::warning(
                path,
                None,
                ProblemKind::NoArticles,
                "no article (第X条) found; its text is kept as preamble",
            ));
        } else if let Some((line, count)) = untitled_preamble {
            // Not an error: some statutes open with an untitled preamble. Noted once so a
            // wrong split between header and body shows up.
            problems.push(Problem::warning(
                path,
                Some(line),
                ProblemKind::TextOutsideArticle,
                format!("{count} paragraph(s) before the first article, kept as preamble"),
            ));
        }
        check_numbering(&version, &mut problems);
        version.preamble.shrink_to_fit();
        ParseOutcome {
            version: Some(version),
            problems,
        }
    }
}

/// Duplicate, missing and out-of-order article numbers, in reading order.
pub fn check_numbering(version: &LawVersion, problems: &mut Vec<Problem>) {
    let mut seen = std::collections::HashSet::new();
    let mut prev: Option<ArticleNumber> = None;
    for a in &version.articles {
        let file = &version.files[a.source.file].path;
        let line = Some(a.source.line);
        if !seen.insert(a.number) {
            problems.push(Problem::warning(
                file,
                line,
                ProblemKind::DuplicateArticleNumber,
                format!("{} appears more than once", a.label),
            ));
        } else if let Some(p) = prev {
            if a.number < p {
                problems.push(Problem::warning(
                    file,
                    line,
                    ProblemKind::OutOfOrderArticle,
                    format!("{} comes after {}", a.label, p.label()),
                ));
            } else if a.number.suffix == 0 && a.number.main > p.main + 1 {
                problems.push(Problem::warning(
                    file,
                    line,
                    ProblemKind::MissingArticleNumber,
                    format!(
                        "{} follows {}: {} article number(s) missing",
                        a.label,
                        p.label(),
                        a.number.main - p.main - 1
                    ),
                ));
            }
        } else if a.number.main > 1 && version.files.iter().all(|f| f.part_title.is_none()) {
            problems.push(Problem::warning(
                file,
                line,
                ProblemKind::MissingArticleNumber,
                format!("the first article is {}", a.label),
            ));
        }
        prev = Some(prev.map_or(a.number, |p| p.max(a.number)));
    }
}
