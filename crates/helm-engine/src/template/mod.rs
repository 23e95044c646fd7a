//! Go's `text/template`, executed the way Helm executes it.
//!
//! The syntax tree is Go's (trim markers, `break`/`continue`, `define`/`block`, number literals,
//! a line on every node), in our own layout ([`ast`]: names and texts are ranges of the source,
//! functions resolved while parsing); our `parse` module builds it with Go's parse-time errors,
//! and a unit test checks its trees against the `gotmpl` crate's parser. Execution is our own,
//! because gotmpl's executor cannot do what Helm needs: its functions get no access to the
//! template set (Helm's `include` and `tpl` execute other templates), a field can't be a method
//! with arguments (`.Files.Get "x"`, `.Capabilities.APIVersions.Has "v1"`), its values have one
//! integer type (Helm values are `float64` and print as `1e+06`; literals are `int`, Sprig returns
//! `int64`), and its run-time errors carry no position (Helm reports `file:line:col`). Execution
//! is bounded in steps, output and `include` depth, so a template can neither hang nor fill memory.

pub(crate) mod ast;
pub mod certs;
pub mod crypto;
pub mod digest;
pub mod funcs;
pub mod gostring;
mod parse;
mod pos;
pub mod random;
pub mod semver;
pub mod time;
pub mod value;
pub mod yaml;

use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

use std::sync::Arc;

use bumpalo::Bump;

use ast::{BranchNode, Callee, CommandNode, Expr, ListNode, Literals, Node, Number, PipeNode};
use pos::{Pos, Span};

pub use value::{Object, Value};

/// Helm's bound on how deep one template name may `include` itself.
const MAX_INCLUDE_DEPTH: usize = 1000;
/// How many nodes one render may execute: far above any real chart, low enough to stop a
/// template that would run for hours (`range until 1000000000`).
const MAX_STEPS: u64 = 50_000_000;
/// When less stack than this is left, a nested parse or run continues on a new segment of
/// [`STACK_GROWTH`] bytes ([`with_stack`]).
const STACK_RED_ZONE: usize = 128 * 1024;
const STACK_GROWTH: usize = 4 * 1024 * 1024;

/// Runs `f`, on a new stack segment when the thread's is running low. Templates nest as deeply
/// as Helm lets them (hundreds of thousands of `if`s, a thousand `include`s), and parsing and
/// running them recurse once per level: far more stack than a thread has. `stacker` grows it on
/// demand, as rustc does for its own deep recursion, so the bounds are the parser's and
/// `include`'s, never the thread's.
fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, f)
}
/// How much text one render may produce.
const MAX_OUTPUT: usize = 128 * 1024 * 1024;
/// How much all the values functions build in one render may add up to (strings, list slots,
/// map entries): a template doubling a string or list in a variable, or building big values
/// in a loop, stops here instead of exhausting memory. Real charts build a few hundred MiB
/// at most.
const MAX_ALLOCATED: usize = 4 << 30;
/// How deeply lists and maps a template builds may nest (`$d = dict "a" $d` in a loop): far
/// beyond real charts (values files stop at 512), and shallow enough that converting,
/// printing or freeing such a value cannot overflow the stack.
const MAX_DEPTH: u32 = 1000;

/// A template error: which template, where, and what (Go's and Helm's wording).
#[derive(Debug, Clone, PartialEq)]
pub struct TemplateError {
    /// The template file (`mychart/templates/deployment.yaml`).
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub message: String,
    pub kind: ErrorKind,
    /// For execution errors, Go's `executing "NAME" at <EXPR>`.
    pub context: Option<String>,
    /// The `include`s that led to an execution error, outermost first: Go's error wraps the
    /// included template's once for each, and Helm shows each.
    pub callers: Vec<Caller>,
    /// Go's innermost error wraps one that is not a template's (a function's own error, as in
    /// `error calling dig: …`): Helm cannot take such a chain apart and prints Go's one line.
    pub wrapped: bool,
}

/// An `include` an execution error passed through: where, and Go's `executing "NAME" at
/// <include …>` there.
#[derive(Debug, Clone, PartialEq)]
pub struct Caller {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub context: String,
}

impl TemplateError {
    fn new(file: &str, line: usize, message: String, kind: ErrorKind) -> TemplateError {
        TemplateError {
            file: file.into(),
            line,
            column: 0,
            message,
            kind,
            context: None,
            callers: Vec::new(),
            wrapped: false,
        }
    }

    /// Go's error text, one line: each include's wrapping, then the innermost error.
    fn go_text(&self) -> String {
        let mut text = String::new();
        for c in &self.callers {
            text += &format!(
                "template: {}:{}:{}: {}: error calling include: ",
                c.file, c.line, c.column, c.context
            );
        }
        text += &match &self.context {
            Some(context) => format!(
                "template: {}:{}:{}: {context}: {}",
                self.file, self.line, self.column, self.message
            ),
            None => self.message.clone(),
        };
        text
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ErrorKind {
    /// The template text does not parse.
    Parse,
    /// `fail` or `required`: Helm shows just the message.
    Fail,
    /// Anything else that went wrong while executing.
    Exec,
}

impl std::fmt::Display for TemplateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            // Helm's `cleanupParseError` keeps what follows the last `": "` of Go's message.
            ErrorKind::Parse => write!(
                f,
                "parse error at ({}:{}): {}",
                self.file,
                self.line,
                self.message.rsplit(": ").next().unwrap_or_default()
            ),
            ErrorKind::Fail => write!(
                f,
                "execution error at ({}:{}:{}): {}",
                self.file, self.line, self.column, self.message
            ),
            // Helm 4 (`reformatExecErrorMsg`) writes each error of Go's chain over three lines,
            // when every one of them is a template's; otherwise Go's one line.
            ErrorKind::Exec if self.wrapped => f.write_str(&self.go_text()),
            ErrorKind::Exec => {
                for c in &self.callers {
                    writeln!(
                        f,
                        "{}:{}:{}\n  {}:\n    error calling include:",
                        c.file, c.line, c.column, c.context
                    )?;
                }
                match &self.context {
                    Some(context) => write!(
                        f,
                        "{}:{}:{}\n  {context}:\n    {}",
                        self.file, self.line, self.column, self.message
                    ),
                    None => f.write_str(&self.message),
                }
            }
        }
    }
}

/// A parsed body: its tree, the source its names and texts are ranges of, its string
/// literals, the file it came from (for positions) and its name (a file's, a `define`'s, or
/// `tpl`).
struct Body<'a> {
    list: ListNode<'a>,
    source: Arc<str>,
    literals: Literals,
    file: Rc<str>,
    name: Rc<str>,
}

impl<'a> Body<'a> {
    /// The bodies a parsed text `define`s, by name, sharing its source and literals.
    fn defined(
        defines: Vec<ast::DefineNode<'a>>,
        source: &Arc<str>,
        literals: &Literals,
        file: &Rc<str>,
    ) -> impl Iterator<Item = (String, Rc<Body<'a>>)> {
        defines.into_iter().map(|d| {
            let body = Body {
                list: d.body,
                source: source.clone(),
                literals: literals.clone(),
                file: file.clone(),
                name: d.name.as_str().into(),
            };
            (d.name, Rc::new(body))
        })
    }
}

/// How much a render's syntax trees may take (`tpl` parses while a render runs, and a template
/// could call it in a loop on ever new text).
const MAX_TREES: usize = if cfg!(test) {
    // Small in tests, so the bound is reached quickly.
    1024 * 1024
} else {
    256 * 1024 * 1024
};

/// Every template of a render: the files and the `define`s in them, by name; their trees live
/// in `arena`, freed at once with it when the render ends.
pub struct TemplateSet<'a> {
    arena: &'a Bump,
    bodies: HashMap<String, Rc<Body<'a>>>,
    /// What the functions of every render of this set have built (see [`MAX_ALLOCATED`]):
    /// one budget for a chart's templates together.
    allocated: std::cell::Cell<usize>,
    /// How deeply each list or map a render has seen nests, by its address (see
    /// [`MAX_DEPTH`]). Every container made during a render is a function's result and is
    /// entered when it is made; a function that changes a map in place clears it all.
    depths: std::cell::RefCell<rustc_hash::FxHashMap<usize, u32>>,
    /// The `.Values` trees renders of this set have traced, by the tree's address: each
    /// indexed once for all of a chart's templates (see [`Exec::value_paths`]). The tree is
    /// kept with its index, so its address cannot be reused by another while the set lives.
    value_indexes: std::cell::RefCell<rustc_hash::FxHashMap<usize, (Value, Rc<ValueIndex>)>>,
    /// The maps that are Helm `Values` (each render's `.Values`, and what its `Table` method
    /// returned), by address, kept alive so an address is not reused: a `Values` is a Go map type
    /// with methods (`AsMap`, `Table`, `PathValue`, `YAML`), a plain map has none.
    values_tables: std::cell::RefCell<rustc_hash::FxHashMap<usize, Value>>,
}

/// A `.Values` tree's nodes by address, with their values paths.
type ValueIndex = HashMap<usize, Rc<str>>;

impl<'a> TemplateSet<'a> {
    pub fn new(arena: &'a Bump) -> Self {
        TemplateSet {
            arena,
            bodies: HashMap::default(),
            allocated: std::cell::Cell::new(0),
            depths: Default::default(),
            value_indexes: Default::default(),
            values_tables: Default::default(),
        }
    }

