//! The target-OS model: what a pod spec is (Windows or Linux, and why), which Windows builds it
//! can land on, what its images are, and what its entrypoint commands do.
//!
//! This is the part of winguard no other tool has. It is general — no rule is named here — and
//! table-driven: every Windows fact it uses comes from `catalog/windows.yaml` ([`Catalog`]) or the
//! user's config. Rules read the facts it produces (see `rules/README.md` for the fact reference).

mod command;
mod facts;
mod image;
pub(crate) mod nodes;
pub(crate) mod platforms;

/// The build of a Windows version as nodes and tags write it: `10.0.17763` or
/// `10.0.17763.5329` → 17763.
fn build_of_version(version: &str) -> Option<u64> {
    version
        .strip_prefix("10.0.")?
        .split('.')
        .next()?
        .parse()
        .ok()
}
mod profile;

pub(crate) use profile::{ClusterProfile, ImagePatterns, WindowsRuntimeClass, gate_on};

use std::collections::HashMap;

use crate::value::{Doc, Map, Value};
use regex::Regex;
use serde::Deserialize;

use crate::value::escape_pointer_token;
pub(crate) use command::analyse_command;
pub(crate) use facts::{ContainerFacts, ContainerField, PodFacts, PodField};
pub(crate) use image::{ImageRef, parse_image};

/// Fills an expression registry with what the model gives rules: the `pod` and `container`
/// record types (their facts, typed and documented) and the Windows and Kubernetes functions.
pub(crate) fn register(r: &mut crate::expr::Registry) {
    use crate::expr::{EvalError, Val};
    r.add_record("container", ContainerField::DECLS);
    let pod = r.add_record("pod", PodField::DECLS);
    // Findings that depend on the pod's OS say why the model takes it to be that OS.
    r.set_note(&pod, "os", "osReason");
    r.add(
        "tolerates(list(dyn), dyn) -> bool",
        "whether a list of tolerations tolerates a taint, with Kubernetes' exact matching",
        |_, a| Ok(Val::Bool(tolerates(&a[0].as_json(), &a[1].as_json()))),
    );
    r.add(
        "apiLifecycle(string, string) -> dyn",
        "`apiLifecycle(apiVersion, kind)`: a deprecated built-in API version's `{deprecated, removed, replacement, sameSchema, guide}` (versions as `1.25`; replacement null where there is none; sameSchema: rewriting `apiVersion` keeps the meaning), or null",
        |_, a| {
            let (Some(version), Some(kind)) = (a[0].as_str(), a[1].as_str()) else {
                return Ok(Val::Null);
            };
            let Some(row) = crate::k8s::api_lifecycle::api_lifecycle(version, kind) else {
                return Ok(Val::Null);
            };
            let text = |s: String| Val::Str(std::rc::Rc::new(s));
            Ok(Val::Map(std::rc::Rc::new(vec![
                (Val::Text("deprecated"), text(format!("1.{}", row.deprecated))),
                (Val::Text("removed"), text(format!("1.{}", row.removed))),
                (
                    Val::Text("replacement"),
                    row.replacement.map_or(Val::Null, Val::Text),
                ),
                (Val::Text("sameSchema"), Val::Bool(row.same_schema)),
                (
                    Val::Text("guide"),
                    text(crate::k8s::api_lifecycle::guide_url(row)),
                ),
            ])))
        },
    );
    r.add(
        "pathUnder(string, string) -> bool",
        "Windows path containment: case-insensitive, `\\` and `/` equal, drive-less paths on `C:`",
        |_, a| {
            let (p, q) = (a[0].as_str(), a[1].as_str());
            match (p, q) {
                (Some(p), Some(q)) => Ok(Val::Bool(path_under(p, q))),
                _ => Err(EvalError::new("pathUnder needs two strings")),
            }
        },
    );
    r.add(
        "buildCompat(int, int) -> string",
        "`buildCompat(host, image)`: process-isolation compatibility of Windows builds: `exact`, `stable-abi` or `incompatible`",
        |_, a| {
            let (h, i) = (a[0].as_i64().unwrap_or(0), a[1].as_i64().unwrap_or(0));
            Ok(Val::Text(build_compat(h.max(0) as u64, i.max(0) as u64).as_str()))
        },
    );
}

/// The embedded Windows catalog.
pub(crate) const EMBEDDED_CATALOG: &str = include_str!("../../catalog/windows.yaml");

