// SPDX-License-Identifier: GPL-2.0

//! Scheme 2 (section III of the paper): one list ordered by deadline, each entry holding its
//! time *relative to the entry before it* — the traditional BSD callout list, and the baseline
//! of Figure 9.
//!
//! Because times are differential, a tick touches only the head: take the ticks elapsed off its
//! delta, and while the head's delta is zero, it (and every following entry with delta zero)
//! is due. The price is paid at start: finding the place of a new timer walks the list, O(n).
//!
//! | routine     | cost | note                                                     |
//! |-------------|------|----------------------------------------------------------|
//! | start       | O(n) | walk to the first later deadline, bounded and resumable  |
//! | stop        | O(1) | hand the stopped entry's delta to its successor          |
//! | reschedule  | O(n) | O(1) if the new deadline keeps its place, else a start   |
//! | tick        | O(1) | plus O(1) per expired timer; idle ticks skipped in O(1)  |
//! | next expiry | O(1) | the head                                                 |
//!
//! # Bounded placement
//!
//! The walk of a start (or reschedule) stops when its work budget is spent, leaving the timer
//! *placing*: off the list, its handle valid, the walk's cursor on the first entry not yet
//! compared. Everything before the cursor is due no later than the placing timer, and stays so
//! while the clock runs (deltas change, deadlines do not); an entry leaving the list (stopped,
//! due, moved) moves the cursor on if it stood on it. [`Scheme::place`] resumes the walk. A
//! placing timer whose deadline comes is queued on it, like any other. The walk compares
//! absolute deadlines (as distances from now) rather than summing deltas, so that nothing in
//! the cursor needs fixing when the clock moves. A placement given up (its timer stopped, a
//! reschedule put back) leaves the last entry it had passed as a hint, so that the same start
//! made again goes on from there (see `sorted.rs`).
//!
//! Timers with equal deadlines keep their start order (a new one goes after its equals), as in
//! BSD's `timeout()`.

use super::arena::{Arena, List, NIL};
use super::sorted::{Back, Placing, PutBack};
use super::{Clock, Config, Error, NextExpiry, Scheme, SchemeKind, Storage, Work};

/// `Entry::list` of an entry on the ordered list.
const ORDERED: u32 = 0;

/// The ordered list with differential times.
///
/// # Invariants
///
/// - For the entries on `list` in order, `delta` of the first is its deadline minus `now`, and
///   `delta` of each other is its deadline minus its predecessor's: deltas are never negative.
/// - While `placing` is set, every entry before its cursor is due no later than it.
#[repr(C)]
pub struct OrderedList<S: Storage> {
    /// First, as in every scheme: see [`super::AnyScheme`].
    pub(super) arena: Arena<S>,
    list: List,
    /// Each entry's differential time, by arena index.
    delta: S::Buf<u64>,
    /// The timer whose place a bounded walk of `list` is looking for.
    placing: Placing,
}

