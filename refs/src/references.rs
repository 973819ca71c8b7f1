//! Cross-references: 本法第X条, 本条第X款, 前款, 前两款, 前条, 第X条第Y款第Z项,
//! 第X条至第Y条 and lists, 《…》第X条, a whole law (《…》), and generic ones
//! (依照有关法律的规定).

use std::ops::Range;

use crate::scan::{collect, numbered, numeral, starts_with, starts_with_any};

/// Which law a reference points into.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LawSpec {
    /// 本法, 本条例, 本规定, …: the law being read.
    This,
    /// 《…》: a law by the name written inside the brackets.
    Named(String),
    /// No law written. The law being read, unless the text just before the reference
    /// names one without brackets (刑法第X条), which only the resolver can tell.
    Unstated,
    /// 有关法律, 法律、行政法规 …: a reference that names no provision.
    Generic,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArticleSpec {
    /// 第X条 or 第X条之Y.
    Number { main: u32, suffix: u32 },
    /// 第X条至第Y条: every article from X to Y in the cited version (之N ones included).
    Range { from: u32, to: u32 },
    /// 本条
    This,
    /// 前条
    Previous,
    /// 该条, 同条: the article the text cited just before.
    Antecedent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParagraphSpec {
    /// 第X款
    Number(u32),
    /// 本款
    This,
    /// 前款 (1), 前两款 (2): the paragraphs just before the one being read.
    Previous(u32),
}

/// One cited provision. `article: None` means the article being read (第二款 alone);
/// `paragraph: None` with an item means the paragraph being read (第三项 alone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Target {
    pub article: Option<ArticleSpec>,
    pub paragraph: Option<ParagraphSpec>,
    pub item: Option<u32>,
}

impl Target {
    fn is_empty(&self) -> bool {
        self.article.is_none() && self.paragraph.is_none() && self.item.is_none()
    }
}

/// A reference as written: its character span in the text, the law and the provisions.
/// No targets means the whole law (or, for [`LawSpec::Generic`], nothing in particular).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reference {
    pub span: Range<usize>,
    pub text: String,
    pub law: LawSpec,
    pub targets: Vec<Target>,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Law(LawSpec),
    Article(u32, u32),
    Paragraph(u32),
    Item(u32),
    ThisArticle,
    AntecedentArticle,
    ThisParagraph,
    PreviousArticle,
    PreviousParagraphs(u32),
    List,
    Range,
}

/// How a statute names itself.
const THIS_LAW: &[&str] = crate::scan::SELF_NAMES;
const LIST: &[&str] = &["以及", "或者", "、", "和", "及", "或", "与"];
const RANGE: &[&str] = &["至", "到"];
const PREVIOUS_PARAGRAPHS: &[(&str, u32)] = &[
    ("前款", 1),
    ("前两款", 2),
    ("前二款", 2),
    ("前三款", 3),
    ("前四款", 4),
];
/// Verbs that introduce a rule by reference (依照…的规定).
const APPLY_VERBS: &[&str] = &["依照", "按照", "根据", "依据", "适用"];