// === the catalog (catalog/windows.yaml) ===

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CatalogFile {
    windows_images: ImageClassFile,
    linux_images: ImageClassFile,
    multi_os_images: ImageClassFile,
    default_users: Vec<DefaultUserFile>,
    builds: Vec<BuildEntry>,
    iis_images: ImageClassFile,
    commands: CommandTables,
    unsupported_fields: UnsupportedFieldsFile,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ImageClassFile {
    #[serde(default)]
    repositories: Vec<String>,
    #[serde(default)]
    tag_tokens: Vec<String>,
    #[serde(default)]
    tag_token_patterns: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultUserFile {
    user: String,
    images: ImageClassFile,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct BuildEntry {
    pub build: u64,
    pub name: String,
    pub tokens: Vec<String>,
    pub version_prefix: String,
}

/// Tables that drive the entrypoint analysis.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CommandTables {
    pub shells: Vec<ShellEntry>,
    pub service_monitor: Vec<String>,
    pub service_monitor_argument: String,
    pub wrappers: Vec<String>,
    pub copy: Vec<String>,
    pub source_parameters: Vec<String>,
    pub value_parameters: Vec<String>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ShellEntry {
    pub names: Vec<String>,
    pub script_flags: Vec<String>,
    /// Whether running it shows the container is a Windows container.
    #[serde(default)]
    pub windows: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct UnsupportedFieldsFile {
    pod: Vec<UnsupportedField>,
    container: Vec<UnsupportedField>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UnsupportedField {
    field: String,
    #[serde(default, deserialize_with = "since_version")]
    since: Option<(u64, u64)>,
    #[serde(default)]
    only_when_true: bool,
    /// Counts only when the list or map has entries (`sysctls: []` is accepted).
    #[serde(default)]
    non_empty: bool,
    /// Values the API server accepts (`stopSignal: SIGTERM`).
    #[serde(default)]
    except: Vec<String>,
    /// The feature gate that lets the field through (`featureGates` overrides its default).
    gate: Option<String>,
}

impl UnsupportedField {
    /// Whether the field reaches the API server's validation on this cluster: its gate as
    /// configured, else on by default from `since`.
    fn validated(&self, ctx: &ModelContext<'_>) -> bool {
        match &self.gate {
            Some(gate) => ctx.profile.gate(gate, self.since),
            None => version_ok(ctx, &self.since),
        }
    }

    /// Whether a value written for the field is one the API server rejects.
    fn rejects(&self, v: &Doc<'_>) -> bool {
        if self.only_when_true {
            v == &Doc::Bool(true)
        } else if self.non_empty {
            v.as_array().is_some_and(|a| !a.is_empty())
                || v.as_object().is_some_and(|m| !m.is_empty())
        } else if !self.except.is_empty() {
            !v.is_null()
                && !v
                    .as_str()
                    .is_some_and(|s| self.except.iter().any(|e| e == s))
        } else {
            !v.is_null()
        }
    }
}

/// The catalog's Linux-only fields, with each field's first path segment looked up once per
/// value: most pods and containers have no `securityContext`, and then a single lookup rules out
/// most of the table.
#[derive(Debug)]
struct FieldTable {
    /// The distinct first segments (`securityContext`, `hostPID`, …).
    heads: Vec<String>,
    /// Per field (in catalog order): its head's index and the rest of its path.
    fields: Vec<(UnsupportedField, usize, Vec<String>)>,
}

impl FieldTable {
    fn new(fields: Vec<UnsupportedField>) -> Self {
        let mut heads: Vec<String> = Vec::new();
        let fields = fields
            .into_iter()
            .map(|f| {
                let mut parts = f.field.split('.').map(str::to_string);
                let head = parts.next().unwrap_or_default();
                let index = heads.iter().position(|h| *h == head).unwrap_or_else(|| {
                    heads.push(head);
                    heads.len() - 1
                });
                let rest = parts.collect();
                (f, index, rest)
            })
            .collect();
        FieldTable { heads, fields }
    }

    /// The fields set on `value`, in catalog order, that the cluster version knows.
    fn set_on<'t>(
        &'t self,
        ctx: &'t ModelContext<'_>,
        value: &'t Doc<'t>,
    ) -> impl Iterator<Item = &'t UnsupportedField> {
        let heads: Vec<Option<&Doc<'_>>> = self.heads.iter().map(|h| value.get(h)).collect();
        self.fields
            .iter()
            .filter(move |(f, head, rest)| {
                let Some(mut v) = heads[*head] else {
                    return false;
                };
                for part in rest {
                    match v.get(part) {
                        Some(next) => v = next,
                        None => return false,
                    }
                }
                f.rejects(v) && f.validated(ctx)
            })
            .map(|(f, _, _)| f)
    }
}

/// `since: '1.30'` → (1, 30), parsed once at load.
fn since_version<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<(u64, u64)>, D::Error> {
    let text = String::deserialize(d)?;
    crate::k8s::parse_version(&text)
        .map(Some)
        .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not a version like 1.30")))
}

/// A regular expression of the catalog, compiled when first matched: a run compiles only the
/// patterns its images reach (building a regex is most of what loading the catalog would cost,
/// and a short run reaches few). The catalog is built in, and a test compiles every pattern.
#[derive(Debug)]
struct CatalogPattern {
    text: String,
    regex: std::sync::OnceLock<Option<Regex>>,
}

impl CatalogPattern {
    fn new(text: &str) -> Self {
        CatalogPattern {
            text: text.to_string(),
            regex: std::sync::OnceLock::new(),
        }
    }

    fn compiled(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| Regex::new(&self.text).ok())
            .as_ref()
    }

    fn is_match(&self, haystack: &str) -> bool {
        self.compiled().is_some_and(|r| r.is_match(haystack))
    }
}

/// An image class: repositories and tag tokens.
///
/// (One regex per pattern: an alternation of each list is no faster here, and its lazy DFA takes
/// far more memory at start-up.)
#[derive(Debug, Default)]
struct ImageClass {
    repositories: Vec<CatalogPattern>,
    tag_tokens: Vec<String>,
    tag_token_patterns: Vec<CatalogPattern>,
    /// From the config: regexes over the whole image reference.
    image_patterns: Vec<Regex>,
}

impl ImageClass {
    fn new(file: &ImageClassFile, image_patterns: &[Regex]) -> Self {
        let patterns = |list: &[String]| list.iter().map(|p| CatalogPattern::new(p)).collect();
        ImageClass {
            repositories: patterns(&file.repositories),
            tag_tokens: file.tag_tokens.iter().map(|t| t.to_lowercase()).collect(),
            tag_token_patterns: patterns(&file.tag_token_patterns),
            image_patterns: image_patterns.to_vec(),
        }
    }

    /// Every pattern, for the test that compiles them all.
    #[cfg(test)]
    fn patterns(&self) -> impl Iterator<Item = &CatalogPattern> {
        self.repositories.iter().chain(&self.tag_token_patterns)
    }

    /// The reason an image is in this class, if it is.
    fn reason(&self, image: &ImageRef) -> Option<String> {
        if self
            .repositories
            .iter()
            .any(|r| r.is_match(&image.repository))
        {
            return Some(["its repository `", &image.repository, "`"].concat());
        }
        for token in image.tag_tokens() {
            let lower = if token.bytes().any(|b| b.is_ascii_uppercase()) {
                std::borrow::Cow::Owned(token.to_ascii_lowercase())
            } else {
                std::borrow::Cow::Borrowed(token)
            };
            if self.tag_tokens.iter().any(|t| t == lower.as_ref())
                || self.tag_token_patterns.iter().any(|r| r.is_match(&lower))
            {
                return Some(["its tag token `", token, "`"].concat());
            }
        }
        if self
            .image_patterns
            .iter()
            .any(|r| r.is_match(&image.original))
        {
            return Some("a configured image pattern".to_string());
        }
        None
    }
}

/// The Windows catalog compiled together with the user's config patterns.
#[derive(Debug)]
pub struct Catalog {
    windows: ImageClass,
    linux: ImageClass,
    multi_os: ImageClass,
    /// The default user of Windows images, by image class, in the catalog's order.
    default_users: Vec<(String, ImageClass)>,
    iis: ImageClass,
    builds: Vec<BuildEntry>,
    pub commands: CommandTables,
    pod_fields: FieldTable,
    container_fields: FieldTable,
    /// What the catalog alone (no registry read) made of the images it has seen, shared by every
    /// input set built on it: a webhook sees the same few images review after review (every pod
    /// of a workload), and classifying one runs the catalog's regexes over its parts. At most
    /// [`NAMED_IMAGES_KEPT`]: when full, it is emptied and refills with the images in use.
    named_images: std::sync::RwLock<HashMap<Box<str>, std::sync::Arc<ImageFacts>>>,
}

/// How many images' facts a catalog keeps ([`Catalog::named_image`]): a few hundred bytes each,
/// well within the webhook's memory, and more images than most clusters run at once.
const NAMED_IMAGES_KEPT: usize = 1024;

impl Catalog {
    /// Loads the catalog text, adding the user's image patterns.
    pub fn load(text: &str, patterns: &ImagePatterns) -> Result<Catalog, crate::error::Error> {
        const NAME: &str = "catalog/windows.yaml";
        let file: CatalogFile = crate::manifest::typed::parse_typed(text, NAME)?;
        Self::compile(file, patterns)
            .map_err(|e| crate::error::Error::new(crate::error::ErrorKind::Load, NAME, e))
    }

    fn compile(file: CatalogFile, patterns: &ImagePatterns) -> Result<Catalog, String> {
        Ok(Catalog {
            windows: ImageClass::new(&file.windows_images, &patterns.windows),
            linux: ImageClass::new(&file.linux_images, &patterns.linux),
            multi_os: ImageClass::new(&file.multi_os_images, &[]),
            default_users: file
                .default_users
                .iter()
                .map(|d| (d.user.clone(), ImageClass::new(&d.images, &[])))
                .collect(),
            iis: ImageClass::new(&file.iis_images, &patterns.iis),
            builds: file.builds,
            commands: file.commands,
            pod_fields: FieldTable::new(file.unsupported_fields.pod),
            container_fields: FieldTable::new(file.unsupported_fields.container),
            named_images: Default::default(),
        })
    }

    /// What the catalog makes of the image `text` by its name alone, worked out once per catalog.
    fn named_image(&self, text: &str) -> std::sync::Arc<ImageFacts> {
        // A poisoned lock only means another thread panicked mid-insert: the map is still whole.
        if let Some(found) = self
            .named_images
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(text)
        {
            return found.clone();
        }
        let facts = std::sync::Arc::new(ImageFacts::classify(self, text, None));
        let mut kept = self.named_images.write().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= NAMED_IMAGES_KEPT {
            kept.clear();
        }
        kept.entry(text.into()).or_insert_with(|| facts.clone());
        facts
    }

    /// The build a tag token names (`ltsc2019` → 17763, `10.0.17763.437` → 17763).
    pub fn build_of_token(&self, token: &str) -> Option<&BuildEntry> {
        let lower = token.to_lowercase();
        self.builds.iter().find(|b| {
            b.tokens.iter().any(|t| t.eq_ignore_ascii_case(&lower))
                || lower
                    .strip_prefix(b.version_prefix.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
        })
    }

    /// A build from config or a selector value: `17763`, `"10.0.17763"`, `"ltsc2019"`.
    pub fn parse_build(&self, value: &Doc<'_>) -> Option<u64> {
        match value {
            Doc::Number(n) => n.as_u64(),
            Doc::String(s) => {
                let s = s.trim();
                if let Ok(n) = s.parse::<u64>()
                    && n > 9999
                {
                    return Some(n);
                }
                if let Some(b) = self.build_of_token(s) {
                    return Some(b.build);
                }
                // `10.0.N` for builds the table doesn't know yet.
                build_of_version(s)
            }
            _ => None,
        }
    }

    pub fn build_name(&self, build: u64) -> String {
        self.builds
            .iter()
            .find(|b| b.build == build)
            .map_or_else(|| format!("build {build}"), |b| b.name.clone())
    }
}

// === pure domain functions (also exposed to rule expressions) ===

/// Windows process-isolation compatibility of an image build on a host build (§2.3, as
/// containerd's platform matcher implements it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BuildCompat {
    Exact,
    StableAbi,
    Incompatible,
}

impl BuildCompat {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            BuildCompat::Exact => "exact",
            BuildCompat::StableAbi => "stable-abi",
            BuildCompat::Incompatible => "incompatible",
        }
    }
}

