//! Calibration of confidence against outcome (docs/guides/alpha-and-calibration.md): ECE, MCE, Brier, AUROC and the
//! reliability-diagram bins.
//!
//! Bins are equal-width and right-closed, as in Guo et al. (2017) and scikit-learn's
//! `calibration_curve`: bin m (1..M) holds p in ((m−1)/M, m/M], and p = 0 falls in bin 1. The
//! bin is decided on p rounded to 9 decimal places (and the scaled position rounded again), so
//! that 0.7, 0.9 and 1.0 land where the rule says despite binary floating point. AUROC ranks the
//! raw values: it has no edges to decide, and rounding would turn correctly ordered saturated
//! probabilities (0.99999999995 against 0.9999999999999) into half-credit ties.

use serde::{Deserialize, Serialize};

/// One bin of the reliability diagram.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bin {
    pub lower: f64,
    pub upper: f64,
    pub count: usize,
    /// Mean confidence of the bin's predictions; `None` for an empty bin.
    pub mean_confidence: Option<f64>,
    /// Share of the bin's predictions that were correct; `None` for an empty bin.
    pub accuracy: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Calibration {
    pub n: usize,
    pub ece: f64,
    pub mce: f64,
    pub brier: f64,
    /// `None` when only one outcome occurs.
    pub auroc: Option<f64>,
    pub bins: Vec<Bin>,
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("no predictions to calibrate")]
    Empty,
    #[error("the number of bins must be at least 1")]
    NoBins,
    #[error("{confidences} confidences but {outcomes} outcomes")]
    LengthMismatch { confidences: usize, outcomes: usize },
    #[error("confidence {value} at position {index} is not a number in [0, 1]")]
    OutOfRange { index: usize, value: f64 },
}

/// calibench's equal-width bins, wherever it bins confidences: a run's query calibration, a
/// sweep's ECE and `calibench calibrate` unless `--bins` says otherwise.
pub const BINS: usize = 10;

/// One bin's sums: how many predictions, their summed confidence and how many were right,
/// each counted as often as it is drawn (a bootstrap weights them).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BinSums {
    pub count: f64,
    pub confidence: f64,
    pub hits: f64,
}

/// The expected calibration error (Guo et al. 2017) of `n` predictions from their bins' sums:
/// each bin's gap |accuracy − mean confidence| weighted by its share of the predictions, which
/// is Σ |hits − summed confidence| / n over the bins that hold any. The one ECE: `calibrate`'s,
/// the bootstraps' and a sweep's figures all come here.
pub fn ece(bins: impl IntoIterator<Item = BinSums>, n: f64) -> f64 {
    bins.into_iter()
        .filter(|b| b.count > 0.0)
        .map(|b| (b.hits - b.confidence).abs() / n)
        .sum()
}

/// Rounds to 9 decimal places: the resolution at which calibench compares confidences.
pub fn round9(x: f64) -> f64 {
    (x * 1e9).round() / 1e9
}

/// Zero-based index of p's bin among `bins` equal-width right-closed bins.
pub fn bin_index(p: f64, bins: usize) -> usize {
    let scaled = round9(round9(p) * bins as f64);
    (scaled.ceil() as usize).clamp(1, bins) - 1
}

