//! `coal fit-rerank`: fits tier 2's learned re-ranking ([`LearnedRerank`], a logistic
//! regression over [`crate::rerank::Features`]) or tier 3's learned scoring
//! ([`GraphLearned`], over [`crate::rerank::GraphFeatures`]) on questions with gold
//! articles, and measures what it does on held-out halves against the hand weights.
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
    GraphLearned, LearnedRerank, candidates, dot, graph_hand_score, relative_probabilities,
};
use crate::retrieve::HYBRID_CANDIDATES;

const K: usize = 10;
const L2: f64 = 1.0;
const MAX_NEWTON_STEPS: usize = 50;

/// Which scoring is fitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// Tier 2's re-ranking of the three lists (`[method.rerank_learned]`).
    Rerank,
    /// Tier 3's scoring of its graph candidates (`[method.graph_learned]`).
    Graph,
}

/// A fitted model of either tier.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Model {
    Rerank(LearnedRerank),
    Graph(GraphLearned),
}

impl Model {
    fn new(tier: Tier, intercept: f64, w: &[f64]) -> Model {
        match tier {
            Tier::Rerank => Model::Rerank(LearnedRerank::from_weights(
                intercept,
                w.try_into().expect("sixteen weights"),
            )),
            Tier::Graph => Model::Graph(GraphLearned::from_weights(
                intercept,
                w.try_into().expect("six weights"),
            )),
        }
    }

    fn logit(&self, f: &[f64]) -> f64 {
        match self {
            Model::Rerank(m) => m.logit(f.try_into().expect("sixteen features")),
            Model::Graph(m) => m.logit(f.try_into().expect("six features")),
        }
    }

    /// Puts the model into the method constants.
    pub fn install(self, cfg: &mut MethodConfig) {
        match self {
            Model::Rerank(m) => cfg.rerank_learned = Some(m),
            Model::Graph(m) => cfg.graph_learned = Some(m),
        }
    }
}

/// One question's candidates with their features and hand-weighted scores, and its
/// gold articles.
pub struct FitQuestion {
    pub set: String,
    pub iris: Vec<String>,
    pub features: Vec<Vec<f64>>,
    pub hand: Vec<f64>,
    pub gold: Vec<HashSet<String>>,
}

impl FitQuestion {
    fn label(&self, i: usize) -> bool {
        self.gold.iter().any(|g| g.contains(&self.iris[i]))
    }

    /// Recall@10 of an order given as scores (higher first as f32, ties by IRI: as `rerank`
    /// orders; tier 3 breaks ties by node, so its figures may differ on exact ties).
    fn recall(&self, scores: &[f64]) -> f64 {
        let mut order: Vec<usize> = (0..self.iris.len()).collect();
        order.sort_by(|&a, &b| {
            (scores[b] as f32)
                .total_cmp(&(scores[a] as f32))
                .then_with(|| self.iris[a].cmp(&self.iris[b]))
        });
        let top: HashSet<&str> = order
            .iter()
            .take(K)
            .map(|&i| self.iris[i].as_str())
            .collect();
        let hit = self
            .gold
            .iter()
            .filter(|g| g.iter().any(|iri| top.contains(iri.as_str())))
            .count();
        hit as f64 / self.gold.len().max(1) as f64
    }
}

/// Each question's candidates and features under the engine's method constants: tier
/// 2's (its retriever lists, what the re-ranking reads) or tier 3's (the question
/// analysed, linked and walked as `ask` does).
pub fn collect(
    engine: &Engine,
    tier: Tier,
    set: &str,
    items: &[EvalItem],
    gold: &[Vec<HashSet<String>>],
) -> Result<Vec<FitQuestion>, QueryError> {
    let r = engine.retriever();
    let cfg = engine.config();
    let mut out = Vec::with_capacity(items.len());
    for (it, gold) in items.iter().zip(gold) {
        if gold.is_empty() {
            continue;
        }
        let (iris, features, hand) = match tier {
            Tier::Rerank => {
                let bm25 = r.bm25(&it.question, HYBRID_CANDIDATES, false)?;
                let bigram = r.bigram(&it.question, HYBRID_CANDIDATES, false)?;
                let query = r.embed_query(&it.question)?;
                let dense = r.dense_by_vector(&query, HYBRID_CANDIDATES, false)?;
                let c = candidates(&dense, &bm25, &bigram, Some(engine.graph()), cfg);
                let hand = c.iter().map(|c| c.hand).collect();
                let features = c.iter().map(|c| c.features.to_vec()).collect();
                (c.into_iter().map(|c| c.iri).collect(), features, hand)
            }
            Tier::Graph => {
                let c = engine.graph_candidates(&it.question)?;
                let hand = c.iter().map(|(_, f)| graph_hand_score(f, cfg)).collect();
                let features = c.iter().map(|(_, f)| f.to_vec()).collect();
                (c.into_iter().map(|(iri, _)| iri).collect(), features, hand)
            }
        };
        out.push(FitQuestion {
            set: set.to_owned(),
            iris,
            features,
            hand,
            gold: gold.clone(),
        });
    }
    Ok(out)
}

