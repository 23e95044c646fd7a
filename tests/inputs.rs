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
    // Input errors are stderr's (the report, stdout's, only counts them).
    assert!(
        r.stderr.contains("no YAML or JSON file to lint"),
        "{}",
        r.stderr
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

/// testdata/kustomize/two-overlays (see its README) copied into `dir`.
fn base_with_two_overlays(dir: &Path) {
    copy_dir(&root().join("testdata/kustomize/two-overlays"), dir);
}

/// `winguard ARGS --format json` in `dir` (a git repository), kubectl first on PATH.
fn lint_in(dir: &Path, args: &[&str]) -> (i32, Value, String) {
    let kubectl = tool("kubectl");
    let mut cmd = winguard();
    cmd.current_dir(dir)
        .arg("lint")
        .args(args)
        .args(["--format", "json"])
        .env(
            "PATH",
            format!(
                "{}:{}",
                kubectl.parent().unwrap().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        );
    lint_json(cmd)
}

/// The files pre-commit passes when a base's resource and an overlay's patch change are linted
/// through the overlays above them: each overlay built once, each object reported once under its
/// overlay's name, the patch never as an object of its own.
#[test]
fn files_of_a_kustomization_are_linted_through_the_overlays_that_use_them() {
    let dir = tempfile::tempdir().unwrap();
    base_with_two_overlays(dir.path());
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    let (code, report, stderr) = lint_in(
        dir.path(),
        &[
            "base/app.yaml",
            "base/kustomization.yaml",
            "overlays/prod/windows.yaml",
        ],
    );
    assert_eq!(code, 1, "{report:#}\n{stderr}");
    let objects: Vec<(String, String)> = rules_and_objects(&report);
    let names: std::collections::BTreeSet<&str> = objects.iter().map(|(_, n)| n.as_str()).collect();
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("dev-") || n.starts_with("prod-")),
        "{names:?}"
    );
    let selector_missing: Vec<&str> = objects
        .iter()
        .filter(|(r, _)| r == "windows-os-selector-missing")
        .map(|(_, n)| n.as_str())
        .collect();
    // Once, for dev: prod's patch selects Windows nodes.
    assert_eq!(selector_missing, ["dev-merchant"], "{report:#}");
    assert!(
        stderr.contains(
            "base/app.yaml: linted through the overlays that use it: overlays/dev, overlays/prod"
        ),
        "{stderr}"
    );
    // Findings point at the file and line that wrote the field: the base's resource, or the
    // patch that set it, never the overlay's output.
    let at = |rule: &str, object: &str| -> (String, u64) {
        let f = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == rule && f["object"]["name"] == object)
            .unwrap_or_else(|| panic!("no {rule} on {object}: {report:#}"));
        (
            f["file"].as_str().unwrap().to_string(),
            f["line"].as_u64().unwrap(),
        )
    };
    let line_of = |file: &str, text: &str| -> (String, u64) {
        let content = std::fs::read_to_string(dir.path().join(file)).unwrap();
        let line = content.lines().position(|l| l.contains(text)).unwrap() as u64 + 1;
        (file.to_string(), line)
    };
    for overlay in ["dev-merchant", "prod-merchant"] {
        assert_eq!(
            at("windows-lb-backend-limit", overlay),
            line_of("base/app.yaml", "replicas: 100")
        );
    }
    // A strategic merge patch's field; a JSON 6902 operation's value; a container matched by
    // name in a strategic merge patch.
    assert_eq!(
        at("deprecated-os-label", "prod-merchant"),
        line_of("overlays/prod/windows.yaml", "beta.kubernetes.io/os")
    );
    assert_eq!(
        at("windows-host-network", "dev-merchant"),
        line_of("overlays/dev/host-network.yaml", "value: true")
    );
    assert_eq!(
        at("memory-in-millibytes", "dev-merchant"),
        line_of("overlays/dev/memory.yaml", "memory: 800m")
    );
    let files = files_of(&report);
    assert!(
        !files.iter().any(|f| f.ends_with("kustomization.yaml")),
        "{files:?}"
    );
    // A cross-object rule counts each overlay's Service and pods apart.
    let lb: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "windows-lb-backend-limit")
        .map(|f| f["message"].as_str().unwrap().to_string())
        .collect();
    assert!(
        lb.iter().any(|m| m.contains("Service `prod-merchant`")),
        "{lb:?}"
    );
    assert!(
        lb.iter().any(|m| m.contains("Service `dev-merchant`")),
        "{lb:?}"
    );
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
    // Findings point at the base's resource that wrote the fields.
    let file = dir.path().join("base/app.yaml").display().to_string();
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
    // Walking the parent builds the overlay, not the base it uses on its own, and reads
    // neither's files as manifests.
    let (_, report, stderr) = lint(&[dir.path().to_str().unwrap()]);
    assert_eq!(files_of(&report).len(), 1, "{report:#}\n{stderr}");
    assert_eq!(report["summary"]["files"], 1, "{report:#}");
    assert!(
        stderr.contains("linted through the overlays that use it"),
        "{stderr}"
    );
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
        r.stderr
            .contains("neither `kubectl` nor `kustomize` is on PATH"),
        "{}",
        r.stderr
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
        r.stderr.contains("`kustomize` is not on PATH"),
        "{}",
        r.stderr
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

