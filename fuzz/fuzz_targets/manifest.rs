//! Any input as a manifest file: read, parsed and linted with the embedded rules.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::lint_bytes(data);
});
