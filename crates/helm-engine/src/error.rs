//! The engine's one error type.

/// A chart that can't be loaded or rendered: Helm's message, which names its place itself
/// (`template: x.yaml:3:5: …`), and the file, line and column when they are known (1-based).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub file: String,
    pub line: Option<u32>,
    pub column: Option<u32>,
    pub message: String,
}

impl Error {
    /// An error about a whole file.
    pub fn new(file: impl Into<String>, message: impl Into<String>) -> Self {
        Error {
            file: file.into(),
            line: None,
            column: None,
            message: message.into(),
        }
    }

    /// An error at a line and column of a file.
    pub fn at(
        file: &str,
        line: Option<u32>,
        column: Option<u32>,
        message: impl Into<String>,
    ) -> Self {
        Error {
            file: file.to_string(),
            line,
            column,
            message: message.into(),
        }
    }
}