/// The first build of the stable-ABI era (Windows Server 2022).
const LTSC2022: u64 = 20348;

fn compat_rank(c: BuildCompat) -> u8 {
    match c {
        BuildCompat::Exact => 0,
        BuildCompat::StableAbi => 1,
        BuildCompat::Incompatible => 2,
    }
}

pub(crate) fn build_compat(host: u64, image: u64) -> BuildCompat {
    if host == image {
        BuildCompat::Exact
    } else if host < LTSC2022 || image > host || image < LTSC2022 {
        BuildCompat::Incompatible
    } else {
        BuildCompat::StableAbi
    }
}

/// Kubernetes' `Toleration.ToleratesTaint`, exactly: empty effect matches all effects, empty key
/// (with `Exists`) matches all keys, `Equal` (or no operator) compares values case-sensitively.
pub(crate) fn tolerates(tolerations: &Doc<'_>, taint: &Doc<'_>) -> bool {
    let Some(list) = tolerations.as_array() else {
        return false;
    };
    // Read in place (no copies): every pod's tolerations are matched against every configured
    // taint.
    fn field<'v>(v: &'v Doc<'v>, k: &str) -> &'v str {
        v.get(k).and_then(Doc::as_str).unwrap_or("")
    }
    let (tk, tv, te) = (
        field(taint, "key"),
        field(taint, "value"),
        field(taint, "effect"),
    );
    list.iter().any(|t| {
        let effect = field(t, "effect");
        if !effect.is_empty() && effect != te {
            return false;
        }
        let key = field(t, "key");
        if !key.is_empty() && key != tk {
            return false;
        }
        match field(t, "operator") {
            "" | "Equal" => field(t, "value") == tv,
            "Exists" => true,
            _ => false,
        }
    })
}

/// Normalises a Windows path for comparison: lower case, `\` separators, `C:` for drive-less
/// absolute paths, no trailing separator.
pub(crate) fn normalize_windows_path(path: &str) -> String {
    let mut p = path
        .trim()
        .trim_matches(['"', '\''])
        .replace('/', "\\")
        .to_lowercase();
    if p.starts_with('\\') && !p.starts_with("\\\\") {
        p.insert_str(0, "c:");
    }
    while p.len() > 3 && p.ends_with('\\') {
        p.pop();
    }
    p
}

/// Whether `path` is `prefix` or inside it (Windows semantics).
pub(crate) fn path_under(path: &str, prefix: &str) -> bool {
    // Rules compare paths for every mount and copy of every container: ASCII paths (nearly all)
    // are normalised on the stack. Others need Unicode lower-casing, whose final-sigma rule
    // looks at neighbouring characters, so they go through `normalize_windows_path`.
    if path.is_ascii() && prefix.is_ascii() {
        let (p, q) = (normalize_ascii_path(path), normalize_ascii_path(prefix));
        return under(&p, &q);
    }
    let (p, q) = (normalize_windows_path(path), normalize_windows_path(prefix));
    under(p.as_bytes(), q.as_bytes())
}

/// Whether normalised path `p` is normalised `q` or inside it.
fn under(p: &[u8], q: &[u8]) -> bool {
    p == q
        || (p.starts_with(q) && p[q.len()..].starts_with(b"\\"))
        || (q.ends_with(b"\\") && p.starts_with(q))
}

