// SPDX-License-Identifier: GPL-2.0

//! The callout facility over every scheme: both BSD interfaces (section VII of the paper),
//! first case by case, then against a model with random operation sequences.
//!
//! The model files legacy callouts under `(func, arg)` in a `BTreeMap` keyed by
//! `(deadline, arm order)`, so `untimeout` must cancel that map's first entry: the callout due
//! first, the oldest among equals (a reset moves a callout, and keeps its arm order). Arms and
//! resets with a range take the tick the facility reports, which must lie in the range.
//! `WHEEL_PROP_OPS` scales the run as in `differential.rs` (a quarter of it here);
//! `WHEEL_PROP_SEED` changes the sequences.

mod common;

use common::{callouts, config, max_interval, prop_ops, prop_seed};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::io::Write;
use wheel::callout::{Callouts, Fired, Origin};
use wheel::rng::Rng;
use wheel::scheme6::HashedUnsorted;
use wheel::scheme7::Hierarchical;
use wheel::{
    Advanced, Clock, Config, Error, Handle, HostStorage, Scheme, SchemeKind, Work, MAX_INTERVAL,
};

/// Operations per backend in a plain `cargo test`.
const DEFAULT_OPS: u64 = 250_000;

/// Pointer-like keys: kernel text for functions, the direct map for arguments.
fn func(k: u64) -> u64 {
    0xffff_ffff_8100_0000 + k * 0x40
}

fn arg(k: u64) -> u64 {
    0xffff_8880_0000_0000 + k * 0x8
}

fn every(capacity: u32, start: u64) -> Vec<(SchemeKind, Callouts<HostStorage>)> {
    SchemeKind::ALL
        .into_iter()
        .map(|k| (k, callouts(k, capacity, start)))
        .collect()
}

fn step<T: Scheme>(c: &mut Callouts<HostStorage, T>) -> Vec<Fired> {
    c.tick();
    std::iter::from_fn(|| c.pop_expired()).collect()
}

#[test]
fn both_interfaces_fire_with_their_origin() {
    for (kind, mut c) in every(16, u64::MAX - 2) {
        let name = kind.name();
        let a = c.setcallout(3, 7).unwrap();
        let b = c.timeout(func(1), arg(1), 3).unwrap();
        assert!(step(&mut c).is_empty() && step(&mut c).is_empty(), "{name}");
        let mut fired = step(&mut c);
        fired.sort_by_key(|f| f.handle.to_raw());
        let mut want = vec![
            Fired {
                handle: a,
                origin: Origin::Callout { cookie: 7 },
                deadline: 0,
            },
            Fired {
                handle: b,
                origin: Origin::Legacy {
                    func: func(1),
                    arg: arg(1),
                },
                deadline: 0,
            },
        ];
        want.sort_by_key(|f| f.handle.to_raw());
        assert_eq!(fired, want, "{name}");
        assert_eq!(c.untimeout(func(1), arg(1)), Err(Error::NotFound), "{name}");
        assert_eq!(c.unsetcallout(a), Err(Error::Stale), "{name}");
        assert!(c.memory_bytes() > c.scheme().memory_bytes(), "{name}");
    }
}

#[test]
fn untimeout_cancels_the_duplicate_due_first() {
    for (kind, mut c) in every(16, 1 << 32) {
        let name = kind.name();
        let (f, a) = (func(2), arg(3));
        let late = c.timeout(f, a, 50).unwrap();
        let old = c.timeout(f, a, 10).unwrap();
        let new = c.timeout(f, a, 10).unwrap();
        let other = c.timeout(f, arg(4), 5).unwrap();
        c.untimeout(f, a).unwrap();
        assert_eq!(c.unsetcallout(old), Err(Error::Stale), "{name}");
        c.untimeout(f, a).unwrap();
        assert_eq!(c.unsetcallout(new), Err(Error::Stale), "{name}");
        let legacy = Origin::Legacy { func: f, arg: a };
        assert_eq!(c.unsetcallout(late), Ok(legacy), "{name}");
        assert_eq!(c.untimeout(f, a), Err(Error::NotFound), "{name}");
        assert_eq!(c.scheme().len(), 1, "{name}");
        let fired: Vec<Handle> = (0..5)
            .flat_map(|_| step(&mut c))
            .map(|f| f.handle)
            .collect();
        assert_eq!(fired, [other], "{name}");
    }
}

