//! `--format sarif`: SARIF 2.1.0 via `serde-sarif`, with every rule that fired described
//! (short and full description, help text) and 1-based regions.

use crate::error::Error;
use std::collections::BTreeSet;

use std::path::{Path, PathBuf};

use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use serde_sarif::sarif::{
    ArtifactLocation, Invocation, Location, Message, MultiformatMessageString, Notification,
    PhysicalLocation, Region, ReportingDescriptor, Result as SarifResult, ResultLevel, Run, Sarif,
    Tool, ToolComponent,
};

use super::Report;
use crate::rules::{RuleSet, Severity};

const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// The base that relative file names are resolved against (SARIF §3.14.14): the repository's
/// top level (the nearest directory up from the working directory holding `.git`, as git finds
/// it), else the working directory, given in `originalUriBaseIds` so code scanning maps results
/// to the repository wherever winguard ran in it.
const SRCROOT: &str = "%SRCROOT%";

/// What a URI path may not hold literally (RFC 3986: everything but unreserved characters,
/// sub-delimiters, `:`, `@` and the `/` between segments).
const PATH: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'%')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'[')
    .add(b'\\')
    .add(b']')
    .add(b'^')
    .add(b'`')
    .add(b'{')
    .add(b'|')
    .add(b'}');

/// Where file names are resolved from: the working directory the names are relative to, and
/// the root [`SRCROOT`] stands for (see there).
struct Anchor {
    cwd: Option<PathBuf>,
    root: Option<PathBuf>,
}

impl Anchor {
    fn new(working_dir: Option<&Path>) -> Anchor {
        let root = working_dir.map(|dir| {
            crate::manifest::repository_root(dir)
                .unwrap_or(dir)
                .to_path_buf()
        });
        Anchor {
            cwd: working_dir.map(Path::to_path_buf),
            root,
        }
    }

    /// A file as SARIF names it: a path relative to [`SRCROOT`] when it lies under the root,
    /// else an absolute `file:` URI.
    fn artifact(&self, file: &str) -> ArtifactLocation {
        let given = Path::new(file);
        let absolute = match &self.cwd {
            Some(cwd) if given.is_relative() => cwd.join(given.strip_prefix("./").unwrap_or(given)),
            _ => given.to_path_buf(),
        };
        let under_root = self
            .root
            .as_ref()
            .and_then(|root| absolute.strip_prefix(root).ok());
        match under_root {
            Some(relative) => {
                let path = relative.display().to_string().replace('\\', "/");
                ArtifactLocation::builder()
                    .uri(utf8_percent_encode(&path, PATH).to_string())
                    .uri_base_id(SRCROOT.to_string())
                    .build()
            }
            None if given.is_absolute() || self.cwd.is_some() => {
                let path = absolute.display().to_string().replace('\\', "/");
                let uri = format!("file://{}", utf8_percent_encode(&path, PATH));
                ArtifactLocation::builder().uri(uri).build()
            }
            // No working directory to resolve from: the name as it is, against the base.
            None => {
                let path = file.replace('\\', "/");
                let uri = utf8_percent_encode(path.trim_start_matches("./"), PATH).to_string();
                ArtifactLocation::builder()
                    .uri(uri)
                    .uri_base_id(SRCROOT.to_string())
                    .build()
            }
        }
    }
}

/// The working directory as a `file:` URI ending in `/`, as `originalUriBaseIds` wants.
fn base_uri(dir: &Path) -> String {
    let mut path = dir.display().to_string().replace('\\', "/");
    if !path.ends_with('/') {
        path.push('/');
    }
    if !path.starts_with('/') {
        path.insert(0, '/');
    }
    format!("file://{}", utf8_percent_encode(&path, PATH))
}

fn region(line: Option<u32>, column: Option<u32>) -> Option<Region> {
    let line = line?;
    Some(match column {
        Some(c) => Region::builder()
            .start_line(i64::from(line))
            .start_column(i64::from(c))
            .build(),
        None => Region::builder().start_line(i64::from(line)).build(),
    })
}

