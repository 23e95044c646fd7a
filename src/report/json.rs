//! `--format json`: the contract in DESIGN.md, serialised straight from the report (no
//! intermediate `Value` tree: large runs have tens of thousands of findings).

use serde::Serialize;

use super::{ObjectRef, Report};
use crate::rules::{Applicability, Severity};

#[derive(Serialize)]
struct Output<'r> {
    version: u32,
    /// Always empty when serialised: the findings are written into it by [`write`].
    findings: Vec<FindingOut<'r>>,
    errors: Vec<ErrorOut<'r>>,
    summary: Summary,
}

#[derive(Serialize)]
struct FindingOut<'r> {
    rule: &'r str,
    severity: Severity,
    message: FullMessage<'r>,
    file: &'r str,
    line: u32,
    column: u32,
    object: &'r ObjectRef,
    pointer: &'r str,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<&'r [json_patch::PatchOperation]>,
    #[serde(rename = "fixTitle", skip_serializing_if = "Option::is_none")]
    fix_title: Option<&'r str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    applicability: Option<Applicability>,
    /// The Helm template named by the `# Source:` comment above the object, when `file` is a
    /// file (or stdin) of rendered output.
    #[serde(skip_serializing_if = "Option::is_none")]
    template: Option<&'r str>,
    /// For a chart winguard rendered, where `file`/`line` name the template place that wrote
    /// the offending text: the line of the rendered output (`winguard render`) it is on.
    #[serde(skip_serializing_if = "Option::is_none")]
    rendered: Option<u32>,
    /// The chart value the action that wrote it printed, and where that value was set.
    #[serde(skip_serializing_if = "Option::is_none")]
    values: Option<ValuesOut<'r>>,
}

#[derive(Serialize)]
struct ValuesOut<'r> {
    path: &'r str,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'r str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    flag: Option<&'r str>,
}

/// A finding's message with its target-OS note ([`crate::engine::Finding::full_message`]),
/// written into the output as it is serialised rather than built as a string per finding.
struct FullMessage<'r>(&'r crate::engine::Finding);

impl Serialize for FullMessage<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match &self.0.target {
            Some(t) => s.collect_str(&format_args!("{}; {t}", self.0.message)),
            None => s.serialize_str(&self.0.message),
        }
    }
}

#[derive(Serialize)]
struct ErrorOut<'r> {
    file: &'r str,
    line: Option<u32>,
    column: Option<u32>,
    message: &'r str,
}

#[derive(Serialize)]
struct Summary {
    files: usize,
    objects: usize,
    errors: usize,
    warnings: usize,
}

