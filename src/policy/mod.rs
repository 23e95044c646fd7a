//! The policy the CLI and the webhook both evaluate with: rules, config and catalog loaded once
//! ([`Policy`], from a [`PolicySource`]). The pipeline (`crate::pipeline`) evaluates inputs
//! with it.

pub mod rule_tests;

use std::collections::HashMap;
use std::path::PathBuf;

use crate::config::Profile;

use crate::config::Config;
use crate::rules::RuleSet;
use crate::windows::{Catalog, ClusterProfile, EMBEDDED_CATALOG};

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

/// The rules built into the binary (`rules/*.yaml`): compiled once per build and kept in the
/// cache (`crate::cache`), so a run reads them back instead of parsing and checking every
/// expression again. The entry's name carries the build's key (`build.rs`: a hash of the rule
/// files and of the sources that compile them), so a cached rule set is only ever read by the
/// build that wrote it.
pub fn builtin_rules() -> Result<RuleSet, crate::error::Error> {
    let entry = format!("{BUILTIN_RULES_ENTRY}{}.bin", env!("WINGUARD_BUILD_KEY"));
    if let Some(bytes) = crate::cache::read(&entry)
        && let Ok(rules) = RuleSet::from_stored(&bytes, registry())
    {
        return Ok(rules);
    }
    let rules = compile_builtin_rules()?;
    crate::cache::write(BUILTIN_RULES_ENTRY, &entry, || rules.to_stored());
    Ok(rules)
}

/// The cache entries of the compiled built-in rules start with this.
const BUILTIN_RULES_ENTRY: &str = "builtin-rules-";

/// The rules built into the binary, compiled from their text (what the cache holds).
pub fn compile_builtin_rules() -> Result<RuleSet, crate::error::Error> {
    RuleSet::from_texts(EMBEDDED_RULES, registry())
}

/// Rules, config and catalog for a run.
pub struct Policy {
    pub rules: RuleSet,
    pub config: Config,
    pub catalog: Catalog,
    /// The cluster as the Windows model reads it, from the config.
    pub profile: ClusterProfile,
    pub today: jiff::civil::Date,
    /// The config as the engine reads it, prepared once (every context of the setup borrows it).
    pub settings: crate::engine::Settings,
    /// The rules the settings turn on (indexes into `rules`), likewise.
    active: Vec<(usize, Option<crate::rules::Severity>)>,
    /// Where images' platforms are read, when the config resolves images.
    pub images: Option<std::sync::Arc<crate::registry::Registry>>,
}

