//! Go's `text/template/parse`: a lexer and parser for Helm's templates, producing the syntax
//! tree of [`super::ast`] (which the executor walks).
//!
//! Why not gotmpl's own parser: its lexer compares both delimiters at every character of text
//! and decodes each one, and a render parses every template of the chart; this one finds `{{` with
//! `memchr`. It also reports what Go's parser reports at parse time — undefined variables and
//! functions, `break` outside `range` — and places nodes where Go does (a field chain `.a.b`
//! at its second part), so errors carry Go's `line:column`.

use std::rc::Rc;

use bumpalo::Bump;
use bumpalo::collections::Vec as BumpVec;

use super::ast::{
    BranchNode, Callee, CommandNode, DefineNode, Expr, ListNode, Literals, Node, Number, PipeNode,
    TemplateNode,
};
use super::pos::{Pos, Span};

/// A parse failure: line and message, in Go's words.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct ParseError {
    pub line: usize,
    pub message: String,
}

type Result<T> = std::result::Result<T, ParseError>;

/// Go's bound on nested parentheses (`maxStackDepth` in text/template/parse): the 10,001st
/// `(` is an error, with Go's message.
const MAX_PAREN_DEPTH: usize = 10_000;
/// How deeply `if`/`with`/`range`/`block` (and the arms of an `else if` chain, which nest) may
/// nest. Go has no such bound: Helm parses and runs 340,000 nested `if`s (a 5 MiB chart file, the
/// largest Helm loads) and 400,000 in a `tpl` string, then dies of a fatal stack overflow near
/// 600,000 (its goroutine stack stops at 1 GB). This bound is above what Helm survives, so
/// every template Helm renders parses here, and a deeper one is a located error, not a crash.
pub(super) const MAX_NESTING: usize = 500_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Text,
    LeftDelim,
    RightDelim,
    Space,
    Identifier,
    Field,
    Variable,
    Dot,
    String,
    RawString,
    Char,
    Number,
    Bool,
    Nil,
    Pipe,
    LeftParen,
    RightParen,
    Declare,
    Assign,
    Comma,
    Keyword,
    Eof,
}

#[derive(Debug, Clone, Copy)]
struct Token {
    kind: Kind,
    /// Byte range in the source (for text: the text after trimming). 32 bits, as a node's
    /// position is: a token is written for every few bytes of a template.
    start: u32,
    end: u32,
    line: u32,
}

impl Token {
    fn span(&self) -> Span {
        Span {
            start: self.start,
            end: self.end,
        }
    }
    /// The span without its first byte (a field's dot).
    fn span_after_first(&self) -> Span {
        Span {
            start: self.start + 1,
            end: self.end,
        }
    }
    fn pos(&self) -> Pos {
        Pos {
            offset: self.start,
            line: self.line,
        }
    }
}

/// Splits a template into tokens, Go's way: text between actions, trim markers (`{{- `,
/// ` -}}`) applied to the neighbouring text, comments dropped.
struct Lexer<'s> {
    src: &'s str,
    bytes: &'s [u8],
    pos: usize,
    line: usize,
    tokens: Vec<Token>,
    paren_depth: usize,
}

/// The ASCII bytes of a name (letters, digits, `_`), looked up rather than tested in turn.
static WORD_BYTE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 128 {
        table[b] = (b as u8).is_ascii_alphanumeric() || b == b'_' as usize;
        b += 1;
    }
    table
};

const RIGHT: &[u8] = b"}}";

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

impl<'s> Lexer<'s> {
    fn new(src: &'s str) -> Self {
        Lexer {
            src,
            bytes: src.as_bytes(),
            pos: 0,
            line: 1,
            // Up to a token per three bytes in action-dense helpers: sized once, not regrown.
            tokens: Vec::with_capacity(src.len() / 3 + 16),
            paren_depth: 0,
        }
    }

