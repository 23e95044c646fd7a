//! `winguard lint`: load inputs, evaluate every object, place findings in their files.

use crate::config::Config;
use crate::engine::{Context, evaluate};
use crate::manifest::{InputError, Loaded, shape};
use crate::model::{Catalog, EMBEDDED_CATALOG};
use crate::report::{Located, Report};
use crate::rules::RuleSet;

use super::LintArgs;

/// Rules, config and catalog for a run.
pub struct LintSetup {
    pub rules: RuleSet,
    pub config: Config,
    pub catalog: Catalog,
    pub today: jiff::civil::Date,
}

impl LintSetup {
    /// Builds a setup from an already-loaded config (tests, benches, the webhook).
    pub fn new(rules: RuleSet, mut config: Config) -> Result<Self, String> {
        let catalog = Catalog::load(EMBEDDED_CATALOG, &config)?;
        config.resolve(&catalog).map_err(|e| match &config.path {
            Some(p) => format!("{}: {e}", p.display()),
            None => e,
        })?;
        for ex in &config.exemptions {
            if rules.get(&ex.rule).is_none() {
                return Err(format!(
                    "{}: exemption names unknown rule `{}`",
                    config
                        .path
                        .as_ref()
                        .map_or("config".into(), |p| p.display().to_string()),
                    ex.rule
                ));
            }
        }
        for name in config.rules.keys() {
            if rules.get(name).is_none() {
                return Err(format!(
                    "{}: `rules` names unknown rule `{name}`",
                    config
                        .path
                        .as_ref()
                        .map_or("config".into(), |p| p.display().to_string())
                ));
            }
        }
        Ok(LintSetup {
            rules,
            config,
            catalog,
            today: jiff::Zoned::now().date(),
        })
    }

    pub fn from_args(args: &LintArgs, rules: RuleSet) -> Result<Self, String> {
        let path = match &args.config {
            Some(p) => Some(p.clone()),
            None => std::env::current_dir()
                .ok()
                .and_then(|d| Config::discover(&d)),
        };
        let mut config = match path {
            Some(p) => Config::load(&p).map_err(|e| e.to_string())?,
            None => Config::default(),
        };
        if let Some(v) = &args.kube_version {
            if crate::engine::expr::parse_version(&serde_json::json!(v)).is_none() {
                return Err(format!("--kube-version `{v}` is not a version like 1.31"));
            }
            config.kubernetes_version = v.trim_start_matches('v').to_string();
        }
        if let Some(p) = args.profile {
            config.profile = p;
        }
        Self::new(rules, config)
    }
}

/// Lints loaded inputs: shape-checks each object, evaluates the rules, locates the findings.
pub fn lint_loaded(setup: &LintSetup, loaded: Loaded) -> Report {
    let mut report = Report {
        errors: loaded.errors,
        files: loaded.files,
        ..Report::default()
    };
    use rayon::prelude::*;
    let checked: Vec<_> = loaded
        .objects
        .into_par_iter()
        .map(|o| {
            let problems = shape::check(&o.value);
            (o, problems)
        })
        .collect();
    let mut lintable = Vec::with_capacity(checked.len());
    for (o, problems) in checked {
        if problems.is_empty() {
            lintable.push(o);
            continue;
        }
        for p in problems {
            let pos = o.position(&p.pointer);
            report.errors.push(InputError {
                file: o.file.to_string(),
                line: Some(pos.line),
                column: Some(pos.column),
                message: format!("{} {}: {}", o.kind(), o.name(), p.message),
            });
        }
    }
    report.objects = lintable.len();
    let values: Vec<&serde_json::Value> = lintable.iter().map(|o| &o.value).collect();
    let ctx = Context::new(
        &setup.rules,
        &setup.config,
        &setup.catalog,
        &values,
        setup.today,
    );
    let located: Vec<Vec<Located>> = lintable
        .par_iter()
        .map(|o| {
            evaluate(&setup.rules, &ctx, &o.value)
                .into_iter()
                .map(|f| Located::new(f, o))
                .collect()
        })
        .collect();
    report.findings = located.into_iter().flatten().collect();
    report.sort();
    report
}

/// Lints one text as if it were a file named `name` (tests, docs examples, benches).
pub fn lint_text(setup: &LintSetup, name: &str, text: &str) -> Report {
    let mut loaded = Loaded::default();
    crate::manifest::load_bytes(name, text.as_bytes().to_vec(), false, &mut loaded);
    lint_loaded(setup, loaded)
}
