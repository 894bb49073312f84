// SPDX-License-Identifier: GPL-2.0

//! `fig9`: Figure 9 of Varghese & Lauck, "Hashed and Hierarchical Timing Wheels", on the
//! rust_timerwheel module's `/dev/timerwheel`.
//!
//! # The paper's experiment (section VII.A)
//!
//! Costello's BSD kernels were timed thus: "one process created a number of outstanding timers
//! set for random times far in the future … It then created one more timer, and repeatedly set
//! it for a random time farther in the future than the others, causing repeated calls to
//! untimeout() and timeout() (or unsetcallout() and setcallout())". Figure 9 plots the time of
//! one such reset against the number of outstanding callouts: linear for the traditional
//! sorted list, flat for the scheme 6 facility through both interfaces.
//!
//! # Here
//!
//! | paper                                   | curve                 | module                  |
//! |-----------------------------------------|-----------------------|-------------------------|
//! | old facility, timeout()/untimeout()     | `bsd-traditional`     | scheme 2, TIMEOUT       |
//! | new facility, old interface (hash)      | `scheme6-timeout`     | scheme 6, TIMEOUT       |
//! | new facility, new interface (handles)   | `scheme6-setcallout`  | scheme 6, SETCALLOUT    |
//! | the reset in place                      | `scheme6-mod`, `scheme7-mod` | TW_IOC_RESET     |
//! | (the paper's scheme 7, not in Fig. 9)   | `scheme7-*`           | scheme 7, both          |
//! | (schemes 1, 3, 4, 5)                    | `schemeN-setcallout`  | scheme N, SETCALLOUT    |
//! | (today's kernel)                        | `linux-timer_list`, `linux-timer_list-mod`, `linux-hrtimer` | in-kernel |
//!
//! "Outstanding timers" are n callouts set with TW_IOC_BATCH on a manual-clock instance, so
//! nothing fires; "far in the future" is `[2^19, 2^20)` ticks and the reset goes to
//! `[2^20, 2^21)`. Each reset is measured twice: inside the kernel (TW_IOC_BENCH, the main
//! figure: the data structure's cost, as the paper's kernels measured it) and from userspace
//! (the ioctls per reset: what a process pays), each point in several interleaved repeats.
//! Also measured: the per-tick bookkeeping of schemes 6 and 7 against n, memory per callout
//! (beside `sizeof(struct timer_list)` and `sizeof(struct hrtimer)` of the running kernel, from
//! TW_IOC_INFO), and wakeups per second of idle and sparse instances on the real clock.
//!
//! Modules: the uapi is `include/uapi/timerwheel.rs` ([`uapi_defs`], checked against the header
//! by the build: [`uapi_check`]), [`device`] wraps the ioctls (the only `unsafe`), [`method`]
//! holds the experiment's constants and curves, [`measure`] picks iteration counts, [`run`]
//! drives the sweep and [`wakeups`] the real-clock measure, [`records`], [`report`], [`plot`]
//! and [`summary`] turn rows into files.

/// `eprintln!` that a closed or full stderr does not stop (a run's measurements and files go
/// on); in the tests, `eprintln!` itself, which the test harness captures.
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

mod device;
#[cfg(test)]
mod fake;
mod measure;
mod method;
mod output;
mod plot;
mod records;
mod report;
mod run;
mod summary;
// The header in full, used or not (the file allows dead code).
#[path = "../../../include/uapi/timerwheel.rs"]
mod uapi_defs;
mod wakeups;

/// The build's check of [`uapi_defs`] against the header (see build.rs).
#[allow(dead_code)]
mod uapi_check {
    include!(concat!(env!("OUT_DIR"), "/uapi_check.rs"));
}

use clap::error::ErrorKind;
use clap::Args;
use clap::CommandFactory;
use clap::Parser;
use clap::Subcommand;
use clap::ValueEnum;
use device::Instance as _;
use method::Curve;
use method::CURVES;
use records::Row;
use records::TickRow;
use records::WakeupRow;
use std::fmt::Write as _;
use std::fs;
use std::io;
use std::io::Write as _;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use uapi_check::header::TW_DEVICE;
use uapi_defs::TW_MAX_CAPACITY;
use uapi_defs::TW_MAX_SLOTS;

const FIG9_TITLE: &str = "Figure 9: callout reset cost vs outstanding callouts";
const TICK_TITLE: &str = "Per-tick bookkeeping vs outstanding callouts";

