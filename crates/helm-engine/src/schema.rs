//! `values.schema.json`: each chart's merged values checked against its schema, subcharts with
//! their own part of the values, errors worded and nested as Helm 4 shows them.
//!
//! The `jsonschema` crate validates; Helm's validator (santhosh-tekuri/jsonschema v6) reports a
//! tree, not a list: each subschema that fails gives one error, or a group of its errors
//! ("validation failed"); `allOf`, `anyOf` and `oneOf` fail with their subschemas' errors as
//! causes; `type`, `const`, `enum` and `format` end a subschema's checks. [`scope`] rebuilds that
//! tree from where in the schema (the evaluation path) each of the crate's errors arose.

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
        let errors: Vec<jsonschema::ValidationError> = validator.iter_errors(values).collect();
        if !errors.is_empty() {
            let leaves: Vec<Leaf> = errors.iter().map(|e| Leaf::of(e, values)).collect();
            // The root's one error is shown itself, a group of several by its causes.
            let root = scope(&leaves.iter().collect::<Vec<_>>(), 0, "");
            let shown = match root {
                Node {
                    causes,
                    grouped: true,
                    ..
                } => causes,
                single => vec![single],
            };
            report.push_str(&format!("{}:\n", chart.name()));
            for node in &shown {
                node.write(report, 0);
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
        K::Enum { options } => {
            let options = options.as_array().map_or(&[][..], Vec::as_slice);
            if options.iter().any(|o| o.is_array() || o.is_object()) {
                "enum failed".into()
            } else if let [only] = options {
                format!("value must be {}", display(only))
            } else {
                let shown: Vec<String> = options.iter().map(display).collect();
                format!("value must be one of {}", shown.join(", "))
            }
        }
        K::Constant { expected_value } => match expected_value.as_ref() {
            Json::Array(_) | Json::Object(_) => "const failed".into(),
            want => format!("value must be {}", display(want)),
        },
        K::FalseSchema => "false schema".into(),
        K::MinItems { limit } => format!(
            "minItems: got {}, want {limit}",
            value.and_then(Json::as_array).map_or(0, Vec::len)
        ),
        K::MaxItems { limit } => format!(
            "maxItems: got {}, want {limit}",
            value.and_then(Json::as_array).map_or(0, Vec::len)
        ),
        K::MinProperties { limit } => format!(
            "minProperties: got {}, want {limit}",
            value.and_then(Json::as_object).map_or(0, |m| m.len())
        ),
        K::MaxProperties { limit } => format!(
            "maxProperties: got {}, want {limit}",
            value.and_then(Json::as_object).map_or(0, |m| m.len())
        ),
        K::ExclusiveMinimum { limit } => format!(
            "exclusiveMinimum: got {}, want {}",
            shown(value),
            shown(Some(limit))
        ),
        K::ExclusiveMaximum { limit } => format!(
            "exclusiveMaximum: got {}, want {}",
            shown(value),
            shown(Some(limit))
        ),
        _ => fallback.to_string(),
    }
}

/// v6's `display` of a primitive in its messages: strings single-quoted, the rest as Go's `%v`
/// prints the decoded JSON (numbers as written).
fn display(v: &Json) -> String {
    match v {
        Json::Null => "<nil>".into(),
        other => quote_single(other),
    }
}

fn quote_single(v: &Json) -> String {
    match v {
        Json::String(s) => format!("'{s}'"),
        other => other.to_string(),
    }
}

/// One of the crate's errors: the evaluation path's segments, where in the values, and what
/// (in Helm's words, or the nested errors of an `anyOf`/`oneOf`).
struct Leaf {
    path: Vec<String>,
    at: String,
    what: What,
}

enum What {
    Message(String),
    /// `missing property 'x'`: one per property here, one for all of them in Helm.
    Missing(String),
    AnyOf(Vec<Vec<Leaf>>),
    OneOfNone(Vec<Vec<Leaf>>),
    /// The first two subschemas that matched.
    OneOfMany(usize, usize),
}

