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

#[test]
fn the_chart_renders_with_helm_and_passes_winguards_own_rules() {
    for values in [r#"{}"#, r#"{"tls": {"mode": "selfSigned"}}"#] {
        let stream = render(values);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("winguard-chart.yaml");
        std::fs::write(&file, &stream).unwrap();
        let (code, report) = common::json(&["lint", file.to_str().unwrap()]);
        assert_eq!(
            (code, report["findings"].as_array().unwrap().len()),
            (0, 0),
            "{values}: winguard's chart fails winguard: {report:#}"
        );
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
