// SPDX-License-Identifier: GPL-2.0

//! Scheme 1 (section III.A of the paper): straightforward. Every outstanding timer holds the
//! ticks it has left, and every tick decrements each of them; a timer whose count reaches zero
//! is due.
//!
//! The paper's "Decrement option": the timers sit on one unordered list, so starting and
//! stopping are O(1) (append; unlink through the handle), at the price of touching every timer
//! on every tick. It needs no space beyond one record per timer, and suits a few timers, or
//! timers mostly stopped within a few ticks. Counting down is immune to the clock rolling over
//! at 2^64: no deadline is ever compared.
//!
//! | routine     | cost | note                                              |
//! |-------------|------|---------------------------------------------------|
//! | start       | O(1) | append                                            |
//! | stop        | O(1) | unlink                                            |
//! | tick        | O(n) | decrement every pending timer                     |
//! | next expiry | —    | unknown without a walk: [`NextExpiry::Unknown`]   |
//!
//! Timers due on the same tick are queued in start order.

use super::arena::{Arena, List, NIL};
use super::{Config, Error, Handle, NextExpiry, Scheme, SchemeKind, Storage};

/// `Entry::list` of an entry on the list.
const LISTED: u32 = 0;

/// The unordered list of count-down timers.
///
/// # Invariants
///
/// `list` holds exactly the pending entries, each with `aux` the ticks it has left: its
/// deadline minus `now`, at least 1.
pub struct Straightforward<S: Storage> {
    arena: Arena<S>,
    list: List,
}

impl<S: Storage> Straightforward<S> {
    /// An empty list for `config.capacity` timers.
    pub fn new(config: &Config) -> Result<Self, Error> {
        Ok(Straightforward {
            arena: Arena::new(config)?,
            list: List::EMPTY,
        })
    }

    /// Takes one tick off entry `idx`; queues it if that was its last.
    fn count_down(&mut self, idx: u32) -> bool {
        let left = &mut self.arena.entry_mut(idx).aux;
        *left -= 1;
        if *left != 0 {
            return false;
        }
        self.arena.unlink(&mut self.list, idx);
        self.arena.queue(idx);
        true
    }
}

impl<S: Storage> Scheme for Straightforward<S> {
    fn start(&mut self, interval: u64, id: u64) -> Result<Handle, Error> {
        let deadline = self.arena.deadline(interval)?;
        let idx = self.arena.alloc(id, deadline)?;
        // INVARIANT: `interval` is the deadline minus now.
        self.arena.entry_mut(idx).aux = interval;
        self.arena.push_back(&mut self.list, LISTED, idx);
        Ok(self.arena.handle(idx))
    }

    fn stop(&mut self, handle: Handle) -> Result<u64, Error> {
        let idx = self.arena.resolve(handle)?;
        if !self.arena.is_queued(idx) {
            self.arena.unlink(&mut self.list, idx);
        }
        Ok(self.arena.release(idx))
    }

    fn tick(&mut self) -> usize {
        self.arena.advance();
        let mut fired = 0;
        let mut at = self.list.head;
        while at != NIL {
            // Read the successor first: a due entry leaves the list.
            let next = self.arena.next(at);
            fired += usize::from(self.count_down(at));
            at = next;
        }
        fired
    }

    arena_delegates!(arena);

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
    use super::super::model::{check_against, Foresight, Profile};
    use super::*;
    use crate::HostStorage;
    use std::vec::Vec;

    fn list(start: u64) -> Straightforward<HostStorage> {
        Straightforward::new(&Config {
            capacity: 256,
            slots: 0,
            start,
        })
        .unwrap()
    }

    fn counts(l: &Straightforward<HostStorage>) -> Vec<u64> {
        l.arena.auxes(&l.list)
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

    /// Checks the type invariant: each count is the ticks left until the deadline.
    fn check(l: &Straightforward<HostStorage>) {
        let mut at = l.list.head;
        while at != NIL {
            let e = l.arena.entry(at);
            assert_eq!(e.aux, e.deadline.wrapping_sub(l.now()), "entry {at}");
            at = l.arena.next(at);
        }
    }

    #[test]
    fn random_ops_match_model() {
        let profile = Profile::slotless(Foresight::Blind);
        for (seed, start) in [(1, 0), (2, u64::MAX - 1000)] {
            check_against(&mut list(start), seed, 200_000, &profile, check);
        }
    }
}