    /// Parses a file into the set. Definitions replace earlier ones of the same name (Helm
    /// parses parent charts after subcharts so the parent's win).
    pub fn add(&mut self, file: &str, text: Arc<str>) -> Result<()> {
        let file: Rc<str> = file.into();
        let parse::Parsed {
            list,
            defines,
            literals,
        } = parse(&file, &text, self.arena)?;
        for (name, body) in Body::defined(defines, &text, &literals, &file) {
            // Go keeps an earlier non-empty definition over a later empty one.
            if body.list.is_empty_tree(&text) && self.bodies.contains_key(&name) {
                continue;
            }
            self.bodies.insert(name, body);
        }
        if !list.is_empty_tree(&text) || !self.bodies.contains_key(&*file) {
            let body = Body {
                list,
                source: text,
                literals,
                file: file.clone(),
                name: file.clone(),
            };
            self.bodies.insert(file.to_string(), Rc::new(body));
        }
        Ok(())
    }

    /// Marks `values` (a map) as a Helm `Values`, whose methods templates can call.
    fn mark_values_table(&self, values: &Value) {
        if let Value::Map(m) = values {
            self.values_tables
                .borrow_mut()
                .entry(Rc::as_ptr(m) as usize)
                .or_insert_with(|| values.clone());
        }
    }

    fn is_values_table(&self, m: &value::MapRef) -> bool {
        self.values_tables
            .borrow()
            .contains_key(&(Rc::as_ptr(m) as usize))
    }

    /// Executes the template `name` with `data` as dot and `$`. Helm removes every
    /// `<no value>` from the result.
    pub fn render(&self, name: &str, data: &Value) -> Result<String> {
        self.render_marked(name, data).map(|(out, _)| out)
    }

    /// Renders like [`TemplateSet::render`], with where each stretch of the output came from.
    pub fn render_marked(&self, name: &str, data: &Value) -> Result<(String, Marks)> {
        let body = self.bodies.get(name).ok_or_else(|| {
            TemplateError::new(
                name,
                0,
                format!("template: no template {name:?} associated with template \"gotpl\""),
                ErrorKind::Exec,
            )
        })?;
        if let Value::Map(data_map) = data
            && let Some(values @ Value::Map(_)) = data_map.borrow().get("Values")
        {
            self.mark_values_table(values);
        }
        let mut exec = Exec::new(self, body.clone());
        // Output is usually about as long as the template: grown once, not doubling up to it.
        exec.out.reserve(body.source.len() + body.source.len() / 2);
        exec.vars.push(Var::new(DOLLAR, data.clone(), false));
        exec.run_list(&body.list, data)?;
        let mut marks = exec.marks;
        let out = without_no_value_marked(exec.out, &mut marks);
        Ok((
            out,
            Marks {
                marks,
                files: exec.mark_files,
                values: exec.mark_values,
            },
        ))
    }
}

/// Where a pipeline's last command starts: the node Go's errors after it name.
fn last_operand(pipe: &PipeNode) -> Option<Pos> {
    pipe.commands.last()?.args.first().map(|e| e.pos())
}

/// Helm's `Values.Table`: the map at a dotted path of `values`, or the key where the path
/// stops being one.
fn values_table(values: &Value, path: &str) -> std::result::Result<Value, String> {
    let mut table = values.clone();
    for key in path.split('.') {
        let next = match &table {
            Value::Map(m) => m.borrow().get(key).cloned(),
            _ => None,
        };
        match next {
            Some(found @ Value::Map(_)) => table = found,
            _ => return Err(key.to_string()),
        }
    }
    Ok(table)
}

/// [`without_no_value`], moving the marks after each removed `<no value>` back with the text.
fn without_no_value_marked(out: String, marks: &mut [Mark]) -> String {
    let found: Vec<usize> = memchr::memmem::find_iter(out.as_bytes(), b"<no value>").collect();
    if found.is_empty() {
        return out;
    }
    const LEN: u32 = "<no value>".len() as u32;
    for mark in marks.iter_mut() {
        let before = found.partition_point(|&at| (at as u32) < mark.out) as u32;
        // Saturating: a mark inside a removed `<no value>` (text and action writing one) goes
        // to where it was.
        mark.out = mark.out.saturating_sub(before * LEN);
    }
    without_no_value(out)
}

/// Helm removes every `<no value>` (what Go prints for a missing key) from a rendered
/// template; most have none, and keep their buffer rather than being copied.
fn without_no_value(out: String) -> String {
    static FINDER: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"<no value>"));
    if FINDER.find(out.as_bytes()).is_some() {
        out.replace("<no value>", "")
    } else {
        out
    }
}

/// Parses a template text, naming `file` in errors the way Helm does.
fn parse<'a>(file: &str, text: &str, arena: &'a Bump) -> Result<parse::Parsed<'a>> {
    let resolve = |name: &str| match name {
        "and" => Some(Callee::And),
        "or" => Some(Callee::Or),
        _ => funcs::lookup(name).map(Callee::Func),
    };
    // Positions are 32-bit (pos::Pos): a larger template is refused rather than given wrong
    // positions (no chart comes near).
    if text.len() >= u32::MAX as usize {
        return Err(TemplateError::new(
            file,
            0,
            "template is larger than 4 GiB".into(),
            ErrorKind::Parse,
        ));
    }
    parse::parse(text, arena, &resolve)
        .map_err(|e| TemplateError::new(file, e.line, e.message, ErrorKind::Parse))
}

/// What a list of nodes ended with.
enum Flow {
    Normal,
    Break,
    Continue,
}

/// An error while executing, before the position is attached.
pub(crate) enum Failure {
    /// `fail`/`required`: shown as the bare message.
    Fail(String),
    Exec(String),
    /// An argument Go's `text/template` could not convert to the function's parameter type
    /// (`wrong type for value; …`, `invalid value; …`): reported at that argument, not as an
    /// error of the call. `index` counts the call's arguments, a piped value last.
    Argument {
        index: usize,
        message: String,
    },
    /// Already a full error from a nested template (`include`).
    Nested(TemplateError),
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Exec(s)
    }
}

/// Where a stretch of a render's output came from: from byte `out` of the output on (until the
/// next mark), template file `file` (an index into [`Marks::files`]) wrote it, copying its text
/// from byte `src` on (`verbatim`), or by the action at byte `src` (what an action prints,
/// including what it `include`s or `tpl`s, is the action's).
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    pub out: u32,
    pub src: u32,
    pub verbatim: bool,
    pub file: u32,
    /// The values path the action printed when it printed dot inside `with .Values.X` (an
    /// index into [`Marks::values`]; `u32::MAX`: none known).
    pub value: u32,
    /// Not a stretch but a place: a `with` or `if` on the value `value` (an empty one) at `src`
    /// rendered nothing here. What it would have written (`nodeSelector:` and the map) is
    /// missing from the output, and the value is where it goes.
    pub hole: bool,
}

/// Where each stretch of one render's output came from.
#[derive(Debug, Clone, Default)]
pub struct Marks {
    pub marks: Vec<Mark>,
    /// The template files marks point into: their names and texts.
    pub files: Vec<(Rc<str>, Arc<str>)>,
    /// Values paths marks name.
    pub values: Vec<Rc<str>>,
}

/// One execution: variables, output, and the bounds.
pub struct Exec<'s, 'a> {
    set: &'s TemplateSet<'a>,
    /// Templates `tpl` defined, visible while its text runs.
    overlay: Vec<HashMap<String, Rc<Body<'a>>>>,
    /// Variables, innermost last, named by their place in the running body's source (a frame's
    /// variables are all its body's; `$` is [`DOLLAR`]).
    vars: Vec<Var>,
    /// Where the running template's variables start: a called template sees only its own.
    frame: usize,
    /// Output buffers of finished `include`s, reused by the next (they grow once, not per call).
    spare: Vec<String>,
    out: String,
    /// Where each stretch of `out` came from, while `marking` (an `include` or `tpl` becomes a
    /// value, which the action printing it covers: nothing inside it is marked).
    marks: Vec<Mark>,
    marking: bool,
    /// The files marks point into, and the running body's among them.
    mark_files: Vec<(Rc<str>, Arc<str>)>,
    cur_file: u32,
    /// Strings `include` returned (or `indent`/`nindent` made of one), with the marks of the
    /// template text in them, while they may still be printed: an action printing one writes
    /// that text, not its own. The last few only: a string is printed soon after it is made.
    traced: Vec<(Rc<str>, Rc<Vec<Mark>>)>,
    /// The values path dot stands for, inside `with .Values.X` (else unknown), and the paths
    /// marks name.
    dot_path: Option<Rc<str>>,
    /// Dot is Go's invalid value: the template or `include` ran with no data or nil, and every
    /// field of dot is `<no value>` (Go's `evalField` on an invalid receiver), not an error.
    dot_missing: bool,
    mark_values: Vec<Rc<str>>,
    /// The render's `.Values` nodes (maps, lists, strings) by address, with their values path
    /// (`image.tag`, `tolerations[0].key`): built when an action first reads a value while
    /// marking. Values reach templates as shared references (a field, a variable, `range`'s
    /// element, `with`'s dot, a `dict` a helper is called with all hold the same node), so a
    /// value's address tells which value it is however it travelled.
    value_paths: Option<Rc<ValueIndex>>,
    /// The values path of the first `.Values` node the running action read (not counting what
    /// a template it includes reads).
    touched: Option<Rc<str>>,
    /// The body running: its source for names and texts, its file and name for errors.
    cur: Rc<Body<'a>>,
    /// How deep each template name is being called (Helm's recursion bound is per name).
    include_depth: HashMap<Rc<str>, usize>,
    steps: u64,
}

