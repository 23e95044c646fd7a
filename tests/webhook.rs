//! `winguard serve` through real sockets: the real binary on a real TLS port, a real HTTPS client
//! (`tests/webhook_client.py`: httpx with HTTP/2, http.client, ssl), patches applied with PyPI
//! `jsonpatch`, metrics parsed with PyPI `prometheus_client`, certificates made with PyPI `trustme`.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::root;

/// A running `winguard serve`, killed when dropped.
struct Server {
    child: Child,
    url: String,
    log: Arc<Mutex<String>>,
}

impl Server {
    /// Starts the server on a free port with `args` and waits until it listens.
    fn start(args: &[&str]) -> Server {
        Server::launch(args, &[]).unwrap_or_else(|log| panic!("server did not start:\n{log}"))
    }

    /// Starts the server on a free port with `args` and `env` (a `None` value removes the
    /// variable); the server once it listens, or its log if it exited first.
    fn launch(args: &[&str], env: &[(&str, Option<&Path>)]) -> Result<Server, String> {
        let mut command = Command::new(env!("CARGO_BIN_EXE_winguard"));
        command
            .current_dir(root())
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--reload-interval",
                "0.2",
            ])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (name, value) in env {
            match value {
                Some(v) => command.env(name, v),
                None => command.env_remove(name),
            };
        }
        let mut child = command.spawn().expect("winguard serve starts");
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(addr) = line.strip_prefix("winguard serve: listening on https://") {
                    let _ = tx.send(addr.to_string());
                }
                let mut log = sink.lock().unwrap();
                log.push_str(&line);
                log.push('\n');
            }
        });
        // The sender is dropped when the server closes its stderr, that is when it exits.
        let Ok(addr) = rx.recv_timeout(Duration::from_secs(30)) else {
            let _ = child.kill();
            let status = child.wait().unwrap();
            let log = log.lock().unwrap().clone();
            return Err(format!("{status}\n{log}"));
        };
        let port = addr.rsplit(':').next().unwrap().to_string();
        Ok(Server {
            child,
            url: format!("https://localhost:{port}"),
            log,
        })
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    fn pid(&self) -> String {
        self.child.id().to_string()
    }

    fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits for the server to exit, failing the test past `limit`.
    fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "still running after {limit:?}:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs the Python client; returns its (last) JSON line.
fn client(args: &[&str]) -> Value {
    let mut cmd = Command::new(common::python_exe());
    cmd.arg(root().join("tests/webhook_client.py")).args(args);
    let out = common::run_cmd(cmd, None);
    let line = out.stdout.lines().last().unwrap_or_default();
    serde_json::from_str(line).unwrap_or_else(|e| {
        panic!(
            "client {args:?} printed no JSON ({e}): {}\n{}",
            out.stdout, out.stderr
        )
    })
}

type ClientLines = std::io::Lines<BufReader<std::process::ChildStdout>>;

