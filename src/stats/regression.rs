//! Least squares with standard errors clustered by unit (the CR1 sandwich, as Stata's
//! `vce(cluster)` and R's `sandwich::vcovCL(type = "HC1")` compute it), and a t-test on one
//! coefficient with G − 1 degrees of freedom for G clusters. The bias audit
//! (docs/guides/trust.md) regresses a judge's scores on arm, length and position with it, the
//! items of one target sharing a cluster.

use super::power::{t_upper, t_upper_tail};

/// A fitted regression: its coefficients and their clustered standard errors.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub coefficients: Vec<f64>,
    pub se: Vec<f64>,
    /// Rows fitted.
    pub n: usize,
    /// Clusters.
    pub clusters: usize,
}

impl Fit {
    /// Degrees of freedom of the coefficients' t-tests: clusters − 1.
    pub fn df(&self) -> f64 {
        (self.clusters.saturating_sub(1)) as f64
    }

    /// Coefficient `j`'s two-sided (1 − `alpha`) interval.
    pub fn interval(&self, j: usize, alpha: f64) -> [f64; 2] {
        let half = t_upper(alpha / 2.0, self.df()) * self.se[j];
        [self.coefficients[j] - half, self.coefficients[j] + half]
    }

    /// Coefficient `j`'s two-sided p-value against 0.
    pub fn p(&self, j: usize) -> f64 {
        if self.se[j] == 0.0 {
            return if self.coefficients[j] == 0.0 {
                1.0
            } else {
                0.0
            };
        }
        (2.0 * t_upper_tail((self.coefficients[j] / self.se[j]).abs(), self.df())).min(1.0)
    }
}

/// Fits `y` on the columns of `x` (each row's regressors, an intercept included by the
/// caller), clustering by `cluster` (any ids). `None` with fewer than 2 clusters, fewer rows
/// than regressors plus one, or collinear columns.
pub fn clustered<C: Eq + std::hash::Hash>(x: &[Vec<f64>], y: &[f64], cluster: &[C]) -> Option<Fit> {
    let n = y.len();
    let k = x.first()?.len();
    if n <= k || x.len() != n || cluster.len() != n {
        return None;
    }
    let mut xtx = vec![vec![0.0; k]; k];
    let mut xty = vec![0.0; k];
    for (row, &yi) in x.iter().zip(y) {
        for a in 0..k {
            xty[a] += row[a] * yi;
            for b in 0..k {
                xtx[a][b] += row[a] * row[b];
            }
        }
    }
    let bread = invert(&xtx)?;
    let beta: Vec<f64> = (0..k)
        .map(|a| (0..k).map(|b| bread[a][b] * xty[b]).sum())
        .collect();
    // Per cluster, the sum of each row's regressors times its residual.
    let mut index: std::collections::HashMap<&C, usize> = std::collections::HashMap::new();
    let mut scores: Vec<Vec<f64>> = Vec::new();
    for ((row, &yi), c) in x.iter().zip(y).zip(cluster) {
        let fitted: f64 = row.iter().zip(&beta).map(|(a, b)| a * b).sum();
        let e = yi - fitted;
        let g = *index.entry(c).or_insert_with(|| {
            scores.push(vec![0.0; k]);
            scores.len() - 1
        });
        for a in 0..k {
            scores[g][a] += row[a] * e;
        }
    }
    let g = scores.len();
    if g < 2 {
        return None;
    }
    let mut meat = vec![vec![0.0; k]; k];
    for s in &scores {
        for a in 0..k {
            for b in 0..k {
                meat[a][b] += s[a] * s[b];
            }
        }
    }
    let scale = (g as f64 / (g - 1) as f64) * ((n - 1) as f64 / (n - k) as f64);
    let se = (0..k)
        .map(|j| {
            let v: f64 = (0..k)
                .flat_map(|a| (0..k).map(move |b| (a, b)))
                .map(|(a, b)| bread[j][a] * meat[a][b] * bread[b][j])
                .sum();
            (scale * v).max(0.0).sqrt()
        })
        .collect();
    Some(Fit {
        coefficients: beta,
        se,
        n,
        clusters: g,
    })
}

