//! Seeded pseudo-random numbers for the bootstraps.
//!
//! Every bootstrap replicate draws from its own generator, derived from `(seed, replicate)`
//! alone. Which thread computes a replicate, and in what order, therefore cannot change a single
//! number: the same seed gives the same interval on one core or many. The generator is
//! xoshiro256++ seeded through SplitMix64 (Blackman & Vigna), implemented here so that the
//! stream, and so every published interval, does not change with a dependency upgrade.

/// xoshiro256++ state. Never all zero (SplitMix64 output cannot be four zeros in a row).
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// The generator of one bootstrap replicate: a function of the seed and the index only.
    pub fn for_replicate(seed: u64, replicate: u64) -> Self {
        let mut mix = seed;
        let base = splitmix64(&mut mix);
        let mut state = base ^ replicate.wrapping_mul(0xD1B5_4A32_D192_ED03);
        let s = [
            splitmix64(&mut state),
            splitmix64(&mut state),
            splitmix64(&mut state),
            splitmix64(&mut state),
        ];
        Rng { s }
    }

    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[0]
            .wrapping_add(self.s[3])
            .rotate_left(23)
            .wrapping_add(self.s[0]);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform integer in `0..n` without modulo bias (Lemire's multiply-and-reject).
    /// `n` must be at least 1.
    pub fn below(&mut self, n: u64) -> u64 {
        debug_assert!(n > 0);
        let mut m = u128::from(self.next_u64()) * u128::from(n);
        let mut low = m as u64;
        if low < n {
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = u128::from(self.next_u64()) * u128::from(n);
                low = m as u64;
            }
        }
        (m >> 64) as u64
    }

    /// Uniform float in [0, 1) with 53 random bits.
    pub fn unit_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A standard normal draw (Box–Muller, from two uniform draws), for seeded simulations.
    pub fn normal(&mut self) -> f64 {
        let u = self.unit_f64().max(f64::MIN_POSITIVE);
        let v = self.unit_f64();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}

/// So that distributions of `rand_distr` (the bootstrap's binomial) draw from this generator.
impl rand_core::TryRng for Rng {
    type Error = std::convert::Infallible;

    fn try_next_u32(&mut self) -> Result<u32, Self::Error> {
        Ok((self.next_u64() >> 32) as u32)
    }

    fn try_next_u64(&mut self) -> Result<u64, Self::Error> {
        Ok(self.next_u64())
    }

    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Self::Error> {
        for chunk in dst.chunks_mut(8) {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes()[..chunk.len()]);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_and_replicate_give_the_same_stream() {
        let mut a = Rng::for_replicate(7, 3);
        let mut b = Rng::for_replicate(7, 3);
        for _ in 0..100 {
            assert_eq!(a.next_u64(), b.next_u64());
        }
    }

    #[test]
    fn replicates_and_seeds_differ() {
        let first = |seed, rep| Rng::for_replicate(seed, rep).next_u64();
        assert_ne!(first(7, 0), first(7, 1));
        assert_ne!(first(7, 0), first(8, 0));
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = Rng::for_replicate(1, 1);
        let mut seen = [0usize; 5];
        for _ in 0..10_000 {
            let x = rng.below(5) as usize;
            seen[x] += 1;
        }
        // Each of 5 outcomes expected 2000 times; 1800..2200 is > 5 standard deviations wide.
        assert!(seen.iter().all(|&c| (1800..2200).contains(&c)), "{seen:?}");
    }

    #[test]
    fn unit_f64_is_in_the_half_open_unit_interval() {
        let mut rng = Rng::for_replicate(2, 9);
        for _ in 0..10_000 {
            let x = rng.unit_f64();
            assert!((0.0..1.0).contains(&x));
        }
    }
}
