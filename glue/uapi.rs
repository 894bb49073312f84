// SPDX-License-Identifier: GPL-2.0

//! The uapi: `include/uapi/timerwheel.h`, through its Rust twin `include/uapi/timerwheel.rs`
//! (one file, also compiled into the `fig9` tool, whose build checks it against the header).
//!
//! This room adds what only the kernel side needs: the ioctl numbers in the kernel's `_IOC`
//! encoding (which the same build checks against the header's, so each stays in the form it
//! reads: `_IOR::<T>(TW_IOC_MAGIC, nr)` and the like), the byte-level marker traits that let
//! [`UserSlice`](kernel::uaccess::UserSlice) copy the structures, and the errno of each wheel
//! error.

use core::mem::size_of;
use kernel::{
    ioctl::{
        _IOR,
        _IOW,
        _IOWR, //
    },
    prelude::*,
    transmute::{
        AsBytes,
        FromBytes, //
    },
};

use crate::wheel;

#[path = "../include/uapi/timerwheel.rs"]
mod defs;

pub(crate) use defs::*;

pub(crate) const TW_IOC_INFO: u32 = _IOR::<tw_info>(TW_IOC_MAGIC, 0x00);
pub(crate) const TW_IOC_CONFIGURE: u32 = _IOW::<tw_config>(TW_IOC_MAGIC, 0x01);
pub(crate) const TW_IOC_SETCALLOUT: u32 = _IOWR::<tw_set>(TW_IOC_MAGIC, 0x02);
pub(crate) const TW_IOC_UNSETCALLOUT: u32 = _IOW::<u64>(TW_IOC_MAGIC, 0x03);
pub(crate) const TW_IOC_TIMEOUT: u32 = _IOWR::<tw_timeout>(TW_IOC_MAGIC, 0x04);
pub(crate) const TW_IOC_UNTIMEOUT: u32 = _IOW::<tw_untimeout>(TW_IOC_MAGIC, 0x05);
pub(crate) const TW_IOC_ADVANCE: u32 = _IOW::<u64>(TW_IOC_MAGIC, 0x06);
pub(crate) const TW_IOC_BATCH: u32 = _IOW::<tw_batch>(TW_IOC_MAGIC, 0x07);
pub(crate) const TW_IOC_STATS: u32 = _IOR::<tw_stats>(TW_IOC_MAGIC, 0x08);
pub(crate) const TW_IOC_BENCH: u32 = _IOWR::<tw_bench>(TW_IOC_MAGIC, 0x09);
pub(crate) const TW_IOC_RESET: u32 = _IOW::<tw_reset>(TW_IOC_MAGIC, 0x0a);
pub(crate) const TW_IOC_QUERY: u32 = _IOWR::<tw_query>(TW_IOC_MAGIC, 0x0b);
pub(crate) const TW_IOC_BENCH_PAIR: u32 = _IOWR::<tw_bench_pair>(TW_IOC_MAGIC, 0x0c);

/// Marks uapi structures as plain bytes, after checking that they have no padding.
macro_rules! plain_bytes {
    ($($t:ty = $words:expr),* $(,)?) => {$(
        const _: () = assert!(size_of::<$t>() == 8 * $words, "uapi struct has padding");
        // SAFETY: `$t` is `repr(C)` and made only of fixed-width integers (and arrays of them),
        // ordered so that there is no padding (its size is the sum of its fields, asserted
        // above): every byte pattern is a valid value.
        unsafe impl FromBytes for $t {}
        // SAFETY: As above: no padding, so every byte of a value is initialised.
        unsafe impl AsBytes for $t {}
    )*};
}

plain_bytes! {
    tw_info = 6,
    tw_config = 6,
    tw_set = 4,
    tw_reset = 3,
    tw_query = 4,
    tw_timeout = 5,
    tw_untimeout = 2,
    tw_op = 5,
    tw_batch = 2,
    tw_stats = 20 + TW_LATENESS_BUCKETS as usize,
    tw_fired = 6,
    tw_bench = 8,
    tw_bench_pair = 16,
}

/// The errno of a failed wheel operation, as documented in the uapi header.
pub(crate) fn errno(e: wheel::Error) -> Error {
    match e {
        wheel::Error::Full => ENOSPC,
        wheel::Error::Stale | wheel::Error::NotFound => ENOENT,
        wheel::Error::Interval | wheel::Error::Config => EINVAL,
        wheel::Error::Range => ERANGE,
        wheel::Error::NoMemory => ENOMEM,
        wheel::Error::Interrupted => EINTR,
        // The glue serialises placements (`Core::slow`), so this is not seen by users.
        wheel::Error::Busy => EBUSY,
    }
}

#[kunit_tests(rust_timerwheel_uapi)]
mod tests {
    use super::*;

    #[test]
    fn errnos_match_the_header() {
        assert_eq!(errno(wheel::Error::Full), ENOSPC);
        assert_eq!(errno(wheel::Error::Stale), ENOENT);
        assert_eq!(errno(wheel::Error::NotFound), ENOENT);
        assert_eq!(errno(wheel::Error::Interval), EINVAL);
        assert_eq!(errno(wheel::Error::Range), ERANGE);
        assert_eq!(errno(wheel::Error::NoMemory), ENOMEM);
        assert_eq!(errno(wheel::Error::Interrupted), EINTR);
    }

    #[test]
    fn ioctl_numbers_are_distinct() {
        let all = [
            TW_IOC_INFO,
            TW_IOC_CONFIGURE,
            TW_IOC_SETCALLOUT,
            TW_IOC_UNSETCALLOUT,
            TW_IOC_TIMEOUT,
            TW_IOC_UNTIMEOUT,
            TW_IOC_ADVANCE,
            TW_IOC_BATCH,
            TW_IOC_STATS,
            TW_IOC_BENCH,
            TW_IOC_RESET,
            TW_IOC_QUERY,
            TW_IOC_BENCH_PAIR,
        ];
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
    }
}
