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
            NAMES
                .iter()
                .filter_map(|n| find(n).map(|f| (*n, f)))
                .collect()
        });
    TABLE.get(name).copied()
}

/// Every function name [`find`] knows.
const NAMES: &[&str] = &[
    "not",
    "len",
    "index",
    "slice",
    "print",
    "println",
    "printf",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "html",
    "js",
    "urlquery",
    "include",
    "tpl",
    "required",
    "fail",
    "toYaml",
    "mustToYaml",
    "toYamlPretty",
    "fromYaml",
    "fromYamlArray",
    "toJson",
    "mustToJson",
    "toPrettyJson",
    "mustToPrettyJson",
    "toRawJson",
    "mustToRawJson",
    "fromJson",
    "mustFromJson",
    "fromJsonArray",
    "toToml",
    "mustToToml",
    "fromToml",
    "lookup",
    "trim",
    "trimall",
    "hello",
    "b32dec",
    "call",
    "trimAll",
    "trimPrefix",
    "trimSuffix",
    "upper",
    "lower",
    "title",
    "untitle",
    "repeat",
    "substr",
    "nospace",
    "trunc",
    "abbrev",
    "initials",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "quote",
    "squote",
    "cat",
    "indent",
    "nindent",
    "replace",
    "plural",
    "snakecase",
    "camelcase",
    "kebabcase",
    "swapcase",
    "wrap",
    "wrapWith",
    "toString",
    "toStrings",
    "split",
    "splitList",
    "splitn",
    "join",
    "sortAlpha",
    "regexMatch",
    "mustRegexMatch",
    "regexFind",
    "mustRegexFind",
    "regexFindAll",
    "mustRegexFindAll",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "mustRegexReplaceAllLiteral",
    "regexSplit",
    "mustRegexSplit",
    "regexQuoteMeta",
    "atoi",
    "int",
    "int64",
    "float64",
    "toDecimal",
    "default",
    "empty",
    "coalesce",
    "all",
    "any",
    "ternary",
    "typeOf",
    "typeIs",
    "typeIsLike",
    "kindOf",
    "kindIs",
    "deepEqual",
    "list",
    "tuple",
    "append",
    "push",
    "mustAppend",
    "mustPush",
    "prepend",
    "mustPrepend",
    "first",
    "mustFirst",
    "last",
    "mustLast",
    "rest",
    "mustRest",
    "initial",
    "mustInitial",
    "reverse",
    "mustReverse",
    "uniq",
    "mustUniq",
    "without",
    "mustWithout",
    "has",
    "mustHas",
    "compact",
    "mustCompact",
    "concat",
    "until",
    "untilStep",
    "seq",
    "chunk",
    "mustChunk",
    "mustSlice",
    "dateModify",
    "mustDateModify",
    "durationRound",
    "dict",
    "get",
    "set",
    "unset",
    "hasKey",
    "pluck",
    "keys",
    "values",
    "pick",
    "omit",
    "merge",
    "mustMerge",
    "mergeOverwrite",
    "mustMergeOverwrite",
    "deepCopy",
    "mustDeepCopy",
    "dig",
    "add",
    "add1",
    "sub",
    "mul",
    "div",
    "mod",
    "max",
    "min",
    "addf",
    "add1f",
    "subf",
    "mulf",
    "divf",
    "maxf",
    "minf",
    "floor",
    "ceil",
    "round",
    "b64enc",
    "b64dec",
    "sha256sum",
    "sha1sum",
    "adler32sum",
    "semverCompare",
    "semver",
    "uuidv4",
    "randAlphaNum",
    "randAlpha",
    "randNumeric",
    "randAscii",
    "randInt",
    "now",
    "date",
    "dateInZone",
    "htmlDate",
    "htmlDateInZone",
    "unixEpoch",
    "ago",
    "duration",
    "toDate",
    "mustToDate",
    "b32enc",
    "sha512sum",
    "abbrevboth",
    "biggest",
    "urlParse",
    "randBytes",
    "shuffle",
    "urlJoin",
    "htpasswd",
    "bcrypt",
    "derivePassword",
    "encryptAES",
    "decryptAES",
    "buildCustomCert",
    "base",
    "osBase",
    "dir",
    "osDir",
    "ext",
    "osExt",
    "clean",
    "osClean",
    "isAbs",
    "osIsAbs",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCertWithKey",
    "genSignedCertWithKey",
    "genSelfSignedCert",
    "genSignedCert",
    "genPrivateKey",
    "getHostByName",
];

