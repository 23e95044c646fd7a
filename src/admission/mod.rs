//! The admission adapter: an AdmissionReview in, an AdmissionReview out.
//!
//! Pure like the engine (no sockets, no files): `winguard serve` hands it the request body and
//! sends back what it returns. The verdicts are the CLI's: the same `engine::evaluate` with the
//! same rules, config and suppressions; the webhook only decides what a finding means for the
//! request (deny, warn, or a safe fix to inject).
//!
//! The envelope is `kube`'s `admission` types (v1 and v1beta1 share one shape; the response takes
//! the request's `apiVersion`). The object under review is taken out of the body as plain JSON
//! before the envelope is typed: the engine reads JSON, and a typed object would reject shapes the
//! engine reports more precisely (`containers: {}` names the field).

use json_patch::PatchOperation;
use kube::core::admission::{
    AdmissionRequest, AdmissionResponse, AdmissionReview, META_KIND, Operation,
};
use kube::core::{DynamicObject, Status};
use serde_json::Value;

use crate::cli::LintSetup;
use crate::config::Enforcement;
use crate::engine::{Context, Finding, evaluate, patch};
use crate::manifest::shape;
use crate::rules::Applicability;

/// The two admission endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    Validate,
    Mutate,
}

impl Endpoint {
    pub fn as_str(self) -> &'static str {
        match self {
            Endpoint::Validate => "validate",
            Endpoint::Mutate => "mutate",
        }
    }
}

/// What became of a review, for logs and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Allowed with nothing to say (clean, exempt, or not a kind or operation winguard checks).
    Allowed,
    /// Allowed with warnings.
    Warned,
    /// Denied for findings.
    Denied,
    /// Allowed with a patch (mutate).
    Patched,
    /// The review itself was malformed.
    Invalid,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::Warned => "warned",
            Verdict::Denied => "denied",
            Verdict::Patched => "patched",
            Verdict::Invalid => "invalid",
        }
    }
}

/// The answer to one review: the HTTP status and body to send, and what to log. Object contents
/// are never part of it beyond kind, namespace and name (objects may be Secrets).
#[derive(Debug)]
pub struct Answer {
    /// 200 for every review that could be read (a denial is still a 200 to the API server);
    /// 400 when the body is not an AdmissionReview at all.
    pub status: u16,
    pub body: Vec<u8>,
    pub verdict: Verdict,
    pub uid: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
    /// The rules that found something, in finding order (repeats removed).
    pub rules: Vec<String>,
    /// Why the review was invalid, when it was.
    pub error: Option<String>,
}

/// The two API versions of AdmissionReview the API server may send.
const API_VERSIONS: [&str; 2] = ["admission.k8s.io/v1", "admission.k8s.io/v1beta1"];

/// Answers one AdmissionReview body.
pub fn review(setup: &LintSetup, endpoint: Endpoint, body: &[u8]) -> Answer {
    match read(body) {
        Ok((request, object)) => decide(setup, endpoint, &request, object),
        Err(Unreadable {
            uid,
            message,
            types,
        }) => {
            let mut response = AdmissionResponse::invalid(&message);
            response.result.code = 400;
            if let Some(uid) = &uid {
                response.uid = uid.clone();
            }
            if let Some(api_version) = types {
                response.types.api_version = api_version;
            }
            Answer {
                // Without a uid the API server could not match the answer to its request.
                status: if uid.is_some() { 200 } else { 400 },
                body: encode(response),
                verdict: Verdict::Invalid,
                uid: uid.unwrap_or_default(),
                kind: String::new(),
                namespace: String::new(),
                name: String::new(),
                rules: Vec::new(),
                error: Some(message),
            }
        }
    }
}

/// A body that is not a usable review: why, and as much of the envelope as could be read.
struct Unreadable {
    uid: Option<String>,
    message: String,
    types: Option<String>,
}

