//! `--nodes FILE`: the cluster's own nodes (`kubectl get nodes -o json`) give the Windows builds
//! and taints the rules hold pods to, instead of the config's or the profile's assumption, and
//! the findings say so.

mod common;

use common::*;

const NODES: &str = "testdata/nodes/mixed-cluster.json";
const PODS: &str = "testdata/nodes/orders.yaml";

fn findings(args: &[&str]) -> (i32, Vec<(String, String)>) {
    let (code, report) = json(args);
    let list = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["message"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    (code, list)
}

/// The messages of `rule`'s findings.
fn messages<'a>(findings: &'a [(String, String)], rule: &str) -> Vec<&'a String> {
    findings
        .iter()
        .filter(|(r, _)| r == rule)
        .map(|(_, m)| m)
        .collect()
}

#[test]
fn the_nodes_taints_and_builds_replace_the_assumed_ones() {
    // Under the assumption (the generic profile's `os=windows` taint, no known builds) the pod
    // looks schedulable.
    let (code, assumed) = findings(&["lint", PODS]);
    assert_eq!(code, 0, "{assumed:?}");
    assert!(
        !assumed
            .iter()
            .any(|(r, _)| r == "windows-toleration-missing" || r == "windows-image-build-mismatch"),
        "{assumed:?}"
    );

    // The cluster's Windows nodes all carry `sku=Windows:NoSchedule` (one also has a
    // PreferNoSchedule taint, another a NoExecute one of its own: neither keeps the pod off every
    // node) and run Windows Server 2022.
    let (code, real) = findings(&["lint", PODS, "--nodes", NODES]);
    assert_eq!(code, 1, "{real:?}");
    let toleration = messages(&real, "windows-toleration-missing");
    assert_eq!(toleration.len(), 1, "{real:?}");
    assert!(
        toleration[0].contains("`sku=Windows:NoSchedule` (every Windows node in `testdata/nodes/mixed-cluster.json` has it)"),
        "{}",
        toleration[0]
    );
    // The taint is the cluster's: no advice to configure another.
    assert!(
        !toleration[0].contains("windows.taints"),
        "{}",
        toleration[0]
    );
    let build = messages(&real, "windows-image-build-mismatch");
    assert_eq!(build.len(), 1, "{real:?}");
    assert!(
        build[0].contains("Windows Server 2022 (10.0.20348) (the Windows nodes in `testdata/nodes/mixed-cluster.json`)"),
        "{}",
        build[0]
    );
}

#[test]
fn a_nodes_file_that_cannot_be_used_is_an_error_naming_it() {
    let tmp = tempfile::tempdir().unwrap();
    let linux_only = tmp.path().join("linux.json");
    let text = std::fs::read_to_string(common::root().join(NODES)).unwrap();
    let mut nodes: serde_json::Value = serde_json::from_str(&text).unwrap();
    nodes["items"]
        .as_array_mut()
        .unwrap()
        .retain(|n| n["metadata"]["labels"]["kubernetes.io/os"] == "linux");
    std::fs::write(&linux_only, nodes.to_string()).unwrap();
    let r = run(&["lint", PODS, "--nodes", linux_only.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(
        r.stderr.contains("linux.json") && r.stderr.contains("no Windows node among its 2 nodes"),
        "{}",
        r.stderr
    );

    let broken = tmp.path().join("broken.json");
    std::fs::write(&broken, "{\"kind\": \"List\",\n \"items\": [").unwrap();
    let r = run(&["lint", PODS, "--nodes", broken.to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("broken.json:2"), "{}", r.stderr);

    let r = run(&["lint", PODS, "--nodes", "testdata/nodes/none.json"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("cannot read nodes file"), "{}", r.stderr);
}

#[test]
fn the_nodes_a_pool_selection_matches_tell_the_pods_os_and_builds() {
    const POOLS: &str = "testdata/nodes/pools.yaml";
    let rules_of = |findings: &[(String, String)]| -> Vec<String> {
        findings.iter().map(|(r, _)| r.clone()).collect()
    };
    // Without the nodes, `agentpool: npwin` says nothing: the billing pod is Windows by its
    // image only, and selects no Windows node as far as winguard can tell.
    let (_, assumed) = findings(&["lint", POOLS]);
    assert!(
        rules_of(&assumed).contains(&"windows-os-selector-missing".to_string()),
        "{assumed:?}"
    );

    // With them, the pool is two Windows Server 2022 nodes: the pod selects Windows (no
    // selector finding), its LTSC 2019 image can't run there, and it tolerates their taint.
    let (code, real) = findings(&["lint", POOLS, "--nodes", NODES]);
    assert_eq!(code, 1, "{real:?}");
    let rules = rules_of(&real);
    for absent in ["windows-os-selector-missing", "windows-toleration-missing"] {
        assert!(!rules.contains(&absent.to_string()), "{real:?}");
    }
    let mismatch = messages(&real, "windows-image-build-mismatch");
    assert_eq!(mismatch.len(), 1, "{real:?}");
    assert!(
        mismatch[0].contains(
            "but the pod can land on Windows Server 2022 (10.0.20348) (the nodes its selection matches in `testdata/nodes/mixed-cluster.json`)"
        ),
        "{}",
        mismatch[0]
    );

    // The reports pod requires the Linux `user` pool by affinity, with a Windows image.
    let conflict = messages(&real, "windows-target-conflict");
    assert_eq!(conflict.len(), 1, "{real:?}");
    assert!(
        conflict[0].starts_with(
            "pod targets Linux because its node selection matches 1 node in `testdata/nodes/mixed-cluster.json`, a Linux node, but it also points to windows"
        ),
        "{}",
        conflict[0]
    );
}
