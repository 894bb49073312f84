// SPDX-License-Identifier: GPL-2.0

//! The behavioural suite: the guarantees at the top of `src/wheel/mod.rs`, checked one by one
//! against every scheme in `SchemeKind::ALL` (one test set, run once per backend, like
//! kselftest's `FIXTURE_VARIANT`). A scheme that refuses the suite's configuration fails it
//! (`common::scheme` panics, naming it), and `every_scheme_is_built` checks that all seven run.

mod common;

use common::{backends, drain, max_interval, step, HASHED_SLOTS, WHEEL4_MAX};
use std::collections::HashMap;
use wheel::rng::Rng;
use wheel::{
    Advanced, AnyScheme, Clock, Config, Error, Handle, HostStorage, NextExpiry, Scheme, SchemeKind,
    Work, MAX_INTERVAL, MAX_SEARCH_WORDS,
};

#[test]
fn every_scheme_is_built() {
    let built: Vec<SchemeKind> = backends(4, 0).into_iter().map(|(k, _)| k).collect();
    assert_eq!(built, SchemeKind::ALL, "some schemes are placeholders");
}

/// Starts one timer per interval, with ids not yet in `expected`, and records when each is
/// due.
fn fire_all(s: &mut impl Scheme, intervals: &[u64], expected: &mut HashMap<u64, u64>) {
    let first = expected.len() as u64;
    for (k, &i) in intervals.iter().enumerate() {
        let id = first + k as u64 + 1_000_000;
        let h = s.start(i, id);
        assert!(h.is_ok(), "{:?}: start({i}) failed: {h:?}", s.kind());
        assert_eq!(expected.insert(id, s.now().wrapping_add(i)), None);
    }
}

/// Ticks, draining every tick, until every timer in `expected` has fired — each on its
/// deadline, once.
fn run_until_empty(kind: SchemeKind, s: &mut impl Scheme, expected: &mut HashMap<u64, u64>) {
    let mut guard: u64 = 0;
    while !expected.is_empty() {
        s.tick();
        let now = s.now();
        while let Some(e) = s.pop_expired() {
            assert_eq!(
                e.deadline,
                now,
                "{}: {e:?} popped on tick {now}",
                kind.name()
            );
            let want = expected.remove(&e.id);
            assert_eq!(
                want,
                Some(now),
                "{}: {e:?} unexpected on tick {now}",
                kind.name()
            );
        }
        guard += 1;
        assert!(guard < 1 << 23, "{}: {expected:?} never fired", kind.name());
    }
    assert_eq!(s.len(), 0, "{}: timers left over", kind.name());
}

#[test]
fn fires_exactly_on_deadline_once() {
    // Edges of 2^k-slot levels and of the hashed wheels' M, below and above.
    let short: Vec<u64> = [1, 2, 3, 7, 8, 9, 63, 64, 65, 255, 256, 257, 511, 512, 513]
        .into_iter()
        .chain([1000, 1023, 1024, 1025, 4095, 4096])
        .collect();
    let long: Vec<u64> = [4097, 16383, 16384, 16385, 65535, 65536, 65537, 100_000]
        .into_iter()
        .chain([(1 << 18) + 1, (1 << 20) - 1, 1 << 20, (1 << 22) + 1])
        .collect();
    for (kind, mut s) in backends(128, 0) {
        let fits = |i: &u64| *i <= max_interval(kind);
        let set: Vec<u64> = short.iter().chain(&long).copied().filter(fits).collect();
        let mut expected = HashMap::new();
        fire_all(&mut s, &set, &mut expected);
        run_until_empty(kind, &mut s, &mut expected);
        let mut s = common::scheme(kind, 128, 12_345);
        // Again, started off every boundary.
        for _ in 0..777 {
            s.tick();
        }
        fire_all(&mut s, &set, &mut expected);
        run_until_empty(kind, &mut s, &mut expected);
    }
}

#[test]
fn interval_in_the_middle_of_a_run() {
    // Timers started every tenth tick of a long run, each with its own interval.
    for (kind, mut s) in backends(512, 1 << 20) {
        let mut expected = HashMap::new();
        let mut id = 0u64;
        for t in 0..5000u64 {
            if t % 10 == 0 {
                let i = 1 + (t * 7919) % max_interval(kind).min(3000);
                s.start(i, id).unwrap();
                expected.insert(id, s.now() + i);
                id += 1;
            }
            s.tick();
            let now = s.now();
            for (id, deadline) in drain(&mut s) {
                assert_eq!(deadline, now, "{}", kind.name());
                assert_eq!(expected.remove(&id), Some(now), "{} id {id}", kind.name());
            }
        }
        run_until_empty(kind, &mut s, &mut expected);
    }
}

#[test]
fn stopped_never_fires_even_when_queued() {
    for (kind, mut s) in backends(16, 0) {
        let name = kind.name();
        let h: Vec<Handle> = (0..6).map(|id| s.start(5, id).unwrap()).collect();
        assert_eq!(s.stop(h[0]), Ok(0), "{name}");
        assert_eq!(s.stop(h[1]), Ok(1), "{name}");
        for _ in 0..5 {
            s.tick();
        }
        assert_eq!(s.queued(), 4, "{name}");
        assert_eq!(s.stop(h[4]), Ok(4), "{name}: stop a queued timer");
        assert_eq!(s.queued(), 3, "{name}");
        assert_eq!(s.len(), 3, "{name}");
        let mut fired: Vec<u64> = drain(&mut s).into_iter().map(|(id, _)| id).collect();
        fired.sort();
        assert_eq!(fired, [2, 3, 5], "{name}");
        // Stopped in the middle of draining.
        let h: Vec<Handle> = (10..14).map(|id| s.start(1, id).unwrap()).collect();
        s.tick();
        let first = s.pop_expired().unwrap();
        for (k, &hk) in h.iter().enumerate() {
            if hk != first.handle && k % 2 == 0 {
                s.stop(hk).unwrap();
            }
        }
        let mut rest: Vec<u64> = drain(&mut s).into_iter().map(|(id, _)| id).collect();
        rest.sort();
        // All but the one popped and the even ones stopped.
        let expect: Vec<u64> = (10..14)
            .filter(|&id| id % 2 == 1 && id != first.id)
            .collect();
        assert_eq!(rest, expect, "{name}");
        for _ in 0..10 {
            assert!(step(&mut s).is_empty(), "{name}");
        }
        assert!(s.is_empty(), "{name}");
    }
}

