// SPDX-License-Identifier: GPL-2.0

//! `wheel-bench`: host benchmark of the seven schemes and the callout facility.
//!
//! Four measurements per scheme, each over `n` outstanding timers (log-spaced):
//!
//! - **reset** — Figure 9's method (section VII): `n` timers at random times far in the
//!   future, then one more timer repeatedly reset to a random time farther than all others.
//!   Reported as ns per stop + start pair on the bare scheme, and through the callout layer
//!   both ways the paper compares: `unsetcallout`/`setcallout` (handles) and
//!   `untimeout`/`timeout` (the `(func, arg)` hash).
//! - **tick** — ns per `tick` with `n` timers pending and none due: `PER_TICK_BOOKKEEPING`.
//! - **memory** — bytes allocated per outstanding timer, scheme alone and with the callout
//!   tables.
//! - **ratas** — Ratas' own benchmark (`ratas.rs`), schemes 6 and 7 only: work units in
//!   pairs exchanging requests and paced responses for 300 simulated seconds, their idle
//!   timers pushed back on every message, Ratas' `schedule` on a pending timer made by stop +
//!   start, by reschedule in place, and in place with ranges, the last also with the scheme
//!   chosen at run time ([`AnyScheme`], as the module holds it) and through the callout layer
//!   over it ([`Callouts`]: `setcallout`, `reschedule`, `unsetcallout`, as the module runs it).
//!   Reported as timer operations (schedules, executions, cancels) per second and seconds per
//!   run, with Ratas' checksum, and for the last two their time over the scheme named at
//!   compile time's, taken round by round.
//! - **messages** — units exchanging messages, each with a short, a medium and an idle timer:
//!   a unit's short timer sends a message to another unit and re-arms; every message received
//!   pushes the receiver's idle timer back (it never fires while traffic flows) and arms its
//!   medium timer (a delayed reply) if it is not pending. The push-back, the operation that
//!   dominates, is made three ways: (a) stop + start on the bare scheme, (b) in place with
//!   [`Scheme::reschedule`], (c) through the callout layer, `unsetcallout` + `setcallout`.
//!   Reported as timer operations (arm, cancel, push back, expiry: one each, however made) per
//!   second, the median of five rounds that run the three ways in turn; and the callout layer's
//!   time over the bare scheme's, (c) over (a), taken round by round, as a median and its range.
//!
//! A point that takes longer than the budget ends that sweep for that scheme (an O(n) scheme
//! does, at large `n`); the table says where. Progress goes to stderr, the tables (markdown)
//! to stdout, and every number to the CSV file given with `--csv`. A run that fails (an error of
//! the crate, or runs that must fire the same timers and did not) is noted on stderr and in the
//! CSV file; the tables and the CSV file are written all the same, and the exit status is 1.

use clap::{CommandFactory as _, Parser};
use serde::Serialize;
use std::fmt::Write as _;
use std::fs;
use std::hint::black_box;
use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};
use wheel::callout::{Callouts, Origin};
use wheel::rng::Rng;
use wheel::{scheme6, scheme7, AnyScheme, Config, Error, Handle, HostStorage, Scheme, SchemeKind};

mod ratas;

/// `eprintln!` that a closed or full stderr does not stop: the run and its tables go on. (In
/// the tests, `eprintln!` itself, which the test harness captures.)
macro_rules! say {
    ($($arg:tt)*) => {{
        #[cfg(test)]
        eprintln!($($arg)*);
        #[cfg(not(test))]
        {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), $($arg)*);
        }
    }};
}

/// Benchmarks the timer schemes of Varghese & Lauck and the BSD callout layer on the host.
///
/// Figure 9's reset against n outstanding timers, per-tick bookkeeping, memory, and two mixed
/// workloads (Ratas' own benchmark, and units exchanging messages, their idle timers pushed back by
/// stop and start, by reschedule in place, and through the callout layer). Progress goes to
/// stderr, the tables (markdown) to stdout. Exits with 1 if a run failed (noted on stderr and in
/// the CSV file), after writing what the others measured; 2 on a bad command line.
#[derive(Debug, Parser)]
#[command(name = "wheel-bench")]
struct Cli {
    /// Small sweep (n up to 1e5, short runs).
    #[arg(long)]
    quick: bool,
    /// Also write every measurement as CSV to FILE.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Time budget per point, 1 or more; a scheme stops its sweep past it [default: 2000, 300
    /// with --quick].
    #[arg(long, value_name = "MS", value_parser = parse_budget)]
    budget_ms: Option<u64>,
    /// Comma-separated scheme numbers, e.g. 2,6,7 [default: all].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_scheme)]
    schemes: Vec<SchemeKind>,
    /// Wheel slots of schemes 5 and 6, a power of two up to 16777216 (2^24).
    #[arg(long, value_name = "M", default_value_t = 4096, value_parser = parse_slots)]
    slots: u32,
    /// Seed of the random times.
    #[arg(long, value_name = "N", default_value_t = 1)]
    seed: u64,
    /// Pairs of work units of Ratas' benchmark, comma-separated, each 2 (fewer make none) to
    /// 209683 (the crate's capacity) [default: 1000, 100 with --quick]; Ratas' own runs use 1000
    /// and 8000.
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_pairs,
          conflicts_with = "messages_only")]
    ratas_pairs: Option<Vec<u32>>,
    /// Run Ratas' benchmark alone (to profile it, say).
    #[arg(long)]
    ratas_only: bool,
    /// The runs of Ratas' benchmark to make, comma-separated, by their bench names: legacy,
    /// stop-start, in-place, range, range-any, range-callouts, range-named-callouts (each also
    /// with its "ratas-" prefix), made in that order in every round [default: all].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_ratas_run,
          conflicts_with = "messages_only")]
    ratas_runs: Vec<(ratas::Way, Holder)>,
    /// Units of the messages workload, comma-separated, each 1 to 1398101 (the crate's
    /// capacity), run in increasing order [default: 100,1000,10000,100000; up to 10000 with
    /// --quick].
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_units,
          conflicts_with = "ratas_only")]
    units: Option<Vec<u64>>,
    /// Run the messages workload alone (the callout layer's cost, say).
    #[arg(long, conflicts_with = "ratas_only")]
    messages_only: bool,
}

impl Cli {
    /// What clap cannot say of the command line: Ratas' benchmark asked for needs scheme 6 or 7.
    fn check(&self) -> Result<(), clap::Error> {
        let ratas = self.ratas_only || self.ratas_pairs.is_some() || !self.ratas_runs.is_empty();
        let wheels = [SchemeKind::HashedUnsorted, SchemeKind::Hierarchical];
        if ratas && !self.schemes.is_empty() && !self.schemes.iter().any(|k| wheels.contains(k)) {
            return Err(Cli::command().error(
                clap::error::ErrorKind::ArgumentConflict,
                "Ratas' benchmark (--ratas-only, --ratas-pairs, --ratas-runs) runs on schemes 6 \
                 and 7 only: --schemes names neither",
            ));
        }
        Ok(())
    }
}

fn parse_scheme(s: &str) -> Result<SchemeKind, String> {
    s.trim()
        .parse()
        .ok()
        .and_then(SchemeKind::from_number)
        .ok_or(format!("'{s}' is not a scheme number (1 to 7)"))
}

/// Every run of Ratas' benchmark: each way on the scheme named at compile time, and the last
/// one again through `AnyScheme`, as the module holds it, through the callout layer over it,
/// as the module runs it, and through the callout layer over the scheme named.
const RATAS_RUNS: [(ratas::Way, Holder); 7] = [
    (ratas::Way::Legacy, Holder::Named),
    (ratas::Way::StopStart, Holder::Named),
    (ratas::Way::InPlace, Holder::Named),
    (ratas::Way::Range, Holder::Named),
    (ratas::Way::Range, Holder::Any),
    (ratas::Way::Range, Holder::Callouts),
    (ratas::Way::Range, Holder::NamedCallouts),
];

