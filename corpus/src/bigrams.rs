//! Character bigrams of a text as a multiset, and the Dice coefficient of two of them:
//! the one measure of textual similarity shared by version alignment (renumbered and
//! modified articles), entity fusion (similar labels and definitions) and the answer's
//! excerpts (lines that share words with the question).

use std::collections::HashMap;

/// The character bigrams of a text, with their counts. Whitespace is skipped; a text of
/// one character has the single bigram `(c, '\0')`, so it can still match itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Bigrams {
    counts: HashMap<(char, char), u32>,
    total: u32,
}

impl Bigrams {
    pub fn of(text: &str) -> Bigrams {
        let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
        let mut b = Bigrams::default();
        let mut add = |g: (char, char)| {
            *b.counts.entry(g).or_default() += 1;
            b.total += 1;
        };
        match chars.len() {
            0 => {}
            1 => add((chars[0], '\0')),
            _ => chars.windows(2).for_each(|w| add((w[0], w[1]))),
        }
        b
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Each distinct bigram once.
    pub fn distinct(&self) -> impl Iterator<Item = (char, char)> + '_ {
        self.counts.keys().copied()
    }

    /// How many distinct bigrams the two share.
    pub fn shared(&self, other: &Bigrams) -> usize {
        self.counts
            .keys()
            .filter(|g| other.counts.contains_key(g))
            .count()
    }

    /// Dice coefficient of the two multisets: 2·|common| / (|a| + |b|); 0 when both are
    /// empty.
    pub fn dice(&self, other: &Bigrams) -> f64 {
        if self.total + other.total == 0 {
            return 0.0;
        }
        let common: u32 = self
            .counts
            .iter()
            .map(|(g, &k)| k.min(other.counts.get(g).copied().unwrap_or(0)))
            .sum();
        2.0 * common as f64 / (self.total + other.total) as f64
    }
}

/// Dice coefficient of two texts' character bigrams; 1 for equal texts.
pub fn bigram_dice(a: &str, b: &str) -> f64 {
    if a == b {
        return 1.0;
    }
    Bigrams::of(a).dice(&Bigrams::of(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dice_by_hand() {
        assert_eq!(bigram_dice("未成年人", "未成年人"), 1.0);
        // 未成 成年 年人 vs 未成 成年: 2·2 / 5.
        assert!((bigram_dice("未成年人", "未成年") - 0.8).abs() < 1e-12);
        assert!((bigram_dice("用人单位", "用工单位") - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(bigram_dice("甲乙丙", "甲乙丁"), 0.5);
        // Repeated bigrams count as often as they occur in both.
        assert!((bigram_dice("哈哈哈", "哈哈") - 2.0 * 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(bigram_dice("甲", "乙"), 0.0);
        assert_eq!(bigram_dice("", "甲"), 0.0);
        assert_eq!(bigram_dice("甲 乙", "甲乙"), 1.0, "whitespace is skipped");
        let one = Bigrams::of("甲");
        assert_eq!(one.distinct().collect::<Vec<_>>(), [('甲', '\0')]);
        assert!(Bigrams::of(" ").is_empty());
        assert_eq!(
            Bigrams::of("委托开发合同").shared(&Bigrams::of("开发合同的委托")),
            4
        );
    }
}
