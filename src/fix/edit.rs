//! JSON Patch operations written into a YAML (or JSON) document's own text.
//!
//! A fix must change what it fixes and nothing else: comments, quoting, flow or block style, key
//! order, line endings and every untouched scalar's spelling stay as the user wrote them. No YAML
//! crate edits a document in place while keeping its layout (serde's YAML crates write a whole
//! document anew, and drop comments and quotes with it), so the edits are made here, by hand, on
//! byte ranges taken from `saphyr-parser`'s events: an added entry is new lines under its parent
//! (or `, key: value` inside a flow collection), a removed one loses its own lines (or its
//! stretch of the flow text), a replaced value is written over its own text, a renamed key over
//! the key.
//!
//! Nothing is trusted: the edited text is read again by the manifest reader and by a go-yaml v2
//! reader (what the API server's `sigs.k8s.io/yaml` and Helm read with, where `yes`, `on` and `y`
//! are booleans), and is used only if each reads it as exactly what the patch makes of the
//! original. Otherwise the fix is refused, with the reason.

use json_patch::PatchOperation;
use saphyr_parser::{Event, Parser, ScalarStyle};

use crate::value::Value;
use crate::value::unescape_pointer_token;
use crate::value::yaml::{parse_stream, parse_stream_go_yaml_v2};

/// Why a fix could not be written into the text.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub(crate) enum Refusal {
    #[error("the document could not be read for editing: {0}")]
    Unreadable(String),
    #[error("`{0}` is not in the document as written (behind an alias, or past its end)")]
    NotFound(String),
    #[error(
        "`{0}` is written in a form winguard does not edit (an anchor, a tag or a complex key)"
    )]
    Unsupported(String),
    #[error("the edited text would not read back as the fixed object")]
    ReadsOtherwise,
    #[error("the edited text would read otherwise to a YAML 1.1 reader (the API server's, Helm's)")]
    ReadsOtherwiseYaml11,
}

/// `text` (one YAML document, possibly with `---` and comments around it) with `ops` written
/// in. `json` keeps a JSON file JSON: every string written quoted, in flow style.
pub(crate) fn apply(text: &str, ops: &[PatchOperation], json: bool) -> Result<String, Refusal> {
    // A byte order mark is no part of the document: kept aside, so columns count from the
    // line's start.
    if let Some(rest) = text.strip_prefix('\u{feff}') {
        return apply(rest, ops, json).map(|edited| format!("\u{feff}{edited}"));
    }
    let original = read(text, parse_stream)?;
    let original_v2 = read(text, parse_stream_go_yaml_v2)?;
    let mut expected = original.clone();
    let mut expected_v2 = original_v2;
    for op in ops {
        crate::engine::patch::apply(&mut expected, op)
            .ok_or_else(|| Refusal::NotFound(op_path(op).to_string()))?;
        // (`y: 1` has the key `true` to a YAML 1.1 reader: the path may not be there.)
        crate::engine::patch::apply(&mut expected_v2, op).ok_or(Refusal::ReadsOtherwiseYaml11)?;
    }
    // New lines end as most of the document's lines do.
    let crlf = text.matches("\r\n").count();
    let eol = if crlf * 2 > text.matches('\n').count() {
        "\r\n"
    } else {
        "\n"
    };
    let style = Style {
        eol,
        json,
        sequence_offset: Tree::parse(text)?.sequence_offset(text).unwrap_or(2),
    };
    let mut out = text.to_string();
    // Map entries an earlier `add` wrote whole, as the patch leaves them in the end: what later
    // operations do inside them is written already.
    let mut written: Vec<Vec<String>> = Vec::new();
    for op in ops {
        let path = tokens(op_path(op));
        if written
            .iter()
            .any(|w| path.len() > w.len() && path.starts_with(w))
        {
            continue;
        }
        let tree = Tree::parse(&out)?;
        out = match op {
            PatchOperation::Add(add) => {
                let into_map = path
                    .split_last()
                    .and_then(|(_, parent)| lookup(&expected, parent))
                    .is_some_and(Value::is_object);
                // A list item is written as added: a later operation may add another at the
                // same place (`/-`), and the final list holds both.
                let value = match lookup(&expected, &path) {
                    Some(last) if into_map => last.clone(),
                    _ => Value::from(add.value.clone()),
                };
                let edited = tree.add(&out, &path, &value, style)?;
                if into_map {
                    written.push(path);
                }
                edited
            }
            PatchOperation::Remove(_) => tree.remove(&out, &path, style)?,
            PatchOperation::Replace(r) => {
                tree.replace(&out, &path, &Value::from(r.value.clone()), style)?
            }
            PatchOperation::Move(m) => {
                let from = tokens(m.from.as_str());
                match tree.rename(&out, &from, &path, style)? {
                    Some(renamed) => renamed,
                    None => {
                        let value = tree.value_at(&out, &from)?;
                        let removed = tree.remove(&out, &from, style)?;
                        Tree::parse(&removed)?.add(&removed, &path, &value, style)?
                    }
                }
            }
            PatchOperation::Copy(c) => {
                let value = tree.value_at(&out, &tokens(c.from.as_str()))?;
                tree.add(&out, &path, &value, style)?
            }
            PatchOperation::Test(_) => continue,
        };
    }
    if read(&out, parse_stream)? != expected {
        return Err(Refusal::ReadsOtherwise);
    }
    if read(&out, parse_stream_go_yaml_v2)? != expected_v2 {
        return Err(Refusal::ReadsOtherwiseYaml11);
    }
    Ok(out)
}

type Reader = fn(
    &str,
) -> (
    Vec<crate::value::yaml::ParsedDoc>,
    Option<crate::value::yaml::YamlError>,
);

