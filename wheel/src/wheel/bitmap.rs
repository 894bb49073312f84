// SPDX-License-Identifier: GPL-2.0

//! The occupancy bitmap of the wheels (schemes 4 to 7): one bit per
//! slot, set while the slot's list is not empty — the "busy" marks of the paper's Appendix A.
//!
//! It costs a bit per slot (1/64 of the list heads) and one bit operation when a list becomes
//! empty or non-empty, and lets a scheme find its next busy slot 64 slots at a time, which is
//! what their `next_expiry` needs. Scheme 7 reads it a word at a time: one word per 64-slot
//! level. The wheels keep it in step with their lists through `slots.rs`.

use super::{Error, Storage};

/// Bits per `Occupancy` word.
const WORD_BITS: u32 = u64::BITS;

/// One bit per wheel slot, set while the slot's list is not empty.
///
/// # Invariants
///
/// Bits at or beyond the slot count it was created for are never set (callers only set bits
/// of slots they have).
pub(super) struct Occupancy<S: Storage> {
    words: S::Buf<u64>,
}

/// The word holding bit `bit`.
fn word_of(bit: u32) -> usize {
    (bit / WORD_BITS) as usize
}

/// Bit `bit` within its word.
fn mask_of(bit: u32) -> u64 {
    1 << (bit % WORD_BITS)
}

/// The lowest set bit of `word`, word number `w`, as a bit number; `word` is not 0.
fn lowest_bit(w: usize, word: u64) -> u32 {
    w as u32 * WORD_BITS + word.trailing_zeros()
}

impl<S: Storage> Occupancy<S> {
    /// A bitmap of `bits` clear bits.
    pub(super) fn new(bits: u32) -> Result<Self, Error> {
        let words = bits.div_ceil(WORD_BITS) as usize;
        Ok(Occupancy {
            words: S::alloc(words, |_| 0)?,
        })
    }

    /// Marks `bit` busy.
    #[inline]
    pub(super) fn set(&mut self, bit: u32) {
        self.words[word_of(bit)] |= mask_of(bit);
    }

    /// Marks `bit` idle.
    #[inline]
    pub(super) fn clear(&mut self, bit: u32) {
        self.words[word_of(bit)] &= !mask_of(bit);
    }

    /// The first set bit at or after `from`, going on from bit 0 past the last one and so
    /// wrapping round to just before `from`; `None` if no bit is set. Reads every word at most
    /// once, the first one twice.
    pub(super) fn next_set(&self, from: u32) -> Option<u32> {
        let n = self.words.len();
        let first = word_of(from);
        let ahead = self.words[first] & (u64::MAX << (from % WORD_BITS));
        if ahead != 0 {
            return Some(lowest_bit(first, ahead));
        }
        // The last round reads `first` again, whole: its bits below `from` come last.
        for k in 1..=n {
            let w = (first + k) % n;
            if self.words[w] != 0 {
                return Some(lowest_bit(w, self.words[w]));
            }
        }
        None
    }

    /// Word `w` of the bitmap: bits `64 w .. 64 w + 64`.
    pub(super) fn word(&self, w: usize) -> u64 {
        self.words[w]
    }

    /// Bytes allocated for the bitmap.
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
        assert_eq!(o.words.len(), 3);
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
        assert_eq!(o.memory_bytes(), 24);
    }
}
