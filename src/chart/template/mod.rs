//! Go's `text/template`, executed the way Helm executes it.
//!
//! The syntax tree is the `gotmpl` crate's (Go's nodes: trim markers, `break`/`continue`,
//! `define`/`block`, number literals, a line on every node); our `parse` module builds it,
//! faster than gotmpl's own parser and with Go's parse-time errors. Execution is our own, because
//! gotmpl's executor cannot do what Helm needs: its functions get no access to the
//! template set (Helm's `include` and `tpl` execute other templates), a field can't be a method
//! with arguments (`.Files.Get "x"`, `.Capabilities.APIVersions.Has "v1"`), its values have one
//! integer type (Helm values are `float64` and print as `1e+06`; literals are `int`, Sprig returns
//! `int64`), and its run-time errors carry no position (Helm reports `file:line:col`). Execution
//! is bounded in steps, output and `include` depth, so a template can neither hang nor fill memory.

pub mod certs;
pub mod digest;
pub mod funcs;
mod parse;
pub mod random;
pub mod semver;
pub mod time;
pub mod value;
pub mod yaml;

use rustc_hash::FxHashMap as HashMap;
use std::rc::Rc;

use gotmpl::parse::{BranchNode, CommandNode, Expr, ListNode, Node, Number, PipeNode, Pos};

pub use value::{Object, Value};

/// Helm's bound on how deep one template name may `include` itself.
const MAX_INCLUDE_DEPTH: usize = 1000;
/// How many nodes one render may execute: far above any real chart, low enough to stop a
/// template that would run for hours (`range until 1000000000`).
const MAX_STEPS: u64 = 50_000_000;
/// When less stack than this is left, a nested template runs on a new segment of
/// [`STACK_GROWTH`] bytes.
const STACK_RED_ZONE: usize = 128 * 1024;
const STACK_GROWTH: usize = 4 * 1024 * 1024;
/// How much text one render may produce.
const MAX_OUTPUT: usize = 128 * 1024 * 1024;

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
            ErrorKind::Parse => write!(
                f,
                "parse error at ({}:{}): {}",
                self.file, self.line, self.message
            ),
            ErrorKind::Fail => write!(
                f,
                "execution error at ({}:{}:{}): {}",
                self.file, self.line, self.column, self.message
            ),
            // Helm 4 writes execution errors over three lines.
            ErrorKind::Exec => match &self.context {
                Some(context) => write!(
                    f,
                    "{}:{}:{}\n  {context}:\n    {}",
                    self.file, self.line, self.column, self.message
                ),
                None => write!(
                    f,
                    "template: {}:{}:{}: {}",
                    self.file, self.line, self.column, self.message
                ),
            },
        }
    }
}

/// A parsed body and the file it came from (for positions).
struct Body {
    list: Rc<ListNode>,
    file: Rc<str>,
}

/// Every template of a render: the files and the `define`s in them, by name.
#[derive(Default)]
pub struct TemplateSet {
    bodies: HashMap<String, Body>,
    sources: HashMap<Rc<str>, std::sync::Arc<str>>,
}

impl TemplateSet {
    /// Parses a file into the set. Definitions replace earlier ones of the same name (Helm
    /// parses parent charts after subcharts so the parent's win).
    pub fn add(&mut self, file: &str, text: std::sync::Arc<str>) -> Result<()> {
        let file: Rc<str> = file.into();
        let (list, defines) = parse(&file, &text)?;
        self.sources.insert(file.clone(), text);
        for define in defines {
            // Go keeps an earlier non-empty definition over a later empty one.
            if define.body.is_empty_tree() && self.bodies.contains_key(define.name.as_str()) {
                continue;
            }
            self.bodies.insert(
                define.name.to_string(),
                Body {
                    list: Rc::new(define.body),
                    file: file.clone(),
                },
            );
        }
        if !list.is_empty_tree() || !self.bodies.contains_key(&*file) {
            self.bodies.insert(
                file.to_string(),
                Body {
                    list: Rc::new(list),
                    file: file.clone(),
                },
            );
        }
        Ok(())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.bodies.contains_key(name)
    }

