//! `--format json`: the contract in DESIGN.md.

use serde_json::{Value, json};

use super::Report;
use crate::rules::Severity;

pub fn render(report: &Report) -> String {
    let findings: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let mut v = json!({
                "rule": f.finding.rule,
                "severity": f.finding.severity,
                "message": f.finding.message,
                "file": &*f.file,
                "line": f.line,
                "column": f.column,
                "object": f.object,
                "pointer": f.finding.pointer,
            });
            if let Some(fix) = &f.finding.fix {
                v["fix"] = Value::Array(fix.patch.clone());
                v["fixTitle"] = json!(fix.title);
                v["applicability"] = json!(fix.applicability);
            }
            v
        })
        .collect();
    let errors: Vec<Value> = report
        .errors
        .iter()
        .map(|e| json!({"file": e.file, "line": e.line, "column": e.column, "message": e.message}))
        .collect();
    let out = json!({
        "version": 1,
        "findings": findings,
        "errors": errors,
        "summary": {
            "files": report.files,
            "objects": report.objects,
            "errors": report.count(Severity::Error),
            "warnings": report.count(Severity::Warning),
        },
    });
    let mut s = serde_json::to_string_pretty(&out).expect("JSON values serialise");
    s.push('\n');
    s
}