/// Starts the Python client for a conversation: its stdin, and its stdout's lines.
fn converse(args: &[&str]) -> (Child, ChildStdin, ClientLines) {
    let mut child = Command::new(common::python_exe())
        .arg(root().join("tests/webhook_client.py"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run the Python client: {e}"));
    let stdin = child.stdin.take().unwrap();
    let lines = BufReader::new(child.stdout.take().unwrap()).lines();
    (child, stdin, lines)
}

/// A review request whose body is half sent: the rest follows a line written to the stdin.
fn half_sent_request(server: &Server, ca: &str) -> (Child, ChildStdin, ClientLines) {
    let (child, stdin, mut lines) = converse(&[
        "slow",
        &server.url,
        ca,
        &fixture("pod-windows-unpinned-v1.json"),
    ]);
    assert!(lines.next().unwrap().unwrap().contains("half"));
    // "half" means the bytes left the client, not that the server parsed the head: a drain
    // begun before that rightly closes the connection as not yet a request. Wait until the
    // server counts the review as in flight.
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let metrics = client(&["metrics", &server.url, ca]);
        if sample(&metrics, "winguard_admission_requests_in_flight", &[]) >= 1.0 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the half-sent review never counted as in flight: {metrics}\n{}",
            server.log()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, stdin, lines)
}

/// The sum of the samples called `name` whose labels include `labels`, from the client's
/// parsed `/metrics`.
fn sample(metrics: &Value, name: &str, labels: &[(&str, &str)]) -> f64 {
    metrics["samples"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == name && labels.iter().all(|(k, v)| s["labels"][*k] == *v))
        .map(|s| s["value"].as_f64().unwrap())
        .sum()
}

fn fixture(name: &str) -> String {
    root()
        .join("testdata/admission")
        .join(name)
        .display()
        .to_string()
}

fn post(server: &Server, ca: &str, path: &str, body_file: &str) -> Value {
    client(&["review", &server.url, ca, path, body_file])
}

/// Posts one of `testdata/admission`'s reviews.
fn send(server: &Server, ca: &str, path: &str, name: &str) -> Value {
    post(server, ca, path, &fixture(name))
}

/// A CA and a serving certificate for localhost it signed, made by PyPI `trustme` (pyca's
/// `cryptography`: an implementation independent of winguard's rustls and rcgen).
struct Pki {
    ca: PathBuf,
    cert: PathBuf,
    key: PathBuf,
}

fn pki(dir: &Path, name: &str) -> Pki {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    let made = common::python(
        r#"
import sys, trustme
d, name = sys.argv[1], sys.argv[2]
ca = trustme.CA(organization_name=f"winguard test CA {name}")
ca.cert_pem.write_to_path(f"{d}/ca.crt")
cert = ca.issue_cert("localhost", "127.0.0.1")
cert.private_key_pem.write_to_path(f"{d}/tls.key")
cert.cert_chain_pems[0].write_to_path(f"{d}/tls.crt")
"#,
        &[&d, Path::new(name)],
    );
    assert_eq!(made.code, 0, "trustme: {}", made.stderr);
    Pki {
        ca: d.join("ca.crt"),
        cert: d.join("tls.crt"),
        key: d.join("tls.key"),
    }
}

/// A server with a self-signed certificate; returns it and its CA's path.
fn self_signed(dir: &Path, extra: &[&str]) -> (Server, String) {
    let certs = dir.join("certs");
    let mut args = vec![
        "--self-signed",
        "--self-signed-dir",
        certs.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let server = Server::start(&args);
    (server, certs.join("ca.crt").display().to_string())
}

fn response(reply: &Value) -> &Value {
    &reply["body"]["response"]
}

fn warnings(reply: &Value) -> Vec<String> {
    response(reply)["warnings"]
        .as_array()
        .map(|w| w.iter().map(|s| s.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

#[test]
fn reviews_get_verdicts_in_the_requests_version_over_http2() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = self_signed(dir.path(), &[]);
    for name in [
        "pod-windows-unpinned-v1.json",
        "pod-windows-unpinned-v1beta1.json",
    ] {
        let sent: Value =
            serde_json::from_str(&std::fs::read_to_string(fixture(name)).unwrap()).unwrap();
        let reply = post(&server, &ca, "/validate", &fixture(name));
        assert_eq!(reply["status"], 200, "{reply}");
        assert_eq!(reply["http_version"], "HTTP/2", "ALPN offers h2");
        assert_eq!(reply["body"]["apiVersion"], sent["apiVersion"], "{name}");
        assert_eq!(reply["body"]["kind"], "AdmissionReview");
        let r = response(&reply);
        assert_eq!(r["uid"], sent["request"]["uid"]);
        assert_eq!(r["allowed"], false, "{reply}");
        assert_eq!(r["status"]["code"], 403);
        let message = r["status"]["message"].as_str().unwrap();
        for expected in [
            "windows-os-selector-missing: ",
            "(at /spec/nodeSelector)",
            "windows-toleration-missing: ",
            "pod targets Windows because image",
        ] {
            assert!(message.contains(expected), "{expected} not in {message}");
        }
        // Below the deny level: a warning, which kubectl prints, short enough that the API
        // server passes it on whole.
        assert!(
            warnings(&reply).iter().all(|w| w.chars().count() <= 256),
            "{reply}"
        );
        assert!(
            warnings(&reply)
                .iter()
                .any(|w| w.starts_with("warning windows-pod-os-missing: ")),
            "{reply}"
        );
    }
    // HTTP/1.1 gets the same answer.
    let h1 = client(&[
        "review",
        &server.url,
        &ca,
        "/validate",
        &fixture("pod-windows-unpinned-v1.json"),
        "--http1",
    ]);
    assert_eq!(h1["http_version"], "HTTP/1.1");
    let h2 = send(&server, &ca, "/validate", "pod-windows-unpinned-v1.json");
    assert_eq!(h1["body"], h2["body"]);
    // A controller's pod template is judged the same way, at its template's paths.
    let deployment = send(
        &server,
        &ca,
        "/validate",
        "deployment-windows-unpinned-v1.json",
    );
    let message = response(&deployment)["status"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("(at /spec/template/spec/nodeSelector)"),
        "{message}"
    );
    // UPDATE is judged as CREATE is; a CronJob at its template's depth.
    for (name, at) in [
        (
            "deployment-windows-unpinned-update-v1.json",
            "(at /spec/template/spec/nodeSelector)",
        ),
        (
            "cronjob-windows-unpinned-v1.json",
            "(at /spec/jobTemplate/spec/template/spec/nodeSelector)",
        ),
    ] {
        let reply = send(&server, &ca, "/validate", name);
        assert_eq!(response(&reply)["allowed"], false, "{name}: {reply}");
        let message = response(&reply)["status"]["message"].as_str().unwrap();
        assert!(message.contains(at), "{name}: {message}");
    }
    // dryRun gets the same answer.
    let dry = send(
        &server,
        &ca,
        "/validate",
        "pod-windows-unpinned-dryrun-v1.json",
    );
    assert_eq!(dry["body"], h2["body"]);
    // Clean, exempt, suppressed, other kinds and other operations: allowed, nothing said.
    for name in [
        "pod-windows-pinned-v1.json",
        "pod-windows-unpinned-kube-system-v1.json",
        "pod-windows-suppressed-v1.json",
        "configmap-v1.json",
        "pod-delete-v1.json",
    ] {
        for endpoint in ["/validate", "/mutate"] {
            let reply = post(&server, &ca, endpoint, &fixture(name));
            let r = response(&reply);
            assert_eq!(r["allowed"], true, "{name} {endpoint}: {reply}");
            assert!(r.get("warnings").is_none(), "{name} {endpoint}: {reply}");
            assert!(r.get("patch").is_none(), "{name} {endpoint}: {reply}");
        }
    }
    let health = client(&["get", &server.url, &ca, "/healthz"]);
    assert_eq!(health["status"], 200);
    let ready = client(&["get", &server.url, &ca, "/readyz"]);
    assert_eq!(ready["status"], 200);
    // Logs name the review, never its contents; `--self-signed` said where its CA is.
    let log = server.log();
    assert!(log.contains(&format!("ca={ca}")), "{log}");
    assert!(
        log.contains("uid=705ab4f5-6393-11e8-b7cc-42010a800002"),
        "{log}"
    );
    assert!(log.contains("verdict=\"denied\""), "{log}");
    assert!(
        !log.contains("aspnet:4.8"),
        "an object's contents reached the log:\n{log}"
    );
}

#[test]
fn mutate_patches_apply_with_jsonpatch_relint_clean_and_are_idempotent() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = self_signed(dir.path(), &[]);
    let fixed_rules = [
        "windows-os-selector-missing",
        "windows-toleration-missing",
        "windows-pod-os-missing",
    ];
    for name in [
        "pod-windows-unpinned-v1.json",
        "pod-windows-unpinned-v1beta1.json",
        "deployment-windows-unpinned-v1.json",
        "cronjob-windows-unpinned-v1.json",
    ] {
        let reply = post(&server, &ca, "/mutate", &fixture(name));
        let r = response(&reply);
        assert_eq!(r["allowed"], true, "{reply}");
        assert_eq!(r["patchType"], "JSONPatch");
        let patch = r["patch"].as_str().expect("a base64 patch");
        let injected = warnings(&reply);
        for rule in fixed_rules {
            assert!(
                injected
                    .iter()
                    .any(|w| w.starts_with("winguard injected: ") && w.contains(rule)),
                "{rule} not in {injected:?}"
            );
        }
        // An independent JSON Patch implementation applies it to the object as sent.
        let patched_review = dir.path().join(format!("patched-{name}"));
        let applied = client(&[
            "apply",
            &fixture(name),
            patch,
            patched_review.to_str().unwrap(),
        ]);
        let object = &applied["object"];
        let spec = match object["kind"].as_str() {
            Some("Pod") => &object["spec"],
            Some("CronJob") => &object["spec"]["jobTemplate"]["spec"]["template"]["spec"],
            _ => &object["spec"]["template"]["spec"],
        };
        assert_eq!(
            spec["nodeSelector"]["kubernetes.io/os"], "windows",
            "{object}"
        );
        assert_eq!(spec["os"]["name"], "windows");
        let tolerations = spec["tolerations"].as_array().unwrap();
        assert!(
            tolerations
                .iter()
                .any(|t| t["key"] == "os" && t["value"] == "windows")
        );
        // The cluster's own tolerations are still there.
        if object["kind"] == "Pod" {
            assert!(
                tolerations
                    .iter()
                    .any(|t| t["key"] == "node.kubernetes.io/not-ready")
            );
        }
        // Mutating the patched object again changes nothing (reinvocationPolicy: IfNeeded).
        let again = post(&server, &ca, "/mutate", patched_review.to_str().unwrap());
        assert_eq!(response(&again)["allowed"], true);
        assert!(
            response(&again).get("patch").is_none(),
            "not idempotent: {again}"
        );
        // Validation now admits it, and the CLI finds none of the fixed rules.
        let validated = post(&server, &ca, "/validate", patched_review.to_str().unwrap());
        assert_eq!(response(&validated)["allowed"], true, "{validated}");
        let object_file = dir.path().join(format!("object-{name}"));
        std::fs::write(&object_file, serde_json::to_string(object).unwrap()).unwrap();
        let (_, report) = common::json(&["lint", object_file.to_str().unwrap()]);
        let rules = common::rules_of(&report);
        for rule in fixed_rules {
            assert!(
                !rules.contains(&rule.to_string()),
                "{rule} still fires: {rules:?}"
            );
        }
    }
}

#[test]
fn malformed_reviews_get_structured_rejections_and_the_server_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, ca) = self_signed(dir.path(), &["--request-timeout", "1"]);
    let cases: &[(&str, u64)] = &[
        ("not json", 400),
        ("[1, 2]", 400),
        ("{}", 400),
        (
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}"#,
            400,
        ),
        (
            r#"{"kind":"Pod","apiVersion":"v1","metadata":{"name":"x"}}"#,
            400,
        ),
        (
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v2","request":{"uid":"u1"}}"#,
            200,
        ),
        (
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u2"}}"#,
            200,
        ),
        (
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u4","operation":5}}"#,
            200,
        ),
        (
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u3","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","userInfo":{},"object":null}}"#,
            200,
        ),
    ];
    for (body, status) in cases {
        let reply = client(&["raw", &server.url, &ca, "/validate", body]);
        assert_eq!(reply["status"], *status, "{body}: {reply}");
        let r = response(&reply);
        assert_eq!(r["allowed"], false, "{body}: {reply}");
        assert_eq!(r["status"]["code"], 400, "{body}: {reply}");
        assert!(!r["status"]["message"].as_str().unwrap().is_empty());
        if *status == 200 {
            // The uid is echoed so the API server can match the answer.
            assert!(r["uid"].as_str().unwrap().starts_with('u'), "{reply}");
        }
    }
    // An object of the wrong shape: denied, naming the field.
    let shape = send(
        &server,
        &ca,
        "/validate",
        "pod-containers-not-a-list-v1.json",
    );
    assert_eq!(shape["status"], 200);
    let message = response(&shape)["status"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("spec.containers: expected a list"),
        "{message}"
    );
    // Larger than 3 MiB: a 413 the client can read, however it sends: HTTP/1.1 written whole
    // before reading (no `Expect: 100-continue`), and HTTP/2.
    let big = dir.path().join("big.json");
    std::fs::write(&big, format!("{{\"pad\":\"{}\"}}", "x".repeat(4 << 20))).unwrap();
    let reply = client(&["write-first", &server.url, &ca, big.to_str().unwrap()]);
    assert_eq!(reply["status"], 413, "{reply}");
    assert!(
        reply["body"]
            .as_str()
            .unwrap()
            .contains("larger than 3 MiB"),
        "{reply}"
    );
    let reply = client(&[
        "review",
        &server.url,
        &ca,
        "/validate",
        big.to_str().unwrap(),
    ]);
    assert_eq!(reply["status"], 413, "{reply}");
    assert_eq!(reply["http_version"], "HTTP/2", "{reply}");
    // A client that stops sending its body is cut off after the request timeout.
    let (mut slow, mut stdin, mut lines) = half_sent_request(&server, &ca);
    std::thread::sleep(Duration::from_millis(2500));
    let _ = stdin.write_all(b"go\n");
    let status_line = lines.next().unwrap().unwrap();
    assert!(status_line.contains("408"), "{status_line}");
    let _ = slow.wait();
    // Wrong method, unknown path.
    let get = client(&["get", &server.url, &ca, "/validate"]);
    assert_eq!(get["status"], 405);
    let missing = client(&["get", &server.url, &ca, "/nope"]);
    assert_eq!(missing["status"], 404);
    // Still serving, never crashed.
    assert!(server.running(), "{}", server.log());
    let ok = send(&server, &ca, "/validate", "pod-windows-pinned-v1.json");
    assert_eq!(response(&ok)["allowed"], true);
    let metrics = client(&["metrics", &server.url, &ca]);
    let invalid = sample(
        &metrics,
        "winguard_admission_requests_total",
        &[("verdict", "invalid")],
    );
    assert!(invalid >= 10.0, "{metrics}");
}

