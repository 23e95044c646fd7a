//! The webhook's own Helm chart (`webhook/chart`), rendered by real Helm (PyPI
//! `helm-python-sdk`, Helm 4's engine) and linted by winguard: it must pass its own rules.

mod common;

use serde_json::Value;

use common::{python, root};

/// Renders the chart with `values` (JSON) into a manifest stream with `# Source:` comments.
fn render(values: &str) -> String {
    let code = r#"
import json, sys
import helm_python as helm
chart = helm.Chart.load(sys.argv[1])
out = chart.render(json.load(open(sys.argv[2])), name="winguard", namespace="winguard-system")
for path in sorted(out):
    if path.endswith(".yaml") and out[path].strip():
        print(f"---\n# Source: {path}\n{out[path].strip()}")
"#;
    let chart = root().join("webhook/chart");
    let values_file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(values_file.path(), values).unwrap();
    let r = python(code, &[&chart, values_file.path()]);
    assert_eq!(r.code, 0, "helm render failed: {}", r.stderr);
    r.stdout
}

/// The stream's objects by kind.
fn objects(stream: &str) -> Vec<Value> {
    stream
        .split("\n---")
        .filter_map(|doc| serde_yaml_ng::from_str::<Value>(doc).ok())
        .filter(|v| v.is_object())
        .collect()
}

fn of_kind<'a>(objects: &'a [Value], kind: &str) -> Vec<&'a Value> {
    objects.iter().filter(|o| o["kind"] == kind).collect()
}

/// Lints a rendering of the chart (`what` names it in a failure): winguard's own chart must pass
/// winguard. Returns the report.
fn passes_winguard(stream: &str, what: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("winguard-chart.yaml");
    std::fs::write(&file, stream).unwrap();
    let (code, report) = common::json(&["lint", file.to_str().unwrap()]);
    assert_eq!(
        (code, report["findings"].as_array().unwrap().len()),
        (0, 0),
        "{what}: winguard's chart fails winguard: {report:#}"
    );
    report
}

#[test]
fn the_chart_renders_with_helm_and_passes_winguards_own_rules() {
    for values in [r#"{}"#, r#"{"tls": {"mode": "selfSigned"}}"#] {
        let report = passes_winguard(&render(values), values);
        assert!(
            report["summary"]["objects"].as_u64().unwrap() >= 7,
            "{report}"
        );
    }
}

