//! The rule expression language: a small, CEL-like language over JSON values.
//!
//! Rules are data, and their conditions need more than JSONPath can say (set differences, Kubernetes
//! taint matching, Windows build compatibility), so conditions are expressions compiled once when a
//! rule file loads. CEL itself would fit, but the Rust CEL interpreters convert every input into
//! their own value type, which costs more than the whole lint; this evaluator works on borrowed
//! [`crate::value::Value`]s. It is deliberately small:
//!
//! - literals: `'str'`, `"str"`, numbers, `true`, `false`, `null`, lists `[a, b]`
//! - variables bound by the engine (`pod`, `container`, `spec`, `config`, …) and by macros
//! - `a.b`, `a['key']`, `a[0]` — a missing field or index is `null`, never an error
//! - `!`, `-`, `+`, `-`, `==`, `!=`, `<`, `<=`, `>`, `>=`, `in`, `&&`, `||`, `c ? a : b`
//! - macros `any(list, x, pred)`, `all(…)`, `filter(…)`, `map(list, x, expr)`, `find(…)`
//! - functions, listed in [`Func`]; each is general (no rule names one of its own)
//!
//! Truthiness: `false`, `null`, `0`, `""`, `[]` and `{}` are false, everything else true.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::value::{Map, NULL, Number, Value};
use regex::Regex;

/// A compile error with the byte offset in the expression text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} (at offset {offset} of `{expr}`)")]
pub struct ExprError {
    pub expr: String,
    pub offset: usize,
    pub message: String,
}

/// A compiled expression.
#[derive(Debug, Clone)]
pub struct Expr {
    node: Node,
    text: String,
}

#[derive(Debug, Clone)]
enum Node {
    Lit(Value),
    Var(String),
    List(Vec<Node>),
    MapLit(Vec<(String, Node)>),
    /// `query(value, prefix, '$.jsonpath')`: the JSONPath is compiled at load.
    Query(Box<Node>, Box<Node>, Box<crate::engine::path::Path>),
    Member(Box<Node>, String),
    Index(Box<Node>, Box<Node>),
    Not(Box<Node>),
    Neg(Box<Node>),
    Bin(BinOp, Box<Node>, Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    Macro(MacroKind, Box<Node>, String, Box<Node>),
    Call(Func, Vec<Node>),
    /// `matches(x, 'literal')`: the regex is compiled at load.
    MatchLit(Box<Node>, Regex),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Add,
    Sub,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum MacroKind {
    Any,
    All,
    Filter,
    Map,
    Find,
}

macro_rules! funcs {
    ($($variant:ident = $name:literal / $arity:literal : $doc:literal,)*) => {
        /// Functions available to rule expressions.
        #[derive(Debug, Clone, Copy, PartialEq)]
        pub enum Func { $(#[doc = $doc] $variant,)* }
        impl Func {
            fn lookup(name: &str) -> Option<(Func, usize)> {
                match name { $($name => Some((Func::$variant, $arity)),)* _ => None }
            }
            /// Every function with its arity and description (for the rules README).
            pub fn all() -> &'static [(&'static str, usize, &'static str)] {
                &[$(($name, $arity, $doc),)*]
            }
        }
    };
}

funcs! {
    Size = "size" / 1 : "length of a list, map or string; 0 for null",
    Has = "has" / 1 : "true when the value is not null",
    Lower = "lower" / 1 : "lower-cased string",
    StartsWith = "startsWith" / 2 : "string prefix test",
    EndsWith = "endsWith" / 2 : "string suffix test",
    Contains = "contains" / 2 : "substring test for strings, membership for lists, key test for maps",
    Matches = "matches" / 2 : "regular expression search (Rust `regex` syntax)",
    Str = "string" / 1 : "the value as text (strings unquoted, others as JSON)",
    Int = "int" / 1 : "an integer from a number or a numeric string; null otherwise",
    Keys = "keys" / 1 : "the keys of a map",
    Values = "values" / 1 : "the values of a map",
    Entries = "entries" / 1 : "a map as a list of `{key, value}`",
    Default = "default" / 2 : "the first argument unless it is null, else the second",
    Join = "join" / 2 : "list items joined as text with a separator",
    Concat = "concat" / 2 : "two lists (or a list and an item) joined",
    First = "first" / 1 : "first item of a list, or null",
    Unique = "unique" / 1 : "list with duplicates removed (first occurrence kept)",
    Escape = "escape" / 1 : "a JSON-pointer reference token (RFC 6901: `/` → `~1`, `~` → `~0`)",
    VersionAtLeast = "versionAtLeast" / 2 : "`major.minor` version comparison (`versionAtLeast('1.25', '1.14')`)",
    Tolerates = "tolerates" / 2 : "whether a list of tolerations tolerates a taint, with Kubernetes' exact matching semantics",
    BuildCompat = "buildCompat" / 2 : "Windows host/image build compatibility (process isolation): `exact`, `stable-abi` or `incompatible`",
    SelectorMatches = "selectorMatches" / 2 : "whether an equality label selector (a map) selects a label set; an empty selector selects nothing",
    PathUnder = "pathUnder" / 2 : "Windows path containment: case-insensitive, `\\` and `/` equal, drive-less paths on `C:`",
    Objects = "objects" / 1 : "the objects of a kind in the same input set (for cross-object rules)",
    AutoscalersOf = "autoscalersOf" / 1 : "the HorizontalPodAutoscalers of the input set that scale this object (same namespace, `scaleTargetRef` kind and name), through an index",
    ServicesSelecting = "servicesSelecting" / 2 : "`servicesSelecting(namespace, labels)`: the Services of the input set in the namespace whose selector selects the labels, through an index",
    Max = "max" / 1 : "largest number of a list; null for an empty list",
    Quantity = "quantity" / 1 : "a Kubernetes quantity (`500m`, `1Gi`, `2e3`, `1.5`) as a number; null when it isn't one",
    Replace = "replace" / 3 : "`replace(s, 're', with)`: every match of the regular expression replaced (`$1` names a group)",
    Query = "query" / 3 : "`query(value, pointer, '$.jsonpath')`: the JSONPath's matches in `value` as `{value, pointer}`, pointers prefixed with `pointer` (the JSONPath must be a literal)",
}

/// A Kubernetes `resource.Quantity` as a number: a decimal (`1.5`, `.5`, `+2`), then a binary
/// suffix (`Ki` … `Ei`), a decimal one (`n`, `u`, `m`, `k`, `M` … `E`) or an exponent (`e3`,
/// `E-2`). (Written out here: k8s-openapi's `Quantity` is only the string; the grammar is
/// apimachinery's `resource.ParseQuantity`.)
pub fn parse_quantity(text: &str) -> Option<f64> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '+' | '-')))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let digits = number.trim_start_matches(['+', '-']);
    if digits.is_empty() || digits == "." || number.len() - digits.len() > 1 {
        return None;
    }
    // A decimal suffix or exponent becomes part of the number's own text, so that the parse
    // rounds once: `700m` and `0.7` are then the same double (`700 * 1e-3` is not).
    let binary =
        |power: i32| -> Option<f64> { Some(number.parse::<f64>().ok()? * 1024f64.powi(power)) };
    let decimal = |exponent: i32| format!("{number}e{exponent}").parse::<f64>().ok();
    match suffix {
        "" => number.parse().ok(),
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        exponent => {
            let e = exponent.strip_prefix(['e', 'E'])?;
            let digits = e.trim_start_matches(['+', '-']);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            decimal(e.parse::<i32>().ok()?)
        }
    }
}

