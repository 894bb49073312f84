// SPDX-License-Identifier: GPL-2.0

//! The randomized reference model every scheme's unit tests run against (test builds only).
//!
//! [`check_against`] drives a scheme through random `start`, `stop`, `tick` and `pop_expired`
//! calls, and a plain model beside it: the pending timers in one `Vec`, the due ones in another.
//! After every call it compares what the scheme answered with what the model says it must:
//!
//! - `start` fails exactly when it must, with the right error: an interval of 0 or of
//!   `MAX_INTERVAL` and more, one beyond the scheme's own range, a full table;
//! - `stop` returns the request id of an outstanding timer, and [`Error::Stale`] for a handle
//!   that fired, was stopped, or was never issued;
//! - `tick` queues exactly the timers due on the new tick;
//! - `pop_expired` returns a due timer of the oldest tick still queued, with its id and
//!   deadline, and `None` only when nothing is queued;
//! - the clock, `len`, `queued` and `next_expiry` agree with the model.
//!
//! What differs between schemes is a [`Profile`]: which intervals cross its boundaries (a turn
//! of the wheel, a level, the overflow list), how much it knows of its next expiry, and how
//! often its own invariant check, a callback, can afford to run.
//!
//! Starts come in bursts (one interval, up to 16 timers), so that tables fill and slots hold
//! several timers due together. Operations go in phases of 5000, and every third phase starts
//! nothing, so that the scheme drains and goes idle. Handles are compared whole, so a stale
//! handle whose entry was reused (a later generation) must still be refused.

use super::{Error, Handle, NextExpiry, Scheme, MAX_INTERVAL};
use std::vec::Vec;

/// splitmix64: small, fast, and any seed will do.
pub(super) struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub(super) fn new(seed: u64) -> Self {
        Rng(seed)
    }

    /// 64 random bits.
    pub(super) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n`, which is not 0.
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// A range of valid intervals.
#[derive(Clone, Copy, Debug)]
pub(super) enum Band {
    /// `1..=n`.
    Upto(u64),
    /// Within 1000 of the longest valid interval, `MAX_INTERVAL - 1`: deadlines almost half the
    /// clock away.
    Longest,
    /// One to four whole turns of `n` ticks, plus 0 to 2 ticks: lands on and just past a turn.
    Turns(u64),
}

impl Band {
    /// An interval from one of `bands`, chosen by weight.
    fn pick(rng: &mut Rng, bands: &[(u64, Band)]) -> u64 {
        let mut at = rng.below(bands.iter().map(|&(weight, _)| weight).sum());
        for &(weight, band) in bands {
            if at < weight {
                return band.draw(rng);
            }
            at -= weight;
        }
        unreachable!("weights sum to more than their sum")
    }

    /// An interval in this band.
    fn draw(self, rng: &mut Rng) -> u64 {
        match self {
            Band::Upto(n) => 1 + rng.below(n),
            Band::Longest => MAX_INTERVAL - 1 - rng.below(1000),
            Band::Turns(n) => n * (1 + rng.below(4)) + rng.below(3),
        }
    }
}

/// Intervals for the schemes without slots (1 to 3), whose only boundaries are those of the
/// clock: mostly within a few thousand ticks, so that timers fire, and a few far off or almost
/// half the clock away, so that deadlines straddle its wrap.
const SLOTLESS: &[(u64, Band)] = &[
    (16, Band::Upto(64)),
    (13, Band::Upto(5000)),
    (2, Band::Upto(1 << 40)),
    (1, Band::Longest),
];

/// What a scheme's `next_expiry` answers while timers are pending (with none, `Idle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Foresight {
    /// The earliest pending deadline, always.
    Exact,
    /// The earliest pending deadline, or `Unknown`.
    Partial,
    /// `Unknown`, always.
    Blind,
}

/// What the model needs to know of a scheme.
#[derive(Clone, Copy, Debug)]
pub(super) struct Profile {
    /// The valid intervals started, as `(weight, band)`. Invalid ones (0, `MAX_INTERVAL` and
    /// more, one past `range`) are mixed in besides.
    pub(super) intervals: &'static [(u64, Band)],
    /// The scheme's longest interval, if it has one (scheme 4's `MaxInterval`).
    pub(super) range: Option<u64>,
    /// What its `next_expiry` knows.
    pub(super) foresight: Foresight,
    /// Its invariant check runs after every `check_every`-th operation, and after the last.
    pub(super) check_every: usize,
}

