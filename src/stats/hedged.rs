//! Hedged-capital confidence sequences for the mean of values in [0, 1] (Waudby-Smith &
//! Ramdas, "Estimating means of bounded random variables by betting", JRSS-B 2024, §4.3): for
//! each candidate mean m on a grid, two bettors wager on the values against m — one that the
//! mean is above it, one below — with the predictable plug-in bets λₜ = √(2·ln(2/α) / (t·ln(1 +
//! t)·σ̂²ₜ₋₁)), truncated at c/m (c/(1 − m) for the other side), and m stays in the sequence
//! while the larger of their half-capitals is at most 1/α. Tighter than the empirical-Bernstein
//! sequence ([`super::sequence`]) where the values vary little, at the price of a grid.
//!
//! With one truncation c = ½ it is exactly confseq 0.0.11's `confseq.betting.hedged_cs(x,
//! alpha, breaks, running_intersection=True)` with its defaults (θ = ½, prior mean ½, prior
//! variance ¼, one fake observation). calibench's sequential decision averages two such
//! bettors per side, c = ½ and c = 1 ([`TRUNCATIONS`]): an average of test martingales is one,
//! so the sequence stays valid, and it is confseq's `betting_cs` with those two strategies
//! (`lambdas_fns_positive`/`negative`, `trunc_scale=1`, `convex_comb=False`). The cautious
//! bettor keeps 0/1 outcomes (values at the edges) from ruining the bold one, and the bold one
//! wins quickly where scores vary little within a wide range. tests/sequence_reference.rs
//! checks both against confseq's own output.

/// The truncations of the sequence's bettors: ½ (confseq's `hedged_cs` default) and 1.
pub const TRUNCATIONS: [f64; 2] = [0.5, 1.0];

/// The grid's resolution, confseq's default `breaks`: candidate means 0, 1/1000, …, 1, and each
/// bound widened by one step.
pub const BREAKS: usize = 1000;

/// The predictable plug-in bets of `x` at level `a` (confseq's `lambda_predmix_eb` with no
/// truncation): λₜ = √(2·ln(1/a) / (t·ln(1 + t)·σ̂²ₜ₋₁)), σ̂² regularised by one fake
/// observation at mean ½ and variance ¼.
fn bets(x: &[f64], a: f64) -> Vec<f64> {
    let mut b = Bets::new(a);
    x.iter().map(|&xi| b.next(xi)).collect()
}

/// [`bets`] one value at a time: the estimates the next bet reads.
#[derive(Clone, Debug)]
struct Bets {
    log_a: f64,
    t: f64,
    sum_x: f64,
    sum_sq: f64,
    sigma2_prev: f64,
}

impl Bets {
    fn new(a: f64) -> Bets {
        Bets {
            log_a: (1.0 / a).ln(),
            t: 0.0,
            sum_x: 0.0,
            sum_sq: 0.0,
            sigma2_prev: 0.25,
        }
    }

    /// The bet on `xi`, chosen before it is seen; then `xi` joins the estimates.
    fn next(&mut self, xi: f64) -> f64 {
        self.t += 1.0;
        let t = self.t;
        let lambda = (2.0 * self.log_a / (t * (1.0 + t).ln() * self.sigma2_prev)).sqrt();
        self.sum_x += xi;
        let mu = ((0.5 + self.sum_x) / (t + 1.0)).min(1.0);
        self.sum_sq += (xi - mu).powi(2);
        self.sigma2_prev = (0.25 + self.sum_sq) / (t + 1.0);
        if lambda.is_nan() {
            0.0
        } else {
            lambda
        }
    }
}

/// The two-sided level-`alpha` sequence of calibench's sequential decision for the mean of
/// `x` ∈ [0, 1]: the bettors of [`TRUNCATIONS`], on confseq's grid.
pub fn two_sided(x: &[f64], alpha: f64) -> (Vec<f64>, Vec<f64>) {
    two_sided_with(x, alpha, BREAKS, &TRUNCATIONS)
}