impl<S: Storage> OrderedList<S> {
    /// An empty list for `config.capacity` timers.
    pub fn new(config: &Config) -> Result<Self, Error> {
        let arena = Arena::new(config)?;
        let delta = S::alloc(arena.capacity(), |_| 0)?;
        Ok(OrderedList {
            arena,
            list: List::EMPTY,
            delta,
            placing: Placing::NONE,
        })
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

    fn file(&mut self, idx: u32, _deadline: u64, work: &mut Work) {
        self.begin_placing(idx, None, work);
    }

    /// Starts placing entry `idx`, on no list, from the head of the list (or after the hint a
    /// placement given up left, see `sorted.rs`), within `work`; `back` for a reschedule, where
    /// it was.
    fn begin_placing(&mut self, idx: u32, back: Option<Back>, work: &mut Work) {
        let on_list = |arena: &Arena<S>, at: u32| arena.entry(at).list() == ORDERED;
        self.placing
            .begin(&mut self.arena, idx, self.list.head, back, on_list);
        self.walk(work);
    }

    /// Puts a rescheduled timer still placing back where it was ([`Placing::put_back`]);
    /// whether it did.
    fn put_back(&mut self) -> bool {
        let head = self.list.head;
        match self.placing.put_back(&mut self.arena, |_| head) {
            Some(PutBack::Before(idx, at)) => {
                self.insert_before(at, idx);
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
        match self.placing.walk(&self.arena, work) {
            Some((idx, at)) => {
                self.insert_before(at, idx);
                true
            }
            None => !self.placing.is_some(),
        }
    }

    /// Links entry `idx` before entry `at` (at the end for [`NIL`]), where its deadline keeps
    /// the list in order.
    fn insert_before(&mut self, at: u32, idx: u32) {
        let prev = match at {
            NIL => self.list.tail,
            _ => self.arena.prev(at),
        };
        let deadline = self.arena.entry(idx).deadline;
        let before = match prev {
            NIL => self.arena.now(),
            _ => self.arena.entry(prev).deadline,
        };
        // INVARIANT: the new entry is relative to its predecessor, its successor to it.
        self.delta[idx as usize] = deadline.wrapping_sub(before);
        if at != NIL {
            let after = self.arena.entry(at).deadline;
            self.delta[at as usize] = after.wrapping_sub(deadline);
        }
        self.arena.insert_before(&mut self.list, ORDERED, at, idx);
    }

    fn unlink(&mut self, idx: u32, _work: &mut Work) {
        if self.placing.forget(&self.arena, idx) {
            return;
        }
        let next = self.arena.next(idx);
        if next != NIL {
            self.delta[next as usize] += self.delta[idx as usize];
        }
        self.arena.unlink(&mut self.list, idx);
    }

    fn retime(&mut self, idx: u32, deadline: u64, work: &mut Work) -> bool {
        let (prev, next) = (self.arena.prev(idx), self.arena.next(idx));
        let left = self.arena.remaining(deadline);
        let fits = (prev == NIL || self.remaining(prev) <= left)
            && (next == NIL || left < self.remaining(next));
        let back = Back {
            deadline: self.arena.entry(idx).deadline,
            after: prev,
        };
        self.unlink(idx, work);
        self.arena.entry_mut(idx).deadline = deadline;
        match fits {
            true => self.insert_before(next, idx),
            // Placed afresh, keeping its way back.
            false => self.begin_placing(idx, Some(back), work),
        }
        true
    }

    fn enter(&mut self, tick: u64, _clock: Clock) {
        let elapsed = tick.wrapping_sub(self.arena.now());
        self.arena.begin_tick(tick);
        let head = self.list.head;
        if head != NIL {
            // INVARIANT: the head is relative to the new now; no tick entered is after it.
            self.delta[head as usize] -= elapsed;
        }
    }

    /// Queues the placing timer if it is due now (first, so that a tick never ends, nor a
    /// call returns, with a timer due and placing), then the heads with nothing left.
    fn run_tick(&mut self, work: &mut Work) -> bool {
        if let Some(idx) = self.placing.take_due(&self.arena) {
            self.arena.queue(idx);
        }
        let mut first = true;
        loop {
            let head = self.list.head;
            if head == NIL || self.delta[head as usize] != 0 {
                break;
            }
            if work.is_spent() && !first {
                return false;
            }
            first = false;
            work.spend(1);
            self.unlink(head, work);
            self.arena.queue(head);
        }
        true
    }

    fn next_busy(&self, work: &mut Work) -> Option<u64> {
        work.spend(1);
        self.next_work()
    }
}

impl<S: Storage> Scheme for OrderedList<S> {
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
        self.arena.tick_under_way().or_else(|| self.earliest())
    }

    fn next_expiry(&self) -> NextExpiry {
        self.earliest().into()
    }

    fn memory_bytes(&self) -> usize {
        self.arena.memory_bytes() + self.delta.len() * core::mem::size_of::<u64>()
    }

    fn kind(&self) -> SchemeKind {
        SchemeKind::OrderedList
    }
}

impl<S: Storage> OrderedList<S> {
    /// The earliest deadline pending or placing.
    fn earliest(&self) -> Option<u64> {
        let head = match self.list.head {
            NIL => None,
            head => Some(self.arena.entry(head).deadline),
        };
        let placing = self.placing.deadline(&self.arena);
        match (head, placing) {
            (Some(a), Some(b)) => Some(self.arena.sooner(a, b)),
            (a, b) => a.or(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{check_against, Foresight, Profile};
    use crate::HostStorage;
    use std::vec::Vec;

    fn list() -> OrderedList<HostStorage> {
        OrderedList::new(&Config::default()).unwrap()
    }

    fn deltas(l: &OrderedList<HostStorage>) -> Vec<u64> {
        let mut out = Vec::new();
        let mut at = l.list.head;
        while at != NIL {
            out.push(l.delta[at as usize]);
            at = l.arena.next(at);
        }
        out
    }

    #[test]
    fn deltas_are_differential_and_ties_keep_order() {
        let mut l = list();
        l.start(10, 0).unwrap();
        l.start(4, 1).unwrap();
        l.start(10, 2).unwrap();
        l.start(7, 3).unwrap();
        assert_eq!(deltas(&l), [4, 3, 3, 0]);
        assert_eq!(l.next_expiry(), NextExpiry::At(4));
    }

    #[test]
    fn stop_hands_delta_to_successor() {
        let mut l = list();
        l.start(4, 0).unwrap();
        let h = l.start(7, 1).unwrap();
        l.start(10, 2).unwrap();
        assert_eq!(l.stop(h), Ok(1));
        assert_eq!(deltas(&l), [4, 6]);
        assert_eq!(l.stop(h), Err(Error::Stale));
    }

    /// Checks the type invariant: each delta is the entry's deadline minus its predecessor's,
    /// the first one's minus now.
    fn check(l: &OrderedList<HostStorage>) {
        let mut before = l.now();
        let mut at = l.list.head;
        while at != NIL {
            let e = l.arena.entry(at);
            let delta = l.delta[at as usize];
            assert_eq!(delta, e.deadline.wrapping_sub(before), "entry {at}");
            before = e.deadline;
            at = e.next;
        }
    }

    #[test]
    fn random_ops_match_model() {
        let profile = Profile::slotless(Foresight::Exact);
        for (seed, start) in [(1, 0), (2, u64::MAX - 1000)] {
            let config = Config {
                capacity: 256,
                slots: 0,
                start,
                ..Default::default()
            };
            let mut l = OrderedList::new(&config).unwrap();
            check_against(&mut l, seed, 100_000, &profile, check);
        }
    }
}
