//! Bad input gets a clear error naming the file (and line:col where there is one), exit code 2,
//! and never stops the other inputs from being linted.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::Value;

/// A good input linted beside every bad one: its finding must still be reported.
const GOOD: &str = "testdata/rules/windows-os-selector-missing/fail-statefulset.yaml";

fn lint_with_good(bad: &Path) -> (i32, Value, String) {
    let mut cmd = winguard();
    cmd.args(["lint", bad.to_str().unwrap(), GOOD, "--format", "json"]);
    let r = run_cmd(cmd, None);
    let v: Value = serde_json::from_str(&r.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", r.stdout, r.stderr));
    (r.code, v, r.stderr)
}

/// Asserts exit 2, one error for `bad` (with its line/column when given), and GOOD still linted.
fn assert_error(bad: &Path, line_col: Option<(u64, u64)>, needle: &str) -> Value {
    let (code, v, stderr) = lint_with_good(bad);
    assert_eq!(code, 2, "{v}\n{stderr}");
    let errors = v["errors"].as_array().unwrap();
    let name = bad.to_str().unwrap();
    let e = errors
        .iter()
        .find(|e| e["file"] == name)
        .unwrap_or_else(|| panic!("no error for {name}: {errors:?}"));
    assert!(e["message"].as_str().unwrap().contains(needle), "{e}");
    if let Some((l, c)) = line_col {
        assert_eq!(
            (e["line"].as_u64(), e["column"].as_u64()),
            (Some(l), Some(c)),
            "{e}"
        );
    }
    let good = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|f| f["file"] == GOOD);
    assert!(good, "the other input was not linted: {v}");
    v
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn malformed_yaml() {
    let d = tempfile::tempdir().unwrap();
    let bad = write(
        d.path(),
        "bad.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: [a, b\nspec: {}\n",
    );
    assert_error(&bad, Some((4, 5)), "invalid YAML");
}

#[test]
fn invalid_utf8() {
    let d = tempfile::tempdir().unwrap();
    let bad = write(
        d.path(),
        "latin1.yaml",
        b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: caf\xe9\n",
    );
    assert_error(&bad, Some((4, 12)), "invalid UTF-8");
}

#[test]
fn alias_bomb_is_bounded() {
    let d = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: lol}\ndata:\n  a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
    );
    for i in 1..10 {
        let p = i - 1;
        text.push_str(&format!(
            "  a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
        ));
    }
    let bad = write(d.path(), "lol.yaml", text);
    assert_error(&bad, None, "alias bomb");
}

#[test]
fn deep_nesting_does_not_overflow_the_stack() {
    let d = tempfile::tempdir().unwrap();
    let flow = write(
        d.path(),
        "flow.yaml",
        "[".repeat(10_000) + &"]".repeat(10_000),
    );
    assert_error(&flow, None, "invalid YAML");
    // Block sequences nest on one line: `- - - … x`.
    let block =
        String::from("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\ndata:\n  x:\n    ")
            + &"- ".repeat(10_000)
            + "x\n";
    let block = write(d.path(), "block.yaml", block);
    assert_error(&block, None, "nesting deeper than 512 levels");
}

