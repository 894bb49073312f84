// SPDX-License-Identifier: GPL-2.0

//! Scheme 5 (section VI-A1 of the paper): a hashed timing wheel whose slot lists are kept
//! sorted, each one exactly as scheme 2's list.
//!
//! Scheme 4 needs a slot per tick of the longest interval. Hashing folds any interval onto `M`
//! slots: a timer due on tick `d` goes on slot `d mod M` (Figure 6), the low bits of its
//! deadline; the high bits tell apart the timers sharing a slot. The cursor is the slot of
//! `now`, and each tick looks at the head of the new cursor's list only: the list is sorted by
//! deadline, so the timers due now, if any, are at its front. The price moves to start, which
//! walks the slot's list to the new timer's place: O(n) at worst, O(n/M) on average when the
//! hash spreads timers evenly — "a bucket sort on the low order bits, followed by an insertion
//! sort". With `M = 1` this is scheme 2.
//!
//! | routine     | cost                | note                                                  |
//! |-------------|---------------------|-------------------------------------------------------|
//! | start       | O(n/M) avg, O(n)    | walk slot `deadline mod M` to the first later deadline |
//! | stop        | O(1)                | unlink from the slot its deadline names               |
//! | reschedule  | O(n/M) avg, O(n)    | O(1) if the new deadline keeps its place, else a start |
//! | tick        | O(1)                | plus O(1) per expired timer                           |
//! | next expiry | O(M/64 + b)         | heads of the `b` busy slots up to the earliest timer  |
//!
//! The walk of a start is bounded and resumable exactly as scheme 2's (see `scheme2.rs`): cut
//! short by its work budget, it leaves the timer *placing*, the cursor on the first entry of
//! the slot not yet compared. A tickless clock jumps straight to the next expiry.
//!
//! # Hash and order
//!
//! `M` is a power of two, so `d mod M` is `d & (M - 1)`. It also divides 2^64, so the slot of
//! a deadline does not change when the clock wraps: a wheel started near 2^64 hashes exactly as
//! one started at 0. For the same reason lists are sorted by ticks *remaining*,
//! `deadline - now` modulo 2^64, never by raw deadline: remaining times keep their order as the
//! clock advances (none passes 0, since a timer leaves its list on the tick it reaches 0), while
//! raw deadlines on either side of the wrap would compare backwards. Where the paper stores
//! the high-order bits in the list, storing the whole deadline is as cheap and spares a
//! recomputation.
//!
//! Entries in the slot `k` ticks ahead of the cursor (`k` in `1..=M`, `M` for the cursor's own
//! slot) are due in `k`, `k + M`, `k + 2M`... ticks. That bounds what next_expiry must read:
//! going through the busy slots (an `Occupancy` bitmap) in order of `k`, the least remaining
//! time of the heads seen so far is final as soon as it is at most the next slot's `k`.
//! Next work is that search within a budget: cut short, it answers the tick before the first
//! slot it did not look at, and the next call takes it up there (`Partial`), so that timers
//! more than a turn away on more busy slots than the budget cost a tickless clock one wakeup
//! for nothing, not one every budget's worth of slots.
//!
//! Timers with equal deadlines keep their start order (a new one goes after its equals).

use core::cell::Cell;

use super::arena::{Arena, NIL};
use super::slots::Slots;
use super::sorted::{Back, Placing, PutBack};
use super::{Clock, Config, Error, NextExpiry, Scheme, SchemeKind, Storage, Work};

/// `Entry::list` of an entry on a slot (which slot, its deadline says).
const SLOTTED: u32 = 0;

/// The hashed wheel with sorted lists.
///
/// # Invariants
///
/// - An entry on `slots[s]` has `deadline & mask == s`.
/// - Each slot's list is ordered by `deadline - now` (modulo 2^64), ties in start order.
/// - While `placing` is set, every entry of its slot before its cursor is due no later than
///   it.
#[repr(C)]
pub struct HashedSorted<S: Storage> {
    /// First, as in every scheme: see [`super::AnyScheme`].
    pub(super) arena: Arena<S>,
    slots: Slots<S>,
    /// `M - 1`.
    mask: u64,
    /// The timer whose place a bounded walk of its slot is looking for.
    placing: Placing,
    /// The search for next work under way, or done and kept (see [`Partial`]).
    search: Cell<Option<Partial>>,
}

