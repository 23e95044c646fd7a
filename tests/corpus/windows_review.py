#!/usr/bin/env python3
"""Lints a corpus of public Windows manifests, kustomizations and charts with winguard and lists
every finding for review (issue 17: the world is the oracle in review).

    python3 tests/corpus/windows_review.py CORPUS [--winguard BIN] [--config FILE]
        [--nodes FILE] [--severity error|warning] [--json OUT]

CORPUS holds `manifests/<owner>__<repo>__<path>.yaml` (plain manifests copied from public
repositories), `kustomize/<owner>__<repo>__<name>/` and `charts/<owner>__<repo>__<chart>/` (whole
chart directories, their dependencies vendored under `charts/`); not committed. The owner and
repository in each name pick the profile (below). Charts are linted with their
default values and with each values file they ship under `ci/`. Each input is linted under the
profile of the platform its source targets (`owner__repo__…` names: Azure/AKS sources `aks`,
AWS/EKS ones `eks`, Google/GKE ones `gke`, the rest `generic`), unless --config gives one config
for all: the clusters those manifests run on taint Windows nodes as their platform does, and
that taint is what the toleration rule must be checked against. Prints one block per input: its
input errors, then each finding at or above --severity (default: error) as
`severity rule file:line (Kind name): message`, and a totals line per rule. --json writes every
finding and error, for building the review table. --nodes lints every input against one
cluster's nodes (`kubectl get nodes -o json`, e.g. testdata/nodes/mixed-cluster.json): its
Windows builds and taints instead of each profile's assumption.
"""

import argparse
import collections
import json
import os
import pathlib
import subprocess
import sys
import tempfile

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


def platform_profile(label):
    """The winguard profile of the platform an input's source repository targets."""
    name = label.split("/", 1)[-1]
    owner, _, rest = name.partition("__")
    repo = rest.split("__", 1)[0].lower()
    words = repo.replace("_", "-").split("-")
    if owner in ("Azure", "Azure-Samples", "microsoft") or repo.startswith("azure") or "aks" in words:
        return "aks"
    if owner.startswith("aws") or repo.startswith("aws-") or "eks" in words:
        return "eks"
    if owner == "GoogleCloudPlatform" or repo.startswith("gcp-") or "gke" in words:
        return "gke"
    return "generic"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", type=pathlib.Path)
    ap.add_argument("--winguard", default=str(ROOT / "target/release/winguard"))
    ap.add_argument("--config", help="winguard.yaml to lint under (default: the defaults)")
    ap.add_argument("--nodes", type=pathlib.Path,
                    help="the cluster's nodes (kubectl get nodes -o json) to lint against")
    ap.add_argument("--severity", default="error", choices=LEVELS)
    ap.add_argument("--json", type=pathlib.Path)
    args = ap.parse_args()

    rows, per_rule, failed = [], collections.Counter(), 0
    env = dict(os.environ, NO_COLOR="1")
    configs = tempfile.TemporaryDirectory()
    profile_config = {}
    for profile in ("generic", "aks", "eks", "gke"):
        path = pathlib.Path(configs.name) / f"{profile}.yaml"
        path.write_text(f"profile: {profile}\n")
        profile_config[profile] = str(path)
    for label, argv in inputs(args.corpus):
        cmd = [args.winguard, "lint", *argv, "--format", "json", "--fail-on", "never"]
        profile = platform_profile(label)
        cmd += ["--config", args.config or profile_config[profile]]
        if args.nodes:
            cmd += ["--nodes", str(args.nodes.resolve())]
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
            print(f"## {label} (profile {'from --config' if args.config else profile})")
        for e in report["errors"]:
            print(f"  input error: {e.get('file')}:{e.get('line')}: {e.get('message', '')[:300]}")
        for f in shown:
            obj = f["object"]
            where = f"{f['file']}:{f['line']}"
            if f.get("template"):
                where += f" ({f['template']})"
            print(f"  {f['severity']} {f['rule']} {where} ({obj['kind']} {obj['name']}): {f['message']}")
            per_rule[(f["rule"], f["severity"])] += 1
        rows.append({
            "input": label,
            "profile": None if args.config else profile,
            "errors": report["errors"],
            "findings": report["findings"],
        })

    print("\ntotals:")
    for (rule, severity), n in sorted(per_rule.items()):
        print(f"  {severity} {rule}: {n}")
    print(f"  inputs: {len(rows) + failed}, winguard failures: {failed}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
