//! Rule files (`rules/*.yaml`): the on-disk format, loading, and compilation.
//!
//! A rule is data: a scope (each pod spec, each container, or objects of some kinds), a condition,
//! a message, an optional fix as JSON Patch, and its documentation. Expressions and JSONPaths are
//! compiled once at load; unknown keys and bad expressions are errors naming file:line.
//! See `rules/README.md` for the format and the facts rules can read.

pub mod docs;

use std::path::Path;

use crate::value::Value;
use serde::{Deserialize, Serialize};

use crate::error::{Error, ErrorKind};
use crate::expr::{Activation, CompileError, Compiler, Program, Registry, Type};

/// How bad a finding is.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// What a rule iterates over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Every pod spec: a Pod's, or the pod template of a workload (RULES.md §1).
    Pod,
    /// Every container (init, app and ephemeral) of every pod spec.
    Container,
    /// Whole objects of the kinds listed in `kinds`.
    Object,
}

/// Whether a fix may be applied without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Applicability {
    /// Applied only with `--unsafe-fixes`.
    Unsafe,
    /// Applied by `fix`, `mutate` and the mutating webhook.
    Safe,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RuleFile {
    name: String,
    severity: Severity,
    /// Off unless the config's `rules:` names it (then at the level given there).
    #[serde(default)]
    opt_in: bool,
    summary: String,
    scope: Scope,
    #[serde(default)]
    kinds: Vec<String>,
    #[serde(default)]
    profiles: Vec<String>,
    /// Named expressions evaluated in order before `when`, bound as variables.
    #[serde(default, rename = "let")]
    lets: crate::value::Map,
    when: String,
    each: Option<String>,
    pointer: Option<String>,
    #[serde(default)]
    severity_when: Vec<SeverityWhenFile>,
    message: String,
    fix: Option<FixFile>,
    docs: Docs,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SeverityWhenFile {
    when: String,
    severity: Severity,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FixFile {
    title: String,
    applicability: Applicability,
    when: Option<String>,
    patch: Vec<PatchOpFile>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchOpFile {
    /// The operation is emitted only when this holds.
    when: Option<String>,
    op: PatchOpKind,
    path: String,
    from: Option<String>,
    value: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PatchOpKind {
    Add,
    Remove,
    Replace,
    Move,
}

/// A rule's documentation: the source of `winguard explain`, the docs' rule table and SARIF help.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Docs {
    /// What the rule checks.
    pub what: String,
    /// Why it matters: what fails in the cluster.
    pub why: String,
    /// A manifest the rule fires on.
    pub bad: String,
    /// The same manifest fixed.
    pub good: String,
    /// Config (YAML) the examples are linted with, when the rule needs some.
    pub config: Option<String>,
    /// Why a fix is unsafe, or when it is not offered.
    pub fix_safety: Option<String>,
    #[serde(default)]
    pub references: Vec<String>,
}

/// The variables' slots, the same in every rule: a scope's variables that a rule cannot read are
/// declared under names no expression can write (`@container`), so the engine binds each value
/// in one place for every rule.
pub mod slot {
    pub const OBJECT: usize = 0;
    pub const CONFIG: usize = 1;
    pub const POD: usize = 2;
    pub const POD_SPEC: usize = 3;
    pub const POD_META: usize = 4;
    pub const CONTAINER: usize = 5;
    pub const CONTAINER_SPEC: usize = 6;
    pub const ITEM: usize = 7;
    /// The first `let`; the others follow in file order.
    pub const LETS: usize = 8;
}

/// The generated reference of rules/README.md (between its markers): the `pod` and
/// `container` facts and every function, from their declarations in the registry.
pub fn reference_markdown(r: &Registry) -> String {
    let mut out = String::new();
    for record in ["pod", "container"] {
        let Some(Type::Record(id)) = r.record_type(record) else {
            continue;
        };
        out.push_str(&format!(
            "\n| `{record}.` fact | type | what it is |\n|---|---|---|\n"
        ));
        for (name, ty, doc) in &r.record(id).fields {
            out.push_str(&format!("| `{name}` | `{}` | {doc} |\n", r.type_name(ty)));
        }
    }
    out.push_str("\n| function | what it does |\n|---|---|\n");
    for o in r.all() {
        out.push_str(&format!("| `{}` | {} |\n", o.signature, o.doc));
    }
    out
}

/// A message or path with `{{ expr }}` holes.
#[derive(Debug, Serialize, Deserialize)]
pub struct Template {
    parts: Vec<TemplatePart>,
}

#[derive(Debug, Serialize, Deserialize)]
enum TemplatePart {
    Text(String),
    Expr(Program),
}

impl Template {
    /// Compiles a template; an error carries the byte offset in `text`.
    pub fn compile(text: &str, compiler: &Compiler<'_>) -> Result<Template, CompileError> {
        let mut parts = Vec::new();
        let mut rest = text;
        let mut base = 0;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                parts.push(TemplatePart::Text(rest[..start].to_string()));
            }
            let end = rest[start..].find("}}").ok_or_else(|| CompileError {
                message: "unclosed `{{`".to_string(),
                offset: base + start,
            })?;
            let inner = &rest[start + 2..start + end];
            let e = compiler.compile(inner).map_err(|mut e| {
                e.offset += base + start + 2;
                e
            })?;
            parts.push(TemplatePart::Expr(e));
            base += start + end + 2;
            rest = &rest[start + end + 2..];
        }
        if !rest.is_empty() {
            parts.push(TemplatePart::Text(rest.to_string()));
        }
        Ok(Template { parts })
    }

    /// A template that is exactly one `{{ expr }}` keeps the expression's type.
    fn single_expr(&self) -> Option<&Program> {
        match self.parts.as_slice() {
            [TemplatePart::Expr(e)] => Some(e),
            _ => None,
        }
    }

    /// The text with every hole filled; a hole whose expression fails renders as the error,
    /// in angle brackets (a rule bug shows in its message rather than vanishing).
    pub fn render<'a>(&'a self, act: &Activation<'a>) -> String {
        // Sized for the literal text and some values, so the string seldom grows while a
        // message is rendered (every finding renders one).
        let literal: usize = self
            .parts
            .iter()
            .map(|p| match p {
                TemplatePart::Text(t) => t.len(),
                TemplatePart::Expr(_) => 32,
            })
            .sum();
        let mut out = String::with_capacity(literal);
        for p in &self.parts {
            match p {
                TemplatePart::Text(t) => out.push_str(t),
                TemplatePart::Expr(e) => match e.eval(act) {
                    Ok(v) => v.display_into(&mut out),
                    Err(err) => {
                        out.push_str("<error: ");
                        out.push_str(&err.0);
                        out.push('>');
                    }
                },
            }
        }
        out
    }

    fn exprs(&self) -> impl Iterator<Item = &Program> {
        self.parts.iter().filter_map(|p| match p {
            TemplatePart::Expr(e) => Some(e),
            TemplatePart::Text(_) => None,
        })
    }
}