/// Figure 9 of Varghese & Lauck (section VII) on /dev/timerwheel.
///
/// The cost of resetting one callout against the number n of other callouts outstanding, for
/// each scheme, both interfaces and the reset in place, and the Linux kernel's timer_list and
/// hrtimer. `fig9 COMMAND --help` describes each command.
#[derive(Debug, Parser)]
#[command(name = "fig9", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The sweep (inside a guest with the module loaded); writes CSV, markdown, SVG.
    ///
    /// For each n and curve: a fresh instance (manual clock: nothing fires) with n callouts at
    /// random in [2^19, 2^20) ticks, set with TW_IOC_BATCH; then one more callout reset again and
    /// again to a random time in [2^20, 2^21), timed two ways: ioctl (from userspace: a cancel
    /// ioctl + a start ioctl per reset, or one TW_IOC_RESET) and kernel (TW_IOC_BENCH, the same
    /// loop timed inside the kernel). Each point is measured --repeats times, interleaved across
    /// the curves; the curves of schemes 6, 7 and Linux are measured at n = 1e3 when the sweep
    /// reaches n = 1e6 (1e4 with --quick), each repeat just before the same repeat there, so that
    /// their flatness compares costs measured seconds apart, not minutes; their kernel measure at n
    /// = 1e3 and 1e6 is timed 5 times longer than the other points' (100 ms a repeat), so that the
    /// emulator's short stalls weigh less in a repeat's figure; and at n = 1e3 and 1e6, after each
    /// repeat, schemes 6 and 7 against linux-timer_list and scheme 7's reset in place against
    /// linux-hrtimer in pairs: one TW_IOC_BENCH_PAIR alternates the module's resets and Linux's a
    /// millisecond at a time, so that their ratio holds while the machine's speed moves (rows of
    /// measure "pair"). Also ns per tick (TW_BENCH_TICK) for schemes 6 and 7, bytes per callout
    /// (TW_IOC_STATS) beside the sizes of Linux's struct timer_list and struct hrtimer in the
    /// running kernel (TW_IOC_INFO), and wakeups per second on the real clock.
    ///
    /// Writes DIR/fig9.csv, tick.csv, memory.csv, wakeups.csv, results.md, fig9.svg,
    /// fig9-ioctl.svg, tick.svg; DIR is made once the device answers. fig9.csv, tick.csv and
    /// memory.csv grow as the sweep goes, repeat by repeat, as fig9.csv.partial and so on,
    /// renamed at the end: a run cut short leaves its rows there.
    Run(RunArgs),
    /// Draw an SVG from fig9.csv (or tick.csv).
    ///
    /// Draws a log-log SVG. With fig9.csv: by default both measures, kernel to OUT and ioctl to
    /// OUT with '-ioctl' before the extension; --measure draws just that one to OUT. With tick.csv
    /// (recognised by its header): the per-tick cost to OUT.
    Plot(PlotArgs),
    /// The ratios, the baseline's slope, lock holds and wakeups from fig9.csv.
    ///
    /// Prints, from fig9.csv: the flatness of schemes 6 and 7 (cost at n=large / cost at n=small),
    /// the reset in place against cancel + start, scheme 7 against linux-timer_list and
    /// linux-hrtimer at both n, and (measure kernel) schemes 6 and 7 against linux-timer_list,
    /// scheme 7's reset in place against linux-hrtimer, as measured in pairs (TW_IOC_BENCH_PAIR,
    /// the rows of measure "pair"), the log-log slope of the traditional BSD list over its points
    /// with n >= 100, the longest lock hold of each curve, and the wakeups of wakeups.csv. Costs
    /// are medians over the repeats; ratios are taken repeat by repeat, median [min–max], the
    /// flatness over the repeats `fig9 run` measured back to back at the two n (paired_n). An n
    /// at which fig9.csv has no point of the measure is an error (a `--quick` sweep ends at 1e4).
    Summary(SummaryArgs),
    /// Wakeups per second of idle and sparse instances on the real clock, periodic and tickless.
    ///
    /// For schemes 6 and 7, periodic and tickless: instances idle, with one callout 10 s away, and
    /// with 1000 callouts 10 ms apart from 10 s on, all on the real clock (1 ms tick); their
    /// tw_stats.wakeups over one wall-clock interval.
    Wakeups(WakeupArgs),
    /// Open the device and print TW_IOC_INFO.
    ///
    /// Opens the device and prints TW_IOC_INFO: version, schemes, features. Nothing else.
    Selfcheck(SelfcheckArgs),
}

#[derive(Debug, Args)]
struct RunArgs {
    /// n in 0, 10, 100, 1000, 10000 and short runs.
    #[arg(long)]
    quick: bool,
    /// Output directory.
    #[arg(long, value_name = "DIR", default_value = "results/fig9")]
    out: PathBuf,
    /// Time budget of one point's repeats of one measure, at least 1; an O(n) curve stops past
    /// it (the curves of schemes 6, 7 and Linux are still measured at n = 1e3 and 1e6)
    /// [default: 2000, 500 with --quick].
    #[arg(long, value_name = "MS", value_parser = parse_budget)]
    budget_ms: Option<u64>,
    /// Largest n, also as 1e6 [default: 1000000, 10000 with --quick].
    #[arg(long, value_name = "N", value_parser = parse_max_n)]
    max_n: Option<u64>,
    /// The device.
    #[arg(long, value_name = "PATH", default_value = TW_DEVICE)]
    device: String,
    /// Wheel size of schemes 5 and 6, a power of two up to 2^24.
    #[arg(long, value_name = "M", default_value = "4096", value_parser = parse_slots)]
    slots: u32,
    /// Seed of the random times.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = parse_curve, help = curves_help())]
    curves: Vec<Curve>,
    /// Repeats of each point, interleaved across the curves (the key curves' n = 1e3 back to
    /// back with n = 1e6, repeat by repeat).
    #[arg(long, value_name = "R", default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
    repeats: u32,
    /// Wall-clock interval of the wakeups measure, at most 9000; 0 skips it [default: 2000, 500
    /// with --quick].
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(0..=wakeups::MAX_INTERVAL_MS))]
    wakeup_ms: Option<u64>,
}

#[derive(Debug, Args)]
struct PlotArgs {
    /// fig9.csv or tick.csv.
    #[arg(long, value_name = "FILE")]
    csv: PathBuf,
    /// The SVG to write (not FILE).
    #[arg(long, value_name = "OUT")]
    svg: PathBuf,
    /// The chart's title.
    #[arg(long, value_name = "T")]
    title: Option<String>,
    /// Draw only this measure (tick.csv has the kernel measure alone).
    #[arg(long, value_enum, value_name = "M")]
    measure: Option<MeasureArg>,
}

