// SPDX-License-Identifier: GPL-2.0

//! rust_timerwheel: the BSD callout facility of Varghese & Lauck on `/dev/timerwheel`.
//!
//! The algorithms live in `wheel/` (compiled in below as [`wheel`], free of kernel types); this
//! file is the kernel glue, and the only place with `unsafe`. The uapi is
//! `include/uapi/timerwheel.h`; the constants and structures below mirror it one to one.
//!
//! # Design
//!
//! ```text
//!   open()  ──► Instance ──► Arc<Core> ─┬─ state: SpinLockIrq<State> ─ Callouts (a wheel scheme)
//!                 │                     │                              ├ Ring of expiry records
//!                 │                     │                              └ statistics
//!                 │                     ├─ timer: HrTimer (real clock, soft mode)
//!                 └ clock: Mutex<handle>└─ readable: CondVar, read_lock: Mutex
//! ```
//!
//! Every open file owns one [`Instance`]: one scheme, one clock, one ring. Nothing is shared
//! between files, so tests and benchmarks cannot disturb each other.
//!
//! - *Configuration* (`TW_IOC_CONFIGURE`, or the defaults on first use) allocates all storage
//!   (the scheme's fixed-capacity arena, the side tables of the callout layer, the ring) in
//!   process context, outside any spinlock, and installs it; nothing allocates afterwards.
//! - *The tick* is either a periodic hrtimer (real clock) or `TW_IOC_ADVANCE` (manual clock).
//!   Each tick runs `PER_TICK_BOOKKEEPING`, then expiry processing: at most `budget` expired
//!   callouts become records in the ring; the rest stay queued, in order, for the next tick and
//!   are counted as carried. A full ring drops records and counts them.
//! - *Locking*: the hrtimer runs in **soft** mode (softirq context), not hard-irq mode: a
//!   scheme's bookkeeping can be O(n) per tick (scheme 1) or per start (scheme 2), and such
//!   work must not run with hard interrupts masked on every tick. The state sits under a
//!   `SpinLockIrq`, which is also correct from softirq context; ioctls hold it only for a bounded
//!   chunk of work, and never allocate, sleep or touch user memory under it.
//! - *Teardown*: closing the file drops the instance; the clock handle goes first, and dropping
//!   it cancels the hrtimer and waits for a running tick; then the last `Arc<Core>` frees the
//!   storage. Outstanding callouts vanish with it and never fire.

use core::mem::size_of;
use kernel::{
    alloc::{
        flags::GFP_KERNEL_ACCOUNT,
        KVVec, //
    },
    bindings,
    fs::{
        file::flags::O_NONBLOCK,
        File,
        Kiocb, //
    },
    impl_has_hr_timer,
    ioctl::{
        _IOC_SIZE,
        _IOR,
        _IOW,
        _IOWR, //
    },
    iov::IovIterDest,
    miscdevice::{
        MiscDevice,
        MiscDeviceOptions,
        MiscDeviceRegistration, //
    },
    new_condvar, new_mutex, new_spinlock_irq,
    prelude::*,
    sync::{
        atomic::{
            ordering,
            Atomic, //
        },
        Arc,
        ArcBorrow,
        CondVar,
        Mutex,
        SpinLockIrq, //
    },
    time::{
        hrtimer::{
            ArcHrTimerHandle,
            HrTimer,
            HrTimerCallback,
            HrTimerCallbackContext,
            HrTimerPointer,
            HrTimerRestart,
            RelativeMode,
            RelativeSoftMode, //
        },
        Delta,
        Instant,
        Monotonic, //
    },
    transmute::{
        AsBytes,
        FromBytes, //
    },
    types::Opaque,
    uaccess::{
        UserPtr,
        UserSlice,
        UserSliceReader,
        UserSliceWriter, //
    },
};

#[path = "wheel/src/wheel/mod.rs"]
pub mod wheel;

use wheel::{
    callout::{
        Callouts,
        Fired,
        Origin, //
    },
    Handle,
    Scheme,
    SchemeKind, //
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
            description: "Period of the module's heartbeat hrtimer in microseconds (100..=1000000)",
        },
    },
}

// ---------------------------------------------------------------------------------------------
// The uapi (include/uapi/timerwheel.h).

const TW_VERSION: u32 = 1;
const TW_IOC_MAGIC: u32 = 0xB9;

const TW_CLOCK_REAL: u32 = 0;
const TW_CLOCK_MANUAL: u32 = 1;

const TW_DEFAULT_SCHEME: u32 = 6;
const TW_DEFAULT_CAPACITY: u32 = 65536;
const TW_MAX_CAPACITY: u32 = 1 << 22;
/// Scheme 1 walks every timer on every tick: its capacity is kept to what a tick can afford.
const TW_MAX_CAPACITY_SCHEME1: u32 = 65536;
const TW_DEFAULT_SLOTS: u32 = 256;
const TW_MAX_SLOTS: u32 = 1 << 24;
const TW_DEFAULT_TICK_NS: u64 = 1_000_000;
const TW_MIN_TICK_NS: u64 = 100_000;
const TW_MAX_TICK_NS: u64 = 1_000_000_000;
const TW_DEFAULT_RING: u32 = 4096;
const TW_MAX_RING: u32 = 1 << 20;
const TW_DEFAULT_BUDGET: u32 = 1024;
const TW_MAX_BATCH: u32 = 65536;
const TW_MAX_ADVANCE: u64 = 1 << 20;
const TW_LATENESS_BUCKETS: usize = 16;

const TW_OP_SET: u32 = 1;
const TW_OP_UNSET: u32 = 2;
const TW_OP_TIMEOUT: u32 = 3;
const TW_OP_UNTIMEOUT: u32 = 4;
const TW_OP_RESET: u32 = 5;

const TW_ORIGIN_CALLOUT: u32 = 1;
const TW_ORIGIN_LEGACY: u32 = 2;

