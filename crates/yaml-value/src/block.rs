//! A fast reader for the block-style YAML that Helm and kubectl emit.
//!
//! Why by hand: the general YAML crates (saphyr-parser, libyaml-safer) scan, on their own, slower
//! than a linter's throughput goal for the whole lint (BENCHMARKS.md). Rendered manifests use a
//! small part of YAML: block mappings and sequences, plain and single-quoted scalars (over
//! several lines where Go's YAML writer wraps long strings, as in CRDs), one-line double-quoted
//! scalars, literal and folded block scalars, and one-line flow collections; values files add
//! comments. This reader handles exactly that subset and gives up at the first thing outside it —
//! anchors, tags, double-quoted scalars over several lines, tabs, complex keys — and at anything
//! that would be an error. The caller then parses the document with saphyr-parser, so a result
//! is always the one saphyr's path would give, only sooner, and every error message is saphyr's.
//! `tests/fast_yaml.rs` holds the two to the same values and positions on every fixture, the
//! benchmark corpus, a list of edge cases, mutations of all of those and generated documents, and
//! the `yaml_readers` fuzz target on any input; a case where they differ goes into its edge-case
//! list, and the reader learns to give up on it.

use std::borrow::Cow;

use crate::{Map, Str, Value};

use super::yaml::{
    ParsedDoc, PosNode, build_map, build_map_from, go_yaml_v2_key, one_letter_bool, plain_value,
};

/// Deeper documents go to saphyr-parser, which has its own limits and messages.
const MAX_DEPTH: usize = 100;
/// YAML limits an implicit key to 1024 characters.
const MAX_KEY_LEN: usize = 1024;

/// Why the reader gave up; the caller falls back to the full parser.
struct GiveUp;

type Read<T> = Result<T, GiveUp>;

/// Reads one document (the text between two `---` lines) if it stays inside the subset this
/// reader knows; `None` means "use the full parser".
pub fn read_document(text: &str, line_offset: u32) -> Option<ParsedDoc> {
    read(text, line_offset, false)
}

/// [`read_document`] as go-yaml v2 reads YAML, which Helm reads values files with (the full
/// parser's [`crate::yaml::parse_stream_go_yaml_v2`]): plain `y`/`Y`/`n`/`N` are booleans and
/// a plain key is the text of its typed value (`8080`, `true`). A repeated key, whose last value
/// v2 keeps, is left to the full parser.
pub fn read_document_go_yaml_v2(text: &str, line_offset: u32) -> Option<ParsedDoc> {
    read(text, line_offset, true)
}

fn read(text: &str, line_offset: u32, go_yaml_v2: bool) -> Option<ParsedDoc> {
    // A last line without its newline (the full parser treats block scalars there differently)
    // and any character that is not plainly printable are left to the full parser.
    if !text.ends_with('\n') {
        return None;
    }
    let ascii = plainly_printable(text)?;
    // Sized for lines of about 24 bytes (most manifests' are shorter): growing the vector line by
    // line would copy it at every doubling, and collecting the lines is little else.
    let mut lines = Vec::with_capacity(text.len() / 24 + 8);
    lines.extend(crate::text::lines(text));
    let mut reader = Reader {
        lines,
        has_tabs: memchr::memchr(b'\t', text.as_bytes()).is_some(),
        next: 0,
        dash_indent: None,
        peeked: (usize::MAX, 0),
        ascii,
        line_offset,
        depth: 0,
        entries: Vec::with_capacity(32),
        items: Vec::new(),
        go_yaml_v2,
    };
    reader.document().ok()
}

