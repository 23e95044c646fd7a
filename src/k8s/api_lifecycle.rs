//! Which built-in API versions the API server stops serving, and when: the lifecycle Kubernetes
//! declares for each beta API (`// +k8s:prerelease-lifecycle-gen` tags, generated into
//! `zz_generated.prerelease-lifecycle.go` of `k8s.io/api`, `k8s.io/apiextensions-apiserver` and
//! `k8s.io/kube-aggregator`; the API server warns and stops serving by them), with the
//! replacement and its notable changes from the Deprecated API Migration Guide
//! (<https://kubernetes.io/docs/reference/using-api/deprecation-guide/>, each row's anchor).
//!
//! A table here rather than in a catalog file: it is Kubernetes' own data, fixed for each
//! release, and the ground floor reads no files.

/// One API version of one kind, as the lifecycle tags give it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ApiLifecycle {
    pub api_version: &'static str,
    pub kind: &'static str,
    /// The minor version (of 1.x) from which the API server warns that the version is deprecated.
    pub deprecated: u32,
    /// The minor version from which it is no longer served.
    pub removed: u32,
    /// The API version to write instead (the kind stays), where there is one.
    pub replacement: Option<&'static str>,
    /// The minor version from which the replacement is served (the guide's "available since";
    /// 0 where the guide has no section for it).
    pub replacement_since: u32,
    /// The guide lists no notable changes: rewriting `apiVersion` alone keeps the object's
    /// meaning (no field renamed, no default changed).
    pub same_schema: bool,
    /// The guide's section for the removal.
    pub guide: &'static str,
}

const fn api(
    api_version: &'static str,
    kind: &'static str,
    (deprecated, removed): (u32, u32),
    replacement: Option<&'static str>,
    replacement_since: u32,
    same_schema: bool,
    guide: &'static str,
) -> ApiLifecycle {
    ApiLifecycle {
        api_version,
        kind,
        deprecated,
        removed,
        replacement,
        replacement_since,
        same_schema,
        guide,
    }
}

const APPS: Option<&str> = Some("apps/v1");