/// Parses the envelope with `kube`'s types and takes the object out as JSON.
fn read(body: &[u8]) -> Result<(AdmissionRequest<DynamicObject>, Option<Value>), Unreadable> {
    let unreadable = |uid: Option<String>, types: Option<String>, message: String| Unreadable {
        uid,
        message,
        types,
    };
    let mut value: Value = serde_json::from_slice(body).map_err(|e| {
        unreadable(
            None,
            None,
            format!(
                "the request body is not JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            ),
        )
    })?;
    let Some(map) = value.as_object_mut() else {
        return Err(unreadable(
            None,
            None,
            "the request body is not an AdmissionReview (not a JSON object)".into(),
        ));
    };
    let kind = map.get("kind").and_then(Value::as_str).unwrap_or_default();
    let api_version = map
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let uid = map
        .get("request")
        .and_then(|r| r.get("uid"))
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty())
        .map(str::to_string);
    if kind != META_KIND || !API_VERSIONS.contains(&api_version.as_str()) {
        return Err(unreadable(
            uid,
            None,
            format!(
                "expected kind AdmissionReview of apiVersion admission.k8s.io/v1 or v1beta1, \
                 found kind `{kind}` of apiVersion `{api_version}`"
            ),
        ));
    }
    let types = Some(api_version);
    let Some(request) = map.get_mut("request").and_then(Value::as_object_mut) else {
        return Err(unreadable(
            uid,
            types,
            "the AdmissionReview has no `request`".into(),
        ));
    };
    let object = match request.get_mut("object").map(Value::take) {
        Some(Value::Null) | None => None,
        Some(o) => Some(o),
    };
    // The old object is not read (rules judge what is being admitted), so it is not typed either.
    request.remove("oldObject");
    let review: AdmissionReview<DynamicObject> = serde_json::from_value(value).map_err(|e| {
        unreadable(
            uid.clone(),
            types.clone(),
            format!("malformed AdmissionReview: {e}"),
        )
    })?;
    let request: AdmissionRequest<DynamicObject> = review
        .try_into()
        .map_err(|_| unreadable(uid, types, "the AdmissionReview has no `request`".into()))?;
    Ok((request, object))
}

