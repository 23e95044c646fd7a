//! Building and applying fixes as RFC 6902 JSON Patch.
//!
//! A rule's patch names only the values it sets; the missing parents (`nodeSelector: {}`,
//! `tolerations: []`) are added here, first, by trying each operation on a scratch copy. Applying
//! uses the `json-patch` crate.

use crate::manifest::Pointer;
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, MoveOperation, PatchOperation, RemoveOperation, ReplaceOperation};
use serde_json::Value;

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

/// A rendered path as a JSON pointer; `None` for text that is not one (a rule whose path
/// template renders such text offers no fix rather than a patch that cannot apply).
fn pointer(path: &str) -> Option<PointerBuf> {
    PointerBuf::parse(path).ok()
}

/// The patch of one fix against `object`, with parents created and no-ops dropped. Operations are
/// `json-patch`'s own types (a JSON map per operation took ten times the memory, and this runs
/// for every finding with a fix).
pub fn build(fix: &Fix, env: &Env<'_>, object: &Value) -> Vec<PatchOperation> {
    build_checked(fix, env, object).unwrap_or_default()
}

fn build_checked(fix: &Fix, env: &Env<'_>, object: &Value) -> Option<Vec<PatchOperation>> {
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
        // `value` is always written for add and replace (`null` when the rule gives none).
        let value = || op.value.as_ref().map_or(Value::Null, |v| v.render(env));
        let add = |overlay: &mut Overlay<'_>, ops: &mut Vec<PatchOperation>, path: String| {
            add_parents(overlay, &path, ops)?;
            ops.push(PatchOperation::Add(AddOperation {
                path: pointer(&path)?,
                value: value(),
            }));
            overlay.added.push(path);
            Some(())
        };
        match op.op {
            PatchOpKind::Add => add(&mut overlay, &mut ops, path)?,
            PatchOpKind::Replace if overlay.exists(&path) => {
                ops.push(PatchOperation::Replace(ReplaceOperation {
                    path: pointer(&path)?,
                    value: value(),
                }));
            }
            PatchOpKind::Replace => add(&mut overlay, &mut ops, path)?,
            PatchOpKind::Remove if overlay.exists(&path) => {
                ops.push(PatchOperation::Remove(RemoveOperation {
                    path: pointer(&path)?,
                }));
                overlay.removed.push(path);
            }
            PatchOpKind::Remove => {}
            PatchOpKind::Move => {
                let from = op.from.as_ref().map(|f| f.render(env)).unwrap_or_default();
                if !overlay.exists(&from) {
                    continue;
                }
                add_parents(&mut overlay, &path, &mut ops)?;
                ops.push(PatchOperation::Move(MoveOperation {
                    from: pointer(&from)?,
                    path: pointer(&path)?,
                }));
                overlay.removed.push(from);
                overlay.added.push(path);
            }
        }
    }
    Some(ops)
}

/// Adds every missing (or null) parent of `path`, recording the operations.
fn add_parents(overlay: &mut Overlay<'_>, path: &str, ops: &mut Vec<PatchOperation>) -> Option<()> {
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
        ops.push(PatchOperation::Add(AddOperation {
            path: pointer(&prefix)?,
            value: empty,
        }));
        overlay.added.push(prefix.clone());
    }
    Some(())
}

/// Whether `op` adds an empty map or list where `target` already has a value: a parent one fix
/// creates that an earlier fix (or the object) already has.
fn adds_existing_parent(target: &Value, op: &PatchOperation) -> bool {
    match op {
        PatchOperation::Add(AddOperation { path, value }) => {
            let empty = match value {
                Value::Object(m) => m.is_empty(),
                Value::Array(a) => a.is_empty(),
                _ => false,
            };
            empty && target.ptr(path.as_str()).is_some_and(|v| !v.is_null())
        }
        _ => false,
    }
}

/// Applies the patches of several findings to one object, in order. Parent-creating operations
/// (adding `{}`/`[]` where a value already exists) are skipped, so one fix's parents never wipe
/// what an earlier fix added; so are removals of what is already gone. Returns the operations
/// actually applied.
pub fn apply_all<'a>(
    target: &mut Value,
    patches: impl IntoIterator<Item = &'a [PatchOperation]>,
) -> Vec<PatchOperation> {
    let mut applied = Vec::new();
    for patch in patches {
        for op in patch {
            if adds_existing_parent(target, op) {
                continue;
            }
            if let PatchOperation::Remove(r) = op
                && target.ptr(r.path.as_str()).is_none()
            {
                continue;
            }
            if json_patch::patch(target, std::slice::from_ref(op)).is_ok() {
                applied.push(op.clone());
            }
        }
    }
    applied
}