/// Calibration of `confidence` against `correct` with `bins` equal-width bins.
pub fn calibrate(
    confidence: &[f64],
    correct: &[bool],
    bins: usize,
) -> Result<Calibration, CalibrationError> {
    if confidence.len() != correct.len() {
        return Err(CalibrationError::LengthMismatch {
            confidences: confidence.len(),
            outcomes: correct.len(),
        });
    }
    if bins == 0 {
        return Err(CalibrationError::NoBins);
    }
    if confidence.is_empty() {
        return Err(CalibrationError::Empty);
    }
    if let Some((index, &value)) = confidence
        .iter()
        .enumerate()
        .find(|(_, p)| !(0.0..=1.0).contains(*p))
    {
        return Err(CalibrationError::OutOfRange { index, value });
    }

    let n = confidence.len();
    let mut count = vec![0usize; bins];
    let mut conf_sum = vec![0.0f64; bins];
    let mut hits = vec![0usize; bins];
    let mut brier = 0.0;
    for (&p, &y) in confidence.iter().zip(correct) {
        let b = bin_index(p, bins);
        count[b] += 1;
        conf_sum[b] += p;
        hits[b] += usize::from(y);
        brier += (p - f64::from(u8::from(y))).powi(2);
    }

    let sums = (0..bins).map(|b| BinSums {
        count: count[b] as f64,
        confidence: conf_sum[b],
        hits: hits[b] as f64,
    });
    let ece = ece(sums, n as f64);
    let mut mce = 0.0f64;
    let mut out = Vec::with_capacity(bins);
    for b in 0..bins {
        let (mean_confidence, accuracy) = if count[b] == 0 {
            (None, None)
        } else {
            let c = count[b] as f64;
            let (conf, acc) = (conf_sum[b] / c, hits[b] as f64 / c);
            mce = mce.max((acc - conf).abs());
            (Some(conf), Some(acc))
        };
        out.push(Bin {
            lower: b as f64 / bins as f64,
            upper: (b + 1) as f64 / bins as f64,
            count: count[b],
            mean_confidence,
            accuracy,
        });
    }

    Ok(Calibration {
        n,
        ece,
        mce,
        brier: brier / n as f64,
        auroc: auroc(confidence, correct),
        bins: out,
    })
}

/// P(p of a correct > p of an incorrect) + ½ P(tie), by ranks of the raw values (as
/// scikit-learn's `roc_auc_score`); `None` when only one outcome occurs.
pub fn auroc(confidence: &[f64], correct: &[bool]) -> Option<f64> {
    let mut pairs: Vec<(f64, bool)> = confidence
        .iter()
        .copied()
        .zip(correct.iter().copied())
        .collect();
    pairs.sort_unstable_by(|a, b| a.0.total_cmp(&b.0));
    let positives = correct.iter().filter(|&&y| y).count() as f64;
    let negatives = correct.len() as f64 - positives;
    if positives == 0.0 || negatives == 0.0 {
        return None;
    }
    let (mut wins, mut negatives_below) = (0.0, 0.0);
    let mut i = 0;
    while i < pairs.len() {
        let mut j = i;
        let (mut pos, mut neg) = (0.0, 0.0);
        while j < pairs.len() && pairs[j].0 == pairs[i].0 {
            if pairs[j].1 {
                pos += 1.0;
            } else {
                neg += 1.0;
            }
            j += 1;
        }
        wins += pos * negatives_below + 0.5 * pos * neg;
        negatives_below += neg;
        i = j;
    }
    Some(wins / (positives * negatives))
}

#[cfg(test)]
mod tests {
    use super::*;

    // REFERENCE.md test vector (scikit-learn and by hand).
    const CONF: [f64; 20] = [
        0.95, 0.92, 0.88, 0.85, 0.83, 0.77, 0.74, 0.72, 0.66, 0.64, 0.58, 0.55, 0.52, 0.45, 0.42,
        0.35, 0.33, 0.25, 0.15, 0.05,
    ];
    const CORRECT: [u8; 20] = [1, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 1, 0, 0, 0, 0];

    fn correct() -> Vec<bool> {
        CORRECT.iter().map(|&y| y == 1).collect()
    }

    #[test]
    fn reference_vector_ten_bins() {
        let c = calibrate(&CONF, &correct(), 10).unwrap();
        assert!((c.ece - 0.1605).abs() < 1e-9, "ece {}", c.ece);
        assert!((c.mce - 0.435).abs() < 1e-9, "mce {}", c.mce);
        assert!((c.brier - 0.184295).abs() < 1e-9, "brier {}", c.brier);
        assert!((c.auroc.unwrap() - 0.81).abs() < 1e-9);
        let counts: Vec<usize> = c.bins.iter().map(|b| b.count).collect();
        assert_eq!(counts, [1, 1, 1, 2, 2, 3, 2, 3, 3, 2]);
        assert_eq!(c.n, 20);
    }

