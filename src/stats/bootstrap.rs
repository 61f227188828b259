//! Bootstrap intervals for α (docs/guides/alpha-and-calibration.md).
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

use rand_distr::{Binomial, Distribution};

use super::alpha::{AlphaError, Lanes, Level, Partial, Patterns, Prepared, Units};
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

/// The most replicates any bootstrap takes: more would only cost memory and time,
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
        Method::Units => unit_replicates(&Prepared::new(units, level)?, plan, &|| {}),
        Method::Kalpha => kalpha_replicates(&Prepared::coded(units, level)?, raters, plan, &|| {}),
    };
    Ok(summarize(plan, &draws))
}

/// A replicate over patterns draws one binomial per pattern, which costs about as much as
/// drawing and evaluating this many units one by one; grouping pays below one pattern per this
/// many units.
pub const UNITS_PER_PATTERN: usize = 16;

/// α of each unit-bootstrap replicate, in replicate order; `tick` is called once per replicate
/// (a progress bar). When the pairable units fall into at most one pattern per
/// [`UNITS_PER_PATTERN`] units ([`Patterns`]), a replicate draws how many units it takes from
/// each pattern (a multinomial, by conditional binomials) instead of drawing the units one by
/// one: the same distribution, from a different random stream.
pub fn unit_replicates(
    prepared: &Prepared,
    plan: Plan,
    tick: &(dyn Fn() + Sync),
) -> Vec<Option<f64>> {
    let units = prepared.pairable_units();
    match Patterns::group(prepared, units / UNITS_PER_PATTERN) {
        Some(patterns) => pattern_replicates(&patterns, plan, tick),
        None => each_unit_replicates(prepared, plan, tick),
    }
}

/// Replicates drawn as multinomial counts over the patterns.
fn pattern_replicates(
    patterns: &Patterns,
    plan: Plan,
    tick: &(dyn Fn() + Sync),
) -> Vec<Option<f64>> {
    parallel_with(
        plan,
        || (vec![0u32; patterns.len()], Partial::default()),
        |(weights, partial), rng| {
            multinomial(patterns.multiplicity(), patterns.units(), rng, weights);
            patterns.evaluate(weights, partial).alpha()
        },
        tick,
    )
}

/// Units per block when replicates are drawn unit by unit: a block's statistics stay in a
/// core's cache while every replicate of a group adds them. Part of the random stream: changing
/// it changes the intervals of inputs with more pairable units than this.
pub const BLOCK_UNITS: usize = 1024;

/// Replicates evaluated side by side ([`Lanes`]) when their buffers fit in this many bytes.
const LANE_BUDGET: usize = 256 * 1024;

/// Replicates drawn unit by unit. A replicate's N draws over N units are made block by block:
/// first how many land in each block of [`BLOCK_UNITS`] units (a multinomial over the blocks, by
/// conditional binomials), then that many uniform draws within each block, counted into one
/// weight per unit. That is the same distribution as N uniform draws over every unit, and with
/// a single block the same stream. Replicates are evaluated sixteen at a time when their buffers
/// are small (few distinct values), one at a time otherwise; ordinal data, which needs a second
/// pass, keeps its weights at a byte per unit until then.
fn each_unit_replicates(
    prepared: &Prepared,
    plan: Plan,
    tick: &(dyn Fn() + Sync),
) -> Vec<Option<f64>> {
    if 16 * prepared.lane_bytes() <= LANE_BUDGET {
        side_by_side::<16>(prepared, plan, tick)
    } else {
        side_by_side::<1>(prepared, plan, tick)
    }
}

fn side_by_side<const R: usize>(
    prepared: &Prepared,
    plan: Plan,
    tick: &(dyn Fn() + Sync),
) -> Vec<Option<f64>> {
    let units = prepared.pairable_units();
    let sizes: Vec<u32> = (0..units)
        .step_by(BLOCK_UNITS)
        .map(|start| (units - start).min(BLOCK_UNITS) as u32)
        .collect();
    let second = prepared.two_passes();
    parallel_side_by_side(
        plan,
        R,
        || Group::<R> {
            draws: vec![vec![0; sizes.len()]; R],
            lanes: Lanes::default(),
            kept: vec![[0; R]; if second { units } else { 0 }],
            large: Vec::new(),
            block: vec![[0; R]; BLOCK_UNITS.min(units)],
            counts: vec![0; R * BLOCK_UNITS.min(units)],
        },
        |g, rngs, out| replicate_group(prepared, &sizes, g, rngs, out),
        tick,
    )
}