#[derive(Debug, Args)]
struct SummaryArgs {
    /// fig9.csv.
    #[arg(long, value_name = "FILE")]
    csv: PathBuf,
    /// The measure.
    #[arg(long, value_enum, value_name = "M", default_value = "kernel")]
    measure: MeasureArg,
    /// The small n, below the large one.
    #[arg(long = "small", value_name = "N", default_value = "1000", value_parser = parse_count)]
    small_n: u64,
    /// The large n.
    #[arg(long = "large", value_name = "N", default_value = "1000000", value_parser = parse_count)]
    large_n: u64,
    /// wakeups.csv [default: the one beside FILE, if there is one].
    #[arg(long, value_name = "FILE")]
    wakeups: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct WakeupArgs {
    /// The device.
    #[arg(long, value_name = "PATH", default_value = TW_DEVICE)]
    device: String,
    /// The interval, at most 9000.
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=wakeups::MAX_INTERVAL_MS))]
    ms: u64,
    /// Also write the rows as CSV here.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct SelfcheckArgs {
    /// The device.
    #[arg(long, value_name = "PATH", default_value = TW_DEVICE)]
    device: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum MeasureArg {
    /// TW_IOC_BENCH: timed inside the kernel.
    Kernel,
    /// Timed in userspace, around the ioctls.
    Ioctl,
}

impl MeasureArg {
    fn name(self) -> &'static str {
        match self {
            MeasureArg::Kernel => "kernel",
            MeasureArg::Ioctl => "ioctl",
        }
    }
}

/// A count, also written as 1e6 or with underscores.
fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.replace('_', "");
    let v = match t.split_once(['e', 'E']) {
        None => t.parse::<u64>().ok(),
        Some((m, e)) => {
            let (m, e) = (m.parse::<u64>().ok(), e.parse::<u32>().ok());
            m.zip(e)
                .and_then(|(m, e)| m.checked_mul(10u64.checked_pow(e)?))
        }
    };
    v.ok_or_else(|| format!("'{s}' is not a count"))
}

/// A time budget in ms: 0 would stop every curve at its first n (the key curves aside).
fn parse_budget(s: &str) -> Result<u64, String> {
    match s.parse::<u64>().map_err(|e| e.to_string())? {
        0 => Err("a budget of 0 ms stops every curve at its first n: at least 1".into()),
        ms => Ok(ms),
    }
}

/// The largest n an instance holds, with room for the reset timer.
fn parse_max_n(s: &str) -> Result<u64, String> {
    let n = parse_count(s)?;
    let most = u64::from(TW_MAX_CAPACITY) - 1024;
    if n > most {
        return Err(format!("{n} is beyond what an instance holds ({most})"));
    }
    Ok(n)
}

fn parse_slots(s: &str) -> Result<u32, String> {
    let m = parse_count(s)?;
    if !m.is_power_of_two() || m > u64::from(TW_MAX_SLOTS) {
        return Err(format!("{m} is not a power of two up to 2^24"));
    }
    Ok(m as u32)
}

/// The help of `--curves`: every curve's name.
fn curves_help() -> String {
    let all: Vec<&str> = CURVES.iter().map(|c| c.name).collect();
    format!(
        "Comma-separated curve names [default: all]: {}",
        all.join(", ")
    )
}

fn parse_curve(s: &str) -> Result<Curve, String> {
    Curve::by_name(s.trim()).ok_or_else(|| {
        let all: Vec<&str> = CURVES.iter().map(|c| c.name).collect();
        format!("unknown curve '{s}' (curves: {})", all.join(", "))
    })
}

impl Cli {
    /// The command line, checked for what clap's parsers see one value at a time: a usage
    /// error (exit status 2) if it does not hold together.
    fn checked(self) -> Result<Cli, clap::Error> {
        if let Command::Summary(a) = &self.command {
            if a.small_n >= a.large_n {
                return Err(usage_error(
                    "summary",
                    format!(
                        "--small {} is not below --large {}: the flatness is the cost at the large \
                         n over the cost at the small one",
                        a.small_n, a.large_n
                    ),
                ));
            }
        }
        Ok(self)
    }
}

/// A usage error of subcommand `sub`, as clap reports its own.
fn usage_error(sub: &str, message: String) -> clap::Error {
    let mut cmd = Cli::command();
    cmd.build();
    let sub = cmd
        .find_subcommand_mut(sub)
        .expect("the subcommands are fig9's");
    sub.error(ErrorKind::ValueValidation, message)
}

/// Why a command failed.
#[derive(Debug)]
enum Failure {
    /// An error, one line on stderr: exit status 1.
    Error(String),
    /// Stdout closed under us (`fig9 summary | head -1`): nothing to say, the exit status of a
    /// process that SIGPIPE ended.
    BrokenPipe,
}

impl From<String> for Failure {
    fn from(e: String) -> Failure {
        Failure::Error(e)
    }
}

/// Exit status of a write to a closed pipe: 128 + SIGPIPE, as the shell reports a process
/// SIGPIPE ended.
const BROKEN_PIPE_STATUS: u8 = 128 + 13;

fn main() -> ExitCode {
    let cli = Cli::try_parse()
        .and_then(Cli::checked)
        .unwrap_or_else(|e| e.exit());
    let result = match cli.command {
        Command::Run(a) => cmd_run(&a),
        Command::Plot(a) => cmd_plot(&a).map(|_| ExitCode::SUCCESS),
        Command::Summary(a) => cmd_summary(&a).map(|_| ExitCode::SUCCESS),
        Command::Wakeups(a) => cmd_wakeups(&a).map(|_| ExitCode::SUCCESS),
        Command::Selfcheck(a) => cmd_selfcheck(&a.device).map(|_| ExitCode::SUCCESS),
    };
    result.unwrap_or_else(|e| match e {
        Failure::Error(e) => {
            say!("fig9: {e}");
            ExitCode::FAILURE
        }
        Failure::BrokenPipe => ExitCode::from(BROKEN_PIPE_STATUS),
    })
}

/// Writes `text` to stdout, flushed.
fn print(text: &str) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    write!(out, "{text}")
        .and_then(|()| out.flush())
        .map_err(|e| match e.kind() {
            io::ErrorKind::BrokenPipe => Failure::BrokenPipe,
            _ => Failure::Error(format!("writing stdout: {e}")),
        })
}

