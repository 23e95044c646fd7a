//! Building and applying fixes as RFC 6902 JSON Patch.
//!
//! A rule's patch names only the values it sets; the missing parents (`nodeSelector: {}`,
//! `tolerations: []`) are added here, first, by trying each operation on a scratch copy. Patches
//! are `json-patch`'s operations; they are applied here (see [`apply`]).

use crate::value::{Doc, list_index};
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, MoveOperation, PatchOperation, RemoveOperation, ReplaceOperation};

use crate::expr::Activation;
use crate::rules::{Fix, PatchOpKind};
use crate::value::unescape_pointer_token;

/// What a patch under construction has done so far, so existence checks need no copy of the
/// object: a path exists if the patch added it, or if the object has it and the patch did not
/// remove it (or a parent of it).
struct Overlay<'o> {
    object: &'o Doc<'o>,
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
        self.object.pointer(path).is_some_and(|v| !v.is_null())
    }
}

/// A rendered path as a JSON pointer; `None` for text that is not one (a rule whose path
/// template renders such text offers no fix rather than a patch that cannot apply).
fn pointer(path: &str) -> Option<PointerBuf> {
    PointerBuf::parse(path).ok()
}

/// The patch of one fix against `object`, with parents created and no-ops dropped. Operations are
/// `json-patch`'s own types (a JSON map per operation would allocate a tree of its own, and this
/// runs for every finding with a fix).
pub fn build<'a>(fix: &'a Fix, act: &Activation<'a>, object: &Doc<'_>) -> Vec<PatchOperation> {
    build_checked(fix, act, object).unwrap_or_default()
}

fn build_checked<'a>(
    fix: &'a Fix,
    act: &Activation<'a>,
    object: &Doc<'_>,
) -> Option<Vec<PatchOperation>> {
    let mut overlay = Overlay {
        object,
        added: Vec::new(),
        removed: Vec::new(),
    };
    let mut ops = Vec::new();
    for op in &fix.patch {
        if op
            .when
            .as_ref()
            .is_some_and(|w| !w.test(act).unwrap_or(false))
        {
            continue;
        }
        let path = op.path.render(act);
        // `value` is always written for add and replace (`null` when the rule gives none).
        // Patches are `json-patch`'s operations, whose values are `serde_json`'s.
        let value = || {
            op.value
                .as_ref()
                .map_or(serde_json::Value::Null, |v| (&v.render(act)).into())
        };
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
                let from = op.from.as_ref().map(|f| f.render(act)).unwrap_or_default();
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
                Doc::Object(m) => m.get(unescape_pointer_token(tokens[i]).as_ref()),
                Doc::Array(a) => tokens[i].parse::<usize>().ok().and_then(|n| a.get(n)),
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
            serde_json::Value::Array(Vec::new())
        } else {
            serde_json::Value::Object(serde_json::Map::new())
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
fn adds_existing_parent(target: &Doc<'_>, op: &PatchOperation) -> bool {
    match op {
        PatchOperation::Add(AddOperation { path, value }) => {
            let empty = match value {
                serde_json::Value::Object(m) => m.is_empty(),
                serde_json::Value::Array(a) => a.is_empty(),
                _ => false,
            };
            empty && target.pointer(path.as_str()).is_some_and(|v| !v.is_null())
        }
        _ => false,
    }
}

/// Applies the patches of several findings to one object, in order. Parent-creating operations
/// (adding `{}`/`[]` where a value already exists) are skipped, so one fix's parents never wipe
/// what an earlier fix added; so are removals of what is already gone. Returns the operations
/// actually applied.
pub fn apply_all<'a>(
    target: &mut Doc<'_>,
    patches: impl IntoIterator<Item = &'a [PatchOperation]>,
) -> Vec<PatchOperation> {
    let mut applied = Vec::new();
    for patch in patches {
        for op in patch {
            if adds_existing_parent(target, op) {
                continue;
            }
            if let PatchOperation::Remove(r) = op
                && target.pointer(r.path.as_str()).is_none()
            {
                continue;
            }
            if apply(target, op).is_some() {
                applied.push(op.clone());
            }
        }
    }
    applied
}

/// Applies one RFC 6902 operation to `target`, or leaves it unchanged and returns `None` when the
/// operation does not apply (a missing path, an index out of range, a failed `test`).
///
/// By hand, not with `json-patch` (whose types the patches are): that crate applies operations to
/// `serde_json`'s values only, and converting the object there and back would copy it whole
/// twice per `/mutate` review. A test checks this against `json-patch` operation by operation.
pub fn apply(target: &mut Doc<'_>, op: &PatchOperation) -> Option<()> {
    match op {
        PatchOperation::Add(o) => add(target, &o.path, Doc::from(o.value.clone())),
        PatchOperation::Remove(o) => remove(target, &o.path).map(drop),
        PatchOperation::Replace(o) => {
            let slot = target.pointer_mut(o.path.as_str())?;
            *slot = Doc::from(o.value.clone());
            Some(())
        }
        PatchOperation::Move(o) => {
            if o.from == o.path {
                return target.pointer(o.from.as_str()).map(drop);
            }
            // A value cannot move into itself.
            if o.path
                .as_str()
                .starts_with(&format!("{}/", o.from.as_str()))
            {
                return None;
            }
            let mut scratch = target.clone();
            let value = remove(&mut scratch, &o.from)?;
            add(&mut scratch, &o.path, value)?;
            *target = scratch;
            Some(())
        }
        PatchOperation::Copy(o) => {
            let value = target.pointer(o.from.as_str())?.clone();
            add(target, &o.path, value)
        }
        PatchOperation::Test(o) => {
            (target.pointer(o.path.as_str())? == &Doc::from(o.value.clone())).then_some(())
        }
    }
}

/// The parent of `path` in `target` and the last token, decoded; `None` for the root or a
/// missing parent.
fn parent_of<'t, 'd>(
    target: &'t mut Doc<'d>,
    path: &json_patch::jsonptr::Pointer,
) -> Option<(&'t mut Doc<'d>, String)> {
    let (parent, last) = path.split_back()?;
    Some((
        target.pointer_mut(parent.as_str())?,
        last.decoded().into_owned(),
    ))
}

fn add<'d>(
    target: &mut Doc<'d>,
    path: &json_patch::jsonptr::Pointer,
    value: Doc<'d>,
) -> Option<()> {
    if path.is_root() {
        *target = value;
        return Some(());
    }
    let (parent, last) = parent_of(target, path)?;
    match parent {
        Doc::Object(m) => {
            m.insert(last, value);
        }
        Doc::Array(a) => {
            let i = if last == "-" {
                a.len()
            } else {
                list_index(&last)?
            };
            if i > a.len() {
                return None;
            }
            a.insert(i, value);
        }
        _ => return None,
    }
    Some(())
}

