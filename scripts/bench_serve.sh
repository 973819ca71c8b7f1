#!/usr/bin/env bash
# `make bench-serve`: `coal serve` under load on loopback (wrk): requests/s and latency
# p50/p99 for /api/ask and a typical /query at 1, 8 and 32 connections, then 32
# connections for 60 s on /api/ask; any non-2xx response or socket error is reported.
#   scripts/bench_serve.sh COAL STORE [SECONDS]
set -euo pipefail
coal=$1 store=$2 secs=${3:-10}
port=$((20000 + RANDOM % 20000))
base="http://127.0.0.1:$port"
"$coal" serve --store "$store" --bind "127.0.0.1:$port" >/tmp/coal-bench-serve.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.2; done
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
ask="$base/api/ask?q=$(enc '用人单位违法解除劳动合同的，应当支付多少赔偿金？')"
query="$base/query?query=$(enc 'SELECT ?chapter ?heading (COUNT(?a) AS ?n) WHERE { ?law coal:shortName "劳动合同法"@zh ; coal:contains ?c . ?c a coal:Chapter ; coal:label ?chapter ; coal:heading ?heading . ?c coal:contains+ ?a . ?a a coal:Article } GROUP BY ?chapter ?heading')"
curl -sf "$ask" >/dev/null && curl -sf "$query" >/dev/null
echo "| endpoint | connections | seconds | requests/s | p50 ms | p99 ms | errors |"
echo "|---|---|---|---|---|---|---|"
run() { # name url connections seconds
  local out
  out=$(wrk -t "$(( $3 < 2 ? 1 : 2 ))" -c "$3" -d "${4}s" --latency --timeout 30s "$2")
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx/ {n+=$NF} /Socket errors/ {gsub(",",""); n+=$4+$6+$8+$10} END {print n+0}' <<<"$out")
  echo "| $1 | $3 | $4 | $rps | $p50 | $p99 | $errors |"
}
for c in 1 8 32; do run /api/ask "$ask" $c "$secs"; done
for c in 1 8 32; do run /query "$query" $c "$secs"; done
run "/api/ask (soak)" "$ask" 32 60
curl -sf "$base/healthz" >/dev/null && echo "still answering after the load: yes"
