//! Errors for failing to read, parse or load (findings are not errors: see `engine::Finding`).

use crate::value::Value;
use serde::de::DeserializeOwned;

use crate::manifest::{PosNode, escape_pointer_token, yaml};

/// A config, rule or catalog file that can't be loaded, with where the problem is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.located())]
pub struct LoadError {
    pub file: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

impl LoadError {
    pub fn new(file: &str, message: impl Into<String>) -> Self {
        LoadError {
            file: file.to_string(),
            line: None,
            column: None,
            message: message.into(),
        }
    }
    fn located(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}: {}", self.file, self.message),
            _ => format!("{}: {}", self.file, self.message),
        }
    }
}

/// Parses one YAML document into `T`, turning serde errors into file:line:col errors.
pub fn parse_typed<T: DeserializeOwned>(text: &str, name: &str) -> Result<T, LoadError> {
    let (mut docs, err) = yaml::parse_stream(text);
    if let Some(e) = err {
        return Err(LoadError {
            file: name.to_string(),
            line: Some(e.line),
            column: Some(e.col),
            message: format!("invalid YAML: {}", e.message),
        });
    }
    if docs.is_empty() {
        return Err(LoadError::new(name, "empty document"));
    }
    let doc = docs.swap_remove(0);
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
        LoadError {
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
    let (pos, _) = crate::manifest::resolve(value, pos, pointer);
    if pos.key_line > 0 {
        (pos.key_line, pos.key_col)
    } else {
        (pos.line.max(1), pos.col.max(1))
    }
}

/// ` (did you mean `x`?)` when one of `candidates` is close to `word`, as clap suggests for
/// flags (Jaro similarity above 0.7, the closest first), else nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let best = candidates
        .into_iter()
        .map(|c| (strsim::jaro(word, c), c))
        .filter(|(score, _)| *score > 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, c)) => format!(" (did you mean `{c}`?)"),
        None => String::new(),
    }
}