/// A JSON value whose strings may hold templates.
#[derive(Debug, Serialize, Deserialize)]
pub enum ValueTemplate {
    Literal(#[serde(with = "crate::expr::stored::value")] Value),
    Template(Template),
    Array(Vec<ValueTemplate>),
    Object(Vec<(String, ValueTemplate)>),
}

impl ValueTemplate {
    /// Compiles the templates in a value; an error carries the JSON pointer (below the value)
    /// of the string at fault.
    fn compile(v: &Value, compiler: &Compiler<'_>) -> Result<Self, (String, CompileError)> {
        Ok(match v {
            Value::String(s) if s.contains("{{") => ValueTemplate::Template(
                Template::compile(s, compiler).map_err(|e| (String::new(), e))?,
            ),
            Value::Array(a) => ValueTemplate::Array(
                a.iter()
                    .enumerate()
                    .map(|(i, v)| {
                        Self::compile(v, compiler).map_err(|(p, e)| (format!("/{i}{p}"), e))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(m) => ValueTemplate::Object(
                m.iter()
                    .map(|(k, v)| {
                        let t = Self::compile(v, compiler).map_err(|(p, e)| {
                            (format!("/{}{p}", crate::value::escape_pointer_token(k)), e)
                        })?;
                        Ok((k.to_string(), t))
                    })
                    .collect::<Result<_, (String, CompileError)>>()?,
            ),
            other => ValueTemplate::Literal(other.clone()),
        })
    }

    pub fn render<'a>(&'a self, act: &Activation<'a>) -> Value {
        match self {
            ValueTemplate::Literal(v) => v.clone(),
            ValueTemplate::Template(t) => match t.single_expr() {
                Some(e) => e.eval(act).map(|v| v.to_value()).unwrap_or(Value::Null),
                None => Value::from(t.render(act)),
            },
            ValueTemplate::Array(a) => Value::Array(a.iter().map(|v| v.render(act)).collect()),
            ValueTemplate::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), v.render(act))).collect())
            }
        }
    }

    fn exprs<'a>(&'a self, out: &mut Vec<&'a Program>) {
        match self {
            ValueTemplate::Literal(_) => {}
            ValueTemplate::Template(t) => out.extend(t.exprs()),
            ValueTemplate::Array(a) => a.iter().for_each(|v| v.exprs(out)),
            ValueTemplate::Object(m) => m.iter().for_each(|(_, v)| v.exprs(out)),
        }
    }
}