/// The one document of `text` as `reader` reads it.
fn read(text: &str, reader: Reader) -> Result<Value, Refusal> {
    match reader(text) {
        (mut docs, None) if docs.len() == 1 => Ok(docs.remove(0).value),
        (_, Some(e)) => Err(Refusal::Unreadable(format!(
            "{}:{}: {}",
            e.line, e.col, e.message
        ))),
        (docs, None) => Err(Refusal::Unreadable(format!(
            "{} documents, not one",
            docs.len()
        ))),
    }
}

fn op_path(op: &PatchOperation) -> &str {
    op.path().as_str()
}

fn tokens(pointer: &str) -> Vec<String> {
    pointer
        .split('/')
        .skip(1)
        .map(|t| unescape_pointer_token(t).into_owned())
        .collect()
}

fn lookup<'v>(value: &'v Value, tokens: &[String]) -> Option<&'v Value> {
    tokens.iter().try_fold(value, |v, t| match v {
        Value::Object(map) => map.get(t.as_str()),
        Value::Array(items) => items.get(t.parse::<usize>().ok()?),
        _ => None,
    })
}

/// How new text is written: the document's line ending, and JSON or YAML.
#[derive(Clone, Copy)]
struct Style {
    eol: &'static str,
    json: bool,
    /// How far a block sequence's dashes stand right of its key: as the document writes them
    /// (`key:\n- a` or `key:\n  - a`), else 2.
    sequence_offset: usize,
}

/// A node of the document as written: the bytes its value spans and its shape.
#[derive(Debug)]
struct Node {
    /// Byte range of the value's text: a scalar with its quotes (a block scalar from its `|` or
    /// `>` to the end of its last line), a flow collection with its brackets, a block collection
    /// from its first key or item to the end of its last value.
    start: usize,
    end: usize,
    flow: bool,
    shape: Shape,
}

#[derive(Debug)]
enum Shape {
    Scalar,
    /// An alias, or a node with an anchor or tag: not edited (its text stands for more than
    /// this place).
    Opaque,
    Map(Vec<Entry>),
    Seq(Vec<Node>),
}

#[derive(Debug)]
struct Entry {
    key: String,
    key_start: usize,
    key_end: usize,
    value: Node,
}

/// The parsed document: its root node.
struct Tree {
    root: Node,
}

/// A collection being read.
struct Open {
    start: usize,
    flow: bool,
    /// Anchored or tagged.
    opaque: bool,
    body: Body,
}

enum Body {
    Map {
        entries: Vec<Entry>,
        /// The key read, waiting for its value.
        key: Option<(String, usize, usize)>,
    },
    Seq(Vec<Node>),
}

impl Open {
    /// A collection whose start event spans `start..end`: its bracket in flow style, nothing
    /// in block style (where it starts at its first key or item, which may be a `{`).
    fn new(start: usize, end: usize, anchor: usize, tagged: bool, body: Body) -> Open {
        Open {
            start,
            flow: end > start,
            opaque: anchor != 0 || tagged,
            body,
        }
    }

    /// The finished node; `end` is where the scanner ended it (a flow collection's bracket).
    fn close(self, end: usize) -> Node {
        let (last, shape) = match self.body {
            Body::Map { entries, .. } => (
                entries.last().map(|e| e.value.end.max(e.key_end)),
                Shape::Map(entries),
            ),
            Body::Seq(items) => (items.last().map(|i| i.end), Shape::Seq(items)),
        };
        Node {
            start: self.start,
            end: if self.flow {
                end
            } else {
                last.unwrap_or(self.start)
            },
            flow: self.flow,
            shape: if self.opaque { Shape::Opaque } else { shape },
        }
    }
}

