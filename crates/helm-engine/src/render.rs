//! Rendering a chart as Helm 4 does: every template of the chart and its subcharts in one
//! template set, each executed with its chart's data, and `helm template`'s output order.

use crate::error::Error;
use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use serde_json::Value as Json;

use super::loaded::Chart;
use super::objects::{ApiVersions, Capabilities, Files, KubeVersion, chart_metadata};
use super::template::{TemplateSet, Value};
use super::values::{Values, coalesce, process_dependencies};
use crate::trace::Origins;

/// The release and cluster a chart is rendered for.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub release_name: String,
    pub namespace: String,
    /// `1.34` or `v1.34.2`; Helm 4's default when not given.
    pub kube_version: Option<String>,
    /// Extra `--api-versions`.
    pub api_versions: Vec<String>,
    pub is_upgrade: bool,
    pub revision: i64,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            release_name: "release-name".into(),
            namespace: "default".into(),
            kube_version: None,
            api_versions: Vec::new(),
            is_upgrade: false,
            revision: 1,
        }
    }
}

/// Helm 4's default Kubernetes version for rendering without a cluster.
pub const HELM_DEFAULT_KUBE_VERSION: &str = "v1.36.0";

/// A rendered chart: every template's output by path (`mychart/templates/a.yaml`), partials
/// left out, in path order.
#[derive(Debug, Clone, Default)]
pub struct Rendered {
    pub files: BTreeMap<String, String>,
    /// Where each stretch of each file's output came from (see [`super::template::Mark`]).
    pub marks: BTreeMap<String, super::template::Marks>,
    /// The CRDs of `crds/` directories, for `--include-crds`.
    pub crds: Vec<(String, String)>,
}

/// Renders `chart` with the user's values (already merged from `-f` and `--set*`); what Helm
/// would log is dropped ([`render_chart_logged`] keeps it).
pub fn render_chart(chart: &Chart, user: &Values, opts: &RenderOptions) -> Result<Rendered, Error> {
    render_chart_logged(chart, user, opts, &mut Vec::new())
}

/// [`render_chart`], writing what Helm logs on the way into `log` whether or not the render
/// succeeds (Helm prints its warnings before it fails).
pub fn render_chart_logged(
    chart: &Chart,
    user: &Values,
    opts: &RenderOptions,
    log: &mut crate::values::Warnings,
) -> Result<Rendered, Error> {
    // `helm template`/`install` warn before they render a chart its maintainers retired.
    if chart.metadata.get("deprecated") == Some(&Json::Bool(true)) {
        log.push("level=WARN msg=\"this chart is deprecated\"".to_string());
    }
    let kube = kube_version(opts.kube_version.as_deref())?;
    check_dependencies(chart)?;
    check_kube_version(chart, &kube.version)?;
    let mut chart = chart.clone();
    process_dependencies(&mut chart, user, log)?;
    let values = Json::Object(coalesce(&chart, user, log)?);
    super::schema::validate(&chart, &values)?;
    let caps = Value::Object(Rc::new(Capabilities {
        kube_version: Rc::new(kube),
        api_versions: Rc::new(ApiVersions {
            defaults: default_api_versions(),
            extra: opts.api_versions.clone(),
        }),
        helm_version: helm_version(),
    }));
    let mut release = BTreeMap::new();
    release.insert("Name".into(), Value::from(opts.release_name.as_str()));
    release.insert("Namespace".into(), Value::from(opts.namespace.as_str()));
    release.insert("IsUpgrade".into(), Value::Bool(opts.is_upgrade));
    release.insert("IsInstall".into(), Value::Bool(!opts.is_upgrade));
    release.insert("Revision".into(), Value::Int(opts.revision));
    release.insert("Service".into(), Value::from("Helm"));
    let top = Top {
        release: Value::map(release),
        capabilities: caps,
    };
    let mut templates = Vec::new();
    let mut crds = Vec::new();
    collect(
        &chart,
        &Value::from_json(&values),
        &top,
        "",
        true,
        &mut templates,
        &mut crds,
    );
    // Deeper templates first, so that a parent's `define` replaces a subchart's of the same name.
    templates.sort_by(|a, b| {
        let (ca, cb) = (a.name.matches('/').count(), b.name.matches('/').count());
        cb.cmp(&ca).then_with(|| b.name.cmp(&a.name))
    });
    // The templates' syntax trees, freed at once when the render ends.
    let arena = bumpalo::Bump::new();
    let mut set = TemplateSet::new(&arena);
    for t in &templates {
        set.add(&t.name, t.text.clone())?;
    }
    let mut files = BTreeMap::new();
    let mut marks = BTreeMap::new();
    for t in &templates {
        // Partials only define templates; they are not rendered.
        if is_partial(&t.name) {
            continue;
        }
        // One data map per chart, its `.Template` set for each template in turn (as Helm does).
        let mut tmpl = BTreeMap::new();
        tmpl.insert("Name".into(), Value::from(t.name.as_str()));
        tmpl.insert("BasePath".into(), Value::from(t.base_path.as_str()));
        if let Value::Map(m) = &t.data {
            m.borrow_mut().insert("Template".into(), Value::map(tmpl));
        }
        let (out, m) = set.render_marked(&t.name, &t.data)?;
        files.insert(t.name.clone(), out);
        marks.insert(t.name.clone(), m);
    }
    Ok(Rendered { files, marks, crds })
}

