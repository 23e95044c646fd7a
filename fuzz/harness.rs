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
use winguard::manifest::Sources;

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
