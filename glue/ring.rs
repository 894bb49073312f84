// SPDX-License-Identifier: GPL-2.0

//! The ring of expiry records that read(2) returns, and how a fired callout becomes one.

use kernel::prelude::*;

use crate::{
    params::{
        Buffer,
        KernelStorage, //
    },
    uapi::*,
    wheel::{
        callout::{
            Fired,
            Origin, //
        },
        Storage, //
    },
};

/// A bounded FIFO of expiry records, allocated once, at configuration.
///
/// Readers take records out (under the instance lock) before copying them to user space, so
/// that each record goes to exactly one reader however many read at once; a reader whose copy
/// fails puts the records it could not deliver back at the front.
///
/// # Invariants
///
/// `head < buf.len()` (or `buf` is empty) and `len <= buf.len()`.
pub(crate) struct Ring {
    buf: Buffer<tw_fired>,
    head: usize,
    len: usize,
}

impl Ring {
    /// A ring that holds nothing (before configuration).
    pub(crate) fn empty() -> Self {
        Ring {
            buf: Buffer::new(),
            head: 0,
            len: 0,
        }
    }

    /// A ring of `capacity` records, made in process context holding no lock, as the rest of
    /// an instance's storage ([`KernelStorage`]: a signal gives up, EINTR).
    pub(crate) fn new(capacity: u32) -> Result<Self> {
        let buf =
            KernelStorage::alloc(capacity as usize, |_| tw_fired::default()).map_err(errno)?;
        Ok(Ring {
            buf,
            head: 0,
            len: 0,
        })
    }

    /// Records waiting to be read.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether no record waits.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes allocated for the records.
    pub(crate) fn memory_bytes(&self) -> usize {
        self.buf.len() * core::mem::size_of::<tw_fired>()
    }

    /// Appends a record; `false` (and nothing stored) when the ring is full.
    pub(crate) fn push(&mut self, r: tw_fired) -> bool {
        let cap = self.buf.len();
        if self.len == cap {
            return false;
        }
        // No `%`: its divide-by-zero check (the ring may be empty) ends in a panic call that
        // objtool does not know as noreturn. `head + len < 2 * cap`.
        let mut at = self.head + self.len;
        if at >= cap {
            at -= cap;
        }
        self.buf[at] = r;
        self.len += 1;
        true
    }

    /// Moves up to `out.len()` of the oldest records into `out`; returns how many.
    pub(crate) fn take(&mut self, out: &mut [tw_fired]) -> usize {
        let n = out.len().min(self.len);
        for slot in out.iter_mut().take(n) {
            *slot = self.buf[self.head];
            self.head += 1;
            if self.head == self.buf.len() {
                self.head = 0;
            }
        }
        self.len -= n;
        n
    }

    /// Puts records taken with [`Ring::take`] but not delivered back at the front, in their
    /// order. Returns how many did not fit (the ring filled up meanwhile): those are lost.
    pub(crate) fn put_back(&mut self, recs: &[tw_fired]) -> usize {
        let cap = self.buf.len();
        let fit = recs.len().min(cap - self.len);
        for r in recs[..fit].iter().rev() {
            self.head = if self.head == 0 {
                cap - 1
            } else {
                self.head - 1
            };
            self.buf[self.head] = *r;
        }
        self.len += fit;
        recs.len() - fit
    }
}

/// The lateness histogram bucket of a callout processed `late` ticks after its deadline.
pub(crate) fn lateness_bucket(late: u64) -> usize {
    if late == 0 {
        0
    } else {
        ((u64::BITS - late.leading_zeros()) as usize).min(TW_LATENESS_BUCKETS as usize - 1)
    }
}

/// Turns a fired callout processed on tick `now` into a ring record, or a counted drop.
/// Returns whether it was stored.
pub(crate) fn record(ring: &mut Ring, stats: &mut tw_stats, fired: &Fired, now: u64) -> bool {
    let (cookie, arg, origin) = match fired.origin {
        Origin::Callout { cookie } => (cookie, 0, TW_ORIGIN_CALLOUT),
        Origin::Legacy { func, arg } => (func, arg, TW_ORIGIN_LEGACY),
    };
    let late = now.wrapping_sub(fired.deadline);
    stats.lateness[lateness_bucket(late)] += 1;
    stats.fired += 1;
    let stored = ring.push(tw_fired {
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

#[kunit_tests(rust_timerwheel_ring)]
mod tests {
    use super::*;

    fn rec(cookie: u64) -> tw_fired {
        tw_fired {
            cookie,
            ..tw_fired::default()
        }
    }

    #[test]
    fn lateness_buckets_are_powers_of_two() {
        assert_eq!(lateness_bucket(0), 0);
        assert_eq!(lateness_bucket(1), 1);
        assert_eq!(lateness_bucket(2), 2);
        assert_eq!(lateness_bucket(3), 2);
        assert_eq!(lateness_bucket(4), 3);
        assert_eq!(lateness_bucket(u64::MAX), TW_LATENESS_BUCKETS as usize - 1);
    }

    #[test]
    fn ring_is_fifo_and_bounded() {
        let mut ring = Ring::new(3).unwrap();
        for i in 0..3 {
            assert!(ring.push(rec(i)));
        }
        assert!(!ring.push(rec(9)));
        let mut out = [tw_fired::default(); 2];
        assert_eq!(ring.take(&mut out), 2);
        assert_eq!((out[0].cookie, out[1].cookie), (0, 1));
        assert!(ring.push(rec(3)));
        assert_eq!(ring.take(&mut out), 2);
        assert_eq!((out[0].cookie, out[1].cookie), (2, 3));
        assert!(ring.is_empty());
    }

    #[test]
    fn records_put_back_come_first_and_overflow_is_counted() {
        let mut ring = Ring::new(3).unwrap();
        ring.push(rec(0));
        ring.push(rec(1));
        let mut out = [tw_fired::default(); 2];
        assert_eq!(ring.take(&mut out), 2);
        ring.push(rec(2));
        ring.push(rec(3));
        // Room for one of the two taken: the older goes back first, the other is lost.
        assert_eq!(ring.put_back(&out), 1);
        let mut all = [tw_fired::default(); 3];
        assert_eq!(ring.take(&mut all), 3);
        assert_eq!((all[0].cookie, all[1].cookie, all[2].cookie), (0, 2, 3));
    }
}
