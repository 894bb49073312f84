// SPDX-License-Identifier: GPL-2.0

//! Few timers, many calls while a tick is half done: the schemes that keep bounds for the
//! tickless clock (1, 5, 6 and 7) driven with two to eight timers, so that slots, groups and
//! lists empty and fill again often, and work budgets of 1 to 3 units on most calls, so that
//! most ticks are left half done and the starts, stops, reschedules and tightenings of the next
//! calls land in them. After every call made between ticks, it checks that no pending timer is
//! past its deadline and that next work, within a budget or not, is after now and no later
//! than the earliest deadline; every timer popped must be due on the tick it is popped on.
//!
//! The reference model of the differential test (`src/model.rs`) compares more, but with its
//! hundreds of timers and mix of calls it seldom empties the clock's slot mid-tick: scheme 6's
//! walk kept the least deadline of timers stopped meanwhile, and a timer started onto the
//! emptied slot never fired. Three million of its calls passed over it; this test finds it in
//! its first seeds.
//!
//! `WHEEL_PROP_SEED=n` draws other sequences; `WHEEL_HALF_DONE_RUNS=n` runs n seeds (20).

mod common;

use common::prop_seed;
use std::collections::HashMap;
use wheel::rng::Rng;
use wheel::scheme1::Straightforward;
use wheel::scheme5::HashedSorted;
use wheel::scheme6::HashedUnsorted;
use wheel::scheme7::Hierarchical;
use wheel::{Advanced, Clock, Config, Handle, HostStorage, Scheme, Work, MAX_INTERVAL};

/// Calls per scheme and seed.
const CALLS: usize = 20_000;

/// The last calls, printed on a failure.
const LOG: usize = 60;

/// A scheme under test, the timers it holds, and the last calls made.
struct Fuzz<'a, W: Scheme> {
    w: &'a mut W,
    rng: Rng,
    /// Pending and queued timers by raw handle, with their deadlines.
    live: HashMap<u64, u64>,
    log: Vec<String>,
    /// The spans the intervals are drawn around: the scheme's slot and level widths.
    scales: &'static [u64],
    /// Whether the last advance left a tick half done.
    ticking: bool,
    /// Calls that succeeded: starts, stops, reschedules and pops.
    done: [usize; 4],
}

