// SPDX-License-Identifier: GPL-2.0

//! `TW_IOC_BENCH`: the paper's reset loop (section VII.A), timed inside the kernel, and
//! `TW_IOC_BENCH_PAIR`: an instance's loop and Linux's, alternated.
//!
//! The instance benches reset one extra callout behind the instance's own outstanding ones,
//! through the interface being measured, in holds of at most `hold_work` entries like every
//! other operation: only the time under the lock is counted, and the longest hold is reported.
//! They need a configured manual-clock instance and take its slow right (`Core::slow`), so that nothing
//! ticks it meanwhile and nothing the bench starts can fire. The bench's own callout uses the
//! legacy key `(0, 0)`, which no user can arm (a function is never 0), and is cancelled before
//! the bench returns, whatever happens.

use kernel::{prelude::*, uaccess::UserSlice};

use crate::{
    baselines::{
        wait_for_teardowns,
        LinuxBench, //
    },
    instance::{
        between_holds,
        Instance,
        Slow, //
    },
    params::KernelStorage,
    uapi::*,
    wheel::{
        callout::Callouts,
        rng::Rng,
        Clock,
        Handle,
        Scheme,
        Work, //
    },
};

/// The legacy key of the bench's own callout.
const BENCH_FUNC: u64 = 0;
const BENCH_ARG: u64 = 0;

/// The bench's reset through the old interface: `untimeout` of its key, within `work`, then
/// `timeout` to `ticks`. `false` while the untimeout still walks its chain (other keys sharing
/// the bench key's bucket), to be called again in the next hold.
fn untimeout_then_timeout(
    c: &mut Callouts<KernelStorage>,
    handle: &mut Option<Handle>,
    ticks: u64,
    work: &mut Work,
) -> Result<bool> {
    if c.untimeout_within(BENCH_FUNC, BENCH_ARG, work)
        .map_err(errno)?
        .is_none()
    {
        return Ok(false);
    }
    // Cancelled first: the bench's callout is gone if the start fails.
    *handle = None;
    *handle = Some(
        c.timeout_range(BENCH_FUNC, BENCH_ARG, ticks, ticks, work)
            .map_err(errno)?,
    );
    Ok(true)
}

/// How long the instance's resets of a `TW_IOC_BENCH_PAIR` run, in holds, before as many of
/// Linux's: short enough that the machine's speed (which under emulation moves from one second
/// to the next) is the same for both, long enough that neither finds the caches filled with the
/// other's lines at every turn.
const PAIR_SLICE_NS: u64 = 1_000_000;

/// The furthest ahead a `timer_list` may be armed, in jiffies: the kernel's `MAX_JIFFY_OFFSET`
/// (a C macro, which bindgen does not carry). Beyond it, on a 32-bit kernel, where it is below
/// [`TW_MAX_BENCH_TICKS`], `jiffies + ticks` would wrap, and the timer fire at once.
const MAX_JIFFY_OFFSET: u64 = (isize::MAX as u64 >> 1) - 1;

/// EINVAL unless `b` is a bench `TW_IOC_BENCH` takes: checked before any wait, so that bad
/// input fails at once.
fn check(b: &tw_bench) -> Result {
    let instance = matches!(
        b.kind,
        TW_BENCH_SETCALLOUT | TW_BENCH_TIMEOUT | TW_BENCH_MOD | TW_BENCH_TICK
    );
    let timer_list = matches!(b.kind, TW_BENCH_TIMER_LIST | TW_BENCH_TIMER_LIST_MOD);
    if !(instance || timer_list || b.kind == TW_BENCH_HRTIMER)
        || b.reserved != 0
        || b.iterations == 0
        || b.iterations > TW_MAX_BENCH_ITERATIONS
        || (instance && b.n != 0)
        || b.n > u64::from(TW_MAX_CAPACITY)
        || b.min_ticks < 2
        || (!instance && b.min_ticks < TW_MIN_BASELINE_TICKS)
        || b.spread == 0
        || b.min_ticks.saturating_add(b.spread) > TW_MAX_BENCH_TICKS
        || (timer_list && b.min_ticks.saturating_add(b.spread) > MAX_JIFFY_OFFSET)
    {
        return Err(EINVAL);
    }
    Ok(())
}

