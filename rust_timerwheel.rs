// SPDX-License-Identifier: GPL-2.0

//! rust_timerwheel: the BSD callout facility of Varghese & Lauck on `/dev/timerwheel`.
//!
//! The algorithms live in `wheel/` (compiled in below as [`wheel`], free of kernel types). The
//! kernel glue is this file and the rooms of `glue/`, the only places with `unsafe`. The uapi
//! is `include/uapi/timerwheel.h`.
//!
//! # Design
//!
//! ```text
//!   open() ──► Instance ─┬─ clock: Mutex<hrtimer handle>   (configuration, arming)
//!                        └─ Arc<Core> ─┬─ state: SpinLockIrq<State> ─┬─ Callouts (a scheme)
//!                                      │                             ├─ Ring of expiry records
//!                                      │                             └─ statistics
//!                                      ├─ timer: HrTimer (real clock, absolute, soft mode)
//!                                      ├─ readable: PollCondVarBox (readers, poll)
//!                                      └─ slow_free: CondVar (operations spanning holds)
//! ```
//!
//! Every open file owns one instance: one scheme, one clock, one ring. Nothing is shared
//! between files but the teardown of the Linux baselines' timers (below), so tests and
//! benchmarks cannot disturb each other, and the module itself arms no timer: with no file open
//! it costs nothing.
//!
//! - *Configuration* (`TW_IOC_CONFIGURE`, or the defaults on the first start) allocates all
//!   storage (the scheme's fixed-capacity arena, the callout layer's tables, the ring) in
//!   process context, outside any spinlock, in chunks between which a signal ends it (EINTR,
//!   nothing configured); a buffer that would take, with those other calls are making, more
//!   than half the memory available is refused (ENOMEM), so that making instances does not
//!   drive the machine into the OOM killer; nothing allocates afterwards.
//! - *The clock* is tickless (`clock.rs`): the instance's hrtimer is armed for the next tick
//!   that has work, as the scheme tells it (`Scheme::next_work`), and not at all while nothing
//!   is outstanding; idle ticks are skipped at a cost independent of their number. With
//!   `TW_CONFIG_PERIODIC` it fires on every tick, as the paper's clock does. Since a tickless
//!   scheme's clock stands still while nothing is due, a start first brings it up to the tick
//!   real time has reached (skipping idle ticks costs nothing), so that "ticks from now" counts
//!   from the real now. The manual clock (`TW_IOC_ADVANCE`) runs the same code without a timer.
//! - *Bounded holds* (`instance.rs`): the state sits under a `SpinLockIrq`, since the
//!   hrtimer callback shares it. Every hold does at most `hold_work` entries of work (W, a
//!   module parameter, 256 by default), counted in entries visited or moved, not in
//!   operations: per-tick bookkeeping, expiry, catch-up, a sorted-list walk (schemes 2 and 5),
//!   batches, benches, ADVANCE. A hold takes no new step once fewer than `STEP_MARGIN` (48)
//!   entries are left, the most one step (a heap sift for a stop and a start) can cost, so it
//!   never exceeds W. What does not fit continues in the next hold, after the lock was
//!   released and, in process context, pending signals looked at (EINTR). 256 entries is
//!   a few microseconds on hardware (one entry is one or two cache misses) and still amortises
//!   the lock over about a hundred resets in the benches; the statistics report the most work
//!   and the longest hold seen, so the bound can be checked from user space.
//! - *Overload*: the callback takes at most `CALLBACK_HOLDS` holds per period. When a tick's
//!   work does not fit (scheme 1 at its cap, a hashed wheel with one slot and millions of
//!   callouts, a burst beyond the budget), the rest continues one period later. Callouts then
//!   fire late, never early; `overruns`, `lateness` and `carried` in `struct tw_stats` say by
//!   how much, while the other CPUs, the other files and this file's ioctls keep answering.
//! - *The Linux baselines* of `TW_IOC_BENCH` (`baselines.rs`) make up to 2^22 kernel timers,
//!   and taking them down takes about as long as arming them. A bench that ends as it should
//!   takes them down itself, a chunk at a time; on a signal, before or during that, what is
//!   left goes to a workqueue of the module's own, so that the call returns at once. Every
//!   bench first waits, interruptibly, until no teardown is left, so that none runs beside its
//!   measurement; unloading the module waits for them.
//! - *Readers* wait interruptibly on the ring, any number at once; each takes records out under
//!   the lock and copies them outside it, so each record is delivered exactly once; between
//!   chunks a long read offers the CPU, and a signal ends it with what it delivered. `poll`
//!   reports EPOLLIN while a record waits (where the kernel has poll for Rust misc devices).
//! - *Teardown*: closing the file drops the instance; the clock handle goes first, and dropping
//!   it cancels the hrtimer and waits for a running callback; then the last `Arc<Core>` frees
//!   the storage. Outstanding callouts vanish with it and never fire.

