//! Building and applying fixes as RFC 6902 JSON Patch.
//!
//! A rule's patch names only the values it sets; the missing parents (`nodeSelector: {}`,
//! `tolerations: []`) are added here, first, by trying each operation on a scratch copy. Applying
//! uses the `json-patch` crate.

use crate::manifest::Pointer;
use serde_json::{Value, json};

use super::expr::Env;
use crate::manifest::unescape_pointer_token;
use crate::rules::{Fix, PatchOpKind};

/// What a patch under construction has done so far, so existence checks need no copy of the
/// object: a path exists if the patch added it, or if the object has it and the patch did not
/// remove it (or a parent of it).
struct Overlay<'o> {
    object: &'o Value,
    added: Vec<String>,
    removed: Vec<String>,
}

impl Overlay<'_> {
    fn exists(&self, path: &str) -> bool {
        if self.added.iter().any(|a| a == path) {
            return true;
        }
        let under = |p: &String| path == p || path.starts_with(&format!("{p}/"));
        if self.removed.iter().any(under) {
            return false;
        }
        self.object.ptr(path).is_some_and(|v| !v.is_null())
    }
}

/// One RFC 6902 operation as a JSON map, built directly (`json!` serialises each field anew, and
/// this runs for every finding with a fix).
fn operation(op: &str, path: &str, from: Option<&str>, value: Option<Value>) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("op".into(), Value::String(op.to_string()));
    m.insert("path".into(), Value::String(path.to_string()));
    if let Some(from) = from {
        m.insert("from".into(), Value::String(from.to_string()));
    }
    if let Some(value) = value {
        m.insert("value".into(), value);
    }
    Value::Object(m)
}

/// The patch of one fix against `object`, with parents created and no-ops dropped.
pub fn build(fix: &Fix, env: &Env<'_>, object: &Value) -> Vec<Value> {
    let mut overlay = Overlay {
        object,
        added: Vec::new(),
        removed: Vec::new(),
    };
    let mut ops = Vec::new();
    for op in &fix.patch {
        if op.when.as_ref().is_some_and(|w| !w.test(env)) {
            continue;
        }
        let path = op.path.render(env);
        let value = || op.value.as_ref().map(|v| v.render(env));
        match op.op {
            // `value` is always written for add and replace (`null` when the rule gives none).
            PatchOpKind::Add => {
                add_parents(&mut overlay, &path, &mut ops);
                let value = value().unwrap_or(Value::Null);
                ops.push(operation("add", &path, None, Some(value)));
                overlay.added.push(path);
            }
            PatchOpKind::Replace if overlay.exists(&path) => {
                let value = value().unwrap_or(Value::Null);
                ops.push(operation("replace", &path, None, Some(value)));
            }
            PatchOpKind::Replace => {
                add_parents(&mut overlay, &path, &mut ops);
                let value = value().unwrap_or(Value::Null);
                ops.push(operation("add", &path, None, Some(value)));
                overlay.added.push(path);
            }
            PatchOpKind::Remove if overlay.exists(&path) => {
                ops.push(operation("remove", &path, None, None));
                overlay.removed.push(path);
            }
            PatchOpKind::Remove => {}
            PatchOpKind::Move => {
                let from = op.from.as_ref().map(|f| f.render(env)).unwrap_or_default();
                if !overlay.exists(&from) {
                    continue;
                }
                add_parents(&mut overlay, &path, &mut ops);
                ops.push(operation("move", &path, Some(&from), None));
                overlay.removed.push(from);
                overlay.added.push(path);
            }
        }
    }
    ops
}

/// Adds every missing (or null) parent of `path`, recording the operations.
fn add_parents(overlay: &mut Overlay<'_>, path: &str, ops: &mut Vec<Value>) {
    let tokens: smallvec::SmallVec<[&str; 8]> = path.split('/').skip(1).collect();
    let mut prefix = String::with_capacity(path.len());
    // While the patch has added or removed nothing, a parent exists exactly when the object has
    // it, so the object is walked once, down the path, instead of from its root per parent.
    let plain = overlay.added.is_empty() && overlay.removed.is_empty();
    let mut cursor = Some(overlay.object);
    for i in 0..tokens.len().saturating_sub(1) {
        prefix.push('/');
        prefix.push_str(tokens[i]);
        let exists = if plain {
            cursor = cursor.and_then(|v| match v {
                Value::Object(m) => m.get(unescape_pointer_token(tokens[i]).as_ref()),
                Value::Array(a) => tokens[i].parse::<usize>().ok().and_then(|n| a.get(n)),
                _ => None,
            });
            cursor.is_some_and(|v| !v.is_null())
        } else {
            overlay.exists(&prefix)
        };
        if exists {
            continue;
        }
        let next = unescape_pointer_token(tokens[i + 1]);
        let empty = if next == "-" || next.parse::<usize>().is_ok() {
            Value::Array(Vec::new())
        } else {
            Value::Object(serde_json::Map::new())
        };
        ops.push(operation("add", &prefix, None, Some(empty)));
        overlay.added.push(prefix.clone());
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
                    .and_then(|p| target.ptr(p))
                    .is_some_and(|v| !v.is_null());
            if is_parent {
                continue;
            }
            if op["op"] == "remove" && op["path"].as_str().and_then(|p| target.ptr(p)).is_none() {
                continue;
            }
            if apply_one(target, op).is_ok() {
                applied.push(op.clone());
            }
        }
    }
    applied
}
