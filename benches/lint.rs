//! `cargo bench --bench lint`: parse-only vs full lint throughput on ≥ 50 MB of generated
//! manifests, in one run. Figures go to BENCHMARKS.md. (A bench binary, not a timed test.)
//!
//! Options (env): `WINGUARD_BENCH_MB` (default 64), `WINGUARD_BENCH_DIR` — also write the corpus
//! there as files, for the checkov comparison and for timing the CLI. `WINGUARD_BENCH_ONLY` =
//! `parse`, `lint` or `setup`: run just that once, untimed, for counting instructions with
//! callgrind (`setup` is the corpus and rule loading both others include; see BENCHMARKS.md).
//! `WINGUARD_BENCH_ROUNDS` (any value): print every round's times. `WINGUARD_BENCH_RULE=NAME`:
//! only that rule on (`none`: none), for one rule's instructions against the floor.

mod corpus;
mod kept_rule;

// The same allocator as the `winguard` binary (src/main.rs).
#[global_allocator]
static GLOBAL: winguard::allocator::Mimalloc = winguard::allocator::Mimalloc;

use std::sync::Arc;

use rayon::prelude::*;
use std::time::Instant;

use winguard::cli::{Policy, lint_sources};
use winguard::config::Config;
use winguard::manifest::{SourceText, Sources, parse_source};

/// Runs `f` once, timed.
fn timed<T>(f: impl FnOnce() -> T) -> (f64, T) {
    let t = Instant::now();
    let out = f();
    (t.elapsed().as_secs_f64(), out)
}

/// Rounds of the two measurements, interleaved: this machine's speed drifts by tens of percent
/// over seconds, and timing all parse runs before all lint runs let a drift pass for a
/// difference between them.
const ROUNDS: usize = 7;

fn main() {
    let mb: usize = std::env::var("WINGUARD_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let files = corpus::corpus(mb * 1024 * 1024, 512 * 1024);
    let bytes: usize = files.iter().map(String::len).sum();
    let file_count = files.len();
    if let Ok(dir) = std::env::var("WINGUARD_BENCH_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        for (i, f) in files.iter().enumerate() {
            std::fs::write(format!("{dir}/charts-{i:04}.yaml"), f).unwrap();
        }
        eprintln!("wrote {} files to {dir}", files.len());
    }
    let mib = bytes as f64 / (1024.0 * 1024.0);
    // The goals are in MB/s (10^6 bytes); the corpus is sized in MiB.
    let mb_total = bytes as f64 / 1e6;

    let only = std::env::var("WINGUARD_BENCH_ONLY").ok();

    // Both measurements start from the same texts in memory, as `winguard lint` has them after
    // reading its inputs: copying the files inside one timing and not the other measured the
    // copy (and the fresh memory it faults in), not the linting.
    let texts: Vec<Arc<SourceText>> = files
        .into_iter()
        .enumerate()
        .map(|(i, text)| Arc::new(SourceText::new(format!("charts-{i}.yaml"), text)))
        .collect();

    // Both measurements parse files in parallel, as `winguard lint` does.
    let parse_only = || {
        texts
            .par_iter()
            .map(|src| parse_source(src).0.len())
            .sum::<usize>()
    };

    let rules = winguard::policy::builtin_rules().unwrap();
    let mut config = Config::default();
    // `WINGUARD_BENCH_RULE=NAME`: only that rule on (`none`: every rule off), for one rule's
    // cost against the floor under callgrind.
    if let Some(kept) = kept_rule::from_env() {
        kept_rule::keep_only(&rules, &mut config, kept.as_deref());
    }
    let setup = Policy::new(rules, config).unwrap();
    // The same path as `winguard lint` after reading the files: `lint_sources`.
    let full_lint = || {
        let sources = Sources {
            texts: texts.clone(),
            files: texts.len(),
            ..Sources::default()
        };
        lint_sources(&setup, sources)
    };
    match only.as_deref() {
        Some("parse") => return println!("{} objects", parse_only()),
        Some("lint") => return println!("{} findings", full_lint().findings.len()),
        Some("setup") => return println!("{} rules", setup.rules.rules.len()),
        Some(other) => panic!("WINGUARD_BENCH_ONLY: `{other}` is not parse, lint or setup"),
        None => {}
    }
    let (mut parse_times, mut lint_times, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    let (mut objects, mut findings) = (0, 0);
    for round in 0..ROUNDS {
        let (p, n) = timed(parse_only);
        // The report is returned, so freeing it falls outside the timing, as in `winguard
        // lint`, which exits without freeing it; it is freed before the next round, so no round
        // runs with an earlier round's report still in memory.
        let (l, report) = timed(full_lint);
        assert!(report.errors.is_empty(), "{:?}", report.errors.first());
        findings = report.findings.len();
        drop(report);
        if std::env::var_os("WINGUARD_BENCH_ROUNDS").is_some() {
            eprintln!(
                "round {round}: parse {p:.3} s, lint {l:.3} s, {:.2}x",
                l / p
            );
        }
        parse_times.push(p);
        lint_times.push(l);
        ratios.push(l / p);
        objects = n;
    }
    let best = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
    let (parse_s, lint_s) = (best(&parse_times), best(&lint_times));
    ratios.sort_by(f64::total_cmp);

    println!("corpus: {mib:.1} MiB in {file_count} files, {objects} objects");
    println!(
        "parse only: {parse_s:.3} s  {:.1} MiB/s = {:.1} MB/s  {:.0} objects/s",
        mib / parse_s,
        mb_total / parse_s,
        objects as f64 / parse_s
    );
    println!(
        "full lint:  {lint_s:.3} s  {:.1} MiB/s = {:.1} MB/s  {:.0} objects/s  ({findings} findings)",
        mib / lint_s,
        mb_total / lint_s,
        objects as f64 / lint_s
    );
    println!(
        "full lint / parse only: {:.2}x (best times); per round {:.2}x to {:.2}x, median {:.2}x ({ROUNDS} interleaved rounds)",
        lint_s / parse_s,
        ratios[0],
        ratios[ROUNDS - 1],
        ratios[ROUNDS / 2]
    );
}
