//! Rule documentation generated from the rule files: `winguard explain`, the rule table of
//! docs/rules.md, and SARIF help. Nothing here is written by hand per rule.

use super::{Applicability, Rule, RuleSet};

/// The fix column of the rule table.
pub fn fix_summary(rule: &Rule) -> &'static str {
    match rule.fix_applicability() {
        Some(Applicability::Safe) => "safe",
        Some(Applicability::Unsafe) => "unsafe",
        None => "—",
    }
}

/// The fix's title as `explain` shows it: `example` is the title of the fix on the rule's own
/// bad example (a real title, with values filled in); without one, the title's template with
/// its holes shown as `…`.
fn fix_title(rule: &Rule, example: Option<&str>) -> Option<String> {
    let fix = rule.fix.as_ref()?;
    Some(example.map_or_else(|| strip_template(&fix.title_text()), str::to_string))
}

/// `winguard rules --format json`: one entry per rule, in file order.
pub fn rules_json(rules: &RuleSet) -> serde_json::Value {
    serde_json::Value::Array(
        rules
            .rules
            .iter()
            .map(|r| {
                serde_json::json!({
                    "name": r.name,
                    "severity": r.default_level(),
                    "profiles": r.profiles.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
                    "fix": r.fix_applicability().map(|a| match a {
                        Applicability::Safe => "safe",
                        Applicability::Unsafe => "unsafe",
                    }),
                    "summary": r.summary,
                })
            })
            .collect(),
    )
}

/// `winguard explain RULE --format json`: what the text shows, as fields.
pub fn explain_json(rule: &Rule, example_fix: Option<&str>) -> serde_json::Value {
    let mut entry = serde_json::json!({
        "name": rule.name,
        "summary": rule.summary,
        "severity": rule.default_level(),
        "profiles": rule.profiles.iter().map(|p| p.as_str()).collect::<Vec<_>>(),
        "fix": fix_title(rule, example_fix).map(|title| serde_json::json!({
            "title": title,
            "applicability": fix_summary(rule),
        })),
        "what": rule.docs.what.trim(),
        "why": rule.docs.why.trim(),
        "config": rule.docs.config,
        "example": rule.docs.bad,
        "fixed": rule.docs.good,
        "fixSafety": rule.docs.fix_safety.as_deref().map(str::trim),
        "references": rule.docs.references,
    });
    if let Some(map) = entry.as_object_mut() {
        map.retain(|_, v| !v.is_null());
    }
    entry
}

/// `winguard explain RULE`, as plain text; `example_fix` as for [`fix_title`].
pub fn explain(rule: &Rule, example_fix: Option<&str>) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{}\n{}\n\n",
        rule.name,
        "=".repeat(rule.name.len())
    ));
    out.push_str(&format!("{}\n\n", rule.summary));
    out.push_str(&format!(
        "Default severity: {}{}\nFix: {}\n",
        rule.default_level(),
        if rule.profiles.is_empty() {
            String::new()
        } else {
            format!(
                " (profile {} only)",
                rule.profiles
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        },
        match fix_title(rule, example_fix) {
            Some(title) => format!("{title} ({})", fix_summary(rule)),
            None => "none".to_string(),
        }
    ));
    out.push_str(&format!("\n## What it does\n\n{}\n", rule.docs.what.trim()));
    out.push_str(&format!(
        "\n## Why is this bad?\n\n{}\n",
        rule.docs.why.trim()
    ));
    if let Some(cfg) = &rule.docs.config {
        out.push_str(&format!(
            "\n## Example config (winguard.yaml)\n\n{}\n",
            indent(cfg)
        ));
    }
    out.push_str(&format!("\n## Example\n\n{}\n", indent(&rule.docs.bad)));
    out.push_str(&format!("\nUse instead:\n\n{}\n", indent(&rule.docs.good)));
    if let Some(s) = &rule.docs.fix_safety {
        out.push_str(&format!("\n## Fix safety\n\n{}\n", s.trim()));
    }
    if !rule.docs.references.is_empty() {
        out.push_str("\n## References\n\n");
        for r in &rule.docs.references {
            out.push_str(&format!("- {r}\n"));
        }
    }
    out
}

/// Markdown help (SARIF `help.markdown`).
pub fn markdown(rule: &Rule) -> String {
    format!(
        "**{}** — {}\n\n### What it does\n{}\n\n### Why is this bad?\n{}\n\n### Example\n```yaml\n{}```\nUse instead:\n```yaml\n{}```\n",
        rule.name,
        rule.summary,
        rule.docs.what.trim(),
        rule.docs.why.trim(),
        rule.docs.bad,
        rule.docs.good
    )
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Fix titles may interpolate values; in docs show the template holes as `…`.
fn strip_template(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("{{") {
        out.push_str(&rest[..i]);
        out.push('…');
        rest = rest[i..].find("}}").map_or("", |j| &rest[i + j + 2..]);
    }
    out.push_str(rest);
    out
}

/// The rule table of docs/rules.md (between the markers), one row per rule, in file order.
pub fn reference_table(rules: &RuleSet) -> String {
    let mut out = String::from("| rule | severity | fix | what it catches |\n|---|---|---|---|\n");
    for r in &rules.rules {
        let sev = if r.profiles.is_empty() {
            r.default_level().to_string()
        } else {
            format!(
                "{} ({})",
                r.default_level(),
                r.profiles
                    .iter()
                    .map(|p| p.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.name,
            sev,
            fix_summary(r),
            r.summary
        ));
    }
    out
}

/// The markers around the generated table in docs/rules.md.
pub const TABLE_BEGIN: &str =
    "<!-- rules:begin (generated by `winguard rules --markdown`; a test checks it) -->";
pub const TABLE_END: &str = "<!-- rules:end -->";
