//! The functions a Helm template can call: Go's built-ins, Helm's own (`include`, `tpl`,
//! `toYaml`, …) and the Sprig library Helm ships, with Go's argument rules and Sprig's
//! conversions (`toString`, `int64`, `default`'s notion of empty).
//!
//! Written by hand: no Rust crate implements Sprig, and the behaviour that matters is Go's
//! (how a `float64` prints, what `empty` means, which types a function accepts).

use std::collections::BTreeMap;
use std::rc::Rc;

use super::pos::Pos;

use super::gostring::{self, go_quote};
use super::value::{MapRef, Value, format_float_g};
use super::{Exec, Failure};
use crate::values::floats;

/// What a function gets besides its arguments: the execution (for `include`/`tpl`).
pub struct Call<'c, 's, 'a> {
    pub(crate) exec: &'c mut Exec<'s, 'a>,
    pub(crate) pos: Pos,
    /// Bit `i`: argument `i` is a nil that came out of a pipeline (`(…)`, a variable set from
    /// one, the piped value), which Go holds as its invalid value and converts to the
    /// parameter type's zero value, so a map parameter gets an empty map. A nil read straight
    /// from a field is a nil interface, which Go refuses for a map parameter.
    pub(crate) unwrapped_nils: u64,
}

impl Call<'_, '_, '_> {
    /// Argument `i` as a map parameter reads it (see [`Call::unwrapped_nils`]).
    fn map_param(&self, a: &[Value], i: usize) -> Result<MapRef, Failure> {
        match a.get(i) {
            Some(Value::Nil) if i < 64 && self.unwrapped_nils & (1 << i) != 0 => {
                Ok(Rc::new(std::cell::RefCell::new(Default::default())))
            }
            _ => map_arg(a, i),
        }
    }
}

mod builtins;
mod conversions;
mod crypto;
mod dates;
mod defaults;
mod dicts;
mod encoding;
mod helm;
mod lists;
mod math;
mod network;
mod paths;
mod printf;
pub use printf::printf;
mod random;
mod reflect;
mod regexp;
mod semver;
mod strings;
mod url;

/// The function table, a slice per category as Sprig's files group them: each entry's names
/// (a function and its `must` or `os` forms) and what it does.
const CATEGORIES: &[&[(&[&str], Func)]] = &[
    builtins::FUNCS,
    printf::FUNCS,
    helm::FUNCS,
    strings::FUNCS,
    regexp::FUNCS,
    conversions::FUNCS,
    defaults::FUNCS,
    reflect::FUNCS,
    lists::FUNCS,
    dicts::FUNCS,
    dates::FUNCS,
    math::FUNCS,
    encoding::FUNCS,
    crypto::FUNCS,
    random::FUNCS,
    semver::FUNCS,
    paths::FUNCS,
    url::FUNCS,
    network::FUNCS,
];

/// A function's arguments: inline for the few most calls have.
pub(crate) type Args = smallvec::SmallVec<[Value; 4]>;

pub(crate) type Func = fn(&mut Call<'_, '_, '_>, Args) -> Result<Value, Failure>;

type R = Result<Value, Failure>;

fn err<T>(message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure::Exec(message.into()))
}

/// The function called `name`, if there is one.
pub(crate) fn lookup(name: &str) -> Option<Func> {
    // A table built once: a call finds its function by one hash, not by matching the name
    // against two hundred string literals.
    static TABLE: std::sync::LazyLock<rustc_hash::FxHashMap<&'static str, Func>> =
        std::sync::LazyLock::new(|| {
            CATEGORIES
                .iter()
                .flat_map(|category| category.iter())
                .flat_map(|(names, f)| names.iter().map(move |n| (*n, *f)))
                .collect()
        });
    TABLE.get(name).copied()
}

// --- argument helpers ---

/// The first four arguments of `genSelfSignedCert` and `genSignedCert`: cn, IPs, DNS names, days.
fn cert_subject(a: &[Value]) -> Result<super::certs::Subject, Failure> {
    Ok(super::certs::Subject {
        cn: string_arg(a, 0)?,
        ips: string_list(&arg(a, 1)?),
        dns: string_list(&arg(a, 2)?),
        days: to_int(&arg(a, 3)?),
    })
}

fn arg(a: &[Value], i: usize) -> R {
    a.get(i).cloned().ok_or_else(|| {
        Failure::Exec(format!(
            "wrong number of args: want at least {}, got {}",
            i + 1,
            a.len()
        ))
    })
}

