// SPDX-License-Identifier: GPL-2.0

//! `fig9 run`: the sweep against the device.
//!
//! Per curve and n, a *point*: a fresh instance sized for n ([`method::config_for`]), the n
//! callouts set with TW_IOC_BATCH, then the measures, kernel first:
//!
//! - **kernel**: TW_IOC_BENCH (SETCALLOUT or TIMEOUT; TIMER_LIST or HRTIMER with `n` for the
//!   Linux curves), ns = elapsed_ns / iterations;
//! - **ioctl**: one more callout, reset from userspace (one cancel ioctl, one start ioctl),
//!   timed with `Instant`;
//!
//! then, for schemes 6 and 7, TW_BENCH_TICK on the same instance, and TW_IOC_STATS for memory.
//!
//! The budget: a point's measures share `--budget-ms`. A measure that cannot fit its minimum
//! iterations in what is left gets a row noted [`STOPPED`] and is not run at larger n; so does
//! every measure of a curve whose point overran the budget. An error ends the curve's measure
//! too (noted `error: …`), and makes the run exit non-zero after writing what it has.
//!
//! Sorted-list schemes (2 and 5) walk their list from the head on every start: setting n
//! callouts in random order would cost O(n²). They get the callouts in descending deadline
//! order (each start stops at the head), after their free list has been shuffled (n throwaway
//! callouts set, then cancelled in random order): list order then differs from memory order,
//! as in a long-running kernel, and the walk of a measured reset touches memory at random.

use crate::args::RunOpts;
use crate::csv::MemoryRow;
use crate::csv::Row;
use crate::csv::TickRow;
use crate::csv::STOPPED;
use crate::device::Device;
use crate::measure::measure;
use crate::measure::Outcome;
use crate::measure::Plan;
use crate::measure::Sample;
use crate::method::*;
use crate::uapi::*;
use std::io;
use std::time::Duration;
use std::time::Instant;

/// Everything a run produced.
#[derive(Default)]
pub struct Results {
    pub fig9: Vec<Row>,
    pub tick: Vec<TickRow>,
    pub memory: Vec<MemoryRow>,
    /// One line per skip, stop or error, for results.md.
    pub notes: Vec<String>,
    pub errors: usize,
}

/// The two measures of the figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Measure {
    Kernel,
    Ioctl,
}

impl Measure {
    fn name(self) -> &'static str {
        match self {
            Measure::Kernel => "kernel",
            Measure::Ioctl => "ioctl",
        }
    }
}

/// What one measure of one point came to.
enum Verdict {
    Done(Sample),
    OverBudget,
    Failed(String),
}

impl From<io::Result<Outcome>> for Verdict {
    fn from(r: io::Result<Outcome>) -> Self {
        match r {
            Ok(Outcome::Done(s)) => Verdict::Done(s),
            Ok(Outcome::OverBudget) => Verdict::OverBudget,
            Err(e) => Verdict::Failed(e.to_string()),
        }
    }
}

/// The timing plans of a run.
struct Plans {
    ioctl: Plan,
    kernel: Plan,
    linux: Plan,
    tick: Plan,
}

impl Plans {
    fn new(quick: bool) -> Plans {
        let (target, min_iters) = if quick {
            (Duration::from_millis(20), 3)
        } else {
            (Duration::from_millis(100), 5)
        };
        let base = Plan {
            target,
            chunk_time: target / 5,
            min_iters,
            first: 1,
            max_per_call: TW_MAX_BENCH_ITERATIONS,
            max_total: u64::MAX,
        };
        Plans {
            ioctl: base,
            kernel: base,
            // Each call creates and frees n kernel timers: few, long calls.
            linux: Plan {
                chunk_time: target,
                first: 8192,
                ..base
            },
            tick: Plan {
                first: 64,
                max_total: TICK_LIMIT,
                ..base
            },
        }
    }
}

struct Ctx<'a> {
    opts: &'a RunOpts,
    ns: Vec<u64>,
    plans: Plans,
    res: Results,
}

