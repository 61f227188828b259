use super::*;
use serde_json::json;

fn doc_finding() -> Value {
    json!({"id": "f1", "title": "Rollback is unspecified", "severity": "P1", "section": "Deploy",
               "finding_type": "omission", "autofix_class": "manual", "confidence": 0.72})
}

#[test]
fn unreadable_records_are_collected_with_line_and_field() {
    let text = r#"{"target": "a", "arm": "baseline", "reviewer": "r", "findings": []}
not json

{"target": "a", "arm": "baseline", "findings": []}
{"target": "a", "arm": "baseline", "reviewer": "r", "findings": {}}
{"target": "a", "arm": "baseline", "reviewer": "r2", "status": "failed"}
{"target": "a", "arm": "baseline", "reviewer": "r", "run": -1, "findings": []}
{"target": "a", "arm": "baseline", "reviewer": "r3", "status": "failed", "reason": "timed out"}
{"target": "a", "arm": "baseline", "reviewer": "r", "status": "failed", "reason": 3}
"#;
    let (records, problems) = parse("reviews.jsonl", text.as_bytes());
    assert_eq!(records.len(), 3);
    assert_eq!(records[1].status, Status::Failed);
    assert_eq!(records[1].reason, None);
    assert_eq!(records[2].reason.as_deref(), Some("timed out"));
    let at: Vec<(Option<u64>, Option<String>)> =
        problems.iter().map(|p| (p.line, p.field.clone())).collect();
    assert_eq!(
        at,
        [
            (Some(2), None),
            (Some(4), Some("field `reviewer`".into())),
            (Some(5), Some("field `findings`".into())),
            (Some(7), Some("field `run`".into())),
            (Some(9), Some("field `reason`".into())),
        ]
    );
}

// Regression (issue 21): `cat a.jsonl b.jsonl` double-counted every review (findings_raw
// 8 → 14) and `validate` said "no problems".
#[test]
fn a_second_return_for_one_target_arm_reviewer_and_run_names_both_lines() {
    let line = |reviewer: &str, run: u32| {
        json!({"target": "t", "arm": "b", "reviewer": reviewer, "run": run, "findings": [doc_finding()]})
                .to_string()
    };
    // The key numbers names, one numbering for all three fields: a target named like a
    // reviewer, and that reviewer named like the target, is another return.
    let swapped =
        json!({"target": "x", "arm": "b", "reviewer": "t", "run": 0, "findings": [doc_finding()]});
    let text = [
        line("x", 0),
        line("y", 0),
        line("x", 1),
        line("x", 0),
        swapped.to_string(),
    ]
    .join("\n");
    let (records, problems) = parse("r.jsonl", text.as_bytes());
    assert_eq!(records.len(), 4, "the repeat is not read");
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].line, Some(4));
    assert!(
            problems[0].problem.contains("a second return of reviewer `x` on target `t` in arm `b`, run 0 (the first is on line 1)"),
            "{}",
            problems[0].problem
        );
    let parsed = parse_for(
        "r.jsonl",
        text.as_bytes(),
        Mode::Doc,
        &[("b".into(), Scale::Float)],
    );
    assert_eq!(parsed.problems.len(), 1);
    assert_eq!(parsed.selections[0].returns.len(), 4);
    assert_eq!(parsed.labels.into_keys().collect::<Vec<_>>(), ["b"]);
}

#[test]
fn select_validates_per_arm_and_flags_duplicate_ids() {
    let text = format!(
        "{}\n{}\n",
        json!({"target": "t", "arm": "b", "reviewer": "x", "findings": [doc_finding(), {"title": 3}]}),
        json!({"target": "t", "arm": "b", "reviewer": "y", "findings": [doc_finding()]}),
    );
    let (records, problems) = parse("r.jsonl", text.as_bytes());
    assert!(problems.is_empty());
    let returns = select(&records, "b", Mode::Doc, Scale::Float);
    assert_eq!(returns[0].findings.len(), 1);
    assert_eq!(returns[0].malformed.iter().next().unwrap().field, "title");
    assert_eq!(
        returns[1].malformed.iter().next().unwrap().reason,
        "id is already used by a finding on line 1"
    );
    assert!(select(&records, "other", Mode::Doc, Scale::Float).is_empty());
}

