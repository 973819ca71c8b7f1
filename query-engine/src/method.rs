//! Every constant of the method (METHOD.md §3–5) in one place, with the paper's values as
//! defaults. `coal.toml`'s `[method]` table overrides any of them; `coal calibrate`
//! fits some of them on a dev set.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MethodConfig {
    /// Eq. 4: weight of the type's base complexity.
    pub alpha: f64,
    /// Eq. 4: weight of the five-dimension score.
    pub beta: f64,
    /// Eq. 1–2: the count at which a dimension saturates.
    pub n: f64,
    /// Eq. 5: BM25 top score at which QSI is one half, and the slope.
    pub qsi_midpoint: f64,
    pub qsi_slope: f64,
    /// Eq. 7 exponents and epsilon.
    pub p: f64,
    pub q: f64,
    pub eps: f64,
    /// Eq. 9: weight of intrinsic against consistency complexity.
    pub gamma: f64,
    /// Tier thresholds.
    pub theta_low: f64,
    pub theta_medium: f64,
    pub theta_high: f64,
    /// Top-k of each retriever for the consistency signal (Eq. 6).
    pub consistency_k: usize,
    /// Score-cliff: cut where the relative drop to the next score exceeds this.
    pub cliff_sigma: f64,
    /// Context size per tier 1–4: at least / at most this many articles.
    pub context_min: [usize; 4],
    pub context_max: [usize; 4],
    /// Tier 2's re-ranking (ours; the paper names a re-ranker without giving one): weights
    /// of min-max dense, jieba BM25 and bigram BM25 scores, of the article's centrality
    /// (how many articles cite it) and of its section's evidence. See `rerank.rs`.
    pub rerank_dense: f64,
    pub rerank_bm25: f64,
    pub rerank_bigram: f64,
    pub rerank_centrality: f64,
    pub rerank_section: f64,
    /// Tier 3 (`engine/graph_tier.rs`): weight of the evidence the question's links and
    /// best text matches send along graph paths, and of a linked heading above an article.
    pub graph_path: f64,
    pub graph_heading: f64,
    /// Tier 3's dense signal: (1 − λ)·article + λ·max(article, best 款 of it).
    pub graph_paragraph: f64,
    /// Bounds of the graph tiers' path searches: the largest path cost (a hop costs about
    /// 1, more out of a hub), nodes settled per seed, and the extra cost per log of a
    /// node's fan-out.
    pub graph_max_cost: f64,
    pub graph_max_nodes: usize,
    pub graph_fan_out_penalty: f64,
    /// What a step from an article to the next or previous one of its law costs (a hop
    /// through the chapter costs 2 and more): how near document order keeps neighbours.
    pub graph_adjacent_cost: f64,
    /// How many of the text ranking's best articles seed tier 3's walk besides the
    /// question's links. Why text seeds at all: most questions link only concepts or
    /// topics, and without them forced tier 3's Recall@10 falls .617 → .600 on lecoqa.dev
    /// and .408 → .362 on lawbench-3-8.dev; 10 gives .618 and .410 (`make
    /// graph-weights-grid GRAPH_PATHS=0.15 GRAPH_PARAGRAPHS=1.0 GRAPH_HEADINGS=0.25
    /// GRAPH_ANCHORS="0 5 10"`, 2026-12-07).
    pub graph_anchors: usize,
    /// With a chat model, the tiers from this one up first have the model draft a short
    /// answer and search with it too (`draft.rs`): a layperson's question names the
    /// situation, the draft the law and the rule. It costs a generation (seconds on a
    /// CPU), so it is what the harder tiers add. `None` (the default): no tier drafts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub draft_from_tier: Option<u8>,
    /// The draft's weight w in the dense list, (sim(question) + w·sim(draft)) / (1 + w).
    pub draft_weight: f64,
    /// With a chat model, the tiers from this one up have the model judge the first
    /// `judge_top` articles of their ranking against the question (`judge.rs`): those
    /// articles are ordered by the model's probability that the answer needs them, and
    /// the context keeps the ones at `judge_keep` or above (at least one) instead of
    /// cutting at the score cliff. A judgement costs a prefill (about a second on a CPU).
    /// `None` (the default): no tier judges.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_from_tier: Option<u8>,
    pub judge_top: usize,
    pub judge_keep: f64,
    /// Tier 2's re-ranking learned by `coal fit-rerank` (`[method.rerank_learned]`); the
    /// `rerank_*` weights above still make the section evidence it reads. Its scores are
    /// probability ratios (best 1), which fall off more steeply than the hand scores: tier
    /// 2's citation refinement, tier 3's text term and seeds read them as they are, so
    /// the context bounds and tier 3's weights should be refitted with it (`make
    /// calibrate`, `make graph-weights-grid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rerank_learned: Option<crate::rerank::LearnedRerank>,
    /// Tier 3's scoring learned by `coal fit-rerank --tier 3` (`[method.graph_learned]`)
    /// instead of text + graph_path·path + graph_heading·heading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub graph_learned: Option<crate::rerank::GraphLearned>,
}