/// Whether `text` holds only YAML's printable characters, line feeds and tabs — no carriage
/// returns (line breaks the full parser normalises), no byte-order marks (allowed at the start of
/// any document and skipped there), no control characters (errors). `Some(true)` when all of it
/// is ASCII.
fn plainly_printable(text: &str) -> Option<bool> {
    // Folded over fixed-size chunks without early exits, so the compiler can vectorise it: this
    // scan reads every byte of every document.
    let mut non_ascii = false;
    for chunk in text.as_bytes().chunks(64) {
        let (control, high) = chunk.iter().fold((false, 0u8), |(control, high), &b| {
            let bad = (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f;
            (control | bad, high | b)
        });
        if control {
            return None;
        }
        non_ascii |= high >= 0x80;
    }
    let printable = !non_ascii
        || text.chars().all(|c| {
            c.is_ascii()
                || c == '\u{85}'
                || ('\u{a0}'..='\u{d7ff}').contains(&c)
                || (('\u{e000}'..='\u{fffd}').contains(&c) && c != '\u{feff}')
                || c >= '\u{10000}'
        });
    printable.then_some(!non_ascii)
}

struct Reader<'a> {
    lines: Vec<&'a str>,
    /// The first line not yet consumed.
    next: usize,
    /// Set when a `- ` at the start of line `next` has been consumed: the line's content starts
    /// at this column, as if the dash were indentation (YAML's compact nested collections).
    dash_indent: Option<usize>,
    /// Whether any line has a tab (checked once: most documents have none).
    has_tabs: bool,
    /// The last line [`Reader::peek`] found and its indent: a line is peeked more than once
    /// (by the node, the mapping or sequence around it, the entry) before it is consumed.
    peeked: (usize, usize),
    /// Whether the document is all ASCII (a byte column is then a character column).
    ascii: bool,
    line_offset: u32,
    depth: usize,
    /// The entries of the block mappings being read, innermost last (see [`build_map_from`]).
    entries: Vec<(Str, Value, PosNode)>,
    /// Likewise the items of the block sequences being read: each sequence is then moved into
    /// vectors of its exact size, instead of growing its own and shrinking them.
    items: Vec<Node>,
    /// go-yaml v2's reading ([`read_document_go_yaml_v2`]).
    go_yaml_v2: bool,
}

type Node = (Value, PosNode);

fn is_seq_entry(content: &str) -> bool {
    content == "-" || content.starts_with("- ")
}

fn is_comment_or_empty(rest: &str) -> bool {
    rest.is_empty() || rest.starts_with('#')
}

