//! The bias audit through `calibench run` (docs/guides/trust.md, "The bias audit"): the
//! `judge-bias` example fails its arm check and withholds; `[trust] bias = "warn"` makes the
//! same failure a caveat on the decision; `"off"` runs no audit.

mod common;

use std::path::Path;

use common::{outcome, run_into};
use serde_json::Value;

/// The judge-bias example copied to `dir`, with `bias = "withhold"` replaced by `setting`.
fn corpus(dir: &Path, setting: &str) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/judge-bias");
    common::copy_dir(&from, dir);
    let exp = dir.join("experiment.toml");
    let text = std::fs::read_to_string(&exp).unwrap();
    assert!(text.contains("bias = \"withhold\""));
    std::fs::write(&exp, text.replace("bias = \"withhold\"", setting)).unwrap();
}

fn run(dir: &Path) -> (i32, String, String, Value) {
    let runs = dir.join("runs");
    let (code, out, err) = outcome(run_into(&runs, dir).args(["--no-plots", "--bootstrap", "200"]));
    let run_dir = std::fs::read_dir(&runs)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let m = serde_json::from_str(&std::fs::read_to_string(run_dir.join("metrics.json")).unwrap())
        .unwrap();
    (code, out, err, m)
}

#[test]
fn a_panel_swayed_by_the_stated_confidence_is_withheld_warned_or_left_alone() {
    let dir = tempfile::tempdir().unwrap();

    let w = dir.path().join("withhold");
    corpus(&w, "bias = \"withhold\"");
    let (code, out, err, m) = run(&w);
    assert_eq!(code, 0, "{err}");
    assert_eq!(m["trust"]["trustworthy"], false);
    let reason = m["trust"]["trust_reasons"][0].as_str().unwrap();
    assert!(
        reason.starts_with("(5) bias: the judges score the same finding +0.04")
            && reason
                .contains("higher under the treatment (68 shared findings): that alone could give"),
        "{reason}"
    );
    assert_eq!(m["bias"]["arm"]["failed"], true);
    for check in ["length", "position", "self"] {
        assert_eq!(m["bias"][check]["failed"], false, "{check}: {}", m["bias"]);
        assert!(m["bias"][check]["p"].is_number(), "{check} was made");
    }
    assert_eq!(m["bias"]["same_model"], serde_json::json!(["`judge-a`"]));
    assert_eq!(m["lift"]["withheld"], true);
    assert_eq!(m["decision"]["verdict"], "withheld");
    assert!(out.contains("(5) bias:"), "{out}");
    let report_dir = w.join("reports");
    let report = std::fs::read_dir(&report_dir)
        .unwrap()
        .flatten()
        .find(|e| e.path().is_dir())
        .unwrap()
        .path();
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        md.contains("Bias audit: judges that agree can still agree on a bias."),
        "{md}"
    );

    // warn: the same failure is a caveat; the judges' figures stand.
    let v = dir.path().join("warn");
    corpus(&v, "bias = \"warn\"");
    let (code, out, err, m) = run(&v);
    assert_eq!(code, 0, "{err}");
    assert_eq!(m["trust"]["trustworthy"], true);
    assert_eq!(m["lift"]["withheld"], false);
    let caveat = &m["decision"]["caveats"][0];
    assert_eq!(caveat["kind"], "bias");
    assert!(
        caveat["sentence"]
            .as_str()
            .unwrap()
            .starts_with("the judges may be biased: the judges score the same finding"),
        "{caveat}"
    );
    assert!(out.contains("— with 1 caveat"), "{out}");
    assert!(err.contains("the judges may be biased"), "{err}");

    // off: no audit.
    let o = dir.path().join("off");
    corpus(&o, "bias = \"off\"");
    let (code, _, err, m) = run(&o);
    assert_eq!(code, 0, "{err}");
    assert!(m.get("bias").is_none(), "{}", m["bias"]);
    assert_eq!(m["trust"]["trustworthy"], true);

    // A value it does not know is refused, naming the key.
    let bad = dir.path().join("bad");
    corpus(&bad, "bias = \"loud\"");
    let (code, _, err) = outcome(run_into(bad.join("runs"), &bad).args(["--no-plots"]));
    assert_eq!(code, 2);
    assert!(err.contains("bias"), "{err}");
}
