//! Kubernetes documents as values: the JSON value a manifest loader builds from YAML ([`yaml`],
//! with [`block`] for plain block documents), a webhook from a review's JSON ([`parse`]), and a
//! rule engine reads with JSON pointers and [`jsonpath`]. The YAML readers keep each value's
//! source position and read both dialects Kubernetes tools use: YAML 1.2 as `sigs.k8s.io/yaml`'s
//! go-yaml v3 does, and YAML 1.1 as Helm's go-yaml v2 does.
//!
//! Why not `serde_json::Value`: it builds a B-tree per map, node by node through serde's
//! visitors, and every admission review's object would be read into it and dropped again
//! (BENCHMARKS.md, "Which document model"). Nor `sonic_rs::Value`, which parses fast into an arena
//! but keeps maps in input order, turns a changed map into a hash map, and costs more than
//! `serde_json` to build value by value, as the YAML loader does. So this is `serde_json::Value`'s
//! shape and API with its maps replaced: a map is a vector of entries sorted by key (the same order
//! as `serde_json`'s B-tree, so every walk over a map visits keys as before; a lookup compares a
//! few keys by length), built whole when the map ends. Strings are [`Str`]s, inline up to 24
//! bytes, so most keys and scalars of an object need no allocation of their own.

pub mod block;
pub mod document;
pub mod jsonpath;
pub mod parse;
pub mod text;
pub mod yaml;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};

/// A JSON number: `serde_json`'s, which keeps integers apart from floats.
pub use serde_json::Number;

/// A string of the value tree: inline up to 24 bytes, so most keys and scalars of an object
/// cost no allocation of their own.
pub type Str = compact_str::CompactString;

/// A JSON value.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(Str),
    Array(Vec<Value>),
    Object(Map),
}

/// `null`, for lookups that find nothing.
pub static NULL: Value = Value::Null;

/// A JSON object: entries sorted by key, each key once.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Map {
    entries: Vec<(Str, Value)>,
}

/// The order of map keys (byte order, as `str`'s), deciding on the first bytes where most keys
/// of an object differ before comparing the rest: every map read is sorted, and this settles most
/// comparisons without a call to compare whole keys.
#[inline]
pub(crate) fn key_order(a: &str, b: &str) -> Ordering {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    match (a.first(), b.first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}

impl Map {
    pub fn new() -> Map {
        Map::default()
    }

    /// A map from entries in any order; of repeated keys the last wins (as in `serde_json`).
    pub fn from_entries(mut entries: Vec<(Str, Value)>) -> Map {
        if !entries
            .windows(2)
            .all(|w| key_order(&w[0].0, &w[1].0) == Ordering::Less)
        {
            // Stable, so repeated keys keep their order and the last one can be kept.
            entries.sort_by(|a, b| key_order(&a.0, &b.0));
            // In place: of a run of one key, each later entry moves into the kept one's place.
            let written = entries.len();
            entries.dedup_by(|later, kept| {
                let repeated = later.0 == kept.0;
                if repeated {
                    std::mem::swap(later, kept);
                }
                repeated
            });
            if entries.len() != written {
                entries.shrink_to_fit();
            }
        }
        Map { entries }
    }

    /// A map from entries already sorted by key, each key once (a reader that sorted them
    /// itself): not checked again.
    pub(crate) fn from_sorted_entries(entries: Vec<(Str, Value)>) -> Map {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        Map { entries }
    }

    /// Where `key` is (`Ok`), or where it would go (`Err`).
    fn find(&self, key: &str) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.as_str().cmp(key))
    }

    /// Where `key` is, if it is there.
    fn position(&self, key: &str) -> Option<usize> {
        // Most maps of a Kubernetes object have a handful of keys: comparing lengths first rules
        // most of them out without a binary search's full comparisons.
        if self.entries.len() <= 32 {
            // Length and first byte first: most keys differ there, so `memcmp` is called only for
            // a likely match, not for every key of the same length.
            // Each key's bytes are found once (an inline or heap string: a branch each time).
            let key = key.as_bytes();
            self.entries.iter().position(|(k, _)| {
                let k = k.as_bytes();
                k.len() == key.len() && k.first() == key.first() && k == key
            })
        } else {
            self.find(key).ok()
        }
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// The stored key and its value (the key borrowed from the map, not from the caller).
    pub fn get_key_value(&self, key: &str) -> Option<(&str, &Value)> {
        self.position(key).map(|i| {
            let (k, v) = &self.entries[i];
            (k.as_str(), v)
        })
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.position(key).map(|i| &mut self.entries[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub fn insert(&mut self, key: impl Into<Str>, value: Value) -> Option<Value> {
        let key = key.into();
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Value> {
        self.position(key).map(|i| self.entries.remove(i).1)
    }

    /// The entry for `key`, to read or fill in.
    pub fn entry(&mut self, key: impl Into<Str>) -> Entry<'_> {
        let key = key.into();
        let slot = self.find(&key);
        Entry {
            map: self,
            key,
            slot,
        }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Str, &Value)> + ExactSizeIterator {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The entries as a slice, in key order.
    pub fn entries(&self) -> &[(Str, Value)] {
        &self.entries
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Str> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Value> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }
}

/// A map's entry for one key (see [`Map::entry`]).
pub struct Entry<'m> {
    map: &'m mut Map,
    key: Str,
    slot: Result<usize, usize>,
}

impl<'m> Entry<'m> {
    pub fn or_insert(self, value: Value) -> &'m mut Value {
        self.or_insert_with(|| value)
    }

    pub fn or_insert_with(self, make: impl FnOnce() -> Value) -> &'m mut Value {
        let i = match self.slot {
            Ok(i) => i,
            Err(i) => {
                self.map.entries.insert(i, (self.key, make()));
                i
            }
        };
        &mut self.map.entries[i].1
    }
}

impl<K: Into<Str>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Map {
        Map::from_entries(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl IntoIterator for Map {
    type Item = (Str, Value);
    type IntoIter = std::vec::IntoIter<(Str, Value)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'m> IntoIterator for &'m Map {
    type Item = (&'m Str, &'m Value);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'m, (Str, Value)>,
        fn(&'m (Str, Value)) -> (&'m Str, &'m Value),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

impl std::ops::Index<&str> for Map {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

/// What can index a value: a key of a map or a position in a list (as in `serde_json`).
pub trait Index {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value>;
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value>;
}

impl Index for str {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_object()?.get(self)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_object_mut()?.get_mut(self)
    }
}

impl Index for String {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        self.as_str().index_into_mut(v)
    }
}

impl Index for usize {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        v.as_array()?.get(*self)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        v.as_array_mut()?.get_mut(*self)
    }
}

impl<T: Index + ?Sized> Index for &T {
    fn index_into<'v>(&self, v: &'v Value) -> Option<&'v Value> {
        (**self).index_into(v)
    }
    fn index_into_mut<'v>(&self, v: &'v mut Value) -> Option<&'v mut Value> {
        (**self).index_into_mut(v)
    }
}

