//! Upstream is the oracle: what Kubernetes' API validation and the EKS VPC resource controller
//! really do (../shared/research/upstream-truth.md §A and §B, with their sources), case by case,
//! against what winguard predicts. A case names its source line:
//! V = kubernetes pkg/apis/core/validation/validation.go, KF = pkg/features/kube_features.go,
//! PU = pkg/api/pod/util.go (dropDisabledFields), VPC = aws/amazon-vpc-resource-controller-k8s
//! @b8d42511, RA = plugin/pkg/admission/runtimeclass/admission.go.

use serde_json::{Value, json};

use winguard::cli::{Policy, lint_text};
use winguard::config::Config;

/// (rule, severity, pointer) of every finding on the objects, linted under a config (YAML).
fn findings(config: &str, objects: &[Value]) -> Vec<(String, String, String)> {
    let config = Config::parse(config, "winguard.yaml").unwrap();
    let setup = Policy::new(winguard::policy::builtin_rules().unwrap(), config).unwrap();
    let text: Vec<String> = objects.iter().map(Value::to_string).collect();
    let report = lint_text(&setup, "case.yaml", &text.join("\n---\n"));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    report
        .findings
        .iter()
        .map(|f| {
            (
                f.finding.rule.clone(),
                f.finding.severity.as_str().to_string(),
                f.finding.pointer.clone(),
            )
        })
        .collect()
}

const WINDOWS_IMAGE: &str = "mcr.microsoft.com/windows/nanoserver:ltsc2022";

/// A Windows pod the rules otherwise pass, with `os.name: windows` when asked.
fn windows_pod(os_name: bool) -> Value {
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"key": "os", "value": "windows", "effect": "NoSchedule"}],
            "containers": [container("app")],
        }
    });
    if os_name {
        pod["spec"]["os"] = json!({"name": "windows"});
    }
    pod
}

fn container(name: &str) -> Value {
    json!({
        "name": name,
        "image": WINDOWS_IMAGE,
        "resources": {"limits": {"cpu": "1", "memory": "1Gi"}},
    })
}

/// Sets `value` at a dotted path under `at` (creating maps on the way).
fn set(at: &mut Value, path: &str, value: Value) {
    let mut cur = at;
    let parts: Vec<&str> = path.split('.').collect();
    for part in &parts[..parts.len() - 1] {
        cur = cur
            .as_object_mut()
            .unwrap()
            .entry(part.to_string())
            .or_insert_with(|| json!({}));
    }
    cur[parts[parts.len() - 1]] = value;
}

/// A forbidden field: where it goes, a value that is rejected, and from which version it
/// reaches validation with default gates (`None`: in every version linted here).
struct Forbidden {
    field: &'static str,
    value: Value,
    default_on: Option<&'static str>,
    /// The version just before `default_on`, where the API server drops the field.
    before: Option<&'static str>,
    /// `config` text that turns the gate on before its default, if the field has a gate.
    gate: Option<&'static str>,
}

fn forbidden(
    field: &'static str,
    value: Value,
    default_on: Option<&'static str>,
    before: Option<&'static str>,
    gate: Option<&'static str>,
) -> Forbidden {
    Forbidden {
        field,
        value,
        default_on,
        before,
        gate,
    }
}

/// The `securityContext` fields validateWindows forbids on the pod and on every container alike.
fn shared_security_fields() -> Vec<Forbidden> {
    let always = |field, value| forbidden(field, value, None, None, None);
    vec![
        // V 5025 / 5072-5110; AppArmorFields beta (on) in 1.30.
        forbidden(
            "securityContext.appArmorProfile",
            json!({"type": "RuntimeDefault"}),
            Some("1.30"),
            Some("1.29"),
            Some("AppArmorFields"),
        ),
        // V 5028, 5031, 5043-5046 / 5072-5110
        always("securityContext.seLinuxOptions", json!({"level": "s0"})),
        always(
            "securityContext.seccompProfile",
            json!({"type": "RuntimeDefault"}),
        ),
        always("securityContext.runAsUser", json!(1000)),
        always("securityContext.runAsGroup", json!(1000)),
    ]
}

