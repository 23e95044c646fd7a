//! `winguard render` and `winguard lint CHART` through the real binary: `helm template`'s output
//! shape, Helm's flags, findings placed in the chart's templates, and every bad input as a clear
//! error with exit code 2.

mod common;

use std::path::{Path, PathBuf};

use common::{files_of, json, root, run};

fn chart(name: &str) -> String {
    root()
        .join("testdata/charts")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Writes a chart `name` under `dir`: its `Chart.yaml` (v2, version 0.1.0, then `extra` lines)
/// and `files` (path in the chart, text).
fn write_chart(dir: &Path, name: &str, extra: &str, files: &[(&str, &str)]) -> PathBuf {
    let chart = dir.join(name);
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    let meta = format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n{extra}");
    std::fs::write(chart.join("Chart.yaml"), meta).unwrap();
    for (path, text) in files {
        std::fs::write(chart.join(path), text).unwrap();
    }
    chart
}

/// The `# Source:` paths of a `helm template` stream, in order.
fn sources(stream: &str) -> Vec<&str> {
    stream
        .lines()
        .filter_map(|l| l.strip_prefix("# Source: "))
        .collect()
}

#[test]
fn render_prints_documents_as_helm_template_does() {
    let r = run(&["render", "web", &chart("basic"), "--namespace", "prod"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.starts_with("---\n# Source: basic/templates/"),
        "{}",
        r.stdout
    );
    // Install order (ServiceAccount, Service, Deployment), hooks (the test pod) last, no NOTES.
    assert_eq!(
        sources(&r.stdout),
        [
            "basic/templates/serviceaccount.yaml",
            "basic/templates/service.yaml",
            "basic/templates/deployment.yaml",
            "basic/templates/tests/test-connection.yaml",
        ]
    );
    assert!(r.stdout.contains("name: web-basic"), "{}", r.stdout);
    assert!(!r.stdout.contains("NOTES"), "{}", r.stdout);
    // Every document parses.
    for doc in r.stdout.split("\n---\n") {
        serde_yaml_ng::from_str::<serde_json::Value>(doc).unwrap();
    }
    let skipped = run(&["render", &chart("basic"), "--skip-tests"]);
    assert!(
        !skipped.stdout.contains("test-connection"),
        "{}",
        skipped.stdout
    );
    assert!(skipped.stdout.contains("name: release-name-basic"));
}

#[test]
fn values_flags_follow_helms_order() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.yaml");
    let second = dir.path().join("second.yaml");
    let file_value = dir.path().join("motd.txt");
    std::fs::write(&first, "replicaCount: 2\nimage: {tag: one}\n").unwrap();
    std::fs::write(&second, "image: {tag: two}\n").unwrap();
    std::fs::write(&file_value, "hello, world").unwrap();
    let r = run(&[
        "render",
        &chart("basic"),
        "-f",
        first.to_str().unwrap(),
        "--values",
        second.to_str().unwrap(),
        "--set",
        "image.repository=mcr.microsoft.com/windows/servercore",
        "--set-string",
        "podAnnotations.build=1809",
        "--set-json",
        r#"nodeSelector={"kubernetes.io/os":"windows"}"#,
        "--set-file",
        &format!("podLabels.motd={}", file_value.display()),
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for expected in [
        "replicas: 2",
        "image: \"mcr.microsoft.com/windows/servercore:two\"",
        "build: \"1809\"",
        "kubernetes.io/os: windows",
        "motd: hello, world",
    ] {
        assert!(
            r.stdout.contains(expected),
            "{expected} not in\n{}",
            r.stdout
        );
    }
}

#[test]
fn lint_renders_the_chart_and_points_into_its_templates() {
    let (code, report) = json(&["lint", &chart("windows-iis"), "--release-name", "shop"]);
    assert_eq!(code, 1, "{report:#}");
    let findings = report["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    // Findings name the template where it is: under the chart as given (here absolute).
    let template = format!("{}/templates/deployment.yaml", chart("windows-iis"));
    for f in findings {
        assert_eq!(f["file"], template, "{f:#}");
        assert_eq!(f["object"]["name"], "shop-web", "{f:#}");
    }
    // The place is the template's: the line holding the offending key when the template wrote
    // it as text, the action's when an action printed it (the image, from values); and
    // `rendered` is the line of `winguard render`'s output where it landed.
    let rendered = run(&["render", "shop", &chart("windows-iis")]).stdout;
    let placed: Vec<(&str, u64, u64)> = findings
        .iter()
        .map(|f| {
            let rule = f["rule"].as_str().unwrap();
            (
                rule,
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        placed,
        [
            ("windows-pod-os-missing", 14, 5),
            ("windows-toleration-missing", 14, 5),
            ("windows-resource-limits-missing", 17, 11),
            ("windows-container-administrator", 18, 21),
        ],
        "{report:#}"
    );
    let image = &findings[3];
    // The image came from a value: its path, and the line of values.yaml that sets it.
    let values_file = format!("{}/values.yaml", chart("windows-iis"));
    assert_eq!(
        image["values"],
        serde_json::json!({"path": "image", "file": values_file, "line": 1}),
        "{image:#}"
    );
    assert!(
        findings[..3].iter().all(|f| f["values"].is_null()),
        "{report:#}"
    );
    // A flag that sets it is named instead, and SARIF relates the values file's line.
    let flag = "image=mcr.microsoft.com/windows/servercore:ltsc2022";
    let (_, flagged) = json(&["lint", &chart("windows-iis"), "--set", flag]);
    let admin = flagged["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "windows-container-administrator")
        .unwrap();
    assert_eq!(
        admin["values"]["flag"],
        format!("--set {flag}"),
        "{admin:#}"
    );
    let sarif = run(&["lint", &chart("windows-iis"), "--format", "sarif"]).stdout;
    let sarif: serde_json::Value = serde_json::from_str(&sarif).unwrap();
    let related = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|r| r.get("relatedLocations"))
        .expect("the image's finding relates its value");
    assert_eq!(
        related[0]["physicalLocation"]["region"]["startLine"], 1,
        "{related:#}"
    );
    assert!(
        related[0]["physicalLocation"]["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("windows-iis/values.yaml"),
        "{related:#}"
    );
    let line = image["rendered"].as_u64().unwrap() as usize;
    let rendered_line = rendered.lines().nth(line - 1).unwrap();
    assert!(
        rendered_line
            .trim_start()
            .starts_with("image: mcr.microsoft.com/"),
        "{rendered_line}"
    );
    // The text output shows the template's lines.
    let text = run(&["lint", "testdata/charts/windows-iis"]);
    assert!(
        text.stdout
            .contains("--> testdata/charts/windows-iis/templates/deployment.yaml:"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("|     spec:"), "{}", text.stdout);
    assert!(
        text.stdout
            .contains("18 |           image: {{ .Values.image }}"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains(
            "note: the value `image` is set in testdata/charts/windows-iis/values.yaml:1"
        ),
        "{}",
        text.stdout
    );
    // Fixes can't be written into templates: the hint says where they apply.
    assert!(
        text.stdout
            .contains("2 fixable in the rendered output with `winguard mutate`"),
        "{}",
        text.stdout
    );
    assert!(
        !text.stdout.contains("fixable with `winguard fix`"),
        "{}",
        text.stdout
    );
}

#[test]
fn lint_reads_packaged_charts() {
    let dir = tempfile::tempdir().unwrap();
    let tgz = dir.path().join("windows-daemonsets-0.1.0.tgz");
    let code = r#"
import sys, tarfile, os
src, out = sys.argv[1], sys.argv[2]
with tarfile.open(out, "w:gz") as t:
    t.add(src, arcname=os.path.basename(src))
"#;
    let r = common::python(
        code,
        &[&root().join("testdata/charts/windows-daemonsets"), &tgz],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let (code, report) = json(&["lint", tgz.to_str().unwrap()]);
    assert_eq!(report["summary"]["objects"], 2, "{report:#}");
    // The per-build DaemonSets select, tolerate and pin their builds: nothing to find.
    assert_eq!(code, 0, "{report:#}");
    let rendered = run(&["render", tgz.to_str().unwrap()]);
    assert_eq!(sources(&rendered.stdout).len(), 2, "{}", rendered.stdout);
}

#[test]
fn bad_charts_and_flags_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad_tgz = dir.path().join("broken.tgz");
    std::fs::write(&bad_tgz, b"not a gzip archive").unwrap();
    let bad_values = dir.path().join("bad.yaml");
    std::fs::write(&bad_values, "image:\n  tag: [unclosed\n").unwrap();
    let old_chart = write_chart(
        dir.path(),
        "old",
        "kubeVersion: \"<1.20.0-0\"\n",
        &[("templates/a.yaml", "a: 1\n")],
    );
    let missing = dir.path().join("nothing-here");
    let basic = chart("basic");
    let (err_required, err_parse) = (chart("err-required"), chart("err-parse"));
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["render", missing.to_str().unwrap()],
            "cannot read chart",
        ),
        (
            vec!["render", bad_tgz.to_str().unwrap()],
            "is not a valid chart archive",
        ),
        (
            vec!["render", &basic, "-f", bad_values.to_str().unwrap()],
            // Helm's words (go-yaml numbers a parser's problem from 0).
            "bad.yaml: cannot unmarshal yaml document: error converting YAML to JSON: yaml: line 2: did not find expected ',' or ']'",
        ),
        (
            vec!["render", &basic, "--set", "novalue"],
            "failed parsing --set data \"novalue\": key \"novalue\" has no value",
        ),
        (
            vec![
                "render",
                old_chart.to_str().unwrap(),
                "--kube-version",
                "1.34",
            ],
            "chart requires kubeVersion: <1.20.0-0 which is incompatible with Kubernetes v1.34.0",
        ),
        (
            vec!["render", &err_required],
            "execution error at (err-required/templates/a.yaml:1:10): image.repository is required",
        ),
        (
            vec!["render", &err_parse],
            "parse error at (err-parse/templates/bad.yaml:3)",
        ),
    ];
    for (args, expected) in cases {
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(expected), "{args:?}: {}", r.stderr);
    }
    // lint reports a chart that does not render as an input error, and still lints the rest.
    let pod = dir.path().join("pod.yaml");
    std::fs::write(
        &pod,
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers: [{name: a, image: nginx}]\n",
    )
    .unwrap();
    let (code, report) = json(&["lint", &chart("err-required"), pod.to_str().unwrap()]);
    assert_eq!(code, 2, "{report:#}");
    assert_eq!(report["summary"]["objects"], 1, "{report:#}");
    let error = &report["errors"][0];
    let template = format!("{}/templates/a.yaml", chart("err-required"));
    assert_eq!(error["file"], template, "{report:#}");
    assert_eq!(error["line"], 1, "{report:#}");
}

#[test]
fn the_helm_renderer_needs_helm_on_path() {
    let mut cmd = common::winguard();
    cmd.args(["render", &chart("basic"), "--renderer", "helm"])
        .env("PATH", "/nonexistent");
    let r = common::run_cmd(cmd, None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("`helm` is not on PATH"), "{}", r.stderr);
}

#[test]
fn a_directory_walk_renders_the_charts_it_finds() {
    let dir = tempfile::tempdir().unwrap();
    let copy = common::copy_dir;
    copy(
        &root().join("testdata/charts/windows-iis"),
        &dir.path().join("charts/windows-iis"),
    );
    std::fs::copy(
        root().join("testdata/examples/iis-app.yaml"),
        dir.path().join("iis-app.yaml"),
    )
    .unwrap();
    let (code, report) = json(&["lint", dir.path().to_str().unwrap()]);
    assert_eq!(code, 1, "{report:#}");
    // No template was read as a manifest (they are not YAML before rendering).
    assert_eq!(report["errors"].as_array().unwrap().len(), 0, "{report:#}");
    // The chart's findings name its template under the walked directory; the file of
    // rendered output is named itself, with the template it came from beside it.
    let files = files_of(&report);
    let under = |rel: &str| dir.path().join(rel).display().to_string();
    assert_eq!(
        files,
        [
            under("charts/windows-iis/templates/deployment.yaml"),
            under("iis-app.yaml")
        ]
        .into(),
    );
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings
            .iter()
            .filter(|f| f["file"] == under("iis-app.yaml"))
            .all(|f| f["template"]
                .as_str()
                .unwrap()
                .starts_with("merchant/templates/")),
        "{report:#}"
    );
}

/// Numbers keep Helm's Go types: `float64` from values files and `--set-json`, `int64` from
/// `--set` (so `1000000` prints as `1e+06` from a file and as `1000000` from `--set`).
#[test]
fn numbers_keep_the_go_type_of_where_they_came_from() {
    let dir = tempfile::tempdir().unwrap();
    let chart = write_chart(
        dir.path(),
        "types",
        "",
        &[
            ("values.yaml", "file: 1000000\n"),
            (
                "templates/cm.yaml",
                "file: {{ .Values.file }} {{ typeOf .Values.file }}\n\
                 set: {{ .Values.set }} {{ typeOf .Values.set }}\n\
                 json: {{ .Values.json }} {{ typeOf .Values.json }}\n\
                 fromJson: {{ typeOf (fromJson \"{\\\"a\\\": 1}\").a }}\n",
            ),
        ],
    );
    let r = run(&[
        "render",
        chart.to_str().unwrap(),
        "--set",
        "set=1000000",
        "--set-json",
        "json=1000000",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    for line in [
        "file: 1e+06 float64",
        "set: 1000000 int64",
        "json: 1e+06 float64",
        "fromJson: float64",
    ] {
        assert!(r.stdout.contains(line), "{line} not in\n{}", r.stdout);
    }
}

/// Every finding in a shipped chart names a template line that holds what it is about: the
/// offending key (or, for a missing field, its parent's key or list item), or the action that
/// printed the value.
#[test]
fn chart_findings_name_template_lines_that_hold_them() {
    let mut checked = 0;
    for name in ["windows-iis", "windows-daemonsets", "windows-umbrella"] {
        let (_, report) = json(&["lint", &chart(name), "--fail-on", "never"]);
        for f in report["findings"].as_array().unwrap() {
            let file = f["file"].as_str().unwrap();
            let text = std::fs::read_to_string(file).unwrap();
            let line = f["line"].as_u64().unwrap() as usize;
            let held = text.lines().nth(line - 1).unwrap_or("");
            let pointer = f["pointer"].as_str().unwrap();
            let tokens: Vec<&str> = pointer.split('/').filter(|t| !t.is_empty()).collect();
            let holds = held.contains("{{")
                || held.trim_start().starts_with('-')
                || tokens.iter().rev().take(3).any(|t| {
                    held.contains(&format!("{}:", t.replace("~1", "/").replace("~0", "~")))
                });
            assert!(holds, "{name}: {file}:{line} is `{held}` for {f:#}");
            assert!(f["rendered"].is_u64(), "{f:#}");
            checked += 1;
        }
    }
    assert!(checked >= 4, "only {checked} findings checked");
}

/// `winguard fix CHART` writes a fix into the values file that sets what it changes (keeping
/// the file's comments), shows it with `--diff`, and names the template line to change for a
/// fix only a template can take, exiting 1 rather than 0.
#[test]
fn fix_writes_chart_fixes_into_values_and_names_template_changes() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("windows-values-fix");
    std::fs::create_dir_all(copy.join("templates")).unwrap();
    let original = root().join("testdata/charts/windows-values-fix");
    for f in ["Chart.yaml", "values.yaml", "templates/deployment.yaml"] {
        std::fs::copy(original.join(f), copy.join(f)).unwrap();
    }
    let chart = copy.to_str().unwrap();
    let values = copy.join("values.yaml");
    let before = std::fs::read_to_string(&values).unwrap();

    let diff = run(&["fix", chart, "--diff"]);
    assert_eq!(diff.code, 1, "{}{}", diff.stdout, diff.stderr);
    assert!(
        diff.stdout
            .contains("-tolerations: []\n+tolerations:\n+  - effect: NoSchedule\n"),
        "{}",
        diff.stdout
    );
    assert_eq!(
        std::fs::read_to_string(&values).unwrap(),
        before,
        "--diff writes nothing"
    );

    let fixed = run(&["fix", chart]);
    assert_eq!(fixed.code, 0, "{}{}", fixed.stdout, fixed.stderr);
    let after = std::fs::read_to_string(&values).unwrap();
    assert!(after.starts_with("# Where the app runs.\n"), "{after}");
    assert!(
        after.contains("kubernetes.io/os: windows  # Windows nodes only\n"),
        "{after}"
    );
    let (_, report) = json(&["lint", chart]);
    assert!(
        !common::rules_of(&report).contains(&"windows-toleration-missing".to_string()),
        "{report:#}"
    );

    // windows-iis writes the pod's scheduling in its template: those fixes are template
    // changes, named at the template's `spec:` line.
    let iis = run(&["fix", &self::chart("windows-iis"), "--diff"]);
    assert_eq!(iis.code, 1, "{}{}", iis.stdout, iis.stderr);
    assert!(
        iis.stderr.contains("the template must change, at ")
            && iis.stderr.contains(
                "windows-iis/templates/deployment.yaml:14: add `os: {\"name\":\"windows\"}` there"
            ),
        "{}",
        iis.stderr
    );
}

/// Every finding of every shipped chart, at its expected template place, and the value it came
/// from where a value did (`rule file:line:col`, then `path@line` of the chart's values.yaml).
#[test]
fn shipped_chart_findings_have_their_template_and_values_places() {
    let expected: [(&str, &[&str]); 5] = [
        (
            "basic",
            &[
                // helm create's `{{- with .Values.nodeSelector }}`, empty: the value names it.
                "linux-os-selector-missing templates/deployment.yaml:25:5 nodeSelector@157",
                "linux-os-selector-missing templates/tests/test-connection.yaml:9:1",
            ],
        ),
        (
            "windows-iis",
            &[
                "windows-container-administrator templates/deployment.yaml:18:21 image@1",
                "windows-pod-os-missing templates/deployment.yaml:14:5",
                "windows-resource-limits-missing templates/deployment.yaml:17:11",
                "windows-toleration-missing templates/deployment.yaml:14:5",
            ],
        ),
        (
            "windows-umbrella",
            &[
                "windows-pod-os-missing charts/exporter/templates/ds.yaml:7:5",
                "windows-resource-limits-missing charts/exporter/templates/ds.yaml:10:11",
                "windows-toleration-missing charts/exporter/templates/ds.yaml:7:5",
            ],
        ),
        (
            "windows-values-fix",
            &["windows-toleration-missing templates/deployment.yaml:14:7 tolerations@5"],
        ),
        // Values through a variable and `range` (a key with dots escaped as `--set` writes
        // it), a helper called with `dict` data, `tpl` (the values string it rendered), an image
        // written inside quotes (the first action's), and a subchart's values: the parent's
        // `agent.nodeSelector` over the subchart's default, and the subchart's own default. A
        // field an empty `with .Values.worker.X` left out names that value.
        (
            "windows-values-paths",
            &[
                "deprecated-os-label charts/agent/templates/daemonset.yaml:13:13 agent.nodeSelector@21",
                "memory-in-millibytes templates/deployment.yaml:30:24 memoryLimit@16",
                "memory-in-millibytes templates/deployment.yaml:33:24 memoryLimit@16",
                "windows-build-selector-invalid templates/deployment.yaml:15:24 nodeSelector.node\\.kubernetes\\.io/windows-build@7",
                "windows-container-administrator charts/agent/templates/daemonset.yaml:18:19 image.repository@charts/agent/values.yaml:2",
                "windows-container-administrator templates/_helpers.tpl:2:5 image.repository@2",
                "windows-container-administrator templates/deployment.yaml:35:20 image.repository@2",
                "windows-image-build-mismatch templates/_helpers.tpl:2:5 image.repository@2",
                "windows-image-build-mismatch templates/deployment.yaml:35:20 image.repository@2",
                "windows-os-selector-missing templates/worker.yaml:11:5 worker.nodeSelector@26",
                "windows-pod-os-missing charts/agent/templates/daemonset.yaml:11:5",
                "windows-pod-os-missing templates/deployment.yaml:12:5",
                "windows-resource-limits-missing templates/deployment.yaml:34:9",
                "windows-toleration-missing templates/deployment.yaml:17:7",
                "windows-toleration-missing templates/worker.yaml:11:5 worker.tolerations@27",
            ],
        ),
    ];
    for (name, places) in expected {
        let (_, report) = json(&["lint", &chart(name), "--fail-on", "never"]);
        let mut found: Vec<String> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let file = f["file"].as_str().unwrap();
                let within = file.split_once(&format!("{name}/")).unwrap().1;
                let mut place = format!(
                    "{} {within}:{}:{}",
                    f["rule"].as_str().unwrap(),
                    f["line"],
                    f["column"]
                );
                if let Some(v) = f.get("values") {
                    let file = v["file"].as_str().unwrap();
                    let path = v["path"].as_str().unwrap();
                    if file == format!("{}/values.yaml", chart(name)) {
                        place.push_str(&format!(" {path}@{}", v["line"]));
                    } else {
                        let within = file.split_once(&format!("{name}/")).unwrap().1;
                        place.push_str(&format!(" {path}@{within}:{}", v["line"]));
                    }
                }
                place
            })
            .collect();
        found.sort();
        assert_eq!(found, places, "{name}: {report:#}");
    }
}

/// Inside `with .Values.X`, what an action prints from dot (`toYaml .`) is the value `X`.
#[test]
fn values_printed_from_dot_inside_with_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      {{- with .Values.nodeSelector }}\n      nodeSelector:\n        {{- toYaml . | nindent 8 }}\n      {{- end }}\n      containers:\n        - name: web\n          image: mcr.microsoft.com/windows/nanoserver:ltsc2022\n";
    let chart = write_chart(
        dir.path(),
        "withdot",
        "",
        &[
            (
                "values.yaml",
                "nodeSelector:\n  beta.kubernetes.io/os: windows\n",
            ),
            ("templates/d.yaml", deployment),
        ],
    );
    let (_, report) = json(&["lint", chart.to_str().unwrap(), "--fail-on", "never"]);
    let label = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "deprecated-os-label")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(label["line"], 12, "{label:#}");
    assert_eq!(label["values"]["path"], "nodeSelector", "{label:#}");
    assert_eq!(label["values"]["line"], 1, "{label:#}");
}

/// helm create's pattern, `{{- with .Values.nodeSelector }}nodeSelector: {{- toYaml . | nindent
/// 8 }}{{- end }}` with `nodeSelector: {}`: the missing nodeSelector and toleration are written
/// into those empty values. A value a fix replaces (an invalid build selector, printed through
/// `range`) is rewritten where it is set, and a key a fix renames (the deprecated OS label, in
/// the parent's values for a subchart) is renamed there.
#[test]
fn fix_writes_additions_replacements_and_renames_into_values() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("windows-values-paths");
    common::copy_dir(&root().join("testdata/charts/windows-values-paths"), &copy);
    let chart = copy.to_str().unwrap();
    let fixed = run(&["fix", chart]);
    let values = std::fs::read_to_string(copy.join("values.yaml")).unwrap();
    assert!(
        values.contains(
            "worker:\n  nodeSelector:\n    kubernetes.io/os: windows\n  tolerations:\n    - effect: NoSchedule\n"
        ),
        "{values}\n{}{}",
        fixed.stdout,
        fixed.stderr
    );
    assert!(
        values.contains("# helm create's pattern"),
        "comments are kept: {values}"
    );
    assert!(
        // Quoted: the YAML 1.1 specification's float pattern takes `10.0.20348` for a number.
        values.contains("  node.kubernetes.io/windows-build: \"10.0.20348\"\n"),
        "{values}"
    );
    assert!(
        values.contains("agent:\n  nodeSelector:\n    kubernetes.io/os: windows\n")
            && !values.contains("beta.kubernetes.io/os"),
        "{values}"
    );
    let (_, after) = json(&["lint", chart, "--fail-on", "never"]);
    let rules = common::rules_of(&after);
    for fixed in ["windows-build-selector-invalid", "deprecated-os-label"] {
        assert!(!rules.contains(&fixed.to_string()), "{fixed}: {after:#}");
    }
    let (_, report) = json(&["lint", chart, "--fail-on", "never"]);
    let worker: Vec<&serde_json::Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"].as_str().unwrap().ends_with("worker.yaml"))
        .collect();
    assert!(worker.is_empty(), "{worker:#?}");
}

/// A subchart's own default is named in the subchart's `values.yaml` wherever the subchart is:
/// in a directory not named after it, under the alias its parent gives it, or packaged as an
/// archive in `charts/` (the file then is the archive and its member), and a packaged top chart
/// names its own `values.yaml` the same way.
#[test]
fn subchart_defaults_are_found_wherever_the_subchart_lives() {
    let agent = root().join("testdata/charts/windows-values-paths/charts/agent");
    let agent_files: Vec<(String, Vec<u8>)> =
        ["Chart.yaml", "values.yaml", "templates/daemonset.yaml"]
            .iter()
            .map(|f| (f.to_string(), std::fs::read(agent.join(f)).unwrap()))
            .collect();
    let archive = |top: &str, files: &[(String, Vec<u8>)]| {
        let mut tar = tar::Builder::new(flate2::write::GzEncoder::new(
            Vec::new(),
            flate2::Compression::default(),
        ));
        for (name, data) in files {
            let mut header = tar::Header::new_gnu();
            header.set_size(data.len() as u64);
            header.set_mode(0o644);
            header.set_cksum();
            tar.append_data(&mut header, format!("{top}/{name}"), &data[..])
                .unwrap();
        }
        tar.into_inner().unwrap().finish().unwrap()
    };
    // Linting `chart` finds the agent's image at its template and its default at line 2 of
    // its values.yaml, both under `at` (the agent chart's directory or archive member).
    let assert_found_under = |chart: &Path, at: &str| {
        let (_, report) = json(&["lint", chart.to_str().unwrap(), "--fail-on", "never"]);
        let found: Vec<(String, String, u64)> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == "windows-container-administrator")
            .map(|f| {
                let v = &f["values"];
                (
                    f["file"].as_str().unwrap().to_string(),
                    v["file"].as_str().unwrap_or("").to_string(),
                    v["line"].as_u64().unwrap_or(0),
                )
            })
            .collect();
        assert_eq!(
            found,
            [(
                format!("{at}/templates/daemonset.yaml"),
                format!("{at}/values.yaml"),
                2
            )],
            "{report}"
        );
    };
    let dir = tempfile::tempdir().unwrap();

    // In `charts/agent-src/`, under the alias `winagent`.
    let umbrella = write_chart(
        dir.path(),
        "umbrella",
        "dependencies:\n- name: agent\n  version: 0.1.0\n  alias: winagent\n",
        &[],
    );
    for (name, data) in &agent_files {
        let path = umbrella.join("charts/agent-src").join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, data).unwrap();
    }
    let src = umbrella.join("charts/agent-src");
    assert_found_under(&umbrella, &src.display().to_string());

    // Packaged as `charts/agent-0.1.0.tgz`.
    std::fs::remove_dir_all(umbrella.join("charts/agent-src")).unwrap();
    std::fs::write(
        umbrella.join("charts/agent-0.1.0.tgz"),
        archive("agent", &agent_files),
    )
    .unwrap();
    let member = format!("{}/charts/agent-0.1.0.tgz!/agent", umbrella.display());
    assert_found_under(&umbrella, &member);

    // The agent chart itself, packaged: its own values.yaml inside the archive.
    let packaged = dir.path().join("agent-0.1.0.tgz");
    std::fs::write(&packaged, archive("agent", &agent_files)).unwrap();
    assert_found_under(&packaged, &format!("{}!/agent", packaged.display()));
}