fn tokens(text: &[char]) -> Vec<(Range<usize>, Tok)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let c = text[i];
        if c == '《' {
            let close = (i + 1..text.len().min(i + 80)).find(|&j| text[j] == '》');
            if let Some(j) = close {
                let name = collect(text, i + 1..j);
                if !name.trim().is_empty() {
                    out.push((i..j + 1, Tok::Law(LawSpec::Named(name))));
                }
                i = j + 1;
                continue;
            }
        }
        if let Some((_, len)) = starts_with_any(text, i, THIS_LAW) {
            out.push((i..i + len, Tok::Law(LawSpec::This)));
            i += len;
            continue;
        }
        let simple: &[(&str, Tok)] = &[
            ("本条", Tok::ThisArticle),
            ("本款", Tok::ThisParagraph),
            ("前条", Tok::PreviousArticle),
            ("该条", Tok::AntecedentArticle),
            ("同条", Tok::AntecedentArticle),
        ];
        if let Some((pat, tok)) = simple.iter().find(|(p, _)| starts_with(text, i, p)) {
            let len = pat.chars().count();
            // 该条款, 合同条款: a contract clause, not an article.
            if text.get(i + len) == Some(&'款') {
                i += len + 1;
                continue;
            }
            out.push((i..i + len, tok.clone()));
            i += len;
            continue;
        }
        if let Some((pat, n)) = PREVIOUS_PARAGRAPHS
            .iter()
            .find(|(p, _)| starts_with(text, i, p))
        {
            let len = pat.chars().count();
            out.push((i..i + len, Tok::PreviousParagraphs(*n)));
            i += len;
            continue;
        }
        if let Some((n, len)) = numbered(text, i, '条') {
            let mut end = i + len;
            let mut suffix = 0;
            if text.get(end) == Some(&'之')
                && let Some((s, slen)) = numeral(text, end + 1)
            {
                suffix = s;
                end += 1 + slen;
            }
            out.push((i..end, Tok::Article(n, suffix)));
            i = end;
            continue;
        }
        if let Some((n, len)) = numbered(text, i, '款') {
            out.push((i..i + len, Tok::Paragraph(n)));
            i += len;
            continue;
        }
        if let Some((n, len)) = numbered(text, i, '项') {
            out.push((i..i + len, Tok::Item(n)));
            i += len;
            continue;
        }
        if let Some((_, len)) = starts_with_any(text, i, LIST) {
            out.push((i..i + len, Tok::List));
            i += len;
            continue;
        }
        if let Some((_, len)) = starts_with_any(text, i, RANGE) {
            out.push((i..i + len, Tok::Range));
            i += len;
            continue;
        }
        i += 1;
    }
    out
}

/// Every reference in `text`, in order. Spans never overlap.
pub fn references(text: &str) -> Vec<Reference> {
    let chars: Vec<char> = text.chars().collect();
    let toks = tokens(&chars);
    let mut out = Vec::new();
    // Groups of adjacent tokens.
    let mut start = 0;
    while start < toks.len() {
        let mut end = start + 1;
        while end < toks.len() && toks[end].0.start == toks[end - 1].0.end {
            end += 1;
        }
        parse_group(&chars, &toks[start..end], &mut out);
        start = end;
    }
    out.extend(generic_references(&chars, &out));
    out.sort_by_key(|r| r.span.start);
    out
}

fn is_separator(t: &Tok) -> bool {
    matches!(t, Tok::List | Tok::Range)
}

/// Splits a group at each law name and parses each part into one reference.
fn parse_group(text: &[char], group: &[(Range<usize>, Tok)], out: &mut Vec<Reference>) {
    let mut i = 0;
    while i < group.len() {
        // A part: an optional law, then provisions up to the next law.
        let law = match &group[i].1 {
            Tok::Law(l) => Some(l.clone()),
            _ => None,
        };
        let mut j = i + usize::from(law.is_some());
        while j < group.len() && !matches!(group[j].1, Tok::Law(_)) {
            j += 1;
        }
        let mut part = &group[i..j];
        let mut body = &group[i + usize::from(law.is_some())..j];
        // Separators at the edges join nothing.
        while body.last().is_some_and(|t| is_separator(&t.1)) {
            body = &body[..body.len() - 1];
            part = &part[..part.len() - 1];
        }
        while body.first().is_some_and(|t| is_separator(&t.1)) {
            body = &body[1..];
        }
        let targets = parse_targets(body);
        let keep = match &law {
            Some(LawSpec::Named(_)) => true,
            // 本法 alone (本法自…施行) cites nothing in particular.
            Some(_) => !targets.is_empty(),
            None => !targets.is_empty(),
        };
        if keep && !part.is_empty() {
            let span = part[0].0.start..part[part.len() - 1].0.end;
            out.push(Reference {
                text: collect(text, span.clone()),
                span,
                law: law.unwrap_or(LawSpec::Unstated),
                targets,
            });
        }
        i = j;
    }
}

