// SPDX-License-Identifier: GPL-2.0

//! Ratas' own benchmark on the `wheel` crate: the workload of `test_benchmark.cc` in Juho
//! Snellman's Ratas (2016), ported unit for unit, with the same random sequence (glibc's
//! `rand()` from its default seed), so that a run fires the same timers on the same ticks as
//! Ratas does and ends with the same `total_rx_count`.
//!
//! Work units come in pairs, a client and a server, created evenly over the first simulated
//! second (ticks of 20 µs: 50,000 a second) and run for 300 seconds. Each unit has five timers:
//!
//! | timer              | what it does in the run                                             |
//! |--------------------|---------------------------------------------------------------------|
//! | idle               | pushed back 60 s (or into `[60 s, 61 s]`) on every message; never fires |
//! | close              | fires at 180 s (closing), again 10 s later (the unit goes)          |
//! | pace               | 10 ticks, re-armed after every response sent: fires most            |
//! | request            | the client's next request, 1 s after a full response                |
//! | request deadline   | armed with a request, moved on its first response, cancelled at its end |
//!
//! A client's request asks for 128 responses, which the server sends one per pace tick. Of the
//! 69 M schedule calls at 1,000 pairs, 46 M push back a pending idle timer: that is what makes
//! reschedule in place, and ranges, pay.
//!
//! The port drives the crate as a caller should: the clock advanced to
//! [`Scheme::next_work`] (Ratas' `ticks_to_next_event`, capped at 100 ms) with
//! [`Clock::Tickless`], and each unit's timers named by [`Handle`]s kept in the unit. Three
//! [`Way`]s of making Ratas' `schedule` on a pending timer are compared, and a fourth that
//! uses only what the crate offered before reschedules, ranges and the tickless clock. It runs
//! on anything that is [`Timers`]: a scheme named at compile time, one chosen at run time, or
//! the callout layer over one.

use std::time::{Duration, Instant};

use wheel::callout::{Callouts, Origin};
use wheel::scheme6::HashedUnsorted;
use wheel::scheme7::Hierarchical;
use wheel::{Advanced, AnyScheme, Clock, Error, Handle, HostStorage, NextExpiry, Scheme, Work};

/// What the port asks of the structure it runs on: a scheme, named at compile time or held as
/// [`AnyScheme`], or the callout layer over one ([`Callouts`], through its handles: `setcallout`,
/// `reschedule`, `unsetcallout`, the timer's id its cookie). Every method forwards to one call.
pub(crate) trait Timers {
    /// [`Scheme::now`].
    fn now(&self) -> u64;
    /// [`Scheme::start`].
    fn start(&mut self, ticks: u64, id: u64) -> Result<Handle, Error>;
    /// [`Scheme::start_range`], unbounded.
    fn start_range(&mut self, earliest: u64, latest: u64, id: u64) -> Result<Handle, Error>;
    /// [`Scheme::reschedule`].
    fn reschedule(&mut self, h: Handle, earliest: u64, latest: u64) -> Result<(), Error>;
    /// [`Scheme::stop`].
    fn stop(&mut self, h: Handle) -> Result<(), Error>;
    /// [`Scheme::tick`].
    fn tick(&mut self);
    /// [`Scheme::advance`] to `target`, tickless, unbounded.
    fn advance(&mut self, target: u64) -> Advanced;
    /// [`Scheme::pop_expired`]: the id of the timer popped.
    fn pop_expired(&mut self) -> Option<u64>;
    /// [`Scheme::next_work`].
    fn next_work(&self) -> Option<u64>;
    /// [`Scheme::next_expiry`].
    fn next_expiry(&self) -> NextExpiry;
}

