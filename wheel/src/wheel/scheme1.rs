// SPDX-License-Identifier: GPL-2.0

//! Scheme 1 (section III.A of the paper): straightforward. Every tick looks at every
//! outstanding timer; a timer whose time has come is due.
//!
//! The timers sit on one unordered list, so starting and stopping are O(1) (append; unlink
//! through the handle), at the price of touching every timer on every tick. It needs no space
//! beyond one record per timer, and suits a few timers, or timers mostly stopped within a few
//! ticks.
//!
//! The paper's "Decrement option" keeps the ticks each timer has left and decrements them all;
//! here each entry keeps its absolute deadline and the walk compares it with the clock. The
//! cost is the same, one look per timer per tick, but nothing changes in an entry that is not
//! due, which buys two things: a walk cut short by a work budget resumes where it stopped
//! without any entry being counted twice or not at all, and a tickless clock can skip idle
//! ticks without touching a single timer. Deadlines are compared for equality only, so the
//! clock rolling over at 2^64 changes nothing.
//!
//! | routine     | cost | note                                                       |
//! |-------------|------|------------------------------------------------------------|
//! | start       | O(1) | append                                                     |
//! | stop        | O(1) | unlink (moving the walk's cursor on if it stood there)     |
//! | reschedule  | O(1) | a new deadline in place                                    |
//! | tick        | O(n) | compare every pending deadline with the clock, resumable   |
//! | next work   | O(1) | a lower bound of the earliest deadline                     |
//! | next expiry | —    | unknown without a walk: [`NextExpiry::Unknown`]            |
//!
//! # The tickless clock
//!
//! `bound` is a lower bound of every pending deadline: lowered by every start and reschedule,
//! made exact by every complete walk (the minimum of what the walk left pending, and of what
//! was started or moved while it went), and loosened only by stops and moves of the earliest
//! timer, unless at most 64 are pending: those look at them all to make it exact again. A
//! tickless clock runs a walk on `bound` alone and jumps the ticks before it in O(1).
//!
//! Timers due on the same tick are queued in list order.

use super::arena::{Arena, List, NIL};
use super::{Clock, Config, Error, NextExpiry, Scheme, SchemeKind, Storage, Work};

/// `Entry::list` of an entry on the list.
const LISTED: u32 = 0;

/// The most pending timers a stop or move of the earliest looks at to raise the bound: stop and
/// reschedule stay O(1), and the few timers this scheme suits cost no wakeup when cancelled.
const RAISE_LIMIT: usize = 64;

/// The unordered list of timers, with a resumable walk.
///
/// # Invariants
///
/// - `list` holds exactly the pending entries.
/// - Every pending deadline is at or after `bound` (counted from now); after a complete tick,
///   `bound` is after now.
/// - While a walk is in progress (`walk != NIL` during a tick), the entries before `walk`
///   have been compared on this tick and are pending, each at or after `walk_min`.
#[repr(C)]
pub struct Straightforward<S: Storage> {
    /// First, as in every scheme: see [`super::AnyScheme`].
    pub(super) arena: Arena<S>,
    list: List,
    bound: u64,
    /// The next entry the current tick's walk compares, or [`NIL`].
    walk: u32,
    /// The least deadline the current walk has seen.
    walk_min: u64,
    /// Whether the current tick runs a walk.
    walking: bool,
}

impl<S: Storage> Straightforward<S> {
    /// An empty list for `config.capacity` timers.
    pub fn new(config: &Config) -> Result<Self, Error> {
        let arena = Arena::new(config)?;
        let never = arena.never();
        Ok(Straightforward {
            arena,
            list: List::EMPTY,
            bound: never,
            walk: NIL,
            walk_min: never,
            walking: false,
        })
    }

    /// Lowers the bounds to `deadline`.
    fn lower(&mut self, deadline: u64) {
        self.bound = self.arena.sooner(self.bound, deadline);
        self.walk_min = self.arena.sooner(self.walk_min, deadline);
    }

    arena_moves!(arena);

    /// The latest tick of the range: every place costs the same here, and a timer pushed back
    /// into a range again and again stays put for longest (see [`Scheme::reschedule`]).
    fn choose(&self, _earliest: u64, latest: u64) -> Result<u64, Error> {
        Ok(latest)
    }

