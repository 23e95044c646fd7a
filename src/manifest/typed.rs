//! YAML documents read into typed Rust values (configuration, rule files, the catalog), with
//! every problem at its file:line:col: the document is read by the YAML stack ([`super::yaml`])
//! with its positions, checked against the type's JSON Schema where there is one, and
//! deserialised through serde, whose errors are placed back at the node they name.

use serde::de::DeserializeOwned;

use crate::error::{Error, ErrorKind, Errors, did_you_mean};
use crate::value::Value;

use crate::value::escape_pointer_token;
use crate::value::yaml::{self, PosNode};

/// Parses one YAML document into `T`, checking it against `schema` (`T`'s JSON Schema) first so
/// that every problem is reported at once, each at its file:line:col, with a suggestion for a
/// misspelt key or value. What the schema can't say (a regex that doesn't compile) is then
/// serde's error, as in [`parse_typed`].
pub fn parse_checked<T: DeserializeOwned>(
    text: &str,
    name: &str,
    schema: &serde_json::Value,
) -> Result<T, Errors> {
    let doc = first_document(text, name)?;
    let value = serde_json::Value::from(&doc.value);
    // The schema is generated from winguard's own types: failing to compile it is a bug, and
    // then serde alone checks the file.
    if let Ok(validator) = jsonschema::validator_for(schema) {
        let mut errors: Vec<Error> = validator
            .iter_errors(&value)
            .flat_map(|e| schema_problems(&e, schema))
            .map(|(pointer, message)| {
                let (line, column) = position_of(&doc.value, &doc.pos, &pointer);
                let path = if pointer.is_empty() {
                    String::new()
                } else {
                    format!("{}: ", dotted(&pointer))
                };
                Error {
                    kind: ErrorKind::Load,
                    file: name.to_string(),
                    line: Some(line),
                    column: Some(column),
                    message: format!("{path}{message}"),
                }
            })
            .collect();
        if !errors.is_empty() {
            errors.sort_by_key(|e| (e.line, e.column));
            errors.dedup();
            return Err(Errors(errors));
        }
    }
    deserialize_document(&doc, name).map_err(Errors::from)
}

/// The first YAML document of a file, with positions.
fn first_document(text: &str, name: &str) -> Result<yaml::ParsedDoc, Error> {
    // The block reader first (its values and positions are the full parser's for every document
    // it takes, `tests/fast_yaml.rs`): the catalog, rule files and most configs are block YAML,
    // and the full parser took a one-file lint's start-up a fifth of its time on them.
    if let Some(doc) = crate::value::block::read_document(text, 0)
        && !doc.value.is_null()
    {
        return Ok(doc);
    }
    let (mut docs, err) = yaml::parse_stream(text);
    if let Some(e) = err {
        return Err(Error {
            kind: ErrorKind::Load,
            file: name.to_string(),
            line: Some(e.line),
            column: Some(e.col),
            message: format!("invalid YAML: {}", e.message),
        });
    }
    if docs.is_empty() {
        return Err(Error::new(ErrorKind::Load, name, "empty document"));
    }
    Ok(docs.swap_remove(0))
}

