// SPDX-License-Identifier: GPL-2.0

//! An instance's parameters: a `struct tw_config` checked and completed with the defaults, and
//! the storage they are made in.

use kernel::{
    alloc::{
        flags::{
            __GFP_NOWARN,
            GFP_KERNEL_ACCOUNT, //
        },
        Flags,
        KVVec, //
    },
    page::PAGE_SIZE,
    prelude::*,
    sync::atomic::{
        ordering,
        Atomic, //
    },
};

use core::mem::ManuallyDrop;

use crate::{
    instance::{
        between_holds,
        signalled, //
    },
    uapi::*,
    wheel::{
        self,
        SchemeKind, //
    },
};

/// Elements a large buffer is filled with between two offers of the CPU, after each of which a
/// pending signal ends the configuration (EINTR, or a restart: `instance::UNDONE`): 64 Ki, a
/// few milliseconds in an emulated debug guest. The default geometry (64 Ki callouts, 4 Ki
/// records) is made in one stretch, so that a first start on a fresh file, which configures it,
/// does not fail for a signal. The largest the uapi accepts (up to 550 MiB, seconds in such a
/// guest) answers one once the allocation under way and a chunk are done, and returns without
/// freeing what it made ([`Buffer`]): the largest buffer, 128 MiB, takes 0.2 to 0.6 s to
/// allocate there (`kvmalloc` gives up on a fatal signal only).
pub(crate) const FILL_CHUNK: usize = 1 << 16;

/// Bytes granted by [`reserve`] and not made yet: the memory available counts them still.
static RESERVED: Atomic<usize> = Atomic::new(0);

/// A grant of memory for a buffer a user process asked for, from [`reserve`]: other calls count
/// it as taken until it is dropped, once the buffer is made (the memory available then counts
/// it).
#[must_use]
pub(crate) struct Reservation(usize);

impl Drop for Reservation {
    fn drop(&mut self) {
        RESERVED.fetch_sub(self.0, ordering::Relaxed);
    }
}

/// Grants a buffer of `bytes` that a user process asked for, if it may be made now: with every
/// other grant not made yet, at most half the memory the machine has available
/// (`si_mem_available()`: free memory above the watermarks, and what reclaim can give back).
/// Beyond it an instance fails at once with ENOMEM, as a resize of the trace ring buffer fails
/// beyond what is available, instead of taking the last of the memory and sending the OOM
/// killer after other processes: however many instances are made at once from many threads,
/// the buffers under way never take more than half the memory available, and made one after
/// another, each leaves at least as much available as it took. Half, not all: the kernel spends
/// more than the buffer's bytes on it (page tables, and KASAN's shadow in a debug kernel), and
/// what reclaim can give back it may not give back at once. Counting only each grant against
/// what the others left, 32 threads at once took nearly all of it between them, and in a debug
/// kernel the OOM killer ran.
pub(crate) fn reserve(bytes: usize) -> Option<Reservation> {
    let half = available() / 2;
    let mut reserved = RESERVED.load(ordering::Relaxed);
    loop {
        if bytes > half.saturating_sub(reserved) {
            return None;
        }
        // No overflow: every grant leaves the sum of them within half the memory available.
        match RESERVED.cmpxchg(reserved, reserved + bytes, ordering::Relaxed) {
            Ok(_) => return Some(Reservation(bytes)),
            Err(now) => reserved = now,
        }
    }
}

/// The memory available, in bytes: `si_mem_available()`, the kernel's MemAvailable.
fn available() -> usize {
    // SAFETY: `si_mem_available` only reads the memory counters, and may be called from any
    // context. The kernel crate has no abstraction for them.
    let pages = unsafe { kernel::bindings::si_mem_available() };
    usize::try_from(pages)
        .unwrap_or(0)
        .saturating_mul(PAGE_SIZE)
}

/// The flags of an allocation whose size a user process chooses (an instance's storage, a
/// batch's copy of its operations, a bench's Linux timers): charged to the caller's memory
/// cgroup, with no failure report (ENOMEM says it), and, where the kernel crate has the flag
/// (a patch of this project, `scripts/kernel-patches/`; Kbuild sets `tw_gfp_retry_mayfail`),
/// `__GFP_RETRY_MAYFAIL`: beyond what the cgroup has left, or what reclaim can free, the
/// allocation fails rather than have the OOM killer, the cgroup's or the system's, kill
/// processes to make room (without it, the charge of any page of a `vmalloc` beyond the
/// cgroup's limit sends the cgroup's). [`reserve`] keeps a buffer within half the system's
/// memory available, but it cannot see a cgroup's limit.
pub(crate) fn user_sized() -> Flags {
    let flags = GFP_KERNEL_ACCOUNT | __GFP_NOWARN;
    #[cfg(tw_gfp_retry_mayfail)]
    let flags = flags | kernel::alloc::flags::__GFP_RETRY_MAYFAIL;
    flags
}

