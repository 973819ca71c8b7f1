#!/usr/bin/env python3
"""Reads a `coal eval triples --per-triple` file and prints, per hand-checked sample, its
triples split into 规定 (the statute provides …) and every other relation: right of all
checked triples (from the fourth sample on every checked triple is one the build of its
time kept, so this is the precision when it was judged), and right and wrong of those the
grounding rules keep today. The small local model's 规定 triples are its weakest (bare
nouns and pieces of sentences as what the law provides): this says what leaving that
relation out (`[llm] skip_relations`) gives and what it costs."""
import collections
import json
import sys


def main(path):
    # (right, all) of the checked triples, (right, wrong) of those kept today.
    judged = collections.defaultdict(lambda: [0, 0])
    kept = collections.defaultdict(lambda: [0, 0])
    for row in map(json.loads, open(path)):
        key = (row["sample"], "规定" if row["relation"] == "规定" else "other relations")
        judged[key][0] += row["correct"]
        judged[key][1] += 1
        if not row["refused"]:
            kept[key][0 if row["correct"] else 1] += 1
    print("| sample | relations | right of all checked | kept right | kept wrong | kept precision |")
    print("|---|---|---|---|---|---|")
    for key in sorted(judged):
        right, total = judged[key]
        k_right, k_wrong = kept[key]
        share = f"{100 * k_right / (k_right + k_wrong):.1f}%" if k_right + k_wrong else "-"
        print(
            f"| {key[0]} | {key[1]} | {right}/{total} = {100 * right / total:.1f}% "
            f"| {k_right} | {k_wrong} | {share} |"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
