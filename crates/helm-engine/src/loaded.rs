//! A chart as it is loaded: its files in their places, its metadata, values and subcharts. The
//! loader ([`super::load`]) makes it; values, rendering and the schema check read it.

use std::sync::Arc;

use serde_json::{Map, Value as Json};

/// One file of a chart, by its path inside the chart (`templates/deployment.yaml`).
#[derive(Debug, Clone)]
pub struct File {
    pub name: String,
    /// Shared: rendering hands files to `.Files` without copying them.
    pub data: Arc<[u8]>,
}

/// A template file, its text read once (shared with the renders that parse it).
#[derive(Debug, Clone)]
pub struct Template {
    pub name: String,
    pub text: Arc<str>,
}

/// A dependency as `Chart.yaml` (or v1's `requirements.yaml`) declares it.
#[derive(Debug, Clone, Default)]
pub struct Dependency {
    pub name: String,
    /// The version constraint (`~1.2`, `17.x.x`); a subchart that doesn't satisfy it gets
    /// neither the alias nor the condition (Helm's `IsCompatibleRange`).
    pub version: String,
    pub alias: Option<String>,
    pub condition: Option<String>,
    pub tags: Vec<String>,
    pub import_values: Vec<Json>,
    pub enabled: bool,
    /// The raw entry, for `.Chart.Dependencies`.
    pub raw: Map<String, Json>,
}

/// A loaded chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// `Chart.yaml` as written. (Shared, like the values: a render works on a copy of the
    /// chart, which is then cheap.)
    pub metadata: Arc<Map<String, Json>>,
    pub templates: Vec<Template>,
    /// Every other file, for `.Files` (`crds/` included, as in Helm).
    pub files: Vec<File>,
    /// `values.yaml`, numbers as JSON reads them.
    pub values: Arc<Map<String, Json>>,
    /// `values.yaml` as written, to find the line that sets a value.
    pub values_text: Option<Arc<str>>,
    pub schema: Option<Arc<Json>>,
    pub dependencies: Vec<Dependency>,
    /// The charts under `charts/`.
    pub subcharts: Vec<Chart>,
    /// Where the chart came from, for errors (`mychart/`, `mychart/charts/sub.tgz`).
    pub source: String,
    /// What the chart's own file names join to, to name a file as the user can find it: the
    /// directory as given (`deploy/mychart`), or for an archive the archive and the member's
    /// top directory (`mychart-1.0.0.tgz!/mychart`, the `!/` of jar URLs).
    pub location: String,
}

impl Chart {
    pub fn name(&self) -> &str {
        self.metadata
            .get("name")
            .and_then(Json::as_str)
            .unwrap_or("")
    }
    pub fn version(&self) -> &str {
        self.metadata
            .get("version")
            .and_then(Json::as_str)
            .unwrap_or("")
    }
    pub fn is_library(&self) -> bool {
        self.metadata
            .get("type")
            .and_then(Json::as_str)
            .is_some_and(|t| t.eq_ignore_ascii_case("library"))
    }
    pub fn kube_version(&self) -> Option<&str> {
        self.metadata
            .get("kubeVersion")
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
    }
    /// The CRD files (`crds/*.yaml`, `.yml`, `.json`).
    pub fn crds(&self) -> impl Iterator<Item = &File> {
        self.files.iter().filter(|f| {
            f.name.starts_with("crds/")
                && (f.name.ends_with(".yaml")
                    || f.name.ends_with(".yml")
                    || f.name.ends_with(".json"))
        })
    }
}
