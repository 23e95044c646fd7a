"""Renders test charts with real Helm 4 (PyPI helm-python-sdk: Helm's Go engine in-process).

Reads a JSON list of cases on stdin, each {"chart": DIR, "values": {...}, "release": NAME,
"namespace": NS}, and prints a JSON list of results: {"files": {path: text}} or {"error": msg}.
"""
import json
import sys

import helm_python as helm


def main():
    cases = json.load(sys.stdin)
    results = []
    for case in cases:
        try:
            chart = helm.Chart.load(case["chart"])
            files = chart.render(
                case.get("values") or None,
                name=case.get("release", "release-name"),
                namespace=case.get("namespace", "default"),
            )
            results.append({"files": files})
        except Exception as e:  # the error text is what the test compares
            results.append({"error": str(e)})
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
