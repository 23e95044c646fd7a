//! Sprig's string functions (`strings.go`).

use super::*;

pub(super) const FUNCS: &[(&[&str], Func)] = &[
    (&["trim"], |_, a| Ok(Value::from(str_arg(&a, 0)?.trim()))),
    // `trimall CUTSET S`: Go's `strings.Trim(S, CUTSET)`.
    (&["trimall"], |_, a| {
        let cutset: Vec<char> = string_arg(&a, 0)?.chars().collect();
        Ok(Value::from(
            string_arg(&a, 1)?.trim_matches(cutset.as_slice()),
        ))
    }),
    (&["hello"], |_, _| Ok(Value::from("Hello!"))),
    (&["trimAll"], |_, a| {
        let cut: Vec<char> = string_arg(&a, 0)?.chars().collect();
        Ok(Value::from(string_arg(&a, 1)?.trim_matches(cut.as_slice())))
    }),
    (&["trimPrefix"], |_, a| {
        let (p, s) = (str_arg(&a, 0)?, str_arg(&a, 1)?);
        Ok(Value::from(s.strip_prefix(&*p).unwrap_or(&s)))
    }),
    (&["trimSuffix"], |_, a| {
        let (p, s) = (str_arg(&a, 0)?, str_arg(&a, 1)?);
        Ok(Value::from(s.strip_suffix(&*p).unwrap_or(&s)))
    }),
    (&["upper"], |_, a| {
        Ok(Value::from(str_arg(&a, 0)?.to_uppercase()))
    }),
    (&["lower"], |_, a| {
        Ok(Value::from(str_arg(&a, 0)?.to_lowercase()))
    }),
    (&["title"], |_, a| {
        Ok(Value::from(title(&string_arg(&a, 0)?)))
    }),
    (&["untitle"], |_, a| {
        Ok(Value::from(untitle(&string_arg(&a, 0)?)))
    }),
    (&["repeat"], |_, a| {
        let n = to_int(&arg(&a, 0)?).max(0) as usize;
        let s = string_arg(&a, 1)?;
        if n.saturating_mul(s.len()) > MAX_BUILT {
            return err(format!(
                "repeat: the result would exceed {} MiB",
                MAX_BUILT >> 20
            ));
        }
        Ok(Value::from(s.repeat(n)))
    }),
    (&["substr"], |_, a| {
        let (start, end) = (to_int(&arg(&a, 0)?), to_int(&arg(&a, 1)?));
        let s = string_arg(&a, 2)?;
        Ok(Value::from(substr(&s, start, end)))
    }),
    (&["nospace"], |_, a| {
        Ok(Value::from(
            string_arg(&a, 0)?.split_whitespace().collect::<String>(),
        ))
    }),
    // Go slices the string's bytes: a cut inside a character leaves invalid UTF-8 there
    // (which Helm's YAML parser then refuses); here that character becomes U+FFFD.
    (&["trunc"], |_, a| {
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
    }),
    (&["abbrev"], |_, a| {
        let n = to_int(&arg(&a, 0)?);
        let s = string_arg(&a, 1)?;
        if n < 4 {
            return Ok(Value::from(s));
        }
        Ok(Value::from(abbreviate_full(&s, 0, n)))
    }),
    (&["initials"], |_, a| {
        Ok(Value::from(
            string_arg(&a, 0)?
                .split_whitespace()
                .filter_map(|w| w.chars().next())
                .collect::<String>(),
        ))
    }),
    (&["contains"], |_, a| {
        Ok(Value::Bool(str_arg(&a, 1)?.contains(&*str_arg(&a, 0)?)))
    }),
    (&["hasPrefix"], |_, a| {
        Ok(Value::Bool(str_arg(&a, 1)?.starts_with(&*str_arg(&a, 0)?)))
    }),
    (&["hasSuffix"], |_, a| {
        Ok(Value::Bool(str_arg(&a, 1)?.ends_with(&*str_arg(&a, 0)?)))
    }),
    (&["quote"], |_, a| {
        let parts: Vec<String> = a
            .iter()
            .filter(|v| !v.is_nil())
            .map(|v| match v {
                Value::Str(s) => go_quote(s),
                other => go_quote(&strval(other)),
            })
            .collect();
        Ok(Value::from(parts.join(" ")))
    }),
    (&["squote"], |_, a| {
        let parts: Vec<String> = a
            .iter()
            .filter(|v| !v.is_nil())
            .map(|v| format!("'{}'", strval(v)))
            .collect();
        Ok(Value::from(parts.join(" ")))
    }),
    (&["cat"], |_, a| {
        let parts: Vec<String> = a.iter().filter(|v| !v.is_nil()).map(strval).collect();
        Ok(Value::from(parts.join(" ")))
    }),
    (&["indent"], |c, a| {
        let text = str_arg(&a, 1)?;
        let n = indent_width(&arg(&a, 0)?, &text)?;
        Ok(traced_indent(c, a.get(1), &text, indent(n, &text), n, 0))
    }),
    (&["nindent"], |c, a| {
        let text = str_arg(&a, 1)?;
        let n = indent_width(&arg(&a, 0)?, &text)?;
        let mut out = String::from("\n");
        indent_into(&mut out, n, &text);
        Ok(traced_indent(c, a.get(1), &text, out, n, 1))
    }),
    (&["replace"], |_, a| {
        let (old, new, s) = (str_arg(&a, 0)?, str_arg(&a, 1)?, str_arg(&a, 2)?);
        Ok(Value::from(go_replace_all(&s, &old, &new)))
    }),
    (&["plural"], |_, a| {
        let (one, many) = (string_arg(&a, 0)?, string_arg(&a, 1)?);
        Ok(Value::from(if to_int(&arg(&a, 2)?) == 1 {
            one
        } else {
            many
        }))
    }),
    (&["snakecase"], |_, a| {
        Ok(Value::from(snake_case(&string_arg(&a, 0)?)))
    }),
    (&["camelcase"], |_, a| {
        Ok(Value::from(camel_case(&string_arg(&a, 0)?)))
    }),
    (&["kebabcase"], |_, a| {
        Ok(Value::from(
            snake_case(&string_arg(&a, 0)?).replace('_', "-"),
        ))
    }),
    (&["swapcase"], |_, a| {
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
    }),
    (&["wrap"], |_, a| {
        Ok(Value::from(wrap(
            &string_arg(&a, 1)?,
            to_int(&arg(&a, 0)?).max(1) as usize,
            "\n",
        )))
    }),
    (&["wrapWith"], |_, a| {
        Ok(Value::from(wrap(
            &string_arg(&a, 2)?,
            to_int(&arg(&a, 0)?).max(1) as usize,
            &string_arg(&a, 1)?,
        )))
    }),
    (&["split"], |_, a| {
        let (sep, s) = (string_arg(&a, 0)?, string_arg(&a, 1)?);
        Ok(StringMap::of_parts(go_split(&s, &sep)))
    }),
    (&["splitList"], |_, a| {
        let (sep, s) = (string_arg(&a, 0)?, string_arg(&a, 1)?);
        Ok(Value::list(
            go_split(&s, &sep).into_iter().map(Value::from).collect(),
        ))
    }),
    (&["splitn"], |_, a| {
        let (sep, n, s) = (string_arg(&a, 0)?, to_int(&arg(&a, 1)?), string_arg(&a, 2)?);
        let parts: Vec<String> = if n < 0 {
            go_split(&s, &sep)
        } else {
            s.splitn(n as usize, sep.as_str())
                .map(String::from)
                .collect()
        };
        Ok(StringMap::of_parts(parts))
    }),
    (&["join"], |_, a| {
        let sep = string_arg(&a, 0)?;
        let parts: Vec<String> = to_list(&arg(&a, 1)?)
            .iter()
            .filter(|v| !v.is_nil())
            .map(strval)
            .collect();
        Ok(Value::from(parts.join(&sep)))
    }),
    (&["sortAlpha"], |_, a| {
        let mut parts: Vec<String> = to_list(&arg(&a, 0)?).iter().map(strval).collect();
        parts.sort();
        Ok(Value::list(parts.into_iter().map(Value::from).collect()))
    }),
    (&["abbrevboth"], |_, a| {
        let (left, right) = (to_int(&arg(&a, 0)?), to_int(&arg(&a, 1)?));
        let s = string_arg(&a, 2)?;
        if right < 4 || left > 0 && right < 7 {
            return Ok(Value::from(s));
        }
        Ok(Value::from(abbreviate_full(&s, left, right)))
    }),
];

