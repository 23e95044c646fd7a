//! Evaluation: compiled expressions over borrowed values, with CEL's semantics.
//!
//! A value ([`Val`]) is mostly a borrow — of the input, of a literal, of a record's field — and
//! what evaluation builds is reference-counted, so copying a value (into a `let`'s slot, a
//! macro's variable, a list) copies a pointer. Errors are values too, as in CEL: `&&`, `||` and
//! the `all`/`exists` macros absorb an error when another operand decides the result.

use std::cell::OnceCell;
use std::cmp::Ordering;
use std::rc::Rc;

use smallvec::SmallVec;

use super::compile::{Macro, Macro2, Node, Op, Program};
use super::net::Net;
use super::quantity::Quantity;
use super::semver::Semver;
use super::types::Type;
use crate::value::{Doc, Map, Number, Value};

/// A run-time error: what went wrong, as cel-go words it (`no such key: name`).
#[derive(Debug, Clone, PartialEq)]
pub struct EvalError(pub Rc<str>);

impl EvalError {
    pub fn new(message: impl Into<String>) -> Self {
        EvalError(Rc::from(message.into()))
    }
    fn no_overload(op: &str, args: &[&Val<'_>]) -> Self {
        let types: Vec<String> = args.iter().map(|a| a.type_name()).collect();
        EvalError::new(format!(
            "no matching overload for '{op}' applied to '({})'",
            types.join(", ")
        ))
    }
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A value whose fields are computed when first read (a host's facts about its input).
///
/// Fields are addressed by their index in the record's declaration, resolved when an expression
/// compiles; reading one computes it (once, if the record caches) and allocates nothing here.
pub trait Record {
    /// The field at `index` of the record's declaration.
    fn field(&self, index: usize) -> Val<'_>;
    /// The fields' names, in declaration order (for a field read through a `dyn` value).
    fn names(&self) -> &'static [&'static str];
    /// The whole record as a JSON map (for a record used as a value: in a message, a list).
    fn value(&self) -> &Doc<'_>;
}

/// A list of records (`pod.containers`), walked by macros without building any record's map.
pub trait RecordList {
    fn len(&self) -> usize;
    fn get(&self, index: usize) -> &dyn Record;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table a function built, read row by row as maps whose fields are computed when read (the
/// host's lookups: a JSONPath match's pointer is built only if a rule reads it). Unlike a
/// [`RecordList`], it is owned by the value that holds it.
pub trait Rows<'a> {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The fields' names, the same for every row.
    fn names(&self) -> &'static [&'static str];
    /// Field `index` (of [`Rows::names`]) of row `row`.
    fn field(&self, row: usize, index: usize) -> Val<'a>;
}

/// Functions the host evaluates itself (lookups in its indexes of other inputs).
pub trait Host {
    fn call<'a>(&'a self, name: &str, args: &mut Args<'a>) -> Result<Val<'a>, EvalError>;
}

/// A value during evaluation, borrowing from the input, the activation and the program for
/// `'a`.
///
/// `Val` is invariant in `'a`, not covariant: [`Val::Rows`] holds a `dyn Rows<'a>`, whose
/// `field` returns `Val<'a>`, and a trait object's lifetime parameter cannot shrink. So a
/// `Val<'long>` does not coerce to a `Val<'short>`: a value read from a longer-lived source is
/// made at the activation's own `'a` (every host function and record field returns one), not
/// converted afterwards.
#[derive(Clone)]
pub enum Val<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    /// A string evaluation built; a `+` whose left side is the only holder appends in place.
    Str(Rc<String>),
    /// A borrowed string (a map key, a part of a borrowed string).
    Text(&'a str),
    /// A borrowed JSON value of any kind.
    Ref(&'a Doc<'a>),
    List(Rc<Vec<Val<'a>>>),
    /// A map built by the expression: entries in insertion order, keys unique.
    Map(Rc<Vec<(Val<'a>, Val<'a>)>>),
    Rec(&'a (dyn Record + 'a)),
    Recs(&'a (dyn RecordList + 'a)),
    /// A list of rows a function built ([`Rows`]).
    Rows(Rc<dyn Rows<'a> + 'a>),
    /// One row of such a list, read as a map.
    Row(Rc<dyn Rows<'a> + 'a>, u32),
    Opt(Option<Rc<Val<'a>>>),
    /// An optional holding a borrowed value: `a.?b` on the input, without an allocation.
    OptRef(&'a Doc<'a>),
    /// A Kubernetes quantity, as its exact decimal value (boxed: 32 bytes would double the
    /// size of every value).
    Quantity(Rc<Quantity>),
    Semver(Rc<Semver>),
    /// An address or network of Kubernetes' IP and CIDR libraries.
    Net(Rc<Net>),
    Type(&'static str),
}

/// A value's kind with borrowed contents: what operators and functions match on.
pub enum Kind<'v, 'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    Str(&'v str),
    List,
    Map,
    Rec(&'a (dyn Record + 'a)),
    Opt,
    Quantity(&'v Quantity),
    Semver(&'v Semver),
    Net(&'v Net),
    Type(&'static str),
}

fn number(n: &Number) -> Kind<'static, 'static> {
    if let Some(i) = n.as_i64() {
        Kind::Int(i)
    } else if let Some(u) = n.as_u64() {
        Kind::Uint(u)
    } else {
        Kind::Double(n.as_f64().unwrap_or(f64::NAN))
    }
}

// Values are moved and copied everywhere in evaluation: keep them at three words.
const _: () = assert!(std::mem::size_of::<Val<'static>>() <= 24);

impl<'a> Val<'a> {
    pub fn quantity(q: Quantity) -> Val<'a> {
        Val::Quantity(Rc::new(q))
    }

    pub fn str(s: impl Into<String>) -> Val<'a> {
        Val::Str(Rc::new(s.into()))
    }

    /// An optional of `v`; one of a borrowed value needs no allocation.
    pub fn optional(v: Option<Val<'a>>) -> Val<'a> {
        match v {
            None => Val::Opt(None),
            Some(Val::Ref(r)) => Val::OptRef(r),
            Some(other) => Val::Opt(Some(Rc::new(other))),
        }
    }

    /// For an optional, `Some` of what it holds (`Some(None)` when empty); `None` otherwise.
    pub fn optional_value(&self) -> Option<Option<Val<'a>>> {
        match self {
            Val::Opt(o) => Some(o.as_ref().map(|v| (**v).clone())),
            Val::OptRef(r) => Some(Some(Val::Ref(r))),
            _ => None,
        }
    }

    /// A list of `items`; an empty one borrows a shared empty list (rules build many: filters
    /// that find nothing, `cond ? [...] : []`) instead of allocating.
    pub fn list(items: Vec<Val<'a>>) -> Val<'a> {
        static EMPTY: Value = Doc::Array(Vec::new());
        if items.is_empty() {
            return Val::Ref(&EMPTY);
        }
        Val::List(Rc::new(items))
    }

    #[inline]
    pub fn kind(&self) -> Kind<'_, 'a> {
        match self {
            Val::Null => Kind::Null,
            Val::Bool(b) => Kind::Bool(*b),
            Val::Int(i) => Kind::Int(*i),
            Val::Uint(u) => Kind::Uint(*u),
            Val::Double(d) => Kind::Double(*d),
            Val::Str(s) => Kind::Str(s),
            Val::Text(s) => Kind::Str(s),
            Val::Ref(v) => match v {
                Doc::Null => Kind::Null,
                Doc::Bool(b) => Kind::Bool(*b),
                Doc::Number(n) => number(n),
                Doc::String(s) => Kind::Str(s),
                Doc::Array(_) => Kind::List,
                Doc::Object(_) => Kind::Map,
            },
            Val::List(_) | Val::Recs(_) | Val::Rows(_) => Kind::List,
            Val::Map(_) | Val::Row(..) => Kind::Map,
            Val::Rec(r) => Kind::Rec(*r),
            Val::Opt(_) | Val::OptRef(_) => Kind::Opt,
            Val::Quantity(q) => Kind::Quantity(q),
            Val::Semver(v) => Kind::Semver(v),
            Val::Net(n) => Kind::Net(n),
            Val::Type(t) => Kind::Type(t),
        }
    }

    /// The CEL type name (`string`, `list`, `map`, …) for errors.
    pub fn type_name(&self) -> String {
        self.cel_type().to_string()
    }

    /// The CEL type name, as `type()` gives it.
    pub fn cel_type(&self) -> &'static str {
        match self.kind() {
            Kind::Null => "null_type",
            Kind::Bool(_) => "bool",
            Kind::Int(_) => "int",
            Kind::Uint(_) => "uint",
            Kind::Double(_) => "double",
            Kind::Str(_) => "string",
            Kind::List => "list",
            Kind::Map | Kind::Rec(_) => "map",
            Kind::Opt => "optional_type",
            Kind::Quantity(_) => "quantity",
            Kind::Semver(_) => "semver",
            Kind::Net(Net::Ip(_)) => "net.IP",
            Kind::Net(Net::Cidr(..)) => "net.CIDR",
            Kind::Net(Net::Url(_)) => "kubernetes.URL",
            Kind::Type(_) => "type",
        }
    }

    /// Whether the value is of a (parameter) type, for choosing among overloads at run time.
    pub fn is_of(&self, ty: &Type) -> bool {
        matches!(
            (ty, self.kind()),
            (Type::Dyn | Type::Param(_), _)
                | (Type::Null, Kind::Null)
                | (Type::Bool, Kind::Bool(_))
                | (Type::Int, Kind::Int(_))
                | (Type::Uint, Kind::Uint(_))
                | (Type::Double, Kind::Double(_))
                | (Type::String, Kind::Str(_))
                | (Type::List(_), Kind::List)
                | (Type::Map(..), Kind::Map | Kind::Rec(_))
                | (Type::Record(_), Kind::Rec(_))
                | (Type::Optional(_), Kind::Opt)
                | (Type::Quantity, Kind::Quantity(_))
                | (Type::Semver, Kind::Semver(_))
                | (Type::Ip, Kind::Net(Net::Ip(_)))
                | (Type::Cidr, Kind::Net(Net::Cidr(..)))
                | (Type::Url, Kind::Net(Net::Url(_)))
                | (Type::Type, Kind::Type(_))
        )
    }

    #[inline]
    pub fn as_str(&self) -> Option<&str> {
        match self.kind() {
            Kind::Str(s) => Some(s),
            _ => None,
        }
    }

    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        match self.kind() {
            Kind::Bool(b) => Some(b),
            _ => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match self.kind() {
            Kind::Int(i) => Some(i),
            _ => None,
        }
    }

    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self.kind(), Kind::Null)
    }

    /// The items of a list, or the keys of a map (what a macro ranges over).
    pub fn items(&self) -> Result<Items<'_, 'a>, EvalError> {
        Ok(match self {
            Val::Ref(Doc::Array(a)) => Items::Json(a.iter()),
            Val::Ref(Doc::Object(m)) => Items::Keys(m.entries().iter()),
            Val::List(l) => Items::Vals(l.iter()),
            Val::Map(m) => Items::MapKeys(m.iter()),
            Val::Recs(r) => Items::Recs(*r, 0..r.len()),
            Val::Rows(r) => Items::Rows(r, 0..r.len()),
            Val::Row(r, _) => Items::Names(r.names().iter()),
            other => {
                return Err(EvalError::new(format!(
                    "cannot range over a value of type {}",
                    other.type_name()
                )));
            }
        })
    }

    /// The length of a list, map or string (in code points, as CEL counts).
    pub fn size(&self) -> Option<i64> {
        Some(match self {
            Val::Ref(Doc::Array(a)) => a.len(),
            Val::Ref(Doc::Object(m)) => m.len(),
            Val::List(l) => l.len(),
            Val::Map(m) => m.len(),
            Val::Recs(r) => r.len(),
            Val::Rows(r) => r.len(),
            Val::Rec(r) => r.names().len(),
            Val::Row(r, _) => r.names().len(),
            other => other.as_str()?.chars().count(),
        } as i64)
    }

    /// The value at a list index.
    pub fn at(&self, index: usize) -> Option<Val<'a>> {
        match self {
            Val::Ref(Doc::Array(a)) => a.get(index).map(Val::Ref),
            Val::List(l) => l.get(index).cloned(),
            Val::Recs(r) => (index < r.len()).then(|| Val::Rec(r.get(index))),
            Val::Rows(r) => (index < r.len()).then(|| Val::Row(r.clone(), index as u32)),
            _ => None,
        }
    }

    /// The value of a map key; `Ok(None)` when the map lacks it (or holds `null` there: the API
    /// server drops null fields, so for Kubernetes objects they are unset). An error for a value
    /// that is not a map.
    pub fn get(&self, key: &Val<'_>) -> Result<Option<Val<'a>>, EvalError> {
        match self {
            Val::Ref(Doc::Object(m)) => Ok(key
                .as_str()
                .and_then(|k| m.get(k))
                .filter(|v| !v.is_null())
                .map(Val::Ref)),
            // A map an expression built keeps its nulls: they are what it computed.
            // A rule's own maps are keyed by strings: a string key is read once and compared
            // as a string, not through `equals`, which reads both sides of every entry.
            Val::Map(m) => Ok(match key.as_str() {
                Some(text) => m
                    .iter()
                    .find(|(k, _)| k.as_str() == Some(text))
                    .map(|(_, v)| v.clone()),
                None => m
                    .iter()
                    .find(|(k, _)| equals(k, key))
                    .map(|(_, v)| v.clone()),
            }),
            Val::Rec(r) => Ok(key.as_str().and_then(|k| {
                let i = r.names().iter().position(|n| *n == k)?;
                Some(r.field(i))
            })),
            // A row's fields are what the function found, nulls included (as a built map's).
            Val::Row(r, row) => Ok(key.as_str().and_then(|k| {
                let i = r.names().iter().position(|n| *n == k)?;
                Some(r.field(*row as usize, i))
            })),
            other => Err(EvalError::new(format!(
                "type {} has no fields or keys",
                other.type_name()
            ))),
        }
    }

    /// The value as JSON, borrowed where it already is JSON (for functions that read JSON).
    pub fn as_json(&self) -> std::borrow::Cow<'_, Doc<'a>> {
        match self {
            Val::Ref(v) => std::borrow::Cow::Borrowed(*v),
            other => std::borrow::Cow::Owned(other.to_value()),
        }
    }

    /// The value as JSON (for a finding's message parts, its patch values, `each` items).
    pub fn to_value(&self) -> Value {
        match self {
            Val::Null => Doc::Null,
            Val::Bool(b) => Doc::Bool(*b),
            Val::Int(i) => Doc::from(*i),
            Val::Uint(u) => Doc::from(*u),
            Val::Double(d) => Doc::from(*d),
            Val::Str(s) => Doc::String(s.as_str().into()),
            Val::Text(s) => Doc::String((*s).into()),
            Val::Ref(v) => v.to_owned_value(),
            Val::List(l) => Doc::Array(l.iter().map(Val::to_value).collect()),
            Val::Map(m) => Doc::Object(Map::from_entries(
                m.iter()
                    .map(|(k, v)| (k.display().into(), v.to_value()))
                    .collect(),
            )),
            Val::Rec(r) => r.value().to_owned_value(),
            Val::Recs(r) => Doc::Array(
                (0..r.len())
                    .map(|i| r.get(i).value().to_owned_value())
                    .collect(),
            ),
            Val::Rows(r) => Doc::Array(
                (0..r.len())
                    .map(|i| Val::Row(r.clone(), i as u32).to_value())
                    .collect(),
            ),
            Val::Row(r, row) => Doc::Object(Map::from_entries(
                r.names()
                    .iter()
                    .enumerate()
                    .map(|(i, n)| ((*n).into(), r.field(*row as usize, i).to_value()))
                    .collect(),
            )),
            Val::Opt(o) => o.as_ref().map_or(Doc::Null, |v| v.to_value()),
            Val::OptRef(v) => v.to_owned_value(),
            Val::Quantity(q) => Doc::String(q.to_decimal_string().into()),
            Val::Semver(v) => Doc::String(v.text().into()),
            Val::Net(n) => Doc::String(n.to_string().into()),
            Val::Type(t) => Doc::String(t.to_string().into()),
        }
    }

    /// The value as a message shows it: strings as they are, other values as JSON.
    pub fn display(&self) -> String {
        match self.kind() {
            Kind::Str(s) => s.to_string(),
            Kind::Int(i) => i.to_string(),
            Kind::Uint(u) => u.to_string(),
            // cel-go's `string()`: Go's `strconv.FormatFloat(d, 'g', -1, 64)`.
            Kind::Double(d) => crate::value::format_float_g(d),
            Kind::Bool(b) => b.to_string(),
            Kind::Null => String::new(),
            Kind::Type(t) => t.to_string(),
            Kind::Semver(v) => v.text().to_string(),
            Kind::Net(n) => n.to_string(),
            // A whole quantity reads as an integer (`1000m` is `1`).
            Kind::Quantity(q) => q.to_decimal_string(),
            _ => self.to_value().to_string(),
        }
    }

    /// Pushes the display form onto `out` (no intermediate string for a string value).
    pub fn display_into(&self, out: &mut String) {
        match self.kind() {
            Kind::Str(s) => out.push_str(s),
            _ => out.push_str(&self.display()),
        }
    }
}

/// What a macro ranges over, item by item.
pub enum Items<'v, 'a> {
    Json(std::slice::Iter<'a, Doc<'a>>),
    Keys(std::slice::Iter<'a, (crate::value::Text<'a>, Doc<'a>)>),
    Vals(std::slice::Iter<'v, Val<'a>>),
    MapKeys(std::slice::Iter<'v, (Val<'a>, Val<'a>)>),
    Recs(&'a (dyn RecordList + 'a), std::ops::Range<usize>),
    Rows(&'v Rc<dyn Rows<'a> + 'a>, std::ops::Range<usize>),
    Names(std::slice::Iter<'static, &'static str>),
}

impl<'a> Iterator for Items<'_, 'a> {
    type Item = Val<'a>;
    fn next(&mut self) -> Option<Val<'a>> {
        match self {
            Items::Json(i) => i.next().map(Val::Ref),
            Items::Keys(i) => i.next().map(|(k, _)| Val::Text(k)),
            Items::Vals(i) => i.next().cloned(),
            Items::MapKeys(i) => i.next().map(|(k, _)| k.clone()),
            Items::Recs(r, i) => i.next().map(|i| Val::Rec(r.get(i))),
            Items::Rows(r, i) => i.next().map(|i| Val::Row((*r).clone(), i as u32)),
            Items::Names(i) => i.next().map(|n| Val::Text(n)),
        }
    }
}

/// CEL equality, heterogeneous for numbers (`1 == 1.0` and `1 == 1u` hold, as in Kubernetes'
/// CEL); values of different kinds are unequal.
pub(super) fn equals(a: &Val<'_>, b: &Val<'_>) -> bool {
    // Most comparisons in rules are of strings: no numeric checks for them.
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        return x == y;
    }
    if let (Some(x), Some(y)) = (numeric(a), numeric(b)) {
        return x.partial_cmp(&y) == Some(Ordering::Equal);
    }
    match (a.kind(), b.kind()) {
        (Kind::Null, Kind::Null) => true,
        (Kind::Bool(x), Kind::Bool(y)) => x == y,
        (Kind::Str(x), Kind::Str(y)) => x == y,
        (Kind::Quantity(x), Kind::Quantity(y)) => x == y,
        (Kind::Semver(x), Kind::Semver(y)) => x == y,
        (Kind::Net(x), Kind::Net(y)) => x == y,
        (Kind::Type(x), Kind::Type(y)) => x == y,
        (Kind::Opt, Kind::Opt) => match (a.optional_value(), b.optional_value()) {
            (Some(None), Some(None)) => true,
            (Some(Some(x)), Some(Some(y))) => equals(&x, &y),
            _ => false,
        },
        (Kind::List, Kind::List) => {
            let (Ok(x), Ok(y)) = (a.items(), b.items()) else {
                return false;
            };
            a.size() == b.size() && x.zip(y).all(|(x, y)| equals(&x, &y))
        }
        (Kind::Map | Kind::Rec(_), Kind::Map | Kind::Rec(_)) => {
            a.size() == b.size()
                && a.items().is_ok_and(|mut keys| {
                    keys.all(|k| match (a.get(&k), b.get(&k)) {
                        (Ok(Some(x)), Ok(Some(y))) => equals(&x, &y),
                        (Ok(None), Ok(None)) => true,
                        _ => false,
                    })
                })
        }
        _ => false,
    }
}

/// A number as an exact-enough common form for comparing across int, uint and double.
#[derive(PartialEq, PartialOrd)]
enum Numeric {
    Int(i128),
    Double(f64),
}

fn numeric(v: &Val<'_>) -> Option<Numeric> {
    match v.kind() {
        Kind::Int(i) => Some(Numeric::Int(i as i128)),
        Kind::Uint(u) => Some(Numeric::Int(u as i128)),
        Kind::Double(d) => Some(Numeric::Double(d)),
        _ => None,
    }
}

impl Numeric {
    fn partial_cmp(&self, other: &Numeric) -> Option<Ordering> {
        match (self, other) {
            (Numeric::Int(a), Numeric::Int(b)) => Some(a.cmp(b)),
            (Numeric::Int(a), Numeric::Double(b)) => (*a as f64).partial_cmp(b),
            (Numeric::Double(a), Numeric::Int(b)) => a.partial_cmp(&(*b as f64)),
            (Numeric::Double(a), Numeric::Double(b)) => a.partial_cmp(b),
        }
    }
}

/// CEL ordering: numbers (across kinds), strings, bools, quantities and versions.
pub(super) fn compare<'a>(op: &str, a: &Val<'a>, b: &Val<'a>) -> Result<Ordering, EvalError> {
    if let (Some(x), Some(y)) = (numeric(a), numeric(b)) {
        return x
            .partial_cmp(&y)
            .ok_or_else(|| EvalError::new("comparison with NaN"));
    }
    match (a.kind(), b.kind()) {
        (Kind::Str(x), Kind::Str(y)) => Ok(x.cmp(y)),
        (Kind::Bool(x), Kind::Bool(y)) => Ok(x.cmp(&y)),
        (Kind::Quantity(x), Kind::Quantity(y)) => Ok(x.cmp(y)),
        (Kind::Semver(x), Kind::Semver(y)) => Ok(x.cmp(y)),
        _ => Err(EvalError::no_overload(op, &[a, b])),
    }
}

/// Function arguments, the receiver first; inline for the usual few.
pub type Args<'a> = SmallVec<[Val<'a>; 4]>;

