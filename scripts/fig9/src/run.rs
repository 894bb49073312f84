// SPDX-License-Identifier: GPL-2.0

//! `fig9 run`: the sweep against the device.
//!
//! For each n, a *point* of every curve still running: a fresh instance per scheme and
//! interface, sized for n ([`config_for`], the manual clock), the n callouts set with
//! TW_IOC_BATCH; then the measures, repeated `--repeats` times and interleaved (repeat 1 of
//! every curve, then repeat 2 of every curve, …) so that a drift of the machine hits all curves
//! of the point alike:
//!
//! - **kernel**: TW_IOC_BENCH (SETCALLOUT, TIMEOUT or MOD; TIMER_LIST, TIMER_LIST_MOD or
//!   HRTIMER with `n` for the Linux curves), ns = elapsed_ns / iterations, and the longest hold
//!   of the instance's lock;
//! - **ioctl**: one more callout, reset from userspace (a cancel and a start ioctl, or one
//!   TW_IOC_RESET), timed with `Instant`;
//! - **pair**, at [`KEY_NS`], after each repeat: the comparisons with Linux of [`PAIRS`] in one
//!   TW_IOC_BENCH_PAIR each, which alternates the module's resets and Linux's a millisecond at a
//!   time, as many of each as the module's kernel measure of the repeat made: two benches made
//!   seconds apart compare moments of the machine as much as timers under TCG, where its speed
//!   moves by up to 2× from one second to the next;
//!
//! then, for schemes 6 and 7, TW_BENCH_TICK on the same instance (nothing due) and over a
//! whole turnover, and TW_IOC_STATS for memory; beside the module's memory at every n, Linux's
//! per timer: `sizeof(struct timer_list)` and `sizeof(struct hrtimer)` of the running kernel,
//! as TW_IOC_INFO reports them ([`linux_sizes`]).
//!
//! The key pair: the flatness of the wheels is one curve's cost at a high n over its cost at a
//! low n ([`key_pair`]: 1e6 over 1e3; 1e4 over 1e3 with `--quick`; no pair when the sweep ends
//! at 1e3), and the sweep reaches those n minutes apart, long enough for the host to change
//! speed in between (by more than the flatness measures). So the key curves
//! ([`Curve::is_key`]: schemes 6 and 7, Linux) are not measured when the sweep passes the low
//! n: their instances for it are built when it reaches the high n, beside the high n's, and in
//! each repeat each of their measures runs at the low n and at once at the high n. Repeat i at
//! the two n are then seconds apart, and both rows name the other n (`paired_n` in fig9.csv):
//! `fig9 summary` takes the flatness over these pairs. The low n's per-tick measures follow its
//! resets there too. The other curves and the other n are measured in their points.
//!
//! The time: a point's repeats of one measure are timed over 100 ms in all (20 ms with
//! `--quick`), split among the repeats, and the key curves' kernel measure at [`KEY_NS`] over
//! [`KEY_TIME_FACTOR`] times as long, so that the emulator's short stalls weigh less in the
//! figures the README's comparison rests on.
//!
//! The budget: a point's repeats of one measure share `--budget-ms`. A measure that cannot fit
//! its minimum iterations in its share gets a row noted [`STOPPED`] and is not run at larger n;
//! so is a measure whose point overran the budget. The curves the README's comparison rests on
//! ([`Curve::is_key`]) are still measured at [`KEY_NS`], budget or not. An error ends the
//! curve's measure too (noted `error: …`), and makes the run exit non-zero after writing what it
//! has.
//!
//! Sorted-list schemes (2 and 5) walk their list from the head on every start: setting n
//! callouts in random order would cost O(n²). They get the callouts in descending deadline
//! order (each start stops at the head), after their free list has been shuffled (n throwaway
//! callouts set, then cancelled in random order): list order then differs from memory order,
//! as in a long-running kernel, and the walk of a measured reset touches memory at random.

use crate::device::again_if_interrupted;
use crate::device::Instance;
use crate::device::Opener;
use crate::measure::measure;
use crate::measure::Outcome;
use crate::measure::Plan;
use crate::measure::Sample;
use crate::method::*;
use crate::records::MemoryRow;
use crate::records::Row;
use crate::records::Spread;
use crate::records::TickRow;
use crate::records::STOPPED;
use crate::uapi_defs::*;
use std::cell::Cell;
use std::collections::BTreeMap;
use std::io;
use std::time::Duration;
use std::time::Instant;

/// What `fig9 run` is asked for.
#[derive(Clone, Debug)]
pub struct Setup {
    pub quick: bool,
    pub budget: Duration,
    pub max_n: u64,
    pub device: String,
    pub slots: u32,
    pub seed: u64,
    pub repeats: u32,
    pub curves: Vec<Curve>,
}

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

/// Where a run's rows go besides [`Results`], as soon as they are final: `fig9 run`'s partial
/// files (`output::Journal`), so that a run cut short keeps what it measured.
pub trait Sink {
    /// The device answered: the sweep begins. An error ends the run before it measures.
    fn begin(&mut self) -> Result<(), String>;
    /// The rows added to [`Results`] since the last call, final.
    fn rows(&mut self, fig9: &[Row], tick: &[TickRow], memory: &[MemoryRow]) -> io::Result<()>;
    /// An n is done: what [`Sink::rows`] took is to reach the disk.
    fn sync(&mut self) -> io::Result<()>;
}

/// No sink: the rows are in [`Results`] alone.
impl Sink for () {
    fn begin(&mut self) -> Result<(), String> {
        Ok(())
    }

    fn rows(&mut self, _: &[Row], _: &[TickRow], _: &[MemoryRow]) -> io::Result<()> {
        Ok(())
    }

    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The two measures of the figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Measure {
    Kernel,
    Ioctl,
}

impl Measure {
    pub fn name(self) -> &'static str {
        match self {
            Measure::Kernel => "kernel",
            Measure::Ioctl => "ioctl",
        }
    }

    /// The measures of `curve`: Linux's timers are timed in the kernel only.
    fn of(curve: &Curve) -> &'static [Measure] {
        match curve.target {
            Target::Facility { .. } => &[Measure::Kernel, Measure::Ioctl],
            Target::Kernel { .. } => &[Measure::Kernel],
        }
    }
}

/// Where a measure of a curve stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Live,
    /// The last point took longer than the budget: stopped at the next n.
    Overran,
    /// Past the budget: measured again only at [`KEY_NS`], and only for key curves.
    Stopped,
    /// Failed or beyond the scheme's capacity: never measured again.
    Ended,
}

/// The timing plans of a run; the measured time of each is split among the repeats.
struct Plans {
    ioctl: Plan,
    kernel: Plan,
    linux: Plan,
    tick: Plan,
    /// `kernel` and `linux` at the points the README's comparison rests on ([`is_key_point`]).
    key_kernel: Plan,
    key_linux: Plan,
}

/// How many times longer the kernel measure of a key point is timed than the others': a
/// repeat's figure over 100 ms weighs the emulator's short stalls less than one over 20 ms. The
/// machine's slower changes of speed, over seconds, it does not remove; the pairs
/// (TW_IOC_BENCH_PAIR) take those out of the comparisons with Linux. Few points are key, so the
/// run takes seconds longer, not minutes.
const KEY_TIME_FACTOR: u32 = 5;

/// Whether `curve` at `n` is one of the points the README's comparison rests on.
fn is_key_point(curve: &Curve, n: u64) -> bool {
    curve.is_key() && KEY_NS.contains(&n)
}

impl Plans {
    fn new(quick: bool, repeats: u32) -> Plans {
        let (target, min_iters) = if quick {
            (Duration::from_millis(20), 3)
        } else {
            (Duration::from_millis(100), 5)
        };
        let target = target / repeats.max(1);
        let base = Plan {
            target,
            chunk_time: target / 5,
            min_iters,
            first: 1,
            max_per_call: TW_MAX_BENCH_ITERATIONS,
            max_total: u64::MAX,
        };
        // Each call creates and frees n kernel timers: few, long calls.
        let linux = Plan {
            chunk_time: target,
            first: 8192,
            ..base
        };
        let longer = |p: Plan| Plan {
            target: p.target * KEY_TIME_FACTOR,
            chunk_time: p.chunk_time * KEY_TIME_FACTOR,
            ..p
        };
        Plans {
            ioctl: base,
            kernel: base,
            linux,
            key_kernel: longer(base),
            key_linux: longer(linux),
            // Every repeat takes its share of the ticks before the first callout falls due.
            tick: Plan {
                first: 64,
                max_total: TICK_LIMIT / u64::from(repeats.max(1)),
                ..base
            },
        }
    }
}

/// The instances of one n, one per scheme and populating interface.
type Instances = BTreeMap<(u32, Api), Box<dyn Instance>>;

