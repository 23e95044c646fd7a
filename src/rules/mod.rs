//! Rule files (`rules/*.yaml`): the on-disk format, loading, and compilation.
//!
//! A rule is data: a scope (each pod spec, each container, or objects of some kinds), a condition,
//! a message, an optional fix as JSON Patch, and its documentation. Expressions and JSONPaths are
//! compiled once at load; unknown keys and bad expressions are errors naming file:line.
//! See `rules/README.md` for the format and the facts rules can read.

pub mod docs;

use std::path::Path;

use crate::value::Value;
use serde::Deserialize;

use crate::config::{Level, Profile};
use crate::engine::expr::{self, Expr};
use crate::error::{LoadError, parse_typed};

include!(concat!(env!("OUT_DIR"), "/embedded_rules.rs"));

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
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
    profiles: Vec<Profile>,
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

/// A rule's documentation: the source of `winguard explain`, the README table and SARIF help.
#[derive(Debug, Clone, Deserialize)]
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

/// A message or path with `{{ expr }}` holes.
#[derive(Debug, Clone)]
pub struct Template {
    parts: Vec<TemplatePart>,
}

#[derive(Debug, Clone)]
enum TemplatePart {
    Text(String),
    Expr(Expr),
}

impl Template {
    pub fn compile(text: &str) -> Result<Template, String> {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find("{{") {
            if start > 0 {
                parts.push(TemplatePart::Text(rest[..start].to_string()));
            }
            let end = rest[start..]
                .find("}}")
                .ok_or_else(|| format!("unclosed `{{{{` in `{text}`"))?;
            let e =
                expr::compile(rest[start + 2..start + end].trim()).map_err(|e| e.to_string())?;
            parts.push(TemplatePart::Expr(e));
            rest = &rest[start + end + 2..];
        }
        if !rest.is_empty() {
            parts.push(TemplatePart::Text(rest.to_string()));
        }
        Ok(Template { parts })
    }

    /// Whether any `{{ … }}` of the template contains `text` (e.g. reads a field of that name).
    pub fn mentions(&self, text: &str) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, TemplatePart::Expr(e) if e.text().contains(text)))
    }

    /// Whether the template always renders the expression `expr` as one of its parts.
    pub fn always_renders(&self, expr: &str) -> bool {
        self.parts
            .iter()
            .any(|p| matches!(p, TemplatePart::Expr(e) if e.text() == expr))
    }

    /// A template that is exactly one `{{ expr }}` keeps the expression's type.
    fn single_expr(&self) -> Option<&Expr> {
        match self.parts.as_slice() {
            [TemplatePart::Expr(e)] => Some(e),
            _ => None,
        }
    }

    pub fn render(&self, env: &expr::Env<'_>) -> String {
        // Sized for the literal text and some values: growing the string a few times per
        // message showed in profiles.
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
                TemplatePart::Expr(e) => match &*e.eval(env) {
                    // Strings are appended as they are (no intermediate copy).
                    Value::String(s) => out.push_str(s),
                    other => out.push_str(&expr::display(other)),
                },
            }
        }
        out
    }

    fn exprs(&self) -> impl Iterator<Item = &Expr> {
        self.parts.iter().filter_map(|p| match p {
            TemplatePart::Expr(e) => Some(e),
            TemplatePart::Text(_) => None,
        })
    }
}

/// A JSON value whose strings may hold templates.
#[derive(Debug, Clone)]
pub enum ValueTemplate {
    Literal(Value),
    Template(Template),
    Array(Vec<ValueTemplate>),
    Object(Vec<(String, ValueTemplate)>),
}

impl ValueTemplate {
    fn compile(v: &Value) -> Result<Self, String> {
        Ok(match v {
            Value::String(s) if s.contains("{{") => ValueTemplate::Template(Template::compile(s)?),
            Value::Array(a) => {
                ValueTemplate::Array(a.iter().map(Self::compile).collect::<Result<_, _>>()?)
            }
            Value::Object(m) => ValueTemplate::Object(
                m.iter()
                    .map(|(k, v)| Ok((k.clone(), Self::compile(v)?)))
                    .collect::<Result<_, String>>()?,
            ),
            other => ValueTemplate::Literal(other.clone()),
        })
    }