/// [`normalize_windows_path`] of an ASCII path, where lower-casing is byte by byte.
fn normalize_ascii_path(path: &str) -> smallvec::SmallVec<[u8; 96]> {
    let trimmed = path.trim().trim_matches(['"', '\'']).as_bytes();
    let mut p = smallvec::SmallVec::<[u8; 96]>::new();
    if matches!(trimmed, [b'/' | b'\\', ..]) && !is_unc(trimmed) {
        p.extend_from_slice(b"c:");
    }
    p.extend(trimmed.iter().map(|&b| match b {
        b'/' => b'\\',
        b => b.to_ascii_lowercase(),
    }));
    while p.len() > 3 && p.ends_with(b"\\") {
        p.pop();
    }
    p
}

/// Whether a path starts with two separators of either kind (`\\server`, `//server`, `/\\`).
fn is_unc(path: &[u8]) -> bool {
    matches!(path, [b'/' | b'\\', b'/' | b'\\', ..])
}

// === pod facts ===

/// Objects of the input set the model consults (RuntimeClasses).
#[derive(Default)]
pub(crate) struct InputIndex<'a> {
    pub runtime_classes: HashMap<&'a str, &'a Doc<'a>>,
}

/// Everything the model needs: the catalog, the cluster's profile and the input set's
/// RuntimeClasses.
pub(crate) struct ModelContext<'a> {
    pub catalog: &'a Catalog,
    pub profile: &'a ClusterProfile,
    pub index: InputIndex<'a>,
    /// The configured Kubernetes version as (major, minor).
    pub cluster_version: (u64, u64),
    /// What the catalog and the registry made of each image seen so far, in a run that reads
    /// registries (without one, the catalog keeps its own: [`Catalog::named_image`]).
    /// (Owned keys and values: a borrow of the input in a lock would tie the context to exactly
    /// the input's lifetime, where the pods it makes borrow it for less.)
    images_seen: std::sync::Mutex<HashMap<Box<str>, std::sync::Arc<ImageFacts>>>,
    /// Where images' platforms are read from, when the run resolves them.
    pub images: Option<&'a dyn platforms::ImagePlatformSource>,
}

/// What the catalog, and the registry when the run resolves images, make of one image reference.
#[derive(Debug)]
pub(crate) struct ImageFacts {
    pub image: ImageRef,
    /// The OS it is for: the registry's when it lists one OS, else the one its name says (none
    /// for an image published for several OSes, whatever its name says).
    pub os: Option<&'static str>,
    pub os_reason: Option<String>,
    /// Its Windows builds, sorted: every build the registry lists for Windows, else its tag's.
    pub builds: Vec<u64>,
    /// What the registry lists for it, when the run resolved it.
    pub registry: Option<std::sync::Arc<platforms::ImagePlatforms>>,
    /// Where its builds come from, for messages: `its tag`, or the registry's (or config's)
    /// [`platforms::ImagePlatforms::origin`]; none without builds.
    pub build_origin: Option<String>,
    /// Whether it is an IIS image, when first asked ([`ImageFacts::is_iis`]).
    iis: std::sync::OnceLock<bool>,
    /// Its default user's place in the catalog's list, when first asked
    /// ([`ImageFacts::default_user`]).
    default_user: std::sync::OnceLock<Option<usize>>,
}

impl ImageFacts {
    fn classify(
        catalog: &Catalog,
        text: &str,
        registry: Option<std::sync::Arc<platforms::ImagePlatforms>>,
    ) -> Self {
        let image = parse_image(text);
        let windows_reason = catalog.windows.reason(&image);
        // An image published for both OSes is evidence of neither, whatever its name says.
        let (os, os_reason) = match windows_reason {
            Some(r) => (Some("windows"), Some(r)),
            None if catalog.multi_os.reason(&image).is_some() => (None, None),
            None => match catalog.linux.reason(&image) {
                Some(r) => (Some("linux"), Some(r)),
                None => (None, None),
            },
        };
        let tag_builds = || -> Vec<u64> {
            image
                .tag_tokens()
                .find_map(|t| catalog.build_of_token(t))
                .map(|b| b.build)
                .into_iter()
                .collect()
        };
        // The registry's platforms are the truth when it listed any; its name only fills in.
        let listed = registry.as_ref().filter(|r| !r.platforms.is_empty());
        let (os, os_reason, builds, build_origin) = match listed {
            Some(r) => {
                let oses = r.oses();
                let os = match oses.as_slice() {
                    ["windows"] => Some("windows"),
                    ["linux"] => Some("linux"),
                    _ => None,
                };
                let reason = os.map(|_| match &r.stated_in {
                    Some(file) => format!("`images.platforms` in {file}: only {}", r.names()),
                    None => format!(
                        "its registry's platforms: only {}, at {}",
                        r.names(),
                        short_digest(&r.digest)
                    ),
                });
                let listed_builds = r.windows_builds();
                // A Windows platform without `os.version` tells no build: the tag may.
                let (builds, origin) = if !listed_builds.is_empty() {
                    (listed_builds, Some(r.origin()))
                } else if oses.contains(&"windows") {
                    (tag_builds(), Some("its tag".to_string()))
                } else {
                    (Vec::new(), None)
                };
                (os, reason, builds, origin)
            }
            None if os == Some("windows") => {
                (os, os_reason, tag_builds(), Some("its tag".to_string()))
            }
            None => (os, os_reason, Vec::new(), None),
        };
        let build_origin = build_origin.filter(|_| !builds.is_empty());
        ImageFacts {
            image,
            os,
            os_reason,
            builds,
            registry: listed.cloned(),
            build_origin,
            iis: Default::default(),
            default_user: Default::default(),
        }
    }

    /// Whether the catalog knows it as an IIS image (`catalog` is the one that classified it).
    pub(crate) fn is_iis(&self, catalog: &Catalog) -> bool {
        *self
            .iis
            .get_or_init(|| catalog.iis.reason(&self.image).is_some())
    }

    /// The user it runs as when the pod names none, if the catalog knows (`catalog` is the one
    /// that classified it).
    pub(crate) fn default_user<'c>(&self, catalog: &'c Catalog) -> Option<&'c str> {
        let place = *self.default_user.get_or_init(|| {
            catalog
                .default_users
                .iter()
                .position(|(_, class)| class.reason(&self.image).is_some())
        });
        place.map(|i| catalog.default_users[i].0.as_str())
    }
}

/// `sha256:0123456789ab`: a digest short enough for a message, long enough to find it.
pub(crate) fn short_digest(digest: &str) -> &str {
    let end = digest.find(':').map_or(0, |i| i + 1) + 12;
    digest.get(..end).unwrap_or(digest)
}

