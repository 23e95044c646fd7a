//! Native chart rendering against real Helm 4 (PyPI `helm-python-sdk`, Helm's Go engine): every
//! case of `testdata/charts/cases.yaml` is rendered by both and compared template by template —
//! exact text where Helm's output is deterministic, parsed YAML otherwise, and the shape (same
//! documents, keys and value types) where the chart uses random or clock functions.

mod common;

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value as Json;

use helm_engine::values::floats;
use helm_engine::{RenderOptions, load_chart, render_chart};

#[derive(Deserialize)]
struct Case {
    chart: String,
    #[serde(default)]
    values: serde_json::Map<String, Json>,
    #[serde(default = "default_release")]
    release: String,
    #[serde(default = "default_namespace")]
    namespace: String,
    /// `exact` (default), `yaml` or `shape`.
    #[serde(default)]
    compare: Compare,
    /// For cases that must fail: both must fail, and Helm's message must contain this.
    #[serde(default)]
    error: Option<String>,
    /// `cli`: compared with the `helm` binary only. helm-python-sdk's engine is Helm built as
    /// a library, without the release's version stamped in (`.Capabilities.HelmVersion` is
    /// `v4.2` there, `v4.2.3` in the binary winguard matches).
    #[serde(default)]
    only: Option<String>,
}

#[derive(Deserialize, Default, PartialEq, Clone, Copy, Debug)]
#[serde(rename_all = "lowercase")]
enum Compare {
    #[default]
    Exact,
    Yaml,
    Shape,
    /// Parsed YAML, each PEM certificate compared field by field ([`certificate_fields`]).
    Certificates,
}

fn default_release() -> String {
    "release-name".into()
}
fn default_namespace() -> String {
    "default".into()
}

fn cases() -> Vec<Case> {
    let text = std::fs::read_to_string(common::root().join("testdata/charts/cases.yaml")).unwrap();
    serde_yaml_ng::from_str(&text).unwrap()
}

/// Helm's results for every case, from one Python process.
fn helm_results(cases: &[Case]) -> Vec<Json> {
    let input: Vec<Json> = cases
        .iter()
        .map(|c| {
            serde_json::json!({
                "chart": common::root().join("testdata/charts").join(&c.chart),
                "values": c.values,
                "release": c.release,
                "namespace": c.namespace,
            })
        })
        .collect();
    let mut cmd = std::process::Command::new(common::python_exe());
    cmd.arg(common::root().join("tests/helm_oracle.py"));
    let run = common::run_cmd(cmd, Some(serde_json::to_string(&input).unwrap().as_bytes()));
    assert_eq!(run.code, 0, "helm oracle failed: {}", run.stderr);
    serde_json::from_str(&run.stdout).unwrap()
}

/// The documents of a rendered file, parsed.
fn documents(text: &str) -> Vec<Json> {
    text.split("\n---")
        .filter_map(|d| serde_yaml_ng::from_str::<Json>(d).ok())
        .filter(|d| !d.is_null())
        .collect()
}

/// A value's shape: the same keys and value types, scalars blanked.
fn shape(v: &Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), shape(v))).collect()),
        Json::Array(a) => Json::Array(a.iter().map(shape).collect()),
        Json::String(_) => Json::String(String::new()),
        Json::Number(_) => Json::from(0),
        other => other.clone(),
    }
}

fn same(compare: Compare, ours: &str, helm: &str) -> bool {
    match compare {
        Compare::Exact => ours == helm,
        Compare::Yaml => documents(ours) == documents(helm),
        Compare::Shape => {
            let (a, b) = (documents(ours), documents(helm));
            a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| shape(x) == shape(y))
        }
        Compare::Certificates => {
            let fields = |text| {
                documents(text)
                    .iter()
                    .map(with_certificate_fields)
                    .collect()
            };
            let (a, b): (Vec<Json>, Vec<Json>) = (fields(ours), fields(helm));
            a == b
        }
    }
}

