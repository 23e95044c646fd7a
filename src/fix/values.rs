//! `winguard fix CHART`: a fix whose change falls inside what a template action printed from a
//! chart value (`nodeSelector: {{- toYaml .Values.nodeSelector | nindent 8 }}`) is written into
//! the values file that sets that value; one that falls in a template's own text is a change to
//! that template, which is described (templates are not rewritten).

use std::collections::BTreeMap;
use std::sync::Arc;

use json_patch::PatchOperation;

use super::{FixOptions, FixedFinding};
use crate::manifest::{Object, SourceText, parse_document_text};
use crate::report::Report;
use crate::rules::Applicability;
use crate::value::Value;

/// A values file after the fixes that belong in it.
#[derive(Debug)]
pub(crate) struct ValuesEdit {
    pub file: String,
    pub before: String,
    pub after: String,
    pub fixed: Vec<FixedFinding>,
}

/// What fixing a rendered chart comes to.
#[derive(Debug, Default)]
pub(crate) struct ChartFixes {
    pub edits: Vec<ValuesEdit>,
    /// Fixes that need a template changed: where, and what to do.
    pub template_changes: Vec<String>,
    /// Fixes neither a values file nor a template line can take, and why.
    pub not_expressible: Vec<String>,
}

/// Where each fix of `report` (the lint of the rendered chart `source`) belongs.
pub(crate) fn chart_fixes(
    report: &Report,
    source: &Arc<SourceText>,
    opts: FixOptions,
) -> ChartFixes {
    let (objects, _) = crate::manifest::parse_source(source);
    let mut out = ChartFixes::default();
    // Per values file: its operations and the findings they fix.
    let mut by_file: BTreeMap<String, (Vec<PatchOperation>, Vec<FixedFinding>)> = BTreeMap::new();
    for f in &report.findings {
        let Some(fix) = &f.finding.fix else { continue };
        if fix.applicability == Applicability::Unsafe && !opts.unsafe_fixes {
            continue;
        }
        let Some(object) = objects.iter().find(|o| {
            o.kind() == f.object.kind
                && o.name() == f.object.name
                && o.namespace() == f.object.namespace.as_deref()
        }) else {
            continue;
        };
        let label = format!("{} {}", f.object.kind, f.object.name);
        let mut ops: Vec<(String, PatchOperation)> = Vec::new();
        let mut template = None;
        let mut failed = None;
        for op in &fix.patch {
            match place(object, op) {
                Place::Values(file, added) => {
                    ops.extend(added.into_iter().map(|op| (file.clone(), op)))
                }
                Place::Template(at) => template = Some(at),
                Place::Nowhere(why) => failed = Some(why),
            }
        }
        let finding = FixedFinding {
            rule: f.finding.rule.clone(),
            title: fix.title.clone(),
            object: label.clone(),
        };
        if let Some(why) = failed {
            out.not_expressible.push(format!(
                "{label}: {} ({}): {why}",
                fix.title, f.finding.rule
            ));
        } else if let Some(at) = template {
            out.template_changes.push(format!(
                "{label}: {} ({}): the template must change, at {at}",
                fix.title, f.finding.rule
            ));
        } else {
            for (file, op) in ops {
                let entry = by_file.entry(file).or_default();
                entry.0.push(op);
                if !entry
                    .1
                    .iter()
                    .any(|x| x.rule == finding.rule && x.object == finding.object)
                {
                    entry.1.push(finding.clone());
                }
            }
        }
    }
    for (file, (ops, fixed)) in by_file {
        let Ok(before) = std::fs::read_to_string(&file) else {
            out.not_expressible
                .push(format!("{file}: cannot be read to write the fixes into"));
            continue;
        };
        match write_into(&before, &ops) {
            Some(after) => out.edits.push(ValuesEdit {
                file,
                before,
                after,
                fixed,
            }),
            None => out.not_expressible.push(format!(
                "{file}: the fixes' values can't be written into it in place ({})",
                fixed
                    .iter()
                    .map(|f| f.title.as_str())
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
        }
    }
    out
}

enum Place {
    /// Operations against this values file.
    Values(String, Vec<PatchOperation>),
    /// The template text at this place must change.
    Template(String),
    Nowhere(String),
}

/// Where an operation of a fix against the rendered `object` belongs: the nearest existing
/// parent of its path, and what wrote that parent there.
fn place(object: &Object, op: &PatchOperation) -> Place {
    let PatchOperation::Add(add) = op else {
        return Place::Nowhere("only additions are traced into values".into());
    };
    let path = add.path.as_str();
    let tokens: Vec<&str> = path.split('/').skip(1).collect();
    for k in (0..tokens.len()).rev() {
        let parent: String = tokens[..k].iter().map(|t| format!("/{t}")).collect();
        if object.value.pointer(&parent).is_none() {
            continue;
        }
        // What the operation adds, seen from that parent: `os/name: windows` is `os: {name:
        // windows}` under the spec when the spec has no `os` yet.
        let mut value = add.value.clone();
        for t in tokens[k + 1..].iter().rev() {
            value = if *t == "-" || t.parse::<usize>().is_ok() {
                serde_json::Value::Array(vec![value])
            } else {
                let key = crate::manifest::unescape_pointer_token(t).into_owned();
                serde_json::Value::Object([(key, value)].into_iter().collect())
            };
        }
        let pos = object.value_position(&parent);
        let Some(origin) = object
            .source
            .origin_at(object.stream_line(pos.line), pos.column)
        else {
            return Place::Nowhere("the rendered text it goes into has no template".into());
        };
        // A template change is described at the parent's key (`spec:`), with what to add.
        let template_change = || {
            let key = object.position(&parent);
            let origin = object
                .source
                .origin_at(object.stream_line(key.line), key.column)
                .unwrap_or_else(|| origin.clone());
            let value = serde_json::to_string(&value).unwrap_or_default();
            let what = match tokens.get(k) {
                Some(t) if *t == "-" || t.parse::<usize>().is_ok() => format!("append `{value}`"),
                Some(t) => format!(
                    "add `{}: {value}`",
                    crate::manifest::unescape_pointer_token(t)
                ),
                None => format!("set `{value}`"),
            };
            Place::Template(format!(
                "{}:{}: {what} there",
                object.source.template_file(&origin.file),
                origin.line
            ))
        };
        if origin.verbatim {
            // A field an empty `with .Values.X` left out (helm create's `nodeSelector: {}`):
            // what it lacks goes into that value, which the `with` then writes.
            let hole = tokens.get(k).and_then(|key| {
                let key = crate::manifest::unescape_pointer_token(key);
                // From the parent's key on: the `with` may stand before its first entry.
                let at = object.position(&parent);
                object
                    .source
                    .hole_at(object.stream_line(at.line), at.column, &key)
            });
            return match hole {
                Some(site) => into_empty_value(&site, &value),
                None => template_change(),
            };
        }
        let Some(site) = &origin.value else {
            return template_change();
        };
        let Some(file) = &site.file else {
            return Place::Nowhere(match &site.flag {
                Some(flag) => format!("the value `{}` is set by `{flag}`", site.path),
                None => format!("the value `{}` is set in no values file", site.path),
            });
        };
        let values_path: String = crate::chart::origin::path_pointer(&site.path)
            + &tokens.get(k).map(|t| format!("/{t}")).unwrap_or_default();
        let Ok(values_path) = values_path.parse() else {
            return Place::Nowhere(format!("`{values_path}` is not a JSON pointer"));
        };
        let op = PatchOperation::Add(json_patch::AddOperation {
            path: values_path,
            value,
        });
        return Place::Values(file.clone(), vec![op]);
    }
    Place::Nowhere("nothing of its path was rendered".into())
}

/// Additions that fill the empty value `site` (a map or a list a `with` skipped) with the entries
/// or items of `value`, the field the rendered object lacks.
fn into_empty_value(site: &crate::manifest::origin::ValueSite, value: &serde_json::Value) -> Place {
    let Some(file) = &site.file else {
        return Place::Nowhere(match &site.flag {
            Some(flag) => format!("the value `{}` is set by `{flag}`", site.path),
            None => format!("the value `{}` is set in no values file", site.path),
        });
    };
    let base = crate::chart::origin::path_pointer(&site.path);
    let add = |suffix: String, value: &serde_json::Value| {
        format!("{base}/{suffix}").parse().ok().map(|path| {
            PatchOperation::Add(json_patch::AddOperation {
                path,
                value: value.clone(),
            })
        })
    };
    let ops: Option<Vec<PatchOperation>> = match value {
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(k, v)| add(crate::manifest::escape_pointer_token(k).into_owned(), v))
            .collect(),
        serde_json::Value::Array(items) => items.iter().map(|v| add("-".into(), v)).collect(),
        _ => None,
    };
    // An empty map or list (a fix creating the parent first) is the empty value itself.
    match ops {
        Some(ops) => Place::Values(file.clone(), ops),
        None => Place::Nowhere(format!(
            "the value `{}` would have to become `{value}`",
            site.path
        )),
    }
}

/// `text` (a values file) with `ops` written in, keeping every other line; `None` when they
/// can't be.
fn write_into(text: &str, ops: &[PatchOperation]) -> Option<String> {
    let (mut docs, error) = parse_document_text(text, 0);
    if error.is_some() || docs.len() != 1 {
        return None;
    }
    let doc = docs.pop()?;
    let mut patched = doc.value.clone();
    for op in ops {
        crate::engine::patch::apply(&mut patched, op)?;
    }
    if let Some(out) = super::insert::insert_fixes(text, 1, &doc.value, &doc.pos, &patched, ops) {
        return Some(out);
    }
    // `nodeSelector: {}` / `tolerations: []`: an empty flow collection is written out again,
    // as the block its fixes make of it.
    empty_flow_rewrite(text, &doc, &patched, ops)
}

fn empty_flow_rewrite(
    text: &str,
    doc: &crate::manifest::yaml::ParsedDoc,
    patched: &Value,
    ops: &[PatchOperation],
) -> Option<String> {
    let mut lines: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    let mut done: Vec<String> = Vec::new();
    for op in ops {
        let PatchOperation::Add(add) = op else {
            return None;
        };
        let path = add.path.as_str();
        let parent = &path[..path.rfind('/')?];
        if done.iter().any(|d| d == parent) {
            continue;
        }
        let original = doc.value.pointer(parent)?;
        let empty = matches!(original, Value::Object(m) if m.is_empty())
            || matches!(original, Value::Array(a) if a.is_empty());
        if !empty || parent.is_empty() {
            return None;
        }
        let (pos, exact) = crate::manifest::resolve(&doc.value, &doc.pos, parent);
        if !exact || pos.key_line == 0 {
            return None;
        }
        let line = lines.get_mut(pos.key_line as usize - 1)?;
        let start = line
            .char_indices()
            .nth(pos.col.saturating_sub(1) as usize)
            .map(|(i, _)| i)?;
        let token = if matches!(original, Value::Object(_)) {
            "{}"
        } else {
            "[]"
        };
        if !line[start..].starts_with(token) {
            return None;
        }
        let indent = pos.key_col.saturating_sub(1) as usize + 2;
        let block = super::insert::yaml_lines(patched.pointer(parent)?, indent)?;
        let rest = line[start + token.len()..].to_string();
        if !rest.trim().is_empty() && !rest.trim_start().starts_with('#') {
            return None;
        }
        *line = format!("{}{}\n{block}", line[..start].trim_end(), rest.trim_end());
        done.push(parent.to_string());
    }
    let out: String = lines.concat();
    let (docs, error) = parse_document_text(&out, 0);
    (error.is_none() && docs.len() == 1 && docs[0].value == *patched).then_some(out)
}
