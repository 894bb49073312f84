// SPDX-License-Identifier: GPL-2.0

//! Differential property test: every scheme against the reference model of `src/model.rs`,
//! driven by the same seeded random calls (see that file for what is compared, on every call).
//!
//! The calls include in-place reschedules, ranged starts, bounded advances on either clock with
//! random small budgets (in every other run, budgets of a unit or a few on every call) and calls
//! interleaved between them, placements left half done and stopped, and the model checks that
//! `next_work` is never later than the earliest deadline.
//!
//! By default each backend runs [`DEFAULT_OPS`] calls spread over [`RUNS`] runs with different
//! capacities and starting clocks (0, just below 2^32, just below 2^64, random).
//! `WHEEL_PROP_OPS=10000000` runs more, `WHEEL_PROP_SEED=n` other sequences. On divergence the
//! test panics with the seed, backend, run, call index, the model's state and the last calls.

mod common;

use common::{max_interval, prop_ops, prop_seed, HASHED_SLOTS, WHEEL4_MAX};
use std::io::Write;
use std::time::Instant;
use wheel::model::{Band, Driver, Foresight, Profile, Stats};
use wheel::rng::Rng;
use wheel::{AnyScheme, Config, HostStorage, Scheme, SchemeKind};

/// Calls per backend in a plain `cargo test`.
const DEFAULT_OPS: u64 = 1_000_000;

/// Runs per backend; each has its own configuration and seed.
const RUNS: u64 = 8;

/// A mix of scales: mostly short, some up to a wheel's span and beyond, some huge, a few on
/// the edges of scheme 4's range, of the hashed wheels' turn and of powers of two.
const INTERVALS: &[(u64, Band)] = &[
    (35, Band::Upto(64)),
    (15, Band::Upto(256)),
    (20, Band::Upto(4096)),
    (10, Band::Upto(1 << 20)),
    (6, Band::Between(1 << 20, 1 << 40)),
    (3, Band::Longest),
    (2, Band::Between(WHEEL4_MAX - 1, WHEEL4_MAX + 1)),
    (2, Band::Turns(HASHED_SLOTS as u64)),
    (5, Band::Pow2Edges),
];

/// Capacity and starting clock of run `run`.
fn run_config(kind: SchemeKind, run: u64, rng: &mut Rng) -> Config {
    let (capacity, start) = match run % RUNS {
        0 => (16, 0),
        1 => (512, 0),
        2 => (512, (1 << 32) - rng.within(0, 100_000)),
        3 => (2048, u64::MAX - 1000),
        4 => (64, u64::MAX - rng.within(0, 1 << 20)),
        5 => (1024, rng.next_u64()),
        6 => (256, (1 << 32) - 1000),
        _ => (2048, u64::MAX - 100_000),
    };
    // Scheme 1 touches every timer on every tick: keep it moderate.
    let capacity = match kind {
        SchemeKind::Straightforward => capacity.min(512),
        _ => capacity,
    };
    // Generations from one end of their 40 bits to the other, so that runs wrap them too.
    let generation = match run % 3 {
        0 => 1,
        1 => (1 << 40) - rng.within(1, 64),
        _ => rng.next_u64(),
    };
    // The hashed wheels on one slot and on two, in two of the runs: every timer shares the
    // clock's slot, or its group of slots, so that stops empty them while a tick is half done.
    let config = common::config(kind, capacity, start);
    let slots = match (kind, run % RUNS) {
        (SchemeKind::HashedSorted | SchemeKind::HashedUnsorted, 0) => 1,
        (SchemeKind::HashedSorted | SchemeKind::HashedUnsorted, 6) => 2,
        _ => config.slots,
    };
    Config {
        generation,
        slots,
        ..config
    }
}

fn differential(kind: SchemeKind) {
    let total = prop_ops(DEFAULT_OPS);
    let base_seed = prop_seed();
    let per_run = total.div_ceil(RUNS);
    let began = Instant::now();
    let profile = Profile {
        intervals: INTERVALS,
        range: (kind == SchemeKind::BasicWheel).then_some(WHEEL4_MAX),
        foresight: Foresight::Partial,
        check_every: u64::MAX,
        reach: 1 << 34,
        tiny_budgets: false,
    };
    let mut all = Stats::default();
    for run in 0..RUNS {
        let seed = base_seed ^ run.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (kind as u64) << 56;
        let mut rng = Rng::new(seed);
        let config = run_config(kind, run, &mut rng);
        let mut sut = AnyScheme::<HostStorage>::new(kind, &config)
            .unwrap_or_else(|e| panic!("{}: new({config:?}) failed: {e:?}", kind.name()));
        assert_eq!(sut.capacity(), config.capacity as usize);
        assert_eq!(
            max_interval(kind),
            profile.range.unwrap_or(wheel::MAX_INTERVAL - 1)
        );
        let label = format!(
            "{}, base seed {base_seed:#x} (rerun: WHEEL_PROP_SEED={base_seed} cargo test --test \
             differential), run {run} seed {seed:#x}, {config:?}",
            kind.name()
        );
        // Every other run on budgets of a unit or a few: bounds left loose where they run out.
        let profile = Profile {
            tiny_budgets: run % 2 == 1,
            ..profile
        };
        let mut d = Driver::new(
            &mut sut,
            seed,
            profile,
            |_: &AnyScheme<HostStorage>| {},
            label,
        );
        d.run(per_run);
        all.add(&d.stats);
    }
    // Written straight to stderr so that the count shows without --nocapture.
    let _ = writeln!(
        std::io::stderr(),
        "differential {}: {} ops in {RUNS} runs, {:.1?} ({:?}), seed {base_seed:#x}",
        kind.name(),
        all.ops,
        began.elapsed(),
        all,
    );
    assert!(all.ops >= total);
}

#[test]
fn scheme1_straightforward() {
    differential(SchemeKind::Straightforward);
}

#[test]
fn scheme2_ordered_list() {
    differential(SchemeKind::OrderedList);
}

#[test]
fn scheme3_heap() {
    differential(SchemeKind::Heap);
}

#[test]
fn scheme4_basic_wheel() {
    differential(SchemeKind::BasicWheel);
}

#[test]
fn scheme5_hashed_sorted() {
    differential(SchemeKind::HashedSorted);
}

#[test]
fn scheme6_hashed_unsorted() {
    differential(SchemeKind::HashedUnsorted);
}

#[test]
fn scheme7_hierarchical() {
    differential(SchemeKind::Hierarchical);
}
