//! End-to-end tests of the imported-scores experiment (docs/reference.md): two runs imported from plain
//! tables by `calibench import`, replayed by `calibench run`, with every figure worked by hand;
//! the judge panel's trust verdict withholding its scorers; `plan` and `gate` on the run; and
//! the refusals of an experiment the lines cannot answer.

use std::path::{Path, PathBuf};

mod common;

use common::{calibench, json_of, run_into};
use serde_json::Value;

/// The baseline run `v1`: items 1, 2 and "x"; `exact` twice per item (one repeat of item 2
/// errored), with the model's confidence; three judges once per item (judge-c failed on "x").
const V1: &str = "\
item,scorer,repeat,score,confidence,correct
1,exact,1,1,0.9,true
1,exact,2,1,0.8,true
2,exact,1,0,0.6,false
2,exact,2,,,
x,exact,1,0,0.3,false
x,exact,2,0,0.2,false
1,judge-a,1,0.8,,
1,judge-b,1,0.7,,
1,judge-c,1,0.9,,
2,judge-a,1,0.2,,
2,judge-b,1,0.3,,
2,judge-c,1,0.1,,
x,judge-a,1,0.5,,
x,judge-b,1,0.5,,
x,judge-c,1,,,
";

/// The treatment run `v2`, on the same items.
const V2: &str = "\
item,scorer,repeat,score
1,exact,1,1
1,exact,2,1
2,exact,1,1
2,exact,2,1
x,exact,1,1
x,exact,2,0
1,judge-a,1,0.9
1,judge-b,1,0.9
1,judge-c,1,0.8
2,judge-a,1,0.6
2,judge-b,1,0.7
2,judge-c,1,0.5
x,judge-a,1,0.6
x,judge-b,1,0.7
x,judge-c,1,0.6
";

fn experiment(extra: &str) -> String {
    format!(
        "name = \"tiny-scores\"\nseed = 7\nbootstrap = 200\n\n[arms.baseline]\nsource = \"v1\"\n\n[arms.treatment]\nsource = \"v2\"\n{extra}"
    )
}

/// Imports both tables into `dir` and writes the experiment; returns its path.
fn corpus(dir: &Path, extra: &str) -> PathBuf {
    for (arm, table) in [("v1", V1), ("v2", V2)] {
        let log = dir.join(format!("{arm}.csv"));
        std::fs::write(&log, table).unwrap();
        calibench()
            .args(["import", "csv"])
            .arg(&log)
            .args(["--arm", arm, "--into"])
            .arg(dir)
            .assert()
            .success();
    }
    let exp = dir.join("experiment.toml");
    std::fs::write(&exp, experiment(extra)).unwrap();
    exp
}

fn n(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-9, "{a} vs {b}");
}

fn run(exp: &Path, runs: &Path) -> Value {
    json_of(run_into(runs, exp).args(["--run-id", "r", "--json"]))
}