/// [`wheel::Storage`] in kernel memory: `kvmalloc` with [`user_sized`] flags (the allocations
/// are sized by a user process), for the scheme, the callout layer and the ring, and for the
/// `timer_list`s of the Linux baseline bench. Called only while an instance is configured or a
/// bench prepares, in process context, holding no lock: it may sleep, refuses a buffer
/// [`reserve`] does not grant (ENOMEM), fills a buffer [`FILL_CHUNK`] elements at a time, and
/// between two chunks offers the CPU and gives up on a pending signal ([`between_holds`];
/// [`wheel::Error::Interrupted`], EINTR).
pub(crate) struct KernelStorage;

/// A buffer of [`KernelStorage`]: a `KVVec` that is given back to the kernel to free on a
/// workqueue (`kvfree_atomic`) when it goes while the task has a signal pending, and freed at
/// once otherwise. Freeing a large buffer takes long (its pages one by one, and in a debug kernel
/// KASAN's shadow with them: some 0.45 s for 128 MiB in an emulated debug guest), and a call
/// given up for a signal (a configuration, EINTR) returns without waiting for it, as does a
/// killed process closing its files; an ordinary close still gives the memory back before it
/// returns, so that the next configuration finds it.
pub(crate) struct Buffer<T>(ManuallyDrop<KVVec<T>>);

impl<T> Buffer<T> {
    /// A buffer of no elements, which allocates nothing.
    pub(crate) fn new() -> Self {
        Buffer(ManuallyDrop::new(KVVec::new()))
    }
}

impl<T> core::ops::Deref for Buffer<T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        &self.0
    }
}

impl<T> core::ops::DerefMut for Buffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.0
    }
}

impl<T> Drop for Buffer<T> {
    fn drop(&mut self) {
        // SAFETY: `self.0` is taken once, here, and not used again.
        let mut v = unsafe { ManuallyDrop::take(&mut self.0) };
        if core::mem::size_of::<T>() == 0 || v.capacity() == 0 || !signalled() {
            return;
        }
        v.clear();
        let (ptr, _, _) = v.into_raw_parts();
        // SAFETY: `ptr` is the start of a `KVVec`'s allocation (its capacity is not 0 and its
        // elements are not zero-sized), made by `kvmalloc`, which the vector no longer owns,
        // and whose elements were dropped by `clear`. `kvfree_atomic` frees any `kvmalloc`
        // allocation from any context but NMI; the kernel crate has no call for it.
        unsafe { kernel::bindings::kvfree_atomic(ptr.cast()) };
    }
}

impl wheel::Storage for KernelStorage {
    type Buf<T> = Buffer<T>;

    fn alloc<T>(
        len: usize,
        mut init: impl FnMut(usize) -> T,
    ) -> core::result::Result<Buffer<T>, wheel::Error> {
        let grant =
            reserve(len.saturating_mul(core::mem::size_of::<T>())).ok_or(wheel::Error::NoMemory)?;
        // The size is a user's: no failure report and no OOM killer, ENOMEM says it.
        let mut v = Buffer(ManuallyDrop::new(
            KVVec::with_capacity(len, user_sized()).map_err(|_| wheel::Error::NoMemory)?,
        ));
        // Made (`kvmalloc` takes its pages at once): the memory available counts it now.
        drop(grant);
        for at in (0..len).step_by(FILL_CHUNK) {
            if at != 0 && between_holds() {
                return Err(wheel::Error::Interrupted);
            }
            for i in at..len.min(at + FILL_CHUNK) {
                // Within the capacity reserved above: this does not allocate.
                v.0.push(init(i), user_sized())
                    .map_err(|_| wheel::Error::NoMemory)?;
            }
        }
        Ok(v)
    }
}

/// A validated `struct tw_config`, defaults filled in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    pub(crate) kind: SchemeKind,
    pub(crate) clock: u32,
    pub(crate) periodic: bool,
    /// No side table for the legacy interface.
    pub(crate) handles_only: bool,
    pub(crate) wheel: wheel::Config,
    pub(crate) tick_ns: u64,
    pub(crate) ring: u32,
    pub(crate) budget: u32,
}