/// Templates nested as deeply as Helm renders them (Helm 4.2.3 renders each of these; deeper ones
/// too, up to its 5 MiB file bound) render here, and a chart of them linted beside another
/// input leaves that input's findings standing. Parentheses stop where Go's parser stops them.
#[test]
fn deep_templates_render_and_never_take_the_run_down() {
    let d = tempfile::tempdir().unwrap();
    let chart = |name: &str, template: String| {
        let dir = d.path().join(name);
        std::fs::create_dir_all(dir.join("templates")).unwrap();
        write(
            &dir,
            "Chart.yaml",
            format!("apiVersion: v2\nname: {name}\nversion: 0.1.0\n"),
        );
        write(&dir.join("templates"), "cm.yaml", template);
        dir
    };
    let object = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  x: \"1\"\n";
    let nested =
        |open: &str, n: usize| format!("{}{object}{}", open.repeat(n), "{{end}}".repeat(n));
    let cases = [
        ("ifs", nested("{{if 1}}", 8_000)),
        ("withs", nested("{{with 1}}", 10_000)),
        ("ranges", nested("{{range list 1}}", 10_000)),
        (
            "elseifs",
            format!(
                "{{{{if 0}}}}{}{{{{else}}}}{object}{{{{end}}}}",
                "{{else if 0}}".repeat(8_000)
            ),
        ),
        (
            "parens",
            object.replace(
                "\"1\"",
                &format!(
                    "{{{{ quote {}1{} }}}}",
                    "(".repeat(6_000),
                    ")".repeat(6_000)
                ),
            ),
        ),
        (
            "never-called",
            format!(
                "{{{{define \"never\"}}}}{}{{{{end}}}}{object}",
                nested("{{if 1}}", 8_000)
            ),
        ),
    ];
    for (name, template) in cases {
        let dir = chart(name, template);
        let mut cmd = winguard();
        cmd.args(["render", dir.to_str().unwrap()]);
        let r = run_cmd(cmd, None);
        assert_eq!(r.code, 0, "{name}: {}", r.stderr);
        assert!(
            r.stdout.contains("kind: ConfigMap") && r.stdout.contains("x: \"1\""),
            "{name}: {}",
            r.stdout
        );
        let (code, v, stderr) = lint_with_good(&dir);
        assert_eq!(code, 1, "{name}: {v}\n{stderr}");
        assert_eq!(v["errors"], serde_json::json!([]), "{name}");
        assert!(
            v["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f["file"] == GOOD),
            "{name}: {v}"
        );
    }
    // One parenthesis past Go's bound: Helm's own parse error at the template's line, and the
    // run goes on.
    let dir = chart(
        "too-many-parens",
        format!(
            "x: {{{{ {}1{} }}}}\n",
            "(".repeat(10_001),
            ")".repeat(10_001)
        ),
    );
    let (code, v, stderr) = lint_with_good(&dir);
    assert_eq!(code, 2, "{v}\n{stderr}");
    let template = dir.join("templates/cm.yaml");
    assert_eq!(v["errors"][0]["file"], template.to_str().unwrap(), "{v}");
    assert_eq!(v["errors"][0]["line"], 1, "{v}");
    assert!(
        v["errors"][0]["message"]
            .as_str()
            .unwrap()
            .ends_with("max expression depth exceeded"),
        "{v}"
    );
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == GOOD),
        "{v}"
    );
}

#[test]
fn huge_file_is_refused_without_reading_it() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("huge.yaml");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(100 * 1024 * 1024).unwrap();
    assert_error(&path, None, "larger than the 32.0 MiB limit");
}

#[test]
fn binary_file_in_a_directory_is_skipped_with_a_note() {
    let d = tempfile::tempdir().unwrap();
    write(
        d.path(),
        "image.yaml",
        b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
    );
    std::fs::copy(common::root().join(GOOD), d.path().join("good.yaml")).unwrap();
    let r = run(&["lint", d.path().to_str().unwrap(), "--format", "json"]);
    assert!(
        r.stderr.contains("image.yaml: skipped: binary file"),
        "{}",
        r.stderr
    );
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(r.code, 1, "the skipped file is not an error: {v}");
    assert!(v["errors"].as_array().unwrap().is_empty());
    assert!(!v["findings"].as_array().unwrap().is_empty());
    // Named explicitly, a binary file is an error.
    assert_error(&d.path().join("image.yaml"), None, "binary file");
}

#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), PermissionsExt::from_mode(0o755)).unwrap();
    let bad = write(d.path(), "secret.yaml", "apiVersion: v1\nkind: Pod\n");
    std::fs::set_permissions(&bad, PermissionsExt::from_mode(0o000)).unwrap();
    let good = d.path().join("good.yaml");
    std::fs::copy(common::root().join(GOOD), &good).unwrap();
    std::fs::set_permissions(&good, PermissionsExt::from_mode(0o644)).unwrap();
    // Root reads anything: when the tests run as root, run a copy of the binary (the checkout
    // may sit in a directory other users can't enter) as an unprivileged user (nobody).
    let is_root = std::process::Command::new("id")
        .arg("-u")
        .output()
        .unwrap()
        .stdout
        == b"0\n";
    let mut cmd = if is_root {
        let bin = d.path().join("winguard");
        std::fs::copy(env!("CARGO_BIN_EXE_winguard"), &bin).unwrap();
        std::fs::set_permissions(&bin, PermissionsExt::from_mode(0o755)).unwrap();
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(bin);
        c
    } else {
        std::process::Command::new(env!("CARGO_BIN_EXE_winguard"))
    };
    cmd.current_dir("/").args([
        "lint",
        bad.to_str().unwrap(),
        good.to_str().unwrap(),
        "--format",
        "json",
    ]);
    let r = run_cmd(cmd, None);
    assert_eq!(r.code, 2, "{}{}", r.stdout, r.stderr);
    let v: Value = serde_json::from_str(&r.stdout).unwrap();
    let e = &v["errors"][0];
    assert_eq!(e["file"], bad.to_str().unwrap());
    assert!(
        e["message"].as_str().unwrap().contains("permission denied"),
        "{e}"
    );
    assert!(!v["findings"].as_array().unwrap().is_empty());
}