    fn err(&self, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line,
            message: message.into(),
        }
    }

    fn newlines(&self, from: usize, to: usize) -> usize {
        let span = &self.bytes[from..to];
        // Most spans are a delimiter or one space: a plain loop beats setting up a SIMD count.
        if span.len() < 32 {
            span.iter().filter(|b| **b == b'\n').count()
        } else {
            memchr::memchr_iter(b'\n', span).count()
        }
    }

    /// Moves to `to`, counting the lines passed.
    fn advance(&mut self, to: usize) {
        self.line += self.newlines(self.pos, to);
        self.pos = to;
    }

    fn push(&mut self, kind: Kind, start: usize, end: usize, line: usize) {
        self.tokens.push(Token {
            kind,
            start: start as u32,
            end: end as u32,
            line: line as u32,
        });
    }

    fn run(mut self) -> Result<Vec<Token>> {
        let mut trim_next_text = false;
        loop {
            // The next `{{`: a `{` found with memchr, then its neighbour checked (the texts
            // between actions are short, and a substring searcher costs more to start than
            // the search; a lone `{` in the text is rare).
            let mut found = None;
            let mut from = self.pos;
            while let Some(i) = memchr::memchr(b'{', &self.bytes[from..]) {
                let at = from + i;
                if self.bytes.get(at + 1) == Some(&b'{') {
                    found = Some(at);
                    break;
                }
                from = at + 1;
            }
            let text_end = found.unwrap_or(self.bytes.len());
            // A left trim marker: `{{-` followed by a space.
            let left_trim = found.is_some_and(|at| {
                self.bytes.get(at + 2) == Some(&b'-')
                    && self.bytes.get(at + 3).is_some_and(|b| is_space(*b))
            });
            let (mut ts, mut te) = (self.pos, text_end);
            if trim_next_text {
                while ts < te && is_space(self.bytes[ts]) {
                    ts += 1;
                }
            }
            if left_trim {
                while te > ts && is_space(self.bytes[te - 1]) {
                    te -= 1;
                }
            }
            if te > ts {
                let line = self.line + self.newlines(self.pos, ts);
                self.push(Kind::Text, ts, te, line);
            }
            let Some(at) = found else {
                self.advance(self.bytes.len());
                self.push(Kind::Eof, self.pos, self.pos, self.line);
                return Ok(self.tokens);
            };
            self.advance(at);
            let delim_line = self.line;
            // `{{`, or `{{- ` whose space may be a line break.
            if left_trim && self.bytes[at + 3] == b'\n' {
                self.line += 1;
            }
            let after = at + if left_trim { 4 } else { 2 };
            self.pos = after;
            // A comment: `/* ... */` right after the delimiter (and its trim marker).
            if self.bytes[self.pos..].starts_with(b"/*") {
                let Some(close) = memchr::memmem::find(&self.bytes[self.pos + 2..], b"*/") else {
                    return Err(self.err("unclosed comment"));
                };
                self.advance(self.pos + 2 + close + 2);
                let rest = &self.bytes[self.pos..];
                if rest.starts_with(RIGHT) {
                    self.advance(self.pos + 2);
                    trim_next_text = false;
                } else if rest.len() >= 4 && is_space(rest[0]) && rest[1..].starts_with(b"-}}") {
                    self.advance(self.pos + 4);
                    trim_next_text = true;
                } else {
                    return Err(self.err("comment ends before closing delimiter"));
                }
                continue;
            }
            self.push(Kind::LeftDelim, at, after, delim_line);
            trim_next_text = self.action()?;
        }
    }

    /// Lexes one action's inside, up to and including `}}`; says whether it ended with a right
    /// trim marker.
    fn action(&mut self) -> Result<bool> {
        self.paren_depth = 0;
        loop {
            let rest = &self.bytes[self.pos..];
            if rest.is_empty() {
                return Err(self.err("unclosed action"));
            }
            // ` -}}`: right trim (the space is part of the marker).
            if rest.len() >= 4 && is_space(rest[0]) && rest[1..].starts_with(b"-}}") {
                if self.paren_depth > 0 {
                    return Err(self.err("unclosed left paren"));
                }
                let start = self.pos;
                self.advance(self.pos + 4);
                self.push(Kind::RightDelim, start, self.pos, self.line);
                return Ok(true);
            }
            if rest.starts_with(RIGHT) {
                if self.paren_depth > 0 {
                    return Err(self.err("unclosed left paren"));
                }
                let start = self.pos;
                self.pos += 2;
                self.push(Kind::RightDelim, start, self.pos, self.line);
                return Ok(false);
            }
            let start = self.pos;
            let line = self.line;
            // ASCII as it is; other characters decoded (only names may hold them).
            let c = match rest[0] {
                b if b < 0x80 => b as char,
                _ => self.src[self.pos..].chars().next().expect("not at the end"),
            };
            match c {
                ' ' | '\t' | '\r' | '\n' => {
                    // Line breaks counted on the way (no second pass over the spaces).
                    let (mut end, mut breaks) = (self.pos, 0);
                    while end < self.bytes.len() && is_space(self.bytes[end]) {
                        breaks += usize::from(self.bytes[end] == b'\n');
                        end += 1;
                    }
                    // The last space of ` -}}` belongs to the trim marker (Go's lexSpace).
                    if self.bytes[end..].starts_with(b"-}}") {
                        end -= 1;
                        breaks -= usize::from(self.bytes[end] == b'\n');
                        if end == self.pos {
                            continue;
                        }
                    }
                    self.line += breaks;
                    self.pos = end;
                    self.push(Kind::Space, start, end, line);
                }
                '=' => {
                    self.pos += 1;
                    self.push(Kind::Assign, start, self.pos, line);
                }
                ':' => {
                    if self.bytes.get(self.pos + 1) != Some(&b'=') {
                        return Err(self.err("expected :="));
                    }
                    self.pos += 2;
                    self.push(Kind::Declare, start, self.pos, line);
                }
                '|' => {
                    self.pos += 1;
                    self.push(Kind::Pipe, start, self.pos, line);
                }
                ',' => {
                    self.pos += 1;
                    self.push(Kind::Comma, start, self.pos, line);
                }
                '(' => {
                    self.pos += 1;
                    self.paren_depth += 1;
                    self.push(Kind::LeftParen, start, self.pos, line);
                }
                ')' => {
                    if self.paren_depth == 0 {
                        return Err(self.err("unexpected right paren"));
                    }
                    self.paren_depth -= 1;
                    self.pos += 1;
                    self.push(Kind::RightParen, start, self.pos, line);
                }
                '"' => {
                    let end = self.quoted(b'"')?;
                    self.push(Kind::String, start, end, line);
                }
                '\'' => {
                    let end = self.quoted(b'\'')?;
                    self.push(Kind::Char, start, end, line);
                }
                '`' => {
                    let Some(close) = memchr::memchr(b'`', &self.bytes[self.pos + 1..]) else {
                        return Err(self.err("unterminated raw quoted string"));
                    };
                    let end = self.pos + 1 + close + 1;
                    self.advance(end);
                    self.push(Kind::RawString, start, end, line);
                }
                '$' => {
                    let end = self.word_end(self.pos + 1);
                    self.pos = end;
                    self.push(Kind::Variable, start, end, line);
                }
                '.' => {
                    // A number like `.5`, a field `.Name`, or dot.
                    if self.bytes.get(self.pos + 1).is_some_and(u8::is_ascii_digit) {
                        let end = self.number_end(self.pos);
                        self.pos = end;
                        self.push(Kind::Number, start, end, line);
                    } else {
                        let end = self.word_end(self.pos + 1);
                        self.pos = end;
                        let kind = if end == start + 1 {
                            Kind::Dot
                        } else {
                            Kind::Field
                        };
                        self.push(kind, start, end, line);
                    }
                }
                '+' | '-' | '0'..='9' => {
                    let end = self.number_end(self.pos);
                    if end == self.pos {
                        // Go's `scanNumber` takes a lone sign as a number the parser then
                        // refuses, and a sign before a letter as bad syntax, letter included.
                        let next = self.src[self.pos + 1..].chars().next();
                        return Err(self.err(match next {
                            Some(n) if n.is_alphanumeric() || n == '_' => {
                                format!("bad number syntax: \"{c}{n}\"")
                            }
                            _ => format!("illegal number syntax: \"{c}\""),
                        }));
                    }
                    self.pos = end;
                    self.push(Kind::Number, start, end, line);
                }
                c if is_alnum(c) => {
                    let end = self.word_end(self.pos);
                    self.pos = end;
                    let kind = match &self.src[start..end] {
                        "true" | "false" => Kind::Bool,
                        "nil" => Kind::Nil,
                        "block" | "break" | "continue" | "define" | "else" | "end" | "if"
                        | "range" | "template" | "with" => Kind::Keyword,
                        _ => Kind::Identifier,
                    };
                    self.push(kind, start, end, line);
                }
                other => {
                    return Err(self.err(format!("unrecognized character in action: {other:?}")));
                }
            }
        }
    }

    /// The end of an alphanumeric word starting at `from`.
    fn word_end(&self, from: usize) -> usize {
        // ASCII first (nearly every name), characters only past it.
        let ascii = self.bytes[from..]
            .iter()
            .position(|b| !WORD_BYTE[*b as usize])
            .map_or(self.bytes.len(), |i| from + i);
        if self.bytes.get(ascii).is_none_or(|b| *b < 0x80) {
            return ascii;
        }
        let mut end = ascii;
        for c in self.src[end..].chars() {
            if is_alnum(c) {
                end += c.len_utf8();
            } else {
                break;
            }
        }
        end
    }

    /// The end of a Go number literal starting at `from` (sign, base prefixes, `_`, fractions,
    /// exponents); `from` when there is none.
    fn number_end(&self, from: usize) -> usize {
        let b = self.bytes;
        let mut i = from;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let digits_start = i;
        let hex = b[i..].starts_with(b"0x") || b[i..].starts_with(b"0X");
        if hex
            || b[i..].starts_with(b"0o")
            || b[i..].starts_with(b"0O")
            || b[i..].starts_with(b"0b")
            || b[i..].starts_with(b"0B")
        {
            i += 2;
        }
        while i < b.len() {
            let c = b[i];
            let ok = c.is_ascii_digit()
                || c == b'_'
                || c == b'.'
                || (hex && c.is_ascii_hexdigit())
                || ((c == b'e' || c == b'E') && !hex)
                || ((c == b'p' || c == b'P') && hex)
                || ((c == b'+' || c == b'-')
                    && i > digits_start
                    && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P'));
            if !ok {
                break;
            }
            i += 1;
        }
        if i == digits_start { from } else { i }
    }

    /// The end of a quoted string or char starting at `self.pos`.
    fn quoted(&mut self, quote: u8) -> Result<usize> {
        let mut i = self.pos + 1;
        while i < self.bytes.len() {
            match self.bytes[i] {
                b'\\' => i += 2,
                b'\n' => {
                    return Err(self.err(if quote == b'"' {
                        "unterminated quoted string"
                    } else {
                        "unterminated character constant"
                    }));
                }
                c if c == quote => {
                    self.pos = i + 1;
                    return Ok(i + 1);
                }
                _ => i += 1,
            }
        }
        Err(self.err(if quote == b'"' {
            "unterminated quoted string"
        } else {
            "unterminated character constant"
        }))
    }
}