fn parse_ratas_run(s: &str) -> Result<(ratas::Way, Holder), String> {
    let name = s.trim();
    let name = name.strip_prefix("ratas-").unwrap_or(name);
    RATAS_RUNS
        .into_iter()
        .find(|&(way, holder)| ratas_bench(way, holder).strip_prefix("ratas-") == Some(name))
        .ok_or(format!(
            "'{s}' is not a run of Ratas' benchmark (legacy, stop-start, in-place, range, \
             range-any, range-callouts, range-named-callouts)"
        ))
}

fn parse_units(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        // Ids are `unit * 3 + role` and the capacity `3 * units`, a `u32`.
        Ok(u) if (1..=MAX_UNITS).contains(&u) => Ok(u),
        _ => Err(format!("'{s}' is not a number of units (1 to {MAX_UNITS})")),
    }
}

/// The most units of the messages workload: three timers each fill an arena at most.
const MAX_UNITS: u64 = wheel::MAX_CAPACITY as u64 / 3;

/// The most wheel slots: scheme 4's, as the module's `TW_MAX_SLOTS`.
const MAX_SLOTS: u32 = wheel::scheme4::MAX_SLOTS;

fn parse_slots(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(m) if m.is_power_of_two() && m <= MAX_SLOTS => Ok(m),
        Ok(m) if m.is_power_of_two() => Err(format!("'{s}' is more than {MAX_SLOTS} slots")),
        _ => Err(format!("'{s}' is not a power of two")),
    }
}

fn parse_pairs(s: &str) -> Result<u32, String> {
    match s.trim().parse::<u32>() {
        Ok(p) if (ratas::MIN_PAIRS..=ratas::MAX_PAIRS).contains(&p) => Ok(p),
        _ => Err(format!(
            "'{s}' is not a number of pairs ({} to {})",
            ratas::MIN_PAIRS,
            ratas::MAX_PAIRS
        )),
    }
}

fn parse_budget(s: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(ms) if ms >= 1 => Ok(ms),
        _ => Err(format!("'{s}' is not a budget in ms (1 or more)")),
    }
}

/// Far-future intervals of the filler timers: `[FAR_LO, FAR_HI)`.
const FAR_LO: u64 = 1 << 18;
const FAR_HI: u64 = 1 << 20;
/// The reset timer goes farther than all of them: `(FAR_HI, 2 * FAR_HI]`. Scheme 4's
/// `MaxInterval` is this, so its wheel has `2 * FAR_HI` slots.
const RESET_HI: u64 = 2 * FAR_HI;

struct Opts {
    quick: bool,
    csv: Option<PathBuf>,
    budget: Duration,
    schemes: Vec<SchemeKind>,
    slots: u32,
    seed: u64,
    ratas_pairs: Option<Vec<u32>>,
    ratas_only: bool,
    ratas_runs: Vec<(ratas::Way, Holder)>,
    units: Option<Vec<u64>>,
    messages_only: bool,
}

impl Opts {
    fn new(cli: Cli) -> Self {
        let default_ms = if cli.quick { 300 } else { 2000 };
        Opts {
            quick: cli.quick,
            csv: cli.csv,
            budget: Duration::from_millis(cli.budget_ms.unwrap_or(default_ms)),
            schemes: if cli.schemes.is_empty() {
                SchemeKind::ALL.to_vec()
            } else {
                first_of_each(cli.schemes)
            },
            slots: cli.slots,
            seed: cli.seed,
            ratas_pairs: cli.ratas_pairs.map(first_of_each),
            ratas_only: cli.ratas_only,
            // Each run named once, in the order of `RATAS_RUNS`, which the rounds interleave.
            ratas_runs: RATAS_RUNS
                .into_iter()
                .filter(|r| cli.ratas_runs.is_empty() || cli.ratas_runs.contains(r))
                .collect(),
            // In increasing order: a way that overruns its budget is not run at larger numbers.
            units: cli.units.map(|mut u| {
                u.sort_unstable();
                u.dedup();
                u
            }),
            messages_only: cli.messages_only,
        }
    }
}

/// `v` without repeats, in the order each first comes: each is measured once, and a table has
/// one row or column for it.
fn first_of_each<T: PartialEq>(v: Vec<T>) -> Vec<T> {
    let mut out = Vec::with_capacity(v.len());
    for x in v {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// A row of the CSV file.
#[derive(Serialize)]
struct CsvRow<'a> {
    bench: &'a str,
    scheme: &'a str,
    n: u64,
    value: String,
    /// The range of the repeats `value` is the median of, where it is one.
    min: String,
    max: String,
    unit: &'a str,
    note: &'a str,
}

/// One number of the results.
struct Row {
    bench: &'static str,
    kind: SchemeKind,
    n: u64,
    value: f64,
    /// The least and the greatest of the repeats `value` is the median of, if it is one.
    range: Option<(f64, f64)>,
    unit: &'static str,
    note: String,
}

/// How a run of Ratas' benchmark holds the scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Holder {
    /// Named at compile time.
    Named,
    /// Chosen at run time ([`AnyScheme`]), as the callout layer and the module hold it.
    Any,
    /// The callout layer over it ([`Callouts`], with the legacy tables, as the module makes
    /// it), through its handles: `setcallout`, `reschedule` (`reset` unbounded), `unsetcallout`.
    Callouts,
    /// The callout layer, as [`Holder::Callouts`], over the scheme named at compile time
    /// ([`Callouts::over`]): what the layer itself costs.
    NamedCallouts,
}

/// The runs of one way of Ratas' benchmark.
struct RatasRow {
    kind: SchemeKind,
    way: ratas::Way,
    holder: Holder,
    pairs: u32,
    outcome: ratas::Outcome,
    /// Seconds of each run, round by round.
    rounds: Vec<f64>,
}

impl RatasRow {
    fn median(&self) -> f64 {
        median(&self.rounds)
    }
}

#[derive(Default)]
struct Results {
    rows: Vec<Row>,
    ratas: Vec<RatasRow>,
    /// The runs that failed, each as its note on stderr says.
    failed: Vec<String>,
}

impl Results {
    fn add(
        &mut self,
        bench: &'static str,
        kind: SchemeKind,
        n: u64,
        value: f64,
        unit: &'static str,
    ) {
        say!(
            "  {bench:<20} {:<24} n={n:<8} {value:>12.1} {unit}",
            kind.name()
        );
        self.rows.push(Row {
            bench,
            kind,
            n,
            value,
            range: None,
            unit,
            note: String::new(),
        });
    }

    /// Adds the median of `values` (not empty), with their range.
    fn add_spread(
        &mut self,
        bench: &'static str,
        kind: SchemeKind,
        n: u64,
        values: &[f64],
        unit: &'static str,
    ) {
        let (median, lo, hi) = spread(values);
        self.add(bench, kind, n, median, unit);
        if let Some(r) = self.rows.last_mut() {
            r.range = Some((lo, hi));
        }
        say!(
            "  {bench:<20} {:<24} n={n:<8} range {lo:.2}–{hi:.2} {unit}",
            kind.name()
        );
    }

    /// Adds a point [`measure`] made, marked as past the budget if it was; `false` then: the
    /// sweep of `bench` stops there.
    fn measured(
        &mut self,
        bench: &'static str,
        kind: SchemeKind,
        n: u64,
        (value, over): (f64, bool),
        unit: &'static str,
        budget: Duration,
    ) -> bool {
        self.add(bench, kind, n, value, unit);
        if over {
            self.over(bench, kind, budget);
        }
        !over
    }

    /// Marks the last row of `bench` for `kind` as the point past the budget.
    fn over(&mut self, bench: &'static str, kind: SchemeKind, budget: Duration) {
        let note = format!("over budget {budget:.0?}; larger n skipped");
        say!("  {bench:<20} {:<24} {note}", kind.name());
        if let Some(r) = self
            .rows
            .iter_mut()
            .rev()
            .find(|r| r.bench == bench && r.kind == kind)
        {
            r.note = note;
        }
    }

    fn get(&self, bench: &str, kind: SchemeKind, n: u64) -> Option<&Row> {
        self.rows
            .iter()
            .find(|r| r.bench == bench && r.kind == kind && r.n == n)
    }