/// Runs the sweep; Err only when the device cannot be used at all.
pub fn run(opts: &RunOpts) -> Result<Results, String> {
    let dev = Device::open(&opts.device).map_err(|e| format!("{}: {e}", opts.device))?;
    let info = dev.info().map_err(|e| format!("TW_IOC_INFO: {e}"))?;
    if info.version != TW_VERSION {
        return Err(format!(
            "module speaks version {}, this tool {TW_VERSION}",
            info.version
        ));
    }
    drop(dev);
    let mut ctx = Ctx {
        opts,
        ns: sweep(opts.max_n, opts.quick),
        plans: Plans::new(opts.quick),
        res: Results::default(),
    };
    eprintln!(
        "fig9: n in {:?}, budget {:?} per point",
        ctx.ns, opts.budget
    );
    for curve in &opts.curves {
        match curve.target {
            Target::Facility { scheme, .. } if info.schemes & (1 << scheme) == 0 => {
                ctx.note(format!(
                    "{}: scheme {scheme} is not available, skipped",
                    curve.name
                ));
            }
            Target::Facility { scheme, api } => facility_curve(&mut ctx, curve, scheme, api),
            Target::Kernel { kind } => linux_curve(&mut ctx, curve, kind),
        }
    }
    Ok(ctx.res)
}

impl Ctx<'_> {
    fn note(&mut self, text: String) {
        eprintln!("fig9: {text}");
        self.res.notes.push(text);
    }

    /// A row without a number: where and why a measure of a curve ends.
    fn end_row(&mut self, curve: &Curve, m: Measure, n: u64, note: String) {
        self.res.fig9.push(Row {
            curve: curve.name.into(),
            interface: curve.interface().into(),
            measure: m.name().into(),
            n,
            ns_per_op: None,
            iterations: 0,
            note,
        });
    }

    /// Records what measure `m` of `curve` came to at `n`; false if the measure ends here.
    fn record(&mut self, curve: &Curve, m: Measure, n: u64, r: Verdict) -> bool {
        match r {
            Verdict::Done(s) => {
                self.res.fig9.push(Row {
                    curve: curve.name.into(),
                    interface: curve.interface().into(),
                    measure: m.name().into(),
                    n,
                    ns_per_op: Some(s.ns_per_op),
                    iterations: s.iterations,
                    note: String::new(),
                });
                true
            }
            Verdict::OverBudget => {
                self.stop(curve, m, n);
                false
            }
            Verdict::Failed(e) => {
                self.res.errors += 1;
                self.note(format!("{} {}: n={n}: error: {e}", curve.name, m.name()));
                self.end_row(curve, m, n, format!("error: {e}"));
                false
            }
        }
    }

    fn stop(&mut self, curve: &Curve, m: Measure, n: u64) {
        let ms = self.opts.budget.as_millis();
        self.note(format!(
            "{} {}: {STOPPED} at n={n} ({ms} ms per point)",
            curve.name,
            m.name()
        ));
        self.end_row(curve, m, n, STOPPED.into());
    }
}

/// Measures still running for a curve.
struct Live(Vec<Measure>);

impl Live {
    fn has(&self, m: Measure) -> bool {
        self.0.contains(&m)
    }

    fn end(&mut self, m: Measure) {
        self.0.retain(|x| *x != m);
    }
}

/// One curve of the module: every n, until its measures stop.
fn facility_curve(ctx: &mut Ctx, curve: &Curve, scheme: u32, api: Api) {
    let mut live = Live(vec![Measure::Kernel, Measure::Ioctl]);
    let mut overran = false;
    for n in ctx.ns.clone() {
        if live.0.is_empty() {
            break;
        }
        let cap = capacity_for(n);
        if cap > max_capacity(scheme) as u64 {
            let why = format!(
                "skipped: capacity {cap} beyond scheme {scheme}'s limit {}",
                max_capacity(scheme)
            );
            ctx.note(format!("{}: n>={n} {why}", curve.name));
            for m in live.0.clone() {
                ctx.end_row(curve, m, n, why.clone());
            }
            break;
        }
        if overran {
            for m in live.0.clone() {
                ctx.stop(curve, m, n);
            }
            break;
        }
        let measured = facility_point(ctx, curve, scheme, api, n, &mut live);
        overran = measured > ctx.opts.budget;
    }
}

