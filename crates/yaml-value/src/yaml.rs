//! YAML (and JSON) text → [`crate::Value`] plus a position tree.
//!
//! Why not a serde YAML crate: serde's YAML crates don't keep node positions, and every finding
//! has to point at a line and column. `saphyr-parser` gives an event stream with spans; this
//! module builds the value and a parallel [`PosNode`] tree from it, iteratively (no recursion, so
//! 10,000 levels of nesting can't overflow the stack) and with hard limits on depth and on alias
//! expansion (a "billion laughs" document fails fast instead of eating the machine).

use std::collections::HashMap;

use crate::{Map, Number, Str, Value};
use saphyr_parser::{Event, Parser, ScalarStyle, Span};

/// Deepest nesting accepted in one document. Kubernetes objects are a few dozen levels deep;
/// JSON readers stop at 128 (serde_json, and `crate::parse` after it), so a generous
/// bound here costs nothing.
pub const MAX_DEPTH: usize = 512;
/// Most nodes the aliases of one document may add to it (a bound on alias expansion; the nodes
/// written out are bounded by the text's size).
pub const MAX_ALIAS_NODES: usize = 1_000_000;

/// Where one node sits in the source: its value, and for a mapping entry its key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PosNode {
    /// 1-based line and column of the value.
    pub line: u32,
    pub col: u32,
    /// 1-based line and column of the key when this node is a mapping entry's value.
    pub key_line: u32,
    pub key_col: u32,
    /// Children in document order: mapping entries in key order, sequence items by index.
    pub children: Vec<PosNode>,
}

/// One parsed YAML document.
#[derive(Debug)]
pub struct ParsedDoc {
    pub value: Value,
    pub pos: PosNode,
    /// 1-based line where the document's content starts.
    pub start_line: u32,
}

/// How an alias to no anchor is reported, the alias's name after it.
const UNKNOWN_ANCHOR: &str = "found unknown anchor: ";

/// A parse failure with its 1-based position.
#[derive(Debug, Clone, PartialEq)]
pub struct YamlError {
    pub line: u32,
    pub col: u32,
    pub message: String,
    /// For an error go-yaml would not make (see [`go_yaml_leniency`]), the byte offset
    /// saphyr-parser marked and what it refused there.
    lenient: Option<(usize, Lenient)>,
}

impl YamlError {
    /// The error as go-yaml v2 words it (Helm reads YAML through `sigs.k8s.io/yaml`):
    /// `yaml: line N: PROBLEM`. go-yaml keeps libyaml's problem without its context ("while
    /// parsing a flow sequence"), and numbers a scanner's problem from 1 but a parser's from 0
    /// (its problem mark, one line early), leaving the line out where that is 0.
    pub fn go_yaml_text(&self) -> String {
        let message = self.message.as_str();
        // go-yaml's decoder, not libyaml, refuses an alias to no anchor: by name, no line.
        if let Some(name) = message.strip_prefix(UNKNOWN_ANCHOR) {
            return format!("yaml: unknown anchor '{name}' referenced");
        }
        let (context, problem) = match message.split_once(", ") {
            Some((context, problem)) if context.starts_with("while ") => (context, problem),
            _ => ("", message),
        };
        let parser_error =
            context.starts_with("while parsing") || problem.starts_with("did not find expected <");
        let problem = match problem {
            // saphyr's words for libyaml's problems.
            "expected ',' or ']'" => "did not find expected ',' or ']'",
            "simple key expect ':'" => "could not find expected ':'",
            "tabs disallowed within this context (block indentation)" => {
                "found character that cannot start any token"
            }
            other => other,
        };
        // A mark on the first line (0) leaves the line out, for either.
        let line = match self.line.saturating_sub(1) {
            0 => 0,
            zero_based if parser_error => zero_based,
            _ => self.line,
        };
        if line == 0 {
            format!("yaml: {problem}")
        } else {
            format!("yaml: line {line}: {problem}")
        }
    }

    fn at(span: &Span, line_offset: u32, message: impl Into<String>) -> Self {
        YamlError {
            line: span.start.line() as u32 + line_offset,
            col: span.start.col() as u32 + 1,
            message: message.into(),
            lenient: None,
        }
    }
}

enum Frame {
    Seq {
        items: Vec<Value>,
        pos: PosNode,
        anchor: usize,
        /// Nodes in the finished children's subtrees.
        size: usize,
    },
    Map {
        /// Entries in document order; sorted into the map when the mapping ends, so the
        /// position children follow the map's iteration order (by key).
        entries: Vec<(Str, Value, PosNode)>,
        pos: PosNode,
        anchor: usize,
        size: usize,
        /// The key waiting for its value, with its position.
        pending_key: Option<(Str, u32, u32)>,
    },
}

