//! Answer-level metrics as the method's authors computed them: article precision, recall
//! and F1 of the cited articles; ROUGE-1/2/L as character-level F1; BLEU-4 over jieba
//! tokens with smoothing method 1 (NLTK's: ε = 0.1 for an n-gram order with no match).

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

/// Precision, recall and F1 of cited articles against gold articles (one set of
/// acceptable IRIs per gold article). `None` when the item has no gold article.
pub fn article_prf(cited: &[String], golds: &[HashSet<String>]) -> Option<(f64, f64, f64)> {
    if golds.is_empty() {
        return None;
    }
    let hit = |iri: &String| golds.iter().any(|g| g.contains(iri));
    let correct = cited.iter().filter(|c| hit(c)).count() as f64;
    let found = golds
        .iter()
        .filter(|g| cited.iter().any(|c| g.contains(c)))
        .count() as f64;
    let p = if cited.is_empty() {
        0.0
    } else {
        correct / cited.len() as f64
    };
    let r = found / golds.len() as f64;
    Some((p, r, f1_of(p, r)))
}

/// The harmonic mean of precision and recall (0 when both are 0).
pub fn f1_of(p: f64, r: f64) -> f64 {
    if p + r > 0.0 {
        2.0 * p * r / (p + r)
    } else {
        0.0
    }
}

fn is_punctuation(c: char) -> bool {
    c.is_ascii_punctuation() || "，。、；：？！“”‘’（）《》〈〉【】「」『』…—·～".contains(c)
}

/// The characters ROUGE counts: no whitespace, no punctuation.
fn chars(s: &str) -> Vec<char> {
    s.chars()
        .filter(|&c| !c.is_whitespace() && !is_punctuation(c))
        .collect()
}

fn ngrams<T: Clone + Eq + std::hash::Hash>(v: &[T], n: usize) -> HashMap<Vec<T>, usize> {
    let mut m = HashMap::new();
    if v.len() >= n {
        for w in v.windows(n) {
            *m.entry(w.to_vec()).or_insert(0) += 1;
        }
    }
    m
}

fn f1(overlap: f64, cand: f64, reference: f64) -> f64 {
    if overlap == 0.0 || cand == 0.0 || reference == 0.0 {
        return 0.0;
    }
    f1_of(overlap / cand, overlap / reference)
}

/// ROUGE-N F1 over characters.
pub fn rouge_n(candidate: &str, reference: &str, n: usize) -> f64 {
    let (c, r) = (chars(candidate), chars(reference));
    let (cn, rn) = (ngrams(&c, n), ngrams(&r, n));
    let overlap: usize = cn
        .iter()
        .map(|(g, &k)| k.min(rn.get(g).copied().unwrap_or(0)))
        .sum();
    f1(
        overlap as f64,
        c.len().saturating_sub(n - 1) as f64,
        r.len().saturating_sub(n - 1) as f64,
    )
}