#[test]
fn full_and_invalid_change_nothing() {
    for (kind, mut c) in every(3, 0) {
        let name = kind.name();
        c.timeout(func(0), arg(0), 2).unwrap();
        c.timeout(func(0), arg(0), 1).unwrap();
        c.setcallout(1, 5).unwrap();
        assert_eq!(c.timeout(func(1), arg(1), 1), Err(Error::Full), "{name}");
        assert_eq!(c.setcallout(1, 6), Err(Error::Full), "{name}");
        assert_eq!(c.untimeout(func(1), arg(1)), Err(Error::NotFound), "{name}");
        c.untimeout(func(0), arg(0)).unwrap();
        assert_eq!(
            c.timeout(func(1), arg(1), 0),
            Err(Error::Interval),
            "{name}"
        );
        assert_eq!(
            c.setcallout(MAX_INTERVAL, 1),
            Err(Error::Interval),
            "{name}"
        );
        assert_eq!(c.scheme().len(), 2, "{name}");
        let fired: Vec<(Origin, u64)> = (0..2)
            .flat_map(|_| step(&mut c))
            .map(|f| (f.origin, f.deadline))
            .collect();
        assert_eq!(fired.len(), 2, "{name}: {fired:?}");
        assert!(
            fired.contains(&(Origin::Callout { cookie: 5 }, 1)),
            "{name}"
        );
        let legacy = Origin::Legacy {
            func: func(0),
            arg: arg(0),
        };
        assert!(fired.contains(&(legacy, 2)), "{name}");
    }
}

/// One callout of the model.
#[derive(Clone, Copy, Debug)]
struct Entry {
    origin: Origin,
    rel: u64,
    seq: u64,
    queued: bool,
}

/// The reference for [`Callouts`].
#[derive(Default)]
struct Model {
    start: u64,
    elapsed: u64,
    capacity: usize,
    max_interval: u64,
    live: HashMap<u64, Entry>,
    pending: BTreeMap<(u64, u64), u64>,
    due: BTreeMap<(u64, u64), u64>,
    by_key: HashMap<(u64, u64), BTreeMap<(u64, u64), u64>>,
    dead: VecDeque<u64>,
    /// Every handle ever issued: none may come back.
    issued: HashSet<u64>,
    seq: u64,
}

impl Model {
    /// What the range `[earliest, latest]` is refused with, if anything.
    fn range_error(&self, earliest: u64, latest: u64) -> Option<Error> {
        if earliest == 0 || latest < earliest || latest >= MAX_INTERVAL {
            Some(Error::Interval)
        } else if earliest > self.max_interval {
            Some(Error::Range)
        } else {
            None
        }
    }

    fn start_errors(&self, earliest: u64, latest: u64) -> Vec<Error> {
        let mut errs: Vec<Error> = self.range_error(earliest, latest).into_iter().collect();
        if self.live.len() == self.capacity {
            errs.push(Error::Full);
        }
        errs
    }

    /// The interval of the tick `deadline` the facility reports for a callout armed or reset
    /// into `[earliest, latest]` just now, if it lies in the range (within the scheme's reach).
    fn chosen(&self, deadline: u64, earliest: u64, latest: u64) -> Result<u64, String> {
        let ticks = deadline.wrapping_sub(self.start.wrapping_add(self.elapsed));
        match (earliest..=latest.min(self.max_interval)).contains(&ticks) {
            true => Ok(ticks),
            false => Err(format!(
                "due {ticks} ticks from now, outside [{earliest}, {latest}]"
            )),
        }
    }

