#!/usr/bin/env bash
# Tier 3's weights (graph_path, graph_paragraph, graph_heading), the cost of a step in
# document order (graph_adjacent_cost; 100 prices it out) and the text matches seeding the
# walk (graph_anchors) on a small grid: forced tier 3's
# R@10, R@10 over questions with 2+ gold articles and article F1 on lecoqa.dev and
# lawbench-3-8.dev, each point a copy of coal.toml with the values replaced.
# Usage: scripts/graph_weights_grid.sh COAL STORE SHARED
# The lists come from GRAPH_PATHS, GRAPH_PARAGRAPHS, GRAPH_HEADINGS, ADJACENT_COSTS and GRAPH_ANCHORS
# (space-separated) when set; GRID_CONFIG names another base config (a drafting one:
# make graph-weights-grid-draft) and GRID_ARGS adds arguments to `coal eval answer`.
set -euo pipefail
coal=$1 store=$2 shared=$3
dir=$(mktemp -d)
for gp in ${GRAPH_PATHS:-0.0 0.15 0.3}; do for gpar in ${GRAPH_PARAGRAPHS:-0.5 1.0}; do
for gh in ${GRAPH_HEADINGS:-0.0 0.25}; do for adj in ${ADJACENT_COSTS:-1.0}; do
for anchors in ${GRAPH_ANCHORS:-5}; do
  cfg=$dir/c.toml
  declare -A value=([graph_path]=$gp [graph_paragraph]=$gpar [graph_heading]=$gh [graph_adjacent_cost]=$adj [graph_anchors]=$anchors)
  cp "${GRID_CONFIG:-coal.toml}" "$cfg"
  for k in "${!value[@]}"; do
    if grep -q "^$k = " "$cfg"; then sed -i "s/^$k = .*/$k = ${value[$k]}/" "$cfg"
    else sed -i "/^\[method\]$/a $k = ${value[$k]}" "$cfg"; fi
  done
  "$coal" eval answer --store "$store" --config "$cfg" --variants tier3 ${GRID_ARGS:-} \
    --set "$shared/eval/lecoqa.dev.jsonl" --set "$shared/eval/lawbench-3-8.dev.jsonl" --json > "$dir/r.json" 2>/dev/null
  python3 - "$dir/r.json" "$gp $gpar $gh $adj $anchors" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cells = " | ".join(
    f"{s}: R@10 {v['tier 3']['recall_at_10']:.3f}, 2+ gold R@10 {v['tier 3']['multi_recall_at_10']:.3f}, F1 {v['tier 3']['f1']:.3f}"
    for s, v in sorted(r.items()))
print(f"path/paragraph/heading/adjacent/anchors {sys.argv[2]} | {cells}")
PY
done; done; done; done; done
rm -rf "$dir"
