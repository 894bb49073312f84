// SPDX-License-Identifier: GPL-2.0

//! A fake of the module's instances for the tests of the sweep: it keeps the callouts, their
//! deadlines and the clock as the module does, refuses what the module refuses, and times each
//! bench with a cost model instead of a clock, so that what the sweep decides does not depend
//! on the machine.

use crate::device::Instance;
use crate::device::Opener;
use crate::uapi_defs::*;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::io;
use std::rc::Rc;

/// The ns per operation of a bench `kind` on `scheme` (0 for the kernel's timers) with `n`
/// timers, or the errno it fails with.
pub type Cost = dyn Fn(u32, u32, u64) -> Result<u64, i32>;

/// One TW_IOC_BENCH call: scheme, kind, n (or outstanding), iterations, seed (which the sweep
/// makes distinct per curve, n and repeat).
pub type Call = (u32, u32, u64, u64, u64);

/// What every instance of one fake module shares.
pub struct World {
    cost: Box<Cost>,
    pub benches: RefCell<Vec<Call>>,
}

impl World {
    pub fn new(cost: impl Fn(u32, u32, u64) -> Result<u64, i32> + 'static) -> Rc<World> {
        Rc::new(World {
            cost: Box::new(cost),
            benches: RefCell::new(Vec::new()),
        })
    }

    /// Opens fresh fake instances of this world.
    pub fn opener(self: &Rc<World>) -> Box<Opener<'static>> {
        let world = self.clone();
        Box::new(move || {
            Ok(Box::new(Fake {
                world: world.clone(),
                state: RefCell::default(),
            }) as Box<dyn Instance>)
        })
    }
}

#[derive(Default)]
struct State {
    config: Option<tw_config>,
    now: u64,
    next: u64,
    /// Handle → deadline.
    pending: BTreeMap<u64, u64>,
    /// (func, arg) → handle.
    legacy: BTreeMap<(u64, u64), u64>,
}

impl State {
    fn set(&mut self, ticks: u64) -> Result<u64, i32> {
        let c = self.config.get_or_insert_with(tw_config::default);
        if self.pending.len() as u64 >= u64::from(c.capacity.max(1)) {
            return Err(28); // ENOSPC
        }
        if ticks == 0 {
            return Err(22);
        }
        self.next += 1;
        self.pending.insert(self.next, self.now + ticks);
        Ok(self.next)
    }

    fn unset(&mut self, handle: u64) -> Result<(), i32> {
        self.pending.remove(&handle).map(|_| ()).ok_or(2) // ENOENT
    }

    fn op(&mut self, op: &mut tw_op) -> Result<(), i32> {
        match op.op {
            TW_OP_SET => op.handle = self.set(op.a)?,
            TW_OP_UNSET => self.unset(op.handle)?,
            TW_OP_TIMEOUT => {
                op.handle = self.set(op.c)?;
                self.legacy.insert((op.a, op.b), op.handle);
            }
            _ => return Err(22),
        }
        Ok(())
    }
}

struct Fake {
    world: Rc<World>,
    state: RefCell<State>,
}

fn errno(e: i32) -> io::Error {
    io::Error::from_raw_os_error(e)
}

impl Instance for Fake {
    fn info(&self) -> io::Result<tw_info> {
        Ok(tw_info {
            version: TW_VERSION,
            schemes: 0xfe,
            features: TW_FEATURE_TICKLESS | TW_FEATURE_RANGE,
            hold_work: TW_HOLD_WORK,
            // Linux 7.3 on x86-64 without lock debugging.
            timer_list_bytes: 40,
            hrtimer_bytes: 80,
            tick_ns: TW_DEFAULT_TICK_NS,
            ..tw_info::default()
        })
    }

    fn configure(&self, config: &tw_config) -> io::Result<()> {
        let mut s = self.state.borrow_mut();
        if s.config.is_some() {
            return Err(errno(16)); // EBUSY
        }
        if config.budget > TW_MAX_BUDGET || config.capacity > TW_MAX_CAPACITY {
            return Err(errno(22));
        }
        s.config = Some(*config);
        Ok(())
    }

