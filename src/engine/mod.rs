//! The engine: `evaluate(&RuleSet, &Context, &object) → Vec<Finding>`.
//!
//! Pure: no I/O, no files, no HTTP. `winguard lint`, `fix`/`mutate` and the admission webhook all
//! call [`evaluate`] with a [`Context`] built from the same config, so they reach the same
//! verdicts. Nothing here names a rule: rules are data (`crate::rules`), and the Windows facts
//! they read come from `crate::model`.

pub mod expr;
pub mod patch;
pub mod path;

use std::collections::HashMap;

use crate::value::Value;

use crate::config::Config;
use crate::manifest::escape_pointer_token;
use crate::model::{self, Catalog, InputIndex, ModelContext};
use crate::rules::{Applicability, Each, MessageGivesReason, Rule, RuleSet, Scope, Severity};
use expr::Env;

/// The name findings about suppressions themselves are reported under.
pub const SUPPRESSION_RULE: &str = "invalid-suppression";
/// Annotation prefix silencing one rule on an object: `ignore-rule.winguard.io/<rule>: <reason>`.
pub const IGNORE_RULE_PREFIX: &str = "ignore-rule.winguard.io/";
/// Annotation silencing every rule on an object.
pub const IGNORE_ALL: &str = "winguard.io/ignore-all";

/// The target-OS reason of the pod in scope (see `model::pod_facts`).
static TARGET_REASON: std::sync::LazyLock<expr::Expr> =
    std::sync::LazyLock::new(|| expr::compile("pod.osReason").expect("valid expression"));

/// A rule that fired.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Finding {
    pub rule: String,
    pub severity: Severity,
    /// The rule's own sentence.
    pub message: String,
    /// Why winguard takes the pod to target the OS it does (`the pod targets Windows because
    /// …`), for a pod-level finding whose message does not already say it. Shown once per
    /// object in text output; [`Finding::full_message`] appends it for one-line formats.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// JSON pointer into the object: the offending value, or where a missing one belongs.
    pub pointer: String,
    pub fix: Option<FixProposal>,
}

impl Finding {
    /// The message with the target-OS note, for formats that show a finding on its own.
    pub fn full_message(&self) -> String {
        match &self.target {
            Some(t) => format!("{}; {t}", self.message),
            None => self.message.clone(),
        }
    }
}

/// A fix as RFC 6902 JSON Patch against the object as given.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FixProposal {
    pub title: String,
    pub applicability: Applicability,
    pub patch: Vec<json_patch::PatchOperation>,
}

/// What rules are evaluated against: the cluster profile and the rest of the input set.
pub struct Context<'a> {
    pub config: &'a Config,
    /// The config as expressions read it, prepared once per loaded config (the webhook builds a
    /// context per review).
    prepared: &'a PreparedConfig,
    pub catalog: &'a Catalog,
    index: InputIndex<'a>,
    /// Per kind, the input objects of that kind as a JSON list (for `objects(kind)`): built here
    /// from a slice of objects, or borrowed from the caller (`winguard lint` moves its objects
    /// into such lists rather than copying them).
    objects_by_kind: HashMap<String, std::borrow::Cow<'a, Value>>,
    /// Indexes over `objects_by_kind` for the cross-object lookups, built once per context.
    cross: CrossIndex,
    /// Today's date, for exemption expiry (passed in so evaluation stays deterministic).
    pub today: jiff::civil::Date,
    /// The rules the config turns on, with their configured severity, worked out once per run
    /// (per object, the lookups of every rule's level showed in profiles).
    active: Vec<(&'a Rule, Option<Severity>)>,
    /// The rule set `active` was taken from.
    rules: &'a RuleSet,
    /// Whether findings carry their fix (true unless set otherwise): a validating webhook never
    /// uses them, and building a patch per finding is a tenth of an evaluation.
    pub fixes: bool,
}

/// What evaluation derives from the config alone: `config.…` as rule expressions see it, and the
/// cluster's Kubernetes version. Worked out once per loaded config (`LintSetup` keeps it), not per
/// context: the webhook builds a context per review, and building this each time was about 3% of
/// a review's instructions.
#[derive(Debug, Clone)]
pub struct PreparedConfig {
    value: Value,
    cluster_version: (u64, u64),
}