fn pod_fields() -> Vec<Forbidden> {
    let always = |field, value| forbidden(field, value, None, None, None);
    let gated = |field, value, on, before, gate| {
        forbidden(field, value, Some(on), Some(before), Some(gate))
    };
    let mut fields = shared_security_fields();
    fields.extend([
        // V 5034
        always("securityContext.fsGroup", json!(2000)),
        // V 5037; ConfigurableFSGroupPolicy on from 1.20.
        gated(
            "securityContext.fsGroupChangePolicy",
            json!("OnRootMismatch"),
            "1.20",
            "1.19",
            "ConfigurableFSGroupPolicy",
        ),
        // V 5040: len > 0.
        always(
            "securityContext.sysctls",
            json!([{"name": "kernel.shm_rmid_forced", "value": "0"}]),
        ),
        // V 5049
        always("securityContext.supplementalGroups", json!([1000])),
        // V 5052; KF 2216-2220 (SupplementalGroupsPolicy beta, on, in 1.33); PU drops it before.
        gated(
            "securityContext.supplementalGroupsPolicy",
            json!("Strict"),
            "1.33",
            "1.32",
            "SupplementalGroupsPolicy",
        ),
        // V 5055; KF 2091-2095 (SELinuxChangePolicy on in 1.33); PU dropSELinuxChangePolicy.
        gated(
            "securityContext.seLinuxChangePolicy",
            json!("Recursive"),
            "1.33",
            "1.32",
            "SELinuxChangePolicy",
        ),
        // V 5059; KF 2259-2264 (UserNamespacesSupport on in 1.33); PU drops hostUsers before.
        gated(
            "hostUsers",
            json!(false),
            "1.33",
            "1.32",
            "UserNamespacesSupport",
        ),
        // V 5062-5067: only when true.
        always("hostPID", json!(true)),
        always("hostIPC", json!(true)),
        // V 5068: set at all (false too).
        always("shareProcessNamespace", json!(false)),
        // V 4902-4907 (validatePodResources); KF 1965-1968 (PodLevelResources beta, on, 1.34).
        gated(
            "resources",
            json!({"limits": {"cpu": "1"}}),
            "1.34",
            "1.33",
            "PodLevelResources",
        ),
    ]);
    fields
}

fn container_fields() -> Vec<Forbidden> {
    let always = |field, value| forbidden(field, value, None, None, None);
    // V 5072-5110, over init, app and ephemeral containers (VisitContainersWithPath).
    let mut fields = shared_security_fields();
    fields.extend([
        always("securityContext.capabilities", json!({"drop": ["ALL"]})),
        always("securityContext.readOnlyRootFilesystem", json!(true)),
        always("securityContext.privileged", json!(false)),
        always("securityContext.allowPrivilegeEscalation", json!(false)),
        // PU dropDisabledProcMountField keeps it non-nil (Default) even with ProcMountType off.
        always("securityContext.procMount", json!("Default")),
        // V 3686-3697: stopSignal other than SIGTERM/SIGKILL; KF 1443 ContainerStopSignals alpha
        // in 1.33, off by default: only a cluster with the gate on validates it.
        forbidden(
            "lifecycle.stopSignal",
            json!("SIGINT"),
            None,
            None,
            Some("ContainerStopSignals"),
        ),
    ]);
    fields
}

fn unsupported_at(findings: &[(String, String, String)], pointer: &str) -> Option<String> {
    findings
        .iter()
        .find(|(rule, _, p)| rule == "windows-unsupported-field" && p == pointer)
        .map(|(_, severity, _)| severity.clone())
}