/// `/windows/taints/0` as serde_path_to_error writes it: `windows.taints[0]`.
fn dotted(pointer: &str) -> String {
    let mut out = String::new();
    for token in pointer.split('/').skip(1) {
        let token = crate::value::unescape_pointer_token(token);
        if token.parse::<usize>().is_ok() {
            out.push_str(&format!("[{token}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    out
}

/// A schema error as (JSON pointer, message): unknown keys at the key itself, with the closest
/// known key suggested; values outside a fixed set with the closest one suggested.
fn schema_problems(
    e: &jsonschema::ValidationError<'_>,
    schema: &serde_json::Value,
) -> Vec<(String, String)> {
    use jsonschema::error::ValidationErrorKind as K;
    let at = e.instance_path().as_str().to_string();
    match e.kind() {
        K::AdditionalProperties { unexpected } => {
            let known = known_keys(schema, &at);
            unexpected
                .iter()
                .map(|key| {
                    let hint = did_you_mean(key, known.iter().map(String::as_str));
                    let choices = if hint.is_empty() && !known.is_empty() {
                        format!("; known keys: {}", known.join(", "))
                    } else {
                        String::new()
                    };
                    (
                        format!("{at}/{}", escape_pointer_token(key)),
                        format!("unknown field `{key}`{hint}{choices}"),
                    )
                })
                .collect()
        }
        K::PropertyNames { error } => schema_problems(error, schema)
            .into_iter()
            .map(|(_, message)| {
                let key = error.instance().as_str().unwrap_or_default().to_string();
                (format!("{at}/{}", escape_pointer_token(&key)), message)
            })
            .collect(),
        K::Enum { options } => {
            let choices: Vec<String> = options
                .as_array()
                .map(|o| {
                    o.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default();
            let given = match e.instance().as_ref() {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            let hint = did_you_mean(&given, choices.iter().map(String::as_str));
            let message = match expected(schema, e) {
                Some(x) => format!("`{given}` is not {x}{hint}"),
                None => format!("`{given}` is not one of {}{hint}", choices.join(", ")),
            };
            vec![(at, message)]
        }
        _ => {
            // The schema says what it expected where a pattern or a choice of shapes alone
            // would make an unreadable message (`x-expected`, on the failing subschema).
            let message = match (expected(schema, e), e.instance().as_ref()) {
                (Some(x), serde_json::Value::String(given)) if given.is_empty() => {
                    format!("{x} is required")
                }
                (Some(x), serde_json::Value::String(given)) => format!("`{given}` is not {x}"),
                (Some(x), other) => format!("{other} is not {x}"),
                (None, _) => e.to_string(),
            };
            vec![(at, message)]
        }
    }
}

/// What the failing subschema says it expects (`x-expected`), if it says.
fn expected<'s>(
    schema: &'s serde_json::Value,
    e: &jsonschema::ValidationError<'_>,
) -> Option<&'s str> {
    subschema(schema, e.schema_path().as_str())?
        .get("x-expected")?
        .as_str()
}

/// The subschema holding the keyword at `keyword_location` (`/properties/a/pattern`), through
/// `$ref`s.
fn subschema<'s>(
    schema: &'s serde_json::Value,
    keyword_location: &str,
) -> Option<&'s serde_json::Value> {
    let mut node = schema;
    let tokens: Vec<&str> = keyword_location.split('/').skip(1).collect();
    let (_, parents) = tokens.split_last()?;
    for token in parents {
        let token = crate::value::unescape_pointer_token(token);
        node = if token == "$ref" {
            let target = node.get("$ref")?.as_str()?.strip_prefix('#')?;
            schema.pointer(target)?
        } else if let Ok(i) = token.parse::<usize>() {
            node.get(i)?
        } else {
            node.get(token.as_ref())?
        };
    }
    Some(node)
}

/// The schema `s` stands for, following its `$ref`s (`#/$defs/Name`) within `schema`.
pub(crate) fn resolve<'s>(
    schema: &'s serde_json::Value,
    mut s: &'s serde_json::Value,
) -> &'s serde_json::Value {
    while let Some(r) = s.get("$ref").and_then(|r| r.as_str()) {
        match r.strip_prefix('#').and_then(|p| schema.pointer(p)) {
            Some(target) => s = target,
            None => break,
        }
    }
    s
}

/// The keys the schema allows for the object at `pointer` (following `$ref`s into `$defs`).
fn known_keys(schema: &serde_json::Value, pointer: &str) -> Vec<String> {
    let mut node = resolve(schema, schema);
    for token in pointer.split('/').skip(1) {
        let token = crate::value::unescape_pointer_token(token);
        let next = if token.parse::<usize>().is_ok() {
            node.get("items")
        } else {
            node.get("properties")
                .and_then(|p| p.get(token.as_ref()))
                .or_else(|| node.get("additionalProperties"))
        };
        match next {
            Some(n) => node = resolve(schema, n),
            None => return Vec::new(),
        }
    }
    node.get("properties")
        .and_then(|p| p.as_object())
        .map(|p| p.keys().cloned().collect())
        .unwrap_or_default()
}

/// Parses one YAML document into `T`, turning serde errors into file:line:col errors.
pub fn parse_typed<T: DeserializeOwned>(text: &str, name: &str) -> Result<T, Error> {
    deserialize_document(&first_document(text, name)?, name)
}

/// [`parse_typed`], keeping the parsed document (for positions inside its values).
pub fn parse_typed_with_doc<T: DeserializeOwned>(
    text: &str,
    name: &str,
) -> Result<(T, yaml::ParsedDoc), Error> {
    let doc = first_document(text, name)?;
    Ok((deserialize_document(&doc, name)?, doc))
}

/// The 1-based line and column of byte `offset` of a scalar's value, given the value's position
/// in the source: plain and quoted scalars count from their first character (a folded line break
/// and the next line's indentation are one character of the value), block scalars (`|`, `>`)
/// from their first content line. Escapes in quoted scalars are not undone, so a position after
/// one can be a few columns off.
pub fn scalar_position(source: &str, line: u32, col: u32, offset: usize) -> (u32, u32) {
    let lines: Vec<&str> = source.lines().collect();
    let Some(first) = lines.get(line.saturating_sub(1) as usize) else {
        return (line, col);
    };
    let start = first
        .char_indices()
        .nth(col.saturating_sub(1) as usize)
        .map_or(first.len(), |(b, _)| b);
    let rest = &first[start..];
    let (mut line_no, mut text, mut column) = match rest.chars().next() {
        Some('|' | '>') => {
            // Content starts on the next line, at the block's indentation.
            let next = line as usize;
            let Some(body) = lines[next..].iter().find(|l| !l.trim().is_empty()) else {
                return (line, col);
            };
            let indent = body.len() - body.trim_start().len();
            let skip = lines[next..]
                .iter()
                .take_while(|l| l.trim().is_empty())
                .count();
            let line_no = line as usize + skip + 1;
            (
                line_no,
                &lines[line_no - 1][indent.min(lines[line_no - 1].len())..],
                indent as u32 + 1,
            )
        }
        Some('\'' | '"') => (line as usize, &rest[1..], col + 1),
        _ => (line as usize, rest, col),
    };
    let mut remaining = offset;
    loop {
        let chars = text.chars().count();
        if remaining <= chars || line_no >= lines.len() {
            let within: usize = text.chars().take(remaining).count();
            return (line_no as u32, column + within as u32);
        }
        // The line's characters and the break that folds into one character.
        remaining -= chars + 1;
        line_no += 1;
        let next = lines[line_no - 1];
        let trimmed = next.trim_start();
        column = (next.len() - trimmed.len()) as u32 + 1;
        text = trimmed;
    }
}

/// A parsed document read into `T`; serde's error placed at its file:line:col.
fn deserialize_document<T: DeserializeOwned>(
    doc: &yaml::ParsedDoc,
    name: &str,
) -> Result<T, Error> {
    // Typed reading goes through `serde_json`'s value, which is a serde deserializer.
    let value = serde_json::Value::from(&doc.value);
    serde_path_to_error::deserialize::<_, T>(value).map_err(|e| {
        let mut pointer = String::new();
        for seg in e.path().iter() {
            use serde_path_to_error::Segment;
            match seg {
                Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
                Segment::Map { key } => {
                    pointer.push('/');
                    pointer.push_str(&escape_pointer_token(key));
                }
                _ => {}
            }
        }
        let message = e.inner().to_string();
        // serde reports an unknown field at its parent: point at the field itself.
        if let Some(rest) = message.strip_prefix("unknown field `")
            && let Some(field) = rest.split('`').next()
            && !pointer.ends_with(&format!("/{}", escape_pointer_token(field)))
        {
            pointer.push('/');
            pointer.push_str(&escape_pointer_token(field));
        }
        let (line, column) = position_of(&doc.value, &doc.pos, &pointer);
        let path = e.path().to_string();
        Error {
            kind: ErrorKind::Load,
            file: name.to_string(),
            line: Some(line),
            column: Some(column),
            message: if path == "." {
                message
            } else {
                format!("{path}: {message}")
            },
        }
    })
}

/// Position (value, or key of the nearest existing parent) of a JSON pointer in a parsed document.
pub fn position_of(value: &Value, pos: &PosNode, pointer: &str) -> (u32, u32) {
    let (pos, _) = crate::value::yaml::resolve(value, pos, pointer);
    if pos.key_line > 0 {
        (pos.key_line, pos.key_col)
    } else {
        (pos.line.max(1), pos.col.max(1))
    }
}