/// The value with every PEM certificate in it replaced by its DER, field by field.
fn with_certificate_fields(v: &Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), with_certificate_fields(v)))
                .collect(),
        ),
        Json::Array(a) => Json::Array(a.iter().map(with_certificate_fields).collect()),
        Json::String(s) if s.contains("-----BEGIN CERTIFICATE-----") => {
            let block = pem::parse(s).unwrap();
            let mut fields = Vec::new();
            der_fields(block.contents(), "", &mut fields);
            let (_, cert) = x509_parser::parse_x509_certificate(block.contents()).unwrap();
            let validity = cert.validity();
            let seconds = validity.not_after.timestamp() - validity.not_before.timestamp();
            fields.push(format!("valid for {seconds} s"));
            serde_json::json!(fields)
        }
        other => other.clone(),
    }
}

/// A certificate's DER as one line per element: its path (`0.0.3` is the TBS certificate's
/// issuer), tag and, for primitive elements, its bytes. What Sprig and Go make random or from the
/// clock is replaced by what must hold of it: the serial (`rand.Int(rand.Reader, 2^128)`: a
/// positive INTEGER of at most 17 bytes in minimal form), the validity times (their tag: UTCTime
/// or GeneralizedTime), the signature value. Extension values (DER in an OCTET STRING) are
/// walked as well.
fn der_fields(bytes: &[u8], path: &str, out: &mut Vec<String>) {
    use x509_parser::der_parser::asn1_rs::{Any, FromDer};
    let mut rest = bytes;
    let mut index = 0;
    while !rest.is_empty() {
        let (next, any) = Any::from_der(rest).expect("DER");
        let here = if path.is_empty() {
            index.to_string()
        } else {
            format!("{path}.{index}")
        };
        let tag = format!(
            "{here} {:?} {} {}",
            any.class(),
            any.tag().0,
            if any.header.is_constructed() {
                "c"
            } else {
                "p"
            }
        );
        let is_extension_value =
            here.starts_with("0.0.7.0.") && here.matches('.').count() == 5 && any.tag().0 == 4;
        match here.as_str() {
            "0.0.1" => {
                let d = any.data;
                let minimal = d.len() == 1 || !(d[0] == 0 && d[1] < 0x80);
                out.push(format!(
                    "{tag} serial positive={} minimal={minimal} len<=17={}",
                    d[0] < 0x80,
                    d.len() <= 17
                ));
            }
            "0.0.4.0" | "0.0.4.1" | "0.2" => out.push(tag),
            _ if any.header.is_constructed() => {
                out.push(tag);
                der_fields(any.data, &here, out);
            }
            _ if is_extension_value => {
                out.push(tag);
                der_fields(any.data, &here, out);
            }
            _ => out.push(format!("{tag} {:02x?}", any.data)),
        }
        rest = next;
        index += 1;
    }
}

