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
                | Kind::Semver(_)
                | Kind::Net(Net::Ip(_) | Net::Cidr(..)) => Val::str(a[0].display()),
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
            // cel-go's range check: both ends exclusive, as `float64(math.MinInt64)` and
            // `float64(math.MaxInt64)` are -2^63 and 2^63 (the conformance tests
            // `double_int_max_range`/`double_int_min_range` expect errors there).
            Kind::Double(d) if d > i64::MIN as f64 && d < -(i64::MIN as f64) => {
                Ok(Val::Int(d as i64))
            }
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
        "string.indexOf(string, int) -> int",
        "string.lastIndexOf(string, int) -> int",
    ] {
        r.add(
            sig,
            "as without the index, searching from (backwards from) a code-point index",
            |c, a| {
                let (text, needle, from) = (s(&a[0]), s(&a[1]), int(&a[2]));
                let chars: Vec<(usize, char)> = text.char_indices().collect();
                if from < 0 || from as usize > chars.len() {
                    return Err(err(format!("index out of range: {from}")));
                }
                let byte = |i: usize| chars.get(i).map_or(text.len(), |(b, _)| *b);
                let found = if c.name == "indexOf" {
                    text[byte(from as usize)..]
                        .find(needle)
                        .map(|b| b + byte(from as usize))
                } else {
                    // The last match that starts at or before the index, overlapping ones
                    // included (`rmatch_indices` skips those), at character boundaries.
                    let start = byte(from as usize);
                    (0..=start)
                        .rev()
                        .filter(|b| text.is_char_boundary(*b))
                        .find(|b| text[*b..].starts_with(needle))
                };
                Ok(Val::Int(
                    found.map_or(-1, |b| text[..b].chars().count() as i64),
                ))
            },
        );
    }
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
        "string.format(list(dyn)) -> string",
        "the string with each clause (`%s`, `%d`, `%f`, `%.3f`, `%e`, `%b`, `%o`, `%x`, `%X`, `%%`) replaced by the next value of the list, as cel-go's strings extension formats it",
        |_, a| format(s(&a[0]), &a[1]).map(Val::str),
    );
    r.add(
        "strings.quote(string) -> string",
        "the string in double quotes, with `\\`, `\"` and control characters escaped as in CEL",
        |_, a| Ok(Val::str(quote(s(&a[0])))),
    );
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
        "the parts between separators (an empty separator splits into code points)",
        |_, a| Ok(split(s(&a[0]), s(&a[1]), -1)),
    );
    r.add(
        "string.split(string, int) -> list(string)",
        "at most n parts (all for n < 0, none for 0)",
        |_, a| Ok(split(s(&a[0]), s(&a[1]), int(&a[2]))),
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

    r.add_prepared(
        "string.findAll(string, int) -> list(string)",
        "at most n matches of a regular expression (all for n < 0)",
        |c, a| {
            let mut owned = None;
            let re = regex(c, s(&a[1]), &mut owned)?;
            let n = usize::try_from(int(&a[2])).unwrap_or(usize::MAX);
            Ok(Val::list(
                re.find_iter(s(&a[0]))
                    .take(n)
                    .map(|m| Val::str(m.as_str()))
                    .collect(),
            ))
        },
        Some((1, prepare_regex)),
    );

    // Sets library (Kubernetes 1.29+): lists as sets.
    r.add(
        "sets.contains(list(A), list(A)) -> bool",
        "every item of the second list is in the first",
        |_, a| {
            let first: Vec<Val> = a[0].items()?.collect();
            Ok(Val::Bool(
                a[1].items()?.all(|x| first.iter().any(|y| equals(&x, y))),
            ))
        },
    );
    r.add(
        "sets.intersects(list(A), list(A)) -> bool",
        "the lists share an item",
        |_, a| {
            let first: Vec<Val> = a[0].items()?.collect();
            Ok(Val::Bool(
                a[1].items()?.any(|x| first.iter().any(|y| equals(&x, y))),
            ))
        },
    );
    r.add(
        "sets.equivalent(list(A), list(A)) -> bool",
        "the lists hold the same items (ignoring order and repeats)",
        |_, a| {
            let (x, y): (Vec<Val>, Vec<Val>) = (a[0].items()?.collect(), a[1].items()?.collect());
            let within = |p: &[Val], q: &[Val]| p.iter().all(|i| q.iter().any(|j| equals(i, j)));
            Ok(Val::Bool(within(&x, &y) && within(&y, &x)))
        },
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
        "list(A).reverse() -> list(A)",
        "the items in reverse order",
        |_, a| {
            let mut items: Vec<Val> = a[0].items()?.collect();
            items.reverse();
            Ok(Val::list(items))
        },
    );
    r.add(
        "list(A).slice(int, int) -> list(A)",
        "the items in [start, end)",
        |_, a| {
            let items: Vec<Val> = a[0].items()?.collect();
            let (from, to) = (int(&a[1]), int(&a[2]));
            if from < 0 || to < from || to as usize > items.len() {
                return Err(err(format!(
                    "cannot slice({from}, {to}) a list of length {}",
                    items.len()
                )));
            }
            Ok(Val::list(items[from as usize..to as usize].to_vec()))
        },
    );
    r.add(
        "list(A).sort() -> list(A)",
        "the items in ascending order (numbers, strings or bools)",
        |_, a| {
            let mut items: Vec<Val> = a[0].items()?.collect();
            let mut failed = None;
            items.sort_by(|x, y| {
                compare("sort", x, y).unwrap_or_else(|e| {
                    failed = Some(e);
                    Ordering::Equal
                })
            });
            match failed {
                Some(e) => Err(e),
                None => Ok(Val::list(items)),
            }
        },
    );
    for sig in [
        "list(A).first() -> optional(A)",
        "list(A).last() -> optional(A)",
    ] {
        r.add(
            sig,
            "the first (last) item, or none for an empty list",
            |c, a| {
                let n = a[0].size().unwrap_or(0) as usize;
                let at = if c.name == "first" {
                    0
                } else {
                    n.wrapping_sub(1)
                };
                Ok(Val::optional(a[0].at(at)))
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
        |_, a| Ok(Val::optional(Some(a[0].clone()))),
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
            Ok(Val::optional((!zero).then(|| a[0].clone())))
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
        |_, a| Ok(Val::Bool(matches!(a[0].optional_value(), Some(Some(_))))),
    );
    r.add(
        "optional(A).value() -> A",
        "the optional's value; an error when empty",
        |_, a| match a[0].optional_value() {
            Some(Some(v)) => Ok(v),
            _ => Err(err("optional.none() dereference")),
        },
    );
    r.add(
        "optional(A).orValue(A) -> A",
        "the optional's value, else the argument",
        |_, a| match a[0].optional_value() {
            Some(Some(v)) => Ok(v),
            _ => Ok(a[1].clone()),
        },
    );
    r.add(
        "optional(A).or(optional(A)) -> optional(A)",
        "the optional if it holds a value, else the argument",
        |_, a| match a[0].optional_value() {
            Some(Some(_)) => Ok(a[0].clone()),
            _ => Ok(a[1].clone()),
        },
    );

    // Quantity library (exact decimals, see `quantity.rs`).
    r.add(
        "quantity(string) -> quantity",
        "a Kubernetes quantity (`500m`, `1Gi`, `2e3`); an error when the text is not one",
        |_, a| {
            Quantity::parse(s(&a[0]))
                .map(Val::quantity)
                .ok_or_else(|| err(format!("invalid quantity: {}", s(&a[0]))))
        },
    );
    r.add(
        "isQuantity(string) -> bool",
        "whether the text is a Kubernetes quantity",
        |_, a| Ok(Val::Bool(Quantity::parse(s(&a[0])).is_some())),
    );
    r.add(
        "quantity.asApproximateFloat() -> double",
        "the quantity as a double",
        |_, a| Ok(Val::Double(q(&a[0])?.as_f64())),
    );
    r.add(
        "quantity.isInteger() -> bool",
        "whether the quantity is a whole number that fits in an int",
        |_, a| Ok(Val::Bool(q(&a[0])?.as_i64().is_some())),
    );
    r.add(
        "quantity.asInteger() -> int",
        "the quantity as an int; an error when it is not a whole number that fits",
        |_, a| {
            q(&a[0])?
                .as_i64()
                .map(Val::Int)
                .ok_or_else(|| err("cannot convert value to integer"))
        },
    );
    for sig in ["quantity.sign() -> int", "sign(quantity) -> int"] {
        r.add(sig, "-1, 0 or 1", |_, a| Ok(Val::Int(q(&a[0])?.sign())));
    }
    r.add(
        "quantity.compareTo(quantity) -> int",
        "-1, 0 or 1 as the quantity is less than, equal to or greater than the argument",
        |_, a| {
            Ok(Val::Int(match q(&a[0])?.cmp(&q(&a[1])?) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }))
        },
    );
    r.add(
        "quantity.isLessThan(quantity) -> bool",
        "ordering",
        |_, a| Ok(Val::Bool(q(&a[0])? < q(&a[1])?)),
    );
    r.add(
        "quantity.isGreaterThan(quantity) -> bool",
        "ordering",
        |_, a| Ok(Val::Bool(q(&a[0])? > q(&a[1])?)),
    );
    // `add`/`sub` take a quantity or an int.
    fn operand(v: &Val<'_>) -> Result<Quantity, EvalError> {
        match v.kind() {
            Kind::Int(i) => Ok(Quantity::from_int(i)),
            _ => q(v),
        }
    }
    for sig in [
        "quantity.add(quantity) -> quantity",
        "quantity.add(int) -> quantity",
        "quantity.sub(quantity) -> quantity",
        "quantity.sub(int) -> quantity",
    ] {
        r.add(sig, "the sum (difference), exactly", |c, a| {
            let (x, y) = (q(&a[0])?, operand(&a[1])?);
            let result = if c.name == "add" {
                x.checked_add(y)
            } else {
                x.checked_sub(y)
            };
            result
                .map(Val::quantity)
                .ok_or_else(|| err("quantity out of range"))
        });
    }

    // Semver library.
    r.add_prepared(
        "semver(string) -> semver",
        "a semantic version (`1.25.3`); an error when the text is not one (a literal is read at load)",
        |c, a| match c.prepared::<Semver>() {
            Some(v) => Ok(Val::Semver(Rc::new(v.clone()))),
            None => semver(s(&a[0]), false),
        },
        Some((0, |text| {
            Semver::parse(text, false)
                .map(|v| Box::new(v) as Box<dyn std::any::Any + Send + Sync>)
                .map_err(|e| format!("invalid semver: {text}: {e}"))
        })),
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
            let Val::Semver(v) = &a[0] else {
                return Err(err("not a semver"));
            };
            Ok(Val::Int(match c.name {
                "major" => v.major,
                "minor" => v.minor,
                _ => v.patch,
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
    net_library(r);
}

/// Kubernetes' IP and CIDR libraries (`net.rs`), in Kubernetes' base environment since 1.30.
fn net_library(r: &mut Registry) {
    fn ip(v: &Val<'_>) -> Result<IpAddr, EvalError> {
        match v.kind() {
            Kind::Net(Net::Ip(a)) => Ok(*a),
            Kind::Str(t) => net::parse_ip(t).map_err(err),
            _ => Err(err(format!("{} is not an IP address", v.type_name()))),
        }
    }
    fn cidr(v: &Val<'_>) -> Result<(IpAddr, u8), EvalError> {
        match v.kind() {
            Kind::Net(Net::Cidr(a, bits)) => Ok((*a, *bits)),
            Kind::Str(t) => net::parse_cidr(t).map_err(err),
            _ => Err(err(format!("{} is not a CIDR", v.type_name()))),
        }
    }
    r.add(
        "ip(string) -> net.IP",
        "an IPv4 or IPv6 address (`10.0.0.1`, `::1`); an error for anything else, a zone (`fe80::1%eth0`) or an IPv4-mapped IPv6 address included",
        |_, a| Ok(Val::Net(Rc::new(Net::Ip(ip(&a[0])?)))),
    );
    r.add(
        "isIP(string) -> bool",
        "whether `ip()` takes the text",
        |_, a| Ok(Val::Bool(net::parse_ip(s(&a[0])).is_ok())),
    );
    r.add(
        "ip.isCanonical(string) -> bool",
        "whether the address is written in its one canonical form (`2001:db8::1`, not `2001:DB8:0::1`); an error when it is not an address",
        |_, a| {
            let text = s(&a[0]);
            Ok(Val::Bool(ip(&a[0])?.to_string() == text))
        },
    );
    r.add("net.IP.family() -> int", "4 or 6", |_, a| {
        Ok(Val::Int(if ip(&a[0])?.is_ipv4() { 4 } else { 6 }))
    });
    // Go's `netip.Addr` methods of the same names.
    for (sig, doc) in [
        ("net.IP.isUnspecified() -> bool", "`0.0.0.0` or `::`"),
        ("net.IP.isLoopback() -> bool", "127.0.0.0/8 or `::1`"),
        (
            "net.IP.isLinkLocalMulticast() -> bool",
            "224.0.0.0/24, or IPv6 multicast of link-local scope (`ff02::/16`, any flags)",
        ),
        (
            "net.IP.isLinkLocalUnicast() -> bool",
            "169.254.0.0/16 or `fe80::/10`",
        ),
        (
            "net.IP.isGlobalUnicast() -> bool",
            "none of unspecified, loopback, multicast, link-local unicast or 255.255.255.255 (private addresses are global unicast, as in Go)",
        ),
    ] {
        r.add(sig, doc, |c, a| {
            let addr = ip(&a[0])?;
            Ok(Val::Bool(match c.name {
                "isUnspecified" => net::is_unspecified(addr),
                "isLoopback" => net::is_loopback(addr),
                "isLinkLocalMulticast" => net::is_link_local_multicast(addr),
                "isLinkLocalUnicast" => net::is_link_local_unicast(addr),
                _ => net::is_global_unicast(addr),
            }))
        });
    }
    r.add(
        "cidr(string) -> net.CIDR",
        "a network in CIDR notation (`10.0.0.0/8`; bits after the prefix are kept, see `masked()`); an error for anything else",
        |_, a| {
            let (addr, bits) = cidr(&a[0])?;
            Ok(Val::Net(Rc::new(Net::Cidr(addr, bits))))
        },
    );
    r.add(
        "isCIDR(string) -> bool",
        "whether `cidr()` takes the text",
        |_, a| Ok(Val::Bool(net::parse_cidr(s(&a[0])).is_ok())),
    );
    for sig in [
        "net.CIDR.containsIP(net.IP) -> bool",
        "net.CIDR.containsIP(string) -> bool",
    ] {
        r.add(sig, "whether the network holds the address", |_, a| {
            Ok(Val::Bool(net::contains_ip(cidr(&a[0])?, ip(&a[1])?)))
        });
    }
    for sig in [
        "net.CIDR.containsCIDR(net.CIDR) -> bool",
        "net.CIDR.containsCIDR(string) -> bool",
    ] {
        r.add(
            sig,
            "whether the network holds every address of the other",
            |_, a| Ok(Val::Bool(net::contains_cidr(cidr(&a[0])?, cidr(&a[1])?))),
        );
    }
    r.add(
        "net.CIDR.ip() -> net.IP",
        "the address as written (`cidr('10.0.0.1/8').ip()` is `10.0.0.1`)",
        |_, a| Ok(Val::Net(Rc::new(Net::Ip(cidr(&a[0])?.0)))),
    );
    r.add(
        "net.CIDR.masked() -> net.CIDR",
        "the network with the bits after the prefix cleared: its canonical form",
        |_, a| {
            let (addr, bits) = cidr(&a[0])?;
            Ok(Val::Net(Rc::new(Net::Cidr(net::masked(addr, bits), bits))))
        },
    );
    r.add(
        "net.CIDR.prefixLength() -> int",
        "the prefix length in bits",
        |_, a| Ok(Val::Int(cidr(&a[0])?.1 as i64)),
    );

    // The URL library, in every Kubernetes version.
    fn url(v: &Val<'_>) -> Result<Rc<Net>, EvalError> {
        match v {
            Val::Net(n) if matches!(**n, Net::Url(_)) => Ok(n.clone()),
            _ => match v.kind() {
                Kind::Str(t) => Url::parse(t)
                    .map(|u| Rc::new(Net::Url(Box::new(u))))
                    .map_err(err),
                _ => Err(err(format!("{} is not a URL", v.type_name()))),
            },
        }
    }
    r.add(
        "url(string) -> kubernetes.URL",
        "a URL as Go's `net/url` reads it: an absolute URI (`https://example.com:8443/a?b=c`) or an absolute path (`/healthz`); an error for anything else",
        |_, a| Ok(Val::Net(url(&a[0])?)),
    );
    r.add(
        "isURL(string) -> bool",
        "whether the text is an absolute URI or an absolute path (Go's `url.ParseRequestURI`, which `url()` also requires)",
        |_, a| Ok(Val::Bool(Url::is_request_uri(s(&a[0])))),
    );
    for (sig, doc) in [
        (
            "kubernetes.URL.getScheme() -> string",
            "the scheme, lower-cased (`''` for a path)",
        ),
        (
            "kubernetes.URL.getHost() -> string",
            "the host with its port as written (`example.com:80`, `[::1]:80`; `''` for a path)",
        ),
        (
            "kubernetes.URL.getHostname() -> string",
            "the host without port or IPv6 brackets (`::1`)",
        ),
        (
            "kubernetes.URL.getPort() -> string",
            "the port as written, or `''`",
        ),
        (
            "kubernetes.URL.getEscapedPath() -> string",
            "the path, percent-encoded (`/path%20with%20spaces/`)",
        ),
    ] {
        r.add(sig, doc, |c, a| {
            let n = url(&a[0])?;
            let Net::Url(u) = &*n else {
                return Err(err("not a URL"));
            };
            Ok(Val::str(match c.name {
                "getScheme" => u.scheme().to_string(),
                "getHost" => u.host(),
                "getHostname" => u.hostname(),
                "getPort" => u.port(),
                _ => u.escaped_path(),
            }))
        });
    }
    r.add(
        "kubernetes.URL.getQuery() -> map(string, list(string))",
        "the query's values by key, unescaped (`?k=a&k=b` gives `{'k': ['a', 'b']}`)",
        |_, a| {
            let n = url(&a[0])?;
            let Net::Url(u) = &*n else {
                return Err(err("not a URL"));
            };
            let entries = u
                .query()
                .into_iter()
                .map(|(k, vs)| {
                    let values = vs.into_iter().map(Val::str).collect();
                    (Val::str(k), Val::List(Rc::new(values)))
                })
                .collect();
            Ok(Val::Map(Rc::new(entries)))
        },
    );
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
