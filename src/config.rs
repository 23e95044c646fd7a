//! `winguard.yaml`: the cluster profile the rules are evaluated against (RULES.md §3).
//!
//! Every key has a default, so an empty or missing file is a valid config. The same file drives
//! `winguard lint` and the webhook. Unknown keys and bad values are errors naming file:line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::json;
use crate::value::Value;
use regex::Regex;

use crate::windows::{ClusterProfile, ImagePatterns, WindowsRuntimeClass, gate_on};
use serde::{Deserialize, Deserializer};

use crate::error::{Error, ErrorKind, Errors};
use crate::manifest::typed::parse_checked;
use schemars::JsonSchema;

/// The file name looked for, walking up from each input.
pub const CONFIG_FILE_NAME: &str = "winguard.yaml";
/// The same, hidden (as `.ruff.toml` beside `ruff.toml`); `winguard.yaml` wins in one directory.
pub const HIDDEN_CONFIG_FILE_NAME: &str = ".winguard.yaml";
/// The Kubernetes version assumed when none is configured.
pub const DEFAULT_KUBERNETES_VERSION: &str = "1.34";

/// `winguard.yaml`: the cluster the rules are evaluated for. Every key is optional.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
#[schemars(title = "winguard.yaml")]
pub struct Config {
    /// Kubernetes version of the target cluster (`MAJOR.MINOR[.PATCH]`, quoted); gates
    /// version-dependent rules.
    #[serde(deserialize_with = "version_string")]
    #[schemars(schema_with = "schema::kubernetes_version")]
    pub kubernetes_version: String,
    pub profile: Profile,
    /// Whether the cluster has both Linux and Windows nodes.
    pub mixed_cluster: bool,
    pub windows: WindowsConfig,
    pub eks: EksConfig,
    /// Kubernetes feature gates that differ from the version's defaults (`WinDSR: true`,
    /// `PodLevelResources: false`); empty = the version's defaults. Gates decide which fields
    /// the API server drops before validating and which it rejects.
    pub feature_gates: BTreeMap<String, bool>,
    /// Severity per rule: off, info, warning or error.
    pub rules: BTreeMap<String, Level>,
    /// Only these rules run (ruff's `select`; opt-in ones included); unset: every rule that is
    /// on by default. `--select` replaces it.
    pub select: Option<Vec<String>>,
    /// Rules added to `select` (or to the default set): opt-in rules turn on at their default
    /// severity. `--extend-select` adds to it.
    pub extend_select: Vec<String>,
    /// Rules that never run, whatever selects them. `--ignore` replaces it.
    pub ignore: Vec<String>,
    /// Paths `lint` leaves out, as gitignore-like globs relative to this file's directory
    /// (`vendor`, `charts/*/ci/**`). `--exclude` replaces it, `--extend-exclude` adds to it.
    pub exclude: Vec<String>,
    /// Findings accepted without annotating the object (for charts you can't change): each
    /// names a rule, globs of the objects, a reason and an optional end date.
    pub exemptions: Vec<Exemption>,
    /// How `winguard serve` answers admission reviews (the CLI ignores it).
    pub webhook: WebhookConfig,
    pub kustomize: KustomizeConfig,
    pub images: ImagesConfig,
    /// Where this config came from (for messages); `None` for the defaults.
    #[serde(skip)]
    #[schemars(skip)]
    pub path: Option<PathBuf>,
    /// The file as parsed, with positions: problems found after loading (a rule name no rule
    /// has) are reported at their line too.
    #[serde(skip)]
    #[schemars(skip)]
    pub parsed: Option<std::sync::Arc<crate::value::yaml::ParsedDoc>>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kubernetes_version: DEFAULT_KUBERNETES_VERSION.to_string(),
            profile: Profile::Generic,
            mixed_cluster: true,
            windows: WindowsConfig::default(),
            eks: EksConfig::default(),
            feature_gates: BTreeMap::new(),
            rules: BTreeMap::new(),
            select: None,
            extend_select: Vec::new(),
            ignore: Vec::new(),
            exclude: Vec::new(),
            exemptions: Vec::new(),
            webhook: WebhookConfig::default(),
            kustomize: KustomizeConfig::default(),
            images: ImagesConfig::default(),
            path: None,
            parsed: None,
        }
    }
}