/// A partial (`_helpers.tpl`): its base name starts with `_`.
fn is_partial(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .is_some_and(|base| base.starts_with('_'))
}

struct Top {
    release: Value,
    capabilities: Value,
}

struct Renderable {
    name: String,
    text: std::sync::Arc<str>,
    /// The chart's data map (`.Values`, `.Chart`, …), shared by its templates.
    data: Value,
    base_path: String,
}

/// A chart's templates with their data, its subcharts' first (Helm's `recAllTpls`).
fn collect(
    chart: &Chart,
    values: &Value,
    top: &Top,
    parent_path: &str,
    is_root: bool,
    out: &mut Vec<Renderable>,
    crds: &mut Vec<(String, String)>,
) -> Value {
    let full_path = if parent_path.is_empty() {
        chart.name().to_string()
    } else {
        [parent_path, "/charts/", chart.name()].concat()
    };
    let own_values = if is_root {
        values.clone()
    } else {
        match values {
            Value::Map(m) => match m.borrow().get(chart.name()) {
                Some(v @ Value::Map(_)) => v.clone(),
                _ => Value::map(BTreeMap::new()),
            },
            _ => Value::map(BTreeMap::new()),
        }
    };
    let mut subcharts = BTreeMap::new();
    for sub in &chart.subcharts {
        let data = collect(sub, &own_values, top, &full_path, false, out, crds);
        subcharts.insert(sub.name().to_string(), data);
    }
    let mut data = BTreeMap::new();
    data.insert("Chart".into(), chart_metadata(chart, is_root));
    data.insert(
        "Files".into(),
        Value::Object(Rc::new(Files {
            files: chart
                .files
                .iter()
                .map(|f| (f.name.clone(), f.data.clone()))
                .collect(),
        })),
    );
    data.insert("Release".into(), top.release.clone());
    data.insert("Capabilities".into(), top.capabilities.clone());
    data.insert("Values".into(), own_values);
    data.insert("Subcharts".into(), Value::map(subcharts));
    let data = Value::map(data);
    let base_path = [&full_path, "/templates"].concat();
    let library = chart.is_library();
    for t in &chart.templates {
        // A library chart's only templates are its partials (Helm does not even parse the rest).
        if library && !is_partial(&t.name) {
            continue;
        }
        out.push(Renderable {
            name: [&full_path, "/", &t.name].concat(),
            text: t.text.clone(),
            data: data.clone(),
            base_path: base_path.clone(),
        });
    }
    for f in chart.crds() {
        crds.push((
            format!("{full_path}/{}", f.name),
            // Checked to be UTF-8 when the chart was loaded.
            String::from_utf8_lossy(&f.data).into_owned(),
        ));
    }
    data
}