const TW_IOC_INFO: u32 = _IOR::<TwInfo>(TW_IOC_MAGIC, 0x00);
const TW_IOC_CONFIGURE: u32 = _IOW::<TwConfig>(TW_IOC_MAGIC, 0x01);
const TW_IOC_SETCALLOUT: u32 = _IOWR::<TwSet>(TW_IOC_MAGIC, 0x02);
const TW_IOC_UNSETCALLOUT: u32 = _IOW::<u64>(TW_IOC_MAGIC, 0x03);
const TW_IOC_TIMEOUT: u32 = _IOWR::<TwTimeout>(TW_IOC_MAGIC, 0x04);
const TW_IOC_UNTIMEOUT: u32 = _IOW::<TwUntimeout>(TW_IOC_MAGIC, 0x05);
const TW_IOC_ADVANCE: u32 = _IOW::<u64>(TW_IOC_MAGIC, 0x06);
const TW_IOC_BATCH: u32 = _IOW::<TwBatch>(TW_IOC_MAGIC, 0x07);
const TW_IOC_STATS: u32 = _IOR::<TwStats>(TW_IOC_MAGIC, 0x08);
const TW_IOC_BENCH: u32 = _IOWR::<TwBench>(TW_IOC_MAGIC, 0x09);

const TW_BENCH_SETCALLOUT: u32 = 1;
const TW_BENCH_TIMEOUT: u32 = 2;
const TW_BENCH_TIMER_LIST: u32 = 3;
const TW_BENCH_HRTIMER: u32 = 4;
const TW_BENCH_TICK: u32 = 5;
const TW_MAX_BENCH_ITERATIONS: u64 = 1 << 24;
const TW_MAX_BENCH_TICKS: u64 = 1 << 40;

/// `struct tw_info`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwInfo {
    version: u32,
    schemes: u32,
    tick_ns: u64,
    ticks: u64,
}

/// `struct tw_config`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwConfig {
    scheme: u32,
    clock: u32,
    capacity: u32,
    slots: u32,
    tick_ns: u64,
    start_tick: u64,
    ring: u32,
    budget: u32,
}

/// `struct tw_set`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwSet {
    ticks: u64,
    cookie: u64,
    handle: u64,
}

/// `struct tw_timeout`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwTimeout {
    func: u64,
    arg: u64,
    ticks: u64,
    handle: u64,
}

/// `struct tw_untimeout`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwUntimeout {
    func: u64,
    arg: u64,
}

/// `struct tw_op`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwOp {
    op: u32,
    result: i32,
    a: u64,
    b: u64,
    c: u64,
    handle: u64,
}

/// `struct tw_batch`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwBatch {
    ops: u64,
    count: u32,
    reserved: u32,
}

/// `struct tw_stats`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwStats {
    outstanding: u64,
    started: u64,
    stopped: u64,
    fired: u64,
    ticks: u64,
    now: u64,
    overruns: u64,
    carried: u64,
    queued: u64,
    ring_drops: u64,
    ring_used: u64,
    max_tick_work: u64,
    memory_bytes: u64,
    scheme: u64,
    lateness: [u64; TW_LATENESS_BUCKETS],
}

/// `struct tw_fired`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwFired {
    handle: u64,
    cookie: u64,
    arg: u64,
    deadline: u64,
    fired: u64,
    origin: u32,
    reserved: u32,
}

/// `struct tw_bench`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct TwBench {
    kind: u32,
    reserved: u32,
    n: u64,
    iterations: u64,
    min_ticks: u64,
    spread: u64,
    seed: u64,
    elapsed_ns: u64,
}

/// Marks uapi structures as plain bytes, after checking their size against the C header.
macro_rules! uapi_structs {
    ($($t:ty = $size:expr),* $(,)?) => {$(
        const _: () = assert!(size_of::<$t>() == $size, "uapi struct size differs from the C header");
        // SAFETY: `$t` is `repr(C)` and made only of fixed-width integers (and arrays of them),
        // ordered so that there is no padding (its size is the sum of its fields, asserted
        // above): every byte pattern is a valid value.
        unsafe impl FromBytes for $t {}
        // SAFETY: As above: no padding, so every byte of a value is initialised.
        unsafe impl AsBytes for $t {}
    )*};
}

uapi_structs! {
    TwInfo = 24,
    TwConfig = 40,
    TwSet = 24,
    TwTimeout = 32,
    TwUntimeout = 16,
    TwOp = 40,
    TwBatch = 16,
    TwStats = 8 * (14 + TW_LATENESS_BUCKETS),
    TwFired = 48,
    TwBench = 56,
}

/// The errno of a failed wheel operation, as documented in the uapi header.
fn errno(e: wheel::Error) -> Error {
    match e {
        wheel::Error::Full => ENOSPC,
        wheel::Error::Stale | wheel::Error::NotFound => ENOENT,
        wheel::Error::Interval | wheel::Error::Config => EINVAL,
        wheel::Error::Range => ERANGE,
        wheel::Error::NoMemory => ENOMEM,
    }
}

// ---------------------------------------------------------------------------------------------
// Storage for the wheel: the kernel's allocator.

/// [`wheel::Storage`] in kernel memory: `kvmalloc`, charged to the caller's memory cgroup
/// (the allocations are sized by a user process).
struct KernelStorage;

impl wheel::Storage for KernelStorage {
    type Buf<T> = KVVec<T>;

    fn alloc<T>(
        len: usize,
        mut init: impl FnMut(usize) -> T,
    ) -> core::result::Result<KVVec<T>, wheel::Error> {
        let mut v =
            KVVec::with_capacity(len, GFP_KERNEL_ACCOUNT).map_err(|_| wheel::Error::NoMemory)?;
        for i in 0..len {
            // Within the capacity reserved above: this does not allocate.
            v.push(init(i), GFP_KERNEL_ACCOUNT)
                .map_err(|_| wheel::Error::NoMemory)?;
        }
        Ok(v)
    }
}

// ---------------------------------------------------------------------------------------------
// The heartbeat: the module's own periodic tick.

