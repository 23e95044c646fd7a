//! Compilation: the `cel` crate's syntax tree, checked against the declarations and turned into
//! a tree whose variables are slots, whose record fields are indexes and whose functions are
//! chosen overloads (with literal patterns prepared).

use serde::{Deserialize, Serialize};

use cel::common::ast::{
    self as cel_ast, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, SourceInfo,
    operators,
};

use super::types::Type;
use super::{CompileError, Impl, Overload, Prepare, Registry};
use crate::value::Value;
use std::any::Any;
use std::sync::OnceLock;

/// A name the registry or the compiler holds. (An alias, so that serde's derive does not take
/// the field for one borrowed from the input: `stored` reads it back as the registry's own.)
pub(super) type StaticName = &'static str;

/// A compiled expression. It serializes (`stored`) for the cache of the built-in rules; what it
/// points into (functions, record types) is named by index into the registry it was compiled
/// against, so it is read back with that registry (`stored::with_registry`).
#[derive(Debug, Serialize, Deserialize)]
pub struct Program {
    pub(super) root: Node,
    /// How many comprehension variables it binds.
    pub(super) locals: u32,
    ty: Type,
    text: String,
    /// Variable slots it reads.
    globals: Vec<u32>,
    /// `(record, field)` pairs it reads.
    fields: Vec<(u32, u32)>,
    /// The functions it calls, each with its first argument when that is a string literal.
    #[serde(with = "super::stored::function_names")]
    calls: Vec<(StaticName, Option<String>)>,
}

impl Program {
    /// The expression as written.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// Its static type (`dyn` where the checks cannot tell).
    pub fn ty(&self) -> &Type {
        &self.ty
    }
    /// The functions it calls, each with its first argument when that is a string literal.
    pub fn calls(&self) -> &[(&'static str, Option<String>)] {
        &self.calls
    }
    /// Whether it reads the variable in `slot`.
    pub fn reads(&self, slot: usize) -> bool {
        self.globals.contains(&(slot as u32))
    }
    /// Whether it reads field `field` of record type `record` (through any variable).
    pub fn reads_field(&self, record: &Type, field: &str, registry: &Registry) -> bool {
        field_id(record, field, registry).is_some_and(|id| self.fields.contains(&id))
    }

    /// Whether the whole expression is that field read off a variable (`pod.osReason`): its
    /// value is then always the field's.
    pub fn is_field(&self, record: &Type, field: &str, registry: &Registry) -> bool {
        let Some(id) = field_id(record, field, registry) else {
            return false;
        };
        // The one field it reads is that one (of that record), and it is the whole expression.
        self.fields == [id]
            && matches!(&self.root, Node::RecordField { base, index, test: false, .. }
                if *index == id.1 && matches!(**base, Node::Global(_)))
    }
}

/// `(record, field index)` of a record type's field.
fn field_id(record: &Type, field: &str, registry: &Registry) -> Option<(u32, u32)> {
    let Type::Record(id) = record else {
        return None;
    };
    let index = registry
        .record(*id)
        .fields
        .iter()
        .position(|(n, _, _)| n == field)?;
    Some((*id, index as u32))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Macro {
    All,
    Exists,
    ExistsOne,
    Map,
    Filter,
}

impl Macro {
    pub(super) fn name(self) -> &'static str {
        match self {
            Macro::All => "all",
            Macro::Exists => "exists",
            Macro::ExistsOne => "exists_one",
            Macro::Map => "map",
            Macro::Filter => "filter",
        }
    }
}

/// The two-variable comprehensions of cel-go's `TwoVarComprehensions` extension (Kubernetes
/// 1.32+): over a list the variables are the index and the item, over a map the key and value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Macro2 {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
    TransformMapEntry,
}

