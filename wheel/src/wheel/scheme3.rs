// SPDX-License-Identifier: GPL-2.0

//! Scheme 3 (section IV.A.1 of the paper): a tree-based priority queue — here a binary
//! min-heap — doing per-tick bookkeeping on the smallest timer only.
//!
//! The heap is an array of arena indices, ordered by time left until the deadline. Keys are
//! compared as `deadline - now` (modulo 2^64), not as deadlines, so that a wheel created near
//! 2^64 orders a deadline past the roll-over after one before it. Every pending deadline is
//! between 1 and `MAX_INTERVAL - 1` ticks away and a tick takes one from each, so advancing the
//! clock never reorders the heap: only the root's key is ever looked at.
//!
//! Each entry's position in the heap is remembered (`Heap::pos`), which the paper's Scheme 2
//! remark ("STOPTIMER can use this pointer") turns into an O(log n) stop instead of a search.
//! The heap's array is allocated at creation, one slot per arena entry.
//!
//! | routine     | cost     | note                                                   |
//! |-------------|----------|--------------------------------------------------------|
//! | start       | O(log n) | append, sift up                                        |
//! | stop        | O(log n) | move the last element into the hole, sift it either way |
//! | reschedule  | O(log n) | a new key in place, sifted either way                  |
//! | tick        | O(1)     | plus O(log n) per expired timer; idle ticks skipped in O(1) |
//! | next expiry | O(1)     | the root                                               |
//!
//! Work is counted in swaps (plus one per timer queued). One sift is never cut short: a
//! bounded call may overshoot its budget by one sift, at most `log2(n)` swaps.
//!
//! Timers with equal deadlines may pop in any order.

use super::arena::Arena;
use super::{Clock, Config, Error, NextExpiry, Scheme, SchemeKind, Storage, Work};

/// `Entry::list` of an entry in the heap.
const HEAPED: u32 = 0;

/// The parent of heap position `pos` (which must not be the root).
fn parent(pos: usize) -> usize {
    (pos - 1) / 2
}

/// The first child of heap position `pos`; the second is one after it.
fn child(pos: usize) -> usize {
    2 * pos + 1
}

/// A binary min-heap of timers with a position index.
///
/// # Invariants
///
/// - `heap[..len]` holds exactly the pending entries; `pos` of the entry at `heap[p]` is `p`.
/// - Heap order: for every `p > 0`, the key of `heap[parent(p)]` is at most that of `heap[p]`,
///   where an entry's key is its deadline minus `now`, modulo 2^64, and is at least 1.
#[repr(C)]
pub struct Heap<S: Storage> {
    /// First, as in every scheme: see [`super::AnyScheme`].
    pub(super) arena: Arena<S>,
    heap: S::Buf<u32>,
    /// The heap position of each pending entry, by arena index.
    pos: S::Buf<u32>,
    len: usize,
    /// Swaps done so far: the work of the sifts.
    swaps: usize,
}

impl<S: Storage> Heap<S> {
    /// An empty heap for `config.capacity` timers.
    pub fn new(config: &Config) -> Result<Self, Error> {
        let arena = Arena::new(config)?;
        let heap = S::alloc(arena.capacity(), |_| 0)?;
        let pos = S::alloc(arena.capacity(), |_| 0)?;
        Ok(Heap {
            arena,
            heap,
            pos,
            len: 0,
            swaps: 0,
        })
    }

    /// The key of the entry at heap position `pos`: ticks until it is due.
    fn key(&self, pos: usize) -> u64 {
        self.arena
            .remaining(self.arena.entry(self.heap[pos]).deadline)
    }

    /// Puts entry `idx` at heap position `pos`.
    fn set(&mut self, pos: usize, idx: u32) {
        // INVARIANT: the entry's `pos` follows it.
        self.heap[pos] = idx;
        self.pos[idx as usize] = pos as u32;
    }

    /// Swaps the entries at heap positions `a` and `b`.
    fn swap(&mut self, a: usize, b: usize) {
        let (x, y) = (self.heap[a], self.heap[b]);
        self.swaps = self.swaps.wrapping_add(1);
        self.set(a, y);
        self.set(b, x);
    }

