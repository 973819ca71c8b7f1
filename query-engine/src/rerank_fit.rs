//! `coal fit-rerank`: fits tier 2's learned re-ranking ([`LearnedRerank`], a logistic
//! regression over [`FEATURES`]) on questions with gold articles, and measures what it
//! does on held-out halves against the hand weights.
//!
//! The fit is plain: features standardized on the training rows, Newton's method on the
//! L2-penalized log-loss (penalty ½‖w‖², intercept free), the weights turned back into raw
//! units so `coal.toml` holds a model that needs no statistics of the dev sets.

use std::collections::HashSet;

use serde::Serialize;

use crate::QueryError;
use crate::engine::Engine;
use crate::eval::EvalItem;
use crate::method::MethodConfig;
use crate::rerank::{
    Candidate, FEATURES, Features, LearnedRerank, candidates, hand_scores, learned_scores,
};
use crate::retrieve::HYBRID_CANDIDATES;

const K: usize = 10;
const L2: f64 = 1.0;
const MAX_NEWTON_STEPS: usize = 50;

/// One question's candidates with their features, and its gold articles.
pub struct FitQuestion {
    pub set: String,
    pub candidates: Vec<Candidate>,
    pub gold: Vec<HashSet<String>>,
}

impl FitQuestion {
    fn label(&self, c: &Candidate) -> bool {
        self.gold.iter().any(|g| g.contains(&c.iri))
    }

    /// Recall@10 of an order given as scores (higher first, ties by IRI as `rerank` breaks them).
    fn recall(&self, scores: &[f64]) -> f64 {
        let mut order: Vec<usize> = (0..self.candidates.len()).collect();
        order.sort_by(|&a, &b| {
            (scores[b] as f32)
                .total_cmp(&(scores[a] as f32))
                .then_with(|| self.candidates[a].iri.cmp(&self.candidates[b].iri))
        });
        let top: HashSet<&str> = order
            .iter()
            .take(K)
            .map(|&i| self.candidates[i].iri.as_str())
            .collect();
        let hit = self
            .gold
            .iter()
            .filter(|g| g.iter().any(|iri| top.contains(iri.as_str())))
            .count();
        hit as f64 / self.gold.len().max(1) as f64
    }
}

/// Each question's retriever lists (what tier 2 re-ranks) and candidate features, under
/// the engine's method constants.
pub fn collect(
    engine: &Engine,
    set: &str,
    items: &[EvalItem],
    gold: &[Vec<HashSet<String>>],
) -> Result<Vec<FitQuestion>, QueryError> {
    let r = engine.retriever();
    let mut out = Vec::with_capacity(items.len());
    for (it, gold) in items.iter().zip(gold) {
        if gold.is_empty() {
            continue;
        }
        let bm25 = r.bm25(&it.question, HYBRID_CANDIDATES, false)?;
        let bigram = r.bigram(&it.question, HYBRID_CANDIDATES, false)?;
        let query = r.embed_query(&it.question)?;
        let dense = r.dense_by_vector(&query, HYBRID_CANDIDATES, false)?;
        out.push(FitQuestion {
            set: set.to_owned(),
            candidates: candidates(
                &dense,
                &bm25,
                &bigram,
                Some(engine.graph()),
                engine.config(),
            ),
            gold: gold.clone(),
        });
    }
    Ok(out)
}