/// Writes `text` to `path` whole (a temporary file renamed over it).
fn write(path: &Path, text: &str) -> Result<(), String> {
    output::write_atomic(path, text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))?;
    say!("fig9: wrote {}", path.display());
    Ok(())
}

fn write_csv<T: serde::Serialize + Default>(path: &Path, rows: &[T]) -> Result<(), String> {
    write(path, &records::render(rows)?)
}

/// `OUT` with `-ioctl` before its extension: fig9.svg → fig9-ioctl.svg.
fn ioctl_sibling(svg: &Path) -> PathBuf {
    let stem = svg.file_stem().unwrap_or_default().to_string_lossy();
    let ext = svg
        .extension()
        .map_or("svg".into(), |e| e.to_string_lossy());
    svg.with_file_name(format!("{stem}-ioctl.{ext}"))
}

/// The fig9 figures to draw, each measure with its file: `measure` to `svg`, or both measures
/// (kernel to `svg`, ioctl beside it).
fn fig9_jobs(svg: &Path, measure: Option<&'static str>) -> Vec<(&'static str, PathBuf)> {
    match measure {
        Some(m) => vec![(m, svg.to_path_buf())],
        None => vec![("kernel", svg.to_path_buf()), ("ioctl", ioctl_sibling(svg))],
    }
}

/// Draws the fig9 figures of [`fig9_jobs`]; with `refuse_blank` (the CSV drawn from, which the
/// error names), fails before writing any if one of them would show no point. A write's error
/// names its SVG.
fn draw_fig9(
    rows: &[Row],
    jobs: &[(&str, PathBuf)],
    title: &str,
    refuse_blank: Option<&Path>,
) -> Result<(), String> {
    let figures: Vec<_> = jobs
        .iter()
        .map(|(m, path)| (*m, path, plot::fig9_figure(rows, m, title)))
        .collect();
    if let Some(csv) = refuse_blank {
        if let Some((m, ..)) = figures.iter().find(|(.., f)| f.is_blank()) {
            return Err(format!(
                "{}: no measured point of measure {m}: nothing to plot",
                csv.display()
            ));
        }
    }
    for (_, path, fig) in &figures {
        let svg = plot::render_svg(fig).map_err(|e| format!("{}: {e}", path.display()))?;
        write(path, &svg)?;
    }
    Ok(())
}

impl RunArgs {
    fn setup(&self) -> run::Setup {
        let quick = self.quick;
        run::Setup {
            quick,
            budget: Duration::from_millis(self.budget_ms.unwrap_or(if quick { 500 } else { 2000 })),
            max_n: self.max_n.unwrap_or(if quick { 10_000 } else { 1_000_000 }),
            device: self.device.clone(),
            slots: self.slots,
            seed: self.seed,
            repeats: self.repeats,
            curves: if self.curves.is_empty() {
                CURVES.to_vec()
            } else {
                // A curve named twice is measured once.
                let mut curves = self.curves.clone();
                let mut seen = Vec::new();
                curves.retain(|c| {
                    let first = !seen.contains(c);
                    seen.push(*c);
                    first
                });
                curves
            },
        }
    }

    fn wakeup_interval(&self) -> Duration {
        let ms = self
            .wakeup_ms
            .unwrap_or(if self.quick { 500 } else { 2000 });
        Duration::from_millis(ms)
    }
}

