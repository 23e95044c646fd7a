//! YAML as Helm reads and writes it.
//!
//! `toYaml` is `sigs.k8s.io/yaml`'s `Marshal`: the value goes to JSON (map keys sorted) and then
//! through go-yaml v2's emitter. What the emitter does is reproduced here, because no Rust YAML
//! writer quotes, folds and indents the way it does: sequences are not indented under their key,
//! strings that would read back as another type (`"true"`, `"1.0"`, `"2024-01-01"`) are
//! double-quoted, strings a plain scalar can't carry (`'*.example.com'`, `'a: b'`) are
//! single-quoted, and strings with line breaks are literal blocks (`|-`).

use std::collections::BTreeMap;

use super::value::{Value, format_float_g};

/// The YAML text of a value, ending in a newline (`toYaml` trims it).
pub fn to_yaml(v: &Value) -> String {
    let json = v.to_json();
    let mut out = String::new();
    match &json {
        serde_json::Value::Object(m) if !m.is_empty() => write_map(&mut out, m, 0),
        serde_json::Value::Array(a) if !a.is_empty() => write_list(&mut out, a, 0),
        scalar => {
            write_scalar(&mut out, scalar, 0);
            out.push('\n');
        }
    }
    out
}

/// go-yaml v2's emitter folds a plain or quoted scalar at a space once the line is past this
/// many characters (`best_width`).
const BEST_WIDTH: usize = 80;

/// A map's keys in go-yaml v2's order (its `keyList.Less`): character by character, letters
/// after other characters, runs of digits compared as numbers (`a9` before `a10`, `_x` before
/// `1`, `B` before `a`).
fn sorted_keys(
    m: &serde_json::Map<String, serde_json::Value>,
) -> Vec<(&String, &serde_json::Value)> {
    let mut entries: Vec<_> = m.iter().collect();
    entries.sort_by(|(a, _), (b, _)| go_yaml_key_order(a, b));
    entries
}

fn go_yaml_key_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let (ar, br): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    for i in 0..ar.len().min(br.len()) {
        if ar[i] == br[i] {
            continue;
        }
        let (al, bl) = (ar[i].is_alphabetic(), br[i].is_alphabetic());
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        // Go's `unicode.IsDigit` runs at this place, as numbers (saturating: Go's int64
        // overflows instead, for keys of more than eighteen digits).
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_numeric() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let digit = |c: char| c.to_digit(10).map(i64::from);
        let mut ai = i;
        while let Some(d) = ar.get(ai).copied().and_then(digit) {
            an = an.saturating_mul(10).saturating_add(d);
            ai += 1;
        }
        let mut bi = i;
        while let Some(d) = br.get(bi).copied().and_then(digit) {
            bn = bn.saturating_mul(10).saturating_add(d);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

fn write_map(out: &mut String, m: &serde_json::Map<String, serde_json::Value>, indent: usize) {
    for (k, v) in sorted_keys(m) {
        out.push_str(&" ".repeat(indent));
        out.push_str(&key_text(k));
        out.push(':');
        write_value_after_key(out, v, indent);
    }
}

fn write_value_after_key(out: &mut String, v: &serde_json::Value, indent: usize) {
    match v {
        serde_json::Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            write_map(out, m, indent + 2);
        }
        serde_json::Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            write_list(out, a, indent);
        }
        scalar => {
            out.push(' ');
            write_scalar(out, scalar, indent);
            out.push('\n');
        }
    }
}

fn write_list(out: &mut String, a: &[serde_json::Value], indent: usize) {
    for item in a {
        out.push_str(&" ".repeat(indent));
        out.push('-');
        match item {
            serde_json::Value::Object(m) if !m.is_empty() => {
                // The first key goes on the dash's line, the rest under it.
                let mut first = true;
                for (k, v) in sorted_keys(m) {
                    if first {
                        out.push(' ');
                        first = false;
                    } else {
                        out.push_str(&" ".repeat(indent + 2));
                    }
                    out.push_str(&key_text(k));
                    out.push(':');
                    write_value_after_key(out, v, indent + 2);
                }
            }
            serde_json::Value::Array(inner) if !inner.is_empty() => {
                out.push(' ');
                let mut nested = String::new();
                write_list(&mut nested, inner, indent + 2);
                // The nested list's first dash shares this line.
                out.push_str(nested.trim_start_matches(' '));
            }
            scalar => {
                out.push(' ');
                // An item's continuation lines and block text sit under the dash's content.
                write_scalar(out, scalar, indent);
                out.push('\n');
            }
        }
    }
}

