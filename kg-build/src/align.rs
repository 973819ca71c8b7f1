//! Article alignment between two versions of a law: which articles are unchanged,
//! modified (same number, changed text), renumbered (same or similar text under another
//! number), added or removed. Texts are compared without their labels (a renumbered
//! article's label changes with its number).

use std::collections::HashMap;

use coal_corpus::{Article, Bigrams, bigram_dice};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    Unchanged,
    Modified,
    Renumbered,
    Added,
    Removed,
}

impl ChangeKind {
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Unchanged => "unchanged",
            ChangeKind::Modified => "modified",
            ChangeKind::Renumbered => "renumbered",
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
        }
    }
}

/// One aligned pair (or a lone article): indexes into the old and new versions' articles.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Change {
    pub kind: ChangeKind,
    pub old: Option<usize>,
    pub new: Option<usize>,
    /// Character-bigram Dice similarity of the two bodies (1 when identical).
    pub similarity: f64,
}

/// Pairs under different numbers at least this similar are "renumbered".
const RENUMBERED_MIN: f64 = 0.6;

/// Dice coefficient over character bigrams (multisets).
pub fn similarity(a: &str, b: &str) -> f64 {
    bigram_dice(a, b)
}

/// Aligns `old` to `new`. Every article appears in exactly one change.
pub fn align(old: &[Article], new: &[Article]) -> Vec<Change> {
    let old_body: Vec<String> = old.iter().map(|a| a.body()).collect();
    let new_body: Vec<String> = new.iter().map(|a| a.body()).collect();
    let old_grams: Vec<_> = old_body.iter().map(|b| Bigrams::of(b)).collect();
    let new_grams: Vec<_> = new_body.iter().map(|b| Bigrams::of(b)).collect();
    let sim = |i: usize, j: usize| {
        if old_body[i] == new_body[j] {
            1.0
        } else {
            old_grams[i].dice(&new_grams[j])
        }
    };
    let mut old_used = vec![false; old.len()];
    let mut new_used = vec![false; new.len()];
    let mut out = Vec::new();
    // 1. Identical text: unchanged under the same number, else renumbered. Same number
    //    first, so a repeated text pairs with its own number.
    let mut by_text: HashMap<&str, Vec<usize>> = HashMap::new();
    for (j, b) in new_body.iter().enumerate() {
        by_text.entry(b.as_str()).or_default().push(j);
    }
    for same_number_only in [true, false] {
        for (i, b) in old_body.iter().enumerate() {
            if old_used[i] {
                continue;
            }
            let Some(cands) = by_text.get(b.as_str()) else {
                continue;
            };
            let hit = cands
                .iter()
                .copied()
                .find(|&j| !new_used[j] && (!same_number_only || new[j].number == old[i].number));
            if let Some(j) = hit {
                old_used[i] = true;
                new_used[j] = true;
                let kind = if new[j].number == old[i].number {
                    ChangeKind::Unchanged
                } else {
                    ChangeKind::Renumbered
                };
                out.push(Change {
                    kind,
                    old: Some(i),
                    new: Some(j),
                    similarity: 1.0,
                });
            }
        }
    }
    // 2. Similar text under another number (moved), best pairs first — unless the same
    //    number's text is at least as similar.
    let new_by_number: HashMap<_, usize> =
        new.iter().enumerate().map(|(j, a)| (a.number, j)).collect();
    let mut pairs = Vec::new();
    for i in (0..old.len()).filter(|&i| !old_used[i]) {
        let same = new_by_number
            .get(&old[i].number)
            .filter(|&&j| !new_used[j])
            .map(|&j| sim(i, j))
            .unwrap_or(0.0);
        for j in (0..new.len()).filter(|&j| !new_used[j] && new[j].number != old[i].number) {
            let s = sim(i, j);
            if s >= RENUMBERED_MIN && s > same {
                pairs.push((s, i, j));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    for (s, i, j) in pairs {
        if old_used[i] || new_used[j] {
            continue;
        }
        old_used[i] = true;
        new_used[j] = true;
        out.push(Change {
            kind: ChangeKind::Renumbered,
            old: Some(i),
            new: Some(j),
            similarity: s,
        });
    }
    // 3. The same number continues with changed text.
    for i in 0..old.len() {
        if old_used[i] {
            continue;
        }
        if let Some(&j) = new_by_number.get(&old[i].number)
            && !new_used[j]
        {
            // Even a wholly rewritten text continues its number.
            old_used[i] = true;
            new_used[j] = true;
            out.push(Change {
                kind: ChangeKind::Modified,
                old: Some(i),
                new: Some(j),
                similarity: sim(i, j),
            });
        }
    }
    // 4. What is left was removed or added.
    for i in (0..old.len()).filter(|&i| !old_used[i]) {
        out.push(Change {
            kind: ChangeKind::Removed,
            old: Some(i),
            new: None,
            similarity: 0.0,
        });
    }
    for j in (0..new.len()).filter(|&j| !new_used[j]) {
        out.push(Change {
            kind: ChangeKind::Added,
            old: None,
            new: Some(j),
            similarity: 0.0,
        });
    }
    out.sort_by_key(|c| (c.new.unwrap_or(usize::MAX), c.old.unwrap_or(usize::MAX)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn articles(texts: &[(u32, &str)]) -> Vec<Article> {
        let md: String = texts
            .iter()
            .map(|(n, t)| format!("第{}条 {t}\n\n", coal_corpus::to_chinese_numeral(*n)))
            .collect();
        let file = format!("# 示范法\n\n<!-- INFO END -->\n\n{md}");
        coal_corpus::parse_file("示范法(2020-01-01).md", file.as_bytes())
            .version
            .unwrap()
            .articles
    }

    fn kinds(c: &[Change]) -> Vec<(ChangeKind, Option<usize>, Option<usize>)> {
        c.iter().map(|c| (c.kind, c.old, c.new)).collect()
    }

    #[test]
    fn every_kind_of_change() {
        let old = articles(&[
            (1, "为了保护劳动者的合法权益，制定本法。"),
            (
                2,
                "用人单位应当依法建立和完善劳动规章制度，保障劳动者享有劳动权利。",
            ),
            (3, "本法自公布之日起施行。"),
            (4, "国家鼓励企业建立集体协商制度。"),
        ]);
        let new = articles(&[
            (1, "为了保护劳动者的合法权益，构建和谐劳动关系，制定本法。"),
            (2, "劳动合同应当以书面形式订立。"),
            (
                3,
                "用人单位应当依法建立和完善劳动规章制度，保障劳动者享有劳动权利和履行劳动义务。",
            ),
            (4, "国家鼓励企业建立集体协商制度。"),
            (5, "本法自公布之日起施行。"),
        ]);
        use ChangeKind::*;
        assert_eq!(
            kinds(&align(&old, &new)),
            vec![
                (Modified, Some(0), Some(0)),
                (Added, None, Some(1)),
                (Renumbered, Some(1), Some(2)),
                (Unchanged, Some(3), Some(3)),
                (Renumbered, Some(2), Some(4)),
            ]
        );
    }

    #[test]
    fn identical_versions_are_all_unchanged_and_similarity_is_dice() {
        let a = articles(&[(1, "甲乙丙"), (2, "丁戊己")]);
        assert!(
            align(&a, &a)
                .iter()
                .all(|c| c.kind == ChangeKind::Unchanged)
        );
        // 甲乙丙 vs 甲乙丁: bigrams {甲乙, 乙丙} and {甲乙, 乙丁}: 2·1 / 4.
        assert_eq!(similarity("甲乙丙", "甲乙丁"), 0.5);
        let removed = align(&a, &articles(&[(1, "甲乙丙")]));
        assert_eq!(removed[1].kind, ChangeKind::Removed);
    }
}