// === parsing ===

/// Compiles an expression.
pub fn compile(text: &str) -> Result<Expr, ExprError> {
    let mut p = ExprParser { src: text, pos: 0 };
    let node = p.expr()?;
    p.skip_ws();
    if p.pos < p.src.len() {
        return Err(p.err("unexpected text after the expression"));
    }
    Ok(Expr {
        node,
        text: text.to_string(),
    })
}

impl Expr {
    /// The source text of the expression.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// Kinds passed to `objects(…)`; `None` when one is not a literal.
    pub fn object_kinds(&self) -> Option<Vec<String>> {
        let mut out = Vec::new();
        object_kinds(&self.node, &mut out).then_some(out)
    }
    /// The fields read off records, as `(record, field)`: `pod.os` gives `("pod", "os")`, and a
    /// macro over `pod.containers` reads `container` records through its variable
    /// (`any(pod.containers, c, c.os == 'windows')` gives `("container", "os")`). For load-time
    /// checks that every fact a rule reads exists.
    pub fn record_fields(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        record_fields(&self.node, &mut Vec::new(), &mut out);
        out
    }

    /// Free variables the expression reads (for load-time checks).
    pub fn variables(&self) -> Vec<String> {
        let mut out = Vec::new();
        collect_vars(&self.node, &mut Vec::new(), &mut out);
        out
    }
}

fn object_kinds(node: &Node, out: &mut Vec<String>) -> bool {
    match node {
        Node::Call(Func::Objects, args) => match &args[0] {
            Node::Lit(Value::String(k)) => {
                out.push(k.clone());
                true
            }
            _ => false,
        },
        Node::Call(Func::AutoscalersOf, args) => {
            out.push("HorizontalPodAutoscaler".into());
            args.iter().all(|n| object_kinds(n, out))
        }
        Node::Call(Func::ServicesSelecting, args) => {
            out.push("Service".into());
            args.iter().all(|n| object_kinds(n, out))
        }
        Node::Lit(_) | Node::Var(_) => true,
        Node::List(items) | Node::Call(_, items) => items.iter().all(|n| object_kinds(n, out)),
        Node::MapLit(entries) => entries.iter().all(|(_, n)| object_kinds(n, out)),
        Node::Query(a, b, _) => object_kinds(a, out) && object_kinds(b, out),
        Node::Member(a, _) | Node::Not(a) | Node::Neg(a) | Node::MatchLit(a, _) => {
            object_kinds(a, out)
        }
        Node::Index(a, b) | Node::Bin(_, a, b) | Node::Macro(_, a, _, b) => {
            object_kinds(a, out) && object_kinds(b, out)
        }
        Node::Cond(a, b, c) => object_kinds(a, out) && object_kinds(b, out) && object_kinds(c, out),
    }
}

