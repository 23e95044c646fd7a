//! Errors for failing to read, parse or load (findings are not errors: see `engine::Finding`).

/// What kind of thing failed: how outputs and exit codes tell errors apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A file winguard configures itself with: the config, a rule file, the catalog.
    Load,
    /// An input to lint or fix: a manifest, a kustomization, a file that can't be read.
    Input,
    /// A Helm chart that can't be loaded or rendered (the message is Helm's, place included).
    Chart,
}

/// The one error type of winguard's module boundaries: what is wrong, in which file, and where
/// in it when that is known (1-based line and column).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.located())]
pub struct Error {
    pub kind: ErrorKind,
    pub file: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

impl Error {
    /// An error about a whole file (no position).
    pub fn new(kind: ErrorKind, file: impl Into<String>, message: impl Into<String>) -> Self {
        Error {
            kind,
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// An error at a line and column of a file.
    pub fn at(
        kind: ErrorKind,
        file: &str,
        line: Option<u32>,
        column: Option<u32>,
        message: impl Into<String>,
    ) -> Self {
        Error {
            kind,
            file: file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }

    fn located(&self) -> String {
        if self.kind == ErrorKind::Chart {
            // Helm's messages name their place themselves (`template: x.yaml:3:5: …`).
            return self.message.clone();
        }
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}: {}", self.file, self.message),
            (Some(l), None) => format!("{}:{l}: {}", self.file, self.message),
            _ => format!("{}: {}", self.file, self.message),
        }
    }
}

/// Every problem found in one file, each with its position.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", self.0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\nerror: "))]
pub struct Errors(pub Vec<Error>);

impl From<Error> for Errors {
    fn from(e: Error) -> Self {
        Errors(vec![e])
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
