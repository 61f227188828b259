//! `calibench sweep` end to end (docs/guides/threshold-sweep.md): a small review corpus written
//! by hand, every figure of every grid point worked out below, the hold-out partition, the
//! comparison with the current setting, and every refusal (exit 2, nothing written).

mod common;

use std::path::Path;

use common::{calibench, json_of, outcome};
use serde_json::{json, Value};

/// Four documents, one reviewer, anchored confidences; judge composites on five findings.
///
/// | target | finding | confidence | composite |
/// |---|---|---|---|
/// | t1 | f1 | 100 | 0.9 |
/// | t1 | f2 | 75 | 0.6 |
/// | t1 | f3 | 50 | 0.3 |
/// | t2 | f4 | 75 | 0.8 |
/// | t3 | f5 | 50 | — |
/// | t3 | f6 | 25 | — |
/// | t4 | f7 | 100 | 0.4 |
fn corpus(dir: &Path) {
    std::fs::write(
        dir.join("experiment.toml"),
        r#"name = "tiny"
mode = "doc"
corpus = "."
bootstrap = 200

[arms.baseline]
source = "rec"
[arms.baseline.review]
policy = "anchored"

[arms.treatment]
source = "rec"
[arms.treatment.review]
policy = "anchored"
"#,
    )
    .unwrap();
    let finding = |id: &str, conf: u32, section: &str| {
        format!(
            r#"{{"id":"{id}","title":"Finding {id} is about {section}","severity":"P2","autofix_class":"manual","confidence":{conf},"section":"{section}","finding_type":"error"}}"#
        )
    };
    let line = |target: &str, findings: &[String]| {
        format!(
            r#"{{"target":"{target}","arm":"rec","reviewer":"r","findings":[{}]}}"#,
            findings.join(",")
        )
    };
    let reviews = [
        line(
            "t1",
            &[
                finding("f1", 100, "Goals"),
                finding("f2", 75, "Rollout"),
                finding("f3", 50, "Risks"),
            ],
        ),
        line("t2", &[finding("f4", 75, "Goals")]),
        line(
            "t3",
            &[finding("f5", 50, "Goals"), finding("f6", 25, "Scope")],
        ),
        line("t4", &[finding("f7", 100, "Goals")]),
    ];
    std::fs::write(dir.join("reviews.jsonl"), reviews.join("\n") + "\n").unwrap();
    let verdict = |id: &str, c: f64| {
        let judge = |m: &str| format!(r#"{{"model":"{m}","per_dimension":{{"real":{c}}}}}"#);
        format!(
            r#"{{"arm":"rec","item_id":"{id}","verdicts":[{},{},{}]}}"#,
            judge("a"),
            judge("b"),
            judge("c")
        )
    };
    let verdicts = [
        verdict("f1", 0.9),
        verdict("f2", 0.6),
        verdict("f3", 0.3),
        verdict("f4", 0.8),
        verdict("f7", 0.4),
    ];
    std::fs::write(dir.join("verdicts.jsonl"), verdicts.join("\n") + "\n").unwrap();
}

/// [`corpus`]'s four targets, each copied `copies` times under new ids (t1-1, t1-2, …), so that
/// a hold-out has parts of at least 10 targets.
fn wide(dir: &Path, copies: usize) {
    corpus(dir);
    let widen = |file: &str, key: &str| {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let mut out = String::new();
        for k in 1..=copies {
            for line in text.lines() {
                let mut v: Value = serde_json::from_str(line).unwrap();
                let id = v[key].as_str().unwrap().to_string();
                v[key] = Value::from(format!("{id}-{k}"));
                if let Some(fs) = v["findings"].as_array_mut() {
                    for f in fs {
                        let fid = f["id"].as_str().unwrap().to_string();
                        f["id"] = Value::from(format!("{fid}-{k}"));
                    }
                }
                out += &format!("{v}\n");
            }
        }
        std::fs::write(dir.join(file), out).unwrap();
    };
    widen("reviews.jsonl", "target");
    widen("verdicts.jsonl", "item_id");
}

fn sweep(dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let mut cmd = calibench();
    cmd.arg("sweep")
        .arg(dir)
        .args(["--runs-dir"])
        .arg(dir.join("runs"))
        .arg("--reports-dir")
        .arg(dir.join("reports"))
        .args(args);
    cmd
}

/// The grid every test sweeps: the anchored rubric's actionable threshold.
const GRID: [&str; 4] = [
    "--arm",
    "treatment",
    "--vary",
    "review.actionable_from=50,75,100",
];

/// Adds a `[[sweep]]` of the actionable threshold over `values` to the experiment.
fn declare(dir: &Path, values: &str) {
    let path = dir.join("experiment.toml");
    let mut toml = std::fs::read_to_string(&path).unwrap();
    toml += &format!(
        "\n[[sweep]]\narm = \"treatment\"\nvary = {{ \"review.actionable_from\" = \"{values}\" }}\n"
    );
    std::fs::write(path, toml).unwrap();
}

/// `calibench run DIR` into the folder's own runs and reports.
fn run(dir: &Path) -> assert_cmd::Command {
    let mut cmd = calibench();
    cmd.arg("run")
        .arg(dir)
        .arg("--runs-dir")
        .arg(dir.join("runs"))
        .arg("--reports-dir")
        .arg(dir.join("reports"));
    cmd
}

/// `sweep` over [`GRID`] with `args` after it.
fn grid_sweep(dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let all: Vec<&str> = GRID.iter().chain(args).copied().collect();
    sweep(dir, &all)
}

fn value(point: &Value, figure: &str) -> Option<f64> {
    point["figures"][figure]["value"].as_f64()
}

#[test]
fn every_figure_of_every_point_of_a_small_grid() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let s = json_of(&mut grid_sweep(dir.path(), &["--json"]));
    assert_eq!(s["side"], "review");
    assert_eq!(
        s["vary"],
        serde_json::json!({"review.actionable_from": [50, 75, 100]})
    );
    assert_eq!(s["units"], 4);
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 3);
    // surfaced (the six findings at 50 or more) never moves; the gate only moves findings
    // between actionable and FYI. Precision is the mean composite of the judged actionable
    // ones; recall, of the three confirmed (≥ 0.5: f1, f2, f4), those actionable.
    // (actionable_from, actionable, fyi, judged actionable, precision, recall)
    let expected = [
        (50, 6.0, 0.0, 5.0, (0.9 + 0.6 + 0.3 + 0.8 + 0.4) / 5.0, 1.0),
        (75, 4.0, 2.0, 4.0, (0.9 + 0.6 + 0.8 + 0.4) / 4.0, 1.0),
        (100, 2.0, 4.0, 2.0, (0.9 + 0.4) / 2.0, 1.0 / 3.0),
    ];
    for (p, (at, actionable, fyi, judged, precision, recall)) in points.iter().zip(expected) {
        assert_eq!(p["values"]["review.actionable_from"], at);
        assert_eq!(value(p, "surfaced"), Some(6.0), "{p}");
        assert_eq!(value(p, "actionable"), Some(actionable), "{p}");
        assert_eq!(value(p, "fyi"), Some(fyi), "{p}");
        assert_eq!(value(p, "dropped"), Some(1.0), "{p}");
        assert_eq!(value(p, "judged_actionable"), Some(judged), "{p}");
        assert!(
            (value(p, "precision").unwrap() - precision).abs() < 1e-9,
            "{p}"
        );
        assert!((value(p, "recall").unwrap() - recall).abs() < 1e-9, "{p}");
        // No validator calls in this corpus: nothing could be rejected, and nothing is said.
        assert!(p["figures"].get("rejected").is_none(), "{p}");
        // Every interval holds its figure.
        for (name, f) in p["figures"].as_object().unwrap() {
            if let (Some(x), Some(ci)) = (f["value"].as_f64(), f["ci"].as_array()) {
                let (lo, hi) = (ci[0].as_f64().unwrap(), ci[1].as_f64().unwrap());
                assert!(
                    lo <= x + 1e-9 && x <= hi + 1e-9,
                    "{name}: {x} not in [{lo}, {hi}]"
                );
            }
        }
    }
    // The anchored rubric's own setting is 75: the current point is the second.
    assert_eq!(s["current"]["values"]["review.actionable_from"], 75);
    assert_eq!(s["current"]["figures"], points[1]["figures"]);
    // No requirement: the most actionable point, compared with the current one on every target.
    assert_eq!(s["recommended"]["index"], 0);
    assert!(s["holdout"].is_null());
    let d = &s["versus_current"]["actionable"];
    assert_eq!(d["pairs"], 4);
    assert_eq!(d["baseline"], 1.0); // (2 + 1 + 0 + 1) / 4
    assert_eq!(d["treatment"], 1.5); // (3 + 1 + 1 + 1) / 4
    assert_eq!(d["delta"], 0.5);
    // The run directory holds the table and the report.
    let run = Path::new(s["run_id"].as_str().unwrap());
    let run_dir = dir.path().join("runs").join(run);
    let csv = std::fs::read_to_string(run_dir.join("sweep.csv")).unwrap();
    assert!(
        csv.starts_with(
            "run_id,review.actionable_from,surfaced,surfaced_lo,surfaced_hi,actionable,"
        ),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 4);
    assert!(run_dir.join("sweep.parquet").is_file());
    let report = dir.path().join("reports").join(run);
    let md = std::fs::read_to_string(report.join("report.md")).unwrap();
    assert!(
        md.contains("Recommended for treatment: review.actionable_from = 50"),
        "{md}"
    );
    assert!(report.join("plots/sweep-tradeoff.png").is_file());
}