/// `bound`: macro variables in scope, each with the record kind its items are (`None` when the
/// list is not a list of records).
fn record_fields(
    node: &Node,
    bound: &mut Vec<(String, Option<&'static str>)>,
    out: &mut Vec<(String, String)>,
) {
    let record_of = |var: &str, bound: &[(String, Option<&'static str>)]| match bound
        .iter()
        .rev()
        .find(|(v, _)| v == var)
    {
        Some((_, kind)) => *kind,
        None => match var {
            "pod" => Some("pod"),
            "container" => Some("container"),
            _ => None,
        },
    };
    match node {
        Node::Member(base, field) => {
            if let Node::Var(v) = &**base
                && let Some(kind) = record_of(v, bound)
            {
                out.push((kind.to_string(), field.clone()));
            }
            record_fields(base, bound, out);
        }
        Node::Macro(_, list, var, body) => {
            record_fields(list, bound, out);
            let items = match &**list {
                Node::Member(base, field)
                    if matches!(&**base, Node::Var(v) if record_of(v, bound) == Some("pod"))
                        && field == "containers" =>
                {
                    Some("container")
                }
                _ => None,
            };
            bound.push((var.clone(), items));
            record_fields(body, bound, out);
            bound.pop();
        }
        Node::Lit(_) | Node::Var(_) => {}
        Node::List(items) | Node::Call(_, items) => {
            items.iter().for_each(|n| record_fields(n, bound, out))
        }
        Node::MapLit(entries) => entries
            .iter()
            .for_each(|(_, n)| record_fields(n, bound, out)),
        Node::Query(a, b, _) | Node::Index(a, b) | Node::Bin(_, a, b) => {
            record_fields(a, bound, out);
            record_fields(b, bound, out);
        }
        Node::Not(a) | Node::Neg(a) | Node::MatchLit(a, _) => record_fields(a, bound, out),
        Node::Cond(a, b, c) => {
            record_fields(a, bound, out);
            record_fields(b, bound, out);
            record_fields(c, bound, out);
        }
    }
}

fn collect_vars(node: &Node, bound: &mut Vec<String>, out: &mut Vec<String>) {
    match node {
        Node::Lit(_) => {}
        Node::Var(v) => {
            if !bound.contains(v) && !out.contains(v) {
                out.push(v.clone());
            }
        }
        Node::List(items) | Node::Call(_, items) => {
            items.iter().for_each(|n| collect_vars(n, bound, out))
        }
        Node::MapLit(entries) => entries
            .iter()
            .for_each(|(_, n)| collect_vars(n, bound, out)),
        Node::Query(a, b, _) => {
            collect_vars(a, bound, out);
            collect_vars(b, bound, out);
        }
        Node::Member(a, _) | Node::Not(a) | Node::Neg(a) | Node::MatchLit(a, _) => {
            collect_vars(a, bound, out)
        }
        Node::Index(a, b) | Node::Bin(_, a, b) => {
            collect_vars(a, bound, out);
            collect_vars(b, bound, out);
        }
        Node::Cond(a, b, c) => {
            collect_vars(a, bound, out);
            collect_vars(b, bound, out);
            collect_vars(c, bound, out);
        }
        Node::Macro(_, list, var, body) => {
            collect_vars(list, bound, out);
            bound.push(var.clone());
            collect_vars(body, bound, out);
            bound.pop();
        }
    }
}

struct ExprParser<'s> {
    src: &'s str,
    pos: usize,
}

impl ExprParser<'_> {
    fn err(&self, message: &str) -> ExprError {
        ExprError {
            expr: self.src.to_string(),
            offset: self.pos,
            message: message.to_string(),
        }
    }

    fn skip_ws(&mut self) {
        while let Some(c) = self.src[self.pos..].chars().next() {
            if c.is_whitespace() {
                self.pos += c.len_utf8();
            } else {
                break;
            }
        }
    }

    fn eat(&mut self, tok: &str) -> bool {
        self.skip_ws();
        if self.src[self.pos..].starts_with(tok) {
            // Don't split `<=` into `<` `=`, or `in` out of `index`.
            let rest = &self.src[self.pos + tok.len()..];
            let ident_tok = tok.chars().all(|c| c.is_ascii_alphabetic());
            if ident_tok && rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
                return false;
            }
            if (tok == "<" || tok == ">" || tok == "!" || tok == "=") && rest.starts_with('=') {
                return false;
            }
            self.pos += tok.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &str) -> Result<(), ExprError> {
        if self.eat(tok) {
            Ok(())
        } else {
            Err(self.err(&format!("expected `{tok}`")))
        }
    }

    fn expr(&mut self) -> Result<Node, ExprError> {
        let cond = self.binary(0)?;
        if self.eat("?") {
            let a = self.expr()?;
            self.expect(":")?;
            let b = self.expr()?;
            return Ok(Node::Cond(Box::new(cond), Box::new(a), Box::new(b)));
        }
        Ok(cond)
    }

    /// Precedence climbing: `||` < `&&` < comparisons < `+ -`.
    fn binary(&mut self, level: u8) -> Result<Node, ExprError> {
        const LEVELS: [&[(&str, BinOp)]; 4] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[
                ("==", BinOp::Eq),
                ("!=", BinOp::Ne),
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
                ("in", BinOp::In),
            ],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
        ];
        if level as usize == LEVELS.len() {
            return self.unary();
        }
        let mut left = self.binary(level + 1)?;
        'outer: loop {
            for (tok, op) in LEVELS[level as usize] {
                if self.eat(tok) {
                    let right = self.binary(level + 1)?;
                    left = Node::Bin(*op, Box::new(left), Box::new(right));
                    // Comparisons don't chain.
                    if level == 2 {
                        break 'outer;
                    }
                    continue 'outer;
                }
            }
            break;
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Node, ExprError> {
        if self.eat("!") {
            return Ok(Node::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(Node::Neg(Box::new(self.unary()?)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Node, ExprError> {
        let mut node = self.primary()?;
        loop {
            if self.eat(".") {
                let name = self
                    .ident()
                    .ok_or_else(|| self.err("expected a field name"))?;
                node = Node::Member(Box::new(node), name);
            } else if self.eat("[") {
                let idx = self.expr()?;
                self.expect("]")?;
                node = Node::Index(Box::new(node), Box::new(idx));
            } else {
                return Ok(node);
            }
        }
    }

    fn ident(&mut self) -> Option<String> {
        self.skip_ws();
        let rest = &self.src[self.pos..];
        let len = rest
            .char_indices()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
            .map_or(rest.len(), |(i, _)| i);
        if len == 0 || rest.as_bytes()[0].is_ascii_digit() {
            return None;
        }
        self.pos += len;
        Some(rest[..len].to_string())
    }

    fn primary(&mut self) -> Result<Node, ExprError> {
        self.skip_ws();
        let rest = &self.src[self.pos..];
        let Some(c) = rest.chars().next() else {
            return Err(self.err("unexpected end of expression"));
        };
        if c == '(' {
            self.pos += 1;
            let e = self.expr()?;
            self.expect(")")?;
            return Ok(e);
        }
        if c == '[' {
            self.pos += 1;
            let mut items = Vec::new();
            if !self.eat("]") {
                loop {
                    items.push(self.expr()?);
                    if self.eat("]") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            // A list of literals is itself a literal: built once here, not at every evaluation.
            let literals: Option<Vec<Value>> = items
                .iter()
                .map(|n| match n {
                    Node::Lit(v) => Some(v.clone()),
                    _ => None,
                })
                .collect();
            if let Some(values) = literals {
                return Ok(Node::Lit(Value::Array(values)));
            }
            return Ok(Node::List(items));
        }
        if c == '{' {
            self.pos += 1;
            let mut entries = Vec::new();
            if !self.eat("}") {
                loop {
                    self.skip_ws();
                    let key = match self.src[self.pos..].chars().next() {
                        Some(q @ ('\'' | '"')) => self.string(q)?,
                        _ => self.ident().ok_or_else(|| self.err("expected a map key"))?,
                    };
                    self.expect(":")?;
                    entries.push((key, self.expr()?));
                    if self.eat("}") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            return Ok(Node::MapLit(entries));
        }
        if c == '\'' || c == '"' {
            return self.string(c).map(|s| Node::Lit(Value::from(s)));
        }
        if c.is_ascii_digit() {
            let len = rest
                .find(|ch: char| !(ch.is_ascii_digit() || ch == '.'))
                .unwrap_or(rest.len());
            let text = &rest[..len];
            self.pos += len;
            let num = if let Ok(i) = text.parse::<i64>() {
                Number::from(i)
            } else {
                text.parse::<f64>()
                    .ok()
                    .and_then(Number::from_f64)
                    .ok_or_else(|| self.err("bad number"))?
            };
            return Ok(Node::Lit(Value::Number(num)));
        }
        let name = self.ident().ok_or_else(|| self.err("expected a value"))?;
        match name.as_str() {
            "true" => return Ok(Node::Lit(Value::Bool(true))),
            "false" => return Ok(Node::Lit(Value::Bool(false))),
            "null" => return Ok(Node::Lit(Value::Null)),
            _ => {}
        }
        if !self.eat("(") {
            return Ok(Node::Var(name));
        }
        let macro_kind = match name.as_str() {
            "any" => Some(MacroKind::Any),
            "all" => Some(MacroKind::All),
            "filter" => Some(MacroKind::Filter),
            "map" => Some(MacroKind::Map),
            "find" => Some(MacroKind::Find),
            _ => None,
        };
        if let Some(kind) = macro_kind {
            let list = self.expr()?;
            self.expect(",")?;
            let var = self
                .ident()
                .ok_or_else(|| self.err("expected the name of the loop variable"))?;
            self.expect(",")?;
            let body = self.expr()?;
            self.expect(")")?;
            return Ok(Node::Macro(kind, Box::new(list), var, Box::new(body)));
        }
        let start = self.pos;
        let Some((func, arity)) = Func::lookup(&name) else {
            self.pos = start;
            return Err(self.err(&format!("unknown function `{name}`")));
        };
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                args.push(self.expr()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        if args.len() != arity {
            return Err(self.err(&format!(
                "`{name}` takes {arity} argument(s), got {}",
                args.len()
            )));
        }
        if func == Func::Query {
            let Node::Lit(Value::String(path)) = &args[2] else {
                return Err(self.err("the JSONPath of `query` must be a string literal"));
            };
            let q = crate::engine::path::Path::parse(path)
                .map_err(|e| self.err(&format!("invalid JSONPath `{path}`: {e}")))?;
            let prefix = args.swap_remove(1);
            let root = args.swap_remove(0);
            return Ok(Node::Query(Box::new(root), Box::new(prefix), Box::new(q)));
        }
        if func == Func::Matches
            && let Node::Lit(Value::String(pattern)) = &args[1]
        {
            let re = Regex::new(pattern)
                .map_err(|e| self.err(&format!("invalid regex `{pattern}`: {e}")))?;
            let subject = args.swap_remove(0);
            return Ok(Node::MatchLit(Box::new(subject), re));
        }
        Ok(Node::Call(func, args))
    }

    fn string(&mut self, quote: char) -> Result<String, ExprError> {
        self.pos += 1;
        let mut out = String::new();
        let mut chars = self.src[self.pos..].char_indices();
        while let Some((i, c)) = chars.next() {
            if c == quote {
                self.pos += i + 1;
                return Ok(out);
            }
            if c == '\\' {
                match chars.next() {
                    Some((_, 'n')) => out.push('\n'),
                    Some((_, 't')) => out.push('\t'),
                    Some((_, other)) => out.push(other),
                    None => break,
                }
            } else {
                out.push(c);
            }
        }
        Err(self.err("unterminated string"))
    }
}

// === evaluation ===

/// The other objects of the input set, for cross-object rules: by kind, and through indexes
/// built once per run, so a lookup per workload is a map lookup rather than a scan of every
/// object of the kind (which made linting grow with the square of the input).
pub trait Inputs {
    /// The objects of a kind, as a JSON list (`objects(kind)`).
    fn of_kind(&self, kind: &str) -> Option<&Value>;
    /// The HorizontalPodAutoscalers in `namespace` whose `scaleTargetRef` names `kind`/`name`,
    /// in input order.
    fn autoscalers_of(&self, namespace: &str, kind: &str, name: &str) -> Vec<&Value>;
    /// The Services in `namespace` whose (non-empty) selector selects `labels`, in input order.
    fn services_selecting(&self, namespace: &str, labels: &Value) -> Vec<&Value>;
}

/// The variables an expression sees, and the cross-object index.
pub struct Env<'a> {
    vars: Vec<(&'a str, Binding<'a>)>,
    inputs: Option<&'a dyn Inputs>,
}

enum Binding<'a> {
    Value(Cow<'a, Value>),
    /// Evaluated on first use (a rule's `let`), so costly lookups run only when needed.
    Lazy(&'a Expr, std::cell::OnceCell<Value>),
    /// A record whose fields are computed when read (the model's facts).
    Record(&'a (dyn Record + 'a)),
}

/// A map-like value whose fields are computed on demand: the model's pod and container facts.
///
/// `pod.os` asks the record for `os` and nothing else. Building every fact of every pod as a JSON
/// map, most of them never read, cost more than all the rules together; a record computes a field
/// the first time a rule reads it and keeps it for the next rule.
pub trait Record {
    /// The field `name`; `None` when the record has no such field (read as `null`).
    fn field(&self, name: &str) -> Option<&Value>;
    /// The whole record as a JSON map, for an expression that uses it as a value (`size(pod)`).
    fn value(&self) -> &Value;
    /// A field that is a list of records (`pod.containers`), for macros to walk without building
    /// each record's map; `None` when `name` is not such a field.
    fn records(&self, _name: &str) -> Option<Vec<&dyn Record>> {
        None
    }
}

impl<'a> Env<'a> {
    pub fn new() -> Self {
        Env {
            vars: Vec::new(),
            inputs: None,
        }
    }
    /// Supplies the input set for `objects`, `autoscalersOf` and `servicesSelecting`.
    pub fn with_inputs(mut self, inputs: &'a dyn Inputs) -> Self {
        self.inputs = Some(inputs);
        self
    }
    pub fn bind(&mut self, name: &'a str, value: &'a Value) {
        self.vars.push((name, Binding::Value(Cow::Borrowed(value))));
    }
    pub fn bind_owned(&mut self, name: &'a str, value: Value) {
        self.vars.push((name, Binding::Value(Cow::Owned(value))));
    }
    /// Binds `name` to a record whose fields are read one by one.
    pub fn bind_record(&mut self, name: &'a str, record: &'a (dyn Record + 'a)) {
        self.vars.push((name, Binding::Record(record)));
    }
    /// Binds `name` to an expression evaluated the first time it is read.
    pub fn bind_lazy(&mut self, name: &'a str, expr: &'a Expr) {
        self.vars
            .push((name, Binding::Lazy(expr, std::cell::OnceCell::new())));
    }
    /// Removes the most recent binding.
    pub fn unbind(&mut self) {
        self.vars.pop();
    }
    fn get<'s>(&'s self, name: &str) -> Option<Cow<'s, Value>>
    where
        'a: 's,
    {
        let (_, binding) = self.vars.iter().rev().find(|(n, _)| *n == name)?;
        Some(match binding {
            Binding::Value(Cow::Borrowed(v)) => Cow::Borrowed(*v),
            Binding::Value(Cow::Owned(v)) => Cow::Borrowed(v),
            Binding::Lazy(expr, cell) => {
                Cow::Borrowed(cell.get_or_init(|| expr.eval(self).into_owned()))
            }
            Binding::Record(r) => Cow::Borrowed(r.value()),
        })
    }

    /// The record bound to `name`, unless a macro variable of that name hides it.
    fn record<'l>(&self, name: &str, locals: &Locals<'l>) -> Option<&'l (dyn Record + 'l)>
    where
        'a: 'l,
    {
        if let Some((_, local)) = locals.iter().rev().find(|(n, _)| *n == name) {
            return match local {
                Local::Record(r) => Some(*r),
                Local::Value(_) | Local::Match(..) => None,
            };
        }
        match self.vars.iter().rev().find(|(n, _)| *n == name) {
            Some((_, Binding::Record(r))) => Some(*r),
            _ => None,
        }
    }
}

impl Default for Env<'_> {
    fn default() -> Self {
        Self::new()
    }
}

impl Expr {
    /// Evaluates to a value.
    pub fn eval<'a, 'e: 'a>(&'a self, env: &'a Env<'e>) -> Cow<'a, Value> {
        let mut scratch = Locals::new();
        eval_env(&self.node, env, &mut scratch)
    }
    /// Evaluates to a truth value.
    pub fn test(&self, env: &Env<'_>) -> bool {
        let mut scratch = Locals::new();
        truthy(&eval_env(&self.node, env, &mut scratch))
    }
    #[cfg(test)]
    fn eval_any(&self, env: &Env<'_>) -> Value {
        let mut scratch = Locals::new();
        eval_env(&self.node, env, &mut scratch).into_owned()
    }
}

/// Local bindings of macro variables, innermost last.
///
/// Kept inline (macros nest a few deep at most): a heap vector here was allocated by every
/// evaluation that ran a macro.
type Locals<'a> = smallvec::SmallVec<[(&'a str, Local<'a>); 4]>;

/// Function arguments, inline (no function takes more than three).
type Args<'a> = smallvec::SmallVec<[Cow<'a, Value>; 3]>;

/// A macro variable's value: a JSON value, a record (an item of `pod.containers`), or a match
/// of `query(…)` whose value is borrowed (`{pointer, value}`, built only if used whole).
enum Local<'a> {
    Value(Cow<'a, Value>),
    Record(&'a (dyn Record + 'a)),
    Match(String, &'a Value),
}

impl Local<'_> {
    /// The `{pointer, value}` map of a query match.
    fn match_value(pointer: &str, value: &Value) -> Value {
        let mut m = Map::new();
        m.insert("pointer".into(), Value::from(pointer));
        m.insert("value".into(), value.clone());
        Value::Object(m)
    }
}

/// `query(root, prefix, path)` as a value: the list of its matches' `{pointer, value}` maps.
fn query_list(path: &crate::engine::path::Path, root: &Value, prefix: &str) -> Value {
    Value::Array(
        path.matches(root, prefix)
            .into_iter()
            .map(|(pointer, value)| Local::match_value(&pointer, value))
            .collect(),
    )
}

fn eval_env<'a, 'e>(node: &'a Node, env: &'a Env<'e>, locals: &mut Locals<'a>) -> Cow<'a, Value>
where
    'e: 'a,
{
    match node {
        Node::Lit(v) => Cow::Borrowed(v),
        Node::Var(name) => {
            if let Some((_, v)) = locals.iter().rev().find(|(n, _)| n == name) {
                return match v {
                    Local::Value(v) => v.clone(),
                    Local::Record(r) => Cow::Borrowed(r.value()),
                    Local::Match(pointer, value) => Cow::Owned(Local::match_value(pointer, value)),
                };
            }
            match env.vars.iter().rev().find(|(n, _)| n == name) {
                // Values bound by reference live as long as the evaluation: no copy.
                Some((_, Binding::Value(Cow::Borrowed(v)))) => Cow::Borrowed(*v),
                Some(_) => env.get(name).unwrap_or(Cow::Borrowed(&NULL)),
                None => Cow::Borrowed(&NULL),
            }
        }
        Node::List(items) => Cow::Owned(Value::Array(
            items
                .iter()
                .map(|n| eval_env(n, env, locals).into_owned())
                .collect(),
        )),
        Node::MapLit(entries) => Cow::Owned(Value::Object(
            entries
                .iter()
                .map(|(k, n)| (k.clone(), eval_env(n, env, locals).into_owned()))
                .collect(),
        )),
        Node::Query(root, prefix, query) => {
            let root = eval_env(root, env, locals);
            let prefix = display(&eval_env(prefix, env, locals));
            Cow::Owned(query_list(query, &root, &prefix))
        }
        Node::Member(base, name) => {
            // `x.a.b` on a macro variable: walk by reference and copy only the result (a macro
            // variable may hold an owned item, and copying it per access showed in profiles).
            if let Some(v) = local_path(node, locals) {
                return v;
            }
            // `pod.os`: one field of a record, computed alone.
            if let Node::Var(var) = &**base
                && let Some(record) = env.record(var, locals)
            {
                return record
                    .field(name)
                    .map_or(Cow::Borrowed(&NULL), Cow::Borrowed);
            }
            member(eval_env(base, env, locals), name)
        }
        Node::Index(base, idx) => {
            let b = eval_env(base, env, locals);
            let i = eval_env(idx, env, locals);
            match (&*i, &*b) {
                (Value::String(k), _) => member(b, k),
                (Value::Number(n), Value::Array(_)) => {
                    let Some(i) = n.as_u64() else {
                        return Cow::Borrowed(&NULL);
                    };
                    match b {
                        Cow::Borrowed(Value::Array(a)) => a
                            .get(i as usize)
                            .map_or(Cow::Borrowed(&NULL), Cow::Borrowed),
                        Cow::Owned(Value::Array(mut a)) if (i as usize) < a.len() => {
                            Cow::Owned(a.swap_remove(i as usize))
                        }
                        _ => Cow::Borrowed(&NULL),
                    }
                }
                _ => Cow::Borrowed(&NULL),
            }
        }
        Node::Not(a) => Cow::Owned(Value::Bool(!truthy(&eval_env(a, env, locals)))),
        Node::Neg(a) => match eval_env(a, env, locals).as_f64() {
            Some(f) => Cow::Owned(num(-f)),
            None => Cow::Borrowed(&NULL),
        },
        Node::Cond(c, a, b) => {
            if truthy(&eval_env(c, env, locals)) {
                eval_env(a, env, locals)
            } else {
                eval_env(b, env, locals)
            }
        }
        Node::Bin(op, a, b) => binary(*op, a, b, env, locals),
        Node::Macro(kind, list, var, body) => {
            if let Some(records) = record_list(list, env, locals) {
                return record_macro(*kind, records, var, body, env, locals);
            }
            let list = match &**list {
                // Over a borrowed value, the matches are read in place.
                Node::Query(root, prefix, path) => {
                    let root = eval_env(root, env, locals);
                    let prefix = display(&eval_env(prefix, env, locals));
                    match root {
                        Cow::Borrowed(root) => {
                            let matches = path.matches(root, &prefix);
                            return match_macro(*kind, matches, var, body, env, locals);
                        }
                        Cow::Owned(root) => Cow::Owned(query_list(path, &root, &prefix)),
                    }
                }
                list => eval_env(list, env, locals),
            };
            let items: Vec<Cow<'a, Value>> = match list {
                Cow::Borrowed(Value::Array(a)) => a.iter().map(Cow::Borrowed).collect(),
                Cow::Owned(Value::Array(a)) => a.into_iter().map(Cow::Owned).collect(),
                Cow::Borrowed(Value::Object(m)) => m.values().map(Cow::Borrowed).collect(),
                Cow::Owned(Value::Object(m)) => m.into_iter().map(|(_, v)| Cow::Owned(v)).collect(),
                _ => Vec::new(),
            };
            let mut out = macro_output(*kind, items.len());
            for item in items {
                locals.push((var.as_str(), Local::Value(item)));
                let r = eval_env(body, env, locals);
                let Some((_, Local::Value(item))) = locals.pop() else {
                    unreachable!("pushed above")
                };
                if let Some(done) = macro_step(*kind, r, &mut out, || item) {
                    return done;
                }
            }
            macro_end(*kind, out)
        }
        Node::MatchLit(subject, re) => {
            let s = eval_env(subject, env, locals);
            Cow::Owned(Value::Bool(s.as_str().is_some_and(|s| re.is_match(s))))
        }
        Node::Call(func, args) => {
            match func {
                Func::Objects => {
                    let kind = eval_env(&args[0], env, locals);
                    return match kind.as_str().and_then(|k| env.inputs?.of_kind(k)) {
                        Some(v) => Cow::Borrowed(v),
                        None => Cow::Owned(Value::Array(Vec::new())),
                    };
                }
                Func::AutoscalersOf => {
                    let object = eval_env(&args[0], env, locals);
                    let text = |p: &str| object.pointer(p).and_then(Value::as_str).unwrap_or("");
                    let found = env.inputs.map_or_else(Vec::new, |i| {
                        i.autoscalers_of(
                            text("/metadata/namespace"),
                            text("/kind"),
                            text("/metadata/name"),
                        )
                    });
                    return Cow::Owned(Value::Array(found.into_iter().cloned().collect()));
                }
                Func::ServicesSelecting => {
                    let namespace = eval_env(&args[0], env, locals);
                    let labels = eval_env(&args[1], env, locals);
                    let found = env.inputs.map_or_else(Vec::new, |i| {
                        i.services_selecting(namespace.as_str().unwrap_or(""), &labels)
                    });
                    return Cow::Owned(Value::Array(found.into_iter().cloned().collect()));
                }
                _ => {}
            }
            let vals: Args<'a> = args.iter().map(|a| eval_env(a, env, locals)).collect();
            call(*func, vals)
        }
    }
}

/// The records of `list` when it reads a record-list field (`pod.containers`).
fn record_list<'a>(
    list: &Node,
    env: &'a Env<'_>,
    locals: &Locals<'a>,
) -> Option<Vec<&'a (dyn Record + 'a)>> {
    let Node::Member(base, field) = list else {
        return None;
    };
    let Node::Var(var) = &**base else {
        return None;
    };
    env.record(var, locals)?.records(field)
}

