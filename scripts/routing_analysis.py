#!/usr/bin/env python3
"""What the routing has to work with, from `coal calibrate --observations FILE`.

Under the context bounds of a `[method]` table (coal.toml), per set: every forced tier's
article F1, how often two tiers tie or one wins, the F1 an oracle router would reach, the
correlation of each routing signal with "tier 3 beats tier 2", and whether complexity
predicts how many gold articles a question has (and so how much context it needs).
The context cut is the engine's (`query-engine/src/context.rs`), redone in Python.

    python3 scripts/routing_analysis.py --observations obs.jsonl --config coal.toml
"""

import argparse
import collections
import json
import statistics
import tomllib

from ranking_stats import cliff_cut, corr


def context_f1(run, golds, sigma, lo, hi):
    keep = cliff_cut([c["score"] for c in run["ranked"]], sigma, lo, hi)
    cited = run["named"] + [c for c in run["ranked"][:keep] if not c["named"]]
    if not cited or golds == 0:
        return 0.0
    correct = sum(1 for c in cited if c["gold"])
    found = 0
    for c in cited:
        found |= c["gold"]
    p = correct / len(cited)
    r = bin(found).count("1") / golds
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--observations", required=True)
    ap.add_argument("--config", required=True, help="a coal.toml with a [method] table")
    args = ap.parse_args()
    with open(args.config, "rb") as f:
        m = tomllib.load(f).get("method", {})
    sigma = m.get("cliff_sigma", 0.2)
    lows = m.get("context_min", [1, 2, 3, 2])
    highs = m.get("context_max", [5, 8, 10, 8])
    print(f"context bounds: sigma {sigma}, " + "/".join(f"{a}-{b}" for a, b in zip(lows, highs)))
    by_set = collections.defaultdict(list)
    with open(args.observations) as f:
        for line in f:
            o = json.loads(line)
            if o["lookup_f1"] is None:
                by_set[o["set"]].append(o)
    for name, obs in by_set.items():
        f1 = [
            [context_f1(o["runs"][t], o["golds"], sigma, lows[t], highs[t]) for t in range(4)]
            for o in obs
        ]
        forced = [statistics.mean(f[t] for f in f1) for t in range(4)]
        print(f"\n{name}: {len(obs)} routed questions")
        print("  forced F1 per tier: " + " ".join(f"{x:.4f}" for x in forced))
        print(f"  oracle router: {statistics.mean(max(f) for f in f1):.4f}")
        for a, b in ((1, 2), (1, 3), (2, 3), (0, 2)):
            wins = sum(1 for f in f1 if f[a] > f[b])
            losses = sum(1 for f in f1 if f[a] < f[b])
            print(f"  tier {a + 1} vs tier {b + 1}: better {wins}, worse {losses}, tied {len(f1) - wins - losses}")
        gain = [f[2] - f[1] for f in f1]
        for signal in ("c_intrinsic", "s1", "jaccard", "top3"):
            print(f"  corr(F1 tier 3 - tier 2, {signal}) = {corr([o[signal] for o in obs], gain):+.3f}")
        golds = [o["golds"] for o in obs]
        print(f"  corr(gold articles, c_intrinsic) = {corr(golds, [o['c_intrinsic'] for o in obs]):+.3f}")
        for g in (1, 2, 3):
            part = [o for o in obs if (o["golds"] == g if g < 3 else o["golds"] >= 3)]
            if not part:
                continue
            fixed = " ".join(
                f"{k}:{statistics.mean(context_f1(o['runs'][2], o['golds'], 0.0, k, k) for o in part):.3f}"
                for k in (1, 2, 3, 4)
            )
            label = f"{g}" if g < 3 else "3+"
            print(f"  {label} gold ({len(part)}): tier 3 F1 with exactly k articles  {fixed}")


if __name__ == "__main__":
    main()
