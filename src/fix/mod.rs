//! Fixes applied to manifests: `winguard fix` (files in place) and `winguard mutate` (stdin to
//! stdout, a Helm post-renderer).
//!
//! The fixes are the findings' own JSON Patches, applied as the mutating webhook applies them
//! ([`crate::engine::patch::apply_all`]). A file is edited document by document, and a document
//! is never written out anew: each operation is written into its text ([`edit`]), so comments,
//! quoting, flow or block style and every untouched scalar stay as they were. A fix that can't be
//! written so that every YAML reader reads exactly the fixed object is refused, with the reason.

mod edit;
mod values;

pub(crate) use values::chart_fixes;

use crate::error::{Error, ErrorKind};
use std::sync::Arc;

use crate::value::Value;
use json_patch::PatchOperation;

use crate::engine::patch;
use crate::manifest::{DocSpan, SourceText, split_source};
use crate::pipeline::{InputSet, admit};
use crate::policy::Policy;
use crate::rules::Applicability;
use crate::value::document::read_documents;
use crate::value::yaml::ParsedDoc;

/// Rounds of fixing one object (see [`fix_sources`]); real rule sets settle in two.
const MAX_FIX_ROUNDS: usize = 8;

/// Which fixes are applied.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct FixOptions {
    /// Also apply fixes marked `unsafe` (they may change behaviour; review them).
    pub unsafe_fixes: bool,
}

/// One input after fixing.
#[derive(Debug)]
pub(crate) struct FixedSource {
    pub source: Arc<SourceText>,
    /// The whole new text (equal to the old one when nothing was fixed).
    pub text: String,
    /// Findings whose fix was applied.
    pub fixed: Vec<FixedFinding>,
    /// Documents that could not be read; they are left as they were.
    pub errors: Vec<Error>,
    /// Fixes that could not be written into the text (the object's findings stand).
    pub refused: Vec<String>,
}

impl FixedSource {
    pub(crate) fn changed(&self) -> bool {
        self.text != self.source.text
    }

    /// The new text as it is written out: with the input's byte order mark, if it had one.
    pub(crate) fn contents(&self) -> std::borrow::Cow<'_, str> {
        if self.source.bom {
            format!("\u{feff}{}", self.text).into()
        } else {
            self.text.as_str().into()
        }
    }
}

/// A finding that a fix removed, for the summary.
#[derive(Debug, Clone)]
pub(crate) struct FixedFinding {
    pub rule: String,
    pub title: String,
    pub object: String,
}

/// One document of a source: where it is, and its parsed value if it could be read.
struct Document {
    span: DocSpan,
    parsed: Option<ParsedDoc>,
}

/// What the fixes did to one document; kept apart from [`Document`] so the rules read the
/// parsed objects in place while fixes are recorded.
#[derive(Default)]
struct Edit {
    /// The operations applied, against the document's root (a List's items' under their
    /// `/items/N`).
    applied: Vec<PatchOperation>,
    /// The findings they fix.
    fixed: Vec<FixedFinding>,
}

