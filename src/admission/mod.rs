//! The admission adapter: an AdmissionReview in, an AdmissionReview out.
//!
//! Pure like the engine (no sockets, no files): `winguard serve` hands it the request body and
//! sends back what it returns. The verdicts are the CLI's: the object goes through the same
//! pipeline (`crate::pipeline`: admitted, given its namespace, evaluated) with the same rules,
//! config and suppressions; the webhook only decides what a finding means for the request
//! (deny, warn, or a safe fix to inject).
//!
//! The request's fields are read with `kube`'s admission types (`Operation`, `GroupVersionKind`)
//! and the answer is `kube`'s `AdmissionResponse`; v1 and v1beta1 share one shape, and the
//! response takes the request's `apiVersion`. The object under review is parsed once, as the
//! plain JSON the engine reads (a typed object would reject shapes the engine reports more
//! precisely, `containers: {}` naming the field), and the parts of the review no rule reads
//! (userInfo, oldObject, managedFields) are skipped unbuilt.

use crate::value::parse::Prune;
use crate::value::{Doc, Value};
use json_patch::PatchOperation;
use kube::core::admission::{AdmissionResponse, META_KIND, Operation};
use kube::core::{GroupVersionKind, Status};
use serde::Deserialize;

use crate::config::Enforcement;
use crate::engine::{Finding, patch};
use crate::pipeline::{InputSet, ReviewPurpose, admit, default_namespace};
use crate::policy::Policy;
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
    /// Allowed with nothing to say (clean, or not an operation winguard checks).
    Allowed,
    /// Allowed unchecked: the namespace is exempt (`webhook.exemptNamespaces`).
    Exempt,
    /// Allowed with warnings.
    Warned,
    /// Allowed in audit mode, where enforcing would have denied it.
    WouldDeny,
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
            Verdict::Exempt => "exempt",
            Verdict::Warned => "warned",
            Verdict::WouldDeny => "would-deny",
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
pub fn review(setup: &Policy, endpoint: Endpoint, body: &[u8]) -> Answer {
    match read(body) {
        Ok(read) => decide(setup, endpoint, read),
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

/// The envelope as read, in one pass over the body: what the webhook reads is built, the rest
/// (userInfo, oldObject, options, resource, …) is skipped unbuilt.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Envelope {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    request: Option<Request>,
}

/// The fields of an AdmissionRequest the webhook reads, with `kube`'s types for them. Missing
/// ones are reported after the parse, so the uid can still be echoed.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    #[serde(default)]
    uid: String,
    kind: Option<GroupVersionKind>,
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: Option<String>,
    operation: Option<Operation>,
    #[serde(default)]
    object: Option<Value>,
}

/// For a body that failed to parse: its API version and uid, if they can be read at all.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Probe {
    #[serde(default)]
    api_version: Option<Value>,
    #[serde(default)]
    request: Option<ProbeRequest>,
}

#[derive(Deserialize)]
struct ProbeRequest {
    #[serde(default)]
    uid: Option<Value>,
}

/// What the adapter needs of a review: its API version (the response's), the request, and the
/// object as the engine reads it.
#[cfg_attr(test, derive(Debug, PartialEq))]
struct Read<'body> {
    api_version: String,
    uid: String,
    kind: String,
    name: String,
    namespace: String,
    operation: Operation,
    /// Its strings borrowed from the request's body where it was read by winguard's reader.
    object: Option<Doc<'body>>,
}

/// What the webhook leaves out of a review as it reads it: the request's `oldObject` (as large as
/// the object, on UPDATE) and `userInfo`, and the object's `metadata.managedFields` (the API
/// server sends them with every object, they are often most of its bytes, and no rule reads them).
static REVIEW_PRUNE: [(&str, Prune); 1] = [(
    "request",
    Prune::Inside(&[
        ("oldObject", Prune::Skip),
        ("userInfo", Prune::Skip),
        (
            "object",
            Prune::Inside(&[("metadata", Prune::Inside(&[("managedFields", Prune::Skip)]))]),
        ),
    ]),
)];

/// Reads the review: envelope, request fields and object in one pass.
fn read(body: &[u8]) -> Result<Read<'_>, Unreadable> {
    // Checked as UTF-8 once, whole: parsing from a `str` spares serde_json checking every string
    // on its own.
    let text = std::str::from_utf8(body).map_err(|e| Unreadable {
        uid: None,
        message: format!(
            "the request body is not UTF-8 text (byte {})",
            e.valid_up_to()
        ),
        types: None,
    })?;
    // Anything the fast reader declines is read again with serde_json, whose errors say what is
    // wrong with the body (and which reads whatever valid review that reader left to it).
    read_well_formed(text).map_or_else(|| read_with_serde_json(text), Ok)
}