#[test]
fn scores_replay_as_worked_by_hand_and_an_untrusted_panel_is_withheld() {
    let dir = tempfile::tempdir().unwrap();
    let exp = corpus(
        dir.path(),
        "\n[scores]\njudges = [\"judge-a\", \"judge-b\", \"judge-c\"]\n",
    );
    let m = run(&exp, &dir.path().join("runs"));
    let s = &m["scores"];

    // exact, baseline: items 1 → 1, 2 → 0 (its errored repeat is missing, not 0), x → 0.
    let b = &s["arms"]["baseline"]["scorers"]["exact"];
    assert_eq!(
        (b["lines"].as_u64(), b["missing"].as_u64()),
        (Some(6), Some(1))
    );
    close(n(&b["mean"]), 1.0 / 3.0);
    assert_eq!(b["missing_reasons"]["no score"], 1);
    // Calibration of the 5 scored lines with a confidence: gaps 0.1, 0.2, 0.6, 0.3, 0.2, each
    // alone in its bin: ECE 1.4 / 5; Brier (0.01 + 0.04 + 0.36 + 0.09 + 0.04) / 5; the two
    // right answers are the two most confident: AUROC 1.
    let cal = &b["calibration"];
    assert_eq!(cal["n"], 5);
    close(n(&cal["ece"]), 0.28);
    close(n(&cal["brier"]), 0.108);
    close(n(&cal["auroc"]), 1.0);

    // exact, treatment: 1, 1, 0.5. Differences 0, 1, 0.5: mean 0.5, sd 0.5; not all 0/1, so
    // the paired t-test: t = 0.5 / (0.5 / √3) = √3 on 2 df, p 0.225403 (mpmath); MDE
    // (t₀.₉₇₅,₂ + t₀.₈,₂) · 0.5 / √3 = (4.302653 + 1.060660) · 0.288675.
    let d = &s["delta"]["exact"];
    close(n(&d["baseline"]), 1.0 / 3.0);
    close(n(&d["treatment"]), 2.5 / 3.0);
    close(n(&d["delta"]), 0.5);
    assert!(
        (n(&d["p_value"]) - 0.225_403).abs() < 1e-6,
        "{}",
        d["p_value"]
    );
    assert_eq!(d["test"], "paired-t");
    assert!((n(&d["mde"]) - 1.548_255).abs() < 1e-6, "{}", d["mde"]);
    assert_eq!(d["pairs"], 3);
    assert!(d.get("mcnemar").is_none());

    // The panel: item "x" of v1 has 2 surviving judges < 3, so the verdict is not trustworthy
    // and every judge scorer's delta and mean is withheld; `exact` stands.
    assert_eq!(m["trust"]["trustworthy"], false);
    let reasons: Vec<&str> = m["trust"]["trust_reasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["(3) item x (v1): 2 surviving raters < 3"]);
    for j in ["judge-a", "judge-b", "judge-c"] {
        assert!(s["delta"].get(j).is_none(), "{j}");
        assert!(s["arms"]["treatment"]["scorers"][j]["mean"].is_null());
    }
    assert_eq!(s["withheld"]["metrics"].as_array().unwrap().len(), 3);
    assert_eq!(m["lift"]["withheld"], true);
    // exact is the only delta left: Holm over one p-value leaves it.
    close(n(&d["p_adjusted"]), n(&d["p_value"]));

    // Repeats: (exact, 1) [1, 1] and (exact, x) [0, 0] in v1 agree wholly (α 1); in v2
    // (exact, 1) [1, 1], (exact, 2) [1, 1], (exact, x) [1, 0]: D_o = 2/6, D_e = 10/30, α 0.
    let r = &m["agreement"]["repeats"];
    close(n(&r["baseline"]["alpha"]), 1.0);
    close(n(&r["treatment"]["alpha"]), 0.0);

    // The tables: one row per arm, item and scorer; the pairs of the deltas reported.
    let run_dir = dir.path().join("runs/r");
    let scores = std::fs::read_to_string(run_dir.join("scores.csv")).unwrap();
    assert!(
        scores.starts_with("run_id,arm,item,scorer,repeats,missing,mean\n"),
        "{scores}"
    );
    // CSV ids are text: "2" is quoted, so it cannot be read as the number 2.
    assert!(
        scores.contains("baseline,\"\"\"2\"\"\",exact,2,1,0.0\n"),
        "{scores}"
    );
    // A withheld judge's per-item means are withheld too.
    assert!(
        scores.contains("treatment,\"\"\"1\"\"\",judge-a,1,0,\n"),
        "{scores}"
    );
    let pairs = std::fs::read_to_string(run_dir.join("pairs.csv")).unwrap();
    assert_eq!(pairs.lines().filter(|l| l.contains(",scores,")).count(), 3);
    assert!(!pairs.contains("judge-a"), "{pairs}");

    // The report says what was withheld and why.
    let report = std::fs::read_to_string(dir.path().join("reports/r/report.md")).unwrap();
    assert!(
        report.contains("judge scorers judge-a, judge-b and judge-c"),
        "{report}"
    );
    assert!(
        report.contains("| judge-a (judge) | *withheld* |"),
        "{report}"
    );
}

#[test]
fn a_trusted_panel_reports_its_scorers_the_lift_and_holm_over_every_scorer() {
    let dir = tempfile::tempdir().unwrap();
    let exp = corpus(
        dir.path(),
        "\n[scores]\njudges = [\"judge-a\", \"judge-b\", \"judge-c\"]\n\n[trust]\nmin_survivors = 2\n",
    );
    let m = run(&exp, &dir.path().join("runs"));
    assert_eq!(m["trust"]["trustworthy"], true, "{}", m["trust"]);
    let d = &m["scores"]["delta"];
    // Each by the paired t-test of its mean; p-values by mpmath.
    // judge-a: 0.8, 0.2, 0.5 → 0.9, 0.6, 0.6: differences 0.1, 0.4, 0.1: mean 0.2, sd √0.03,
    // t = 2 on 2 df, p 0.183503.
    let p = |s: &str| n(&d[s]["p_value"]);
    close(n(&d["judge-a"]["delta"]), 0.2);
    assert!((p("judge-a") - 0.183_503).abs() < 1e-6, "{}", p("judge-a"));
    assert!((p("judge-b") - 0.057_191).abs() < 1e-6, "{}", p("judge-b"));
    // judge-c failed on x in v1: paired on items 1 and 2 only, differences −0.1, 0.4: mean
    // 0.15, sd 0.353553, t = 0.6 on 1 df, p 0.655958.
    assert_eq!(d["judge-c"]["pairs"], 2);
    assert!((p("judge-c") - 0.655_958).abs() < 1e-6, "{}", p("judge-c"));
    // Holm over the four scorers, smallest first: judge-b 4 · 0.057191, judge-a and exact
    // 3 · 0.183503 and 2 · 0.225403 lifted to their running maximum 0.550510, judge-c kept.
    for (s, want) in [
        ("judge-b", 0.228_764),
        ("judge-a", 0.550_510),
        ("exact", 0.550_510),
        ("judge-c", 0.655_958),
    ] {
        assert!(
            (n(&d[s]["p_adjusted"]) - want).abs() < 1e-5,
            "{s}: {}",
            d[s]["p_adjusted"]
        );
    }
    // Lift: composites (mean over surviving judges) v1 0.8, 0.2, 0.5; v2 0.8667, 0.6, 0.6333:
    // differences 0.0667, 0.4, 0.1333, mean 0.2.
    close(n(&m["lift"]["value"]), 0.2);
    assert_eq!(m["lift"]["items"], 3);
    // The judges' α is over (arm, item, score) units.
    assert!(m["agreement"]["judges"]["alpha"].as_f64().unwrap() > 0.8);
}

#[test]
fn plan_and_gate_read_the_scores_run() {
    let dir = tempfile::tempdir().unwrap();
    let exp = corpus(dir.path(), "");
    let runs = dir.path().join("runs");
    let m = run(&exp, &runs);
    // No judges named: no trust verdict, every scorer compared.
    assert!(m.get("trust").is_none());
    assert_eq!(m["scores"]["delta"].as_object().unwrap().len(), 4);

    let plan = json_of(
        calibench()
            .arg("plan")
            .arg(runs.join("r"))
            .args(["--metric", "exact", "--json"]),
    );
    // sd 0.5, effect 0.5, by the paired t-test at 0.05: (t₀.₉₇₅,ₙ₋₁ + t₀.₈,ₙ₋₁) · 0.5 / √n is
    // 0.532 at 9 items and 0.497 at 10 (mpmath): 10 items.
    assert_eq!(plan["needed"], 10);
    assert_eq!(plan["test"], "paired-t");
    assert_eq!(plan["pairs"], 3);
    close(n(&plan["effect"]), 0.5);

    let (code, text) = gate(
        dir.path(),
        &runs.join("r"),
        "require_trustworthy = false\n[[check]]\nmetric = \"scores.delta.exact.delta\"\nmin = 0.4\n[[check]]\nmetric = \"scores.arms.treatment.scorers.judge-a.mean\"\nmin = 0.9\n",
    );
    assert_eq!(code, Some(1), "{text}");
    // exact's delta (0.5) passes; judge-a's treatment mean (0.7) is below 0.9.
    assert!(
        text.contains("scores.arms.treatment.scorers.judge-a.mean"),
        "{text}"
    );
    assert_eq!(verdict_of(&text, "scores.delta.exact.delta"), "pass");
    assert_eq!(
        verdict_of(&text, "scores.arms.treatment.scorers.judge-a.mean"),
        "FAIL"
    );

    // A scorer plan cannot find: the run's deltas are listed.
    let out = calibench()
        .arg("plan")
        .arg(runs.join("r"))
        .args(["--metric", "exakt"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("did you mean `exact`?"));
}

#[test]
fn an_experiment_the_lines_cannot_answer_is_refused_naming_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path(), "");
    let refused = |extra: &str, arms: (&str, &str)| -> String {
        let text = experiment(extra)
            .replace("source = \"v1\"", &format!("source = \"{}\"", arms.0))
            .replace("source = \"v2\"", &format!("source = \"{}\"", arms.1));
        let exp = dir.path().join("experiment.toml");
        std::fs::write(&exp, text).unwrap();
        let out = run_into(dir.path().join("runs"), &exp).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        assert!(!dir.path().join("runs").exists(), "nothing half-written");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = refused("", ("v1", "v3"));
    assert!(e.contains("scores.jsonl: field `arm`: arm `treatment` reads imported arm `v3`, but no line carries that label"), "{e}");
    assert!(e.contains("the file's labels: v1, v2"), "{e}");
    let e = refused("", ("v1", "v1"));
    assert!(e.contains("both arms read imported arm `v1`"), "{e}");
    let e = refused("\n[scores]\njudges = [\"judge-d\"]\n", ("v1", "v2"));
    assert!(e.contains("`[scores] judges` names `judge-d`, but no line of either arm has that scorer; did you mean `judge-a`?"), "{e}");
    // A judge must score on [0, 1] (0/1 scores do): a score outside names its line.
    let exp = dir.path().join("experiment.toml");
    std::fs::write(
        &exp,
        experiment("\n[scores]\njudges = [\"exact\", \"judge-a\"]\n"),
    )
    .unwrap();
    calibench().arg("validate").arg(&exp).assert().success();
    let lines = std::fs::read_to_string(dir.path().join("scores.jsonl")).unwrap();
    let bumped = lines.replacen(
        "\"scorer\":\"judge-a\",\"score\":0.8,",
        "\"scorer\":\"judge-a\",\"score\":9.0,",
        1,
    );
    assert_ne!(bumped, lines);
    std::fs::write(dir.path().join("scores.jsonl"), &bumped).unwrap();
    let e = refused("\n[scores]\njudges = [\"judge-a\"]\n", ("v1", "v2"));
    let at = bumped
        .lines()
        .position(|l| l.contains("\"score\":9.0"))
        .unwrap()
        + 1;
    assert!(
        e.contains(&format!(
            "scores.jsonl:{at}: field `score`: judge `judge-a` scores 9 here"
        )),
        "{e}"
    );
    // One arm is one task: a hand-edited line with another task is named.
    let mixed = lines.replacen("\"task\":\"v1\"", "\"task\":\"other\"", 1);
    std::fs::write(dir.path().join("scores.jsonl"), &mixed).unwrap();
    let e = refused("", ("v1", "v2"));
    assert!(e.contains("field `task`: arm `v1` holds task"), "{e}");
    std::fs::write(dir.path().join("scores.jsonl"), &lines).unwrap();
    // A panel of scorers beside verdicts.jsonl: two panels, refused.
    std::fs::write(
        dir.path().join("verdicts.jsonl"),
        "{\"item_id\": \"1\", \"arm\": \"v1\", \"verdicts\": [{\"model\": \"j\", \"per_dimension\": {\"real\": 1}}]}\n",
    )
    .unwrap();
    let e = refused("\n[scores]\njudges = [\"judge-a\"]\n", ("v1", "v2"));
    assert!(
        e.contains("one trust verdict cannot weigh two panels"),
        "{e}"
    );
    // Judges named over a corpus without imported scores: refused, naming the line of `judges`.
    let bare = tempfile::tempdir().unwrap();
    let exp = bare.path().join("experiment.toml");
    std::fs::write(&exp, experiment("\n[scores]\njudges = [\"judge-a\"]\n")).unwrap();
    let out = calibench().arg("validate").arg(&exp).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    // `validate` lists the problems on stdout.
    let e = String::from_utf8_lossy(&out.stdout);
    assert!(
        e.contains(
            "`scores.judges`: `[scores] judges` names scorers, but the corpus has no scores.jsonl"
        ),
        "{e}"
    );
    assert!(e.contains("experiment.toml:12:"), "{e}");
}

/// Writes `lines` (one JSON object each, `{arm, item, scorer, score}` and the rest filled in)
/// as a corpus's scores.jsonl beside an experiment reading arms `b` and `t`; returns the
/// experiment's path.
fn hand_corpus(dir: &Path, lines: &[(&str, Value, &str, Value)]) -> PathBuf {
    let mut text = String::new();
    for (arm, item, scorer, score) in lines {
        let line = serde_json::json!({"arm": arm, "task": "t", "item": item, "repeat": 1,
                                      "scorer": scorer, "score": score, "source": "hand"});
        text += &format!("{line}\n");
    }
    std::fs::write(dir.join("scores.jsonl"), text).unwrap();
    let exp = dir.join("experiment.toml");
    std::fs::write(
        &exp,
        "name = \"hand\"\nbootstrap = 200\n[arms.baseline]\nsource = \"b\"\n[arms.treatment]\nsource = \"t\"\n",
    )
    .unwrap();
    exp
}

/// `run` refuses the experiment (exit 2, nothing written) and `validate` with it; their stderr
/// and stdout.
fn refused_by_run_and_validate(dir: &Path, exp: &Path) -> (String, String) {
    let out = run_into(dir.join("runs"), exp).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.join("runs").exists(), "nothing half-written");
    let v = calibench().arg("validate").arg(exp).output().unwrap();
    assert_eq!(v.status.code(), Some(2));
    (
        String::from_utf8_lossy(&out.stderr).into_owned(),
        String::from_utf8_lossy(&v.stdout).into_owned(),
    )
}

