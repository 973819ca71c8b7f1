#!/usr/bin/env bash
# Tier 3's weights (graph_path, graph_paragraph, graph_heading) on a small grid: forced
# tier 3's R@10, R@10 over questions with 2+ gold articles and article F1 on lecoqa.dev and
# lawbench-3-8.dev, each point a copy of coal.toml with the three values replaced.
# Usage: scripts/graph_weights_grid.sh COAL STORE SHARED
set -euo pipefail
coal=$1 store=$2 shared=$3
dir=$(mktemp -d)
for gp in 0.0 0.15 0.3; do for gpar in 0.5 1.0; do for gh in 0.0 0.25; do
  cfg=$dir/c.toml
  sed -e "s/^graph_path = .*/graph_path = $gp/" -e "s/^graph_paragraph = .*/graph_paragraph = $gpar/" \
      -e "s/^graph_heading = .*/graph_heading = $gh/" coal.toml > "$cfg"
  for k in graph_path graph_paragraph graph_heading; do
    grep -q "^$k = " "$cfg" || echo "$k = $(case $k in graph_path) echo $gp;; graph_paragraph) echo $gpar;; *) echo $gh;; esac)" >> "$cfg"
  done
  "$coal" eval answer --store "$store" --config "$cfg" --variants tier3 \
    --set "$shared/eval/lecoqa.dev.jsonl" --set "$shared/eval/lawbench-3-8.dev.jsonl" --json > "$dir/r.json" 2>/dev/null
  python3 - "$dir/r.json" "$gp $gpar $gh" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cells = " | ".join(
    f"{s}: R@10 {v['tier 3']['recall_at_10']:.3f}, 2+ gold R@10 {v['tier 3']['multi_recall_at_10']:.3f}, F1 {v['tier 3']['f1']:.3f}"
    for s, v in sorted(r.items()))
print(f"path/paragraph/heading {sys.argv[2]} | {cells}")
PY
done; done; done
rm -rf "$dir"
