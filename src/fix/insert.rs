//! Fixes written into a document's own text: most fixes only add (a nodeSelector, a toleration,
//! `os.name`), and an addition can go in as new lines under its parent, leaving every other line
//! of the document — comments, quoting, flow lists — exactly as it was.
//!
//! No YAML crate edits a document in place while keeping its layout, so this is done by hand,
//! from the positions the parser recorded; and it is checked, not trusted: the edited text is
//! parsed again and used only if it reads as exactly the fixed object. Anything else (a
//! replacement, a removal, a parent written in flow style) is left to re-serialisation.

use std::collections::BTreeMap;

use crate::value::Value;
use json_patch::PatchOperation;

use crate::manifest::unescape_pointer_token;
use crate::manifest::yaml::PosNode;

/// The document with `ops` (applied to `original`, giving `patched`) written in as insertions,
/// or `None` when they can't be, or the result does not read back as `patched`.
/// `first_line` is the global line number of the text's first line.
pub(super) fn insert_fixes(
    text: &str,
    first_line: u32,
    original: &Value,
    pos: &PosNode,
    patched: &Value,
    ops: &[PatchOperation],
) -> Option<String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // New lines to write after each (0-based) line of `text`, in the order of the operations.
    let mut after: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    let mut roots: Vec<Vec<String>> = Vec::new();
    let mut appended: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for op in ops {
        let PatchOperation::Add(add) = op else {
            return None;
        };
        let tokens: Vec<String> = add
            .path
            .as_str()
            .split('/')
            .skip(1)
            .map(|t| unescape_pointer_token(t).into_owned())
            .collect();
        // Inside a subtree an earlier operation added: written with it.
        if roots.iter().any(|r| tokens.starts_with(r)) {
            continue;
        }
        let (last, parent) = tokens.split_last()?;
        let (parent_value, parent_pos) = walk(original, pos, parent)?;
        let insertion = match parent_value {
            Value::Object(map) => {
                if map.contains_key(last) {
                    return None;
                }
                let value = lookup(patched, &tokens)?;
                let indent = map_indent(&lines, first_line, parent_pos)?;
                let mut entry = crate::value::Map::new();
                entry.insert(last.clone(), value.clone());
                (
                    parent_pos,
                    indent,
                    yaml_lines(&Value::Object(entry), indent)?,
                )
            }
            Value::Array(items) => {
                let count = appended.entry(parent.to_vec()).or_insert(0);
                let index = items.len() + *count;
                if last != "-" && last.parse::<usize>().ok() != Some(index) {
                    return None;
                }
                *count += 1;
                let value = lookup(patched, parent)?.get(index)?;
                let indent = sequence_indent(&lines, first_line, parent_pos)?;
                (
                    parent_pos,
                    indent,
                    yaml_lines(&Value::Array(vec![value.clone()]), indent)?,
                )
            }
            _ => return None,
        };
        let (parent_pos, indent, new_lines) = insertion;
        let end = subtree_end(&lines, first_line, parent_pos, indent)?;
        after.entry(end).or_default().push(new_lines);
        roots.push(tokens);
    }
    let mut out = String::with_capacity(text.len() + 256);
    for (i, line) in lines.iter().enumerate() {
        out.push_str(line);
        if let Some(inserts) = after.get(&i) {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            for insert in inserts {
                out.push_str(insert);
            }
        }
    }
    reads_as(&out, first_line - 1, patched).then_some(out)
}

/// The value and position at `tokens` in the original document.
fn walk<'v>(
    value: &'v Value,
    pos: &'v PosNode,
    tokens: &[String],
) -> Option<(&'v Value, &'v PosNode)> {
    let (mut value, mut pos) = (value, pos);
    for token in tokens {
        let (next, index) = match value {
            // Positions are listed in the map's (sorted) key order.
            Value::Object(map) => (map.get(token)?, map.keys().position(|k| k == token)?),
            Value::Array(items) => {
                let i = token.parse::<usize>().ok()?;
                (items.get(i)?, i)
            }
            _ => return None,
        };
        value = next;
        pos = pos.children.get(index)?;
    }
    Some((value, pos))
}

fn lookup<'v>(value: &'v Value, tokens: &[String]) -> Option<&'v Value> {
    tokens.iter().try_fold(value, |v, t| match v {
        Value::Object(map) => map.get(t),
        Value::Array(items) => items.get(t.parse::<usize>().ok()?),
        _ => None,
    })
}

/// The line (0-based in `lines`) a global line number is.
fn local(first_line: u32, line: u32) -> Option<usize> {
    line.checked_sub(first_line).map(|l| l as usize)
}

/// The column (0-based) of a block mapping's keys, if `pos` is one written in block style.
fn map_indent(lines: &[&str], first_line: u32, pos: &PosNode) -> Option<usize> {
    let first = pos.children.first()?;
    let line = lines.get(local(first_line, first.key_line)?)?;
    let col = (first.key_col as usize).checked_sub(1)?;
    // Block style: the key starts its line (after indentation, or after a sequence's `- `).
    let before = line.get(..col)?;
    let block = before.trim_start().is_empty() || before.trim_end().ends_with('-');
    (block && pos.children.iter().all(|c| c.key_col == first.key_col)).then_some(col)
}

/// The column (0-based) of a block sequence's dashes, if `pos` is one.
fn sequence_indent(lines: &[&str], first_line: u32, pos: &PosNode) -> Option<usize> {
    let first = pos.children.first()?;
    let line = lines.get(local(first_line, first.line)?)?;
    let col = (first.col as usize).checked_sub(1)?;
    let before = line.get(..col)?;
    let dash = before.trim_end().strip_suffix('-')?;
    dash.trim_start().is_empty().then_some(dash.len())
}

/// The last line (0-based) of the node's text: its deepest recorded position, then any lines
/// indented past `indent` that follow (the rest of a block scalar, say).
fn subtree_end(lines: &[&str], first_line: u32, pos: &PosNode, indent: usize) -> Option<usize> {
    fn deepest(p: &PosNode) -> u32 {
        p.children
            .iter()
            .map(deepest)
            .fold(p.line.max(p.key_line), u32::max)
    }
    let mut end = local(first_line, deepest(pos))?;
    let mut i = end + 1;
    while i < lines.len() {
        let line = lines[i].trim_end();
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        if line.len() - line.trim_start().len() <= indent {
            break;
        }
        end = i;
        i += 1;
    }
    Some(end)
}

/// `value` (a one-entry map or a one-item list) as block YAML lines indented by `indent`.
pub(super) fn yaml_lines(value: &Value, indent: usize) -> Option<String> {
    let text = serde_yaml_ng::to_string(value).ok()?;
    let pad = " ".repeat(indent);
    Some(
        text.lines()
            .map(|l| format!("{pad}{l}\n"))
            .collect::<String>(),
    )
}

/// Whether `text` parses as exactly one document equal to `expected`.
pub(super) fn reads_as(text: &str, line_offset: u32, expected: &Value) -> bool {
    match crate::manifest::parse_document_text(text, line_offset) {
        (docs, None) => docs.len() == 1 && docs[0].value == *expected,
        _ => false,
    }
}