#[test]
fn same_tick_all_before_next_tick() {
    for (kind, mut s) in backends(64, 1000) {
        let name = kind.name();
        for id in 0..10 {
            s.start(3, 100 + id).unwrap();
            s.start(2, id).unwrap();
        }
        for _ in 0..3 {
            s.tick();
        }
        assert_eq!(s.queued(), 20, "{name}");
        let order = drain(&mut s);
        assert!(
            order[..10].iter().all(|&(id, d)| id < 100 && d == 1002),
            "{name}: {order:?}"
        );
        assert!(
            order[10..].iter().all(|&(id, d)| id >= 100 && d == 1003),
            "{name}: {order:?}"
        );
        // A partial pop is carried ahead of the next tick's timers.
        for id in 0..4 {
            s.start(1, id).unwrap();
            s.start(2, 100 + id).unwrap();
        }
        s.tick();
        assert_eq!(s.pop_expired().map(|e| e.deadline), Some(1004), "{name}");
        s.tick();
        let order = drain(&mut s);
        let deadlines: Vec<u64> = order.iter().map(|&(_, d)| d).collect();
        assert_eq!(
            deadlines,
            [1004, 1004, 1004, 1005, 1005, 1005, 1005],
            "{name}"
        );
    }
}

#[test]
fn rearm_during_expiry() {
    for (kind, mut s) in backends(16, 0) {
        let name = kind.name();
        let h: Vec<Handle> = (0..4).map(|id| s.start(1, id).unwrap()).collect();
        s.tick();
        let first = s.pop_expired().unwrap();
        // The callback re-arms itself, arms a far one, and cancels a sibling already due.
        s.start(1, first.id).unwrap();
        s.start(3, 50).unwrap();
        let victim = h.iter().position(|&x| x != first.handle).unwrap();
        assert_eq!(s.stop(h[victim]), Ok(victim as u64), "{name}");
        let rest = drain(&mut s);
        assert_eq!(rest.len(), 2, "{name}: {rest:?}");
        assert!(rest.iter().all(|&(_, d)| d == 1), "{name}: {rest:?}");
        assert_eq!(step(&mut s), [(first.id, 2)], "{name}");
        assert!(step(&mut s).is_empty(), "{name}");
        assert_eq!(step(&mut s), [(50, 4)], "{name}");
        // Re-arming with the same deadline as the queue being drained is impossible: the
        // shortest interval is one tick, so it lands on the next tick.
        s.start(1, 7).unwrap();
        s.tick();
        let e = s.pop_expired().unwrap();
        s.start(1, e.id).unwrap();
        assert_eq!(s.pop_expired(), None, "{name}");
        assert_eq!(step(&mut s), [(7, 6)], "{name}");
    }
}

#[test]
fn full_table_refuses_and_changes_nothing() {
    for (kind, mut s) in backends(8, 0) {
        let name = kind.name();
        for id in 0..8 {
            s.start(id + 1, id).unwrap();
        }
        let next = s.next_expiry();
        for i in [1, 5, 100, 4000] {
            assert_eq!(s.start(i, 99), Err(Error::Full), "{name}");
        }
        assert_eq!(
            (s.len(), s.queued(), s.next_expiry()),
            (8, 0, next),
            "{name}"
        );
        // Queued timers still hold their entries.
        s.tick();
        assert_eq!(s.queued(), 1, "{name}");
        assert_eq!(s.start(1, 99), Err(Error::Full), "{name}");
        assert_eq!(drain(&mut s), [(0, 1)], "{name}");
        s.start(7, 99).unwrap();
        assert_eq!(s.start(1, 100), Err(Error::Full), "{name}");
        let mut fired = Vec::new();
        for _ in 0..8 {
            fired.extend(step(&mut s));
        }
        let mut want: Vec<(u64, u64)> = (1..8).map(|id| (id, id + 1)).collect();
        want.push((99, 8));
        fired.sort_by_key(|&(id, d)| (d, id));
        want.sort_by_key(|&(id, d)| (d, id));
        assert_eq!(fired, want, "{name}");
        assert!(s.is_empty(), "{name}");
    }
}

#[test]
fn stale_handles_are_refused() {
    for (kind, mut s) in backends(4, 0) {
        let name = kind.name();
        let a = s.start(2, 1).unwrap();
        assert_eq!(s.stop(a), Ok(1), "{name}");
        assert_eq!(s.stop(a), Err(Error::Stale), "{name}: stopped twice");
        let b = s.start(1, 2).unwrap();
        step(&mut s);
        assert_eq!(s.stop(b), Err(Error::Stale), "{name}: fired");
        // Reused entries get a new generation; the old handle must not reach the new timer.
        let fresh: Vec<Handle> = (0..4).map(|id| s.start(3, 10 + id).unwrap()).collect();
        for old in [a, b] {
            assert_eq!(s.stop(old), Err(Error::Stale), "{name}: reused entry");
        }
        for bogus in [
            Handle::new(4, 0),
            Handle::new(1000, 0),
            Handle::new(u32::MAX, 0),
            Handle::from_raw(u64::MAX),
            Handle::new(fresh[0].index(), fresh[0].generation().wrapping_add(1)),
        ] {
            assert_eq!(s.stop(bogus), Err(Error::Stale), "{name}: {bogus:?}");
        }
        assert_eq!(s.len(), 4, "{name}");
        let h = Handle::from_raw(fresh[2].to_raw());
        assert_eq!(s.stop(h), Ok(12), "{name}: round trip through raw");
        let mut fired: Vec<u64> = (0..3)
            .flat_map(|_| step(&mut s))
            .map(|(id, _)| id)
            .collect();
        fired.sort();
        assert_eq!(fired, [10, 11, 13], "{name}");
    }
}