/// A macro over records: the variable is bound to each record, so its body reads single fields;
/// an item is turned into a JSON map only when the macro returns it (`filter`, `find`).
fn record_macro<'a>(
    kind: MacroKind,
    records: Vec<&'a (dyn Record + 'a)>,
    var: &'a str,
    body: &'a Node,
    env: &'a Env<'_>,
    locals: &mut Locals<'a>,
) -> Cow<'a, Value> {
    let mut out = macro_output(kind, records.len());
    for record in records {
        locals.push((var, Local::Record(record)));
        let r = eval_env(body, env, locals);
        locals.pop();
        if let Some(done) = macro_step(kind, r, &mut out, || Cow::Borrowed(record.value())) {
            return done;
        }
    }
    macro_end(kind, out)
}

/// The list a `filter` or `map` builds, sized for `items` items.
fn macro_output(kind: MacroKind, items: usize) -> Vec<Value> {
    Vec::with_capacity(match kind {
        MacroKind::Map | MacroKind::Filter => items,
        _ => 0,
    })
}

/// What a macro does with one item, given its body's result `r`: `Some` ends the macro with that
/// value (`any`, `all`, `find` decided), `None` goes on to the next item. `item` gives the item
/// itself, for `filter` and `find`.
fn macro_step<'a>(
    kind: MacroKind,
    r: Cow<'_, Value>,
    out: &mut Vec<Value>,
    item: impl FnOnce() -> Cow<'a, Value>,
) -> Option<Cow<'a, Value>> {
    match kind {
        MacroKind::Any if truthy(&r) => Some(Cow::Owned(Value::Bool(true))),
        MacroKind::All if !truthy(&r) => Some(Cow::Owned(Value::Bool(false))),
        MacroKind::Filter if truthy(&r) => {
            out.push(item().into_owned());
            None
        }
        MacroKind::Find if truthy(&r) => Some(item()),
        MacroKind::Map => {
            out.push(r.into_owned());
            None
        }
        _ => None,
    }
}

