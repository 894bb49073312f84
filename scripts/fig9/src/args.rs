// SPDX-License-Identifier: GPL-2.0

//! The command line, parsed by hand: `fig9 SUBCOMMAND [OPTIONS]`. Options take their value as
//! the next argument or after `=` (`--out DIR`, `--out=DIR`).

use crate::method::Curve;
use crate::method::CURVES;
use crate::uapi::TW_DEVICE;
use crate::uapi::TW_MAX_CAPACITY;
use crate::uapi::TW_MAX_SLOTS;
use std::path::PathBuf;
use std::time::Duration;

pub const USAGE: &str = "\
usage: fig9 COMMAND [OPTIONS]

Figure 9 of Varghese & Lauck (section VII) on /dev/timerwheel: the cost of resetting one
callout (cancel + start) against the number n of other callouts outstanding, for each scheme,
both interfaces, and the Linux kernel's timer_list and hrtimer.

commands:
  run        the sweep (inside a guest with the module loaded); writes CSV, markdown, SVG
  plot       draw an SVG from fig9.csv (or tick.csv)
  summary    the ratios and the baseline's slope from fig9.csv
  selfcheck  open the device and print TW_IOC_INFO

`fig9 COMMAND --help` describes each.
";

pub const RUN_USAGE: &str = "\
usage: fig9 run [--quick] [--out DIR] [--budget-ms MS] [--max-n N] [--device PATH]
                [--slots M] [--seed S] [--curves LIST]

The sweep. For each curve and n: a fresh instance (manual clock: nothing fires) with n
callouts at random in [2^19, 2^20) ticks, set with TW_IOC_BATCH; then one more callout reset
again and again to a random time in [2^20, 2^21), timed two ways:
  ioctl   from userspace, one cancel ioctl + one start ioctl per reset
  kernel  TW_IOC_BENCH, the same loop timed inside the kernel
Also ns per tick (TW_BENCH_TICK) for schemes 6 and 7, and bytes per callout (TW_IOC_STATS).

options:
  --quick          n in 0, 10, 100, 1000, 10000 and short runs
  --out DIR        output directory (default results/fig9)
  --budget-ms MS   time budget of one point's measurements; a curve stops past it
                   (default 2000, 500 with --quick)
  --max-n N        largest n (default 1000000, 10000 with --quick)
  --device PATH    the device (default /dev/timerwheel)
  --slots M        wheel size of schemes 5 and 6, a power of two (default 4096)
  --seed S         seed of the random times (default 1)
  --curves LIST    comma-separated curve names (default: all)
  -h, --help       this text

writes DIR/fig9.csv, tick.csv, memory.csv, results.md, fig9.svg, fig9-ioctl.svg, tick.svg.
";

pub const PLOT_USAGE: &str = "\
usage: fig9 plot --csv FILE --svg OUT [--title T] [--measure kernel|ioctl]

Draws a log-log SVG. With fig9.csv: by default both measures, kernel to OUT and ioctl to
OUT with '-ioctl' before the extension; --measure draws just that one to OUT. With tick.csv
(recognised by its header): the per-tick cost to OUT.

options:
  --csv FILE       fig9.csv or tick.csv
  --svg OUT        the SVG to write
  --title T        the chart's title
  --measure M      kernel or ioctl
  -h, --help       this text
";

pub const SUMMARY_USAGE: &str = "\
usage: fig9 summary --csv FILE [--measure kernel|ioctl] [--small N] [--large N]

Prints, from fig9.csv: the flatness of schemes 6 and 7 (cost at n=large / cost at n=small),
scheme 7 against linux-timer_list and linux-hrtimer at both n, and the log-log slope of the
traditional BSD list over its points with n >= 100.

options:
  --csv FILE       fig9.csv
  --measure M      kernel (default) or ioctl
  --small N        the small n (default 1000)
  --large N        the large n (default 1000000)
  -h, --help       this text
";

pub const SELFCHECK_USAGE: &str = "\
usage: fig9 selfcheck [--device PATH]

Opens the device and prints TW_IOC_INFO: version, schemes, heartbeat. Nothing else.
";