type Result<T> = std::result::Result<T, TemplateError>;

/// A template variable.
struct Var {
    name: Span,
    value: Value,
    /// Set from a pipeline (`$x := …`), where Go's evaluator unwraps an empty interface: a
    /// `nil` there is Go's invalid value, whose fields are `<no value>` (`$x.a` is nil). A
    /// range element keeps its interface type, and a field of a nil one is an error, as within
    /// a field chain.
    unwrapped: bool,
}

impl Var {
    fn new(name: Span, value: Value, unwrapped: bool) -> Self {
        Var {
            name,
            value,
            unwrapped,
        }
    }
}

impl<'s, 'a> Exec<'s, 'a> {
    fn new(set: &'s TemplateSet<'a>, body: Rc<Body<'a>>) -> Self {
        Exec {
            set,
            overlay: Vec::new(),
            vars: Vec::new(),
            out: String::new(),
            marks: Vec::new(),
            marking: true,
            mark_files: vec![(body.file.clone(), body.source.clone())],
            cur_file: 0,
            traced: Vec::new(),
            dot_path: None,
            dot_missing: false,
            mark_values: Vec::new(),
            value_paths: None,
            touched: None,
            frame: 0,
            spare: Vec::new(),
            cur: body,
            include_depth: HashMap::default(),
            steps: 0,
        }
    }

    fn error(&self, pos: Pos, failure: Failure) -> TemplateError {
        let column = go_column(&self.cur.source, pos.offset as usize);
        match failure {
            // `fail`/`required` inside an `include` or `tpl`: Helm names the outermost action
            // that led there (the first location of Go's error chain) with the message.
            Failure::Nested(e) if e.kind == ErrorKind::Fail => TemplateError {
                file: self.cur.file.to_string(),
                line: pos.line as usize,
                column,
                ..e
            },
            Failure::Nested(e) => e,
            Failure::Fail(message) => TemplateError {
                column,
                ..TemplateError::new(&self.cur.file, pos.line as usize, message, ErrorKind::Fail)
            },
            Failure::Argument { message, .. } => self.error(pos, Failure::Exec(message)),
            Failure::Exec(message) => {
                // `<EXPR>: MESSAGE`: the expression goes into Go's context line.
                let (expr, message) =
                    match message.strip_prefix('<').and_then(|m| m.split_once(">: ")) {
                        Some((expr, rest)) => (format!("<{expr}>"), rest.to_string()),
                        None => (String::from("<>"), message),
                    };
                TemplateError {
                    column,
                    context: Some(format!("executing {:?} at {expr}", self.cur.name.as_ref())),
                    ..TemplateError::new(
                        &self.cur.file,
                        pos.line as usize,
                        message,
                        ErrorKind::Exec,
                    )
                }
            }
        }
    }

