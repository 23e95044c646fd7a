//! A chart with one template and one values file, both from the input (split at the first
//! NUL byte), rendered natively: no template or value may panic, abort or hang.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::render_template(data);
});
