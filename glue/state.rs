// SPDX-License-Identifier: GPL-2.0

//! An instance's state: what its clock and its file operations share under one spinlock.
//!
//! Everything here runs with the lock held and interrupts masked, so every method takes a
//! [`Work`] budget and stops when it is spent: the caller (`instance.rs`) releases the lock and
//! calls again. Nothing here allocates, sleeps or touches user memory.

use core::{
    mem::size_of,
    num::NonZeroU64, //
};
use kernel::{
    prelude::*,
    task::Pid,
    time::{
        Delta,
        Instant,
        Monotonic, //
    },
};

use crate::{
    instance::STEP_MARGIN,
    params::{
        KernelStorage,
        Params, //
    },
    ring::{
        record,
        Ring, //
    },
    uapi::*,
    wheel::{
        self,
        callout::Callouts,
        Advanced,
        Handle,
        Scheme,
        Work, //
    },
};

/// Where ticks sit in time: tick `start` at `origin`, one every `period_ns`.
#[derive(Clone, Copy)]
pub(crate) struct TickTime {
    origin: Instant<Monotonic>,
    start: u64,
    period_ns: NonZeroU64,
}

impl TickTime {
    /// Tick `start` now.
    pub(crate) fn new(start: u64, period_ns: u64) -> Self {
        TickTime {
            origin: Instant::now(),
            start,
            // Configuration checks the period against TW_MIN_TICK_NS.
            period_ns: NonZeroU64::new(period_ns).unwrap_or(NonZeroU64::MIN),
        }
    }

    /// The period.
    pub(crate) fn period(&self) -> Delta {
        // Lossless: periods are at most TW_MAX_TICK_NS.
        Delta::from_nanos(self.period_ns.get() as i64)
    }

    /// When tick `tick` is due (saturating far in the future).
    pub(crate) fn time_of(&self, tick: u64) -> Instant<Monotonic> {
        let ns = tick
            .wrapping_sub(self.start)
            .saturating_mul(self.period_ns.get());
        self.origin + Delta::from_nanos(ns.min(i64::MAX as u64 / 2) as i64)
    }

    /// The last tick due at or before `t`.
    pub(crate) fn tick_at(&self, t: Instant<Monotonic>) -> u64 {
        let ns = (t - self.origin).as_nanos().max(0) as u64;
        self.start.wrapping_add(ns / self.period_ns)
    }
}

/// What configuration installs: the scheme with its callout layer, and the parameters.
pub(crate) struct Configured {
    pub(crate) callouts: Callouts<KernelStorage>,
    pub(crate) params: Params,
    /// The real clock's time base (manual clock: unused).
    pub(crate) time: TickTime,
}

/// Everything the clock and the file operations share.
pub(crate) struct State {
    /// `None` until configured.
    pub(crate) configured: Option<Configured>,
    pub(crate) ring: Ring,
    pub(crate) stats: tw_stats,
    /// Expiries the tick the clock stands on may still process (the per-tick budget).
    tick_budget: u32,
    /// Expiries the current tick has processed.
    tick_work: u64,
    /// Ticks the clock stopped on (expiry processing ran); the rest were skipped.
    stops: u64,
    /// The scheme ran out of work in the middle of a tick: it must finish it before that
    /// tick's expiries are processed.
    mid_tick: bool,
    /// The tick the real clock's hrtimer is armed for, if it is.
    pub(crate) armed: Option<u64>,
    /// A real-clock catch-up ran out of work: the next period continues it.
    pub(crate) behind: bool,
    /// Records were added to the ring under this hold: readers to wake once it ends.
    pub(crate) wake: bool,
    /// An operation spanning holds runs (`Core::slow`).
    pub(crate) slow_busy: bool,
    /// The key of the last `untimeout` made, the only one whose walk may be kept.
    watched: (u64, u64),
    /// A legacy callout of key [`State::watched`] was started since that `untimeout` began: its
    /// walk, which would not have seen it, is not kept, nor taken up. Callouts of other keys,
    /// which the walk passes over wherever they are on its chain, do not count.
    watched_armed: bool,
    /// The walk of an `untimeout` a signal cut short, kept for its call to go on with.
    kept: Option<KeptWalk>,
}

/// An `untimeout` a signal cut short between holds, whose walk is kept: the task that made it,
/// and its key.
#[derive(Clone, Copy, PartialEq, Eq)]
struct KeptWalk {
    task: Pid,
    func: u64,
    arg: u64,
}

impl State {
    pub(crate) fn new() -> Self {
        State {
            configured: None,
            ring: Ring::empty(),
            stats: tw_stats::default(),
            tick_budget: 0,
            tick_work: 0,
            stops: 0,
            mid_tick: false,
            armed: None,
            behind: false,
            wake: false,
            slow_busy: false,
            watched: (0, 0),
            watched_armed: false,
            kept: None,
        }
    }

    /// Installs a configuration.
    pub(crate) fn install(
        &mut self,
        callouts: Callouts<KernelStorage>,
        params: Params,
        ring: Ring,
    ) -> Ring {
        self.configured = Some(Configured {
            callouts,
            params,
            time: TickTime::new(params.wheel.start, params.tick_ns),
        });
        self.stats = tw_stats {
            scheme: params.kind as u64,
            flags: params.flags(),
            ..tw_stats::default()
        };
        self.tick_budget = params.budget;
        self.watched = (0, 0);
        self.watched_armed = false;
        self.kept = None;
        core::mem::replace(&mut self.ring, ring)
    }

    /// The configured callouts; EINVAL before configuration.
    pub(crate) fn callouts(&mut self) -> Result<&mut Callouts<KernelStorage>> {
        self.configured
            .as_mut()
            .map(|c| &mut c.callouts)
            .ok_or(EINVAL)
    }

    /// The parameters configured, if configured.
    pub(crate) fn params(&self) -> Option<Params> {
        self.configured.as_ref().map(|c| c.params)
    }

    /// Whether a start or reset may place its callout in a walk across holds: the instance's
    /// scheme keeps sorted lists (schemes 2 and 5; see `SchemeKind::places_in_walks`), or it is
    /// not configured yet.
    pub(crate) fn places_in_walks(&self) -> bool {
        self.configured
            .as_ref()
            .is_none_or(|c| c.params.kind.places_in_walks())
    }

    /// Whether a placement walks across holds (schemes 2 and 5).
    pub(crate) fn placing(&self) -> bool {
        self.configured
            .as_ref()
            .is_some_and(|c| c.callouts.placing())
    }

    /// Continues a placement within `work`; `true` once done.
    pub(crate) fn place(&mut self, work: &mut Work) -> bool {
        match &mut self.configured {
            Some(c) => c.callouts.place(work),
            None => true,
        }
    }

    /// Undoes the reset whose placement is in progress, the callout back where it was with its
    /// old deadline, if it can (see `Scheme::abandon_placement`); `true` if it did.
    pub(crate) fn abandon_reset(&mut self) -> bool {
        // A walk kept may have compared the callout at the deadline it was being moved to.
        self.abandon_untimeout();
        self.configured
            .as_mut()
            .is_some_and(|c| c.callouts.abandon_placement())
    }

