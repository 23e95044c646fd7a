#!/usr/bin/env python3
"""A full lint against PyYAML's C loader only parsing the same files, whole process, in one run.

    python3 benches/against_pyyaml.py DIR WINGUARD [ROUNDS]

DIR holds the corpus's YAML files: the lint bench's mixed corpus, written as files by
`WINGUARD_BENCH_MB=50 WINGUARD_BENCH_DIR=DIR cargo bench --bench lint` (rendered charts: Windows
and Linux Deployments, Services, ConfigMaps, HostProcess DaemonSets; about 53 MB). In interleaved
rounds (this machine's speed drifts) it times `WINGUARD lint DIR --format json --fail-on never`
and a Python process that reads every file with `yaml.load_all(..., Loader=yaml.CSafeLoader)`
(libyaml's parser and PyYAML's constructor: parsing only, no rules), and prints each one's median
wall time, MB/s and PyYAML's time over winguard's (issue 37 asks for at least 5).
"""
import os
import statistics
import subprocess
import sys
import time

PARSE_ONLY = """
import sys, yaml
for path in sys.argv[1:]:
    with open(path, 'rb') as f:
        for _ in yaml.load_all(f, Loader=yaml.CSafeLoader):
            pass
"""


def timed(command):
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    corpus, winguard = sys.argv[1], sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    import yaml  # checked here, before any timing: the baseline needs libyaml
    if not yaml.__with_libyaml__:
        sys.exit("PyYAML here is built without libyaml: install a wheel that has CSafeLoader")
    files = sorted(os.path.join(corpus, f) for f in os.listdir(corpus)
                   if f.endswith((".yaml", ".yml")))
    if not files:
        sys.exit(f"{corpus}: no YAML files")
    mb = sum(os.path.getsize(f) for f in files) / 1e6
    commands = {
        "winguard lint": [winguard, "lint", corpus, "--format", "json", "--fail-on", "never"],
        "PyYAML CSafeLoader": [sys.executable, "-c", PARSE_ONLY, *files],
    }
    times = {name: [] for name in commands}
    for _ in range(rounds):
        for name, command in commands.items():
            times[name].append(timed(command))
    print(f"{len(files)} files, {mb:.1f} MB, {rounds} rounds")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:>20}: median {med:6.3f} s (min {min(ts):.3f}, max {max(ts):.3f}), "
              f"{mb / med:6.1f} MB/s")
    ratio = statistics.median(times["PyYAML CSafeLoader"]) / statistics.median(times["winguard lint"])
    print(f"PyYAML parse-only time / winguard full-lint time: {ratio:.2f}x")


if __name__ == "__main__":
    main()
