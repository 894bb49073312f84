// SPDX-License-Identifier: GPL-2.0

//! The one pseudo-random generator of the tree: xorshift64* (Vigna, 2016), seeded through one
//! round of splitmix64 so that any seed, 0 and nearby ones included, gives its own stream.
//!
//! Small, fast and reproducible: for randomized tests and workloads, never for anything that
//! must be unpredictable.

/// xorshift64*.
///
/// # Invariants
///
/// The state is never 0 (xorshift's one fixed point).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from any seed.
    pub const fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        // INVARIANT: the low bit is set.
        Rng((z ^ (z >> 31)) | 1)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A value in `lo..lo + spread` (`lo` itself if `spread` is 0), wrapping past `u64::MAX`.
    /// The modulo bias, below `spread / 2^64`, is irrelevant here.
    pub fn within(&mut self, lo: u64, spread: u64) -> u64 {
        match spread {
            0 => lo,
            _ => lo.wrapping_add(self.next_u64() % spread),
        }
    }

    /// A value in `lo..hi` (`lo` itself if the range is empty).
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        self.within(lo, hi.saturating_sub(lo))
    }

    /// Shuffles `v` uniformly (Fisher-Yates).
    pub fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            let j = self.range(0, i as u64 + 1) as usize;
            v.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let (mut a, mut b, mut c) = (Rng::new(0), Rng::new(0), Rng::new(1));
        for _ in 0..1000 {
            let x = a.next_u64();
            assert_eq!(x, b.next_u64());
            assert_ne!(x, c.next_u64());
        }
    }

    #[test]
    fn within_stays_within() {
        let mut r = Rng::new(7);
        let mut seen = [false; 10];
        for _ in 0..10_000 {
            let x = r.within(5, 10);
            assert!((5..15).contains(&x));
            seen[(x - 5) as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(r.within(9, 0), 9);
        let x = r.within(u64::MAX, 2);
        assert!(x == u64::MAX || x == 0);
    }
}