    #[test]
    fn reference_vector_fifteen_bins() {
        let c = calibrate(&CONF, &correct(), 15).unwrap();
        assert!((c.ece - 0.2465).abs() < 1e-9, "ece {}", c.ece);
        assert!((c.mce - 0.65).abs() < 1e-9, "mce {}", c.mce);
    }

    #[test]
    fn bins_are_right_closed_and_zero_joins_the_first() {
        assert_eq!(bin_index(0.0, 10), 0);
        assert_eq!(bin_index(0.1, 10), 0);
        assert_eq!(bin_index(0.1000001, 10), 1);
        assert_eq!(bin_index(0.7, 10), 6); // 0.7 × 10 = 7.000000000000001 in binary floating point
        assert_eq!(bin_index(0.9, 10), 8);
        assert_eq!(bin_index(1.0, 10), 9);
        assert_eq!(bin_index(0.1 + 0.2, 10), 2); // 0.30000000000000004 is 0.3
        assert_eq!(bin_index(0.55 + 0.1, 20), 12); // 0.65 closes bin 13 of 20
    }

    #[test]
    fn auroc_counts_ties_as_half() {
        assert_eq!(auroc(&[0.5, 0.5], &[true, false]), Some(0.5));
        assert_eq!(auroc(&[0.9, 0.1], &[true, false]), Some(1.0));
        assert_eq!(auroc(&[0.1, 0.9], &[true, false]), Some(0.0));
        assert_eq!(auroc(&[0.3, 0.4], &[true, true]), None);
    }

    // Regression (issue 18): saturated probabilities that agree to 9 decimals are still ordered.
    // GaussianNB on breast-cancer gave 0.9693 here where scikit-learn gives 0.9811.
    #[test]
    fn auroc_ranks_raw_saturated_probabilities() {
        let p = [0.99999999995, 0.9999999999999, 0.999999999999, 1.0 - 1e-15];
        assert_eq!(auroc(&p, &[false, true, false, true]), Some(1.0));
        assert_eq!(auroc(&p, &[true, false, true, false]), Some(0.0));
        // Exact ties stay half credit, -0.0 and 0.0 included.
        assert_eq!(auroc(&[1e-12, 1e-12], &[true, false]), Some(0.5));
        assert_eq!(auroc(&[-0.0, 0.0, 0.5], &[true, false, true]), Some(0.75));
        // The bins still decide on rounded values: both saturated values share the top bin.
        let c = calibrate(&p, &[false, true, false, true], 10).unwrap();
        assert_eq!(c.bins[9].count, 4);
        assert_eq!(c.auroc, Some(1.0));
    }

    #[test]
    fn empty_bins_have_no_mean() {
        let c = calibrate(&[0.05, 0.95], &[false, true], 10).unwrap();
        assert_eq!(c.bins[4].count, 0);
        assert_eq!(c.bins[4].mean_confidence, None);
        assert!((c.ece - 0.05).abs() < 1e-12);
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert_eq!(calibrate(&[], &[], 10), Err(CalibrationError::Empty));
        assert_eq!(calibrate(&[0.5], &[true], 0), Err(CalibrationError::NoBins));
        assert!(matches!(
            calibrate(&[0.5, 1.5], &[true, false], 10),
            Err(CalibrationError::OutOfRange { index: 1, .. })
        ));
        assert!(matches!(
            calibrate(&[f64::NAN], &[true], 10),
            Err(CalibrationError::OutOfRange { index: 0, .. })
        ));
        assert!(matches!(
            calibrate(&[0.5], &[true, false], 10),
            Err(CalibrationError::LengthMismatch { .. })
        ));
    }
}
