#!/usr/bin/env python3
"""What the chat model's candidate judgements (`[method] judge_from_tier`) are worth, from
`coal eval answer --per-item` with judging on: how well the model's probability of 是
separates gold from other candidates among those it judged (AUC), and the article F1 of
the context each threshold would keep (the judged articles at or above it, at least the
likeliest one) against keeping the ranking's first k of the same candidates, and the same
with the ranking's order taken into the score (p - lam * place before the judgement). Articles a
question names are left out of the replay (the context puts them first either way)."""
import argparse
import json
import statistics


def f1(pred, gold):
    hit = sum(1 for g in gold if any(a in pred for a in g))
    if hit == 0 or not pred:
        return 0.0
    p = sum(1 for a in pred if any(a in g for g in gold)) / len(pred)
    r = hit / len(gold)
    return 2 * p * r / (p + r)


def auc(pos, neg):
    if not pos or not neg:
        return float("nan")
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / (len(pos) * len(neg))


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--per-item", required=True)
    args = ap.parse_args()
    rows = [json.loads(line) for line in open(args.per_item, encoding="utf-8")]
    groups = {}
    for x in rows:
        if x.get("judged") and x.get("f1") is not None:
            groups.setdefault((x["set"], x["variant"]), []).append(x)
    for (name, variant), items in sorted(groups.items()):
        pos, neg = [], []
        for x in items:
            gold = {a for g in x["gold_iris"] for a in g}
            for iri, _rank, p in x["judged"]:
                (pos if iri in gold else neg).append(p)
        print(f"## {name}, {variant}: {len(items)} judged questions, {len(pos) + len(neg)} "
              f"candidates ({len(pos)} gold)")
        print(f"AUC of the judge's probability {auc(pos, neg):.3f}; mean probability "
              f"gold {statistics.mean(pos or [0]):.3f}, other {statistics.mean(neg or [0]):.3f}")
        by_rank = lambda x: [iri for iri, _r, _p in sorted(x["judged"], key=lambda j: j[1])]
        for k in (1, 2, 3):
            m = statistics.mean(f1(by_rank(x)[:k], x["gold_iris"]) for x in items)
            print(f"  the ranking's first {k}: F1 {m:.3f}")
        for th in (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9):
            scores = []
            sizes = []
            for x in items:
                kept = [iri for iri, _r, p in x["judged"] if p >= th] or [x["judged"][0][0]]
                scores.append(f1(kept, x["gold_iris"]))
                sizes.append(len(kept))
            print(f"  judged, threshold {th}: F1 {statistics.mean(scores):.3f}, "
                  f"{statistics.mean(sizes):.2f} articles")
        for lam in (0.02, 0.05):
            for th in (0.8, 0.85):
                scores = []
                for x in items:
                    score = {iri: p - lam * place for iri, place, p in x["judged"]}
                    order = sorted(score, key=lambda i: -score[i])
                    kept = [i for i in order if score[i] >= th] or order[:1]
                    scores.append(f1(kept, x["gold_iris"]))
                print(f"  p - {lam} * place, threshold {th}: F1 {statistics.mean(scores):.3f}")
        print(f"  as run (cited): F1 {statistics.mean(x['f1'] for x in items):.3f}")


if __name__ == "__main__":
    main()
