//! The functions every expression may call: CEL's standard definitions and the Kubernetes CEL
//! libraries that fit a linter (strings, lists, regex, optional values, quantity, semver), as
//! `k8s.io/apiserver/pkg/cel/library` and cel-go's `ext` define them.

use std::cmp::Ordering;
use std::rc::Rc;

use regex::Regex;

use super::Registry;
use super::eval::{Args, Call, EvalError, Kind, Val, compare, equals};
use super::go_url::Url;
use super::net::{self, Net};
use super::quantity::Quantity;
use super::semver::Semver;
use std::net::IpAddr;

type R<'a> = Result<Val<'a>, EvalError>;

fn err(message: impl Into<String>) -> EvalError {
    EvalError::new(message)
}

fn s<'v>(v: &'v Val<'_>) -> &'v str {
    // Overload resolution guarantees the kind; an empty string is never reached in practice.
    v.as_str().unwrap_or_default()
}

fn int(v: &Val<'_>) -> i64 {
    v.as_i64().unwrap_or_default()
}

fn prepare_regex(pattern: &str) -> Result<Box<dyn std::any::Any + Send + Sync>, String> {
    Regex::new(pattern)
        .map(|r| Box::new(r) as Box<dyn std::any::Any + Send + Sync>)
        .map_err(|e| format!("invalid regular expression: {e}"))
}

/// The call's regex: prepared at load for a literal pattern, else compiled now.
fn regex<'r>(
    call: &'r Call<'_>,
    pattern: &str,
    owned: &'r mut Option<Regex>,
) -> Result<&'r Regex, EvalError> {
    if let Some(r) = call.prepared::<Regex>() {
        return Ok(r);
    }
    let r = Regex::new(pattern).map_err(|e| err(format!("invalid regular expression: {e}")))?;
    Ok(owned.insert(r))
}

fn to_uint<'a>(_: &Call<'a>, a: &mut Args<'a>) -> R<'a> {
    match a[0].kind() {
        Kind::Int(i) => u64::try_from(i)
            .map(Val::Uint)
            .map_err(|_| err("uint out of range")),
        Kind::Uint(u) => Ok(Val::Uint(u)),
        Kind::Double(d) if (0.0..18446744073709551616.0).contains(&d) => Ok(Val::Uint(d as u64)),
        Kind::Str(t) => t
            .parse()
            .map(Val::Uint)
            .map_err(|_| err(format!("cannot convert '{t}' to uint"))),
        _ => Err(err("uint out of range")),
    }
}

mod core;
mod lists;
mod network;
mod optionals;
mod quantities;
mod regexes;
mod semvers;
mod sets;
mod strings;
mod urls;

/// Registers the standard library, one library after another.
pub fn register(r: &mut Registry) {
    core::register(r);
    strings::register(r);
    regexes::register(r);
    sets::register(r);
    lists::register(r);
    optionals::register(r);
    quantities::register(r);
    semvers::register(r);
    network::register(r);
    urls::register(r);
}

fn q(v: &Val<'_>) -> Result<Quantity, EvalError> {
    match v {
        Val::Quantity(q) => Ok(**q),
        other => Err(EvalError::new(format!(
            "{} is not a quantity",
            other.type_name()
        ))),
    }
}

fn substring<'a>(text: &str, start: i64, end: Option<i64>) -> R<'a> {
    let n = text.chars().count() as i64;
    let end = end.unwrap_or(n);
    if start < 0 || end > n || start > end {
        return Err(err(format!(
            "substring({start}, {end}) out of range of a string of length {n}"
        )));
    }
    Ok(Val::str(
        text.chars()
            .skip(start as usize)
            .take((end - start) as usize)
            .collect::<String>(),
    ))
}