impl PreparedConfig {
    pub fn new(config: &Config) -> Self {
        PreparedConfig {
            value: config.to_expr_value(),
            cluster_version: expr::parse_version(&Value::from(config.kubernetes_version.clone()))
                .unwrap_or((1, 0)),
        }
    }
}

/// What every context of a run is built on: the rules, the config (with its prepared view),
/// the Windows catalog and today's date. `LintSetup::basis` gives it.
#[derive(Clone, Copy)]
pub struct Basis<'a> {
    pub rules: &'a RuleSet,
    pub config: &'a Config,
    /// Must have been built from `config`.
    pub prepared: &'a PreparedConfig,
    pub catalog: &'a Catalog,
    pub today: jiff::civil::Date,
}

impl<'a> Context<'a> {
    /// The context for one object seen alone (the webhook's case: no other inputs).
    pub fn for_single_object(basis: Basis<'a>) -> Self {
        Self::assemble(basis, InputIndex::default(), HashMap::new())
    }

    /// Builds the context for one input set. `objects` are all objects of the run (for
    /// RuntimeClass lookups and cross-object rules); for the webhook, just the one under review.
    pub fn new(basis: Basis<'a>, objects: &[&'a Value]) -> Self {
        let mut index = InputIndex::default();
        // Walking every rule's expressions for the kinds they read is only worth it when there
        // are objects to sort (the webhook builds a context per review, with none).
        let wanted = if objects.is_empty() {
            None
        } else {
            basis.rules.referenced_kinds()
        };
        let mut objects_by_kind: HashMap<String, Vec<Value>> = HashMap::new();
        for o in objects {
            let kind = o.get("kind").and_then(Value::as_str).unwrap_or("");
            if kind == "RuntimeClass"
                && let Some(name) = o.pointer("/metadata/name").and_then(Value::as_str)
            {
                index.runtime_classes.insert(name, o);
            }
            if wanted.as_ref().is_none_or(|w| w.iter().any(|k| k == kind)) {
                objects_by_kind
                    .entry(kind.to_string())
                    .or_default()
                    .push((*o).clone());
            }
        }
        let objects_by_kind = objects_by_kind
            .into_iter()
            .map(|(k, v)| (k, std::borrow::Cow::Owned(Value::Array(v))))
            .collect();
        Self::assemble(basis, index, objects_by_kind)
    }

    /// Builds the context from objects already grouped by kind, each kind a JSON list, borrowed
    /// rather than copied. `by_kind` must hold every kind the rules read through `objects(…)`,
    /// and the RuntimeClasses.
    pub fn from_kinds(basis: Basis<'a>, by_kind: &'a HashMap<String, Value>) -> Self {
        let mut index = InputIndex::default();
        for rc in by_kind
            .get("RuntimeClass")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(name) = rc.pointer("/metadata/name").and_then(Value::as_str) {
                index.runtime_classes.insert(name, rc);
            }
        }
        let objects_by_kind = by_kind
            .iter()
            .map(|(k, v)| (k.clone(), std::borrow::Cow::Borrowed(v)))
            .collect();
        Self::assemble(basis, index, objects_by_kind)
    }

    fn assemble(
        basis: Basis<'a>,
        index: InputIndex<'a>,
        objects_by_kind: HashMap<String, std::borrow::Cow<'a, Value>>,
    ) -> Self {
        let Basis {
            rules,
            config,
            prepared,
            catalog,
            today,
        } = basis;
        let active = rules
            .rules
            .iter()
            .filter(|r| r.profiles.is_empty() || r.profiles.contains(&config.profile))
            .filter_map(|r| r.configured_level(&config.rules).map(|lvl| (r, lvl)))
            .collect();
        let cross = CrossIndex::build(&objects_by_kind);
        Context {
            active,
            rules,
            config,
            prepared,
            catalog,
            index,
            cross,
            objects_by_kind,
            today,
            fixes: true,
        }
    }

    /// Leaves only the rules whose fix is safe: what a mutating webhook evaluates, since no other
    /// finding can change its answer (a patch of the safe fixes, and warnings naming them).
    pub fn only_safe_fixes(&mut self) {
        self.active
            .retain(|(rule, _)| rule.fix_applicability() == Some(Applicability::Safe));
    }
}

