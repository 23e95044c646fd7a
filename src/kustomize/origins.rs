//! Where each part of an overlay's output was written, so findings point at the resource file
//! or patch and line that wrote the field, as chart findings point at templates.
//!
//! kustomize says where each object came from when asked (`buildMetadata: [originAnnotations,
//! transformerAnnotations]`): the resource file it was read from, and the kustomizations whose
//! patches changed it. winguard builds the overlay through a kustomization of its own that asks
//! for both (in a scratch directory, naming the overlay by a relative path, as kustomize wants),
//! takes the two annotations out of the output, and matches each node of an object with the same
//! node in the patches that touch it (the last first) or in its resource: map entries by key,
//! list items by `name` (how strategic merge patches match containers, volumes, ports) or by
//! index, JSON 6902 operations by path. What none of them has (a field a transformer added) is
//! placed where its parent is.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use helm_engine::trace::Origins;

use crate::value::Value;
use crate::value::yaml::{PosNode, parse_stream};

use super::remote::{entries, join_lexically};

const ORIGIN: &str = "config.kubernetes.io/origin";
const TRANSFORMATIONS: &str = "alpha.config.kubernetes.io/transformations";

/// The kustomization that builds `overlay` with origin and transformer annotations, written in
/// `scratch` (a real path).
pub(super) fn wrapper(scratch: &Path, overlay: &Path) -> std::io::Result<()> {
    let to = std::fs::canonicalize(overlay)?;
    let relative = relative_path(scratch, &to);
    let text = format!(
        "resources:\n- {}\nbuildMetadata: [originAnnotations, transformerAnnotations]\n",
        serde_json::to_string(&relative.to_string_lossy()).unwrap_or_default()
    );
    std::fs::write(scratch.join("kustomization.yaml"), text)
}

/// `to` from `from`, both absolute and canonical (kustomize refuses absolute resource paths).
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let from: Vec<_> = from.components().collect();
    let to: Vec<_> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut out = PathBuf::new();
    for _ in common..from.len() {
        out.push("..");
    }
    for c in &to[common..] {
        out.push(c.as_os_str());
    }
    out
}

