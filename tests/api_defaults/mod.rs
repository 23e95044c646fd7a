//! What the API server fills in before an admission webhook sees an object, for the kinds the
//! rules read. Written from Kubernetes' sources (v1.36):
//!
//! - `pkg/apis/core/v1/defaults.go`: `SetDefaults_Pod` (requests from limits, service links),
//!   `SetDefaults_PodSpec` (DNS and restart policy, grace period, security context, scheduler),
//!   `SetDefaults_Container` (termination message, image pull policy), `SetDefaults_ContainerPort`,
//!   `SetDefaults_Probe`, `SetDefaults_HTTPGetAction`, `SetDefaults_Volume` (no source: an
//!   emptyDir), `SetDefaults_{Secret,ConfigMap,Projected,DownwardAPI}VolumeSource` (`defaultMode:
//!   420`), `SetDefaults_Service`;
//! - `pkg/apis/apps/v1/defaults.go` (Deployment, DaemonSet, StatefulSet, ReplicaSet) and
//!   `pkg/apis/batch/v1/defaults.go` (Job, CronJob);
//! - the admission plugins that run before webhooks, for Pods: ServiceAccount
//!   (`plugin/pkg/admission/serviceaccount`: `serviceAccountName: default` and the projected
//!   `kube-api-access-…` token volume mounted read-only into every container) and
//!   DefaultTolerationSeconds (`plugin/pkg/admission/defaulttolerationseconds`: NoExecute
//!   tolerations of `not-ready` and `unreachable` for 300 s).

use serde_json::{Map, Value, json};

/// `object` as the API server hands it to admission webhooks.
pub fn defaulted(mut object: Value) -> Value {
    let kind = object["kind"].as_str().unwrap_or("").to_string();
    if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
        workload_defaults(&kind, spec);
    }
    if let Some((spec_path, _)) = winguard::k8s::pod_template_paths(&kind)
        && let Some(spec) = object.pointer_mut(spec_path).and_then(Value::as_object_mut)
    {
        pod_spec_defaults(spec);
        if kind == "Pod" {
            pod_admission(spec);
        }
    }
    object
}

fn set_default(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), value);
    }
}

fn workload_defaults(kind: &str, spec: &mut Map<String, Value>) {
    match kind {
        "Deployment" => {
            set_default(spec, "replicas", json!(1));
            set_default(spec, "revisionHistoryLimit", json!(10));
            set_default(spec, "progressDeadlineSeconds", json!(600));
            set_default(
                spec,
                "strategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}),
            );
        }
        "DaemonSet" => {
            set_default(spec, "revisionHistoryLimit", json!(10));
            set_default(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
            );
        }
        "StatefulSet" => {
            set_default(spec, "replicas", json!(1));
            set_default(spec, "revisionHistoryLimit", json!(10));
            set_default(spec, "podManagementPolicy", json!("OrderedReady"));
            set_default(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}),
            );
        }
        "ReplicaSet" | "ReplicationController" => set_default(spec, "replicas", json!(1)),
        "Job" => job_defaults(spec),
        "CronJob" => {
            set_default(spec, "concurrencyPolicy", json!("Allow"));
            set_default(spec, "suspend", json!(false));
            set_default(spec, "successfulJobsHistoryLimit", json!(3));
            set_default(spec, "failedJobsHistoryLimit", json!(1));
            if let Some(job) = spec
                .get_mut("jobTemplate")
                .and_then(|t| t.get_mut("spec"))
                .and_then(Value::as_object_mut)
            {
                job_defaults(job);
            }
        }
        "Service" => {
            set_default(spec, "type", json!("ClusterIP"));
            set_default(spec, "sessionAffinity", json!("None"));
            set_default(spec, "internalTrafficPolicy", json!("Cluster"));
            if matches!(spec["type"].as_str(), Some("LoadBalancer" | "NodePort")) {
                set_default(spec, "externalTrafficPolicy", json!("Cluster"));
            }
            for port in spec
                .get_mut("ports")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                if let Some(port) = port.as_object_mut() {
                    set_default(port, "protocol", json!("TCP"));
                    let number = port.get("port").cloned().unwrap_or(Value::Null);
                    set_default(port, "targetPort", number);
                }
            }
        }
        _ => {}
    }
}

fn job_defaults(spec: &mut Map<String, Value>) {
    if spec.get("completions").is_none_or(Value::is_null)
        && spec.get("parallelism").is_none_or(Value::is_null)
    {
        spec.insert("completions".into(), json!(1));
        spec.insert("parallelism".into(), json!(1));
    }
    set_default(spec, "parallelism", json!(1));
    set_default(spec, "backoffLimit", json!(6));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
}

