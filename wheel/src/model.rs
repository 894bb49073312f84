// SPDX-License-Identifier: GPL-2.0

//! The one reference model of a timer module, and the randomized driver that runs a scheme
//! beside it (host only: the unit tests beside each scheme and `tests/differential.rs`).
//!
//! [`Model`] is obviously correct and not fast: pending and due timers in `BTreeMap`s keyed by
//! `(deadline, arm order)`, deadlines counted from the run's first tick so that they never
//! wrap, while the scheme under test sees the wrapped clock.
//!
//! [`Driver`] calls the scheme at random — starts (plain and ranged, bursts, a full table),
//! stops (live, queued, placing and stale handles), reschedules, ticks, bounded advances with
//! either clock and small random budgets with operations interleaved between the calls,
//! placements, pops — and checks every answer against the model on the very call that
//! diverges:
//!
//! - a start or reschedule fails exactly when it must, with an error the model allows; a ranged
//!   one gets a deadline inside its range, which the model then adopts;
//! - a stop returns the id of an outstanding timer, and [`Error::Stale`] for a handle that
//!   fired, was stopped, or was never issued (handles are compared whole, so one whose entry
//!   was reused must still be refused), and a handle is never issued twice;
//! - whenever the clock moves, no pending timer was passed over: a bounded or tickless advance
//!   fires exactly what the unbounded periodic clock fires, on the same ticks;
//! - a pop returns a timer due on the oldest tick still queued, with its id and deadline, and
//!   `None` only when nothing is queued (once the tick's bookkeeping is complete);
//! - the clock, `len`, `queued`, `deadline`, `placing` and `next_expiry` agree with the model,
//!   and `next_work` is never later than the earliest pending deadline.
//!
//! Order among timers due on the same tick is unspecified, so each pop is compared as a member
//! of a set: together the checks say that the sequence of `(tick, set of (id, deadline))`
//! popped equals the model's.

use crate::wheel::rng::Rng;
use crate::wheel::{
    Advanced, Clock, Config, Error, Expired, Handle, NextExpiry, Scheme, SchemeKind, Work,
    LIST_LOOK_LIMIT, MAX_INTERVAL, MAX_SEARCH_WORDS,
};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::format;
use std::string::String;
use std::vec::Vec;

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

/// What a timer module must do, kept the plain way.
#[derive(Debug)]
pub struct Model {
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
    /// The timer still placing, if any.
    placing: Option<u64>,
    seq: u64,
}

impl Model {
    /// A model of an empty module for `capacity` timers of intervals up to `max_interval`,
    /// its clock at `start`.
    pub fn new(start: u64, capacity: usize, max_interval: u64) -> Self {
        Model {
            start,
            elapsed: 0,
            capacity,
            max_interval,
            pending: BTreeMap::new(),
            due: BTreeMap::new(),
            live: HashMap::new(),
            order: Vec::new(),
            dead: VecDeque::new(),
            issued: HashSet::new(),
            placing: None,
            seq: 0,
        }
    }

    /// The current tick.
    pub fn now(&self) -> u64 {
        self.start.wrapping_add(self.elapsed)
    }

    /// Timers outstanding.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether no timer is outstanding.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Timers due and not popped.
    pub fn queued(&self) -> usize {
        self.due.len()
    }

    /// The earliest pending deadline.
    pub fn earliest(&self) -> Option<u64> {
        let first = self.pending.first_key_value()?;
        Some(self.start.wrapping_add(first.0 .0))
    }

    /// The deadline of the timer `raw` names, if it is outstanding.
    pub fn deadline(&self, raw: u64) -> Option<u64> {
        self.live.get(&raw).map(|t| self.start.wrapping_add(t.rel))
    }

    /// The errors a start or reschedule in `earliest..=latest` may fail with (empty if it must
    /// succeed); `fresh` for a start, which needs a free entry. Where several apply, the order
    /// of the checks is the scheme's business.
    pub fn start_errors(&self, earliest: u64, latest: u64, fresh: bool) -> Vec<Error> {
        let mut errs = Vec::new();
        if earliest == 0 || latest < earliest || latest >= MAX_INTERVAL {
            errs.push(Error::Interval);
        } else if earliest > self.max_interval {
            errs.push(Error::Range);
        }
        if self.placing.is_some() {
            errs.push(Error::Busy);
        }
        if fresh && self.live.len() == self.capacity {
            errs.push(Error::Full);
        }
        errs
    }

    /// Checks `deadline`, which a scheme chose, against the range `earliest..=latest` from
    /// now, and returns it counted from the run's first tick.
    fn rel_of(&self, deadline: u64, earliest: u64, latest: u64) -> Result<u64, String> {
        let ahead = deadline.wrapping_sub(self.now());
        if ahead < earliest || ahead > latest {
            return Err(format!(
                "deadline {deadline} outside now + {earliest}..={latest}"
            ));
        }
        Ok(self.elapsed + ahead)
    }