impl<I: Index> std::ops::Index<I> for Value {
    type Output = Value;
    fn index(&self, i: I) -> &Value {
        i.index_into(self).unwrap_or(&NULL)
    }
}

impl Value {
    /// A map of these entries (in any order): for maps built in code, as `json!` builds them
    /// from text but without going through `serde_json`.
    pub fn object<const N: usize>(entries: [(&str, Value); N]) -> Value {
        Value::Object(Map::from_entries(
            entries.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        ))
    }

    pub fn get<I: Index>(&self, i: I) -> Option<&Value> {
        i.index_into(self)
    }

    pub fn get_mut<I: Index>(&mut self, i: I) -> Option<&mut Value> {
        i.index_into_mut(self)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Value::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Value::Array(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    /// The value, leaving `null` in its place.
    pub fn take(&mut self) -> Value {
        std::mem::take(self)
    }

    /// RFC 6901 lookup (`""` is the whole value), as `serde_json::Value::pointer`.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        pointer_tokens(pointer)?.try_fold(self, |v, token| match v {
            Value::Object(m) => m.get(&token),
            Value::Array(a) => a.get(list_index(&token)?),
            _ => None,
        })
    }

    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Value> {
        pointer_tokens(pointer)?.try_fold(self, |v, token| match v {
            Value::Object(m) => m.get_mut(&token),
            Value::Array(a) => a.get_mut(list_index(&token)?),
            _ => None,
        })
    }
}

/// The decoded reference tokens of an RFC 6901 pointer (none for `""`); `None` if it is not one.
///
/// One pass over the bytes finds each token's end and whether it needs unescaping: the
/// per-object checks look pointers up many times, the tokens are short, and a library search per
/// token would cost more than the lookups.
fn pointer_tokens(pointer: &str) -> Option<impl Iterator<Item = Cow<'_, str>>> {
    let mut rest = match pointer {
        "" => None,
        _ => Some(pointer.strip_prefix('/')?),
    };
    Some(std::iter::from_fn(move || {
        let tokens = rest?;
        let bytes = tokens.as_bytes();
        let mut end = 0;
        let mut escaped = false;
        while end < bytes.len() && bytes[end] != b'/' {
            escaped |= bytes[end] == b'~';
            end += 1;
        }
        let raw = &tokens[..end];
        rest = (end < bytes.len()).then(|| &tokens[end + 1..]);
        Some(if escaped {
            unescape_pointer_token(raw)
        } else {
            Cow::Borrowed(raw)
        })
    }))
}

