// SPDX-License-Identifier: GPL-2.0

//! Linux's own timers, measured the same way as the instance benches: the Figure 9 baselines.
//!
//! `TW_BENCH_TIMER_LIST` resets one `timer_list` (`timer_delete` + `mod_timer`) behind `n`
//! pending ones, `TW_BENCH_TIMER_LIST_MOD` the same through `mod_timer` alone (Linux's reset in
//! place: a pending timer is moved, or left where it is when it lands in the same bucket), and
//! `TW_BENCH_HRTIMER` cancels and restarts one hrtimer behind `n` pending ones. The loops run in
//! chunks between which a pending signal ends the bench (EINTR); every timer is cancelled
//! before its memory goes.

use kernel::{
    alloc::{
        flags::{
            __GFP_NOWARN,
            GFP_KERNEL,
            GFP_KERNEL_ACCOUNT, //
        },
        KVVec, //
    },
    bindings, impl_has_hr_timer,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow, //
    },
    time::{
        hrtimer::{
            HrTimer,
            HrTimerCallback,
            HrTimerCallbackContext,
            HrTimerPointer,
            HrTimerRestart,
            RelativeMode, //
        },
        Delta,
        Instant,
        Monotonic, //
    },
    types::Opaque,
};

use crate::{
    instance::{
        between_holds,
        cond_resched, //
    },
    params::{
        reserve,
        KernelStorage, //
    },
    uapi::*,
    wheel::{
        rng::Rng,
        Storage, //
    },
};

/// Timers created, reset or cancelled between two offers of the CPU and looks at pending
/// signals.
const CHUNK: u64 = 4096;

/// A `timer_list` of the timer_list bench. Never expected to fire (all deadlines are far away).
///
/// There is no Rust abstraction for `timer_list` in this kernel, so the bench calls the C API
/// through `bindings` directly.
#[repr(transparent)]
struct BenchTimer(Opaque<bindings::timer_list>);

/// The callback of bench timers: nothing to do.
///
/// # Safety
///
/// Called by the timer core only, with the expired timer.
unsafe extern "C" fn bench_timer_fn(_t: *mut bindings::timer_list) {}

/// The current jiffies.
fn jiffies() -> u64 {
    // SAFETY: `jiffies` is a kernel global that is always valid to read; the volatile read
    // mirrors the C `READ_ONCE` semantics of `jiffies` (it is updated by the tick).
    unsafe { core::ptr::read_volatile(&raw const bindings::jiffies) as u64 }
}

/// `n` initialised `timer_list`s in one allocation, deleted synchronously when dropped.
///
/// # Invariants
///
/// Every element of `timers` was initialised by `timer_init_key`, and the buffer is never
/// resized, so the timers never move.
struct TimerArray {
    timers: KVVec<BenchTimer>,
}

impl TimerArray {
    /// The buffer is made as an instance's storage is ([`KernelStorage`]): ENOMEM at once beyond
    /// the memory available, EINTR on a signal between two chunks; so are its timers
    /// initialised, [`CHUNK`] at a time.
    fn new(n: usize) -> Result<Self> {
        let mut timers =
            KernelStorage::alloc(n, |_| BenchTimer(Opaque::uninit())).map_err(errno)?;
        let key = kernel::static_lock_class!();
        let mut ready = 0;
        for t in timers.iter() {
            if interrupted(ready) {
                break;
            }
            // SAFETY: `t.0.get()` points to a `timer_list` inside the buffer, which is never
            // moved or resized (type invariant; `truncate` below only drops the timers not
            // initialised, and moves none) and outlives the timer (see `Drop`).
            unsafe {
                bindings::timer_init_key(
                    t.0.get(),
                    Some(bench_timer_fn),
                    0,
                    c"timerwheel_bench".as_char_ptr(),
                    key.as_ptr(),
                )
            };
            ready += 1;
        }
        if ready < n {
            // The timers not initialised go before the array is made; dropping it shuts down
            // the others.
            timers.truncate(ready);
            // INVARIANT: every timer left was initialised just above.
            drop(TimerArray { timers });
            return Err(EINTR);
        }
        // INVARIANT: every timer was initialised just above.
        Ok(TimerArray { timers })
    }

    /// `mod_timer` of timer `i`, `ticks` jiffies from now.
    fn arm(&self, i: usize, ticks: u64) {
        // SAFETY: timer `i` is initialised (type invariant); `mod_timer` may be called on any
        // initialised timer, pending or not.
        unsafe { bindings::mod_timer(self.timers[i].0.get(), (jiffies() + ticks) as usize) };
    }

    /// `timer_delete` of timer `i`.
    fn disarm(&self, i: usize) {
        // SAFETY: timer `i` is initialised (type invariant).
        unsafe { bindings::timer_delete(self.timers[i].0.get()) };
    }
}

impl Drop for TimerArray {
    fn drop(&mut self) {
        for (i, t) in self.timers.iter().enumerate() {
            if i % CHUNK as usize == 0 {
                cond_resched();
            }
            // SAFETY: `t` is initialised (type invariant). After `timer_shutdown_sync` it is
            // neither pending nor running, so its memory may be freed.
            unsafe { bindings::timer_shutdown_sync(t.0.get()) };
        }
    }
}

