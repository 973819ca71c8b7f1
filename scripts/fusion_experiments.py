#!/usr/bin/env python3
"""Fusion experiments on candidate lists dumped by `coal eval retrieval --dump`.

Re-scores each question's BM25, bigram-BM25 and dense candidates (top 100 each, latest
versions) in several ways and prints Recall@10 per set: the method's hybrid and its
variants, the priors that were tried and not kept, and the re-ranking tier 2 uses
(query-engine/src/rerank.rs, without tier 2's citation refinement), also on the even and
odd halves of each set. Standard library only.

    coal eval retrieval --store S --set A.jsonl --set B.jsonl --dump /tmp/dump.jsonl
    python3 scripts/fusion_experiments.py --dump /tmp/dump.jsonl --store S

`make fusion-experiments` does both on the eval profile.
"""
import argparse
import collections
import json
import math
import os
import statistics

N = 100


def minmax(d):
    if not d:
        return {}
    lo, hi = min(d.values()), max(d.values())
    if hi - lo < 1e-12:
        return {k: 1.0 for k in d}
    return {k: (v - lo) / (hi - lo) for k, v in d.items()}


def zscore(d):
    v = list(d.values())
    m, s = statistics.mean(v), statistics.pstdev(v) or 1.0
    return {k: (x - m) / s for k, x in d.items()}


def ranked(scores):
    return [k for k, _ in sorted(scores.items(), key=lambda x: (-x[1], x[0]))]


def recall_at_10(order, gold):
    top = set(order[:10])
    return sum(1 for g in gold if top & set(g)) / len(gold)


class Graph:
    """The parts of the build's statute graph the re-ranking uses (`statute-graph.json`;
    `retrieval-graph.json` of builds before it)."""

    def __init__(self, store):
        build = json.load(open(os.path.join(store, "CURRENT")))["build"]
        folder = os.path.join(store, "builds", build)
        if os.path.exists(os.path.join(folder, "statute-graph.json")):
            arts, cites = self._statute_graph(os.path.join(folder, "statute-graph.json"))
        else:
            g = json.load(open(os.path.join(folder, "retrieval-graph.json")))
            arts = [(a["iri"], a["parent"], a["order"]) for a in g["articles"]]
            cites = {(arts[a][0], arts[t][0]) for a, t in g["cites"]}
        self.parent = {iri: parent for iri, parent, _ in arts}
        # An article's law version: its IRI without the article segment.
        self.law = {iri: iri.rsplit("/", 1)[0] for iri, _, _ in arts}
        cited_by = collections.Counter(t for _, t in cites)
        top = max(cited_by.values()) if cited_by else 0
        self.centrality = {
            iri: (math.log1p(cited_by[iri]) / math.log1p(top) if top else 0.0)
            for iri, _, _ in arts
        }
        by_parent = collections.defaultdict(list)
        for iri, parent, order in arts:
            by_parent[parent].append((order, iri))
        self.neighbours = {}
        for kids in by_parent.values():
            kids.sort()
            for j, (_, iri) in enumerate(kids):
                self.neighbours[iri] = [kids[x][1] for x in (j - 1, j + 1) if 0 <= x < len(kids)]

    @staticmethod
    def _statute_graph(path):
        """(article IRI, parent IRI, order) and distinct (citing, cited) article pairs."""
        g = json.load(open(path))
        nodes, laws = g["nodes"], g["laws"]
        memo = {}

        def iri(i):
            if i not in memo:
                n = nodes[i]
                if n["kind"] == "law" or n.get("parent") is None:
                    memo[i] = n["segment"]
                elif n["kind"] == "article":
                    memo[i] = laws[n["law"]]["version_iri"] + "/" + n["segment"]
                else:
                    memo[i] = iri(n["parent"]) + "/" + n["segment"]
            return memo[i]

        def article(i):
            while i is not None and nodes[i]["kind"] in ("paragraph", "item"):
                i = nodes[i]["parent"]
            return i if i is not None and nodes[i]["kind"] == "article" else None

        arts = [
            (iri(i), iri(n["parent"]), n["order"])
            for i, n in enumerate(nodes)
            if n["kind"] == "article"
        ]
        cites = set()
        for f, t in g["cites"]:
            a, b = article(f), article(t)
            if a is not None and b is not None and a != b:
                cites.add((iri(a), iri(b)))
        return arts, cites