/// What a function implementation gets besides its arguments.
pub struct Call<'a> {
    pub name: &'static str,
    pub host: Option<&'a dyn Host>,
    /// What the overload's preparation made of its literal argument.
    pub prepared: Option<&'a (dyn std::any::Any + Send + Sync)>,
}

impl Call<'_> {
    /// The prepared literal, as the type the preparation made.
    pub fn prepared<T: 'static>(&self) -> Option<&T> {
        self.prepared.and_then(|p| p.downcast_ref::<T>())
    }
}

enum Slot<'a> {
    Unset,
    Val(Val<'a>),
    /// A `let`: evaluated the first time it is read, then kept.
    Lazy(&'a Program, OnceCell<Result<Val<'a>, EvalError>>),
}

/// The variables' values, by slot (the compiler's numbering), and the host.
pub struct Activation<'a> {
    slots: Vec<Slot<'a>>,
    host: Option<&'a dyn Host>,
}

impl<'a> Activation<'a> {
    pub fn new(slots: usize, host: Option<&'a dyn Host>) -> Self {
        Activation {
            slots: (0..slots).map(|_| Slot::Unset).collect(),
            host,
        }
    }

    pub fn set(&mut self, slot: usize, value: Val<'a>) {
        if slot >= self.slots.len() {
            self.slots.resize_with(slot + 1, || Slot::Unset);
        }
        self.slots[slot] = Slot::Val(value);
    }

