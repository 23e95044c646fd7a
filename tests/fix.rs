//! `winguard fix` and `winguard mutate` through the real binary.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::{root, run, run_cmd, winguard};

/// The documents of a stream, split at `---` lines (with their comments).
fn documents(text: &str) -> Vec<String> {
    let mut docs = vec![String::new()];
    for line in text.split_inclusive('\n') {
        if line.trim_end() == "---" {
            docs.push(String::new());
        }
        docs.last_mut().unwrap().push_str(line);
    }
    docs
}

fn example() -> String {
    std::fs::read_to_string(root().join("testdata/examples/iis-app.yaml")).unwrap()
}

fn lint_rules(path: &Path) -> Vec<String> {
    let (_, report) = common::json(&["lint", path.to_str().unwrap()]);
    common::rules_of(&report)
}

#[test]
fn fix_rewrites_only_the_documents_it_fixes_and_keeps_the_file_mode() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.yaml");
    // A comment in a document no fix touches must survive byte for byte.
    let original = example()
        .replace(
            "kind: Service\n",
            "kind: Service # the load balancer of seed 000\n",
        )
        .replace(
            "  replicas: 100\n",
            "  replicas: 100 # the seed article's scale\n",
        );
    std::fs::write(&file, &original).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let before = lint_rules(&file);
    for rule in ["windows-os-selector-missing", "windows-toleration-missing"] {
        assert!(before.contains(&rule.to_string()), "{before:?}");
    }

    let r = run(&["fix", file.to_str().unwrap()]);
    // config-copy-entrypoint-missing has no fix: an error remains, so exit 1, and it is shown.
    assert_eq!(r.code, 1, "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stdout.contains("error[config-copy-entrypoint-missing]"),
        "{}",
        r.stdout
    );
    assert!(
        r.stderr
            .contains("Deployment merchant: Add `nodeSelector: {kubernetes.io/os: windows}`"),
        "{}",
        r.stderr
    );
    let fixed = std::fs::read_to_string(&file).unwrap();
    let (old_docs, new_docs) = (documents(&original), documents(&fixed));
    assert_eq!(old_docs.len(), new_docs.len());
    let mut changed = 0;
    for (old, new) in old_docs.iter().zip(&new_docs) {
        if old != new {
            changed += 1;
            // The `# Source:` line that attributes findings stays with its document.
            let source = old.lines().find(|l| l.starts_with("# Source:"));
            assert!(source.is_none_or(|s| new.contains(s)), "{new}");
        }
    }
    assert!(old_docs.iter().any(|d| d.contains("# the load balancer")));
    assert!(
        new_docs
            .iter()
            .any(|d| d.contains("kind: Service # the load balancer of seed 000\n"))
    );
    // The Deployment and the Linux test Pod.
    assert_eq!(changed, 2, "{fixed}");
    // The fixes went in as new lines: the fixed documents keep their comments, quoting and flow
    // lists, and only gained lines.
    for kept in [
        "  replicas: 100 # the seed article's scale\n",
        "        image: \"mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2019\"\n",
        "            drop: [ALL]\n",
        "    command: ['wget']\n",
    ] {
        assert!(fixed.contains(kept), "lost {kept:?}:\n{fixed}");
    }
    let old_lines: Vec<&str> = original.lines().collect();
    let mut new_lines = fixed.lines();
    for line in &old_lines {
        assert!(
            new_lines.any(|l| l == *line),
            "line {line:?} changed or moved:\n{fixed}"
        );
    }
    let after = lint_rules(&file);
    for rule in [
        "windows-os-selector-missing",
        "windows-toleration-missing",
        "linux-os-selector-missing",
    ] {
        assert!(
            !after.contains(&rule.to_string()),
            "{rule} still fires: {after:?}"
        );
    }
    assert!(after.contains(&"config-copy-entrypoint-missing".to_string()));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o640);
    // Nothing left behind by the atomic write.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // Fixing again changes nothing.
    let again = run(&["fix", file.to_str().unwrap()]);
    assert!(
        again.stderr.contains("fixed 0 findings in 0 files"),
        "{}",
        again.stderr
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), fixed);
}