/// A stand-in for a remote server on 127.0.0.1: it counts the connections it is given and
/// answers each with a 404 (and nothing at all to protocols other than HTTP), so a kustomize
/// that reaches it fails at once instead of waiting.
struct Listener {
    port: u16,
    connections: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Listener {
    fn start() -> Listener {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let connections = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = connections.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                // Counted before the answer: a client that got one was counted.
                counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let mut stream = stream;
                let _ = stream.write_all(
                    b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            }
        });
        Listener { port, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A `kubectl` that notes each run in `ran` (one line of arguments) and runs the test tools'
/// kubectl; the PATH to find it (with git after it, for kustomize's clones).
fn recording_kubectl(dir: &Path, ran: &Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let script = bin.join("kubectl");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            ran.display(),
            tool("kubectl").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A tree of overlays naming what kustomize would fetch from `port` on 127.0.0.1, and one that
/// names only local files; the kustomization files of the remote ones, each with the line and
/// column of its remote entry and what the error calls it.
fn remote_overlays(dir: &Path, port: u16) -> Vec<(std::path::PathBuf, &'static str, &'static str)> {
    let clean = std::fs::read_to_string(root().join(CLEAN)).unwrap();
    for sub in ["http", "git", "base", "case"] {
        write(&dir.join(sub).join("app.yaml"), &clean);
    }
    write(
        &dir.join("http/kustomization.yaml"),
        &format!("resources:\n- app.yaml\n- http://127.0.0.1:{port}/app.yaml\n"),
    );
    write(
        &dir.join("git/kustomization.yaml"),
        &format!(
            "resources:\n- app.yaml\ncomponents:\n  - git::http://127.0.0.1:{port}/org/repo//base?ref=v1\n"
        ),
    );
    // kustomize reads field names as Go's encoding/json does, ignoring case (`ſ` is `s`).
    write(
        &dir.join("case/kustomization.yaml"),
        &format!("Resources:\n- app.yaml\nreſources:\n- http://127.0.0.1:{port}/case.yaml\n"),
    );
    // A local base naming a remote resource, under an overlay that names only the base.
    write(
        &dir.join("base/kustomization.yaml"),
        &format!("resources:\n- app.yaml\n- http://127.0.0.1:{port}/base.yaml\n"),
    );
    write(
        &dir.join("overlay/kustomization.yaml"),
        "resources:\n- ../base\nnamePrefix: o-\n",
    );
    write(
        &dir.join("charts/kustomization.yaml"),
        &format!(
            "helmCharts:\n- name: app\n  version: 1.0.0\n  repo: http://127.0.0.1:{port}/charts\n"
        ),
    );
    overlay(&dir.join("local"));
    vec![
        (
            dir.join("http/kustomization.yaml"),
            "3:3",
            "`resources[1]` names an http(s) URL",
        ),
        (
            dir.join("git/kustomization.yaml"),
            "4:5",
            "`components[0]` names a git repository",
        ),
        (
            dir.join("base/kustomization.yaml"),
            "3:3",
            "`resources[1]` names an http(s) URL",
        ),
        (
            dir.join("case/kustomization.yaml"),
            "4:3",
            "`resources[0]` names an http(s) URL",
        ),
        (
            dir.join("charts/kustomization.yaml"),
            "4:9",
            "`helmCharts[0].repo` names a Helm chart repository",
        ),
    ]
}

/// Overlays naming remote resources, bases, components or charts are not built unless asked:
/// each is an error at its kustomization's line, kubectl is never run on them and nothing
/// connects to the server they name; local overlays beside them are built and linted.
#[cfg(unix)]
#[test]
fn remote_kustomize_references_are_refused_before_kustomize_runs() {
    let server = Listener::start();
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    let expected = remote_overlays(&tree, server.port);
    let ran = dir.path().join("ran");
    let path = recording_kubectl(dir.path(), &ran);
    let mut cmd = winguard();
    cmd.args([
        "lint",
        tree.to_str().unwrap(),
        "--kustomize-renderer",
        "kubectl",
    ])
    .env("PATH", &path);
    let r = run_cmd(cmd, None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    for (file, at, what) in &expected {
        let located = format!("{}:{at}: {what}", file.display());
        assert!(
            r.stderr.contains(&located),
            "no `{located}` in:\n{}",
            r.stderr
        );
    }
    let reached = format!(
        "(in the tree of {})",
        tree.join("overlay/kustomization.yaml").display()
    );
    assert!(r.stderr.contains(&reached), "{}", r.stderr);
    assert!(
        r.stderr.contains("--kustomize-allow-remote"),
        "{}",
        r.stderr
    );
    assert_eq!(server.connections(), 0, "kustomize reached the network");
    let ran = std::fs::read_to_string(&ran).unwrap_or_default();
    let built: Vec<&str> = ran.lines().collect();
    // Only the local overlay, once (through the kustomization that traces it): its base is
    // linted through it, not on its own, and the remote overlays never reach kustomize.
    assert_eq!(built.len(), 1, "only the local overlay: {ran}");
    // The local overlay was linted as before.
    assert!(r.stdout.contains("prod-merchant"), "{}", r.stdout);
}

/// `--kustomize-allow-remote`, or `kustomize: {allowRemote: true}` in winguard.yaml, passes a
/// remote overlay on to kustomize, which then fetches (here from a server that has nothing).
#[cfg(unix)]
#[test]
fn remote_kustomize_references_are_fetched_when_allowed() {
    let server = Listener::start();
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    remote_overlays(&tree, server.port);
    let http = tree.join("http");
    let ran = dir.path().join("ran");
    let path = recording_kubectl(dir.path(), &ran);
    let config = dir.path().join("winguard.yaml");
    write(&config, "kustomize:\n  allowRemote: true\n");
    let mut runs = 0;
    for allowed in [
        vec!["--kustomize-allow-remote"],
        vec!["--config", config.to_str().unwrap()],
    ] {
        let mut cmd = winguard();
        cmd.args([
            "lint",
            http.to_str().unwrap(),
            "--kustomize-renderer",
            "kubectl",
        ])
        .args(&allowed)
        .env("PATH", &path);
        let r = run_cmd(cmd, None);
        runs += 1;
        assert!(
            server.connections() >= runs,
            "{allowed:?}: kustomize did not fetch: {}{}",
            r.stdout,
            r.stderr
        );
        // The server has nothing: kustomize's error is the overlay's.
        assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains("kubectl could not build the overlay"),
            "{}",
            r.stderr
        );
    }
    // Each run builds twice: through the tracing kustomization, which fails, then the overlay
    // itself, whose error is the one reported.
    assert_eq!(std::fs::read_to_string(&ran).unwrap().lines().count(), 4);
}

/// `exclude` leaves paths out as gitignore-like globs: a name anywhere (`vendor`), a path from
/// the config file's directory (`k8s/*.yaml`); `--exclude` replaces the config's (from the
/// working directory), `--extend-exclude` adds; a file given by name is left out too (what a
/// pre-commit hook passes), and a run whose every input is excluded is clean, not an error.
#[test]
fn excluded_paths_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let example = std::fs::read_to_string(root().join(EXAMPLE)).unwrap();
    for f in ["vendor/a.yaml", "k8s/b.yaml", "k8s/deep/c.yaml"] {
        let p = dir.path().join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, &example).unwrap();
    }
    let files_of = |args: &[&str]| -> Vec<String> {
        let mut cmd = winguard();
        cmd.args(["lint", ".", "--format", "json"])
            .args(args)
            .current_dir(dir.path());
        let r = run_cmd(cmd, None);
        let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        let mut files: Vec<String> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                f["file"]
                    .as_str()
                    .unwrap()
                    .trim_start_matches("./")
                    .to_string()
            })
            .collect();
        files.dedup();
        files
    };
    assert_eq!(
        files_of(&[]),
        ["k8s/b.yaml", "k8s/deep/c.yaml", "vendor/a.yaml"]
    );
    assert_eq!(
        files_of(&["--exclude", "vendor"]),
        ["k8s/b.yaml", "k8s/deep/c.yaml"]
    );
    std::fs::write(
        dir.path().join("winguard.yaml"),
        "exclude: ['k8s/*.yaml']\n",
    )
    .unwrap();
    assert_eq!(files_of(&[]), ["k8s/deep/c.yaml", "vendor/a.yaml"]);
    assert_eq!(files_of(&["--extend-exclude", "deep"]), ["vendor/a.yaml"]);
    assert_eq!(
        files_of(&["--exclude", "vendor"]),
        ["k8s/b.yaml", "k8s/deep/c.yaml"]
    );
    let mut cmd = winguard();
    cmd.args(["lint", "k8s/b.yaml"]).current_dir(dir.path());
    let r = run_cmd(cmd, None);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    assert!(r.stderr.contains("every input is excluded"), "{}", r.stderr);
    let mut cmd = winguard();
    cmd.args(["lint", ".", "--exclude", "a/["])
        .current_dir(dir.path());
    let r = run_cmd(cmd, None);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("`a/[` is not a glob"), "{}", r.stderr);
}