    /// Binds a slot to a `let`, evaluated when first read.
    pub fn set_lazy(&mut self, slot: usize, program: &'a Program) {
        if slot >= self.slots.len() {
            self.slots.resize_with(slot + 1, || Slot::Unset);
        }
        self.slots[slot] = Slot::Lazy(program, OnceCell::new());
    }

    pub fn unset(&mut self, slot: usize) {
        if let Some(s) = self.slots.get_mut(slot) {
            *s = Slot::Unset;
        }
    }

    fn read(&self, slot: u32) -> Result<Val<'a>, EvalError> {
        match self.slots.get(slot as usize) {
            Some(Slot::Val(v)) => Ok(v.clone()),
            Some(Slot::Lazy(program, cell)) => cell.get_or_init(|| program.eval(self)).clone(),
            Some(Slot::Unset) | None => Err(EvalError::new("variable not bound here")),
        }
    }
}

/// Values of the comprehension variables of one evaluation.
type Locals<'a> = SmallVec<[Val<'a>; 4]>;

impl Program {
    /// Evaluates the expression.
    pub fn eval<'a>(&'a self, act: &Activation<'a>) -> Result<Val<'a>, EvalError> {
        let mut locals: Locals<'a> = SmallVec::new();
        locals.resize(self.locals as usize, Val::Null);
        eval(&self.root, act, &mut locals)
    }