/// Draws and evaluates the replicates of one group (`rngs`, one per lane; a last group of fewer
/// than `R` replicates leaves the other lanes at weight 0). On an x86-64 CPU with AVX2 the same
/// code runs compiled for it, twice as many lanes per instruction; without FMA, so every sum is
/// rounded as on any other CPU and the intervals do not depend on the machine.
fn replicate_group<const R: usize>(
    prepared: &Prepared,
    sizes: &[u32],
    g: &mut Group<R>,
    rngs: &mut [Rng],
    out: &mut [Option<f64>],
) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has just been found to have AVX2.
        return unsafe { replicate_group_avx2(prepared, sizes, g, rngs, out) };
    }
    replicate_group_in(prepared, sizes, g, rngs, out)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn replicate_group_avx2<const R: usize>(
    prepared: &Prepared,
    sizes: &[u32],
    g: &mut Group<R>,
    rngs: &mut [Rng],
    out: &mut [Option<f64>],
) {
    replicate_group_in(prepared, sizes, g, rngs, out)
}

#[inline(always)]
fn replicate_group_in<const R: usize>(
    prepared: &Prepared,
    sizes: &[u32],
    g: &mut Group<R>,
    rngs: &mut [Rng],
    out: &mut [Option<f64>],
) {
    let units = prepared.pairable_units();
    let second = prepared.two_passes();
    prepared.start(&mut g.lanes);
    g.large.clear();
    for (r, rng) in rngs.iter_mut().enumerate() {
        multinomial(sizes, units as u64, rng, &mut g.draws[r]);
    }
    for (b, &size) in sizes.iter().enumerate() {
        let (start, size) = (b * BLOCK_UNITS, size as usize);
        let block = &mut g.block[..size];
        draw_block(block, &mut g.counts, rngs, |r| g.draws[r][b]);
        prepared.add(&mut g.lanes, start, block);
        if second {
            keep(block, &mut g.kept[start..], start, &mut g.large);
        }
    }
    if second {
        prepared.between_passes(&mut g.lanes);
        for (b, &size) in sizes.iter().enumerate() {
            let (start, size) = (b * BLOCK_UNITS, size as usize);
            let block = &mut g.block[..size];
            restore(block, &g.kept[start..], start, &g.large);
            prepared.add_again(&mut g.lanes, start, block);
        }
    }
    for (r, slot) in out.iter_mut().enumerate() {
        *slot = prepared.finish(&mut g.lanes, r).alpha();
    }
}

/// Sets each lane's weights in the block to lane r's `draws(r)` uniform draws over its units,
/// from lane r's generator. Each lane counts into its own row of `counts` (two bytes a unit, so
/// the rows being counted stay in the core's fastest cache, where a block of four-byte weights
/// side by side would not), two lanes in the same loop so that their generators' chains of
/// dependent instructions overlap; then the rows are laid side by side into the block. A lane
/// drawing more than 65,535 times into one block (as good as never) counts straight into the
/// block. Each lane takes its own generator's numbers in order either way, so the weights are
/// those of drawing lane by lane, one unit at a time.
#[inline(always)]
fn draw_block<const R: usize>(
    block: &mut [[u32; R]],
    counts: &mut [u16],
    rngs: &mut [Rng],
    draws: impl Fn(usize) -> u32,
) {
    let size = block.len();
    if (0..rngs.len()).any(|r| draws(r) > u32::from(u16::MAX)) {
        block.fill([0; R]);
        for (r, rng) in rngs.iter_mut().enumerate() {
            for _ in 0..draws(r) {
                block[rng.below(size as u64) as usize][r] += 1;
            }
        }
        return;
    }
    let counts = &mut counts[..R * size];
    counts.fill(0);
    let mut rows = counts.chunks_exact_mut(size);
    for (pair, rngs) in rngs.chunks_mut(2).enumerate() {
        let r = 2 * pair;
        let (Some(first), second) = (rows.next(), rows.next()) else {
            break;
        };
        // Copies the compiler can keep in registers, rather than in the slice.
        let mut a = rngs[0].clone();
        let (na, nb) = (draws(r), if rngs.len() > 1 { draws(r + 1) } else { 0 });
        if let (Some(rng), Some(second)) = (rngs.get(1), second) {
            let mut b = rng.clone();
            for _ in 0..na.min(nb) {
                let (i, j) = (a.below(size as u64), b.below(size as u64));
                first[i as usize] += 1;
                second[j as usize] += 1;
            }
            for _ in na..nb {
                second[b.below(size as u64) as usize] += 1;
            }
            rngs[1] = b;
        }
        for _ in nb.min(na)..na {
            first[a.below(size as u64) as usize] += 1;
        }
        rngs[0] = a;
    }
    for (u, w) in block.iter_mut().enumerate() {
        for (r, w) in w.iter_mut().enumerate() {
            *w = u32::from(counts[r * size + u]);
        }
    }
}

