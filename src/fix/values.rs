//! `winguard fix CHART`: a fix whose change falls inside what a template action printed from a
//! chart value (`nodeSelector: {{- toYaml .Values.nodeSelector | nindent 8 }}`) is written into
//! the values file that sets that value; one that falls in a template's own text is a change to
//! that template, which is described (templates are not rewritten).

use std::collections::BTreeMap;
use std::sync::Arc;

use json_patch::PatchOperation;

use super::{FixOptions, FixedFinding};
use crate::manifest::{Object, SourceText};
use crate::report::Report;
use crate::rules::Applicability;
use crate::value::Value;
use crate::value::document::read_documents;

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
    let mut files = ValuesFiles::default();
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
            match place(object, op, &mut files) {
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
            Ok(after) => out.edits.push(ValuesEdit {
                file,
                before,
                after,
                fixed,
            }),
            Err(why) => out.not_expressible.push(format!(
                "{file}: the fixes' values can't be written into it in place ({}): {why}",
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
fn place(object: &Object, op: &PatchOperation, files: &mut ValuesFiles) -> Place {
    let add = match op {
        PatchOperation::Add(add) => add,
        PatchOperation::Replace(r) => {
            return match values_pointer_of(object, r.path.as_str(), files) {
                Ok((file, pointer)) => values_op(file, &pointer, |path| {
                    PatchOperation::Replace(json_patch::ReplaceOperation {
                        path,
                        value: r.value.clone(),
                    })
                }),
                Err(place) => place,
            };
        }
        // A key renamed in its map (`beta.kubernetes.io/os` to `kubernetes.io/os`).
        PatchOperation::Move(m) => {
            let (from, to) = (m.from.as_str(), m.path.as_str());
            let key = match (from.rsplit_once('/'), to.rsplit_once('/')) {
                (Some((from_parent, _)), Some((to_parent, key))) if from_parent == to_parent => key,
                _ => {
                    return Place::Nowhere(
                        "only a key renamed in its map is traced into values".into(),
                    );
                }
            };
            return match values_pointer_of(object, from, files) {
                Ok((file, pointer)) => {
                    let parent = pointer.rsplit_once('/').map_or("", |(p, _)| p);
                    let Ok(to) = format!("{parent}/{key}").parse() else {
                        return Place::Nowhere(format!("`{parent}/{key}` is not a JSON pointer"));
                    };
                    values_op(file, &pointer, |from| {
                        PatchOperation::Move(json_patch::MoveOperation { from, path: to })
                    })
                }
                Err(place) => place,
            };
        }
        _ => {
            return Place::Nowhere(
                "only additions, replacements and key renames are traced into values".into(),
            );
        }
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
                let key = crate::value::unescape_pointer_token(t).into_owned();
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
                Some(t) => format!("add `{}: {value}`", crate::value::unescape_pointer_token(t)),
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
                let key = crate::value::unescape_pointer_token(key);
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
        let (file, base) = match values_file(site) {
            Ok(place) => place,
            Err(place) => return place,
        };
        let values_path = base + &tokens.get(k).map(|t| format!("/{t}")).unwrap_or_default();
        return values_op(file.clone(), &values_path, |path| {
            PatchOperation::Add(json_patch::AddOperation { path, value })
        });
    }
    Place::Nowhere("nothing of its path was rendered".into())
}

/// The values file that sets the value `site` and the value's JSON pointer in it, or why a fix
/// can't go into one.
fn values_file(site: &helm_engine::trace::ValueSite) -> Result<(&String, String), Place> {
    let file = site.file.as_ref().ok_or_else(|| {
        Place::Nowhere(match &site.flag {
            Some(flag) => format!("the value `{}` is set by `{flag}`", site.path),
            None => format!("the value `{}` is set in no values file", site.path),
        })
    })?;
    let pointer = helm_engine::values_path::path_pointer(&site.path)
        .ok_or_else(|| Place::Nowhere(format!("`{}` is not a values path", site.path)))?;
    Ok((file, pointer))
}

/// A values file's text as its one YAML document, or `None` (more documents, or an error).
fn one_document(text: &str) -> Option<crate::value::yaml::ParsedDoc> {
    let (mut docs, error) = read_documents(text, 0);
    (error.is_none() && docs.len() == 1).then(|| docs.remove(0))
}

/// The values files fixes look into, parsed once each.
#[derive(Default)]
struct ValuesFiles(std::collections::HashMap<String, Option<Value>>);

impl ValuesFiles {
    fn value(&mut self, file: &str) -> Option<&Value> {
        self.0
            .entry(file.to_string())
            .or_insert_with(|| {
                let text = std::fs::read_to_string(file).ok()?;
                one_document(&text).map(|doc| doc.value)
            })
            .as_ref()
    }
}

/// Where the existing field at `pointer` of the rendered `object` is set in a values file: the
/// value the action that printed it came from, and, within that value, the same place (the
/// nearest enclosing field whose rendered value is the value as the file has it, and the rest of
/// the pointer from there).
fn values_pointer_of(
    object: &Object,
    pointer: &str,
    files: &mut ValuesFiles,
) -> Result<(String, String), Place> {
    let pos = object.value_position(pointer);
    let origin = object
        .source
        .origin_at(object.stream_line(pos.line), pos.column)
        .ok_or_else(|| Place::Nowhere("the rendered text it changes has no template".into()))?;
    let site = match (&origin.value, origin.verbatim) {
        (Some(site), false) => site,
        _ => {
            return Err(Place::Template(format!(
                "{}:{}: change it there",
                object.source.template_file(&origin.file),
                origin.line
            )));
        }
    };
    let (file, base) = values_file(site)?;
    let in_file = files
        .value(file)
        .and_then(|v| v.pointer(&base))
        .cloned()
        .ok_or_else(|| Place::Nowhere(format!("`{file}` does not read as one YAML document")))?;
    let tokens: Vec<&str> = pointer.split('/').skip(1).collect();
    for k in (0..=tokens.len()).rev() {
        let ancestor: String = tokens[..k].iter().map(|t| format!("/{t}")).collect();
        if object.value.pointer(&ancestor) == Some(&in_file) {
            let rest: String = tokens[k..].iter().map(|t| format!("/{t}")).collect();
            return Ok((file.clone(), format!("{base}{rest}")));
        }
    }
    Err(Place::Nowhere(format!(
        "`{}` in {file} is not what was rendered (a function or `tpl` made the rendered value from it)",
        site.path
    )))
}

/// One operation, made by `op` from the values pointer `pointer`, against `file`.
fn values_op(
    file: String,
    pointer: &str,
    op: impl FnOnce(json_patch::jsonptr::PointerBuf) -> PatchOperation,
) -> Place {
    match pointer.parse() {
        Ok(path) => Place::Values(file, vec![op(path)]),
        Err(_) => Place::Nowhere(format!("`{pointer}` is not a JSON pointer")),
    }
}

/// Additions that fill the empty value `site` (a map or a list a `with` skipped) with the entries
/// or items of `value`, the field the rendered object lacks.
fn into_empty_value(site: &helm_engine::trace::ValueSite, value: &serde_json::Value) -> Place {
    let (file, base) = match values_file(site) {
        Ok(place) => place,
        Err(place) => return place,
    };
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
            .map(|(k, v)| add(crate::value::escape_pointer_token(k).into_owned(), v))
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

/// `text` (a values file, which Helm reads as YAML 1.1) with `ops` written in, keeping every
/// other line as it is ([`super::edit`]).
fn write_into(text: &str, ops: &[PatchOperation]) -> Result<String, super::edit::Refusal> {
    super::edit::apply(text, ops, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(json: serde_json::Value) -> PatchOperation {
        serde_json::from_value(json).unwrap()
    }

    /// A replaced scalar and a renamed key are written over their own text: quoting elsewhere,
    /// comments and layout stay.
    #[test]
    fn replacements_and_renames_edit_their_lines_only() {
        let text = "# top\na:\n  b: 'x' # keep\n  \"c.d\": y   # and this\n  f: [1, 2]\n";
        let out = write_into(
            text,
            &[
                op(serde_json::json!({"op": "replace", "path": "/a/b", "value": "z z"})),
                op(serde_json::json!({"op": "move", "from": "/a/c.d", "path": "/a/e"})),
                op(serde_json::json!({"op": "add", "path": "/a/g", "value": "new"})),
            ],
        )
        .unwrap();
        assert_eq!(
            out,
            "# top\na:\n  b: z z # keep\n  e: y   # and this\n  f: [1, 2]\n  g: new\n"
        );
        // A value that needs quoting is quoted; a collection goes under its key in block style.
        let quoted = write_into(
            "k: 1\n",
            &[op(
                serde_json::json!({"op": "replace", "path": "/k", "value": "yes"}),
            )],
        )
        .unwrap();
        assert_eq!(quoted, "k: \"yes\"\n");
        let block = write_into(
            "k: 1 # c\n",
            &[op(
                serde_json::json!({"op": "replace", "path": "/k", "value": {"a": 1}}),
            )],
        )
        .unwrap();
        assert_eq!(block, "k:\n  a: 1 # c\n");
    }
}
