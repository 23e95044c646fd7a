#!/usr/bin/env bash
# Loads `winguard serve` over TLS with keep-alive and, in the same run, a do-nothing TLS endpoint
# (nginx answering 200 to every POST) as the baseline: max reviews/s, p50/p99 latency at fixed
# rates, and the server's peak RSS. Figures go to BENCHMARKS.md.
#
# Needs: oha (`cargo install oha`), nginx (Debian `nginx-light`), python3.
# Options (env): DURATION (s, default 10), CONNECTIONS (default 32), RATES (default "1000 5000"),
# H2_CONNECTIONS and H2_STREAMS (HTTP/2 connections and streams on each, default 8 and 16).
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
RATES=${RATES:-1000 5000}
H2_CONNECTIONS=${H2_CONNECTIONS:-8}
H2_STREAMS=${H2_STREAMS:-16}
WINGUARD_PORT=18443
BASELINE_PORT=18444

# Built as the webhook image builds it (whole-program optimisation; see Cargo.toml).
WINGUARD_PIE=1 cargo build --profile release-lto --bin winguard --quiet
work=$(mktemp -d)
cleanup() {
    [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

review_body "$work/review.json"
echo "review body: $(wc -c < "$work/review.json") bytes"

start_winguard target/release-lto/winguard $WINGUARD_PORT "$work/certs" "$work/serve.log"
server=$server_pid

start_nginx "$work" $BASELINE_PORT "$work/certs"


echo "== max throughput, $CONNECTIONS keep-alive connections, ${DURATION}s each"
echo "baseline (nginx, do-nothing): $(load https://localhost:$BASELINE_PORT/validate)"
echo "winguard /validate:           $(load https://localhost:$WINGUARD_PORT/validate)"
echo "winguard /mutate:             $(load https://localhost:$WINGUARD_PORT/mutate)"
# The API server's webhook client negotiates HTTP/2 (ALPN) when the webhook offers it, as
# winguard does: many reviews in flight on few connections.
echo "== max throughput over HTTP/2, $H2_CONNECTIONS connections x $H2_STREAMS streams, ${DURATION}s each"
h2=(--http2 -p "$H2_STREAMS")
echo "baseline (nginx, do-nothing): $(connections=$H2_CONNECTIONS load https://localhost:$BASELINE_PORT/validate "${h2[@]}")"
echo "winguard /validate:           $(connections=$H2_CONNECTIONS load https://localhost:$WINGUARD_PORT/validate "${h2[@]}")"
# The server logs each review's own latency (body read to response written): percentiles of the
# lines a phase added tell the server's share apart from the load tool's queueing on 2 cores.
server_latency() { # FIRST_LINE -> "server p50/p99/max"
    tail -n +"$1" "$work/serve.log" | python3 -c '
import json, sys
lat = sorted(json.loads(l)["latency_us"] for l in sys.stdin if "\"latency_us\"" in l)
if lat:
    q = lambda f: lat[min(len(lat) - 1, int(len(lat) * f))] / 1000
    print(f"server-side p50 {q(0.5):.2f} ms, p99 {q(0.99):.2f} ms, max {lat[-1] / 1000:.2f} ms")'
}
# At a fixed rate, two latencies: as the client saw each request (sent to answered), and
# corrected for coordinated omission (from when the request was due: the load tool's own delays in
# sending count too; on 2 shared cores those dominate the tail). The baseline under the same
# schedule shows what the machine and the load tool add by themselves.
for rate in $RATES; do
    echo "== at $rate requests/s"
    first=$(($(wc -l < "$work/serve.log") + 1))
    echo "winguard /validate, as sent:  $(load https://localhost:$WINGUARD_PORT/validate -q "$rate")"
    echo "winguard /validate, corrected: $(load https://localhost:$WINGUARD_PORT/validate -q "$rate" --latency-correction)"
    echo "   both phases, $(server_latency "$first")"
    echo "baseline, as sent:            $(load https://localhost:$BASELINE_PORT/validate -q "$rate")"
    echo "baseline, corrected:          $(load https://localhost:$BASELINE_PORT/validate -q "$rate" --latency-correction)"
done
echo "== winguard peak RSS: $(grep VmHWM /proc/$server/status | awk '{print $2, $3}')"