    /// Records a start that succeeded: `raw` is due on `deadline`, chosen in the range.
    pub fn started(
        &mut self,
        raw: u64,
        id: u64,
        deadline: u64,
        range: (u64, u64),
    ) -> Result<(), String> {
        let rel = self.rel_of(deadline, range.0, range.1)?;
        if !self.issued.insert(raw) {
            return Err(format!("handle {raw:#x} issued twice"));
        }
        self.seq += 1;
        let t = Timer {
            id,
            rel,
            seq: self.seq,
            queued: false,
            pos: self.order.len(),
        };
        self.pending.insert((t.rel, t.seq), raw);
        self.live.insert(raw, t);
        self.order.push(raw);
        Ok(())
    }

    /// Records a reschedule that succeeded: `raw` is now due on `deadline`, pending.
    pub fn rescheduled(
        &mut self,
        raw: u64,
        deadline: u64,
        range: (u64, u64),
    ) -> Result<(), String> {
        let rel = self.rel_of(deadline, range.0, range.1)?;
        let t = *self.live.get(&raw).ok_or("rescheduled a dead handle")?;
        match t.queued {
            true => self.due.remove(&(t.rel, t.seq)),
            false => self.pending.remove(&(t.rel, t.seq)),
        };
        self.seq += 1;
        let t = Timer {
            rel,
            seq: self.seq,
            queued: false,
            ..t
        };
        self.pending.insert((t.rel, t.seq), raw);
        self.live.insert(raw, t);
        Ok(())
    }

    /// Whether a timer is placing, and which.
    pub fn set_placing(&mut self, raw: Option<u64>) {
        self.placing = raw;
    }

    fn remove(&mut self, raw: u64) -> Timer {
        let t = self.live.remove(&raw).expect("live");
        match t.queued {
            true => self.due.remove(&(t.rel, t.seq)),
            false => self.pending.remove(&(t.rel, t.seq)),
        };
        self.order.swap_remove(t.pos);
        if let Some(&moved) = self.order.get(t.pos) {
            self.live.get_mut(&moved).expect("live").pos = t.pos;
        }
        if self.dead.len() == 64 {
            self.dead.pop_front();
        }
        self.dead.push_back(raw);
        if self.placing == Some(raw) {
            self.placing = None;
        }
        t
    }

    /// Stops the timer `raw` names: its id, or [`Error::Stale`].
    pub fn stop(&mut self, raw: u64) -> Result<u64, Error> {
        match self.live.contains_key(&raw) {
            true => Ok(self.remove(raw).id),
            false => Err(Error::Stale),
        }
    }

    /// Moves the clock to `now`, which a scheme reports, making due everything due by then.
    /// Fails if a timer was due on a tick passed over; returns how many became due.
    pub fn advance_to(&mut self, now: u64) -> Result<usize, String> {
        let step = now.wrapping_sub(self.now());
        if step >= MAX_INTERVAL {
            return Err(format!("clock went back from {} to {now}", self.now()));
        }
        self.elapsed += step;
        let mut n = 0;
        while let Some(entry) = self.pending.first_entry() {
            let (rel, seq) = *entry.key();
            if rel > self.elapsed {
                break;
            }
            if rel < self.elapsed {
                let deadline = self.start.wrapping_add(rel);
                return Err(format!("a timer due on {deadline} was passed over"));
            }
            let raw = entry.remove();
            self.live.get_mut(&raw).expect("live").queued = true;
            self.due.insert((rel, seq), raw);
            if self.placing == Some(raw) {
                self.placing = None;
            }
            n += 1;
        }
        Ok(n)
    }

