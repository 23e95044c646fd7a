//! `--format text`: diagnostics like rustc and ruff — `error[rule]: message`, `--> file:line:col`,
//! the source line with a marker, the fix as a help line — and a summary.

use std::collections::HashMap;
use std::sync::Arc;

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};
use rayon::prelude::*;

use super::{Located, RenderOptions, Report};
use crate::manifest::SourceText;
use crate::rules::{Applicability, Severity};

fn level(s: Severity) -> Level<'static> {
    match s {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    }
}

/// Each source's lines, split once per source (`manifest::lines`): looking a finding's line up by
/// counting lines from the top made rendering quadratic in the size of a file. Keyed by the
/// address of the source, which the report's findings hold alive.
struct SourceLines<'r> {
    by_source: HashMap<usize, Vec<&'r str>>,
}

fn source_key(source: &Arc<SourceText>) -> usize {
    Arc::as_ptr(source) as usize
}

impl<'r> SourceLines<'r> {
    fn of(report: &'r Report) -> Self {
        let mut by_source = HashMap::new();
        for f in &report.findings {
            by_source
                .entry(source_key(&f.source))
                .or_insert_with(|| crate::value::text::lines(&f.source.text).collect());
        }
        SourceLines { by_source }
    }

    /// Line `n` (1-based) of a finding's source, without its line break.
    fn line(&self, f: &Located, n: u32) -> Option<&'r str> {
        let lines = self.by_source.get(&source_key(&f.source))?;
        let line = lines.get(n.checked_sub(1)? as usize)?;
        Some(line.trim_end_matches('\r'))
    }
}

/// The source line of a finding and the byte span to mark on it.
fn snippet_span(f: &Located, lines: &SourceLines<'_>) -> Option<(String, std::ops::Range<usize>)> {
    // A rendered chart's finding shows the template line that wrote it.
    let line = match &f.origin {
        Some(o) => o.source.lines().nth(f.line.checked_sub(1)? as usize)?,
        None => lines.line(f, f.stream_line)?,
    };
    let line = line.trim_end_matches('\r');
    let start = line
        .char_indices()
        .nth(f.column.saturating_sub(1) as usize)
        .map_or(line.len(), |(i, _)| i);
    let rest = &line[start..];
    // Mark the value (or, for a missing field, the parent's key up to its `:`); an action that
    // printed it, whole.
    let action = f.origin.as_ref().is_some_and(|o| !o.verbatim);
    let len = if action {
        rest.find("}}").map_or(rest.len(), |i| i + 2)
    } else if !f.at_key {
        let trimmed = rest.trim_end();
        match trimmed.chars().next() {
            Some('{' | '[') => 1,
            // A quoted scalar ends at its closing quote (flow style may follow it).
            Some(q @ ('\'' | '"')) => trimmed[1..].find(q).map_or(trimmed.len(), |i| i + 2),
            // A plain scalar inside a flow collection ends at `,`, `}` or `]`.
            _ => trimmed
                .find([',', '}', ']'])
                .unwrap_or(trimmed.len())
                .max(1),
        }
    } else {
        rest.find(':').unwrap_or(rest.len()).max(1)
    };
    Some((
        line.to_string(),
        start..(start + len).min(line.len()).max(start),
    ))
}

fn renderer(color: bool) -> Renderer {
    if color {
        Renderer::styled()
    } else {
        Renderer::plain()
    }
}

pub(super) fn render(report: &Report, opts: &RenderOptions<'_>) -> String {
    let renderer = renderer(opts.color);
    let lines = SourceLines::of(report);
    // Why the pod targets its OS is said once per object: with its first finding that has it.
    let mut noted = std::collections::HashSet::new();
    let says_target: Vec<bool> = report
        .findings
        .iter()
        .map(|f| f.finding.target.is_some() && noted.insert(Arc::as_ptr(&f.object)))
        .collect();
    // Each finding is rendered on its own, so all threads share the work.
    let rendered: Vec<String> = report
        .findings
        .par_iter()
        .zip(says_target.par_iter())
        .map(|(f, &target)| render_finding(f, target, &renderer, &lines))
        .collect();
    let mut out = String::with_capacity(rendered.iter().map(|r| r.len() + 2).sum());
    for r in rendered {
        out.push_str(&r);
        out.push_str("\n\n");
    }
    render_tail(report, &renderer, opts, out)
}

