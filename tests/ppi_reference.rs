//! calibench's PPI++ mean estimate against the reference implementation: `ppi_py` 0.2.3's
//! figures on two published data sets of its repository, computed once by
//! `benches/ppi_reference.py` into tests/fixtures/ppi/expected.json (the data sets' notice:
//! tests/fixtures/ppi/LICENSE-ppi_py).

use std::path::PathBuf;

use calibench::stats::ppi::{classical, ppi_mean};
use serde_json::Value;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/ppi")
        .join(name)
}

fn close(what: &str, a: f64, b: &Value) {
    let b = b.as_f64().unwrap();
    assert!((a - b).abs() < 1e-9, "{what}: calibench {a}, ppi_py {b}");
}

#[test]
fn lambda_estimate_and_intervals_match_ppi_py() {
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("expected.json")).unwrap()).unwrap();
    let mut checked = 0;
    for (name, cases) in expected["data"].as_object().unwrap() {
        let text = std::fs::read_to_string(fixture(&format!("{name}.csv"))).unwrap();
        let rows: Vec<(f64, f64)> = text
            .lines()
            .skip(1)
            .map(|l| {
                let (y, f) = l.split_once(',').unwrap();
                (y.parse().unwrap(), f.parse().unwrap())
            })
            .collect();
        for case in cases.as_array().unwrap() {
            let n = case["labelled"].as_u64().unwrap() as usize;
            let y: Vec<f64> = rows[..n].iter().map(|r| r.0).collect();
            let f: Vec<f64> = rows[..n].iter().map(|r| r.1).collect();
            let u: Vec<f64> = rows[n..].iter().map(|r| r.1).collect();
            assert_eq!(u.len() as u64, case["unlabelled"].as_u64().unwrap());
            let at = format!("{name} n={n}");
            let e = ppi_mean(&y, &f, &u);
            close(&format!("{at} lambda"), e.lambda, &case["lambda"]);
            close(&format!("{at} value"), e.value.unwrap(), &case["value"]);
            let ci = e.ci.unwrap();
            close(&format!("{at} lower"), ci[0], &case["ci"][0]);
            close(&format!("{at} upper"), ci[1], &case["ci"][1]);
            let c = classical(&y);
            close(
                &format!("{at} classical"),
                c.value.unwrap(),
                &case["classical_value"],
            );
            let cci = c.ci.unwrap();
            close(
                &format!("{at} classical lower"),
                cci[0],
                &case["classical_ci"][0],
            );
            close(
                &format!("{at} classical upper"),
                cci[1],
                &case["classical_ci"][1],
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 6);
    // The LLM's predictions help: λ > 0 and a narrower interval than the labels alone.
    let mm = &expected["data"]["moral_machine_gpt4o"][1];
    let width = |ci: &Value| ci[1].as_f64().unwrap() - ci[0].as_f64().unwrap();
    assert!(mm["lambda"].as_f64().unwrap() > 0.0);
    assert!(width(&mm["ci"]) < width(&mm["classical_ci"]));
}
