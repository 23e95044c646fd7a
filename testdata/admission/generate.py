#!/usr/bin/env python3
"""Writes the AdmissionReview fixtures of this directory, shaped as the API server sends them
(requestKind/requestResource, userInfo, options, managedFields, defaulted fields).
Run from anywhere: python3 testdata/admission/generate.py"""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))

def user():
    return {"username": "system:serviceaccount:kube-system:replicaset-controller",
            "uid": "4c4c3a4e-7c1e-4f0e-9d3e-0d6e2e8c9f11",
            "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"]}

def windows_pod(name, namespace, extra_spec=None, annotations=None):
    spec = {
        "containers": [{
            "name": "merchant",
            "image": "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019",
            "command": ["powershell.exe", "-Command", "C:\\ServiceMonitor.exe", "w3svc"],
            "ports": [{"containerPort": 80, "protocol": "TCP"}],
            "resources": {"limits": {"cpu": "1", "memory": "2Gi"}, "requests": {"cpu": "500m", "memory": "1Gi"}},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "imagePullPolicy": "IfNotPresent",
        }],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ],
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    spec.update(extra_spec or {})
    meta = {
        "generateName": name + "-7d9c8b6f5-",
        "namespace": namespace,
        "creationTimestamp": None,
        "labels": {"app": name, "pod-template-hash": "7d9c8b6f5"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": name + "-7d9c8b6f5",
                              "uid": "8f0b8a34-62a4-4b1e-a1a6-3c1f5d2a9b70", "controller": True, "blockOwnerDeletion": True}],
        "managedFields": [{"manager": "kube-controller-manager", "operation": "Update", "apiVersion": "v1",
                           "time": "2026-11-30T01:00:00Z", "fieldsType": "FieldsV1",
                           "fieldsV1": {"f:metadata": {"f:generateName": {}, "f:labels": {".": {}, "f:app": {}}}}}],
    }
    if annotations:
        meta["annotations"] = annotations
    return {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": {}}

def review(api_version, obj, operation="CREATE", namespace="shop", name="", kind=("", "v1", "Pod"),
           resource=("", "v1", "pods"), dry_run=False, old=None, uid="705ab4f5-6393-11e8-b7cc-42010a800002"):
    group, version, k = kind
    rg, rv, rr = resource
    options = {"kind": {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions", "DELETE": "DeleteOptions"}.get(operation, "CreateOptions"),
               "apiVersion": "meta.k8s.io/v1"}
    return {
        "kind": "AdmissionReview",
        "apiVersion": api_version,
        "request": {
            "uid": uid,
            "kind": {"group": group, "version": version, "kind": k},
            "resource": {"group": rg, "version": rv, "resource": rr},
            "requestKind": {"group": group, "version": version, "kind": k},
            "requestResource": {"group": rg, "version": rv, "resource": rr},
            "name": name,
            "namespace": namespace,
            "operation": operation,
            "userInfo": user(),
            "object": obj,
            "oldObject": old,
            "dryRun": dry_run,
            "options": options,
        },
    }

def deployment(name, namespace, pod_spec_extra=None):
    pod = windows_pod(name, namespace, pod_spec_extra)
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "generation": 1, "creationTimestamp": None,
                     "annotations": {"meta.helm.sh/release-name": name}},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}, "creationTimestamp": None}, "spec": pod["spec"]},
                 "strategy": {"type": "RollingUpdate"}, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600},
        "status": {},
    }

