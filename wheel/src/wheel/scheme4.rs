// SPDX-License-Identifier: GPL-2.0

//! Scheme 4 (section V of the paper): the basic timing wheel, a circular array of lists with
//! one slot per tick and a cursor on the slot of the current tick (Figure 5).
//!
//! A timer started `j` ticks from now goes on the list `j` slots past the cursor. Each tick
//! moves the cursor one slot and queues that slot's whole list: nothing is ever put more than
//! one turn ahead, so everything the cursor finds is due now. No timer is ever decremented or
//! compared; the slot a timer sits in *is* its deadline. The price is memory, one list head per
//! tick of the longest interval, and the limit itself: a longer interval fails with
//! [`Error::Range`] and changes nothing (the paper suggests handing such timers to another
//! scheme, which a caller can do).
//!
//! | routine     | cost              | note                                                |
//! |-------------|-------------------|-----------------------------------------------------|
//! | start       | O(1)              | append to the list `interval` slots past the cursor |
//! | stop        | O(1)              | unlink from the slot its deadline names             |
//! | reschedule  | O(1)              | unlink, append                                      |
//! | tick        | O(1)              | plus O(1) per expired timer                         |
//! | next expiry | O(MaxInterval/64) | first busy slot after the cursor, 64 slots a step   |
//!
//! A tickless clock jumps the cursor to the next busy slot, found in the bitmap: the idle ticks
//! in between cost 64 slots a step, however many they are. A jump of `k` ticks moves the cursor
//! `k mod MaxInterval` slots, the one division of the scheme, paid per jump and never per timer.
//!
//! # Geometry
//!
//! The wheel has exactly `MaxInterval` slots (`config.slots`), not the next power of two, so no
//! memory is wasted. The slot of a new timer is the cursor plus the interval, brought back into
//! range by one conditional subtraction since the interval is at most one turn: no division,
//! no mask. An interval of exactly `MaxInterval` lands on the cursor's own slot, which the
//! current tick has already emptied and which the cursor reaches again `MaxInterval` ticks from
//! now, so the accepted intervals are `1..=MaxInterval`.
//!
//! The cursor counts slots, not ticks: it starts at 0 whatever `config.start` is and is never
//! derived from `now`. The wrap of the clock at 2^64, which a slot count that is not a power of
//! two does not divide, therefore never reaches the index arithmetic. An entry's slot is not
//! stored either: it is the cursor plus the ticks left until its deadline, so the list tag can
//! stay one constant whatever `MaxInterval` is.
//!
//! # Occupancy
//!
//! Beside the lists sits an `Occupancy` bitmap (`bitmap.rs`), one bit per slot set while its
//! list is not empty: the "busy" marks of the paper's Appendix A. It costs a bit per slot (1/64
//! of the list heads) and one bit operation when a list becomes empty or non-empty, and lets
//! [`Scheme::next_expiry`] find the first busy slot 64 slots at a time. Every wheel (schemes 4
//! to 7) keeps its lists and their bits in step through the same slot layer, `slots.rs`.
//!
//! Timers with equal deadlines keep their start order (a new one goes at the tail of its slot;
//! the paper puts it at the head, which is as cheap).

use super::arena::Arena;
use super::slots::Slots;
use super::{Clock, Config, Error, NextExpiry, Scheme, SchemeKind, Storage, Work};

/// `Entry::list` of an entry on a slot (which slot, its deadline says).
const SLOTTED: u32 = 0;

/// The most slots, and so the longest `MaxInterval`: 2^24 list heads are 128 MiB already.
pub const MAX_SLOTS: u32 = 1 << 24;

/// The basic timing wheel: `MaxInterval` slots, one per tick.
///
/// # Invariants
///
/// - An entry on `slots[s]` is due `(s - cursor) mod MaxInterval` ticks from now, a distance of
///   0 meaning a whole turn, `MaxInterval` (or, while the tick is half done, now itself).
#[repr(C)]
pub struct BasicWheel<S: Storage> {
    /// First, as in every scheme: see [`super::AnyScheme`].
    pub(super) arena: Arena<S>,
    slots: Slots<S>,
    cursor: u32,
}

impl<S: Storage> BasicWheel<S> {
    /// An empty wheel of `config.slots` slots, accepting intervals up to that many ticks, for
    /// `config.capacity` timers.
    ///
    /// Fails with [`Error::Config`] if `config.slots` is 0 or above [`MAX_SLOTS`].
    pub fn new(config: &Config) -> Result<Self, Error> {
        let n = config.slots;
        if n == 0 || n > MAX_SLOTS {
            return Err(Error::Config);
        }
        Ok(BasicWheel {
            arena: Arena::new(config)?,
            slots: Slots::new(n)?,
            // INVARIANT: every slot is empty, so any cursor will do.
            cursor: 0,
        })
    }

