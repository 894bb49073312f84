// SPDX-License-Identifier: GPL-2.0

//! Timer schemes of Varghese & Lauck, "Hashed and Hierarchical Timing Wheels" (IEEE/ACM ToN
//! 5(6), 1997), and the BSD callout facility built on them.
//!
//! # Vocabulary (section II of the paper)
//!
//! A *timer module* keeps outstanding timers and offers four routines:
//!
//! | paper                    | here                      |
//! |--------------------------|---------------------------|
//! | `START_TIMER(i, id)`     | [`Scheme::start`]         |
//! | `STOP_TIMER(id)`         | [`Scheme::stop`]          |
//! | `PER_TICK_BOOKKEEPING`   | [`Scheme::tick`]          |
//! | `EXPIRY_PROCESSING`      | [`Scheme::pop_expired`]   |
//!
//! Time is a 64-bit count of ticks, `now`. A timer started with interval `i` on tick `now` is
//! *due* on tick `now + i`. [`Scheme::tick`] advances `now` by one and moves every timer due on
//! the new tick to the *due queue*; [`Scheme::pop_expired`] takes them off it one at a time.
//! Splitting the two is what lets expiry processing start and stop timers (a callback that
//! re-arms itself), and what lets a caller bound the work done per tick: whatever it does not
//! pop stays queued, in order, ahead of the next tick's timers.
//!
//! # Bounded work, and the tickless clock
//!
//! A kernel drives the module from a timer interrupt with a lock held and interrupts masked,
//! so every call that can take long is bounded by a [`Work`] budget, counted in entries
//! visited or moved (list steps, slots looked at, migrations, heap swaps, timers queued):
//!
//! - [`Scheme::advance`] runs the clock towards a target tick. A tick whose bookkeeping (scheme
//!   1's walk of every timer, scheme 6's walk of a slot, scheme 7's migrations, a slot full of
//!   due timers) outlasts the budget is left half done and resumed by the next call; starts,
//!   stops, reschedules and pops in between are fine, and a cursor standing on an entry that
//!   leaves moves on.
//! - With [`Clock::Tickless`], `advance` skips the ticks with nothing to do at a cost
//!   independent of their number (a list head, the heap's root, an occupancy bitmap, a bound
//!   kept per slot, the levels of scheme 7), and [`Scheme::next_work`] names a lower bound of
//!   the next deadline for the caller to sleep until: nothing ever becomes due before it, and
//!   a lone timer, however far, costs at most two wakeups. With [`Clock::Periodic`] every
//!   tick's bookkeeping runs, as in the paper (Figure 9's per-tick costs measure it).
//! - The starts that walk a sorted list (schemes 2 and 5) stop when the budget is spent and
//!   leave the timer *placing* ([`Scheme::placing`], [`Scheme::place`]).
//!
//! | routine                  | here                                                     |
//! |--------------------------|----------------------------------------------------------|
//! | `mod_timer`              | [`Scheme::reschedule`]: in place, keeping handle and id  |
//! | a timer with slack       | [`Scheme::start_range`]: any tick in a range             |
//! | when is it due           | [`Scheme::deadline`]                                     |
//!
//! # Guarantees, for every scheme
//!
//! - A timer started with interval `i` on tick `t` becomes due on tick `t + i`: never early,
//!   never late, exactly once. `i` must be in `1..MAX_INTERVAL`. One started with a range
//!   `[e, l]` becomes due on one tick in `[t + e, t + l]`, which [`Scheme::deadline`] names
//!   from the start, and one rescheduled likewise.
//! - A stopped timer never becomes due, and is never popped, even if it was already queued.
//!   A rescheduled timer keeps its handle and id; if it was queued, it leaves the due queue.
//! - Everything due on tick `t` is popped before anything due on tick `t + 1`. Among timers due
//!   on the same tick the order is unspecified.
//! - Timers may be started, stopped and rescheduled between any two calls, including between
//!   two pops of the same tick and between two calls of a half-done [`Scheme::advance`].
//! - Whatever the clock and the budgets, the timers fire on the same ticks as with the
//!   unbounded periodic [`Scheme::tick`]; a tickless advance to any tick before
//!   [`Scheme::next_work`] queues nothing. Every bounded call does at least one unit of work
//!   when there is work to do, and at most one indivisible step (one heap sift for scheme 3)
//!   beyond its budget.
//! - While a timer is placing, every start and reschedule fails with [`Error::Busy`] and
//!   changes nothing; stops, pops and advances go on, and a placing timer whose deadline comes
//!   is queued on it.
//! - The tick counter is modular: deadlines are computed with wrapping arithmetic, so a wheel
//!   created near `2^32` or `2^64` behaves exactly as one created at 0.
//! - Storage is allocated once, at creation, for a fixed number of timers (at most
//!   [`MAX_CAPACITY`]). Nothing allocates afterwards: a full table makes [`Scheme::start`]
//!   fail with [`Error::Full`] and change nothing.
//! - Handles carry a 40-bit generation and are never 0. Stopping a fired, stopped or
//!   never-issued handle fails with [`Error::Stale`] and changes nothing, and so does any
//!   value given to [`Handle::from_raw`] that no live timer was issued.
//!
//! # Schemes
//!
//! | scheme | file         | structure                              | start     | stop     | reschedule | tick        |
//! |--------|--------------|----------------------------------------|-----------|----------|------------|-------------|
//! | 1      | `scheme1.rs` | unordered list, every deadline compared | O(1)     | O(1)     | O(1)       | O(n)        |
//! | 2      | `scheme2.rs` | ordered list, differential times (BSD) | O(n)      | O(1)     | O(n)       | O(1)        |
//! | 3      | `scheme3.rs` | binary heap with an index              | O(log n)  | O(log n) | O(log n)   | O(log n)    |
//! | 4      | `scheme4.rs` | basic wheel, one slot per tick         | O(1)      | O(1)     | O(1)       | O(1)        |
//! | 5      | `scheme5.rs` | hashed wheel, sorted lists             | O(n/M)    | O(1)     | O(n/M)     | O(1)        |
//! | 6      | `scheme6.rs` | hashed wheel, unsorted lists           | O(1)      | O(1)     | O(1)       | O(n/M)      |
//! | 7      | `scheme7.rs` | hierarchical wheels                    | O(1)      | O(1)     | O(1)       | O(1) amort. |
//!
//! All of them keep their timers in one [`arena::Arena`] of fixed capacity and link them into
//! intrusive doubly-linked lists by index, so that a handle finds its entry, and unlinks it, in
//! O(1); the arena also holds the clock, each timer's absolute deadline and the due queue.
//! The wheels (schemes 4 to 7) keep their slot lists, and the occupancy bitmap of `bitmap.rs`
//! that marks the busy ones, in step through one slot layer, `slots.rs`. The legacy BSD
//! interface, `timeout(func, arg, ticks)` / `untimeout(func, arg)`, sits on top of any scheme
//! in `callout.rs`; `sorted.rs` holds the bounded placement of schemes 2 and 5. `rng.rs` is the
//! generator of randomized tests and workloads. Every scheme's unit tests also run it against
//! the reference model of the host crate's `src/model.rs`, which the differential test drives
//! every scheme against too.
//!
//! This directory is compiled both by cargo (through `src/lib.rs`) and by the kernel (as the
//! module's `wheel` module): it names no kernel type, is safe Rust throughout, and refers to its
//! own items through `super::`, never `crate::`.