    fn armed(&mut self, h: Handle, ticks: u64, origin: Origin) -> Result<(), String> {
        let raw = h.to_raw();
        if !self.issued.insert(raw) {
            return Err(format!("{h:?} issued twice"));
        }
        self.seq += 1;
        let e = Entry {
            origin,
            rel: self.elapsed + ticks,
            seq: self.seq,
            queued: false,
        };
        self.file(raw, e);
        Ok(())
    }

    /// Files live callout `raw` as `e` says.
    fn file(&mut self, raw: u64, e: Entry) {
        self.live.insert(raw, e);
        self.pending.insert((e.rel, e.seq), raw);
        if let Origin::Legacy { func, arg } = e.origin {
            self.by_key
                .entry((func, arg))
                .or_default()
                .insert((e.rel, e.seq), raw);
        }
    }

    /// Takes live callout `raw` off the model's maps, leaving its handle live.
    fn unfile(&mut self, raw: u64) -> Entry {
        let e = self.live.remove(&raw).expect("live");
        let map = if e.queued {
            &mut self.due
        } else {
            &mut self.pending
        };
        map.remove(&(e.rel, e.seq));
        if let Origin::Legacy { func, arg } = e.origin {
            let chain = self.by_key.get_mut(&(func, arg)).expect("key");
            chain.remove(&(e.rel, e.seq));
            if chain.is_empty() {
                self.by_key.remove(&(func, arg));
            }
        }
        e
    }

    /// A reset of live callout `raw` to `ticks` from now: it keeps its handle, what it is, and
    /// its arm order.
    fn reset(&mut self, raw: u64, ticks: u64) {
        let e = self.unfile(raw);
        let e = Entry {
            rel: self.elapsed + ticks,
            queued: false,
            ..e
        };
        self.file(raw, e);
    }

    fn remove(&mut self, raw: u64) -> Entry {
        let e = self.unfile(raw);
        if self.dead.len() == 64 {
            self.dead.pop_front();
        }
        self.dead.push_back(raw);
        e
    }

    /// The tick the cancelled callout was due on.
    fn untimeout(&mut self, func: u64, arg: u64) -> Result<u64, Error> {
        let raw = match self.by_key.get(&(func, arg)) {
            Some(chain) => *chain.values().next().expect("nonempty"),
            None => return Err(Error::NotFound),
        };
        Ok(self.start.wrapping_add(self.remove(raw).rel))
    }

    fn tick(&mut self) -> usize {
        self.elapsed += 1;
        let mut n = 0;
        while let Some(entry) = self.pending.first_entry() {
            if entry.key().0 > self.elapsed {
                break;
            }
            let key = *entry.key();
            let raw = entry.remove();
            self.live.get_mut(&raw).expect("live").queued = true;
            self.due.insert(key, raw);
            n += 1;
        }
        n
    }

    fn pop(&mut self, got: Option<Fired>) -> Result<(), String> {
        let first = self.due.first_key_value().map(|(k, _)| k.0);
        let f = match (got, first) {
            (None, None) => return Ok(()),
            (Some(f), Some(rel)) => {
                let e = self.live.get(&f.handle.to_raw()).copied();
                match e {
                    Some(e) if e.queued && e.rel == rel => (f, e),
                    _ => return Err(format!("{f:?} is not due first ({e:?})")),
                }
            }
            _ => return Err(format!("popped {got:?}, model's first due {first:?}")),
        };
        let (f, e) = f;
        let deadline = self.start.wrapping_add(e.rel);
        if (f.origin, f.deadline) != (e.origin, deadline) {
            return Err(format!("{f:?}, want {:?} due {deadline}", e.origin));
        }
        self.remove(f.handle.to_raw());
        Ok(())
    }
}

