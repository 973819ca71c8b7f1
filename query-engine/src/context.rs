//! Score-cliff context filtering (METHOD.md §5).

/// How many of the scores (sorted, highest first) to keep: cut after the first `i` where
/// the relative drop `(s_i − s_{i+1}) / s_i` exceeds `sigma`, but keep at least `min` and
/// at most `max` (and never more than there are).
pub fn cliff_cut(scores: &[f64], sigma: f64, min: usize, max: usize) -> usize {
    let n = scores.len();
    let mut cut = n;
    for i in 0..n.saturating_sub(1) {
        let (a, b) = (scores[i], scores[i + 1]);
        let drop = if a > 0.0 { (a - b) / a } else { 0.0 };
        if drop > sigma {
            cut = i + 1;
            break;
        }
    }
    cut.max(min).min(max).min(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_at_the_first_cliff_within_bounds() {
        let s = [1.0, 0.95, 0.9, 0.5, 0.45];
        assert_eq!(cliff_cut(&s, 0.2, 1, 10), 3);
        assert_eq!(cliff_cut(&s, 0.2, 4, 10), 4);
        assert_eq!(cliff_cut(&s, 0.2, 1, 2), 2);
        assert_eq!(cliff_cut(&[1.0, 0.9, 0.85], 0.2, 1, 10), 3);
        assert_eq!(cliff_cut(&[], 0.2, 1, 10), 0);
        assert_eq!(cliff_cut(&[1.0, 0.1], 0.2, 1, 10), 1);
    }
}
