//! Replays every input under `testdata/fuzz/<target>/` through its fuzz target's code
//! (`fuzz/harness.rs`): the crashes fuzzing and the corpus found, and the seeds. Each must
//! return; a panic fails the test, an abort or a stack overflow fails the whole binary.

#[path = "../fuzz/harness.rs"]
mod harness;

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/fuzz")
        .join(target);
    let mut found: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no inputs in {}", dir.display());
    found
}

fn replay(target: &str, run: fn(&[u8])) {
    for (name, data) in inputs(target) {
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(outcome.is_ok(), "{name} panics");
    }
}

#[test]
fn template_inputs_render_or_fail_cleanly() {
    replay("template", harness::render_template);
}

#[test]
fn values_inputs_parse_or_fail_cleanly() {
    replay("values", harness::parse_values);
}

#[test]
fn manifest_inputs_lint_or_fail_cleanly() {
    replay("manifest", harness::lint_bytes);
}

#[test]
fn admission_inputs_are_answered() {
    replay("admission", harness::review_both);
}

#[test]
fn expr_inputs_compile_and_evaluate_or_fail_cleanly() {
    replay("expr", harness::compile_and_eval);
}

#[test]
fn yaml_reader_inputs_read_alike() {
    replay("yaml_readers", harness::yaml_readers);
}