/// The two-sided level-`alpha` hedged-capital sequence for the mean of `x` ∈ [0, 1], on a grid
/// of `breaks` steps, each side's capital the average of one bettor per truncation in
/// `truncs`: (lower, upper) after each value, with the running intersection.
pub fn two_sided_with(
    x: &[f64],
    alpha: f64,
    breaks: usize,
    truncs: &[f64],
) -> (Vec<f64>, Vec<f64>) {
    let mut r = Running::new(alpha, breaks, truncs);
    r.extend(x);
    (r.lower, r.upper)
}

/// [`two_sided_with`] that values join a few at a time, each costing what it adds (a
/// sequential collection's look after each batch): every bettor's capital at every grid point
/// is kept, with the bets' estimates and the running intersection. The bounds after each value
/// are those of the whole sequence, to the bit, however the values were split.
#[derive(Clone, Debug)]
pub struct Running {
    alpha: f64,
    breaks: usize,
    truncs: Vec<f64>,
    bets: Bets,
    /// Bettor k's capitals at grid point i, at k·(breaks + 1) + i.
    ups: Vec<f64>,
    downs: Vec<f64>,
    /// The bounds after each value so far.
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
}

impl Running {
    pub fn new(alpha: f64, breaks: usize, truncs: &[f64]) -> Running {
        let capitals = (breaks + 1) * truncs.len();
        Running {
            alpha,
            breaks,
            truncs: truncs.to_vec(),
            // θ = ½: each bettor's level is α/2.
            bets: Bets::new(alpha / 2.0),
            ups: vec![1.0; capitals],
            downs: vec![1.0; capitals],
            lower: Vec::new(),
            upper: Vec::new(),
        }
    }

    /// The values `x` join the sequence, in order. The grid is shared among the available
    /// cores when the values are many (each point's capitals depend on that point alone); the
    /// result does not depend on how many.
    pub fn extend(&mut self, x: &[f64]) {
        let n = x.len();
        if n == 0 {
            return;
        }
        let lambdas: Vec<f64> = x.iter().map(|&xi| self.bets.next(xi)).collect();
        let points = self.breaks + 1;
        // A few values over the grid take less than starting a thread does.
        let threads = if n * points < 1 << 16 {
            1
        } else {
            std::thread::available_parallelism()
                .map_or(1, |t| t.get())
                .clamp(1, points)
        };
        let chunk = points.div_ceil(threads);
        let k = self.truncs.len();
        // Each chunk of grid points owns its capitals: bettor j's of the chunk are
        // ups[j·points + start .. j·points + end].
        let mut ups: Vec<Vec<&mut [f64]>> =
            (0..points.div_ceil(chunk)).map(|_| Vec::new()).collect();
        let mut downs: Vec<Vec<&mut [f64]>> =
            (0..points.div_ceil(chunk)).map(|_| Vec::new()).collect();
        for (side, out) in [(&mut self.ups, &mut ups), (&mut self.downs, &mut downs)] {
            for bettor in side.chunks_mut(points) {
                for (c, part) in bettor.chunks_mut(chunk).enumerate() {
                    out[c].push(part);
                }
            }
        }
        let (alpha, step, truncs) = (self.alpha, 1.0 / self.breaks as f64, &self.truncs);
        // Per chunk of grid points: for each value, the first and the last point inside the
        // sequence (u32::MAX / 0 when none).
        let chunks: Vec<(Vec<u32>, Vec<u32>)> = std::thread::scope(|scope| {
            let handles: Vec<_> = ups
                .into_iter()
                .zip(downs)
                .enumerate()
                .map(|(c, (ups, downs))| {
                    let lambdas = &lambdas;
                    let grid = Grid {
                        start: c * chunk,
                        step,
                        threshold: 1.0 / alpha,
                        w: 1.0 / k as f64,
                        truncs,
                    };
                    let run = move || grid.run(x, lambdas, ups, downs);
                    if threads == 1 {
                        Err(run())
                    } else {
                        Ok(crate::threads::scoped(scope, "sequence", run))
                    }
                })
                .collect();
            handles
                .into_iter()
                .map(|h| match h {
                    Err(done) => done,
                    Ok(h) => h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                })
                .collect()
        });
        let mut lo_run = self.lower.last().copied().unwrap_or(f64::NEG_INFINITY);
        let mut hi_run = self.upper.last().copied().unwrap_or(f64::INFINITY);
        for t in 0..n {
            let first = chunks.iter().map(|c| c.0[t]).min().unwrap_or(u32::MAX);
            let last = chunks.iter().map(|c| c.1[t]).max().unwrap_or(0);
            let (lo, hi) = if first == u32::MAX {
                (0.0, 1.0)
            } else {
                (
                    (f64::from(first) * step - step).max(0.0),
                    (f64::from(last) * step + step).min(1.0),
                )
            };
            lo_run = lo_run.max(lo);
            hi_run = hi_run.min(hi);
            self.lower.push(lo_run);
            self.upper.push(hi_run);
        }
    }
}