    fn setcallout(&self, ticks: u64, _cookie: u64) -> io::Result<u64> {
        self.state.borrow_mut().set(ticks).map_err(errno)
    }

    fn unsetcallout(&self, handle: u64) -> io::Result<()> {
        self.state.borrow_mut().unset(handle).map_err(errno)
    }

    fn reset(&self, handle: u64, ticks: u64) -> io::Result<()> {
        let mut s = self.state.borrow_mut();
        let now = s.now;
        let d = s.pending.get_mut(&handle).ok_or(errno(2))?;
        *d = now + ticks;
        Ok(())
    }

    fn timeout(&self, func: u64, arg: u64, ticks: u64) -> io::Result<u64> {
        let mut s = self.state.borrow_mut();
        let h = s.set(ticks).map_err(errno)?;
        s.legacy.insert((func, arg), h);
        Ok(h)
    }

    fn untimeout(&self, func: u64, arg: u64) -> io::Result<()> {
        let mut s = self.state.borrow_mut();
        let h = s.legacy.remove(&(func, arg)).ok_or(errno(2))?;
        s.unset(h).map_err(errno)
    }

    fn batch(&self, ops: &mut [tw_op]) -> io::Result<()> {
        let mut s = self.state.borrow_mut();
        for op in ops {
            op.result = s.op(op).err().map_or(0, |e| -e);
        }
        Ok(())
    }

    fn stats(&self) -> io::Result<tw_stats> {
        let s = self.state.borrow();
        let capacity = s.config.map_or(0, |c| u64::from(c.capacity));
        Ok(tw_stats {
            outstanding: s.pending.len() as u64,
            now: s.now,
            memory_bytes: 4096 + 90 * capacity,
            ..tw_stats::default()
        })
    }

    fn bench(&self, b: &tw_bench) -> io::Result<tw_bench> {
        let mut s = self.state.borrow_mut();
        let Some(config) = s.config else {
            return Err(errno(22));
        };
        let instance = matches!(
            b.kind,
            TW_BENCH_SETCALLOUT | TW_BENCH_TIMEOUT | TW_BENCH_TICK | TW_BENCH_MOD
        );
        let bad = b.iterations == 0
            || b.iterations > TW_MAX_BENCH_ITERATIONS
            || b.min_ticks == 0
            || b.spread == 0
            || (!instance && b.min_ticks < TW_MIN_BASELINE_TICKS)
            || (instance && (b.n != 0 || config.clock != TW_CLOCK_MANUAL));
        if bad {
            return Err(errno(22));
        }
        let (scheme, n) = match instance {
            true => (config.scheme, s.pending.len() as u64),
            false => (0, b.n),
        };
        self.world
            .benches
            .borrow_mut()
            .push((scheme, b.kind, n, b.iterations, b.seed));
        let cost = (self.world.cost)(scheme, b.kind, n).map_err(errno)?;
        if b.kind == TW_BENCH_TICK {
            s.now += b.iterations;
            let now = s.now;
            s.pending.retain(|_, d| *d > now);
        }
        Ok(tw_bench {
            elapsed_ns: cost * b.iterations,
            max_hold_ns: if instance { cost + 7 } else { 0 },
            ..*b
        })
    }

    /// Both halves as [`Instance::bench`] makes them, each logged, the module's first; the
    /// module's kinds and Linux's, with the same iterations, or EINVAL.
    fn bench_pair(&self, p: &tw_bench_pair) -> io::Result<tw_bench_pair> {
        let kinds = matches!(
            p.instance.kind,
            TW_BENCH_SETCALLOUT | TW_BENCH_TIMEOUT | TW_BENCH_MOD
        ) && matches!(
            p.baseline.kind,
            TW_BENCH_TIMER_LIST | TW_BENCH_TIMER_LIST_MOD | TW_BENCH_HRTIMER
        );
        if !kinds || p.instance.iterations != p.baseline.iterations {
            return Err(errno(22));
        }
        Ok(tw_bench_pair {
            instance: self.bench(&p.instance)?,
            baseline: self.bench(&p.baseline)?,
        })
    }
}