/// Fits the model on the questions' candidates. `None` when there is nothing to learn
/// from (no candidate is gold, or every one is).
pub fn fit(tier: Tier, questions: &[&FitQuestion]) -> Option<Model> {
    let rows: Vec<(&[f64], bool)> = questions
        .iter()
        .flat_map(|q| (0..q.iris.len()).map(move |i| (q.features[i].as_slice(), q.label(i))))
        .collect();
    let (intercept, w) = logistic(&rows)?;
    Some(Model::new(tier, intercept, &w))
}

/// L2-penalized logistic regression of the labels on the rows (all of one width):
/// (intercept, weights) in the rows' raw units.
fn logistic(rows: &[(&[f64], bool)]) -> Option<(f64, Vec<f64>)> {
    let positives = rows.iter().filter(|r| r.1).count();
    if positives == 0 || positives == rows.len() {
        return None;
    }
    let d = rows[0].0.len();
    let n = rows.len() as f64;
    let mut mean = vec![0.0; d];
    let mut sd = vec![0.0; d];
    for (f, _) in rows {
        for j in 0..d {
            mean[j] += f[j] / n;
        }
    }
    for (f, _) in rows {
        for j in 0..d {
            sd[j] += (f[j] - mean[j]).powi(2) / n;
        }
    }
    // A constant feature (no graph, one law) gets weight 0 rather than a division by 0.
    let sd: Vec<f64> = sd
        .iter()
        .map(|v| if *v > 1e-18 { v.sqrt() } else { 0.0 })
        .collect();
    // Standardized rows with a leading 1 for the intercept.
    let x: Vec<Vec<f64>> = rows
        .iter()
        .map(|(f, _)| {
            std::iter::once(1.0)
                .chain((0..d).map(|j| {
                    if sd[j] > 0.0 {
                        (f[j] - mean[j]) / sd[j]
                    } else {
                        0.0
                    }
                }))
                .collect()
        })
        .collect();
    let y: Vec<f64> = rows.iter().map(|r| r.1 as u8 as f64).collect();
    let m = d + 1;
    let mut w = vec![0.0; m];
    w[0] = (positives as f64 / (n - positives as f64)).ln();
    for _ in 0..MAX_NEWTON_STEPS {
        let mut grad = vec![0.0; m];
        let mut hess = vec![vec![0.0; m]; m];
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
        for a in 1..m {
            grad[a] += L2 * w[a];
            hess[a][a] += L2;
        }
        let step = solve(hess, grad)?;
        // Newton's full step can overshoot far from the optimum (the log-loss is flat
        // there): halve it until the loss goes down.
        let before = loss(&x, &y, &w);
        let mut scale = 1.0;
        let next = loop {
            let next: Vec<f64> = w.iter().zip(&step).map(|(w, s)| w - scale * s).collect();
            if loss(&x, &y, &next) <= before {
                break Some(next);
            }
            if scale < 1e-6 {
                break None;
            }
            scale /= 2.0;
        };
        // No step lowers the loss: this is the optimum as far as f64 can tell.
        let Some(next) = next else { break };
        let moved = w
            .iter()
            .zip(&next)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f64::max);
        w = next;
        if moved < 1e-8 {
            break;
        }
    }
    // Back to raw units: w·(f − μ)/σ = Σ (w/σ)·f − Σ w·μ/σ.
    let mut raw = vec![0.0; d];
    let mut intercept = w[0];
    for j in 0..d {
        if sd[j] > 0.0 {
            raw[j] = w[j + 1] / sd[j];
            intercept -= raw[j] * mean[j];
        }
    }
    Some((intercept, raw))
}

/// The penalized log-loss being minimized.
fn loss(x: &[Vec<f64>], y: &[f64], w: &[f64]) -> f64 {
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

/// Solves `a·x = b` (Gaussian elimination with partial pivoting); `None` if singular.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for col in 0..n {
        let pivot = (col..n).max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))?;
        if a[pivot][col].abs() < 1e-12 {
            return None;
        }
        a.swap(col, pivot);
        b.swap(col, pivot);
        for row in col + 1..n {
            let f = a[row][col] / a[col][col];
            let (upper, lower) = a.split_at_mut(row);
            for (x, p) in lower[0][col..].iter_mut().zip(&upper[col][col..]) {
                *x -= f * p;
            }
            b[row] -= f * b[col];
        }
    }
    let mut x = vec![0.0; n];
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

/// Recall@10 of the hand weights and of `model` on `questions`, per set in first-seen
/// order. For tier 2 it is what `eval retrieval` reports for its `reranked` mode under
/// each (scores as `rerank` makes them).
pub fn measure(questions: &[&FitQuestion], model: &Model) -> Vec<HeldOut> {
    let mut out: Vec<HeldOut> = Vec::new();
    for q in questions {
        let logits: Vec<f64> = q.features.iter().map(|f| model.logit(f)).collect();
        let learned = relative_probabilities(&logits);
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
        out[i].hand_recall += q.recall(&q.hand);
        out[i].learned_recall += q.recall(&learned);
    }
    for h in &mut out {
        h.hand_recall /= h.questions as f64;
        h.learned_recall /= h.questions as f64;
    }
    out
}

