//! The cluster as the Windows model reads it: plain values the config fills in (the config's
//! file format, schema and defaults stay in `crate::config`).

use std::collections::BTreeMap;

use regex::Regex;

use crate::value::Value;

/// What the model needs to know of the cluster beyond the inputs.
#[derive(Debug, Clone, Default)]
pub struct ClusterProfile {
    /// The Kubernetes version, as (major, minor).
    pub version: (u64, u64),
    /// Feature gates set explicitly; any other gate takes its version's default.
    pub feature_gates: BTreeMap<String, bool>,
    /// The Windows builds of the cluster's nodes; empty when unknown.
    pub node_builds: Vec<u64>,
    /// RuntimeClasses defined outside the inputs that schedule onto Windows nodes.
    pub runtime_classes: Vec<WindowsRuntimeClass>,
    /// The cluster's nodes and the file they were read from (`--nodes`), when known: which
    /// nodes a pod's node selection matches tells its OS and builds.
    pub nodes: Option<(String, std::sync::Arc<Vec<super::nodes::Node>>)>,
}

/// A RuntimeClass the cluster has that schedules onto Windows nodes.
#[derive(Debug, Clone)]
pub struct WindowsRuntimeClass {
    pub name: String,
    /// The `node.kubernetes.io/windows-build` its scheduling selects, if any.
    pub build: Option<String>,
    /// The tolerations its scheduling adds, as `{key, value, effect}` maps.
    pub tolerations: Vec<Value>,
}

impl ClusterProfile {
    /// Whether a feature gate is on (see [`gate_on`]) at the cluster's version.
    pub fn gate(&self, name: &str, default_on_since: Option<(u64, u64)>) -> bool {
        gate_on(&self.feature_gates, name, default_on_since, self.version)
    }
}

/// Whether a feature gate is on at `version`: as set in `feature_gates`, else by its default
/// (`default_on_since`: the first version where the gate is on by default; `None` for a gate
/// off by default in every version).
pub(crate) fn gate_on(
    feature_gates: &BTreeMap<String, bool>,
    name: &str,
    default_on_since: Option<(u64, u64)>,
    version: (u64, u64),
) -> bool {
    match feature_gates.get(name) {
        Some(on) => *on,
        None => default_on_since.is_some_and(|since| version >= since),
    }
}

/// Images the user classifies beyond the catalog: regexes over the whole image reference.
#[derive(Debug, Clone, Default)]
pub struct ImagePatterns {
    pub windows: Vec<Regex>,
    pub linux: Vec<Regex>,
    /// Images whose entrypoint is `ServiceMonitor.exe w3svc`.
    pub iis: Vec<Regex>,
}
