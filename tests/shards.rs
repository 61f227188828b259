//! Shards and merge (docs/guides/live-collection.md, "Shards"): the live example collected in
//! three shards and merged replays to exactly the figures of one collection; merge refuses a
//! missing, repeated or foreign shard and a call recorded twice; `--arm LABEL=DIR` joins
//! collections of different arms, each keeping its harness record, and `run` names the drift.

mod common;

use std::path::{Path, PathBuf};
use std::process::Output;

use common::calibench;

struct Live {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Live {
    fn new() -> Live {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("live");
        common::copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-live"),
            &root,
        );
        Live { _dir: dir, root }
    }

    fn cmd(&self, args: &[&str]) -> Output {
        calibench()
            .current_dir(&self.root)
            .args(args)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        common::stdout_of(calibench().current_dir(&self.root).args(args))
    }

    fn refused(&self, args: &[&str]) -> String {
        let out = self.cmd(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    }

    /// The live example collected in `n` shards, `runs/s1` to `runs/sN`.
    fn shards(&self, n: u32) {
        for k in 1..=n {
            self.ok(&[
                "collect",
                ".",
                "--shard",
                &format!("{k}/{n}"),
                "--run-id",
                &format!("s{k}"),
                "--runs-dir",
                "runs",
            ]);
        }
    }

    /// `run` of the corpus `dir` as run id `id`: its metrics.json with the id blanked.
    fn figures(&self, dir: &str, id: &str) -> String {
        self.ok(&[
            "run",
            ".",
            "--corpus",
            dir,
            "--run-id",
            id,
            "--runs-dir",
            "out",
            "--reports-dir",
            "rep",
            "--no-plots",
            "-q",
        ]);
        std::fs::read_to_string(self.root.join("out").join(id).join("metrics.json"))
            .unwrap()
            .replace(&format!("\"run_id\": \"{id}\""), "\"run_id\": \"ID\"")
    }
}

#[test]
fn three_shards_merged_replay_to_the_figures_of_one_collection() {
    let l = Live::new();
    l.ok(&["collect", ".", "--run-id", "whole", "--runs-dir", "runs"]);
    let mut held = 0;
    for k in 1..=3 {
        let shard = format!("{k}/3");
        l.ok(&[
            "collect",
            ".",
            "--shard",
            &shard,
            "--run-id",
            &format!("s{k}"),
            "--runs-dir",
            "runs",
        ]);
        let m: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(l.root.join(format!("runs/s{k}/collect.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(m["shard"]["k"], k);
        assert_eq!(m["shard"]["n"], 3);
        held += std::fs::read_to_string(l.root.join(format!("runs/s{k}/reviews.jsonl")))
            .unwrap()
            .lines()
            .count();
    }
    assert_eq!(held, 36, "the shards hold every call once");
    // In any order of the directories.
    let out = l.ok(&["merge", "merged", "runs/s3", "runs/s1", "runs/s2"]);
    assert!(out.contains("merged 3 collections into merged"), "{out}");
    for file in ["reviews.jsonl", "judges.jsonl", "verdicts.jsonl"] {
        assert_eq!(
            std::fs::read(l.root.join("merged").join(file)).unwrap(),
            std::fs::read(l.root.join("runs/whole").join(file)).unwrap(),
            "{file}"
        );
    }
    let (whole, merged) = (
        l.figures("runs/whole", "whole-run"),
        l.figures("merged", "merged-run"),
    );
    assert!(
        whole == merged,
        "the merged corpus's figures differ from one collection's"
    );

    // Refusals, each writing nothing.
    let e = l.refused(&["merge", "m2", "runs/s1", "runs/s2"]);
    assert!(e.contains("shard 3/3 is missing"), "{e}");
    let e = l.refused(&["merge", "m2", "runs/s1", "runs/s2", "runs/s3", "runs/s1"]);
    assert!(e.contains("is shard 1/3, and so is"), "{e}");
    let e = l.refused(&["merge", "m2", "runs/s1", "runs/whole"]);
    assert!(
        e.contains("runs/whole/collect.json: `shard`: is not a shard"),
        "{e}"
    );
    // A call recorded in two shards (a line copied across).
    let s2 = l.root.join("runs/s2/reviews.jsonl");
    let mut text = std::fs::read_to_string(&s2).unwrap();
    text.push_str(
        std::fs::read_to_string(l.root.join("runs/s1/reviews.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    );
    text.push('\n');
    std::fs::write(&s2, text).unwrap();
    let e = l.refused(&["merge", "m2", "runs/s1", "runs/s2", "runs/s3"]);
    // Caught as the line of another shard's target (a shard's lines are its own targets').
    assert!(e.contains("runs/s2/reviews.jsonl:13: target `"), "{e}");
    assert!(e.contains("is not in shard 2/3"), "{e}");
    assert!(!l.root.join("m2").exists());
    let e = l.refused(&["merge", "merged", "runs/s1", "runs/s2", "runs/s3"]);
    assert!(e.contains("merged: already exists"), "{e}");
    // A shard of another plan: the targets changed between the shards.
    std::fs::write(l.root.join("documents/pricing.md"), "edited").unwrap();
    l.ok(&[
        "collect",
        ".",
        "--shard",
        "1/3",
        "--run-id",
        "other",
        "--runs-dir",
        "runs",
    ]);
    let e = l.refused(&["merge", "m2", "runs/other", "runs/s2", "runs/s3"]);
    assert!(e.contains("`shard.plan`: collects another plan"), "{e}");
}

#[test]
fn arms_collected_apart_are_joined_and_their_harness_compared() {
    let l = Live::new();
    l.ok(&[
        "collect",
        ".",
        "--run-id",
        "last-week",
        "--runs-dir",
        "runs",
    ]);
    l.ok(&["collect", ".", "--run-id", "today", "--runs-dir", "runs"]);
    // Today's treatment was collected with another prompt file.
    let today = l.root.join("runs/today/collect.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&today).unwrap()).unwrap();
    m["provenance"]["arms"]["anchored"]["roles"]["reviewer"]["coherence"]["files"]
        ["./reviewers/review.sh"] = "1".repeat(64).into();
    std::fs::write(&today, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    l.ok(&[
        "merge",
        "ab",
        "--arm",
        "float=runs/last-week",
        "--arm",
        "anchored=runs/today",
    ]);
    let out = l.cmd(&[
        "run",
        ".",
        "--corpus",
        "ab",
        "--run-id",
        "ab",
        "--runs-dir",
        "out",
        "--reports-dir",
        "rep",
        "--no-plots",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("reviewer `coherence` files differs between the arms"),
        "{err}"
    );
    let e = l.refused(&[
        "merge",
        "x",
        "--arm",
        "nope=runs/today",
        "--arm",
        "float=runs/last-week",
    ]);
    assert!(e.contains("holds no arm labelled `nope`"), "{e}");
    let e = l.refused(&["merge", "x", "--arm", "float"]);
    assert!(e.contains("`float` is not LABEL=DIR"), "{e}");
    // Regression (hostile-4/07): a baseline collected before calibench kept a harness record
    // merged without a word, and no drift could be checked.
    let last_week = l.root.join("runs/last-week/collect.json");
    let mut m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&last_week).unwrap()).unwrap();
    m.as_object_mut().unwrap().remove("provenance");
    std::fs::write(&last_week, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    l.ok(&[
        "merge",
        "half",
        "--arm",
        "float=runs/last-week",
        "--arm",
        "anchored=runs/today",
    ]);
    let out = l.cmd(&[
        "run",
        ".",
        "--corpus",
        "half",
        "--run-id",
        "half",
        "--runs-dir",
        "out",
        "--reports-dir",
        "rep",
        "--no-plots",
    ]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the baseline has no record of its harness (collect.json `provenance`): drift between the arms cannot be checked"),
        "{err}"
    );
}

// Regression (hostile-4/03): a target named like an arm label (`float`) broke merge's order —
// a finding's qualified id was searched for a target's name, and the label matched first — so the
// merged files differed from one collection's, and with the order the shards were given. Each
// line's place now comes from its own call: its target, or the target of the finding it names.
#[test]
fn a_target_named_like_an_arm_label_merges_in_one_collection_s_order() {
    let l = Live::new();
    std::fs::rename(
        l.root.join("documents/pricing.md"),
        l.root.join("documents/float.md"),
    )
    .unwrap();
    l.ok(&["collect", ".", "--run-id", "whole", "--runs-dir", "runs"]);
    l.shards(2);
    l.ok(&["merge", "m12", "runs/s1", "runs/s2"]);
    l.ok(&["merge", "m21", "runs/s2", "runs/s1"]);
    for merged in ["m12", "m21"] {
        for file in [
            "reviews.jsonl",
            "judges.jsonl",
            "verdicts.jsonl",
            "validations.jsonl",
        ] {
            let whole = std::fs::read(l.root.join("runs/whole").join(file)).ok();
            assert_eq!(
                std::fs::read(l.root.join(merged).join(file)).ok(),
                whole,
                "{merged}/{file}"
            );
        }
    }
}

// Regression (hostile-4/05): merge followed a link in a shard and copied whatever it pointed
// at into the merged corpus. A shard holds regular files only; anything else is refused.
#[test]
fn a_link_inside_a_shard_is_refused_never_followed() {
    let l = Live::new();
    l.shards(2);
    std::fs::write(l.root.join("outside.txt"), "SECRET").unwrap();
    let folder = l.root.join("runs/s1/sources/x");
    std::fs::create_dir_all(&folder).unwrap();
    std::os::unix::fs::symlink(l.root.join("outside.txt"), folder.join("leak.txt")).unwrap();
    let e = l.refused(&["merge", "m", "runs/s1", "runs/s2"]);
    assert!(
        e.contains("runs/s1/sources/x/leak.txt: is a symbolic link, not a regular file"),
        "{e}"
    );
    assert!(!l.root.join("m").exists());
    // A stage's file that is a link is refused too.
    std::fs::remove_dir_all(l.root.join("runs/s1/sources")).unwrap();
    let reviews = l.root.join("runs/s2/reviews.jsonl");
    std::fs::rename(&reviews, l.root.join("elsewhere.jsonl")).unwrap();
    std::os::unix::fs::symlink(l.root.join("elsewhere.jsonl"), &reviews).unwrap();
    let e = l.refused(&["merge", "m", "runs/s1", "runs/s2"]);
    assert!(e.contains("reviews.jsonl: is a symbolic link"), "{e}");
}

// Regression (hostile-4/05): a FIFO in a shard hung merge, and /dev/zero linked in read until
// memory ran out. A special file is refused without being opened.
#[test]
fn a_fifo_inside_a_shard_is_refused_without_reading_it() {
    let l = Live::new();
    l.shards(2);
    let reviews = l.root.join("runs/s2/reviews.jsonl");
    std::fs::remove_file(&reviews).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&reviews)
        .status()
        .unwrap();
    assert!(made.success());
    let e = l.refused(&["merge", "m", "runs/s1", "runs/s2"]);
    assert!(
        e.contains("reviews.jsonl: is a special file (a pipe, socket or device)"),
        "{e}"
    );
    assert!(!l.root.join("m").exists());
}

// Regression (hostile-4/01): a shard whose .jsonl files were lost (only collect.json left)
// merged with exit 0, and the merged corpus decided on part of the plan.
#[test]
fn a_shard_without_the_files_its_record_counts_is_refused_naming_the_file() {
    let l = Live::new();
    l.shards(3);
    std::fs::remove_file(l.root.join("runs/s2/reviews.jsonl")).unwrap();
    let e = l.refused(&["merge", "m", "runs/s1", "runs/s2", "runs/s3"]);
    assert!(
        e.contains("runs/s2/reviews.jsonl: is missing: collect.json records"),
        "{e}"
    );
    assert!(e.contains("reviewer calls"), "{e}");
    assert!(!l.root.join("m").exists());
}

// Regression (hostile-4/04): a forged plan hash, a shard "4 of 3" and a line on a target no
// plan has were merged.
#[test]
fn a_forged_shard_record_is_refused_naming_what_differs() {
    let l = Live::new();
    l.shards(2);
    let record = l.root.join("runs/s2/collect.json");
    let original = std::fs::read_to_string(&record).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&original).unwrap();
    v["shard"]["plan"] = "0".repeat(64).into();
    std::fs::write(&record, v.to_string()).unwrap();
    let e = l.refused(&["merge", "m", "runs/s1", "runs/s2"]);
    assert!(
        e.contains("runs/s2/collect.json: `shard.plan`: does not match its own plan"),
        "{e}"
    );
    let mut v: serde_json::Value = serde_json::from_str(&original).unwrap();
    v["shard"]["k"] = 4.into();
    std::fs::write(&record, v.to_string()).unwrap();
    let e = l.refused(&["merge", "m", "runs/s1", "runs/s2"]);
    assert!(e.contains("is shard 4/2: K runs from 1 to N"), "{e}");
    std::fs::write(&record, &original).unwrap();
    // A line on a target outside the plan.
    let reviews = l.root.join("runs/s2/reviews.jsonl");
    let text = std::fs::read_to_string(&reviews).unwrap();
    let first = text.lines().next().unwrap();
    let v: serde_json::Value = serde_json::from_str(first).unwrap();
    let ghost = first.replace(
        &format!("\"target\":\"{}\"", v["target"].as_str().unwrap()),
        "\"target\":\"ghost\"",
    );
    std::fs::write(&reviews, format!("{text}{ghost}\n")).unwrap();
    let e = l.refused(&["merge", "m", "runs/s1", "runs/s2"]);
    assert!(e.contains("target `ghost` is not in the plan"), "{e}");
    // Shards collected with different harness environments name the variable.
    std::fs::write(&reviews, &text).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&original).unwrap();
    for arm in ["float", "anchored"] {
        v["provenance"]["arms"][arm]["calibench"] = "0.0.1".into();
    }
    std::fs::write(&record, v.to_string()).unwrap();
    let e = l.refused(&["merge", "m", "runs/s1", "runs/s2"]);
    assert!(
        e.contains("calibench's version: ") && e.contains("(shard 1), 0.0.1 (shard 2)"),
        "{e}"
    );
    assert!(!l.root.join("m").exists());
}

// Regression (hostile-4/17 b, e): an output folder inside a shard was written into it; one
// --arm made a one-arm corpus.
#[test]
fn merge_writes_outside_its_inputs_and_needs_two_arms() {
    let l = Live::new();
    l.shards(2);
    let e = l.refused(&["merge", "runs/s1/sources/merged", "runs/s1", "runs/s2"]);
    assert!(e.contains("is inside runs/s1"), "{e}");
    assert!(!l.root.join("runs/s1/sources/merged").exists());
    let e = l.refused(&["merge", "m", "--arm", "float=runs/s1"]);
    assert!(e.contains("two or more collections"), "{e}");
    let out = l.ok(&["merge", "m", "runs/s1", "runs/s2"]);
    assert!(out.starts_with("merged 2 collections into m"), "{out}");
    // The merged record plans the whole plan's calls.
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(l.root.join("m/collect.json")).unwrap()).unwrap();
    assert_eq!(v["stages"][0]["calls"], v["stages"][0]["recorded"]);
}

/// `--shard auto` on the schedulers teams run (docs/guides/live-collection.md, "On a
/// scheduler"): the guide's SLURM array script and Kubernetes Indexed Job command, run through
/// `sh` as the scheduler runs them, with the variables each sets for its jobs; every job's
/// shard merged is byte-identical to one collection. Without a scheduler's variables the flag
/// is refused before anything runs.
#[test]
fn the_guides_scheduler_commands_collect_their_shards_and_merge_exactly() {
    const SLURM: &str = r#"calibench collect corpora/doc-review-live --shard auto --run-id "s$SLURM_ARRAY_TASK_ID" --or-resume --runs-dir runs"#;
    const KUBERNETES: &str = r#"calibench collect corpora/doc-review-live --shard auto --shards 3 --run-id "k$JOB_COMPLETION_INDEX" --or-resume --runs-dir runs"#;
    const BATCH: &str = r#"calibench collect corpora/doc-review-live --shard auto --run-id "b$AWS_BATCH_JOB_ARRAY_INDEX" --or-resume --runs-dir runs"#;
    let guide = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/guides/live-collection.md"),
    )
    .unwrap();
    for command in [SLURM, KUBERNETES, BATCH] {
        assert!(guide.contains(command), "the guide shows `{command}`");
    }
    assert!(
        guide.contains("#SBATCH --array=1-3")
            && guide.contains("completions: 3")
            && guide.contains("--array-properties size=3")
    );

    let dir = tempfile::tempdir().unwrap();
    common::copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora/doc-review-live"),
        &dir.path().join("corpora/doc-review-live"),
    );
    let bin = assert_cmd::cargo::cargo_bin("calibench");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // One job of an array: the command through `sh -c`, with only the scheduler's variables.
    let job = |command: &str, vars: &[(&str, String)]| -> Output {
        let mut sh = std::process::Command::new("sh");
        sh.current_dir(dir.path())
            .args(["-c", command])
            .env("PATH", &path)
            .env_remove("JOB_COMPLETION_INDEX")
            .env_remove("AWS_BATCH_JOB_ARRAY_INDEX")
            .env_remove("AWS_BATCH_JOB_ARRAY_SIZE")
            .env_remove("SLURM_ARRAY_TASK_ID");
        for slurm in ["MIN", "MAX", "STEP", "COUNT"] {
            sh.env_remove(format!("SLURM_ARRAY_TASK_{slurm}"));
        }
        for (k, v) in vars {
            sh.env(k, v);
        }
        sh.output().unwrap()
    };
    let slurm_task = |task: u32| {
        job(
            SLURM,
            &[
                ("SLURM_ARRAY_TASK_ID", task.to_string()),
                ("SLURM_ARRAY_TASK_MIN", "1".into()),
                ("SLURM_ARRAY_TASK_MAX", "3".into()),
                ("SLURM_ARRAY_TASK_COUNT", "3".into()),
            ],
        )
    };
    // A job that collected its shard, and said which and why.
    let took = |out: Output, says: String| {
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{said}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(said.contains(&says), "{said}");
    };
    for task in 1..=3 {
        took(
            slurm_task(task),
            format!("(shard {task} of 3, from SLURM_ARRAY_TASK_ID={task}"),
        );
    }
    for index in 0..3 {
        took(
            job(KUBERNETES, &[("JOB_COMPLETION_INDEX", index.to_string())]),
            format!(
                "(shard {} of 3, from JOB_COMPLETION_INDEX={index}, --shards 3",
                index + 1
            ),
        );
    }
    // AWS Batch gives each child the array's size: no --shards.
    for index in 0..3 {
        let vars = [
            ("AWS_BATCH_JOB_ARRAY_INDEX", index.to_string()),
            ("AWS_BATCH_JOB_ARRAY_SIZE", "3".into()),
        ];
        took(
            job(BATCH, &vars),
            format!(
                "(shard {} of 3, from AWS_BATCH_JOB_ARRAY_INDEX={index}, AWS_BATCH_JOB_ARRAY_SIZE=3",
                index + 1
            ),
        );
    }
    // A scheduler runs a job again after a crash (a requeued SLURM task, a Job's next pod):
    // task 2 killed mid-write (half its lines and a torn one left) and Kubernetes index 1
    // run twice both continue their own run, and the merges below stay exact.
    let s2 = dir.path().join("runs/s2/reviews.jsonl");
    let lines = std::fs::read_to_string(&s2).unwrap();
    let kept: Vec<&str> = lines.lines().collect();
    assert!(kept.len() >= 2, "shard 2 holds {} lines", kept.len());
    let half = kept.len() / 2;
    let torn = &kept[half][..kept[half].len() / 2];
    std::fs::write(&s2, format!("{}\n{torn}", kept[..half].join("\n"))).unwrap();
    took(slurm_task(2), "(shard 2 of 3".into());
    took(
        job(KUBERNETES, &[("JOB_COMPLETION_INDEX", "1".into())]),
        "(shard 2 of 3".into(),
    );
    // --or-resume says what to do with a --run-id; alone, or beside --resume, it is refused.
    for args in [
        &["--or-resume"][..],
        &["--or-resume", "--resume", "s2", "--shard", "2/3"],
    ] {
        let out = calibench()
            .current_dir(dir.path())
            .args(["collect", "corpora/doc-review-live", "--runs-dir", "runs"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--run-id <RUN_ID>"), "{err}");
    }
    // Without --or-resume, the retry is refused as a run id that exists.
    let refused = job(
        &SLURM.replace(" --or-resume", ""),
        &[
            ("SLURM_ARRAY_TASK_ID", "2".into()),
            ("SLURM_ARRAY_TASK_MIN", "1".into()),
            ("SLURM_ARRAY_TASK_MAX", "3".into()),
            ("SLURM_ARRAY_TASK_COUNT", "3".into()),
        ],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--resume s2"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
    let run = |args: &[&str]| {
        common::stdout_of(calibench().current_dir(dir.path()).args(args));
    };
    run(&[
        "collect",
        "corpora/doc-review-live",
        "--run-id",
        "whole",
        "--runs-dir",
        "runs",
    ]);
    run(&["merge", "slurm", "runs/s1", "runs/s2", "runs/s3"]);
    run(&["merge", "kubernetes", "runs/k0", "runs/k1", "runs/k2"]);
    run(&["merge", "batch", "runs/b0", "runs/b1", "runs/b2"]);
    for merged in ["slurm", "kubernetes", "batch"] {
        for file in ["reviews.jsonl", "judges.jsonl", "verdicts.jsonl"] {
            assert_eq!(
                std::fs::read(dir.path().join(merged).join(file)).unwrap(),
                std::fs::read(dir.path().join("runs/whole").join(file)).unwrap(),
                "{merged}/{file}"
            );
        }
    }
    // No scheduler: refused, naming what it looked for; nothing written.
    let out = job(
        "calibench collect corpora/doc-review-live --shard auto --run-id none --runs-dir runs",
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("JOB_COMPLETION_INDEX (a Kubernetes Indexed Job), SLURM_ARRAY_TASK_ID (a SLURM job array), AWS_BATCH_JOB_ARRAY_INDEX (an AWS Batch array job) and found none set"),
        "{err}"
    );
    assert!(!dir.path().join("runs/none").exists());
    // A sparse SLURM array (`--array=0-3,10`): task 2's place is not its shard, and every task
    // is refused before anything runs.
    let out = job(
        "calibench collect corpora/doc-review-live --shard auto --run-id sparse --runs-dir runs",
        &[
            ("SLURM_ARRAY_TASK_ID", "2".into()),
            ("SLURM_ARRAY_TASK_MIN", "0".into()),
            ("SLURM_ARRAY_TASK_MAX", "10".into()),
            ("SLURM_ARRAY_TASK_STEP", "1".into()),
            ("SLURM_ARRAY_TASK_COUNT", "5".into()),
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("make 11 tasks, not SLURM_ARRAY_TASK_COUNT=5: a sparse array")
            && err.contains("--shard K/N"),
        "{err}"
    );
    assert!(!dir.path().join("runs/sparse").exists());
    // The resume command a shard prints names the shard outright.
    let m: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("runs/k1/collect.json")).unwrap())
            .unwrap();
    assert_eq!(
        (m["shard"]["k"].as_u64(), m["shard"]["n"].as_u64()),
        (Some(2), Some(3))
    );
}

#[test]
fn a_retry_of_a_job_killed_before_it_recorded_anything_starts_afresh() {
    let l = Live::new();
    l.ok(&["collect", ".", "--run-id", "whole", "--runs-dir", "runs"]);
    // The retry a scheduler makes: the job's own command again.
    let retry = |id: &str, shard: &str| {
        l.cmd(&[
            "collect",
            ".",
            "--shard",
            shard,
            "--run-id",
            id,
            "--or-resume",
            "--runs-dir",
            "runs",
        ])
    };
    let refused = |out: Output| {
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8(out.stderr).unwrap()
    };
    // Killed between claiming its directory and writing collect.json: its lock, and a copy of
    // the corpus's sources/ cut short. Another killed before it took the lock: an empty folder.
    let s2 = l.root.join("runs/s2");
    std::fs::create_dir_all(s2.join("sources/t")).unwrap();
    std::fs::write(s2.join(".calibench.lock"), "4242").unwrap();
    std::fs::write(s2.join("sources/t/half.py"), "def f(").unwrap();
    std::fs::create_dir_all(l.root.join("runs/s3")).unwrap();
    for k in 1..=3 {
        let out = retry(&format!("s{k}"), &format!("{k}/3"));
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            said.contains(&format!("collect s{k} (shard {k} of 3)")),
            "{said}"
        );
    }
    assert!(
        !s2.join("sources").exists(),
        "the cut copy is gone (this corpus has no sources/)"
    );
    l.ok(&["merge", "merged", "runs/s1", "runs/s2", "runs/s3"]);
    for file in ["reviews.jsonl", "judges.jsonl", "verdicts.jsonl"] {
        assert_eq!(
            std::fs::read(l.root.join("merged").join(file)).unwrap(),
            std::fs::read(l.root.join("runs/whole").join(file)).unwrap(),
            "{file}"
        );
    }
    // A retry with another shard than its run's is refused as a retry, not as a resume.
    let err = refused(retry("s2", "3/3"));
    assert!(
        err.contains(
            "was collected with --shard 2/3, but this retry (--or-resume) has --shard 3/3"
        ),
        "{err}"
    );
    // What calibench did not leave is never started in nor removed: a folder of someone
    // else's, and a run's lock beside lines without their collect.json.
    let theirs = l.root.join("runs/theirs");
    std::fs::create_dir_all(theirs.join("sources")).unwrap();
    std::fs::write(theirs.join("notes.txt"), "mine").unwrap();
    let lines = l.root.join("runs/lines");
    std::fs::create_dir_all(&lines).unwrap();
    std::fs::write(lines.join(".calibench.lock"), "").unwrap();
    std::fs::write(lines.join("reviews.jsonl"), "{}\n").unwrap();
    for id in ["theirs", "lines"] {
        let err = refused(retry(id, "1/3"));
        assert!(
            err.contains(&format!(
                "runs/{id}: --run-id: exists and is not a collection: it holds no collect.json"
            )),
            "{err}"
        );
    }
    assert!(theirs.join("sources").is_dir() && theirs.join("notes.txt").is_file());
    assert_eq!(std::fs::read(lines.join("reviews.jsonl")).unwrap(), b"{}\n");
}