// The duplicate-id table grows past any room it took, placing its ids again by the hash they
// were read with: a repeat after many growths is still found, with the line of the first.
#[test]
fn a_repeated_id_is_found_after_the_table_has_grown() {
    let finding = |id: usize| {
        format!(
            r#"{{"id":"f{id}","title":"T","severity":"P1","section":"S","finding_type":"error","autofix_class":"manual","confidence":0.5}}"#
        )
    };
    let line = |target: usize, ids: std::ops::Range<usize>| {
        let fs: Vec<String> = ids.map(finding).collect();
        format!(
            r#"{{"target":"t{target}","arm":"b","reviewer":"r","findings":[{}]}}"#,
            fs.join(",")
        )
    };
    // 3,000 ids in lines of ten, then each line's first id again, from the end backwards.
    let mut lines: Vec<String> = (0..300).map(|t| line(t, t * 10..t * 10 + 10)).collect();
    lines.extend((0..300).rev().map(|t| line(1000 + t, t * 10..t * 10 + 1)));
    let parsed = parse_for(
        "r.jsonl",
        lines.join("\n").as_bytes(),
        Mode::Doc,
        &[("b".into(), Scale::Float)],
    );
    assert!(parsed.problems.is_empty());
    let returns = &parsed.selections[0].returns;
    assert_eq!(
        returns[..300]
            .iter()
            .map(|r| r.findings.len())
            .sum::<usize>(),
        3_000
    );
    for (k, r) in returns[300..].iter().enumerate() {
        let first_line = 300 - k as u64;
        assert!(r.findings.is_empty());
        assert_eq!(
            r.malformed.iter().next().unwrap().reason,
            format!("id is already used by a finding on line {first_line}")
        );
    }
}

// Issue 34: a return of many malformed findings holds each kind once, with its count, and
// the first few whole; one more finding than a return may hold refuses the line.
#[test]
fn a_return_of_many_malformed_findings_is_counted_by_kind() {
    let line = |n: usize| {
        format!(
            "{{\"target\": \"t\", \"arm\": \"b\", \"reviewer\": \"r\", \"findings\": [{}]}}",
            vec!["{}"; n].join(",")
        )
    };
    let wants = [("b".to_string(), Scale::Float)];
    let full = parse_for("r", line(raw::MAX_FINDINGS).as_bytes(), Mode::Doc, &wants);
    assert!(full.problems.is_empty(), "{:?}", full.problems);
    let m = &full.selections[0].returns[0].malformed;
    assert_eq!(m.len(), raw::MAX_FINDINGS);
    assert_eq!(m.iter().count(), MalformedList::KEPT);
    let kinds: Vec<(&str, usize)> = m.kinds().map(|(k, n, _)| (k, n)).collect();
    assert_eq!(kinds, [("title: is missing", raw::MAX_FINDINGS)]);
    let over = parse_for(
        "r",
        line(raw::MAX_FINDINGS + 1).as_bytes(),
        Mode::Doc,
        &wants,
    );
    assert_eq!(over.problems.len(), 1);
    assert_eq!(over.problems[0].field.as_deref(), Some("field `findings`"));
    assert!(over.selections[0].returns.is_empty());
}

/// What a run keeps of a line: its envelope and, per finding, its id, file, hashes and its
/// check on every scale `reading` wants of the line's arm.
fn kept(r: RawReturn<Prechecked>, reading: &Reading) -> String {
    let scales = reading.scales(&r.arm.0);
    let findings: Vec<_> = (r.findings.iter().flatten())
        .map(|f| {
            let checks: Vec<_> = scales.iter().map(|s| f.check(reading.mode, *s)).collect();
            (f.text("id"), f.text("file"), f.hashes, checks)
        })
        .collect();
    format!(
        "{:?}",
        (
            &r.target,
            &r.arm,
            &r.reviewer,
            r.run,
            &r.status,
            &r.reason,
            &r.residual_risks,
            &r.deferred_questions,
            &r.testing_gaps,
            &r.model,
            r.findings.is_some(),
            findings
        )
    )
}

