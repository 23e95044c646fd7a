#!/usr/bin/env bash
# How much of the do-nothing baseline the webhook's HTTP/TLS stack leaves to the review itself.
# In one window, interleaved (this machine's speed drifts by a third within minutes), max
# throughput of:
#   - nginx answering `200 {}` (the baseline of benches/webhook.sh);
#   - winguard with the review replaced by a constant answer (benches/constant-answer.patch,
#     applied to a copy of HEAD): TLS, HTTP, body read, metrics and the log line, no review;
#   - winguard with every rule off: the review read, shape-checked and answered, no rule run;
#   - winguard as shipped.
# All winguard builds use the `release-lto` profile, as benches/webhook.sh does.
#
# Needs what benches/webhook.sh needs, and git. The patched copy builds in target/ceiling
# (about 7 minutes the first time). Options (env): DURATION (s, default 5), CONNECTIONS
# (default 32), ROUNDS (default 3).
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/common.sh
DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-32}
ROUNDS=${ROUNDS:-3}
BASELINE_PORT=18444
SHIPPED_PORT=18445
NO_RULES_PORT=18446
CONSTANT_PORT=18447

work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
    git worktree remove --force "$work/constant" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Linked as the image links it (WINGUARD_PIE=1), like every build here.
WINGUARD_PIE=1 cargo build --profile release-lto --bin winguard --quiet
git worktree add --quiet --detach "$work/constant" HEAD
git -C "$work/constant" apply "$PWD/benches/constant-answer.patch"
WINGUARD_PIE=1 CARGO_TARGET_DIR="$PWD/target/ceiling" cargo build --manifest-path "$work/constant/Cargo.toml" \
    --profile release-lto --bin winguard --quiet

# Every rule off, from the rule list.
{
    echo "rules:"
    target/release-lto/winguard rules | awk '{print "  " $1 ": off"}'
} > "$work/no-rules.yaml"

review_body "$work/review.json"
start_winguard target/release-lto/winguard $SHIPPED_PORT "$work/certs" "$work/shipped.log"
pids+=("$server_pid")
start_winguard target/release-lto/winguard $NO_RULES_PORT "$work/certs" "$work/no-rules.log" \
    --config "$work/no-rules.yaml"
pids+=("$server_pid")
start_winguard target/ceiling/release-lto/winguard $CONSTANT_PORT "$work/certs" "$work/constant.log"
pids+=("$server_pid")
start_nginx "$work" $BASELINE_PORT "$work/certs"

rate() { # URL -> req/s
    load "$1" | awk '{print $1}'
}
percent() { python3 -c "print(f'{100 * $1 / $2:.0f}%')"; }
echo "req/s, $CONNECTIONS keep-alive connections, ${DURATION}s each; % of the baseline in the same round"
for round in $(seq "$ROUNDS"); do
    baseline=$(rate https://localhost:$BASELINE_PORT/validate)
    constant=$(rate https://localhost:$CONSTANT_PORT/validate)
    no_rules=$(rate https://localhost:$NO_RULES_PORT/validate)
    shipped=$(rate https://localhost:$SHIPPED_PORT/validate)
    echo "round $round: baseline $baseline | constant answer $constant ($(percent "$constant" "$baseline"))" \
        "| every rule off $no_rules ($(percent "$no_rules" "$baseline"))" \
        "| shipped $shipped ($(percent "$shipped" "$baseline"))"
done