def realistic_pod():
    """A ~5 KB review: an IIS pod as a ReplicaSet creates it, with the env, mounts, probes and
    injected volumes real pods carry (the webhook benchmark's body)."""
    pod = windows_pod("merchant", "shop", {
        "volumes": [
            {"name": "web-config", "secret": {"secretName": "merchant-web-config", "defaultMode": 420}},
            {"name": "certs", "configMap": {"name": "merchant-certs", "defaultMode": 420}},
            {"name": "kube-api-access-x2x9q", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ]}},
        ],
    })
    c = pod["spec"]["containers"][0]
    c["command"] = ["powershell.exe", "-Command",
                    "Copy-Item -Path C:\\config\\web.config -Destination C:\\inetpub\\wwwroot\\web.config -Force; C:\\ServiceMonitor.exe w3svc"]
    c["env"] = [{"name": f"APP_SETTING_{i}", "value": f"value-{i}-" + "x" * 24} for i in range(12)]
    c["env"].append({"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}})
    c["volumeMounts"] = [
        {"name": "web-config", "mountPath": "C:\\config", "readOnly": True},
        {"name": "certs", "mountPath": "C:\\certs", "readOnly": True},
        {"name": "kube-api-access-x2x9q", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True},
    ]
    c["readinessProbe"] = {"httpGet": {"path": "/health", "port": 80, "scheme": "HTTP"}, "periodSeconds": 10,
                           "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3}
    pod["metadata"]["annotations"] = {"prometheus.io/scrape": "true", "prometheus.io/port": "80",
                                      "kubectl.kubernetes.io/restartedAt": "2026-11-30T01:00:00Z"}
    pod["metadata"]["labels"].update({"app.kubernetes.io/name": "merchant", "app.kubernetes.io/instance": "merchant-prod",
                                      "app.kubernetes.io/version": "4.8.1", "team": "payments"})
    return pod

def cronjob(name, namespace):
    pod = windows_pod(name, namespace)
    spec = pod["spec"]
    spec["restartPolicy"] = "OnFailure"
    spec["containers"][0]["image"] = "mcr.microsoft.com/windows/servercore:ltsc2019"
    spec["containers"][0]["command"] = ["powershell.exe", "-File", "C:\\jobs\\report.ps1"]
    return {
        "apiVersion": "batch/v1", "kind": "CronJob",
        "metadata": {"name": name, "namespace": namespace, "creationTimestamp": None},
        "spec": {"schedule": "0 2 * * *", "concurrencyPolicy": "Forbid",
                 "jobTemplate": {"metadata": {"creationTimestamp": None},
                                 "spec": {"template": {"metadata": {"creationTimestamp": None}, "spec": spec}}}},
        "status": {},
    }

FIXTURES = {
    "pod-windows-realistic-v1.json": review("admission.k8s.io/v1", realistic_pod()),
    # A Windows pod with nothing pinning it to Windows: errors (denied) and safe fixes (mutate).
    "pod-windows-unpinned-v1.json": review("admission.k8s.io/v1", windows_pod("merchant", "shop")),
    "pod-windows-unpinned-v1beta1.json": review("admission.k8s.io/v1beta1", windows_pod("merchant", "shop")),
    # The same pod pinned and tolerating the Windows taint: clean.
    "pod-windows-pinned-v1.json": review("admission.k8s.io/v1", windows_pod("merchant", "shop", {
        "nodeSelector": {"kubernetes.io/os": "windows"},
        "os": {"name": "windows"},
        "tolerations": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}],
    })),
    # The unpinned pod as a Deployment (its template is what gets fixed).
    "deployment-windows-unpinned-v1.json": review("admission.k8s.io/v1", deployment("merchant", "shop"),
        name="merchant", kind=("apps", "v1", "Deployment"), resource=("apps", "v1", "deployments")),
    # UPDATE: judged like CREATE (the old object is not read).
    "deployment-windows-unpinned-update-v1.json": review("admission.k8s.io/v1", deployment("merchant", "shop"),
        operation="UPDATE", name="merchant", kind=("apps", "v1", "Deployment"), resource=("apps", "v1", "deployments"),
        old=deployment("merchant", "shop")),
    # A CronJob: its pod template sits three levels down.
    "cronjob-windows-unpinned-v1.json": review("admission.k8s.io/v1", cronjob("nightly-report", "shop"),
        name="nightly-report", kind=("batch", "v1", "CronJob"), resource=("batch", "v1", "cronjobs")),
    "pod-windows-unpinned-dryrun-v1.json": review("admission.k8s.io/v1", windows_pod("merchant", "shop"), dry_run=True),
    "pod-windows-unpinned-kube-system-v1.json": review("admission.k8s.io/v1", windows_pod("merchant", "kube-system"), namespace="kube-system"),
    "pod-windows-suppressed-v1.json": review("admission.k8s.io/v1", windows_pod("merchant", "shop",
        annotations={"winguard.io/ignore-all": "legacy app, pinned by the cluster's default node selector"})),
    "pod-delete-v1.json": review("admission.k8s.io/v1", None, operation="DELETE", name="merchant-7d9c8b6f5-x2x9q",
        old=windows_pod("merchant", "shop")),
    "configmap-v1.json": review("admission.k8s.io/v1", {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "web-config", "namespace": "shop"}, "data": {"web.config": "<configuration/>"}},
        name="web-config", kind=("", "v1", "ConfigMap"), resource=("", "v1", "configmaps")),
    # Malformed: an object of the wrong shape.
    "pod-containers-not-a-list-v1.json": review("admission.k8s.io/v1", {"kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "bad", "namespace": "shop"}, "spec": {"containers": {}}}),
}

for name, body in FIXTURES.items():
    with open(os.path.join(HERE, name), "w") as f:
        json.dump(body, f, indent=1)
        f.write("\n")
print(f"wrote {len(FIXTURES)} fixtures")
