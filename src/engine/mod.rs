//! The engine: `evaluate(&RuleSet, &Context, &object) → Vec<Finding>`.
//!
//! Pure: no I/O, no files, no HTTP. `winguard lint`, `fix`/`mutate` and the admission webhook all
//! call [`evaluate`] with a [`Context`] built from the same settings, so they reach the same
//! verdicts. Nothing here names a rule or knows Windows: rules are data (`crate::rules`), and the
//! facts they read about pods and containers come from a [`Domain`] the caller plugs in (the
//! Windows model, through `crate::policy`).

pub mod patch;

use std::borrow::Cow;
use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::value::{Doc, Value, jsonpath};

use crate::expr::{self, Activation, Args, EvalError, Val};
use crate::k8s::{pod_template_paths, selector_matches};
use crate::rules::{Applicability, Each, MessageGivesReason, Rule, RuleSet, Scope, Severity, slot};
use crate::value::escape_pointer_token;

/// The name findings about suppressions themselves are reported under.
pub const SUPPRESSION_RULE: &str = "invalid-suppression";
/// Annotation prefix silencing one rule on an object: `ignore-rule.winguard.io/<rule>: <reason>`.
pub const IGNORE_RULE_PREFIX: &str = "ignore-rule.winguard.io/";
/// Annotation silencing every rule on an object.
pub const IGNORE_ALL: &str = "winguard.io/ignore-all";

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
            Some(t) => [self.message.as_str(), "; ", t].concat(),
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

/// A domain model plugged into the engine: what it knows about the pods of an input set.
pub trait Domain: Sync {
    /// The model of one input set; `by_kind` holds the set's objects by kind (the model may
    /// index some, as the Windows model indexes RuntimeClasses).
    fn input_set<'a>(
        &'a self,
        by_kind: &HashMap<&'a str, Vec<&'a Doc<'a>>>,
    ) -> Box<dyn InputSet<'a> + 'a>;
}

/// A domain model of one input set.
pub trait InputSet<'a>: Sync + Send {
    /// The facts of a pod spec (a Pod's, or a workload's pod template): rules read them as
    /// `pod`. `spec_path` and `meta_path` point to the spec and its metadata in the object.
    fn pod<'s>(
        &'s self,
        spec: &'s Doc<'s>,
        spec_path: &'static str,
        meta_path: &'static str,
    ) -> Box<dyn PodScope + 's>;
}

/// The facts of one pod spec, and of its containers (rules read them as `container`).
pub trait PodScope: expr::Record {
    fn containers(&self) -> usize;
    /// Container `index`: its facts, the container as written, and its JSON pointer.
    fn container(&self, index: usize) -> (&dyn expr::Record, &Doc<'_>, &str);
    /// What every finding about this pod notes, unless its message says it already (the
    /// Windows model: why the pod targets the OS it does).
    fn note(&self) -> Option<&str>;
}

/// What a run's rules are configured with, as the engine reads it.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// Rules naming profiles run only under one of them.
    pub profile: String,
    /// Per rule, its configured level: `None` turns it off, a severity overrides the rule's.
    pub levels: HashMap<String, Option<Severity>>,
    pub exemptions: Vec<Exemption>,
    /// `config` as rule expressions read it. Built once per loaded configuration: the webhook
    /// builds a context per review, and this is the same for every one.
    pub value: Value,
}

/// A configured exemption of a rule, by globs of namespace, kind and name.
#[derive(Debug, Clone)]
pub struct Exemption {
    pub rule: String,
    pub namespace: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    /// The last day it applies.
    pub expires: Option<jiff::civil::Date>,
}

/// What rules are evaluated against: the settings, the domain model and the rest of the input
/// set.
pub struct Context<'a> {
    settings: &'a Settings,
    /// The domain model of this input set.
    model: Box<dyn InputSet<'a> + 'a>,
    /// Per kind, the input objects of that kind (for `objects(kind)` and the indexes).
    objects_by_kind: HashMap<&'a str, Vec<&'a Doc<'a>>>,
    /// Indexes over `objects_by_kind` for the cross-object lookups, built once per context.
    cross: CrossIndex<'a>,
    /// Today's date, for exemption expiry (passed in so evaluation stays deterministic).
    pub today: jiff::civil::Date,
    /// The rules the settings turn on, with their configured severity, worked out once per run
    /// (not by looking every rule's level up for every object).
    active: Vec<(&'a Rule, Option<Severity>)>,
    /// The rule set `active` was taken from.
    rules: &'a RuleSet,
    /// Whether findings carry their fix (true unless set otherwise): a validating webhook never
    /// uses them, so it builds no patch per finding.
    pub fixes: bool,
}