    /// Brings a real clock's scheme up to the tick the real clock has reached, within `work`
    /// (idle ticks cost nothing), and returns how many ticks it is still behind, so that an
    /// interval counts from the real tick: a tickless clock stands still while nothing is due,
    /// and a callout set then must not be early.
    ///
    /// Under overload (`behind`: the hrtimer callback ran out of work and continues a period
    /// later) the catch-up is left to the callback: done here it would take the rest of every
    /// start's hold, and a batch would set one callout a hold. The lag is added instead, the
    /// same absolute deadline. While `behind`, the hrtimer stays armed for the next period
    /// (`next_arm`), so the catch-up goes on however many callouts are set or cancelled.
    fn catch_up(&mut self, work: &mut Work) -> u64 {
        let Some(c) = &self.configured else {
            return 0;
        };
        if c.params.clock != TW_CLOCK_REAL {
            return 0;
        }
        let real = c.time.tick_at(Instant::now());
        if !self.behind {
            // Its steps begin only while the hold keeps room for the operation's own (a stop
            // and a start, a heap sift each in scheme 3) after the last of them: the hold stays
            // within `hold_work`. A catch-up cut short leaves the lag to be added.
            let mut room = Work::new(work.left().saturating_sub(STEP_MARGIN));
            self.run_to(real, Some(real), &mut room);
            work.spend(room.done());
        }
        let now = self
            .configured
            .as_ref()
            .map_or(real, |c| c.callouts.scheme().now());
        if after(real, now) {
            real.wrapping_sub(now)
        } else {
            0
        }
    }

    /// The range `[ticks, latest]` (`latest` 0: exactly `ticks`), checked, and counted from
    /// the real tick: the clock catches up first, and what it is still behind is added.
    fn real_range(&mut self, ticks: u64, latest: u64, work: &mut Work) -> Result<(u64, u64)> {
        let latest = range(ticks, latest)?;
        let lag = self.catch_up(work);
        Ok((ticks.saturating_add(lag), latest.saturating_add(lag)))
    }

    pub(crate) fn set(
        &mut self,
        ticks: u64,
        latest: u64,
        cookie: u64,
        work: &mut Work,
    ) -> Result<Handle> {
        let (a, b) = self.real_range(ticks, latest, work)?;
        self.set_at(a, b, cookie, work)
    }

    /// [`State::set`] on a range `[a, b]` already counted by [`State::real_range`].
    fn set_at(&mut self, a: u64, b: u64, cookie: u64, work: &mut Work) -> Result<Handle> {
        let h = self
            .callouts()?
            .setcallout_range(a, b, cookie, work)
            .map_err(errno)?;
        self.stats.started += 1;
        Ok(h)
    }

    /// A batch's `TW_OP_RESET`: `unset` of `h`, then `set` of a new callout due `ticks` ticks
    /// from now. The new range is counted once (the real clock caught up first, as for any
    /// start) and checked against the scheme before the old callout is cancelled, so that a
    /// reset whose set would fail (EINVAL, ERANGE) leaves it as it was; the set then cannot fail
    /// (the unset has freed an entry, and no operation of a batch runs while a placement is in
    /// progress).
    fn replace(&mut self, h: Handle, ticks: u64, cookie: u64, work: &mut Work) -> Result<Handle> {
        let (a, b) = self.real_range(ticks, 0, work)?;
        self.callouts()
            .map_err(|_| ENOENT)?
            .check_range(a, b)
            .map_err(errno)?;
        let freed = self.armed_deadline(h);
        self.unset(h, work)?;
        self.freed(freed, work);
        self.set_at(a, b, cookie, work)
    }

    /// `unsetcallout`, spending on `work` what the scheme's stop visits beyond the callout
    /// (scheme 3's sift): the caller pays the callout's own unit.
    pub(crate) fn unset(&mut self, h: Handle, work: &mut Work) -> Result {
        self.callouts()
            .map_err(|_| ENOENT)?
            .unsetcallout_within(h, work)
            .map_err(errno)?;
        self.stats.stopped += 1;
        Ok(())
    }

    /// The tick the outstanding callout `h` is due on, if it is outstanding.
    pub(crate) fn deadline(&self, h: Handle) -> Option<u64> {
        self.configured.as_ref()?.callouts.deadline(h)
    }

    /// The tick callout `h` is due on, read only while the hrtimer is armed (for
    /// [`State::freed`] and [`State::armed_early`]), so that on a manual clock, or with nothing
    /// armed, a cancel pays no lookup.
    fn armed_deadline(&self, h: Handle) -> Option<u64> {
        self.armed.and_then(|_| self.deadline(h))
    }

    /// `unsetcallout` as a system call makes it, a unit of `work` for the call: `Ok(true)` if
    /// the hrtimer is then armed early ([`State::armed_early`]).
    pub(crate) fn unset_checking_arm(&mut self, h: Handle, work: &mut Work) -> Result<bool> {
        work.spend(1);
        let freed = self.armed_deadline(h);
        self.unset(h, work)?;
        Ok(self.armed_early(freed, work))
    }

    /// Cancels a callout just started for a caller that will not get its handle (a signal
    /// during its placement, a handle that cannot be written back), and takes it out of the
    /// statistics; nothing if it is gone already (a placing callout may fire meanwhile). A unit
    /// of `work` for the call, as [`State::unset_checking_arm`], so that a loop of them under one
    /// hold (a batch whose results could not be written back) stays within the hold's work.
    /// Returns whether it was there to cancel.
    pub(crate) fn cancel_new(&mut self, h: Handle, work: &mut Work) -> bool {
        work.spend(1);
        let cancelled = self.unset(h, work).is_ok();
        if cancelled {
            self.stats.started -= 1;
            self.stats.stopped -= 1;
        }
        cancelled
    }

    pub(crate) fn timeout(
        &mut self,
        func: u64,
        arg: u64,
        ticks: u64,
        latest: u64,
        work: &mut Work,
    ) -> Result<Handle> {
        // A function pointer is never 0; the bench uses that key, so no user can collide.
        if func == 0 {
            return Err(EINVAL);
        }
        let (a, b) = self.real_range(ticks, latest, work)?;
        let h = self
            .callouts()?
            .timeout_range(func, arg, a, b, work)
            .map_err(errno)?;
        self.stats.started += 1;
        if (func, arg) == self.watched {
            self.watched_armed = true;
        }
        Ok(h)
    }

    /// `untimeout`, within `work`: `Ok(Some(tick))` once a callout is cancelled, the tick it
    /// was due on, `Ok(None)` if the walk of its hash chain must go on in another hold (the
    /// same key resumes it).
    pub(crate) fn untimeout(
        &mut self,
        func: u64,
        arg: u64,
        work: &mut Work,
    ) -> Result<Option<u64>> {
        // No user's key has function 0: the bench's own callout is not theirs to cancel.
        if func == 0 {
            return Err(ENOENT);
        }
        let done = self
            .callouts()
            .map_err(|_| ENOENT)?
            .untimeout_within(func, arg, work)
            .map_err(errno)?;
        if done.is_some() {
            self.stats.stopped += 1;
        }
        Ok(done)
    }

    /// [`State::untimeout`], then, once a callout is cancelled, whether the hrtimer is armed
    /// early ([`State::armed_early`]): `Ok(Some(early))`, or `Ok(None)` while the walk goes on.
    /// Next work is looked for only if the callout cancelled was due on the armed tick.
    pub(crate) fn untimeout_checking_arm(
        &mut self,
        func: u64,
        arg: u64,
        work: &mut Work,
    ) -> Result<Option<bool>> {
        let freed = self.untimeout(func, arg, work)?;
        Ok(freed.map(|d| self.armed_early(Some(d), work)))
    }

