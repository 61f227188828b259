//! calibench's anytime-valid sequence against the reference implementation: confseq 0.0.11's
//! `predmix_empbern_twosided_cs(x, alpha, truncation=0.5, running_intersection=True)` on seeded
//! streams of several shapes and lengths, computed once by `benches/confseq_reference.py` into
//! tests/fixtures/confseq/expected.json.

use calibench::stats::sequence::two_sided;
use serde_json::Value;

/// A committed file of confseq's vectors.
fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/confseq")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// A JSON array of numbers.
fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

#[test]
fn the_sequence_matches_confseq_to_1e_9() {
    let expected = fixture("expected.json");
    let mut checked = 0;
    let mut excluded_half = 0;
    for case in expected["cases"].as_array().unwrap() {
        let x = numbers(&case["x"]);
        let alpha = case["alpha"].as_f64().unwrap();
        let (lo, hi) = two_sided(&x, alpha);
        for (side, ours, theirs) in [
            ("lower", &lo, numbers(&case["lower"])),
            ("upper", &hi, numbers(&case["upper"])),
        ] {
            assert_eq!(ours.len(), theirs.len());
            for (t, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                assert!(
                    (a - b).abs() < 1e-9,
                    "{} n={} alpha={alpha} {side}[{t}]: calibench {a}, confseq {b}",
                    case["stream"],
                    x.len()
                );
                checked += 1;
            }
        }
        excluded_half += usize::from(lo.last().unwrap() > &0.5 || hi.last().unwrap() < &0.5);
    }
    // Enough values, and streams whose sequences do leave ½ (not only the trivial [0, 1]).
    assert!(checked > 10_000, "{checked}");
    assert!(excluded_half >= 3, "{excluded_half}");
}

// The hedged-capital sequence against confseq 0.0.11's `hedged_cs(x, alpha, breaks=1000,
// running_intersection=True)` (one bettor a side, truncation ½) and its `betting_cs` with two
// bettors a side (½ and 1: calibench's default), computed once by
// `benches/hedged_reference.py CHECKOUT` into
// tests/fixtures/confseq/hedged.json: every bound within one grid step (1/1000) of confseq's,
// and nearly all equal to it (the grid's points are the same; a capital within rounding of
// 1/α may fall on the other side).
#[test]
fn the_hedged_sequence_matches_confseq_to_its_grid() {
    use calibench::stats::hedged::{two_sided_with, BREAKS};
    let expected = fixture("hedged.json");
    let (mut checked, mut equal, mut excluded_half) = (0usize, 0usize, 0usize);
    for case in expected["cases"].as_array().unwrap() {
        let x = numbers(&case["x"]);
        let alpha = case["alpha"].as_f64().unwrap();
        let truncations = numbers(&case["truncations"]);
        let (lo, hi) = two_sided_with(&x, alpha, BREAKS, &truncations);
        for (side, ours, theirs) in [
            ("lower", &lo, numbers(&case["lower"])),
            ("upper", &hi, numbers(&case["upper"])),
        ] {
            assert_eq!(ours.len(), theirs.len());
            for (t, (a, b)) in ours.iter().zip(&theirs).enumerate() {
                assert!(
                    (a - b).abs() <= 1.0 / BREAKS as f64 + 1e-12,
                    "{} n={} alpha={alpha} {side}[{t}]: calibench {a}, confseq {b}",
                    case["stream"],
                    x.len()
                );
                checked += 1;
                equal += usize::from((a - b).abs() < 1e-12);
            }
        }
        excluded_half += usize::from(lo.last().unwrap() > &0.5 || hi.last().unwrap() < &0.5);
    }
    assert!(checked > 5_000, "{checked}");
    assert!(equal * 1000 >= checked * 999, "{equal} of {checked} equal");
    assert!(excluded_half >= 3, "{excluded_half}");
}