/// RFC 6901 unescaping of one reference token (`~1` → `/`, `~0` → `~`).
pub fn unescape_pointer_token(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        token.replace("~1", "/").replace("~0", "~").into()
    } else {
        token.into()
    }
}

/// RFC 6901 escaping of one reference token (`kubernetes.io/os` → `kubernetes.io~1os`).
pub fn escape_pointer_token(token: &str) -> Cow<'_, str> {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1").into()
    } else {
        token.into()
    }
}

/// A reference token as a list index (RFC 6901): decimal digits, no leading zero.
pub fn list_index(token: &str) -> Option<usize> {
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    if !digits || token.len() > 1 && token.starts_with('0') {
        return None;
    }
    token.parse().ok()
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.into())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s.into())
    }
}

macro_rules! from_integer {
    ($($t:ty)*) => {$(
        impl From<$t> for Value {
            fn from(n: $t) -> Value {
                Value::Number(n.into())
            }
        }
    )*};
}
from_integer!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

impl From<f64> for Value {
    /// A finite float; NaN and infinities, which JSON cannot write, are `null` (as in `serde_json`).
    fn from(f: f64) -> Value {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

impl From<Vec<Value>> for Value {
    fn from(a: Vec<Value>) -> Value {
        Value::Array(a)
    }
}

/// A list of the items.
impl<T: Into<Value>> FromIterator<T> for Value {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Value {
        Value::Array(iter.into_iter().map(Into::into).collect())
    }
}

impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Value {
        o.map_or(Value::Null, Into::into)
    }
}

impl From<serde_json::Value> for Value {
    fn from(v: serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(b),
            serde_json::Value::Number(n) => Value::Number(n),
            serde_json::Value::String(s) => Value::String(s.into()),
            serde_json::Value::Array(a) => Value::Array(a.into_iter().map(Value::from).collect()),
            serde_json::Value::Object(m) => Value::Object(Map::from_entries(
                m.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
            )),
        }
    }
}

impl From<&Value> for serde_json::Value {
    fn from(v: &Value) -> serde_json::Value {
        match v {
            Value::Null => serde_json::Value::Null,
            Value::Bool(b) => serde_json::Value::Bool(*b),
            Value::Number(n) => serde_json::Value::Number(n.clone()),
            Value::String(s) => serde_json::Value::String(s.to_string()),
            Value::Array(a) => serde_json::Value::Array(a.iter().map(Into::into).collect()),
            Value::Object(m) => serde_json::Value::Object(
                m.iter().map(|(k, v)| (k.to_string(), v.into())).collect(),
            ),
        }
    }
}

impl PartialEq<str> for Value {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Value {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<bool> for Value {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Null => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Number(n) => n.serialize(s),
            Value::String(v) => s.serialize_str(v),
            Value::Array(a) => s.collect_seq(a),
            Value::Object(m) => m.serialize(s),
        }
    }
}

impl Serialize for Map {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut out = s.serialize_map(Some(self.len()))?;
        for (k, v) in self {
            out.serialize_entry(k.as_str(), v)?;
        }
        out.end()
    }
}

impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
        d.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(v.into())
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Value::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((k, v)) = map.next_entry::<Str, Value>()? {
            entries.push((k, v));
        }
        Ok(Value::Object(Map::from_entries(entries)))
    }
}

impl<'de> Deserialize<'de> for Map {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        match Value::deserialize(d)? {
            Value::Object(m) => Ok(m),
            _ => Err(serde::de::Error::custom("expected a map")),
        }
    }
}

/// General JSONPath queries (those [`jsonpath`] does not walk itself) run on this value type.
impl jsonpath_rust::query::queryable::Queryable for Value {
    fn get(&self, key: &str) -> Option<&Self> {
        self.get(key)
    }
    fn as_array(&self) -> Option<&Vec<Self>> {
        self.as_array()
    }
    fn as_object(&self) -> Option<Vec<(&str, &Self)>> {
        self.as_object()
            .map(|m| m.iter().map(|(k, v)| (k.as_str(), v)).collect())
    }
    fn as_str(&self) -> Option<&str> {
        self.as_str()
    }
    fn as_i64(&self) -> Option<i64> {
        self.as_i64()
    }
    fn as_f64(&self) -> Option<f64> {
        self.as_f64()
    }
    fn as_bool(&self) -> Option<bool> {
        self.as_bool()
    }
    fn null() -> Self {
        Value::Null
    }
}