    /// Drops an `untimeout` cut short between holds, and any walk kept: nothing is cancelled.
    pub(crate) fn abandon_untimeout(&mut self) {
        self.kept = None;
        if let Ok(c) = self.callouts() {
            c.abandon_untimeout();
        }
    }

    /// Keeps the walk of an `untimeout` of `task` that a signal cut short between holds, having
    /// cancelled nothing, for the call to go on with when made again ([`State::resume_untimeout`]).
    /// Where no handler runs (a stop and a continue, the freezer, task work) the kernel makes it
    /// again at once: a stream of those faster than the walk of a long chain would otherwise
    /// start it from the head each time, and never let it end. Only a walk on its first pass
    /// is kept (see `Callouts::untimeout_in_first_pass`); one that went back to the head is
    /// dropped, and the call starts over; so is one behind which a callout of its key was
    /// started since the call began ([`State::watched_armed`]).
    pub(crate) fn keep_untimeout(&mut self, task: Pid, func: u64, arg: u64) {
        let first_pass = self.callouts().is_ok_and(|c| c.untimeout_in_first_pass());
        if self.watched_armed || !first_pass {
            self.abandon_untimeout();
            return;
        }
        self.kept = Some(KeptWalk { task, func, arg });
    }

    /// Before an `untimeout` of `task` with key `(func, arg)`: the walk kept for the same task's
    /// call with the same key goes on where it stopped, if no legacy callout of that key was
    /// started since it began (one of another key on its chain, new or not, is no match). A call
    /// made anew after a handler ran then finds what a walk from the chain's head would: no new
    /// match is on the chain, the walk is on its first pass, and it accounts for what went or moved
    /// since, as between two holds (the first such change sends it back to the head). Any other
    /// call drops a walk kept, and starts from the head. From here on, a callout of this key
    /// started keeps this call's walk from being kept ([`State::watched_armed`]).
    pub(crate) fn resume_untimeout(&mut self, task: Pid, func: u64, arg: u64) {
        let mine = KeptWalk { task, func, arg };
        if self.kept.take() != Some(mine) || self.watched_armed {
            self.abandon_untimeout();
        }
        self.watched = (func, arg);
        self.watched_armed = false;
    }

    /// `mod_timer`: the callout keeps its handle.
    pub(crate) fn reset(&mut self, h: Handle, ticks: u64, latest: u64, work: &mut Work) -> Result {
        let (a, b) = self.real_range(ticks, latest, work)?;
        let freed = self.armed_deadline(h);
        self.callouts()
            .map_err(|_| ENOENT)?
            .reset(h, a, b, work)
            .map_err(errno)?;
        self.freed(freed, work);
        Ok(())
    }

    /// `TW_IOC_QUERY`.
    pub(crate) fn query(&self, q: &mut tw_query) {
        let (deadline, now) = match &self.configured {
            Some(c) => {
                let now = c.callouts.scheme().now();
                // A real clock's tick is the one real time has reached, whether or not the
                // scheme, tickless, has stood on it yet.
                let real = match c.params.clock {
                    TW_CLOCK_REAL => c.time.tick_at(Instant::now()),
                    _ => now,
                };
                let now = later(real, now);
                (c.callouts.deadline(Handle::from_raw(q.handle)), now)
            }
            None => (None, 0),
        };
        q.pending = u32::from(deadline.is_some());
        q.deadline = deadline.unwrap_or(0);
        q.now = now;
    }

    /// One operation of a batch; its result goes into the operation. `false` while an
    /// `untimeout` still walks its chain: run the same operation again in the next hold.
    pub(crate) fn run_op(&mut self, op: &mut tw_op, work: &mut Work) -> bool {
        work.spend(1);
        let r = match op.op {
            TW_OP_SET => self
                .set(op.a, 0, op.b, work)
                .map(|h| op.handle = h.to_raw()),
            TW_OP_UNSET => {
                let h = Handle::from_raw(op.handle);
                let freed = self.armed_deadline(h);
                self.unset(h, work).map(|()| self.freed(freed, work))
            }
            TW_OP_TIMEOUT => self
                .timeout(op.a, op.b, op.c, 0, work)
                .map(|h| op.handle = h.to_raw()),
            TW_OP_UNTIMEOUT => match self.untimeout(op.a, op.b, work) {
                Ok(None) => return false,
                r => r.map(|freed| self.freed(freed, work)),
            },
            TW_OP_RESET => self
                .replace(Handle::from_raw(op.handle), op.a, op.b, work)
                .map(|h| op.handle = h.to_raw()),
            TW_OP_MOD => self.reset(Handle::from_raw(op.handle), op.a, op.b, work),
            _ => Err(EINVAL),
        };
        op.result = match r {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        };
        true
    }

    /// Runs the clock towards tick `target` within `work`: the scheme's bookkeeping, then the
    /// expiries of each tick it stops on, at most `budget` per tick (the rest are carried to
    /// the next tick, one tick at a time). Records are stamped with the later of the scheme's
    /// tick and `real`, the tick of the real clock now (`None`: the manual clock), so that
    /// lateness shows when the clock runs behind. Returns whether the clock stands on `target`
    /// with its expiries processed (or carried); records added to the ring set `wake`.
    pub(crate) fn run_to(&mut self, target: u64, real: Option<u64>, work: &mut Work) -> bool {
        match self.params() {
            Some(p) => self.run_to_with(target, real, p.clock_mode(), work),
            None => true,
        }
    }

    /// [`State::run_to`] with the scheme's clock run as `clock` says, whatever the
    /// configuration (the tick bench measures the paper's periodic bookkeeping).
    pub(crate) fn run_to_with(
        &mut self,
        target: u64,
        real: Option<u64>,
        clock: wheel::Clock,
        work: &mut Work,
    ) -> bool {
        let State {
            configured: Some(Configured {
                callouts, params, ..
            }),
            ring,
            stats,
            tick_budget,
            tick_work,
            stops,
            mid_tick,
            wake,
            ..
        } = self
        else {
            return true;
        };
        loop {
            // The expiries of the tick the clock stands on, within the per-tick budget.
            while !*mid_tick && *tick_budget > 0 && callouts.scheme().queued() > 0 {
                if work.is_spent() {
                    return false;
                }
                let Some(fired) = callouts.pop_expired() else {
                    break;
                };
                work.spend(1);
                *tick_budget -= 1;
                *tick_work += 1;
                stats.max_tick_work = stats.max_tick_work.max(*tick_work);
                let now = callouts.scheme().now();
                let at = real.map_or(now, |real| later(real, now));
                if record(ring, stats, &fired, at) {
                    *wake = true;
                }
            }
            let now = callouts.scheme().now();
            // A target the clock has passed counts as reached: a start on another CPU may have
            // brought a real clock further than the tick a callback read before it got the
            // lock. Never run the scheme round towards a tick behind it.
            if !after(target, now) && !*mid_tick {
                return true;
            }
            if work.is_spent() {
                return false;
            }
            // Carried expiries, or the paper's periodic tick: one tick at a time.
            let left = callouts.scheme().queued();
            let step = if *mid_tick {
                // Finish the tick the scheme stands in.
                now
            } else if clock == wheel::Clock::Periodic || left > 0 {
                now.wrapping_add(1)
            } else {
                target
            };
            let r = callouts.advance(step, clock, work);
            // Half a tick done: next work names that tick (a search charged to this hold).
            *mid_tick = r == Advanced::OutOfWork
                && callouts.next_work_within(work) == Some(callouts.scheme().now());
            match r {
                Advanced::OutOfWork => return false,
                Advanced::Reached | Advanced::Due => {
                    // The clock stands on a new tick: its budget starts afresh.
                    stats.carried += left as u64;
                    *tick_work = 0;
                    *tick_budget = params.budget;
                    *stops += 1;
                }
            }
        }
    }