fn skip_spaces(s: &str, mut i: usize) -> usize {
    while s.as_bytes().get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

impl<'a> Reader<'a> {
    fn document(&mut self) -> Read<ParsedDoc> {
        // A leading `---` line (the splitter leaves it on its document); directives and content
        // after the marker are left to the full parser.
        while let Some(line) = self.lines.get(self.next) {
            let content = line.trim_start_matches(' ');
            if content.is_empty() || content.starts_with('#') {
                self.next += 1;
                continue;
            }
            if content.starts_with('%') {
                return Err(GiveUp);
            }
            if let Some(after) = line.strip_prefix("---") {
                let comment_only = after.starts_with(' ') && after.trim_start().starts_with('#');
                if !(after.is_empty() || comment_only) {
                    return Err(GiveUp);
                }
                self.next += 1;
            }
            break;
        }
        let Some((indent, content)) = self.peek()? else {
            // An empty document: rare, and the full parser decides where it starts.
            return Err(GiveUp);
        };
        let (value, pos) = self.node(indent, content, -1)?;
        if self.peek()?.is_some() {
            return Err(GiveUp);
        }
        Ok(ParsedDoc {
            value,
            start_line: pos.line,
            pos,
        })
    }

    /// The next line with content, as (indent, content), skipping blank and comment lines.
    /// Lines with tabs or document markers are outside the subset.
    fn peek(&mut self) -> Read<Option<(usize, &'a str)>> {
        if let Some(indent) = self.dash_indent {
            return Ok(Some((indent, &self.lines[self.next][indent..])));
        }
        if self.peeked.0 == self.next {
            let indent = self.peeked.1;
            return Ok(Some((indent, &self.lines[self.next][indent..])));
        }
        while let Some(&line) = self.lines.get(self.next) {
            let indent = line.bytes().take_while(|&b| b == b' ').count();
            let content = &line[indent..];
            if content.is_empty() || content.starts_with('#') {
                self.next += 1;
                continue;
            }
            if (self.has_tabs && line.contains('\t')) || (indent == 0 && is_marker(content)) {
                return Err(GiveUp);
            }
            self.peeked = (self.next, indent);
            return Ok(Some((indent, content)));
        }
        Ok(None)
    }

    /// A plain scalar's value in the reader's dialect.
    fn plain_scalar(&self, s: &str) -> Value {
        match one_letter_bool(s).filter(|_| self.go_yaml_v2) {
            Some(b) => Value::Bool(b),
            None => plain_value(s).unwrap_or_else(|| Value::from(s)),
        }
    }

    /// A plain key as the reader's dialect keeps it: as written, or under go-yaml v2 the text of
    /// its typed value.
    fn plain_key<'k>(&self, key: Cow<'k, str>) -> Cow<'k, str> {
        match self.go_yaml_v2.then(|| go_yaml_v2_key(&key)).flatten() {
            Some(typed) => Cow::Owned(typed),
            None => key,
        }
    }

    fn consume_line(&mut self) {
        self.next += 1;
        self.dash_indent = None;
    }

    /// 1-based line and character column of byte `col` of line `line`.
    fn position(&self, line: usize, col: usize) -> (u32, u32) {
        let chars = if self.ascii {
            col
        } else {
            self.lines[line][..col].chars().count()
        };
        (line as u32 + 1 + self.line_offset, chars as u32 + 1)
    }

    fn pos_node(&self, line: usize, col: usize) -> PosNode {
        let (line, col) = self.position(line, col);
        PosNode {
            line,
            col,
            ..PosNode::default()
        }
    }

    /// The node whose first content is `content`, at column `indent` of line `next`.
    /// `parent_indent` is the indentation of the enclosing block collection (a block scalar's
    /// lines must be indented further).
    fn node(&mut self, indent: usize, content: &'a str, parent_indent: isize) -> Read<Node> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        let node = if is_seq_entry(content) {
            self.sequence(indent, false)
        } else if entry_key(content)?.is_some() {
            self.mapping(indent)
        } else {
            let line = self.next;
            self.inline_value(line, indent, parent_indent)
        };
        self.depth -= 1;
        node
    }

    fn mapping(&mut self, indent: usize) -> Read<Node> {
        let start = self.entries.len();
        let mut map_pos = None;
        while let Some((line_indent, content)) = self.peek()? {
            if line_indent < indent {
                break;
            }
            if line_indent > indent || is_seq_entry(content) {
                // A continuation line of a plain scalar, or an error.
                return Err(GiveUp);
            }
            let line = self.next;
            let Some((key, after_colon)) = entry_key(content)? else {
                return Err(GiveUp);
            };
            let key = match content.as_bytes()[0] {
                b'"' | b'\'' => key,
                _ => self.plain_key(key),
            };
            let key_pos = self.pos_node(line, indent);
            if map_pos.is_none() {
                map_pos = Some(key_pos.clone());
            }
            let value_col = skip_spaces(self.lines[line], indent + after_colon);
            let (value, mut pos) = if is_comment_or_empty(&self.lines[line][value_col..]) {
                let commented = self.lines[line].len() > value_col;
                self.consume_line();
                match self.peek()? {
                    // The full parser places a scalar after a comment oddly; rare, left to it.
                    Some((i, c))
                        if commented
                            && i >= indent
                            && !is_seq_entry(c)
                            && entry_key(c)?.is_none() =>
                    {
                        return Err(GiveUp);
                    }
                    Some((i, c)) if i > indent => self.node(i, c, indent as isize)?,
                    // YAML lets a mapping's sequence value sit at the key's own indentation.
                    Some((i, c)) if i == indent && is_seq_entry(c) => {
                        self.depth += 1;
                        let seq = self.sequence(i, true)?;
                        self.depth -= 1;
                        seq
                    }
                    // The full parser places an empty value at its colon, a comment after it
                    // or not.
                    _ => (Value::Null, self.pos_node(line, indent + after_colon - 1)),
                }
            } else {
                self.inline_value(line, value_col, indent as isize)?
            };
            pos.key_line = key_pos.line;
            pos.key_col = key_pos.col;
            self.entries.push((key.into(), value, pos));
        }
        let mut pos = map_pos.ok_or(GiveUp)?;
        // Duplicate keys are an error, reported by the full parser.
        let map = build_map_from(&mut self.entries, start, &mut pos).map_err(|_| GiveUp)?;
        Ok((map, pos))
    }

    /// A block sequence; `indentless` when it is a mapping value at its key's indentation.
    fn sequence(&mut self, indent: usize, indentless: bool) -> Read<Node> {
        let start = self.items.len();
        let mut seq_pos: Option<PosNode> = None;
        while let Some((line_indent, content)) = self.peek()? {
            if line_indent < indent || (line_indent == indent && !is_seq_entry(content)) {
                break;
            }
            if line_indent > indent {
                return Err(GiveUp);
            }
            let line = self.next;
            let item_col = skip_spaces(self.lines[line], indent + 1);
            if seq_pos.is_none() {
                // The full parser places a block sequence at its first dash, an indentless one
                // at its first item's content.
                seq_pos = Some(self.pos_node(line, if indentless { item_col } else { indent }));
            }
            let (value, pos) = if is_comment_or_empty(&self.lines[line][item_col..]) {
                if self.lines[line].len() > item_col {
                    // A comment after the dash: the full parser's positions are odd; rare.
                    return Err(GiveUp);
                }
                self.consume_line();
                match self.peek()? {
                    Some((i, c)) if i > indent => self.node(i, c, indent as isize)?,
                    // The full parser places an empty item after its dash and spaces (and
                    // somewhere less obvious when a comment follows).
                    _ => (Value::Null, self.pos_node(line, item_col)),
                }
            } else {
                self.dash_indent = Some(item_col);
                let content = &self.lines[line][item_col..];
                self.node(item_col, content, indent as isize)?
            };
            self.items.push((value, pos));
        }
        let mut pos = seq_pos.ok_or(GiveUp)?;
        let len = self.items.len() - start;
        let mut items = Vec::with_capacity(len);
        pos.children.reserve_exact(len);
        for (value, item_pos) in self.items.drain(start..) {
            items.push(value);
            pos.children.push(item_pos);
        }
        Ok((Value::Array(items), pos))
    }

    /// A value that starts at byte `col` of `line` and ends on it (or, for a block scalar, on
    /// the lines after it). Consumes what it reads.
    fn inline_value(&mut self, line: usize, col: usize, parent_indent: isize) -> Read<Node> {
        let text = self.lines[line];
        let pos = self.pos_node(line, col);
        let first = text.as_bytes()[col];
        let (value, end) = match first {
            b'[' | b'{' => {
                let mut i = col;
                let (value, pos) = self.flow(line, &mut i, 0)?;
                self.rest_is_comment(text, i)?;
                self.consume_line();
                return Ok((value, pos));
            }
            b'"' | b'\'' => match quoted(text, col) {
                Ok((s, end)) => (Value::from(s), end),
                // Its closing quote on a later line (Go's YAML writer wraps long strings so:
                // CRDs' validation rules).
                Err(GiveUp) if first == b'\'' => {
                    let s = self.single_quoted_lines(line, col, parent_indent)?;
                    return Ok((Value::from(s), pos));
                }
                Err(give_up) => return Err(give_up),
            },
            b'|' | b'>' => {
                let (value, pos) = self.block_scalar(line, col, parent_indent)?;
                return Ok((Value::from(value), pos));
            }
            _ => {
                let (s, end) = plain_block(text, col)?;
                self.rest_is_comment(text, end)?;
                self.consume_line();
                // Lines indented past the parent continue a plain scalar that no comment ended
                // (Go's YAML writer wraps long strings so: CRDs' descriptions). The next line can
                // continue it only if it has a space where the parent's indentation ends: that
                // one byte tells most lines apart.
                let may_continue = end == text.len()
                    && usize::try_from(parent_indent).is_ok_and(|at| {
                        self.lines.get(self.next).and_then(|l| l.as_bytes().get(at)) == Some(&b' ')
                    });
                let folded = if may_continue {
                    self.plain_continuation(s, parent_indent)?
                } else {
                    None
                };
                return Ok((self.plain_scalar(folded.as_deref().unwrap_or(s)), pos));
            }
        };
        self.rest_is_comment(text, end)?;
        self.consume_line();
        Ok((value, pos))
    }

    /// A single-quoted scalar that opens at byte `col` of `line` and closes on a later line,
    /// each line after the first indented past `parent_indent`: folded as a plain one is (a line
    /// break a space, each blank line between a line break, the spaces around a break dropped),
    /// `''` read as `'`. Consumes its lines.
    fn single_quoted_lines(
        &mut self,
        line: usize,
        col: usize,
        parent_indent: isize,
    ) -> Read<String> {
        // (Trailing spaces are dropped after `''` is read: reading it adds or removes none.)
        let (first, _) = single_quoted_piece(&self.lines[line][col + 1..]);
        let mut out = first.trim_end_matches(' ').to_string();
        let (mut at, mut blanks) = (line + 1, 0);
        loop {
            let text = *self.lines.get(at).ok_or(GiveUp)?;
            let content = text.trim_start_matches(' ');
            if content.is_empty() {
                blanks += 1;
                at += 1;
                continue;
            }
            let indent = text.len() - content.len();
            if parent_indent < 0
                || indent as isize <= parent_indent
                || (self.has_tabs && text.contains('\t'))
            {
                return Err(GiveUp);
            }
            push_line_break(&mut out, blanks);
            blanks = 0;
            match single_quoted_piece(content) {
                (piece, Some(close)) => {
                    out.push_str(&piece);
                    self.rest_is_comment(text, indent + close + 1)?;
                    self.next = at + 1;
                    self.dash_indent = None;
                    return Ok(out);
                }
                (piece, None) => out.push_str(piece.trim_end_matches(' ')),
            }
            at += 1;
        }
    }

    /// The plain scalar whose first line is `first`, folded with the lines that continue it (each
    /// indented past `parent_indent`, which is not negative, and folded by [`push_line_break`]).
    /// `None` when no line continues it. A comment line ends it; a continuation line that could
    /// be read otherwise (a `key: value`, an indicator first, a comment after the text) is left
    /// to the full parser.
    fn plain_continuation(&mut self, first: &str, parent_indent: isize) -> Read<Option<String>> {
        let mut folded: Option<String> = None;
        let (mut at, mut blanks) = (self.next, 0);
        while let Some(&line) = self.lines.get(at) {
            let indent = line.bytes().take_while(|&b| b == b' ').count();
            let content = &line[indent..];
            if content.is_empty() {
                blanks += 1;
                at += 1;
                continue;
            }
            // A comment line ends the scalar, at any indentation.
            if content.starts_with('#') {
                break;
            }
            let tabbed = self.has_tabs && line.contains('\t');
            if indent as isize <= parent_indent {
                // What comes next (most often): `peek` reads it from here, as it would have.
                let refused = tabbed || (indent == 0 && is_marker(content));
                if at == self.next && !refused {
                    self.peeked = (at, indent);
                }
                break;
            }
            let piece = content.trim_end_matches(' ');
            if tabbed
                || matches!(piece.as_bytes()[0], b'-' | b'?' | b':' | b'%' | b'@' | b'`')
                || piece.ends_with(':')
                || piece.contains(": ")
                || piece.contains(" #")
            {
                return Err(GiveUp);
            }
            let out = folded.get_or_insert_with(|| first.to_string());
            push_line_break(out, blanks);
            out.push_str(piece);
            blanks = 0;
            at += 1;
            self.next = at;
            self.dash_indent = None;
        }
        Ok(folded)
    }

    /// After a value only spaces and a comment may follow on its line.
    fn rest_is_comment(&self, text: &str, end: usize) -> Read<()> {
        let next = skip_spaces(text, end);
        let rest = &text[next..];
        if rest.is_empty() || (next > end && rest.starts_with('#')) {
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// A literal (`|`) or folded (`>`) block scalar whose indicator is at byte `col` of `line`.
    /// Returns the text and where the full parser places it: at its first content line.
    fn block_scalar(
        &mut self,
        line: usize,
        col: usize,
        parent_indent: isize,
    ) -> Read<(String, PosNode)> {
        let header = self.lines[line];
        let folded = header.as_bytes()[col] == b'>';
        let mut i = col + 1;
        let chomp = match header.as_bytes().get(i) {
            Some(b'-') => {
                i += 1;
                Chomp::Strip
            }
            Some(b'+') => {
                i += 1;
                Chomp::Keep
            }
            _ => Chomp::Clip,
        };
        // An explicit indentation indicator, or anything else in the header: the full parser.
        self.rest_is_comment(header, i)?;
        self.consume_line();

        // The content's indentation is that of its first non-blank line.
        let mut first = self.next;
        while self.lines.get(first).is_some_and(|l| is_blank(l)) {
            first += 1;
        }
        let indent = self
            .lines
            .get(first)
            .map(|l| l.bytes().take_while(|&b| b == b' ').count())
            .unwrap_or(0);
        if indent as isize == parent_indent + 1 {
            // Content one space in: valid, unusual, and subtle around sequences; left to the
            // full parser.
            return Err(GiveUp);
        }
        if (indent as isize) <= parent_indent || first >= self.lines.len() {
            // Empty content; trailing blank lines would matter only to `+`.
            if chomp == Chomp::Keep || first != self.next || first >= self.lines.len() {
                return Err(GiveUp);
            }
            // Placed, like a non-empty one, where the next line's content starts.
            return Ok((String::new(), self.pos_node(first, indent)));
        }
        let mut body: Vec<&str> = Vec::new();
        let mut end = self.next;
        let mut last_content = self.next;
        while let Some(&l) = self.lines.get(end) {
            if is_blank(l) {
                if l.len() > indent {
                    // Spaces past the indentation on a blank line are content: rare, exact
                    // rules are subtle; the full parser takes it.
                    return Err(GiveUp);
                }
                body.push("");
            } else {
                let li = l.bytes().take_while(|&b| b == b' ').count();
                if li < indent {
                    break;
                }
                let text = &l[indent..];
                if text.starts_with('\t') || (folded && text.starts_with(' ')) {
                    return Err(GiveUp);
                }
                body.push(text);
                last_content = end + 1;
            }
            end += 1;
        }
        let pos = self.pos_node(first, indent);
        let content_lines = last_content - self.next;
        let trailing_blank = body.len() - content_lines;
        body.truncate(content_lines);
        self.next = last_content;

        let mut out = String::with_capacity(body.iter().map(|l| l.len() + 1).sum());
        if folded {
            let mut pending_breaks = 0;
            let mut started = false;
            for l in &body {
                if l.is_empty() {
                    pending_breaks += 1;
                    continue;
                }
                if started && pending_breaks == 0 {
                    out.push(' ');
                }
                for _ in 0..pending_breaks {
                    out.push('\n');
                }
                pending_breaks = 0;
                started = true;
                out.push_str(l);
            }
        } else {
            for (n, l) in body.iter().enumerate() {
                if n > 0 {
                    out.push('\n');
                }
                out.push_str(l);
            }
        }
        match chomp {
            Chomp::Strip => {}
            Chomp::Clip => out.push('\n'),
            Chomp::Keep => {
                out.push('\n');
                for _ in 0..trailing_blank {
                    out.push('\n');
                }
            }
        }
        Ok((out, pos))
    }

    /// A one-line flow collection or flow scalar at byte `*i` of `line`; advances `*i` past it.
    fn flow(&self, line: usize, i: &mut usize, depth: usize) -> Read<Node> {
        if depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        let text = self.lines[line];
        let bytes = text.as_bytes();
        let mut pos = self.pos_node(line, *i);
        match bytes.get(*i) {
            Some(b'[') => {
                *i = skip_spaces(text, *i + 1);
                let mut items = Vec::new();
                if bytes.get(*i) == Some(&b']') {
                    *i += 1;
                    return Ok((Value::Array(items), pos));
                }
                loop {
                    let (v, p) = self.flow(line, i, depth + 1)?;
                    items.push(v);
                    pos.children.push(p);
                    *i = skip_spaces(text, *i);
                    match bytes.get(*i) {
                        Some(b',') => *i = skip_spaces(text, *i + 1),
                        Some(b']') => {
                            *i += 1;
                            return Ok((Value::Array(items), pos));
                        }
                        _ => return Err(GiveUp),
                    }
                    if matches!(bytes.get(*i), Some(b']' | b',')) {
                        // A trailing or empty entry.
                        return Err(GiveUp);
                    }
                }
            }
            Some(b'{') => {
                *i = skip_spaces(text, *i + 1);
                let mut entries: Vec<(Str, Value, PosNode)> = Vec::new();
                if bytes.get(*i) == Some(&b'}') {
                    *i += 1;
                    return Ok((Value::Object(Map::new()), pos));
                }
                loop {
                    let key_pos = self.pos_node(line, *i);
                    let quoted_key = matches!(bytes.get(*i), Some(b'"' | b'\''));
                    // Keys are kept as text: plain ones as written (`8080: x`, `true: x`).
                    let (key, end): (Cow<'_, str>, usize) = if quoted_key {
                        let (key, end) = quoted(text, *i)?;
                        (key.into(), end)
                    } else {
                        let (key, end) = flow_plain(text, *i)?;
                        (self.plain_key(Cow::Borrowed(key)), end)
                    };
                    *i = end;
                    *i = skip_spaces(text, *i);
                    if bytes.get(*i) != Some(&b':') {
                        return Err(GiveUp);
                    }
                    *i += 1;
                    if !quoted_key && bytes.get(*i) != Some(&b' ') {
                        return Err(GiveUp);
                    }
                    *i = skip_spaces(text, *i);
                    if matches!(bytes.get(*i), Some(b',' | b'}') | None) {
                        return Err(GiveUp);
                    }
                    let (v, mut p) = self.flow(line, i, depth + 1)?;
                    p.key_line = key_pos.line;
                    p.key_col = key_pos.col;
                    entries.push((key.into(), v, p));
                    *i = skip_spaces(text, *i);
                    match bytes.get(*i) {
                        Some(b',') => *i = skip_spaces(text, *i + 1),
                        Some(b'}') => {
                            *i += 1;
                            break;
                        }
                        _ => return Err(GiveUp),
                    }
                    if matches!(bytes.get(*i), Some(b'}' | b',')) {
                        return Err(GiveUp);
                    }
                }
                let map = build_map(entries, &mut pos).map_err(|_| GiveUp)?;
                Ok((map, pos))
            }
            Some(b'"' | b'\'') => {
                let (s, end) = quoted(text, *i)?;
                *i = end;
                Ok((Value::from(s), pos))
            }
            Some(_) => {
                let (s, end) = flow_plain(text, *i)?;
                *i = end;
                Ok((self.plain_scalar(s), pos))
            }
            None => Err(GiveUp),
        }
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Chomp {
    Strip,
    Clip,
    Keep,
}

fn is_blank(line: &str) -> bool {
    line.bytes().all(|b| b == b' ')
}

fn is_marker(content: &str) -> bool {
    content.starts_with("---") || content.starts_with("...")
}

/// Whether `c` can't start a plain scalar (or needs the full parser when it does).
fn bad_plain_start(s: &str) -> bool {
    let b = s.as_bytes();
    match b.first() {
        None => true,
        Some(b'&' | b'*' | b'!' | b'|' | b'>' | b'%' | b'@' | b'`' | b'#' | b',' | b'[' | b']')
        | Some(b'{' | b'}' | b'"' | b'\'') => true,
        Some(b'-' | b'?' | b':') => matches!(b.get(1), None | Some(b' ')),
        _ => false,
    }
}

/// If `content` is a block mapping entry (`key: ...` or `key:`), its key and the byte offset
/// just past the colon. Quoted keys are unquoted; plain keys keep their text as written.
fn entry_key(content: &str) -> Read<Option<(Cow<'_, str>, usize)>> {
    let bytes = content.as_bytes();
    match bytes[0] {
        b'"' | b'\'' => {
            // A quote that doesn't close on the line starts a scalar over several lines, no key.
            let Ok((key, end)) = quoted(content, 0) else {
                return Ok(None);
            };
            let colon = skip_spaces(content, end);
            if bytes.get(colon) == Some(&b':') && matches!(bytes.get(colon + 1), None | Some(b' '))
            {
                return Ok(Some((Cow::Owned(key), colon + 1)));
            }
            Ok(None)
        }
        b'[' | b'{' => Ok(None),
        _ => {
            let mut from = 0;
            while let Some(i) = colon_or_hash(bytes, from) {
                match bytes[i] {
                    b'#' if i > 0 && bytes[i - 1] == b' ' => return Ok(None),
                    b':' if matches!(bytes.get(i + 1), None | Some(b' ')) => {
                        let key = content[..i].trim_end_matches(' ');
                        if bad_plain_start(key) || key.len() > MAX_KEY_LEN {
                            return Err(GiveUp);
                        }
                        return Ok(Some((Cow::Borrowed(key), i + 1)));
                    }
                    _ => from = i + 1,
                }
            }
            Ok(None)
        }
    }
}

/// The index of the first `:` or `#` in `bytes` from `at`.
///
/// Eight bytes at a time (the bit trick flags a byte equal to the one sought in each lane of a
/// word; the lowest flag is exact): this runs on every line of every document, whose keys are
/// mostly a few bytes to a dozen, too short for a call into memchr to pay for itself; a word at a
/// time takes fewer steps than a byte loop.
#[inline]
fn colon_or_hash(bytes: &[u8], mut at: usize) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().ok()?);
        let colon = word ^ (ONES * b':' as u64);
        let hash = word ^ (ONES * b'#' as u64);
        let found = (colon.wrapping_sub(ONES) & !colon | hash.wrapping_sub(ONES) & !hash) & HIGHS;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = bytes.get(at..)?;
    rest.iter()
        .position(|&b| b == b':' || b == b'#')
        .map(|i| at + i)
}

/// A one-line plain scalar in block context starting at byte `start`: its text and end.
fn plain_block(text: &str, start: usize) -> Read<(&str, usize)> {
    let s = &text[start..];
    if bad_plain_start(s) {
        return Err(GiveUp);
    }
    let bytes = s.as_bytes();
    let mut end = bytes.len();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'#' if bytes[i - 1] == b' ' => {
                end = i;
                break;
            }
            // `a: b: c` is an error; a mapping here means the line wasn't what it looked like.
            b':' if matches!(bytes.get(i + 1), None | Some(b' ')) => return Err(GiveUp),
            _ => {}
        }
    }
    let value = s[..end].trim_end_matches(' ');
    Ok((value, start + value.len()))
}