/// A search for next work (the heads of the busy slots, in the order the clock reaches them)
/// that its budget cut short, to be taken up again where it stopped by the next call, or a
/// whole search, kept: the busy slots the clock next reaches on ticks `from + 1 ..= upto` have
/// been looked at, and `best` is a lower bound of their deadlines, lowered by every timer filed
/// since. A budget of [`super::NEXT_WORK_SLOTS`] cannot look at more busy slots than that in
/// one call; taken up again, a search of every busy slot ends in a few calls, where starting
/// afresh each time would answer a tick a budget away for ever, and the clock wake for nothing
/// that often.
///
/// It stays valid while the clock has not passed `upto` (the slots not looked at are still
/// reached first on the ticks the search counts them from) nor reached `best` (the slots looked
/// at hold nothing due sooner, and what they hold is bounded no more once their earliest
/// fired). A stop or move of a timer due on `best` drops it (see `unlink`): the next call
/// searches afresh, rather than wake the clock for a timer that is gone.
#[derive(Clone, Copy, Debug)]
struct Partial {
    from: u64,
    upto: u64,
    best: u64,
}

/// How a look at the busy slots ended ([`HashedSorted::scan`]).
enum Scan {
    /// Nothing farther can be earlier than the earliest deadline seen.
    Whole,
    /// Out of work before the busy slot this many ticks away.
    Cut(u64),
    /// No slot is busy.
    Empty,
}

impl<S: Storage> HashedSorted<S> {
    /// An empty wheel of `config.slots` slots for `config.capacity` timers.
    ///
    /// Fails with [`Error::Config`] unless `config.slots` is a power of two.
    pub fn new(config: &Config) -> Result<Self, Error> {
        let m = config.slots;
        // A power of two is at most 2^31: slot numbers stay clear of the arena's list tags.
        if !m.is_power_of_two() {
            return Err(Error::Config);
        }
        Ok(HashedSorted {
            arena: Arena::new(config)?,
            slots: Slots::new(m)?,
            mask: u64::from(m) - 1,
            placing: Placing::NONE,
            search: Cell::new(None),
        })
    }

    /// The slot of the timers due on tick `deadline`.
    fn slot_of(&self, deadline: u64) -> u32 {
        (deadline & self.mask) as u32
    }

    /// Ticks from now until entry `idx` is due.
    fn remaining(&self, idx: u32) -> u64 {
        self.arena.remaining(self.arena.entry(idx).deadline)
    }

    arena_moves!(arena, queued_back: keep_due_back);

    /// The way back of a timer a reschedule took off the due queue, due on `was`, should its
    /// placement be walking ([`Scheme::abandon_placement`] queues it again).
    fn keep_due_back(&mut self, was: u64) {
        self.placing.keep_due_back(was);
    }

    /// The latest tick of the range: every place costs the same here, and a timer pushed back
    /// into a range again and again stays put for longest (see [`Scheme::reschedule`]).
    fn choose(&self, _earliest: u64, latest: u64) -> Result<u64, Error> {
        Ok(latest)
    }

    fn file(&mut self, idx: u32, deadline: u64, work: &mut Work) {
        self.begin_placing(idx, deadline, None, work);
    }

    /// Starts placing entry `idx`, on no list, from the head of the slot of `deadline` (or
    /// after the hint a placement given up left, see `sorted.rs`), within `work`; `back` for a
    /// reschedule, where it was.
    fn begin_placing(&mut self, idx: u32, deadline: u64, back: Option<Back>, work: &mut Work) {
        let head = self.slots.list(self.slot_of(deadline)).head;
        let mask = self.mask;
        let on_list = |arena: &Arena<S>, at: u32| {
            let e = arena.entry(at);
            e.list() == SLOTTED && e.deadline & mask == deadline & mask
        };
        self.placing
            .begin(&mut self.arena, idx, head, back, on_list);
        self.walk(work);
    }

    /// Puts a rescheduled timer still placing back where it was on its old slot
    /// ([`Placing::put_back`]); whether it did.
    fn put_back(&mut self) -> bool {
        let (slots, mask) = (&self.slots, self.mask);
        let head = |deadline: u64| slots.list((deadline & mask) as u32).head;
        match self.placing.put_back(&mut self.arena, head) {
            Some(PutBack::Before(idx, at)) => {
                let deadline = self.arena.entry(idx).deadline;
                let slot = self.slot_of(deadline);
                self.slots
                    .insert_before(&mut self.arena, slot, SLOTTED, at, idx);
                self.filed(deadline);
                true
            }
            Some(PutBack::Due(idx)) => {
                self.arena.queue(idx);
                true
            }
            None => false,
        }
    }