    fn body(&self, name: &str) -> Option<Rc<Body<'a>>> {
        for layer in self.overlay.iter().rev() {
            if let Some(b) = layer.get(name) {
                return Some(b.clone());
            }
        }
        self.set.bodies.get(name).cloned()
    }

    /// The text Go's error context shows for the node at `pos`: the operand around it (a
    /// field chain's place is its last field's; its text is the whole chain), or a
    /// parenthesised pipeline from its `(` to the matching `)`.
    fn node_text(&self, pos: Pos) -> String {
        let src: &str = &self.cur.source;
        let at = (pos.offset as usize).min(src.len());
        if src[at..].starts_with('(') {
            let mut depth = 0usize;
            for (i, c) in src[at..].char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' if depth <= 1 => return src[at..=at + i].to_string(),
                    ')' => depth -= 1,
                    _ => {}
                }
            }
        }
        let edge = |c: char| c.is_whitespace() || matches!(c, '(' | ')' | '{' | '}');
        let start = src[..at].rfind(edge).map_or(0, |i| i + 1);
        let end = src[at..].find(edge).map_or(src.len(), |i| at + i);
        src[start..end].to_string()
    }

    /// Go's text of the command starting at `pos` (`CommandNode.String`): its operands up to
    /// the pipe, parenthesis or action end that closes it, one space between them, string
    /// literals as written.
    fn command_text(&self, pos: Pos) -> String {
        self.source_text(pos, false)
    }

    /// Go's text of the pipeline starting at `pos` (`PipeNode.String`): its commands joined by
    /// ` | `, up to the action's end.
    fn pipeline_text(&self, pos: Pos) -> String {
        self.source_text(pos, true)
    }

    fn source_text(&self, pos: Pos, whole_pipeline: bool) -> String {
        let src: &str = &self.cur.source;
        let mut text = String::new();
        let mut depth = 0usize;
        let mut chars = src[(pos.offset as usize).min(src.len())..]
            .chars()
            .peekable();
        let mut space = false;
        while let Some(c) = chars.next() {
            match c {
                '"' | '`' | '\'' => {
                    if space && !text.is_empty() && !text.ends_with('(') {
                        text.push(' ');
                    }
                    space = false;
                    text.push(c);
                    while let Some(d) = chars.next() {
                        text.push(d);
                        if d == '\\' && c != '`' {
                            if let Some(e) = chars.next() {
                                text.push(e);
                            }
                        } else if d == c {
                            break;
                        }
                    }
                    continue;
                }
                '|' if depth == 0 && !whole_pipeline => break,
                ')' if depth == 0 => break,
                '}' | '-'
                    if depth == 0
                        && chars
                            .peek()
                            .is_some_and(|n| *n == '}' || (c == '-' && n.is_whitespace())) =>
                {
                    break;
                }
                c if c.is_whitespace() => {
                    space = true;
                    continue;
                }
                '(' => depth += 1,
                ')' => depth -= 1,
                _ => {}
            }
            if space && !text.is_empty() && !text.ends_with('(') && c != ')' {
                text.push(' ');
            }
            if c == '|' {
                // `a|b` inside parentheses: Go writes ` | `.
                if !text.ends_with(' ') {
                    text.push(' ');
                }
                text.push('|');
                space = true;
                continue;
            }
            space = false;
            text.push(c);
        }
        text
    }

    /// The length of the string literal at `pos` (`"a\"b"` or `` `raw` ``).
    fn literal_len(&self, pos: Pos) -> u32 {
        let src = &self.cur.source[(pos.offset as usize).min(self.cur.source.len())..];
        let mut chars = src.char_indices();
        let Some((_, quote)) = chars.next() else {
            return 0;
        };
        while let Some((i, c)) = chars.next() {
            if c == '\\' && quote == '"' {
                chars.next();
            } else if c == quote {
                return (i + 1) as u32;
            }
        }
        src.len() as u32
    }

    /// The text of a name or text in the running body.
    fn text(&self, span: Span) -> &str {
        span.of(&self.cur.source)
    }

    fn step(&mut self, pos: Pos) -> Result<()> {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            return Err(self.error(
                pos,
                Failure::Exec(format!(
                    "<step limit>: the render ran more than {MAX_STEPS} steps; winguard stops \
                     templates that would not finish"
                )),
            ));
        }
        if self.out.len() > MAX_OUTPUT {
            return Err(self.error(
                pos,
                Failure::Exec(format!(
                    "<output limit>: the render produced more than {} MiB",
                    MAX_OUTPUT >> 20
                )),
            ));
        }
        Ok(())
    }

    /// Counts a value a function built against the render's budget: no one value past
    /// [`funcs::MAX_BUILT`], and no more than [`MAX_ALLOCATED`] in all. What is counted is the
    /// value's own size (a list's slots, not its shared items).
    fn charge(&mut self, v: &Value, pos: Pos) -> Result<()> {
        let size = match v {
            Value::Str(s) => s.len(),
            Value::Bytes(b) => b.len(),
            Value::List(l) => l.len() * std::mem::size_of::<Value>(),
            Value::Map(m) => m.borrow().len() * (std::mem::size_of::<Value>() + 32),
            _ => 0,
        };
        if size > funcs::MAX_BUILT {
            return Err(self.error(
                pos,
                Failure::Exec(format!(
                    "<memory limit>: a value of {} MiB is more than winguard builds ({} MiB)",
                    size >> 20,
                    funcs::MAX_BUILT >> 20
                )),
            ));
        }
        let allocated = self.set.allocated.get().saturating_add(size);
        self.set.allocated.set(allocated);
        if allocated > MAX_ALLOCATED {
            return Err(self.error(
                pos,
                Failure::Exec(format!(
                    "<memory limit>: the render built more than {} GiB of values; winguard \
                     stops templates that would exhaust memory",
                    MAX_ALLOCATED >> 30
                )),
            ));
        }
        Ok(())
    }

    /// Refuses a list or map a function made that nests deeper than [`MAX_DEPTH`].
    fn check_depth(&self, v: &Value, pos: Pos) -> Result<()> {
        let (key, children): (usize, Vec<&Value>) = match v {
            Value::List(l) => (Rc::as_ptr(l) as usize, l.iter().collect()),
            Value::Map(m) => {
                // Borrowed only to read the depths of the entries.
                let depth = {
                    let map = m.borrow();
                    1 + map.values().map(|c| self.depth_of(c)).max().unwrap_or(0)
                };
                return self.enter_depth(Rc::as_ptr(m) as usize, depth, pos);
            }
            _ => return Ok(()),
        };
        let depth = 1 + children.iter().map(|c| self.depth_of(c)).max().unwrap_or(0);
        self.enter_depth(key, depth, pos)
    }

    fn enter_depth(&self, key: usize, depth: u32, pos: Pos) -> Result<()> {
        if depth > MAX_DEPTH {
            return Err(self.error(
                pos,
                Failure::Exec(format!(
                    "<nesting limit>: lists and maps nested more than {MAX_DEPTH} deep"
                )),
            ));
        }
        self.set.depths.borrow_mut().insert(key, depth);
        Ok(())
    }

    /// How deeply a value nests: entered when a function made it, else (values, and
    /// containers whose depth a change in place made unknown) found and entered now.
    fn depth_of(&self, v: &Value) -> u32 {
        let key = match v {
            Value::List(l) => Rc::as_ptr(l) as usize,
            Value::Map(m) => Rc::as_ptr(m) as usize,
            _ => return 0,
        };
        if let Some(d) = self.set.depths.borrow().get(&key) {
            return *d;
        }
        let depth = match v {
            Value::List(l) => 1 + l.iter().map(|c| self.depth_of(c)).max().unwrap_or(0),
            Value::Map(m) => {
                1 + m
                    .borrow()
                    .values()
                    .map(|c| self.depth_of(c))
                    .max()
                    .unwrap_or(0)
            }
            _ => 0,
        };
        self.set.depths.borrow_mut().insert(key, depth);
        depth
    }

    fn run_list(&mut self, list: &ListNode, dot: &Value) -> Result<Flow> {
        for node in list.nodes {
            match self.run_node(node, dot)? {
                Flow::Normal => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Normal)
    }

    fn run_node(&mut self, node: &Node, dot: &Value) -> Result<Flow> {
        match node {
            Node::Text(text) => {
                self.mark(text.start, true);
                self.out.push_str(text.of(&self.cur.source));
                Ok(Flow::Normal)
            }
            Node::Action(pos, pipe) => {
                self.step(*pos)?;
                self.touched = None;
                let v = self.pipe(pipe, dot, *pos)?;
                if pipe.decl.is_empty() {
                    self.mark(pos.offset, false);
                    self.mark_value(pos.offset, &v);
                    self.print(&v);
                }
                Ok(Flow::Normal)
            }
            Node::If(b) => with_stack(|| self.branch(b, dot, false)),
            Node::With(b) => with_stack(|| self.branch(b, dot, true)),
            Node::Range(b) => with_stack(|| self.range(b, dot)),
            Node::Template(t) => {
                self.step(t.pos)?;
                // Go looks the template up before it evaluates the pipeline.
                let Some(body) = self.body(t.name) else {
                    // Go's `TemplateNode.String`: `{{template "x"}}`, `{{template "x" PIPE}}`.
                    let pipe = match t.pipe {
                        Some(_) => {
                            let after_name = Pos {
                                offset: t.pos.offset + self.literal_len(t.pos),
                                ..t.pos
                            };
                            format!(" {}", self.pipeline_text(after_name))
                        }
                        None => String::new(),
                    };
                    return Err(self.error(
                        t.pos,
                        Failure::Exec(format!(
                            "<{{{{template {:?}{pipe}}}}}>: template {:?} not defined",
                            t.name, t.name
                        )),
                    ));
                };
                let data = match &t.pipe {
                    Some(p) => self.pipe(p, dot, t.pos)?,
                    None => Value::Nil,
                };
                let (out, marks) = self.call_template(body, &data, t.pos)?;
                // What the template wrote is its own: its marks, moved to where it lands.
                let at = self.out.len() as u32;
                self.marks.extend(marks.into_iter().map(|m| Mark {
                    out: m.out + at,
                    ..m
                }));
                self.out.push_str(&out);
                self.recycle(out);
                Ok(Flow::Normal)
            }
            Node::Break => Ok(Flow::Break),
            Node::Continue => Ok(Flow::Continue),
        }
    }

    /// Notes that what is written next comes from byte `src` of the running body.
    fn mark(&mut self, src: u32, verbatim: bool) {
        if !self.marking {
            return;
        }
        let out = self.out.len() as u32;
        if let Some(last) = self.marks.last_mut()
            && last.out == out
            && !last.hole
        {
            // Nothing was written since: the earlier mark covers nothing.
            self.marks.pop();
        }
        self.marks.push(Mark {
            out,
            src,
            verbatim,
            file: self.cur_file,
            value: u32::MAX,
            hole: false,
        });
    }

    /// Notes that the `with` or `if` at byte `at`, on the value `v`, rendered nothing here.
    fn mark_hole(&mut self, at: u32, v: &Value) {
        if !self.marking {
            return;
        }
        let path = self.value_path(v).or_else(|| {
            crate::origin::action_values_path(&self.cur.source, at as usize).map(Rc::from)
        });
        let Some(path) = path else { return };
        let value = crate::trace::index_in(&mut self.mark_values, path);
        self.marks.push(Mark {
            out: self.out.len() as u32,
            src: at,
            verbatim: false,
            file: self.cur_file,
            value,
            hole: true,
        });
    }

    /// The values path of a `.Values` node, when `v` is one (see [`Exec::value_paths`]).
    fn value_path(&mut self, v: &Value) -> Option<Rc<str>> {
        let address = node_address(v)?;
        let set = self.set;
        let vars = &self.vars;
        let paths = self.value_paths.get_or_insert_with(|| {
            let root = vars.first().and_then(|d| match &d.value {
                Value::Map(m) => m.borrow().get("Values").cloned(),
                _ => None,
            });
            let Some(root) = root else {
                return Rc::default();
            };
            let key = node_address(&root).unwrap_or(0);
            set.value_indexes
                .borrow_mut()
                .entry(key)
                .or_insert_with(|| {
                    let mut paths = HashMap::default();
                    index_values(&root, &mut String::new(), &mut paths, 0);
                    (root.clone(), Rc::new(paths))
                })
                .1
                .clone()
        });
        paths.get(&address).cloned()
    }

    /// Notes that the running action read `v` (when marking): its values path, if it is a
    /// `.Values` node, may name what the action prints.
    fn touch(&mut self, v: &Value) {
        if self.marking && self.touched.is_none() {
            self.touched = self.value_path(v);
        }
    }

    /// Which value the action at byte `at` printed, noted on the mark just made: the `.Values`
    /// node it printed (`{{ .Values.image.tag }}`, `{{ $img.tag }}`, `{{ .key }}` in a `range`),
    /// else the first one it read (`{{ toYaml .Values.nodeSelector | nindent 8 }}`, `{{ tpl
    /// .Values.x . }}`), else, for a number or a bool (which have no identity), a field of dot
    /// inside `with .Values.X`.
    fn mark_value(&mut self, at: u32, printed: &Value) {
        if !self.marking {
            return;
        }
        let path = self.value_path(printed).or_else(|| self.touched.clone());
        match path {
            Some(path) => {
                let index = crate::trace::index_in(&mut self.mark_values, path);
                if let Some(last) = self.marks.last_mut() {
                    last.value = index;
                }
            }
            None => self.mark_dot_value(at),
        }
    }

    /// Inside `with .Values.X`: an action at byte `at` that prints dot (`toYaml .`) or a field of
    /// it (`.tag`) printed `X` or `X.tag`; noted on the mark just made.
    fn mark_dot_value(&mut self, at: u32) {
        let Some(dot) = &self.dot_path else { return };
        if !self.marking {
            return;
        }
        let source = &self.cur.source;
        if crate::origin::action_values_path(source, at as usize).is_some() {
            return;
        }
        let Some(field) = crate::origin::action_dot_field(source, at as usize) else {
            return;
        };
        let path: Rc<str> = match field {
            Some(f) => format!("{dot}.{f}").into(),
            None => dot.clone(),
        };
        let index = crate::trace::index_in(&mut self.mark_values, path);
        if let Some(last) = self.marks.last_mut() {
            last.value = index;
        }
    }

    /// The index of `body`'s file among the files marks point into.
    fn mark_file(&mut self, body: &Body) -> u32 {
        let known = self.mark_files.iter().position(|(file, source)| {
            Arc::ptr_eq(source, &body.source) && Rc::ptr_eq(file, &body.file)
        });
        match known {
            Some(i) => i as u32,
            None => {
                self.mark_files
                    .push((body.file.clone(), body.source.clone()));
                (self.mark_files.len() - 1) as u32
            }
        }
    }

    /// Runs a named template with its own variables (`$` is its data) into a string, with where
    /// each stretch of it came from.
    fn call_template(
        &mut self,
        body: Rc<Body<'a>>,
        data: &Value,
        pos: Pos,
    ) -> Result<(String, Vec<Mark>)> {
        let name = body.name.clone();
        // Counted by name, as Helm counts.
        let depth = self.include_depth.entry(name.clone()).or_insert(0);
        *depth += 1;
        if *depth > MAX_INCLUDE_DEPTH {
            return Err(self.error(
                pos,
                Failure::Exec(format!(
                    "<include>: error calling include: rendering template has a nested reference name: {name}: unable to execute template"
                )),
            ));
        }
        let saved_frame = std::mem::replace(&mut self.frame, self.vars.len());
        let missing = matches!(data, Value::Nil);
        self.vars.push(Var::new(DOLLAR, data.clone(), missing));
        let saved_missing = std::mem::replace(&mut self.dot_missing, missing);
        let buffer = self.spare.pop().unwrap_or_default();
        let saved_out = std::mem::replace(&mut self.out, buffer);
        let saved_marks = std::mem::take(&mut self.marks);
        let saved_dot = self.dot_path.take();
        // What the included template's actions read is theirs, not the including action's.
        let saved_touched = self.touched.take();
        let saved_file = self.cur_file;
        if self.marking {
            self.cur_file = self.mark_file(&body);
        }
        let saved_body = std::mem::replace(&mut self.cur, body.clone());
        let result = with_stack(|| self.run_list(&body.list, data));
        let out = std::mem::replace(&mut self.out, saved_out);
        let marks = std::mem::replace(&mut self.marks, saved_marks);
        self.dot_path = saved_dot;
        self.touched = saved_touched;
        self.cur_file = saved_file;
        self.vars.truncate(self.frame);
        self.frame = saved_frame;
        self.dot_missing = saved_missing;
        self.cur = saved_body;
        if let Some(d) = self.include_depth.get_mut(&*name) {
            *d -= 1;
        }
        result?;
        Ok((out, marks))
    }

    /// An execution error of an included template, wrapped as Go wraps it at the `include`
    /// at `pos` (`fail` keeps its own form: Helm shows where the outermost action was).
    fn included_from(&self, mut e: TemplateError, pos: Pos) -> TemplateError {
        if e.kind == ErrorKind::Exec {
            let caller = Caller {
                file: self.cur.file.to_string(),
                line: pos.line as usize,
                column: go_column(&self.cur.source, pos.offset as usize),
                context: format!(
                    "executing {:?} at <{}>",
                    self.cur.name.as_ref(),
                    self.command_text(pos)
                ),
            };
            e.callers.insert(0, caller);
        }
        e
    }

    /// Gives a finished output buffer back for the next `include`.
    pub(crate) fn recycle(&mut self, mut buffer: String) {
        if self.spare.len() < 32 {
            buffer.clear();
            self.spare.push(buffer);
        }
    }

    /// `include NAME DATA` as a value, traced: where it is printed, the included template's
    /// text is marked as its own.
    pub(crate) fn include_value(
        &mut self,
        name: &str,
        data: &Value,
        pos: Pos,
    ) -> std::result::Result<Value, Failure> {
        let Some(body) = self.body(name) else {
            let mut e = TemplateError::new(
                &self.cur.file,
                pos.line as usize,
                format!("template: no template {name:?} associated with template \"gotpl\""),
                ErrorKind::Exec,
            );
            e.column = go_column(&self.cur.source, pos.offset as usize);
            return Err(Failure::Nested(self.included_from(e, pos)));
        };
        let (out, marks) = self
            .call_template(body, data, pos)
            .map_err(|e| Failure::Nested(self.included_from(e, pos)))?;
        let text: Rc<str> = out.as_str().into();
        self.recycle(out);
        if self.marking {
            self.trace(&text, marks);
        }
        Ok(Value::Str(text))
    }

    /// Notes the marks of a string made from template text (see `traced`).
    pub(crate) fn trace(&mut self, text: &Rc<str>, marks: Vec<Mark>) {
        const KEPT: usize = 16;
        if self.traced.len() == KEPT {
            self.traced.remove(0);
        }
        self.traced.push((text.clone(), Rc::new(marks)));
    }

    /// The marks of a traced string.
    pub(crate) fn trace_of(&self, text: &Rc<str>) -> Option<Rc<Vec<Mark>>> {
        self.traced
            .iter()
            .rev()
            .find(|(t, _)| Rc::ptr_eq(t, text))
            .map(|(_, m)| m.clone())
    }

    /// `tpl TEXT DATA` (Helm): the text is parsed as a template of the calling file, sees every
    /// template defined so far, and its own `define`s are visible only while it runs.
    pub(crate) fn tpl(
        &mut self,
        text: &str,
        data: &Value,
        pos: Pos,
    ) -> std::result::Result<String, Failure> {
        // The text's tree goes into the render's arena, which only grows: bounded.
        if self.set.arena.allocated_bytes() > MAX_TREES {
            return Err(Failure::Exec(format!(
                "the render's templates take more than {} MiB",
                MAX_TREES >> 20
            )));
        }
        let parse::Parsed {
            list,
            defines,
            literals,
        } = parse("gotpl", text, self.set.arena).map_err(|e| {
            Failure::Exec(format!(
                "cannot parse template {text:?}: template: {}:{}: {}",
                e.file, e.line, e.message
            ))
        })?;
        let source: Arc<str> = text.into();
        // Helm parses the text as a template of its own, named `gotpl`.
        let file: Rc<str> = "gotpl".into();
        let layer = Body::defined(defines, &source, &literals, &file).collect();
        self.overlay.push(layer);
        let body = Body {
            list,
            source,
            literals,
            file: file.clone(),
            name: file,
        };
        let marking = std::mem::replace(&mut self.marking, false);
        let result = self.call_template(Rc::new(body), data, pos);
        self.marking = marking;
        self.overlay.pop();
        result
            .map(|(out, _)| without_no_value(out))
            .map_err(|e| match e.kind {
                // Helm's `tpl` wraps what its template's run returned (`%w`).
                ErrorKind::Exec => Failure::Exec(format!(
                    "error during tpl function execution for {text:?}: {}",
                    e.go_text()
                )),
                _ => Failure::Nested(e),
            })
    }

    fn branch(&mut self, b: &BranchNode, dot: &Value, with: bool) -> Result<Flow> {
        self.step(b.pos)?;
        let mark = self.vars.len();
        let v = self.pipe(&b.pipe, dot, b.pos)?;
        if !v.truthy() && b.else_body.is_none() {
            self.mark_hole(b.pos.offset, &v);
        }
        let flow = if v.truthy() {
            let inner = if with { v } else { dot.clone() };
            // `with .Values.X`: dot is that value while the body runs.
            let saved = with.then(|| {
                let path =
                    crate::origin::action_values_path(&self.cur.source, b.pos.offset as usize);
                std::mem::replace(&mut self.dot_path, path.map(Rc::from))
            });
            let flow = self.run_list(&b.body, &inner);
            if let Some(saved) = saved {
                self.dot_path = saved;
            }
            flow?
        } else if let Some(e) = &b.else_body {
            self.run_list(e, dot)?
        } else {
            Flow::Normal
        };
        self.vars.truncate(mark);
        Ok(flow)
    }

    fn range(&mut self, b: &BranchNode, dot: &Value) -> Result<Flow> {
        // Dot is each element in turn: no values path is known for it, and an element is a
        // valid value (a field of a nil one is an error).
        let saved = self.dot_path.take();
        let saved_missing = std::mem::replace(&mut self.dot_missing, false);
        let flow = self.range_items(b, dot);
        self.dot_path = saved;
        self.dot_missing = saved_missing;
        flow
    }

    fn range_items(&mut self, b: &BranchNode, dot: &Value) -> Result<Flow> {
        self.step(b.pos)?;
        let mark = self.vars.len();
        // The range pipeline's variables are the loop's, not the pipeline's result.
        let value = self.commands(b.pipe.commands, dot)?;
        let items: Vec<(Value, Value)> = match &value {
            Value::List(l) => l
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i as i64), v.clone()))
                .collect(),
            Value::Bytes(bytes) => bytes
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i as i64), Value::Int(*v as i64)))
                .collect(),
            Value::Map(m) => m
                .borrow()
                .iter()
                .map(|(k, v)| (Value::from(k.as_str()), v.clone()))
                .collect(),
            Value::Int(n) | Value::Int64(n) => {
                if *n > MAX_STEPS as i64 {
                    return Err(self.error(
                        b.pos,
                        Failure::Exec(format!("<range>: cannot range over {n} items")),
                    ));
                }
                (0..(*n).max(0))
                    .map(|i| (Value::Int(i), Value::Int(i)))
                    .collect()
            }
            Value::Nil => Vec::new(),
            Value::Object(o) if o.entries().is_some() => o.entries().unwrap_or_default(),
            other => {
                return Err(self.error(
                    b.pos,
                    Failure::Exec(format!(
                        "<range>: range can't iterate over {}",
                        other.to_print()
                    )),
                ));
            }
        };
        if items.is_empty() {
            let flow = match &b.else_body {
                Some(e) => self.run_list(e, dot)?,
                None => Flow::Normal,
            };
            self.vars.truncate(mark);
            return Ok(match flow {
                Flow::Normal => Flow::Normal,
                // A break or continue in the else branch belongs to an outer range.
                other => other,
            });
        }
        let last = last_operand(&b.pipe).unwrap_or(b.pos);
        for (key, item) in items {
            self.step(b.pos)?;
            let inner_mark = self.vars.len();
            match b.pipe.decl.len() {
                0 => {}
                1 => self.bind(b.pipe.decl[0], item.clone(), b.pipe.is_assign, false, last)?,
                _ => {
                    self.bind(b.pipe.decl[0], key, b.pipe.is_assign, false, last)?;
                    self.bind(b.pipe.decl[1], item.clone(), b.pipe.is_assign, false, last)?;
                }
            }
            let flow = self.run_list(&b.body, &item)?;
            self.vars.truncate(inner_mark.max(mark));
            if let Flow::Break = flow {
                break;
            }
        }
        self.vars.truncate(mark);
        Ok(Flow::Normal)
    }

    /// Declares (`:=`) or assigns (`=`) a variable; assigning one not declared is Go's
    /// `setVar` error.
    fn bind(
        &mut self,
        name: Span,
        value: Value,
        assign: bool,
        unwrapped: bool,
        pos: Pos,
    ) -> Result<()> {
        let frame = self.frame;
        if assign {
            let src = &self.cur.source;
            let wanted = var_name(src, name);
            let Some(slot) = self.vars[frame..]
                .iter_mut()
                .rev()
                .find(|v| var_name(src, v.name) == wanted)
            else {
                // Go reports it at the node it evaluated last: the pipeline's last operand.
                // (A field chain's place is its last field's; its text is the whole chain.)
                let wanted = wanted.to_string();
                let node = self.node_text(pos);
                return Err(self.error(
                    pos,
                    Failure::Exec(format!("<{node}>: undefined variable: {wanted}")),
                ));
            };
            slot.value = value;
            slot.unwrapped = unwrapped;
            return Ok(());
        }
        self.vars.push(Var::new(name, value, unwrapped));
        Ok(())
    }

    fn pipe(&mut self, pipe: &PipeNode, dot: &Value, pos: Pos) -> Result<Value> {
        let value = self.commands(pipe.commands, dot)?;
        let last = last_operand(pipe).unwrap_or(pos);
        for name in pipe.decl {
            self.bind(*name, value.clone(), pipe.is_assign, true, last)?;
        }
        Ok(value)
    }

    fn commands(&mut self, commands: &[CommandNode], dot: &Value) -> Result<Value> {
        let mut last: Option<Value> = None;
        for cmd in commands {
            last = Some(self.command(cmd, dot, last)?);
        }
        Ok(last.unwrap_or(Value::Nil))
    }

    fn command(&mut self, cmd: &CommandNode, dot: &Value, piped: Option<Value>) -> Result<Value> {
        let v = self.command_value(cmd, dot, piped)?;
        if matches!(
            cmd.args.first(),
            Some(Expr::Field(..) | Expr::Variable(..) | Expr::Chain(..))
        ) {
            self.touch(&v);
        }
        Ok(v)
    }

    fn command_value(
        &mut self,
        cmd: &CommandNode,
        dot: &Value,
        piped: Option<Value>,
    ) -> Result<Value> {
        let Some(first) = cmd.args.first() else {
            return Ok(Value::Nil);
        };
        let rest = &cmd.args[1..];
        match first {
            Expr::Function(pos, name, callee) => {
                self.call_function(*callee, *name, rest, dot, piped, *pos)
            }
            Expr::Field(pos, names) => {
                let args = self.args(rest, dot, piped)?;
                self.chain(dot.clone(), names, &args, *pos, None, self.dot_missing)
            }
            Expr::Variable(pos, name, names) => {
                let (v, unwrapped) = self.variable(*name, *pos)?;
                if names.is_empty() {
                    if !rest.is_empty() || piped.is_some() {
                        let name = self.text(*name);
                        return Err(self.error(
                            *pos,
                            Failure::Exec(format!(
                                "<{name}>: can't give argument to non-function {name}"
                            )),
                        ));
                    }
                    return Ok(v);
                }
                let args = self.args(rest, dot, piped)?;
                self.chain(v, names, &args, *pos, Some(*name), unwrapped)
            }
            Expr::Chain(pos, inner, names) => {
                let v = with_stack(|| self.arg(inner, dot))?;
                let args = self.args(rest, dot, piped)?;
                self.chain(v, names, &args, *pos, None, is_pipe(inner))
            }
            // Go's `evalCommand`: nil is a value, never a command's word.
            Expr::Nil(pos) => {
                Err(self.error(*pos, Failure::Exec("<nil>: nil is not a command".into())))
            }
            other => {
                if !rest.is_empty() || piped.is_some() {
                    return Err(self.error(
                        other.pos(),
                        Failure::Exec("can't give argument to non-function".into()),
                    ));
                }
                self.arg(other, dot)
            }
        }
    }

    /// Which of a call's arguments Go would hold as its invalid value when nil: a
    /// parenthesised pipeline, a variable set from a pipeline, the nil literal, an invalid dot
    /// and its fields, and the value piped in (see
    /// [`funcs::Call::unwrapped_nils`]).
    fn unwrapped_nils(&self, exprs: &[Expr], piped: bool) -> u64 {
        let mut mask = 0u64;
        for (i, e) in exprs.iter().enumerate().take(64) {
            let unwrapped = match e {
                // The nil literal, as Go's `evalArg` gives a nil-able parameter its zero value.
                Expr::Pipe(..) | Expr::Nil(_) => true,
                Expr::Variable(pos, name, []) => self.variable(*name, *pos).is_ok_and(|(_, u)| u),
                // Dot, and its fields, when dot is the invalid value.
                Expr::Dot(..) | Expr::Field(..) => self.dot_missing,
                _ => false,
            };
            if unwrapped {
                mask |= 1 << i;
            }
        }
        if piped && exprs.len() < 64 {
            mask |= 1 << exprs.len();
        }
        mask
    }

    fn args(&mut self, exprs: &[Expr], dot: &Value, piped: Option<Value>) -> Result<funcs::Args> {
        let mut args = funcs::Args::new();
        for e in exprs {
            args.push(self.arg(e, dot)?);
        }
        if let Some(p) = piped {
            args.push(p);
        }
        Ok(args)
    }

    fn arg(&mut self, e: &Expr, dot: &Value) -> Result<Value> {
        let v = self.arg_value(e, dot)?;
        if matches!(
            e,
            Expr::Dot(_) | Expr::Field(..) | Expr::Variable(..) | Expr::Chain(..)
        ) {
            self.touch(&v);
        }
        Ok(v)
    }

    fn arg_value(&mut self, e: &Expr, dot: &Value) -> Result<Value> {
        match e {
            Expr::Dot(_) => Ok(dot.clone()),
            Expr::Field(pos, names) => {
                self.chain(dot.clone(), names, &[], *pos, None, self.dot_missing)
            }
            Expr::Variable(pos, name, names) => {
                let (v, unwrapped) = self.variable(*name, *pos)?;
                if names.is_empty() {
                    Ok(v)
                } else {
                    self.chain(v, names, &[], *pos, Some(*name), unwrapped)
                }
            }
            Expr::Function(pos, name, callee) => {
                self.call_function(*callee, *name, &[], dot, None, *pos)
            }
            Expr::String(_, i) => Ok(Value::Str(self.cur.literals[*i as usize].clone())),
            Expr::Number(_, n) => Ok(match n {
                Number::Int(i) => Value::Int(*i),
                Number::Uint(u) => Value::Int64(*u as i64),
                Number::Float(f) => Value::Float(*f),
            }),
            Expr::Bool(_, b) => Ok(Value::Bool(*b)),
            Expr::Nil(_) => Ok(Value::Nil),
            Expr::Pipe(pos, p) => {
                let mark = self.vars.len();
                let v = with_stack(|| self.pipe(p, dot, *pos));
                self.vars.truncate(mark);
                v
            }
            Expr::Chain(pos, inner, names) => {
                let v = with_stack(|| self.arg(inner, dot))?;
                self.chain(v, names, &[], *pos, None, is_pipe(inner))
            }
        }
    }

    /// A variable's value, and whether a nil in it is Go's invalid value ([`Var::unwrapped`]).
    fn variable(&self, name: Span, pos: Pos) -> Result<(Value, bool)> {
        let src = &self.cur.source;
        let wanted = var_name(src, name);
        self.vars[self.frame..]
            .iter()
            .rev()
            .find(|v| var_name(src, v.name) == wanted)
            .map(|v| (v.value.clone(), v.unwrapped))
            .ok_or_else(|| {
                self.error(
                    pos,
                    Failure::Exec(format!("<{wanted}>: undefined variable: {wanted}")),
                )
            })
    }

    /// `.a.b.c ARGS`: fields walked in order; the last may be a method given the arguments.
    /// `root` is the variable the chain starts from, if any (for errors). `unwrapped`: the
    /// start came out of a pipeline (a variable set from one, or `(…)`), where Go has unwrapped
    /// a nil into its invalid value, and every field of that is `<no value>` (Go's `evalField`
    /// on an invalid receiver); a nil met inside the chain is a nil interface, and an error.
    #[allow(clippy::too_many_arguments)]
    fn chain(
        &self,
        mut v: Value,
        names: &[Span],
        args: &[Value],
        pos: Pos,
        root: Option<Span>,
        unwrapped: bool,
    ) -> Result<Value> {
        if unwrapped && matches!(v, Value::Nil) {
            return Ok(Value::Nil);
        }
        for (i, name) in names.iter().enumerate() {
            let last = i + 1 == names.len();
            let call_args: &[Value] = if last { args } else { &[] };
            v = self.field(&v, self.text(*name), call_args).map_err(|m| {
                // Go names the whole chain (`<.Values.missing.deeper>`).
                let shown: Vec<&str> = names.iter().map(|n| self.text(*n)).collect();
                let root = root.map_or("", |r| self.text(r));
                let mut e = self.error(
                    pos,
                    Failure::Exec(format!("<{root}.{}>: {m}", shown.join("."))),
                );
                // A method's own error, which Go wraps (`error calling Table: %w`).
                e.wrapped = m.starts_with("error calling ");
                e
            })?;
        }
        Ok(v)
    }

    /// A method of Helm's `Values` (`pkg/chart/common/values.go`) called on `.Values` (or on
    /// what its `Table` returned); `None` for anything else, which is read as a map. Methods come
    /// before keys, as Go's `evalField` takes them.
    fn values_method(
        &self,
        v: &Value,
        m: &value::MapRef,
        name: &str,
        args: &[Value],
    ) -> Option<std::result::Result<Value, String>> {
        let want = match name {
            "AsMap" | "YAML" => 0,
            "Table" | "PathValue" => 1,
            _ => return None,
        };
        if !self.set.is_values_table(m) {
            return None;
        }
        if args.len() != want {
            return Some(Err(format!(
                "wrong number of args for {name}: want {want} got {}",
                args.len()
            )));
        }
        let path = || match &args[0] {
            Value::Str(s) => Ok(s.to_string()),
            other => Err(format!(
                "wrong type for value; expected string; got {}",
                other.type_name()
            )),
        };
        Some(match name {
            "AsMap" => Ok(v.clone()),
            "YAML" => Ok(Value::from(yaml::to_yaml(&v.to_data()))),
            "Table" => path().and_then(|p| {
                let table = values_table(v, &p)
                    .map_err(|key| format!("error calling Table: {key:?} is not a table"))?;
                self.set.mark_values_table(&table);
                Ok(table)
            }),
            _ => path().and_then(|p| {
                if p.is_empty() {
                    return Err("error calling PathValue: YAML path cannot be empty".into());
                }
                let (table, key) = match p.rsplit_once('.') {
                    Some((table, key)) => (values_table(v, table).ok(), key),
                    None => (Some(v.clone()), p.as_str()),
                };
                let found = table.and_then(|t| match &t {
                    Value::Map(m) => m.borrow().get(key).cloned(),
                    _ => None,
                });
                match found {
                    Some(value) if !matches!(value, Value::Map(_)) => Ok(value),
                    _ => Err(format!("error calling PathValue: {key:?} is not a value")),
                }
            }),
        })
    }

    fn field(&self, v: &Value, name: &str, args: &[Value]) -> std::result::Result<Value, String> {
        match v {
            Value::Map(m) => {
                if let Some(result) = self.values_method(v, m, name, args) {
                    return result;
                }
                if !args.is_empty() {
                    return Err(format!("{name} is not a method but has arguments"));
                }
                Ok(m.borrow().get(name).cloned().unwrap_or(Value::Nil))
            }
            Value::Object(o) => {
                if let Some(result) = o.call(name, args) {
                    return result.map_err(|e| format!("error calling {name}: {e}"));
                }
                if let Some(f) = o.field(name) {
                    if !args.is_empty() {
                        return Err(format!(
                            "{name} has arguments but cannot be invoked as function"
                        ));
                    }
                    return Ok(f);
                }
                Err(format!(
                    "can't evaluate field {name} in type {}",
                    o.type_name()
                ))
            }
            Value::Nil => Err(format!("nil pointer evaluating interface {{}}.{name}")),
            other => Err(format!(
                "can't evaluate field {name} in type {}",
                other.type_name()
            )),
        }
    }

    fn call_function(
        &mut self,
        callee: Callee,
        name: Span,
        exprs: &[Expr],
        dot: &Value,
        piped: Option<Value>,
        pos: Pos,
    ) -> Result<Value> {
        let func = match callee {
            // `and` and `or` stop at the deciding argument, unevaluated beyond it.
            Callee::And | Callee::Or => {
                let want = matches!(callee, Callee::Or);
                let mut last = Value::Nil;
                for e in exprs {
                    last = self.arg(e, dot)?;
                    if last.truthy() == want {
                        return Ok(last);
                    }
                }
                if let Some(p) = piped {
                    last = p;
                }
                return Ok(last);
            }
            Callee::Func(func) => func,
        };
        let unwrapped_nils = self.unwrapped_nils(exprs, piped.is_some());
        let args = self.args(exprs, dot, piped)?;
        self.step(pos)?;
        let unwrapped_nils = args
            .iter()
            .enumerate()
            .take(64)
            .filter(|(i, v)| matches!(v, Value::Nil) && unwrapped_nils & (1 << i) != 0)
            .fold(0u64, |m, (i, _)| m | (1 << i));
        let mut call = funcs::Call {
            exec: self,
            pos,
            unwrapped_nils,
        };
        match func(&mut call, args) {
            Ok(v) => {
                if matches!(
                    self.text(name),
                    "set"
                        | "unset"
                        | "merge"
                        | "mustMerge"
                        | "mergeOverwrite"
                        | "mustMergeOverwrite"
                ) {
                    // A map changed in place: what contains it may be deeper now.
                    self.set.depths.borrow_mut().clear();
                }
                self.charge(&v, pos)?;
                self.check_depth(&v, pos)?;
                Ok(v)
            }
            Err(Failure::Exec(m)) => {
                // Go's `error calling NAME: %w`, at the command (its text, without a piped
                // value).
                let name = self.text(name);
                let command = self.command_text(pos);
                let mut e = self.error(
                    pos,
                    Failure::Exec(format!("<{command}>: error calling {name}: {m}")),
                );
                e.wrapped = true;
                Err(e)
            }
            Err(Failure::Argument { index, message }) => {
                // Go converts the arguments in order, each at its own node, and the piped value
                // last, still at the node it converted before it (the function's, if none).
                let node = exprs.get(index).or(exprs.last());
                let (at, text) = match node {
                    Some(e) => (e.pos(), self.node_text(e.pos())),
                    None => (pos, self.text(name).to_string()),
                };
                Err(self.error(at, Failure::Exec(format!("<{text}>: {message}"))))
            }
            Err(other) => Err(self.error(pos, other)),
        }
    }

    /// Writes a value as Go's `fmt.Fprint` does (`nil` is `<no value>`).
    fn print(&mut self, v: &Value) {
        match v {
            Value::Str(s) => {
                // An included template's text is its own, wherever it lands.
                if self.marking
                    && let Some(marks) = self.trace_of(s)
                {
                    let at = self.out.len() as u32;
                    if self.marks.last().is_some_and(|m| m.out == at && !m.hole)
                        && marks.first().is_some_and(|m| m.out == 0)
                    {
                        self.marks.pop();
                    }
                    self.marks.extend(marks.iter().map(|m| Mark {
                        out: m.out + at,
                        ..*m
                    }));
                }
                self.out.push_str(s)
            }
            Value::Nil => self.out.push_str("<no value>"),
            Value::Object(o) => self.out.push_str(&o.display()),
            other => other.write_go(&mut self.out),
        }
    }
}