/// A plain scalar inside a flow collection starting at byte `start`: its text and end.
fn flow_plain(text: &str, start: usize) -> Read<(&str, usize)> {
    let s = &text[start..];
    let b = s.as_bytes();
    if bad_plain_start(s)
        || (matches!(b.first(), Some(b'-' | b'?' | b':'))
            && matches!(b.get(1), Some(b',' | b'[' | b']' | b'{' | b'}')))
    {
        return Err(GiveUp);
    }
    let bytes = s.as_bytes();
    let mut end = bytes.len();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b',' | b'[' | b']' | b'{' | b'}' => {
                end = i;
                break;
            }
            b'#' if bytes[i - 1] == b' ' => {
                end = i;
                break;
            }
            b':' if matches!(
                bytes.get(i + 1),
                None | Some(b' ' | b',' | b'[' | b']' | b'{' | b'}')
            ) =>
            {
                end = i;
                break;
            }
            _ => {}
        }
    }
    let value = s[..end].trim_end_matches(' ');
    if value.is_empty() {
        return Err(GiveUp);
    }
    // ` - `, ` ? `, ` : ` inside a flow scalar: indicators the full parser may reject.
    let vb = value.as_bytes();
    let loose_indicator = (1..vb.len()).any(|i| {
        matches!(vb[i], b'-' | b'?' | b':')
            && vb[i - 1] == b' '
            && matches!(vb.get(i + 1), None | Some(b' '))
    });
    if loose_indicator {
        return Err(GiveUp);
    }
    Ok((value, start + value.len()))
}

