//! What each fuzz target does with its input, shared with `tests/fuzz_regressions.rs` (which
//! replays the inputs fuzzing found): one definition, used by both through `#[path]`.

#![allow(dead_code)]

use std::sync::{Arc, OnceLock};

use helm_engine::load::{load_files, values_files};
use helm_engine::loaded::File;
use helm_engine::origin::ValuesSources;
use helm_engine::render::{template_output, template_output_traced};
use helm_engine::values::{SetKind, Values, apply_set, merge_maps, parse_values_file};
use helm_engine::{RenderOptions, render_chart};
use winguard::admission::{Endpoint, review};
use winguard::cli::{Policy, lint_sources};
use winguard::config::Config;
use winguard::manifest::{Sources, split_documents};
use winguard::value::block::{read_document, read_document_go_yaml_v2};
use winguard::value::document::{read_documents, read_documents_go_yaml_v2};
use winguard::value::yaml::{
    ParsedDoc, PosNode, parse_stream_at, parse_stream_go_yaml_v2, parse_stream_go_yaml_v2_at,
};

/// The rules and config every target evaluates with, loaded once.
fn setup() -> &'static Policy {
    static SETUP: OnceLock<Policy> = OnceLock::new();
    SETUP.get_or_init(|| {
        Policy::new(
            winguard::policy::builtin_rules().expect("embedded rules"),
            Config::default(),
        )
        .expect("default setup")
    })
}

fn file(name: &str, data: &[u8]) -> File {
    File {
        name: name.to_string(),
        data: Arc::from(data),
    }
}

/// A chart of one template and one values file (the input split at its first NUL), rendered
/// and printed as `winguard render` does.
pub fn render_template(data: &[u8]) {
    let (template, values) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let files = vec![
        file(
            "Chart.yaml",
            b"apiVersion: v2\nname: fuzz\nversion: 0.1.0\n",
        ),
        file("values.yaml", values),
        file("templates/t.yaml", template),
        file(
            "templates/_helpers.tpl",
            b"{{- define \"fuzz.name\" -}}{{ .Chart.Name }}{{- end -}}",
        ),
    ];
    let Ok(chart) = load_files(files, "fuzz", "fuzz") else {
        return;
    };
    if let Ok(rendered) = render_chart(&chart, &Values::new(), &RenderOptions::default()) {
        let _ = template_output(&rendered, true, false, &mut Vec::new());
        // The trace too: marks, the values they name, holes, and where each lands.
        let values = ValuesSources::new(Vec::new(), Vec::new(), values_files(&chart));
        let _ = template_output_traced(&rendered, true, false, &values, &mut Vec::new());
    }
}

/// `--set` arguments, one a line (`s:` for `--set-string`, `j:` for `--set-json`), applied
/// over the whole input read as a values file.
pub fn parse_values(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut values = parse_values_file(&text, "values.yaml").unwrap_or_default();
    for line in text.lines() {
        let (kind, arg) = match line.split_at_checked(2) {
            Some(("s:", rest)) => (SetKind::String, rest),
            Some(("j:", rest)) => (SetKind::Json, rest),
            _ => (SetKind::Typed, line),
        };
        let mut set = Values::new();
        if apply_set(&mut set, arg, kind).is_ok() {
            merge_maps(&mut values, set);
        }
        // The values-path reader: any key, escaped, reads back as that one key.
        let _ = helm_engine::values_path::values_path_tokens(arg);
        let escaped = helm_engine::values_path::escape_values_key(line);
        assert_eq!(
            helm_engine::values_path::parse_values_path(&escaped),
            Ok(vec![(line.to_string(), Vec::new())]),
            "{escaped:?}"
        );
    }
}

/// The input as a manifest file: read, parsed, checked and linted.
pub fn lint_bytes(data: &[u8]) {
    let mut sources = Sources::default();
    winguard::manifest::read_bytes("fuzz.yaml", data.to_vec(), false, &mut sources);
    let _ = lint_sources(setup(), sources);
}

/// The input as an AdmissionReview body, on both endpoints.
pub fn review_both(data: &[u8]) {
    let _ = review(setup(), Endpoint::Validate, data);
    let _ = review(setup(), Endpoint::Mutate, data);
}

/// A CEL expression (the input up to its first NUL) compiled against the rules' registry with
/// `object` declared, and evaluated over the rest read as JSON (or `{}`).
pub fn compile_and_eval(data: &[u8]) {
    use winguard::expr::{Activation, Compiler, Type, Val};
    let (text, json) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let text = String::from_utf8_lossy(text);
    let object: winguard::value::Value = serde_json::from_slice::<serde_json::Value>(json)
        .map(winguard::value::Value::from)
        .unwrap_or_else(|_| winguard::value::Value::Object(Default::default()));
    let mut compiler = Compiler::new(winguard::policy::registry());
    let slot = compiler.declare("object", Type::Dyn);
    if let Ok(program) = compiler.compile(&text) {
        let mut act = Activation::new(compiler.slots(), None);
        act.set(slot, Val::Ref(&object));
        if let Ok(v) = program.eval(&act) {
            let _ = v.display();
        }
    }
}

