//! `coal calibrate`: grid search over γ, the three thresholds and the QSI midpoint that
//! maximizes routed article F1 on a dev set (METHOD.md §7).
//!
//! Each question is asked once per forced tier; what routing needs (C_intrinsic, the BM25
//! top score, the two overlaps) comes from those runs, so the search itself is arithmetic
//! over the observations: no question is asked again per grid point.

use std::collections::HashSet;

use serde::Serialize;

use crate::QueryError;
use crate::answer_metrics::article_prf;
use crate::complexity::consistency::from_overlap;
use crate::engine::{AnswerKind, AskOptions, Engine};
use crate::eval::EvalItem;
use crate::method::MethodConfig;

/// What one question contributes to the search.
#[derive(Debug, Clone, Serialize)]
pub struct Observation {
    pub c_intrinsic: f64,
    pub s1: f64,
    pub jaccard: f64,
    pub top3: f64,
    /// Article F1 of the context of each forced tier.
    pub f1_by_tier: [f64; 4],
    /// F1 when the question is answered by graph lookup (no routing happens then).
    pub lookup_f1: Option<f64>,
}

fn f1(
    engine: &Engine,
    q: &str,
    golds: &[HashSet<String>],
    opts: &AskOptions,
) -> Result<(f64, crate::engine::Answer), QueryError> {
    let a = engine.ask(q, opts)?;
    let cited: Vec<String> = a.citations.iter().map(|c| c.iri.clone()).collect();
    let f = article_prf(&cited, golds).map(|x| x.2).unwrap_or(0.0);
    Ok((f, a))
}

/// Observes every item that has gold articles.
pub fn observe(
    engine: &Engine,
    items: &[EvalItem],
    gold: &[Vec<HashSet<String>>],
) -> Result<Vec<Observation>, QueryError> {
    let mut out = Vec::new();
    for (item, golds) in items.iter().zip(gold) {
        if golds.is_empty() {
            continue;
        }
        let (routed_f1, routed) = f1(engine, &item.question, golds, &AskOptions::default())?;
        let lookup_f1 = matches!(
            routed.kind,
            AnswerKind::ArticleText | AnswerKind::NoSuchArticle | AnswerKind::LawNotInStore
        )
        .then_some(routed_f1);
        let mut f1_by_tier = [0.0; 4];
        let mut signals = None;
        for t in 1..=4u8 {
            let opts = AskOptions {
                force_tier: Some(t),
                ..AskOptions::default()
            };
            let (f, a) = f1(engine, &item.question, golds, &opts)?;
            f1_by_tier[t as usize - 1] = f;
            if let Some(cx) = a.trace.complexity {
                signals = Some((
                    cx.intrinsic.c_intrinsic,
                    cx.consistency.s1,
                    cx.consistency.jaccard,
                    cx.consistency.top3,
                ));
            }
        }
        let (c_intrinsic, s1, jaccard, top3) = signals.unwrap_or_default();
        out.push(Observation {
            c_intrinsic,
            s1,
            jaccard,
            top3,
            f1_by_tier,
            lookup_f1,
        });
    }
    Ok(out)
}

/// Mean routed F1 of `cfg` over the observations.
pub fn routed_f1(obs: &[Observation], cfg: &MethodConfig) -> f64 {
    let total: f64 = obs
        .iter()
        .map(|o| match o.lookup_f1 {
            Some(f) => f,
            None => {
                let c = from_overlap(o.s1, o.jaccard, o.top3, cfg).c_consistency;
                let c_final = cfg.gamma * o.c_intrinsic + (1.0 - cfg.gamma) * c;
                o.f1_by_tier[cfg.tier(c_final) as usize - 1]
            }
        })
        .sum();
    total / obs.len().max(1) as f64
}

/// Mean F1 with every question in one tier (lookups still answered by lookup).
pub fn forced_f1(obs: &[Observation], tier: u8) -> f64 {
    let total: f64 = obs
        .iter()
        .map(|o| o.lookup_f1.unwrap_or(o.f1_by_tier[tier as usize - 1]))
        .sum();
    total / obs.len().max(1) as f64
}

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub questions: usize,
    pub default_f1: f64,
    pub forced_f1: [f64; 4],
    pub best_f1: f64,
    pub best: MethodConfig,
    pub grid_points: usize,
}

