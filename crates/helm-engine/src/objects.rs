//! Helm's built-in objects: `.Chart` (a map), and those that are Go structs with methods:
//! `.Files`, `.Capabilities`, `.Capabilities.KubeVersion` and `.Capabilities.APIVersions`.

use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::Arc;

use super::template::gostring;
use super::template::{Object, Value};

/// `.Chart`: in Helm 4 a map of `chart.Metadata`'s fields under their Go names (`index .Chart
/// "Name"` works, a missing field is empty), with `IsRoot`; a new map for each render, as
/// templates may change it.
pub fn chart_metadata(chart: &super::loaded::Chart, is_root: bool) -> Value {
    use serde_json::Value as Json;
    let m = &chart.metadata;
    let list = |key: &str| match m.get(key) {
        Some(v @ Json::Array(_)) => Value::from_json(v),
        _ => Value::list(Vec::new()),
    };
    let mut fields = scalar_fields(chart, is_root);
    // The lists and maps are made anew for each render (a template may change them).
    fields.insert(
        "Annotations".into(),
        match m.get("annotations") {
            Some(Json::Object(a)) => Value::from_json_map(a),
            _ => Value::map(BTreeMap::new()),
        },
    );
    fields.insert(
        "Dependencies".into(),
        Value::list(
            chart
                .dependencies
                .iter()
                .map(|d| Value::from_json_map(&d.raw))
                .collect(),
        ),
    );
    fields.insert("Keywords".into(), list("keywords"));
    fields.insert("Maintainers".into(), list("maintainers"));
    fields.insert("Sources".into(), list("sources"));
    Value::map(fields)
}

/// The string and boolean fields of `.Chart`, read from `Chart.yaml` once per chart and thread
/// and copied for each render, not converted again at every render. Their values are
/// immutable strings and booleans, shared safely. An aliased subchart gets a new metadata map at
/// each render and so never hits; the cache is bounded for that.
fn scalar_fields(chart: &super::loaded::Chart, is_root: bool) -> BTreeMap<String, Value> {
    use serde_json::Value as Json;
    type Cached = (
        Arc<serde_json::Map<String, Json>>,
        bool,
        BTreeMap<String, Value>,
    );
    thread_local! {
        // Keyed by the chart's metadata itself (held, so its address is not reused).
        static CACHE: std::cell::RefCell<Vec<Cached>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let hit = CACHE.with(|c| {
        c.borrow()
            .iter()
            .find(|(m, root, _)| Arc::ptr_eq(m, &chart.metadata) && *root == is_root)
            .map(|(_, _, fields)| fields.clone())
    });
    if let Some(fields) = hit {
        return fields;
    }
    let m = &chart.metadata;
    let text = |key: &str| Value::from(m.get(key).and_then(Json::as_str).unwrap_or(""));
    let fields: BTreeMap<String, Value> = [
        ("APIVersion", text("apiVersion")),
        (
            "AppVersion",
            match m.get("appVersion") {
                Some(Json::String(s)) => Value::from(s.as_str()),
                Some(Json::Number(n)) => Value::from(n.to_string()),
                _ => Value::from(""),
            },
        ),
        ("Condition", text("condition")),
        (
            "Deprecated",
            Value::Bool(m.get("deprecated").and_then(Json::as_bool).unwrap_or(false)),
        ),
        ("Description", text("description")),
        ("Home", text("home")),
        ("Icon", text("icon")),
        ("IsRoot", Value::Bool(is_root)),
        ("KubeVersion", text("kubeVersion")),
        ("Name", text("name")),
        ("Tags", text("tags")),
        ("Type", text("type")),
        ("Version", text("version")),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    CACHE.with(|c| {
        let mut c = c.borrow_mut();
        // A long-running process that renders many charts keeps a bounded cache.
        if c.len() >= 64 {
            c.clear();
        }
        c.push((chart.metadata.clone(), is_root, fields.clone()));
    });
    fields
}

/// `.Files`: the chart's non-template files.
pub struct Files {
    pub files: Vec<(String, Arc<[u8]>)>,
}

impl Files {
    fn get(&self, name: &str) -> Option<&Arc<[u8]>> {
        self.files.iter().find(|(n, _)| n == name).map(|(_, d)| d)
    }

    fn glob(&self, pattern: &str) -> Result<Files, String> {
        let re = super::template::funcs::regex(&crate::glob::glob_regex(
            pattern,
            crate::glob::Glob::Gobwas,
        ))
        .map_err(|_| format!("bad glob pattern {pattern:?}"))?;
        Ok(Files {
            files: self
                .files
                .iter()
                .filter(|(n, _)| re.is_match(n))
                .cloned()
                .collect(),
        })
    }

    /// Base name → content, as `AsConfig`/`AsSecrets` key them.
    fn by_base_name(&self, encode: bool) -> String {
        if self.files.is_empty() {
            return String::new();
        }
        let mut m = BTreeMap::new();
        for (name, data) in &self.files {
            let base = name.rsplit('/').next().unwrap_or(name).to_string();
            let text = if encode {
                use base64::Engine;
                base64::engine::general_purpose::STANDARD.encode(data)
            } else {
                gostring::from_bytes(data).into_owned()
            };
            m.insert(base, Value::from(text));
        }
        super::template::yaml::to_yaml(&Value::map(m))
            .trim_end_matches('\n')
            .to_string()
    }
}

impl Object for Files {
    fn type_name(&self) -> &str {
        "files.Files"
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        let path = || -> Result<String, String> {
            match args.first() {
                Some(Value::Str(s)) => Ok(s.to_string()),
                Some(other) => Err(format!(
                    "wrong type for value; expected string; got {}",
                    other.type_name()
                )),
                None => Err("wrong number of args: want 1 got 0".into()),
            }
        };
        Some(match name {
            "Get" => path().map(|p| {
                Value::from(
                    self.get(&p)
                        .map(|d| gostring::from_bytes(d).into_owned())
                        .unwrap_or_default(),
                )
            }),
            "GetBytes" => path().map(|p| {
                Value::Bytes(
                    self.get(&p)
                        .cloned()
                        .unwrap_or_else(|| Arc::from(Vec::new())),
                )
            }),
            "Lines" => path().map(|p| match self.get(&p) {
                Some(d) if !d.is_empty() => {
                    let text = gostring::from_bytes(d);
                    // Helm drops one final newline before splitting.
                    let text = text.strip_suffix('\n').unwrap_or(&text);
                    Value::list(text.split('\n').map(Value::from).collect())
                }
                _ => Value::list(Vec::new()),
            }),
            "Glob" => path()
                .and_then(|p| self.glob(&p))
                .map(|f| Value::Object(Rc::new(f))),
            "AsConfig" => Ok(Value::from(self.by_base_name(false))),
            "AsSecrets" => Ok(Value::from(self.by_base_name(true))),
            _ => return None,
        })
    }
    fn display(&self) -> String {
        let names: Vec<String> = self
            .files
            .iter()
            .map(|(n, d)| format!("{n}:{:?}", d.as_ref()))
            .collect();
        format!("map[{}]", names.join(" "))
    }
    fn entries(&self) -> Option<Vec<(Value, Value)>> {
        let mut entries: Vec<(Value, Value)> = self
            .files
            .iter()
            .map(|(n, d)| (Value::from(n.as_str()), Value::Bytes(d.clone())))
            .collect();
        entries.sort_by_key(|e| e.0.to_print());
        Some(entries)
    }
    fn to_data(&self) -> Value {
        Value::map(
            self.files
                .iter()
                .map(|(n, d)| (n.clone(), Value::Bytes(d.clone())))
                .collect(),
        )
    }
}

/// `.Capabilities.KubeVersion`: prints as its version (`v1.34.0`).
pub struct KubeVersion {
    pub version: String,
    pub major: String,
    pub minor: String,
}

impl Object for KubeVersion {
    fn type_name(&self) -> &str {
        "*common.KubeVersion"
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "Version" => Some(Value::from(self.version.as_str())),
            "Major" => Some(Value::from(self.major.as_str())),
            "Minor" => Some(Value::from(self.minor.as_str())),
            _ => None,
        }
    }
    fn call(&self, name: &str, _args: &[Value]) -> Option<Result<Value, String>> {
        match name {
            "GitVersion" | "String" => Some(Ok(Value::from(self.version.as_str()))),
            _ => None,
        }
    }
    fn display(&self) -> String {
        self.version.clone()
    }
    fn display_value(&self) -> String {
        format!(
            "{{{} {} {} {}}}",
            self.version, self.version, self.major, self.minor
        )
    }
    fn to_data(&self) -> Value {
        let mut m = BTreeMap::new();
        m.insert("Version".into(), Value::from(self.version.as_str()));
        m.insert("Major".into(), Value::from(self.major.as_str()));
        m.insert("Minor".into(), Value::from(self.minor.as_str()));
        Value::map(m)
    }
}

/// `.Capabilities.APIVersions`: `Has "apps/v1"` or `Has "apps/v1/Deployment"`.
pub struct ApiVersions {
    /// Helm's defaults, shared by every render.
    pub defaults: &'static [&'static str],
    /// `--api-versions`.
    pub extra: Vec<String>,
}