    /// Every row as CSV to `path`, through a file beside it ([`csv_temp`]) renamed over it
    /// once whole: a failed write leaves no part of a file at `path`, and no file beside it.
    fn write_csv(&self, path: &Path) -> Result<(), String> {
        let tmp = csv_temp(path)?;
        let wrote = self
            .write_csv_to(&tmp)
            .and_then(|()| fs::rename(&tmp, path).map_err(|e| e.to_string()));
        if wrote.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        wrote
    }

    /// Every row as CSV to a new file `tmp`, on disk when it returns.
    fn write_csv_to(&self, tmp: &Path) -> Result<(), String> {
        let file = fs::File::create(tmp).map_err(|e| e.to_string())?;
        let mut w = csv::Writer::from_writer(file);
        self.csv_rows(&mut w).map_err(|e| e.to_string())?;
        w.flush().map_err(|e| e.to_string())?;
        w.get_ref().sync_all().map_err(|e| e.to_string())
    }

    fn csv_rows<W: io::Write>(&self, w: &mut csv::Writer<W>) -> Result<(), csv::Error> {
        for r in &self.rows {
            w.serialize(CsvRow {
                bench: r.bench,
                scheme: r.kind.name(),
                n: r.n,
                value: format!("{:.3}", r.value),
                min: r.range.map_or(String::new(), |(lo, _)| format!("{lo:.3}")),
                max: r.range.map_or(String::new(), |(_, hi)| format!("{hi:.3}")),
                unit: r.unit,
                note: &r.note,
            })?;
        }
        Ok(())
    }

    /// A row without a value for a run that failed: why it has none.
    fn fail(&mut self, bench: &'static str, kind: SchemeKind, n: u64, note: String) {
        self.failed
            .push(format!("{bench} on {} at n={n}: {note}", kind.name()));
        self.note(bench, kind, n, note);
    }

    /// One line on the runs that failed, if any.
    fn failures(&self) -> Option<String> {
        match self.failed.as_slice() {
            [] => None,
            [one] => Some(format!("1 run failed: {one}")),
            [first, ..] => Some(format!(
                "{} runs failed, the first: {first}",
                self.failed.len()
            )),
        }
    }

    /// A row without a value: why a measurement has none.
    fn note(&mut self, bench: &'static str, kind: SchemeKind, n: u64, note: String) {
        say!("  {bench:<20} {:<24} n={n:<8} {note}", kind.name());
        self.rows.push(Row {
            bench,
            kind,
            n,
            value: f64::NAN,
            range: None,
            unit: "",
            note,
        });
    }

    /// The run of Ratas' benchmark on `kind` with `pairs` pairs, the way `way`, the scheme held
    /// as `holder`.
    fn ratas_row(
        &self,
        kind: SchemeKind,
        pairs: u32,
        way: ratas::Way,
        holder: Holder,
    ) -> Option<&RatasRow> {
        self.ratas
            .iter()
            .find(|b| b.kind == kind && b.pairs == pairs && b.way == way && b.holder == holder)
    }

    /// The table of Ratas' benchmark: each run's time, its rate, its speed-up over the legacy
    /// way on the same scheme and pairs, and, for a scheme held otherwise than named at compile
    /// time, its time over the named scheme's the same way, taken round by round.
    fn ratas_table(&self, out: &mut String) {
        if self.ratas.is_empty() {
            return;
        }
        let _ = writeln!(
            out,
            "\n### Ratas' benchmark (its test_benchmark, 300 s of 20 µs ticks)\n\n\
             | scheme | pairs | Ratas' schedule on a pending timer | seconds, median (range) | \
             million ops/s | speed-up over the legacy way | time over the scheme named, \
             median (range) | total_rx_count |\n\
             |---|---:|---|---:|---:|---:|---:|---:|"
        );
        for r in &self.ratas {
            let base = self
                .ratas_row(r.kind, r.pairs, ratas::Way::Legacy, Holder::Named)
                .map_or("–".to_string(), |b| {
                    format!("{:.2}x", b.median() / r.median())
                });
            let over = match (
                r.holder,
                self.ratas_row(r.kind, r.pairs, r.way, Holder::Named),
            ) {
                (Holder::Any | Holder::Callouts | Holder::NamedCallouts, Some(named)) => {
                    let (m, lo, hi) = spread(&ratios(&r.rounds, &named.rounds));
                    format!("{m:.2}x ({lo:.2}–{hi:.2})")
                }
                _ => "–".to_string(),
            };
            let (_, lo, hi) = spread(&r.rounds);
            let _ = writeln!(
                out,
                "| {} | {} | {}{} | {:.3} ({:.3}–{:.3}) | {:.1} | {} | {} | {} |",
                r.kind.name(),
                r.pairs,
                r.way.text(),
                match r.holder {
                    Holder::Named => "",
                    Holder::Any => ", scheme chosen at run time",
                    Holder::Callouts => ", through the callout layer",
                    Holder::NamedCallouts => ", through the callout layer over the scheme named",
                },
                r.median(),
                lo,
                hi,
                r.outcome.operations() as f64 / r.median() / 1e6,
                base,
                over,
                r.outcome.total_rx_count
            );
        }
    }

    /// A markdown table of `bench`: one row per scheme, one column per `n`.
    fn table(&self, out: &mut String, bench: &str, title: &str, kinds: &[SchemeKind], ns: &[u64]) {
        let _ = writeln!(out, "\n### {title}\n");
        let _ = write!(out, "| scheme |");
        for n in ns {
            let _ = write!(out, " {} |", human(*n));
        }
        let _ = write!(out, "\n|---|");
        for _ in ns {
            let _ = write!(out, "---:|");
        }
        out.push('\n');
        for &k in kinds {
            let _ = write!(out, "| {} |", k.name());
            let mut stopped = false;
            for &n in ns {
                match self.get(bench, k, n) {
                    Some(r) if r.note.is_empty() => match r.range {
                        Some((lo, hi)) => {
                            let _ = write!(out, " {:.2} ({lo:.2}–{hi:.2}) |", r.value);
                        }
                        None => {
                            let _ = write!(out, " {} |", fmt_value(r.value));
                        }
                    },
                    Some(r) if r.value.is_nan() => {
                        stopped = true;
                        let _ = write!(out, " {} |", r.note);
                    }
                    Some(r) => {
                        stopped = true;
                        let _ = write!(out, " {} (over budget) |", fmt_value(r.value));
                    }
                    None if stopped => out.push_str(" — |"),
                    None => out.push_str(" n/a |"),
                }
            }
            out.push('\n');
        }
    }
}

fn fmt_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

fn human(n: u64) -> String {
    match n {
        n if n >= 1_000_000 && n % 1_000_000 == 0 => format!("{}M", n / 1_000_000),
        n if n >= 1000 => format!("{}k", n / 1000),
        n => n.to_string(),
    }
}

fn config(kind: SchemeKind, capacity: u32, opts: &Opts) -> Config {
    let slots = match kind {
        SchemeKind::BasicWheel => RESET_HI as u32,
        _ => opts.slots,
    };
    Config {
        capacity,
        slots,
        start: 0,
        ..Default::default()
    }
}

/// How long and how often a point is measured.
#[derive(Clone, Copy)]
struct Timing {
    /// The last batch must take at least this long...
    min_time: Duration,
    /// ...and the point must have run at least this many repetitions...
    min_reps: u64,
    /// ...within this budget, setup included, or the sweep stops there.
    budget: Duration,
}

impl Timing {
    fn new(opts: &Opts) -> Self {
        Timing {
            min_time: Duration::from_millis(if opts.quick { 20 } else { 200 }),
            min_reps: if opts.quick { 256 } else { 1024 },
            budget: opts.budget,
        }
    }
}

/// Batches of the final size whose median is reported: one slow batch (the machine is shared)
/// does not make a point.
const REPEATS: usize = 3;