/// Folds the line break between two lines of a plain or single-quoted scalar into `out`: a space,
/// or with `blanks` blank lines between them, that many line breaks.
fn push_line_break(out: &mut String, blanks: usize) {
    if blanks == 0 {
        out.push(' ');
    } else {
        out.extend(std::iter::repeat_n('\n', blanks));
    }
}

/// The text of a single-quoted scalar from the start of `s` (just past its opening quote, or a
/// later line's content) to its closing quote, `''` read as `'`; and where in `s` that closing
/// quote is, if it is on this line.
fn single_quoted_piece(s: &str) -> (String, Option<usize>) {
    let bytes = s.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while let Some(j) = s[i..].find('\'').map(|j| i + j) {
        out.push_str(&s[i..j]);
        if bytes.get(j + 1) == Some(&b'\'') {
            out.push('\'');
            i = j + 2;
        } else {
            return (out, Some(j));
        }
    }
    out.push_str(&s[i..]);
    (out, None)
}

/// A single- or double-quoted scalar that closes on its line, starting at byte `start` (the
/// quote): its value and the byte just past the closing quote.
fn quoted(text: &str, start: usize) -> Read<(String, usize)> {
    let bytes = text.as_bytes();
    let quote = bytes[start];
    let mut out = String::new();
    let mut i = start + 1;
    if quote == b'\'' {
        let (out, close) = single_quoted_piece(&text[i..]);
        return close.map(|c| (out, i + c + 1)).ok_or(GiveUp);
    }
    loop {
        let j = i + text[i..].find(['"', '\\']).ok_or(GiveUp)?;
        out.push_str(&text[i..j]);
        if bytes[j] == b'"' {
            return Ok((out, j + 1));
        }
        let (c, len) = match bytes.get(j + 1).ok_or(GiveUp)? {
            b'0' => ('\0', 2),
            b'a' => ('\x07', 2),
            b'b' => ('\x08', 2),
            b't' => ('\t', 2),
            b'n' => ('\n', 2),
            b'v' => ('\x0b', 2),
            b'f' => ('\x0c', 2),
            b'r' => ('\r', 2),
            b'e' => ('\x1b', 2),
            b' ' => (' ', 2),
            b'"' => ('"', 2),
            b'/' => ('/', 2),
            b'\\' => ('\\', 2),
            b'N' => ('\u{85}', 2),
            b'_' => ('\u{a0}', 2),
            b'L' => ('\u{2028}', 2),
            b'P' => ('\u{2029}', 2),
            b'x' => (hex_char(text, j + 2, 2)?, 4),
            b'u' => (hex_char(text, j + 2, 4)?, 6),
            b'U' => (hex_char(text, j + 2, 8)?, 10),
            _ => return Err(GiveUp),
        };
        out.push(c);
        i = j + len;
    }
}

fn hex_char(text: &str, start: usize, digits: usize) -> Read<char> {
    let hex = text.get(start..start + digits).ok_or(GiveUp)?;
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(GiveUp);
    }
    let code = u32::from_str_radix(hex, 16).map_err(|_| GiveUp)?;
    char::from_u32(code).ok_or(GiveUp)
}
