//! `--set`, `--set-string`, `--set-json` arguments (one a line) and a values file, parsed and
//! merged as `winguard render` does.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::parse_values(data);
});