// Emptied lists go back a batch at a time, up to what the reading holds, and come out a
// batch at a time; a list read into is cleared first, whatever it held.
#[test]
fn spare_lists_are_bounded_and_reused_empty() {
    let reading = Reading::new(Mode::Doc, &[("baseline".into(), Scale::Float)]);
    assert!(reading.spare_lists().is_empty());
    // A list with room for a huge return's findings is let go, not held.
    let mut huge = vec![
        Vec::with_capacity(SPARE_ROOM + 1),
        Vec::with_capacity(SPARE_ROOM),
    ];
    reading.give_back(&mut huge);
    let small = reading.spare_lists();
    assert_eq!(small.len(), 1);
    assert!(small[0].capacity() <= SPARE_ROOM);
    let mut lists: Vec<Vec<Prechecked>> = (0..SPARES_HELD + 5)
        .map(|_| Vec::with_capacity(8))
        .collect();
    reading.give_back(&mut lists);
    assert!(lists.is_empty());
    let batch = reading.spare_lists();
    assert_eq!(batch.len(), SPARES_BATCH);
    assert!(batch.iter().all(|l| l.is_empty() && l.capacity() >= 8));
    let mut taken = SPARES_BATCH;
    while !reading.spare_lists().is_empty() {
        taken += SPARES_BATCH;
    }
    assert_eq!(taken, SPARES_HELD);
    let text = r#"{"target":"t","arm":"baseline","reviewer":"r","findings":[{"title":"T","severity":"P1","section":"S","autofix_class":"manual","confidence":0.5}]}"#;
    let mut held = Interner::with_state(reading.state.clone());
    let mut read = |list: Vec<Prechecked>| {
        let mut scales = None;
        super::super::scan::line(text, list, |arm, f| {
            let scales = scales.get_or_insert_with(|| reading.scales(arm));
            Prechecked::new(f, &reading, scales, &mut held)
        })
        .expect("read directly")
    };
    let fresh = read(Vec::new());
    let filled = read(Vec::new()).findings.expect("findings");
    assert_eq!(filled.len(), 1);
    // A list that still holds a finding is read into as if it were empty.
    let again = read(filled);
    assert_eq!(kept(again, &reading), kept(fresh, &reading));
}

// A block's counts scaled by its share of the file's bytes, worked by hand; a first block
// of absurdly short lines cannot ask for more than the file could hold.
#[test]
fn expected_counts_scale_with_the_files_size() {
    let e = Expected::scaled(900, 5_400, 1 << 20, 193 << 20);
    assert_eq!((e.returns, e.ids), (900 * 193, 5_400 * 193));
    assert_eq!(
        Expected::scaled(3, 7, 1_000, 2_500),
        Expected {
            returns: 8,
            ids: 18
        }
    );
    let capped = Expected::scaled(16_384, 16_384, 16_384, 1 << 30);
    assert_eq!((capped.returns, capped.ids), ((1 << 29) + 1, (1 << 27) + 1));
}