// The kernel forbids floating point; this code runs in the kernel.
#![deny(clippy::float_arithmetic)]

/// Expands, inside a scheme's `impl Scheme for ...` block, to every method that is the same
/// for all schemes once each has said how it files, unfiles, retimes and ticks. `$arena` names
/// the field that holds the [`arena::Arena`].
///
/// The due queue, the counts and the deadlines live in the arena; the rest is written against
/// these inherent methods of the scheme:
///
/// - `fn choose(&self, earliest: u64, latest: u64) -> Result<u64, Error>`: the deadline a timer
///   to fire in the absolute range `earliest..=latest` gets (the range is valid);
/// - `fn file(&mut self, idx: u32, deadline: u64, work: &mut Work)`: links entry `idx`, on no
///   list and with its deadline set to `deadline` (passed along so that the hot path need not
///   read it back), where it belongs (or starts a bounded placement, schemes 2 and 5);
/// - `fn unlink(&mut self, idx: u32, work: &mut Work)`: takes a pending (or placing) entry off
///   the scheme's own lists, fixing up any cursor that stood on it; spends on `work` what it
///   visits beyond the entry (scheme 3's sift), as the caller has paid for the entry itself;
/// - `fn retime(&mut self, idx: u32, deadline: u64, work: &mut Work) -> bool`: gives pending
///   entry `idx` a new deadline where it stands, if that is where the new deadline belongs, or
///   moves it itself where that is as cheap as an unlink and a file, or where the move keeps
///   its way back (schemes 2 and 5) (`false`: unchanged, to be unlinked and filed); spends on
///   `work` as `unlink` does;
/// - `fn enter(&mut self, tick: u64, clock: Clock)`: moves the clock to `tick`, after now and
///   not after the next tick with bookkeeping, and begins that tick's bookkeeping;
/// - `fn run_tick(&mut self, work: &mut Work) -> bool`: continues the current tick's bookkeeping
///   within `work` (at least one step); `true` once it is complete;
/// - `fn next_busy(&self, work: &mut Work) -> Option<u64>`: the first tick after now that
///   has bookkeeping in tickless mode, if any, or a tick before it; spends at least one unit.
///
/// `reschedule` and `advance` need `arena_moves!` in the scheme's inherent `impl` block too;
/// a scheme whose filing may leave a timer placing names, with `arena_moves!(arena,
/// queued_back: method)`, its `fn method(&mut self, was: u64)`, which keeps the way back of a
/// timer a reschedule took off the due queue (due on `was`), for
/// [`Scheme::abandon_placement`].
///
/// `arena_delegates!(arena, quick: method)` also has `advance` try
/// `fn method(&mut self, target: u64, clock: Clock, work: &mut Work) -> Option<Advanced>`
/// first: a scheme's short-cut for its commonest step, which either does all that `advance`
/// would have done and says what it returns, or starts a tick and leaves the rest to it. The
/// short-cut is inlined into the caller, the rest of `advance` is not.
///
/// Defined before the `mod` lines below so that it is in scope in every scheme file; the
/// expansion names the crate's items through `super::`, so it must be invoked from a direct
/// child of this module.
macro_rules! arena_delegates {
    ($arena:ident) => {
        arena_delegates!(@with $arena,);
    };
    ($arena:ident, quick: $quick:ident) => {
        arena_delegates!(@with $arena, $quick);
    };
    (@with $arena:ident, $($quick:ident)?) => {
        #[inline]
        fn start(&mut self, interval: u64, id: u64) -> Result<super::Handle, super::Error> {
            // `start_range(interval, interval, id, unlimited)`, without the range.
            let deadline = self.$arena.deadline(interval)?;
            if self.placing() {
                return Err(super::Error::Busy);
            }
            let deadline = self.choose(deadline, deadline)?;
            let (idx, handle) = self.$arena.alloc(id, deadline)?;
            self.file(idx, deadline, &mut super::Work::unlimited());
            Ok(handle)
        }

        // Always inlined: given a second caller (the callout layer over a scheme named, beside
        // the caller's own), the compiler left it out of line in both, a call on every start.
        #[inline(always)]
        fn start_range(
            &mut self,
            earliest: u64,
            latest: u64,
            id: u64,
            work: &mut super::Work,
        ) -> Result<super::Handle, super::Error> {
            let (a, b) = self.$arena.range(earliest, latest)?;
            if self.placing() {
                return Err(super::Error::Busy);
            }
            let deadline = self.choose(a, b)?;
            // The handle's generation is read by `alloc`, before the filing writes the entry's
            // tag: the compiler narrows that write to the tag's low bytes, and a load of the
            // whole word after it would wait for the store to complete (no store forwarding).
            let (idx, handle) = self.$arena.alloc(id, deadline)?;
            work.spend(1);
            self.file(idx, deadline, work);
            Ok(handle)
        }

        fn stop(&mut self, handle: super::Handle) -> Result<u64, super::Error> {
            self.stop_within(handle, &mut super::Work::unlimited())
        }

        #[inline]
        fn stop_within(
            &mut self,
            handle: super::Handle,
            work: &mut super::Work,
        ) -> Result<u64, super::Error> {
            let idx = self.$arena.resolve(handle)?;
            let queued = self.$arena.is_queued(idx);
            if !queued {
                self.unlink(idx, work);
            }
            Ok(self.$arena.release(idx, queued))
        }

        #[inline(always)]
        fn reschedule(
            &mut self,
            handle: super::Handle,
            earliest: u64,
            latest: u64,
        ) -> Result<(), super::Error> {
            let idx = self.$arena.resolve(handle)?;
            if self.stays(idx, earliest, latest) {
                return Ok(());
            }
            // The budget is made only on the way out of line, where it is needed: a caller's
            // would be written to memory before the check, for nothing when the timer stays.
            self.move_pending(idx, earliest, latest, &mut super::Work::unlimited())
        }

        #[inline(always)]
        fn reschedule_within(
            &mut self,
            handle: super::Handle,
            earliest: u64,
            latest: u64,
            work: &mut super::Work,
        ) -> Result<(), super::Error> {
            let idx = self.$arena.resolve(handle)?;
            if self.stays(idx, earliest, latest) {
                work.spend(1);
                return Ok(());
            }
            self.move_pending(idx, earliest, latest, work)
        }

        fn tick(&mut self) -> usize {
            if !self.$arena.ticking() {
                // The whole of `advance` to the next tick, unbounded, without its loop.
                let next = self.$arena.now().wrapping_add(1);
                self.enter(next, super::Clock::Periodic);
                while !self.run_tick(&mut super::Work::unlimited()) {}
                self.$arena.end_tick();
                return self.$arena.tick_queued();
            }
            let target = self.$arena.now().wrapping_add(1);
            let mut work = super::Work::unlimited();
            while self.advance(target, super::Clock::Periodic, &mut work)
                != super::Advanced::Reached
            {}
            self.$arena.tick_queued()
        }

        #[inline(always)]
        fn advance(
            &mut self,
            target: u64,
            clock: super::Clock,
            work: &mut super::Work,
        ) -> super::Advanced {
            $(
                if let Some(done) = self.$quick(target, clock, work) {
                    return done;
                }
            )?
            self.advance_ticks(target, clock, work)
        }

        #[inline(always)]
        fn pop_expired(&mut self) -> Option<super::Expired> {
            self.$arena.pop_due()
        }

        #[inline(always)]
        fn next_due(&self) -> u32 {
            self.$arena.next_due()
        }

        fn now(&self) -> u64 {
            self.$arena.now()
        }

        fn len(&self) -> usize {
            self.$arena.len()
        }

        fn queued(&self) -> usize {
            self.$arena.queued()
        }

        fn capacity(&self) -> usize {
            self.$arena.capacity()
        }

        fn deadline(&self, handle: super::Handle) -> Option<u64> {
            self.$arena.deadline_of(handle)
        }

        fn id(&self, handle: super::Handle) -> Option<u64> {
            self.$arena.id_of(handle)
        }

        fn handle_at(&self, index: u32) -> Option<super::Handle> {
            self.$arena.outstanding(index)
        }

        fn deadline_at(&self, index: u32) -> Option<u64> {
            self.$arena.deadline_at(index)
        }
    };
}