struct Ctx<'a> {
    setup: &'a Setup,
    open: &'a Opener<'a>,
    plans: Plans,
    res: Results,
    state: BTreeMap<(&'static str, Measure), State>,
    /// Linux's timers in memory.csv: curve and bytes per timer.
    linux_sizes: Vec<(&'static str, u32)>,
    /// The low and high n the key curves are measured at back to back ([`key_pair`]).
    pair: Option<(u64, u64)>,
    /// Key curves that ran at the pair's low n: measured there when the sweep reaches the high n.
    deferred: Vec<Curve>,
    sink: &'a mut dyn Sink,
    /// The rows of fig9, tick and memory the sink has; `None` once it failed.
    sent: Option<[usize; 3]>,
}

/// The memory of Linux's timers as TW_IOC_INFO reports it: the curve of memory.csv (the
/// figure's curve of that timer), the C type, and its size in the running kernel.
pub fn linux_sizes(info: &tw_info) -> [(&'static str, &'static str, u32); 2] {
    [
        (
            "linux-timer_list",
            "struct timer_list",
            info.timer_list_bytes,
        ),
        ("linux-hrtimer", "struct hrtimer", info.hrtimer_bytes),
    ]
}

/// Runs the sweep on the instances `open` makes, its rows to `sink` as they come; Err only when
/// they cannot be used at all, or the sink cannot begin.
pub fn run(setup: &Setup, open: &Opener<'_>, sink: &mut dyn Sink) -> Result<Results, String> {
    let dev = open().map_err(|e| format!("{}: {e}", setup.device))?;
    let info = dev.info().map_err(|e| format!("TW_IOC_INFO: {e}"))?;
    if info.version != TW_VERSION {
        return Err(format!(
            "module speaks version {}, this tool {TW_VERSION}",
            info.version
        ));
    }
    drop(dev);
    sink.begin()?;
    let ns = sweep(setup.max_n, setup.quick);
    let mut ctx = Ctx {
        setup,
        open,
        plans: Plans::new(setup.quick, setup.repeats),
        res: Results::default(),
        state: BTreeMap::new(),
        linux_sizes: Vec::new(),
        pair: key_pair(&ns),
        deferred: Vec::new(),
        sink,
        sent: Some([0; 3]),
    };
    say!(
        "fig9: n in {ns:?}, {} repeats, budget {:?} per point",
        setup.repeats,
        setup.budget
    );
    for (curve, ty, size) in linux_sizes(&info) {
        match size {
            0 => ctx.note(format!(
                "TW_IOC_INFO gives no sizeof({ty}): no {curve} memory"
            )),
            size => ctx.linux_sizes.push((curve, size)),
        }
    }
    let mut curves = Vec::new();
    for curve in &setup.curves {
        match curve.target {
            Target::Facility { scheme, .. } if info.schemes & (1 << scheme) == 0 => {
                ctx.note(format!(
                    "{}: scheme {scheme} is not available, skipped",
                    curve.name
                ));
            }
            _ => {
                for &m in Measure::of(curve) {
                    ctx.state.insert((curve.name, m), State::Live);
                }
                curves.push(*curve);
            }
        }
    }
    for n in ns {
        point(&mut ctx, &curves, n);
    }
    ctx.flush();
    Ok(ctx.res)
}

impl Ctx<'_> {
    /// The rows added since the last call, to the sink. Call only where every row is final: not
    /// between the two halves of a back-to-back repeat ([`measure_points`]).
    fn flush(&mut self) {
        let Some([f, t, m]) = self.sent else {
            return;
        };
        let r = &self.res;
        let written = self.sink.rows(&r.fig9[f..], &r.tick[t..], &r.memory[m..]);
        self.sent = Some([r.fig9.len(), r.tick.len(), r.memory.len()]);
        self.sink_result(written);
    }

    /// Everything given to the sink, to the disk.
    fn sync(&mut self) {
        self.flush();
        if self.sent.is_some() {
            let synced = self.sink.sync();
            self.sink_result(synced);
        }
    }

    /// A failed write of the sink is an error of the run; the sink gets no more rows.
    fn sink_result(&mut self, r: io::Result<()>) {
        if let Err(e) = r {
            self.sent = None;
            self.res.errors += 1;
            self.note(format!(
                "error: {e} (the final files are written from memory)"
            ));
        }
    }

    fn note(&mut self, text: String) {
        say!("fig9: {text}");
        self.res.notes.push(text);
    }

    fn state(&self, curve: &Curve, m: Measure) -> State {
        self.state
            .get(&(curve.name, m))
            .copied()
            .unwrap_or(State::Ended)
    }

    fn set_state(&mut self, curve: &Curve, m: Measure, s: State) {
        self.state.insert((curve.name, m), s);
    }

    /// Whether measure `m` of `curve` runs at `n`, and with which budget.
    fn budget(&self, curve: &Curve, m: Measure, n: u64) -> Option<Duration> {
        match self.state(curve, m) {
            // The points the comparison rests on are measured whatever they cost, every
            // repeat: a first repeat cut short would leave its partner at the other key n
            // unpaired.
            State::Live | State::Overran | State::Stopped if is_key_point(curve, n) => {
                Some(Duration::MAX)
            }
            State::Live => Some(self.setup.budget / self.setup.repeats.max(1)),
            State::Overran | State::Stopped | State::Ended => None,
        }
    }

    /// The measures of `curve` that run at `n`.
    fn runs(&self, curve: &Curve, n: u64) -> Vec<Measure> {
        Measure::of(curve)
            .iter()
            .copied()
            .filter(|&m| self.budget(curve, m, n).is_some())
            .collect()
    }

    /// A row without a number: where and why a measure of a curve ends.
    fn end_row(&mut self, curve: &Curve, m: Measure, n: u64, note: String) {
        self.res.fig9.push(Row {
            curve: curve.name.into(),
            interface: curve.interface().into(),
            measure: m.name().into(),
            n,
            note,
            ..Row::default()
        });
    }

    fn stop(&mut self, curve: &Curve, m: Measure, n: u64) {
        if !matches!(self.state(curve, m), State::Live | State::Overran) {
            return;
        }
        let ms = self.setup.budget.as_millis();
        self.note(format!(
            "{} {}: {STOPPED} at n={n} ({ms} ms per point)",
            curve.name,
            m.name()
        ));
        self.end_row(curve, m, n, STOPPED.into());
        self.set_state(curve, m, State::Stopped);
    }

    fn fail(&mut self, curve: &Curve, m: Measure, n: u64, e: &str) {
        self.res.errors += 1;
        self.note(format!("{} {}: n={n}: error: {e}", curve.name, m.name()));
        self.end_row(curve, m, n, format!("error: {e}"));
        self.set_state(curve, m, State::Ended);
    }
}

/// One n: the curves that run there, their instances, the interleaved repeats, the per-tick
/// measures, a progress line per curve. At the low n of [`Ctx::pair`] the key curves wait for
/// the high n; at the high n they are measured at both, back to back.
fn point(ctx: &mut Ctx, curves: &[Curve], n: u64) {
    let live = admit(ctx, curves, n);
    if !live.is_empty() {
        for &(curve, size) in &ctx.linux_sizes {
            let row = MemoryRow::per_timer(curve, n, u64::from(size));
            ctx.res.memory.push(row);
        }
    }
    let (now, later): (Vec<Curve>, Vec<Curve>) = match ctx.pair {
        Some((lo, _)) if n == lo => live.into_iter().partition(|c| !c.is_key()),
        _ => (live, Vec::new()),
    };
    if let (Some((_, hi)), false) = (ctx.pair, later.is_empty()) {
        say!(
            "fig9: n={n}: {} key curves wait for n={hi}, to be measured at both n back to back",
            later.len()
        );
        ctx.deferred = later;
    }
    let mut points = Vec::new();
    match ctx.pair {
        Some((lo, hi)) if n == hi && !ctx.deferred.is_empty() => {
            let deferred = std::mem::take(&mut ctx.deferred);
            say!(
                "fig9: n={hi} with n={lo} of {} key curves, back to back",
                deferred.len()
            );
            points.push(Point::new(ctx, deferred, lo));
        }
        _ => {}
    }
    if !now.is_empty() {
        points.push(Point::new(ctx, now, n));
    }
    measure_points(ctx, curves, &points);
    ctx.sync();
}