/// `--kube-version` (`1.34`, `v1.34.2`) as Helm's capabilities hold it.
fn kube_version(given: Option<&str>) -> Result<KubeVersion, Error> {
    let text = given.unwrap_or(HELM_DEFAULT_KUBE_VERSION);
    let bare = text.trim().trim_start_matches('v');
    let parts: Vec<&str> = bare.split(['.', '-', '+']).collect();
    let number = |i: usize| parts.get(i).and_then(|p| p.parse::<u64>().ok());
    let (Some(major), Some(minor)) = (number(0), number(1)) else {
        return Err(Error::new(
            "--kube-version",
            format!("invalid kube version {text:?}: expected MAJOR.MINOR[.PATCH]"),
        ));
    };
    let patch = number(2).unwrap_or(0);
    Ok(KubeVersion {
        version: format!("v{major}.{minor}.{patch}"),
        major: major.to_string(),
        minor: minor.to_string(),
    })
}

/// Helm's `CheckDependencies` (pkg/action/install.go, which `helm template` and `install` run
/// before rendering): every dependency the chart's `Chart.yaml` declares must be among its
/// `charts/`, by name, whatever its condition says; only the chart asked for is checked.
fn check_dependencies(chart: &Chart) -> Result<(), Error> {
    let missing: Vec<&str> = chart
        .dependencies
        .iter()
        .filter(|d| !chart.subcharts.iter().any(|s| s.name() == d.name))
        .map(|d| d.name.as_str())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(Error::new(
        format!("{}/Chart.yaml", chart.source),
        format!(
            "an error occurred while checking for chart dependencies. You may need to run \
             'helm dependency build' to fetch missing dependencies: found in Chart.yaml, but \
             missing in charts/ directory: {}",
            missing.join(", ")
        ),
    ))
}

/// The chart's `kubeVersion` constraint, checked for it and every subchart.
fn check_kube_version(chart: &Chart, version: &str) -> Result<(), Error> {
    if let Some(constraint) = chart.kube_version() {
        let ok = super::template::semver::matches(constraint, version).map_err(|e| {
            Error::new(
                format!("{}/Chart.yaml", chart.source),
                format!(
                    "{}/Chart.yaml: kubeVersion {constraint:?}: {e}",
                    chart.source
                ),
            )
        })?;
        if !ok {
            return Err(Error::new(
                format!("{}/Chart.yaml", chart.source),
                format!(
                    "chart requires kubeVersion: {constraint} which is incompatible with Kubernetes {version}"
                ),
            ));
        }
    }
    for sub in &chart.subcharts {
        check_kube_version(sub, version)?;
    }
    Ok(())
}

/// `.Capabilities.HelmVersion`: the Helm release this engine renders as, v4.2.3 as its binary
/// reports itself (`helm version`).
fn helm_version() -> Value {
    let mut m = BTreeMap::new();
    m.insert("Version".into(), Value::from("v4.2.3"));
    m.insert(
        "GitCommit".into(),
        Value::from("43e8b7feece8beb0fcba47059ec9b522fd929a64"),
    );
    m.insert("GitTreeState".into(), Value::from("clean"));
    m.insert("GoVersion".into(), Value::from("go1.26.5"));
    Value::map(m)
}

