//! `--format sarif`: SARIF 2.1.0 via `serde-sarif`, with every rule that fired described
//! (short and full description, help text) and 1-based regions.

use std::collections::BTreeSet;

use serde_sarif::sarif::{
    ArtifactLocation, Location, Message, MultiformatMessageString, PhysicalLocation, Region,
    ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif, Tool, ToolComponent,
};

use super::Report;
use crate::rules::{RuleSet, Severity};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

fn level(s: Severity) -> ResultLevel {
    match s {
        Severity::Error => ResultLevel::Error,
        Severity::Warning => ResultLevel::Warning,
        Severity::Info => ResultLevel::Note,
    }
}

pub fn render(report: &Report, rules: &RuleSet) -> String {
    let fired: BTreeSet<&str> = report
        .findings
        .iter()
        .map(|f| f.finding.rule.as_str())
        .collect();
    let descriptors: Vec<ReportingDescriptor> = fired
        .iter()
        .map(|name| {
            let builder = ReportingDescriptor::builder()
                .id(name.to_string())
                .name(name.to_string());
            match rules.get(name) {
                Some(rule) => builder
                    .short_description(
                        MultiformatMessageString::builder()
                            .text(rule.summary.clone())
                            .build(),
                    )
                    .full_description(
                        MultiformatMessageString::builder()
                            .text(rule.docs.what.clone())
                            .build(),
                    )
                    .help(
                        MultiformatMessageString::builder()
                            .text(format!(
                                "{}\n\nWhy: {}\n\nRun `winguard explain {name}` for examples.",
                                rule.docs.what, rule.docs.why
                            ))
                            .markdown(crate::rules::docs::markdown(rule))
                            .build(),
                    )
                    .build(),
                None => builder
                    .short_description(
                        MultiformatMessageString::builder()
                            .text(name.to_string())
                            .build(),
                    )
                    .build(),
            }
        })
        .collect();
    let results: Vec<SarifResult> = report
        .findings
        .iter()
        .map(|f| {
            let mut text = f.finding.message.clone();
            if let Some(fix) = &f.finding.fix {
                text.push_str(&format!(" (fix: {})", fix.title));
            }
            SarifResult::builder()
                .rule_id(f.finding.rule.clone())
                .level(level(f.finding.severity))
                .message(Message::builder().text(text).build())
                .locations(vec![
                    Location::builder()
                        .physical_location(
                            PhysicalLocation::builder()
                                .artifact_location(
                                    ArtifactLocation::builder().uri(f.file.to_string()).build(),
                                )
                                .region(
                                    Region::builder()
                                        .start_line(i64::from(f.line))
                                        .start_column(i64::from(f.column))
                                        .build(),
                                )
                                .build(),
                        )
                        .build(),
                ])
                .build()
        })
        .collect();
    let run = Run::builder()
        .tool(
            Tool::builder()
                .driver(
                    ToolComponent::builder()
                        .name("winguard".to_string())
                        .version(env!("CARGO_PKG_VERSION").to_string())
                        .rules(descriptors)
                        .build(),
                )
                .build(),
        )
        .results(results)
        .build();
    let sarif = Sarif::builder()
        .schema(SCHEMA.to_string())
        .version(serde_json::json!("2.1.0"))
        .runs(vec![run])
        .build();
    let mut s = serde_json::to_string_pretty(&sarif).expect("SARIF serialises");
    s.push('\n');
    s
}