fn steps(from: f64, to: f64, step: f64) -> Vec<f64> {
    let n = ((to - from) / step).round() as usize;
    // Rounded to the step's precision, so a written config reads 0.6, not 0.6000000000000001.
    (0..=n)
        .map(|i| ((from + i as f64 * step) * 1e6).round() / 1e6)
        .collect()
}

/// Grid search over γ ∈ [0, 1] by 0.1, θ_low ∈ [0.1, 0.4], θ_medium ∈ [0.25, 0.6],
/// θ_high ∈ [0.45, 0.9] by 0.05 (kept ordered), and the QSI midpoint at the deciles of
/// the observed BM25 top scores. Ties keep the earlier (smaller) values.
pub fn calibrate(obs: &[Observation], base: &MethodConfig) -> Calibration {
    let mut s1: Vec<f64> = obs.iter().map(|o| o.s1).collect();
    s1.sort_by(f64::total_cmp);
    let mut midpoints: Vec<f64> = (1..10)
        .filter_map(|d| s1.get(s1.len() * d / 10).copied())
        .map(|x| (x * 10.0).round() / 10.0)
        .collect();
    midpoints.push(base.qsi_midpoint);
    midpoints.sort_by(f64::total_cmp);
    midpoints.dedup();
    let mut best = base.clone();
    let mut best_f1 = routed_f1(obs, base);
    let default_f1 = best_f1;
    let mut points = 0;
    for &mid in &midpoints {
        let mut cfg = base.clone();
        cfg.qsi_midpoint = mid;
        // C_consistency per question for this midpoint, once.
        let cc: Vec<f64> = obs
            .iter()
            .map(|o| from_overlap(o.s1, o.jaccard, o.top3, &cfg).c_consistency)
            .collect();
        for gamma in steps(0.0, 1.0, 0.1) {
            let c_final: Vec<f64> = obs
                .iter()
                .zip(&cc)
                .map(|(o, c)| gamma * o.c_intrinsic + (1.0 - gamma) * c)
                .collect();
            for low in steps(0.10, 0.40, 0.05) {
                for medium in steps(0.25, 0.60, 0.05).into_iter().filter(|m| *m >= low) {
                    for high in steps(0.45, 0.90, 0.05).into_iter().filter(|h| *h >= medium) {
                        points += 1;
                        let point = MethodConfig {
                            gamma,
                            theta_low: low,
                            theta_medium: medium,
                            theta_high: high,
                            ..cfg.clone()
                        };
                        let total: f64 = obs
                            .iter()
                            .zip(&c_final)
                            .map(|(o, &c)| {
                                o.lookup_f1
                                    .unwrap_or(o.f1_by_tier[point.tier(c) as usize - 1])
                            })
                            .sum();
                        let f = total / obs.len().max(1) as f64;
                        if f > best_f1 + 1e-12 {
                            best_f1 = f;
                            best = point;
                        }
                    }
                }
            }
        }
    }
    Calibration {
        questions: obs.len(),
        default_f1,
        forced_f1: [1, 2, 3, 4].map(|t| forced_f1(obs, t)),
        best_f1,
        best,
        grid_points: points,
    }
}

/// Routing on held-out questions: what `cfg` does there against every forced tier.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    pub questions: usize,
    pub routed_f1: f64,
    pub forced_f1: [f64; 4],
    /// Questions per tier (lookups counted apart).
    pub tiers: [usize; 4],
    pub lookups: usize,
}

/// How `cfg` routes `obs`.
pub fn held_out(obs: &[Observation], cfg: &MethodConfig) -> HeldOut {
    let mut tiers = [0usize; 4];
    let mut lookups = 0;
    for o in obs {
        if o.lookup_f1.is_some() {
            lookups += 1;
            continue;
        }
        let c = from_overlap(o.s1, o.jaccard, o.top3, cfg).c_consistency;
        let c_final = cfg.gamma * o.c_intrinsic + (1.0 - cfg.gamma) * c;
        tiers[cfg.tier(c_final) as usize - 1] += 1;
    }
    HeldOut {
        questions: obs.len(),
        routed_f1: routed_f1(obs, cfg),
        forced_f1: [1, 2, 3, 4].map(|t| forced_f1(obs, t)),
        tiers,
        lookups,
    }
}

