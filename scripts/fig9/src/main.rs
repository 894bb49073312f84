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

mod device;
#[cfg(test)]
mod fake;
mod measure;
mod method;
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

use clap::Args;
use clap::Parser;
use clap::Subcommand;
use clap::ValueEnum;
use device::Instance as _;
use method::Curve;
use method::CURVES;
use records::Row;
use records::TickRow;
use records::WakeupRow;
use std::fs;
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
    /// fig9-ioctl.svg, tick.svg.
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
    /// flatness over the repeats `fig9 run` measured back to back at the two n (paired_n).
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
    /// Time budget of one point's repeats of one measure; an O(n) curve stops past it (the
    /// curves of schemes 6, 7 and Linux are still measured at n = 1e3 and 1e6) [default: 2000,
    /// 500 with --quick].
    #[arg(long, value_name = "MS")]
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
    /// Wall-clock interval of the wakeups measure; 0 skips it [default: 2000, 500 with
    /// --quick; at most 9000].
    #[arg(long, value_name = "MS")]
    wakeup_ms: Option<u64>,
}

#[derive(Debug, Args)]
struct PlotArgs {
    /// fig9.csv or tick.csv.
    #[arg(long, value_name = "FILE")]
    csv: PathBuf,
    /// The SVG to write.
    #[arg(long, value_name = "OUT")]
    svg: PathBuf,
    /// The chart's title.
    #[arg(long, value_name = "T")]
    title: Option<String>,
    /// Draw only this measure.
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
    /// The small n.
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
    #[arg(long, value_name = "MS", default_value_t = 2000, value_parser = clap::value_parser!(u64).range(1..=9000))]
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

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Run(a) => cmd_run(&a),
        Command::Plot(a) => cmd_plot(&a).map(|_| ExitCode::SUCCESS),
        Command::Summary(a) => cmd_summary(&a).map(|_| ExitCode::SUCCESS),
        Command::Wakeups(a) => cmd_wakeups(&a).map(|_| ExitCode::SUCCESS),
        Command::Selfcheck(a) => cmd_selfcheck(&a.device).map(|_| ExitCode::SUCCESS),
    };
    result.unwrap_or_else(|e| {
        eprintln!("fig9: {e}");
        ExitCode::FAILURE
    })
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    eprintln!("fig9: wrote {}", path.display());
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

/// Draws the fig9 figures: `measure` to `svg`, or both measures (kernel to `svg`).
fn draw_fig9(rows: &[Row], svg: &Path, title: &str, measure: Option<&str>) -> Result<(), String> {
    let jobs: Vec<(&str, PathBuf)> = match measure {
        Some(m) => vec![(m, svg.to_path_buf())],
        None => vec![("kernel", svg.to_path_buf()), ("ioctl", ioctl_sibling(svg))],
    };
    for (m, path) in jobs {
        write(
            &path,
            &plot::render_svg(&plot::fig9_figure(rows, m, title))?,
        )?;
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
                self.curves.clone()
            },
        }
    }

    fn wakeup_interval(&self) -> Duration {
        let ms = self
            .wakeup_ms
            .unwrap_or(if self.quick { 500 } else { 2000 });
        Duration::from_millis(ms).min(wakeups::MAX_INTERVAL)
    }
}