impl Params {
    /// Checks every field of a `struct tw_config`; EINVAL for anything out of range, the slots
    /// of schemes 5 and 6 included (a power of two, which their constructors check too, but
    /// only once the instance is known to be unconfigured: a bad configuration is EINVAL on a
    /// configured instance as well, not EBUSY). `default_tick_ns` stands in for a `tick_ns` of
    /// 0 (the `tick_us` module parameter).
    pub(crate) fn from_uapi(c: &tw_config, default_tick_ns: u64) -> Result<Self> {
        let kind =
            SchemeKind::from_number(or_default(c.scheme, TW_DEFAULT_SCHEME)).ok_or(EINVAL)?;
        let capacity = or_default(c.capacity, TW_DEFAULT_CAPACITY);
        let max_capacity = if kind == SchemeKind::Straightforward {
            TW_MAX_CAPACITY_SCHEME1
        } else {
            TW_MAX_CAPACITY
        };
        let slots = or_default(c.slots, TW_DEFAULT_SLOTS);
        let tick_ns = if c.tick_ns == 0 {
            default_tick_ns
        } else {
            c.tick_ns
        };
        let ring = or_default(c.ring, TW_DEFAULT_RING);
        let budget = or_default(c.budget, TW_DEFAULT_BUDGET);
        if !matches!(c.clock, TW_CLOCK_REAL | TW_CLOCK_MANUAL)
            || capacity > max_capacity
            || slots > TW_MAX_SLOTS
            || (matches!(kind, SchemeKind::HashedSorted | SchemeKind::HashedUnsorted)
                && !slots.is_power_of_two())
            || !(TW_MIN_TICK_NS..=TW_MAX_TICK_NS).contains(&tick_ns)
            || ring > TW_MAX_RING
            || budget > TW_MAX_BUDGET
            || c.flags & !(TW_CONFIG_PERIODIC | TW_CONFIG_HANDLES_ONLY) != 0
            || c.reserved != 0
        {
            return Err(EINVAL);
        }
        Ok(Params {
            kind,
            clock: c.clock,
            periodic: c.flags & TW_CONFIG_PERIODIC != 0,
            handles_only: c.flags & TW_CONFIG_HANDLES_ONLY != 0,
            wheel: wheel::Config {
                capacity,
                slots,
                start: c.start_tick,
                ..Default::default()
            },
            tick_ns,
            ring,
            budget,
        })
    }

    /// How the scheme's clock runs.
    pub(crate) fn clock_mode(&self) -> wheel::Clock {
        if self.periodic {
            wheel::Clock::Periodic
        } else {
            wheel::Clock::Tickless
        }
    }

    /// The `flags` word of `struct tw_stats`.
    pub(crate) fn flags(&self) -> u64 {
        let mut flags = 0;
        if self.periodic {
            flags |= TW_CONFIG_PERIODIC;
        }
        if self.handles_only {
            flags |= TW_CONFIG_HANDLES_ONLY;
        }
        u64::from(flags)
    }

    /// The callout layer for these parameters, allocated now (process context), its handles
    /// from a generation of its own (see [`next_generation`]).
    pub(crate) fn callouts<S: wheel::Storage>(&self) -> Result<wheel::callout::Callouts<S>> {
        let config = wheel::Config {
            generation: next_generation(),
            ..self.wheel
        };
        let c = if self.handles_only {
            wheel::callout::Callouts::with_handles_only(self.kind, &config)
        } else {
            wheel::callout::Callouts::new(self.kind, &config)
        };
        c.map_err(crate::uapi::errno)
    }
}

/// The generation the next instance's handles start at: a Weyl sequence over the 40 bits of a
/// generation, stepped by 2^40 over the golden ratio (odd, so that it visits every value once
/// in 2^40 instances; the arena takes 0 as 1). Instances made one after another start far
/// apart: any two of 1,000 consecutive ones at least 4.9 * 10^8 generations apart. A handle
/// passed to another file than the one that issued it is therefore stale there (ENOENT),
/// instead of naming one of its callouts, as it would if every instance started at the same
/// generation.
fn next_generation() -> u64 {
    static NEXT: Atomic<u64> = Atomic::new(1);
    const STEP: u64 = 0x9e_3779_b97f;
    NEXT.fetch_add(STEP, ordering::Relaxed)
}

/// `v`, or `default` where `v` is 0.
fn or_default(v: u32, default: u32) -> u32 {
    if v == 0 {
        default
    } else {
        v
    }
}

#[kunit_tests(rust_timerwheel_params)]
mod tests {
    use super::*;