impl Tree {
    fn parse(text: &str) -> Result<Tree, Refusal> {
        // saphyr's markers count characters; edits need bytes.
        let bytes_at: Vec<usize> = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices()
                .map(|(i, _)| i)
                .chain([text.len()])
                .collect()
        };
        let byte = |chars: usize| {
            if bytes_at.is_empty() {
                chars.min(text.len())
            } else {
                bytes_at.get(chars).copied().unwrap_or(text.len())
            }
        };
        let mut parser = Parser::new_from_str(text);
        let mut stack: Vec<Open> = Vec::new();
        let mut root = None;
        while let Some(next) = parser.next_event() {
            let (event, span) = next.map_err(|e| Refusal::Unreadable(e.info().to_string()))?;
            let (start, end) = (byte(span.start.index()), byte(span.end.index()));
            let node = match event {
                Event::DocumentEnd if root.is_some() => break,
                Event::Scalar(value, style, anchor, tag) => {
                    if let Some(Open {
                        body:
                            Body::Map {
                                key: key @ None, ..
                            },
                        ..
                    }) = stack.last_mut()
                    {
                        let key_end = scalar_end(text, start, end, style);
                        *key = Some((value.into_owned(), start, key_end));
                        continue;
                    }
                    let opaque = anchor != 0 || tag.is_some();
                    let (start, end) = match style {
                        ScalarStyle::Literal | ScalarStyle::Folded => (
                            block_indicator(text, start)
                                .ok_or_else(|| unsupported_at(text, start))?,
                            block_end(text, start, end),
                        ),
                        _ => (start, scalar_end(text, start, end, style)),
                    };
                    Node {
                        start,
                        end,
                        flow: false,
                        shape: if opaque { Shape::Opaque } else { Shape::Scalar },
                    }
                }
                Event::Alias(_) => Node {
                    start,
                    end,
                    flow: false,
                    shape: Shape::Opaque,
                },
                Event::MappingStart(anchor, tag) => {
                    let body = Body::Map {
                        entries: Vec::new(),
                        key: None,
                    };
                    stack.push(Open::new(start, end, anchor, tag.is_some(), body));
                    continue;
                }
                Event::SequenceStart(anchor, tag) => {
                    let body = Body::Seq(Vec::new());
                    stack.push(Open::new(start, end, anchor, tag.is_some(), body));
                    continue;
                }
                Event::MappingEnd | Event::SequenceEnd => match stack.pop() {
                    Some(open) => open.close(end),
                    None => return Err(Refusal::Unreadable("unbalanced collection".into())),
                },
                _ => continue,
            };
            match stack.last_mut() {
                None => root = Some(node),
                Some(Open {
                    body: Body::Seq(items),
                    ..
                }) => items.push(node),
                Some(Open {
                    body: Body::Map { entries, key },
                    ..
                }) => match key.take() {
                    Some((key, key_start, key_end)) => entries.push(Entry {
                        key,
                        key_start,
                        key_end,
                        value: node,
                    }),
                    // A collection, alias or anchored scalar as a key.
                    None => return Err(unsupported_at(text, start)),
                },
            }
        }
        root.map(|root| Tree { root })
            .ok_or_else(|| Refusal::Unreadable("no document".into()))
    }

    /// The node at `path`, with whether any collection around it is written in flow style.
    fn find(&self, path: &[String]) -> Result<(&Node, bool), Refusal> {
        let mut node = &self.root;
        let mut in_flow = false;
        for (i, token) in path.iter().enumerate() {
            in_flow |= node.flow;
            let missing = || Refusal::NotFound(pointer(&path[..=i]));
            node = match &node.shape {
                Shape::Map(entries) => {
                    &entries
                        .iter()
                        .find(|e| &e.key == token)
                        .ok_or_else(missing)?
                        .value
                }
                Shape::Seq(items) => items
                    .get(token.parse::<usize>().map_err(|_| missing())?)
                    .ok_or_else(missing)?,
                _ => return Err(missing()),
            };
        }
        Ok((node, in_flow))
    }

    /// How far the first block sequence under a key stands right of the key.
    fn sequence_offset(&self, text: &str) -> Option<usize> {
        fn walk(node: &Node, text: &str) -> Option<usize> {
            match &node.shape {
                Shape::Map(entries) => entries.iter().find_map(|e| match &e.value.shape {
                    Shape::Seq(items) if !e.value.flow && !items.is_empty() => {
                        let dash = dash_of(text, &items[0]).ok()?;
                        column(text, dash).checked_sub(column(text, e.key_start))
                    }
                    _ => walk(&e.value, text),
                }),
                Shape::Seq(items) => items.iter().find_map(|i| walk(i, text)),
                _ => None,
            }
        }
        walk(&self.root, text)
    }

    /// The value at `path` as the document reads it.
    fn value_at(&self, text: &str, path: &[String]) -> Result<Value, Refusal> {
        let value = read(text, parse_stream)?;
        lookup(&value, path)
            .cloned()
            .ok_or_else(|| Refusal::NotFound(pointer(path)))
    }

    fn add(
        &self,
        text: &str,
        path: &[String],
        value: &Value,
        style: Style,
    ) -> Result<String, Refusal> {
        let (last, parent_path) = path.split_last().ok_or_else(root)?;
        let (parent, in_flow) = self.find(parent_path)?;
        let empty = match &parent.shape {
            Shape::Map(entries) => entries.is_empty(),
            Shape::Seq(items) => items.is_empty(),
            _ => false,
        };
        if empty && parent.flow && !in_flow && !style.json {
            // `nodeSelector: {}` (helm create's values): what goes in is written as the block
            // it makes.
            let filled = match &parent.shape {
                Shape::Map(_) => {
                    let mut map = crate::value::Map::new();
                    map.insert(crate::value::Str::from(last.as_str()), value.clone());
                    Value::Object(map)
                }
                _ => Value::Array(vec![value.clone()]),
            };
            return self.replace(text, parent_path, &filled, style);
        }
        match &parent.shape {
            Shape::Map(entries) => {
                if entries.iter().any(|e| &e.key == last) {
                    return self.replace(text, path, value, style);
                }
                if parent.flow || in_flow {
                    let entry = format!("{}: {}", write_key(last, style), flow(value, style));
                    Ok(match entries.last() {
                        Some(e) => splice(
                            text,
                            e.value.end.max(e.key_end),
                            e.value.end.max(e.key_end),
                            &format!(", {entry}"),
                        ),
                        None => splice(text, parent.start + 1, parent.start + 1, &entry),
                    })
                } else {
                    let first = entries
                        .first()
                        .ok_or_else(|| unsupported_at(text, parent.start))?;
                    let indent = column(text, first.key_start);
                    let at = after_line(text, parent.end);
                    let lines = block_entry(last, value, indent, style);
                    Ok(insert_lines(text, at, &lines, style))
                }
            }
            Shape::Seq(items) => {
                let index = if last == "-" {
                    items.len()
                } else {
                    last.parse::<usize>()
                        .ok()
                        .filter(|i| *i <= items.len())
                        .ok_or_else(|| Refusal::NotFound(pointer(path)))?
                };
                if parent.flow || in_flow {
                    let item = flow(value, style);
                    Ok(match (items.get(index), items.last()) {
                        (Some(next), _) => {
                            splice(text, next.start, next.start, &format!("{item}, "))
                        }
                        (None, Some(prev)) => {
                            splice(text, prev.end, prev.end, &format!(", {item}"))
                        }
                        (None, None) => splice(text, parent.start + 1, parent.start + 1, &item),
                    })
                } else {
                    let dash = dash_of(
                        text,
                        items
                            .first()
                            .ok_or_else(|| unsupported_at(text, parent.start))?,
                    )?;
                    let indent = column(text, dash);
                    let lines = block_item(value, indent, style);
                    match items.get(index) {
                        Some(next) => {
                            let at = line_start(text, dash_of(text, next)?);
                            Ok(splice(text, at, at, &lines))
                        }
                        None => Ok(insert_lines(
                            text,
                            after_line(text, parent.end),
                            &lines,
                            style,
                        )),
                    }
                }
            }
            _ => Err(Refusal::Unsupported(format!("`{}`", pointer(parent_path)))),
        }
    }

    fn remove(&self, text: &str, path: &[String], style: Style) -> Result<String, Refusal> {
        let (last, parent_path) = path.split_last().ok_or_else(root)?;
        let (parent, _) = self.find(parent_path)?;
        let missing = || Refusal::NotFound(pointer(path));
        match &parent.shape {
            Shape::Map(entries) => {
                let i = entries
                    .iter()
                    .position(|e| &e.key == last)
                    .ok_or_else(missing)?;
                let entry = &entries[i];
                let end = entry.value.end.max(entry.key_end);
                if entries.len() == 1 {
                    return self.replace(
                        text,
                        parent_path,
                        &Value::Object(Default::default()),
                        style,
                    );
                }
                if parent.flow {
                    return Ok(match entries.get(i + 1) {
                        Some(next) => splice(text, entry.key_start, next.key_start, ""),
                        None => {
                            let prev = &entries[i - 1];
                            splice(text, prev.value.end.max(prev.key_end), end, "")
                        }
                    });
                }
                let from = line_start(text, entry.key_start);
                if text[from..entry.key_start].trim().is_empty() {
                    Ok(splice(text, from, after_line(text, end), ""))
                } else {
                    // The first key of a sequence item (`- name: x`): the next key takes its
                    // place after the dash.
                    let next = entries
                        .get(i + 1)
                        .filter(|_| i == 0)
                        .ok_or_else(|| Refusal::Unsupported(format!("`{}`", pointer(path))))?;
                    Ok(splice(text, entry.key_start, next.key_start, ""))
                }
            }
            Shape::Seq(items) => {
                let i = last
                    .parse::<usize>()
                    .ok()
                    .filter(|i| *i < items.len())
                    .ok_or_else(missing)?;
                if items.len() == 1 {
                    return self.replace(text, parent_path, &Value::Array(Vec::new()), style);
                }
                let item = &items[i];
                if parent.flow {
                    return Ok(match items.get(i + 1) {
                        Some(next) => splice(text, item.start, next.start, ""),
                        None => splice(text, items[i - 1].end, item.end, ""),
                    });
                }
                let dash = dash_of(text, item)?;
                let from = line_start(text, dash);
                if !text[from..dash].trim().is_empty() {
                    return Err(Refusal::Unsupported(format!("`{}`", pointer(path))));
                }
                Ok(splice(text, from, after_line(text, item.end), ""))
            }
            _ => Err(missing()),
        }
    }

    fn replace(
        &self,
        text: &str,
        path: &[String],
        value: &Value,
        style: Style,
    ) -> Result<String, Refusal> {
        let (node, in_flow) = self.find(path)?;
        if matches!(node.shape, Shape::Opaque) {
            return Err(Refusal::Unsupported(format!("`{}`", pointer(path))));
        }
        let scalar_or_empty = match value {
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => true,
        };
        // A collection keeps the style it had: flow inside flow, or where it was flow and not
        // empty (an empty `{}` or `[]` in block context takes its new value as a block).
        let non_empty_flow = node.flow
            && match &node.shape {
                Shape::Map(entries) => !entries.is_empty(),
                Shape::Seq(items) => !items.is_empty(),
                _ => false,
            };
        if in_flow || non_empty_flow || scalar_or_empty || style.json {
            let written = flow(value, style);
            // An empty value (`key:`) has no text: the new one goes after the colon.
            if node.start == node.end {
                let colon = text[node.start..]
                    .find(':')
                    .map(|i| node.start + i + 1)
                    .ok_or_else(|| unsupported_at(text, node.start))?;
                return Ok(splice(text, colon, colon, &format!(" {written}")));
            }
            if !node.flow && matches!(node.shape, Shape::Map(_) | Shape::Seq(_)) {
                // A block collection's lines give way to one line after its key's colon (or
                // its item's dash).
                let start = match &node.shape {
                    Shape::Seq(items) => dash_of(text, &items[0])?,
                    _ => node.start,
                };
                let anchor =
                    anchor_before(text, start).ok_or_else(|| unsupported_at(text, start))?;
                let anchor_line_end = text[anchor..].find('\n').map_or(text.len(), |i| anchor + i);
                if anchor_line_end >= start {
                    return Ok(splice(text, anchor + 1, node.end, &format!(" {written}")));
                }
                // The collection starts on a later line: its lines go, and the value goes
                // after the colon, before any comment the key's line has.
                let line_end = text[..anchor_line_end]
                    .strip_suffix('\r')
                    .map_or(anchor_line_end, str::len);
                let cut = splice(text, line_end, node.end, "");
                return Ok(splice(&cut, anchor + 1, anchor + 1, &format!(" {written}")));
            }
            return Ok(splice(text, node.start, node.end, &written));
        }
        // A collection in block style.
        let (start, indent) = match &node.shape {
            // Written where the old one stands, from its first key or item on.
            Shape::Map(_) | Shape::Seq(_) if !node.flow => {
                let start = match &node.shape {
                    Shape::Seq(items) => dash_of(text, &items[0])?,
                    _ => node.start,
                };
                (start, column(text, start))
            }
            _ => {
                let parent_indent = match path.split_last() {
                    Some((_, parent)) => {
                        let (parent, _) = self.find(parent)?;
                        match &parent.shape {
                            Shape::Map(entries) => {
                                entries.first().map_or(0, |e| column(text, e.key_start))
                            }
                            Shape::Seq(items) => items
                                .first()
                                .map_or(Ok(0), |i| dash_of(text, i).map(|d| column(text, d)))?,
                            _ => 0,
                        }
                    }
                    None => return Err(root()),
                };
                let indent = parent_indent
                    + match value {
                        Value::Array(_) => style.sequence_offset,
                        _ => 2,
                    };
                let lines = block(value, indent, style);
                let lines = lines.strip_suffix(style.eol).unwrap_or(&lines);
                let at = if node.start == node.end {
                    text[node.start..]
                        .find(':')
                        .map(|i| node.start + i + 1)
                        .ok_or_else(|| unsupported_at(text, node.start))?
                } else {
                    node.start
                };
                let end = node.end.max(at);
                // Before the scalar: the space after the colon goes.
                let from = text[..at].trim_end_matches([' ', '\t']).len();
                return Ok(splice(text, from, end, &format!("{}{lines}", style.eol)));
            }
        };
        let lines = block(value, indent, style);
        let lines = lines[indent..]
            .strip_suffix(style.eol)
            .unwrap_or(&lines[indent..]);
        Ok(splice(text, start, node.end, lines))
    }

    /// A move within one mapping to a key not there yet: the key is written anew in place.
    /// `None` for any other move.
    fn rename(
        &self,
        text: &str,
        from: &[String],
        to: &[String],
        style: Style,
    ) -> Result<Option<String>, Refusal> {
        let (Some((old, parent)), Some((new, to_parent))) = (from.split_last(), to.split_last())
        else {
            return Ok(None);
        };
        if parent != to_parent {
            return Ok(None);
        }
        let (node, in_flow) = self.find(parent)?;
        let Shape::Map(entries) = &node.shape else {
            return Ok(None);
        };
        if entries.iter().any(|e| &e.key == new) {
            return Ok(None);
        }
        let entry = entries
            .iter()
            .find(|e| &e.key == old)
            .ok_or_else(|| Refusal::NotFound(pointer(from)))?;
        let key = write_scalar(new, in_flow || node.flow, style);
        Ok(Some(splice(text, entry.key_start, entry.key_end, &key)))
    }
}

