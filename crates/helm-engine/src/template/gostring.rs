//! Go strings are byte sequences; a template's strings here are Rust `str`, which must be UTF-8.
//! Text that is not UTF-8 still reaches templates — a binary file through `.Files.Get`, `b64dec`
//! of binary data — and charts hand it on to functions that use its bytes (`.Files.Get "x.bz2" |
//! b64enc`). So a byte that isn't part of valid UTF-8 enters as one character of the last 256
//! code points of Unicode (private use, plane 16: U+10FF00 + byte) and leaves as that byte again
//! wherever Go would use the string's bytes: the encoders, the hashes and `len`.
//!
//! (The one text this cannot tell apart is UTF-8 that really contains those private-use
//! characters; charts don't.)

use std::borrow::Cow;

const ESCAPE_BASE: u32 = 0x10FF00;

/// The bytes as a Go string would hold them: UTF-8 as it is, every other byte escaped.
pub fn from_bytes(bytes: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return Cow::Borrowed(text);
    }
    let mut text = String::with_capacity(bytes.len() + bytes.len() / 2);
    for chunk in bytes.utf8_chunks() {
        text.push_str(chunk.valid());
        for &byte in chunk.invalid() {
            text.extend(char::from_u32(ESCAPE_BASE + u32::from(byte)));
        }
    }
    Cow::Owned(text)
}

fn escaped_byte(c: char) -> Option<u8> {
    u32::from(c)
        .checked_sub(ESCAPE_BASE)
        .and_then(|b| u8::try_from(b).ok())
}

/// Whether the text holds an escaped byte: their UTF-8 encodings all begin with `F4 8F BC..BF`,
/// which `memchr` finds without decoding the text.
fn has_escapes(text: &str) -> bool {
    memchr::memchr_iter(0xF4, text.as_bytes()).any(|i| {
        text.as_bytes()
            .get(i + 1..i + 3)
            .is_some_and(|next| next[0] == 0x8F && next[1] >= 0xBC)
    })
}

/// The bytes of a Go string: escaped bytes back as themselves.
pub fn to_bytes(text: &str) -> Cow<'_, [u8]> {
    if !has_escapes(text) {
        return Cow::Borrowed(text.as_bytes());
    }
    let mut bytes = Vec::with_capacity(text.len());
    for c in text.chars() {
        match escaped_byte(c) {
            Some(byte) => bytes.push(byte),
            None => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
        }
    }
    Cow::Owned(bytes)
}

/// Go's `len` of a string: its number of bytes.
pub fn byte_len(text: &str) -> usize {
    if !has_escapes(text) {
        return text.len();
    }
    text.chars()
        .map(|c| escaped_byte(c).map_or(c.len_utf8(), |_| 1))
        .sum()
}

/// Go's `strconv.Quote`.
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        // Runs of printable ASCII go in whole; the rest a character at a time.
        let run = bytes[at..]
            .iter()
            .position(|b| !matches!(b, 0x20..=0x7e) || *b == b'"' || *b == b'\\')
            .map_or(bytes.len(), |i| at + i);
        out.push_str(&s[at..run]);
        at = run;
        let Some(c) = s[at..].chars().next() else {
            break;
        };
        at += c.len_utf8();
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_survive_the_round_trip() {
        let all: Vec<u8> = (0..=255u8)
            .chain("héllo 💡".bytes())
            .chain([0xF4, 0x8F])
            .collect();
        let text = from_bytes(&all);
        assert!(matches!(text, Cow::Owned(_)));
        assert_eq!(to_bytes(&text).as_ref(), all.as_slice());
        assert_eq!(byte_len(&text), all.len());
        assert!(matches!(from_bytes("plain ü".as_bytes()), Cow::Borrowed(_)));
        assert!(matches!(to_bytes("plain ü \u{10FEFF}"), Cow::Borrowed(_)));
    }
}
