//! Arbitrary bytes into the reliability-data reader, every layout and level, then α: must
//! return data or an input error, never panic.
#![no_main]

use calibench::input::reliability::{read, Layout};
use calibench::stats::alpha::{alpha, Level};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    for layout in [Layout::Auto, Layout::Long, Layout::Wide] {
        for level in Level::ALL {
            if let Ok(table) = read("fuzz.csv", data, layout, level) {
                if let Ok(e) = alpha(&table.units, level) {
                    assert!(e.alpha.is_none_or(f64::is_finite));
                }
            }
        }
    }
});