/// A parsed text: its top-level list, the templates it `define`s (a `block` is both a
/// definition and a call), and its string literals.
pub(super) struct Parsed<'a> {
    pub list: ListNode<'a>,
    pub defines: Vec<DefineNode<'a>>,
    pub literals: Literals,
}

/// Parses a template, its nodes into `arena`. Function names are resolved by `resolve` as they
/// are read (Go's parser rejects an unknown one).
pub(super) fn parse<'a>(
    src: &str,
    arena: &'a Bump,
    resolve: &dyn Fn(&str) -> Option<Callee>,
) -> Result<Parsed<'a>> {
    parse_nesting_at_most(src, arena, resolve, MAX_NESTING)
}

/// [`parse`], with nesting bounded at `max_nesting` levels (a test's small bound stands for
/// [`MAX_NESTING`], which takes a deep template to reach).
fn parse_nesting_at_most<'a>(
    src: &str,
    arena: &'a Bump,
    resolve: &dyn Fn(&str) -> Option<Callee>,
    max_nesting: usize,
) -> Result<Parsed<'a>> {
    let tokens = Lexer::new(src).run()?;
    let mut p = Parser {
        src,
        arena,
        tokens,
        at: 0,
        defines: Vec::new(),
        literals: Vec::new(),
        vars: vec!["$"],
        range_depth: 0,
        nesting: 0,
        max_nesting,
        paren_depth: 0,
        resolve,
    };
    let mut nodes = BumpVec::with_capacity_in(16, arena);
    loop {
        if p.peek().kind == Kind::Eof {
            break;
        }
        if p.define_follows() {
            p.next();
            p.skip_space();
            p.next();
            p.definition()?;
            continue;
        }
        match p.text_or_action()? {
            Item::Node(n) => nodes.push(n),
            Item::End(t) | Item::Else(t) => {
                return Err(p.error_at(&t, format!("unexpected {}", p.describe_end(&t))));
            }
        }
    }
    Ok(Parsed {
        list: ListNode {
            nodes: nodes.into_bump_slice(),
        },
        defines: p.defines,
        literals: p.literals.into(),
    })
}

/// What reading one item found: a node, or the `{{end}}`/`{{else}}` that closes a list.
enum Item<'a> {
    Node(Node<'a>),
    End(Token),
    Else(Token),
}

struct Parser<'s, 'a, 'f> {
    src: &'s str,
    arena: &'a Bump,
    tokens: Vec<Token>,
    at: usize,
    defines: Vec<DefineNode<'a>>,
    literals: Vec<Rc<str>>,
    /// Variables in scope, innermost last (Go rejects an undefined one at parse time).
    vars: Vec<&'s str>,
    range_depth: usize,
    /// How many `if`/`with`/`range`/`block` bodies enclose the token being read.
    nesting: usize,
    max_nesting: usize,
    /// How many `(` enclose the token being read.
    paren_depth: usize,
    resolve: &'f dyn Fn(&str) -> Option<Callee>,
}