#[test]
fn a_requirement_chooses_on_one_part_and_reports_the_other() {
    let dir = tempfile::tempdir().unwrap();
    wide(dir.path(), 6);
    let s = json_of(&mut grid_sweep(
        dir.path(),
        &["--require", "fyi<=100", "--json", "--run-id", "held"],
    ));
    // A requirement brings a half hold-out: twelve targets to choose on, twelve to check on.
    assert_eq!(s["holdout"]["fraction"], 0.5);
    assert_eq!(
        (
            s["holdout"]["choosing"].as_u64(),
            s["holdout"]["held_out"].as_u64()
        ),
        (Some(12), Some(12))
    );
    let run = dir.path().join("runs/held");
    let read = |f: &str| -> Vec<String> {
        std::fs::read_to_string(run.join(f))
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    let (mut all, held) = (read("choosing.txt"), read("held_out.txt"));
    all.extend(held.iter().cloned());
    all.sort();
    let mut targets: Vec<String> = (1..=4)
        .flat_map(|t| (1..=6).map(move |k| format!("t{t}-{k}")))
        .collect();
    targets.sort();
    assert_eq!(all, targets, "a partition of the targets");
    let r = &s["recommended"];
    assert!(r["held_out"].is_object(), "{r}");
    assert!(r.get("held_out_misses").is_none(), "{r}");
    assert_eq!(r["held_out"]["meets"], true, "{r}");
    // The comparison with the current setting is on the held-out targets.
    assert_eq!(s["versus_current"]["actionable"]["pairs"], 12);
    // The same seed splits the same way.
    let again = json_of(&mut grid_sweep(
        dir.path(),
        &["--require", "fyi<=100", "--json", "--run-id", "held-again"],
    ));
    assert_eq!(
        std::fs::read_to_string(run.join("held_out.txt")).unwrap(),
        std::fs::read_to_string(dir.path().join("runs/held-again/held_out.txt")).unwrap()
    );
    assert_eq!(again["recommended"], s["recommended"]);
}

#[test]
fn no_point_meeting_the_requirements_is_an_answer_with_the_closest() {
    let dir = tempfile::tempdir().unwrap();
    wide(dir.path(), 6);
    let s = json_of(&mut grid_sweep(
        dir.path(),
        &["--require", "actionable>=100", "--holdout", "0.5", "--json"],
    ));
    assert!(s["recommended"].is_null());
    assert_eq!(s["closest"]["misses"][0], "actionable>=100");
    assert!(s["versus_current"].as_object().unwrap().is_empty());
}

#[test]
fn bad_sweeps_are_refused_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let many: Vec<String> = (0..101).map(|i| i.to_string()).collect();
    let many = many.join(",");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--vary".into(), "review.actionable_frm=50".into()],
            "did you mean `actionable_from`",
        ),
        (
            vec!["--vary".into(), "review.actionable_from=150".into()],
            "150 is off the anchor scale",
        ),
        (
            vec!["--vary".into(), "review.actionable_from=100:50:25".into()],
            "inverted",
        ),
        (
            vec!["--vary".into(), "review.actionable_from=50:100:0".into()],
            "more than 0",
        ),
        (
            vec!["--vary".into(), "review.actionable_from=".into()],
            "empty value",
        ),
        (
            vec![
                "--vary".into(),
                format!("review.actionable_from={many}"),
                "--vary".into(),
                format!("review.surface_from={many}"),
            ],
            "at most 10000",
        ),
        (
            vec![
                "--vary".into(),
                "review.actionable_from=75".into(),
                "--require".into(),
                "final_accuracy>=0.9".into(),
            ],
            "it has surfaced, actionable",
        ),
        (
            vec![
                "--vary".into(),
                "review.actionable_from=75".into(),
                "--holdout".into(),
                "0.9".into(),
            ],
            "needs at least 10 targets in each part",
        ),
        (
            vec![
                "--vary".into(),
                "review.actionable_from=75".into(),
                "--holdout".into(),
                "1".into(),
            ],
            "is not a share from 0 (no hold-out) up to but not including 1",
        ),
        (
            vec![
                "--vary".into(),
                "review.actionable_from=75".into(),
                "--prefer".into(),
                "most:actionable".into(),
            ],
            "max:METRIC or min:METRIC",
        ),
    ];
    for (args, said) in cases {
        let mut all: Vec<String> = vec!["--arm".into(), "treatment".into()];
        all.extend(args.clone());
        let refs: Vec<&str> = all.iter().map(String::as_str).collect();
        let out = sweep(dir.path(), &refs).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(said), "{args:?}: {err}");
    }
    let out = sweep(
        dir.path(),
        &["--arm", "control", "--vary", "review.actionable_from=75"],
    )
    .output()
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--arm baseline or --arm treatment"));
    let written = |d: &str| {
        std::fs::read_dir(dir.path().join(d)).map_or(0, |r| r.filter_map(Result::ok).count())
    };
    assert_eq!((written("runs"), written("reports")), (0, 0));
}