/// A `string` parameter: Go does not convert other types into it.
fn string_arg(a: &[Value], i: usize) -> Result<String, Failure> {
    str_arg(a, i).map(|s| s.to_string())
}

/// A `string` parameter, shared rather than copied (for the functions templates call most).
fn str_arg(a: &[Value], i: usize) -> Result<Rc<str>, Failure> {
    match arg(a, i)? {
        Value::Str(s) => Ok(s),
        Value::Nil => argument_error(i, "invalid value; expected string"),
        other => argument_error(
            i,
            format!(
                "wrong type for value; expected string; got {}",
                other.type_name()
            ),
        ),
    }
}

fn map_arg(a: &[Value], i: usize) -> Result<MapRef, Failure> {
    match arg(a, i)? {
        Value::Map(m) => Ok(m),
        // A nil read from a map is a nil `interface {}` to Go's argument check.
        Value::Nil => argument_error(
            i,
            "wrong type for value; expected map[string]interface {}; got interface {}",
        ),
        other => argument_error(
            i,
            format!(
                "wrong type for value; expected map[string]interface {{}}; got {}",
                other.type_name()
            ),
        ),
    }
}

/// Argument `index` is not of the parameter's Go type: Go's check before the call.
fn argument_error<T>(index: usize, message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure::Argument {
        index,
        message: message.into(),
    })
}

/// Sprig's `strval`: strings as they are, other values as Go's `%v` prints them.
pub fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        other => {
            let mut s = String::new();
            other.write_go(&mut s);
            s
        }
    }
}

impl Value {
    /// `%v` inside `println`/`print` (nil prints `<nil>`).
    fn to_print_inner(&self) -> String {
        let mut s = String::new();
        self.write_go(&mut s);
        s
    }
}

/// Sprig's (cast's) integer conversion: strings are parsed, floats truncated, others 0.
pub fn to_int(v: &Value) -> i64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i,
        Value::Float(f) => *f as i64,
        Value::Bool(b) => *b as i64,
        Value::Str(s) => go_parse_int(trim_zero_decimal(s)).unwrap_or(0),
        _ => 0,
    }
}