impl Default for MethodConfig {
    /// The paper's values, except QSI's midpoint and slope: the paper's 12.5 and 0.5 were
    /// fitted to its own BM25, for which our top scores are far higher (median 31.5,
    /// quartiles 23.2 and 44.3 over 600 questions of the four dev sets, measured with
    /// `coal bench ask`), so QSI would be ~1 for every question. Midpoint = our median;
    /// slope puts the quartiles near QSI 0.25 and 0.75 (ln 3 / 12.8 ≈ 0.09).
    fn default() -> Self {
        MethodConfig {
            qsi_midpoint: 31.5,
            qsi_slope: 0.09,
            ..MethodConfig::paper()
        }
    }
}

/// A `[method]` value that makes no sense: the field it is about and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct MethodError {
    /// The field of `[method]` (`gamma`, `theta_low`, …).
    pub field: &'static str,
    pub message: String,
}

impl MethodError {
    fn new(field: &'static str, message: impl Into<String>) -> MethodError {
        MethodError {
            field,
            message: message.into(),
        }
    }
}

impl MethodConfig {
    /// Every constant exactly as the paper gives it.
    pub fn paper() -> Self {
        MethodConfig {
            alpha: 0.3,
            beta: 0.7,
            n: 4.0,
            qsi_midpoint: 12.5,
            qsi_slope: 0.5,
            p: 1.5,
            q: 0.3,
            eps: 1e-10,
            gamma: 0.5,
            theta_low: 0.25,
            theta_medium: 0.45,
            theta_high: 0.70,
            consistency_k: 10,
            cliff_sigma: 0.2,
            context_min: [1, 2, 3, 2],
            context_max: [5, 8, 10, 8],
            rerank_dense: 0.5,
            rerank_bm25: 0.2,
            rerank_bigram: 0.2,
            rerank_centrality: 0.2,
            rerank_section: 0.1,
            graph_path: 0.15,
            graph_heading: 0.25,
            graph_paragraph: 1.0,
            graph_max_cost: 4.0,
            graph_max_nodes: 5_000,
            graph_fan_out_penalty: 0.25,
            graph_adjacent_cost: 1.0,
            graph_anchors: 5,
            draft_from_tier: None,
            draft_weight: 1.0,
            judge_from_tier: None,
            judge_top: 5,
            judge_keep: 0.5,
            rerank_learned: None,
            graph_learned: None,
        }
    }

