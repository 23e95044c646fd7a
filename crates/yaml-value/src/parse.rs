//! JSON text → [`Doc`], built directly: owning its strings ([`parse`]) or borrowing them from
//! the text ([`parse_borrowed`]).
//!
//! Written by hand because the value has to be built in one pass with no intermediate: through
//! serde's visitor interface, building even a minimal value costs about as much as the
//! allocations it saves, and the fast parsers (sonic-rs, simd-json) build their own documents,
//! whose conversion costs more than the parse (BENCHMARKS.md, "Which document model").
//!
//! It takes only what it is sure of: any text it does not read as valid JSON — bad syntax, a
//! lone surrogate, a number out of range, nesting deeper than `serde_json` allows — is `None`,
//! and the caller reads the text with `serde_json` instead, for `serde_json`'s error (with line
//! and column) or, where `serde_json` accepts what this reader declined, its value. So this
//! reader never makes an error message of its own and never accepts what `serde_json` rejects.

use super::{Doc, DocMap, Number, Text};

/// What to leave out of the value, by key, from the root down: a review's `oldObject` and an
/// object's `metadata.managedFields` are most of some reviews' bytes and nothing reads them.
pub enum Prune {
    /// The value is checked as JSON and left out.
    Skip,
    /// The value (an object) is read with these keys pruned inside it.
    Inside(&'static [(&'static str, Prune)]),
}

/// A parse: the value, and whether any object repeated a key (the last one is kept, as
/// `serde_json::Value` does; a caller reading typed fields may want `serde_json`'s error instead).
pub struct Parsed<'t> {
    pub value: Doc<'t>,
    pub repeated_keys: bool,
}

/// `serde_json`'s nesting limit (its recursion limit of 128).
const MAX_DEPTH: usize = 128;

/// Reads `text` as one JSON value, leaving out what `prune` names; `None` when the text is not
/// JSON this reader takes (see the module documentation). The value owns its strings.
pub fn parse(text: &str, prune: &'static [(&'static str, Prune)]) -> Option<Parsed<'static>> {
    read(text, prune, Text::from)
}

/// As [`parse`], the value's strings borrowed from `text` where they need no unescaping: a review
/// is read so, its strings copied only if a rule keeps them.
pub fn parse_borrowed<'t>(
    text: &'t str,
    prune: &'static [(&'static str, Prune)],
) -> Option<Parsed<'t>> {
    read(text, prune, Text::borrowed)
}

fn read<'t, 'v>(
    text: &'t str,
    prune: &'static [(&'static str, Prune)],
    plain: impl Fn(&'t str) -> Text<'v>,
) -> Option<Parsed<'v>> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        pos: 0,
        repeated_keys: false,
        entries: Vec::new(),
        items: Vec::new(),
        plain,
    };
    let value = reader.value(0, prune)?;
    reader.whitespace();
    if reader.pos != reader.bytes.len() {
        return None;
    }
    Some(Parsed {
        value,
        repeated_keys: reader.repeated_keys,
    })
}

struct Reader<'t, 'v, P> {
    text: &'t str,
    bytes: &'t [u8],
    pos: usize,
    repeated_keys: bool,
    /// The entries and items of the maps and lists being read, innermost last: each container is
    /// moved out into a vector of its exact size when it ends, instead of growing its own.
    entries: Vec<(Text<'v>, Doc<'v>)>,
    items: Vec<Doc<'v>>,
    /// Makes a string without escapes: a copy, or a borrow of the text.
    plain: P,
}