impl Profile {
    /// A scheme without slots (1 to 3): [`SLOTLESS`] intervals, no range of its own, and its
    /// invariant check, a walk of every pending timer, every 64 operations.
    pub(super) const fn slotless(foresight: Foresight) -> Self {
        Profile {
            intervals: SLOTLESS,
            range: None,
            foresight,
            check_every: 64,
        }
    }
}

/// An outstanding timer as the model sees it.
#[derive(Clone, Copy)]
struct Timer {
    handle: Handle,
    id: u64,
    deadline: u64,
}

/// What the scheme should hold: pending timers, and the due queue.
struct Model {
    now: u64,
    pending: Vec<Timer>,
    due: Vec<Timer>,
    capacity: usize,
    /// Handles issued so far (the latest few thousand), outstanding or stale.
    issued: Vec<Handle>,
    /// The request id of the last timer started.
    last_id: u64,
}

impl Model {
    /// Timers outstanding: pending plus due.
    fn len(&self) -> usize {
        self.pending.len() + self.due.len()
    }

    /// The expected result of starting `interval`, given the scheme's `range`.
    fn start_error(&self, interval: u64, range: Option<u64>) -> Option<Error> {
        if interval == 0 || interval >= MAX_INTERVAL {
            Some(Error::Interval)
        } else if range.is_some_and(|max| interval > max) {
            Some(Error::Range)
        } else if self.len() == self.capacity {
            Some(Error::Full)
        } else {
            None
        }
    }

    /// Removes the timer `handle` names, wherever it is; its request id.
    fn stop(&mut self, handle: Handle) -> Option<u64> {
        for list in [&mut self.pending, &mut self.due] {
            if let Some(k) = list.iter().position(|t| t.handle == handle) {
                return Some(list.swap_remove(k).id);
            }
        }
        None
    }

    /// Advances the clock and moves what is due to the due queue; how many moved.
    fn tick(&mut self) -> usize {
        self.now = self.now.wrapping_add(1);
        let before = self.due.len();
        let now = self.now;
        self.due
            .extend(self.pending.iter().filter(|t| t.deadline == now));
        self.pending.retain(|t| t.deadline != now);
        self.due.len() - before
    }

    /// The earliest pending deadline.
    fn next_expiry(&self) -> Option<u64> {
        let remaining = self
            .pending
            .iter()
            .map(|t| t.deadline.wrapping_sub(self.now));
        remaining.min().map(|r| self.now.wrapping_add(r))
    }
}

/// Runs `ops` random operations, seeded with `seed`, on `w` (empty, capacity at least 2) and
/// on a model, and compares every result. `check` verifies the scheme's own invariants, every
/// `profile.check_every` operations.
pub(super) fn check_against<W: Scheme>(
    w: &mut W,
    seed: u64,
    ops: usize,
    profile: &Profile,
    check: impl Fn(&W),
) {
    let mut rng = Rng::new(seed);
    let mut m = Model {
        now: w.now(),
        pending: Vec::new(),
        due: Vec::new(),
        capacity: w.capacity(),
        issued: Vec::new(),
        last_id: 0,
    };
    for op in 0..ops {
        let draining = op / 5000 % 3 == 2;
        match rng.below(100) {
            0..=29 if !draining => start(w, &mut m, &mut rng, profile),
            30..=44 => stop(w, &mut m, &mut rng),
            0..=79 => assert_eq!(w.tick(), m.tick(), "tick to {}", m.now.wrapping_add(1)),
            _ => {
                for _ in 0..1 + rng.below(3) {
                    pop(w, &mut m);
                }
            }
        }
        if m.issued.len() > 4096 {
            m.issued.drain(..2048);
        }
        compare(w, &m, profile.foresight);
        if op % profile.check_every == 0 {
            check(w);
        }
    }
    check(w);
}