/// Starts timers on a clock created at `start`, with deadlines on both sides of a wrap.
fn wraps(start: u64) {
    let intervals = [1, 50, 99, 100, 101, 150, 999, 1000, 1001, 1500, 2000, 4096];
    for (kind, mut s) in backends(64, start) {
        let name = kind.name();
        let mut expected = HashMap::new();
        fire_all(&mut s, &intervals, &mut expected);
        run_until_empty(kind, &mut s, &mut expected);
        assert_eq!(s.now(), start.wrapping_add(4096), "{name}");
        // Started after the wrap, too.
        fire_all(&mut s, &intervals, &mut expected);
        run_until_empty(kind, &mut s, &mut expected);
        match s.next_expiry() {
            NextExpiry::Idle => {}
            other => panic!("{name}: {other:?} with nothing pending"),
        }
    }
}

#[test]
fn clock_wraps_near_2_pow_32() {
    wraps((1 << 32) - 1000);
}

#[test]
fn clock_wraps_near_2_pow_64() {
    wraps(u64::MAX - 1000);
}

#[test]
fn clock_wraps_at_the_last_tick() {
    for (kind, mut s) in backends(4, u64::MAX) {
        s.start(1, 1).unwrap();
        s.start(2, 2).unwrap();
        assert_eq!(step(&mut s), [(1, 0)], "{}", kind.name());
        assert_eq!(step(&mut s), [(2, 1)], "{}", kind.name());
    }
}

#[test]
fn intervals_are_validated() {
    for (kind, mut s) in backends(8, 5) {
        let name = kind.name();
        for bad in [0, MAX_INTERVAL, MAX_INTERVAL + 1, u64::MAX] {
            assert_eq!(s.start(bad, 0), Err(Error::Interval), "{name}: {bad}");
        }
        let longest = MAX_INTERVAL - 1;
        if kind == SchemeKind::BasicWheel {
            assert_eq!(s.start(longest, 0), Err(Error::Range), "{name}");
            assert_eq!(s.start(WHEEL4_MAX + 1, 0), Err(Error::Range), "{name}");
            assert_eq!(s.start(1 << 40, 0), Err(Error::Range), "{name}");
            assert_eq!(s.len(), 0, "{name}: a refused start changed something");
            s.start(WHEEL4_MAX, 1).unwrap();
        } else {
            // Far beyond anything a wheel covers: accepted, and stoppable.
            let h = s.start(longest, 1).unwrap();
            s.start(1 << 40, 2).unwrap();
            assert_eq!(s.stop(h), Ok(1), "{name}");
        }
        assert_eq!(s.len(), 1, "{name}");
    }
}

#[test]
fn scheme4_fires_at_max_interval() {
    for (kind, mut s) in backends(8, 77) {
        if kind != SchemeKind::BasicWheel {
            continue;
        }
        let mut expected = HashMap::new();
        fire_all(&mut s, &[WHEEL4_MAX, WHEEL4_MAX - 1, 1], &mut expected);
        assert_eq!(s.start(WHEEL4_MAX + 1, 9), Err(Error::Range));
        run_until_empty(kind, &mut s, &mut expected);
    }
}

#[test]
fn far_timers_are_held_and_stopped() {
    // Timers far beyond a wheel's span (many rounds of scheme 6, the top level of scheme 7)
    // sit through ticks without firing and stop cleanly.
    for (kind, mut s) in backends(64, (1 << 32) - 3) {
        let name = kind.name();
        let far = [
            1u64 << 20,
            1 << 32,
            1 << 40,
            MAX_INTERVAL - 1,
            MAX_INTERVAL - 1000,
        ];
        let hs: Vec<Handle> = far
            .iter()
            .filter(|&&i| i <= max_interval(kind))
            .enumerate()
            .map(|(id, &i)| s.start(i, id as u64).unwrap())
            .collect();
        for _ in 0..(4 * u64::from(HASHED_SLOTS) + 10) {
            assert!(step(&mut s).is_empty(), "{name}");
        }
        for (id, h) in hs.iter().enumerate() {
            assert_eq!(s.stop(*h), Ok(id as u64), "{name}");
        }
        assert!(s.is_empty(), "{name}");
    }
}

#[test]
fn accounting() {
    for (kind, mut s) in backends(10, 0) {
        let name = kind.name();
        assert_eq!(s.capacity(), 10, "{name}");
        assert!(s.memory_bytes() >= 10 * 8, "{name}: {}", s.memory_bytes());
        assert_eq!(s.next_expiry(), NextExpiry::Idle, "{name}");
        let h = s.start(5, 0).unwrap();
        s.start(3, 1).unwrap();
        assert!(
            matches!(s.next_expiry(), NextExpiry::At(3) | NextExpiry::Unknown),
            "{name}: {:?}",
            s.next_expiry()
        );
        assert_eq!((s.len(), s.queued(), s.is_empty()), (2, 0, false), "{name}");
        for _ in 0..3 {
            s.tick();
        }
        assert_eq!((s.len(), s.queued()), (2, 1), "{name}");
        assert!(
            matches!(s.next_expiry(), NextExpiry::At(5) | NextExpiry::Unknown),
            "{name}: {:?}",
            s.next_expiry()
        );
        s.stop(h).unwrap();
        assert_eq!(
            s.next_expiry(),
            NextExpiry::Idle,
            "{name}: only a queued one is left"
        );
        assert_eq!(drain(&mut s), [(1, 3)], "{name}");
        assert!(s.is_empty(), "{name}");
        assert_eq!(s.kind(), kind);
    }
}

#[test]
fn configs_are_checked() {
    for kind in SchemeKind::ALL {
        let mut c = common::config(kind, 0, 0);
        assert!(wheel::AnyScheme::<wheel::HostStorage>::new(kind, &c).is_err());
        c.capacity = u32::MAX;
        assert!(wheel::AnyScheme::<wheel::HostStorage>::new(kind, &c).is_err());
    }
}

// ---- Bounded work, the tickless clock, reschedules and ranges. ----

/// Advances `s` to `target` within budgets of `budget` units (`None`: unlimited) on `clock`,
/// popping everything after each call; the `(tick, id)` popped, sorted, and how many calls it
/// took.
fn run_to(
    s: &mut impl Scheme,
    target: u64,
    clock: Clock,
    budget: Option<usize>,
) -> (Vec<(u64, u64)>, usize) {
    let mut out = Vec::new();
    let mut calls = 0;
    loop {
        let mut work = budget.map_or(Work::unlimited(), Work::new);
        let r = s.advance(target, clock, &mut work);
        calls += 1;
        assert!(work.done() > 0 || r != Advanced::OutOfWork, "no progress");
        if let Some(limit) = budget {
            // One unit past the limit at most, one heap sift, or one search of the occupancy
            // bitmap.
            let over = match s.kind() {
                SchemeKind::Heap => 10,
                kind => search_words(kind).max(1),
            };
            assert!(
                work.done() <= limit + over,
                "{} units done of {limit}",
                work.done()
            );
        }
        out.extend(std::iter::from_fn(|| s.pop_expired()).map(|e| (e.deadline, e.id)));
        if r == Advanced::Reached {
            out.sort();
            return (out, calls);
        }
    }
}