fn find(name: &str) -> Option<Func> {
    Some(match name {
        // Go's built-ins (`and`/`or` are evaluated lazily by the executor).
        "not" => |_, a| Ok(Value::Bool(!arg(&a, 0)?.truthy())),
        "len" => len,
        "index" => index,
        "slice" => slice,
        "print" => |_, a| Ok(Value::from(go_print(&a))),
        "println" => |_, a| {
            let parts: Vec<String> = a.iter().map(Value::to_print_inner).collect();
            Ok(Value::from(parts.join(" ") + "\n"))
        },
        "printf" => printf_fn,
        "eq" => eq,
        "ne" => |c, a| Ok(Value::Bool(!eq(c, a)?.truthy())),
        "lt" => |_, a| compare(&a, |o| o.is_lt()),
        "le" => |_, a| compare(&a, |o| o.is_le()),
        "gt" => |_, a| compare(&a, |o| o.is_gt()),
        "ge" => |_, a| compare(&a, |o| o.is_ge()),
        "html" => |_, a| Ok(Value::from(html_escape(&go_print(&a)))),
        "js" => |_, a| Ok(Value::from(js_escape(&go_print(&a)))),
        "urlquery" => |_, a| Ok(Value::from(query_escape(&go_print(&a)))),
        // Helm's.
        "include" => |c, a| {
            let name = str_arg(&a, 0)?;
            let data = a.get(1).cloned().unwrap_or(Value::Nil);
            let pos = c.pos;
            c.exec.include_value(&name, &data, pos)
        },
        "tpl" => |c, a| {
            let text = str_arg(&a, 0)?;
            let data = a.get(1).cloned().unwrap_or(Value::Nil);
            let pos = c.pos;
            c.exec.tpl(&text, &data, pos).map(Value::from)
        },
        "required" => |_, a| {
            let message = string_arg(&a, 0)?;
            let v = a.get(1).cloned().unwrap_or(Value::Nil);
            match &v {
                Value::Nil => Err(Failure::Fail(message)),
                Value::Str(s) if s.is_empty() => Err(Failure::Fail(message)),
                _ => Ok(v),
            }
        },
        "fail" => |_, a| Err(Failure::Fail(string_arg(&a, 0)?)),
        "toYaml" => |_, a| {
            let v = arg(&a, 0)?.to_data();
            Ok(Value::from(
                super::yaml::to_yaml(&v).trim_end_matches('\n').to_string(),
            ))
        },
        "mustToYaml" => |_, a| Ok(Value::from(super::yaml::to_yaml(&arg(&a, 0)?.to_data()))),
        "toYamlPretty" => |_, a| {
            Ok(Value::from(
                super::yaml::to_yaml(&arg(&a, 0)?.to_data())
                    .trim_end_matches('\n')
                    .to_string(),
            ))
        },
        "fromYaml" => |_, a| Ok(from_yaml_map(&string_arg(&a, 0)?)),
        "fromYamlArray" => |_, a| Ok(from_yaml_list(&string_arg(&a, 0)?)),
        "toJson" | "mustToJson" => |_, a| Ok(Value::from(to_json(&arg(&a, 0)?))),
        "toPrettyJson" | "mustToPrettyJson" => |_, a| Ok(Value::from(to_pretty_json(&arg(&a, 0)?))),
        "toRawJson" | "mustToRawJson" => |_, a| Ok(Value::from(arg(&a, 0)?.to_json().to_string())),
        "fromJson" | "mustFromJson" => |_, a| {
            let text = string_arg(&a, 0)?;
            // Go's json.Unmarshal: every number a float64.
            Ok(
                match serde_json::from_str::<serde_json::Value>(&text).map(floats) {
                    Ok(v @ serde_json::Value::Object(_)) => Value::from_json(&v),
                    Ok(_) => error_map("json: cannot unmarshal into a map"),
                    Err(e) => error_map(&e.to_string()),
                },
            )
        },
        "fromJsonArray" => |_, a| {
            let text = string_arg(&a, 0)?;
            Ok(
                match serde_json::from_str::<serde_json::Value>(&text).map(floats) {
                    Ok(v @ serde_json::Value::Array(_)) => Value::from_json(&v),
                    Ok(_) => Value::list(vec![Value::from("json: cannot unmarshal into a list")]),
                    Err(e) => Value::list(vec![Value::from(e.to_string())]),
                },
            )
        },
        "toToml" | "mustToToml" => {
            |_, a| Ok(Value::from(super::yaml::to_toml(&arg(&a, 0)?.to_data())))
        }
        "fromToml" => |_, a| Ok(super::yaml::from_toml(&string_arg(&a, 0)?)),
        "lookup" => |_, _| Ok(Value::map(BTreeMap::new())),
        // Sprig: strings.
        "trim" => |_, a| Ok(Value::from(str_arg(&a, 0)?.trim())),
        // `trimall CUTSET S`: Go's `strings.Trim(S, CUTSET)`.
        "trimall" => |_, a| {
            let cutset: Vec<char> = string_arg(&a, 0)?.chars().collect();
            Ok(Value::from(
                string_arg(&a, 1)?.trim_matches(cutset.as_slice()),
            ))
        },
        "hello" => |_, _| Ok(Value::from("Hello!")),
        // Go's `base32.StdEncoding`; an error is the result's text, as Sprig returns it.
        "b32dec" => |_, a| {
            let text = strval(&arg(&a, 0)?);
            Ok(Value::from(
                match data_encoding::BASE32.decode(text.as_bytes()) {
                    Ok(bytes) => gostring::from_bytes(&bytes).into_owned(),
                    Err(e) => format!("illegal base32 data at input byte {}", e.position),
                },
            ))
        },
        // Go's `call` takes a function value; template data here holds none.
        "call" => |_, a| match arg(&a, 0)? {
            Value::Nil => err("call of nil"),
            other => err(format!("non-function of type {}", other.type_name())),
        },
        "trimAll" => |_, a| {
            let cut: Vec<char> = string_arg(&a, 0)?.chars().collect();
            Ok(Value::from(string_arg(&a, 1)?.trim_matches(cut.as_slice())))
        },
        "trimPrefix" => |_, a| {
            let (p, s) = (str_arg(&a, 0)?, str_arg(&a, 1)?);
            Ok(Value::from(s.strip_prefix(&*p).unwrap_or(&s)))
        },
        "trimSuffix" => |_, a| {
            let (p, s) = (str_arg(&a, 0)?, str_arg(&a, 1)?);
            Ok(Value::from(s.strip_suffix(&*p).unwrap_or(&s)))
        },
        "upper" => |_, a| Ok(Value::from(str_arg(&a, 0)?.to_uppercase())),
        "lower" => |_, a| Ok(Value::from(str_arg(&a, 0)?.to_lowercase())),
        "title" => |_, a| Ok(Value::from(title(&string_arg(&a, 0)?))),
        "untitle" => |_, a| Ok(Value::from(untitle(&string_arg(&a, 0)?))),
        "repeat" => |_, a| {
            let n = to_int(&arg(&a, 0)?).max(0) as usize;
            let s = string_arg(&a, 1)?;
            if n.saturating_mul(s.len()) > MAX_BUILT {
                return err(format!(
                    "repeat: the result would exceed {} MiB",
                    MAX_BUILT >> 20
                ));
            }
            Ok(Value::from(s.repeat(n)))
        },
        "substr" => |_, a| {
            let (start, end) = (to_int(&arg(&a, 0)?), to_int(&arg(&a, 1)?));
            let s = string_arg(&a, 2)?;
            Ok(Value::from(substr(&s, start, end)))
        },
        "nospace" => |_, a| {
            Ok(Value::from(
                string_arg(&a, 0)?.split_whitespace().collect::<String>(),
            ))
        },
        // Go slices the string's bytes: a cut inside a character leaves invalid UTF-8 there
        // (which Helm's YAML parser then refuses); here that character becomes U+FFFD.
        "trunc" => |_, a| {
            let n = to_int(&arg(&a, 0)?);
            let s = string_arg(&a, 1)?;
            let bytes = s.as_bytes();
            let len = bytes.len() as i64;
            let kept = if n < 0 {
                if n.unsigned_abs() < len as u64 {
                    &bytes[(len + n) as usize..]
                } else {
                    bytes
                }
            } else if n < len {
                &bytes[..n as usize]
            } else {
                bytes
            };
            Ok(Value::from(String::from_utf8_lossy(kept).into_owned()))
        },
        "abbrev" => |_, a| {
            let n = to_int(&arg(&a, 0)?);
            let s = string_arg(&a, 1)?;
            if n < 4 {
                return Ok(Value::from(s));
            }
            Ok(Value::from(abbreviate_full(&s, 0, n)))
        },
        "initials" => |_, a| {
            Ok(Value::from(
                string_arg(&a, 0)?
                    .split_whitespace()
                    .filter_map(|w| w.chars().next())
                    .collect::<String>(),
            ))
        },
        "contains" => |_, a| Ok(Value::Bool(str_arg(&a, 1)?.contains(&*str_arg(&a, 0)?))),
        "hasPrefix" => |_, a| Ok(Value::Bool(str_arg(&a, 1)?.starts_with(&*str_arg(&a, 0)?))),
        "hasSuffix" => |_, a| Ok(Value::Bool(str_arg(&a, 1)?.ends_with(&*str_arg(&a, 0)?))),
        "quote" => |_, a| {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| !v.is_nil())
                .map(|v| match v {
                    Value::Str(s) => go_quote(s),
                    other => go_quote(&strval(other)),
                })
                .collect();
            Ok(Value::from(parts.join(" ")))
        },
        "squote" => |_, a| {
            let parts: Vec<String> = a
                .iter()
                .filter(|v| !v.is_nil())
                .map(|v| format!("'{}'", strval(v)))
                .collect();
            Ok(Value::from(parts.join(" ")))
        },
        "cat" => |_, a| {
            let parts: Vec<String> = a.iter().filter(|v| !v.is_nil()).map(strval).collect();
            Ok(Value::from(parts.join(" ")))
        },
        "indent" => |c, a| {
            let text = str_arg(&a, 1)?;
            let n = indent_width(&arg(&a, 0)?, &text)?;
            Ok(traced_indent(c, a.get(1), &text, indent(n, &text), n, 0))
        },
        "nindent" => |c, a| {
            let text = str_arg(&a, 1)?;
            let n = indent_width(&arg(&a, 0)?, &text)?;
            let mut out = String::from("\n");
            indent_into(&mut out, n, &text);
            Ok(traced_indent(c, a.get(1), &text, out, n, 1))
        },
        "replace" => |_, a| {
            let (old, new, s) = (str_arg(&a, 0)?, str_arg(&a, 1)?, str_arg(&a, 2)?);
            Ok(Value::from(go_replace_all(&s, &old, &new)))
        },
        "plural" => |_, a| {
            let (one, many) = (string_arg(&a, 0)?, string_arg(&a, 1)?);
            Ok(Value::from(if to_int(&arg(&a, 2)?) == 1 {
                one
            } else {
                many
            }))
        },
        "snakecase" => |_, a| Ok(Value::from(snake_case(&string_arg(&a, 0)?))),
        "camelcase" => |_, a| Ok(Value::from(camel_case(&string_arg(&a, 0)?))),
        "kebabcase" => |_, a| {
            Ok(Value::from(
                snake_case(&string_arg(&a, 0)?).replace('_', "-"),
            ))
        },
        "swapcase" => |_, a| {
            Ok(Value::from(
                string_arg(&a, 0)?
                    .chars()
                    .map(|c| {
                        if c.is_uppercase() {
                            c.to_lowercase().next().unwrap_or(c)
                        } else {
                            c.to_uppercase().next().unwrap_or(c)
                        }
                    })
                    .collect::<String>(),
            ))
        },
        "wrap" => |_, a| {
            Ok(Value::from(wrap(
                &string_arg(&a, 1)?,
                to_int(&arg(&a, 0)?).max(1) as usize,
                "\n",
            )))
        },
        "wrapWith" => |_, a| {
            Ok(Value::from(wrap(
                &string_arg(&a, 2)?,
                to_int(&arg(&a, 0)?).max(1) as usize,
                &string_arg(&a, 1)?,
            )))
        },
        "toString" => |_, a| Ok(Value::from(strval(&arg(&a, 0)?))),
        "toStrings" => |_, a| {
            Ok(Value::list(
                to_list(&arg(&a, 0)?)
                    .iter()
                    .map(|v| Value::from(strval(v)))
                    .collect(),
            ))
        },
        "split" => |_, a| {
            let (sep, s) = (string_arg(&a, 0)?, string_arg(&a, 1)?);
            let mut m = BTreeMap::new();
            for (i, part) in go_split(&s, &sep).into_iter().enumerate() {
                m.insert(format!("_{i}"), Value::from(part));
            }
            Ok(Value::map(m))
        },
        "splitList" => |_, a| {
            let (sep, s) = (string_arg(&a, 0)?, string_arg(&a, 1)?);
            Ok(Value::list(
                go_split(&s, &sep).into_iter().map(Value::from).collect(),
            ))
        },
        "splitn" => |_, a| {
            let (sep, n, s) = (string_arg(&a, 0)?, to_int(&arg(&a, 1)?), string_arg(&a, 2)?);
            let mut m = BTreeMap::new();
            let parts: Vec<String> = if n < 0 {
                go_split(&s, &sep)
            } else {
                s.splitn(n as usize, sep.as_str())
                    .map(String::from)
                    .collect()
            };
            for (i, part) in parts.into_iter().enumerate() {
                m.insert(format!("_{i}"), Value::from(part));
            }
            Ok(Value::map(m))
        },
        "join" => |_, a| {
            let sep = string_arg(&a, 0)?;
            let parts: Vec<String> = to_list(&arg(&a, 1)?)
                .iter()
                .filter(|v| !v.is_nil())
                .map(strval)
                .collect();
            Ok(Value::from(parts.join(&sep)))
        },
        "sortAlpha" => |_, a| {
            let mut parts: Vec<String> = to_list(&arg(&a, 0)?).iter().map(strval).collect();
            parts.sort();
            Ok(Value::list(parts.into_iter().map(Value::from).collect()))
        },
        "regexMatch" | "mustRegexMatch" => |_, a| {
            Ok(Value::Bool(
                regex(&string_arg(&a, 0)?)?.is_match(&string_arg(&a, 1)?),
            ))
        },
        "regexFind" | "mustRegexFind" => |_, a| {
            let s = string_arg(&a, 1)?;
            Ok(Value::from(
                regex(&string_arg(&a, 0)?)?
                    .find(&s)
                    .map_or("", |m| m.as_str()),
            ))
        },
        "regexFindAll" | "mustRegexFindAll" => |_, a| {
            let s = string_arg(&a, 1)?;
            let n = to_int(&arg(&a, 2)?);
            let re = regex(&string_arg(&a, 0)?)?;
            let found = re.find_iter(&s).map(|m| Value::from(m.as_str()));
            Ok(Value::list(if n < 0 {
                found.collect()
            } else {
                found.take(n as usize).collect()
            }))
        },
        "regexReplaceAll" | "mustRegexReplaceAll" => |_, a| {
            let (re, s, repl) = (
                regex(&string_arg(&a, 0)?)?,
                string_arg(&a, 1)?,
                string_arg(&a, 2)?,
            );
            // Go's `$1`/`${name}` expansion is the regex crate's too.
            Ok(Value::from(re.replace_all(&s, &*repl).into_owned()))
        },
        "regexReplaceAllLiteral" | "mustRegexReplaceAllLiteral" => |_, a| {
            let (re, s, repl) = (
                regex(&string_arg(&a, 0)?)?,
                string_arg(&a, 1)?,
                string_arg(&a, 2)?,
            );
            Ok(Value::from(
                re.replace_all(&s, regex::NoExpand(&repl)).into_owned(),
            ))
        },
        "regexSplit" | "mustRegexSplit" => |_, a| {
            let (re, s, n) = (
                regex(&string_arg(&a, 0)?)?,
                string_arg(&a, 1)?,
                to_int(&arg(&a, 2)?),
            );
            let parts: Vec<Value> = if n < 0 {
                re.split(&s).map(Value::from).collect()
            } else {
                re.splitn(&s, n as usize).map(Value::from).collect()
            };
            Ok(Value::list(parts))
        },
        "regexQuoteMeta" => |_, a| Ok(Value::from(regex::escape(&string_arg(&a, 0)?))),
        // Sprig: conversions and defaults.
        "atoi" => |_, a| {
            Ok(Value::Int(
                string_arg(&a, 0)?.trim().parse::<i64>().unwrap_or(0),
            ))
        },
        "int" => |_, a| Ok(Value::Int(to_int(&arg(&a, 0)?))),
        "int64" => |_, a| Ok(Value::Int64(to_int(&arg(&a, 0)?))),
        "float64" => |_, a| Ok(Value::Float(to_float(&arg(&a, 0)?))),
        "toDecimal" => |_, a| {
            Ok(Value::Int64(
                i64::from_str_radix(&strval(&arg(&a, 0)?), 8).unwrap_or(0),
            ))
        },
        "default" => |_, a| {
            let d = arg(&a, 0)?;
            Ok(match a.get(1) {
                Some(v) if !empty(v) => v.clone(),
                _ => d,
            })
        },
        "empty" => |_, a| {
            Ok(Value::Bool(empty(
                &a.first().cloned().unwrap_or(Value::Nil),
            )))
        },
        "coalesce" => |_, a| Ok(a.iter().find(|v| !empty(v)).cloned().unwrap_or(Value::Nil)),
        "all" => |_, a| Ok(Value::Bool(a.iter().all(|v| !empty(v)))),
        "any" => |_, a| Ok(Value::Bool(a.iter().any(|v| !empty(v)))),
        "ternary" => |_, a| {
            Ok(if arg(&a, 2)?.truthy() {
                arg(&a, 0)?
            } else {
                arg(&a, 1)?
            })
        },
        "typeOf" => |_, a| Ok(Value::from(arg(&a, 0)?.type_name())),
        "typeIs" => |_, a| Ok(Value::Bool(string_arg(&a, 0)? == arg(&a, 1)?.type_name())),
        "typeIsLike" => |_, a| {
            let t = string_arg(&a, 0)?;
            let actual = arg(&a, 1)?.type_name();
            Ok(Value::Bool(t == actual || t == format!("*{actual}")))
        },
        "kindOf" => |_, a| Ok(Value::from(arg(&a, 0)?.kind_name())),
        "kindIs" => |_, a| Ok(Value::Bool(string_arg(&a, 0)? == arg(&a, 1)?.kind_name())),
        "deepEqual" => |_, a| Ok(Value::Bool(deep_equal(&arg(&a, 0)?, &arg(&a, 1)?))),
        // Sprig: lists.
        "list" | "tuple" => |_, a| Ok(Value::list(a.into_vec())),
        "append" | "push" | "mustAppend" | "mustPush" => |_, a| {
            let mut l = to_list_strict(&arg(&a, 0)?, "append")?;
            l.push(arg(&a, 1)?);
            Ok(Value::list(l))
        },
        "prepend" | "mustPrepend" => |_, a| {
            let mut l = to_list_strict(&arg(&a, 0)?, "prepend")?;
            l.insert(0, arg(&a, 1)?);
            Ok(Value::list(l))
        },
        "first" | "mustFirst" => {
            |_, a| Ok(to_list(&arg(&a, 0)?).first().cloned().unwrap_or(Value::Nil))
        }
        "last" | "mustLast" => {
            |_, a| Ok(to_list(&arg(&a, 0)?).last().cloned().unwrap_or(Value::Nil))
        }
        "rest" | "mustRest" => |_, a| {
            let l = to_list(&arg(&a, 0)?);
            Ok(if l.is_empty() {
                Value::Nil
            } else {
                Value::list(l[1..].to_vec())
            })
        },
        "initial" | "mustInitial" => |_, a| {
            let l = to_list(&arg(&a, 0)?);
            Ok(if l.is_empty() {
                Value::Nil
            } else {
                Value::list(l[..l.len() - 1].to_vec())
            })
        },
        "reverse" | "mustReverse" => |_, a| {
            let mut l = to_list(&arg(&a, 0)?);
            l.reverse();
            Ok(Value::list(l))
        },
        "uniq" | "mustUniq" => |_, a| {
            let mut out: Vec<Value> = Vec::new();
            for v in to_list(&arg(&a, 0)?) {
                if !out.iter().any(|o| deep_equal(o, &v)) {
                    out.push(v);
                }
            }
            Ok(Value::list(out))
        },
        "without" | "mustWithout" => |_, a| {
            let l = to_list(&arg(&a, 0)?);
            let drop = &a[1..];
            Ok(Value::list(
                l.into_iter()
                    .filter(|v| !drop.iter().any(|d| deep_equal(d, v)))
                    .collect(),
            ))
        },
        "has" | "mustHas" => |_, a| {
            let needle = arg(&a, 0)?;
            Ok(Value::Bool(
                to_list(&arg(&a, 1)?).iter().any(|v| deep_equal(v, &needle)),
            ))
        },
        "compact" | "mustCompact" => |_, a| {
            Ok(Value::list(
                to_list(&arg(&a, 0)?)
                    .into_iter()
                    .filter(|v| !empty(v))
                    .collect(),
            ))
        },
        "concat" => |_, a| Ok(Value::list(a.iter().flat_map(to_list).collect())),
        "until" => |_, a| range_list(0, to_int(&arg(&a, 0)?), 1),
        "untilStep" => |_, a| {
            range_list(
                to_int(&arg(&a, 0)?),
                to_int(&arg(&a, 1)?),
                to_int(&arg(&a, 2)?),
            )
        },
        "seq" => seq,
        "chunk" | "mustChunk" => |_, a| {
            let size = to_int(&arg(&a, 0)?);
            let list = match arg(&a, 1)? {
                Value::List(l) => l,
                other => return err(format!("Cannot chunk type {}", other.kind_name())),
            };
            // Sprig divides by the size: Go's integer division by zero, or a negative size,
            // is a runtime error there.
            let Ok(size) = usize::try_from(size) else {
                return err(format!(
                    "runtime error: makeslice: len out of range ({size})"
                ));
            };
            if size == 0 {
                return err("runtime error: integer divide by zero");
            }
            Ok(Value::list(
                list.chunks(size).map(|c| Value::list(c.to_vec())).collect(),
            ))
        },
        "mustSlice" => slice,
        // `dateModify` leaves a date as it is when the duration doesn't parse;
        // `mustDateModify` fails.
        "dateModify" => |_, a| {
            let t = super::time::time_of(&arg(&a, 1)?);
            let nanos = super::time::parse_go_duration(&string_arg(&a, 0)?).unwrap_or(0);
            Ok(super::time::shifted(&t, nanos))
        },
        "mustDateModify" => |_, a| {
            let t = super::time::time_of(&arg(&a, 1)?);
            let shift = string_arg(&a, 0)?;
            match super::time::parse_go_duration(&shift) {
                Some(nanos) => Ok(super::time::shifted(&t, nanos)),
                None => err(format!("time: invalid duration {shift:?}")),
            }
        },
        "durationRound" => |_, a| Ok(Value::from(super::time::duration_round(&arg(&a, 0)?))),
        // Sprig: dicts.
        "dict" => |_, a| {
            let mut m = BTreeMap::new();
            for pair in a.chunks(2) {
                let key = strval(&pair[0]);
                m.insert(key, pair.get(1).cloned().unwrap_or(Value::Nil));
            }
            Ok(Value::map(m))
        },
        "get" => |c, a| {
            let m = c.map_param(&a, 0)?;
            let key = string_arg(&a, 1)?;
            let found = m.borrow().get(&key).cloned();
            Ok(found.unwrap_or_else(|| Value::from("")))
        },
        "set" => |_, a| {
            // In place, as Go's maps are references: every holder of the dict sees the change.
            let m = map_arg(&a, 0)?;
            let value = arg(&a, 2)?;
            if value.holds(&m) {
                return err("set: a dict cannot be put inside itself");
            }
            m.borrow_mut().insert(string_arg(&a, 1)?, value);
            Ok(Value::Map(m))
        },
        "unset" => |_, a| {
            let m = map_arg(&a, 0)?;
            m.borrow_mut().remove(&string_arg(&a, 1)?);
            Ok(Value::Map(m))
        },
        "hasKey" => |c, a| {
            let key = string_arg(&a, 1)?;
            Ok(Value::Bool(c.map_param(&a, 0)?.borrow().contains_key(&key)))
        },
        "pluck" => |_, a| {
            let key = string_arg(&a, 0)?;
            Ok(Value::list(
                a[1..]
                    .iter()
                    .filter_map(|d| match d {
                        Value::Map(m) => m.borrow().get(&key).cloned(),
                        _ => None,
                    })
                    .collect(),
            ))
        },
        "keys" => |_, a| {
            let mut keys: Vec<Value> = Vec::new();
            for d in &a {
                if let Value::Map(m) = d {
                    keys.extend(m.borrow().keys().map(|k| Value::from(k.as_str())));
                }
            }
            Ok(Value::list(keys))
        },
        "values" => |c, a| {
            Ok(Value::list(
                c.map_param(&a, 0)?.borrow().values().cloned().collect(),
            ))
        },
        "pick" => |c, a| {
            let m = c.map_param(&a, 0)?;
            let wanted: Vec<String> = a[1..].iter().map(strval).collect();
            let picked = m
                .borrow()
                .iter()
                .filter(|(k, _)| wanted.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Ok(Value::map(picked))
        },
        "omit" => |c, a| {
            let m = c.map_param(&a, 0)?;
            let dropped: Vec<String> = a[1..].iter().map(strval).collect();
            let kept = m
                .borrow()
                .iter()
                .filter(|(k, _)| !dropped.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Ok(Value::map(kept))
        },
        "merge" | "mustMerge" => |_, a| merge(a, false),
        "mergeOverwrite" | "mustMergeOverwrite" => |_, a| merge(a, true),
        "deepCopy" | "mustDeepCopy" => |_, a| Ok(arg(&a, 0)?.deep_copy()),
        "dig" => |_, a| {
            if a.len() < 3 {
                return err("dig needs at least three arguments");
            }
            let default = a[a.len() - 2].clone();
            let mut cur = a[a.len() - 1].clone();
            for key in &a[..a.len() - 2] {
                let next = match &cur {
                    Value::Map(m) => m.borrow().get(&strval(key)).cloned(),
                    _ => None,
                };
                cur = match next {
                    Some(v) => v,
                    None => return Ok(default),
                };
            }
            Ok(cur)
        },
        // Sprig: math. Integer math returns int64; the `f` forms float64.
        "add" => |_, a| {
            Ok(Value::Int64(
                a.iter().map(to_int).fold(0i64, i64::wrapping_add),
            ))
        },
        "add1" => |_, a| Ok(Value::Int64(to_int(&arg(&a, 0)?).wrapping_add(1))),
        "sub" => |_, a| {
            Ok(Value::Int64(
                to_int(&arg(&a, 0)?).wrapping_sub(to_int(&arg(&a, 1)?)),
            ))
        },
        "mul" => |_, a| {
            Ok(Value::Int64(
                a.iter().map(to_int).fold(1i64, i64::wrapping_mul),
            ))
        },
        "div" => |_, a| {
            let d = to_int(&arg(&a, 1)?);
            if d == 0 {
                return err("runtime error: integer divide by zero");
            }
            Ok(Value::Int64(to_int(&arg(&a, 0)?).wrapping_div(d)))
        },
        "mod" => |_, a| {
            let d = to_int(&arg(&a, 1)?);
            if d == 0 {
                return err("runtime error: integer divide by zero");
            }
            Ok(Value::Int64(to_int(&arg(&a, 0)?).wrapping_rem(d)))
        },
        "max" => |_, a| Ok(Value::Int64(a.iter().map(to_int).max().unwrap_or(0))),
        "min" => |_, a| Ok(Value::Int64(a.iter().map(to_int).min().unwrap_or(0))),
        "addf" => |_, a| Ok(Value::Float(a.iter().map(to_float).sum())),
        "add1f" => |_, a| Ok(Value::Float(to_float(&arg(&a, 0)?) + 1.0)),
        "subf" => |_, a| {
            let mut it = a.iter().map(to_float);
            let first = it.next().unwrap_or(0.0);
            Ok(Value::Float(it.fold(first, |x, y| x - y)))
        },
        "mulf" => |_, a| Ok(Value::Float(a.iter().map(to_float).product())),
        "divf" => |_, a| {
            let mut it = a.iter().map(to_float);
            let first = it.next().unwrap_or(0.0);
            Ok(Value::Float(it.fold(first, |x, y| x / y)))
        },
        "maxf" => |_, a| {
            Ok(Value::Float(
                a.iter().map(to_float).fold(f64::MIN, f64::max),
            ))
        },
        "minf" => |_, a| {
            Ok(Value::Float(
                a.iter().map(to_float).fold(f64::MAX, f64::min),
            ))
        },
        "floor" => |_, a| Ok(Value::Float(to_float(&arg(&a, 0)?).floor())),
        "ceil" => |_, a| Ok(Value::Float(to_float(&arg(&a, 0)?).ceil())),
        "round" => |_, a| {
            let places = a.get(1).map(to_int).unwrap_or(0);
            let p = 10f64.powi(places as i32);
            let v = to_float(&arg(&a, 0)?) * p;
            // Sprig rounds half away from zero (its `roundOn` is 0.5).
            Ok(Value::Float(v.round() / p))
        },
        // Sprig: encoding and hashing.
        "b64enc" => |_, a| {
            use base64::Engine;
            Ok(Value::from(
                base64::engine::general_purpose::STANDARD
                    .encode(gostring::to_bytes(&strval(&arg(&a, 0)?))),
            ))
        },
        "b64dec" => |_, a| {
            use base64::Engine;
            Ok(Value::from(match base64::engine::general_purpose::STANDARD
                .decode(strval(&arg(&a, 0)?))
            {
                Ok(bytes) => gostring::from_bytes(&bytes).into_owned(),
                Err(e) => e.to_string(),
            }))
        },
        "sha256sum" => |_, a| {
            Ok(Value::from(super::digest::sha256_hex(&gostring::to_bytes(
                &strval(&arg(&a, 0)?),
            ))))
        },
        "sha1sum" => |_, a| {
            Ok(Value::from(super::digest::sha1_hex(&gostring::to_bytes(
                &strval(&arg(&a, 0)?),
            ))))
        },
        "adler32sum" => |_, a| {
            Ok(Value::from(
                super::digest::adler32(&gostring::to_bytes(&strval(&arg(&a, 0)?))).to_string(),
            ))
        },
        // Sprig: semver.
        "semverCompare" => |_, a| {
            let (constraint, version) = (string_arg(&a, 0)?, string_arg(&a, 1)?);
            super::semver::matches(&constraint, &version)
                .map(Value::Bool)
                .map_err(|e| Failure::Exec(e.to_string()))
        },
        "semver" => |_, a| super::semver::parse_object(&string_arg(&a, 0)?).map_err(Failure::Exec),
        // Sprig: random and time (their output differs run to run; tests compare shapes).
        "uuidv4" => |_, _| Ok(Value::from(super::random::uuid_v4())),
        "randAlphaNum" => |_, a| {
            Ok(Value::from(super::random::string(
                to_int(&arg(&a, 0)?),
                super::random::ALPHANUM,
            )))
        },
        "randAlpha" => |_, a| {
            Ok(Value::from(super::random::string(
                to_int(&arg(&a, 0)?),
                super::random::ALPHA,
            )))
        },
        "randNumeric" => |_, a| {
            Ok(Value::from(super::random::string(
                to_int(&arg(&a, 0)?),
                super::random::NUMERIC,
            )))
        },
        "randAscii" => |_, a| {
            Ok(Value::from(super::random::string(
                to_int(&arg(&a, 0)?),
                super::random::ASCII,
            )))
        },
        "randInt" => |_, a| {
            Ok(Value::Int(super::random::int_between(
                to_int(&arg(&a, 0)?),
                to_int(&arg(&a, 1)?),
            )))
        },
        "now" => |_, _| Ok(super::time::now()),
        "date" => |_, a| {
            let t = super::time::time_of(&arg(&a, 1)?);
            Ok(Value::from(super::time::format_go(&t, &string_arg(&a, 0)?)))
        },
        "dateInZone" => |_, a| {
            let t = super::time::time_of(&arg(&a, 1)?);
            let t = super::time::in_zone(t, &string_arg(&a, 2)?);
            Ok(Value::from(super::time::format_go(&t, &string_arg(&a, 0)?)))
        },
        "htmlDate" => |_, a| {
            let t = super::time::time_of(&arg(&a, 0)?);
            Ok(Value::from(super::time::format_go(&t, "2006-01-02")))
        },
        "htmlDateInZone" => |_, a| {
            let t = super::time::time_of(&arg(&a, 0)?);
            let t = super::time::in_zone(t, &string_arg(&a, 1)?);
            Ok(Value::from(super::time::format_go(&t, "2006-01-02")))
        },
        "unixEpoch" => |_, a| {
            let t = super::time::time_of(&arg(&a, 0)?);
            Ok(Value::from(t.timestamp().as_second().to_string()))
        },
        "ago" => |_, a| {
            let t = super::time::time_of(&arg(&a, 0)?);
            let secs = jiff::Timestamp::now().as_second() - t.timestamp().as_second();
            Ok(Value::from(super::time::duration(secs)))
        },
        // Sprig reads only an `int64` or a string here; anything else (a literal `int`) is 0.
        "duration" => |_, a| {
            let secs = match arg(&a, 0)? {
                Value::Int64(n) => n,
                Value::Str(s) => s.parse().unwrap_or(0),
                _ => 0,
            };
            Ok(Value::from(super::time::duration(secs)))
        },
        "toDate" | "mustToDate" => |_, a| {
            // Go layouts are not parsed: the text is read as RFC 3339 or a plain date, the forms
            // charts pass (`toDate "2006-01-02" "2024-05-01"`).
            let text = string_arg(&a, 1)?;
            let zoned = text
                .parse::<jiff::Timestamp>()
                .map(|t| t.to_zoned(jiff::tz::TimeZone::UTC))
                .or_else(|_| {
                    text.parse::<jiff::civil::Date>()
                        .map_err(|e| e.to_string())
                        .and_then(|d| {
                            d.to_zoned(jiff::tz::TimeZone::UTC)
                                .map_err(|e| e.to_string())
                        })
                })
                .map_err(|e| Failure::Exec(format!("parsing time {text:?}: {e}")))?;
            Ok(Value::Object(std::rc::Rc::new(super::time::Time(zoned))))
        },
        "b32enc" => |_, a| {
            Ok(Value::from(
                data_encoding::BASE32.encode(&gostring::to_bytes(&strval(&arg(&a, 0)?))),
            ))
        },
        "sha512sum" => |_, a| {
            Ok(Value::from(super::digest::sha512_hex(&gostring::to_bytes(
                &strval(&arg(&a, 0)?),
            ))))
        },
        "abbrevboth" => |_, a| {
            let (left, right) = (to_int(&arg(&a, 0)?), to_int(&arg(&a, 1)?));
            let s = string_arg(&a, 2)?;
            if right < 4 || left > 0 && right < 7 {
                return Ok(Value::from(s));
            }
            Ok(Value::from(abbreviate_full(&s, left, right)))
        },
        "biggest" => |_, a| Ok(Value::Int64(a.iter().map(to_int).max().unwrap_or(0))),
        "urlParse" => |_, a| Ok(url_parse(&str_arg(&a, 0)?)),
        "randBytes" => |_, a| {
            use base64::Engine;
            let n = to_int(&arg(&a, 0)?).clamp(0, 1 << 20) as usize;
            Ok(Value::from(
                base64::engine::general_purpose::STANDARD.encode(super::random::bytes(n)),
            ))
        },
        "shuffle" => |_, a| {
            let s = str_arg(&a, 0)?;
            let mut chars: Vec<char> = s.chars().collect();
            for i in (1..chars.len()).rev() {
                let j = super::random::int_between(0, i as i64 + 1) as usize;
                chars.swap(i, j);
            }
            Ok(Value::from(chars.into_iter().collect::<String>()))
        },
        "urlJoin" => |_, a| {
            let m = map_arg(&a, 0)?;
            let m = m.borrow();
            let part = |k: &str| m.get(k).map(strval).unwrap_or_default();
            let mut out = String::new();
            if !part("scheme").is_empty() {
                out.push_str(&format!("{}://", part("scheme")));
            }
            if !part("userinfo").is_empty() {
                out.push_str(&format!("{}@", part("userinfo")));
            }
            out.push_str(&part("host"));
            out.push_str(&part("path"));
            if !part("query").is_empty() {
                out.push_str(&format!("?{}", part("query")));
            }
            if !part("fragment").is_empty() {
                out.push_str(&format!("#{}", part("fragment")));
            }
            Ok(Value::from(out))
        },
        "htpasswd" => |_, a| {
            Ok(Value::from(super::crypto::htpasswd(
                &string_arg(&a, 0)?,
                &string_arg(&a, 1)?,
            )))
        },
        "bcrypt" => |_, a| Ok(Value::from(super::crypto::bcrypt(&string_arg(&a, 0)?))),
        "derivePassword" => |_, a| {
            let counter = u32::try_from(to_int(&arg(&a, 0)?)).unwrap_or(0);
            Ok(Value::from(super::crypto::derive_password(
                counter,
                &string_arg(&a, 1)?,
                &string_arg(&a, 2)?,
                &string_arg(&a, 3)?,
                &string_arg(&a, 4)?,
            )))
        },
        "encryptAES" => |_, a| {
            super::crypto::encrypt_aes(&string_arg(&a, 0)?, &string_arg(&a, 1)?)
                .map(Value::from)
                .map_err(Failure::Exec)
        },
        "decryptAES" => |_, a| {
            super::crypto::decrypt_aes(&string_arg(&a, 0)?, &string_arg(&a, 1)?)
                .map(Value::from)
                .map_err(Failure::Exec)
        },
        "buildCustomCert" => |_, a| {
            super::certs::build_custom_cert(&string_arg(&a, 0)?, &string_arg(&a, 1)?)
                .map_err(Failure::Exec)
        },
        // Sprig: paths (Go's `path`, slash-separated).
        "base" | "osBase" => |_, a| Ok(Value::from(path_base(&string_arg(&a, 0)?))),
        "dir" | "osDir" => |_, a| Ok(Value::from(path_dir(&string_arg(&a, 0)?))),
        "ext" | "osExt" => |_, a| {
            let p = string_arg(&a, 0)?;
            let base = p.rsplit('/').next().unwrap_or(&p);
            Ok(Value::from(base.rfind('.').map_or("", |i| &base[i..])))
        },
        "clean" | "osClean" => |_, a| Ok(Value::from(path_clean(&string_arg(&a, 0)?))),
        "isAbs" | "osIsAbs" => |_, a| Ok(Value::Bool(string_arg(&a, 0)?.starts_with('/'))),
        "genCA" | "genCAWithKey" => |_, a| {
            let key = a.get(2).map(strval);
            super::certs::gen_ca(&string_arg(&a, 0)?, to_int(&arg(&a, 1)?), key.as_deref())
                .map_err(Failure::Exec)
        },
        "genSelfSignedCert" | "genSelfSignedCertWithKey" => |_, a| {
            let key = a.get(4).map(strval);
            super::certs::gen_self_signed(&cert_subject(&a)?, key.as_deref()).map_err(Failure::Exec)
        },
        "genSignedCert" | "genSignedCertWithKey" => |_, a| {
            let (ca_cert, ca_key) = match arg(&a, 4)? {
                Value::Map(m) => {
                    let m = m.borrow();
                    let field = |name: &str| m.get(name).map(strval).unwrap_or_default();
                    (field("Cert"), field("Key"))
                }
                _ => return err("genSignedCert: the CA is not a certificate"),
            };
            let key = a.get(5).map(strval);
            super::certs::gen_signed(&cert_subject(&a)?, (&ca_cert, &ca_key), key.as_deref())
                .map_err(Failure::Exec)
        },
        "genPrivateKey" => |_, a| {
            Ok(Value::from(super::certs::gen_private_key(&string_arg(
                &a, 0,
            )?)))
        },
        "getHostByName" => |_, _| Ok(Value::from("")),
        _ => return None,
    })
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
        Value::Nil => err("invalid value; expected string"),
        other => err(format!(
            "wrong type for value; expected string; got {}",
            other.type_name()
        )),
    }
}