/// Indexes for the lookups cross-object rules make per workload (`autoscalersOf`,
/// `servicesSelecting`): positions into the context's lists of HorizontalPodAutoscalers and
/// Services, so a lookup costs what it finds, not a scan of every object of the kind.
#[derive(Default)]
struct CrossIndex {
    /// (namespace, kind, name) of a scale target → the autoscalers naming it.
    autoscalers: HashMap<(String, String, String), Vec<usize>>,
    /// (namespace, key, value) of each Service's first selector entry → those Services: a
    /// Service can select a pod only if the pod has that label, so the pod's labels find every
    /// candidate.
    services: HashMap<(String, String, String), Vec<usize>>,
}

fn namespace_of(o: &Value) -> &str {
    o.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
}

impl CrossIndex {
    fn build(by_kind: &HashMap<String, std::borrow::Cow<'_, Value>>) -> Self {
        let list = |kind: &str| {
            by_kind
                .get(kind)
                .and_then(|v| v.as_array())
                .map(Vec::as_slice)
                .unwrap_or_default()
        };
        let mut index = CrossIndex::default();
        for (i, hpa) in list("HorizontalPodAutoscaler").iter().enumerate() {
            let target = |f: &str| {
                hpa.pointer(&format!("/spec/scaleTargetRef/{f}"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string()
            };
            let key = (
                namespace_of(hpa).to_string(),
                target("kind"),
                target("name"),
            );
            index.autoscalers.entry(key).or_default().push(i);
        }
        for (i, service) in list("Service").iter().enumerate() {
            let first = service
                .pointer("/spec/selector")
                .and_then(Value::as_object)
                .and_then(|m| m.iter().next());
            if let Some((k, v)) = first {
                let value = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                let key = (namespace_of(service).to_string(), k.clone(), value);
                index.services.entry(key).or_default().push(i);
            }
        }
        index
    }
}

impl expr::Inputs for Context<'_> {
    fn of_kind(&self, kind: &str) -> Option<&Value> {
        self.objects_by_kind.get(kind).map(|v| v.as_ref())
    }

    fn autoscalers_of(&self, namespace: &str, kind: &str, name: &str) -> Vec<&Value> {
        let key = (namespace.to_string(), kind.to_string(), name.to_string());
        let (Some(found), Some(list)) = (
            self.cross.autoscalers.get(&key),
            self.of_kind("HorizontalPodAutoscaler")
                .and_then(Value::as_array),
        ) else {
            return Vec::new();
        };
        found.iter().map(|&i| &list[i]).collect()
    }

    fn services_selecting(&self, namespace: &str, pod_labels: &Value) -> Vec<&Value> {
        let (Some(labels), Some(list)) = (
            pod_labels.as_object(),
            self.of_kind("Service").and_then(Value::as_array),
        ) else {
            return Vec::new();
        };
        let mut found: Vec<usize> = Vec::new();
        for (k, v) in labels {
            let value = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            if let Some(candidates) =
                self.cross
                    .services
                    .get(&(namespace.to_string(), k.clone(), value))
            {
                found.extend(candidates.iter().copied().filter(|&i| {
                    let selector = list[i].pointer("/spec/selector").unwrap_or(&Value::Null);
                    expr::selector_matches(selector, pod_labels)
                }));
            }
        }
        found.sort_unstable();
        found.into_iter().map(|i| &list[i]).collect()
    }
}

/// Evaluates every active rule on one object. `rules` must be the rule set the context was built
/// with.
pub fn evaluate(rules: &RuleSet, ctx: &Context<'_>, object: &Value) -> Vec<Finding> {
    evaluate_batch(rules, ctx, &[object])
        .pop()
        .expect("one list per object")
}

/// A workload's pod template: where its spec and metadata are, and the values there.
struct PodTemplate<'v> {
    spec_path: &'static str,
    meta_path: &'static str,
    spec: &'v Value,
    meta: &'v Value,
}