/// The API group versions Helm 4 assumes without a cluster (client-go's built-in scheme and
/// the CRD API), as helm-python-sdk 0.2.2's `.Capabilities.APIVersions.Has` answers.
pub fn default_api_versions() -> &'static [&'static str] {
    &[
        "v1",
        "admissionregistration.k8s.io/v1",
        "admissionregistration.k8s.io/v1alpha1",
        "admissionregistration.k8s.io/v1beta1",
        "apiextensions.k8s.io/v1",
        "apiextensions.k8s.io/v1beta1",
        "apps/v1",
        "apps/v1beta1",
        "apps/v1beta2",
        "authentication.k8s.io/v1",
        "authentication.k8s.io/v1alpha1",
        "authentication.k8s.io/v1beta1",
        "authorization.k8s.io/v1",
        "authorization.k8s.io/v1beta1",
        "autoscaling/v1",
        "autoscaling/v2",
        "batch/v1",
        "batch/v1beta1",
        "certificates.k8s.io/v1",
        "certificates.k8s.io/v1alpha1",
        "certificates.k8s.io/v1beta1",
        "coordination.k8s.io/v1",
        "coordination.k8s.io/v1alpha2",
        "coordination.k8s.io/v1beta1",
        "discovery.k8s.io/v1",
        "discovery.k8s.io/v1beta1",
        "events.k8s.io/v1",
        "events.k8s.io/v1beta1",
        "extensions/v1beta1",
        "flowcontrol.apiserver.k8s.io/v1",
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "internal.apiserver.k8s.io/v1alpha1",
        "networking.k8s.io/v1",
        "networking.k8s.io/v1beta1",
        "node.k8s.io/v1",
        "node.k8s.io/v1alpha1",
        "node.k8s.io/v1beta1",
        "policy/v1",
        "policy/v1beta1",
        "rbac.authorization.k8s.io/v1",
        "rbac.authorization.k8s.io/v1alpha1",
        "rbac.authorization.k8s.io/v1beta1",
        "resource.k8s.io/v1",
        "resource.k8s.io/v1alpha3",
        "resource.k8s.io/v1beta1",
        "resource.k8s.io/v1beta2",
        "scheduling.k8s.io/v1",
        "scheduling.k8s.io/v1beta1",
        "storage.k8s.io/v1",
        "storage.k8s.io/v1alpha1",
        "storage.k8s.io/v1beta1",
        "storagemigration.k8s.io/v1beta1",
    ]
}

/// Helm's install order of kinds (`releaseutil.InstallOrder`).
const INSTALL_ORDER: &[&str] = &[
    "PriorityClass",
    "Namespace",
    "NetworkPolicy",
    "ResourceQuota",
    "LimitRange",
    "PodSecurityPolicy",
    "PodDisruptionBudget",
    "ServiceAccount",
    "Secret",
    "SecretList",
    "ConfigMap",
    "StorageClass",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "CustomResourceDefinition",
    "ClusterRole",
    "ClusterRoleList",
    "ClusterRoleBinding",
    "ClusterRoleBindingList",
    "Role",
    "RoleList",
    "RoleBinding",
    "RoleBindingList",
    "Service",
    "DaemonSet",
    "Pod",
    "ReplicationController",
    "ReplicaSet",
    "Deployment",
    "HorizontalPodAutoscaler",
    "StatefulSet",
    "Job",
    "CronJob",
    "IngressClass",
    "Ingress",
    "APIService",
    "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration",
];

/// One document of the output.
struct Manifest {
    source: String,
    content: String,
    /// Where `content` starts in its file's output.
    offset: usize,
    kind: String,
    hook: bool,
    test: bool,
}

/// What `helm template` prints: each document under `---` and `# Source:`, manifests sorted in
/// Helm's install order (stable within a kind), then hooks; NOTES.txt left out.
/// What Helm logs on the way (a hook it does not know) goes into `log`.
pub fn template_output(
    rendered: &Rendered,
    include_crds: bool,
    skip_tests: bool,
    log: &mut crate::values::Warnings,
) -> Result<String, Error> {
    output(rendered, include_crds, skip_tests, None, log).map(|(text, _)| text)
}

/// [`template_output`], with where each stretch of it came from: the template file and place
/// that wrote it, through `{{ template }}`; what an action printed is the action's, with the
/// value it printed and where `values` set it.
pub fn template_output_traced(
    rendered: &Rendered,
    include_crds: bool,
    skip_tests: bool,
    values: &super::origin::ValuesSources,
    log: &mut crate::values::Warnings,
) -> Result<(String, Origins), Error> {
    output(rendered, include_crds, skip_tests, Some(values), log)
}

