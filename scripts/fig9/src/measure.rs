// SPDX-License-Identifier: GPL-2.0

//! Adaptive iteration counts: how many resets (or ticks) to time for one point.
//!
//! A point is timed in calls of `run(k)`, each doing `k` operations and returning the
//! nanoseconds they took. First a calibration: `k` grows by [`GROWTH`] until one call takes
//! [`CALIBRATED`]; that gives a first cost per operation. Then the measured run: calls of
//! `chunk_time` each until `target` time (and at least `min_iters` operations) is spent; only
//! these count. Short calls matter in the kernel: an in-kernel bench holds the instance's
//! spinlock for the whole call, and an O(n) scheme at large n must not hold it for seconds.
//!
//! Calibration spends at most a quarter of `max_total` (the ticks an instance can run before
//! a callout falls due), so that the measured run always has operations left, whether an
//! operation costs 1 ns or 1 ms; should the measured run still get none, the last calibration
//! call (a timed call like any other) is the sample.
//!
//! The budget: when calibration shows that `min_iters` operations cannot fit in what is left of
//! the point's budget, the point is abandoned ([`Outcome::OverBudget`]): that is where an O(n)
//! curve stops.

use std::io;
use std::time::Duration;

/// Calibration multiplies the count by this each call.
const GROWTH: u64 = 8;
/// A calibration call this long gives a usable first estimate.
const CALIBRATED: Duration = Duration::from_millis(2);

/// How to time one point.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Total time of the measured calls to aim for.
    pub target: Duration,
    /// Time of one measured call.
    pub chunk_time: Duration,
    /// Fewest operations a mean may rest on.
    pub min_iters: u64,
    /// Operations of the first calibration call.
    pub first: u64,
    /// Most operations in one call (TW_MAX_BENCH_ITERATIONS for the kernel).
    pub max_per_call: u64,
    /// Most operations over all calls, calibration included (ticks before a callout is due).
    pub max_total: u64,
}

/// One measured point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub ns_per_op: f64,
    pub iterations: u64,
}

/// What became of a point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Outcome {
    Done(Sample),
    OverBudget,
}

/// Times one point with `run`; `spent()` is the time already used from `budget`.
pub fn measure(
    plan: &Plan,
    budget: Duration,
    spent: &dyn Fn() -> Duration,
    run: &mut dyn FnMut(u64) -> io::Result<u64>,
) -> io::Result<Outcome> {
    let mut used = 0u64;
    let Some(last) = calibrate(plan, budget, spent, &mut used, run)? else {
        return Ok(Outcome::OverBudget);
    };
    let per_op = last.ns_per_op;
    let left = budget.saturating_sub(spent());
    if per_op * plan.min_iters as f64 > left.as_nanos() as f64 {
        return Ok(Outcome::OverBudget);
    }
    let chunk = ops_in(plan.chunk_time, per_op).clamp(1, plan.max_per_call);
    let wanted = ops_in(plan.target, per_op).max(plan.min_iters);
    let mut total_ns = 0u64;
    let mut done = 0u64;
    while done < wanted && used < plan.max_total {
        if done >= plan.min_iters && spent() > budget {
            break;
        }
        let k = chunk.min(wanted - done).min(plan.max_total - used);
        total_ns += run(k)?;
        done += k;
        used += k;
    }
    if done == 0 {
        return Ok(Outcome::Done(last));
    }
    Ok(Outcome::Done(Sample {
        ns_per_op: total_ns as f64 / done as f64,
        iterations: done,
    }))
}

/// The last calibration call: the first estimate of ns per operation, or `None` when the
/// budget ran out first. Uses at most a quarter of `max_total` (and at least one operation).
fn calibrate(
    plan: &Plan,
    budget: Duration,
    spent: &dyn Fn() -> Duration,
    used: &mut u64,
    run: &mut dyn FnMut(u64) -> io::Result<u64>,
) -> io::Result<Option<Sample>> {
    let cap = (plan.max_total / 4).max(1);
    let mut k = plan.first.clamp(1, plan.max_per_call);
    loop {
        k = k.min(cap.saturating_sub(*used)).max(1);
        let ns = run(k)?;
        *used += k;
        let per_op = (ns as f64 / k as f64).max(f64::MIN_POSITIVE);
        let enough = Duration::from_nanos(ns) >= CALIBRATED;
        if enough || k >= plan.max_per_call || *used >= cap {
            return Ok(Some(Sample {
                ns_per_op: per_op,
                iterations: k,
            }));
        }
        if spent() > budget {
            return Ok(None);
        }
        k = k.saturating_mul(GROWTH).min(plan.max_per_call);
    }
}

