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

/// Where a text stops being UTF-8, and why, in the words of go-yaml's reader (`readerc.go`):
/// Helm reads every YAML file through it, so these are the words Helm users see. The standard
/// library finds the first bad sequence but gives no reason, hence this small classifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Utf8Fault {
    /// Byte offset of the offending octet in the text as given.
    pub offset: usize,
    /// 1-based line and column (in characters) of the first bad sequence.
    pub line: u32,
    pub column: u32,
    pub problem: &'static str,
}

impl Utf8Fault {
    /// The fault `error` found in `bytes`.
    pub fn new(bytes: &[u8], error: &std::str::Utf8Error) -> Utf8Fault {
        let start = error.valid_up_to();
        let before = &bytes[..start];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        // Valid UTF-8 up to `start`, so the characters of the line can be counted.
        let column = std::str::from_utf8(&before[line_start..]).map_or(0, |s| s.chars().count());
        let (problem, offset) = go_yaml_utf8_problem(&bytes[start..]);
        Utf8Fault {
            offset: start + offset,
            line: memchr::memchr_iter(b'\n', before).count() as u32 + 1,
            column: column as u32 + 1,
            problem,
        }
    }
}

impl std::fmt::Display for Utf8Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} at byte offset {}", self.problem, self.offset)
    }
}

/// go-yaml's checks, in its order, on a sequence that starts with an invalid one: the problem
/// and the offset (from the sequence's start) of the octet it blames.
fn go_yaml_utf8_problem(rest: &[u8]) -> (&'static str, usize) {
    let lead = rest.first().copied().unwrap_or(0);
    let (width, bits) = match lead {
        0xC0..=0xDF => (2, lead & 0x1F),
        0xE0..=0xEF => (3, lead & 0x0F),
        0xF0..=0xF7 => (4, lead & 0x07),
        _ => return ("invalid leading UTF-8 octet", 0),
    };
    if width > rest.len() {
        return ("incomplete UTF-8 octet sequence", 0);
    }
    let mut value = u32::from(bits);
    for (k, &octet) in rest.iter().enumerate().take(width).skip(1) {
        if octet & 0xC0 != 0x80 {
            return ("invalid trailing UTF-8 octet", k);
        }
        value = (value << 6) | u32::from(octet & 0x3F);
    }
    let shortest = match width {
        2 => value >= 0x80,
        3 => value >= 0x800,
        _ => value >= 0x10000,
    };
    if shortest {
        // A surrogate or past U+10FFFF: the only other sequences `from_utf8` refuses.
        ("invalid Unicode character", 0)
    } else {
        ("invalid length of a UTF-8 sequence", 0)
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

#[cfg(test)]
mod tests {
    use super::Utf8Fault;

    #[test]
    fn utf8_faults_in_go_yamls_words() {
        let find = |bytes: &[u8]| {
            std::str::from_utf8(bytes)
                .err()
                .map(|e| Utf8Fault::new(bytes, &e))
        };
        let fault = |bytes: &[u8]| find(bytes).map(|f| (f.problem, f.offset));
        assert_eq!(fault(b"a: caf\xc3\xa9\n"), None);
        assert_eq!(fault(b"a: \xff"), Some(("invalid leading UTF-8 octet", 3)));
        assert_eq!(fault(b"a: \x80"), Some(("invalid leading UTF-8 octet", 3)));
        // The second octet of three is not a continuation: blamed at its own offset.
        assert_eq!(
            fault(b"a: \xe2\x28\xa1"),
            Some(("invalid trailing UTF-8 octet", 4))
        );
        assert_eq!(
            fault(b"a: \xe2\x82"),
            Some(("incomplete UTF-8 octet sequence", 3))
        );
        assert_eq!(
            fault(b"\xc0\xaf"),
            Some(("invalid length of a UTF-8 sequence", 0))
        );
        assert_eq!(
            fault(b"\xed\xa0\x80"),
            Some(("invalid Unicode character", 0))
        );
        assert_eq!(
            fault(b"\xf4\x90\x80\x80"),
            Some(("invalid Unicode character", 0))
        );
        let mut text = "x: 1\nname: café \u{fffd}".as_bytes().to_vec();
        text.push(0xff);
        let f = find(&text).unwrap();
        assert_eq!((f.line, f.column), (2, 13));
    }
}