#[test]
fn a_sweep_declared_in_the_experiment_is_made_beside_the_run() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    declare(dir.path(), "50:100:25");
    let out = common::stdout_of(run(dir.path()).args(["--run-id", "r"]));
    assert!(
        out.contains("sweep: Recommended for treatment: review.actionable_from = 50"),
        "{out}"
    );
    let metrics: Value = serde_json::from_slice(
        &std::fs::read(dir.path().join("runs/r-sweep-1/metrics.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(metrics["sweep"]["points"].as_array().unwrap().len(), 3);
    // A bad table is refused as the file is read, naming the key.
    declare(dir.path(), "100:50:25");
    let out = calibench()
        .args(["validate"])
        .arg(dir.path())
        .output()
        .unwrap();
    // validate lists its problems on stdout.
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(
        said.contains("sweep[1].vary.review.actionable_from") && said.contains("inverted"),
        "{said}"
    );
}

#[test]
fn a_declared_sweep_with_a_bad_point_refuses_the_run_before_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    declare(dir.path(), "75,150");
    let out = run(dir.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--vary arms.treatment.review.actionable_from=150"),
        "{err}"
    );
    let written = std::fs::read_dir(dir.path().join("runs")).map_or(0, |r| r.count());
    assert_eq!(written, 0);
}

// Hostile round 3, folder 16: each message fits the mistake. (a) the headline counts the
// points that meet the requirements; (b) a point refused for a rule across keys is named;
// (c) a review key over query traces says so; (d) the policy cannot be varied; (e) a huge or
// tiny number is printed short; (f) a value is echoed as the one TOML value it is; (g) a list
// value holding a comma can be varied; (h) a judged figure needs verdicts; (p) a requirement
// needs an interval.
#[test]
fn each_sweep_refusal_and_headline_says_what_is_so() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let capacity = root.join("corpora/capacity-50");
    let code = root.join("corpora/code-review-ab");
    let sweep_of = |corpus: &Path, args: &[&str]| {
        let mut cmd = calibench();
        cmd.arg("sweep")
            .arg(corpus)
            .arg("--runs-dir")
            .arg(dir.path().join("runs"))
            .arg("--reports-dir")
            .arg(dir.path().join("reports"))
            .arg("--no-plots")
            .args(args);
        if !args.contains(&"--bootstrap") {
            cmd.args(["--bootstrap", "200"]);
        }
        cmd.output().unwrap()
    };
    // (a)
    let out = sweep_of(
        &capacity,
        &[
            "--arm",
            "treatment",
            "--vary",
            "confidence.recovery_threshold=0.30:0.80:0.05",
            "--require",
            "unnecessary_recovery_rate<=0.2",
            "--require",
            "final_accuracy>=0.9",
            "--prefer",
            "max:recovery_gate_rate",
            "--json",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let meeting = v["meeting"].as_u64().unwrap();
    assert!(meeting > 0 && meeting < 11, "{meeting}");
    let out = sweep_of(
        &capacity,
        &[
            "--arm",
            "treatment",
            "--vary",
            "confidence.recovery_threshold=0.30:0.80:0.05",
            "--require",
            "unnecessary_recovery_rate<=0.2",
            "--require",
            "final_accuracy>=0.9",
            "--prefer",
            "max:recovery_gate_rate",
        ],
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("of the {meeting} of 11 points meeting")),
        "{text}"
    );
    // (f), (g): values as TOML; a list with commas.
    let out = sweep_of(
        &capacity,
        &[
            "--arm",
            "treatment",
            "--vary",
            "confidence.recovery_threshold=0.5 # a note,0.6",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains('#'), "{text}");
    let out = sweep_of(
        &code,
        &[
            "--arm",
            "treatment",
            "--vary",
            r#"review.skip=["closed","reviewed"],[]"#,
            "--json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["points"].as_array().unwrap().len(), 2);
    // Refusals, each naming what is wrong.
    for (corpus, args, says) in [
        // (b)
        (&capacity, vec!["--vary", "confidence.recovery_threshold=0,0.5"], "0.2 is above recovery_threshold (0): the gate could never fire (at the grid point --vary treatment.confidence.recovery_threshold=0)"),
        // (c)
        (&capacity, vec!["--vary", "review.actionable_from=25,50"], "`review.actionable_from` is a key of the arm's review table, but the corpus replays queries (queries.jsonl)"),
        // (d)
        (&code, vec!["--vary", "review.policy=anchored,float-gates"], "`review.policy` names the arm's policy"),
        // (e)
        (&capacity, vec!["--vary", "confidence.recovery_threshold=0.3,0.5", "--holdout", "1e-300"], "--holdout 1e-300 of 50 queries"),
        // (f)
        (&capacity, vec!["--vary", "confidence.recovery_threshold=0.5\npolicy = \"flat-mean\""], "holds a line break"),
        // (p)
        (&capacity, vec!["--vary", "confidence.recovery_threshold=0.3,0.5", "--require", "final_accuracy>=0.5", "--bootstrap", "0"], "--bootstrap 0 draws no interval"),
    ] {
        let mut all = vec!["--arm", "treatment"];
        all.extend(args.iter().copied());
        let out = sweep_of(corpus, &all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    // (h): a judged figure in a corpus without verdicts.
    let bare = dir.path().join("bare");
    std::fs::create_dir_all(&bare).unwrap();
    corpus(&bare);
    std::fs::remove_file(bare.join("verdicts.jsonl")).unwrap();
    let out = sweep_of(
        &bare,
        &[
            "--arm",
            "treatment",
            "--vary",
            "review.actionable_from=50,75",
            "--require",
            "precision>=0.5",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "--require names `precision`, a judged figure, but the corpus has no verdicts.jsonl"
        ),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A sweep's output, run on `corpus` into `dir`: (exit status, stdout, stderr).
fn swept(corpus: &Path, dir: &Path, args: &[&str]) -> (i32, String, String) {
    outcome(
        calibench()
            .arg("sweep")
            .arg(corpus)
            .arg("--runs-dir")
            .arg(dir.join("runs"))
            .arg("--reports-dir")
            .arg(dir.join("reports"))
            .args(["--no-plots", "--bootstrap", "200"])
            .args(args),
    )
}

fn repro(folder: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/repro/hostile-3")
        .join(folder)
}

// Hostile round 3, folder 01: the trust verdict holds at every point. Under judges that are not
// trusted, a requirement or preference on a judge-derived figure is refused, and otherwise those
// figures are withheld (null) at every point, with the verdict in the output.
#[test]
fn a_sweep_honours_the_trust_verdict_at_every_point() {
    let dir = tempfile::tempdir().unwrap();
    let doc = dir.path().join("doc");
    calibench()
        .args(["init"])
        .arg(&doc)
        .args(["--kind", "doc"])
        .assert()
        .success();
    let untrusted = ["--set", "trust.irr_floor=0.9", "--arm", "treatment"];
    let vary = ["--vary", "review.actionable_from=25,50,75,100"];
    for flags in [
        vec!["--require", "precision>=0.6", "--holdout", "0"],
        vec!["--prefer", "max:recall"],
    ] {
        let args: Vec<&str> = untrusted
            .iter()
            .chain(&vary)
            .chain(&flags)
            .copied()
            .collect();
        let (code, _, err) = swept(&doc, dir.path(), &args);
        assert_eq!(code, 2, "{flags:?}: {err}");
        assert!(
            err.contains("a judge-derived figure, and the judges are not trusted, so `run` withholds it and a sweep will not choose on it: (1) IRR"),
            "{flags:?}: {err}"
        );
    }
    let args: Vec<&str> = untrusted
        .iter()
        .chain(&vary)
        .chain(&["--json"])
        .copied()
        .collect();
    let (code, out, err) = swept(&doc, dir.path(), &args);
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["trust"]["trustworthy"], false);
    for p in s["points"]
        .as_array()
        .unwrap()
        .iter()
        .chain([&s["current"]])
    {
        for f in ["precision", "judged_actionable", "recall"] {
            assert!(p["figures"][f]["value"].is_null(), "{f}: {p}");
        }
        assert!(p["figures"]["actionable"]["value"].is_number());
    }
    assert!(s["versus_current"].get("precision").is_none());
    let args: Vec<&str> = untrusted.iter().chain(&vary).copied().collect();
    let (_, out, _) = swept(&doc, dir.path(), &args);
    assert!(
        out.contains("The judges are not trusted, so precision, judged actionable and recall are withheld at every point: (1) IRR"),
        "{out}"
    );
    // Trusted (the scaffold's own floor): the figures are there, and the verdict says so.
    let args: Vec<&str> = ["--arm", "treatment"]
        .iter()
        .chain(&vary)
        .chain(&["--json"])
        .copied()
        .collect();
    let (_, out, _) = swept(&doc, dir.path(), &args);
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["trust"]["trustworthy"], true);
    assert!(s["current"]["figures"]["precision"]["value"].is_number());
}

// Folder 02: the choice is checked on the part held out of it, and a choice that fails there
// says so; a part of fewer than 10 units is refused, and `--holdout 0` chooses on every unit,
// said unchecked.
#[test]
fn a_recommendation_is_met_on_the_held_out_part_or_says_it_failed_there() {
    let dir = tempfile::tempdir().unwrap();
    let capacity = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/capacity-50");
    let base = [
        "--arm",
        "treatment",
        "--vary",
        "confidence.recovery_threshold=0.30:0.80:0.05",
        "--require",
        "unnecessary_recovery_rate<=0.2",
        "--require",
        "final_accuracy>=0.9",
        "--prefer",
        "max:recovery_gate_rate",
    ];
    let with =
        |extra: &[&'static str]| -> Vec<&str> { base.iter().chain(extra).copied().collect() };
    let (code, out, err) = swept(&capacity, dir.path(), &with(&["--json"]));
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    let r = &s["recommended"];
    // Chosen on 25 queries; on the 25 held out, final accuracy's lower bound falls below 0.9.
    let misses = r["held_out_misses"].as_array().unwrap();
    assert!(misses.contains(&Value::from("final_accuracy>=0.9")), "{r}");
    let lower = r["held_out"]["final_accuracy"]["ci"][0].as_f64().unwrap();
    assert!(lower < 0.9, "{lower}");
    assert_eq!(r["held_out"]["meets"], false, "{r}");
    let (_, out, _) = swept(&capacity, dir.path(), &with(&[]));
    assert!(
        out.contains("Not confirmed for treatment: confidence.recovery_threshold = "),
        "{out}"
    );
    assert!(out.contains("fails on the 25 held out: "), "{out}");
    assert!(out.contains("final_accuracy 0.960 [0.880, 1.000]"), "{out}");
    assert!(out.contains(", its lower bound below 0.9;"), "{out}");
    assert!(!out.contains("Recommended"), "{out}");
    // No hold-out: chosen on all 50 queries, said unchecked.
    let (code, out, err) = swept(&capacity, dir.path(), &with(&["--holdout", "0"]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("(chosen on all 50 queries; none held out, so unchecked: --holdout 0)"),
        "{out}"
    );
    // A part of fewer than 10 units: refused, naming the flag and the counts.
    let (code, _, err) = swept(&capacity, dir.path(), &with(&["--holdout", "0.9"]));
    assert_eq!(code, 2);
    assert!(
        err.contains("--holdout 0.9 of 50 queries leaves 5 to choose on and 45 held out"),
        "{err}"
    );
    // Four targets cannot carry a requirement even without a hold-out.
    let small = dir.path().join("small");
    std::fs::create_dir_all(&small).unwrap();
    corpus(&small);
    let (code, _, err) = swept(
        &small,
        dir.path(),
        &[
            "--arm",
            "treatment",
            "--vary",
            "review.actionable_from=50,75",
            "--require",
            "fyi<=10",
            "--holdout",
            "0",
        ],
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("4 targets are too few for one (at least 10)"),
        "{err}"
    );
}

// Folder 04: a point that only ties the current setting is no reason to move it.
#[test]
fn a_grid_that_only_ties_the_current_setting_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let doc = repro("03-mode-inapplicable-policy-keys-ignored/doc");
    let (code, out, err) = swept(
        &doc,
        dir.path(),
        &[
            "--arm",
            "baseline",
            "--vary",
            "review.auto_apply_from=0,0.85,1",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    assert!(s["recommended"].is_null());
    assert_eq!(s["kept"]["all_tie"], true);
    let (_, out, _) = swept(
        &doc,
        dir.path(),
        &[
            "--arm",
            "baseline",
            "--vary",
            "review.auto_apply_from=0,0.85,1",
        ],
    );
    assert!(
        out.contains(
            "Keep review.auto_apply_from = 0.85 for baseline: no point does better on actionable"
        ),
        "{out}"
    );
    assert!(
        out.contains(
            "all 3 points give the figures it gives: the varied key moves nothing a sweep measures"
        ),
        "{out}"
    );
    // A point that does better is still recommended.
    let small = dir.path().join("small");
    std::fs::create_dir_all(&small).unwrap();
    corpus(&small);
    let (_, out, _) = swept(
        &small,
        dir.path(),
        &[
            "--arm",
            "treatment",
            "--vary",
            "review.actionable_from=50,75",
            "--json",
        ],
    );
    let s: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        s["recommended"]["values"]["review.actionable_from"], 50,
        "{s}"
    );
    assert!(s.get("kept").is_none());
}

// Folder 14: the setting in effect, defaults included, as experiment.toml writes it.
#[test]
fn the_current_setting_is_the_one_in_effect() {
    let dir = tempfile::tempdir().unwrap();
    let doc = repro("03-mode-inapplicable-policy-keys-ignored/doc");
    let code = repro("03-mode-inapplicable-policy-keys-ignored/code");
    let code_ab = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/code-review-ab");
    for (corpus, arm, vary, current) in [
        (
            &doc,
            "baseline",
            "review.gates.P1=0.5,0.6",
            "review.gates.P1 = 0.6",
        ),
        (
            &doc,
            "baseline",
            "review.gates.P0=0.1",
            "review.gates.P0 = 0.5",
        ),
        (&doc, "baseline", "review.boost=0.2", "review.boost = 0.1"),
        (
            &doc,
            "baseline",
            "review.promotion=false",
            "review.promotion = true",
        ),
        (
            &code,
            "baseline",
            "review.validation_budget=3",
            "review.validation_budget = 15",
        ),
        (
            &code_ab,
            "treatment",
            r#"review.skip=[],["closed"]"#,
            r#"review.skip = ["closed", "trivial-pattern", "reviewed"]"#,
        ),
    ] {
        let (status, out, err) = swept(corpus, dir.path(), &["--arm", arm, "--vary", vary]);
        assert_eq!(status, 0, "{vary}: {err}");
        assert!(out.contains(current), "{vary}: {out}");
        assert!(
            !out.contains("null") && !out.contains("\"kind\""),
            "{vary}: {out}"
        );
    }
}

// Folders 05 and 15: a declared sweep is checked completely before `run` writes anything, and
// `validate` lists the same problem at the table's line; confirm_at is a composite in [0, 1].
#[test]
fn a_declared_sweep_is_checked_completely_before_anything_is_written() {
    let dir = tempfile::tempdir().unwrap();
    for (folder, says) in [
        (
            "05-run-declared-sweep-fails-after-run-written/unknown-figure",
            "`sweep[0].require`: names `final_accuracy`, which a sweep of targets does not measure",
        ),
        (
            "05-run-declared-sweep-fails-after-run-written/three-targets",
            "`sweep[0].holdout`: 0.5 of 3 targets leaves 1 to choose on and 2 held out",
        ),
        (
            "15-sweep-confirm-at-unchecked/nan",
            "`sweep[0].confirm_at`: NaN is not a judge composite in [0, 1]",
        ),
        (
            "15-sweep-confirm-at-unchecked/neg-inf",
            "`sweep[0].confirm_at`: -inf is not a judge composite in [0, 1]",
        ),
    ] {
        let corpus = repro(folder);
        let out = calibench()
            .arg("run")
            .arg(&corpus)
            .arg("--runs-dir")
            .arg(dir.path().join("runs"))
            .arg("--reports-dir")
            .arg(dir.path().join("reports"))
            .args(["--no-plots", "--run-id", "t"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{folder}: {err}");
        assert!(err.contains(says), "{folder}: {err}");
        assert!(
            err.contains("experiment.toml:"),
            "{folder}: the line: {err}"
        );
        assert!(
            !dir.path().join("runs").exists() && !dir.path().join("reports").exists(),
            "{folder}: written"
        );
        let out = calibench().arg("validate").arg(&corpus).output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(2), "{folder}: {said}");
        assert!(said.contains(says), "{folder}: {said}");
    }
    let (code, _, err) = swept(
        &repro("15-sweep-confirm-at-unchecked/nan"),
        dir.path(),
        &[
            "--arm",
            "treatment",
            "--vary",
            "review.actionable_from=25",
            "--confirm-at",
            "5",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("`5` is not in [0, 1]"), "{err}");
}

/// Every point of a query sweep is the arm as `run --set` replays it, whether the point moves a
/// gate (whose scoring the sweep shares between points) or what scores (weights, bonuses),
/// and in a grid of both.
#[test]
fn each_point_of_a_query_sweep_is_what_run_gives_at_its_setting() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/capacity-50");
    let dir = tempfile::tempdir().unwrap();
    let (code, out, err) = swept(
        &corpus,
        dir.path(),
        &[
            "--arm",
            "treatment",
            "--vary",
            "confidence.recovery_threshold=0.45,0.6,0.75",
            "--vary",
            "confidence.bonus_two=0.0,0.3",
            "--holdout",
            "0",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&out).unwrap();
    let points = s["points"].as_array().unwrap();
    assert_eq!(points.len(), 6);
    for p in points {
        let mut cmd = calibench();
        cmd.arg("run")
            .arg(&corpus)
            .arg("--runs-dir")
            .arg(dir.path().join("runs"))
            .arg("--reports-dir")
            .arg(dir.path().join("reports"))
            .args(["--no-plots", "--bootstrap", "200", "--json", "-q"]);
        for (key, v) in p["values"].as_object().unwrap() {
            cmd.args(["--set", &format!("arms.treatment.{key}={v}")]);
        }
        let m = json_of(&mut cmd);
        let arm = &m["queries"]["arms"]["treatment"];
        for (figure, path) in [
            ("recovery_gate_rate", "recovery_gate_rate"),
            ("final_accuracy", "final_accuracy"),
            ("confidence_mean", "confidence_mean"),
        ] {
            let (swept, run) = (value(p, figure).unwrap(), arm[path].as_f64().unwrap());
            // The sweep writes its figures to 9 decimal places.
            assert!(
                (swept - run).abs() < 1e-9,
                "{figure} at {}: {swept} against {run}",
                p["values"]
            );
        }
    }
}

/// Cost at every point (docs/guides/threshold-sweep.md, "Cost and the frontier"): on the live
/// code review, whose reviewers report what each call cost, a point that skips more changes
/// costs less per target (a skipped change makes no call); `--frontier cost_usd:precision`
/// says of every point whether another beats it on both, and the trade-off plot puts the two
/// on its axes. A corpus that records no cost is refused the figure, naming the flag.
#[test]
fn cost_is_a_figure_of_every_point_and_the_frontier_marks_the_trade_off() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let out = calibench()
        .arg("sweep")
        .arg(root.join("corpora/code-review-live"))
        .arg("--runs-dir")
        .arg(dir.path().join("runs"))
        .arg("--reports-dir")
        .arg(dir.path().join("reports"))
        .args(["--bootstrap", "200", "--arm", "treatment"])
        .args(["--vary", r#"review.skip=[],["closed","trivial-pattern"]"#])
        .args(["--frontier", "cost_usd:precision", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(s["frontier"], json!({"x": "cost_usd", "y": "precision"}));
    let points = s["points"].as_array().unwrap();
    let cost = |p: &Value| value(p, "cost_usd").unwrap();
    // Nothing skipped costs more than skipping closed and trivial changes.
    assert!(cost(&points[0]) > cost(&points[1]), "{points:?}");
    for p in points {
        assert!(p["on_frontier"].is_boolean(), "{p}");
    }
    assert!(points.iter().any(|p| p["on_frontier"] == true));
    // The report marks the frontier and plots the two figures.
    let run = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.path().is_dir())
        .unwrap()
        .path();
    let md = std::fs::read_to_string(run.join("report.md")).unwrap();
    assert!(md.contains("frontier (cost_usd:precision)"), "{md}");
    assert!(md.contains("On the cost_usd × precision frontier"), "{md}");
    let svg = std::fs::read_to_string(run.join("plots/sweep-tradeoff.svg")).unwrap();
    assert!(svg.contains("cost per target (USD)") && svg.contains("on the frontier"));

    // The generated code review records no cost: the figure is refused, not a column of
    // blanks; a frontier of one figure is refused too.
    for (frontier, says) in [
        (
            "cost_usd:precision",
            "--frontier names `cost_usd`, but no return in the corpus records what its call cost",
        ),
        ("precision", "is not two different figures as X:Y"),
    ] {
        let (code, _, err) = swept(
            &root.join("corpora/code-review-ab"),
            dir.path(),
            &[
                "--arm",
                "treatment",
                "--vary",
                "review.actionable_from=50,75",
                "--frontier",
                frontier,
            ],
        );
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(says), "{err}");
    }
}

/// A review sweep merges each arm's returns once and routes them at every point whose policy
/// merges alike (docs/guides/threshold-sweep.md, "What a point costs"): every such point's
/// units are those of replaying the arm whole at its setting — points that move a gate, and
/// points that move what merges (promotion, collapse), in doc and in code mode (demoted
/// reviewers, lint suppression, skipped changes, pre-existing findings).
#[test]
fn a_review_point_routed_from_a_shared_merge_is_the_arm_replayed_whole() {
    use calibench::analysis::sweep::Replayer;
    use calibench::input::toml::Override;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Each point: the keys it sets on the arm.
    type Point<'a> = &'a [(&'a str, &'a str)];
    let cases: [(&str, &str, &[Point]); 3] = [
        (
            "corpora/doc-review-ab",
            "treatment",
            &[
                &[],
                &[("review.actionable_from", "50")],
                &[
                    ("review.actionable_from", "100"),
                    ("review.surface_from", "25"),
                ],
                &[("review.p0_escape", "25"), ("review.actionable_from", "75")],
                &[("review.collapse", "false")],
                &[
                    ("review.promotion", "false"),
                    ("review.actionable_from", "50"),
                ],
            ],
        ),
        (
            "corpora/doc-review-ab",
            "baseline",
            &[
                &[],
                &[("review.gates", "[0.5, 0.6, 0.7, 0.8]")],
                &[
                    ("review.fyi_floor", "0.2"),
                    ("review.gates", "[0.9, 0.9, 0.9, 0.9]"),
                ],
                &[("review.boost", "0.3")],
            ],
        ),
        (
            "corpora/code-review-ab",
            "treatment",
            &[
                &[("review.validation", "\"never\"")],
                &[
                    ("review.validation", "\"never\""),
                    ("review.actionable_from", "50"),
                ],
                &[
                    ("review.validation", "\"never\""),
                    (
                        "review.demote_reviewers",
                        "[\"maintainability\", \"testing\"]",
                    ),
                ],
                &[
                    ("review.validation", "\"never\""),
                    ("review.review_mode", "\"interactive\""),
                ],
                // With the validation pass, each point replays whole.
                &[("review.actionable_from", "50")],
            ],
        ),
    ];
    for (example, arm_name, points) in cases {
        let file = root.join(example).join("experiment.toml");
        let text = std::fs::read_to_string(&file).unwrap();
        let (exp, _) = calibench::pipeline::load::experiment(&file, &[]).unwrap();
        let loaded =
            calibench::pipeline::load::load(&exp.corpus, Some((&file, &exp)), false).unwrap();
        let corpus = loaded.corpus;
        let replayer = Replayer::new(&exp, &corpus, 0.5);
        for point in points {
            let set: Vec<Override> = point
                .iter()
                .map(|(k, v)| Override {
                    key: format!("arms.{arm_name}.{k}"),
                    value: v.to_string(),
                    flag: "--set",
                })
                .collect();
            let at = calibench::config::parse_with(&file, &text, &set)
                .unwrap_or_else(|e| panic!("{example} {point:?}: {e}"));
            let arm = if arm_name == "baseline" {
                &at.baseline
            } else {
                &at.treatment
            };
            let (routed, whole) = (
                replayer.units(arm).unwrap(),
                replayer.review_units_whole(arm),
            );
            assert_eq!(routed, whole, "{example} {arm_name} {point:?}");
            assert!(routed.vectors.iter().any(|v| v.iter().any(|x| *x != 0.0)));
        }
    }
}