/// A macro's value once every item went by without deciding it.
fn macro_end<'a>(kind: MacroKind, out: Vec<Value>) -> Cow<'a, Value> {
    match kind {
        MacroKind::Any => Cow::Owned(Value::Bool(false)),
        MacroKind::All => Cow::Owned(Value::Bool(true)),
        MacroKind::Find => Cow::Borrowed(&NULL),
        MacroKind::Filter | MacroKind::Map => Cow::Owned(Value::Array(out)),
    }
}

/// A macro over the matches of `query(…)` on a borrowed value: the variable reads each match's
/// value in place, and a match is copied only when the macro returns it (`filter`, `find`).
fn match_macro<'a>(
    kind: MacroKind,
    matches: Vec<(String, &'a Value)>,
    var: &'a str,
    body: &'a Node,
    env: &'a Env<'_>,
    locals: &mut Locals<'a>,
) -> Cow<'a, Value> {
    let mut out = macro_output(kind, matches.len());
    for (pointer, value) in matches {
        locals.push((var, Local::Match(pointer, value)));
        let r = eval_env(body, env, locals);
        let Some((_, Local::Match(pointer, value))) = locals.pop() else {
            unreachable!("pushed above")
        };
        let whole = || Cow::Owned(Local::match_value(&pointer, value));
        if let Some(done) = macro_step(kind, r, &mut out, whole) {
            return done;
        }
    }
    macro_end(kind, out)
}

