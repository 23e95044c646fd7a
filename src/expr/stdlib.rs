//! The functions every expression may call: CEL's standard definitions and the Kubernetes CEL
//! libraries that fit a linter (strings, lists, regex, optional values, quantity, semver), as
//! `k8s.io/apiserver/pkg/cel/library` and cel-go's `ext` define them.

use std::cmp::Ordering;
use std::rc::Rc;

use regex::Regex;

use super::Registry;
use super::eval::{Args, Call, EvalError, Kind, Val, compare, equals};

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

pub(super) fn to_uint<'a>(_: &Call<'a>, a: &mut Args<'a>) -> R<'a> {
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

/// Registers the standard library.
pub fn register(r: &mut Registry) {
    // Sizes and conversions.
    for sig in [
        "size(string) -> int",
        "size(list(A)) -> int",
        "size(map(A, B)) -> int",
        "string.size() -> int",
        "list(A).size() -> int",
        "map(A, B).size() -> int",
    ] {
        r.add(
            sig,
            "the length of a string (in code points), list or map",
            |_, a| {
                a[0].size()
                    .map(Val::Int)
                    .ok_or_else(|| err("size of a value without one"))
            },
        );
    }
    r.add(
        "string(dyn) -> string",
        "the value as a string (numbers in decimal, booleans as `true`/`false`)",
        |_, a| {
            Ok(match a[0].kind() {
                Kind::Str(_) => a[0].clone(),
                Kind::Int(_)
                | Kind::Uint(_)
                | Kind::Double(_)
                | Kind::Bool(_)
                | Kind::Quantity(_)
                | Kind::Semver(..) => Val::str(a[0].display()),
                _ => {
                    return Err(EvalError::new(format!(
                        "cannot convert {} to string",
                        a[0].type_name()
                    )));
                }
            })
        },
    );
    r.add(
        "int(dyn) -> int",
        "an integer from an int, uint, double (truncated) or decimal string",
        |_, a| match a[0].kind() {
            Kind::Int(i) => Ok(Val::Int(i)),
            Kind::Uint(u) => i64::try_from(u)
                .map(Val::Int)
                .map_err(|_| err("int out of range")),
            Kind::Double(d) if d > -9.3e18 && d < 9.3e18 => Ok(Val::Int(d as i64)),
            Kind::Str(t) => t
                .parse()
                .map(Val::Int)
                .map_err(|_| err(format!("cannot convert '{t}' to int"))),
            _ => Err(EvalError::new(format!(
                "cannot convert {} to int",
                a[0].type_name()
            ))),
        },
    );
    r.add(
        "uint(dyn) -> uint",
        "an unsigned integer from a number or decimal string",
        to_uint,
    );
    r.add(
        "double(dyn) -> double",
        "a double from a number or numeric string",
        |_, a| match a[0].kind() {
            Kind::Int(i) => Ok(Val::Double(i as f64)),
            Kind::Uint(u) => Ok(Val::Double(u as f64)),
            Kind::Double(d) => Ok(Val::Double(d)),
            Kind::Str(t) => t
                .parse()
                .map(Val::Double)
                .map_err(|_| err(format!("cannot convert '{t}' to double"))),
            _ => Err(EvalError::new(format!(
                "cannot convert {} to double",
                a[0].type_name()
            ))),
        },
    );
    r.add(
        "bool(dyn) -> bool",
        "a bool from a bool or `true`/`false` string",
        |_, a| match a[0].kind() {
            Kind::Bool(b) => Ok(Val::Bool(b)),
            Kind::Str("true" | "True" | "TRUE" | "t" | "1") => Ok(Val::Bool(true)),
            Kind::Str("false" | "False" | "FALSE" | "f" | "0") => Ok(Val::Bool(false)),
            _ => Err(EvalError::new(format!(
                "cannot convert {} to bool",
                a[0].type_name()
            ))),
        },
    );
    r.add(
        "dyn(dyn) -> dyn",
        "the value, with its static type forgotten",
        |_, a| Ok(a[0].clone()),
    );
    r.add("type(dyn) -> type", "the value's type", |_, a| {
        Ok(Val::Type(a[0].cel_type()))
    });

    // Strings: CEL's own, then the Kubernetes strings library.
    r.add(
        "string.contains(string) -> bool",
        "substring test",
        |_, a| Ok(Val::Bool(s(&a[0]).contains(s(&a[1])))),
    );
    r.add(
        "string.startsWith(string) -> bool",
        "prefix test",
        |_, a| Ok(Val::Bool(s(&a[0]).starts_with(s(&a[1])))),
    );
    r.add("string.endsWith(string) -> bool", "suffix test", |_, a| {
        Ok(Val::Bool(s(&a[0]).ends_with(s(&a[1]))))
    });
    let matches: super::Impl = |c, a| {
        let mut owned = None;
        let re = regex(c, s(&a[1]), &mut owned)?;
        Ok(Val::Bool(re.is_match(s(&a[0]))))
    };
    r.add_prepared(
        "string.matches(string) -> bool",
        "RE2 regular expression search (a literal pattern is compiled at load)",
        matches,
        Some((1, prepare_regex)),
    );
    r.add_prepared(
        "matches(string, string) -> bool",
        "`matches(s, re)`: as `s.matches(re)`",
        matches,
        Some((1, prepare_regex)),
    );
    r.add(
        "string.lowerAscii() -> string",
        "ASCII letters lower-cased",
        |_, a| Ok(Val::str(s(&a[0]).to_ascii_lowercase())),
    );
    r.add(
        "string.upperAscii() -> string",
        "ASCII letters upper-cased",
        |_, a| Ok(Val::str(s(&a[0]).to_ascii_uppercase())),
    );
    r.add(
        "string.trim() -> string",
        "leading and trailing whitespace removed",
        |_, a| Ok(Val::str(s(&a[0]).trim())),
    );
    r.add(
        "string.charAt(int) -> string",
        "the code point at an index (`''` at the end)",
        |_, a| {
            let (text, i) = (s(&a[0]), int(&a[1]));
            let n = text.chars().count() as i64;
            if i < 0 || i > n {
                return Err(err(format!("index out of range: {i}")));
            }
            Ok(Val::str(
                text.chars()
                    .nth(i as usize)
                    .map(String::from)
                    .unwrap_or_default(),
            ))
        },
    );
    for sig in [
        "string.indexOf(string) -> int",
        "string.lastIndexOf(string) -> int",
    ] {
        r.add(
            sig,
            "code-point index of the first (last) occurrence, or -1",
            |c, a| {
                let (text, needle) = (s(&a[0]), s(&a[1]));
                let found = if c.name == "indexOf" {
                    text.find(needle)
                } else {
                    text.rfind(needle)
                };
                Ok(Val::Int(
                    found.map_or(-1, |b| text[..b].chars().count() as i64),
                ))
            },
        );
    }
    r.add(
        "string.replace(string, string) -> string",
        "every occurrence replaced (literal text, not a pattern)",
        |_, a| Ok(Val::str(s(&a[0]).replace(s(&a[1]), s(&a[2])))),
    );
    r.add(
        "string.replace(string, string, int) -> string",
        "the first n occurrences replaced (all for n < 0)",
        |_, a| {
            let n = int(&a[3]);
            Ok(Val::str(if n < 0 {
                s(&a[0]).replace(s(&a[1]), s(&a[2]))
            } else {
                s(&a[0]).replacen(s(&a[1]), s(&a[2]), n as usize)
            }))
        },
    );
    r.add(
        "string.split(string) -> list(string)",
        "the parts between separators",
        |_, a| Ok(Val::list(s(&a[0]).split(s(&a[1])).map(Val::str).collect())),
    );
    r.add(
        "string.substring(int) -> string",
        "the code points from an index on",
        |_, a| substring(s(&a[0]), int(&a[1]), None),
    );
    r.add(
        "string.substring(int, int) -> string",
        "the code points in [start, end)",
        |_, a| substring(s(&a[0]), int(&a[1]), Some(int(&a[2]))),
    );
    r.add(
        "list(string).join() -> string",
        "the strings concatenated",
        |_, a| join(&a[0], ""),
    );
    r.add(
        "list(string).join(string) -> string",
        "the strings joined with a separator",
        |_, a| {
            let sep = s(&a[1]).to_string();
            join(&a[0], &sep)
        },
    );

    // Regex library.
    r.add_prepared(
        "string.find(string) -> string",
        "the first match of a regular expression, or `''`",
        |c, a| {
            let mut owned = None;
            let re = regex(c, s(&a[1]), &mut owned)?;
            Ok(Val::str(re.find(s(&a[0])).map_or("", |m| m.as_str())))
        },
        Some((1, prepare_regex)),
    );
    r.add_prepared(
        "string.findAll(string) -> list(string)",
        "every match of a regular expression",
        |c, a| {
            let mut owned = None;
            let re = regex(c, s(&a[1]), &mut owned)?;
            Ok(Val::list(
                re.find_iter(s(&a[0]))
                    .map(|m| Val::str(m.as_str()))
                    .collect(),
            ))
        },
        Some((1, prepare_regex)),
    );

    // Lists library.
    r.add(
        "list(A).isSorted() -> bool",
        "whether the items are in ascending order",
        |_, a| {
            let items: Vec<Val> = a[0].items()?.collect();
            for w in items.windows(2) {
                if compare("isSorted", &w[0], &w[1])? == Ordering::Greater {
                    return Ok(Val::Bool(false));
                }
            }
            Ok(Val::Bool(true))
        },
    );
    r.add(
        "list(A).sum() -> A",
        "the sum of the numbers (0 for an empty list)",
        |_, a| {
            let mut total: Option<Val> = None;
            for item in a[0].items()? {
                total = Some(match total {
                    None => item,
                    Some(t) => match (t.kind(), item.kind()) {
                        (Kind::Int(x), Kind::Int(y)) => {
                            Val::Int(x.checked_add(y).ok_or_else(|| err("integer overflow"))?)
                        }
                        (Kind::Uint(x), Kind::Uint(y)) => {
                            Val::Uint(x.checked_add(y).ok_or_else(|| err("integer overflow"))?)
                        }
                        (Kind::Double(x), Kind::Double(y)) => Val::Double(x + y),
                        _ => return Err(err("sum of values that are not numbers of one kind")),
                    },
                });
            }
            Ok(total.unwrap_or(Val::Int(0)))
        },
    );
    for sig in ["list(A).min() -> A", "list(A).max() -> A"] {
        r.add(
            sig,
            "the least (greatest) item; an error for an empty list",
            |c, a| {
                let want = if c.name == "min" {
                    Ordering::Less
                } else {
                    Ordering::Greater
                };
                let mut best: Option<Val> = None;
                for item in a[0].items()? {
                    best = Some(match best {
                        Some(b) if compare(c.name, &item, &b)? != want => b,
                        _ => item,
                    });
                }
                best.ok_or_else(|| err(format!("{}() of an empty list", c.name)))
            },
        );
    }
    for sig in ["list(A).indexOf(A) -> int", "list(A).lastIndexOf(A) -> int"] {
        r.add(
            sig,
            "the index of the first (last) equal item, or -1",
            |c, a| {
                let items: Vec<Val> = a[0].items()?.collect();
                let mut found = items
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| equals(v, &a[1]))
                    .map(|(i, _)| i as i64);
                Ok(Val::Int(
                    if c.name == "indexOf" {
                        found.next()
                    } else {
                        found.next_back()
                    }
                    .unwrap_or(-1),
                ))
            },
        );
    }
    r.add(
        "list(A).distinct() -> list(A)",
        "the items with later duplicates removed",
        |_, a| {
            let mut out: Vec<Val> = Vec::new();
            for item in a[0].items()? {
                if !out.iter().any(|o| equals(o, &item)) {
                    out.push(item);
                }
            }
            Ok(Val::list(out))
        },
    );
    r.add(
        "list(dyn).flatten() -> list(dyn)",
        "the items of the items, one level",
        |_, a| {
            let mut out = Vec::new();
            for item in a[0].items()? {
                match item.kind() {
                    Kind::List => out.extend(item.items()?),
                    _ => out.push(item),
                }
            }
            Ok(Val::list(out))
        },
    );

    // Optional values.
    r.add(
        "optional.of(A) -> optional(A)",
        "an optional holding the value",
        |_, a| Ok(Val::Opt(Some(Rc::new(a[0].clone())))),
    );
    r.add(
        "optional.ofNonZeroValue(A) -> optional(A)",
        "an optional holding the value unless it is zero, empty or null",
        |_, a| {
            let zero = match a[0].kind() {
                Kind::Null => true,
                Kind::Bool(b) => !b,
                Kind::Int(i) => i == 0,
                Kind::Uint(u) => u == 0,
                Kind::Double(d) => d == 0.0,
                Kind::Str(t) => t.is_empty(),
                Kind::List | Kind::Map => a[0].size() == Some(0),
                _ => false,
            };
            Ok(Val::Opt((!zero).then(|| Rc::new(a[0].clone()))))
        },
    );
    r.add(
        "optional.none() -> optional(dyn)",
        "an empty optional",
        |_, _| Ok(Val::Opt(None)),
    );
    r.add(
        "optional(A).hasValue() -> bool",
        "whether the optional holds a value",
        |_, a| Ok(Val::Bool(matches!(a[0], Val::Opt(Some(_))))),
    );
    r.add(
        "optional(A).value() -> A",
        "the optional's value; an error when empty",
        |_, a| match &a[0] {
            Val::Opt(Some(v)) => Ok((**v).clone()),
            _ => Err(err("optional.none() dereference")),
        },
    );
    r.add(
        "optional(A).orValue(A) -> A",
        "the optional's value, else the argument",
        |_, a| match &a[0] {
            Val::Opt(Some(v)) => Ok((**v).clone()),
            _ => Ok(a[1].clone()),
        },
    );
    r.add(
        "optional(A).or(optional(A)) -> optional(A)",
        "the optional if it holds a value, else the argument",
        |_, a| match &a[0] {
            Val::Opt(Some(_)) => Ok(a[0].clone()),
            _ => Ok(a[1].clone()),
        },
    );

    // Quantity library.
    r.add(
        "quantity(string) -> quantity",
        "a Kubernetes quantity (`500m`, `1Gi`, `2e3`); an error when the text is not one",
        |_, a| {
            parse_quantity(s(&a[0]))
                .map(Val::Quantity)
                .ok_or_else(|| err(format!("invalid quantity: {}", s(&a[0]))))
        },
    );
    r.add(
        "isQuantity(string) -> bool",
        "whether the text is a Kubernetes quantity",
        |_, a| Ok(Val::Bool(parse_quantity(s(&a[0])).is_some())),
    );
    r.add(
        "quantity.asApproximateFloat() -> double",
        "the quantity as a double",
        |_, a| Ok(Val::Double(q(&a[0]))),
    );
    r.add(
        "quantity.isInteger() -> bool",
        "whether the quantity is a whole number",
        |_, a| Ok(Val::Bool(q(&a[0]).fract() == 0.0)),
    );
    r.add(
        "quantity.asInteger() -> int",
        "the quantity as an int; an error when it is not a whole number",
        |_, a| {
            let v = q(&a[0]);
            if v.fract() == 0.0 && v.abs() < 9.2e18 {
                Ok(Val::Int(v as i64))
            } else {
                Err(err("quantity is not an integer"))
            }
        },
    );
    r.add("quantity.sign() -> int", "-1, 0 or 1", |_, a| {
        Ok(Val::Int(match q(&a[0]) {
            v if v > 0.0 => 1,
            v if v < 0.0 => -1,
            _ => 0,
        }))
    });
    r.add(
        "quantity.compareTo(quantity) -> int",
        "-1, 0 or 1 as the quantity is less than, equal to or greater than the argument",
        |_, a| {
            Ok(Val::Int(match q(&a[0]).partial_cmp(&q(&a[1])) {
                Some(Ordering::Less) => -1,
                Some(Ordering::Greater) => 1,
                _ => 0,
            }))
        },
    );
    r.add(
        "quantity.isLessThan(quantity) -> bool",
        "ordering",
        |_, a| Ok(Val::Bool(q(&a[0]) < q(&a[1]))),
    );
    r.add(
        "quantity.isGreaterThan(quantity) -> bool",
        "ordering",
        |_, a| Ok(Val::Bool(q(&a[0]) > q(&a[1]))),
    );
    r.add("quantity.add(quantity) -> quantity", "the sum", |_, a| {
        Ok(Val::Quantity(q(&a[0]) + q(&a[1])))
    });
    r.add(
        "quantity.sub(quantity) -> quantity",
        "the difference",
        |_, a| Ok(Val::Quantity(q(&a[0]) - q(&a[1]))),
    );

    // Semver library.
    r.add(
        "semver(string) -> semver",
        "a semantic version (`1.25.3`); an error when the text is not one",
        |_, a| semver(s(&a[0]), false),
    );
    r.add(
        "semver(string, bool) -> semver",
        "a semantic version; with `true`, `v1.25` and `1.25` read as `1.25.0`",
        |_, a| {
            let normalize = a[1].as_bool().unwrap_or(false);
            semver(s(&a[0]), normalize)
        },
    );
    r.add(
        "isSemver(string) -> bool",
        "whether the text is a semantic version",
        |_, a| Ok(Val::Bool(semver(s(&a[0]), false).is_ok())),
    );
    r.add(
        "isSemver(string, bool) -> bool",
        "whether the text is a semantic version, normalised as `semver(s, true)` does",
        |_, a| {
            Ok(Val::Bool(
                semver(s(&a[0]), a[1].as_bool().unwrap_or(false)).is_ok(),
            ))
        },
    );
    for sig in [
        "semver.major() -> int",
        "semver.minor() -> int",
        "semver.patch() -> int",
    ] {
        r.add(sig, "a part of the version", |c, a| {
            let Val::Semver(x, y, z) = a[0] else {
                return Err(err("not a semver"));
            };
            Ok(Val::Int(match c.name {
                "major" => x,
                "minor" => y,
                _ => z,
            } as i64))
        });
    }
    r.add("semver.compareTo(semver) -> int", "-1, 0 or 1", |_, a| {
        Ok(Val::Int(match compare("compareTo", &a[0], &a[1])? {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }))
    });
    r.add("semver.isLessThan(semver) -> bool", "ordering", |_, a| {
        Ok(Val::Bool(
            compare("isLessThan", &a[0], &a[1])? == Ordering::Less,
        ))
    });
    r.add(
        "semver.isGreaterThan(semver) -> bool",
        "ordering",
        |_, a| {
            Ok(Val::Bool(
                compare("isGreaterThan", &a[0], &a[1])? == Ordering::Greater,
            ))
        },
    );
}