    /// Continues the walk of the placing timer; `true` once it is placed.
    fn walk(&mut self, work: &mut Work) -> bool {
        let Some((idx, at)) = self.placing.walk(&self.arena, work) else {
            return !self.placing.is_some();
        };
        // INVARIANT: after every entry due no later, before the first due later.
        let deadline = self.arena.entry(idx).deadline;
        let slot = self.slot_of(deadline);
        self.slots
            .insert_before(&mut self.arena, slot, SLOTTED, at, idx);
        self.filed(deadline);
        true
    }

    /// A timer due on `deadline` went onto a slot: the search lowers its bound (the slot may
    /// be one it has looked at), or is dropped if no longer valid (a bound the clock has
    /// reached, lowered to a deadline ahead, would bound nothing).
    fn filed(&self, deadline: u64) {
        if let Some(mut p) = self.search.get() {
            match self.valid(&p) {
                true => {
                    p.best = self.arena.sooner(p.best, deadline);
                    self.search.set(Some(p));
                }
                false => self.search.set(None),
            }
        }
    }

    /// Whether search `p` may be taken up (see [`Partial`]): the clock has not passed `upto`,
    /// nor reached `best`.
    fn valid(&self, p: &Partial) -> bool {
        self.arena.remaining(p.upto) <= self.mask + 1
            && (1..super::MAX_INTERVAL).contains(&self.arena.remaining(p.best))
    }

    fn unlink(&mut self, idx: u32, _work: &mut Work) {
        if self.placing.forget(&self.arena, idx) {
            return;
        }
        let deadline = self.arena.entry(idx).deadline;
        let slot = self.slot_of(deadline);
        self.slots.unlink(&mut self.arena, slot, idx);
        // The search's bound may have been this timer's deadline: it is looked for afresh, so
        // that the tickless clock does not wake for a timer stopped or moved later.
        if self.search.get().is_some_and(|p| p.best == deadline) {
            self.search.set(None);
        }
    }

    fn retime(&mut self, idx: u32, deadline: u64, work: &mut Work) -> bool {
        let old = self.arena.entry(idx).deadline;
        let (prev, next) = (self.arena.prev(idx), self.arena.next(idx));
        let left = self.arena.remaining(deadline);
        let fits = self.slot_of(old) == self.slot_of(deadline)
            && (prev == NIL || self.remaining(prev) <= left)
            && (next == NIL || left < self.remaining(next));
        if !fits {
            // Placed afresh, keeping its way back.
            self.unlink(idx, work);
            self.arena.entry_mut(idx).deadline = deadline;
            let back = Back {
                deadline: old,
                after: prev,
            };
            self.begin_placing(idx, deadline, Some(back), work);
            return true;
        }
        self.arena.entry_mut(idx).deadline = deadline;
        self.filed(deadline);
        true
    }

    fn enter(&mut self, tick: u64, _clock: Clock) {
        self.arena.begin_tick(tick);
    }

    /// Moves the placing timer to the due queue if it is due now (first, so that a tick never
    /// ends, nor a call returns, with a timer due and placing), then the entries of the clock's
    /// slot due now, all at its front.
    fn run_tick(&mut self, work: &mut Work) -> bool {
        let now = self.arena.now();
        if let Some(idx) = self.placing.take_due(&self.arena) {
            self.arena.queue(idx);
        }
        let slot = self.slot_of(now);
        let placing = &mut self.placing;
        self.slots
            .drain_due(&mut self.arena, slot, work, |idx, next| {
                placing.step_past(idx, next)
            })
    }

    fn next_busy(&self, work: &mut Work) -> Option<u64> {
        self.bound(work)
    }

    /// The earliest deadline pending or placing: a whole look at the busy slots.
    fn earliest(&self) -> Option<u64> {
        let mut best = None;
        self.scan(1, self.mask + 1, &mut best, &mut Work::unlimited());
        self.with_placing(best)
    }

    /// A lower bound of the deadlines pending or placing, after the ticks looked at: next work.
    /// The search goes on from where the last one stopped (see [`Partial`]).
    fn bound(&self, work: &mut Work) -> Option<u64> {
        let listed = self.least_bound(work);
        self.with_placing(listed)
    }

    /// The sooner of the placing timer's deadline and `listed`.
    fn with_placing(&self, listed: Option<u64>) -> Option<u64> {
        let placing = self.placing.deadline(&self.arena);
        match (listed, placing) {
            (Some(a), Some(b)) => Some(self.arena.sooner(a, b)),
            (a, b) => a.or(b),
        }
    }