/// The module's heartbeat: a periodic hrtimer counting ticks since load into
/// [`HEARTBEAT_TICKS`], the liveness signal of the tick machinery that `TW_IOC_INFO` reports.
#[pin_data]
struct Heartbeat {
    #[pin]
    timer: HrTimer<Self>,
    period: Delta,
}

/// Heartbeat ticks since load. A static because file operations do not reach the module struct.
static HEARTBEAT_TICKS: Atomic<u64> = Atomic::new(0);

impl HrTimerCallback for Heartbeat {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, mut ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        // Periods missed while the callback was delayed count as ticks too.
        let n = ctx.forward_now(this.period);
        HEARTBEAT_TICKS.add(n, ordering::Relaxed);
        HrTimerRestart::Restart
    }
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Heartbeat {
        mode: RelativeSoftMode<Monotonic>, field: self.timer
    }
}

/// `tick_us` in nanoseconds, validated.
fn heartbeat_ns() -> Result<u64> {
    let us = u64::from(module_parameters::tick_us.value());
    let ns = us * 1000;
    if !(TW_MIN_TICK_NS..=TW_MAX_TICK_NS).contains(&ns) {
        pr_err!("tick_us={} is outside 100..=1000000\n", us);
        return Err(EINVAL);
    }
    Ok(ns)
}

/// A period in nanoseconds (at most [`TW_MAX_TICK_NS`]) as a [`Delta`].
fn delta_ns(ns: u64) -> Delta {
    // Lossless: callers pass at most TW_MAX_TICK_NS.
    Delta::from_nanos(ns as i64)
}

// ---------------------------------------------------------------------------------------------
// The module.

/// The loaded module.
///
/// Fields are dropped in declaration order: the device goes first, so that no file can be
/// opened once the heartbeat is cancelled (dropping its handle cancels it and waits for it).
#[pin_data]
struct TimerWheelModule {
    #[pin]
    miscdev: MiscDeviceRegistration<Instance>,
    _heartbeat: ArcHrTimerHandle<Heartbeat>,
}

impl kernel::InPlaceModule for TimerWheelModule {
    fn init(_module: &'static ThisModule) -> impl PinInit<Self, Error> {
        pin_init::pin_init_scope(|| {
            let period = delta_ns(heartbeat_ns()?);
            let beat = Arc::pin_init(
                pin_init!(Heartbeat {
                    timer <- HrTimer::new(),
                    period,
                }),
                GFP_KERNEL,
            )?;
            pr_info!(
                "loaded: /dev/timerwheel, heartbeat every {} us\n",
                period.as_micros_ceil()
            );
            Ok(try_pin_init!(Self {
                _heartbeat: beat.start(period),
                miscdev <- MiscDeviceRegistration::register(MiscDeviceOptions {
                    name: c"timerwheel",
                }),
            }))
        })
    }
}

// ---------------------------------------------------------------------------------------------
// An instance's parameters.

/// A validated `struct tw_config`, defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Params {
    kind: SchemeKind,
    clock: u32,
    wheel: wheel::Config,
    tick_ns: u64,
    ring: u32,
    budget: u32,
}

impl Params {
    /// Checks every field of a `struct tw_config`; EINVAL for anything out of range.
    fn from_uapi(c: &TwConfig) -> Result<Self> {
        let scheme = if c.scheme == 0 {
            TW_DEFAULT_SCHEME
        } else {
            c.scheme
        };
        let kind = SchemeKind::from_number(scheme).ok_or(EINVAL)?;
        let capacity = or_default(c.capacity, TW_DEFAULT_CAPACITY);
        let max_capacity = if kind == SchemeKind::Straightforward {
            TW_MAX_CAPACITY_SCHEME1
        } else {
            TW_MAX_CAPACITY
        };
        let slots = or_default(c.slots, TW_DEFAULT_SLOTS);
        let tick_ns = if c.tick_ns == 0 {
            TW_DEFAULT_TICK_NS
        } else {
            c.tick_ns
        };
        let ring = or_default(c.ring, TW_DEFAULT_RING);
        if !matches!(c.clock, TW_CLOCK_REAL | TW_CLOCK_MANUAL)
            || capacity > max_capacity
            || slots > TW_MAX_SLOTS
            || !(TW_MIN_TICK_NS..=TW_MAX_TICK_NS).contains(&tick_ns)
            || ring > TW_MAX_RING
        {
            return Err(EINVAL);
        }
        Ok(Params {
            kind,
            clock: c.clock,
            wheel: wheel::Config {
                capacity,
                slots,
                start: c.start_tick,
            },
            tick_ns,
            ring,
            budget: or_default(c.budget, TW_DEFAULT_BUDGET),
        })
    }
}

/// `v`, or `default` where `v` is 0.
fn or_default(v: u32, default: u32) -> u32 {
    if v == 0 {
        default
    } else {
        v
    }
}

// ---------------------------------------------------------------------------------------------
// The ring of expiry records.

/// A bounded FIFO of expiry records, allocated once.
///
/// # Invariants
///
/// `head < buf.len()` (or `buf` is empty) and `len <= buf.len()`.
struct Ring {
    buf: KVVec<TwFired>,
    head: usize,
    len: usize,
}

impl Ring {
    /// A ring that holds nothing (before configuration).
    fn empty() -> Self {
        Ring {
            buf: KVVec::new(),
            head: 0,
            len: 0,
        }
    }

    /// A ring of `capacity` records.
    fn new(capacity: u32) -> Result<Self> {
        let mut buf = KVVec::with_capacity(capacity as usize, GFP_KERNEL_ACCOUNT)?;
        buf.resize(capacity as usize, TwFired::default(), GFP_KERNEL_ACCOUNT)?;
        Ok(Ring {
            buf,
            head: 0,
            len: 0,
        })
    }

    /// Appends a record; `false` (and nothing stored) when the ring is full.
    fn push(&mut self, r: TwFired) -> bool {
        let cap = self.buf.len();
        if self.len == cap {
            return false;
        }
        let at = (self.head + self.len) % cap;
        self.buf[at] = r;
        self.len += 1;
        true
    }

