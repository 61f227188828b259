//! Bootstrap intervals for α (SPEC §4.4, REFERENCE.md).
//!
//! * `units` (default): resample the pairable units with replacement and recompute α, expected
//!   disagreement included. A replicate is [`Prepared::evaluate`] with a multiplicity weight per
//!   unit, so it reuses the per-unit sufficient statistics instead of the raw data.
//! * `kalpha`: Hayes & Krippendorff (2007), as in the KALPHA macro: D_e stays fixed, and each
//!   replicate draws M coincidence cells with probabilities p_cc = o_cc/n, p_ck = 2 o_ck/n,
//!   M = min(25 × non-zero cells, (m − 1) n / 2); α* = 1 − Σ δ² / (M · D_e), floored at −1. It
//!   treats pairs as independent and so gives narrower intervals; it is here for users who must
//!   match the macro.
//!
//! Replicate `i` draws from `Rng::for_replicate(seed, i)`: the interval depends on the seed only,
//! never on the number of threads. Replicates whose α is undefined (every resampled value the
//! same) are counted and left out of the percentiles.

use serde::{Deserialize, Serialize};

use super::alpha::{AlphaError, Level, Prepared, Scratch, Units};
use super::quantile::percentile;
use super::rng::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    Units,
    Kalpha,
}

impl Method {
    pub fn name(self) -> &'static str {
        match self {
            Method::Units => "units",
            Method::Kalpha => "kalpha",
        }
    }
}

/// The α_min thresholds whose exceedance probability q is reported (Krippendorff's usual bars).
pub const ALPHA_MINS: [f64; 2] = [0.667, 0.8];

/// Share of replicates with α below one threshold.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Exceedance {
    pub alpha_min: f64,
    /// q: share of (defined) replicates with α < `alpha_min`; `None` with no defined replicate.
    pub q: Option<f64>,
}

/// A percentile 95% bootstrap interval and how it was drawn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Interval {
    pub lower: Option<f64>,
    pub upper: Option<f64>,
    pub method: Method,
    pub replicates: usize,
    pub seed: u64,
    /// Replicates whose α was undefined (no variation drawn), left out of the percentiles and q.
    pub undefined_replicates: usize,
}

/// What a bootstrap of α yields: the interval and the q shares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub ci: Interval,
    pub q: Vec<Exceedance>,
}

/// The most replicates any bootstrap takes (SPEC §3): more would only cost memory and time,
/// and a huge count (`9223372036854775807`) would fail allocating, not compute.
pub const MAX_REPLICATES: usize = 1_000_000;

/// What a bootstrap needs besides the data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Plan {
    pub method: Method,
    pub replicates: usize,
    pub seed: u64,
    /// Worker threads; the result does not depend on it.
    pub threads: usize,
}

/// Bootstrap interval of α over `units` at `level`. `raters` is the number of raters m, used
/// by KALPHA's draw count.
pub fn interval(
    units: &Units,
    level: Level,
    raters: usize,
    plan: Plan,
) -> Result<Summary, AlphaError> {
    let draws = match plan.method {
        Method::Units => unit_replicates(&Prepared::new(units, level)?, plan),
        Method::Kalpha => kalpha_replicates(&Prepared::coded(units, level)?, raters, plan),
    };
    Ok(summarize(plan, &draws))
}

/// α of each unit-bootstrap replicate, in replicate order.
pub fn unit_replicates(prepared: &Prepared, plan: Plan) -> Vec<Option<f64>> {
    let units = prepared.pairable_units();
    parallel(
        plan,
        || (vec![0u32; units], Scratch::default()),
        |(weights, scratch), rng| {
            for _ in 0..units {
                weights[rng.below(units as u64) as usize] += 1;
            }
            let alpha = prepared.evaluate(Some(weights), scratch).alpha();
            weights.fill(0);
            alpha
        },
    )
}

/// α* of each KALPHA replicate, in replicate order. `prepared` must be coded
/// ([`Prepared::coded`]); all replicates are `None` when α itself is undefined.
pub fn kalpha_replicates(prepared: &Prepared, raters: usize, plan: Plan) -> Vec<Option<f64>> {
    let estimate = prepared.estimate();
    let d_e = estimate.expected_disagreement;
    let cells = match prepared.coincidence_cells() {
        Some(cells) if estimate.alpha.is_some() && d_e > 0.0 => cells,
        _ => return vec![None; plan.replicates],
    };
    let mut cumulative = Vec::with_capacity(cells.len());
    let mut acc = 0.0;
    for cell in &cells {
        acc += cell.probability;
        cumulative.push(acc);
    }
    let by_pairs = (raters.saturating_sub(1) * estimate.pairable_values) / 2;
    let draws = (25 * cells.len()).min(by_pairs).max(1);
    parallel(
        plan,
        || (),
        |_, rng| {
            let mut sum = 0.0;
            for _ in 0..draws {
                let x = rng.unit_f64() * acc;
                let i = cumulative.partition_point(|&c| c <= x).min(cells.len() - 1);
                sum += cells[i].delta2;
            }
            Some((1.0 - sum / (draws as f64 * d_e)).max(-1.0))
        },
    )
}