/// The paper's reset loop, timed with [`measure`]: `reset(t)` makes one reset to interval `t`,
/// taken from `resets` (a power-of-two count) in turn.
fn time_resets(
    timing: Timing,
    fill: Duration,
    resets: &[u64],
    mut reset: impl FnMut(u64),
) -> (f64, bool) {
    assert!(resets.len().is_power_of_two());
    let mask = resets.len() - 1;
    let mut k = 0;
    measure(timing, fill, u64::MAX, |reps| {
        for _ in 0..reps {
            reset(resets[k & mask]);
            k += 1;
        }
    })
}

/// Runs `f(reps)` in growing batches until one takes `min_time` with `min_reps` run in all,
/// then [`REPEATS`] batches of that size, and reports the median ns per repetition. Stops
/// early where `max_reps` would be passed; the point is over budget if `budget` (less `setup`,
/// already spent) runs out before a batch is long enough.
fn measure(t: Timing, setup: Duration, max_reps: u64, mut f: impl FnMut(u64)) -> (f64, bool) {
    let began = Instant::now();
    let budget = t.budget.saturating_sub(setup);
    let mut reps = 4;
    let mut used = 0;
    let mut samples = Vec::new();
    loop {
        let batch = Instant::now();
        f(reps);
        let took = batch.elapsed();
        used += reps;
        let per_rep = took.as_nanos() as f64 / reps as f64;
        let spent = began.elapsed();
        if !samples.is_empty() || (took >= t.min_time && used >= t.min_reps) {
            samples.push(per_rep);
            if samples.len() == REPEATS || spent >= budget || used + reps > max_reps {
                samples.sort_by(f64::total_cmp);
                return (middle(&samples), false);
            }
            continue;
        }
        if spent >= budget {
            return (per_rep, true);
        }
        if used + reps * 4 > max_reps {
            return (per_rep, false);
        }
        // Grow, but not (much) past what is left of the budget.
        let left = (budget - spent).as_nanos() as f64 / per_rep.max(1.0);
        // Saturating: a budget of many years leaves more than u64 counts.
        reps = (reps * 4).min((left as u64).saturating_add(1)).max(1);
    }
}

/// Far-future intervals, longest first: an ordered list (scheme 2, scheme 5's slots) then
/// inserts each at its head, so filling is O(n) for every scheme and only the measured
/// operation shows each scheme's cost.
fn far_intervals(n: u64, rng: &mut Rng) -> Vec<u64> {
    let mut v: Vec<u64> = (0..n).map(|_| rng.range(FAR_LO, FAR_HI)).collect();
    v.sort_unstable_by(|a, b| b.cmp(a));
    v
}

/// What is still being swept for one scheme.
struct Sweep {
    reset: bool,
    tick: bool,
    handles: bool,
    hash: bool,
}

impl Sweep {
    fn scheme_side(&self) -> bool {
        self.reset || self.tick
    }
    fn callout_side(&self) -> bool {
        self.handles || self.hash
    }
}

fn sweep_scheme(kind: SchemeKind, ns: &[u64], opts: &Opts, res: &mut Results) {
    let timing = Timing::new(opts);
    let mut live = Sweep {
        reset: true,
        tick: true,
        handles: true,
        hash: true,
    };
    let mut rng = Rng::new(opts.seed);
    let resets: Vec<u64> = (0..4096).map(|_| rng.range(FAR_HI, RESET_HI + 1)).collect();
    for &n in ns {
        let cap = n as u32 + 1;
        if live.scheme_side() {
            let t = Instant::now();
            let mut s = AnyScheme::<HostStorage>::new(kind, &config(kind, cap, opts)).expect("new");
            for (id, i) in far_intervals(n, &mut rng).into_iter().enumerate() {
                s.start(i, id as u64).expect("fill");
            }
            let fill = t.elapsed();
            res.add(
                "memory",
                kind,
                n,
                s.memory_bytes() as f64 / n as f64,
                "bytes/timer",
            );
            if live.reset {
                let mut h = s.start(RESET_HI, u64::MAX).expect("start");
                let (ns_per, over) = time_resets(timing, fill, &resets, |t| {
                    s.stop(h).expect("stop");
                    h = black_box(s.start(t, 7).expect("start"));
                });
                live.reset = res.measured("reset", kind, n, (ns_per, over), "ns/pair", opts.budget);
                s.stop(h).expect("stop");
            }
            if live.tick {
                // Nothing is due before FAR_LO ticks: pure bookkeeping.
                let (ns_per, over) = measure(timing, fill, FAR_LO / 2, |reps| {
                    for _ in 0..reps {
                        black_box(s.tick());
                    }
                });
                assert_eq!(s.queued(), 0);
                live.tick = res.measured("tick", kind, n, (ns_per, over), "ns/tick", opts.budget);
            }
        }
        if live.callout_side() {
            sweep_callouts(kind, n, opts, &resets, &mut live, &mut rng, res);
        }
        if !live.scheme_side() && !live.callout_side() {
            break;
        }
    }
}

/// Figure 9 proper: the reset through both callout interfaces.
fn sweep_callouts(
    kind: SchemeKind,
    n: u64,
    opts: &Opts,
    resets: &[u64],
    live: &mut Sweep,
    rng: &mut Rng,
    res: &mut Results,
) {
    const FUNC: u64 = 0xffff_ffff_8100_0000;
    const ARG: u64 = 0xffff_8880_0000_0000;
    let timing = Timing::new(opts);
    let t = Instant::now();
    let cap = n as u32 + 2;
    let mut c = Callouts::<HostStorage>::new(kind, &config(kind, cap, opts)).expect("new");
    for (k, i) in far_intervals(n, rng).into_iter().enumerate() {
        c.timeout(FUNC, ARG + 64 * k as u64, i).expect("fill");
    }
    let fill = t.elapsed();
    res.add(
        "memory-callout",
        kind,
        n,
        c.memory_bytes() as f64 / n as f64,
        "bytes/timer",
    );
    if live.handles {
        let mut h: Handle = c.setcallout(RESET_HI, 1).expect("setcallout");
        let (ns_per, over) = time_resets(timing, fill, resets, |t| {
            c.unsetcallout(h).expect("unsetcallout");
            h = black_box(c.setcallout(t, 1).expect("setcallout"));
        });
        live.handles = res.measured(
            "reset-handle",
            kind,
            n,
            (ns_per, over),
            "ns/pair",
            opts.budget,
        );
    }
    if live.hash {
        let (f, a) = (FUNC + 8, ARG + 8);
        c.timeout(f, a, RESET_HI).expect("timeout");
        let (ns_per, over) = time_resets(timing, fill, resets, |t| {
            c.untimeout(f, a).expect("untimeout");
            black_box(c.timeout(f, a, t).expect("timeout"));
        });
        live.hash = res.measured(
            "reset-hash",
            kind,
            n,
            (ns_per, over),
            "ns/pair",
            opts.budget,
        );
    }
}

/// A mixed run is a whole run, not a point: its budget is twice a point's per this many
/// unit-ticks (1000 units for 1500 ticks, about 6 M operations), so that only a scheme whose
/// cost per operation grows with occupancy runs out of it...
const MIXED_UNIT_TICKS_PER_BUDGET: u64 = 1_500_000;
/// ...up to this many points' budget.
const MIXED_MAX_POINTS: u32 = 10;

/// The budget of a mixed run of `units` units for `ticks` ticks.
fn mixed_budget(units: u64, ticks: u64, opts: &Opts) -> Duration {
    let shares = (units * ticks).div_ceil(MIXED_UNIT_TICKS_PER_BUDGET).max(1) as u32;
    opts.budget * (2 * shares).min(MIXED_MAX_POINTS)
}