fn key_text(k: &str) -> String {
    if k.is_empty() {
        return "\"\"".into();
    }
    string_text(k, 0, None)
}

/// `indent`: the indentation of what the scalar belongs to (its key, or its list's dash); its
/// continuation and block lines go two further in.
fn write_scalar(out: &mut String, v: &serde_json::Value, indent: usize) {
    match v {
        serde_json::Value::Null => out.push_str("null"),
        serde_json::Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        serde_json::Value::Number(n) => {
            if n.is_i64() || n.is_u64() {
                out.push_str(&n.to_string());
            } else {
                out.push_str(&format_float_g(n.as_f64().unwrap_or(0.0)));
            }
        }
        serde_json::Value::String(s) => {
            // Where the scalar starts on its line, for folding.
            let line_start = out.rfind('\n').map_or(0, |i| i + 1);
            let column = out[line_start..].chars().count();
            let text = string_text(s, indent, Some(column));
            out.push_str(&text);
        }
        serde_json::Value::Object(_) => out.push_str("{}"),
        serde_json::Value::Array(_) => out.push_str("[]"),
    }
}

/// The styles go-yaml v2 writes a scalar in.
#[derive(Clone, Copy, PartialEq)]
enum Style {
    Plain,
    Single,
    Double,
}

/// A string as it comes out of `sigs.k8s.io/yaml`'s JSON step: the JSON text is read back by
/// go-yaml v2, for which a raw NEL (U+0085, which JSON does not escape) inside a
/// double-quoted scalar is a line break, folded as YAML folds one: with the blanks around it
/// into one space, or `n` of them in a row into `n - 1` newlines.
fn after_json_round_trip(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.contains('\u{85}') {
        return std::borrow::Cow::Borrowed(s);
    }
    static BREAKS: std::sync::LazyLock<regex::Regex> =
        std::sync::LazyLock::new(|| regex::Regex::new("[ \t]*(\u{85}[ \t]*)+").expect("valid"));
    std::borrow::Cow::Owned(
        BREAKS
            .replace_all(s, |caps: &regex::Captures<'_>| {
                let breaks = caps[0].matches('\u{85}').count();
                if breaks == 1 {
                    " ".to_string()
                } else {
                    "\n".repeat(breaks - 1)
                }
            })
            .into_owned(),
    )
}

/// A string as go-yaml v2 writes it: plain when it reads back as the same string, else quoted;
/// a literal block when it has line breaks (not for keys). `column` is where a value starts
/// on its line (keys are never folded, and have none).
fn string_text(s: &str, indent: usize, column: Option<usize>) -> String {
    let s = &*after_json_round_trip(s);
    if s.contains('\n') && column.is_some() {
        if let Some(block) = literal_block(s, indent) {
            return block;
        }
        return folded(s, Style::Double, indent, column);
    }
    if !resolves_as_string(s) {
        return folded(s, Style::Double, indent, column);
    }
    let a = analyze(s);
    if a.plain_allowed {
        folded(s, Style::Plain, indent, column)
    } else if a.single_quoted_allowed {
        folded(s, Style::Single, indent, column)
    } else {
        folded(s, Style::Double, indent, column)
    }
}