/// A model fitted on one half of every set and measured on the other.
#[derive(Debug, Clone, Serialize)]
pub struct Fold {
    pub fitted_on: &'static str,
    pub model: Model,
    pub held_out: Vec<HeldOut>,
}

/// The questions of every set whose index within the set has parity `parity` (the
/// halves of [`crate::calibrate::HALVES`]).
pub fn half(by_set: &[Vec<FitQuestion>], parity: usize) -> Vec<&FitQuestion> {
    by_set
        .iter()
        .flat_map(|qs| qs.iter().enumerate())
        .filter(|(i, _)| i % 2 == parity)
        .map(|(_, q)| q)
        .collect()
}

/// Fit on one half of every set, measure on the other (even items, then odd ones), by
/// index within each set.
pub fn two_folds(tier: Tier, by_set: &[Vec<FitQuestion>]) -> Vec<Fold> {
    crate::calibrate::HALVES
        .into_iter()
        .filter_map(|(name, parity)| {
            let model = fit(tier, &half(by_set, parity))?;
            Some(Fold {
                fitted_on: name,
                held_out: measure(&half(by_set, 1 - parity), &model),
                model,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gold articles are the ones BM25 likes, whatever dense says: the hand weights (dense
    /// first) rank them low, the fit learns to trust BM25.
    fn questions() -> Vec<FitQuestion> {
        (0..40)
            .map(|q| {
                let (mut iris, mut features, mut hand) = (Vec::new(), Vec::new(), Vec::new());
                for i in 0..30 {
                    let gold = i == (q % 30);
                    let dense = ((i * 7 + q) % 30) as f64 / 30.0;
                    let bm25 = if gold {
                        0.9
                    } else {
                        ((i * 13 + q) % 20) as f64 / 30.0
                    };
                    let mut f = vec![0.0; 16];
                    f[0] = dense;
                    f[3] = bm25;
                    iris.push(format!("q{q}/a{i}"));
                    features.push(f);
                    hand.push(0.7 * dense + 0.3 * bm25);
                }
                FitQuestion {
                    set: if q % 4 == 0 { "a".into() } else { "b".into() },
                    iris,
                    features,
                    hand,
                    gold: vec![HashSet::from([format!("q{q}/a{}", q % 30)])],
                }
            })
            .collect()
    }

    #[test]
    fn the_fit_learns_which_signal_finds_gold() {
        let qs = questions();
        let all: Vec<&FitQuestion> = qs.iter().collect();
        let model = fit(Tier::Rerank, &all).expect("a model");
        let Model::Rerank(m) = &model else {
            panic!("a tier-2 model")
        };
        assert!(m.bm25 > 0.0 && m.bm25 > m.dense.abs(), "{m:?}");
        let held = measure(&all, &model);
        let total: usize = held.iter().map(|h| h.questions).sum();
        assert_eq!(total, 40);
        assert_eq!(held[0].set, "a");
        for h in &held {
            assert!((h.learned_recall - 1.0).abs() < 1e-9, "{h:?}");
            assert!(h.hand_recall < 0.9, "{h:?}");
        }
        // Two folds: each half's model is measured on the other half only.
        let folds = two_folds(Tier::Rerank, &[qs]);
        assert_eq!(folds.len(), 2);
        for f in &folds {
            assert_eq!(f.held_out.iter().map(|h| h.questions).sum::<usize>(), 20);
            assert!(f.held_out.iter().all(|h| h.learned_recall > h.hand_recall));
        }
        // The same rows as tier 3's six features make a tier-3 model that goes where
        // tier 3 reads it.
        let mut six = questions();
        for q in &mut six {
            for f in &mut q.features {
                f.truncate(6);
            }
        }
        let all: Vec<&FitQuestion> = six.iter().collect();
        let graph = fit(Tier::Graph, &all).expect("a model");
        let mut cfg = MethodConfig::default();
        graph.install(&mut cfg);
        let g = cfg.graph_learned.expect("installed");
        assert!(g.path > 0.0 && g.path > g.reranked.abs(), "{g:?}");
        assert!(cfg.rerank_learned.is_none());
    }

    #[test]
    fn nothing_to_learn_gives_no_model() {
        let mut qs = questions();
        for q in &mut qs {
            q.gold = vec![HashSet::from(["elsewhere".to_owned()])];
        }
        let all: Vec<&FitQuestion> = qs.iter().collect();
        assert!(fit(Tier::Rerank, &all).is_none());
    }

    #[test]
    fn the_linear_solver_solves() {
        let mut a = vec![vec![0.0; 12]; 12];
        let mut b = vec![0.0; 12];
        for i in 0..12 {
            a[i][i] = 2.0;
            a[i][(i + 1) % 12] = 1.0;
            b[i] = 3.0;
        }
        let x = solve(a, b.clone()).unwrap();
        assert!(x.iter().all(|v| (v - 1.0).abs() < 1e-9), "{x:?}");
        assert!(solve(vec![vec![0.0; 12]; 12], b).is_none());
    }
}