/// One point of a module curve: the time its reset measures took (setting up the n callouts
/// and the tick measure do not count against the budget).
fn facility_point(
    ctx: &mut Ctx,
    curve: &Curve,
    scheme: u32,
    api: Api,
    n: u64,
    live: &mut Live,
) -> Duration {
    let seed = seed_for(ctx.opts.seed, curve.name, n);
    let dev = match prepare(ctx, curve, scheme, api, n, seed) {
        Ok(dev) => dev,
        Err(e) => {
            for m in live.0.clone() {
                ctx.record(curve, m, n, Verdict::Failed(e.to_string()));
            }
            live.0.clear();
            return Duration::ZERO;
        }
    };
    let budget = ctx.opts.budget;
    let t0 = Instant::now();
    let spent = || t0.elapsed();
    if live.has(Measure::Kernel) {
        let kind = match api {
            Api::Setcallout => TW_BENCH_SETCALLOUT,
            Api::Timeout => TW_BENCH_TIMEOUT,
        };
        let mut run = |k| bench(&dev, kind, 0, k, seed);
        let r = measure(&ctx.plans.kernel, budget, &spent, &mut run).into();
        if !ctx.record(curve, Measure::Kernel, n, r) {
            live.end(Measure::Kernel);
        }
    }
    if live.has(Measure::Ioctl) {
        let r = ioctl_measure(&dev, api, &ctx.plans.ioctl, budget, &spent, seed).into();
        if !ctx.record(curve, Measure::Ioctl, n, r) {
            live.end(Measure::Ioctl);
        }
    }
    let measured = t0.elapsed();
    progress(ctx, curve, n, t0);
    if let Some(label) = tick_label(curve) {
        tick_point(ctx, label, &dev, n, seed);
        drop(dev);
        turnover_point(ctx, label, scheme, n, seed);
    }
    measured
}

/// The name of `curve`'s line in tick.csv, if its ticks are measured: scheme6, scheme7.
fn tick_label(curve: &Curve) -> Option<&'static str> {
    TICK_CURVES
        .contains(&curve.name)
        .then(|| curve.name.split('-').next().unwrap_or(curve.name))
}

/// A fresh instance for `scheme` holding n far-future callouts; its memory is recorded.
fn prepare(
    ctx: &mut Ctx,
    curve: &Curve,
    scheme: u32,
    api: Api,
    n: u64,
    seed: u64,
) -> io::Result<Device> {
    let dev = Device::open(&ctx.opts.device)?;
    let config = config_for(scheme, n, ctx.opts.slots);
    dev.configure(&config)
        .map_err(|e| annotate(e, "TW_IOC_CONFIGURE"))?;
    let t0 = Instant::now();
    populate(&dev, scheme, api, n, &mut Rng::new(seed))?;
    let stats = expect_outstanding(&dev, n)?;
    eprintln!(
        "fig9: {} n={n}: {n} callouts set in {:.2} s, {} bytes",
        curve.name,
        t0.elapsed().as_secs_f64(),
        stats.memory_bytes
    );
    ctx.res.memory.push(MemoryRow {
        curve: curve.name.into(),
        n,
        capacity: config.capacity as u64,
        memory_bytes: stats.memory_bytes,
    });
    Ok(dev)
}

