//! Strings: CEL's own functions, then Kubernetes' strings library and cel-go's `ext`
//! strings (`charAt`, `indexOf`, `split`, `format`, …).

use super::*;

pub(super) fn register(r: &mut Registry) {
    cel_strings(r);
    extended_strings(r);
}

/// CEL's own string functions.
fn cel_strings(r: &mut Registry) {
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
    let matches: crate::expr::Impl = |c, a| {
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
}

/// The receiver itself, for a function that would return it unchanged: most strings rules
/// lower-case or trim already are, and a copy of each would be an allocation per call.
fn unchanged<'a>(a: &mut Args<'a>) -> Val<'a> {
    std::mem::replace(&mut a[0], Val::Null)
}

/// The receiver with its ASCII letters re-cased by `recase`, or the receiver itself when no byte
/// is one `changes` (no copy).
fn recased<'a>(a: &mut Args<'a>, changes: fn(&u8) -> bool, recase: fn(&str) -> String) -> Val<'a> {
    let text = s(&a[0]);
    if text.as_bytes().iter().any(changes) {
        Val::str(recase(text))
    } else {
        unchanged(a)
    }
}

/// cel-go's strings extension and Kubernetes' strings library.
fn extended_strings(r: &mut Registry) {
    r.add(
        "string.lowerAscii() -> string",
        "ASCII letters lower-cased",
        |_, a| Ok(recased(a, u8::is_ascii_uppercase, str::to_ascii_lowercase)),
    );
    r.add(
        "string.upperAscii() -> string",
        "ASCII letters upper-cased",
        |_, a| Ok(recased(a, u8::is_ascii_lowercase, str::to_ascii_uppercase)),
    );
    r.add(
        "string.trim() -> string",
        "leading and trailing whitespace removed",
        |_, a| {
            let text = s(&a[0]);
            let trimmed = text.trim();
            if trimmed.len() == text.len() {
                Ok(unchanged(a))
            } else {
                Ok(Val::str(trimmed))
            }
        },
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
}