/// Evaluates every active rule on each of `objects`: the findings of each object, in the order
/// of `objects`. `rules` must be the rule set the context was built with.
///
/// Rule by rule over the whole batch, not object by object: one rule's conditions and helpers
/// then run many times in a row, which keeps their code and data in the caches (`winguard lint`
/// evaluates documents in batches for this reason). A rule's findings on one object come in the
/// order they would alone; findings of different rules are not in rule-file order.
pub fn evaluate_batch(rules: &RuleSet, ctx: &Context<'_>, objects: &[&Value]) -> Vec<Vec<Finding>> {
    debug_assert!(
        std::ptr::eq(rules, ctx.rules),
        "a context serves its own rule set"
    );
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o.get("kind").and_then(Value::as_str).unwrap_or(""))
        .collect();
    let templates: Vec<Option<PodTemplate>> = objects
        .iter()
        .zip(&kinds)
        .map(|(object, kind)| {
            let (spec_path, meta_path) = model::pod_template_paths(kind)?;
            let spec = object.pointer(spec_path).filter(|s| s.is_object())?;
            let meta = object.pointer(meta_path).unwrap_or(&Value::Null);
            Some(PodTemplate {
                spec_path,
                meta_path,
                spec,
                meta,
            })
        })
        .collect();
    let mctx = ModelContext {
        catalog: ctx.catalog,
        config: ctx.config,
        index: &ctx.index,
        cluster_version: ctx.prepared.cluster_version,
    };
    let any_pod_rule = ctx.active.iter().any(|(r, _)| r.scope != Scope::Object);
    let facts: Vec<Option<model::PodFacts>> = templates
        .iter()
        .map(|t| {
            let t = t.as_ref().filter(|_| any_pod_rule)?;
            Some(model::PodFacts::new(
                &mctx,
                t.spec,
                t.spec_path,
                t.meta_path,
            ))
        })
        .collect();
    // One environment per object with its pod bindings; container bindings come and go.
    let mut envs: Vec<Env> = objects
        .iter()
        .zip(templates.iter().zip(&facts))
        .map(|(object, (template, facts))| {
            let mut env = Env::new().with_inputs(ctx);
            env.bind("object", object);
            env.bind("config", &ctx.prepared.value);
            if let (Some(t), Some(f)) = (template, facts) {
                env.bind_record("pod", f);
                env.bind("podSpec", t.spec);
                env.bind("podMeta", t.meta);
            }
            env
        })
        .collect();
    let mut findings: Vec<Vec<Finding>> = objects.iter().map(|_| Vec::new()).collect();
    for (rule, level) in &ctx.active {
        for (i, object) in objects.iter().enumerate() {
            let (env, out) = (&mut envs[i], &mut findings[i]);
            match (rule.scope, &templates[i], &facts[i]) {
                (Scope::Object, _, _) if rule.kinds.iter().any(|k| k == kinds[i]) => {
                    // Object rules see only `object` and `config`.
                    let mut env = Env::new().with_inputs(ctx);
                    env.bind("object", object);
                    env.bind("config", &ctx.prepared.value);
                    let here = Here {
                        fixes: ctx.fixes,
                        object,
                        value: None,
                        pointer: "",
                    };
                    run_rule(rule, *level, &mut env, here, out);
                }
                (Scope::Pod, Some(t), Some(_)) => {
                    let here = Here {
                        fixes: ctx.fixes,
                        object,
                        value: Some(t.spec),
                        pointer: t.spec_path,
                    };
                    run_rule(rule, *level, env, here, out);
                }
                (Scope::Container, Some(_), Some(f)) => {
                    for cf in &f.containers {
                        env.bind_record("container", cf);
                        env.bind("containerSpec", cf.raw);
                        let here = Here {
                            fixes: ctx.fixes,
                            object,
                            value: Some(cf.raw),
                            pointer: &cf.path,
                        };
                        run_rule(rule, *level, env, here, out);
                        env.unbind();
                        env.unbind();
                    }
                }
                _ => {}
            }
        }
    }
    drop(envs);
    objects
        .iter()
        .zip(&templates)
        .zip(findings)
        .map(|((object, template), findings)| {
            // Where suppression annotations may sit: the object's metadata, and a workload's pod
            // template metadata (for a Pod they are the same place, read once).
            let mut metas: Vec<(&str, &Value)> =
                vec![("/metadata", object.get("metadata").unwrap_or(&Value::Null))];
            if let Some(t) = template
                && t.meta_path != "/metadata"
            {
                metas.push((t.meta_path, t.meta));
            }
            suppress(ctx, object, &metas, findings)
        })
        .collect()
}