/// The curves of `curves` that run at `n`: a measure left within the budget, and room for n
/// callouts in the scheme. A measure that overran at the last n stops here; a curve past its
/// scheme's capacity ends here.
fn admit(ctx: &mut Ctx, curves: &[Curve], n: u64) -> Vec<Curve> {
    let mut live: Vec<Curve> = Vec::new();
    for curve in curves {
        for &m in Measure::of(curve) {
            if ctx.state(curve, m) == State::Overran {
                ctx.stop(curve, m, n);
            }
        }
        if ctx.runs(curve, n).is_empty() {
            continue;
        }
        if let Target::Facility { scheme, .. } = curve.target {
            let cap = capacity_for(n);
            if cap > u64::from(max_capacity(scheme)) {
                let why = format!(
                    "skipped: capacity {cap} beyond scheme {scheme}'s limit {}",
                    max_capacity(scheme)
                );
                ctx.note(format!("{}: n>={n} {why}", curve.name));
                for m in ctx.runs(curve, n) {
                    ctx.end_row(curve, m, n, why.clone());
                    ctx.set_state(curve, m, State::Ended);
                }
                continue;
            }
        }
        live.push(*curve);
    }
    live
}

/// Curves measured at one n, on instances sized for it.
struct Point {
    n: u64,
    curves: Vec<Curve>,
    instances: Instances,
}

impl Point {
    /// The instances of `curves` at n; a curve whose instance fails has its measures ended.
    fn new(ctx: &mut Ctx, curves: Vec<Curve>, n: u64) -> Point {
        let mut instances = Instances::new();
        for curve in &curves {
            if let Err(e) = instance(ctx, &mut instances, curve, n) {
                for m in ctx.runs(curve, n) {
                    ctx.fail(curve, m, n, &e.to_string());
                }
            }
        }
        Point {
            n,
            curves,
            instances,
        }
    }

    fn has(&self, curve: &Curve) -> bool {
        self.curve(curve.name).is_some()
    }

    /// The curve named `name`, if the point measures it.
    fn curve(&self, name: &str) -> Option<&Curve> {
        self.curves.iter().find(|c| c.name == name)
    }
}

/// Repeat `rep` of the pair `ours` and `linux` at the key point `p`: the module's reset and Linux's
/// in one TW_IOC_BENCH_PAIR, which alternates them a millisecond at a time, as many resets of each
/// as the module's kernel measure of this repeat made; two rows of measure [`PAIR`]. Nothing when
/// that measure has no row (its failure is reported there).
fn pair_once(ctx: &mut Ctx, p: &Point, ours: &Curve, linux: &Curve, rep: u32) {
    let (Target::Facility { scheme, api }, Target::Kernel { kind }) = (ours.target, linux.target)
    else {
        return;
    };
    let Some(dev) = p.instances.get(&(scheme, api.populate())) else {
        return;
    };
    let measured = ctx.res.fig9.iter().rev().find(|r| {
        (r.curve.as_str(), r.measure.as_str(), r.n, r.repeat) == (ours.name, "kernel", p.n, rep)
    });
    let Some(k) = measured
        .filter(|r| r.ns_per_op.is_some())
        .map(|r| r.iterations)
    else {
        return;
    };
    let seed = seed_for(ctx.setup.seed, PAIR, p.n) ^ u64::from(rep);
    let request = tw_bench_pair {
        instance: bench_request(api.bench_kind(), 0, k, seed),
        baseline: bench_request(kind, p.n, k, seed),
    };
    // Each row names the other half: a Linux curve is in pairs with several of the module's.
    let row = |curve: &Curve, other: &Curve, b: &tw_bench| Row {
        curve: curve.name.into(),
        interface: curve.interface().into(),
        measure: PAIR.into(),
        n: p.n,
        ns_per_op: Some(b.elapsed_ns as f64 / k as f64),
        iterations: k,
        note: pair_note(other.name),
        repeat: rep,
        max_hold_ns: (b.max_hold_ns > 0).then_some(b.max_hold_ns),
        ..Row::default()
    };
    match dev.bench_pair(&request) {
        Ok(r) => {
            ctx.res.fig9.push(row(ours, linux, &r.instance));
            ctx.res.fig9.push(row(linux, ours, &r.baseline));
        }
        Err(e) => {
            let e = annotate(e, "TW_IOC_BENCH_PAIR");
            ctx.res.errors += 1;
            ctx.note(format!(
                "{} with {}: n={}: error: {e}",
                ours.name, linux.name, p.n
            ));
            ctx.res.fig9.push(Row {
                note: format!("error: {e}"),
                ns_per_op: None,
                ..row(ours, linux, &request.instance)
            });
        }
    }
}

/// The repeats of `points` (one n, or the two of the pair), interleaved across the curves:
/// repeat 1 of every curve, then repeat 2, …; a curve of both points has each measure's repeat
/// at the first n and then, at once, the same repeat at the second, both rows marked with the
/// other's n. Then, point by point: the progress lines, the budget's verdict, the per-tick
/// measures (after the resets, as on every instance).
fn measure_points(ctx: &mut Ctx, curves: &[Curve], points: &[Point]) {
    let mut spent: BTreeMap<(&str, Measure, u64), Duration> = BTreeMap::new();
    for repeat in 0..ctx.setup.repeats {
        for curve in curves {
            for &m in Measure::of(curve) {
                let mut rows = Vec::new();
                for p in points.iter().filter(|p| p.has(curve)) {
                    if ctx.budget(curve, m, p.n).is_none() {
                        continue;
                    }
                    let t0 = Instant::now();
                    rows.extend(repeat_once(ctx, &p.instances, curve, m, p.n, repeat));
                    *spent.entry((curve.name, m, p.n)).or_default() += t0.elapsed();
                }
                if let [a, b] = rows[..] {
                    ctx.res.fig9[a].paired_n = Some(ctx.res.fig9[b].n);
                    ctx.res.fig9[b].paired_n = Some(ctx.res.fig9[a].n);
                }
                ctx.flush();
            }
        }
        for p in points.iter().filter(|p| KEY_NS.contains(&p.n)) {
            for (ours, linux) in PAIRS {
                if let (Some(a), Some(b)) = (p.curve(ours), p.curve(linux)) {
                    pair_once(ctx, p, a, b, repeat);
                }
            }
        }
        ctx.flush();
    }
    for p in points {
        for curve in &p.curves {
            progress(ctx, curve, p.n, &spent);
            for &m in Measure::of(curve) {
                let took = spent
                    .get(&(curve.name, m, p.n))
                    .copied()
                    .unwrap_or_default();
                if took > ctx.setup.budget && ctx.state(curve, m) == State::Live {
                    // The next n would take longer still.
                    ctx.note(format!(
                        "{} {}: n={} took {:.1} s, over the budget",
                        curve.name,
                        m.name(),
                        p.n,
                        took.as_secs_f64()
                    ));
                    ctx.set_state(curve, m, State::Overran);
                }
            }
        }
    }
    for p in points {
        for curve in &p.curves {
            if let (Some(label), Target::Facility { scheme, api }) =
                (tick_label(curve), curve.target)
            {
                if let Some(dev) = p.instances.get(&(scheme, api.populate())) {
                    tick_point(ctx, label, &**dev, p.n);
                    turnover_point(ctx, label, scheme, p.n);
                }
            }
        }
    }
}

/// The instance `curve` measures on at `n`, set up if no other curve set it up yet.
fn instance(ctx: &mut Ctx, instances: &mut Instances, curve: &Curve, n: u64) -> io::Result<()> {
    let key = match curve.target {
        Target::Facility { scheme, api } => (scheme, api.populate()),
        // The kernel's timers need an open, configured file, nothing in it: keep it small.
        Target::Kernel { .. } => (0, Api::Setcallout),
    };
    if instances.contains_key(&key) {
        return Ok(());
    }
    let dev = match key {
        (0, _) => {
            let dev = (ctx.open)()?;
            dev.configure(&config_for(TW_SCHEME_HASHED_UNSORTED, 0, 64))
                .map_err(|e| annotate(e, "TW_IOC_CONFIGURE"))?;
            dev
        }
        (scheme, api) => prepare(ctx, curve, scheme, api, n)?,
    };
    instances.insert(key, dev);
    Ok(())
}

/// A fresh instance for `scheme` holding n far-future callouts; its memory is recorded.
fn prepare(
    ctx: &mut Ctx,
    curve: &Curve,
    scheme: u32,
    api: Api,
    n: u64,
) -> io::Result<Box<dyn Instance>> {
    let dev = (ctx.open)()?;
    let mut config = config_for(scheme, n, ctx.setup.slots);
    if api != Api::Timeout {
        // Handles alone need no side table: the memory of the new interface.
        config.flags |= TW_CONFIG_HANDLES_ONLY;
    }
    dev.configure(&config)
        .map_err(|e| annotate(e, "TW_IOC_CONFIGURE"))?;
    let t0 = Instant::now();
    let seed = seed_for(ctx.setup.seed, curve.name, n);
    populate(&*dev, scheme, api, n, &mut Rng::new(seed))?;
    let stats = expect_outstanding(&*dev, n)?;
    say!(
        "fig9: scheme {scheme} ({}) n={n}: {n} callouts set in {:.2} s, {} bytes",
        curve.interface(),
        t0.elapsed().as_secs_f64(),
        stats.memory_bytes
    );
    ctx.res.memory.push(MemoryRow::new(
        curve.name,
        n,
        u64::from(config.capacity),
        stats.memory_bytes,
    ));
    Ok(dev)
}