impl<'a> ModelContext<'a> {
    /// What the catalog, and the registry when the run reads one, make of the image `text`:
    /// kept by the catalog for every input set when only the catalog decides, else worked out
    /// once per input set (the registry's answer holds for a run).
    pub(crate) fn image_facts(&self, text: &str) -> std::sync::Arc<ImageFacts> {
        let Some(source) = self.images else {
            return self.catalog.named_image(text);
        };
        // A poisoned lock only means another thread panicked mid-insert: the map is still whole.
        let images = || self.images_seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(found) = images().get(text) {
            return found.clone();
        }
        // Classified outside the lock (the catalog's regexes, the registry's reads): the other
        // threads' lookups don't wait for it. Two threads may both classify a new image; the
        // first one in is kept.
        let facts = std::sync::Arc::new(ImageFacts::classify(
            self.catalog,
            text,
            source.platforms(text),
        ));
        images().entry(text.into()).or_insert(facts).clone()
    }

    /// The model of one input set, whose objects are `by_kind`.
    pub(crate) fn new(
        catalog: &'a Catalog,
        profile: &'a ClusterProfile,
        images: Option<&'a dyn platforms::ImagePlatformSource>,
        by_kind: &HashMap<&'a str, Vec<&'a Doc<'a>>>,
    ) -> Self {
        let mut index = InputIndex::default();
        for rc in by_kind.get("RuntimeClass").into_iter().flatten() {
            if let Some(name) = rc.pointer("/metadata/name").and_then(Doc::as_str) {
                index.runtime_classes.insert(name, rc);
            }
        }
        ModelContext {
            catalog,
            profile,
            index,
            cluster_version: profile.version,
            images_seen: Default::default(),
            images,
        }
    }
}

impl<'a> crate::engine::InputSet<'a> for ModelContext<'a> {
    fn pod<'s>(
        &'s self,
        spec: &'s Doc<'s>,
        spec_path: &'static str,
        meta_path: &'static str,
    ) -> Box<dyn crate::engine::PodScope + 's> {
        Box::new(PodFacts::new(self, spec, spec_path, meta_path))
    }
}

struct Source {
    os: &'static str,
    kind: &'static str,
    reason: String,
    pointer: String,
    /// An image's OS as its registry lists it (not by its name).
    from_registry: bool,
}

fn os_of(value: &str) -> Option<&'static str> {
    match value {
        "windows" => Some("windows"),
        "linux" => Some("linux"),
        _ => None,
    }
}

const OS_KEYS: [&str; 2] = ["kubernetes.io/os", "beta.kubernetes.io/os"];
const BUILD_KEY: &str = "node.kubernetes.io/windows-build";

/// The labels control-plane nodes carry, which are Linux nodes (a pod that requires one stays off
/// Windows nodes): kubeadm's (and k3s', RKE2's) current and former ones, and RKE's.
const CONTROL_PLANE_KEYS: [&str; 3] = [
    "node-role.kubernetes.io/control-plane",
    "node-role.kubernetes.io/master",
    "node-role.kubernetes.io/controlplane",
];

/// Where the pod requires control-plane nodes (a JSON pointer below the spec): a nodeSelector
/// key, or a required affinity whose every term requires one (`Exists`, or `In`).
fn control_plane_selection(spec: &Doc<'_>) -> Option<(String, String)> {
    for (key, _) in str_map(spec.get("nodeSelector")) {
        if CONTROL_PLANE_KEYS.contains(&key.as_str()) {
            return Some((
                key.to_string(),
                ["/nodeSelector/", &escape_pointer_token(key)].concat(),
            ));
        }
    }
    let terms = spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Doc::as_array)?;
    let mut first = None;
    for (ti, term) in terms.iter().enumerate() {
        let exprs = term.get("matchExpressions").and_then(Doc::as_array);
        let found = exprs.into_iter().flatten().enumerate().find(|(_, e)| {
            let key = e.get("key").and_then(Doc::as_str).unwrap_or("");
            CONTROL_PLANE_KEYS.contains(&key)
                && matches!(
                    e.get("operator").and_then(Doc::as_str),
                    Some("Exists" | "In")
                )
        });
        let (ei, e) = found?;
        first.get_or_insert_with(|| {
            (
                e.get("key").and_then(Doc::as_str).unwrap_or("").to_string(),
                format!("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/{ti}/matchExpressions/{ei}"),
            )
        });
    }
    first
}

/// Every `node.kubernetes.io/windows-build` value the pod selects, as written, with where it is
/// (`site`: nodeSelector, affinity, runtimeClass), whether it has the label's form
/// `MAJOR.MINOR.BUILD` (nodes carry `10.0.17763`), and the build it names if one can be read
/// (`ltsc2022`, `10.0.17763.1234`), with that build's label.
fn build_selectors(
    ctx: &ModelContext<'_>,
    spec: &Doc<'_>,
    runtime_class: Option<&Doc<'_>>,
    spec_path: &str,
) -> Vec<Value> {
    let mut out = Vec::new();
    let mut push = |site: &str, value: &Doc<'_>, pointer: String| {
        let text = match value {
            Doc::String(s) => s.to_string(),
            other => other.to_string(),
        };
        let valid = {
            let parts: Vec<&str> = text.split('.').collect();
            parts.len() == 3
                && parts
                    .iter()
                    .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        };
        let build = ctx.catalog.parse_build(&Doc::from(text.as_str()));
        out.push(Doc::object([
            ("site", Doc::from(site)),
            ("value", Doc::from(text)),
            ("pointer", Doc::from(pointer)),
            ("valid", Doc::Bool(valid)),
            ("build", Doc::from(build)),
            ("label", Doc::from(build.map(|b| format!("10.0.{b}")))),
        ]));
    };
    if let Some(v) = spec.get("nodeSelector").and_then(|m| m.get(BUILD_KEY)) {
        push(
            "nodeSelector",
            v,
            [
                spec_path,
                "/nodeSelector/",
                &escape_pointer_token(BUILD_KEY),
            ]
            .concat(),
        );
    }
    for (ti, ei, e) in required_terms(spec) {
        if e.get("key").and_then(Doc::as_str) != Some(BUILD_KEY) {
            continue;
        }
        let values = e.get("values").and_then(Doc::as_array);
        for (vi, v) in values.into_iter().flatten().enumerate() {
            push(
                "affinity",
                v,
                format!(
                    "{spec_path}/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/{ti}/matchExpressions/{ei}/values/{vi}"
                ),
            );
        }
    }
    if let Some(v) = runtime_class
        .and_then(|rc| rc.get("nodeSelector"))
        .and_then(|m| m.get(BUILD_KEY))
    {
        push("runtimeClass", v, format!("{spec_path}/runtimeClassName"));
    }
    out
}

/// Required node-affinity terms as (term index, expression index, expression).
fn required_terms<'a>(spec: &'a Doc<'a>) -> Vec<(usize, usize, &'a Doc<'a>)> {
    let terms = spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Doc::as_array);
    let mut out = Vec::new();
    for (ti, term) in terms.into_iter().flatten().enumerate() {
        let exprs = term.get("matchExpressions").and_then(Doc::as_array);
        for (ei, e) in exprs.into_iter().flatten().enumerate() {
            out.push((ti, ei, e));
        }
    }
    out
}