/// [`Timers`] for schemes: each method the scheme's own.
macro_rules! scheme_timers {
    ($($ty:ty),*) => {$(
        impl Timers for $ty {
            #[inline(always)]
            fn now(&self) -> u64 {
                Scheme::now(self)
            }
            #[inline(always)]
            fn start(&mut self, ticks: u64, id: u64) -> Result<Handle, Error> {
                Scheme::start(self, ticks, id)
            }
            #[inline(always)]
            fn start_range(&mut self, earliest: u64, latest: u64, id: u64) -> Result<Handle, Error> {
                Scheme::start_range(self, earliest, latest, id, &mut Work::unlimited())
            }
            #[inline(always)]
            fn reschedule(&mut self, h: Handle, earliest: u64, latest: u64) -> Result<(), Error> {
                Scheme::reschedule(self, h, earliest, latest)
            }
            #[inline(always)]
            fn stop(&mut self, h: Handle) -> Result<(), Error> {
                Scheme::stop(self, h).map(drop)
            }
            #[inline(always)]
            fn tick(&mut self) {
                Scheme::tick(self);
            }
            #[inline(always)]
            fn advance(&mut self, target: u64) -> Advanced {
                Scheme::advance(self, target, Clock::Tickless, &mut Work::unlimited())
            }
            #[inline(always)]
            fn pop_expired(&mut self) -> Option<u64> {
                Scheme::pop_expired(self).map(|e| e.id)
            }
            #[inline(always)]
            fn next_work(&self) -> Option<u64> {
                Scheme::next_work(self)
            }
            #[inline(always)]
            fn next_expiry(&self) -> NextExpiry {
                Scheme::next_expiry(self)
            }
        }
    )*};
}

scheme_timers!(
    HashedUnsorted<HostStorage>,
    Hierarchical<HostStorage>,
    AnyScheme<HostStorage>
);

impl<T: Scheme> Timers for Callouts<HostStorage, T> {
    #[inline(always)]
    fn now(&self) -> u64 {
        Scheme::now(self.scheme())
    }
    #[inline(always)]
    fn start(&mut self, ticks: u64, id: u64) -> Result<Handle, Error> {
        self.setcallout(ticks, id)
    }
    #[inline(always)]
    fn start_range(&mut self, earliest: u64, latest: u64, id: u64) -> Result<Handle, Error> {
        self.setcallout_range(earliest, latest, id, &mut Work::unlimited())
    }
    #[inline(always)]
    fn reschedule(&mut self, h: Handle, earliest: u64, latest: u64) -> Result<(), Error> {
        Callouts::reschedule(self, h, earliest, latest)
    }
    #[inline(always)]
    fn stop(&mut self, h: Handle) -> Result<(), Error> {
        self.unsetcallout(h).map(drop)
    }
    #[inline(always)]
    fn tick(&mut self) {
        Callouts::tick(self);
    }
    #[inline(always)]
    fn advance(&mut self, target: u64) -> Advanced {
        Callouts::advance(self, target, Clock::Tickless, &mut Work::unlimited())
    }
    #[inline(always)]
    fn pop_expired(&mut self) -> Option<u64> {
        Callouts::pop_expired(self).map(|f| match f.origin {
            Origin::Callout { cookie } => cookie,
            // The port arms nothing through `timeout`.
            Origin::Legacy { func, .. } => func,
        })
    }
    #[inline(always)]
    fn next_work(&self) -> Option<u64> {
        Callouts::next_work(self)
    }
    #[inline(always)]
    fn next_expiry(&self) -> NextExpiry {
        Scheme::next_expiry(self.scheme())
    }
}

/// glibc's `rand()` (the `TYPE_3` additive feedback generator of `random_r`, degree 31,
/// separation 3) from its default seed, 1: the sequence Ratas' benchmark draws.
pub(crate) struct GlibcRand {
    state: [i32; 31],
    front: usize,
    rear: usize,
}

/// glibc's `RAND_MAX`.
const RAND_MAX: i32 = i32::MAX;

impl GlibcRand {
    /// `srand(seed)`.
    pub(crate) fn new(seed: u32) -> Self {
        let mut state = [0i32; 31];
        // A seed of 0 is taken as 1, as glibc does.
        let mut word = i64::from(if seed == 0 { 1 } else { seed });
        state[0] = word as i32;
        for s in state.iter_mut().skip(1) {
            // 16807 * word mod (2^31 - 1), by Schrage's method, as glibc computes it.
            let hi = word / 127_773;
            let lo = word % 127_773;
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            *s = word as i32;
        }
        let mut r = GlibcRand {
            state,
            front: 3,
            rear: 0,
        };
        for _ in 0..310 {
            r.next();
        }
        r
    }

