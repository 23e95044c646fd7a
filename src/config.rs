//! `winguard.yaml`: the cluster profile the rules are evaluated against (RULES.md §3).
//!
//! Every key has a default, so an empty or missing file is a valid config. The same file drives
//! `winguard lint` and the webhook. Unknown keys and bad values are errors naming file:line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::json;
use crate::value::Value;
use regex::Regex;
use serde::{Deserialize, Deserializer};

use crate::error::{LoadError, parse_typed};

/// The file name looked for, walking up from the working directory.
pub const CONFIG_FILE_NAME: &str = "winguard.yaml";
/// The Kubernetes version assumed when none is configured.
pub const DEFAULT_KUBERNETES_VERSION: &str = "1.34";

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Config {
    /// `major.minor` of the target cluster; gates version-dependent rules.
    #[serde(deserialize_with = "version_string")]
    pub kubernetes_version: String,
    pub profile: Profile,
    /// Whether the cluster has both Linux and Windows nodes.
    pub mixed_cluster: bool,
    pub windows: WindowsConfig,
    pub eks: EksConfig,
    /// Severity overrides per rule.
    pub rules: BTreeMap<String, Level>,
    pub exemptions: Vec<Exemption>,
    /// How `winguard serve` answers admission reviews (the CLI ignores it).
    pub webhook: WebhookConfig,
    /// Where this config came from (for messages); `None` for the defaults.
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kubernetes_version: DEFAULT_KUBERNETES_VERSION.to_string(),
            profile: Profile::Generic,
            mixed_cluster: true,
            windows: WindowsConfig::default(),
            eks: EksConfig::default(),
            rules: BTreeMap::new(),
            exemptions: Vec::new(),
            webhook: WebhookConfig::default(),
            path: None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Generic,
    Eks,
    Aks,
    Gke,
}

impl Profile {
    pub fn as_str(self) -> &'static str {
        match self {
            Profile::Generic => "generic",
            Profile::Eks => "eks",
            Profile::Aks => "aks",
            Profile::Gke => "gke",
        }
    }
}

/// A rule's configured level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Off,
    Info,
    Warning,
    Error,
}