/// `spf13/cast`'s `trimZeroDecimal`: `"12.000"` is `"12"`; other text as it is.
fn trim_zero_decimal(s: &str) -> &str {
    match s.split_once('.') {
        Some((int, frac))
            if !int.is_empty() && !frac.is_empty() && frac.bytes().all(|b| b == b'0') =>
        {
            int
        }
        _ => s,
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`, which Sprig's conversions use through `cast`: a sign,
/// then `0x`, `0o`, `0b` or a leading `0` (octal) for the base, `_` between digits.
fn go_parse_int(s: &str) -> Option<i64> {
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    // Underscores only between digits (or after a base prefix).
    if digits.is_empty()
        || digits.starts_with('_') && radix == 10
        || digits.ends_with('_')
        || digits.contains("__")
    {
        return None;
    }
    let clean: String = digits.chars().filter(|c| *c != '_').collect();
    let magnitude = u64::from_str_radix(&clean, radix).ok()?;
    if neg {
        if magnitude > i64::MAX as u64 + 1 {
            return None;
        }
        Some((magnitude as i128).wrapping_neg() as i64)
    } else {
        i64::try_from(magnitude).ok()
    }
}

/// Go's `reflect.DeepEqual` on two template values, which Sprig's `has`, `without`, `uniq`
/// and `deepEqual` use: the same Go type and the same contents (`1` is not `1.0`, an `int`
/// not an `int64`).
pub fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Nil, Value::Nil) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) | (Value::Int64(x), Value::Int64(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y,
        (Value::Str(x), Value::Str(y)) => x == y,
        (Value::Bytes(x), Value::Bytes(y)) => x == y,
        (Value::List(x), Value::List(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| deep_equal(p, q))
        }
        (Value::Map(x), Value::Map(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        (Value::Object(x), Value::Object(y)) => std::rc::Rc::ptr_eq(x, y),
        _ => false,
    }
}

pub fn to_float(v: &Value) -> f64 {
    match v {
        Value::Int(i) | Value::Int64(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => *b as i64 as f64,
        Value::Str(s) => s.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn to_list(v: &Value) -> Vec<Value> {
    match v {
        Value::List(l) => l.as_ref().clone(),
        Value::Bytes(b) => b.iter().map(|x| Value::Int(*x as i64)).collect(),
        Value::Nil => Vec::new(),
        other => vec![other.clone()],
    }
}

/// A list of strings (`genSelfSignedCert`'s IPs and names); `nil` is none.
fn string_list(v: &Value) -> Vec<String> {
    to_list(v).iter().map(strval).collect()
}

fn to_list_strict(v: &Value, what: &str) -> Result<Vec<Value>, Failure> {
    match v {
        Value::List(l) => Ok(l.as_ref().clone()),
        Value::Nil => Ok(Vec::new()),
        other => err(format!("Cannot {what} on type {}", other.type_name())),
    }
}

/// Sprig's `empty`.
pub fn empty(v: &Value) -> bool {
    match v {
        // Sprig's `empty` by Go kind: a Go map (`.Files`, `.Files.Glob`'s result) is empty
        // without entries, a struct never.
        Value::Object(o) => o.entries().is_some_and(|e| e.is_empty()),
        v => !v.truthy(),
    }
}

/// The longest list `until`/`untilStep` build: far beyond real charts, small enough that a
/// template cannot exhaust memory with one call.
const MAX_LIST: i64 = 1_000_000;

/// Sprig's `untilStep`: `start`, `start + step`, … while short of `stop`. Counted in `i128`,
/// so that bounds near `int64`'s ends neither overflow nor wrap around: where Go's `i +=
/// step` would wrap past `int64` and loop for ever, this is an error.
fn range_list(start: i64, stop: i64, step: i64) -> R {
    let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
    let count = if stop < start {
        if step >= 0 {
            0
        } else {
            (start - stop + (-step) - 1) / (-step)
        }
    } else if step <= 0 {
        0
    } else {
        (stop - start + step - 1) / step
    };
    if count > MAX_LIST as i128 {
        return err(format!(
            "a list of {count} items is more than winguard builds"
        ));
    }
    let last = start + step * (count - 1).max(0);
    if count > 0 && i64::try_from(last + step).is_err() {
        return err("the list's counter would wrap past int64 and never reach its end");
    }
    Ok(Value::list(
        (0..count)
            .map(|k| Value::Int((start + step * k) as i64))
            .collect(),
    ))
}

fn seq(_: &mut Call<'_, '_, '_>, a: Args) -> R {
    let n: Vec<i64> = a.iter().map(to_int).collect();
    let toward = |start: i64, end: i64| if end < start { -1 } else { 1 };
    // Sprig: `untilStep(start, end + increment, step)`, with Go's wrapping `+`.
    let (start, stop, step) = match n.as_slice() {
        [end] => (1, end.wrapping_add(toward(1, *end)), toward(1, *end)),
        [start, end] => (
            *start,
            end.wrapping_add(toward(*start, *end)),
            toward(*start, *end),
        ),
        [start, step, end] => {
            if end < start && *step > 0 {
                return Ok(Value::from(""));
            }
            (*start, end.wrapping_add(toward(*start, *end)), *step)
        }
        _ => return Ok(Value::from("")),
    };
    let Value::List(items) = range_list(start, stop, step)? else {
        return Ok(Value::from(""));
    };
    let parts: Vec<String> = items.iter().map(|v| v.to_print_inner()).collect();
    Ok(Value::from(parts.join(" ")))
}

/// Sprig's `merge`/`mergeOverwrite` (mergo): the sources into the first dict, in place.
fn merge(a: Args, overwrite: bool) -> R {
    let dst = map_arg(&a, 0)?;
    for src in &a[1..] {
        if let Value::Map(src) = src {
            if src.borrow().values().any(|v| v.holds(&dst)) || Rc::ptr_eq(src, &dst) {
                continue;
            }
            merge_into(&mut dst.borrow_mut(), &src.borrow(), overwrite);
        }
    }
    Ok(Value::Map(dst))
}

fn merge_into(dst: &mut BTreeMap<String, Value>, src: &BTreeMap<String, Value>, overwrite: bool) {
    for (k, v) in src {
        match (dst.get_mut(k), v) {
            (Some(Value::Map(d)), Value::Map(s)) => {
                if !Rc::ptr_eq(d, s) {
                    merge_into(&mut d.borrow_mut(), &s.borrow(), overwrite);
                }
            }
            (Some(existing), v) => {
                if overwrite || empty(existing) {
                    *existing = v.clone();
                }
            }
            (None, v) => {
                dst.insert(k.clone(), v.clone());
            }
        }
    }
}

fn len(_: &mut Call<'_, '_, '_>, a: Args) -> R {
    Ok(Value::Int(match arg(&a, 0)? {
        Value::Str(s) => gostring::byte_len(&s) as i64,
        Value::Bytes(b) => b.len() as i64,
        Value::List(l) => l.len() as i64,
        Value::Map(m) => m.borrow().len() as i64,
        // A Go map underneath (`.Files`, `.Files.Glob`): its number of entries.
        Value::Object(o) if o.entries().is_some() => o.entries().map_or(0, |e| e.len()) as i64,
        Value::Nil => return err("len of nil pointer"),
        other => return err(format!("len of type {}", other.type_name())),
    }))
}

fn index(_: &mut Call<'_, '_, '_>, a: Args) -> R {
    let mut cur = arg(&a, 0)?;
    for key in &a[1..] {
        cur = match (&cur, key) {
            (Value::List(l), Value::Int(i) | Value::Int64(i)) => match l.get(*i as usize) {
                Some(v) if *i >= 0 => v.clone(),
                _ => return err(format!("error calling index: index out of range: {i}")),
            },
            (Value::Map(m), Value::Str(k)) => m.borrow().get(&**k).cloned().unwrap_or(Value::Nil),
            (Value::Object(o), Value::Str(k)) if o.index(k).is_some() => {
                o.index(k).unwrap_or(Value::Nil)
            }
            // Go indexes a string's bytes (a `uint8`, printed as a number).
            (Value::Str(s), Value::Int(i) | Value::Int64(i)) => {
                match usize::try_from(*i).ok().and_then(|i| s.as_bytes().get(i)) {
                    Some(b) => Value::Int(i64::from(*b)),
                    None => {
                        return err(format!("error calling index: index out of range: {i}"));
                    }
                }
            }
            (Value::Map(_), Value::Nil) => Value::Nil,
            (Value::Nil, _) => return err("error calling index: index of untyped nil"),
            (Value::List(_), other) => {
                return err(format!(
                    "cannot index slice/array with type {}",
                    other.type_name()
                ));
            }
            (other, _) => return err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(cur)
}

/// Sprig's `slice LIST [START [END]]`, which Helm's function map puts in place of Go's
/// built-in: lists only (a string is an error), an empty list is nil, bounds out of range are
/// Go's `reflect` panic.
fn slice(_: &mut Call<'_, '_, '_>, a: Args) -> R {
    let list = match arg(&a, 0)? {
        Value::List(l) => l,
        Value::Nil => return err("reflect: call of reflect.TypeOf on nil"),
        other => {
            return err(format!(
                "list should be type of slice or array but {}",
                other.kind_name()
            ));
        }
    };
    if list.is_empty() {
        return Ok(Value::Nil);
    }
    let start = a.get(1).map_or(0, to_int);
    let end = a.get(2).map_or(list.len() as i64, to_int);
    match (usize::try_from(start), usize::try_from(end)) {
        (Ok(s), Ok(e)) if s <= e && e <= list.len() => Ok(Value::list(list[s..e].to_vec())),
        _ => err(format!(
            "reflect: slice index out of range [{start}:{end}] with length {}",
            list.len()
        )),
    }
}

/// Go's basic kinds, for `eq` and the ordering functions.
#[derive(PartialEq, Clone, Copy)]
enum Kind {
    Bool,
    Int,
    Float,
    Str,
    Other,
}

fn kind(v: &Value) -> Kind {
    match v {
        Value::Bool(_) => Kind::Bool,
        Value::Int(_) | Value::Int64(_) => Kind::Int,
        Value::Float(_) => Kind::Float,
        Value::Str(_) => Kind::Str,
        _ => Kind::Other,
    }
}

fn eq(_: &mut Call<'_, '_, '_>, a: Args) -> R {
    let first = arg(&a, 0)?;
    if a.len() < 2 {
        return err("missing argument for comparison");
    }
    let k1 = kind(&first);
    for other in &a[1..] {
        let k2 = kind(other);
        let truth = if k1 != k2 {
            if !first.is_nil() && !other.is_nil() {
                return err("incompatible types for comparison");
            }
            false
        } else {
            match (&first, other) {
                (Value::Bool(x), Value::Bool(y)) => x == y,
                (Value::Int(x) | Value::Int64(x), Value::Int(y) | Value::Int64(y)) => x == y,
                (Value::Float(x), Value::Float(y)) => x == y,
                (Value::Str(x), Value::Str(y)) => x == y,
                (Value::Nil, Value::Nil) => true,
                (Value::Nil, _) | (_, Value::Nil) => false,
                (x, _) => {
                    return err(format!(
                        "non-comparable type {}: {}",
                        x.to_print(),
                        x.type_name()
                    ));
                }
            }
        };
        if truth {
            return Ok(Value::Bool(true));
        }
    }
    Ok(Value::Bool(false))
}

fn compare(a: &[Value], test: fn(std::cmp::Ordering) -> bool) -> R {
    let (x, y) = (arg(a, 0)?, arg(a, 1)?);
    let (k1, k2) = (kind(&x), kind(&y));
    if k1 == Kind::Other || k1 == Kind::Bool {
        return err("invalid type for comparison");
    }
    if k1 != k2 {
        return err("incompatible types for comparison");
    }
    let ord = match (&x, &y) {
        (Value::Int(p) | Value::Int64(p), Value::Int(q) | Value::Int64(q)) => p.cmp(q),
        (Value::Float(p), Value::Float(q)) => p.partial_cmp(q).unwrap_or(std::cmp::Ordering::Equal),
        (Value::Str(p), Value::Str(q)) => p.cmp(q),
        _ => return err("invalid type for comparison"),
    };
    Ok(Value::Bool(test(ord)))
}

/// Go's `fmt.Sprint`: a space between operands when neither is a string.
fn go_print(a: &[Value]) -> String {
    let mut out = String::new();
    for (i, v) in a.iter().enumerate() {
        if i > 0 && !matches!(v, Value::Str(_)) && !matches!(a[i - 1], Value::Str(_)) {
            out.push(' ');
        }
        v.write_go(&mut out);
    }
    out
}

/// Masterminds' `goutils.AbbreviateFull`, which `abbrev` and `abbrevboth` call: byte offsets
/// into the string, as Go slices it (a character cut in two becomes U+FFFD here, invalid
/// UTF-8 there). Its errors (widths under 4, or 7 with an offset) give an empty string.
fn abbreviate_full(s: &str, offset: i64, max_width: i64) -> String {
    let bytes = s.as_bytes();
    let len = bytes.len() as i64;
    let text = |from: i64, to: i64| {
        let (from, to) = (from.clamp(0, len) as usize, to.clamp(0, len) as usize);
        String::from_utf8_lossy(&bytes[from..to.max(from)]).into_owned()
    };
    if s.is_empty() {
        return String::new();
    }
    if max_width < 4 {
        return String::new();
    }
    if len <= max_width {
        return s.to_string();
    }
    let mut offset = offset.min(len);
    if len - offset < max_width - 3 {
        offset = len - (max_width - 3);
    }
    if offset <= 4 {
        return text(0, max_width - 3) + "...";
    }
    if max_width < 7 {
        return String::new();
    }
    if offset + max_width - 3 < len {
        let rest = text(offset, len);
        return "...".to_string() + &abbreviate_full(&rest, 0, max_width - 3);
    }
    "...".to_string() + &text(len - (max_width - 3), len)
}

/// The largest string a function builds from a count it is given (`repeat`, `indent`,
/// `printf`'s padding): what a template can ask for in one call without exhausting memory.
pub(crate) const MAX_BUILT: usize = 64 << 20;

/// `indent`'s count, when the result stays within [`MAX_BUILT`].
fn indent_width(n: &Value, text: &str) -> Result<usize, Failure> {
    let n = usize::try_from(to_int(n)).unwrap_or(0);
    let lines = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
    if n.saturating_mul(lines).saturating_add(text.len()) > MAX_BUILT {
        return err(format!(
            "indent: the result would exceed {} MiB",
            MAX_BUILT >> 20
        ));
    }
    Ok(n)
}

/// The result of `indent`/`nindent` (`out`, `lead` bytes before the indented `text`) of the
/// argument `arg`: when that is a traced string (an `include`'s text), so is the result, its
/// marks moved as the indentation moves the text.
fn traced_indent(
    c: &mut Call<'_, '_, '_>,
    arg: Option<&Value>,
    text: &str,
    out: String,
    n: usize,
    lead: usize,
) -> Value {
    let out: Rc<str> = out.into();
    if let Some(Value::Str(original)) = arg
        && let Some(marks) = c.exec.trace_of(original)
    {
        // A line's bytes move by the indentation before it; a stretch copied from a template
        // is cut at each line, as the padding now splits it.
        let newlines: Vec<usize> = memchr::memchr_iter(b'\n', text.as_bytes()).collect();
        let moved_to = |o: usize| o + lead + n * (1 + newlines.partition_point(|&i| i < o));
        let mut moved = Vec::with_capacity(marks.len() + newlines.len());
        for (k, m) in marks.iter().enumerate() {
            let start = m.out as usize;
            let end = marks
                .get(k + 1)
                .map_or(text.len(), |next| next.out as usize);
            moved.push(super::Mark {
                out: moved_to(start) as u32,
                ..*m
            });
            if m.hole {
                continue;
            }
            let first = newlines.partition_point(|&i| i < start);
            for &nl in newlines[first..].iter().take_while(|&&i| i + 1 < end) {
                let line = nl + 1;
                moved.push(super::Mark {
                    out: moved_to(line) as u32,
                    src: if m.verbatim {
                        m.src + (line - start) as u32
                    } else {
                        m.src
                    },
                    ..*m
                });
            }
        }
        c.exec.trace(&out, moved);
    }
    Value::Str(out)
}

/// Sprig's `indent`: every line, the first included, gets `n` spaces.
fn indent(n: usize, s: &str) -> String {
    let mut out = String::new();
    indent_into(&mut out, n, s);
    out
}

fn indent_into(out: &mut String, n: usize, s: &str) {
    let lines = memchr::memchr_iter(b'\n', s.as_bytes()).count() + 1;
    out.reserve(s.len() + lines * n);
    for (i, line) in s.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.extend(std::iter::repeat_n(' ', n));
        out.push_str(line);
    }
}

/// Go's `strings.ReplaceAll` (an empty `old` inserts `new` between every character).
fn go_replace_all(s: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        let mut out = String::from(new);
        for c in s.chars() {
            out.push(c);
            out.push_str(new);
        }
        return out;
    }
    s.replace(old, new)
}

/// Go's `strings.Split` (an empty separator splits into characters).
fn go_split(s: &str, sep: &str) -> Vec<String> {
    if sep.is_empty() {
        return s.chars().map(String::from).collect();
    }
    s.split(sep).map(String::from).collect()
}

fn substr(s: &str, start: i64, end: i64) -> String {
    let len = s.len() as i64;
    let start = start.max(0);
    if start > len {
        return String::new();
    }
    let end = if end < 0 || end > len { len } else { end };
    if end < start {
        return String::new();
    }
    s.get(start as usize..end as usize)
        .unwrap_or("")
        .to_string()
}

fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_letter = false;
    for c in s.chars() {
        if !prev_letter {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_letter = c.is_alphanumeric() || c == '_' || c == '\'';
    }
    out
}

fn untitle(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_space = true;
    for c in s.chars() {
        if prev_space {
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
        prev_space = c.is_whitespace();
    }
    out
}

fn snake_case(s: &str) -> String {
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            if i > 0
                && (chars[i - 1].is_lowercase()
                    || chars[i - 1].is_ascii_digit()
                    || chars.get(i + 1).is_some_and(|n| n.is_lowercase())
                        && chars[i - 1].is_uppercase())
            {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else if *c == ' ' || *c == '-' {
            out.push('_');
        } else {
            out.push(*c);
        }
    }
    out
}

fn camel_case(s: &str) -> String {
    s.split(['_', ' ', '-'])
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect()
}

fn wrap(s: &str, width: usize, newline: &str) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    for (i, word) in s.split(' ').enumerate() {
        if i > 0 {
            if line_len + 1 + word.len() > width {
                out.push_str(newline);
                line_len = 0;
            } else {
                out.push(' ');
                line_len += 1;
            }
        }
        out.push_str(word);
        line_len += word.len();
    }
    out
}

/// A compiled regex, kept for the next call with the same pattern (templates call the
/// `regex*` functions in loops). Shared, not cloned: a cloned `Regex` starts a search cache of
/// its own, which costs more than the search.
pub(crate) fn regex(pattern: &str) -> Result<std::rc::Rc<regex::Regex>, Failure> {
    thread_local! {
        static CACHE: std::cell::RefCell<rustc_hash::FxHashMap<String, std::rc::Rc<regex::Regex>>> =
            std::cell::RefCell::new(rustc_hash::FxHashMap::default());
    }
    if let Some(re) = CACHE.with(|c| c.borrow().get(pattern).cloned()) {
        return Ok(re);
    }
    let re = std::rc::Rc::new(
        regex::Regex::new(&go_class_dashes(pattern))
            .map_err(|e| Failure::Exec(format!("error parsing regexp: {e}")))?,
    );
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() > 1000 {
            c.clear();
        }
        c.insert(pattern.to_string(), re.clone());
    });
    Ok(re)
}