// Regression (issue 34): finite scores of ±1e308 made an item's mean `inf` and its interval
// `[NaN, NaN]`, with exit 0. A score beyond ±1e15 is refused, naming its line and field, and
// the checks across lines say nothing about a file whose lines were refused.
#[test]
fn an_absurdly_large_score_is_refused_rather_than_averaged_to_infinity() {
    let dir = tempfile::tempdir().unwrap();
    let big = |x: f64| serde_json::json!(x);
    let exp = hand_corpus(
        dir.path(),
        &[
            ("b", 1.into(), "m", big(1e308)),
            ("b", 2.into(), "m", big(0.5)),
            ("t", 1.into(), "m", big(-1e308)),
            ("t", 2.into(), "m", big(0.25)),
        ],
    );
    let (run, validate) = refused_by_run_and_validate(dir.path(), &exp);
    for text in [&run, &validate] {
        assert!(
            text.contains("scores.jsonl:1: field `score`: 1e308 is beyond ±1e15"),
            "{text}"
        );
        assert!(
            text.contains("scores.jsonl:3: field `score`: -1e308 is beyond ±1e15"),
            "{text}"
        );
        assert!(!text.contains("no line carries that label"), "{text}");
    }
    // The largest score allowed runs, with finite figures.
    let exp = hand_corpus(
        dir.path(),
        &[
            ("b", 1.into(), "m", big(1e15)),
            ("b", 2.into(), "m", big(1e15)),
            ("t", 1.into(), "m", big(-1e15)),
            ("t", 2.into(), "m", big(-1e15)),
        ],
    );
    let m = run_one(&exp, dir.path());
    assert_eq!(m["scores"]["delta"]["m"]["delta"], serde_json::json!(-2e15));
    assert!(m["scores"]["delta"]["m"]["ci"][0].is_number());
}