    /// Looks at the heads of the busy slots the clock reaches `k..=end` ticks from now, in
    /// that order, lowering `best` (the earliest deadline seen), a unit of `work` each (the
    /// first whatever the budget while nothing is seen yet) and one for each word of the
    /// occupancy bitmap read to find it beyond its own, until nothing farther can be
    /// earlier ([`Scan::Whole`]), `work` runs out before the next busy slot
    /// ([`Scan::Cut`], its distance), or no slot is busy ([`Scan::Empty`]).
    fn scan(&self, mut k: u64, end: u64, best: &mut Option<u64>, work: &mut Work) -> Scan {
        let now = self.arena.now();
        while k <= end {
            // The bitmap's words read to find it beyond the slot's own are charged now; the
            // slot's unit below.
            let mut reads = 0;
            let next = self
                .slots
                .next_busy_counted(self.slot_of(now.wrapping_add(k)), &mut reads);
            work.spend(reads.saturating_sub(1));
            let Some(slot) = next else {
                return Scan::Empty;
            };
            let distance = self.distance(slot);
            // Round to a slot looked at (or that the clock has passed since), or nothing
            // farther can be earlier.
            let least = best.map(|b| self.arena.remaining(b));
            if distance < k || distance > end || least.is_some_and(|b| b <= distance) {
                break;
            }
            if work.is_spent() && best.is_some() {
                return Scan::Cut(distance);
            }
            work.spend(1);
            let head = self.arena.entry(self.slots.list(slot).head).deadline;
            *best = Some(best.map_or(head, |b| self.arena.sooner(b, head)));
            k = distance + 1;
        }
        Scan::Whole
    }

    /// A lower bound of the deadlines on the slots, the look of [`Self::earliest`] taken up
    /// where the last one stopped while that is still valid (see [`Partial`]), and kept once
    /// whole. Cut short by `work` (at least one unit), it answers the tick before the first
    /// busy slot it did not look at (or the earliest deadline seen, if sooner), so that a clock
    /// woken there finds the search still valid and takes it up.
    fn least_bound(&self, work: &mut Work) -> Option<u64> {
        // Every timer stopped: a kept bound bounds nothing.
        if self.arena.pending() == 0 {
            self.search.set(None);
            return None;
        }
        let now = self.arena.now();
        let turn = self.mask + 1;
        let kept = self.search.get().filter(|p| self.valid(p));
        // A unit at least, for a search taken up that has nothing left to look at.
        let before = work.done();
        let (from, mut best) = match kept {
            Some(p) => (p.from, Some(p.best)),
            None => (now, None),
        };
        // The distances from now of the search's last tick, and of the first not looked at.
        let end = self.arena.remaining(from.wrapping_add(turn));
        let k = kept.map_or(1, |p| self.arena.remaining(p.upto) + 1);
        match (self.scan(k, end, &mut best, work), best) {
            (Scan::Cut(distance), Some(b)) => {
                self.search.set(Some(Partial {
                    from,
                    upto: now.wrapping_add(distance - 1),
                    best: b,
                }));
                let least = self.arena.remaining(b).min(distance - 1).max(1);
                Some(now.wrapping_add(least))
            }
            (Scan::Whole, Some(b)) => {
                if work.done() == before {
                    work.spend(1);
                }
                self.search.set(Some(Partial {
                    from,
                    upto: from.wrapping_add(turn),
                    best: b,
                }));
                Some(b)
            }
            _ => {
                self.search.set(None);
                None
            }
        }
    }

    /// How far ahead of the cursor `slot` is: `1..=M`, the cursor's own slot being a whole turn.
    fn distance(&self, slot: u32) -> u64 {
        let k = u64::from(slot).wrapping_sub(self.arena.now()) & self.mask;
        if k == 0 {
            self.mask + 1
        } else {
            k
        }
    }
}

impl<S: Storage> Scheme for HashedSorted<S> {
    arena_delegates!(arena);

    fn placing(&self) -> bool {
        self.placing.is_some()
    }

    fn place(&mut self, work: &mut Work) -> bool {
        self.walk(work)
    }

    fn abandon_placement(&mut self) -> bool {
        self.put_back()
    }

    fn next_work(&self) -> Option<u64> {
        // `next_work_within` with its own budget, without spending on the short-cut.
        self.arena
            .tick_under_way()
            .or_else(|| self.bound(&mut Work::new(super::NEXT_WORK_SLOTS)))
    }

