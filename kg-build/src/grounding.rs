//! Whether an extracted triple says what its article says. A small model's replies pass
//! the schema yet mostly pair a real term with a relation the article does not state
//! (20 of 100 hand-checked 1.5B triples were correct: `tests/fixtures/checked-triples.jsonl`).
//! These checks keep a triple only when the article supports it on its face:
//!
//! - the object is in one clause of the article (whole, or 80% of its character bigrams),
//!   and is neither the subject, an article number, nor the statute itself;
//! - the subject is in the article, or is the statute itself (本法, its name);
//! - `规定` (the statute provides …) has the statute as its subject; the other relations
//!   need their cue word in the object's clause (主体-权利: 有权/可以/享有 …).
//!
//! They never add a triple; they only refuse one, with the reason, for the build report.

use std::collections::HashSet;

use crate::extract::Triple;

/// Why a triple was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ungrounded {
    /// Subject and object are one term.
    SameTerms,
    /// The object is an article number (第十六条) with a relation other than 引用/依据.
    ArticleNumberObject,
    /// The object is the statute itself with a relation other than 引用/依据.
    StatuteObject,
    ObjectNotInArticle,
    SubjectNotInArticle,
    /// `规定` with a subject other than the statute.
    ProvidesWithoutStatute,
    /// The relation's cue word is not in the object's clause.
    NoCue,
}

impl Ungrounded {
    pub fn as_str(self) -> &'static str {
        match self {
            Ungrounded::SameTerms => "subject and object are one term",
            Ungrounded::ArticleNumberObject => "object is an article number",
            Ungrounded::StatuteObject => "object is the statute itself",
            Ungrounded::ObjectNotInArticle => "object not in the article",
            Ungrounded::SubjectNotInArticle => "subject not in the article",
            Ungrounded::ProvidesWithoutStatute => "规定 whose subject is not the statute",
            Ungrounded::NoCue => "no cue word of the relation in the object's clause",
        }
    }
}

/// Words an article uses when it states the relation.
fn cues(relation: &str) -> &'static [&'static str] {
    match relation {
        "主体-权利" => &["有权", "可以", "享有", "权利"],
        "主体-义务" => &["应当", "必须", "不得", "义务", "应", "须"],
        "主体-责任" => &[
            "责任", "赔偿", "罚款", "处分", "追究", "没收", "吊销", "责令",
        ],
        "定义" => &["是指", "指", "称"],
        "条件-结果" => &["的，", "如果", "凡", "除", "之一", "时，"],
        "修改" => &["修改", "修正"],
        "废止" => &["废止"],
        "生效" => &["施行", "生效"],
        "引用" => &["第", "规定"],
        "依据" => &["依据", "根据", "依照"],
        "适用于" => &["适用"],
        "解释" => &["解释"],
        "层级" => &["上级", "下级", "领导"],
        "隶属" => &["隶属", "领导", "所属"],
        "地域范围" => &["境内", "地区", "区域", "行政区"],
        "时间" => &["日", "月", "年", "期限", "期间"],
        "程序-步骤" => &["程序", "申请", "提交", "审查", "办理", "报"],
        _ => &[],
    }
}

fn term(s: &str) -> String {
    coal_corpus::short_name(
        s.trim()
            .trim_matches(|c| matches!(c, '《' | '》' | '"' | '“' | '”')),
    )
}

fn bigrams(s: &str) -> HashSet<(char, char)> {
    let c: Vec<char> = s.chars().collect();
    c.windows(2).map(|w| (w[0], w[1])).collect()
}

/// `第…条` (an article number, maybe with 款/项 after it).
fn is_article_number(s: &str) -> bool {
    let Some(rest) = s.strip_prefix('第') else {
        return false;
    };
    let digits = rest
        .chars()
        .take_while(|c| "零一二三四五六七八九十百千0123456789".contains(*c))
        .count();
    digits > 0 && rest.chars().nth(digits) == Some('条')
}

