//! The gate's answer for CI: JUnit XML (one test case per check) and a Markdown summary for
//! `$GITHUB_STEP_SUMMARY` or a pull-request comment.

use super::{num, CheckResult, Outcome};
use crate::text;
use serde_json::Value;

/// What the answer is about.
#[derive(Clone, Debug)]
pub struct About<'a> {
    pub experiment: &'a str,
    pub run_id: &'a str,
    /// Where the policy came from.
    pub policy: &'a str,
    /// The run's report, when there is one to point at.
    pub report: Option<&'a str>,
    /// The run's decision in words, when it has one.
    pub decision: Option<&'a str>,
    /// The caveats of the run's inputs (docs/reference.md, "The input ledger").
    pub caveats: &'a [crate::corpus::ledger::Caveat],
}

/// The value as the human summary and the Markdown print it.
pub fn shown(v: &Value) -> String {
    match v {
        Value::Null => "not found".to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), num),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The bounds of a check as one phrase: `min 0.667`, `max_increase 0.02 (accepted 0.13)`.
pub fn bounds(c: &CheckResult) -> String {
    if c.bounds.is_empty() {
        return match c.metric.as_str() {
            "decision.verdict" => "the required decision",
            _ => "judges trusted",
        }
        .to_string();
    }
    let parts: Vec<String> = c
        .bounds
        .iter()
        .map(|b| format!("{} {}", b.kind, num(b.limit)))
        .collect();
    match &c.accepted {
        Some(a) => format!("{} (accepted {})", parts.join(", "), shown(a)),
        None => parts.join(", "),
    }
}

/// JUnit XML: one `<testsuite>` for the run, one `<testcase>` per check, a `<failure>` with
/// the reason for each failed check. Written by quick-junit, which escapes every text and
/// drops what XML cannot hold.
pub fn junit(about: &About<'_>, out: &Outcome) -> Result<String, quick_junit::SerializeError> {
    use quick_junit::{NonSuccessKind, Property, Report, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new(about.experiment);
    for (name, value) in [
        ("run_id", about.run_id),
        ("policy", about.policy),
        ("report", about.report.unwrap_or("")),
    ] {
        if !value.is_empty() {
            suite.add_property(Property::new(name, value));
        }
    }
    // How many caveats of each kind the run's inputs carry: `caveats.drift = 1`.
    let mut kinds: std::collections::BTreeMap<&str, usize> = Default::default();
    for c in about.caveats {
        *kinds.entry(c.kind()).or_default() += 1;
    }
    for (kind, n) in kinds {
        suite.add_property(Property::new(format!("caveats.{kind}"), n.to_string()));
    }
    let class = format!("calibench.gate.{}", about.experiment);
    for c in &out.checks {
        let status = if c.passed {
            TestCaseStatus::success()
        } else {
            let kind = c.failure.map_or("failed", |f| f.name());
            let mut status = TestCaseStatus::non_success(NonSuccessKind::Failure);
            status
                .set_type(kind)
                .set_message(c.message.as_str())
                .set_description(format!(
                    "{}: value {}; bound {}; {}",
                    c.metric,
                    shown(&c.value),
                    bounds(c),
                    c.message
                ));
            status
        };
        let mut case = TestCase::new(c.name.as_str(), status);
        case.set_classname(class.as_str());
        suite.add_test_case(case);
    }
    let mut report = Report::new("calibench gate");
    report.add_test_suite(suite);
    report.to_string()
}

/// A Markdown summary: the verdict, then a table of every check.
///
/// CI posts it as a pull-request comment, so every string in it (experiment, paths, check
/// names, reasons that quote item ids) is escaped: nothing can add a row, a heading, a link or
/// a comment that would hide the FAIL rows below it.
pub fn markdown(about: &About<'_>, out: &Outcome) -> String {
    let cell = |t: &str| text::markdown(t);
    let code = |t: &str| text::markdown_code(t);
    let checks = text::count(out.checks.len() as u64, "check", "checks");
    let verdict = if out.passed {
        format!("passed ({checks})")
    } else {
        format!("**failed** ({} of {checks})", out.failed)
    };
    let mut s = format!(
        "### calibench gate: {} — {verdict}\n\nRun {}, policy {}",
        cell(about.experiment),
        code(about.run_id),
        code(about.policy)
    );
    if let Some(r) = about.report {
        s += &format!(", report {}", code(r));
    }
    s += ".\n\n";
    if let Some(d) = about.decision {
        s += &format!("**Decision:** {}.\n\n", cell(d));
    }
    if !about.caveats.is_empty() {
        s += &format!(
            "**{}** on the inputs:\n\n",
            text::count(about.caveats.len() as u64, "Caveat", "Caveats")
        );
        for c in about.caveats {
            s += &format!(
                "- **{}** ({}): {}\n",
                cell(c.title()),
                code(c.kind()),
                cell(&c.sentence())
            );
        }
        s += "\n";
    }
    s += "| | check | value | bound | why |\n|---|---|---|---|---|\n";
    for c in &out.checks {
        s += &format!(
            "| {} | {} | {} | {} | {} |\n",
            if c.passed { "pass" } else { "**FAIL**" },
            if c.name == c.metric {
                code(&c.name)
            } else {
                format!("{} ({})", cell(&c.name), code(&c.metric))
            },
            cell(&shown(&c.value)),
            cell(&bounds(c)),
            cell(&c.message)
        );
    }
    s + "\n"
}