/// A rendered file's documents as Helm 4.2's `SplitManifests` cuts them: at `---` with the
/// whitespace around it, after the file's leading whitespace. Its regex is Go's, whose `\s` is
/// ASCII's `[\t\n\f\r ]`: the regex crate's `\s` would take Unicode's spaces too (a no-break
/// space before a separator would leave the document).
fn split_manifests(text: &str) -> regex::Split<'static, '_> {
    static SEPARATOR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"(?:^|[\t\n\f\r ]*\n)---[\t\n\f\r ]*").expect("valid")
    });
    SEPARATOR.split(text.trim_start())
}

/// The output, and its origins when `values` are given (a plain render needs none).
fn output(
    rendered: &Rendered,
    include_crds: bool,
    skip_tests: bool,
    values: Option<&super::origin::ValuesSources>,
    log: &mut crate::values::Warnings,
) -> Result<(String, Origins), Error> {
    let mut manifests = Vec::new();
    let mut hooks = Vec::new();
    for (path, text) in &rendered.files {
        if path.ends_with("NOTES.txt") || text.trim().is_empty() {
            continue;
        }
        // Helm 4.2's `SplitManifests`: the separator takes the whitespace around it, and each
        // document loses only its leading whitespace, so the last one of a file keeps its
        // trailing blank lines (a `|+` block's content).
        for doc in split_manifests(text) {
            if doc.trim().is_empty() {
                continue;
            }
            let doc = doc.trim_start();
            let Head { kind, hook } = manifest_head(path, doc)?;
            // Helm's `SortManifests`: a hook's events, each trimmed and lowercased; a document
            // naming one Helm does not know is left out, and logged.
            let events: Vec<String> = hook
                .iter()
                .flat_map(|h| h.split(','))
                .map(|e| e.trim().to_lowercase())
                .collect();
            if let Some(hook) = &hook
                && events.iter().any(|e| !HOOK_EVENTS.contains(&e.as_str()))
            {
                log.push(crate::values::log_line(
                    "INFO",
                    "skipping unknown hooks",
                    &[("hookTypes", hook)],
                ));
                continue;
            }
            let m = Manifest {
                source: path.clone(),
                content: doc.to_string(),
                // `doc` is a slice of `text`.
                offset: doc.as_ptr() as usize - text.as_ptr() as usize,
                kind,
                hook: hook.is_some(),
                test: events.iter().any(|e| e == "test" || e == "test-success"),
            };
            if m.hook {
                hooks.push(m);
            } else {
                manifests.push(m);
            }
        }
    }
    let rank = |kind: &str| INSTALL_ORDER.iter().position(|k| *k == kind);
    let order = |a: &Manifest, b: &Manifest| match (rank(&a.kind), rank(&b.kind)) {
        (Some(x), Some(y)) => x.cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.kind.cmp(&b.kind),
    };
    manifests.sort_by(order);
    hooks.sort_by(order);
    // `helm template` prints the release's manifest (CRDs, then manifests) with the whitespace
    // around it trimmed, then each hook as it is.
    let mut release = String::new();
    // Where each manifest's content lands in `release` (CRDs are copied files: no marks).
    let mut placed: Vec<(usize, &Manifest)> = Vec::new();
    if include_crds {
        for (path, text) in &rendered.crds {
            release.push_str(&format!("---\n# Source: {path}\n{text}\n"));
        }
    }
    for m in &manifests {
        release.push_str(&format!("---\n# Source: {}\n", m.source));
        placed.push((release.len(), m));
        release.push_str(&m.content);
        release.push('\n');
    }
    // (`fmt.Fprintln(&manifests, strings.TrimSpace(rel.Manifest))`: a line even when empty.)
    let trimmed = release.len() - release.trim_start().len();
    let mut out = String::from(release.trim());
    out.push('\n');
    let mut placed: Vec<(usize, &Manifest)> = placed
        .into_iter()
        .map(|(at, m)| (at.saturating_sub(trimmed), m))
        .collect();
    for h in hooks.iter().filter(|h| !(skip_tests && h.test)) {
        out.push_str(&format!("---\n# Source: {}\n", h.source));
        placed.push((out.len(), h));
        out.push_str(&h.content);
        out.push('\n');
    }
    let origins = values.map_or_else(Origins::default, |v| trace(rendered, &placed, v));
    Ok((out, origins))
}

