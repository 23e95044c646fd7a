//! `--format text`: diagnostics like rustc and ruff — `error[rule]: message`, `--> file:line:col`,
//! the source line with a marker, the fix as a help line — and a summary.

use annotate_snippets::{AnnotationKind, Group, Level, Renderer, Snippet};

use super::{Located, RenderOptions, Report};
use crate::rules::{Applicability, Severity};

fn level(s: Severity) -> Level<'static> {
    match s {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
        Severity::Info => Level::INFO,
    }
}

/// The source line of a finding and the byte span to mark on it.
fn snippet_span(f: &Located) -> Option<(String, std::ops::Range<usize>)> {
    let line = f
        .source
        .text
        .lines()
        .nth(f.stream_line.checked_sub(1)? as usize)?;
    let start = line
        .char_indices()
        .nth(f.column.saturating_sub(1) as usize)
        .map_or(line.len(), |(i, _)| i);
    let rest = &line[start..];
    // Mark the value (or, for a missing field, the parent's key up to its `:`).
    let len = if !f.at_key {
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

pub fn render(report: &Report, opts: &RenderOptions<'_>) -> String {
    let renderer = if opts.color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for f in &report.findings {
        let title = format!("{} ({})", f.finding.message, f.object.label());
        let path = format!("{}:{}:{}", f.file, f.line, f.column);
        let mut group = Group::with_title(
            level(f.finding.severity)
                .primary_title(title)
                .id(f.finding.rule.as_str()),
        );
        let snippet;
        if let Some((line, span)) = snippet_span(f) {
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
        let mut help = None;
        if let Some(fix) = &f.finding.fix {
            let suffix = match fix.applicability {
                Applicability::Safe => "",
                Applicability::Unsafe => " (unsafe fix)",
            };
            help = Some(format!("{}{suffix}", fix.title));
        }
        let rendered = match &help {
            Some(h) => renderer.render(&[group.element(Level::HELP.message(h.as_str()))]),
            None => renderer.render(&[group]),
        };
        out.push_str(&rendered);
        out.push_str("\n\n");
    }
    for e in &report.errors {
        let msg = match (e.line, e.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}: {}", e.file, e.message),
            (Some(l), None) => format!("{}:{l}: {}", e.file, e.message),
            _ => format!("{}: {}", e.file, e.message),
        };
        out.push_str(&renderer.render(&[Group::with_title(Level::ERROR.primary_title(msg))]));
        out.push_str("\n\n");
    }
    let (errors, warnings, infos) = (
        report.count(Severity::Error),
        report.count(Severity::Warning),
        report.count(Severity::Info),
    );
    let fixable = report
        .findings
        .iter()
        .filter(|f| {
            f.finding
                .fix
                .as_ref()
                .is_some_and(|x| x.applicability == Applicability::Safe)
        })
        .count();
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    if report.findings.is_empty() && report.errors.is_empty() {
        out.push_str(&format!(
            "No problems found in {} ({}).\n",
            plural(report.files, "file"),
            plural(report.objects, "object")
        ));
    } else {
        let mut counts = vec![plural(errors, "error"), plural(warnings, "warning")];
        if infos > 0 {
            counts.push(plural(infos, "note"));
        }
        out.push_str(&format!(
            "Found {} in {} ({}){}.\n",
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
    }
    out
}
