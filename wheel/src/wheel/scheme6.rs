// SPDX-License-Identifier: GPL-2.0

//! Scheme 6 (section VI-A2 of the paper): a hashed timing wheel whose slot lists are left
//! unsorted, each timer carrying a count of the turns of the wheel it still has to wait.
//!
//! As in scheme 5, a timer due on tick `d` goes on slot `d mod M` (Figure 6). But it goes at
//! the tail, in O(1), and instead of keeping the list in order each entry stores its *rounds*:
//! how many more times the cursor will pass its slot before it is due, the paper's "high order
//! bits". Each tick walks the whole list under the cursor, as scheme 1 walks everything: an
//! entry with no rounds left is due, any other loses one. Every pending timer is looked at once
//! per turn, so a tick costs O(n/M) on average however the hash spreads the timers; the spread
//! only sets the variance. This is the scheme of Costello's BSD callouts (section VII).
//!
//! | routine     | cost                | note                                                  |
//! |-------------|---------------------|-------------------------------------------------------|
//! | start       | O(1)                | append to slot `deadline mod M` with its rounds       |
//! | stop        | O(1)                | unlink from the slot named by the entry's tag         |
//! | tick        | O(n/M) avg, O(n)    | walk the cursor's slot: queue or count down           |
//! | next expiry | O(M/64 + n/M) avg   | the first busy slot's list, else [`NextExpiry::Unknown`] |
//!
//! # Rounds
//!
//! `M` is a power of two, so the slot is `d & (M - 1)`, unchanged when the clock wraps at 2^64
//! (which `M` divides): a wheel started near 2^64 hashes exactly as one started at 0. A timer
//! started `r` ticks ahead is passed by the cursor `((r - 1) mod M) + 1` ticks from now, then
//! every `M` ticks, the last pass being its deadline: `(r - 1) / M` passes before it is due.
//! That is its initial rounds, kept in `Entry::aux`. Computed as a shift, since 64-bit division
//! is not free on every architecture the kernel builds for.
//!
//! # Next expiry
//!
//! Rounds are unordered, so naming the earliest deadline means looking at every pending timer:
//! O(n), the very cost the scheme exists to avoid. next_expiry instead looks where the next
//! tick that does any work will look: the first busy slot ahead of the cursor (found through an
//! `Occupancy` bitmap, 64 slots a step). If some entry there has no rounds left, it is due
//! when the cursor gets there and nothing can be earlier. Otherwise every timer is at least
//! that far off, but which is first is unknown without the whole walk, and the answer is
//! [`NextExpiry::Unknown`]. Walking one slot costs what the tick reaching it will cost anyway.
//!
//! Timers with equal deadlines keep their start order.

use super::arena::{Arena, List, NIL};
use super::bitmap::Occupancy;
use super::{Config, Error, Handle, NextExpiry, Scheme, SchemeKind, Storage};

/// The hashed wheel with unsorted lists and round counters.
///
/// # Invariants
///
/// - An entry on `slots[s]` has `list == s`, `deadline & (M - 1) == s`, and `aux`, its
///   rounds, equal to `(deadline - now - 1) >> shift`.
/// - `occupied` has bit `s` set exactly when `slots[s]` is not empty.
pub struct HashedUnsorted<S: Storage> {
    arena: Arena<S>,
    slots: S::Buf<List>,
    occupied: Occupancy<S>,
    /// `M - 1`.
    mask: u64,
    /// `log2(M)`.
    shift: u32,
}

impl<S: Storage> HashedUnsorted<S> {
    /// An empty wheel of `config.slots` slots for `config.capacity` timers.
    ///
    /// Fails with [`Error::Config`] unless `config.slots` is a power of two.
    pub fn new(config: &Config) -> Result<Self, Error> {
        let m = config.slots;
        // A power of two is at most 2^31: slot numbers stay clear of the arena's list tags.
        if !m.is_power_of_two() {
            return Err(Error::Config);
        }
        Ok(HashedUnsorted {
            arena: Arena::new(config)?,
            slots: S::alloc(m as usize, |_| List::EMPTY)?,
            occupied: Occupancy::new(m)?,
            mask: u64::from(m) - 1,
            shift: m.trailing_zeros(),
        })
    }

