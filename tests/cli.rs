//! End-to-end tests of the `calibench` binary over small fixture files: results, output modes,
//! exit statuses and every error path of the commands built so far.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command as StdCommand, Stdio};

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn calibench() -> Command {
    let mut cmd = Command::cargo_bin("calibench").unwrap();
    cmd.env_remove("NO_COLOR");
    cmd
}

fn json_of(args: &[&str]) -> Value {
    let out = calibench().args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON document")
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

// ---------------------------------------------------------------------------------------------
// alpha

#[test]
fn alpha_reference_example_ordinal_prints_0_815388_with_its_interval() {
    let wide = fixture("krippendorff2011_wide.csv");
    let v = json_of(&["alpha", wide.to_str().unwrap(), "--level", "ordinal"]);
    assert_eq!(format!("{:.6}", f(&v["alpha"])), "0.815388");
    assert_eq!(v["level"], "ordinal");
    assert_eq!(v["units"], 12);
    assert_eq!(v["pairable_units"], 11);
    assert_eq!(v["raters"], 4);
    assert_eq!(v["pairable_values"], 40);
    assert!(f(&v["observed_disagreement"]) > 0.0);
    assert!(f(&v["expected_disagreement"]) > 0.0);
    let ci = &v["ci"];
    assert!(f(&ci["lower"]) < f(&v["alpha"]) && f(&v["alpha"]) < f(&ci["upper"]));
    assert_eq!(ci["method"], "units");
    assert_eq!(ci["replicates"], 2000);
    assert_eq!(ci["seed"], 1);
    let q = v["q"].as_array().unwrap();
    assert_eq!(q.len(), 2);
    assert_eq!(f(&q[0]["alpha_min"]), 0.667);
    assert_eq!(f(&q[1]["alpha_min"]), 0.8);
}

#[test]
fn alpha_reference_example_every_level_and_layout() {
    let want = [
        ("nominal", 113.0 / 152.0),
        ("ordinal", 0.815388),
        ("interval", 951.0 / 1120.0),
        ("ratio", 0.797403),
    ];
    for file in [
        "krippendorff2011_wide.csv",
        "krippendorff2011_long.csv",
        "krippendorff2011_long.jsonl",
    ] {
        for (level, value) in want {
            let path = fixture(file);
            let v = json_of(&[
                "alpha",
                path.to_str().unwrap(),
                "--level",
                level,
                "--bootstrap",
                "0",
            ]);
            assert!(
                (f(&v["alpha"]) - value).abs() < 5e-7,
                "{file} {level}: {}",
                v["alpha"]
            );
            assert!(v["ci"].is_null());
            assert_eq!(v["units"], 12, "{file}");
        }
    }
}

#[test]
fn alpha_layout_flag_and_detection() {
    let long = fixture("krippendorff2011_long.csv");
    let v = json_of(&["alpha", long.to_str().unwrap(), "--bootstrap", "0"]);
    assert_eq!(v["layout"], "long");
    let v = json_of(&[
        "alpha",
        long.to_str().unwrap(),
        "--layout",
        "long",
        "--bootstrap",
        "0",
    ]);
    assert_eq!(v["layout"], "long");
    // Forced wide on a long file reads `unit` as the rater column and fails on the labels.
    calibench()
        .args(["alpha", long.to_str().unwrap(), "--layout", "wide"])
        .assert()
        .code(2);
    let wide = fixture("krippendorff2011_wide.csv");
    calibench()
        .args(["alpha", wide.to_str().unwrap(), "--layout", "long"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the header has no `unit` or `value` column",
        ));
}

// Regression (issue 18): R irr, irrCAC, SPSS KALPHA and pandas write one row per unit; read as
// rater rows such a file gave a wrong α with exit 0 and no word.
#[test]
fn alpha_units_as_rows_reads_the_transpose_and_a_probable_transpose_is_warned() {
    let transposed = fixture("krippendorff2011_units_as_rows.csv");
    let out = calibench()
        .args(["alpha", transposed.to_str().unwrap(), "--units-as-rows"])
        .args(["--bootstrap", "0", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(format!("{:.6}", f(&v["alpha"])), "0.849107");
    assert_eq!(
        (v["units"].as_u64(), v["raters"].as_u64()),
        (Some(12), Some(4))
    );
    assert_eq!(v["layout"], "wide, units as rows");

    // Without the flag the 12 units are read as raters: still exit 0, but stderr names the flag.
    calibench()
        .args(["alpha", transposed.to_str().unwrap(), "--bootstrap", "0"])
        .assert()
        .success()
        .stderr(
            predicate::str::contains("warning:").and(predicate::str::contains(
                "12 raters (rows) but only 4 units (columns)",
            )),
        )
        .stderr(predicate::str::contains("--units-as-rows"));
    // A file in the layout it claims draws no warning.
    calibench()
        .args([
            "alpha",
            fixture("krippendorff2011_wide.csv").to_str().unwrap(),
        ])
        .args(["--bootstrap", "0"])
        .assert()
        .success()
        .stderr(predicate::str::is_empty());
    // The flag names a layout, so it cannot stand beside --layout.
    calibench()
        .args([
            "alpha",
            transposed.to_str().unwrap(),
            "--units-as-rows",
            "--layout",
            "long",
        ])
        .assert()
        .code(2);
}

#[test]
fn alpha_same_seed_same_interval_different_seed_different_interval() {
    let wide = fixture("krippendorff2011_wide.csv");
    let run = |seed: &str| {
        let v = json_of(&[
            "alpha",
            wide.to_str().unwrap(),
            "--seed",
            seed,
            "--bootstrap",
            "500",
        ]);
        (f(&v["ci"]["lower"]), f(&v["ci"]["upper"]))
    };
    assert_eq!(run("7"), run("7"));
    assert_ne!(run("7"), run("8"));
}

#[test]
fn alpha_kalpha_method_is_reported() {
    let wide = fixture("krippendorff2011_wide.csv");
    let v = json_of(&[
        "alpha",
        wide.to_str().unwrap(),
        "--level",
        "nominal",
        "--bootstrap-method",
        "kalpha",
    ]);
    assert_eq!(v["ci"]["method"], "kalpha");
    assert!(f(&v["ci"]["lower"]) <= f(&v["alpha"]));
}

#[test]
fn alpha_human_summary_is_short_and_readable() {
    calibench()
        .args([
            "alpha",
            fixture("krippendorff2011_wide.csv").to_str().unwrap(),
        ])
        .args(["--level", "ordinal"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Krippendorff's α (ordinal) = 0.815388",
        ))
        .stdout(predicate::str::contains("95% CI ["))
        .stdout(predicate::str::contains(
            "12 units (11 pairable), 4 raters, 40 pairable values",
        ))
        .stderr("");
}

#[test]
fn alpha_nominal_labels() {
    let v = json_of(&[
        "alpha",
        fixture("labels_wide.csv").to_str().unwrap(),
        "--level",
        "nominal",
    ]);
    assert!(v["alpha"].is_number());
    assert_eq!(v["raters"], 3);
}

#[test]
fn alpha_undefined_is_null_with_a_reason_not_an_error() {
    let v = json_of(&["alpha", fixture("no_variation.csv").to_str().unwrap()]);
    assert!(v["alpha"].is_null());
    assert!(v["undefined_reason"]
        .as_str()
        .unwrap()
        .contains("expected disagreement is 0"));
    assert!(v["ci"]["lower"].is_null());
    calibench()
        .args(["alpha", fixture("no_variation.csv").to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("is undefined"));
}

#[test]
fn alpha_quiet_prints_nothing_but_json_still_prints() {
    let wide = fixture("krippendorff2011_wide.csv");
    calibench()
        .args(["alpha", wide.to_str().unwrap(), "--quiet"])
        .assert()
        .success()
        .stdout("");
    let out = calibench()
        .args(["--quiet", "--json", "alpha", wide.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(serde_json::from_slice::<Value>(&out.stdout).is_ok());
}

/// Each bad input: exit 2, nothing on stdout, and a message naming file, line and field.
fn refused(args: &[&str], expect: &[&str]) {
    let mut assert = calibench().args(args).assert().code(2).stdout("");
    for e in expect {
        assert = assert.stderr(predicate::str::contains(*e));
    }
}

#[test]
fn alpha_error_paths() {
    let p = |n: &str| fixture(n).to_str().unwrap().to_string();
    refused(
        &["alpha", &p("label_in_numeric.csv"), "--level", "interval"],
        &[
            "label_in_numeric.csv:3: column \"u3\": `high` is not a finite number",
            "hint:",
        ],
    );
    refused(
        &["alpha", &p("ragged.csv")],
        &["ragged.csv:3:", "the row has 3 fields but the header has 4"],
    );
    refused(
        &["alpha", &p("duplicate_rating.csv")],
        &[
            "duplicate_rating.csv:4:",
            "rater `a` rates unit `1` a second time (first on line 2)",
        ],
    );
    refused(
        &["alpha", &p("no_pairable.csv")],
        &["no_pairable.csv", "no pairable unit"],
    );
    refused(
        &["alpha", &p("broken.jsonl")],
        &["broken.jsonl:2:", "not a JSON object"],
    );
    refused(&["alpha", &p("empty.csv")], &["empty.csv", "empty"]);
    refused(
        &["alpha", "does/not/exist.csv"],
        &["cannot read does/not/exist.csv"],
    );
    refused(
        &[
            "alpha",
            &p("krippendorff2011_wide.csv"),
            "--level",
            "cardinal",
        ],
        &["invalid value 'cardinal'"],
    );
    refused(&["alpha"], &["FILE"]);
    refused(
        &[
            "alpha",
            &p("krippendorff2011_long.jsonl"),
            "--layout",
            "wide",
        ],
        &["JSON Lines input is always long"],
    );
}

#[test]
fn errors_are_plain_without_a_terminal_or_under_no_color() {
    for no_color in [None, Some("1")] {
        let mut cmd = calibench();
        if let Some(v) = no_color {
            cmd.env("NO_COLOR", v);
        }
        let out = cmd.args(["alpha", "missing.csv"]).output().unwrap();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.starts_with("error: "), "{stderr}");
        assert!(!stderr.contains('\x1b'));
    }
}

// ---------------------------------------------------------------------------------------------
// calibrate

#[test]
fn calibrate_reference_vector() {
    let path = fixture("calibration_reference.csv");
    let v = json_of(&["calibrate", path.to_str().unwrap()]);
    assert!((f(&v["ece"]) - 0.1605).abs() < 1e-9);
    assert!((f(&v["mce"]) - 0.435).abs() < 1e-9);
    assert!((f(&v["brier"]) - 0.184295).abs() < 1e-9);
    assert!((f(&v["auroc"]) - 0.81).abs() < 1e-9);
    assert_eq!(v["n"], 20);
    let counts: Vec<u64> = v["bins"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["count"].as_u64().unwrap())
        .collect();
    assert_eq!(counts, [1, 1, 1, 2, 2, 3, 2, 3, 3, 2]);
    let bin = &v["bins"][5];
    for key in ["lower", "upper", "count", "mean_confidence", "accuracy"] {
        assert!(!bin[key].is_null(), "{key}");
    }

    let v = json_of(&["calibrate", path.to_str().unwrap(), "--bins", "15"]);
    assert!((f(&v["ece"]) - 0.2465).abs() < 1e-9);
    assert!((f(&v["mce"]) - 0.65).abs() < 1e-9);
}

#[test]
fn calibrate_human_table() {
    calibench()
        .args([
            "calibrate",
            fixture("calibration_reference.csv").to_str().unwrap(),
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("ECE 0.1605"))
        .stdout(predicate::str::contains("AUROC 0.8100"))
        .stdout(predicate::str::contains("(0.900, 1.000]"));
}

#[test]
fn calibrate_error_paths() {
    let p = |n: &str| fixture(n).to_str().unwrap().to_string();
    refused(
        &["calibrate", &p("calibration_bad_label.csv")],
        &["calibration_bad_label.csv:3: column \"correct\": `maybe` is not 0, 1, true or false"],
    );
    refused(
        &["calibrate", &p("calibration_out_of_range.csv")],
        &["calibration_out_of_range.csv:3: column \"confidence\": `1.3` is not a number in [0, 1]"],
    );
    refused(
        &["calibrate", &p("krippendorff2011_wide.csv")],
        &["the header has no `confidence` or `correct` column"],
    );
    refused(
        &["calibrate", &p("calibration_reference.csv"), "--bins", "0"],
        &["--bins"],
    );
    refused(
        &["calibrate", &p("empty.csv")],
        &["the header has no `confidence` or `correct` column"],
    );
}

// ---------------------------------------------------------------------------------------------
// the rest of the command line

#[test]
fn every_command_has_help() {
    for command in [
        "run",
        "gate",
        "accept",
        "alpha",
        "trust",
        "calibrate",
        "validate",
        "collect",
        "report",
    ] {
        calibench()
            .args([command, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Usage: calibench"));
    }
    calibench()
        .arg("--help")
        .assert()
        .success()
        .stdout(predicate::str::contains("Exit status: 0 done"));
}

#[test]
fn a_closed_pipe_ends_output_quietly() {
    // 10,000 bins make a human table far larger than a pipe's buffer, so the write must hit
    // the closed pipe.
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("calibench"))
        .args([
            "calibrate",
            fixture("calibration_reference.csv").to_str().unwrap(),
        ])
        .args(["--bins", "10000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let status = child.wait().unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    assert!(status.success(), "status {status:?}, stderr {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

// Regression (issue 21): `--bootstrap 9223372036854775807` panicked with "capacity overflow".
#[test]
fn bootstrap_counts_above_a_million_are_refused_naming_the_flag() {
    let wide = fixture("krippendorff2011_wide.csv");
    for args in [
        vec![
            "alpha",
            wide.to_str().unwrap(),
            "--bootstrap",
            "9223372036854775807",
        ],
        vec!["alpha", wide.to_str().unwrap(), "--bootstrap", "1000001"],
        vec![
            "run",
            "corpora/capacity-50",
            "--bootstrap",
            "9223372036854775807",
        ],
    ] {
        calibench()
            .args(&args)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("--bootstrap"))
            .stderr(predicate::str::contains("more than the 1000000 allowed"));
    }
}

// Regression (issue 21): `calibrate` read the first of two `confidence` columns, and `alpha`
// took a wide file's first rater row for its header (α 1.000 instead of 0.923).
#[test]
fn a_csv_header_that_repeats_a_column_or_is_data_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let twice = dir.path().join("twice.csv");
    std::fs::write(
        &twice,
        "confidence,correct,confidence\n0.9,1,0.1\n0.2,0,0.8\n",
    )
    .unwrap();
    calibench()
        .args(["calibrate", twice.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "twice.csv:1: column `confidence` is named twice in the header (columns 1 and 3)",
        ));
    let headless = dir.path().join("headless.csv");
    std::fs::write(&headless, "1,1,2,3\n2,1,2,3\n3,1,2,4\n").unwrap();
    calibench()
        .args(["alpha", headless.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the file has no header row"))
        .stderr(predicate::str::contains("rater,<unit1>,<unit2>,…"));
    // Regression (issue 34): a first row of data under a rater's name (`A,1,2,3`) was read as
    // the header, and rater A silently dropped. A header of titles is read as ever.
    let data_first = dir.path().join("data-first.csv");
    std::fs::write(&data_first, "A,1,2,3\nB,1,2,2\nC,1,3,3\n").unwrap();
    calibench()
        .args(["alpha", data_first.to_str().unwrap(), "--level", "interval"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "data-first.csv:1: the first row `A,1,2,3` looks like data, not a header",
        ));
    calibench()
        .args(["alpha", data_first.to_str().unwrap(), "--units-as-rows"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("call it `unit`"));
    for header in [
        "rater,1,2,3",
        "Coders,1,2,3",
        "judge_id,1,2,3",
        "rater,u1,u2,u3",
        ",1,2,3",
    ] {
        let titled = dir.path().join("titled.csv");
        std::fs::write(&titled, format!("{header}\nA,1,2,3\nB,1,2,2\nC,1,3,3\n")).unwrap();
        let m = json_of(&["alpha", titled.to_str().unwrap(), "--level", "interval"]);
        assert_eq!(m["raters"], 3, "{header}: {m}");
    }
}

// Regression (issue 34): in a CRLF file every CSV reader put its errors (and `import csv` its
// sources) one line too high, and a blank line before a row shifted it too. Each reader now
// names the line the row is on, in a CRLF file as in an LF one.
#[test]
fn every_csv_reader_names_the_right_line_in_crlf_files_and_after_blank_lines() {
    let dir = tempfile::tempdir().unwrap();
    for (file, text, args, line) in [
        (
            "long.csv",
            "unit,rater,value\nu1,a,1\n\nu1,b,x\n",
            &["alpha", "--level", "interval"][..],
            4,
        ),
        (
            "wide.csv",
            "rater,u1,u2\na,1,2\n\nb,1,x\n",
            &["alpha", "--level", "interval"][..],
            4,
        ),
        (
            "cal.csv",
            "confidence,correct\n0.5,1\n\n0.7,maybe\n",
            &["calibrate"][..],
            4,
        ),
        (
            "scores.csv",
            "item,score\na,1\n\nb,x\n",
            &["import", "csv", "--arm", "a", "--into", "out"][..],
            4,
        ),
    ] {
        for (ending, eol) in [("lf", "\n"), ("crlf", "\r\n")] {
            let name = format!("{ending}-{file}");
            std::fs::write(dir.path().join(&name), text.replace('\n', eol)).unwrap();
            let (head, tail) = args.split_at(if args[0] == "import" { 2 } else { 1 });
            let out = calibench()
                .current_dir(dir.path())
                .args(head)
                .arg(&name)
                .args(tail)
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
            assert!(
                stderr.contains(&format!("{name}:{line}:")),
                "{name}: {stderr}"
            );
        }
    }
}

// Issue 50: a CI script reading --json parses every outcome: an error is a JSON object on
// stdout too (the message still goes to stderr), with the exit status unchanged.
#[test]
fn json_errors_are_an_object_on_stdout() {
    let out = calibench()
        .args(["run", "/nonexistent-corpus", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["error"].as_str().unwrap().contains("/nonexistent-corpus"),
        "{v}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("error:"));
    // Without --json, nothing on stdout.
    let out = calibench()
        .args(["run", "/nonexistent-corpus"])
        .output()
        .unwrap();
    assert!(out.stdout.is_empty());
}

// Issue 50: ε = 0 is a valid alt-test (no allowance); 1 is not.
#[test]
fn alttest_takes_epsilon_from_0_up_to_1() {
    // Exit 1: the model does not pass; the test ran.
    let out = calibench()
        .args([
            "alttest",
            fixture("krippendorff2011_long.csv").to_str().unwrap(),
        ])
        .args([
            "--llm",
            "A",
            "--epsilon",
            "0",
            "--min-items-per-human",
            "3",
            "--json",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["epsilon"], 0.0);
    let out = calibench()
        .args([
            "alttest",
            fixture("krippendorff2011_long.csv").to_str().unwrap(),
        ])
        .args(["--llm", "A", "--epsilon", "1"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not a number in [0, 1)"));
}

// Issue 50: `schema reviews` without --mode shows the findings' shapes (doc and code), while
// still accepting any finding the reader would drop and count rather than refuse.
#[test]
fn schema_reviews_shows_the_findings_shapes_without_a_mode() {
    let out = calibench().args(["schema", "reviews"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let items = &v["properties"]["findings"]["items"]["anyOf"];
    assert!(items[0]["properties"]["section"].is_object(), "{items}");
    assert!(items[1]["properties"]["file"].is_object(), "{items}");
    assert_eq!(items[2], Value::Bool(true));
}
