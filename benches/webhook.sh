#!/usr/bin/env bash
# Loads `winguard serve` over TLS with keep-alive and, in the same run, a do-nothing TLS endpoint
# (nginx answering 200 to every POST) as the baseline: max reviews/s, p50/p99 latency at fixed
# rates, and the server's peak RSS. Figures go to BENCHMARKS.md.
#
# Needs: oha (`cargo install oha`), nginx (Debian `nginx-light`), python3.
# Options (env): DURATION (s, default 10), CONNECTIONS (default 32), RATES (default "1000 5000").
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10}
CONNECTIONS=${CONNECTIONS:-32}
RATES=${RATES:-1000 5000}
WINGUARD_PORT=18443
BASELINE_PORT=18444

# Built as the webhook image builds it (whole-program optimisation; see Cargo.toml).
cargo build --profile release-lto --bin winguard --quiet
work=$(mktemp -d)
cleanup() {
    [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# The review: a ~4.5 KB Pod CREATE as the API server sends it (compact JSON).
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":")), end="")' \
    testdata/admission/pod-windows-realistic-v1.json > "$work/review.json"
echo "review body: $(wc -c < "$work/review.json") bytes"

target/release-lto/winguard serve --self-signed --self-signed-dir "$work/certs" \
    --listen 127.0.0.1:$WINGUARD_PORT --log-format json 2> "$work/serve.log" &
server=$!
until grep -q "listening on" "$work/serve.log"; do sleep 0.1; done

mkdir -p "$work/nginx-logs"
cat > "$work/nginx.conf" <<EOF
worker_processes auto;
pid $work/nginx.pid;
error_log $work/nginx-logs/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $work/nginx-body;
    client_max_body_size 4m;
    client_body_buffer_size 64k;
    keepalive_requests 10000000;
    server {
        listen 127.0.0.1:$BASELINE_PORT ssl http2;
        ssl_certificate $work/certs/tls.crt;
        ssl_certificate_key $work/certs/tls.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / { return 200 '{}'; }
    }
}
EOF
nginx -c "$work/nginx.conf" -p "$work"

load() { # URL [extra oha args...] -> JSON summary line
    local url=$1; shift
    oha -z "${DURATION}s" -c "$CONNECTIONS" --no-tui --output-format json -m POST \
        -D "$work/review.json" -H "content-type: application/json" \
        --cacert "$work/certs/ca.crt" "$@" "$url" |
        python3 -c '
import json, sys
d = json.load(sys.stdin)
s, p = d["summary"], d["latencyPercentiles"]
codes = d.get("statusCodeDistribution", {})
rps, p50, p99, ok = s["requestsPerSec"], p["p50"] * 1000, p["p99"] * 1000, s["successRate"] * 100
print(f"{rps:.0f} req/s, p50 {p50:.2f} ms, p99 {p99:.2f} ms, success {ok:.1f}%, status {codes}")'
}

echo "== max throughput, $CONNECTIONS keep-alive connections, ${DURATION}s each"
echo "baseline (nginx, do-nothing): $(load https://localhost:$BASELINE_PORT/validate)"
echo "winguard /validate:           $(load https://localhost:$WINGUARD_PORT/validate)"
echo "winguard /mutate:             $(load https://localhost:$WINGUARD_PORT/mutate)"
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
