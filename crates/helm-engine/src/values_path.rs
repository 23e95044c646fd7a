//! Values paths as `--set` writes them (Helm's `strvals`): `image.tag`, `list[0].name`,
//! `nodeSelector.kubernetes\.io/os`.

/// One key of a values path and the list indexes after it: `list[0][1]` is `list`, `[0, 1]`.
pub type ValuesKey = (String, Vec<usize>);

/// The largest list index a values path may name (Helm's `strvals` limit).
const MAX_INDEX: usize = 65_536;

/// A values path that does not read, in Helm's `strvals` words where it has them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("failed to parse list index in {0:?}")]
    ListIndex(String),
    #[error("index of {0} is greater than maximum supported index {MAX_INDEX}")]
    IndexTooLarge(usize),
    #[error("invalid key {path:?}: {after:?} after a list index (expected `.`, `[` or the end)")]
    AfterIndex { path: String, after: char },
}

/// Reads a values path as `--set` writes its keys (Helm's `strvals`): keys split at `.`, list
/// indexes in `[n]`, and `\` taking the character after it as it is (`kubernetes\.io/os`, a key
/// with a dot). The one reader of that syntax: `--set` flags are applied with it, and the chart
/// tracer's paths and the values sites found for them are read with it.
pub fn parse_values_path(path: &str) -> Result<Vec<ValuesKey>, PathError> {
    let mut keys = Vec::new();
    let mut name = String::new();
    let mut indexes = Vec::new();
    let mut chars = path.chars();
    while let Some(c) = chars.next() {
        match c {
            '.' => keys.push((std::mem::take(&mut name), std::mem::take(&mut indexes))),
            '[' => {
                let (mut digits, mut closed) = (String::new(), false);
                for d in chars.by_ref() {
                    if d == ']' {
                        closed = true;
                        break;
                    }
                    digits.push(d);
                }
                let index = digits
                    .trim()
                    .parse::<usize>()
                    .ok()
                    .filter(|_| closed)
                    .ok_or_else(|| PathError::ListIndex(path.to_string()))?;
                if index > MAX_INDEX {
                    return Err(PathError::IndexTooLarge(index));
                }
                indexes.push(index);
            }
            _ if !indexes.is_empty() => {
                return Err(PathError::AfterIndex {
                    path: path.to_string(),
                    after: c,
                });
            }
            '\\' => name.push(chars.next().unwrap_or('\\')),
            c => name.push(c),
        }
    }
    keys.push((name, indexes));
    Ok(keys)
}

/// The tokens of a values path, keys and list indexes alike: `list[0].c` is `list`, `0`, `c`.
/// `None` for a path that does not read ([`parse_values_path`]).
pub fn values_path_tokens(path: &str) -> Option<Vec<String>> {
    let keys = parse_values_path(path).ok()?;
    let mut tokens = Vec::with_capacity(keys.len());
    for (i, (name, indexes)) in keys.into_iter().enumerate() {
        // `[0].a`: a path starting with an index has no key before it.
        if i > 0 || !name.is_empty() || indexes.is_empty() {
            tokens.push(name);
        }
        tokens.extend(indexes.iter().map(|n| n.to_string()));
    }
    Some(tokens)
}

/// A map key as one key of a values path: `.`, `[` and `\` escaped, so that
/// [`parse_values_path`] reads it back as one key.
pub fn escape_values_key(key: &str) -> std::borrow::Cow<'_, str> {
    if !key.contains(['.', '[', '\\']) {
        return key.into();
    }
    let mut out = String::with_capacity(key.len() + 2);
    for c in key.chars() {
        if matches!(c, '.' | '[' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.into()
}

/// A values path as `--set` writes it (`a.b`, `list[0].c`, `a\\.b` for a key with a dot) as a
/// JSON pointer (`/a/b`, `/list/0/c`, `/a.b`); `None` for a path that does not read.
pub fn path_pointer(path: &str) -> Option<String> {
    let tokens = values_path_tokens(path)?;
    Some(
        tokens
            .iter()
            .map(|t| format!("/{}", yaml_value::escape_pointer_token(t)))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_paths_read_as_helm_reads_set_keys() {
        let keys = |p: &str| parse_values_path(p);
        let owned = |v: &[(&str, &[usize])]| -> Vec<ValuesKey> {
            v.iter().map(|(k, i)| (k.to_string(), i.to_vec())).collect()
        };
        assert_eq!(keys("a.b"), Ok(owned(&[("a", &[]), ("b", &[])])));
        assert_eq!(
            keys("list[0][2].c"),
            Ok(owned(&[("list", &[0, 2]), ("c", &[])]))
        );
        // `\` takes the next character as it is, whatever it is.
        assert_eq!(
            keys(r"nodeSelector.kubernetes\.io/os"),
            Ok(owned(&[("nodeSelector", &[]), ("kubernetes.io/os", &[])]))
        );
        assert_eq!(keys(r"a\[0\]\\"), Ok(owned(&[("a[0]\\", &[])])));
        for bad in ["a[x]", "a[0", "a[0]b", "a[65537]"] {
            assert!(keys(bad).is_err(), "{bad}");
        }
        assert_eq!(
            values_path_tokens("a[1].b"),
            Some(vec!["a".into(), "1".into(), "b".into()])
        );
        assert_eq!(values_path_tokens("a[x]"), None);
        // A key written by the chart tracer reads back as the one key it was.
        for key in [
            "plain",
            "kubernetes.io/os",
            "a[0]",
            r"back\slash",
            "x.y[1]\\",
        ] {
            let escaped = escape_values_key(key);
            assert_eq!(keys(&escaped), Ok(owned(&[(key, &[])])), "{escaped}");
        }
    }
}
