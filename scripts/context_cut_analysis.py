#!/usr/bin/env python3
"""Would a context cut that reads the learned re-ranking's probabilities beat the cliff?

Over `coal fit-rerank --candidates FILE` (every question's candidates, features and gold
articles) and the `[method.rerank_learned]` model of a coal.toml, per set: tier 2's
article F1 when its ranking is cut

- at the score cliff as the engine cuts it (METHOD.md §5 on the relative probabilities,
  with tier 2's context bounds from the config),
- at a fixed k,
- where the expected F1 is highest: with p_i the model's probability that candidate i is
  gold, keep the k that maximises 2·Σ_{i<=k} p_i / (k + Σ_i p_i) (the plug-in estimate of
  F1 when the expected number of gold articles is Σ p),
- at each question's best k (the oracle: what a perfect cut would reach),

and how well Σ p predicts the number of gold articles. The model in coal.toml was fitted
on these same questions, so its probabilities are in sample; the comparison between cuts
is fair (every cut reads the same scores), the level is flattered.

    python3 scripts/context_cut_analysis.py --candidates cands.jsonl --config coal.toml
"""

import argparse
import collections
import json
import math
import statistics
import tomllib

from ranking_stats import cliff_cut, corr

# The order of `Features` (query-engine/src/rerank.rs, LearnedRerank::weights).
FEATURES = [
    "dense", "dense_gap", "dense_listed", "bm25", "bm25_listed", "bigram", "bigram_gap",
    "bigram_listed", "centrality", "section", "law_size", "paragraphs", "single_paragraph",
    "position", "first_in_division", "among_first_three",
]


def expected_f1_cut(p, k_max):
    total = max(sum(p), 1.0)  # every question has a gold article
    best, best_k, kept = -1.0, 1, 0.0
    for k in range(1, min(k_max, len(p)) + 1):
        kept += p[k - 1]
        value = 2 * kept / (k + total)
        if value > best:
            best, best_k = value, k
    return best_k


def f1(kept, gold):
    if not kept:
        return 0.0
    correct = sum(1 for iri in kept if any(iri in g for g in gold))
    found = sum(1 for g in gold if any(iri in g for iri in kept))
    p, r = correct / len(kept), found / len(gold)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--candidates", required=True, help="from coal fit-rerank --candidates")
    ap.add_argument("--config", required=True, help="a coal.toml with [method.rerank_learned]")
    args = ap.parse_args()
    with open(args.config, "rb") as f:
        method = tomllib.load(f)["method"]
    model = method["rerank_learned"]
    weights = [model.get(name, 0.0) for name in FEATURES]
    sigma = method.get("cliff_sigma", 0.2)
    lo, hi = method.get("context_min", [1, 2, 3, 2])[1], method.get("context_max", [5, 8, 10, 8])[1]

    results = collections.defaultdict(lambda: collections.defaultdict(list))
    for line in open(args.candidates, encoding="utf-8"):
        q = json.loads(line)
        gold = [set(g) for g in q["gold"]]
        if not gold or not q["iris"]:
            continue
        logits = [model["intercept"] + sum(w * x for w, x in zip(weights, f)) for f in q["features"]]
        probs = [1 / (1 + math.exp(-z)) for z in logits]
        order = sorted(range(len(probs)), key=lambda i: (-probs[i], q["iris"][i]))
        ranked = [q["iris"][i] for i in order]
        p = [probs[i] for i in order]
        relative = [x / p[0] for x in p]
        r = results[q["set"]]
        r[f"cliff (sigma {sigma}, {lo}-{hi})"].append(f1(ranked[: cliff_cut(relative, sigma, lo, hi)], gold))
        for k in (1, 2, 3):
            r[f"top {k}"].append(f1(ranked[:k], gold))
        for k_max in (3, 6, 10):
            r[f"expected F1, k <= {k_max}"].append(f1(ranked[: expected_f1_cut(p, k_max)], gold))
        r["oracle k <= 10"].append(max(f1(ranked[:k], gold) for k in range(1, 11)))
        r["_sum_p"].append(sum(p))
        r["_gold"].append(len(gold))

    for name, r in results.items():
        print(f"{name}: {len(r['_gold'])} questions, tier 2's article F1 by context cut")
        for cut, values in r.items():
            if not cut.startswith("_"):
                print(f"  {cut:28} {statistics.mean(values):.4f}")
        print(f"  mean sum p {statistics.mean(r['_sum_p']):.2f}, mean gold {statistics.mean(r['_gold']):.2f},"
              f" corr(sum p, gold articles) {corr(r['_sum_p'], r['_gold']):+.3f}")


if __name__ == "__main__":
    main()