fn parse_targets(body: &[(Range<usize>, Tok)]) -> Vec<Target> {
    let mut targets: Vec<Target> = Vec::new();
    let mut cur = Target::default();
    let mut range = false;
    let finish = |cur: &mut Target, targets: &mut Vec<Target>| {
        if !cur.is_empty() {
            targets.push(*cur);
        }
        *cur = Target::default();
    };
    for (_, tok) in body {
        match *tok {
            Tok::Article(..) | Tok::ThisArticle | Tok::PreviousArticle | Tok::AntecedentArticle => {
                let spec = match *tok {
                    Tok::Article(main, suffix) => ArticleSpec::Number { main, suffix },
                    Tok::ThisArticle => ArticleSpec::This,
                    Tok::AntecedentArticle => ArticleSpec::Antecedent,
                    _ => ArticleSpec::Previous,
                };
                finish(&mut cur, &mut targets);
                let from = targets.last().and_then(|t| match t.article {
                    Some(ArticleSpec::Number { main, .. })
                        if t.paragraph.is_none() && t.item.is_none() =>
                    {
                        Some(main)
                    }
                    _ => None,
                });
                match (range, from, spec) {
                    (true, Some(from), ArticleSpec::Number { main: to, .. }) if to > from => {
                        targets.pop();
                        targets.push(Target {
                            article: Some(ArticleSpec::Range { from, to }),
                            ..Target::default()
                        });
                    }
                    _ => cur.article = Some(spec),
                }
                range = false;
            }
            Tok::Paragraph(_) | Tok::ThisParagraph | Tok::PreviousParagraphs(_) => {
                let spec = match *tok {
                    Tok::Paragraph(n) => ParagraphSpec::Number(n),
                    Tok::ThisParagraph => ParagraphSpec::This,
                    Tok::PreviousParagraphs(n) => ParagraphSpec::Previous(n),
                    _ => unreachable!(),
                };
                if cur.paragraph.is_some() || cur.item.is_some() {
                    let article = cur.article;
                    let from = match cur.paragraph {
                        Some(ParagraphSpec::Number(n)) if cur.item.is_none() => Some(n),
                        _ => None,
                    };
                    finish(&mut cur, &mut targets);
                    if let (true, Some(from), ParagraphSpec::Number(to)) = (range, from, spec) {
                        // 第一款至第三款: the paragraphs between, then the last below.
                        for n in from + 1..to {
                            targets.push(Target {
                                article,
                                paragraph: Some(ParagraphSpec::Number(n)),
                                item: None,
                            });
                        }
                    }
                    cur.article = article;
                }
                cur.paragraph = Some(spec);
                range = false;
            }
            Tok::Item(n) => {
                if cur.item.is_some() {
                    let (article, paragraph) = (cur.article, cur.paragraph);
                    let from = cur.item;
                    finish(&mut cur, &mut targets);
                    if let (true, Some(from)) = (range, from) {
                        for k in from + 1..n {
                            targets.push(Target {
                                article,
                                paragraph,
                                item: Some(k),
                            });
                        }
                    }
                    cur.article = article;
                    cur.paragraph = paragraph;
                }
                cur.item = Some(n);
                range = false;
            }
            Tok::Range => range = true,
            Tok::List => {}
            Tok::Law(_) => unreachable!("parts are split at laws"),
        }
    }
    finish(&mut cur, &mut targets);
    targets
}