/// The review read with serde_json: the envelope typed, the object as a [`Value`]. Only bodies
/// the fast reader declined come here, so the object is built whole and `managedFields` dropped
/// after, as both readers must give the same object.
fn read_with_serde_json(text: &str) -> Result<Read<'static>, Unreadable> {
    let body = text.as_bytes();
    let envelope: Envelope = serde_json::from_str(text).map_err(|e| {
        let probe = serde_json::from_slice::<Probe>(body).ok();
        let uid = probe
            .as_ref()
            .and_then(|p| {
                p.request
                    .as_ref()?
                    .uid
                    .as_ref()?
                    .as_str()
                    .map(str::to_string)
            })
            .filter(|u| !u.is_empty());
        let api_version = probe
            .as_ref()
            .and_then(|p| p.api_version.as_ref()?.as_str().map(str::to_string))
            .filter(|v| API_VERSIONS.contains(&v.as_str()));
        // Whether it is JSON at all decides the message (serde_json reports some shape errors,
        // such as a number where an enum's name belongs, as syntax errors).
        let is_json = serde_json::from_slice::<serde::de::IgnoredAny>(body).is_ok();
        let message = if is_json {
            format!("the request body is not a well-formed AdmissionReview: {e}")
        } else {
            format!(
                "the request body is not JSON (line {}, column {}): {e}",
                e.line(),
                e.column()
            )
        };
        Unreadable {
            uid,
            message,
            types: api_version,
        }
    })?;
    let Envelope {
        kind,
        api_version,
        request,
    } = envelope;
    let uid = request
        .as_ref()
        .map(|r| r.uid.clone())
        .filter(|u| !u.is_empty());
    if kind != META_KIND || !API_VERSIONS.contains(&api_version.as_str()) {
        return Err(Unreadable {
            uid,
            message: format!(
                "expected kind AdmissionReview of apiVersion admission.k8s.io/v1 or v1beta1, \
                 found kind `{kind}` of apiVersion `{api_version}`"
            ),
            types: None,
        });
    }
    let missing = |what: &str| Unreadable {
        uid: uid.clone(),
        message: format!("malformed AdmissionReview: the request has no `{what}`"),
        types: Some(api_version.clone()),
    };
    let Some(request) = request else {
        return Err(missing("request"));
    };
    if request.uid.is_empty() {
        return Err(missing("uid"));
    }
    let Some(gvk) = request.kind else {
        return Err(missing("kind"));
    };
    let Some(operation) = request.operation else {
        return Err(missing("operation"));
    };
    let mut object = request.object;
    if let Some(meta) = object
        .as_mut()
        .and_then(|o| o.get_mut("metadata"))
        .and_then(Value::as_object_mut)
    {
        meta.remove("managedFields");
    }
    Ok(Read {
        api_version,
        uid: request.uid,
        kind: gvk.kind,
        name: request.name,
        namespace: request.namespace.unwrap_or_default(),
        operation,
        object,
    })
}

/// A well-formed review, read with winguard's own JSON reader ([`crate::value::parse`]) in one
/// pass: `None` for anything else — not JSON, a field missing or of the wrong type, a key given
/// twice — which [`read`] then reads with serde_json for its error message. What this accepts
/// is what the serde_json path accepts, read the same way (a test compares the two).
fn read_well_formed(text: &str) -> Option<Read<'_>> {
    let parsed = crate::value::parse::parse_borrowed(text, &REVIEW_PRUNE)?;
    if parsed.repeated_keys {
        return None;
    }
    let Doc::Object(mut root) = parsed.value else {
        return None;
    };
    let api_version = root.get("apiVersion")?.as_str()?;
    if root.get("kind")?.as_str()? != META_KIND || !API_VERSIONS.contains(&api_version) {
        return None;
    }
    let api_version = api_version.to_string();
    let Doc::Object(mut request) = root.remove("request")? else {
        return None;
    };
    let uid = request.get("uid")?.as_str()?;
    // `kube`'s GroupVersionKind: all three fields, strings.
    let gvk = request.get("kind")?.as_object()?;
    let kind = gvk.get("kind")?.as_str()?;
    gvk.get("group")?.as_str()?;
    gvk.get("version")?.as_str()?;
    let name = match request.get("name") {
        None => "",
        Some(v) => v.as_str()?,
    };
    let namespace = match request.get("namespace") {
        None | Some(Doc::Null) => "",
        Some(v) => v.as_str()?,
    };
    let operation = match request.get("operation")?.as_str()? {
        "CREATE" => Operation::Create,
        "UPDATE" => Operation::Update,
        "DELETE" => Operation::Delete,
        "CONNECT" => Operation::Connect,
        _ => return None,
    };
    if uid.is_empty() {
        return None;
    }
    let (uid, kind, name, namespace) = (
        uid.to_string(),
        kind.to_string(),
        name.to_string(),
        namespace.to_string(),
    );
    let object = request.remove("object").filter(|o| !o.is_null());
    Some(Read {
        api_version,
        uid,
        kind,
        name,
        namespace,
        operation,
        object,
    })
}

