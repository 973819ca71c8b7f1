//! `coal calibrate`: grid search over the routing constants (γ, the three thresholds and
//! the QSI midpoint) and each tier's context bounds (the score cliff σ and the least and
//! most articles per tier) that maximizes routed article F1 on a dev set (METHOD.md §5,
//! §7).
//!
//! Each question is asked once per forced tier; what routing needs (C_intrinsic, the BM25
//! top score, the two overlaps) and what the context needs (the tier's ranking before the
//! cliff, with scores, and which gold article each is) come from those runs, so the search
//! itself is arithmetic over the observations: no question is asked again per grid point.
//!
//! Why the context bounds are fitted too: the extractive answer cites its whole context,
//! so a tier's article F1 is as much how many articles it keeps as which ones it finds,
//! and questions differ in how many articles they need (1–9 gold articles on lecoqa).
//! With the bounds fitted per tier, the tiers differ in what they cost and return, and
//! routing has something to choose between.

use std::collections::HashSet;

use serde::Serialize;

use crate::QueryError;
use crate::answer_metrics::{article_prf, f1_of};
use crate::complexity::c_final;
use crate::complexity::consistency::from_overlap;
use crate::context::cliff_cut;
use crate::engine::{AnswerKind, AskOptions, Engine};
use crate::eval::EvalItem;
use crate::method::MethodConfig;

/// One article a forced tier could put in the context.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Candidate {
    /// Its score in the tier's ranking (infinite for an article the question names).
    pub score: f64,
    /// Bit `i` set: it is (a version of) gold article `i`.
    pub gold: u32,
    /// The question names it (the context puts it first whatever the cliff).
    pub named: bool,
}

/// What one forced tier returned for a question, before the score cliff.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TierRun {
    /// The articles the question names, in the order the context puts them first.
    pub named: Vec<Candidate>,
    /// The tier's own ranking (first [`crate::engine::TIER_RANKING_KEPT`]).
    pub ranked: Vec<Candidate>,
    /// How many of `ranked` the chat model's judgement kept (`[method] judge_from_tier`):
    /// the context's cut whatever the cliff's bounds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judged_keep: Option<usize>,
}

impl TierRun {
    /// How many articles the context keeps under `cfg`'s bounds for `tier`, and their
    /// article F1 against `golds` gold articles: the context stage's arithmetic
    /// (`engine/context_stage.rs`) without the store.
    pub fn context(&self, tier: u8, cfg: &MethodConfig, golds: usize) -> (usize, f64) {
        let t = tier as usize - 1;
        self.cut(
            cfg.cliff_sigma,
            cfg.context_min[t],
            cfg.context_max[t],
            golds,
        )
    }

    /// Recall@10 against `golds` gold articles: the named articles first, as the context
    /// puts them, then the ranking.
    pub fn recall_at_10(&self, golds: usize) -> f64 {
        let found = self
            .named
            .iter()
            .chain(self.ranked.iter().filter(|c| !c.named))
            .take(10)
            .fold(0u32, |found, c| found | c.gold);
        match golds {
            0 => 0.0,
            g => found.count_ones() as f64 / g as f64,
        }
    }

    fn cut(&self, sigma: f64, min: usize, max: usize, golds: usize) -> (usize, f64) {
        let scores: Vec<f64> = self.ranked.iter().map(|c| c.score).collect();
        let keep = match self.judged_keep {
            Some(k) => k.min(self.ranked.len()),
            None => cliff_cut(&scores, sigma, min, max),
        };
        let cited = self
            .named
            .iter()
            .chain(self.ranked[..keep].iter().filter(|c| !c.named));
        let (mut n, mut correct, mut found) = (0usize, 0usize, 0u32);
        for c in cited {
            n += 1;
            correct += (c.gold != 0) as usize;
            found |= c.gold;
        }
        if golds == 0 || n == 0 {
            return (n, 0.0);
        }
        let p = correct as f64 / n as f64;
        let r = found.count_ones() as f64 / golds as f64;
        (n, f1_of(p, r))
    }
}

