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
use super::{Config, Error, Expired, Handle, NextExpiry, Scheme, SchemeKind, Storage};

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

    fn pop_expired(&mut self) -> Option<Expired> {
        self.arena.pop_due()
    }

    fn now(&self) -> u64 {
        self.arena.now()
    }

    fn len(&self) -> usize {
        self.arena.len()
    }

    fn queued(&self) -> usize {
        self.arena.queued()
    }

    fn capacity(&self) -> usize {
        self.arena.capacity()
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
    use super::super::MAX_INTERVAL;
    use super::*;
    use crate::HostStorage;
    use std::collections::VecDeque;
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
        let mut out = Vec::new();
        let mut at = l.list.head;
        while at != NIL {
            out.push(l.arena.entry(at).aux);
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

    /// splitmix64.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) % n
        }
        fn interval(&mut self) -> u64 {
            match self.below(32) {
                0..=15 => 1 + self.below(64),
                16..=29 => 1 + self.below(3000),
                30 => 1 + self.below(1 << 40),
                _ => MAX_INTERVAL - 1 - self.below(1000),
            }
        }
    }

    /// Runs `ops` random operations on the list and on a list of `(handle, deadline, id)`,
    /// comparing every answer.
    fn against_model(start: u64, seed: u64, ops: usize) {
        let mut s = list(start);
        let mut rng = Rng(seed);
        let mut now = start;
        let mut pending: Vec<(Handle, u64, u64)> = Vec::new();
        let mut queued: VecDeque<(Handle, u64, u64)> = VecDeque::new();
        let mut dead: Vec<Handle> = Vec::new();
        let mut next_id = 0;
        for op in 0..ops {
            // Every third phase starts nothing, so that the list drains and goes idle.
            let draining = op / 5000 % 3 == 2;
            match rng.below(20) {
                0..=4 if !draining => {
                    let burst = if rng.below(8) == 0 {
                        1 + rng.below(16)
                    } else {
                        1
                    };
                    let i = rng.interval();
                    for _ in 0..burst {
                        next_id += 1;
                        let full = pending.len() + queued.len() == s.capacity();
                        match s.start(i, next_id) {
                            Ok(h) => pending.push((h, now.wrapping_add(i), next_id)),
                            Err(e) => assert!(full && e == Error::Full, "{e:?}"),
                        }
                    }
                }
                5 | 6 => {
                    let n = pending.len() + queued.len();
                    if n == 0 || rng.below(10) == 0 {
                        if let Some(&h) = dead.get(rng.below(dead.len() as u64 + 1) as usize) {
                            assert_eq!(s.stop(h), Err(Error::Stale));
                        }
                        continue;
                    }
                    let k = rng.below(n as u64) as usize;
                    let (h, _, id) = match k < pending.len() {
                        true => pending.swap_remove(k),
                        false => queued.remove(k - pending.len()).unwrap(),
                    };
                    assert_eq!(s.stop(h), Ok(id));
                    dead.push(h);
                }
                0..=14 => {
                    now = now.wrapping_add(1);
                    let due: Vec<_> = pending.iter().filter(|p| p.1 == now).copied().collect();
                    pending.retain(|p| p.1 != now);
                    assert_eq!(s.tick(), due.len(), "at {now}");
                    queued.extend(due);
                    let want = match pending.is_empty() {
                        true => NextExpiry::Idle,
                        false => NextExpiry::Unknown,
                    };
                    assert_eq!(s.next_expiry(), want);
                }
                _ => match s.pop_expired() {
                    Some(e) => {
                        let k = queued.iter().position(|q| q.0 == e.handle).unwrap();
                        assert_eq!(queued[k].1, queued[0].1, "popped out of tick order");
                        assert_eq!((queued[k].1, queued[k].2), (e.deadline, e.id));
                        queued.remove(k);
                        dead.push(e.handle);
                    }
                    None => assert!(queued.is_empty()),
                },
            }
            assert_eq!(s.len(), pending.len() + queued.len());
            assert_eq!(s.queued(), queued.len());
        }
        let mut at = s.list.head;
        while at != NIL {
            let e = s.arena.entry(at);
            assert_eq!(e.aux, e.deadline.wrapping_sub(s.now()));
            at = s.arena.next(at);
        }
    }

    #[test]
    fn random_ops_match_model() {
        against_model(0, 1, 200_000);
        against_model(u64::MAX - 1000, 2, 200_000);
    }
}
