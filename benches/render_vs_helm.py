#!/usr/bin/env python3
"""Whole-process chart rendering: `winguard render` against `helm template`, chart by chart.

    python3 benches/render_vs_helm.py CHARTS [PAIRS]

CHARTS holds one chart directory per chart (what `tests/corpus/prepare_charts.py MIRRORS CHARTS
benches/render_charts.txt` lays out). For each chart both commands run once untimed, then PAIRS
times (default 9) in alternating order, each as a whole process (`winguard render bench CHART`,
`helm template bench CHART`, output discarded). Charts either command fails on are listed and left
out. Prints a Markdown table: each chart's median wall times, the median of its per-pair ratios
(Helm's time over winguard's), whether the chart makes keys (its templates call Sprig's key
functions and two renders differ: random keys, made anew on every render), and the geometric mean of the ratios, over all charts and over those without keys.

WINGUARD (default target/release/winguard) and HELM (default target/test-tools/bin/helm, what
`python3 tests/run.py --setup-only` installs) name the binaries.
"""

import math
import re
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(command):
    """Wall seconds of one run, and whether it succeeded."""
    start = time.perf_counter()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, done.returncode == 0


KEY_FUNCTIONS = re.compile(r"\b(genCA|genPrivateKey|genSelfSignedCert|genSignedCert)\b")


def makes_keys(chart):
    """Whether the chart's templates (its subcharts' too) call Sprig's key functions."""
    return any(KEY_FUNCTIONS.search(p.read_text(errors="replace"))
               for p in chart.rglob("*") if p.suffix in (".yaml", ".tpl", ".yml") and p.is_file())


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    charts = Path(sys.argv[1])
    pairs = int(sys.argv[2]) if len(sys.argv) > 2 else 9
    winguard = os.environ.get("WINGUARD", str(ROOT / "target/release/winguard"))
    helm = os.environ.get("HELM", str(ROOT / "target/test-tools/bin/helm"))
    rows, failed = [], []
    for chart in sorted(p for p in charts.iterdir() if (p / "Chart.yaml").is_file()):
        ours = [winguard, "render", "bench", str(chart)]
        theirs = [helm, "template", "bench", str(chart)]
        rendered = subprocess.run(ours, capture_output=True, text=True, errors="replace")
        _, helm_ok = timed(theirs)
        if rendered.returncode != 0 or not helm_ok:
            failed.append(f"{chart.name} (winguard {rendered.returncode}, helm "
                          f"{'ok' if helm_ok else 'failed'})")
            continue
        again = subprocess.run(ours, capture_output=True, text=True, errors="replace")
        keys = again.stdout != rendered.stdout and makes_keys(chart)
        times = {"winguard": [], "helm": []}
        ratios = []
        for i in range(pairs):
            order = [("winguard", ours), ("helm", theirs)]
            if i % 2:
                order.reverse()
            pair = {name: timed(command)[0] for name, command in order}
            times["winguard"].append(pair["winguard"])
            times["helm"].append(pair["helm"])
            ratios.append(pair["helm"] / pair["winguard"])
        rows.append((chart.name, statistics.median(times["winguard"]),
                     statistics.median(times["helm"]), statistics.median(ratios), keys))
        print(f"{chart.name}: {rows[-1][3]:.1f}x", file=sys.stderr, flush=True)

    print(f"| chart | winguard, median | helm, median | helm / winguard, median of {pairs} pairs "
          "| keys |")
    print("|---|---|---|---|---|")
    for name, ours, theirs, ratio, keys in rows:
        print(f"| {name} | {ours * 1000:.1f} ms | {theirs * 1000:.1f} ms | {ratio:.1f}× | "
              f"{'yes' if keys else ''} |")

    def geomean(values):
        return math.exp(sum(map(math.log, values)) / len(values)) if values else float("nan")

    every = [r[3] for r in rows]
    keyless = [r[3] for r in rows if not r[4]]
    print(f"\ngeometric mean: {geomean(every):.1f}× over {len(every)} charts; "
          f"{geomean(keyless):.1f}× over the {len(keyless)} without keys")
    for f in failed:
        print(f"left out: {f}")


if __name__ == "__main__":
    main()
