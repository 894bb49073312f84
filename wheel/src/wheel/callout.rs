// SPDX-License-Identifier: GPL-2.0

//! The BSD callout facility over any scheme: Costello's redesign, section VII of the paper.
//!
//! # What BSD had, and what replaced it
//!
//! The traditional BSD kernel keeps every callout — `(c_func, c_arg, c_time)` — on one list
//! sorted by expiry, with `c_time` differential: that is scheme 2. `timeout(func, arg, ticks)`
//! walks the list to insert, and `untimeout(func, arg)` walks it to find the callout with that
//! function and argument, both O(n) with interrupts locked out. Costello's implementation puts
//! the callouts on a scheme 6 wheel, which starts and stops in O(1) *given a handle* — but
//! `untimeout()` gets none. Section VII describes his two answers, and both are here:
//!
//! - The old interface keeps working through a hash table on `(func, arg)`: [`Callouts::timeout`]
//!   files the callout under that key, [`Callouts::untimeout`] looks it up there.
//! - A new interface passes handles: [`Callouts::setcallout`] returns one, and
//!   [`Callouts::unsetcallout`] takes it. It also lets one caller keep several callouts with
//!   the same function and argument apart.
//!
//! Figure 9 measures both against the old list: the list grows linearly with the number of
//! outstanding callouts, both new interfaces stay flat, and handles are "very slightly" faster.
//! `wheel-bench` repeats that measurement (one callout reset over and over behind `n` others)
//! for every scheme.
//!
//! # Structure
//!
//! The scheme owns the timers, and keeps each one's cookie (or `func`) as its request id and
//! its deadline. Beside it sit three tables allocated once, in [`Callouts::new`]:
//!
//! - one `Slot` per arena index (a handle's [`Handle::index`]): for a legacy callout, its
//!   `(func, arg)` and its links on a hash chain; for any other index (free, or armed by
//!   `setcallout`), nothing, so that `setcallout` writes nothing there;
//! - one bit per arena index, set while it is a legacy callout: what `unsetcallout` and
//!   `pop_expired` look at, so that a callout armed with `setcallout` never touches its slot,
//!   whose cache line, among a million, would be a miss;
//! - the hash buckets: a power of two at least the capacity, each the first index of a chain
//!   linked through the slots, so the load factor stays at most one.
//!
//! A caller using handles alone does without all three ([`Callouts::with_handles_only`]): the
//! whole facility is then the scheme's own storage.
//!
//! | routine         | cost                                                               |
//! |-----------------|--------------------------------------------------------------------|
//! | `setcallout`    | the scheme's start, nothing more                                   |
//! | `unsetcallout`  | the scheme's stop, plus O(1) to unlink a legacy callout's chain    |
//! | `timeout`       | the scheme's start, plus O(1) to push onto the chain               |
//! | `untimeout`     | O(1) average to walk the chain (plus duplicates), resumable, the scheme's stop |
//! | `reset`         | the scheme's reschedule: the callout keeps its handle and origin   |
//! | `tick`/`advance`| the scheme's                                                       |
//! | `pop_expired`   | the scheme's pop, plus O(1) to unlink                              |
//!
//! The `_range` forms and `reset` are bounded by a [`Work`] budget as the scheme's
//! [`Scheme::start_range`] and [`Scheme::reschedule_within`] are: on schemes 2 and 5 they may
//! leave the callout *placing*, to be finished with [`Callouts::place`] before the next arm or
//! reset ([`Error::Busy`] meanwhile).
//!
//! Chains are doubly linked so that cancelling or firing a legacy callout, which reaches it by
//! index, unlinks it without walking. A chain holds every callout with the same `(func, arg)`,
//! so `untimeout` walks those duplicates too; BSD's list walk was no better. Since a caller may
//! arm any number of duplicates, or of keys that share a bucket, the walk is bounded by a
//! [`Work`] budget like every other and resumable ([`Callouts::untimeout_within`]): a kernel
//! walks a long chain in several holds of its lock, arming, cancelling and firing in between.
//!
//! # Duplicates
//!
//! `timeout` may be called again with a `(func, arg)` already outstanding. `untimeout` then
//! cancels the one that would fire first — the first match of BSD's walk down its sorted list —
//! and among several due on the same tick, the one armed first (BSD puts a new callout after
//! its equals). A callout due but not yet popped counts as firing first: it is still
//! outstanding, and cancelling it means it is never popped.
//!
//! Intervals follow [`Scheme::start`]: `ticks` is at least one (BSD rounded zero up; here it is
//! [`Error::Interval`]) and schemes may refuse long ones ([`Error::Range`]).

use super::{Advanced, AnyScheme, Clock, Config, Error, Handle, Scheme, SchemeKind, Storage, Work};

/// No index: the end of a hash chain, or an empty bucket.
const NIL: u32 = u32::MAX;

/// What a callout is, by the interface that armed it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Armed with [`Callouts::setcallout`]; cancelled by handle.
    Callout {
        /// The caller's word, handed back when it fires.
        cookie: u64,
    },
    /// Armed with [`Callouts::timeout`]; cancelled by `(func, arg)` or by handle.
    Legacy {
        /// The function to call, an opaque word here.
        func: u64,
        /// Its argument, an opaque word here.
        arg: u64,
    },
}

/// A callout taken off the due queue by [`Callouts::pop_expired`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fired {
    /// The handle it had; stale from now on.
    pub handle: Handle,
    /// What it is.
    pub origin: Origin,
    /// The tick it was due on.
    pub deadline: u64,
}

/// What the legacy callout at one arena index is, and its links on its hash chain. Meaningful
/// only while that index is an outstanding legacy callout (its bit in `Callouts::legacy`); a
/// callout armed with `setcallout` has nothing here (its cookie is the scheme's request id).
#[derive(Clone, Copy, Debug)]
struct Slot {
    func: u64,
    arg: u64,
    /// Previous index on the hash chain, or [`NIL`].
    prev: u32,
    /// Next index on the hash chain, or [`NIL`].
    next: u32,
}

impl Slot {
    const EMPTY: Slot = Slot {
        func: 0,
        arg: 0,
        prev: NIL,
        next: NIL,
    };

    /// Whether the callout is `func(arg)`; every slot on a chain is a legacy callout's.
    fn is(&self, func: u64, arg: u64) -> bool {
        self.func == func && self.arg == arg
    }
}

