#!/usr/bin/env bash
# `make bench-serve`: `coal serve` under load on loopback (wrk): requests/s and latency
# p50/p99 for /api/ask (the first 100 questions of a dev set, in turn) and a typical
# /query at 1, 8 and 32 connections, then 32 connections for 60 s on /api/ask; any
# non-2xx response or socket error is reported, and the server's CPU use (100% = one
# core busy). Then the HTTP overhead, paired: five rounds of /api/ask at 1 connection
# next to the same questions in-process (`coal bench ask`), medians of the rounds.
#   scripts/bench_serve.sh COAL STORE QUESTIONS.jsonl [SECONDS]
set -euo pipefail
coal=$1 store=$2 questions=$3 secs=${4:-10}
port=$((20000 + RANDOM % 20000))
base="http://127.0.0.1:$port"
"$coal" serve --store "$store" --bind "127.0.0.1:$port" >/tmp/coal-bench-serve.log 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.2; done
enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$1"; }
ask="$base/api/ask?q=$(enc '用人单位违法解除劳动合同的，应当支付多少赔偿金？')"
# wrk cycles through the questions' /api/ask paths (scripts/wrk_paths.lua).
export COAL_PATHS=/tmp/coal-bench-serve-paths.txt
python3 - "$questions" >"$COAL_PATHS" <<'PY'
import json, sys, urllib.parse
with open(sys.argv[1]) as f:
    for line in list(f)[:100]:
        print("/api/ask?q=" + urllib.parse.quote(json.loads(line)["question"]))
PY
query="$base/query?query=$(enc 'SELECT ?chapter ?heading (COUNT(?a) AS ?n) WHERE { ?law coal:shortName "劳动合同法"@zh ; coal:contains ?c . ?c a coal:Chapter ; coal:label ?chapter ; coal:heading ?heading . ?c coal:contains+ ?a . ?a a coal:Article } GROUP BY ?chapter ?heading')"
curl -sf "$ask" >/dev/null && curl -sf "$query" >/dev/null
tck=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
echo "| endpoint | connections | seconds | requests/s | p50 ms | p99 ms | errors | server CPU % |"
echo "|---|---|---|---|---|---|---|---|"
run() { # name url connections seconds [lua script]
  local out before after cpu
  before=$(cpu_ticks)
  out=$(wrk -t "$(( $3 < 2 ? 1 : 2 ))" -c "$3" -d "${4}s" --latency --timeout 30s ${5:+-s "$5"} "$2")
  local rps p50 p99 errors
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  errors=$(awk '/Non-2xx/ {n+=$NF} /Socket errors/ {gsub(",",""); n+=$4+$6+$8+$10} END {print n+0}' <<<"$out")
  after=$(cpu_ticks)
  cpu=$(( (after - before) * 100 / tck / $4 ))
  echo "| $1 | $3 | $4 | $rps | $p50 | $p99 | $errors | $cpu |"
}
lua="$(dirname "$0")/wrk_paths.lua"
for c in 1 8 32; do run /api/ask "$base" $c "$secs" "$lua"; done
for c in 1 8 32; do run /query "$query" $c "$secs"; done
run "/api/ask (soak)" "$base" 32 60 "$lua"
curl -sf "$base/healthz" >/dev/null && echo "still answering after the load: yes"
# Paired rounds: the machine's speed drifts by more than the overhead being measured.
http=() local_=()
for _ in 1 2 3 4 5; do
  http+=("$(wrk -t1 -c1 -d"${secs}s" --latency -s "$lua" "$base" | awk '$1=="50%" {v=$2; if (v ~ /us$/) {sub("us","",v); v/=1000} else sub("ms","",v); print v}')")
  local_+=("$("$coal" bench ask --store "$store" --set "$questions" --limit 100 | sed -n 's/^question → answer written as JSON .*: p50 \([0-9.]*\) ms.*/\1/p')")
done
kill $pid
median() { printf '%s\n' "$@" | sort -g | sed -n 3p; }
echo "/api/ask p50 at 1 connection, rounds: ${http[*]} ms; in-process (coal bench ask, the same questions, routed first, the answer written as JSON): ${local_[*]} ms"
echo "medians: HTTP $(median "${http[@]}") ms, in-process $(median "${local_[@]}") ms"
