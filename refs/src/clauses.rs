//! Override clauses: where a provision yields to other rules (另有规定的，依照其规定;
//! 法律另有规定的除外) or claims precedence over them (与本法不一致的，以本法为准).

use std::ops::Range;

use crate::scan::{collect, is_clause_break, starts_with, starts_with_any};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClauseKind {
    /// The provision gives way where `subject` provides otherwise.
    Defers,
    /// The provision prevails over conflicting rules.
    Prevails,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clause {
    pub kind: ClauseKind,
    pub span: Range<usize>,
    pub text: String,
    /// Who has the other rule, as written (法律、行政法规; 《…》; 国务院): for
    /// [`ClauseKind::Defers`], the words before 另有规定; for prevailing clauses, what
    /// the provision prevails over when stated (其他规定), else empty.
    pub subject: String,
}

const DEFER_TAILS: &[&str] = &[
    "另有规定的，依照其规定",
    "另有规定的，从其规定",
    "另有规定的，适用其规定",
    "另有规定的，依照该规定",
    "另有规定的，按照其规定",
    "另有规定的除外",
    "另有规定的",
    "另有规定外",
];
/// 以本法为准 (or any other self-name): the length of the tail at `at`.
fn prevail_tail(text: &[char], at: usize) -> Option<usize> {
    if !starts_with(text, at, "以") {
        return None;
    }
    let (_, n) = starts_with_any(text, at + 1, crate::scan::SELF_NAMES)?;
    starts_with(text, at + 1 + n, "为准").then_some(n + 3)
}

pub fn clauses(text: &str) -> Vec<Clause> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if let Some((_, len)) = starts_with_any(&chars, i, DEFER_TAILS) {
            let mut s = i;
            while s > 0 && !is_clause_break(chars[s - 1]) && i - s < 30 {
                s -= 1;
            }
            // 除法律另有规定外 / 但法律另有规定的除外: the subject follows 除 / 但.
            let mut subject_start = s;
            for lead in ["除", "但是", "但", "如", "凡"] {
                if starts_with(&chars, subject_start, lead) {
                    subject_start += lead.chars().count();
                    break;
                }
            }
            let end = i + len;
            let subject = collect(&chars, subject_start..i);
            // 除本法另有规定外: the statute's own special rules; no other rule prevails.
            if subject.starts_with('本') {
                i = end;
                continue;
            }
            out.push(Clause {
                kind: ClauseKind::Defers,
                span: s..end,
                text: collect(&chars, s..end),
                subject,
            });
            i = end;
            continue;
        }
        if let Some(len) = prevail_tail(&chars, i) {
            let mut s = i;
            // Take in the condition (与本法不一致的，) when it is the clause just before.
            let mut breaks = 0;
            while s > 0 && i - s < 40 {
                if is_clause_break(chars[s - 1]) {
                    breaks += 1;
                    if breaks == 2 || chars[s - 1] != '，' {
                        break;
                    }
                }
                s -= 1;
            }
            while s < i && is_clause_break(chars[s]) {
                s += 1;
            }
            let text = collect(&chars, s..i + len);
            let subject = text
                .split_once("不一致")
                .map(|(before, _)| {
                    let cut = before.rfind("与本").or_else(|| before.rfind("同本"));
                    before[..cut.unwrap_or(before.len())].to_owned()
                })
                .unwrap_or_default();
            out.push(Clause {
                kind: ClauseKind::Prevails,
                span: s..i + len,
                text,
                subject,
            });
            i += len;
            continue;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deferring_clauses_name_their_subject() {
        let c = clauses("劳动合同期满的，劳动合同终止；但是，法律另有规定的除外。");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].kind, ClauseKind::Defers);
        assert_eq!(c[0].subject, "法律");
        let c = clauses("其他法律对此另有规定的，依照其规定。");
        assert_eq!(c[0].subject, "其他法律对此");
        assert_eq!(c[0].text, "其他法律对此另有规定的，依照其规定");
        let c = clauses("除法律、行政法规另有规定外，应当公开。");
        assert_eq!(c[0].subject, "法律、行政法规");
        assert!(clauses("保险公司，除本法另有规定外，适用公司法的规定。").is_empty());
    }

    #[test]
    fn prevailing_clauses() {
        let c = clauses("本法施行前的规定与本法不一致的，以本法为准。");
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].kind, ClauseKind::Prevails);
        assert_eq!(c[0].text, "本法施行前的规定与本法不一致的，以本法为准");
        assert_eq!(c[0].subject, "本法施行前的规定");
        assert!(clauses("用人单位应当支付工资。").is_empty());
        // Every self-name of refs' one table, not only 本法 and 本条例.
        let c = clauses("以前发布的规定与本细则不一致的，以本细则为准。");
        assert_eq!(c.len(), 1, "{c:?}");
        assert_eq!(c[0].kind, ClauseKind::Prevails);
        assert!(c[0].text.ends_with("以本细则为准"));
        assert!(clauses("以本法规定的程序为准备").is_empty());
    }
}
