// SPDX-License-Identifier: GPL-2.0

//! Shared by the integration tests: per-scheme configurations, and construction that panics,
//! naming the scheme and the configuration, if a scheme refuses one: every configuration made
//! here is valid for its scheme (the hashed wheels' slot count is a power of two, scheme 4's is
//! in range), so a refusal is a regression, never a reason to skip.

#![allow(dead_code)]

use wheel::callout::Callouts;
use wheel::{AnyScheme, Config, HostStorage, Scheme, SchemeKind};

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
        ..Default::default()
    }
}

/// The longest interval `kind` accepts under [`config`].
pub(crate) fn max_interval(kind: SchemeKind) -> u64 {
    match kind {
        SchemeKind::BasicWheel => WHEEL4_MAX,
        _ => wheel::MAX_INTERVAL - 1,
    }
}

/// A scheme of kind `kind` under [`config`]; panics if `new()` refuses it.
pub(crate) fn scheme(kind: SchemeKind, capacity: u32, start: u64) -> AnyScheme<HostStorage> {
    let config = config(kind, capacity, start);
    let s = AnyScheme::new(kind, &config)
        .unwrap_or_else(|e| panic!("{}: new({config:?}) failed: {e:?}", kind.name()));
    assert_eq!(s.kind(), kind);
    s
}

/// Callouts on `kind` under [`config`]; panics if `Callouts::new()` refuses it.
pub(crate) fn callouts(kind: SchemeKind, capacity: u32, start: u64) -> Callouts<HostStorage> {
    let config = config(kind, capacity, start);
    Callouts::new(kind, &config)
        .unwrap_or_else(|e| panic!("{}: Callouts::new({config:?}) failed: {e:?}", kind.name()))
}

/// Every scheme, with its kind; panics if one refuses its configuration.
pub(crate) fn backends(capacity: u32, start: u64) -> Vec<(SchemeKind, AnyScheme<HostStorage>)> {
    SchemeKind::ALL
        .into_iter()
        .map(|k| (k, scheme(k, capacity, start)))
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
