//! The policy the CLI and the webhook both evaluate with: rules, config and catalog loaded once
//! ([`Policy`], from [`SetupArgs`]), and linting a run's inputs with it ([`lint_sources`]).

use crate::error::{Error, ErrorKind};
use std::collections::HashMap;
use std::path::PathBuf;

use crate::config::Profile;

use crate::value::Value;

use crate::config::Config;
use crate::engine::{Context, evaluate, evaluate_batch};
use crate::manifest::{DocSpan, Object, Sources, Templates, parse_document, shape, split_source};
use crate::windows::{Catalog, EMBEDDED_CATALOG};
use crate::report::{Located, Report};
use crate::rules::RuleSet;

include!(concat!(env!("OUT_DIR"), "/embedded_rules.rs"));

/// The expression registry rules compile against: CEL's standard library, the engine's
/// cross-object functions, and the Windows model's records and functions.
pub fn registry() -> &'static crate::expr::Registry {
    static REGISTRY: std::sync::LazyLock<crate::expr::Registry> = std::sync::LazyLock::new(|| {
        let mut r = crate::expr::Registry::standard();
        crate::engine::register(&mut r);
        crate::windows::register(&mut r);
        r
    });
    &REGISTRY
}

/// The rules built into the binary (`rules/*.yaml`).
pub fn builtin_rules() -> Result<RuleSet, crate::error::Error> {
    RuleSet::from_texts(EMBEDDED_RULES, registry())
}

/// Rules, config and catalog for a run.
pub struct Policy {
    pub rules: RuleSet,
    pub config: Config,
    pub catalog: Catalog,
    pub today: jiff::civil::Date,
    /// The config as the engine reads it, prepared once (every context of the setup borrows it).
    pub settings: crate::engine::Settings,
    /// The rules the settings turn on (indexes into `rules`), likewise.
    active: Vec<(usize, Option<crate::rules::Severity>)>,
}

/// The Windows model is the engine's domain: it gives the facts of each input set's pods.
impl crate::engine::Domain for Policy {
    fn input_set<'a>(
        &'a self,
        by_kind: &HashMap<&'a str, Vec<&'a Value>>,
    ) -> Box<dyn crate::engine::InputSet<'a> + 'a> {
        Box::new(crate::windows::ModelContext::new(
            &self.catalog,
            &self.config,
            by_kind,
        ))
    }
}

impl Policy {
    /// What the engine's contexts for this setup are built on.
    pub fn basis(&self) -> crate::engine::Basis<'_> {
        crate::engine::Basis {
            rules: &self.rules,
            settings: &self.settings,
            active: &self.active,
            domain: self,
            today: self.today,
        }
    }

    /// Builds a setup from an already-loaded config (tests, benches, the webhook).
    pub fn new(rules: RuleSet, mut config: Config) -> Result<Self, crate::error::Errors> {
        let catalog = Catalog::load(EMBEDDED_CATALOG, &config)?;
        config.resolve(|v| catalog.parse_build(v))?;
        // Every rule name the config gives must be a rule's: all reported at once, each at
        // its line, with the closest name suggested.
        let names = || rules.rules.iter().map(|r| r.name.as_str());
        let mut unknown = Vec::new();
        for (i, ex) in config.exemptions.iter().enumerate() {
            if rules.get(&ex.rule).is_none() {
                let hint = crate::error::did_you_mean(&ex.rule, names());
                unknown.push(config.error_at(
                    &format!("/exemptions/{i}/rule"),
                    format!("exemptions[{i}].rule: no rule named `{}`{hint}", ex.rule),
                ));
            }
        }
        for name in config.rules.keys() {
            if rules.get(name).is_none() {
                let hint = crate::error::did_you_mean(name, names());
                unknown.push(config.error_at(
                    &format!("/rules/{}", crate::value::escape_pointer_token(name)),
                    format!("rules: no rule named `{name}`{hint}"),
                ));
            }
        }
        if !unknown.is_empty() {
            unknown.sort_by_key(|e| (e.line, e.column));
            return Err(crate::error::Errors(unknown));
        }
        // A rule for a profile that doesn't exist would never run.
        for rule in &rules.rules {
            for p in &rule.profiles {
                if Profile::from_name(p).is_none() {
                    return Err(crate::error::Error::new(
                        crate::error::ErrorKind::Load,
                        &rule.source,
                        format!("`profiles`: `{p}` is not a profile (generic, eks, aks or gke)"),
                    )
                    .into());
                }
            }
        }
        let settings = config.settings();
        Ok(Policy {
            active: crate::engine::active_rules(&rules, &settings),
            rules,
            settings,
            config,
            catalog,
            today: jiff::Zoned::now().date(),
        })
    }
}

