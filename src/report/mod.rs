//! Reporters: findings and input errors rendered as text, JSON, SARIF, JUnit or GitHub
//! annotations. Positions are resolved here, from each finding's JSON pointer.

mod github;
mod json;
mod junit;
mod policyreport;
mod sarif;
mod text;

use crate::error::Error;
use std::sync::Arc;

use crate::engine::Finding;
use crate::manifest::{Object, SourceText};
use crate::rules::{RuleSet, Severity};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Sarif,
    Junit,
    Github,
    /// `wgpolicyk8s.io/v1alpha2` PolicyReports (one per namespace) and a ClusterPolicyReport, as
    /// Kyverno writes them by default.
    Policyreport,
    /// The same as `openreports.io/v1alpha1` Reports and a ClusterReport, the successor API
    /// Kyverno writes with `--openreportsEnabled`.
    Openreports,
}

/// Identity of the object a finding is about.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ObjectRef {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    pub kind: String,
    pub namespace: Option<String>,
    pub name: String,
    /// `metadata.uid`, when the input has it (objects read from a cluster): policy reports name
    /// their subjects by it. Not part of the JSON output's object identity.
    #[serde(skip)]
    pub uid: Option<String>,
}

impl ObjectRef {
    pub fn of(o: &Object) -> Self {
        ObjectRef {
            api_version: o.api_version().to_string(),
            kind: o.kind().to_string(),
            namespace: o.namespace().map(str::to_string),
            name: o.name().to_string(),
            uid: o
                .value
                .pointer("/metadata/uid")
                .and_then(crate::value::Value::as_str)
                .map(str::to_string),
        }
    }
    /// `Deployment default/web`
    pub fn label(&self) -> String {
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// A finding placed in its file.
#[derive(Debug, Clone)]
pub struct Located {
    pub finding: Finding,
    pub file: Arc<str>,
    pub line: u32,
    pub column: u32,
    /// Whether the pointer exists (false: the position is the parent of a missing field).
    pub exact: bool,
    /// Whether the position is a key's (mark up to its `:`).
    pub at_key: bool,
    /// Shared by all the findings of one object.
    pub object: Arc<ObjectRef>,
    pub source: Arc<SourceText>,
    /// Line in `source` (the input stream) of `line`.
    pub stream_line: u32,
    /// The Helm template the object was rendered from, when `file` is the rendered output.
    pub template: Option<Arc<str>>,
    /// For a chart winguard rendered: the template place that wrote the offending text, which
    /// `file`, `line` and `column` then name; `stream_line` is the rendered line.
    pub origin: Option<helm_engine::trace::Origin>,
}

impl Located {
    /// The findings of one object, placed in its file; they share one copy of its identity.
    pub fn all(findings: Vec<Finding>, object: &Object) -> impl Iterator<Item = Located> + '_ {
        let object_ref = (!findings.is_empty()).then(|| Arc::new(ObjectRef::of(object)));
        findings.into_iter().map(move |finding| {
            let object_ref = Arc::clone(object_ref.as_ref().expect("made for a finding"));
            Located::new(finding, object, object_ref)
        })
    }

    fn new(finding: Finding, object: &Object, object_ref: Arc<ObjectRef>) -> Self {
        let pos = object.position(&finding.pointer);
        let stream_line = object.stream_line(pos.line);
        let mut origin = object.source.origin_at(stream_line, pos.column);
        // A map or list shown at its key (template text) may be an action's value: named too.
        if let Some(o) = origin
            .as_mut()
            .filter(|o| o.value.is_none() && pos.at_key && pos.exact)
        {
            let value = object.value_position(&finding.pointer);
            o.value = object
                .source
                .origin_at(object.stream_line(value.line), value.column)
                .and_then(|v| v.value);
        }
        // A missing field an empty `with`/`if` on a value left out: that value is where it goes.
        if let Some(o) = origin.as_mut().filter(|o| o.value.is_none() && !pos.exact)
            && let Some(key) = missing_key(&object.value, &finding.pointer)
        {
            o.value = object.source.hole_at(stream_line, pos.column, &key);
        }
        let (file, line, column) = match &origin {
            Some(o) => (
                Arc::from(object.source.template_file(&o.file)),
                o.line,
                o.column,
            ),
            None => (Arc::clone(&object.file), pos.line, pos.column),
        };
        Located {
            file,
            line,
            column,
            exact: pos.exact,
            at_key: pos.at_key,
            object: object_ref,
            source: Arc::clone(&object.source),
            stream_line,
            template: object.template.clone(),
            origin,
            finding,
        }
    }
}

/// The first key of `pointer` that `value` lacks.
pub(crate) fn missing_key(value: &crate::value::Value, pointer: &str) -> Option<String> {
    let mut at = value;
    for token in pointer.split('/').skip(1) {
        let token = crate::value::unescape_pointer_token(token);
        match at.pointer(&format!("/{}", crate::value::escape_pointer_token(&token))) {
            Some(next) if !next.is_null() => at = next,
            _ => return Some(token.into_owned()),
        }
    }
    None
}

/// Everything one run reports.
#[derive(Debug, Default)]
pub struct Report {
    pub findings: Vec<Located>,
    pub errors: Vec<Error>,
    pub files: usize,
    pub objects: usize,
    /// The inputs winguard rendered (charts, kustomize overlays): their fixes can't be
    /// written back.
    pub charts: Vec<String>,
}

impl Report {
    /// Adds another input set's report (`lint` over inputs with different configs).
    pub fn merge(&mut self, other: Report) {
        self.findings.extend(other.findings);
        self.errors.extend(other.errors);
        self.files += other.files;
        self.objects += other.objects;
        self.charts.extend(other.charts);
    }

    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.finding.severity == severity)
            .count()
    }

    /// Sorted by file, line, column, rule: stable output for diffs and snapshots.
    pub fn sort(&mut self) {
        use rayon::slice::ParallelSliceMut;
        self.findings.par_sort_by(|a, b| {
            (&a.file, a.line, a.column, &a.finding.rule).cmp(&(
                &b.file,
                b.line,
                b.column,
                &b.finding.rule,
            ))
        });
    }
}