/// One repeat of measure `m` of `curve` at `n`, recorded: the index of its row in fig9.csv if it
/// was measured.
fn repeat_once(
    ctx: &mut Ctx,
    instances: &Instances,
    curve: &Curve,
    m: Measure,
    n: u64,
    rep: u32,
) -> Option<usize> {
    let budget = ctx.budget(curve, m, n)?;
    let key = match curve.target {
        Target::Facility { scheme, api } => (scheme, api.populate()),
        Target::Kernel { .. } => (0, Api::Setcallout),
    };
    let dev = instances.get(&key)?;
    let seed = seed_for(ctx.setup.seed, curve.name, n) ^ u64::from(rep);
    let t0 = Instant::now();
    let spent = || t0.elapsed();
    let hold = Cell::new(None);
    let r = match (curve.target, m) {
        (Target::Facility { api, .. }, Measure::Kernel) => {
            let mut run = |k| bench(&**dev, api.bench_kind(), 0, k, seed, &hold);
            let plan = match is_key_point(curve, n) {
                true => &ctx.plans.key_kernel,
                false => &ctx.plans.kernel,
            };
            measure(plan, budget, &spent, &mut run)
        }
        (Target::Facility { api, .. }, Measure::Ioctl) => {
            ioctl_measure(&**dev, api, &ctx.plans.ioctl, budget, &spent, seed)
        }
        (Target::Kernel { kind }, _) => {
            let mut run = |k| bench(&**dev, kind, n, k, seed, &hold);
            let plan = match is_key_point(curve, n) {
                true => &ctx.plans.key_linux,
                false => &ctx.plans.linux,
            };
            measure(plan, budget, &spent, &mut run)
        }
    };
    match r {
        Ok(Outcome::Done(Sample {
            ns_per_op,
            iterations,
        })) => {
            ctx.res.fig9.push(Row {
                curve: curve.name.into(),
                interface: curve.interface().into(),
                measure: m.name().into(),
                n,
                ns_per_op: Some(ns_per_op),
                iterations,
                repeat: rep,
                max_hold_ns: hold.get(),
                ..Row::default()
            });
            return Some(ctx.res.fig9.len() - 1);
        }
        Ok(Outcome::OverBudget) => ctx.stop(curve, m, n),
        Err(e) => ctx.fail(curve, m, n, &e.to_string()),
    }
    None
}

fn annotate(e: io::Error, what: &str) -> io::Error {
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// TW_IOC_STATS, checked to show exactly n callouts outstanding.
fn expect_outstanding(dev: &dyn Instance, n: u64) -> io::Result<tw_stats> {
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
fn populate(dev: &dyn Instance, scheme: u32, api: Api, n: u64, rng: &mut Rng) -> io::Result<()> {
    let mut ticks: Vec<u64> = (0..n).map(|_| rng.range(FAR_LO, FAR_HI)).collect();
    if matches!(scheme, TW_SCHEME_ORDERED_LIST | TW_SCHEME_HASHED_SORTED) {
        shuffle_free_list(dev, n, rng)?;
        ticks.sort_unstable_by(|a, b| b.cmp(a));
    }
    let mut ops: Vec<tw_op> = ticks
        .iter()
        .enumerate()
        .map(|(i, &t)| filler(api, i as u64, t))
        .collect();
    run_ops(dev, &mut ops, "populate")
}

/// The batch op setting filler `i` due in `ticks`.
fn filler(api: Api, i: u64, ticks: u64) -> tw_op {
    match api {
        Api::Setcallout | Api::Mod => tw_op {
            op: TW_OP_SET,
            a: ticks,
            b: i,
            ..tw_op::default()
        },
        Api::Timeout => tw_op {
            op: TW_OP_TIMEOUT,
            a: FILLER_FUNC + (i % FILLER_FUNCS) * 0x40,
            b: i,
            c: ticks,
            ..tw_op::default()
        },
    }
}

/// Sets n throwaway callouts in descending order, then cancels them in random order.
fn shuffle_free_list(dev: &dyn Instance, n: u64, rng: &mut Rng) -> io::Result<()> {
    let mut ops: Vec<tw_op> = (0..n)
        .map(|i| tw_op {
            op: TW_OP_SET,
            a: n - i,
            ..tw_op::default()
        })
        .collect();
    run_ops(dev, &mut ops, "shuffle: set")?;
    rng.shuffle(&mut ops);
    for op in &mut ops {
        *op = tw_op {
            op: TW_OP_UNSET,
            handle: op.handle,
            ..tw_op::default()
        };
    }
    run_ops(dev, &mut ops, "shuffle: unset")
}

/// Runs `ops` in batches and checks every op's result.
pub fn run_ops(dev: &dyn Instance, ops: &mut [tw_op], what: &str) -> io::Result<()> {
    // 1 is no result the kernel writes: an op left at 1 was never run.
    for op in ops.iter_mut() {
        op.result = 1;
    }
    dev.batch(ops)
        .map_err(|e| annotate(e, &format!("{what}: TW_IOC_BATCH")))?;
    check_results(ops, what)
}

/// Ok if every op of a batch succeeded; else the first failure.
fn check_results(ops: &[tw_op], what: &str) -> io::Result<()> {
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

/// A TW_IOC_BENCH request of `k` resets of `kind` with `n` kernel timers: the reset timer's
/// deadlines in [`RESET_MIN`, `RESET_MIN` + `RESET_SPREAD`).
fn bench_request(kind: u32, n: u64, k: u64, seed: u64) -> tw_bench {
    tw_bench {
        kind,
        n,
        iterations: k,
        min_ticks: RESET_MIN,
        spread: RESET_SPREAD,
        seed,
        ..tw_bench::default()
    }
}

/// `k` iterations of TW_IOC_BENCH of `kind`: the nanoseconds they took. The longest hold of
/// the lock so far goes to `hold`.
fn bench(
    dev: &dyn Instance,
    kind: u32,
    n: u64,
    k: u64,
    seed: u64,
    hold: &Cell<Option<u64>>,
) -> io::Result<u64> {
    let b = dev
        .bench(&bench_request(kind, n, k, seed))
        .map_err(|e| annotate(e, "TW_IOC_BENCH"))?;
    if b.max_hold_ns > 0 {
        hold.set(Some(hold.get().unwrap_or(0).max(b.max_hold_ns)));
    }
    Ok(b.elapsed_ns)
}

/// The reset timer of the ioctl measure.
struct Resetter<'a> {
    dev: &'a dyn Instance,
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
            Api::Setcallout | Api::Mod => self.handle = self.dev.setcallout(t, u64::MAX)?,
            Api::Timeout => {
                self.dev.timeout(RESET_FUNC, 0, t)?;
            }
        }
        Ok(())
    }

    fn cancel(&mut self) -> io::Result<()> {
        match self.api {
            Api::Setcallout | Api::Mod => self.dev.unsetcallout(self.handle),
            Api::Timeout => self.dev.untimeout(RESET_FUNC, 0),
        }
    }

    /// `k` resets: the nanoseconds they took.
    fn resets(&mut self, k: u64) -> io::Result<u64> {
        let t0 = Instant::now();
        for _ in 0..k {
            if self.api == Api::Mod {
                let t = self.ticks();
                self.dev.reset(self.handle, t)?;
            } else {
                self.cancel()?;
                self.start()?;
            }
        }
        Ok(t0.elapsed().as_nanos() as u64)
    }
}

/// The ioctl measure: one more callout, reset from userspace; cancelled afterwards.
fn ioctl_measure(
    dev: &dyn Instance,
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

/// The name of `curve`'s line in tick.csv, if its ticks are measured: scheme6, scheme7.
fn tick_label(curve: &Curve) -> Option<&'static str> {
    TICK_CURVES
        .contains(&curve.name)
        .then(|| curve.name.split('-').next().unwrap_or(curve.name))
}