impl<'s, 'a> Parser<'s, 'a, '_> {
    /// Whether the next tokens are `{{ define`.
    fn define_follows(&self) -> bool {
        if self.peek().kind != Kind::LeftDelim {
            return false;
        }
        self.tokens[self.at + 1..]
            .iter()
            .find(|t| t.kind != Kind::Space)
            .is_some_and(|t| t.kind == Kind::Keyword && self.word(t) == "define")
    }

    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)]
    }
    fn next(&mut self) -> Token {
        let t = *self.peek();
        if self.at < self.tokens.len() - 1 {
            self.at += 1;
        }
        t
    }
    fn word(&self, t: &Token) -> &'s str {
        &self.src[t.start as usize..t.end as usize]
    }
    fn skip_space(&mut self) {
        while self.peek().kind == Kind::Space {
            self.next();
        }
    }
    /// The next token that is not a space.
    fn next_non_space(&mut self) -> Token {
        self.skip_space();
        self.next()
    }
    fn peek_non_space(&mut self) -> Token {
        self.skip_space();
        *self.peek()
    }
    fn error_at(&self, t: &Token, message: String) -> ParseError {
        ParseError {
            line: t.line as usize,
            message,
        }
    }
    fn describe_end(&self, t: &Token) -> String {
        format!("{{{{{}}}}}", self.word(t))
    }
    fn unexpected(&self, t: &Token, context: &str) -> ParseError {
        let what = match t.kind {
            Kind::Eof => "EOF".to_string(),
            Kind::RightDelim => "\"}}\"".to_string(),
            _ => format!("{:?}", self.word(t)),
        };
        self.error_at(t, format!("unexpected {what} in {context}"))
    }

    /// Text, or one action after its `{{`.
    fn text_or_action(&mut self) -> Result<Item<'a>> {
        let t = self.next();
        match t.kind {
            Kind::Text => Ok(Item::Node(Node::Text(t.span()))),
            Kind::LeftDelim => self.action(),
            _ => Err(self.unexpected(&t, "input")),
        }
    }

    /// Nodes up to `{{end}}` or `{{else}}`, which is returned.
    fn item_list(&mut self, context: &str) -> Result<(ListNode<'a>, Item<'a>)> {
        let mut nodes = BumpVec::with_capacity_in(8, self.arena);
        loop {
            if self.peek().kind == Kind::Eof {
                let t = *self.peek();
                return Err(self.error_at(&t, format!("unexpected EOF in {context}")));
            }
            if self.define_follows() {
                let t = *self.peek();
                return Err(self.error_at(&t, "unexpected <define> in command".into()));
            }
            match self.text_or_action()? {
                Item::Node(n) => nodes.push(n),
                end => {
                    let list = ListNode {
                        nodes: nodes.into_bump_slice(),
                    };
                    return Ok((list, end));
                }
            }
        }
    }

    fn action(&mut self) -> Result<Item<'a>> {
        let t = self.peek_non_space();
        if t.kind == Kind::Keyword {
            let word = self.word(&t).to_string();
            self.next();
            return match word.as_str() {
                "end" => {
                    self.expect_right_delim("end")?;
                    Ok(Item::End(t))
                }
                "else" => Ok(Item::Else(t)),
                "if" => self
                    .control(&t, "if")
                    .map(|b| Item::Node(Node::If(self.arena.alloc(b)))),
                "with" => self
                    .control(&t, "with")
                    .map(|b| Item::Node(Node::With(self.arena.alloc(b)))),
                "range" => {
                    self.range_depth += 1;
                    let b = self.control(&t, "range");
                    self.range_depth -= 1;
                    b.map(|b| Item::Node(Node::Range(self.arena.alloc(b))))
                }
                "template" => self
                    .template()
                    .map(|n| Item::Node(Node::Template(self.arena.alloc(n)))),
                "block" => self.block(&t).map(Item::Node),
                "break" | "continue" => {
                    if self.range_depth == 0 {
                        return Err(
                            self.error_at(&t, format!("{{{{{word}}}}} outside {{{{range}}}}"))
                        );
                    }
                    self.expect_right_delim(&word)?;
                    Ok(Item::Node(if word == "break" {
                        Node::Break
                    } else {
                        Node::Continue
                    }))
                }
                "define" => Err(self.error_at(&t, "unexpected <define> in command".into())),
                _ => Err(self.unexpected(&t, "command")),
            };
        }
        let pipe = self.pipeline("command", Kind::RightDelim)?;
        Ok(Item::Node(Node::Action(t.pos(), pipe)))
    }

    fn expect_right_delim(&mut self, context: &str) -> Result<()> {
        let t = self.next_non_space();
        if t.kind != Kind::RightDelim {
            return Err(self.unexpected(&t, context));
        }
        Ok(())
    }

    /// `if`/`with`/`range`: the pipeline, the body, and an `else` (which may chain another
    /// `if`/`with`, Go's `else if`).
    fn control(&mut self, keyword: &Token, context: &str) -> Result<BranchNode<'a>> {
        self.nested(keyword, |p| p.control_body(keyword, context))
    }

    /// Reads what `f` reads one nesting level deeper: refused past [`MAX_NESTING`] levels, and
    /// on a fresh stack segment when the thread's runs low.
    fn nested<T>(&mut self, at: &Token, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.nesting >= self.max_nesting {
            return Err(self.error_at(
                at,
                format!(
                    "control structures nested deeper than {} levels",
                    self.max_nesting
                ),
            ));
        }
        self.nesting += 1;
        let result = super::with_stack(|| f(self));
        self.nesting -= 1;
        result
    }

    fn control_body(&mut self, keyword: &Token, context: &str) -> Result<BranchNode<'a>> {
        let mark = self.vars.len();
        let pipe = self.pipeline(context, Kind::RightDelim)?;
        let (body, end) = self.item_list(context)?;
        let else_body = match end {
            Item::End(_) => None,
            Item::Else(_) => {
                let next = self.peek_non_space();
                if next.kind == Kind::Keyword
                    && context != "range"
                    && (self.word(&next) == "if" || self.word(&next) == "with")
                {
                    // `{{else if …}}`: an `if` inside the else branch that ends with this one.
                    let word = self.word(&next).to_string();
                    self.next();
                    let inner = self.control(&next, &word)?;
                    let node = if word == "if" {
                        Node::If(self.arena.alloc(inner))
                    } else {
                        Node::With(self.arena.alloc(inner))
                    };
                    Some(ListNode {
                        nodes: self.arena.alloc_slice_fill_iter([node]),
                    })
                } else {
                    self.expect_right_delim("else")?;
                    let (list, end) = self.item_list(context)?;
                    match end {
                        Item::End(_) => Some(list),
                        Item::Else(t) => {
                            return Err(self.error_at(&t, "expected end; found {{else}}".into()));
                        }
                        Item::Node(_) => unreachable!("item_list returns an end"),
                    }
                }
            }
            Item::Node(_) => unreachable!("item_list returns an end"),
        };
        self.vars.truncate(mark);
        Ok(BranchNode {
            pos: keyword.pos(),
            pipe,
            body,
            else_body,
        })
    }

    /// `{{template "name" [pipeline]}}`.
    fn template(&mut self) -> Result<TemplateNode<'a>> {
        let name_token = self.next_non_space();
        let name = self.string_value(&name_token, "template clause")?;
        let pipe = if self.peek_non_space().kind == Kind::RightDelim {
            self.next();
            None
        } else {
            Some(self.pipeline("template clause", Kind::RightDelim)?)
        };
        // Go places the node at its name.
        Ok(TemplateNode {
            pos: name_token.pos(),
            name: self.arena.alloc_str(&name),
            pipe,
        })
    }

    /// `{{block "name" pipeline}}…{{end}}`: defines `name` and calls it.
    fn block(&mut self, keyword: &Token) -> Result<Node<'a>> {
        let name_token = self.next_non_space();
        let name = self.string_value(&name_token, "block clause")?;
        let pipe = self.pipeline("block clause", Kind::RightDelim)?;
        let saved = std::mem::replace(&mut self.vars, vec!["$"]);
        let (body, end) = self.nested(keyword, |p| p.item_list("block clause"))?;
        self.vars = saved;
        if let Item::Else(t) = end {
            return Err(self.error_at(&t, "unexpected {{else}}".into()));
        }
        let call = TemplateNode {
            pos: name_token.pos(),
            name: self.arena.alloc_str(&name),
            pipe: Some(pipe),
        };
        self.defines.push(DefineNode { name, body });
        Ok(Node::Template(self.arena.alloc(call)))
    }

    /// `{{define "name"}}…{{end}}` (the keyword already read).
    fn definition(&mut self) -> Result<()> {
        let name_token = self.next_non_space();
        let name = self.string_value(&name_token, "define clause")?;
        self.expect_right_delim("define clause")?;
        let saved_vars = std::mem::replace(&mut self.vars, vec!["$"]);
        let saved_range = std::mem::replace(&mut self.range_depth, 0);
        let (body, end) = self.item_list("define clause")?;
        self.vars = saved_vars;
        self.range_depth = saved_range;
        if let Item::Else(t) = end {
            return Err(self.error_at(&t, "unexpected {{else}}".into()));
        }
        self.defines.push(DefineNode { name, body });
        Ok(())
    }

    fn string_value(&self, t: &Token, context: &str) -> Result<String> {
        match t.kind {
            Kind::String => unquote(self.word(t))
                .ok_or_else(|| self.error_at(t, format!("invalid syntax: {}", self.word(t)))),
            Kind::RawString => {
                let w = self.word(t);
                Ok(w[1..w.len() - 1].to_string())
            }
            _ => Err(self.unexpected(t, context)),
        }
    }

    /// A pipeline up to `end`: optional declarations, then commands joined by `|`.
    fn pipeline(&mut self, context: &str, end: Kind) -> Result<PipeNode<'a>> {
        let first = self.peek_non_space();
        let mut decl = BumpVec::new_in(self.arena);
        let mut is_assign = false;
        // `$x :=`, `$x =`, `$i, $v :=` (range only).
        if first.kind == Kind::Variable {
            let save = self.at;
            self.next();
            let after = self.peek_non_space();
            match after.kind {
                Kind::Declare | Kind::Assign => {
                    self.next();
                    is_assign = after.kind == Kind::Assign;
                    decl.push(first.span());
                    // In scope at once, as in Go (`$x := $x` reads the new one).
                    self.vars.push(self.word(&first));
                }
                Kind::Comma if context == "range" => {
                    self.next();
                    let before_second = self.at;
                    let second = self.next_non_space();
                    let op = self.peek_non_space();
                    match second.kind {
                        Kind::Variable if matches!(op.kind, Kind::Declare | Kind::Assign) => {
                            self.next_non_space();
                            is_assign = op.kind == Kind::Assign;
                            decl.push(first.span());
                            decl.push(second.span());
                            self.vars.push(self.word(&first));
                            self.vars.push(self.word(&second));
                        }
                        // Go's parser goes back to its declarations (`goto decls`): the first
                        // variable is declared, and what follows is the pipeline
                        // (`range $k, $v` ranges over `$v`, which must be defined).
                        Kind::Variable | Kind::RightDelim | Kind::RightParen => {
                            self.at = before_second;
                            decl.push(first.span());
                            self.vars.push(self.word(&first));
                        }
                        _ => {
                            return Err(self
                                .error_at(&second, "range can only initialize variables".into()));
                        }
                    }
                }
                Kind::Comma => {
                    return Err(
                        self.error_at(&after, format!("too many declarations in {context}"))
                    );
                }
                _ => self.at = save,
            }
        }
        let mut commands = BumpVec::with_capacity_in(1, self.arena);
        loop {
            let t = self.peek_non_space();
            if t.kind == end {
                self.next();
                if commands.is_empty() {
                    return Err(self.error_at(&t, format!("missing value for {context}")));
                }
                // Go's `checkPipeline`: after the first stage, a command must be executable.
                let literal = commands.iter().skip(1).position(|c: &CommandNode| {
                    matches!(
                        c.args.first(),
                        Some(
                            Expr::Bool(..)
                                | Expr::Dot(..)
                                | Expr::Nil(..)
                                | Expr::Number(..)
                                | Expr::String(..)
                        )
                    )
                });
                if let Some(i) = literal {
                    return Err(self.error_at(
                        &t,
                        format!("non executable command in pipeline stage {}", i + 2),
                    ));
                }
                break;
            }
            if t.kind == Kind::Eof {
                return Err(self.error_at(&t, format!("unexpected EOF in {context}")));
            }
            // Go's `pipeline` starts a command only at an operand.
            if !matches!(
                t.kind,
                Kind::Bool
                    | Kind::Char
                    | Kind::Dot
                    | Kind::Field
                    | Kind::Identifier
                    | Kind::Number
                    | Kind::Nil
                    | Kind::RawString
                    | Kind::String
                    | Kind::Variable
                    | Kind::LeftParen
                    | Kind::Keyword
            ) {
                return Err(self.unexpected(&t, context));
            }
            commands.push(self.command(context)?);
            let after = self.peek_non_space();
            if after.kind == Kind::Pipe {
                // A `|` right before the end (`{{ x | nindent 4 | }}`) ends the pipeline: Go's
                // `command` takes the pipe as its end and `pipeline` then meets the delimiter.
                self.next();
            } else if after.kind != end {
                return Err(self.unexpected(&after, context));
            }
        }
        Ok(PipeNode {
            decl: decl.into_bump_slice(),
            commands: commands.into_bump_slice(),
            is_assign,
        })
    }

    /// One command: operands separated by spaces.
    fn command(&mut self, context: &str) -> Result<CommandNode<'a>> {
        let first = self.peek_non_space();
        let mut args = BumpVec::with_capacity_in(2, self.arena);
        loop {
            let t = *self.peek();
            match t.kind {
                Kind::Space => {
                    self.next();
                    continue;
                }
                Kind::RightDelim | Kind::RightParen | Kind::Pipe => break,
                Kind::Eof => return Err(self.error_at(&t, format!("unexpected EOF in {context}"))),
                _ => {}
            }
            let operand = self.operand()?;
            args.push(operand);
            // Operands must be separated by space.
            match self.peek().kind {
                Kind::Space | Kind::RightDelim | Kind::RightParen | Kind::Pipe => {}
                _ => {
                    let t = *self.peek();
                    return Err(self.unexpected(&t, "operand"));
                }
            }
        }
        if args.is_empty() {
            return Err(self.error_at(&first, "empty command".into()));
        }
        Ok(CommandNode {
            args: args.into_bump_slice(),
        })
    }

    /// A term and the field chain after it (`(…).a.b`, `$x.a`, `.a.b`).
    fn operand(&mut self) -> Result<Expr<'a>> {
        // A field chain `.a.b.c` is read whole, its names in one exact allocation.
        if self.peek().kind == Kind::Field {
            let first = self.next();
            let more = self.fields_ahead();
            let mut names = BumpVec::with_capacity_in(1 + more, self.arena);
            names.push(first.span_after_first());
            // Go places a chain at its second part.
            let pos = if more > 0 {
                self.peek().pos()
            } else {
                first.pos()
            };
            self.read_fields(&mut names);
            return Ok(Expr::Field(pos, names.into_bump_slice()));
        }
        let term = self.term()?;
        let more = self.fields_ahead();
        if more == 0 {
            return Ok(term);
        }
        // Go places a chain at the token after the term.
        let chain_token = *self.peek();
        let chain_pos = chain_token.pos();
        let mut fields = BumpVec::with_capacity_in(more, self.arena);
        self.read_fields(&mut fields);
        Ok(match term {
            Expr::Variable(_, name, _) => Expr::Variable(chain_pos, name, fields.into_bump_slice()),
            Expr::Bool(..)
            | Expr::String(..)
            | Expr::Number(..)
            | Expr::Nil(..)
            | Expr::Dot(..) => {
                return Err(self.error_at(
                    &chain_token,
                    format!("unexpected . after term {:?}", self.word(&chain_token)),
                ));
            }
            other => Expr::Chain(chain_pos, self.arena.alloc(other), fields.into_bump_slice()),
        })
    }

    /// Keeps a string literal; its place in [`Parsed::literals`].
    fn literal(&mut self, text: Rc<str>) -> u32 {
        self.literals.push(text);
        (self.literals.len() - 1) as u32
    }

    /// How many field tokens follow.
    fn fields_ahead(&self) -> usize {
        self.tokens[self.at..]
            .iter()
            .take_while(|t| t.kind == Kind::Field)
            .count()
    }

    /// Reads the field tokens that follow, their names without the dot.
    fn read_fields(&mut self, names: &mut BumpVec<'a, Span>) {
        while self.peek().kind == Kind::Field {
            let f = self.next();
            names.push(f.span_after_first());
        }
    }

    fn term(&mut self) -> Result<Expr<'a>> {
        let t = self.next();
        let pos = t.pos();
        let word = self.word(&t);
        Ok(match t.kind {
            Kind::Identifier => {
                let Some(callee) = (self.resolve)(word) else {
                    return Err(self.error_at(&t, format!("function {word:?} not defined")));
                };
                Expr::Function(pos, t.span(), callee)
            }
            Kind::Dot => Expr::Dot(pos),
            Kind::Nil => Expr::Nil(pos),
            Kind::Variable => {
                if !self.vars.contains(&word) {
                    return Err(self.error_at(&t, format!("undefined variable {word:?}")));
                }
                Expr::Variable(pos, t.span(), &[])
            }
            // (A field is an operand's: `operand` reads field chains before terms.)
            Kind::Bool => Expr::Bool(pos, word == "true"),
            Kind::Number => Expr::Number(
                pos,
                parse_number(word)
                    .ok_or_else(|| self.error_at(&t, format!("illegal number syntax: {word:?}")))?,
            ),
            Kind::Char => {
                let inner = &word[1..word.len() - 1];
                let c = unquote(&format!("\"{inner}\""))
                    .and_then(|s| {
                        let mut chars = s.chars();
                        let c = chars.next()?;
                        chars.next().is_none().then_some(c)
                    })
                    .ok_or_else(|| {
                        self.error_at(&t, format!("malformed character constant: {word}"))
                    })?;
                Expr::Number(pos, Number::Int(c as i64))
            }
            Kind::String => {
                let text = unquote(word)
                    .ok_or_else(|| self.error_at(&t, format!("invalid syntax: {word}")))?;
                Expr::String(pos, self.literal(Rc::from(text)))
            }
            Kind::RawString => Expr::String(pos, self.literal(Rc::from(&word[1..word.len() - 1]))),
            Kind::LeftParen => {
                if self.paren_depth >= MAX_PAREN_DEPTH {
                    return Err(self.error_at(&t, "max expression depth exceeded".into()));
                }
                self.paren_depth += 1;
                let pipe =
                    super::with_stack(|| self.pipeline("parenthesized pipeline", Kind::RightParen));
                self.paren_depth -= 1;
                Expr::Pipe(pos, self.arena.alloc(pipe?))
            }
            _ => return Err(self.unexpected(&t, "operand")),
        })
    }
}