/// A scalar written in `style`, folded as go-yaml v2's `write_plain_scalar`,
/// `write_single_quoted` and `write_double_quoted_scalar` fold: at a space once the line is
/// past [`BEST_WIDTH`], onto a new line indented two past `indent` (not at a run of spaces;
/// quoted scalars not at their first or last character; a double-quoted one escapes a space
/// that would start the new line).
fn folded(s: &str, style: Style, indent: usize, column: Option<usize>) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    let Some(mut col) = column else {
        // Keys are simple keys: never folded.
        return match style {
            Style::Plain => s.to_string(),
            Style::Single => format!("'{}'", s.replace('\'', "''")),
            Style::Double => double_quoted(s),
        };
    };
    let pad = indent + 2;
    let quote = match style {
        Style::Plain => None,
        Style::Single => Some('\''),
        Style::Double => Some('"'),
    };
    if let Some(q) = quote {
        out.push(q);
        col += 1;
    }
    let chars: Vec<char> = s.chars().collect();
    let mut spaces = false;
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let next_is_space = chars.get(i + 1) == Some(&' ');
            let inner = i > 0 && i + 1 < chars.len();
            let may_break = !spaces
                && col > BEST_WIDTH
                && match style {
                    Style::Plain => !next_is_space,
                    Style::Single => inner && !next_is_space,
                    Style::Double => inner,
                };
            if may_break {
                out.push('\n');
                out.push_str(&" ".repeat(pad));
                col = pad;
                if style == Style::Double && next_is_space {
                    out.push('\\');
                    col += 1;
                }
            } else {
                out.push(' ');
                col += 1;
            }
            spaces = true;
            continue;
        }
        spaces = false;
        let piece = match style {
            Style::Plain => c.to_string(),
            Style::Single if c == '\'' => "''".to_string(),
            Style::Single => c.to_string(),
            Style::Double => double_quoted_char(c),
        };
        col += piece.chars().count();
        out.push_str(&piece);
    }
    if let Some(q) = quote {
        out.push(q);
    }
    out
}

/// `|`, `|-` or `|+` with the text indented under the key.
fn literal_block(s: &str, indent: usize) -> Option<String> {
    let a = analyze(s);
    if !a.block_allowed {
        return None;
    }
    let chomp = if !s.ends_with('\n') {
        "-"
    } else if s.ends_with("\n\n") || s == "\n" {
        "+"
    } else {
        ""
    };
    // A leading space or line break would be read as indentation: the indent is then given
    // explicitly (go-yaml v2's `write_block_scalar_hints`).
    let indicator = if s.starts_with([' ', '\n']) { "2" } else { "" };
    let pad = " ".repeat(indent + 2);
    let mut out = format!("|{indicator}{chomp}");
    let body = s.strip_suffix('\n').unwrap_or(s);
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            out.push_str(&pad);
            out.push_str(line);
        }
    }
    Some(out)
}

fn double_quoted(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        out.push_str(&double_quoted_char(c));
    }
    out.push('"');
    out
}

/// One character inside a double-quoted scalar, escaped as go-yaml v2 escapes it.
fn double_quoted_char(c: char) -> String {
    match c {
        '"' => "\\\"".into(),
        '\\' => "\\\\".into(),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '\0' => "\\0".into(),
        '\u{7}' => "\\a".into(),
        '\u{8}' => "\\b".into(),
        '\u{b}' => "\\v".into(),
        '\u{c}' => "\\f".into(),
        '\u{1b}' => "\\e".into(),
        '\u{85}' => "\\N".into(),
        '\u{a0}' => "\\_".into(),
        '\u{2028}' => "\\L".into(),
        '\u{2029}' => "\\P".into(),
        '\u{feff}' => "\\uFEFF".into(),
        c if !printable(c) => {
            let n = c as u32;
            if n <= 0xff {
                format!("\\x{n:02X}")
            } else if n <= 0xffff {
                format!("\\u{n:04X}")
            } else {
                format!("\\U{n:08X}")
            }
        }
        c => c.to_string(),
    }
}

/// go-yaml v2's `is_printable`: unlike YAML's definition, tab, CR, NEL and everything past
/// the Basic Multilingual Plane are not, so strings holding them are double-quoted.
fn printable(c: char) -> bool {
    let n = c as u32;
    n == 0xA
        || (0x20..=0x7E).contains(&n)
        || (0xA0..=0xD7FF).contains(&n)
        || ((0xE000..=0xFFFD).contains(&n) && n != 0xFEFF)
}

