// SPDX-License-Identifier: GPL-2.0

//! Linux's own timers, measured the same way as the instance benches: the Figure 9 baselines.
//!
//! `TW_BENCH_TIMER_LIST` resets one `timer_list` (`timer_delete` + `mod_timer`) behind `n`
//! pending ones, `TW_BENCH_TIMER_LIST_MOD` the same through `mod_timer` alone (Linux's reset in
//! place: a pending timer is moved, or left where it is when it lands in the same bucket), and
//! `TW_BENCH_HRTIMER` cancels and restarts one hrtimer behind `n` pending ones. The loops run in
//! chunks between which a pending signal ends the bench (EINTR); every timer is cancelled
//! before its memory goes.
//!
//! Cancelling up to 2^22 timers takes about as long as arming them did (a minute and more on the
//! debug kernel under emulation). A bench takes its timers down itself, a chunk at a time, when it
//! ends as it should; on a signal (during the bench or the teardown) or an error, what is left
//! goes to the module's own workqueue ([`Teardowns`]), so that the bench returns at once,
//! and the next bench waits, interruptibly, until no teardown is left ([`wait_for_teardowns`]),
//! so that none runs beside its measurement. Unloading the module waits for them.

use kernel::{
    alloc::{
        flags::GFP_KERNEL,
        KVVec, //
    },
    bindings, impl_has_hr_timer, new_condvar, new_mutex,
    prelude::*,
    sync::{
        Arc,
        ArcBorrow,
        CondVar,
        Mutex,
        SetOnce, //
    },
    time::{
        delay::fsleep,
        hrtimer::{
            ArcHrTimerHandle,
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
    workqueue::Queue,
};

use crate::{
    instance::{
        between_holds,
        cond_resched, //
    },
    params::{
        reserve,
        user_sized, //
    },
    uapi::*,
    wheel::rng::Rng,
};

/// What the teardowns share: the count of those queued and not yet done, and the condition a
/// bench waits on, interruptibly, until it is 0.
#[pin_data]
struct Pending {
    #[pin]
    count: Mutex<u64>,
    #[pin]
    done: CondVar,
}

/// The module's workqueue for taking the baselines' timers down, and the count of teardowns on
/// it: made at load, before the device; gone at unload, after the device and every teardown.
/// The kernel crate offers the system's workqueues, not one of a module's own, whose
/// destruction waits for its work: so `alloc_workqueue` and `destroy_workqueue` are called
/// through `bindings`.
pub(crate) struct Teardowns {
    queue: *mut bindings::workqueue_struct,
    pending: Pin<KBox<Pending>>,
}

// SAFETY: a workqueue may be used and destroyed from any thread; `Pending` is `Send` and `Sync`.
unsafe impl Send for Teardowns {}
// SAFETY: as above; `Teardowns` has no method that takes `&self`.
unsafe impl Sync for Teardowns {}

/// The benches' way to the module's [`Teardowns`]: its queue and count, by address.
struct Shared {
    queue: *mut bindings::workqueue_struct,
    pending: *const Pending,
}

// SAFETY: a workqueue may be used from any thread, and `Pending` is a mutex and a condition
// variable, which are shared between threads; both outlive every use (see `shared`).
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// Set at load, before the device is registered.
static SHARED: SetOnce<Shared> = SetOnce::new();

/// The queue and the count of the module's [`Teardowns`].
fn shared() -> Option<(&'static Queue, &'static Pending)> {
    let s = SHARED.as_ref()?;
    // SAFETY: both were made by `Teardowns::new` and stay valid until it drops, at unload: after
    // the device is gone, so no bench runs, and after the queue has run every teardown on it.
    Some(unsafe { (Queue::from_raw(s.queue), &*s.pending) })
}

impl Teardowns {
    /// Makes the queue and the count, and publishes them to the benches; ENOMEM if they cannot
    /// be made.
    pub(crate) fn new() -> Result<Self> {
        let pending = KBox::pin_init(
            pin_init!(Pending {
                count <- new_mutex!(0),
                done <- new_condvar!("timerwheel_teardowns"),
            }),
            GFP_KERNEL,
        )?;
        // SAFETY: the format is a NUL-terminated string without conversions, and no variadic
        // argument follows; unbound, so that a teardown runs on any CPU, one at a time.
        let queue = unsafe {
            bindings::alloc_workqueue_noprof(
                c"timerwheel_teardown".as_char_ptr(),
                bindings::wq_flags_WQ_UNBOUND,
                1,
            )
        };
        if queue.is_null() {
            return Err(ENOMEM);
        }
        let t = Teardowns { queue, pending };
        let published = SHARED.populate(Shared {
            queue,
            pending: &*t.pending,
        });
        // Loaded once per module instance: nothing was published before.
        if !published {
            return Err(EBUSY);
        }
        Ok(t)
    }
}

impl Drop for Teardowns {
    fn drop(&mut self) {
        // The teardowns are waited for in short sleeps, not in the one uninterruptible wait of
        // `destroy_workqueue`'s flush: one of 2^22 timers takes half a minute and more on the
        // debug kernel under emulation, longer than the hung-task detector lets a task sleep
        // uninterruptibly without being switched out, and each sleep here is a switch.
        while *self.pending.count.lock() > 0 {
            fsleep(Delta::from_millis(100));
        }
        // SAFETY: made by `new`, destroyed once, once every teardown on it has run; nothing
        // queues on it any more: the module is going, and no file of the device is open while
        // it can be unloaded.
        unsafe { bindings::destroy_workqueue(self.queue) };
    }
}

/// Waits until no teardown of an earlier bench is left, so that none runs beside a
/// measurement. A signal ends the wait with ERESTARTSYS: the bench has done nothing yet, so
/// that a handler installed with SA_RESTART restarts it, as every other call waiting to begin.
pub(crate) fn wait_for_teardowns() -> Result {
    let Some((_, pending)) = shared() else {
        return Ok(());
    };
    let mut count = pending.count.lock();
    while *count > 0 {
        if pending.done.wait_interruptible(&mut count) {
            return Err(ERESTARTSYS);
        }
    }
    Ok(())
}

/// Timers that can be taken down a chunk at a time.
trait TakeDown {
    /// Takes down up to [`CHUNK`] timers; `true` once none is left.
    fn take_down_some(&mut self) -> bool;
}

/// Timers of a bench: [`Deferred::take_down`] takes them down while no signal is pending, and
/// a drop leaves what is left to the teardown queue, so that the bench returns without waiting
/// for it (inline, should the work item not be allocated).
struct Deferred<T: Send + 'static> {
    timers: Option<T>,
}

/// A teardown under way: dropping it drops the timers, then counts the teardown done.
struct TakenDown<T>(Option<T>);

impl<T> Drop for TakenDown<T> {
    fn drop(&mut self) {
        drop(self.0.take());
        if let Some((_, pending)) = shared() {
            let mut count = pending.count.lock();
            *count -= 1;
            if *count == 0 {
                pending.done.notify_all();
            }
        }
    }
}

impl<T: Send + 'static> Deferred<T> {
    fn new(timers: T) -> Self {
        Deferred {
            timers: Some(timers),
        }
    }
}