/// The whole document as an operation's target.
fn root() -> Refusal {
    Refusal::Unsupported("the document as a whole".into())
}

/// What is at byte `at` of the document's text, for a refusal.
fn unsupported_at(text: &str, at: usize) -> Refusal {
    let line = text[..at.min(text.len())].matches('\n').count() + 1;
    Refusal::Unsupported(format!("line {line} of the document"))
}

fn pointer(tokens: &[String]) -> String {
    tokens
        .iter()
        .map(|t| format!("/{}", crate::value::escape_pointer_token(t)))
        .collect()
}

fn splice(text: &str, from: usize, to: usize, with: &str) -> String {
    let mut out = String::with_capacity(text.len() + with.len());
    out.push_str(&text[..from]);
    out.push_str(with);
    out.push_str(&text[to..]);
    out
}

/// Inserts whole lines at `at` (a line's start, or the text's end, which may lack its newline).
fn insert_lines(text: &str, at: usize, lines: &str, style: Style) -> String {
    if at == text.len() && !text.is_empty() && !text.ends_with('\n') {
        return format!(
            "{text}{}{}",
            style.eol,
            lines.strip_suffix(style.eol).unwrap_or(lines)
        );
    }
    splice(text, at, at, lines)
}

fn line_start(text: &str, at: usize) -> usize {
    text[..at].rfind('\n').map_or(0, |i| i + 1)
}