/// What every context of a run is built on: the rules, their settings, the domain model and
/// today's date. `Policy::basis` gives it.
#[derive(Clone, Copy)]
pub struct Basis<'a> {
    pub rules: &'a RuleSet,
    pub settings: &'a Settings,
    /// The rules the settings turn on ([`active_rules`]), worked out once for every context.
    pub active: &'a [(usize, Option<Severity>)],
    pub domain: &'a dyn Domain,
    pub today: jiff::civil::Date,
}

/// The rules the settings turn on, as indexes into `rules`, with their configured severity: the
/// profile's rules whose level is not `off`. Worked out once per loaded setup: the webhook builds
/// a context per review, and the rules turned on are the same for every one.
pub fn active_rules(rules: &RuleSet, settings: &Settings) -> Vec<(usize, Option<Severity>)> {
    rules
        .rules
        .iter()
        .enumerate()
        .filter(|(_, r)| r.profiles.is_empty() || r.profiles.contains(&settings.profile))
        .filter_map(|(i, r)| r.configured_level(&settings.levels).map(|lvl| (i, lvl)))
        .collect()
}

impl<'a> Context<'a> {
    /// The context for one object seen alone (the webhook's case: no other inputs).
    pub fn for_single_object(basis: Basis<'a>) -> Self {
        Self::assemble(basis, HashMap::new())
    }

    /// Builds the context for one input set. `objects` are all objects of the run (for
    /// RuntimeClass lookups and cross-object rules); for the webhook, just the one under review.
    pub fn new(basis: Basis<'a>, objects: &[&'a Doc<'a>]) -> Self {
        let mut objects_by_kind: HashMap<&'a str, Vec<&'a Doc<'a>>> = HashMap::new();
        for o in objects {
            let kind = o.get("kind").and_then(Doc::as_str).unwrap_or("");
            objects_by_kind.entry(kind).or_default().push(o);
        }
        Self::assemble(basis, objects_by_kind)
    }

    /// Builds the context from objects already grouped by kind: `lists[i]` holds the objects of
    /// kind `kinds[i]`, borrowed rather than copied.
    pub fn from_lists(basis: Basis<'a>, kinds: &'a [String], lists: &'a [Vec<Value>]) -> Self {
        let objects_by_kind = kinds
            .iter()
            .zip(lists)
            .map(|(kind, list)| (kind.as_str(), list.iter().collect()))
            .collect();
        Self::assemble(basis, objects_by_kind)
    }