/// `--repeats` rows of tick.csv for `curve` at n, each from `measure` (ns per tick and ticks,
/// or `None` over the budget); a failed repeat ends them. A progress line with their spread.
fn tick_rows(
    ctx: &mut Ctx,
    curve: &str,
    n: u64,
    what: &str,
    mut measure: impl FnMut(&Ctx, u32) -> io::Result<Option<(f64, u64)>>,
) {
    let mut values = Vec::new();
    for repeat in 0..ctx.setup.repeats {
        let (ns_per_tick, ticks, note) = match measure(ctx, repeat) {
            Ok(Some((v, ticks))) => (Some(v), ticks, String::new()),
            Ok(None) => (None, 0, STOPPED.to_string()),
            Err(e) => {
                ctx.res.errors += 1;
                ctx.note(format!("{curve}: n={n}: error: {e}"));
                (None, 0, format!("error: {e}"))
            }
        };
        values.extend(ns_per_tick);
        ctx.res.tick.push(TickRow {
            curve: curve.into(),
            n,
            ns_per_tick,
            ticks,
            note,
            repeat,
        });
        if ns_per_tick.is_none() {
            break;
        }
    }
    if let Some(s) = Spread::of(values) {
        say!("fig9: {curve} n={n}: {} ns per tick{what}", spread_text(&s));
    }
    ctx.flush();
}

/// Per-tick bookkeeping with n callouts outstanding: TW_BENCH_TICK on the point's instance,
/// `--repeats` times, each with its share of the ticks before a callout falls due.
fn tick_point(ctx: &mut Ctx, label: &str, dev: &dyn Instance, n: u64) {
    let seed = seed_for(ctx.setup.seed, label, n);
    tick_rows(ctx, label, n, "", |ctx, _| {
        let t0 = Instant::now();
        let budget = ctx.setup.budget / ctx.setup.repeats.max(1);
        expect_outstanding(dev, n)?;
        let hold = Cell::new(None);
        let mut run = |k| bench(dev, TW_BENCH_TICK, 0, k, seed, &hold);
        Ok(
            match measure(&ctx.plans.tick, budget, &|| t0.elapsed(), &mut run)? {
                Outcome::Done(s) => Some((s.ns_per_op, s.iterations)),
                Outcome::OverBudget => None,
            },
        )
    });
}

/// The window of the turnover measure, in ticks: every callout is due within it.
const TURNOVER: u64 = 1 << 16;

/// Per-tick cost over a whole turnover: n callouts due at random in `[1, TURNOVER]`, then
/// TURNOVER ticks timed in the kernel, so that every callout is visited, migrated and fired
/// inside the measurement. This is where the paper's n·c6/M (scheme 6 scans its slot) and
/// n·c7·m/T (scheme 7 migrates each timer at most m times in its interval T) show; both also
/// pay the same n/T expiries per tick. Recorded in tick.csv as `<label>-turnover`, once per
/// repeat, each on a fresh instance.
fn turnover_point(ctx: &mut Ctx, label: &str, scheme: u32, n: u64) {
    let curve = format!("{label}-turnover");
    let what = format!(" over a turnover of {TURNOVER} ticks");
    tick_rows(ctx, &curve, n, &what, |ctx, repeat| {
        let seed = seed_for(ctx.setup.seed, &curve, n) ^ u64::from(repeat);
        // A turnover a stop ended (EINTR: its ticks stay run) is made again on a fresh instance.
        let ns = again_if_interrupted(|| turnover(ctx, scheme, n, seed))?;
        Ok(Some((ns as f64 / TURNOVER as f64, TURNOVER)))
    });
}

/// One turnover on a fresh instance: the nanoseconds of its TURNOVER ticks.
fn turnover(ctx: &Ctx, scheme: u32, n: u64, seed: u64) -> io::Result<u64> {
    let dev = (ctx.open)()?;
    let mut config = config_for(scheme, n, ctx.setup.slots);
    config.ring = 1024;
    config.budget = TW_MAX_BUDGET;
    dev.configure(&config)
        .map_err(|e| annotate(e, "TW_IOC_CONFIGURE"))?;
    let mut rng = Rng::new(seed);
    let mut ops: Vec<tw_op> = (0..n)
        .map(|i| filler(Api::Setcallout, i, rng.range(1, TURNOVER + 1)))
        .collect();
    run_ops(&*dev, &mut ops, "turnover: populate")?;
    let hold = Cell::new(None);
    let ns = bench(&*dev, TW_BENCH_TICK, 0, TURNOVER, seed, &hold)?;
    expect_outstanding(&*dev, 0)?;
    Ok(ns)
}

/// `median [min–max]`, in ns.
pub fn spread_text(s: &Spread) -> String {
    if s.count > 1 {
        format!("{:.1} [{:.1}–{:.1}]", s.median, s.min, s.max)
    } else {
        format!("{:.1}", s.median)
    }
}

