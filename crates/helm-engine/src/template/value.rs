//! The values a template works on, typed the way Helm's Go engine types them.
//!
//! Helm reads values files through JSON, so every number from `values.yaml` or `--set-json` is a
//! Go `float64` (`1000000` prints as `1e+06`), while template literals and `len` are `int` and
//! Sprig's arithmetic returns `int64`. The three are kept apart because printing, `typeOf`, `eq`
//! and `printf` tell them apart. Helm's built-in objects (`.Files`, `.Capabilities`) have methods,
//! which [`Object`] models.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::rc::Rc;

/// A Go value as a template sees it.
#[derive(Clone)]
pub enum Value {
    /// `nil`, and a missing map key (printed as `<no value>`, which Helm then removes).
    Nil,
    Bool(bool),
    /// Go `int`: template literals, `len`, `atoi`, `int`.
    Int(i64),
    /// Go `int64`: Sprig's arithmetic and `int64`.
    Int64(i64),
    /// Go `float64`: every number read from values, `float64`, Sprig's `*f` math.
    Float(f64),
    Str(Rc<str>),
    /// Go `[]byte` (`.Files.GetBytes`, `b64dec` keeps strings): printed as a list of numbers.
    Bytes(std::sync::Arc<[u8]>),
    List(Rc<Vec<Value>>),
    /// `map[string]interface{}`: Go prints and ranges over maps in key order, as a `BTreeMap`
    /// does. Shared and mutable, as Go's maps are references: Sprig's `set`, `unset` and
    /// `merge` change the map every holder sees (`$_ := set .Values.x "k" 1`).
    Map(MapRef),
    /// One of Helm's objects with methods.
    Object(Rc<dyn Object>),
}

/// A Helm object whose fields and methods a template can use (`.Files.Get "x"`,
/// `.Capabilities.APIVersions.Has "apps/v1"`).
pub trait Object: std::any::Any {
    /// The Go type name, for errors and `typeOf`.
    fn type_name(&self) -> &str;
    /// The Go kind, for `kindOf`: most objects are pointers to structs, a few structs.
    fn kind(&self) -> &'static str {
        "ptr"
    }
    /// A field (`.Capabilities.KubeVersion`); `None` when there is no such field.
    fn field(&self, _name: &str) -> Option<Value> {
        None
    }
    /// Calls a method; `None` when there is no such method.
    fn call(&self, _name: &str, _args: &[Value]) -> Option<Result<Value, String>> {
        None
    }
    /// How `{{ . }}` prints it (Go's `String()` method, or the struct's fields).
    fn display(&self) -> String;
    /// How a function's `%v` prints it: the struct's value, whose `String()` method (on the
    /// pointer) Go then does not see.
    fn display_value(&self) -> String {
        self.display()
    }
    /// The entries `range` walks (`.Files.Glob` is a Go map).
    fn entries(&self) -> Option<Vec<(Value, Value)>> {
        None
    }
    /// `index` by a key, for an object that is a Go map (`None`: it cannot be indexed).
    fn index(&self, _key: &str) -> Option<Value> {
        None
    }
    /// The value `toYaml`/`toJson` see (Go marshals the struct's fields).
    fn to_data(&self) -> Value {
        Value::Str(self.display().into())
    }
}

/// A Go map: shared, changed in place.
pub type MapRef = Rc<RefCell<BTreeMap<String, Value>>>;