/// A node that may be referenced by an alias later in the same document.
struct Anchored {
    value: Value,
    pos: PosNode,
    nodes: usize,
}

/// Parses every document of `text`. Documents before a syntax error are kept; the error ends the
/// stream (the YAML scanner cannot resynchronise after one).
pub fn parse_stream(text: &str) -> (Vec<ParsedDoc>, Option<YamlError>) {
    parse_stream_at(text, 0)
}

/// Parses a piece of a larger text whose first line is line `line_offset + 1` of the whole;
/// every position is reported in the whole text's lines.
pub fn parse_stream_at(text: &str, line_offset: u32) -> (Vec<ParsedDoc>, Option<YamlError>) {
    parse_with(text, line_offset, false)
}

/// Parses as go-yaml v2 reads YAML, which Helm reads values and `fromYaml` with: besides
/// `yes`/`no`/`on`/`off`, the one-letter `y`/`Y`/`n`/`N` are booleans too, and of a repeated
/// key the last value wins.
pub fn parse_stream_go_yaml_v2(text: &str) -> (Vec<ParsedDoc>, Option<YamlError>) {
    parse_stream_go_yaml_v2_at(text, 0)
}

/// [`parse_stream_go_yaml_v2`] of a piece of a larger text (see [`parse_stream_at`]).
pub fn parse_stream_go_yaml_v2_at(
    text: &str,
    line_offset: u32,
) -> (Vec<ParsedDoc>, Option<YamlError>) {
    parse_with(text, line_offset, true)
}

/// How many places of one text may be rewritten ([`go_yaml_leniency`]) before its error stands:
/// each costs a parse of the whole text.
const MAX_LENIENT_EDITS: usize = 64;

fn parse_with(
    text: &str,
    line_offset: u32,
    one_letter_bools: bool,
) -> (Vec<ParsedDoc>, Option<YamlError>) {
    let (mut docs, mut error) = parse_events(text, line_offset, one_letter_bools);
    let mut edited: Option<(String, Vec<Shift>)> = None;
    for _ in 0..MAX_LENIENT_EDITS {
        let Some((at, lenient)) = error.as_ref().and_then(|e| e.lenient) else {
            break;
        };
        let (current, mut shifts) = edited
            .take()
            .unwrap_or_else(|| (text.to_string(), Vec::new()));
        let Some(next) = go_yaml_leniency(&current, at, lenient, &mut shifts) else {
            edited = Some((current, shifts));
            break;
        };
        (docs, error) = parse_events(&next, line_offset, one_letter_bools);
        edited = Some((next, shifts));
    }
    // Positions after text an edit added are moved back to where the text has them, the
    // latest edit first.
    if let Some((_, shifts)) = edited.filter(|(_, shifts)| !shifts.is_empty()) {
        let shift = |line: u32, col: &mut u32| {
            for s in shifts.iter().rev() {
                if s.line + line_offset == line && *col > s.after {
                    *col -= s.by;
                }
            }
        };
        fn walk(pos: &mut PosNode, shift: &impl Fn(u32, &mut u32)) {
            shift(pos.line, &mut pos.col);
            shift(pos.key_line, &mut pos.key_col);
            pos.children.iter_mut().for_each(|c| walk(c, shift));
        }
        docs.iter_mut().for_each(|d| walk(&mut d.pos, &shift));
        if let Some(e) = &mut error {
            shift(e.line, &mut e.col);
        }
    }
    (docs, error)
}

/// Text an edit of [`go_yaml_leniency`] added to a line: on 1-based `line` of the text parsed,
/// the characters after column `after` (1-based) are `by` further right than in the text given.
struct Shift {
    line: u32,
    after: u32,
    by: u32,
}

/// What saphyr-parser refuses, following the YAML spec, where go-yaml (which kubectl and Helm
/// read YAML with) and PyYAML let it pass: a manifest kubectl applies must not be an input
/// error here ([`go_yaml_leniency`]).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lenient {
    /// A tab in the indentation of a quoted scalar's continuation line.
    TabInContinuation,
    /// A quoted scalar's continuation line indented less than its block.
    UnderIndentedContinuation,
    /// A comment right after a token (`a: "v"# note`).
    UnspacedComment,
}

impl Lenient {
    /// The leniency for a saphyr-parser error message, if go-yaml would not make the error.
    fn of(message: &str) -> Option<Lenient> {
        match message {
            "tab cannot be used as indentation" => Some(Lenient::TabInContinuation),
            "invalid indentation in quoted scalar" => Some(Lenient::UnderIndentedContinuation),
            "comments must be separated from other tokens by whitespace" => {
                Some(Lenient::UnspacedComment)
            }
            _ => None,
        }
    }
}

