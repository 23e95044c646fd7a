//! `values.schema.json`: each chart's merged values checked against its schema, subcharts with
//! their own part of the values, errors worded and ordered as Helm 4 words them.

use crate::error::Error;
use serde_json::Value as Json;

use super::loaded::Chart;

/// Checks `values` (the chart's merged values) against the schemas of `chart` and its subcharts.
pub fn validate(chart: &Chart, values: &Json) -> Result<(), Error> {
    let mut report = String::new();
    collect(chart, values, &mut report)?;
    if report.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        format!("{}/values.schema.json", chart.source),
        format!(
            "values don't meet the specifications of the schema(s) in the following chart(s):\n{report}"
        ),
    ))
}

fn collect(chart: &Chart, values: &Json, report: &mut String) -> Result<(), Error> {
    if let Some(schema) = &chart.schema {
        let shown = format!("{}/values.schema.json", chart.source);
        let validator = jsonschema::validator_for(schema)
            .map_err(|e| Error::new(&shown, format!("{shown}: invalid schema: {e}")))?;
        let mut problems: Vec<(String, String)> = validator
            .iter_errors(values)
            .map(|e| {
                let path = e.instance_path().as_str().to_string();
                let message = describe(e.kind(), values.pointer(&path), &e.to_string());
                (path, message)
            })
            .collect();
        problems.sort();
        if !problems.is_empty() {
            report.push_str(&format!("{}:\n", chart.name()));
            for (path, message) in problems {
                report.push_str(&format!("- at '{path}': {message}\n"));
            }
        }
    }
    for sub in &chart.subcharts {
        let empty = Json::Object(Default::default());
        let sub_values = values.get(sub.name()).unwrap_or(&empty);
        collect(sub, sub_values, report)?;
    }
    Ok(())
}

/// A JSON number or value as Go prints it in Helm's messages (`0`, not `0.0`).
fn shown(v: Option<&Json>) -> String {
    match v {
        Some(Json::Number(n)) => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 1e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => "null".into(),
    }
}

fn json_type(v: Option<&Json>) -> &'static str {
    match v {
        Some(Json::Null) | None => "null",
        Some(Json::Bool(_)) => "boolean",
        Some(Json::Number(_)) => "number",
        Some(Json::String(_)) => "string",
        Some(Json::Array(_)) => "array",
        Some(Json::Object(_)) => "object",
    }
}

/// The message of one violation, in the validator Helm uses's words where they differ.
fn describe(
    kind: &jsonschema::error::ValidationErrorKind,
    value: Option<&Json>,
    fallback: &str,
) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    match kind {
        K::Type { kind } => {
            let want = match kind {
                jsonschema::error::TypeKind::Single(t) => t.to_string(),
                jsonschema::error::TypeKind::Multiple(ts) => {
                    let names: Vec<String> = ts.iter().map(|t| t.to_string()).collect();
                    names.join(" or ")
                }
            };
            format!("got {}, want {want}", json_type(value))
        }
        K::Minimum { limit } => {
            format!("minimum: got {}, want {}", shown(value), shown(Some(limit)))
        }
        K::Maximum { limit } => {
            format!("maximum: got {}, want {}", shown(value), shown(Some(limit)))
        }
        K::Pattern { pattern } => format!("'{}' does not match pattern '{pattern}'", shown(value)),
        K::Required { property } => format!("missing property {}", quote_single(property)),
        K::MinLength { limit } => format!(
            "minLength: got {}, want {limit}",
            value
                .and_then(Json::as_str)
                .map_or(0, |s| s.chars().count())
        ),
        K::MaxLength { limit } => format!(
            "maxLength: got {}, want {limit}",
            value
                .and_then(Json::as_str)
                .map_or(0, |s| s.chars().count())
        ),
        K::AdditionalProperties { unexpected } => {
            let names: Vec<String> = unexpected.iter().map(|u| format!("'{u}'")).collect();
            format!("additional properties {} not allowed", names.join(", "))
        }
        _ => fallback.to_string(),
    }
}

fn quote_single(v: &Json) -> String {
    match v {
        Json::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}