fn decide(
    setup: &LintSetup,
    endpoint: Endpoint,
    request: &AdmissionRequest<DynamicObject>,
    object: Option<Value>,
) -> Answer {
    let policy = &setup.config.webhook;
    let namespace = request.namespace.clone().unwrap_or_default();
    let mut answer = Answer {
        status: 200,
        body: Vec::new(),
        verdict: Verdict::Allowed,
        uid: request.uid.clone(),
        kind: request.kind.kind.clone(),
        namespace: namespace.clone(),
        name: request.name.clone(),
        rules: Vec::new(),
        error: None,
    };
    let response = AdmissionResponse::from(request);
    let checked = matches!(request.operation, Operation::Create | Operation::Update);
    if !checked || policy.exempt_namespaces.contains(&namespace) {
        answer.body = encode(response);
        return answer;
    }
    let Some(mut object) = object else {
        return invalid(
            answer,
            response,
            format!(
                "{:?} of {} `{}` carries no object",
                request.operation, request.kind.kind, request.name
            ),
        );
    };
    if answer.name.is_empty() {
        answer.name = object
            .pointer("/metadata/name")
            .or_else(|| object.pointer("/metadata/generateName"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
    }
    let problems = shape::check(&object);
    if let Some(p) = problems.first() {
        return invalid(
            answer,
            response,
            format!(
                "{} `{}`: {} (at {})",
                request.kind.kind, request.name, p.message, p.pointer
            ),
        );
    }
    // On CREATE the API server fills in the namespace only after admission; exemptions and
    // messages need it, so the request's is put where the CLI would read it. (The patch is
    // computed against this copy; `metadata` exists on every object the API server sends.)
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut)
        && !meta.contains_key("namespace")
        && !namespace.is_empty()
    {
        meta.insert("namespace".into(), Value::String(namespace.clone()));
    }

    // One object at a time: cross-object rules see only the cluster profile (configured
    // RuntimeClasses), as the webhook has no view of the rest of the cluster.
    let ctx = Context::new(
        &setup.rules,
        &setup.config,
        &setup.catalog,
        &[],
        setup.today,
    );
    let findings = evaluate(&setup.rules, &ctx, &object);
    for f in &findings {
        if !answer.rules.contains(&f.rule) {
            answer.rules.push(f.rule.clone());
        }
    }
    let response = match endpoint {
        Endpoint::Validate => validate(
            &mut answer,
            response,
            &findings,
            policy.enforcement,
            policy.deny_on.severity(),
        ),
        Endpoint::Mutate => mutate(&mut answer, response, &findings, &object),
    };
    answer.body = encode(response);
    answer
}

fn invalid(mut answer: Answer, response: AdmissionResponse, message: String) -> Answer {
    let mut response = response.deny(&message);
    response.result = Status::failure(&message, "BadRequest").with_code(400);
    answer.verdict = Verdict::Invalid;
    answer.body = encode(response);
    answer.error = Some(message);
    answer
}

/// `rule: message (at /pointer)`, as the deny message and warnings show a finding.
fn describe(f: &Finding) -> String {
    format!("{}: {} (at {})", f.rule, f.message, f.pointer)
}

fn validate(
    answer: &mut Answer,
    response: AdmissionResponse,
    findings: &[Finding],
    enforcement: Enforcement,
    deny_on: crate::rules::Severity,
) -> AdmissionResponse {
    let denies = |f: &&Finding| enforcement == Enforcement::Enforce && f.severity >= deny_on;
    let denied: Vec<&Finding> = findings.iter().filter(denies).collect();
    let warnings: Vec<String> = findings
        .iter()
        .filter(|f| !denies(f))
        .map(|f| format!("{} {}", f.severity.as_str(), describe(f)))
        .collect();
    let mut response = response;
    if !warnings.is_empty() {
        response.warnings = Some(warnings);
        answer.verdict = Verdict::Warned;
    }
    if !denied.is_empty() {
        let lines: Vec<String> = denied
            .iter()
            .map(|f| format!("- {}", describe(f)))
            .collect();
        let message = format!(
            "winguard denied {} `{}`: {} finding{} at or above {}:\n{}",
            answer.kind,
            answer.name,
            denied.len(),
            if denied.len() == 1 { "" } else { "s" },
            deny_on.as_str(),
            lines.join("\n")
        );
        response = response.deny(&message);
        response.result = Status::failure(&message, "Forbidden").with_code(403);
        answer.verdict = Verdict::Denied;
    }
    response
}

/// One JSONPatch with every safe fix, as the API server applies it: in order, against the object
/// as sent. Each fix's patch creates its parents; where an earlier fix already created one, that
/// operation is dropped, so the fixes compose.
fn mutate(
    answer: &mut Answer,
    response: AdmissionResponse,
    findings: &[Finding],
    object: &Value,
) -> AdmissionResponse {
    let safe: Vec<&Finding> = findings
        .iter()
        .filter(|f| {
            f.fix
                .as_ref()
                .is_some_and(|x| x.applicability == Applicability::Safe)
        })
        .collect();
    if safe.is_empty() {
        return response;
    }
    let mut patched = object.clone();
    let ops: Vec<PatchOperation> = patch::apply_all(
        &mut patched,
        safe.iter()
            .filter_map(|f| f.fix.as_ref())
            .map(|x| x.patch.as_slice()),
    );
    if ops.is_empty() {
        return response;
    }
    let warnings = safe
        .iter()
        .filter_map(|f| {
            f.fix
                .as_ref()
                .map(|x| format!("winguard injected: {} ({})", x.title, f.rule))
        })
        .collect();
    match response.clone().with_patch(json_patch::Patch(ops)) {
        Ok(mut r) => {
            r.warnings = Some(warnings);
            answer.verdict = Verdict::Patched;
            r
        }
        // A patch of JSON values always serialises; were it not to, admitting unchanged is
        // the safe answer.
        Err(_) => response,
    }
}

/// The response as the API server reads it. `kube` serialises the patch bytes as a list of
/// numbers (kube-rs issue #1781); the API defines them as base64 in JSON, so that one field is
/// rewritten.
fn encode(response: AdmissionResponse) -> Vec<u8> {
    use base64::Engine as _;
    let mut value = serde_json::to_value(response.into_review()).unwrap_or(Value::Null);
    if let Some(patch) = value.pointer_mut("/response/patch") {
        let bytes: Vec<u8> = patch
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_u64)
                    .map(|b| b as u8)
                    .collect()
            })
            .unwrap_or_default();
        *patch = Value::String(base64::engine::general_purpose::STANDARD.encode(bytes));
    }
    serde_json::to_vec(&value).unwrap_or_default()
}