/// Values required by affinity for `key` with operator `In`, if every term that names the key agrees.
fn affinity_values(spec: &Doc<'_>, keys: &[&str]) -> Option<(Vec<String>, String)> {
    let mut values = Vec::new();
    let mut pointer = None;
    for (ti, ei, e) in required_terms(spec) {
        let key = e.get("key").and_then(Doc::as_str).unwrap_or("");
        if !keys.contains(&key) || e.get("operator").and_then(Doc::as_str) != Some("In") {
            continue;
        }
        for v in e
            .get("values")
            .and_then(Doc::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(s) = v.as_str() {
                values.push(s.to_string());
            }
        }
        pointer.get_or_insert(format!(
            "/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms/{ti}/matchExpressions/{ei}"
        ));
    }
    pointer.map(|p| (values, p))
}

fn str_map<'a>(
    v: Option<&'a Doc<'a>>,
) -> impl Iterator<Item = (&'a crate::value::Text<'a>, &'a str)> {
    v.and_then(Doc::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k, v.as_str()?)))
}

/// The nodes of the cluster (`--nodes`) a pod's node selection matches, when they are all of
/// one OS: what its selection means in this cluster when it names pools rather than an OS
/// (`agentpool: npwin`).
pub(crate) struct NodesSelected {
    pub os: &'static str,
    /// How many nodes match.
    pub count: usize,
    /// The Windows builds of the matching nodes.
    pub builds: Vec<u64>,
    pub file: String,
    /// Where the selection is written (its nodeSelector, else its required affinity, else its
    /// RuntimeClass).
    pub pointer: String,
}

/// [`NodesSelected`] for a pod: `None` without a nodes file, when the pod selects by OS and
/// build labels only (the OS and build selectors say that already), selects nothing, matches no
/// node, or matches nodes of both OSes.
fn nodes_selected(
    ctx: &ModelContext<'_>,
    spec: &Doc<'_>,
    spec_path: &str,
    runtime_class: Option<&Doc<'_>>,
) -> Option<NodesSelected> {
    let (file, nodes) = ctx.profile.nodes.as_ref()?;
    let mut selector: Vec<(&str, &str)> = str_map(spec.get("nodeSelector"))
        .map(|(k, v)| (k.as_str(), v))
        .collect();
    let own_selector = selector.len();
    selector.extend(
        str_map(runtime_class.and_then(|rc| rc.get("nodeSelector"))).map(|(k, v)| (k.as_str(), v)),
    );
    let terms: Vec<&Doc<'_>> = spec
        .pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution/nodeSelectorTerms")
        .and_then(Doc::as_array)
        .map(|t| t.iter().collect())
        .unwrap_or_default();
    let keys_of_terms = terms.iter().flat_map(|t| {
        t.get("matchExpressions")
            .and_then(Doc::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| e.get("key").and_then(Doc::as_str))
    });
    let os_or_build = |k: &str| OS_KEYS.contains(&k) || k == BUILD_KEY;
    let names_more = selector.iter().any(|(k, _)| !os_or_build(k))
        || keys_of_terms.clone().any(|k| !os_or_build(k));
    if !names_more {
        return None;
    }
    let mut matched = Vec::new();
    for node in nodes.iter() {
        if node.selected_by(&selector, &terms)? {
            matched.push(node);
        }
    }
    let first = matched.first()?;
    if !matched.iter().all(|n| n.windows == first.windows) {
        return None;
    }
    let mut builds: Vec<u64> = matched.iter().filter_map(|n| n.build).collect();
    builds.sort_unstable();
    builds.dedup();
    let pointer = if selector[..own_selector]
        .iter()
        .any(|(k, _)| !os_or_build(k))
    {
        format!("{spec_path}/nodeSelector")
    } else if keys_of_terms.clone().any(|k| !os_or_build(k)) {
        format!("{spec_path}/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution")
    } else {
        format!("{spec_path}/runtimeClassName")
    };
    Some(NodesSelected {
        os: if first.windows { "windows" } else { "linux" },
        count: matched.len(),
        builds,
        file: file.clone(),
        pointer,
    })
}

/// The RuntimeClass a pod names, from the input set or the config, with the OS it schedules onto.
fn runtime_class_facts<'a>(ctx: &ModelContext<'a>, spec: &'a Doc<'a>) -> Option<Doc<'a>> {
    let name = spec.get("runtimeClassName")?.as_str()?;
    if let Some(rc) = ctx.index.runtime_classes.get(name) {
        let sched = rc.get("scheduling");
        let node_selector = sched
            .and_then(|s| s.get("nodeSelector"))
            .cloned()
            .unwrap_or(Doc::Null);
        let os = str_map(Some(&node_selector))
            .find(|(k, _)| OS_KEYS.contains(&k.as_str()))
            .and_then(|(_, v)| os_of(v));
        return Some(Doc::object([
            ("name", Doc::from(name)),
            ("found", Doc::from("input")),
            ("os", Doc::from(os)),
            ("nodeSelector", node_selector),
            (
                "tolerations",
                sched
                    .and_then(|s| s.get("tolerations"))
                    .cloned()
                    .unwrap_or(Doc::Array(Vec::new())),
            ),
        ]));
    }
    let configured = ctx
        .profile
        .runtime_classes
        .iter()
        .find(|r| r.name == name)?;
    let mut node_selector = Map::new();
    node_selector.insert("kubernetes.io/os", Doc::from("windows"));
    if let Some(b) = &configured.build {
        node_selector.insert(BUILD_KEY, Doc::from(b.as_str()));
    }
    Some(Doc::object([
        ("name", Doc::from(name)),
        ("found", Doc::from("config")),
        ("os", Doc::from("windows")),
        ("nodeSelector", Doc::Object(node_selector)),
        ("tolerations", Doc::Array(configured.tolerations.clone())),
    ]))
}

