//! Every rule's documented examples are linted: the bad one must fire the rule, the good one must
//! not; and `winguard explain` / the README table are generated from the rule files.

use winguard::cli::{LintSetup, lint_text};
use winguard::config::Config;
use winguard::rules::{RuleSet, docs};

fn setup_for(rule: &winguard::rules::Rule) -> LintSetup {
    let config = match &rule.docs.config {
        Some(text) => Config::parse(text, &format!("{} docs.config", rule.name)).unwrap(),
        None => Config::default(),
    };
    LintSetup::new(RuleSet::embedded().unwrap(), config).unwrap()
}

#[test]
fn every_bad_example_fires_and_every_good_example_does_not() {
    let rules = RuleSet::embedded().unwrap();
    assert_eq!(rules.rules.len(), 21, "RULES.md lists 21 rules");
    let mut failures = Vec::new();
    for rule in &rules.rules {
        let setup = setup_for(rule);
        let bad = lint_text(&setup, "bad.yaml", &rule.docs.bad);
        assert!(
            bad.errors.is_empty(),
            "{}: bad example has input errors: {:?}",
            rule.name,
            bad.errors
        );
        if !bad.findings.iter().any(|f| f.finding.rule == rule.name) {
            failures.push(format!("{}: the bad example does not fire", rule.name));
        }
        let good = lint_text(&setup, "good.yaml", &rule.docs.good);
        assert!(
            good.errors.is_empty(),
            "{}: good example has input errors: {:?}",
            rule.name,
            good.errors
        );
        for f in good.findings.iter().filter(|f| f.finding.rule == rule.name) {
            failures.push(format!(
                "{}: the good example fires: {}",
                rule.name, f.finding.message
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn readme_rule_table_matches_the_rule_files() {
    let rules = RuleSet::embedded().unwrap();
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme
        .find(docs::README_BEGIN)
        .expect("README has the rules:begin marker")
        + docs::README_BEGIN.len();
    let end = readme
        .find(docs::README_END)
        .expect("README has the rules:end marker");
    let expected = docs::readme_table(&rules);
    assert_eq!(
        readme[start..end].trim(),
        expected.trim(),
        "README rule table is stale: regenerate it with `winguard rules --markdown`"
    );
}

#[test]
fn explain_shows_every_section() {
    let rules = RuleSet::embedded().unwrap();
    for rule in &rules.rules {
        let text = docs::explain(rule);
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