fn map_arg(a: &[Value], i: usize) -> Result<MapRef, Failure> {
    match arg(a, i)? {
        Value::Map(m) => Ok(m),
        other => err(format!(
            "wrong type for value; expected map[string]interface {{}}; got {}",
            other.type_name()
        )),
    }
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
    !v.truthy() && !matches!(v, Value::Object(_))
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

fn printf_fn(_: &mut Call<'_, '_, '_>, a: Args) -> R {
    let format = string_arg(&a, 0)?;
    Ok(Value::from(printf(&format, &a[1..])))
}

/// Go's `fmt.Sprintf` for the verbs templates use.
pub fn printf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut next = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut flags = String::new();
        while let Some(&f) = chars.peek() {
            if "+-# 0".contains(f) {
                flags.push(f);
                chars.next();
            } else {
                break;
            }
        }
        // Go's `parsenum`: a width or precision past a million is taken as garbage, and the
        // rest of the format with it (`%!(NOVERB)` follows).
        let number = |chars: &mut std::iter::Peekable<std::str::Chars<'_>>| {
            let mut n: usize = 0;
            while let Some(&d) = chars.peek() {
                let Some(digit) = d.to_digit(10) else { break };
                if n > 1_000_000 {
                    chars.by_ref().for_each(drop);
                    return None;
                }
                n = n * 10 + digit as usize;
                chars.next();
            }
            Some(n)
        };
        let Some(width) = number(&mut chars) else {
            out.push_str("%!(NOVERB)");
            break;
        };
        let mut precision: Option<usize> = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let Some(p) = number(&mut chars) else {
                out.push_str("%!(NOVERB)");
                break;
            };
            precision = Some(p);
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(v) = args.get(next) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        next += 1;
        let text = format_verb(verb, v, precision, &flags);
        let len = text.chars().count();
        if len < width {
            let pad = width - len;
            if flags.contains('-') {
                out.push_str(&text);
                out.push_str(&" ".repeat(pad));
            } else if flags.contains('0') && matches!(verb, 'd' | 'f' | 'x' | 'X' | 'e' | 'g') {
                let (sign, digits) = match text.strip_prefix('-') {
                    Some(d) => ("-", d.to_string()),
                    None => ("", text.clone()),
                };
                out.push_str(sign);
                out.push_str(&"0".repeat(pad));
                out.push_str(&digits);
            } else {
                out.push_str(&" ".repeat(pad));
                out.push_str(&text);
            }
        } else {
            out.push_str(&text);
        }
    }
    if next < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[next..]
            .iter()
            .map(|v| format!("{}={}", v.type_name(), v.to_print_inner()))
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}