/// Builds selected by `node.kubernetes.io/windows-build` (selector, affinity or RuntimeClass).
fn selected_builds(
    ctx: &ModelContext<'_>,
    spec: &Doc<'_>,
    runtime_class: Option<&Doc<'_>>,
    nodes: Option<&NodesSelected>,
    spec_path: &str,
) -> (Vec<u64>, Value) {
    let catalog = ctx.catalog;
    if let Some(v) = spec.pointer("/nodeSelector").and_then(|n| n.get(BUILD_KEY)) {
        let builds: Vec<u64> = catalog.parse_build(v).into_iter().collect();
        return (
            builds,
            Doc::object([
                ("kind", Doc::from("nodeSelector")),
                (
                    "pointer",
                    Doc::from(format!(
                        "{spec_path}/nodeSelector/{}",
                        escape_pointer_token(BUILD_KEY)
                    )),
                ),
            ]),
        );
    }
    if let Some((values, pointer)) = affinity_values(spec, &[BUILD_KEY]) {
        let builds = values
            .iter()
            .filter_map(|v| catalog.parse_build(&Doc::from(v.as_str())))
            .collect();
        return (
            builds,
            Doc::object([
                ("kind", Doc::from("affinity")),
                ("pointer", Doc::from(format!("{spec_path}{pointer}"))),
            ]),
        );
    }
    if let Some(rc) = runtime_class
        && let Some(v) = rc.pointer("/nodeSelector").and_then(|n| n.get(BUILD_KEY))
    {
        let builds = catalog.parse_build(v).into_iter().collect();
        return (
            builds,
            Doc::object([
                ("kind", Doc::from("runtimeClass")),
                (
                    "pointer",
                    Doc::from(format!("{spec_path}/runtimeClassName")),
                ),
            ]),
        );
    }
    // The builds of the Windows nodes the pod's selection matches.
    if let Some(n) = nodes.filter(|n| n.os == "windows" && !n.builds.is_empty()) {
        return (
            n.builds.clone(),
            Doc::object([
                ("kind", Doc::from("nodes")),
                ("pointer", Doc::from(n.pointer.as_str())),
            ]),
        );
    }
    (Vec::new(), Doc::Null)
}

fn version_ok(ctx: &ModelContext<'_>, since: &Option<(u64, u64)>) -> bool {
    since.is_none_or(|need| ctx.cluster_version >= need)
}