/// Ratas' own benchmark with each of `pairs`, every way, in [`RATAS_REPEATS`] rounds that
/// interleave the ways, so that a slow spell of a shared machine hits them alike. A whole run
/// each, not bounded by the budget: its cost per operation does not grow with occupancy on
/// schemes 6 and 7, the only ones run.
fn sweep_ratas(kind: SchemeKind, pairs: &[u32], opts: &Opts, res: &mut Results) {
    if !matches!(kind, SchemeKind::HashedUnsorted | SchemeKind::Hierarchical) {
        return;
    }
    let repeats = if opts.quick { 3 } else { RATAS_REPEATS };
    for &p in pairs {
        let config = Config {
            capacity: ratas::capacity(p),
            slots: opts.slots,
            start: 0,
            ..Default::default()
        };
        let mut rows: Vec<RatasRow> = Vec::new();
        for round in 0..repeats {
            for &(way, holder) in &opts.ratas_runs {
                let run = match (kind, holder) {
                    (_, Holder::Any) => AnyScheme::<HostStorage>::new(kind, &config)
                        .and_then(|s| ratas::run(s, way, p)),
                    (_, Holder::Callouts) => Callouts::<HostStorage>::new(kind, &config)
                        .and_then(|c| ratas::run(c, way, p)),
                    (SchemeKind::HashedUnsorted, _) => {
                        scheme6::HashedUnsorted::<HostStorage>::new(&config)
                            .and_then(|s| run_named(s, holder, way, p))
                    }
                    _ => scheme7::Hierarchical::<HostStorage>::new(&config)
                        .and_then(|s| run_named(s, holder, way, p)),
                };
                let bench = ratas_bench(way, holder);
                let (o, took) = match run {
                    Ok(r) => r,
                    Err(e) => {
                        res.fail(bench, kind, u64::from(p), format!("error: {e:?}"));
                        return;
                    }
                };
                say!(
                    "  {:<20} {:<24} pairs={p:<6} round {}/{repeats}: {:.3} s",
                    bench,
                    kind.name(),
                    round + 1,
                    took.as_secs_f64()
                );
                match rows.iter_mut().find(|r| r.way == way && r.holder == holder) {
                    Some(r) if r.outcome != o => {
                        let why = format!("error: runs differ: {:?} then {o:?}", r.outcome);
                        res.fail(bench, kind, u64::from(p), why);
                        return;
                    }
                    Some(r) => r.rounds.push(took.as_secs_f64()),
                    None => rows.push(RatasRow {
                        kind,
                        way,
                        holder,
                        pairs: p,
                        outcome: o,
                        rounds: vec![took.as_secs_f64()],
                    }),
                }
            }
        }
        for r in &rows {
            let mops = r.outcome.operations() as f64 / r.median() / 1e6;
            res.add(
                ratas_bench(r.way, r.holder),
                kind,
                u64::from(p),
                mops,
                "Mops/s",
            );
        }
        let named = rows
            .iter()
            .find(|r| r.way == ratas::Way::Range && r.holder == Holder::Named)
            .map(|r| r.rounds.clone());
        for r in rows.iter().filter(|r| r.holder != Holder::Named) {
            if let Some(named) = &named {
                let cost = ratios(&r.rounds, named);
                let bench = match r.holder {
                    Holder::Callouts => RATAS_CALLOUT_COST,
                    Holder::NamedCallouts => RATAS_NAMED_CALLOUT_COST,
                    _ => RATAS_ANY_COST,
                };
                res.add_spread(bench, kind, u64::from(p), &cost, "x");
            }
        }
        res.ratas.extend(rows);
    }
}

/// Ratas' benchmark on `s`, a scheme named at compile time, alone or under the callout layer
/// (`holder`: [`Holder::Named`] or [`Holder::NamedCallouts`]).
fn run_named<T: Scheme + ratas::Timers>(
    s: T,
    holder: Holder,
    way: ratas::Way,
    pairs: u32,
) -> Result<(ratas::Outcome, Duration), Error> {
    match holder {
        Holder::NamedCallouts => ratas::run(Callouts::<HostStorage, _>::over(s)?, way, pairs),
        _ => ratas::run(s, way, pairs),
    }
}

/// The bench names of the time of Ratas' benchmark, in place with ranges, through the callout
/// layer (over the scheme chosen at run time, and over the scheme named) and with the scheme
/// chosen at run time, over the scheme named at compile time's.
const RATAS_CALLOUT_COST: &str = "ratas-callout-cost";
const RATAS_NAMED_CALLOUT_COST: &str = "ratas-named-callout-cost";
const RATAS_ANY_COST: &str = "ratas-any-cost";

/// `a[i] / b[i]`, round by round.
fn ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(x, y)| x / y).collect()
}

/// The benchmark's name of a way of Ratas' benchmark, the scheme held as `holder` (otherwise
/// than named only ever with ranges, the way the module runs it).
fn ratas_bench(way: ratas::Way, holder: Holder) -> &'static str {
    debug_assert!(
        holder == Holder::Named || way == ratas::Way::Range,
        "{way:?} through {holder:?}"
    );
    match holder {
        Holder::Any => "ratas-range-any",
        Holder::Callouts => "ratas-range-callouts",
        Holder::NamedCallouts => "ratas-range-named-callouts",
        Holder::Named => way.bench(),
    }
}

/// Runs of each way of Ratas' benchmark, interleaved; the table shows the median and range.
const RATAS_REPEATS: usize = 5;

/// How the messages workload pushes an idle timer back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// (a) `stop` + `start` on the bare scheme: a new handle each time.
    StopStart,
    /// (b) [`Scheme::reschedule`] in place: the handle is kept.
    Reschedule,
    /// (c) The callout layer: `unsetcallout` + `setcallout`.
    Callout,
}

impl Way {
    const ALL: [Way; 3] = [Way::StopStart, Way::Reschedule, Way::Callout];

    fn bench(self) -> &'static str {
        match self {
            Way::StopStart => "messages-stop-start",
            Way::Reschedule => "messages-reschedule",
            Way::Callout => "messages-callout",
        }
    }

    fn text(self) -> &'static str {
        match self {
            Way::StopStart => "stop + start",
            Way::Reschedule => "reschedule in place",
            Way::Callout => "the callout layer (unsetcallout + setcallout)",
        }
    }
}

/// The timers of the messages workload, behind one of the three ways.
enum Timers {
    Bare {
        s: AnyScheme<HostStorage>,
        in_place: bool,
    },
    Callout(Callouts<HostStorage>),
}

impl Timers {
    fn new(kind: SchemeKind, way: Way, config: &Config) -> Result<Self, Error> {
        Ok(match way {
            Way::StopStart | Way::Reschedule => Timers::Bare {
                s: AnyScheme::new(kind, config)?,
                in_place: way == Way::Reschedule,
            },
            Way::Callout => Timers::Callout(Callouts::new(kind, config)?),
        })
    }

    fn arm(&mut self, ticks: u64, id: u64) -> Result<Handle, Error> {
        match self {
            Timers::Bare { s, .. } => s.start(ticks, id),
            Timers::Callout(c) => c.setcallout(ticks, id),
        }
    }

    /// Moves the timer `h` (named `id`) to `ticks` from now; its handle from then on.
    fn push_back(&mut self, h: Handle, ticks: u64, id: u64) -> Result<Handle, Error> {
        match self {
            Timers::Bare { s, in_place: true } => {
                s.reschedule(h, ticks, ticks)?;
                Ok(h)
            }
            Timers::Bare { s, in_place: false } => {
                s.stop(h)?;
                s.start(ticks, id)
            }
            Timers::Callout(c) => {
                c.unsetcallout(h)?;
                c.setcallout(ticks, id)
            }
        }
    }

    fn tick(&mut self) {
        match self {
            Timers::Bare { s, .. } => black_box(s.tick()),
            Timers::Callout(c) => black_box(c.tick()),
        };
    }

    /// The id of the next timer due, if any.
    fn pop(&mut self) -> Option<u64> {
        match self {
            Timers::Bare { s, .. } => s.pop_expired().map(|e| e.id),
            Timers::Callout(c) => c.pop_expired().map(|f| match f.origin {
                Origin::Callout { cookie } => cookie,
                Origin::Legacy { arg, .. } => arg,
            }),
        }
    }
}

