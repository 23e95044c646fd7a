//! `winguard fix` and `winguard mutate`: reading inputs and writing results around
//! [`crate::fix::fix_sources`].

use std::io::Write;
use std::path::Path;

use crate::fix::{FixOptions, FixedSource, fix_sources};
use crate::manifest::{Overlays, Sources, read_inputs};
use crate::report::{Format, RenderOptions, render};

use super::{EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, FixArgs, MutateArgs, Output, lint_sources};

/// `winguard fix PATH…`.
pub(super) fn run_fix(args: FixArgs, output: Output) -> u8 {
    let setup = match super::load_reporting(&args.setup) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if args.paths.iter().any(|p| p.as_os_str() == "-") {
        eprintln!("error: `fix` edits files; use `winguard mutate` to fix a stream on stdin");
        return EXIT_ERROR;
    }
    let sources = read_inputs(&args.paths, args.max_file_size, Overlays::Read);
    for note in &sources.notes {
        output.note(note);
    }
    // A chart's files are templates: the fixes belong in its values or templates, or in its
    // rendered output (`winguard mutate` as Helm's post-renderer).
    for chart in &sources.charts {
        output.note(&format!(
            "{} is a Helm chart, left as it is: lint it with `winguard lint`, or apply the \
             fixes to its rendered output with `helm template … | winguard mutate` (or as a \
             post-renderer)",
            chart.display()
        ));
    }
    let mut failed = !sources.errors.is_empty();
    for e in &sources.errors {
        eprintln!("error: {e}");
    }
    let opts = FixOptions {
        unsafe_fixes: args.unsafe_fixes,
    };
    let results = fix_sources(&setup, &sources.texts, opts);
    let mut changed_files = 0;
    let mut fixes = 0;
    for r in &results {
        for e in &r.errors {
            eprintln!("error: {e}");
            failed = true;
        }
        if !r.changed() {
            continue;
        }
        changed_files += 1;
        fixes += r.fixed.len();
        if args.diff {
            super::out(&unified_diff(r));
            continue;
        }
        match crate::atomic::write_atomically(Path::new(&r.source.name), r.text.as_bytes()) {
            Ok(()) => {
                for f in &r.fixed {
                    eprintln!(
                        "fixed {}: {}: {} ({})",
                        r.source.name, f.object, f.title, f.rule
                    );
                }
            }
            Err(e) => {
                eprintln!("error: cannot write {}: {e}", r.source.name);
                failed = true;
            }
        }
    }
    let verb = if args.diff { "would fix" } else { "fixed" };
    if !output.quiet {
        eprintln!(
            "winguard fix: {verb} {fixes} finding{} in {changed_files} file{}",
            plural(fixes),
            plural(changed_files)
        );
    }
    if args.diff {
        return if failed {
            EXIT_ERROR
        } else if changed_files > 0 {
            EXIT_FINDINGS
        } else {
            EXIT_CLEAN
        };
    }
    // What is left: the fixed texts linted again, reported as `lint` reports them.
    let mut after = Sources {
        files: results.len(),
        ..Sources::default()
    };
    after.texts = results
        .iter()
        .map(|r| {
            std::sync::Arc::new(crate::manifest::SourceText::new(
                r.source.name.clone(),
                r.text.clone(),
            ))
        })
        .collect();
    let report = lint_sources(&setup, after);
    if !report.findings.is_empty() || !report.errors.is_empty() {
        let opts = RenderOptions {
            color: output.color_stdout(),
            rules: &setup.rules,
            working_dir: None,
            config_file: setup.config.path.as_deref(),
            quiet: output.quiet,
        };
        super::out(&render(Format::Text, &report, &opts));
    }
    if failed || !report.errors.is_empty() {
        EXIT_ERROR
    } else if args.fail_on.fails(&report) {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

/// `winguard mutate`: stdin to stdout. Whatever happens, every document read is written out
/// (unfixed ones as they came), so a post-renderer never drops part of a release.
pub(super) fn run_mutate(args: MutateArgs, output: Output) -> u8 {
    let setup = match super::load_reporting(&args.setup) {
        Ok(s) => s,
        Err(code) => return code,
    };
    let sources = read_inputs(
        &[std::path::PathBuf::from("-")],
        args.max_file_size,
        Overlays::Read,
    );
    if !sources.errors.is_empty() {
        for e in &sources.errors {
            eprintln!("error: {e}");
        }
        return EXIT_ERROR;
    }
    let opts = FixOptions {
        unsafe_fixes: args.unsafe_fixes,
    };
    let results = fix_sources(&setup, &sources.texts, opts);
    let mut failed = false;
    let mut out = std::io::stdout().lock();
    for r in &results {
        if let Err(e) = out.write_all(r.text.as_bytes()) {
            eprintln!("error: cannot write to stdout: {e}");
            return EXIT_ERROR;
        }
        for f in r.fixed.iter().filter(|_| !output.quiet) {
            eprintln!("winguard mutate: {}: {} ({})", f.object, f.title, f.rule);
        }
        for e in &r.errors {
            eprintln!("error: {e}");
            failed = true;
        }
    }
    if failed { EXIT_ERROR } else { EXIT_CLEAN }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The change to one file as a unified diff (`--diff`).
fn unified_diff(r: &FixedSource) -> String {
    let mut diff = similar::TextDiff::from_lines(&r.source.text, &r.text)
        .unified_diff()
        .context_radius(3)
        .header(&r.source.name, &r.source.name)
        .to_string();
    if !diff.ends_with('\n') {
        diff.push('\n');
    }
    diff
}