    fn next_work_within(&self, work: &mut Work) -> Option<u64> {
        match self.arena.ticking() {
            true => {
                work.spend(1);
                Some(self.arena.now())
            }
            false => self.bound(work),
        }
    }

    fn next_expiry(&self) -> NextExpiry {
        self.earliest().into()
    }

    fn memory_bytes(&self) -> usize {
        self.arena.memory_bytes() + self.slots.memory_bytes()
    }

    fn kind(&self) -> SchemeKind {
        SchemeKind::HashedSorted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{self, check_against, wakeups_until_due, Band, Foresight, Profile};
    use crate::HostStorage;
    use std::vec::Vec;

    fn wheel(capacity: u32, slots: u32, start: u64) -> HashedSorted<HostStorage> {
        HashedSorted::new(&Config {
            capacity,
            slots,
            start,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn far_timers_on_every_slot_cost_one_wakeup_for_the_search() {
        // 1,000 timers 7 ticks apart from 10,000 on, on a wheel of 256 slots: every slot busy,
        // every timer more than a turn away, so a whole search looks at all 256 slots, twice
        // next work's budget.
        let far = || {
            let mut w = wheel(1024, 256, 3);
            for i in 0..1000 {
                w.start(10_000 + 7 * i, i).unwrap();
            }
            check(&w);
            w
        };
        // Cut short, a search answers the tick before the first slot it did not look at...
        let w = far();
        let mut work = Work::new(crate::NEXT_WORK_SLOTS);
        let first = w.next_work_within(&mut work).unwrap();
        assert!(first < 10_003, "{first}");
        assert_eq!(work.done(), crate::NEXT_WORK_SLOTS);
        // ... and the next call takes it up and ends it: the first deadline.
        assert_eq!(w.next_work(), Some(10_003));
        // So a clock sleeping from bound to bound wakes once for nothing, where a search begun
        // afresh each time woke every 128 ticks or so (79 times here).
        let mut w = far();
        assert_eq!(wakeups_until_due(&mut w), 2);
        assert_eq!(
            w.pop_expired().map(|e| (e.id, e.deadline)),
            Some((0, 10_003))
        );
        // The next timer is in the first slots a search looks at: one wakeup.
        assert_eq!(wakeups_until_due(&mut w), 1);
        assert_eq!(w.pop_expired().map(|e| e.id), Some(1));
        // A start sooner than all lowers the bound kept; its stop drops it, and the search
        // afresh finds the next timer in the first slots it looks at: no wakeup for nothing.
        let h = w.start(3, 2000).unwrap();
        assert_eq!(w.next_work(), Some(10_013));
        w.stop(h).unwrap();
        assert_eq!(w.next_work(), Some(10_017));
        assert_eq!(wakeups_until_due(&mut w), 1);
        assert_eq!(w.pop_expired().map(|e| e.id), Some(2));
        check(&w);
    }

    /// Checks the type invariants: tags, hashing, order and the bitmap.
    fn check(w: &HashedSorted<HostStorage>) {
        for s in 0..w.slots.len() {
            let list = *w.slots.list(s);
            assert_eq!(list.is_empty(), w.slots.next_busy(s) != Some(s), "slot {s}");
            let mut last = 0;
            let mut at = list.head;
            while at != NIL {
                let e = w.arena.entry(at);
                assert_eq!(e.deadline & w.mask, u64::from(s));
                assert!(w.remaining(at) >= last.max(1), "slot {s} out of order");
                last = w.remaining(at);
                at = e.next;
            }
        }
    }

    /// The ids on `slot`, in list order.
    fn ids(w: &HashedSorted<HostStorage>, slot: u32) -> Vec<u64> {
        let mut out = Vec::new();
        let mut at = w.slots.list(slot).head;
        while at != NIL {
            out.push(w.arena.entry(at).id);
            at = w.arena.next(at);
        }
        out
    }

    #[test]
    fn slots_must_be_a_power_of_two() {
        model::slots_must_be_a_power_of_two(HashedSorted::<HostStorage>::new);
    }

    #[test]
    fn slot_is_the_deadline_mod_m() {
        let mut w = wheel(8, 16, 0);
        assert_eq!(w.slot_of(0), 0);
        assert_eq!(w.slot_of(15), 15);
        assert_eq!(w.slot_of(16), 0);
        assert_eq!(w.slot_of(u64::MAX), 15);
        for _ in 0..5 {
            w.tick();
        }
        w.start(20, 0).unwrap();
        assert_eq!(ids(&w, 9), [0]);
        assert_eq!(w.distance(9), 4);
        assert_eq!(w.distance(5), 16);
        assert_eq!(w.distance(6), 1);
    }

    #[test]
    fn lists_stay_sorted_and_ties_keep_start_order() {
        let mut w = wheel(8, 4, 0);
        for (id, interval) in [(0, 9), (1, 1), (2, 5), (3, 13), (4, 5), (5, 1)] {
            w.start(interval, id).unwrap();
        }
        assert_eq!(ids(&w, 1), [1, 5, 2, 4, 0, 3]);
        check(&w);
        // The tick takes only what is due: the heads.
        assert_eq!(w.tick(), 2);
        assert_eq!(ids(&w, 1), [2, 4, 0, 3]);
        let fired: Vec<u64> = core::iter::from_fn(|| w.pop_expired())
            .map(|e| e.id)
            .collect();
        assert_eq!(fired, [1, 5]);
        assert_eq!(
            model::tick_and_pop(&mut w, 12, check),
            [(4, 2), (4, 4), (8, 0), (12, 3)]
        );
    }

    #[test]
    fn sorted_across_the_wrap_of_the_clock() {
        for start in [u64::MAX - 1000, u64::MAX - 3, (1 << 32) - 5] {
            let mut w = wheel(8, 4, start);
            for _ in 0..998 {
                w.tick();
            }
            // All four share a slot; from u64::MAX - 1000 their deadlines straddle 2^64, and
            // only the time remaining orders them.
            let now = w.now();
            for (id, interval) in [(0, 9), (1, 5), (2, 1), (3, 13)] {
                w.start(interval, id).unwrap();
            }
            check(&w);
            assert_eq!(w.next_expiry(), NextExpiry::At(now.wrapping_add(1)));
            assert_eq!(
                model::tick_and_pop(&mut w, 14, check),
                [(1, 2), (5, 1), (9, 0), (13, 3)]
            );
        }
    }

    #[test]
    fn one_slot_is_scheme_2() {
        let mut w = wheel(8, 1, 0);
        for (id, interval) in [(0, 10), (1, 4), (2, 10), (3, 7)] {
            w.start(interval, id).unwrap();
        }
        assert_eq!(ids(&w, 0), [1, 3, 0, 2]);
        assert_eq!(w.next_expiry(), NextExpiry::At(4));
        assert_eq!(
            model::tick_and_pop(&mut w, 10, check),
            [(4, 1), (7, 3), (10, 0), (10, 2)]
        );
    }

    #[test]
    fn stop_pending_and_queued() {
        let mut w = wheel(8, 4, 0);
        let a = w.start(2, 10).unwrap();
        let b = w.start(2, 11).unwrap();
        let c = w.start(6, 12).unwrap();
        assert_eq!(w.stop(c), Ok(12));
        assert_eq!(ids(&w, 2), [10, 11]);
        w.tick();
        assert_eq!(w.tick(), 2);
        assert!(w.slots.list(2).is_empty());
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
        assert_eq!(ids(&w, 1), [1, 2]);
        assert!(w.slots.list(3).is_empty());
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
    fn next_expiry_looks_beyond_one_turn() {
        let mut w = wheel(8, 8, 0);
        assert_eq!(w.next_expiry(), NextExpiry::Idle);
        w.start(30, 0).unwrap();
        w.start(21, 1).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(21));
        w.start(8, 2).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(8));
        w.start(7, 3).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(7));
        assert_eq!(model::tick_and_pop(&mut w, 8, check), [(7, 3), (8, 2)]);
        // Slot 6 (21) is ahead of slot 0 (30); slot 0 is now the cursor's, a whole turn away.
        assert_eq!(w.next_expiry(), NextExpiry::At(21));
    }

    #[test]
    fn matches_the_model() {
        let profile = Profile {
            intervals: &[(1023, Band::Upto(100)), (1, Band::Longest)],
            range: None,
            foresight: Foresight::Exact,
            check_every: 1,
            reach: 1 << 34,
            tiny_budgets: false,
        };
        for (seed, slots, start) in [(4, 16, 0), (5, 8, (1 << 32) - 50), (6, 1, u64::MAX - 1000)] {
            check_against(&mut wheel(64, slots, start), seed, 100_000, &profile, check);
        }
    }
}