/// The model run on callouts over a scheme of kind `kind` that `make(capacity, start)` builds.
fn callout_model<T: Scheme>(kind: SchemeKind, make: impl Fn(u32, u64) -> Callouts<HostStorage, T>) {
    let total = prop_ops(DEFAULT_OPS * 4) / 4;
    let base = prop_seed();
    let mut ops = 0u64;
    for (run, &(capacity, start)) in [
        (8u32, 0u64),
        (256, (1 << 32) - 5000),
        (1024, u64::MAX - 3000),
    ]
    .iter()
    .enumerate()
    {
        let seed = base ^ (run as u64 + 1).wrapping_mul(0x51ed_270b) ^ (kind as u64) << 48;
        let mut c = make(capacity, start);
        let mut m = Model {
            start,
            capacity: capacity as usize,
            max_interval: max_interval(kind),
            ..Model::default()
        };
        let mut rng = Rng::new(seed);
        let mut n = 0u64;
        let mut last: VecDeque<String> = VecDeque::new();
        let fail = |what: String, n: u64, last: &VecDeque<String>, m: &Model| -> ! {
            panic!(
                "\nDIVERGENCE in callouts on {}: {what}\n  base seed {base:#x} \
                 (WHEEL_PROP_SEED={base}), run {run} seed {seed:#x}, op #{n}\n  model: elapsed \
                 {}, live {}, due {}, keys {}\n  last: {last:#?}",
                kind.name(),
                m.elapsed,
                m.live.len(),
                m.due.len(),
                m.by_key.len()
            )
        };
        while n < total / 3 + 1 {
            let interval = match rng.within(0, 10) {
                0..=5 => rng.within(1, 40),
                6..=7 => rng.within(1, 4096),
                8 => rng.within(1, 1 << 30),
                _ => [0, 4096, 4097, MAX_INTERVAL - 1, MAX_INTERVAL][rng.within(0, 5) as usize],
            };
            // A third of the arms and resets take a range, a sixth one that ends before it
            // begins (or, from 0, at 2^64 - 1: refused either way), the rest a single tick.
            let latest = match rng.within(0, 6) {
                0 | 1 => interval.saturating_add(rng.within(1, 5000)),
                2 => interval.wrapping_sub(1),
                _ => interval,
            };
            let (f, a) = (func(rng.within(0, 4)), arg(rng.within(0, 4)));
            let roll = rng.within(0, 100);
            let desc;
            match roll {
                0..=34 => {
                    let legacy = roll < 22;
                    let errs = m.start_errors(interval, latest);
                    let mut w = Work::unlimited();
                    let (got, origin) = if legacy {
                        let o = Origin::Legacy { func: f, arg: a };
                        (c.timeout_range(f, a, interval, latest, &mut w), o)
                    } else {
                        let cookie = rng.next_u64();
                        let got = c.setcallout_range(interval, latest, cookie, &mut w);
                        (got, Origin::Callout { cookie })
                    };
                    desc = format!("arm {origin:?} in [{interval}, {latest}] = {got:?}");
                    match got {
                        Ok(h) if errs.is_empty() => {
                            let due = c.deadline(h).unwrap_or_default();
                            let armed = m
                                .chosen(due, interval, latest)
                                .and_then(|t| m.armed(h, t, origin));
                            if let Err(e) = armed {
                                fail(format!("{desc}: {e}"), n, &last, &m);
                            }
                        }
                        Err(e) if errs.contains(&e) => {}
                        _ => fail(format!("{desc}, model allows {errs:?}"), n, &last, &m),
                    }
                }
                35..=49 => {
                    let want = m.untimeout(f, a);
                    // In steps of a few units of work, as a kernel walks a long chain.
                    let budget = rng.within(1, 5) as usize;
                    let got = loop {
                        match c.untimeout_within(f, a, &mut Work::new(budget)) {
                            Ok(None) => continue,
                            r => break r.map(|d| d.expect("cancelled")),
                        }
                    };
                    desc = format!("untimeout({f:#x}, {a:#x}) = {got:?}");
                    if got != want {
                        fail(format!("{desc}, model {want:?}"), n, &last, &m);
                    }
                }
                50..=69 => {
                    // A live one (the first due after a random tick), a dead one, or junk.
                    let from = (m.elapsed + rng.within(0, 5000), 0);
                    let live = match rng.within(0, 100) < 20 {
                        true => m.due.values().next(),
                        false => m.pending.range(from..).next().map(|(_, h)| h),
                    };
                    let raw = if let (Some(&h), true) = (live, rng.within(0, 100) < 70) {
                        h
                    } else if let Some(&d) = m.dead.get(rng.within(0, 64) as usize) {
                        d
                    } else {
                        rng.next_u64()
                    };
                    let h = Handle::from_raw(raw);
                    let alive = m.live.contains_key(&raw);
                    if roll < 60 {
                        let want = match alive {
                            true => Ok(m.remove(raw).origin),
                            false => Err(Error::Stale),
                        };
                        let got = c.unsetcallout(h);
                        desc = format!("unsetcallout({raw:#x}) = {got:?}");
                        if got != want {
                            fail(format!("{desc}, model {want:?}"), n, &last, &m);
                        }
                    } else {
                        // In place, unbounded, or within a budget that never runs out.
                        let want = match (alive, m.range_error(interval, latest)) {
                            (false, _) => Err(Error::Stale),
                            (true, Some(e)) => Err(e),
                            (true, None) => Ok(()),
                        };
                        let got = match rng.within(0, 2) {
                            0 => c.reschedule(h, interval, latest),
                            _ => {
                                let mut w = Work::unlimited();
                                c.reset(h, interval, latest, &mut w)
                            }
                        };
                        desc = format!("reset({raw:#x}, [{interval}, {latest}]) = {got:?}");
                        if got != want {
                            fail(format!("{desc}, model {want:?}"), n, &last, &m);
                        }
                        if got.is_ok() {
                            let due = c.deadline(h).unwrap_or_default();
                            match m.chosen(due, interval, latest) {
                                Ok(t) => m.reset(raw, t),
                                Err(e) => fail(format!("{desc}: {e}"), n, &last, &m),
                            }
                            if c.origin(h) != Some(m.live[&raw].origin) {
                                let got = c.origin(h);
                                fail(format!("{desc}: then {got:?}"), n, &last, &m);
                            }
                        }
                    }
                }
                _ => {
                    let want = m.tick();
                    let got = c.tick();
                    desc = format!("tick = {got}");
                    if got != want {
                        fail(format!("{desc}, model {want}"), n, &last, &m);
                    }
                    let partial = rng.within(0, 100) < 20;
                    let mut budget = rng.within(0, m.due.len() as u64 + 1);
                    loop {
                        if partial && budget == 0 {
                            break;
                        }
                        budget = budget.saturating_sub(1);
                        let got = c.pop_expired();
                        n += 1;
                        if let Err(e) = m.pop(got) {
                            fail(format!("pop {got:?}: {e}"), n, &last, &m);
                        }
                        let Some(f) = got else { break };
                        // Re-arm from inside expiry processing.
                        if rng.within(0, 100) < 30 && m.live.len() < m.capacity {
                            let t = rng.within(1, 8);
                            let h = match f.origin {
                                Origin::Legacy { func, arg } => c.timeout(func, arg, t),
                                Origin::Callout { cookie } => c.setcallout(t, cookie),
                            };
                            if t > m.max_interval {
                                continue;
                            }
                            let h = h.unwrap_or_else(|e| {
                                fail(format!("re-arm {f:?}: {e:?}"), n, &last, &m)
                            });
                            if let Err(e) = m.armed(h, t, f.origin) {
                                fail(e, n, &last, &m);
                            }
                            n += 1;
                        }
                    }
                }
            }
            n += 1;
            if last.len() == 16 {
                last.pop_front();
            }
            last.push_back(format!("#{n}: {desc}"));
            let s = c.scheme();
            let now = start.wrapping_add(m.elapsed);
            if (s.now(), s.len(), s.queued()) != (now, m.live.len(), m.due.len()) {
                let got = (s.now(), s.len(), s.queued());
                fail(format!("(now, len, queued) = {got:?}"), n, &last, &m);
            }
        }
        ops += n;
    }
    let _ = writeln!(
        std::io::stderr(),
        "callouts on {}: {ops} ops, seed {base:#x}",
        kind.name()
    );
}