/// How a variable's name is kept: `$`, or where the name stands in the running body's source.
const DOLLAR: Span = Span {
    start: u32::MAX,
    end: u32::MAX,
};

/// A variable's name: `$` for [`DOLLAR`], else its text in `src`.
/// Whether an expression is a parenthesised pipeline (whose value Go unwraps).
/// The address that tells a shared value apart: a map's, a list's or a string's allocation.
/// Numbers and bools are copied, so they have none.
fn node_address(v: &Value) -> Option<usize> {
    match v {
        Value::Map(m) => Some(Rc::as_ptr(m) as *const () as usize),
        Value::List(l) => Some(Rc::as_ptr(l) as *const () as usize),
        Value::Str(s) => Some(Rc::as_ptr(s) as *const u8 as usize),
        _ => None,
    }
}

/// Indexes the nodes of a values tree by address, with their path as `--set` writes it
/// (`a.b`, `list[0].c`, a dot in a key escaped `a\.b`). Bounded in depth: a map can hold itself
/// after Sprig's `set`.
fn index_values(v: &Value, path: &mut String, out: &mut HashMap<usize, Rc<str>>, depth: u32) {
    if depth > 64 {
        return;
    }
    if let Some(address) = node_address(v)
        && !path.is_empty()
    {
        out.entry(address)
            .or_insert_with(|| Rc::from(path.as_str()));
    }
    let len = path.len();
    match v {
        Value::Map(m) => {
            for (key, child) in m.borrow().iter() {
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(&crate::values_path::escape_values_key(key));
                index_values(child, path, out, depth + 1);
                path.truncate(len);
            }
        }
        Value::List(items) => {
            for (i, child) in items.iter().enumerate() {
                path.push('[');
                path.push_str(itoa::Buffer::new().format(i));
                path.push(']');
                index_values(child, path, out, depth + 1);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

fn is_pipe(e: &Expr) -> bool {
    matches!(e, Expr::Pipe(..))
}

fn var_name(src: &str, name: Span) -> &str {
    if name == DOLLAR { "$" } else { name.of(src) }
}

/// The column Go reports for a byte offset: the byte count from the line's start (0-based).
fn go_column(src: &str, offset: usize) -> usize {
    let end = offset.min(src.len());
    let start = src[..end].rfind('\n').map_or(0, |i| i + 1);
    end - start
}

/// A template's error as the engine's: Helm's message, with the place it names.
impl From<TemplateError> for crate::error::Error {
    fn from(e: TemplateError) -> Self {
        let known = |n: usize| (n > 0).then_some(n as u32);
        crate::error::Error::at(&e.file, known(e.line), known(e.column), e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str) -> std::result::Result<String, TemplateError> {
        let arena = Bump::new();
        let mut set = TemplateSet::new(&arena);
        set.add("t.yaml", text.into())?;
        set.render("t.yaml", &Value::map(Default::default()))
    }

    /// Marks trace every byte of the output to the template text or action that wrote it:
    /// through `{{ template }}`, and through `include` piped into `nindent`, to the helper's own
    /// text; what a value printed is the printing action's.
    #[test]
    fn marks_trace_output_to_template_text_through_includes() {
        let arena = Bump::new();
        let mut set = TemplateSet::new(&arena);
        let helpers = "{{- define \"sel\" -}}\nkubernetes.io/os: windows\nzone: a\n{{- end -}}\n\
                       {{- define \"name\" }}web{{ end -}}";
        set.add("c/templates/_helpers.tpl", helpers.into()).unwrap();
        let main = "name: {{ template \"name\" }}\nnodeSelector: {{- include \"sel\" . | nindent 2 }}\nimage: {{ .image }}\n";
        set.add("c/templates/d.yaml", main.into()).unwrap();
        let data = Value::map(
            [("image".to_string(), Value::from("nginx"))]
                .into_iter()
                .collect(),
        );
        let (out, marks) = set.render_marked("c/templates/d.yaml", &data).unwrap();
        assert_eq!(
            out,
            "name: web\nnodeSelector:\n  kubernetes.io/os: windows\n  zone: a\nimage: nginx\n"
        );
        // The mark in force at an output byte: its file, and the source byte it comes from.
        let at = |needle: &str| {
            let o = out.find(needle).unwrap() as u32;
            let m = marks.marks.iter().rev().find(|m| m.out <= o).unwrap();
            let (file, source) = &marks.files[m.file as usize];
            let src = if m.verbatim {
                m.src + (o - m.out)
            } else {
                m.src
            };
            (
                file.to_string(),
                source[src as usize..].to_string(),
                m.verbatim,
            )
        };
        let (file, rest, verbatim) = at("web");
        assert_eq!(file, "c/templates/_helpers.tpl");
        assert!(rest.starts_with("web") && verbatim, "{rest}");
        let (file, rest, verbatim) = at("zone: a");
        assert_eq!(file, "c/templates/_helpers.tpl");
        assert!(rest.starts_with("zone: a") && verbatim, "{rest}");
        let (file, rest, _) = at("kubernetes.io/os");
        assert_eq!(file, "c/templates/_helpers.tpl");
        assert!(rest.starts_with("kubernetes.io/os"), "{rest}");
        let (file, rest, verbatim) = at("nginx");
        assert_eq!(file, "c/templates/d.yaml");
        assert!(rest.starts_with(".image }}") && !verbatim, "{rest}");
        let (file, rest, verbatim) = at("image:");
        assert_eq!(file, "c/templates/d.yaml");
        assert!(rest.starts_with("image: ") && verbatim, "{rest}");
    }

    /// An action names the value it read itself, not one a template it includes read: the
    /// helper's `.Values.nameOverride` is not what `include … | trunc` printed.
    #[test]
    fn an_include_keeps_its_values_to_itself() {
        let arena = Bump::new();
        let mut set = TemplateSet::new(&arena);
        let helpers = "{{- define \"fullname\" }}{{ .Values.nameOverride }}-app{{ end -}}";
        set.add("c/templates/_helpers.tpl", helpers.into()).unwrap();
        let main = "name: {{ include \"fullname\" . | trunc 63 }}\ntag: {{ .Values.image.tag }}\n";
        set.add("c/templates/d.yaml", main.into()).unwrap();
        let values = Value::map(
            [
                ("nameOverride".to_string(), Value::from("web")),
                (
                    "image".to_string(),
                    Value::map(
                        [("tag".to_string(), Value::from("1.2"))]
                            .into_iter()
                            .collect(),
                    ),
                ),
            ]
            .into_iter()
            .collect(),
        );
        let data = Value::map([("Values".to_string(), values)].into_iter().collect());
        let (out, marks) = set.render_marked("c/templates/d.yaml", &data).unwrap();
        assert_eq!(out, "name: web-app\ntag: 1.2\n");
        let value_at = |needle: &str| {
            let o = out.find(needle).unwrap() as u32;
            let m = marks.marks.iter().rev().find(|m| m.out <= o).unwrap();
            marks.values.get(m.value as usize).map(|v| v.to_string())
        };
        assert_eq!(value_at("1.2").as_deref(), Some("image.tag"));
        assert_eq!(value_at("web-app"), None);
    }

    /// Templates that used to panic, abort on allocation, overflow the stack or never end:
    /// each is now an output or an error, in debug builds too (overflow checks on).
    #[test]
    fn no_template_crashes_the_renderer() {
        let ends = |t: &str| {
            let r = render(t);
            assert!(
                r.as_ref().is_ok() || r.as_ref().is_err_and(|e| !e.message.is_empty()),
                "{t}: {r:?}"
            );
            r
        };
        // A cut inside a character, Go's byte slicing.
        assert_eq!(ends(r#"{{ trunc 2 "héllo" }}"#).unwrap(), "h\u{fffd}");
        assert_eq!(ends(r#"{{ trunc -3 "héllo" }}"#).unwrap(), "llo");
        // Text and an action that together write `<no value>`, which Helm removes: the mark
        // inside it moves with the text.
        assert_eq!(ends(r#"a<no {{ "value>" }}b"#).unwrap(), "ab");
        for t in [
            r#"{{ "x" | indent 9999999999 }}"#,
            r#"{{ "x" | nindent 99999999999999 }}"#,
            r#"{{ len (untilStep 0 9223372036854775807 4611686018427387904) }}"#,
            r#"{{ len (untilStep 9223372036854775800 9223372036854775807 3) }}"#,
            r#"{{ $s := "ab" }}{{ range until 40 }}{{ $s = print $s $s }}{{ end }}{{ len $s }}"#,
            r#"{{ $l := list 1 }}{{ range until 40 }}{{ $l = concat $l $l }}{{ end }}{{ len $l }}"#,
            r#"{{ $d := dict }}{{ range until 100000 }}{{ $d = dict "a" $d }}{{ end }}ok"#,
            r#"{{ $d := list }}{{ range until 100000 }}{{ $d = list $d }}{{ end }}ok"#,
            r#"{{ repeat 999999999999 "x" }}"#,
        ] {
            assert!(ends(t).is_err(), "{t}");
        }
        // Go's answers: wrapping arithmetic, `seq` past int64's end empty, printf's garbage
        // widths.
        assert_eq!(
            ends("{{ add 9223372036854775807 1 }} {{ mul 9223372036854775807 2 }} {{ sub -9223372036854775808 1 }}").unwrap(),
            "-9223372036854775808 -2 9223372036854775807"
        );
        assert_eq!(
            ends("{{ len (seq 9223372036854775806 9223372036854775807) }}").unwrap(),
            "0"
        );
        assert_eq!(
            ends(r#"{{ printf "%99999999999d|" 1 }}"#).unwrap(),
            "%!(NOVERB)%!(EXTRA int=1)"
        );
        assert_eq!(
            ends(r#"{{ printf "%.99999999999f" 1.0 }}"#).unwrap(),
            "%!(NOVERB)%!(EXTRA float64=1)"
        );
        assert_eq!(
            ends("{{ seq 1 2 10 }}|{{ seq 10 -3 1 }}|{{ seq 3 1 }}").unwrap(),
            "1 3 5 7 9|10 7 4 1|3 2 1"
        );
    }

    #[test]
    fn runaway_templates_are_stopped() {
        // Would run 10^12 steps.
        let e = render("{{ range until 1000000 }}{{ range until 1000000 }}{{ end }}{{ end }}")
            .unwrap_err();
        assert!(e.to_string().contains("step limit"), "{e}");
        // Would write 10 GB.
        let e = render(r#"{{ range until 1000000 }}{{ repeat 10000 "x" }}{{ end }}"#).unwrap_err();
        assert!(e.to_string().contains("output limit"), "{e}");
        // Would parse a new text a million times (the trees of a render are bounded).
        let e = render(r#"{{ range until 1000000 }}{{ tpl (printf "{{ %d }}" .) $ }}{{ end }}"#)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("the render's templates take more than"),
            "{e}"
        );
        // Would build a list of 10^10 items.
        let e = render("{{ until 10000000000 }}").unwrap_err();
        assert!(e.message.contains("more than winguard builds"), "{e}");
        // A template that includes itself stops at Helm's depth.
        let e = render(r#"{{ define "me" }}{{ include "me" . }}{{ end }}{{ include "me" . }}"#);
        assert!(
            e.as_ref()
                .is_err_and(|e| e.message.contains("nested reference name: me")),
            "{e:?}"
        );
    }

    #[test]
    fn errors_carry_the_position_helm_reports() {
        let e = render("a: 1\nb: {{ .x.y.z }}\n").unwrap_err();
        // Go places a field chain at its second part: `.y` is byte 9 of line 2.
        assert_eq!((e.line, e.column), (2, 8), "{e}");
        assert_eq!(
            e.to_string(),
            "t.yaml:2:8\n  executing \"t.yaml\" at <.x.y.z>:\n    nil pointer evaluating interface {}.y"
        );
        let e = render("{{ if }}").unwrap_err();
        assert_eq!(e.kind, ErrorKind::Parse);
    }
}