/// 依照有关法律的规定, 按照国家有关规定: a rule applied by reference without naming a
/// provision. Only where no reference was found between the verb and 规定.
fn generic_references(text: &[char], found: &[Reference]) -> Vec<Reference> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let Some((_, vlen)) = starts_with_any(text, i, APPLY_VERBS) else {
            i += 1;
            continue;
        };
        let from = i + vlen;
        let mut end = None;
        for j in from..text.len().min(from + 24) {
            if crate::scan::is_clause_break(text[j]) {
                break;
            }
            if starts_with(text, j, "规定") {
                end = Some(j + 2);
                break;
            }
        }
        let Some(end) = end else {
            i = from;
            continue;
        };
        let inside = collect(text, from..end);
        // 依照本法规定: the law being read, as a whole; nothing to resolve.
        if starts_with_any(text, from, THIS_LAW).is_some() {
            i = end;
            continue;
        }
        let overlaps = found
            .iter()
            .any(|r| r.span.start < end && r.span.end > from);
        let names_rules = ["法律", "法规", "规章", "国家有关", "有关规定", "有关部门"]
            .iter()
            .any(|k| inside.contains(k));
        if !overlaps && names_rules {
            out.push(Reference {
                span: i..end,
                text: collect(text, i..end),
                law: LawSpec::Generic,
                targets: Vec::new(),
            });
        }
        i = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn art(main: u32) -> Option<ArticleSpec> {
        Some(ArticleSpec::Number { main, suffix: 0 })
    }

    fn one(text: &str) -> Reference {
        let r = references(text);
        assert_eq!(r.len(), 1, "{text}: {r:?}");
        r.into_iter().next().unwrap()
    }

    #[test]
    fn this_law_article() {
        let r = one("违反本法第三十九条规定的，依法承担责任。");
        assert_eq!(r.law, LawSpec::This);
        assert_eq!(r.text, "本法第三十九条");
        assert_eq!(r.span, 2..9);
        assert_eq!(
            r.targets,
            vec![Target {
                article: art(39),
                ..Default::default()
            }]
        );
    }

    #[test]
    fn chains_lists_and_ranges() {
        let r = one("有本法第三十九条第一款第二项、第三项情形的");
        assert_eq!(
            r.targets,
            vec![
                Target {
                    article: art(39),
                    paragraph: Some(ParagraphSpec::Number(1)),
                    item: Some(2)
                },
                Target {
                    article: art(39),
                    paragraph: Some(ParagraphSpec::Number(1)),
                    item: Some(3)
                },
            ]
        );
        let r = one("依照第四十条、第四十一条和第四十二条的规定");
        assert_eq!(r.law, LawSpec::Unstated);
        assert_eq!(r.targets.len(), 3);
        let r = one("适用本法第二十条至第二十四条的规定");
        assert_eq!(
            r.targets,
            vec![Target {
                article: Some(ArticleSpec::Range { from: 20, to: 24 }),
                ..Default::default()
            }]
        );
        let r = one("因本条第一款第（三）项、第（五）项规定的情形");
        assert_eq!(r.targets.len(), 2);
        assert_eq!(r.targets[1].item, Some(5));
        assert_eq!(r.text, "本条第一款第（三）项、第（五）项");
        let r = one("第一百三十三条之一规定的");
        assert_eq!(
            r.targets[0].article,
            Some(ArticleSpec::Number {
                main: 133,
                suffix: 1
            })
        );
        let r = one("本条第一款至第三款规定的");
        assert_eq!(r.targets.len(), 3);
        assert_eq!(r.targets[2].paragraph, Some(ParagraphSpec::Number(3)));
        assert_eq!(r.targets[0].article, Some(ArticleSpec::This));
    }

    #[test]
    fn previous_paragraphs_and_articles() {
        let r = one("有前款规定情形之一的");
        assert_eq!(
            r.targets,
            vec![Target {
                paragraph: Some(ParagraphSpec::Previous(1)),
                ..Default::default()
            }]
        );
        let r = one("前两款规定以外的");
        assert_eq!(r.targets[0].paragraph, Some(ParagraphSpec::Previous(2)));
        let r = one("违反前条规定");
        assert_eq!(r.targets[0].article, Some(ArticleSpec::Previous));
        let r = one("该条第二款规定的二十年期间");
        assert_eq!(r.targets[0].article, Some(ArticleSpec::Antecedent));
        assert_eq!(r.targets[0].paragraph, Some(ParagraphSpec::Number(2)));
        let r = one("有前款第二项情形的");
        assert_eq!(
            r.targets,
            vec![Target {
                paragraph: Some(ParagraphSpec::Previous(1)),
                item: Some(2),
                ..Default::default()
            }]
        );
    }

    #[test]
    fn other_laws_by_name_and_whole_laws() {
        let r = one("依照《中华人民共和国劳动法》第四十四条的规定");
        assert_eq!(r.law, LawSpec::Named("中华人民共和国劳动法".into()));
        assert_eq!(r.targets[0].article, art(44));
        let rs = references("依照《中华人民共和国公司法》、《中华人民共和国证券法》办理");
        assert_eq!(rs.len(), 2);
        assert!(rs.iter().all(|r| r.targets.is_empty()));
        assert_eq!(rs[1].law, LawSpec::Named("中华人民共和国证券法".into()));
    }

    #[test]
    fn generic_references_and_non_references() {
        let r = one("依照有关法律、行政法规的规定处理");
        assert_eq!(r.law, LawSpec::Generic);
        assert_eq!(r.text, "依照有关法律、行政法规的规定");
        assert!(references("本法自2008年1月1日起施行。").is_empty());
        assert!(references("第三人可以请求返还").is_empty());
        assert!(references("对合同条款有争议的，保险人对该条款作出提示").is_empty());
        // A reference inside the verb phrase is not also counted as generic.
        assert_eq!(references("依照本法第十条的规定").len(), 1);
        assert!(references("依照本法规定处理").is_empty());
    }
}