impl fmt::Display for Value {
    /// Compact JSON, as `serde_json::Value` displays.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

/// `json!` for [`Value`]: `serde_json::json!`'s syntax, converted. For tests and values made
/// once (rule loading); hot paths build values directly.
#[macro_export]
macro_rules! json {
    ($($t:tt)+) => {
        $crate::Value::from($crate::__serde_json::json!($($t)+))
    };
}

#[doc(hidden)]
pub use serde_json as __serde_json;

/// The shortest decimal digits of `f` and its decimal exponent: `f = 0.d1d2d3… × 10^exp`.
fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` prints the shortest digits that read back as `f`, like Go's `-1` precision.
    shortest_digits_of(&format!("{:e}", f.abs()))
}

/// The digits and decimal point of Rust's `{:e}` form of a number.
fn shortest_digits_of(s: &str) -> (String, i32) {
    let (mantissa, exp) = s.split_once('e').unwrap_or((s, "0"));
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    (digits, exp + 1)
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which Go templates (`%v`) and cel-go's `string()` use
/// for a `float64`.
pub fn format_float_g(f: f64) -> String {
    format_g(f, shortest_digits)
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`: the shortest digits that read back as the same
/// `float32` (sigs.k8s.io/yaml writes a YAML float read into a string field so).
pub fn format_float_g32(f: f64) -> String {
    format_g(f64::from(f as f32), |f| {
        shortest_digits_of(&format!("{:e}", (f as f32).abs()))
    })
}

fn format_g(f: f64, shortest: impl Fn(f64) -> (String, i32)) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Whole numbers below the exponent threshold (most numbers in values: replicas, ports)
    // print as integers; no digit search needed.
    if f.fract() == 0.0 && f.abs() < 1e6 {
        return itoa::Buffer::new().format(f as i64).to_string();
    }
    let (digits, dp) = shortest(f);
    let exp = dp - 1;
    let sign = if f < 0.0 { "-" } else { "" };
    // The shortest form switches to an exponent below 1e-4 and from 1e+06 (strconv uses a
    // precision of 6 for the decision when printing the shortest digits).
    if !(-4..6).contains(&exp) {
        // %e with the shortest digits.
        let mut out = String::from(sign);
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        out.push_str(&format!("{:02}", exp.abs()));
        return out;
    }
    format!("{sign}{}", fixed_from_digits(&digits, dp))
}

/// Digits `0.d1d2… × 10^dp` written without an exponent.
fn fixed_from_digits(digits: &str, dp: i32) -> String {
    if dp <= 0 {
        format!("0.{}{}", "0".repeat((-dp) as usize), digits)
    } else if dp as usize >= digits.len() {
        format!("{}{}", digits, "0".repeat(dp as usize - digits.len()))
    } else {
        format!("{}.{}", &digits[..dp as usize], &digits[dp as usize..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_keep_keys_sorted_and_the_last_of_repeated_ones() {
        let m = Map::from_entries(vec![
            ("b".into(), Value::from(1)),
            ("a".into(), Value::from(2)),
            ("b".into(), Value::from(3)),
            ("b".into(), Value::from(4)),
        ]);
        let keys: Vec<&str> = m.keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["a", "b"]);
        assert_eq!(m["b"], Value::from(4));
        assert_eq!(m["a"], Value::from(2));
        let mut m = m;
        assert_eq!(m.insert("c", Value::Null), None);
        assert_eq!(m.insert("a", Value::from(5)), Some(Value::from(2)));
        *m.entry("0").or_insert(Value::from(true)) = Value::from(false);
        let keys: Vec<&str> = m.keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["0", "a", "b", "c"]);
        assert_eq!(m["0"], false);
    }

    #[test]
    fn key_order_is_the_order_of_str() {
        let keys = [
            "",
            "a",
            "ab",
            "abc",
            "b",
            "B",
            "apiVersion",
            "api",
            "kind",
            "é",
            "éa",
            "z\u{0}",
            "~",
            "10",
            "9",
            "metadata",
            "meta",
        ];
        for a in keys {
            for b in keys {
                assert_eq!(key_order(a, b), a.cmp(b), "{a:?} against {b:?}");
            }
        }
    }

    #[test]
    fn converts_to_and_from_serde_json_unchanged() {
        let j = serde_json::json!({"z": [1, -2, 2.5, "s", null, true], "a": {"k": "v"}});
        let v = Value::from(j.clone());
        assert_eq!(serde_json::Value::from(&v), j);
        assert_eq!(serde_json::to_value(&v).unwrap(), j);
        assert_eq!(v.to_string(), j.to_string());
        assert_eq!(v.pointer("/z/3"), Some(&Value::from("s")));
        assert_eq!(v.pointer("/z/01"), None);
        assert_eq!(v.pointer("/z/+1"), None);
        assert_eq!(v.pointer("z"), None);
        assert_eq!(v.pointer(""), Some(&v));
        let escaped = Value::from(serde_json::json!({"a/b": {"c~d": [0, {"": 7}]}}));
        assert_eq!(escaped.pointer("/a~1b/c~0d/1/"), Some(&Value::from(7)));
        assert_eq!(escaped.pointer("/a~1b/c~0d/2"), None);
        assert_eq!(v["a"]["k"], "v");
    }
}