    /// Evaluates a condition: `Ok(true)` or `Ok(false)`, or why it has no truth value.
    pub fn test<'a>(&'a self, act: &Activation<'a>) -> Result<bool, EvalError> {
        let v = self.eval(act)?;
        v.as_bool().ok_or_else(|| {
            EvalError::new(format!("condition is of type {}, not bool", v.type_name()))
        })
    }
}

fn boolean(v: Result<Val<'_>, EvalError>, op: &str) -> Result<bool, EvalError> {
    let v = v?;
    v.as_bool().ok_or_else(|| EvalError::no_overload(op, &[&v]))
}

/// An operand: a literal or a variable read here, anything else evaluated. (A node in six is a
/// literal and one in four a variable; a call of `eval` for each costs more than reading it.)
#[inline(always)]
fn operand<'a>(
    node: &'a Node,
    act: &Activation<'a>,
    locals: &mut Locals<'a>,
) -> Result<Val<'a>, EvalError> {
    match node {
        Node::Lit(v) => Ok(Val::Ref(v)),
        Node::Local(i) => Ok(locals[*i as usize].clone()),
        Node::Global(slot) => act.read(*slot),
        _ => eval(node, act, locals),
    }
}

fn eval<'a>(
    node: &'a Node,
    act: &Activation<'a>,
    locals: &mut Locals<'a>,
) -> Result<Val<'a>, EvalError> {
    match node {
        Node::Lit(_) | Node::Global(_) | Node::Local(_) => operand(node, act, locals),
        Node::Uint(u) => Ok(Val::Uint(*u)),
        Node::TypeName(t) => Ok(Val::Type(t)),
        Node::Has { base, field } => {
            let base = operand(base, act, locals)?;
            match base.optional_value() {
                Some(None) => Ok(Val::Bool(false)),
                Some(Some(v)) => select(&v, field, true),
                None => select(&base, field, true),
            }
        }
        Node::Path { base, steps } => path(operand(base, act, locals)?, steps),
        Node::RecordField {
            base,
            index,
            name,
            test,
        } => {
            let base = operand(base, act, locals)?;
            let v = match &base {
                Val::Rec(r) => r.field(*index as usize),
                other => return select(other, name, *test),
            };
            Ok(if *test { Val::Bool(!v.is_null()) } else { v })
        }
        Node::Index {
            base,
            index,
            optional,
        } => index_value(
            operand(base, act, locals)?,
            operand(index, act, locals)?,
            *optional,
        ),
        Node::List { items, optional } => build_list(items, optional, act, locals),
        Node::Map(entries) => build_map(entries, act, locals),
        Node::Not(a) => Ok(Val::Bool(!boolean(eval(a, act, locals), "!_")?)),
        Node::Neg(a) => {
            let v = eval(a, act, locals)?;
            match v.kind() {
                Kind::Int(i) => i
                    .checked_neg()
                    .map(Val::Int)
                    .ok_or_else(|| EvalError::new("integer overflow")),
                Kind::Double(d) => Ok(Val::Double(-d)),
                _ => Err(EvalError::no_overload("-_", &[&v])),
            }
        }
        // `&&` and `||` are commutative about errors, as CEL defines them: a false (true) operand
        // decides the result even when the other one fails.
        Node::And(a, b) => match boolean(eval(a, act, locals), "_&&_") {
            Ok(false) => Ok(Val::Bool(false)),
            Ok(true) => Ok(Val::Bool(boolean(eval(b, act, locals), "_&&_")?)),
            Err(e) => match boolean(eval(b, act, locals), "_&&_") {
                Ok(false) => Ok(Val::Bool(false)),
                _ => Err(e),
            },
        },
        Node::Or(a, b) => match boolean(eval(a, act, locals), "_||_") {
            Ok(true) => Ok(Val::Bool(true)),
            Ok(false) => Ok(Val::Bool(boolean(eval(b, act, locals), "_||_")?)),
            Err(e) => match boolean(eval(b, act, locals), "_||_") {
                Ok(true) => Ok(Val::Bool(true)),
                _ => Err(e),
            },
        },
        Node::Cond(c, a, b) => {
            if boolean(eval(c, act, locals), "_?_:_")? {
                eval(a, act, locals)
            } else {
                eval(b, act, locals)
            }
        }
        Node::Op(op, a, b) => operation(*op, operand(a, act, locals)?, operand(b, act, locals)?),
        Node::Call {
            name,
            candidates,
            args,
        } => call(name, candidates, args, act, locals),
        Node::Comprehension {
            kind,
            range,
            var,
            body,
            filter,
        } => {
            let range = operand(range, act, locals)?;
            comprehension(
                *kind,
                &range,
                *var as usize,
                body,
                filter.as_deref(),
                act,
                locals,
            )
        }
        Node::Comprehension2 {
            kind,
            range,
            vars,
            body,
            filter,
        } => {
            let range = operand(range, act, locals)?;
            comprehension2(
                *kind,
                &range,
                (vars.0 as usize, vars.1 as usize),
                body,
                filter.as_deref(),
                act,
                locals,
            )
        }
        Node::OptionalMap {
            flat,
            optional,
            var,
            body,
        } => {
            let optional = operand(optional, act, locals)?;
            optional_map(*flat, &optional, *var as usize, body, act, locals)
        }
    }
}