impl<T: TakeDown + Send + 'static> Deferred<T> {
    /// Takes the timers down here, a chunk at a time with the CPU offered in between, until a
    /// signal is pending; what is left then goes to the teardown queue.
    fn take_down(mut self) {
        while !self.take_down_some() {
            if between_holds() {
                return;
            }
        }
        // Nothing is left to queue.
        drop(self.timers.take());
    }
}

impl<T: Send + 'static> core::ops::Deref for Deferred<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // Only `take_down` and `drop` take the timers out, consuming `self`.
        self.timers.as_ref().unwrap_or_else(|| unreachable!())
    }
}

impl<T: Send + 'static> core::ops::DerefMut for Deferred<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.timers.as_mut().unwrap_or_else(|| unreachable!())
    }
}

impl<T: Send + 'static> Drop for Deferred<T> {
    fn drop(&mut self) {
        let Some(timers) = self.timers.take() else {
            return;
        };
        let Some((queue, pending)) = shared() else {
            drop(timers);
            return;
        };
        *pending.count.lock() += 1;
        let doomed = TakenDown(Some(timers));
        // Should the work item not be allocated, the closure goes with `doomed` in it, and the
        // timers with it, here.
        let _ = queue.try_spawn(GFP_KERNEL, move || drop(doomed));
    }
}

/// Resets timed between two offers of the CPU and looks at pending signals.
const CHUNK: u64 = 4096;

/// Timers, or their handles, are kept, made and taken down in pieces of this many, with the CPU
/// offered and pending signals looked at between two pieces ([`Pieces`]): no allocation of a
/// bench is large but the pieces' index (made once), and a piece is a few milliseconds' work in
/// an emulated debug guest, where each new timer's allocation saves a stack trace (KASAN).
const PIECE: usize = 128;