    /// `rand()`: 0 to `RAND_MAX`.
    pub(crate) fn next(&mut self) -> i32 {
        let v = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = v;
        self.front = if self.front == 30 { 0 } else { self.front + 1 };
        self.rear = if self.rear == 30 { 0 } else { self.rear + 1 };
        ((v as u32) >> 1) as i32
    }
}

/// Ticks of 20 µs: 50 a millisecond.
const TIME_MS: u64 = 50;
const TIME_S: u64 = 1000 * TIME_MS;
/// Responses per request.
const RESPONSE_SIZE: i32 = 128;
/// Ticks between two responses.
const PACE_TICKS: u64 = 10;

/// A unit's timers, by role; a timer's id is `unit << ROLE_BITS | role`, taken apart by shifts
/// rather than a division when it fires.
const IDLE: usize = 0;
const CLOSE: usize = 1;
const PACE: usize = 2;
const REQUEST: usize = 3;
const DEADLINE: usize = 4;
const ROLES: usize = 5;
/// Bits of a timer's id that name its role.
const ROLE_BITS: u32 = 3;
const _: () = assert!(ROLES <= 1 << ROLE_BITS);

/// How Ratas' `schedule` on a pending timer is made, and how the clock is run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    /// What the crate offered before reschedules, ranges and the tickless clock: stop +
    /// start, the idle timer at exactly 60 s, and the clock run by [`Scheme::tick`], one tick
    /// at a time up to the deadline [`Scheme::next_expiry`] names (every tick where it names
    /// none, as scheme 6's did).
    Legacy,
    /// [`Scheme::stop`] + [`Scheme::start`] (a new handle each time), the idle timer at exactly
    /// 60 s: Ratas with `BENCH_ALLOW_SCHEDULE_IN_RANGE=no`, the crate without reschedule.
    StopStart,
    /// [`Scheme::reschedule`] in place, the idle timer at exactly 60 s.
    InPlace,
    /// [`Scheme::reschedule`] in place, the idle timer anywhere in `[60 s, 61 s]`
    /// ([`Scheme::start_range`] when it is not pending): Ratas' default.
    Range,
}

impl Way {
    /// The way a [`Bench`]'s const parameter names.
    const fn of(code: u8) -> Way {
        match code {
            0 => Way::Legacy,
            1 => Way::StopStart,
            2 => Way::InPlace,
            _ => Way::Range,
        }
    }

    #[cfg(test)]
    pub(crate) const ALL: [Way; 4] = [Way::Legacy, Way::StopStart, Way::InPlace, Way::Range];

    pub(crate) fn bench(self) -> &'static str {
        match self {
            Way::Legacy => "ratas-legacy",
            Way::StopStart => "ratas-stop-start",
            Way::InPlace => "ratas-in-place",
            Way::Range => "ratas-range",
        }
    }

    pub(crate) fn text(self) -> &'static str {
        match self {
            Way::Legacy => "stop + start, idle at 60 s, tick by tick",
            Way::StopStart => "stop + start, idle at 60 s",
            Way::InPlace => "reschedule in place, idle at 60 s",
            Way::Range => "reschedule in place, idle in [60 s, 61 s]",
        }
    }
}

/// One work unit: one cache line, its timers' handles beside its state, as a Ratas unit holds
/// its timer events beside its own fields (see `doc/ratas.md`).
#[repr(align(64))]
struct Unit {
    timers: [Option<Handle>; ROLES],
    other: u32,
    tx_count: i32,
    rx_count: i32,
    pace_quota: i32,
    request_interval: u32,
    closing: bool,
    waiting_for_response: bool,
    alive: bool,
}

