//! The stored form of compiled expressions: how a [`Program`](super::Program) is written to the
//! cache of the built-in rules and read back without parsing or checking it again.
//!
//! A program points into the registry it was compiled against: a call's overloads are
//! functions (`fn` pointers), and names are the registry's `&'static str`s. The stored form
//! names an overload by its function's name and its index among that function's overloads, and
//! reading it back resolves them in the registry given to [`with_registry`] (a scoped
//! thread-local, as serde's derived code has no other way to reach it). The reader must use a
//! registry built by the same binary: the cache's key says which build wrote it.

use serde::de::{self, Deserializer};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

use super::Registry;
use super::compile::{Candidate, TYPE_NAMES};
use crate::value::{Map, Value};

scoped_tls::scoped_thread_local!(static REGISTRY: Registry);

/// Runs `read` (which deserializes programs) with `registry` as the one their functions are
/// resolved in.
pub fn with_registry<R>(registry: &Registry, read: impl FnOnce() -> R) -> R {
    REGISTRY.set(registry, read)
}

fn registry<E: de::Error, R>(f: impl FnOnce(&Registry) -> Result<R, E>) -> Result<R, E> {
    if !REGISTRY.is_set() {
        return Err(E::custom(
            "compiled expressions are read with `with_registry`",
        ));
    }
    REGISTRY.with(f)
}

fn function<E: de::Error>(name: &str) -> Result<&'static str, E> {
    registry(|r| {
        r.function_name(name)
            .ok_or_else(|| E::custom(format!("no function `{name}` in the registry")))
    })
}

/// A name the registry or the compiler holds, written as its text.
pub(in crate::expr) fn serialize_name<S: Serializer>(
    name: &&'static str,
    s: S,
) -> Result<S::Ok, S::Error> {
    s.serialize_str(name)
}

/// A function's name, as the registry's own `&'static str`.
pub(super) mod function_name {
    use super::*;

    pub(in crate::expr) use super::serialize_name as serialize;

    pub(in crate::expr) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<&'static str, D::Error> {
        function(&String::deserialize(d)?)
    }
}

/// A program's calls: each function's name and its first literal argument.
pub(super) mod function_names {
    use super::*;

    type Calls = Vec<(&'static str, Option<String>)>;

    pub(in crate::expr) fn serialize<S: Serializer>(
        calls: &Calls,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(calls)
    }

    pub(in crate::expr) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Calls, D::Error> {
        Vec::<(String, Option<String>)>::deserialize(d)?
            .into_iter()
            .map(|(name, literal)| Ok((function(&name)?, literal)))
            .collect()
    }
}

/// A type's name used as a value (`type(x) == string`), one of the names the compiler knows.
pub(super) mod type_name {
    use super::*;

    pub(in crate::expr) use super::serialize_name as serialize;

    pub(in crate::expr) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<&'static str, D::Error> {
        let name = String::deserialize(d)?;
        TYPE_NAMES
            .iter()
            .copied()
            .find(|t| *t == name)
            .ok_or_else(|| de::Error::custom(format!("`{name}` is not a type name")))
    }
}

/// A value as the stored form writes it. [`Value`] reads itself as JSON does, by asking the
/// format what comes next, which a compact binary format cannot answer; this says it.
#[derive(Serialize, Deserialize)]
enum StoredValue {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(String),
    Array(Vec<StoredValue>),
    Object(Vec<(String, StoredValue)>),
}

impl From<&Value> for StoredValue {
    fn from(v: &Value) -> Self {
        match v {
            Value::Null => StoredValue::Null,
            Value::Bool(b) => StoredValue::Bool(*b),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => StoredValue::Int(i),
                (_, Some(u), _) => StoredValue::Uint(u),
                (_, _, f) => StoredValue::Double(f.unwrap_or_default()),
            },
            Value::String(s) => StoredValue::String(s.to_string()),
            Value::Array(a) => StoredValue::Array(a.iter().map(StoredValue::from).collect()),
            Value::Object(m) => StoredValue::Object(
                m.iter()
                    .map(|(k, v)| (k.to_string(), StoredValue::from(v)))
                    .collect(),
            ),
        }
    }
}

impl From<StoredValue> for Value {
    fn from(v: StoredValue) -> Self {
        match v {
            StoredValue::Null => Value::Null,
            StoredValue::Bool(b) => Value::Bool(b),
            StoredValue::Int(i) => Value::from(i),
            StoredValue::Uint(u) => Value::from(u),
            StoredValue::Double(f) => Value::from(f),
            StoredValue::String(s) => Value::from(s),
            StoredValue::Array(a) => Value::Array(a.into_iter().map(Value::from).collect()),
            StoredValue::Object(entries) => Value::Object(Map::from_entries(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.into(), Value::from(v)))
                    .collect(),
            )),
        }
    }
}

/// A [`Value`] in the stored form.
pub mod value {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Value, s: S) -> Result<S::Ok, S::Error> {
        StoredValue::from(v).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        Ok(Value::from(StoredValue::deserialize(d)?))
    }
}

/// A candidate overload as stored: the overload named, its parameters as the call bound them,
/// and the literal it prepares.
#[derive(Serialize, Deserialize)]
struct StoredCandidate {
    function: String,
    index: u16,
    params: Vec<super::Type>,
    literal: Option<String>,
}

impl Serialize for Candidate {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        StoredCandidate {
            function: self.overload.0.to_string(),
            index: self.overload.1,
            params: self.params.clone(),
            literal: self.literal.as_ref().map(|(text, _)| text.clone()),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for Candidate {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let stored = StoredCandidate::deserialize(d)?;
        registry(|r| {
            let overload = r
                .overloads(&stored.function)
                .get(stored.index as usize)
                .ok_or_else(|| {
                    de::Error::custom(format!(
                        "no overload {} of `{}` in the registry",
                        stored.index, stored.function
                    ))
                })?;
            let literal = match (stored.literal, overload.prepare) {
                (Some(text), Some((_, prepare))) => Some((text, prepare)),
                (None, _) => None,
                (Some(_), None) => {
                    return Err(de::Error::custom(format!(
                        "`{}` prepares no literal",
                        overload.signature
                    )));
                }
            };
            Ok(Candidate {
                params: stored.params,
                imp: overload.imp,
                overload: (overload.name, stored.index),
                literal,
                prepared: OnceLock::new(),
            })
        })
    }
}
