//! The Helm 4 post-renderer plugin in `helm-plugin/`, installed into the real `helm` binary
//! (v4.2.3, from the test tools) and run by `helm template --post-renderer winguard-mutate`:
//! the output is winguard's mutated manifests, with the safe fixes in.

mod common;

use std::process::Command;

use common::*;

#[test]
fn helm_template_post_renders_through_the_plugin() {
    let helm = tool("helm");
    let home = tempfile::tempdir().unwrap();
    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_winguard"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let helm_cmd = |args: &[&str]| {
        let mut c = Command::new(&helm);
        c.current_dir(root())
            .args(args)
            .env("PATH", &path)
            .env("HELM_DATA_HOME", home.path().join("data"))
            .env("HELM_PLUGINS", home.path().join("data/plugins"))
            .env("HELM_CONFIG_HOME", home.path().join("config"))
            .env("HELM_CACHE_HOME", home.path().join("cache"));
        run_cmd(c, None)
    };
    let installed = helm_cmd(&["plugin", "install", "helm-plugin"]);
    assert_eq!(
        installed.code, 0,
        "{}{}",
        installed.stdout, installed.stderr
    );
    let list = helm_cmd(&["plugin", "list"]);
    assert!(list.stdout.contains("winguard-mutate"), "{}", list.stdout);

    let chart = "testdata/charts/windows-iis";
    let plain = helm_cmd(&["template", "shop", chart]);
    assert_eq!(plain.code, 0, "{}", plain.stderr);
    let mutated = helm_cmd(&[
        "template",
        "shop",
        chart,
        "--post-renderer",
        "winguard-mutate",
    ]);
    assert_eq!(mutated.code, 0, "{}", mutated.stderr);
    assert_ne!(
        plain.stdout, mutated.stdout,
        "the post-renderer changed nothing"
    );

    // Linted again, Helm's own output misses the Windows toleration; the post-rendered
    // output has the fix in.
    let lint = |text: &str| {
        let mut c = winguard();
        c.args(["lint", "-", "--format", "json"]);
        let r = run_cmd(c, Some(text.as_bytes()));
        let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
        rules_of(&v)
    };
    assert!(lint(&plain.stdout).contains(&"windows-toleration-missing".to_string()));
    let after = lint(&mutated.stdout);
    assert!(
        !after.contains(&"windows-toleration-missing".to_string()),
        "{after:?}"
    );
    assert!(
        mutated.stdout.contains("effect: NoSchedule"),
        "{}",
        mutated.stdout
    );
}