fn cmd_run(a: &RunArgs) -> Result<ExitCode, String> {
    fs::create_dir_all(&a.out).map_err(|e| format!("{}: {e}", a.out.display()))?;
    let setup = a.setup();
    let res = run::run(&setup, &device::Device::opener(&setup.device))?;
    let interval = a.wakeup_interval();
    let mut wake = Vec::new();
    let mut errors = res.errors;
    if !interval.is_zero() {
        match wakeups::measure(&setup.device, interval) {
            Ok(rows) => wake = rows,
            Err(e) => {
                eprintln!("fig9: wakeups: {e}");
                errors += 1;
            }
        }
        errors += wake.iter().filter(|r| r.note.starts_with("error")).count();
    }
    let text = format!(
        "Run: `fig9 run{}` — n up to {}, {} repeats, budget {} ms per point, slots {} (schemes \
         5, 6), seed {}, device {}.",
        if setup.quick { " --quick" } else { "" },
        setup.max_n,
        setup.repeats,
        setup.budget.as_millis(),
        setup.slots,
        setup.seed,
        setup.device
    );
    write_csv(&a.out.join("fig9.csv"), &res.fig9)?;
    write_csv(&a.out.join("tick.csv"), &res.tick)?;
    write_csv(&a.out.join("memory.csv"), &res.memory)?;
    write_csv(&a.out.join("wakeups.csv"), &wake)?;
    write(
        &a.out.join("results.md"),
        &report::results_md(&res, &wake, &text),
    )?;
    draw_fig9(&res.fig9, &a.out.join("fig9.svg"), FIG9_TITLE, None)?;
    let tick = plot::tick_figure(&res.tick, TICK_TITLE);
    write(&a.out.join("tick.svg"), &plot::render_svg(&tick)?)?;
    if errors > 0 {
        eprintln!("fig9: {errors} error(s), see results.md");
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_plot(a: &PlotArgs) -> Result<(), String> {
    let text = fs::read_to_string(&a.csv).map_err(|e| format!("{}: {e}", a.csv.display()))?;
    let columns = records::header(&text).map_err(|e| format!("{}: {e}", a.csv.display()))?;
    let context = |e: String| format!("{}: {e}", a.csv.display());
    if columns.iter().any(|c| c == "ns_per_tick") {
        let rows: Vec<TickRow> = records::parse(&text).map_err(context)?;
        let title = a.title.as_deref().unwrap_or(TICK_TITLE);
        return write(&a.svg, &plot::render_svg(&plot::tick_figure(&rows, title))?);
    }
    let rows: Vec<Row> = records::parse(&text).map_err(context)?;
    let title = a.title.as_deref().unwrap_or(FIG9_TITLE);
    draw_fig9(&rows, &a.svg, title, a.measure.map(MeasureArg::name))
}

fn cmd_summary(a: &SummaryArgs) -> Result<(), String> {
    let rows: Vec<Row> = records::read(&a.csv)?;
    let s = summary::summarize(&rows, a.measure.name(), a.small_n, a.large_n);
    print!("{}", summary::render(&s));
    let beside = a.csv.with_file_name("wakeups.csv");
    let wakeups = match &a.wakeups {
        Some(p) => Some(p.clone()),
        None => beside.exists().then_some(beside),
    };
    if let Some(path) = wakeups {
        let rows: Vec<WakeupRow> = records::read(&path)?;
        print!("{}", summary::render_wakeups(&rows));
    }
    Ok(())
}

fn cmd_wakeups(a: &WakeupArgs) -> Result<(), String> {
    let rows = wakeups::measure(&a.device, Duration::from_millis(a.ms))?;
    print!("{}", report::wakeup_table(&rows));
    if let Some(path) = &a.csv {
        write_csv(path, &rows)?;
    }
    match rows.iter().find(|r| r.note.starts_with("error")) {
        Some(r) => Err(format!(
            "scheme {} {} {}: {}",
            r.scheme, r.clock, r.load, r.note
        )),
        None => Ok(()),
    }
}

fn cmd_selfcheck(path: &str) -> Result<(), String> {
    let dev = device::Device::open(path).map_err(|e| format!("{path}: {e}"))?;
    let info = dev.info().map_err(|e| format!("TW_IOC_INFO: {e}"))?;
    let schemes: Vec<String> = (1..32)
        .filter(|s| info.schemes & (1 << s) != 0)
        .map(|s: u32| s.to_string())
        .collect();
    println!("device     {path}");
    println!(
        "version    {} (this tool: {})",
        info.version,
        uapi_defs::TW_VERSION
    );
    println!(
        "schemes    {} (mask {:#x})",
        schemes.join(" "),
        info.schemes
    );
    println!("features   {:#x}", info.features);
    println!("hold_work  {}", info.hold_work);
    println!(
        "tick       {} us (the real clock's default period: tick_us)",
        info.tick_ns / 1000
    );
    println!("instances  {}", info.instances);
    println!("uptime     {:.1} s", info.uptime_ns as f64 / 1e9);
    for (_, ty, size) in run::linux_sizes(&info) {
        let name = ty.trim_start_matches("struct ");
        println!("{name:<10} {size} bytes (sizeof({ty}) in the running kernel)");
    }
    if info.version != uapi_defs::TW_VERSION {
        return Err("version mismatch".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn p(line: &str) -> Result<Command, clap::Error> {
        Cli::try_parse_from(std::iter::once("fig9").chain(line.split_whitespace()))
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
        cmd_summary(&SummaryArgs {
            csv: doc.join("fig9.csv"),
            measure: MeasureArg::Kernel,
            small_n: 1000,
            large_n: 1_000_000,
            wakeups: None,
        })
        .unwrap();
        fs::remove_dir_all(&out).unwrap();
    }
}