    /// The tick the real clock's hrtimer should fire on next, or `None` for none: the next
    /// tick while expiries are carried, a catch-up is behind, or the clock is periodic; else
    /// the scheme's next work, whose search (schemes 5 and 6) is charged to `work`, the hold's
    /// budget: a search cut short by it answers an earlier tick, still a lower bound.
    pub(crate) fn next_arm(&self, work: &mut Work) -> Option<u64> {
        let c = self.configured.as_ref()?;
        if c.params.clock != TW_CLOCK_REAL {
            return None;
        }
        let now = c.callouts.scheme().now();
        if self.behind || c.params.periodic || c.callouts.scheme().queued() > 0 {
            return Some(now.wrapping_add(1));
        }
        c.callouts.next_work_within(work)
    }

    /// A callout due on `freed` (`None`: not known, or the hrtimer not armed) was cancelled or
    /// moved: if the hrtimer is armed for that tick, the bound behind it is raised.
    fn freed(&mut self, freed: Option<u64>, work: &mut Work) {
        if freed.is_some() && freed == self.armed {
            self.tighten(work);
        }
    }

    /// Raises, within `work`, the bound behind the next tick with work where a cancel left it
    /// low ([`Scheme::tighten_within`]: scheme 6's slot or scheme 7's list left busy): before
    /// the hrtimer is armed again, and after a cancel or push-back of the callout it is armed
    /// for.
    pub(crate) fn tighten(&mut self, work: &mut Work) {
        if let Some(c) = &mut self.configured {
            if c.params.clock == TW_CLOCK_REAL {
                c.callouts.tighten_within(work);
            }
        }
    }

    /// Whether the real clock's hrtimer is armed as it should be: not at all while there is no
    /// tick to wake for, else for the next one (not later, which would be late, nor earlier,
    /// which would wake for nothing).
    ///
    /// While the callback is `behind`, it has armed the hrtimer for the next period, and
    /// decides again then with every change since: the timer is armed well. (Armed again from
    /// here, for the tick after the one the scheme stands on, it would be armed in the past:
    /// the callback would run its catch-up at once, on every start of the caller's, and not
    /// once a period.)
    pub(crate) fn armed_well(&self, work: &mut Work) -> bool {
        if self.behind && self.armed.is_some() {
            return true;
        }
        match (self.next_arm(work), self.armed) {
            (None, None) => true,
            (Some(t), Some(a)) => t == a,
            _ => false,
        }
    }

    /// For a batch, which arms the hrtimer between its holds only where a callout would
    /// otherwise fire late: the earlier of `due` and the tick callout `h`, just started or
    /// moved, is due on. On a manual clock nothing is armed and nothing is looked up.
    pub(crate) fn earliest_due(&self, due: Option<u64>, h: Handle) -> Option<u64> {
        if self.configured.as_ref()?.params.clock != TW_CLOCK_REAL {
            return due;
        }
        match (due, self.deadline(h)) {
            (Some(e), Some(d)) if after(d, e) => Some(e),
            (e, d) => d.or(e),
        }
    }

    /// Whether the hrtimer is armed too late for a callout due on tick `due` (see
    /// [`State::earliest_due`]): armed for a later tick, or not at all, while the next tick to
    /// wake on ([`State::next_arm`], which also counts what a catch-up left to do) is earlier.
    /// Armed earlier than it need be costs a wakeup at most, and is left to the end of the call.
    /// As in [`State::armed_well`], a callback `behind` has the hrtimer armed for the next
    /// period already.
    pub(crate) fn armed_late(&self, due: u64, work: &mut Work) -> bool {
        if self.armed.is_some_and(|a| self.behind || !after(a, due)) {
            return false;
        }
        match (self.next_arm(work), self.armed) {
            (Some(t), Some(a)) => after(a, t),
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    /// [`State::next_arm`] for the real clock's callback, which has run the clock to tick
    /// `real`, recorded as armed, the bound behind it tightened first: never a tick already
    /// reached (the timer is forwarded past now anyway, and `armed` must name the tick it
    /// really fires on, for the overrun count).
    pub(crate) fn rearm(&mut self, real: u64, work: &mut Work) -> Option<u64> {
        self.tighten(work);
        let next = self.next_arm(work).map(|t| {
            if after(t, real) {
                t
            } else {
                real.wrapping_add(1)
            }
        });
        self.armed = next;
        next
    }

    /// Whether the hrtimer is armed for a tick with nothing left to do on it, after a callout
    /// due on tick `freed` (`None`: not known) was cancelled: the last one outstanding, or the
    /// one the timer was armed for with the next work later. Next work is looked for only
    /// then, so that cancelling any other callout costs no more. A scheme whose next work
    /// stays a lower bound after a cancel (scheme 1 with more than 64 callouts pending, scheme
    /// 6 when the callout's slot stays busy with more than [`wheel::TIGHTEN_LIMIT`] callouts,
    /// scheme 7 when its list does with more than that above level 0, or more than
    /// [`wheel::LIST_LOOK_LIMIT`] on level 0, a walk or search cut short by the hold's budget)
    /// still wakes once for it.
    pub(crate) fn armed_early(&mut self, freed: Option<u64>, work: &mut Work) -> bool {
        let Some(armed) = self.armed else {
            return false;
        };
        let outstanding = self
            .configured
            .as_ref()
            .is_some_and(|c| c.callouts.scheme().len() > 0);
        if outstanding && freed.is_some_and(|d| d != armed) {
            return false;
        }
        self.tighten(work);
        match self.next_arm(work) {
            Some(t) => after(t, armed),
            None => true,
        }
    }

    /// The statistics, with the gauges read now.
    pub(crate) fn snapshot(&self) -> tw_stats {
        let mut s = self.stats;
        if let Some(c) = &self.configured {
            let scheme = c.callouts.scheme();
            s.outstanding = scheme.len() as u64;
            s.queued = scheme.queued() as u64;
            s.now = scheme.now();
            // Ticks the clock stood on (bookkeeping and expiry ran), the one whose bookkeeping
            // is half done included (the scheme's clock already names it), and those it
            // skipped.
            let elapsed = scheme.now().wrapping_sub(c.params.wheel.start);
            s.ticks = (self.stops + u64::from(self.mid_tick)).min(elapsed);
            s.skipped = elapsed - s.ticks;
            s.memory_bytes = (c.callouts.memory_bytes() + self.ring.memory_bytes()) as u64;
        }
        s.ring_used = self.ring.len() as u64;
        s
    }
}

/// Whether tick `a` comes after tick `b` on the modular tick counter.
pub(crate) fn after(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) > 0
}

/// The later of two ticks.
pub(crate) fn later(a: u64, b: u64) -> u64 {
    if after(a, b) {
        a
    } else {
        b
    }
}

/// What a start checks of its arguments before it needs the instance: the range `[ticks,
/// latest]` (EINVAL). A call that fails on them must configure nothing.
pub(crate) fn check_set(ticks: u64, latest: u64) -> Result {
    range(ticks, latest).map(|_| ())
}

/// [`check_set`] for a `timeout`, whose function is never 0 (EINVAL).
pub(crate) fn check_timeout(func: u64, ticks: u64, latest: u64) -> Result {
    if func == 0 {
        return Err(EINVAL);
    }
    check_set(ticks, latest)
}

/// Whether a batch operation may configure the defaults of an instance not configured yet: a
/// start (`TW_OP_SET`, `TW_OP_TIMEOUT`) whose arguments pass the checks above, and which the
/// defaults then take. Every other operation fails on an unconfigured instance as on an empty
/// one, without it: an unset, untimeout or reschedule (`TW_OP_MOD`, and `TW_OP_RESET`, whose
/// unset comes before its set) finds no callout (ENOENT), and bad arguments or an unknown op
/// are EINVAL.
pub(crate) fn op_configures(op: &tw_op) -> bool {
    match op.op {
        TW_OP_SET => check_set(op.a, 0).is_ok(),
        TW_OP_TIMEOUT => check_timeout(op.a, op.c, 0).is_ok(),
        _ => false,
    }
}

/// Whether a batch operation starts or moves a callout, when it succeeds: a start
/// (`TW_OP_SET`, `TW_OP_TIMEOUT`) or a reschedule (`TW_OP_RESET`, `TW_OP_MOD`).
pub(crate) fn op_places(op: &tw_op) -> bool {
    matches!(op.op, TW_OP_SET | TW_OP_TIMEOUT | TW_OP_RESET | TW_OP_MOD)
}

/// The last tick of a range `[ticks, latest]` (`latest` 0: exactly `ticks`), checked.
fn range(ticks: u64, latest: u64) -> Result<u64> {
    if ticks == 0 || ticks > TW_MAX_TICKS {
        return Err(EINVAL);
    }
    match latest {
        0 => Ok(ticks),
        l if l < ticks || l > TW_MAX_TICKS => Err(EINVAL),
        l => Ok(l),
    }
}

/// Bytes of one expiry record.
pub(crate) const RECORD: usize = size_of::<tw_fired>();

use crate::uapi::errno;

#[kunit_tests(rust_timerwheel_state)]
mod tests {
    use super::*;
    use crate::wheel::SchemeKind;