pub(super) fn render(report: &Report) -> String {
    let mut out = Vec::new();
    write(report, &mut out).expect("writing to memory does not fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// Writes the report as it is serialised (a large run's report is megabytes: building it as a
/// string first would hold a second copy of it in memory).
///
/// The findings, most of the output, are serialised in parallel, a window at a time, each
/// finding by sonic-rs as a document of its own and indented to its place in the list: written
/// on one thread, it would run alone after the rules had finished, with the other threads idle.
/// The output is byte for byte what one pretty serialisation of the whole writes (a test holds
/// it so): JSON strings carry no raw newline, so every newline of a finding's text starts one of
/// its lines, and each gets the list's indentation.
pub(super) fn write(report: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    // The envelope with an empty list, written whole when there are no findings, else cut
    // where they go: `"findings": [` | `]…`.
    let head =
        sonic_rs::to_vec_pretty(&output(report, Vec::new())).map_err(std::io::Error::other)?;
    if report.findings.is_empty() {
        w.write_all(&head)?;
    } else {
        const EMPTY_LIST: &[u8] = b"\"findings\": []";
        let cut = memchr::memmem::find(&head, EMPTY_LIST)
            .map(|at| at + EMPTY_LIST.len() - 1)
            .ok_or_else(|| std::io::Error::other("the report's envelope has no findings list"))?;
        w.write_all(&head[..cut])?;
        // One buffer per part, reused window after window: the memory stays one window's.
        let mut parts: Vec<Vec<u8>> = vec![Vec::new(); WINDOW.div_ceil(PART)];
        for (w_index, window) in report.findings.chunks(WINDOW).enumerate() {
            use rayon::prelude::*;
            let used = window.len().div_ceil(PART);
            parts[..used]
                .par_iter_mut()
                .zip(window.par_chunks(PART))
                .enumerate()
                .try_for_each(|(p_index, (text, part))| {
                    let first = w_index == 0 && p_index == 0;
                    findings_text(part, first, text)
                })?;
            for text in &parts[..used] {
                w.write_all(text)?;
            }
        }
        w.write_all(b"\n  ")?;
        w.write_all(&head[cut..])?;
    }
    w.write_all(b"\n")?;
    w.flush()
}

/// The report's whole output with `findings` as its list of findings.
fn output<'r>(report: &'r Report, findings: Vec<FindingOut<'r>>) -> Output<'r> {
    Output {
        version: 1,
        findings,
        errors: report
            .errors
            .iter()
            .map(|e| ErrorOut {
                file: &e.file,
                line: e.line,
                column: e.column,
                message: &e.message,
            })
            .collect(),
        summary: Summary {
            files: report.files,
            objects: report.objects,
            errors: report.count(Severity::Error),
            warnings: report.count(Severity::Warning),
        },
    }
}

/// How many findings are serialised before they are written out (bounding the memory the
/// parallel pieces hold), and how many one task serialises.
const WINDOW: usize = 2048;
const PART: usize = 256;

/// The findings as items of the report's list: each after `,` (or, for the very first, nothing)
/// and a newline, indented two levels, as the pretty printer writes an array's items.
/// Written into `out`, which is cleared first.
fn findings_text(
    findings: &[super::Located],
    first: bool,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    const ITEM_INDENT: &[u8] = b"    ";
    out.clear();
    let mut one = Vec::with_capacity(1024);
    for (i, f) in findings.iter().enumerate() {
        one.clear();
        sonic_rs::to_writer_pretty(&mut one, &finding_out(f)).map_err(std::io::Error::other)?;
        out.extend_from_slice(if first && i == 0 { b"\n" } else { b",\n" });
        out.extend_from_slice(ITEM_INDENT);
        let mut line_start = 0;
        for newline in memchr::memchr_iter(b'\n', &one) {
            out.extend_from_slice(&one[line_start..=newline]);
            out.extend_from_slice(ITEM_INDENT);
            line_start = newline + 1;
        }
        out.extend_from_slice(&one[line_start..]);
    }
    Ok(())
}

fn finding_out(f: &super::Located) -> FindingOut<'_> {
    let fix = f.finding.fix.as_ref();
    FindingOut {
        rule: &f.finding.rule,
        severity: f.finding.severity,
        message: FullMessage(&f.finding),
        file: &f.file,
        line: f.line,
        column: f.column,
        object: f.object.as_ref(),
        pointer: &f.finding.pointer,
        fix: fix.map(|x| x.patch.as_slice()),
        fix_title: fix.map(|x| x.title.as_str()),
        applicability: fix.map(|x| x.applicability),
        template: f.template.as_deref(),
        rendered: f.origin.as_ref().map(|_| f.stream_line),
        values: f
            .origin
            .as_ref()
            .and_then(|o| o.value.as_ref())
            .map(|v| ValuesOut {
                path: &v.path,
                file: v.file.as_deref(),
                line: v.line,
                flag: v.flag.as_deref(),
            }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report as one pretty serialisation of the whole writes it: what `write` must match.
    fn whole(report: &Report) -> Vec<u8> {
        let out = output(report, report.findings.iter().map(finding_out).collect());
        let mut text = serde_json::to_vec_pretty(&out).unwrap();
        text.push(b'\n');
        text
    }

    #[test]
    fn findings_written_in_parallel_read_as_one_serialisation() {
        let setup = crate::policy::Policy::new(
            crate::policy::builtin_rules().unwrap(),
            crate::config::Config::default(),
        )
        .unwrap();
        // Findings with fixes, notes and errors beside them, from real rules.
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/rules/deprecated-os-label/fail-selector-and-affinity.yaml"
        ))
        .unwrap();
        let mut report = crate::pipeline::lint_text(&setup, "bad.yaml", &text);
        report.errors.push(crate::error::Error {
            kind: crate::error::ErrorKind::Input,
            file: "x.yaml".into(),
            line: Some(3),
            column: None,
            message: "an error quoting \"findings\": [] and a newline\n".into(),
        });
        let seeds = report.findings.clone();
        assert!(
            seeds.iter().any(|f| f.finding.fix.is_some()),
            "the seed findings include a fix"
        );
        let check = |report: &Report| {
            let mut written = Vec::new();
            write(report, &mut written).unwrap();
            assert!(
                written == whole(report),
                "{} findings: the parallel writer differs from one serialisation",
                report.findings.len()
            );
        };
        check(&report);
        // Past a window and through parts of every size, with every escape in the text.
        report.findings = (0..WINDOW + PART + 7)
            .map(|i| {
                let mut f = seeds[i % seeds.len()].clone();
                f.finding.message = format!("line\nbreak \"{i}\" \\ tab\t \u{1} é");
                f
            })
            .collect();
        check(&report);
        report.findings.clear();
        check(&report);
    }
}