#[test]
fn fix_diff_shows_the_change_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.yaml");
    std::fs::write(&file, example()).unwrap();
    let r = run(&["fix", "--diff", file.to_str().unwrap()]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    assert!(
        r.stdout.starts_with(&format!("--- {}", file.display())),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .contains("\n+      nodeSelector:\n+        kubernetes.io/os: windows\n"),
        "{}",
        r.stdout
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), example());
    // A clean file: no diff, exit 0.
    let clean = root().join("testdata/cli/clean.yaml");
    let r = run(&["fix", "--diff", clean.to_str().unwrap()]);
    assert_eq!((r.code, r.stdout.as_str()), (0, ""), "{}", r.stderr);
}

#[test]
fn unsafe_fixes_only_with_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ds.yaml");
    let fixture =
        root().join("testdata/rules/windows-unsupported-field/fail-shared-chart-hardening.yaml");
    std::fs::copy(&fixture, &file).unwrap();
    run(&["fix", file.to_str().unwrap()]);
    let safe_only = std::fs::read_to_string(&file).unwrap();
    assert!(
        safe_only.contains("hostPID: true"),
        "an unsafe fix was applied:\n{safe_only}"
    );
    let r = run(&["fix", "--unsafe-fixes", file.to_str().unwrap()]);
    let with_unsafe = std::fs::read_to_string(&file).unwrap();
    assert!(
        !with_unsafe.contains("hostPID"),
        "{with_unsafe}\n{}",
        r.stderr
    );
    assert!(
        !with_unsafe.contains("readOnlyRootFilesystem"),
        "{with_unsafe}"
    );
    assert!(!lint_rules(&file).contains(&"windows-unsupported-field".to_string()));
}

#[test]
fn mutate_is_a_post_renderer_stdin_to_stdout_and_idempotent() {
    let mut c = winguard();
    c.arg("mutate");
    let first = run_cmd(c, Some(example().as_bytes()));
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(documents(&first.stdout).len(), documents(&example()).len());
    assert!(first.stdout.contains("kubernetes.io/os: windows"));
    assert!(
        first
            .stdout
            .contains("# Source: merchant/templates/deployment.yaml")
    );
    assert!(
        first
            .stderr
            .contains("winguard mutate: Deployment merchant:"),
        "{}",
        first.stderr
    );
    let mut c = winguard();
    c.arg("mutate");
    let second = run_cmd(c, Some(first.stdout.as_bytes()));
    assert_eq!(second.code, 0);
    assert_eq!(
        second.stdout, first.stdout,
        "mutating twice changed the output"
    );
    assert!(second.stderr.is_empty(), "{}", second.stderr);
}

#[test]
fn mutate_passes_a_broken_document_through_and_fixes_the_rest() {
    let stream = format!("{}---\nkind: [unclosed\n", example());
    let mut c = winguard();
    c.arg("mutate");
    let r = run_cmd(c, Some(stream.as_bytes()));
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("<stdin>:") && r.stderr.contains("invalid YAML"),
        "{}",
        r.stderr
    );
    assert!(r.stdout.ends_with("---\nkind: [unclosed\n"), "{}", r.stdout);
    assert!(
        r.stdout.contains("kubernetes.io/os: windows"),
        "the other documents are still fixed"
    );
}