/// One fold of a two-fold cross-validation: constants fitted on one half of every set
/// (even or odd items), routing reported on the other half, set by set.
#[derive(Debug, Clone, Serialize)]
pub struct Fold {
    /// Which half the constants were fitted on: `even` or `odd`.
    pub fitted_on: &'static str,
    pub fitted: Calibration,
    /// (set, what the fitted constants do on its other half)
    pub held_out: Vec<(String, HeldOut)>,
}

/// Two-fold cross-validation over named sets of observations (index order kept).
pub fn two_folds(sets: &[(String, Vec<Observation>)], base: &MethodConfig) -> Vec<Fold> {
    [("even", 0usize), ("odd", 1usize)]
        .into_iter()
        .map(|(name, parity)| {
            let half = |keep: usize| -> Vec<(String, Vec<Observation>)> {
                sets.iter()
                    .map(|(s, obs)| {
                        let part = obs
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| i % 2 == keep)
                            .map(|(_, o)| o.clone())
                            .collect();
                        (s.clone(), part)
                    })
                    .collect()
            };
            let train: Vec<Observation> = half(parity).into_iter().flat_map(|x| x.1).collect();
            let fitted = calibrate(&train, base);
            let held_out = half(1 - parity)
                .into_iter()
                .map(|(s, obs)| {
                    let h = held_out(&obs, &fitted.best);
                    (s, h)
                })
                .collect();
            Fold {
                fitted_on: name,
                fitted,
                held_out,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obs(c_intrinsic: f64, s1: f64, f1_by_tier: [f64; 4]) -> Observation {
        Observation {
            c_intrinsic,
            s1,
            jaccard: 0.2,
            top3: 0.0,
            f1_by_tier,
            lookup_f1: None,
        }
    }

    #[test]
    fn finds_thresholds_that_send_each_question_to_its_best_tier() {
        // Simple questions do best in tier 1, complex ones in tier 3.
        let mut o = Vec::new();
        for i in 0..10 {
            o.push(obs(0.1 + i as f64 * 0.005, 60.0, [1.0, 0.5, 0.0, 0.0]));
            o.push(obs(0.6 + i as f64 * 0.005, 10.0, [0.0, 0.2, 1.0, 0.3]));
        }
        let base = MethodConfig::default();
        let c = calibrate(&o, &base);
        assert!(c.best_f1 > 0.99, "{c:?}");
        assert!(c.best_f1 >= c.default_f1);
        assert!(c.forced_f1.iter().all(|&f| f <= 0.5 + 1e-9), "{c:?}");
        assert!((routed_f1(&o, &c.best) - c.best_f1).abs() < 1e-12);
        assert!(c.grid_points > 1000);
        c.best.validate().unwrap();
        // Lookups keep their own F1 whatever the routing.
        let mut l = o[0].clone();
        l.lookup_f1 = Some(1.0);
        l.f1_by_tier = [0.0; 4];
        assert_eq!(forced_f1(&[l.clone()], 3), 1.0);
        assert_eq!(routed_f1(&[l], &base), 1.0);
    }

    #[test]
    fn two_folds_fit_on_one_half_and_report_on_the_other() {
        // Simple and complex questions two by two, so both halves hold both.
        let o: Vec<Observation> = (0..40)
            .map(|i| match (i / 2) % 2 {
                0 => obs(0.1 + i as f64 * 0.001, 60.0, [1.0, 0.5, 0.0, 0.0]),
                _ => obs(0.6 + i as f64 * 0.001, 10.0, [0.0, 0.2, 1.0, 0.3]),
            })
            .collect();
        let folds = two_folds(&[("s".into(), o)], &MethodConfig::default());
        assert_eq!(folds.len(), 2);
        for f in &folds {
            let (set, h) = &f.held_out[0];
            assert_eq!(set, "s");
            assert_eq!(h.questions, 20);
            // The held-out half routes like the fitted one: simple to 1, complex to 3.
            assert!(h.routed_f1 > 0.99, "{f:?}");
            assert_eq!(h.tiers[0] + h.tiers[2], 20, "{h:?}");
            assert!(h.tiers[0] >= 5 && h.tiers[2] >= 5, "{h:?}");
            assert!(h.forced_f1.iter().all(|&x| x <= 0.5 + 1e-9));
        }
    }
}