impl std::fmt::Debug for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_go_syntax())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Str(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::Str(s.into())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

impl Value {
    pub fn map(m: BTreeMap<String, Value>) -> Value {
        Value::Map(Rc::new(RefCell::new(m)))
    }
    pub fn list(l: Vec<Value>) -> Value {
        Value::List(Rc::new(l))
    }

    /// Go's truth: false, 0, nil, and empty strings, lists and maps are false.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) | Value::Int64(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Bytes(b) => !b.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.borrow().is_empty(),
            // An object that is a Go map underneath (`.Files`, what `.Files.Glob` returns) is
            // false when empty, as Go's `truth` reads a map; the others are structs: true.
            Value::Object(o) => o.entries().is_none_or(|e| !e.is_empty()),
        }
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The Go type name (`typeOf`).
    pub fn type_name(&self) -> String {
        match self {
            Value::Nil => "<nil>".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Int64(_) => "int64".into(),
            Value::Float(_) => "float64".into(),
            Value::Str(_) => "string".into(),
            Value::Bytes(_) => "[]uint8".into(),
            Value::List(_) => "[]interface {}".into(),
            Value::Map(_) => "map[string]interface {}".into(),
            Value::Object(o) => o.type_name().into(),
        }
    }

    /// The Go kind name (`kindOf`).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "invalid",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Int64(_) => "int64",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::Bytes(_) | Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Object(o) => o.kind(),
        }
    }

    /// How `{{ . }}` and `print` write the value (Go's `fmt.Print`); `nil` at the top is
    /// `<no value>`, inside a list or map `<nil>`.
    pub fn to_print(&self) -> String {
        match self {
            Value::Nil => "<no value>".into(),
            Value::Str(s) => s.to_string(),
            _ => {
                let mut out = String::new();
                self.write_go(&mut out);
                out
            }
        }
    }

    /// Go's `%v`.
    pub fn write_go(&self, out: &mut String) {
        match self {
            Value::Nil => out.push_str("<nil>"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) | Value::Int64(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => out.push_str(&format_float_g(*f)),
            Value::Str(s) => out.push_str(s),
            Value::Bytes(b) => {
                out.push('[');
                for (i, byte) in b.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    let _ = write!(out, "{byte}");
                }
                out.push(']');
            }
            Value::List(l) => {
                out.push('[');
                for (i, v) in l.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    v.write_go(out);
                }
                out.push(']');
            }
            Value::Map(m) => {
                out.push_str("map[");
                for (i, (k, v)) in m.borrow().iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(k);
                    out.push(':');
                    v.write_go(out);
                }
                out.push(']');
            }
            Value::Object(o) => out.push_str(&o.display_value()),
        }
    }

    /// A debugging form (Go's `%#v` is not reproduced).
    fn to_go_syntax(&self) -> String {
        let mut out = String::new();
        self.write_go(&mut out);
        out
    }

    /// An independent copy: maps are copied all the way down (`deepCopy`).
    pub fn deep_copy(&self) -> Value {
        match self {
            Value::Map(m) => Value::map(
                m.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.deep_copy()))
                    .collect(),
            ),
            Value::List(l) => Value::list(l.iter().map(Value::deep_copy).collect()),
            other => other.clone(),
        }
    }

    /// Whether `target` is this map or is held anywhere inside this value: a map must not be
    /// put inside itself (printing it would never end).
    pub fn holds(&self, target: &MapRef) -> bool {
        match self {
            Value::Map(m) => Rc::ptr_eq(m, target) || m.borrow().values().any(|v| v.holds(target)),
            Value::List(l) => l.iter().any(|v| v.holds(target)),
            _ => false,
        }
    }

    /// The value as plain data (objects replaced by what Go would marshal).
    pub fn to_data(&self) -> Value {
        match self {
            Value::Object(o) => o.to_data(),
            Value::List(l) if l.iter().any(|v| matches!(v, Value::Object(_))) => {
                Value::list(l.iter().map(Value::to_data).collect())
            }
            other => other.clone(),
        }
    }

    /// Converts values (see [`crate::values`]): a JSON float is a Go `float64` (what YAML
    /// and JSON give), a JSON integer an `int64` (what `--set` gives).
    pub fn from_json(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Nil,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) if !n.is_f64() => Value::Int64(i),
                _ => Value::Float(n.as_f64().unwrap_or(0.0)),
            },
            serde_json::Value::String(s) => Value::Str(s.as_str().into()),
            serde_json::Value::Array(a) => Value::list(a.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(m) => Value::from_json_map(m),
        }
    }

    /// A JSON object as a template map (its keys already in order).
    pub fn from_json_map(m: &serde_json::Map<String, serde_json::Value>) -> Value {
        Value::map(
            m.iter()
                .map(|(k, v)| (k.clone(), Value::from_json(v)))
                .collect(),
        )
    }

    /// Converts to JSON for `toJson`/`toYaml` (Go's `json.Marshal`).
    pub fn to_json(&self) -> serde_json::Value {
        match self {
            Value::Nil => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Int(i) | Value::Int64(i) => serde_json::Value::from(*i),
            Value::Float(f) => float_to_json(*f),
            Value::Str(s) => serde_json::Value::String(s.to_string()),
            Value::Bytes(b) => {
                use base64::Engine;
                serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            Value::List(l) => serde_json::Value::Array(l.iter().map(Value::to_json).collect()),
            Value::Map(m) => serde_json::Value::Object(
                m.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
            Value::Object(o) => o.to_data().to_json(),
        }
    }
}

/// A value written as JSON as [`Value::to_json`] reads it, without building that tree first
/// (`toJson` runs in loops over values).
pub struct AsJson<'v>(pub &'v Value);

impl serde::Serialize for AsJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            Value::Nil => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) | Value::Int64(i) => s.serialize_i64(*i),
            Value::Float(f) => float_to_json(*f).serialize(s),
            Value::Str(text) => s.serialize_str(text),
            Value::Bytes(_) | Value::Object(_) => self.0.to_json().serialize(s),
            Value::List(l) => {
                let mut seq = s.serialize_seq(Some(l.len()))?;
                for v in l.iter() {
                    seq.serialize_element(&AsJson(v))?;
                }
                seq.end()
            }
            Value::Map(m) => {
                let m = m.borrow();
                let mut map = s.serialize_map(Some(m.len()))?;
                for (k, v) in m.iter() {
                    map.serialize_entry(k, &AsJson(v))?;
                }
                map.end()
            }
        }
    }
}

/// A float as JSON: whole numbers as integers (Go's encoder writes `1000000`, not `1e+06`).
pub fn float_to_json(f: f64) -> serde_json::Value {
    if f.fract() == 0.0 && f.abs() < 1e21 {
        if f.abs() < 9.007_199_254_740_992e15 {
            return serde_json::Value::from(f as i64);
        }
        // Beyond 2^53 the JSON text is Go's digits; serde_json keeps them as written.
        if let Ok(n) = format!("{f:.0}").parse::<serde_json::Number>() {
            return serde_json::Value::Number(n);
        }
    }
    serde_json::Number::from_f64(f).map_or(serde_json::Value::Null, serde_json::Value::Number)
}

pub use yaml_value::format_float_g;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_prints_them() {
        for (f, want) in [
            (1.0, "1"),
            (1.5, "1.5"),
            (1_000_000.0, "1e+06"),
            (100_000.0, "100000"),
            (123_456.0, "123456"),
            (999_999.0, "999999"),
            (-999_999.0, "-999999"),
            (-3.0, "-3"),
            (-1_000_000.0, "-1e+06"),
            (1_234_567.0, "1.234567e+06"),
            (12_345_678_901.0, "1.2345678901e+10"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (0.1, "0.1"),
        ] {
            assert_eq!(format_float_g(f), want, "{f}");
        }
    }
}
