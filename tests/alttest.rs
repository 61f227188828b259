//! `calibench alttest`: the alternative annotator test from the command line, on every layout
//! `alpha` reads, with its exit statuses and refusals. The procedure's steps are worked by hand
//! in `src/stats/alttest.rs`; the published figures of the paper are checked by
//! `benches/alttest_reference.py` against the authors' data.

use assert_cmd::Command;
use serde_json::Value;

fn calibench() -> Command {
    let mut cmd = Command::cargo_bin("calibench").unwrap();
    cmd.env_remove("NO_COLOR");
    cmd
}

/// Three humans who agree on 40 items (two labels, alternating), a model that gives their label
/// (`good`) and one that gives the other (`bad`), and a fourth human who labelled 5 items.
fn ratings() -> Vec<(String, &'static str, &'static str)> {
    let mut rows = Vec::new();
    for i in 0..40 {
        let (label, other) = if i % 2 == 0 {
            ("yes", "no")
        } else {
            ("no", "yes")
        };
        let unit = format!("item-{i:02}");
        for h in ["ann-1", "ann-2", "ann-3"] {
            rows.push((unit.clone(), h, label));
        }
        if i < 5 {
            rows.push((unit.clone(), "ann-4", label));
        }
        rows.push((unit.clone(), "good", label));
        rows.push((unit, "bad", other));
    }
    rows
}

fn long_csv(rows: &[(String, &str, &str)]) -> String {
    let mut s = String::from("unit,rater,value\n");
    for (u, r, v) in rows {
        s += &format!("{u},{r},{v}\n");
    }
    s
}