#[test]
fn audit_mode_and_config_reload_without_restart() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("winguard.yaml");
    std::fs::write(&config, "webhook:\n  enforcement: enforce\n").unwrap();
    let (server, ca) = self_signed(dir.path(), &["--config", config.to_str().unwrap()]);
    let unpinned = fixture("pod-windows-unpinned-v1.json");
    assert_eq!(
        response(&post(&server, &ca, "/validate", &unpinned))["allowed"],
        false
    );

    // Audit: never denies; every finding becomes a warning.
    write_replacing(&config, "webhook:\n  enforcement: audit\n");
    let reply = wait_for(|| {
        let r = post(&server, &ca, "/validate", &unpinned);
        (response(&r)["allowed"] == true).then_some(r)
    });
    // What enforcing would deny is marked so, one warning per finding, and every finding is in
    // the audit annotation the API server records under the webhook's name.
    let w = warnings(&reply);
    assert!(
        w.iter()
            .any(|w| w.starts_with("would deny: error windows-os-selector-missing: spec")),
        "{w:?}"
    );
    assert!(w.iter().all(|w| w.chars().count() <= 256), "{w:?}");
    let listed: Value = serde_json::from_str(
        response(&reply)["auditAnnotations"]["findings"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let listed = listed.as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|f| f["rule"] == "windows-os-selector-missing" && f["severity"] == "error"),
        "{listed:?}"
    );
    assert_eq!(listed.len(), w.len(), "{listed:?} {w:?}");
    let metrics = client(&["metrics", &server.url, &ca]);
    assert!(
        sample(
            &metrics,
            "winguard_admission_requests_total",
            &[("endpoint", "validate"), ("verdict", "would-deny")]
        ) >= 1.0,
        "{metrics}"
    );

    // A bad new config is rejected; the last good one stays in force.
    write_replacing(&config, "webhook:\n  enforcement: sometimes\n");
    wait_for(|| server.log().contains("new config rejected").then_some(()));
    assert!(
        server.log().contains("enforcement"),
        "the error names the key:\n{}",
        server.log()
    );
    assert_eq!(
        response(&post(&server, &ca, "/validate", &unpinned))["allowed"],
        true
    );
    let metrics = client(&["metrics", &server.url, &ca]);
    let reloads = |result: &str| {
        sample(
            &metrics,
            "winguard_config_reloads_total",
            &[("result", result)],
        )
    };
    assert!(
        reloads("success") >= 1.0 && reloads("failure") >= 1.0,
        "{metrics}"
    );

    // Fixed again: enforced again.
    write_replacing(
        &config,
        "webhook:\n  enforcement: enforce\n  denyOn: error\n",
    );
    wait_for(|| {
        let r = post(&server, &ca, "/validate", &unpinned);
        (response(&r)["allowed"] == false).then_some(())
    });
}