    /// A state with configuration `c` installed.
    fn installed(c: tw_config) -> State {
        let p = Params::from_uapi(&c, TW_DEFAULT_TICK_NS).unwrap();
        let mut st = State::new();
        st.install(p.callouts().unwrap(), p, Ring::new(p.ring).unwrap());
        st
    }

    fn state(scheme: u32, budget: u32) -> State {
        installed(tw_config {
            scheme,
            clock: TW_CLOCK_MANUAL,
            capacity: 64,
            ring: 4,
            budget,
            ..tw_config::default()
        })
    }

    fn run(st: &mut State, target: u64) {
        while !st.run_to(target, None, &mut Work::new(8)) {}
    }

    #[test]
    fn budget_carries_over_and_full_ring_counts_drops() {
        for kind in SchemeKind::ALL {
            let mut st = state(kind as u32, 2);
            for i in 0..5 {
                st.set(1, 0, i, &mut Work::unlimited()).unwrap();
            }
            run(&mut st, 1);
            // Budget 2: two records now, three carried.
            assert_eq!(st.ring.len(), 2);
            assert_eq!(st.snapshot().queued, 3);
            run(&mut st, 3);
            // Ring of 4: the fifth record is dropped and counted.
            let s = st.snapshot();
            assert_eq!(s.fired, 5);
            assert_eq!(s.ring_drops, 1);
            assert_eq!(st.ring.len(), 4);
            assert_eq!(s.carried, 3 + 1);
            assert_eq!(s.lateness[0] + s.lateness[1] + s.lateness[2], 5);
            assert_eq!(s.outstanding, 0);
        }
    }

    #[test]
    fn idle_ticks_are_skipped_and_firing_stays_exact() {
        for kind in SchemeKind::ALL {
            let mut st = state(kind as u32, 16);
            st.set(40, 0, 7, &mut Work::unlimited()).unwrap();
            run(&mut st, 100);
            let s = st.snapshot();
            assert_eq!(s.fired, 1);
            assert_eq!(s.lateness[0], 1);
            assert_eq!(s.ticks + s.skipped, 100);
            assert!(s.skipped > 0);
            assert_eq!(st.ring.len(), 1);
        }
    }

    #[test]
    fn handles_only_refuses_the_legacy_interface() {
        let mut st = installed(tw_config {
            scheme: 7,
            clock: TW_CLOCK_MANUAL,
            capacity: 64,
            ring: 4,
            flags: TW_CONFIG_HANDLES_ONLY,
            ..tw_config::default()
        });
        let w = &mut Work::unlimited();
        assert_eq!(st.timeout(1, 2, 3, 0, w), Err(EINVAL));
        let h = st.set(3, 0, 9, w).unwrap();
        assert_eq!(st.deadline(h), Some(3));
        assert_eq!(st.unset(h, w), Ok(()));
        assert_eq!(st.snapshot().flags, u64::from(TW_CONFIG_HANDLES_ONLY));
    }

    #[test]
    fn a_tick_left_half_done_counts_as_run_not_skipped() {
        let mut st = state(1, 64);
        for i in 0..40 {
            st.set(1000 + i, 0, i, &mut Work::unlimited()).unwrap();
        }
        // Scheme 1 walks all 40 timers each periodic tick: 8 units leave the tick half done.
        let done = st.run_to_with(1, None, wheel::Clock::Periodic, &mut Work::new(8));
        assert!(!done);
        let s = st.snapshot();
        assert_eq!((s.now, s.ticks, s.skipped), (1, 1, 0));
    }

    #[test]
    fn a_target_behind_the_clock_runs_nothing() {
        let mut st = state(7, 16);
        st.set(50, 0, 1, &mut Work::unlimited()).unwrap();
        run(&mut st, 20);
        assert!(st.run_to(10, None, &mut Work::new(8)));
        let s = st.snapshot();
        assert_eq!((s.now, s.fired, s.outstanding), (20, 0, 1));
    }

    #[test]
    fn ranges_are_checked() {
        assert_eq!(range(0, 0), Err(EINVAL));
        assert_eq!(range(5, 0), Ok(5));
        assert_eq!(range(5, 4), Err(EINVAL));
        assert_eq!(range(5, 9), Ok(9));
        assert_eq!(range(TW_MAX_TICKS + 1, 0), Err(EINVAL));
    }