/// Percentile interval and q shares of replicate values.
pub fn summarize(plan: Plan, draws: &[Option<f64>]) -> Summary {
    let mut defined: Vec<f64> = draws.iter().flatten().copied().collect();
    defined.sort_unstable_by(f64::total_cmp);
    let share_below = |t: f64| {
        (!defined.is_empty())
            .then(|| defined.partition_point(|&a| a < t) as f64 / defined.len() as f64)
    };
    Summary {
        ci: Interval {
            lower: percentile(&defined, 0.025),
            upper: percentile(&defined, 0.975),
            method: plan.method,
            replicates: plan.replicates,
            seed: plan.seed,
            undefined_replicates: draws.len() - defined.len(),
        },
        q: ALPHA_MINS
            .iter()
            .map(|&alpha_min| Exceedance {
                alpha_min,
                q: share_below(alpha_min),
            })
            .collect(),
    }
}

/// Runs `replicate(state, rng)` for every replicate index on `plan.threads` threads, each with
/// its own `state`, and returns the results in index order.
pub(crate) fn parallel<S, T, I, F>(plan: Plan, init: I, replicate: F) -> Vec<T>
where
    T: Send + Default + Clone,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, &mut Rng) -> T + Sync,
{
    let n = plan.replicates;
    let mut out = vec![T::default(); n];
    if n == 0 {
        return out;
    }
    let threads = plan.threads.clamp(1, n);
    let chunk = n.div_ceil(threads);
    std::thread::scope(|scope| {
        for (c, slots) in out.chunks_mut(chunk).enumerate() {
            let (init, replicate) = (&init, &replicate);
            scope.spawn(move || {
                let mut state = init();
                for (j, slot) in slots.iter_mut().enumerate() {
                    let index = (c * chunk + j) as u64;
                    let mut rng = Rng::for_replicate(plan.seed, index);
                    *slot = replicate(&mut state, &mut rng);
                }
            });
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(method: Method, threads: usize) -> Plan {
        Plan {
            method,
            replicates: 400,
            seed: 42,
            threads,
        }
    }

    fn reference() -> Units {
        crate::stats::alpha::tests::reference_units()
    }

    #[test]
    fn same_seed_same_interval_whatever_the_threads() {
        for method in [Method::Units, Method::Kalpha] {
            for level in Level::ALL {
                let one = interval(&reference(), level, 4, plan(method, 1)).unwrap();
                let many = interval(&reference(), level, 4, plan(method, 3)).unwrap();
                assert_eq!(one, many, "{method:?} {level}");
            }
        }
    }

    #[test]
    fn different_seeds_differ() {
        let a = interval(&reference(), Level::Interval, 4, plan(Method::Units, 1)).unwrap();
        let mut p = plan(Method::Units, 1);
        p.seed = 43;
        let b = interval(&reference(), Level::Interval, 4, p).unwrap();
        assert_ne!(a.ci.lower, b.ci.lower);
    }

    #[test]
    fn interval_brackets_the_estimate_and_stays_in_bounds() {
        for method in [Method::Units, Method::Kalpha] {
            let est = crate::stats::alpha::alpha(&reference(), Level::Interval)
                .unwrap()
                .alpha
                .unwrap();
            let s = interval(&reference(), Level::Interval, 4, plan(method, 2)).unwrap();
            let (lo, hi) = (s.ci.lower.unwrap(), s.ci.upper.unwrap());
            assert!(
                -1.0 <= lo && lo <= est && est <= hi && hi <= 1.0,
                "{lo} {est} {hi}"
            );
            assert_eq!(s.q.len(), 2);
            assert!(s.q.iter().all(|e| (0.0..=1.0).contains(&e.q.unwrap())));
        }
    }

    #[test]
    fn kalpha_is_narrower_than_the_unit_bootstrap_here() {
        // REFERENCE.md: KALPHA treats pairs as independent, so its interval is the narrower.
        let mut p = plan(Method::Units, 2);
        p.replicates = 2000;
        let units = interval(&reference(), Level::Nominal, 4, p).unwrap();
        p.method = Method::Kalpha;
        let kalpha = interval(&reference(), Level::Nominal, 4, p).unwrap();
        let width = |s: &Summary| s.ci.upper.unwrap() - s.ci.lower.unwrap();
        assert!(width(&kalpha) < width(&units));
    }

    #[test]
    fn undefined_alpha_gives_no_interval() {
        let units = Units::from_rows(&[[Some(2.0), Some(2.0)], [Some(2.0), Some(2.0)]]).unwrap();
        for method in [Method::Units, Method::Kalpha] {
            let s = interval(&units, Level::Nominal, 2, plan(method, 2)).unwrap();
            assert_eq!((s.ci.lower, s.ci.upper), (None, None));
            assert_eq!(s.ci.undefined_replicates, 400);
            assert!(s.q.iter().all(|e| e.q.is_none()));
        }
    }

    #[test]
    fn summarize_counts_shares_below_each_threshold() {
        let p = Plan {
            method: Method::Units,
            replicates: 5,
            seed: 0,
            threads: 1,
        };
        let draws = [Some(0.5), Some(0.7), Some(0.9), None, Some(0.79)];
        let s = summarize(p, &draws);
        assert_eq!(s.ci.undefined_replicates, 1);
        assert_eq!(s.q[0].q, Some(0.25)); // below 0.667: 0.5
        assert_eq!(s.q[1].q, Some(0.75)); // below 0.8: 0.5, 0.7, 0.79
    }
}