/// Go's RE2 reading of `-` in a character class, for the `regex` crate: Go (in Perl mode, as
/// `regexp.Compile` parses) takes a `-` after a class escape (`\w`, `\d`, `\pL`,
/// `[:alpha:]`) or after a range as a literal (`[\w-\.]`, `[a-z-_]`), where the `regex` crate
/// reports an invalid range. Those dashes are escaped; everything else passes through as it
/// is. By hand: no crate translates between the two dialects, and this is their one
/// difference charts meet.
fn go_class_dashes(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains('[') || !pattern.contains('-') {
        return std::borrow::Cow::Borrowed(pattern);
    }
    /// What the class item before the cursor was.
    #[derive(PartialEq)]
    enum Before {
        /// Nothing (the class just opened): a `-` here is literal, as in both dialects.
        Start,
        /// One character: a `-` after it makes a range.
        Char,
        /// A class escape or a whole range: a `-` after it is literal in Go.
        Set,
    }
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::with_capacity(pattern.len() + 4);
    let mut i = 0;
    let mut in_class = false;
    let mut before = Before::Start;
    // Copies an escape (`\x`, `\pL`, `\p{Greek}`) at `i`; true if it names a class.
    let copy_escape = |i: &mut usize, out: &mut String| -> bool {
        out.push('\\');
        *i += 1;
        let Some(&c) = chars.get(*i) else {
            return false;
        };
        out.push(c);
        *i += 1;
        match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => true,
            'p' | 'P' => {
                if chars.get(*i) == Some(&'{') {
                    while let Some(&n) = chars.get(*i) {
                        out.push(n);
                        *i += 1;
                        if n == '}' {
                            break;
                        }
                    }
                } else if let Some(&n) = chars.get(*i) {
                    out.push(n);
                    *i += 1;
                }
                true
            }
            _ => false,
        }
    };
    while i < chars.len() {
        let c = chars[i];
        if !in_class {
            match c {
                '\\' => {
                    copy_escape(&mut i, &mut out);
                }
                '[' => {
                    in_class = true;
                    before = Before::Start;
                    out.push('[');
                    i += 1;
                    if chars.get(i) == Some(&'^') {
                        out.push('^');
                        i += 1;
                    }
                    // A `]` first in a class is itself.
                    if chars.get(i) == Some(&']') {
                        out.push(']');
                        i += 1;
                        before = Before::Char;
                    }
                }
                _ => {
                    out.push(c);
                    i += 1;
                }
            }
            continue;
        }
        match c {
            ']' => {
                in_class = false;
                out.push(']');
                i += 1;
            }
            '\\' => {
                before = if copy_escape(&mut i, &mut out) {
                    Before::Set
                } else {
                    Before::Char
                };
            }
            '[' if chars.get(i + 1) == Some(&':') => {
                while let Some(&n) = chars.get(i) {
                    out.push(n);
                    i += 1;
                    if n == ']' {
                        break;
                    }
                }
                before = Before::Set;
            }
            '-' if before == Before::Char && chars.get(i + 1).is_some_and(|n| *n != ']') => {
                // A range: the dash and its end.
                out.push('-');
                i += 1;
                if chars.get(i) == Some(&'\\') {
                    copy_escape(&mut i, &mut out);
                } else if let Some(&n) = chars.get(i) {
                    out.push(n);
                    i += 1;
                }
                before = Before::Set;
            }
            '-' => {
                if before == Before::Set && chars.get(i + 1).is_some_and(|n| *n != ']') {
                    out.push_str("\\-");
                } else {
                    out.push('-');
                }
                i += 1;
                before = Before::Char;
            }
            _ => {
                out.push(c);
                i += 1;
                before = Before::Char;
            }
        }
    }
    std::borrow::Cow::Owned(out)
}

fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\'' => out.push_str("&#39;"),
            '"' => out.push_str("&#34;"),
            '\0' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

fn js_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '"' => out.push_str("\\\""),
            '<' => out.push_str("\\u003C"),
            '>' => out.push_str("\\u003E"),
            '&' => out.push_str("\\u0026"),
            '=' => out.push_str("\\u003D"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn query_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn error_map(message: &str) -> Value {
    let mut m = BTreeMap::new();
    m.insert("Error".to_string(), Value::from(message));
    Value::map(m)
}

fn from_yaml_map(text: &str) -> Value {
    match super::yaml::parse_values(text) {
        Ok(v @ Value::Map(_)) => v,
        Ok(Value::Nil) => Value::map(BTreeMap::new()),
        Ok(other) => error_map(&format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            other.kind_name()
        )),
        Err(e) => error_map(&e),
    }
}

fn from_yaml_list(text: &str) -> Value {
    match super::yaml::parse_values(text) {
        Ok(v @ Value::List(_)) => v,
        Ok(Value::Nil) => Value::list(Vec::new()),
        Ok(other) => Value::list(vec![Value::from(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
            other.kind_name()
        ))]),
        Err(e) => Value::list(vec![Value::from(e)]),
    }
}

/// Go's `json.Marshal`: `<`, `>` and `&` escaped as Go escapes them for HTML safety.
pub fn to_json(v: &Value) -> String {
    go_json_escape(serde_json::to_string(&super::value::AsJson(&v.to_data())).unwrap_or_default())
}