fn remove<'d>(target: &mut Doc<'d>, path: &json_patch::jsonptr::Pointer) -> Option<Doc<'d>> {
    let (parent, last) = parent_of(target, path)?;
    match parent {
        Doc::Object(m) => m.remove(&last),
        Doc::Array(a) => {
            let i = list_index(&last)?;
            (i < a.len()).then(|| a.remove(i))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every operation, on a document where it applies and where it does not: the same result
    /// as `json-patch` on `serde_json`'s value, and an unchanged document when it fails.
    #[test]
    fn applies_operations_as_json_patch_does() {
        let doc = serde_json::json!({
            "a": {"b": [1, 2, 3], "c~d": {"e/f": "x"}},
            "list": [{"k": 1}, {"k": 2}],
            "n": null
        });
        let ops = serde_json::json!([
            {"op": "add", "path": "/a/new", "value": {"x": 1}},
            {"op": "add", "path": "/a/b/0", "value": 0},
            {"op": "add", "path": "/a/b/-", "value": 9},
            {"op": "add", "path": "/a/b/3", "value": "end"},
            {"op": "add", "path": "/a/b/4", "value": "past"},
            {"op": "add", "path": "/a/b/01", "value": "lead"},
            {"op": "add", "path": "/missing/x", "value": 1},
            {"op": "add", "path": "/a/c~0d/e~1f", "value": "y"},
            {"op": "add", "path": "", "value": [1]},
            {"op": "add", "path": "/n/x", "value": 1},
            {"op": "remove", "path": "/a/b/1"},
            {"op": "remove", "path": "/a/b/3"},
            {"op": "remove", "path": "/a/c~0d"},
            {"op": "remove", "path": "/nope"},
            {"op": "replace", "path": "/list/1/k", "value": 5},
            {"op": "replace", "path": "/list/2", "value": 5},
            {"op": "replace", "path": "", "value": {"all": true}},
            {"op": "move", "from": "/list/0", "path": "/moved"},
            {"op": "move", "from": "/a", "path": "/a/b/-"},
            {"op": "move", "from": "/a", "path": "/a"},
            {"op": "move", "from": "/nope", "path": "/x"},
            {"op": "copy", "from": "/a/b", "path": "/copied"},
            {"op": "copy", "from": "/a/b/7", "path": "/copied"},
            {"op": "test", "path": "/a/b", "value": [1, 2, 3]},
            {"op": "test", "path": "/a/b", "value": [1, 2]},
            {"op": "test", "path": "/nope", "value": null}
        ]);
        let ops: Vec<PatchOperation> = serde_json::from_value(ops).unwrap();
        for op in &ops {
            let mut theirs = doc.clone();
            let their_result = json_patch::patch(&mut theirs, std::slice::from_ref(op));
            let mut ours = Doc::from(doc.clone());
            let our_result = apply(&mut ours, op);
            assert_eq!(our_result.is_some(), their_result.is_ok(), "{op:?}");
            assert_eq!(serde_json::Value::from(&ours), theirs, "{op:?}");
        }
    }
}