/// ROUGE-L F1 over characters (longest common subsequence).
pub fn rouge_l(candidate: &str, reference: &str) -> f64 {
    let (c, r) = (chars(candidate), chars(reference));
    if c.is_empty() || r.is_empty() {
        return 0.0;
    }
    let mut prev = vec![0u32; r.len() + 1];
    let mut cur = vec![0u32; r.len() + 1];
    for x in &c {
        for (j, y) in r.iter().enumerate() {
            cur[j + 1] = if x == y {
                prev[j] + 1
            } else {
                cur[j].max(prev[j + 1])
            };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    f1(prev[r.len()] as f64, c.len() as f64, r.len() as f64)
}

fn jieba() -> &'static jieba_rs::Jieba {
    static J: OnceLock<jieba_rs::Jieba> = OnceLock::new();
    J.get_or_init(jieba_rs::Jieba::new)
}

/// Jieba words, without whitespace and punctuation tokens.
pub fn tokens(s: &str) -> Vec<String> {
    jieba()
        .cut(s, false)
        .into_iter()
        .map(|t| t.word.trim())
        .filter(|t| !t.is_empty() && t.chars().any(|c| c.is_alphanumeric()))
        .map(str::to_owned)
        .collect()
}

/// Sentence BLEU-4 over token lists, uniform weights, smoothing method 1, brevity penalty.
pub fn bleu4_tokens(candidate: &[String], reference: &[String]) -> f64 {
    if candidate.is_empty() || reference.is_empty() {
        return 0.0;
    }
    let mut log_sum = 0.0;
    for n in 1..=4 {
        let (cn, rn) = (ngrams(candidate, n), ngrams(reference, n));
        let total: usize = cn.values().sum();
        if total == 0 {
            return 0.0;
        }
        let matched: usize = cn
            .iter()
            .map(|(g, &k)| k.min(rn.get(g).copied().unwrap_or(0)))
            .sum();
        let p = if matched == 0 {
            0.1 / total as f64
        } else {
            matched as f64 / total as f64
        };
        log_sum += 0.25 * p.ln();
    }
    let (c, r) = (candidate.len() as f64, reference.len() as f64);
    let bp = if c > r { 1.0 } else { (1.0 - r / c).exp() };
    bp * log_sum.exp()
}

pub fn bleu4(candidate: &str, reference: &str) -> f64 {
    bleu4_tokens(&tokens(candidate), &tokens(reference))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(v: &[&str]) -> HashSet<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn article_scores() {
        let cited = vec![
            "a".to_owned(),
            "b".to_owned(),
            "x".to_owned(),
            "y".to_owned(),
        ];
        let golds = vec![set(&["a", "a2"]), set(&["c"])];
        let (p, r, f) = article_prf(&cited, &golds).unwrap();
        assert_eq!((p, r), (0.25, 0.5));
        assert!((f - 2.0 * 0.25 * 0.5 / 0.75).abs() < 1e-12);
        assert!(article_prf(&cited, &[]).is_none());
        assert_eq!(article_prf(&[], &golds).unwrap(), (0.0, 0.0, 0.0));
    }

    #[test]
    fn rouge_by_hand() {
        // "劳动合同" vs "劳动关系": unigrams 劳,动 shared of 4 each → F1 0.5; bigram 劳动 of 3.
        assert!((rouge_n("劳动合同", "劳动关系", 1) - 0.5).abs() < 1e-12);
        assert!((rouge_n("劳动合同", "劳动关系", 2) - 1.0 / 3.0).abs() < 1e-12);
        // LCS of 用人单位解除 and 单位依法解除 is 单位解除 (4): P 4/6, R 4/6.
        assert!((rouge_l("用人单位解除", "单位依法解除") - 4.0 / 6.0).abs() < 1e-12);
        assert_eq!(rouge_l("", "x"), 0.0);
        assert_eq!(rouge_n("同一句话。", "同一句话", 1), 1.0);
    }

    #[test]
    fn bleu_matches_nltk_on_a_known_pair() {
        let t = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        // What nltk's sentence_bleu([ref], cand, smoothing_function=method1) computes,
        // written out by hand.
        let reference = t("the cat sat on the mat with a hat and a bat too");
        let candidate = t("the cat sat on the mat with a hat and a rat");
        // 12 candidate tokens against 13 (brevity penalty exp(1 − 13/12)); "rat" matches
        // nothing: p1 = 11/12, p2 = 10/11, p3 = 9/10, p4 = 8/9.
        let expected = (1.0f64 - 13.0 / 12.0).exp()
            * (0.25
                * ((11.0f64 / 12.0).ln()
                    + (10.0f64 / 11.0).ln()
                    + (9.0f64 / 10.0).ln()
                    + (8.0f64 / 9.0).ln()))
            .exp();
        assert!((bleu4_tokens(&candidate, &reference) - expected).abs() < 1e-12);
        // No 4-gram in common: smoothing gives ε/total instead of zero.
        let b = bleu4_tokens(&t("a b c d"), &t("a b c e"));
        // p1 = 3/4, p2 = 2/3, p3 = 1/2, p4 = 0.1/1; equal lengths, no brevity penalty.
        let want = (0.25
            * ((3.0f64 / 4.0).ln() + (2.0f64 / 3.0).ln() + (0.5f64).ln() + (0.1f64).ln()))
        .exp();
        assert!((b - want).abs() < 1e-12, "{b} vs {want}");
        assert!(!tokens("用人单位应当支付经济补偿。").is_empty());
    }
}