fn unsupported_fields<'a>(
    ctx: &ModelContext<'_>,
    spec: &'a Doc<'a>,
    spec_path: &str,
    containers: &[ContainerFacts<'a>],
) -> Vec<Doc<'a>> {
    let mut out = Vec::new();
    for f in ctx.catalog.pod_fields.set_on(ctx, spec) {
        out.push(Doc::object([
            ("field", Doc::from(format!("spec.{}", f.field))),
            (
                "pointer",
                Doc::from(format!("{spec_path}/{}", f.field.replace('.', "/"))),
            ),
            ("container", Doc::Null),
        ]));
    }
    if !spec.is_object() {
        return out;
    }
    for c in containers {
        for f in ctx.catalog.container_fields.set_on(ctx, c.raw) {
            out.push(Doc::object([
                (
                    "field",
                    Doc::from(format!("{}[{}].{}", c.kind, c.name(), f.field)),
                ),
                (
                    "pointer",
                    Doc::from(format!("{}/{}", c.path, f.field.replace('.', "/"))),
                ),
                ("container", c.raw.get("name").cloned().unwrap_or(Doc::Null)),
            ]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json;

    /// The catalog keeps what it made of at most [`NAMED_IMAGES_KEPT`] images; when full, it
    /// starts again with the images asked for next.
    #[test]
    fn the_catalog_keeps_a_bounded_number_of_images() {
        let catalog = Catalog::load(EMBEDDED_CATALOG, &ImagePatterns::default()).unwrap();
        let kept = || catalog.named_images.read().unwrap().len();
        for i in 0..NAMED_IMAGES_KEPT {
            catalog.named_image(&format!("registry.example.com/app-{i}:1.0"));
        }
        assert_eq!(kept(), NAMED_IMAGES_KEPT);
        let late = catalog.named_image("mcr.microsoft.com/windows/servercore:ltsc2022");
        assert_eq!(
            (late.os, late.builds.as_slice()),
            (Some("windows"), &[20348][..])
        );
        assert_eq!(kept(), 1);
        let again = catalog.named_image("mcr.microsoft.com/windows/servercore:ltsc2022");
        assert!(
            std::sync::Arc::ptr_eq(&late, &again),
            "kept, not classified again"
        );
    }

    /// The catalog's patterns are compiled when first matched, so a bad one would only show as an
    /// image never matched: every one must compile.
    #[test]
    fn every_pattern_of_the_catalog_compiles() {
        let catalog = Catalog::load(EMBEDDED_CATALOG, &ImagePatterns::default()).unwrap();
        let classes = [
            &catalog.windows,
            &catalog.linux,
            &catalog.multi_os,
            &catalog.iis,
        ]
        .into_iter()
        .chain(catalog.default_users.iter().map(|(_, class)| class));
        let mut count = 0;
        for pattern in classes.flat_map(ImageClass::patterns) {
            assert!(
                Regex::new(&pattern.text).is_ok(),
                "catalog/windows.yaml: `{}` is not a valid regex",
                pattern.text
            );
            count += 1;
        }
        assert!(count > 20, "{count} patterns");
    }

    /// Images as charts and manifests write them (MCR, mirrors keeping the path, and the tag
    /// spellings projects use), each with what the catalog makes of it: OS, build, default user,
    /// whether IIS. Collected from public charts' values and manifests.
    #[test]
    fn images_as_they_are_written_in_the_wild() {
        /// An image, and its OS, build, default user and whether it is IIS.
        type Case<'c> = (&'c str, Option<&'c str>, Option<u64>, Option<&'c str>, bool);
        let catalog = Catalog::load(EMBEDDED_CATALOG, &ImagePatterns::default()).unwrap();
        let cases: &[Case] = &[
            (
                "mcr.microsoft.com/windows/servercore:ltsc2022",
                Some("windows"),
                Some(20348),
                Some("ContainerAdministrator"),
                false,
            ),
            (
                "mcr.microsoft.com/windows/server:ltsc2022",
                Some("windows"),
                Some(20348),
                Some("ContainerAdministrator"),
                false,
            ),
            (
                "mcr.microsoft.com/windows/nanoserver:1809",
                Some("windows"),
                Some(17763),
                Some("ContainerUser"),
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore/iis:windowsservercore-ltsc2019",
                Some("windows"),
                Some(17763),
                Some("ContainerAdministrator"),
                true,
            ),
            (
                "mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022",
                Some("windows"),
                Some(20348),
                Some("ContainerAdministrator"),
                true,
            ),
            (
                "mcr.microsoft.com/dotnet/framework/runtime:4.8.1-20240409-windowsservercore-ltsc2022",
                Some("windows"),
                Some(20348),
                Some("ContainerAdministrator"),
                false,
            ),
            (
                "mcr.microsoft.com/windows/servercore:10.0.20348.2402",
                Some("windows"),
                Some(20348),
                Some("ContainerAdministrator"),
                false,
            ),
            // Mirrors keep the repository path under any registry and prefix.
            (
                "registry.example.com/windows/servercore:ltsc2019",
                Some("windows"),
                Some(17763),
                Some("ContainerAdministrator"),
                false,
            ),
            (
                "registry.example.com/windows/nanoserver:ltsc2022",
                Some("windows"),
                Some(20348),
                Some("ContainerUser"),
                false,
            ),
            (
                "harbor.example.com/mcr/dotnet/framework/aspnet:4.8-20240409-windowsservercore-ltsc2019",
                Some("windows"),
                Some(17763),
                Some("ContainerAdministrator"),
                true,
            ),
            (
                "myacr.azurecr.io/mirror/windows/servercore/iis:latest",
                Some("windows"),
                None,
                Some("ContainerAdministrator"),
                true,
            ),
            (
                "registry.example.com/microsoft/nanoserver:1809",
                Some("windows"),
                Some(17763),
                Some("ContainerUser"),
                false,
            ),
            // Projects' Windows variants.
            (
                "mcr.microsoft.com/oss/kubernetes-csi/livenessprobe:v2.0.1-alpha.1-windows-1809-amd64",
                Some("windows"),
                Some(17763),
                None,
                false,
            ),
            (
                "registry.k8s.io/sig-storage/smbplugin:v1.17.0-windows-hp",
                Some("windows"),
                None,
                None,
                false,
            ),
            (
                "ghcr.io/example/agent:1.2-windows-ltsc-2022-amd64",
                Some("windows"),
                Some(20348),
                None,
                false,
            ),
            (
                "docker.io/grafana/alloy:v1.4.0-windows-ltsc2019",
                Some("windows"),
                Some(17763),
                None,
                false,
            ),
            (
                "fluent/fluent-bit:3.1-windows-2022",
                Some("windows"),
                None,
                None,
                false,
            ),
            (
                "mcr.microsoft.com/powershell:lts-windowsserver-ltsc2022",
                Some("windows"),
                Some(20348),
                None,
                false,
            ),
            (
                "mcr.microsoft.com/powershell:lts-nanoserver-1809",
                Some("windows"),
                Some(17763),
                Some("ContainerUser"),
                false,
            ),
            // Not Windows.
            (
                "registry.example.com/library/nginx:1.27-alpine",
                Some("linux"),
                None,
                None,
                false,
            ),
            (
                "ghcr.io/example/windows-exporter-config:v1",
                None,
                None,
                None,
                false,
            ),
            ("registry.example.com/app/web:2.0", None, None, None, false),
        ];
        let mut wrong = Vec::new();
        for &(text, os, build, user, iis) in cases {
            let facts = ImageFacts::classify(&catalog, text, None);
            let got = (
                facts.os,
                facts.builds.first().copied(),
                facts.default_user(&catalog),
                facts.is_iis(&catalog),
            );
            // The catalog's kept facts are the same, asked twice (the second time kept).
            for _ in 0..2 {
                let kept = catalog.named_image(text);
                let again = (
                    kept.os,
                    kept.builds.first().copied(),
                    kept.default_user(&catalog),
                    kept.is_iis(&catalog),
                );
                assert_eq!(again, got, "{text}");
            }
            if got != (os, build, user, iis) {
                wrong.push(format!(
                    "{text}: got {got:?}, want {:?}",
                    (os, build, user, iis)
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    #[test]
    fn build_compatibility_follows_containerd() {
        assert_eq!(build_compat(17763, 17763), BuildCompat::Exact);
        assert_eq!(build_compat(17763, 14393), BuildCompat::Incompatible);
        assert_eq!(build_compat(20348, 17763), BuildCompat::Incompatible);
        assert_eq!(build_compat(26100, 20348), BuildCompat::StableAbi);
        assert_eq!(build_compat(20348, 26100), BuildCompat::Incompatible);
    }

    #[test]
    fn toleration_matching_is_kubernetes_exact() {
        let taint = json!({"key": "os", "value": "windows", "effect": "NoSchedule"});
        assert!(tolerates(&json!([{"operator": "Exists"}]), &taint));
        assert!(tolerates(
            &json!([{"key": "os", "operator": "Exists"}]),
            &taint
        ));
        assert!(tolerates(
            &json!([{"key": "os", "value": "windows"}]),
            &taint
        ));
        assert!(!tolerates(
            &json!([{"key": "os", "value": "Windows", "effect": "NoSchedule"}]),
            &taint
        ));
        assert!(!tolerates(
            &json!([{"key": "os", "operator": "Exists", "effect": "NoExecute"}]),
            &taint
        ));
        assert!(!tolerates(
            &json!([{"key": "OS", "operator": "Exists"}]),
            &taint
        ));
        assert!(!tolerates(&json!([]), &taint));
    }

    #[test]
    fn windows_paths_compare_loosely() {
        assert!(path_under(
            r"c:\app\secret-volume\web.config",
            r"C:\app\secret-volume"
        ));
        assert!(path_under("C:/config/web.config", r"C:\config\"));
        assert!(path_under(r"\config\x", "C:/config"));
        assert!(!path_under(r"C:\configs\x", r"C:\config"));
        // Quotes, spaces, UNC roots, trailing separators and non-ASCII letters.
        assert_eq!(normalize_windows_path(r#" "C:/App/" "#), r"c:\app");
        assert_eq!(normalize_windows_path("/x/"), r"c:\x");
        assert_eq!(normalize_windows_path(r"\\Server\Share"), r"\\server\share");
        assert_eq!(normalize_windows_path("//server/share"), r"\\server\share");
        assert_eq!(normalize_windows_path(r"C:\"), r"c:\");
        assert_eq!(normalize_windows_path("/Café/ÉTÉ"), r"c:\café\été");
        // A final capital sigma lowers to a final sigma, as `str::to_lowercase` has it.
        assert_eq!(normalize_windows_path("/ΟΔΟΣ/"), "c:\\οδος");
        assert!(path_under("C:/ΟΔΟΣ/web.config", r"c:\οδος"));
        assert!(path_under("C:/x", "/"));
    }

    #[test]
    fn ascii_paths_normalise_on_the_stack_as_through_strings() {
        let paths = [
            "",
            " ",
            "/",
            "\\",
            "//",
            "\\\\",
            "/\\",
            "\\/x",
            "C:",
            "C:\\",
            "c:/",
            "x",
            "X/",
            "\"C:\\App\\\"",
            "'/a/b/'",
            " \t/Config/ ",
            "\\\\Server\\Share\\",
            "//srv/s",
            "C:\\inetpub\\wwwroot",
            "C:/INETPUB/wwwroot/web.config",
            "\\inetpub",
            "a\\\\\\",
        ];
        for p in paths {
            assert_eq!(
                normalize_ascii_path(p).as_slice(),
                normalize_windows_path(p).as_bytes(),
                "{p:?}"
            );
            for q in paths {
                let (p2, q2) = (normalize_windows_path(p), normalize_windows_path(q));
                assert_eq!(
                    path_under(p, q),
                    under(p2.as_bytes(), q2.as_bytes()),
                    "{p:?} under {q:?}"
                );
            }
        }
    }
}