#[test]
fn wrong_types_are_errors_at_their_line() {
    let d = tempfile::tempdir().unwrap();
    let replicas = write(
        d.path(),
        "replicas.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a}\nspec:\n  replicas: \"three\"\n  template:\n    spec:\n      containers: []\n",
    );
    assert_error(
        &replicas,
        Some((5, 13)),
        "spec.replicas: expected an integer, found the string \"three\"",
    );
    let containers = write(
        d.path(),
        "containers.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: {}\n",
    );
    assert_error(
        &containers,
        Some((5, 15)),
        "spec.containers: expected a list, found a map",
    );
    // A container's field, named by the container's place in the template's list.
    let image = write(
        d.path(),
        "image.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers:\n      - name: a\n      - name: b\n        image: [1]\n",
    );
    assert_error(
        &image,
        Some((10, 16)),
        "spec.template.spec.containers.1.image: expected a string, found a list",
    );
    let selector = write(
        d.path(),
        "selector.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  nodeSelector: []\n  containers: []\n",
    );
    assert_error(
        &selector,
        Some((5, 17)),
        "spec.nodeSelector: expected a map, found a list",
    );
    // As kubectl decodes labels (`map[string]string`): a number is refused ("cannot unmarshal
    // number … of type string"), a null value is the empty string.
    let number = write(
        d.path(),
        "label-number.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels:\n    n: 1\n",
    );
    assert_error(
        &number,
        Some((6, 5)),
        "`n` must be a string, found the number 1",
    );
    let null = write(
        d.path(),
        "label-null.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: a\n  labels:\n    webhook-type:\n",
    );
    let (_, v, _) = lint_with_good(&null);
    assert!(v["errors"].as_array().unwrap().is_empty(), "{v:#}");
}

#[test]
fn duplicate_keys() {
    let d = tempfile::tempdir().unwrap();
    let bad = write(
        d.path(),
        "dup.yaml",
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\nspec: {containers: []}\n",
    );
    assert_error(&bad, Some((5, 3)), "duplicate key `name`");
}

#[test]
fn multi_document_files_keep_documents_before_an_error() {
    let d = tempfile::tempdir().unwrap();
    let text =
        std::fs::read_to_string(common::root().join(GOOD)).unwrap() + "---\nkey: [unclosed\n";
    let bad = write(d.path(), "partial.yaml", text);
    let v = assert_error(&bad, None, "invalid YAML");
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == bad.to_str().unwrap())
    );
}

const CHART_YAML: &[u8] = b"apiVersion: v2\nname: big\nversion: 0.1.0\n";