/// The cloud the cluster runs on (profile-specific rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Generic,
    Eks,
    Aks,
    Gke,
}

impl Profile {
    pub const ALL: [Profile; 4] = [Profile::Generic, Profile::Eks, Profile::Aks, Profile::Gke];

    /// The profile a config or flag names (`generic`, `eks`, `aks`, `gke`).
    pub fn from_name(name: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.as_str() == name)
    }

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
#[derive(Debug, Clone, Copy, PartialEq, Eq, JsonSchema)]
#[schemars(schema_with = "schema::level")]
pub enum Level {
    Off,
    Info,
    Warning,
    Error,
}

impl Level {
    /// The severity findings get at this level; `None` when the rule is off.
    pub fn severity(self) -> Option<crate::rules::Severity> {
        use crate::rules::Severity;
        match self {
            Level::Off => None,
            Level::Info => Some(Severity::Info),
            Level::Warning => Some(Severity::Warning),
            Level::Error => Some(Severity::Error),
        }
    }
}

impl From<crate::rules::Severity> for Level {
    fn from(severity: crate::rules::Severity) -> Self {
        use crate::rules::Severity;
        match severity {
            Severity::Info => Level::Info,
            Severity::Warning => Level::Warning,
            Severity::Error => Level::Error,
        }
    }
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

/// The cluster's Windows nodes and images.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct WindowsConfig {
    /// Windows builds of the cluster's nodes (`17763`, `"10.0.20348"`, `ltsc2022`); empty = unknown.
    #[serde(rename = "nodeBuilds")]
    #[schemars(schema_with = "schema::node_builds")]
    pub node_builds_raw: Vec<Value>,
    #[serde(skip)]
    #[schemars(skip)]
    pub node_builds: Vec<u64>,
    /// Taints on Windows nodes: `key=value:Effect`, or `{key, value, effect}`; unset = the
    /// profile's default (generic `os=windows:NoSchedule`, gke
    /// `node.kubernetes.io/os=windows:NoSchedule`, eks and aks none).
    #[serde(deserialize_with = "optional_taints")]
    #[schemars(schema_with = "schema::optional_taints")]
    pub taints: Option<Vec<Value>>,
    /// RuntimeClasses defined outside the linted files that schedule onto Windows nodes.
    pub runtime_classes: Vec<RuntimeClassConfig>,
    /// Regexes: more images to treat as Windows.
    pub image_patterns: Patterns,
    /// Regexes: more images to treat as Linux-only.
    pub linux_image_patterns: Patterns,
    /// Regexes: more images whose entrypoint is `ServiceMonitor.exe w3svc`.
    pub iis_image_patterns: Patterns,
    /// IIS site root: config mounted outside it must be copied in.
    pub site_root: String,
    /// Whether kube-proxy runs with `--enable-dsr=true`; it is off unless set, in every version
    /// (the WinDSR gate, on by default from 1.33, only permits it).
    pub dsr: bool,
    /// Overrides the load-balancer backend limit (default 1024 with DSR, else 64).
    pub lb_backend_limit: Option<u64>,
    /// The nodes file (`--nodes`) the builds and taints were read from, when they were.
    #[serde(skip)]
    #[schemars(skip)]
    pub nodes_file: Option<String>,
    /// Its nodes.
    #[serde(skip)]
    #[schemars(skip)]
    pub nodes: std::sync::Arc<Vec<crate::windows::nodes::Node>>,
}

impl Default for WindowsConfig {
    fn default() -> Self {
        WindowsConfig {
            node_builds_raw: Vec::new(),
            node_builds: Vec::new(),
            taints: None,
            runtime_classes: Vec::new(),
            image_patterns: Patterns::default(),
            linux_image_patterns: Patterns::default(),
            iis_image_patterns: Patterns::default(),
            site_root: r"C:\inetpub\wwwroot".to_string(),
            dsr: false,
            lb_backend_limit: None,
            nodes_file: None,
            nodes: Default::default(),
        }
    }
}

/// A Windows RuntimeClass.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RuntimeClassConfig {
    /// The RuntimeClass's name, as pods give it in `runtimeClassName`.
    pub name: String,
    /// The `node.kubernetes.io/windows-build` its scheduling selects, if any.
    pub build: Option<String>,
    /// The tolerations its scheduling adds: `key=value:Effect`, or `{key, value, effect}`.
    #[serde(default, deserialize_with = "taints")]
    #[schemars(schema_with = "schema::taints")]
    pub tolerations: Vec<Value>,
}