/// The output without winguard's two annotations, and where each part of it came from.
pub(super) fn trace(built: &str, scratch: &Path) -> (String, Origins) {
    let (docs, error) = parse_stream(built);
    if error.is_some() {
        // Not YAML: linting it reports why, at the output's lines.
        return (built.to_string(), Origins::default());
    }
    // What each document says of itself, and the lines that say it.
    let mut drop = vec![false; built.lines().count() + 2];
    let mut told = Vec::with_capacity(docs.len());
    for doc in &docs {
        told.push(Told::of(&doc.value, scratch));
        mark_annotations(built, &doc.value, &doc.pos, &mut drop);
    }
    let mut text = String::with_capacity(built.len());
    for (i, line) in built.split_inclusive('\n').enumerate() {
        if !drop[i + 1] {
            text.push_str(line);
        }
    }
    // Every file the annotations name, read once, before any is matched.
    let mut files = Files::default();
    for t in &told {
        for path in t.resource.iter().chain(&t.configured_in) {
            files.file(path);
        }
        for kustomization in &t.patched_by {
            files.patch_set(kustomization);
        }
    }
    let files = files;
    let (clean, _) = parse_stream(&text);
    let mut walk = Walk {
        files: &files,
        text: &text,
        out_lines: crate::value::text::line_starts(&text),
        marks: Vec::new(),
    };
    for (doc, told) in clean.iter().zip(&told) {
        let start = offset(&text, &walk.out_lines, doc.pos.line, doc.pos.col);
        let Some(resource) = told
            .resource
            .as_deref()
            .and_then(|p| files.resource(p, &doc.value))
        else {
            // Made by a generator: its kustomization, else nothing to point at.
            let at = told
                .configured_in
                .as_deref()
                .and_then(|k| files.id(k))
                .map(|f| (f, 0));
            walk.marks.push((start, at));
            continue;
        };
        let name = resource
            .value()
            .and_then(|v| v.pointer("/metadata/name"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let mut layers = Vec::new();
        for kustomization in &told.patched_by {
            layers.extend(files.patches(kustomization, &doc.value, name));
        }
        // The last patch wins: looked at first.
        layers.reverse();
        layers.push(resource);
        walk.node(&doc.value, &doc.pos, "", &layers, None);
    }
    let mut marks = walk.marks;
    marks.sort_by_key(|(out, _)| *out);
    let mut origins = Origins::default();
    let mut ids = HashMap::new();
    for (out, at) in marks {
        match at {
            Some((file, src)) => {
                let id = *ids.entry(file).or_insert_with(|| {
                    let f = &files.loaded[file as usize];
                    origins.add_file(Arc::from(f.shown.as_str()), Arc::clone(&f.text))
                });
                origins.push(out, src, true, Some(id));
            }
            None => origins.push(out, 0, true, None),
        }
    }
    (text, origins)
}

/// What kustomize's annotations say of one object.
#[derive(Debug, Default)]
struct Told {
    /// The resource file it was read from.
    resource: Option<PathBuf>,
    /// The kustomization of the generator that made it.
    configured_in: Option<PathBuf>,
    /// The kustomizations whose patches changed it, in order.
    patched_by: Vec<PathBuf>,
}

impl Told {
    fn of(object: &Value, scratch: &Path) -> Told {
        let annotation = |key: &str| {
            object
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(key))
                .and_then(Value::as_str)
                .map(|text| parse_stream(text).0)
        };
        let path = |v: Option<&Value>| {
            v.and_then(Value::as_str)
                .map(|p| join_lexically(scratch, p))
        };
        let mut told = Told::default();
        if let Some(docs) = annotation(ORIGIN)
            && let Some(doc) = docs.first()
        {
            told.resource = path(doc.value.get("path"));
            told.configured_in = path(doc.value.get("configuredIn"));
        }
        if let Some(docs) = annotation(TRANSFORMATIONS)
            && let Some(Value::Array(list)) = docs.first().map(|d| &d.value)
        {
            for t in list {
                let kind = t.pointer("/configuredBy/kind").and_then(Value::as_str);
                if kind.is_some_and(|k| k.starts_with("Patch"))
                    && let Some(k) = path(t.get("configuredIn"))
                    && !told.patched_by.contains(&k)
                {
                    told.patched_by.push(k);
                }
            }
        }
        told
    }
}

/// Marks the lines of winguard's annotations in `text` (and `annotations:` when it held only
/// them) to be dropped.
fn mark_annotations(text: &str, object: &Value, pos: &PosNode, drop: &mut [bool]) {
    let Some((annotations, at)) =
        child(object, pos, "metadata").and_then(|(m, p)| child(m, p, "annotations"))
    else {
        return;
    };
    let Value::Object(map) = annotations else {
        return;
    };
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = 0;
    for ((key, _), entry) in map.iter().zip(&at.children) {
        if key.as_str() != ORIGIN && key.as_str() != TRANSFORMATIONS {
            kept += 1;
            continue;
        }
        let first = entry.key_line as usize;
        let indent = entry.key_col as usize - 1;
        drop[first] = true;
        // The block scalar's lines, indented deeper than its key.
        for n in first + 1..=lines.len() {
            let line = lines[n - 1];
            let deeper = line.len() - line.trim_start().len() > indent;
            if line.trim().is_empty() || deeper {
                drop[n] = true;
            } else {
                break;
            }
        }
    }
    if kept == 0 {
        drop[at.key_line as usize] = true;
    }
}

/// The value and position of `key` in a map.
fn child<'v>(value: &'v Value, pos: &'v PosNode, key: &str) -> Option<(&'v Value, &'v PosNode)> {
    let Value::Object(map) = value else {
        return None;
    };
    map.iter()
        .zip(&pos.children)
        .find(|((k, _), _)| k.as_str() == key)
        .map(|((_, v), p)| (v, p))
}

/// A tree the output's nodes may have come from: a resource's document or a strategic merge
/// patch (`Tree`), or a JSON 6902 patch's operations.
#[derive(Clone, Copy)]
enum Layer<'f> {
    Tree {
        file: u32,
        value: &'f Value,
        pos: &'f PosNode,
    },
    Operations {
        file: u32,
        ops: &'f Value,
        pos: &'f PosNode,
    },
}

impl<'f> Layer<'f> {
    fn value(&self) -> Option<&'f Value> {
        match self {
            Layer::Tree { value, .. } => Some(value),
            Layer::Operations { .. } => None,
        }
    }
}

/// A file read for tracing: its text, line starts and documents.
struct File {
    shown: String,
    text: Arc<str>,
    lines: Vec<u32>,
    docs: Vec<crate::value::yaml::ParsedDoc>,
}

/// A patch a kustomization names: its file and, when given, the objects it targets.
struct Patch {
    file: PathBuf,
    target: Option<Target>,
}

/// A patch's `target`: a kind and a name (a regular expression, as kustomize reads it).
struct Target {
    kind: Option<String>,
    name: Option<regex::Regex>,
}

/// The files read for tracing, each once, and the patches of each kustomization.
#[derive(Default)]
struct Files {
    loaded: Vec<File>,
    by_path: HashMap<PathBuf, Option<u32>>,
    patch_sets: HashMap<PathBuf, Vec<Patch>>,
}

