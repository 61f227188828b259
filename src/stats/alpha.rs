//! Krippendorff's α with missing data, at the nominal, ordinal, interval and ratio levels
//! (docs/guides/alpha-and-calibration.md; formulas and reference values in REFERENCE.md).
//!
//! α = 1 − D_o / D_e = 1 − (n − 1) · Σ o_ck δ²_ck / Σ n_c n_k δ²_ck, over the units that hold two
//! or more values ("pairable"); n counts their values.
//!
//! No coincidence matrix is ever built, per unit or globally. Each level reduces to per-unit
//! sufficient statistics that add up over units:
//!
//! * the observed part of a unit is `Σ_{i≠j} δ²(v_i, v_j) / (m_u − 1)`, which for nominal, interval
//!   and ratio data does not depend on any other unit and is computed once;
//! * the expected part needs only the pairable marginals `n_c` (nominal: `n² − Σ n_c²`;
//!   interval: `2 n Σ n_c (c − c̄)²`, or one pass over the raw values; ratio: `Σ n_c n_k δ²`);
//! * ordinal δ is a difference of mid-ranks: with the values sorted and `M_c = Σ_{g<c} n_g + n_c/2`,
//!   `Σ_{g=c..k} n_g − (n_c + n_k)/2 = M_k − M_c`, so ordinal α is interval α on the `M` values,
//!   which are recomputed from the marginals.
//!
//! A bootstrap replicate is the same sum with a multiplicity weight per unit, which is why
//! [`Prepared::evaluate`] takes optional weights: the point estimate and every replicate go
//! through one code path.
//!
//! Interval data is kept as raw numbers (shifted by the first pairable value, which keeps the
//! sums of squares well conditioned and makes identical data exactly zero), so continuous values
//! cost O(values). The other levels code the values during the one pass that builds each unit's
//! (code, count) entries: a direct table for small non-negative integers, a hash otherwise. Large
//! inputs are coded on every core and merged exactly.

use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::patterns::patterns_of;

/// Level of measurement: decides the difference function δ².
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Nominal,
    Ordinal,
    Interval,
    Ratio,
}

impl Level {
    pub const ALL: [Level; 4] = [
        Level::Nominal,
        Level::Ordinal,
        Level::Interval,
        Level::Ratio,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Level::Nominal => "nominal",
            Level::Ordinal => "ordinal",
            Level::Interval => "interval",
            Level::Ratio => "ratio",
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Level::ALL
            .into_iter()
            .find(|l| l.name() == s)
            .ok_or_else(|| format!("unknown level `{s}`: use nominal, ordinal, interval or ratio"))
    }
}

/// Problems the α computation itself can detect in its input.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AlphaError {
    #[error(
        "no pairable unit: every unit holds fewer than two values, so there is nothing to compare"
    )]
    NoPairableUnit,
    #[error("value {0} is not a finite number")]
    NonFinite(f64),
    #[error(
        "value {0:e} is too large for the {1} level: squared differences would overflow; \
         rescale the values (α does not change under a common scale factor)"
    )]
    TooLarge(f64, Level),
    #[error(
        "ratio α over {0} distinct values would compare every pair of values ({0}² pairs); \
         the limit is {RATIO_DISTINCT_LIMIT}. Round the values, or use the interval level"
    )]
    TooManyRatioValues(usize),
}

/// Largest magnitude the interval level accepts: squares of differences summed over millions of
/// values must stay finite.
pub const INTERVAL_MAGNITUDE_LIMIT: f64 = 1e100;

/// Refuses interval values whose squared differences would overflow.
fn check_interval_magnitude(values: &[f64]) -> Result<(), AlphaError> {
    match values.iter().find(|v| v.abs() > INTERVAL_MAGNITUDE_LIMIT) {
        Some(&v) => Err(AlphaError::TooLarge(v, Level::Interval)),
        None => Ok(()),
    }
}

/// Inputs with at least this many values are coded on every core.
const PARALLEL_VALUES: usize = 1 << 18;

/// Ratio's expected disagreement has no one-pass form: it compares every pair of distinct values.
pub const RATIO_DISTINCT_LIMIT: usize = 20_000;

/// Reliability data: the values recorded for each unit, missing ones left out.
///
/// Invariant: every value is finite. Rater identity is not needed by α (only which values share
/// a unit), so it is not stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Units {
    offsets: Vec<usize>,
    values: Vec<f64>,
}

impl Default for Units {
    fn default() -> Self {
        Self::new()
    }
}

impl Units {
    pub fn new() -> Self {
        Units {
            offsets: vec![0],
            values: Vec::new(),
        }
    }

    pub fn with_capacity(units: usize, values: usize) -> Self {
        let mut offsets = Vec::with_capacity(units + 1);
        offsets.push(0);
        Units {
            offsets,
            values: Vec::with_capacity(values),
        }
    }

    /// Appends one unit. A unit may hold any number of values, including none.
    pub fn push_unit(&mut self, values: &[f64]) -> Result<(), AlphaError> {
        if let Some(&bad) = values.iter().find(|v| !v.is_finite()) {
            return Err(AlphaError::NonFinite(bad));
        }
        self.values.extend_from_slice(values);
        self.offsets.push(self.values.len());
        Ok(())
    }