/// Rewrites the place saphyr-parser refused (`at`, the byte offset it marked) so that it reads
/// as go-yaml reads it, changing no value, for the text to be parsed again:
///
/// - a tab in a quoted scalar's continuation line's indentation becomes a space (the same
///   length, so nothing moves; a second parse finds the scalar if it is still refused);
/// - an under-indented quoted scalar (`at` is its opening quote) gets spaces enough before its
///   continuation lines, which it drops anyway (`a: "one\n\ttwo"` is `one two`);
/// - a space goes before a comment right after a token (`a: "v"# note`, `a: [x]#note`).
///
/// `None` when the text has nothing to rewrite there. Why by hand: saphyr has no lenient mode,
/// and no other maintained YAML crate gives positions.
fn go_yaml_leniency(
    text: &str,
    at: usize,
    lenient: Lenient,
    shifts: &mut Vec<Shift>,
) -> Option<String> {
    match lenient {
        Lenient::TabInContinuation => {
            let from = line_start(text, at);
            let run = blank_run(&text.as_bytes()[from..]);
            if !text.as_bytes()[from..from + run].contains(&b'\t') {
                return None;
            }
            Some([&text[..from], &" ".repeat(run), &text[from + run..]].concat())
        }
        Lenient::UnderIndentedContinuation => relax_quoted_scalar(text, at, shifts),
        Lenient::UnspacedComment if text.as_bytes().get(at) == Some(&b'#') => {
            shifts.push(Shift {
                line: line_number(text, at),
                after: text[line_start(text, at)..at].chars().count() as u32 + 1,
                by: 1,
            });
            Some([&text[..at], " ", &text[at..]].concat())
        }
        Lenient::UnspacedComment => None,
    }
}

/// The byte offset where the line holding byte `at` starts.
fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |n| n + 1)
}

/// The 1-based number of the line holding byte `at`.
fn line_number(text: &str, at: usize) -> u32 {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..at]).count() as u32 + 1
}

/// How many spaces and tabs `bytes` starts with.
fn blank_run(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t'))
        .count()
}

/// The quoted scalar opening at byte `start`, its continuation lines' leading blanks made spaces
/// at least as many as the scalar's column (no fewer than its block's indentation needs).
fn relax_quoted_scalar(text: &str, start: usize, shifts: &mut Vec<Shift>) -> Option<String> {
    let bytes = text.as_bytes();
    let quote = *bytes.get(start)?;
    if !matches!(quote, b'"' | b'\'') {
        return None;
    }
    let column = text[line_start(text, start)..start].chars().count();
    let mut out = String::with_capacity(text.len() + 64);
    out.push_str(&text[..start + 1]);
    let mut i = start + 1;
    let mut changed = false;
    while i < bytes.len() {
        match bytes[i] {
            // An escape, but not an escaped line break: the line after one is a continuation
            // line like any other.
            b'\\' if quote == b'"' && bytes.get(i + 1) != Some(&b'\n') => {
                let next = text[i + 1..].chars().next().map_or(0, char::len_utf8);
                out.push_str(&text[i..i + 1 + next]);
                i += 1 + next;
                continue;
            }
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => {
                out.push_str("''");
                i += 2;
                continue;
            }
            q if q == quote => {
                out.push_str(&text[i..]);
                return changed.then_some(out);
            }
            b'\n' => {
                out.push('\n');
                i += 1;
                let run = blank_run(&bytes[i..]);
                let blank = matches!(bytes.get(i + run), None | Some(b'\n' | b'\r'));
                let width = if blank { run } else { run.max(column) };
                if width != run || bytes[i..i + run].contains(&b'\t') {
                    changed = true;
                    if width > run {
                        shifts.push(Shift {
                            line: line_number(text, i),
                            after: width as u32,
                            by: (width - run) as u32,
                        });
                    }
                }
                out.extend(std::iter::repeat_n(' ', width));
                i += run;
                continue;
            }
            _ => {}
        }
        let len = text[i..].chars().next().map_or(1, char::len_utf8);
        out.push_str(&text[i..i + len]);
        i += len;
    }
    None
}