/// How many operations of `per_op` ns fit in `time` (at least 1).
fn ops_in(time: Duration, per_op: f64) -> u64 {
    ((time.as_nanos() as f64 / per_op) as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    const PLAN: Plan = Plan {
        target: Duration::from_millis(100),
        chunk_time: Duration::from_millis(20),
        min_iters: 5,
        first: 1,
        max_per_call: 1 << 24,
        max_total: u64::MAX,
    };

    /// Runs `measure` against a fake operation of `cost_ns`, with a fake clock that advances
    /// by the time each call "took". Returns the outcome and the sizes of the calls.
    fn fake(plan: &Plan, cost_ns: u64, budget_ms: u64) -> (Outcome, Vec<u64>) {
        let clock = Cell::new(Duration::ZERO);
        let mut calls = Vec::new();
        let mut run = |k: u64| {
            calls.push(k);
            clock.set(clock.get() + Duration::from_nanos(k * cost_ns));
            Ok(k * cost_ns)
        };
        let budget = Duration::from_millis(budget_ms);
        let out = measure(plan, budget, &|| clock.get(), &mut run).unwrap();
        (out, calls)
    }

    #[test]
    fn a_cheap_operation_is_timed_for_about_the_target() {
        let (out, calls) = fake(&PLAN, 100, 2000);
        let Outcome::Done(s) = out else {
            panic!("over budget: {out:?}");
        };
        assert_eq!(s.ns_per_op, 100.0);
        // 100 ms of 100 ns operations, in calls of 20 ms after calibration.
        assert_eq!(s.iterations, 1_000_000);
        assert!(calls.iter().all(|&k| k <= 200_000), "calls {calls:?}");
    }

    #[test]
    fn calibration_grows_by_the_growth_factor() {
        let (_, calls) = fake(&PLAN, 100, 2000);
        assert_eq!(&calls[..4], &[1, 8, 64, 512]);
    }

    #[test]
    fn a_slow_operation_still_gets_min_iters() {
        // 30 ms per operation: the target would be met with 4, the floor is 5.
        let (out, _) = fake(&PLAN, 30_000_000, 2000);
        assert_eq!(
            out,
            Outcome::Done(Sample {
                ns_per_op: 30_000_000.0,
                iterations: 5
            })
        );
    }

    #[test]
    fn an_operation_too_slow_for_the_budget_stops() {
        // 500 ms per operation, five of them do not fit in 2 s.
        let (out, calls) = fake(&PLAN, 500_000_000, 2000);
        assert_eq!(out, Outcome::OverBudget);
        assert_eq!(calls, vec![1], "one calibration call, nothing more");
    }

    #[test]
    fn max_total_caps_every_call() {
        let plan = Plan {
            max_total: 1000,
            ..PLAN
        };
        let (out, calls) = fake(&plan, 10, 2000);
        assert!(matches!(out, Outcome::Done(_)));
        assert!(calls.iter().sum::<u64>() <= 1000, "calls {calls:?}");
    }

    /// The per-tick plan: ticks are limited by the callouts' distance, not by time.
    fn tick_plan(max_total: u64) -> Plan {
        Plan {
            first: 64,
            max_total,
            ..PLAN
        }
    }

    #[test]
    fn ticks_from_1_ns_to_1_ms_are_timed() {
        // 2^18 ticks before a callout is due, shared by 5 repeats.
        let share = (1u64 << 18) / 5;
        for cost in [1, 10, 61, 100, 1_000, 100_000, 1_000_000] {
            let (out, calls) = fake(&tick_plan(share), cost, 2000);
            let Outcome::Done(s) = out else {
                panic!("{cost} ns per tick: {out:?}");
            };
            assert_eq!(s.ns_per_op, cost as f64, "{cost} ns per tick");
            assert!(calls.iter().sum::<u64>() <= share, "{cost} ns: {calls:?}");
            if cost <= 100 {
                // Too cheap to fill the target time: calibration leaves most of the ticks to
                // the measured run.
                assert!(s.iterations >= share / 2, "{cost} ns: {calls:?}");
            }
        }
    }

    #[test]
    fn a_single_allowed_operation_is_still_a_sample() {
        let (out, calls) = fake(&tick_plan(1), 50, 2000);
        assert_eq!(
            out,
            Outcome::Done(Sample {
                ns_per_op: 50.0,
                iterations: 1
            })
        );
        assert_eq!(calls, vec![1]);
    }

    #[test]
    fn max_per_call_caps_every_call() {
        let plan = Plan {
            max_per_call: 100,
            ..PLAN
        };
        let (_, calls) = fake(&plan, 1000, 2000);
        assert!(calls.iter().all(|&k| k <= 100), "calls {calls:?}");
    }
}