/// What a run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Outcome {
    /// Ratas' checksum: responses received, summed over the units as they go.
    pub(crate) total_rx_count: i64,
    /// Calls of Ratas' `schedule` and `schedule_in_range`.
    pub(crate) schedules: u64,
    /// Timers fired.
    pub(crate) executions: u64,
    /// Calls of `cancel` (besides a unit's timers going with it).
    pub(crate) cancels: u64,
    /// Work units created.
    pub(crate) units: u64,
}

impl Outcome {
    /// Timer operations: schedules, executions and cancels.
    pub(crate) fn operations(&self) -> u64 {
        self.schedules + self.executions + self.cancels
    }
}

/// The benchmark's world, run the way `WAY` names (`Way as u8`): a constant, so that each
/// way's run is compiled without the others' branches, as Ratas' is built for one way.
struct Bench<S: Timers, const WAY: u8> {
    s: S,
    units: Vec<Unit>,
    out: Outcome,
}

impl<S: Timers, const WAY: u8> Bench<S, WAY> {
    const WAY: Way = Way::of(WAY);

    /// Ratas' `schedule(timer, delta)`.
    fn schedule(&mut self, unit: usize, role: usize, delta: u64) -> Result<(), Error> {
        self.out.schedules += 1;
        self.arm(unit, role, delta, delta)
    }

    /// Arms timer `role` of `unit` within `[earliest, latest]` ticks from now, moving it if it
    /// is pending.
    #[inline(always)]
    fn arm(&mut self, unit: usize, role: usize, earliest: u64, latest: u64) -> Result<(), Error> {
        match (self.units[unit].timers[role], Self::WAY) {
            // In place, the handle stays.
            (Some(h), Way::InPlace | Way::Range) => self.s.reschedule(h, earliest, latest),
            _ => self.arm_anew(unit, role, earliest, latest),
        }
    }

    /// [`Self::arm`] when it takes a new handle: the timer is not pending, or the way moves a
    /// pending one by stop + start ([`Self::arm`] has moved it in place otherwise).
    ///
    /// Inlined, with [`Self::deliver`] and [`Self::receive`], as Ratas' compiler inlines its
    /// unit's methods into the timer's callback: a pace timer's firing (its pop, the two idle
    /// timers' stay-put checks, its start again) is then one function with no call in it. With
    /// this and `deliver` calls of their own, each saved and restored six registers on every
    /// firing: the port took 1.12× the time (scheme 7 with ranges, `doc/ratas.md`).
    #[inline(always)]
    fn arm_anew(
        &mut self,
        unit: usize,
        role: usize,
        earliest: u64,
        latest: u64,
    ) -> Result<(), Error> {
        let id = (unit << ROLE_BITS | role) as u64;
        let slot = &mut self.units[unit].timers[role];
        let handle = match (*slot, Self::WAY) {
            (Some(_), Way::InPlace | Way::Range) => unreachable!("moved in place by `arm`"),
            (Some(h), Way::StopStart | Way::Legacy) => {
                self.s.stop(h)?;
                self.s.start(latest, id)?
            }
            (None, Way::Range) => self.s.start_range(earliest, latest, id)?,
            (None, _) => self.s.start(latest, id)?,
        };
        *slot = Some(handle);
        Ok(())
    }

    /// Ratas' `cancel`, uncounted.
    fn disarm(&mut self, unit: usize, role: usize) -> Result<(), Error> {
        if let Some(h) = self.units[unit].timers[role].take() {
            self.s.stop(h)?;
        }
        Ok(())
    }

    /// A pair of units, the client sending its first request.
    fn make_pair(&mut self, request_interval: u64) -> Result<(), Error> {
        let server = self.units.len();
        let client = server + 1;
        for (other, interval) in [(client, TIME_S), (server, request_interval)] {
            let other = u32::try_from(other).map_err(|_| Error::Full)?;
            let interval = u32::try_from(interval).map_err(|_| Error::Interval)?;
            self.units.push(Unit {
                timers: [None; ROLES],
                other,
                tx_count: 0,
                rx_count: 0,
                pace_quota: 1,
                request_interval: interval,
                closing: false,
                waiting_for_response: false,
                alive: true,
            });
        }
        self.out.units += 2;
        self.start(server, true)?;
        self.start(client, false)
    }