    /// Executes the template `name` with `data` as dot and `$`. Helm removes every
    /// `<no value>` from the result.
    pub fn render(&self, name: &str, data: &Value) -> Result<String> {
        let mut exec = Exec::new(self);
        let body = self.bodies.get(name).ok_or_else(|| TemplateError {
            file: name.into(),
            line: 0,
            column: 0,
            message: format!("no template {name:?} associated with template \"gotpl\""),
            kind: ErrorKind::Exec,
            context: None,
        })?;
        exec.file = body.file.clone();
        exec.name = name.into();
        // Output is usually about as long as the template: grown once, not doubling up to it.
        if let Some(src) = self.sources.get(&body.file) {
            exec.out.reserve(src.len() + src.len() / 2);
        }
        exec.vars.push(("$".into(), data.clone()));
        exec.run_list(&body.list.clone(), data)?;
        Ok(without_no_value(exec.out))
    }
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
fn parse(file: &str, text: &str) -> Result<(ListNode, Vec<gotmpl::parse::DefineNode>)> {
    let is_function = |name: &str| matches!(name, "and" | "or") || funcs::lookup(name).is_some();
    parse::parse(text, &is_function).map_err(|e| TemplateError {
        file: file.into(),
        line: e.line,
        column: 0,
        message: e.message,
        kind: ErrorKind::Parse,
        context: None,
    })
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
    /// Already a full error from a nested template (`include`).
    Nested(TemplateError),
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure::Exec(s)
    }
}

/// One execution: variables, output, and the bounds.
pub struct Exec<'s> {
    set: &'s TemplateSet,
    /// Templates `tpl` defined, visible while its text runs.
    overlay: Vec<HashMap<String, Body>>,
    /// Variables, innermost last (names are short: kept inline, no allocation per binding).
    vars: Vec<(gotmpl::parse::SmolStr, Value)>,
    /// Where the running template's variables start: a called template sees only its own.
    frame: usize,
    /// Output buffers of finished `include`s, reused by the next (they grow once, not per call).
    spare: Vec<String>,
    out: String,
    file: Rc<str>,
    /// The template running (a file, or a `define`'s name), for `executing "NAME"`.
    name: Rc<str>,
    include_depth: HashMap<String, usize>,
    steps: u64,
}

type Result<T> = std::result::Result<T, TemplateError>;

impl<'s> Exec<'s> {
    fn new(set: &'s TemplateSet) -> Self {
        Exec {
            set,
            overlay: Vec::new(),
            vars: Vec::new(),
            out: String::new(),
            frame: 0,
            spare: Vec::new(),
            file: "".into(),
            name: "".into(),
            include_depth: HashMap::default(),
            steps: 0,
        }
    }

    fn error(&self, pos: Pos, failure: Failure) -> TemplateError {
        let column = self
            .set
            .sources
            .get(&self.file)
            .map_or(0, |src| go_column(src, pos.offset));
        match failure {
            Failure::Nested(e) => e,
            Failure::Fail(message) => TemplateError {
                file: self.file.to_string(),
                line: pos.line,
                column,
                message,
                kind: ErrorKind::Fail,
                context: None,
            },
            Failure::Exec(message) => {
                // `<EXPR>: MESSAGE`: the expression goes into Go's context line.
                let (expr, message) =
                    match message.strip_prefix('<').and_then(|m| m.split_once(">: ")) {
                        Some((expr, rest)) => (format!("<{expr}>"), rest.to_string()),
                        None => (String::from("<>"), message),
                    };
                TemplateError {
                    file: self.file.to_string(),
                    line: pos.line,
                    column,
                    message,
                    kind: ErrorKind::Exec,
                    context: Some(format!("executing {:?} at {expr}", self.name.as_ref())),
                }
            }
        }
    }

