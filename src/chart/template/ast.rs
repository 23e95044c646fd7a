//! The syntax tree of a template: Go's `text/template/parse` nodes (what `gotmpl`'s tree has,
//! and a unit test checks the two agree), laid out for a render that parses every template and
//! runs it once.
//!
//! Why our own and not gotmpl's: a chart render parses every template before it runs any, so
//! building the tree was half of a render. gotmpl's tree copies every text and name into a
//! string of its own and leaves functions to be found by name at every call. Here text and names
//! are byte ranges of the template source (which the executor holds), string literals are the
//! `Rc<str>` a template value holds (shared, not copied, each time they run), and functions are
//! resolved while parsing.

use std::rc::Rc;

use super::funcs::Func;

/// A position in a template: byte offset and 1-based line (Go's `Pos` and line). 32 bits each:
/// templates are far below 4 GiB (chart files are read whole into memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Pos {
    pub offset: u32,
    pub line: u32,
}

/// A byte range of the template source: a text, a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The text this span covers in `src` (the source it was parsed from).
    pub fn of(self, src: &str) -> &str {
        &src[self.start as usize..self.end as usize]
    }
}

/// A sequence of nodes (a template body, a branch).
#[derive(Debug, Default)]
pub struct ListNode {
    pub nodes: Vec<Node>,
}

impl ListNode {
    /// Whether the list holds nothing but white space (Go's `IsEmptyTree`: an empty
    /// `define` does not replace an earlier one).
    pub fn is_empty_tree(&self, src: &str) -> bool {
        self.nodes.iter().all(|n| match n {
            Node::Text(text) => text.of(src).chars().all(char::is_whitespace),
            _ => false,
        })
    }
}

#[derive(Debug)]
pub enum Node {
    /// Text between actions, after trim markers.
    Text(Span),
    /// `{{ pipeline }}`: printed unless it declares variables.
    Action(Pos, PipeNode),
    If(Box<BranchNode>),
    Range(Box<BranchNode>),
    With(Box<BranchNode>),
    Template(Box<TemplateNode>),
    Break,
    Continue,
}

/// `if`, `with` and `range`: a pipeline, a body and an optional `else` (an `else if` is an `if`
/// alone in the else body, as Go builds it).
#[derive(Debug)]
pub struct BranchNode {
    pub pos: Pos,
    pub pipe: PipeNode,
    pub body: ListNode,
    pub else_body: Option<ListNode>,
}

/// `{{template "name" pipeline}}`.
#[derive(Debug)]
pub struct TemplateNode {
    pub pos: Pos,
    pub name: Box<str>,
    pub pipe: Option<PipeNode>,
}

/// `{{define "name"}}…{{end}}` (and the definition half of a `block`).
#[derive(Debug)]
pub struct DefineNode {
    pub name: String,
    pub body: ListNode,
}

/// Commands joined by `|`, with the variables it declares or assigns (`$x :=`, `$i, $v :=`).
#[derive(Debug)]
pub struct PipeNode {
    /// The variables' names, `$` included.
    pub decl: Vec<Span>,
    pub commands: Vec<CommandNode>,
    pub is_assign: bool,
}

/// One command: an operand and its arguments.
#[derive(Debug)]
pub struct CommandNode {
    /// Inline up to two (most commands: `.Values.x`, `quote`, `nindent 4`): no allocation.
    pub args: smallvec::SmallVec<[Expr; 2]>,
}

/// A number literal as Go's parser types it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Number {
    Int(i64),
    /// Too big for `int64`, fits `uint64`.
    Uint(u64),
    Float(f64),
}

/// What a function name calls: `and`/`or` (which stop at the deciding argument, so they are
/// the executor's) or a function of the table.
#[derive(Clone, Copy)]
pub enum Callee {
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
pub enum Expr {
    /// `.`
    Dot(Pos),
    /// `.a.b`: the field names without their dots.
    Field(Pos, Box<[Span]>),
    /// `$x.a.b`: the variable (with its `$`) and the fields after it.
    Variable(Pos, Span, Box<[Span]>),
    /// A function name, resolved.
    Function(Pos, Span, Callee),
    String(Pos, Rc<str>),
    Number(Pos, Number),
    Bool(Pos, bool),
    Nil(Pos),
    /// `(pipeline)`.
    Pipe(Pos, Box<PipeNode>),
    /// `(…).a.b`: fields of a parenthesised pipeline's (or function's) value.
    Chain(Pos, Box<Expr>, Box<[Span]>),
}

impl Expr {
    pub fn pos(&self) -> Pos {
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