fn parse_events(
    text: &str,
    line_offset: u32,
    one_letter_bools: bool,
) -> (Vec<ParsedDoc>, Option<YamlError>) {
    let mut docs = Vec::new();
    let mut parser = Parser::new_from_str(text);
    let mut builder = Builder {
        line_offset,
        one_letter_bools,
        ..Builder::default()
    };
    loop {
        let Some(next) = parser.next_event() else {
            return (docs, None);
        };
        let (event, span) = match next {
            Ok(ev) => ev,
            Err(e) => {
                let m = e.marker();
                let message = e.info().to_string();
                // saphyr's markers count characters.
                let at = text
                    .char_indices()
                    .nth(m.index())
                    .map_or(text.len(), |(i, _)| i);
                let lenient = Lenient::of(&message).map(|kind| (at, kind));
                // The alias's name, which saphyr leaves out.
                let message = if message.ends_with("found unknown anchor") {
                    let name: String = text[at..]
                        .trim_start_matches('*')
                        .chars()
                        .take_while(|c| !c.is_whitespace() && !",[]{}".contains(*c))
                        .collect();
                    format!("{UNKNOWN_ANCHOR}{name}")
                } else {
                    message
                };
                // libyaml marks an unexpected end where the stream ends; saphyr where the
                // unfinished token began.
                let line = if message.ends_with("found unexpected end of stream") {
                    text.matches('\n').count() as u32 + 1
                } else {
                    m.line() as u32
                };
                return (
                    docs,
                    Some(YamlError {
                        line: line + line_offset,
                        col: m.col() as u32 + 1,
                        message,
                        lenient,
                    }),
                );
            }
        };
        match builder.event(event, &span) {
            Ok(Some(doc)) => docs.push(doc),
            Ok(None) => {}
            Err(e) => return (docs, Some(e)),
        }
    }
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    /// Nodes the aliases of this document have added.
    nodes: usize,
    root: Option<(Value, PosNode)>,
    doc_start: u32,
    /// Added to every line (see [`parse_stream_at`]).
    line_offset: u32,
    /// go-yaml v2's reading, as Helm reads values through `sigs.k8s.io/yaml` (see
    /// [`parse_stream_go_yaml_v2`]): plain `y`/`n` are booleans, a repeated key's last value
    /// wins.
    one_letter_bools: bool,
}

impl Builder {
    fn event(&mut self, event: Event<'_>, span: &Span) -> Result<Option<ParsedDoc>, YamlError> {
        let line = span.start.line() as u32 + self.line_offset;
        let col = span.start.col() as u32 + 1;
        match event {
            Event::StreamStart | Event::StreamEnd | Event::Nothing => Ok(None),
            Event::DocumentStart(_) => {
                self.stack.clear();
                self.anchors.clear();
                self.nodes = 0;
                self.root = None;
                self.doc_start = line;
                Ok(None)
            }
            Event::DocumentEnd => {
                let (value, pos) = self
                    .root
                    .take()
                    .unwrap_or((Value::Null, PosNode::default()));
                let start_line = if pos.line > 0 {
                    pos.line
                } else {
                    self.doc_start
                };
                Ok(Some(ParsedDoc {
                    value,
                    pos,
                    start_line,
                }))
            }
            Event::Scalar(text, style, anchor, tag) => {
                // A key: keep its text as written (`8080: x`, `true: x`), no typed value needed;
                // go-yaml v2 (Helm) types it first and writes the value back as text.
                let go_yaml_v2 = self.one_letter_bools;
                if anchor == 0
                    && let Some(Frame::Map {
                        pending_key: pending @ None,
                        ..
                    }) = self.stack.last_mut()
                {
                    let key = if go_yaml_v2 && style == ScalarStyle::Plain && tag.is_none() {
                        go_yaml_v2_key(&text).map_or_else(|| Str::from(&*text), Str::from)
                    } else {
                        Str::from(&*text)
                    };
                    *pending = Some((key, line, col));
                    return Ok(None);
                }
                let tag = tag.map(|t| t.suffix.clone());
                let v2_plain =
                    self.one_letter_bools && style == ScalarStyle::Plain && tag.is_none();
                let value = match one_letter_bool(&text).filter(|_| v2_plain) {
                    Some(b) => Value::Bool(b),
                    None => scalar_value(text, style, tag.as_deref()),
                };
                let pos = PosNode {
                    line,
                    col,
                    ..PosNode::default()
                };
                self.push_node(value, pos, anchor, 1, span)?;
                Ok(None)
            }
            Event::Alias(id) => {
                let Some(nodes) = self.anchors.get(&id).map(|a| a.nodes) else {
                    return Err(YamlError::at(
                        span,
                        self.line_offset,
                        "alias refers to an unknown anchor",
                    ));
                };
                // Count before copying: the bound must hold before the memory is spent.
                self.count(nodes, span)?;
                let anchored = &self.anchors[&id];
                let (value, mut pos) = (anchored.value.clone(), anchored.pos.clone());
                // An alias points at the anchor's text; report positions at the alias itself.
                pos.line = line;
                pos.col = col;
                self.push_node(value, pos, 0, nodes, span)?;
                Ok(None)
            }
            Event::SequenceStart(anchor, _) => {
                let pos = self.open(line, col, span)?;
                self.stack.push(Frame::Seq {
                    items: Vec::new(),
                    pos,
                    anchor,
                    size: 0,
                });
                Ok(None)
            }
            Event::MappingStart(anchor, _) => {
                let pos = self.open(line, col, span)?;
                self.stack.push(Frame::Map {
                    entries: Vec::new(),
                    pos,
                    anchor,
                    size: 0,
                    pending_key: None,
                });
                Ok(None)
            }
            Event::SequenceEnd => {
                let Some(Frame::Seq {
                    mut items,
                    mut pos,
                    anchor,
                    size,
                }) = self.stack.pop()
                else {
                    return Err(self.unbalanced(span, "sequence"));
                };
                // Grown by doubling; the tree is kept for the whole run, without spare capacity.
                items.shrink_to_fit();
                pos.children.shrink_to_fit();
                let nodes = 1 + size;
                self.push_node(Value::Array(items), pos, anchor, nodes, span)?;
                Ok(None)
            }
            Event::MappingEnd => {
                let Some(Frame::Map {
                    mut entries,
                    mut pos,
                    anchor,
                    size,
                    ..
                }) = self.stack.pop()
                else {
                    return Err(self.unbalanced(span, "mapping"));
                };
                if self.one_letter_bools {
                    // go-yaml v2 sets map entries one by one: a repeated key's last value wins.
                    dedupe_keeping_last(&mut entries);
                }
                let map = build_map(entries, &mut pos).map_err(|(key, at)| YamlError {
                    line: at.key_line,
                    col: at.key_col,
                    message: format!("duplicate key `{key}`"),
                    lenient: None,
                })?;
                let nodes = 1 + size;
                self.push_node(map, pos, anchor, nodes, span)?;
                Ok(None)
            }
        }
    }