/// Replaces a file the way Kubernetes updates a mounted volume: a new file renamed over the old.
fn write_replacing(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Polls until `f` gives a value (or fails after 15 s).
fn wait_for<T>(mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            start.elapsed() < Duration::from_secs(15),
            "condition not reached in 15 s"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn certificate_rotation_under_traffic_fails_no_request() {
    let dir = tempfile::tempdir().unwrap();
    let a = pki(dir.path(), "A");
    let b = pki(dir.path(), "B");
    let live = dir.path().join("live");
    std::fs::create_dir_all(&live).unwrap();
    let (cert, key) = (live.join("tls.crt"), live.join("tls.key"));
    std::fs::copy(&a.cert, &cert).unwrap();
    std::fs::copy(&a.key, &key).unwrap();
    let bundle = dir.path().join("bundle.crt");
    let both = std::fs::read_to_string(&a.ca).unwrap() + &std::fs::read_to_string(&b.ca).unwrap();
    std::fs::write(&bundle, both).unwrap();
    let server = Server::start(&[
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        key.to_str().unwrap(),
    ]);
    let url = server.url.clone();
    let bundle_path = bundle.display().to_string();
    let traffic = std::thread::spawn(move || {
        client(&[
            "hammer",
            &url,
            &bundle_path,
            &fixture("pod-windows-pinned-v1.json"),
            "5",
        ])
    });
    // Rotate only once the traffic is answered under the first certificate (the client's start
    // takes its time on a loaded machine).
    wait_for(|| {
        let metrics = client(&["metrics", &server.url, &bundle.display().to_string()]);
        (sample(&metrics, "winguard_admission_requests_total", &[]) >= 3.0).then_some(())
    });
    // As cert-manager does it: the key and the certificate replaced one after the other (in
    // between, the pair does not match and is rejected; the old one stays in use).
    write_replacing(&key, &std::fs::read_to_string(&b.key).unwrap());
    // Several polls see the mismatched pair (one every 0.2 s).
    std::thread::sleep(Duration::from_millis(1000));
    write_replacing(&cert, &std::fs::read_to_string(&b.cert).unwrap());
    let result = traffic.join().unwrap();
    assert_eq!(result["failed"], 0, "{result}\n{}", server.log());
    assert!(result["ok"].as_u64().unwrap() > 10, "{result}");
    let issuers = result["issuers"].as_object().unwrap();
    assert!(
        issuers.contains_key("winguard test CA A") && issuers.contains_key("winguard test CA B"),
        "both certificates served: {result}"
    );
    assert!(
        server.log().contains("certificate reloaded"),
        "{}",
        server.log()
    );
}

#[test]
fn sigterm_drains_requests_in_flight_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, ca) = self_signed(dir.path(), &[]);
    let (mut slow, mut stdin, mut lines) = half_sent_request(&server, &ca);
    let kill = Command::new("kill")
        .args(["-TERM", &server.pid()])
        .status()
        .unwrap();
    assert!(kill.success());
    // Draining: the request in flight keeps the server up.
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        server.running(),
        "exited with a request in flight:\n{}",
        server.log()
    );
    stdin.write_all(b"go\n").unwrap();
    let status_line = lines.next().unwrap().unwrap();
    assert!(status_line.contains("200"), "{status_line}");
    let _ = slow.wait();
    let status = server.wait_exit(Duration::from_secs(15));
    assert_eq!(status.code(), Some(0), "{}", server.log());
    assert!(server.log().contains("draining"), "{}", server.log());
}