/// The origins of the output's documents: each one's stretch of its file's marks, moved to
/// where the document landed; what lies between documents comes from no template.
fn trace(
    rendered: &Rendered,
    placed: &[(usize, &Manifest)],
    values: &super::origin::ValuesSources,
) -> Origins {
    let mut origins = Origins::default();
    let mut files: HashMap<(*const str, u32), u32> = HashMap::new();
    origins.push(0, 0, false, None);
    for &(at, m) in placed {
        let Some(marks) = rendered.marks.get(&m.source) else {
            origins.push(at + m.content.len(), 0, false, None);
            continue;
        };
        let (start, end) = (m.offset, m.offset + m.content.len());
        // The mark in force where the document starts, then those inside it.
        let first = marks
            .marks
            .partition_point(|k| k.out as usize <= start)
            .saturating_sub(1);
        for k in marks.marks[first..]
            .iter()
            .take_while(|k| (k.out as usize) < end)
        {
            let (name, source) = &marks.files[k.file as usize];
            // A subchart's template reads the subchart's values (`top/charts/a/templates/…`:
            // the chain is `a`).
            let site = |path: &str| {
                let chain: Vec<&str> = name
                    .split("/charts/")
                    .skip(1)
                    .filter_map(|part| part.split('/').next())
                    .collect();
                if chain.is_empty() {
                    values.site(path)
                } else {
                    values.subchart_site(&chain, path)
                }
            };
            if k.hole {
                if let Some(path) = marks.values.get(k.value as usize)
                    && (k.out as usize) >= start
                {
                    origins.add_hole(at + (k.out as usize - start), site(path));
                }
                continue;
            }
            let file = *files
                .entry((Arc::as_ptr(source), k.file))
                .or_insert_with(|| origins.add_file(Arc::from(&**name), source.clone()));
            let from = (k.out as usize).max(start);
            let src = if k.verbatim {
                k.src as usize + (from - k.out as usize)
            } else {
                k.src as usize
            };
            origins.push(at + (from - start), src, k.verbatim, Some(file));
            let path = if k.verbatim {
                None
            } else if let Some(path) = marks.values.get(k.value as usize) {
                Some(path.to_string())
            } else {
                super::origin::action_values_path(source, k.src as usize)
            };
            if let Some(path) = path {
                origins.set_value(site(&path));
            }
        }
        origins.push(at + m.content.len(), 0, false, None);
    }
    origins
}

/// Helm's hook events (`events` in `pkg/release/v1/util/manifest_sorter.go`).
const HOOK_EVENTS: [&str; 10] = [
    "pre-install",
    "post-install",
    "pre-delete",
    "post-delete",
    "pre-upgrade",
    "post-upgrade",
    "pre-rollback",
    "post-rollback",
    "test",
    "test-success",
];

/// What `helm template` reads of a rendered document (Helm's `SimpleHead`): its kind, for the
/// install order, and its `helm.sh/hook` annotation.
#[derive(Debug, PartialEq)]
struct Head {
    kind: String,
    hook: Option<String>,
}

/// A document's head as Helm reads it: `yaml.Unmarshal` from sigs.k8s.io/yaml into
/// `SimpleHead`, which reads the YAML (go-yaml v2), converts it to JSON with the struct as its
/// target, and decodes that. The target makes a scalar that lands in a string field a string (a
/// boolean `true`, a number as Go formats it), so `kind: yes` is the kind `true`; a list or map
/// there, or a `metadata` or `annotations` that is no map, is Go's decoding error, the first in
/// the JSON's (sorted) key order.
fn manifest_head(path: &str, doc: &str) -> Result<Head, Error> {
    match plain_head(doc) {
        Some(head) => Ok(head),
        None => decoded_head(path, doc),
    }
}

