#!/usr/bin/env python3
"""Do chart findings name template lines that hold them? (issue 19's corpus check)

    python3 tests/corpus/chart_provenance.py WINGUARD CHART_DIR...

Lints each chart (a directory with Chart.yaml, found under the given directories) with
`--format json`, under the generic and the EKS profile, and checks every finding: the template
line its `file:line` names must hold the offending key (or, for a missing field, its parent's
key or list item) or the action that printed the value, and the finding must carry `rendered`.
A finding that names the values file setting its value (`values.file`, `values.line`) is
checked too: that line must hold the value's key (the last key of its `--set`-style path) or a
list item of it. A file inside a packaged chart (`charts/db-1.0.0.tgz!/db/values.yaml`, as
`helm dependency build` leaves subcharts) is read from the archive.
Prints each miss and the share that hold. The charts are public ones brought in for the run
(not committed).
"""
import io
import json
import os
import re
import subprocess
import sys
import tarfile


def charts(roots):
    for root in roots:
        for d, subdirs, files in os.walk(root):
            if "Chart.yaml" in files and "/charts/" not in d[len(root):]:
                yield d
                subdirs[:] = []


def read_lines(path):
    """The lines of a file, or of a member of a packaged chart (`a.tgz!/a/x.yaml`, nested too)."""
    parts = path.split("!/")
    with open(parts[0], "rb") as fh:
        data = fh.read()
    for member in parts[1:]:
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            data = t.extractfile(member).read()
    return data.decode("utf-8").splitlines()


def last_key(path):
    """The last key of a values path as `--set` writes it (`a.b[0]` → `b`, `x.k\\.io/os` → `k.io/os`)."""
    keys = re.split(r"(?<!\\)\.", path)
    return re.sub(r"\[\d+\]$", "", keys[-1]).replace("\\", "")


def holds(line, pointer):
    if "{{" in line or line.lstrip().startswith("-"):
        return True
    tokens = [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/") if t]
    return any(f"{t}:" in line for t in tokens[-3:])


def main():
    binary, roots = sys.argv[1], sys.argv[2:]
    total = good = untraced = failed = 0
    sites = sites_good = 0
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
                site = f.get("values") or {}
                if site.get("file"):
                    sites += 1
                    try:
                        at = read_lines(site["file"])[site["line"] - 1]
                    except (OSError, IndexError, KeyError, tarfile.TarError):
                        at = None
                    key = last_key(site["path"])
                    if at is not None and (f"{key}:" in at or f"'{key}':" in at
                                           or f'"{key}":' in at or at.lstrip().startswith("-")):
                        sites_good += 1
                    else:
                        print(f"values miss: {site['file']}:{site.get('line')} {site['path']} "
                              f"({f['rule']}): {at!r}")
                try:
                    line = read_lines(f["file"])[f["line"] - 1]
                except (OSError, IndexError, KeyError, tarfile.TarError):
                    line = None
                if line is not None and holds(line, f["pointer"]):
                    good += 1
                else:
                    print(f"miss: {f['file']}:{f['line']}:{f['column']} {f['rule']} "
                          f"{f['pointer']}: {line!r}")
    share = 100.0 * good / total if total else 100.0
    print(f"{total} findings: {good} hold ({share:.1f}%), {untraced} untraced; "
          f"{failed} charts without a report; {sites} values sites: {sites_good} hold")
    return 0 if good == total and sites_good == sites else 1


if __name__ == "__main__":
    sys.exit(main())