impl Instance {
    pub(crate) fn ioctl_bench(&self, user: UserSlice) -> Result {
        let (mut r, mut w) = user.reader_writer();
        let mut b: tw_bench = r.read()?;
        check(&b)?;
        // A bench of the instance's on an instance without the manual clock fails at once too.
        if !matches!(
            b.kind,
            TW_BENCH_TIMER_LIST | TW_BENCH_TIMER_LIST_MOD | TW_BENCH_HRTIMER
        ) {
            self.manual()?;
        }
        // An earlier bench's timers may still be going: not beside this one's measurement.
        wait_for_teardowns()?;
        let (ns, max_hold) = match b.kind {
            TW_BENCH_SETCALLOUT | TW_BENCH_TIMEOUT | TW_BENCH_MOD => {
                self.bench_resets(&self.core.slow()?, &b, &mut |_| Ok(()))?
            }
            TW_BENCH_TICK => self.bench_ticks(&self.core.slow()?, &b)?,
            TW_BENCH_TIMER_LIST | TW_BENCH_TIMER_LIST_MOD | TW_BENCH_HRTIMER => {
                (LinuxBench::run(&b)?, 0)
            }
            _ => return Err(EINVAL),
        };
        b.elapsed_ns = ns;
        b.max_hold_ns = max_hold;
        w.write(&b)
    }

    /// `TW_IOC_BENCH_PAIR`: an instance's resets and Linux's (a `timer_list` or an hrtimer),
    /// alternated: after each [`PAIR_SLICE_NS`] of the instance's resets, in holds, as many of
    /// Linux's.
    pub(crate) fn ioctl_bench_pair(&self, user: UserSlice) -> Result {
        let (mut r, mut w) = user.reader_writer();
        let mut p: tw_bench_pair = r.read()?;
        check(&p.instance)?;
        check(&p.baseline)?;
        if !matches!(
            p.instance.kind,
            TW_BENCH_SETCALLOUT | TW_BENCH_TIMEOUT | TW_BENCH_MOD
        ) || !matches!(
            p.baseline.kind,
            TW_BENCH_TIMER_LIST | TW_BENCH_TIMER_LIST_MOD | TW_BENCH_HRTIMER
        ) || p.instance.iterations != p.baseline.iterations
        {
            return Err(EINVAL);
        }
        // Before the Linux timers are made: a bench on the wrong instance fails at once, and one
        // that waits for another long operation on the file has made none, to be left pending
        // meanwhile or taken down after a signal.
        self.manual()?;
        wait_for_teardowns()?;
        let slow = self.core.slow()?;
        let mut linux = LinuxBench::new(&p.baseline)?;
        let mut linux_ns = 0;
        let resets = self.bench_resets(&slow, &p.instance, &mut |k| {
            linux_ns += linux.resets(k)?;
            Ok(())
        });
        // Taking Linux's timers down (or handing them to the workqueue, on an error) holds up
        // no other call on the file.
        drop(slow);
        let (ns, max_hold) = resets?;
        linux.take_down();
        p.instance.elapsed_ns = ns;
        p.instance.max_hold_ns = max_hold;
        p.baseline.elapsed_ns = linux_ns;
        p.baseline.max_hold_ns = 0;
        w.write(&p)
    }

    /// EINVAL unless the instance is configured with the manual clock.
    fn manual(&self) -> Result {
        match self.core.state.lock().params() {
            Some(p) if p.clock == TW_CLOCK_MANUAL => Ok(()),
            _ => Err(EINVAL),
        }
    }