impl<W: Scheme> Fuzz<'_, W> {
    fn fail(&self, what: &str) -> ! {
        let from = self.log.len().saturating_sub(LOG);
        panic!(
            "{:?}: {what}\nnow {}; the last calls:\n{}",
            self.w.kind(),
            self.w.now(),
            self.log[from..].join("\n")
        );
    }

    /// An interval near one of the scales: on it, just off it, a multiple of it, or short.
    fn interval(&mut self) -> u64 {
        let s = self.scales[self.rng.within(0, self.scales.len() as u64) as usize];
        let v = match self.rng.within(0, 6) {
            0 => self.rng.within(1, 64),
            1 => s,
            2 => s.saturating_sub(self.rng.within(0, 3)),
            3 => s + self.rng.within(0, 3),
            4 => self.rng.within(1, s * 2),
            _ => s * self.rng.within(1, 66) + self.rng.within(0, 70),
        };
        v.clamp(1, MAX_INTERVAL - 1)
    }

    /// One of the live timers, the same one for the same seed.
    fn pick(&mut self) -> Option<Handle> {
        let mut keys: Vec<u64> = self.live.keys().copied().collect();
        if keys.is_empty() {
            return None;
        }
        keys.sort_unstable();
        let k = keys[self.rng.within(0, keys.len() as u64) as usize];
        Some(Handle::from_raw(k))
    }

    /// Unlimited once in four calls, else 1 to 3 units.
    fn budget(&mut self) -> Work {
        match self.rng.within(0, 4) {
            0 => Work::unlimited(),
            _ => Work::new(self.rng.within(1, 4) as usize),
        }
    }

    /// Pops one timer queued, if any, checking that it is due now and live.
    fn pop(&mut self) -> bool {
        let Some(e) = self.w.pop_expired() else {
            return false;
        };
        self.log
            .push(format!("pop {:?} id {} due {}", e.handle, e.id, e.deadline));
        if e.deadline != self.w.now() {
            self.fail(&format!("timer {} due {} popped", e.id, e.deadline));
        }
        if self.live.remove(&e.handle.to_raw()) != Some(e.deadline) {
            self.fail(&format!("timer {} popped, not live at that deadline", e.id));
        }
        self.done[3] += 1;
        true
    }

    /// Between ticks: nothing pending past its deadline, next work a lower bound after now.
    fn check(&mut self) {
        if self.ticking {
            return;
        }
        while self.pop() {}
        let now = self.w.now();
        let mut earliest = None;
        for (&raw, &d) in &self.live {
            let left = d.wrapping_sub(now);
            if left == 0 || left >= MAX_INTERVAL {
                self.fail(&format!("timer {raw:#x} due {d} still pending: missed"));
            }
            earliest = Some(earliest.map_or(left, |e: u64| e.min(left)));
        }
        let within = self.w.next_work_within(&mut Work::unlimited());
        for (name, next) in [("next_work", self.w.next_work()), ("within", within)] {
            match (next, earliest) {
                (None, None) => {}
                (Some(t), Some(e)) if (1..=e).contains(&t.wrapping_sub(now)) => {}
                _ => self.fail(&format!(
                    "{name} {next:?}, the earliest deadline {earliest:?} ticks ahead"
                )),
            }
        }
    }

    fn step(&mut self) {
        match self.rng.within(0, 100) {
            0..=24 => {
                let i = self.interval();
                let id = self.rng.next_u64() & 0xffff;
                let started = match self.rng.within(0, 3) {
                    0 => {
                        let j = (i + self.rng.within(0, i.min(5000))).min(MAX_INTERVAL - 1);
                        self.w.start_range(i, j, id, &mut Work::unlimited())
                    }
                    _ => self.w.start(i, id),
                };
                if let Ok(h) = started {
                    let d = self.w.deadline(h).unwrap();
                    self.log.push(format!("start {i} -> {h:?} due {d}"));
                    self.live.insert(h.to_raw(), d);
                    self.done[0] += 1;
                }
            }
            25..=44 => {
                if let Some(h) = self.pick() {
                    let mut work = self.budget();
                    let r = self.w.stop_within(h, &mut work);
                    self.log.push(format!("stop {h:?} {r:?}"));
                    if r.is_ok() {
                        self.live.remove(&h.to_raw());
                        self.done[1] += 1;
                    }
                }
            }
            45..=64 => {
                if let Some(h) = self.pick() {
                    let i = self.interval();
                    let j = (i + self.rng.within(0, 3)).min(MAX_INTERVAL - 1);
                    let mut work = self.budget();
                    if self.w.reschedule_within(h, i, j, &mut work).is_ok() {
                        let d = self.w.deadline(h).unwrap();
                        self.log.push(format!("reschedule {h:?} [{i}, {j}] -> {d}"));
                        self.live.insert(h.to_raw(), d);
                        self.done[2] += 1;
                    }
                }
            }
            65..=69 => {
                let mut work = self.budget();
                self.w.tighten_within(&mut work);
                self.log.push("tighten".into());
            }
            70..=74 => {
                self.pop();
            }
            _ => self.advance(),
        }
        self.check();
    }

    /// Runs the clock: a tick or two periodic, a short way tickless, or to next work.
    fn advance(&mut self) {
        let now = self.w.now();
        let (clock, target) = match self.rng.within(0, 5) {
            0 => (Clock::Periodic, now.wrapping_add(self.rng.within(1, 3))),
            1 => (Clock::Tickless, now.wrapping_add(self.rng.within(1, 200))),
            _ => match self.w.next_work() {
                Some(t) if t != now => (Clock::Tickless, t),
                _ => (Clock::Tickless, now.wrapping_add(self.interval())),
            },
        };
        let mut work = self.budget();
        let r = self.w.advance(target, clock, &mut work);
        self.log.push(format!(
            "advance to {target} {clock:?}: {r:?}, now {}, {} spent",
            self.w.now(),
            work.done()
        ));
        self.ticking = r == Advanced::OutOfWork;
    }
}

