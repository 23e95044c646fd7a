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

fn write_map(out: &mut String, m: &serde_json::Map<String, serde_json::Value>, indent: usize) {
    for (k, v) in m {
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
                for (k, v) in m {
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
                write_scalar(out, scalar, indent + 2);
                out.push('\n');
            }
        }
    }
}

fn key_text(k: &str) -> String {
    if k.is_empty() {
        return "\"\"".into();
    }
    string_text(k, 0, true)
}

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
        serde_json::Value::String(s) => out.push_str(&string_text(s, indent, false)),
        serde_json::Value::Object(_) => out.push_str("{}"),
        serde_json::Value::Array(_) => out.push_str("[]"),
    }
}

/// A string as go-yaml v2 writes it: plain when it reads back as the same string, else quoted;
/// a literal block when it has line breaks (not for keys).
fn string_text(s: &str, indent: usize, key: bool) -> String {
    if s.contains('\n') && !key {
        if let Some(block) = literal_block(s, indent) {
            return block;
        }
        return double_quoted(s);
    }
    if !resolves_as_string(s) {
        return double_quoted(s);
    }
    let a = analyze(s);
    if a.plain_allowed {
        s.to_string()
    } else if a.single_quoted_allowed {
        format!("'{}'", s.replace('\'', "''"))
    } else {
        double_quoted(s)
    }
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
    // A leading space would be read as indentation: the indent is then given explicitly.
    let indicator = if s.starts_with(' ') { "2" } else { "" };
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
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\0' => out.push_str("\\0"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{b}' => out.push_str("\\v"),
            '\u{c}' => out.push_str("\\f"),
            '\u{1b}' => out.push_str("\\e"),
            '\u{85}' => out.push_str("\\N"),
            '\u{a0}' => out.push_str("\\_"),
            '\u{2028}' => out.push_str("\\L"),
            '\u{2029}' => out.push_str("\\P"),
            c if !printable(c) => {
                let n = c as u32;
                if n <= 0xff {
                    out.push_str(&format!("\\x{n:02X}"));
                } else if n <= 0xffff {
                    out.push_str(&format!("\\u{n:04X}"));
                } else {
                    out.push_str(&format!("\\U{n:08X}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn printable(c: char) -> bool {
    let n = c as u32;
    n == 0x9
        || n == 0xA
        || n == 0xD
        || (0x20..=0x7E).contains(&n)
        || n == 0x85
        || (0xA0..=0xD7FF).contains(&n)
        || ((0xE000..=0xFFFD).contains(&n) && n != 0xFEFF)
        || (0x10000..=0x10FFFF).contains(&n)
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
pub fn parse_values(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Nil);
    }
    let v = crate::chart::values::read_yaml(text).map_err(|e| {
        format!(
            "error converting YAML to JSON: yaml: line {}: {}",
            e.line, e.message
        )
    })?;
    Ok(Value::from_json(&v))
}

/// `toToml`: tables of scalars, lists and sub-tables (what BurntSushi's encoder writes).
pub fn to_toml(v: &Value) -> String {
    let mut out = String::new();
    if let serde_json::Value::Object(m) = v.to_json() {
        toml_table(&mut out, &m, "", 0);
    }
    out
}

fn toml_table(
    out: &mut String,
    m: &serde_json::Map<String, serde_json::Value>,
    path: &str,
    depth: usize,
) {
    // BurntSushi's encoder indents a table's keys by two spaces per level below the top.
    let pad = "  ".repeat(depth);
    let mut tables: BTreeMap<&String, &serde_json::Map<String, serde_json::Value>> =
        BTreeMap::new();
    for (k, v) in m {
        match v {
            serde_json::Value::Object(inner) => {
                tables.insert(k, inner);
            }
            serde_json::Value::Null => {}
            other => {
                out.push_str(&format!("{pad}{k} = {}\n", toml_value(other)));
            }
        }
    }
    for (k, inner) in tables {
        let full = if path.is_empty() {
            k.clone()
        } else {
            format!("{path}.{k}")
        };
        out.push_str(&format!("\n{pad}[{full}]\n"));
        toml_table(out, inner, &full, depth + 1);
    }
}

fn toml_value(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => super::funcs::go_quote(s),
        serde_json::Value::Array(a) => {
            let items: Vec<String> = a.iter().map(toml_value).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
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
            assert_eq!(string_text(s, 0, false), want, "{s}");
        }
    }
}