/// Lints the inputs of a run.
///
/// Documents are parsed in two waves so memory stays near the size of the input: first the ones
/// other objects' rules may consult (RuntimeClasses, and the kinds rules read through
/// `objects(…)`, found by each document's `kind:` line) or whose kind can't be told without
/// parsing; then every other document is parsed, checked and evaluated, and dropped, keeping only
/// its findings.
pub fn lint_sources(setup: &Policy, sources: Sources) -> Report {
    use rayon::prelude::*;
    let Sources {
        texts,
        errors,
        files,
        ..
    } = sources;
    let context_kinds: Option<Vec<String>> =
        crate::engine::referenced_kinds(&setup.rules).map(|mut k| {
            k.push("RuntimeClass".to_string());
            k
        });
    let needs_context = |hint: Option<&str>| match (hint, &context_kinds) {
        (_, None) | (None, _) => true,
        (Some(kind), Some(kinds)) => kind.ends_with("List") || kinds.iter().any(|k| k == kind),
    };
    // Each text's templates and documents, found in parallel (a line scan of every input).
    let (templates, spans): (Vec<Templates>, Vec<Vec<DocSpan>>) =
        texts.par_iter().map(|t| split_source(&t.text)).unzip();
    let documents: usize = spans.iter().map(Vec::len).sum();
    let mut early = Vec::new();
    let mut late = Vec::with_capacity(documents);
    for (i, text_spans) in spans.into_iter().enumerate() {
        for span in text_spans {
            if needs_context(span.kind_hint(&texts[i].text)) {
                early.push((i, span));
            } else {
                late.push((i, span));
            }
        }
    }

    // Wave 1: parse what the context needs.
    let parsed: Vec<(usize, Vec<Object>, Vec<Error>)> = early
        .par_iter()
        .map(|(i, span)| {
            let (objects, errors) = parse_document(&texts[*i], &templates[*i], span);
            (*i, objects, errors)
        })
        .collect();
    // Sized once: grown by doubling, moving tens of thousands of objects each time, serially.
    let mut kept = Vec::with_capacity(parsed.iter().map(|(_, objects, _)| objects.len()).sum());
    let mut all_errors: Vec<(usize, Error)> = errors.into_iter().map(|e| (0, e)).collect();
    for (i, objects, errs) in parsed {
        all_errors.extend(errs.into_iter().map(|e| (i, e)));
        kept.extend(objects.into_iter().map(|o| (i, o)));
    }
    // Shape checks read each object's value and place errors with it: done for the kept objects
    // before their values move into the context.
    let check_shape = |i: usize, o: &Object, errors: &mut Vec<(usize, Error)>| {
        let problems = shape::check(&o.value);
        for p in &problems {
            let pos = o.value_position(&p.pointer);
            errors.push((
                i,
                Error {
                    kind: ErrorKind::Input,
                    file: o.file.to_string(),
                    line: Some(pos.line),
                    column: Some(pos.column),
                    message: format!("{} {}: {}", o.kind(), o.name(), p.message),
                },
            ));
        }
        problems.is_empty()
    };
    let (kept_ok, kept_errors): (Vec<bool>, Vec<Vec<(usize, Error)>>) = kept
        .par_iter()
        .map(|(i, o)| {
            let mut errors = Vec::new();
            (check_shape(*i, o, &mut errors), errors)
        })
        .unzip();
    all_errors.extend(kept_errors.into_iter().flatten());

    // The context's lists of objects by kind are the kept objects' values, moved rather than
    // copied (a large input has thousands of Services, each of which would be copied whole); they
    // go back into their objects once evaluation is done, to place the findings.
    // A kept object's place: its kind's index in `kinds` and its index in that kind's list (no
    // kind name copied or hashed per object: there are tens of thousands in a cluster dump).
    let mut kinds: Vec<String> = Vec::new();
    let mut lists: Vec<Vec<Value>> = Vec::new();
    let mut slots: Vec<Option<(usize, usize)>> = Vec::with_capacity(kept.len());
    for (_, o) in kept.iter_mut() {
        let kind = o.kind();
        if context_kinds
            .as_ref()
            .is_none_or(|k| k.iter().any(|c| c == kind))
        {
            let at = match kinds.iter().position(|k| k == kind) {
                Some(at) => at,
                None => {
                    kinds.push(kind.to_string());
                    lists.push(Vec::new());
                    kinds.len() - 1
                }
            };
            slots.push(Some((at, lists[at].len())));
            lists[at].push(std::mem::take(&mut o.value));
        } else {
            slots.push(None);
        }
    }
    let ctx = Context::from_lists(setup.basis(), &kinds, &lists);

    // Wave 2: evaluate everything; parse, check and evaluate the rest on the way.
    let from_kept =
        kept.par_iter()
            .zip(&slots)
            .zip(&kept_ok)
            .enumerate()
            .map(|(k, (((_, o), slot), ok))| {
                let mut out = Outcome::default();
                if *ok {
                    let value = match slot {
                        Some((kind, j)) => &lists[*kind][*j],
                        None => &o.value,
                    };
                    out.objects += 1;
                    let findings = evaluate(&setup.rules, &ctx, value);
                    if !findings.is_empty() {
                        out.kept_findings.push((k, findings));
                    }
                }
                out
            });
    // Documents go in small batches, each parsed whole and then evaluated whole: alternating
    // between the parser and the rules per document would have them evict each other's code
    // from the instruction cache.
    let from_late = late.par_chunks(LATE_BATCH).map(|batch| {
        let mut out = Outcome::default();
        let parsed: Vec<(usize, Vec<Object>)> = batch
            .iter()
            .map(|(i, span)| {
                let (objects, errs) = parse_document(&texts[*i], &templates[*i], span);
                out.errors.extend(errs.into_iter().map(|e| (*i, e)));
                (*i, objects)
            })
            .collect();
        let mut checked: Vec<&Object> = Vec::new();
        for (i, objects) in &parsed {
            for o in objects {
                if check_shape(*i, o, &mut out.errors) {
                    checked.push(o);
                }
            }
        }
        out.objects += checked.len();
        let values: Vec<&Value> = checked.iter().map(|o| &o.value).collect();
        let results = evaluate_batch(&setup.rules, &ctx, &values);
        for (o, findings) in checked.into_iter().zip(results) {
            out.findings.extend(Located::all(findings, o));
        }
        out
    });
    // Split fine enough for the threads to share the last of the work: left to its own
    // splitting, rayon cuts the run into a few large pieces, and one thread can be left
    // evaluating the last of them alone while the others wait.
    let outcomes: Vec<Outcome> = from_kept
        .with_max_len(KEPT_PER_TASK)
        .chain(from_late.with_max_len(1))
        .collect();
    let mut report = Report {
        files,
        ..Report::default()
    };
    drop(ctx);
    for ((_, o), slot) in kept.iter_mut().zip(slots) {
        if let Some((kind, j)) = slot {
            o.value = std::mem::take(&mut lists[kind][j]);
        }
    }
    report.findings.reserve_exact(
        outcomes
            .iter()
            .map(|o| o.findings.len() + o.kept_findings.iter().map(|(_, f)| f.len()).sum::<usize>())
            .sum(),
    );
    for out in outcomes {
        report.objects += out.objects;
        report.findings.extend(out.findings);
        for (k, findings) in out.kept_findings {
            let o = &kept[k].1;
            report.findings.extend(Located::all(findings, o));
        }
        all_errors.extend(out.errors);
    }
    // Errors in input order: by source, then line.
    all_errors.sort_by_key(|(i, e)| (*i, e.line.unwrap_or(0)));
    report.errors = all_errors.into_iter().map(|(_, e)| e).collect();
    report.sort();
    // The kept objects are freed on all threads, not one.
    kept.into_par_iter().for_each(drop);
    report
}