/// Makes [`CALLS`] calls on `w` with the sequence of `seed`.
fn run<W: Scheme>(w: &mut W, seed: u64, scales: &'static [u64]) {
    let mut f = Fuzz {
        w,
        rng: Rng::new(seed),
        live: HashMap::new(),
        log: Vec::new(),
        scales,
        ticking: false,
        done: [0; 4],
    };
    for _ in 0..CALLS {
        f.step();
        if f.log.len() > 4 * LOG {
            f.log.drain(..2 * LOG);
        }
    }
    // Calls that all failed (a start refused, a timer never popped) would check nothing.
    let [starts, stops, reschedules, pops] = f.done;
    if starts == 0 || stops == 0 || reschedules == 0 || pops == 0 {
        f.fail(&format!(
            "{starts} starts, {stops} stops, {reschedules} reschedules and {pops} pops \
             succeeded in {CALLS} calls"
        ));
    }
}

fn config(capacity: u32, slots: u32, start: u64) -> Config {
    Config {
        capacity,
        slots,
        start,
        ..Default::default()
    }
}

/// The seeds to run, and for each a capacity of 2 to 8 timers and a starting clock (0, just
/// below 2^64, just below 2^32, and another).
fn seeds() -> impl Iterator<Item = (u64, u32, u64)> {
    let runs = std::env::var("WHEEL_HALF_DONE_RUNS")
        .map(|v| v.parse().expect("WHEEL_HALF_DONE_RUNS is a number"))
        .unwrap_or(20);
    let base = prop_seed();
    (0..runs).map(move |r: u64| {
        let seed = base.wrapping_add(r);
        let start = [0, u64::MAX - 300, (1 << 32) - 7000, seed.wrapping_mul(997)][(r % 4) as usize];
        (seed, 2 + (r % 7) as u32, start)
    })
}

#[test]
fn scheme7_on_one_two_three_and_six_levels() {
    for (seed, capacity, start) in seeds() {
        let c = config(capacity, 0, start);
        run(
            &mut Hierarchical::<HostStorage, 1>::new(&c).unwrap(),
            seed,
            &[1, 64],
        );
        run(
            &mut Hierarchical::<HostStorage, 2>::new(&c).unwrap(),
            seed,
            &[64, 4096],
        );
        let scales = &[64, 4096, 1 << 18];
        run(
            &mut Hierarchical::<HostStorage, 3>::new(&c).unwrap(),
            seed,
            scales,
        );
        let scales = &[64, 4096, 1 << 30, 1 << 36];
        run(
            &mut Hierarchical::<HostStorage, 6>::new(&c).unwrap(),
            seed,
            scales,
        );
    }
}

#[test]
fn schemes_1_5_and_6_on_1_to_128_slots() {
    const SCALES: &[u64] = &[1, 2, 64, 128, 256];
    for (r, (seed, capacity, start)) in seeds().enumerate() {
        let slots = [1, 2, 4, 64, 128][r % 5];
        let c = config(capacity, slots, start);
        run(
            &mut Straightforward::<HostStorage>::new(&c).unwrap(),
            seed,
            SCALES,
        );
        run(
            &mut HashedSorted::<HostStorage>::new(&c).unwrap(),
            seed,
            SCALES,
        );
        run(
            &mut HashedUnsorted::<HostStorage>::new(&c).unwrap(),
            seed,
            SCALES,
        );
    }
}