/// `base[index]` and `base[?index]`: indexing an optional (with either) gives an optional.
fn index_value<'a>(base: Val<'a>, index: Val<'a>, optional: bool) -> Result<Val<'a>, EvalError> {
    let (base, optional) = match base.optional_value() {
        Some(None) => return Ok(Val::Opt(None)),
        Some(Some(v)) => (v, true),
        None => (base, optional),
    };
    let found = match base.kind() {
        Kind::List => {
            let i = match index.kind() {
                Kind::Int(i) => usize::try_from(i).ok(),
                Kind::Uint(u) => usize::try_from(u).ok(),
                Kind::Double(d) if d.fract() == 0.0 && d >= 0.0 => Some(d as usize),
                _ => return Err(EvalError::no_overload("_[_]", &[&base, &index])),
            };
            i.and_then(|i| base.at(i))
        }
        _ => base.get(&index)?,
    };
    match (found, optional) {
        (Some(v), false) => Ok(v),
        (found, true) => Ok(Val::optional(found)),
        (None, false) => Err(match base.kind() {
            Kind::List => EvalError::new(format!("index out of range: {}", index.display())),
            _ => EvalError::new(format!("no such key: {}", index.display())),
        }),
    }
}

/// A list literal; an item marked optional (`[?x]`) is left out when it has no value.
fn build_list<'a>(
    items: &'a [Node],
    optional: &[usize],
    act: &Activation<'a>,
    locals: &mut Locals<'a>,
) -> Result<Val<'a>, EvalError> {
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let v = eval(item, act, locals)?;
        if optional.contains(&i) {
            match v.optional_value() {
                Some(Some(v)) => out.push(v),
                Some(None) => {}
                None => {
                    let other = v;
                    return Err(EvalError::no_overload("optional list item", &[&other]));
                }
            }
        } else {
            out.push(v);
        }
    }
    Ok(Val::list(out))
}