/// What one question contributes to the search.
#[derive(Debug, Clone, Serialize)]
pub struct Observation {
    pub c_intrinsic: f64,
    pub s1: f64,
    pub jaccard: f64,
    pub top3: f64,
    /// Article F1 of the context of each forced tier, as observed (the constants the
    /// engine ran with).
    pub f1_by_tier: [f64; 4],
    /// F1 when the question is answered by graph lookup (no routing happens then).
    pub lookup_f1: Option<f64>,
    /// Gold articles of the question.
    pub golds: usize,
    /// Each forced tier's ranking before the cliff.
    pub runs: [TierRun; 4],
}

impl Observation {
    /// Article F1 of each tier's context under `cfg`'s context bounds.
    pub fn f1_under(&self, cfg: &MethodConfig) -> [f64; 4] {
        [1u8, 2, 3, 4].map(|t| self.runs[t as usize - 1].context(t, cfg, self.golds).1)
    }

    /// The tier `cfg` routes the question to (not asked for lookups).
    pub fn tier(&self, cfg: &MethodConfig) -> u8 {
        let c = from_overlap(self.s1, self.jaccard, self.top3, cfg).c_consistency;
        cfg.tier(c_final(cfg.gamma, self.c_intrinsic, c))
    }
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

/// A forced tier's answer as a [`TierRun`].
fn tier_run(a: &crate::engine::Answer, golds: &[HashSet<String>]) -> TierRun {
    let gold = |iri: &str| -> u32 {
        golds
            .iter()
            .take(32)
            .enumerate()
            .filter(|(_, g)| g.contains(iri))
            .fold(0, |bits, (i, _)| bits | 1 << i)
    };
    let named: Vec<&str> = a
        .context
        .iter()
        .take_while(|c| c.named_in_question())
        .map(|c| c.iri.as_str())
        .collect();
    TierRun {
        named: named
            .iter()
            .map(|iri| Candidate {
                score: f64::INFINITY,
                gold: gold(iri),
                named: true,
            })
            .collect(),
        ranked: a
            .trace
            .tier_ranking
            .iter()
            .map(|(iri, score)| Candidate {
                score: *score,
                gold: gold(iri),
                named: named.contains(&iri.as_str()),
            })
            .collect(),
        judged_keep: a.trace.judged_keep,
    }
}

/// Observes every item that has gold articles. Calibration measures what the tiers
/// retrieve: with a chat model the answers stay extractive and the rules decompose (the
/// routing signals are those of a run without it), so the model only drafts, for the
/// tiers `[method] draft_from_tier` names.
pub fn observe(
    engine: &Engine,
    items: &[EvalItem],
    gold: &[Vec<HashSet<String>>],
) -> Result<Vec<Observation>, QueryError> {
    let base = AskOptions {
        extractive: true,
        rule_decomposition: true,
        ..AskOptions::default()
    };
    let mut out = Vec::new();
    for (item, golds) in items.iter().zip(gold) {
        if golds.is_empty() {
            continue;
        }
        let (routed_f1, routed) = f1(engine, &item.question, golds, &base)?;
        let lookup_f1 = matches!(
            routed.kind,
            AnswerKind::ArticleText | AnswerKind::NoSuchArticle | AnswerKind::LawNotInStore
        )
        .then_some(routed_f1);
        let mut f1_by_tier = [0.0; 4];
        let mut runs: [TierRun; 4] = Default::default();
        let mut signals = None;
        for t in 1..=4u8 {
            let opts = AskOptions {
                force_tier: Some(t),
                ..base.clone()
            };
            let (f, a) = f1(engine, &item.question, golds, &opts)?;
            f1_by_tier[t as usize - 1] = f;
            runs[t as usize - 1] = tier_run(&a, golds);
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
            golds: golds.len(),
            runs,
        });
    }
    Ok(out)
}

/// Mean routed F1 of `cfg` over the observations (each tier's context cut by `cfg`'s
/// bounds).
pub fn routed_f1(obs: &[Observation], cfg: &MethodConfig) -> f64 {
    let total: f64 = obs
        .iter()
        .map(|o| match o.lookup_f1 {
            Some(f) => f,
            None => o.f1_under(cfg)[o.tier(cfg) as usize - 1],
        })
        .sum();
    total / obs.len().max(1) as f64
}

