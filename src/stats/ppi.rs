//! Prediction-powered inference for a mean (PPI++: Angelopoulos, Duchi & Zrnic 2023, "PPI++:
//! Efficient Prediction-Powered Inference"), with the power-tuning λ. Pure.
//!
//! n labelled items carry a human value Y and a prediction f (here: the judges' composite); N
//! unlabelled items carry f only. With λ̂ = Cov_n(Y, f) / ((1 + n/N)·Var_{n+N}(f)) clipped to
//! [0, 1], the estimate θ̂ = mean_N(λ̂f) + mean_n(Y − λ̂f) is unbiased for the mean of Y whatever
//! the predictions' bias, provided the labelled items are a random draw; its variance is
//! Var⁰_N(λ̂f)/N + Var⁰_n(Y − λ̂f)/n. λ̂ = 0 is the labels alone; λ̂ = 1 is plain PPI. The moments
//! are exactly those of `ppi_py` 0.2.3's `ppi_mean_ci` (lam=None), and the classical interval is
//! its `classical_mean_ci`: Cov_n has divisor n, Var_{n+N} divisor n + N − 1, Var⁰ the
//! population variance.
//!
//! At the few labelled items a decision reads (10 and up), the normal interval of `ppi_mean`
//! covers 88–89% rather than 95% (simulated: `human_units`' tests). [`ppi_mean_t`] keeps its
//! estimate and widens its interval for small samples: the rectifier's variance on n − 2
//! degrees of freedom (λ is fitted on the labelled items, like a regression slope; n − 1 when
//! λ is 0) and Student's t on those degrees of freedom.

use serde::{Deserialize, Serialize};

use super::power::z_upper;
use super::test::mean;

/// A 95% estimate of a mean.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Estimate {
    pub value: Option<f64>,
    /// `None` with fewer than 2 labelled items.
    pub ci: Option<[f64; 2]>,
    /// Items with a human value (and a prediction).
    pub labelled: usize,
    /// Items with a prediction only.
    pub unlabelled: usize,
    /// The power-tuning weight of the predictions: 0 is the labels alone.
    pub lambda: f64,
    /// The interval's Student t degrees of freedom ([`ppi_mean_t`]); absent: the normal
    /// interval, as `ppi_py` draws it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub df: Option<f64>,
    /// Why the estimate fell back to the labels alone, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Estimate {
    /// The standard error behind the 95% interval: its half-width over its quantile (t₀.₉₇₅
    /// on `df`, else z₀.₉₇₅).
    pub fn standard_error(&self) -> Option<f64> {
        self.ci.map(|[lo, hi]| (hi - lo) / 2.0 / quantile(self.df))
    }

    /// The two-sided p of the estimate against 0, by the distribution its interval is drawn
    /// from.
    pub fn p_value(&self) -> Option<f64> {
        let (v, se) = (self.value?, self.standard_error()?);
        if se <= 0.0 {
            return None;
        }
        let tail = match self.df {
            Some(df) => super::power::t_upper_tail(v.abs() / se, df),
            None => super::power::normal_upper_tail(v.abs() / se),
        };
        Some((2.0 * tail).min(1.0))
    }
}

/// The moments of a pilot's pairs that the interval's width depends on, for sizing the next
/// labelling (`calibench plan --labels-for`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Moments {
    pub labelled: usize,
    pub unlabelled: usize,
    /// Cov⁰_n(Y, f), Var⁰_n(Y), Var⁰_n(f) over the labelled items.
    pub cov_yf: f64,
    pub var_y: f64,
    pub var_f_labelled: f64,
    /// Var_{n+N}(f), divisor n + N − 1.
    pub var_f_all: f64,
    /// Var⁰_N(f) over the unlabelled items.
    pub var_f_unlabelled: f64,
}

/// Population variance (divisor n).
fn var0(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / x.len() as f64
}