    #[test]
    fn batch_ops_report_their_errno() {
        let mut st = state(6, 16);
        let w = &mut Work::unlimited();
        let mut set = tw_op {
            op: TW_OP_SET,
            a: 3,
            b: 7,
            ..tw_op::default()
        };
        st.run_op(&mut set, w);
        assert_eq!(set.result, 0);
        let mut reset = tw_op {
            op: TW_OP_RESET,
            a: 5,
            b: 8,
            handle: set.handle,
            ..tw_op::default()
        };
        st.run_op(&mut reset, w);
        assert_eq!(reset.result, 0);
        let mut stale = tw_op {
            op: TW_OP_UNSET,
            handle: set.handle,
            ..tw_op::default()
        };
        st.run_op(&mut stale, w);
        assert_eq!(stale.result, ENOENT.to_errno());
        let mut moved = tw_op {
            op: TW_OP_MOD,
            a: 9,
            handle: reset.handle,
            ..tw_op::default()
        };
        st.run_op(&mut moved, w);
        assert_eq!(moved.result, 0);
        let mut q = tw_query {
            handle: reset.handle,
            ..tw_query::default()
        };
        st.query(&mut q);
        assert_eq!((q.pending, q.deadline), (1, 9));
        let mut bad = tw_op {
            op: 99,
            ..tw_op::default()
        };
        st.run_op(&mut bad, w);
        assert_eq!(bad.result, EINVAL.to_errno());
        let mut zero = tw_op {
            op: TW_OP_SET,
            a: 0,
            ..tw_op::default()
        };
        st.run_op(&mut zero, w);
        assert_eq!(zero.result, EINVAL.to_errno());
    }

    #[test]
    fn a_batch_reset_that_cannot_set_leaves_its_callout() {
        for kind in SchemeKind::ALL {
            let mut st = state(kind as u32, 16);
            let w = &mut Work::unlimited();
            let h = st.set(5, 0, 7, w).unwrap().to_raw();
            // Scheme 4's MaxInterval is the default slots.
            let beyond = u64::from(TW_DEFAULT_SLOTS) + 1;
            let mut bad = [(0, EINVAL), (TW_MAX_TICKS + 1, EINVAL), (beyond, ERANGE)];
            if kind != SchemeKind::BasicWheel {
                bad[2] = (u64::MAX, EINVAL);
            }
            for (ticks, e) in bad {
                let mut op = tw_op {
                    op: TW_OP_RESET,
                    a: ticks,
                    b: 8,
                    handle: h,
                    ..tw_op::default()
                };
                assert!(st.run_op(&mut op, w));
                assert_eq!(op.result, e.to_errno());
                assert_eq!(op.handle, h);
                // The old callout is still there, on its deadline.
                let mut q = tw_query {
                    handle: h,
                    ..tw_query::default()
                };
                st.query(&mut q);
                assert_eq!((q.pending, q.deadline), (1, 5));
            }
            // A stale handle with a bad interval: the interval is checked first.
            let mut stale = tw_op {
                op: TW_OP_RESET,
                ..tw_op::default()
            };
            st.run_op(&mut stale, w);
            assert_eq!(stale.result, EINVAL.to_errno());
            stale.a = 3;
            st.run_op(&mut stale, w);
            assert_eq!(stale.result, ENOENT.to_errno());
            let s = st.snapshot();
            assert_eq!((s.started, s.stopped, s.outstanding), (1, 0, 1));
            run(&mut st, 5);
            let mut rec = [tw_fired::default(); 2];
            assert_eq!(st.ring.take(&mut rec), 1);
            assert_eq!((rec[0].handle, rec[0].cookie, rec[0].deadline), (h, 7, 5));
            // A good reset still replaces it.
            let h = st.set(5, 0, 7, w).unwrap().to_raw();
            let mut good = tw_op {
                op: TW_OP_RESET,
                a: 9,
                b: 8,
                handle: h,
                ..tw_op::default()
            };
            st.run_op(&mut good, w);
            assert_eq!(good.result, 0);
            let c = st.configured.as_ref().unwrap();
            assert_eq!(c.callouts.deadline(Handle::from_raw(h)), None);
            assert_eq!(
                c.callouts.deadline(Handle::from_raw(good.handle)),
                Some(5 + 9)
            );
        }
    }

    #[test]
    fn batch_ops_that_cannot_configure_fail_alike_without_it() {
        let ops = [
            (TW_OP_SET, 0, 0, 0),
            (TW_OP_SET, TW_MAX_TICKS + 1, 0, 0),
            (TW_OP_TIMEOUT, 0, 1, 5),
            (TW_OP_TIMEOUT, 0xf00, 1, 0),
            (TW_OP_UNSET, 0, 0, 0),
            (TW_OP_UNTIMEOUT, 0xf00, 1, 0),
            (TW_OP_UNTIMEOUT, 0, 0, 0),
            (TW_OP_RESET, 5, 1, 0),
            (TW_OP_RESET, 0, 1, 0),
            (TW_OP_MOD, 5, 0, 0),
            (TW_OP_MOD, 0, 0, 0),
            (99, 5, 0, 0),
        ];
        let mut fresh = State::new();
        let mut empty = state(TW_DEFAULT_SCHEME, 16);
        let w = &mut Work::unlimited();
        for (code, a, b, c) in ops {
            let op = tw_op {
                op: code,
                a,
                b,
                c,
                handle: 1,
                ..tw_op::default()
            };
            assert!(!op_configures(&op));
            let (mut x, mut y) = (op, op);
            fresh.run_op(&mut x, w);
            empty.run_op(&mut y, w);
            assert_ne!(x.result, 0);
            assert_eq!(x.result, y.result);
        }
        assert!(fresh.configured.is_none());
        let set = tw_op {
            op: TW_OP_SET,
            a: 5,
            ..tw_op::default()
        };
        let timeout = tw_op {
            op: TW_OP_TIMEOUT,
            a: 0xf00,
            c: 5,
            ..tw_op::default()
        };
        assert!(op_configures(&set) && op_configures(&timeout));
        assert_eq!(check_set(5, 4), Err(EINVAL));
        assert_eq!(check_timeout(0, 5, 0), Err(EINVAL));
        assert_eq!(check_timeout(1, 5, 7), Ok(()));
    }

    #[test]
    fn a_heap_unset_pays_for_its_sift() {
        // Scheme 3, the heap: cancelling its earliest callout sifts the last one down from the
        // top, a swap a level, and the hold pays for each beside the operation's own unit.
        let mut st = state(TW_SCHEME_HEAP, 16);
        let first = st.set(1, 0, 1, &mut Work::unlimited()).unwrap();
        for i in 2..=63 {
            st.set(i, 0, i, &mut Work::unlimited()).unwrap();
        }
        let mut op = tw_op {
            op: TW_OP_UNSET,
            handle: first.to_raw(),
            ..tw_op::default()
        };
        let work = &mut Work::unlimited();
        assert!(st.run_op(&mut op, work));
        assert_eq!(op.result, 0);
        // The operation's unit and the swaps: the 63rd callout sinks from the top to a leaf.
        assert!(work.done() > 4);
    }

