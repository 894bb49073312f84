// SPDX-License-Identifier: GPL-2.0

//! The uapi of `include/uapi/timerwheel.h`, mirrored one to one: constants, `#[repr(C)]`
//! structures (their sizes checked at compile time against the header) and the request numbers,
//! computed here with the x86-64 Linux `_IOC` encoding.

use std::mem::size_of;

pub const TW_VERSION: u32 = 1;
pub const TW_DEVICE: &str = "/dev/timerwheel";
pub const TW_IOC_MAGIC: u32 = 0xB9;

pub const TW_SCHEME_ORDERED_LIST: u32 = 2;
pub const TW_SCHEME_BASIC_WHEEL: u32 = 4;
pub const TW_SCHEME_HASHED_SORTED: u32 = 5;
pub const TW_SCHEME_HASHED_UNSORTED: u32 = 6;

pub const TW_CLOCK_MANUAL: u32 = 1;

pub const TW_MAX_CAPACITY: u32 = 1 << 22;
/// Not in the header: the module keeps scheme 1 (an O(n) tick) to this capacity.
pub const TW_MAX_CAPACITY_SCHEME1: u32 = 65536;
pub const TW_MAX_SLOTS: u32 = 1 << 24;
pub const TW_MAX_BATCH: usize = 65536;

pub const TW_OP_SET: u32 = 1;
pub const TW_OP_UNSET: u32 = 2;
pub const TW_OP_TIMEOUT: u32 = 3;

pub const TW_BENCH_SETCALLOUT: u32 = 1;
pub const TW_BENCH_TIMEOUT: u32 = 2;
pub const TW_BENCH_TIMER_LIST: u32 = 3;
pub const TW_BENCH_HRTIMER: u32 = 4;
pub const TW_BENCH_TICK: u32 = 5;
pub const TW_MAX_BENCH_ITERATIONS: u64 = 1 << 24;

/// `struct tw_info`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TwInfo {
    pub version: u32,
    pub schemes: u32,
    pub tick_ns: u64,
    pub ticks: u64,
}

/// `struct tw_config`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TwConfig {
    pub scheme: u32,
    pub clock: u32,
    pub capacity: u32,
    pub slots: u32,
    pub tick_ns: u64,
    pub start_tick: u64,
    pub ring: u32,
    pub budget: u32,
}

/// `struct tw_set`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TwSet {
    pub ticks: u64,
    pub cookie: u64,
    pub handle: u64,
}

/// `struct tw_timeout`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TwTimeout {
    pub func: u64,
    pub arg: u64,
    pub ticks: u64,
    pub handle: u64,
}

/// `struct tw_untimeout`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TwUntimeout {
    pub func: u64,
    pub arg: u64,
}

/// `struct tw_op`: one operation of a batch.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TwOp {
    pub op: u32,
    pub result: i32,
    pub a: u64,
    pub b: u64,
    pub c: u64,
    pub handle: u64,
}

/// `struct tw_batch`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TwBatch {
    pub ops: u64,
    pub count: u32,
    pub reserved: u32,
}

/// `struct tw_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TwStats {
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
    pub lateness: [u64; 16],
}

/// `struct tw_bench`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct TwBench {
    pub kind: u32,
    pub reserved: u32,
    pub n: u64,
    pub iterations: u64,
    pub min_ticks: u64,
    pub spread: u64,
    pub seed: u64,
    pub elapsed_ns: u64,
}

// The sizes the header gives these structures (checked with a C compiler against the header).
const _: () = assert!(size_of::<TwInfo>() == 24);
const _: () = assert!(size_of::<TwConfig>() == 40);
const _: () = assert!(size_of::<TwSet>() == 24);
const _: () = assert!(size_of::<TwTimeout>() == 32);
const _: () = assert!(size_of::<TwUntimeout>() == 16);
const _: () = assert!(size_of::<TwOp>() == 40);
const _: () = assert!(size_of::<TwBatch>() == 16);
const _: () = assert!(size_of::<TwStats>() == 240);
const _: () = assert!(size_of::<TwBench>() == 56);

