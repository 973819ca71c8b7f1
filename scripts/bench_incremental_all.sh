#!/usr/bin/env bash
# The whole LawRefBook folder built (every index but the embeddings; EMBED=1: with them,
# and so with the domains), then rebuilt after one law changed: a copy of the corpus as a
# tree of links, with 劳动合同法's file a real copy whose 第一条 is reworded. Prints both
# builds' stage times and peak memory (each build's whole output in WORK_DIR/builds.log).
#   [VERIFY=1] [EMBED=1] scripts/bench_incremental_all.sh COAL CORPUS [WORK_DIR]
set -euo pipefail
coal=$1
corpus=$(realpath "$2")
work=${3:-/tmp/coal-bench-incremental-all}
changed="社会法/劳动合同法(2012-12-28).md"
rm -rf "$work"
mkdir -p "$work"
cp -rs "$corpus/." "$work/corpus/"
report() { tee -a "$work/builds.log" | grep -E "^build |reused|embeddings:|款 passages|vector index written|domains:|time:|Maximum resident|Elapsed"; }
embed=--no-embeddings
[ "${EMBED:-0}" = 1 ] && embed=
echo "== full build"
/usr/bin/time -v "$coal" build $embed --corpus "$work/corpus" --store "$work/store" 2>&1 | report
rm "$work/corpus/$changed"
sed '0,/为了完善劳动合同制度/s//为了健全劳动合同制度/' "$corpus/$changed" >"$work/corpus/$changed"
if cmp -s "$corpus/$changed" "$work/corpus/$changed"; then
  echo "the rewording of $changed did not apply" >&2
  exit 1
fi
echo "== after one law changed ($changed, 第一条 reworded)"
/usr/bin/time -v "$coal" build $embed --corpus "$work/corpus" --store "$work/store" 2>&1 | report
du -sh "$work/store"
# VERIFY=1: the changed corpus built from scratch too, and the rebuild's statute graph and
# BM25 hits (scores included) compared with it.
if [ "${VERIFY:-0}" = 1 ]; then
  echo "== the changed corpus from scratch, compared"
  "$coal" build $embed --corpus "$work/corpus" --store "$work/scratch" >/dev/null
  current() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["build"])' "$1/CURRENT"; }
  cmp "$work/store/builds/$(current "$work/store")/statute-graph.json" \
    "$work/scratch/builds/$(current "$work/scratch")/statute-graph.json"
  echo "statute-graph.json: identical"
  for q in 用人单位解除劳动合同应当支付经济补偿 交通事故责任 妇女权益保障 合同无效的情形 劳动合同法第一条; do
    for s in store scratch; do
      "$coal" search --store "$work/$s" --mode bm25 --json --k 50 "$q" |
        python3 -c 'import json,sys; [print(json.dumps(h, sort_keys=True, ensure_ascii=False)) for h in json.load(sys.stdin)]' |
        sort >"$work/hits-$s.txt"
    done
    cmp "$work/hits-store.txt" "$work/hits-scratch.txt"
  done
  echo "BM25 top 50 of 5 questions, scores included: identical"
fi