// A reading told its file's size knows, once a block is read, what the file holds: for a
// file of one block, exactly its returns and the findings with an id (a refused line, and
// a finding without an id or malformed without one, count for nothing); a reading not
// told the size guesses nothing. The blocks' results are the same either way.
#[test]
fn the_first_block_read_says_what_the_file_holds() {
    let line = |t: &str, n: usize| {
        let f = |i: usize| {
            format!(
                r#"{{"id":"{t}{i}","title":"T","severity":"P1","section":"S","autofix_class":"manual","confidence":0.5}}"#
            )
        };
        let mut fs: Vec<String> = (0..n).map(f).collect();
        fs.push(r#"{"title":"no id","severity":"P1","section":"S","autofix_class":"manual","confidence":0.5}"#.into());
        fs.push("{}".into());
        format!(
            r#"{{"target":"{t}","arm":"baseline","reviewer":"r","findings":[{}]}}"#,
            fs.join(",")
        )
    };
    let text = [line("a", 2), "{}".into(), line("b", 0), line("c", 3)].join("\n");
    let wants = [("baseline".to_string(), Scale::Float)];
    let sized = Reading::new(Mode::Doc, &wants).of_file(text.len() as u64);
    let unsized_ = Reading::new(Mode::Doc, &wants);
    assert_eq!(sized.expected(), None);
    let a = read_block_for("r", 1, text.as_bytes(), &sized);
    let b = read_block_for("r", 1, text.as_bytes(), &unsized_);
    assert_eq!(sized.expected(), Some(Expected { returns: 3, ids: 5 }));
    assert_eq!(unsized_.expected(), None);
    let lines = |r: Vec<Result<(u64, RawReturn<Prechecked>), InputError>>| {
        r.into_iter()
            .map(|r| r.map(|(l, raw)| (l, raw.findings.map_or(0, |f| f.len()))))
            .collect::<Vec<_>>()
    };
    assert_eq!(lines(a), lines(b));
}

/// A line read straight from its text (`None` when that route declines it), and read the
/// way it was read before that route existed.
fn both_routes(text: &str, mode: Mode) -> (Option<String>, Result<String, String>) {
    let arm = |t: &str| {
        serde_json::from_str::<Value>(t).ok()?["arm"]
            .as_str()
            .map(str::to_string)
    };
    let arm = arm(text).unwrap_or_else(|| "baseline".into());
    let reading = Reading::new(mode, &[(arm.clone(), Scale::Float), (arm, Scale::Anchor)]);
    let mut scales = None;
    let mut held = Interner::with_state(reading.state.clone());
    let direct = super::super::scan::line(text, Vec::new(), |arm, f| {
        let scales = scales.get_or_insert_with(|| reading.scales(arm));
        Prechecked::new(f, &reading, scales, &mut held)
    })
    .map(|r| kept(r, &reading));
    let mut held = Interner::with_state(reading.state.clone());
    let before = read_line("reviews.jsonl", 1, text.as_bytes(), text)
        .map(|(_, r)| {
            let scales = reading.scales(&r.arm.0);
            let r = r.map_findings(|fs| {
                fs.iter()
                    .map(|f| Prechecked::new(f, &reading, &scales, &mut held))
                    .collect()
            });
            kept(r, &reading)
        })
        .map_err(|e| e.to_string());
    (direct, before)
}

fn example_lines() -> Vec<(String, Mode)> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpora");
    let mut out = Vec::new();
    for dir in std::fs::read_dir(root).unwrap() {
        let dir = dir.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("reviews.jsonl")) else {
            continue;
        };
        let toml = std::fs::read_to_string(dir.join("experiment.toml")).unwrap_or_default();
        let mode = if toml.contains("mode = \"code\"") {
            Mode::Code
        } else {
            Mode::Doc
        };
        out.extend(text.lines().map(|l| (l.to_string(), mode)));
    }
    out
}

// The route that reads a line straight from its text is only a faster way to the same
// answer, and only worth having if the lines users write take it: every line of every
// example corpus does, in both modes, and gives what the fast route gives.
#[test]
fn every_example_line_is_read_straight_from_its_text_with_the_same_values() {
    let lines = example_lines();
    assert!(lines.len() > 100, "{}", lines.len());
    for (line, mode) in &lines {
        for mode in [*mode, Mode::Doc, Mode::Code] {
            let (direct, before) = both_routes(line, mode);
            let direct = direct.unwrap_or_else(|| panic!("declined: {line}"));
            assert_eq!(Ok(direct), before, "{line}");
        }
    }
}