/// Each input takes the config nearest to it, `winguard.yaml` or `.winguard.yaml`, up to the
/// repository's top level (a config above the repository is not the repository's); inputs with
/// different configs are linted each under its own, in one report; `--config` forces one.
#[test]
fn each_input_takes_the_config_nearest_to_it() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("winguard.yaml"),
        "rules: {windows-resource-limits-missing: off}\n",
    )
    .unwrap();
    let repo = outside.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    for team in ["team-a", "team-b", "team-c"] {
        std::fs::create_dir_all(repo.join(team)).unwrap();
        std::fs::copy(root().join(EXAMPLE), repo.join(team).join("app.yaml")).unwrap();
    }
    std::fs::write(
        repo.join("team-a/winguard.yaml"),
        "rules: {windows-toleration-missing: off}\n",
    )
    .unwrap();
    std::fs::write(repo.join("team-b/.winguard.yaml"), "profile: eks\n").unwrap();
    let rules_by_file = |args: &[&str]| -> std::collections::BTreeMap<String, Vec<String>> {
        let mut cmd = winguard();
        cmd.args(["lint", "--format", "json"])
            .args(args)
            .current_dir(&repo);
        let r = run_cmd(cmd, None);
        let report: Value =
            serde_json::from_str(&r.stdout).unwrap_or_else(|_| panic!("{}", r.stderr));
        let mut by_file = std::collections::BTreeMap::<String, Vec<String>>::new();
        for f in report["findings"].as_array().unwrap() {
            let rules = by_file
                .entry(f["file"].as_str().unwrap().to_string())
                .or_default();
            rules.push(f["rule"].as_str().unwrap().to_string());
        }
        by_file
    };
    let by_file = rules_by_file(&["team-a/app.yaml", "team-b/app.yaml", "team-c/app.yaml"]);
    let has = |file: &str, rule: &str| by_file[file].iter().any(|r| r == rule);
    assert!(
        !has("team-a/app.yaml", "windows-toleration-missing"),
        "{by_file:?}"
    );
    assert!(
        has("team-b/app.yaml", "eks-vpc-ip-resource-missing"),
        "{by_file:?}"
    );
    assert!(
        !has("team-a/app.yaml", "eks-vpc-ip-resource-missing"),
        "{by_file:?}"
    );
    // team-c has no config up to the repository: the defaults, not the file above it.
    assert!(
        has("team-c/app.yaml", "windows-toleration-missing"),
        "{by_file:?}"
    );
    assert!(
        has("team-c/app.yaml", "windows-resource-limits-missing"),
        "{by_file:?}"
    );
    // --config: one for all.
    let forced = rules_by_file(&[
        "team-a/app.yaml",
        "team-b/app.yaml",
        "--config",
        repo.join("team-a/winguard.yaml").to_str().unwrap(),
    ]);
    assert!(
        forced.values().all(|rules| !rules
            .iter()
            .any(|r| r == "windows-toleration-missing" || r == "eks-vpc-ip-resource-missing")),
        "{forced:?}"
    );
}