    /// Builds from its parts as [`Units::push_unit`] leaves them: unit u's values are
    /// `values[offsets[u]..offsets[u + 1]]`, `offsets` starting at 0, rising, and ending at
    /// `values.len()`. `None` for parts that are not that, or a value that is not finite.
    pub fn from_parts(offsets: Vec<usize>, values: Vec<f64>) -> Option<Self> {
        let shaped = offsets.first() == Some(&0)
            && offsets.last() == Some(&values.len())
            && offsets.windows(2).all(|w| w[0] <= w[1]);
        (shaped && values.iter().all(|v| v.is_finite())).then_some(Units { offsets, values })
    }

    /// Builds from rows of optional values, one row per unit (`None` = missing).
    pub fn from_rows<R: AsRef<[Option<f64>]>>(rows: &[R]) -> Result<Self, AlphaError> {
        let mut units = Units::new();
        let mut buf = Vec::new();
        for row in rows {
            buf.clear();
            buf.extend(row.as_ref().iter().flatten());
            units.push_unit(&buf)?;
        }
        Ok(units)
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn unit(&self, i: usize) -> &[f64] {
        &self.values[self.offsets[i]..self.offsets[i + 1]]
    }

    pub fn iter(&self) -> impl Iterator<Item = &[f64]> + '_ {
        self.offsets.windows(2).map(|w| &self.values[w[0]..w[1]])
    }
}

/// The point estimate and what it was computed from.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    pub level: Level,
    /// `None` when α is undefined; the reason says why.
    pub alpha: Option<f64>,
    pub undefined_reason: Option<String>,
    pub pairable_units: usize,
    pub pairable_values: usize,
    pub observed_disagreement: f64,
    pub expected_disagreement: f64,
}

pub const UNDEFINED_NO_VARIATION: &str =
    "every pairable value is the same, so the expected disagreement is 0 and α = 1 − 0/0 is undefined";

/// Krippendorff's α of `units` at `level`.
pub fn alpha(units: &Units, level: Level) -> Result<Estimate, AlphaError> {
    Ok(Prepared::new(units, level)?.estimate())
}

/// Per-unit sufficient statistics of the pairable units, ready to be summed with or without
/// bootstrap weights.
#[derive(Clone, Debug)]
pub struct Prepared {
    level: Level,
    stats: Stats,
}

#[derive(Clone, Debug)]
enum Stats {
    Interval(IntervalStats),
    Coded(CodedStats),
}

/// Raw-value statistics for the interval level, per pairable unit.
#[derive(Clone, Debug)]
struct IntervalStats {
    m: Vec<f64>,
    /// Σ x and Σ x² of the shifted values.
    s1: Vec<f64>,
    s2: Vec<f64>,
    /// Σ_{i≠j} (x_i − x_j)² / (m − 1) = 2 m Σ (x − x̄)² / (m − 1).
    within: Vec<f64>,
    /// The unit's single value when all its values are equal, NaN otherwise.
    constant: Vec<f64>,
    /// The sums with every weight 1 (the point estimate).
    full: Sums,
}

/// Coded statistics: the distinct values, and per pairable unit its (code, count) pairs.
#[derive(Clone, Debug)]
struct CodedStats {
    /// Distinct pairable values, ascending.
    levels: Vec<f64>,
    offsets: Vec<usize>,
    codes: Vec<u32>,
    counts: Vec<u32>,
    m: Vec<u32>,
    /// Σ_{i≠j} δ² / (m − 1) per unit, for the levels where it does not depend on the marginals.
    within: Option<Vec<f64>>,
    /// n_c over all pairable units (every weight 1).
    full_marginals: Vec<f64>,
    /// 2 / (m − 1) for a unit of m values, by m (ordinal only).
    pair_factors: Vec<f64>,
}

/// `R` evaluations in progress side by side, one per lane: the running sums of the units added
/// so far under each lane's weights, and the buffers the sums need. The bootstrap evaluates
/// several replicates at once so that each unit's statistics, read once, serve every lane, and
/// the per-lane arithmetic runs as vector instructions; the point estimate is one lane of
/// weight 1. Units are added in order, a block at a time ([`Prepared::add`]), so the sums do
/// not depend on the blocks. Reused from replicate to replicate, so replicates allocate nothing.
#[derive(Clone, Debug)]
pub struct Lanes<const R: usize> {
    /// Interval: Σ w m, Σ w s1, Σ w s2.
    n: [f64; R],
    s1: [f64; R],
    s2: [f64; R],
    /// Σ w · within (ordinal: filled by the second pass).
    observed: [f64; R],
    /// Interval: the least and greatest single value of the constant units added (a unit that
    /// is not constant counts as −∞ and +∞), so the sample is constant when they are equal.
    lowest: [f64; R],
    highest: [f64; R],
    /// Coded: per code, the weighted marginals n_c: whole counts, exact in f64 below 2^53, and
    /// added as vectors.
    marginals: Vec<[f64; R]>,
    /// Ordinal: per code, its mid-rank less n/2 and that squared, filled between the passes.
    centred: Vec<[f64; R]>,
    squared: Vec<[f64; R]>,
    /// One lane's n_c and mid-ranks, while it is finished.
    nc: Vec<f64>,
    positions: Vec<f64>,
}