    fn file(&mut self, idx: u32, deadline: u64, _work: &mut Work) {
        if self.list.is_empty() {
            self.bound = self.arena.never();
        }
        self.arena.push_back(&mut self.list, LISTED, idx);
        self.lower(deadline);
    }

    fn unlink(&mut self, idx: u32, work: &mut Work) {
        if self.walk == idx {
            self.walk = self.arena.next(idx);
        }
        self.arena.unlink(&mut self.list, idx);
        // Still counted pending, no longer listed.
        let listed = self.arena.pending() - 1;
        self.raise(self.arena.entry(idx).deadline, listed, work);
    }

    fn retime(&mut self, idx: u32, deadline: u64, work: &mut Work) -> bool {
        let old = core::mem::replace(&mut self.arena.entry_mut(idx).deadline, deadline);
        self.lower(deadline);
        self.raise(old, self.arena.pending(), work);
        true
    }

    /// A timer due on `old` was stopped or moved: if the bound was its deadline, it is made
    /// exact again from the `listed` timers on the list while they are few (at most
    /// [`RAISE_LIMIT`]) and `work` has a unit for each, so that a tickless clock does not wake
    /// for a timer that is gone; else it stays, still a lower bound, until the walk on it. Not
    /// while a tick is half done: its walk keeps the bound.
    fn raise(&mut self, old: u64, listed: usize, work: &mut Work) {
        if old != self.bound || self.arena.ticking() || listed > RAISE_LIMIT.min(work.left()) {
            return;
        }
        work.spend(listed);
        self.bound = self.arena.earliest(&self.list);
    }

    fn enter(&mut self, tick: u64, clock: Clock) {
        self.arena.begin_tick(tick);
        // A tickless clock enters no tick before `bound` but `target`, which needs no walk.
        self.walking = clock == Clock::Periodic || tick == self.bound;
        self.walk = match self.walking {
            true => self.list.head,
            false => NIL,
        };
        self.walk_min = self.arena.never();
    }

    fn run_tick(&mut self, work: &mut Work) -> bool {
        let list = &mut self.list;
        if !self
            .arena
            .walk_due(&mut self.walk, &mut self.walk_min, work, |a, at| {
                a.unlink(list, at)
            })
        {
            return false;
        }
        if self.walking {
            // INVARIANT: the walk saw every entry still pending, or lowered `walk_min` as
            // they were started or moved.
            self.bound = self.walk_min;
        }
        true
    }

    fn next_busy(&self, work: &mut Work) -> Option<u64> {
        work.spend(1);
        self.next_work()
    }
}

impl<S: Storage> Scheme for Straightforward<S> {
    arena_delegates!(arena);

    fn next_work(&self) -> Option<u64> {
        if self.arena.ticking() {
            return Some(self.arena.now());
        }
        match self.list.is_empty() {
            true => None,
            false => Some(self.bound),
        }
    }

    fn next_expiry(&self) -> NextExpiry {
        match self.list.is_empty() {
            true => NextExpiry::Idle,
            false => NextExpiry::Unknown,
        }
    }

    fn memory_bytes(&self) -> usize {
        self.arena.memory_bytes()
    }