/// Amazon EKS.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
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

/// What `eks-vpc-ip-resource-missing`'s fix adds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum EksFix {
    NodeSelector,
    Resource,
}

/// The admission webhook's policy: what it denies, and where it does not look.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
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

/// How `winguard lint` builds kustomize overlays.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct KustomizeConfig {
    /// Let kustomize fetch what overlays name remotely: http(s) URLs, git repositories, Helm
    /// chart repositories (as `--kustomize-allow-remote` does). Off, such an overlay is an
    /// error and kustomize is not run.
    pub allow_remote: bool,
}

/// How images' platforms are read from their registries (`--resolve-images`).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct ImagesConfig {
    /// Read each image's platforms (OS, Windows build, architecture) from its registry, as
    /// `--resolve-images` does.
    pub resolve: bool,
    /// Registries (`host[:port]`) reached over plain HTTP instead of HTTPS, as containerd's
    /// insecure registries.
    pub insecure_registries: Vec<String>,
    /// How long a tag's digest read from a registry is used before the registry is asked
    /// again (`24h`, `30m`, `0s`); a digest's platforms are kept for good.
    pub tag_ttl: String,
    /// Images' platforms stated here rather than read (images of registries CI can't reach):
    /// image reference → its platforms, each `{os, architecture, osVersion}`. They hold
    /// without `--resolve-images` too.
    pub platforms: BTreeMap<String, Vec<StatedPlatform>>,
    #[serde(skip)]
    #[schemars(skip)]
    pub tag_ttl_parsed: std::time::Duration,
    /// `--offline`: only the cache is read (a flag, not a config key).
    #[serde(skip)]
    #[schemars(skip)]
    pub offline: bool,
}

impl Default for ImagesConfig {
    fn default() -> Self {
        ImagesConfig {
            resolve: false,
            insecure_registries: Vec::new(),
            tag_ttl: "24h".to_string(),
            platforms: BTreeMap::new(),
            tag_ttl_parsed: std::time::Duration::from_secs(24 * 3600),
            offline: false,
        }
    }
}

/// A platform of an image, as `images.platforms` states it.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct StatedPlatform {
    /// `windows` or `linux`.
    pub os: String,
    /// `amd64`, `arm64`, …
    pub architecture: String,
    /// For Windows, the build the image is for (`10.0.20348` or `10.0.20348.2700`).
    #[serde(default)]
    pub os_version: Option<String>,
}

/// `enforce` denies; `audit` only warns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Enforcement {
    Enforce,
    Audit,
}

/// An out-of-band exemption (for charts that can't be annotated).
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Exemption {
    /// The rule exempted.
    pub rule: String,
    /// A glob of the namespaces exempted.
    pub namespace: Option<String>,
    /// A glob of the kinds exempted.
    pub kind: Option<String>,
    /// A glob of the object names exempted.
    pub name: Option<String>,
    /// Why the finding is accepted (required).
    #[serde(deserialize_with = "non_empty")]
    #[schemars(length(min = 1), extend("x-expected" = "a reason"))]
    pub reason: String,
    /// `YYYY-MM-DD`: the exemption stops applying after this day.
    #[serde(default)]
    #[schemars(schema_with = "schema::date")]
    pub expires: Option<jiff::civil::Date>,
}

/// Compiled regexes from the config.
#[derive(Debug, Clone, Default, JsonSchema)]
#[schemars(schema_with = "schema::patterns")]
pub struct Patterns(pub Vec<Regex>);

/// The markdown reference written from the schema.
mod reference {
    use serde_json::Value;

    use crate::manifest::typed::resolve;

    /// A schema's own key, else its definition's.
    fn field<'s>(root: &'s Value, schema: &'s Value, key: &str) -> Option<&'s Value> {
        schema.get(key).or_else(|| resolve(root, schema).get(key))
    }