// The `_IOC` encoding of x86-64 Linux (include/uapi/asm-generic/ioctl.h):
// bits 0..8 nr, 8..16 type, 16..30 size, 30..32 direction.
const IOC_WRITE: u64 = 1;
const IOC_READ: u64 = 2;
const IOC_SIZEBITS: u32 = 14;

/// `_IOC(dir, type, nr, size)`.
pub const fn ioc(dir: u64, ty: u32, nr: u32, size: usize) -> u64 {
    assert!(
        size < (1 << IOC_SIZEBITS),
        "an ioctl argument must fit 14 bits of size"
    );
    (dir << 30) | ((size as u64) << 16) | ((ty as u64) << 8) | nr as u64
}

/// `_IOC_SIZE(request)`.
pub const fn ioc_size(request: u64) -> usize {
    ((request >> 16) & ((1 << IOC_SIZEBITS) - 1)) as usize
}

/// `_IOR(TW_IOC_MAGIC, nr, T)`.
const fn ior<T>(nr: u32) -> u64 {
    ioc(IOC_READ, TW_IOC_MAGIC, nr, size_of::<T>())
}

/// `_IOW(TW_IOC_MAGIC, nr, T)`.
const fn iow<T>(nr: u32) -> u64 {
    ioc(IOC_WRITE, TW_IOC_MAGIC, nr, size_of::<T>())
}

/// `_IOWR(TW_IOC_MAGIC, nr, T)`.
const fn iowr<T>(nr: u32) -> u64 {
    ioc(IOC_READ | IOC_WRITE, TW_IOC_MAGIC, nr, size_of::<T>())
}

pub const TW_IOC_INFO: u64 = ior::<TwInfo>(0x00);
pub const TW_IOC_CONFIGURE: u64 = iow::<TwConfig>(0x01);
pub const TW_IOC_SETCALLOUT: u64 = iowr::<TwSet>(0x02);
pub const TW_IOC_UNSETCALLOUT: u64 = iow::<u64>(0x03);
pub const TW_IOC_TIMEOUT: u64 = iowr::<TwTimeout>(0x04);
pub const TW_IOC_UNTIMEOUT: u64 = iow::<TwUntimeout>(0x05);
pub const TW_IOC_ADVANCE: u64 = iow::<u64>(0x06);
pub const TW_IOC_BATCH: u64 = iow::<TwBatch>(0x07);
pub const TW_IOC_STATS: u64 = ior::<TwStats>(0x08);
pub const TW_IOC_BENCH: u64 = iowr::<TwBench>(0x09);

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn request_numbers_match_the_c_header() {
        // Printed by a C program including include/uapi/timerwheel.h.
        assert_eq!(TW_IOC_INFO, 0x8018_B900);
        assert_eq!(TW_IOC_CONFIGURE, 0x4028_B901);
        assert_eq!(TW_IOC_SETCALLOUT, 0xC018_B902);
        assert_eq!(TW_IOC_UNSETCALLOUT, 0x4008_B903);
        assert_eq!(TW_IOC_TIMEOUT, 0xC020_B904);
        assert_eq!(TW_IOC_UNTIMEOUT, 0x4010_B905);
        assert_eq!(TW_IOC_ADVANCE, 0x4008_B906);
        assert_eq!(TW_IOC_BATCH, 0x4010_B907);
        assert_eq!(TW_IOC_STATS, 0x80F0_B908);
        assert_eq!(TW_IOC_BENCH, 0xC038_B909);
    }

    #[test]
    fn ioc_size_recovers_the_argument_size() {
        assert_eq!(ioc_size(TW_IOC_STATS), 240);
        assert_eq!(ioc_size(TW_IOC_BENCH), size_of::<TwBench>());
        assert_eq!(ioc_size(TW_IOC_UNSETCALLOUT), 8);
    }

    #[test]
    fn field_offsets_match_the_header() {
        assert_eq!(offset_of!(TwOp, handle), 32);
        assert_eq!(offset_of!(TwStats, memory_bytes), 96);
        assert_eq!(offset_of!(TwBench, elapsed_ns), 48);
        assert_eq!(offset_of!(TwConfig, tick_ns), 16);
    }
}