#[test]
fn the_drain_is_bounded_when_a_request_never_finishes() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, ca) = self_signed(
        dir.path(),
        &["--drain-timeout", "1", "--request-timeout", "60"],
    );
    let (mut stuck, _stdin, _lines) = half_sent_request(&server, &ca);
    let kill = Command::new("kill")
        .args(["-TERM", &server.pid()])
        .status()
        .unwrap();
    assert!(kill.success());
    // --drain-timeout 1: well within 10 s, though the request never completes.
    let status = server.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0), "{}", server.log());
    let _ = stuck.kill();
}

#[test]
fn metrics_are_prometheus_text_that_prometheus_client_parses() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = self_signed(dir.path(), &[]);
    send(&server, &ca, "/validate", "pod-windows-unpinned-v1.json");
    send(&server, &ca, "/mutate", "pod-windows-unpinned-v1.json");
    send(&server, &ca, "/validate", "pod-windows-pinned-v1.json");
    send(
        &server,
        &ca,
        "/validate",
        "pod-windows-unpinned-kube-system-v1.json",
    );
    let metrics = client(&["metrics", &server.url, &ca]);
    assert_eq!(metrics["status"], 200);
    let families = metrics["families"].as_object().unwrap();
    for (name, kind) in [
        ("winguard_admission_requests", "counter"),
        ("winguard_admission_findings", "counter"),
        ("winguard_admission_duration_seconds", "histogram"),
        ("winguard_ready", "gauge"),
        ("winguard_admission_requests_in_flight", "gauge"),
    ] {
        assert_eq!(
            families.get(name).and_then(Value::as_str),
            Some(kind),
            "{name}: {families:?}"
        );
    }
    let value = |name: &str, labels: &[(&str, &str)]| sample(&metrics, name, labels);
    // Every review above was answered: none is still counted.
    assert_eq!(value("winguard_admission_requests_in_flight", &[]), 0.0);
    let requests = "winguard_admission_requests_total";
    assert_eq!(
        value(requests, &[("endpoint", "validate"), ("verdict", "denied")]),
        1.0
    );
    assert_eq!(
        value(
            requests,
            &[("endpoint", "validate"), ("verdict", "allowed")]
        ),
        1.0
    );
    assert_eq!(
        value(requests, &[("endpoint", "mutate"), ("verdict", "patched")]),
        1.0
    );
    // An exempt namespace's review is counted as exempt, not as allowed after a check.
    assert_eq!(
        value(requests, &[("endpoint", "validate"), ("verdict", "exempt")]),
        1.0
    );
    assert_eq!(
        value(
            "winguard_admission_findings_total",
            &[("rule", "windows-os-selector-missing")]
        ),
        2.0
    );
    // Every /validate review is timed, the exempt one too.
    assert_eq!(
        value(
            "winguard_admission_duration_seconds_count",
            &[("endpoint", "validate")]
        ),
        3.0
    );
    assert_eq!(value("winguard_ready", &[]), 1.0);
}

