# Shared by benches/webhook.sh and benches/ceiling.sh (sourced, not run).

# The review: a ~4.5 KB Pod CREATE as the API server sends it (compact JSON), written to $1.
review_body() {
    python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":")), end="")' \
        testdata/admission/pod-windows-realistic-v1.json > "$1"
}

# Starts `winguard serve` (binary $1) on 127.0.0.1:$2 with a self-signed certificate in $3,
# logging JSON to $4, with any further arguments; waits until it listens. Sets $server_pid.
start_winguard() {
    local bin=$1 port=$2 certs=$3 log=$4
    shift 4
    "$bin" serve --self-signed --self-signed-dir "$certs" --listen "127.0.0.1:$port" \
        --log-format json "$@" 2> "$log" &
    server_pid=$!
    until grep -q "listening on" "$log"; do sleep 0.1; done
}

# The do-nothing baseline: nginx in the directory $1, on 127.0.0.1:$2 over TLS with the
# certificate in $3 (tls.crt, tls.key), answering `200 {}` to every request.
start_nginx() {
    local dir=$1 port=$2 certs=$3
    mkdir -p "$dir/nginx-logs"
    cat > "$dir/nginx.conf" <<NGINX
worker_processes auto;
pid $dir/nginx.pid;
error_log $dir/nginx-logs/error.log;
events { worker_connections 4096; }
http {
    access_log off;
    client_body_temp_path $dir/nginx-body;
    client_max_body_size 4m;
    client_body_buffer_size 64k;
    keepalive_requests 10000000;
    server {
        listen 127.0.0.1:$port ssl http2;
        ssl_certificate $certs/tls.crt;
        ssl_certificate_key $certs/tls.key;
        ssl_protocols TLSv1.2 TLSv1.3;
        location / { return 200 '{}'; }
    }
}
NGINX
    nginx -c "$dir/nginx.conf" -p "$dir"
}

# Loads URL ($1) with oha for $DURATION seconds over $connections (default $CONNECTIONS)
# keep-alive connections, POSTing $work/review.json and trusting $work/certs/ca.crt; further
# arguments go to oha. Prints one summary line.
load() {
    local url=$1; shift
    oha -z "${DURATION}s" -c "${connections:-$CONNECTIONS}" --no-tui --output-format json -m POST \
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