/// An allowing response to a request (`kube`'s type; its constructor from a typed request is
/// not used because the request is read without typing its object).
fn allow(read: &Read<'_>) -> AdmissionResponse {
    let mut response = AdmissionResponse::invalid("");
    response.types.api_version = read.api_version.clone();
    response.uid = read.uid.clone();
    response.allowed = true;
    response.result = Status::default();
    response
}

fn decide(setup: &Policy, endpoint: Endpoint, read: Read<'_>) -> Answer {
    let policy = &setup.config.webhook;
    let namespace = read.namespace.clone();
    let response = allow(&read);
    let mut answer = Answer {
        status: 200,
        body: Vec::new(),
        verdict: Verdict::Allowed,
        uid: read.uid,
        kind: read.kind,
        namespace: namespace.clone(),
        name: read.name,
        rules: Vec::new(),
        error: None,
    };
    let checked = matches!(read.operation, Operation::Create | Operation::Update);
    if !checked || policy.exempt_namespaces.contains(&namespace) {
        if checked {
            answer.verdict = Verdict::Exempt;
        }
        answer.body = encode(response);
        return answer;
    }
    let Some(mut object) = read.object else {
        let message = format!(
            "{:?} of {} `{}` carries no object",
            read.operation, answer.kind, answer.name
        );
        return invalid(answer, response, message);
    };
    if answer.name.is_empty() {
        answer.name = object
            .pointer("/metadata/name")
            .or_else(|| object.pointer("/metadata/generateName"))
            .and_then(Doc::as_str)
            .unwrap_or_default()
            .to_string();
    }
    if let Err(problems) = admit(&object)
        && let Some(p) = problems.first()
    {
        let message = format!(
            "{} `{}`: {} (at {})",
            answer.kind, answer.name, p.message, p.pointer
        );
        return invalid(answer, response, message);
    }
    // The request's namespace is put where the CLI would read it. (The patch is computed
    // against this copy; `metadata` exists on every object the API server sends.)
    default_namespace(&mut object, &namespace);
    let set = InputSet::of_review(
        setup,
        match endpoint {
            Endpoint::Validate => ReviewPurpose::Validate,
            Endpoint::Mutate => ReviewPurpose::Mutate,
        },
    );
    let findings = set.findings(&object);
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
            &object,
            policy.enforcement,
            policy.deny_on,
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

/// `rule: message (at /pointer)`, as the deny message shows a finding.
fn describe(f: &Finding) -> String {
    [&f.rule, ": ", &f.full_message(), " (at ", &f.pointer, ")"].concat()
}

/// What the API server passes on of a webhook's warnings (`k8s.io/apiserver`,
/// `endpoints/filters/warning.go`): warnings of up to [`WARNINGS_TOTAL`] characters in all go to
/// the client whole; past that total, every warning is cut to [`WARNING_LIMIT`] characters and
/// those past the total are dropped. A warning with a control character is dropped whole.
const WARNING_LIMIT: usize = 256;
const WARNINGS_TOTAL: usize = 4096;
/// The audit annotation that lists every finding of a review. The API server records it under
/// the webhook's name: `validate.winguard.io/findings` with the shipped chart.
pub const FINDINGS_ANNOTATION: &str = "findings";
/// How many findings the audit annotation left out, when it had to (see [`ANNOTATION_LIMIT`]).
pub const OMITTED_ANNOTATION: &str = "findings-omitted";
/// Why winguard takes the pod to target the OS it does: said once, not in every finding.
pub const TARGET_ANNOTATION: &str = "target";
/// The most bytes of the findings annotation: an audit event carries it with the request's
/// metadata, and the API server's truncating audit backends cut events at 100 KiB.
const ANNOTATION_LIMIT: usize = 32 * 1024;
/// The webhook name the shipped chart registers `/validate` under, for the pointer to the audit
/// annotation in the last warning.
const VALIDATE_WEBHOOK: &str = "validate.winguard.io";

/// A JSON pointer as a Kubernetes field path, the way the API server's own errors name fields:
/// `/spec/containers/0/image` → `spec.containers[0].image`, a key that is not a plain name in
/// brackets (`spec.nodeSelector[kubernetes.io/os]`). List indexes are told from keys by walking
/// the object. Written onto `out`.
fn push_field_path(out: &mut String, object: &Doc<'_>, pointer: &str) {
    let start = out.len();
    let mut at = Some(object);
    for token in pointer.split('/').skip(1) {
        let token = crate::value::unescape_pointer_token(token);
        let in_list = matches!(at, Some(Doc::Array(_)));
        let plain = !token.is_empty()
            && token
                .bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-');
        if in_list || !plain {
            out.push('[');
            out.push_str(&token);
            out.push(']');
        } else {
            if out.len() > start {
                out.push('.');
            }
            out.push_str(&token);
        }
        at = match at {
            Some(Doc::Array(items)) => token.parse::<usize>().ok().and_then(|i| items.get(i)),
            Some(Doc::Object(map)) => map.get(token.as_ref()),
            _ => None,
        };
    }
}

#[cfg(test)]
fn field_path(object: &Doc<'_>, pointer: &str) -> String {
    let mut out = String::new();
    push_field_path(&mut out, object, pointer);
    out
}

/// Cuts `text` to at most `limit` characters, at a word boundary with `…` when it must cut.
fn cut_at_word(mut text: String, limit: usize) -> String {
    // The byte length bounds the character count: most warnings need no counting.
    if text.len() <= limit || text.chars().count() <= limit {
        return text;
    }
    // Room for the ellipsis; then back to the last space, unless that loses most of the text.
    // Where the text is ASCII that far (most warnings), bytes are characters: no decoding.
    let ascii = text.as_bytes()[..limit].is_ascii();
    let hard = if ascii {
        limit - 1
    } else {
        text.char_indices()
            .nth(limit - 1)
            .map_or(text.len(), |(i, _)| i)
    };
    let cut = match text[..hard].rfind(' ') {
        Some(i) if (if ascii { i } else { text[..i].chars().count() }) >= limit / 2 => {
            text[..i].trim_end().len()
        }
        _ => hard,
    };
    text.truncate(cut);
    text.push('…');
    text
}

/// A finding as one warning: `severity rule: field: message`, in audit mode `would deny: …` for
/// what enforcing would deny; control characters (which make the API server drop a warning)
/// become spaces, and the whole is cut at a word to [`WARNING_LIMIT`] characters.
fn warning(f: &Finding, object: &Doc<'_>, would_deny: bool) -> String {
    let mut text = String::with_capacity(f.rule.len() + f.message.len() + f.pointer.len() + 32);
    if would_deny {
        text.push_str("would deny: ");
    }
    text.push_str(f.severity.as_str());
    text.push(' ');
    text.push_str(&f.rule);
    text.push_str(": ");
    push_field_path(&mut text, object, &f.pointer);
    text.push_str(": ");
    text.push_str(&f.message);
    // Control characters are C0 (bytes below 0x20), DEL and C1 (U+0080–U+009F, led by 0xC2 in
    // UTF-8): a byte scan finds whether the character scan is needed at all. (A fold rather
    // than `any`: without the early exit the compiler checks many bytes at a time.)
    if text.bytes().fold(false, |seen, b| {
        seen | (b < 0x20) | (b == 0x7f) | (b == 0xc2)
    }) && text.chars().any(char::is_control)
    {
        text = text
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
    }
    cut_at_word(text, WARNING_LIMIT)
}

/// The warnings of a review: one per finding while they fit the API server's total, then one
/// saying how many more there are and where the audit log lists them all.
fn warnings(findings: &[(&Finding, bool)], object: &Doc<'_>) -> Vec<String> {
    let all: Vec<String> = findings
        .iter()
        .map(|(f, would_deny)| warning(f, object, *would_deny))
        .collect();
    let chars = |w: &String| w.chars().count();
    // A text has no more characters than bytes: most reviews' warnings fit by their bytes
    // alone, without a count of their characters.
    if all.iter().map(String::len).sum::<usize>() <= WARNINGS_TOTAL
        || all.iter().map(chars).sum::<usize>() <= WARNINGS_TOTAL
    {
        return all;
    }
    let more = |n: usize| {
        format!("and {n} more; see the audit annotation {VALIDATE_WEBHOOK}/{FINDINGS_ANNOTATION}")
    };
    // The last line's length with the most digits it can need.
    let reserve = chars(&more(all.len()));
    let mut used = 0;
    let mut kept: Vec<String> = all
        .iter()
        .take_while(|w| {
            used += chars(w);
            used + reserve <= WARNINGS_TOTAL
        })
        .cloned()
        .collect();
    kept.push(more(all.len() - kept.len()));
    kept
}

/// The room sonic-rs's writer asks for to write `strings` as JSON, so that a buffer sized with it
/// never grows: before each string it reserves six bytes per byte (every byte escaped as
/// `\u00XX`) and 35 more. A buffer that grows is copied into a fresh block, out of the caches,
/// and an answer's strings would make it grow more than once (the audit annotation's JSON,
/// written again as a string, asks for six times its length at once).
fn json_room<'s>(strings: impl IntoIterator<Item = &'s str>) -> usize {
    strings.into_iter().map(|s| 6 * s.len() + 35).sum()
}

