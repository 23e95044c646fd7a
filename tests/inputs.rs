//! What `lint` reads: symlinks inside a directory, kustomize overlays (built by the real
//! `kubectl` from the test tools), runs that read nothing, and versions that don't parse.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

const EXAMPLE: &str = "testdata/examples/iis-app.yaml";
const CLEAN: &str = "testdata/cli/clean.yaml";

fn lint_json(cmd: std::process::Command) -> (i32, Value, String) {
    let r = run_cmd(cmd, None);
    let v = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", r.stdout, r.stderr));
    (r.code, v, r.stderr)
}

#[cfg(unix)]
#[test]
fn symlinked_manifests_are_linted_once_and_links_out_of_the_tree_are_noted() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().unwrap();
    // A ConfigMap mount: the real file in a timestamped directory, `..data` pointing at it,
    // and the visible name a link through `..data`.
    let mount = dir.path().join("mount");
    std::fs::create_dir_all(mount.join("..2026_01_01_00_00_00.1")).unwrap();
    std::fs::copy(
        root().join(EXAMPLE),
        mount.join("..2026_01_01_00_00_00.1/app.yaml"),
    )
    .unwrap();
    symlink("..2026_01_01_00_00_00.1", mount.join("..data")).unwrap();
    symlink("..data/app.yaml", mount.join("app.yaml")).unwrap();
    // A link out of the tree, a loop, and a link to nothing.
    let outside = tempfile::tempdir().unwrap();
    std::fs::copy(root().join(CLEAN), outside.path().join("x.yaml")).unwrap();
    symlink(outside.path().join("x.yaml"), mount.join("out.yaml")).unwrap();
    symlink(&mount, mount.join("loop")).unwrap();
    symlink("nothing.yaml", mount.join("broken.yaml")).unwrap();
    let mut cmd = winguard();
    cmd.args(["lint", mount.to_str().unwrap(), "--format", "json"]);
    let (code, report, stderr) = lint_json(cmd);
    assert_eq!(code, 1, "{report:#}\n{stderr}");
    assert_eq!(report["summary"]["files"], 1, "{report:#}");
    let shown = mount.join("app.yaml").display().to_string();
    assert_eq!(files_of(&report), [shown].into(), "the plainest name");
    assert!(
        stderr.contains("out.yaml: skipped: a symlink to"),
        "{stderr}"
    );
    assert!(stderr.contains("loop: skipped: a symlink loop"), "{stderr}");
    assert!(
        stderr.contains("broken.yaml: skipped: a symlink to nothing"),
        "{stderr}"
    );
    // A symlinked file given directly is read too.
    let r = run(&["lint", mount.join("app.yaml").to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
}

#[test]
fn a_run_that_reads_no_file_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("README.md"), "no manifests here\n").unwrap();
    let r = run(&["lint", dir.path().to_str().unwrap()]);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains("No problems found"), "{}", r.stdout);
    assert!(
        r.stdout.contains("no YAML or JSON file to lint"),
        "{}",
        r.stdout
    );
}

/// An overlay over a base holding the README example: `namePrefix` shows the output is the
/// overlay's, and findings name its kustomization file.
fn overlay(dir: &Path) -> std::path::PathBuf {
    std::fs::create_dir_all(dir.join("base")).unwrap();
    std::fs::create_dir_all(dir.join("overlays/prod")).unwrap();
    std::fs::copy(root().join(EXAMPLE), dir.join("base/app.yaml")).unwrap();
    std::fs::write(
        dir.join("base/kustomization.yaml"),
        "resources:\n- app.yaml\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("overlays/prod/kustomization.yaml"),
        "resources:\n- ../../base\nnamePrefix: prod-\n",
    )
    .unwrap();
    dir.join("overlays/prod")
}

#[test]
fn kustomize_overlays_are_built_with_kubectl_and_linted() {
    let dir = tempfile::tempdir().unwrap();
    let prod = overlay(dir.path());
    let kubectl = tool("kubectl");
    let path = format!(
        "{}:{}",
        kubectl.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // `winguard lint ARGS --format json` with the test tools' kubectl first on PATH.
    let lint = |args: &[&str]| {
        let mut cmd = winguard();
        cmd.arg("lint")
            .args(args)
            .args(["--format", "json"])
            .env("PATH", &path);
        lint_json(cmd)
    };
    let (code, report, stderr) = lint(&[prod.to_str().unwrap(), "--kustomize-renderer", "kubectl"]);
    assert_eq!(code, 1, "{report:#}\n{stderr}");
    let file = prod.join("kustomization.yaml").display().to_string();
    assert_eq!(files_of(&report), [file].into(), "{report:#}");
    let names = |report: &Value| -> std::collections::BTreeSet<String> {
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["object"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(names(&report).contains("prod-merchant"), "{report:#}");
    // Walking the parent builds base and overlay, and reads neither's files as manifests.
    let (_, report, stderr) = lint(&[dir.path().to_str().unwrap()]);
    assert_eq!(files_of(&report).len(), 2, "{report:#}\n{stderr}");
    assert_eq!(report["summary"]["files"], 2, "{report:#}");
    // A kustomization file given on its own (pre-commit) builds its overlay.
    let (code, report, _) = lint(&[prod.join("kustomization.yaml").to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(names(&report).contains("prod-merchant"), "{report:#}");
}

#[test]
fn an_overlay_without_kubectl_or_kustomize_is_an_error_not_a_clean_run() {
    let dir = tempfile::tempdir().unwrap();
    let prod = overlay(dir.path());
    let mut cmd = winguard();
    cmd.args(["lint", prod.to_str().unwrap()])
        .env("PATH", "/nonexistent");
    let r = run_cmd(cmd, None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    assert!(!r.stdout.contains("No problems found"), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("neither `kubectl` nor `kustomize` is on PATH"),
        "{}",
        r.stdout
    );
    let mut cmd = winguard();
    cmd.args([
        "lint",
        prod.to_str().unwrap(),
        "--kustomize-renderer",
        "kustomize",
    ])
    .env("PATH", "/nonexistent");
    let r = run_cmd(cmd, None);
    assert_eq!(r.code, 2);
    assert!(
        r.stdout.contains("`kustomize` is not on PATH"),
        "{}",
        r.stdout
    );
}

#[test]
fn versions_that_are_not_major_minor_patch_are_errors() {
    let r = run(&["lint", CLEAN, "--kube-version", "1.3x"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("--kube-version: `1.3x` is not a Kubernetes version"),
        "{}",
        r.stderr
    );
    for good in ["1.31", "v1.31.2", "1.31.2-eks-7f9249a"] {
        assert_eq!(
            run(&["lint", CLEAN, "--kube-version", good]).code,
            0,
            "{good}"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("winguard.yaml");
    std::fs::write(&cfg, "profile: eks\nkubernetesVersion: \"1.3x\"\n").unwrap();
    let r = run(&["lint", CLEAN, "--config", cfg.to_str().unwrap()]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr
            .contains("winguard.yaml:2:1: kubernetesVersion: `1.3x` is not a Kubernetes version"),
        "{}",
        r.stderr
    );
}