/// `--unsafe-fixes` reaches its fixed point in one run: `spec.os.name` is held back while
/// Linux-only fields stand (with it the API server would reject them), and is applied in the
/// same run once the unsafe fixes have removed them.
#[test]
fn unsafe_fixes_reach_their_fixed_point_in_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.yaml");
    std::fs::copy(root().join("testdata/examples/iis-app.yaml"), &file).unwrap();
    let before = lint_rules(&file);
    assert!(before.contains(&"windows-pod-os-missing".to_string()));
    assert!(before.contains(&"windows-unsupported-field".to_string()));
    let r = run(&["fix", "--unsafe-fixes", file.to_str().unwrap()]);
    assert_ne!(r.code, 2, "{}", r.stderr);
    let after = lint_rules(&file);
    for rule in ["windows-pod-os-missing", "windows-unsupported-field"] {
        assert!(
            !after.contains(&rule.to_string()),
            "{rule} left: {after:?}\n{}",
            r.stderr
        );
    }
    let again = run(&["fix", "--unsafe-fixes", "--diff", file.to_str().unwrap()]);
    assert_eq!(
        (again.code, again.stdout.as_str()),
        (0, ""),
        "{}",
        again.stderr
    );
}

#[test]
fn every_failing_fixture_is_fixed_for_good_by_one_run() {
    let dir = tempfile::tempdir().unwrap();
    let mut fixtures = Vec::new();
    for rule_dir in std::fs::read_dir(root().join("testdata/rules")).unwrap() {
        for entry in std::fs::read_dir(rule_dir.unwrap().path()).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("fail-") && name.ends_with(".yaml") {
                fixtures.push(path);
            }
        }
    }
    assert!(fixtures.len() > 20, "{fixtures:?}");
    for (i, fixture) in fixtures.iter().enumerate() {
        let file = dir.path().join(format!("{i}.yaml"));
        std::fs::copy(fixture, &file).unwrap();
        let first = run(&["fix", file.to_str().unwrap()]);
        assert_ne!(first.code, 2, "{}: {}", fixture.display(), first.stderr);
        // Every safe fix is in: nothing safe is left to fix, and fixing again changes nothing.
        let (_, report) = common::json(&["lint", file.to_str().unwrap()]);
        let safe_left: Vec<_> = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["applicability"] == "safe")
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect();
        assert!(
            safe_left.is_empty(),
            "{}: still fixable: {safe_left:?}",
            fixture.display()
        );
        let fixed = std::fs::read_to_string(&file).unwrap();
        let again = run(&["fix", file.to_str().unwrap()]);
        assert!(
            again.stderr.contains("fixed 0 findings"),
            "{}: {}",
            fixture.display(),
            again.stderr
        );
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            fixed,
            "{}",
            fixture.display()
        );
    }
}

#[test]
fn a_write_that_fails_midway_leaves_the_file_as_it_was() {
    // A full disk, simulated: files may grow to 1 KiB only (`ulimit -f 1`, with SIGXFSZ ignored
    // so the write fails with EFBIG instead of killing the process).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.yaml");
    std::fs::write(&file, example()).unwrap();
    assert!(example().len() > 1024);
    let script = format!(
        "trap '' XFSZ; ulimit -f 1; exec '{}' fix '{}'",
        env!("CARGO_BIN_EXE_winguard"),
        file.display()
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &script])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot write"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), example());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names.len(),
        1,
        "a temporary file was left behind: {names:?}"
    );
}

/// A Deployment whose fixes land in flow collections, beside strings a YAML 1.1 reader would
/// take for booleans and numbers, with comments and CRLF line endings: `fix` and `mutate` edit
/// the collections' text and leave every other byte as it was.
const FLOW_DEPLOYMENT: &str = "# the shop's web tier\r\napiVersion: apps/v1\r\nkind: Deployment\r\nmetadata: {name: web} # inline\r\nspec:\r\n  selector: {matchLabels: {app: web}}\r\n  template:\r\n    metadata: {labels: {app: web}}\r\n    spec:\r\n      nodeSelector: {beta.kubernetes.io/os: windows} # pinned\r\n      tolerations: []\r\n      containers:\r\n      - name: web\r\n        image: mcr.microsoft.com/dotnet/framework/aspnet:4.8-windowsservercore-ltsc2022\r\n        args: [\"yes\", \"no\", \"on\", \"off\", \"y\", \"1_000\", '0777'] # as the app wants them\r\n        resources: {limits: {cpu: '1', memory: 2Gi}}\r\n";