    fn assemble(basis: Basis<'a>, objects_by_kind: HashMap<&'a str, Vec<&'a Doc<'a>>>) -> Self {
        let Basis {
            rules,
            settings,
            active,
            domain,
            today,
        } = basis;
        let active = active
            .iter()
            .map(|&(i, level)| (&rules.rules[i], level))
            .collect();
        // Each index reads objects parsed long before (a large input's are out of the caches):
        // on a large input set the cross-object indexes and the model's are built side by side.
        let (cross, model) =
            if objects_by_kind.values().map(Vec::len).sum::<usize>() >= PARALLEL_INDEXING {
                rayon::join(
                    || CrossIndex::build(&objects_by_kind),
                    || domain.input_set(&objects_by_kind),
                )
            } else {
                (
                    CrossIndex::build(&objects_by_kind),
                    domain.input_set(&objects_by_kind),
                )
            };
        Context {
            active,
            rules,
            settings,
            model,
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
/// Services, so a lookup costs what it finds, not a scan of every object of the kind. Keys borrow
/// from the objects: neither building nor looking up copies a string.
#[derive(Default)]
struct CrossIndex<'a> {
    /// (namespace, kind, name) of a scale target → the autoscalers naming it.
    autoscalers: FxHashMap<(&'a str, &'a str, &'a str), Vec<usize>>,
    /// (namespace, key, value) of each Service's first selector entry → those Services: a
    /// Service can select a pod only if the pod has that label, so the pod's labels find every
    /// candidate.
    services: FxHashMap<(&'a str, &'a str, Cow<'a, str>), Vec<usize>>,
}

fn namespace_of<'a>(o: &'a Doc<'_>) -> &'a str {
    o.pointer("/metadata/namespace")
        .and_then(Doc::as_str)
        .unwrap_or("")
}

/// A label value as the text a selector compares (labels are strings; a number compares as
/// its JSON text).
fn label_text<'a>(v: &'a Doc<'_>) -> Cow<'a, str> {
    v.as_str()
        .map_or_else(|| Cow::Owned(v.to_string()), Cow::Borrowed)
}

/// From how many objects an input set's indexes are built on several threads: below it, handing
/// the work to another thread costs more than it saves (a review has one object).
const PARALLEL_INDEXING: usize = 4096;

impl<'a> CrossIndex<'a> {
    fn build(by_kind: &HashMap<&str, Vec<&'a Doc<'a>>>) -> Self {
        let list = |kind: &str| by_kind.get(kind).map(Vec::as_slice).unwrap_or_default();
        let (hpas, services) = (list("HorizontalPodAutoscaler"), list("Service"));
        // Sized once: growing by rehashing would touch fresh memory at every doubling, serially.
        let mut index = CrossIndex {
            autoscalers: FxHashMap::with_capacity_and_hasher(hpas.len(), Default::default()),
            services: FxHashMap::with_capacity_and_hasher(services.len(), Default::default()),
        };
        for (i, hpa) in hpas.iter().enumerate() {
            let target = hpa.pointer("/spec/scaleTargetRef");
            let field = |f: &str| target.and_then(|t| t.get(f)).and_then(Doc::as_str);
            let key = (
                namespace_of(hpa),
                field("kind").unwrap_or(""),
                field("name").unwrap_or(""),
            );
            index.autoscalers.entry(key).or_default().push(i);
        }
        for (i, service) in services.iter().enumerate() {
            let first = service
                .pointer("/spec/selector")
                .and_then(Doc::as_object)
                .and_then(|m| m.iter().next());
            if let Some((k, v)) = first {
                let key = (namespace_of(service), k.as_str(), label_text(v));
                index.services.entry(key).or_default().push(i);
            }
        }
        index
    }
}

impl Context<'_> {
    fn of_kind(&self, kind: &str) -> &[&Doc<'_>] {
        self.objects_by_kind
            .get(kind)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The HorizontalPodAutoscalers in `namespace` whose `scaleTargetRef` names `kind`/`name`,
    /// in input order.
    pub fn autoscalers_of(&self, namespace: &str, kind: &str, name: &str) -> Vec<&Doc<'_>> {
        let Some(found) = self.cross.autoscalers.get(&(namespace, kind, name)) else {
            return Vec::new();
        };
        let list = self.of_kind("HorizontalPodAutoscaler");
        found.iter().map(|&i| list[i]).collect()
    }

    /// The Services in `namespace` whose (non-empty) selector selects `pod_labels`, in input
    /// order.
    pub fn services_selecting(&self, namespace: &str, pod_labels: &Doc<'_>) -> Vec<&Doc<'_>> {
        let Some(labels) = pod_labels.as_object() else {
            return Vec::new();
        };
        let list = self.of_kind("Service");
        let mut found: Vec<usize> = Vec::new();
        for (k, v) in labels {
            if let Some(candidates) =
                self.cross
                    .services
                    .get(&(namespace, k.as_str(), label_text(v)))
            {
                found.extend(candidates.iter().copied().filter(|&i| {
                    let selector = list[i].pointer("/spec/selector").unwrap_or(&Doc::Null);
                    selector_matches(selector, pod_labels)
                }));
            }
        }
        found.sort_unstable();
        found.into_iter().map(|i| list[i]).collect()
    }
}

/// The cross-object functions rules call, answered from the context's indexes.
impl expr::Host for Context<'_> {
    fn call<'a>(&'a self, name: &str, args: &mut Args<'a>) -> Result<Val<'a>, EvalError> {
        let refs = |found: Vec<&'a Doc<'a>>| Val::list(found.into_iter().map(Val::Ref).collect());
        match name {
            "objects" => {
                let kind = args[0].as_str().unwrap_or("");
                Ok(refs(self.of_kind(kind).to_vec()))
            }
            "autoscalersOf" => {
                // Borrowed: this runs for every workload, and the object can be large.
                let object = args[0].as_json();
                let text = |p: &str| object.pointer(p).and_then(Doc::as_str).unwrap_or("");
                Ok(refs(self.autoscalers_of(
                    text("/metadata/namespace"),
                    text("/kind"),
                    text("/metadata/name"),
                )))
            }
            "servicesSelecting" => {
                let namespace = args[0].as_str().unwrap_or("").to_string();
                let labels = args[1].as_json();
                Ok(refs(self.services_selecting(&namespace, &labels)))
            }
            other => Err(EvalError::new(format!("no host function {other}"))),
        }
    }
}

/// Kinds that the rules read from the rest of the input set through the functions below
/// (`objects('Kind')`, and the kinds the indexed lookups read); `None` when some rule asks for a
/// kind only known at run time.
pub fn referenced_kinds(rules: &RuleSet) -> Option<Vec<String>> {
    let mut kinds = Vec::new();
    for r in &rules.rules {
        for e in r.all_exprs() {
            for (function, first) in e.calls() {
                match *function {
                    "objects" => kinds.push(first.clone()?),
                    "autoscalersOf" => kinds.push("HorizontalPodAutoscaler".to_string()),
                    "servicesSelecting" => kinds.push("Service".to_string()),
                    _ => {}
                }
            }
        }
    }
    kinds.sort();
    kinds.dedup();
    Some(kinds)
}

/// Fills an expression registry with the engine's functions: the cross-object lookups (through
/// the context's indexes) and JSONPath queries over a value.
pub fn register(r: &mut expr::Registry) {
    fn host<'a>(call: &expr::Call<'a>, args: &mut Args<'a>) -> Result<Val<'a>, EvalError> {
        match call.host {
            Some(h) => h.call(call.name, args),
            None => Ok(Val::list(Vec::new())),
        }
    }
    r.add(
        "objects(string) -> list(dyn)",
        "the objects of a kind in the same input set",
        host,
    );
    r.add(
        "autoscalersOf(dyn) -> list(dyn)",
        "the HorizontalPodAutoscalers of the input set that scale this object (same namespace, `scaleTargetRef` kind and name), through an index",
        host,
    );
    r.add(
        "servicesSelecting(string, dyn) -> list(dyn)",
        "`servicesSelecting(namespace, labels)`: the Services of the input set in the namespace whose selector selects the labels, through an index",
        host,
    );
    r.add_prepared(
        "jsonpath(dyn, string, string) -> list(map(string, dyn))",
        "`jsonpath(value, pointer, '$.path')`: the JSONPath's matches in `value` as `{value, pointer}`, pointers prefixed with `pointer` (the JSONPath must be a literal)",
        |call, args| {
            let (Some(query), Val::Ref(root)) = (call.prepared::<jsonpath::Path>(), &args[0]) else {
                return Err(EvalError::new(
                    "jsonpath() needs a literal path and a value read from the input",
                ));
            };
            let matches = query.find(root);
            if matches.is_empty() {
                return Ok(Val::list(Vec::new()));
            }
            Ok(Val::Rows(std::rc::Rc::new(PathRows {
                prefix: std::mem::replace(&mut args[1], Val::Null),
                matches,
            })))
        },
        Some((2, |text| {
            jsonpath::Path::parse(text)
                .map(|p| Box::new(p) as Box<dyn std::any::Any + Send + Sync>)
                .map_err(|e| format!("invalid JSONPath `{text}`: {e}"))
        })),
    );
    r.add(
        "jsonPointerEscape(string) -> string",
        "a JSON-pointer reference token (RFC 6901: `/` → `~1`, `~` → `~0`)",
        |_, a| Ok(Val::str(escape_pointer_token(a[0].as_str().unwrap_or("")))),
    );
}

/// `jsonpath()`'s matches as rows `{pointer, value}`; a pointer is built when read.
struct PathRows<'a> {
    /// The pointer of the value the path ran on (a string).
    prefix: Val<'a>,
    matches: jsonpath::Matches<'a>,
}

impl<'a> expr::Rows<'a> for PathRows<'a> {
    fn len(&self) -> usize {
        self.matches.len()
    }

    fn names(&self) -> &'static [&'static str] {
        &["pointer", "value"]
    }