#[test]
fn only_tls_1_2_and_1_3_are_spoken() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = self_signed(dir.path(), &[]);
    for version in ["1.2", "1.3"] {
        let r = client(&["tls", &server.url, &ca, version]);
        assert_eq!(r["version"], format!("TLSv{version}"), "{r}");
    }
    // The client offers only TLS 1.1 and the server refuses it with an alert.
    let old = client(&["tls", &server.url, &ca, "1.1"]);
    let error = old["error"].as_str().unwrap_or_else(|| panic!("{old}"));
    assert!(error.contains("ALERT"), "{error}");
}

#[test]
fn connections_past_the_limit_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = self_signed(dir.path(), &["--max-connections", "2"]);
    let (mut idle, mut stdin, mut lines) = converse(&["idle", &server.url, &ca, "3"]);
    let held: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
    assert_eq!(
        held["held"],
        serde_json::json!([true, true, false]),
        "{held}"
    );
    // Once they close, new connections are served again.
    let _ = stdin.write_all(b"\n");
    let _ = idle.wait();
    let ok = wait_for(|| {
        let r = client(&["get", &server.url, &ca, "/healthz"]);
        (r["status"] == 200).then_some(r)
    });
    assert_eq!(ok["text"], "ok\n");
}

/// Oversized and valid reviews mixed, over HTTP/1.1 clients that write the whole body first and
/// over one HTTP/2 connection kept throughout, for a few seconds: every oversized review gets its
/// 413, and no valid one fails (the HTTP/2 connection survives every 413).
#[test]
fn oversized_reviews_get_their_413_and_valid_ones_never_fail() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, ca) = self_signed(dir.path(), &[]);
    let big = dir.path().join("big.json");
    std::fs::write(&big, format!("{{\"pad\":\"{}\"}}", "x".repeat(4 << 20))).unwrap();
    let soak = client(&[
        "soak",
        &server.url,
        &ca,
        &fixture("pod-windows-realistic-v1.json"),
        big.to_str().unwrap(),
        "6",
    ]);
    let count = |k: &str| soak[k].as_u64().unwrap();
    assert_eq!(count("valid_failed"), 0, "{soak}");
    assert_eq!(count("big_failed"), 0, "{soak}");
    assert!(count("valid_ok") >= 6 && count("big_413") >= 4, "{soak}");
    eprintln!("soak: {soak}");
    assert!(server.running(), "{}", server.log());
}

/// `--metrics-listen` serves the same metrics over plain HTTP on a port of their own (what the
/// chart's ServiceMonitor and NetworkPolicy use), and nothing of the webhook there.
#[test]
fn metrics_are_also_served_over_plain_http_off_the_webhook_port() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ca) = self_signed(dir.path(), &["--metrics-listen", "127.0.0.1:0"]);
    send(&server, &ca, "/validate", "pod-windows-unpinned-v1.json");
    let url = wait_for(|| {
        server.log().lines().find_map(|l| {
            l.strip_prefix("winguard serve: metrics on ")
                .and_then(|u| u.strip_suffix("/metrics"))
                .map(str::to_string)
        })
    });
    assert!(url.starts_with("http://127.0.0.1:"), "{url}");
    let metrics = client(&["metrics", &url, &ca]);
    assert_eq!(metrics["status"], 200, "{metrics}");
    assert_eq!(
        sample(
            &metrics,
            "winguard_admission_requests_total",
            &[("endpoint", "validate"), ("verdict", "denied")]
        ),
        1.0,
        "{metrics}"
    );
    let review = client(&["get", &url, &ca, "/validate"]);
    assert_eq!(review["status"], 404, "{review}");
}

