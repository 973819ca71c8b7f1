#!/usr/bin/env python3
"""Compares two `coal eval answer --per-item` files of the same items (e.g. the rules'
decomposition against the model's): per set, how many questions the model decomposed,
how many change tier, and the mean F1 and R@10 of each file on the items both hold."""
import collections
import json
import sys


def read(path):
    return {(r["set"], r["variant"], r["id"]): r for r in map(json.loads, open(path))}


def main(before_path, after_path):
    before, after = read(before_path), read(after_path)
    keys = sorted(set(before) & set(after))
    by_set = collections.defaultdict(list)
    for k in keys:
        by_set[(k[0], k[1])].append((before[k], after[k]))
    print("| set | items | decomposed by the model | tier changed | F1 before | F1 after | R@10 before | R@10 after |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, variant), pairs in sorted(by_set.items()):
        n = len(pairs)
        model = sum(a.get("decomposed_by") not in (None, "rules") for _, a in pairs)
        changed = sum(b["tier"] != a["tier"] for b, a in pairs)
        mean = lambda rows, key: sum(r[key] for r in rows) / n
        bs, as_ = [b for b, _ in pairs], [a for _, a in pairs]
        print(f"| {name} ({variant}) | {n} | {model} | {changed} | {mean(bs, 'f1'):.3f} | {mean(as_, 'f1'):.3f} "
              f"| {mean(bs, 'recall_at_10'):.3f} | {mean(as_, 'recall_at_10'):.3f} |")
    moves = collections.Counter((before[k]["tier"], after[k]["tier"]) for k in keys if before[k]["tier"] != after[k]["tier"])
    if moves:
        print("tier moves (before → after):", ", ".join(f"{b}→{a}: {c}" for (b, a), c in sorted(moves.items())))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: tier_changes.py BEFORE.jsonl AFTER.jsonl")
    main(sys.argv[1], sys.argv[2])