impl<const R: usize> Default for Lanes<R> {
    fn default() -> Self {
        Lanes {
            n: [0.0; R],
            s1: [0.0; R],
            s2: [0.0; R],
            observed: [0.0; R],
            lowest: [f64::INFINITY; R],
            highest: [f64::NEG_INFINITY; R],
            marginals: Vec::new(),
            centred: Vec::new(),
            squared: Vec::new(),
            nc: Vec::new(),
            positions: Vec::new(),
        }
    }
}

/// One evaluation: a single lane.
pub type Partial = Lanes<1>;

/// Weighted sums behind one α: n, Σ o δ² (= n · D_o) and Σ n_c n_k δ² (= n (n − 1) · D_e).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sums {
    pub n: f64,
    pub observed: f64,
    pub expected: f64,
    /// Every pairable value identical: α undefined, decided exactly rather than by D_e ≈ 0.
    pub constant: bool,
}

impl Sums {
    pub fn alpha(&self) -> Option<f64> {
        if self.constant || self.expected <= 0.0 {
            None
        } else {
            Some(1.0 - (self.n - 1.0) * self.observed / self.expected)
        }
    }

    pub fn observed_disagreement(&self) -> f64 {
        self.observed / self.n
    }

    pub fn expected_disagreement(&self) -> f64 {
        if self.constant {
            0.0
        } else {
            self.expected / (self.n * (self.n - 1.0))
        }
    }
}

impl Prepared {
    /// Reduces `units` to sufficient statistics at `level`. Interval data stays raw.
    pub fn new(units: &Units, level: Level) -> Result<Self, AlphaError> {
        if level == Level::Interval {
            Self::interval(units)
        } else {
            Self::coded(units, level)
        }
    }