/// The room for the rest of an answer: the review's keys and fixed values.
const ENVELOPE_ROOM: usize = 4096;

/// One finding as the audit annotation lists it.
#[derive(serde::Serialize)]
struct Annotated<'f> {
    rule: &'f str,
    severity: &'static str,
    pointer: &'f str,
    message: &'f str,
}

/// The audit annotations of a review with findings: all of them as compact JSON (as many as fit
/// [`ANNOTATION_LIMIT`], and then how many were left out), and, once, why the pod targets the OS
/// it does (the note every finding about it shares).
fn audit_annotations(findings: &[Finding]) -> std::collections::HashMap<String, String> {
    let keys = json_room(["rule", "severity", "pointer", "message"]);
    let mut listed: Vec<u8> = Vec::with_capacity(
        2 + findings
            .iter()
            .map(|f| {
                keys + 4 + json_room([f.rule.as_str(), f.severity.as_str(), &f.pointer, &f.message])
            })
            .sum::<usize>(),
    );
    listed.push(b'[');
    let mut omitted = 0;
    for f in findings {
        let before = listed.len();
        if before > 1 {
            listed.push(b',');
        }
        let entry = Annotated {
            rule: &f.rule,
            severity: f.severity.as_str(),
            pointer: &f.pointer,
            message: &f.message,
        };
        // Writing JSON into memory cannot fail.
        let _ = sonic_rs::to_writer(&mut listed, &entry);
        if omitted > 0 || listed.len() + 1 > ANNOTATION_LIMIT {
            listed.truncate(before);
            omitted += 1;
        }
    }
    listed.push(b']');
    let mut annotations = std::collections::HashMap::new();
    annotations.insert(
        FINDINGS_ANNOTATION.to_string(),
        String::from_utf8(listed).unwrap_or_default(),
    );
    if omitted > 0 {
        annotations.insert(OMITTED_ANNOTATION.to_string(), omitted.to_string());
    }
    if let Some(target) = findings.iter().find_map(|f| f.target.as_deref()) {
        annotations.insert(TARGET_ANNOTATION.to_string(), target.to_string());
    }
    annotations
}

