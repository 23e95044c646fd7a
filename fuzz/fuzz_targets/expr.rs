//! Any input as a CEL expression and a JSON object: compiled against the rules' registry and
//! evaluated.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::compile_and_eval(data);
});