    /// Checks a popped timer (`complete`: with the tick's bookkeeping done, so that `None`
    /// means nothing is due) and removes it.
    pub fn pop(&mut self, got: Option<Expired>, complete: bool) -> Result<(), String> {
        let first = self.due.first_key_value().map(|(k, _)| k.0);
        let e = match (got, first) {
            (None, None) => return Ok(()),
            (None, Some(_)) if !complete => return Ok(()),
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
}

/// A range of valid intervals.
#[derive(Clone, Copy, Debug)]
pub enum Band {
    /// `1..=n`.
    Upto(u64),
    /// `lo..=hi`.
    Between(u64, u64),
    /// Within 1000 of the longest valid interval, `MAX_INTERVAL - 1`: deadlines almost half the
    /// clock away.
    Longest,
    /// One to four whole turns of `n` ticks, plus 0 to 2 ticks: lands on and just past a turn.
    Turns(u64),
    /// A power of two from `2^1` to `2^40`, give or take one: the edges of levels and slots.
    Pow2Edges,
}

impl Band {
    /// An interval from one of `bands`, chosen by weight.
    fn pick(rng: &mut Rng, bands: &[(u64, Band)]) -> u64 {
        let mut at = rng.within(0, bands.iter().map(|&(weight, _)| weight).sum());
        for &(weight, band) in bands {
            if at < weight {
                return band.draw(rng);
            }
            at -= weight;
        }
        unreachable!("weights sum to more than their sum")
    }

    /// An interval in this band.
    fn draw(self, rng: &mut Rng) -> u64 {
        match self {
            Band::Upto(n) => rng.within(1, n),
            Band::Between(lo, hi) => rng.within(lo, hi - lo + 1),
            Band::Longest => MAX_INTERVAL - 1 - rng.within(0, 1000),
            Band::Turns(n) => n * rng.within(1, 4) + rng.within(0, 3),
            Band::Pow2Edges => (1 << rng.within(1, 40)) - 1 + rng.within(0, 3),
        }
    }
}

/// Intervals for the schemes without slots (1 to 3), whose only boundaries are those of the
/// clock: mostly within a few thousand ticks, so that timers fire, and a few far off or almost
/// half the clock away, so that deadlines straddle its wrap.
pub const SLOTLESS: &[(u64, Band)] = &[
    (16, Band::Upto(64)),
    (13, Band::Upto(5000)),
    (2, Band::Upto(1 << 40)),
    (1, Band::Longest),
];

/// What a scheme's `next_expiry` answers while timers are pending (with none, `Idle`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Foresight {
    /// The earliest pending deadline, always.
    Exact,
    /// The earliest pending deadline, or `Unknown`.
    Partial,
    /// `Unknown`, always.
    Blind,
}

/// What the driver needs to know of a scheme.
#[derive(Clone, Copy, Debug)]
pub struct Profile {
    /// The valid intervals started, as `(weight, band)`. Invalid ones (0, `MAX_INTERVAL` and
    /// more, one past `range`) are mixed in besides.
    pub intervals: &'static [(u64, Band)],
    /// The scheme's longest interval, if it has one (scheme 4's `MaxInterval`).
    pub range: Option<u64>,
    /// What its `next_expiry` knows.
    pub foresight: Foresight,
    /// Its invariant check runs after every `check_every`-th operation (with the current tick
    /// complete), and after the last.
    pub check_every: u64,
    /// The farthest a tickless advance goes at once: far enough to cross every level of a
    /// wheel, near enough that a test wheel whose top turns every few ticks keeps up.
    pub reach: u64,
    /// Whether nearly every bounded call gets a budget of 1 to 3 units, so that ticks are left
    /// half done most of the time and other calls come in between (mostly unlimited
    /// otherwise).
    pub tiny_budgets: bool,
}

impl Profile {
    /// A scheme without slots (1 to 3): [`SLOTLESS`] intervals, no range of its own, and its
    /// invariant check, a walk of every pending timer, every 64 operations.
    pub const fn slotless(foresight: Foresight) -> Self {
        Profile {
            intervals: SLOTLESS,
            range: None,
            foresight,
            check_every: 64,
            reach: 1 << 34,
            tiny_budgets: false,
        }
    }
}

/// What a logged call was: arguments, then result. Read through `Debug`, in the report.
#[derive(Clone, Copy, Debug)]
#[allow(dead_code)]
enum Call {
    Start(u64, u64, u64, Result<Handle, Error>),
    Stop(Handle, Result<u64, Error>),
    Reschedule(Handle, u64, u64, Result<(), Error>),
    Tick(usize),
    Advance(u64, Clock, usize, Advanced, u64),
    Place(usize, bool),
    Pop(Option<Expired>),
    Tighten(usize),
}

/// Counters for a summary line.
#[derive(Clone, Copy, Default, Debug)]
pub struct Stats {
    /// Calls made.
    pub ops: u64,
    /// Starts that succeeded.
    pub started: u64,
    /// Starts refused (as the model said they must be).
    pub refused: u64,
    /// Of those, for a full table.
    pub full: u64,
    /// Starts and reschedules refused while a timer was placing.
    pub busy: u64,
    /// Stops that succeeded.
    pub stopped: u64,
    /// Stops of stale handles.
    pub stale: u64,
    /// Reschedules that succeeded.
    pub rescheduled: u64,
    /// Timers popped.
    pub fired: u64,
    /// Calls of `advance` that ran out of work.
    pub out_of_work: u64,
    /// Starts and reschedules left placing.
    pub placing: u64,
}

impl Stats {
    /// Adds `other` in.
    pub fn add(&mut self, other: &Stats) {
        self.ops += other.ops;
        self.started += other.started;
        self.refused += other.refused;
        self.full += other.full;
        self.busy += other.busy;
        self.stopped += other.stopped;
        self.stale += other.stale;
        self.rescheduled += other.rescheduled;
        self.fired += other.fired;
        self.out_of_work += other.out_of_work;
        self.placing += other.placing;
    }
}

/// Operations kept for the divergence report.
const LOG: usize = 32;

/// Drives a scheme and a [`Model`] with the same random calls.
pub struct Driver<'a, W: Scheme, C: Fn(&W)> {
    w: &'a mut W,
    m: Model,
    rng: Rng,
    profile: Profile,
    check: C,
    /// What a divergence report starts with (the test, the seed).
    label: String,
    log: VecDeque<(u64, Call)>,
    next_id: u64,
    /// Whether the scheme's current tick is complete (no advance left it out of work).
    complete: bool,
    /// Statistics of the run so far.
    pub stats: Stats,
}