/// Go's number literal syntax: ints (with base prefixes and `_`), floats; an integer too big for
/// `int64` but fitting `uint64` stays unsigned.
fn parse_number(text: &str) -> Option<Number> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let (neg, body) = match clean.as_bytes().first() {
        Some(b'-') => (true, &clean[1..]),
        Some(b'+') => (false, &clean[1..]),
        _ => (false, clean.as_str()),
    };
    let lower = body.to_ascii_lowercase();
    let int = if let Some(h) = lower.strip_prefix("0x") {
        if h.contains('p') || h.contains('.') {
            None
        } else {
            u64::from_str_radix(h, 16).ok()
        }
    } else if let Some(o) = lower.strip_prefix("0o") {
        u64::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        u64::from_str_radix(b, 2).ok()
    } else if body.len() > 1 && body.starts_with('0') && body.bytes().all(|b| b.is_ascii_digit()) {
        u64::from_str_radix(&body[1..], 8).ok()
    } else if body.bytes().all(|b| b.is_ascii_digit()) {
        body.parse::<u64>().ok()
    } else {
        None
    };
    if let Some(u) = int {
        return Some(if neg {
            if u > i64::MAX as u64 + 1 {
                return None;
            }
            Number::Int((u as i128).wrapping_neg() as i64)
        } else if u > i64::MAX as u64 {
            Number::Uint(u)
        } else {
            Number::Int(u as i64)
        });
    }
    let f: f64 = match lower.strip_prefix("0x") {
        Some(hex) => hex_float(hex)?,
        None => body.parse().ok()?,
    };
    // A float literal with an integral value is still a float (`1.0`), as in Go's constants
    // used as `interface{}` (they default to float64).
    Some(Number::Float(if neg { -f } else { f }))
}