impl Files {
    /// Reads `path` (once); its id, unless it can't be read as YAML.
    fn file(&mut self, path: &Path) -> Option<u32> {
        if let Some(found) = self.by_path.get(path) {
            return *found;
        }
        let loaded = std::fs::read_to_string(path).ok().and_then(|text| {
            let (docs, error) = parse_stream(&text);
            error.is_none().then(|| File {
                shown: shown(path),
                lines: crate::value::text::line_starts(&text),
                text: Arc::from(text),
                docs,
            })
        });
        let id = loaded.map(|f| {
            self.loaded.push(f);
            (self.loaded.len() - 1) as u32
        });
        self.by_path.insert(path.to_path_buf(), id);
        id
    }

    fn id(&self, path: &Path) -> Option<u32> {
        self.by_path.get(path).copied().flatten()
    }

    /// Reads the patches `kustomization` names (`patches`, `patchesStrategicMerge`,
    /// `patchesJson6902`), and their files. Inline patches are not traced.
    fn patch_set(&mut self, kustomization: &Path) {
        if self.patch_sets.contains_key(kustomization) {
            return;
        }
        let dir = kustomization.parent().unwrap_or(Path::new("."));
        let mut patches = Vec::new();
        if let Some(id) = self.file(kustomization) {
            let docs = &self.loaded[id as usize].docs;
            for doc in docs {
                for pattern in ["patches/*", "patchesJson6902/*", "patchesStrategicMerge/*"] {
                    for (_, entry, _) in entries(&doc.value, &doc.pos, pattern) {
                        let (path, target) = match entry {
                            Value::String(p) if !p.contains('\n') => (p.as_ref(), None),
                            Value::Object(_) => match entry.get("path").and_then(Value::as_str) {
                                Some(p) => (p, entry.get("target").map(Target::of)),
                                None => continue,
                            },
                            _ => continue,
                        };
                        patches.push(Patch {
                            file: join_lexically(dir, path),
                            target,
                        });
                    }
                }
            }
        }
        for patch in &patches {
            self.file(&patch.file);
        }
        self.patch_sets.insert(kustomization.to_path_buf(), patches);
    }

    /// The document of resource file `path` that `object` was built from: the one of its kind,
    /// or of its kind whose name the output's name holds (a prefix or suffix added).
    fn resource(&self, path: &Path, object: &Value) -> Option<Layer<'_>> {
        let file = self.id(path)?;
        let kind = object.get("kind").and_then(Value::as_str);
        let name = object
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("");
        let docs = &self.loaded[file as usize].docs;
        let same_kind: Vec<&crate::value::yaml::ParsedDoc> = docs
            .iter()
            .filter(|d| d.value.get("kind").and_then(Value::as_str) == kind)
            .collect();
        let doc = match same_kind.as_slice() {
            [one] => Some(*one),
            many => many.iter().copied().find(|d| {
                d.value
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| name.contains(n))
            }),
        }?;
        Some(Layer::Tree {
            file,
            value: &doc.value,
            pos: &doc.pos,
        })
    }

    /// The patches of `kustomization` that apply to `object`, whose resource is named `name`.
    fn patches(&self, kustomization: &Path, object: &Value, name: &str) -> Vec<Layer<'_>> {
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        let mut layers = Vec::new();
        for patch in self.patch_sets.get(kustomization).into_iter().flatten() {
            let Some(file) = self.id(&patch.file) else {
                continue;
            };
            if patch
                .target
                .as_ref()
                .is_some_and(|t| !t.matches(kind, name))
            {
                continue;
            }
            for doc in &self.loaded[file as usize].docs {
                match &doc.value {
                    Value::Array(_) if patch.target.is_some() => layers.push(Layer::Operations {
                        file,
                        ops: &doc.value,
                        pos: &doc.pos,
                    }),
                    Value::Object(_) => {
                        // A strategic merge patch names what it patches, unless targeted.
                        let same = |field: &str, want: &str| {
                            doc.value
                                .pointer(field)
                                .and_then(Value::as_str)
                                .is_none_or(|v| v == want)
                        };
                        if patch.target.is_some()
                            || (same("/kind", kind) && same("/metadata/name", name))
                        {
                            layers.push(Layer::Tree {
                                file,
                                value: &doc.value,
                                pos: &doc.pos,
                            });
                        }
                    }
                    _ => {}
                }
            }
        }
        layers
    }
}

impl Target {
    fn of(target: &Value) -> Target {
        Target {
            kind: target
                .get("kind")
                .and_then(Value::as_str)
                .map(str::to_string),
            name: target
                .get("name")
                .and_then(Value::as_str)
                .and_then(|n| regex::Regex::new(&format!("^(?:{n})$")).ok()),
        }
    }

    fn matches(&self, kind: &str, name: &str) -> bool {
        self.kind.as_deref().is_none_or(|k| k == kind)
            && self.name.as_ref().is_none_or(|n| n.is_match(name))
    }
}