impl<'a, W: Scheme, C: Fn(&W)> Driver<'a, W, C> {
    /// A driver for `w`, empty, seeded with `seed`. `check` verifies the scheme's own
    /// invariants; `label` heads a divergence report.
    pub fn new(w: &'a mut W, seed: u64, profile: Profile, check: C, label: String) -> Self {
        let max = profile.range.unwrap_or(MAX_INTERVAL - 1);
        let m = Model::new(w.now(), w.capacity(), max);
        Driver {
            w,
            m,
            rng: Rng::new(seed),
            profile,
            check,
            label,
            log: VecDeque::new(),
            next_id: 0,
            complete: true,
            stats: Stats::default(),
        }
    }

    /// Runs at least `ops` calls, then checks the invariants once more.
    pub fn run(&mut self, ops: u64) {
        self.compare();
        let target = self.stats.ops + ops;
        while self.stats.ops < target {
            self.step();
            if self.complete && self.stats.ops % self.profile.check_every == 0 {
                (self.check)(self.w);
            }
        }
        self.finish_tick();
        (self.check)(self.w);
    }

    fn diverge(&self, what: &str) -> ! {
        let mut s = format!(
            "\nDIVERGENCE in {}: {what}\n  op #{}, tick complete: {}\n",
            self.label, self.stats.ops, self.complete
        );
        let m = &self.m;
        s += &format!(
            "  model: now {} (elapsed {}), live {}, pending {}, due {}; first pending {:?}, \
             first due {:?}, placing {:?}\n",
            m.now(),
            m.elapsed,
            m.live.len(),
            m.pending.len(),
            m.due.len(),
            m.pending.first_key_value(),
            m.due.first_key_value(),
            m.placing,
        );
        s += &format!(
            "  scheme: now {}, len {}, queued {}, next_expiry {:?}, next_work {:?}, placing {}\n  \
             last calls:\n",
            self.w.now(),
            self.w.len(),
            self.w.queued(),
            self.w.next_expiry(),
            self.w.next_work(),
            self.w.placing(),
        );
        for (op, call) in &self.log {
            s += &format!("    #{op}: {call:?}\n");
        }
        panic!("{s}");
    }

    fn ok(&self, r: Result<(), String>) {
        if let Err(e) = r {
            self.diverge(&e);
        }
    }

    fn record(&mut self, call: Call) {
        self.stats.ops += 1;
        if self.log.len() == LOG {
            self.log.pop_front();
        }
        self.log.push_back((self.stats.ops, call));
    }

    /// Compares the clock, the counts, a deadline, the placement and the forecasts.
    fn compare(&mut self) {
        let (w, m) = (&*self.w, &self.m);
        if w.now() != m.now() {
            self.diverge(&format!("now {} != model {}", w.now(), m.now()));
        }
        if w.len() != m.len() {
            self.diverge("len differs");
        }
        let queued_ok = match self.complete {
            true => w.queued() == m.queued(),
            false => w.queued() <= m.queued(),
        };
        if !queued_ok {
            self.diverge("queued differs");
        }
        if w.placing() != m.placing.is_some() {
            self.diverge("placing differs");
        }
        if !m.order.is_empty() {
            let raw = m.order[self.rng.within(0, m.order.len() as u64) as usize];
            if w.deadline(Handle::from_raw(raw)) != m.deadline(raw) {
                self.diverge(&format!("deadline of {raw:#x} differs"));
            }
        }
        if let Some(&raw) = m.dead.back() {
            if w.deadline(Handle::from_raw(raw)).is_some() {
                self.diverge(&format!("deadline of dead {raw:#x}"));
            }
        }
        if !self.complete {
            return;
        }
        let ne = w.next_expiry();
        let ne_ok = match (ne, m.earliest()) {
            (NextExpiry::Idle, None) => true,
            (NextExpiry::At(t), Some(e)) => t == e && self.profile.foresight != Foresight::Blind,
            (NextExpiry::Unknown, Some(_)) => self.profile.foresight != Foresight::Exact,
            _ => false,
        };
        if !ne_ok {
            self.diverge(&format!("next_expiry {ne:?}, model {:?}", m.earliest()));
        }
        // Pending timers, and a tick after now no later than the earliest.
        let lower_bound = |next: Option<u64>| match (next, m.earliest()) {
            (None, None) => true,
            (Some(t), Some(e)) => {
                let ahead = t.wrapping_sub(m.now());
                ahead >= 1 && ahead <= e.wrapping_sub(m.now())
            }
            _ => false,
        };
        let nw = w.next_work();
        if !lower_bound(nw) {
            self.diverge(&format!(
                "next_work {nw:?}, model earliest {:?}",
                m.earliest()
            ));
        }
        // Within a small budget: still a lower bound, and no more spent than the budget allows
        // (one unit at least). Scheme 7, which looks at what its lists hold only within a
        // budget, answers the earliest deadline itself given all it needs, while its lists are
        // short enough to look at (here: while it holds no more timers than that).
        let limit = self.rng.within(0, 4) as usize;
        let mut work = Work::new(limit);
        let nb = w.next_work_within(&mut work);
        if !lower_bound(nb) || self.overspent(work.done(), limit) {
            self.diverge(&format!(
                "next_work_within({limit}) {nb:?} spending {}, model earliest {:?}",
                work.done(),
                m.earliest()
            ));
        }
        let whole = w.next_work_within(&mut Work::unlimited());
        let exact = w.kind() != SchemeKind::Hierarchical
            || w.len() > LIST_LOOK_LIMIT
            || whole == m.earliest();
        if !lower_bound(whole) || !exact {
            self.diverge(&format!(
                "next_work_within(unlimited) {whole:?}, model earliest {:?}",
                m.earliest()
            ));
        }
    }