    pub fn render(&self, env: &expr::Env<'_>) -> Value {
        match self {
            ValueTemplate::Literal(v) => v.clone(),
            ValueTemplate::Template(t) => match t.single_expr() {
                Some(e) => e.eval(env).into_owned(),
                None => Value::from(t.render(env)),
            },
            ValueTemplate::Array(a) => Value::Array(a.iter().map(|v| v.render(env)).collect()),
            ValueTemplate::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), v.render(env))).collect())
            }
        }
    }

    fn exprs<'a>(&'a self, out: &mut Vec<&'a Expr>) {
        match self {
            ValueTemplate::Literal(_) => {}
            ValueTemplate::Template(t) => out.extend(t.exprs()),
            ValueTemplate::Array(a) => a.iter().for_each(|v| v.exprs(out)),
            ValueTemplate::Object(m) => m.iter().for_each(|(_, v)| v.exprs(out)),
        }
    }
}

/// What `each` iterates over.
#[derive(Debug, Clone)]
pub enum Each {
    /// A JSONPath over the scope's raw value (the pod spec or container); each match's pointer is
    /// the finding's pointer.
    JsonPath(crate::engine::path::Path),
    /// An expression returning a list; items may carry a `pointer`.
    Expr(Expr),
}

#[derive(Debug, Clone)]
pub struct PatchOp {
    pub when: Option<Expr>,
    pub op: PatchOpKind,
    pub path: Template,
    pub from: Option<Template>,
    pub value: Option<ValueTemplate>,
}

#[derive(Debug, Clone)]
pub struct Fix {
    pub title: Template,
    pub applicability: Applicability,
    pub when: Option<Expr>,
    pub patch: Vec<PatchOp>,
    /// The title as written in the rule file.
    title_text: String,
}

impl Fix {
    pub fn title_text(&self) -> String {
        self.title_text.clone()
    }
}

/// A compiled rule.
/// Whether a rule's message states the target-OS reason, known from its text at load (so the
/// engine searches a finding's message for the reason only when it can't tell).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageGivesReason {
    /// The rule's conditions don't depend on the pod's OS: its reason would say nothing here.
    Irrelevant,
    /// A `{{pod.osReason}}` part.
    Always,
    /// Only in some branch of an expression (or through a `let`).
    Maybe,
    /// Nothing in the message reads it.
    Never,
}