/// Every deprecated built-in API version of a kind users write, oldest removal first.
#[rustfmt::skip]
pub static API_LIFECYCLES: &[ApiLifecycle] = &[
    // v1.16: workloads need `spec.selector` in apps/v1, and defaults changed.
    api("extensions/v1beta1", "Deployment", (8, 16), APPS, 9, false, "deployment-v116"),
    api("apps/v1beta1", "Deployment", (8, 16), APPS, 9, false, "deployment-v116"),
    api("apps/v1beta2", "Deployment", (9, 16), APPS, 9, false, "deployment-v116"),
    api("extensions/v1beta1", "DaemonSet", (8, 16), APPS, 9, false, "daemonset-v116"),
    api("apps/v1beta2", "DaemonSet", (9, 16), APPS, 9, false, "daemonset-v116"),
    api("apps/v1beta1", "StatefulSet", (8, 16), APPS, 9, false, "statefulset-v116"),
    api("apps/v1beta2", "StatefulSet", (9, 16), APPS, 9, false, "statefulset-v116"),
    api("extensions/v1beta1", "ReplicaSet", (8, 16), APPS, 9, false, "replicaset-v116"),
    api("apps/v1beta1", "ReplicaSet", (8, 16), APPS, 9, false, "replicaset-v116"),
    api("apps/v1beta2", "ReplicaSet", (9, 16), APPS, 9, false, "replicaset-v116"),
    api("apps/v1beta1", "ControllerRevision", (8, 16), APPS, 9, false, "v1-16"),
    api("apps/v1beta2", "ControllerRevision", (9, 16), APPS, 9, false, "v1-16"),
    api("extensions/v1beta1", "NetworkPolicy", (9, 16), Some("networking.k8s.io/v1"), 8, false, "networkpolicy-v116"),
    api("extensions/v1beta1", "PodSecurityPolicy", (11, 16), Some("policy/v1beta1"), 10, false, "v1-16"),
    // v1.22
    api("admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration", (16, 22), Some("admissionregistration.k8s.io/v1"), 16, false, "webhook-resources-v122"),
    api("admissionregistration.k8s.io/v1beta1", "ValidatingWebhookConfiguration", (16, 22), Some("admissionregistration.k8s.io/v1"), 16, false, "webhook-resources-v122"),
    api("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition", (16, 22), Some("apiextensions.k8s.io/v1"), 16, false, "customresourcedefinition-v122"),
    api("apiregistration.k8s.io/v1beta1", "APIService", (19, 22), Some("apiregistration.k8s.io/v1"), 10, true, "apiservice-v122"),
    api("certificates.k8s.io/v1beta1", "CertificateSigningRequest", (19, 22), Some("certificates.k8s.io/v1"), 19, false, "certificatesigningrequest-v122"),
    api("coordination.k8s.io/v1beta1", "Lease", (19, 22), Some("coordination.k8s.io/v1"), 14, true, "lease-v122"),
    api("extensions/v1beta1", "Ingress", (14, 22), Some("networking.k8s.io/v1"), 19, false, "ingress-v122"),
    api("networking.k8s.io/v1beta1", "Ingress", (19, 22), Some("networking.k8s.io/v1"), 19, false, "ingress-v122"),
    api("networking.k8s.io/v1beta1", "IngressClass", (19, 22), Some("networking.k8s.io/v1"), 19, true, "ingressclass-v122"),
    api("rbac.authorization.k8s.io/v1beta1", "ClusterRole", (17, 22), Some("rbac.authorization.k8s.io/v1"), 8, true, "rbac-resources-v122"),
    api("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding", (17, 22), Some("rbac.authorization.k8s.io/v1"), 8, true, "rbac-resources-v122"),
    api("rbac.authorization.k8s.io/v1beta1", "Role", (17, 22), Some("rbac.authorization.k8s.io/v1"), 8, true, "rbac-resources-v122"),
    api("rbac.authorization.k8s.io/v1beta1", "RoleBinding", (17, 22), Some("rbac.authorization.k8s.io/v1"), 8, true, "rbac-resources-v122"),
    api("scheduling.k8s.io/v1beta1", "PriorityClass", (14, 22), Some("scheduling.k8s.io/v1"), 14, true, "priorityclass-v122"),
    api("storage.k8s.io/v1beta1", "CSIDriver", (19, 22), Some("storage.k8s.io/v1"), 19, true, "storage-resources-v122"),
    api("storage.k8s.io/v1beta1", "CSINode", (17, 22), Some("storage.k8s.io/v1"), 17, true, "storage-resources-v122"),
    api("storage.k8s.io/v1beta1", "StorageClass", (19, 22), Some("storage.k8s.io/v1"), 6, true, "storage-resources-v122"),
    api("storage.k8s.io/v1beta1", "VolumeAttachment", (19, 22), Some("storage.k8s.io/v1"), 13, true, "storage-resources-v122"),
    // v1.25
    api("batch/v1beta1", "CronJob", (21, 25), Some("batch/v1"), 21, true, "cronjob-v125"),
    api("discovery.k8s.io/v1beta1", "EndpointSlice", (21, 25), Some("discovery.k8s.io/v1"), 21, false, "endpointslice-v125"),
    api("events.k8s.io/v1beta1", "Event", (22, 25), Some("events.k8s.io/v1"), 19, false, "event-v125"),
    api("autoscaling/v2beta1", "HorizontalPodAutoscaler", (22, 25), Some("autoscaling/v2"), 23, false, "horizontalpodautoscaler-v125"),
    // policy/v1: an empty selector selects every pod of the namespace, in v1beta1 none.
    api("policy/v1beta1", "PodDisruptionBudget", (21, 25), Some("policy/v1"), 21, false, "poddisruptionbudget-v125"),
    api("policy/v1beta1", "PodSecurityPolicy", (21, 25), None, 0, false, "psp-v125"),
    api("node.k8s.io/v1beta1", "RuntimeClass", (22, 25), Some("node.k8s.io/v1"), 20, true, "runtimeclass-v125"),
    // v1.26 .. v1.32. Flow control is written for its GA version, which renamed a field.
    api("autoscaling/v2beta2", "HorizontalPodAutoscaler", (23, 26), Some("autoscaling/v2"), 23, false, "horizontalpodautoscaler-v126"),
    api("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema", (23, 26), Some("flowcontrol.apiserver.k8s.io/v1"), 29, false, "flowcontrol-resources-v126"),
    api("flowcontrol.apiserver.k8s.io/v1beta1", "PriorityLevelConfiguration", (23, 26), Some("flowcontrol.apiserver.k8s.io/v1"), 29, false, "flowcontrol-resources-v126"),
    api("storage.k8s.io/v1beta1", "CSIStorageCapacity", (24, 27), Some("storage.k8s.io/v1"), 24, true, "csistoragecapacity-v127"),
    api("flowcontrol.apiserver.k8s.io/v1beta2", "FlowSchema", (26, 29), Some("flowcontrol.apiserver.k8s.io/v1"), 29, false, "flowcontrol-resources-v129"),
    api("flowcontrol.apiserver.k8s.io/v1beta2", "PriorityLevelConfiguration", (26, 29), Some("flowcontrol.apiserver.k8s.io/v1"), 29, false, "flowcontrol-resources-v129"),
    api("flowcontrol.apiserver.k8s.io/v1beta3", "FlowSchema", (29, 32), Some("flowcontrol.apiserver.k8s.io/v1"), 29, false, "flowcontrol-resources-v132"),
    api("flowcontrol.apiserver.k8s.io/v1beta3", "PriorityLevelConfiguration", (29, 32), Some("flowcontrol.apiserver.k8s.io/v1"), 29, false, "flowcontrol-resources-v132"),
    // Betas served today whose removal the tags already set (the guide has no section yet); the
    // replacement is the group's GA version, which the tags leave unnamed.
    api("admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicy", (31, 34), Some("admissionregistration.k8s.io/v1"), 0, false, ""),
    api("admissionregistration.k8s.io/v1beta1", "ValidatingAdmissionPolicyBinding", (31, 34), Some("admissionregistration.k8s.io/v1"), 0, false, ""),
    api("networking.k8s.io/v1beta1", "IPAddress", (34, 37), Some("networking.k8s.io/v1"), 0, false, ""),
    api("networking.k8s.io/v1beta1", "ServiceCIDR", (34, 37), Some("networking.k8s.io/v1"), 0, false, ""),
    api("storage.k8s.io/v1beta1", "VolumeAttributesClass", (34, 37), Some("storage.k8s.io/v1"), 0, false, ""),
    api("resource.k8s.io/v1beta1", "DeviceClass", (35, 38), Some("resource.k8s.io/v1"), 0, false, ""),
    api("resource.k8s.io/v1beta1", "ResourceClaim", (35, 38), Some("resource.k8s.io/v1"), 0, false, ""),
    api("resource.k8s.io/v1beta1", "ResourceClaimTemplate", (35, 38), Some("resource.k8s.io/v1"), 0, false, ""),
    api("resource.k8s.io/v1beta1", "ResourceSlice", (35, 38), Some("resource.k8s.io/v1"), 0, false, ""),
    api("coordination.k8s.io/v1beta1", "LeaseCandidate", (36, 39), None, 0, false, ""),
    api("resource.k8s.io/v1beta2", "DeviceClass", (36, 39), Some("resource.k8s.io/v1"), 0, false, ""),
    api("resource.k8s.io/v1beta2", "ResourceClaim", (36, 39), Some("resource.k8s.io/v1"), 0, false, ""),
    api("resource.k8s.io/v1beta2", "ResourceClaimTemplate", (36, 39), Some("resource.k8s.io/v1"), 0, false, ""),
    api("resource.k8s.io/v1beta2", "ResourceSlice", (36, 39), Some("resource.k8s.io/v1"), 0, false, ""),
    api("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy", (37, 40), Some("admissionregistration.k8s.io/v1"), 0, false, ""),
    api("admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicyBinding", (37, 40), Some("admissionregistration.k8s.io/v1"), 0, false, ""),
    api("certificates.k8s.io/v1beta1", "ClusterTrustBundle", (37, 40), Some("certificates.k8s.io/v1"), 0, false, ""),
];

