#!/usr/bin/env bash
# The whole LawRefBook folder built (every index but the embeddings), then rebuilt after
# one law changed: a copy of the corpus as a tree of links, with 劳动合同法's file a real
# copy whose 第一条 is reworded. Prints both builds' stage times and peak memory.
#   scripts/bench_incremental_all.sh COAL CORPUS [WORK_DIR]
set -euo pipefail
coal=$1
corpus=$(realpath "$2")
work=${3:-/tmp/coal-bench-incremental-all}
changed="社会法/劳动合同法(2012-12-28).md"
rm -rf "$work"
mkdir -p "$work"
cp -rs "$corpus/." "$work/corpus/"
report() { grep -E "^build |reused|time:|Maximum resident|Elapsed"; }
echo "== full build"
/usr/bin/time -v "$coal" build --no-embeddings --corpus "$work/corpus" --store "$work/store" 2>&1 | report
rm "$work/corpus/$changed"
sed '0,/为了完善劳动合同制度/s//为了健全劳动合同制度/' "$corpus/$changed" >"$work/corpus/$changed"
if cmp -s "$corpus/$changed" "$work/corpus/$changed"; then
  echo "the rewording of $changed did not apply" >&2
  exit 1
fi
echo "== after one law changed ($changed, 第一条 reworded)"
/usr/bin/time -v "$coal" build --no-embeddings --corpus "$work/corpus" --store "$work/store" 2>&1 | report
du -sh "$work/store"
