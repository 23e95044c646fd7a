#!/usr/bin/env python3
"""Lints a corpus of public Windows manifests, kustomizations and charts with winguard and lists
every finding for review (issue 17: the world is the oracle in review).

    python3 tests/corpus/windows_review.py CORPUS [--winguard BIN] [--config FILE]
        [--severity error|warning] [--json OUT]

CORPUS holds `manifests/*.yaml`, `kustomize/<name>/` and `charts/<name>/` (the layout the
corpus note in tests/corpus/charts.txt describes; not committed). Charts are linted with their
default values and with each values file they ship under `ci/`. Prints one block per input: its
input errors, then each finding at or above --severity (default: error) as
`severity rule file:line (Kind name): message`, and a totals line per rule. --json writes every
finding and error, for building the review table.
"""

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
LEVELS = {"info": 0, "warning": 1, "error": 2}


def inputs(corpus):
    """(label, argv) per lint run."""
    for f in sorted((corpus / "manifests").glob("*")):
        if f.is_file():
            yield f.name, [str(f)]
    for d in sorted((corpus / "kustomize").glob("*")):
        if d.is_dir():
            yield f"kustomize/{d.name}", [str(d)]
    for d in sorted((corpus / "charts").glob("*")):
        if not (d / "Chart.yaml").is_file():
            continue
        yield f"chart/{d.name}", [str(d)]
        for values in sorted((d / "ci").glob("*.yaml")):
            yield f"chart/{d.name} [ci/{values.name}]", [str(d), "--values", str(values)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", type=pathlib.Path)
    ap.add_argument("--winguard", default=str(ROOT / "target/release/winguard"))
    ap.add_argument("--config", help="winguard.yaml to lint under (default: the defaults)")
    ap.add_argument("--severity", default="error", choices=LEVELS)
    ap.add_argument("--json", type=pathlib.Path)
    args = ap.parse_args()

    rows, per_rule, failed = [], collections.Counter(), 0
    env = dict(os.environ, NO_COLOR="1")
    for label, argv in inputs(args.corpus):
        cmd = [args.winguard, "lint", *argv, "--format", "json", "--fail-on", "never"]
        if args.config:
            cmd += ["--config", args.config]
        else:
            # Not a winguard.yaml found by walking up from the working directory.
            cmd += ["--config", os.devnull]
        run = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=args.corpus)
        try:
            report = json.loads(run.stdout)
        except json.JSONDecodeError:
            failed += 1
            print(f"## {label}: winguard exited {run.returncode}: {run.stderr.strip()[:400]}")
            continue
        shown = [
            f for f in report["findings"]
            if LEVELS[f["severity"]] >= LEVELS[args.severity]
        ]
        if report["errors"] or shown:
            print(f"## {label}")
        for e in report["errors"]:
            print(f"  input error: {e.get('file')}:{e.get('line')}: {e.get('message', '')[:300]}")
        for f in shown:
            obj = f["object"]
            where = f"{f['file']}:{f['line']}"
            if f.get("template"):
                where += f" ({f['template']})"
            print(f"  {f['severity']} {f['rule']} {where} ({obj['kind']} {obj['name']}): {f['message']}")
            per_rule[(f["rule"], f["severity"])] += 1
        rows.append({"input": label, "errors": report["errors"], "findings": report["findings"]})

    print("\ntotals:")
    for (rule, severity), n in sorted(per_rule.items()):
        print(f"  {severity} {rule}: {n}")
    print(f"  inputs: {len(rows) + failed}, winguard failures: {failed}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