    /// Copies up to `out.len()` of the oldest records into `out`, leaving them in the ring.
    fn peek(&self, out: &mut [TwFired]) -> usize {
        let n = out.len().min(self.len);
        for (i, slot) in out.iter_mut().take(n).enumerate() {
            *slot = self.buf[(self.head + i) % self.buf.len()];
        }
        n
    }

    /// Drops the `n` oldest records (`n <= len`).
    fn consume(&mut self, n: usize) {
        let n = n.min(self.len);
        if n > 0 {
            self.head = (self.head + n) % self.buf.len();
            self.len -= n;
        }
    }
}

/// The lateness histogram bucket of a callout processed `late` ticks after its deadline.
fn lateness_bucket(late: u64) -> usize {
    if late == 0 {
        0
    } else {
        ((u64::BITS - late.leading_zeros()) as usize).min(TW_LATENESS_BUCKETS - 1)
    }
}

/// Turns a fired callout processed on tick `now` into a ring record, or a counted drop.
/// Returns whether it was stored.
fn record(ring: &mut Ring, stats: &mut TwStats, fired: &Fired, now: u64) -> bool {
    let (cookie, arg, origin) = match fired.origin {
        Origin::Callout { cookie } => (cookie, 0, TW_ORIGIN_CALLOUT),
        Origin::Legacy { func, arg } => (func, arg, TW_ORIGIN_LEGACY),
    };
    let late = now.wrapping_sub(fired.deadline);
    stats.lateness[lateness_bucket(late)] += 1;
    stats.fired += 1;
    let stored = ring.push(TwFired {
        handle: fired.handle.to_raw(),
        cookie,
        arg,
        deadline: fired.deadline,
        fired: now,
        origin,
        reserved: 0,
    });
    if !stored {
        stats.ring_drops += 1;
    }
    stored
}

// ---------------------------------------------------------------------------------------------
// An instance's state, under its spinlock.

/// What configuration installs: the scheme with its callout layer, and the parameters.
struct Configured {
    callouts: Callouts<KernelStorage>,
    params: Params,
}

/// Everything the tick and the ioctls share.
struct State {
    /// `None` until configured.
    configured: Option<Configured>,
    ring: Ring,
    stats: TwStats,
}

impl State {
    fn new() -> Self {
        State {
            configured: None,
            ring: Ring::empty(),
            stats: TwStats::default(),
        }
    }

    /// The configured callouts; EINVAL before configuration (callers configure first).
    fn callouts(&mut self) -> Result<&mut Callouts<KernelStorage>> {
        self.configured
            .as_mut()
            .map(|c| &mut c.callouts)
            .ok_or(EINVAL)
    }

    /// The parameters configured; EINVAL before configuration.
    fn params(&self) -> Result<Params> {
        self.configured.as_ref().map(|c| c.params).ok_or(EINVAL)
    }

    fn set(&mut self, ticks: u64, cookie: u64) -> Result<Handle> {
        let h = self.callouts()?.setcallout(ticks, cookie).map_err(errno)?;
        self.stats.started += 1;
        Ok(h)
    }

    fn unset(&mut self, h: Handle) -> Result {
        self.callouts()?.unsetcallout(h).map_err(errno)?;
        self.stats.stopped += 1;
        Ok(())
    }

    fn timeout(&mut self, func: u64, arg: u64, ticks: u64) -> Result<Handle> {
        let h = self.callouts()?.timeout(func, arg, ticks).map_err(errno)?;
        self.stats.started += 1;
        Ok(h)
    }

    fn untimeout(&mut self, func: u64, arg: u64) -> Result {
        self.callouts()?.untimeout(func, arg).map_err(errno)?;
        self.stats.stopped += 1;
        Ok(())
    }

    /// One operation of a batch; its result goes into the operation.
    fn run_op(&mut self, op: &mut TwOp) {
        let r = match op.op {
            TW_OP_SET => self.set(op.a, op.b).map(|h| op.handle = h.to_raw()),
            TW_OP_UNSET => self.unset(Handle::from_raw(op.handle)),
            TW_OP_TIMEOUT => self
                .timeout(op.a, op.b, op.c)
                .map(|h| op.handle = h.to_raw()),
            TW_OP_UNTIMEOUT => self.untimeout(op.a, op.b),
            TW_OP_RESET => self
                .unset(Handle::from_raw(op.handle))
                .and_then(|()| self.set(op.a, op.b))
                .map(|h| op.handle = h.to_raw()),
            _ => Err(EINVAL),
        };
        op.result = match r {
            Ok(()) => 0,
            Err(e) => e.to_errno(),
        };
    }

    /// One tick: bookkeeping, then expiry processing within the budget. Returns whether a
    /// record was added to the ring (readers to wake).
    fn tick(&mut self) -> bool {
        let State {
            configured: Some(Configured { callouts, params }),
            ring,
            stats,
        } = self
        else {
            return false;
        };
        callouts.tick();
        stats.ticks += 1;
        let now = callouts.scheme().now();
        let mut done = 0u64;
        let mut delivered = false;
        while done < u64::from(params.budget) {
            let Some(fired) = callouts.pop_expired() else {
                break;
            };
            done += 1;
            delivered |= record(ring, stats, &fired, now);
        }
        stats.carried += callouts.scheme().queued() as u64;
        stats.max_tick_work = stats.max_tick_work.max(done);
        delivered
    }

    /// The statistics, with the gauges read now.
    fn snapshot(&self) -> TwStats {
        let mut s = self.stats;
        if let Some(Configured { callouts: c, .. }) = &self.configured {
            let scheme = c.scheme();
            s.outstanding = scheme.len() as u64;
            s.queued = scheme.queued() as u64;
            s.now = scheme.now();
            s.memory_bytes = (c.memory_bytes() + self.ring.buf.len() * size_of::<TwFired>()) as u64;
        }
        s.ring_used = self.ring.len as u64;
        s
    }
}

// ---------------------------------------------------------------------------------------------
// The instance.