/// What the API server does with each forbidden field, by the version it is set at: before its
/// default-on version the field is dropped (nothing rejected), from it the pod is rejected; a
/// gate named in `featureGates` moves that line.
#[test]
fn forbidden_fields_are_errors_exactly_where_the_api_server_rejects_them() {
    let mut checked = 0;
    for (scope, fields) in [("pod", pod_fields()), ("container", container_fields())] {
        for f in fields {
            let kinds: &[&str] = if scope == "pod" {
                &["pod"]
            } else {
                &["containers", "initContainers", "ephemeralContainers"]
            };
            for kind in kinds {
                let make = || {
                    let mut pod = windows_pod(true);
                    let pointer = match *kind {
                        "pod" => {
                            set(&mut pod["spec"], f.field, f.value.clone());
                            format!("/spec/{}", f.field.replace('.', "/"))
                        }
                        "containers" => {
                            set(&mut pod["spec"]["containers"][0], f.field, f.value.clone());
                            format!("/spec/containers/0/{}", f.field.replace('.', "/"))
                        }
                        list => {
                            let mut c = container("extra");
                            set(&mut c, f.field, f.value.clone());
                            pod["spec"][list] = json!([c]);
                            format!("/spec/{list}/0/{}", f.field.replace('.', "/"))
                        }
                    };
                    (pod, pointer)
                };
                let (pod, pointer) = make();
                let version = |v: &str| format!("kubernetesVersion: \"{v}\"");
                // Before 1.24 `spec.os` itself is dropped, so a field on by default earlier than
                // that is, for a Windows pod, validated from 1.24 like the rest.
                let minor = |v: &str| v.split('.').nth(1).unwrap().parse::<u32>().unwrap();
                let default_on = f.default_on.filter(|v| minor(v) > 24);
                match (default_on, f.gate) {
                    (Some(on), gate) => {
                        let at = findings(&version(on), std::slice::from_ref(&pod));
                        assert_eq!(
                            unsupported_at(&at, &pointer).as_deref(),
                            Some("error"),
                            "{kind} {} at {on}",
                            f.field
                        );
                        let before = f.before.unwrap();
                        let dropped = findings(&version(before), std::slice::from_ref(&pod));
                        assert_eq!(
                            unsupported_at(&dropped, &pointer),
                            None,
                            "{kind} {} at {before}: dropped",
                            f.field
                        );
                        if let Some(gate) = gate {
                            let early =
                                format!("{}\nfeatureGates: {{{gate}: true}}", version(before));
                            let early = findings(&early, std::slice::from_ref(&pod));
                            assert_eq!(
                                unsupported_at(&early, &pointer).as_deref(),
                                Some("error"),
                                "{kind} {} at {before} with {gate}",
                                f.field
                            );
                        }
                    }
                    (None, Some(gate)) if f.default_on.is_none() => {
                        // Off by default in every version: only the gate brings it to validation.
                        let off = findings("{}", std::slice::from_ref(&pod));
                        assert_eq!(
                            unsupported_at(&off, &pointer),
                            None,
                            "{kind} {}: gate off",
                            f.field
                        );
                        let on = findings(
                            &format!("featureGates: {{{gate}: true}}"),
                            std::slice::from_ref(&pod),
                        );
                        assert_eq!(
                            unsupported_at(&on, &pointer).as_deref(),
                            Some("error"),
                            "{kind} {} with {gate}",
                            f.field
                        );
                    }
                    (None, _) => {
                        for v in ["1.24", "1.34"] {
                            let at = findings(&version(v), std::slice::from_ref(&pod));
                            assert_eq!(
                                unsupported_at(&at, &pointer).as_deref(),
                                Some("error"),
                                "{kind} {} at {v}",
                                f.field
                            );
                        }
                        // Before 1.24 `spec.os` itself is dropped (IdentifyPodOS): nothing is
                        // rejected, Windows ignores the field (a warning).
                        let old = findings(&version("1.23"), std::slice::from_ref(&pod));
                        assert_eq!(
                            unsupported_at(&old, &pointer).as_deref(),
                            Some("warning"),
                            "{kind} {} at 1.23",
                            f.field
                        );
                    }
                }
                // Without `spec.os.name: windows` nothing validates the field: a warning.
                let mut no_os = pod.clone();
                no_os["spec"].as_object_mut().unwrap().remove("os");
                let gates = f
                    .gate
                    .map(|g| format!("featureGates: {{{g}: true}}"))
                    .unwrap_or_default();
                let warned = findings(&gates, &[no_os]);
                assert_eq!(
                    unsupported_at(&warned, &pointer).as_deref(),
                    Some("warning"),
                    "{kind} {} without os.name",
                    f.field
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 16 + 11 * 3);
}

/// V 5040 and 5062-5067, 3686-3697: the values the API server accepts.
#[test]
fn accepted_values_of_forbidden_fields_are_not_findings() {
    let mut pod = windows_pod(true);
    set(&mut pod["spec"], "securityContext.sysctls", json!([]));
    pod["spec"]["hostPID"] = json!(false);
    pod["spec"]["hostIPC"] = json!(false);
    set(
        &mut pod["spec"]["containers"][0],
        "lifecycle.stopSignal",
        json!("SIGTERM"),
    );
    let all = findings("featureGates: {ContainerStopSignals: true}", &[pod]);
    assert!(
        !all.iter()
            .any(|(rule, _, _)| rule == "windows-unsupported-field"),
        "{all:?}"
    );
}

/// validateOS (V 9023-9037): `os: {}` is Required, a name outside {linux, windows}
/// (case-sensitive, V 125) NotSupported; before 1.24 the field is dropped (KW IdentifyPodOS).
#[test]
fn spec_os_is_validated_as_the_api_server_validates_it() {
    let case = |os: Value, version: &str| {
        let mut pod = windows_pod(false);
        pod["spec"]["os"] = os;
        findings(&format!("kubernetesVersion: \"{version}\""), &[pod])
            .into_iter()
            .filter(|(rule, _, _)| rule == "pod-os-invalid")
            .count()
    };
    assert_eq!(case(json!({}), "1.24"), 1, "V 9026: Required");
    assert_eq!(
        case(json!({"name": "Windows"}), "1.34"),
        1,
        "V 9031: NotSupported"
    );
    assert_eq!(case(json!({"name": "win"}), "1.34"), 1);
    assert_eq!(case(json!({"name": "windows"}), "1.34"), 0);
    assert_eq!(case(json!({"name": "linux"}), "1.34"), 0);
    assert_eq!(
        case(json!({"name": "Windows"}), "1.23"),
        0,
        "dropped before 1.24"
    );
}

fn hostprocess_pod() -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "hp"},
        "spec": {
            "hostNetwork": true,
            "securityContext": {"windowsOptions": {"hostProcess": true, "runAsUserName": "NT AUTHORITY\\SYSTEM"}},
            "nodeSelector": {"kubernetes.io/os": "windows"},
            "tolerations": [{"operator": "Exists"}],
            "containers": [container("agent")],
        }
    })
}