/// Expands, inside a scheme's inherent `impl` block, to the part of [`Scheme::reschedule`] that
/// moves a timer, out of line so that the check that leaves it where it is (Ratas' idle timer,
/// pushed back on every message) is inlined into every caller, and likewise to the part of
/// [`Scheme::advance`] past the scheme's short-cut. `$arena` names the field that holds the
/// [`arena::Arena`]; the scheme's own methods are those [`arena_delegates!`] lists.
macro_rules! arena_moves {
    ($arena:ident $(, queued_back: $back:ident)?) => {
        /// Whether outstanding entry `idx` stays as it is on a reschedule into `[earliest,
        /// latest]`: already due in the range, the range valid and nothing placing. Never true
        /// of a queued timer, due now (0 ticks left, and `earliest` is at least 1). Ratas' idle
        /// timer, pushed back on every message, stays: this is kept short enough to be
        /// inlined into the caller.
        #[inline(always)]
        fn stays(&self, idx: u32, earliest: u64, latest: u64) -> bool {
            self.$arena.due_within(idx, earliest, latest) && !super::Scheme::placing(self)
        }

        /// [`super::Scheme::advance`] past the scheme's short-cut for its commonest step (see
        /// [`arena_delegates!`]): out of line, so that the short-cut is inlined into every
        /// caller, and with it the clock and the budget a caller passes as constants.
        #[inline(never)]
        pub(super) fn advance_ticks(
            &mut self,
            target: u64,
            clock: super::Clock,
            work: &mut super::Work,
        ) -> super::Advanced {
            // Whether this call has made progress: until it has, a spent budget is no reason
            // to return.
            let mut moved = false;
            loop {
                if self.$arena.ticking() {
                    if !self.run_tick(work) {
                        return super::Advanced::OutOfWork;
                    }
                    self.$arena.end_tick();
                    moved = true;
                    if self.$arena.tick_queued() > 0 {
                        return super::Advanced::Due;
                    }
                }
                let now = self.$arena.now();
                if now == target {
                    return super::Advanced::Reached;
                }
                if moved && work.is_spent() {
                    return super::Advanced::OutOfWork;
                }
                let next = match clock {
                    super::Clock::Periodic => now.wrapping_add(1),
                    super::Clock::Tickless => match self.next_busy(work) {
                        Some(t) => self.$arena.sooner(t, target),
                        None => target,
                    },
                };
                if moved && work.is_spent() {
                    return super::Advanced::OutOfWork;
                }
                // A periodic tick costs a unit even when idle; a tickless one has paid for
                // finding it.
                if clock == super::Clock::Periodic {
                    work.spend(1);
                }
                moved = true;
                self.enter(next, clock);
            }
        }

        /// [`super::Scheme::reschedule`] of outstanding entry `idx`, past the check that
        /// leaves it where it is.
        pub(super) fn move_pending(
            &mut self,
            idx: u32,
            earliest: u64,
            latest: u64,
            work: &mut super::Work,
        ) -> Result<(), super::Error> {
            let (a, b) = self.$arena.range(earliest, latest)?;
            if super::Scheme::placing(self) {
                return Err(super::Error::Busy);
            }
            work.spend(1);
            // Not due in the range, or `reschedule` would have left it there.
            let deadline = self.choose(a, b)?;
            let (_was, queued) = (self.$arena.entry(idx).deadline, self.$arena.is_queued(idx));
            if queued {
                self.$arena.unqueue(idx);
            } else if self.retime(idx, deadline, work) {
                return Ok(());
            } else {
                self.unlink(idx, work);
            }
            self.$arena.entry_mut(idx).deadline = deadline;
            self.file(idx, deadline, work);
            // A scheme whose filing may walk keeps the way back of a timer taken off the due
            // queue, as `retime` keeps a pending one's: due again, should the walk be undone.
            $(
                if queued {
                    self.$back(_was);
                }
            )?
            Ok(())
        }
    };
}

pub mod arena;
mod bitmap;
pub mod callout;
pub mod rng;
pub mod scheme1;
pub mod scheme2;
pub mod scheme3;
pub mod scheme4;
pub mod scheme5;
pub mod scheme6;
pub mod scheme7;
mod slots;
mod sorted;

use core::num::NonZeroU64;
use core::ops::DerefMut;

pub use arena::MAX_CAPACITY;
pub use bitmap::MAX_SEARCH_WORDS;

/// The most a hashed wheel's [`Scheme::next_work`] looks at (schemes 5 and 6), in busy slots
/// and (scheme 6) groups of 64 slots: beyond them it answers the tick of the next slot not
/// looked at, still a lower bound, so that the call stays bounded (it runs under a lock with
/// interrupts masked) whatever the spread of the timers. Scheme 6's groups of a wheel of 4,096
/// slots, 64, fit in it with room for a group's slots.
pub const NEXT_WORK_SLOTS: usize = 128;

/// The most entries a list may hold for scheme 7's [`Scheme::next_work_within`] to walk it for
/// its earliest deadline when its bound was left low, rather than a walk on every search: the
/// search runs whenever the clock is armed, and a list of timeouts pushed back (put off) has
/// its first entry off its bound for good. A busier list above level 0 has its bound made
/// exact, once, by [`Scheme::tighten_within`] (up to [`TIGHTEN_LIMIT`] entries); a busier
/// level-0 list, which keeps no bound of its own, costs a wakeup at its tick.
pub const LIST_LOOK_LIMIT: usize = 8;