impl Macro2 {
    fn from_name(name: &str) -> Option<Macro2> {
        Some(match name {
            "all" => Macro2::All,
            "exists" => Macro2::Exists,
            "existsOne" | "exists_one" => Macro2::ExistsOne,
            "transformList" => Macro2::TransformList,
            "transformMap" => Macro2::TransformMap,
            "transformMapEntry" => Macro2::TransformMapEntry,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Macro2::All => "all",
            Macro2::Exists => "exists",
            Macro2::ExistsOne => "existsOne",
            Macro2::TransformList => "transformList",
            Macro2::TransformMap => "transformMap",
            Macro2::TransformMapEntry => "transformMapEntry",
        }
    }

    /// Whether the macro takes a filter before its expression.
    fn filters(self) -> bool {
        matches!(
            self,
            Macro2::TransformList | Macro2::TransformMap | Macro2::TransformMapEntry
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// An overload a call may run: chosen at load when the types tell, else at run time by the
/// arguments' kinds.
pub(super) struct Candidate {
    pub(super) params: Vec<Type>,
    pub(super) imp: Impl,
    /// Which overload it is: the function's name and the overload's index among its overloads
    /// (how the stored form names it).
    pub(super) overload: (&'static str, u16),
    /// The literal argument the overload prepares (a regular expression's pattern), and how.
    pub(super) literal: Option<(String, Prepare)>,
    /// The prepared literal: made when the expression compiles, where a bad literal is a load
    /// error, or on the first call for an expression read back from the cache, whose literals
    /// were checked when it was compiled (a run then prepares only what it calls).
    pub(super) prepared: OnceLock<Option<Box<dyn Any + Send + Sync>>>,
}

impl Candidate {
    /// The prepared literal, prepared now if it was not yet.
    pub(super) fn prepared(&self) -> Option<&(dyn Any + Send + Sync)> {
        self.prepared
            .get_or_init(|| {
                let (text, prepare) = self.literal.as_ref()?;
                prepare(text).ok()
            })
            .as_deref()
    }
}

impl std::fmt::Debug for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Candidate")
            .field("params", &self.params)
            .field("overload", &self.overload)
            .field("literal", &self.literal.as_ref().map(|(text, _)| text))
            .finish()
    }
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) enum Node {
    Lit(#[serde(with = "super::stored::value")] Value),
    Uint(u64),
    /// A type's name used as a value (`type(x) == string`).
    TypeName(#[serde(with = "super::stored::type_name")] StaticName),
    Global(u32),
    Local(u32),
    /// `has(base.field)` on a map (a record's is [`Node::RecordField`] with `test`).
    Has {
        base: Box<Node>,
        field: String,
    },
    /// A chain of field selections, `base.a.?b.c`: each step's field and whether it is optional
    /// (`.?`). One node for the chain: on borrowed JSON, what most chains read, it walks the
    /// maps directly instead of making a value and an evaluation step per field.
    Path {
        base: Box<Node>,
        steps: Vec<(String, bool)>,
    },
    RecordField {
        base: Box<Node>,
        index: u32,
        name: String,
        test: bool,
    },
    Index {
        base: Box<Node>,
        index: Box<Node>,
        optional: bool,
    },
    List {
        items: Vec<Node>,
        optional: Vec<usize>,
    },
    Map(Vec<(Node, Node, bool)>),
    Not(Box<Node>),
    Neg(Box<Node>),
    And(Box<Node>, Box<Node>),
    Or(Box<Node>, Box<Node>),
    Cond(Box<Node>, Box<Node>, Box<Node>),
    Op(Op, Box<Node>, Box<Node>),
    Call {
        #[serde(with = "super::stored::function_name")]
        name: StaticName,
        candidates: Vec<Candidate>,
        args: Vec<Node>,
    },
    Comprehension {
        kind: Macro,
        range: Box<Node>,
        var: u32,
        body: Box<Node>,
        /// `map(x, filter, f)`'s filter.
        filter: Option<Box<Node>>,
    },
    /// A two-variable comprehension (`m.all(k, v, p)`, `l.transformList(i, v, f)`).
    Comprehension2 {
        kind: Macro2,
        range: Box<Node>,
        /// The index or key, and the item or value.
        vars: (u32, u32),
        body: Box<Node>,
        filter: Option<Box<Node>>,
    },
    /// `opt.optMap(v, f)` (`optional.of(f)`) and `opt.optFlatMap(v, f)` (`f`, an optional),
    /// with `v` the optional's value; empty when the optional is.
    OptionalMap {
        flat: bool,
        optional: Box<Node>,
        var: u32,
        body: Box<Node>,
    },
}

impl Node {
    /// `base.field` (`base.?field` when `optional`), joined to the chain `base` ends, if any.
    fn path(base: Node, field: &str, optional: bool) -> Node {
        match base {
            Node::Path { base, mut steps } => {
                steps.push((field.to_string(), optional));
                Node::Path { base, steps }
            }
            base => Node::Path {
                base: Box::new(base),
                steps: vec![(field.to_string(), optional)],
            },
        }
    }
}

/// The names of types used as values: those an identifier names, then those a selection names
/// (Kubernetes' libraries' types).
pub(super) const TYPE_NAMES: [&str; 14] = [
    "bool",
    "int",
    "uint",
    "double",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "optional_type",
    "type",
    "net.IP",
    "net.CIDR",
    "kubernetes.URL",
];
const IDENT_TYPE_NAMES: usize = 11;

/// Declares variables and compiles expressions against them and a registry.
pub struct Compiler<'r> {
    registry: &'r Registry,
    vars: Vec<(String, Type)>,
}

/// How deeply an expression may nest (the `cel` parser's recursion limit, which it enforces).
const MAX_NESTING: u16 = 64;
/// How deep the compiled tree may be: operator and selection chains (`a + b + …`, `a.b.c…`)
/// nest one node per operator without counting as nesting to the parser. Evaluating and freeing
/// a tree recurse once per level, on whatever thread runs a rule (a webhook worker's, a test's
/// 2 MiB), so the bound keeps that well inside any thread's stack; the built-in rules' deepest
/// expression is a few dozen levels.
const MAX_DEPTH: u32 = 256;
/// cel-go's default bound on an expression's length, in code points.
const MAX_LENGTH: usize = 100_000;
/// How many operator characters (`+`, `.`, `[`, `&&` …) an expression may have outside its string
/// literals: this bounds the chains the parser builds by recursion before [`MAX_DEPTH`] is
/// checked. Forty times the built-in rules' busiest expression.
const MAX_OPERATORS: usize = 8_000;
/// An expression with at most this many operator characters and levels of brackets is parsed
/// and compiled on the thread's own stack (a rule-loading thread's 2 MiB is plenty for it, even
/// unoptimised); a bigger one on a segment of [`BIG_STACK`]. Most of the rules' expressions are
/// small, so loading them maps few segments.
const SMALL_OPERATORS: usize = 64;
const SMALL_DEPTH: usize = 8;
/// Brackets nested deeper than this are parsed by the ANTLR parser only: the Pratt parser counts
/// its recursion differently and would let through some of what [`MAX_NESTING`] refuses.
const FAST_PARSER_DEPTH: usize = 32;
/// Enough for the parser to reach its limits and refuse what goes past them, and for a tree
/// [`MAX_DEPTH`] deep to compile, in unoptimised builds too (they need 10 MiB for 64 levels of
/// brackets, or an 8,000-operator chain); mapped lazily, so only what is used is touched.
const BIG_STACK: usize = 64 << 20;

impl<'r> Compiler<'r> {
    pub fn new(registry: &'r Registry) -> Self {
        Compiler {
            registry,
            vars: Vec::new(),
        }
    }

    pub fn registry(&self) -> &'r Registry {
        self.registry
    }

    /// Declares a variable; its slot is returned (declaring a name again replaces its type and
    /// keeps the slot).
    pub fn declare(&mut self, name: &str, ty: Type) -> usize {
        if let Some(i) = self.vars.iter().position(|(n, _)| n == name) {
            self.vars[i].1 = ty;
            return i;
        }
        self.vars.push((name.to_string(), ty));
        self.vars.len() - 1
    }

    /// The slot of a declared variable.
    pub fn slot(&self, name: &str) -> Option<usize> {
        self.vars.iter().position(|(n, _)| n == name)
    }

    /// How many slots the declared variables take.
    pub fn slots(&self) -> usize {
        self.vars.len()
    }

    pub fn variable_names(&self) -> impl Iterator<Item = &str> {
        self.vars.iter().map(|(n, _)| n.as_str())
    }

    /// Parses and checks an expression.
    pub fn compile(&self, text: &str) -> Result<Program, CompileError> {
        let size = check_size(text)?;
        // The parser recurses a dozen frames per nesting level, up to its limit, before it
        // refuses an expression, and once per operator of a chain: a big expression needs more
        // stack than a thread may have left. Parsing, compiling and freeing the parser's tree
        // run on a segment of their own for it.
        let fast = size.depth <= FAST_PARSER_DEPTH;
        if size.operators <= SMALL_OPERATORS && size.depth <= SMALL_DEPTH {
            self.compile_here(text, fast)
        } else {
            stacker::grow(BIG_STACK, || self.compile_here(text, fast))
        }
    }

    /// Parses with the `cel` crate's Pratt parser, which takes a small fraction of the work of
    /// its ANTLR parser (most of a one-file lint's start-up went to the ANTLR lexer compiling
    /// the built-in rules) but keeps no source positions; an expression that does not parse or
    /// check is parsed again by the ANTLR parser, whose positions place the error. The two give
    /// the same tree (`tests/cel_conformance.rs` holds them to it on every built-in rule and the
    /// conformance suite). `fast` is false for an expression nested deeper than the two parsers are known
    /// to agree on: the ANTLR parser's nesting limit is the one rules are held to.
    fn compile_here(&self, text: &str, fast: bool) -> Result<Program, CompileError> {
        if !fast {
            return self.compile_located(text);
        }
        let parsed = cel::parser::PrattParser::new()
            .enable_optional_syntax(true)
            .max_recursion_depth(MAX_NESTING)
            .parse(text);
        if let Ok(ast) = parsed
            && let Ok(program) = self.check(text, &ast, &SourceInfo::default())
        {
            return Ok(program);
        }
        self.compile_located(text)
    }

    /// Parses with the ANTLR parser, keeping source positions for the errors.
    fn compile_located(&self, text: &str) -> Result<Program, CompileError> {
        let parsed = cel::parser::Parser::new()
            .enable_optional_syntax(true)
            .max_recursion_depth(MAX_NESTING)
            .parse_with_source_info(text);
        let (ast, info) = match parsed {
            Ok(p) => p,
            Err(errors) => {
                let first = errors.errors.into_iter().next();
                let (message, offset) = match first {
                    // The `cel` crate reports its recursion limit as the debug form of an inner
                    // error, positioned by token indexes rather than line and column: it is
                    // about the whole expression, so it is reported at its start.
                    Some(e) if e.msg.contains("Recursion limit of") => (
                        format!(
                            "the expression nests more than {MAX_NESTING} levels deep (calls, \
                             brackets or operators inside each other), more than the CEL parser takes"
                        ),
                        0,
                    ),
                    Some(e) => (e.msg, line_col_to_offset(text, e.pos.0, e.pos.1)),
                    None => ("syntax error".to_string(), 0),
                };
                return Err(CompileError { message, offset });
            }
        };
        self.check(text, &ast, &info)
    }

    /// Checks a parsed expression against the declarations and compiles it.
    fn check(
        &self,
        text: &str,
        ast: &IdedExpr,
        info: &SourceInfo,
    ) -> Result<Program, CompileError> {
        let mut cx = Cx {
            registry: self.registry,
            vars: &self.vars,
            info,
            scope: Vec::new(),
            locals: 0,
            globals: Vec::new(),
            fields: Vec::new(),
            calls: Vec::new(),
            depth: 0,
        };
        let (root, ty) = cx.expr(ast)?;
        Ok(Program {
            root,
            locals: cx.locals,
            ty,
            text: text.to_string(),
            globals: cx.globals,
            fields: cx.fields,
            calls: cx.calls,
        })
    }
}

/// How big an expression is, as far as the parser's recursion goes.
struct Size {
    /// Operator characters outside string literals.
    operators: usize,
    /// The deepest nesting of brackets.
    depth: usize,
}

/// Refuses an expression longer than [`MAX_LENGTH`] or with more than [`MAX_OPERATORS`]
/// operator characters outside its string literals, at the character past the bound. By hand:
/// the bound must hold before the parser runs, and it only counts characters.
fn check_size(text: &str) -> Result<Size, CompileError> {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    let mut operators = 0;
    let (mut depth, mut deepest) = (0usize, 0usize);
    for (i, (offset, c)) in text.char_indices().enumerate() {
        if i == MAX_LENGTH {
            return Err(CompileError {
                message: format!(
                    "the expression is longer than {MAX_LENGTH} characters (CEL's bound)"
                ),
                offset,
            });
        }
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if c == '\\' => escaped = true,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '"' || c == '\'' => quote = Some(c),
            None if matches!(c, ')' | ']' | '}') => depth = depth.saturating_sub(1),
            None if "+-*/%!&|=<>?.[({".contains(c) => {
                if matches!(c, '(' | '[' | '{') {
                    depth += 1;
                    deepest = deepest.max(depth);
                }
                operators += 1;
                if operators > MAX_OPERATORS {
                    return Err(CompileError {
                        message: format!(
                            "the expression has more than {MAX_OPERATORS} operators, more than \
                             the CEL parser takes"
                        ),
                        offset,
                    });
                }
            }
            None => {}
        }
    }
    Ok(Size {
        operators,
        depth: deepest,
    })
}

/// The byte offset of the parser's 1-based line and 0-based column.
fn line_col_to_offset(text: &str, line: isize, col: isize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i as isize + 1 == line {
            return offset
                + l.char_indices()
                    .nth(col.max(0) as usize)
                    .map_or(l.len(), |(b, _)| b);
        }
        offset += l.len();
    }
    offset.min(text.len())
}

struct Cx<'c> {
    registry: &'c Registry,
    vars: &'c [(String, Type)],
    info: &'c SourceInfo,
    /// Comprehension variables in scope, innermost last: name, local index, type.
    scope: Vec<(String, u32, Type)>,
    locals: u32,
    globals: Vec<u32>,
    fields: Vec<(u32, u32)>,
    calls: Vec<(&'static str, Option<String>)>,
    /// How many nodes enclose the one being compiled.
    depth: u32,
}

type Compiled = (Node, Type);

fn is_numeric(t: &Type) -> bool {
    matches!(t, Type::Int | Type::Uint | Type::Double)
}

impl Cx<'_> {
    fn err(&self, e: &IdedExpr, message: impl Into<String>) -> CompileError {
        CompileError {
            message: message.into(),
            offset: self.info.offset_for(e.id).map_or(0, |(s, _)| s as usize),
        }
    }