const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

fn pod_spec_defaults(spec: &mut Map<String, Value>) {
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    for list in CONTAINER_LISTS {
        for c in containers_mut(spec, list) {
            container_defaults(c);
        }
    }
    for volume in spec
        .get_mut("volumes")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let Some(volume) = volume.as_object_mut() else {
            continue;
        };
        if volume.keys().all(|k| k == "name") {
            volume.insert("emptyDir".into(), json!({}));
        }
        for source in ["secret", "configMap", "projected", "downwardAPI"] {
            if let Some(s) = volume.get_mut(source).and_then(Value::as_object_mut) {
                set_default(s, "defaultMode", json!(420));
            }
        }
    }
}

fn containers_mut<'s>(
    spec: &'s mut Map<String, Value>,
    list: &str,
) -> impl Iterator<Item = &'s mut Map<String, Value>> {
    spec.get_mut(list)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
}

fn container_defaults(c: &mut Map<String, Value>) {
    set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
    set_default(c, "terminationMessagePolicy", json!("File"));
    // `Always` for `:latest` or no tag, else `IfNotPresent` (a digest counts as a tag).
    let image = c.get("image").and_then(Value::as_str).unwrap_or("");
    let last = image.rsplit('/').next().unwrap_or(image);
    let tag = if image.contains('@') {
        Some("digest")
    } else {
        last.split_once(':').map(|(_, t)| t)
    };
    let policy = match tag {
        None | Some("latest") => "Always",
        Some(_) => "IfNotPresent",
    };
    set_default(c, "imagePullPolicy", json!(policy));
    for port in c
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object_mut)
    {
        set_default(port, "protocol", json!("TCP"));
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).and_then(Value::as_object_mut) {
            set_default(p, "timeoutSeconds", json!(1));
            set_default(p, "periodSeconds", json!(10));
            set_default(p, "successThreshold", json!(1));
            set_default(p, "failureThreshold", json!(3));
            if let Some(get) = p.get_mut("httpGet").and_then(Value::as_object_mut) {
                set_default(get, "path", json!("/"));
                set_default(get, "scheme", json!("HTTP"));
            }
        }
    }
}

/// `SetDefaults_Pod` and the admission plugins that run on Pods before webhooks.
fn pod_admission(spec: &mut Map<String, Value>) {
    set_default(spec, "enableServiceLinks", json!(true));
    // Requests default to the limits where a container gives only a limit.
    for list in ["initContainers", "containers"] {
        for c in containers_mut(spec, list) {
            let Some(limits) = c
                .get("resources")
                .and_then(|r| r.get("limits"))
                .and_then(Value::as_object)
                .cloned()
            else {
                continue;
            };
            let resources = c
                .entry("resources")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .expect("resources is a map");
            let requests = resources
                .entry("requests")
                .or_insert_with(|| json!({}))
                .as_object_mut();
            if let Some(requests) = requests {
                for (name, quantity) in limits {
                    requests.entry(name).or_insert(quantity);
                }
            }
        }
    }
    // ServiceAccount.
    set_default(spec, "serviceAccountName", json!("default"));
    if spec.get("automountServiceAccountToken") != Some(&json!(false)) {
        const NAME: &str = "kube-api-access-x7k2q";
        let volumes = spec
            .entry("volumes")
            .or_insert_with(|| json!([]))
            .as_array_mut();
        if let Some(volumes) = volumes {
            volumes.push(json!({
                "name": NAME,
                "projected": {
                    "defaultMode": 420,
                    "sources": [
                        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}
                    ]
                }
            }));
        }
        for list in ["initContainers", "containers"] {
            for c in containers_mut(spec, list) {
                let mounts = c
                    .entry("volumeMounts")
                    .or_insert_with(|| json!([]))
                    .as_array_mut();
                if let Some(mounts) = mounts {
                    mounts.push(json!({
                        "name": NAME,
                        "readOnly": true,
                        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"
                    }));
                }
            }
        }
    }
    // DefaultTolerationSeconds.
    let tolerations = spec
        .entry("tolerations")
        .or_insert_with(|| json!([]))
        .as_array_mut();
    if let Some(tolerations) = tolerations {
        for key in [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        ] {
            let tolerated = tolerations.iter().any(|t| {
                t["effect"].as_str().is_none_or(|e| e == "NoExecute")
                    && (t["key"] == key || (t["key"].is_null() && t["operator"] == "Exists"))
            });
            if !tolerated {
                tolerations.push(json!({
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300
                }));
            }
        }
    }
}