#[test]
fn the_chart_deploys_a_hardened_linux_webhook_with_safe_webhook_settings() {
    let objects = objects(&render("{}"));
    let deployment = of_kind(&objects, "Deployment")[0];
    let spec = &deployment["spec"];
    assert_eq!(spec["replicas"], 2);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["nodeSelector"]["kubernetes.io/os"], "linux");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert!(pod["affinity"]["podAntiAffinity"].is_object());
    let container = &pod["containers"][0];
    assert_eq!(container["securityContext"]["readOnlyRootFilesystem"], true);
    assert_eq!(
        container["securityContext"]["allowPrivilegeEscalation"],
        false
    );
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert!(container["resources"]["limits"]["memory"].is_string());
    for kind in [
        "Service",
        "PodDisruptionBudget",
        "NetworkPolicy",
        "ConfigMap",
        "Certificate",
    ] {
        assert_eq!(of_kind(&objects, kind).len(), 1, "{kind}");
    }
    for kind in [
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    ] {
        let config = of_kind(&objects, kind)[0];
        assert_eq!(
            config["metadata"]["annotations"]["cert-manager.io/inject-ca-from"],
            "winguard-system/winguard"
        );
        let webhook = &config["webhooks"][0];
        assert_eq!(
            webhook["admissionReviewVersions"],
            serde_json::json!(["v1", "v1beta1"])
        );
        assert_eq!(webhook["sideEffects"], "None");
        assert!(webhook["timeoutSeconds"].as_u64().unwrap() <= 10);
        assert_eq!(webhook["failurePolicy"], "Ignore");
        let selector = webhook["namespaceSelector"]["matchExpressions"]
            .as_array()
            .unwrap();
        assert_eq!(
            selector[0]["values"],
            serde_json::json!(["winguard-system", "kube-system"])
        );
        assert_eq!(selector[1]["key"], "winguard.io/ignore");
        let service = &webhook["clientConfig"]["service"];
        assert_eq!(service["name"], "winguard");
        let path = if kind.starts_with("Mutating") {
            assert_eq!(webhook["reinvocationPolicy"], "IfNeeded");
            "/mutate"
        } else {
            "/validate"
        };
        assert_eq!(service["path"], path);
    }
    // The ConfigMap's winguard.yaml is a config winguard accepts, exempting its own namespace.
    let config = of_kind(&objects, "ConfigMap")[0]["data"]["winguard.yaml"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(config.contains("- winguard-system"), "{config}");
    let dir = tempfile::tempdir().unwrap();
    let config_file = dir.path().join("winguard.yaml");
    std::fs::write(&config_file, &config).unwrap();
    let clean = root().join("testdata/cli/clean.yaml");
    let r = common::run(&[
        "lint",
        "--config",
        config_file.to_str().unwrap(),
        clean.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // selfSigned: the Secret's CA is the webhook configurations' caBundle.
    let objects = objects_self_signed();
    let secret = of_kind(&objects, "Secret")[0];
    for kind in [
        "ValidatingWebhookConfiguration",
        "MutatingWebhookConfiguration",
    ] {
        let bundle = &of_kind(&objects, kind)[0]["webhooks"][0]["clientConfig"]["caBundle"];
        assert_eq!(*bundle, secret["data"]["ca.crt"], "{kind}");
    }
}

fn objects_self_signed() -> Vec<Value> {
    objects(&render(r#"{"tls": {"mode": "selfSigned"}}"#))
}

/// Every option of the chart, rendered (`helm template`) and linted (`helm lint --strict`) by the
/// real `helm` binary, then linted by winguard: each must pass all three, and each option must
/// show in what is rendered.
#[test]
fn every_option_renders_and_lints_with_real_helm() {
    let helm = common::tool("helm");
    let chart = root().join("webhook/chart");
    type Check = fn(&[Value]);
    let cases: Vec<(&str, Vec<&str>, Check)> = vec![
        ("defaults", vec![], |objects| {
            let deployment = of_kind(objects, "Deployment")[0];
            let container = &deployment["spec"]["template"]["spec"]["containers"][0];
            assert!(
                container["args"]
                    .as_array()
                    .unwrap()
                    .contains(&Value::from("--metrics-listen=0.0.0.0:9090")),
                "{container}"
            );
            let annotations = &deployment["spec"]["template"]["metadata"]["annotations"];
            assert_eq!(annotations["prometheus.io/port"], "9090");
            assert!(of_kind(objects, "ServiceMonitor").is_empty());
            let policy = of_kind(objects, "NetworkPolicy")[0];
            let ingress = policy["spec"]["ingress"].as_array().unwrap();
            assert_eq!(ingress.len(), 2, "{policy}");
            assert!(ingress.iter().all(|rule| rule.get("from").is_none()));
        }),
        (
            "self-signed TLS",
            vec!["--set", "tls.mode=selfSigned"],
            |objects| {
                assert!(of_kind(objects, "Certificate").is_empty());
            },
        ),
        (
            "cert-manager with an issuer",
            vec![
                "--set",
                "tls.certManager.issuerRef.name=corp-ca",
                "--set",
                "tls.certManager.issuerRef.kind=ClusterIssuer",
            ],
            |objects| {
                let certificate = of_kind(objects, "Certificate")[0];
                assert_eq!(certificate["spec"]["issuerRef"]["name"], "corp-ca");
            },
        ),
        (
            "audit, deny on warnings",
            vec![
                "--set",
                "config.webhook.enforcement=audit",
                "--set",
                "config.webhook.denyOn=warning",
            ],
            |objects| {
                let config = of_kind(objects, "ConfigMap")[0];
                let text = config["data"]["winguard.yaml"].as_str().unwrap();
                assert!(text.contains("enforcement: audit"), "{text}");
            },
        ),
        (
            "failure policy Fail",
            vec!["--set", "webhook.failurePolicy=Fail"],
            |objects| {
                let hooks = of_kind(objects, "ValidatingWebhookConfiguration")[0];
                assert_eq!(hooks["webhooks"][0]["failurePolicy"], "Fail");
            },
        ),
        (
            "metrics off",
            vec!["--set", "metrics.enabled=false"],
            |objects| {
                let deployment = of_kind(objects, "Deployment")[0];
                let text = deployment.to_string();
                assert!(!text.contains("metrics-listen") && !text.contains("prometheus.io"));
                let policy = of_kind(objects, "NetworkPolicy")[0];
                assert_eq!(policy["spec"]["ingress"].as_array().unwrap().len(), 1);
            },
        ),
        (
            "ServiceMonitor",
            vec![
                "--set",
                "metrics.serviceMonitor.enabled=true",
                "--set",
                "metrics.serviceMonitor.labels.release=kube-prometheus-stack",
            ],
            |objects| {
                let monitor = of_kind(objects, "ServiceMonitor")[0];
                assert_eq!(monitor["apiVersion"], "monitoring.coreos.com/v1");
                assert_eq!(
                    monitor["metadata"]["labels"]["release"],
                    "kube-prometheus-stack"
                );
                assert_eq!(monitor["spec"]["endpoints"][0]["port"], "metrics");
                let service = of_kind(objects, "Service")[0];
                assert!(service["spec"]["ports"].to_string().contains("\"metrics\""));
            },
        ),
        (
            "NetworkPolicy from the API server's range and the scrapers' namespace",
            vec![
                "--set-json",
                r#"networkPolicy.apiServerCIDRs=["10.0.0.0/16","172.16.0.10/32"]"#,
                "--set-json",
                r#"networkPolicy.metricsNamespaces=["monitoring"]"#,
            ],
            |objects| {
                let policy = of_kind(objects, "NetworkPolicy")[0];
                let ingress = &policy["spec"]["ingress"];
                assert_eq!(ingress[0]["ports"][0]["port"], 8443);
                assert_eq!(ingress[0]["from"][1]["ipBlock"]["cidr"], "172.16.0.10/32");
                assert_eq!(ingress[1]["ports"][0]["port"], 9090);
                assert_eq!(
                    ingress[1]["from"][0]["namespaceSelector"]["matchLabels"]["kubernetes.io/metadata.name"],
                    "monitoring"
                );
            },
        ),
        (
            "NetworkPolicy off",
            vec!["--set", "networkPolicy.enabled=false"],
            |objects| {
                assert!(of_kind(objects, "NetworkPolicy").is_empty());
            },
        ),
        (
            "validate only",
            vec!["--set", "webhook.mutate=false"],
            |objects| {
                assert!(of_kind(objects, "MutatingWebhookConfiguration").is_empty());
            },
        ),
        (
            "pushed image",
            vec![
                "--set",
                "image.repository=registry.internal/platform/winguard",
                "--set",
                "image.tag=0.1.0",
            ],
            |objects| {
                let deployment = of_kind(objects, "Deployment")[0];
                assert_eq!(
                    deployment["spec"]["template"]["spec"]["containers"][0]["image"],
                    "registry.internal/platform/winguard:0.1.0"
                );
            },
        ),
    ];
    for (name, args, check) in cases {
        let mut template = std::process::Command::new(&helm);
        template
            .args(["template", "winguard"])
            .arg(&chart)
            .args(["--namespace", "winguard"])
            .args(&args);
        let rendered = common::run_cmd(template, None);
        assert_eq!(
            rendered.code, 0,
            "{name}: helm template: {}",
            rendered.stderr
        );
        let mut lint = std::process::Command::new(&helm);
        lint.args(["lint", "--strict"]).arg(&chart).args(&args);
        let linted = common::run_cmd(lint, None);
        assert_eq!(
            linted.code, 0,
            "{name}: helm lint --strict:\n{}{}",
            linted.stdout, linted.stderr
        );
        passes_winguard(&rendered.stdout, name);
        check(&objects(&rendered.stdout));
    }
}

/// `nodes.configMap` mounts the named ConfigMap and passes its `nodes.json` to `--nodes`.
#[test]
fn the_nodes_configmap_is_mounted_and_given_to_serve() {
    let deployment = |values: &str| {
        let objects = objects(&render(values));
        of_kind(&objects, "Deployment")[0].clone()
    };
    let without = deployment("{}");
    let args = |d: &Value| d["spec"]["template"]["spec"]["containers"][0]["args"].clone();
    assert!(
        !args(&without).to_string().contains("--nodes"),
        "{}",
        args(&without)
    );
    let with = deployment(r#"{"nodes": {"configMap": "winguard-nodes"}}"#);
    assert!(
        args(&with)
            .as_array()
            .unwrap()
            .contains(&Value::from("--nodes=/nodes/nodes.json")),
        "{}",
        args(&with)
    );
    let pod = &with["spec"]["template"]["spec"];
    assert!(
        pod["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["name"] == "nodes" && v["configMap"]["name"] == "winguard-nodes"),
        "{pod}"
    );
    assert!(
        pod["containers"][0]["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["name"] == "nodes" && m["mountPath"] == "/nodes"),
        "{pod}"
    );
    passes_winguard(
        &render(r#"{"nodes": {"configMap": "winguard-nodes"}}"#),
        "nodes.configMap",
    );
}

/// With `config.images.resolve`, the pods may reach DNS and the registries' ports (nothing else),
/// keep their cache in an emptyDir, and read a Docker config from the Secret named.
#[test]
fn resolving_images_opens_egress_to_registries_only_and_mounts_a_cache() {
    let values = r#"{"config": {"images": {"resolve": true}},
                     "registry": {"egressCIDRs": ["10.20.0.0/16"], "dockerConfigSecret": "regcred"}}"#;
    let stream = render(values);
    let rendered = objects(&stream);
    let policy = of_kind(&rendered, "NetworkPolicy")[0];
    let egress = policy["spec"]["egress"].as_array().unwrap();
    let ports = |rule: &Value| -> Vec<String> {
        rule["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| format!("{}/{}", p["port"], p["protocol"].as_str().unwrap()))
            .collect()
    };
    assert_eq!(egress.len(), 2, "{policy:#}");
    assert_eq!(ports(&egress[0]), ["53/UDP", "53/TCP"]);
    assert_eq!(ports(&egress[1]), ["443/TCP"]);
    assert_eq!(egress[1]["to"][0]["ipBlock"]["cidr"], "10.20.0.0/16");

    let pod = &of_kind(&rendered, "Deployment")[0]["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let env: Vec<String> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            format!(
                "{}={}",
                e["name"].as_str().unwrap(),
                e["value"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(env, ["WINGUARD_CACHE_DIR=/cache", "DOCKER_CONFIG=/docker"]);
    let volumes = pod["volumes"].as_array().unwrap();
    assert!(
        volumes
            .iter()
            .any(|v| v["name"] == "cache" && v["emptyDir"].is_object())
            && volumes
                .iter()
                .any(|v| v["name"] == "docker-config" && v["secret"]["secretName"] == "regcred"),
        "{pod:#}"
    );
    passes_winguard(&stream, "config.images.resolve");

    // Without it, no egress at all.
    let plain = objects(&render("{}"));
    let policy = of_kind(&plain, "NetworkPolicy")[0];
    assert_eq!(
        policy["spec"]["egress"],
        serde_json::json!([]),
        "{policy:#}"
    );
    assert!(
        of_kind(&plain, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]
            .get("env")
            .is_none()
    );
}