/// Go's `map[string]string`, what Sprig's `split` and `splitn` return (`_0`, `_1`, …): a missing
/// key reads as the empty string, not nil.
struct StringMap(BTreeMap<String, String>);

impl StringMap {
    fn of_parts(parts: Vec<String>) -> Value {
        let map = parts
            .into_iter()
            .enumerate()
            .map(|(i, part)| (format!("_{i}"), part))
            .collect();
        Value::Object(Rc::new(StringMap(map)))
    }
}

impl crate::template::value::Object for StringMap {
    fn type_name(&self) -> &str {
        "map[string]string"
    }
    fn field(&self, name: &str) -> Option<Value> {
        Some(Value::from(self.0.get(name).map_or("", String::as_str)))
    }
    fn display(&self) -> String {
        let entries: Vec<String> = self.0.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        format!("map[{}]", entries.join(" "))
    }
    fn entries(&self) -> Option<Vec<(Value, Value)>> {
        Some(
            self.0
                .iter()
                .map(|(k, v)| (Value::from(k.as_str()), Value::from(v.as_str())))
                .collect(),
        )
    }
    fn index(&self, key: &str) -> Option<Value> {
        self.field(key)
    }
    fn to_data(&self) -> Value {
        Value::map(
            self.0
                .iter()
                .map(|(k, v)| (k.clone(), Value::from(v.as_str())))
                .collect(),
        )
    }
}