fn write(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn results(args: &[&str]) -> (Vec<Value>, i32) {
    let out = calibench()
        .arg("alttest")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    let code = out.status.code().unwrap();
    assert!(code != 2, "{}", String::from_utf8_lossy(&out.stderr));
    let lines = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    (lines, code)
}

fn refused(args: &[&str]) -> String {
    let out = calibench().arg("alttest").args(args).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(out.stdout.is_empty());
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn a_model_that_gives_the_humans_label_passes_and_one_that_never_does_fails() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "r.csv", &long_csv(&ratings()));
    let (good, code) = results(&[&file, "--llm", "good", "--llm", "bad"]);
    assert_eq!(code, 1, "one of the two fails");
    assert_eq!(good.len(), 2, "one line per model, in the order named");
    let (g, b) = (&good[0], &good[1]);
    assert_eq!(g["llm"], "good");
    assert_eq!(g["passed"], true);
    assert_eq!(g["winning_rate"], 1.0);
    assert_eq!(g["advantage_probability"], 1.0);
    assert_eq!(g["items"], 40);
    assert_eq!(g["epsilon"], 0.2);
    assert_eq!(g["q"], 0.05);
    // The other model is not a human: three humans tested, ann-4 skipped with 5 items.
    assert_eq!(g["humans"].as_array().unwrap().len(), 3);
    assert_eq!(g["skipped_humans"], serde_json::json!(["ann-4"]));
    // Every W_h is 1 and every W_f 0 for `bad`: d is 1 throughout, p = 1.
    assert_eq!(b["passed"], false);
    assert_eq!(b["winning_rate"], 0.0);
    assert_eq!(b["advantage_probability"], 0.0);
    for h in b["humans"].as_array().unwrap() {
        assert_eq!(h["p_value"], 1.0);
        assert_eq!(h["rejected"], false);
        assert_eq!(h["rho_human"], 1.0);
    }
    let (only_good, code) = results(&[&file, "--llm", "good"]);
    assert_eq!(code, 0);
    // `bad` is now one of the humans: it aligns worse than the model with the others.
    assert_eq!(only_good[0]["humans"].as_array().unwrap().len(), 4);

    // The human summary says what passing means and lists the skipped annotator.
    let out = calibench()
        .args(["alttest", &file, "--llm", "good", "--llm", "bad"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("good: passes — it can stand in for these annotators"),
        "{text}"
    );
    assert!(
        text.contains("bad: fails — it cannot yet replace these annotators"),
        "{text}"
    );
    assert!(
        text.contains("skipped (too few kept items): ann-4"),
        "{text}"
    );
}

#[test]
fn every_layout_alpha_reads_gives_the_same_test() {
    let dir = tempfile::tempdir().unwrap();
    let rows = ratings();
    let long = write(&dir, "long.csv", &long_csv(&rows));
    // Unit by unit (contiguous) and rater by rater (interleaved) read alike.
    let mut by_rater = rows.clone();
    by_rater.sort_by_key(|r| r.1);
    let interleaved = write(&dir, "interleaved.csv", &long_csv(&by_rater));
    let jsonl = write(
        &dir,
        "r.jsonl",
        &by_rater
            .iter()
            .map(|(u, r, v)| {
                format!("{{\"unit\": \"{u}\", \"rater\": \"{r}\", \"value\": \"{v}\"}}\n")
            })
            .collect::<String>(),
    );
    let raters = ["ann-1", "ann-2", "ann-3", "ann-4", "good", "bad"];
    let units: Vec<String> = (0..40).map(|i| format!("item-{i:02}")).collect();
    let value = |u: &str, r: &str| {
        rows.iter()
            .find(|x| x.0 == u && x.1 == r)
            .map_or("", |x| x.2)
    };
    let mut wide = format!("rater,{}\n", units.join(","));
    for r in raters {
        let cells: Vec<&str> = units.iter().map(|u| value(u, r)).collect();
        wide += &format!("{r},{}\n", cells.join(","));
    }
    let wide = write(&dir, "wide.csv", &wide);
    let mut by_unit = format!("unit,{}\n", raters.join(","));
    for u in &units {
        let cells: Vec<&str> = raters.iter().map(|r| value(u, r)).collect();
        by_unit += &format!("{u},{}\n", cells.join(","));
    }
    let by_unit = write(&dir, "units.csv", &by_unit);

    let reference = results(&[&long, "--llm", "good", "--llm", "bad"]);
    for args in [
        vec![interleaved.as_str()],
        vec![jsonl.as_str()],
        vec![wide.as_str()],
        vec![by_unit.as_str(), "--units-as-rows"],
    ] {
        let mut a = args.clone();
        a.extend(["--llm", "good", "--llm", "bad"]);
        assert_eq!(results(&a), reference, "{args:?}");
    }
}

#[test]
fn interval_data_is_aligned_by_negative_rmse() {
    // Two humans score 0.2 and 0.4 on 30 items, a third 0.3; the model says 0.3 everywhere.
    // Leaving out ann-1 (0.2): the model is 0.1 from the others' mean square root, ann-1 is
    // sqrt((0.2² + 0.1²) / 2) = 0.158 away: the model wins every item, d = −1, p = 0.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("unit,rater,value\n");
    for i in 0..30 {
        for (r, v) in [
            ("ann-1", 0.2),
            ("ann-2", 0.4),
            ("ann-3", 0.3),
            ("judge", 0.3),
        ] {
            text += &format!("u{i},{r},{v}\n");
        }
    }
    let file = write(&dir, "scores.csv", &text);
    let (r, code) = results(&[&file, "--llm", "judge", "--level", "interval"]);
    assert_eq!(code, 0);
    let humans = r[0]["humans"].as_array().unwrap();
    let by = |name: &str| humans.iter().find(|h| h["human"] == name).unwrap();
    assert_eq!(by("ann-1")["rho_llm"], 1.0);
    assert_eq!(by("ann-1")["rho_human"], 0.0);
    // ann-3 also says 0.3: the two tie on every item (W_f = W_h = 1, d = 0 < ε): rejected.
    assert_eq!(by("ann-3")["rho_human"], 1.0);
    assert_eq!(by("ann-3")["rejected"], true);
    // Nominal: 0.45 and 0.3 are different categories, however close. A model at 0.45 is
    // nearer ann-2 (0.4) than ann-3 is, but at the nominal level it matches nobody.
    let near = write(&dir, "near.csv", &text.replace(",judge,0.3", ",judge,0.45"));
    let (interval, _) = results(&[&near, "--llm", "judge", "--level", "interval"]);
    let (nominal, _) = results(&[&near, "--llm", "judge"]);
    let rho = |r: &Vec<Value>, h: usize| r[0]["humans"][h]["rho_llm"].clone();
    // Leaving out ann-3 (0.3): others 0.2, 0.4. RMSE: 0.3 is 0.1 away, 0.45 is 0.18: ann-3 wins.
    assert_eq!(rho(&interval, 2), 0.0);
    // Accuracy: both match neither: a tie, counted for both.
    assert_eq!(rho(&nominal, 2), 1.0);
}

#[test]
fn bad_input_is_refused_naming_what_to_change() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(&dir, "r.csv", &long_csv(&ratings()));

    let e = refused(&[&file, "--llm", "gpt"]);
    assert!(e.contains("--llm `gpt` is not a rater in the file"), "{e}");
    assert!(
        e.contains("`ann-1`") && e.contains("`good`"),
        "lists the raters: {e}"
    );

    // Every rater but one named as a model: one human left.
    let e = refused(&[
        &file, "--llm", "good", "--llm", "bad", "--llm", "ann-2", "--llm", "ann-3", "--llm",
        "ann-4",
    ]);
    assert!(
        e.contains("at least 2 human annotators; the data has 1"),
        "{e}"
    );

    // ε is in [0, 1): 0 is a test with no allowance (tests/cli.rs runs one).
    for eps in ["1", "1.5", "-0.1", "x"] {
        let e = refused(&[&file, "--llm", "good", "--epsilon", eps]);
        assert!(e.contains("is not a number in [0, 1)"), "{eps}: {e}");
    }
    let e = refused(&[&file, "--llm", "good", "--q", "0"]);
    assert!(e.contains("strictly between 0 and 1"), "{e}");

    // Category labels at the interval level: the line and column are named.
    let e = refused(&[&file, "--llm", "good", "--level", "interval"]);
    assert!(e.contains("r.csv:2: column \"value\""), "{e}");
    assert!(e.contains("use --level nominal"), "{e}");

    // A model that rated nothing the humans rated.
    let mut text = long_csv(&ratings());
    text += "other-item,solo,yes\n";
    let file2 = write(&dir, "solo.csv", &text);
    let e = refused(&[&file2, "--llm", "solo"]);
    assert!(e.contains("no item has a value from `solo`"), "{e}");

    // Too few items for every human.
    let e = refused(&[&file, "--llm", "good", "--min-items-per-human", "41"]);
    assert!(
        e.contains("no human has 41 or more of the 40 kept items"),
        "{e}"
    );

    // A rater who rates an item twice: both lines named.
    let file3 = write(
        &dir,
        "twice.csv",
        "unit,rater,value\nu1,a,1\nu1,b,1\nu1,a,0\nu1,m,1\n",
    );
    let e = refused(&[&file3, "--llm", "m"]);
    assert!(
        e.contains("rater `a` rates unit `u1` a second time (first on line 2)"),
        "{e}"
    );
    assert!(e.contains("twice.csv:4:"), "{e}");
}