    /// The end of a collection that was never started (saphyr-parser doesn't emit one; this
    /// guards the stack).
    fn unbalanced(&self, span: &Span, what: &str) -> YamlError {
        YamlError::at(span, self.line_offset, format!("unbalanced {what} end"))
    }

    /// Checks the limits for a new collection and returns its position node.
    fn open(&mut self, line: u32, col: u32, span: &Span) -> Result<PosNode, YamlError> {
        self.check_depth(span)?;
        Ok(PosNode {
            line,
            col,
            ..PosNode::default()
        })
    }

    fn check_depth(&self, span: &Span) -> Result<(), YamlError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(YamlError::at(
                span,
                self.line_offset,
                format!("nesting deeper than {MAX_DEPTH} levels"),
            ));
        }
        Ok(())
    }

    fn count(&mut self, nodes: usize, span: &Span) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(nodes);
        if self.nodes > MAX_ALIAS_NODES {
            return Err(YamlError::at(
                span,
                self.line_offset,
                format!(
                    "aliases expand the document by more than {MAX_ALIAS_NODES} nodes, the alias limit (an alias bomb?)"
                ),
            ));
        }
        Ok(())
    }

    /// Attaches a finished node to its parent (or makes it the document root).
    fn push_node(
        &mut self,
        value: Value,
        pos: PosNode,
        anchor: usize,
        nodes: usize,
        span: &Span,
    ) -> Result<(), YamlError> {
        if anchor != 0 {
            self.anchors.insert(
                anchor,
                Anchored {
                    value: value.clone(),
                    pos: pos.clone(),
                    nodes,
                },
            );
        }
        match self.stack.last_mut() {
            None => {
                self.root = Some((value, pos));
            }
            Some(Frame::Seq {
                items,
                pos: parent,
                size,
                ..
            }) => {
                *size += nodes;
                items.push(value);
                parent.children.push(pos);
            }
            Some(Frame::Map {
                entries,
                pending_key,
                size,
                ..
            }) => match pending_key.take() {
                None => {
                    // An anchored or aliased key: keys are strings in Kubernetes objects.
                    let key = match value {
                        Value::String(s) => s,
                        Value::Null => "null".into(),
                        Value::Bool(_) | Value::Number(_) => value.to_string().into(),
                        _ => {
                            return Err(YamlError::at(
                                span,
                                self.line_offset,
                                "a mapping or sequence used as a key is not supported",
                            ));
                        }
                    };
                    *pending_key = Some((key, pos.line, pos.col));
                }
                Some((key, key_line, key_col)) => {
                    let mut pos = pos;
                    pos.key_line = key_line;
                    pos.key_col = key_col;
                    *size += nodes;
                    entries.push((key, value, pos));
                }
            },
        }
        Ok(())
    }
}

