#!/usr/bin/env bash
# Why the statute-graph stage sorts in Rust and filters versions only once: the
# paragraphs query of kg-store/src/statute_graph.rs timed with `coal sparql` on a store
# (the whole-corpus one `make bench-incremental-all` leaves), with and without ORDER BY,
# and counted with and without the per-solution "latest version" filter. Each query is
# run once to warm the store, then timed.   scripts/bench_statute_graph_queries.sh COAL STORE
set -euo pipefail
coal=$1
store=$2
pattern='?a a coal:Article ; coal:inLaw ?v ; coal:contains ?p . ?p coal:number ?n .'
latest='FILTER NOT EXISTS { ?newer coal:supersedes ?v }'
run() {
  local name=$1 query=$2 file
  file=$(mktemp --suffix=.rq)
  printf '%s\n' "$query" >"$file"
  "$coal" sparql --store "$store" --format tsv --file "$file" >/dev/null
  /usr/bin/time -f "$name: %e s" "$coal" sparql --store "$store" --format tsv --file "$file" 2>&1 >/dev/null | tail -1
  rm -f "$file"
}
run "paragraph rows, ORDER BY ?p" "SELECT ?p ?a ?n WHERE { $pattern } ORDER BY ?p"
run "paragraph rows, unordered" "SELECT ?p ?a ?n WHERE { $pattern }"
run "paragraphs counted, latest-version filter" "SELECT (COUNT(*) AS ?c) WHERE { $pattern $latest }"
run "paragraphs counted, no filter" "SELECT (COUNT(*) AS ?c) WHERE { $pattern }"