    pub(super) fn rows(root: &Value, schema: &Value, prefix: &str, out: &mut String) {
        let Some(properties) = resolve(root, schema)
            .get("properties")
            .and_then(Value::as_object)
        else {
            return;
        };
        for (key, property) in properties {
            let path = format!("{prefix}{key}");
            let target = resolve(root, property);
            let section = target.get("properties").is_some();
            let default = match field(root, property, "default") {
                Some(d) => format!("`{d}`"),
                None if section => String::new(),
                None => "—".into(),
            };
            let meaning = field(root, property, "description")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .replace('|', "\\|");
            out.push_str(&format!(
                "| `{path}` | {} | {default} | {meaning} |\n",
                type_text(root, property).replace('|', "\\|")
            ));
            if section {
                rows(root, target, &format!("{path}."), out);
            } else if let Some(items) = target.get("items")
                && resolve(root, items).get("properties").is_some()
            {
                rows(root, items, &format!("{path}[]."), out);
            }
        }
    }

    /// What a value of the schema may be, in a few words.
    fn type_text(root: &Value, schema: &Value) -> String {
        let target = resolve(root, schema);
        if let Some(values) = target.get("enum").and_then(Value::as_array) {
            let values: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
            return values.join(" | ");
        }
        for combinator in ["oneOf", "anyOf"] {
            if let Some(alternatives) = target.get(combinator).and_then(Value::as_array) {
                let mut texts: Vec<String> = Vec::new();
                for alternative in alternatives {
                    let text = type_text(root, alternative);
                    if !texts.contains(&text) {
                        texts.push(text);
                    }
                }
                return texts.join(" or ");
            }
        }
        let types: Vec<&str> = match target.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let texts: Vec<String> = types
            .iter()
            .map(|t| match *t {
                "array" => match target.get("items") {
                    Some(items) => format!("list of {}", type_text(root, items)),
                    None => "list".into(),
                },
                "object" if target.get("properties").is_none() => {
                    match target.get("additionalProperties") {
                        Some(v @ Value::Object(_)) => format!("map of {}", type_text(root, v)),
                        _ => "map".into(),
                    }
                }
                other => other.into(),
            })
            .collect();
        if texts.is_empty() {
            "any".into()
        } else {
            texts.join(" or ")
        }
    }
}

/// The schemas of the values read by hand-written deserializers: what they accept, so the
/// published schema and the loader agree (a test validates both against the same files).
mod schema {
    use schemars::{Schema, SchemaGenerator, json_schema};

    /// `parse_kubernetes_version`'s grammar.
    pub(super) fn kubernetes_version(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": super::VERSION_PATTERN,
            "default": super::DEFAULT_KUBERNETES_VERSION,
            "x-expected": "a Kubernetes version: write MAJOR.MINOR[.PATCH] as a quoted string, like \"1.31\" or \"v1.31.2\" (YAML reads 1.30 unquoted as the number 1.3)",
        })
    }

    pub(super) fn level(_: &mut SchemaGenerator) -> Schema {
        // YAML 1.1 reads a bare `off` as false, which means off.
        json_schema!({ "enum": ["off", "info", "warning", "error", false] })
    }

    pub(super) fn node_builds(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "items": { "type": ["integer", "string"] },
            "default": [],
        })
    }

    pub(super) fn taints(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "array",
            "items": {
                "x-expected": "a taint: `key=value:Effect` (Effect NoSchedule, PreferNoSchedule or NoExecute) or {key, value, effect}",
                "anyOf": [
                    {
                        "type": "string",
                        "pattern": "^[^:]*:(NoSchedule|PreferNoSchedule|NoExecute)$",
                    },
                    {
                        "type": "object",
                        "properties": {
                            "key": { "type": "string" },
                            "value": { "type": "string" },
                            "effect": { "enum": ["NoSchedule", "PreferNoSchedule", "NoExecute"] },
                            "operator": { "enum": ["Equal", "Exists"] },
                        },
                        "additionalProperties": false,
                    },
                ],
            },
        })
    }

    /// `taints`, or `null` for the profile's default.
    pub(super) fn optional_taints(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = taints(generator);
        schema.insert("type".into(), serde_json::json!(["array", "null"]));
        schema
    }

    pub(super) fn patterns(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "array", "items": { "type": "string", "format": "regex" } })
    }

    pub(super) fn date(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": ["string", "null"], "format": "date" })
    }
}

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

/// [`parse_kubernetes_version`]'s grammar (also the config schema's).
const VERSION_PATTERN: &str =
    r"^v?(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(\.(0|[1-9][0-9]*)([-+][0-9A-Za-z.+-]+)?)?$";

