//! The syntax tree of a template: Go's `text/template/parse` nodes (what `gotmpl`'s tree has,
//! and a unit test checks the two agree), laid out for a render that parses every template and
//! runs it once.
//!
//! Why our own and not gotmpl's: a chart render parses every template, helpers included, before
//! it runs any, so every render builds every tree. gotmpl's tree copies every text and name into a
//! string of its own, allocates node by node and leaves functions to be found by name at every
//! call. Here the nodes of a render live in one arena (`bumpalo`: allocated by bumping a
//! pointer, freed at once when the render ends), texts and names are byte ranges of the template
//! source (which the executor holds), string literals are the `Rc<str>` a template value holds
//! (shared, not copied, each time they run), and functions are resolved while parsing.

use std::rc::Rc;

use super::funcs::Func;
use super::pos::{Pos, Span};

/// A sequence of nodes (a template body, a branch).
#[derive(Debug)]
pub(crate) struct ListNode<'a> {
    pub nodes: &'a [Node<'a>],
}

impl ListNode<'_> {
    /// Whether the list holds nothing but white space (Go's `IsEmptyTree`: an empty
    /// `define` does not replace an earlier one).
    pub(crate) fn is_empty_tree(&self, src: &str) -> bool {
        self.nodes.iter().all(|n| match n {
            Node::Text(text) => text.of(src).chars().all(char::is_whitespace),
            _ => false,
        })
    }
}

#[derive(Debug)]
pub(crate) enum Node<'a> {
    /// Text between actions, after trim markers.
    Text(Span),
    /// `{{ pipeline }}`: printed unless it declares variables.
    Action(Pos, PipeNode<'a>),
    If(&'a BranchNode<'a>),
    Range(&'a BranchNode<'a>),
    With(&'a BranchNode<'a>),
    Template(&'a TemplateNode<'a>),
    Break,
    Continue,
}

/// `if`, `with` and `range`: a pipeline, a body and an optional `else` (an `else if` is an `if`
/// alone in the else body, as Go builds it).
#[derive(Debug)]
pub(crate) struct BranchNode<'a> {
    pub pos: Pos,
    pub pipe: PipeNode<'a>,
    pub body: ListNode<'a>,
    pub else_body: Option<ListNode<'a>>,
}

/// `{{template "name" pipeline}}`.
#[derive(Debug)]
pub(crate) struct TemplateNode<'a> {
    pub pos: Pos,
    pub name: &'a str,
    pub pipe: Option<PipeNode<'a>>,
}

/// `{{define "name"}}…{{end}}` (and the definition half of a `block`).
#[derive(Debug)]
pub(crate) struct DefineNode<'a> {
    pub name: String,
    pub body: ListNode<'a>,
}

/// Commands joined by `|`, with the variables it declares or assigns (`$x :=`, `$i, $v :=`).
#[derive(Debug)]
pub(crate) struct PipeNode<'a> {
    /// The variables' names, `$` included.
    pub decl: &'a [Span],
    pub commands: &'a [CommandNode<'a>],
    pub is_assign: bool,
}

/// One command: an operand and its arguments.
#[derive(Debug)]
pub(crate) struct CommandNode<'a> {
    pub args: &'a [Expr<'a>],
}

/// A number literal as Go's parser types it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Number {
    Int(i64),
    /// Too big for `int64`, fits `uint64`.
    Uint(u64),
    Float(f64),
}

/// What a function name calls: `and`/`or` (which stop at the deciding argument, so they are
/// the executor's) or a function of the table.
#[derive(Clone, Copy)]
pub(crate) enum Callee {
    And,
    Or,
    Func(Func),
}

impl std::fmt::Debug for Callee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Callee::And => "and",
            Callee::Or => "or",
            Callee::Func(_) => "func",
        })
    }
}

#[derive(Debug)]
pub(crate) enum Expr<'a> {
    /// `.`
    Dot(Pos),
    /// `.a.b`: the field names without their dots.
    Field(Pos, &'a [Span]),
    /// `$x.a.b`: the variable (with its `$`) and the fields after it.
    Variable(Pos, Span, &'a [Span]),
    /// A function name, resolved.
    Function(Pos, Span, Callee),
    /// A string literal: its place in the body's [`Literals`].
    String(Pos, u32),
    Number(Pos, Number),
    Bool(Pos, bool),
    Nil(Pos),
    /// `(pipeline)`.
    Pipe(Pos, &'a PipeNode<'a>),
    /// `(…).a.b`: fields of a parenthesised pipeline's (or function's) value.
    Chain(Pos, &'a Expr<'a>, &'a [Span]),
}

/// A parsed text's string literals, as the template values they become (shared, not copied,
/// each time they run). Kept beside the tree, not in its arena: an arena runs no destructors.
pub(crate) type Literals = Rc<[Rc<str>]>;

impl Expr<'_> {
    pub(crate) fn pos(&self) -> Pos {
        match self {
            Expr::Dot(p)
            | Expr::Field(p, _)
            | Expr::Variable(p, ..)
            | Expr::Function(p, ..)
            | Expr::String(p, _)
            | Expr::Number(p, _)
            | Expr::Bool(p, _)
            | Expr::Nil(p)
            | Expr::Pipe(p, _)
            | Expr::Chain(p, ..) => *p,
        }
    }
}