/// What an instance's tick shares with its file operations.
#[pin_data]
struct Core {
    /// The real clock.
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    state: SpinLockIrq<State>,
    /// Signalled when records are added to the ring.
    #[pin]
    readable: CondVar,
    /// Serialises readers, so that records peeked under `state` are still the oldest when they
    /// are consumed after the copy to user space.
    #[pin]
    read_lock: Mutex<()>,
    /// The real clock's period in nanoseconds (0 while it does not run).
    period_ns: Atomic<u64>,
}

impl HrTimerCallback for Core {
    type Pointer<'a> = Arc<Self>;

    fn run(this: ArcBorrow<'_, Self>, mut ctx: HrTimerCallbackContext<'_, Self>) -> HrTimerRestart {
        // Periods missed while this callback was delayed are caught up now, and counted.
        let n = ctx.forward_now(delta_ns(this.period_ns.load(ordering::Relaxed)));
        let mut delivered = false;
        {
            let mut st = this.state.lock();
            for _ in 0..n {
                delivered |= st.tick();
            }
            st.stats.overruns += n.saturating_sub(1);
        }
        if delivered {
            this.readable.notify_all();
        }
        HrTimerRestart::Restart
    }
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Core {
        mode: RelativeSoftMode<Monotonic>, field: self.timer
    }
}

/// One open file of `/dev/timerwheel`.
///
/// Fields are dropped in declaration order: the clock handle first (cancelling the hrtimer and
/// waiting for a running tick), then the core.
#[pin_data]
struct Instance {
    /// The real clock's hrtimer handle, once started. Its mutex also serialises configuration.
    #[pin]
    clock: Mutex<Option<ArcHrTimerHandle<Core>>>,
    core: Arc<Core>,
}

/// Operations done under one hold of the state lock in a batch, bounding the time interrupts
/// stay masked. Schemes with O(n) operations hold it for one operation at a time.
fn batch_chunk(kind: SchemeKind) -> usize {
    match kind {
        SchemeKind::Straightforward | SchemeKind::OrderedList => 1,
        _ => 64,
    }
}

impl Instance {
    /// Installs the storage and clock for `params`; EBUSY if already configured.
    fn configure(&self, params: Params) -> Result {
        let mut clock = self.clock.lock();
        if self.core.state.lock().configured.is_some() {
            return Err(EBUSY);
        }
        // Allocate in process context, outside the spinlock.
        let callouts = Callouts::new(params.kind, &params.wheel).map_err(errno)?;
        let ring = Ring::new(params.ring)?;
        let old_ring = {
            let mut st = self.core.state.lock();
            st.configured = Some(Configured { callouts, params });
            st.stats = TwStats {
                scheme: params.kind as u64,
                ..TwStats::default()
            };
            core::mem::replace(&mut st.ring, ring)
        };
        drop(old_ring);
        if params.clock == TW_CLOCK_REAL {
            self.core.period_ns.store(params.tick_ns, ordering::Relaxed);
            *clock = Some(self.core.clone().start(delta_ns(params.tick_ns)));
        }
        Ok(())
    }

    /// Runs `f` on the configured state, configuring the defaults first if needed.
    fn with_state<R>(&self, f: impl FnOnce(&mut State) -> Result<R>) -> Result<R> {
        loop {
            {
                let mut st = self.core.state.lock();
                if st.configured.is_some() {
                    return f(&mut st);
                }
            }
            match self.configure(Params::from_uapi(&TwConfig::default())?) {
                Ok(()) => {}
                // Somebody configured it meanwhile: fine.
                Err(e) if e == EBUSY => {}
                Err(e) => return Err(e),
            }
        }
    }

    fn ioctl_configure(&self, mut r: UserSliceReader) -> Result {
        let c: TwConfig = r.read()?;
        self.configure(Params::from_uapi(&c)?)
    }

    fn ioctl_set(&self, user: UserSlice) -> Result {
        let (mut r, mut w) = user.reader_writer();
        let mut req: TwSet = r.read()?;
        let h = self.with_state(|st| st.set(req.ticks, req.cookie))?;
        req.handle = h.to_raw();
        self.write_back(&mut w, &req, h)
    }

    fn ioctl_timeout(&self, user: UserSlice) -> Result {
        let (mut r, mut w) = user.reader_writer();
        let mut req: TwTimeout = r.read()?;
        let h = self.with_state(|st| st.timeout(req.func, req.arg, req.ticks))?;
        req.handle = h.to_raw();
        self.write_back(&mut w, &req, h)
    }

    /// Writes a new callout's handle back; if that fails, the callout is cancelled again, so
    /// that a bad pointer leaves nothing behind that its caller cannot name.
    fn write_back<T: AsBytes>(&self, w: &mut UserSliceWriter, v: &T, h: Handle) -> Result {
        w.write(v).inspect_err(|_| {
            let _ = self.with_state(|st| st.unset(h));
        })
    }

    fn ioctl_unset(&self, mut r: UserSliceReader) -> Result {
        let raw: u64 = r.read()?;
        self.with_state(|st| st.unset(Handle::from_raw(raw)))
    }

    fn ioctl_untimeout(&self, mut r: UserSliceReader) -> Result {
        let req: TwUntimeout = r.read()?;
        self.with_state(|st| st.untimeout(req.func, req.arg))
    }

    fn ioctl_advance(&self, mut r: UserSliceReader) -> Result {
        let n: u64 = r.read()?;
        if n == 0 || n > TW_MAX_ADVANCE {
            return Err(EINVAL);
        }
        let manual = self.with_state(|st| Ok(st.params()?.clock == TW_CLOCK_MANUAL))?;
        if !manual {
            return Err(EINVAL);
        }
        for i in 0..n {
            if i % 1024 == 1023 && kernel::current!().signal_pending() {
                return Err(EINTR);
            }
            // One tick per lock hold: interrupts are masked for one tick's work at a time.
            if self.core.state.lock().tick() {
                self.core.readable.notify_all();
            }
        }
        Ok(())
    }