/// What `each` iterates over.
#[derive(Debug, Serialize, Deserialize)]
pub enum Each {
    /// A JSONPath over the scope's raw value (the pod spec or container); each match's pointer is
    /// the finding's pointer. Stored as its text, parsed again when read back.
    JsonPath(
        #[serde(
            serialize_with = "Each::serialize_path",
            deserialize_with = "Each::deserialize_path"
        )]
        (String, crate::value::jsonpath::Path),
    ),
    /// An expression returning a list; items may carry a `pointer`.
    Expr(Program),
}

#[derive(Debug, Serialize, Deserialize)]
pub struct PatchOp {
    pub when: Option<Program>,
    pub op: PatchOpKind,
    pub path: Template,
    pub from: Option<Template>,
    pub value: Option<ValueTemplate>,
}

#[derive(Debug, Serialize, Deserialize)]
pub struct Fix {
    pub title: Template,
    pub applicability: Applicability,
    pub when: Option<Program>,
    pub patch: Vec<PatchOp>,
    /// The title as written in the rule file.
    title_text: String,
}

impl Fix {
    pub fn title_text(&self) -> String {
        self.title_text.clone()
    }
}

/// Whether a rule's message states the pod's note itself, known from its text at load (so the
/// engine searches a finding's message for the note only when it can't tell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MessageGivesReason {
    /// The rule's conditions don't read what the note explains: it would say nothing here.
    Irrelevant,
    /// A `{{pod.<note>}}` part.
    Always,
    /// Only in some branch of an expression (or through a `let`).
    Maybe,
    /// Nothing in the message reads it.
    Never,
}

/// A rule, compiled. It serializes, for the cache of the built-in rules (`RuleSet::to_stored`).
#[derive(Debug, Serialize, Deserialize)]
pub struct Rule {
    pub name: String,
    /// The severity from the rule file (before config overrides).
    pub default_severity: Severity,
    /// Off by default: it runs only when the config's `rules:` gives it a level.
    pub opt_in: bool,
    pub summary: String,
    pub scope: Scope,
    pub kinds: Vec<String>,
    /// The profiles it runs under (all when empty); the policy checks they exist.
    pub profiles: Vec<String>,
    /// `let` bindings, in file order: the i-th is bound to slot `slot::LETS + i`.
    pub lets: Vec<(String, Program)>,
    pub when: Program,
    /// Whether `when` reads `item` (directly or through a `let`).
    pub when_reads_item: bool,
    /// The lets that read `item` (directly or through other lets), by index.
    pub item_lets: Vec<usize>,
    pub each: Option<Each>,
    pub pointer: Option<Template>,
    pub severity_when: Vec<(Program, Severity)>,
    pub message: Template,
    /// Whether the message says the target-OS reason itself, which the engine otherwise appends.
    pub message_gives_reason: MessageGivesReason,
    pub fix: Option<Fix>,
    pub docs: Docs,
    /// The file it was loaded from.
    pub source: String,
}

impl Rule {
    /// How its fix may be applied; `None` for a rule without one.
    pub fn fix_applicability(&self) -> Option<Applicability> {
        self.fix.as_ref().map(|f| f.applicability)
    }

