// SPDX-License-Identifier: GPL-2.0

//! Differential property test: every scheme against a plain reference model, driven by the
//! same seeded random operation sequences.
//!
//! The model keeps pending and due timers in `BTreeMap`s keyed by `(deadline, arm order)`,
//! with deadlines counted from the run's first tick so that they never wrap; the scheme under
//! test sees the wrapped clock. Every call's result is compared (handles, errors, ids, the
//! number a tick queues), as are `now`, `len`, `queued` and `next_expiry` after every call.
//!
//! Expiry order is compared per tick, as a set: order among timers due on the same tick is
//! unspecified, so each popped timer must be one the model has due on the *earliest* tick it
//! still has queued (the same `(id, deadline)` and handle), and `pop_expired` must return
//! `None` exactly when the model has nothing queued. Together these say that the sequence of
//! `(tick, set of (id, deadline))` popped equals the model's, and a divergence is caught on the
//! very call that made it.
//!
//! By default each backend runs [`DEFAULT_OPS`] operations (each start, stop, tick or pop is
//! one) spread over [`RUNS`] runs with different capacities and starting clocks (0, just below
//! 2^32, just below 2^64, random). `WHEEL_PROP_OPS=10000000` runs more, `WHEEL_PROP_SEED=n`
//! other sequences. On divergence the test panics with the seed, backend, run, op index, the
//! model's state and the last operations.

mod common;

use common::{max_interval, prop_ops, prop_seed, Rng, HASHED_SLOTS, WHEEL4_MAX};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io::Write;
use std::time::Instant;
use wheel::{AnyScheme, Error, Expired, Handle, HostStorage, NextExpiry, Scheme, SchemeKind};
use wheel::{Config, MAX_INTERVAL};

/// Operations per backend in a plain `cargo test`.
const DEFAULT_OPS: u64 = 1_000_000;

/// Runs per backend; each has its own configuration and seed.
const RUNS: u64 = 8;

/// Operations kept for the divergence report.
const LOG: usize = 24;

/// One timer of the model.
#[derive(Clone, Copy, Debug)]
struct Timer {
    id: u64,
    /// Deadline in ticks since the run began (never wraps).
    rel: u64,
    /// Arm order, to key the maps.
    seq: u64,
    queued: bool,
    /// Position in `Model::order`.
    pos: usize,
}

/// The reference: obviously correct, not fast.
#[derive(Debug)]
struct Model {
    start: u64,
    elapsed: u64,
    capacity: usize,
    max_interval: u64,
    pending: BTreeMap<(u64, u64), u64>,
    due: BTreeMap<(u64, u64), u64>,
    live: HashMap<u64, Timer>,
    /// Live handles, for picking one at random.
    order: Vec<u64>,
    /// Recently dead handles, for stale stops.
    dead: VecDeque<u64>,
    /// Every handle ever issued: none may come back (or a stale one would reach it).
    issued: HashSet<u64>,
    seq: u64,
}

impl Model {
    fn new(config: &Config, max_interval: u64) -> Self {
        Model {
            start: config.start,
            elapsed: 0,
            capacity: config.capacity as usize,
            max_interval,
            pending: BTreeMap::new(),
            due: BTreeMap::new(),
            live: HashMap::new(),
            order: Vec::new(),
            dead: VecDeque::new(),
            issued: HashSet::new(),
            seq: 0,
        }
    }

    fn now(&self) -> u64 {
        self.start.wrapping_add(self.elapsed)
    }

    /// The errors `start(interval)` may fail with; empty if it must succeed. Where several
    /// apply, the order of checks is the scheme's business.
    fn start_errors(&self, interval: u64) -> Vec<Error> {
        let mut errs = Vec::new();
        if interval == 0 || interval >= MAX_INTERVAL {
            errs.push(Error::Interval);
        } else if interval > self.max_interval {
            errs.push(Error::Range);
        }
        if self.live.len() == self.capacity {
            errs.push(Error::Full);
        }
        errs
    }

    fn started(&mut self, handle: u64, interval: u64, id: u64) -> Result<(), String> {
        if !self.issued.insert(handle) {
            return Err(format!("handle {handle:#x} issued twice"));
        }
        self.seq += 1;
        let t = Timer {
            id,
            rel: self.elapsed + interval,
            seq: self.seq,
            queued: false,
            pos: self.order.len(),
        };
        self.pending.insert((t.rel, t.seq), handle);
        self.live.insert(handle, t);
        self.order.push(handle);
        Ok(())
    }

    fn remove(&mut self, handle: u64) -> Timer {
        let t = self.live.remove(&handle).expect("live");
        let map = if t.queued {
            &mut self.due
        } else {
            &mut self.pending
        };
        map.remove(&(t.rel, t.seq));
        self.order.swap_remove(t.pos);
        if let Some(&moved) = self.order.get(t.pos) {
            self.live.get_mut(&moved).expect("live").pos = t.pos;
        }
        if self.dead.len() == 64 {
            self.dead.pop_front();
        }
        self.dead.push_back(handle);
        t
    }