/// Mean F1 with every question in one tier (lookups still answered by lookup).
pub fn forced_f1(obs: &[Observation], tier: u8, cfg: &MethodConfig) -> f64 {
    let t = tier as usize - 1;
    let total: f64 = obs
        .iter()
        .map(|o| {
            o.lookup_f1
                .unwrap_or_else(|| o.runs[t].context(tier, cfg, o.golds).1)
        })
        .sum();
    total / obs.len().max(1) as f64
}

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub questions: usize,
    pub default_f1: f64,
    /// Every question in one tier, under the current constants.
    pub forced_f1: [f64; 4],
    /// Every question in one tier, under the context bounds fitted for that (each tier's
    /// on every question): what routing must beat.
    pub fitted_forced_f1: [f64; 4],
    /// Those bounds (the routing constants as given).
    pub forced_best: MethodConfig,
    pub best_f1: f64,
    pub best: MethodConfig,
    pub grid_points: usize,
    /// Questions whose observed F1 of some tier differs from the one recomputed from its
    /// ranking under the constants it was observed with (must be 0: the arithmetic is
    /// the context stage's).
    pub recomputed_mismatches: usize,
}

fn steps(from: f64, to: f64, step: f64) -> Vec<f64> {
    let n = ((to - from) / step).round() as usize;
    // Rounded to the step's precision, so a written config reads 0.6, not 0.6000000000000001.
    (0..=n)
        .map(|i| ((from + i as f64 * step) * 1e6).round() / 1e6)
        .collect()
}

/// The largest `context_max` tried (below [`crate::engine::TIER_RANKING_KEPT`], so the
/// observed rankings hold every article a fitted context can keep).
pub const CONTEXT_MAX_TRIED: usize = 10;

/// What [`fit_contexts`] may change.
#[derive(Debug, Clone, Copy)]
struct Refit {
    /// Search σ too (else keep it).
    sigma: bool,
    /// Refit only the tiers that this many questions are assigned to.
    min_questions: usize,
}

/// Tiers routed fewer questions than this keep the bounds fitted on every question: a
/// handful of questions fits noise (measured on the two folds of lecoqa + lawbench-3-8).
pub const MIN_QUESTIONS_TO_REFIT: usize = 50;

/// Fits the score cliff σ and every tier's least and most context articles: for each σ
/// of the grid, each tier's (min, max) that maximizes the F1 summed over the questions
/// `assigned` to that tier, for the tiers `refit` allows; the σ with the best total wins.
/// The current values compete too, and win ties.
fn fit_contexts(
    obs: &[Observation],
    cfg: &MethodConfig,
    assigned: &dyn Fn(&Observation) -> [bool; 4],
    refit: Refit,
    points: &mut usize,
) -> MethodConfig {
    let routable: Vec<(&Observation, [bool; 4])> = obs
        .iter()
        .filter(|o| o.lookup_f1.is_none())
        .map(|o| (o, assigned(o)))
        .collect();
    let assigned_to = |t: usize| routable.iter().filter(|(_, a)| a[t]).count();
    let refitted: Vec<bool> = (0..4)
        .map(|t| assigned_to(t) >= refit.min_questions)
        .collect();
    let tier_total = |t: usize, sigma: f64, min: usize, max: usize| -> f64 {
        routable
            .iter()
            .filter(|(_, a)| a[t])
            .map(|(o, _)| o.runs[t].cut(sigma, min, max, o.golds).1)
            .sum()
    };
    let total_of = |c: &MethodConfig| -> f64 {
        (0..4)
            .map(|t| tier_total(t, c.cliff_sigma, c.context_min[t], c.context_max[t]))
            .sum()
    };
    let mut best = cfg.clone();
    let mut best_total = total_of(cfg);
    let mut sigmas = match refit.sigma {
        true => steps(0.05, 0.5, 0.05),
        false => Vec::new(),
    };
    sigmas.push(cfg.cliff_sigma);
    for sigma in sigmas {
        let mut point = MethodConfig {
            cliff_sigma: sigma,
            ..cfg.clone()
        };
        for t in (0..4).filter(|&t| refitted[t]) {
            let mut tier_best = tier_total(t, sigma, cfg.context_min[t], cfg.context_max[t]);
            for min in 1..=3 {
                for max in min..=CONTEXT_MAX_TRIED {
                    *points += 1;
                    let f = tier_total(t, sigma, min, max);
                    if f > tier_best + 1e-12 {
                        tier_best = f;
                        point.context_min[t] = min;
                        point.context_max[t] = max;
                    }
                }
            }
        }
        let total = total_of(&point);
        if total > best_total + 1e-12 {
            best_total = total;
            best = point;
        }
    }
    best
}

