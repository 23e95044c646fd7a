//! Where a template's nodes and names are: positions and byte ranges of the source, shared by
//! the parser, the executor and the functions (which report errors at their call).

/// A position in a template: byte offset and 1-based line (Go's `Pos` and line). 32 bits each:
/// templates are far below 4 GiB (chart files are read whole into memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pos {
    pub offset: u32,
    pub line: u32,
}

/// A byte range of the template source: a text, a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The text this span covers in `src` (the source it was parsed from).
    pub(crate) fn of(self, src: &str) -> &str {
        &src[self.start as usize..self.end as usize]
    }
}