    /// A work budget: mostly unlimited, often tiny.
    fn budget(&mut self) -> Work {
        if self.profile.tiny_budgets && self.rng.within(0, 10) != 0 {
            return Work::new(self.rng.within(1, 4) as usize);
        }
        match self.rng.within(0, 10) {
            0..=5 => Work::unlimited(),
            6..=8 => Work::new(self.rng.within(1, 4) as usize),
            _ => Work::new(self.rng.within(1, 64) as usize),
        }
    }

    /// An interval of the profile's, or now and then an invalid one.
    fn interval(&mut self) -> u64 {
        let r = &mut self.rng;
        match r.within(0, 64) {
            0 => 0,
            1 => MAX_INTERVAL + r.within(0, 2),
            2 => match self.profile.range {
                Some(max) => max + 1,
                None => u64::MAX,
            },
            _ => Band::pick(r, self.profile.intervals),
        }
    }

    /// A range of intervals: mostly one interval, sometimes a spread, now and then reversed.
    fn range(&mut self) -> (u64, u64) {
        let earliest = self.interval();
        let spread = match self.rng.within(0, 8) {
            0..=3 => 0,
            4 => self.rng.within(0, 8),
            5 => self.rng.within(0, 5000),
            6 => self.rng.within(0, 1 << 32),
            _ => {
                let e = self.rng.within(0, 3);
                return (earliest, earliest.wrapping_sub(e));
            }
        };
        (earliest, earliest.saturating_add(spread))
    }

    /// Whether the scheme left a timer placing: tells the model.
    fn note_placing(&mut self, raw: u64) {
        if self.w.placing() {
            self.m.set_placing(Some(raw));
            self.stats.placing += 1;
        }
    }

    /// Starts one timer in `range`, within `work`.
    fn start_in(&mut self, range: (u64, u64), mut work: Work) -> Option<Handle> {
        let id = match self.rng.within(0, 32) {
            0 => 42,
            _ => self.next_id,
        };
        self.next_id += 1;
        let errs = self.m.start_errors(range.0, range.1, true);
        let got =
            match range.0 == range.1 && work == Work::unlimited() && self.rng.within(0, 2) == 0 {
                true => self.w.start(range.0, id),
                false => self.w.start_range(range.0, range.1, id, &mut work),
            };
        self.record(Call::Start(range.0, range.1, id, got));
        let out = match got {
            Ok(h) if errs.is_empty() => {
                let Some(deadline) = self.w.deadline(h) else {
                    self.diverge("a new handle has no deadline");
                };
                let r = self.m.started(h.to_raw(), id, deadline, range);
                self.ok(r);
                self.note_placing(h.to_raw());
                self.stats.started += 1;
                Some(h)
            }
            Err(e) if errs.contains(&e) => {
                self.stats.refused += 1;
                self.stats.full += u64::from(e == Error::Full);
                self.stats.busy += u64::from(e == Error::Busy);
                None
            }
            _ => self.diverge(&format!("start = {got:?}, model allows {errs:?}")),
        };
        self.compare();
        out
    }

    fn start(&mut self) -> Option<Handle> {
        let range = self.range();
        let work = self.budget();
        self.start_in(range, work)
    }

    fn short(&mut self) -> u64 {
        self.rng.within(1, 64)
    }

    fn stop(&mut self, handle: Handle) {
        let want = self.m.stop(handle.to_raw());
        let got = self.w.stop(handle);
        self.record(Call::Stop(handle, got));
        if got != want {
            self.diverge(&format!("stop = {got:?}, model {want:?}"));
        }
        match got {
            Ok(_) => self.stats.stopped += 1,
            Err(_) => self.stats.stale += 1,
        }
        if got.is_ok() && self.rng.within(0, 4) == 0 {
            self.tighten();
        }
        self.compare();
    }