    /// Coded statistics at any level, interval included: what the KALPHA bootstrap resamples.
    pub fn coded(units: &Units, level: Level) -> Result<Self, AlphaError> {
        let pairable = || units.iter().filter(|u| u.len() >= 2);
        if pairable().next().is_none() {
            return Err(AlphaError::NoPairableUnit);
        }
        if level == Level::Interval {
            for unit in pairable() {
                check_interval_magnitude(unit)?;
            }
        }
        // Large inputs are coded in contiguous slices of units, one per core, and merged. The
        // merge is exact (codes are remapped by value, counts are integers) and the codes are
        // then sorted by value, so the statistics do not depend on the number of threads.
        let threads = if units.values.len() >= PARALLEL_VALUES {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            1
        };
        let mut bounds: Vec<usize> = (0..threads)
            .map(|t| {
                let target = units.values.len() * t / threads;
                units.offsets.partition_point(|&o| o < target)
            })
            .collect();
        bounds.push(units.len());
        let parts: Vec<CodedStats> = if threads == 1 {
            vec![CodedStats::build(units, 0..units.len(), level)]
        } else {
            std::thread::scope(|scope| {
                let handles: Vec<_> = bounds
                    .windows(2)
                    .map(|w| {
                        let range = w[0]..w[1];
                        crate::threads::scoped(scope, "alpha", move || {
                            CodedStats::build(units, range, level)
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            })
        };
        let mut parts = parts.into_iter();
        let mut stats = parts.next().ok_or(AlphaError::NoPairableUnit)?;
        for part in parts {
            stats.append(part);
        }
        if level == Level::Ratio && stats.levels.len() > RATIO_DISTINCT_LIMIT {
            return Err(AlphaError::TooManyRatioValues(stats.levels.len()));
        }
        stats.sort_levels();
        if level == Level::Ordinal {
            let most = stats.m.iter().max().map_or(0, |&m| m as usize);
            stats.pair_factors = (0..=most)
                .map(|m| if m < 2 { 0.0 } else { 2.0 / (m as f64 - 1.0) })
                .collect();
        }
        Ok(Prepared {
            level,
            stats: Stats::Coded(stats),
        })
    }

    fn interval(units: &Units) -> Result<Self, AlphaError> {
        let pairable = || units.iter().filter(|u| u.len() >= 2);
        let shift = pairable()
            .next()
            .map(|u| u[0])
            .ok_or(AlphaError::NoPairableUnit)?;
        let mut st = IntervalStats {
            m: Vec::with_capacity(units.len()),
            s1: Vec::with_capacity(units.len()),
            s2: Vec::with_capacity(units.len()),
            within: Vec::with_capacity(units.len()),
            constant: Vec::with_capacity(units.len()),
            full: Sums {
                n: 0.0,
                observed: 0.0,
                expected: 0.0,
                constant: true,
            },
        };
        // One pass per unit for its sums and range, one more (in cache) for its sum of squares
        // about its own mean; the full-sample sums accumulate alongside.
        let (mut t1, mut t2) = (0.0, 0.0);
        let mut common: Option<f64> = None;
        for unit in pairable() {
            let m = unit.len() as f64;
            let (mut s1, mut s2) = (0.0, 0.0);
            let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
            for &v in unit {
                let x = v - shift;
                s1 += x;
                s2 += x * x;
                lo = lo.min(v);
                hi = hi.max(v);
            }
            check_interval_magnitude(&[lo, hi])?;
            let mean = s1 / m;
            let ss: f64 = unit.iter().map(|&v| (v - shift - mean).powi(2)).sum();
            let within = 2.0 * m * ss / (m - 1.0);
            let constant = if lo == hi { lo } else { f64::NAN };
            st.m.push(m);
            st.s1.push(s1);
            st.s2.push(s2);
            st.within.push(within);
            st.constant.push(constant);

            st.full.n += m;
            t1 += s1;
            t2 += s2;
            st.full.observed += within;
            if st.full.constant {
                st.full.constant =
                    !constant.is_nan() && *common.get_or_insert(constant) == constant;
            }
        }
        st.full.expected = 2.0 * (st.full.n * t2 - t1 * t1);
        Ok(Prepared {
            level: Level::Interval,
            stats: Stats::Interval(st),
        })
    }

    pub fn pairable_units(&self) -> usize {
        match &self.stats {
            Stats::Interval(s) => s.m.len(),
            Stats::Coded(s) => s.m.len(),
        }
    }

    /// The point estimate.
    pub fn estimate(&self) -> Estimate {
        let sums = self.evaluate(None, &mut Partial::default());
        let alpha = sums.alpha();
        Estimate {
            level: self.level,
            alpha,
            undefined_reason: alpha.is_none().then(|| UNDEFINED_NO_VARIATION.to_string()),
            pairable_units: self.pairable_units(),
            pairable_values: sums.n as usize,
            observed_disagreement: sums.observed_disagreement(),
            expected_disagreement: sums.expected_disagreement(),
        }
    }

    /// The α sums with each pairable unit counted `weights[u]` times (all once when `None`).
    /// `weights`, when given, has one entry per pairable unit.
    pub fn evaluate(&self, weights: Option<&[u32]>, partial: &mut Partial) -> Sums {
        if let (None, Stats::Interval(s)) = (weights, &self.stats) {
            return s.full;
        }
        let units = self.pairable_units();
        self.start(partial);
        one_lane_blocks(units, weights, |start, block| {
            self.add(partial, start, block)
        });
        if self.two_passes() {
            self.between_passes(partial);
            one_lane_blocks(units, weights, |start, block| {
                self.add_again(partial, start, block)
            });
        }
        self.finish(partial, 0)
    }

    /// Starts `R` evaluations: no unit added. Then [`Prepared::add`] every pairable unit once,
    /// in order, in as many calls as convenient; when [`Prepared::two_passes`],
    /// [`Prepared::between_passes`] and [`Prepared::add_again`] them with the same weights; and
    /// [`Prepared::finish`] each lane.
    pub fn start<const R: usize>(&self, lanes: &mut Lanes<R>) {
        lanes.n = [0.0; R];
        lanes.s1 = [0.0; R];
        lanes.s2 = [0.0; R];
        lanes.observed = [0.0; R];
        lanes.lowest = [f64::INFINITY; R];
        lanes.highest = [f64::NEG_INFINITY; R];
        lanes.marginals.clear();
        if let Stats::Coded(s) = &self.stats {
            lanes.marginals.resize(s.levels.len(), [0.0; R]);
        }
    }

    /// Adds pairable units `start..start + weights.len()`, unit `start + i` counted
    /// `weights[i][r]` times in lane r.
    #[inline(always)]
    pub fn add<const R: usize>(&self, lanes: &mut Lanes<R>, start: usize, weights: &[[u32; R]]) {
        match &self.stats {
            Stats::Interval(s) => s.add(lanes, start, weights),
            Stats::Coded(s) => s.add(lanes, start, weights),
        }
    }

    /// Whether the units go through a second pass: ordinal disagreement is a distance between
    /// mid-ranks, which are known only once every unit's marginals are in.
    pub fn two_passes(&self) -> bool {
        self.level == Level::Ordinal && matches!(self.stats, Stats::Coded(_))
    }

    /// Bytes a lane's buffers take: the bootstrap evaluates fewer lanes at a time when there are
    /// many distinct values.
    pub fn lane_bytes(&self) -> usize {
        match &self.stats {
            Stats::Interval(_) => 64,
            Stats::Coded(s) => 24 * s.levels.len() + 64,
        }
    }

    /// After the first pass (ordinal): each lane's mid-ranks from its marginals.
    pub fn between_passes<const R: usize>(&self, lanes: &mut Lanes<R>) {
        if !self.two_passes() {
            return;
        }
        let levels = lanes.marginals.len();
        lanes.centred.resize(levels, [0.0; R]);
        lanes.squared.resize(levels, [0.0; R]);
        for r in 0..R {
            lanes.nc.clear();
            lanes.nc.extend(lanes.marginals.iter().map(|m| m[r]));
            mid_ranks(&lanes.nc, &mut lanes.positions);
            let half = lanes.nc.iter().sum::<f64>() / 2.0;
            for (c, &m) in lanes.positions.iter().enumerate() {
                let x = m - half;
                lanes.centred[c][r] = x;
                lanes.squared[c][r] = x * x;
            }
        }
    }

    /// The second pass (ordinal only): adds the same units with the same weights as
    /// [`Prepared::add`] did.
    #[inline(always)]
    pub fn add_again<const R: usize>(
        &self,
        lanes: &mut Lanes<R>,
        start: usize,
        weights: &[[u32; R]],
    ) {
        if let (true, Stats::Coded(s)) = (self.two_passes(), &self.stats) {
            s.add_ordinal(lanes, start, weights);
        }
    }

    /// The sums of every unit added in lane `r`.
    pub fn finish<const R: usize>(&self, lanes: &mut Lanes<R>, r: usize) -> Sums {
        match &self.stats {
            Stats::Interval(_) => Sums {
                n: lanes.n[r],
                observed: lanes.observed[r],
                expected: 2.0 * (lanes.n[r] * lanes.s2[r] - lanes.s1[r] * lanes.s1[r]),
                constant: lanes.lowest[r] == lanes.highest[r],
            },
            Stats::Coded(s) => {
                lanes.nc.clear();
                lanes.nc.extend(lanes.marginals.iter().map(|m| m[r]));
                if self.level == Level::Ordinal {
                    mid_ranks(&lanes.nc, &mut lanes.positions);
                }
                s.finish(self.level, &lanes.nc, &lanes.positions, lanes.observed[r])
            }
        }
    }

    /// The coincidence cells `(c ≤ k)` with their probabilities `p_cc = o_cc / n`,
    /// `p_ck = 2 o_ck / n`, and δ², for the KALPHA bootstrap. `None` for raw interval
    /// statistics (build with [`Prepared::coded`]).
    pub fn coincidence_cells(&self) -> Option<Vec<Cell>> {
        let Stats::Coded(s) = &self.stats else {
            return None;
        };
        let sums = self.evaluate(None, &mut Partial::default());
        let mut cells: HashMap<(u32, u32), f64, BuildHasherDefault<MixHasher>> = HashMap::default();
        for u in 0..s.m.len() {
            let (codes, counts) = s.unit(u);
            let denom = f64::from(s.m[u]) - 1.0;
            for i in 0..codes.len() {
                let ci = f64::from(counts[i]);
                *cells.entry((codes[i], codes[i])).or_default() += ci * (ci - 1.0) / denom;
                for j in i + 1..codes.len() {
                    let cj = f64::from(counts[j]);
                    let key = (codes[i].min(codes[j]), codes[i].max(codes[j]));
                    *cells.entry(key).or_default() += 2.0 * ci * cj / denom;
                }
            }
        }
        // Ordinal δ² needs the full-sample mid-ranks; the other levels read the values.
        let mut positions = Vec::new();
        if self.level == Level::Ordinal {
            mid_ranks(&s.full_marginals, &mut positions);
        }
        let mut out: Vec<Cell> = cells
            .into_iter()
            .filter(|&(_, o)| o > 0.0)
            .map(|((c, k), o)| Cell {
                c,
                k,
                probability: o / sums.n,
                delta2: s.delta2(self.level, c, k, &positions),
            })
            .collect();
        out.sort_unstable_by_key(|cell| (cell.c, cell.k));
        Some(out)
    }
}

/// The pairable units grouped by what they contribute to α: units whose statistics are
/// identical (for coded levels, the same multiset of values; for interval, the same count, sums
/// and within-unit disagreement) form one pattern, kept once with its multiplicity.
///
/// Resampling N units with replacement is the same as drawing how many times each pattern is
/// drawn, a multinomial over the patterns with probabilities `multiplicity / N`; a replicate
/// then costs O(patterns) instead of O(N). Real ratings on a short scale fall into a few
/// thousand patterns however many units there are.
#[derive(Clone, Debug)]
pub struct Patterns {
    /// One representative unit per pattern, in order of first appearance.
    representatives: Prepared,
    multiplicity: Vec<u32>,
    units: u64,
}

impl Patterns {
    /// Groups the pairable units of `prepared`, or `None` when they fall into more than `max`
    /// patterns (grouping stops as soon as it finds one more).
    pub fn group(prepared: &Prepared, max: usize) -> Option<Patterns> {
        let units = prepared.pairable_units();
        let (stats, multiplicity) = match &prepared.stats {
            Stats::Interval(s) => {
                let keys = (0..units).map(|u| {
                    [s.m[u], s.s1[u], s.s2[u], s.within[u], s.constant[u]].map(f64::to_bits)
                });
                let (keep, multiplicity) = patterns_of(keys, max)?;
                let pick = |v: &[f64]| keep.iter().map(|&u| v[u]).collect::<Vec<_>>();
                let stats = Stats::Interval(IntervalStats {
                    m: pick(&s.m),
                    s1: pick(&s.s1),
                    s2: pick(&s.s2),
                    within: pick(&s.within),
                    constant: pick(&s.constant),
                    full: s.full,
                });
                (stats, multiplicity)
            }
            Stats::Coded(s) => {
                // A unit's (code, count) entries in code order: its multiset of values.
                let keys = (0..units).map(|u| {
                    let (codes, counts) = s.unit(u);
                    let mut key: Vec<u64> = codes
                        .iter()
                        .zip(counts)
                        .map(|(&c, &k)| (u64::from(c) << 32) | u64::from(k))
                        .collect();
                    key.sort_unstable();
                    key
                });
                let (keep, multiplicity) = patterns_of(keys, max)?;
                let mut offsets = vec![0];
                let (mut codes, mut counts) = (Vec::new(), Vec::new());
                for &u in &keep {
                    let (c, k) = s.unit(u);
                    codes.extend_from_slice(c);
                    counts.extend_from_slice(k);
                    offsets.push(codes.len());
                }
                let stats = Stats::Coded(CodedStats {
                    levels: s.levels.clone(),
                    offsets,
                    codes,
                    counts,
                    m: keep.iter().map(|&u| s.m[u]).collect(),
                    within: s
                        .within
                        .as_ref()
                        .map(|w| keep.iter().map(|&u| w[u]).collect()),
                    full_marginals: s.full_marginals.clone(),
                    pair_factors: s.pair_factors.clone(),
                });
                (stats, multiplicity)
            }
        };
        Some(Patterns {
            representatives: Prepared {
                level: prepared.level,
                stats,
            },
            multiplicity,
            units: units as u64,
        })
    }

    pub fn len(&self) -> usize {
        self.multiplicity.len()
    }

    pub fn is_empty(&self) -> bool {
        self.multiplicity.is_empty()
    }

    /// How many pairable units each pattern stands for.
    pub fn multiplicity(&self) -> &[u32] {
        &self.multiplicity
    }

    /// The pairable units the patterns stand for.
    pub fn units(&self) -> u64 {
        self.units
    }

    /// The α sums with pattern `p` counted `weights[p]` times: a replicate that drew
    /// `weights[p]` of the units in pattern `p`.
    pub fn evaluate(&self, weights: &[u32], partial: &mut Partial) -> Sums {
        self.representatives.evaluate(Some(weights), partial)
    }
}

/// One cell of the coincidence matrix, folded over its symmetric twin.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cell {
    pub c: u32,
    pub k: u32,
    pub probability: f64,
    pub delta2: f64,
}

impl IntervalStats {
    #[inline(always)]
    fn add<const R: usize>(&self, l: &mut Lanes<R>, start: usize, weights: &[[u32; R]]) {
        for (i, w) in weights.iter().enumerate() {
            let u = start + i;
            let (m, s1, s2, within) = (self.m[u], self.s1[u], self.s2[u], self.within[u]);
            let c = self.constant[u];
            let (lo, hi) = if c.is_nan() {
                (f64::NEG_INFINITY, f64::INFINITY)
            } else {
                (c, c)
            };
            // A weight of 0 adds exact zeros and leaves the range alone.
            for r in 0..R {
                let w = f64::from(w[r]);
                l.n[r] += w * m;
                l.s1[r] += w * s1;
                l.s2[r] += w * s2;
                l.observed[r] += w * within;
                let drawn = w > 0.0;
                l.lowest[r] = l.lowest[r].min(if drawn { lo } else { f64::INFINITY });
                l.highest[r] = l.highest[r].max(if drawn { hi } else { f64::NEG_INFINITY });
            }
        }
    }
}

impl CodedStats {
    /// Codes the pairable units among `units[range]`, values numbered in order of first
    /// appearance (see [`CodedStats::sort_levels`]).
    fn build(units: &Units, range: std::ops::Range<usize>, level: Level) -> Self {
        let values = units.offsets[range.end] - units.offsets[range.start];
        // Entries are written branch-free into zeroed buffers sized for the worst case (every
        // value distinct in its unit), then truncated: whether a value's code is new in its unit
        // is data-dependent and would mispredict on most real ratings.
        let mut codes = vec![0u32; values];
        let mut counts = vec![0u32; values];
        let mut offsets = vec![0];
        let mut m = Vec::new();
        let mut coder = Coder::default();
        // slot[code]: where the code sits among the current unit's entries (u32::MAX: absent).
        let mut slot: Vec<u32> = Vec::new();
        // While a unit's entries are in cache: its fixed within-unit disagreement, and its part
        // of the full-sample marginals (what the point estimate needs).
        let fixed = level != Level::Ordinal;
        let mut within = Vec::new();
        let mut full_marginals: Vec<f64> = Vec::new();
        let mut len = 0usize;
        for unit in range.map(|u| units.unit(u)).filter(|u| u.len() >= 2) {
            let start = len;
            for &v in unit {
                let code = coder.code(v);
                if code as usize == slot.len() {
                    slot.push(u32::MAX);
                    full_marginals.push(0.0);
                }
                let at = slot[code as usize];
                let new = at == u32::MAX;
                let pos = if new { len } else { start + at as usize };
                codes[len] = code; // scratch unless `new`
                counts[pos] += 1;
                slot[code as usize] = if new { (len - start) as u32 } else { at };
                len += usize::from(new);
            }
            for (&code, &k) in codes[start..len].iter().zip(&counts[start..len]) {
                slot[code as usize] = u32::MAX;
                full_marginals[code as usize] += f64::from(k);
            }
            if fixed {
                let (c, k) = (&codes[start..len], &counts[start..len]);
                within.push(unit_within(level, &coder.levels, c, k, unit.len()));
            }
            offsets.push(len);
            m.push(unit.len() as u32);
        }
        codes.truncate(len);
        counts.truncate(len);
        CodedStats {
            levels: coder.levels,
            offsets,
            codes,
            counts,
            m,
            within: fixed.then_some(within),
            full_marginals,
            pair_factors: Vec::new(),
        }
    }

    /// Appends the units of `other`, renumbering its codes into this one's by value.
    fn append(&mut self, other: CodedStats) {
        let mut index: HashMap<u64, u32, BuildHasherDefault<MixHasher>> = self
            .levels
            .iter()
            .enumerate()
            .map(|(c, v)| (v.to_bits(), c as u32))
            .collect();
        let remap: Vec<u32> = other
            .levels
            .iter()
            .map(|v| {
                *index.entry(v.to_bits()).or_insert_with(|| {
                    self.levels.push(*v);
                    self.full_marginals.push(0.0);
                    (self.levels.len() - 1) as u32
                })
            })
            .collect();
        for (c, &x) in other.full_marginals.iter().enumerate() {
            self.full_marginals[remap[c] as usize] += x;
        }
        let base = self.codes.len();
        self.codes
            .extend(other.codes.iter().map(|&c| remap[c as usize]));
        self.counts.extend_from_slice(&other.counts);
        self.offsets
            .extend(other.offsets[1..].iter().map(|&o| o + base));
        self.m.extend_from_slice(&other.m);
        if let (Some(a), Some(b)) = (&mut self.within, other.within) {
            a.extend(b);
        }
    }

    #[inline]
    fn unit(&self, u: usize) -> (&[u32], &[u32]) {
        let r = self.offsets[u]..self.offsets[u + 1];
        (&self.codes[r.clone()], &self.counts[r])
    }

    /// Renumbers the codes so that they follow the values in ascending order, as the ordinal
    /// mid-ranks need.
    fn sort_levels(&mut self) {
        if self.levels.is_sorted_by(|a, b| a < b) {
            return;
        }
        let mut order: Vec<u32> = (0..self.levels.len() as u32).collect();
        order
            .sort_unstable_by(|&a, &b| self.levels[a as usize].total_cmp(&self.levels[b as usize]));
        let mut rank = vec![0u32; order.len()];
        for (r, &old) in order.iter().enumerate() {
            rank[old as usize] = r as u32;
        }
        for code in &mut self.codes {
            *code = rank[*code as usize];
        }
        self.levels = order.iter().map(|&o| self.levels[o as usize]).collect();
        self.full_marginals = order
            .iter()
            .map(|&o| self.full_marginals[o as usize])
            .collect();
    }

    /// δ² between two coded values; `positions` are the mid-ranks (ordinal only).
    fn delta2(&self, level: Level, c: u32, k: u32, positions: &[f64]) -> f64 {
        delta2(level, &self.levels, positions, c, k)
    }

    #[inline(always)]
    fn add<const R: usize>(&self, l: &mut Lanes<R>, start: usize, weights: &[[u32; R]]) {
        for (i, w) in weights.iter().enumerate() {
            if w.iter().all(|&w| w == 0) {
                continue;
            }
            let wf = w.map(f64::from);
            let (codes, counts) = self.unit(start + i);
            for (&c, &k) in codes.iter().zip(counts) {
                let cell = &mut l.marginals[c as usize];
                let k = f64::from(k);
                for r in 0..R {
                    cell[r] += wf[r] * k;
                }
            }
        }
        if let Some(within) = &self.within {
            for (w, &x) in weights.iter().zip(&within[start..]) {
                for (observed, &w) in l.observed.iter_mut().zip(w) {
                    *observed += f64::from(w) * x;
                }
            }
        }
    }

    /// Σ_u w_u · 2 m Σ (M − M̄_u)² / (m − 1) = Σ_u w_u · (m Σ k M² − (Σ k M)²) · 2 / (m − 1),
    /// with M the mid-ranks less n/2 (a shift leaves each unit's spread unchanged and halves the
    /// magnitudes the difference cancels): one pass over a unit's entries, two sums side by side.
    #[inline(always)]
    fn add_ordinal<const R: usize>(&self, l: &mut Lanes<R>, start: usize, weights: &[[u32; R]]) {
        for (i, w) in weights.iter().enumerate() {
            let u = start + i;
            let (codes, counts) = self.unit(u);
            if codes.len() < 2 || w.iter().all(|&w| w == 0) {
                continue;
            }
            let (mut t1, mut t2) = ([0.0f64; R], [0.0f64; R]);
            for (&c, &k) in codes.iter().zip(counts) {
                let (x, x2) = (&l.centred[c as usize], &l.squared[c as usize]);
                let k = f64::from(k);
                for r in 0..R {
                    t1[r] += k * x[r];
                    t2[r] += k * x2[r];
                }
            }
            let (m, factor) = (f64::from(self.m[u]), self.pair_factors[self.m[u] as usize]);
            for r in 0..R {
                let within = ((m * t2[r] - t1[r] * t1[r]) * factor).max(0.0);
                l.observed[r] += f64::from(w[r]) * within;
            }
        }
    }

    fn finish(&self, level: Level, nc: &[f64], positions: &[f64], observed: f64) -> Sums {
        let n: f64 = nc.iter().sum();
        let constant = nc.iter().filter(|&&x| x > 0.0).count() <= 1;
        let expected = match level {
            Level::Nominal => n * n - nc.iter().map(|x| x * x).sum::<f64>(),
            Level::Interval => 2.0 * n * spread(nc, &self.levels, n),
            Level::Ordinal => 2.0 * n * spread(nc, positions, n),
            Level::Ratio => {
                let mut sum = 0.0;
                for c in 0..nc.len() {
                    if nc[c] == 0.0 {
                        continue;
                    }
                    for k in c + 1..nc.len() {
                        sum += nc[c] * nc[k] * ratio_delta2(self.levels[c], self.levels[k]);
                    }
                }
                2.0 * sum
            }
        };
        Sums {
            n,
            observed,
            expected,
            constant,
        }
    }
}

/// Calls `add(start, block)` over the `units` in order, a block at a time, with each unit's
/// weight (1 when `None`) as a single lane: what [`Prepared::evaluate`] adds, without copying
/// the weights of a replicate (the pattern bootstrap evaluates one per replicate).
fn one_lane_blocks(units: usize, weights: Option<&[u32]>, mut add: impl FnMut(usize, &[[u32; 1]])) {
    const BLOCK: usize = 256;
    let mut block = [[1u32]; BLOCK];
    for start in (0..units).step_by(BLOCK) {
        let len = (units - start).min(BLOCK);
        if let Some(weights) = weights {
            for (lane, &w) in block.iter_mut().zip(&weights[start..start + len]) {
                *lane = [w];
            }
        }
        add(start, &block[..len]);
    }
}

/// δ² between coded values `c` and `k`: `levels` are the values, `positions` the ordinal
/// mid-ranks (read only at the ordinal level).
fn delta2(level: Level, levels: &[f64], positions: &[f64], c: u32, k: u32) -> f64 {
    if c == k {
        return 0.0;
    }
    let (a, b) = (c as usize, k as usize);
    match level {
        Level::Nominal => 1.0,
        Level::Ordinal => (positions[a] - positions[b]).powi(2),
        Level::Interval => (levels[a] - levels[b]).powi(2),
        Level::Ratio => ratio_delta2(levels[a], levels[b]),
    }
}

/// Σ_{i≠j} δ² / (m − 1) of one unit given as (code, count) entries, for the levels whose δ does
/// not depend on the marginals (not ordinal).
fn unit_within(level: Level, levels: &[f64], codes: &[u32], counts: &[u32], m: usize) -> f64 {
    let m = m as f64;
    if level == Level::Nominal {
        // Ordered pairs that disagree: m² − Σ count².
        let same: f64 = counts.iter().map(|&c| f64::from(c) * f64::from(c)).sum();
        return (m * m - same) / (m - 1.0);
    }
    let mut sum = 0.0;
    for i in 0..codes.len() {
        for j in i + 1..codes.len() {
            let pairs = 2.0 * f64::from(counts[i]) * f64::from(counts[j]);
            sum += pairs * delta2(level, levels, &[], codes[i], codes[j]);
        }
    }
    sum / (m - 1.0)
}

/// Σ_c n_c (x_c − x̄)², the weighted sum of squares of `x` about its weighted mean.
fn spread(nc: &[f64], x: &[f64], n: f64) -> f64 {
    let mean = nc.iter().zip(x).map(|(w, v)| w * v).sum::<f64>() / n;
    nc.iter().zip(x).map(|(w, v)| w * (v - mean).powi(2)).sum()
}

/// Ordinal mid-ranks from the marginals of the sorted values: M_c = Σ_{g<c} n_g + n_c / 2.
fn mid_ranks(nc: &[f64], out: &mut Vec<f64>) {
    out.clear();
    let mut before = 0.0;
    for &x in nc {
        out.push(before + x / 2.0);
        before += x;
    }
}

/// Ratio difference ((c − k)/(c + k))², 0 when c + k = 0.
fn ratio_delta2(c: f64, k: f64) -> f64 {
    let s = c + k;
    if s == 0.0 {
        0.0
    } else {
        ((c - k) / s).powi(2)
    }
}

/// SplitMix64's finalizer as a hasher: f64 bit patterns of round numbers differ only in their
/// high bits, so the hash must mix every bit into every other.
#[derive(Default)]
pub(crate) struct MixHasher(u64);

impl Hasher for MixHasher {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u32(&mut self, x: u32) {
        self.write_u64(u64::from(x));
    }
    fn write_u64(&mut self, x: u64) {
        let mut z = (self.0 ^ x).wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        self.0 = z ^ (z >> 31);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Codes values in order of first appearance. `-0.0` and `0.0` are one value. Small
/// non-negative integers (anchors, Likert points, label codes) are looked up in a direct table;
/// the first value that is not one moves every code into a hash map, which takes over.
#[derive(Default)]
struct Coder {
    /// The value of each code.
    levels: Vec<f64>,
    table: Vec<u32>,
    map: Option<HashMap<u64, u32, BuildHasherDefault<MixHasher>>>,
}

impl Coder {
    const DENSE_LIMIT: f64 = (1u32 << 20) as f64;

    #[inline]
    fn code(&mut self, v: f64) -> u32 {
        let v = v + 0.0; // -0.0 + 0.0 == +0.0
        if self.map.is_none() {
            let i = v as u32; // saturating; checked next
            if (0.0..Self::DENSE_LIMIT).contains(&v) && f64::from(i) == v {
                let i = i as usize;
                if i >= self.table.len() {
                    self.table.resize(i + 1, u32::MAX);
                }
                if self.table[i] == u32::MAX {
                    self.table[i] = self.levels.len() as u32;
                    self.levels.push(v);
                }
                return self.table[i];
            }
            let map = self
                .levels
                .iter()
                .enumerate()
                .map(|(c, x)| (x.to_bits(), c as u32))
                .collect();
            self.map = Some(map);
            self.table = Vec::new();
        }
        let next = self.levels.len() as u32;
        let map = self.map.get_or_insert_with(HashMap::default);
        let code = *map.entry(v.to_bits()).or_insert(next);
        if code == next {
            self.levels.push(v);
        }
        code
    }
}

#[cfg(test)]
pub(crate) mod tests;