/// Resolves a chain of `.field` accesses rooted at a macro variable: by reference when the
/// variable borrows its value, else cloning only the end value.
fn local_path<'a>(node: &Node, locals: &Locals<'a>) -> Option<Cow<'a, Value>> {
    // Find the root first: most member accesses are not on a macro variable.
    let mut cur = node;
    while let Node::Member(base, _) = cur {
        cur = base;
    }
    let Node::Var(var) = cur else { return None };
    let (_, root) = locals.iter().rev().find(|(n, _)| n == var)?;
    // The field names in access order (`q.value.name` → value, name).
    let mut names: smallvec::SmallVec<[&str; 4]> = smallvec::SmallVec::new();
    let mut cur = node;
    while let Node::Member(base, name) = cur {
        names.push(name.as_str());
        cur = base;
    }
    names.reverse();
    let (first, rest) = names.split_first().expect("a member access names a field");
    Some(match root {
        Local::Value(Cow::Borrowed(v)) => Cow::Borrowed(walk(v, &names)),
        Local::Value(Cow::Owned(v)) => Cow::Owned(walk(v, &names).clone()),
        // A record: its field read alone, the rest of the path walked by reference.
        Local::Record(r) => Cow::Borrowed(walk(r.field(first).unwrap_or(&NULL), rest)),
        // A query match: `q.value…` walks the borrowed value, `q.pointer` is the pointer.
        Local::Match(_, value) if *first == "value" => Cow::Borrowed(walk(value, rest)),
        Local::Match(pointer, _) if *first == "pointer" && rest.is_empty() => {
            Cow::Owned(Value::from(pointer.clone()))
        }
        Local::Match(..) => Cow::Borrowed(&NULL),
    })
}

/// The value at `names` (field by field) below `v`; `null` where a field is missing.
fn walk<'v>(mut v: &'v Value, names: &[&str]) -> &'v Value {
    for name in names {
        match v.get(*name) {
            Some(next) => v = next,
            None => return &NULL,
        }
    }
    v
}

fn member<'a>(base: Cow<'a, Value>, name: &str) -> Cow<'a, Value> {
    match base {
        Cow::Borrowed(Value::Object(m)) => m.get(name).map_or(Cow::Borrowed(&NULL), Cow::Borrowed),
        Cow::Owned(Value::Object(mut m)) => m.remove(name).map_or(Cow::Borrowed(&NULL), Cow::Owned),
        _ => Cow::Borrowed(&NULL),
    }
}

fn num(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::Number(Number::from(f as i64))
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// Truthiness of a value.
pub fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(m) => !m.is_empty(),
    }
}

/// Deep equality where `1 == 1.0`.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

/// Text of a value as shown in messages: strings bare, everything else as JSON.
pub fn display(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Appends `v` as [`display`] shows it.
fn push_display(out: &mut String, v: &Value) {
    match v {
        Value::String(s) => out.push_str(s),
        Value::Null => {}
        other => out.push_str(&other.to_string()),
    }
}

fn binary<'a, 'e: 'a>(
    op: BinOp,
    a: &'a Node,
    b: &'a Node,
    env: &'a Env<'e>,
    locals: &mut Locals<'a>,
) -> Cow<'a, Value> {
    let bool_val = |b: bool| Cow::Owned(Value::Bool(b));
    match op {
        BinOp::Or => {
            let l = eval_env(a, env, locals);
            if truthy(&l) {
                return l;
            }
            eval_env(b, env, locals)
        }
        BinOp::And => {
            let l = eval_env(a, env, locals);
            if !truthy(&l) {
                return l;
            }
            eval_env(b, env, locals)
        }
        _ => {
            let l = eval_env(a, env, locals);
            let r = eval_env(b, env, locals);
            match op {
                BinOp::Eq => bool_val(equal(&l, &r)),
                BinOp::Ne => bool_val(!equal(&l, &r)),
                BinOp::Lt => bool_val(compare(&l, &r) == Some(Ordering::Less)),
                BinOp::Le => bool_val(matches!(
                    compare(&l, &r),
                    Some(Ordering::Less | Ordering::Equal)
                )),
                BinOp::Gt => bool_val(compare(&l, &r) == Some(Ordering::Greater)),
                BinOp::Ge => bool_val(matches!(
                    compare(&l, &r),
                    Some(Ordering::Greater | Ordering::Equal)
                )),
                BinOp::In => bool_val(contains(&r, &l)),
                BinOp::Add => Cow::Owned(match (l, &*r) {
                    // A chain `'a' + b + 'c' + …` (messages are built so) appends to the string
                    // built so far instead of copying it at every step.
                    (Cow::Owned(Value::String(mut x)), y) => {
                        push_display(&mut x, y);
                        Value::String(x)
                    }
                    (l, y) => match (&*l, y) {
                        (Value::Number(x), Value::Number(y)) => {
                            num(x.as_f64().unwrap_or(0.0) + y.as_f64().unwrap_or(0.0))
                        }
                        (Value::Array(x), Value::Array(y)) => {
                            Value::Array(x.iter().chain(y).cloned().collect())
                        }
                        (x, y) => {
                            let mut out = display(x);
                            push_display(&mut out, y);
                            Value::String(out)
                        }
                    },
                }),
                BinOp::Sub => match (l.as_f64(), r.as_f64()) {
                    (Some(x), Some(y)) => Cow::Owned(num(x - y)),
                    _ => Cow::Borrowed(&NULL),
                },
                BinOp::Or | BinOp::And => unreachable!("handled above"),
            }
        }
    }
}