#[test]
fn a_sparse_clock_sleeps_until_the_deadline() {
    for (kind, mut s) in backends(16, 7) {
        let name = kind.name();
        let ahead = max_interval(kind).min(10_000);
        s.start(ahead, 1).unwrap();
        let mut calls = 0;
        while s.queued() == 0 {
            let Some(t) = s.next_work() else {
                panic!("{name}: nothing pending?");
            };
            assert!(
                t.wrapping_sub(s.now()) <= ahead,
                "{name}: next_work {t} late"
            );
            let mut work = Work::new(256);
            while s.advance(t, Clock::Tickless, &mut work) == Advanced::OutOfWork {
                work = Work::new(256);
            }
            calls += 1;
        }
        assert!(calls <= 2, "{name}: {calls} wakeups for one timer");
        assert_eq!(
            s.pop_expired().map(|e| e.deadline),
            Some(7 + ahead),
            "{name}"
        );
        assert_eq!(s.next_work(), None, "{name}");
    }
}

/// Cancelling the next timer, or pushing it back past the others, moves next work on to the
/// timer that is next now, so that a tickless clock does not wake for one that is gone (scheme 1
/// while at most 64 timers are pending, as here). Scheme 7 keeps a bound per list above level 0
/// that only a migration raises, and leaves a timer pushed back where it is, put off, for its
/// list's migration to file it (the paper's reset stays a store or two): its next work within a
/// budget looks at what the lists hold. Scheme 6 keeps the bound of a slot left busy, here by a
/// timer a few turns later on the same slot: `tighten_within`, which a caller makes after
/// cancelling the timer its clock is armed for, raises it.
#[test]
fn cancelling_or_pushing_back_the_next_timer_moves_next_work_on() {
    let turns = 3 * u64::from(HASHED_SLOTS);
    for start in [7, u64::MAX - 100] {
        for (near, far) in [
            (500, 4000),
            (50, 3000),
            (70, 200),
            (70, 100),
            (70, 70 + turns),
            (1, 2),
        ] {
            for push_back in [false, true] {
                for (kind, mut s) in backends(16, start) {
                    let name = kind.name();
                    let far = far.min(max_interval(kind) - 1);
                    s.start(far, 1).unwrap();
                    let h = s.start(near, 2).unwrap();
                    assert_eq!(s.next_work(), Some(start.wrapping_add(near)), "{name}");
                    match push_back {
                        false => assert_eq!(s.stop(h), Ok(2), "{name}"),
                        true => s.reschedule(h, far + 1, far + 1).unwrap(),
                    }
                    let what = match push_back {
                        true => "pushing back",
                        false => "cancelling",
                    };
                    let slot_busy = (far - near) % u64::from(HASHED_SLOTS) == 0;
                    if slot_busy {
                        s.tighten_within(&mut Work::unlimited());
                    }
                    if kind != SchemeKind::Hierarchical {
                        assert_eq!(
                            s.next_work(),
                            Some(start.wrapping_add(far)),
                            "{name}: next work after {what} the timer {near} ticks ahead, {far} next",
                        );
                    }
                    assert_eq!(
                        s.next_work_within(&mut Work::unlimited()),
                        Some(start.wrapping_add(far)),
                        "{name}: next work within after {what} the timer {near} ticks ahead, {far} next",
                    );
                }
            }
        }
    }
}

/// How far past its budget a step may take a bounded call of a scheme beyond its one unit: the
/// words of one search of the occupancy bitmap, in the wheels that search one.
fn search_words(kind: SchemeKind) -> usize {
    match kind {
        SchemeKind::BasicWheel | SchemeKind::HashedSorted | SchemeKind::HashedUnsorted => {
            MAX_SEARCH_WORDS
        }
        _ => 0,
    }
}

#[test]
fn next_work_within_a_budget_spends_no_more_and_stays_a_lower_bound() {
    for (kind, mut s) in backends(1024, 3) {
        let name = kind.name();
        // A thousand timers, each on its own slot of the hashed wheels (256 slots) more than a
        // turn away, and far from the clock on the others: a whole search (schemes 5 and 6)
        // looks at every busy slot.
        let far = max_interval(kind).min(20_000);
        for i in 0..1000u64 {
            s.start(far - i * 3, i).unwrap();
        }
        let earliest = s.now() + far - 999 * 3;
        for limit in [0, 1, 2, 5, 17, 64, 1000] {
            let mut work = Work::new(limit);
            let t = s.next_work_within(&mut work).unwrap();
            assert!(
                work.done() >= 1 && work.done() <= limit.max(1) + search_words(kind),
                "{name}: {} units spent within {limit}",
                work.done()
            );
            let ahead = t.wrapping_sub(s.now());
            assert!(
                ahead >= 1 && ahead <= earliest - s.now(),
                "{name}: next_work_within({limit}) {t}, earliest {earliest}"
            );
        }
        // The hashed wheels' bounds are exact here: with room for the whole search, so is the
        // answer (`next_work`'s own budget is too small for it on scheme 5).
        if matches!(kind, SchemeKind::HashedSorted | SchemeKind::HashedUnsorted) {
            let mut work = Work::unlimited();
            assert_eq!(s.next_work_within(&mut work), Some(earliest), "{name}");
        }
        // Asked again, an answer kept costs a unit too (scheme 4 keeps none: it searches its
        // bitmap again, a unit for each word it reads).
        let mut work = Work::new(1);
        s.next_work_within(&mut work);
        match kind {
            SchemeKind::BasicWheel => {
                assert!((1..=MAX_SEARCH_WORDS).contains(&work.done()), "{name}")
            }
            _ => assert_eq!(work.done(), 1, "{name}"),
        }
    }
}

