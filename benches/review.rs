//! `cargo bench --bench review`: what one admission review costs the webhook apart from HTTP and
//! TLS — `winguard::admission::review` on the realistic 4.5 KB Pod CREATE
//! (`testdata/admission/pod-windows-realistic-v1.json`), for `/validate` and `/mutate`, with the
//! embedded rules and with every rule turned off (the floor: reading the review, checking its
//! shape and answering). Figures go to BENCHMARKS.md. (A bench binary, not a timed test.)
//!
//! Options (env): `WINGUARD_BENCH_REVIEWS` (default 20,000 per measurement).
//! `WINGUARD_BENCH_ONLY` = `validate`, `mutate`, `validate-no-rules` or `setup`: run just that
//! case (or only the loading), untimed, for counting instructions with callgrind: run it twice
//! with different `WINGUARD_BENCH_REVIEWS` and divide the difference by the difference in
//! reviews, which cancels the loading. `WINGUARD_BENCH_RULE=NAME` keeps that one rule on in
//! `validate-no-rules`: its cost is the difference from the floor.
//!
//! Two more `WINGUARD_BENCH_ONLY` cases read the same body into a document and drop it, nothing
//! left out (no review is answered): `read`, winguard's value tree owning its strings
//! (`yaml_value::parse`), `read-borrowed`, the same borrowing them from the body as a review's
//! object is read (`yaml_value::parse::parse_borrowed`), and `read-sonic`, sonic-rs's arena
//! document, the baseline for what a document read per request can cost (BENCHMARKS.md, "One
//! admission review").

// The same allocator as the `winguard` binary (src/main.rs).
#[global_allocator]
static GLOBAL: winguard::allocator::Mimalloc = winguard::allocator::Mimalloc;

mod kept_rule;

use std::time::Instant;

use winguard::admission::{Endpoint, review};
use winguard::cli::{Policy, load_rule_set};
use winguard::config::Config;

/// Interleaved rounds: this machine's speed drifts by tens of percent over seconds.
const ROUNDS: usize = 5;

/// A case: its name, endpoint and whether the rules are on.
struct Case {
    name: &'static str,
    endpoint: Endpoint,
    rules_on: bool,
}

const CASES: [Case; 3] = [
    Case {
        name: "validate",
        endpoint: Endpoint::Validate,
        rules_on: true,
    },
    Case {
        name: "mutate",
        endpoint: Endpoint::Mutate,
        rules_on: true,
    },
    Case {
        name: "validate-no-rules",
        endpoint: Endpoint::Validate,
        rules_on: false,
    },
];

/// The setup `winguard serve` loads by default, or the same with every rule `off`.
fn setup(rules_on: bool) -> Policy {
    let rules = load_rule_set(&[]).expect("embedded rules load");
    let mut config = Config::default();
    if !rules_on {
        // `WINGUARD_BENCH_RULE`: this one rule stays on, for its own cost against the floor.
        let kept = kept_rule::from_env().flatten();
        kept_rule::keep_only(&rules, &mut config, kept.as_deref());
    }
    Policy::new(rules, config).expect("valid setup")
}

/// The review body as the API server sends it: compact JSON.
fn body() -> Vec<u8> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/testdata/admission/pod-windows-realistic-v1.json"
    );
    let text = std::fs::read_to_string(path).expect("the realistic review is in testdata");
    // Compacted with its keys in the file's order, which is the API server's: Go's encoder
    // writes struct fields in declaration order, not sorted (as `serde_json::Value` would).
    let value: sonic_rs::Value = sonic_rs::from_str(&text).expect("it is JSON");
    sonic_rs::to_vec(&value).expect("it serialises")
}

/// Answers `n` reviews; returns the bytes answered (so the work cannot be optimised away) and
/// checks the answer is a real verdict, not an error.
fn run(setup: &Policy, endpoint: Endpoint, body: &[u8], n: usize) -> usize {
    let mut answered = 0;
    for _ in 0..n {
        let answer = review(setup, endpoint, body);
        assert!(
            answer.error.is_none(),
            "the review was read: {:?}",
            answer.error
        );
        answered += answer.body.len();
    }
    answered
}

/// The document reads `WINGUARD_BENCH_ONLY` can name.
fn document_read(case: &str) -> Option<fn(&str) -> usize> {
    match case {
        "read" => Some(read_value_tree),
        "read-borrowed" => Some(read_borrowed_tree),
        "read-sonic" => Some(read_sonic_document),
        _ => None,
    }
}

// Each reads the whole body into its document, counts the top-level keys (so the read cannot be
// optimised away) and drops it; not inlined, so callgrind can count them by name
// (`--toggle-collect='review::read_*'`).

#[inline(never)]
fn read_value_tree(text: &str) -> usize {
    let parsed = winguard::value::parse::parse(text, &[]).expect("the body is JSON");
    parsed.value.as_object().map_or(0, |m| m.len())
}

#[inline(never)]
fn read_borrowed_tree(text: &str) -> usize {
    let parsed = winguard::value::parse::parse_borrowed(text, &[]).expect("the body is JSON");
    parsed.value.as_object().map_or(0, |m| m.len())
}

#[inline(never)]
fn read_sonic_document(text: &str) -> usize {
    use sonic_rs::JsonContainerTrait;
    let value: sonic_rs::Value = sonic_rs::from_str(text).expect("the body is JSON");
    value.as_object().map_or(0, |m| m.len())
}

fn main() {
    let reviews: usize = std::env::var("WINGUARD_BENCH_REVIEWS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let body = body();
    let with_rules = setup(true);
    let without_rules = setup(false);
    let setup_of = |case: &Case| {
        if case.rules_on {
            &with_rules
        } else {
            &without_rules
        }
    };
    if let Ok(only) = std::env::var("WINGUARD_BENCH_ONLY") {
        if let Some(read) = document_read(&only) {
            let text = std::str::from_utf8(&body).expect("the body is UTF-8");
            let nodes: usize = (0..reviews).map(|_| read(text)).sum();
            eprintln!("{only}: {reviews} reads, {nodes} top-level keys");
        } else if only != "setup" {
            let case = CASES
                .iter()
                .find(|c| c.name == only)
                .unwrap_or_else(|| panic!("WINGUARD_BENCH_ONLY: no case `{only}`"));
            let answered = run(setup_of(case), case.endpoint, &body, reviews);
            eprintln!(
                "{}: {reviews} reviews, {answered} bytes answered",
                case.name
            );
        }
        return;
    }
    println!(
        "admission::review on a {}-byte Pod CREATE, {reviews} reviews per round, {ROUNDS} rounds",
        body.len()
    );
    // One untimed pass per case first (caches, the allocator's first pages).
    for case in &CASES {
        run(setup_of(case), case.endpoint, &body, reviews / 10);
    }
    let mut micros: Vec<Vec<f64>> = vec![Vec::new(); CASES.len()];
    for _ in 0..ROUNDS {
        for (case, times) in CASES.iter().zip(&mut micros) {
            let started = Instant::now();
            run(setup_of(case), case.endpoint, &body, reviews);
            times.push(started.elapsed().as_secs_f64() * 1e6 / reviews as f64);
        }
    }
    for (case, times) in CASES.iter().zip(&mut micros) {
        times.sort_by(f64::total_cmp);
        println!(
            "{:<18} median {:6.2} µs per review (min {:.2}, max {:.2}): {:>7.0} reviews/s on one core",
            case.name,
            times[ROUNDS / 2],
            times[0],
            times[ROUNDS - 1],
            1e6 / times[ROUNDS / 2]
        );
    }
}
