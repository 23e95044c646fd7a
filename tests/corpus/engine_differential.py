#!/usr/bin/env python3
"""Runs two winguard binaries (the old engine's and the new one's) over every manifest under the
given paths and compares their findings: rule, pointer, severity and message, per file and profile.

    python3 tests/corpus/engine_differential.py OLD_BIN NEW_BIN PATH... [--profile P]...

Prints each difference and a summary; exits 1 when any file differs.
"""
import json
import os
import subprocess
import sys


def findings(binary, path, profile):
    r = subprocess.run([binary, "lint", path, "--format", "json", "--profile", profile],
                       capture_output=True, text=True)
    try:
        report = json.loads(r.stdout)
    except json.JSONDecodeError:
        return ("error", r.stderr.strip()[:300])
    out = []
    for f in report.get("findings", []):
        out.append((f.get("rule"), f.get("pointer"), f.get("severity"), f.get("message"),
                    f.get("line")))
    return ("ok", sorted(out, key=lambda x: tuple(str(v) for v in x)))


def main():
    args = sys.argv[1:]
    profiles = []
    while "--profile" in args:
        i = args.index("--profile")
        profiles.append(args[i + 1])
        del args[i:i + 2]
    profiles = profiles or ["generic", "eks"]
    old, new, *roots = args
    files = []
    for root in roots:
        if os.path.isfile(root):
            files.append(root)
        for d, _, names in os.walk(root):
            files += [os.path.join(d, n) for n in names if n.endswith((".yaml", ".yml"))]
    files = sorted(set(files))
    same = differ = total_findings = 0
    for path in files:
        for profile in profiles:
            a, b = findings(old, path, profile), findings(new, path, profile)
            if a == b:
                same += 1
                total_findings += len(a[1]) if a[0] == "ok" else 0
                continue
            differ += 1
            print(f"DIFFERS {path} [{profile}]")
            if a[0] == "ok" and b[0] == "ok":
                for x in sorted(set(a[1]) - set(b[1]), key=str):
                    print("  - old:", x)
                for x in sorted(set(b[1]) - set(a[1]), key=str):
                    print("  + new:", x)
            else:
                print("  old:", a if a[0] != "ok" else len(a[1]), " new:", b if b[0] != "ok" else len(b[1]))
    print(f"{len(files)} files x {len(profiles)} profiles: {same} identical "
          f"({total_findings} findings), {differ} differ")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
