//! How complex a question is (METHOD.md §3–4): intrinsic complexity from the question
//! itself, consistency complexity from how BM25 and dense retrieval agree, and Eq. 9.

pub mod consistency;
pub mod intrinsic;
pub mod llm;

pub use consistency::{Consistency, consistency};
pub use intrinsic::{
    Decomposition, Entity, EntityKind, Intrinsic, Lexicon, QuestionType, intrinsic,
};

use serde::Serialize;

use crate::method::MethodConfig;

/// The whole score of one question.
#[derive(Debug, Clone, Serialize)]
pub struct Complexity {
    pub intrinsic: Intrinsic,
    pub consistency: Consistency,
    pub c_final: f64,
    pub tier: u8,
}

/// Eq. 9: C_final = γ·C_intrinsic + (1 − γ)·C_consistency.
pub fn c_final(gamma: f64, c_intrinsic: f64, c_consistency: f64) -> f64 {
    gamma * c_intrinsic + (1.0 - gamma) * c_consistency
}

/// Eq. 9 and the tier. `use_intrinsic`/`use_consistency` false drop one side (ablations):
/// the final score is then the other side alone.
pub fn combine(
    intrinsic: Intrinsic,
    consistency: Consistency,
    cfg: &MethodConfig,
    use_intrinsic: bool,
    use_consistency: bool,
) -> Complexity {
    let c_final = match (use_intrinsic, use_consistency) {
        (true, true) => c_final(cfg.gamma, intrinsic.c_intrinsic, consistency.c_consistency),
        (true, false) => intrinsic.c_intrinsic,
        (false, true) => consistency.c_consistency,
        (false, false) => 0.0,
    };
    Complexity {
        tier: cfg.tier(c_final),
        intrinsic,
        consistency,
        c_final,
    }
}
