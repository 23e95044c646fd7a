#!/usr/bin/env bash
# Instruction counts (callgrind, one thread) of the lint bench, the review bench and a one-file
# lint, for one build; run it for two builds to compare them (BENCHMARKS.md).
#
#   benches/instructions.sh LINT_BENCH REVIEW_BENCH WINGUARD CHECKOUT
#
# LINT_BENCH and REVIEW_BENCH are the bench binaries `cargo bench --bench lint --bench review
# --no-run` builds (target/release/deps/lint-*, review-*), WINGUARD the release binary, CHECKOUT
# the checkout they were built from (the one-file lints read its testdata).
# Prints one line a measurement: its name and the instructions callgrind collected.
set -u
lint=$1 review=$2 winguard=$3 checkout=$4
. "$(dirname "$0")/callgrind.sh"
export RAYON_NUM_THREADS=1
cd "$checkout"
for only in setup lint parse; do
  n=$(WINGUARD_BENCH_MB=4 WINGUARD_BENCH_ONLY=$only \
      valgrind --tool=callgrind --callgrind-out-file=/dev/null "$lint" 2>&1 >/dev/null | collected)
  echo "lint-bench $only $n"
done
for case in validate validate-no-rules mutate; do
  echo "review-bench $case per-review $(per_call "$case" 'winguard::admission::review')"
done
# Reading the review's body into a document and dropping it: winguard's value tree owning its
# strings and borrowing them, and sonic-rs's arena document as the baseline (the bench's `read`,
# `read-borrowed` and `read-sonic` cases).
for case in read read-borrowed read-sonic; do
  echo "review-bench $case per-read $(per_call "$case" 'review::read_*')"
done
# A one-file lint, as pre-commit runs it: the built-in rules read back from the cache (a first
# run writes it) and, for comparison, compiled (WINGUARD_NO_CACHE).
export WINGUARD_CACHE_DIR
WINGUARD_CACHE_DIR=$(mktemp -d)
for file in testdata/cli/configmap.yaml testdata/cli/clean.yaml testdata/examples/iis-app.yaml; do
  "$winguard" lint "$file" >/dev/null 2>&1
  warm=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$winguard" lint "$file" 2>&1 \
    >/dev/null | collected)
  cold=$(WINGUARD_NO_CACHE=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$winguard" lint "$file" 2>&1 >/dev/null | collected)
  echo "one-file-lint $file cached $warm compiled $cold"
done
rm -rf "$WINGUARD_CACHE_DIR"
