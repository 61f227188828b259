//! Arbitrary bytes into the calibration reader, then calibration: never a panic.
#![no_main]

use calibench::input::calibration::read;
use calibench::stats::calibration::calibrate;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = read("fuzz.csv", data) {
        let c = calibrate(&p.confidence, &p.correct, 10).expect("valid predictions calibrate");
        assert!(c.ece.is_finite() && c.brier.is_finite());
    }
});
