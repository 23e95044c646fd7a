//! `--format junit`: JUnit XML (via `quick-junit`), one test case per object and rule that fired,
//! and one per input error, so CI systems list them as tests: a finding at or above `--fail-on`
//! (and every input error) fails its case, one below it passes with the finding as its output,
//! as the exit code counts them.

use quick_junit::{NonSuccessKind, Report as JReport, TestCase, TestCaseStatus, TestSuite};

use super::Report;
use crate::rules::Severity;

pub(super) fn render(report: &Report, fail_on: Option<Severity>) -> String {
    let mut suite = TestSuite::new("winguard");
    for f in &report.findings {
        let description = format!(
            "{}:{}:{}: {} [{}] {}",
            f.file,
            f.line,
            f.column,
            f.finding.severity.as_str(),
            f.finding.rule,
            f.finding.full_message()
        );
        let fails = fail_on.is_some_and(|t| f.finding.severity >= t);
        let status = if fails {
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status.set_message(f.finding.full_message());
            status.set_type(f.finding.severity.as_str());
            status.set_description(description.clone());
            status
        } else {
            TestCaseStatus::success()
        };
        let mut case = TestCase::new(format!("{} {}", f.finding.rule, f.object.label()), status);
        case.set_classname(f.file.to_string());
        if !fails {
            case.set_system_out(description);
        }
        suite.add_test_case(case);
    }
    for e in &report.errors {
        let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
        status.set_message(e.message.clone());
        status.set_description(e.to_string());
        let mut case = TestCase::new(format!("input {}", e.file), status);
        case.set_classname(e.file.clone());
        suite.add_test_case(case);
    }
    if report.findings.is_empty() && report.errors.is_empty() {
        let mut case = TestCase::new("winguard lint", TestCaseStatus::success());
        case.set_classname("winguard");
        suite.add_test_case(case);
    }
    let mut r = JReport::new("winguard");
    r.add_test_suite(suite);
    r.to_string().unwrap_or_default()
}