impl Leaf {
    fn of(e: &jsonschema::ValidationError, values: &Json) -> Leaf {
        use jsonschema::error::ValidationErrorKind as K;
        let branches = |context: &Vec<Vec<jsonschema::ValidationError>>| {
            context
                .iter()
                .map(|branch| branch.iter().map(|e| Leaf::of(e, values)).collect())
                .collect()
        };
        let at = e.instance_path().as_str().to_string();
        let what = match e.kind() {
            K::AnyOf { context } => What::AnyOf(branches(context)),
            K::OneOfNotValid { context } => What::OneOfNone(branches(context)),
            K::OneOfMultipleValid { context } => {
                let mut valid = context
                    .iter()
                    .enumerate()
                    .filter(|(_, b)| b.is_empty())
                    .map(|(i, _)| i);
                let first = valid.next().unwrap_or(0);
                What::OneOfMany(first, valid.next().unwrap_or(first + 1))
            }
            K::Required { property } => What::Missing(quote_single(property)),
            kind => What::Message(describe(kind, values.pointer(&at), &e.to_string())),
        };
        Leaf {
            path: e
                .evaluation_path()
                .as_str()
                .split('/')
                .skip(1)
                .map(|s| s.replace("~1", "/").replace("~0", "~"))
                .collect(),
            at,
            what,
        }
    }
}

/// An error as Helm's validator shows it: `- at 'PATH': MESSAGE`, its causes below it.
struct Node {
    at: String,
    message: String,
    causes: Vec<Node>,
    /// A subschema's several errors ("validation failed"), which the root shows by its causes.
    grouped: bool,
}

impl Node {
    fn new(at: &str, message: impl Into<String>, causes: Vec<Node>) -> Node {
        Node {
            at: at.to_string(),
            message: message.into(),
            causes,
            grouped: false,
        }
    }

    fn write(&self, out: &mut String, depth: usize) {
        out.push_str(&format!(
            "{}- at '{}': {}\n",
            "  ".repeat(depth),
            self.at,
            self.message
        ));
        for cause in &self.causes {
            cause.write(out, depth + 1);
        }
    }
}

/// The order v6 checks a subschema's keywords in (`validator.go`: the type and value checks
/// that end it, `$ref`, objects, arrays, strings, numbers, then the combinators).
fn keyword_rank(keyword: &str) -> u8 {
    match keyword {
        "type" | "const" | "enum" | "format" | "false" => 0,
        "$ref" | "$dynamicRef" | "$recursiveRef" => 1,
        "minProperties" => 2,
        "maxProperties" => 3,
        "required" => 4,
        "dependencies" => 5,
        "properties" | "patternProperties" | "additionalProperties" => 6,
        "propertyNames" => 8,
        "dependentSchemas" => 9,
        "dependentRequired" => 10,
        "minItems" => 11,
        "maxItems" => 12,
        "uniqueItems" => 13,
        "items" | "prefixItems" | "additionalItems" => 14,
        "contains" | "minContains" | "maxContains" => 15,
        "minLength" => 16,
        "maxLength" => 17,
        "pattern" => 18,
        "contentEncoding" | "contentMediaType" | "contentSchema" => 19,
        "minimum" => 20,
        "maximum" => 21,
        "exclusiveMinimum" => 22,
        "exclusiveMaximum" => 23,
        "multipleOf" => 24,
        "not" => 25,
        "allOf" => 26,
        "anyOf" => 27,
        "oneOf" => 28,
        "if" | "then" | "else" => 29,
        "unevaluatedProperties" | "unevaluatedItems" => 30,
        _ => 99,
    }
}

/// The next segment of `at` below `base` (the key or index a child subschema validated).
fn child_at(base: &str, at: &str) -> String {
    let rest = at.strip_prefix(base).unwrap_or("");
    let next = rest
        .strip_prefix('/')
        .map_or("", |r| r.split('/').next().unwrap_or(""));
    format!("{base}/{next}")
}

/// A subschema below another: the keyword's rank and the key that orders it among its
/// siblings, how many path segments lead to it, and the value it validates.
#[derive(PartialEq)]
struct Child {
    rank: u8,
    key: String,
    depth: usize,
    at: String,
}