/// Keeps a block's weights (units `start..`) at a byte each in `kept`; a weight of 255 or more
/// (as good as never) goes whole into `large` as (unit, replicate, weight).
#[inline(always)]
fn keep<const R: usize>(
    block: &[[u32; R]],
    kept: &mut [[u8; R]],
    start: usize,
    large: &mut Vec<(usize, usize, u32)>,
) {
    for (i, (kept, w)) in kept.iter_mut().zip(block).enumerate() {
        *kept = w.map(|w| w.min(255) as u8);
        if w.iter().any(|&w| w >= 255) {
            let whole = w.iter().enumerate().filter(|(_, &w)| w >= 255);
            large.extend(whole.map(|(r, &w)| (start + i, r, w)));
        }
    }
}

/// The block's weights as [`keep`] kept them.
#[inline(always)]
fn restore<const R: usize>(
    block: &mut [[u32; R]],
    kept: &[[u8; R]],
    start: usize,
    large: &[(usize, usize, u32)],
) {
    for (w, kept) in block.iter_mut().zip(kept) {
        *w = kept.map(u32::from);
    }
    let units = start..start + block.len();
    for &(u, r, w) in large.iter().filter(|(u, ..)| units.contains(u)) {
        block[u - start][r] = w;
    }
}

/// A thread's buffers for drawing `R` replicates side by side.
struct Group<const R: usize> {
    /// Per replicate: its draws per block.
    draws: Vec<Vec<u32>>,
    lanes: Lanes<R>,
    /// Per unit, each replicate's weight at a byte, kept for the second pass; a weight of 255
    /// or more (as good as never) is kept whole in `large` as (unit, replicate, weight).
    kept: Vec<[u8; R]>,
    large: Vec<(usize, usize, u32)>,
    /// Every replicate's weights in the current block.
    block: Vec<[u32; R]>,
    /// Each replicate's weights in the current block, while they are drawn ([`draw_block`]).
    counts: Vec<u16>,
}

/// How many of `total` draws with replacement land in each group, for groups of `sizes`
/// members (summing to `total`): group g takes Binomial(draws left, size_g / members left).
pub(crate) fn multinomial(sizes: &[u32], total: u64, rng: &mut Rng, out: &mut [u32]) {
    let (mut left, mut members) = (total, total);
    for (slot, &size) in out.iter_mut().zip(sizes) {
        let size = u64::from(size);
        let drawn = if left == 0 {
            0
        } else if size >= members {
            left
        } else {
            // 0 < size < members, so the probability is in (0, 1) and `new` cannot refuse it.
            Binomial::new(left, size as f64 / members as f64).map_or(0, |b| b.sample(rng))
        };
        *slot = drawn as u32;
        left -= drawn;
        members -= size;
    }
}