    fn stop(&mut self, handle: u64) -> Result<u64, Error> {
        if self.live.contains_key(&handle) {
            Ok(self.remove(handle).id)
        } else {
            Err(Error::Stale)
        }
    }

    fn tick(&mut self) -> usize {
        self.elapsed += 1;
        let mut n = 0;
        while let Some(entry) = self.pending.first_entry() {
            let (rel, seq) = *entry.key();
            if rel > self.elapsed {
                break;
            }
            assert_eq!(rel, self.elapsed, "model: a pending timer was missed");
            let handle = entry.remove();
            self.live.get_mut(&handle).expect("live").queued = true;
            self.due.insert((rel, seq), handle);
            n += 1;
        }
        n
    }

    /// Checks a popped timer against the model and removes it.
    fn pop(&mut self, got: Option<Expired>) -> Result<(), String> {
        let first = self.due.first_key_value().map(|(k, _)| k.0);
        let e = match (got, first) {
            (None, None) => return Ok(()),
            (None, Some(rel)) => return Err(format!("None, but due on rel tick {rel}")),
            (Some(e), None) => return Err(format!("{e:?}, but nothing is due")),
            (Some(e), Some(_)) => e,
        };
        let raw = e.handle.to_raw();
        let t = match self.live.get(&raw) {
            Some(t) => *t,
            None => return Err(format!("{e:?} is not a live handle")),
        };
        let deadline = self.start.wrapping_add(t.rel);
        if !t.queued {
            return Err(format!("{e:?} popped early: due on {deadline}"));
        }
        if Some(t.rel) != first {
            return Err(format!("{e:?} popped before timers due earlier"));
        }
        if (e.id, e.deadline) != (t.id, deadline) {
            return Err(format!("{e:?}: want id {} deadline {deadline}", t.id));
        }
        self.remove(raw);
        Ok(())
    }

    fn next_expiry_ok(&self, ne: NextExpiry) -> bool {
        let first = self.pending.first_key_value().map(|(k, _)| k.0);
        match (ne, first) {
            (NextExpiry::Idle, None) => true,
            (NextExpiry::Unknown, Some(_)) => true,
            (NextExpiry::At(t), Some(rel)) => t == self.start.wrapping_add(rel),
            _ => false,
        }
    }
}

/// What a logged call was: arguments, then result. Read through `Debug`, in the report.
#[derive(Clone, Copy, Debug)]
#[allow(dead_code)]
enum Call {
    Start(u64, u64, Result<Handle, Error>),
    Stop(Handle, Result<u64, Error>),
    Tick(usize),
    Pop(Option<Expired>),
}

/// Counters for the summary line.
#[derive(Default, Debug)]
struct Stats {
    ops: u64,
    started: u64,
    refused: u64,
    full: u64,
    range: u64,
    stopped: u64,
    stale: u64,
    fired: u64,
    ticks: u64,
}

/// One run: a backend, its model, and a generator.
struct Run {
    kind: SchemeKind,
    base_seed: u64,
    seed: u64,
    run: u64,
    config: Config,
    sut: AnyScheme<HostStorage>,
    model: Model,
    rng: Rng,
    log: VecDeque<(u64, Call)>,
    next_id: u64,
    stats: Stats,
}

impl Run {
    fn diverge(&self, what: &str) -> ! {
        let mut s = format!(
            "\nDIVERGENCE in {}: {what}\n  base seed {:#x} (rerun: WHEEL_PROP_SEED={} cargo test \
             --test differential), run {} seed {:#x}, op #{}\n  config {:?}\n",
            self.kind.name(),
            self.base_seed,
            self.base_seed,
            self.run,
            self.seed,
            self.stats.ops,
            self.config
        );
        let m = &self.model;
        s += &format!(
            "  model: now {} (elapsed {}), live {}, pending {}, due {}; first pending {:?}, \
             first due {:?}\n",
            m.now(),
            m.elapsed,
            m.live.len(),
            m.pending.len(),
            m.due.len(),
            m.pending.first_key_value(),
            m.due.first_key_value()
        );
        s += &format!(
            "  scheme: now {}, len {}, queued {}, next_expiry {:?}\n  last calls:\n",
            self.sut.now(),
            self.sut.len(),
            self.sut.queued(),
            self.sut.next_expiry()
        );
        for (op, call) in &self.log {
            s += &format!("    #{op}: {call:?}\n");
        }
        panic!("{s}");
    }