    fn name(&self, t: &Type) -> String {
        self.registry.type_name(t)
    }

    fn no_overload(&self, e: &IdedExpr, op: &str, types: &[&Type]) -> CompileError {
        let names: Vec<String> = types.iter().map(|t| self.name(t)).collect();
        self.err(
            e,
            format!(
                "found no matching overload for '{op}' applied to '({})'",
                names.join(", ")
            ),
        )
    }

    /// Compiles one node, refused past [`MAX_DEPTH`].
    fn expr(&mut self, e: &IdedExpr) -> Result<Compiled, CompileError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.err(
                e,
                format!(
                    "the expression is more than {MAX_DEPTH} operations deep (operators, calls \
                     or selections applied to each other's results)"
                ),
            ));
        }
        self.depth += 1;
        let compiled = self.node(e);
        self.depth -= 1;
        compiled
    }

    fn node(&mut self, e: &IdedExpr) -> Result<Compiled, CompileError> {
        match &e.expr {
            Expr::Literal(l) => self.literal(e, l),
            Expr::Ident(name) => self.ident(e, name),
            Expr::Select(s) => self.select(e, &s.operand, &s.field, s.test),
            Expr::List(l) => {
                let mut items = Vec::new();
                let mut elem: Option<Type> = None;
                for (i, item) in l.elements.iter().enumerate() {
                    let (node, mut ty) = self.expr(item)?;
                    if l.optional_indices.contains(&i) {
                        ty = match ty {
                            Type::Optional(t) => *t,
                            Type::Dyn => Type::Dyn,
                            other => {
                                return Err(self.err(
                                    item,
                                    format!(
                                        "`?` marks an optional list item, but this is a {}",
                                        self.name(&other)
                                    ),
                                ));
                            }
                        };
                    }
                    elem = Some(match elem {
                        None => ty,
                        Some(t) if t == ty => t,
                        Some(_) => Type::Dyn,
                    });
                    items.push(node);
                }
                Ok((
                    Node::List {
                        items,
                        optional: l.optional_indices.clone(),
                    },
                    Type::list(elem.unwrap_or(Type::Dyn)),
                ))
            }
            Expr::Map(m) => {
                let mut entries = Vec::new();
                let (mut kt, mut vt): (Option<Type>, Option<Type>) = (None, None);
                for entry in &m.entries {
                    let EntryExpr::MapEntry(me) = &entry.expr else {
                        return Err(self.err(e, "message fields in a map literal"));
                    };
                    let (k, kty) = self.expr(&me.key)?;
                    if !matches!(
                        kty,
                        Type::Dyn | Type::String | Type::Int | Type::Uint | Type::Bool
                    ) {
                        return Err(self.err(
                            &me.key,
                            format!(
                                "a map key must be a string, int, uint or bool, not {}",
                                self.name(&kty)
                            ),
                        ));
                    }
                    let (v, mut vty) = self.expr(&me.value)?;
                    if me.optional {
                        vty = match vty {
                            Type::Optional(t) => *t,
                            _ => Type::Dyn,
                        };
                    }
                    kt = Some(if kt.as_ref().is_none_or(|t| *t == kty) {
                        kty
                    } else {
                        Type::Dyn
                    });
                    vt = Some(if vt.as_ref().is_none_or(|t| *t == vty) {
                        vty
                    } else {
                        Type::Dyn
                    });
                    entries.push((k, v, me.optional));
                }
                Ok((
                    Node::Map(entries),
                    Type::Map(
                        Box::new(kt.unwrap_or(Type::Dyn)),
                        Box::new(vt.unwrap_or(Type::Dyn)),
                    ),
                ))
            }
            Expr::Call(call) => self.call(e, call),
            Expr::Comprehension(c) => self.comprehension(e, c),
            Expr::Struct(s) => Err(self.err(
                e,
                format!(
                    "message construction (`{}{{…}}`) is not supported",
                    s.type_name
                ),
            )),
            Expr::Unspecified => Err(self.err(e, "incomplete expression")),
        }
    }

    fn literal(&mut self, e: &IdedExpr, l: &LiteralValue) -> Result<Compiled, CompileError> {
        Ok(match l {
            LiteralValue::Boolean(b) => (Node::Lit(Value::Bool(*b.inner())), Type::Bool),
            LiteralValue::Int(i) => (Node::Lit(Value::from(*i.inner())), Type::Int),
            LiteralValue::UInt(u) => (Node::Uint(*u.inner()), Type::Uint),
            LiteralValue::Double(d) => (Node::Lit(Value::from(*d.inner())), Type::Double),
            LiteralValue::String(s) => (Node::Lit(Value::from(s.inner())), Type::String),
            LiteralValue::Null => (Node::Lit(Value::Null), Type::Null),
            LiteralValue::Bytes(_) => return Err(self.err(e, "bytes literals are not supported")),
        })
    }

    fn ident(&mut self, e: &IdedExpr, name: &str) -> Result<Compiled, CompileError> {
        if let Some((_, index, ty)) = self.scope.iter().rev().find(|(n, _, _)| n == name) {
            return Ok((Node::Local(*index), ty.clone()));
        }
        if let Some(slot) = self.vars.iter().position(|(n, _)| n == name) {
            if !self.globals.contains(&(slot as u32)) {
                self.globals.push(slot as u32);
            }
            return Ok((Node::Global(slot as u32), self.vars[slot].1.clone()));
        }
        if let Some(t) = TYPE_NAMES[..IDENT_TYPE_NAMES].iter().find(|t| **t == name) {
            return Ok((Node::TypeName(t), Type::Type));
        }
        let names = self
            .vars
            .iter()
            .map(|(n, _)| n.as_str())
            .chain(self.scope.iter().map(|(n, _, _)| n.as_str()));
        let hint = crate::error::did_you_mean(name, names);
        Err(self.err(e, format!("undeclared reference to '{name}'{hint}")))
    }

    fn select(
        &mut self,
        e: &IdedExpr,
        operand: &IdedExpr,
        field: &str,
        test: bool,
    ) -> Result<Compiled, CompileError> {
        // `net.IP`, `net.CIDR`, `kubernetes.URL`: the type values of Kubernetes' IP, CIDR and URL
        // libraries, unless a variable has that name.
        if let Expr::Ident(ns) = &operand.expr
            && (ns == "net" || ns == "kubernetes")
            && !test
            && !self.vars.iter().any(|(n, _)| n == ns)
            && !self.scope.iter().any(|(n, _, _)| n == ns)
        {
            match (ns.as_str(), field) {
                ("net", "IP") => return Ok((Node::TypeName("net.IP"), Type::Type)),
                ("net", "CIDR") => return Ok((Node::TypeName("net.CIDR"), Type::Type)),
                ("kubernetes", "URL") => {
                    return Ok((Node::TypeName("kubernetes.URL"), Type::Type));
                }
                _ => {}
            }
        }
        let (base, ty) = self.expr(operand)?;
        match &ty {
            Type::Record(id) => {
                let decl = self.registry.record(*id);
                let Some(index) = decl.fields.iter().position(|(n, _, _)| n == field) else {
                    let hint = crate::error::did_you_mean(
                        field,
                        decl.fields.iter().map(|(n, _, _)| n.as_str()),
                    );
                    return Err(self.err(
                        e,
                        format!("undefined field '{field}' of {}{hint}", decl.name),
                    ));
                };
                if !self.fields.contains(&(*id, index as u32)) {
                    self.fields.push((*id, index as u32));
                }
                let fty = decl.fields[index].1.clone();
                Ok((
                    Node::RecordField {
                        base: Box::new(base),
                        index: index as u32,
                        name: field.to_string(),
                        test,
                    },
                    if test { Type::Bool } else { fty },
                ))
            }
            Type::Optional(inner) if !test => Ok((
                Node::path(base, field, true),
                Type::Optional(Box::new(self.field_type(inner))),
            )),
            Type::Dyn | Type::Map(..) if !test => {
                let fty = self.field_type(&ty);
                Ok((Node::path(base, field, false), fty))
            }
            // `has(a.?b.c)`: false when the optional is empty, else whether its value has
            // the field (cel-go's optional field selection).
            Type::Dyn | Type::Map(..) | Type::Optional(_) => Ok((
                Node::Has {
                    base: Box::new(base),
                    field: field.to_string(),
                },
                Type::Bool,
            )),
            other => Err(self.err(
                e,
                format!(
                    "type '{}' does not support field selection",
                    self.name(other)
                ),
            )),
        }
    }

    /// The type of a field of a value of type `ty`.
    fn field_type(&self, ty: &Type) -> Type {
        match ty {
            Type::Map(_, v) => (**v).clone(),
            _ => Type::Dyn,
        }
    }

    fn call(&mut self, e: &IdedExpr, call: &cel_ast::CallExpr) -> Result<Compiled, CompileError> {
        let name = call.func_name.as_str();
        let args = &call.args;
        let bool_operand = |cx: &mut Self, a: &IdedExpr, op: &str| -> Result<Node, CompileError> {
            let (n, t) = cx.expr(a)?;
            if !t.may_be(&Type::Bool) {
                return Err(cx.no_overload(a, op, &[&t]));
            }
            Ok(n)
        };
        match (name, args.as_slice()) {
            (operators::LOGICAL_AND, [a, b]) | (operators::LOGICAL_OR, [a, b]) => {
                let a = bool_operand(self, a, name)?;
                let b = bool_operand(self, b, name)?;
                let node = if name == operators::LOGICAL_AND {
                    Node::And(Box::new(a), Box::new(b))
                } else {
                    Node::Or(Box::new(a), Box::new(b))
                };
                return Ok((node, Type::Bool));
            }
            (operators::LOGICAL_NOT, [a]) => {
                return Ok((
                    Node::Not(Box::new(bool_operand(self, a, name)?)),
                    Type::Bool,
                ));
            }
            (operators::NEGATE, [a]) => {
                let (n, t) = self.expr(a)?;
                if !matches!(t, Type::Dyn | Type::Int | Type::Double) {
                    return Err(self.no_overload(e, name, &[&t]));
                }
                return Ok((Node::Neg(Box::new(n)), t));
            }
            (operators::CONDITIONAL, [c, a, b]) => {
                let c = bool_operand(self, c, name)?;
                let (a, at) = self.expr(a)?;
                let (b, bt) = self.expr(b)?;
                let ty = if at == bt {
                    at
                } else if at == Type::Null {
                    bt
                } else if bt == Type::Null {
                    at
                } else {
                    Type::Dyn
                };
                return Ok((Node::Cond(Box::new(c), Box::new(a), Box::new(b)), ty));
            }
            (operators::INDEX, [base, index]) | (operators::OPT_INDEX, [base, index]) => {
                let optional = name == operators::OPT_INDEX;
                let (b, bt) = self.expr(base)?;
                let (i, it) = self.expr(index)?;
                let elem = match (&bt, &it) {
                    (Type::List(t), Type::Dyn | Type::Int | Type::Uint) => (**t).clone(),
                    (Type::Map(k, v), it) if k.may_be(it) => (**v).clone(),
                    (Type::Dyn | Type::Record(_), _) => Type::Dyn,
                    (Type::Optional(inner), _) => match &**inner {
                        Type::List(t) => (**t).clone(),
                        other => self.field_type(other),
                    },
                    _ => return Err(self.no_overload(e, name, &[&bt, &it])),
                };
                // An index of an optional is optional too.
                let ty = if optional || matches!(bt, Type::Optional(_)) {
                    Type::Optional(Box::new(elem))
                } else {
                    elem
                };
                return Ok((
                    Node::Index {
                        base: Box::new(b),
                        index: Box::new(i),
                        optional,
                    },
                    ty,
                ));
            }
            (operators::OPT_SELECT, [base, field]) => {
                let Expr::Literal(LiteralValue::String(f)) = &field.expr else {
                    return Err(self.err(field, "`.?` needs a field name"));
                };
                let (b, bt) = self.expr(base)?;
                let fty = match &bt {
                    Type::Record(id) => {
                        let decl = self.registry.record(*id);
                        match decl.fields.iter().find(|(n, _, _)| n == f.inner()) {
                            Some((_, t, _)) => t.clone(),
                            None => {
                                return Err(self.err(
                                    e,
                                    format!("undefined field '{}' of {}", f.inner(), decl.name),
                                ));
                            }
                        }
                    }
                    Type::Optional(inner) => self.field_type(inner),
                    Type::Dyn | Type::Map(..) => self.field_type(&bt),
                    other => {
                        return Err(self.err(
                            e,
                            format!(
                                "type '{}' does not support field selection",
                                self.name(other)
                            ),
                        ));
                    }
                };
                return Ok((
                    Node::path(b, f.inner(), true),
                    Type::Optional(Box::new(fty)),
                ));
            }
            _ => {}
        }
        if let (Some(target), "optMap" | "optFlatMap", [var, body]) =
            (&call.target, name, args.as_slice())
        {
            return self.optional_map(e, name == "optFlatMap", target, var, body);
        }
        if let Some(op) = binary_op(name)
            && let [a, b] = args.as_slice()
        {
            let (an, at) = self.expr(a)?;
            let (bn, bt) = self.expr(b)?;
            let ty = self.check_binary(e, op, name, &at, &bt)?;
            return Ok((Node::Op(op, Box::new(an), Box::new(bn)), ty));
        }
        if name.starts_with('@') || name.starts_with('_') {
            return Err(self.err(e, format!("unsupported operator '{name}'")));
        }
        self.function(e, call)
    }

    fn check_binary(
        &self,
        e: &IdedExpr,
        op: Op,
        name: &str,
        a: &Type,
        b: &Type,
    ) -> Result<Type, CompileError> {
        let dynamic = |t: &Type| matches!(t, Type::Dyn | Type::Param(_));
        let fail = || self.no_overload(e, name, &[a, b]);
        match op {
            Op::Eq | Op::Ne => {
                let comparable = dynamic(a)
                    || dynamic(b)
                    || a.may_be(b)
                    || (is_numeric(a) && is_numeric(b))
                    || *a == Type::Null
                    || *b == Type::Null
                    // Lists and maps compare element by element with CEL's heterogeneous
                    // equality whatever their element types (`[1] == [1.0]`, `['a'] == [2]`
                    // check in cel-go and evaluate to a bool).
                    || matches!(
                        (a, b),
                        (Type::Record(_), Type::Map(..))
                            | (Type::Map(..), Type::Record(_))
                            | (Type::List(_), Type::List(_))
                            | (Type::Map(..), Type::Map(..))
                    );
                if comparable {
                    Ok(Type::Bool)
                } else {
                    Err(fail())
                }
            }
            Op::Lt | Op::Le | Op::Gt | Op::Ge => {
                let orderable = |t: &Type| {
                    dynamic(t)
                        || matches!(
                            t,
                            Type::Int | Type::Uint | Type::Double | Type::String | Type::Bool
                        )
                };
                if orderable(a)
                    && orderable(b)
                    && (dynamic(a) || dynamic(b) || a == b || (is_numeric(a) && is_numeric(b)))
                {
                    Ok(Type::Bool)
                } else {
                    Err(fail())
                }
            }
            Op::In => match b {
                Type::List(t) if t.may_be(a) || (is_numeric(t) && is_numeric(a)) => Ok(Type::Bool),
                Type::Map(k, _) if k.may_be(a) => Ok(Type::Bool),
                Type::Dyn | Type::Record(_) => Ok(Type::Bool),
                _ => Err(fail()),
            },
            Op::Add => match (a, b) {
                (x, y) if dynamic(x) || dynamic(y) => {
                    Ok(if dynamic(x) { y.clone() } else { x.clone() }).map(|t| match t {
                        Type::List(_) => Type::list(Type::Dyn),
                        t if dynamic(&t) => Type::Dyn,
                        t => t,
                    })
                }
                (Type::List(x), Type::List(y)) => {
                    Ok(Type::list(if x == y { (**x).clone() } else { Type::Dyn }))
                }
                (x, y)
                    if x == y
                        && matches!(
                            x,
                            Type::Int | Type::Uint | Type::Double | Type::String | Type::Bytes
                        ) =>
                {
                    Ok(x.clone())
                }
                _ => Err(fail()),
            },
            Op::Sub | Op::Mul | Op::Div | Op::Rem => {
                let ok = |t: &Type| {
                    dynamic(t)
                        || matches!(t, Type::Int | Type::Uint)
                        || (*t == Type::Double && op != Op::Rem)
                };
                if ok(a) && ok(b) && (dynamic(a) || dynamic(b) || a == b) {
                    Ok(if dynamic(a) { b.clone() } else { a.clone() })
                } else {
                    Err(fail())
                }
            }
        }
    }

    fn function(
        &mut self,
        e: &IdedExpr,
        call: &cel_ast::CallExpr,
    ) -> Result<Compiled, CompileError> {
        // `range.all(k, v, p)` and the other two-variable macros, which the parser leaves as
        // calls (it expands only the one-variable macros).
        if let Some(range) = call.target.as_deref()
            && let Some(kind) = Macro2::from_name(&call.func_name)
            && (call.args.len() == 3 || (kind.filters() && call.args.len() == 4))
            && let [first, second, ..] = call.args.as_slice()
            && let (Expr::Ident(a), Expr::Ident(b)) = (&first.expr, &second.expr)
        {
            let (filter, body) = match &call.args[2..] {
                [body] => (None, body),
                [filter, body] => (Some(filter), body),
                _ => unreachable!("three or four arguments"),
            };
            return self.comprehension2(e, kind, range, (a, b), filter, body);
        }
        // `optional.of(x)`, `strings.quote(s)`: a qualified global function, not a method call on
        // a variable named `optional`.
        let mut target = call.target.as_deref();
        let mut name = call.func_name.clone();
        if let Some(t) = target
            && let Expr::Ident(ns) = &t.expr
            && !self.vars.iter().any(|(n, _)| n == ns)
            && !self.scope.iter().any(|(n, _, _)| n == ns)
            && !self.registry.overloads(&format!("{ns}.{name}")).is_empty()
        {
            name = format!("{ns}.{name}");
            target = None;
        }
        let overloads = self.registry.overloads(&name);
        if overloads.is_empty() {
            let hint =
                crate::error::did_you_mean(&name, self.registry.all().iter().map(|o| o.name));
            return Err(self.err(e, format!("undeclared reference to '{name}'{hint}")));
        }
        let mut nodes = Vec::new();
        let mut types = Vec::new();
        let mut literal_args: Vec<Option<&str>> = Vec::new();
        for a in target.into_iter().chain(&call.args) {
            let (n, t) = self.expr(a)?;
            literal_args.push(match &a.expr {
                Expr::Literal(LiteralValue::String(s)) => Some(s.inner()),
                _ => None,
            });
            nodes.push(n);
            types.push(t);
        }
        let arg_exprs: Vec<&IdedExpr> = target.into_iter().chain(&call.args).collect();
        let receiver = target.is_some();
        let shaped: Vec<&Overload> = overloads
            .iter()
            .filter(|o| o.receiver == receiver && o.params.len() == nodes.len())
            .collect();
        let matching: Vec<(&Overload, Type)> = shaped
            .iter()
            .filter_map(|o| {
                let mut bound = [None, None];
                o.params
                    .iter()
                    .zip(&types)
                    .all(|(p, t)| p.bind(t, &mut bound))
                    .then(|| (*o, o.result.substitute(&bound)))
            })
            .collect();
        if matching.is_empty() {
            let shown = if receiver {
                format!("{}.{}", self.name(&types[0]), name)
            } else {
                name.clone()
            };
            let rest = if receiver { &types[1..] } else { &types[..] };
            let mut err = self.no_overload(e, &shown, &rest.iter().collect::<Vec<_>>());
            if shaped.is_empty() {
                let sigs: Vec<&str> = overloads.iter().map(|o| o.signature).collect();
                err.message
                    .push_str(&format!(" (it is {})", sigs.join(", ")));
            }
            return Err(err);
        }
        let ty = if matching.iter().all(|(_, t)| *t == matching[0].1) {
            matching[0].1.clone()
        } else {
            Type::Dyn
        };
        let mut candidates = Vec::new();
        for (o, _) in &matching {
            let index = overloads
                .iter()
                .position(|x| std::ptr::eq(x, *o))
                .expect("a matching overload is one of the function's");
            let prepared = OnceLock::new();
            let mut literal = None;
            if let Some((at, prepare)) = o.prepare
                && let Some(text) = literal_args.get(at).copied().flatten()
            {
                let made = prepare(text).map_err(|m| self.err(arg_exprs[at], m))?;
                let _ = prepared.set(Some(made));
                literal = Some((text.to_string(), prepare));
            }
            candidates.push(Candidate {
                params: o.params.clone(),
                imp: o.imp,
                overload: (o.name, index as u16),
                literal,
                prepared,
            });
        }
        self.calls.push((
            matching[0].0.name,
            literal_args.first().copied().flatten().map(str::to_string),
        ));
        Ok((
            Node::Call {
                name: matching[0].0.name,
                candidates,
                args: nodes,
            },
            ty,
        ))
    }

    fn comprehension(
        &mut self,
        e: &IdedExpr,
        c: &ComprehensionExpr,
    ) -> Result<Compiled, CompileError> {
        let Some((kind, body, filter)) = recognise(c) else {
            return Err(self.err(e, "unsupported comprehension"));
        };
        if c.iter_var2.is_some() {
            return Err(self.err(e, "two-variable comprehensions are not supported"));
        }
        let (range, rt) = self.expr(&c.iter_range)?;
        let elem = match &rt {
            Type::List(t) => (**t).clone(),
            Type::Map(k, _) => (**k).clone(),
            Type::Dyn => Type::Dyn,
            other => {
                return Err(self.err(
                    &c.iter_range,
                    format!(
                        "expression of type '{}' cannot be the range of a comprehension",
                        self.name(other)
                    ),
                ));
            }
        };
        let (var, result) = self.with_local(&c.iter_var, elem.clone(), |cx| {
            let filter = match filter {
                Some(f) => {
                    let (n, t) = cx.expr(f)?;
                    if !t.may_be(&Type::Bool) {
                        return Err(cx.no_overload(f, kind.name(), &[&t]));
                    }
                    Some(Box::new(n))
                }
                None => None,
            };
            let (b, bt) = cx.expr(body)?;
            let ty = match kind {
                Macro::All | Macro::Exists | Macro::ExistsOne | Macro::Filter => {
                    if !bt.may_be(&Type::Bool) {
                        return Err(cx.err(
                            body,
                            format!(
                                "the predicate of `{}` is of type {}, not bool",
                                kind.name(),
                                cx.name(&bt)
                            ),
                        ));
                    }
                    if kind == Macro::Filter {
                        Type::list(elem.clone())
                    } else {
                        Type::Bool
                    }
                }
                Macro::Map => Type::list(bt),
            };
            Ok((filter, b, ty))
        });
        let (filter, b, ty) = result?;
        Ok((
            Node::Comprehension {
                kind,
                range: Box::new(range),
                var,
                body: Box::new(b),
                filter,
            },
            ty,
        ))
    }

    fn comprehension2(
        &mut self,
        e: &IdedExpr,
        kind: Macro2,
        range: &IdedExpr,
        (first, second): (&str, &str),
        filter: Option<&IdedExpr>,
        body: &IdedExpr,
    ) -> Result<Compiled, CompileError> {
        if first == second {
            return Err(self.err(
                e,
                format!("`{}` needs two different variable names", kind.name()),
            ));
        }
        let (range_node, rt) = self.expr(range)?;
        let (key, value) = match &rt {
            Type::List(t) => (Type::Int, (**t).clone()),
            Type::Map(k, v) => ((**k).clone(), (**v).clone()),
            Type::Dyn => (Type::Dyn, Type::Dyn),
            other => {
                return Err(self.err(
                    range,
                    format!(
                        "expression of type '{}' cannot be the range of a comprehension",
                        self.name(other)
                    ),
                ));
            }
        };
        let (var1, inner) = self.with_local(first, key.clone(), |cx| {
            cx.with_local(second, value, |cx| -> Result<_, CompileError> {
                let filter = match filter {
                    Some(f) => {
                        let (n, t) = cx.expr(f)?;
                        if !t.may_be(&Type::Bool) {
                            return Err(cx.no_overload(f, kind.name(), &[&t]));
                        }
                        Some(Box::new(n))
                    }
                    None => None,
                };
                let (b, bt) = cx.expr(body)?;
                let ty = match kind {
                    Macro2::All | Macro2::Exists | Macro2::ExistsOne => {
                        if !bt.may_be(&Type::Bool) {
                            return Err(cx.err(
                                body,
                                format!(
                                    "the predicate of `{}` is of type {}, not bool",
                                    kind.name(),
                                    cx.name(&bt)
                                ),
                            ));
                        }
                        Type::Bool
                    }
                    Macro2::TransformList => Type::list(bt),
                    Macro2::TransformMap => Type::Map(Box::new(key.clone()), Box::new(bt)),
                    Macro2::TransformMapEntry => match bt {
                        Type::Map(..) | Type::Dyn => bt,
                        other => {
                            return Err(cx.err(
                                body,
                                format!(
                                    "the expression of `transformMapEntry` is of type {}, not a map",
                                    cx.name(&other)
                                ),
                            ));
                        }
                    },
                };
                Ok((filter, b, ty))
            })
        });
        let (var2, result) = inner;
        let (filter, b, ty) = result?;
        Ok((
            Node::Comprehension2 {
                kind,
                range: Box::new(range_node),
                vars: (var1, var2),
                body: Box::new(b),
                filter,
            },
            ty,
        ))
    }

    /// Compiles `f` with a new local variable `name` of type `ty` in scope (a macro's or
    /// `optMap`'s variable): the local's index and what `f` gave.
    fn with_local<T>(&mut self, name: &str, ty: Type, f: impl FnOnce(&mut Self) -> T) -> (u32, T) {
        let local = self.locals;
        self.locals += 1;
        self.scope.push((name.to_string(), local, ty));
        let result = f(self);
        self.scope.pop();
        (local, result)
    }

    /// `opt.optMap(v, f)` and `opt.optFlatMap(v, f)`, the optional library's macros (cel-go
    /// expands them with `cel.bind`): `f` with `v` bound to the optional's value, run only when
    /// the optional has one.
    fn optional_map(
        &mut self,
        e: &IdedExpr,
        flat: bool,
        target: &IdedExpr,
        var: &IdedExpr,
        body: &IdedExpr,
    ) -> Result<Compiled, CompileError> {
        let function = if flat { "optFlatMap" } else { "optMap" };
        let Expr::Ident(name) = &var.expr else {
            return Err(self.err(var, format!("`{function}` needs a variable name")));
        };
        let (range, rt) = self.expr(target)?;
        let elem = match &rt {
            Type::Optional(t) => (**t).clone(),
            Type::Dyn => Type::Dyn,
            other => return Err(self.no_overload(e, function, &[other])),
        };
        let (local, compiled) = self.with_local(name, elem, |cx| cx.expr(body));
        let (b, bt) = compiled?;
        let ty = match (flat, bt) {
            (false, bt) => Type::Optional(Box::new(bt)),
            (true, bt @ (Type::Optional(_) | Type::Dyn)) => bt,
            (true, other) => {
                return Err(self.err(
                    body,
                    format!(
                        "the result of `optFlatMap` is of type {}, not an optional",
                        self.name(&other)
                    ),
                ));
            }
        };
        Ok((
            Node::OptionalMap {
                flat,
                optional: Box::new(range),
                var: local,
                body: Box::new(b),
            },
            ty,
        ))
    }
}