/// The most entries a slot (scheme 6) or list (scheme 7) may hold for
/// [`Scheme::tighten_within`] to walk it for its earliest deadline when a stop or move left its
/// bound low. A hashed slot mixes timers of many turns, and a list above level 0 a stretch of
/// them: one near timer among later ones is the common case, and cancelling it (a timeout
/// cancelled before it is due) would otherwise wake the clock for nothing, up to a turn (a
/// list's span) before the next timer there. The walk runs only when the bound is next work
/// and a stop or move left it low, at most once per such stop, over at most this many
/// entries, a quarter of a hold's default budget in the module (256), which leaves the search
/// for next work room beside it: a busier slot or list keeps its bound, and costs one wakeup.
pub const TIGHTEN_LIMIT: usize = 64;

/// Intervals must be below this: deadlines are compared modulo 2^64, which is unambiguous only
/// for distances below 2^63.
pub const MAX_INTERVAL: u64 = 1 << 63;

/// The rule every range of intervals `earliest..=latest` follows, in every scheme:
/// `1 <= earliest <= latest < MAX_INTERVAL` ([`Error::Interval`] otherwise).
#[inline(always)]
pub(crate) fn check_interval(earliest: u64, latest: u64) -> Result<(), Error> {
    if earliest == 0 || latest < earliest || latest >= MAX_INTERVAL {
        return Err(Error::Interval);
    }
    Ok(())
}

/// Why an operation failed. Each failure leaves the scheme unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Error {
    /// Every entry of the fixed-capacity table is in use.
    Full,
    /// The handle names no outstanding timer: it fired, was stopped, or was never issued.
    Stale,
    /// The interval is zero or not below [`MAX_INTERVAL`].
    Interval,
    /// The interval is beyond what this scheme can hold (scheme 4's `MaxInterval`).
    Range,
    /// `untimeout` found no callout with that `(func, arg)`.
    NotFound,
    /// The configuration is invalid (for instance a table size that must be a power of two).
    Config,
    /// Allocating the storage at creation failed.
    NoMemory,
    /// Making the storage at creation was given up: a [`Storage`] whose caller asked it to stop
    /// (the kernel's, on a signal, between two chunks of a large buffer). Nothing was made.
    Interrupted,
    /// A placement that walks a sorted list (schemes 2 and 5) is in progress: finish it with
    /// [`Scheme::place`] first.
    Busy,
}

/// Work done by one call, counted in entries visited or moved (list steps, slot visits,
/// migrations, heap swaps, timers queued), never in operations: the unit in which a caller
/// bounds how long it holds a lock.
///
/// Every bounded operation makes progress (at least one unit) even when the budget is spent,
/// so that a caller looping on it always terminates; it may overshoot the limit by at most
/// one step: a unit; one heap sift (scheme 3: at most `log2(n)` swaps); or (schemes 4 to 6) a
/// search for the next busy slot, a unit for each word of the occupancy bitmap it reads (at
/// most [`MAX_SEARCH_WORDS`]) besides the unit of what it finds there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Work {
    limit: usize,
    done: usize,
}

impl Work {
    /// A budget of `limit` units.
    pub const fn new(limit: usize) -> Self {
        Work { limit, done: 0 }
    }

    /// A budget that never runs out (tests, benchmarks, the unbounded convenience calls).
    pub const fn unlimited() -> Self {
        Work::new(usize::MAX)
    }

    /// Counts `n` units done.
    pub fn spend(&mut self, n: usize) {
        self.done = self.done.saturating_add(n);
    }

    /// Units done so far.
    pub const fn done(&self) -> usize {
        self.done
    }

    /// Units left before the limit.
    pub const fn left(&self) -> usize {
        self.limit.saturating_sub(self.done)
    }

    /// Whether the limit is reached.
    pub const fn is_spent(&self) -> bool {
        self.done >= self.limit
    }
}

/// How [`Scheme::advance`] runs the clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// The paper's tick: every tick's `PER_TICK_BOOKKEEPING` runs, idle or not.
    Periodic,
    /// Ticks with nothing to do are skipped, at a cost independent of how many.
    Tickless,
}

/// Why [`Scheme::advance`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Advanced {
    /// The clock reached the target tick, its bookkeeping complete.
    Reached,
    /// The tick now complete queued timers: pop them before going on, so that each is
    /// processed on the tick it is due.
    Due,
    /// The work budget ran out; call again (a tick may be left half done: the scheme resumes
    /// it, and starts and stops in between are fine).
    OutOfWork,
}

/// Names an outstanding timer: an arena index (24 bits) and that entry's generation (40 bits).
///
/// Handles are plain values; a stale one is detected, never misinterpreted. No handle is 0, so
/// `Option<Handle>` is 8 bytes, and no generation issued is 0, so a handle of generation 0 is
/// always stale.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Handle(NonZeroU64);

/// Bits of a handle that hold the arena index.
const INDEX_BITS: u32 = 24;

impl Handle {
    /// Packs an arena index (its low 24 bits) and a generation (its low 40 bits).
    pub const fn new(index: u32, generation: u64) -> Self {
        let index = index as u64 & ((1 << INDEX_BITS) - 1);
        Self::from_raw((generation << INDEX_BITS) | index)
    }

    /// The arena index.
    pub const fn index(self) -> u32 {
        (self.0.get() & ((1 << INDEX_BITS) - 1)) as u32
    }

    /// The generation the entry had when the handle was issued.
    pub const fn generation(self) -> u64 {
        self.0.get() >> INDEX_BITS
    }

    /// The handle as an opaque, non-zero 64-bit value (for passing through an ABI).
    pub const fn to_raw(self) -> u64 {
        self.0.get()
    }

    /// A handle from a value of [`Handle::to_raw`]. Any value is accepted: a wrong one, 0
    /// included, is simply stale.
    pub const fn from_raw(raw: u64) -> Self {
        match NonZeroU64::new(raw) {
            Some(raw) => Handle(raw),
            // Index 2^24 - 1 is beyond every arena's capacity: stale everywhere.
            None => Handle(NonZeroU64::MAX),
        }
    }
}

/// A timer taken off the due queue by [`Scheme::pop_expired`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expired {
    /// The handle it had; stale from now on.
    pub handle: Handle,
    /// The request id given to [`Scheme::start`].
    pub id: u64,
    /// The tick it was due on.
    pub deadline: u64,
}

/// What a scheme knows about its next deadline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NextExpiry {
    /// Nothing is pending.
    Idle,
    /// The earliest pending deadline.
    At(u64),
    /// Timers are pending, but this scheme cannot name the earliest cheaply.
    Unknown,
}

impl From<Option<u64>> for NextExpiry {
    /// What a scheme that knows its earliest pending deadline, if any, says.
    fn from(earliest: Option<u64>) -> Self {
        earliest.map_or(NextExpiry::Idle, NextExpiry::At)
    }
}

/// Where a scheme's fixed storage comes from: `std` on the host, the kernel's allocator in the
/// module. Called only while a scheme is created.
pub trait Storage {
    /// An owned, fixed-length buffer.
    type Buf<T>: DerefMut<Target = [T]>;