/// Population covariance (divisor n).
fn cov0(x: &[f64], y: &[f64]) -> f64 {
    let (mx, my) = (mean(x), mean(y));
    x.iter()
        .zip(y)
        .map(|(a, b)| (a - mx) * (b - my))
        .sum::<f64>()
        / x.len() as f64
}

/// z₀.₉₇₅.
fn z95() -> f64 {
    z_upper(0.025)
}

/// The 95% quantile of an interval on `df` degrees of freedom (the normal's without).
fn quantile(df: Option<f64>) -> f64 {
    df.map_or_else(z95, |df| super::power::t_upper(0.025, df))
}

/// The degrees of freedom of [`ppi_mean_t`]'s interval for `n` labelled items and weight `l`:
/// n − 2 when λ is fitted, n − 1 when it is 0; at least 1.
pub fn small_sample_df(n: usize, l: f64) -> f64 {
    let fitted = usize::from(l > 0.0);
    n.saturating_sub(1 + fitted).max(1) as f64
}

/// [`ppi_mean`]'s estimate with its small-sample interval: the rectifier's variance on
/// [`small_sample_df`] degrees of freedom, and Student's t on them. Without an interval (fewer
/// than 2 labelled items) it is `ppi_mean`'s.
pub fn ppi_mean_t(y: &[f64], f_labelled: &[f64], f_unlabelled: &[f64]) -> Estimate {
    let e = ppi_mean(y, f_labelled, f_unlabelled);
    let (Some(value), Some(_)) = (e.value, e.ci) else {
        return e;
    };
    let (n, big_n, l) = (y.len(), f_unlabelled.len(), e.lambda);
    let df = small_sample_df(n, l);
    let rectified: Vec<f64> = y.iter().zip(f_labelled).map(|(y, f)| y - l * f).collect();
    let imputed = if big_n > 0 {
        l * l * var0(f_unlabelled) / big_n as f64
    } else {
        0.0
    };
    let var = imputed + var0(&rectified) * n as f64 / df / n as f64;
    let half = quantile(Some(df)) * var.sqrt();
    Estimate {
        ci: Some([value - half, value + half]),
        df: Some(df),
        ..e
    }
}

/// The classical 95% estimate from the labels alone: mean ± z·σ⁰/√n.
pub fn classical(y: &[f64]) -> Estimate {
    let n = y.len();
    let value = (n > 0).then(|| mean(y));
    let ci = (n >= 2).then(|| {
        let (m, half) = (mean(y), z95() * (var0(y) / n as f64).sqrt());
        [m - half, m + half]
    });
    Estimate {
        value,
        ci,
        labelled: n,
        unlabelled: 0,
        lambda: 0.0,
        df: None,
        note: None,
    }
}

/// The moments of labelled pairs `(y, f_labelled)` and unlabelled predictions; `None` with no
/// labelled item.
pub fn moments(y: &[f64], f_labelled: &[f64], f_unlabelled: &[f64]) -> Option<Moments> {
    let (n, big_n) = (y.len(), f_unlabelled.len());
    if n == 0 || f_labelled.len() != n {
        return None;
    }
    let all: Vec<f64> = f_labelled.iter().chain(f_unlabelled).copied().collect();
    let var_f_all = if all.len() > 1 {
        var0(&all) * all.len() as f64 / (all.len() - 1) as f64
    } else {
        0.0
    };
    Some(Moments {
        labelled: n,
        unlabelled: big_n,
        cov_yf: cov0(y, f_labelled),
        var_y: var0(y),
        var_f_labelled: var0(f_labelled),
        var_f_all,
        var_f_unlabelled: if big_n > 0 { var0(f_unlabelled) } else { 0.0 },
    })
}