/// A map literal; an entry marked optional (`?k: v`) is left out when `v` has no value.
fn build_map<'a>(
    entries: &'a [(Node, Node, bool)],
    act: &Activation<'a>,
    locals: &mut Locals<'a>,
) -> Result<Val<'a>, EvalError> {
    let mut out: Vec<(Val<'a>, Val<'a>)> = Vec::with_capacity(entries.len());
    for (k, v, optional) in entries {
        let k = eval(k, act, locals)?;
        let mut v = eval(v, act, locals)?;
        if *optional {
            match v.optional_value() {
                Some(Some(inner)) => v = inner,
                Some(None) => continue,
                None => {
                    let other = v;
                    return Err(EvalError::no_overload("optional map entry", &[&other]));
                }
            }
        }
        if out.iter().any(|(existing, _)| equals(existing, &k)) {
            return Err(EvalError::new(format!(
                "duplicate map key: {}",
                k.display()
            )));
        }
        out.push((k, v));
    }
    Ok(Val::Map(Rc::new(out)))
}

/// A binary operator on its operands.
fn operation<'a>(op: Op, a: Val<'a>, b: Val<'a>) -> Result<Val<'a>, EvalError> {
    // `'…' + x + '…'` chains (messages) append to one string instead of copying the
    // whole prefix at every `+`.
    if op == Op::Add
        && let Val::Str(mut text) = a
    {
        if let (Some(owned), Some(tail)) = (Rc::get_mut(&mut text), b.as_str()) {
            owned.push_str(tail);
            return Ok(Val::Str(text));
        }
        return binary(op, &Val::Str(text), &b);
    }
    // Likewise `l1 + l2 + …` (a rule's lists of problems) extends one list.
    if op == Op::Add
        && let Val::List(mut items) = a
    {
        if matches!(b.kind(), Kind::List)
            && let (Some(owned), Ok(tail)) = (Rc::get_mut(&mut items), b.items())
        {
            owned.extend(tail);
            return Ok(Val::List(items));
        }
        return binary(op, &Val::List(items), &b);
    }
    binary(op, &a, &b)
}

/// A function call: the arguments, then the first candidate overload they fit.
fn call<'a>(
    name: &'static str,
    candidates: &'a [super::compile::Candidate],
    args: &'a [Node],
    act: &Activation<'a>,
    locals: &mut Locals<'a>,
) -> Result<Val<'a>, EvalError> {
    let mut values: Args<'a> = SmallVec::with_capacity(args.len());
    for a in args {
        values.push(operand(a, act, locals)?);
    }
    // The checks at load chose the candidates; a `dyn` argument is checked here.
    let chosen = candidates
        .iter()
        .find(|c| c.params.iter().zip(&values).all(|(p, v)| v.is_of(p)))
        .ok_or_else(|| EvalError::no_overload(name, &values.iter().collect::<Vec<_>>()))?;
    let call = Call {
        name,
        host: act.host,
        prepared: chosen.prepared(),
    };
    (chosen.imp)(&call, &mut values)
}