    /// A buffer of `len` elements, element `i` being `init(i)`: [`Error::NoMemory`] if it
    /// cannot be had, [`Error::Interrupted`] if the storage gives up making it.
    fn alloc<T>(len: usize, init: impl FnMut(usize) -> T) -> Result<Self::Buf<T>, Error>;
}

/// Creation parameters shared by all schemes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// The most timers outstanding at once (pending or due); at most `u32::MAX - 1`.
    pub capacity: u32,
    /// Schemes 5 and 6: the number of wheel slots `M`, a power of two. Scheme 4: `MaxInterval`,
    /// the longest interval it accepts (one slot per tick). Ignored by the others.
    pub slots: u32,
    /// The tick the clock starts at.
    pub start: u64,
    /// The generation every entry starts at: its low 40 bits, 0 taken as 1. A handle names an
    /// entry's index and generation, so two instances started at the same generation issue the
    /// same handles, and a handle given to the wrong one names one of its timers. Started at
    /// generations `d` apart on the cycle of 2^40 - 1 that generations go round, their handles
    /// stay stale in each other until one entry has been reused some `d` times more in one than
    /// in the other.
    pub generation: u64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            capacity: 4096,
            slots: 256,
            start: 0,
            generation: 1,
        }
    }
}

/// The schemes, by their number in the paper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum SchemeKind {
    /// Scheme 1: straightforward.
    Straightforward = 1,
    /// Scheme 2: ordered list (the traditional BSD callout list).
    OrderedList = 2,
    /// Scheme 3: tree-based (a binary heap).
    Heap = 3,
    /// Scheme 4: basic timing wheel.
    BasicWheel = 4,
    /// Scheme 5: hashed wheel with sorted lists.
    HashedSorted = 5,
    /// Scheme 6: hashed wheel with unsorted lists.
    HashedUnsorted = 6,
    /// Scheme 7: hierarchical wheels.
    Hierarchical = 7,
}

impl SchemeKind {
    /// Every scheme, in the paper's order.
    pub const ALL: [SchemeKind; 7] = [
        SchemeKind::Straightforward,
        SchemeKind::OrderedList,
        SchemeKind::Heap,
        SchemeKind::BasicWheel,
        SchemeKind::HashedSorted,
        SchemeKind::HashedUnsorted,
        SchemeKind::Hierarchical,
    ];

    /// The scheme with the paper's number `n`.
    pub fn from_number(n: u32) -> Option<Self> {
        Self::ALL.into_iter().find(|k| *k as u32 == n)
    }

    /// Whether its starts and reschedules may place a timer in a walk that goes on over later
    /// calls ([`Scheme::placing`], [`Scheme::place`]): the sorted lists of schemes 2 and 5. The
    /// others place a timer within the call, so a caller need not keep other starts out while
    /// one of their calls is under way.
    pub const fn places_in_walks(self) -> bool {
        matches!(self, SchemeKind::OrderedList | SchemeKind::HashedSorted)
    }

    /// A short name for tables and CSV files.
    pub const fn name(self) -> &'static str {
        match self {
            SchemeKind::Straightforward => "scheme1-straightforward",
            SchemeKind::OrderedList => "scheme2-ordered-list",
            SchemeKind::Heap => "scheme3-heap",
            SchemeKind::BasicWheel => "scheme4-basic-wheel",
            SchemeKind::HashedSorted => "scheme5-hashed-sorted",
            SchemeKind::HashedUnsorted => "scheme6-hashed-unsorted",
            SchemeKind::Hierarchical => "scheme7-hierarchical",
        }
    }
}

/// A timer module: the paper's four routines plus what a caller needs to drive and size it.
///
/// # Example
///
/// A caller's loop, tickless, as the module drives a scheme from its hrtimer: a timeout
/// cancelled before it is due, an idle timer with slack pushed back in place (it stays where it
/// is while its deadline is still acceptable), and the clock run from one tick with work to the
/// next, popping what falls due.
///
/// ```
/// use wheel::scheme7::Hierarchical;
/// use wheel::{Advanced, Clock, Config, HostStorage, Scheme, Work};
///
/// let config = Config { capacity: 1024, ..Config::default() };
/// let mut w = Hierarchical::<HostStorage>::new(&config)?;
///
/// // A timeout 100 ticks from now, request id 1, cancelled before it is due.
/// let timeout = w.start(100, 1)?;
/// // An idle timer, request id 2, anywhere from 50 to 60 ticks from now: the scheme picks the
/// // tick that costs least.
/// let idle = w.start_range(50, 60, 2, &mut Work::unlimited())?;
/// let due = w.deadline(idle).unwrap();
/// assert!((50..=60).contains(&due));
/// assert_eq!(w.stop(timeout), Ok(1));
/// // Traffic asks for the idle timer anywhere from 45 to 65 ticks from now: its deadline is
/// // already in that range, so it stays where it is, handle and all (a `mod_timer` that costs
/// // one check).
/// w.reschedule(idle, 45, 65)?;
/// assert_eq!(w.deadline(idle), Some(due));
///
/// let mut fired = Vec::new();
/// // Sleep until next work (an hrtimer armed for it, in a kernel), then run the clock there.
/// while let Some(next) = w.next_work() {
///     loop {
///         let r = w.advance(next, Clock::Tickless, &mut Work::unlimited());
///         while let Some(e) = w.pop_expired() {
///             fired.push((e.id, e.deadline, w.now()));
///         }
///         if r == Advanced::Reached {
///             break;
///         }
///     }
/// }
/// // The idle timer fired once, on its deadline; the timeout never did.
/// assert_eq!(fired, [(2, due, due)]);
/// assert!(w.is_empty());
/// # Ok::<(), wheel::Error>(())
/// ```
pub trait Scheme {
    /// `START_TIMER`: a timer due `interval` ticks from now, carrying the request id `id`.
    /// Unbounded: [`Scheme::start_range`] with `earliest == latest` and no work limit.
    fn start(&mut self, interval: u64, id: u64) -> Result<Handle, Error>;

    /// `STOP_TIMER`: cancels a pending or queued timer and returns its request id. Unbounded:
    /// [`Scheme::stop_within`] with no work limit.
    fn stop(&mut self, handle: Handle) -> Result<u64, Error>;

    /// [`Scheme::stop`], spending on `work` what taking the timer off costs beyond the timer
    /// itself (scheme 3's sift, up to log2 n swaps; the bounds schemes 1 and 6 make exact
    /// again, only while `work` has a unit left for each timer or slot they look at; nothing in
    /// the others), so that a caller that counts a stop as one unit of its budget counts all of
    /// it. Runs to its end.
    fn stop_within(&mut self, handle: Handle, work: &mut Work) -> Result<u64, Error>;

    /// `PER_TICK_BOOKKEEPING`: advances the clock one tick and queues what is due on it.
    /// Returns how many timers were queued. Unbounded: [`Scheme::advance`] to the next tick,
    /// periodic, with no work limit (finishing first a tick left half done).
    fn tick(&mut self) -> usize;

    /// `EXPIRY_PROCESSING`: takes the oldest queued timer, if any.
    fn pop_expired(&mut self) -> Option<Expired>;