/// The timers of a unit in the messages workload: id = unit * 3 + role.
const MSG_SHORT: u64 = 0;
const MSG_MEDIUM: u64 = 1;
const MSG_IDLE: u64 = 2;
/// Interval ranges: a unit sends every few ticks, replies after a while, and would go idle
/// only after a long silence (never, while messages flow: about one arrives every 8 ticks).
const SHORT_TICKS: (u64, u64) = (1, 16);
const MEDIUM_TICKS: (u64, u64) = (32, 128);
const IDLE_TICKS: (u64, u64) = (1024, 2048);

/// Units exchanging messages.
struct Messages {
    t: Timers,
    handles: Vec<Option<Handle>>,
    /// The unit each one last heard from: where its reply goes.
    last_from: Vec<u64>,
    units: u64,
    rng: Rng,
    ops: u64,
    /// A digest of the ids fired, in order: the same for every way of pushing back.
    digest: u64,
    /// Idle timers that fired: units that heard nothing for a long while.
    went_idle: u64,
}

impl Messages {
    /// `units` units, each with its short and idle timer armed.
    fn new(kind: SchemeKind, way: Way, units: u64, opts: &Opts) -> Result<Self, Error> {
        let cap = (units * 3) as u32;
        let mut m = Messages {
            t: Timers::new(kind, way, &config(kind, cap, opts))?,
            handles: vec![None; cap as usize],
            last_from: (0..units).collect(),
            units,
            rng: Rng::new(opts.seed ^ units),
            ops: 0,
            digest: 0,
            went_idle: 0,
        };
        for u in 0..units {
            m.arm(u * 3 + MSG_SHORT, SHORT_TICKS)?;
            m.arm(u * 3 + MSG_IDLE, IDLE_TICKS)?;
        }
        m.ops = 0;
        Ok(m)
    }

    /// One tick, and every message it brings.
    fn step(&mut self) -> Result<(), Error> {
        self.t.tick();
        while let Some(id) = self.t.pop() {
            self.digest = (self.digest ^ id).wrapping_mul(0x0100_0000_01b3);
            self.fired(id)?;
        }
        Ok(())
    }

    fn arm(&mut self, id: u64, range: (u64, u64)) -> Result<(), Error> {
        let ticks = self.rng.range(range.0, range.1 + 1);
        self.handles[id as usize] = Some(self.t.arm(ticks, id)?);
        self.ops += 1;
        Ok(())
    }

    /// `unit` receives a message from `from`: its idle timer is pushed back, its reply armed.
    fn receive(&mut self, unit: u64, from: u64) -> Result<(), Error> {
        self.last_from[unit as usize] = from;
        let idle = unit * 3 + MSG_IDLE;
        match self.handles[idle as usize] {
            Some(h) => {
                let ticks = self.rng.range(IDLE_TICKS.0, IDLE_TICKS.1 + 1);
                self.handles[idle as usize] = Some(self.t.push_back(h, ticks, idle)?);
                self.ops += 1;
            }
            None => self.arm(idle, IDLE_TICKS)?,
        }
        let medium = unit * 3 + MSG_MEDIUM;
        if self.handles[medium as usize].is_none() {
            self.arm(medium, MEDIUM_TICKS)?;
        }
        Ok(())
    }

    fn fired(&mut self, id: u64) -> Result<(), Error> {
        self.handles[id as usize] = None;
        self.ops += 1;
        let unit = id / 3;
        match id % 3 {
            MSG_SHORT => {
                let peer = (unit + 1 + self.rng.next_u64() % (self.units - 1).max(1)) % self.units;
                self.receive(peer, unit)?;
                self.arm(id, SHORT_TICKS)
            }
            MSG_MEDIUM => self.receive(self.last_from[unit as usize], unit),
            _ => {
                self.went_idle += 1;
                self.arm(id, IDLE_TICKS)
            }
        }
    }
}

/// Runs the messages workload with `units` units for `ticks` ticks, pushing back `way`.
/// Returns timer operations per second, and whether it ran out of budget.
fn messages(
    kind: SchemeKind,
    way: Way,
    units: u64,
    ticks: u64,
    opts: &Opts,
) -> Result<(f64, bool), Error> {
    let mut m = Messages::new(kind, way, units, opts)?;
    let budget = mixed_budget(units, ticks, opts);
    let began = Instant::now();
    for t in 0..ticks {
        m.step()?;
        if t.is_multiple_of(64) && began.elapsed() > budget {
            return Ok((m.ops as f64 / began.elapsed().as_secs_f64(), true));
        }
    }
    black_box(&m.handles);
    Ok((m.ops as f64 / began.elapsed().as_secs_f64(), false))
}

/// Rounds of the messages workload at each number of units; each round runs every way in
/// turn, so that a slow spell of a shared machine hits the ways alike.
const MESSAGES_REPEATS: usize = 5;

/// The messages workload every way, in [`MESSAGES_REPEATS`] interleaved rounds per number of
/// units: each way's median rate, and the callout layer's cost over the bare scheme (stop +
/// start, the same operations) taken round by round. A way whose run overran its budget, or
/// failed, is not run at larger numbers of units.
fn sweep_messages(kind: SchemeKind, units: &[u64], ticks: u64, opts: &Opts, res: &mut Results) {
    let repeats = if opts.quick { 3 } else { MESSAGES_REPEATS };
    let mut live = Way::ALL.to_vec();
    for &u in units {
        // Each live way's rates (ops/s), round by round; `None` once it failed.
        let mut rates: Vec<(Way, Option<Vec<f64>>, bool)> =
            live.iter().map(|&w| (w, Some(Vec::new()), false)).collect();
        for round in 0..repeats {
            for (way, rate, over) in rates.iter_mut() {
                let Some(r) = rate else { continue };
                match messages(kind, *way, u, ticks, opts) {
                    Ok((ops_per_s, o)) => {
                        say!(
                            "  {:<20} {:<24} n={u:<8} round {}/{repeats}: {:.1} Mops/s",
                            way.bench(),
                            kind.name(),
                            round + 1,
                            ops_per_s / 1e6
                        );
                        r.push(ops_per_s);
                        *over |= o;
                    }
                    Err(e) => {
                        res.fail(way.bench(), kind, u, format!("error: {e:?}"));
                        *rate = None;
                    }
                }
            }
        }
        for (way, rate, over) in &rates {
            match rate {
                Some(r) => {
                    res.add(way.bench(), kind, u, median(r) / 1e6, "Mops/s");
                    if *over {
                        res.over(way.bench(), kind, mixed_budget(u, ticks, opts));
                        live.retain(|w| w != way);
                    }
                }
                None => live.retain(|w| w != way),
            }
        }
        let rate_of = |way: Way| {
            rates
                .iter()
                .find(|(w, _, _)| *w == way)
                .and_then(|(_, r, _)| r.as_ref())
        };
        if let (Some(bare), Some(layer)) = (rate_of(Way::StopStart), rate_of(Way::Callout)) {
            // Both did the same operations: the ratio of rates is the ratio of times.
            res.add_spread(CALLOUT_COST, kind, u, &ratios(bare, layer), "x");
        }
    }
}

/// The bench name of the callout layer's cost over the bare scheme in the messages workload.
const CALLOUT_COST: &str = "messages-callout-cost";

/// The median of some values (the lower of the middle two of an even count).
fn median(values: &[f64]) -> f64 {
    spread(values).0
}

/// The median of some values (not empty; as [`median`]), the least and the greatest.
fn spread(values: &[f64]) -> (f64, f64, f64) {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    (middle(&v), v[0], v[v.len() - 1])
}

/// The median of `sorted` (not empty, in order): the lower of the middle two of an even count.
fn middle(sorted: &[f64]) -> f64 {
    sorted[(sorted.len() - 1) / 2]
}

/// The file `write_csv` writes before renaming it to `path`: beside it, so that the rename stays
/// on one file system.
fn csv_temp(path: &Path) -> Result<PathBuf, String> {
    let name = path.file_name().ok_or("not a file name")?;
    let mut tmp = std::ffi::OsString::from(".");
    tmp.push(name);
    tmp.push(format!(".{}.tmp", std::process::id()));
    Ok(path.with_file_name(tmp))
}

