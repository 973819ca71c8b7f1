//! Retrieval consistency (METHOD.md §4, Eq. 5–8): how sure BM25 is (QSI) and how much
//! BM25 and dense retrieval disagree (RDI), gated competitively.

use serde::Serialize;

use crate::method::MethodConfig;

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Consistency {
    /// BM25 score of the top hit.
    pub s1: f64,
    pub qsi: f64,
    pub jaccard: f64,
    pub top3: f64,
    pub rdi: f64,
    pub e_simple: f64,
    pub e_complex: f64,
    pub c_consistency: f64,
}

fn jaccard(a: &[&str], b: &[&str]) -> f64 {
    let sa: std::collections::HashSet<&str> = a.iter().copied().collect();
    let sb: std::collections::HashSet<&str> = b.iter().copied().collect();
    let union = sa.union(&sb).count();
    if union == 0 {
        0.0
    } else {
        sa.intersection(&sb).count() as f64 / union as f64
    }
}

/// Eq. 5–8 from the top-k lists (IRIs in rank order) and the BM25 top score.
pub fn consistency(
    s1: f64,
    bm25_top: &[&str],
    dense_top: &[&str],
    cfg: &MethodConfig,
) -> Consistency {
    let j = jaccard(bm25_top, dense_top);
    let t3: std::collections::HashSet<&str> = bm25_top.iter().take(3).copied().collect();
    let top3 = dense_top.iter().take(3).filter(|d| t3.contains(*d)).count() as f64 / 3.0;
    from_overlap(s1, j, top3, cfg)
}

/// Eq. 5–8 from the BM25 top score and the two overlap figures.
pub fn from_overlap(s1: f64, jaccard: f64, top3: f64, cfg: &MethodConfig) -> Consistency {
    let qsi = 1.0 / (1.0 + (-cfg.qsi_slope * (s1 - cfg.qsi_midpoint)).exp());
    let rdi = 1.0 - (0.7 * jaccard + 0.3 * top3);
    let e_simple = qsi.powf(cfg.p) * (1.0 - rdi).powf(cfg.q) + cfg.eps;
    let e_complex = (1.0 - qsi).powf(cfg.p) * rdi.powf(cfg.q) + cfg.eps;
    Consistency {
        s1,
        qsi,
        jaccard,
        top3,
        rdi,
        e_simple,
        e_complex,
        c_consistency: e_complex / (e_complex + e_simple),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_worked_example() {
        // s1 = 11.0, Jaccard 0.1, Top3 0: 2 shared of 20 distinct, none in both top 3.
        let bm25: Vec<String> = (0..10).map(|i| format!("b{i}")).collect();
        let mut dense: Vec<String> = (0..10).map(|i| format!("d{i}")).collect();
        dense[5] = "b7".into();
        dense[6] = "b8".into();
        let b: Vec<&str> = bm25.iter().map(String::as_str).collect();
        let d: Vec<&str> = dense.iter().map(String::as_str).collect();
        let c = consistency(11.0, &b, &d, &MethodConfig::paper());
        assert!((c.jaccard - 2.0 / 18.0).abs() < 1e-12);
        // The paper rounds Jaccard to 0.1; so do we, to check its figures.
        let c = from_overlap(11.0, 0.1, 0.0, &MethodConfig::paper());
        assert!((c.qsi - 0.321).abs() < 5e-4, "{}", c.qsi);
        assert!((c.rdi - 0.93).abs() < 1e-9);
        assert!(
            (c.c_consistency - 0.871).abs() < 1e-3,
            "{}",
            c.c_consistency
        );
    }

    #[test]
    fn agreement_and_a_confident_bm25_mean_simple() {
        let l = ["a", "b", "c"];
        let c = consistency(40.0, &l, &l, &MethodConfig::paper());
        assert!(c.rdi.abs() < 1e-12);
        assert!(c.c_consistency < 0.01);
        let c = consistency(2.0, &["a", "b"], &["c", "d"], &MethodConfig::paper());
        assert!(c.c_consistency > 0.99);
    }
}