fn binary_op(name: &str) -> Option<Op> {
    Some(match name {
        operators::EQUALS => Op::Eq,
        operators::NOT_EQUALS => Op::Ne,
        operators::LESS => Op::Lt,
        operators::LESS_EQUALS => Op::Le,
        operators::GREATER => Op::Gt,
        operators::GREATER_EQUALS => Op::Ge,
        operators::IN => Op::In,
        operators::ADD => Op::Add,
        operators::SUBSTRACT => Op::Sub,
        operators::MULTIPLY => Op::Mul,
        operators::DIVIDE => Op::Div,
        operators::MODULO => Op::Rem,
        _ => return None,
    })
}

fn call_args<'e>(e: &'e IdedExpr, func: &str) -> Option<&'e [IdedExpr]> {
    match &e.expr {
        Expr::Call(c) if c.func_name == func && c.target.is_none() => Some(&c.args),
        _ => None,
    }
}

fn is_ident(e: &IdedExpr, name: &str) -> bool {
    matches!(&e.expr, Expr::Ident(n) if n == name)
}

/// Which standard macro a comprehension is, from the shape the parser's expanders give it:
/// the macro, its body (predicate or transform) and `map`'s filter.
fn recognise(c: &ComprehensionExpr) -> Option<(Macro, &IdedExpr, Option<&IdedExpr>)> {
    let accu = c.accu_var.as_str();
    let init = &c.accu_init.expr;
    match init {
        Expr::Literal(LiteralValue::Boolean(b)) => {
            let op = if *b.inner() {
                operators::LOGICAL_AND
            } else {
                operators::LOGICAL_OR
            };
            let [a, body] = call_args(&c.loop_step, op)? else {
                return None;
            };
            is_ident(a, accu).then_some((
                if *b.inner() {
                    Macro::All
                } else {
                    Macro::Exists
                },
                body,
                None,
            ))
        }
        Expr::Literal(LiteralValue::Int(_)) => {
            let [pred, _, _] = call_args(&c.loop_step, operators::CONDITIONAL)? else {
                return None;
            };
            Some((Macro::ExistsOne, pred, None))
        }
        Expr::List(l) if l.elements.is_empty() => {
            // `@result + [f]`, or `filter ? @result + [f] : @result`.
            if let Some(f) = append(&c.loop_step, accu) {
                return Some((Macro::Map, f, None));
            }
            let [cond, step, _] = call_args(&c.loop_step, operators::CONDITIONAL)? else {
                return None;
            };
            let f = append(step, accu)?;
            if is_ident(f, &c.iter_var) {
                Some((Macro::Filter, cond, None))
            } else {
                Some((Macro::Map, f, Some(cond)))
            }
        }
        _ => None,
    }
}

/// `f` of a step `accu + [f]`.
fn append<'e>(step: &'e IdedExpr, accu: &str) -> Option<&'e IdedExpr> {
    let [a, list] = call_args(step, operators::ADD)? else {
        return None;
    };
    match (&a.expr, &list.expr) {
        (Expr::Ident(n), Expr::List(l)) if n == accu && l.elements.len() == 1 => {
            Some(&l.elements[0])
        }
        _ => None,
    }
}