#[derive(Debug, Clone)]
pub struct Rule {
    pub name: String,
    /// The severity from the rule file (before config overrides).
    pub default_severity: Severity,
    /// Off by default: it runs only when the config's `rules:` gives it a level.
    pub opt_in: bool,
    pub summary: String,
    pub scope: Scope,
    pub kinds: Vec<String>,
    pub profiles: Vec<Profile>,
    /// `let` bindings, in order.
    pub lets: Vec<(String, Expr)>,
    pub when: Expr,
    /// Whether `when` reads `item` (directly or through a `let`).
    pub when_reads_item: bool,
    pub each: Option<Each>,
    pub pointer: Option<Template>,
    pub severity_when: Vec<(Expr, Severity)>,
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
    pub fn load(text: &str, source: &str) -> Result<Rule, LoadError> {
        let file: RuleFile = parse_typed(text, source)?;
        // Point compile errors at the key that holds the bad text.
        let at = |key: &str, message: String| -> LoadError {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with(&format!("{key}:")))
                .map(|i| i as u32 + 1);
            LoadError {
                file: source.to_string(),
                line,
                column: line.map(|_| 1),
                message: format!("`{key}`: {message}"),
            }
        };
        let expr_at =
            |key: &str, text: &str| expr::compile(text).map_err(|e| at(key, e.to_string()));
        let tmpl_at = |key: &str, text: &str| Template::compile(text).map_err(|e| at(key, e));
        if !file
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        {
            return Err(at(
                "name",
                format!("`{}` is not a kebab-case rule name", file.name),
            ));
        }
        if file.scope == Scope::Object && file.kinds.is_empty() {
            return Err(at("scope", "`scope: object` needs `kinds`".to_string()));
        }
        let each = match &file.each {
            None => None,
            Some(e) if e.starts_with('$') => {
                let q = crate::engine::path::Path::parse(e)
                    .map_err(|err| at("each", format!("invalid JSONPath `{e}`: {err}")))?;
                Some(Each::JsonPath(q))
            }
            Some(e) => Some(Each::Expr(expr_at("each", e)?)),
        };
        let fix = match file.fix {
            None => None,
            Some(f) => Some(Fix {
                title: tmpl_at("title", &f.title)?,
                title_text: f.title.clone(),
                applicability: f.applicability,
                when: f.when.as_deref().map(|w| expr_at("when", w)).transpose()?,
                patch: f
                    .patch
                    .iter()
                    .map(|op| {
                        if op.op == PatchOpKind::Move && op.from.is_none() {
                            return Err(at("op", "`move` needs `from`".to_string()));
                        }
                        if matches!(op.op, PatchOpKind::Add | PatchOpKind::Replace)
                            && op.value.is_none()
                        {
                            return Err(at("op", "`add` and `replace` need `value`".to_string()));
                        }
                        Ok(PatchOp {
                            when: op.when.as_deref().map(|w| expr_at("when", w)).transpose()?,
                            op: op.op,
                            path: tmpl_at("path", &op.path)?,
                            from: op.from.as_deref().map(|f| tmpl_at("from", f)).transpose()?,
                            value: op
                                .value
                                .as_ref()
                                .map(ValueTemplate::compile)
                                .transpose()
                                .map_err(|e| at("value", e))?,
                        })
                    })
                    .collect::<Result<_, _>>()?,
            }),
        };
        let lets = file
            .lets
            .iter()
            .map(|(name, v)| match v {
                Value::String(text) => Ok((name.clone(), expr_at(name, text)?)),
                _ => Err(at("let", format!("`{name}` must be an expression string"))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let lets = order_lets(lets).map_err(|m| at("let", m))?;
        let when = expr_at("when", &file.when)?;
        let reads_item = |e: &Expr| e.variables().iter().any(|v| v == "item");
        let mut item_lets: Vec<&str> = Vec::new();
        for (name, e) in &lets {
            if reads_item(e)
                || e.variables()
                    .iter()
                    .any(|v| item_lets.contains(&v.as_str()))
            {
                item_lets.push(name);
            }
        }
        let when_reads_item = reads_item(&when)
            || when
                .variables()
                .iter()
                .any(|v| item_lets.contains(&v.as_str()));
        let message = tmpl_at("message", &file.message)?;
        // A rule whose conditions never ask which OS the pod targets (an annotation the EKS
        // webhook denies on any pod, a millibyte quantity) has no use for the reason.
        let reads_pod_os = |e: &Expr| {
            e.record_fields()
                .iter()
                .any(|(record, field)| record == "pod" && field == "os")
        };
        let conditions_read_os = reads_pod_os(&when)
            || lets.iter().any(|(_, e)| reads_pod_os(e))
            || matches!(&each, Some(Each::Expr(e)) if reads_pod_os(e));
        let message_gives_reason = if !conditions_read_os {
            MessageGivesReason::Irrelevant
        } else if message.always_renders("pod.osReason") {
            MessageGivesReason::Always
        } else if message.mentions("osReason")
            || lets.iter().any(|(_, e)| e.text().contains("osReason"))
        {
            MessageGivesReason::Maybe
        } else {
            MessageGivesReason::Never
        };
        let rule = Rule {
            message,
            message_gives_reason,
            when_reads_item,
            lets,
            when,
            pointer: file
                .pointer
                .as_deref()
                .map(|p| tmpl_at("pointer", p))
                .transpose()?,
            severity_when: file
                .severity_when
                .iter()
                .map(|s| Ok((expr_at("when", &s.when)?, s.severity)))
                .collect::<Result<_, LoadError>>()?,
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
        };
        rule.check_variables().map_err(|m| at("when", m))?;
        Ok(rule)
    }

    fn all_exprs(&self) -> Vec<&Expr> {
        let mut out: Vec<&Expr> = self.lets.iter().map(|(_, e)| e).collect();
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

    /// Every variable an expression reads must exist in the rule's scope: a typo is a load error,
    /// not a rule that silently never fires.
    fn check_variables(&self) -> Result<(), String> {
        let mut allowed = vec!["object", "config"];
        match self.scope {
            Scope::Pod => allowed.extend(["pod", "podSpec", "podMeta"]),
            Scope::Container => {
                allowed.extend(["pod", "podSpec", "podMeta", "container", "containerSpec"])
            }
            Scope::Object => {}
        }
        if self.each.is_some() {
            allowed.push("item");
        }
        allowed.extend(self.lets.iter().map(|(n, _)| n.as_str()));
        for e in self.all_exprs() {
            // A fact a record doesn't have would read as null, and the rule never fire.
            for (record, field) in e.record_fields() {
                let Some(names) = crate::model::fact_names(&record) else {
                    continue;
                };
                if !names.contains(&field.as_str()) {
                    let hint = crate::error::did_you_mean(&field, names.iter().copied());
                    return Err(format!(
                        "unknown fact `{record}.{field}` in `{}`{hint}",
                        e.text()
                    ));
                }
            }
            for v in e.variables() {
                if !allowed.contains(&v.as_str()) {
                    return Err(format!(
                        "unknown variable `{v}` in `{}` (a `{}` rule can read {})",
                        e.text(),
                        match self.scope {
                            Scope::Pod => "pod",
                            Scope::Container => "container",
                            Scope::Object => "object",
                        },
                        allowed.join(", ")
                    ));
                }
            }
        }
        Ok(())
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
    pub fn configured_level(
        &self,
        rules: &std::collections::BTreeMap<String, Level>,
    ) -> Option<Option<Severity>> {
        match rules.get(&self.name) {
            None if self.opt_in => None,
            None => Some(None),
            Some(Level::Off) => None,
            Some(Level::Info) => Some(Some(Severity::Info)),
            Some(Level::Warning) => Some(Some(Severity::Warning)),
            Some(Level::Error) => Some(Some(Severity::Error)),
        }
    }
}

/// Orders `let` bindings so each comes after the ones it reads; a cycle is an error.
fn order_lets(mut pending: Vec<(String, Expr)>) -> Result<Vec<(String, Expr)>, String> {
    let names: Vec<String> = pending.iter().map(|(n, _)| n.clone()).collect();
    let mut ordered: Vec<(String, Expr)> = Vec::new();
    while !pending.is_empty() {
        let ready = pending.iter().position(|(_, e)| {
            e.variables()
                .iter()
                .all(|v| !names.contains(v) || ordered.iter().any(|(n, _)| n == v))
        });
        match ready {
            Some(i) => ordered.push(pending.remove(i)),
            None => {
                let stuck: Vec<_> = pending.iter().map(|(n, _)| format!("`{n}`")).collect();
                return Err(format!(
                    "`let` bindings {} read each other in a cycle",
                    stuck.join(", ")
                ));
            }
        }
    }
    Ok(ordered)
}

/// A loaded set of rules.
#[derive(Debug, Clone, Default)]
pub struct RuleSet {
    pub rules: Vec<Rule>,
}

impl RuleSet {
    /// The rules built into the binary.
    pub fn embedded() -> Result<RuleSet, LoadError> {
        let mut set = RuleSet::default();
        for (path, text) in EMBEDDED_RULES {
            set.add(Rule::load(text, path)?)?;
        }
        Ok(set)
    }

    /// Adds a rule; names are unique.
    pub fn add(&mut self, rule: Rule) -> Result<(), LoadError> {
        if let Some(existing) = self.get(&rule.name) {
            return Err(LoadError::new(
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
    pub fn add_dir(&mut self, dir: &Path) -> Result<(), Vec<LoadError>> {
        let mut errors = Vec::new();
        let entries = std::fs::read_dir(dir).map_err(|e| {
            vec![LoadError::new(
                &dir.display().to_string(),
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
                .map_err(|e| LoadError::new(&name, format!("cannot read rule file: {e}")))
                .and_then(|text| Rule::load(&text, &name))
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

    /// Kinds that rules read through `objects(kind)`; `None` means any kind may be asked for.
    pub fn referenced_kinds(&self) -> Option<Vec<String>> {
        let mut kinds = Vec::new();
        for r in &self.rules {
            for e in r.all_exprs() {
                kinds.extend(e.object_kinds()?);
            }
        }
        kinds.sort();
        kinds.dedup();
        Some(kinds)
    }
}