/// Whether a CSV file can be written to `path` at the end: it is not a directory, and a file
/// can be made beside it (made, and removed at once).
fn check_csv(path: &Path) -> Result<(), String> {
    if path.is_dir() {
        return Err("is a directory".into());
    }
    let tmp = csv_temp(path)?;
    fs::File::create(&tmp).map_err(|e| e.to_string())?;
    fs::remove_file(&tmp).map_err(|e| e.to_string())
}

/// Writes the tables to stdout. A closed pipe is not an error: whoever read it wanted no more.
fn print(out: &str) -> io::Result<()> {
    use std::io::Write as _;
    let mut stdout = io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        r => r,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = cli.check() {
        e.exit();
    }
    let opts = Opts::new(cli);
    if let Some(path) = &opts.csv {
        if let Err(e) = check_csv(path) {
            say!("wheel-bench: --csv {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    let ns: Vec<u64> = if opts.quick {
        vec![1_000, 10_000, 100_000]
    } else {
        vec![1_000, 3_162, 10_000, 31_623, 100_000, 316_228, 1_000_000]
    };
    let units: Vec<u64> = match (&opts.units, opts.quick) {
        (Some(u), _) => u.clone(),
        (None, true) => vec![100, 1_000, 10_000],
        (None, false) => vec![100, 1_000, 10_000, 100_000],
    };
    // Figure 9's sweeps and the per-tick and memory tables run unless one workload is asked
    // for alone.
    let sweeps = !opts.ratas_only && !opts.messages_only;
    let ticks = 1_500;
    let pairs: Vec<u32> = match (&opts.ratas_pairs, opts.quick) {
        (Some(p), _) => p.clone(),
        (None, true) => vec![100],
        (None, false) => vec![1_000],
    };
    // Every scheme takes every configuration the command line allows (`--slots` is a power of
    // two): a refusal is a bug, not a scheme to leave out of the tables.
    for &k in &opts.schemes {
        let c = config(k, 1, &opts);
        if let Err(e) = AnyScheme::<HostStorage>::new(k, &c) {
            say!("wheel-bench: {} refuses {c:?}: {e:?}", k.name());
            return ExitCode::FAILURE;
        }
    }
    let kinds = opts.schemes.clone();
    let mut res = Results::default();
    for &k in &kinds {
        say!("{}:", k.name());
        if sweeps {
            sweep_scheme(k, &ns, &opts, &mut res);
        }
        if !opts.messages_only {
            sweep_ratas(k, &pairs, &opts, &mut res);
        }
        if !opts.ratas_only {
            sweep_messages(k, &units, ticks, &opts, &mut res);
        }
    }

    let mut out = String::new();
    let _ = writeln!(
        out,
        "## wheel-bench{} — schemes 5/6 with M = {}, scheme 4 with MaxInterval = {}, budget {:?} \
         per point (messages: 2x per 1000 units x 1500 ticks, at most {MIXED_MAX_POINTS}x)",
        if opts.quick { " --quick" } else { "" },
        opts.slots,
        RESET_HI,
        opts.budget
    );
    let tables = [
        (
            "reset",
            "Reset, ns per stop + start pair (Figure 9's method) vs n outstanding",
        ),
        (
            "reset-handle",
            "Reset through unsetcallout + setcallout (handles), ns per pair",
        ),
        (
            "reset-hash",
            "Reset through untimeout + timeout (hash on func, arg), ns per pair",
        ),
        (
            "tick",
            "Per-tick bookkeeping, ns per tick with n pending, none due",
        ),
        ("memory", "Bytes per outstanding timer, scheme alone"),
        (
            "memory-callout",
            "Bytes per outstanding timer, with the callout tables",
        ),
    ];
    for (bench, title) in tables {
        if sweeps {
            res.table(&mut out, bench, title, &kinds, &ns);
        }
    }
    res.ratas_table(&mut out);
    for way in Way::ALL.into_iter().filter(|_| !opts.ratas_only) {
        let title = format!(
            "Messages, idle timer pushed back by {} ({ticks} ticks), million timer operations \
             per second vs units of 3 timers",
            way.text()
        );
        res.table(&mut out, way.bench(), &title, &kinds, &units);
    }
    if !opts.ratas_only {
        let title = "Messages: the callout layer's time over the bare scheme's (unsetcallout + \
                     setcallout against stop + start, the same operations), round by round: \
                     median (range)";
        res.table(&mut out, CALLOUT_COST, title, &kinds, &units);
    }
    let mut ok = true;
    if let Err(e) = print(&out) {
        say!("wheel-bench: writing stdout: {e}");
        ok = false;
    }
    if let Some(path) = &opts.csv {
        match res.write_csv(path) {
            Ok(()) => say!("wrote {}", path.display()),
            Err(e) => {
                say!("wheel-bench: writing {}: {e}", path.display());
                ok = false;
            }
        }
    }
    if let Some(failures) = res.failures() {
        say!("wheel-bench: {failures}");
        ok = false;
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> Opts {
        Opts {
            quick: true,
            csv: None,
            budget: Duration::from_secs(1),
            schemes: SchemeKind::ALL.to_vec(),
            slots: 256,
            seed: 7,
            ratas_pairs: None,
            ratas_only: false,
            ratas_runs: RATAS_RUNS.to_vec(),
            units: None,
            messages_only: false,
        }
    }

    /// Each run of Ratas' benchmark is named by its bench name, with or without the prefix,
    /// and nothing else is.
    #[test]
    fn ratas_runs_by_name() {
        for run in RATAS_RUNS {
            let bench = ratas_bench(run.0, run.1);
            assert_eq!(parse_ratas_run(bench), Ok(run));
            assert_eq!(parse_ratas_run(&bench["ratas-".len()..]), Ok(run));
        }
        for bad in ["", "ratas-", "any", "range-named", "ratas-ratas-range"] {
            assert!(parse_ratas_run(bad).is_err(), "{bad}");
        }
    }

    /// The messages workload for `ticks` ticks: its operations and the digest of what fired.
    fn run(kind: SchemeKind, way: Way, ticks: u64) -> Result<(u64, u64), Error> {
        let mut m = Messages::new(kind, way, 200, &opts())?;
        for _ in 0..ticks {
            m.step()?;
        }
        Ok((m.ops, m.digest))
    }

    #[test]
    fn every_way_of_pushing_back_does_the_same_work() {
        for kind in [SchemeKind::HashedUnsorted, SchemeKind::Hierarchical] {
            let base = run(kind, Way::StopStart, 3000).unwrap();
            assert!(base.0 > 3000 * 200 / 8, "{kind:?}: {base:?}: messages flow");
            assert_eq!(run(kind, Way::Callout, 3000), Ok(base), "{kind:?}");
            assert_eq!(run(kind, Way::Reschedule, 3000), Ok(base), "{kind:?}");
        }
    }

    #[test]
    fn idle_timers_stay_idle_while_messages_flow() {
        let mut m = Messages::new(SchemeKind::Hierarchical, Way::StopStart, 200, &opts()).unwrap();
        for _ in 0..3000 {
            m.step().unwrap();
        }
        assert_eq!(m.went_idle, 0);
        // A unit that hears nothing goes idle: with one unit, no message reaches another.
        let mut m = Messages::new(SchemeKind::Hierarchical, Way::StopStart, 1, &opts()).unwrap();
        // Its short timer (its only sender) silenced beyond the run.
        let short = m.handles[MSG_SHORT as usize].take().unwrap();
        m.handles[MSG_SHORT as usize] = Some(m.t.push_back(short, 5000, MSG_SHORT).unwrap());
        for _ in 0..3000 {
            m.step().unwrap();
        }
        assert!(m.went_idle > 0);
    }

    #[test]
    fn a_spread_shows_its_median_and_range() {
        let mut res = Results::default();
        let kinds = [SchemeKind::Hierarchical];
        res.add_spread(CALLOUT_COST, kinds[0], 1000, &[1.05, 1.1, 1.3], "x");
        res.add(CALLOUT_COST, kinds[0], 10_000, 1.25, "x");
        let mut out = String::new();
        res.table(&mut out, CALLOUT_COST, "cost", &kinds, &[1000, 10_000]);
        assert!(out.contains("| 1.10 (1.05–1.30) | 1.2 |"), "{out}");
        assert_eq!(median(&[3.0, 1.0, 2.0, 4.0]), 2.0);
    }

    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
        let e = Cli::try_parse_from(["wheel-bench", "--schemes", "2,9"]).unwrap_err();
        assert!(e.to_string().contains("'9' is not a scheme number"), "{e}");
        let e = Cli::try_parse_from(["wheel-bench", "--slots", "100"]).unwrap_err();
        assert!(e.to_string().contains("not a power of two"), "{e}");
        let o =
            Opts::new(Cli::try_parse_from(["wheel-bench", "--quick", "--schemes", "6,7"]).unwrap());
        assert_eq!(
            o.schemes,
            [SchemeKind::HashedUnsorted, SchemeKind::Hierarchical]
        );
        assert_eq!(o.budget, Duration::from_millis(300));
        let o = Opts::new(
            Cli::try_parse_from(["wheel-bench", "--messages-only", "--units", "10,100000"])
                .unwrap(),
        );
        assert!(o.messages_only && !o.ratas_only);
        assert_eq!(o.units, Some(vec![10, 100_000]));
        let e = Cli::try_parse_from(["wheel-bench", "--units", "0"]).unwrap_err();
        assert!(
            e.to_string().contains("'0' is not a number of units"),
            "{e}"
        );
        let e =
            Cli::try_parse_from(["wheel-bench", "--ratas-only", "--messages-only"]).unwrap_err();
        assert!(e.to_string().contains("cannot be used with"), "{e}");
    }

    /// What a run could not take is refused on the command line, as a usage error (exit 2).
    #[test]
    fn out_of_range_values_are_refused() {
        let parse = |args: &[&str]| {
            Cli::try_parse_from(["wheel-bench"].iter().chain(args))
                .map_err(|e| (e.exit_code(), e.to_string()))
        };
        for (args, why) in [
            (&["--slots", "33554432"][..], "is more than 16777216 slots"),
            (&["--slots", "4294967296"], "not a power of two"),
            (&["--slots", "0"], "not a power of two"),
            (
                &["--ratas-pairs", "0"],
                "'0' is not a number of pairs (2 to 209683)",
            ),
            (&["--ratas-pairs", "1"], "'1' is not a number of pairs"),
            (&["--ratas-pairs", "100,209684"], "'209684' is not a number"),
            (&["--ratas-pairs", "4000000000"], "is not a number of pairs"),
            (&["--budget-ms", "0"], "'0' is not a budget"),
            (
                &["--units", "1398102"],
                "'1398102' is not a number of units",
            ),
            (
                &["--messages-only", "--ratas-pairs", "8"],
                "cannot be used with",
            ),
            (
                &["--messages-only", "--ratas-runs", "range"],
                "cannot be used with",
            ),
            (&["--ratas-only", "--units", "8"], "cannot be used with"),
        ] {
            let (code, e) = parse(args).unwrap_err();
            assert!(e.contains(why), "{args:?}: {e}");
            assert_eq!(code, 2, "{args:?}");
        }
        let cli = parse(&["--slots", "16777216", "--ratas-pairs", "2,209683"]).unwrap();
        assert_eq!(cli.slots, MAX_SLOTS);
        assert_eq!(
            cli.ratas_pairs,
            Some(vec![ratas::MIN_PAIRS, ratas::MAX_PAIRS])
        );
        assert_eq!(ratas::MAX_PAIRS, 209_683);
        assert_eq!(MAX_UNITS, 1_398_101);
        assert_eq!(MAX_SLOTS, 1 << 24);
        // The help gives the limits as the constants are.
        let help = Cli::command().render_long_help().to_string();
        for limit in [
            format!("each {} (fewer make none) to", ratas::MIN_PAIRS),
            ratas::MAX_PAIRS.to_string(),
            MAX_UNITS.to_string(),
        ] {
            assert!(help.contains(&limit), "{limit}: {help}");
        }
        // Ratas' benchmark asked for on schemes it does not run on.
        for args in [
            &["--schemes", "2,5", "--ratas-only"][..],
            &["--schemes", "1", "--ratas-pairs", "10"],
            &["--schemes", "3", "--ratas-runs", "range"],
        ] {
            let e = parse(args).unwrap().check().unwrap_err();
            assert_eq!(e.exit_code(), 2, "{args:?}");
            assert!(e.to_string().contains("schemes 6 and 7 only"), "{e}");
        }
        for args in [
            &["--schemes", "2,7", "--ratas-only"][..],
            &["--ratas-only"],
            &["--schemes", "2"],
        ] {
            parse(args).unwrap().check().unwrap();
        }
    }

    /// A scheme, a number of pairs or units given twice is measured once; units in increasing
    /// order.
    #[test]
    fn repeats_are_measured_once() {
        let cli = Cli::try_parse_from([
            "wheel-bench",
            "--schemes",
            "7,6,7",
            "--ratas-pairs",
            "8,2,8",
            "--units",
            "1000,10,1000",
        ])
        .unwrap();
        let o = Opts::new(cli);
        assert_eq!(
            o.schemes,
            [SchemeKind::Hierarchical, SchemeKind::HashedUnsorted]
        );
        assert_eq!(o.ratas_pairs, Some(vec![8, 2]));
        assert_eq!(o.units, Some(vec![10, 1000]));
    }

    /// A failed run is counted, and noted where its number would be.
    #[test]
    fn failed_runs_are_counted() {
        let mut res = Results::default();
        let k = SchemeKind::Hierarchical;
        res.add("ratas-range", k, 8, 1.5, "Mops/s");
        res.note("ratas-range", k, 16, "over".into());
        assert_eq!(res.failures(), None);
        res.fail("ratas-range", k, 32, "error: Full".into());
        assert_eq!(
            res.failures().as_deref(),
            Some("1 run failed: ratas-range on scheme7-hierarchical at n=32: error: Full")
        );
        res.fail("messages-callout", k, 10, "error: runs differ".into());
        assert!(res
            .failures()
            .unwrap()
            .starts_with("2 runs failed, the first: ratas-range"));
        assert!(res.get("ratas-range", k, 32).unwrap().value.is_nan());
    }

    /// A directory made for one test, removed with what is in it.
    struct Dir(PathBuf);

    impl Dir {
        fn new(name: &str) -> Self {
            let d = std::env::temp_dir().join(format!("wheel-bench-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&d);
            fs::create_dir(&d).unwrap();
            Dir(d)
        }
        fn files(&self) -> Vec<String> {
            let mut v: Vec<String> = fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            v.sort();
            v
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    /// The CSV file is checked before the run, and written whole or not at all.
    #[test]
    fn the_csv_file_is_written_whole_or_not_at_all() {
        let dir = Dir::new("csv");
        let mut res = Results::default();
        res.add("tick", SchemeKind::Heap, 1000, 12.25, "ns/tick");
        let path = dir.0.join("out.csv");
        check_csv(&path).unwrap();
        assert!(dir.files().is_empty(), "{:?}", dir.files());
        res.write_csv(&path).unwrap();
        assert_eq!(dir.files(), ["out.csv"]);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "bench,scheme,n,value,min,max,unit,note\n\
             tick,scheme3-heap,1000,12.250,,,ns/tick,\n"
        );
        // Where the file cannot go: refused before the run, and nothing left after a write.
        let sub = dir.0.join("sub");
        fs::create_dir(&sub).unwrap();
        for bad in [dir.0.join("none/out.csv"), sub.clone(), dir.0.join("..")] {
            assert!(check_csv(&bad).is_err(), "{}", bad.display());
            assert!(res.write_csv(&bad).is_err(), "{}", bad.display());
        }
        assert!(fs::read_dir(&sub).unwrap().next().is_none());
        assert_eq!(dir.files(), ["out.csv", "sub"]);
    }
}