/// Mixes `(func, arg)` into a hash. Both are usually kernel pointers — low bits zero, high bits
/// all alike — so every input bit has to reach the low bits the bucket mask keeps: two rounds
/// of multiply and fold (the multipliers are splitmix64's). Always inlined, as
/// [`distance`] is: the kernel's build may otherwise leave either out of line, a call and a
/// return on every `timeout` and `untimeout`.
#[inline(always)]
fn hash(func: u64, arg: u64) -> u64 {
    let mut h = func.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ arg;
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// Deadlines as signed distances from `now`: a due callout is at or below zero, a pending one
/// above. Exact, since every distance is below [`super::MAX_INTERVAL`].
#[inline(always)]
fn distance(deadline: u64, now: u64) -> i64 {
    deadline.wrapping_sub(now) as i64
}

/// The callout facility: both BSD interfaces over any scheme.
///
/// # Example
///
/// Costello's `setcallout` by handle beside the legacy `timeout` by `(func, arg)`, on scheme 7
/// chosen at run time, the clock ticked one tick at a time:
///
/// ```
/// use wheel::callout::{Callouts, Origin};
/// use wheel::{Config, HostStorage, SchemeKind};
///
/// let mut c = Callouts::<HostStorage>::new(SchemeKind::Hierarchical, &Config::default())?;
/// // The new interface: a cookie back in 10 ticks, unless the handle is cancelled first.
/// let h = c.setcallout(10, 0xc0ffee)?;
/// let gone = c.setcallout(4, 0xdead)?;
/// assert_eq!(c.unsetcallout(gone), Ok(Origin::Callout { cookie: 0xdead }));
/// // mod_timer: the same callout, handle and all, now due in 3 ticks.
/// c.reschedule(h, 3, 3)?;
/// // The legacy interface, twice with the same (func, arg): untimeout cancels the one due
/// // first, as BSD's walk of its sorted list did.
/// c.timeout(0x1000, 42, 20)?;
/// c.timeout(0x1000, 42, 5)?;
/// c.untimeout(0x1000, 42)?;
///
/// let mut fired = Vec::new();
/// for _ in 0..20 {
///     c.tick();
///     while let Some(f) = c.pop_expired() {
///         fired.push((f.deadline, f.origin));
///     }
/// }
/// let legacy = Origin::Legacy { func: 0x1000, arg: 42 };
/// assert_eq!(fired, [(3, Origin::Callout { cookie: 0xc0ffee }), (20, legacy)]);
/// # Ok::<(), wheel::Error>(())
/// ```
///
/// # Invariants
///
/// - The scheme's request id of an outstanding callout is its cookie, or its `func`.
/// - Bit `index` of `legacy` is set exactly when the index is an outstanding legacy callout;
///   its slot then holds the callout's `(func, arg)` and is on the chain of bucket
///   `hash(func, arg) & mask`, `prev`/`next` linking that chain both ways. Every other slot
///   means nothing, so that arming with `setcallout` writes nothing there.
/// - With `setcallout` alone ([`Callouts::with_handles_only`]) all three tables are empty.
///
/// The scheme is any [`Scheme`]: by default [`AnyScheme`], chosen at run time as the module
/// chooses it ([`Callouts::new`]), or one named at compile time ([`Callouts::over`]), whose
/// calls then inline into the layer's as they would into the caller's.
pub struct Callouts<S: Storage, T = AnyScheme<S>> {
    scheme: T,
    slots: S::Buf<Slot>,
    /// Bit `i % 64` of word `i / 64`: whether index `i` is an outstanding legacy callout. What
    /// `unsetcallout` and `pop_expired` look at first, a bit per timer that stays in cache, so
    /// that the handles' interface never reads the slots either.
    legacy: S::Buf<u64>,
    buckets: S::Buf<u32>,
    mask: u64,
    /// The walk of an `untimeout` cut short by its budget, if any.
    search: Option<Search>,
}

/// Where the walk of [`Callouts::untimeout_within`] stands between calls.
///
/// # Invariants
///
/// `at` and `best` are [`NIL`] or slots on the chain of `(func, arg)`'s bucket (taking a slot
/// off its chain moves `at` on); `best` is the match that would fire first among those compared
/// since the walk began, or since it last went back to the chain's head or lost its best, each
/// at its deadline when compared or, reset since, at its new one; but once the walk has gone
/// back to the head, a reset best stays the best.
///
/// The walk goes back to the chain's head twice at most. The first time `best` goes (fired or
/// cancelled between two calls) or a match is reset, every match is to be compared again. After
/// that a `best` that goes leaves the walk going on from `at` (`lost`), and a reset match is
/// compared at its new deadline with `best` where it stands; only if nothing after `at` matches
/// does the walk go back to the head a last time (`settling`), to cancel the first match it meets
/// there, whatever its deadline. Callouts that fire one by one while a long chain is walked, or
/// another thread resetting matches all through it or setting new ones, cannot keep it walking:
/// it ends within three passes of the chain.
#[derive(Clone, Copy, Debug)]
struct Search {
    func: u64,
    arg: u64,
    /// The next slot to compare, or [`NIL`]: the walk is over.
    at: u32,
    /// The best match so far, or [`NIL`].
    best: u32,
    /// Whether the walk went back to the chain's head, when a best match went or a match was
    /// reset.
    restarted: bool,
    /// Whether a best match went since the walk last left the chain's head, the walk going on
    /// from where it was.
    lost: bool,
    /// Whether the walk went back to the head a last time, and cancels the first match it
    /// meets (`best`, set only by the walk, and cancelled in the hold that sets it).
    settling: bool,
}

impl<S: Storage> Callouts<S> {
    /// A callout facility on a scheme of kind `kind`, with every table allocated now.
    pub fn new(kind: SchemeKind, config: &Config) -> Result<Self, Error> {
        Callouts::over(AnyScheme::new(kind, config)?)
    }

    /// A callout facility for the new interface alone: no hash table, no side table, nothing
    /// beyond the scheme's own storage. `timeout` fails with [`Error::Config`]; `untimeout`
    /// finds nothing.
    pub fn with_handles_only(kind: SchemeKind, config: &Config) -> Result<Self, Error> {
        Callouts::over_handles_only(AnyScheme::new(kind, config)?)
    }
}

impl<S: Storage, T: Scheme> Callouts<S, T> {
    /// [`Callouts::new`] on `scheme`, which it takes over: its tables are sized by the scheme's
    /// capacity. Timers it already holds are callouts of the new interface from then on, each
    /// request id its cookie.
    pub fn over(scheme: T) -> Result<Self, Error> {
        let capacity = scheme.capacity();
        // One bucket per timer at least: a load factor of at most one.
        let nbuckets = capacity.checked_next_power_of_two().ok_or(Error::Config)?;
        let slots = S::alloc(capacity, |_| Slot::EMPTY)?;
        let legacy = S::alloc(capacity.div_ceil(64), |_| 0)?;
        let buckets = S::alloc(nbuckets, |_| NIL)?;
        Ok(Callouts {
            scheme,
            slots,
            legacy,
            buckets,
            mask: nbuckets as u64 - 1,
            search: None,
        })
    }

    /// [`Callouts::with_handles_only`] on `scheme`, which it takes over, as [`Callouts::over`]
    /// does.
    pub fn over_handles_only(scheme: T) -> Result<Self, Error> {
        Ok(Callouts {
            scheme,
            slots: S::alloc(0, |_| Slot::EMPTY)?,
            legacy: S::alloc(0, |_| 0)?,
            buckets: S::alloc(1, |_| NIL)?,
            mask: 0,
            search: None,
        })
    }

    /// Whether `timeout` is available (see [`Callouts::with_handles_only`]).
    fn has_legacy(&self) -> bool {
        !self.slots.is_empty()
    }

    /// The new interface: `cookie` comes back in a [`Fired`] `ticks` ticks from now, unless the
    /// returned handle is given to [`Callouts::unsetcallout`] first.
    pub fn setcallout(&mut self, ticks: u64, cookie: u64) -> Result<Handle, Error> {
        self.setcallout_range(ticks, ticks, cookie, &mut Work::unlimited())
    }

    /// [`Callouts::setcallout`] due on a tick of the scheme's choosing in `[now + earliest, now
    /// + latest]` ([`Scheme::start_range`]), within `work`.
    #[inline]
    pub fn setcallout_range(
        &mut self,
        earliest: u64,
        latest: u64,
        cookie: u64,
        work: &mut Work,
    ) -> Result<Handle, Error> {
        let handle = self.scheme.start_range(earliest, latest, cookie, work)?;
        // Nothing to write: an index that is not a legacy callout's has its bit clear (see the
        // invariants), and a `setcallout` leaves its slot's cache line alone.
        debug_assert!(!self.is_legacy(handle.index()));
        Ok(handle)
    }

    /// Whether [`Callouts::setcallout_range`] would take the range `[now + earliest, now +
    /// latest]`, checked without arming anything: [`Scheme::check_range`]. A reset that cancels
    /// one callout to arm another checks first, so that one it cannot arm leaves the old alone.
    pub fn check_range(&self, earliest: u64, latest: u64) -> Result<(), Error> {
        self.scheme.check_range(earliest, latest)
    }

    /// Cancels the callout `handle` names — from either interface — and says what it was.
    /// Fails with [`Error::Stale`], changing nothing, if it fired or was cancelled.
    pub fn unsetcallout(&mut self, handle: Handle) -> Result<Origin, Error> {
        self.unsetcallout_within(handle, &mut Work::unlimited())
    }

    /// [`Callouts::unsetcallout`], spending on `work` what the scheme's stop costs beyond the
    /// callout itself ([`Scheme::stop_within`]).
    pub fn unsetcallout_within(
        &mut self,
        handle: Handle,
        work: &mut Work,
    ) -> Result<Origin, Error> {
        let id = self.scheme.stop_within(handle, work)?;
        Ok(self.forget(handle.index(), id))
    }

    /// The old interface: `func(arg)` is due `ticks` ticks from now. The handle may be ignored;
    /// [`Callouts::untimeout`] finds the callout by `(func, arg)`.
    pub fn timeout(&mut self, func: u64, arg: u64, ticks: u64) -> Result<Handle, Error> {
        self.timeout_range(func, arg, ticks, ticks, &mut Work::unlimited())
    }

    /// [`Callouts::timeout`] due on a tick of the scheme's choosing in `[now + earliest, now +
    /// latest]` ([`Scheme::start_range`]), within `work`.
    pub fn timeout_range(
        &mut self,
        func: u64,
        arg: u64,
        earliest: u64,
        latest: u64,
        work: &mut Work,
    ) -> Result<Handle, Error> {
        if !self.has_legacy() {
            return Err(Error::Config);
        }
        let handle = self.scheme.start_range(earliest, latest, func, work)?;
        self.link(handle.index(), func, arg);
        Ok(handle)
    }

    /// Cancels one outstanding callout armed by `timeout(func, arg, _)`: of several, the one
    /// due first, and of those due on the same tick the one armed first. Fails with
    /// [`Error::NotFound`] if there is none.
    pub fn untimeout(&mut self, func: u64, arg: u64) -> Result<(), Error> {
        self.untimeout_within(func, arg, &mut Work::unlimited())
            .map(|_| ())
    }

    /// [`Callouts::untimeout`] within `work`, a unit for each callout of the chain it looks
    /// at (at least one): `Ok(Some(tick))` once it has cancelled one, due on `tick` (so that a
    /// tickless caller knows whether its clock was set for it); `Ok(None)` if the budget ran
    /// out first, to be called again with the same `(func, arg)`, when the walk goes on where
    /// it stopped, whatever was armed, cancelled or fired meanwhile (a callout armed since is
    /// not looked at, unless the one that would have been cancelled went: the walk then starts
    /// again from the chain's head, the first time; after that it goes on among the callouts
    /// after where it was, and cancels the one due first among those, going back to the head
    /// only if none matches, a last time, to cancel the first match it meets there, so that
    /// callouts firing one by one during a long walk, or set anew, cannot keep it walking);
    /// [`Error::NotFound`] if there is none. A [`Callouts::reset`] of one of the matches
    /// meanwhile sends the walk back to the chain's head, the first time. A call with another
    /// key, or [`Callouts::abandon_untimeout`], drops a walk in progress.
    pub fn untimeout_within(
        &mut self,
        func: u64,
        arg: u64,
        work: &mut Work,
    ) -> Result<Option<u64>, Error> {
        if !self.has_legacy() {
            return Err(Error::NotFound);
        }
        let mut s = match self.search.take() {
            Some(s) if (s.func, s.arg) == (func, arg) => s,
            _ => Search {
                func,
                arg,
                at: self.chain(func, arg),
                best: NIL,
                restarted: false,
                lost: false,
                settling: false,
            },
        };
        let now = self.scheme.now();
        let mut first = true;
        loop {
            while s.at != NIL && !(s.settling && s.best != NIL) {
                if work.is_spent() && !first {
                    self.search = Some(s);
                    return Ok(None);
                }
                first = false;
                work.spend(1);
                let slot = self.slots[s.at as usize];
                // Chains run newest first: a later match due on the same tick is an older one,
                // and wins the tie.
                if slot.is(func, arg)
                    && (s.best == NIL || self.due_in(s.at, now) <= self.due_in(s.best, now))
                {
                    s.best = s.at;
                }
                s.at = slot.next;
            }
            if s.best != NIL || !s.lost || s.settling {
                break;
            }
            // A best match went, and nothing after it matched: what is left is before it, and
            // the first match met from the head is cancelled (see `Search`).
            s.lost = false;
            s.settling = true;
            s.at = self.chain(func, arg);
        }
        if s.best == NIL {
            return Err(Error::NotFound);
        }
        // Cannot fail: every slot on a chain is outstanding.
        let handle = self.scheme.handle_at(s.best).ok_or(Error::Stale)?;
        let deadline = self.scheme.deadline_at(s.best).ok_or(Error::Stale)?;
        let id = self.scheme.stop_within(handle, work)?;
        self.forget(s.best, id);
        Ok(Some(deadline))
    }

    /// Drops the walk of an `untimeout` cut short, if there is one: nothing is cancelled.
    pub fn abandon_untimeout(&mut self) {
        self.search = None;
    }

    /// Whether callouts of keys `a` and `b` go on one hash chain, the one an `untimeout` of
    /// either walks. O(1).
    pub fn same_chain(&self, a: (u64, u64), b: (u64, u64)) -> bool {
        self.bucket(a.0, a.1) == self.bucket(b.0, b.1)
    }

    /// Whether the walk of an `untimeout` cut short is on its first pass of the chain: it has
    /// not gone back to the head (no best match went, no match was reset). What it compared
    /// so far, each at the deadline it still has, is then what a walk started from the head
    /// now would compare, if no callout of its key was armed since it began: such a walk can
    /// be taken up by a later call, not only by the next hold of the same one.
    pub fn untimeout_in_first_pass(&self) -> bool {
        self.search
            .is_some_and(|s| !s.restarted && !s.lost && !s.settling)
    }

    /// `mod_timer`: moves the outstanding callout `handle` (pending, or due and not yet popped)
    /// to a tick in `[now + earliest, now + latest]`, in place
    /// ([`Scheme::reschedule_within`]): it keeps its handle and what it is, from either
    /// interface. Within `work`.
    #[inline(always)]
    pub fn reset(
        &mut self,
        handle: Handle,
        earliest: u64,
        latest: u64,
        work: &mut Work,
    ) -> Result<(), Error> {
        self.scheme
            .reschedule_within(handle, earliest, latest, work)?;
        self.moved(handle);
        Ok(())
    }

    /// [`Callouts::reset`] unbounded, as [`Scheme::reschedule`] is beside
    /// [`Scheme::reschedule_within`]: the budget is made only if the callout moves, so that
    /// one that stays (a timeout pushed back within its range) costs the check alone, with no
    /// budget written for a caller that has none.
    #[inline(always)]
    pub fn reschedule(&mut self, handle: Handle, earliest: u64, latest: u64) -> Result<(), Error> {
        self.scheme.reschedule(handle, earliest, latest)?;
        self.moved(handle);
        Ok(())
    }

    /// After a reset of the callout `handle`: a walk of `untimeout` in progress, if the callout
    /// is one of its matches, takes its new deadline into account.
    #[inline(always)]
    fn moved(&mut self, handle: Handle) {
        if let Some(s) = self.search {
            self.search_sees_reset(s, handle.index());
        }
    }

    /// When the callout at `idx`, just moved, is one of the matches of `s`, the walk of an
    /// `untimeout` in progress: what the walk compared against its old deadline may compare
    /// otherwise against the new one, before or after where it stands. The first time, the
    /// walk goes back to its chain's head; after that the match is compared with the best
    /// where the walk stands, and, once the walk is settling, not at all (see [`Search`]), so
    /// that resets cannot keep it walking.
    #[cold]
    fn search_sees_reset(&mut self, mut s: Search, idx: u32) {
        if s.settling || !(self.is_legacy(idx) && self.slots[idx as usize].is(s.func, s.arg)) {
            return;
        }
        if !s.restarted {
            s.restarted = true;
            s.at = self.chain(s.func, s.arg);
            s.best = NIL;
            s.lost = false;
        } else if s.best != idx {
            // Strictly sooner: on a tie, the match after it on the chain, the older, wins, and
            // if `idx` is after `at` the walk compares it again when it gets there.
            let now = self.scheme.now();
            if s.best == NIL || self.due_in(idx, now) < self.due_in(s.best, now) {
                s.best = idx;
            }
        }
        self.search = Some(s);
    }

    /// The tick the outstanding callout `handle` is due on, or `None` if it is stale.
    pub fn deadline(&self, handle: Handle) -> Option<u64> {
        self.scheme.deadline(handle)
    }

    /// What the outstanding callout `handle` is, or `None` if it is stale.
    pub fn origin(&self, handle: Handle) -> Option<Origin> {
        let id = self.scheme.id(handle)?;
        Some(self.origin_at(handle.index(), id))
    }

    /// Advances the clock one tick; returns how many callouts became due.
    pub fn tick(&mut self) -> usize {
        self.scheme.tick()
    }

    /// Runs the clock towards `target` within `work`: [`Scheme::advance`].
    pub fn advance(&mut self, target: u64, clock: Clock, work: &mut Work) -> Advanced {
        self.scheme.advance(target, clock, work)
    }

    /// A lower bound of the next deadline, for arming the clock: [`Scheme::next_work`].
    pub fn next_work(&self) -> Option<u64> {
        self.scheme.next_work()
    }

    /// [`Callouts::next_work`] within `work`: [`Scheme::next_work_within`].
    pub fn next_work_within(&self, work: &mut Work) -> Option<u64> {
        self.scheme.next_work_within(work)
    }

    /// Raises the bound behind next work left low by a cancel: [`Scheme::tighten_within`].
    pub fn tighten_within(&mut self, work: &mut Work) {
        self.scheme.tighten_within(work);
    }

    /// Whether an arm or reset is still looking for its place: [`Scheme::placing`].
    pub fn placing(&self) -> bool {
        self.scheme.placing()
    }

    /// Continues the placement in progress within `work`: [`Scheme::place`].
    pub fn place(&mut self, work: &mut Work) -> bool {
        self.scheme.place(work)
    }

    /// Undoes the reset whose placement is in progress, if it can: [`Scheme::abandon_placement`].
    ///
    /// The walk of an `untimeout` in progress is not told: one that compared the callout at the
    /// deadline the reset was taking it to keeps that comparison, and may cancel a match due
    /// after another it passed. A caller that keeps walks and placements apart (the module: each
    /// holds the file's right to long operations, and a walk a signal cut short is dropped when a
    /// placement is undone) never meets the case.
    pub fn abandon_placement(&mut self) -> bool {
        self.scheme.abandon_placement()
    }

    /// Takes the oldest due callout, if any. The caller runs it (and may arm or cancel
    /// callouts before the next pop).
    #[inline(always)]
    pub fn pop_expired(&mut self) -> Option<Fired> {
        // The index from the queue's head rather than the handle, so that its legacy bit is
        // looked up without waiting for the entry's generation, which the handle is made of.
        let idx = self.scheme.next_due();
        let expired = self.scheme.pop_expired()?;
        Some(Fired {
            handle: expired.handle,
            origin: self.forget(idx, expired.id),
            deadline: expired.deadline,
        })
    }

    /// The scheme underneath, for `now`, `len`, `queued`, `capacity` and `next_expiry`.
    pub fn scheme(&self) -> &T {
        &self.scheme
    }

    /// Bytes allocated at creation: the scheme's storage, the slots and the buckets.
    pub fn memory_bytes(&self) -> usize {
        self.scheme.memory_bytes()
            + self.slots.len() * core::mem::size_of::<Slot>()
            + self.legacy.len() * core::mem::size_of::<u64>()
            + self.buckets.len() * core::mem::size_of::<u32>()
    }

    /// What the outstanding callout at `idx`, of request id `id`, is.
    fn origin_at(&self, idx: u32, id: u64) -> Origin {
        match self.is_legacy(idx) {
            false => Origin::Callout { cookie: id },
            true => self.legacy_origin(idx),
        }
    }

    /// What the outstanding legacy callout at `idx` is: its slot's `(func, arg)`.
    fn legacy_origin(&self, idx: u32) -> Origin {
        let slot = &self.slots[idx as usize];
        Origin::Legacy {
            func: slot.func,
            arg: slot.arg,
        }
    }

    /// Whether index `idx` is an outstanding legacy callout.
    #[inline]
    fn is_legacy(&self, idx: u32) -> bool {
        self.legacy
            .get(idx as usize / 64)
            .is_some_and(|w| w >> (idx % 64) & 1 != 0)
    }

    /// Marks index `idx` as an outstanding legacy callout, or as not one.
    fn mark_legacy(&mut self, idx: u32, legacy: bool) {
        let w = &mut self.legacy[idx as usize / 64];
        match legacy {
            true => *w |= 1 << (idx % 64),
            false => *w &= !(1 << (idx % 64)),
        }
    }

    /// Says what the callout at `idx`, of request id `id`, just stopped or popped, was, and
    /// takes a legacy one off its chain. Always inlined, the legacy case never: the kernel's
    /// build otherwise made the whole of it a call on every `unsetcallout`, as the code around
    /// it changed.
    #[inline(always)]
    fn forget(&mut self, idx: u32, id: u64) -> Origin {
        match self.is_legacy(idx) {
            // The common case, inlined into `unsetcallout` and the pop: one bit read.
            false => Origin::Callout { cookie: id },
            true => self.forget_legacy(idx),
        }
    }

    /// [`Callouts::forget`] of a legacy callout.
    #[inline(never)]
    fn forget_legacy(&mut self, idx: u32) -> Origin {
        let origin = self.legacy_origin(idx);
        self.unlink(idx);
        origin
    }

    fn bucket(&self, func: u64, arg: u64) -> usize {
        (hash(func, arg) & self.mask) as usize
    }

    /// The first slot on the chain of `(func, arg)`'s bucket, or [`NIL`].
    fn chain(&self, func: u64, arg: u64) -> u32 {
        self.buckets[self.bucket(func, arg)]
    }

    /// Pushes slot `idx`, on no chain, onto the front of its chain.
    fn link(&mut self, idx: u32, func: u64, arg: u64) {
        let b = self.bucket(func, arg);
        let head = self.buckets[b];
        if head != NIL {
            self.slots[head as usize].prev = idx;
        }
        self.slots[idx as usize] = Slot {
            func,
            arg,
            prev: NIL,
            next: head,
        };
        self.buckets[b] = idx;
        self.mark_legacy(idx, true);
    }

    /// Takes slot `idx` off its chain, clearing its bit, and keeps the walk of an `untimeout`
    /// in progress on the chain.
    fn unlink(&mut self, idx: u32) {
        let Slot {
            func,
            arg,
            prev,
            next,
        } = self.slots[idx as usize];
        if prev == NIL {
            let bucket = self.bucket(func, arg);
            self.buckets[bucket] = next;
        } else {
            self.slots[prev as usize].next = next;
        }
        if next != NIL {
            self.slots[next as usize].prev = prev;
        }
        self.mark_legacy(idx, false);
        if let Some(mut s) = self.search {
            if s.at == idx {
                s.at = next;
            }
            if s.best == idx {
                // INVARIANT: the best match went; what it beat may now be the best, looked at
                // again from the chain's head once, and after that, for a last time, only if
                // nothing after `at` matches (see `Search`).
                s.best = NIL;
                match s.restarted {
                    false => {
                        s.restarted = true;
                        s.at = self.chain(s.func, s.arg);
                    }
                    true => s.lost = true,
                }
            }
            self.search = Some(s);
        }
    }

    /// Signed ticks until the outstanding callout at `idx` is due, from `now`.
    fn due_in(&self, idx: u32, now: u64) -> i64 {
        let deadline = self.scheme.deadline_at(idx);
        // Every slot on a chain is outstanding.
        distance(deadline.unwrap_or(now), now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HostStorage;
    use std::format;
    use std::vec;
    use std::vec::Vec;

    fn callouts(capacity: u32, start: u64) -> Callouts<HostStorage> {
        let config = Config {
            capacity,
            slots: 256,
            start,
            ..Default::default()
        };
        Callouts::new(SchemeKind::OrderedList, &config).unwrap()
    }

    /// Ticks once and pops everything due.
    fn step(c: &mut Callouts<HostStorage>) -> Vec<Fired> {
        c.tick();
        core::iter::from_fn(|| c.pop_expired()).collect()
    }

    fn legacy(func: u64, arg: u64) -> Origin {
        Origin::Legacy { func, arg }
    }

    #[test]
    fn hash_spreads_pointer_like_keys() {
        // Aligned pointers differing only in bits 4..12 must not pile into a few buckets.
        let mask = 63;
        let mut used = [false; 64];
        for k in 0..64u64 {
            used[(hash(0xffff_8880_0000_0000 + (k << 4), 0xffff_8880_1234_5000) & mask) as usize] =
                true;
        }
        assert!(used.iter().filter(|u| **u).count() > 32);
        assert_ne!(hash(1, 2), hash(2, 1));
    }

    #[test]
    fn distance_is_signed_around_now() {
        assert_eq!(distance(5, 3), 2);
        assert_eq!(distance(3, 5), -2);
        assert_eq!(distance(1, u64::MAX), 2);
    }

    #[test]
    fn setcallout_fires_with_its_cookie_and_unset_cancels() {
        let mut c = callouts(8, 0);
        let a = c.setcallout(2, 77).unwrap();
        let b = c.setcallout(2, 78).unwrap();
        assert_eq!(c.unsetcallout(b), Ok(Origin::Callout { cookie: 78 }));
        assert_eq!(c.unsetcallout(b), Err(Error::Stale));
        assert!(step(&mut c).is_empty());
        let fired = step(&mut c);
        let want = Fired {
            handle: a,
            origin: Origin::Callout { cookie: 77 },
            deadline: 2,
        };
        assert_eq!(fired, [want]);
        assert_eq!(c.unsetcallout(a), Err(Error::Stale));
        assert!(c.scheme().is_empty());
    }

    #[test]
    fn timeout_fires_and_untimeout_finds_by_func_and_arg() {
        let mut c = callouts(8, 0);
        c.timeout(1, 10, 3).unwrap();
        c.timeout(1, 11, 3).unwrap();
        c.timeout(2, 10, 3).unwrap();
        assert_eq!(c.untimeout(1, 11), Ok(()));
        assert_eq!(c.untimeout(1, 11), Err(Error::NotFound));
        assert_eq!(c.untimeout(3, 3), Err(Error::NotFound));
        step(&mut c);
        step(&mut c);
        let mut fired: Vec<Origin> = step(&mut c).iter().map(|f| f.origin).collect();
        fired.sort_by_key(|o| format!("{o:?}"));
        assert_eq!(fired, [legacy(1, 10), legacy(2, 10)]);
        assert_eq!(c.untimeout(1, 10), Err(Error::NotFound));
    }

    #[test]
    fn untimeout_of_duplicates_cancels_the_one_due_first_then_the_oldest() {
        let mut c = callouts(8, u64::MAX - 1);
        let late = c.timeout(5, 6, 9).unwrap();
        let first = c.timeout(5, 6, 4).unwrap();
        let second = c.timeout(5, 6, 4).unwrap();
        // Each reports the tick of the one it cancelled, across the clock's wrap.
        let unlimited = &mut Work::unlimited();
        assert_eq!(c.untimeout_within(5, 6, unlimited), Ok(Some(2)));
        assert_eq!(c.unsetcallout(first), Err(Error::Stale));
        assert_eq!(c.untimeout_within(5, 6, unlimited), Ok(Some(2)));
        assert_eq!(c.unsetcallout(second), Err(Error::Stale));
        assert_eq!(c.deadline(late), Some(7));
        assert_eq!(c.unsetcallout(late), Ok(legacy(5, 6)));
        assert_eq!(c.untimeout(5, 6), Err(Error::NotFound));
    }

    /// Walks `untimeout(func, arg)` to its end `budget` units at a time, running `between`
    /// before each resumption; the calls it took.
    fn untimeout_in_steps(
        c: &mut Callouts<HostStorage>,
        func: u64,
        arg: u64,
        budget: usize,
        mut between: impl FnMut(&mut Callouts<HostStorage>, usize),
    ) -> Result<usize, Error> {
        let mut calls = 0;
        loop {
            let mut work = Work::new(budget);
            let done = c.untimeout_within(func, arg, &mut work)?;
            calls += 1;
            assert!(work.done() <= budget, "{} units of {budget}", work.done());
            if done.is_some() {
                return Ok(calls);
            }
            between(c, calls);
        }
    }

    /// A match reset while a walk of `untimeout` is cut short: the walk compares every match
    /// again, and cancels the one due first after the reset. It went on with the best match it
    /// had, which the reset moved after a match the walk had already passed, and cancelled the
    /// one due at 90 where the one due at 50 fires first.
    #[test]
    fn untimeout_after_a_reset_during_its_walk_cancels_the_one_due_first() {
        for kind in SchemeKind::ALL {
            let config = Config {
                capacity: 8,
                slots: 256,
                start: 0,
                ..Default::default()
            };
            let mut c = Callouts::<HostStorage>::new(kind, &config).unwrap();
            let y = c.timeout(5, 6, 90).unwrap();
            let x = c.timeout(5, 6, 10).unwrap();
            let z = c.timeout(5, 6, 50).unwrap();
            // The chain runs newest first (z, x, y): two steps compare z and x, x the best.
            assert!(!c.untimeout_in_first_pass(), "{kind:?}");
            assert_eq!(
                c.untimeout_within(5, 6, &mut Work::new(2)),
                Ok(None),
                "{kind:?}"
            );
            assert!(c.untimeout_in_first_pass(), "{kind:?}");
            c.reset(x, 100, 100, &mut Work::unlimited()).unwrap();
            while c.placing() {
                c.place(&mut Work::unlimited());
            }
            // Back to the head: no longer what a walk begun now would have compared.
            assert!(!c.untimeout_in_first_pass(), "{kind:?}");
            let cancelled = c.untimeout_within(5, 6, &mut Work::unlimited());
            assert_eq!(cancelled, Ok(Some(50)), "{kind:?}");
            assert_eq!(c.unsetcallout(z), Err(Error::Stale), "{kind:?}");
            assert_eq!(c.deadline(y), Some(90), "{kind:?}");
            assert_eq!(c.deadline(x), Some(100), "{kind:?}");
        }
    }

    #[test]
    fn untimeout_walks_a_long_chain_in_bounded_steps() {
        let mut c = callouts(256, 0);
        // 200 duplicates on one chain, the newest due first; 20 callouts of other keys.
        let h: Vec<Handle> = (0..200)
            .map(|i| c.timeout(5, 6, 1000 - i).unwrap())
            .collect();
        for i in 0..20 {
            c.timeout(5, 7 + i, 10).unwrap();
        }
        let calls = untimeout_in_steps(&mut c, 5, 6, 8, |_, _| {}).unwrap();
        assert!(calls >= 200 / 8, "{calls} calls");
        assert_eq!(c.unsetcallout(h[199]), Err(Error::Stale));
        // Cut short, then resumed past arms, a cancel of the best so far and a firing: the
        // one cancelled is the one due first among those left.
        let mut fired = Vec::new();
        let calls = untimeout_in_steps(&mut c, 5, 6, 16, |c, k| match k {
            1 => {
                c.timeout(5, 6, 2000).unwrap();
            }
            2 => {
                assert_eq!(c.unsetcallout(h[198]), Ok(legacy(5, 6)));
            }
            3 => {
                for _ in 0..10 {
                    fired.extend(step(c));
                }
            }
            _ => {}
        })
        .unwrap();
        assert!(calls > 3, "{calls} calls");
        assert_eq!(fired.len(), 20, "the other key's callouts fire on tick 10");
        assert_eq!(c.unsetcallout(h[197]), Err(Error::Stale));
        for (k, &h) in h.iter().enumerate().take(197) {
            assert_eq!(c.unsetcallout(h), Ok(legacy(5, 6)), "duplicate {k}");
        }
        assert_eq!(c.untimeout(5, 6), Ok(()), "the one armed during the walk");
        assert_eq!(c.untimeout(5, 6), Err(Error::NotFound));
        // An abandoned walk cancels nothing; one for another key starts afresh.
        let now = c.scheme().now();
        c.timeout(5, 6, 50).unwrap();
        c.timeout(5, 6, 40).unwrap();
        assert_eq!(c.untimeout_within(5, 6, &mut Work::new(1)), Ok(None));
        c.abandon_untimeout();
        assert_eq!(
            c.untimeout_within(5, 8, &mut Work::new(1)),
            Err(Error::NotFound)
        );
        assert_eq!(c.scheme().len(), 2);
        assert_eq!(c.untimeout(5, 6), Ok(()));
        let left: Vec<u64> = (0..50)
            .flat_map(|_| step(&mut c))
            .map(|f| f.deadline)
            .collect();
        assert_eq!(left, [now + 50]);
    }

    /// Another caller resetting matches between every two calls of a walk of a long chain: the
    /// walk goes back to the head once, then compares each reset match where it stands, and ends
    /// within two passes of the chain, where going back to the head on every reset kept it
    /// walking for as long as the resets went on. The oldest match, at the chain's tail, reset
    /// to later every time gives way to the one due first; reset to sooner than all, it wins.
    /// The newest, due first, reset to later every time once the walk has passed it, is beaten
    /// by the next match compared.
    #[test]
    fn untimeout_ends_while_another_caller_resets_its_matches() {
        let n = 200;
        // (the match reset from the second call on, to this tick plus the call's number, the
        // match cancelled)
        for (m, tick, want) in [(0, 2000, n - 1), (0, 5, 0), (n - 1, 3000, n - 9)] {
            let mut c = callouts(256, 0);
            // The newest, at the chain's head, is due first (on tick 1000 - 199 = 801).
            let h: Vec<Handle> = (0..n)
                .map(|i| c.timeout(5, 6, 1000 - i as u64).unwrap())
                .collect();
            let calls = untimeout_in_steps(&mut c, 5, 6, 8, |c, k| {
                assert!(k <= 2 * n / 8 + 2, "still walking after {k} calls");
                // The first reset sends the walk back to the head; the others do not.
                let (m, t) = if k == 1 {
                    (0, 4000)
                } else {
                    (m, tick + k as u64)
                };
                c.reset(h[m], t, t, &mut Work::unlimited()).unwrap();
            })
            .unwrap();
            assert!(calls <= 2 * n / 8 + 2, "{calls} calls");
            let cancelled: Vec<usize> = (0..n).filter(|&i| c.deadline(h[i]).is_none()).collect();
            assert_eq!(cancelled, [want], "match {m} reset to {tick} + k");
        }
    }

    /// Duplicates firing one a tick while a long chain is walked a few entries a call: the walk
    /// goes back to the head once, then goes on, and ends within a few passes of the chain,
    /// where sending it back to the head each time its best fired kept it walking until the
    /// chain was nearly drained.
    #[test]
    fn untimeout_ends_while_duplicates_fire_during_its_walk() {
        let n = 400;
        let mut c = callouts(512, 0);
        // Armed latest first: the newest, at the chain's head, is due first.
        for i in 0..n {
            c.timeout(5, 6, n + 1 - i).unwrap();
        }
        // One fires between every two calls of 8 entries each.
        let mut fired = 0;
        let calls = untimeout_in_steps(&mut c, 5, 6, 8, |c, _| fired += step(c).len()).unwrap();
        assert!(calls <= 3 * n as usize / 8, "{calls} calls, {fired} fired");
        assert_eq!(c.scheme().len() as u64, n - 1 - fired as u64);
        // And the walk cancelled a duplicate that had not fired: every other one fires.
        let rest: usize = (0..=n).map(|_| step(&mut c).len()).sum();
        assert_eq!(rest as u64 + fired as u64 + 1, n);
    }

    /// `tail` callouts of other keys on the chain of `(5, 6)`, armed `far` ticks away: set
    /// before the matches, they are the tail a walk of `untimeout(5, 6)` takes long over.
    fn tail_of_other_keys(c: &mut Callouts<HostStorage>, tail: usize, far: u64) {
        let mut set = 0;
        for arg in 7.. {
            if set == tail {
                break;
            }
            if c.bucket(5, arg) == c.bucket(5, 6) {
                c.timeout(5, arg, far).unwrap();
                set += 1;
            }
        }
    }

    /// Matches due one after another, ahead of a long tail of other keys, firing while the
    /// walk is on the tail: the walk goes back to the head once when its best fires, goes on
    /// when the next best fires, and, nothing after it matching, goes back a last time and
    /// cancels the first match it meets. Sent back each time its best fired, it kept walking
    /// the tail for as long as the matches lasted.
    #[test]
    fn untimeout_ends_while_its_matches_fire_during_a_walk_of_other_keys() {
        let (tail, matches) = (400, 200);
        let mut c = callouts(1024, 0);
        tail_of_other_keys(&mut c, tail, 5000);
        // The oldest due first: one every 5 ticks, the last on tick 1000.
        let h: Vec<Handle> = (1..=matches as u64)
            .map(|k| c.timeout(5, 6, 5 * k).unwrap())
            .collect();
        let pass = (tail + matches) / 8 + 1;
        let mut fired = 0;
        let calls = untimeout_in_steps(&mut c, 5, 6, 8, |c, k| {
            assert!(
                k <= 3 * pass,
                "still walking after {k} calls, {fired} fired"
            );
            fired += step(c).len();
        })
        .unwrap();
        assert!(fired >= 10, "{fired} fired: the walk did not outlast them");
        assert!(calls <= 3 * pass, "{calls} calls");
        let left = h.iter().filter(|&&h| c.deadline(h).is_some()).count();
        assert_eq!(left, matches - fired - 1, "one cancelled, {fired} fired");
        // The first met from the head: the newest, due last.
        assert_eq!(c.deadline(h[matches - 1]), None);
    }

    /// Another caller setting new matches at the head of a long chain while the walk is on its
    /// tail, and the two matches there firing: the walk ends, cancelling one of the new
    /// ones, where it went back to the head each time its best fired, for as long as the new
    /// ones came.
    #[test]
    fn untimeout_ends_while_another_caller_sets_matches_during_a_walk_of_other_keys() {
        let tail = 400;
        let mut c = callouts(4096, 0);
        tail_of_other_keys(&mut c, tail, 100_000);
        let mut set = vec![c.timeout(5, 6, 5).unwrap(), c.timeout(5, 6, 8).unwrap()];
        let pass = (tail + 2) / 8 + 1;
        let mut fired = Vec::new();
        let calls = untimeout_in_steps(&mut c, 5, 6, 8, |c, k| {
            assert!(k <= 3 * pass, "still walking after {k} calls");
            fired.extend(step(c).iter().map(|f| f.handle));
            if k % 5 == 0 {
                set.push(c.timeout(5, 6, 10).unwrap());
            }
        })
        .unwrap();
        assert!(calls <= 3 * pass, "{calls} calls");
        assert!(fired.len() >= 2, "{} fired", fired.len());
        // Every match fired, is outstanding, or is the one cancelled.
        let cancelled = set
            .iter()
            .filter(|&h| c.deadline(*h).is_none() && !fired.contains(h))
            .count();
        assert_eq!(cancelled, 1, "{} set, {} fired", set.len(), fired.len());
    }

    #[test]
    fn untimeout_prefers_a_due_callout_and_it_is_never_popped() {
        let mut c = callouts(8, 0);
        c.timeout(5, 6, 1).unwrap();
        c.tick();
        assert_eq!(c.scheme().queued(), 1);
        let pending = c.timeout(5, 6, 1).unwrap();
        // Due on tick 1, the clock's tick: the one cancelled.
        assert_eq!(
            c.untimeout_within(5, 6, &mut Work::unlimited()),
            Ok(Some(1))
        );
        assert_eq!(c.pop_expired(), None);
        assert_eq!(step(&mut c).len(), 1);
        assert_eq!(c.unsetcallout(pending), Err(Error::Stale));
    }

    #[test]
    fn unsetcallout_of_a_legacy_callout_takes_it_off_its_chain() {
        // One slot, one bucket: every key shares the chain.
        let mut c = callouts(1, 0);
        let h = c.timeout(1, 2, 5).unwrap();
        assert_eq!(c.unsetcallout(h), Ok(legacy(1, 2)));
        assert_eq!(c.untimeout(1, 2), Err(Error::NotFound));
        c.setcallout(1, 9).unwrap();
        assert_eq!(c.untimeout(1, 2), Err(Error::NotFound));
    }

    #[test]
    fn shared_chains_unlink_from_the_middle() {
        // Two buckets, four callouts: chains are shared and long.
        let mut c = callouts(2, 0);
        assert_eq!(c.buckets.len(), 2);
        let mut c4 = callouts(4, 0);
        for k in 0..4 {
            c4.timeout(k, k, 10 + k).unwrap();
        }
        for k in [1, 3, 0, 2] {
            assert_eq!(c4.untimeout(k, k), Ok(()));
        }
        assert!(c4.buckets.iter().all(|b| *b == NIL));
        c.timeout(1, 1, 1).unwrap();
        c.timeout(2, 2, 1).unwrap();
        let mut fired: Vec<Origin> = step(&mut c).iter().map(|f| f.origin).collect();
        fired.sort_by_key(|o| format!("{o:?}"));
        assert_eq!(fired, [legacy(1, 1), legacy(2, 2)]);
        assert!(c.buckets.iter().all(|b| *b == NIL));
    }

    #[test]
    fn same_chain_is_the_bucket_a_key_is_linked_on() {
        let mut c = callouts(64, 0);
        let keys: Vec<(u64, u64)> = (0..64).map(|k| (0xf00 + k, 1)).collect();
        for &(f, a) in &keys {
            c.timeout(f, a, 10).unwrap();
        }
        for &k in &keys {
            let head = c.chain(k.0, k.1);
            for &j in &keys {
                // On one chain exactly when `j`'s callout is on `k`'s.
                let mut at = head;
                let mut found = false;
                while at != NIL {
                    let s = &c.slots[at as usize];
                    found |= (s.func, s.arg) == j;
                    at = s.next;
                }
                assert_eq!(c.same_chain(k, j), found, "{k:?} {j:?}");
            }
        }
        assert!(keys
            .iter()
            .any(|&k| keys.iter().any(|&j| k != j && c.same_chain(k, j))));
        assert!(keys
            .iter()
            .any(|&k| keys.iter().any(|&j| !c.same_chain(k, j))));
    }

    #[test]
    fn full_table_changes_nothing() {
        let mut c = callouts(2, 0);
        c.timeout(1, 1, 1).unwrap();
        c.setcallout(1, 2).unwrap();
        assert_eq!(c.timeout(3, 3, 1), Err(Error::Full));
        assert_eq!(c.setcallout(1, 4), Err(Error::Full));
        assert_eq!(c.untimeout(3, 3), Err(Error::NotFound));
        assert_eq!(c.timeout(1, 1, 0), Err(Error::Interval));
        assert_eq!(step(&mut c).len(), 2);
    }

    #[test]
    fn rearm_while_popping() {
        let mut c = callouts(4, 0);
        c.timeout(1, 1, 1).unwrap();
        c.timeout(2, 2, 1).unwrap();
        c.tick();
        let first = c.pop_expired().unwrap();
        // A callback re-arms itself and cancels the other, already due.
        let (f, a) = match first.origin {
            Origin::Legacy { func, arg } => (func, arg),
            Origin::Callout { .. } => unreachable!(),
        };
        c.timeout(f, a, 1).unwrap();
        let other = 3 - f;
        assert_eq!(c.untimeout(other, other), Ok(()));
        assert_eq!(c.pop_expired(), None);
        let again = step(&mut c);
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].origin, legacy(f, a));
        assert_eq!(again[0].deadline, 2);
    }

    #[test]
    fn memory_counts_side_tables() {
        let c = callouts(100, 0);
        assert_eq!(core::mem::size_of::<Slot>(), 24);
        assert_eq!(
            c.memory_bytes(),
            c.scheme().memory_bytes() + 100 * 24 + 2 * 8 + 128 * 4
        );
        let config = Config {
            capacity: 100,
            slots: 256,
            start: 0,
            ..Default::default()
        };
        let h = Callouts::<HostStorage>::with_handles_only(SchemeKind::HashedUnsorted, &config)
            .unwrap();
        assert_eq!(h.memory_bytes(), h.scheme().memory_bytes() + 4);
    }
}