    /// The slot of the timers due on tick `deadline`.
    fn slot_of(&self, deadline: u64) -> u32 {
        (deadline & self.mask) as u32
    }

    /// How many times the cursor passes a timer due in `remaining` (at least 1) ticks before
    /// the pass on which it is due.
    fn rounds(&self, remaining: u64) -> u64 {
        (remaining - 1) >> self.shift
    }

    /// Unlinks entry `idx` from the slot it is on.
    fn unlink(&mut self, idx: u32) {
        let slot = self.arena.entry(idx).list;
        let list = &mut self.slots[slot as usize];
        self.arena.unlink(list, idx);
        if list.is_empty() {
            self.occupied.clear(slot);
        }
    }

    /// Walks `slot`, the cursor's: queues the entries with no rounds left and takes a round off
    /// the others. Returns how many were queued.
    fn expire(&mut self, slot: u32) -> usize {
        let now = self.arena.now();
        let list = &mut self.slots[slot as usize];
        let mut fired = 0;
        let mut at = list.head;
        while at != NIL {
            // Unlinking leaves the successor where it is: read it first.
            let next = self.arena.next(at);
            let e = self.arena.entry_mut(at);
            if e.aux == 0 {
                debug_assert_eq!(e.deadline, now, "entry {at} is not due");
                self.arena.unlink(list, at);
                self.arena.queue(at);
                fired += 1;
            } else {
                e.aux -= 1;
            }
            at = next;
        }
        if list.is_empty() {
            self.occupied.clear(slot);
        }
        fired
    }

    /// Whether some entry of `slot` has no rounds left.
    fn has_due(&self, slot: u32) -> bool {
        let mut at = self.slots[slot as usize].head;
        while at != NIL {
            if self.arena.entry(at).aux == 0 {
                return true;
            }
            at = self.arena.next(at);
        }
        false
    }
}

impl<S: Storage> Scheme for HashedUnsorted<S> {
    fn start(&mut self, interval: u64, id: u64) -> Result<Handle, Error> {
        let deadline = self.arena.deadline(interval)?;
        let idx = self.arena.alloc(id, deadline)?;
        let slot = self.slot_of(deadline);
        // INVARIANT: the slot and rounds of a timer due `interval` ticks from now.
        self.arena.entry_mut(idx).aux = self.rounds(interval);
        self.arena
            .push_back(&mut self.slots[slot as usize], slot, idx);
        self.occupied.set(slot);
        Ok(self.arena.handle(idx))
    }

    fn tick(&mut self) -> usize {
        let now = self.arena.advance();
        // INVARIANT: `(deadline - now - 1) >> shift` drops, by one, only for the entries whose
        // `deadline - now` was `1 mod M` before the tick: those on the slot of the new `now`,
        // which `expire` counts down. The ones it reaches with no rounds left are due now.
        self.expire(self.slot_of(now))
    }

    arena_delegates!(arena, unlink);

    fn next_expiry(&self) -> NextExpiry {
        let now = self.arena.now();
        let Some(slot) = self.occupied.next_set(self.slot_of(now.wrapping_add(1))) else {
            return NextExpiry::Idle;
        };
        if !self.has_due(slot) {
            return NextExpiry::Unknown;
        }
        // The first busy slot is `distance` ticks ahead, `1..=M`; nothing is due sooner.
        let distance = u64::from(slot).wrapping_sub(now).wrapping_sub(1) & self.mask;
        NextExpiry::At(now.wrapping_add(distance + 1))
    }

    fn memory_bytes(&self) -> usize {
        self.arena.memory_bytes()
            + self.slots.len() * core::mem::size_of::<List>()
            + self.occupied.memory_bytes()
    }