/// Documents parsed before their batch is evaluated (see `lint_sources`); small enough that a
/// batch's objects stay a few hundred kilobytes.
const LATE_BATCH: usize = 16;

/// How many kept objects (each evaluated alone) one task of the evaluation takes at most.
const KEPT_PER_TASK: usize = 32;

#[derive(Default)]
struct Outcome {
    objects: usize,
    findings: Vec<Located>,
    /// Findings of a kept object (by index), placed once its value is back in it.
    kept_findings: Vec<(usize, Vec<crate::engine::Finding>)>,
    errors: Vec<(usize, Error)>,
}

/// Lints one text as if it were a file named `name` (tests, docs examples, benches).
pub fn lint_text(setup: &Policy, name: &str, text: &str) -> Report {
    lint_sources(setup, Sources::from_text(name, text))
}

/// Where the rules and the cluster profile come from (`lint`, `serve`, `fix`, `mutate`): what the
/// command line chose, as plain values.
#[derive(Debug, Clone, Default)]
pub struct PolicySource {
    /// The config file; `None` looks for `winguard.yaml` in the working directory or a parent.
    pub config: Option<PathBuf>,
    /// Kubernetes version of the target cluster (overrides `kubernetesVersion`).
    pub kube_version: Option<String>,
    /// Cluster profile (overrides `profile`).
    pub profile: Option<Profile>,
    /// Directories of more rule files (`*.yaml`), beside the embedded ones.
    pub rule_dirs: Vec<PathBuf>,
}