fn validate(
    answer: &mut Answer,
    response: AdmissionResponse,
    findings: &[Finding],
    object: &Doc<'_>,
    enforcement: Enforcement,
    deny_on: crate::rules::Severity,
) -> AdmissionResponse {
    let mut response = response;
    if findings.is_empty() {
        return response;
    }
    let at_deny_level = |f: &Finding| f.severity >= deny_on;
    let enforcing = enforcement == Enforcement::Enforce;
    let denied: Vec<&Finding> = findings
        .iter()
        .filter(|f| enforcing && at_deny_level(f))
        .collect();
    let warned: Vec<(&Finding, bool)> = findings
        .iter()
        .filter(|f| !(enforcing && at_deny_level(f)))
        .map(|f| (f, at_deny_level(f)))
        .collect();
    response.audit_annotations = audit_annotations(findings);
    if !warned.is_empty() {
        response.warnings = Some(warnings(&warned, object));
        answer.verdict = if warned.iter().any(|(_, would_deny)| *would_deny) {
            Verdict::WouldDeny
        } else {
            Verdict::Warned
        };
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
    object: &Doc<'_>,
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
fn encode(mut response: AdmissionResponse) -> Vec<u8> {
    use base64::Engine as _;
    if response.patch.is_none() {
        let strings = [
            &response.uid,
            &response.result.message,
            &response.result.reason,
        ]
        .into_iter()
        .chain(response.warnings.iter().flatten())
        .chain(response.audit_annotations.iter().flat_map(|(k, v)| [k, v]));
        let mut out = Vec::with_capacity(json_room(strings.map(String::as_str)) + ENVELOPE_ROOM);
        // Writing JSON into memory cannot fail.
        let _ = sonic_rs::to_writer(&mut out, &response.into_review());
        // The answer is held until it is sent: not with six times its size.
        out.shrink_to_fit();
        return out;
    }
    // `kube` serialises the patch's bytes as a list of numbers; the API server reads base64. The
    // bytes are taken out and the answer written with them as base64 text beside its fields.
    let patch = response.patch.take().unwrap_or_default();
    let answer = PatchedReview {
        types: &response.types,
        response: PatchedResponse {
            response: &response,
            patch: base64::engine::general_purpose::STANDARD.encode(patch),
        },
    };
    sonic_rs::to_vec(&answer).unwrap_or_default()
}

/// An AdmissionReview answering with a patch, as [`AdmissionResponse::into_review`] would write
/// it but with the patch in base64.
#[derive(serde::Serialize)]
struct PatchedReview<'r> {
    #[serde(flatten)]
    types: &'r kube::core::TypeMeta,
    response: PatchedResponse<'r>,
}

#[derive(serde::Serialize)]
struct PatchedResponse<'r> {
    /// Every field but the patch (taken out, so not written).
    #[serde(flatten)]
    response: &'r AdmissionResponse,
    patch: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review_json(request: serde_json::Value) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({
            "kind": "AdmissionReview",
            "apiVersion": "admission.k8s.io/v1beta1",
            "request": request,
        }))
        .unwrap()
    }

    #[test]
    fn managed_fields_are_left_out_and_the_rest_of_the_object_kept() {
        let body = review_json(serde_json::json!({
            "uid": "u1",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "operation": "CREATE",
            "userInfo": {"username": "someone"},
            "oldObject": {"huge": [1, 2, 3]},
            "object": {
                "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "b"}, "managedFields": [{"manager": "kubectl"}]},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        }));
        let read = read(&body).ok().expect("a well-formed review");
        assert_eq!(read.api_version, "admission.k8s.io/v1beta1");
        assert_eq!((read.uid.as_str(), read.kind.as_str()), ("u1", "Pod"));
        let object = read.object.unwrap();
        assert_eq!(
            object["metadata"],
            crate::json!({"name": "p", "labels": {"a": "b"}})
        );
        assert_eq!(object["spec"]["containers"][0]["image"], "busybox");
        // The object's strings are the body's, not copies.
        let borrowed = |v: &Doc<'_>| {
            let text = v.as_str().unwrap();
            let body = body.as_ptr_range();
            matches!(v, Doc::String(crate::value::Text::Borrowed(_)))
                && body.contains(&text.as_ptr())
        };
        assert!(borrowed(&object["spec"]["containers"][0]["image"]));
        assert!(borrowed(&object["metadata"]["labels"]["a"]));
    }

    #[test]
    fn config_exemptions_apply_to_the_request_namespace_as_in_the_cli() {
        let mut review_value: serde_json::Value = serde_json::from_slice(
            &std::fs::read(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/testdata/admission/pod-windows-unpinned-v1.json"
            ))
            .unwrap(),
        )
        .unwrap();
        // An object without a namespace of its own: the request's (`shop`) is the one matched.
        review_value["request"]["object"]["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("namespace");
        let body = serde_json::to_vec(&review_value).unwrap();
        let rules_of = |config: &str| {
            let config = crate::config::Config::parse(config, "winguard.yaml").unwrap();
            let setup = Policy::new(crate::policy::builtin_rules().unwrap(), config).unwrap();
            review(&setup, Endpoint::Validate, &body).rules
        };
        let all = rules_of("");
        assert!(
            all.contains(&"windows-os-selector-missing".to_string()),
            "{all:?}"
        );
        let exempt = rules_of(
            "exemptions:\n- rule: windows-os-selector-missing\n  namespace: sh*\n  reason: pinned by the namespace's default node selector\n",
        );
        assert!(
            !exempt.contains(&"windows-os-selector-missing".to_string()),
            "{exempt:?}"
        );
        assert_eq!(exempt.len(), all.len() - 1, "{exempt:?}");
    }

    /// /mutate evaluates only the rules with a safe fix: of the realistic pod's findings it names
    /// just those /validate names too that have one (the config copy, which has none, is not
    /// worked out). That the patch still applies and fixes those rules is tests/webhook.rs's.
    #[test]
    fn mutate_evaluates_only_rules_with_safe_fixes() {
        let body = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/admission/pod-windows-realistic-v1.json"
        ))
        .unwrap();
        let rules = crate::policy::builtin_rules().unwrap();
        let safe: Vec<String> = rules
            .rules
            .iter()
            .filter(|r| r.fix_applicability() == Some(Applicability::Safe))
            .map(|r| r.name.clone())
            .collect();
        let setup = Policy::new(rules, crate::config::Config::default()).unwrap();
        let validated = review(&setup, Endpoint::Validate, &body);
        let mutated = review(&setup, Endpoint::Mutate, &body);
        assert!(
            validated
                .rules
                .contains(&"config-copy-entrypoint-missing".to_string()),
            "{:?}",
            validated.rules
        );
        assert_eq!(mutated.verdict, Verdict::Patched);
        let mut expected: Vec<&String> = validated
            .rules
            .iter()
            .filter(|r| safe.contains(r))
            .collect();
        let mut got: Vec<&String> = mutated.rules.iter().collect();
        expected.sort();
        got.sort();
        assert_eq!(got, expected);
    }

    fn finding(rule: &str, pointer: &str, message: String) -> Finding {
        Finding {
            rule: rule.into(),
            severity: crate::rules::Severity::Warning,
            message,
            target: Some("the pod targets Windows because of its image".into()),
            pointer: pointer.into(),
            fix: None,
        }
    }

    #[test]
    fn pointers_read_as_kubernetes_field_paths() {
        let object = crate::json!({"spec": {"containers": [{"name": "a"}],
            "nodeSelector": {"kubernetes.io/os": "linux"}, "7": {"x": 1}}});
        for (pointer, path) in [
            ("/spec/containers/0/image", "spec.containers[0].image"),
            (
                "/spec/nodeSelector/kubernetes.io~1os",
                "spec.nodeSelector[kubernetes.io/os]",
            ),
            ("/spec/7/x", "spec.7.x"),
            ("/spec/tolerations", "spec.tolerations"),
            ("", ""),
        ] {
            assert_eq!(field_path(&object, pointer), path, "{pointer}");
        }
    }

    /// A warning names severity, rule and field before the message, keeps to the limit in
    /// characters (not bytes), and is cut at a word with an ellipsis.
    #[test]
    fn warnings_keep_to_the_limit_in_characters_cut_at_a_word() {
        let object = crate::json!({"spec": {}});
        // 120 two-byte characters: over the limit in bytes, within it in characters.
        let fits = warning(
            &finding("windows-pod-os-missing", "/spec/os", "é".repeat(120)),
            &object,
            false,
        );
        assert!(fits.len() > WARNING_LIMIT && fits.chars().count() <= WARNING_LIMIT);
        assert_eq!(
            fits,
            format!(
                "warning windows-pod-os-missing: spec.os: {}",
                "é".repeat(120)
            )
        );
        let long = warning(
            &finding("windows-pod-os-missing", "/spec/os", "word ".repeat(80)),
            &object,
            true,
        );
        assert!(
            long.starts_with("would deny: warning windows-pod-os-missing: spec.os: word word"),
            "{long}"
        );
        assert!(long.ends_with("word…"), "{long}");
        assert!(long.chars().count() <= WARNING_LIMIT, "{long}");
        // No place to cut at a word: cut at the limit.
        let solid = warning(&finding("r", "/spec", "x".repeat(400)), &object, false);
        assert_eq!(solid.chars().count(), WARNING_LIMIT, "{solid}");
        // Cut in characters, not bytes, where the text is not ASCII: of 200 words of two
        // characters (`é`, two bytes) and a space, the 255 characters less the 17-character
        // prefix hold 79 whole words, cut at the space after them, and the ellipsis.
        let wide = warning(&finding("r", "/spec", "éé ".repeat(200)), &object, false);
        assert!(wide.ends_with("éé…"), "{wide}");
        assert_eq!(
            wide.chars().count(),
            "warning r: spec: ".len() + 79 * 3 - 1 + 1,
            "{wide}"
        );
        let solid_wide = warning(&finding("r", "/spec", "é".repeat(400)), &object, false);
        assert_eq!(solid_wide.chars().count(), WARNING_LIMIT, "{solid_wide}");
        // A line break would make the API server drop the warning.
        let broken = warning(&finding("r", "/spec", "a\nb".into()), &object, false);
        assert_eq!(broken, "warning r: spec: a b");
    }

    /// Warnings stop within the API server's total, and the last one says how many more there are
    /// and where they are listed; the audit annotation lists every finding.
    #[test]
    fn many_findings_keep_to_the_total_and_the_annotation_lists_them_all() {
        let object = crate::json!({"spec": {}});
        let findings: Vec<Finding> = (0..40)
            .map(|i| {
                finding(
                    &format!("rule-{i}"),
                    "/spec",
                    format!("{i} {}", "text ".repeat(40)),
                )
            })
            .collect();
        let pairs: Vec<(&Finding, bool)> = findings.iter().map(|f| (f, false)).collect();
        let w = warnings(&pairs, &object);
        let total: usize = w.iter().map(|w| w.chars().count()).sum();
        assert!(total <= WARNINGS_TOTAL, "{total}");
        let last = w.last().unwrap();
        assert_eq!(
            last,
            &format!(
                "and {} more; see the audit annotation validate.winguard.io/findings",
                40 - (w.len() - 1)
            )
        );
        assert!(w.len() > 10, "{w:?}");
        let few = warnings(&pairs[..3], &object);
        assert_eq!(few.len(), 3);

        let annotations = audit_annotations(&findings);
        let listed: serde_json::Value = serde_json::from_str(&annotations["findings"]).unwrap();
        assert_eq!(listed.as_array().unwrap().len(), 40);
        assert_eq!(listed[3]["rule"], "rule-3");
        assert_eq!(listed[3]["severity"], "warning");
        assert_eq!(listed[3]["pointer"], "/spec");
        assert!(listed[3]["message"].as_str().unwrap().starts_with("3 text"));
        assert_eq!(
            annotations["target"],
            "the pod targets Windows because of its image"
        );
        assert!(!annotations.contains_key("findings-omitted"));
        // Past the size bound: the first ones listed, the rest counted.
        let huge: Vec<Finding> = (0..100)
            .map(|i| finding("r", "/spec", format!("{i} {}", "y".repeat(1000))))
            .collect();
        let annotations = audit_annotations(&huge);
        let value = &annotations["findings"];
        assert!(value.len() <= ANNOTATION_LIMIT, "{}", value.len());
        let listed: Vec<serde_json::Value> = serde_json::from_str(value).unwrap();
        assert_eq!(
            listed.len() + annotations["findings-omitted"].parse::<usize>().unwrap(),
            100
        );
    }

    /// The fast reader and serde_json's read every review fixture the same way (where the fast
    /// one takes it), and the fast one takes every well-formed one.
    #[test]
    fn both_readers_read_reviews_alike() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/admission");
        let mut compared = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let slow = read_with_serde_json(&text).ok();
            let fast = read_well_formed(&text);
            if let Some(fast) = &fast {
                assert_eq!(Some(fast), slow.as_ref(), "{}", path.display());
                compared += 1;
            } else {
                assert!(slow.is_none(), "{}: declined a good review", path.display());
            }
        }
        assert!(compared >= 5, "only {compared} reviews compared");
        // Shapes serde_json reports on are left to it.
        for text in [
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u","uid":"v","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE"}}"#,
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"CREATE","name":null}}"#,
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u","kind":{"version":"v1","kind":"Pod"},"operation":"CREATE"}}"#,
            r#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1","request":{"uid":"u","kind":{"group":"","version":"v1","kind":"Pod"},"operation":"PATCH"}}"#,
        ] {
            assert!(read_well_formed(text).is_none(), "{text}");
            assert!(read_with_serde_json(text).is_err(), "{text}");
        }
    }

    #[test]
    fn a_malformed_request_still_gets_its_uid_and_version_back() {
        let body = review_json(serde_json::json!({"uid": "u4", "operation": 5}));
        let Err(e) = read(&body) else {
            panic!("a numeric operation was accepted")
        };
        assert_eq!(e.uid.as_deref(), Some("u4"));
        assert_eq!(e.types.as_deref(), Some("admission.k8s.io/v1beta1"));
        assert!(e.message.contains("AdmissionReview"), "{}", e.message);
    }
}