/// Bytes that are not UTF-8 in a chart's `Chart.yaml`, `values.yaml` or templates, or in a
/// values file given with `-f`, fail the render as in Helm (its YAML reader refuses them, in the
/// words checked here), named by file, line, column and byte offset; they were replaced silently.
#[test]
fn invalid_utf8_in_a_chart_or_its_values_is_an_error_at_its_byte() {
    let dir = tempfile::tempdir().unwrap();
    let template = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: {{ .Values.b | quote }}\n";
    let good: [(&str, &[u8]); 3] = [
        ("Chart.yaml", b"apiVersion: v2\nname: c\nversion: 0.1.0\n"),
        ("values.yaml", b"b: ok\n"),
        ("templates/cm.yaml", template.as_bytes()),
    ];
    let chart_with = |case: &str, file: &str, bytes: &[u8]| {
        let chart = dir.path().join(case).join("c");
        std::fs::create_dir_all(chart.join("templates")).unwrap();
        for (name, text) in good {
            std::fs::write(chart.join(name), text).unwrap();
        }
        std::fs::write(chart.join(file), bytes).unwrap();
        chart.to_str().unwrap().to_string()
    };
    let values = chart_with("values", "values.yaml", b"a: 1\nb: \"x\xff\"\n");
    let chart_yaml = chart_with(
        "chart",
        "Chart.yaml",
        b"apiVersion: v2\nname: c\nversion: 0.1.0\ndescription: caf\xc3",
    );
    let in_template = chart_with(
        "template",
        "templates/cm.yaml",
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: \"caf\xe9\"\n",
    );
    let plain = chart_with("plain", "values.yaml", b"b: ok\n");
    let crd = chart_with("crd", "values.yaml", b"b: ok\n");
    std::fs::create_dir_all(format!("{crd}/crds")).unwrap();
    std::fs::write(
        format!("{crd}/crds/crd.yaml"),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: caf\xe9}\n",
    )
    .unwrap();
    let user_values = dir.path().join("user.yaml");
    std::fs::write(&user_values, b"b: \xed\xa0\x80\n").unwrap();
    let cases: [(Vec<&str>, String); 5] = [
        (
            vec!["render", &values],
            format!(
                "{values}/values.yaml:2:6: yaml: invalid leading UTF-8 octet at byte offset 10"
            ),
        ),
        (
            vec!["render", &chart_yaml],
            format!(
                "{chart_yaml}/Chart.yaml:4:17: yaml: incomplete UTF-8 octet sequence at byte offset 54"
            ),
        ),
        (
            vec!["render", &in_template],
            format!(
                "{in_template}/templates/cm.yaml:6:10: yaml: invalid trailing UTF-8 octet at byte offset 67"
            ),
        ),
        (
            vec!["render", &crd, "--include-crds"],
            format!(
                "{crd}/crds/crd.yaml:3:21: yaml: invalid trailing UTF-8 octet at byte offset 52"
            ),
        ),
        (
            vec!["render", &plain, "-f", user_values.to_str().unwrap()],
            format!(
                "{}:1:4: yaml: invalid Unicode character at byte offset 3",
                user_values.display()
            ),
        ),
    ];
    for (args, expected) in cases {
        let r = run(&args);
        assert_eq!(r.code, 2, "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(&expected), "{args:?}: {}", r.stderr);
    }
}