/// The model run on callouts over a scheme of kind `kind` chosen at run time, as the module
/// holds it.
fn any_model(kind: SchemeKind) {
    callout_model(kind, |n, at| callouts(kind, n, at));
}

#[test]
fn model_scheme1() {
    any_model(SchemeKind::Straightforward);
}

#[test]
fn model_scheme2() {
    any_model(SchemeKind::OrderedList);
}

#[test]
fn model_scheme3() {
    any_model(SchemeKind::Heap);
}

#[test]
fn model_scheme4() {
    any_model(SchemeKind::BasicWheel);
}

#[test]
fn model_scheme5() {
    any_model(SchemeKind::HashedSorted);
}

#[test]
fn model_scheme6() {
    any_model(SchemeKind::HashedUnsorted);
}

#[test]
fn model_scheme7() {
    any_model(SchemeKind::Hierarchical);
}

/// The model run on callouts over a scheme of kind `kind` named at compile time, made by `new`,
/// as over the one chosen at run time.
fn named_model<T: Scheme>(kind: SchemeKind, new: fn(&Config) -> Result<T, Error>) {
    callout_model(kind, |n, at| {
        Callouts::over(new(&config(kind, n, at)).unwrap()).unwrap()
    });
}

#[test]
fn model_scheme6_named() {
    named_model(
        SchemeKind::HashedUnsorted,
        HashedUnsorted::<HostStorage>::new,
    );
}