// Regression (issue 34): two arms with no scorer in common, or whose ids differ only by type
// (`"1"` from a CSV against `1` from JSON Lines), ran with exit 0 and "share no scored item",
// comparing nothing. Both are refused, saying which it is.
#[test]
fn arms_that_compare_nothing_are_refused_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let one = serde_json::json!(1.0);
    let exp = hand_corpus(
        dir.path(),
        &[
            ("b", 1.into(), "acc", one.clone()),
            ("b", 2.into(), "acc", one.clone()),
            ("t", 1.into(), "acc2", one.clone()),
            ("t", 2.into(), "acc2", one.clone()),
        ],
    );
    let (run, validate) = refused_by_run_and_validate(dir.path(), &exp);
    for text in [&run, &validate] {
        assert!(text.contains("no scorer is in both arms, so nothing can be compared: arm `baseline` (`b`) has `acc`, arm `treatment` (`t`) has `acc2`"), "{text}");
    }
    let exp = hand_corpus(
        dir.path(),
        &[
            ("b", "1".into(), "acc", one.clone()),
            ("b", "2".into(), "acc", one.clone()),
            ("t", 1.into(), "acc", one.clone()),
            ("t", 2.into(), "acc", one.clone()),
        ],
    );
    let (run, validate) = refused_by_run_and_validate(dir.path(), &exp);
    for text in [&run, &validate] {
        assert!(text.contains("the arms share no scored item"), "{text}");
        assert!(text.contains("the ids differ only by type: in arm `baseline` (`b`) they are text (\"1\"), in arm `treatment` (`t`) numbers (1)"), "{text}");
    }
    // Items that simply differ get no word about types.
    let exp = hand_corpus(
        dir.path(),
        &[
            ("b", 1.into(), "acc", one.clone()),
            ("t", 2.into(), "acc", one.clone()),
        ],
    );
    let (run, _) = refused_by_run_and_validate(dir.path(), &exp);
    assert!(
        run.contains("the arms share no scored item") && !run.contains("differ only by type"),
        "{run}"
    );
    // One shared item is enough to compare.
    let exp = hand_corpus(
        dir.path(),
        &[
            ("b", 1.into(), "acc", one.clone()),
            ("b", 2.into(), "acc", one.clone()),
            ("t", 2.into(), "acc", one.clone()),
            ("t", 3.into(), "acc", one.clone()),
        ],
    );
    let m = run_one(&exp, dir.path());
    assert_eq!(m["scores"]["delta"]["acc"]["pairs"], 1);
}