// Lines written by hand to reach each thing the direct route reads, and each it declines.
#[test]
fn the_direct_route_reads_escapes_spacing_and_unknown_keys_and_declines_the_rest() {
    let f = r#""id":"f1","title":"Rollback","severity":"P1","section":"Deploy","finding_type":"omission","autofix_class":"manual","confidence":0.75"#;
    let line = |finding: &str| {
        format!(
            r#"{{"target":"plan","arm":"baseline","reviewer":"r","run":0,"findings":[{{{finding}}}]}}"#
        )
    };
    let read = [
            line(f),
            line(&f.replace("Rollback", r#"Say \"no\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \u0000"#)),
            line(&f.replace(':', " :\t").replace(',', " ,\r\n ")),
            format!("  {}  \r", line(f)),
            line(&format!(r#"{f},"extra":[1,-2.5e3,"x",true,null,[]],"more":"s","n":-0"#)),
            line(&format!(r#"{f},"evidence":["a","b\"c"],"premise":null,"suggested_fix":" ""#)),
            line(&format!(r#"{f},"evidence":[]"#)),
            line(&format!(r#"{f},"evidence":"x","why_it_matters":3"#)),
            line(&f.replace("0.75", "75")),
            line(&f.replace("0.75", "7.5e-1")),
            line(&f.replace("0.75", "1E0")),
            line(&f.replace("0.75", "1.5")),
            line(&f.replace("0.75", "0.1234567891234")),
            line(&f.replace("0.75", "1e-400")),
            line(&f.replace("0.75", "\"0.75\"")),
            line(&f.replace("0.75", "true")),
            line(&f.replace(r#""P1""#, r#""p1""#)),
            line(&f.replace(r#""Rollback""#, r#""""#)),
            line(&f.replace(r#""Rollback""#, &format!("\"{}\"", "é".repeat(101)))),
            line(&f.replace(r#""title":"Rollback","#, "")),
            line(&format!(
                r#""file":"src/a.rs","line":12,"owner":"human","requires_verification":false,"pre_existing":true,{}"#,
                f.replace("0.75", "50")
            )),
            line(&format!(r#""file":" ","line":12.0,{f}"#)),
            line(&format!(r#""line":4294967296,{f}"#)),
            r#"{"target":"p","arm":"baseline","reviewer":"r","status":"failed","reason":"timeout\u0021"}"#.into(),
            r#"{"target":"p","arm":"baseline","reviewer":"r","findings":null,"status":null,"run":null,"model":"m","residual_risks":["a"],"deferred_questions":[],"testing_gaps":null}"#.into(),
            // Every key of the envelope with a value, so that none is dropped as unknown.
            r#"{"target":"p","arm":"baseline","reviewer":"r","run":3,"status":"ok","reason":"x","findings":[],"residual_risks":["a"],"deferred_questions":["d"],"testing_gaps":["g"],"model":"m"}"#.into(),
            r#"{"arm":"baseline","findings":[],"reviewer":"r","target":"p","x":{}}"#.replace(r#","x":{}"#, ""),
        ];
    for l in &read {
        for mode in [Mode::Doc, Mode::Code] {
            let (direct, before) = both_routes(l, mode);
            let direct = direct.unwrap_or_else(|| panic!("declined: {l}"));
            assert_eq!(Ok(direct), before, "{l}");
        }
    }
    let declined = [
        r#"{"target":"p","findings":[],"arm":"baseline","reviewer":"r"}"#.to_string(),
        line(&f.replace("0.75", "-0.5")),
        line(&f.replace("0.75", "1e400")),
        line(&f.replace("0.75", "07")),
        line(&f.replace("0.75", "0.")),
        line(&format!(r#"{f},"confidnce":1"#)),
        line(&format!(r#"{f},"Title":"x""#)),
        line(&format!(r#"{f},"x":1,"x":2"#)),
        line(&format!(r#"{f},"x":{{"a":1}}"#)),
        line(&format!(r#"{f},"title":"again""#)),
        line(&format!(r#"{f},"evidence":["a",1]"#)),
        line(&f.replace("Rollback", r"\x")),
        line(&f.replace("Rollback", r"\ud83d")),
        line(&f.replace("Rollback", "tab\there")),
        line(&f.replace(r#""id""#, r#""\u0069d""#)),
        format!("{} x", line(f)),
        format!("{}}}", line(f)),
        r#"{"target":" ","arm":"baseline","reviewer":"r","findings":[]}"#.into(),
        r#"{"target":"p","arm":"baseline","reviewer":"r","findings":[1]}"#.into(),
        r#"{"target":"p","arm":"baseline","reviewer":"r","findings":[],"run":-1}"#.into(),
        r#"{"target":"p","arm":"baseline","reviewer":"r","findings":[],"status":"maybe"}"#.into(),
        r#"{"target":"p","arm":"baseline","reviewer":"r","findings":[],}"#.into(),
        r#"[{"target":"p"}]"#.into(),
    ];
    for l in &declined {
        assert_eq!(both_routes(l, Mode::Doc).0, None, "{l}");
    }
}

// Seeded damage to example lines: whatever the direct route reads, the fast route reads
// the same way; a line refused must never be read.
#[test]
fn damaged_lines_read_straight_are_read_as_the_fast_route_reads_them() {
    let pieces = [
        "\"",
        "\\",
        "\\\"",
        "\\u0041",
        "\\ud83d\\ude00",
        "\\ud83d",
        ",",
        ":",
        "{",
        "}",
        "[",
        "]",
        " ",
        "-",
        "0",
        "1e400",
        "e5",
        ".",
        "null",
        "true",
        "\"x\":1,",
        "\"id\":\"d\",",
        "\"confidnce\":0.5,",
        "\"extra\":{\"a\":1},",
        "\"e\":[1,[2,\"x\"]],",
        "\t",
        "\u{1}",
        "é",
        "-0",
        "00",
        "1.",
        "75",
        "0.5E-1",
        "\"title\":\"t\",",
        "\"arm\":\"x\",",
    ];
    let lines = example_lines();
    let mut rng = crate::stats::rng::Rng::for_replicate(51, 0);
    let (mut read, mut tried) = (0, 0);
    for (line, mode) in lines.iter().step_by(3) {
        for _ in 0..12 {
            let mut text = line.clone();
            for _ in 0..=rng.below(2) {
                // Half the time just after a `{`, `[` or `,`, where a key or value may go.
                let after: Vec<usize> = (text.match_indices(['{', '[', ',']))
                    .map(|(i, _)| i + 1)
                    .collect();
                let mut at = match rng.below(2) {
                    0 if !after.is_empty() => after[rng.below(after.len() as u64) as usize],
                    _ => rng.below(text.len() as u64 + 1) as usize,
                };
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                match rng.below(3) {
                    0 => text.insert_str(at, pieces[rng.below(pieces.len() as u64) as usize]),
                    1 => {
                        if let Some(c) = text[at..].chars().next() {
                            text.replace_range(at..at + c.len_utf8(), "");
                        }
                    }
                    _ => {
                        if let Some(c) = text[at..].chars().next() {
                            let p = pieces[rng.below(pieces.len() as u64) as usize];
                            text.replace_range(at..at + c.len_utf8(), p);
                        }
                    }
                }
            }
            tried += 1;
            let (direct, before) = both_routes(&text, *mode);
            if let Some(direct) = direct {
                read += 1;
                assert_eq!(Ok(direct), before, "{text}");
            }
        }
    }
    // The damage reaches both sides: many lines still read, many declined.
    assert!(
        read > tried / 10 && read < tried * 9 / 10,
        "{read} of {tried}"
    );
}

// A corpus holds hundreds of thousands of returns, almost all without a malformed finding:
// each holds one word for the list, and shares its target's and reviewer's names.
#[test]
fn a_return_holds_one_word_for_no_malformed_findings_and_shares_its_names() {
    assert_eq!(
        std::mem::size_of::<MalformedList>(),
        std::mem::size_of::<usize>()
    );
    let lines = [
        r#"{"target":"t1","arm":"baseline","reviewer":"r","findings":[]}"#,
        r#"{"target":"t1","arm":"baseline","reviewer":"r","run":1,"findings":[]}"#,
    ]
    .join("\n");
    let (records, problems) = parse("reviews.jsonl", lines.as_bytes());
    assert!(problems.is_empty());
    let returns = select(&records, "baseline", Mode::Doc, Scale::Float);
    assert!(returns.iter().all(|r| r.malformed.is_empty()));
    assert!(Arc::ptr_eq(&returns[0].target, &returns[1].target));
    assert!(Arc::ptr_eq(&returns[0].reviewer, &returns[1].reviewer));
    // Its findings are boxed, and what it says beside them is held apart: ten words.
    assert_eq!(
        std::mem::size_of::<Return>(),
        10 * std::mem::size_of::<usize>()
    );
    assert!(returns.iter().all(|r| r.said.is_none()));
    // One that says something beside its findings gives it back as it was read.
    let line = r#"{"target":"t1","arm":"baseline","reviewer":"r","status":"failed","reason":"timed out","model":"m-1","usage":{"input_tokens":12,"cost_usd":0.5},"elapsed_ms":900}"#;
    let (records, problems) = parse("reviews.jsonl", line.as_bytes());
    assert!(problems.is_empty(), "{problems:?}");
    let said = &select(&records, "baseline", Mode::Doc, Scale::Float)[0];
    assert_eq!(said.reason(), Some("timed out"));
    assert_eq!(said.model().map(|m| &**m), Some("m-1"));
    let spent = said.spent().expect("its usage");
    assert_eq!(
        (
            spent.input_tokens,
            spent.output_tokens,
            spent.cost_usd,
            spent.elapsed_ms
        ),
        (Some(12), None, Some(0.5), Some(900.0))
    );
}
