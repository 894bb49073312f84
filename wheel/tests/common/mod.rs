// SPDX-License-Identifier: GPL-2.0

//! Shared by the integration tests: per-scheme configurations, and construction that skips a
//! scheme still being written.

#![allow(dead_code)]

use wheel::callout::Callouts;
use wheel::{AnyScheme, Config, Error, HostStorage, Scheme, SchemeKind};

/// Scheme 4's `MaxInterval` in these tests: small enough that its range is exercised.
pub(crate) const WHEEL4_MAX: u64 = 4096;

/// Slots `M` of the hashed wheels (schemes 5 and 6).
pub(crate) const HASHED_SLOTS: u32 = 256;

/// A configuration for `kind`; `slots` means what `kind` makes it mean.
pub(crate) fn config(kind: SchemeKind, capacity: u32, start: u64) -> Config {
    let slots = match kind {
        SchemeKind::BasicWheel => WHEEL4_MAX as u32,
        _ => HASHED_SLOTS,
    };
    Config {
        capacity,
        slots,
        start,
    }
}

/// The longest interval `kind` accepts under [`config`].
pub(crate) fn max_interval(kind: SchemeKind) -> u64 {
    match kind {
        SchemeKind::BasicWheel => WHEEL4_MAX,
        _ => wheel::MAX_INTERVAL - 1,
    }
}

/// A scheme of kind `kind`, or `None` (with a note on stderr) while its file is a placeholder,
/// which refuses every configuration.
pub(crate) fn scheme(
    kind: SchemeKind,
    capacity: u32,
    start: u64,
) -> Option<AnyScheme<HostStorage>> {
    match AnyScheme::new(kind, &config(kind, capacity, start)) {
        Ok(s) => {
            assert_eq!(s.kind(), kind);
            Some(s)
        }
        Err(Error::Config) => {
            eprintln!("SKIP {}: not implemented yet (new() refuses)", kind.name());
            None
        }
        Err(e) => panic!("{}: new() failed: {e:?}", kind.name()),
    }
}

/// Callouts on `kind`, or `None` like [`scheme`].
pub(crate) fn callouts(
    kind: SchemeKind,
    capacity: u32,
    start: u64,
) -> Option<Callouts<HostStorage>> {
    match Callouts::new(kind, &config(kind, capacity, start)) {
        Ok(c) => Some(c),
        Err(Error::Config) => {
            eprintln!("SKIP {}: not implemented yet (new() refuses)", kind.name());
            None
        }
        Err(e) => panic!("{}: Callouts::new() failed: {e:?}", kind.name()),
    }
}

/// Every scheme that can be built, with its kind.
pub(crate) fn backends(capacity: u32, start: u64) -> Vec<(SchemeKind, AnyScheme<HostStorage>)> {
    SchemeKind::ALL
        .into_iter()
        .filter_map(|k| scheme(k, capacity, start).map(|s| (k, s)))
        .collect()
}

/// Ticks once and pops everything due, returning `(id, deadline)` pairs.
pub(crate) fn step(s: &mut AnyScheme<HostStorage>) -> Vec<(u64, u64)> {
    s.tick();
    drain(s)
}

/// Pops everything queued, returning `(id, deadline)` pairs.
pub(crate) fn drain(s: &mut AnyScheme<HostStorage>) -> Vec<(u64, u64)> {
    std::iter::from_fn(|| s.pop_expired())
        .map(|e| (e.id, e.deadline))
        .collect()
}

/// The op count for each backend in the property tests: `WHEEL_PROP_OPS`, or `default`.
pub(crate) fn prop_ops(default: u64) -> u64 {
    match std::env::var("WHEEL_PROP_OPS") {
        Ok(v) => v
            .replace('_', "")
            .parse()
            .unwrap_or_else(|_| panic!("WHEEL_PROP_OPS={v:?} is not a number")),
        Err(_) => default,
    }
}

/// The base seed of the property tests: `WHEEL_PROP_SEED`, or a fixed one.
pub(crate) fn prop_seed() -> u64 {
    match std::env::var("WHEEL_PROP_SEED") {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("WHEEL_PROP_SEED={v:?} is not a number")),
        Err(_) => 0x5eed_0003_676c_b12a,
    }
}