#[test]
fn bounded_and_tickless_advances_fire_as_the_periodic_tick() {
    let mut rng = Rng::new(11);
    let starts: Vec<(u64, u64)> = (0..300)
        .map(|id| (id, rng.within(1, [3, 64, 300, 4000][id as usize % 4])))
        .collect();
    for kind in SchemeKind::ALL {
        let mut want = None;
        for (clock, budget) in [
            (Clock::Periodic, None),
            (Clock::Periodic, Some(1)),
            (Clock::Tickless, None),
            (Clock::Tickless, Some(1)),
            (Clock::Tickless, Some(7)),
        ] {
            let mut s = common::scheme(kind, 512, u64::MAX - 2000);
            let mut fired = Vec::new();
            // Timers started in three waves, between advances.
            for wave in starts.chunks(100) {
                for &(id, i) in wave {
                    s.start(i, id).unwrap();
                }
                let target = s.now().wrapping_add(1500);
                fired.extend(run_to(&mut s, target, clock, budget).0);
            }
            let target = s.now().wrapping_add(5000);
            fired.extend(run_to(&mut s, target, clock, budget).0);
            assert!(s.is_empty(), "{}", kind.name());
            match &want {
                None => want = Some(fired),
                Some(w) => assert_eq!(&fired, w, "{} {clock:?} {budget:?}", kind.name()),
            }
        }
    }
}

#[test]
fn idle_ticks_are_skipped_cheaply() {
    for (kind, mut s) in backends(16, 0) {
        let name = kind.name();
        s.start(max_interval(kind).min(3000), 1).unwrap();
        let mut work = Work::unlimited();
        assert_eq!(
            s.advance(2000, Clock::Tickless, &mut work),
            Advanced::Reached
        );
        // Scheme 6 looks at its one busy slot, scheme 7 at its levels: a handful of units,
        // not 2000.
        assert!(
            work.done() <= 8,
            "{name}: {} units for idle ticks",
            work.done()
        );
        let mut work = Work::unlimited();
        assert_eq!(
            s.advance(2100, Clock::Periodic, &mut work),
            Advanced::Reached
        );
        assert!(
            work.done() >= 100,
            "{name}: the periodic clock runs every tick"
        );
    }
}

/// A timer far beyond every level and turn (up to 2^62 ticks): the tickless clock reaches it in a
/// handful of units, and it fires on its deadline. Scheme 7 stepped from one move of its top
/// level's pointer to the next while only its overflow list was busy: a unit each 2^30 ticks,
/// some 2 million for a timer 2^51 ticks away.
#[test]
fn a_far_timer_is_reached_in_a_few_units() {
    for shift in [40, 51, 62] {
        for (kind, mut s) in backends(16, 5) {
            let name = kind.name();
            let interval = max_interval(kind).min(1 << shift);
            s.start(interval, 1).unwrap();
            let (mut work, mut steps) = (Work::unlimited(), 0);
            let mut fired = None;
            while fired.is_none() {
                let next = s.next_work().expect("a timer pending");
                s.advance(next, Clock::Tickless, &mut work);
                fired = s.pop_expired().map(|e| (e.id, s.now()));
                steps += 1;
                assert!(steps <= 8, "{name}: {steps} steps to 2^{shift} ticks on");
            }
            assert_eq!(fired, Some((1, 5 + interval)), "{name}");
            assert!(
                work.done() <= 16,
                "{name}: {} units for 2^{shift} idle ticks",
                work.done()
            );
        }
    }
}

#[test]
fn reschedule_in_place_keeps_handle_and_id() {
    for (kind, mut s) in backends(16, 100) {
        let name = kind.name();
        let mut w = Work::unlimited();
        let h = s.start(1000, 7).unwrap();
        let other = s.start(40, 8).unwrap();
        assert_eq!(s.reschedule_within(h, 50, 50, &mut w), Ok(()), "{name}");
        assert_eq!(s.deadline(h), Some(150), "{name}");
        assert_eq!(
            s.reschedule_within(h, 50, 50, &mut w),
            Ok(()),
            "{name}: to where it is"
        );
        assert_eq!(
            s.reschedule_within(h, 0, 5, &mut w),
            Err(Error::Interval),
            "{name}"
        );
        assert_eq!(
            s.reschedule_within(h, 6, 5, &mut w),
            Err(Error::Interval),
            "{name}"
        );
        assert_eq!(
            s.deadline(h),
            Some(150),
            "{name}: a refused reschedule changes nothing"
        );
        assert_eq!(
            run_to(&mut s, 140, Clock::Tickless, None).0,
            [(140, 8)],
            "{name}"
        );
        assert_eq!(
            s.reschedule_within(other, 5, 5, &mut w),
            Err(Error::Stale),
            "{name}"
        );
        let fired = loop {
            s.tick();
            if let Some(e) = s.pop_expired() {
                break e;
            }
        };
        assert_eq!(
            (fired.handle, fired.id, fired.deadline),
            (h, 7, 150),
            "{name}"
        );
        // A due timer, not yet popped, is re-armed: it leaves the due queue.
        let q = s.start(1, 9).unwrap();
        s.tick();
        assert_eq!(s.queued(), 1, "{name}");
        assert_eq!(s.reschedule_within(q, 3, 3, &mut w), Ok(()), "{name}");
        assert_eq!((s.queued(), s.len()), (0, 1), "{name}");
        assert_eq!(
            run_to(&mut s, 160, Clock::Periodic, Some(1)).0,
            [(154, 9)],
            "{name}"
        );
        assert!(s.is_empty(), "{name}");
    }
}

#[test]
fn range_starts_fire_inside_their_range() {
    let mut rng = Rng::new(5);
    for (kind, mut s) in backends(512, 1 << 40) {
        let name = kind.name();
        let mut want = Vec::new();
        for id in 0..400 {
            let earliest = rng.within(1, max_interval(kind).min(5000));
            let latest = earliest + rng.within(0, [0, 10, 100, 10_000][id as usize % 4]);
            let h = s
                .start_range(earliest, latest, id, &mut Work::unlimited())
                .unwrap();
            let d = s.deadline(h).unwrap();
            let ahead = d - s.now();
            assert!(
                (earliest..=latest).contains(&ahead),
                "{name}: {ahead} ticks ahead"
            );
            want.push((d, id));
        }
        want.sort();
        let target = s.now() + 20_000;
        assert_eq!(
            run_to(&mut s, target, Clock::Tickless, None).0,
            want,
            "{name}"
        );
    }
}