/// A values file is bounded by what its aliases add, not by its size in nodes: 500,001 plain
/// keys load (as in Helm), an alias bomb fails at once naming the alias limit.
#[test]
fn values_files_are_bounded_by_what_their_aliases_add() {
    let dir = tempfile::tempdir().unwrap();
    let chart = write_chart(
        dir.path(),
        "keys",
        "",
        &[(
            "templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  last: {{ .Values.k7a120 | quote }}\n",
        )],
    );
    let chart = chart.to_str().unwrap();
    let many = dir.path().join("many.yaml");
    let text: String = (0..=500_000).map(|i| format!("k{i:x}: {i}\n")).collect();
    std::fs::write(&many, text).unwrap();
    let r = run(&["render", chart, "-f", many.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.contains("last: \"500000\""), "{}", r.stdout);

    let bomb = dir.path().join("bomb.yaml");
    let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    std::fs::write(&bomb, text).unwrap();
    let r = run(&["render", chart, "-f", bomb.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    assert!(
        r.stderr
            .contains("by more than 1000000 nodes, the alias limit"),
        "{}",
        r.stderr
    );
}

/// lint renders a chart for the cluster it targets: `.Capabilities.APIVersions` lists the kinds
/// that cluster serves (as discovery does), so a chart that picks its Ingress version with
/// `Capabilities.APIVersions.Has "networking.k8s.io/v1/Ingress"` gets `networking.k8s.io/v1`
/// and `api-removed` has nothing to say; `render` stays `helm template`, which falls back to the
/// removed `v1beta1`.
#[test]
fn lint_renders_charts_with_the_target_clusters_api_versions() {
    let (code, report) = json(&[
        "lint",
        &chart("windows-iis"),
        "--set",
        "ingress.enabled=true",
    ]);
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(code < 2, "{report:#}");
    // `render` (helm template) picks the fallback, which 1.34 no longer serves: lint must not.
    assert!(!rules.contains(&"api-removed"), "{rules:?}");
    let rendered = run(&[
        "render",
        &chart("windows-iis"),
        "--set",
        "ingress.enabled=true",
    ])
    .stdout;
    assert!(
        rendered.contains("apiVersion: networking.k8s.io/v1beta1\nkind: Ingress"),
        "{rendered}"
    );
    // On a cluster before networking.k8s.io/v1 (1.19), lint renders the fallback, which that
    // cluster still serves (the served list at 1.18 lacks networking.k8s.io/v1/Ingress: a unit
    // test of k8s::api_lifecycle holds that).
    let (code, old) = json(&[
        "lint",
        &chart("windows-iis"),
        "--set",
        "ingress.enabled=true",
        "--kube-version",
        "1.18",
    ]);
    assert!(
        old["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["rule"] != "api-removed" && f["rule"] != "api-deprecated"),
        "{old:#}"
    );
    assert!(code < 2, "{old:#}");
}