/// A hexadecimal float's value (`1p60`, `1.8p1`, `.8p-2` after the `0x`): Go's syntax, which
/// Rust's `f64::from_str` does not read. The binary exponent is required, as in Go.
fn hex_float(hex: &str) -> Option<f64> {
    let (mantissa, exp) = hex.split_once('p')?;
    let exp: i32 = exp.parse().ok()?;
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let mut value = 0f64;
    for d in int.chars() {
        value = value * 16.0 + f64::from(d.to_digit(16)?);
    }
    let mut scale = 1.0 / 16.0;
    for d in frac.chars() {
        value += f64::from(d.to_digit(16)?) * scale;
        scale /= 16.0;
    }
    Some(value * 2f64.powi(exp))
}

/// Go's `strconv.Unquote` for a double-quoted string.
fn unquote(quoted: &str) -> Option<String> {
    let inner = quoted.strip_prefix('"')?.strip_suffix('"')?;
    if !inner.contains('\\') {
        return Some(inner.to_string());
    }
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next()? {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '\\' => out.push('\\'),
            '"' => out.push('"'),
            '\'' => out.push('\''),
            'x' => {
                let h: String = chars.by_ref().take(2).collect();
                out.push(char::from(u8::from_str_radix(&h, 16).ok()?));
            }
            'u' => {
                let h: String = chars.by_ref().take(4).collect();
                out.push(char::from_u32(u32::from_str_radix(&h, 16).ok()?)?);
            }
            'U' => {
                let h: String = chars.by_ref().take(8).collect();
                out.push(char::from_u32(u32::from_str_radix(&h, 16).ok()?)?);
            }
            d @ '0'..='7' => {
                let rest: String = chars.by_ref().take(2).collect();
                let v = u32::from_str_radix(&format!("{d}{rest}"), 8).ok()?;
                out.push(char::from_u32(v)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    use gotmpl::parse as go;

    /// The tree with every position left out (positions are Go's here, gotmpl's there).
    fn shape(list: &go::ListNode, defines: &[go::DefineNode]) -> String {
        let text = format!("{list:?} {defines:?}");
        let pos = regex::Regex::new(r"Pos \{ offset: \d+, line: \d+ \}").unwrap();
        pos.replace_all(&text, "Pos").into_owned()
    }

    /// Our tree in gotmpl's types, its names and texts read from `src` (positions left out:
    /// `shape` drops them).
    /// The source and its literals.
    struct ToGotmpl<'a>(&'a str, &'a [Rc<str>]);

    impl ToGotmpl<'_> {
        fn names(&self, spans: &[Span]) -> Vec<go::SmolStr> {
            spans.iter().map(|s| s.of(self.0).into()).collect()
        }
        fn list(&self, l: &ListNode) -> go::ListNode {
            go::ListNode {
                pos: go::Pos::new(0, 0),
                nodes: l.nodes.iter().map(|n| self.node(n)).collect(),
            }
        }
        fn node(&self, n: &Node) -> go::Node {
            let p = go::Pos::new(0, 0);
            match n {
                Node::Text(t) => go::Node::Text(go::TextNode {
                    pos: p,
                    text: t.of(self.0).into(),
                }),
                Node::Action(_, pipe) => go::Node::Action(go::ActionNode {
                    pos: p,
                    pipe: self.pipe(pipe),
                }),
                Node::If(b) => go::Node::If(self.branch(b)),
                Node::Range(b) => go::Node::Range(self.branch(b)),
                Node::With(b) => go::Node::With(self.branch(b)),
                Node::Template(t) => go::Node::Template(go::TemplateNode {
                    pos: p,
                    name: (*t.name).into(),
                    pipe: t.pipe.as_ref().map(|pipe| self.pipe(pipe)),
                }),
                Node::Break => go::Node::Break(p),
                Node::Continue => go::Node::Continue(p),
            }
        }
        fn branch(&self, b: &BranchNode) -> go::BranchNode {
            go::BranchNode {
                pos: go::Pos::new(0, 0),
                pipe: self.pipe(&b.pipe),
                body: self.list(&b.body),
                else_body: b.else_body.as_ref().map(|l| self.list(l)),
            }
        }
        fn pipe(&self, pipe: &PipeNode) -> go::PipeNode {
            go::PipeNode {
                pos: go::Pos::new(0, 0),
                decl: self.names(pipe.decl),
                commands: pipe
                    .commands
                    .iter()
                    .map(|c| go::CommandNode {
                        pos: go::Pos::new(0, 0),
                        args: c.args.iter().map(|e| self.expr(e)).collect(),
                    })
                    .collect(),
                is_assign: pipe.is_assign,
            }
        }
        fn expr(&self, e: &Expr) -> go::Expr {
            let p = go::Pos::new(0, 0);
            match e {
                Expr::Dot(_) => go::Expr::Dot(p),
                Expr::Field(_, names) => go::Expr::Field(p, self.names(names)),
                Expr::Variable(_, name, names) => {
                    go::Expr::Variable(p, name.of(self.0).into(), self.names(names))
                }
                Expr::Function(_, name, _) => go::Expr::Identifier(p, name.of(self.0).into()),
                Expr::String(_, i) => go::Expr::String(p, (*self.1[*i as usize]).into()),
                Expr::Number(_, n) => go::Expr::Number(
                    p,
                    match *n {
                        Number::Int(i) => go::Number::Int(i),
                        Number::Uint(u) => go::Number::Uint(u),
                        Number::Float(f) => go::Number::Float(f),
                    },
                ),
                Expr::Bool(_, b) => go::Expr::Bool(p, *b),
                Expr::Nil(_) => go::Expr::Nil(p),
                Expr::Pipe(_, pipe) => go::Expr::Pipe(p, self.pipe(pipe)),
                Expr::Chain(_, inner, names) => {
                    go::Expr::Chain(p, Box::new(self.expr(inner)), self.names(names))
                }
            }
        }
    }

    fn resolve(name: &str) -> Option<Callee> {
        match name {
            "and" => Some(Callee::And),
            "or" => Some(Callee::Or),
            _ => crate::template::funcs::lookup(name).map(Callee::Func),
        }
    }

    fn ours(src: &str) -> Result<()> {
        parse(src, &Bump::new(), &resolve).map(|_| ())
    }

    /// Every template of the test charts, plus syntax corners, parses to the same tree as
    /// gotmpl's parser (the crate's own, kept as the reference). Where gotmpl is stricter
    /// than Go (`go-syntax`: a trailing `|`, hexadecimal floats) or more lenient
    /// (`err-pipeline-literal`: Go's `checkPipeline`), real Helm is the oracle:
    /// `tests/chart_render.rs` renders that chart with it.
    #[test]
    fn trees_match_gotmpls_parser() {
        let mut sources: Vec<String> = walkdir::WalkDir::new(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/charts"),
        )
        .into_iter()
        .filter_map(|e| e.ok())
        .filter(|e| e.path().components().any(|c| c.as_os_str() == "templates"))
        .filter(|e| {
            !e.path()
                .components()
                .any(|c| c.as_os_str() == "go-syntax" || c.as_os_str() == "err-pipeline-literal")
        })
        .filter(|e| e.file_type().is_file())
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
        assert!(sources.len() > 50, "{}", sources.len());
        for corner in [
            "{{- /* c */ -}}  x {{ 1 -}} \n y {{- 2 }}",
            "{{ $x := 1 }}{{ $x = 2 }}{{ range $i, $v := .l }}{{ $i }}{{ end }}",
            "{{ if .a }}a{{ else if .b }}b{{ else with .c }}c{{ else }}d{{ end }}",
            "{{ (dict \"a\" 1).a }} {{ $.x.y }} {{ .a.b.c | quote | upper }}",
            "{{ 0x1F }} {{ -3 }} {{ 1.5e3 }} {{ 'a' }} {{ `raw\nline` }} {{ \"esc\\t\\\"\" }}",
            "{{ range . }}{{ if . }}{{ break }}{{ end }}{{ continue }}{{ end }}",
            "{{ block \"b\" . }}x{{ end }}{{ template \"b\" }}{{ define \"d\" }}y{{ end }}",
            "{{ with $x := .a }}{{ $x }}{{ end }}{{ print\n  1\n  2 }}",
        ] {
            sources.push(corner.to_string());
        }
        for src in &sources {
            let Ok(theirs) =
                gotmpl::parse::Parser::with_name(None, src, "{{", "}}").and_then(|p| p.parse())
            else {
                assert!(
                    ours(src).is_err(),
                    "gotmpl rejects, winguard accepts:\n{src}"
                );
                continue;
            };
            // gotmpl leaves unknown functions to execution: any name is one here.
            let any = |name: &str| resolve(name).or(Some(Callee::And));
            let arena = Bump::new();
            let Parsed {
                list,
                defines,
                literals,
            } = parse(src, &arena, &any).unwrap_or_else(|e| panic!("{e:?}\n{src}"));
            let to = ToGotmpl(src, &literals);
            let defines: Vec<go::DefineNode> = defines
                .iter()
                .map(|d| go::DefineNode {
                    pos: go::Pos::new(0, 0),
                    name: d.name.as_str().into(),
                    body: to.list(&d.body),
                })
                .collect();
            assert_eq!(
                shape(&to.list(&list), &defines),
                shape(&theirs.0, &theirs.1),
                "\n{src}"
            );
        }
    }

    /// Nesting past the bound is an error at the keyword that goes one level too deep, counted
    /// alike for every kind of body and for the arms of an `else if` chain (which nest).
    #[test]
    fn nesting_past_the_bound_is_a_located_error() {
        let nested = |open: &dyn Fn(usize) -> String, n: usize| {
            let opens: String = (0..n).map(open).collect();
            format!("{opens}x{}", "\n{{end}}".repeat(n))
        };
        let chain = |n: usize| {
            format!(
                "{{{{if 0}}}}{}\n{{{{end}}}}",
                "\n{{else if 0}}".repeat(n - 1)
            )
        };
        let parse_at_most = |src: &str| {
            let arena = Bump::new();
            parse_nesting_at_most(src, &arena, &resolve, 3).map(drop)
        };
        let opens: [&dyn Fn(usize) -> String; 4] = [
            &|_| "{{if 1}}\n".into(),
            &|_| "{{with 1}}\n".into(),
            &|_| "{{range list 1}}\n".into(),
            &|i| format!("{{{{block \"b{i}\" .}}}}\n"),
        ];
        for open in opens {
            let src = nested(open, 3);
            assert_eq!(parse_at_most(&src), Ok(()), "{src}");
            let src = nested(open, 4);
            let err = parse_at_most(&src).unwrap_err();
            assert_eq!(
                (err.line, err.message.as_str()),
                (4, "control structures nested deeper than 3 levels"),
                "{src}"
            );
        }
        assert_eq!(parse_at_most(&chain(3)), Ok(()));
        assert_eq!(parse_at_most(&chain(4)).unwrap_err().line, 4);
        // The real bound is far above what Helm renders (hundreds of thousands of levels);
        // parentheses have Go's own bound and message.
        let parens = |n: usize| format!("{{{{{}1{}}}}}", "(".repeat(n), ")".repeat(n));
        assert_eq!(ours(&parens(MAX_PAREN_DEPTH)), Ok(()));
        assert_eq!(
            ours(&parens(MAX_PAREN_DEPTH + 1)).unwrap_err().message,
            "max expression depth exceeded"
        );
    }

    #[test]
    fn errors_go_reports_at_parse_time() {
        for (src, line, message) in [
            ("a\n{{ $nope }}", 2, "undefined variable \"$nope\""),
            ("{{ nosuch 1 }}", 1, "function \"nosuch\" not defined"),
            ("{{ break }}", 1, "{{break}} outside {{range}}"),
            ("{{ if .a }}\nx", 2, "unexpected EOF in if"),
            ("{{ end }}", 1, "unexpected {{end}}"),
            ("{{ .a", 1, "unclosed action"),
            ("{{ \"open }}", 1, "unterminated quoted string"),
            // Lines counted through trim markers and spaces that hold line breaks.
            (
                "a\n{{-\n\n .a\n -}}\nb\n{{ $nope }}",
                7,
                "undefined variable \"$nope\"",
            ),
            ("{{ .a\n-}}\n{{ $nope }}", 3, "undefined variable \"$nope\""),
            (
                "{{ .a \n\t\n }}{{ $nope }}",
                3,
                "undefined variable \"$nope\"",
            ),
            ("{{ .a\n\n-}}{{ $nope }}", 3, "undefined variable \"$nope\""),
        ] {
            let e = ours(src).unwrap_err();
            assert_eq!((e.line, e.message.as_str()), (line, message), "{src}");
        }
    }
}