/// A chunk of the grid, from point `start` on, as one thread updates it.
struct Grid<'a> {
    start: usize,
    step: f64,
    threshold: f64,
    /// Each bettor's weight in its side's capital.
    w: f64,
    truncs: &'a [f64],
}

impl Grid<'_> {
    /// Each value of `x` (bet `lambdas`) updates the chunk's capitals (`ups[k]`, `downs[k]`:
    /// bettor k's), and the first and last of its points still inside the sequence after
    /// each value are kept.
    fn run<'c>(
        &self,
        x: &[f64],
        lambdas: &[f64],
        mut ups: Vec<&'c mut [f64]>,
        mut downs: Vec<&'c mut [f64]>,
    ) -> (Vec<u32>, Vec<u32>) {
        let n = x.len();
        let end = self.start + ups.first().map_or(0, |u| u.len());
        let (mut first, mut last) = (vec![u32::MAX; n], vec![0u32; n]);
        let (w, step, threshold) = (self.w, self.step, self.threshold);
        // BLOCK grid points at once: their capitals are independent, so each value updates
        // them side by side rather than one long chain of products.
        let mut i0 = self.start;
        while i0 < end {
            let width = BLOCK.min(end - i0);
            let at = i0 - self.start;
            // Lanes past the chunk's end bet at ½ and are never read.
            let ms: [f64; BLOCK] = std::array::from_fn(|j| {
                if j < width {
                    (i0 + j) as f64 * step
                } else {
                    0.5
                }
            });
            // Bets truncated at c/m (up) and c/(1 − m) (down), c ≤ 1, so that no capital goes
            // negative; λ is finite and ≥ 0, so the lower truncations never bind and
            // confseq's 0·∞ convention never applies.
            let caps: Vec<([f64; BLOCK], [f64; BLOCK])> = self
                .truncs
                .iter()
                .map(|&c| {
                    (
                        std::array::from_fn(|j| c / ms[j]),
                        std::array::from_fn(|j| c / (1.0 - ms[j])),
                    )
                })
                .collect();
            let load = |side: &[&mut [f64]]| -> Vec<[f64; BLOCK]> {
                side.iter()
                    .map(|b| std::array::from_fn(|j| if j < width { b[at + j] } else { 1.0 }))
                    .collect()
            };
            let (mut up, mut down) = (load(&ups), load(&downs));
            for t in 0..n {
                let (l, xt) = (lambdas[t], x[t]);
                let (mut up_sum, mut down_sum) = ([0.0f64; BLOCK], [0.0f64; BLOCK]);
                for ((up, down), (up_cap, down_cap)) in
                    up.iter_mut().zip(down.iter_mut()).zip(&caps)
                {
                    for j in 0..BLOCK {
                        let d = xt - ms[j];
                        // λ is never NaN: a plain comparison is `min` here, and one the
                        // compiler can do for all lanes at once.
                        let lu = if l < up_cap[j] { l } else { up_cap[j] };
                        let ld = if l < down_cap[j] { l } else { down_cap[j] };
                        up[j] *= 1.0 + lu * d;
                        down[j] *= 1.0 + ld * -d;
                        up_sum[j] += w * nan_zero(up[j]);
                        down_sum[j] += w * nan_zero(down[j]);
                    }
                }
                for j in 0..width {
                    if (0.5 * up_sum[j]).max(0.5 * down_sum[j]) <= threshold {
                        let i = (i0 + j) as u32;
                        first[t] = first[t].min(i);
                        last[t] = last[t].max(i);
                    }
                }
            }
            for (side, kept) in [(&mut ups, &up), (&mut downs, &down)] {
                for (b, k) in side.iter_mut().zip(kept) {
                    b[at..at + width].copy_from_slice(&k[..width]);
                }
            }
            i0 += width;
        }
        (first, last)
    }
}