    /// Compiles a rule file's text; `name` names the file in errors.
    /// Expressions compile against `registry` (the functions and records they may use).
    pub fn load(text: &str, source: &str, registry: &Registry) -> Result<Rule, Error> {
        let (file, doc): (RuleFile, _) =
            crate::manifest::typed::parse_typed_with_doc(text, source)?;
        let place = FilePlace {
            text,
            source,
            doc: &doc,
        };
        if !file
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(place.at(
                "/name",
                0,
                format!("`{}` is not a kebab-case rule name", file.name),
            ));
        }
        if file.scope == Scope::Object && file.kinds.is_empty() {
            return Err(place.at("/scope", 0, "`scope: object` needs `kinds`".to_string()));
        }
        let mut compiler = scope_compiler(&file, registry);
        let lets = compile_lets(&file.lets, &mut compiler, &place)?;
        let x = Expressions {
            place: &place,
            compiler: &compiler,
            registry,
        };
        let each = x.each(file.each.as_deref())?;
        let fix = file.fix.map(|f| x.fix(f)).transpose()?;
        let when = x.condition("/when", &file.when)?;
        let item_lets = lets_reading_item(&lets);
        let when_reads_item =
            when.reads(slot::ITEM) || item_lets.iter().any(|j| when.reads(slot::LETS + j));
        let message = x.template("/message", &file.message)?;
        let message_gives_reason =
            message_gives_reason(registry, &message, &when, &lets, each.as_ref());
        let pointer = file
            .pointer
            .as_deref()
            .map(|p| x.template("/pointer", p))
            .transpose()?;
        let severity_when = file
            .severity_when
            .iter()
            .enumerate()
            .map(|(i, s)| {
                Ok((
                    x.condition(&format!("/severityWhen/{i}/when"), &s.when)?,
                    s.severity,
                ))
            })
            .collect::<Result<_, Error>>()?;
        Ok(Rule {
            message,
            message_gives_reason,
            when_reads_item,
            item_lets,
            lets,
            when,
            pointer,
            severity_when,
            name: file.name,
            default_severity: file.severity,
            opt_in: file.opt_in,
            summary: file.summary,
            scope: file.scope,
            kinds: file.kinds,
            profiles: file.profiles,
            each,
            fix,
            docs: file.docs,
            source: source.to_string(),
        })
    }

    /// Every expression of the rule.
    pub fn all_exprs(&self) -> Vec<&Program> {
        let mut out: Vec<&Program> = self.lets.iter().map(|(_, e)| e).collect();
        out.push(&self.when);
        out.extend(self.severity_when.iter().map(|(e, _)| e));
        out.extend(self.message.exprs());
        if let Some(p) = &self.pointer {
            out.extend(p.exprs());
        }
        if let Some(Each::Expr(e)) = &self.each {
            out.push(e);
        }
        if let Some(f) = &self.fix {
            out.extend(f.title.exprs());
            out.extend(f.when.iter());
            for op in &f.patch {
                out.extend(op.when.iter());
                out.extend(op.path.exprs());
                if let Some(from) = &op.from {
                    out.extend(from.exprs());
                }
                if let Some(v) = &op.value {
                    v.exprs(&mut out);
                }
            }
        }
        out
    }

    /// The default level as docs show it: `off` for an opt-in rule, else its severity.
    pub fn default_level(&self) -> &'static str {
        if self.opt_in {
            "off"
        } else {
            self.default_severity.as_str()
        }
    }

    /// The severity in force under a config (`None` when the rule is off).
    /// `levels`: per rule, `None` for off, else the severity to report at.
    pub fn configured_level(
        &self,
        levels: &std::collections::HashMap<String, Option<Severity>>,
    ) -> Option<Option<Severity>> {
        match levels.get(&self.name) {
            None if self.opt_in => None,
            None => Some(None),
            Some(None) => None,
            Some(Some(s)) => Some(Some(*s)),
        }
    }
}

/// Where a rule file's errors go: its text, its name and its parsed document.
struct FilePlace<'t> {
    text: &'t str,
    source: &'t str,
    doc: &'t crate::value::yaml::ParsedDoc,
}

impl FilePlace<'_> {
    /// An error at byte `offset` of the string at `pointer` in the file, placed at its line and
    /// column through the YAML parser's positions.
    fn at(&self, pointer: &str, offset: usize, message: String) -> Error {
        let (pos, _) = crate::value::yaml::resolve(&self.doc.value, &self.doc.pos, pointer);
        let (line, column) =
            crate::manifest::typed::scalar_position(self.text, pos.line, pos.col, offset);
        Error {
            kind: ErrorKind::Load,
            file: self.source.to_string(),
            line: Some(line),
            column: Some(column),
            message: format!("`{}`: {message}", &pointer[1..]),
        }
    }

    fn fail(&self, pointer: &str, e: CompileError) -> Error {
        self.at(pointer, e.offset, e.message)
    }
}

