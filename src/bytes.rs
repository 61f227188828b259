//! The first byte of a small set in a text, found sixteen bytes at a time where the CPU compares
//! sixteen at once (every x86-64 has SSE2) and eight at a time elsewhere. The JSON Lines scanner
//! looks for where a string's plain run ends (a quote, a backslash or a control byte), the CSV
//! writer for a byte that makes a text quoted (`,` `"` `\n` `\r`): one search, two sets.

/// Up to four bytes, and optionally every control byte (below 0x20), looked for in a text.
#[derive(Clone, Copy, Debug)]
pub struct ByteSet {
    /// The bytes, the first repeated where fewer than four are given (a byte compared twice is
    /// found once).
    bytes: [u8; 4],
    controls: bool,
    /// Per byte value, whether it is in the set: the last few bytes of a text are looked up.
    table: [bool; 256],
}

impl ByteSet {
    /// The set of `bytes` (one to four of them), and of every byte below 0x20 if `controls`.
    pub const fn new(bytes: &[u8], controls: bool) -> Self {
        assert!(!bytes.is_empty() && bytes.len() <= 4, "one to four bytes");
        let mut all = [bytes[0]; 4];
        let mut k = 1;
        while k < bytes.len() {
            all[k] = bytes[k];
            k += 1;
        }
        let mut table = [false; 256];
        let mut b = 0;
        while b < 256 {
            let byte = b as u8;
            table[b] = (controls && byte < 0x20)
                || byte == all[0]
                || byte == all[1]
                || byte == all[2]
                || byte == all[3];
            b += 1;
        }
        Self {
            bytes: all,
            controls,
            table,
        }
    }

    /// Whether `b` is in the set.
    pub const fn contains(&self, b: u8) -> bool {
        self.table[b as usize]
    }

    /// Where the first byte of the set sits in `text` from `from` on (`None` if there is none).
    /// Inlined, so that a set given as a constant is compiled into each search.
    #[inline(always)]
    pub fn find(&self, text: &[u8], from: usize) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        return self.find_sse2(text, from);
        #[cfg(not(target_arch = "x86_64"))]
        self.find_words(text, from)
    }

    /// [`ByteSet::find`] sixteen bytes at a time, then [`ByteSet::find_words`] for the rest.
    /// (Not a `#[target_feature]` function, which would not be inlined: SSE2 is part of every
    /// x86-64 target, so the intrinsics' requirement holds wherever this code runs.)
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn find_sse2(&self, text: &[u8], mut i: usize) -> Option<usize> {
        use std::arch::x86_64::{
            __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8,
            _mm_or_si128, _mm_set1_epi8,
        };
        let [a, b, c, d] = self.bytes;
        // SAFETY: the intrinsics need SSE2, which every x86-64 CPU has; a
        // load reads sixteen bytes of a `chunk` that holds them, and needs no alignment.
        let (a, b, c, d, below) = unsafe {
            (
                _mm_set1_epi8(a as i8),
                _mm_set1_epi8(b as i8),
                _mm_set1_epi8(c as i8),
                _mm_set1_epi8(d as i8),
                _mm_set1_epi8(0x1f),
            )
        };
        while let Some(chunk) = text.get(i..i + 16) {
            // SAFETY: as above.
            let mask = unsafe {
                let x = _mm_loadu_si128(chunk.as_ptr().cast::<__m128i>());
                let mut marks = _mm_or_si128(
                    _mm_or_si128(_mm_cmpeq_epi8(x, a), _mm_cmpeq_epi8(x, b)),
                    _mm_or_si128(_mm_cmpeq_epi8(x, c), _mm_cmpeq_epi8(x, d)),
                );
                if self.controls {
                    // A byte is at most 0x1f exactly when the smaller of it and 0x1f is itself.
                    marks = _mm_or_si128(marks, _mm_cmpeq_epi8(_mm_min_epu8(x, below), x));
                }
                _mm_movemask_epi8(marks)
            };
            if mask != 0 {
                return Some(i + mask.trailing_zeros() as usize);
            }
            i += 16;
        }
        self.find_words(text, i)
    }

    /// [`ByteSet::find`] eight bytes at a time: a byte equal to `c` is a zero byte of
    /// `x ^ c…c`, which `(y - 1…1) & !y & 80…80` marks, and a byte below 0x20 is marked by
    /// `(x - 20…20) & !x & 80…80`. Either test can mark a byte above one it rightly marks (a
    /// borrow runs upwards), never below, so the lowest mark is the first such byte.
    #[inline(always)]
    fn find_words(&self, text: &[u8], mut i: usize) -> Option<usize> {
        const ONES: u64 = u64::from_le_bytes([1; 8]);
        const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
        while let Some(word) = text.get(i..i + 8) {
            let x = u64::from_le_bytes(word.try_into().expect("eight bytes"));
            let equal = |c: u8| {
                let y = x ^ (ONES * u64::from(c));
                y.wrapping_sub(ONES) & !y & HIGH
            };
            let mut marks = equal(self.bytes[0])
                | equal(self.bytes[1])
                | equal(self.bytes[2])
                | equal(self.bytes[3]);
            if self.controls {
                marks |= x.wrapping_sub(ONES * 0x20) & !x & HIGH;
            }
            if marks != 0 {
                return Some(i + (marks.trailing_zeros() / 8) as usize);
            }
            i += 8;
        }
        let rest = text.get(i..)?;
        rest.iter().position(|&b| self.contains(b)).map(|at| i + at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Both searches find what a byte-at-a-time one finds, for a set with control bytes and one
    // without, of one to four bytes: every byte value at every place of a text long enough for
    // whole chunks, whole words and a remainder, after a start that may fall anywhere, with a
    // byte of the set after the first that must not move it.
    #[test]
    fn the_first_byte_of_the_set_is_found_and_no_other() {
        let sets = [
            ByteSet::new(b"\"\\", true),
            ByteSet::new(b",\"\n\r", false),
            ByteSet::new(b"x", false),
            ByteSet::new(b"\xff\x00\x80", true),
        ];
        for set in sets {
            let naive = |b: &[u8], i: usize| {
                b.get(i..)?
                    .iter()
                    .position(|&c| set.contains(c))
                    .map(|at| i + at)
            };
            let later = (0..=255u8).find(|&b| set.contains(b)).unwrap();
            for len in [0, 1, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 47] {
                for at in 0..len {
                    for byte in 0..=255u8 {
                        let mut b = vec![b'a'; len];
                        b[at] = byte;
                        if at + 2 < len {
                            b[at + 2] = later;
                        }
                        for start in 0..=at.min(18) {
                            let want = naive(&b, start);
                            assert_eq!(set.find(&b, start), want, "{set:?} {b:?} from {start}");
                            assert_eq!(set.find_words(&b, start), want, "{set:?} {b:?} {start}");
                        }
                    }
                }
            }
            assert_eq!(set.find(b"aaa", 3), None);
            assert_eq!(set.find(b"aaa", 4), None);
        }
    }

    #[test]
    fn membership_is_the_given_bytes_and_the_controls_when_asked() {
        let json = ByteSet::new(b"\"\\", true);
        let csv = ByteSet::new(b",\"\n\r", false);
        for b in 0..=255u8 {
            assert_eq!(json.contains(b), b == b'"' || b == b'\\' || b < 0x20, "{b}");
            assert_eq!(
                csv.contains(b),
                matches!(b, b',' | b'"' | b'\n' | b'\r'),
                "{b}"
            );
        }
    }
}