fn contains(container: &Value, item: &Value) -> bool {
    match container {
        Value::Array(a) => a.iter().any(|x| equal(x, item)),
        Value::Object(m) => item.as_str().is_some_and(|k| m.contains_key(k)),
        Value::String(s) => item.as_str().is_some_and(|i| s.contains(i)),
        _ => false,
    }
}

fn call<'a>(func: Func, mut args: Args<'a>) -> Cow<'a, Value> {
    let owned = |v: Value| Cow::Owned(v);
    let s = |i: usize, args: &[Cow<'a, Value>]| args[i].as_str().map(str::to_string);
    match func {
        Func::Size => owned(Value::from(match &*args[0] {
            Value::Array(a) => a.len(),
            Value::Object(m) => m.len(),
            Value::String(s) => s.chars().count(),
            _ => 0,
        })),
        Func::Has => owned(Value::Bool(!args[0].is_null())),
        Func::Lower => owned(s(0, &args).map_or(Value::Null, |s| Value::from(s.to_lowercase()))),
        Func::StartsWith => owned(Value::Bool(matches!(
            (args[0].as_str(), args[1].as_str()), (Some(a), Some(b)) if a.starts_with(b)
        ))),
        Func::EndsWith => owned(Value::Bool(matches!(
            (args[0].as_str(), args[1].as_str()), (Some(a), Some(b)) if a.ends_with(b)
        ))),
        Func::Contains => owned(Value::Bool(contains(&args[0], &args[1]))),
        Func::Matches => {
            // A pattern built at run time: compiled here (literal patterns are compiled at load).
            let ok = match (args[0].as_str(), args[1].as_str()) {
                (Some(subject), Some(pattern)) => {
                    Regex::new(pattern).is_ok_and(|re| re.is_match(subject))
                }
                _ => false,
            };
            owned(Value::Bool(ok))
        }
        Func::Str => owned(Value::from(display(&args[0]))),
        Func::Quantity => owned(match &*args[0] {
            Value::Number(n) => Value::Number(n.clone()),
            Value::String(s) => parse_quantity(s).map_or(Value::Null, num),
            _ => Value::Null,
        }),
        Func::Replace => owned(
            match (args[0].as_str(), args[1].as_str(), args[2].as_str()) {
                (Some(subject), Some(pattern), Some(with)) => match Regex::new(pattern) {
                    Ok(re) => Value::from(re.replace_all(subject, with).into_owned()),
                    Err(_) => Value::Null,
                },
                _ => Value::Null,
            },
        ),
        Func::Int => owned(match &*args[0] {
            Value::Number(n) if n.is_i64() || n.is_u64() => Value::Number(n.clone()),
            Value::Number(n) => n.as_f64().map_or(Value::Null, |f| num(f.trunc())),
            Value::String(s) => s.trim().parse::<i64>().map_or(Value::Null, Value::from),
            _ => Value::Null,
        }),
        Func::Keys => owned(match &*args[0] {
            Value::Object(m) => Value::Array(m.keys().cloned().map(Value::String).collect()),
            _ => Value::Array(Vec::new()),
        }),
        Func::Values => owned(match &*args[0] {
            Value::Object(m) => Value::Array(m.values().cloned().collect()),
            _ => Value::Array(Vec::new()),
        }),
        Func::Entries => owned(match &*args[0] {
            Value::Object(m) => Value::Array(
                m.iter()
                    .map(|(k, v)| {
                        let mut e = Map::new();
                        e.insert("key".into(), Value::String(k.clone()));
                        e.insert("value".into(), v.clone());
                        Value::Object(e)
                    })
                    .collect(),
            ),
            _ => Value::Array(Vec::new()),
        }),
        Func::Default => {
            if args[0].is_null() {
                args.swap_remove(1)
            } else {
                args.swap_remove(0)
            }
        }
        Func::Join => owned(match (&*args[0], args[1].as_str()) {
            (Value::Array(a), Some(sep)) => {
                Value::from(a.iter().map(display).collect::<Vec<_>>().join(sep))
            }
            _ => Value::from(String::new()),
        }),
        Func::Concat => {
            let b = args.pop().expect("arity 2").into_owned();
            let a = args.pop().expect("arity 2").into_owned();
            let mut out = match a {
                Value::Array(a) => a,
                Value::Null => Vec::new(),
                other => vec![other],
            };
            match b {
                Value::Array(b) => out.extend(b),
                Value::Null => {}
                other => out.push(other),
            }
            owned(Value::Array(out))
        }
        Func::First => match args.swap_remove(0) {
            Cow::Borrowed(Value::Array(a)) => a.first().map_or(Cow::Borrowed(&NULL), Cow::Borrowed),
            Cow::Owned(Value::Array(mut a)) if !a.is_empty() => owned(a.swap_remove(0)),
            _ => Cow::Borrowed(&NULL),
        },
        Func::Unique => owned(match &*args[0] {
            Value::Array(a) => {
                let mut out: Vec<Value> = Vec::new();
                for v in a {
                    if !out.iter().any(|o| equal(o, v)) {
                        out.push(v.clone());
                    }
                }
                Value::Array(out)
            }
            _ => Value::Array(Vec::new()),
        }),
        Func::Escape => owned(Value::from(
            crate::manifest::escape_pointer_token(&display(&args[0])).into_owned(),
        )),
        Func::VersionAtLeast => owned(Value::Bool(
            match (parse_version(&args[0]), parse_version(&args[1])) {
                (Some(a), Some(b)) => a >= b,
                _ => false,
            },
        )),
        Func::Tolerates => owned(Value::Bool(crate::model::tolerates(&args[0], &args[1]))),
        Func::BuildCompat => owned(match (args[0].as_u64(), args[1].as_u64()) {
            (Some(host), Some(image)) => {
                Value::from(crate::model::build_compat(host, image).as_str().to_string())
            }
            _ => Value::Null,
        }),
        Func::SelectorMatches => owned(Value::Bool(selector_matches(&args[0], &args[1]))),
        Func::PathUnder => owned(Value::Bool(match (args[0].as_str(), args[1].as_str()) {
            (Some(path), Some(prefix)) => crate::model::path_under(path, prefix),
            _ => false,
        })),
        Func::Max => owned(match &*args[0] {
            Value::Array(a) => a
                .iter()
                .filter_map(Value::as_f64)
                .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))
                .map_or(Value::Null, num),
            _ => Value::Null,
        }),
        Func::Objects | Func::AutoscalersOf | Func::ServicesSelecting | Func::Query => {
            unreachable!("handled in eval")
        }
    }
}