/// Up to millions of timers, or their handles, in pieces of [`PIECE`] allocated one by one, so
/// that a bench answers a signal between two of them (a single buffer of 2^22 `timer_list`s is
/// hundreds of megabytes, whose allocation cannot be interrupted). Every piece but the last is
/// full, and a piece is never reallocated: its elements never move. The index of the pieces is
/// allocated once, and may fall back to vmalloc as the pieces may: at n = 2^22 it is 768 KiB,
/// which kmalloc alone would need contiguous (order 8) and could fail to find with memory to
/// spare.
struct Pieces<T> {
    pieces: KVVec<KVVec<T>>,
}

impl<T> Pieces<T> {
    /// Room for the pieces of `n` elements; the pieces come as they are filled.
    fn new(n: usize) -> Result<Self> {
        Ok(Pieces {
            pieces: KVVec::with_capacity(n.div_ceil(PIECE), user_sized())?,
        })
    }

    /// Appends `v`, in a new piece when the last one is full.
    fn push(&mut self, v: T) -> Result {
        match self.pieces.last_mut() {
            Some(piece) if piece.len() < PIECE => {
                // Within the piece's capacity: no allocation.
                piece.push(v, user_sized())?;
            }
            _ => {
                let mut piece = KVVec::with_capacity(PIECE, user_sized())?;
                piece.push(v, user_sized())?;
                // Within the room made by `new`: no allocation.
                self.pieces.push(piece, user_sized())?;
            }
        }
        Ok(())
    }

    /// Element `i`.
    fn get(&self, i: usize) -> &T {
        &self.pieces[i / PIECE][i % PIECE]
    }

    /// Takes the last piece out; `None` once none is left.
    fn pop(&mut self) -> Option<KVVec<T>> {
        self.pieces.pop()
    }

    fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }
}

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

/// `n` initialised `timer_list`s in [`Pieces`], shut down synchronously when dropped or taken
/// down ([`TakeDown`]).
///
/// # Invariants
///
/// Every timer in `timers` was initialised by `timer_init_key`; the timers never move
/// ([`Pieces`]).
struct TimerArray {
    pieces: Pieces<BenchTimer>,
}

// SAFETY: the timers are only ever armed, cancelled and shut down through the timer API, which
// may be called from any thread; the buffers go with the array.
unsafe impl Send for TimerArray {}

impl TimerArray {
    /// ENOMEM at once beyond the memory available ([`reserve`]), as for an instance's storage;
    /// then the timers are allocated and initialised a piece at a time, and a signal between
    /// two pieces ends it (EINTR).
    fn new(n: usize) -> Result<Deferred<Self>> {
        let grant = reserve(n.saturating_mul(core::mem::size_of::<BenchTimer>())).ok_or(ENOMEM)?;
        let mut array = Deferred::new(TimerArray {
            pieces: Pieces::new(n)?,
        });
        let key = kernel::static_lock_class!();
        for i in 0..n {
            if interrupted(i) {
                // Dropping the array shuts down the timers made.
                return Err(EINTR);
            }
            array.pieces.push(BenchTimer(Opaque::uninit()))?;
            let t = array.pieces.get(i);
            // SAFETY: `t.0.get()` points to a `timer_list` in a piece, where it never moves
            // ([`Pieces`]), and which outlives the timer (see `Drop`).
            unsafe {
                bindings::timer_init_key(
                    t.0.get(),
                    Some(bench_timer_fn),
                    0,
                    c"timerwheel_bench".as_char_ptr(),
                    key.as_ptr(),
                )
            };
            // INVARIANT: the timer pushed is initialised before anything can drop it.
        }
        drop(grant);
        Ok(array)
    }

    /// Timer `i`.
    fn timer(&self, i: usize) -> Timer<'_> {
        // INVARIANT: timer `i` is initialised (type invariant), and stays so while the array is
        // borrowed.
        Timer(self.pieces.get(i))
    }
}

/// A timer of a [`TimerArray`], borrowed from it.
///
/// # Invariants
///
/// The timer is initialised and stays so while borrowed.
#[derive(Clone, Copy)]
struct Timer<'a>(&'a BenchTimer);