    /// Whether a bounded call spent more than its `limit` allows: one unit at least, and a step
    /// begun may run to its end (a search of the occupancy bitmap, in the wheels that have one).
    fn overspent(&self, done: usize, limit: usize) -> bool {
        let step = match self.w.kind() {
            SchemeKind::BasicWheel | SchemeKind::HashedSorted | SchemeKind::HashedUnsorted => {
                MAX_SEARCH_WORDS
            }
            _ => 0,
        };
        done > limit.max(1).saturating_add(step)
    }

    /// Raises the bound behind next work after a stop: never to an earlier answer, and the
    /// invariants hold after it (next work staying a lower bound is `compare`'s to check).
    fn tighten(&mut self) {
        let mut work = self.budget();
        let limit = work.left();
        let before = self.w.next_work_within(&mut Work::unlimited());
        self.w.tighten_within(&mut work);
        self.record(Call::Tighten(work.done()));
        let after = self.w.next_work_within(&mut Work::unlimited());
        let now = self.w.now();
        let later = match (before, after) {
            (Some(b), Some(a)) => a.wrapping_sub(now) >= b.wrapping_sub(now),
            (b, a) => b == a,
        };
        if !later || self.overspent(work.done(), limit) {
            self.diverge(&format!(
                "tighten spending {}: next work {before:?} before, {after:?} after",
                work.done()
            ));
        }
        if self.complete {
            (self.check)(self.w);
        }
    }

    fn live(&mut self) -> Option<Handle> {
        if self.m.order.is_empty() {
            return None;
        }
        let k = self.rng.within(0, self.m.order.len() as u64) as usize;
        Some(Handle::from_raw(self.m.order[k]))
    }

    fn stop_live(&mut self) {
        // The placing timer, now and then: its walk must be abandoned cleanly.
        let placing = self.m.placing.filter(|_| self.rng.within(0, 2) == 0);
        if let Some(h) = placing.map(Handle::from_raw).or_else(|| self.live()) {
            self.stop(h);
        }
    }

    /// A handle that names nothing outstanding.
    fn stale(&mut self) -> Option<Handle> {
        let cap = self.w.capacity() as u64;
        Some(match self.rng.within(0, 4) {
            0 => Handle::from_raw(self.rng.next_u64()),
            1 => Handle::new(self.rng.within(0, cap + 2) as u32, self.rng.within(0, 3)),
            _ if self.m.dead.is_empty() => return None,
            _ => {
                let k = self.rng.within(0, self.m.dead.len() as u64) as usize;
                Handle::from_raw(self.m.dead[k])
            }
        })
    }

    fn stop_stale(&mut self) {
        if let Some(h) = self.stale() {
            self.stop(h);
        }
    }

    /// Reschedules a live timer (pending, queued or placing), or now and then a stale one.
    fn reschedule(&mut self) {
        let handle = match self.rng.within(0, 10) {
            0 => self.stale(),
            _ => self.live(),
        };
        let Some(handle) = handle else {
            return;
        };
        let raw = handle.to_raw();
        let (earliest, latest) = self.range();
        let mut work = self.budget();
        let mut errs = self.m.start_errors(earliest, latest, false);
        if !self.m.live.contains_key(&raw) {
            errs.push(Error::Stale);
        }
        // An unlimited budget goes half the time to the unbounded form, a path of its own.
        let got = match work.left() == usize::MAX && self.rng.within(0, 2) == 0 {
            true => self.w.reschedule(handle, earliest, latest),
            false => self
                .w
                .reschedule_within(handle, earliest, latest, &mut work),
        };
        self.record(Call::Reschedule(handle, earliest, latest, got));
        match got {
            Ok(()) if errs.is_empty() => {
                let Some(deadline) = self.w.deadline(handle) else {
                    self.diverge("a rescheduled handle has no deadline");
                };
                let r = self.m.rescheduled(raw, deadline, (earliest, latest));
                self.ok(r);
                self.note_placing(raw);
                self.stats.rescheduled += 1;
                if self.rng.within(0, 4) == 0 {
                    self.tighten();
                }
            }
            Err(e) if errs.contains(&e) => self.stats.busy += u64::from(e == Error::Busy),
            _ => self.diverge(&format!("reschedule = {got:?}, model allows {errs:?}")),
        }
        self.compare();
    }

    /// Continues a placement within a small budget.
    fn place(&mut self) {
        let mut work = Work::new(self.rng.within(1, 8) as usize);
        let done = self.w.place(&mut work);
        self.record(Call::Place(work.done(), done));
        if done {
            self.m.set_placing(None);
        }
        if done == self.w.placing() {
            self.diverge("place() and placing() disagree");
        }
        self.compare();
    }