    fn record(&mut self, call: Call) {
        self.stats.ops += 1;
        if self.log.len() == LOG {
            self.log.pop_front();
        }
        self.log.push_back((self.stats.ops, call));
    }

    fn check_state(&self) {
        let m = &self.model;
        if self.sut.now() != m.now() {
            self.diverge(&format!("now {} != model {}", self.sut.now(), m.now()));
        }
        if self.sut.len() != m.live.len() || self.sut.queued() != m.due.len() {
            self.diverge("len or queued differs");
        }
        if !m.next_expiry_ok(self.sut.next_expiry()) {
            self.diverge("next_expiry is wrong");
        }
    }

    fn start(&mut self, interval: u64) -> Option<Handle> {
        let id = if self.rng.pct(3) { 42 } else { self.next_id };
        self.next_id += 1;
        let errs = self.model.start_errors(interval);
        let got = self.sut.start(interval, id);
        self.record(Call::Start(interval, id, got));
        let out = match got {
            Ok(h) if errs.is_empty() => {
                if let Err(e) = self.model.started(h.to_raw(), interval, id) {
                    self.diverge(&e);
                }
                self.stats.started += 1;
                Some(h)
            }
            Err(e) if errs.contains(&e) => {
                self.stats.refused += 1;
                self.stats.full += u64::from(e == Error::Full);
                self.stats.range += u64::from(e == Error::Range);
                None
            }
            _ => self.diverge(&format!(
                "start({interval}) = {got:?}, model allows {errs:?}"
            )),
        };
        self.check_state();
        out
    }

    fn stop(&mut self, handle: Handle) {
        let want = self.model.stop(handle.to_raw());
        let got = self.sut.stop(handle);
        self.record(Call::Stop(handle, got));
        if got != want {
            self.diverge(&format!("stop = {got:?}, model {want:?}"));
        }
        match got {
            Ok(_) => self.stats.stopped += 1,
            Err(_) => self.stats.stale += 1,
        }
        self.check_state();
    }

    fn tick(&mut self) {
        let want = self.model.tick();
        let got = self.sut.tick();
        self.record(Call::Tick(got));
        self.stats.ticks += 1;
        if got != want {
            self.diverge(&format!("tick queued {got}, model {want}"));
        }
        self.check_state();
    }

    fn pop(&mut self) -> Option<Expired> {
        let got = self.sut.pop_expired();
        self.record(Call::Pop(got));
        if let Err(e) = self.model.pop(got) {
            self.diverge(&e);
        }
        self.stats.fired += u64::from(got.is_some());
        self.check_state();
        got
    }

    fn drain(&mut self) {
        while self.pop().is_some() {}
    }

    /// An interval from a mix of scales: mostly short, some up to a wheel's span and beyond,
    /// some huge, a few on power-of-two and configuration edges, a few invalid.
    fn interval(&mut self) -> u64 {
        let r = &mut self.rng;
        match r.below(100) {
            0..=34 => r.range(1, 64),
            35..=49 => r.range(1, 256),
            50..=69 => r.range(1, 4096),
            70..=79 => r.range(1, 1 << 20),
            80..=85 => r.range(1 << 20, 1 << 40),
            86..=88 => MAX_INTERVAL - 1 - r.below(1 << 20),
            89..=97 => {
                let base = match r.below(4) {
                    0 => WHEEL4_MAX,
                    1 => u64::from(HASHED_SLOTS) * r.range(1, 4),
                    _ => 1 << r.range(1, 40),
                };
                base - 1 + r.below(3)
            }
            _ => match r.below(4) {
                0 => 0,
                1 => MAX_INTERVAL,
                2 => u64::MAX,
                _ => MAX_INTERVAL + r.below(1 << 40),
            },
        }
    }

    fn short(&mut self) -> u64 {
        self.rng.range(1, 64)
    }

    fn stop_live(&mut self) {
        if self.model.order.is_empty() {
            return;
        }
        let k = self.rng.below(self.model.order.len() as u64) as usize;
        self.stop(Handle::from_raw(self.model.order[k]));
    }

    fn stop_stale(&mut self) {
        let cap = u64::from(self.config.capacity);
        let h = match self.rng.below(4) {
            0 => Handle::from_raw(self.rng.next()),
            1 => Handle::new(self.rng.below(cap + 2) as u32, self.rng.below(3) as u32),
            _ if self.model.dead.is_empty() => return,
            _ => {
                let k = self.rng.below(self.model.dead.len() as u64) as usize;
                Handle::from_raw(self.model.dead[k])
            }
        };
        self.stop(h);
    }

    /// A tick whose expiry processing re-arms, arms and stops timers between pops.
    fn rearm_during_expiry(&mut self) {
        self.tick();
        while let Some(e) = self.pop() {
            if self.rng.pct(40) {
                let i = self.short();
                self.start(i);
            }
            if self.rng.pct(10) {
                let i = self.interval();
                self.start(i);
            }
            if self.rng.pct(15) {
                self.stop_live();
            }
            if self.rng.pct(5) {
                self.stop(e.handle);
            }
        }
    }