/// What a subschema reached by `depth` segments of the leaves' paths, validating the value at
/// `at`, reports: its one error, or a group of them.
fn scope(leaves: &[&Leaf], depth: usize, at: &str) -> Node {
    // (rank, order key, node) for each error of this subschema.
    let mut found: Vec<(u8, String, Node)> = Vec::new();
    let mut missing: Vec<String> = Vec::new();
    // Child subschemas, each with the leaves that arose in it.
    let mut children: Vec<(Child, Vec<&Leaf>)> = Vec::new();
    let mut combinators: std::collections::BTreeMap<(u8, String), Vec<(usize, &Leaf)>> =
        Default::default();
    for &leaf in leaves {
        let rest = &leaf.path[depth.min(leaf.path.len())..];
        let Some(keyword) = rest.first() else {
            continue;
        };
        let rank = keyword_rank(keyword);
        let mut child = |skip: usize, at: String, key: String| {
            let id = Child {
                rank,
                key,
                depth: depth + skip,
                at,
            };
            match children.iter_mut().find(|(k, _)| *k == id) {
                Some((_, list)) => list.push(leaf),
                None => children.push((id, vec![leaf])),
            }
        };
        match (keyword.as_str(), rest.len()) {
            ("properties" | "patternProperties", n) if n > 2 => {
                let next = child_at(at, &leaf.at);
                child(2, next.clone(), format!("{next}\0{}", rest[0]));
            }
            ("additionalProperties", n) if n > 1 => {
                let next = child_at(at, &leaf.at);
                child(1, next.clone(), format!("{next}\0~"));
            }
            ("items" | "prefixItems", n) if n > 2 && rest[1].parse::<usize>().is_ok() => {
                let next = child_at(at, &leaf.at);
                child(2, next.clone(), next);
            }
            ("items" | "additionalItems" | "contains", n) if n > 1 => {
                let next = child_at(at, &leaf.at);
                child(1, next.clone(), next);
            }
            ("$ref" | "$dynamicRef" | "$recursiveRef" | "then" | "else", n) if n > 1 => {
                child(1, at.to_string(), keyword.clone());
            }
            ("dependentSchemas" | "dependencies", n) if n > 2 => {
                child(2, at.to_string(), rest[1].clone());
            }
            ("allOf", n) if n > 2 => {
                let index = rest[1].parse().unwrap_or(0);
                combinators
                    .entry((rank, keyword.clone()))
                    .or_default()
                    .push((index, leaf));
            }
            _ => match &leaf.what {
                What::Missing(property) => missing.push(property.clone()),
                What::Message(m) => {
                    let m = if keyword == "not" {
                        "'not' failed".to_string()
                    } else {
                        m.clone()
                    };
                    found.push((rank, leaf.at.clone(), Node::new(&leaf.at, m, Vec::new())));
                }
                What::OneOfMany(a, b) => found.push((
                    rank,
                    String::new(),
                    Node::new(
                        &leaf.at,
                        format!("'oneOf' failed, subschemas {a}, {b} matched"),
                        Vec::new(),
                    ),
                )),
                What::AnyOf(branches) | What::OneOfNone(branches) => {
                    let causes = branches
                        .iter()
                        .filter(|b| !b.is_empty())
                        .map(|branch| {
                            let branch: Vec<&Leaf> = branch.iter().collect();
                            scope(&branch, depth + 2, at)
                        })
                        .collect();
                    let message = if matches!(leaf.what, What::AnyOf(_)) {
                        "'anyOf' failed"
                    } else {
                        "'oneOf' failed, none matched"
                    };
                    found.push((rank, String::new(), Node::new(at, message, causes)));
                }
            },
        }
    }
    if !missing.is_empty() {
        let message = if missing.len() == 1 {
            format!("missing property {}", missing[0])
        } else {
            format!("missing properties {}", missing.join(", "))
        };
        found.push((
            keyword_rank("required"),
            String::new(),
            Node::new(at, message, Vec::new()),
        ));
    }
    for (child, list) in children {
        found.push((child.rank, child.key, scope(&list, child.depth, &child.at)));
    }
    for ((rank, keyword), mut subschemas) in combinators {
        subschemas.sort_by_key(|(i, _)| *i);
        let mut causes = Vec::new();
        let mut i = 0;
        while i < subschemas.len() {
            let index = subschemas[i].0;
            let group: Vec<&Leaf> = subschemas[i..]
                .iter()
                .take_while(|(j, _)| *j == index)
                .map(|(_, l)| *l)
                .collect();
            i += group.len();
            causes.push(scope(&group, depth + 2, at));
        }
        found.push((
            rank,
            String::new(),
            Node::new(at, format!("'{keyword}' failed"), causes),
        ));
    }
    // `type`, `const`, `enum` and `format` end the subschema's checks: nothing else is reported.
    if let Some(first) = found.iter().position(|(rank, ..)| *rank == 0) {
        let (_, _, node) = found.swap_remove(first);
        return node;
    }
    found.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut nodes: Vec<Node> = found.into_iter().map(|(_, _, n)| n).collect();
    if nodes.len() == 1 {
        return nodes.remove(0);
    }
    Node {
        at: at.to_string(),
        message: "validation failed".into(),
        causes: nodes,
        grouped: true,
    }
}
