#!/usr/bin/env python3
"""A reproducible random sample of a CSV's data rows (stdin → stdout), for hand checks:
the same seed gives the same rows. Standard library only.

    coal sparql --store S --file examples/fusion-merges.rq --format csv \\
        | python3 scripts/sample_csv.py --n 40 --seed 20261201
"""
import argparse
import csv
import random
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=20261201)
    args = ap.parse_args()
    reader = csv.reader(sys.stdin)
    header = next(reader)
    rows = list(reader)
    random.seed(args.seed)
    sample = random.sample(rows, min(args.n, len(rows)))
    out = csv.writer(sys.stdout)
    out.writerow(["#"] + header)
    for i, row in enumerate(sample, 1):
        out.writerow([i] + row)


if __name__ == "__main__":
    main()