    /// The arena index ([`Handle::index`]) of the timer [`Scheme::pop_expired`] takes next, or
    /// `u32::MAX` if none is queued: read off the due queue's head, without the entry's
    /// generation that its handle is made of.
    fn next_due(&self) -> u32;

    /// The current tick.
    fn now(&self) -> u64;

    /// Timers outstanding: pending plus queued.
    fn len(&self) -> usize;

    /// Whether no timer is outstanding.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Timers queued by [`Scheme::tick`] and not yet popped.
    fn queued(&self) -> usize;

    /// The most timers outstanding at once.
    fn capacity(&self) -> usize;

    /// The earliest pending deadline, where the scheme knows it cheaply; exact (where known)
    /// once the current tick's bookkeeping is complete. To arm a clock, use
    /// [`Scheme::next_work`], which is cheaper and bounded.
    fn next_expiry(&self) -> NextExpiry;

    /// Bytes of storage this scheme allocated at creation.
    fn memory_bytes(&self) -> usize;

    /// Which scheme this is.
    fn kind(&self) -> SchemeKind;

    // ---- Bounded work and the tickless clock. ----

    /// Runs the clock towards tick `target` (at most 2^63 ahead), doing the per-tick
    /// bookkeeping and queuing what is due, within `work`. Returns at the first of: a tick
    /// completed that queued timers ([`Advanced::Due`], the clock standing on that tick, even
    /// if it is `target`); `target` reached, its bookkeeping complete ([`Advanced::Reached`]);
    /// the budget spent ([`Advanced::OutOfWork`]: call again; a tick may be left half done, and
    /// the scheme resumes it, starts, stops and reschedules in between being fine). With
    /// [`Clock::Tickless`], ticks with nothing to do are skipped at a cost independent of their
    /// number (O(levels) or O(slots visited)); with [`Clock::Periodic`], every tick's
    /// bookkeeping runs, as in the paper. Every call makes progress, so a caller looping on it
    /// terminates.
    fn advance(&mut self, target: u64, clock: Clock, work: &mut Work) -> Advanced;

    /// A lower bound of the earliest deadline of the timers pending (or placing): advancing to
    /// any tick before it queues nothing, so an hrtimer armed for it never fires late, and a
    /// caller may sleep until then. The bookkeeping on the way (scheme 7's migrations) is done
    /// by [`Scheme::advance`] as it passes. `Some(now)` while a tick is half done (call
    /// [`Scheme::advance`] at once); `None` while nothing is pending.
    ///
    /// Bounded: a search (schemes 5 and 6) looks at [`NEXT_WORK_SLOTS`] slots and groups at
    /// most, and answers a lower bound past them; [`Scheme::next_work_within`] takes its budget
    /// from the caller instead.
    fn next_work(&self) -> Option<u64>;

    /// [`Scheme::next_work`] within `work`: a search that would look at more than `work` has
    /// left (at least one unit) answers the tick of the first slot it did not look at, still a
    /// lower bound. A caller holding a lock charges the search to the hold's budget so. The
    /// schemes that answer without a search (1 to 4, in O(1)) spend one unit. Scheme 7 answers
    /// the earliest deadline itself given the budget (its `next_work` answers its lists'
    /// bounds): a unit for each list it looks at, and one for each entry of a list whose first
    /// entry is not on its bound, if the list holds at most [`LIST_LOOK_LIMIT`] (see
    /// [`scheme7::Hierarchical`]).
    fn next_work_within(&self, work: &mut Work) -> Option<u64> {
        work.spend(1);
        self.next_work()
    }

    /// Raises, within `work`, the bound behind next work when a stop or move left it low, so
    /// that [`Scheme::next_work`] answers the next timer rather than one gone: for a caller
    /// about to arm its clock for next work, or that has cancelled or pushed back the timer its
    /// clock is armed for. Scheme 6, whose slot keeps its bound when a stop leaves it busy,
    /// walks the slot next work names (a unit an entry), if it is the slot a stop or move last
    /// left busy and holds at most [`TIGHTEN_LIMIT`] entries, and makes its bound exact should
    /// nothing there be due on it. Scheme 7 does the same for the list above level 0 that next
    /// work names and a stop or move last left busy (a level-0 list keeps no bound: its next
    /// work within a budget looks at what it holds instead). The other schemes do nothing and
    /// spend nothing: their stops raise what they can themselves (schemes 1 and 5, and 6 when
    /// the slot empties), or it is exact anyway.
    fn tighten_within(&mut self, _work: &mut Work) {}

    /// [`Scheme::start`] due on a tick of the scheme's choosing in `[now + earliest, now +
    /// latest]` (`1 <= earliest <= latest < MAX_INTERVAL`, else [`Error::Interval`]): the
    /// cheapest place that fires inside the range, never outside it (scheme 7: the last slot
    /// boundary of the coarsest level the range holds, so that no migration is needed; the
    /// others: the latest tick, so that pushing the timer back into a later range leaves it
    /// alone for longest). Schemes whose start walks a sorted list (2 and 5) stop the walk when
    /// `work` is spent and leave the timer *placing*: its handle is valid (it can be stopped,
    /// and it fires on its deadline even if still placing then), and [`Scheme::place`] finishes
    /// the walk. While a timer is placing, every start and reschedule fails with
    /// [`Error::Busy`] and changes nothing. A placement given up (its timer stopped, or put
    /// back by [`Scheme::abandon_placement`]) leaves the last entry it had passed as a hint:
    /// the next placement (only the next) starts after it if it is still on the list walked and
    /// due no later, so that a start or reschedule made again goes on where the one given up
    /// stopped, and finds the place a walk from the head would.
    fn start_range(
        &mut self,
        earliest: u64,
        latest: u64,
        id: u64,
        work: &mut Work,
    ) -> Result<Handle, Error>;

    /// Whether [`Scheme::start_range`] would take the range `[now + earliest, now + latest]`,
    /// checked without starting anything: `Ok`, or the error the start would fail with on the
    /// range itself ([`Error::Interval`] outside `1 <= earliest <= latest < MAX_INTERVAL`,
    /// [`Error::Range`] beyond what the scheme holds: scheme 4's `MaxInterval`). A start that
    /// passes may still fail for room ([`Error::Full`]) or a placement in progress
    /// ([`Error::Busy`]). Lets a caller that cancels one timer to start another check the new
    /// range before it cancels. O(1); changes nothing.
    fn check_range(&self, earliest: u64, latest: u64) -> Result<(), Error> {
        check_interval(earliest, latest)
    }

    /// Whether a placement started by [`Scheme::start_range`] or [`Scheme::reschedule`] is
    /// still walking.
    fn placing(&self) -> bool {
        false
    }

    /// Continues the placement in progress within `work`; `true` once nothing is placing.
    fn place(&mut self, work: &mut Work) -> bool {
        let _ = work;
        true
    }

    /// Undoes the reschedule whose placement is in progress, in O(1): the timer goes back
    /// where it was, with the deadline it had, as if never rescheduled (for a caller cut short
    /// by a signal); if that deadline has come meanwhile, onto the due queue (late, as it
    /// would have fired had it not been moved). `false`, changing nothing, if nothing is
    /// placing, if the placing timer is a start (stop it instead), or if timers started since
    /// now stand between its old neighbours (finish the placement then).
    fn abandon_placement(&mut self) -> bool {
        false
    }