/// A compiler with the variables of the rule's scope declared, each in its fixed slot (see
/// `slot`).
fn scope_compiler<'r>(file: &RuleFile, registry: &'r Registry) -> Compiler<'r> {
    let mut compiler = Compiler::new(registry);
    let record = |name: &str| registry.record_type(name).unwrap_or(Type::Dyn);
    let (pod, container) = (file.scope != Scope::Object, file.scope == Scope::Container);
    for (name, visible, ty) in [
        ("object", true, Type::Dyn),
        ("config", true, Type::Dyn),
        ("pod", pod, record("pod")),
        ("podSpec", pod, Type::Dyn),
        ("podMeta", pod, Type::Dyn),
        ("container", container, record("container")),
        ("containerSpec", container, Type::Dyn),
        ("item", file.each.is_some(), Type::Dyn),
    ] {
        // An unreadable name keeps the slot numbering the same in every scope.
        let name = if visible {
            name.to_string()
        } else {
            format!("@{name}")
        };
        compiler.declare(&name, ty);
    }
    compiler
}

/// The rule's `let`s, compiled and declared in `compiler`. Lets may read each other: each is
/// typed from its text with the others unknown, then the ones that read another let are
/// compiled again with the types found.
fn compile_lets(
    texts: &crate::value::Map,
    compiler: &mut Compiler<'_>,
    place: &FilePlace<'_>,
) -> Result<Vec<(String, Program)>, Error> {
    let mut let_texts = Vec::new();
    for (name, v) in texts.iter() {
        let Value::String(t) = v else {
            return Err(place.at(
                &format!("/let/{name}"),
                0,
                format!("`{name}` must be an expression string"),
            ));
        };
        if compiler.slot(name).is_some() {
            return Err(place.at(
                &format!("/let/{name}"),
                0,
                format!("`{name}` is already a variable of the rule's scope"),
            ));
        }
        compiler.declare(name, Type::Dyn);
        let_texts.push((name.clone(), t.clone()));
    }
    let mut lets = Vec::with_capacity(let_texts.len());
    for (name, t) in &let_texts {
        let p = compiler
            .compile(t)
            .map_err(|e| place.fail(&format!("/let/{name}"), e))?;
        lets.push((name.to_string(), p));
    }
    for (name, p) in &lets {
        compiler.declare(name, p.ty().clone());
    }
    let reads_a_let = |p: &Program| (0..let_texts.len()).any(|j| p.reads(slot::LETS + j));
    for (i, (name, t)) in let_texts.iter().enumerate() {
        if reads_a_let(&lets[i].1) {
            lets[i].1 = compiler
                .compile(t)
                .map_err(|e| place.fail(&format!("/let/{name}"), e))?;
        }
    }
    check_let_cycles(&lets).map_err(|m| place.at("/let", 0, m))?;
    Ok(lets)
}

/// Which lets read `item`, directly or through other lets.
fn lets_reading_item(lets: &[(String, Program)]) -> Vec<usize> {
    let mut item_lets: Vec<usize> = Vec::new();
    loop {
        let before = item_lets.len();
        for (i, (_, p)) in lets.iter().enumerate() {
            if !item_lets.contains(&i)
                && (p.reads(slot::ITEM) || item_lets.iter().any(|j| p.reads(slot::LETS + j)))
            {
                item_lets.push(i);
            }
        }
        if item_lets.len() == before {
            return item_lets;
        }
    }
}

/// Whether the message says why the pod's deciding fact has its value. The pod's note (see
/// `engine::PodScope::note`) says why; a rule whose conditions never read that fact (an
/// annotation the EKS webhook denies on any pod, a millibyte quantity) has no use for it.
fn message_gives_reason(
    registry: &Registry,
    message: &Template,
    when: &Program,
    lets: &[(String, Program)],
    each: Option<&Each>,
) -> MessageGivesReason {
    let pod_type = registry.record_type("pod").unwrap_or(Type::Dyn);
    let note = match &pod_type {
        Type::Record(id) => registry.record(*id).note.clone(),
        _ => None,
    };
    let Some((decides, note)) = note else {
        return MessageGivesReason::Irrelevant;
    };
    let reads = |e: &Program| e.reads_field(&pod_type, &decides, registry);
    let conditions_read = reads(when)
        || lets.iter().any(|(_, e)| reads(e))
        || matches!(each, Some(Each::Expr(e)) if reads(e));
    let parts: Vec<&Program> = message.exprs().collect();
    if !conditions_read {
        MessageGivesReason::Irrelevant
    } else if parts.iter().any(|e| e.is_field(&pod_type, &note, registry)) {
        MessageGivesReason::Always
    } else if parts
        .iter()
        .copied()
        .chain(lets.iter().map(|(_, e)| e))
        .any(|e| e.reads_field(&pod_type, &note, registry))
    {
        MessageGivesReason::Maybe
    } else {
        MessageGivesReason::Never
    }
}