#[test]
fn model_scheme7_named() {
    named_model(SchemeKind::Hierarchical, Hierarchical::<HostStorage>::new);
}

/// A scheme's own timers are callouts of the new interface once the layer takes it over, their
/// request ids their cookies; the layer's own arm beside them.
#[test]
fn over_adopts_the_schemes_timers_as_callouts() {
    let kind = SchemeKind::Hierarchical;
    for handles_only in [false, true] {
        let mut s = Hierarchical::<HostStorage>::new(&config(kind, 4, 0)).unwrap();
        let early = s.start(2, 7).unwrap();
        let late = s.start(3, 8).unwrap();
        let mut c = match handles_only {
            false => Callouts::<HostStorage, _>::over(s).unwrap(),
            true => Callouts::<HostStorage, _>::over_handles_only(s).unwrap(),
        };
        assert_eq!(c.origin(late), Some(Origin::Callout { cookie: 8 }));
        assert_eq!(c.unsetcallout(late), Ok(Origin::Callout { cookie: 8 }));
        let mine = c.setcallout(2, 9).unwrap();
        assert!(step(&mut c).is_empty());
        let mut fired: Vec<_> = step(&mut c).iter().map(|f| (f.handle, f.origin)).collect();
        fired.sort_by_key(|(h, _)| h.to_raw());
        let mut want = vec![
            (early, Origin::Callout { cookie: 7 }),
            (mine, Origin::Callout { cookie: 9 }),
        ];
        want.sort_by_key(|(h, _)| h.to_raw());
        assert_eq!(fired, want, "handles only: {handles_only}");
        assert!(step(&mut c).is_empty());
    }
}