/// What PyYAML (a YAML 1.1 reader, as the API server's `sigs.k8s.io/yaml` and Helm are)
/// reads from `path`, as JSON.
fn yaml11(path: &Path) -> serde_json::Value {
    let r = common::python(
        "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1], encoding='utf-8-sig')))))",
        &[path],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    serde_json::from_str(&r.stdout).unwrap()
}

#[test]
fn fixes_in_flow_collections_keep_every_other_byte() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("web.yaml");
    // With a byte order mark, as Windows editors write.
    std::fs::write(&file, format!("\u{feff}{FLOW_DEPLOYMENT}")).unwrap();
    let before = yaml11(&file);
    assert_eq!(
        before[0]["spec"]["template"]["spec"]["containers"][0]["args"],
        serde_json::json!(["yes", "no", "on", "off", "y", "1_000", "0777"])
    );
    let r = run(&["fix", file.to_str().unwrap()]);
    assert!(r.code == 0 || r.code == 1, "{}\n{}", r.stdout, r.stderr);
    let bytes = std::fs::read(&file).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.starts_with('\u{feff}'),
        "the byte order mark was dropped"
    );
    assert!(
        !text.replace("\r\n", "").contains('\n'),
        "a line ending other than CRLF:\n{text:?}"
    );
    // The fixes edited the flow collections in place...
    assert!(
        text.contains("nodeSelector: {kubernetes.io/os: windows} # pinned\r\n"),
        "{text}"
    );
    // An empty `[]` in block context takes its new items as a block, its dashes placed as
    // the document places them.
    assert!(
        text.contains("      tolerations:\r\n      - effect: NoSchedule\r\n"),
        "{text}"
    );
    // ... and every line they did not touch is as it was, quotes and comments with it.
    for line in FLOW_DEPLOYMENT
        .split("\r\n")
        .filter(|l| !l.contains("nodeSelector") && !l.contains("tolerations") && !l.is_empty())
    {
        assert!(text.contains(line), "lost: {line}\n{text}");
    }
    // A YAML 1.1 reader reads the same strings as before, and the fix's own values.
    let after = yaml11(&file);
    let spec = &after[0]["spec"]["template"]["spec"];
    assert_eq!(
        spec["containers"][0]["args"],
        before[0]["spec"]["template"]["spec"]["containers"][0]["args"]
    );
    assert_eq!(
        spec["nodeSelector"],
        serde_json::json!({"kubernetes.io/os": "windows"})
    );
    assert!(spec["tolerations"][0]["key"].is_string(), "{spec}");

    // `mutate` (the Helm post-renderer) edits the same way.
    let mut c = winguard();
    c.arg("mutate");
    let m = run_cmd(c, Some(FLOW_DEPLOYMENT.as_bytes()));
    assert_eq!(m.code, 0, "{}", m.stderr);
    assert_eq!(m.stdout, text.trim_start_matches('\u{feff}'));
}

/// A fix that can't be written into the text without changing what else it means is refused
/// with the reason, and the document is left as it was.
#[test]
fn a_fix_that_cannot_be_written_in_place_is_refused_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pod.yaml");
    // The pod's spec is an alias of another document part: editing it would edit both.
    let text = "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec: &spec\n  containers:\n  - {name: web, image: \"mcr.microsoft.com/windows/servercore:ltsc2022\"}\nx-copy: *spec\n";
    std::fs::write(&file, text).unwrap();
    let r = run(&["fix", file.to_str().unwrap()]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert!(
        r.stderr.contains("warning: ") && r.stderr.contains("not fixed"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains(&format!("{}:1:", file.display())),
        "{}",
        r.stderr
    );
}