/// Applies the fixes to every source. Objects of all sources form one input set, as in `lint`
/// (cross-object rules see each other's objects).
pub(crate) fn fix_sources(
    setup: &Policy,
    sources: &[Arc<SourceText>],
    opts: FixOptions,
) -> Vec<FixedSource> {
    let mut docs: Vec<Vec<Document>> = Vec::with_capacity(sources.len());
    let mut errors: Vec<Vec<Error>> = Vec::with_capacity(sources.len());
    for source in sources {
        let (_, spans) = split_source(&source.text);
        let mut source_docs = Vec::with_capacity(spans.len());
        let mut source_errors = Vec::new();
        for span in spans {
            let text = &source.text[span.start..span.end];
            let parsed = match read_documents(text, span.line_offset) {
                (mut docs, None) if docs.len() == 1 => docs.pop(),
                (_, Some(e)) => {
                    source_errors.push(Error {
                        kind: ErrorKind::Input,
                        file: source.name.clone(),
                        line: Some(e.line),
                        column: Some(e.col),
                        message: format!("invalid YAML (document left as it is): {}", e.message),
                    });
                    None
                }
                _ => None,
            };
            source_docs.push(Document { span, parsed });
        }
        docs.push(source_docs);
        errors.push(source_errors);
    }

    // Every object, by where it sits: (source, document, item of a List or None).
    let mut places = Vec::new();
    for (s, source_docs) in docs.iter().enumerate() {
        for (d, doc) in source_docs.iter().enumerate() {
            let Some(parsed) = &doc.parsed else { continue };
            match list_items(&parsed.value) {
                Some(items) => places.extend((0..items.len()).map(|i| (s, d, Some(i)))),
                None => places.push((s, d, None)),
            }
        }
    }
    let parsed_value = |(s, d, item): (usize, usize, Option<usize>)| -> &Value {
        let value = &docs[s][d]
            .parsed
            .as_ref()
            .expect("placed objects are parsed")
            .value;
        match item {
            Some(i) => &value["items"][i],
            None => value,
        }
    };
    let objects: Vec<&Value> = places.iter().map(|p| parsed_value(*p)).collect();
    let mut edits: Vec<Vec<Edit>> = docs
        .iter()
        .map(|d| d.iter().map(|_| Edit::default()).collect())
        .collect();
    let set = InputSet::of_objects(setup, &objects);

    for ((s, d, item), &object) in places.iter().zip(&objects) {
        if !object.is_object() || admit(object).is_err() {
            // Not an object the rules read (lint reports why).
            continue;
        }
        // Fixes are applied in rounds until none is left to apply: a rule may hold its fix
        // back while another finding stands (`spec.os.name` waits for the Linux-only fields
        // to go), so the object is evaluated again after each round. Bounded, so rules whose
        // fixes undo each other can't loop.
        let mut target = object.clone();
        let mut applied: Vec<PatchOperation> = Vec::new();
        let mut chosen = Vec::new();
        let mut findings = set.findings(object);
        for _ in 0..MAX_FIX_ROUNDS {
            let round: Vec<_> = findings
                .into_iter()
                .filter(|f| {
                    f.fix.as_ref().is_some_and(|x| {
                        x.applicability == Applicability::Safe || opts.unsafe_fixes
                    })
                })
                .collect();
            let before = target.clone();
            let ops = patch::apply_all(
                &mut target,
                round
                    .iter()
                    .filter_map(|f| f.fix.as_ref().map(|x| x.patch.as_slice())),
            );
            // An `add` of what is already there applies but changes nothing: the fixed point
            // is the object, not the operations.
            if target == before {
                break;
            }
            applied.extend(ops);
            chosen.extend(round);
            findings = set.findings(&target);
        }
        if applied.is_empty() {
            continue;
        }
        let name = describe_object(object);
        let edit = &mut edits[*s][*d];
        edit.fixed.extend(chosen.iter().filter_map(|f| {
            f.fix.as_ref().map(|x| FixedFinding {
                rule: f.rule.clone(),
                title: x.title.clone(),
                object: name.clone(),
            })
        }));
        match item {
            Some(i) => edit
                .applied
                .extend(applied.iter().map(|op| under(op, &format!("/items/{i}")))),
            None => edit.applied.extend(applied),
        }
    }

    sources
        .iter()
        .zip(docs.iter().zip(edits))
        .zip(errors)
        .map(|((source, (source_docs, source_edits)), errors)| {
            let (text, fixed, refused) = render(source, source_docs, source_edits);
            FixedSource {
                text,
                source: Arc::clone(source),
                fixed,
                errors,
                refused,
            }
        })
        .collect()
}

/// `op` with its paths moved under `prefix` (a List item's operations, against the List).
fn under(op: &PatchOperation, prefix: &str) -> PatchOperation {
    let mut json = serde_json::to_value(op).unwrap_or_default();
    for key in ["path", "from"] {
        if let Some(serde_json::Value::String(p)) = json.get_mut(key) {
            *p = format!("{prefix}{p}");
        }
    }
    serde_json::from_value(json).unwrap_or_else(|_| op.clone())
}

/// A `kind: …List`'s items, if `value` is one.
fn list_items(value: &Value) -> Option<&Vec<Value>> {
    let kind = value.get("kind")?.as_str()?;
    if !kind.ends_with("List") {
        return None;
    }
    value.get("items")?.as_array()
}

/// `Kind namespace/name` for summaries.
fn describe_object(object: &Value) -> String {
    let kind = object["kind"].as_str().unwrap_or("object");
    let name = object["metadata"]["name"].as_str().unwrap_or("");
    match object["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// The source's text with each fixed document's operations written into it and everything else
/// as it was; the findings fixed, and the fixes refused.
fn render(
    source: &SourceText,
    docs: &[Document],
    edits: Vec<Edit>,
) -> (String, Vec<FixedFinding>, Vec<String>) {
    let text = &source.text;
    let mut fixed = Vec::new();
    let mut refused = Vec::new();
    if edits.iter().all(|e| e.applied.is_empty()) {
        return (text.clone(), fixed, refused);
    }
    let json = is_json(source);
    let mut out = String::with_capacity(text.len() + 256);
    let mut at = 0;
    for (doc, edit) in docs.iter().zip(edits) {
        out.push_str(&text[at..doc.span.start]);
        at = doc.span.end;
        let span_text = &text[doc.span.start..doc.span.end];
        if edit.applied.is_empty() {
            out.push_str(span_text);
            continue;
        }
        match edit::apply(span_text, &edit.applied, json) {
            Ok(edited) => {
                out.push_str(&edited);
                fixed.extend(edit.fixed);
            }
            Err(why) => {
                out.push_str(span_text);
                let line = doc
                    .parsed
                    .as_ref()
                    .map_or(doc.span.line_offset + 1, |p| p.start_line);
                for f in edit.fixed {
                    refused.push(format!(
                        "{}:{line}: {}: not fixed ({}): {why}",
                        source.name, f.object, f.rule
                    ));
                }
            }
        }
    }
    out.push_str(&text[at..]);
    (out, fixed, refused)
}

fn is_json(source: &SourceText) -> bool {
    source.name.ends_with(".json") || source.text.trim_start().starts_with('{')
}