    fn kind(&self) -> SchemeKind {
        SchemeKind::HashedUnsorted
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{self, check_against, Band, Foresight, Profile};
    use super::*;
    use crate::HostStorage;
    use std::vec::Vec;

    fn wheel(capacity: u32, slots: u32, start: u64) -> HashedUnsorted<HostStorage> {
        HashedUnsorted::new(&Config {
            capacity,
            slots,
            start,
        })
        .unwrap()
    }

    /// Checks the type invariants: tags, hashing, rounds and the bitmap.
    fn check(w: &HashedUnsorted<HostStorage>) {
        for s in 0..w.slots.len() as u32 {
            let list = w.slots[s as usize];
            assert_eq!(
                list.is_empty(),
                w.occupied.next_set(s) != Some(s),
                "slot {s}"
            );
            let mut at = list.head;
            while at != NIL {
                let e = w.arena.entry(at);
                assert_eq!((e.list, e.deadline & w.mask), (s, u64::from(s)));
                let remaining = w.arena.remaining(e.deadline);
                assert_eq!(
                    e.aux,
                    (remaining - 1) >> w.shift,
                    "slot {s}, {remaining} left"
                );
                at = e.next;
            }
        }
    }

    /// The rounds of the entries on `slot`, in list order.
    fn rounds_on(w: &HashedUnsorted<HostStorage>, slot: u32) -> Vec<u64> {
        let mut out = Vec::new();
        let mut at = w.slots[slot as usize].head;
        while at != NIL {
            out.push(w.arena.entry(at).aux);
            at = w.arena.next(at);
        }
        out
    }

    /// Ticks `ticks` times; the `(tick, id)` of everything popped, in order.
    fn run(w: &mut HashedUnsorted<HostStorage>, ticks: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        for t in 1..=ticks {
            w.tick();
            check(w);
            while let Some(e) = w.pop_expired() {
                assert_eq!(e.deadline, w.now());
                out.push((t, e.id));
            }
        }
        out
    }

    #[test]
    fn slots_must_be_a_power_of_two() {
        let new = |slots| {
            HashedUnsorted::<HostStorage>::new(&Config {
                capacity: 1,
                slots,
                start: 0,
            })
        };
        for bad in [0, 3, 6, 100, u32::MAX] {
            assert_eq!(new(bad).err(), Some(Error::Config), "{bad} slots");
        }
        for good in [1, 2, 256, 1 << 16] {
            assert!(new(good).is_ok(), "{good} slots");
        }
    }

    #[test]
    fn rounds_count_the_passes_before_the_last() {
        let w = wheel(1, 8, 0);
        assert_eq!(w.shift, 3);
        let table = [
            (1, 0),
            (7, 0),
            (8, 0),
            (9, 1),
            (16, 1),
            (17, 2),
            (8 * 1000 + 1, 1000),
        ];
        for (remaining, rounds) in table {
            assert_eq!(w.rounds(remaining), rounds, "{remaining} left");
        }
        assert_eq!(w.rounds((1 << 63) - 1), (1 << 60) - 1);
        assert_eq!(wheel(1, 1, 0).rounds(5), 4);
    }

    #[test]
    fn start_appends_with_rounds_and_ticks_count_down() {
        let mut w = wheel(8, 4, 0);
        for (id, interval) in [(0, 9), (1, 1), (2, 5), (3, 13), (4, 4)] {
            w.start(interval, id).unwrap();
        }
        assert_eq!(rounds_on(&w, 1), [2, 0, 1, 3]);
        assert_eq!(rounds_on(&w, 0), [0]);
        check(&w);
        // The first tick walks slot 1: one due, the others lose a round.
        assert_eq!(w.tick(), 1);
        assert_eq!(rounds_on(&w, 1), [1, 0, 2]);
        assert_eq!(w.pop_expired().map(|e| e.id), Some(1));
        assert_eq!(run(&mut w, 12), [(3, 4), (4, 2), (8, 0), (12, 3)]);
        assert!(w.is_empty());
    }

    #[test]
    fn every_interval_around_a_turn_fires_exactly_on_time() {
        for m in [1, 2, 8] {
            let mut w = wheel(64, m, 3);
            let intervals = [1, 2, 7, 8, 9, 15, 16, 17, 24, 25, 33];
            for (id, &interval) in intervals.iter().enumerate() {
                w.start(interval, id as u64).unwrap();
            }
            let want: Vec<(u64, u64)> = intervals.iter().zip(0..).map(|(&t, id)| (t, id)).collect();
            assert_eq!(run(&mut w, 40), want, "{m} slots");
        }
    }

    #[test]
    fn clock_wraps_near_2_64_and_2_32() {
        for start in [u64::MAX - 1000, u64::MAX - 3, (1 << 32) - 5] {
            let mut w = wheel(8, 4, start);
            for _ in 0..998 {
                w.tick();
            }
            let now = w.now();
            for (id, interval) in [(0, 9), (1, 5), (2, 1), (3, 13), (4, 6)] {
                w.start(interval, id).unwrap();
            }
            check(&w);
            assert_eq!(w.next_expiry(), NextExpiry::At(now.wrapping_add(1)));
            let fired = [(1, 2), (5, 1), (6, 4), (9, 0), (13, 3)];
            assert_eq!(run(&mut w, 14), fired);
        }
    }

    #[test]
    fn stop_pending_and_queued() {
        let mut w = wheel(8, 4, 0);
        let a = w.start(2, 10).unwrap();
        let b = w.start(2, 11).unwrap();
        let c = w.start(6, 12).unwrap();
        assert_eq!(w.stop(c), Ok(12));
        assert_eq!(rounds_on(&w, 2), [0, 0]);
        w.tick();
        assert_eq!(w.tick(), 2);
        assert!(w.slots[2].is_empty());
        assert_eq!(w.stop(a), Ok(10));
        assert_eq!(w.pop_expired().map(|e| e.handle), Some(b));
        assert_eq!(w.pop_expired(), None);
        assert_eq!(w.stop(a), Err(Error::Stale));
        assert!(w.is_empty());
        check(&w);
    }

    #[test]
    fn full_table_refuses_and_changes_nothing() {
        let mut w = wheel(2, 4, 0);
        w.start(1, 1).unwrap();
        w.start(5, 2).unwrap();
        assert_eq!(w.start(3, 3), Err(Error::Full));
        assert_eq!(w.len(), 2);
        assert_eq!(rounds_on(&w, 1), [0, 1]);
        assert!(w.slots[3].is_empty());
        check(&w);
        w.tick();
        assert_eq!(w.start(3, 3), Err(Error::Full));
        assert_eq!(w.pop_expired().map(|e| e.id), Some(1));
        assert!(w.start(3, 3).is_ok());
    }

    #[test]
    fn rearm_between_pops() {
        model::rearm_between_pops(wheel(8, 4, 0), check);
    }

    #[test]
    fn next_expiry_names_the_first_busy_slot_or_admits_unknown() {
        let mut w = wheel(8, 8, 0);
        assert_eq!(w.next_expiry(), NextExpiry::Idle);
        let far = w.start(21, 0).unwrap();
        // Slot 5 is the first busy one, but its only timer waits two more turns.
        assert_eq!(w.next_expiry(), NextExpiry::Unknown);
        // Slot 6 has one due this turn; slot 5 still comes first and knows nothing.
        w.start(6, 1).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::Unknown);
        w.start(5, 2).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(5));
        w.start(3, 3).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(3));
        assert_eq!(run(&mut w, 8), [(3, 3), (5, 2), (6, 1)]);
        assert_eq!(w.stop(far), Ok(0));
        // Slot 0 now belongs to the cursor: it is a whole turn away.
        w.start(8, 4).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(16));
        let mut one = wheel(2, 1, 0);
        one.start(1, 0).unwrap();
        assert_eq!(one.next_expiry(), NextExpiry::At(1));
        one.start(1, 1).unwrap();
        assert_eq!(run(&mut one, 1), [(1, 0), (1, 1)]);
        one.start(2, 2).unwrap();
        assert_eq!(one.next_expiry(), NextExpiry::Unknown);
    }

    #[test]
    fn matches_the_model() {
        let profile = Profile {
            intervals: &[(1023, Band::Upto(100)), (1, Band::Longest)],
            range: None,
            foresight: Foresight::Partial,
            check_every: 1,
        };
        for (seed, slots, start) in [(7, 16, 0), (8, 8, (1 << 32) - 50), (9, 1, u64::MAX - 1000)] {
            check_against(&mut wheel(64, slots, start), seed, 100_000, &profile, check);
        }
    }
}
