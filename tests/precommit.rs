//! The real `pre-commit` (PyPI) runs winguard's hooks from `.pre-commit-hooks.yaml` on a
//! throw-away git repository: a bad manifest fails the hook, a good one passes.
//!
//! Uses this repository at its HEAD commit, as a user's `.pre-commit-config.yaml` would.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn head() -> String {
    let out = Command::new("git")
        .current_dir(root())
        .args(["rev-parse", "HEAD"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Runs `pre-commit run --all-files` for `hook` in a fresh repo holding `manifest`.
fn pre_commit(hook: &str, manifest: &str, home: &Path) -> Run {
    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    std::fs::write(
        repo.path().join(".pre-commit-config.yaml"),
        format!(
            "repos:\n- repo: {}\n  rev: {}\n  hooks:\n  - id: {hook}\n",
            root().display(),
            head()
        ),
    )
    .unwrap();
    let source = root().join(manifest);
    if source.is_dir() {
        // A chart or a kustomize tree: copied whole, as a repository holds it.
        let dest = repo.path().join(source.file_name().unwrap());
        common::copy_dir(&source, &dest);
    } else {
        std::fs::copy(source, repo.path().join("app.yaml")).unwrap();
    }
    git(repo.path(), &["add", "."]);
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_winguard")).parent().unwrap();
    // kubectl too, for the kustomize case.
    let kubectl = tool("kubectl");
    let path = format!(
        "{}:{}:{}",
        bin_dir.display(),
        kubectl.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = Command::new(tool("pre-commit"));
    cmd.current_dir(repo.path())
        .args(["run", "--all-files", "--color", "never"])
        .env("PRE_COMMIT_HOME", home)
        .env("PATH", path)
        // The source-built hook compiles winguard with `cargo install` (release mode): share one
        // target directory so it builds once per run of the suite, and build it unoptimised,
        // which is what this test checks (that the hook builds and runs), in a third of the time.
        .env("CARGO_TARGET_DIR", root().join("target/pre-commit"))
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "0");
    run_cmd(cmd, None)
}

const BAD: &str = "testdata/examples/iis-app.yaml";
const GOOD: &str = "testdata/cli/clean.yaml";

/// The hook fails on the bad manifest (showing the finding) and passes on the good one.
fn assert_hook(hook: &str) {
    let home = tempfile::tempdir().unwrap();
    let bad = pre_commit(hook, BAD, home.path());
    assert_eq!(bad.code, 1, "{}{}", bad.stdout, bad.stderr);
    assert!(
        bad.stdout.contains("error[windows-os-selector-missing]"),
        "{}",
        bad.stdout
    );
    let good = pre_commit(hook, GOOD, home.path());
    assert_eq!(good.code, 0, "{}{}", good.stdout, good.stderr);
    assert!(good.stdout.contains("Passed"), "{}", good.stdout);
}

#[test]
fn system_hook_fails_on_a_bad_manifest_and_passes_on_a_good_one() {
    assert_hook("winguard-system");
}

#[test]
fn source_hook_builds_winguard_and_runs_it() {
    assert_hook("winguard");
}

/// A repository holding Helm charts: pre-commit passes the charts' templates and values files
/// one by one, and winguard renders each chart they belong to (once) and lints the result.
#[test]
fn system_hook_renders_the_charts_whose_files_it_is_given() {
    let home = tempfile::tempdir().unwrap();
    let bad = pre_commit(
        "winguard-system",
        "testdata/charts/windows-iis",
        home.path(),
    );
    assert_eq!(bad.code, 1, "{}{}", bad.stdout, bad.stderr);
    assert!(
        bad.stdout
            .contains("--> windows-iis/templates/deployment.yaml:"),
        "{}",
        bad.stdout
    );
    assert!(!bad.stdout.contains("invalid YAML"), "{}", bad.stdout);
    let good = pre_commit(
        "winguard-system",
        "testdata/charts/windows-daemonsets",
        home.path(),
    );
    assert_eq!(good.code, 0, "{}{}", good.stdout, good.stderr);
}

/// A base used by two overlays (testdata/kustomize/two-overlays): pre-commit passes every file
/// of the tree, one by one; winguard builds each overlay once with the real kubectl and reports
/// each object once, at the base's or the patch's lines, never linting the patch or the base as
/// objects of their own.
#[test]
fn system_hook_lints_kustomize_files_through_their_overlays() {
    let home = tempfile::tempdir().unwrap();
    let r = pre_commit(
        "winguard-system",
        "testdata/kustomize/two-overlays",
        home.path(),
    );
    assert_eq!(r.code, 1, "{}{}", r.stdout, r.stderr);
    let count = |needle: &str| r.stdout.matches(needle).count();
    // dev lacks the Windows selection; prod's patch adds it.
    assert_eq!(
        count("error[windows-os-selector-missing]"),
        1,
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("(Deployment dev-merchant)"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("(Deployment merchant)"), "{}", r.stdout);
    assert!(
        r.stdout.contains("--> two-overlays/base/app.yaml:"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("--> two-overlays/overlays/prod/windows.yaml:"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("kustomization.yaml:"), "{}", r.stdout);
}