/// A text that is not a Kubernetes version ([`parse_kubernetes_version`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a Kubernetes version: write MAJOR.MINOR[.PATCH], like \"1.31\" or \"v1.31.2\""
)]
pub struct NotAVersion(pub String);

/// A Kubernetes version as the config and `--kube-version` take it: `MAJOR.MINOR[.PATCH]`,
/// with an optional `v`, and after a patch the pre-release or build suffix `kubectl version`
/// prints (`v1.31.2-eks-7f9249a`). Returned without the `v`. Anything else (`1.3x`, `1`,
/// `1.31.x`) is refused: read leniently it would silently turn version-gated rules off.
pub fn parse_kubernetes_version(text: &str) -> Result<String, NotAVersion> {
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
        Err(NotAVersion(text.to_string()))
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
fn parse_taint(text: &str) -> Result<Value, String> {
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

fn optional_taints<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Value>>, D::Error> {
    Option::<Vec<Value>>::deserialize(d)?
        .map(checked_taints)
        .transpose()
        .map_err(serde::de::Error::custom)
}

fn taints<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Value>, D::Error> {
    checked_taints(Vec::<Value>::deserialize(d)?).map_err(serde::de::Error::custom)
}

/// Taints as written (`key=value:Effect` or a map) as `{key, value, effect}` maps.
fn checked_taints(raw: Vec<Value>) -> Result<Vec<Value>, String> {
    raw.into_iter()
        .map(|v| match v {
            Value::String(s) => parse_taint(&s),
            Value::Object(m) => {
                if let Some(k) = m
                    .keys()
                    .find(|k| !matches!(k.as_str(), "key" | "value" | "effect" | "operator"))
                {
                    return Err(format!("unknown taint field `{k}`"));
                }
                Ok(Value::Object(m))
            }
            other => Err(format!("a taint must be a string or a map, not {other}")),
        })
        .collect()
}

impl Config {
    /// Loads a config file. Node builds are resolved against the catalog later ([`Config::resolve`]).
    pub fn load(path: &Path, rule_names: &[&str]) -> Result<Config, Errors> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Errors(vec![Error::new(
                ErrorKind::Load,
                path.display().to_string(),
                format!("cannot read config: {e}"),
            )])
        })?;
        Self::parse_for(&text, &path.display().to_string(), rule_names).map(|mut c| {
            c.path = Some(path.to_path_buf());
            c
        })
    }

    /// Parses config text; `name` names it in errors. Every problem the schema sees is
    /// reported at once, each at its line, with suggestions for misspelt keys and values.
    pub fn parse(text: &str, name: &str) -> Result<Config, Errors> {
        Self::parse_for(text, name, &[])
    }

    /// [`Config::parse`], with the names of the rules loaded beside it checked too (in
    /// `rules:` and `exemptions`), in the same pass.
    pub fn parse_for(text: &str, name: &str, rule_names: &[&str]) -> Result<Config, Errors> {
        if text.trim().is_empty() {
            return Ok(Config::default());
        }
        let schema = Config::json_schema_for(rule_names);
        let mut config: Config = parse_checked(text, name, &schema)?;
        config.parsed = crate::value::yaml::parse_stream(text)
            .0
            .into_iter()
            .next()
            .map(std::sync::Arc::new);
        Ok(config)
    }

    /// A problem at `pointer` in this config, placed at its file:line:col when the config came
    /// from a file.
    pub fn error_at(&self, pointer: &str, message: impl Into<String>) -> Error {
        let file = self
            .path
            .as_ref()
            .map_or_else(|| CONFIG_FILE_NAME.to_string(), |p| p.display().to_string());
        let mut e = Error::new(ErrorKind::Load, &file, message);
        if let Some(doc) = &self.parsed {
            let (line, column) = crate::manifest::typed::position_of(&doc.value, &doc.pos, pointer);
            e.line = Some(line);
            e.column = Some(column);
        }
        e
    }

    /// The JSON Schema of `winguard.yaml` (`winguard config schema`), generated from these
    /// types: editors complete and check the file with it.
    pub fn json_schema() -> serde_json::Value {
        serde_json::Value::from(schemars::schema_for!(Config))
    }

    /// The schema with `rules:` keys and exemptions' `rule` limited to `rule_names` (none
    /// given: any name), so editors complete them and misspellings are caught with the rest.
    pub fn json_schema_for(rule_names: &[&str]) -> serde_json::Value {
        let mut schema = Self::json_schema();
        if rule_names.is_empty() {
            return schema;
        }
        let names = serde_json::json!({
            "enum": rule_names,
            "x-expected": "the name of a rule (`winguard rules` lists them)",
        });
        if let Some(rules) = schema.pointer_mut("/properties/rules") {
            rules["propertyNames"] = names.clone();
        }
        if let Some(rule) = schema.pointer_mut("/$defs/Exemption/properties/rule") {
            *rule = names;
        }
        schema
    }

    /// The configuration reference of docs/configuration.md (between its markers), generated
    /// from the JSON Schema so the reference and the loader can't drift: a row per key, nested
    /// keys dotted (`windows.nodeBuilds`), list items as `[]`.
    pub fn reference_markdown() -> String {
        let schema = Self::json_schema();
        let mut out = String::from("| key | type | default | meaning |\n|---|---|---|---|\n");
        reference::rows(&schema, &schema, "", &mut out);
        out
    }

    /// Finds `winguard.yaml` (or `.winguard.yaml`) in `dir` or the nearest parent, up to the
    /// repository's top level (the directory holding `.git`), as ruff finds its config: the
    /// nearest wins, and a file above the repository is not the repository's.
    pub fn discover(dir: &Path) -> Option<PathBuf> {
        let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        for d in absolute.ancestors() {
            for name in [CONFIG_FILE_NAME, HIDDEN_CONFIG_FILE_NAME] {
                let candidate = d.join(name);
                if candidate.is_file() {
                    return Some(candidate);
                }
            }
            if d.join(".git").exists() {
                return None;
            }
        }
        None
    }

    /// [`Config::discover`] for an input: from its directory (a file's parent; the working
    /// directory for `-`).
    pub fn discover_for(input: &Path) -> Option<PathBuf> {
        let dir = if input.as_os_str() == "-" {
            Path::new(".")
        } else if input.is_dir() {
            input
        } else {
            match input.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            }
        };
        Self::discover(dir)
    }

    /// Resolves node builds against the catalog (`ltsc2022` → 20348).
    /// `parse_build` reads a build as the catalog names them (`ltsc2019` → 17763).
    pub fn resolve(&mut self, parse_build: impl Fn(&Value) -> Option<u64>) -> Result<(), Error> {
        let mut builds = Vec::new();
        for (i, v) in self.windows.node_builds_raw.iter().enumerate() {
            match parse_build(v) {
                Some(b) => builds.push(b),
                None => {
                    return Err(self.error_at(
                        &format!("/windows/nodeBuilds/{i}"),
                        format!("windows.nodeBuilds: `{v}` is not a Windows build (write 17763, \"10.0.17763\" or ltsc2019)"),
                    ));
                }
            }
        }
        self.windows.node_builds = builds;
        let ttl = self
            .images
            .tag_ttl
            .parse::<jiff::SignedDuration>()
            .ok()
            .and_then(|d| std::time::Duration::try_from(d).ok());
        match ttl {
            Some(ttl) => self.images.tag_ttl_parsed = ttl,
            None => {
                return Err(self.error_at(
                    "/images/tagTtl",
                    format!(
                        "images.tagTtl: `{}` is not a duration (write `24h`, `30m` or `0s`)",
                        self.images.tag_ttl
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The cluster's version as `(major, minor)`.
    pub fn version(&self) -> (u64, u64) {
        crate::k8s::parse_version(&self.kubernetes_version).unwrap_or((1, 0))
    }

    /// Whether a feature gate is on (see [`gate_on`]) at the configured version.
    pub fn gate(&self, name: &str, default_on_since: Option<(u64, u64)>) -> bool {
        gate_on(&self.feature_gates, name, default_on_since, self.version())
    }

    /// Takes the Windows nodes' builds and taints from the cluster's nodes (`--nodes`, named
    /// `file`) instead of the config's or the profile's: the builds of every Windows node, and
    /// the taints that keep pods off every one of them (`NoSchedule` and `NoExecute` taints all
    /// of them carry: a pod that tolerates none of those fits no Windows node). A file with no
    /// Windows node is an error: there would be nothing to hold Windows pods to.
    pub fn apply_nodes(
        &mut self,
        nodes: &[crate::windows::nodes::Node],
        file: &str,
    ) -> Result<(), Error> {
        let windows: Vec<&crate::windows::nodes::Node> =
            nodes.iter().filter(|n| n.windows).collect();
        let Some(first) = windows.first() else {
            return Err(Error::new(
                ErrorKind::Load,
                file,
                format!(
                    "no Windows node among its {} nodes (none labelled kubernetes.io/os=windows)",
                    nodes.len()
                ),
            ));
        };
        let mut builds: Vec<u64> = windows.iter().filter_map(|n| n.build).collect();
        builds.sort_unstable();
        builds.dedup();
        let keeps_pods_off = |t: &Value| {
            matches!(
                t.get("effect").and_then(Value::as_str),
                Some("NoSchedule" | "NoExecute")
            )
        };
        let taints = first
            .taints
            .iter()
            .filter(|t| keeps_pods_off(t) && windows.iter().all(|n| n.taints.contains(t)))
            .cloned()
            .collect();
        self.windows.node_builds_raw = builds.into_iter().map(Value::from).collect();
        self.windows.taints = Some(taints);
        self.windows.nodes_file = Some(file.to_string());
        self.windows.nodes = std::sync::Arc::new(nodes.to_vec());
        Ok(())
    }

    /// The taints on the cluster's Windows nodes: as configured, else the profile's default.
    pub fn windows_taints(&self) -> Vec<Value> {
        match (&self.windows.taints, self.profile) {
            (Some(taints), _) => taints.clone(),
            (None, Profile::Generic) => {
                vec![json!({"key": "os", "value": "windows", "effect": "NoSchedule"})]
            }
            (None, Profile::Gke) => vec![
                json!({"key": "node.kubernetes.io/os", "value": "windows", "effect": "NoSchedule"}),
            ],
            (None, Profile::Eks | Profile::Aks) => Vec::new(),
        }
    }

    /// Whether kube-proxy's DSR is on: only when configured (`--enable-dsr=true`), from 1.14,
    /// where the WinDSR gate permits it (on by default from 1.33, locked on from 1.34).
    pub fn dsr(&self) -> bool {
        let v = self.version();
        self.windows.dsr && v >= (1, 14) && (v >= (1, 34) || self.gate("WinDSR", Some((1, 33))))
    }

    /// The cluster as the Windows model reads it.
    pub fn cluster_profile(&self) -> ClusterProfile {
        ClusterProfile {
            version: self.version(),
            feature_gates: self.feature_gates.clone(),
            node_builds: self.windows.node_builds.clone(),
            nodes: self
                .windows
                .nodes_file
                .clone()
                .map(|file| (file, self.windows.nodes.clone())),
            runtime_classes: self
                .windows
                .runtime_classes
                .iter()
                .map(|r| WindowsRuntimeClass {
                    name: r.name.clone(),
                    build: r.build.clone(),
                    tolerations: r.tolerations.clone(),
                })
                .collect(),
        }
    }

    /// The images the user classifies beyond the catalog.
    pub fn image_patterns(&self) -> ImagePatterns {
        ImagePatterns {
            windows: self.windows.image_patterns.0.clone(),
            linux: self.windows.linux_image_patterns.0.clone(),
            iis: self.windows.iis_image_patterns.0.clone(),
        }
    }

    /// Turns `select`, `extendSelect` and `ignore` into rule levels: a rule neither selected
    /// nor added is off, an ignored one too; a rule selected by name with no level in `rules`
    /// runs at its default severity (which turns an opt-in rule on).
    pub fn apply_selection(&mut self, rules: &crate::rules::RuleSet) {
        for rule in &rules.rules {
            let name = &rule.name;
            let named = self.extend_select.contains(name)
                || self.select.as_ref().is_some_and(|s| s.contains(name));
            let selected = named || self.select.is_none();
            if self.ignore.contains(name) || !selected {
                self.rules.insert(name.clone(), Level::Off);
            } else if named && !self.rules.contains_key(name) {
                self.rules
                    .insert(name.clone(), Level::from(rule.default_severity));
            }
        }
    }

    /// What the engine reads of the config: profile, rule levels, exemptions, and the config as
    /// rule expressions see it.
    pub fn settings(&self) -> crate::engine::Settings {
        crate::engine::Settings {
            profile: self.profile.as_str().to_string(),
            levels: self
                .rules
                .iter()
                .map(|(name, level)| (name.clone(), level.severity()))
                .collect(),
            exemptions: self
                .exemptions
                .iter()
                .map(|e| crate::engine::Exemption {
                    rule: e.rule.clone(),
                    namespace: e.namespace.clone(),
                    kind: e.kind.clone(),
                    name: e.name.clone(),
                    expires: e.expires,
                })
                .collect(),
            value: self.to_expr_value(),
        }
    }

    /// The config as rule expressions see it (`config.…`), with derived values resolved.
    pub fn to_expr_value(&self) -> Value {
        let dsr = self.dsr();
        json!({
            "kubernetesVersion": self.kubernetes_version,
            // MAJOR.MINOR, for comparing with `semver(…, true)`: a distribution's pre-release
            // suffix (`1.30.2-eks.1`) would order it before the release it is.
            "kubernetesMinorVersion": format!("{}.{}", self.version().0, self.version().1),
            "featureGates": self.feature_gates,
            "profile": self.profile.as_str(),
            "mixedCluster": self.mixed_cluster,
            "windows": {
                "nodeBuilds": self.windows.node_builds,
                "taints": self.windows_taints(),
                // The generic profile's taint is the upstream docs' recommendation, not a fact of
                // the cluster: rules may weigh a pod that tolerates another platform's taint.
                "taintsAssumed": self.windows.taints.is_none() && self.profile == Profile::Generic,
                // Where the builds and taints come from when they are the cluster's own (`--nodes`).
                "nodesFile": self.windows.nodes_file.clone().unwrap_or_default(),
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
        let err = Config::parse("profile: eks\nwindows:\n  nodeBuild: [17763]\n", "w.yaml")
            .unwrap_err()
            .0
            .remove(0);
        assert_eq!((err.line, err.file.as_str()), (Some(3), "w.yaml"));
        assert!(
            err.message.contains("unknown field `nodeBuild`"),
            "{}",
            err.message
        );
    }

    #[test]
    fn bad_values_are_errors() {
        let err = Config::parse("kubernetesVersion: 1.30\n", "w.yaml")
            .unwrap_err()
            .0
            .remove(0);
        assert!(err.message.contains("quoted string"), "{}", err.message);
        let err = Config::parse("windows:\n  taints: ['os=windows']\n", "w.yaml")
            .unwrap_err()
            .0
            .remove(0);
        assert!(err.message.contains("is not a taint"), "{}", err.message);
        let err = Config::parse("exemptions:\n- rule: x\n  reason: ''\n", "w.yaml")
            .unwrap_err()
            .0
            .remove(0);
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
        let err = Config::parse("profile: eks\nkubernetesVersion: \"1.3x\"\n", "w.yaml")
            .unwrap_err()
            .0
            .remove(0);
        assert_eq!(err.line, Some(2), "{err}");
        assert!(err.message.contains("MAJOR.MINOR"), "{err}");
    }

    #[test]
    fn dsr_only_when_set_and_permitted() {
        let mut c = Config {
            kubernetes_version: "1.33".into(),
            ..Config::default()
        };
        assert!(!c.dsr(), "off unless kube-proxy runs with --enable-dsr");
        c.windows.dsr = true;
        assert!(c.dsr(), "1.33: WinDSR on by default");
        c.kubernetes_version = "1.30".into();
        assert!(!c.dsr(), "1.30: WinDSR alpha, off by default");
        c.feature_gates.insert("WinDSR".into(), true);
        assert!(c.dsr());
        c.kubernetes_version = "1.13".into();
        assert!(!c.dsr(), "no DSR before 1.14");
        c.kubernetes_version = "1.34".into();
        c.feature_gates.insert("WinDSR".into(), false);
        assert!(c.dsr(), "1.34: WinDSR is GA and locked on");
    }

    #[test]
    fn windows_taints_follow_the_profile() {
        let taints = |text: &str| {
            let c = Config::parse(text, "w.yaml").unwrap();
            serde_json::to_string(&c.windows_taints()).unwrap()
        };
        assert!(taints("{}").contains(r#""key":"os""#));
        assert!(taints("profile: gke").contains("node.kubernetes.io/os"));
        assert_eq!(taints("profile: eks"), "[]");
        assert_eq!(taints("profile: aks"), "[]");
        assert!(
            taints("profile: eks\nwindows: {taints: ['sku=Windows:NoSchedule']}").contains("sku")
        );
    }
}