/// Fits the model on the questions' candidates. `None` when there is nothing to learn
/// from (no candidate is gold, or every one is).
pub fn fit(questions: &[&FitQuestion]) -> Option<LearnedRerank> {
    let rows: Vec<(&Features, bool)> = questions
        .iter()
        .flat_map(|q| q.candidates.iter().map(move |c| (&c.features, q.label(c))))
        .collect();
    let positives = rows.iter().filter(|r| r.1).count();
    if positives == 0 || positives == rows.len() {
        return None;
    }
    let d = FEATURES.len();
    let n = rows.len() as f64;
    let mut mean = [0.0; 11];
    let mut sd = [0.0; 11];
    for (f, _) in &rows {
        for j in 0..d {
            mean[j] += f[j] / n;
        }
    }
    for (f, _) in &rows {
        for j in 0..d {
            sd[j] += (f[j] - mean[j]).powi(2) / n;
        }
    }
    // A constant feature (no graph, one law) gets weight 0 rather than a division by 0.
    let sd: Vec<f64> = sd
        .iter()
        .map(|v| if *v > 1e-18 { v.sqrt() } else { 0.0 })
        .collect();
    let x: Vec<[f64; 12]> = rows
        .iter()
        .map(|(f, _)| {
            let mut z = [1.0; 12];
            for j in 0..d {
                z[j + 1] = if sd[j] > 0.0 {
                    (f[j] - mean[j]) / sd[j]
                } else {
                    0.0
                };
            }
            z
        })
        .collect();
    let y: Vec<f64> = rows.iter().map(|r| r.1 as u8 as f64).collect();
    let mut w = [0.0; 12];
    w[0] = (positives as f64 / (n - positives as f64)).ln();
    for _ in 0..MAX_NEWTON_STEPS {
        let mut grad = [0.0; 12];
        let mut hess = [[0.0; 12]; 12];
        for (z, &yi) in x.iter().zip(&y) {
            let p = sigmoid(dot(&w, z));
            let r = p * (1.0 - p);
            for (a, row) in hess.iter_mut().enumerate() {
                grad[a] += (p - yi) * z[a];
                for (h, zb) in row.iter_mut().zip(z) {
                    *h += r * z[a] * zb;
                }
            }
        }
        for a in 0..12 {
            if a > 0 {
                grad[a] += L2 * w[a];
                hess[a][a] += L2;
            }
        }
        let step = solve(hess, grad)?;
        // Newton's full step can overshoot far from the optimum (the log-loss is flat
        // there): halve it until the loss goes down.
        let before = loss(&x, &y, &w);
        let mut scale = 1.0;
        let next = loop {
            let mut next = w;
            for a in 0..12 {
                next[a] -= scale * step[a];
            }
            if loss(&x, &y, &next) <= before || scale < 1e-6 {
                break next;
            }
            scale /= 2.0;
        };
        let moved = (0..12).map(|a| (next[a] - w[a]).abs()).fold(0.0, f64::max);
        w = next;
        if moved < 1e-8 {
            break;
        }
    }
    // Back to raw units: w·(f − μ)/σ = Σ (w/σ)·f − Σ w·μ/σ.
    let mut raw = [0.0; 11];
    let mut intercept = w[0];
    for j in 0..d {
        if sd[j] > 0.0 {
            raw[j] = w[j + 1] / sd[j];
            intercept -= raw[j] * mean[j];
        }
    }
    Some(LearnedRerank::from_weights(intercept, &raw))
}

/// The penalized log-loss being minimized.
fn loss(x: &[[f64; 12]], y: &[f64], w: &[f64; 12]) -> f64 {
    let data: f64 = x
        .iter()
        .zip(y)
        .map(|(z, &yi)| {
            let s = dot(w, z);
            // ln(1 + e^s) − y·s, without overflow.
            s.max(0.0) + (-s.abs()).exp().ln_1p() - yi * s
        })
        .sum();
    data + 0.5 * L2 * w[1..].iter().map(|v| v * v).sum::<f64>()
}

fn sigmoid(z: f64) -> f64 {
    1.0 / (1.0 + (-z).exp())
}