    fn pop(&mut self) -> Option<Expired> {
        let got = self.w.pop_expired();
        self.record(Call::Pop(got));
        let r = self.m.pop(got, self.complete);
        self.ok(r);
        self.stats.fired += u64::from(got.is_some());
        self.compare();
        got
    }

    fn drain(&mut self) {
        while self.pop().is_some() {}
    }

    /// One tick of the unbounded periodic clock.
    fn tick(&mut self) {
        let was_complete = self.complete;
        let got = self.w.tick();
        self.record(Call::Tick(got));
        self.complete = true;
        let want = self.m.advance_to(self.w.now());
        match want {
            Err(e) => self.diverge(&e),
            Ok(want) if was_complete && want != got => {
                self.diverge(&format!("tick queued {got}, model {want}"))
            }
            Ok(_) => {}
        }
        self.compare();
    }

    /// One call of `advance`.
    fn advance_once(&mut self, target: u64, clock: Clock, mut work: Work) -> Advanced {
        let r = self.w.advance(target, clock, &mut work);
        self.record(Call::Advance(target, clock, work.done(), r, self.w.now()));
        if work.done() == 0 && r == Advanced::OutOfWork {
            self.diverge("advance ran out of work without doing any");
        }
        let moved = self.m.advance_to(self.w.now());
        self.ok(moved.map(|_| ()));
        self.complete = r != Advanced::OutOfWork;
        self.stats.out_of_work += u64::from(!self.complete);
        if r == Advanced::Reached && self.w.now() != target {
            self.diverge("Reached short of the target");
        }
        self.compare();
        r
    }

    /// Completes a tick left half done.
    fn finish_tick(&mut self) {
        while !self.complete {
            let now = self.w.now();
            self.advance_once(now, Clock::Periodic, Work::unlimited());
        }
    }

    /// Runs the clock towards a target with either clock and random budgets, with calls of
    /// every kind in between.
    fn advance(&mut self) {
        let clock = match self.rng.within(0, 2) {
            0 => Clock::Periodic,
            _ => Clock::Tickless,
        };
        let now = self.w.now();
        let ahead = match (clock, self.rng.within(0, 4)) {
            (Clock::Periodic, _) => self.rng.within(1, 100),
            (Clock::Tickless, 0) => match self.w.next_work() {
                // As far as the scheme says it may sleep, within reason.
                Some(t) => t.wrapping_sub(now).clamp(1, self.profile.reach),
                None => self.rng.within(1, self.profile.reach),
            },
            (Clock::Tickless, _) => self.rng.within(1, 5000),
        };
        let target = now.wrapping_add(ahead);
        for _ in 0..64 {
            let work = self.budget();
            match self.advance_once(target, clock, work) {
                Advanced::Reached => return,
                Advanced::Due => {
                    for _ in 0..self.rng.within(0, self.m.queued() as u64 + 2) {
                        self.pop();
                    }
                }
                Advanced::OutOfWork => match self.rng.within(0, 12) {
                    0 => {
                        self.start();
                    }
                    1 => self.stop_live(),
                    2 => self.reschedule(),
                    3 => {
                        self.pop();
                    }
                    4 if self.w.placing() => self.place(),
                    _ => {}
                },
            }
        }
        self.finish_tick();
    }

    /// A tick whose expiry processing re-arms, arms and stops timers between pops.
    fn rearm_during_expiry(&mut self) {
        self.tick();
        while let Some(e) = self.pop() {
            if self.rng.within(0, 100) < 40 {
                let i = self.short();
                self.start_in((i, i), Work::unlimited());
            }
            if self.rng.within(0, 10) == 0 {
                self.start();
            }
            if self.rng.within(0, 100) < 15 {
                self.stop_live();
            }
            if self.rng.within(0, 100) < 10 {
                self.reschedule();
            }
            if self.rng.within(0, 20) == 0 {
                self.stop(e.handle);
            }
        }
    }