    fn field(&self, row: usize, index: usize) -> Val<'a> {
        match index {
            0 => Val::str(
                self.matches
                    .pointer(row, self.prefix.as_str().unwrap_or_default()),
            ),
            _ => Val::Ref(self.matches.value(row)),
        }
    }
}

/// Evaluates every active rule on one object. `rules` must be the rule set the context was built
/// with.
pub fn evaluate(rules: &RuleSet, ctx: &Context<'_>, object: &Doc<'_>) -> Vec<Finding> {
    evaluate_batch(rules, ctx, &[object])
        .pop()
        .expect("one list per object")
}

/// A workload's pod template: where its spec and metadata are, and the values there.
struct PodTemplate<'v> {
    spec_path: &'static str,
    meta_path: &'static str,
    spec: &'v Doc<'v>,
    meta: &'v Doc<'v>,
}

/// Evaluates every active rule on each of `objects`: the findings of each object, in the order
/// of `objects`. `rules` must be the rule set the context was built with.
///
/// Rule by rule over the whole batch, not object by object: one rule's conditions and helpers
/// then run many times in a row, which keeps their code and data in the caches (`winguard lint`
/// evaluates documents in batches for this reason). A rule's findings on one object come in the
/// order they would alone; findings of different rules are not in rule-file order.
pub fn evaluate_batch(
    rules: &RuleSet,
    ctx: &Context<'_>,
    objects: &[&Doc<'_>],
) -> Vec<Vec<Finding>> {
    debug_assert!(
        std::ptr::eq(rules, ctx.rules),
        "a context serves its own rule set"
    );
    let kinds: Vec<&str> = objects
        .iter()
        .map(|o| o.get("kind").and_then(Doc::as_str).unwrap_or(""))
        .collect();
    let templates: Vec<Option<PodTemplate>> = objects
        .iter()
        .zip(&kinds)
        .map(|(object, kind)| {
            let (spec_path, meta_path) = pod_template_paths(kind)?;
            let spec = object.pointer(spec_path).filter(|s| s.is_object())?;
            let meta = object.pointer(meta_path).unwrap_or(&Doc::Null);
            Some(PodTemplate {
                spec_path,
                meta_path,
                spec,
                meta,
            })
        })
        .collect();
    let any_pod_rule = ctx.active.iter().any(|(r, _)| r.scope != Scope::Object);
    let facts: Vec<Option<Box<dyn PodScope + '_>>> = templates
        .iter()
        .map(|t| {
            let t = t.as_ref().filter(|_| any_pod_rule)?;
            Some(ctx.model.pod(t.spec, t.spec_path, t.meta_path))
        })
        .collect();
    // One activation per object with its pod bindings; container bindings come and go.
    let slots = slot::LETS
        + ctx
            .active
            .iter()
            .map(|(r, _)| r.lets.len())
            .max()
            .unwrap_or(0);
    let mut acts: Vec<Activation> = objects
        .iter()
        .zip(templates.iter().zip(&facts))
        .map(|(object, (template, facts))| {
            let mut act = Activation::new(slots, Some(ctx as &dyn expr::Host));
            act.set(slot::OBJECT, Val::Ref(object));
            act.set(slot::CONFIG, Val::Ref(&ctx.settings.value));
            if let (Some(t), Some(f)) = (template, facts) {
                act.set(slot::POD, Val::Rec(&**f as &dyn expr::Record));
                act.set(slot::POD_SPEC, Val::Ref(t.spec));
                // A template without metadata reads as empty metadata.
                static EMPTY: std::sync::LazyLock<Value> =
                    std::sync::LazyLock::new(|| Doc::Object(crate::value::Map::new()));
                act.set(
                    slot::POD_META,
                    Val::Ref(if t.meta.is_null() { &EMPTY } else { t.meta }),
                );
            }
            act
        })
        .collect();
    let mut findings: Vec<Vec<Finding>> = objects.iter().map(|_| Vec::new()).collect();
    for (rule, level) in &ctx.active {
        for (i, object) in objects.iter().enumerate() {
            let (act, out) = (&mut acts[i], &mut findings[i]);
            match (rule.scope, &templates[i], &facts[i]) {
                (Scope::Object, _, _) if rule.kinds.iter().any(|k| k == kinds[i]) => {
                    let here = Here {
                        fixes: ctx.fixes,
                        object,
                        value: None,
                        pointer: "",
                        pod: None,
                    };
                    run_rule(rule, *level, act, here, out);
                }
                (Scope::Pod, Some(t), Some(f)) => {
                    let here = Here {
                        fixes: ctx.fixes,
                        object,
                        value: Some(t.spec),
                        pointer: t.spec_path,
                        pod: Some(&**f),
                    };
                    run_rule(rule, *level, act, here, out);
                }
                (Scope::Container, Some(_), Some(f)) => {
                    for c in 0..f.containers() {
                        let (record, raw, path) = f.container(c);
                        act.set(slot::CONTAINER, Val::Rec(record));
                        act.set(slot::CONTAINER_SPEC, Val::Ref(raw));
                        let here = Here {
                            fixes: ctx.fixes,
                            object,
                            value: Some(raw),
                            pointer: path,
                            pod: Some(&**f),
                        };
                        run_rule(rule, *level, act, here, out);
                    }
                }
                _ => {}
            }
        }
    }
    drop(acts);
    objects
        .iter()
        .zip(&templates)
        .zip(findings)
        .map(|((object, template), findings)| {
            // Where suppression annotations may sit: the object's metadata, and a workload's pod
            // template metadata (for a Pod they are the same place, read once).
            let mut metas: Vec<(&str, &Doc<'_>)> =
                vec![("/metadata", object.get("metadata").unwrap_or(&Doc::Null))];
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
    object: &'v Doc<'v>,
    value: Option<&'v Doc<'v>>,
    pointer: &'v str,
    /// Whether findings carry their fix (see [`Context::fixes`]).
    fixes: bool,
    /// The pod, for a pod or container rule: its note (see [`PodScope::note`]) is read when a
    /// finding is made, not for every rule and object.
    pod: Option<&'v dyn PodScope>,
}

/// A condition's truth; one that fails to evaluate (a field the object lacks, read without
/// `has()`) does not hold.
fn holds<'a>(program: &'a expr::Program, act: &Activation<'a>) -> bool {
    program.test(act).unwrap_or(false)
}

/// Runs one rule in the current scope, pushing its findings.
fn run_rule<'a>(
    rule: &'a Rule,
    level: Option<Severity>,
    act: &mut Activation<'a>,
    here: Here<'a>,
    findings: &mut Vec<Finding>,
) {
    // Each `let` is evaluated at most once here, and only if something reads it.
    for (i, (_, program)) in rule.lets.iter().enumerate() {
        act.set_lazy(slot::LETS + i, program);
    }
    let Here {
        object,
        value: scope_value,
        pointer: scope_pointer,
        ..
    } = here;
    // A condition that doesn't read `item` is tested once, before building the item list.
    if rule.each.is_some() && !rule.when_reads_item && !holds(&rule.when, act) {
        return;
    }
    match &rule.each {
        None => {
            if holds(&rule.when, act) {
                findings.push(make_finding(rule, level, act, here, scope_pointer));
            }
        }
        Some(Each::Expr(e)) => {
            let Ok(items) = e.eval(act) else {
                return;
            };
            let Ok(items) = items.items() else {
                return;
            };
            let items: Vec<Val<'a>> = items.collect();
            for item in items {
                let pointer = item
                    .get(&Val::Text("pointer"))
                    .ok()
                    .flatten()
                    .and_then(|p| p.as_str().map(str::to_string))
                    .unwrap_or_else(|| scope_pointer.to_string());
                act.set(slot::ITEM, item);
                if !rule.when_reads_item || holds(&rule.when, act) {
                    findings.push(make_finding(rule, level, act, here, &pointer));
                }
                // Lets that read `item` are evaluated afresh for the next one.
                for &i in &rule.item_lets {
                    act.set_lazy(slot::LETS + i, &rule.lets[i].1);
                }
            }
        }
        Some(Each::JsonPath((_, query))) => {
            let scope_value = scope_value.unwrap_or(object);
            for (pointer, value) in query.matches(scope_value, scope_pointer) {
                // A matched map is the item with its `pointer` added (unless it has one).
                let item = match value {
                    Doc::Object(m) => {
                        let mut entries: Vec<(Val<'a>, Val<'a>)> = m
                            .iter()
                            .map(|(k, v)| (Val::Text(k.as_str()), Val::Ref(v)))
                            .collect();
                        if !m.contains_key("pointer") {
                            entries.push((Val::Text("pointer"), Val::str(pointer.as_str())));
                        }
                        Val::Map(std::rc::Rc::new(entries))
                    }
                    other => Val::Ref(other),
                };
                act.set(slot::ITEM, item);
                if !rule.when_reads_item || holds(&rule.when, act) {
                    findings.push(make_finding(rule, level, act, here, &pointer));
                }
                for &i in &rule.item_lets {
                    act.set_lazy(slot::LETS + i, &rule.lets[i].1);
                }
            }
        }
    }
}

fn make_finding<'a>(
    rule: &'a Rule,
    level: Option<Severity>,
    act: &Activation<'a>,
    here: Here<'_>,
    default_pointer: &str,
) -> Finding {
    let severity = level.unwrap_or_else(|| {
        rule.severity_when
            .iter()
            .find(|(cond, _)| holds(cond, act))
            .map_or(rule.default_severity, |(_, s)| *s)
    });
    let pointer = match &rule.pointer {
        Some(t) => t.render(act),
        None => default_pointer.to_string(),
    };
    let fix = rule.fix.as_ref().filter(|_| here.fixes).and_then(|f| {
        if let Some(w) = &f.when
            && !holds(w, act)
        {
            return None;
        }
        let patch = patch::build(f, act, here.object);
        (!patch.is_empty()).then(|| FixProposal {
            title: f.title.render(act),
            applicability: f.applicability,
            patch,
        })
    });
    let message = rule.message.render(act);
    // Every pod-level finding carries the pod's note (why it targets the OS it does), unless
    // the message says it or the rule's conditions don't depend on it.
    let given = |r: &str| match rule.message_gives_reason {
        MessageGivesReason::Irrelevant | MessageGivesReason::Always => true,
        MessageGivesReason::Maybe => message.contains(r),
        MessageGivesReason::Never => false,
    };
    let target = here
        .pod
        .and_then(|p| p.note())
        .filter(|r| !given(r))
        // Joined by hand: `format!`'s machinery costs more than the copy, once per finding.
        .map(|r| ["the pod ", r].concat());
    Finding {
        rule: rule.name.clone(),
        severity,
        message,
        target,
        pointer,
        fix,
    }
}

/// Applies suppression annotations (object and pod template) and config exemptions.
fn suppress(
    ctx: &Context<'_>,
    object: &Doc<'_>,
    metas: &[(&str, &Doc<'_>)],
    findings: Vec<Finding>,
) -> Vec<Finding> {
    let mut notes = Vec::new();
    // (rule or "*", reason) from annotations.
    let mut ignored: Vec<(String, bool)> = Vec::new();
    for (meta_path, meta) in metas {
        let Some(annotations) = meta.get("annotations").and_then(Doc::as_object) else {
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
        && (findings.is_empty() || ctx.settings.exemptions.is_empty())
    {
        return findings;
    }
    let metadata = object.get("metadata");
    let meta_str = |key: &str| {
        metadata
            .and_then(|m| m.get(key))
            .and_then(Doc::as_str)
            .unwrap_or("")
    };
    let (namespace, name) = (meta_str("namespace"), meta_str("name"));
    let kind = object.get("kind").and_then(Doc::as_str).unwrap_or("");
    let mut out: Vec<Finding> = findings
        .into_iter()
        .filter_map(|mut f| {
            if ignored
                .iter()
                .any(|(r, ok)| *ok && (r == "*" || *r == f.rule))
            {
                return None;
            }
            for ex in &ctx.settings.exemptions {
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
    fn globs() {
        assert!(glob_match("kube-*", "kube-system"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("kube-*", "default"));
    }

    /// `jsonpath()`'s rows read as the `{pointer, value}` maps they stand for: by field, as a
    /// whole, in equality with a literal map, through macros and `size`.
    #[test]
    fn jsonpath_matches_read_as_maps() {
        use crate::json;
        let mut registry = expr::Registry::standard();
        register(&mut registry);
        let mut compiler = expr::Compiler::new(&registry);
        let spec_slot = compiler.declare("spec", expr::Type::Dyn);
        let eval = |text: &str| -> Value {
            let program = compiler.compile(text).unwrap();
            let spec = json!({"volumes": [{"name": "a/b", "emptyDir": {}},
                                          {"name": "n", "nfs": {"server": "s"}}],
                              "containers": [{"volumeMounts": [{"name": "a/b"}]}]});
            let mut act = Activation::new(compiler.slots(), None);
            act.set(spec_slot, Val::Ref(&spec));
            let value = program.eval(&act).map(|v| v.to_value());
            value.unwrap_or_else(|e| panic!("{text}: {e}"))
        };
        let volumes = "jsonpath(spec, '/spec', '$.volumes[*]')";
        assert_eq!(
            eval(volumes),
            json!([{"pointer": "/spec/volumes/0", "value": {"name": "a/b", "emptyDir": {}}},
                   {"pointer": "/spec/volumes/1", "value": {"name": "n", "nfs": {"server": "s"}}}])
        );
        for (text, expected) in [
            (format!("{volumes}[1].pointer"), json!("/spec/volumes/1")),
            (format!("size({volumes})"), json!(2)),
            (
                format!("{volumes}.filter(q, has(q.value.nfs)).map(q, q.pointer + '/nfs')"),
                json!(["/spec/volumes/1/nfs"]),
            ),
            (
                format!(
                    "{volumes}[0] == {{'pointer': '/spec/volumes/0', 'value': {{'name': 'a/b', 'emptyDir': {{}}}}}}"
                ),
                json!(true),
            ),
            (
                format!("{volumes}.all(q, q.all(k, k in ['pointer', 'value']) && 'value' in q)"),
                json!(true),
            ),
            (
                "jsonpath(spec, '', \"$['containers'][*].volumeMounts[*]\")[0].pointer".to_string(),
                json!("/containers/0/volumeMounts/0"),
            ),
            (
                "jsonpath(spec, '/spec', '$.volumes[*].name')".to_string(),
                json!([{"pointer": "/spec/volumes/0/name", "value": "a/b"},
                       {"pointer": "/spec/volumes/1/name", "value": "n"}]),
            ),
            (
                "jsonpath(spec, '/spec', '$.nothing[*]')".to_string(),
                json!([]),
            ),
        ] {
            assert_eq!(eval(&text), expected, "{text}");
        }
    }

    /// The indexed lookups find exactly what a scan of every object of the kind finds, in input
    /// order: namespace, selector (every entry, not only the indexed first one; empty selects
    /// nothing) and scale target all count.
    #[test]
    fn indexed_lookups_find_what_a_scan_finds() {
        use crate::json;
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
        let refs: Vec<&Doc<'_>> = objects.iter().collect();
        // The indexes are the engine's own: no rules and no domain model take part.
        struct NoModel;
        impl Domain for NoModel {
            fn input_set<'a>(
                &'a self,
                _: &HashMap<&'a str, Vec<&'a Doc<'a>>>,
            ) -> Box<dyn InputSet<'a> + 'a> {
                Box::new(NoModel)
            }
        }
        impl<'a> InputSet<'a> for NoModel {
            fn pod<'s>(
                &'s self,
                _: &'s Doc<'s>,
                _: &'static str,
                _: &'static str,
            ) -> Box<dyn PodScope + 's> {
                unreachable!("no rule reads a pod here")
            }
        }
        let rules = RuleSet::default();
        let settings = Settings::default();
        let basis = Basis {
            rules: &rules,
            settings: &settings,
            active: &[],
            domain: &NoModel,
            today: jiff::civil::date(2026, 12, 1),
        };
        let ctx = Context::new(basis, &refs);
        let names = |found: Vec<&Doc<'_>>| -> Vec<String> {
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
            let scanned: Vec<&Doc<'_>> = services
                .iter()
                .filter(|s| {
                    namespace_of(s) == ns && selector_matches(&s["spec"]["selector"], &labels)
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
