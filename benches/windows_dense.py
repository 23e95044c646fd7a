#!/usr/bin/env python3
"""Writes a Windows-dense manifest corpus: N copies of a Windows Deployment behind a
LoadBalancer Service with an HPA and a RuntimeClass, beside a Linux Deployment behind a NodePort
Service (6 objects a copy, about 1.5 KB). The cross-object rules look each workload's Services and
HPAs up among all of the run's; linting N and 8N copies shows whether that cost is linear.

    python3 benches/windows_dense.py N OUT.yaml
    /usr/bin/time target/release/winguard lint OUT.yaml --format json --fail-on never >/dev/null
"""

import sys

COPY = """apiVersion: apps/v1
kind: Deployment
metadata: {{name: web-{i}, namespace: shop}}
spec:
  replicas: 80
  selector: {{matchLabels: {{app: web-{i}}}}}
  template:
    metadata: {{labels: {{app: web-{i}}}}}
    spec:
      runtimeClassName: windows-{i}
      containers:
      - name: web
        image: mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022
        resources: {{limits: {{cpu: "1", memory: 1Gi}}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: api-{i}, namespace: shop}}
spec:
  replicas: 2
  selector: {{matchLabels: {{app: api-{i}}}}}
  template:
    metadata: {{labels: {{app: api-{i}}}}}
    spec:
      nodeSelector: {{kubernetes.io/os: linux}}
      containers:
      - name: api
        image: nginx:1.27-bookworm
---
apiVersion: v1
kind: Service
metadata: {{name: web-{i}, namespace: shop}}
spec:
  type: LoadBalancer
  selector: {{app: web-{i}}}
  ports: [{{port: 80}}]
---
apiVersion: v1
kind: Service
metadata: {{name: api-{i}, namespace: shop}}
spec:
  type: NodePort
  selector: {{app: api-{i}}}
  ports: [{{port: 80}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {{name: web-{i}, namespace: shop}}
spec:
  scaleTargetRef: {{apiVersion: apps/v1, kind: Deployment, name: web-{i}}}
  minReplicas: 2
  maxReplicas: 100
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {{name: windows-{i}}}
handler: runhcs-wcow-process
scheduling:
  nodeSelector: {{kubernetes.io/os: windows}}
  tolerations: [{{key: os, value: windows, effect: NoSchedule}}]
---
"""


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    copies = int(sys.argv[1])
    with open(sys.argv[2], "w") as out:
        for i in range(copies):
            out.write(COPY.format(i=i))


if __name__ == "__main__":
    main()