    /// `MaxInterval`: the longest interval accepted, and the number of slots.
    fn max_interval(&self) -> u64 {
        u64::from(self.slots.len())
    }

    /// The slot `distance` ticks past the cursor, for a distance in `0..=MaxInterval`.
    fn slot_after(&self, distance: u64) -> u32 {
        let n = self.max_interval();
        // Both terms are below 2^32: the sum cannot overflow, and one turn at most is too far.
        let slot = u64::from(self.cursor) + distance;
        (if slot >= n { slot - n } else { slot }) as u32
    }

    /// The slot of entry `idx`.
    fn slot_of(&self, idx: u32) -> u32 {
        self.slot_after(self.arena.remaining(self.arena.entry(idx).deadline))
    }

    arena_moves!(arena);

    /// The latest tick of the range that the wheel holds: every tick has its own slot, and a
    /// timer pushed back into a later range stays put for longest (see [`Scheme::reschedule`]).
    fn choose(&self, earliest: u64, latest: u64) -> Result<u64, Error> {
        let max = self.max_interval();
        match (
            self.arena.remaining(latest) > max,
            self.arena.remaining(earliest) > max,
        ) {
            (false, _) => Ok(latest),
            (true, false) => Ok(self.arena.now().wrapping_add(max)),
            (true, true) => Err(Error::Range),
        }
    }

    fn file(&mut self, idx: u32, _deadline: u64, _work: &mut Work) {
        // INVARIANT: the slot is as far past the cursor as the deadline is past now.
        let slot = self.slot_of(idx);
        self.slots.push_back(&mut self.arena, slot, SLOTTED, idx);
    }

    fn unlink(&mut self, idx: u32, _work: &mut Work) {
        let slot = self.slot_of(idx);
        self.slots.unlink(&mut self.arena, slot, idx);
    }

    /// A slot holds one deadline: only the same deadline stays.
    fn retime(&mut self, idx: u32, deadline: u64, _work: &mut Work) -> bool {
        self.arena.entry(idx).deadline == deadline
    }

    fn enter(&mut self, tick: u64, _clock: Clock) {
        let elapsed = tick.wrapping_sub(self.arena.now());
        self.arena.begin_tick(tick);
        // INVARIANT: the clock and the cursor move together, so every distance shrinks as much;
        // no tick entered is after the first busy slot.
        let n = self.max_interval();
        self.cursor = match elapsed {
            1 => self.slot_after(1),
            _ => self.slot_after(elapsed % n),
        };
    }

    /// Moves the entries of the cursor's slot due now to the due queue: all of them but those
    /// a whole turn away, started since the tick began, which are at the back.
    fn run_tick(&mut self, work: &mut Work) -> bool {
        self.slots
            .drain_due(&mut self.arena, self.cursor, work, |_, _| {})
    }

    fn next_busy(&self, work: &mut Work) -> Option<u64> {
        self.earliest_within(work)
    }

    /// The earliest pending deadline: the first busy slot after the cursor.
    fn earliest(&self) -> Option<u64> {
        self.earliest_within(&mut Work::unlimited())
    }

    /// [`Self::earliest`], charging `work` a unit for the slot found (its word of the occupancy
    /// bitmap and its list's head) and one for each other word of the bitmap read to find it.
    fn earliest_within(&self, work: &mut Work) -> Option<u64> {
        // Distances grow from 1 just past the cursor to a whole turn on the cursor itself, so
        // the first busy slot from there on holds the earliest deadlines.
        let mut reads = 0;
        let slot = self.slots.next_busy_counted(self.slot_after(1), &mut reads);
        work.spend(reads.max(1));
        let head = self.slots.list(slot?).head;
        Some(self.arena.entry(head).deadline)
    }
}

impl<S: Storage> Scheme for BasicWheel<S> {
    arena_delegates!(arena);

    /// The range as [`Scheme::start_range`] takes it: checked, then its deadline chosen,
    /// [`Error::Range`] when even its earliest tick is beyond `MaxInterval`.
    fn check_range(&self, earliest: u64, latest: u64) -> Result<(), Error> {
        let (a, b) = self.arena.range(earliest, latest)?;
        self.choose(a, b).map(|_| ())
    }

    fn next_work(&self) -> Option<u64> {
        self.arena.tick_under_way().or_else(|| self.earliest())
    }