/// Compiles a rule file's expressions, conditions and templates once its variables are
/// declared, placing errors in the file.
struct Expressions<'c> {
    place: &'c FilePlace<'c>,
    compiler: &'c Compiler<'c>,
    registry: &'c Registry,
}

impl Expressions<'_> {
    fn expression(&self, pointer: &str, text: &str) -> Result<Program, Error> {
        self.compiler
            .compile(text)
            .map_err(|e| self.place.fail(pointer, e))
    }

    /// An expression that must be a bool.
    fn condition(&self, pointer: &str, text: &str) -> Result<Program, Error> {
        let p = self.expression(pointer, text)?;
        if !p.ty().may_be(&Type::Bool) {
            return Err(self.place.at(
                pointer,
                0,
                format!(
                    "a condition must be of type bool, and this is of type {}",
                    self.registry.type_name(p.ty())
                ),
            ));
        }
        Ok(p)
    }

    fn template(&self, pointer: &str, text: &str) -> Result<Template, Error> {
        Template::compile(text, self.compiler).map_err(|e| self.place.fail(pointer, e))
    }

    /// `each`: a JSONPath (`$…`) or an expression giving a list.
    fn each(&self, each: Option<&str>) -> Result<Option<Each>, Error> {
        let Some(e) = each else {
            return Ok(None);
        };
        if e.starts_with('$') {
            let q = crate::value::jsonpath::Path::parse(e).map_err(|err| {
                self.place
                    .at("/each", 0, format!("invalid JSONPath `{e}`: {err}"))
            })?;
            return Ok(Some(Each::JsonPath((e.to_string(), q))));
        }
        let p = self.expression("/each", e)?;
        if !p.ty().may_be(&Type::list(Type::Dyn)) {
            return Err(self.place.at(
                "/each",
                0,
                format!(
                    "`each` must be a list, and this is of type {}",
                    self.registry.type_name(p.ty())
                ),
            ));
        }
        Ok(Some(Each::Expr(p)))
    }

    fn fix(&self, f: FixFile) -> Result<Fix, Error> {
        Ok(Fix {
            title: self.template("/fix/title", &f.title)?,
            title_text: f.title.clone(),
            applicability: f.applicability,
            when: f
                .when
                .as_deref()
                .map(|w| self.condition("/fix/when", w))
                .transpose()?,
            patch: f
                .patch
                .iter()
                .enumerate()
                .map(|(i, op)| self.patch_op(i, op))
                .collect::<Result<_, _>>()?,
        })
    }

    fn patch_op(&self, i: usize, op: &PatchOpFile) -> Result<PatchOp, Error> {
        let here = |key: &str| format!("/fix/patch/{i}{key}");
        if op.op == PatchOpKind::Move && op.from.is_none() {
            return Err(self
                .place
                .at(&here("/op"), 0, "`move` needs `from`".to_string()));
        }
        if matches!(op.op, PatchOpKind::Add | PatchOpKind::Replace) && op.value.is_none() {
            return Err(self.place.at(
                &here("/op"),
                0,
                "`add` and `replace` need `value`".to_string(),
            ));
        }
        Ok(PatchOp {
            when: op
                .when
                .as_deref()
                .map(|w| self.condition(&here("/when"), w))
                .transpose()?,
            op: op.op,
            path: self.template(&here("/path"), &op.path)?,
            from: op
                .from
                .as_deref()
                .map(|f| self.template(&here("/from"), f))
                .transpose()?,
            value: op
                .value
                .as_ref()
                .map(|v| ValueTemplate::compile(v, self.compiler))
                .transpose()
                .map_err(|(p, e)| self.place.fail(&format!("{}{p}", here("/value")), e))?,
        })
    }
}