    fn ioctl_batch(&self, mut r: UserSliceReader) -> Result {
        let b: TwBatch = r.read()?;
        if b.count == 0 || b.count > TW_MAX_BATCH || b.reserved != 0 {
            return Err(EINVAL);
        }
        let count = b.count as usize;
        let user = UserSlice::new(
            UserPtr::from_addr(b.ops as usize),
            count * size_of::<TwOp>(),
        );
        let (mut r, mut w) = user.reader_writer();
        // Read every operation once, before running any: a bad pointer runs nothing.
        let mut ops = KVVec::with_capacity(count, GFP_KERNEL)?;
        for _ in 0..count {
            ops.push(r.read::<TwOp>()?, GFP_KERNEL)?;
        }
        let chunk = self.with_state(|st| Ok(batch_chunk(st.params()?.kind)))?;
        for part in ops.chunks_mut(chunk) {
            let mut st = self.core.state.lock();
            for op in part {
                st.run_op(op);
            }
        }
        for op in ops.iter() {
            w.write(op)?;
        }
        Ok(())
    }

    fn ioctl_stats(&self, mut w: UserSliceWriter) -> Result {
        let s = self.core.state.lock().snapshot();
        w.write(&s)
    }
}

// ---------------------------------------------------------------------------------------------
// TW_IOC_BENCH: the paper's reset loop, timed inside the kernel.

/// xorshift64*: deterministic deadlines for a bench, from its seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }

    /// A value in `[lo, lo + spread)`, `spread > 0`.
    fn within(&mut self, lo: u64, spread: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        lo + self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % spread
    }
}

/// `(func, arg)` of the timer a legacy-interface bench resets: no user cookie can be both.
const BENCH_FUNC: u64 = u64::MAX;
const BENCH_ARG: u64 = u64::MAX;

/// Resets done per hold of the state lock in a bench, bounding the time interrupts stay masked.
fn bench_chunk(kind: SchemeKind) -> u64 {
    batch_chunk(kind) as u64 * 16
}

impl Instance {
    fn ioctl_bench(&self, user: UserSlice) -> Result {
        let (mut r, mut w) = user.reader_writer();
        let mut b: TwBench = r.read()?;
        let instance = matches!(
            b.kind,
            TW_BENCH_SETCALLOUT | TW_BENCH_TIMEOUT | TW_BENCH_TICK
        );
        if b.reserved != 0
            || b.iterations == 0
            || b.iterations > TW_MAX_BENCH_ITERATIONS
            || (instance && b.n != 0)
            || b.n > u64::from(TW_MAX_CAPACITY)
            || b.min_ticks < 2
            || b.spread == 0
            || b.min_ticks.saturating_add(b.spread) > TW_MAX_BENCH_TICKS
        {
            return Err(EINVAL);
        }
        let ns = match b.kind {
            TW_BENCH_SETCALLOUT | TW_BENCH_TIMEOUT => self.bench_resets(&b)?,
            TW_BENCH_TICK => self.bench_ticks(&b)?,
            TW_BENCH_TIMER_LIST => bench_timer_list(&b)?,
            TW_BENCH_HRTIMER => bench_hrtimer(&b)?,
            _ => return Err(EINVAL),
        };
        b.elapsed_ns = ns;
        w.write(&b)
    }

    /// Resets one extra callout `iterations` times through the instance's own interface,
    /// timing only the work done under the lock.
    fn bench_resets(&self, b: &TwBench) -> Result<u64> {
        let legacy = b.kind == TW_BENCH_TIMEOUT;
        let mut rng = Rng::new(b.seed);
        let chunk = self.with_state(|st| Ok(bench_chunk(st.params()?.kind)))?;
        let first = rng.within(b.min_ticks, b.spread);
        let mut handle = self.with_state(|st| {
            let c = st.callouts()?;
            if legacy {
                c.timeout(BENCH_FUNC, BENCH_ARG, first)
            } else {
                c.setcallout(first, 0)
            }
            .map_err(errno)
        })?;
        let mut elapsed = 0i64;
        let mut left = b.iterations;
        let mut result = Ok(());
        while left > 0 && result.is_ok() {
            let mut st = self.core.state.lock();
            let c = st.callouts()?;
            let start = Instant::<Monotonic>::now();
            for _ in 0..chunk.min(left) {
                let t = rng.within(b.min_ticks, b.spread);
                let r = if legacy {
                    c.untimeout(BENCH_FUNC, BENCH_ARG)
                        .and_then(|()| c.timeout(BENCH_FUNC, BENCH_ARG, t))
                } else {
                    c.unsetcallout(handle).and_then(|_| c.setcallout(t, 0))
                };
                match r {
                    Ok(h) => handle = h,
                    Err(e) => {
                        result = Err(errno(e));
                        break;
                    }
                }
            }
            elapsed += start.elapsed().as_nanos();
            left -= chunk.min(left);
        }
        // The extra callout goes; on an error above it may already be gone.
        let _ = self.with_state(|st| st.callouts()?.unsetcallout(handle).map_err(errno));
        result.map(|()| elapsed as u64)
    }