#[test]
fn scheme7_ranges_land_on_coarse_slot_boundaries() {
    let mut s = common::scheme(SchemeKind::Hierarchical, 16, 100);
    let mut w = Work::unlimited();
    let cases = [
        ((1, 1), 101),
        ((1000, 5000), 4096),
        ((5000, 300_000), 262_144),
        ((70, 120), 192),
        ((3, 10), 110),
    ];
    for ((earliest, latest), want) in cases {
        let h = s.start_range(earliest, latest, 0, &mut w).unwrap();
        assert_eq!(s.deadline(h), Some(want), "{earliest}..={latest}");
    }
    // Reschedules too.
    let h = s.start(7, 1).unwrap();
    s.reschedule_within(h, 1000, 5000, &mut w).unwrap();
    assert_eq!(s.deadline(h), Some(4096));
}

#[test]
fn placing_timers_can_be_stopped_and_fire_on_time() {
    for (kind, mut s) in backends(64, 0) {
        let name = kind.name();
        if kind == SchemeKind::BasicWheel {
            // Holds nothing that far, and never walks.
            continue;
        }
        // Forty timers on one list (one slot of the hashed wheels), then one more behind them.
        let turn = u64::from(HASHED_SLOTS);
        let hs: Vec<Handle> = (0..40)
            .map(|k| s.start(turn * (k + 1), k).unwrap())
            .collect();
        let mut w = Work::new(3);
        let p = s.start_range(turn * 50, turn * 50, 100, &mut w).unwrap();
        let sorted = matches!(kind, SchemeKind::OrderedList | SchemeKind::HashedSorted);
        assert_eq!(s.placing(), sorted, "{name}");
        if !sorted {
            continue;
        }
        assert_eq!(
            s.deadline(p),
            Some(turn * 50),
            "{name}: a placing timer has its deadline"
        );
        let mut w = Work::unlimited();
        assert_eq!(s.start(5, 1), Err(Error::Busy), "{name}");
        assert_eq!(
            s.reschedule_within(hs[3], 5, 5, &mut w),
            Err(Error::Busy),
            "{name}"
        );
        // The walk's cursor entry stopped, then a step, then the placing timer itself.
        assert_eq!(s.stop(hs[3]), Ok(3), "{name}");
        assert!(!s.place(&mut Work::new(1)), "{name}");
        assert_eq!(s.stop(p), Ok(100), "{name}");
        assert!(!s.placing() && s.place(&mut Work::new(1)), "{name}");
        assert_eq!(s.start(5, 1).map(|_| ()), Ok(()), "{name}");
        // Left placing, it still fires on its deadline.
        let p = s
            .start_range(turn * 41, turn * 41, 200, &mut Work::new(1))
            .unwrap();
        assert!(s.placing(), "{name}");
        let fired = run_to(&mut s, turn * 41, Clock::Tickless, Some(2)).0;
        assert_eq!(fired.last(), Some(&(turn * 41, 200)), "{name}");
        assert!(!s.placing(), "{name}");
        assert_eq!(s.stop(p), Err(Error::Stale), "{name}");
    }
}

#[test]
fn dense_ticks_are_cut_into_holds_of_256() {
    // 20 000 timers due on one tick, 4096 ticks ahead: one slot of the hashed wheels to walk,
    // one level-2 slot of scheme 7 to cascade twice, all 20 000 to queue, scheme 1's whole
    // list to walk on every tick it runs.
    for kind in SchemeKind::ALL {
        for clock in [Clock::Tickless, Clock::Periodic] {
            let mut s = common::scheme(kind, 20_000, 0);
            for id in 0..20_000 {
                s.start(4096, id).unwrap();
            }
            let (fired, calls) = run_to(&mut s, 4096, clock, Some(256));
            let name = kind.name();
            assert_eq!(fired.len(), 20_000, "{name} {clock:?}");
            assert!(fired.iter().all(|&(d, _)| d == 4096), "{name} {clock:?}");
            assert!(calls >= 20_000 / 257, "{name} {clock:?}: {calls} holds");
            assert!(s.is_empty(), "{name} {clock:?}");
        }
    }
}

/// A reschedule cut short while it walks a sorted list (schemes 2 and 5) can be undone: the
/// timer goes back where it was with its old deadline, and fires there, or, that deadline come
/// while it walked, is due at once with it (late, never early); every other timer, and
/// everything started, stopped or fired while it walked, is unaffected. The other schemes have
/// nothing to undo.
#[test]
fn a_reschedule_still_placing_can_be_put_back() {
    // Per scheme: reschedules left placing, how many of them were put back, and how many of
    // those had seen their old deadline come.
    let mut put_back: HashMap<u32, (usize, usize, usize)> = HashMap::new();
    for seed in 0..40 {
        for (kind, mut s) in backends(512, 1000) {
            let mut rng = Rng::new(seed);
            // id -> (handle, deadline) of every outstanding timer.
            let mut live: HashMap<u64, (Handle, u64)> = HashMap::new();
            for id in 0..300 {
                let d = rng.within(200, 2000);
                let h = s.start(d, id).unwrap();
                live.insert(id, (h, s.now() + d));
            }
            let (h, old) = live[&7];
            let moved = s.reschedule_within(h, 3000, 3000, &mut Work::new(2));
            assert_eq!(moved, Ok(()), "{kind:?}");
            let new = s.now() + 3000;
            if !s.placing() {
                assert!(!s.abandon_placement(), "{kind:?}: nothing placing");
                continue;
            }
            // Meanwhile: stops (its old neighbours among them), starts, and ticks.
            let mut next_id = 1000;
            for _ in 0..rng.within(0, 40) {
                match rng.within(0, 3) {
                    0 => {
                        let victim = rng.within(0, 300);
                        if victim != 7 {
                            if let Some((vh, _)) = live.remove(&victim) {
                                s.stop(vh).unwrap();
                            }
                        }
                    }
                    1 => {
                        let d = rng.within(150, 2000);
                        assert_eq!(s.start(d, next_id), Err(Error::Busy), "{kind:?}");
                        next_id += 1;
                    }
                    _ => {
                        for (id, at) in step(&mut s) {
                            let (_, want) = live.remove(&id).expect("a live timer");
                            assert_eq!(at, want, "{kind:?}: timer {id}");
                        }
                    }
                }
            }
            // Now and then its old deadline comes while it walks, or passes: it is due then.
            let passed = seed % 4 == 0;
            let beyond = seed % 8 == 0;
            while passed && (s.now() != old || beyond) && s.now() != old + 3 {
                for (id, at) in step(&mut s) {
                    let (_, want) = live.remove(&id).expect("a live timer");
                    assert_eq!(at, want, "{kind:?}: timer {id}");
                }
            }
            let queued = s.queued();
            let back = s.abandon_placement();
            assert_eq!(s.queued(), queued + usize::from(back && passed), "{kind:?}");
            let count = put_back.entry(kind as u32).or_default();
            *count = (
                count.0 + 1,
                count.1 + usize::from(back),
                count.2 + usize::from(back && passed),
            );
            let want = if back { old } else { new };
            if !back {
                // Its place taken meanwhile: the reschedule is finished instead.
                assert!(s.place(&mut Work::unlimited()), "{kind:?}");
            }
            assert!(!s.placing(), "{kind:?}");
            assert_eq!(s.deadline(h), Some(want), "{kind:?}, put back: {back}");
            live.insert(7, (h, want));
            while !live.is_empty() {
                for (id, at) in step(&mut s) {
                    let (_, d) = live.remove(&id).expect("a live timer");
                    assert_eq!(at, d, "{kind:?}: timer {id}, put back: {back}");
                }
            }
            assert!(s.is_empty(), "{kind:?}");
        }
    }
    // Nothing starts while a timer is placing, so its old place stays free: always put back,
    // due at once where its old deadline came.
    for kind in [SchemeKind::OrderedList, SchemeKind::HashedSorted] {
        let (placing, back, due) = put_back[&(kind as u32)];
        assert!(
            placing > 0 && back == placing && due > 0 && due < back,
            "{kind:?}: {back} of {placing}, {due} due"
        );
    }
}

