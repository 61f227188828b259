//! calibench's anytime-valid sequence against the reference implementation: confseq 0.0.11's
//! `predmix_empbern_twosided_cs(x, alpha, truncation=0.5, running_intersection=True)` on seeded
//! streams of several shapes and lengths, computed once by `benches/confseq_reference.py` into
//! tests/fixtures/confseq/expected.json.

use calibench::stats::sequence::two_sided;
use serde_json::Value;

#[test]
fn the_sequence_matches_confseq_to_1e_9() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/confseq/expected.json");
    let expected: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let numbers = |v: &Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
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