fn annotate(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// TW_IOC_STATS, checked to show exactly n callouts outstanding.
fn expect_outstanding(dev: &Device, n: u64) -> io::Result<TwStats> {
    let stats = dev.stats().map_err(|e| annotate(e, "TW_IOC_STATS"))?;
    if stats.outstanding != n {
        return Err(io::Error::other(format!(
            "{} callouts outstanding, expected {n}",
            stats.outstanding
        )));
    }
    Ok(stats)
}

/// Sets the n filler callouts, due at random in `[FAR_LO, FAR_HI)`.
fn populate(dev: &Device, scheme: u32, api: Api, n: u64, rng: &mut Rng) -> io::Result<()> {
    let mut ticks: Vec<u64> = (0..n).map(|_| rng.range(FAR_LO, FAR_HI)).collect();
    if matches!(scheme, TW_SCHEME_ORDERED_LIST | TW_SCHEME_HASHED_SORTED) {
        shuffle_free_list(dev, n, rng)?;
        ticks.sort_unstable_by(|a, b| b.cmp(a));
    }
    let mut ops: Vec<TwOp> = ticks
        .iter()
        .enumerate()
        .map(|(i, &t)| filler(api, i as u64, t))
        .collect();
    run_ops(dev, &mut ops, "populate")
}

/// The batch op setting filler `i` due in `ticks`.
fn filler(api: Api, i: u64, ticks: u64) -> TwOp {
    match api {
        Api::Setcallout => TwOp {
            op: TW_OP_SET,
            a: ticks,
            b: i,
            ..TwOp::default()
        },
        Api::Timeout => TwOp {
            op: TW_OP_TIMEOUT,
            a: FILLER_FUNC + (i % FILLER_FUNCS) * 0x40,
            b: i,
            c: ticks,
            ..TwOp::default()
        },
    }
}

/// Sets n throwaway callouts in descending order, then cancels them in random order.
fn shuffle_free_list(dev: &Device, n: u64, rng: &mut Rng) -> io::Result<()> {
    let mut ops: Vec<TwOp> = (0..n)
        .map(|i| TwOp {
            op: TW_OP_SET,
            a: n - i,
            ..TwOp::default()
        })
        .collect();
    run_ops(dev, &mut ops, "shuffle: set")?;
    rng.shuffle(&mut ops);
    for op in &mut ops {
        *op = TwOp {
            op: TW_OP_UNSET,
            handle: op.handle,
            ..TwOp::default()
        };
    }
    run_ops(dev, &mut ops, "shuffle: unset")
}

/// Runs `ops` in batches and checks every op's result.
fn run_ops(dev: &Device, ops: &mut [TwOp], what: &str) -> io::Result<()> {
    // 1 is no result the kernel writes: an op left at 1 was never run.
    for op in ops.iter_mut() {
        op.result = 1;
    }
    dev.batch(ops)
        .map_err(|e| annotate(e, &format!("{what}: TW_IOC_BATCH")))?;
    check_results(ops, what)
}

/// Ok if every op of a batch succeeded; else the first failure.
fn check_results(ops: &[TwOp], what: &str) -> io::Result<()> {
    let Some(i) = ops.iter().position(|op| op.result != 0) else {
        return Ok(());
    };
    let r = ops[i].result;
    let why = if r < 0 {
        io::Error::from_raw_os_error(-r).to_string()
    } else {
        format!("result {r}: not run")
    };
    Err(io::Error::other(format!(
        "{what}: op {i} of {}: {why}",
        ops.len()
    )))
}

/// `k` iterations of TW_IOC_BENCH of `kind`: the nanoseconds they took.
fn bench(dev: &Device, kind: u32, n: u64, k: u64, seed: u64) -> io::Result<u64> {
    let b = dev
        .bench(&TwBench {
            kind,
            n,
            iterations: k,
            min_ticks: RESET_MIN,
            spread: RESET_SPREAD,
            seed,
            ..TwBench::default()
        })
        .map_err(|e| annotate(e, "TW_IOC_BENCH"))?;
    Ok(b.elapsed_ns)
}

/// The reset timer of the ioctl measure.
struct Resetter<'a> {
    dev: &'a Device,
    api: Api,
    handle: u64,
    rng: Rng,
}

impl Resetter<'_> {
    fn ticks(&mut self) -> u64 {
        self.rng.range(RESET_MIN, RESET_MIN + RESET_SPREAD)
    }

    fn start(&mut self) -> io::Result<()> {
        let t = self.ticks();
        match self.api {
            Api::Setcallout => self.handle = self.dev.setcallout(t, u64::MAX)?,
            Api::Timeout => {
                self.dev.timeout(RESET_FUNC, 0, t)?;
            }
        }
        Ok(())
    }

    fn cancel(&mut self) -> io::Result<()> {
        match self.api {
            Api::Setcallout => self.dev.unsetcallout(self.handle),
            Api::Timeout => self.dev.untimeout(RESET_FUNC, 0),
        }
    }

    /// `k` resets: the nanoseconds they took.
    fn resets(&mut self, k: u64) -> io::Result<u64> {
        let t0 = Instant::now();
        for _ in 0..k {
            self.cancel()?;
            self.start()?;
        }
        Ok(t0.elapsed().as_nanos() as u64)
    }
}