/// Helm's bounds on a packaged chart (5 MiB a file, 100 MiB in all), with Helm's words: an
/// entry is refused from the size its header gives, before a byte of it is inflated, so a
/// 2 MB archive of a 2 GiB file is refused at once.
#[test]
fn chart_archives_are_bounded_as_helms() {
    let d = tempfile::tempdir().unwrap();
    let chart = || Tgz::default().file("big/Chart.yaml", CHART_YAML);
    let regular = tar::EntryType::Regular;

    let gigabytes = chart()
        .zeros_entry("big/files/big.bin", 2 << 30, regular)
        .finish();
    assert!(gigabytes.len() < 4 << 20, "{}", gigabytes.len());
    let bad = write(d.path(), "gigabytes.tgz", gigabytes);
    assert_error(
        &bad,
        None,
        "decompressed chart is larger than the maximum size 104857600",
    );

    // A file of 5 MiB is allowed (and the archives written here are sound gzip).
    let at_bound = chart()
        .zeros_entry("big/files/big.bin", 5 * 1024 * 1024, regular)
        .finish();
    let mut inflated = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&at_bound[..]),
        &mut inflated,
    )
    .unwrap();
    assert_eq!(inflated.len(), 3 * 512 + 5 * 1024 * 1024 + 1024);
    let (code, v, _) = lint_with_good(&write(d.path(), "at-bound.tgz", at_bound));
    assert_eq!((code, &v["errors"]), (1, &serde_json::json!([])), "{v}");

    let over = chart()
        .zeros_entry("big/files/big.bin", 5 * 1024 * 1024 + 1, regular)
        .finish();
    let bad = write(d.path(), "file-over.tgz", over);
    assert_error(
        &bad,
        None,
        r#"decompressed chart file "big/files/big.bin" is larger than the maximum file size 5242880"#,
    );

    // Files of 5 MiB each are allowed, up to 100 MiB in all (the 20th reaches it).
    let mut many = chart();
    for i in 0..20 {
        many = many.zeros_entry(&format!("big/files/{i}.bin"), 5 * 1024 * 1024, regular);
    }
    let bad = write(d.path(), "total-over.tgz", many.finish());
    assert_error(
        &bad,
        None,
        "decompressed chart is larger than the maximum size 104857600",
    );

    // A subchart archive in charts/ has the same bounds.
    let sub = Tgz::default()
        .file(
            "sub/Chart.yaml",
            b"apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        )
        .zeros_entry("sub/files/big.bin", 5 * 1024 * 1024 + 1, regular)
        .finish();
    let nested = chart().file("big/charts/sub-0.1.0.tgz", &sub).finish();
    let bad = write(d.path(), "nested.tgz", nested);
    let (code, v, stderr) = lint_with_good(&bad);
    assert_eq!(code, 2, "{v}\n{stderr}");
    let e = &v["errors"][0];
    assert_eq!(
        e["file"].as_str(),
        Some(&*format!("{}/charts/sub-0.1.0.tgz", bad.display())),
        "{e}"
    );
    let message = e["message"].as_str().unwrap();
    assert!(
        message.contains(r#"decompressed chart file "sub/files/big.bin" is larger than the maximum file size 5242880"#),
        "{e}"
    );
}

/// What Helm's bound on file contents can't see, the tar stream itself, is counted as it
/// inflates: a GNU long name of 300 MiB (which the tar reader would hold whole) is refused.
#[test]
fn chart_archive_tar_headers_are_bounded_while_read() {
    let d = tempfile::tempdir().unwrap();
    let long_name = Tgz::default()
        .zeros_entry("././@LongLink", 300 << 20, tar::EntryType::GNULongName)
        .file("big/Chart.yaml", CHART_YAML)
        .finish();
    let bad = write(d.path(), "long-name.tgz", long_name);
    assert_error(
        &bad,
        None,
        "the tar stream inflates to more than 209715200 bytes",
    );
}

/// A chart directory's files have Helm's bound too (5 MiB a file), and a file that is not a
/// regular one (a FIFO, whose read would wait forever) is refused in Helm's words.
#[test]
fn chart_directory_files_are_bounded_as_helms() {
    let d = tempfile::tempdir().unwrap();
    let chart = d.path().join("big");
    std::fs::create_dir_all(chart.join("files")).unwrap();
    write(&chart, "Chart.yaml", CHART_YAML);
    let big = std::fs::File::create(chart.join("files/big.bin")).unwrap();
    big.set_len(5 * 1024 * 1024 + 1).unwrap();
    let (code, v, stderr) = lint_with_good(&chart);
    assert_eq!(code, 2, "{v}\n{stderr}");
    let message = v["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains(r#"big/files/big.bin" is larger than the maximum file size 5242880"#),
        "{v}"
    );

    std::fs::remove_file(chart.join("files/big.bin")).unwrap();
    let fifo = chart.join("files/pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    // A writer, so that a loader that opens the FIFO reads an empty file instead of hanging.
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || drop(std::fs::OpenOptions::new().write(true).open(fifo)))
    };
    let (code, v, stderr) = lint_with_good(&chart);
    if !writer.is_finished() {
        // Nothing opened the FIFO: open it here to let the writer go.
        drop(std::fs::File::open(&fifo));
    }
    writer.join().unwrap();
    assert_eq!(code, 2, "{v}\n{stderr}");
    let message = v["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("files/pipe as it has file mode type bits set"),
        "{v}"
    );
}

/// Subcharts nested past any real chart's depth (loading recurses once per level) are an error
/// naming the chain, and the run goes on; a few levels load as before.
#[test]
fn subcharts_nested_without_end_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let nest = |levels: usize| {
        let top = d.path().join(format!("nest-{levels}"));
        let mut dir = top.clone();
        for level in 0..=levels {
            std::fs::create_dir_all(dir.join("templates")).unwrap();
            write(
                &dir,
                "Chart.yaml",
                format!("apiVersion: v2\nname: c{level}\nversion: 0.1.0\n"),
            );
            dir = dir.join("charts").join(format!("c{}", level + 1));
        }
        top
    };
    let (code, v, stderr) = lint_with_good(&nest(3));
    assert_eq!(code, 1, "{v}\n{stderr}");
    assert_eq!(v["errors"], serde_json::json!([]));
    let (code, v, stderr) = lint_with_good(&nest(80));
    assert_eq!(code, 2, "{v}\n{stderr}");
    let message = v["errors"][0]["message"].as_str().unwrap();
    assert!(
        message.contains("subcharts nest more than 64 levels deep")
            && message.contains("/charts/c1/charts/c2/"),
        "{v}"
    );
    assert!(
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["file"] == GOOD),
        "{v}"
    );
}
