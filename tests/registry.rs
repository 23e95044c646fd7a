//! `--resolve-images` against a real registry: Debian's docker-registry (the CNCF distribution
//! registry) on 127.0.0.1, with TLS from a test CA, with basic auth, and over plain HTTP; real
//! OCI indexes, image manifests and a Docker manifest list pushed through the registry's API by
//! `tests/tools/registry_fixture.py`. The findings say which digest the platforms came from; the
//! cache answers when the registry is gone; a registry that can't be read is a warning naming the
//! image.

mod common;

use std::collections::HashMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::*;

/// A registry process, stopped when dropped.
struct Registry {
    child: Child,
    port: u16,
    /// The token service, for a registry with token auth.
    token_server: Option<Child>,
    dir: tempfile::TempDir,
}

impl Drop for Registry {
    fn drop(&mut self) {
        for child in std::iter::once(&mut self.child).chain(self.token_server.as_mut()) {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Registry {
    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Access {
    Tls,
    TlsBasicAuth,
    /// The registry's token auth: anonymous bearer tokens from a token service.
    TlsToken,
    PlainHttp,
}

const USER: &str = "ci";
const PASSWORD: &str = "s3cret-for-tests";

/// The test CA and the registry's certificate, made once.
fn certs() -> &'static Path {
    static CERTS: OnceLock<PathBuf> = OnceLock::new();
    CERTS.get_or_init(|| {
        let dir = root().join("target/test-registry-certs");
        if !dir.join("server.pem").is_file() {
            fixture(&["certs", dir.to_str().unwrap()]);
        }
        dir
    })
}

fn fixture(args: &[&str]) -> String {
    let mut c = Command::new(python_exe());
    c.arg(root().join("tests/tools/registry_fixture.py"))
        .args(args);
    let r = run_cmd(c, None);
    assert_eq!(r.code, 0, "registry_fixture.py {args:?}: {}", r.stderr);
    r.stdout
}

fn wait_for_port(port: u16, what: &str) {
    let started = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{what} did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts a registry and pushes the fixture's images: the registry and each pushed
/// reference's digest.
fn start(access: Access) -> (Registry, HashMap<String, String>) {
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let mut config = format!(
        "version: 0.1\nlog: {{level: error, accesslog: {{disabled: true}}}}\nstorage:\n  filesystem: {{rootdirectory: {}}}\nhttp:\n  addr: 127.0.0.1:{port}\n",
        dir.path().join("data").display()
    );
    if access != Access::PlainHttp {
        config.push_str(&format!(
            "  tls: {{certificate: {}, key: {}}}\n",
            certs().join("server.pem").display(),
            certs().join("server-key.pem").display()
        ));
    }
    if access == Access::TlsBasicAuth {
        let htpasswd = dir.path().join("htpasswd");
        fixture(&["htpasswd", htpasswd.to_str().unwrap(), USER, PASSWORD]);
        config.push_str(&format!(
            "auth:\n  htpasswd: {{realm: winguard-tests, path: {}}}\n",
            htpasswd.display()
        ));
    }
    let mut token_server = None;
    if access == Access::TlsToken {
        let token_port = free_port();
        let log = dir.path().join("token-scopes.log");
        let child = Command::new(python_exe())
            .arg(root().join("tests/tools/registry_fixture.py"))
            .args(["token-server", &token_port.to_string()])
            .arg(certs())
            .arg(&log)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        token_server = Some(child);
        wait_for_port(token_port, "the token service");
        config.push_str(&format!(
            "auth:\n  token: {{realm: 'http://127.0.0.1:{token_port}/token', service: winguard-tests, issuer: winguard-test-issuer, rootcertbundle: {}}}\n",
            certs().join("ca.pem").display()
        ));
    }
    let config_file = dir.path().join("config.yml");
    std::fs::write(&config_file, config).unwrap();
    let child = Command::new(tool("docker-registry"))
        .arg("serve")
        .arg(&config_file)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start docker-registry ({e}): {SET_UP}"));
    let registry = Registry {
        child,
        port,
        token_server,
        dir,
    };
    wait_for_port(port, "docker-registry");
    let scheme = if access == Access::PlainHttp {
        "http"
    } else {
        "https"
    };
    let base = format!("{scheme}://127.0.0.1:{port}");
    let ca = certs().join("ca.pem");
    let mut args = vec!["push", base.as_str(), "--ca", ca.to_str().unwrap()];
    if access == Access::TlsBasicAuth {
        args.extend(["--user", USER, "--password", PASSWORD]);
    }
    let pushed: HashMap<String, String> = serde_json::from_str(&fixture(&args)).unwrap();
    (registry, pushed)
}

/// A workspace: the manifests (naming images in `host`), a config, a Docker config folder
/// and a cache of its own.
struct Workspace {
    dir: tempfile::TempDir,
}

const CONFIG: &str = "windows:\n  nodeBuilds: [ltsc2022]\n";

impl Workspace {
    fn new(host: &str, config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let manifests = std::fs::read_to_string(root().join(MANIFESTS))
            .unwrap()
            .replace("REGISTRY", host);
        std::fs::write(dir.path().join("apps.yaml"), manifests).unwrap();
        std::fs::write(dir.path().join("winguard.yaml"), config).unwrap();
        std::fs::create_dir(dir.path().join("docker")).unwrap();
        Workspace { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn lint(&self, extra: &[&str]) -> (i32, Vec<(String, String, String)>, String) {
        self.lint_file("apps.yaml", extra, &[])
    }

    /// [`Workspace::lint`] with more environment variables.
    fn lint_with(
        &self,
        extra: &[&str],
        env: &[(&str, String)],
    ) -> (i32, Vec<(String, String, String)>, String) {
        self.lint_file("apps.yaml", extra, env)
    }

    /// Lints `file` of the workspace: its exit code, `(object, rule, message)` of each finding,
    /// and its stderr.
    fn lint_file(
        &self,
        file: &str,
        extra: &[&str],
        env: &[(&str, String)],
    ) -> (i32, Vec<(String, String, String)>, String) {
        let mut c = winguard();
        c.args(["lint", file, "--format", "json"])
            .args(extra)
            .current_dir(self.dir.path())
            .env("WINGUARD_CACHE_DIR", self.path("cache"))
            .env("DOCKER_CONFIG", self.path("docker"))
            .env("SSL_CERT_FILE", certs().join("ca.pem"))
            .envs(env.iter().map(|(k, v)| (k, v)));
        let r = run_cmd(c, None);
        let report: serde_json::Value = serde_json::from_str(&r.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", r.stdout, r.stderr));
        let findings = report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                (
                    f["object"]["name"].as_str().unwrap().to_string(),
                    f["rule"].as_str().unwrap().to_string(),
                    f["message"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        (r.code, findings, r.stderr)
    }
}

/// Workloads whose images tell nothing by their names, in a registry at `REGISTRY`.
const MANIFESTS: &str = "testdata/registry/apps.yaml";

fn of<'a>(findings: &'a [(String, String, String)], name: &str, rule: &str) -> Vec<&'a str> {
    findings
        .iter()
        .filter(|(n, r, _)| n == name && r == rule)
        .map(|(_, _, m)| m.as_str())
        .collect()
}

/// No finding from registry platforms, and a warning naming each image that says `why`.
fn assert_unresolved(findings: &[(String, String, String)], stderr: &str, host: &str, why: &str) {
    assert!(
        findings
            .iter()
            .all(|(_, r, _)| !r.starts_with("windows-image")),
        "{findings:#?}"
    );
    for image in ["orders:1.4", "log-agent:2.1", "tools:3", "win2022:1"] {
        assert!(
            stderr.contains(&format!("warning: image `{host}/contoso/{image}`: {why}")),
            "{stderr}"
        );
    }
}

fn short(digest: &str) -> &str {
    &digest[..("sha256:".len() + 12)]
}

/// The findings the registry's platforms give the manifests, checked against what was pushed.
fn assert_resolved(
    findings: &[(String, String, String)],
    host: &str,
    pushed: &HashMap<String, String>,
) {
    let orders = of(findings, "orders", "windows-image-build-mismatch");
    assert_eq!(orders.len(), 1, "{findings:#?}");
    assert!(
        orders[0].contains("built for Windows Server 2019 (10.0.17763, by its registry (")
            && orders[0].contains(short(&pushed["contoso/orders:1.4"])),
        "{}",
        orders[0]
    );
    // The tag says nothing, but the registry does: not reported as unpinned.
    assert!(
        of(findings, "orders", "windows-image-build-unpinned").is_empty(),
        "{findings:#?}"
    );

    let agent = of(findings, "log-agent", "windows-image-os-mismatch");
    assert_eq!(agent.len(), 1, "{findings:#?}");
    assert_eq!(
        agent[0],
        format!(
            "image `{host}/contoso/log-agent:2.1` is published only for linux/amd64 (its registry ({})), but the pod targets Windows because `spec.os.name` is `windows`: a Windows node cannot run it",
            short(&pushed["contoso/log-agent:2.1"])
        )
    );

    // Published for Linux and both Windows builds (the attestation entry is not a platform).
    assert!(
        findings
            .iter()
            .all(|(n, r, _)| n != "tools" || !r.starts_with("windows-image")),
        "{findings:#?}"
    );

    let web = of(findings, "web", "windows-image-os-mismatch");
    assert_eq!(web.len(), 1, "{findings:#?}");
    assert!(
        web[0].contains("published only for windows/amd64")
            && web[0].contains(short(&pushed["contoso/win2022:1"]))
            && web[0].contains("a Linux node cannot run it"),
        "{}",
        web[0]
    );
}

#[test]
fn platforms_read_from_a_registry_decide_the_findings_and_are_cached() {
    let (registry, pushed) = start(Access::Tls);
    let ws = Workspace::new(&registry.host(), CONFIG);

    // By their names alone, these images are nothing in particular.
    let (_, by_name, _) = ws.lint(&[]);
    assert!(
        by_name
            .iter()
            .all(|(_, r, _)| !r.starts_with("windows-image")),
        "{by_name:#?}"
    );

    let (code, findings, stderr) = ws.lint(&["--resolve-images"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_resolved(&findings, &registry.host(), &pushed);

    // An index entry that names no platform leaves the image's platforms unknown, and says so.
    std::fs::write(
        ws.path("unlabelled.yaml"),
        format!(
            "apiVersion: v1\nkind: Pod\nmetadata: {{name: u}}\nspec:\n  nodeSelector: {{kubernetes.io/os: windows}}\n  containers:\n  - {{name: u, image: {}/contoso/unlabelled:1}}\n",
            registry.host()
        ),
    )
    .unwrap();
    let (_, unlabelled, stderr) = ws.lint_file("unlabelled.yaml", &["--resolve-images"], &[]);
    assert!(
        unlabelled
            .iter()
            .all(|(_, r, _)| r != "windows-image-os-mismatch"),
        "{unlabelled:#?}"
    );
    assert!(
        stderr.contains("contoso/unlabelled:1`: cannot read its platforms from its registry (entry 1 of its index names no platform)"),
        "{stderr}"
    );

    // The cache holds each digest's platforms as the registry listed them.
    let digest = &pushed["contoso/tools:3"];
    let entry = ws
        .path("cache/images/digests")
        .join(format!("{}.json", digest.replace(':', "-")));
    let cached: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&entry).unwrap()).unwrap();
    assert_eq!(cached["digest"], digest.as_str());
    let platforms: Vec<String> = cached["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            format!(
                "{}/{} {}",
                p["os"].as_str().unwrap(),
                p["architecture"].as_str().unwrap(),
                p["os.version"].as_str().unwrap_or("-")
            )
        })
        .collect();
    assert_eq!(
        platforms,
        [
            "linux/amd64 -",
            "windows/amd64 10.0.17763.6414",
            "windows/amd64 10.0.20348.2700"
        ]
    );

    // The registry gone: the cache answers, offline or within the tags' time to live.
    let host = registry.host();
    drop(registry);
    for flags in [&["--offline"][..], &["--resolve-images"]] {
        let (code, again, stderr) = ws.lint(flags);
        assert_eq!(code, 1, "{flags:?}: {stderr}");
        assert!(!stderr.contains("warning"), "{flags:?}: {stderr}");
        assert_resolved(&again, &host, &pushed);
    }

    // Tags past their time to live, and no registry: the digests read before are used, and
    // said to be.
    std::fs::write(
        ws.path("winguard.yaml"),
        format!("{CONFIG}images: {{tagTtl: 0s}}\n"),
    )
    .unwrap();
    let (code, stale, stderr) = ws.lint(&["--resolve-images"]);
    assert_eq!(code, 1, "{stderr}");
    assert_resolved(&stale, &host, &pushed);
    assert!(
        stderr.contains(&format!(
            "warning: image `{host}/contoso/orders:1.4`: cannot read its registry ("
        )) && stderr.contains("using its digest as read at"),
        "{stderr}"
    );

    // An empty cache, offline: every image is named in a warning, and judged by its name.
    std::fs::remove_dir_all(ws.path("cache/images")).unwrap();
    let (_, none, stderr) = ws.lint(&["--offline"]);
    assert_unresolved(
        &none,
        &stderr,
        &host,
        "its platforms are not in the cache and --offline reads no registry",
    );
}

#[test]
fn a_registry_with_basic_auth_is_read_with_the_docker_configs_credentials() {
    let (registry, pushed) = start(Access::TlsBasicAuth);
    let host = registry.host();
    let ws = Workspace::new(&host, CONFIG);

    // No credentials: a warning naming each image, never a crash or a silent pass.
    let (_, findings, stderr) = ws.lint(&["--resolve-images"]);
    assert_unresolved(
        &findings,
        &stderr,
        &host,
        "cannot read its platforms from its registry (",
    );

    // `docker login`'s entry in the Docker config.
    use base64::Engine;
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    std::fs::write(
        ws.path("docker/config.json"),
        format!(r#"{{"auths": {{"{host}": {{"auth": "{auth}"}}}}}}"#),
    )
    .unwrap();
    let (code, findings, stderr) = ws.lint(&["--resolve-images"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_resolved(&findings, &host, &pushed);

    // A credential helper (`credHelpers`), as cloud registries' logins install.
    std::fs::remove_dir_all(ws.path("cache")).unwrap();
    let helpers = ws.path("helpers");
    std::fs::create_dir(&helpers).unwrap();
    let helper = helpers.join("docker-credential-winguard-test");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\nread server\n[ \"$1\" = get ] && [ \"$server\" = {host} ] && printf '{{\"Username\":\"{USER}\",\"Secret\":\"{PASSWORD}\"}}'\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&helper, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        ws.path("docker/config.json"),
        format!(r#"{{"credHelpers": {{"{host}": "winguard-test"}}}}"#),
    )
    .unwrap();
    let path = format!("{}:{}", helpers.display(), std::env::var("PATH").unwrap());
    let (code, findings, stderr) = ws.lint_with(&["--resolve-images"], &[("PATH", path)]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_resolved(&findings, &host, &pushed);
}

#[test]
fn a_plain_http_registry_is_read_only_when_the_config_names_it_insecure() {
    let (registry, pushed) = start(Access::PlainHttp);
    let host = registry.host();

    let ws = Workspace::new(&host, CONFIG);
    let (_, findings, stderr) = ws.lint(&["--resolve-images"]);
    assert_unresolved(&findings, &stderr, &host, "cannot read its platforms");

    let ws = Workspace::new(
        &host,
        &format!("{CONFIG}images:\n  resolve: true\n  insecureRegistries: ['{host}']\n"),
    );
    let (code, findings, stderr) = ws.lint(&[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_resolved(&findings, &host, &pushed);
}

#[test]
fn an_unreachable_registry_is_a_warning_naming_the_image() {
    // A port nothing listens on.
    let host = format!("127.0.0.1:{}", free_port());
    let ws = Workspace::new(&host, CONFIG);
    let (code, findings, stderr) = ws.lint(&["--resolve-images"]);
    assert_eq!(code, 0, "{findings:#?}\n{stderr}");
    assert_unresolved(
        &findings,
        &stderr,
        &host,
        "cannot read its platforms from its registry (",
    );
}

#[test]
fn a_registry_with_token_auth_is_read_with_an_anonymous_bearer_token() {
    let (registry, pushed) = start(Access::TlsToken);
    let host = registry.host();
    let ws = Workspace::new(&host, CONFIG);
    let log = registry.dir.path().join("token-scopes.log");
    std::fs::remove_file(&log).unwrap();

    let (code, findings, stderr) = ws.lint(&["--resolve-images"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert_resolved(&findings, &host, &pushed);
    // Each repository was read with a pull token of its own, asked for anonymously.
    let scopes = std::fs::read_to_string(&log).unwrap();
    for repository in ["orders", "log-agent", "tools", "win2022"] {
        assert!(
            scopes
                .lines()
                .any(|s| s == format!("repository:contoso/{repository}:pull")),
            "{scopes}"
        );
    }
}

#[test]
fn a_bad_images_config_is_an_error_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    for (config, want) in [
        (
            "images:\n  tagTtl: soon\n",
            ":2:3: images.tagTtl: `soon` is not a duration (write `24h`, `30m` or `0s`)",
        ),
        (
            "images:\n  platforms:\n    contoso/app:1: [{os: windows}]\n",
            ":3:21: images.platforms.contoso/app:1[0]: \"architecture\" is a required property",
        ),
    ] {
        let file = dir.path().join("winguard.yaml");
        std::fs::write(&file, config).unwrap();
        let r = run(&[
            "lint",
            "testdata/cli/clean.yaml",
            "--config",
            file.to_str().unwrap(),
        ]);
        assert_eq!(r.code, 2, "{config}: {}", r.stderr);
        assert!(
            r.stderr
                .contains(&format!("error: {}{want}", file.display())),
            "{config}: {}",
            r.stderr
        );
    }
}