/// The clause of `article` that holds most of `object`, if one holds enough of it.
fn object_clause<'a>(article: &'a str, object: &str) -> Option<&'a str> {
    let clauses = article
        .split(['。', '；', '\n'])
        .filter(|c| !c.trim().is_empty());
    let wanted = bigrams(object);
    let mut best: Option<(&str, f64)> = None;
    for c in clauses {
        let share = if c.contains(object) {
            1.0
        } else if wanted.is_empty() {
            0.0
        } else {
            wanted.intersection(&bigrams(c)).count() as f64 / wanted.len() as f64
        };
        if best.is_none_or(|(_, b)| share > b) {
            best = Some((c, share));
        }
    }
    best.filter(|(_, s)| *s >= 0.8).map(|(c, _)| c)
}

/// Checks `t` against the text of the article it came from; `statute` is the law's title.
pub fn check(t: &Triple, article: &str, statute: &str) -> Result<(), Ungrounded> {
    let (subject, object, statute) = (term(&t.subject), term(&t.object), term(statute));
    let (subject, object, statute) = (subject.as_str(), object.as_str(), statute.as_str());
    let is_statute =
        |s: &str| s == "本法" || s == statute || (s.ends_with('法') && statute.contains(s));
    let cites = matches!(t.relation.as_str(), "引用" | "依据");
    if subject == object {
        return Err(Ungrounded::SameTerms);
    }
    if is_article_number(object) && !cites {
        return Err(Ungrounded::ArticleNumberObject);
    }
    if is_statute(object) && !cites {
        return Err(Ungrounded::StatuteObject);
    }
    let Some(clause) = object_clause(article, object) else {
        return Err(Ungrounded::ObjectNotInArticle);
    };
    if t.relation == "规定" {
        return match is_statute(subject) {
            true => Ok(()),
            false => Err(Ungrounded::ProvidesWithoutStatute),
        };
    }
    if !is_statute(subject) && !article.contains(subject) {
        return Err(Ungrounded::SubjectNotInArticle);
    }
    let cue = cues(&t.relation);
    if !cue.is_empty() && !cue.iter().any(|w| clause.contains(w)) {
        return Err(Ungrounded::NoCue);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str, r: &str, o: &str) -> Triple {
        Triple {
            subject: s.into(),
            relation: r.into(),
            object: o.into(),
        }
    }

    const ART: &str = "用人单位招用劳动者时，应当如实告知劳动者工作内容；用人单位有权了解劳动者与劳动合同直接相关的基本情况。";
    const LAW: &str = "中华人民共和国劳动合同法";

    #[test]
    fn a_triple_the_article_states_is_kept() {
        assert_eq!(
            check(
                &t("用人单位", "主体-义务", "如实告知劳动者工作内容"),
                ART,
                LAW
            ),
            Ok(())
        );
        assert_eq!(
            check(&t("本法", "规定", "用人单位有权了解劳动者"), ART, LAW),
            Ok(())
        );
    }

    #[test]
    fn each_check_refuses_what_the_article_does_not_say() {
        let cases = [
            (
                t("用人单位", "主体-权利", "用人单位"),
                Ungrounded::SameTerms,
            ),
            (
                t("劳动合同", "修改", "第十六条"),
                Ungrounded::ArticleNumberObject,
            ),
            (
                t("劳动者", "适用于", "《中华人民共和国劳动合同法》"),
                Ungrounded::StatuteObject,
            ),
            (
                t("劳动者", "主体-权利", "平等就业"),
                Ungrounded::ObjectNotInArticle,
            ),
            (
                t("工会", "主体-义务", "如实告知劳动者工作内容"),
                Ungrounded::SubjectNotInArticle,
            ),
            (
                t("用人单位", "规定", "如实告知劳动者工作内容"),
                Ungrounded::ProvidesWithoutStatute,
            ),
            // The object's clause says 应当 (a duty), not a right.
            (
                t("用人单位", "主体-权利", "如实告知劳动者工作内容"),
                Ungrounded::NoCue,
            ),
        ];
        for (triple, why) in cases {
            assert_eq!(check(&triple, ART, LAW), Err(why), "{triple:?}");
        }
        // An article number is a fine object of a citation.
        assert_eq!(
            check(&t("本法", "引用", "第十六条"), "依照本法第十六条规定", LAW),
            Ok(())
        );
    }
}