impl ApiVersions {
    fn all(&self) -> impl Iterator<Item = &str> {
        self.defaults
            .iter()
            .copied()
            .chain(self.extra.iter().map(String::as_str))
    }
}

impl Object for ApiVersions {
    fn type_name(&self) -> &str {
        "common.VersionSet"
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        match name {
            "Has" => Some(match args.first() {
                Some(Value::Str(s)) => Ok(Value::Bool(self.all().any(|v| v == &**s))),
                _ => Err("wrong type for value; expected string".into()),
            }),
            _ => None,
        }
    }
    fn display(&self) -> String {
        format!("[{}]", self.all().collect::<Vec<_>>().join(" "))
    }
    fn to_data(&self) -> Value {
        Value::list(self.all().map(Value::from).collect())
    }
}

/// `.Capabilities`.
pub struct Capabilities {
    pub kube_version: Rc<KubeVersion>,
    pub api_versions: Rc<ApiVersions>,
    pub helm_version: Value,
}

impl Object for Capabilities {
    fn type_name(&self) -> &str {
        "*common.Capabilities"
    }
    fn field(&self, name: &str) -> Option<Value> {
        match name {
            "KubeVersion" => Some(Value::Object(self.kube_version.clone())),
            "APIVersions" => Some(Value::Object(self.api_versions.clone())),
            "HelmVersion" => Some(self.helm_version.clone()),
            _ => None,
        }
    }
    fn display(&self) -> String {
        format!(
            "&{{{} {} {}}}",
            self.kube_version.version,
            self.api_versions.display(),
            self.helm_version.to_print()
        )
    }
    fn to_data(&self) -> Value {
        let mut m = BTreeMap::new();
        m.insert("KubeVersion".into(), self.kube_version.to_data());
        m.insert("APIVersions".into(), self.api_versions.to_data());
        m.insert("HelmVersion".into(), self.helm_version.clone());
        Value::map(m)
    }
}