#[test]
fn reset_keeps_handle_and_origin_for_both_interfaces() {
    for (kind, mut c) in every(16, 1000) {
        let name = kind.name();
        let mut w = Work::unlimited();
        let a = c.setcallout(500, 7).unwrap();
        let b = c.timeout(func(1), arg(1), 500).unwrap();
        let dup = c.timeout(func(1), arg(1), 30).unwrap();
        assert_eq!(c.origin(a), Some(Origin::Callout { cookie: 7 }), "{name}");
        assert_eq!(c.deadline(b), Some(1500), "{name}");
        assert_eq!(c.reset(a, 20, 20, &mut w), Ok(()), "{name}");
        assert_eq!(c.reset(b, 10, 10, &mut w), Ok(()), "{name}");
        assert_eq!(c.deadline(a), Some(1020), "{name}");
        // The legacy one reset earlier is now the one untimeout finds first.
        assert_eq!(c.untimeout(func(1), arg(1)), Ok(()), "{name}");
        assert_eq!(c.deadline(b), None, "{name}");
        assert_eq!(c.deadline(dup), Some(1030), "{name}");
        assert_eq!(c.reset(b, 5, 5, &mut w), Err(Error::Stale), "{name}");
        let mut fired = Vec::new();
        while fired.len() < 2 {
            let t = c.next_work().unwrap();
            while c.advance(t, Clock::Tickless, &mut Work::new(2)) != Advanced::Reached {
                fired.extend(std::iter::from_fn(|| c.pop_expired()));
            }
            fired.extend(std::iter::from_fn(|| c.pop_expired()));
        }
        assert_eq!(
            fired
                .iter()
                .map(|f| (f.handle, f.deadline))
                .collect::<Vec<_>>(),
            [(a, 1020), (dup, 1030)],
            "{name}"
        );
        assert_eq!(
            fired[1].origin,
            Origin::Legacy {
                func: func(1),
                arg: arg(1)
            }
        );
        assert_eq!(c.origin(a), None, "{name}");
        assert_eq!(c.next_work(), None, "{name}");
    }
}

#[test]
fn ranged_arms_fire_inside_their_range() {
    for (kind, mut c) in every(64, 0) {
        let name = kind.name();
        let mut w = Work::unlimited();
        let a = c.setcallout_range(100, 3000, 1, &mut w).unwrap();
        let b = c.timeout_range(func(2), arg(2), 10, 20, &mut w).unwrap();
        assert_eq!(
            c.timeout_range(func(2), arg(2), 0, 20, &mut w),
            Err(Error::Interval)
        );
        assert_eq!(c.setcallout_range(30, 20, 1, &mut w), Err(Error::Interval));
        let (da, db) = (c.deadline(a).unwrap(), c.deadline(b).unwrap());
        assert!(
            (100..=3000).contains(&da) && (10..=20).contains(&db),
            "{name}: {da} {db}"
        );
        assert!(!c.placing() && c.place(&mut w), "{name}");
        let mut fired: Vec<(Handle, u64)> = Vec::new();
        for _ in 0..3000 {
            fired.extend(step(&mut c).iter().map(|f| (f.handle, f.deadline)));
        }
        assert_eq!(fired, [(b, db), (a, da)], "{name}");
    }
}

#[test]
fn memory_per_callout_at_a_million() {
    let n = 1_000_000;
    for kind in [SchemeKind::HashedUnsorted, SchemeKind::Hierarchical] {
        let config = wheel::Config {
            capacity: n,
            slots: 4096,
            start: 0,
            ..Default::default()
        };
        let both = Callouts::<HostStorage>::new(kind, &config).unwrap();
        let handles = Callouts::<HostStorage>::with_handles_only(kind, &config).unwrap();
        // Hundredths of a byte per callout.
        let per = |c: &Callouts<HostStorage>| c.memory_bytes() * 100 / n as usize;
        let (both, handles) = (per(&both), per(&handles));
        eprintln!(
            "{}: {both} / {handles} hundredths of a byte per callout",
            kind.name()
        );
        assert!(both <= 64 * 100, "{}: {both}", kind.name());
        // The entry, 32 bytes, and the wheel's slot tables spread over a million.
        assert!(handles <= 32 * 100 + 10, "{}: {handles}", kind.name());
    }
}