/// Parses `1.25`, `v1.25.3`, `1.25+` into (major, minor).
pub fn parse_version(v: &Value) -> Option<(u64, u64)> {
    let number;
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Number(n) => {
            number = n.to_string();
            number.as_str()
        }
        _ => return None,
    };
    let s = s.trim().trim_start_matches('v');
    let mut parts = s.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor_text = parts.next().unwrap_or("0");
    let digits = minor_text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(minor_text.len());
    Some((major, minor_text[..digits].parse().unwrap_or(0)))
}

/// A Service-style equality selector: every pair must be in the labels; empty selects nothing.
pub(crate) fn selector_matches(selector: &Value, labels: &Value) -> bool {
    let (Some(sel), Some(labels)) = (selector.as_object(), labels.as_object()) else {
        return false;
    };
    !sel.is_empty()
        && sel
            .iter()
            .all(|(k, v)| labels.get(k).is_some_and(|l| equal(l, v)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    fn run(expr: &str, vars: &[(&'static str, Value)]) -> Value {
        let e = compile(expr).unwrap();
        let mut env = Env::new();
        for (n, v) in vars {
            env.bind_owned(n, v.clone());
        }
        e.eval_any(&env)
    }

    #[test]
    fn precedence_and_logic() {
        assert_eq!(run("1 + 2 == 3 && !false || x", &[]), json!(true));
        assert_eq!(
            run("a.b.c == null", &[("a", json!({"b": {}}))]),
            json!(true)
        );
        assert_eq!(
            run("a['k/x'] in ['v', 'w']", &[("a", json!({"k/x": "w"}))]),
            json!(true)
        );
        assert_eq!(
            run("size(a) > 1 ? 'many' : 'one'", &[("a", json!([1, 2]))]),
            json!("many")
        );
        assert_eq!(run("x <= 2", &[("x", json!(3))]), json!(false));
    }

    #[test]
    fn macros_bind_variables() {
        let v = json!([{"n": 1}, {"n": 2}, {"n": 3}]);
        assert_eq!(
            run("map(filter(l, i, i.n > 1), i, i.n)", &[("l", v.clone())]),
            json!([2, 3])
        );
        assert_eq!(
            run(
                "any(l, i, i.n == 3) && all(l, i, i.n > 0)",
                &[("l", v.clone())]
            ),
            json!(true)
        );
        assert_eq!(run("find(l, i, i.n == 2).n", &[("l", v)]), json!(2));
    }

    /// A macro straight over `query(…)` reads the matches in place; it must give what the same
    /// macro gives over the query's list (`concat(…, [])` makes the list an ordinary value).
    #[test]
    fn macros_over_queries_read_matches_in_place() {
        let doc = json!({"a": [{"n": 1, "m": {"k": "x"}}, {"n": 2}, {"n": 3, "m": {"k": "y"}}]});
        let bodies = [
            ("filter", "q.value.n > 1"),
            ("map", "q.pointer + ':' + string(q.value.m.k)"),
            ("map", "q"),
            ("map", "q.pointer.x"),
            ("map", "q.other"),
            ("find", "q.value.n == 3"),
            ("find", "q.value.n == 9"),
            ("any", "has(q.value.m)"),
            ("all", "has(q.value.m)"),
        ];
        for (kind, body) in bodies {
            let direct = format!("{kind}(query(x, '/spec', '$.a[*]'), q, {body})");
            let listed = format!("{kind}(concat(query(x, '/spec', '$.a[*]'), []), q, {body})");
            // A query over a computed (owned) value takes the list path.
            let owned_root = format!("{kind}(query([x][0], '/spec', '$.a[*]'), q, {body})");
            let vars = [("x", doc.clone())];
            let expected = run(&listed, &vars);
            assert_eq!(run(&direct, &vars), expected, "{direct}");
            assert_eq!(run(&owned_root, &vars), expected, "{owned_root}");
        }
        assert_eq!(
            run(
                "map(filter(query(x, '', '$.a[*]'), q, q.value.n != 2), q, q.pointer)",
                &[("x", doc)]
            ),
            json!(["/a/0", "/a/2"])
        );
    }

    #[test]
    fn functions() {
        assert_eq!(
            run("matches('ltsc2019', '^ltsc(\\\\d+)$')", &[]),
            json!(true)
        );
        assert_eq!(
            run("escape('kubernetes.io/os')", &[]),
            json!("kubernetes.io~1os")
        );
        assert_eq!(run("versionAtLeast('v1.25.3', '1.25')", &[]), json!(true));
        assert_eq!(run("versionAtLeast('1.9', '1.14')", &[]), json!(false));
        assert_eq!(
            run("default(null, 'x') + '-' + string(1)", &[]),
            json!("x-1")
        );
        assert_eq!(run("concat([1], 2)", &[]), json!([1, 2]));
        assert_eq!(run("max([1, 5, 2])", &[]), json!(5));
        assert_eq!(
            run("{a: 1, 'b/c': [x]}", &[("x", json!(true))]),
            json!({"a": 1, "b/c": [true]})
        );
        assert_eq!(
            run(
                "query(v, '/spec', '$.xs[?@.k == 2]')",
                &[("v", json!({"xs": [{"k": 1}, {"k": 2}]}))]
            ),
            json!([{"value": {"k": 2}, "pointer": "/spec/xs/1"}])
        );
    }

    #[test]
    fn compile_errors_have_offsets() {
        let e = compile("size(a, b)").unwrap_err();
        assert!(e.message.contains("takes 1 argument"));
        let e = compile("nosuch(a)").unwrap_err();
        assert!(e.message.contains("unknown function `nosuch`"));
        assert!(compile("a ==").is_err());
        assert!(
            compile("matches(a, '(')")
                .unwrap_err()
                .message
                .contains("invalid regex")
        );
    }

    #[test]
    fn quantities_read_as_kubernetes_reads_them() {
        for (text, want) in [
            ("1", Some(1.0)),
            ("500m", Some(0.5)),
            ("1Gi", Some(1073741824.0)),
            ("1024Mi", Some(1073741824.0)),
            ("2e3", Some(2000.0)),
            ("1.5G", Some(1.5e9)),
            (".5", Some(0.5)),
            ("800m", Some(0.8)),
            ("", None),
            ("Gi", None),
            ("1GB", None),
            ("--1", None),
            ("1e", None),
        ] {
            assert_eq!(parse_quantity(text), want, "{text}");
        }
        // Equal quantities are equal numbers, whatever their spelling.
        for (a, b) in [
            ("700m", "0.7"),
            ("350m", "0.35"),
            ("2300m", "2.3"),
            ("1500k", "1.5M"),
            ("1e3", "1k"),
        ] {
            assert_eq!(parse_quantity(a), parse_quantity(b), "{a} = {b}");
        }
    }
}