    fn next_work_within(&self, work: &mut Work) -> Option<u64> {
        match self.arena.tick_under_way() {
            Some(tick) => {
                work.spend(1);
                Some(tick)
            }
            None => self.earliest_within(work),
        }
    }

    fn next_expiry(&self) -> NextExpiry {
        self.earliest().into()
    }

    fn memory_bytes(&self) -> usize {
        self.arena.memory_bytes() + self.slots.memory_bytes()
    }

    fn kind(&self) -> SchemeKind {
        SchemeKind::BasicWheel
    }
}

#[cfg(test)]
mod tests {
    use super::super::arena::NIL;
    use super::*;
    use crate::model::{self, check_against, Band, Foresight, Profile};
    use crate::HostStorage;
    use std::vec::Vec;

    fn wheel(capacity: u32, slots: u32, start: u64) -> BasicWheel<HostStorage> {
        BasicWheel::new(&Config {
            capacity,
            slots,
            start,
            ..Default::default()
        })
        .unwrap()
    }

    /// Checks the type invariants: tags, distances and the bitmap.
    fn check(w: &BasicWheel<HostStorage>) {
        let n = w.max_interval();
        for s in 0..n as u32 {
            let list = *w.slots.list(s);
            assert_eq!(list.is_empty(), w.slots.next_busy(s) != Some(s), "slot {s}");
            let distance = (u64::from(s) + n - u64::from(w.cursor)) % n;
            let distance = if distance == 0 { n } else { distance };
            let mut at = list.head;
            while at != NIL {
                let e = w.arena.entry(at);
                assert_eq!(w.slot_of(at), s);
                assert_eq!(e.deadline, w.now().wrapping_add(distance), "slot {s}");
                at = e.next;
            }
        }
    }

    /// Ticks until something is queued (at most `limit` ticks); the ids popped then.
    fn run_until_fired(w: &mut BasicWheel<HostStorage>, limit: u64) -> (u64, Vec<u64>) {
        for t in 1..=limit {
            if w.tick() > 0 {
                let fired = core::iter::from_fn(|| w.pop_expired()).map(|e| e.id);
                return (t, fired.collect());
            }
        }
        (limit, Vec::new())
    }

    #[test]
    fn config_is_validated() {
        let bad = |slots| {
            BasicWheel::<HostStorage>::new(&Config {
                capacity: 1,
                slots,
                start: 0,
                ..Default::default()
            })
        };
        assert_eq!(bad(0).err(), Some(Error::Config));
        assert_eq!(bad(u32::MAX).err(), Some(Error::Config));
        assert!(bad(1).is_ok());
        assert!(bad(1000).is_ok());
    }

    #[test]
    fn slot_index_wraps_at_max_interval() {
        let mut w = wheel(4, 10, 0);
        assert_eq!(w.slot_after(1), 1);
        assert_eq!(w.slot_after(10), 0);
        w.cursor = 7;
        assert_eq!(w.slot_after(2), 9);
        assert_eq!(w.slot_after(3), 0);
        assert_eq!(w.slot_after(10), 7);
        w.cursor = 9;
        assert_eq!(w.slot_after(1), 0);
        let mut one = wheel(4, 1, 0);
        assert_eq!(one.slot_after(1), 0);
        one.tick();
        assert_eq!(one.cursor, 0);
    }

    #[test]
    fn every_interval_fires_exactly_on_time() {
        let mut w = wheel(16, 7, 0);
        for _ in 0..5 {
            w.tick();
        }
        for interval in 1..=7 {
            w.start(interval, interval).unwrap();
            check(&w);
            assert_eq!(run_until_fired(&mut w, 20), (interval, [interval].to_vec()));
            assert!(w.is_empty());
        }
    }

    #[test]
    fn beyond_max_interval_is_a_range_error_and_changes_nothing() {
        let mut w = wheel(4, 8, 0);
        let h = w.start(8, 1).unwrap();
        assert_eq!(w.start(9, 2), Err(Error::Range));
        assert_eq!(w.start(u64::MAX >> 1, 2), Err(Error::Range));
        assert_eq!(w.start(0, 2), Err(Error::Interval));
        assert_eq!(w.start(super::super::MAX_INTERVAL, 2), Err(Error::Interval));
        assert_eq!(w.len(), 1);
        assert_eq!(w.next_expiry(), NextExpiry::At(8));
        check(&w);
        // A whole turn: it sits on the cursor's own slot and fires when the cursor is back.
        assert_eq!(w.slot_after(8), w.cursor);
        assert_eq!(run_until_fired(&mut w, 20), (8, [1].to_vec()));
        assert_eq!(w.stop(h), Err(Error::Stale));
    }