fn dot(a: &[f64; 12], b: &[f64; 12]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Solves `a·x = b` (Gaussian elimination with partial pivoting); `None` if singular.
fn solve(mut a: [[f64; 12]; 12], mut b: [f64; 12]) -> Option<[f64; 12]> {
    let n = 12;
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let f = a[row][col] / a[col][col];
            let pivot_row = a[col];
            for (x, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = [0.0; 12];
    for row in (0..n).rev() {
        let s: f64 = (row + 1..n).map(|k| a[row][k] * x[k]).sum();
        x[row] = (b[row] - s) / a[row][row];
    }
    Some(x)
}

/// Mean Recall@10 of each set under the hand weights and under a model.
#[derive(Debug, Clone, Serialize)]
pub struct HeldOut {
    pub set: String,
    pub questions: usize,
    pub hand_recall: f64,
    pub learned_recall: f64,
}

/// Recall@10 of the hand weights (`cfg`'s) and of `model` on `questions`, per set in
/// first-seen order: what `eval retrieval` reports for its `reranked` mode under each.
pub fn measure(
    questions: &[&FitQuestion],
    model: &LearnedRerank,
    cfg: &MethodConfig,
) -> Vec<HeldOut> {
    let mut out: Vec<HeldOut> = Vec::new();
    for q in questions {
        let hand = hand_scores(&q.candidates, true, cfg);
        let learned = learned_scores(model, &q.candidates);
        let i = match out.iter().position(|h| h.set == q.set) {
            Some(i) => i,
            None => {
                out.push(HeldOut {
                    set: q.set.clone(),
                    questions: 0,
                    hand_recall: 0.0,
                    learned_recall: 0.0,
                });
                out.len() - 1
            }
        };
        out[i].questions += 1;
        out[i].hand_recall += q.recall(&hand);
        out[i].learned_recall += q.recall(&learned);
    }
    for h in &mut out {
        h.hand_recall /= h.questions as f64;
        h.learned_recall /= h.questions as f64;
    }
    out
}

/// Fit on one half of every set, measure on the other (even items, then odd ones),
/// by index within each set.
#[derive(Debug, Clone, Serialize)]
pub struct Fold {
    pub fitted_on: &'static str,
    pub model: LearnedRerank,
    pub held_out: Vec<HeldOut>,
}

pub fn two_folds(by_set: &[Vec<FitQuestion>], cfg: &MethodConfig) -> Vec<Fold> {
    [("even", 0), ("odd", 1)]
        .into_iter()
        .filter_map(|(name, parity)| {
            let half = |keep: bool| -> Vec<&FitQuestion> {
                by_set
                    .iter()
                    .flat_map(|qs| qs.iter().enumerate())
                    .filter(|(i, _)| (i % 2 == parity) == keep)
                    .map(|(_, q)| q)
                    .collect()
            };
            let model = fit(&half(true))?;
            Some(Fold {
                fitted_on: name,
                held_out: measure(&half(false), &model, cfg),
                model,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidate(iri: &str, dense: f64, bm25: f64) -> Candidate {
        let mut f = [0.0; 11];
        f[0] = dense;
        f[3] = bm25;
        Candidate::for_test(iri, f, 0.7 * dense + 0.3 * bm25)
    }

    /// Gold articles are the ones BM25 likes, whatever dense says: the hand weights (dense
    /// first) rank them low, the fit learns to trust BM25.
    fn questions() -> Vec<FitQuestion> {
        (0..40)
            .map(|q| {
                let mut cands = Vec::new();
                for i in 0..30 {
                    let gold = i == (q % 30);
                    let dense = ((i * 7 + q) % 30) as f64 / 30.0;
                    let bm25 = if gold {
                        0.9
                    } else {
                        ((i * 13 + q) % 20) as f64 / 30.0
                    };
                    cands.push(candidate(&format!("q{q}/a{i}"), dense, bm25));
                }
                FitQuestion {
                    set: if q % 4 == 0 { "a".into() } else { "b".into() },
                    candidates: cands,
                    gold: vec![HashSet::from([format!("q{q}/a{}", q % 30)])],
                }
            })
            .collect()
    }

    #[test]
    fn the_fit_learns_which_signal_finds_gold() {
        let qs = questions();
        let all: Vec<&FitQuestion> = qs.iter().collect();
        let m = fit(&all).expect("a model");
        assert!(m.bm25 > 0.0 && m.bm25 > m.dense.abs(), "{m:?}");
        let cfg = MethodConfig::default();
        let held = measure(&all, &m, &cfg);
        let total: usize = held.iter().map(|h| h.questions).sum();
        assert_eq!(total, 40);
        assert_eq!(held[0].set, "a");
        for h in &held {
            assert!((h.learned_recall - 1.0).abs() < 1e-9, "{h:?}");
            assert!(h.hand_recall < 0.9, "{h:?}");
        }
        // Two folds: each half's model is measured on the other half only.
        let folds = two_folds(&[qs], &cfg);
        assert_eq!(folds.len(), 2);
        for f in &folds {
            assert_eq!(f.held_out.iter().map(|h| h.questions).sum::<usize>(), 20);
            assert!(f.held_out.iter().all(|h| h.learned_recall > h.hand_recall));
        }
    }

    #[test]
    fn nothing_to_learn_gives_no_model() {
        let mut qs = questions();
        for q in &mut qs {
            q.gold = vec![HashSet::from(["elsewhere".to_owned()])];
        }
        let all: Vec<&FitQuestion> = qs.iter().collect();
        assert!(fit(&all).is_none());
    }

    #[test]
    fn the_linear_solver_solves() {
        let mut a = [[0.0; 12]; 12];
        let mut b = [0.0; 12];
        for i in 0..12 {
            a[i][i] = 2.0;
            a[i][(i + 1) % 12] = 1.0;
            b[i] = 3.0;
        }
        let x = solve(a, b).unwrap();
        assert!(x.iter().all(|v| (v - 1.0).abs() < 1e-9), "{x:?}");
        assert!(solve([[0.0; 12]; 12], b).is_none());
    }
}