def lists(r, norm=minmax):
    return tuple(norm(dict((i, s) for i, s in r[name][:N])) for name in ("dense", "bm25", "bigram"))


def weighted(r, wd, wb, wg, norm=minmax):
    d, b, g = lists(r, norm)
    floor = {id(x): (min(x.values()) if norm is zscore and x else 0.0) for x in (d, b, g)}
    keys = set(d) | set(b) | (set(g) if wg else set())
    return {
        k: wd * d.get(k, floor[id(d)]) + wb * b.get(k, floor[id(b)]) + wg * g.get(k, floor[id(g)])
        for k in keys
    }


def rrf(r, wd=0.7):
    out = collections.defaultdict(float)
    for name, w in (("dense", wd), ("bm25", 1 - wd)):
        for p, (i, _) in enumerate(r[name][:N]):
            out[i] += w / (60 + p)
    return out


def group_bonus(scores, key, weight, top=3):
    groups = collections.defaultdict(list)
    for k, v in scores.items():
        g = key(k)
        if g is not None:
            groups[g].append(v)
    agg = minmax({g: sum(sorted(v, reverse=True)[:top]) for g, v in groups.items()})
    return {k: v + weight * agg.get(key(k), 0.0) for k, v in scores.items()}


def neighbour_smoothing(scores, graph, weight):
    return {
        k: v + weight * max([scores.get(n, 0.0) for n in graph.neighbours.get(k, [])] or [0.0])
        for k, v in scores.items()
    }


def rerank(r, graph, wd=0.5, wb=0.2, wg=0.2, wc=0.2, ws=0.1):
    # The defaults of query-engine/src/method.rs; rerank.rs also divides by the weights'
    # sum, which changes no ranking.
    s = weighted(r, wd, wb, wg)
    s = group_bonus(s, graph.parent.get, ws)
    return {k: v + wc * graph.centrality.get(k, 0.0) for k, v in s.items()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dump", required=True)
    ap.add_argument("--store", required=True)
    args = ap.parse_args()
    graph = Graph(args.store)
    rows = [json.loads(line) for line in open(args.dump)]
    rows = [r for r in rows if r["gold"]]
    sets = sorted({os.path.basename(r["set"]).removesuffix(".jsonl") for r in rows})

    def evaluate(name, fn, subset=None):
        by = collections.defaultdict(list)
        for i, r in enumerate(rows):
            if subset is not None and i % 2 != subset:
                continue
            by[os.path.basename(r["set"]).removesuffix(".jsonl")].append(
                recall_at_10(ranked(fn(r)), r["gold"])
            )
        cells = " | ".join(f"{sum(by[s]) / len(by[s]):.3f}" if by[s] else "–" for s in sets)
        print(f"| {name} | {cells} |")

    print("| Recall@10 | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    evaluate("hybrid 0.7·dense + 0.3·BM25 (the method's)", lambda r: weighted(r, 0.7, 0.3, 0))
    for wd in (0.5, 0.6, 0.8):
        evaluate(f"hybrid, dense weight {wd}", lambda r, wd=wd: weighted(r, wd, 1 - wd, 0))
    evaluate("hybrid, z-scores", lambda r: weighted(r, 0.7, 0.3, 0, zscore))
    evaluate("reciprocal ranks (0.7/0.3)", rrf)
    for w in (0.1, 0.3):
        evaluate(
            f"hybrid + {w}·law prior",
            lambda r, w=w: group_bonus(weighted(r, 0.7, 0.3, 0), graph.law.get, w),
        )
        evaluate(
            f"hybrid + {w}·neighbour smoothing",
            lambda r, w=w: neighbour_smoothing(weighted(r, 0.7, 0.3, 0), graph, w),
        )
    evaluate("bigram BM25 alone", lambda r: dict((i, s) for i, s in r["bigram"][:N]))
    evaluate("0.5·dense + 0.2·BM25 + 0.2·bigram", lambda r: weighted(r, 0.5, 0.2, 0.2))
    evaluate("  + 0.2·centrality", lambda r: rerank(r, graph, ws=0.0))
    evaluate("  + 0.1·section = tier 2's re-ranking", lambda r: rerank(r, graph))
    for half in (0, 1):
        label = "even" if half == 0 else "odd"
        evaluate(f"{label} items: hybrid", lambda r: weighted(r, 0.7, 0.3, 0), half)
        evaluate(f"{label} items: re-ranking", lambda r: rerank(r, graph), half)


if __name__ == "__main__":
    main()