impl Timer<'_> {
    /// `mod_timer`, `ticks` jiffies from now.
    fn arm(self, ticks: u64) {
        // SAFETY: the timer is initialised (type invariant); `mod_timer` may be called on any
        // initialised timer, pending or not.
        unsafe { bindings::mod_timer(self.0 .0.get(), (jiffies() + ticks) as usize) };
    }

    /// `timer_delete`.
    fn disarm(self) {
        // SAFETY: the timer is initialised (type invariant).
        unsafe { bindings::timer_delete(self.0 .0.get()) };
    }
}

impl TakeDown for TimerArray {
    fn take_down_some(&mut self) -> bool {
        if let Some(piece) = self.pieces.pop() {
            for t in piece.iter() {
                // SAFETY: `t` is initialised (type invariant). After `timer_shutdown_sync` it is
                // neither pending nor running, so its memory may be freed.
                unsafe { bindings::timer_shutdown_sync(t.0.get()) };
            }
            // INVARIANT: only the piece's timers go, shut down; the others stay initialised.
        }
        self.pieces.is_empty()
    }
}

impl Drop for TimerArray {
    fn drop(&mut self) {
        while !self.take_down_some() {
            cond_resched();
        }
    }
}

/// Offers the CPU and checks for a pending signal every [`PIECE`] timers made or armed.
fn interrupted(i: usize) -> bool {
    i % PIECE == PIECE - 1 && between_holds()
}

/// The timer_list bench made and ready: `n` pending `timer_list`s and one more, which
/// [`TimerListBench::resets`] resets; a bench of its own ([`LinuxBench::run`]) or one half of
/// a pair (`TW_IOC_BENCH_PAIR`). Dropped, its timers go to the teardown queue.
pub(crate) struct TimerListBench {
    timers: Deferred<TimerArray>,
    rng: Rng,
    /// The index of the reset timer: `n`.
    reset: usize,
    in_place: bool,
    min_ticks: u64,
    spread: u64,
}

impl TimerListBench {
    /// Makes and arms the timers of `b` (TW_BENCH_TIMER_LIST or TW_BENCH_TIMER_LIST_MOD).
    pub(crate) fn new(b: &tw_bench) -> Result<Self> {
        let n = b.n as usize;
        let timers = TimerArray::new(n + 1)?;
        let mut rng = Rng::new(b.seed);
        for i in 0..n {
            if interrupted(i) {
                return Err(EINTR);
            }
            timers
                .timer(i)
                .arm(rng.within(b.min_ticks / 2, b.min_ticks / 2));
        }
        timers.timer(n).arm(rng.within(b.min_ticks, b.spread));
        Ok(TimerListBench {
            timers,
            rng,
            reset: n,
            in_place: b.kind == TW_BENCH_TIMER_LIST_MOD,
            min_ticks: b.min_ticks,
            spread: b.spread,
        })
    }

    /// `k` resets of the reset timer, timed: their time.
    pub(crate) fn resets(&mut self, k: u64) -> Result<u64> {
        let Self {
            timers,
            rng,
            reset,
            in_place,
            min_ticks,
            spread,
        } = self;
        // Looked up once: the timed loop is `mod_timer` (after `timer_delete`) and nothing else.
        let timer = timers.timer(*reset);
        timed_in_chunks(k, || {
            if !*in_place {
                timer.disarm();
            }
            timer.arm(rng.within(*min_ticks, *spread));
        })
    }

    /// Takes the timers down here, until a signal is pending (see [`Deferred::take_down`]).
    pub(crate) fn take_down(self) {
        self.timers.take_down();
    }
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

/// The hrtimer bench made and ready: `n` pending hrtimers and one more, which
/// [`HrTimerBench::resets`] cancels and starts again; a bench of its own ([`LinuxBench::run`]) or
/// one half of a pair. Dropped, the pending timers go to the teardown queue.
pub(crate) struct HrTimerBench {
    pending: Deferred<Chunked<ArcHrTimerHandle<BenchHrTimer>>>,
    extra: Arc<BenchHrTimer>,
    /// The reset timer's handle: dropping it cancels the timer.
    handle: Option<ArcHrTimerHandle<BenchHrTimer>>,
    rng: Rng,
    min_ticks: u64,
    spread: u64,
}

impl HrTimerBench {
    /// Makes and starts the hrtimers of `b` (TW_BENCH_HRTIMER).
    pub(crate) fn new(b: &tw_bench) -> Result<Self> {
        let n = b.n as usize;
        // Each timer is an `Arc` of its own (the data and a count), its handle a pointer:
        // refused at once beyond the memory available, and granted until all are made.
        let each = core::mem::size_of::<BenchHrTimer>() + 3 * core::mem::size_of::<usize>();
        let grant = reserve(n.saturating_mul(each)).ok_or(ENOMEM)?;
        let mut rng = Rng::new(b.seed);
        let mut pending = Deferred::new(Chunked(Pieces::new(n)?));
        for i in 0..n {
            if interrupted(i) {
                return Err(EINTR);
            }
            let t = Arc::pin_init(
                pin_init!(BenchHrTimer { timer <- HrTimer::new() }),
                user_sized(),
            )?;
            let d = bench_hr_delta(rng.within(b.min_ticks / 2, b.min_ticks / 2));
            pending.0.push(t.start(d))?;
        }
        drop(grant);
        let extra = Arc::pin_init(
            pin_init!(BenchHrTimer { timer <- HrTimer::new() }),
            GFP_KERNEL,
        )?;
        let handle = Some(
            extra
                .clone()
                .start(bench_hr_delta(rng.within(b.min_ticks, b.spread))),
        );
        Ok(HrTimerBench {
            pending,
            extra,
            handle,
            rng,
            min_ticks: b.min_ticks,
            spread: b.spread,
        })
    }

