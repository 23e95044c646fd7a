"""Times Helm 4's engine (PyPI helm-python-sdk, in-process) rendering chart cases.

Reads a JSON list of {"chart": DIR, "values": {...}, "release": ..., "namespace": ...} on stdin
and a round count as argv[1]; loads every chart once and renders every case once untimed (the Go
runtime's first allocations, as winguard's side gets one untimed pass per block), then times
ROUNDS passes over all cases (render only, as the winguard side is timed) and prints the seconds
of each pass as JSON.
"""
import json
import sys
import time

import helm_python as helm

cases = json.load(sys.stdin)
rounds = int(sys.argv[1])
loaded = [(helm.Chart.load(c["chart"]), c) for c in cases]
for chart, c in loaded:
    chart.render(c.get("values") or None, name=c["release"], namespace=c["namespace"])
times = []
for _ in range(rounds):
    start = time.perf_counter()
    for chart, c in loaded:
        chart.render(c.get("values") or None, name=c["release"], namespace=c["namespace"])
    times.append(time.perf_counter() - start)
json.dump(times, sys.stdout)