    /// `mod_timer`: moves the outstanding timer `handle` (pending, or queued and not yet
    /// popped, which leaves the due queue) to be due on a tick in `[now + earliest, now +
    /// latest]` chosen as [`Scheme::start_range`] chooses, keeping its handle and id. A
    /// pending timer already due inside the range stays as it is (Ratas'
    /// `schedule_in_range`: a timer pushed back again and again, with slack, is left alone
    /// for as long as its deadline is acceptable), and one whose new deadline puts it where it
    /// sits (its slot, its place in a sorted list) just takes the new deadline: nothing more
    /// than the check in either case. Fails with [`Error::Busy`] while a timer is placing
    /// (itself included), and changes nothing on any failure. Unbounded, as [`Scheme::start`]
    /// is: [`Scheme::reschedule_within`] with no limit on its work.
    fn reschedule(&mut self, handle: Handle, earliest: u64, latest: u64) -> Result<(), Error>;

    /// [`Scheme::reschedule`], bounded by `work` as [`Scheme::start_range`] is (a timer left
    /// placing is finished by [`Scheme::place`]). A timer that stays costs one unit.
    fn reschedule_within(
        &mut self,
        handle: Handle,
        earliest: u64,
        latest: u64,
        work: &mut Work,
    ) -> Result<(), Error>;

    /// The deadline of the outstanding (pending, placing or queued) timer `handle`, or `None`
    /// if the handle is stale.
    fn deadline(&self, handle: Handle) -> Option<u64>;

    /// The request id of the outstanding timer `handle`, or `None` if the handle is stale.
    fn id(&self, handle: Handle) -> Option<u64>;

    /// The handle of the outstanding timer at arena index `index` ([`Handle::index`]), if
    /// there is one.
    fn handle_at(&self, index: u32) -> Option<Handle>;

    /// The deadline of the outstanding timer at arena index `index`, if there is one: what
    /// [`Scheme::deadline`] of its [`Scheme::handle_at`] gives, without resolving a handle.
    fn deadline_at(&self, index: u32) -> Option<u64>;
}

/// Forwards a method call to whichever scheme `$self` holds.
macro_rules! dispatch {
    ($self:expr, $s:ident => $e:expr) => {
        match $self {
            AnyScheme::S1($s) => $e,
            AnyScheme::S2($s) => $e,
            AnyScheme::S3($s) => $e,
            AnyScheme::S4($s) => $e,
            AnyScheme::S5($s) => $e,
            AnyScheme::S6($s) => $e,
            AnyScheme::S7($s) => $e,
        }
    };
}

/// Any scheme, chosen at run time; dispatches statically.
///
/// What lives in the arena (the due queue, the clock, the counts, the entries) is reached
/// without dispatching at all: every scheme is `repr(C)` with its [`arena::Arena`] first, and
/// this enum is `repr(u8)`, whose variants each lay out as a `repr(C)` struct of the tag and
/// the scheme, so the arena sits at one offset whichever scheme is held, and the match of
/// `AnyScheme::arena` compiles to no branch. [`Scheme::pop_expired`] on the callout layer,
/// and in the module, costs what it costs on a scheme named at compile time.
///
/// Scheme 7 holds its level-0 counts in place (512 bytes), which makes its variant the largest
/// by far. The enum is made once per instance, inside the callout layer; boxing the variant
/// would put a pointer to chase before every call.
#[repr(u8)]
#[allow(clippy::large_enum_variant)]
pub enum AnyScheme<S: Storage> {
    /// Scheme 1.
    S1(scheme1::Straightforward<S>),
    /// Scheme 2.
    S2(scheme2::OrderedList<S>),
    /// Scheme 3.
    S3(scheme3::Heap<S>),
    /// Scheme 4.
    S4(scheme4::BasicWheel<S>),
    /// Scheme 5.
    S5(scheme5::HashedSorted<S>),
    /// Scheme 6.
    S6(scheme6::HashedUnsorted<S>),
    /// Scheme 7.
    S7(scheme7::Hierarchical<S>),
}

impl<S: Storage> AnyScheme<S> {
    /// Creates a scheme of kind `kind`.
    pub fn new(kind: SchemeKind, config: &Config) -> Result<Self, Error> {
        Ok(match kind {
            SchemeKind::Straightforward => AnyScheme::S1(scheme1::Straightforward::new(config)?),
            SchemeKind::OrderedList => AnyScheme::S2(scheme2::OrderedList::new(config)?),
            SchemeKind::Heap => AnyScheme::S3(scheme3::Heap::new(config)?),
            SchemeKind::BasicWheel => AnyScheme::S4(scheme4::BasicWheel::new(config)?),
            SchemeKind::HashedSorted => AnyScheme::S5(scheme5::HashedSorted::new(config)?),
            SchemeKind::HashedUnsorted => AnyScheme::S6(scheme6::HashedUnsorted::new(config)?),
            SchemeKind::Hierarchical => AnyScheme::S7(scheme7::Hierarchical::new(config)?),
        })
    }

    /// The arena of the scheme held: one offset for every variant (see [`AnyScheme`]).
    #[inline(always)]
    fn arena(&self) -> &arena::Arena<S> {
        dispatch!(self, s => &s.arena)
    }

    /// [`AnyScheme::arena`], mutably.
    #[inline(always)]
    fn arena_mut(&mut self) -> &mut arena::Arena<S> {
        dispatch!(self, s => &mut s.arena)
    }

    /// [`Scheme::reschedule_within`] of outstanding entry `idx`, past the check that leaves it
    /// where it is.
    #[inline(never)]
    fn move_pending(
        &mut self,
        idx: u32,
        earliest: u64,
        latest: u64,
        work: &mut Work,
    ) -> Result<(), Error> {
        dispatch!(self, s => s.move_pending(idx, earliest, latest, work))
    }
}