fn to_pretty_json(v: &Value) -> String {
    let text =
        serde_json::to_string_pretty(&super::value::AsJson(&v.to_data())).unwrap_or_default();
    go_json_escape(text)
}

/// Go's encoder also escapes `<`, `>`, `&` and the two Unicode line separators; most JSON has
/// none, and is returned as it is.
fn go_json_escape(s: String) -> String {
    // 0xE2 leads the UTF-8 bytes of U+2028 and U+2029.
    if !s.bytes().any(|b| matches!(b, b'<' | b'>' | b'&' | 0xE2)) {
        return s;
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Go's `path.Base`.
fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

/// Go's `path.Dir`.
fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

/// Go's `path.Clean`.
fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Sprig's `urlParse`: Go's `url.Parse` parts as a dict (`scheme`, `host`, `hostname`, `path`,
/// `query`, `opaque`, `fragment`, `userinfo`).
fn url_parse(text: &str) -> Value {
    let mut m = BTreeMap::new();
    let (rest, fragment) = text.split_once('#').unwrap_or((text, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, rest) = match rest.split_once("://") {
        Some((s, r))
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            (s, r)
        }
        _ => ("", rest),
    };
    let (authority, path) = if scheme.is_empty() {
        ("", rest)
    } else {
        match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, ""),
        }
    };
    let (userinfo, host) = authority.rsplit_once('@').unwrap_or(("", authority));
    let hostname = if host.starts_with('[') {
        host.split(']').next().unwrap_or("").trim_start_matches('[')
    } else {
        host.split(':').next().unwrap_or("")
    };
    for (k, v) in [
        ("scheme", scheme),
        ("host", host),
        ("hostname", hostname),
        ("path", path),
        ("query", query),
        ("opaque", ""),
        ("fragment", fragment),
        ("userinfo", userinfo),
    ] {
        m.insert(k.to_string(), Value::from(v));
    }
    Value::map(m)
}

#[cfg(test)]
mod tests {
    #[test]
    fn class_dashes_read_as_go_reads_them() {
        for (go, rust) in [
            (r"^[\w-\.]+$", r"^[\w\-\.]+$"),
            (r"[a-z-_]", r"[a-z\-_]"),
            (r"[-a-z]", r"[-a-z]"),
            (r"[a-]", r"[a-]"),
            (r"[\pL-x]", r"[\pL\-x]"),
            (r"[[:alpha:]-9]", r"[[:alpha:]\-9]"),
            (r"a-b[^]-x]", r"a-b[^]-x]"),
            (r"\[-\]", r"\[-\]"),
        ] {
            assert_eq!(super::go_class_dashes(go), rust, "{go}");
            assert!(
                regex::Regex::new(&super::go_class_dashes(go)).is_ok(),
                "{go}"
            );
        }
        assert!(super::regex(r"^[\w-\.]+$").is_ok_and(|re| re.is_match("a-b.c")));
    }

    /// Go's `strconv.Quote` on plain text, escapes at either end and in the middle, and
    /// multi-byte characters between runs of ASCII.
    #[test]
    fn quote_escapes_as_go_does() {
        for (input, quoted) in [
            ("", r#""""#),
            ("plain text", r#""plain text""#),
            ("\"start", r#""\"start""#),
            ("end\\", r#""end\\""#),
            ("a\nb\tc\u{7}d", r#""a\nb\tc\ad""#),
            ("caf\u{e9} \u{1}x", r#""café \x01x""#),
            ("\u{85}z", r#""\u0085z""#),
        ] {
            assert_eq!(super::go_quote(input), quoted, "{input:?}");
        }
    }

    /// No function is named twice in the table (the later entry would silently win over the
    /// other), and each name finds its function.
    #[test]
    fn every_name_is_in_the_table_once() {
        let mut seen = std::collections::HashSet::new();
        for (names, _) in super::CATEGORIES.iter().flat_map(|c| c.iter()) {
            for n in names.iter() {
                assert!(seen.insert(*n), "{n} is in the table twice");
                assert!(super::lookup(n).is_some(), "{n}");
            }
        }
        assert!(seen.contains("include") && seen.contains("mustRegexSplit"));
    }
}
