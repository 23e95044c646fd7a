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
//! few keys by length), built whole when the map ends. Strings are [`Text`]s, inline up to 24
//! bytes, so most keys and scalars of an object need no allocation of their own, or borrowed from
//! the text a document was read from: a document is a [`Doc<'a>`](Doc), and [`Value`] is one
//! that owns all of its strings (`Doc<'static>`). A webhook reads each review's object borrowing
//! the request's body ([`parse::parse_borrowed`]) and copies out only what outlives the review.

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

/// A string of a document: its own, inline up to 24 bytes so most keys and scalars of an object
/// cost no allocation of their own, or borrowed from the text the document was read from (a
/// review's body: see [`parse::parse_borrowed`]).
#[derive(Clone)]
pub enum Text<'a> {
    Own(compact_str::CompactString),
    Borrowed(&'a str),
}

// Keys and strings are in every entry of every map: keep them at three words, as a
// `CompactString` alone is.
const _: () = assert!(std::mem::size_of::<Text<'static>>() == 24);

impl<'a> Text<'a> {
    /// A string borrowed from a document's text.
    pub fn borrowed(text: &'a str) -> Self {
        Text::Borrowed(text)
    }

    #[inline]
    pub fn as_str(&self) -> &str {
        match self {
            Text::Own(s) => s.as_str(),
            Text::Borrowed(s) => s,
        }
    }

    /// The same string, owned.
    pub fn into_owned(self) -> Str {
        match self {
            Text::Own(s) => Text::Own(s),
            Text::Borrowed(s) => Text::Own(s.into()),
        }
    }
}

impl Default for Text<'_> {
    fn default() -> Self {
        Text::Own(compact_str::CompactString::default())
    }
}

impl std::ops::Deref for Text<'_> {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl fmt::Debug for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Text<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq<Text<'_>> for Text<'_> {
    fn eq(&self, other: &Text<'_>) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Text<'_> {}

impl PartialOrd for Text<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_str().cmp(other.as_str())
    }
}

impl std::hash::Hash for Text<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl PartialEq<str> for Text<'_> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text<'_> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl From<&str> for Text<'_> {
    /// An owned copy: a document's own strings are made so; only a reader borrows.
    fn from(s: &str) -> Self {
        Text::Own(s.into())
    }
}

impl From<String> for Text<'_> {
    fn from(s: String) -> Self {
        Text::Own(s.into())
    }
}

impl From<Cow<'_, str>> for Text<'_> {
    fn from(s: Cow<'_, str>) -> Self {
        Text::Own(s.as_ref().into())
    }
}

impl From<compact_str::CompactString> for Text<'_> {
    fn from(s: compact_str::CompactString) -> Self {
        Text::Own(s)
    }
}

impl From<Text<'_>> for String {
    fn from(s: Text<'_>) -> String {
        s.as_str().to_string()
    }
}

impl Serialize for Text<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Text<'static> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        compact_str::CompactString::deserialize(d).map(Text::Own)
    }
}

/// An owned string of the value tree.
pub type Str = Text<'static>;

/// A document that owns all of its strings: what the YAML loader builds, and every value made
/// in code.
pub type Value = Doc<'static>;

/// A map of a document that owns all of its strings.
pub type Map = DocMap<'static>;