fn format_verb(verb: char, v: &Value, precision: Option<usize>, flags: &str) -> String {
    let bad = || format!("%!{verb}({}={})", v.type_name(), v.to_print_inner());
    match verb {
        'v' => v.to_print_inner(),
        's' => match v {
            Value::Str(s) => match precision {
                Some(p) => s.chars().take(p).collect(),
                None => s.to_string(),
            },
            Value::Int(_) | Value::Int64(_) | Value::Float(_) | Value::Bool(_) => bad(),
            other => other.to_print_inner(),
        },
        'q' => match v {
            Value::Str(s) => go_quote(s),
            Value::Int(i) | Value::Int64(i) => {
                format!("'{}'", char::from_u32(*i as u32).unwrap_or('\u{fffd}'))
            }
            _ => bad(),
        },
        'd' => match v {
            Value::Int(i) | Value::Int64(i) => {
                if flags.contains('+') && *i >= 0 {
                    format!("+{i}")
                } else {
                    i.to_string()
                }
            }
            _ => bad(),
        },
        't' => match v {
            Value::Bool(b) => b.to_string(),
            _ => bad(),
        },
        'f' | 'F' => match v {
            Value::Float(f) => go_fixed(*f, precision.unwrap_or(6)),
            _ => bad(),
        },
        'e' => match v {
            Value::Float(f) => go_exp(*f, precision.unwrap_or(6)),
            _ => bad(),
        },
        'g' => match v {
            Value::Float(f) => format_float_g(*f),
            _ => bad(),
        },
        'x' | 'X' => {
            let s = match v {
                Value::Int(i) | Value::Int64(i) => format!("{i:x}"),
                Value::Str(s) => s.bytes().map(|b| format!("{b:02x}")).collect(),
                _ => return bad(),
            };
            if verb == 'X' { s.to_uppercase() } else { s }
        }
        'o' => match v {
            Value::Int(i) | Value::Int64(i) => format!("{i:o}"),
            _ => bad(),
        },
        'b' => match v {
            Value::Int(i) | Value::Int64(i) => format!("{i:b}"),
            _ => bad(),
        },
        'c' => match v {
            Value::Int(i) | Value::Int64(i) => char::from_u32(*i as u32)
                .map(String::from)
                .unwrap_or_default(),
            _ => bad(),
        },
        'T' => v.type_name(),
        other => format!("%!{other}({}={})", v.type_name(), v.to_print_inner()),
    }
}

