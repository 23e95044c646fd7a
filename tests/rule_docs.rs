//! Every rule's documented examples are linted: the bad one must fire the rule, the good one must
//! not; and `winguard explain` / the docs' rule table are generated from the rule files.

use winguard::cli::{Policy, lint_text};
use winguard::config::Config;
use winguard::rules::{RuleSet, docs};

fn setup_for(rule: &winguard::rules::Rule) -> Policy {
    let config = match &rule.docs.config {
        Some(text) => Config::parse(text, &format!("{} docs.config", rule.name)).unwrap(),
        None => Config::default(),
    };
    Policy::new(winguard::policy::builtin_rules().unwrap(), config).unwrap()
}

/// Lints `text` (named `name`), which must read without input errors, and returns the messages
/// of `rule`'s findings.
fn messages_of(setup: &Policy, name: &str, text: &str, rule: &str) -> Vec<String> {
    let report = lint_text(setup, name, text);
    assert!(
        report.errors.is_empty(),
        "{rule}: {name} has input errors: {:?}",
        report.errors
    );
    report
        .findings
        .into_iter()
        .filter(|f| f.finding.rule == rule)
        .map(|f| f.finding.message)
        .collect()
}

#[test]
fn every_bad_example_fires_and_every_good_example_does_not() {
    let rules = winguard::policy::builtin_rules().unwrap();
    assert_eq!(rules.rules.len(), 30, "RULES.md lists 30 rules");
    let mut failures = Vec::new();
    for rule in &rules.rules {
        let setup = setup_for(rule);
        if messages_of(&setup, "bad.yaml", &rule.docs.bad, &rule.name).is_empty() {
            failures.push(format!("{}: the bad example does not fire", rule.name));
        }
        for message in messages_of(&setup, "good.yaml", &rule.docs.good, &rule.name) {
            failures.push(format!("{}: the good example fires: {message}", rule.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_documented_rule_table_matches_the_rule_files() {
    let rules = winguard::policy::builtin_rules().unwrap();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/rules.md")).unwrap();
    let start = readme
        .find(docs::TABLE_BEGIN)
        .expect("docs/rules.md has the rules:begin marker")
        + docs::TABLE_BEGIN.len();
    let end = readme
        .find(docs::TABLE_END)
        .expect("docs/rules.md has the rules:end marker");
    let expected = docs::reference_table(&rules);
    assert_eq!(
        readme[start..end].trim(),
        expected.trim(),
        "docs/rules.md's rule table is stale: regenerate it with `winguard rules --markdown`"
    );
}

#[test]
fn explain_shows_every_section() {
    let rules = winguard::policy::builtin_rules().unwrap();
    for rule in &rules.rules {
        let text = docs::explain(rule, None);
        for needle in [
            "## What it does",
            "## Why is this bad?",
            "## Example",
            "Use instead:",
        ] {
            assert!(
                text.contains(needle),
                "{}: explain lacks {needle}",
                rule.name
            );
        }
        assert!(
            text.contains(rule.docs.bad.lines().next().unwrap()),
            "{}: explain lacks the bad example",
            rule.name
        );
        assert!(text.contains(&rule.summary));
    }
}

/// Every rule works on every workload kind of RULES.md §1 (and inside a `kind: List`): each rule's
/// bad example is re-wrapped as each kind and must still fire.
#[test]
fn every_rule_fires_on_every_workload_kind() {
    use serde_json::{Value, json};
    let rules = winguard::policy::builtin_rules().unwrap();
    let kinds = [
        "Pod",
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "ReplicationController",
        "Job",
        "CronJob",
    ];
    // Rules that by definition look only at some kinds: the load balancer's backends are a
    // scaled workload's; an IIS server is a workload that keeps running (a Job's or CronJob's
    // container runs to completion).
    let scaled = [
        "Deployment",
        "StatefulSet",
        "ReplicaSet",
        "ReplicationController",
    ];
    let long_running: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| !matches!(*k, "Job" | "CronJob"))
        .collect();
    let only: &[(&str, &[&str])] = &[
        ("windows-lb-backend-limit", &scaled),
        ("iis-service-monitor-missing", &long_running),
    ];
    let mut failures = Vec::new();
    // Rules of an object's own kind (`scope: object`: its API version) look at no pod.
    for rule in rules
        .rules
        .iter()
        .filter(|r| r.scope != winguard::rules::Scope::Object)
    {
        let setup = setup_for(rule);
        let docs: Vec<Value> = rule
            .docs
            .bad
            .split("\n---\n")
            .map(|d| {
                let text = d.to_string();
                let (objs, errs) = winguard::manifest::parse_source(&std::sync::Arc::new(
                    winguard::manifest::SourceText::new("bad", text),
                ));
                assert!(errs.is_empty());
                objs.into_iter()
                    .next()
                    .map(|o| Value::from(&o.value))
                    .unwrap_or(Value::Null)
            })
            .collect();
        let workload = docs
            .iter()
            .position(|d| {
                winguard::k8s::pod_template_paths(d["kind"].as_str().unwrap_or("")).is_some()
            })
            .unwrap_or_else(|| panic!("{}: bad example has no workload", rule.name));
        let original = &docs[workload];
        let (sp, mp) =
            winguard::k8s::pod_template_paths(original["kind"].as_str().unwrap()).unwrap();
        let spec = original.pointer(sp).unwrap().clone();
        let meta = original.pointer(mp).cloned().unwrap_or(json!({}));
        let top_meta = original["metadata"].clone();
        let replicas = original
            .pointer("/spec/replicas")
            .cloned()
            .unwrap_or(json!(1));
        let template = json!({"metadata": meta, "spec": spec});
        let wanted = only.iter().find(|(n, _)| *n == rule.name).map(|(_, k)| *k);
        for kind in kinds {
            if wanted.is_some_and(|w| !w.contains(&kind)) {
                continue;
            }
            let (api, body) = match kind {
                "Pod" => ("v1", json!({"spec": template["spec"]})),
                "Job" => ("batch/v1", json!({"spec": {"template": template}})),
                "CronJob" => (
                    "batch/v1",
                    json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}}),
                ),
                "ReplicationController" => (
                    "v1",
                    json!({"spec": {"replicas": replicas, "template": template}}),
                ),
                "DaemonSet" => ("apps/v1", json!({"spec": {"template": template}})),
                _ => (
                    "apps/v1",
                    json!({"spec": {"replicas": replicas, "template": template}}),
                ),
            };
            let mut object = body;
            object["apiVersion"] = json!(api);
            object["kind"] = json!(kind);
            let mut m = top_meta.clone();
            if kind == "Pod" {
                // A Pod's own metadata is its pod template's.
                for (k, v) in meta.as_object().into_iter().flatten() {
                    m[k] = v.clone();
                }
            }
            object["metadata"] = m;
            let others: Vec<Value> = docs
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != workload)
                .map(|(_, d)| d.clone())
                .collect();
            for wrap_in_list in [false, true] {
                let text = if wrap_in_list {
                    let mut items = vec![object.clone()];
                    items.extend(others.iter().cloned());
                    json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string()
                } else {
                    let mut all = vec![object.to_string()];
                    all.extend(others.iter().map(|o| o.to_string()));
                    all.join("\n---\n")
                };
                if messages_of(&setup, &format!("{kind}.yaml"), &text, &rule.name).is_empty() {
                    failures.push(format!(
                        "{} does not fire on a {kind}{}",
                        rule.name,
                        if wrap_in_list { " in a List" } else { "" }
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A rule can iterate with a JSONPath (`each: $…`): each match is an item with its pointer.
#[test]
fn jsonpath_each_reports_every_match_at_its_pointer() {
    let rule = winguard::rules::Rule::load(
        r#"
name: host-path-volume
severity: warning
summary: hostPath volumes
scope: pod
each: "$.volumes[?@.hostPath]"
when: pod.os == 'windows'
message: "volume `{{item.name}}` mounts the host path `{{item.hostPath.path}}`"
docs: {what: a, why: b, bad: c, good: d}
"#,
        "test.yaml",
        winguard::policy::registry(),
    )
    .unwrap();
    let mut rules = RuleSet::default();
    rules.add(rule).unwrap();
    let setup = Policy::new(rules, Config::default()).unwrap();
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  nodeSelector: {kubernetes.io/os: windows}\n  containers: [{name: a, image: x}]\n  volumes:\n  - {name: cfg, configMap: {name: c}}\n  - {name: pipe, hostPath: {path: '\\\\.\\pipe\\docker_engine'}}\n";
    let report = lint_text(&setup, "p.yaml", text);
    assert_eq!(report.findings.len(), 1, "{:?}", report.findings);
    let f = &report.findings[0];
    assert_eq!(f.finding.pointer, "/spec/volumes/1");
    assert_eq!(f.line, 9);
    assert!(
        f.finding
            .message
            .starts_with("volume `pipe` mounts the host path `\\\\.\\pipe\\docker_engine`"),
        "{}",
        f.finding.message
    );
}

/// `rules/README.md` documents every function rule expressions can call.
#[test]
fn rules_readme_lists_every_expression_function() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/README.md")).unwrap();
    for o in winguard::policy::registry().all() {
        assert!(
            readme.contains(&format!("`{}`", o.signature)),
            "rules/README.md does not document `{}`",
            o.signature
        );
    }
}

/// `rules/README.md` documents every fact rules can read as `pod.*` and `container.*`.
#[test]
fn rules_readme_lists_every_pod_and_container_fact() {
    // The fact tables are generated from the facts' own docs (`winguard rules --facts`): a fact
    // added, renamed or redocumented without regenerating them fails here.
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/README.md")).unwrap();
    let (begin, end) = ("<!-- facts:begin -->", "<!-- facts:end -->");
    let from = readme
        .find(begin)
        .expect("rules/README.md has the facts markers")
        + begin.len();
    let to = readme
        .find(end)
        .expect("rules/README.md has the facts end marker");
    assert_eq!(
        &readme[from..to],
        winguard::rules::reference_markdown(winguard::policy::registry()),
        "rules/README.md's fact tables are stale: paste `winguard rules --facts` between the markers"
    );
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_winguard"))
        .args(["rules", "--facts"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        winguard::rules::reference_markdown(winguard::policy::registry())
    );
}

/// `api-removed` and `api-deprecated` look at exactly the kinds the lifecycle table knows: a
/// row added without its kind in the rules' `kinds` would never be checked.
#[test]
fn api_rules_cover_every_kind_of_the_lifecycle_table() {
    let rules = winguard::policy::builtin_rules().unwrap();
    let table: std::collections::BTreeSet<&str> = winguard::k8s::api_lifecycle::API_LIFECYCLES
        .iter()
        .map(|row| row.kind)
        .collect();
    for name in ["api-removed", "api-deprecated"] {
        let rule = rules.get(name).unwrap();
        let kinds: std::collections::BTreeSet<&str> =
            rule.kinds.iter().map(String::as_str).collect();
        assert_eq!(kinds, table, "{name}");
    }
}