/// Scheme `kind` (2 or 5) for `capacity` timers with one slot, so that every timer is on the one
/// list a placement walks.
fn one_list(kind: SchemeKind, capacity: u32) -> AnyScheme<HostStorage> {
    let config = Config {
        capacity,
        slots: 1,
        start: 0,
        generation: 1,
    };
    AnyScheme::new(kind, &config).unwrap()
}

#[test]
fn a_reschedule_of_a_due_timer_still_placing_can_be_put_back() {
    // A timer already due (its tick run, its expiry not yet popped), rescheduled by a call cut
    // short in its walk: put back, it is due again, on its old tick, as if never moved.
    for kind in [SchemeKind::OrderedList, SchemeKind::HashedSorted] {
        // One slot: every timer on the list the reschedule walks.
        let mut s = one_list(kind, 8);
        let a = s.start(1, 1).unwrap();
        s.start(10, 2).unwrap();
        s.start(20, 3).unwrap();
        assert_eq!(s.tick(), 1, "{kind:?}");
        assert_eq!(s.queued(), 1, "{kind:?}");
        s.reschedule_within(a, 30, 30, &mut Work::new(1)).unwrap();
        assert!(s.placing(), "{kind:?}");
        assert_eq!(s.queued(), 0, "{kind:?}");
        assert!(s.abandon_placement(), "{kind:?}: refused");
        assert!(!s.placing(), "{kind:?}");
        assert_eq!(s.deadline(a), Some(1), "{kind:?}");
        assert_eq!(s.queued(), 1, "{kind:?}");
        assert_eq!(drain(&mut s), [(1, 1)], "{kind:?}");
        assert_eq!(s.len(), 2, "{kind:?}");
    }
}