/// A JSON value: a node of a document, whose strings are its own or borrowed for `'a` from the
/// text it was read from.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Doc<'a> {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(Text<'a>),
    Array(Vec<Doc<'a>>),
    Object(DocMap<'a>),
}

/// `null`, for lookups that find nothing.
pub static NULL: Value = Doc::Null;

/// A JSON object: entries sorted by key, each key once.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct DocMap<'a> {
    entries: Vec<(Text<'a>, Doc<'a>)>,
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

impl<'a> DocMap<'a> {
    pub fn new() -> DocMap<'a> {
        DocMap::default()
    }

    /// A map from entries in any order; of repeated keys the last wins (as in `serde_json`).
    pub fn from_entries(mut entries: Vec<(Text<'a>, Doc<'a>)>) -> DocMap<'a> {
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
        DocMap { entries }
    }

    /// A map from entries already sorted by key, each key once (a reader that sorted them
    /// itself): not checked again.
    pub(crate) fn from_sorted_entries(entries: Vec<(Text<'a>, Doc<'a>)>) -> DocMap<'a> {
        debug_assert!(entries.windows(2).all(|w| w[0].0 < w[1].0));
        DocMap { entries }
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

    pub fn get(&self, key: &str) -> Option<&Doc<'a>> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// The stored key and its value (the key borrowed from the map, not from the caller).
    pub fn get_key_value(&self, key: &str) -> Option<(&str, &Doc<'a>)> {
        self.position(key).map(|i| {
            let (k, v) = &self.entries[i];
            (k.as_str(), v)
        })
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Doc<'a>> {
        self.position(key).map(|i| &mut self.entries[i].1)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// Sets `key` to `value`, returning the value it replaced.
    pub fn insert(&mut self, key: impl Into<Text<'a>>, value: Doc<'a>) -> Option<Doc<'a>> {
        let key = key.into();
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Doc<'a>> {
        self.position(key).map(|i| self.entries.remove(i).1)
    }

    /// The entry for `key`, to read or fill in.
    pub fn entry(&mut self, key: impl Into<Text<'a>>) -> Entry<'_, 'a> {
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
    pub fn iter(
        &self,
    ) -> impl DoubleEndedIterator<Item = (&Text<'a>, &Doc<'a>)> + ExactSizeIterator {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The entries as a slice, in key order.
    pub fn entries(&self) -> &[(Text<'a>, Doc<'a>)] {
        &self.entries
    }

    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Text<'a>> + ExactSizeIterator {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Doc<'a>> + ExactSizeIterator {
        self.entries.iter().map(|(_, v)| v)
    }
}

/// A map's entry for one key (see [`DocMap::entry`]).
pub struct Entry<'m, 'a> {
    map: &'m mut DocMap<'a>,
    key: Text<'a>,
    slot: Result<usize, usize>,
}

impl<'m, 'a> Entry<'m, 'a> {
    pub fn or_insert(self, value: Doc<'a>) -> &'m mut Doc<'a> {
        self.or_insert_with(|| value)
    }

    pub fn or_insert_with(self, make: impl FnOnce() -> Doc<'a>) -> &'m mut Doc<'a> {
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

impl<'a, K: Into<Text<'a>>> FromIterator<(K, Doc<'a>)> for DocMap<'a> {
    fn from_iter<I: IntoIterator<Item = (K, Doc<'a>)>>(iter: I) -> DocMap<'a> {
        DocMap::from_entries(iter.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

impl<'a> IntoIterator for DocMap<'a> {
    type Item = (Text<'a>, Doc<'a>);
    type IntoIter = std::vec::IntoIter<(Text<'a>, Doc<'a>)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'m, 'a> IntoIterator for &'m DocMap<'a> {
    type Item = (&'m Text<'a>, &'m Doc<'a>);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'m, (Text<'a>, Doc<'a>)>,
        fn(&'m (Text<'a>, Doc<'a>)) -> (&'m Text<'a>, &'m Doc<'a>),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(k, v)| (k, v))
    }
}

impl<'a> std::ops::Index<&str> for DocMap<'a> {
    type Output = Doc<'a>;
    fn index(&self, key: &str) -> &Doc<'a> {
        self.get(key).unwrap_or(&NULL)
    }
}

/// What can index a value: a key of a map or a position in a list (as in `serde_json`).
pub trait Index {
    fn index_into<'v, 'a>(&self, v: &'v Doc<'a>) -> Option<&'v Doc<'a>>;
    fn index_into_mut<'v, 'a>(&self, v: &'v mut Doc<'a>) -> Option<&'v mut Doc<'a>>;
}

impl Index for str {
    fn index_into<'v, 'a>(&self, v: &'v Doc<'a>) -> Option<&'v Doc<'a>> {
        v.as_object()?.get(self)
    }
    fn index_into_mut<'v, 'a>(&self, v: &'v mut Doc<'a>) -> Option<&'v mut Doc<'a>> {
        v.as_object_mut()?.get_mut(self)
    }
}

impl Index for String {
    fn index_into<'v, 'a>(&self, v: &'v Doc<'a>) -> Option<&'v Doc<'a>> {
        self.as_str().index_into(v)
    }
    fn index_into_mut<'v, 'a>(&self, v: &'v mut Doc<'a>) -> Option<&'v mut Doc<'a>> {
        self.as_str().index_into_mut(v)
    }
}

impl Index for usize {
    fn index_into<'v, 'a>(&self, v: &'v Doc<'a>) -> Option<&'v Doc<'a>> {
        v.as_array()?.get(*self)
    }
    fn index_into_mut<'v, 'a>(&self, v: &'v mut Doc<'a>) -> Option<&'v mut Doc<'a>> {
        v.as_array_mut()?.get_mut(*self)
    }
}

impl<T: Index + ?Sized> Index for &T {
    fn index_into<'v, 'a>(&self, v: &'v Doc<'a>) -> Option<&'v Doc<'a>> {
        (**self).index_into(v)
    }
    fn index_into_mut<'v, 'a>(&self, v: &'v mut Doc<'a>) -> Option<&'v mut Doc<'a>> {
        (**self).index_into_mut(v)
    }
}

impl<'a, I: Index> std::ops::Index<I> for Doc<'a> {
    type Output = Doc<'a>;
    fn index(&self, i: I) -> &Doc<'a> {
        i.index_into(self).unwrap_or(&NULL)
    }
}

impl<'a> Doc<'a> {
    /// A map of these entries (in any order): for maps built in code, as `json!` builds them
    /// from text but without going through `serde_json`.
    pub fn object<const N: usize>(entries: [(&str, Doc<'a>); N]) -> Doc<'a> {
        Doc::Object(DocMap::from_entries(
            entries.into_iter().map(|(k, v)| (k.into(), v)).collect(),
        ))
    }

    pub fn get<I: Index>(&self, i: I) -> Option<&Doc<'a>> {
        i.index_into(self)
    }

    pub fn get_mut<I: Index>(&mut self, i: I) -> Option<&mut Doc<'a>> {
        i.index_into_mut(self)
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Doc::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Doc::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Doc::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Doc::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Doc::Number(n) => n.as_u64(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Doc<'a>>> {
        match self {
            Doc::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Doc<'a>>> {
        match self {
            Doc::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&DocMap<'a>> {
        match self {
            Doc::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_object_mut(&mut self) -> Option<&mut DocMap<'a>> {
        match self {
            Doc::Object(m) => Some(m),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Doc::Null)
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self, Doc::Bool(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Doc::String(_))
    }

    pub fn is_array(&self) -> bool {
        matches!(self, Doc::Array(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Doc::Object(_))
    }

    /// The same value owning all of its strings: for what outlives the text it was read from.
    pub fn to_owned_value(&self) -> Value {
        match self {
            Doc::Null => Doc::Null,
            Doc::Bool(b) => Doc::Bool(*b),
            Doc::Number(n) => Doc::Number(n.clone()),
            Doc::String(s) => Doc::String(s.clone().into_owned()),
            Doc::Array(a) => Doc::Array(a.iter().map(Doc::to_owned_value).collect()),
            Doc::Object(m) => Doc::Object(DocMap {
                entries: m
                    .entries
                    .iter()
                    .map(|(k, v)| (k.clone().into_owned(), v.to_owned_value()))
                    .collect(),
            }),
        }
    }

    /// The value, leaving `null` in its place.
    pub fn take(&mut self) -> Doc<'a> {
        std::mem::take(self)
    }

    /// RFC 6901 lookup (`""` is the whole value), as `serde_json::Value::pointer`.
    pub fn pointer(&self, pointer: &str) -> Option<&Doc<'a>> {
        pointer_tokens(pointer)?.try_fold(self, |v, token| match v {
            Doc::Object(m) => m.get(&token),
            Doc::Array(a) => a.get(list_index(&token)?),
            _ => None,
        })
    }

    pub fn pointer_mut(&mut self, pointer: &str) -> Option<&mut Doc<'a>> {
        pointer_tokens(pointer)?.try_fold(self, |v, token| match v {
            Doc::Object(m) => m.get_mut(&token),
            Doc::Array(a) => a.get_mut(list_index(&token)?),
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

impl<'a> From<bool> for Doc<'a> {
    fn from(b: bool) -> Doc<'a> {
        Doc::Bool(b)
    }
}

impl<'a> From<&str> for Doc<'a> {
    fn from(s: &str) -> Doc<'a> {
        Doc::String(s.into())
    }
}

impl<'a> From<String> for Doc<'a> {
    fn from(s: String) -> Doc<'a> {
        Doc::String(s.into())
    }
}

macro_rules! from_integer {
    ($($t:ty)*) => {$(
        impl<'a> From<$t> for Doc<'a> {
            fn from(n: $t) -> Doc<'a> {
                Doc::Number(n.into())
            }
        }
    )*};
}
from_integer!(i8 i16 i32 i64 isize u8 u16 u32 u64 usize);

impl<'a> From<f64> for Doc<'a> {
    /// A finite float; NaN and infinities, which JSON cannot write, are `null` (as in `serde_json`).
    fn from(f: f64) -> Doc<'a> {
        Number::from_f64(f).map_or(Doc::Null, Doc::Number)
    }
}

impl<'a> From<Vec<Doc<'a>>> for Doc<'a> {
    fn from(a: Vec<Doc<'a>>) -> Doc<'a> {
        Doc::Array(a)
    }
}

/// A list of the items.
impl<'a, T: Into<Doc<'a>>> FromIterator<T> for Doc<'a> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Doc<'a> {
        Doc::Array(iter.into_iter().map(Into::into).collect())
    }
}

impl<'a, T: Into<Doc<'a>>> From<Option<T>> for Doc<'a> {
    fn from(o: Option<T>) -> Doc<'a> {
        o.map_or(Doc::Null, Into::into)
    }
}

impl<'a> From<serde_json::Value> for Doc<'a> {
    fn from(v: serde_json::Value) -> Doc<'a> {
        match v {
            serde_json::Value::Null => Doc::Null,
            serde_json::Value::Bool(b) => Doc::Bool(b),
            serde_json::Value::Number(n) => Doc::Number(n),
            serde_json::Value::String(s) => Doc::String(s.into()),
            serde_json::Value::Array(a) => Doc::Array(a.into_iter().map(Doc::from).collect()),
            serde_json::Value::Object(m) => Doc::Object(DocMap::from_entries(
                m.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
            )),
        }
    }
}

impl<'a> From<&Doc<'a>> for serde_json::Value {
    fn from(v: &Doc<'a>) -> serde_json::Value {
        match v {
            Doc::Null => serde_json::Value::Null,
            Doc::Bool(b) => serde_json::Value::Bool(*b),
            Doc::Number(n) => serde_json::Value::Number(n.clone()),
            Doc::String(s) => serde_json::Value::String(s.to_string()),
            Doc::Array(a) => serde_json::Value::Array(a.iter().map(Into::into).collect()),
            Doc::Object(m) => serde_json::Value::Object(
                m.iter().map(|(k, v)| (k.to_string(), v.into())).collect(),
            ),
        }
    }
}

impl<'a> PartialEq<str> for Doc<'a> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl<'a> PartialEq<&str> for Doc<'a> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl<'a> PartialEq<bool> for Doc<'a> {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl<'a> Serialize for Doc<'a> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Doc::Null => s.serialize_unit(),
            Doc::Bool(b) => s.serialize_bool(*b),
            Doc::Number(n) => n.serialize(s),
            Doc::String(v) => s.serialize_str(v),
            Doc::Array(a) => s.collect_seq(a),
            Doc::Object(m) => m.serialize(s),
        }
    }
}

impl<'a> Serialize for DocMap<'a> {
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
        Ok(Doc::Bool(v))
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
        Ok(Doc::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Doc::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Doc::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(v) = seq.next_element()? {
            out.push(v);
        }
        Ok(Doc::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some((k, v)) = map.next_entry::<Str, Value>()? {
            entries.push((k, v));
        }
        Ok(Doc::Object(DocMap::from_entries(entries)))
    }
}

impl<'de> Deserialize<'de> for Map {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Map, D::Error> {
        match Doc::deserialize(d)? {
            Doc::Object(m) => Ok(m),
            _ => Err(serde::de::Error::custom("expected a map")),
        }
    }
}

/// General JSONPath queries (those [`jsonpath`] does not walk itself) run on this value type.
impl<'a> jsonpath_rust::query::queryable::Queryable for Doc<'a> {
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
        Doc::Null
    }
}

impl<'a> fmt::Display for Doc<'a> {
    /// Compact JSON, as `serde_json::Value` displays.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

/// `json!` for [`Doc<'a>`]: `serde_json::json!`'s syntax, converted. For tests and values made
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
