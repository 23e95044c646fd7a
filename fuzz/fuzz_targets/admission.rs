//! Any input as an AdmissionReview body, answered on /validate and /mutate.
#![no_main]

#[path = "../harness.rs"]
mod harness;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    harness::review_both(data);
});
