//! Building and applying fixes as RFC 6902 JSON Patch.
//!
//! A rule's patch names only the values it sets; the missing parents (`nodeSelector: {}`,
//! `tolerations: []`) are added here, first, by trying each operation on a scratch copy. Applying
//! uses the `json-patch` crate.

use serde_json::{Value, json};

use super::expr::Env;
use crate::manifest::unescape_pointer_token;
use crate::rules::{Fix, PatchOpKind};

/// The patch of one fix against `object`, with parents created and no-ops dropped.
pub fn build(fix: &Fix, env: &Env<'_>, object: &Value) -> Vec<Value> {
    let mut scratch = object.clone();
    let mut ops = Vec::new();
    for op in &fix.patch {
        if op.when.as_ref().is_some_and(|w| !w.test(env)) {
            continue;
        }
        let path = op.path.render(env);
        let op_value = match op.op {
            PatchOpKind::Add => {
                add_parents(&mut scratch, &path, &mut ops);
                json!({"op": "add", "path": path, "value": op.value.as_ref().map(|v| v.render(env))})
            }
            PatchOpKind::Replace if scratch.pointer(&path).is_some() => {
                json!({"op": "replace", "path": path, "value": op.value.as_ref().map(|v| v.render(env))})
            }
            PatchOpKind::Replace => {
                add_parents(&mut scratch, &path, &mut ops);
                json!({"op": "add", "path": path, "value": op.value.as_ref().map(|v| v.render(env))})
            }
            PatchOpKind::Remove if scratch.pointer(&path).is_some() => {
                json!({"op": "remove", "path": path})
            }
            PatchOpKind::Remove => continue,
            PatchOpKind::Move => {
                let from = op.from.as_ref().map(|f| f.render(env)).unwrap_or_default();
                if scratch.pointer(&from).is_none() {
                    continue;
                }
                add_parents(&mut scratch, &path, &mut ops);
                json!({"op": "move", "from": from, "path": path})
            }
        };
        if apply_one(&mut scratch, &op_value).is_ok() {
            ops.push(op_value);
        }
    }
    ops
}

/// Adds every missing (or null) parent of `path` to `scratch`, recording the operations.
fn add_parents(scratch: &mut Value, path: &str, ops: &mut Vec<Value>) {
    let tokens: Vec<&str> = path.split('/').skip(1).collect();
    for i in 1..tokens.len() {
        let prefix: String = tokens[..i].iter().map(|t| format!("/{t}")).collect();
        if scratch.pointer(&prefix).is_some_and(|v| !v.is_null()) {
            continue;
        }
        let next = unescape_pointer_token(tokens[i]);
        let empty = if next == "-" || next.parse::<usize>().is_ok() {
            json!([])
        } else {
            json!({})
        };
        let op = json!({"op": "add", "path": prefix, "value": empty});
        if apply_one(scratch, &op).is_ok() {
            ops.push(op);
        } else {
            return;
        }
    }
}

/// Applies one operation.
pub fn apply_one(target: &mut Value, op: &Value) -> Result<(), String> {
    let patch: json_patch::Patch =
        serde_json::from_value(json!([op])).map_err(|e| e.to_string())?;
    json_patch::patch(target, &patch).map_err(|e| e.to_string())
}

/// Applies the patches of several findings to one object, in order. Parent-creating operations
/// (adding `{}`/`[]` where a value already exists) are skipped, so one fix's parents never wipe
/// what an earlier fix added. Returns the operations actually applied.
pub fn apply_all<'a>(
    target: &mut Value,
    patches: impl IntoIterator<Item = &'a [Value]>,
) -> Vec<Value> {
    let mut applied = Vec::new();
    for patch in patches {
        for op in patch {
            let is_parent = op["op"] == "add"
                && (op["value"] == json!({}) || op["value"] == json!([]))
                && op["path"]
                    .as_str()
                    .and_then(|p| target.pointer(p))
                    .is_some_and(|v| !v.is_null());
            if is_parent {
                continue;
            }
            if op["op"] == "remove"
                && op["path"]
                    .as_str()
                    .and_then(|p| target.pointer(p))
                    .is_none()
            {
                continue;
            }
            if apply_one(target, op).is_ok() {
                applied.push(op.clone());
            }
        }
    }
    applied
}