/// The start of the line after the one holding byte `at - 1` (the last byte of a node).
fn after_line(text: &str, end: usize) -> usize {
    if end > 0 && text.as_bytes()[end - 1] == b'\n' {
        return end;
    }
    text[end..].find('\n').map_or(text.len(), |i| end + i + 1)
}

/// The column (in bytes: indentation is spaces) of byte `at`.
fn column(text: &str, at: usize) -> usize {
    at - line_start(text, at)
}

/// Where a quoted scalar's text ends: the scanner's span runs on past a comment after it.
fn scalar_end(text: &str, start: usize, end: usize, style: ScalarStyle) -> usize {
    let bytes = text.as_bytes();
    match style {
        ScalarStyle::DoubleQuoted => {
            let mut i = start + 1;
            while i < bytes.len() {
                match bytes[i] {
                    b'\\' => i += 2,
                    b'"' => return i + 1,
                    _ => i += 1,
                }
            }
            end
        }
        ScalarStyle::SingleQuoted => {
            let mut i = start + 1;
            while i < bytes.len() {
                if bytes[i] == b'\'' {
                    if bytes.get(i + 1) == Some(&b'\'') {
                        i += 2;
                        continue;
                    }
                    return i + 1;
                }
                i += 1;
            }
            end
        }
        _ => end,
    }
}

