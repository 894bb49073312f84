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
//! | (the paper's scheme 7, not in Fig. 9)   | `scheme7-*`           | scheme 7, both          |
//! | (schemes 1, 3, 4, 5)                    | `schemeN-setcallout`  | scheme N, SETCALLOUT    |
//! | (today's kernel)                        | `linux-timer_list`, `linux-hrtimer` | in-kernel |
//!
//! "Outstanding timers" are n callouts set with TW_IOC_BATCH on a manual-clock instance, so
//! nothing fires; "far in the future" is `[2^19, 2^20)` ticks and the reset goes to
//! `[2^20, 2^21)`. Each reset is measured twice: inside the kernel (TW_IOC_BENCH, the main
//! figure: the data structure's cost, as the paper's kernels measured it) and from userspace
//! (two ioctls per reset: what a process pays). Also measured: the per-tick bookkeeping of
//! schemes 6 and 7 against n, and memory per callout.
//!
//! Modules: [`uapi`] mirrors the header, [`device`] wraps the ioctls (the only `unsafe`),
//! [`method`] holds the experiment's constants and curves, [`measure`] picks iteration counts,
//! [`run`] drives the sweep, [`csv`], [`report`], [`plot`] and [`summary`] turn rows into files.

mod args;
mod csv;
mod device;
mod measure;
mod method;
mod plot;
mod report;
mod run;
mod summary;
#[allow(dead_code)] // Mirrors the header in full, used or not.
mod uapi;

use args::Command;
use args::PlotOpts;
use args::RunOpts;
use args::SummaryOpts;
use std::fs;
use std::path::Path;
use std::path::PathBuf;
use std::process::ExitCode;

const FIG9_TITLE: &str = "Figure 9: callout reset cost vs outstanding callouts";
const TICK_TITLE: &str = "Per-tick bookkeeping vs outstanding callouts";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cmd = match args::parse(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("fig9: {e}\n(see fig9 --help)");
            return ExitCode::from(2);
        }
    };
    let result = match cmd {
        Command::Help(text) => {
            print!("{text}");
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(o) => cmd_run(&o),
        Command::Plot(o) => cmd_plot(&o).map(|_| ExitCode::SUCCESS),
        Command::Summary(o) => cmd_summary(&o).map(|_| ExitCode::SUCCESS),
        Command::Selfcheck { device } => cmd_selfcheck(&device).map(|_| ExitCode::SUCCESS),
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

fn read(path: &Path) -> Result<String, String> {
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
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
fn draw_fig9(
    rows: &[csv::Row],
    svg: &Path,
    title: &str,
    measure: Option<&str>,
) -> Result<(), String> {
    let jobs: Vec<(&str, PathBuf)> = match measure {
        Some(m) => vec![(m, svg.to_path_buf())],
        None => vec![("kernel", svg.to_path_buf()), ("ioctl", ioctl_sibling(svg))],
    };
    for (m, path) in jobs {
        write(&path, &plot::render_svg(&plot::fig9_figure(rows, m, title)))?;
    }
    Ok(())
}

fn cmd_run(o: &RunOpts) -> Result<ExitCode, String> {
    fs::create_dir_all(&o.out).map_err(|e| format!("{}: {e}", o.out.display()))?;
    let res = run::run(o)?;
    let setup = format!(
        "Run: `fig9 run{}` — n up to {}, budget {} ms per point, slots {} (schemes 5, 6), \
         seed {}, device {}.",
        if o.quick { " --quick" } else { "" },
        o.max_n,
        o.budget.as_millis(),
        o.slots,
        o.seed,
        o.device
    );
    write(&o.out.join("fig9.csv"), &csv::render_rows(&res.fig9))?;
    write(&o.out.join("tick.csv"), &csv::render_rows(&res.tick))?;
    write(&o.out.join("memory.csv"), &csv::render_rows(&res.memory))?;
    write(&o.out.join("results.md"), &report::results_md(&res, &setup))?;
    draw_fig9(&res.fig9, &o.out.join("fig9.svg"), FIG9_TITLE, None)?;
    let tick = plot::tick_figure(&res.tick, TICK_TITLE);
    write(&o.out.join("tick.svg"), &plot::render_svg(&tick))?;
    if res.errors > 0 {
        eprintln!("fig9: {} error(s), see results.md", res.errors);
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn cmd_plot(o: &PlotOpts) -> Result<(), String> {
    let table = csv::parse(&read(&o.csv)?)?;
    if table.is(&csv::TICK_HEADER) {
        let rows = csv::tick_rows(&table)?;
        let title = o.title.as_deref().unwrap_or(TICK_TITLE);
        return write(&o.svg, &plot::render_svg(&plot::tick_figure(&rows, title)));
    }
    let rows = csv::fig9_rows(&table)?;
    let title = o.title.as_deref().unwrap_or(FIG9_TITLE);
    draw_fig9(&rows, &o.svg, title, o.measure.as_deref())
}

fn cmd_summary(o: &SummaryOpts) -> Result<(), String> {
    let rows = csv::fig9_rows(&csv::parse(&read(&o.csv)?)?)?;
    let s = summary::summarize(&rows, &o.measure, o.small_n, o.large_n);
    print!("{}", summary::render(&s));
    Ok(())
}

fn cmd_selfcheck(path: &str) -> Result<(), String> {
    let dev = device::Device::open(path).map_err(|e| format!("{path}: {e}"))?;
    let info = dev.info().map_err(|e| format!("TW_IOC_INFO: {e}"))?;
    let schemes: Vec<String> = (1..32)
        .filter(|s| info.schemes & (1 << s) != 0)
        .map(|s: u32| s.to_string())
        .collect();
    println!("device    {path}");
    println!(
        "version   {} (this tool: {})",
        info.version,
        uapi::TW_VERSION
    );
    println!("schemes   {} (mask {:#x})", schemes.join(" "), info.schemes);
    println!("tick_ns   {}", info.tick_ns);
    println!("ticks     {}", info.ticks);
    if info.version != uapi::TW_VERSION {
        return Err("version mismatch".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ioctl_figure_sits_beside_the_kernel_one() {
        assert_eq!(
            ioctl_sibling(Path::new("results/fig9/fig9.svg")),
            PathBuf::from("results/fig9/fig9-ioctl.svg")
        );
        assert_eq!(ioctl_sibling(Path::new("f")), PathBuf::from("f-ioctl.svg"));
    }
}