fn run_one(exp: &Path, dir: &Path) -> Value {
    json_of(run_into(dir.join("runs"), exp).args(["--json"]))
}

// Regression (issue 34): a quoted part in the middle of a metric path was dropped, so the
// README's own `scores.delta."exact_match,strict-match".delta` read as `scores.delta.delta`
// ("is a table"), and a scorer whose name holds a dot could never be gated.
#[test]
fn the_gate_reads_quoted_scorer_names_anywhere_in_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let x = |v: f64| serde_json::json!(v);
    let mut lines = Vec::new();
    for item in 1..=4 {
        for scorer in ["grader.v2", "exact_match,strict-match"] {
            lines.push(("b", item.into(), scorer, x(0.0)));
            lines.push(("t", item.into(), scorer, x(1.0)));
        }
    }
    let exp = hand_corpus(dir.path(), &lines);
    let runs = dir.path().join("runs");
    json_of(run_into(&runs, &exp).args(["--run-id", "r", "--json"]));
    let (code, text) = gate(
        dir.path(),
        &runs.join("r"),
        concat!(
            "require_trustworthy = false\n",
            "[[check]]\nmetric = 'scores.delta.\"exact_match,strict-match\".delta'\nmin = 0.9\n",
            "[[check]]\nmetric = 'scores.delta.\"grader.v2\".mcnemar.treatment_only'\nmin = 4\n",
            "[[check]]\nmetric = 'scores.delta.\"grader.v2\".delta'\nmax = 0.5\n",
        ),
    );
    // Both deltas are +1: the first two checks pass, the third fails, each by its own scorer.
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(verdict_of(&text, "exact_match,strict-match"), "pass");
    assert_eq!(verdict_of(&text, "\"grader.v2\".mcnemar"), "pass");
    assert_eq!(verdict_of(&text, "\"grader.v2\".delta"), "FAIL");
}

/// `calibench gate RUN --policy` with the policy `text` written into `dir`: its exit status and
/// its stdout, with stderr after it.
fn gate(dir: &Path, run: &Path, text: &str) -> (Option<i32>, String) {
    let policy = dir.join("gate.toml");
    std::fs::write(&policy, text).unwrap();
    let out = calibench()
        .arg("gate")
        .arg(run)
        .arg("--policy")
        .arg(&policy)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    (out.status.code(), text.into_owned())
}

/// The verdict (`pass`, `FAIL`) the gate's summary gives the check on the line naming `metric`.
fn verdict_of(text: &str, metric: &str) -> String {
    let verdict = text
        .lines()
        .find(|l| l.contains(metric))
        .and_then(|l| l.split_whitespace().next())
        .unwrap_or_default();
    assert!(!verdict.is_empty(), "no line names {metric}: {text}");
    verdict.to_string()
}