    /// Moves the entry at `pos` up while it is due before its parent; returns where it stops.
    fn sift_up(&mut self, mut pos: usize) -> usize {
        while pos > 0 && self.key(pos) < self.key(parent(pos)) {
            self.swap(pos, parent(pos));
            pos = parent(pos);
        }
        pos
    }

    /// Moves the entry at `pos` down while a child is due before it.
    fn sift_down(&mut self, mut pos: usize) {
        loop {
            let first = child(pos);
            if first >= self.len {
                return;
            }
            let second = first + 1;
            let min = match second < self.len && self.key(second) < self.key(first) {
                true => second,
                false => first,
            };
            if self.key(pos) <= self.key(min) {
                return;
            }
            self.swap(pos, min);
            pos = min;
        }
    }

    /// Adds entry `idx`, on no list, to the heap.
    fn push(&mut self, idx: u32) {
        let pos = self.len;
        self.len += 1;
        self.set(pos, idx);
        self.sift_up(pos);
    }

    /// Takes the entry at heap position `pos` out of the heap and returns it.
    fn remove(&mut self, pos: usize) -> u32 {
        let idx = self.heap[pos];
        self.len -= 1;
        let last = self.len;
        if pos != last {
            self.set(pos, self.heap[last]);
            if self.sift_up(pos) == pos {
                self.sift_down(pos);
            }
        }
        idx
    }
}

impl<S: Storage> Heap<S> {
    arena_moves!(arena);

    /// The latest tick of the range: every place costs the same here, and a timer pushed back
    /// into a range again and again stays put for longest (see [`Scheme::reschedule`]).
    fn choose(&self, _earliest: u64, latest: u64) -> Result<u64, Error> {
        Ok(latest)
    }

    /// Runs `f`, counting its swaps as work.
    fn counted<T>(&mut self, work: &mut Work, f: impl FnOnce(&mut Self) -> T) -> T {
        let before = self.swaps;
        let out = f(self);
        work.spend(self.swaps.wrapping_sub(before));
        out
    }

    fn file(&mut self, idx: u32, _deadline: u64, work: &mut Work) {
        // On no list: in the heap.
        self.arena.retag(idx, HEAPED);
        self.counted(work, |h| h.push(idx));
    }

    fn unlink(&mut self, idx: u32, work: &mut Work) {
        let pos = self.pos[idx as usize] as usize;
        debug_assert_eq!(self.heap[pos], idx, "heap position of entry {idx} is stale");
        self.counted(work, |h| h.remove(pos));
    }

    fn retime(&mut self, idx: u32, deadline: u64, work: &mut Work) -> bool {
        self.arena.entry_mut(idx).deadline = deadline;
        let pos = self.pos[idx as usize] as usize;
        self.counted(work, |h| {
            if h.sift_up(pos) == pos {
                h.sift_down(pos);
            }
        });
        true
    }

    fn enter(&mut self, tick: u64, _clock: Clock) {
        self.arena.begin_tick(tick);
    }

    fn run_tick(&mut self, work: &mut Work) -> bool {
        let mut first = true;
        while self.len > 0 && self.key(0) == 0 {
            if work.is_spent() && !first {
                return false;
            }
            first = false;
            work.spend(1);
            let idx = self.counted(work, |h| h.remove(0));
            self.arena.queue(idx);
        }
        true
    }

    fn next_busy(&self, work: &mut Work) -> Option<u64> {
        work.spend(1);
        self.next_work()
    }

    /// The earliest pending deadline.
    fn earliest(&self) -> Option<u64> {
        match self.len {
            0 => None,
            _ => Some(self.arena.entry(self.heap[0]).deadline),
        }
    }
}

impl<S: Storage> Scheme for Heap<S> {
    arena_delegates!(arena);

    fn next_work(&self) -> Option<u64> {
        self.arena.tick_under_way().or_else(|| self.earliest())
    }

    fn next_expiry(&self) -> NextExpiry {
        self.earliest().into()
    }

    fn memory_bytes(&self) -> usize {
        self.arena.memory_bytes() + 2 * self.heap.len() * core::mem::size_of::<u32>()
    }