fn render_finding(
    f: &Located,
    say_target: bool,
    renderer: &Renderer,
    lines: &SourceLines<'_>,
) -> String {
    {
        let title = format!("{} ({})", f.finding.message, f.object.label());
        let path = format!("{}:{}:{}", f.file, f.line, f.column);
        let mut group = Group::with_title(
            level(f.finding.severity)
                .primary_title(title)
                .id(f.finding.rule.as_str()),
        );
        let snippet;
        if let Some((line, span)) = snippet_span(f, lines) {
            snippet = line;
            let label = if f.exact { "" } else { "missing here" };
            group = group.element(
                Snippet::source(snippet.as_str())
                    .line_start(f.line as usize)
                    .path(f.file.to_string())
                    .annotation(AnnotationKind::Primary.span(span).label(label)),
            );
        } else {
            group = group.element(Level::NOTE.message(format!("at {path}")));
        }
        if let Some(target) = f.finding.target.as_deref().filter(|_| say_target) {
            group = group.element(Level::NOTE.message(target));
        }
        if let Some(v) = f.origin.as_ref().and_then(|o| o.value.as_ref()) {
            let note = match (&v.file, v.line, &v.flag) {
                (_, _, Some(flag)) => format!("the value `{}` is set by `{flag}`", v.path),
                (Some(file), Some(line), _) => {
                    format!("the value `{}` is set in {file}:{line}", v.path)
                }
                _ => format!("the value `{}` is set in no values file", v.path),
            };
            group = group.element(Level::NOTE.message(note));
        }
        let mut help = None;
        if let Some(fix) = &f.finding.fix {
            let suffix = match fix.applicability {
                Applicability::Safe => "",
                Applicability::Unsafe => " (unsafe fix)",
            };
            help = Some(format!("{}{suffix}", fix.title));
        }
        match &help {
            Some(h) => renderer.render(&[group.element(Level::HELP.message(h.as_str()))]),
            None => renderer.render(&[group]),
        }
    }
}

fn write_input_errors(report: &Report, renderer: &Renderer, out: &mut String) {
    for e in &report.errors {
        let msg = match (e.line, e.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}: {}", e.file, e.message),
            (Some(l), None) => format!("{}:{l}: {}", e.file, e.message),
            _ => format!("{}: {}", e.file, e.message),
        };
        out.push_str(&renderer.render(&[Group::with_title(Level::ERROR.primary_title(msg))]));
        out.push_str("\n\n");
    }
}

/// The input errors alone, as the report words them.
pub(super) fn input_errors(report: &Report, color: bool) -> String {
    let mut out = String::new();
    write_input_errors(report, &renderer(color), &mut out);
    out
}

/// Input errors and the summary, after the findings.
fn render_tail(
    report: &Report,
    renderer: &Renderer,
    opts: &RenderOptions<'_>,
    mut out: String,
) -> String {
    if opts.list_input_errors {
        write_input_errors(report, renderer, &mut out);
    }
    if opts.quiet {
        return out;
    }
    let (errors, warnings, infos) = (
        report.count(Severity::Error),
        report.count(Severity::Warning),
        report.count(Severity::Info),
    );
    let (in_charts, fixable): (Vec<&Located>, Vec<&Located>) = report
        .findings
        .iter()
        .filter(|f| {
            f.finding
                .fix
                .as_ref()
                .is_some_and(|x| x.applicability == Applicability::Safe)
        })
        .partition(|f| report.charts.iter().any(|c| *c == f.source.name));
    let (in_charts, fixable) = (in_charts.len(), fixable.len());
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let config = opts
        .config_file
        .map(|p| format!(" with config {}", p.display()))
        .unwrap_or_default();
    if report.findings.is_empty() && report.errors.is_empty() {
        out.push_str(&format!(
            "No problems found in {} ({}){config}.\n",
            plural(report.files, "file"),
            plural(report.objects, "object")
        ));
    } else {
        let mut counts = vec![plural(errors, "error"), plural(warnings, "warning")];
        if infos > 0 {
            counts.push(plural(infos, "note"));
        }
        out.push_str(&format!(
            "Found {} in {} ({}){config}{}.\n",
            counts.join(", "),
            plural(report.files, "file"),
            plural(report.objects, "object"),
            if report.errors.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} could not be read",
                    plural(report.errors.len(), "input problem")
                )
            }
        ));
        if fixable > 0 {
            out.push_str(&format!("{fixable} fixable with `winguard fix`.\n"));
        }
        if in_charts > 0 {
            out.push_str(&format!(
                "{in_charts} fixable in the rendered output with `winguard mutate` (a Helm \
                 post-renderer); `winguard fix CHART` writes into a chart's values the fixes \
                 that belong there and names the template lines to change for the others.\n"
            ));
        }
    }
    out
}
