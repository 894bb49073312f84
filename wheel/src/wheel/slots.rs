// SPDX-License-Identifier: GPL-2.0

//! The slot layer of the wheels (schemes 4 to 7): an array of lists, one per slot, and the
//! occupancy bitmap (`bitmap.rs`) that marks the busy ones, kept in step by the only
//! functions that link and unlink — tokio's `Level`, for any number of slots.
//!
//! Every way onto or off a slot's list goes through here, so no scheme can leave a bit set on
//! an empty slot or clear on a busy one; what differs between the wheels (which slot a timer
//! goes to, what a tick does with a slot) stays in their files.

use super::arena::{Arena, Entry, List, NIL};
use super::bitmap::Occupancy;
use super::{Error, Storage, Work};

/// Slot lists and their occupancy.
///
/// # Invariants
///
/// Bit `s` of `occupied` is set exactly when `lists[s]` is not empty.
pub(super) struct Slots<S: Storage> {
    lists: S::Buf<List>,
    occupied: Occupancy<S>,
}

impl<S: Storage> Slots<S> {
    /// `n` empty slots.
    pub(super) fn new(n: u32) -> Result<Self, Error> {
        Ok(Slots {
            lists: S::alloc(n as usize, |_| List::EMPTY)?,
            occupied: Occupancy::new(n)?,
        })
    }

    /// The number of slots.
    pub(super) fn len(&self) -> u32 {
        self.lists.len() as u32
    }

    /// The list of `slot`.
    #[inline]
    pub(super) fn list(&self, slot: u32) -> &List {
        &self.lists[slot as usize]
    }

    /// Appends entry `idx`, on no list, to `slot`, tagging it `tag`. Returns whether the slot
    /// was empty.
    #[inline(always)]
    pub(super) fn push_back(
        &mut self,
        arena: &mut Arena<S>,
        slot: u32,
        tag: u32,
        idx: u32,
    ) -> bool {
        let empty = arena.push_back(&mut self.lists[slot as usize], tag, idx);
        if empty {
            // INVARIANT: the list is not empty (a busy list's bit is already set).
            self.occupied.set(slot);
        }
        empty
    }

    /// Inserts entry `idx`, on no list, before entry `at` of `slot` (at the end for `NIL`),
    /// tagging it `tag`.
    #[inline]
    pub(super) fn insert_before(
        &mut self,
        arena: &mut Arena<S>,
        slot: u32,
        tag: u32,
        at: u32,
        idx: u32,
    ) {
        arena.insert_before(&mut self.lists[slot as usize], tag, at, idx);
        // INVARIANT: the list is not empty.
        self.occupied.set(slot);
    }

    /// Unlinks entry `idx` from `slot`, the slot it is on.
    #[inline(always)]
    pub(super) fn unlink(&mut self, arena: &mut Arena<S>, slot: u32, idx: u32) {
        let list = &mut self.lists[slot as usize];
        arena.unlink(list, idx);
        if list.is_empty() {
            // INVARIANT: the list is empty.
            self.occupied.clear(slot);
        }
    }

    /// Moves the entries at the front of `slot` onto the due queue in one splice, at most
    /// `limit`, stopping before the first that `due` refuses: [`Arena::queue_front`]. Returns
    /// how many moved.
    #[inline]
    pub(super) fn queue_front(
        &mut self,
        arena: &mut Arena<S>,
        slot: u32,
        limit: usize,
        due: impl FnMut(u32, &Entry) -> bool,
    ) -> usize {
        let list = &mut self.lists[slot as usize];
        let n = arena.queue_front(list, limit, due);
        if list.is_empty() {
            // INVARIANT: the list is empty.
            self.occupied.clear(slot);
        }
        n
    }

    /// Hands the whole of `slot`, its `n` entries all due now and tagged `slot`, to the empty
    /// due queue without visiting them: [`Arena::queue_whole`]. Always inlined, into scheme 7's
    /// short-cut, which [`super::AnyScheme`]'s dispatch inlines too.
    #[inline(always)]
    pub(super) fn queue_whole(&mut self, arena: &mut Arena<S>, slot: u32, n: usize) {
        arena.queue_whole(&mut self.lists[slot as usize], n, slot);
        // INVARIANT: the list is empty.
        self.occupied.clear(slot);
    }

    /// Queues the entries at the front of `slot` that are due now (all of its due ones, in a
    /// slot that keeps them in front), telling `leaving` of each (its index and its successor)
    /// as it goes; within `work`, at least one step, in one splice ([`Slots::queue_front`]).
    /// `true` once none is left.
    pub(super) fn drain_due(
        &mut self,
        arena: &mut Arena<S>,
        slot: u32,
        work: &mut Work,
        mut leaving: impl FnMut(u32, u32),
    ) -> bool {
        let now = arena.now();
        let moved = self.queue_front(arena, slot, work.left().max(1), |idx, e| {
            let due = e.deadline == now;
            if due {
                leaving(idx, e.next);
            }
            due
        });
        work.spend(moved);
        let head = self.list(slot).head;
        head == NIL || arena.entry(head).deadline != now
    }

    /// The first busy slot at or after `from`, wrapping round; `None` if every slot is empty.
    #[cfg(test)]
    pub(super) fn next_busy(&self, from: u32) -> Option<u32> {
        self.occupied.next_set(from)
    }

    /// [`Self::next_busy`], adding the occupancy words it reads to `reads` (a few for each
    /// level of the bitmap: see `Occupancy::next_set_counted`), for the caller to charge.
    pub(super) fn next_busy_counted(&self, from: u32, reads: &mut usize) -> Option<u32> {
        self.occupied.next_set_counted(from, reads)
    }

    /// Occupancy word `w`: the bits of slots `64 w .. 64 w + 64` (scheme 7's level `w`).
    pub(super) fn word(&self, w: usize) -> u64 {
        self.occupied.word(w)
    }

    /// The busy occupancy words: bit `w` set when a slot of `64 w .. 64 w + 64` is busy (scheme
    /// 7's level `w`). At most 4,096 slots.
    pub(super) fn busy_words(&self) -> u64 {
        self.occupied.busy_words()
    }

    /// Bytes allocated for the lists and the bitmap.
    pub(super) fn memory_bytes(&self) -> usize {
        self.lists.len() * core::mem::size_of::<List>() + self.occupied.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, HostStorage};

    #[test]
    fn occupancy_follows_the_lists() {
        let mut arena = Arena::<HostStorage>::new(&Config {
            capacity: 4,
            slots: 1,
            start: 0,
            ..Default::default()
        })
        .unwrap();
        let mut s = Slots::<HostStorage>::new(130).unwrap();
        let a = arena.alloc(1, 5).unwrap().0;
        let b = arena.alloc(2, 5).unwrap().0;
        s.push_back(&mut arena, 129, 0, a);
        s.insert_before(&mut arena, 129, 0, a, b);
        assert_eq!((s.list(129).head, s.next_busy(0)), (b, Some(129)));
        assert_eq!((s.word(2), s.busy_words()), (1 << 1, 1 << 2));
        s.unlink(&mut arena, 129, b);
        assert_eq!(s.next_busy(0), Some(129));
        s.unlink(&mut arena, 129, a);
        assert_eq!((s.next_busy(0), s.word(2), s.busy_words()), (None, 0, 0));
        assert_eq!(s.len(), 130);
        // The lists, three words of bits and their summary word.
        assert_eq!(s.memory_bytes(), 130 * 8 + (3 + 1) * 8);
    }
}