/// The ioctl measure: one more callout, reset from userspace; cancelled afterwards.
fn ioctl_measure(
    dev: &Device,
    api: Api,
    plan: &Plan,
    budget: Duration,
    spent: &dyn Fn() -> Duration,
    seed: u64,
) -> io::Result<Outcome> {
    let mut r = Resetter {
        dev,
        api,
        handle: 0,
        rng: Rng::new(seed ^ 0x5eed),
    };
    r.start()
        .map_err(|e| annotate(e, "start the reset timer"))?;
    let out = measure(plan, budget, spent, &mut |k| r.resets(k));
    r.cancel()
        .map_err(|e| annotate(e, "cancel the reset timer"))?;
    out
}

/// Per-tick bookkeeping with n callouts outstanding: TW_BENCH_TICK on the point's instance.
fn tick_point(ctx: &mut Ctx, label: &str, dev: &Device, n: u64, seed: u64) {
    let t0 = Instant::now();
    let r = expect_outstanding(dev, n).and_then(|_| {
        let mut run = |k| bench(dev, TW_BENCH_TICK, 0, k, seed);
        measure(&ctx.plans.tick, ctx.opts.budget, &|| t0.elapsed(), &mut run)
    });
    let (ns_per_tick, ticks, note) = match r {
        Ok(Outcome::Done(s)) => (Some(s.ns_per_op), s.iterations, String::new()),
        Ok(Outcome::OverBudget) => (None, 0, STOPPED.to_string()),
        Err(e) => {
            ctx.res.errors += 1;
            ctx.note(format!("{label} tick: n={n}: error: {e}"));
            (None, 0, format!("error: {e}"))
        }
    };
    if let Some(v) = ns_per_tick {
        eprintln!("fig9: {label} n={n}: {v:.1} ns per tick ({ticks} ticks)");
    }
    ctx.res.tick.push(TickRow {
        curve: label.into(),
        n,
        ns_per_tick,
        ticks,
        note,
    });
}

/// The window of the turnover measure, in ticks: every callout is due within it.
const TURNOVER: u64 = 1 << 16;

/// Per-tick cost over a whole turnover: n callouts due at random in `[1, TURNOVER]`, then
/// TURNOVER ticks timed in the kernel, so that every callout is visited, migrated and fired
/// inside the measurement. This is where the paper's n·c6/M (scheme 6 scans its slot) and
/// n·c7·m/T (scheme 7 migrates each timer at most m times in its interval T) show; both also
/// pay the same n/T expiries per tick. Recorded in tick.csv as `<label>-turnover`.
fn turnover_point(ctx: &mut Ctx, label: &str, scheme: u32, n: u64, seed: u64) {
    let curve = format!("{label}-turnover");
    let r = (|| -> io::Result<u64> {
        let dev = Device::open(&ctx.opts.device)?;
        let mut config = config_for(scheme, n, ctx.opts.slots);
        config.ring = 1024;
        config.budget = u32::MAX;
        dev.configure(&config)
            .map_err(|e| annotate(e, "TW_IOC_CONFIGURE"))?;
        let mut rng = Rng::new(seed);
        let mut ops: Vec<TwOp> = (0..n)
            .map(|i| filler(Api::Setcallout, i, rng.range(1, TURNOVER + 1)))
            .collect();
        run_ops(&dev, &mut ops, "turnover: populate")?;
        let ns = bench(&dev, TW_BENCH_TICK, 0, TURNOVER, seed)?;
        expect_outstanding(&dev, 0)?;
        Ok(ns)
    })();
    let (ns_per_tick, note) = match r {
        Ok(ns) => (Some(ns as f64 / TURNOVER as f64), String::new()),
        Err(e) => {
            ctx.res.errors += 1;
            ctx.note(format!("{curve}: n={n}: error: {e}"));
            (None, format!("error: {e}"))
        }
    };
    if let Some(v) = ns_per_tick {
        eprintln!("fig9: {curve} n={n}: {v:.1} ns per tick over a turnover of {TURNOVER} ticks");
    }
    ctx.res.tick.push(TickRow {
        curve,
        n,
        ns_per_tick,
        ticks: TURNOVER,
        note,
    });
}