/// The path as findings show it: relative to the working directory when under it.
fn shown(path: &Path) -> String {
    std::env::current_dir()
        .ok()
        .and_then(|c| path.strip_prefix(c).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
        .display()
        .to_string()
}

/// The byte offset of a 1-based line and column (in characters) of `text`.
fn offset(text: &str, lines: &[u32], line: u32, col: u32) -> usize {
    let Some(&start) = line.checked_sub(1).and_then(|l| lines.get(l as usize)) else {
        return text.len();
    };
    let rest = &text[start as usize..];
    start as usize
        + rest
            .char_indices()
            .nth(col.saturating_sub(1) as usize)
            .map_or(rest.len(), |(i, _)| i)
}

/// A place in a traced file: its id and byte offset.
type Place = (u32, usize);

/// Matches the output's nodes with the layers', noting for each node's key and value where
/// it came from.
struct Walk<'w> {
    files: &'w Files,
    text: &'w str,
    out_lines: Vec<u32>,
    /// Output byte → where it came from (`None`: from no file).
    marks: Vec<(usize, Option<Place>)>,
}

impl Walk<'_> {
    fn place(&self, file: u32, line: u32, col: u32) -> Place {
        let f = &self.files.loaded[file as usize];
        (file, offset(&f.text, &f.lines, line, col))
    }

    fn mark(&mut self, line: u32, col: u32, at: Option<Place>) {
        if line > 0 {
            let out = offset(self.text, &self.out_lines, line, col);
            self.marks.push((out, at));
        }
    }

    fn node(
        &mut self,
        value: &Value,
        pos: &PosNode,
        pointer: &str,
        layers: &[Layer<'_>],
        parent: Option<Place>,
    ) {
        // A JSON 6902 operation that sets this very node is a layer of its own, first.
        let mut here: Vec<Layer<'_>> = Vec::new();
        for layer in layers {
            if let Layer::Operations { file, ops, pos } = layer
                && let Value::Array(items) = ops
            {
                for (op, op_pos) in items.iter().zip(&pos.children) {
                    if op.get("path").and_then(Value::as_str) == Some(pointer)
                        && let Some((v, p)) = child(op, op_pos, "value")
                    {
                        here.push(Layer::Tree {
                            file: *file,
                            value: v,
                            pos: p,
                        });
                    }
                }
            }
        }
        here.reverse();
        here.extend(layers.iter().copied());
        let place = here
            .iter()
            .find_map(|l| match l {
                Layer::Tree { file, pos, .. } => Some(self.place(*file, pos.line, pos.col)),
                Layer::Operations { .. } => None,
            })
            .or(parent);
        self.mark(pos.line, pos.col, place);
        let operations: Vec<Layer<'_>> = layers
            .iter()
            .copied()
            .filter(|l| matches!(l, Layer::Operations { .. }))
            .collect();
        match value {
            Value::Object(map) => {
                for ((key, v), p) in map.iter().zip(&pos.children) {
                    let mut below: Vec<Layer<'_>> = Vec::new();
                    let mut key_place = None;
                    for layer in &here {
                        if let Layer::Tree { file, value, pos } = layer
                            && let Some((cv, cp)) = child(value, pos, key)
                        {
                            key_place.get_or_insert(self.place(*file, cp.key_line, cp.key_col));
                            below.push(Layer::Tree {
                                file: *file,
                                value: cv,
                                pos: cp,
                            });
                        }
                    }
                    below.extend(operations.iter().copied());
                    self.mark(p.key_line, p.key_col, key_place.or(place));
                    let token = crate::value::escape_pointer_token(key);
                    self.node(v, p, &format!("{pointer}/{token}"), &below, place);
                }
            }
            Value::Array(items) => {
                for (i, (v, p)) in items.iter().zip(&pos.children).enumerate() {
                    let name = v.get("name").and_then(Value::as_str);
                    let mut below: Vec<Layer<'_>> = Vec::new();
                    for layer in &here {
                        let Layer::Tree {
                            file,
                            value: Value::Array(theirs),
                            pos: their_pos,
                        } = layer
                        else {
                            continue;
                        };
                        // Strategic merge matches list items by `name`; others by place.
                        let found = match name {
                            Some(n) => theirs
                                .iter()
                                .position(|t| t.get("name").and_then(Value::as_str) == Some(n)),
                            None => (i < theirs.len()).then_some(i),
                        };
                        if let Some(j) = found
                            && let Some(tp) = their_pos.children.get(j)
                        {
                            below.push(Layer::Tree {
                                file: *file,
                                value: &theirs[j],
                                pos: tp,
                            });
                        }
                    }
                    below.extend(operations.iter().copied());
                    self.node(v, p, &format!("{pointer}/{i}"), &below, place);
                }
            }
            _ => {}
        }
    }
}
