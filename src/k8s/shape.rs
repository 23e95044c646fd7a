//! Shape checks for the fields winguard reads: a wrong type (`replicas: "three"`,
//! `containers: {}`, `nodeSelector: []`) is an input error at its line, not a silent misreading.
//!
//! Kept to the fields the model and rules read, so valid manifests the API server accepts (with
//! numbers for quantities, for example) are never refused here.

use crate::value::Doc;

use crate::k8s::pod_template_paths;
use crate::value::escape_pointer_token;

#[derive(Clone, Copy)]
enum Shape {
    Str,
    Int,
    Bool,
    Map,
    /// A map whose values are strings (labels, annotations, nodeSelector).
    StrMap,
    /// A list of maps.
    MapList,
    /// A list of strings (command, args).
    StrList,
}

impl Shape {
    fn check(self, v: &Doc<'_>) -> Result<(), String> {
        let ok = match self {
            Shape::Str => v.is_string(),
            Shape::Int => v.as_i64().is_some() || v.as_u64().is_some(),
            Shape::Bool => v.is_boolean(),
            Shape::Map => v.is_object(),
            // A null value is the empty string to the API server (Go's JSON decoding of a
            // `map[string]string`); any other non-string is refused there.
            Shape::StrMap => match v.as_object() {
                Some(m) => {
                    if let Some((k, bad)) = m.iter().find(|(_, x)| !x.is_string() && !x.is_null()) {
                        return Err(format!(
                            "`{k}` must be a string, found {} (quote it)",
                            describe(bad)
                        ));
                    }
                    true
                }
                None => false,
            },
            Shape::MapList => match v.as_array() {
                Some(a) => {
                    if let Some((i, bad)) = a.iter().enumerate().find(|(_, x)| !x.is_object()) {
                        return Err(format!("item {i} must be a map, found {}", describe(bad)));
                    }
                    true
                }
                None => false,
            },
            Shape::StrList => v.is_array(),
        };
        if ok {
            Ok(())
        } else {
            Err(format!("expected {}, found {}", self.name(), describe(v)))
        }
    }

    fn name(self) -> &'static str {
        match self {
            Shape::Str => "a string",
            Shape::Int => "an integer",
            Shape::Bool => "true or false",
            Shape::Map | Shape::StrMap => "a map",
            Shape::MapList | Shape::StrList => "a list",
        }
    }
}

fn describe(v: &Doc<'_>) -> String {
    match v {
        Doc::Null => "null".into(),
        Doc::Bool(b) => format!("the boolean {b}"),
        Doc::Number(n) => format!("the number {n}"),
        Doc::String(s) => format!("the string \"{}\"", s.chars().take(40).collect::<String>()),
        Doc::Array(_) => "a list".into(),
        Doc::Object(_) => "a map".into(),
    }
}

const METADATA: &[(&str, Shape)] = &[
    ("name", Shape::Str),
    ("namespace", Shape::Str),
    ("labels", Shape::StrMap),
    ("annotations", Shape::StrMap),
];

const POD_SPEC: &[(&str, Shape)] = &[
    ("containers", Shape::MapList),
    ("initContainers", Shape::MapList),
    ("ephemeralContainers", Shape::MapList),
    ("nodeSelector", Shape::StrMap),
    ("tolerations", Shape::MapList),
    ("affinity", Shape::Map),
    ("volumes", Shape::MapList),
    ("securityContext", Shape::Map),
    ("hostNetwork", Shape::Bool),
    ("os", Shape::Map),
    ("runtimeClassName", Shape::Str),
    ("dnsPolicy", Shape::Str),
];

const CONTAINER: &[(&str, Shape)] = &[
    ("name", Shape::Str),
    ("image", Shape::Str),
    ("command", Shape::StrList),
    ("args", Shape::StrList),
    ("volumeMounts", Shape::MapList),
    ("volumeDevices", Shape::MapList),
    ("securityContext", Shape::Map),
    ("resources", Shape::Map),
];

/// An error at a JSON pointer.
pub struct ShapeError {
    pub pointer: String,
    pub message: String,
}

/// Checks `value`'s fields against `table`; `base` makes the value's pointer, only for an error
/// (almost every container of every object has none, so a pointer built for each is wasted).
fn check_fields(
    value: &Doc<'_>,
    base: impl Fn() -> String,
    table: &[(&str, Shape)],
    errors: &mut Vec<ShapeError>,
) {
    let Some(map) = value.as_object() else { return };
    for (field, shape) in table {
        if let Some(v) = map.get(field).filter(|v| !v.is_null())
            && let Err(message) = shape.check(v)
        {
            let pointer = format!("{}/{}", base(), escape_pointer_token(field));
            errors.push(ShapeError {
                message: format!("{}: {message}", pointer_to_dotted(&pointer)),
                pointer,
            });
        }
    }
}

fn pointer_to_dotted(p: &str) -> String {
    p.trim_start_matches('/').replace('/', ".")
}

/// Checks the fields winguard reads; returns every problem found.
pub fn check(object: &Doc<'_>) -> Vec<ShapeError> {
    let mut errors = Vec::new();
    if let Some(meta) = object.get("metadata") {
        if !meta.is_object() && !meta.is_null() {
            errors.push(ShapeError {
                pointer: "/metadata".into(),
                message: format!("metadata: expected a map, found {}", describe(meta)),
            });
        }
        check_fields(meta, || "/metadata".to_string(), METADATA, &mut errors);
    }
    let kind = object.get("kind").and_then(Doc::as_str).unwrap_or("");
    let Some((spec_path, meta_path)) = pod_template_paths(kind) else {
        return errors;
    };
    if let Some(replicas) = object.pointer("/spec/replicas").filter(|v| !v.is_null())
        && let Err(m) = Shape::Int.check(replicas)
    {
        errors.push(ShapeError {
            pointer: "/spec/replicas".into(),
            message: format!("spec.replicas: {m}"),
        });
    }
    // Every step down to the pod spec must be a map (walked once, from the top).
    let mut spec = Some(object);
    let mut depth = 0;
    for token in spec_path.split('/').skip(1) {
        depth += token.len() + 1;
        spec = match spec.and_then(|v| v.get(token)) {
            Some(v) if v.is_object() => Some(v),
            Some(v) if !v.is_null() => {
                let path = &spec_path[..depth];
                errors.push(ShapeError {
                    message: format!(
                        "{}: expected a map, found {}",
                        pointer_to_dotted(path),
                        describe(v)
                    ),
                    pointer: path.to_string(),
                });
                return errors;
            }
            _ => None,
        };
    }
    if meta_path != "/metadata"
        && let Some(meta) = object.pointer(meta_path)
    {
        check_fields(meta, || meta_path.to_string(), METADATA, &mut errors);
    }
    let Some(spec) = spec else {
        return errors;
    };
    let before = errors.len();
    check_fields(spec, || spec_path.to_string(), POD_SPEC, &mut errors);
    if errors.len() > before {
        return errors;
    }
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        for (i, c) in spec
            .get(list)
            .and_then(Doc::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            check_fields(
                c,
                || format!("{spec_path}/{list}/{i}"),
                CONTAINER,
                &mut errors,
            );
        }
    }
    errors
}
