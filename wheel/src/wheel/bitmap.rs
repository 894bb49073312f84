// SPDX-License-Identifier: GPL-2.0

//! The occupancy bitmap of the wheels (schemes 4 to 7): one bit per
//! slot, set while the slot's list is not empty — the "busy" marks of the paper's Appendix A.
//!
//! It costs a bit per slot (1/64 of the list heads) and one bit operation when a list becomes
//! empty or non-empty, and lets a scheme find its next busy slot 64 slots at a time, which is
//! what their `next_expiry` and tickless clocks need. Above the slots' bits sit summary levels,
//! a bit for each word below that is not 0, up to a single word, so that the next busy slot is
//! found in a few word reads however many slots there are and however few are busy (a wheel
//! of 2^24 slots has four levels): the search runs under a lock with interrupts masked. Scheme
//! 7 reads the slots' bits a word at a time: one word per 64-slot level. The wheels keep it in
//! step with their lists through `slots.rs`.

use super::{Error, Storage};

/// Bits per `Occupancy` word.
const WORD_BITS: u32 = u64::BITS;

/// The most levels: enough for `u32::MAX` bits (64^6 > 2^32).
const MAX_LEVELS: usize = 6;

/// The most words one search for the next busy slot reads (`Occupancy::next_set_counted`):
/// up and down every level, twice (the second search from bit 0, once the first found nothing
/// before the end). 22 for the most levels; 14 for the four of 2^24 slots.
pub const MAX_SEARCH_WORDS: usize = 2 * (2 * MAX_LEVELS - 1);

/// One bit per wheel slot, set while the slot's list is not empty, with its summary levels.
///
/// # Invariants
///
/// - Bits at or beyond the slot count it was created for are never set (callers only set bits
///   of slots they have).
/// - Level `l + 1` has bit `w` set exactly when word `w` of level `l` is not 0; the last level
///   is one word.
pub(super) struct Occupancy<S: Storage> {
    /// Every level's words, level 0 (the slots) first.
    words: S::Buf<u64>,
    /// Where each level starts in `words`, and (one past the last) where they end.
    starts: [usize; MAX_LEVELS + 1],
    /// How many levels there are.
    levels: usize,
}

/// The word holding bit `bit`.
fn word_of(bit: u32) -> usize {
    (bit / WORD_BITS) as usize
}

/// Bit `bit` within its word.
fn mask_of(bit: u32) -> u64 {
    1 << (bit % WORD_BITS)
}

impl<S: Storage> Occupancy<S> {
    /// A bitmap of `bits` clear bits.
    pub(super) fn new(bits: u32) -> Result<Self, Error> {
        let mut starts = [0; MAX_LEVELS + 1];
        let mut levels = 0;
        let mut n = bits.div_ceil(WORD_BITS).max(1) as usize;
        loop {
            starts[levels + 1] = starts[levels] + n;
            levels += 1;
            if n == 1 {
                break;
            }
            n = n.div_ceil(WORD_BITS as usize);
        }
        Ok(Occupancy {
            words: S::alloc(starts[levels], |_| 0)?,
            starts,
            levels,
        })
    }

    /// Marks `bit` busy.
    #[inline(always)]
    pub(super) fn set(&mut self, bit: u32) {
        let w = &mut self.words[word_of(bit)];
        let was = *w;
        *w |= mask_of(bit);
        if was == 0 && self.levels > 1 {
            self.mark_above(bit / WORD_BITS, true);
        }
    }

    /// Marks `bit` idle.
    #[inline(always)]
    pub(super) fn clear(&mut self, bit: u32) {
        let w = &mut self.words[word_of(bit)];
        *w &= !mask_of(bit);
        if *w == 0 && self.levels > 1 {
            self.mark_above(bit / WORD_BITS, false);
        }
    }

    /// Marks bit `bit` of level 1 busy (a word below became busy) or idle (one became idle),
    /// and the levels above as far as a word's emptiness changes.
    #[inline(never)]
    fn mark_above(&mut self, bit: u32, busy: bool) {
        let mut bit = bit;
        for l in 1..self.levels {
            let w = &mut self.words[self.starts[l] + word_of(bit)];
            let was = *w;
            match busy {
                true => *w |= mask_of(bit),
                false => *w &= !mask_of(bit),
            }
            // The word's emptiness unchanged: nothing above changes.
            if (was == 0) == (*w == 0) {
                return;
            }
            bit /= WORD_BITS;
        }
    }

    /// The first set bit at or after `from`, going on from bit 0 past the last one and so
    /// wrapping round to just before `from`; `None` if no bit is set. At most two searches of
    /// a few word reads each, one a level up and down.
    #[cfg(test)]
    pub(super) fn next_set(&self, from: u32) -> Option<u32> {
        self.next_set_counted(from, &mut 0)
    }

