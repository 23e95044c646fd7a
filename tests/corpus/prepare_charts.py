#!/usr/bin/env python3
"""Lays out the public charts of tests/corpus/charts.txt for the Helm-fidelity harness.

    python3 tests/corpus/prepare_charts.py MIRRORS OUT [LIST] [--package]

MIRRORS holds one bare git snapshot per repository, as `owner+repo/repo` (what the session
tool's `fetch` brings). Each listed chart is exported from its snapshot's HEAD into OUT/NAME,
and its dependencies are vendored into its `charts/` the way `helm dependency build` would, but
from the snapshots instead of a chart repository (none is reachable here): a dependency is the
chart of that name in the same repository (or the `file://` path it gives), recursively. A
vendored chart whose version does not satisfy the parent's constraint is reported, since Helm
then renders it differently (neither alias nor condition applies). With --package each vendored
dependency is left as `helm dependency build` leaves it, a `charts/NAME-VERSION.tgz` archive
(its own dependencies packed inside), rather than a directory.
"""

import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import yaml


def git_files(repo):
    out = subprocess.run(["git", "--git-dir", str(repo), "ls-tree", "-r", "--name-only", "HEAD"],
                         capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def export(repo, path, dest):
    """Exports `path` (a directory of the snapshot's HEAD) to `dest`."""
    spec = "HEAD" if path in (".", "") else f"HEAD:{path}"
    data = subprocess.run(["git", "--git-dir", str(repo), "archive", "--format=tar", spec],
                          capture_output=True, check=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        t.extractall(dest, filter="data")


def chart_index(repo):
    """Chart name -> (directory, version) for every Chart.yaml in the snapshot."""
    index = {}
    for f in git_files(repo):
        if not f.endswith("Chart.yaml") or "/charts/" in f or "/fixtures/" in f:
            continue
        text = subprocess.run(["git", "--git-dir", str(repo), "show", f"HEAD:{f}"],
                              capture_output=True, text=True).stdout
        try:
            meta = yaml.safe_load(text) or {}
        except yaml.YAMLError:
            continue
        d = str(Path(f).parent)
        name = meta.get("name")
        # The shortest path wins (`charts/x` over a versioned `charts/v1.0/x`).
        if name and (name not in index or len(d) < len(index[name][0])):
            index[name] = (d, str(meta.get("version", "")))
    return index


def satisfies(version, constraint):
    """A rough check of Helm's constraint syntax: only for the report, never for rendering."""
    if not constraint or constraint in ("*", "x"):
        return True
    try:
        v = [int(p) for p in re.findall(r"\d+", version)[:3]]
    except ValueError:
        return False
    for part in re.split(r"\s*\|\|\s*", constraint):
        m = re.match(r"^\s*(\^|~|>=|<=|>|<|=)?\s*v?(\d+)(?:\.(\d+|x|\*))?(?:\.(\d+|x|\*))?", part)
        if not m:
            continue
        op, major = m.group(1) or "=", int(m.group(2))
        if op in ("^", "~", "=") and v[:1] == [major]:
            return True
        if op in (">=", ">") and v[0] >= major:
            return True
    return False


def find_chart(name, repo, indexes, url=""):
    """The snapshot and directory of the chart called `name`: its own repository's first, then
    the one whose owner the dependency's repository URL names, then any."""
    owner = lambda r: r.parent.name.split("+")[0].lower()
    named = [r for r in indexes if r != repo and owner(r) in url.lower()]
    ordered = [repo] + named + [r for r in indexes if r != repo and r not in named]
    for r in ordered:
        if name in indexes[r]:
            return (r, *indexes[r][name])
    return None


def package(chart_dir):
    """Replaces the chart directory `chart_dir` by `NAME-VERSION.tgz` beside it, as `helm
    package` writes it: every file under a top directory named after the chart."""
    meta = yaml.safe_load((chart_dir / "Chart.yaml").read_text()) or {}
    name, version = meta.get("name", chart_dir.name), meta.get("version", "0.0.0")
    archive = chart_dir.parent / f"{name}-{version}.tgz"
    with tarfile.open(archive, "w:gz") as t:
        for f in sorted(chart_dir.rglob("*")):
            if f.is_file():
                t.add(f, arcname=f"{name}/{f.relative_to(chart_dir).as_posix()}")
    shutil.rmtree(chart_dir)


PACKAGE = "--package" in sys.argv


def vendor(chart_dir, repo, indexes, repo_path, report, depth=0):
    """Vendors the dependencies of the chart at `chart_dir` (`repo_path` in the snapshot)."""
    meta = yaml.safe_load((chart_dir / "Chart.yaml").read_text()) or {}
    deps = meta.get("dependencies") or []
    req = chart_dir / "requirements.yaml"
    if not deps and req.is_file():
        deps = (yaml.safe_load(req.read_text()) or {}).get("dependencies") or []
    for dep in deps:
        name = dep.get("name")
        target = chart_dir / "charts" / name
        existing = list((chart_dir / "charts").glob(f"{name}-*.tgz")) if (chart_dir / "charts").is_dir() else []
        if target.is_dir() or existing:
            continue
        repository = dep.get("repository") or ""
        dep_path = None
        if repository.startswith("file://"):
            dep_path = os.path.normpath(os.path.join(repo_path, repository[len("file://"):]))
            dep_repo = repo
            try:
                export(repo, dep_path, target)
            except subprocess.CalledProcessError:
                report.append(f"{chart_dir.name}: dependency {name}: {repository} not found")
                continue
        elif (found := find_chart(name, repo, indexes, repository)) is not None:
            dep_repo, dep_path, version = found
            export(dep_repo, dep_path, target)
            if not satisfies(version, str(dep.get("version", ""))):
                report.append(f"{chart_dir.name}: dependency {name} {version} does not satisfy "
                              f"{dep.get('version')!r}")
        else:
            report.append(f"{chart_dir.name}: dependency {name} ({repository}) not in the snapshot")
            continue
        if depth < 4:
            vendor(target, dep_repo, indexes, dep_path, report, depth + 1)
        if PACKAGE:
            package(target)


def main():
    args = [a for a in sys.argv[1:] if a != "--package"]
    mirrors, out = Path(args[0]), Path(args[1])
    listing = Path(args[2]) if len(args) > 2 else Path(__file__).with_name("charts.txt")
    out.mkdir(parents=True, exist_ok=True)
    report, indexes = [], {}
    # Every snapshot's charts, so a dependency published from another repository is found.
    for repo in sorted(mirrors.glob("*/repo")):
        indexes[repo] = chart_index(repo)
    for line in listing.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        slug, path = line.split()
        repo = mirrors / slug.replace("/", "+") / "repo"
        if not repo.is_dir():
            report.append(f"{slug}: no snapshot at {repo}")
            continue
        base = slug.split("/")[1] if path == "." else Path(path).name
        name = base if not (out / base).exists() else f"{slug.split('/')[0].lower()}-{base}"
        dest = out / name
        if dest.exists():
            shutil.rmtree(dest)
        export(repo, path, dest)
        if not (dest / "Chart.yaml").is_file():
            report.append(f"{slug} {path}: no Chart.yaml in the snapshot (moved or removed)")
            shutil.rmtree(dest)
            continue
        vendor(dest, repo, indexes, path, report)
        print(name)
    for r in report:
        print(f"note: {r}", file=sys.stderr)


if __name__ == "__main__":
    main()