/// A block scalar's `|` or `>`: the last one on the last line before its content that is not
/// blank (the scanner's span starts at the content).
fn block_indicator(text: &str, content: usize) -> Option<usize> {
    let mut end = line_start(text, content);
    while end > 0 {
        let start = line_start(text, end - 1);
        let line = &text[start..end - 1];
        if !line.trim().is_empty() {
            // The indicator ends the line but for its modifiers (`|-`, `>+2`) and a comment.
            let code = without_comment(line).trim_end();
            let head =
                code.trim_end_matches(['-', '+', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
            return head.ends_with(['|', '>']).then(|| start + head.len() - 1);
        }
        end = start;
    }
    None
}

/// A block scalar's end: its last content line's end, before its line break (the scanner's
/// span takes the next line's indentation too).
fn block_end(text: &str, start: usize, end: usize) -> usize {
    match text[start..end].rfind('\n') {
        Some(i) if text[..start + i].ends_with('\r') => start + i - 1,
        Some(i) => start + i,
        None => end,
    }
}

/// The colon of the key (or the dash of the item) a block collection starting at `start` is the
/// value of: before it on its line, or ending the nearest line above that is not blank or a
/// comment.
fn anchor_before(text: &str, start: usize) -> Option<usize> {
    let mut end = start;
    loop {
        let from = line_start(text, end);
        let code = without_comment(&text[from..end]).trim_end();
        if code.ends_with([':', '-']) {
            return Some(from + code.len() - 1);
        }
        if !code.trim_start().is_empty() || from == 0 {
            return None;
        }
        end = from - 1;
    }
}

/// A line without its comment: up to a `#` after white space.
fn without_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let comment = (0..bytes.len())
        .find(|&i| bytes[i] == b'#' && (i == 0 || matches!(bytes[i - 1], b' ' | b'\t')));
    &line[..comment.unwrap_or(line.len())]
}

/// The `-` of a block sequence's item.
fn dash_of(text: &str, item: &Node) -> Result<usize, Refusal> {
    let before = text[..item.start].trim_end();
    if before.ends_with('-') {
        Ok(before.len() - 1)
    } else {
        Err(unsupported_at(text, item.start))
    }
}

/// YAML 1.1 and 1.2 plain scalars that read as something other than a string, under any reader
/// Kubernetes tooling uses: a string spelled like one of these is quoted.
fn plain_is_not_a_string(s: &str) -> bool {
    if matches!(s, "y" | "Y" | "n" | "N" | "<<" | "=") {
        return true;
    }
    if crate::value::yaml::plain_value(s).is_some() {
        return true;
    }
    // Numbers, dates, times and sexagesimals in every spelling a YAML 1.1 reader knows start
    // with a digit, or a sign or dot before one.
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_digit() => true,
        Some('+' | '-' | '.') => chars.next().is_some_and(|c| c.is_ascii_digit() || c == '.'),
        _ => false,
    }
}

/// A string as a scalar: plain when every reader reads it back as this string, else in double
/// quotes (JSON's escaping, which YAML's double-quoted style reads alike).
fn write_scalar(s: &str, in_flow: bool, style: Style) -> String {
    let plain = !style.json
        && !s.is_empty()
        && !plain_is_not_a_string(s)
        && !s.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%',
            '@', '`', ' ', '\t',
        ])
        && !s.ends_with([' ', '\t', ':'])
        && !s.contains(": ")
        && !s.contains(" #")
        && !s.chars().any(|c| {
            c.is_control() || matches!(c, '\u{85}' | '\u{2028}' | '\u{2029}' | '\u{feff}')
        })
        && !(in_flow && s.contains([',', '[', ']', '{', '}']));
    if plain {
        return s.to_string();
    }
    let mut quoted = serde_json::to_string(s).unwrap_or_default();
    // What YAML does not print as itself but JSON leaves as it is: DEL and the C1 controls, the
    // line and paragraph separators, the byte order mark.
    let unprintable = |c: char| {
        matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{feff}'
        )
    };
    if quoted.contains(unprintable) {
        quoted = quoted
            .chars()
            .map(|c| match c {
                c if unprintable(c) => format!("\\u{:04X}", c as u32),
                c => c.to_string(),
            })
            .collect();
    }
    quoted
}

fn write_key(key: &str, style: Style) -> String {
    write_scalar(key, true, style)
}

