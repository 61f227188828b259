//! The gate's answer for CI: JUnit XML (one test case per check) and a Markdown summary for
//! `$GITHUB_STEP_SUMMARY` or a pull-request comment.

use super::{num, CheckResult, Outcome};
use crate::report::html::esc;
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
        return "judges trusted".to_string();
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
/// the reason for each failed check.
pub fn junit(about: &About<'_>, out: &Outcome) -> String {
    let tests = out.checks.len();
    let mut s = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    s += &format!(
        "<testsuites name=\"calibench gate\" tests=\"{tests}\" failures=\"{}\" errors=\"0\">\n",
        out.failed
    );
    s += &format!(
        "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
        esc(about.experiment),
        out.failed
    );
    s += "    <properties>\n";
    for (name, value) in [
        ("run_id", about.run_id),
        ("policy", about.policy),
        ("report", about.report.unwrap_or("")),
    ] {
        if !value.is_empty() {
            s += &format!(
                "      <property name=\"{name}\" value=\"{}\"/>\n",
                esc(value)
            );
        }
    }
    s += "    </properties>\n";
    let class = format!("calibench.gate.{}", about.experiment);
    for c in &out.checks {
        let open = format!(
            "    <testcase classname=\"{}\" name=\"{}\"",
            esc(&class),
            esc(&c.name)
        );
        if c.passed {
            s += &format!("{open}/>\n");
        } else {
            let kind = if c.message.starts_with("not found") {
                "not_found"
            } else if c.bounds.is_empty() {
                "untrustworthy"
            } else {
                "bound"
            };
            s += &format!(
                "{open}>\n      <failure type=\"{kind}\" message=\"{}\">{}</failure>\n    </testcase>\n",
                esc(&c.message),
                esc(&format!(
                    "{}: value {}; bound {}; {}",
                    c.metric,
                    shown(&c.value),
                    bounds(c),
                    c.message
                ))
            );
        }
    }
    s += "  </testsuite>\n</testsuites>\n";
    s
}

/// A Markdown summary: the verdict, then a table of every check.
///
/// CI posts it as a pull-request comment, so every string in it (experiment, paths, check
/// names, reasons that quote item ids) is escaped: nothing can add a row, a heading, a link or
/// a comment that would hide the FAIL rows below it.
pub fn markdown(about: &About<'_>, out: &Outcome) -> String {
    let cell = |t: &str| text::markdown(t);
    let code = |t: &str| text::markdown_code(t);
    let verdict = if out.passed {
        format!("passed ({} checks)", out.checks.len())
    } else {
        format!("**failed** ({} of {} checks)", out.failed, out.checks.len())
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
    s += ".\n\n| | check | value | bound | why |\n|---|---|---|---|---|\n";
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
