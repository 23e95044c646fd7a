#!/usr/bin/env bash
# Reproduces the end-to-end figures in BENCHMARKS.md: winguard's CLI on the generated corpus, the
# pre-commit case (one small file, start-up included), and checkov's Kubernetes scan on the same
# files. Needs: cargo, python3; `pip install checkov` for the comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${WINGUARD_BENCH_MB:-64}
DIR=${WINGUARD_BENCH_DIR:-/tmp/winguard-corpus-$MB}
CHECKOV_FILES=${CHECKOV_FILES:-4}   # checkov takes ~10 s per MB: compare on a subset

echo "== in-process: parse only vs full lint ($MB MiB)"
WINGUARD_BENCH_MB=$MB WINGUARD_BENCH_DIR=$DIR cargo bench --bench lint 2>/dev/null | tail -4

cargo build --release --quiet
BIN=target/release/winguard

echo "== CLI on the whole corpus (wall, peak RSS)"
/usr/bin/time -f "winguard lint: %e s, %M kB" $BIN lint "$DIR" --format json --fail-on never > /dev/null

echo "== pre-commit case: one small file, 200 runs"
python3 - "$BIN" <<'PY'
import subprocess, sys, time
for f in ["testdata/cli/clean.yaml", "testdata/examples/iis-app.yaml"]:
    ts = []
    for _ in range(200):
        t = time.perf_counter()
        subprocess.run([sys.argv[1], "lint", f], stdout=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t)
    ts.sort()
    print(f"{f}: median {ts[100]*1000:.1f} ms, p90 {ts[180]*1000:.1f} ms")
PY

if command -v checkov > /dev/null; then
  SUB=$(mktemp -d)
  ls "$DIR"/*.yaml | head -n "$CHECKOV_FILES" | xargs -I{} cp {} "$SUB"/
  echo "== the same $(du -sh "$SUB" | cut -f1) subset: winguard vs checkov --framework kubernetes"
  /usr/bin/time -f "winguard: %e s, %M kB" $BIN lint "$SUB" --format json --fail-on never > /dev/null
  /usr/bin/time -f "checkov: %e s, %M kB" checkov -d "$SUB" --framework kubernetes --quiet --compact -o json > /dev/null || true
  rm -rf "$SUB"
else
  echo "(checkov not installed: pip install checkov)"
fi