/// The inverse of a small symmetric matrix by Gauss–Jordan elimination with partial pivoting;
/// `None` when it is singular (to a relative 1e-12).
fn invert(m: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
    let k = m.len();
    let scale = m
        .iter()
        .flatten()
        .fold(0.0_f64, |a, b| a.max(b.abs()))
        .max(f64::MIN_POSITIVE);
    let mut a: Vec<Vec<f64>> = m
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut r = row.clone();
            r.extend((0..k).map(|j| f64::from(u8::from(i == j))));
            r
        })
        .collect();
    for col in 0..k {
        let pivot = (col..k).max_by(|&x, &y| a[x][col].abs().total_cmp(&a[y][col].abs()))?;
        if a[pivot][col].abs() <= 1e-12 * scale {
            return None;
        }
        a.swap(col, pivot);
        let p = a[col][col];
        for v in a[col].iter_mut() {
            *v /= p;
        }
        for r in 0..k {
            if r != col {
                let f = a[r][col];
                if f != 0.0 {
                    let pivot_row = a[col].clone();
                    for (v, pv) in a[r].iter_mut().zip(pivot_row) {
                        *v -= f * pv;
                    }
                }
            }
        }
    }
    Some(a.into_iter().map(|r| r[k..].to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Hand-worked: y = 1 + 2x exactly recovers its coefficients with zero error.
    #[test]
    fn an_exact_line_is_recovered() {
        let x: Vec<Vec<f64>> = (0..6).map(|i| vec![1.0, i as f64]).collect();
        let y: Vec<f64> = (0..6).map(|i| 1.0 + 2.0 * i as f64).collect();
        let fit = clustered(&x, &y, &[0, 0, 1, 1, 2, 2]).unwrap();
        assert!((fit.coefficients[0] - 1.0).abs() < 1e-12);
        assert!((fit.coefficients[1] - 2.0).abs() < 1e-12);
        assert!(fit.se[1] < 1e-9);
        assert_eq!(fit.clusters, 3);
        assert_eq!(fit.df(), 2.0);
    }

    // Hand-worked CR1, one regressor (the mean) with clusters {1, 3} and {2, 6}: the mean is 3;
    // residuals −2, 0 | −1, 3; cluster score sums −2 and 2; meat 8; bread 1/4;
    // V = (2/1)·(3/3)·(1/4)·8·(1/4) = 1, so se = 1.
    #[test]
    fn the_sandwich_matches_a_hand_worked_case() {
        let x = vec![vec![1.0]; 4];
        let y = [1.0, 3.0, 2.0, 6.0];
        let fit = clustered(&x, &y, &["a", "a", "b", "b"]).unwrap();
        assert_eq!(fit.coefficients, vec![3.0]);
        assert!((fit.se[0] - 1.0).abs() < 1e-12, "{}", fit.se[0]);
        // t = 3 on 1 df: p = 2·(1/2 − atan(3)/π).
        let p = 1.0 - 2.0 * 3f64.atan() / std::f64::consts::PI;
        assert!((fit.p(0) - p).abs() < 1e-9, "{} {p}", fit.p(0));
    }

    #[test]
    fn collinear_columns_or_one_cluster_fit_nothing() {
        let x: Vec<Vec<f64>> = (0..5)
            .map(|i| vec![1.0, i as f64, 2.0 * i as f64])
            .collect();
        assert!(clustered(&x, &[1.0, 2.0, 3.0, 4.0, 5.0], &[0, 1, 2, 3, 4]).is_none());
        let x: Vec<Vec<f64>> = (0..5).map(|i| vec![1.0, i as f64]).collect();
        assert!(clustered(&x, &[1.0, 2.0, 3.0, 4.0, 6.0], &[0; 5]).is_none());
    }
}