#[test]
fn native_rendering_matches_helm() {
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| c.only.as_deref() != Some("cli"))
        .collect();
    let helm = helm_results(&cases);
    let (mut templates, mut matched, mut errors, mut errors_matched) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for (case, helm) in cases.iter().zip(&helm) {
        let dir = common::root().join("testdata/charts").join(&case.chart);
        let opts = RenderOptions {
            release_name: case.release.clone(),
            namespace: case.namespace.clone(),
            ..RenderOptions::default()
        };
        let values = match floats(Json::Object(case.values.clone())) {
            Json::Object(m) => m,
            _ => unreachable!(),
        };
        let ours = load_chart(&dir).and_then(|c| render_chart(&c, &values, &opts));
        match (&case.error, ours, helm.get("files")) {
            (Some(want), Err(e), None) => {
                let helm_error = helm["error"].as_str().unwrap_or("");
                errors += 1;
                if helm_error.contains(want.as_str()) && e.message.contains(want.as_str()) {
                    errors_matched += 1;
                } else {
                    failures.push(format!(
                        "{}: error\n  ours: {}\n  helm: {helm_error}",
                        case.chart, e.message
                    ));
                }
            }
            (None, Ok(ours), Some(Json::Object(files))) => {
                let helm_files: BTreeMap<&String, &str> = files
                    .iter()
                    .map(|(k, v)| (k, v.as_str().unwrap_or("")))
                    .collect();
                let our_names: Vec<&String> = ours.files.keys().collect();
                let helm_names: Vec<&String> = helm_files.keys().copied().collect();
                if our_names != helm_names {
                    failures.push(format!(
                        "{}: templates differ\n  ours: {our_names:?}\n  helm: {helm_names:?}",
                        case.chart
                    ));
                }
                for (name, text) in &ours.files {
                    let Some(expected) = helm_files.get(name) else {
                        continue;
                    };
                    templates += 1;
                    if same(case.compare, text, expected) {
                        matched += 1;
                    } else {
                        let diff = similar::TextDiff::from_lines(*expected, text.as_str())
                            .unified_diff()
                            .header("helm", "winguard")
                            .to_string();
                        failures.push(format!("{} {name}:\n{diff}", case.chart));
                    }
                }
            }
            (_, ours, _) => failures.push(format!(
                "{}: ours {:?}, helm {}",
                case.chart,
                ours.map(|r| r.files.len()).map_err(|e| e.message),
                helm
            )),
        }
    }
    eprintln!(
        "{matched} of {templates} rendered templates match Helm and {errors_matched} of {errors} \
         failing cases fail as Helm does, over {} cases",
        cases.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `winguard render` against the real `helm template` (the `helm` 4.2.3 binary of the test
/// tools), whole output: document splitting, whitespace, order, hooks. And `--renderer helm`
/// runs that binary with the same flags, so its output is Helm's own.
#[test]
fn render_output_matches_helm_template() {
    let helm = common::tool("helm");
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let (mut compared, mut logged) = (0, 0);
    for (i, case) in cases().iter().enumerate() {
        let chart = common::root().join("testdata/charts").join(&case.chart);
        let values = dir.path().join(format!("{i}.yaml"));
        std::fs::write(&values, serde_json::to_string(&case.values).unwrap()).unwrap();
        let flags = |cmd: &mut std::process::Command| {
            cmd.arg(&case.release)
                .arg(&chart)
                .arg("--values")
                .arg(&values)
                .args(["--namespace", &case.namespace]);
        };
        let mut ours = common::winguard();
        ours.arg("render");
        flags(&mut ours);
        let ours = common::run_cmd(ours, None);
        let mut theirs = std::process::Command::new(&helm);
        theirs.arg("template");
        flags(&mut theirs);
        let theirs = common::run_cmd(theirs, None);
        compared += 1;
        if let Some(error) = &case.error {
            // Both fail, with the case's words (the binary checks what the engine alone does
            // not: the chart's dependencies, before rendering).
            if theirs.code == 0 || !theirs.stderr.contains(error.as_str()) {
                failures.push(format!(
                    "{}: helm does not fail with {error:?}: {}",
                    case.chart, theirs.stderr
                ));
            }
            if ours.code != 2 || !ours.stderr.contains(error.as_str()) {
                failures.push(format!(
                    "{}: winguard ({}) does not fail with {error:?}: {}",
                    case.chart, ours.code, ours.stderr
                ));
            }
            continue;
        }
        if theirs.code != 0 {
            // Output that is not YAML (or not a manifest's head) fails the render, in Helm's
            // words up to the YAML parser's own message.
            let helm_error = theirs.stderr.lines().next().unwrap_or_default();
            let stem = helm_error.split(" yaml: ").next().unwrap_or(helm_error);
            if ours.code != 2 || !ours.stderr.contains(stem) {
                failures.push(format!(
                    "{}: helm fails with {helm_error}\n  winguard ({}): {}",
                    case.chart, ours.code, ours.stderr
                ));
            }
            continue;
        }
        if ours.code != 0 || !same(case.compare, &ours.stdout, &theirs.stdout) {
            let diff = similar::TextDiff::from_lines(&theirs.stdout, &ours.stdout)
                .unified_diff()
                .header("helm template", "winguard render")
                .to_string();
            failures.push(format!("{}: {}\n{diff}", case.chart, ours.stderr));
        }
        // What Helm logs while preparing the values (coalescing conflicts, missing imports):
        // the same lines, as many times (Helm iterates Go maps, so in any order).
        let (our_log, their_log) = (log_lines(&ours.stderr), log_lines(&theirs.stderr));
        if our_log != their_log {
            failures.push(format!(
                "{}: Helm logs\n  {}\nwinguard logs\n  {}",
                case.chart,
                their_log.join("\n  "),
                our_log.join("\n  ")
            ));
        }
        logged += their_log.len();
        if case.chart == "basic" {
            let mut via_helm = common::winguard();
            via_helm.arg("render");
            flags(&mut via_helm);
            via_helm
                .args(["--renderer", "helm"])
                .env("PATH", helm.parent().unwrap());
            let via_helm = common::run_cmd(via_helm, None);
            assert_eq!(via_helm.code, 0, "{}", via_helm.stderr);
            assert_eq!(
                via_helm.stdout, theirs.stdout,
                "--renderer helm is Helm's output"
            );
        }
    }
    assert!(compared > 40, "{compared}");
    assert!(logged > 20, "the cases make Helm log: {logged}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The lines of Helm's logger in a command's stderr, sorted.
fn log_lines(stderr: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("level=INFO ") || l.starts_with("level=WARN "))
        .collect();
    lines.sort_unstable();
    lines
}

/// What kind of certificate or key a PEM is: everything Sprig fixes about it, nothing random.
fn pem_kind(pem_text: &str) -> Json {
    use x509_parser::extensions::ParsedExtension;
    let block = pem::parse(pem_text).unwrap();
    if block.tag() != "CERTIFICATE" {
        let bits = (block.tag() == "RSA PRIVATE KEY").then(|| {
            use rsa::pkcs1::DecodeRsaPrivateKey;
            use rsa::traits::PublicKeyParts;
            rsa::PrivateKey::from_pkcs1_der(block.contents())
                .unwrap()
                .size()
                * 8
        });
        return serde_json::json!({"key": block.tag(), "bits": bits});
    }
    let (_, cert) = x509_parser::parse_x509_certificate(block.contents()).unwrap();
    let mut extensions = BTreeMap::new();
    for ext in cert.extensions() {
        let what = match ext.parsed_extension() {
            ParsedExtension::KeyUsage(k) => format!("{k}"),
            ParsedExtension::ExtendedKeyUsage(e) => {
                format!(
                    "server {} client {} other {}",
                    e.server_auth,
                    e.client_auth,
                    e.other.len()
                )
            }
            ParsedExtension::BasicConstraints(b) => {
                format!("ca {} {:?}", b.ca, b.path_len_constraint)
            }
            ParsedExtension::SubjectAlternativeName(s) => format!("{:?}", s.general_names),
            ParsedExtension::AuthorityKeyIdentifier(_) => "present".into(),
            ParsedExtension::SubjectKeyIdentifier(_) => "present".into(),
            other => format!("{other:?}"),
        };
        extensions.insert(ext.oid.to_id_string(), (ext.critical, what));
    }
    let validity = cert.validity();
    serde_json::json!({
        "version": cert.version().0,
        "signature": cert.signature_algorithm.algorithm.to_id_string(),
        "key": cert.public_key().algorithm.algorithm.to_id_string(),
        "keyBits": cert.public_key().parsed().map(|k| k.key_size()).unwrap_or_default(),
        "subject": cert.subject().to_string(),
        "issuer": cert.issuer().to_string(),
        // `rand.Int(rand.Reader, 2^128)`: a positive integer below 2^128 (DER adds a zero byte
        // when the top bit is set), so 1–17 bytes, the first below 0x80.
        "serialOf128Bits": (1..=17).contains(&cert.raw_serial().len()) && cert.raw_serial()[0] < 0x80,
        "validSeconds": validity.not_after.timestamp() - validity.not_before.timestamp(),
        "extensions": extensions,
    })
}

/// Sprig's genCA/genSignedCert/genSelfSignedCert make RSA-2048 keys in PKCS#1 and sha256WithRSA
/// certificates with fixed usages; winguard's random material must be of that kind (and the
/// signed certificate verify against its CA), or the Secret a chart makes is not what Helm's is.
#[test]
fn certificates_are_of_the_kind_helm_makes() {
    let chart = common::root().join("testdata/charts/random-shape");
    let data = |cmd: std::process::Command| {
        let out = common::run_cmd(cmd, None);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let doc = documents(&out.stdout).into_iter().next().unwrap();
        let decode = |key: &str| {
            use base64::Engine;
            let b64 = doc["data"][key].as_str().unwrap();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap();
            String::from_utf8(bytes).unwrap()
        };
        ["ca.crt", "tls.crt", "tls.key", "self.crt"].map(decode)
    };
    let mut ours = common::winguard();
    ours.arg("render").arg(&chart);
    let mut theirs = std::process::Command::new(common::tool("helm"));
    theirs.arg("template").arg(&chart);
    let (ours, theirs) = (data(ours), data(theirs));
    for (i, name) in ["ca.crt", "tls.crt", "tls.key", "self.crt"]
        .iter()
        .enumerate()
    {
        assert_eq!(pem_kind(&ours[i]), pem_kind(&theirs[i]), "{name}");
    }
    let ca = pem::parse(&ours[0]).unwrap();
    let leaf = pem::parse(&ours[1]).unwrap();
    let (_, ca) = x509_parser::parse_x509_certificate(ca.contents()).unwrap();
    let (_, leaf) = x509_parser::parse_x509_certificate(leaf.contents()).unwrap();
    leaf.verify_signature(Some(ca.public_key()))
        .expect("genSignedCert's certificate is signed by its CA");
    assert_ne!(
        ca.raw_serial(),
        leaf.raw_serial(),
        "serial numbers are random"
    );
}

/// The public-chart harness (`tests/corpus/helm_fidelity.py`) pairs a document whose name is
/// random (a test hook's `randAlphaNum`) with Helm's by its source, only where Helm's own two
/// renders leave it unpaired too, and still reports a real difference in it.
#[test]
fn fidelity_harness_pairs_random_names_by_source() {
    let script = r#"
import json, sys
sys.path.insert(0, sys.argv[1])
import helm_fidelity as h
def doc(name, image):
    return (f"---\n# Source: c/templates/t.yaml\napiVersion: v1\nkind: Pod\n"
            f"metadata:\n  name: x-{name}\nspec:\n  image: {image}\n")
def summary(ours, theirs, again):
    r = h.compare(ours, theirs, [again])
    return {"random": r["random"], "identical": r["identical"],
            "differ": [d[3] for d in r["differ"]],
            "missing": len(r["missing"]), "extra": len(r["extra"])}
print(json.dumps({
    "random_name": summary(doc("aaaa", "a"), doc("bbbb", "a"), doc("cccc", "a")),
    "random_name_real_difference": summary(doc("aaaa", "b"), doc("bbbb", "a"), doc("cccc", "a")),
    "stable_name_ours_differs": summary(doc("aaaa", "a"), doc("bbbb", "a"), doc("bbbb", "a")),
}))
"#;
    let mut cmd = std::process::Command::new(common::python_exe());
    cmd.arg("-c")
        .arg(script)
        .arg(common::root().join("tests/corpus"));
    let run = common::run_cmd(cmd, None);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let got: Json = serde_json::from_str(&run.stdout).unwrap();
    let want = serde_json::json!({
        "random_name": {"random": 1, "identical": 0, "differ": [], "missing": 0, "extra": 0},
        "random_name_real_difference":
            {"random": 0, "identical": 0, "differ": [["/spec/image"]], "missing": 0, "extra": 0},
        "stable_name_ours_differs":
            {"random": 0, "identical": 0, "differ": [], "missing": 1, "extra": 1},
    });
    assert_eq!(got, want);
}