/// Digits past this many after the point are all zeros in a float's exact decimal form (an
/// `f64`'s smallest fraction, 2^-1074, has 1,074), and Rust's formatter refuses a precision past
/// 65,535 (a panic) where Go's takes up to a million: longer ones are written up to here and
/// padded with zeros, which is what Go prints.
const EXACT_DIGITS: usize = 1_100;

/// Go's `%f` with `precision` digits after the point.
fn go_fixed(f: f64, precision: usize) -> String {
    let mut s = format!("{:.*}", precision.min(EXACT_DIGITS), f);
    if f.is_finite() && precision > EXACT_DIGITS {
        s.extend(std::iter::repeat_n('0', precision - EXACT_DIGITS));
    }
    s
}

/// Go's `%e`: `1.500000e+00`.
fn go_exp(f: f64, precision: usize) -> String {
    let mut s = format!("{:.*e}", precision.min(EXACT_DIGITS), f);
    if f.is_finite() && precision > EXACT_DIGITS {
        let e = s.find('e').unwrap_or(s.len());
        s.insert_str(e, &"0".repeat(precision - EXACT_DIGITS));
    }
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    format!(
        "{mantissa}e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    )
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
    /// Precisions past Rust's formatter's bound print as Go prints them (Helm 4.2.3 gives the
    /// same text for these, checked by their SHA-256), not a panic.
    #[test]
    fn float_precisions_past_rusts_bound_print_as_gos() {
        use super::{Value, printf};
        let fixed = printf("%.70000f", &[Value::Float(0.1)]);
        assert_eq!(fixed.len(), 70_002);
        assert!(fixed.starts_with("0.1000000000000000055511151231257827"));
        assert!(
            fixed
                .trim_end_matches('0')
                .ends_with("1231257827021181583404541015625")
        );
        let exp = printf("%.3000e", &[Value::Float(0.1)]);
        assert!(exp.starts_with("1.000000000000000055511151231257827") && exp.ends_with("000e-01"));
        assert_eq!(exp.len(), 3_006);
        assert_eq!(printf("%.70000f", &[Value::Float(f64::NAN)]), "NaN");
    }

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

    /// Every function `find` matches is in `NAMES` (the table `lookup` is built from): a function
    /// added to one and not the other would silently not exist.
    #[test]
    fn the_name_table_lists_every_function() {
        let source = include_str!("funcs.rs");
        let body = &source[source.find("fn find(name").unwrap()..];
        let body = &body[..body.find("_ => return None").unwrap()];
        let arm = regex::Regex::new(r#"(?m)^\s{8}((?:"\w+"\s*\|\s*)*"\w+")\s*=>"#).unwrap();
        let name = regex::Regex::new(r#""(\w+)""#).unwrap();
        let mut count = 0;
        for cap in arm.captures_iter(body) {
            for n in name.captures_iter(&cap[1]) {
                count += 1;
                assert!(super::NAMES.contains(&&n[1]), "{} is not in NAMES", &n[1]);
                assert!(super::lookup(&n[1]).is_some(), "{}", &n[1]);
            }
        }
        assert_eq!(count, super::NAMES.len());
    }
}