    /// One random operation (or a short sequence of them).
    fn step(&mut self) {
        let cap = self.m.capacity;
        let fill = self.m.len() * 100 / cap;
        // Phases of 5000 operations; every third starts nothing, so the scheme drains.
        let draining = self.stats.ops / 5000 % 3 == 2;
        match self.rng.within(0, 100) {
            0..=17 if draining => self.stop_live(),
            0..=17 if fill < 90 || self.rng.within(0, 5) == 0 => {
                self.start();
            }
            0..=17 => self.stop_live(),
            18..=21 if !draining => {
                // A same-tick burst.
                let i = match self.rng.within(0, 10) {
                    0..=6 => self.short(),
                    _ => self.interval(),
                };
                for _ in 0..self.rng.within(2, 15) {
                    self.start_in((i, i), Work::unlimited());
                }
            }
            18..=27 => self.stop_live(),
            28..=29 if fill > 50 => {
                for _ in 0..self.rng.within(1, 16) {
                    self.stop_live();
                }
            }
            28..=31 => self.stop_stale(),
            32..=39 => self.reschedule(),
            40..=41 if self.w.placing() => self.place(),
            40..=51 => {
                self.tick();
                self.drain();
            }
            52..=57 => {
                // A partial pop; the rest is carried into the next tick.
                self.tick();
                for _ in 0..self.rng.within(0, self.m.queued() as u64 + 2) {
                    self.pop();
                }
            }
            58..=61 => {
                for _ in 0..self.rng.within(1, 3) {
                    self.pop();
                }
            }
            62..=73 => self.advance(),
            74..=79 => self.rearm_during_expiry(),
            80..=81 if !draining && (cap <= 64 || self.rng.within(0, 20) == 0) => {
                // Fill the table, then once more: Full, and nothing changes.
                for _ in 0..=cap - self.m.len() {
                    let i = self.short();
                    self.start_in((i, i), Work::unlimited());
                }
            }
            80..=85 => {
                for _ in 0..self.rng.within(8, 64) {
                    self.tick();
                    self.drain();
                }
            }
            _ if !draining && !self.m.order.is_empty() => {
                // Stop, then re-arm: the paper's "reset" of one timer.
                self.stop_live();
                self.start();
            }
            _ => self.stop_stale(),
        }
    }
}

/// Runs `ops` random calls, seeded with `seed`, on `w` (empty, capacity at least 2) and on the
/// model, and compares every result. `check` verifies the scheme's own invariants, every
/// `profile.check_every` calls with the tick complete.
pub fn check_against<W: Scheme>(
    w: &mut W,
    seed: u64,
    ops: u64,
    profile: &Profile,
    check: impl Fn(&W),
) {
    let label = format!("{:?} (seed {seed})", w.kind());
    Driver::new(w, seed, *profile, check, label).run(ops);
}

/// Timers re-armed between two pops of one tick, as a callback re-arming itself does: what is
/// left of that tick still comes before the next tick, and the new timers fire on their own
/// ticks. `check` is the scheme's invariant check, run once they are in and after every tick.
/// `w` must be empty, with its clock at 0 and room for 5 timers and an interval of 4.
pub fn rearm_between_pops<W: Scheme>(mut w: W, check: impl Fn(&W)) {
    for id in 0..3 {
        w.start(1, id).unwrap();
    }
    assert_eq!(w.tick(), 3);
    assert_eq!(w.pop_expired().map(|e| e.id), Some(0));
    w.start(1, 10).unwrap();
    w.start(4, 11).unwrap();
    check(&w);
    assert_eq!(w.pop_expired().map(|e| e.id), Some(1));
    assert_eq!(w.tick(), 1);
    check(&w);
    let ids: Vec<u64> = core::iter::from_fn(|| w.pop_expired())
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, [2, 10]);
    // 11 was started on tick 1 with interval 4: due on tick 5, three ticks from now, alone.
    for queued in [0, 0, 1] {
        assert_eq!(w.tick(), queued);
        check(&w);
    }
    let e = w.pop_expired().unwrap();
    assert_eq!((e.id, e.deadline, w.now()), (11, 5, 5));
    assert_eq!(w.pop_expired(), None);
}

/// Ticks `w` `ticks` times, one at a time, checking it with `check` after each tick and
/// popping what the tick queued: the `(tick, id)` of everything popped, in order, the ticks
/// counted from 1. Fails unless every timer popped is due on the tick that popped it.
pub fn tick_and_pop<W: Scheme>(w: &mut W, ticks: u64, check: impl Fn(&W)) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    for t in 1..=ticks {
        w.tick();
        check(w);
        while let Some(e) = w.pop_expired() {
            assert_eq!(e.deadline, w.now());
            out.push((t, e.id));
        }
    }
    out
}

/// A hashed wheel's slot count must be a power of two: `new` (the scheme's constructor) fails
/// with [`Error::Config`] on others and succeeds on powers of two up to 2^16.
pub fn slots_must_be_a_power_of_two<W>(new: impl Fn(&Config) -> Result<W, Error>) {
    let config = |slots| Config {
        capacity: 1,
        slots,
        start: 0,
        ..Default::default()
    };
    for bad in [0, 3, 6, 100, u32::MAX] {
        assert_eq!(new(&config(bad)).err(), Some(Error::Config), "{bad} slots");
    }
    for good in [1, 2, 256, 1 << 16] {
        assert!(new(&config(good)).is_ok(), "{good} slots");
    }
}

/// Sleeps scheme `s` from now to its next work, as a tickless clock does, until something is
/// due; how many times it woke (the unit tests of the hashed wheels' next work count them).
pub fn wakeups_until_due(s: &mut impl Scheme) -> usize {
    let mut wakeups = 0;
    loop {
        let t = s.next_work().expect("something pending");
        wakeups += 1;
        if s.advance(t, Clock::Tickless, &mut Work::unlimited()) == Advanced::Due {
            return wakeups;
        }
    }
}