/// An input or render error as a tool execution notification (SARIF §3.58): code scanning then
/// knows the run did not see everything, instead of reading it as "no alerts".
fn notification(anchor: &Anchor, e: &Error) -> Notification {
    let physical = match region(e.line, e.column) {
        Some(r) => PhysicalLocation::builder()
            .artifact_location(anchor.artifact(&e.file))
            .region(r)
            .build(),
        None => PhysicalLocation::builder()
            .artifact_location(anchor.artifact(&e.file))
            .build(),
    };
    Notification::builder()
        .level(serde_json::json!("error"))
        .message(Message::builder().text(format!("{e}")).build())
        .locations(vec![
            Location::builder().physical_location(physical).build(),
        ])
        .build()
}

/// Where a chart value a finding's template line printed was set: its line in a values file,
/// or the flag that set it (a location with a message only).
fn value_location(anchor: &Anchor, v: &helm_engine::trace::ValueSite) -> Location {
    match (&v.file, &v.flag) {
        (Some(file), _) => {
            let physical = match region(v.line, None) {
                Some(r) => PhysicalLocation::builder()
                    .artifact_location(anchor.artifact(file))
                    .region(r)
                    .build(),
                None => PhysicalLocation::builder()
                    .artifact_location(anchor.artifact(file))
                    .build(),
            };
            Location::builder()
                .id(0)
                .physical_location(physical)
                .message(
                    Message::builder()
                        .text(format!("the value `{}` is set here", v.path))
                        .build(),
                )
                .build()
        }
        (None, flag) => {
            let text = match flag {
                Some(flag) => format!("the value `{}` is set by `{flag}`", v.path),
                None => format!(
                    "the value `{}` (set nowhere: the template's default)",
                    v.path
                ),
            };
            Location::builder()
                .id(0)
                .message(Message::builder().text(text).build())
                .build()
        }
    }
}

fn level(s: Severity) -> ResultLevel {
    match s {
        Severity::Error => ResultLevel::Error,
        Severity::Warning => ResultLevel::Warning,
        Severity::Info => ResultLevel::Note,
    }
}

pub(super) fn render(report: &Report, rules: &RuleSet, working_dir: Option<&Path>) -> String {
    let anchor = Anchor::new(working_dir);
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
            let mut text = f.finding.full_message();
            if let Some(fix) = &f.finding.fix {
                text.push_str(&format!(" (fix: {})", fix.title));
            }
            let mut result = SarifResult::builder()
                .rule_id(f.finding.rule.clone())
                .level(level(f.finding.severity))
                .message(Message::builder().text(text).build())
                .locations(vec![
                    Location::builder()
                        .physical_location(
                            PhysicalLocation::builder()
                                .artifact_location(anchor.artifact(&f.file))
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
                .build();
            // In a rendered chart: where the value the template printed was set.
            if let Some(v) = f.origin.as_ref().and_then(|o| o.value.as_ref()) {
                result.related_locations = Some(vec![value_location(&anchor, v)]);
            }
            result
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
        .invocations(vec![
            Invocation::builder()
                .execution_successful(report.errors.is_empty())
                .tool_execution_notifications(
                    report
                        .errors
                        .iter()
                        .map(|e| notification(&anchor, e))
                        .collect::<Vec<_>>(),
                )
                .build(),
        ]);
    let run = match &anchor.root {
        Some(dir) => run
            .original_uri_base_ids(std::collections::BTreeMap::from([(
                SRCROOT.to_string(),
                ArtifactLocation::builder().uri(base_uri(dir)).build(),
            )]))
            .build(),
        None => run.build(),
    };
    let sarif = Sarif::builder()
        .schema(SCHEMA.to_string())
        .version(serde_json::json!("2.1.0"))
        .runs(vec![run])
        .build();
    let mut s = serde_json::to_string_pretty(&sarif).expect("SARIF serialises");
    s.push('\n');
    s
}