/// α* of each KALPHA replicate, in replicate order. `prepared` must be coded
/// ([`Prepared::coded`]); all replicates are `None` when α itself is undefined.
pub fn kalpha_replicates(
    prepared: &Prepared,
    raters: usize,
    plan: Plan,
    tick: &(dyn Fn() + Sync),
) -> Vec<Option<f64>> {
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
    parallel_with(
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
        tick,
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
pub(crate) fn parallel<S, T: Send + Default + Clone>(
    plan: Plan,
    init: impl Fn() -> S + Sync,
    replicate: impl Fn(&mut S, &mut Rng) -> T + Sync,
) -> Vec<T> {
    parallel_with(plan, init, replicate, &|| {})
}

/// [`parallel`], calling `tick` after each replicate (from whichever thread ran it).
pub(crate) fn parallel_with<S, T: Send + Default + Clone>(
    plan: Plan,
    init: impl Fn() -> S + Sync,
    replicate: impl Fn(&mut S, &mut Rng) -> T + Sync,
    tick: &(dyn Fn() + Sync),
) -> Vec<T> {
    parallel_side_by_side(
        plan,
        1,
        init,
        |state, rngs, out| out[0] = replicate(state, &mut rngs[0]),
        tick,
    )
}

/// [`parallel_with`] for replicates computed `side` at a time: `group(state, rngs, out)` gets
/// the generators of up to `side` consecutive replicates and fills their results.
fn parallel_side_by_side<S, T: Send + Default + Clone>(
    plan: Plan,
    side: usize,
    init: impl Fn() -> S + Sync,
    group: impl Fn(&mut S, &mut [Rng], &mut [T]) + Sync,
    tick: &(dyn Fn() + Sync),
) -> Vec<T> {
    let n = plan.replicates;
    let mut out = vec![T::default(); n];
    if n == 0 {
        return out;
    }
    let threads = plan.threads.clamp(1, n);
    let chunk = n.div_ceil(threads);
    std::thread::scope(|scope| {
        for (c, slots) in out.chunks_mut(chunk).enumerate() {
            let (init, group) = (&init, &group);
            crate::threads::scoped(scope, "bootstrap", move || {
                let mut state = init();
                let mut first = c * chunk;
                for slots in slots.chunks_mut(side.max(1)) {
                    let mut rngs: Vec<Rng> = (first..first + slots.len())
                        .map(|i| Rng::for_replicate(plan.seed, i as u64))
                        .collect();
                    group(&mut state, &mut rngs, slots);
                    first += slots.len();
                    for _ in 0..slots.len() {
                        tick();
                    }
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
    fn multinomial_draws_every_unit_once_per_draw_in_proportion_to_group_size() {
        let sizes = [5u32, 0, 1, 994];
        let mut out = [0u32; 4];
        let mut mean = [0.0; 4];
        let replicates = 4000;
        for i in 0..replicates {
            multinomial(&sizes, 1000, &mut Rng::for_replicate(7, i), &mut out);
            assert_eq!(out.iter().map(|&w| u64::from(w)).sum::<u64>(), 1000);
            assert_eq!(out[1], 0, "an empty group is never drawn");
            for (m, &w) in mean.iter_mut().zip(&out) {
                *m += f64::from(w) / replicates as f64;
            }
        }
        // Expected counts 5, 0, 1, 994, with standard errors of about 0.035, 0, 0.016, 0.04.
        for (m, want) in mean.iter().zip([5.0, 0.0, 1.0, 994.0]) {
            assert!((m - want).abs() < 0.15, "{mean:?}");
        }
    }

    /// 3 raters on a 5-point scale, 3,000 units: a few dozen patterns.
    fn many_repeated_units() -> Units {
        let rows: Vec<[Option<f64>; 3]> = (0..3000u64)
            .map(|u| {
                let mut rng = Rng::for_replicate(11, u);
                let truth = rng.below(5) as f64;
                let mut rate = || {
                    let noise = rng.below(4);
                    Some(match noise {
                        0 => (truth - 1.0).max(0.0),
                        1 => (truth + 1.0).min(4.0),
                        _ => truth,
                    })
                };
                [rate(), rate(), if u % 4 == 0 { None } else { rate() }]
            })
            .collect();
        Units::from_rows(&rows).unwrap()
    }

    #[test]
    fn drawing_patterns_gives_the_interval_of_drawing_units() {
        let units = many_repeated_units();
        for level in Level::ALL {
            let prepared = Prepared::new(&units, level).unwrap();
            let patterns = Patterns::group(&prepared, 3000 / UNITS_PER_PATTERN).unwrap();
            assert!(patterns.len() < 60, "{level}: {} patterns", patterns.len());
            let mut p = plan(Method::Units, 2);
            p.replicates = 2000;
            let by_pattern = summarize(p, &pattern_replicates(&patterns, p, &|| {}));
            let by_unit = summarize(p, &each_unit_replicates(&prepared, p, &|| {}));
            assert_eq!(
                summarize(p, &unit_replicates(&prepared, p, &|| {})),
                by_pattern,
                "{level}: the default path groups these units"
            );
            // Two independent 2,000-replicate estimates of the same percentiles: the interval
            // is about 0.05 wide here, and its ends agree to within a tenth of that.
            let gap = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs();
            assert!(
                gap(by_pattern.ci.lower, by_unit.ci.lower) < 0.005
                    && gap(by_pattern.ci.upper, by_unit.ci.upper) < 0.005,
                "{level}: {:?} against {:?}",
                by_pattern.ci,
                by_unit.ci
            );
            let one = pattern_replicates(&patterns, plan(Method::Units, 1), &|| {});
            let three = pattern_replicates(&patterns, plan(Method::Units, 3), &|| {});
            assert_eq!(one, three, "{level}: seeded, whatever the threads");
        }
    }

    /// 3,000 units over 101 ordered levels, nearly every unit its own pattern.
    fn many_levels() -> Units {
        let rows: Vec<Vec<Option<f64>>> = (0..3000u64)
            .map(|u| {
                let mut rng = Rng::for_replicate(13, u);
                let truth = rng.below(91) as f64;
                (0..4)
                    .map(|j| (j < 3 || u % 2 == 0).then(|| truth + rng.below(11) as f64))
                    .collect()
            })
            .collect();
        Units::from_rows(&rows).unwrap()
    }

    /// The bootstrap as the definition says: N units drawn uniformly, one weight each.
    fn reference_replicates(prepared: &Prepared, plan: Plan) -> Vec<Option<f64>> {
        let units = prepared.pairable_units();
        parallel(
            plan,
            || (vec![0u32; units], Partial::default()),
            |(weights, partial), rng| {
                weights.fill(0);
                for _ in 0..units {
                    weights[rng.below(units as u64) as usize] += 1;
                }
                prepared.evaluate(Some(weights), partial).alpha()
            },
        )
    }

    #[test]
    fn drawing_block_by_block_gives_the_interval_of_drawing_over_every_unit() {
        let units = many_levels();
        for level in Level::ALL {
            let prepared = Prepared::new(&units, level).unwrap();
            assert!(prepared.pairable_units() > 2 * BLOCK_UNITS);
            assert!(Patterns::group(&prepared, 3000 / UNITS_PER_PATTERN).is_none());
            let mut p = plan(Method::Units, 2);
            p.replicates = 2000;
            let blocked = summarize(p, &unit_replicates(&prepared, p, &|| {}));
            let reference = summarize(p, &reference_replicates(&prepared, p));
            // Two independent 2,000-replicate estimates of the same percentiles.
            let gap = |a: Option<f64>, b: Option<f64>| (a.unwrap() - b.unwrap()).abs();
            let width = reference.ci.upper.unwrap() - reference.ci.lower.unwrap();
            assert!(
                gap(blocked.ci.lower, reference.ci.lower) < 0.1 * width
                    && gap(blocked.ci.upper, reference.ci.upper) < 0.1 * width,
                "{level}: {:?} against {:?}",
                blocked.ci,
                reference.ci
            );
        }
    }

    #[test]
    fn blocked_replicates_do_not_depend_on_threads_or_groups() {
        // 37 replicates: groups of 16 with a short last group, split differently by 1 and 3
        // threads.
        let units = many_levels();
        for level in [Level::Ordinal, Level::Interval, Level::Nominal] {
            let prepared = Prepared::new(&units, level).unwrap();
            let mut one = plan(Method::Units, 1);
            one.replicates = 37;
            let three = Plan { threads: 3, ..one };
            let a = unit_replicates(&prepared, one, &|| {});
            assert_eq!(a, unit_replicates(&prepared, three, &|| {}), "{level}");
            assert!(a.iter().all(Option::is_some));
            // Replicate i is the same replicate whatever the number asked for.
            let mut more = one;
            more.replicates = 50;
            assert_eq!(
                a[..],
                unit_replicates(&prepared, more, &|| {})[..37],
                "{level}"
            );
        }
    }

    #[test]
    fn drawing_two_lanes_at_a_time_gives_each_lane_its_own_draws() {
        // Lanes with different numbers of draws, an odd number of generators (a short last
        // group), and a lane past 65,535 draws (counted straight into the block).
        for draws in [
            vec![700u32, 0, 1500, 3],
            vec![5, 9, 2],
            vec![70_000, 10, 20, 30],
            vec![0],
        ] {
            let size = 37;
            let fresh = || -> Vec<Rng> {
                (0..draws.len())
                    .map(|r| Rng::for_replicate(5, r as u64))
                    .collect()
            };
            let mut want = vec![[0u32; 4]; size];
            let mut after = fresh();
            for (r, rng) in after.iter_mut().enumerate() {
                for _ in 0..draws[r] {
                    want[rng.below(size as u64) as usize][r] += 1;
                }
            }
            let mut block = vec![[9u32; 4]; size];
            let mut counts = vec![7u16; 4 * size];
            let mut rngs = fresh();
            draw_block(&mut block, &mut counts, &mut rngs, |r| draws[r]);
            assert_eq!(block, want, "{draws:?}");
            for (a, b) in rngs.iter_mut().zip(&mut after) {
                assert_eq!(
                    a.next_u64(),
                    b.next_u64(),
                    "{draws:?}: generators left in step"
                );
            }
        }
    }

    #[test]
    fn the_build_for_avx2_gives_the_portable_replicates_bit_for_bit() {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let units = many_levels();
            for level in Level::ALL {
                let prepared = Prepared::new(&units, level).unwrap();
                let n = prepared.pairable_units();
                let sizes: Vec<u32> = (0..n)
                    .step_by(BLOCK_UNITS)
                    .map(|start| (n - start).min(BLOCK_UNITS) as u32)
                    .collect();
                let group = || Group::<16> {
                    draws: vec![vec![0; sizes.len()]; 16],
                    lanes: Lanes::default(),
                    kept: vec![[0; 16]; n],
                    large: Vec::new(),
                    block: vec![[0; 16]; BLOCK_UNITS],
                    counts: vec![0; 16 * BLOCK_UNITS],
                };
                let rngs = || -> Vec<Rng> { (0..16).map(|r| Rng::for_replicate(3, r)).collect() };
                let (mut portable, mut avx2) = (vec![None; 16], vec![None; 16]);
                replicate_group_in(&prepared, &sizes, &mut group(), &mut rngs(), &mut portable);
                // SAFETY: the CPU has AVX2.
                unsafe {
                    replicate_group_avx2(&prepared, &sizes, &mut group(), &mut rngs(), &mut avx2)
                };
                let bits = |v: &[Option<f64>]| -> Vec<u64> {
                    v.iter().map(|a| a.unwrap().to_bits()).collect()
                };
                assert_eq!(bits(&portable), bits(&avx2), "{level}");
            }
        }
    }

    #[test]
    fn a_weight_past_a_byte_is_kept_whole() {
        let block: Vec<[u32; 2]> = vec![[3, 0], [255, 1], [0, 70_000], [254, 2]];
        let mut kept = [[0u8; 2]; 6];
        let mut large = Vec::new();
        keep(&block, &mut kept[2..], 2, &mut large);
        assert_eq!(large, vec![(3, 0, 255), (4, 1, 70_000)]);
        let mut back = vec![[9u32; 2]; 4];
        restore(&mut back, &kept[2..], 2, &large);
        assert_eq!(back, block);
    }

    #[test]
    fn tick_is_called_once_per_replicate() {
        let ticks = std::sync::atomic::AtomicUsize::new(0);
        let tick = || {
            ticks.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        };
        let prepared = Prepared::new(&reference(), Level::Nominal).unwrap();
        unit_replicates(&prepared, plan(Method::Units, 3), &tick);
        let coded = Prepared::coded(&reference(), Level::Nominal).unwrap();
        kalpha_replicates(&coded, 4, plan(Method::Kalpha, 2), &tick);
        assert_eq!(ticks.into_inner(), 800);
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
