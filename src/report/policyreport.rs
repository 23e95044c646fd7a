//! `--format policyreport` and `--format openreports`: the findings as the policy report objects
//! Kyverno writes, so `kubectl get … -o yaml | winguard lint - --format policyreport | kubectl
//! apply -f -` audits a running cluster into the same reports Kyverno's and Policy Reporter's
//! dashboards read.
//!
//! `wgpolicyk8s.io/v1alpha2` (PolicyReport, ClusterPolicyReport) is what Kyverno writes by
//! default; `openreports.io/v1alpha1` (Report, ClusterReport, the same results under a new group,
//! with the engine named at the top as `source`) is its successor, which Kyverno writes with
//! `--openreportsEnabled`. One report per namespace for namespaced objects, one cluster report for
//! cluster-scoped ones; a result per finding. Written as a YAML stream, one object a document.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Located, Report};
use crate::rules::Severity;

/// Which report API to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Api {
    WgPolicy,
    OpenReports,
}

impl Api {
    fn api_version(self) -> &'static str {
        match self {
            Api::WgPolicy => "wgpolicyk8s.io/v1alpha2",
            Api::OpenReports => "openreports.io/v1alpha1",
        }
    }

    fn kind(self, cluster: bool) -> &'static str {
        match (self, cluster) {
            (Api::WgPolicy, false) => "PolicyReport",
            (Api::WgPolicy, true) => "ClusterPolicyReport",
            (Api::OpenReports, false) => "Report",
            (Api::OpenReports, true) => "ClusterReport",
        }
    }
}

/// The engine's name in every result (and, for OpenReports, the report's `source`).
const SOURCE: &str = "winguard";
/// The reports' name: one per namespace, so the same in each.
const NAME: &str = "winguard";

/// Kinds of the core and common APIs that are cluster-scoped: their findings go into the cluster
/// report. Anything else is taken to be namespaced.
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CSIDriver",
    "CSINode",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ReportObject<'a> {
    api_version: &'static str,
    kind: &'static str,
    metadata: Metadata<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<&'static str>,
    summary: Summary,
    results: Vec<ResultEntry<'a>>,
}

#[derive(Serialize)]
struct Metadata<'a> {
    name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    labels: BTreeMap<&'static str, &'static str>,
}

#[derive(Serialize, Default)]
struct Summary {
    pass: u64,
    fail: u64,
    warn: u64,
    error: u64,
    skip: u64,
}

#[derive(Serialize)]
struct ResultEntry<'a> {
    policy: &'a str,
    rule: &'a str,
    category: &'static str,
    severity: &'static str,
    result: &'static str,
    scored: bool,
    source: &'static str,
    message: String,
    timestamp: Timestamp,
    resources: Vec<Subject<'a>>,
    properties: BTreeMap<&'static str, String>,
}

#[derive(Serialize, Clone, Copy)]
struct Timestamp {
    seconds: i64,
    nanos: i32,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Subject<'a> {
    api_version: &'a str,
    kind: &'a str,
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    namespace: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    uid: Option<&'a str>,
}

/// A finding's report result and its report's severity (`critical|high|medium|low|info`): an
/// error fails, a warning or a note warns.
fn outcome(severity: Severity) -> (&'static str, &'static str) {
    match severity {
        Severity::Error => ("fail", "high"),
        Severity::Warning => ("warn", "medium"),
        Severity::Info => ("warn", "info"),
    }
}

fn result_of(f: &Located, timestamp: Timestamp) -> ResultEntry<'_> {
    let (result, severity) = outcome(f.finding.severity);
    let object = &f.object;
    let mut properties = BTreeMap::new();
    properties.insert("pointer", f.finding.pointer.clone());
    properties.insert("location", format!("{}:{}:{}", f.file, f.line, f.column));
    ResultEntry {
        policy: &f.finding.rule,
        rule: &f.finding.rule,
        category: "Windows",
        severity,
        result,
        scored: result == "fail",
        source: SOURCE,
        message: f.finding.full_message(),
        timestamp,
        resources: vec![Subject {
            api_version: &object.api_version,
            kind: &object.kind,
            name: &object.name,
            namespace: object.namespace.as_deref(),
            uid: object.uid.as_deref(),
        }],
        properties,
    }
}

pub(super) fn render(report: &Report, api: Api) -> String {
    let now = jiff::Timestamp::now();
    let timestamp = Timestamp {
        seconds: now.as_second(),
        nanos: 0,
    };
    // Reports by namespace (None: the cluster report), in namespace order.
    let mut groups: BTreeMap<(bool, Option<&str>), Vec<ResultEntry<'_>>> = BTreeMap::new();
    for f in &report.findings {
        let cluster = CLUSTER_SCOPED.contains(&f.object.kind.as_str());
        let namespace = if cluster {
            None
        } else {
            f.object.namespace.as_deref()
        };
        groups
            .entry((cluster, namespace))
            .or_default()
            .push(result_of(f, timestamp));
    }
    let mut out = String::new();
    for ((cluster, namespace), results) in groups {
        let mut summary = Summary::default();
        for r in &results {
            match r.result {
                "fail" => summary.fail += 1,
                _ => summary.warn += 1,
            }
        }
        let object = ReportObject {
            api_version: api.api_version(),
            kind: api.kind(cluster),
            metadata: Metadata {
                name: NAME,
                namespace,
                labels: BTreeMap::from([("app.kubernetes.io/managed-by", SOURCE)]),
            },
            source: (api == Api::OpenReports).then_some(SOURCE),
            summary,
            results,
        };
        out.push_str("---\n");
        out.push_str(&serde_yaml_ng::to_string(&object).unwrap_or_default());
    }
    out
}
