//! `cargo bench --bench render`: renders the differential test charts (every case of
//! `testdata/charts/cases.yaml` that renders) with winguard's engine and with Helm 4's engine
//! (PyPI `helm-python-sdk`, in-process, so no process start-up is counted) in the same run, and
//! times `winguard lint CHART` on a typical chart, start-up included. Figures go to
//! BENCHMARKS.md. (A bench binary, not a timed test.)
//!
//! Options (env): `WINGUARD_BENCH_ROUNDS` (default 15): passes over all cases, per engine.

#[global_allocator]
static GLOBAL: winguard::allocator::Mimalloc = winguard::allocator::Mimalloc;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::{Value as Json, json};

use helm_engine::values::floats;
use helm_engine::{RenderOptions, load_chart, render_chart};

/// The test set-up's tools (`python3 tests/run.py`: the venv with helm-python-sdk).
#[path = "../tests/common/mod.rs"]
mod common;

use common::root;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rounds: usize = std::env::var("WINGUARD_BENCH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    let text = std::fs::read_to_string(root().join("testdata/charts/cases.yaml")).unwrap();
    let all: Vec<Json> = serde_yaml_ng::from_str(&text).unwrap();
    let cases: Vec<Json> = all
        .into_iter()
        // Cases that render; not the random ones (compared by shape; their time is key
        // generation, the same work in both engines).
        // Nor the cases that only the helm binary checks, or that spend their time in key
        // derivation (`bench: false`: scrypt, bcrypt), which is the same work in both engines.
        .filter(|c| c.get("error").is_none() && c.get("compare") != Some(&json!("shape")))
        .filter(|c| c.get("only").is_none() && c.get("bench") != Some(&json!(false)))
        .map(|c| {
            json!({
                "chart": root().join("testdata/charts").join(c["chart"].as_str().unwrap()),
                "values": c.get("values").cloned().unwrap_or(json!({})),
                "release": c.get("release").cloned().unwrap_or(json!("release-name")),
                "namespace": c.get("namespace").cloned().unwrap_or(json!("default")),
            })
        })
        .collect();

    // winguard: charts loaded once, then timed passes of rendering every case.
    let loaded: Vec<_> = cases
        .iter()
        .map(|c| {
            let chart = load_chart(Path::new(c["chart"].as_str().unwrap())).unwrap();
            let values = match floats(c["values"].clone()) {
                Json::Object(m) => m,
                _ => unreachable!(),
            };
            let opts = RenderOptions {
                release_name: c["release"].as_str().unwrap().into(),
                namespace: c["namespace"].as_str().unwrap().into(),
                ..RenderOptions::default()
            };
            (chart, values, opts)
        })
        .collect();
    // Interleaved blocks (winguard's passes, then Helm's), as this machine's speed drifts over
    // seconds: each block's ratio compares passes run close together.
    const BLOCKS: usize = 5;
    let per_block = rounds.div_ceil(BLOCKS);
    let mut bytes = 0;
    let (mut ours, mut helm, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..BLOCKS {
        let mut block = Vec::new();
        // One untimed pass first, as on Helm's side: the block starts after the other engine
        // has run, with its caches cold.
        for (chart, values, opts) in &loaded {
            render_chart(chart, values, opts).unwrap();
        }
        for _ in 0..per_block {
            let t = Instant::now();
            bytes = 0;
            for (chart, values, opts) in &loaded {
                let r = render_chart(chart, values, opts).unwrap();
                bytes += r.files.values().map(String::len).sum::<usize>();
            }
            block.push(t.elapsed().as_secs_f64());
        }
        let helm_block = helm_passes(&cases, per_block);
        ratios.push(median(helm_block.clone()) / median(block.clone()));
        ours.extend(block);
        helm.extend(helm_block);
    }
    let (o, h) = (median(ours), median(helm));
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    println!(
        "{} cases ({} KiB of output per pass), {} passes each in {BLOCKS} interleaved blocks, median pass:",
        cases.len(),
        bytes / 1024,
        per_block * BLOCKS
    );
    println!("  winguard engine: {:8.2} ms", o * 1e3);
    println!(
        "  Helm 4 engine:   {:8.2} ms (helm-python-sdk, in-process)",
        h * 1e3
    );
    println!(
        "  winguard is {:.1}x faster (medians); per block {:.1}x to {:.1}x, median {:.1}x",
        h / o,
        sorted[0],
        sorted[sorted.len() - 1],
        median(ratios)
    );

    // `winguard lint CHART`, start-up included, on a typical chart.
    let exe = root().join("target/release/winguard");
    if exe.exists() {
        let chart = root().join("testdata/charts/windows-iis");
        let mut walls = Vec::new();
        for _ in 0..50 {
            let t = Instant::now();
            let status = Command::new(&exe)
                .arg("lint")
                .arg(&chart)
                .stdout(Stdio::null())
                .status()
                .unwrap();
            walls.push(t.elapsed().as_secs_f64());
            assert!(status.code().is_some_and(|c| c <= 1));
        }
        println!(
            "  winguard lint testdata/charts/windows-iis: median {:.1} ms wall over 50 runs",
            median(walls) * 1e3
        );
    } else {
        println!("  (build target/release/winguard to time `winguard lint CHART`)");
    }
}

/// `passes` timed passes of Helm's engine over `cases`, in-process in Python (the charts are
/// loaded and rendered once before timing, as winguard's are).
fn helm_passes(cases: &[Json], passes: usize) -> Vec<f64> {
    let mut py = Command::new(common::python_exe())
        .arg(root().join("benches/helm_render_timing.py"))
        .arg(passes.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python with helm-python-sdk (python3 tests/run.py sets it up)");
    py.stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(cases).unwrap().as_bytes())
        .unwrap();
    let out = py.wait_with_output().unwrap();
    assert!(out.status.success(), "the Helm timing script failed");
    serde_json::from_slice(&out.stdout).unwrap()
}