/// Grid points updated side by side in [`two_sided_with`].
const BLOCK: usize = 8;

/// A capital that overflowed and then met a zero factor is NaN: confseq counts it as 0.
fn nan_zero(k: f64) -> f64 {
    if k.is_nan() {
        0.0
    } else {
        k
    }
}

/// [`two_sided_with`], stopping after the first value at which `stop(lower, upper)` holds: the
/// bounds up to and including it. Each value updates every grid point's capitals, so a caller
/// that needs only the first decision pays for the values up to it.
pub fn two_sided_until(
    x: &[f64],
    alpha: f64,
    breaks: usize,
    truncs: &[f64],
    stop: impl Fn(f64, f64) -> bool,
) -> (Vec<f64>, Vec<f64>) {
    // θ = ½: each bettor's level is α/2, and the sequence keeps m while max(½K⁺, ½K⁻) ≤ 1/α,
    // K± the average of the bettors' capitals on that side.
    let lambdas = bets(x, alpha / 2.0);
    let threshold = 1.0 / alpha;
    let step = 1.0 / breaks as f64;
    let w = 1.0 / truncs.len() as f64;
    let grid: Vec<f64> = (0..=breaks).map(|i| i as f64 * step).collect();
    let g = grid.len();
    // Each bettor's bets at each grid point are its λ truncated at c/m (upward) and c/(1 − m)
    // (downward), c ≤ 1, so that no capital can go negative; the truncations depend on the
    // grid point alone, so they are divided out once, not at every value. (λ is finite and
    // ≥ 0, so the lower truncations, −c/(1 − m) and −c/m, never bind, and a bet is never
    // infinite: confseq's 0·∞ convention never applies.) Bettor k's capitals at grid point i
    // are at k·g + i, so that each value's pass over the grid is one straight loop per bettor.
    let up_caps: Vec<f64> = truncs
        .iter()
        .flat_map(|&c| grid.iter().map(move |&m| c / m))
        .collect();
    let down_caps: Vec<f64> = truncs
        .iter()
        .flat_map(|&c| grid.iter().map(move |&m| c / (1.0 - m)))
        .collect();
    let mut up = vec![1.0f64; g * truncs.len()];
    let mut down = up.clone();
    let (mut up_sum, mut down_sum) = (vec![0.0f64; g], vec![0.0f64; g]);
    let (mut lower, mut upper) = (Vec::with_capacity(x.len()), Vec::with_capacity(x.len()));
    let (mut lo_run, mut hi_run) = (f64::NEG_INFINITY, f64::INFINITY);
    for (&xt, &l) in x.iter().zip(&lambdas) {
        up_sum.fill(0.0);
        down_sum.fill(0.0);
        for k in 0..truncs.len() {
            let span = k * g..(k + 1) * g;
            let (ups, downs) = (&mut up[span.clone()], &mut down[span.clone()]);
            let (ucaps, dcaps) = (&up_caps[span.clone()], &down_caps[span]);
            for i in 0..g {
                let d = xt - grid[i];
                ups[i] *= 1.0 + l.min(ucaps[i]) * d;
                downs[i] *= 1.0 + l.min(dcaps[i]) * -d;
                up_sum[i] += w * nan_zero(ups[i]);
                down_sum[i] += w * nan_zero(downs[i]);
            }
        }
        let inside = |i: &usize| (0.5 * up_sum[*i]).max(0.5 * down_sum[*i]) <= threshold;
        let first = (0..g).find(inside);
        let last = (0..g).rev().find(inside).unwrap_or(0);
        let (lo, hi) = match first {
            Some(f) => (
                (f as f64 * step - step).max(0.0),
                (last as f64 * step + step).min(1.0),
            ),
            None => (0.0, 1.0),
        };
        lo_run = lo_run.max(lo);
        hi_run = hi_run.min(hi);
        lower.push(lo_run);
        upper.push(hi_run);
        if stop(lo_run, hi_run) {
            break;
        }
    }
    (lower, upper)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::rng::Rng;

    // Worked by hand: one value x₁ = 1 at α = 0.05. λ₁ = √(2·ln 40/(1·ln 2·¼)) = 6.5415. At
    // m = 0 the upward bet is not truncated (½/0 = ∞): K⁺ = 1 + 6.5415 = 7.5415, half of it
    // 3.77 ≤ 1/α = 20, so even 0 stays: one unit excludes nothing, and the bounds are [0, 1].
    // Twelve 1s in a row: at m = 0.4, K⁺ grows by at most 1 + (½/0.4)·0.6 = 1.75 a unit, and
    // 1.75¹² / 2 = 409 > 20, so 0.4 is out; the lower bound lies above it.
    #[test]
    fn one_value_excludes_nothing_and_a_run_of_ones_does() {
        let l = bets(&[1.0], 0.025);
        assert!((l[0] - (2.0 * 40f64.ln() / (2f64.ln() * 0.25)).sqrt()).abs() < 1e-12);
        for truncs in [&[0.5][..], &TRUNCATIONS[..]] {
            let (lo, hi) = two_sided_with(&[1.0], 0.05, BREAKS, truncs);
            assert_eq!((lo[0], hi[0]), (0.0, 1.0));
            let (lo, hi) = two_sided_with(&[1.0; 12], 0.05, BREAKS, truncs);
            assert!(lo[11] > 0.4 && hi[11] == 1.0, "{} {}", lo[11], hi[11]);
        }
    }

    #[test]
    fn the_sequence_narrows_around_the_mean_and_is_nested() {
        let mut rng = Rng::for_replicate(3, 0);
        let x: Vec<f64> = (0..600)
            .map(|_| 0.6 + 0.1 * (rng.unit_f64() - 0.5))
            .collect();
        let (lo, hi) = two_sided(&x, 0.05);
        for t in 1..x.len() {
            assert!(lo[t] >= lo[t - 1] && hi[t] <= hi[t - 1]);
        }
        assert!(lo[599] < 0.6 && hi[599] > 0.6);
        assert!(hi[599] - lo[599] < 0.02, "{} {}", lo[599], hi[599]);
    }

    // Values joining a few at a time give the bounds of the whole sequence, to the bit.
    #[test]
    fn a_sequence_extended_batch_by_batch_is_the_whole_sequence() {
        let mut rng = Rng::for_replicate(9, 2);
        let x: Vec<f64> = (0..5000).map(|_| rng.unit_f64().powi(2)).collect();
        let whole = two_sided(&x, 0.05);
        let mut r = Running::new(0.05, BREAKS, &TRUNCATIONS);
        let mut at = 0;
        for size in [1, 10, 7, 300, 4000, 0, 682] {
            r.extend(&x[at..at + size]);
            at += size;
            assert_eq!(r.lower[..], whole.0[..at]);
            assert_eq!(r.upper[..], whole.1[..at]);
        }
        assert_eq!(at, x.len());
    }

    // The two ways of computing it (the grid shared among threads, and value by value with a
    // stop) give the same bounds, to the bit.
    #[test]
    fn both_computations_agree() {
        let mut rng = Rng::for_replicate(5, 1);
        for shape in 0..3 {
            let x: Vec<f64> = (0..300)
                .map(|_| match shape {
                    0 => f64::from(u8::from(rng.unit_f64() < 0.6)),
                    1 => rng.unit_f64().powi(3),
                    _ => 0.55 + 0.05 * rng.unit_f64(),
                })
                .collect();
            for truncs in [&[0.5][..], &TRUNCATIONS[..]] {
                let whole = two_sided_with(&x, 0.05, BREAKS, truncs);
                let stepped = two_sided_until(&x, 0.05, BREAKS, truncs, |_, _| false);
                assert_eq!(whole, stepped, "shape {shape}");
            }
        }
    }
}
