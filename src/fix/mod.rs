//! Fixes applied to manifests: `winguard fix` (files in place) and `winguard mutate` (stdin to
//! stdout, a Helm post-renderer).
//!
//! The fixes are the findings' own JSON Patches, applied as the mutating webhook applies them
//! ([`crate::engine::patch::apply_all`]). A file is rewritten document by document: a document no
//! fix touches keeps its bytes (comments, quoting, layout). In a fixed one, fixes that only add
//! are written in as new lines under their parents ([`insert`]), so every other line stays as it
//! was; any other fix has the document written out again, keeping the comment lines before its
//! content (Helm's `# Source:` among them) and its keys' original order (comments inside it are
//! then lost).

mod insert;
mod values;

pub(crate) use values::chart_fixes;

use crate::error::{Error, ErrorKind};
use std::sync::Arc;

use crate::value::Value;
use json_patch::PatchOperation;
use serde::Serialize;
use serde::ser::{SerializeMap, SerializeSeq};

use crate::engine::{Context, evaluate, patch};
use crate::manifest::yaml::{ParsedDoc, PosNode};
use crate::manifest::{DocSpan, SourceText, parse_document_text, shape, split_source};
use crate::policy::LintSetup;
use crate::rules::Applicability;

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
}

impl FixedSource {
    pub(crate) fn changed(&self) -> bool {
        self.text != self.source.text
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
struct Edit {
    /// The value with fixes applied, when any applied.
    patched: Option<Value>,
    /// The operations applied, against the document's root (`None` once they are not: a List's
    /// items are patched one by one).
    applied: Option<Vec<PatchOperation>>,
}

/// Applies the fixes to every source. Objects of all sources form one input set, as in `lint`
/// (cross-object rules see each other's objects).
pub(crate) fn fix_sources(
    setup: &LintSetup,
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
            let parsed = match parse_document_text(text, span.line_offset) {
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
        .map(|d| {
            d.iter()
                .map(|_| Edit {
                    patched: None,
                    applied: Some(Vec::new()),
                })
                .collect()
        })
        .collect();
    let ctx = Context::new(setup.basis(), &objects);

    let mut fixed: Vec<Vec<FixedFinding>> = vec![Vec::new(); sources.len()];
    for ((s, d, item), &object) in places.iter().zip(&objects) {
        if !object.is_object() || !shape::check(object).is_empty() {
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
        let mut findings = evaluate(&setup.rules, &ctx, object);
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
            findings = evaluate(&setup.rules, &ctx, &target);
        }
        if applied.is_empty() {
            continue;
        }
        let name = describe_object(object);
        fixed[*s].extend(chosen.iter().filter_map(|f| {
            f.fix.as_ref().map(|x| FixedFinding {
                rule: f.rule.clone(),
                title: x.title.clone(),
                object: name.clone(),
            })
        }));
        let edit = &mut edits[*s][*d];
        let whole = edit
            .patched
            .get_or_insert_with(|| parsed_value((*s, *d, None)).clone());
        match item {
            Some(i) => {
                if let Some(slot) = whole.get_mut("items").and_then(|v| v.get_mut(*i)) {
                    *slot = target;
                }
                edit.applied = None;
            }
            None => {
                *whole = target;
                if let Some(ops) = &mut edit.applied {
                    ops.extend(applied);
                }
            }
        }
    }

    sources
        .iter()
        .zip(docs.iter().zip(&edits))
        .zip(errors)
        .zip(fixed)
        .map(
            |(((source, (source_docs, source_edits)), errors), fixed)| FixedSource {
                text: render(source, source_docs, source_edits),
                source: Arc::clone(source),
                fixed,
                errors,
            },
        )
        .collect()
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

/// The source's text with each fixed document written anew and everything else as it was.
fn render(source: &SourceText, docs: &[Document], edits: &[Edit]) -> String {
    let text = &source.text;
    if edits.iter().all(|e| e.patched.is_none()) {
        return text.clone();
    }
    let json = is_json(source);
    let mut out = String::with_capacity(text.len() + 256);
    let mut at = 0;
    for (doc, edit) in docs.iter().zip(edits) {
        out.push_str(&text[at..doc.span.start]);
        at = doc.span.end;
        let span_text = &text[doc.span.start..doc.span.end];
        match (&edit.patched, &doc.parsed) {
            (Some(patched), Some(parsed)) => {
                // The fix as new lines in the document's own text, where it can be.
                let inserted = edit.applied.as_deref().filter(|_| !json).and_then(|ops| {
                    insert::insert_fixes(
                        span_text,
                        doc.span.line_offset + 1,
                        &parsed.value,
                        &parsed.pos,
                        patched,
                        ops,
                    )
                });
                if let Some(text) = inserted {
                    out.push_str(&text);
                    continue;
                }
                let ordered = Ordered {
                    value: patched,
                    original: Some((&parsed.value, &parsed.pos)),
                };
                // The lines before the content: `---`, `# Source: …` and other comments.
                let keep_lines =
                    parsed.start_line.saturating_sub(doc.span.line_offset + 1) as usize;
                let prefix_len: usize = span_text
                    .split_inclusive('\n')
                    .take(keep_lines)
                    .map(str::len)
                    .sum();
                out.push_str(&span_text[..prefix_len]);
                if json {
                    let mut pretty = serde_json::to_string_pretty(&ordered).unwrap_or_default();
                    pretty.push('\n');
                    out.push_str(&pretty);
                } else {
                    out.push_str(&serde_yaml_ng::to_string(&ordered).unwrap_or_default());
                }
            }
            _ => out.push_str(span_text),
        }
    }
    out.push_str(&text[at..]);
    out
}

fn is_json(source: &SourceText) -> bool {
    source.name.ends_with(".json") || source.text.trim_start().starts_with('{')
}

/// A value serialised with its maps' keys in the order the original document had them (keys a
/// fix added come after, in name order). [`crate::value::Map`]s are sorted, and a fixed manifest
/// whose keys were all reordered would bury the fix in its diff.
struct Ordered<'a> {
    value: &'a Value,
    /// The value at the same place in the parsed document, and its positions.
    original: Option<(&'a Value, &'a PosNode)>,
}

impl Serialize for Ordered<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::Object(map) => {
                let original = self
                    .original
                    .and_then(|(v, pos)| v.as_object().map(|m| (m, pos)));
                let mut entries: Vec<(&crate::value::Str, Ordered<'_>, (u32, u32))> = map
                    .iter()
                    .map(|(key, value)| {
                        // Positions are listed in the original map's (sorted) key order.
                        let before = original.and_then(|(m, pos)| {
                            let i = m.keys().position(|k| k == key)?;
                            Some((&m[key], pos.children.get(i)?))
                        });
                        let place =
                            before.map_or((u32::MAX, u32::MAX), |(_, p)| (p.key_line, p.key_col));
                        (
                            key,
                            Ordered {
                                value,
                                original: before,
                            },
                            place,
                        )
                    })
                    .collect();
                entries.sort_by_key(|(_, _, place)| *place);
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (key, value, _) in &entries {
                    out.serialize_entry(key, value)?;
                }
                out.end()
            }
            Value::Array(items) => {
                let original = self
                    .original
                    .and_then(|(v, pos)| v.as_array().map(|a| (a, pos)));
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for (i, value) in items.iter().enumerate() {
                    let before =
                        original.and_then(|(a, pos)| Some((a.get(i)?, pos.children.get(i)?)));
                    out.serialize_element(&Ordered {
                        value,
                        original: before,
                    })?;
                }
                out.end()
            }
            scalar => scalar.serialize(serializer),
        }
    }
}