/// Go's `strings.SplitN`: an empty separator splits after each code point.
fn split<'a>(text: &str, sep: &str, n: i64) -> Val<'a> {
    if n == 0 {
        return Val::list(Vec::new());
    }
    let parts: Vec<Val> = if sep.is_empty() {
        let chars: Vec<&str> = text
            .char_indices()
            .map(|(i, c)| &text[i..i + c.len_utf8()])
            .collect();
        match usize::try_from(n) {
            Ok(n) if n < chars.len() => {
                let cut: usize = chars[..n - 1].iter().map(|c| c.len()).sum();
                chars[..n - 1]
                    .iter()
                    .map(|c| Val::str(*c))
                    .chain([Val::str(&text[cut..])])
                    .collect()
            }
            _ => chars.into_iter().map(Val::str).collect(),
        }
    } else if n < 0 {
        text.split(sep).map(Val::str).collect()
    } else {
        text.splitn(n as usize, sep).map(Val::str).collect()
    };
    Val::list(parts)
}

fn join<'a>(list: &Val<'_>, sep: &str) -> R<'a> {
    let mut out = String::new();
    for (i, item) in list.items()?.enumerate() {
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(
            item.as_str()
                .ok_or_else(|| err("join of a list with a non-string item"))?,
        );
    }
    Ok(Val::str(out))
}

fn semver<'a>(text: &str, normalize: bool) -> R<'a> {
    // The last version read, per thread: rules read the same one (the config's Kubernetes
    // version) for every object, so it is parsed once, not once per object.
    type Last = Option<(String, bool, Rc<Semver>)>;
    thread_local!(static LAST: std::cell::RefCell<Last> = const { std::cell::RefCell::new(None) });
    if let Some(v) = LAST.with_borrow(|last| match last {
        Some((t, n, v)) if t == text && *n == normalize => Some(v.clone()),
        _ => None,
    }) {
        return Ok(Val::Semver(v));
    }
    let v = Rc::new(
        Semver::parse(text, normalize).map_err(|e| err(format!("invalid semver: {text}: {e}")))?,
    );
    LAST.set(Some((text.to_string(), normalize, v.clone())));
    Ok(Val::Semver(v))
}

/// `strings.quote`, as cel-go's strings extension writes it: the C escapes for `\a \b \f \n
/// \r \t \v`, backslash and double quote escaped, everything else as it is.
fn quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The largest precision `format` takes (`%.100f`).
const MAX_PRECISION: usize = 100;

/// `string.format(list)`, as cel-go's strings extension (version 1 and later) does it: a clause
/// is `%` with an optional precision (`%.3f`) and a verb; each takes the next argument.
/// Written here because the verbs and their value rules are cel-go's own, not Rust's or C's.
fn format(template: &str, args: &Val<'_>) -> Result<String, EvalError> {
    let mut out = String::with_capacity(template.len() + 16);
    let mut next = 0usize;
    let mut rest = template;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        rest = &rest[at + 1..];
        if let Some(after) = rest.strip_prefix('%') {
            out.push('%');
            rest = after;
            continue;
        }
        let mut precision = None;
        if let Some(after) = rest.strip_prefix('.') {
            let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            // Capped: `%.999999999f` would otherwise ask for a string of that many digits.
            precision = Some(
                after[..digits]
                    .parse::<usize>()
                    .ok()
                    .filter(|p| *p <= MAX_PRECISION)
                    .ok_or_else(|| {
                        err(format!(
                            "could not parse formatting clause: a precision of at most {MAX_PRECISION} digits"
                        ))
                    })?,
            );
            rest = &after[digits..];
        }
        let Some(verb) = rest.chars().next() else {
            return Err(err(
                "could not parse formatting clause: unrecognized formatting clause",
            ));
        };
        rest = &rest[verb.len_utf8()..];
        let arg = args
            .at(next)
            .ok_or_else(|| err(format!("index {next} out of range")))?;
        next += 1;
        format_clause(&mut out, verb, precision, &arg)?;
    }
    out.push_str(rest);
    Ok(out)
}

/// A double's special values as cel-go's formatting clauses write them, if it is one.
fn special_double(d: f64) -> Option<&'static str> {
    if d.is_nan() {
        Some("NaN")
    } else if d.is_infinite() {
        Some(if d > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        None
    }
}