/// [`manifest_head`] the full way: the general parser, and the decoder's checks.
fn decoded_head(path: &str, doc: &str) -> Result<Head, Error> {
    use yaml_value::Value;
    let fail = |detail: String| Error::new(path, format!("YAML parse error on {path}: {detail}"));
    let (docs, error) = yaml_value::yaml::parse_stream_go_yaml_v2(doc);
    if let Some(e) = error {
        return Err(fail(crate::values::yaml_to_json_error(&e)));
    }
    let value = docs.into_iter().next().map_or(Value::Null, |d| d.value);
    let decoding = |what: String| fail(crate::values::json_decode_error(&what));
    // (Only a value an error names is converted, to name its JSON type.)
    let json_type = |v: &Value| crate::values::go_json_type(&Json::from(v));
    // A value for a string field, as the JSON conversion makes it one (null stays null: "").
    let string = |v: &Value, field: &str| -> Result<String, Error> {
        Ok(match v {
            Value::String(s) => s.to_string(),
            Value::Null => String::new(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => i.to_string(),
                (_, Some(u), _) => u.to_string(),
                (_, _, f) => yaml_value::format_float_g32(f.unwrap_or_default()),
            },
            other => {
                return Err(decoding(format!(
                    "{} into Go struct field {field} of type string",
                    json_type(other)
                )));
            }
        })
    };
    let map = match &value {
        Value::Null => {
            return Ok(Head {
                kind: String::new(),
                hook: None,
            });
        }
        Value::Object(m) => m,
        other => {
            return Err(decoding(format!(
                "{} into Go value of type util.SimpleHead",
                json_type(other)
            )));
        }
    };
    if let Some(v) = map.get("apiVersion") {
        string(v, "SimpleHead.apiVersion")?;
    }
    let kind = map
        .get("kind")
        .map(|v| string(v, "SimpleHead.kind"))
        .transpose()?
        .unwrap_or_default();
    let mut hook = None;
    match map.get("metadata") {
        None | Some(Value::Null) => {}
        Some(Value::Object(meta)) => {
            match meta.get("annotations") {
                None | Some(Value::Null) => {}
                Some(Value::Object(annotations)) => {
                    // (The map's entries are sorted by key, as the JSON's are.)
                    for (key, v) in annotations {
                        let v = string(v, ".metadata.annotations")?;
                        if key.as_str() == "helm.sh/hook" {
                            hook = Some(v);
                        }
                    }
                }
                Some(other) => {
                    return Err(decoding(format!(
                        "{} into Go struct field .metadata.annotations of type map[string]string",
                        json_type(other)
                    )));
                }
            }
            if let Some(name) = meta.get("name") {
                string(name, ".metadata.name")?;
            }
        }
        Some(other) => {
            return Err(decoding(format!(
                "{} into Go struct field SimpleHead.metadata of type struct {{ Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }}",
                json_type(other)
            )));
        }
    }
    Ok(Head { kind, hook })
}