/// A Linux timer curve: one unused instance, TW_IOC_BENCH with n for every n.
fn linux_curve(ctx: &mut Ctx, curve: &Curve, kind: u32) {
    let dev = Device::open(&ctx.opts.device).and_then(|d| {
        // The instance itself is not used: keep it small.
        d.configure(&config_for(TW_SCHEME_HASHED_UNSORTED, 0, 64))?;
        Ok(d)
    });
    let dev = match dev {
        Ok(d) => d,
        Err(e) => {
            ctx.record(curve, Measure::Kernel, 0, Verdict::Failed(e.to_string()));
            return;
        }
    };
    let mut overran = false;
    for n in ctx.ns.clone() {
        if overran {
            ctx.stop(curve, Measure::Kernel, n);
            return;
        }
        let t0 = Instant::now();
        let seed = seed_for(ctx.opts.seed, curve.name, n);
        let mut run = |k| bench(&dev, kind, n, k, seed);
        let r = measure(
            &ctx.plans.linux,
            ctx.opts.budget,
            &|| t0.elapsed(),
            &mut run,
        )
        .into();
        if !ctx.record(curve, Measure::Kernel, n, r) {
            return;
        }
        progress(ctx, curve, n, t0);
        overran = t0.elapsed() > ctx.opts.budget;
    }
}

/// One line on stderr with the point's numbers.
fn progress(ctx: &Ctx, curve: &Curve, n: u64, t0: Instant) {
    let mine = ctx
        .res
        .fig9
        .iter()
        .filter(|r| r.curve == curve.name && r.n == n);
    let parts: Vec<String> = mine
        .map(|r| match r.ns_per_op {
            Some(v) => format!("{} {v:.1} ns ({} it)", r.measure, r.iterations),
            None => format!("{} {}", r.measure, r.note),
        })
        .collect();
    eprintln!(
        "fig9: {} n={n}: {} [{:.2} s]",
        curve.name,
        parts.join(", "),
        t0.elapsed().as_secs_f64()
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fillers_of_both_interfaces() {
        let op = filler(Api::Setcallout, 7, 600_000);
        assert_eq!((op.op, op.a, op.b), (TW_OP_SET, 600_000, 7));
        let op = filler(Api::Timeout, 9, 600_000);
        assert_eq!(op.op, TW_OP_TIMEOUT);
        assert_eq!((op.a, op.b, op.c), (FILLER_FUNC + 0x40, 9, 600_000));
        assert_ne!(
            op.a, RESET_FUNC,
            "no filler shares the reset timer's (func, arg)"
        );
    }

    #[test]
    fn every_batch_result_is_checked() {
        let ok = TwOp::default();
        assert!(check_results(&[ok, ok], "t").is_ok());
        let bad = TwOp {
            result: -28, // ENOSPC
            ..ok
        };
        let e = check_results(&[ok, bad, ok], "populate").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("populate: op 1 of 3: No space left"),
            "{e}"
        );
        let unrun = TwOp { result: 1, ..ok };
        let e = check_results(&[unrun], "t").unwrap_err();
        assert!(e.to_string().contains("not run"), "{e}");
    }

    #[test]
    fn ticks_are_measured_for_schemes_6_and_7() {
        let label = |name| tick_label(&Curve::by_name(name).unwrap());
        assert_eq!(label("scheme6-setcallout"), Some("scheme6"));
        assert_eq!(label("scheme7-setcallout"), Some("scheme7"));
        assert_eq!(label("scheme7-timeout"), None);
        assert_eq!(label("bsd-traditional"), None);
    }
}