/// Where a rule runs: the object, the raw value of its scope (pod spec or container) and that
/// value's JSON pointer.
#[derive(Clone, Copy)]
struct Here<'v> {
    object: &'v Value,
    value: Option<&'v Value>,
    pointer: &'v str,
    /// Whether findings carry their fix (see [`Context::fixes`]).
    fixes: bool,
}

/// Runs one rule in the current scope, pushing its findings.
fn run_rule<'a>(
    rule: &'a Rule,
    level: Option<Severity>,
    env: &mut Env<'a>,
    here: Here<'_>,
    findings: &mut Vec<Finding>,
) {
    for (name, e) in &rule.lets {
        env.bind_lazy(name, e);
    }
    run_rule_body(rule, level, env, here, findings);
    for _ in &rule.lets {
        env.unbind();
    }
}

fn run_rule_body<'a>(
    rule: &'a Rule,
    level: Option<Severity>,
    env: &mut Env<'a>,
    here: Here<'_>,
    findings: &mut Vec<Finding>,
) {
    let Here {
        object,
        value: scope_value,
        pointer: scope_pointer,
        fixes,
    } = here;
    // A condition that doesn't read `item` is tested once, before building the item list.
    if rule.each.is_some() && !rule.when_reads_item && !rule.when.test(env) {
        return;
    }
    match &rule.each {
        None => {
            if rule.when.test(env) {
                findings.push(make_finding(rule, level, env, object, scope_pointer, fixes));
            }
        }
        Some(Each::Expr(e)) => {
            let items = match e.eval(env).into_owned() {
                Value::Array(a) => a,
                _ => Vec::new(),
            };
            for item in items {
                let default_pointer = item
                    .get("pointer")
                    .and_then(Value::as_str)
                    .unwrap_or(scope_pointer)
                    .to_string();
                env.bind_owned("item", item);
                if rule.when.test(env) {
                    findings.push(make_finding(
                        rule,
                        level,
                        env,
                        object,
                        &default_pointer,
                        fixes,
                    ));
                }
                env.unbind();
            }
        }
        Some(Each::JsonPath(query)) => {
            let scope_value = scope_value.unwrap_or(object);
            let items: Vec<(String, Value)> = query
                .matches(scope_value, scope_pointer)
                .into_iter()
                .map(|(pointer, value)| (pointer, value.clone()))
                .collect();
            for (pointer, item) in items {
                let mut bound = item;
                if let Value::Object(m) = &mut bound {
                    m.entry("pointer".into())
                        .or_insert_with(|| Value::from(pointer.as_str()));
                }
                env.bind_owned("item", bound);
                if rule.when.test(env) {
                    findings.push(make_finding(rule, level, env, object, &pointer, fixes));
                }
                env.unbind();
            }
        }
    }
}

fn make_finding(
    rule: &Rule,
    level: Option<Severity>,
    env: &Env<'_>,
    object: &Value,
    default_pointer: &str,
    fixes: bool,
) -> Finding {
    let severity = level.unwrap_or_else(|| {
        rule.severity_when
            .iter()
            .find(|(cond, _)| cond.test(env))
            .map_or(rule.default_severity, |(_, s)| *s)
    });
    let pointer = match &rule.pointer {
        Some(t) => t.render(env),
        None => default_pointer.to_string(),
    };
    let fix = rule.fix.as_ref().filter(|_| fixes).and_then(|f| {
        if let Some(w) = &f.when
            && !w.test(env)
        {
            return None;
        }
        let patch = patch::build(f, env, object);
        (!patch.is_empty()).then(|| FixProposal {
            title: f.title.render(env),
            applicability: f.applicability,
            patch,
        })
    });
    let message = rule.message.render(env);
    // Every pod-level finding says why winguard thinks the pod targets the OS it does.
    let mut target = None;
    if rule.scope != Scope::Object {
        let reason = TARGET_REASON.eval(env);
        let given = |r: &str| match rule.message_gives_reason {
            MessageGivesReason::Irrelevant | MessageGivesReason::Always => true,
            MessageGivesReason::Maybe => message.contains(r),
            MessageGivesReason::Never => false,
        };
        target = reason
            .as_str()
            .filter(|r| !given(r))
            .map(|r| format!("the pod {r}"));
    }
    Finding {
        rule: rule.name.clone(),
        severity,
        message,
        target,
        pointer,
        fix,
    }
}