impl Moments {
    /// The pilot's moments for a study that labels `n` of its `labelled + unlabelled` pairs
    /// (more of the judged-only ones, drawn at random): the moments stand, the split moves.
    pub fn with_labelled(&self, n: usize) -> Moments {
        let total = self.labelled + self.unlabelled;
        Moments {
            labelled: n,
            unlabelled: total.saturating_sub(n),
            ..*self
        }
    }
}

/// λ for `n` labelled items from `m`'s moments: Cov⁰(Y, f) / ((1 + n/N)·Var_{n+N}(f)), clipped
/// to [0, 1]; 0 where it is undefined (no unlabelled item, predictions that do not vary).
pub fn lambda(m: &Moments, n: usize) -> f64 {
    if m.unlabelled == 0 || m.var_f_all <= 0.0 || !m.var_f_all.is_finite() {
        return 0.0;
    }
    let l = m.cov_yf / ((1.0 + n as f64 / m.unlabelled as f64) * m.var_f_all);
    if l.is_finite() {
        l.clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The variance of θ̂ with `n` labelled items and weight `l`, from a pilot's moments, as
/// [`ppi_mean_t`] estimates it: l²·Var⁰_N(f)/N + Var⁰(Y − l·f)·n/df/n, df =
/// [`small_sample_df`].
pub fn variance(m: &Moments, n: usize, l: f64) -> f64 {
    let rectifier = (m.var_y - 2.0 * l * m.cov_yf + l * l * m.var_f_labelled) * n as f64
        / small_sample_df(n, l);
    let imputed = if m.unlabelled > 0 {
        l * l * m.var_f_unlabelled / m.unlabelled as f64
    } else {
        0.0
    };
    imputed + rectifier.max(0.0) / n as f64
}

/// The PPI++ 95% estimate of the mean of Y from labelled pairs `(y, f_labelled)` and the
/// unlabelled predictions. Fewer than 2 labelled items, no unlabelled item, or predictions that
/// do not vary on the labelled items give the classical estimate (λ = 0), with a note.
pub fn ppi_mean(y: &[f64], f_labelled: &[f64], f_unlabelled: &[f64]) -> Estimate {
    let (n, big_n) = (y.len(), f_unlabelled.len());
    let fallback = |note: &str| Estimate {
        unlabelled: big_n,
        note: Some(note.to_string()),
        ..classical(y)
    };
    if n < 2 {
        return fallback("fewer than 2 labelled items: the labels alone, without an interval");
    }
    if big_n == 0 {
        return fallback("every item is labelled: the labels alone");
    }
    let Some(m) = moments(y, f_labelled, f_unlabelled) else {
        return fallback("no labelled item");
    };
    if m.var_f_labelled == 0.0 {
        return fallback("the judges' scores do not vary on the labelled items: the labels alone");
    }
    let l = lambda(&m, n);
    let value = l * mean(f_unlabelled)
        + y.iter()
            .zip(f_labelled)
            .map(|(y, f)| y - l * f)
            .sum::<f64>()
            / n as f64;
    let rectified: Vec<f64> = y.iter().zip(f_labelled).map(|(y, f)| y - l * f).collect();
    let var = l * l * var0(f_unlabelled) / big_n as f64 + var0(&rectified) / n as f64;
    let half = z95() * var.sqrt();
    Estimate {
        value: Some(value),
        ci: Some([value - half, value + half]),
        labelled: n,
        unlabelled: big_n,
        lambda: l,
        df: None,
        note: None,
    }
}

/// The 95% half-width of [`ppi_mean_t`]'s interval with `n` of the pilot's pairs labelled, λ
/// tuned for that split.
pub fn half_width(m: &Moments, n: usize) -> f64 {
    let at = m.with_labelled(n);
    let l = lambda(&at, n);
    quantile(Some(small_sample_df(n, l))) * variance(&at, n, l).sqrt()
}

/// How many labelled pairs in all make the 95% PPI++ interval at most ±`width`, labelling more
/// of the pilot's judged-only pairs: the smallest n from the pilot's own (at least 2) up to
/// every pair labelled, with z²·variance ≤ width², λ re-tuned for each split. The pilot's n
/// when it already suffices. `Err` with the narrowest half-width any n reaches when none does.
/// (λ falls as n grows, so the half-width need not fall monotonically: every n is tried, each
/// in constant time.)
pub fn labels_needed(m: &Moments, width: f64) -> Result<usize, f64> {
    let total = m.labelled + m.unlabelled;
    let mut best = f64::INFINITY;
    for n in m.labelled.max(2)..=total.max(2) {
        let h = half_width(m, n);
        if h <= width {
            return Ok(n);
        }
        best = best.min(h);
    }
    Err(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::assert_close as close;

    #[test]
    fn lambda_estimate_and_interval_by_hand() {
        // Labelled: Y = [0, 1, 1, 0], f = [0.2, 0.8, 0.6, 0.4]; unlabelled f = [0.5, 0.7].
        // mean Y 0.5, mean f 0.5; Cov⁰ = (−0.5·−0.3 + 0.5·0.3 + 0.5·0.1 + −0.5·−0.1)/4 = 0.1.
        // All six f: mean 0.5333…, Σ(f − m)² = 0.2333…, Var (÷5) = 0.046667.
        // λ = 0.1 / ((1 + 4/2)·0.046667) = 5/7.
        let (y, f, u) = ([0.0, 1.0, 1.0, 0.0], [0.2, 0.8, 0.6, 0.4], [0.5, 0.7]);
        let e = ppi_mean(&y, &f, &u);
        let all = [0.2, 0.8, 0.6, 0.4, 0.5, 0.7];
        let m = all.iter().sum::<f64>() / 6.0;
        let var_all = all.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / 5.0;
        let l = 0.1 / (3.0 * var_all);
        close(e.lambda, l);
        close(l, 5.0 / 7.0);
        // θ̂ = λ·0.6 + mean(Y − λf) = 0.6λ + 0.5 − 0.5λ = 0.5 + 0.1λ.
        close(e.value.unwrap(), 0.5 + 0.1 * l);
        // Var⁰_N(λf) = λ²·0.01, over N = 2; Y − λf = [−0.2λ, 1 − 0.8λ, 1 − 0.6λ, −0.4λ].
        let r = [-0.2 * l, 1.0 - 0.8 * l, 1.0 - 0.6 * l, -0.4 * l];
        let rm = r.iter().sum::<f64>() / 4.0;
        let rv = r.iter().map(|x| (x - rm) * (x - rm)).sum::<f64>() / 4.0;
        let half = 1.959963984540054 * (l * l * 0.01 / 2.0 + rv / 4.0).sqrt();
        let ci = e.ci.unwrap();
        close(ci[0], e.value.unwrap() - half);
        close(ci[1], e.value.unwrap() + half);
        assert_eq!((e.labelled, e.unlabelled, e.note), (4, 2, None));
    }

    #[test]
    fn lambda_is_clipped_to_zero_and_one() {
        // Predictions against the labels: Cov < 0, λ = 0, the classical estimate.
        let e = ppi_mean(&[0.0, 1.0, 0.0, 1.0], &[1.0, 0.0, 1.0, 0.0], &[0.5; 10]);
        assert_eq!(e.lambda, 0.0);
        let c = classical(&[0.0, 1.0, 0.0, 1.0]);
        assert_eq!((e.value, e.ci), (c.value, c.ci));
        // Labels that swing three times as much as the predictions: the raw ratio is above 1.
        let y = [0.0, 1.0, 0.0, 1.0, 0.0, 1.0];
        let f = [0.4, 0.6, 0.4, 0.6, 0.4, 0.6];
        let e = ppi_mean(&y, &f, &[0.45, 0.55, 0.5, 0.5, 0.45, 0.55]);
        let m = moments(&y, &f, &[0.45, 0.55, 0.5, 0.5, 0.45, 0.55]).unwrap();
        assert!(m.cov_yf / (2.0 * m.var_f_all) > 1.0);
        assert_eq!(e.lambda, 1.0);
    }

    #[test]
    fn the_classical_interval_and_the_small_cases() {
        // mean 0.5, σ⁰ = 0.5, n = 4: ± 1.96·0.25.
        let c = classical(&[0.0, 1.0, 1.0, 0.0]);
        close(c.value.unwrap(), 0.5);
        close(c.ci.unwrap()[1] - 0.5, 1.959963984540054 * 0.25);
        // n = 2 is enough for PPI++.
        let e = ppi_mean(&[0.0, 1.0], &[0.2, 0.9], &[0.5, 0.6, 0.7]);
        assert!(e.note.is_none() && e.lambda > 0.0 && e.ci.is_some());
        // n = 1: the label alone, no interval, said.
        let e = ppi_mean(&[1.0], &[0.9], &[0.5, 0.6]);
        assert_eq!((e.value, e.ci, e.lambda), (Some(1.0), None, 0.0));
        assert!(e.note.unwrap().contains("fewer than 2 labelled items"));
        // N = 0: every item labelled, the labels alone.
        let e = ppi_mean(&[0.0, 1.0], &[0.2, 0.9], &[]);
        assert_eq!(
            (e.value, e.ci),
            (classical(&[0.0, 1.0]).value, classical(&[0.0, 1.0]).ci)
        );
        assert!(e.note.unwrap().contains("every item is labelled"));
        // N = 1: Var⁰ of one unlabelled prediction is 0; the estimate stands.
        let e = ppi_mean(&[0.0, 1.0, 1.0], &[0.1, 0.9, 0.8], &[0.7]);
        assert!(e.note.is_none() && e.ci.is_some());
        // Predictions that do not vary on the labelled items: classical, said.
        let e = ppi_mean(&[0.0, 1.0, 1.0], &[0.5, 0.5, 0.5], &[0.1, 0.9]);
        assert_eq!(e.lambda, 0.0);
        assert!(e.note.unwrap().contains("do not vary"));
    }

    #[test]
    fn labels_needed_meets_the_width_and_one_fewer_does_not() {
        // A pilot of 10 labelled pairs and 200 unlabelled predictions, f close to Y.
        let y: Vec<f64> = (0..10).map(|i| f64::from(i % 2)).collect();
        let f: Vec<f64> = y
            .iter()
            .enumerate()
            .map(|(i, y)| 0.2 + 0.6 * y + 0.01 * i as f64)
            .collect();
        let u: Vec<f64> = (0..200).map(|i| 0.2 + 0.6 * f64::from(i % 2)).collect();
        let m = moments(&y, &f, &u).unwrap();
        // The small-sample interval: t on n − 2 (λ fitted), the rectifier's variance on n − 2.
        let half = |n: usize| {
            let l = lambda(&m, n);
            let df = small_sample_df(n, l);
            super::super::power::t_upper(0.025, df) * variance(&m, n, l).sqrt()
        };
        // At the pilot's own n the half-width is its interval's.
        let e = ppi_mean_t(&y, &f, &u);
        assert_eq!(e.df, Some(8.0));
        let ci = e.ci.unwrap();
        close(half(10), (ci[1] - ci[0]) / 2.0);
        close(half_width(&m, 10), half(10));
        // More labels come out of the judged-only pairs: at n labelled, 210 − n are left.
        let width = 0.1;
        assert!(half_width(&m, 10) > width);
        let n = labels_needed(&m, width).unwrap();
        assert!(n > 10, "{n}");
        assert!(
            half_width(&m, n) <= width && half_width(&m, n - 1) > width,
            "{n}"
        );
        let at = m.with_labelled(n);
        assert_eq!((at.labelled, at.unlabelled), (n, 210 - n));
        // Every pair labelled: the labels alone (λ = 0, t on 209), Var⁰(Y)·210/209 / 210.
        close(
            half_width(&m, 210),
            super::super::power::t_upper(0.025, 209.0) * (m.var_y / 209.0).sqrt(),
        );
        // A width no labelling reaches: refused with the best reachable.
        let best = labels_needed(&m, 1e-6).unwrap_err();
        let narrowest = (10..=210)
            .map(|n| half_width(&m, n))
            .fold(f64::INFINITY, f64::min);
        close(best, narrowest);
        // A width the pilot already meets needs no more labels.
        assert_eq!(labels_needed(&m, 10.0), Ok(10));
    }

    /// One study's lift pairs: 200 judged items, the first `n` labelled; `discrete` draws each
    /// arm's human composite as the mean of two annotators' pass/fail votes, else a score.
    /// The true human-unit lift is `shift`; the judges' lift is biased and noisy.
    fn lift_study(seed: u64, s: u64, n: usize, shift: f64, discrete: bool) -> [Estimate; 2] {
        let mut rng = crate::stats::rng::Rng::for_replicate(seed, s);
        let (mut y, mut f) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            let (yi, fi) = if discrete {
                let q = 0.2 + 0.6 * rng.unit_f64();
                let mut vote = |p: f64| f64::from(u8::from(rng.unit_f64() < p));
                let hb = (vote(q) + vote(q)) / 2.0;
                let ht = (vote(q + shift) + vote(q + shift)) / 2.0;
                let fb = q + 0.1 * rng.normal();
                let ft = q + shift + 0.05 + 0.1 * rng.normal();
                (ht - hb, ft - fb)
            } else {
                let yi = shift + 0.28 * rng.normal();
                (yi, 0.5 * yi + 0.1 + 0.15 * rng.normal())
            };
            y.push(yi);
            f.push(fi);
        }
        [
            ppi_mean_t(&y[..n], &f[..n], &f[n..]),
            ppi_mean(&y[..n], &f[..n], &f[n..]),
        ]
    }

    // What the lift in human units promises at the labelled counts a decision accepts (10
    // and up): its 95% interval covers the true lift in at least 94% of studies (ppi_py's
    // normal interval: 88–89% at 10), and an A/A (no true lift) is significant either way
    // in at most 5%. Scores and pass/fail votes, 6,000 seeded studies each.
    #[test]
    fn the_small_sample_interval_covers_94_percent_at_10_and_20_labels() {
        let studies = 6000;
        for discrete in [false, true] {
            for n in [10, 20] {
                let (mut covered, mut normal_covered, mut aa_errs) = (0, 0, 0);
                for s in 0..studies {
                    let [e, reference] = lift_study(41, s, n, 0.05, discrete);
                    let within = |e: &Estimate| {
                        let [lo, hi] = e.ci.unwrap();
                        usize::from(lo <= 0.05 && 0.05 <= hi)
                    };
                    // The same estimate, the same point.
                    assert_eq!(e.value, reference.value);
                    covered += within(&e);
                    normal_covered += within(&reference);
                    let [aa, _] = lift_study(43, s, n, 0.0, discrete);
                    aa_errs += usize::from(aa.p_value().unwrap() < 0.05);
                }
                let rate = |k: usize| k as f64 / studies as f64;
                eprintln!(
                    "{} labels, {}: covered {:.4} (ppi_py's normal interval: {:.4}); A/A significant {:.4}",
                    n,
                    if discrete { "pass/fail votes" } else { "scores" },
                    rate(covered),
                    rate(normal_covered),
                    rate(aa_errs)
                );
                assert!(
                    rate(covered) >= 0.94,
                    "{n} labels: covered {}",
                    rate(covered)
                );
                assert!(
                    rate(aa_errs) <= 0.05 + 0.006,
                    "{n} labels: A/A {}",
                    rate(aa_errs)
                );
            }
        }
    }
}