    #[test]
    fn the_search_for_next_work_is_charged_to_the_hold() {
        // Scheme 5 on 64 slots with the real clock: 60 callouts more than a turn away, each on
        // its own slot, make the search for next work look at every busy slot.
        let mut st = installed(tw_config {
            scheme: TW_SCHEME_HASHED_SORTED,
            clock: TW_CLOCK_REAL,
            capacity: 64,
            slots: 64,
            ring: 4,
            ..tw_config::default()
        });
        // By handle and by key in turn; the last, due first, by key (0xf00, 59). Each is due
        // 1,001 ticks (1 s) before the one set before it, on its own slot (1,001 is odd), so
        // that their order stays whatever the real clock does meanwhile.
        let mut handles = KVec::new();
        for i in 0..60 {
            let ticks = 100_000 - i * 1001;
            let h = match i % 2 {
                0 => st.set(ticks, 0, i, &mut Work::unlimited()),
                _ => st.timeout(0xf00, i, ticks, 0, &mut Work::unlimited()),
            };
            handles.push(h.unwrap(), GFP_KERNEL).unwrap();
        }
        // Searches cut short by small holds (scheme 5 takes each up where the last stopped),
        // each within its budget and no later than the whole answer.
        let mut cut = KVec::new();
        for limit in [1, 5, 30] {
            let work = &mut Work::new(limit);
            cut.push(st.next_arm(work).unwrap(), GFP_KERNEL).unwrap();
            assert!(work.done() >= 1 && work.done() <= limit);
        }
        let whole = st.next_arm(&mut Work::unlimited()).unwrap();
        // Exact here: the earliest deadline (counted from the real clock's tick at each set).
        let c = st.configured.as_ref().unwrap();
        let earliest = handles.iter().filter_map(|h| c.callouts.deadline(*h)).min();
        assert_eq!(Some(whole), earliest);
        assert!(cut.iter().all(|&t| t <= whole));
        // Armed for the earliest: cancelling another callout, by handle or by key, leaves it
        // armed well, and costs no search: a unit for the call, and one for the key's chain.
        st.armed = Some(whole);
        let (first, rest) = handles.split_last().unwrap();
        assert_eq!(c.callouts.deadline(*first), Some(whole));
        let work = &mut Work::new(8);
        assert_eq!(st.unset_checking_arm(rest[0], work), Ok(false));
        assert_eq!(work.done(), 1);
        let work = &mut Work::new(8);
        assert_eq!(st.untimeout_checking_arm(0xf00, 1, work), Ok(Some(false)));
        assert_eq!(work.done(), 1);
        assert_eq!(st.deadline(rest[1]), None);
        // Cancelling the earliest, by key, leaves it armed early: a search, charged to the
        // hold, finds the next work later.
        let work = &mut Work::unlimited();
        assert_eq!(st.untimeout_checking_arm(0xf00, 59, work), Ok(Some(true)));
        assert!(work.done() > 1);
        assert_eq!(st.deadline(*first), None);
        st.armed = st.next_arm(&mut Work::unlimited());
        assert!(st.armed.is_some_and(|t| after(t, whole)));
        // And by handle: the earliest left, the 58th, due on the tick armed.
        let work = &mut Work::unlimited();
        assert_eq!(st.unset_checking_arm(rest[58], work), Ok(true));
        assert!(work.done() > 1);
        st.armed = st.next_arm(&mut Work::unlimited());
        for h in &rest[2..58] {
            assert!(st.deadline(*h).is_some());
            st.unset(*h, &mut Work::unlimited()).unwrap();
        }
        // The last one cancelled: armed for nothing at all.
        assert!(st.armed_early(None, &mut Work::new(8)));
    }

    #[test]
    fn a_start_behind_leaves_the_catch_up_to_the_clock() {
        // Scheme 6 on one slot with the real clock at its shortest period: every tick visits
        // the callout pending, so catching up costs work.
        let mut st = installed(tw_config {
            scheme: TW_SCHEME_HASHED_UNSORTED,
            clock: TW_CLOCK_REAL,
            capacity: 64,
            slots: 1,
            ring: 4,
            tick_ns: TW_MIN_TICK_NS,
            ..tw_config::default()
        });
        let far = st.set(1 << 40, 0, 1, &mut Work::unlimited()).unwrap();
        let (time, start) = {
            let c = st.configured.as_ref().unwrap();
            (c.time, c.callouts.scheme().now())
        };
        // However fast the machine, wait until the real clock is a few ticks ahead.
        let ahead = || time.tick_at(Instant::now()).wrapping_sub(start);
        while ahead() < 4 {
            core::hint::spin_loop();
        }
        // Behind: a start sets its callout at once, the clock where it stood, and counts the
        // interval from the real tick all the same.
        st.behind = true;
        let real = time.tick_at(Instant::now());
        let h = st.set(1 << 20, 0, 2, &mut Work::new(8)).unwrap();
        assert_eq!(st.snapshot().now, start);
        let due = st.deadline(h).unwrap();
        assert!(!after(real.wrapping_add(1 << 20), due));
        // The callback, behind, armed the hrtimer for the next period: it is armed well, and
        // not late for the callout just set, though the tick after the scheme's is long past.
        st.armed = Some(real.wrapping_add(1));
        assert_eq!(
            st.next_arm(&mut Work::unlimited()),
            Some(start.wrapping_add(1))
        );
        assert!(st.armed_well(&mut Work::unlimited()));
        assert!(!st.armed_late(due, &mut Work::unlimited()));
        // Not behind: a start runs the clock towards the real tick first.
        st.behind = false;
        st.set(1 << 20, 0, 3, &mut Work::unlimited()).unwrap();
        assert!(!after(real, st.snapshot().now));
        assert_eq!(st.deadline(h), Some(due));
        assert_eq!(st.deadline(far), Some(start.wrapping_add(1 << 40)));
    }

    #[test]
    fn a_start_leaves_its_hold_room_for_its_own_steps() {
        // Scheme 3, the heap, on the real clock at its shortest period, with callouts due on
        // the first ticks: catching up pops them, a sift each.
        let mut st = installed(tw_config {
            scheme: TW_SCHEME_HEAP,
            clock: TW_CLOCK_REAL,
            capacity: 64,
            ring: 64,
            tick_ns: TW_MIN_TICK_NS,
            ..tw_config::default()
        });
        for i in 1..=32 {
            st.set(i, 0, i, &mut Work::unlimited()).unwrap();
        }
        let (time, start) = {
            let c = st.configured.as_ref().unwrap();
            (c.time, c.callouts.scheme().now())
        };
        let ahead = || time.tick_at(Instant::now()).wrapping_sub(start);
        while ahead() < 40 {
            core::hint::spin_loop();
        }
        // No more left in the hold than the margin: the catch-up takes no step, and the
        // interval counts from the real tick all the same.
        let real = time.tick_at(Instant::now());
        let work = &mut Work::new(STEP_MARGIN);
        let h = st.set(1 << 20, 0, 100, work).unwrap();
        assert_eq!(st.snapshot().now, start);
        assert!(work.done() <= STEP_MARGIN);
        assert!(!after(real.wrapping_add(1 << 20), st.deadline(h).unwrap()));
        // With room, it runs the clock towards the real tick first.
        st.set(1 << 20, 0, 101, &mut Work::unlimited()).unwrap();
        assert!(!after(real, st.snapshot().now));
    }

