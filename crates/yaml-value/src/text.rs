//! Text helpers of the readers: lines, line starts, and where a text stops being UTF-8.

/// The lines of a text without their `\n` (like `str::lines`, but found with `memchr`: reading a
/// file splits every line of it, and `str::lines` pays a call per line).
pub fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut newlines = memchr::memchr_iter(b'\n', text.as_bytes());
    std::iter::from_fn(move || {
        if start >= text.len() {
            return None;
        }
        let line = match newlines.next() {
            Some(end) => {
                let line = &text[start..end];
                start = end + 1;
                line
            }
            None => {
                let line = &text[start..];
                start = text.len();
                line
            }
        };
        Some(line)
    })
}

/// Byte offset of each line's start in `text`.
pub fn line_starts(text: &str) -> Vec<u32> {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i as u32 + 1))
        .collect()
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