use kernel::{
    prelude::*,
    sync::{
        atomic::Atomic,
        SetOnce, //
    },
    time::{
        Instant,
        Monotonic, //
    },
};

#[path = "wheel/src/wheel/mod.rs"]
pub mod wheel;

#[path = "glue/baselines.rs"]
mod baselines;
#[path = "glue/bench.rs"]
mod bench;
#[path = "glue/clock.rs"]
mod clock;
#[path = "glue/instance.rs"]
mod instance;
#[path = "glue/params.rs"]
mod params;
#[path = "glue/ring.rs"]
mod ring;
#[path = "glue/state.rs"]
mod state;
#[path = "glue/uapi.rs"]
mod uapi;

use kernel::miscdevice::{
    MiscDeviceOptions,
    MiscDeviceRegistration, //
};

module! {
    type: TimerWheelModule,
    name: "rust_timerwheel",
    authors: ["The rust_timerwheel developers"],
    description: "Hashed and hierarchical timing wheels (Varghese & Lauck) as a BSD callout facility on /dev/timerwheel",
    license: "GPL",
    params: {
        tick_us: u32 {
            default: 1000,
            description: "Real-clock period in microseconds of an instance configured with tick_ns 0 (100..=1000000)",
        },
        hold_work: u32 {
            default: 256,
            description: "Most entries visited or moved under one hold of an instance's lock, with interrupts masked (192..=4096)",
        },
    },
}

/// Open files of the device.
pub(crate) static INSTANCES: Atomic<u64> = Atomic::new(0);

/// When the module was loaded.
static LOADED: SetOnce<Instant<Monotonic>> = SetOnce::new();

/// `tick_us` in nanoseconds (checked at load).
pub(crate) fn default_tick_ns() -> u64 {
    u64::from(module_parameters::tick_us.value()) * 1000
}

/// The least `hold_work`: a hold's budget (W less [`instance::STEP_MARGIN`]) takes a whole
/// search for next work (`wheel::NEXT_WORK_SLOTS` units), so that the search the clock's
/// callback makes in a hold of its own is never cut short by a small W (a search cut short
/// answers a lower bound, and the clock would wake there for nothing).
const MIN_HOLD_WORK: usize = 192;

const _: () = assert!(MIN_HOLD_WORK >= wheel::NEXT_WORK_SLOTS + instance::STEP_MARGIN);

/// `hold_work` (checked at load).
pub(crate) fn hold_work() -> usize {
    module_parameters::hold_work.value() as usize
}

/// Nanoseconds since the module was loaded.
pub(crate) fn uptime_ns() -> u64 {
    LOADED
        .copy()
        .map_or(0, |t| t.elapsed().as_nanos().max(0) as u64)
}

/// The loaded module: the device, and the workqueue that takes the Linux baselines' timers
/// down (no timer of its own). The fields drop in this order: the device goes first, then the
/// queue, once the teardowns on it have run.
#[pin_data]
struct TimerWheelModule {
    #[pin]
    miscdev: MiscDeviceRegistration<instance::Instance>,
    teardowns: baselines::Teardowns,
}

impl kernel::InPlaceModule for TimerWheelModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        pin_init::pin_init_scope(|| {
            let tick_ns = default_tick_ns();
            if !(uapi::TW_MIN_TICK_NS..=uapi::TW_MAX_TICK_NS).contains(&tick_ns) {
                pr_err!("tick_us={} is outside 100..=1000000\n", tick_ns / 1000);
                return Err(EINVAL);
            }
            if !(MIN_HOLD_WORK..=4096).contains(&hold_work()) {
                pr_err!(
                    "hold_work={} is outside {}..=4096\n",
                    hold_work(),
                    MIN_HOLD_WORK
                );
                return Err(EINVAL);
            }
            LOADED.populate(Instant::now());
            pr_info!(
                "loaded: /dev/timerwheel, default tick {} us, at most {} entries per lock hold\n",
                tick_ns / 1000,
                hold_work()
            );
            // The queue before the device, whose benches use it: should the device not
            // register, the queue goes again.
            Ok(try_pin_init!(Self {
                teardowns: baselines::Teardowns::new()?,
                miscdev <- MiscDeviceRegistration::register(MiscDeviceOptions {
                    name: c"timerwheel",
                }),
            }))
        })
    }
}