/// The progress line of `curve` at `n`: each measure's median and spread, or why it has none;
/// the other n of its repeats measured back to back, if any.
fn progress(ctx: &Ctx, curve: &Curve, n: u64, spent: &BTreeMap<(&str, Measure, u64), Duration>) {
    let mut parts = Vec::new();
    let mut took = Duration::ZERO;
    let mut paired = None;
    for &m in Measure::of(curve) {
        took += spent.get(&(curve.name, m, n)).copied().unwrap_or_default();
        let rows: Vec<&Row> = ctx
            .res
            .fig9
            .iter()
            .filter(|r| r.curve == curve.name && r.n == n && r.measure == m.name())
            .collect();
        paired = paired.or(rows.iter().find_map(|r| r.paired_n));
        let values = rows.iter().filter_map(|r| r.ns_per_op);
        match Spread::of(values) {
            Some(s) => {
                let hold = rows.iter().filter_map(|r| r.max_hold_ns).max();
                let hold = hold.map_or(String::new(), |h| format!(", hold ≤ {h} ns"));
                parts.push(format!(
                    "{} {} ns ({}×{hold})",
                    m.name(),
                    spread_text(&s),
                    s.count
                ));
            }
            None => {
                if let Some(r) = rows.last() {
                    parts.push(format!("{} {}", m.name(), r.note));
                }
            }
        }
    }
    if !parts.is_empty() {
        let paired = paired.map_or(String::new(), |p| format!(", back to back with n={p}"));
        say!(
            "fig9: {} n={n}: {} [{:.2} s{paired}]",
            curve.name,
            parts.join(", "),
            took.as_secs_f64()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::World;
    use std::rc::Rc;

    #[test]
    fn fillers_of_both_interfaces() {
        let op = filler(Api::Setcallout, 7, 600_000);
        assert_eq!((op.op, op.a, op.b), (TW_OP_SET, 600_000, 7));
        assert_eq!(filler(Api::Mod, 7, 600_000), op);
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
        let ok = tw_op::default();
        assert!(check_results(&[ok, ok], "t").is_ok());
        let bad = tw_op {
            result: -28, // ENOSPC
            ..ok
        };
        let e = check_results(&[ok, bad, ok], "populate").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("populate: op 1 of 3: No space left"),
            "{e}"
        );
        let unrun = tw_op { result: 1, ..ok };
        let e = check_results(&[unrun], "t").unwrap_err();
        assert!(e.to_string().contains("not run"), "{e}");
    }

    #[test]
    fn ticks_are_measured_for_schemes_6_and_7() {
        let label = |name| tick_label(&Curve::by_name(name).unwrap());
        assert_eq!(label("scheme6-setcallout"), Some("scheme6"));
        assert_eq!(label("scheme7-setcallout"), Some("scheme7"));
        assert_eq!(label("scheme7-timeout"), None);
        assert_eq!(label("scheme7-mod"), None);
        assert_eq!(label("bsd-traditional"), None);
    }

    fn ctx<'a>(setup: &'a Setup, open: &'a Opener<'a>) -> Ctx<'a> {
        let mut c = Ctx {
            setup,
            open,
            plans: Plans::new(setup.quick, setup.repeats),
            res: Results::default(),
            state: BTreeMap::new(),
            linux_sizes: Vec::new(),
            pair: None,
            deferred: Vec::new(),
            sink: Box::leak(Box::new(())),
            sent: Some([0; 3]),
        };
        for curve in &setup.curves {
            for &m in Measure::of(curve) {
                c.state.insert((curve.name, m), State::Live);
            }
        }
        c
    }

    fn setup() -> Setup {
        Setup {
            quick: false,
            budget: Duration::from_millis(1000),
            max_n: 1_000_000,
            device: "/nonexistent".into(),
            slots: 4096,
            seed: 1,
            repeats: 5,
            curves: CURVES.to_vec(),
        }
    }

    /// A sweep of `curves` up to n = 1e6 with `repeats` repeats and time to spare: the key n
    /// and their pairs all measured.
    fn to_the_key_n(curves: &[&str], repeats: u32) -> Setup {
        Setup {
            budget: Duration::from_secs(60),
            max_n: 1_000_000,
            repeats,
            curves: curves.iter().map(|c| Curve::by_name(c).unwrap()).collect(),
            ..setup()
        }
    }

    #[test]
    fn a_stopped_key_curve_is_still_measured_at_the_key_n() {
        let s = setup();
        let open = || Err(io::Error::other("no device"));
        let mut c = ctx(&s, &open);
        let key = Curve::by_name("scheme7-setcallout").unwrap();
        let other = Curve::by_name("bsd-traditional").unwrap();
        assert_eq!(
            c.budget(&key, Measure::Kernel, 10),
            Some(Duration::from_millis(200)),
            "a live curve's repeat has its share of the budget"
        );
        assert_eq!(
            c.budget(&key, Measure::Kernel, 1_000_000),
            Some(Duration::MAX),
            "a key curve at a key n is measured whatever it costs, from its first repeat"
        );
        assert_eq!(
            c.budget(&other, Measure::Kernel, 1_000_000),
            Some(Duration::from_millis(200))
        );
        c.stop(&key, Measure::Kernel, 100);
        c.stop(&other, Measure::Kernel, 100);
        assert_eq!(c.budget(&key, Measure::Kernel, 300), None);
        assert_eq!(c.budget(&key, Measure::Kernel, 1000), Some(Duration::MAX));
        assert_eq!(
            c.budget(&key, Measure::Kernel, 1_000_000),
            Some(Duration::MAX)
        );
        assert_eq!(c.budget(&other, Measure::Kernel, 1000), None);
        assert_eq!(c.res.fig9.len(), 2, "one stop row each");
        // A forced point that stops again adds no second stop row.
        c.stop(&key, Measure::Kernel, 1000);
        assert_eq!(c.res.fig9.len(), 2);
    }

    #[test]
    fn a_point_over_the_budget_stops_its_curve_at_the_next_n() {
        let s = setup();
        let open = || Err(io::Error::other("no device"));
        let mut c = ctx(&s, &open);
        let other = Curve::by_name("bsd-traditional").unwrap();
        let key = Curve::by_name("scheme6-timeout").unwrap();
        c.set_state(&other, Measure::Ioctl, State::Overran);
        c.set_state(&key, Measure::Ioctl, State::Overran);
        assert_eq!(c.budget(&other, Measure::Ioctl, 1000), None);
        assert_eq!(c.budget(&key, Measure::Ioctl, 1000), Some(Duration::MAX));
        c.stop(&other, Measure::Ioctl, 3000);
        assert_eq!(c.state(&other, Measure::Ioctl), State::Stopped);
        let row = &c.res.fig9[0];
        assert_eq!((row.n, row.note.as_str()), (3000, STOPPED));
    }

    #[test]
    fn the_tick_plan_shares_the_ticks_among_the_repeats() {
        let p = Plans::new(false, 5);
        assert_eq!(p.tick.max_total, TICK_LIMIT / 5);
        assert_eq!(p.kernel.target, Duration::from_millis(20));
        assert_eq!(Plans::new(true, 1).tick.max_total, TICK_LIMIT);
    }

    #[test]
    fn linux_curves_have_only_the_kernel_measure() {
        let l = Curve::by_name("linux-timer_list-mod").unwrap();
        assert_eq!(Measure::of(&l), &[Measure::Kernel]);
        let s = Curve::by_name("scheme6-mod").unwrap();
        assert_eq!(Measure::of(&s), &[Measure::Kernel, Measure::Ioctl]);
    }

    /// A quick sweep of `curves`, two repeats up to n = 100,000, with time enough for all.
    fn quick_setup(curves: &[&str]) -> Setup {
        Setup {
            quick: true,
            budget: Duration::from_secs(60),
            max_n: 100_000,
            repeats: 2,
            curves: curves.iter().map(|c| Curve::by_name(c).unwrap()).collect(),
            ..setup()
        }
    }

    /// A sweep of `curves` on a fake module whose benches cost what `cost` says.
    fn fake_sweep(
        curves: &[&str],
        cost: impl Fn(u32, u32, u64) -> Result<u64, i32> + 'static,
    ) -> (Results, Rc<World>) {
        let world = World::new(cost);
        let s = quick_setup(curves);
        let res = run(&s, &world.opener(), &mut ()).unwrap();
        (res, world)
    }

    /// (n, repeat, ns) of a measured row; (n, note) of another.
    type Values = Vec<(u64, u32, f64)>;
    type Notes = Vec<(u64, String)>;

    /// The kernel measure of `curve`: its values, and the notes of its other rows.
    fn kernel_rows(res: &Results, curve: &str) -> (Values, Notes) {
        let rows = res
            .fig9
            .iter()
            .filter(|r| r.curve == curve && r.measure == "kernel");
        let values = rows
            .clone()
            .filter_map(|r| r.ns_per_op.map(|v| (r.n, r.repeat, v)))
            .collect();
        let notes = rows
            .filter(|r| r.ns_per_op.is_none())
            .map(|r| (r.n, r.note.clone()))
            .collect();
        (values, notes)
    }

    /// The fake's costs: the traditional list quadratic in n (it stops at the budget), scheme
    /// 7's reset too slow at n = 10 only, everything else flat.
    fn costs(scheme: u32, kind: u32, n: u64) -> Result<u64, i32> {
        Ok(match (scheme, kind, n) {
            (2, TW_BENCH_TIMEOUT, n) => n * n + 100,
            (7, TW_BENCH_SETCALLOUT, 10) => 1_000_000_000_000,
            (_, TW_BENCH_MOD, _) => 60,
            (_, TW_BENCH_TICK, _) => 50,
            (0, _, _) => 500,
            _ => 100,
        })
    }

    const SOME: [&str; 5] = [
        "bsd-traditional",
        "scheme7-setcallout",
        "scheme7-mod",
        "linux-timer_list",
        "scheme1-setcallout",
    ];

    #[test]
    fn a_sweep_on_a_fake_module() {
        let (res, world) = fake_sweep(&SOME, costs);
        assert_eq!(res.errors, 0, "{:?}", res.notes);
        let ns = [0, 10, 100, 1000, 10_000];
        // The O(n²) list: measured twice at every n until its cost outgrows the budget.
        let (values, notes) = kernel_rows(&res, "bsd-traditional");
        assert_eq!(values.len(), 2 * ns.len(), "{values:?}");
        assert_eq!(notes, vec![(100_000, STOPPED.to_string())]);
        // Scheme 7 stops at n = 10, but the README's n are measured all the same.
        let (values, notes) = kernel_rows(&res, "scheme7-setcallout");
        let measured: Vec<u64> = values.iter().map(|v| v.0).collect();
        assert_eq!(measured, vec![0, 0, 1000, 1000], "{values:?}");
        assert_eq!(notes, vec![(10, STOPPED.to_string())]);
        // n = 1e5 is no key n: the stopped measure has no partner there, and says none.
        let at_1000 = |m: &'static str| {
            res.fig9
                .iter()
                .filter(move |r| r.curve == "scheme7-setcallout" && r.n == 1000 && r.measure == m)
        };
        assert!(at_1000("kernel").all(|r| r.paired_n.is_none()));
        assert!(at_1000("ioctl").all(|r| r.paired_n == Some(100_000)));
        // Its ioctl measure is not the kernel's: it goes on.
        let ioctl = res
            .fig9
            .iter()
            .filter(|r| r.curve == "scheme7-setcallout" && r.measure == "ioctl")
            .filter(|r| r.ns_per_op.is_some());
        assert_eq!(ioctl.count(), 2 * 6);
        // The reset in place: TW_BENCH_MOD on scheme 7, its longest hold reported.
        let (values, _) = kernel_rows(&res, "scheme7-mod");
        assert!(values.iter().all(|v| v.2 == 60.0), "{values:?}");
        let mod_rows = res.fig9.iter().filter(|r| r.curve == "scheme7-mod");
        assert!(mod_rows
            .filter(|r| r.measure == "kernel" && r.ns_per_op.is_some())
            .all(|r| r.max_hold_ns == Some(67)));
        // Linux: the kernel measure only, with the point's n.
        let (values, _) = kernel_rows(&res, "linux-timer_list");
        assert_eq!(values.len(), 2 * 6);
        assert!(!res
            .fig9
            .iter()
            .any(|r| r.curve == "linux-timer_list" && r.measure == "ioctl"));
        let benches = world.benches.borrow();
        let linux_n: Vec<u64> = benches
            .iter()
            .filter(|b| b.1 == TW_BENCH_TIMER_LIST)
            .map(|b| b.2)
            .collect();
        assert!(linux_n.contains(&100_000) && linux_n.contains(&10));
        // Scheme 1 ends at its capacity limit, both measures.
        let skipped = res
            .fig9
            .iter()
            .filter(|r| r.curve == "scheme1-setcallout" && r.note.starts_with("skipped"));
        assert_eq!(skipped.map(|r| r.n).collect::<Vec<_>>(), [100_000, 100_000]);
        // Per-tick rows of scheme 7 at every n it ran, each repeat.
        let ticks = res.tick.iter().filter(|t| t.curve == "scheme7");
        assert_eq!(ticks.clone().count(), 2 * 6);
        assert!(ticks.clone().all(|t| t.ns_per_tick == Some(50.0)));
        assert!(ticks.map(|t| t.ticks).sum::<u64>() <= 6 * TICK_LIMIT);
        let turnover = res.tick.iter().filter(|t| t.curve == "scheme7-turnover");
        assert_eq!(turnover.count(), 2 * 6);
        // One memory row per instance and n: scheme 7's two curves share theirs.
        let memory = res.memory.iter().filter(|m| m.n == 1000);
        assert_eq!(memory.clone().count(), 3 + 2);
        // Beside them, Linux's two timers at their size in the running kernel (TW_IOC_INFO).
        let linux: Vec<(&str, f64)> = memory
            .filter(|m| m.curve.starts_with("linux-"))
            .map(|m| (m.curve.as_str(), m.bytes_per_callout))
            .collect();
        assert_eq!(linux, [("linux-timer_list", 40.0), ("linux-hrtimer", 80.0)]);
        let sizes = res.memory.iter().filter(|m| m.curve == "linux-hrtimer");
        assert_eq!(sizes.map(|m| m.n).collect::<Vec<_>>(), sweep(100_000, true));
    }

    #[test]
    fn the_repeats_are_interleaved_across_the_curves() {
        let (_, world) = fake_sweep(&["scheme7-setcallout", "scheme7-mod"], costs);
        let kinds: Vec<u32> = world
            .benches
            .borrow()
            .iter()
            .filter(|b| b.0 == 7 && b.2 == 0 && b.1 != TW_BENCH_TICK)
            .map(|b| b.1)
            .collect();
        let first_mod = kinds.iter().position(|&k| k == TW_BENCH_MOD).unwrap();
        let last_set = kinds
            .iter()
            .rposition(|&k| k == TW_BENCH_SETCALLOUT)
            .unwrap();
        assert!(
            first_mod < last_set,
            "repeat 2 of setcallout after repeat 1 of mod: {kinds:?}"
        );
    }

    /// The measures of the fake's log in order, one per curve, n and repeat (scheme, kind, n,
    /// seed), however many calls each took.
    fn measures(world: &World) -> Vec<(u32, u32, u64, u64)> {
        let mut out = Vec::new();
        for &(scheme, kind, n, _, seed) in world.benches.borrow().iter() {
            if out.last() != Some(&(scheme, kind, n, seed)) {
                out.push((scheme, kind, n, seed));
            }
        }
        out
    }

    #[test]
    fn each_key_curve_measures_the_low_key_n_just_before_the_high_one() {
        let world = World::new(|_, _, _| Ok(100));
        let s = Setup {
            quick: true,
            ..to_the_key_n(
                &["scheme7-mod", "linux-timer_list", "scheme1-setcallout"],
                3,
            )
        };
        let res = run(&s, &world.opener(), &mut ()).unwrap();
        assert_eq!(res.errors, 0, "{:?}", res.notes);
        let log = measures(&world);
        let (lo, hi) = (KEY_NS[0], KEY_NS[1]);
        let at = |curve: &str, scheme, kind, n, rep: u32| {
            let seed = seed_for(s.seed, curve, n) ^ u64::from(rep);
            let found = log.iter().position(|&m| m == (scheme, kind, n, seed));
            found.unwrap_or_else(|| panic!("{curve} n={n} repeat {rep}: not in {log:?}"))
        };
        let key = [
            ("scheme7-mod", 7, TW_BENCH_MOD),
            ("linux-timer_list", 0, TW_BENCH_TIMER_LIST),
        ];
        for (curve, scheme, kind) in key {
            for rep in 0..3 {
                assert_eq!(
                    at(curve, scheme, kind, hi, rep),
                    at(curve, scheme, kind, lo, rep) + 1,
                    "{curve} repeat {rep}: n={lo} just before n={hi}: {log:?}"
                );
            }
        }
        // Still interleaved: repeat 1 of one key curve comes after repeat 0 of the other.
        assert!(
            at("linux-timer_list", 0, TW_BENCH_TIMER_LIST, lo, 0)
                < at(key[0].0, 7, TW_BENCH_MOD, lo, 1)
        );
        // The other curve is measured at n = 1e3 in its point, before the sweep goes on.
        let first_above = log.iter().position(|m| m.2 > lo).unwrap();
        let scheme1 = (0..3).map(|rep| at("scheme1-setcallout", 1, TW_BENCH_SETCALLOUT, lo, rep));
        assert!(scheme1.clone().all(|i| i < first_above), "{log:?}");
        // fig9.csv: the key curves' rows at both n name the other, and only theirs.
        let measured = res.fig9.iter().filter(|r| r.ns_per_op.is_some());
        for r in measured.clone() {
            let want = match (r.curve.as_str(), r.n) {
                ("scheme1-setcallout", _) => None,
                (_, n) if n == lo => Some(hi),
                (_, n) if n == hi => Some(lo),
                _ => None,
            };
            assert_eq!(r.paired_n, want, "{r:?}");
        }
        let pairs = measured.filter(|r| r.paired_n.is_some());
        assert_eq!(
            pairs.count(),
            2 * 3 * (2 + 1),
            "kernel and ioctl of scheme7-mod, Linux's"
        );
        // Linux's memory at n = 1e3 is there once, in sweep order.
        let sizes = res.memory.iter().filter(|m| m.curve == "linux-hrtimer");
        assert_eq!(sizes.map(|m| m.n).collect::<Vec<_>>(), sweep(hi, true));
    }

    #[test]
    fn the_key_points_kernel_measures_are_timed_longer() {
        let p = Plans::new(false, 5);
        for (key, other) in [(&p.key_kernel, &p.kernel), (&p.key_linux, &p.linux)] {
            assert_eq!(key.target, other.target * KEY_TIME_FACTOR);
            assert_eq!(key.chunk_time, other.chunk_time * KEY_TIME_FACTOR);
            assert_eq!(key.min_iters, other.min_iters);
        }
        // On a fake module at 100 ns a reset: the rows at the key n rest on several times the
        // operations of the rows elsewhere (KEY_TIME_FACTOR, 5), the ioctl measure's and the
        // other curves' on as many as ever.
        let world = World::new(|_, _, _| Ok(100));
        let s = to_the_key_n(
            &["scheme7-mod", "linux-timer_list", "scheme1-setcallout"],
            2,
        );
        let res = run(&s, &world.opener(), &mut ()).unwrap();
        assert_eq!(res.errors, 0, "{:?}", res.notes);
        let iterations = |curve: &str, measure: &str, key: bool| {
            let rows = res.fig9.iter().filter(|r| {
                r.curve == curve
                    && r.measure == measure
                    && r.ns_per_op.is_some()
                    && KEY_NS.contains(&r.n) == key
            });
            let all: Vec<u64> = rows.map(|r| r.iterations).collect();
            assert!(!all.is_empty(), "{curve} {measure} key {key}");
            all
        };
        for (curve, measure) in [("scheme7-mod", "kernel"), ("linux-timer_list", "kernel")] {
            let (key, other) = (
                iterations(curve, measure, true),
                iterations(curve, measure, false),
            );
            let least_key = *key.iter().min().unwrap();
            let most_other = *other.iter().max().unwrap();
            assert!(
                least_key >= most_other * 4,
                "{curve}: {key:?} at the key n, {other:?} elsewhere"
            );
        }
        for (curve, measure) in [("scheme7-mod", "ioctl"), ("scheme1-setcallout", "kernel")] {
            let key = iterations(curve, measure, true);
            let most_other = *iterations(curve, measure, false).iter().max().unwrap();
            assert!(
                key.iter().all(|&k| k <= most_other),
                "{curve} {measure}: {key:?}"
            );
        }
    }

    #[test]
    fn the_pairs_are_measured_at_the_key_n_in_every_repeat() {
        let world = World::new(costs);
        let s = to_the_key_n(
            &[
                "scheme7-mod",
                "linux-timer_list-mod",
                "linux-hrtimer",
                "scheme7-setcallout",
            ],
            2,
        );
        let res = run(&s, &world.opener(), &mut ()).unwrap();
        assert_eq!(res.errors, 0, "{:?}", res.notes);
        let pairs: Vec<&Row> = res.fig9.iter().filter(|r| r.measure == PAIR).collect();
        // scheme7-setcallout's partner, linux-timer_list, is not in the run: no pair of it.
        let key: Vec<(&str, u64, u32)> = pairs
            .iter()
            .map(|r| (r.curve.as_str(), r.n, r.repeat))
            .collect();
        let mut want = Vec::new();
        for rep in 0..2 {
            for n in KEY_NS {
                want.extend([("scheme7-mod", n, rep), ("linux-timer_list-mod", n, rep)]);
                want.extend([("scheme7-mod", n, rep), ("linux-hrtimer", n, rep)]);
            }
        }
        assert_eq!(key, want, "{pairs:?}");
        for (i, r) in pairs.iter().enumerate() {
            // The fake's costs: 60 ns a reset in place, 500 for Linux's timers. The module's
            // half comes first, and each row names the other half.
            let other = pairs[i ^ 1];
            let cost = if r.curve == "scheme7-mod" {
                60.0
            } else {
                500.0
            };
            assert_eq!(r.ns_per_op, Some(cost), "{r:?}");
            assert_eq!(r.note, pair_note(&other.curve), "{r:?}");
            // As many resets as the module's kernel measure of the same repeat made.
            let kernel = res.fig9.iter().find(|k| {
                (k.curve.as_str(), k.measure.as_str(), k.n, k.repeat)
                    == ("scheme7-mod", "kernel", r.n, r.repeat)
            });
            assert_eq!(Some(r.iterations), kernel.map(|k| k.iterations), "{r:?}");
        }
        // The module's half on its instance (n = 0 there), Linux's with n timers.
        let benches = world.benches.borrow();
        let iterations = pairs[0].iterations;
        let halves = benches
            .windows(2)
            .filter(|w| w[0].1 == TW_BENCH_MOD && w[1].1 == TW_BENCH_TIMER_LIST_MOD)
            .filter(|w| w[0].3 == iterations && w[1].3 == iterations);
        assert!(halves.clone().any(|w| w[0].2 == 1000 && w[1].2 == 1000));
        let with_hrtimer = benches
            .windows(2)
            .filter(|w| w[0].1 == TW_BENCH_MOD && w[1].1 == TW_BENCH_HRTIMER);
        assert!(with_hrtimer.clone().any(|w| w[1].2 == 1_000_000));
        // The summary of the kernel measure compares them.
        let sum = crate::summary::summarize(&res.fig9, "kernel", 1000, 1_000_000);
        let labels: Vec<&str> = sum.in_pairs.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(
            labels,
            [
                "n=1000 scheme7-mod / linux-timer_list-mod",
                "n=1000 scheme7-mod / linux-hrtimer",
                "n=1000000 scheme7-mod / linux-timer_list-mod",
                "n=1000000 scheme7-mod / linux-hrtimer"
            ]
        );
        let r = sum.in_pairs[0].ratio.unwrap();
        assert!(
            (r.median - 60.0 / 500.0).abs() < 1e-9 && r.count == 2,
            "{r:?}"
        );
    }

    /// A sink that keeps what it gets, and when.
    #[derive(Default)]
    struct Kept {
        begun: bool,
        fig9: Vec<Row>,
        tick: Vec<TickRow>,
        memory: Vec<MemoryRow>,
        /// The fig9 rows it had at each call of `rows`, and at each `sync`.
        calls: Vec<usize>,
        syncs: Vec<usize>,
    }

    impl Sink for Kept {
        fn begin(&mut self) -> Result<(), String> {
            self.begun = true;
            Ok(())
        }

        fn rows(&mut self, fig9: &[Row], tick: &[TickRow], memory: &[MemoryRow]) -> io::Result<()> {
            assert!(self.begun);
            self.fig9.extend_from_slice(fig9);
            self.tick.extend_from_slice(tick);
            self.memory.extend_from_slice(memory);
            self.calls.push(self.fig9.len());
            Ok(())
        }

        fn sync(&mut self) -> io::Result<()> {
            self.syncs.push(self.fig9.len());
            Ok(())
        }
    }

    #[test]
    fn the_sink_gets_every_row_final_as_the_sweep_goes() {
        let world = World::new(costs);
        let s = Setup {
            quick: true,
            ..to_the_key_n(
                &["scheme7-mod", "linux-timer_list", "scheme1-setcallout"],
                2,
            )
        };
        let mut kept = Kept::default();
        let res = run(&s, &world.opener(), &mut kept).unwrap();
        assert_eq!(res.errors, 0, "{:?}", res.notes);
        // The same rows as the results, in the same order, the pairs' paired_n set.
        assert_eq!(kept.fig9, res.fig9);
        assert_eq!(kept.tick, res.tick);
        assert_eq!(kept.memory, res.memory);
        assert!(kept.fig9.iter().any(|r| r.paired_n.is_some()));
        // Repeat by repeat, synced at each n of the sweep.
        assert!(
            kept.calls.len() > 4 * sweep(s.max_n, s.quick).len(),
            "{:?}",
            kept.calls
        );
        assert_eq!(kept.syncs.len(), sweep(s.max_n, s.quick).len());
        assert!(kept.syncs.windows(2).all(|w| w[0] <= w[1]));
        assert!(kept.syncs[0] > 0 && kept.syncs[0] < res.fig9.len());
        // A device that cannot be opened: the sink never begins.
        let open = || Err(io::Error::other("no device"));
        let mut kept = Kept::default();
        assert!(run(&s, &open, &mut kept).is_err());
        assert!(!kept.begun);
    }

    /// A sink whose disk fills after `room` calls.
    struct Full {
        room: usize,
    }

    impl Sink for Full {
        fn begin(&mut self) -> Result<(), String> {
            Ok(())
        }

        fn rows(&mut self, _: &[Row], _: &[TickRow], _: &[MemoryRow]) -> io::Result<()> {
            self.room = self.room.checked_sub(1).expect("no rows after a failure");
            match self.room {
                0 => Err(io::Error::from_raw_os_error(28)),
                _ => Ok(()),
            }
        }

        fn sync(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_sink_that_fails_is_one_error_and_the_sweep_goes_on() {
        let curves = ["scheme7-mod", "scheme1-setcallout"];
        let (all, _) = fake_sweep(&curves, costs);
        let world = World::new(costs);
        let s = quick_setup(&curves);
        let res = run(&s, &world.opener(), &mut Full { room: 3 }).unwrap();
        assert_eq!(res.errors, 1, "{:?}", res.notes);
        assert!(res
            .notes
            .iter()
            .any(|n| n.contains("No space left on device")));
        // The same rows as without a sink (the ioctl measure's costs are the host's).
        let key = |rows: &[Row]| -> Vec<(String, String, u64, u32, String, Option<u64>)> {
            let k = |r: &Row| {
                (
                    r.curve.clone(),
                    r.measure.clone(),
                    r.n,
                    r.repeat,
                    r.note.clone(),
                    r.paired_n,
                )
            };
            rows.iter().map(k).collect()
        };
        assert_eq!(key(&res.fig9), key(&all.fig9));
    }

    #[test]
    fn a_turnover_a_stop_ended_is_made_again_on_a_fresh_instance() {
        // The first turnover's ticks end with EINTR, as a stop and a continue end them.
        let ticks = Cell::new(0);
        let world = World::new(move |s, k, n| {
            if k == TW_BENCH_TICK {
                ticks.set(ticks.get() + 1);
                if ticks.get() == 1 {
                    return Err(4);
                }
            }
            costs(s, k, n)
        });
        let s = setup();
        let open = world.opener();
        let mut c = ctx(&s, &*open);
        turnover_point(&mut c, "scheme7", 7, 1000);
        assert_eq!(c.res.errors, 0, "{:?}", c.res.notes);
        let rows: Vec<_> = c.res.tick.iter().map(|r| r.ns_per_tick).collect();
        assert_eq!(rows, vec![Some(50.0); s.repeats as usize]);
        let benches = world.benches.borrow();
        assert_eq!(benches.len(), s.repeats as usize + 1);
        assert!(benches
            .iter()
            .all(|&(_, k, n, _, _)| k == TW_BENCH_TICK && n == 1000));
    }

    #[test]
    fn a_bench_the_module_lacks_is_an_error_row() {
        let (res, _) = fake_sweep(&["scheme7-setcallout", "scheme7-mod"], |s, k, n| match k {
            TW_BENCH_MOD => Err(25), // ENOTTY
            _ => costs(s, k, n),
        });
        assert_eq!(res.errors, 1, "{:?}", res.notes);
        let (values, notes) = kernel_rows(&res, "scheme7-mod");
        assert!(values.is_empty());
        assert_eq!(notes.len(), 1);
        assert!(notes[0].1.starts_with("error: TW_IOC_BENCH"), "{notes:?}");
        let (values, _) = kernel_rows(&res, "scheme7-setcallout");
        assert!(!values.is_empty(), "the other curves go on");
    }
}