/// Bodies sent to a path that does not exist or with a method a path does not take get their
/// 404 or 405 and nothing else: over HTTP/2 no RST_STREAM follows the answer (clients that read
/// while they upload, as curl does, fail on one), over HTTP/1.1 the connection is not closed
/// under a client still writing its body. The client starts each HTTP/2 body after a PING round
/// trip, so a server that answers before reading the body is caught at nearly every request.
#[test]
fn wrong_paths_and_methods_are_answered_whole_over_http2_and_http1() {
    let dir = tempfile::tempdir().unwrap();
    let (mut server, ca) = self_signed(dir.path(), &[]);
    let body = dir.path().join("body.json");
    std::fs::write(&body, format!("{{\"pad\":\"{}\"}}", "x".repeat(64 << 10))).unwrap();
    let reply = client(&["unrouted", &server.url, &ca, body.to_str().unwrap(), "200"]);
    let expected = serde_json::json!({
        "HTTP/2 POST /nope: 404": 200,
        "HTTP/2 PUT /validate: 405": 200,
        "HTTP/1.1 POST /nope: 404": 20,
        "HTTP/1.1 PUT /validate: 405": 20,
    });
    assert_eq!(reply["outcomes"], expected, "{}", server.log());
    assert!(server.running(), "{}", server.log());
    let ok = send(&server, &ca, "/validate", "pod-windows-pinned-v1.json");
    assert_eq!(response(&ok)["allowed"], true, "{ok}");
}

/// A folder made with exactly `mode` (whatever the umask).
#[cfg(unix)]
fn create_dir_with_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// A file's permission bits in octal, as `chmod` takes them.
#[cfg(unix)]
fn mode_of(path: &Path) -> String {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::symlink_metadata(path).unwrap();
    format!("{:o}", meta.mode() & 0o7777)
}

/// The folder holds a private key: a real folder of this user's, mode 0700, with `tls.key`
/// 0600 in it (and the server on that certificate).
#[cfg(unix)]
fn assert_private_key_folder(folder: &Path, uid: u32) {
    use std::os::unix::fs::MetadataExt;
    let meta =
        std::fs::symlink_metadata(folder).unwrap_or_else(|e| panic!("{}: {e}", folder.display()));
    assert!(meta.is_dir(), "{}: {meta:?}", folder.display());
    assert_eq!(meta.uid(), uid, "{}", folder.display());
    assert_eq!(mode_of(folder), "700", "{}", folder.display());
    let key = std::fs::metadata(folder.join("tls.key")).unwrap();
    assert_eq!(key.uid(), uid);
    assert_eq!(
        mode_of(&folder.join("tls.key")),
        "600",
        "{}",
        folder.display()
    );
}

/// `--self-signed` without a folder writes to one of the user's alone: under $XDG_RUNTIME_DIR,
/// else in the temp folder named for the uid, made 0700, with the key 0600.
#[cfg(unix)]
#[test]
fn self_signed_key_is_written_private_in_a_private_folder() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let uid = std::fs::metadata(dir.path()).unwrap().uid();

    let runtime = dir.path().join("runtime");
    std::fs::create_dir(&runtime).unwrap();
    let server = Server::launch(&["--self-signed"], &[("XDG_RUNTIME_DIR", Some(&runtime))])
        .unwrap_or_else(|log| panic!("server did not start:\n{log}"));
    let folder = runtime.join("winguard-self-signed");
    assert_private_key_folder(&folder, uid);
    let ca = folder.join("ca.crt").display().to_string();
    let ok = send(&server, &ca, "/validate", "pod-windows-pinned-v1.json");
    assert_eq!(response(&ok)["allowed"], true, "{ok}");
    drop(server);
    // Started again, it takes the folder it made.
    let again = Server::launch(&["--self-signed"], &[("XDG_RUNTIME_DIR", Some(&runtime))]);
    assert!(again.is_ok(), "{:?}", again.err());
    drop(again);

    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    let server = Server::launch(
        &["--self-signed"],
        &[("XDG_RUNTIME_DIR", None), ("TMPDIR", Some(&tmp))],
    )
    .unwrap_or_else(|log| panic!("server did not start:\n{log}"));
    assert_private_key_folder(&tmp.join(format!("winguard-self-signed-{uid}")), uid);
    drop(server);
}

/// A folder named by `--self-signed-dir` is used as it is, and a key an earlier run left
/// readable to others is replaced by one created 0600.
#[cfg(unix)]
#[test]
fn self_signed_key_in_a_named_folder_is_private_too() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let given = dir.path().join("given");
    create_dir_with_mode(&given, 0o755);
    let old_key = given.join("tls.key");
    std::fs::write(&old_key, "an old key\n").unwrap();
    std::fs::set_permissions(&old_key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let server = Server::launch(
        &[
            "--self-signed",
            "--self-signed-dir",
            given.to_str().unwrap(),
        ],
        &[],
    )
    .unwrap_or_else(|log| panic!("server did not start:\n{log}"));
    assert_eq!(mode_of(&given), "755", "the named folder is used as it is");
    assert_eq!(mode_of(&old_key), "600", "{}", old_key.display());
    assert!(
        std::fs::read_to_string(&old_key)
            .unwrap()
            .contains("PRIVATE KEY")
    );
    drop(server);
}