    /// Runs `iterations` ticks of bookkeeping on a manual-clock instance.
    fn bench_ticks(&self, b: &TwBench) -> Result<u64> {
        let manual = self.with_state(|st| Ok(st.params()?.clock == TW_CLOCK_MANUAL))?;
        if !manual {
            return Err(EINVAL);
        }
        let mut elapsed = 0i64;
        let mut left = b.iterations;
        while left > 0 {
            let n = left.min(64);
            let mut st = self.core.state.lock();
            let start = Instant::<Monotonic>::now();
            for _ in 0..n {
                st.tick();
            }
            elapsed += start.elapsed().as_nanos();
            left -= n;
        }
        Ok(elapsed as u64)
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
    fn new(n: usize) -> Result<Self> {
        let mut timers = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..n {
            timers.push(BenchTimer(Opaque::uninit()), GFP_KERNEL_ACCOUNT)?;
        }
        let key = kernel::static_lock_class!();
        for t in timers.iter() {
            // SAFETY: `t.0.get()` points to a `timer_list` inside the buffer, which is never
            // moved or resized (type invariant) and outlives the timer (see `Drop`).
            unsafe {
                bindings::timer_init_key(
                    t.0.get(),
                    Some(bench_timer_fn),
                    0,
                    c"timerwheel_bench".as_char_ptr(),
                    key.as_ptr(),
                )
            };
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
        for t in self.timers.iter() {
            // SAFETY: `t` is initialised (type invariant). After `timer_shutdown_sync` it is
            // neither pending nor running, so its memory may be freed.
            unsafe { bindings::timer_shutdown_sync(t.0.get()) };
        }
    }
}

/// Checks for a pending signal every so many timers created.
fn interrupted(i: usize) -> bool {
    i % 4096 == 4095 && kernel::current!().signal_pending()
}

/// The Linux timer wheel: `n` pending `timer_list`s, one more reset `iterations` times.
fn bench_timer_list(b: &TwBench) -> Result<u64> {
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
    let start = Instant::<Monotonic>::now();
    for _ in 0..b.iterations {
        timers.disarm(n);
        timers.arm(n, rng.within(b.min_ticks, b.spread));
    }
    Ok(start.elapsed().as_nanos() as u64)
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
fn bench_hrtimer(b: &TwBench) -> Result<u64> {
    let n = b.n as usize;
    let mut rng = Rng::new(b.seed);
    let mut pending = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
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
        pending.push(t.start(d), GFP_KERNEL_ACCOUNT)?;
    }
    let extra = Arc::pin_init(
        pin_init!(BenchHrTimer { timer <- HrTimer::new() }),
        GFP_KERNEL,
    )?;
    let mut handle = Some(
        extra
            .clone()
            .start(bench_hr_delta(rng.within(b.min_ticks, b.spread))),
    );
    let start = Instant::<Monotonic>::now();
    for _ in 0..b.iterations {
        // Dropping the handle cancels the timer: hrtimer_cancel, then hrtimer_start.
        drop(handle.take());
        handle = Some(
            extra
                .clone()
                .start(bench_hr_delta(rng.within(b.min_ticks, b.spread))),
        );
    }
    let ns = start.elapsed().as_nanos() as u64;
    // Dropping the handles cancels every timer before its memory goes.
    drop(handle);
    drop(pending);
    Ok(ns)
}

/// `TW_IOC_INFO`.
fn ioctl_info(mut w: UserSliceWriter) -> Result {
    let info = TwInfo {
        version: TW_VERSION,
        schemes: SchemeKind::ALL.iter().fold(0, |m, k| m | 1 << (*k as u32)),
        tick_ns: heartbeat_ns()?,
        ticks: HEARTBEAT_TICKS.load(ordering::Relaxed),
    };
    w.write(&info)
}

/// Records copied to user space per hold of the state lock in `read`.
const READ_CHUNK: usize = 16;

#[vtable]
impl MiscDevice for Instance {
    type Ptr = Pin<KBox<Self>>;

    fn open(_file: &File, _misc: &MiscDeviceRegistration<Self>) -> Result<Pin<KBox<Self>>> {
        let core = Arc::pin_init(
            try_pin_init!(Core {
                timer <- HrTimer::new(),
                state <- new_spinlock_irq!(State::new(), "timerwheel_state"),
                readable <- new_condvar!("timerwheel_readable"),
                read_lock <- new_mutex!((), "timerwheel_read"),
                period_ns: Atomic::new(0),
            }),
            GFP_KERNEL,
        )?;
        KBox::try_pin_init(
            try_pin_init!(Instance {
                clock <- new_mutex!(None, "timerwheel_clock"),
                core,
            }),
            GFP_KERNEL,
        )
    }

    fn ioctl(me: Pin<&Instance>, _file: &File, cmd: u32, arg: usize) -> Result<isize> {
        let user = UserSlice::new(UserPtr::from_addr(arg), _IOC_SIZE(cmd));
        match cmd {
            TW_IOC_INFO => ioctl_info(user.writer()),
            TW_IOC_CONFIGURE => me.ioctl_configure(user.reader()),
            TW_IOC_SETCALLOUT => me.ioctl_set(user),
            TW_IOC_UNSETCALLOUT => me.ioctl_unset(user.reader()),
            TW_IOC_TIMEOUT => me.ioctl_timeout(user),
            TW_IOC_UNTIMEOUT => me.ioctl_untimeout(user.reader()),
            TW_IOC_ADVANCE => me.ioctl_advance(user.reader()),
            TW_IOC_BATCH => me.ioctl_batch(user.reader()),
            TW_IOC_STATS => me.ioctl_stats(user.writer()),
            TW_IOC_BENCH => me.ioctl_bench(user),
            _ => Err(ENOTTY),
        }
        .map(|()| 0)
    }

    fn read_iter(kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterDest<'_>) -> Result<usize> {
        // SAFETY: `kiocb.as_raw()` is the live kiocb of this read, whose `ki_filp` is the file
        // being read and stays valid for the whole call. The `Kiocb` abstraction does not
        // expose the file, and its flags (O_NONBLOCK, changeable by fcntl) must be read now.
        let file = unsafe { File::from_raw_file((*kiocb.as_raw()).ki_filp) };
        let nonblock = file.flags() & O_NONBLOCK != 0;
        let me = kiocb.file();
        let rec = size_of::<TwFired>();
        let want = iov.len() / rec;
        if want == 0 {
            return Err(EINVAL);
        }
        let _reader = me.core.read_lock.lock();
        {
            let mut st = me.core.state.lock();
            while st.ring.len == 0 {
                if nonblock {
                    return Err(EAGAIN);
                }
                if me.core.readable.wait_interruptible(&mut st) {
                    return Err(ERESTARTSYS);
                }
            }
        }
        let mut buf = [TwFired::default(); READ_CHUNK];
        let mut total = 0;
        while total < want {
            let n = me
                .core
                .state
                .lock()
                .ring
                .peek(&mut buf[..READ_CHUNK.min(want - total)]);
            let mut copied = 0;
            for r in &buf[..n] {
                if iov.copy_to_iter(r.as_bytes()) != rec {
                    break;
                }
                copied += 1;
            }
            me.core.state.lock().ring.consume(copied);
            total += copied;
            if copied < n || n == 0 {
                break;
            }
        }
        if total == 0 {
            return Err(EFAULT);
        }
        Ok(total * rec)
    }
}

// ---------------------------------------------------------------------------------------------
// KUnit: the glue's own logic. The algorithms are tested on the host (wheel/).

#[kunit_tests(rust_timerwheel)]
mod tests {
    use super::*;

    fn manual(scheme: u32) -> Params {
        Params::from_uapi(&TwConfig {
            scheme,
            clock: TW_CLOCK_MANUAL,
            capacity: 8,
            ring: 4,
            budget: 2,
            ..TwConfig::default()
        })
        .unwrap()
    }

    fn state(p: Params) -> State {
        let mut st = State::new();
        st.configured = Some(Configured {
            callouts: Callouts::new(p.kind, &p.wheel).unwrap(),
            params: p,
        });
        st.ring = Ring::new(p.ring).unwrap();
        st
    }

    #[test]
    fn config_defaults_and_limits() {
        let p = Params::from_uapi(&TwConfig::default()).unwrap();
        assert_eq!(p.kind, SchemeKind::HashedUnsorted);
        assert_eq!(p.wheel.capacity, TW_DEFAULT_CAPACITY);
        assert_eq!(p.tick_ns, TW_DEFAULT_TICK_NS);
        let bad = [
            TwConfig {
                scheme: 8,
                ..TwConfig::default()
            },
            TwConfig {
                clock: 2,
                ..TwConfig::default()
            },
            TwConfig {
                capacity: TW_MAX_CAPACITY + 1,
                ..TwConfig::default()
            },
            TwConfig {
                scheme: 1,
                capacity: TW_MAX_CAPACITY_SCHEME1 + 1,
                ..TwConfig::default()
            },
            TwConfig {
                tick_ns: TW_MIN_TICK_NS - 1,
                ..TwConfig::default()
            },
            TwConfig {
                tick_ns: TW_MAX_TICK_NS + 1,
                ..TwConfig::default()
            },
            TwConfig {
                ring: TW_MAX_RING + 1,
                ..TwConfig::default()
            },
        ];
        for c in &bad {
            assert_eq!(Params::from_uapi(c), Err(EINVAL));
        }
    }

    #[test]
    fn errnos_match_the_header() {
        assert_eq!(errno(wheel::Error::Full), ENOSPC);
        assert_eq!(errno(wheel::Error::Stale), ENOENT);
        assert_eq!(errno(wheel::Error::NotFound), ENOENT);
        assert_eq!(errno(wheel::Error::Interval), EINVAL);
        assert_eq!(errno(wheel::Error::Range), ERANGE);
    }

    #[test]
    fn lateness_buckets_are_powers_of_two() {
        assert_eq!(lateness_bucket(0), 0);
        assert_eq!(lateness_bucket(1), 1);
        assert_eq!(lateness_bucket(2), 2);
        assert_eq!(lateness_bucket(3), 2);
        assert_eq!(lateness_bucket(4), 3);
        assert_eq!(lateness_bucket(u64::MAX), TW_LATENESS_BUCKETS - 1);
    }

    #[test]
    fn ring_is_fifo_and_bounded() {
        let mut ring = Ring::new(3).unwrap();
        for i in 0..3 {
            assert!(ring.push(TwFired {
                cookie: i,
                ..TwFired::default()
            }));
        }
        assert!(!ring.push(TwFired::default()));
        let mut out = [TwFired::default(); 2];
        assert_eq!(ring.peek(&mut out), 2);
        assert_eq!((out[0].cookie, out[1].cookie), (0, 1));
        ring.consume(2);
        assert!(ring.push(TwFired {
            cookie: 3,
            ..TwFired::default()
        }));
        assert_eq!(ring.peek(&mut out), 2);
        assert_eq!((out[0].cookie, out[1].cookie), (2, 3));
    }

    #[test]
    fn budget_carries_over_and_full_ring_counts_drops() {
        for kind in SchemeKind::ALL {
            let mut st = state(manual(kind as u32));
            for i in 0..5 {
                st.set(1, i).unwrap();
            }
            st.tick();
            // Budget 2: two records now, three carried.
            assert_eq!(st.ring.len, 2);
            assert_eq!(st.snapshot().queued, 3);
            st.tick();
            st.tick();
            // Ring of 4: the fifth record is dropped and counted.
            let s = st.snapshot();
            assert_eq!(s.fired, 5);
            assert_eq!(s.ring_drops, 1);
            assert_eq!(st.ring.len, 4);
            assert_eq!(s.carried, 3 + 1);
            assert_eq!(s.lateness[0] + s.lateness[1] + s.lateness[2], 5);
            assert_eq!(s.outstanding, 0);
        }
    }

    #[test]
    fn batch_ops_report_their_errno() {
        let mut st = state(manual(6));
        let mut set = TwOp {
            op: TW_OP_SET,
            a: 3,
            b: 7,
            ..TwOp::default()
        };
        st.run_op(&mut set);
        assert_eq!(set.result, 0);
        let mut reset = TwOp {
            op: TW_OP_RESET,
            a: 5,
            b: 8,
            handle: set.handle,
            ..TwOp::default()
        };
        st.run_op(&mut reset);
        assert_eq!(reset.result, 0);
        let mut stale = TwOp {
            op: TW_OP_UNSET,
            handle: set.handle,
            ..TwOp::default()
        };
        st.run_op(&mut stale);
        assert_eq!(stale.result, ENOENT.to_errno());
        let mut bad = TwOp {
            op: 99,
            ..TwOp::default()
        };
        st.run_op(&mut bad);
        assert_eq!(bad.result, EINVAL.to_errno());
        let mut zero = TwOp {
            op: TW_OP_SET,
            a: 0,
            ..TwOp::default()
        };
        st.run_op(&mut zero);
        assert_eq!(zero.result, EINVAL.to_errno());
    }
}