    #[test]
    fn config_defaults_and_limits() {
        let p = Params::from_uapi(&tw_config::default(), TW_DEFAULT_TICK_NS).unwrap();
        assert_eq!(p.kind, SchemeKind::HashedUnsorted);
        assert_eq!(p.wheel.capacity, TW_DEFAULT_CAPACITY);
        assert_eq!(p.tick_ns, TW_DEFAULT_TICK_NS);
        assert_eq!(p.budget, TW_DEFAULT_BUDGET);
        assert!(!p.periodic);
        let d = tw_config::default;
        let bad = [
            tw_config { scheme: 8, ..d() },
            tw_config { clock: 2, ..d() },
            tw_config {
                capacity: TW_MAX_CAPACITY + 1,
                ..d()
            },
            tw_config {
                scheme: 1,
                capacity: TW_MAX_CAPACITY_SCHEME1 + 1,
                ..d()
            },
            tw_config {
                tick_ns: TW_MIN_TICK_NS - 1,
                ..d()
            },
            tw_config {
                tick_ns: TW_MAX_TICK_NS + 1,
                ..d()
            },
            tw_config {
                ring: TW_MAX_RING + 1,
                ..d()
            },
            tw_config {
                budget: TW_MAX_BUDGET + 1,
                ..d()
            },
            tw_config {
                scheme: 5,
                slots: 100,
                ..d()
            },
            tw_config {
                scheme: 6,
                slots: 3,
                ..d()
            },
            tw_config { flags: 4, ..d() },
            tw_config { reserved: 1, ..d() },
        ];
        for c in &bad {
            assert_eq!(Params::from_uapi(c, TW_DEFAULT_TICK_NS), Err(EINVAL));
        }
        let p = Params::from_uapi(
            &tw_config {
                flags: TW_CONFIG_PERIODIC,
                ..d()
            },
            TW_MIN_TICK_NS,
        )
        .unwrap();
        assert!(p.periodic);
        assert_eq!(p.tick_ns, TW_MIN_TICK_NS);
    }

    #[test]
    fn instances_made_alike_issue_handles_stale_in_each_other() {
        let p = Params::from_uapi(
            &tw_config {
                capacity: 4,
                ..tw_config::default()
            },
            TW_DEFAULT_TICK_NS,
        )
        .unwrap();
        let mut a = p.callouts::<KernelStorage>().unwrap();
        let mut b = p.callouts::<KernelStorage>().unwrap();
        let ha = a.setcallout(5, 1).unwrap();
        let hb = b.setcallout(5, 2).unwrap();
        assert_ne!(ha, hb);
        assert_eq!(a.deadline(hb), None);
        assert_eq!(b.deadline(ha), None);
        assert!(b.unsetcallout(ha).is_err());
        assert!(b.unsetcallout(hb).is_ok());
        assert!(a.unsetcallout(ha).is_ok());
    }

    #[test]
    fn storage_is_filled_in_chunks_that_cover_it() {
        // No signal reaches a KUnit case: no chunk ends the fill.
        for len in [0, 1, FILL_CHUNK, FILL_CHUNK + 1, 2 * FILL_CHUNK + 5] {
            let v = <KernelStorage as wheel::Storage>::alloc(len, |i| i as u32).unwrap();
            assert_eq!(v.len(), len);
            assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
        }
    }

    #[test]
    fn storage_beyond_half_the_memory_available_is_refused() {
        assert!(reserve(0).is_some());
        assert!(reserve(PAGE_SIZE).is_some());
        let available = available();
        assert!(reserve(available / 2 + available / 4).is_none());
        assert!(reserve(usize::MAX).is_none());
        // What is granted and not made yet counts as taken, and all such grants together stay
        // within half the memory available: 9/20 fits alone, not beside a grant of a third;
        // beside it a tenth fits and a fifth does not (it would fit in half of the 2/3 the
        // third leaves); and 9/20 fits again once the third is given back.
        assert!(reserve(available / 20 * 9).is_some());
        let third = reserve(available / 3);
        assert!(third.is_some());
        assert!(reserve(available / 20 * 9).is_none());
        assert!(reserve(available / 10).is_some());
        assert!(reserve(available / 5).is_none());
        drop(third);
        assert!(reserve(available / 20 * 9).is_some());
        // Refused before any allocation is tried: no OOM killer, no failure report.
        let len = available / core::mem::size_of::<u64>();
        assert!(matches!(
            <KernelStorage as wheel::Storage>::alloc(len, |i| i as u64),
            Err(wheel::Error::NoMemory)
        ));
    }
}