/// Converts a normalised JSONPath (`$['a'][0]['b/c']`) to a JSON pointer (`/a/0/b~1c`).
pub fn jsonpath_to_pointer(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path.strip_prefix('$').unwrap_or(path);
    while let Some(r) = rest.strip_prefix('[') {
        if let Some(r) = r.strip_prefix('\'') {
            let mut key = String::new();
            let mut chars = r.char_indices();
            let mut end = r.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, n)) = chars.next() {
                            key.push(n);
                        }
                    }
                    '\'' => {
                        end = i;
                        break;
                    }
                    _ => key.push(c),
                }
            }
            out.push('/');
            out.push_str(&escape_pointer_token(&key));
            rest = r.get(end + 2..).unwrap_or("");
        } else {
            let close = r.find(']').unwrap_or(r.len());
            out.push('/');
            out.push_str(&r[..close]);
            rest = r.get(close + 1..).unwrap_or("");
        }
    }
    out
}

/// Applies suppression annotations (object and pod template) and config exemptions.
fn suppress(
    ctx: &Context<'_>,
    object: &Value,
    metas: &[(&str, &Value)],
    findings: Vec<Finding>,
) -> Vec<Finding> {
    let mut notes = Vec::new();
    // (rule or "*", reason) from annotations.
    let mut ignored: Vec<(String, bool)> = Vec::new();
    for (meta_path, meta) in metas {
        let Some(annotations) = meta.get("annotations").and_then(Value::as_object) else {
            continue;
        };
        let base = format!("{meta_path}/annotations");
        for (key, value) in annotations {
            let target = if key == IGNORE_ALL {
                "*".to_string()
            } else if let Some(rule) = key.strip_prefix(IGNORE_RULE_PREFIX) {
                rule.to_string()
            } else {
                continue;
            };
            // A misspelt rule would silently suppress nothing.
            if target != "*" && ctx.rules.get(&target).is_none() {
                let hint = crate::error::did_you_mean(
                    &target,
                    ctx.rules.rules.iter().map(|r| r.name.as_str()),
                );
                notes.push(Finding {
                    rule: SUPPRESSION_RULE.to_string(),
                    severity: Severity::Warning,
                    message: format!(
                        "suppression `{key}` names no rule, so it suppresses nothing{hint}"
                    ),
                    target: None,
                    pointer: format!("{base}/{}", escape_pointer_token(key)),
                    fix: None,
                });
            }
            let reason_ok = value.as_str().is_some_and(|s| !s.trim().is_empty());
            if !reason_ok {
                notes.push(Finding {
                    rule: SUPPRESSION_RULE.to_string(),
                    severity: Severity::Warning,
                    message: format!("suppression `{key}` has no reason, so it does not apply (write why the finding is accepted)"),
                    target: None,
                    pointer: format!("{base}/{}", escape_pointer_token(key)),
                    fix: None,
                });
            }
            ignored.push((target, reason_ok));
        }
    }
    if notes.is_empty()
        && ignored.is_empty()
        && (findings.is_empty() || ctx.config.exemptions.is_empty())
    {
        return findings;
    }
    let metadata = object.get("metadata");
    let meta_str = |key: &str| {
        metadata
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let (namespace, name) = (meta_str("namespace"), meta_str("name"));
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let mut out: Vec<Finding> = findings
        .into_iter()
        .filter_map(|mut f| {
            if ignored
                .iter()
                .any(|(r, ok)| *ok && (r == "*" || *r == f.rule))
            {
                return None;
            }
            for ex in &ctx.config.exemptions {
                let matches = ex.rule == f.rule
                    && ex
                        .namespace
                        .as_deref()
                        .is_none_or(|g| glob_match(g, namespace))
                    && ex.kind.as_deref().is_none_or(|g| glob_match(g, kind))
                    && ex.name.as_deref().is_none_or(|g| glob_match(g, name));
                if !matches {
                    continue;
                }
                match ex.expires {
                    Some(date) if date < ctx.today => {
                        f.message.push_str(&format!(
                            " (the config exemption for this expired on {date})"
                        ));
                    }
                    _ => return None,
                }
            }
            Some(f)
        })
        .collect();
    out.extend(notes);
    out
}

/// Shell-style `*` and `?` matching for exemption globs (names have no path separators, so a
/// path-glob crate's rules about `/` would only get in the way).
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jsonpath_paths_become_pointers() {
        assert_eq!(jsonpath_to_pointer("$['a'][0]['b/c']"), "/a/0/b~1c");
        assert_eq!(jsonpath_to_pointer("$['it\\'s']"), "/it's");
    }

    #[test]
    fn globs() {
        assert!(glob_match("kube-*", "kube-system"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("kube-*", "default"));
    }

    /// The indexed lookups find exactly what a scan of every object of the kind finds, in input
    /// order: namespace, selector (every entry, not only the indexed first one; empty selects
    /// nothing) and scale target all count.
    #[test]
    fn indexed_lookups_find_what_a_scan_finds() {
        use crate::json;
        use expr::Inputs;
        let service = |name: &str, ns: Option<&str>, selector: Value| match ns {
            Some(ns) => json!({"kind": "Service", "metadata": {"name": name, "namespace": ns},
                               "spec": {"selector": selector}}),
            None => {
                json!({"kind": "Service", "metadata": {"name": name}, "spec": {"selector": selector}})
            }
        };
        let services = vec![
            service("both", Some("shop"), json!({"app": "web", "tier": "front"})),
            service("app-only", Some("shop"), json!({"app": "web"})),
            service("other-ns", Some("ops"), json!({"app": "web"})),
            service("default-ns", None, json!({"app": "web"})),
            service("empty", Some("shop"), json!({})),
            service(
                "tier-first",
                Some("shop"),
                json!({"tier": "front", "app": "api"}),
            ),
        ];
        let hpa = |name: &str, kind: &str, target: &str| {
            json!({"kind": "HorizontalPodAutoscaler", "metadata": {"name": name, "namespace": "shop"},
                   "spec": {"scaleTargetRef": {"kind": kind, "name": target}, "maxReplicas": 9}})
        };
        let hpas = vec![
            hpa("a", "Deployment", "web"),
            hpa("b", "StatefulSet", "web"),
            hpa("c", "Deployment", "web"),
        ];
        let mut objects: Vec<Value> = services.clone();
        objects.extend(hpas.clone());
        let refs: Vec<&Value> = objects.iter().collect();
        let rules = RuleSet::embedded().unwrap();
        let config = Config::default();
        let catalog = Catalog::load(crate::model::EMBEDDED_CATALOG, &config).unwrap();
        let prepared = PreparedConfig::new(&config);
        let basis = Basis {
            rules: &rules,
            config: &config,
            prepared: &prepared,
            catalog: &catalog,
            today: jiff::civil::date(2026, 12, 1),
        };
        let ctx = Context::new(basis, &refs);
        let names = |found: Vec<&Value>| -> Vec<String> {
            found
                .iter()
                .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
                .collect()
        };
        let labels = json!({"app": "web", "tier": "front"});
        assert_eq!(
            names(ctx.services_selecting("shop", &labels)),
            ["both", "app-only"]
        );
        assert_eq!(names(ctx.services_selecting("", &labels)), ["default-ns"]);
        assert_eq!(
            names(ctx.services_selecting("shop", &json!({"tier": "front", "app": "api"}))),
            ["tier-first"]
        );
        assert!(ctx.services_selecting("shop", &json!({})).is_empty());
        // The same as the scan the rule made before the index.
        for (ns, labels) in [
            ("shop", labels.clone()),
            ("ops", json!({"app": "web"})),
            ("", json!({"app": "web"})),
        ] {
            let scanned: Vec<&Value> = services
                .iter()
                .filter(|s| {
                    namespace_of(s) == ns && expr::selector_matches(&s["spec"]["selector"], &labels)
                })
                .collect();
            assert_eq!(
                names(ctx.services_selecting(ns, &labels)),
                names(scanned),
                "{ns}"
            );
        }
        assert_eq!(
            names(ctx.autoscalers_of("shop", "Deployment", "web")),
            ["a", "c"]
        );
        assert!(ctx.autoscalers_of("ops", "Deployment", "web").is_empty());
    }
}
