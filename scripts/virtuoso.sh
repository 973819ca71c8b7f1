#!/usr/bin/env bash
# A throw-away Virtuoso Open Source 7 (Debian's virtuoso-opensource) on loopback for the
# tests: a fresh database in DIR, the SPARQL user allowed to update so the Graph Store
# Protocol endpoint (/sparql-graph-crud) takes writes. Prints the HTTP base URL.
#   scripts/virtuoso.sh [DIR]
set -euo pipefail
dir=${1:-/tmp/coal-virtuoso}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
if [ -f "$dir/ports" ]; then
  read -r old_sql _ <"$dir/ports"
  isql-vt "$old_sql" dba dba exec="shutdown;" >/dev/null 2>&1 || true
  sleep 1
fi
rm -rf "$dir"
mkdir -p "$dir"
sql=$(free_port)
http=$(free_port)
echo "$sql $http" >"$dir/ports"
sed -e "s#/var/lib/virtuoso-opensource-7/db#$dir#g" \
    -e "s#^ServerPort *= *1111#ServerPort = 127.0.0.1:$sql#" \
    -e "s#^ServerPort *= *8890#ServerPort = 127.0.0.1:$http#" \
    -e "s#^NumberOfBuffers *=.*#NumberOfBuffers = 20000#" \
    -e "s#^MaxDirtyBuffers *=.*#MaxDirtyBuffers = 15000#" \
    /etc/virtuoso-opensource-7/virtuoso.ini >"$dir/virtuoso.ini"
(cd "$dir" && virtuoso-t +configfile "$dir/virtuoso.ini" +wait) >"$dir/start.log" 2>&1
isql-vt "$sql" dba dba exec="GRANT SPARQL_UPDATE TO \"SPARQL\"; DB.DBA.RDF_DEFAULT_USER_PERMS_SET ('nobody', 7);" >"$dir/grant.log"
echo "http://127.0.0.1:$http"