/// Starts a burst of timers with one interval, usually a single timer, and checks each result.
fn start<W: Scheme>(w: &mut W, m: &mut Model, rng: &mut Rng, profile: &Profile) {
    let burst = match rng.below(8) {
        0 => 1 + rng.below(16),
        _ => 1,
    };
    let interval = match rng.below(64) {
        0 => 0,
        1 => MAX_INTERVAL + rng.below(2),
        2 => match profile.range {
            Some(max) => max + 1,
            None => Band::pick(rng, profile.intervals),
        },
        _ => Band::pick(rng, profile.intervals),
    };
    for _ in 0..burst {
        m.last_id += 1;
        let id = m.last_id;
        let want = m.start_error(interval, profile.range);
        match w.start(interval, id) {
            Ok(handle) => {
                assert_eq!(want, None, "start({interval}) at {}", m.now);
                let deadline = m.now.wrapping_add(interval);
                m.pending.push(Timer {
                    handle,
                    id,
                    deadline,
                });
                m.issued.push(handle);
            }
            Err(e) => assert_eq!(want, Some(e), "start({interval}) at {}", m.now),
        }
    }
}

/// Stops an outstanding timer, or now and then any handle issued (stale if it fired or was
/// stopped), and checks the answer.
fn stop<W: Scheme>(w: &mut W, m: &mut Model, rng: &mut Rng) {
    let outstanding = m.len() as u64;
    let handle = if outstanding > 0 && rng.below(4) != 0 {
        let k = rng.below(outstanding) as usize;
        match m.pending.get(k) {
            Some(t) => t.handle,
            None => m.due[k - m.pending.len()].handle,
        }
    } else if m.issued.is_empty() {
        Handle::new(0, 0)
    } else {
        m.issued[rng.below(m.issued.len() as u64) as usize]
    };
    let want = m.stop(handle).ok_or(Error::Stale);
    assert_eq!(w.stop(handle), want, "stop at {}", m.now);
}

/// Pops one timer and checks it is one of the model's oldest due ones.
fn pop<W: Scheme>(w: &mut W, m: &mut Model) {
    let Some(e) = w.pop_expired() else {
        assert!(m.due.is_empty(), "nothing popped, {} due", m.due.len());
        return;
    };
    let k = m.due.iter().position(|t| t.handle == e.handle);
    let k = k.unwrap_or_else(|| panic!("popped {e:?}, not due"));
    let t = m.due.swap_remove(k);
    assert_eq!((e.id, e.deadline), (t.id, t.deadline));
    let age = m.now.wrapping_sub(e.deadline);
    let oldest = m.due.iter().all(|t| m.now.wrapping_sub(t.deadline) <= age);
    assert!(oldest, "popped {e:?} out of tick order at {}", m.now);
}

/// Compares what the scheme and the model say of the clock, the counts and the next expiry.
fn compare<W: Scheme>(w: &W, m: &Model, foresight: Foresight) {
    assert_eq!(w.now(), m.now);
    assert_eq!(w.len(), m.len(), "len at {}", m.now);
    assert_eq!(w.queued(), m.due.len(), "queued at {}", m.now);
    match (w.next_expiry(), m.next_expiry()) {
        (NextExpiry::Idle, None) => {}
        (NextExpiry::At(got), Some(want)) if foresight != Foresight::Blind => {
            assert_eq!(got, want, "next_expiry at {}", m.now)
        }
        (NextExpiry::Unknown, Some(_)) if foresight != Foresight::Exact => {}
        (got, want) => panic!("next_expiry {got:?}, model {want:?} at {}", m.now),
    }
}

/// Timers re-armed between two pops of one tick, as a callback re-arming itself does: what is
/// left of that tick still comes before the next tick, and the new timers fire on their own
/// ticks. `check` is the scheme's invariant check, run once they are in and after every tick.
/// `w` must be empty, with its clock at 0 and room for 5 timers and an interval of 4.
pub(super) fn rearm_between_pops<W: Scheme>(mut w: W, check: impl Fn(&W)) {
    for id in 0..3 {
        w.start(1, id).unwrap();
    }
    assert_eq!(w.tick(), 3);
    assert_eq!(w.pop_expired().map(|e| e.id), Some(0));
    w.start(1, 10).unwrap();
    w.start(4, 11).unwrap();
    check(&w);
    assert_eq!(w.pop_expired().map(|e| e.id), Some(1));
    assert_eq!(w.tick(), 1);
    check(&w);
    let ids: Vec<u64> = core::iter::from_fn(|| w.pop_expired())
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, [2, 10]);
    // 11 was started on tick 1 with interval 4: due on tick 5, three ticks from now, alone.
    for queued in [0, 0, 1] {
        assert_eq!(w.tick(), queued);
        check(&w);
    }
    let e = w.pop_expired().unwrap();
    assert_eq!((e.id, e.deadline, w.now()), (11, 5, 5));
    assert_eq!(w.pop_expired(), None);
}
