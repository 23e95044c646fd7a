//! Any input as YAML text: the fast block reader, wherever it takes a document, reads what the
//! full parser reads, in go-yaml v3's reading and in v2's (a difference is a crash).
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::yaml_readers(data);
});