impl<'de> Deserialize<'de> for Level {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // YAML 1.1 (which Kubernetes' YAML follows) reads a bare `off` as false.
        match Value::deserialize(d)? {
            Value::Bool(false) => Ok(Level::Off),
            Value::String(s) => match s.as_str() {
                "off" => Ok(Level::Off),
                "info" => Ok(Level::Info),
                "warning" => Ok(Level::Warning),
                "error" => Ok(Level::Error),
                other => Err(serde::de::Error::custom(format!(
                    "`{other}` is not a level: use off, info, warning or error"
                ))),
            },
            other => Err(serde::de::Error::custom(format!(
                "`{other}` is not a level: use off, info, warning or error"
            ))),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct WindowsConfig {
    /// Windows builds of the cluster's nodes (`17763`, `"10.0.20348"`, `ltsc2022`); empty = unknown.
    #[serde(rename = "nodeBuilds")]
    pub node_builds_raw: Vec<Value>,
    #[serde(skip)]
    pub node_builds: Vec<u64>,
    /// Taints on Windows nodes: `key=value:Effect`, or `{key, value, effect}`.
    #[serde(deserialize_with = "taints")]
    pub taints: Vec<Value>,
    /// RuntimeClasses known to schedule onto Windows nodes.
    pub runtime_classes: Vec<RuntimeClassConfig>,
    pub image_patterns: Patterns,
    pub linux_image_patterns: Patterns,
    pub iis_image_patterns: Patterns,
    /// IIS site root: config mounted outside it must be copied in.
    pub site_root: String,
    /// Whether kube-proxy runs with DSR; unset = on from Kubernetes 1.33 (WinDSR beta, default on).
    pub dsr: Option<bool>,
    /// Overrides the load-balancer backend limit (default 1024 with DSR, else 64).
    pub lb_backend_limit: Option<u64>,
}

impl Default for WindowsConfig {
    fn default() -> Self {
        WindowsConfig {
            node_builds_raw: Vec::new(),
            node_builds: Vec::new(),
            taints: vec![json!({"key": "os", "value": "windows", "effect": "NoSchedule"})],
            runtime_classes: Vec::new(),
            image_patterns: Patterns::default(),
            linux_image_patterns: Patterns::default(),
            iis_image_patterns: Patterns::default(),
            site_root: r"C:\inetpub\wwwroot".to_string(),
            dsr: None,
            lb_backend_limit: None,
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuntimeClassConfig {
    pub name: String,
    /// The `node.kubernetes.io/windows-build` its scheduling selects, if any.
    pub build: Option<String>,
    #[serde(default, deserialize_with = "taints")]
    pub tolerations: Vec<Value>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct EksConfig {
    /// The cluster still runs the legacy VPC admission webhook that only reads the beta OS label.
    pub legacy_webhook: bool,
    /// What `eks-vpc-ip-resource-missing`'s fix adds.
    pub fix: EksFix,
}

impl Default for EksConfig {
    fn default() -> Self {
        EksConfig {
            legacy_webhook: false,
            fix: EksFix::NodeSelector,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum EksFix {
    NodeSelector,
    Resource,
}

/// The admission webhook's policy: what it denies, and where it does not look.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct WebhookConfig {
    /// `enforce` denies findings at or above `denyOn`; `audit` never denies and only warns.
    pub enforcement: Enforcement,
    /// The lowest severity that is denied (lower ones become warnings).
    pub deny_on: crate::rules::Severity,
    /// Namespaces whose objects are admitted untouched (winguard's own, so it can always be
    /// repaired, and kube-system's, which cluster add-ons own).
    pub exempt_namespaces: Vec<String>,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig {
            enforcement: Enforcement::Enforce,
            deny_on: crate::rules::Severity::Error,
            exempt_namespaces: vec!["kube-system".to_string(), "winguard".to_string()],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Enforcement {
    Enforce,
    Audit,
}

/// An out-of-band exemption (for charts that can't be annotated).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Exemption {
    pub rule: String,
    pub namespace: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    #[serde(deserialize_with = "non_empty")]
    pub reason: String,
    /// `YYYY-MM-DD`: the exemption stops applying after this day.
    pub expires: Option<jiff::civil::Date>,
}

/// Compiled regexes from the config.
#[derive(Debug, Clone, Default)]
pub struct Patterns(pub Vec<Regex>);

impl<'de> Deserialize<'de> for Patterns {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Vec::<String>::deserialize(d)?;
        raw.iter()
            .map(|p| {
                Regex::new(p)
                    .map_err(|e| serde::de::Error::custom(format!("invalid regex `{p}`: {e}")))
            })
            .collect::<Result<_, _>>()
            .map(Patterns)
    }
}

/// A Kubernetes version as the config and `--kube-version` take it: `MAJOR.MINOR[.PATCH]`,
/// with an optional `v`, and after a patch the pre-release or build suffix `kubectl version`
/// prints (`v1.31.2-eks-7f9249a`). Returned without the `v`. Anything else (`1.3x`, `1`,
/// `1.31.x`) is refused: read leniently it would silently turn version-gated rules off.
pub fn parse_kubernetes_version(text: &str) -> Result<String, String> {
    static VERSION: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(
            r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]+)?)?$",
        )
        .expect("valid")
    });
    let bare = text.trim();
    if VERSION.is_match(bare) {
        Ok(bare.trim_start_matches('v').to_string())
    } else {
        Err(format!(
            "`{text}` is not a Kubernetes version: write MAJOR.MINOR[.PATCH], like \"1.31\" or \"v1.31.2\""
        ))
    }
}

fn version_string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    match Value::deserialize(d)? {
        Value::String(s) => parse_kubernetes_version(&s).map_err(serde::de::Error::custom),
        other => Err(serde::de::Error::custom(format!(
            "write the version as a quoted string like \"1.30\" (YAML reads {other} as a number)"
        ))),
    }
}

fn non_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    let s = String::deserialize(d)?;
    if s.trim().is_empty() {
        return Err(serde::de::Error::custom("a reason is required"));
    }
    Ok(s)
}

/// Parses a taint: `key=value:Effect`, `key:Effect`, or an object.
pub fn parse_taint(text: &str) -> Result<Value, String> {
    let (kv, effect) = text
        .rsplit_once(':')
        .ok_or_else(|| format!("taint `{text}` has no effect (write `key=value:NoSchedule`)"))?;
    if !matches!(effect, "NoSchedule" | "PreferNoSchedule" | "NoExecute") {
        return Err(format!(
            "taint `{text}`: effect must be NoSchedule, PreferNoSchedule or NoExecute"
        ));
    }
    let (key, value) = kv.split_once('=').unwrap_or((kv, ""));
    Ok(json!({"key": key, "value": value, "effect": effect}))
}

fn taints<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    let raw = Vec::<Value>::deserialize(d)?;
    raw.into_iter()
        .map(|v| match v {
            Value::String(s) => parse_taint(&s).map_err(serde::de::Error::custom),
            Value::Object(m) => {
                for k in m.keys() {
                    if !matches!(k.as_str(), "key" | "value" | "effect" | "operator") {
                        return Err(serde::de::Error::custom(format!(
                            "unknown taint field `{k}`"
                        )));
                    }
                }
                Ok(Value::Object(m))
            }
            other => Err(serde::de::Error::custom(format!(
                "a taint must be a string or a map, not {other}"
            ))),
        })
        .collect()
}