impl<S: Storage> Scheme for AnyScheme<S> {
    fn start(&mut self, interval: u64, id: u64) -> Result<Handle, Error> {
        dispatch!(self, s => s.start(interval, id))
    }
    fn stop(&mut self, handle: Handle) -> Result<u64, Error> {
        dispatch!(self, s => s.stop(handle))
    }
    fn stop_within(&mut self, handle: Handle, work: &mut Work) -> Result<u64, Error> {
        dispatch!(self, s => s.stop_within(handle, work))
    }
    fn tick(&mut self) -> usize {
        dispatch!(self, s => s.tick())
    }
    #[inline(always)]
    fn pop_expired(&mut self) -> Option<Expired> {
        self.arena_mut().pop_due()
    }
    #[inline(always)]
    fn next_due(&self) -> u32 {
        self.arena().next_due()
    }
    #[inline(always)]
    fn now(&self) -> u64 {
        self.arena().now()
    }
    fn len(&self) -> usize {
        self.arena().len()
    }
    fn queued(&self) -> usize {
        self.arena().queued()
    }
    fn capacity(&self) -> usize {
        self.arena().capacity()
    }
    fn next_expiry(&self) -> NextExpiry {
        dispatch!(self, s => s.next_expiry())
    }
    fn memory_bytes(&self) -> usize {
        dispatch!(self, s => s.memory_bytes())
    }
    fn kind(&self) -> SchemeKind {
        dispatch!(self, s => s.kind())
    }
    #[inline(always)]
    fn advance(&mut self, target: u64, clock: Clock, work: &mut Work) -> Advanced {
        dispatch!(self, s => s.advance(target, clock, work))
    }
    #[inline(always)]
    fn next_work(&self) -> Option<u64> {
        dispatch!(self, s => s.next_work())
    }
    fn next_work_within(&self, work: &mut Work) -> Option<u64> {
        dispatch!(self, s => s.next_work_within(work))
    }
    fn tighten_within(&mut self, work: &mut Work) {
        dispatch!(self, s => s.tighten_within(work))
    }
    fn start_range(
        &mut self,
        earliest: u64,
        latest: u64,
        id: u64,
        work: &mut Work,
    ) -> Result<Handle, Error> {
        dispatch!(self, s => s.start_range(earliest, latest, id, work))
    }
    fn check_range(&self, earliest: u64, latest: u64) -> Result<(), Error> {
        dispatch!(self, s => s.check_range(earliest, latest))
    }
    #[inline(always)]
    fn placing(&self) -> bool {
        dispatch!(self, s => s.placing())
    }
    fn place(&mut self, work: &mut Work) -> bool {
        dispatch!(self, s => s.place(work))
    }
    fn abandon_placement(&mut self) -> bool {
        dispatch!(self, s => s.abandon_placement())
    }
    /// The stay-put check on the arena, as each scheme's own (`arena_moves!`), without
    /// dispatching but for [`Scheme::placing`]; the move out of line.
    #[inline(always)]
    fn reschedule(&mut self, handle: Handle, earliest: u64, latest: u64) -> Result<(), Error> {
        let idx = self.arena().resolve(handle)?;
        if self.arena().due_within(idx, earliest, latest) && !self.placing() {
            return Ok(());
        }
        self.move_pending(idx, earliest, latest, &mut Work::unlimited())
    }
    #[inline(always)]
    fn reschedule_within(
        &mut self,
        handle: Handle,
        earliest: u64,
        latest: u64,
        work: &mut Work,
    ) -> Result<(), Error> {
        let idx = self.arena().resolve(handle)?;
        if self.arena().due_within(idx, earliest, latest) && !self.placing() {
            work.spend(1);
            return Ok(());
        }
        self.move_pending(idx, earliest, latest, work)
    }
    fn deadline(&self, handle: Handle) -> Option<u64> {
        self.arena().deadline_of(handle)
    }
    fn id(&self, handle: Handle) -> Option<u64> {
        self.arena().id_of(handle)
    }
    fn handle_at(&self, index: u32) -> Option<Handle> {
        self.arena().outstanding(index)
    }
    fn deadline_at(&self, index: u32) -> Option<u64> {
        self.arena().deadline_at(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HostStorage;

    /// What lets [`AnyScheme`] reach the arena without a branch: it sits at one offset whichever
    /// scheme is held. A scheme that loses `repr(C)`, or puts another field first, fails this.
    #[test]
    fn the_arena_sits_at_one_offset_in_every_scheme() {
        let config = Config {
            capacity: 8,
            slots: 64,
            start: 0,
            ..Default::default()
        };
        let offsets: std::vec::Vec<(SchemeKind, usize)> = SchemeKind::ALL
            .iter()
            .map(|&kind| {
                let s = AnyScheme::<HostStorage>::new(kind, &config).expect("new");
                let at = s.arena() as *const arena::Arena<HostStorage> as usize;
                (kind, at - &s as *const AnyScheme<HostStorage> as usize)
            })
            .collect();
        assert!(
            offsets.iter().all(|&(_, at)| at == offsets[0].1),
            "{offsets:?}"
        );
    }

    /// Only the schemes that say so leave a start or reschedule placing: here starts and
    /// reschedules of a budget of one unit, each due after every timer there is, which a sorted
    /// list walks to its end.
    #[test]
    fn only_the_schemes_that_place_in_walks_leave_a_timer_placing() {
        for kind in SchemeKind::ALL {
            // One slot for the hashed wheels: every timer on one list. Scheme 4's MaxInterval
            // holds them all.
            let slots = match kind {
                SchemeKind::BasicWheel => 1024,
                _ => 1,
            };
            let config = Config {
                capacity: 64,
                slots,
                ..Default::default()
            };
            let mut s = AnyScheme::<HostStorage>::new(kind, &config).expect("new");
            let mut placed = false;
            let mut handles = std::vec::Vec::new();
            for i in 0..32u64 {
                let r = s.start_range(100 + i * 7, 100 + i * 7, i, &mut Work::new(1));
                placed |= s.placing();
                while !s.place(&mut Work::unlimited()) {}
                handles.push(r.expect("start"));
            }
            for (i, h) in handles.iter().enumerate() {
                s.reschedule_within(*h, 500 + i as u64, 500 + i as u64, &mut Work::new(1))
                    .expect("reschedule");
                placed |= s.placing();
                while !s.place(&mut Work::unlimited()) {}
            }
            assert_eq!(placed, kind.places_in_walks(), "{kind:?}");
        }
    }

    /// [`Scheme::check_range`] answers what [`Scheme::start_range`] then does with the same
    /// range, in every scheme, and changes nothing.
    #[test]
    fn check_range_answers_as_a_start_would() {
        let config = Config {
            capacity: 4,
            slots: 64,
            start: u64::MAX - 10,
            ..Default::default()
        };
        let ranges = [
            (0, 0),
            (0, 5),
            (5, 4),
            (1, 1),
            (1, 64),
            (64, 64),
            (65, 65),
            (60, 100),
            (65, 100),
            (1, MAX_INTERVAL - 1),
            (MAX_INTERVAL - 1, MAX_INTERVAL - 1),
            (1, MAX_INTERVAL),
            (u64::MAX, u64::MAX),
        ];
        for kind in SchemeKind::ALL {
            let mut s = AnyScheme::<HostStorage>::new(kind, &config).expect("new");
            // Off the first slot, with a timer outstanding.
            let h = s.start(40, 7).expect("start");
            for _ in 0..13 {
                s.tick();
            }
            for (earliest, latest) in ranges {
                let checked = s.check_range(earliest, latest);
                assert_eq!((s.len(), s.deadline(h)), (1, Some(29)), "{kind:?}");
                let started = s
                    .start_range(earliest, latest, 1, &mut Work::unlimited())
                    .map(|new| {
                        assert!(!s.placing());
                        s.stop(new).expect("stop");
                    });
                assert_eq!(checked, started, "{kind:?} [{earliest}, {latest}]");
            }
            if kind == SchemeKind::BasicWheel {
                assert_eq!(s.check_range(65, 65), Err(Error::Range));
            }
        }
    }
}