/// A chain of selections ([`Node::Path`]) from `base`. On borrowed JSON maps, what most chains
/// read, a step is a lookup in the map; on anything else it is the step as `select` or `opt_get`
/// makes it alone. Either way a missing (or null) field ends an optional chain empty and is an
/// error in a plain one; on an optional both kinds of step chain, and `.?` makes one.
fn path<'a>(mut value: Val<'a>, steps: &[(String, bool)]) -> Result<Val<'a>, EvalError> {
    for (field, step_optional) in steps {
        let (map, optional) = match value {
            Val::Ref(Doc::Object(map)) => (map, *step_optional),
            Val::OptRef(Doc::Object(map)) => (map, true),
            Val::Opt(None) => return Ok(Val::Opt(None)),
            other => {
                value = match other.optional_value() {
                    Some(None) => return Ok(Val::Opt(None)),
                    Some(Some(v)) => Val::optional(opt_get(&v, field)?),
                    None if *step_optional => Val::optional(opt_get(&other, field)?),
                    None => select(&other, field, false)?,
                };
                continue;
            }
        };
        value = match map.get(field).filter(|v| !v.is_null()) {
            Some(v) if optional => Val::OptRef(v),
            Some(v) => Val::Ref(v),
            None if optional => return Ok(Val::Opt(None)),
            None => return Err(EvalError::new(format!("no such key: {field}"))),
        };
    }
    Ok(value)
}

/// `base.?field`: the field's value if set; a record's null fact counts as unset.
fn opt_get<'a>(base: &Val<'a>, field: &str) -> Result<Option<Val<'a>>, EvalError> {
    Ok(base.get(&Val::Text(field))?.filter(|v| !v.is_null()))
}

fn select<'a>(base: &Val<'a>, field: &str, test: bool) -> Result<Val<'a>, EvalError> {
    let found = base.get(&Val::Text(field))?;
    if test {
        return Ok(Val::Bool(found.is_some()));
    }
    found.ok_or_else(|| EvalError::new(format!("no such key: {field}")))
}

/// `optMap`/`optFlatMap`: the body with the variable bound to the optional's value, if any.
fn optional_map<'a>(
    flat: bool,
    optional: &Val<'a>,
    var: usize,
    body: &'a Node,
    act: &Activation<'a>,
    locals: &mut Locals<'a>,
) -> Result<Val<'a>, EvalError> {
    let function = if flat { "optFlatMap" } else { "optMap" };
    let Some(value) = optional.optional_value() else {
        return Err(EvalError::no_overload(function, &[optional]));
    };
    let Some(value) = value else {
        return Ok(Val::Opt(None));
    };
    locals[var] = value;
    let result = eval(body, act, locals)?;
    if !flat {
        Ok(Val::optional(Some(result)))
    } else if result.optional_value().is_some() {
        Ok(result)
    } else {
        Err(EvalError::no_overload(function, &[&result]))
    }
}

fn comprehension<'a>(
    kind: Macro,
    range: &Val<'a>,
    var: usize,
    body: &'a Node,
    filter: Option<&'a Node>,
    act: &Activation<'a>,
    locals: &mut Locals<'a>,
) -> Result<Val<'a>, EvalError> {
    let items = range.items()?;
    let mut error = None;
    match kind {
        Macro::All | Macro::Exists => {
            let decisive = kind == Macro::Exists;
            for item in items {
                locals[var] = item;
                match boolean(eval(body, act, locals), kind.name()) {
                    Ok(b) if b == decisive => return Ok(Val::Bool(decisive)),
                    Ok(_) => {}
                    Err(e) => error = error.or(Some(e)),
                }
            }
            match error {
                Some(e) => Err(e),
                None => Ok(Val::Bool(!decisive)),
            }
        }
        Macro::ExistsOne => {
            let mut count = 0;
            for item in items {
                locals[var] = item;
                if boolean(eval(body, act, locals), "exists_one")? {
                    count += 1;
                }
            }
            Ok(Val::Bool(count == 1))
        }
        Macro::Filter => {
            let mut out = Vec::with_capacity(range.size().unwrap_or(0) as usize);
            for item in items {
                locals[var] = item.clone();
                if boolean(eval(body, act, locals), "filter")? {
                    out.push(item);
                }
            }
            Ok(Val::list(out))
        }
        Macro::Map => {
            let mut out = Vec::with_capacity(range.size().unwrap_or(0) as usize);
            for item in items {
                locals[var] = item;
                if let Some(f) = filter
                    && !boolean(eval(f, act, locals), "map")?
                {
                    continue;
                }
                out.push(eval(body, act, locals)?);
            }
            Ok(Val::list(out))
        }
    }
}