fn hostprocess_findings(config: &str, pod: Value) -> Vec<(String, String)> {
    findings(config, &[pod])
        .into_iter()
        .filter(|(rule, _, _)| rule == "windows-hostprocess-inconsistent")
        .map(|(_, severity, pointer)| (severity, pointer))
        .collect()
}

/// validateWindowsHostProcessPod (V 8960-9021), for every pod whatever its `spec.os`.
#[test]
fn hostprocess_pods_are_rejected_where_the_api_server_rejects_them() {
    assert!(hostprocess_findings("{}", hostprocess_pod()).is_empty());
    // 1. V 8982-8985: pod- and container-level values, both set, must agree.
    let mut pod = hostprocess_pod();
    set(
        &mut pod["spec"]["containers"][0],
        "securityContext.windowsOptions.hostProcess",
        json!(false),
    );
    let got = hostprocess_findings("{}", pod);
    assert!(
        got.iter().any(|(s, p)| s == "error"
            && p == "/spec/containers/0/securityContext/windowsOptions/hostProcess"),
        "{got:?}"
    );
    // 2. V 8987-9005: one HostProcess container (init, app or ephemeral) makes all required.
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let mut pod = hostprocess_pod();
        pod["spec"]["securityContext"] = json!({});
        set(
            &mut pod["spec"]["containers"][0],
            "securityContext.windowsOptions.hostProcess",
            json!(true),
        );
        let plain = container("plain");
        match list {
            "containers" => pod["spec"]["containers"]
                .as_array_mut()
                .unwrap()
                .push(plain),
            other => pod["spec"][other] = json!([plain]),
        }
        let index = if list == "containers" { 1 } else { 0 };
        let got = hostprocess_findings("{}", pod);
        assert!(
            got.iter()
                .any(|(s, p)| s == "error" && *p == format!("/spec/{list}/{index}")),
            "{list}: {got:?}"
        );
    }
    // 3. V 9007-9011: hostNetwork must be true.
    let mut pod = hostprocess_pod();
    pod["spec"]["hostNetwork"] = json!(false);
    let got = hostprocess_findings("{}", pod);
    assert!(
        got.iter()
            .any(|(s, p)| s == "error" && p == "/spec/hostNetwork"),
        "{got:?}"
    );
    // No runAsNonRoot check in the API server: the docs forbid it, so a warning, not an error.
    let mut pod = hostprocess_pod();
    set(
        &mut pod["spec"],
        "securityContext.runAsNonRoot",
        json!(true),
    );
    assert_eq!(
        hostprocess_findings("{}", pod),
        [(
            "warning".to_string(),
            "/spec/securityContext/runAsNonRoot".to_string()
        )]
    );
    // The gate: alpha (off) in 1.22, on from 1.23 (KW WindowsHostProcessContainers).
    assert_eq!(
        hostprocess_findings("kubernetesVersion: \"1.22\"", hostprocess_pod()).len(),
        1
    );
    assert!(hostprocess_findings("kubernetesVersion: \"1.23\"", hostprocess_pod()).is_empty());
    assert!(
        hostprocess_findings(
            "kubernetesVersion: \"1.22\"\nfeatureGates: {WindowsHostProcessContainers: true}",
            hostprocess_pod()
        )
        .is_empty()
    );
}