fn cmd_run(a: &RunArgs) -> Result<ExitCode, Failure> {
    let setup = a.setup();
    // DIR and the partial CSV files are made once the device answers.
    let mut journal = output::Journal::new(&a.out);
    let res = run::run(&setup, &device::Device::opener(&setup.device), &mut journal)?;
    let interval = a.wakeup_interval();
    let mut wake = Vec::new();
    let mut errors = res.errors;
    if !interval.is_zero() {
        match wakeups::measure(&setup.device, interval) {
            Ok(rows) => wake = rows,
            Err(e) => {
                say!("fig9: wakeups: {e}");
                errors += 1;
            }
        }
        errors += wake.iter().filter(|r| r.note.starts_with("error")).count();
    }
    let text = format!(
        "Run: `fig9 {}` — n up to {}, {} repeats, budget {} ms per point, slots {} (schemes \
         5, 6), seed {}, device {}.",
        command_line(std::env::args().skip(1)),
        setup.max_n,
        setup.repeats,
        setup.budget.as_millis(),
        setup.slots,
        setup.seed,
        setup.device
    );
    journal.finish(&res.fig9, &res.tick, &res.memory)?;
    write_csv(&a.out.join("wakeups.csv"), &wake)?;
    write(
        &a.out.join("results.md"),
        &report::results_md(&res, &wake, &text),
    )?;
    // A run that measured nothing still draws its (blank) figures: its errors say why.
    draw_fig9(
        &res.fig9,
        &fig9_jobs(&a.out.join("fig9.svg"), None),
        FIG9_TITLE,
        None,
    )?;
    let tick = plot::tick_figure(&res.tick, TICK_TITLE);
    write(&a.out.join("tick.svg"), &plot::render_svg(&tick)?)?;
    if errors > 0 {
        say!("fig9: {errors} error(s), see results.md");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// The command line of a run as results.md shows it: its arguments but `--out DIR`, which
/// names a directory of the machine that made it.
fn command_line(mut args: impl Iterator<Item = String>) -> String {
    let mut shown = Vec::new();
    while let Some(a) = args.next() {
        if a == "--out" {
            args.next();
        } else if !a.starts_with("--out=") {
            shown.push(a);
        }
    }
    shown.join(" ")
}

/// An error if one of `outputs` is the file `input`: a figure written over the CSV it is drawn
/// from (`--svg` the CSV itself, or the ioctl figure beside it).
fn refuse_input(input: &Path, outputs: &[PathBuf]) -> Result<(), String> {
    match outputs.iter().find(|o| output::same_file(input, o)) {
        Some(o) => Err(format!(
            "{} is the input {}: not writing over it",
            o.display(),
            input.display()
        )),
        None => Ok(()),
    }
}

fn cmd_plot(a: &PlotArgs) -> Result<(), Failure> {
    let text = fs::read_to_string(&a.csv).map_err(|e| format!("{}: {e}", a.csv.display()))?;
    let columns = records::header(&text).map_err(|e| format!("{}: {e}", a.csv.display()))?;
    let context = |e: String| format!("{}: {e}", a.csv.display());
    if columns.iter().any(|c| c == "ns_per_tick") {
        if a.measure == Some(MeasureArg::Ioctl) {
            return Err(context(
                "per-tick costs are measured in the kernel alone: no --measure ioctl".into(),
            )
            .into());
        }
        refuse_input(&a.csv, std::slice::from_ref(&a.svg))?;
        let rows: Vec<TickRow> = records::parse(&text).map_err(context)?;
        let title = a.title.as_deref().unwrap_or(TICK_TITLE);
        let fig = plot::tick_figure(&rows, title);
        if fig.is_blank() {
            return Err(context("no measured point: nothing to plot".into()).into());
        }
        return Ok(write(&a.svg, &plot::render_svg(&fig)?)?);
    }
    let jobs = fig9_jobs(&a.svg, a.measure.map(MeasureArg::name));
    let outputs: Vec<PathBuf> = jobs.iter().map(|(_, p)| p.clone()).collect();
    refuse_input(&a.csv, &outputs)?;
    let rows: Vec<Row> = records::parse(&text).map_err(context)?;
    let title = a.title.as_deref().unwrap_or(FIG9_TITLE);
    Ok(draw_fig9(&rows, &jobs, title, Some(&a.csv))?)
}

fn cmd_summary(a: &SummaryArgs) -> Result<(), Failure> {
    let rows: Vec<Row> = records::read(&a.csv)?;
    // A wakeups.csv holds a header alone after `fig9 run --wakeup-ms 0`.
    let wakeups: Vec<WakeupRow> = match &a.wakeups {
        Some(path) => records::read_rows(path)?,
        None => {
            let beside = a.csv.with_file_name("wakeups.csv");
            match beside.exists() {
                true => records::read_rows(&beside)?,
                false => Vec::new(),
            }
        }
    };
    // Each ratio is taken at the two n: an n the sweep did not reach would leave them all n/a.
    let measure = a.measure.name();
    for n in [a.small_n, a.large_n] {
        if !rows.iter().any(|r| r.measure == measure && r.n == n) {
            let mut have: Vec<u64> = rows
                .iter()
                .filter(|r| r.measure == measure)
                .map(|r| r.n)
                .collect();
            have.sort_unstable();
            have.dedup();
            return Err(format!(
                "{}: no point of measure {measure} at n = {n} (its n: {have:?}): pick --small and \
                 --large among them",
                a.csv.display()
            )
            .into());
        }
    }
    let s = summary::summarize(&rows, measure, a.small_n, a.large_n);
    let mut text = summary::render(&s);
    if !wakeups.is_empty() {
        text += &summary::render_wakeups(&wakeups);
    }
    print(&text)
}

fn cmd_wakeups(a: &WakeupArgs) -> Result<(), Failure> {
    // A CSV that cannot be written fails now, not after the measurement.
    if let Some(path) = &a.csv {
        output::check_writable(path).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let rows = wakeups::measure(&a.device, Duration::from_millis(a.ms))?;
    // The CSV first: it is kept whatever becomes of stdout.
    if let Some(path) = &a.csv {
        write_csv(path, &rows)?;
    }
    print(&report::wakeup_table(&rows))?;
    match rows.iter().find(|r| r.note.starts_with("error")) {
        Some(r) => Err(format!("scheme {} {} {}: {}", r.scheme, r.clock, r.load, r.note).into()),
        None => Ok(()),
    }
}

fn cmd_selfcheck(path: &str) -> Result<(), Failure> {
    let dev = device::Device::open(path).map_err(|e| format!("{path}: {e}"))?;
    let info = dev.info().map_err(|e| format!("TW_IOC_INFO: {e}"))?;
    print(&info_text(path, &info))?;
    if info.version != uapi_defs::TW_VERSION {
        return Err("version mismatch".to_string().into());
    }
    Ok(())
}

/// What `fig9 selfcheck` prints of TW_IOC_INFO.
fn info_text(path: &str, info: &uapi_defs::tw_info) -> String {
    let schemes: Vec<String> = (1..32)
        .filter(|s| info.schemes & (1 << s) != 0)
        .map(|s: u32| s.to_string())
        .collect();
    let mut o = String::new();
    // Writing to a String cannot fail.
    let _ = writeln!(o, "device     {path}");
    let _ = writeln!(
        o,
        "version    {} (this tool: {})",
        info.version,
        uapi_defs::TW_VERSION
    );
    let _ = writeln!(
        o,
        "schemes    {} (mask {:#x})",
        schemes.join(" "),
        info.schemes
    );
    let _ = writeln!(o, "features   {:#x}", info.features);
    let _ = writeln!(o, "hold_work  {}", info.hold_work);
    let _ = writeln!(
        o,
        "tick       {} us (the real clock's default period: tick_us)",
        info.tick_ns / 1000
    );
    let _ = writeln!(o, "instances  {}", info.instances);
    let _ = writeln!(o, "uptime     {:.1} s", info.uptime_ns as f64 / 1e9);
    for (_, ty, size) in run::linux_sizes(info) {
        let name = ty.trim_start_matches("struct ");
        let _ = writeln!(
            o,
            "{name:<10} {size} bytes (sizeof({ty}) in the running kernel)"
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn p(line: &str) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once("fig9").chain(line.split_whitespace()))
            .and_then(Cli::checked)
            .map(|c| c.command)
    }

    fn run(line: &str) -> run::Setup {
        match p(line) {
            Ok(Command::Run(r)) => r.setup(),
            other => panic!("{line}: {other:?}"),
        }
    }

    fn error(line: &str) -> String {
        p(line).unwrap_err().to_string()
    }

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_defaults() {
        let r = run("run");
        assert!(!r.quick);
        assert_eq!(r.budget, Duration::from_millis(2000));
        assert_eq!(r.max_n, 1_000_000);
        assert_eq!(r.device, "/dev/timerwheel");
        assert_eq!(r.slots, 4096);
        assert_eq!(r.repeats, 5);
        assert_eq!(r.curves.len(), CURVES.len());
        let Ok(Command::Run(a)) = p("run") else {
            panic!()
        };
        assert_eq!(a.out, PathBuf::from("results/fig9"));
        assert_eq!(a.wakeup_interval(), Duration::from_millis(2000));
    }

    #[test]
    fn run_quick_changes_the_defaults_but_not_what_is_given() {
        let r = run("run --quick");
        assert_eq!((r.max_n, r.budget.as_millis()), (10_000, 500));
        let r = run("run --quick --max-n 1e3 --budget-ms=50 --out /tmp/x --device /dev/null");
        assert_eq!((r.max_n, r.budget.as_millis()), (1000, 50));
        assert_eq!(r.device, "/dev/null");
        let Ok(Command::Run(a)) = p("run --quick --wakeup-ms 0 --repeats 3") else {
            panic!()
        };
        assert!(a.wakeup_interval().is_zero());
        assert_eq!(a.setup().repeats, 3);
    }

    #[test]
    fn run_curves_and_slots() {
        let r = run("run --curves scheme6-setcallout,bsd-traditional,scheme7-mod --slots 256");
        let names: Vec<&str> = r.curves.iter().map(|c| c.name).collect();
        assert_eq!(
            names,
            ["scheme6-setcallout", "bsd-traditional", "scheme7-mod"]
        );
        assert_eq!(r.slots, 256);
        // A curve named twice is measured once, where it was first named.
        let r = run("run --curves scheme7-mod,bsd-traditional,scheme7-mod");
        let names: Vec<&str> = r.curves.iter().map(|c| c.name).collect();
        assert_eq!(names, ["scheme7-mod", "bsd-traditional"]);
        assert!(error("run --curves nope").contains("unknown curve 'nope'"));
        assert!(error("run --slots 1000").contains("not a power of two"));
        assert!(error("run --max-n 1e9").contains("beyond what an instance holds"));
        assert!(p("run --repeats 0").is_err());
    }

    #[test]
    fn errors_are_reported() {
        use clap::error::ErrorKind;
        let kind = |line: &str| p(line).unwrap_err().kind();
        assert_eq!(kind("run --budget-ms"), ErrorKind::InvalidValue);
        assert!(error("run --budget-ms soon").contains("invalid value 'soon'"));
        assert_eq!(kind("run --frobnicate"), ErrorKind::UnknownArgument);
        assert_eq!(kind("run stray"), ErrorKind::UnknownArgument);
        assert!(p("run --quick=yes").is_err());
        assert_eq!(kind("dance"), ErrorKind::InvalidSubcommand);
        assert_eq!(kind("plot --csv a.csv"), ErrorKind::MissingRequiredArgument);
        assert!(error("plot --csv a.csv").contains("--svg"));
        assert!(error("summary").contains("--csv"));
        assert!(error("summary --csv a --measure wall").contains("'wall'"));
        assert!(error("summary --csv a --small x").contains("not a count"));
        assert!(error("wakeups --ms 10000").contains("10000"));
    }

    #[test]
    fn limits_are_usage_errors() {
        use clap::error::ErrorKind;
        let kind = |line: &str| p(line).unwrap_err().kind();
        // The same limit for both tools' wakeups interval; 0 skips it in a run.
        assert_eq!(kind("run --wakeup-ms 100000"), ErrorKind::ValueValidation);
        assert_eq!(kind("run --wakeup-ms 9001"), ErrorKind::ValueValidation);
        assert_eq!(kind("wakeups --ms 9001"), ErrorKind::ValueValidation);
        let Ok(Command::Run(a)) = p("run --wakeup-ms 9000") else {
            panic!()
        };
        assert_eq!(a.wakeup_interval(), wakeups::MAX_INTERVAL);
        assert!(p("wakeups --ms 9000").is_ok());
        // A budget of 0 would stop every curve at its first n.
        assert_eq!(kind("run --budget-ms 0"), ErrorKind::ValueValidation);
        assert!(error("run --budget-ms 0").contains("at least 1"));
        assert_eq!(run("run --budget-ms 1").budget, Duration::from_millis(1));
        // The flatness is large over small.
        for line in [
            "summary --csv f --small 0 --large 0",
            "summary --csv f --small 1e6 --large 1e3",
            "summary --csv f --large 1000",
        ] {
            assert_eq!(kind(line), ErrorKind::ValueValidation, "{line}");
        }
        let e = error("summary --csv f --small 1e6 --large 1e3");
        assert!(
            e.contains("--small 1000000 is not below --large 1000"),
            "{e}"
        );
        assert!(e.contains("Usage: fig9 summary"), "{e}");
        assert!(p("summary --csv f --small 0 --large 1").is_ok());
    }

    /// A directory of its own for test `name`, with doc/fig9.csv and doc/tick.csv in it.
    fn scratch(name: &str) -> PathBuf {
        let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../doc");
        let d = std::env::temp_dir().join(format!("fig9-main-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        for f in ["fig9.csv", "tick.csv"] {
            fs::copy(doc.join(f), d.join(f)).unwrap();
        }
        d
    }

    fn plot_args(csv: &Path, svg: &Path, measure: Option<MeasureArg>) -> PlotArgs {
        PlotArgs {
            csv: csv.into(),
            svg: svg.into(),
            title: None,
            measure,
        }
    }

    fn failure(r: Result<(), Failure>) -> String {
        match r {
            Err(Failure::Error(e)) => e,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn plot_does_not_write_over_its_input() {
        let d = scratch("plot-input");
        let csv = d.join("fig9.csv");
        let before = fs::read(&csv).unwrap();
        // The SVG named as the CSV, the CSV through a link, the ioctl figure beside --svg.
        fs::copy(&csv, d.join("x-ioctl.csv")).unwrap();
        std::os::unix::fs::symlink("fig9.csv", d.join("link.csv")).unwrap();
        let cases = [
            (csv.clone(), csv.clone(), None, "fig9.csv"),
            (csv.clone(), d.join(".").join("fig9.csv"), None, "fig9.csv"),
            (
                csv.clone(),
                d.join("link.csv"),
                Some(MeasureArg::Ioctl),
                "link.csv",
            ),
            (d.join("x-ioctl.csv"), d.join("x.csv"), None, "x-ioctl.csv"),
            (d.join("tick.csv"), d.join("tick.csv"), None, "tick.csv"),
        ];
        for (input, svg, measure, named) in cases {
            let e = failure(cmd_plot(&plot_args(&input, &svg, measure)));
            assert!(e.contains(named) && e.contains("is the input"), "{e}");
        }
        assert_eq!(fs::read(&csv).unwrap(), before);
        assert_eq!(fs::read(d.join("x-ioctl.csv")).unwrap(), before);
        assert!(!d.join("x.csv").exists(), "nothing written");
        // The ioctl figure beside x.csv is the input: --measure kernel writes x.csv alone.
        cmd_plot(&plot_args(
            &d.join("x-ioctl.csv"),
            &d.join("x.csv"),
            Some(MeasureArg::Kernel),
        ))
        .unwrap();
        assert_eq!(fs::read(d.join("x-ioctl.csv")).unwrap(), before);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn plot_and_summary_refuse_a_file_without_records_or_with_bad_ones() {
        let d = scratch("plot-empty");
        let header = "curve,interface,measure,n,ns_per_op,iterations,note\n";
        let bad = [
            ("empty.csv", String::new(), "no records"),
            ("header.csv", header.to_string(), "no records"),
            (
                "negative.csv",
                format!("{header}a,setcallout,kernel,1,1.0,1,\na,setcallout,kernel,1,-5,1,\n"),
                "record 2: ns_per_op is -5",
            ),
            (
                "measure.csv",
                format!("{header}a,setcallout,wall,1,1.0,1,\n"),
                "record 1: unknown measure 'wall'",
            ),
            (
                "tick-empty.csv",
                "curve,n,ns_per_tick,ticks,note,repeat\n".to_string(),
                "no records",
            ),
        ];
        for (name, text, want) in bad {
            let csv = d.join(name);
            fs::write(&csv, text).unwrap();
            let e = failure(cmd_plot(&plot_args(&csv, &d.join("out.svg"), None)));
            assert!(e.starts_with(&format!("{}: {want}", csv.display())), "{e}");
            if !name.starts_with("tick") {
                let e = failure(cmd_summary(&SummaryArgs {
                    csv: csv.clone(),
                    measure: MeasureArg::Kernel,
                    small_n: 1000,
                    large_n: 1_000_000,
                    wakeups: None,
                }));
                assert!(e.starts_with(&format!("{}: {want}", csv.display())), "{e}");
            }
        }
        assert!(!d.join("out.svg").exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn plot_of_tick_csv_has_no_ioctl_measure() {
        let d = scratch("plot-tick");
        let tick = d.join("tick.csv");
        let e = failure(cmd_plot(&plot_args(
            &tick,
            &d.join("t.svg"),
            Some(MeasureArg::Ioctl),
        )));
        assert!(e.contains("no --measure ioctl"), "{e}");
        assert!(!d.join("t.svg").exists());
        cmd_plot(&plot_args(
            &tick,
            &d.join("t.svg"),
            Some(MeasureArg::Kernel),
        ))
        .unwrap();
        assert!(d.join("t.svg").exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn plot_refuses_a_chart_with_no_measured_point() {
        let d = scratch("plot-blank");
        let fig9 = fs::read_to_string(d.join("fig9.csv")).unwrap();
        let mut lines = fig9.lines();
        let header = lines.next().unwrap();
        // The ioctl rows alone: the kernel figure would be blank; an error row alone, both.
        let ioctl: Vec<&str> = lines.filter(|l| l.contains(",ioctl,")).collect();
        assert!(!ioctl.is_empty());
        let cases = [
            (
                "ioctl.csv",
                format!("{header}\n{}\n", ioctl.join("\n")),
                None,
                "kernel",
            ),
            (
                "error.csv",
                format!("{header}\nscheme6-setcallout,setcallout,kernel,1000,,0,error: x,0,,\n"),
                Some(MeasureArg::Kernel),
                "kernel",
            ),
        ];
        for (name, text, measure, blank) in cases {
            let csv = d.join(name);
            fs::write(&csv, text).unwrap();
            let svg = d.join(format!("{name}.svg"));
            let e = failure(cmd_plot(&plot_args(&csv, &svg, measure)));
            assert!(
                e.contains(&format!("no measured point of measure {blank}")),
                "{e}"
            );
            assert!(
                !svg.exists() && !ioctl_sibling(&svg).exists(),
                "nothing written"
            );
        }
        // The ioctl figure of the ioctl rows has points.
        let csv = d.join("ioctl.csv");
        cmd_plot(&plot_args(&csv, &d.join("i.svg"), Some(MeasureArg::Ioctl))).unwrap();
        let tick = d.join("tick-error.csv");
        fs::write(
            &tick,
            "curve,n,ns_per_tick,ticks,note,repeat\nscheme6,1000,,0,error: x,0\n",
        )
        .unwrap();
        let e = failure(cmd_plot(&plot_args(&tick, &d.join("t.svg"), None)));
        assert!(e.contains("no measured point"), "{e}");
        assert!(!d.join("t.svg").exists());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn summary_takes_a_wakeups_csv_without_rows() {
        let d = scratch("summary-wakeups");
        let empty = d.join("w.csv");
        fs::write(
            &empty,
            "scheme,clock,load,callouts,seconds,wakeups,wakeups_per_s,ticks,skipped,note\n",
        )
        .unwrap();
        // As the command line gives it.
        let line = format!(
            "summary --csv {} --wakeups {}",
            d.join("fig9.csv").display(),
            empty.display()
        );
        let Ok(Command::Summary(a)) = p(&line) else {
            panic!("{line}")
        };
        cmd_summary(&a).unwrap();
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_csv_that_cannot_be_written_is_found_before_the_work() {
        let d = scratch("writable");
        assert!(output::check_writable(&d.join("w.csv")).is_ok());
        assert!(!d.join("w.csv").exists(), "nothing left behind");
        assert!(output::check_writable(&d).is_err());
        assert!(output::check_writable(&d.join("missing/w.csv")).is_err());
        assert_eq!(fs::read_dir(&d).unwrap().count(), 2, "only the copied CSVs");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn results_show_the_command_line_but_its_output_directory() {
        let args = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        assert_eq!(
            command_line(args("run --quick --out /tmp/x --budget-ms 10000").into_iter()),
            "run --quick --budget-ms 10000"
        );
        assert_eq!(command_line(args("run --out=/tmp/x").into_iter()), "run");
    }

    #[test]
    fn help_everywhere() {
        use clap::error::ErrorKind;
        assert_eq!(
            p("").unwrap_err().kind(),
            ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
        );
        for line in [
            "--help",
            "run --help",
            "plot -h",
            "summary --help",
            "wakeups --help",
            "selfcheck --help",
        ] {
            assert_eq!(
                p(line).unwrap_err().kind(),
                ErrorKind::DisplayHelp,
                "{line}"
            );
        }
        let help = Cli::command().render_long_help().to_string();
        for sub in ["run", "plot", "summary", "wakeups", "selfcheck"] {
            assert!(help.contains(sub), "{help}");
        }
        let mut cmd = Cli::command();
        let run = cmd
            .find_subcommand_mut("run")
            .unwrap()
            .render_long_help()
            .to_string();
        for flag in [
            "--quick",
            "--budget-ms",
            "--max-n",
            "--curves",
            "--repeats",
            "--wakeup-ms",
        ] {
            assert!(run.contains(flag), "{run}");
        }
        assert!(run.contains("fig9-ioctl.svg"));
        assert!(CURVES.iter().all(|c| run.contains(c.name)), "{run}");
    }

    #[test]
    fn plot_summary_selfcheck() {
        let Ok(Command::Plot(a)) =
            p("plot --csv r/fig9.csv --svg r/f.svg --title=T --measure ioctl")
        else {
            panic!()
        };
        assert_eq!((a.csv, a.svg), ("r/fig9.csv".into(), "r/f.svg".into()));
        assert_eq!(
            (a.title.as_deref(), a.measure),
            (Some("T"), Some(MeasureArg::Ioctl))
        );
        let Ok(Command::Summary(a)) = p("summary --csv f.csv --small 100 --large 1e5") else {
            panic!()
        };
        assert_eq!(
            (a.measure, a.small_n, a.large_n),
            (MeasureArg::Kernel, 100, 100_000)
        );
        let Ok(Command::Selfcheck(a)) = p("selfcheck --device /dev/tw1") else {
            panic!()
        };
        assert_eq!(a.device, "/dev/tw1");
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("1000000"), Ok(1_000_000));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert_eq!(parse_count("3e5"), Ok(300_000));
        assert!(parse_count("1e30").is_err());
        assert!(parse_count("-1").is_err());
        assert!(parse_count("x").is_err());
    }

    #[test]
    fn the_ioctl_figure_sits_beside_the_kernel_one() {
        assert_eq!(
            ioctl_sibling(Path::new("results/fig9/fig9.svg")),
            PathBuf::from("results/fig9/fig9-ioctl.svg")
        );
        assert_eq!(ioctl_sibling(Path::new("f")), PathBuf::from("f-ioctl.svg"));
    }

    #[test]
    fn plot_and_summary_read_the_published_files() {
        let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../doc");
        let out = std::env::temp_dir().join(format!("fig9-test-{}", std::process::id()));
        fs::create_dir_all(&out).unwrap();
        let svg = out.join("fig9.svg");
        let plot = |csv: &str, svg: &Path| {
            cmd_plot(&PlotArgs {
                csv: doc.join(csv),
                svg: svg.to_path_buf(),
                title: None,
                measure: None,
            })
        };
        plot("fig9.csv", &svg).unwrap();
        assert!(fs::read_to_string(out.join("fig9-ioctl.svg"))
            .unwrap()
            .contains("<polyline"));
        plot("tick.csv", &out.join("tick.svg")).unwrap();
        assert!(fs::read_to_string(out.join("tick.svg"))
            .unwrap()
            .contains("scheme6-turnover"));
        let summary = |small_n, large_n| {
            cmd_summary(&SummaryArgs {
                csv: doc.join("fig9.csv"),
                measure: MeasureArg::Kernel,
                small_n,
                large_n,
                wakeups: None,
            })
        };
        summary(1000, 1_000_000).unwrap();
        // An n the sweep did not reach: an error, not a summary of n/a.
        let e = failure(summary(1000, 2_000_000));
        assert!(
            e.contains("no point of measure kernel at n = 2000000 (its n: [0, 1, 10, "),
            "{e}"
        );
        assert!(failure(summary(7, 1_000_000)).contains("at n = 7 "));
        fs::remove_dir_all(&out).unwrap();
    }
}