/// The head of a document Helm reads without a doubt, found without the full parse: most of a
/// big chart's `helm template` time went to parsing whole manifests with the general parser to
/// read two fields. The document must be one the block reader takes whole (block YAML, which
/// go-yaml v2 reads without error too), with no infinity or NaN anywhere (which Helm's JSON
/// conversion refuses), `metadata` and annotations maps of strings, and kind and hook strings
/// that YAML 1.1 and 1.2 read alike (a letter first, and no boolean or null word). Anything else
/// goes the full way.
fn plain_head(doc: &str) -> Option<Head> {
    let bytes = doc.as_bytes();
    let non_finite = memchr::memchr_iter(b'.', bytes).any(|i| {
        bytes.get(i + 1..i + 4).is_some_and(|word| {
            word.eq_ignore_ascii_case(b"inf") || word.eq_ignore_ascii_case(b"nan")
        })
    });
    if non_finite {
        return None;
    }
    let with_newline;
    let text = if doc.ends_with('\n') {
        doc
    } else {
        with_newline = format!("{doc}\n");
        &with_newline
    };
    let parsed = yaml_value::block::read_document(text, 0)?;
    let plain = |s: &str| -> Option<String> {
        let first_is_letter = s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic());
        let word = matches!(
            s.to_ascii_lowercase().as_str(),
            "y" | "yes" | "n" | "no" | "on" | "off" | "true" | "false" | "null"
        );
        (first_is_letter && !word).then(|| s.to_string())
    };
    let map = parsed.value.as_object()?;
    let plain_field = |v: &yaml_value::Value| plain(v.as_str()?);
    map.get("apiVersion")
        .map(plain_field)
        .unwrap_or(Some(String::new()))?;
    let kind = map
        .get("kind")
        .map(plain_field)
        .unwrap_or(Some(String::new()))?;
    let mut hook = None;
    if let Some(meta) = map.get("metadata").filter(|m| !m.is_null()) {
        let meta = meta.as_object()?;
        meta.get("name").map(|n| n.as_str()).unwrap_or(Some(""))?;
        if let Some(annotations) = meta.get("annotations") {
            for (key, v) in annotations.as_object()? {
                let v = v.as_str()?;
                if key.as_str() == "helm.sh/hook" {
                    hook = Some(plain(v)?);
                }
            }
        }
    }
    Some(Head { kind, hook })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_split_at_separators_as_gos_regex_cuts_them() {
        let docs: Vec<&str> =
            split_manifests("\n\na: 1\u{a0}\n---\nb: 2\n \n---  \t\nc: 3\n\n").collect();
        assert_eq!(docs, ["a: 1\u{a0}", "b: 2", "c: 3\n\n"]);
        let vertical_tab: Vec<&str> = split_manifests("a: 1\n---\u{b}b: 2\n").collect();
        assert_eq!(vertical_tab, ["a: 1", "\u{b}b: 2\n"]);
    }

    /// The short way to a head gives what the full way gives, wherever it is taken; and it is not
    /// taken where YAML 1.1 and 1.2 could read the head apart, or Helm would refuse the document.
    #[test]
    fn the_plain_head_is_the_decoded_head() {
        let taken = [
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n",
            "# Source: x\nkind: Job\nmetadata:\n  annotations:\n    helm.sh/hook: pre-install, test\n    other: \"1\"\n",
            "kind: 'Service'\nmetadata: {name: b, annotations: {}}\n",
            "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: 3\n",
            "kind: Secret\nmetadata:\n",
        ];
        for doc in taken {
            let plain = plain_head(doc).unwrap_or_else(|| panic!("not taken: {doc}"));
            assert_eq!(
                Some(&plain),
                decoded_head("t.yaml", doc).ok().as_ref(),
                "{doc}"
            );
        }
        let left = [
            "kind: yes\n",
            "kind: \"12\"\n",
            "apiVersion: true\nkind: A\n",
            "kind: A\nmetadata:\n  annotations:\n    helm.sh/hook: on\n",
            "kind: A\nmetadata:\n  annotations:\n    weight: 5\n",
            "kind: A\nmetadata: [a]\n",
            "kind: A\nspec:\n  x: .inf\n",
            "kind: &k A\nx: *k\n",
            "- a\n- b\n",
        ];
        for doc in left {
            assert_eq!(plain_head(doc), None, "{doc}");
        }
        // The full way, as Helm reads these.
        let head = |doc: &str| decoded_head("t.yaml", doc).map_err(|e| e.message);
        assert_eq!(head("kind: yes\n").unwrap().kind, "true");
        assert_eq!(head("kind: 0x1F\n").unwrap().kind, "31");
        assert_eq!(head("kind: 123456789.5\n").unwrap().kind, "1.2345679e+08");
        assert_eq!(
            head("kind: A\nmetadata: {annotations: {helm.sh/hook: ~}}\n")
                .unwrap()
                .hook,
            Some(String::new())
        );
        assert!(
            head("kind: A\nmetadata: {name: [1], annotations: {a: {b: 1}}}\n")
                .unwrap_err()
                .ends_with(
                    "cannot unmarshal object into Go struct field .metadata.annotations of type string"
                )
        );
        assert!(head("kind: [1]\napiVersion: [1]\n").unwrap_err().ends_with(
            "cannot unmarshal array into Go struct field SimpleHead.apiVersion of type string"
        ));
    }
}
