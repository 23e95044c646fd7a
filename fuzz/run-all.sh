#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 600), two at a time (one per core of a 2-core
# machine), each from a corpus in fuzz/corpus/<target> seeded with the inputs under
# testdata/fuzz/<target>/ and the repository's own test charts, manifests and reviews, with the
# nesting-heavy dictionaries of fuzz/dicts/. A crash is written to fuzz/artifacts/<target>/;
# copy it to testdata/fuzz/<target>/ so tests/fuzz_regressions.rs replays it. Each target's last
# libFuzzer lines go to fuzz/corpus/<target>.log.
#
#   bash fuzz/run-all.sh [SECONDS]        (needs a nightly toolchain and `cargo install cargo-fuzz`)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}

seed() { # target, then find arguments for more seeds
    local target=$1; shift
    mkdir -p "fuzz/corpus/$target"
    cp testdata/fuzz/"$target"/* "fuzz/corpus/$target/"
    find "$@" -type f -print0 | while IFS= read -r -d '' f; do
        cp "$f" "fuzz/corpus/$target/seed-$(printf '%s' "$f" | tr '/' '_')"
    done
}
seed template testdata/charts -path '*/templates/*'
# Templates that generate keys (RSA-4096, DSA) take tens of seconds a run under the sanitizer:
# libFuzzer would report them as time-outs and stop. Key generation is the crypto crates'.
grep -lE 'gen(CA|PrivateKey|SelfSignedCert|SignedCert)' fuzz/corpus/template/* | xargs -r rm --
seed values testdata/charts -name 'values*.yaml'
seed manifest testdata/rules testdata/examples testdata/real-world -name '*.yaml'
seed admission testdata/admission -name '*.json'
seed expr testdata/fuzz/expr -name 'seed-*'
seed yaml_readers testdata/charts testdata/examples testdata/real-world -name '*.yaml'

cargo +nightly fuzz build
run() { # target, dictionary
    cargo +nightly fuzz run "$1" "fuzz/corpus/$1" -- -max_total_time="$seconds" \
        -rss_limit_mb=4096 -timeout=20 -dict="fuzz/dicts/$2.dict" -print_final_stats=1 \
        >"fuzz/corpus/$1.log" 2>&1 || echo "$1: stopped with a finding (fuzz/artifacts/$1/)"
    tail -n 14 "fuzz/corpus/$1.log"
}
run template template & run values yaml & wait
run manifest yaml & run admission yaml & wait
run expr expr & run yaml_readers yaml & wait
