//! Kubernetes object shapes that every workload shares, Windows or not: where a workload kind
//! keeps its pod template, how a label selector selects, and the field shapes the API server
//! guarantees ([`shape`]). The ground floor: it knows values,
//! nothing above them, so the loader, the engine and the Windows model all read it.

pub mod api_lifecycle;
pub mod shape;

use crate::value::Doc;

/// Where a workload kind keeps its pod template: the pointers of the spec and of its metadata.
pub fn pod_template_paths(kind: &str) -> Option<(&'static str, &'static str)> {
    Some(match kind {
        "Pod" => ("/spec", "/metadata"),
        "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "ReplicationController"
        | "Job" => ("/spec/template/spec", "/spec/template/metadata"),
        "CronJob" => (
            "/spec/jobTemplate/spec/template/spec",
            "/spec/jobTemplate/spec/template/metadata",
        ),
        _ => return None,
    })
}

/// Whether an equality label selector (a map) selects a label set; an empty selector selects
/// nothing (a Service without a selector has its endpoints managed by hand).
pub(crate) fn selector_matches(selector: &Doc<'_>, labels: &Doc<'_>) -> bool {
    let Some(sel) = selector.as_object() else {
        return false;
    };
    !sel.is_empty()
        && sel
            .iter()
            .all(|(k, v)| labels.get(k.as_str()).is_some_and(|l| l == v))
}

/// Parses `1.25`, `v1.25.3`, `1.25+` into (major, minor).
pub fn parse_version(text: &str) -> Option<(u64, u64)> {
    let s = text.trim().trim_start_matches('v');
    let mut parts = s.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor_text = parts.next().unwrap_or("0");
    let digits = minor_text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(minor_text.len());
    Some((major, minor_text[..digits].parse().unwrap_or(0)))
}