/// What libyaml's `yaml_emitter_analyze_scalar` allows for a string in block context.
struct Analysis {
    plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn analyze(s: &str) -> Analysis {
    if s.is_empty() {
        return Analysis {
            plain_allowed: false,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let mut block_indicators = s.starts_with("---") || s.starts_with("...");
    let mut special = false;
    let mut line_breaks = false;
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    let mut preceded_by_whitespace = true;
    let blankz = |c: Option<&char>| {
        matches!(
            c,
            None | Some(' ' | '\t' | '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
        )
    };
    // Walked with one character of look-ahead (no copy of the text as characters).
    let mut chars = s.chars().peekable();
    let mut i = 0;
    while let Some(c) = chars.next() {
        let next = chars.peek();
        let last = next.is_none();
        let followed_by_whitespace = blankz(next);
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => block_indicators = true,
                '?' | ':' if followed_by_whitespace => block_indicators = true,
                '-' if followed_by_whitespace => block_indicators = true,
                _ => {}
            }
        } else {
            match c {
                ':' if followed_by_whitespace => block_indicators = true,
                '#' if preceded_by_whitespace => block_indicators = true,
                _ => {}
            }
        }
        if !printable(c) {
            special = true;
        }
        let is_break = matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}');
        if is_break {
            line_breaks = true;
        }
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if last {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break {
            if i == 0 {
                leading_break = true;
            }
            if last {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_break = true;
            previous_space = false;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = blankz(Some(&c));
        i += 1;
    }
    let mut plain = true;
    let mut single = true;
    let mut block = true;
    if leading_space || leading_break || trailing_space || trailing_break {
        plain = false;
    }
    if trailing_space {
        block = false;
    }
    if break_space {
        plain = false;
        single = false;
    }
    if space_break || special {
        plain = false;
        single = false;
        block = false;
    }
    if line_breaks || block_indicators {
        plain = false;
    }
    Analysis {
        plain_allowed: plain,
        single_quoted_allowed: single,
        block_allowed: block,
    }
}

/// Whether go-yaml v2 reads this plain text back as a string (not a bool, number, null or
/// timestamp, in YAML 1.1's rules that v2 follows).
fn resolves_as_string(s: &str) -> bool {
    const NON_STRINGS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "~", "null", "Null", "NULL",
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
        ".NaN", ".NAN", "<<",
    ];
    if s.is_empty() || NON_STRINGS.contains(&s) {
        return false;
    }
    let first = s.as_bytes()[0];
    if !(first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.')) {
        return true;
    }
    let plain = s.replace('_', "");
    if plain.parse::<i64>().is_ok() || plain.parse::<u64>().is_ok() {
        return false;
    }
    let unsigned = plain.trim_start_matches(['-', '+']);
    if let Some(hex) = unsigned.strip_prefix("0x")
        && !hex.is_empty()
        && hex.chars().all(|c| c.is_ascii_hexdigit())
    {
        return false;
    }
    if let Some(bin) = unsigned.strip_prefix("0b")
        && !bin.is_empty()
        && bin.chars().all(|c| c == '0' || c == '1')
    {
        return false;
    }
    if is_yaml_float(&plain) || is_base60(s) || is_timestamp(s) {
        return false;
    }
    true
}

fn is_yaml_float(s: &str) -> bool {
    // YAML 1.1: [-+]?([0-9][0-9_]*)?\.[0-9.]*([eE][-+][0-9]+)?, and Go's ParseFloat forms.
    static FLOAT: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$").expect("valid")
    });
    FLOAT.is_match(s)
}

fn is_base60(s: &str) -> bool {
    static BASE60: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$").expect("valid")
    });
    BASE60.is_match(s)
}

fn is_timestamp(s: &str) -> bool {
    static TS: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?$",
        )
        .expect("valid")
    });
    TS.is_match(s)
}

/// Reads YAML as Helm reads values (through JSON: every number a `float64`).
pub(super) fn parse_values(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Nil);
    }
    let v = crate::values::read_yaml(text).map_err(|e| crate::values::yaml_to_json_error(&e))?;
    Ok(Value::from_json(&v))
}

/// Helm's `fromToml`: a TOML document as a map, or `{Error: …}` when it doesn't parse.
pub fn from_toml(text: &str) -> Value {
    match text.parse::<toml::Table>() {
        Ok(table) => Value::from_json(&toml_json(toml::Value::Table(table))),
        Err(e) => {
            let mut m = std::collections::BTreeMap::new();
            m.insert("Error".to_string(), Value::from(e.message()));
            Value::map(m)
        }
    }
}

