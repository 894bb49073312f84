// SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note

//! The uapi of `include/uapi/timerwheel.h` in Rust: its constants and structures, under the
//! header's own names, free of kernel and `std` types.
//!
//! The header is the source of truth. The kernel module and the `fig9` tool both compile this
//! one file in (through `#[path]`), and `fig9`'s build script runs bindgen on the header and
//! fails the build when a constant, a structure's size or a field's offset here disagrees with
//! it. The ioctl numbers are not here: each side computes them from the structures with its own
//! `_IOC` encoding (the kernel crate's `_IOR`/`_IOW`/`_IOWR`, rustix's opcodes).

#![allow(non_camel_case_types, dead_code, missing_docs, unreachable_pub)]

pub const TW_VERSION: u32 = 4;
pub const TW_DEVICE: &str = "/dev/timerwheel";
pub const TW_IOC_MAGIC: u32 = 0xB9;

pub const TW_SCHEME_STRAIGHTFORWARD: u32 = 1;
pub const TW_SCHEME_ORDERED_LIST: u32 = 2;
pub const TW_SCHEME_HEAP: u32 = 3;
pub const TW_SCHEME_BASIC_WHEEL: u32 = 4;
pub const TW_SCHEME_HASHED_SORTED: u32 = 5;
pub const TW_SCHEME_HASHED_UNSORTED: u32 = 6;
pub const TW_SCHEME_HIERARCHICAL: u32 = 7;

pub const TW_CLOCK_REAL: u32 = 0;
pub const TW_CLOCK_MANUAL: u32 = 1;

pub const TW_CONFIG_PERIODIC: u32 = 1 << 0;
pub const TW_CONFIG_HANDLES_ONLY: u32 = 1 << 1;

pub const TW_DEFAULT_SCHEME: u32 = TW_SCHEME_HASHED_UNSORTED;
pub const TW_DEFAULT_CAPACITY: u32 = 65536;
pub const TW_MAX_CAPACITY: u32 = 1 << 22;
pub const TW_MAX_CAPACITY_SCHEME1: u32 = 65536;
pub const TW_DEFAULT_SLOTS: u32 = 256;
pub const TW_MAX_SLOTS: u32 = 1 << 24;
pub const TW_DEFAULT_TICK_NS: u64 = 1_000_000;
pub const TW_MIN_TICK_NS: u64 = 100_000;
pub const TW_MAX_TICK_NS: u64 = 1_000_000_000;
pub const TW_DEFAULT_RING: u32 = 4096;
pub const TW_MAX_RING: u32 = 1 << 20;
pub const TW_DEFAULT_BUDGET: u32 = 1024;
pub const TW_MAX_BUDGET: u32 = 65536;
pub const TW_HOLD_WORK: u32 = 256;
pub const TW_MAX_BATCH: u32 = 65536;
pub const TW_MAX_ADVANCE: u64 = 1 << 20;
pub const TW_MAX_TICKS: u64 = (1 << 63) - 1;
pub const TW_LATENESS_BUCKETS: u32 = 16;

pub const TW_FEATURE_POLL: u32 = 1 << 0;
pub const TW_FEATURE_TICKLESS: u32 = 1 << 1;
pub const TW_FEATURE_RANGE: u32 = 1 << 2;
pub const TW_FEATURE_NO_OOM_KILL: u32 = 1 << 3;
pub const TW_FEATURE_NOWAIT: u32 = 1 << 4;

pub const TW_OP_SET: u32 = 1;
pub const TW_OP_UNSET: u32 = 2;
pub const TW_OP_TIMEOUT: u32 = 3;
pub const TW_OP_UNTIMEOUT: u32 = 4;
pub const TW_OP_RESET: u32 = 5;
pub const TW_OP_MOD: u32 = 6;

pub const TW_ORIGIN_CALLOUT: u32 = 1;
pub const TW_ORIGIN_LEGACY: u32 = 2;

pub const TW_BENCH_SETCALLOUT: u32 = 1;
pub const TW_BENCH_TIMEOUT: u32 = 2;
pub const TW_BENCH_TIMER_LIST: u32 = 3;
pub const TW_BENCH_HRTIMER: u32 = 4;
pub const TW_BENCH_TICK: u32 = 5;
pub const TW_BENCH_MOD: u32 = 6;
pub const TW_BENCH_TIMER_LIST_MOD: u32 = 7;
pub const TW_MAX_BENCH_ITERATIONS: u64 = 1 << 24;
pub const TW_MAX_BENCH_TICKS: u64 = 1 << 40;
pub const TW_MIN_BASELINE_TICKS: u64 = 1 << 20;

/// `struct tw_info`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_info {
    pub version: u32,
    pub schemes: u32,
    pub features: u32,
    pub hold_work: u32,
    pub instances: u64,
    pub uptime_ns: u64,
    pub timer_list_bytes: u32,
    pub hrtimer_bytes: u32,
    pub tick_ns: u64,
}

/// `struct tw_config`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_config {
    pub scheme: u32,
    pub clock: u32,
    pub capacity: u32,
    pub slots: u32,
    pub tick_ns: u64,
    pub start_tick: u64,
    pub ring: u32,
    pub budget: u32,
    pub flags: u32,
    pub reserved: u32,
}

/// `struct tw_set`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_set {
    pub ticks: u64,
    pub cookie: u64,
    pub handle: u64,
    pub latest: u64,
}

/// `struct tw_reset`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_reset {
    pub handle: u64,
    pub ticks: u64,
    pub latest: u64,
}

/// `struct tw_query`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_query {
    pub handle: u64,
    pub pending: u32,
    pub reserved: u32,
    pub deadline: u64,
    pub now: u64,
}

/// `struct tw_timeout`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_timeout {
    pub func: u64,
    pub arg: u64,
    pub ticks: u64,
    pub handle: u64,
    pub latest: u64,
}

/// `struct tw_untimeout`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_untimeout {
    pub func: u64,
    pub arg: u64,
}

/// `struct tw_op`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_op {
    pub op: u32,
    pub result: i32,
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub handle: u64,
}

/// `struct tw_batch`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_batch {
    pub ops: u64,
    pub count: u32,
    pub reserved: u32,
}

/// `struct tw_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_stats {
    pub outstanding: u64,
    pub started: u64,
    pub stopped: u64,
    pub fired: u64,
    pub ticks: u64,
    pub now: u64,
    pub overruns: u64,
    pub carried: u64,
    pub queued: u64,
    pub ring_drops: u64,
    pub ring_used: u64,
    pub max_tick_work: u64,
    pub memory_bytes: u64,
    pub scheme: u64,
    pub flags: u64,
    pub wakeups: u64,
    pub skipped: u64,
    pub holds: u64,
    pub max_hold_work: u64,
    pub max_hold_ns: u64,
    pub lateness: [u64; TW_LATENESS_BUCKETS as usize],
}

/// `struct tw_fired`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_fired {
    pub handle: u64,
    pub cookie: u64,
    pub arg: u64,
    pub deadline: u64,
    pub fired: u64,
    pub origin: u32,
    pub reserved: u32,
}

/// `struct tw_bench`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_bench {
    pub kind: u32,
    pub reserved: u32,
    pub n: u64,
    pub iterations: u64,
    pub min_ticks: u64,
    pub spread: u64,
    pub seed: u64,
    pub elapsed_ns: u64,
    pub max_hold_ns: u64,
}

/// `struct tw_bench_pair`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct tw_bench_pair {
    pub instance: tw_bench,
    pub baseline: tw_bench,
}