    fn start(&mut self, unit: usize, server: bool) -> Result<(), Error> {
        self.unidle(unit)?;
        self.schedule(unit, CLOSE, 180 * TIME_S)?;
        if !server {
            self.on_request(unit)?;
        }
        Ok(())
    }

    fn transmit(&mut self, unit: usize, count: i32) -> Result<(), Error> {
        self.units[unit].tx_count += count;
        self.deliver(unit)
    }

    /// Inlined: see [`Self::arm_anew`].
    #[inline(always)]
    fn deliver(&mut self, unit: usize) -> Result<(), Error> {
        self.unidle(unit)?;
        let u = &mut self.units[unit];
        let amount = u.pace_quota.min(u.tx_count);
        u.pace_quota -= amount;
        u.tx_count -= amount;
        let (other, quota) = (u.other as usize, u.pace_quota);
        self.receive(other, amount)?;
        if quota == 0 {
            self.schedule(unit, PACE, PACE_TICKS)?;
        }
        Ok(())
    }

    /// Inlined: see [`Self::arm_anew`].
    #[inline(always)]
    fn receive(&mut self, unit: usize, _count: i32) -> Result<(), Error> {
        if !self.units[unit].alive {
            // Ratas would touch a deleted unit here; the workload never does.
            return Err(Error::Stale);
        }
        self.unidle(unit)?;
        if self.units[unit].waiting_for_response {
            self.schedule(unit, DEADLINE, PACE_TICKS * RESPONSE_SIZE as u64 * 2)?;
            self.units[unit].waiting_for_response = false;
        }
        let u = &mut self.units[unit];
        u.rx_count += 1;
        if u.rx_count % RESPONSE_SIZE == 0 {
            let interval = u64::from(u.request_interval);
            self.out.cancels += 1;
            self.disarm(unit, DEADLINE)?;
            self.schedule(unit, REQUEST, interval)?;
        }
        Ok(())
    }

    fn on_close(&mut self, unit: usize) -> Result<(), Error> {
        if self.units[unit].closing {
            self.delete(unit)
        } else {
            self.units[unit].closing = true;
            self.schedule(unit, CLOSE, 10 * TIME_S)
        }
    }

    fn on_pace(&mut self, unit: usize) -> Result<(), Error> {
        if self.units[unit].tx_count != 0 {
            self.units[unit].pace_quota = 1;
            self.deliver(unit)?;
        }
        Ok(())
    }

    fn on_request(&mut self, unit: usize) -> Result<(), Error> {
        if !self.units[unit].closing {
            self.schedule(unit, DEADLINE, PACE_TICKS * RESPONSE_SIZE as u64 * 4)?;
            self.units[unit].waiting_for_response = true;
            let other = self.units[unit].other as usize;
            self.transmit(other, RESPONSE_SIZE)?;
        }
        Ok(())
    }

    #[inline(always)]
    fn unidle(&mut self, unit: usize) -> Result<(), Error> {
        self.out.schedules += 1;
        match Self::WAY {
            Way::Range => self.arm(unit, IDLE, 60 * TIME_S, 61 * TIME_S),
            _ => self.arm(unit, IDLE, 60 * TIME_S, 60 * TIME_S),
        }
    }

    /// A unit goes: its timers are cancelled, its responses counted.
    fn delete(&mut self, unit: usize) -> Result<(), Error> {
        if !self.units[unit].alive {
            return Ok(());
        }
        for role in 0..ROLES {
            self.disarm(unit, role)?;
        }
        let u = &mut self.units[unit];
        u.alive = false;
        self.out.total_rx_count += i64::from(u.rx_count);
        Ok(())
    }

    fn execute(&mut self, id: u64) -> Result<(), Error> {
        let (unit, role) = (
            id as usize >> ROLE_BITS,
            id as usize & ((1 << ROLE_BITS) - 1),
        );
        self.units[unit].timers[role] = None;
        self.out.executions += 1;
        match role {
            IDLE => self.delete(unit),
            CLOSE => self.on_close(unit),
            PACE => self.on_pace(unit),
            REQUEST => self.on_request(unit),
            _ => {
                // The request deadline: something went wrong, both sides go.
                let other = self.units[unit].other as usize;
                self.delete(unit)?;
                self.delete(other)
            }
        }
    }