fn scalar_text(value: &Value, in_flow: bool, style: Style) -> String {
    match value {
        Value::String(s) => write_scalar(s, in_flow, style),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// `value` in flow style, on one line.
fn flow(value: &Value, style: Style) -> String {
    match value {
        Value::Object(map) => {
            let entries: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", write_key(k, style), flow(v, style)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(|v| flow(v, style)).collect();
            format!("[{}]", items.join(", "))
        }
        scalar => scalar_text(scalar, true, style),
    }
}

fn is_block_collection(value: &Value) -> bool {
    match value {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

/// `key: value` as block lines at `indent`.
fn block_entry(key: &str, value: &Value, indent: usize, style: Style) -> String {
    let pad = " ".repeat(indent);
    let key = write_scalar(key, false, style);
    if is_block_collection(value) {
        let inner = match value {
            Value::Array(_) => indent + style.sequence_offset,
            _ => indent + 2,
        };
        format!("{pad}{key}:{}{}", style.eol, block(value, inner, style))
    } else {
        format!("{pad}{key}: {}{}", flow(value, style), style.eol)
    }
}

/// `- value` as block lines at `indent`.
fn block_item(value: &Value, indent: usize, style: Style) -> String {
    let pad = " ".repeat(indent);
    if is_block_collection(value) {
        let inner = block(value, indent + 2, style);
        format!("{pad}- {}", &inner[indent + 2..])
    } else {
        format!("{pad}- {}{}", flow(value, style), style.eol)
    }
}

/// A block collection's lines at `indent` (a scalar or empty collection: one flow line).
fn block(value: &Value, indent: usize, style: Style) -> String {
    match value {
        Value::Object(map) if !map.is_empty() => map
            .iter()
            .map(|(k, v)| block_entry(k, v, indent, style))
            .collect(),
        Value::Array(items) if !items.is_empty() => {
            items.iter().map(|v| block_item(v, indent, style)).collect()
        }
        other => format!("{}{}{}", " ".repeat(indent), flow(other, style), style.eol),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(json: serde_json::Value) -> Vec<PatchOperation> {
        serde_json::from_value(json).unwrap()
    }

    fn edit(text: &str, patch: serde_json::Value) -> String {
        apply(text, &ops(patch), false).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    /// A key renamed inside a flow mapping is written over its own text: the mapping stays
    /// flow, comments and the other scalars' quotes stay.
    #[test]
    fn a_fix_inside_a_flow_collection_edits_that_collection() {
        let text = "# top\nspec:\n  nodeSelector: {beta.kubernetes.io/os: windows, \"x\": 'y'} # why\n  args: [\"yes\", \"off\", 'y', \"1_000\"]\n";
        let out = edit(
            text,
            serde_json::json!([{"op": "move", "from": "/spec/nodeSelector/beta.kubernetes.io~1os", "path": "/spec/nodeSelector/kubernetes.io~1os"}]),
        );
        assert_eq!(
            out,
            "# top\nspec:\n  nodeSelector: {kubernetes.io/os: windows, \"x\": 'y'} # why\n  args: [\"yes\", \"off\", 'y', \"1_000\"]\n"
        );
        let out = edit(
            text,
            serde_json::json!([
                {"op": "add", "path": "/spec/nodeSelector/a", "value": "on"},
                {"op": "add", "path": "/spec/args/-", "value": "a, b"},
                {"op": "add", "path": "/spec/args/0", "value": "n"},
                {"op": "remove", "path": "/spec/nodeSelector/x"},
            ]),
        );
        assert_eq!(
            out,
            "# top\nspec:\n  nodeSelector: {beta.kubernetes.io/os: windows, a: \"on\"} # why\n  args: [\"n\", \"yes\", \"off\", 'y', \"1_000\", \"a, b\"]\n"
        );
    }

    /// Every string a YAML 1.1 or 1.2 reader would take for another type is written quoted;
    /// one that reads as itself stays plain.
    #[test]
    fn written_scalars_read_back_as_strings_everywhere() {
        for s in [
            "yes",
            "no",
            "on",
            "off",
            "y",
            "Y",
            "n",
            "N",
            "true",
            "False",
            "null",
            "~",
            "",
            "1_000",
            "0777",
            "0x1F",
            "1e3",
            ".5",
            "-1",
            "+1",
            "2001-12-14",
            "1:20",
            ".inf",
            "<<",
            "- a",
            "a: b",
            "a #b",
            "#x",
            "*x",
            "&x",
            "!x",
            "|",
            ">",
            "'q'",
            "\"q\"",
            " lead",
            "trail ",
            "line\nbreak",
            "tab\there",
            "%x",
            "@x",
            "`x",
            "{a}",
            "[a]",
            "?",
            ":",
            "x:",
        ] {
            let out = edit(
                "k: v\n",
                serde_json::json!([{"op": "replace", "path": "/k", "value": s}]),
            );
            for (name, reader) in [
                ("1.2", parse_stream as Reader),
                ("1.1", parse_stream_go_yaml_v2),
            ] {
                assert_eq!(
                    read(&out, reader).unwrap()["k"],
                    Value::from(s),
                    "{name}: {s:?} -> {out}"
                );
            }
            assert_ne!(out, format!("k: {s}\n"), "{s:?} written plain");
        }
        for s in [
            "windows",
            "kubernetes.io/os",
            "NoSchedule",
            "mcr.microsoft.com/x:1.0",
            "a b",
        ] {
            let out = edit(
                "k: v\n",
                serde_json::json!([{"op": "replace", "path": "/k", "value": s}]),
            );
            assert_eq!(out, format!("k: {s}\n"));
        }
    }

    /// Additions under a block parent are new lines at its indentation, written whole when
    /// later operations fill what an earlier one added; line endings follow the document's.
    #[test]
    fn additions_are_new_lines_in_the_documents_own_style() {
        let text =
            "spec:\r\n  containers:\r\n  - name: a # keep\r\n    image: x\r\n  # tail comment\r\n";
        let out = edit(
            text,
            serde_json::json!([
                {"op": "add", "path": "/spec/nodeSelector", "value": {}},
                {"op": "add", "path": "/spec/nodeSelector/kubernetes.io~1os", "value": "windows"},
                {"op": "add", "path": "/spec/tolerations", "value": [{"key": "os", "operator": "Equal", "value": "windows", "effect": "NoSchedule"}]},
                {"op": "add", "path": "/spec/containers/-", "value": {"name": "b", "image": "z"}},
            ]),
        );
        assert_eq!(
            out,
            "spec:\r\n  containers:\r\n  - name: a # keep\r\n    image: x\r\n  - image: z\r\n    name: b\r\n  nodeSelector:\r\n    kubernetes.io/os: windows\r\n  tolerations:\r\n  - effect: NoSchedule\r\n    key: os\r\n    operator: Equal\r\n    value: windows\r\n  # tail comment\r\n"
        );
        // A block sequence whose items are flow mappings is still a block sequence.
        assert_eq!(
            edit(
                "t:\n- {key: os}\n",
                serde_json::json!([{"op": "add", "path": "/t/-", "value": {"key": "x"}}])
            ),
            "t:\n- {key: os}\n- key: x\n"
        );
        // A file without a final newline.
        assert_eq!(
            edit(
                "a:\n  b: 1",
                serde_json::json!([{"op": "add", "path": "/a/c", "value": 2}])
            ),
            "a:\n  b: 1\n  c: 2"
        );
    }

    /// Removals take their own lines (or their stretch of flow text); the last entry of a
    /// collection leaves it empty, as the patch does.
    #[test]
    fn removals_take_only_their_own_text() {
        let text = "metadata:\n  annotations:\n    a: 1 # one\n    b: |\n      text\n    c: 3\n  labels: {x: 1, z: 2}\nlist:\n- name: p\n  v: 1\n- q\n";
        let out = edit(
            text,
            serde_json::json!([
                {"op": "remove", "path": "/metadata/annotations/b"},
                {"op": "remove", "path": "/metadata/labels/z"},
                {"op": "remove", "path": "/list/0/name"},
                {"op": "remove", "path": "/list/1"},
            ]),
        );
        assert_eq!(
            out,
            "metadata:\n  annotations:\n    a: 1 # one\n    c: 3\n  labels: {x: 1}\nlist:\n- v: 1\n"
        );
        let out = edit(
            "a:\n  only: 1\nb: [x]\n",
            serde_json::json!([{"op": "remove", "path": "/a/only"}, {"op": "remove", "path": "/b/0"}]),
        );
        assert_eq!(out, "a: {}\nb: []\n");
    }

    /// A replaced value is written over its own text, a collection in the style around it.
    #[test]
    fn replacements_are_written_over_their_own_text() {
        let text = "a: old # c\nb:\n  x: 1\nc: {d: 1}\ne: 'q'\nf:\n";
        let out = edit(
            text,
            serde_json::json!([
                {"op": "replace", "path": "/a", "value": {"k": "v"}},
                {"op": "replace", "path": "/b", "value": ["s"]},
                {"op": "replace", "path": "/c/d", "value": {"z": [1]}},
                {"op": "replace", "path": "/e", "value": 800},
                {"op": "replace", "path": "/f", "value": "set"},
            ]),
        );
        assert_eq!(
            out,
            "a:\n  k: v # c\nb:\n  - s\nc: {d: {z: [1]}}\ne: 800\nf: set\n"
        );
    }

    /// What a review found: two additions to one list, a collection whose key's line has a
    /// comment, a block scalar replaced, a block scalar's header with a tab before its comment,
    /// a byte order mark, a DEL character.
    #[test]
    fn edits_around_comments_block_scalars_and_marks() {
        let toleration = |v: &str| serde_json::json!({"key": "os", "value": v});
        assert_eq!(
            edit(
                "t:\n- key: a\n",
                serde_json::json!([
                    {"op": "add", "path": "/t/-", "value": toleration("b")},
                    {"op": "add", "path": "/t/-", "value": toleration("c")},
                ])
            ),
            "t:\n- key: a\n- key: os\n  value: b\n- key: os\n  value: c\n"
        );
        assert_eq!(
            edit(
                "t: []\n",
                serde_json::json!([
                    {"op": "add", "path": "/t/-", "value": toleration("b")},
                    {"op": "add", "path": "/t/-", "value": toleration("c")},
                ])
            ),
            "t:\n  - key: os\n    value: b\n  - key: os\n    value: c\n"
        );
        assert_eq!(
            edit(
                "nodeSelector: # pin\n  a: b\nx: 1\n",
                serde_json::json!([{"op": "remove", "path": "/nodeSelector/a"}])
            ),
            "nodeSelector: {} # pin\nx: 1\n"
        );
        assert_eq!(
            edit(
                "b: |\n  x\nc: 1\n",
                serde_json::json!([{"op": "replace", "path": "/b", "value": "z"}])
            ),
            "b: z\nc: 1\n"
        );
        assert_eq!(
            edit(
                "a: |\t# c\n  x\nb: 1\n",
                serde_json::json!([{"op": "add", "path": "/c", "value": 2}])
            ),
            "a: |\t# c\n  x\nb: 1\nc: 2\n"
        );
        assert_eq!(
            edit(
                "\u{feff}a: 1\n",
                serde_json::json!([{"op": "add", "path": "/b", "value": "\u{7f}"}])
            ),
            "\u{feff}a: 1\nb: \"\\u007F\"\n"
        );
    }

    /// JSON stays JSON.
    #[test]
    fn json_documents_stay_json() {
        let text = "{\n  \"spec\": {\"nodeSelector\": {}, \"args\": [\"yes\"]}\n}\n";
        let out = apply(
            text,
            &ops(serde_json::json!([
                {"op": "add", "path": "/spec/nodeSelector/kubernetes.io~1os", "value": "windows"},
                {"op": "add", "path": "/spec/args/-", "value": "on"},
            ])),
            true,
        )
        .unwrap();
        assert_eq!(
            out,
            "{\n  \"spec\": {\"nodeSelector\": {\"kubernetes.io/os\": \"windows\"}, \"args\": [\"yes\", \"on\"]}\n}\n"
        );
        serde_json::from_str::<serde_json::Value>(&out).unwrap();
    }

    /// What can't be written in place is refused, not written some other way.
    #[test]
    fn edits_through_aliases_are_refused() {
        let text = "base: &b {x: 1}\nuse: *b\n";
        let refused = apply(
            text,
            &ops(serde_json::json!([{"op": "add", "path": "/use/y", "value": 2}])),
            false,
        );
        assert!(
            matches!(refused, Err(Refusal::Unsupported(_))),
            "{refused:?}"
        );
        // Changing an anchored value would change its aliases too.
        let refused = apply(
            text,
            &ops(serde_json::json!([{"op": "replace", "path": "/base/x", "value": 2}])),
            false,
        );
        assert!(refused.is_err(), "{refused:?}");
    }
}
