//! `winguard fix` and `winguard mutate`: reading inputs and writing results around
//! [`crate::fix::fix_sources`].

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::fix::{FixOptions, FixedFinding, FixedSource, fix_sources};
use crate::manifest::{Overlays, Sources, read_inputs};
use crate::report::{Format, RenderOptions, render};
use crate::write::FileWriter;

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
    let mut failed = !sources.errors.is_empty();
    // A fix may reach, through a symbolic link, only files under what the user named: the
    // paths to fix and the values files.
    let roots: Vec<PathBuf> = args
        .paths
        .iter()
        .chain(&args.chart.values)
        .cloned()
        .collect();
    let mut writer = FileWriter::within(&roots);
    // A chart's files are templates: a fix goes into the values file that sets what it
    // changes, or is a change to a template, which is described.
    let mut chart_fixed = 0;
    let mut chart_files = 0;
    let mut unfixable = false;
    for chart in &sources.charts {
        match fix_chart(&setup, &args, chart, &output, &mut writer) {
            Ok(outcome) => {
                chart_fixed += outcome.fixed;
                chart_files += outcome.files;
                unfixable |= outcome.unfixable;
                failed |= outcome.failed;
            }
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    for e in &sources.errors {
        eprintln!("error: {e}");
    }
    let opts = FixOptions {
        unsafe_fixes: args.unsafe_fixes,
    };
    let results = fix_sources(&setup, &sources.texts, opts);
    output.image_warnings(&setup);
    let mut changed_files = chart_files;
    let mut fixes = chart_fixed;
    // What is on disk afterwards, to lint again: the old text where it could not be written.
    let mut texts_after = Vec::with_capacity(results.len());
    for r in &results {
        for e in &r.errors {
            eprintln!("error: {e}");
            failed = true;
        }
        for refused in &r.refused {
            eprintln!("warning: {refused}");
        }
        let written = r.changed()
            && if args.diff {
                super::out(&unified_diff(r));
                true
            } else {
                write_fixed(&mut writer, &r.source.name, &r.contents(), &r.fixed)
            };
        if written {
            changed_files += 1;
            fixes += r.fixed.len();
            texts_after.push(r.text.clone());
        } else {
            failed |= r.changed();
            texts_after.push(r.source.text.clone());
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
        } else if changed_files > 0 || unfixable {
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
        .zip(texts_after)
        .map(|(r, text)| {
            std::sync::Arc::new(crate::manifest::SourceText::new(
                r.source.name.clone(),
                text,
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
            fail_on: args.fail_on.threshold(),
            // As `lint`: the report on stdout, what could not be read on stderr.
            list_input_errors: false,
        };
        eprint!(
            "{}",
            crate::report::input_errors_text(&report, output.color_stderr())
        );
        super::out(&render(Format::Text, &report, &opts));
    }
    if failed || !report.errors.is_empty() {
        EXIT_ERROR
    } else if args.fail_on.fails(&report) || unfixable {
        EXIT_FINDINGS
    } else {
        EXIT_CLEAN
    }
}

/// What fixing one chart did.
struct ChartOutcome {
    fixed: usize,
    files: usize,
    /// Some fix could not be written anywhere (or needs a template changed).
    unfixable: bool,
    failed: bool,
}

/// `winguard fix CHART`: renders it, lints the output, and writes each fix into the values
/// file that sets what it changes (or shows it, with `--diff`); fixes that need a template
/// changed, or that no file can take, are said, and make the exit code 1.
fn fix_chart(
    setup: &crate::policy::Policy,
    args: &FixArgs,
    chart: &Path,
    output: &Output,
    writer: &mut FileWriter,
) -> Result<ChartOutcome, crate::error::Error> {
    let rendered = args.chart.render_located(
        chart,
        &args.release_name,
        Some(&setup.config.kubernetes_version),
    )?;
    let shown = chart.display().to_string();
    let mut sources = Sources::default();
    crate::manifest::read_rendered(
        &shown,
        rendered.text,
        rendered.locations,
        rendered.origins,
        &mut sources,
    );
    let source = sources.texts[0].clone();
    let report = lint_sources(setup, sources);
    let opts = FixOptions {
        unsafe_fixes: args.unsafe_fixes,
    };
    let fixes = crate::fix::chart_fixes(&report, &source, opts);
    let mut outcome = ChartOutcome {
        fixed: 0,
        files: 0,
        unfixable: !fixes.template_changes.is_empty() || !fixes.not_expressible.is_empty(),
        failed: false,
    };
    for change in &fixes.template_changes {
        output.note(&format!("{shown}: {change}"));
    }
    for why in &fixes.not_expressible {
        output.note(&format!("{shown}: cannot be fixed in values: {why}"));
    }
    for edit in &fixes.edits {
        if args.diff {
            let mut diff = similar::TextDiff::from_lines(&edit.before, &edit.after)
                .unified_diff()
                .context_radius(3)
                .header(&edit.file, &edit.file)
                .to_string();
            if !diff.ends_with('\n') {
                diff.push('\n');
            }
            super::out(&diff);
        } else if !write_fixed(writer, &edit.file, &edit.after, &edit.fixed) {
            outcome.failed = true;
            continue;
        }
        outcome.files += 1;
        outcome.fixed += edit.fixed.len();
    }
    Ok(outcome)
}

/// Writes a fixed file and says what was fixed in it, or why it was not written (a read-only
/// file, or a link out of the paths given, is a note: it was left alone on purpose). Either
/// way the run fails, as for an input that could not be read.
fn write_fixed(writer: &mut FileWriter, file: &str, text: &str, fixed: &[FixedFinding]) -> bool {
    match writer.write(Path::new(file), text.as_bytes()) {
        Ok(()) => {
            for f in fixed {
                eprintln!("fixed {file}: {}: {} ({})", f.object, f.title, f.rule);
            }
            true
        }
        // Printed even with --quiet: it is why the exit code says the run failed.
        Err(e) if e.is_refusal() => {
            eprintln!("note: {e}");
            false
        }
        Err(e) => {
            eprintln!("error: {e}");
            false
        }
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
    output.image_warnings(&setup);
    let mut failed = false;
    let mut out = std::io::stdout().lock();
    for r in &results {
        if let Err(e) = out.write_all(r.contents().as_bytes()) {
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
        for refused in &r.refused {
            eprintln!("warning: {refused}");
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