/// A placement given up (its timer stopped, or a reschedule put back) and made again, as by a
/// call a signal cut short and started over, goes on after the last entry its walk had passed
/// (schemes 2 and 5): each attempt gets further, so that it ends however often it is cut
/// short, and finds the place a walk from the head would. Where that entry has left the list,
/// or is due later than the timer placed, the walk starts at the head again.
#[test]
fn a_placement_given_up_and_made_again_goes_on_where_it_stopped() {
    const N: u64 = 200;
    const STEP: usize = 10;
    // `N` timers on one list (one slot), due on ticks 1 to `N`: timer `k` on `N - k`.
    let list = |kind| {
        let mut s = one_list(kind, 512);
        let hs: Vec<Handle> = (0..N).map(|k| s.start(N - k, k).unwrap()).collect();
        (s, hs)
    };
    // Runs the clock until nothing is left: `(id, deadline)` of every timer fired, in order.
    let fire_all = |s: &mut AnyScheme<HostStorage>| {
        let mut fired = Vec::new();
        while !s.is_empty() {
            assert!(s.now() < 2 * N, "{:?}: a timer never fired", s.kind());
            fired.extend(step(s));
        }
        fired
    };
    // The firings of the list with `moved` timers due elsewhere and `gone` stopped, and
    // `more` started, the latest started of equals last.
    let want = |moved: &[(u64, u64)], gone: &[u64], more: &[(u64, u64)]| {
        let mut want: Vec<(u64, u64)> = (0..N)
            .filter(|k| !gone.contains(k))
            .map(|k| match moved.iter().find(|m| m.0 == k) {
                Some(&m) => m,
                None => (k, N - k),
            })
            .chain(more.iter().copied())
            .collect();
        want.sort_by_key(|&(id, at)| (at, more.iter().position(|m| m.0 == id)));
        want
    };
    // Makes a placement with `place` within STEP units, and `give_up` on it, until it ends: the
    // whole list walked once, and a unit or two a try to begin and give up.
    let until_placed =
        |s: &mut AnyScheme<HostStorage>,
         place: &mut dyn FnMut(&mut AnyScheme<HostStorage>, &mut Work),
         give_up: &mut dyn FnMut(&mut AnyScheme<HostStorage>)| {
            let kind = s.kind();
            let (mut spent, mut tries) = (0, 0);
            loop {
                let mut w = Work::new(STEP);
                place(s, &mut w);
                (spent, tries) = (spent + w.done(), tries + 1);
                if !s.placing() {
                    break;
                }
                assert!(tries < 2 * N as usize, "{kind:?}: the placement never ends");
                give_up(s);
            }
            assert!(tries >= N as usize / STEP, "{kind:?}: {tries} tries");
            assert!(
                spent <= N as usize + 2 * tries,
                "{kind:?}: {spent} units in {tries} tries"
            );
        };
    for kind in [SchemeKind::OrderedList, SchemeKind::HashedSorted] {
        // A start due after all, stopped after every STEP units of work.
        let (mut s, _) = list(kind);
        let h = std::cell::Cell::new(None);
        until_placed(
            &mut s,
            &mut |s, w| h.set(s.start_range(N + 50, N + 50, 1000, w).ok()),
            &mut |s| assert_eq!(s.stop(h.get().unwrap()), Ok(1000), "{kind:?}"),
        );
        let more = [(1000, N + 50)];
        assert_eq!(fire_all(&mut s), want(&[], &[], &more), "{kind:?}");

        // A reschedule of the timer due first to after all, put back after every STEP units.
        let (mut s, hs) = list(kind);
        let first = hs[N as usize - 1];
        until_placed(
            &mut s,
            &mut |s, w| s.reschedule_within(first, N + 60, N + 60, w).unwrap(),
            &mut |s| {
                assert!(s.abandon_placement(), "{kind:?}: refused");
                assert_eq!(s.deadline(first), Some(1), "{kind:?}: not put back");
            },
        );
        let moved = [(N - 1, N + 60)];
        assert_eq!(fire_all(&mut s), want(&moved, &[], &[]), "{kind:?}");

        // Given up half way, the entry it had passed stopped: the next walk starts at the head.
        let (mut s, hs) = list(kind);
        let mut w = Work::new(N as usize / 2);
        let h = s.start_range(N + 70, N + 70, 2000, &mut w).unwrap();
        assert!(s.placing(), "{kind:?}");
        assert_eq!(s.stop(h), Ok(2000), "{kind:?}");
        // The walk passed the timers due on 1 to about N / 2: stop the ones due on N / 4 to N.
        let gone: Vec<u64> = (0..=3 * N / 4).collect();
        for &k in &gone {
            assert_eq!(s.stop(hs[k as usize]), Ok(k), "{kind:?}");
        }
        s.start_range(N + 70, N + 70, 2000, &mut Work::unlimited())
            .unwrap();

        // Given up an eighth of the way, then a start due before the entry it had passed: from
        // the head, to its place among the first.
        let mut w = Work::new(N as usize / 8);
        let h = s.start_range(N + 80, N + 80, 3000, &mut w).unwrap();
        assert!(s.placing(), "{kind:?}");
        assert_eq!(s.stop(h), Ok(3000), "{kind:?}");
        s.start_range(5, 5, 4000, &mut Work::unlimited()).unwrap();
        assert!(!s.placing(), "{kind:?}");
        // That start took the hint: the first start made again now walks the whole list.
        let mut w = Work::unlimited();
        s.start_range(N + 80, N + 80, 3000, &mut w).unwrap();
        let listed = s.len() - 1;
        assert!(
            w.done() >= listed,
            "{kind:?}: {} units, {listed} listed",
            w.done()
        );
        let more = [(2000, N + 70), (4000, 5), (3000, N + 80)];
        assert_eq!(fire_all(&mut s), want(&[], &gone, &more), "{kind:?}");
    }
}

/// Every scheme twice: named at compile time, its own methods running, and held as
/// `AnyScheme`, whose stay-put check and `reschedule` are its own.
fn named_and_any(capacity: u32, start: u64) -> Vec<(String, Box<dyn Scheme>)> {
    use wheel::{
        scheme1::Straightforward, scheme2::OrderedList, scheme3::Heap, scheme4::BasicWheel,
        scheme5::HashedSorted, scheme6::HashedUnsorted, scheme7::Hierarchical,
    };
    // Each scheme's type is named as its kind.
    macro_rules! named {
        ($($kind:ident),*) => {
            vec![$({
                let config = common::config(SchemeKind::$kind, capacity, start);
                let s = $kind::<HostStorage>::new(&config)
                    .unwrap_or_else(|e| panic!("{}: {e:?}", SchemeKind::$kind.name()));
                (SchemeKind::$kind.name().to_string(), Box::new(s) as Box<dyn Scheme>)
            }),*]
        };
    }
    let mut all = named![
        Straightforward,
        OrderedList,
        Heap,
        BasicWheel,
        HashedSorted,
        HashedUnsorted,
        Hierarchical
    ];
    assert_eq!(all.len(), SchemeKind::ALL.len());
    for (kind, s) in backends(capacity, start) {
        all.push((format!("{} as AnyScheme", kind.name()), Box::new(s)));
    }
    all
}

#[test]
fn ranged_starts_take_the_latest_tick_but_in_scheme_7() {
    for (name, mut s) in named_and_any(16, 100) {
        let h = s.start_range(10, 20, 1, &mut Work::unlimited()).unwrap();
        // Scheme 7: the last boundary of level 1's 64-tick slots in [110, 120] is none, so
        // level 0's latest tick too; see scheme7_ranges_land_on_coarse_slot_boundaries.
        assert_eq!(s.deadline(h), Some(120), "{name}");
    }
}

#[test]
fn a_timer_due_inside_the_new_range_stays_for_one_unit() {
    for (name, mut s) in named_and_any(16, 100) {
        let h = s.start(50, 1).unwrap();
        let mut w = Work::new(100);
        s.reschedule_within(h, 45, 65, &mut w).unwrap();
        assert_eq!(
            s.deadline(h),
            Some(150),
            "{name}: moved by reschedule_within"
        );
        assert_eq!(w.done(), 1, "{name}: a timer that stays costs one unit");
        s.reschedule(h, 40, 70).unwrap();
        assert_eq!(s.deadline(h), Some(150), "{name}: moved by reschedule");
        // Outside the range it moves, to the range's latest tick (scheme 7's too, here).
        s.reschedule(h, 60, 70).unwrap();
        assert_eq!(
            s.deadline(h),
            Some(170),
            "{name}: not moved out of its range"
        );
    }
}

#[test]
fn every_start_spends_a_unit() {
    for (name, mut s) in named_and_any(16, 100) {
        let mut w = Work::new(100);
        s.start_range(30, 30, 1, &mut w).unwrap();
        assert!(w.done() >= 1, "{name}: start_range spent {}", w.done());
    }
}