fn q(v: &Val<'_>) -> f64 {
    match v {
        Val::Quantity(q) => *q,
        _ => f64::NAN,
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
    let bad = || err(format!("invalid semver: {text}"));
    let mut t = text;
    if normalize {
        t = t.strip_prefix('v').unwrap_or(t);
    }
    // Pre-release and build parts do not take part in the comparisons rules make.
    let core = t.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    if parts.is_empty() || parts.len() > 3 || (!normalize && parts.len() != 3) {
        return Err(bad());
    }
    let mut nums = [0u64; 3];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty()
            || !p.bytes().all(|b| b.is_ascii_digit())
            || (!normalize && p.len() > 1 && p.starts_with('0'))
        {
            return Err(bad());
        }
        nums[i] = p.parse().map_err(|_| bad())?;
    }
    Ok(Val::Semver(nums[0], nums[1], nums[2]))
}

/// A Kubernetes `resource.Quantity` as a number: a decimal (`1.5`, `.5`, `+2`), then a binary
/// suffix (`Ki` … `Ei`), a decimal one (`n`, `u`, `m`, `k`, `M` … `E`) or an exponent (`e3`,
/// `E-2`). (Written out here: k8s-openapi's `Quantity` is only the string; the grammar is
/// apimachinery's `resource.ParseQuantity`.)
pub fn parse_quantity(text: &str) -> Option<f64> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let digits = number.trim_start_matches(['+', '-']);
    if digits.is_empty() || digits == "." || number.len() - digits.len() > 1 {
        return None;
    }
    // A decimal suffix or exponent becomes part of the number's own text, so that the parse
    // rounds once: `700m` and `0.7` are then the same double (`700 * 1e-3` is not).
    let binary =
        |power: i32| -> Option<f64> { Some(number.parse::<f64>().ok()? * 1024f64.powi(power)) };
    let decimal = |exponent: i32| format!("{number}e{exponent}").parse::<f64>().ok();
    match suffix {
        "" => number.parse().ok(),
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        exponent => {
            let e = exponent.strip_prefix(['e', 'E'])?;
            let digits = e.trim_start_matches(['+', '-']);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            decimal(e.parse::<i32>().ok()?)
        }
    }
}
