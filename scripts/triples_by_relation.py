#!/usr/bin/env python3
"""Reads a `coal eval triples --per-triple` file and prints, per hand-checked sample, the
triples the grounding rules keep split into 规定 (the statute provides …) and every other
relation: right, wrong and precision of each. The small local model's 规定 triples are
its weakest (bare nouns and pieces of sentences as what the law provides), so this says
what leaving that relation out would give, and what it would cost (the right 规定s)."""
import collections
import json
import sys


def main(path):
    counts = collections.defaultdict(lambda: [0, 0])
    for row in map(json.loads, open(path)):
        if row["refused"]:
            continue
        kind = "规定" if row["relation"] == "规定" else "other relations"
        counts[(row["sample"], kind)][0 if row["correct"] else 1] += 1
    print("| sample | relations | kept right | kept wrong | precision |")
    print("|---|---|---|---|---|")
    for (sample, kind), (right, wrong) in sorted(counts.items()):
        share = 100 * right / (right + wrong)
        print(f"| {sample} | {kind} | {right} | {wrong} | {share:.1f}% |")


if __name__ == "__main__":
    main(*sys.argv[1:])