/// Grid search over γ ∈ [0, 1] by 0.1, θ_low ∈ [0.1, 0.4], θ_medium ∈ [0.25, 0.6],
/// θ_high ∈ [0.45, 0.9] by 0.05 (kept ordered), and the QSI midpoint at the deciles of
/// the observed BM25 top scores, with `cfg`'s context bounds. Ties keep `cfg`, then the
/// earlier (smaller) values.
fn fit_routing(obs: &[Observation], cfg: &MethodConfig, points: &mut usize) -> MethodConfig {
    let mut s1: Vec<f64> = obs.iter().map(|o| o.s1).collect();
    s1.sort_by(f64::total_cmp);
    let mut midpoints: Vec<f64> = (1..10)
        .filter_map(|d| s1.get(s1.len() * d / 10).copied())
        .map(|x| (x * 10.0).round() / 10.0)
        .collect();
    midpoints.push(cfg.qsi_midpoint);
    midpoints.sort_by(f64::total_cmp);
    midpoints.dedup();
    // Each question's F1 per tier under these context bounds, once.
    let f1s: Vec<[f64; 4]> = obs.iter().map(|o| o.f1_under(cfg)).collect();
    let mut best = cfg.clone();
    let mut best_f1 = routed_f1(obs, cfg);
    for &mid in &midpoints {
        let mut at_mid = cfg.clone();
        at_mid.qsi_midpoint = mid;
        // C_consistency per question for this midpoint, once.
        let cc: Vec<f64> = obs
            .iter()
            .map(|o| from_overlap(o.s1, o.jaccard, o.top3, &at_mid).c_consistency)
            .collect();
        for gamma in steps(0.0, 1.0, 0.1) {
            let finals: Vec<f64> = obs
                .iter()
                .zip(&cc)
                .map(|(o, &c)| c_final(gamma, o.c_intrinsic, c))
                .collect();
            for low in steps(0.10, 0.40, 0.05) {
                for medium in steps(0.25, 0.60, 0.05).into_iter().filter(|m| *m >= low) {
                    for high in steps(0.45, 0.90, 0.05).into_iter().filter(|h| *h >= medium) {
                        *points += 1;
                        let point = MethodConfig {
                            gamma,
                            theta_low: low,
                            theta_medium: medium,
                            theta_high: high,
                            ..at_mid.clone()
                        };
                        let total: f64 = obs
                            .iter()
                            .zip(&finals)
                            .zip(&f1s)
                            .map(|((o, &c), f)| {
                                o.lookup_f1.unwrap_or(f[point.tier(c) as usize - 1])
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
    best
}

/// Fits the context bounds and the routing in turn: σ and each tier's bounds on every
/// question (as if all were forced there), the routing under them, the bounds of each
/// tier routed at least [`MIN_QUESTIONS_TO_REFIT`] questions again on those (σ kept), and
/// the routing once more. The result is never worse on `obs` than `base`. (Refitting σ
/// and every tier in the second round fitted noise: held-out F1 on lecoqa's halves .3502
/// and .3697 against .3564 and .3721 this way; `make calibrate-folds` at commit f44cac1
/// gives the former.)
pub fn calibrate(obs: &[Observation], base: &MethodConfig) -> Calibration {
    let mut points = 0;
    let everywhere = |_: &Observation| [true; 4];
    let all = Refit {
        sigma: true,
        min_questions: 0,
    };
    let mut cfg = fit_contexts(obs, base, &everywhere, all, &mut points);
    let forced_best = cfg.clone();
    let fitted_forced_f1 = [1, 2, 3, 4].map(|t| forced_f1(obs, t, &cfg));
    cfg = fit_routing(obs, &cfg, &mut points);
    let routed = cfg.clone();
    let own_tier = move |o: &Observation| {
        let t = o.tier(&routed) as usize - 1;
        [0, 1, 2, 3].map(|i| i == t)
    };
    let routed_only = Refit {
        sigma: false,
        min_questions: MIN_QUESTIONS_TO_REFIT,
    };
    cfg = fit_contexts(obs, &cfg, &own_tier, routed_only, &mut points);
    cfg = fit_routing(obs, &cfg, &mut points);
    let default_f1 = routed_f1(obs, base);
    let fitted_f1 = routed_f1(obs, &cfg);
    let (best, best_f1) = match fitted_f1 > default_f1 + 1e-12 {
        true => (cfg, fitted_f1),
        false => (base.clone(), default_f1),
    };
    Calibration {
        questions: obs.len(),
        default_f1,
        forced_f1: [1, 2, 3, 4].map(|t| forced_f1(obs, t, base)),
        fitted_forced_f1,
        forced_best,
        best_f1,
        best,
        grid_points: points,
        recomputed_mismatches: obs
            .iter()
            .filter(|o| o.lookup_f1.is_none())
            .filter(|o| {
                let f = o.f1_under(base);
                (0..4).any(|t| (f[t] - o.f1_by_tier[t]).abs() > 1e-9)
            })
            .count(),
    }
}

/// Routing on held-out questions: what `cfg` does there against every forced tier.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    pub questions: usize,
    pub routed_f1: f64,
    /// Every question in one tier, under the same constants.
    pub forced_f1: [f64; 4],
    /// Every question in one tier, under the context bounds fitted for forcing it
    /// ([`Calibration::forced_best`]): the best single tier routing must beat.
    pub forced_fitted_f1: [f64; 4],
    /// Questions per tier (lookups counted apart).
    pub tiers: [usize; 4],
    pub lookups: usize,
    /// Articles in the routed context, on average over the routed questions.
    pub mean_context: f64,
    /// Recall@10 over the routed questions (lookups left out): routed, then each tier
    /// forced.
    pub recall_at_10: TierRecall,
    /// The same over those with two or more gold articles.
    pub recall_at_10_multi: TierRecall,
}

/// Recall@10 of a group of held-out questions, routed and under each forced tier.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TierRecall {
    pub questions: usize,
    pub routed: f64,
    pub forced: [f64; 4],
}

impl TierRecall {
    fn of<'a>(obs: impl Iterator<Item = &'a Observation>, cfg: &MethodConfig) -> TierRecall {
        let mut r = TierRecall::default();
        for o in obs {
            r.questions += 1;
            r.routed += o.runs[o.tier(cfg) as usize - 1].recall_at_10(o.golds);
            for (t, run) in o.runs.iter().enumerate() {
                r.forced[t] += run.recall_at_10(o.golds);
            }
        }
        let n = r.questions.max(1) as f64;
        r.routed /= n;
        r.forced = r.forced.map(|x| x / n);
        r
    }
}

/// How `cfg` routes `obs`, against every tier forced under `forced` (its context bounds
/// fitted for forcing).
pub fn held_out(obs: &[Observation], cfg: &MethodConfig, forced: &MethodConfig) -> HeldOut {
    let mut tiers = [0usize; 4];
    let mut lookups = 0;
    let mut context = 0;
    for o in obs {
        if o.lookup_f1.is_some() {
            lookups += 1;
            continue;
        }
        let t = o.tier(cfg);
        tiers[t as usize - 1] += 1;
        context += o.runs[t as usize - 1].context(t, cfg, o.golds).0;
    }
    let routed = obs.len() - lookups;
    HeldOut {
        questions: obs.len(),
        routed_f1: routed_f1(obs, cfg),
        forced_f1: [1, 2, 3, 4].map(|t| forced_f1(obs, t, cfg)),
        forced_fitted_f1: [1, 2, 3, 4].map(|t| forced_f1(obs, t, forced)),
        tiers,
        lookups,
        mean_context: context as f64 / routed.max(1) as f64,
        recall_at_10: TierRecall::of(obs.iter().filter(|o| o.lookup_f1.is_none()), cfg),
        recall_at_10_multi: TierRecall::of(
            obs.iter().filter(|o| o.lookup_f1.is_none() && o.golds >= 2),
            cfg,
        ),
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

/// The two halves of the folds: `even` fits on items 0, 2, 4, … of every set, `odd` on
/// items 1, 3, 5, … (by index within the set, questions without gold left out).
pub const HALVES: [(&str, usize); 2] = [("even", 0), ("odd", 1)];

/// Items of every set whose index has parity `keep`.
fn half_of(sets: &[(String, Vec<Observation>)], keep: usize) -> Vec<(String, Vec<Observation>)> {
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
}

/// One fold: constants fitted on the items of parity `parity` of every set, routing
/// reported on the other items, set by set.
pub fn fold(
    sets: &[(String, Vec<Observation>)],
    base: &MethodConfig,
    (name, parity): (&'static str, usize),
) -> Fold {
    let train: Vec<Observation> = half_of(sets, parity)
        .into_iter()
        .flat_map(|x| x.1)
        .collect();
    let fitted = calibrate(&train, base);
    let held_out = half_of(sets, 1 - parity)
        .into_iter()
        .map(|(s, obs)| {
            let h = held_out(&obs, &fitted.best, &fitted.forced_best);
            (s, h)
        })
        .collect();
    Fold {
        fitted_on: name,
        fitted,
        held_out,
    }
}

/// Two-fold cross-validation over named sets of observations (index order kept).
pub fn two_folds(sets: &[(String, Vec<Observation>)], base: &MethodConfig) -> Vec<Fold> {
    HALVES.into_iter().map(|h| fold(sets, base, h)).collect()
}

/// A named dev set: its items and each item's gold articles.
pub type DevSet = (String, Vec<EvalItem>, Vec<Vec<HashSet<String>>>);

/// Two folds in which `base`'s learned re-ranking is fitted on the fitted half as well (a
/// model fitted on every item would have seen the held-out half): per half, the model is
/// fitted on its items, every question is observed again under it, and the routing is
/// calibrated on that half and reported on the other. `engine` answers with `base` again
/// afterwards, whatever happened.
pub fn refitted_folds(
    engine: &mut Engine,
    sets: &[DevSet],
    base: &MethodConfig,
) -> Result<Vec<Fold>, QueryError> {
    use crate::rerank_fit::{self, Tier};
    let mut questions = Vec::new();
    for (set, items, gold) in sets {
        questions.push(rerank_fit::collect(engine, Tier::Rerank, set, items, gold)?);
    }
    let mut folds = Vec::new();
    let mut each = || -> Result<(), QueryError> {
        for (name, parity) in HALVES {
            let model = rerank_fit::fit(Tier::Rerank, &rerank_fit::half(&questions, parity))
                .ok_or(QueryError::NothingToFit(name))?;
            let mut cfg = base.clone();
            model.install(&mut cfg);
            engine.set_config(cfg.clone())?;
            let mut by_set = Vec::new();
            for (set, items, gold) in sets {
                by_set.push((set.clone(), observe(engine, items, gold)?));
            }
            folds.push(fold(&by_set, &cfg, (name, parity)));
        }
        Ok(())
    };
    let outcome = each();
    engine.set_config(base.clone())?;
    outcome.map(|()| folds)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(score: f64, gold: u32) -> Candidate {
        Candidate {
            score,
            gold,
            named: false,
        }
    }

    /// A tier that ranks the question's one gold article first, far ahead (`found`), or
    /// not at all.
    fn run(found: bool) -> TierRun {
        let first = candidate(1.0, found as u32);
        TierRun {
            judged_keep: None,
            named: Vec::new(),
            ranked: vec![first, candidate(0.05, 0), candidate(0.04, 0)],
        }
    }

    /// A question with `golds` gold articles and what each forced tier ranked for it
    /// (observed under the default constants).
    fn question(c_intrinsic: f64, s1: f64, golds: usize, runs: [TierRun; 4]) -> Observation {
        let mut o = Observation {
            c_intrinsic,
            s1,
            jaccard: 0.2,
            top3: 0.0,
            f1_by_tier: [0.0; 4],
            lookup_f1: None,
            golds,
            runs,
        };
        o.f1_by_tier = o.f1_under(&MethodConfig::default());
        o
    }

    /// A question with one gold article that the tiers marked `true` find.
    fn obs(c_intrinsic: f64, s1: f64, found: [bool; 4]) -> Observation {
        question(c_intrinsic, s1, 1, found.map(run))
    }

    #[test]
    fn the_context_arithmetic_is_the_context_stage_s() {
        // Two gold articles (bits 1 and 2); the question names a third article, which the
        // tier also ranks: it is cited once, first.
        let named = Candidate {
            score: f64::INFINITY,
            gold: 0,
            named: true,
        };
        let r = TierRun {
            judged_keep: None,
            named: vec![named],
            ranked: vec![
                candidate(1.0, 1),
                Candidate {
                    score: 0.9,
                    ..named
                },
                candidate(0.85, 2),
                candidate(0.3, 0),
                candidate(0.29, 0),
            ],
        };
        // σ 0.2 cuts after 0.85 (0.85 → 0.3 drops 65%): named + 2 gold of 3 cited.
        let (n, f) = r.cut(0.2, 1, 8, 2);
        assert_eq!(n, 3);
        assert!((f - 0.8).abs() < 1e-12, "{f}");
        // At most one: the named article and the first ranked one.
        let (n, f) = r.cut(0.2, 1, 1, 2);
        assert_eq!(n, 2);
        assert!((f - 0.5).abs() < 1e-12, "{f}");
        // At least five: all five ranked, the named one once.
        assert_eq!(r.cut(0.2, 5, 8, 2).0, 5);
        // No gold articles, or nothing cited: F1 0.
        assert_eq!(r.cut(0.2, 1, 8, 0).1, 0.0);
        assert_eq!(TierRun::default().cut(0.2, 1, 8, 2), (0, 0.0));
        // A judged tier is cut where the chat model's judgement cut it, whatever the
        // cliff's bounds: the first ranked article alone, beside the named one.
        let judged = TierRun {
            judged_keep: Some(1),
            ..r
        };
        assert_eq!(judged.cut(0.2, 1, 8, 2).0, 2);
        assert_eq!(judged.cut(0.2, 5, 8, 2).0, 2);
    }

    #[test]
    fn finds_thresholds_that_send_each_question_to_its_best_tier() {
        // Simple questions are answered by tier 1, complex ones by tier 3.
        let mut o = Vec::new();
        for i in 0..10 {
            o.push(obs(
                0.1 + i as f64 * 0.005,
                60.0,
                [true, false, false, false],
            ));
            o.push(obs(
                0.6 + i as f64 * 0.005,
                10.0,
                [false, false, true, false],
            ));
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
        l.runs = Default::default();
        assert_eq!(forced_f1(&[l.clone()], 3, &base), 1.0);
        assert_eq!(routed_f1(&[l], &base), 1.0);
    }

    #[test]
    fn fits_each_tier_s_context_to_how_many_articles_its_questions_need() {
        // Tier 4 ranks the two gold articles of complex questions 1st and 3rd (a weak
        // article between them, then a cliff): it should keep three. Tier 1 ranks the one
        // gold article of simple questions first, close to two wrong ones: it should
        // keep one.
        let close = |gold_first: bool| TierRun {
            judged_keep: None,
            named: Vec::new(),
            ranked: vec![
                candidate(1.0, gold_first as u32),
                candidate(0.95, 0),
                candidate(0.9, 0),
                candidate(0.2, 0),
            ],
        };
        let two = TierRun {
            judged_keep: None,
            named: Vec::new(),
            ranked: vec![
                candidate(1.0, 1),
                candidate(0.7, 0),
                candidate(0.65, 2),
                candidate(0.3, 0),
                candidate(0.29, 0),
            ],
        };
        let mut o = Vec::new();
        for i in 0..10 {
            let simple = [close(true), close(false), close(false), close(false)];
            o.push(question(0.1 + i as f64 * 0.005, 60.0, 1, simple));
            let complex = [close(false), close(false), close(false), two.clone()];
            o.push(question(0.6 + i as f64 * 0.005, 10.0, 2, complex));
        }
        let base = MethodConfig::default();
        // The paper's bounds: tier 1 keeps its three close articles (F1 .5 on simple
        // questions), tier 4 cuts at the first drop and keeps its minimum of two (.5).
        assert!((forced_f1(&o, 1, &base) - 0.25).abs() < 1e-9);
        assert!((forced_f1(&o, 4, &base) - 0.25).abs() < 1e-9);
        let c = calibrate(&o, &base);
        // Fitted: tier 1 keeps one (F1 1 on simple), tier 4 three (.8 on complex), and
        // routing sends each kind to its tier.
        assert!((c.best_f1 - 0.9).abs() < 1e-9, "{c:?}");
        let simple = &o[0];
        let complex = &o[1];
        assert_eq!(simple.tier(&c.best), 1);
        assert_eq!(complex.tier(&c.best), 4);
        assert_eq!(simple.runs[0].context(1, &c.best, 1).0, 1);
        assert_eq!(complex.runs[3].context(4, &c.best, 2).0, 3);
        assert!(c.fitted_forced_f1[0] > c.forced_f1[0]);
        assert!(c.fitted_forced_f1[3] > c.forced_f1[3]);
    }

    #[test]
    fn two_folds_fit_on_one_half_and_report_on_the_other() {
        // Simple and complex questions two by two, so both halves hold both.
        let o: Vec<Observation> = (0..40)
            .map(|i| match (i / 2) % 2 {
                0 => obs(0.1 + i as f64 * 0.001, 60.0, [true, false, false, false]),
                _ => obs(0.6 + i as f64 * 0.001, 10.0, [false, false, true, false]),
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
            assert!(h.mean_context >= 1.0);
            // Routing finds each question's one gold article; each forced tier half of them.
            let r = &h.recall_at_10;
            assert_eq!(r.questions, 20);
            assert!((r.routed - 1.0).abs() < 1e-9, "{r:?}");
            assert!(
                (r.forced[0] - 0.5).abs() < 1e-9 && r.forced[1] == 0.0,
                "{r:?}"
            );
            assert_eq!(h.recall_at_10_multi.questions, 0);
        }
    }

    #[test]
    fn recall_at_ten_puts_the_named_articles_first_and_counts_each_gold_once() {
        let named = Candidate {
            score: f64::INFINITY,
            gold: 0b001,
            named: true,
        };
        let mut ranked: Vec<Candidate> = (0..12)
            .map(|i| candidate(1.0 - i as f64 * 0.01, 0))
            .collect();
        ranked[0] = named; // the named article is in the ranking too: counted once
        ranked[3].gold = 0b001; // another version of the same gold article
        ranked[9].gold = 0b010; // tenth once the named article leads and its copy is skipped
        ranked[11].gold = 0b100; // twelfth: past the tenth
        let run = TierRun {
            judged_keep: None,
            named: vec![named],
            ranked,
        };
        assert!((run.recall_at_10(3) - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(run.recall_at_10(0), 0.0);
        // Over a group, the routed tier's run counts; questions with 2+ gold apart.
        let mut two = obs(0.9, 10.0, [false, false, true, false]);
        two.golds = 2;
        two.runs[2].ranked[1].gold = 0b10;
        let group = [obs(0.1, 60.0, [true, false, false, false]), two];
        let cfg = MethodConfig::default();
        let r = TierRecall::of(group.iter(), &cfg);
        assert_eq!(r.questions, 2);
        assert_eq!(r.forced, [0.5, 0.0, 0.5, 0.0], "{r:?}");
        let routed: f64 = group
            .iter()
            .map(|o| o.runs[o.tier(&cfg) as usize - 1].recall_at_10(o.golds))
            .sum();
        assert!((r.routed - routed / 2.0).abs() < 1e-9, "{r:?}");
        let multi = TierRecall::of(group.iter().filter(|o| o.golds >= 2), &cfg);
        assert_eq!((multi.questions, multi.forced[2]), (1, 1.0), "{multi:?}");
    }
}