#[derive(Clone, Debug, PartialEq)]
pub struct RunOpts {
    pub quick: bool,
    pub out: PathBuf,
    pub budget: Duration,
    pub max_n: u64,
    pub device: String,
    pub slots: u32,
    pub seed: u64,
    pub curves: Vec<Curve>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlotOpts {
    pub csv: PathBuf,
    pub svg: PathBuf,
    pub title: Option<String>,
    pub measure: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SummaryOpts {
    pub csv: PathBuf,
    pub measure: String,
    pub small_n: u64,
    pub large_n: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Command {
    Help(&'static str),
    Run(RunOpts),
    Plot(PlotOpts),
    Summary(SummaryOpts),
    Selfcheck { device: String },
}

/// Walks the options of one command.
struct Options<'a> {
    args: std::slice::Iter<'a, String>,
    /// The value of the last `--flag=value`.
    inline: Option<String>,
}

impl<'a> Options<'a> {
    fn new(args: &'a [String]) -> Options<'a> {
        Options {
            args: args.iter(),
            inline: None,
        }
    }

    /// The next option's name.
    fn next_flag(&mut self) -> Result<Option<String>, String> {
        if let Some(v) = self.inline.take() {
            return Err(format!("unexpected value '{v}'"));
        }
        let Some(arg) = self.args.next().cloned() else {
            return Ok(None);
        };
        if !arg.starts_with('-') {
            return Err(format!("unexpected argument '{arg}'"));
        }
        match arg.split_once('=') {
            Some((flag, v)) if arg.starts_with("--") => {
                self.inline = Some(v.to_string());
                Ok(Some(flag.to_string()))
            }
            _ => Ok(Some(arg)),
        }
    }

    /// The value of `flag`.
    fn value(&mut self, flag: &str) -> Result<String, String> {
        self.inline
            .take()
            .or_else(|| self.args.next().cloned())
            .ok_or(format!("{flag} needs a value"))
    }

    fn number(&mut self, flag: &str) -> Result<u64, String> {
        let v = self.value(flag)?;
        parse_number(&v).ok_or(format!("{flag}: '{v}' is not a number"))
    }
}

/// A count, also written as 1e6 or with underscores.
pub fn parse_number(s: &str) -> Option<u64> {
    let s = s.replace('_', "");
    if let Ok(v) = s.parse::<u64>() {
        return Some(v);
    }
    let (m, e) = s.split_once(['e', 'E'])?;
    let m: u64 = m.parse().ok()?;
    let e: u32 = e.parse().ok()?;
    m.checked_mul(10u64.checked_pow(e)?)
}

fn is_help(flag: &str) -> bool {
    flag == "-h" || flag == "--help"
}

/// Parses the whole command line (without the program name).
pub fn parse(args: &[String]) -> Result<Command, String> {
    let Some((cmd, rest)) = args.split_first() else {
        return Ok(Command::Help(USAGE));
    };
    match cmd.as_str() {
        "-h" | "--help" | "help" => Ok(Command::Help(USAGE)),
        "run" => parse_run(rest),
        "plot" => parse_plot(rest),
        "summary" => parse_summary(rest),
        "selfcheck" => parse_selfcheck(rest),
        _ => Err(format!("unknown command '{cmd}'")),
    }
}

fn parse_run(args: &[String]) -> Result<Command, String> {
    let mut o = Options::new(args);
    let mut quick = false;
    let (mut out, mut budget, mut max_n) = (None, None, None);
    let mut device = TW_DEVICE.to_string();
    let (mut slots, mut seed) = (4096u64, 1u64);
    let mut curves = CURVES.to_vec();
    while let Some(flag) = o.next_flag()? {
        match flag.as_str() {
            f if is_help(f) => return Ok(Command::Help(RUN_USAGE)),
            "--quick" => quick = true,
            "--out" => out = Some(PathBuf::from(o.value(&flag)?)),
            "--budget-ms" => budget = Some(o.number(&flag)?),
            "--max-n" => max_n = Some(o.number(&flag)?),
            "--device" => device = o.value(&flag)?,
            "--slots" => slots = o.number(&flag)?,
            "--seed" => seed = o.number(&flag)?,
            "--curves" => curves = parse_curves(&o.value(&flag)?)?,
            _ => return Err(format!("run: unknown option '{flag}'")),
        }
    }
    let max_n = max_n.unwrap_or(if quick { 10_000 } else { 1_000_000 });
    if max_n > (TW_MAX_CAPACITY as u64) - 1024 {
        return Err(format!("--max-n: {max_n} is beyond what an instance holds"));
    }
    if !slots.is_power_of_two() || slots > TW_MAX_SLOTS as u64 {
        return Err(format!("--slots: {slots} is not a power of two up to 2^24"));
    }
    let budget = budget.unwrap_or(if quick { 500 } else { 2000 });
    Ok(Command::Run(RunOpts {
        quick,
        out: out.unwrap_or_else(|| PathBuf::from("results/fig9")),
        budget: Duration::from_millis(budget),
        max_n,
        device,
        slots: slots as u32,
        seed,
        curves,
    }))
}

fn parse_curves(list: &str) -> Result<Vec<Curve>, String> {
    list.split(',')
        .map(|name| {
            Curve::by_name(name.trim()).ok_or_else(|| {
                let all: Vec<&str> = CURVES.iter().map(|c| c.name).collect();
                format!("unknown curve '{name}' (curves: {})", all.join(", "))
            })
        })
        .collect()
}

fn parse_measure(m: String) -> Result<String, String> {
    match m.as_str() {
        "kernel" | "ioctl" => Ok(m),
        _ => Err(format!("--measure: '{m}' is neither kernel nor ioctl")),
    }
}

fn parse_plot(args: &[String]) -> Result<Command, String> {
    let mut o = Options::new(args);
    let (mut csv, mut svg, mut title, mut measure) = (None, None, None, None);
    while let Some(flag) = o.next_flag()? {
        match flag.as_str() {
            f if is_help(f) => return Ok(Command::Help(PLOT_USAGE)),
            "--csv" => csv = Some(PathBuf::from(o.value(&flag)?)),
            "--svg" => svg = Some(PathBuf::from(o.value(&flag)?)),
            "--title" => title = Some(o.value(&flag)?),
            "--measure" => measure = Some(parse_measure(o.value(&flag)?)?),
            _ => return Err(format!("plot: unknown option '{flag}'")),
        }
    }
    Ok(Command::Plot(PlotOpts {
        csv: csv.ok_or("plot: --csv FILE is required")?,
        svg: svg.ok_or("plot: --svg OUT is required")?,
        title,
        measure,
    }))
}

fn parse_summary(args: &[String]) -> Result<Command, String> {
    let mut o = Options::new(args);
    let mut csv = None;
    let mut measure = "kernel".to_string();
    let (mut small_n, mut large_n) = (1000, 1_000_000);
    while let Some(flag) = o.next_flag()? {
        match flag.as_str() {
            f if is_help(f) => return Ok(Command::Help(SUMMARY_USAGE)),
            "--csv" => csv = Some(PathBuf::from(o.value(&flag)?)),
            "--measure" => measure = parse_measure(o.value(&flag)?)?,
            "--small" => small_n = o.number(&flag)?,
            "--large" => large_n = o.number(&flag)?,
            _ => return Err(format!("summary: unknown option '{flag}'")),
        }
    }
    Ok(Command::Summary(SummaryOpts {
        csv: csv.ok_or("summary: --csv FILE is required")?,
        measure,
        small_n,
        large_n,
    }))
}

fn parse_selfcheck(args: &[String]) -> Result<Command, String> {
    let mut o = Options::new(args);
    let mut device = TW_DEVICE.to_string();
    while let Some(flag) = o.next_flag()? {
        match flag.as_str() {
            f if is_help(f) => return Ok(Command::Help(SELFCHECK_USAGE)),
            "--device" => device = o.value(&flag)?,
            _ => return Err(format!("selfcheck: unknown option '{flag}'")),
        }
    }
    Ok(Command::Selfcheck { device })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(line: &str) -> Result<Command, String> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        parse(&args)
    }

    fn run(line: &str) -> RunOpts {
        match p(line) {
            Ok(Command::Run(r)) => r,
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn run_defaults() {
        let r = run("run");
        assert!(!r.quick);
        assert_eq!(r.out, PathBuf::from("results/fig9"));
        assert_eq!(r.budget, Duration::from_millis(2000));
        assert_eq!(r.max_n, 1_000_000);
        assert_eq!(r.device, "/dev/timerwheel");
        assert_eq!(r.slots, 4096);
        assert_eq!(r.curves.len(), CURVES.len());
    }

    #[test]
    fn run_quick_changes_the_defaults_but_not_what_is_given() {
        let r = run("run --quick");
        assert_eq!((r.max_n, r.budget.as_millis()), (10_000, 500));
        let r = run("run --quick --max-n 1e3 --budget-ms=50 --out /tmp/x --device /dev/null");
        assert_eq!((r.max_n, r.budget.as_millis()), (1000, 50));
        assert_eq!(r.out, PathBuf::from("/tmp/x"));
        assert_eq!(r.device, "/dev/null");
    }

    #[test]
    fn run_curves_and_slots() {
        let r = run("run --curves scheme6-setcallout,bsd-traditional --slots 256");
        let names: Vec<&str> = r.curves.iter().map(|c| c.name).collect();
        assert_eq!(names, ["scheme6-setcallout", "bsd-traditional"]);
        assert_eq!(r.slots, 256);
        assert!(p("run --curves nope")
            .unwrap_err()
            .contains("unknown curve 'nope'"));
        assert!(p("run --slots 1000").is_err());
        assert!(p("run --max-n 1e9").is_err());
    }

    #[test]
    fn errors_are_reported() {
        assert!(p("run --budget-ms").unwrap_err().contains("needs a value"));
        assert!(p("run --budget-ms soon")
            .unwrap_err()
            .contains("not a number"));
        assert!(p("run --frobnicate")
            .unwrap_err()
            .contains("unknown option"));
        assert!(p("run stray").unwrap_err().contains("unexpected argument"));
        assert!(p("run --quick=yes")
            .unwrap_err()
            .contains("unexpected value"));
        assert!(p("dance").unwrap_err().contains("unknown command"));
        assert!(p("plot --csv a.csv").unwrap_err().contains("--svg"));
        assert!(p("summary").unwrap_err().contains("--csv"));
        assert!(p("summary --csv a --measure wall").is_err());
    }

    #[test]
    fn help_everywhere() {
        assert_eq!(p(""), Ok(Command::Help(USAGE)));
        assert_eq!(p("--help"), Ok(Command::Help(USAGE)));
        assert_eq!(p("run --help"), Ok(Command::Help(RUN_USAGE)));
        assert_eq!(p("run --quick -h"), Ok(Command::Help(RUN_USAGE)));
        assert_eq!(p("plot --help"), Ok(Command::Help(PLOT_USAGE)));
        assert_eq!(p("summary --help"), Ok(Command::Help(SUMMARY_USAGE)));
        assert_eq!(p("selfcheck --help"), Ok(Command::Help(SELFCHECK_USAGE)));
    }

    #[test]
    fn plot_summary_selfcheck() {
        assert_eq!(
            p("plot --csv r/fig9.csv --svg r/f.svg --title=T --measure ioctl"),
            Ok(Command::Plot(PlotOpts {
                csv: "r/fig9.csv".into(),
                svg: "r/f.svg".into(),
                title: Some("T".into()),
                measure: Some("ioctl".into()),
            }))
        );
        assert_eq!(
            p("summary --csv f.csv --small 100 --large 1e5"),
            Ok(Command::Summary(SummaryOpts {
                csv: "f.csv".into(),
                measure: "kernel".into(),
                small_n: 100,
                large_n: 100_000,
            }))
        );
        assert_eq!(
            p("selfcheck --device /dev/tw1"),
            Ok(Command::Selfcheck {
                device: "/dev/tw1".into()
            })
        );
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("1000000"), Some(1_000_000));
        assert_eq!(parse_number("1_000"), Some(1000));
        assert_eq!(parse_number("3e5"), Some(300_000));
        assert_eq!(parse_number("1e30"), None);
        assert_eq!(parse_number("-1"), None);
        assert_eq!(parse_number("x"), None);
    }
}