/// The Windows model is the engine's domain: it gives the facts of each input set's pods.
impl crate::engine::Domain for Policy {
    fn input_set<'a>(
        &'a self,
        by_kind: &HashMap<&'a str, Vec<&'a crate::value::Doc<'a>>>,
    ) -> Box<dyn crate::engine::InputSet<'a> + 'a> {
        let images = self
            .images
            .as_deref()
            .map(|r| r as &dyn crate::windows::platforms::ImagePlatformSource);
        Box::new(crate::windows::ModelContext::new(
            &self.catalog,
            &self.profile,
            images,
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
    pub fn new(rules: RuleSet, config: Config) -> Result<Self, crate::error::Errors> {
        Self::with_rules(rules, config).map_err(|(_, e)| e)
    }

    /// [`Policy::new`], giving the rules back when the config is refused, so a caller trying
    /// several configs compiles the rules once.
    pub fn with_rules(
        rules: RuleSet,
        mut config: Config,
    ) -> Result<Self, (RuleSet, crate::error::Errors)> {
        let catalog = match Catalog::load(EMBEDDED_CATALOG, &config.image_patterns()) {
            Ok(c) => c,
            Err(e) => return Err((rules, e.into())),
        };
        if let Err(e) = config.resolve(|v| catalog.parse_build(v)) {
            return Err((rules, e.into()));
        }
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
        let lists = [
            ("select", config.select.clone().unwrap_or_default()),
            ("extendSelect", config.extend_select.clone()),
            ("ignore", config.ignore.clone()),
        ];
        for (key, list) in lists {
            for (i, name) in list.iter().enumerate() {
                if rules.get(name).is_none() {
                    let hint = crate::error::did_you_mean(name, names());
                    unknown.push(config.error_at(
                        &format!("/{key}/{i}"),
                        format!("{key}: no rule named `{name}`{hint}"),
                    ));
                }
            }
        }
        if !unknown.is_empty() {
            unknown.sort_by_key(|e| (e.line, e.column));
            return Err((rules, crate::error::Errors(unknown)));
        }
        // A rule for a profile that doesn't exist would never run.
        for rule in &rules.rules {
            for p in &rule.profiles {
                if Profile::from_name(p).is_none() {
                    let e = crate::error::Error::new(
                        crate::error::ErrorKind::Load,
                        &rule.source,
                        format!("`profiles`: `{p}` is not a profile (generic, eks, aks or gke)"),
                    );
                    return Err((rules, e.into()));
                }
            }
        }
        config.apply_selection(&rules);
        let settings = config.settings();
        let images = registry_settings(&config.images, config.path.as_deref())
            .map(|s| std::sync::Arc::new(crate::registry::Registry::new(s)));
        Ok(Policy {
            images,
            active: crate::engine::active_rules(&rules, &settings),
            profile: config.cluster_profile(),
            rules,
            settings,
            config,
            catalog,
            today: jiff::Zoned::now().date(),
        })
    }

    /// The rules back, for a policy of another config (rule sets are compiled, not cloned).
    pub fn into_rules(self) -> RuleSet {
        self.rules
    }
}

/// Where the rules and the cluster profile come from (`lint`, `serve`, `fix`, `mutate`): what the
/// command line chose, as plain values.
#[derive(Debug, Clone, Default)]
pub struct PolicySource {
    /// The config file; `None` looks for `winguard.yaml` (or `.winguard.yaml`) from the working
    /// directory up to the repository's top level (`lint` looks from each input).
    pub config: Option<PathBuf>,
    /// Kubernetes version of the target cluster (overrides `kubernetesVersion`).
    pub kube_version: Option<String>,
    /// Cluster profile (overrides `profile`).
    pub profile: Option<Profile>,
    /// Directories of more rule files (`*.yaml`), beside the embedded ones.
    pub rule_dirs: Vec<PathBuf>,
    /// `--select` (replaces the config's `select`).
    pub select: Option<Vec<String>>,
    /// `--extend-select` (adds to the config's `extendSelect`).
    pub extend_select: Vec<String>,
    /// `--ignore` (replaces the config's `ignore`).
    pub ignore: Option<Vec<String>>,
    /// `--nodes`: the cluster's nodes (`kubectl get nodes -o json`), whose Windows builds and
    /// taints replace the config's.
    pub nodes: Option<PathBuf>,
    /// `--resolve-images`: read images' platforms from their registries.
    pub resolve_images: bool,
    /// `--offline`: read images' platforms only from the cache.
    pub offline: bool,
}

impl PolicySource {
    /// The config file: the one given, else `winguard.yaml`/`.winguard.yaml` found walking up
    /// from the working directory; `None` means the defaults.
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
        self.load_with(load_rule_set(&self.rule_dirs)?, config_path)
    }

    /// [`PolicySource::load`] with rules already loaded (from [`load_rule_set`] of
    /// `rule_dirs`), so several configs share one compilation.
    pub fn load_with(
        &self,
        rules: RuleSet,
        config_path: Option<&std::path::Path>,
    ) -> Result<Policy, crate::error::Errors> {
        let mut config = match config_path {
            Some(p) => {
                let names: Vec<&str> = rules.rules.iter().map(|r| r.name.as_str()).collect();
                crate::config::Config::load(p, &names)?
            }
            None => crate::config::Config::default(),
        };
        apply_overrides(&mut config, self.kube_version.as_deref(), self.profile)?;
        if let Some(path) = &self.nodes {
            let file = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|e| {
                crate::error::Error::new(
                    crate::error::ErrorKind::Load,
                    &file,
                    format!("cannot read nodes file: {e}"),
                )
            })?;
            let nodes = crate::windows::nodes::read_nodes(&text, &file)?;
            config.apply_nodes(&nodes, &file)?;
        }
        // Rule names on the command line must be rules too (said as the flag, not the file).
        let names = || rules.rules.iter().map(|r| r.name.as_str());
        let flags = [
            ("--select", self.select.clone().unwrap_or_default()),
            ("--extend-select", self.extend_select.clone()),
            ("--ignore", self.ignore.clone().unwrap_or_default()),
        ];
        let mut unknown = Vec::new();
        for (flag, list) in flags {
            for name in list.iter().filter(|n| rules.get(n).is_none()) {
                let hint = crate::error::did_you_mean(name, names());
                unknown.push(crate::error::Error::new(
                    crate::error::ErrorKind::Load,
                    flag,
                    format!("no rule named `{name}`{hint}"),
                ));
            }
        }
        if !unknown.is_empty() {
            return Err(crate::error::Errors(unknown));
        }
        if let Some(select) = &self.select {
            config.select = Some(select.clone());
        }
        if let Some(ignore) = &self.ignore {
            config.ignore = ignore.clone();
        }
        config.images.resolve |= self.resolve_images;
        config.images.offline |= self.offline;
        config
            .extend_select
            .extend(self.extend_select.iter().cloned());
        Policy::new(rules, config)
    }
}

/// The embedded rules plus those in `rule_dirs`, each of which must fire on its own `docs.bad`
/// example; every problem is in the error, one a line.
pub fn load_rule_set(rule_dirs: &[PathBuf]) -> Result<RuleSet, crate::error::Errors> {
    if rule_dirs.is_empty() {
        return Ok(builtin_rules()?);
    }
    rule_tests::load_checked(rule_dirs)
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

/// How the run reads images' platforms, if it reads any: registries when resolving (or
/// the cache, offline), and the platforms the config (`file`) states in any case.
fn registry_settings(
    images: &crate::config::ImagesConfig,
    file: Option<&std::path::Path>,
) -> Option<crate::registry::Settings> {
    let read_registries = images.resolve || images.offline;
    if !read_registries && images.platforms.is_empty() {
        return None;
    }
    let file = file.map_or_else(|| "the config".to_string(), |f| f.display().to_string());
    let stated = images
        .platforms
        .iter()
        .map(|(image, platforms)| {
            let platforms = crate::windows::platforms::ImagePlatforms {
                digest: String::new(),
                platforms: platforms
                    .iter()
                    .map(|p| crate::windows::platforms::Platform {
                        // As Kubernetes and the registries write it (`Windows` is `windows`).
                        os: p.os.to_lowercase(),
                        os_version: p.os_version.clone(),
                        architecture: p.architecture.clone(),
                        variant: None,
                    })
                    .collect(),
                stated_in: Some(file.clone()),
            };
            (image.clone(), std::sync::Arc::new(platforms))
        })
        .collect();
    Some(crate::registry::Settings {
        read_registries,
        offline: images.offline,
        insecure_registries: images.insecure_registries.clone(),
        tag_ttl: images.tag_ttl_parsed,
        stated,
    })
}