    fn step(&mut self) {
        let cap = self.model.capacity;
        let fill = self.model.live.len() * 100 / cap;
        let roll = self.rng.below(100);
        match roll {
            0..=21 if fill < 90 || self.rng.pct(20) => {
                let i = self.interval();
                self.start(i);
            }
            0..=21 => self.stop_live(),
            22..=27 => {
                // A same-tick burst.
                let i = if self.rng.pct(70) {
                    self.short()
                } else {
                    self.interval()
                };
                for _ in 0..self.rng.range(2, 16) {
                    self.start(i);
                }
            }
            28..=37 => self.stop_live(),
            38..=39 if fill > 50 => {
                for _ in 0..self.rng.range(1, 16) {
                    self.stop_live();
                }
            }
            38..=43 => self.stop_stale(),
            44..=59 => {
                self.tick();
                self.drain();
            }
            60..=67 => {
                // A partial pop; the rest is carried into the next tick.
                self.tick();
                for _ in 0..self.rng.below(self.model.due.len() as u64 + 2) {
                    self.pop();
                }
            }
            68..=71 => {
                for _ in 0..self.rng.range(1, 3) {
                    self.pop();
                }
            }
            72..=75 => {
                for _ in 0..self.rng.range(1, 4) {
                    self.tick();
                }
            }
            76..=83 => self.rearm_during_expiry(),
            84..=85 if cap <= 64 || self.rng.pct(5) => {
                // Fill the table, then once more: Full, and nothing changes.
                for _ in 0..=cap - self.model.live.len() {
                    let i = self.short();
                    self.start(i);
                }
            }
            84..=87 => {
                for _ in 0..self.rng.range(8, 64) {
                    self.tick();
                    self.drain();
                }
            }
            _ => {
                if !self.model.order.is_empty() {
                    // Stop, then re-arm: the paper's "reset" of one timer.
                    self.stop_live();
                    let i = self.interval();
                    self.start(i);
                }
            }
        }
    }
}

/// Capacity and starting clock of run `run`.
fn run_config(kind: SchemeKind, run: u64, rng: &mut Rng) -> Config {
    let (capacity, start) = match run % RUNS {
        0 => (16, 0),
        1 => (512, 0),
        2 => (512, (1 << 32) - rng.below(100_000)),
        3 => (2048, u64::MAX - 1000),
        4 => (64, u64::MAX - rng.below(1 << 20)),
        5 => (1024, rng.next()),
        6 => (256, (1 << 32) - 1000),
        _ => (2048, u64::MAX - 100_000),
    };
    // Scheme 1 touches every timer on every tick: keep it moderate.
    let capacity = match kind {
        SchemeKind::Straightforward => capacity.min(512),
        _ => capacity,
    };
    common::config(kind, capacity, start)
}

fn differential(kind: SchemeKind) {
    if common::scheme(kind, 1, 0).is_none() {
        return;
    }
    let total = prop_ops(DEFAULT_OPS);
    let base_seed = prop_seed();
    let per_run = total.div_ceil(RUNS);
    let began = Instant::now();
    let mut all = Stats::default();
    for run in 0..RUNS {
        let seed = base_seed ^ run.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ (kind as u64) << 56;
        let mut rng = Rng::new(seed);
        let config = run_config(kind, run, &mut rng);
        let mut r = Run {
            kind,
            base_seed,
            seed,
            run,
            config,
            sut: AnyScheme::new(kind, &config).expect("new"),
            model: Model::new(&config, max_interval(kind)),
            rng,
            log: VecDeque::new(),
            next_id: 0,
            stats: Stats::default(),
        };
        assert_eq!(r.sut.capacity(), config.capacity as usize);
        r.check_state();
        while r.stats.ops < per_run {
            r.step();
        }
        let s = r.stats;
        all.ops += s.ops;
        all.started += s.started;
        all.refused += s.refused;
        all.full += s.full;
        all.range += s.range;
        all.stopped += s.stopped;
        all.stale += s.stale;
        all.fired += s.fired;
        all.ticks += s.ticks;
    }
    // Written straight to stderr so that the count shows without --nocapture.
    let _ = writeln!(
        std::io::stderr(),
        "differential {}: {} ops in {RUNS} runs, {:.1?} (started {}, refused {} [full {}, range \
         {}], stopped {}, stale {}, fired {}, ticks {}), seed {base_seed:#x}",
        kind.name(),
        all.ops,
        began.elapsed(),
        all.started,
        all.refused,
        all.full,
        all.range,
        all.stopped,
        all.stale,
        all.fired,
        all.ticks,
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
