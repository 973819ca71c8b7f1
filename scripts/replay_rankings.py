#!/usr/bin/env python3
"""Replays tier 2's and tier 3's rankings (`coal eval answer --per-item`) for questions with
2+ gold articles, without asking again:

1. where the gold articles the top 10 misses are (ranks 11-30, beyond 30; in a law of a
   found gold, in a law of the top 3, elsewhere);
2. a bonus for the +-1..3 neighbours (by article number) of the top 1..3 articles, the best
   settings by 2+-gold Recall@10;
3. how many missed golds cite or are cited by an article of the top K (the store's resolved
   references, `coal sparql` over coal:fromProvision/coal:refersTo as CSV), and Recall@10
   when up to two of those are put in at rank P;
4. per set, tier 2's and tier 3's lists together: the Recall@10 of choosing the better
   list per question (an oracle, the ceiling of any choice between them), of reciprocal
   rank fusion of the two, and of tier 2's list with at most M articles of one law in its
   top 10; and how C_final follows the number of gold articles (Pearson r).
"""
import argparse, collections, csv, itertools, json, re, statistics


def article(iri):
    m = re.match(r"(.*?/art_[^/]+)", iri)
    return m.group(1) if m else None


def law(iri):
    return iri.rsplit("/art_", 1)[0]


def number(iri):
    m = re.match(r"(.*)/art_(\d+)$", iri)
    return (m.group(1), int(m.group(2))) if m else None


def recall10(ranked, gold):
    top = set(ranked[:10])
    return sum(any(g in top for g in gs) for gs in gold) / len(gold)


def mean(f, items):
    return sum(f(x) for x in items) / len(items)


def rrf(lists, weights, k):
    score = collections.defaultdict(float)
    for ranked, w in zip(lists, weights):
        for i, iri in enumerate(ranked):
            score[iri] += w / (k + i + 1)
    return sorted(score, key=lambda x: -score[x])


def law_cap(ranked, m):
    top, count = [], collections.Counter()
    for iri in ranked:
        if len(top) == 10:
            break
        if count[law(iri)] < m:
            count[law(iri)] += 1
            top.append(iri)
    return top + [x for x in ranked if x not in top]


def both_tiers(rows):
    """Section 4: tier 2's and tier 3's lists (and article F1) of each question side by side."""
    for name in sorted({r["set"] for r in rows}):
        pairs = collections.defaultdict(dict)
        for r in rows:
            if r["set"] == name and r["gold"] > 0:
                pairs[r["id"]][r["variant"]] = r
        pairs = [p for p in pairs.values() if "tier 2" in p and "tier 3" in p]
        if not pairs:
            continue
        for label, chosen in (("all", pairs), ("2+ gold", [p for p in pairs if p["tier 2"]["gold"] >= 2])):
            r2 = lambda p: recall10(p["tier 2"]["ranked"], p["tier 2"]["gold_iris"])
            r3 = lambda p: recall10(p["tier 3"]["ranked"], p["tier 2"]["gold_iris"])
            line = (f"## {name}, {label} ({len(chosen)}): R@10 tier 2 {mean(r2, chosen):.3f}, "
                    f"tier 3 {mean(r3, chosen):.3f}, the better per question {mean(lambda p: max(r2(p), r3(p)), chosen):.3f}")
            fused = max((mean(lambda p: recall10(rrf([p["tier 2"]["ranked"], p["tier 3"]["ranked"]], [1 - w, w], k),
                                                 p["tier 2"]["gold_iris"]), chosen), w, k)
                        for w in (0.3, 0.5, 0.7) for k in (5, 20, 60))
            capped = max((mean(lambda p: recall10(law_cap(p["tier 2"]["ranked"], m), p["tier 2"]["gold_iris"]), chosen), m)
                         for m in (5, 6, 7, 8, 9))
            f2, f3 = (lambda p: p["tier 2"]["f1"]), (lambda p: p["tier 3"]["f1"])
            print(line)
            differ = sum(1 for p in chosen if abs(f2(p) - f3(p)) > 1e-9)
            print(f"  article F1 tier 2 {mean(f2, chosen):.3f}, tier 3 {mean(f3, chosen):.3f}, the better per "
                  f"question {mean(lambda p: max(f2(p), f3(p)), chosen):.3f} (what routing between them could reach; "
                  f"they differ on {differ} of {len(chosen)})")
            print("  best RRF of the two: R@10 %.3f (tier 3's weight %.1f, k %d)" % fused)
            print("  best cap per law on tier 2's top 10: R@10 %.3f (at most %d)" % capped)
        with_c = [p["tier 2"] for p in pairs if p["tier 2"].get("c_final") is not None]
        if len(with_c) > 2:
            r = statistics.correlation([x["c_final"] for x in with_c], [min(x["gold"], 5) for x in with_c])
            print(f"  C_final against the number of gold articles (capped at 5): r = {r:+.3f}")


