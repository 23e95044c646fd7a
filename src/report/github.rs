//! `--format github`: GitHub Actions workflow commands, shown as annotations on the diff.

use super::Report;
use crate::rules::Severity;

/// Escapes data and property values as the Actions runner expects.
fn escape(s: &str, property: bool) -> String {
    let mut out = s
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    if property {
        out = out.replace(':', "%3A").replace(',', "%2C");
    }
    out
}

pub(super) fn render(report: &Report) -> String {
    let mut out = String::new();
    for f in &report.findings {
        let level = match f.finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        let mut message = f.finding.full_message();
        if let Some(fix) = &f.finding.fix {
            message.push_str(&format!("\nhelp: {}", fix.title));
        }
        out.push_str(&format!(
            "::{level} file={},line={},col={},title={}::{}\n",
            escape(&f.file, true),
            f.line,
            f.column,
            escape(&format!("winguard: {}", f.finding.rule), true),
            escape(&message, false)
        ));
    }
    for e in &report.errors {
        let mut props = format!("file={}", escape(&e.file, true));
        if let Some(l) = e.line {
            props.push_str(&format!(",line={l}"));
        }
        if let Some(c) = e.column {
            props.push_str(&format!(",col={c}"));
        }
        out.push_str(&format!(
            "::error {props},title=winguard: input error::{}\n",
            escape(&e.message, false)
        ));
    }
    out
}