    fn kind(&self) -> SchemeKind {
        SchemeKind::Heap
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{check_against, Foresight, Profile};
    use crate::{Handle, HostStorage};
    use std::vec::Vec;

    fn heap(start: u64) -> Heap<HostStorage> {
        Heap::new(&Config {
            capacity: 512,
            slots: 0,
            start,
            ..Default::default()
        })
        .unwrap()
    }

    /// Checks the type invariants.
    fn assert_heap(h: &Heap<HostStorage>) {
        for pos in 0..h.len {
            assert_eq!(h.pos[h.heap[pos] as usize], pos as u32, "position of {pos}");
            assert!(h.key(pos) >= 1, "entry at {pos} overdue");
            if pos > 0 {
                assert!(h.key(parent(pos)) <= h.key(pos), "heap order at {pos}");
            }
        }
        assert_eq!(h.len, h.arena.pending());
    }

    #[test]
    fn parent_and_children() {
        assert_eq!((child(0), parent(1), parent(2)), (1, 0, 0));
        assert_eq!((child(3), parent(7), parent(8)), (7, 3, 3));
    }

    #[test]
    fn root_is_earliest_and_positions_follow() {
        let mut h = heap(0);
        let hs: Vec<_> = [9, 4, 7, 1, 8]
            .iter()
            .map(|&i| h.start(i, i).unwrap())
            .collect();
        assert_eq!(h.next_expiry(), NextExpiry::At(1));
        assert_heap(&h);
        assert_eq!(h.stop(hs[3]), Ok(1));
        assert_eq!(h.stop(hs[3]), Err(Error::Stale));
        assert_eq!(h.next_expiry(), NextExpiry::At(4));
        assert_heap(&h);
    }

    #[test]
    fn keys_are_distances_across_rollover() {
        let mut h = heap(u64::MAX - 2);
        h.start(10, 1).unwrap();
        h.start(2, 2).unwrap();
        h.start(5, 3).unwrap();
        assert_eq!(h.next_expiry(), NextExpiry::At(u64::MAX));
        let mut fired = Vec::new();
        for _ in 0..10 {
            h.tick();
            while let Some(e) = h.pop_expired() {
                fired.push((e.id, e.deadline));
            }
        }
        assert_eq!(fired, [(2, u64::MAX), (3, 2), (1, 7)]);
    }

    #[test]
    fn stops_and_moves_count_their_sifts() {
        let mut h = heap(0);
        let handles: Vec<Handle> = (1..=500).map(|i| h.start(i, i).unwrap()).collect();
        // The root's stop moves the last leaf down from the top: about log2 500 swaps.
        let mut work = Work::unlimited();
        assert_eq!(h.stop_within(handles[0], &mut work), Ok(1));
        assert!((4..=9).contains(&work.done()), "{}", work.done());
        assert_heap(&h);
        // A move to the back sifts down as far; the reschedule's own unit comes on top.
        let mut work = Work::unlimited();
        h.reschedule_within(handles[1], 600, 600, &mut work)
            .unwrap();
        assert!((5..=10).contains(&work.done()), "{}", work.done());
        assert_heap(&h);
        // A leaf's stop swaps nothing.
        let mut work = Work::unlimited();
        h.stop_within(handles[499], &mut work).unwrap();
        assert_eq!(work.done(), 0);
    }

    #[test]
    fn stop_of_queued_timer_and_rearm_during_expiry() {
        let mut h = heap(0);
        let a = h.start(1, 1).unwrap();
        h.start(1, 2).unwrap();
        assert_eq!(h.tick(), 2);
        assert_eq!(h.stop(a), Ok(1));
        let e = h.pop_expired().unwrap();
        assert_eq!(e.id, 2);
        h.start(1, 3).unwrap();
        assert_eq!(h.pop_expired(), None);
        assert_eq!(h.tick(), 1);
        assert_eq!(h.pop_expired().map(|e| e.id), Some(3));
        assert!(h.is_empty());
    }

    #[test]
    fn random_ops_match_model() {
        let profile = Profile::slotless(Foresight::Exact);
        let runs = [
            (1, 0, 200_000),
            (2, u64::MAX - 1000, 200_000),
            (3, (1 << 32) - 20_000, 100_000),
        ];
        for (seed, start, ops) in runs {
            check_against(&mut heap(start), seed, ops, &profile, assert_heap);
        }
    }
}
