// SPDX-License-Identifier: GPL-2.0

//! The real clock: one hrtimer per instance, armed only for the next tick that has work.
//!
//! # Tickless
//!
//! The hrtimer runs in absolute soft mode on the monotonic clock, always on the instance's
//! tick grid (tick `k` at `origin + k * period`). Each callback:
//!
//! 1. reads which tick the real clock has reached (`real`), counts the periods it is late by
//!    as overruns, and the callback as a wakeup;
//! 2. runs the scheme towards `real` in at most [`CALLBACK_HOLDS`] holds of the lock, each of
//!    at most `hold_work` entries visited or moved (idle ticks are skipped by the scheme at a
//!    cost independent of their number);
//! 3. asks the state for the next tick to wake on ([`State::next_arm`]): the next tick while
//!    work is left over (a catch-up that did not fit, expiries carried by the per-tick budget)
//!    or the clock is periodic, else the scheme's next work, else none; and re-arms for it,
//!    never for a time already past (which would run the callback again at once, in the same
//!    softirq), or stops. The search for next work (schemes 5 and 6) is charged to the hold
//!    that makes it; one that would find less than its usual budget left in the last hold
//!    takes a hold of its own.
//!
//! Under overload, then, the instance takes at most `CALLBACK_HOLDS * hold_work` entries of
//! work per period; the rest waits for the next period. Callouts fire late, never early, and
//! the lateness histogram and the overrun count say by how much.
//!
//! # Arming from process context
//!
//! A start, reschedule or configuration may need the timer earlier than it is armed, or at
//! all; a cancel or a reschedule of the callout it is armed for, later (or, the last callout
//! cancelled, not at all), so that a timeout cancelled before it is due costs no wakeup.
//! [`Instance::arm`](crate::instance::Instance) does that under the instance's `clock` mutex:
//! it cancels the timer (waiting for a running callback), then reads the next tick under the
//! state lock and starts the timer for it (if there is one). The callback is then neither
//! running nor armed while the state is read, so the two cannot both decide and lose a wakeup.
//! A batch, which may hold the file for long, does so between its holds where one of them has
//! started or moved a callout due before the tick the timer is armed for
//! ([`State::armed_late`]); whatever else it changed waits for its end.
//!
//! While the callback is behind, it has armed the timer for the next period and decides again
//! then: calls leave it alone. Armed again from a call, for the tick after the one the scheme
//! stands on, the timer would be armed in the past, and the catch-up would run on every call
//! rather than once a period.
//!
//! [`State::next_arm`]: crate::state::State::next_arm
//! [`State::armed_late`]: crate::state::State::armed_late

use kernel::{
    sync::{
        Arc,
        ArcBorrow, //
    },
    time::{
        hrtimer::{
            HrTimerCallback,
            HrTimerCallbackContext,
            HrTimerRestart, //
        },
        Delta,
        Instant,
        Monotonic, //
    },
};

use crate::{
    instance::Core,
    state::after,
    wheel::NEXT_WORK_SLOTS, //
};

/// Holds of the lock one callback may take to run the clock; the lock is released between
/// them (and one more hold, for the search of the next tick alone, follows when the last left
/// less than a search's budget). Four holds of the default 256 entries take up to 832 new
/// steps (each stops 48 short, the step margin), most of the default per-tick budget of 1,024
/// expiries, and stay in the tens of microseconds of softirq time on hardware; what does not
/// fit continues a period later.
pub(crate) const CALLBACK_HOLDS: usize = 4;

impl HrTimerCallback for Core {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, mut ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        let now = Instant::<Monotonic>::now();
        let mut period = Delta::from_nanos(1);
        // The tick the real clock has reached, and the time to wake next once the last hold
        // has decided it (`None`: not yet).
        let mut real = 0;
        let mut decided = None;
        for i in 0..CALLBACK_HOLDS {
            let done = this.hold(|st, work| {
                decided = None;
                let Some(c) = &st.configured else {
                    decided = Some(None);
                    return true;
                };
                let time = c.time;
                period = time.period();
                real = time.tick_at(now);
                if i == 0 {
                    st.stats.wakeups += 1;
                    // Periods this callback runs after the tick it was armed for.
                    if let Some(armed) = st.armed {
                        if after(real, armed) {
                            st.stats.overruns += real.wrapping_sub(armed);
                        }
                    }
                }
                let done = st.run_to(real, Some(real), work);
                st.behind = !done;
                // The next tick, in this hold unless the search for it (schemes 5 and 6),
                // charged to the hold, would find less than its usual budget left.
                if !done || work.left() >= NEXT_WORK_SLOTS {
                    decided = Some(st.rearm(real, work).map(|t| time.time_of(t)));
                }
                done
            });
            if done {
                break;
            }
        }
        let next = decided.unwrap_or_else(|| {
            this.hold(|st, work| {
                let time = st.configured.as_ref()?.time;
                st.rearm(real, work).map(|t| time.time_of(t))
            })
        });
        match next {
            Some(when) => {
                // The first grid point after both `when - 1ns` and now: `when` itself if it is
                // still ahead, else the next period (never a time already past).
                let just_before = when - Delta::from_nanos(1);
                let now = Instant::now();
                let floor = if (just_before - now).as_nanos() > 0 {
                    just_before
                } else {
                    now
                };
                ctx.forward(floor, period);
                HrTimerRestart::Restart
            }
            None => HrTimerRestart::NoRestart,
        }
    }
}