impl<'t, 'v, P: Fn(&'t str) -> Text<'v>> Reader<'t, 'v, P> {
    #[inline(always)]
    fn whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn value(&mut self, depth: usize, prune: &'static [(&'static str, Prune)]) -> Option<Doc<'v>> {
        self.whitespace();
        match self.peek()? {
            b'{' => self.object(depth + 1, prune),
            b'[' => self.array(depth + 1),
            b'"' => self.string().map(Doc::String),
            b't' => self.literal(b"true", Doc::Bool(true)),
            b'f' => self.literal(b"false", Doc::Bool(false)),
            b'n' => self.literal(b"null", Doc::Null),
            _ => self.number().map(Doc::Number),
        }
    }

    /// A value checked and not built (a pruned one).
    fn skip(&mut self, depth: usize) -> Option<()> {
        self.whitespace();
        let close = match self.peek()? {
            b'{' => b'}',
            b'[' => b']',
            b'"' => return self.skip_string(),
            _ => return self.value(depth, &[]).map(drop),
        };
        if depth + 1 > MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        self.whitespace();
        if self.peek()? == close {
            self.pos += 1;
            return Some(());
        }
        loop {
            if close == b'}' {
                self.whitespace();
                if self.peek()? != b'"' {
                    return None;
                }
                self.skip_string()?;
                self.colon()?;
            }
            self.skip(depth + 1)?;
            if self.after_item(close)? {
                return Some(());
            }
        }
    }

    #[inline(always)]
    fn literal(&mut self, word: &[u8], value: Doc<'v>) -> Option<Doc<'v>> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Some(value)
        } else {
            None
        }
    }

    #[inline(always)]
    fn colon(&mut self) -> Option<()> {
        self.whitespace();
        if self.peek()? != b':' {
            return None;
        }
        self.pos += 1;
        Some(())
    }

    /// After an item of a list or map: `,` (more follow: false) or the closing `end` (true).
    #[inline(always)]
    fn after_item(&mut self, end: u8) -> Option<bool> {
        self.whitespace();
        let b = self.peek()?;
        self.pos += 1;
        match b {
            b',' => Some(false),
            _ if b == end => Some(true),
            _ => None,
        }
    }

    fn object(&mut self, depth: usize, prune: &'static [(&'static str, Prune)]) -> Option<Doc<'v>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        self.whitespace();
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(Doc::Object(DocMap::new()));
        }
        let base = self.entries.len();
        loop {
            self.whitespace();
            if self.peek()? != b'"' {
                return None;
            }
            let key = self.string()?;
            self.colon()?;
            match prune.iter().find(|(k, _)| *k == key.as_str()) {
                Some((_, Prune::Skip)) => self.skip(depth)?,
                Some((_, Prune::Inside(inner))) => {
                    let value = self.value(depth, inner)?;
                    self.entries.push((key, value));
                }
                None => {
                    let value = self.value(depth, &[])?;
                    self.entries.push((key, value));
                }
            }
            if self.after_item(b'}')? {
                break;
            }
        }
        let entries: Vec<(Text<'v>, Doc<'v>)> = self.entries.split_off(base);
        let written = entries.len();
        let map = DocMap::from_entries(entries);
        self.repeated_keys |= map.len() != written;
        Some(Doc::Object(map))
    }

    fn array(&mut self, depth: usize) -> Option<Doc<'v>> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.pos += 1;
        self.whitespace();
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(Doc::Array(Vec::new()));
        }
        let base = self.items.len();
        loop {
            let item = self.value(depth, &[])?;
            self.items.push(item);
            if self.after_item(b']')? {
                return Some(Doc::Array(self.items.split_off(base)));
            }
        }
    }

    /// Where the run of plain characters from `from` ends: at the next `"` or `\\`; `None` at a
    /// control character (JSON wants those escaped) or the end of the text.
    #[inline(always)]
    fn plain_run(&self, mut at: usize) -> Option<usize> {
        // Eight bytes at a time (the bit trick finds a byte equal to, or below, a value in each
        // lane of a word), as serde_json scans; strings here are mostly a few bytes to a few
        // dozen, where a call into memchr costs more than it saves.
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGHS: u64 = 0x8080_8080_8080_8080;
        let bytes = self.bytes;
        while let Some(chunk) = bytes.get(at..at + 8) {
            let word = u64::from_le_bytes(chunk.try_into().ok()?);
            let quote = word ^ (ONES * b'"' as u64);
            let backslash = word ^ (ONES * b'\\' as u64);
            let found = (quote.wrapping_sub(ONES) & !quote
                | backslash.wrapping_sub(ONES) & !backslash
                | word.wrapping_sub(ONES * 0x20) & !word)
                & HIGHS;
            if found != 0 {
                // The lowest flagged byte is exact (borrows only flag bytes above it).
                at += (found.trailing_zeros() / 8) as usize;
                break;
            }
            at += 8;
        }
        loop {
            match *bytes.get(at)? {
                b'"' | b'\\' => return Some(at),
                0..0x20 => return None,
                _ => at += 1,
            }
        }
    }

    /// A string checked and not built (a pruned one's), the reader at its opening quote.
    fn skip_string(&mut self) -> Option<()> {
        let mut at = self.plain_run(self.pos + 1)?;
        while self.bytes[at] == b'\\' {
            at = match *self.bytes.get(at + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at + 2,
                // Four hex digits, whatever code unit they make: serde_json skips an ignored
                // value's escapes so too.
                b'u' => {
                    self.hex4(at + 2)?;
                    at + 6
                }
                _ => return None,
            };
            at = self.plain_run(at)?;
        }
        self.pos = at + 1;
        Some(())
    }

    /// A string, the reader at its opening quote.
    #[inline(always)]
    fn string(&mut self) -> Option<Text<'v>> {
        let start = self.pos + 1;
        let end = self.plain_run(start)?;
        if self.bytes[end] == b'"' {
            self.pos = end + 1;
            // Quotes are ASCII, so both ends are character boundaries of the (UTF-8) text.
            return Some((self.plain)(&self.text[start..end]));
        }
        self.escaped_string(start, end)
    }

    /// The rest of a string with escapes, `at` its first backslash.
    fn escaped_string(&mut self, start: usize, mut at: usize) -> Option<Text<'v>> {
        let mut out = compact_str::CompactString::with_capacity(at - start + 16);
        out.push_str(&self.text[start..at]);
        loop {
            let escape = *self.bytes.get(at + 1)?;
            at += 2;
            match escape {
                b'"' => out.push('"'),
                b'\\' => out.push('\\'),
                b'/' => out.push('/'),
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let unit = self.hex4(at)?;
                    at += 4;
                    let c = match unit {
                        0xD800..=0xDBFF => {
                            // A leading surrogate must be followed by an escaped trailing one.
                            if self.bytes.get(at..at + 2)? != b"\\u" {
                                return None;
                            }
                            let low = self.hex4(at + 2)?;
                            if !(0xDC00..=0xDFFF).contains(&low) {
                                return None;
                            }
                            at += 6;
                            char::from_u32(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00))?
                        }
                        0xDC00..=0xDFFF => return None,
                        _ => char::from_u32(unit)?,
                    };
                    out.push(c);
                }
                _ => return None,
            }
            let end = self.plain_run(at)?;
            out.push_str(&self.text[at..end]);
            at = end;
            if self.bytes[at] == b'"' {
                self.pos = at + 1;
                return Some(Text::Own(out));
            }
        }
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let digits = self.bytes.get(at..at + 4)?;
        digits.iter().try_fold(0u32, |n, &d| {
            let v = (d as char).to_digit(16)?;
            Some(n * 16 + v)
        })
    }

    /// A number by JSON's grammar, read as `serde_json` reads it: a non-negative integer as
    /// `u64`, a negative one as `i64`, and a fraction, an exponent, `-0` or an integer beyond
    /// 64 bits as `f64`.
    fn number(&mut self) -> Option<Number> {
        let bytes = self.bytes;
        let start = self.pos;
        let mut i = start;
        let digits = |mut i: usize| {
            while let Some(b'0'..=b'9') = bytes.get(i) {
                i += 1;
            }
            i
        };
        let negative = bytes.get(i) == Some(&b'-');
        if negative {
            i += 1;
        }
        match bytes.get(i)? {
            b'0' => i += 1,
            b'1'..=b'9' => i = digits(i + 1),
            _ => return None,
        }
        let mut float = false;
        if bytes.get(i) == Some(&b'.') {
            let end = digits(i + 1);
            if end == i + 1 {
                return None;
            }
            i = end;
            float = true;
        }
        if let Some(b'e' | b'E') = bytes.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = bytes.get(i) {
                i += 1;
            }
            let end = digits(i);
            if end == i {
                return None;
            }
            i = end;
            float = true;
        }
        self.pos = i;
        let text = &self.text[start..i];
        if !float {
            if !negative && let Ok(n) = text.parse::<u64>() {
                return Some(n.into());
            }
            if negative && let Ok(n) = text.parse::<i64>() {
                return if n == 0 {
                    Number::from_f64(-0.0)
                } else {
                    Some(n.into())
                };
            }
        }
        let f: f64 = text.parse().ok()?;
        // Out of range (`1e400`): serde_json's error, not infinity.
        if !f.is_finite() {
            return None;
        }
        Number::from_f64(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

    fn from_str(text: &str) -> Option<Value> {
        let owned = parse(text, &[]).map(|p| p.value);
        // The borrowing reader reads every text as the owning one does.
        let borrowed = parse_borrowed(text, &[]).map(|p| p.value);
        assert_eq!(owned.as_ref(), borrowed.as_ref(), "{text}");
        owned
    }

    /// Strings without escapes are borrowed from the text; escaped ones are decoded copies.
    #[test]
    fn the_borrowing_reader_borrows_plain_strings() {
        let text = r#"{"plain": "a string longer than twenty-four bytes", "escaped": "a\tb"}"#;
        let value = parse_borrowed(text, &[]).unwrap().value;
        let map = value.as_object().unwrap();
        let (key, plain) = map.iter().find(|(k, _)| k.as_str() == "plain").unwrap();
        assert!(matches!(key, Text::Borrowed(_)));
        assert!(matches!(plain, Doc::String(Text::Borrowed(_))));
        assert!(matches!(&map["escaped"], Doc::String(Text::Own(s)) if s == "a\tb"));
        let owned = parse(text, &[]).unwrap().value;
        let (key, _) = owned.as_object().unwrap().iter().next().unwrap();
        assert!(matches!(key, Text::Own(_)));
    }

    /// Reads `text` both ways and checks they agree: the same value, or this reader declining
    /// where serde_json fails.
    fn agree(text: &str) {
        let ours = from_str(text);
        let theirs = serde_json::from_str::<serde_json::Value>(text);
        match (&ours, &theirs) {
            (Some(v), Ok(j)) => assert_eq!(serde_json::Value::from(v), *j, "{text}"),
            (None, Err(_)) => {}
            // Declining what serde_json reads is allowed (the caller falls back to it), but this
            // reader should take all of these.
            (None, Ok(_)) => panic!("declined valid JSON {text:?}"),
            (Some(v), Err(e)) => panic!("accepted {text:?} as {v:?}; serde_json: {e}"),
        }
    }

    #[test]
    fn reads_what_serde_json_reads() {
        for text in [
            "null",
            " true ",
            "false",
            "0",
            "-0",
            "12",
            "-12",
            "1.5",
            "-1.25e3",
            "2E-2",
            "1e+2",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            r#""""#,
            r#""plain""#,
            r#""a\"b\\c\/d\b\f\n\r\t""#,
            r#""\u00e9\u4e2d\ud83d\ude00 tail""#,
            r#""ünïcödé ✓""#,
            "[]",
            "[1, [2, [3]], {}]",
            r#"{"b": 1, "a": {"y": [true, null], "x": "s"}}"#,
            r#"{"k": 1, "k": 2}"#,
            " {\n\t\"a\" :\r [ ] } ",
        ] {
            agree(text);
        }
    }

    #[test]
    fn declines_what_serde_json_rejects() {
        for text in [
            "",
            " ",
            "nul",
            "tru",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "+1",
            "1e400",
            "[1,]",
            "[1 2]",
            "{\"a\" 1}",
            "{\"a\":1,}",
            "{a:1}",
            "\"unterminated",
            "\"bad \\x escape\"",
            "\"raw \n newline\"",
            r#""\ud83d alone""#,
            r#""\ude00""#,
            r#""\u12g4""#,
            "[1] x",
            "{} {}",
        ] {
            agree(text);
        }
        let deep = "[".repeat(200) + &"]".repeat(200);
        assert!(from_str(&deep).is_none());
        assert!(serde_json::from_str::<serde_json::Value>(&deep).is_err());
    }

    #[test]
    fn every_json_fixture_reads_as_serde_json_reads_it() {
        let mut seen = 0;
        for entry in walkdir::WalkDir::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata")) {
            let entry = entry.unwrap();
            if entry.path().extension().is_some_and(|e| e == "json") {
                let text = std::fs::read_to_string(entry.path()).unwrap();
                agree(&text);
                seen += 1;
            }
        }
        assert!(seen > 10, "only {seen} JSON fixtures found");
    }

    #[test]
    fn pruned_keys_are_checked_and_left_out() {
        static PRUNE: [(&str, Prune); 2] = [
            ("gone", Prune::Skip),
            ("inner", Prune::Inside(&[("deep", Prune::Skip)])),
        ];
        let p = parse(
            r#"{"gone": {"x": [1, "}"]}, "inner": {"deep": [], "kept": 1}, "gone2": 2}"#,
            &PRUNE,
        )
        .unwrap();
        assert_eq!(
            serde_json::Value::from(&p.value),
            serde_json::json!({"inner": {"kept": 1}, "gone2": 2})
        );
        assert!(!p.repeated_keys);
        // A skipped value is still checked, as serde_json checks a value it ignores: its syntax,
        // escapes and control characters, but not what code units `\u` escapes make.
        assert!(parse(r#"{"gone": [1,]}"#, &PRUNE).is_none());
        assert!(parse(r#"{"gone": "bad \x escape"}"#, &PRUNE).is_none());
        assert!(parse("{\"gone\": \"raw \n newline\"}", &PRUNE).is_none());
        assert!(parse(r#"{"gone": {"k\"ey": "\ud800 \"q\""}}"#, &PRUNE).is_some());
        assert!(
            serde_json::from_str::<serde::de::IgnoredAny>(r#"{"gone": {"k\"ey": "\ud800"}}"#)
                .is_ok()
        );
        assert!(parse(r#"{"a": 1, "a": 2}"#, &PRUNE).unwrap().repeated_keys);
    }
}