fn format_clause(
    out: &mut String,
    verb: char,
    precision: Option<usize>,
    arg: &Val<'_>,
) -> Result<(), EvalError> {
    let wrong = |what: &str| err(format!("error during formatting: {what}"));
    let kind = arg.kind();
    // An integer as sign and magnitude (every integer verb writes `-` then the digits), and
    // any number as a double (the fixed-point and scientific verbs take all three).
    let integer = match kind {
        Kind::Int(i) => Some((if i < 0 { "-" } else { "" }, i.unsigned_abs())),
        Kind::Uint(u) => Some(("", u)),
        _ => None,
    };
    let float = match kind {
        Kind::Double(d) => Some(d),
        Kind::Int(i) => Some(i as f64),
        Kind::Uint(u) => Some(u as f64),
        _ => None,
    };
    let digits = precision.unwrap_or(6);
    let text = match (verb, integer, float) {
        ('s', ..) => return format_string(out, arg),
        ('d', Some((sign, n)), _) => format!("{sign}{n}"),
        ('d' | 'f' | 'e', _, Some(d)) if let Some(special) = special_double(d) => {
            special.to_string()
        }
        ('d', ..) => return Err(wrong("decimal clause can only be used on integers")),
        ('f', _, Some(d)) => format!("{d:.digits$}"),
        ('f', ..) => return Err(wrong("fixed-point clause can only be used on doubles")),
        ('e', _, Some(d)) => scientific(d, digits),
        ('e', ..) => return Err(wrong("scientific clause can only be used on doubles")),
        ('b', Some((sign, n)), _) => format!("{sign}{n:b}"),
        ('b', ..) => match kind {
            Kind::Bool(b) => if b { "1" } else { "0" }.to_string(),
            _ => return Err(wrong("only integers and bools can be formatted as binary")),
        },
        ('o', Some((sign, n)), _) => format!("{sign}{n:o}"),
        ('o', ..) => return Err(wrong("octal clause can only be used on integers")),
        ('x' | 'X', ..) => {
            let hex = match (integer, kind) {
                (Some((sign, n)), _) => format!("{sign}{n:x}"),
                (_, Kind::Str(t)) => t.bytes().map(|b| format!("{b:02x}")).collect(),
                _ => {
                    return Err(wrong(
                        "only integers, byte buffers, and strings can be formatted as hex",
                    ));
                }
            };
            if verb == 'X' {
                hex.to_ascii_uppercase()
            } else {
                hex
            }
        }
        _ => {
            return Err(err(
                "could not parse formatting clause: unrecognized formatting clause",
            ));
        }
    };
    out.push_str(&text);
    Ok(())
}

/// `%e`: Go's form, `1.052033e+03` (a sign and at least two exponent digits).
fn scientific(d: f64, precision: usize) -> String {
    let text = format!("{d:.precision$e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

/// `%s`: a value as cel-go's string clause writes it; lists and maps with their elements so
/// written (strings unquoted) and a map's entries sorted by key.
fn format_string(out: &mut String, v: &Val<'_>) -> Result<(), EvalError> {
    match v.kind() {
        Kind::Null => out.push_str("null"),
        Kind::Double(d) => match special_double(d) {
            Some(special) => out.push_str(special),
            None => out.push_str(&crate::value::format_float_g(d)),
        },
        Kind::List => {
            out.push('[');
            for (i, item) in v.items()?.enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                format_string(out, &item)?;
            }
            out.push(']');
        }
        Kind::Map | Kind::Rec(_) => {
            let mut entries = Vec::new();
            for key in v.items()? {
                let mut k = String::new();
                format_string(&mut k, &key)?;
                let mut value = String::new();
                if let Some(item) = v.get(&key)? {
                    format_string(&mut value, &item)?;
                }
                entries.push((k, value));
            }
            entries.sort();
            out.push('{');
            for (i, (k, value)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(k);
                out.push_str(": ");
                out.push_str(value);
            }
            out.push('}');
        }
        Kind::Opt => {
            return Err(err(
                "error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps",
            ));
        }
        _ => v.display_into(out),
    }
    Ok(())
}
