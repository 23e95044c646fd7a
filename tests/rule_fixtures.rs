//! Per-rule fixtures in `testdata/rules/<rule>/`, named by expectation (the Polaris/kube-linter
//! convention): `fail-*.yaml` must fire the rule (and its diagnostics are snapshotted),
//! `pass-*.yaml` must not, and `fixed-*.yaml` is the `fail-*` of the same suffix after the rule's
//! fixes: applying them must give exactly that file (nothing else changed) and silence the rule
//! (checked by `winguard test-rules rules --fixtures testdata/rules`, tests/cli.rs).
//! A fixture may start with `# config: {…}` (flow YAML) to lint under that config.

mod api_defaults;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use winguard::cli::{Policy, lint_text};
use winguard::config::Config;
use winguard::engine::{Context, evaluate, evaluate_batch};
use winguard::manifest::{SourceText, parse_source};
use winguard::report::{Format, RenderOptions, Report, render};
use winguard::value::Value;

fn rules_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules")
}

fn config_of(text: &str, name: &str) -> Config {
    let line = text.lines().find(|l| l.starts_with("# config:"));
    match line {
        Some(l) => Config::parse(l.trim_start_matches("# config:"), name).unwrap(),
        None => Config::default(),
    }
}

fn setup(text: &str, name: &str) -> Policy {
    Policy::new(
        winguard::policy::builtin_rules().unwrap(),
        config_of(text, name),
    )
    .unwrap()
}

/// The engine's context for a set of objects under a setup.
fn context<'a>(setup: &'a Policy, objects: &[&'a Value]) -> Context<'a> {
    Context::new(setup.basis(), objects)
}

/// The messages of one rule's findings in a report.
fn messages_of<'r>(report: &'r Report, rule: &str) -> Vec<&'r String> {
    report
        .findings
        .iter()
        .filter(|f| f.finding.rule == rule)
        .map(|f| &f.finding.message)
        .collect()
}

fn fixtures() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(rules_dir()).unwrap() {
        let dir = dir.unwrap().path();
        let rule = dir.file_name().unwrap().to_string_lossy().into_owned();
        for f in std::fs::read_dir(&dir).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "yaml") {
                out.push((rule.clone(), f));
            }
        }
    }
    out.sort();
    out
}

fn display_name(rule: &str, path: &Path) -> String {
    format!(
        "testdata/rules/{rule}/{}",
        path.file_name().unwrap().to_string_lossy()
    )
}

#[test]
fn every_rule_has_fixtures_and_every_fixture_a_rule() {
    let rules = winguard::policy::builtin_rules().unwrap();
    let all = fixtures();
    for rule in &rules.rules {
        let names: Vec<String> = all
            .iter()
            .filter(|(r, _)| *r == rule.name)
            .map(|(_, p)| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n.starts_with("fail-")),
            "{}: no fail-* fixture",
            rule.name
        );
        assert!(
            names.iter().any(|n| n.starts_with("pass-")),
            "{}: no pass-* fixture",
            rule.name
        );
        if rule.fix.is_some() {
            assert!(
                names.iter().any(|n| n.starts_with("fixed-")),
                "{}: fixable but no fixed-* fixture",
                rule.name
            );
        }
    }
    for (rule, path) in &all {
        assert!(
            rules.get(rule).is_some(),
            "{}: no rule named {rule}",
            path.display()
        );
        let name = path.file_name().unwrap().to_string_lossy();
        assert!(
            ["fail-", "pass-", "fixed-"]
                .iter()
                .any(|p| name.starts_with(p)),
            "{}: fixture names start with fail-, pass- or fixed-",
            path.display()
        );
    }
}

#[test]
fn fail_fixtures_fire_and_match_their_snapshots() {
    for (rule, path) in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("fail-") {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let display = display_name(&rule, &path);
        let setup = setup(&text, &display);
        let mut report = lint_text(&setup, &display, &text);
        assert!(report.errors.is_empty(), "{display}: {:?}", report.errors);
        report.findings.retain(|f| f.finding.rule == rule);
        assert!(
            !report.findings.is_empty(),
            "{display}: {rule} does not fire"
        );
        let rendered = render(
            Format::Text,
            &report,
            &RenderOptions {
                color: false,
                rules: &setup.rules,
                working_dir: None,
                config_file: None,
                quiet: false,
                fail_on: Some(winguard::rules::Severity::Error),
                list_input_errors: true,
            },
        );
        insta::with_settings!({
            snapshot_path => rules_dir().join(&rule).join("snapshots"),
            prepend_module_to_snapshot => false,
            omit_expression => true,
            description => display.clone(),
        }, {
            insta::assert_snapshot!(name.trim_end_matches(".yaml"), rendered);
        });
    }
}

#[test]
fn pass_fixtures_stay_quiet() {
    for (rule, path) in fixtures() {
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("pass-")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let display = display_name(&rule, &path);
        let report = lint_text(&setup(&text, &display), &display, &text);
        assert!(report.errors.is_empty(), "{display}: {:?}", report.errors);
        let fired = messages_of(&report, &rule);
        assert!(fired.is_empty(), "{display}: {rule} fires: {fired:#?}");
    }
}

