#!/usr/bin/env python3
"""Do chart findings name template lines that hold them? (issue 19's corpus check)

    python3 tests/corpus/chart_provenance.py WINGUARD CHART_DIR...

Lints each chart (a directory with Chart.yaml, found under the given directories) with
`--format json`, under the generic and the EKS profile, and checks every finding: the template
line its `file:line` names must hold the offending key (or, for a missing field, its parent's
key or list item) or the action that printed the value, and the finding must carry `rendered`.
Prints each miss and the share that hold. The charts are public ones brought in for the run
(not committed).
"""
import json
import os
import subprocess
import sys


def charts(roots):
    for root in roots:
        for d, subdirs, files in os.walk(root):
            if "Chart.yaml" in files and "/charts/" not in d[len(root):]:
                yield d
                subdirs[:] = []


def holds(line, pointer):
    if "{{" in line or line.lstrip().startswith("-"):
        return True
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/") if t]
    return any(f"{t}:" in line for t in tokens[-3:])


def main():
    binary, roots = sys.argv[1], sys.argv[2:]
    total = good = untraced = failed = 0
    for chart in sorted(charts(roots)):
        for profile in ("generic", "eks"):
            r = subprocess.run([binary, "lint", chart, "--format", "json", "--fail-on", "never",
                                "--profile", profile], capture_output=True, text=True)
            try:
                report = json.loads(r.stdout)
            except json.JSONDecodeError:
                failed += 1
                print(f"{chart}: no report ({r.stderr.strip()[:200]})")
                break
            for f in report["findings"]:
                total += 1
                if "rendered" not in f:
                    untraced += 1
                    print(f"untraced: {f['file']}:{f['line']} {f['rule']} {f['pointer']}")
                    continue
                try:
                    with open(f["file"], encoding="utf-8") as fh:
                        text = fh.read().splitlines()
                    line = text[f["line"] - 1]
                except (OSError, IndexError):
                    line = None
                if line is not None and holds(line, f["pointer"]):
                    good += 1
                else:
                    print(f"miss: {f['file']}:{f['line']}:{f['column']} {f['rule']} "
                          f"{f['pointer']}: {line!r}")
    share = 100.0 * good / total if total else 100.0
    print(f"{total} findings: {good} hold ({share:.1f}%), {untraced} untraced; "
          f"{failed} charts without a report")
    return 0 if good == total else 1


if __name__ == "__main__":
    sys.exit(main())