/// The lifecycle of `kind` in `api_version`, if that version is deprecated.
pub fn api_lifecycle(api_version: &str, kind: &str) -> Option<&'static ApiLifecycle> {
    API_LIFECYCLES
        .iter()
        .find(|a| a.api_version == api_version && a.kind == kind)
}

/// The replacement API versions a cluster of minor version `target` serves, as
/// `.Capabilities.APIVersions` lists them from discovery (`group/version` and
/// `group/version/Kind`): what a chart's `Capabilities.APIVersions.Has` checks choose between.
pub fn served_replacements(target: u32) -> Vec<String> {
    let mut out = Vec::new();
    for row in API_LIFECYCLES {
        if let Some(version) = row.replacement
            && row.replacement_since > 0
            && row.replacement_since <= target
        {
            out.push(version.to_string());
            out.push(format!("{version}/{}", row.kind));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The guide's page, at the row's section where it has one.
pub fn guide_url(row: &ApiLifecycle) -> String {
    const GUIDE: &str = "https://kubernetes.io/docs/reference/using-api/deprecation-guide/";
    if row.guide.is_empty() {
        GUIDE.to_string()
    } else {
        format!("{GUIDE}#{}", row.guide)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_removed_after_it_is_deprecated_and_listed_once() {
        let mut seen = std::collections::HashSet::new();
        for row in API_LIFECYCLES {
            assert!(row.deprecated < row.removed, "{row:?}");
            assert!(seen.insert((row.api_version, row.kind)), "{row:?}");
            assert!(
                !row.same_schema || row.replacement.is_some(),
                "a safe rewrite needs a replacement: {row:?}"
            );
            assert!(
                row.api_version.contains('/')
                    && row.kind.chars().next().unwrap().is_ascii_uppercase()
            );
        }
        assert_eq!(
            api_lifecycle("batch/v1beta1", "CronJob").map(|r| (r.removed, r.replacement)),
            Some((25, Some("batch/v1")))
        );
        assert_eq!(api_lifecycle("batch/v1", "CronJob"), None);
        let served = served_replacements(34);
        assert!(served.contains(&"networking.k8s.io/v1/Ingress".to_string()));
        assert!(served.contains(&"batch/v1/CronJob".to_string()));
        assert!(!served_replacements(20).contains(&"batch/v1/CronJob".to_string()));
        assert!(!served_replacements(18).contains(&"networking.k8s.io/v1/Ingress".to_string()));
    }
}