def neighbour_bonus(ranked, k, w, d, decay):
    score = {iri: 1.0 / (i + 1) ** 0.5 for i, iri in enumerate(ranked)}
    out = dict(score)
    for i, iri in enumerate(ranked[:k]):
        a = number(iri)
        if not a:
            continue
        for step in range(1, d + 1):
            for n in (a[1] - step, a[1] + step):
                if n >= 1:
                    near = f"{a[0]}/art_{n}"
                    out[near] = out.get(near, 0) + w * score[iri] * decay ** (step - 1)
    return sorted(out, key=lambda x: -out[x])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-item", required=True)
    ap.add_argument("--cites", required=True)
    args = ap.parse_args()
    near = collections.defaultdict(set)
    for row in csv.DictReader(open(args.cites)):
        a, b = article(row["from"]), article(row["to"])
        if a and b and a != b:
            near[a].add(b)
            near[b].add(a)
    rows = [json.loads(l) for l in open(args.per_item)]
    for variant, name in sorted({(r["variant"], r["set"]) for r in rows}):
        items = [r for r in rows if r["variant"] == variant and r["set"] == name and r["gold"] > 0]
        multi = [r for r in items if r["gold"] >= 2]
        if not multi:
            continue
        where = collections.Counter()
        reach = collections.Counter()
        for r in multi:
            top = r["ranked"][:10]
            found_laws = {law(x) for x in top if any(x in g for g in r["gold_iris"])}
            top_laws = {law(x) for x in top[:3]}
            for gs in r["gold_iris"]:
                if any(g in top for g in gs):
                    where["top 10"] += 1
                    continue
                where["ranks 11-30" if any(g in r["ranked"] for g in gs) else "beyond 30"] += 1
                laws = {law(g) for g in gs}
                where["missed, law of a found gold" if laws & found_laws
                      else "missed, law of the top 3" if laws & top_laws else "missed, other law"] += 1
                for k in (1, 3, 5):
                    reach[f"top {k}"] += any(g in near[t] for t in top[:k] for g in gs)
        base = mean(lambda r: recall10(r["ranked"], r["gold_iris"]), multi)
        print(f"## {name}, {variant}: {len(multi)} questions with 2+ gold, R@10 {base:.3f}")
        print("gold articles:", dict(where))
        print("missed golds citing or cited by the top K:", dict(reach))
        grid = []
        for k, w, d, decay in itertools.product((1, 2, 3), (0.1, 0.2, 0.3, 0.5), (1, 2, 3), (0.5, 1.0)):
            m = mean(lambda r: recall10(neighbour_bonus(r["ranked"], k, w, d, decay), r["gold_iris"]), multi)
            a = mean(lambda r: recall10(neighbour_bonus(r["ranked"], k, w, d, decay), r["gold_iris"]), items)
            grid.append((m, a, k, w, d, decay))
        for g in sorted(grid, reverse=True)[:3]:
            print("neighbour bonus: 2+ gold R@10 %.3f, all %.3f (top %d, weight %.1f, +-%d, decay %.1f)" % g)
        grid = []
        for k, p in itertools.product((1, 2, 3), (3, 5, 8)):
            def put(r):
                ins = []
                for t in r["ranked"][:k]:
                    ins += [c for c in sorted(near[t]) if c not in r["ranked"][:p] and c not in ins]
                ins = ins[:2]
                rest = [x for x in r["ranked"] if x not in ins]
                return rest[:p] + ins + rest[p:]
            grid.append((mean(lambda r: recall10(put(r), r["gold_iris"]), multi),
                         mean(lambda r: recall10(put(r), r["gold_iris"]), items), k, p))
        for g in sorted(grid, reverse=True)[:3]:
            print("citation neighbours: 2+ gold R@10 %.3f, all %.3f (of the top %d, at rank %d)" % g)
    both_tiers(rows)


if __name__ == "__main__":
    main()