    #[test]
    fn check_range_refuses_beyond_max_interval_and_changes_nothing() {
        let mut w = wheel(4, 8, 0);
        let h = w.start(3, 1).unwrap();
        w.tick();
        assert_eq!(w.check_range(8, 8), Ok(()));
        // Part of the range within MaxInterval: the start takes its last tick inside.
        assert_eq!(w.check_range(5, 20), Ok(()));
        assert_eq!(w.check_range(9, 9), Err(Error::Range));
        assert_eq!(w.check_range(9, 20), Err(Error::Range));
        assert_eq!(w.check_range(0, 3), Err(Error::Interval));
        assert_eq!(w.check_range(4, 3), Err(Error::Interval));
        assert_eq!(w.len(), 1);
        assert_eq!(w.deadline(h), Some(3));
        check(&w);
        assert_eq!(w.start(9, 2), Err(Error::Range));
        assert!(w.start(8, 2).is_ok());
    }

    #[test]
    fn clock_wraps_near_2_64_and_2_32() {
        for start in [u64::MAX - 1000, u64::MAX - 2, (1 << 32) - 3] {
            let mut w = wheel(8, 5, start);
            for _ in 0..997 {
                w.tick();
            }
            let now = w.now();
            for interval in [1, 3, 5] {
                w.start(interval, interval).unwrap();
            }
            assert_eq!(w.next_expiry(), NextExpiry::At(now.wrapping_add(1)));
            let mut seen = Vec::new();
            for _ in 0..10 {
                w.tick();
                check(&w);
                while let Some(e) = w.pop_expired() {
                    assert_eq!(e.deadline, w.now());
                    assert_eq!(e.deadline, now.wrapping_add(e.id));
                    seen.push(e.id);
                }
            }
            assert_eq!(seen, [1, 3, 5]);
        }
    }

    #[test]
    fn stop_pending_and_queued() {
        let mut w = wheel(8, 4, 0);
        let a = w.start(2, 10).unwrap();
        let b = w.start(2, 11).unwrap();
        let c = w.start(3, 12).unwrap();
        assert_eq!(w.stop(c), Ok(12));
        assert_eq!(w.next_expiry(), NextExpiry::At(2));
        w.tick();
        assert_eq!(w.tick(), 2);
        assert_eq!(w.next_expiry(), NextExpiry::Idle);
        // Queued but not popped: stopping it means it is never popped.
        assert_eq!(w.stop(a), Ok(10));
        assert_eq!(w.queued(), 1);
        assert_eq!(w.pop_expired().map(|e| e.handle), Some(b));
        assert_eq!(w.pop_expired(), None);
        assert_eq!(w.stop(a), Err(Error::Stale));
        assert_eq!(w.stop(b), Err(Error::Stale));
        assert!(w.is_empty());
        check(&w);
    }

    #[test]
    fn full_table_refuses_and_changes_nothing() {
        let mut w = wheel(2, 4, 0);
        w.start(1, 1).unwrap();
        w.start(4, 2).unwrap();
        assert_eq!(w.start(2, 3), Err(Error::Full));
        assert_eq!(w.len(), 2);
        assert!(w.slots.list(2).is_empty());
        check(&w);
        w.tick();
        // Due but not popped still holds its entry.
        assert_eq!(w.start(2, 3), Err(Error::Full));
        assert_eq!(w.pop_expired().map(|e| e.id), Some(1));
        assert!(w.start(2, 3).is_ok());
    }

    #[test]
    fn rearm_between_pops() {
        model::rearm_between_pops(wheel(8, 4, 0), check);
    }

    #[test]
    fn next_expiry_is_the_first_busy_slot_after_the_cursor() {
        let mut w = wheel(8, 64 * 3 + 5, 0);
        assert_eq!(w.next_expiry(), NextExpiry::Idle);
        w.start(197, 0).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(197));
        for _ in 0..150 {
            w.tick();
        }
        w.start(100, 1).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(197));
        w.start(40, 2).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(190));
        check(&w);
    }

    #[test]
    fn matches_the_model() {
        let profile = Profile {
            intervals: &[(1023, Band::Upto(60)), (1, Band::Longest)],
            range: Some(50),
            foresight: Foresight::Exact,
            check_every: 1,
            reach: 1 << 34,
            tiny_budgets: false,
        };
        for (seed, start) in [(1, 0), (2, (1 << 32) - 50), (3, u64::MAX - 1000)] {
            check_against(&mut wheel(64, 50, start), seed, 100_000, &profile, check);
        }
    }
}