/// Drops every entry whose key comes again later, as go-yaml v2 does by overwriting it.
fn dedupe_keeping_last(entries: &mut Vec<(Str, Value, PosNode)>) {
    let mut seen = std::collections::HashSet::new();
    let mut keep = vec![false; entries.len()];
    for (i, (key, _, _)) in entries.iter().enumerate().rev() {
        keep[i] = seen.insert(key.clone());
    }
    let mut i = 0;
    entries.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// A mapping's value from its entries in document order, with their positions appended to
/// `pos.children` in the map's (sorted) key order. A duplicate key is an error: the key and the
/// position of its later occurrence.
pub(crate) fn build_map(
    mut entries: Vec<(Str, Value, PosNode)>,
    pos: &mut PosNode,
) -> Result<Value, (String, PosNode)> {
    build_map_from(&mut entries, 0, pos)
}

/// [`build_map`] of the entries of `stack` from `start` on, which it takes off the stack (a
/// reader's stack of the entries of the mappings being read, innermost last: one vector for
/// every mapping of a document, not one each).
pub(crate) fn build_map_from(
    stack: &mut Vec<(Str, Value, PosNode)>,
    start: usize,
    pos: &mut PosNode,
) -> Result<Value, (String, PosNode)> {
    let entries = &mut stack[start..];
    // Stable: of two equal keys, the later one in the document is the duplicate.
    entries.sort_by(|a, b| crate::key_order(&a.0, &b.0));
    if let Some(i) = entries.windows(2).position(|w| w[0].0 == w[1].0) {
        let (key, _, at) = stack.swap_remove(start + i + 1);
        stack.truncate(start);
        return Err((key.into(), at));
    }
    let len = entries.len();
    pos.children.reserve_exact(len);
    // Into vectors of the exact size: the map and its positions are kept for the whole run,
    // and a vector grown entry by entry keeps its spare capacity.
    let mut kept = Vec::with_capacity(len);
    for (k, v, p) in stack.drain(start..) {
        pos.children.push(p);
        kept.push((k, v));
    }
    // Sorted above, and no key twice.
    Ok(Value::Object(Map::from_sorted_entries(kept)))
}

/// go-yaml v2's one-letter booleans (`y`, `Y`, `n`, `N`), which YAML 1.1's other readers take
/// as strings: a plain scalar's value besides [`plain_value`]'s in that reading.
pub(crate) fn one_letter_bool(text: &str) -> Option<bool> {
    match text {
        "y" | "Y" => Some(true),
        "n" | "N" => Some(false),
        _ => None,
    }
}

/// A plain key as `sigs.k8s.io/yaml` turns go-yaml v2's typed key into JSON text: `y: 1` has
/// the key `true`, `0x10: 1` the key `16`.
pub(crate) fn go_yaml_v2_key(text: &str) -> Option<String> {
    if let Some(b) = one_letter_bool(text) {
        return Some(b.to_string());
    }
    match plain_value(text)? {
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("null".into()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Resolves a scalar the way Kubernetes' YAML decoder does: plain scalars are typed (null, bool
/// incl. YAML 1.1 `yes`/`no`/`on`/`off`, int incl. `0x`/`0o`/leading-0 octal, float), quoted ones
/// are strings, and an explicit `!!str`/`!!int`/… tag wins.
fn scalar_value(text: std::borrow::Cow<'_, str>, style: ScalarStyle, tag: Option<&str>) -> Value {
    match tag {
        Some("str") | Some("binary") => return Value::String(Str::from(&*text)),
        Some("int") | Some("float") | Some("bool") | Some("null") => {
            if let Some(v) = plain_value(&text) {
                return v;
            }
        }
        _ => {}
    }
    if style != ScalarStyle::Plain {
        return Value::String(Str::from(&*text));
    }
    plain_value(&text).unwrap_or_else(|| Value::String(Str::from(&*text)))
}

/// The value of a plain (unquoted) scalar as YAML 1.1 reads it, `None` for a string.
pub fn plain_value(text: &str) -> Option<Value> {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Some(Value::Null),
        "true" | "True" | "TRUE" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" => {
            return Some(Value::Bool(true));
        }
        "false" | "False" | "FALSE" | "no" | "No" | "NO" | "off" | "Off" | "OFF" => {
            return Some(Value::Bool(false));
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" | "-.inf" | "-.Inf" | "-.INF"
        | ".nan" | ".NaN" | ".NAN" => {
            // JSON has no infinities or NaN; keep the text.
            return Some(Value::from(text));
        }
        _ => {}
    }
    let first = text.as_bytes()[0];
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return None;
    }
    parse_int(text)
        .map(Value::Number)
        .or_else(|| parse_float(text))
}

fn parse_int(text: &str) -> Option<Number> {
    let (neg, digits) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let digits: std::borrow::Cow<'_, str> = if digits.contains('_') {
        digits.replace('_', "").into()
    } else {
        digits.into()
    };
    let (radix, body): (u32, &str) = if let Some(h) = digits.strip_prefix("0x") {
        (16, h)
    } else if let Some(o) = digits.strip_prefix("0o") {
        (8, o)
    } else if digits.len() > 1
        && digits.starts_with('0')
        && digits.bytes().all(|b| b.is_ascii_digit())
    {
        (8, &digits[1..])
    } else {
        (10, &digits)
    };
    if body.is_empty() || !body.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let magnitude = u64::from_str_radix(body, radix).ok()?;
    if neg {
        let v = i64::try_from(magnitude).ok()?;
        Some(Number::from(-v))
    } else {
        Some(Number::from(magnitude))
    }
}

fn parse_float(text: &str) -> Option<Value> {
    let ok = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E' | b'_'));
    if !ok || !text.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let f: f64 = if text.contains('_') {
        text.replace('_', "").parse().ok()?
    } else {
        text.parse().ok()?
    };
    Number::from_f64(f).map(Value::Number)
}

/// Walks a JSON pointer through a value and its position tree in step. Returns the position node
/// of the deepest existing value, and whether the whole pointer exists.
pub fn resolve<'p>(value: &Value, pos: &'p PosNode, pointer: &str) -> (&'p PosNode, bool) {
    let mut value = value;
    let mut pos = pos;
    for token in pointer.split('/').skip(1) {
        let token = crate::unescape_pointer_token(token);
        let next = match value {
            Value::Object(map) => map
                .iter()
                .enumerate()
                .find(|(_, (k, _))| *k == token.as_ref())
                .and_then(|(i, (_, v))| Some((v, pos.children.get(i)?))),
            Value::Array(items) => token
                .parse::<usize>()
                .ok()
                .and_then(|i| Some((items.get(i)?, pos.children.get(i)?))),
            _ => None,
        };
        match next {
            Some((v, p)) => {
                value = v;
                pos = p;
            }
            None => return (pos, false),
        }
    }
    (pos, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn one(text: &str) -> ParsedDoc {
        let (mut docs, err) = parse_stream(text);
        assert_eq!(err, None);
        assert_eq!(docs.len(), 1);
        docs.remove(0)
    }

    /// kubectl (go-yaml) and PyYAML take a quoted scalar's continuation lines at any
    /// indentation, tabs included, and a comment right after a token (saphyr-parser, like the
    /// YAML spec, refuses both); the values are theirs, measured with kubectl 1.36 and PyYAML.
    /// Nodes and errors after an edited place keep their places in the text as written.
    #[test]
    fn what_kubectl_reads_past_the_yaml_spec_is_read_too() {
        for (text, want) in [
            (
                "data:\n  a: \"hello\n\tworld\"\n",
                json!({"data": {"a": "hello world"}}),
            ),
            (
                "data:\n  a: \"hello\nworld\"\n",
                json!({"data": {"a": "hello world"}}),
            ),
            (
                "data:\n  a: \"hello\n\t\tworld\"\n",
                json!({"data": {"a": "hello world"}}),
            ),
            (
                "data:\n  a: \"hello\n  \tworld\"\n",
                json!({"data": {"a": "hello world"}}),
            ),
            ("data:\n  a: 'x\n\ty'\n", json!({"data": {"a": "x y"}})),
            (
                "data:\n  a: \"hello\n\t\"\n",
                json!({"data": {"a": "hello "}}),
            ),
            (
                "data:\n  a: \"it''s \\\"q\\\"\nx\"\n",
                json!({"data": {"a": "it''s \"q\" x"}}),
            ),
            (
                "- a: 'it''s\nx'\n  b: 1\n",
                json!([{"a": "it's x", "b": 1}]),
            ),
            // An escaped line break joins the lines without a space.
            ("d:\n  a: \"one\\\ntwo\"\n", json!({"d": {"a": "onetwo"}})),
        ] {
            assert_eq!(one(text).value, want, "{text:?}");
        }
        let d = one("a: [\"one\ntwo\", b]\nc: \"x\n\ty\"  # note\nd: 1\n");
        assert_eq!(d.value, json!({"a": ["one two", "b"], "c": "x y", "d": 1}));
        let (b, _) = crate::yaml::resolve(&d.value, &d.pos, "/a/1");
        assert_eq!((b.line, b.col), (2, 7));
        let (d_pos, _) = crate::yaml::resolve(&d.value, &d.pos, "/d");
        assert_eq!((d_pos.line, d_pos.col, d_pos.key_col), (5, 4, 1));
        // A comment right after a token is a comment to kubectl and PyYAML (after a plain
        // scalar's text, `#` is part of the text, in YAML as here).
        let d = one("a: \"v\"# note\nb: [x, y]#n\nc: {k: v}#n\nd: 'w'#n\ne: v#n\n");
        assert_eq!(
            d.value,
            json!({"a": "v", "b": ["x", "y"], "c": {"k": "v"}, "d": "w", "e": "v#n"})
        );
        let (y, _) = crate::yaml::resolve(&d.value, &d.pos, "/b/1");
        assert_eq!((y.line, y.col), (2, 8));
        // An error after an edit is placed in the text as given.
        let (_, error) = parse_stream("a: \"v\"#n\nb: \"x\n\ty\"\nc: [1, 2\n");
        let error = error.expect("an unclosed list");
        assert_eq!(error.line, 5, "{error:?}");
        let (_, error) = parse_stream("b: \"x\n\ty\" ]\n");
        let error = error.expect("a stray bracket");
        assert_eq!((error.line, error.col), (2, 5), "{error:?}");
        // Tabs as a block's indentation, or in a plain scalar's, are errors to kubectl too.
        for text in [
            "foo:\n\tbar: 1\n",
            "foo:\n  a: 1\n  \tb: 2\n",
            "a: hello\n\tworld\n",
        ] {
            assert!(parse_stream(text).1.is_some(), "{text:?}");
        }
    }

    #[test]
    fn types_scalars_like_kubernetes() {
        let d = one(
            "a: 1\nb: '1'\nc: yes\nd: ~\ne: 0755\nf: 1.5\ng: 0x1F\nh: -3\ni: 1.2.3\nj: !!str 5\n",
        );
        assert_eq!(
            d.value,
            json!({"a":1,"b":"1","c":true,"d":null,"e":493,"f":1.5,"g":31,"h":-3,"i":"1.2.3","j":"5"})
        );
    }

    #[test]
    fn records_positions_of_values_and_keys() {
        let d = one("spec:\n  zeta: 1\n  containers:\n  - name: a\n    image: x\n");
        let (containers, exact) = crate::yaml::resolve(&d.value, &d.pos, "/spec/containers");
        assert!(exact);
        assert_eq!((containers.key_line, containers.key_col), (3, 3));
        let (image, _) = crate::yaml::resolve(&d.value, &d.pos, "/spec/containers/0/image");
        assert_eq!((image.line, image.col), (5, 12));
        assert_eq!((image.key_line, image.key_col), (5, 5));
        let (zeta, _) = crate::yaml::resolve(&d.value, &d.pos, "/spec/zeta");
        assert_eq!((zeta.line, zeta.col), (2, 9));
    }

    #[test]
    fn duplicate_keys_are_errors_at_the_second_key() {
        let (_, err) = parse_stream("a: 1\nb: 2\na: 3\n");
        let err = err.unwrap();
        assert_eq!((err.line, err.col), (3, 1));
        assert!(err.message.contains("duplicate key `a`"));
    }

    #[test]
    fn aliases_are_expanded_and_bombs_are_bounded() {
        let d = one("x: &a [1, 2]\ny: *a\n");
        assert_eq!(d.value, json!({"x":[1,2],"y":[1,2]}));
        let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..12 {
            let p = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let (_, err) = parse_stream(&bomb);
        assert!(err.unwrap().message.contains("alias bomb"));
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        // Flow style: the scanner's own recursion limit.
        let text = "[".repeat(10_000) + &"]".repeat(10_000);
        let (_, err) = parse_stream(&text);
        assert!(err.unwrap().message.contains("recursion limit"));
        // Block style: this reader's depth limit.
        let mut text = String::new();
        for i in 0..10_000 {
            text.push_str(&" ".repeat(i));
            text.push_str("a:\n");
        }
        let (_, err) = parse_stream(&text);
        let err = err.unwrap();
        assert!(
            err.message.contains("nesting deeper than 512"),
            "{}",
            err.message
        );
    }

    #[test]
    fn multiple_documents_with_empty_ones() {
        let (docs, err) = parse_stream("---\na: 1\n---\n---\nb: 2\n");
        assert_eq!(err, None);
        let values: Vec<_> = docs.iter().map(|d| d.value.clone()).collect();
        assert_eq!(values, vec![json!({"a":1}), Value::Null, json!({"b":2})]);
    }
}