    #[test]
    fn a_batch_arms_again_only_for_a_callout_due_before_the_tick_armed_for() {
        let mut st = installed(tw_config {
            scheme: TW_SCHEME_HIERARCHICAL,
            clock: TW_CLOCK_REAL,
            capacity: 64,
            ring: 4,
            ..tw_config::default()
        });
        // Nothing armed, a callout outstanding: late for it.
        let far = st.set(1 << 30, 0, 1, &mut Work::unlimited()).unwrap();
        let due_far = st.earliest_due(None, far).unwrap();
        assert!(st.armed_late(due_far, &mut Work::unlimited()));
        // Armed for it: a callout due later changes nothing, one due earlier is late.
        st.armed = Some(due_far);
        let later = st.set(1 << 31, 0, 2, &mut Work::unlimited()).unwrap();
        let due = st.earliest_due(None, later);
        assert!(after(due.unwrap(), due_far));
        assert!(!st.armed_late(due.unwrap(), &mut Work::unlimited()));
        let near = st.set(1 << 10, 0, 3, &mut Work::unlimited()).unwrap();
        let due = st.earliest_due(due, near).unwrap();
        assert_eq!(Some(due), st.deadline(near));
        assert!(st.armed_late(due, &mut Work::unlimited()));
        // Behind, the callback has it armed for the next period.
        st.behind = true;
        assert!(!st.armed_late(due, &mut Work::unlimited()));
        // On a manual clock nothing is armed, and nothing is asked.
        let mut st = state(TW_SCHEME_HIERARCHICAL, 0);
        let h = st.set(5, 0, 1, &mut Work::unlimited()).unwrap();
        assert_eq!(st.earliest_due(None, h), None);
    }

    #[test]
    fn a_batch_untimeout_walks_a_long_chain_over_holds() {
        let mut st = state(6, 16);
        for i in 1..=60 {
            st.timeout(0xf00, 1, 200 - i, 0, &mut Work::unlimited())
                .unwrap();
        }
        let mut op = tw_op {
            op: TW_OP_UNTIMEOUT,
            a: 0xf00,
            b: 1,
            ..tw_op::default()
        };
        let mut holds = 1;
        while !st.run_op(&mut op, &mut Work::new(8)) {
            holds += 1;
        }
        // A unit for the operation and one for each callout looked at, 8 a hold.
        assert!(holds > 60 / 8);
        assert_eq!(op.result, 0);
        let s = st.snapshot();
        assert_eq!((s.outstanding, s.stopped), (59, 1));
        // The one due first, on tick 140, is gone.
        run(&mut st, 140);
        assert_eq!(st.snapshot().fired, 0);
    }

    /// The work an `untimeout` of key (0xf00, 1) by `task` takes to end, from the start of a
    /// call ([`State::resume_untimeout`]), in holds of 8.
    fn untimeout_work(st: &mut State, task: Pid) -> usize {
        st.resume_untimeout(task, 0xf00, 1);
        let mut done = 0;
        loop {
            let work = &mut Work::new(8);
            let r = st.untimeout(0xf00, 1, work).unwrap();
            done += work.done();
            if r.is_some() {
                return done;
            }
        }
    }

    #[test]
    fn an_untimeout_cut_short_goes_on_where_it_stopped_when_made_again() {
        let mut st = state(7, 16);
        let hs: [Handle; 60] = core::array::from_fn(|i| {
            st.timeout(0xf00, 1, 199 - i as u64, 0, &mut Work::unlimited())
                .unwrap()
        });
        // A walk from the head looks at every callout on the chain (all are of the key).
        let chain = |st: &State| st.snapshot().outstanding as usize;
        let whole = untimeout_work(&mut st, 1);
        assert!(whole >= 60);
        // Cut short after three holds and kept (`mid` runs after the first of them): the same
        // task's call goes on, and cancels the one due first (tick 141, the one due on 140
        // having gone), once.
        let cut = |st: &mut State, mid: u32| {
            st.resume_untimeout(1, 0xf00, 1);
            for hold in 0..3 {
                assert_eq!(st.untimeout(0xf00, 1, &mut Work::new(8)), Ok(None));
                match (hold, mid) {
                    // A callout of the key armed behind the walk.
                    (0, 1) => {
                        st.timeout(0xf00, 1, 500, 0, &mut Work::unlimited())
                            .unwrap();
                    }
                    // A match reset: the walk goes back to the head.
                    (0, 2) => st.reset(hs[0], 300, 0, &mut Work::unlimited()).unwrap(),
                    _ => {}
                }
            }
            st.keep_untimeout(1, 0xf00, 1);
        };
        cut(&mut st, 0);
        let rest = untimeout_work(&mut st, 1);
        assert!(rest + 3 * 8 <= whole);
        assert_eq!((st.snapshot().outstanding, st.snapshot().stopped), (58, 2));
        run(&mut st, 141);
        assert_eq!(st.snapshot().fired, 0);
        // A legacy callout of another key armed between the calls, on the chain or not: the
        // walk goes on.
        let chained =
            |st: &mut State, f: u64| st.callouts().unwrap().same_chain((0xf00, 1), (f, 1));
        let on = (0xf01..).find(|&f| chained(&mut st, f)).unwrap();
        let off = (0xf01..).find(|&f| !chained(&mut st, f)).unwrap();
        for other in [on, off] {
            cut(&mut st, 0);
            st.timeout(other, 1, 100, 0, &mut Work::unlimited())
                .unwrap();
            let rest = untimeout_work(&mut st, 1);
            assert!(rest + 3 * 8 <= whole);
        }
        // Another task's call, another key's, a batch's, a call after a legacy callout was
        // armed (behind the walk), after or during the walk, after a walk that went back to the
        // head, or after an undone reset, starts from the head.
        for case in 0..7 {
            cut(&mut st, if case >= 4 { case - 3 } else { 0 });
            let task = match case {
                0 => 2,
                1 => {
                    st.resume_untimeout(1, 0xf00, 2);
                    1
                }
                2 => {
                    st.abandon_untimeout();
                    1
                }
                3 => {
                    st.timeout(0xf00, 1, 500, 0, &mut Work::unlimited())
                        .unwrap();
                    1
                }
                6 => {
                    assert!(!st.abandon_reset());
                    1
                }
                _ => 1,
            };
            // All but the callout of key `off` are on the chain.
            let n = chain(&st) - 1;
            let w = untimeout_work(&mut st, task);
            assert!(w >= n);
        }
        let s = st.snapshot();
        assert_eq!((s.outstanding, s.stopped), (53, 11));
    }

    #[test]
    fn cancelling_new_callouts_is_charged_to_the_hold() {
        // Scheme 7 unlinks a callout at no cost of its own: the cancel's unit is what bounds a
        // loop of them under one hold, stale handles (callouts fired meanwhile) included.
        let mut st = state(7, 0);
        let new: [Handle; 40] = core::array::from_fn(|i| {
            let i = i as u64 + 1;
            st.set(1000 + i, 0, i, &mut Work::unlimited()).unwrap()
        });
        let mut cancelled = 0;
        let mut holds = 0;
        while cancelled < new.len() {
            let work = &mut Work::new(8);
            while !work.is_spent() && cancelled < new.len() {
                assert!(st.cancel_new(new[cancelled], work));
                cancelled += 1;
            }
            assert!(work.done() <= 8);
            holds += 1;
        }
        assert_eq!(holds, 5);
        let s = st.snapshot();
        assert_eq!((s.outstanding, s.started, s.stopped), (0, 0, 0));
        assert!(!st.cancel_new(new[0], &mut Work::new(1)));
        assert_eq!(st.snapshot().started, 0);
    }
}