/// A TOML value as Helm's values hold it: integers as `int64` (BurntSushi's TOML decodes
/// them so), floats as `float64`, dates as their text.
fn toml_json(v: toml::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        toml::Value::String(s) => J::String(s),
        toml::Value::Integer(i) => J::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
        toml::Value::Boolean(b) => J::Bool(b),
        toml::Value::Datetime(d) => J::String(d.to_string()),
        toml::Value::Array(a) => J::Array(a.into_iter().map(toml_json).collect()),
        toml::Value::Table(t) => J::Object(t.into_iter().map(|(k, v)| (k, toml_json(v))).collect()),
    }
}

/// `toToml`: BurntSushi's TOML encoder, which Helm's `toToml` uses, on a map (anything else is
/// an empty document). Works on the template's Go-typed values: the encoder writes a `float64`
/// as Go's shortest `%g` with a decimal point (`1.0`, `1e+06`) and an `int` without.
pub fn to_toml(v: &Value) -> String {
    let mut out = String::new();
    if let Value::Map(m) = v {
        toml_table(&mut out, &m.borrow(), "", 0);
    }
    out
}

fn toml_table(out: &mut String, m: &BTreeMap<String, Value>, path: &str, depth: usize) {
    // BurntSushi's encoder indents a table's keys by two spaces per level below the top.
    let pad = "  ".repeat(depth);
    let mut tables: Vec<(&String, &Value)> = Vec::new();
    for (k, v) in m {
        match v {
            Value::Map(_) => tables.push((k, v)),
            Value::Nil => {}
            other => out.push_str(&format!("{pad}{k} = {}\n", toml_value(other))),
        }
    }
    for (k, inner) in tables {
        let full = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        out.push_str(&format!("\n{pad}[{full}]\n"));
        if let Value::Map(inner) = inner {
            toml_table(out, &inner.borrow(), &full, depth + 1);
        }
    }
}

fn toml_value(v: &Value) -> String {
    match v {
        Value::Str(s) => super::gostring::go_quote(s),
        Value::List(items) => {
            let items: Vec<String> = items.iter().map(toml_value).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Bytes(bytes) => {
            let items: Vec<String> = bytes.iter().map(u8::to_string).collect();
            format!("[{}]", items.join(", "))
        }
        // `floatAddDecimal(strconv.FormatFloat(f, 'g', -1, 64))`: `.0` where the digits have
        // neither a point nor an exponent.
        Value::Float(f) if f.is_nan() => "nan".to_string(),
        Value::Float(f) if f.is_infinite() => if *f > 0.0 { "inf" } else { "-inf" }.to_string(),
        Value::Float(f) => {
            let digits = format_float_g(*f);
            if digits.contains(['.', 'e']) {
                digits
            } else {
                digits + ".0"
            }
        }
        Value::Int(i) | Value::Int64(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Nil => String::new(),
        Value::Map(_) => v.to_json().to_string(),
        Value::Object(o) => toml_value(&o.to_data()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml_of(json: &str) -> String {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        to_yaml(&Value::from_json(&v))
    }

    #[test]
    fn go_yaml_v2_layout() {
        assert_eq!(
            yaml_of(r#"{"b": [1, {"x": "y", "z": [true]}], "a": {"c": null, "d": {}}}"#),
            "a:\n  c: null\n  d: {}\nb:\n- 1\n- x: \"y\"\n  z:\n  - true\n"
        );
    }

    #[test]
    fn strings_are_quoted_as_go_yaml_quotes_them() {
        for (s, want) in [
            ("plain", "plain"),
            ("true", "\"true\""),
            ("1.5", "\"1.5\""),
            ("", "\"\""),
            ("*.example.com", "'*.example.com'"),
            ("a: b", "'a: b'"),
            ("2024-01-01", "\"2024-01-01\""),
            ("with space", "with space"),
            ("it's", "it's"),
        ] {
            assert_eq!(string_text(s, 0, Some(0)), want, "{s}");
        }
    }
}