/// The input as YAML text: wherever the fast block reader takes a document, in either reading
/// (go-yaml v3's for manifests, v2's for Helm's values files), it must read exactly what the
/// full parser reads there (a panic names the difference).
pub fn yaml_readers(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        fast_reader_agrees("fuzz input", text);
    }
}

/// Where the two trees first differ, as a path of child indexes.
fn first_difference(a: &PosNode, b: &PosNode, path: &mut Vec<usize>) -> Option<String> {
    if (a.line, a.col, a.key_line, a.key_col) != (b.line, b.col, b.key_line, b.key_col) {
        return Some(format!(
            "at {path:?}: fast {}:{} key {}:{}, full {}:{} key {}:{}",
            a.line, a.col, a.key_line, a.key_col, b.line, b.col, b.key_line, b.key_col
        ));
    }
    if a.children.len() != b.children.len() {
        return Some(format!("at {path:?}: child counts differ"));
    }
    for (i, (x, y)) in a.children.iter().zip(&b.children).enumerate() {
        path.push(i);
        if let Some(d) = first_difference(x, y, path) {
            return Some(d);
        }
        path.pop();
    }
    None
}

/// Checks every document of `text` in both dialects (go-yaml v3's, as manifests are read, and
/// v2's, as Helm reads values files); returns (documents, documents the fast reader took).
pub fn fast_reader_agrees(name: &str, text: &str) -> (usize, usize) {
    let mut fast_count = 0;
    let spans = split_documents(text);
    for span in &spans {
        let doc_text = &text[span.start..span.end];
        let v2 = read_document_go_yaml_v2(doc_text, span.line_offset);
        let Some(fast) = read_document(doc_text, span.line_offset) else {
            assert!(
                v2.is_none(),
                "{name}: the v2 reading took a document the v3 reading left:\n{doc_text}"
            );
            continue;
        };
        fast_count += 1;
        let full = parse_stream_at(doc_text, span.line_offset);
        same_as_full(name, "v3", doc_text, &fast, full);
        // (The v2 reading leaves a document whose keys repeat once typed, `y` and `true`.)
        if let Some(v2) = v2 {
            let full = parse_stream_go_yaml_v2_at(doc_text, span.line_offset);
            same_as_full(name, "v2", doc_text, &v2, full);
        }
    }
    // The whole text through the entry points callers use (Helm reads a values file whole, and
    // a chart's template origins read a rendered file whole): markers, several documents and
    // all, each must give what the full parser gives.
    let readings = [
        ("v3", read_documents(text, 0), parse_stream_at(text, 0)),
        (
            "v2",
            read_documents_go_yaml_v2(text),
            parse_stream_go_yaml_v2(text),
        ),
    ];
    for (reading, (docs, error), (full, full_error)) in readings {
        assert_eq!(
            error, full_error,
            "{name}: {reading} whole-text errors differ:\n{text}"
        );
        assert_eq!(
            docs.len(),
            full.len(),
            "{name}: {reading} whole-text document counts"
        );
        for (doc, full) in docs.iter().zip(&full) {
            assert_eq!(
                doc.value, full.value,
                "{name}: {reading} whole-text values:\n{text}"
            );
            assert_eq!(
                doc.pos, full.pos,
                "{name}: {reading} whole-text positions:\n{text}"
            );
            assert_eq!(
                doc.start_line, full.start_line,
                "{name}: {reading} whole-text starts"
            );
        }
    }
    (spans.len(), fast_count)
}

/// The fast reader's document against the full parser's reading (`reading`) of the same text:
/// the same value, the same positions, the same first line.
fn same_as_full(
    name: &str,
    reading: &str,
    doc_text: &str,
    fast: &ParsedDoc,
    (full, error): (Vec<ParsedDoc>, Option<winguard::value::yaml::YamlError>),
) {
    assert_eq!(
        error, None,
        "{name}: the fast reader ({reading}) accepted a document the full parser rejects:\n{doc_text}"
    );
    assert_eq!(full.len(), 1, "{name}: one document expected");
    let full = &full[0];
    assert_eq!(
        fast.value, full.value,
        "{name}: {reading} values differ in\n{doc_text}"
    );
    if let Some(d) = first_difference(&fast.pos, &full.pos, &mut Vec::new()) {
        panic!("{name}: {reading} positions differ {d} in\n{doc_text}");
    }
    assert_eq!(
        fast.start_line, full.start_line,
        "{name}: {reading} start lines"
    );
}
