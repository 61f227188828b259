//! What a sequential decision saves (docs/benchmarks.md, "Sequential decisions"): on seeded
//! simulated A/B streams with true effects of several sizes, the median number of units after
//! which the anytime-valid sequence (docs/guides/stop-when-you-know.md) decides, against the
//! fixed sizes `plan` names for 80% power at the same level: for the true effect (which a team
//! does not know), and for the smallest effect that matters (which a fixed-size study must be
//! sized for). One decision metric, α 0.05, by the default method (the hedged-capital
//! sequence), with the empirical-Bernstein sequence's median beside it.
//!
//!     cargo run --release --example sequential_savings
//!
//! Each row: 1,000 streams, each run until decided or 4 × the fixed size for the smallest effect
//! (an undecided stream counts as that cap in the median, so the median never flatters the
//! sequence).

use calibench::stats::hedged::{two_sided_until, BREAKS, TRUNCATIONS};
use calibench::stats::power::{mcnemar_needed, needed_for};
use calibench::stats::rng::Rng;
use calibench::stats::sequence::of_differences;
use calibench::stats::test::Test;

const STREAMS: u64 = 1000;

/// The look at which the hedged sequence's lower bound first exceeds 0, if within the stream
/// (it stops computing there).
fn decided_at(d: &[f64]) -> Option<usize> {
    let x: Vec<f64> = d.iter().map(|v| (v + 1.0) / 2.0).collect();
    let (lo, _) = two_sided_until(&x, 0.05, BREAKS, &TRUNCATIONS, |lo, _| lo > 0.5);
    lo.last().is_some_and(|&l| l > 0.5).then_some(lo.len())
}

/// The same for the empirical-Bernstein sequence.
fn decided_at_eb(d: &[f64]) -> Option<usize> {
    let (lo, _) = of_differences(d, 1.0, 0.05)?;
    lo.iter().position(|&l| l > 0.0).map(|i| i + 1)
}

fn row(name: &str, effect: f64, fixed: u64, sized: u64, draw: &dyn Fn(&mut Rng) -> f64) {
    let cap = (4 * sized) as usize;
    let (mut stops, mut eb): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
    let (mut by_fixed, mut ever) = (0, 0);
    for s in 0..STREAMS {
        let mut rng = Rng::for_replicate(20261127 ^ (effect * 1e4) as u64, s);
        let d: Vec<f64> = (0..cap).map(|_| draw(&mut rng)).collect();
        let at = decided_at(&d);
        by_fixed += usize::from(at.is_some_and(|a| a as u64 <= fixed));
        ever += usize::from(at.is_some());
        stops.push(at.unwrap_or(cap));
        eb.push(decided_at_eb(&d).unwrap_or(cap));
    }
    stops.sort_unstable();
    eb.sort_unstable();
    let median = stops[stops.len() / 2];
    let eb_median = eb[eb.len() / 2];
    println!(
        "| {name} | {effect} | {fixed} | {sized} | {median} ({eb_median}) | {:.0}% | {:.0}% | {:.0}% |",
        100.0 * (1.0 - median as f64 / sized as f64),
        100.0 * by_fixed as f64 / STREAMS as f64,
        100.0 * ever as f64 / STREAMS as f64
    );
}

fn main() {
    println!("| per-unit difference | true effect | fixed size for it (`plan`, 80%) | fixed size for the smallest effect | sequential: median units to a decision (empirical Bernstein's) | saved against the latter | decided by the fixed size for it | decided by the cap |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    // A 0/1 outcome per unit in each arm, 40% of units changing between the arms.
    let share = 0.4;
    let sized = mcnemar_needed(share, 0.05, 0.05, 0.8).unwrap();
    for effect in [0.05, 0.1, 0.2, 0.3] {
        let fixed = mcnemar_needed(share, effect, 0.05, 0.8).unwrap();
        row("0/1 outcome (40% change)", effect, fixed, sized, &|rng| {
            let u = rng.unit_f64();
            if u < (share + effect) / 2.0 {
                1.0
            } else if u < share {
                -1.0
            } else {
                0.0
            }
        });
    }
    // A continuous score difference, sd 0.3, kept in [−1, 1].
    let sd = 0.3;
    let sized = needed_for(Test::PairedT, sd, 0.03, 0.05, 0.8).unwrap();
    for effect in [0.03, 0.05, 0.1, 0.2] {
        let fixed = needed_for(Test::PairedT, sd, effect, 0.05, 0.8).unwrap();
        row("score difference (sd 0.3)", effect, fixed, sized, &|rng| {
            (effect + sd * rng.normal()).clamp(-1.0, 1.0)
        });
    }
}