    fn kind(&self) -> SchemeKind {
        SchemeKind::Straightforward
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{check_against, Foresight, Profile};
    use crate::{Advanced, HostStorage};
    use std::vec::Vec;

    fn list(start: u64) -> Straightforward<HostStorage> {
        Straightforward::new(&Config {
            capacity: 256,
            slots: 0,
            start,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn cancelling_the_earliest_of_a_few_raises_the_bound() {
        // A few pending: a stop or push-back of the earliest looks at all the others, one unit
        // each, up to RAISE_LIMIT of them.
        let mut l = list(0);
        let hs: Vec<_> = (0..RAISE_LIMIT as u64)
            .map(|i| l.start(100 + i, i).unwrap())
            .collect();
        let first = l.start(50, 99).unwrap();
        assert_eq!(l.next_work(), Some(50));
        let mut work = Work::unlimited();
        l.stop_within(first, &mut work).unwrap();
        assert_eq!(l.next_work(), Some(100));
        assert_eq!(work.done(), RAISE_LIMIT);
        l.reschedule(hs[0], 500, 500).unwrap();
        assert_eq!(l.next_work(), Some(101));
        // Too few units left: the bound stays, still a lower bound.
        l.stop_within(hs[1], &mut Work::new(8)).unwrap();
        assert_eq!(l.next_work(), Some(101));
        // More than RAISE_LIMIT left: the same.
        let mut l = list(0);
        for i in 0..=RAISE_LIMIT as u64 {
            l.start(100 + i, i).unwrap();
        }
        let first = l.start(50, 99).unwrap();
        l.stop(first).unwrap();
        assert_eq!(l.next_work(), Some(50));
    }

    /// The ticks each listed timer has left, in list order.
    fn counts(l: &Straightforward<HostStorage>) -> Vec<u64> {
        let mut out = Vec::new();
        let mut at = l.list.head;
        while at != NIL {
            out.push(l.arena.remaining(l.arena.entry(at).deadline));
            at = l.arena.next(at);
        }
        out
    }

    #[test]
    fn every_tick_counts_every_timer_down() {
        let mut l = list(0);
        l.start(3, 0).unwrap();
        l.start(1, 1).unwrap();
        l.start(2, 2).unwrap();
        assert_eq!(counts(&l), [3, 1, 2]);
        assert_eq!(l.next_expiry(), NextExpiry::Unknown);
        assert_eq!(l.tick(), 1);
        assert_eq!(counts(&l), [2, 1]);
        assert_eq!(l.pop_expired().map(|e| (e.id, e.deadline)), Some((1, 1)));
        assert_eq!(l.tick(), 1);
        assert_eq!(l.tick(), 1);
        assert_eq!(l.next_expiry(), NextExpiry::Idle);
        assert_eq!(l.pop_expired().map(|e| e.id), Some(2));
        assert_eq!(l.pop_expired().map(|e| e.id), Some(0));
    }

    #[test]
    fn stop_before_and_after_queueing() {
        let mut l = list(u64::MAX);
        let a = l.start(1, 1).unwrap();
        let b = l.start(5, 2).unwrap();
        assert_eq!(l.stop(b), Ok(2));
        assert_eq!(l.stop(b), Err(Error::Stale));
        assert_eq!(l.tick(), 1);
        assert_eq!(l.now(), 0);
        assert_eq!(l.stop(a), Ok(1));
        assert_eq!(l.pop_expired(), None);
        assert!(l.is_empty());
    }

    /// Checks the type invariants: `bound` is a lower bound, after now.
    fn check(l: &Straightforward<HostStorage>) {
        let bound = l.arena.remaining(l.bound);
        assert!(
            l.list.is_empty() || bound >= 1,
            "bound {} at {}",
            l.bound,
            l.now()
        );
        let mut at = l.list.head;
        while at != NIL {
            let e = l.arena.entry(at);
            assert!(
                l.arena.remaining(e.deadline) >= bound,
                "entry {at} before the bound"
            );
            at = l.arena.next(at);
        }
    }

    #[test]
    fn tickless_skips_to_the_bound_and_walks_resume() {
        let mut l = list(0);
        let far = l.start(1000, 0).unwrap();
        l.start(500, 1).unwrap();
        assert_eq!(l.next_work(), Some(500));
        // One jump, one walk.
        let mut work = Work::unlimited();
        assert_eq!(l.advance(10_000, Clock::Tickless, &mut work), Advanced::Due);
        assert_eq!((l.now(), work.done()), (500, 3));
        assert_eq!(l.pop_expired().map(|e| e.id), Some(1));
        assert_eq!(l.next_work(), Some(1000));
        // A walk cut short, its cursor stopped, then resumed.
        for id in 2..6 {
            l.start(500, id).unwrap();
        }
        let mut work = Work::new(1);
        assert_eq!(
            l.advance(1000, Clock::Tickless, &mut work),
            Advanced::OutOfWork
        );
        assert_eq!(l.stop(far), Ok(0));
        assert_eq!(l.next_work(), Some(1000));
        let mut work = Work::unlimited();
        assert_eq!(l.advance(1000, Clock::Tickless, &mut work), Advanced::Due);
        let fired: Vec<u64> = core::iter::from_fn(|| l.pop_expired())
            .map(|e| e.id)
            .collect();
        assert_eq!(fired, [2, 3, 4, 5]);
        assert_eq!(l.next_work(), None);
        check(&l);
    }

    #[test]
    fn random_ops_match_model() {
        let profile = Profile::slotless(Foresight::Blind);
        for (seed, start) in [(1, 0), (2, u64::MAX - 1000)] {
            check_against(&mut list(start), seed, 200_000, &profile, check);
        }
    }
}