/// A default folder that someone else could have prepared (open to group or others, a symlink,
/// not a folder) is refused with an error naming it and what is wrong; no key is written.
#[cfg(unix)]
#[test]
fn self_signed_refuses_a_default_folder_others_could_enter() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere");
    create_dir_with_mode(&elsewhere, 0o700);
    // Each makes the default folder (the first argument) the way the problem says.
    type Prepare = fn(&Path, &Path);
    let cases: [(&str, Prepare); 3] = [
        ("has mode 0755", |folder, _| {
            create_dir_with_mode(folder, 0o755)
        }),
        ("is a symbolic link", |folder, elsewhere| {
            std::os::unix::fs::symlink(elsewhere, folder).unwrap();
        }),
        ("is not a folder", |folder, _| {
            std::fs::write(folder, "").unwrap()
        }),
    ];
    for (i, (problem, prepare)) in cases.iter().enumerate() {
        let runtime = dir.path().join(format!("runtime{i}"));
        std::fs::create_dir(&runtime).unwrap();
        let folder = runtime.join("winguard-self-signed");
        prepare(&folder, &elsewhere);
        let started = Server::launch(&["--self-signed"], &[("XDG_RUNTIME_DIR", Some(&runtime))]);
        let log = started
            .err()
            .unwrap_or_else(|| panic!("started with a default folder that {problem}"));
        assert!(!log.starts_with("exit status: 0"), "{log}");
        assert!(
            log.contains(&format!("{}: {problem}", folder.display())),
            "{problem}: {log}"
        );
        assert!(!folder.join("tls.key").exists() && !elsewhere.join("tls.key").exists());
    }
}

/// `--nodes` read again when the file changes (a ConfigMap the cluster's node list is kept in):
/// the same pod is allowed while the Windows nodes' taint is the one it tolerates, and denied,
/// with the file named, once the nodes carry another; a bad file keeps the last good nodes.
#[test]
fn the_nodes_file_is_reloaded_when_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes.json");
    let cluster = |taint: &str, build: &str| {
        let (key, rest) = taint.split_once('=').unwrap();
        let (value, effect) = rest.split_once(':').unwrap();
        serde_json::json!({
            "apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
            "items": [{
                "apiVersion": "v1", "kind": "Node",
                "metadata": {"name": "win-0", "labels": {
                    "kubernetes.io/os": "windows", "node.kubernetes.io/windows-build": build}},
                "spec": {"taints": [{"key": key, "value": value, "effect": effect}]},
                "status": {"nodeInfo": {"operatingSystem": "windows",
                                        "kernelVersion": format!("{build}.5329")}}
            }]
        })
        .to_string()
    };
    std::fs::write(&nodes, cluster("os=windows:NoSchedule", "10.0.17763")).unwrap();
    let (server, ca) = self_signed(dir.path(), &["--nodes", nodes.to_str().unwrap()]);
    let pod = fixture("pod-windows-pinned-v1.json");
    let reply = post(&server, &ca, "/validate", &pod);
    assert_eq!(response(&reply)["allowed"], true, "{reply}");

    write_replacing(&nodes, &cluster("sku=Windows:NoSchedule", "10.0.17763"));
    let reply = wait_for(|| {
        let r = post(&server, &ca, "/validate", &pod);
        (response(&r)["allowed"] == false).then_some(r)
    });
    let message = response(&reply)["status"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("windows-toleration-missing") && message.contains("nodes.json"),
        "{reply}"
    );

    write_replacing(&nodes, "{\"kind\": \"List\"");
    wait_for(|| server.log().contains("new config rejected").then_some(()));
    assert_eq!(
        response(&post(&server, &ca, "/validate", &pod))["allowed"],
        false
    );
}

#[test]
fn the_webhook_judges_images_by_the_platforms_the_config_states() {
    // The pinned pod's image, stated in the config as Linux-only: the review that passed by the
    // image's name is denied, naming the config that states the platforms.
    let dir = tempfile::tempdir().unwrap();
    let pod = fixture("pod-windows-pinned-v1.json");
    let review: Value = serde_json::from_str(&std::fs::read_to_string(&pod).unwrap()).unwrap();
    let image = review["request"]["object"]["spec"]["containers"][0]["image"]
        .as_str()
        .unwrap()
        .to_string();
    let config = dir.path().join("winguard.yaml");
    std::fs::write(
        &config,
        format!("images:\n  platforms:\n    '{image}': [{{os: linux, architecture: amd64}}]\n"),
    )
    .unwrap();
    let (server, ca) = self_signed(dir.path(), &["--config", config.to_str().unwrap()]);
    let reply = post(&server, &ca, "/validate", &pod);
    assert_eq!(response(&reply)["allowed"], false, "{reply}");
    let message = response(&reply)["status"]["message"].as_str().unwrap_or("");
    assert!(
        message.contains("windows-image-os-mismatch")
            && message.contains("is published only for linux/amd64")
            && message.contains("winguard.yaml"),
        "{reply}"
    );
}

/// `benches/ceiling.sh` builds the server with the review replaced by a constant answer, from
/// `benches/constant-answer.patch`: the patch must still apply to the server's source, or the
/// bench fails only when someone next runs it.
#[test]
fn the_ceiling_benchs_constant_answer_patch_still_applies() {
    let out = Command::new("git")
        .current_dir(root())
        .args(["apply", "--check", "benches/constant-answer.patch"])
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "benches/constant-answer.patch no longer applies to src/serve/mod.rs (make it again \
         against today's source):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