/// `let` bindings may read each other, but not in a cycle (a let read while it is being
/// evaluated has no value).
fn check_let_cycles(lets: &[(String, Program)]) -> Result<(), String> {
    fn visit(i: usize, lets: &[(String, Program)], state: &mut [u8]) -> Result<(), usize> {
        match state[i] {
            1 => return Err(i),
            2 => return Ok(()),
            _ => {}
        }
        state[i] = 1;
        for j in 0..lets.len() {
            if lets[i].1.reads(slot::LETS + j) {
                visit(j, lets, state)?;
            }
        }
        state[i] = 2;
        Ok(())
    }
    let mut state = vec![0u8; lets.len()];
    for i in 0..lets.len() {
        if let Err(j) = visit(i, lets, &mut state) {
            let stuck: Vec<String> = lets
                .iter()
                .enumerate()
                .filter(|(k, _)| state[*k] == 1)
                .map(|(_, (n, _))| format!("`{n}`"))
                .collect();
            return Err(format!(
                "`let` bindings {} read each other in a cycle (through `{}`)",
                stuck.join(", "),
                lets[j].0
            ));
        }
    }
    Ok(())
}

impl Each {
    fn serialize_path<S: serde::Serializer>(
        path: &(String, crate::value::jsonpath::Path),
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.serialize_str(&path.0)
    }

    fn deserialize_path<'de, D: serde::Deserializer<'de>>(
        d: D,
    ) -> Result<(String, crate::value::jsonpath::Path), D::Error> {
        let text = String::deserialize(d)?;
        let path = crate::value::jsonpath::Path::parse(&text).map_err(serde::de::Error::custom)?;
        Ok((text, path))
    }
}

/// A loaded set of rules.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
}

impl RuleSet {
    /// Loads rule files given as `(name, text)`.
    pub fn from_texts(files: &[(&str, &str)], registry: &Registry) -> Result<RuleSet, Error> {
        use rayon::prelude::*;
        // Compiled in parallel: parsing CEL is most of a short run's start-up.
        let rules: Vec<Result<Rule, Error>> = files
            .par_iter()
            .map(|(path, text)| Rule::load(text, path, registry))
            .collect();
        let mut set = RuleSet::default();
        for rule in rules {
            set.add(rule?)?;
        }
        Ok(set)
    }

    /// The compiled form, for [`RuleSet::from_stored`].
    pub fn to_stored(&self) -> Vec<u8> {
        postcard::to_allocvec(self).expect("a rule set serializes")
    }

    /// A rule set from its compiled form, whose expressions were compiled against `registry` by
    /// this same build (the caller's cache key says so). Nothing is parsed or checked again.
    pub fn from_stored(bytes: &[u8], registry: &Registry) -> Result<RuleSet, postcard::Error> {
        crate::expr::stored::with_registry(registry, || postcard::from_bytes(bytes))
    }

    /// Adds a rule; names are unique.
    pub fn add(&mut self, rule: Rule) -> Result<(), Error> {
        if let Some(existing) = self.get(&rule.name) {
            return Err(Error::new(
                ErrorKind::Load,
                &rule.source,
                format!(
                    "rule `{}` is already defined in {}",
                    rule.name, existing.source
                ),
            ));
        }
        self.rules.push(rule);
        Ok(())
    }

    /// Loads every `*.yaml` rule file of a directory (a user's own rules, no rebuild needed).
    pub fn add_dir(&mut self, dir: &Path, registry: &Registry) -> Result<(), Vec<Error>> {
        let mut errors = Vec::new();
        let entries = std::fs::read_dir(dir).map_err(|e| {
            vec![Error::new(
                ErrorKind::Load,
                dir.display().to_string(),
                format!("cannot read rules directory: {e}"),
            )]
        })?;
        let mut paths: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")))
            .collect();
        paths.sort();
        for p in paths {
            let name = p.display().to_string();
            let loaded = std::fs::read_to_string(&p)
                .map_err(|e| {
                    Error::new(
                        ErrorKind::Load,
                        &name,
                        format!("cannot read rule file: {e}"),
                    )
                })
                .and_then(|text| Rule::load(&text, &name, registry))
                .and_then(|rule| self.add(rule));
            if let Err(e) = loaded {
                errors.push(e);
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors)
        }
    }

    pub fn get(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.name == name)
    }
}
