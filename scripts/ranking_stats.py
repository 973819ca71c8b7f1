"""What the analysis scripts share: the engine's context cut and a correlation."""

import statistics


def cliff_cut(scores, sigma, lo, hi):
    """How many of the scores (best first) the engine keeps: up to the first relative drop
    above sigma, within [lo, hi] (query-engine/src/context.rs)."""
    cut = len(scores)
    for i in range(len(scores) - 1):
        a, b = scores[i], scores[i + 1]
        if a > 0 and (a - b) / a > sigma:
            cut = i + 1
            break
    return min(max(cut, lo), hi, len(scores))


def corr(x, y):
    """Pearson's correlation (0 when either side is constant)."""
    mx, my = statistics.mean(x), statistics.mean(y)
    sx, sy = statistics.pstdev(x), statistics.pstdev(y)
    if sx == 0 or sy == 0:
        return 0.0
    return sum((a - mx) * (b - my) for a, b in zip(x, y)) / len(x) / (sx * sy)
