#!/usr/bin/env python3
"""How often the question's topic links hold a gold article.

Reads `coal eval answer --per-item` lines (their `links` field: `kind IRI` per link) and
the store's article → topic membership (a SPARQL CSV of ?article ?topic), and prints per
set: questions with a topic link, topics linked a question, the share whose first linked
topic and whose linked topics hold at least one gold article, and the latter share for
as many topics drawn at random by size, so a linking change can be judged against chance.

Usage: topic_link_analysis.py --per-item FILE --topics CSV
"""
import argparse
import csv
import json
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-item", required=True)
    ap.add_argument("--topics", required=True, help="SPARQL CSV: article,topic")
    args = ap.parse_args()

    members = defaultdict(set)
    topic_of = defaultdict(set)
    with open(args.topics, newline="") as f:
        for row in csv.DictReader(f):
            members[row["topic"]].add(row["article"])
            topic_of[row["article"]].add(row["topic"])
    total_articles = sum(len(m) for m in members.values())
    if not members:
        raise SystemExit(f"{args.topics}: no topic memberships")

    stats = defaultdict(
        lambda: {"questions": 0, "linked": 0, "topics": 0, "first": 0, "hit": 0, "chance": 0.0}
    )
    seen = set()
    with open(args.per_item) as f:
        for line in f:
            item = json.loads(line)
            key = (item["set"], item["id"])
            if key in seen:  # one line per variant; links do not depend on the tier
                continue
            seen.add(key)
            s = stats[item["set"]]
            s["questions"] += 1
            topics = [x.split(" ", 1)[1] for x in item["links"] if x.startswith("topic ")]
            if not topics:
                continue
            s["linked"] += 1
            gold_topics = set()
            for alternatives in item["gold_iris"]:
                for iri in alternatives:
                    gold_topics |= topic_of.get(iri, set())
            s["topics"] += len(topics)
            s["first"] += topics[0] in gold_topics  # links come best first
            s["hit"] += bool(gold_topics & set(topics))
            # Chance: as many topics drawn by size, the share holding a gold topic.
            share = sum(len(members[t]) for t in gold_topics) / total_articles
            s["chance"] += 1 - (1 - share) ** len(topics)

    print(
        "| set | questions | with a topic link | topics a question "
        "| first topic holds a gold article | any linked topic does | by chance |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, s in sorted(stats.items()):
        linked = max(s["linked"], 1)
        print(
            f"| {name} | {s['questions']} | {s['linked']} | {s['topics'] / linked:.2f} "
            f"| {s['first'] / linked:.3f} | {s['hit'] / linked:.3f} "
            f"| {s['chance'] / linked:.3f} |"
        )


if __name__ == "__main__":
    main()