/// A rule's verdict on a report: the severities it fires at (none: it does not fire). Counts
/// are not compared: a default can repeat a written value (a Pod's requests default to its
/// limits), and a finding on each is the same verdict.
fn verdict(report: &Report, rule: &str) -> std::collections::BTreeSet<String> {
    report
        .findings
        .iter()
        .filter(|f| f.finding.rule == rule)
        .map(|f| format!("{:?}", f.finding.severity))
        .collect()
}

/// A fixture's text with every object as the API server hands it to a webhook (see
/// `api_defaults`), and its `# config:` line kept.
fn with_api_defaults(text: &str) -> String {
    let (docs, error) = winguard::value::yaml::parse_stream(text);
    assert!(error.is_none(), "{error:?}");
    let mut out: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("# config:"))
        .map(String::from)
        .collect();
    for doc in docs {
        let object = serde_json::Value::from(&doc.value);
        if object.is_object() {
            out.push(serde_json::to_string(&api_defaults::defaulted(object)).unwrap());
            out.push("---".to_string());
        }
    }
    out.join("\n")
}

/// The API server fills in defaults before a webhook sees an object (and `lint` sees what was
/// written): every fixture's rule gives the same verdict on both, so no rule flags what the API
/// server itself fills in.
#[test]
fn fixtures_give_the_same_verdict_after_the_api_servers_defaults() {
    let mut differ = Vec::new();
    let mut seen = 0;
    for (rule, path) in fixtures() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !(name.starts_with("pass-") || name.starts_with("fail-")) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let display = display_name(&rule, &path);
        let setup = setup(&text, &display);
        let written = lint_text(&setup, &display, &text);
        let defaulted_text = with_api_defaults(&text);
        let defaulted = lint_text(&setup, &display, &defaulted_text);
        assert!(
            defaulted.errors.is_empty(),
            "{display} defaulted: {:?}",
            defaulted.errors
        );
        seen += 1;
        if verdict(&written, &rule) != verdict(&defaulted, &rule) {
            differ.push(format!(
                "{display}: {rule} {:?} as written, {:?} defaulted: {:#?}",
                verdict(&written, &rule),
                verdict(&defaulted, &rule),
                messages_of(&defaulted, &rule)
            ));
        }
    }
    assert!(seen > 50, "only {seen} fixtures");
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The defaulting step itself: what `defaults.go` and the admission plugins give a bare pod.
#[test]
fn the_defaulting_step_fills_in_what_the_api_server_does() {
    let pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "app:1.0", "resources": {"limits": {"cpu": "1"}}}],
                 "volumes": [{"name": "cfg", "configMap": {"name": "cfg"}}]}});
    let d = api_defaults::defaulted(pod);
    assert_eq!(d["spec"]["volumes"][0]["configMap"]["defaultMode"], 420);
    assert_eq!(d["spec"]["volumes"][1]["projected"]["defaultMode"], 420);
    assert_eq!(
        d["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(
        d["spec"]["containers"][0]["resources"]["requests"]["cpu"],
        "1"
    );
    assert_eq!(
        d["spec"]["containers"][0]["volumeMounts"][0]["mountPath"],
        "/var/run/secrets/kubernetes.io/serviceaccount"
    );
    assert_eq!(d["spec"]["tolerations"].as_array().unwrap().len(), 2);
    assert_eq!(d["spec"]["dnsPolicy"], "ClusterFirst");
}

fn objects_of(text: &str, name: &str) -> Vec<Value> {
    let (objects, errors) = parse_source(&Arc::new(SourceText::new(name, text)));
    assert!(errors.is_empty(), "{name}: {errors:?}");
    objects.into_iter().map(|o| o.value).collect()
}

/// Rules run over a batch of objects (as `winguard lint` runs them) find on each object exactly
/// what they find on it alone: nothing of one object's evaluation leaks into the next one's.
#[test]
fn a_batch_finds_on_each_object_what_it_finds_alone() {
    let setup = setup("", "batch");
    let mut objects: Vec<Value> = Vec::new();
    for (rule, path) in fixtures() {
        let text = std::fs::read_to_string(&path).unwrap();
        // Fixtures with their own config need their own setup; the rest share the default.
        if text.contains("# config:") {
            continue;
        }
        objects.extend(objects_of(&text, &display_name(&rule, &path)));
    }
    assert!(objects.len() > 50, "only {} objects", objects.len());
    let refs: Vec<&Value> = objects.iter().collect();
    let ctx = context(&setup, &refs);
    let key = |f: &winguard::engine::Finding| serde_json::to_string(f).unwrap();
    let batch = evaluate_batch(&setup.rules, &ctx, &refs);
    assert_eq!(batch.len(), refs.len());
    let mut fired = 0;
    for (object, in_batch) in refs.iter().zip(batch) {
        let mut alone: Vec<String> = evaluate(&setup.rules, &ctx, object)
            .iter()
            .map(key)
            .collect();
        let mut together: Vec<String> = in_batch.iter().map(key).collect();
        alone.sort();
        together.sort();
        fired += alone.len();
        assert_eq!(together, alone, "{object}");
    }
    assert!(fired > 50, "only {fired} findings");
}