// === §B: the EKS VPC resource controller ===

const RESOURCE: &str = "vpc.amazonaws.com/PrivateIPv4Address";

fn eks_pod(spec: Value) -> Value {
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "w"},
        "spec": {
            "tolerations": [{"key": "os", "value": "windows", "effect": "NoSchedule"}],
            "containers": [container("app")],
        }
    });
    for (k, v) in spec.as_object().unwrap() {
        pod["spec"][k] = v.clone();
    }
    pod
}

fn gets_no_ip(objects: &[Value]) -> bool {
    findings("profile: eks", objects)
        .iter()
        .any(|(rule, severity, _)| rule == "eks-vpc-ip-resource-missing" && severity == "error")
}

fn with_resource(name: &str, requests: Option<Value>, limits: Option<Value>) -> Value {
    let mut c = container(name);
    if let Some(r) = requests {
        c["resources"]["requests"] = json!({RESOURCE: r});
    }
    if let Some(l) = limits {
        c["resources"]["limits"][RESOURCE] = l;
    }
    c
}

#[test]
fn eks_pods_get_an_ip_exactly_where_the_controller_gives_one() {
    let affinity = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/os", "operator": "In", "values": ["windows"]}]}]}}});
    // hasWindowsNodeSelector (pod_webhook.go:241-251, type.go:47-51): either OS key, exactly
    // `windows`; HandleWindowsPod then sets the resource on containers[0] (174-177).
    assert!(!gets_no_ip(&[eks_pod(
        json!({"nodeSelector": {"kubernetes.io/os": "windows"}})
    )]));
    assert!(!gets_no_ip(&[eks_pod(
        json!({"nodeSelector": {"beta.kubernetes.io/os": "windows"}})
    )]));
    // No affinity and no spec.os in WhichPod (pod_webhook.go:110-125).
    assert!(gets_no_ip(&[eks_pod(json!({"affinity": affinity}))]));
    assert!(gets_no_ip(&[eks_pod(json!({"os": {"name": "windows"}}))]));
    // hostNetwork pods are skipped (pod_webhook.go:112-114): nothing to give.
    assert!(!gets_no_ip(&[eks_pod(
        json!({"affinity": affinity, "hostNetwork": true})
    )]));
    // RA setScheduling merges the RuntimeClass's nodeSelector into the pod before mutating
    // webhooks run (plugins.go AllOrderedPlugins): the webhook sees it as the pod's own.
    let runtime_class = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "win"},
        "handler": "runhcs-wcow-process", "scheduling": {"nodeSelector": {"kubernetes.io/os": "windows"}}});
    assert!(!gets_no_ip(&[
        runtime_class,
        eks_pod(json!({"runtimeClassName": "win"}))
    ]));
    // getAggregateResources sums requests over spec.containers (pod_controller.go:131-133,
    // 176-188): any app container will do; requests default from limits (defaults.go:170-185).
    let second = json!([
        container("app"),
        with_resource("side", Some(json!("1")), None)
    ]);
    assert!(!gets_no_ip(&[eks_pod(
        json!({"affinity": affinity, "containers": second})
    )]));
    let limit_only = json!([with_resource("app", None, Some(json!("1")))]);
    assert!(!gets_no_ip(&[eks_pod(
        json!({"affinity": affinity, "containers": limit_only})
    )]));
    // …but not init containers, and not zero.
    let init = json!([with_resource("setup", Some(json!("1")), Some(json!("1")))]);
    assert!(gets_no_ip(&[eks_pod(
        json!({"affinity": affinity, "initContainers": init})
    )]));
    let zero = json!([with_resource("app", Some(json!("0")), Some(json!("0")))]);
    assert!(gets_no_ip(&[eks_pod(
        json!({"affinity": affinity, "containers": zero})
    )]));
    // Outside profile eks the rule says nothing.
    let plain = findings("{}", &[eks_pod(json!({"affinity": affinity}))]);
    assert!(
        !plain.iter().any(|(rule, _, _)| rule.starts_with("eks-")),
        "{plain:?}"
    );
}

/// annotation_validation_webhook.go:90-106, 146-155: on CREATE it denies any pod carrying
/// `vpc.amazonaws.com/pod-eni` (always) or `vpc.amazonaws.com/PrivateIPv4Address` (when Windows
/// IPAM is on), whatever the pod's OS.
#[test]
fn eks_annotations_the_validating_webhook_denies_are_errors_on_any_pod() {
    for annotation in [RESOURCE, "vpc.amazonaws.com/pod-eni"] {
        for os in ["windows", "linux"] {
            let mut pod = eks_pod(json!({"nodeSelector": {"kubernetes.io/os": os}}));
            if os == "linux" {
                pod["spec"]["containers"][0]["image"] = json!("nginx:1.27-bookworm");
                pod["spec"].as_object_mut().unwrap().remove("tolerations");
            }
            pod["metadata"]["annotations"] = json!({annotation: "x"});
            let got = findings("profile: eks", &[pod]);
            let denied = got.iter().any(|(rule, severity, pointer)| {
                rule == "eks-vpc-ip-annotation-preset"
                    && severity == "error"
                    && pointer.ends_with(&annotation.replace('/', "~1"))
            });
            assert!(denied, "{annotation} on a {os} pod: {got:?}");
        }
    }
}
