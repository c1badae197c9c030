#!/usr/bin/env bash
# Load figure of `dtb serve` (README, "The explorer"): 100 concurrent connections over
# English 2-5 tables, rotating over 1,000 positions (english5-fens.txt: random legal 3-5
# piece positions, every one answered 200), for a duration that gives 100,000 requests or
# more. Needs wrk (apt-get install wrk) and a release build:
#   cargo build --release --bin dtb
#   target/release/dtb gen --variant english --pieces 5 --out /tmp/english5
#   serve/load/wrk.sh /tmp/english5 [SECONDS]
set -euo pipefail
dir=$1
secs=${2:-6}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
"$root/target/release/dtb" serve --dir "$dir" --variant english --listen 127.0.0.1:0 > "$work/out" &
server=$!
for _ in $(seq 50); do grep -q listening "$work/out" 2>/dev/null && break; sleep 0.1; done
addr=$(sed -n 's|.*http://\([^/]*\)/.*|\1|p' "$work/out")
{
    echo 'local fens = {'
    sed -e 's/:/%3A/g' -e 's/.*/"&",/' "$here/english5-fens.txt"
    echo '}'
    cat <<'LUA'
local counter = 0
function request()
  counter = counter + 1
  return wrk.format("GET", "/api/v1/english?fen=" .. fens[(counter % #fens) + 1])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("requests %d in %.2f s: %.0f/s; p50 %.2f ms, p99 %.2f ms, max %.2f ms; errors: connect %d read %d write %d status %d timeout %d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000,
    e.connect, e.read, e.write, e.status, e.timeout))
end
LUA
} > "$work/load.lua"
uptime
wrk -t2 -c100 -d"${secs}s" --timeout 10s --latency -s "$work/load.lua" "http://$addr"