/// Offers the CPU and checks for a pending signal every so many timers created.
fn interrupted(i: usize) -> bool {
    i % CHUNK as usize == CHUNK as usize - 1 && between_holds()
}

/// The Linux timer wheel: `n` pending `timer_list`s, one more reset `iterations` times.
pub(crate) fn bench_timer_list(b: &tw_bench) -> Result<u64> {
    let n = b.n as usize;
    let timers = TimerArray::new(n + 1)?;
    let mut rng = Rng::new(b.seed);
    for i in 0..n {
        if interrupted(i) {
            return Err(EINTR);
        }
        timers.arm(i, rng.within(b.min_ticks / 2, b.min_ticks / 2));
    }
    timers.arm(n, rng.within(b.min_ticks, b.spread));
    let in_place = b.kind == TW_BENCH_TIMER_LIST_MOD;
    timed_in_chunks(b.iterations, || {
        if !in_place {
            timers.disarm(n);
        }
        timers.arm(n, rng.within(b.min_ticks, b.spread));
    })
}

/// Runs `reset` `iterations` times, timed in chunks between which a pending signal ends the
/// loop (EINTR). Returns the time spent in the chunks.
fn timed_in_chunks(iterations: u64, mut reset: impl FnMut()) -> Result<u64> {
    let mut elapsed = 0;
    let mut left = iterations;
    while left > 0 {
        if between_holds() {
            return Err(EINTR);
        }
        let chunk = left.min(CHUNK);
        let start = Instant::<Monotonic>::now();
        for _ in 0..chunk {
            reset();
        }
        elapsed += start.elapsed().as_nanos() as u64;
        left -= chunk;
    }
    Ok(elapsed)
}

/// An hrtimer of the hrtimer bench. Never expected to fire.
#[pin_data]
struct BenchHrTimer {
    #[pin]
    timer: HrTimer<Self>,
}

impl HrTimerCallback for BenchHrTimer {
    type Pointer<'a> = Arc<Self>;

    fn run(_this: ArcBorrow<'_, Self>, _ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        HrTimerRestart::NoRestart
    }
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for BenchHrTimer {
        mode: RelativeMode<Monotonic>, field: self.timer
    }
}

/// A bench tick in hrtimer terms: 1 ms.
fn bench_hr_delta(ticks: u64) -> Delta {
    // Lossless: ticks are at most TW_MAX_BENCH_TICKS (2^40 ms fits in i64 nanoseconds).
    Delta::from_millis(ticks as i64)
}

/// Linux's hrtimer: `n` pending hrtimers, one more cancelled and restarted `iterations` times.
pub(crate) fn bench_hrtimer(b: &tw_bench) -> Result<u64> {
    let n = b.n as usize;
    // Each timer is an `Arc` of its own (the data and a count), its handle a pointer: refused
    // at once beyond the memory available, and granted until all are made.
    let each = core::mem::size_of::<BenchHrTimer>() + 3 * core::mem::size_of::<usize>();
    let grant = reserve(n.saturating_mul(each)).ok_or(ENOMEM)?;
    let mut rng = Rng::new(b.seed);
    let mut pending = Chunked(KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT | __GFP_NOWARN)?);
    for i in 0..n {
        if interrupted(i) {
            return Err(EINTR);
        }
        let t = Arc::pin_init(
            pin_init!(BenchHrTimer { timer <- HrTimer::new() }),
            GFP_KERNEL_ACCOUNT,
        )?;
        let d = bench_hr_delta(rng.within(b.min_ticks / 2, b.min_ticks / 2));
        // Within the capacity reserved above: no allocation.
        pending.0.push(t.start(d), GFP_KERNEL_ACCOUNT)?;
    }
    drop(grant);
    let extra = Arc::pin_init(
        pin_init!(BenchHrTimer { timer <- HrTimer::new() }),
        GFP_KERNEL,
    )?;
    let mut handle = Some(
        extra
            .clone()
            .start(bench_hr_delta(rng.within(b.min_ticks, b.spread))),
    );
    let ns = timed_in_chunks(b.iterations, || {
        // Dropping the handle cancels the timer: hrtimer_cancel, then hrtimer_start.
        drop(handle.take());
        handle = Some(
            extra
                .clone()
                .start(bench_hr_delta(rng.within(b.min_ticks, b.spread))),
        );
    })?;
    // Dropping the handles cancels every timer before its memory goes.
    drop(handle);
    drop(pending);
    Ok(ns)
}

/// A vector of up to millions of timer handles, dropped (each timer cancelled) a chunk at a
/// time, with the CPU offered in between, on every way out of the bench.
struct Chunked<T>(KVVec<T>);

impl<T> Drop for Chunked<T> {
    fn drop(&mut self) {
        while !self.0.is_empty() {
            self.0.truncate(self.0.len().saturating_sub(CHUNK as usize));
            cond_resched();
        }
    }
}