    /// [`Self::next_set`], adding the words it reads to `reads`: at most `2 * levels - 1` for
    /// each of its two searches (14 in all for the four levels of 2^24 bits), so that a caller
    /// under a work budget can charge them.
    pub(super) fn next_set_counted(&self, from: u32, reads: &mut usize) -> Option<u32> {
        self.first_from(from, reads)
            .or_else(|| self.first_from(0, reads))
    }

    /// The first set bit at or after `from`, without wrapping; the words read added to `reads`.
    fn first_from(&self, from: u32, reads: &mut usize) -> Option<u32> {
        // Up: the first level whose word at the position, masked below it, is not 0; the
        // position a level up is the next word's.
        let mut level = 0;
        let mut at = from;
        let found = loop {
            let w = word_of(at);
            if level == self.levels || self.starts[level] + w >= self.starts[level + 1] {
                return None;
            }
            *reads += 1;
            let word = self.words[self.starts[level] + w] & (u64::MAX << (at % WORD_BITS));
            if word != 0 {
                break w as u32 * WORD_BITS + word.trailing_zeros();
            }
            at = w as u32 + 1;
            level += 1;
        };
        // Down: each level's set bit names a word below that is not 0; its lowest bit.
        let mut bit = found;
        while level > 0 {
            level -= 1;
            *reads += 1;
            let word = self.words[self.starts[level] + bit as usize];
            bit = bit * WORD_BITS + word.trailing_zeros();
        }
        Some(bit)
    }

    /// Word `w` of the slots' bits: bits `64 w .. 64 w + 64`.
    pub(super) fn word(&self, w: usize) -> u64 {
        self.words[w]
    }

    /// The words of the slots' bits that are not 0: bit `w` for word `w`, for a bitmap of at
    /// most 4,096 slots (64 words, one summary word above them).
    pub(super) fn busy_words(&self) -> u64 {
        debug_assert!(
            self.levels == 2,
            "{} levels have no one summary word",
            self.levels
        );
        self.words[self.starts[1]]
    }

    /// Bytes allocated for the bitmap, summary levels included.
    pub(super) fn memory_bytes(&self) -> usize {
        self.words.len() * core::mem::size_of::<u64>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HostStorage;

    #[test]
    fn occupancy_finds_the_next_busy_bit_wrapping() {
        let mut o = Occupancy::<HostStorage>::new(130).unwrap();
        // Three words of slots and one above them.
        assert_eq!((o.words.len(), o.levels), (4, 2));
        assert_eq!(o.next_set(0), None);
        o.set(5);
        o.set(129);
        assert_eq!(o.next_set(0), Some(5));
        assert_eq!(o.next_set(5), Some(5));
        assert_eq!(o.next_set(6), Some(129));
        assert_eq!(o.next_set(129), Some(129));
        o.clear(129);
        assert_eq!(o.next_set(6), Some(5));
        assert_eq!(o.next_set(64), Some(5));
        o.set(3);
        assert_eq!(o.next_set(4), Some(5));
        o.clear(5);
        assert_eq!(o.next_set(4), Some(3));
        assert_eq!(o.busy_words(), 1);
        o.set(128);
        assert_eq!(o.busy_words(), 0b101);
        o.clear(3);
        assert_eq!(o.busy_words(), 0b100);
        assert_eq!(o.memory_bytes(), 32);
    }

    #[test]
    fn levels_find_a_lone_bit_among_millions() {
        let bits = 1 << 24;
        let mut o = Occupancy::<HostStorage>::new(bits).unwrap();
        assert_eq!(o.levels, 4);
        assert_eq!(o.next_set(12345), None);
        for b in [0, 63, 64, 4095, 4096, 262_143, 262_144, bits - 1] {
            o.set(b);
            assert_eq!(o.next_set(b.wrapping_sub(1) % bits), Some(b), "bit {b}");
            assert_eq!(o.next_set(b.wrapping_add(1) % bits), Some(b), "after {b}");
            o.set(b);
            o.clear(b);
            assert_eq!(o.next_set(b), None, "{b} cleared");
        }
        // Against a plain scan, on random bits.
        let mut rng = crate::rng::Rng::new(9);
        let n = 70_000;
        let mut o = Occupancy::<HostStorage>::new(n).unwrap();
        let mut plain = std::vec![false; n as usize];
        for _ in 0..20_000 {
            let b = rng.within(0, u64::from(n)) as u32;
            match rng.within(0, 3) {
                0 => {
                    o.clear(b);
                    plain[b as usize] = false;
                }
                _ => {
                    o.set(b);
                    plain[b as usize] = true;
                }
            }
            let from = rng.within(0, u64::from(n)) as u32;
            let want = (from..n).chain(0..from).find(|&i| plain[i as usize]);
            assert_eq!(o.next_set(from), want, "from {from}");
        }
    }
}