impl Config {
    /// Loads a config file. Node builds are resolved against the catalog later ([`Config::resolve`]).
    pub fn load(path: &Path) -> Result<Config, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|e| LoadError {
            file: path.display().to_string(),
            line: None,
            column: None,
            message: format!("cannot read config: {e}"),
        })?;
        Self::parse(&text, &path.display().to_string()).map(|mut c| {
            c.path = Some(path.to_path_buf());
            c
        })
    }

    /// Parses config text; `name` names it in errors.
    pub fn parse(text: &str, name: &str) -> Result<Config, LoadError> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        parse_typed(text, name)
    }

    /// Finds `winguard.yaml` in `dir` or the nearest parent.
    pub fn discover(dir: &Path) -> Option<PathBuf> {
        dir.ancestors()
            .map(|d| d.join(CONFIG_FILE_NAME))
            .find(|p| p.is_file())
    }

    /// Resolves node builds against the catalog (`ltsc2022` → 20348).
    pub fn resolve(&mut self, catalog: &crate::model::Catalog) -> Result<(), String> {
        self.windows.node_builds = self
            .windows
            .node_builds_raw
            .iter()
            .map(|v| {
                catalog
                    .parse_build(v)
                    .ok_or_else(|| format!("windows.nodeBuilds: `{v}` is not a Windows build (write 17763, \"10.0.17763\" or ltsc2019)"))
            })
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    /// Whether kube-proxy's DSR is on: as configured (and only possible from 1.19), else by
    /// default from 1.33 where WinDSR is beta and on by default.
    pub fn dsr(&self) -> bool {
        let v =
            crate::engine::expr::parse_version(&json!(self.kubernetes_version)).unwrap_or((1, 0));
        match self.windows.dsr {
            Some(on) => on && v >= (1, 19),
            None => v >= (1, 33),
        }
    }

    /// The config as rule expressions see it (`config.…`), with derived values resolved.
    pub fn to_expr_value(&self) -> Value {
        let dsr = self.dsr();
        json!({
            "kubernetesVersion": self.kubernetes_version,
            "profile": self.profile.as_str(),
            "mixedCluster": self.mixed_cluster,
            "windows": {
                "nodeBuilds": self.windows.node_builds,
                "taints": self.windows.taints,
                "siteRoot": self.windows.site_root,
                "dsr": dsr,
                "lbBackendLimit": self.windows.lb_backend_limit.unwrap_or(if dsr { 1024 } else { 64 }),
                "runtimeClasses": self.windows.runtime_classes.iter().map(|r| r.name.clone()).collect::<Vec<_>>(),
            },
            "eks": {
                "legacyWebhook": self.eks.legacy_webhook,
                "fix": match self.eks.fix { EksFix::NodeSelector => "nodeSelector", EksFix::Resource => "resource" },
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_name_file_and_line() {
        let err =
            Config::parse("profile: eks\nwindows:\n  nodeBuild: [17763]\n", "w.yaml").unwrap_err();
        assert_eq!((err.line, err.file.as_str()), (Some(3), "w.yaml"));
        assert!(
            err.message.contains("unknown field `nodeBuild`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn bad_values_are_errors() {
        let err = Config::parse("kubernetesVersion: 1.30\n", "w.yaml").unwrap_err();
        assert!(err.message.contains("quoted string"), "{}", err.message);
        let err = Config::parse("windows:\n  taints: ['os=windows']\n", "w.yaml").unwrap_err();
        assert!(err.message.contains("no effect"), "{}", err.message);
        let err = Config::parse("exemptions:\n- rule: x\n  reason: ''\n", "w.yaml").unwrap_err();
        assert!(
            err.message.contains("reason is required"),
            "{}",
            err.message
        );
        assert_eq!(err.line, Some(3));
    }

    #[test]
    fn versions_are_major_minor_patch() {
        for good in ["1.31", "v1.31", "1.31.2", "v1.31.2-eks-7f9249a", "1.0"] {
            assert!(parse_kubernetes_version(good).is_ok(), "{good}");
        }
        for bad in [
            "1.3x", "1", "1.31.x", "v", "", "1.31-eks", "01.31", "1.31.2.4", "1..2",
        ] {
            assert!(parse_kubernetes_version(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_kubernetes_version("v1.31.2").unwrap(), "1.31.2");
        let err =
            Config::parse("profile: eks\nkubernetesVersion: \"1.3x\"\n", "w.yaml").unwrap_err();
        assert_eq!(err.line, Some(2), "{err}");
        assert!(err.message.contains("MAJOR.MINOR"), "{err}");
    }

    #[test]
    fn dsr_defaults_by_version() {
        let mut c = Config {
            kubernetes_version: "1.32".into(),
            ..Config::default()
        };
        assert!(!c.dsr());
        c.kubernetes_version = "1.33".into();
        assert!(c.dsr());
        c.windows.dsr = Some(true);
        c.kubernetes_version = "1.18".into();
        assert!(!c.dsr());
    }
}