    /// Ratas' `advance(delta)`: runs the clock `delta` ticks on, executing every timer due on
    /// the way, in tick order, including those armed meanwhile.
    fn advance(&mut self, delta: u64) -> Result<(), Error> {
        if Self::WAY == Way::Legacy {
            for _ in 0..delta {
                self.s.tick();
                while let Some(id) = self.s.pop_expired() {
                    self.execute(id)?;
                }
            }
            return Ok(());
        }
        let target = self.s.now() + delta;
        loop {
            match self.s.advance(target) {
                Advanced::Reached => return Ok(()),
                done => {
                    while let Some(id) = self.s.pop_expired() {
                        self.execute(id)?;
                    }
                    // A tick that queued timers is done when `advance` returns, and nothing
                    // armed since is due on it: at the target, this is the end.
                    if done == Advanced::Due && self.s.now() == target {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Ratas' `ticks_to_next_event(max)`: here a lower bound, which is all the clock needs.
    fn ticks_to_next_event(&self, max: u64) -> u64 {
        if Self::WAY == Way::Legacy {
            return match self.s.next_expiry() {
                NextExpiry::Idle => max,
                NextExpiry::At(t) => t.wrapping_sub(self.s.now()).clamp(1, max),
                NextExpiry::Unknown => 1,
            };
        }
        match self.s.next_work() {
            Some(t) => t.wrapping_sub(self.s.now()).clamp(1, max),
            None => max,
        }
    }
}

/// Runs Ratas' benchmark with `pairs` pairs on `s` (empty, its clock at 0, room for at least
/// `capacity(pairs)` timers). Returns what it did and how long it took.
pub(crate) fn run<S: Timers>(s: S, way: Way, pairs: u32) -> Result<(Outcome, Duration), Error> {
    match way {
        Way::Legacy => run_way::<S, { Way::Legacy as u8 }>(s, pairs),
        Way::StopStart => run_way::<S, { Way::StopStart as u8 }>(s, pairs),
        Way::InPlace => run_way::<S, { Way::InPlace as u8 }>(s, pairs),
        Way::Range => run_way::<S, { Way::Range as u8 }>(s, pairs),
    }
}

/// [`run`], the way `WAY` names.
fn run_way<S: Timers, const WAY: u8>(s: S, pairs: u32) -> Result<(Outcome, Duration), Error> {
    let mut b = Bench::<S, WAY> {
        s,
        units: Vec::with_capacity(2 * pairs as usize + 64),
        out: Outcome::default(),
    };
    let mut rand = GlibcRand::new(1);
    let began = Instant::now();
    let create_period = TIME_S;
    let progress_per_iter = f64::from(pairs) / create_period as f64 * 2.0;
    let mut progress = 0.0;
    while b.s.now() < create_period {
        progress += (f64::from(rand.next()) * progress_per_iter) / f64::from(RAND_MAX);
        while progress > 1.0 {
            progress -= 1.0;
            let interval = TIME_S + (rand.next() % 100) as u64;
            b.make_pair(interval)?;
        }
        b.advance(1)?;
    }
    while b.s.now() < 300 * TIME_S {
        let t = b.ticks_to_next_event(100 * TIME_MS);
        b.advance(t)?;
    }
    let took = began.elapsed();
    // The units still there (none, at the end of a whole run) count too.
    for unit in 0..b.units.len() {
        b.delete(unit)?;
    }
    Ok((b.out, took))
}

/// Timers a run with `pairs` pairs may have outstanding at once: five per unit, with room for
/// the randomness of their creation. At most [`MAX_PAIRS`] pairs.
pub(crate) fn capacity(pairs: u32) -> u32 {
    (2 * pairs + 64) * 2 * ROLES as u32
}

/// The fewest pairs a run makes any of: it makes one each time its progress, `pairs` a second
/// on average, passes 1, which with one pair it does not within the first second.
pub(crate) const MIN_PAIRS: u32 = 2;

/// The most pairs a run can have: [`capacity`] within the crate's [`wheel::MAX_CAPACITY`].
pub(crate) const MAX_PAIRS: u32 = (wheel::MAX_CAPACITY / (2 * ROLES as u32) - 64) / 2;

#[cfg(test)]
mod tests {
    use super::*;
    use wheel::{Config, SchemeKind};

    #[test]
    fn each_way_is_its_own_constant() {
        for way in Way::ALL {
            assert_eq!(Way::of(way as u8), way);
        }
    }

    #[test]
    fn a_unit_is_one_cache_line() {
        assert_eq!(core::mem::size_of::<Unit>(), 64);
        assert_eq!(core::mem::align_of::<Unit>(), 64);
    }

    #[test]
    fn the_fewest_pairs_make_a_pair() {
        let run7 = |pairs| {
            run(
                Hierarchical::new(&config(pairs)).unwrap(),
                Way::Range,
                pairs,
            )
        };
        let none = run7(MIN_PAIRS - 1).unwrap().0;
        assert_eq!((none.units, none.operations()), (0, 0), "{none:?}");
        let some = run7(MIN_PAIRS).unwrap().0;
        assert!(some.units > 0 && some.total_rx_count > 0, "{some:?}");
    }

    #[test]
    fn the_most_pairs_fill_the_crate_s_capacity() {
        assert!(capacity(MAX_PAIRS) <= wheel::MAX_CAPACITY);
        assert!(capacity(MAX_PAIRS + 1) > wheel::MAX_CAPACITY);
        let c = Config {
            capacity: capacity(MAX_PAIRS + 1),
            ..config(1)
        };
        assert!(Hierarchical::<HostStorage>::new(&c).is_err());
    }

    #[test]
    fn glibc_rand_from_the_default_seed() {
        let mut r = GlibcRand::new(1);
        let v: Vec<i32> = (0..5).map(|_| r.next()).collect();
        assert_eq!(
            v,
            [1804289383, 846930886, 1681692777, 1714636915, 1957747793]
        );
    }

    fn config(pairs: u32) -> Config {
        Config {
            capacity: capacity(pairs),
            slots: 4096,
            start: 0,
            ..Default::default()
        }
    }

    /// Every way, both wheels, each named, held as `AnyScheme`, under the callout layer and under
    /// the callout layer over the scheme named: the same checksum and the same counts, which are
    /// Ratas' own (its `test_benchmark` with `BENCH_PAIR_COUNT=20` gives `total_rx_count`
    /// 436,259).
    #[test]
    fn every_way_receives_what_ratas_receives() {
        let pairs = 20;
        let c = config(pairs);
        let mut seen = Vec::new();
        let s6 = || HashedUnsorted::<HostStorage>::new(&c).unwrap();
        let s7 = || Hierarchical::<HostStorage>::new(&c).unwrap();
        fn over<T: Scheme>(s: T) -> Callouts<HostStorage, T> {
            Callouts::over(s).unwrap()
        }
        for way in Way::ALL {
            seen.push(run(s6(), way, pairs).unwrap().0);
            seen.push(run(s7(), way, pairs).unwrap().0);
            seen.push(run(over(s6()), way, pairs).unwrap().0);
            seen.push(run(over(s7()), way, pairs).unwrap().0);
            for kind in [SchemeKind::HashedUnsorted, SchemeKind::Hierarchical] {
                let any = AnyScheme::<HostStorage>::new(kind, &c).unwrap();
                let layer = Callouts::<HostStorage>::new(kind, &c).unwrap();
                seen.push(run(any, way, pairs).unwrap().0);
                seen.push(run(layer, way, pairs).unwrap().0);
            }
        }
        assert!(seen.iter().all(|o| *o == seen[0]), "{seen:#?}");
        assert!(seen[0].schedules > seen[0].executions);
        assert_eq!(seen[0].total_rx_count, RX_AT_20_PAIRS);
    }

    /// Ratas' `total_rx_count` with 20 pairs.
    const RX_AT_20_PAIRS: i64 = 436_259;
}