/// Options for rendering.
pub struct RenderOptions<'a> {
    pub color: bool,
    pub rules: &'a RuleSet,
    /// What relative file names are relative to (SARIF's `originalUriBaseIds`).
    pub working_dir: Option<&'a std::path::Path>,
    /// The config file the run used, named in the text summary.
    pub config_file: Option<&'a std::path::Path>,
    /// Findings and errors only: no summary (`--quiet`).
    pub quiet: bool,
    /// The lowest severity that fails the run (`--fail-on`; none for `never`): JUnit reports
    /// findings below it as passing cases, as the exit code does.
    pub fail_on: Option<crate::rules::Severity>,
    /// Whether the text report lists the input errors itself; the CLI writes them to stderr
    /// instead when the report goes to stdout ([`input_errors_text`]).
    pub list_input_errors: bool,
}

/// The input errors as the text report words them, one block each (for stderr).
pub fn input_errors_text(report: &Report, color: bool) -> String {
    text::input_errors(report, color)
}

/// Writes a report in a format to `w`: JSON as it is serialised, the others rendered first.
pub fn render_to(
    format: Format,
    report: &Report,
    opts: &RenderOptions<'_>,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    match format {
        Format::Json => json::write(report, w),
        _ => w.write_all(render(format, report, opts).as_bytes()),
    }
}

/// Renders a report in a format.
pub fn render(format: Format, report: &Report, opts: &RenderOptions<'_>) -> String {
    match format {
        Format::Text => text::render(report, opts),
        Format::Json => json::render(report),
        Format::Sarif => sarif::render(report, opts.rules, opts.working_dir),
        Format::Junit => junit::render(report, opts.fail_on),
        Format::Github => github::render(report),
        Format::Policyreport => policyreport::render(report, policyreport::Api::WgPolicy),
        Format::Openreports => policyreport::render(report, policyreport::Api::OpenReports),
    }
}
