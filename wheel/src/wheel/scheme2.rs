// SPDX-License-Identifier: GPL-2.0

//! Scheme 2 (section III of the paper): one list ordered by deadline, each entry holding its
//! time *relative to the entry before it* — the traditional BSD callout list, and the baseline
//! of Figure 9.
//!
//! Because times are differential, a tick touches only the head: decrement its delta, and while
//! the head's delta is zero, it (and every following entry with delta zero) is due. The price
//! is paid at start: finding the place of a new timer walks the list, O(n).
//!
//! | routine     | cost | note                                                     |
//! |-------------|------|----------------------------------------------------------|
//! | start       | O(n) | walk, summing deltas, to the first later deadline        |
//! | stop        | O(1) | hand the stopped entry's delta to its successor          |
//! | tick        | O(1) | plus O(1) per expired timer                              |
//! | next expiry | O(1) | the head                                                 |
//!
//! Timers with equal deadlines keep their start order (a new one goes after its equals), as in
//! BSD's `timeout()`.

use super::arena::{Arena, List, NIL};
use super::{Config, Error, Handle, NextExpiry, Scheme, SchemeKind, Storage};

/// `Entry::list` of an entry on the ordered list.
const ORDERED: u32 = 0;

/// The ordered list with differential times.
///
/// # Invariants
///
/// For the entries on `list` in order, `aux` of the first is its deadline minus `now`, and `aux`
/// of each other is its deadline minus its predecessor's: deltas are never negative.
pub struct OrderedList<S: Storage> {
    arena: Arena<S>,
    list: List,
}

impl<S: Storage> OrderedList<S> {
    /// An empty list for `config.capacity` timers.
    pub fn new(config: &Config) -> Result<Self, Error> {
        Ok(OrderedList {
            arena: Arena::new(config)?,
            list: List::EMPTY,
        })
    }
}

impl<S: Storage> Scheme for OrderedList<S> {
    fn start(&mut self, interval: u64, id: u64) -> Result<Handle, Error> {
        let deadline = self.arena.deadline(interval)?;
        let idx = self.arena.alloc(id, deadline)?;
        // Walk past every entry due no later than the new one, keeping what is left of the
        // interval relative to the entry we stand behind.
        let mut left = interval;
        let mut at = self.list.head;
        while at != NIL && self.arena.entry(at).aux <= left {
            left -= self.arena.entry(at).aux;
            at = self.arena.next(at);
        }
        if at != NIL {
            // The successor is now relative to the new entry.
            self.arena.entry_mut(at).aux -= left;
        }
        self.arena.entry_mut(idx).aux = left;
        self.arena.insert_before(&mut self.list, ORDERED, at, idx);
        Ok(self.arena.handle(idx))
    }

    fn stop(&mut self, handle: Handle) -> Result<u64, Error> {
        let idx = self.arena.resolve(handle)?;
        if !self.arena.is_queued(idx) {
            let next = self.arena.next(idx);
            if next != NIL {
                let delta = self.arena.entry(idx).aux;
                self.arena.entry_mut(next).aux += delta;
            }
            self.arena.unlink(&mut self.list, idx);
        }
        Ok(self.arena.release(idx))
    }

    fn tick(&mut self) -> usize {
        self.arena.advance();
        let head = self.list.head;
        if head == NIL {
            return 0;
        }
        self.arena.entry_mut(head).aux -= 1;
        let mut fired = 0;
        loop {
            let head = self.list.head;
            if head == NIL || self.arena.entry(head).aux != 0 {
                return fired;
            }
            self.arena.unlink(&mut self.list, head);
            self.arena.queue(head);
            fired += 1;
        }
    }

    arena_delegates!(arena);

    fn next_expiry(&self) -> NextExpiry {
        match self.list.head {
            NIL => NextExpiry::Idle,
            head => NextExpiry::At(self.arena.entry(head).deadline),
        }
    }

    fn memory_bytes(&self) -> usize {
        self.arena.memory_bytes()
    }

    fn kind(&self) -> SchemeKind {
        SchemeKind::OrderedList
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::{check_against, Foresight, Profile};
    use super::*;
    use crate::HostStorage;
    use std::vec::Vec;

    fn list() -> OrderedList<HostStorage> {
        OrderedList::new(&Config::default()).unwrap()
    }

    fn deltas(l: &OrderedList<HostStorage>) -> Vec<u64> {
        l.arena.auxes(&l.list)
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
            assert_eq!(e.aux, e.deadline.wrapping_sub(before), "entry {at}");
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
            };
            let mut l = OrderedList::new(&config).unwrap();
            check_against(&mut l, seed, 100_000, &profile, check);
        }
    }
}