    /// Resets one extra callout `iterations` times through the instance's own interface, and
    /// every [`PAIR_SLICE_NS`] of them under the lock, and after the last, calls `partner` with
    /// the number of resets made since its last turn (outside the lock; an error ends the
    /// bench). Returns the time under the lock and the longest hold. The caller has checked
    /// the clock ([`Instance::manual`]; a configuration never changes) and holds the file's
    /// slow right.
    fn bench_resets(
        &self,
        _slow: &Slow<'_>,
        b: &tw_bench,
        partner: &mut dyn FnMut(u64) -> Result,
    ) -> Result<(u64, u64)> {
        let mut rng = Rng::new(b.seed);
        let first = rng.within(b.min_ticks, b.spread);
        let legacy = b.kind == TW_BENCH_TIMEOUT;
        let mut handle: Option<Handle> = None;
        let mut placing = false;
        // The tick of the timeout that follows an untimeout still walking its chain.
        let mut rearm: Option<u64> = None;
        let mut elapsed = 0;
        let mut max_hold = 0;
        let mut left = b.iterations;
        let mut result = Ok(());
        // Until the bench's callout is armed and placed, holds are setup, not timed: the
        // holds that arm and place it do nothing else.
        let mut setup = true;
        // The resets made since `partner` last had its turn, and their time.
        let (mut slice_resets, mut slice_ns) = (0, 0);
        while result.is_ok() && (left > 0 || placing || handle.is_none() || rearm.is_some()) {
            if between_holds() {
                result = Err(EINTR);
                break;
            }
            let mut armed = false;
            let before = left;
            let (r, ns) = self.core.hold_timed(|st, work| -> Result {
                let c = st.callouts()?;
                if placing {
                    if !c.place(work) {
                        return Ok(());
                    }
                    placing = false;
                    if setup {
                        armed = true;
                        return Ok(());
                    }
                }
                if let Some(t) = rearm {
                    if !untimeout_then_timeout(c, &mut handle, t, work)? {
                        return Ok(());
                    }
                    rearm = None;
                    left -= 1;
                    if c.placing() {
                        placing = true;
                        return Ok(());
                    }
                }
                if handle.is_none() {
                    handle = Some(
                        if legacy {
                            c.timeout_range(BENCH_FUNC, BENCH_ARG, first, first, work)
                        } else {
                            c.setcallout_range(first, first, 0, work)
                        }
                        .map_err(errno)?,
                    );
                    placing = c.placing();
                    armed = !placing;
                    return Ok(());
                }
                while left > 0 && !work.is_spent() {
                    let t = rng.within(b.min_ticks, b.spread);
                    let h = handle.ok_or(EINVAL)?;
                    work.spend(1);
                    match b.kind {
                        TW_BENCH_MOD => c.reset(h, t, t, work).map_err(errno)?,
                        TW_BENCH_TIMEOUT => {
                            // Other keys sharing the bench key's bucket make the walk long:
                            // it goes on in the next holds, the timeout after it.
                            if !untimeout_then_timeout(c, &mut handle, t, work)? {
                                rearm = Some(t);
                                return Ok(());
                            }
                        }
                        _ => {
                            handle = None;
                            c.unsetcallout_within(h, work).map_err(errno)?;
                            handle = Some(c.setcallout_range(t, t, 0, work).map_err(errno)?);
                        }
                    }
                    left -= 1;
                    if c.placing() {
                        placing = true;
                        return Ok(());
                    }
                }
                Ok(())
            });
            if !setup {
                elapsed += ns;
                max_hold = max_hold.max(ns);
                slice_ns += ns;
            }
            // Every later hold is timed, whether or not it ends in a placement.
            setup = setup && !armed;
            slice_resets += before - left;
            result = r.and_then(|()| match slice_ns >= PAIR_SLICE_NS || left == 0 {
                true if slice_resets > 0 => {
                    slice_ns = 0;
                    partner(core::mem::take(&mut slice_resets))
                }
                _ => Ok(()),
            });
        }
        // The bench's callout goes, placed or placing, whatever happened above, and so does a
        // walk of its untimeout cut short.
        self.core.hold(|st, work| {
            if let Ok(c) = st.callouts() {
                c.abandon_untimeout();
                if let Some(h) = handle {
                    let _ = c.unsetcallout_within(h, work);
                }
            }
        });
        result.map(|()| (elapsed, max_hold))
    }

    /// Runs `iterations` ticks of the paper's per-tick bookkeeping (periodic, whatever the
    /// instance's clock mode), with their expiry processing. The caller has checked the clock,
    /// as for [`Instance::bench_resets`].
    fn bench_ticks(&self, _slow: &Slow<'_>, b: &tw_bench) -> Result<(u64, u64)> {
        let mut target = None;
        let mut left = b.iterations;
        let mut elapsed = 0;
        let mut max_hold = 0;
        while left > 0 {
            if between_holds() {
                return Err(EINTR);
            }
            let ((), ns) = self.core.hold_timed(|st, work| {
                while left > 0 && !work.is_spent() {
                    let now = st.callouts().map(|c| c.scheme().now()).unwrap_or(0);
                    let t = *target.get_or_insert(now.wrapping_add(1));
                    if st.run_to_with(t, None, Clock::Periodic, work) {
                        target = None;
                        left -= 1;
                    }
                }
            });
            elapsed += ns;
            max_hold = max_hold.max(ns);
        }
        Ok((elapsed, max_hold))
    }
}