    fn body(&self, name: &str) -> Option<(Rc<ListNode>, Rc<str>)> {
        for layer in self.overlay.iter().rev() {
            if let Some(b) = layer.get(name) {
                return Some((b.list.clone(), b.file.clone()));
            }
        }
        self.set
            .bodies
            .get(name)
            .map(|b| (b.list.clone(), b.file.clone()))
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

    fn run_list(&mut self, list: &ListNode, dot: &Value) -> Result<Flow> {
        for node in &list.nodes {
            match self.run_node(node, dot)? {
                Flow::Normal => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Normal)
    }

    fn run_node(&mut self, node: &Node, dot: &Value) -> Result<Flow> {
        match node {
            Node::Text(t) => {
                self.out.push_str(&t.text);
                Ok(Flow::Normal)
            }
            Node::Action(a) => {
                self.step(a.pos)?;
                let v = self.pipe(&a.pipe, dot)?;
                if a.pipe.decl.is_empty() {
                    self.print(&v);
                }
                Ok(Flow::Normal)
            }
            Node::If(b) => self.branch(b, dot, false),
            Node::With(b) => self.branch(b, dot, true),
            Node::Range(b) => self.range(b, dot),
            Node::Template(t) => {
                self.step(t.pos)?;
                let data = match &t.pipe {
                    Some(p) => self.pipe(p, dot)?,
                    None => Value::Nil,
                };
                let Some((body, file)) = self.body(&t.name) else {
                    return Err(self.error(
                        t.pos,
                        Failure::Exec(format!(
                            "<{:?}>: template: no template {:?} associated with template \"gotpl\"",
                            t.name.as_str(),
                            t.name.as_str()
                        )),
                    ));
                };
                let out = self.call_template(&body, file, &data, t.pos, &t.name)?;
                self.out.push_str(&out);
                self.recycle(out);
                Ok(Flow::Normal)
            }
            Node::List(l) => self.run_list(l, dot),
            Node::Define(_) => Ok(Flow::Normal),
            Node::Break(_) => Ok(Flow::Break),
            Node::Continue(_) => Ok(Flow::Continue),
        }
    }

    /// Runs a named template with its own variables (`$` is its data) into a string.
    fn call_template(
        &mut self,
        body: &ListNode,
        file: Rc<str>,
        data: &Value,
        pos: Pos,
        name: &str,
    ) -> Result<String> {
        // Counted by name, as Helm counts; the name is stored once, not per call.
        let depth = match self.include_depth.get_mut(name) {
            Some(d) => d,
            None => self.include_depth.entry(name.to_string()).or_insert(0),
        };
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
        self.vars
            .push((gotmpl::parse::SmolStr::new_static("$"), data.clone()));
        let buffer = self.spare.pop().unwrap_or_default();
        let saved_out = std::mem::replace(&mut self.out, buffer);
        let saved_file = std::mem::replace(&mut self.file, file);
        let saved_name = std::mem::replace(&mut self.name, name.into());
        // `include` may nest a thousand deep (Helm's bound): the stack grows on demand instead
        // of overflowing the caller's thread.
        let result =
            stacker::maybe_grow(STACK_RED_ZONE, STACK_GROWTH, || self.run_list(body, data));
        let out = std::mem::replace(&mut self.out, saved_out);
        self.vars.truncate(self.frame);
        self.frame = saved_frame;
        self.file = saved_file;
        self.name = saved_name;
        if let Some(d) = self.include_depth.get_mut(name) {
            *d -= 1;
        }
        result?;
        Ok(out)
    }

    /// Gives a finished output buffer back for the next `include`.
    pub(crate) fn recycle(&mut self, mut buffer: String) {
        if self.spare.len() < 32 {
            buffer.clear();
            self.spare.push(buffer);
        }
    }

    /// `include NAME DATA` (Helm).
    pub(crate) fn include(
        &mut self,
        name: &str,
        data: &Value,
        pos: Pos,
    ) -> std::result::Result<String, Failure> {
        let Some((body, file)) = self.body(name) else {
            return Err(Failure::Exec(format!(
                "error calling include: template: no template {name:?} associated with template \"gotpl\""
            )));
        };
        self.call_template(&body, file, data, pos, name)
            .map_err(Failure::Nested)
    }

    /// `tpl TEXT DATA` (Helm): the text is parsed as a template of the calling file, sees every
    /// template defined so far, and its own `define`s are visible only while it runs.
    pub(crate) fn tpl(
        &mut self,
        text: &str,
        data: &Value,
        pos: Pos,
    ) -> std::result::Result<String, Failure> {
        let (list, defines) = parse(&self.file, text).map_err(|e| {
            Failure::Exec(format!(
                "error calling tpl: cannot parse template {text:?}: template: {}:{}: {}",
                e.file, e.line, e.message
            ))
        })?;
        let mut layer = HashMap::default();
        for d in defines {
            layer.insert(
                d.name.to_string(),
                Body {
                    list: Rc::new(d.body),
                    file: self.file.clone(),
                },
            );
        }
        self.overlay.push(layer);
        let file = self.file.clone();
        let result = self.call_template(&list, file, data, pos, "tpl");
        self.overlay.pop();
        result.map(without_no_value).map_err(Failure::Nested)
    }

    fn branch(&mut self, b: &BranchNode, dot: &Value, with: bool) -> Result<Flow> {
        self.step(b.pos)?;
        let mark = self.vars.len();
        let v = self.pipe(&b.pipe, dot)?;
        let flow = if v.truthy() {
            let inner = if with { v } else { dot.clone() };
            self.run_list(&b.body, &inner)?
        } else if let Some(e) = &b.else_body {
            self.run_list(e, dot)?
        } else {
            Flow::Normal
        };
        self.vars.truncate(mark);
        Ok(flow)
    }

    fn range(&mut self, b: &BranchNode, dot: &Value) -> Result<Flow> {
        self.step(b.pos)?;
        let mark = self.vars.len();
        // The range pipeline's variables are the loop's, not the pipeline's result.
        let value = self.commands(&b.pipe.commands, dot)?;
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
        for (key, item) in items {
            self.step(b.pos)?;
            let inner_mark = self.vars.len();
            match b.pipe.decl.len() {
                0 => {}
                1 => self.bind(&b.pipe.decl[0], item.clone(), b.pipe.is_assign),
                _ => {
                    self.bind(&b.pipe.decl[0], key, b.pipe.is_assign);
                    self.bind(&b.pipe.decl[1], item.clone(), b.pipe.is_assign);
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

    fn bind(&mut self, name: &str, value: Value, assign: bool) {
        let frame = self.frame;
        if assign
            && let Some(slot) = self.vars[frame..]
                .iter_mut()
                .rev()
                .find(|(n, _)| &**n == name)
        {
            slot.1 = value;
            return;
        }
        self.vars.push((gotmpl::parse::SmolStr::new(name), value));
    }

    fn pipe(&mut self, pipe: &PipeNode, dot: &Value) -> Result<Value> {
        let value = self.commands(&pipe.commands, dot)?;
        for name in &pipe.decl {
            self.bind(name, value.clone(), pipe.is_assign);
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
        let Some(first) = cmd.args.first() else {
            return Ok(Value::Nil);
        };
        let rest = &cmd.args[1..];
        match first {
            Expr::Identifier(pos, name) => self.call_function(name, rest, dot, piped, *pos),
            Expr::Field(pos, names) => {
                let args = self.args(rest, dot, piped)?;
                self.chain(dot.clone(), names, &args, *pos, "")
            }
            Expr::Variable(pos, name, names) => {
                let v = self.variable(name, *pos)?;
                if names.is_empty() {
                    if !rest.is_empty() || piped.is_some() {
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
                self.chain(v, names, &args, *pos, name)
            }
            Expr::Chain(pos, inner, names) => {
                let v = self.arg(inner, dot)?;
                let args = self.args(rest, dot, piped)?;
                self.chain(v, names, &args, *pos, "")
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
        match e {
            Expr::Dot(_) => Ok(dot.clone()),
            Expr::Field(pos, names) => self.chain(dot.clone(), names, &[], *pos, ""),
            Expr::Variable(pos, name, names) => {
                let v = self.variable(name, *pos)?;
                if names.is_empty() {
                    Ok(v)
                } else {
                    self.chain(v, names, &[], *pos, name)
                }
            }
            Expr::Identifier(pos, name) => self.call_function(name, &[], dot, None, *pos),
            Expr::String(_, s) => Ok(Value::Str(s.as_ref().into())),
            Expr::Number(_, n) => Ok(match n {
                Number::Int(i) => Value::Int(*i),
                Number::Uint(u) => Value::Int64(*u as i64),
                Number::Float(f) => Value::Float(*f),
            }),
            Expr::Bool(_, b) => Ok(Value::Bool(*b)),
            Expr::Nil(_) => Ok(Value::Nil),
            Expr::Pipe(_, p) => {
                let mark = self.vars.len();
                let v = self.pipe(p, dot);
                self.vars.truncate(mark);
                v
            }
            Expr::Chain(pos, inner, names) => {
                let v = self.arg(inner, dot)?;
                self.chain(v, names, &[], *pos, "")
            }
        }
    }

    fn variable(&self, name: &str, pos: Pos) -> Result<Value> {
        self.vars[self.frame..]
            .iter()
            .rev()
            .find(|(n, _)| &**n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| {
                self.error(
                    pos,
                    Failure::Exec(format!("<{name}>: undefined variable: {name}")),
                )
            })
    }

    /// `.a.b.c ARGS`: fields walked in order; the last may be a method given the arguments.
    fn chain(
        &mut self,
        mut v: Value,
        names: &[gotmpl::parse::SmolStr],
        args: &[Value],
        pos: Pos,
        root: &str,
    ) -> Result<Value> {
        for (i, name) in names.iter().enumerate() {
            let last = i + 1 == names.len();
            let call_args: &[Value] = if last { args } else { &[] };
            v = self.field(&v, name, call_args).map_err(|m| {
                // Go names the whole chain (`<.Values.missing.deeper>`).
                let shown: Vec<&str> = names.iter().map(|n| n.as_str()).collect();
                self.error(
                    pos,
                    Failure::Exec(format!("<{root}.{}>: {m}", shown.join("."))),
                )
            })?;
        }
        Ok(v)
    }

    fn field(&self, v: &Value, name: &str, args: &[Value]) -> std::result::Result<Value, String> {
        match v {
            Value::Map(m) => {
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
        name: &str,
        exprs: &[Expr],
        dot: &Value,
        piped: Option<Value>,
        pos: Pos,
    ) -> Result<Value> {
        // `and` and `or` stop at the deciding argument, unevaluated beyond it.
        if name == "and" || name == "or" {
            let want = name == "or";
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
        let Some(func) = funcs::lookup(name) else {
            return Err(self.error(
                pos,
                Failure::Exec(format!("<{name}>: function {name:?} not defined")),
            ));
        };
        let args = self.args(exprs, dot, piped)?;
        self.step(pos)?;
        let mut call = funcs::Call { exec: self, pos };
        match func(&mut call, args) {
            Ok(v) => Ok(v),
            Err(Failure::Exec(m)) => Err(self.error(
                pos,
                Failure::Exec(format!("<{name}>: error calling {name}: {m}")),
            )),
            Err(other) => Err(self.error(pos, other)),
        }
    }

    /// Writes a value as Go's `fmt.Fprint` does (`nil` is `<no value>`).
    fn print(&mut self, v: &Value) {
        match v {
            Value::Str(s) => self.out.push_str(s),
            Value::Nil => self.out.push_str("<no value>"),
            Value::Object(o) => self.out.push_str(&o.display()),
            other => other.write_go(&mut self.out),
        }
    }
}

/// The column Go reports for a byte offset: the byte count from the line's start (0-based).
fn go_column(src: &str, offset: usize) -> usize {
    let end = offset.min(src.len());
    let start = src[..end].rfind('\n').map_or(0, |i| i + 1);
    end - start
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(text: &str) -> std::result::Result<String, TemplateError> {
        let mut set = TemplateSet::default();
        set.add("t.yaml", text.into())?;
        set.render("t.yaml", &Value::map(Default::default()))
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
