#!/usr/bin/env python3
"""Whole-process A/B of two winguard binaries on the Windows-dense corpus, in one run.

    python3 benches/engine_ab.py OLD_BIN NEW_BIN [COPIES] [ROUNDS]

Builds the corpus (`benches/windows_dense.py`) at COPIES (default 640) and 8x COPIES, then times
`lint FILE --format json --fail-on never` for each binary in interleaved rounds (old, new, old,
new, ...: this machine's speed drifts) and prints, per binary and size, the median wall time, MB/s
and the per-MB time at 8x over that at 1x (1.00 is linear; issue 18 asks for at most 1.25).
The old binary is the engine before a change: build it from a worktree of the earlier commit
(`git worktree add ../old <commit> && cargo build --release --manifest-path ../old/Cargo.toml`).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(binary, path):
    start = time.perf_counter()
    subprocess.run([binary, "lint", path, "--format", "json", "--fail-on", "never"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main():
    old, new = sys.argv[1], sys.argv[2]
    copies = int(sys.argv[3]) if len(sys.argv) > 3 else 640
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for n in (copies, copies * 8):
            path = os.path.join(tmp, f"dense-{n}.yaml")
            subprocess.run([sys.executable, os.path.join(HERE, "windows_dense.py"), str(n), path],
                           check=True)
            files[n] = path
        times = {(b, n): [] for b in ("old", "new") for n in files}
        for _ in range(rounds):
            for n, path in files.items():
                for label, binary in (("old", old), ("new", new)):
                    times[(label, n)].append(timed(binary, path))
        per_mb = {}
        for (label, n), ts in sorted(times.items()):
            mb = os.path.getsize(files[n]) / 1e6
            med = statistics.median(ts)
            per_mb[(label, n)] = med / mb
            print(f"{label} {n:>6} copies ({mb:5.1f} MB): median {med:6.3f} s "
                  f"(min {min(ts):.3f}, max {max(ts):.3f}), {mb / med:5.1f} MB/s")
        for label in ("old", "new"):
            ratio = per_mb[(label, copies * 8)] / per_mb[(label, copies)]
            print(f"{label}: per-MB time at 8x / at 1x = {ratio:.2f}")
        for n in files:
            print(f"{n} copies: new / old wall time = "
                  f"{statistics.median(times[('new', n)]) / statistics.median(times[('old', n)]):.2f}")


if __name__ == "__main__":
    main()