impl PolicySource {
    /// The config file: the one given, else `winguard.yaml` found walking up from the working
    /// directory; `None` means the defaults.
    pub fn config_path(&self) -> Option<PathBuf> {
        self.config.clone().or_else(|| {
            std::env::current_dir()
                .ok()
                .and_then(|d| crate::config::Config::discover(&d))
        })
    }

    /// Loads rules and the config at `config_path` (from [`PolicySource::config_path`]), with
    /// the overrides applied.
    pub fn load(
        &self,
        config_path: Option<&std::path::Path>,
    ) -> Result<Policy, crate::error::Errors> {
        let rules = load_rule_set(&self.rule_dirs)?;
        let mut config = match config_path {
            Some(p) => {
                let names: Vec<&str> = rules.rules.iter().map(|r| r.name.as_str()).collect();
                crate::config::Config::load(p, &names)?
            }
            None => crate::config::Config::default(),
        };
        apply_overrides(&mut config, self.kube_version.as_deref(), self.profile)?;
        Policy::new(rules, config)
    }
}

/// The embedded rules plus those in `rule_dirs`; every problem is in the error, one a line.
pub fn load_rule_set(rule_dirs: &[PathBuf]) -> Result<RuleSet, crate::error::Errors> {
    let mut set = builtin_rules()?;
    let mut problems = Vec::new();
    for dir in rule_dirs {
        if let Err(errors) = set.add_dir(dir, registry()) {
            problems.extend(errors);
        }
    }
    if problems.is_empty() {
        Ok(set)
    } else {
        Err(crate::error::Errors(problems))
    }
}

/// Applies `--kube-version` and `--profile` over a loaded config.
pub fn apply_overrides(
    config: &mut crate::config::Config,
    kube_version: Option<&str>,
    profile: Option<Profile>,
) -> Result<(), crate::error::Error> {
    if let Some(v) = kube_version {
        config.kubernetes_version = crate::config::parse_kubernetes_version(v).map_err(|e| {
            crate::error::Error::new(
                crate::error::ErrorKind::Load,
                "--kube-version",
                e.to_string(),
            )
        })?;
    }
    if let Some(p) = profile {
        config.profile = p;
    }
    Ok(())
}