    /// `k` resets of the reset timer (`hrtimer_cancel`, then `hrtimer_start`), timed: their
    /// time.
    pub(crate) fn resets(&mut self, k: u64) -> Result<u64> {
        let Self {
            extra,
            handle,
            rng,
            min_ticks,
            spread,
            ..
        } = self;
        timed_in_chunks(k, || {
            // Dropping the handle cancels the timer.
            drop(handle.take());
            *handle = Some(
                extra
                    .clone()
                    .start(bench_hr_delta(rng.within(*min_ticks, *spread))),
            );
        })
    }

    /// Cancels the reset timer, then takes the pending ones down here, until a signal is
    /// pending (see [`Deferred::take_down`]).
    pub(crate) fn take_down(mut self) {
        drop(self.handle.take());
        self.pending.take_down();
    }
}

/// A bench of Linux's timers, made and ready: a timer_list bench (`n` pending `timer_list`s,
/// one more reset) or an hrtimer bench (`n` pending hrtimers, one more cancelled and started
/// again); a `TW_IOC_BENCH` of its own ([`LinuxBench::run`]) or Linux's half of a
/// `TW_IOC_BENCH_PAIR`.
pub(crate) enum LinuxBench {
    TimerList(TimerListBench),
    HrTimer(HrTimerBench),
}

impl LinuxBench {
    /// Makes the bench of `b`: TW_BENCH_TIMER_LIST, TW_BENCH_TIMER_LIST_MOD or
    /// TW_BENCH_HRTIMER (EINVAL for another kind).
    pub(crate) fn new(b: &tw_bench) -> Result<Self> {
        match b.kind {
            TW_BENCH_TIMER_LIST | TW_BENCH_TIMER_LIST_MOD => {
                Ok(Self::TimerList(TimerListBench::new(b)?))
            }
            TW_BENCH_HRTIMER => Ok(Self::HrTimer(HrTimerBench::new(b)?)),
            _ => Err(EINVAL),
        }
    }

    /// The bench of `b` on its own: made, `b.iterations` resets timed, taken down; their time.
    pub(crate) fn run(b: &tw_bench) -> Result<u64> {
        let mut bench = Self::new(b)?;
        let ns = bench.resets(b.iterations)?;
        bench.take_down();
        Ok(ns)
    }

    /// `k` resets, timed: their time.
    pub(crate) fn resets(&mut self, k: u64) -> Result<u64> {
        match self {
            Self::TimerList(t) => t.resets(k),
            Self::HrTimer(h) => h.resets(k),
        }
    }

    /// Takes the timers down here, until a signal is pending.
    pub(crate) fn take_down(self) {
        match self {
            Self::TimerList(t) => t.take_down(),
            Self::HrTimer(h) => h.take_down(),
        }
    }
}

/// Up to millions of timer handles, dropped (each timer cancelled) a piece at a time, with
/// the CPU offered in between, on every way out of the bench.
struct Chunked<T>(Pieces<T>);

impl<T> TakeDown for Chunked<T> {
    fn take_down_some(&mut self) -> bool {
        drop(self.0.pop());
        self.0.is_empty()
    }
}

impl<T> Drop for Chunked<T> {
    fn drop(&mut self) {
        while !self.take_down_some() {
            cond_resched();
        }
    }
}