/// A two-variable comprehension: the index and item of each list item, or the key and value of
/// each map entry, bound in turn; errors as the one-variable macros have them (`all` and `exists`
/// absorb an error that a later item decides).
fn comprehension2<'a>(
    kind: Macro2,
    range: &Val<'a>,
    (first, second): (usize, usize),
    body: &'a Node,
    filter: Option<&'a Node>,
    act: &Activation<'a>,
    locals: &mut Locals<'a>,
) -> Result<Val<'a>, EvalError> {
    let pairs: Vec<(Val<'a>, Val<'a>)> = match range.kind() {
        Kind::List => range
            .items()?
            .enumerate()
            .map(|(i, v)| (Val::Int(i as i64), v))
            .collect(),
        Kind::Map | Kind::Rec(_) => {
            let mut pairs = Vec::new();
            for key in range.items()? {
                let value = range.get(&key)?.unwrap_or(Val::Null);
                pairs.push((key, value));
            }
            pairs
        }
        _ => return Err(EvalError::no_overload(kind.name(), &[range])),
    };
    let mut error = None;
    let mut count = 0;
    let mut list = Vec::new();
    let mut entries: Vec<(Val<'a>, Val<'a>)> = Vec::new();
    for (key, value) in pairs {
        locals[first] = key.clone();
        locals[second] = value;
        if let Some(f) = filter
            && !boolean(eval(f, act, locals), kind.name())?
        {
            continue;
        }
        match kind {
            Macro2::All | Macro2::Exists => {
                let decisive = kind == Macro2::Exists;
                match boolean(eval(body, act, locals), kind.name()) {
                    Ok(b) if b == decisive => return Ok(Val::Bool(decisive)),
                    Ok(_) => {}
                    Err(e) => error = error.or(Some(e)),
                }
            }
            Macro2::ExistsOne => {
                if boolean(eval(body, act, locals), kind.name())? {
                    count += 1;
                }
            }
            Macro2::TransformList => list.push(eval(body, act, locals)?),
            Macro2::TransformMap => entries.push((key, eval(body, act, locals)?)),
            Macro2::TransformMapEntry => {
                let entry = eval(body, act, locals)?;
                if !matches!(entry.kind(), Kind::Map | Kind::Rec(_)) {
                    return Err(EvalError::no_overload(kind.name(), &[&entry]));
                }
                for k in entry.items()? {
                    if entries.iter().any(|(e, _)| equals(e, &k)) {
                        return Err(EvalError::new(format!(
                            "insert failed: key {} already exists",
                            k.display()
                        )));
                    }
                    let v = entry.get(&k)?.unwrap_or(Val::Null);
                    entries.push((k, v));
                }
            }
        }
    }
    match kind {
        Macro2::All | Macro2::Exists => match error {
            Some(e) => Err(e),
            None => Ok(Val::Bool(kind == Macro2::All)),
        },
        Macro2::ExistsOne => Ok(Val::Bool(count == 1)),
        Macro2::TransformList => Ok(Val::list(list)),
        Macro2::TransformMap | Macro2::TransformMapEntry => Ok(Val::Map(Rc::new(entries))),
    }
}

/// `x op y` on one integer type, checked, with CEL's errors (`integer overflow`, `division by
/// zero`, `modulus by zero`).
macro_rules! integer_op {
    ($op:expr, $x:expr, $y:expr) => {{
        let (x, y) = ($x, $y);
        match $op {
            Op::Div if y == 0 => return Err(EvalError::new("division by zero")),
            Op::Rem if y == 0 => return Err(EvalError::new("modulus by zero")),
            Op::Add => x.checked_add(y),
            Op::Sub => x.checked_sub(y),
            Op::Mul => x.checked_mul(y),
            Op::Div => x.checked_div(y),
            _ => x.checked_rem(y),
        }
        .ok_or_else(|| EvalError::new("integer overflow"))?
    }};
}

fn binary<'a>(op: Op, a: &Val<'a>, b: &Val<'a>) -> Result<Val<'a>, EvalError> {
    use Kind as K;
    Ok(match op {
        Op::Eq => Val::Bool(equals(a, b)),
        Op::Ne => Val::Bool(!equals(a, b)),
        Op::Lt | Op::Le | Op::Gt | Op::Ge
            if matches!(a.kind(), K::Quantity(_) | K::Semver(_))
                || matches!(b.kind(), K::Quantity(_) | K::Semver(_)) =>
        {
            let name = match op {
                Op::Lt => "_<_",
                Op::Le => "_<=_",
                Op::Gt => "_>_",
                _ => "_>=_",
            };
            return Err(EvalError::no_overload(name, &[a, b]));
        }
        Op::Lt => Val::Bool(compare("_<_", a, b)? == Ordering::Less),
        Op::Le => Val::Bool(compare("_<=_", a, b)? != Ordering::Greater),
        Op::Gt => Val::Bool(compare("_>_", a, b)? == Ordering::Greater),
        Op::Ge => Val::Bool(compare("_>=_", a, b)? != Ordering::Less),
        Op::In => match b.kind() {
            K::List => Val::Bool(b.items()?.any(|x| equals(&x, a))),
            K::Map | K::Rec(_) => Val::Bool(b.get(a)?.is_some()),
            _ => return Err(EvalError::no_overload("@in", &[a, b])),
        },
        Op::Add => match (a.kind(), b.kind()) {
            (K::Int(x), K::Int(y)) => Val::Int(integer_op!(op, x, y)),
            (K::Uint(x), K::Uint(y)) => Val::Uint(integer_op!(op, x, y)),
            (K::Double(x), K::Double(y)) => Val::Double(x + y),
            (K::Str(x), K::Str(y)) => {
                let mut s = String::with_capacity(x.len() + y.len());
                s.push_str(x);
                s.push_str(y);
                Val::str(s)
            }
            (K::List, K::List) => {
                let mut out: Vec<Val<'a>> = a.items()?.collect();
                out.extend(b.items()?);
                Val::list(out)
            }
            _ => return Err(EvalError::no_overload("_+_", &[a, b])),
        },
        Op::Sub | Op::Mul | Op::Div | Op::Rem => {
            let name = match op {
                Op::Sub => "_-_",
                Op::Mul => "_*_",
                Op::Div => "_/_",
                _ => "_%_",
            };
            match (a.kind(), b.kind()) {
                (K::Int(x), K::Int(y)) => Val::Int(integer_op!(op, x, y)),
                (K::Uint(x), K::Uint(y)) => Val::Uint(integer_op!(op, x, y)),
                (K::Double(x), K::Double(y)) if op != Op::Rem => Val::Double(match op {
                    Op::Sub => x - y,
                    Op::Mul => x * y,
                    _ => x / y,
                }),
                _ => return Err(EvalError::no_overload(name, &[a, b])),
            }
        }
    })
}