    /// Checks the values make sense; the error names the field.
    pub fn validate(&self) -> Result<(), MethodError> {
        let unit = [
            ("alpha", self.alpha),
            ("beta", self.beta),
            ("gamma", self.gamma),
            ("graph_paragraph", self.graph_paragraph),
            ("theta_low", self.theta_low),
            ("theta_medium", self.theta_medium),
            ("theta_high", self.theta_high),
            ("cliff_sigma", self.cliff_sigma),
        ];
        for (name, v) in unit {
            if !(0.0..=1.0).contains(&v) {
                return Err(MethodError::new(
                    name,
                    format!("method.{name} = {v} is outside [0, 1]"),
                ));
            }
        }
        if !(self.theta_low <= self.theta_medium && self.theta_medium <= self.theta_high) {
            return Err(MethodError::new(
                "theta_low",
                "method thresholds must satisfy theta_low <= theta_medium <= theta_high",
            ));
        }
        let rerank = [
            ("rerank_dense", self.rerank_dense),
            ("rerank_bm25", self.rerank_bm25),
            ("rerank_bigram", self.rerank_bigram),
            ("rerank_centrality", self.rerank_centrality),
            ("rerank_section", self.rerank_section),
            ("graph_path", self.graph_path),
            ("graph_heading", self.graph_heading),
            ("graph_fan_out_penalty", self.graph_fan_out_penalty),
            ("draft_weight", self.draft_weight),
        ];
        for (name, v) in rerank {
            if !(v.is_finite() && v >= 0.0) {
                return Err(MethodError::new(
                    name,
                    format!("method.{name} = {v} must be a non-negative number"),
                ));
            }
        }
        if let Some(m) = &self.rerank_learned
            && !(m.intercept.is_finite() && m.weights().iter().all(|w| w.is_finite()))
        {
            return Err(MethodError::new(
                "rerank_learned",
                "method.rerank_learned: every weight must be a finite number",
            ));
        }
        if let Some(m) = &self.graph_learned
            && !(m.intercept.is_finite() && m.weights().iter().all(|w| w.is_finite()))
        {
            return Err(MethodError::new(
                "graph_learned",
                "method.graph_learned: every weight must be a finite number",
            ));
        }
        if self.rerank_dense + self.rerank_bm25 + self.rerank_bigram <= 0.0 {
            return Err(MethodError::new(
                "rerank_dense",
                "method.rerank_dense + rerank_bm25 + rerank_bigram must be positive: with all three at 0 the re-ranking ignores the question",
            ));
        }
        if !(self.graph_max_cost.is_finite() && self.graph_max_cost > 0.0)
            || self.graph_max_nodes == 0
        {
            return Err(MethodError::new(
                "graph_max_cost",
                "method.graph_max_cost and method.graph_max_nodes must be positive",
            ));
        }
        if !(self.graph_adjacent_cost.is_finite() && self.graph_adjacent_cost > 0.0) {
            return Err(MethodError::new(
                "graph_adjacent_cost",
                format!(
                    "method.graph_adjacent_cost = {} must be a positive number",
                    self.graph_adjacent_cost
                ),
            ));
        }
        if self.graph_anchors > 50 {
            return Err(MethodError::new(
                "graph_anchors",
                format!(
                    "method.graph_anchors = {} is past 50: the walk would start from half the text ranking and more",
                    self.graph_anchors
                ),
            ));
        }
        if let Some(t) = self.draft_from_tier
            && !(1..=4).contains(&t)
        {
            return Err(MethodError::new(
                "draft_from_tier",
                format!("method.draft_from_tier = {t}: give a tier, 1 to 4"),
            ));
        }
        if let Some(t) = self.judge_from_tier
            && !(1..=4).contains(&t)
        {
            return Err(MethodError::new(
                "judge_from_tier",
                format!("method.judge_from_tier = {t}: give a tier, 1 to 4"),
            ));
        }
        if !(1..=crate::engine::TIER_RANKING_KEPT).contains(&self.judge_top) {
            return Err(MethodError::new(
                "judge_top",
                format!(
                    "method.judge_top = {}: give 1 to {} articles",
                    self.judge_top,
                    crate::engine::TIER_RANKING_KEPT
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.judge_keep) {
            return Err(MethodError::new(
                "judge_keep",
                format!(
                    "method.judge_keep = {} must be a probability, 0 to 1",
                    self.judge_keep
                ),
            ));
        }
        if self.n <= 0.0 || self.consistency_k == 0 {
            return Err(MethodError::new(
                "n",
                "method.n and method.consistency_k must be positive",
            ));
        }
        for t in 0..4 {
            if self.context_min[t] == 0 || self.context_min[t] > self.context_max[t] {
                return Err(MethodError::new(
                    "context_min",
                    format!(
                        "method.context_min/context_max for tier {}: need 1 <= min <= max",
                        t + 1
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The tier (1–4) for a final complexity.
    pub fn tier(&self, c_final: f64) -> u8 {
        if c_final <= self.theta_low {
            1
        } else if c_final <= self.theta_medium {
            2
        } else if c_final <= self.theta_high {
            3
        } else {
            4
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_names_the_bad_field() {
        assert_eq!(MethodConfig::default().validate(), Ok(()));
        assert_eq!(MethodConfig::paper().validate(), Ok(()));
        let bad = |f: fn(&mut MethodConfig)| {
            let mut c = MethodConfig::default();
            f(&mut c);
            let e = c.validate().unwrap_err();
            (e.field, e.to_string())
        };
        let (field, text) = bad(|c| c.gamma = 1.5);
        assert_eq!(field, "gamma");
        assert!(text.contains("method.gamma"), "{text}");
        assert_eq!(bad(|c| c.context_min[2] = 11).0, "context_min");
        let bad = |f: fn(&mut MethodConfig)| bad(f).1;
        assert!(bad(|c| c.theta_low = 0.9).contains("theta_low <= theta_medium"));
        assert!(bad(|c| c.rerank_section = -0.1).contains("method.rerank_section"));
        assert!(bad(|c| c.rerank_centrality = f64::NAN).contains("method.rerank_centrality"));
        let e = bad(|c| {
            c.rerank_dense = 0.0;
            c.rerank_bm25 = 0.0;
            c.rerank_bigram = 0.0;
        });
        assert!(e.contains("must be positive"), "{e}");
        assert!(bad(|c| c.context_min[2] = 11).contains("tier 3"));
        assert!(bad(|c| c.draft_from_tier = Some(5)).contains("method.draft_from_tier = 5"));
        assert!(bad(|c| c.draft_weight = -1.0).contains("method.draft_weight"));
        assert!(bad(|c| c.judge_from_tier = Some(0)).contains("method.judge_from_tier = 0"));
        assert!(bad(|c| c.judge_top = 0).contains("method.judge_top = 0"));
        assert!(bad(|c| c.judge_keep = 1.5).contains("method.judge_keep = 1.5"));
        assert!(bad(|c| c.graph_anchors = 51).contains("method.graph_anchors = 51"));
    }

    #[test]
    fn a_learned_rerank_table_reads_back_and_bad_weights_are_named() {
        let text = "[method]\ngamma = 0.8\n\n[method.rerank_learned]\nintercept = -8.0\ndense = 2.0\ndense_gap = 20.0\ndense_listed = 0.6\nbm25 = 0.9\nbm25_listed = 0.0\nbigram = 1.5\nbigram_gap = 0.0\nbigram_listed = 0.2\ncentrality = 3.0\nsection = 1.0\nlaw_size = 0.25\n";
        #[derive(Deserialize, Serialize)]
        struct File {
            method: MethodConfig,
        }
        let f: File = toml::from_str(text).unwrap();
        let m = f.method.rerank_learned.as_ref().unwrap();
        assert_eq!((m.intercept, m.dense_gap, m.law_size), (-8.0, 20.0, 0.25));
        assert_eq!(f.method.validate(), Ok(()));
        let again: File = toml::from_str(&toml::to_string(&f).unwrap()).unwrap();
        assert_eq!(again.method, f.method);
        // Without the table nothing is written for it.
        let plain = toml::to_string(&File {
            method: MethodConfig::default(),
        })
        .unwrap();
        assert!(!plain.contains("rerank_learned"), "{plain}");
        let mut bad = f.method.clone();
        bad.rerank_learned.as_mut().unwrap().bm25 = f64::NAN;
        assert_eq!(bad.validate().unwrap_err().field, "rerank_learned");
        // A misspelt weight is an error, not a silent zero.
        let typo = text.replace("law_size", "lawsize");
        assert!(toml::from_str::<File>(&typo).is_err());
    }
}
