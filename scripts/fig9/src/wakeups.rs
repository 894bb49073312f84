// SPDX-License-Identifier: GPL-2.0

//! Wakeups per second of instances on the real clock: what a timer facility costs a machine
//! that has nothing to do. The paper's tick runs every period (TW_CONFIG_PERIODIC); a tickless
//! instance arms its hrtimer only for the next tick with work, and not at all while nothing is
//! outstanding.
//!
//! For schemes 6 and 7, each clock mode, and three loads (idle; one callout 10 s away; 1000
//! callouts 10 ms apart from 10 s on), an instance is configured and loaded, then
//! `tw_stats.wakeups` (hrtimer callbacks run) is read before and after a wall-clock interval.
//! All twelve instances are measured over the same interval, side by side: each counts only
//! its own wakeups. Nothing falls due within the interval (at most 9 s).

use crate::device::Device;
use crate::device::Instance;
use crate::records::WakeupRow;
use crate::run::run_ops;
use crate::uapi_defs::*;
use std::io;
use std::time::Duration;
use std::time::Instant;

/// Ticks of 1 ms (TW_DEFAULT_TICK_NS) to the first callout of a loaded instance: 10 s.
const FIRST_DUE: u64 = 10_000;
/// The "many" load: this many callouts, `MANY_GAP` ticks apart from FIRST_DUE on.
const MANY: u64 = 1000;
const MANY_GAP: u64 = 10;
/// The longest interval that ends before the first callout falls due, in ms.
pub const MAX_INTERVAL_MS: u64 = 9000;
/// The same as a duration.
pub const MAX_INTERVAL: Duration = Duration::from_millis(MAX_INTERVAL_MS);

const _: () = assert!(
    TW_DEFAULT_TICK_NS == 1_000_000,
    "FIRST_DUE is 10 s of 1 ms ticks"
);

/// One instance of the measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Case {
    pub scheme: u32,
    pub periodic: bool,
    /// Callouts outstanding: 0, 1 or MANY.
    pub callouts: u64,
}

impl Case {
    pub fn clock(&self) -> &'static str {
        if self.periodic {
            "periodic"
        } else {
            "tickless"
        }
    }

    pub fn load(&self) -> &'static str {
        match self.callouts {
            0 => "idle",
            1 => "one",
            _ => "many",
        }
    }

    fn config(&self) -> tw_config {
        tw_config {
            scheme: self.scheme,
            clock: TW_CLOCK_REAL,
            capacity: 2 * MANY as u32,
            flags: if self.periodic { TW_CONFIG_PERIODIC } else { 0 },
            ..tw_config::default()
        }
    }

    /// The callouts of this load, as batch ops.
    fn ops(&self) -> Vec<tw_op> {
        (0..self.callouts)
            .map(|i| tw_op {
                op: TW_OP_SET,
                a: FIRST_DUE + i * MANY_GAP,
                b: i,
                ..tw_op::default()
            })
            .collect()
    }
}

/// Every case, in table order.
pub fn cases() -> Vec<Case> {
    let mut v = Vec::new();
    for scheme in [TW_SCHEME_HASHED_UNSORTED, TW_SCHEME_HIERARCHICAL] {
        for periodic in [true, false] {
            for callouts in [0, 1, MANY] {
                v.push(Case {
                    scheme,
                    periodic,
                    callouts,
                });
            }
        }
    }
    v
}

/// An instance of `case`, configured and loaded.
fn open(path: &str, case: &Case) -> io::Result<Device> {
    let dev = Device::open(path)?;
    dev.configure(&case.config())?;
    let mut ops = case.ops();
    if !ops.is_empty() {
        run_ops(&dev, &mut ops, "load")?;
    }
    Ok(dev)
}

/// Measures every case over one `interval` of wall-clock time; a progress line per case.
pub fn measure(path: &str, interval: Duration) -> Result<Vec<WakeupRow>, String> {
    let interval = interval.min(MAX_INTERVAL);
    let dev = Device::open(path).map_err(|e| format!("{path}: {e}"))?;
    let info = dev.info().map_err(|e| format!("TW_IOC_INFO: {e}"))?;
    drop(dev);
    let tickless = info.features & TW_FEATURE_TICKLESS != 0;
    let mut open_cases = Vec::new();
    let mut rows = Vec::new();
    for case in cases() {
        let row = WakeupRow {
            scheme: case.scheme,
            clock: case.clock().into(),
            load: case.load().into(),
            callouts: case.callouts,
            ..WakeupRow::default()
        };
        match open(path, &case) {
            Ok(dev) => open_cases.push((row, dev)),
            Err(e) => rows.push(WakeupRow {
                note: format!("error: {e}"),
                ..row
            }),
        }
    }
    let before: Vec<io::Result<tw_stats>> = open_cases.iter().map(|(_, d)| d.stats()).collect();
    let t0 = Instant::now();
    std::thread::sleep(interval);
    let seconds = t0.elapsed().as_secs_f64();
    for ((row, dev), s0) in open_cases.into_iter().zip(before) {
        let row = match (s0, dev.stats()) {
            (Ok(a), Ok(b)) => rate(row, &a, &b, seconds, tickless),
            (Err(e), _) | (_, Err(e)) => WakeupRow {
                note: format!("error: TW_IOC_STATS: {e}"),
                ..row
            },
        };
        say!(
            "fig9: wakeups scheme {} {} {}: {} in {:.2} s",
            row.scheme,
            row.clock,
            row.load,
            row.wakeups,
            row.seconds
        );
        rows.push(row);
    }
    Ok(rows)
}

/// The row of a case from its statistics before and after `seconds`.
fn rate(row: WakeupRow, a: &tw_stats, b: &tw_stats, seconds: f64, tickless: bool) -> WakeupRow {
    let wakeups = b.wakeups.saturating_sub(a.wakeups);
    let note = if row.clock == "tickless" && !tickless {
        "the module has no TW_FEATURE_TICKLESS".to_string()
    } else {
        String::new()
    };
    WakeupRow {
        seconds,
        wakeups,
        wakeups_per_s: (seconds > 0.0).then(|| wakeups as f64 / seconds),
        ticks: b.ticks.saturating_sub(a.ticks),
        skipped: b.skipped.saturating_sub(a.skipped),
        note,
        ..row
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_cases_each_due_after_the_interval() {
        let c = cases();
        assert_eq!(c.len(), 12);
        for case in &c {
            let last = case.ops().last().map_or(u64::MAX, |op| op.a);
            let first = case.ops().first().map_or(u64::MAX, |op| op.a);
            assert!(
                first as u128 * 1_000_000 > MAX_INTERVAL.as_nanos(),
                "{case:?}"
            );
            assert!(last >= first);
            assert_eq!(case.config().clock, TW_CLOCK_REAL);
            assert!(u64::from(case.config().capacity) >= case.callouts);
        }
        assert_eq!(c[0].load(), "idle");
        assert_eq!(c[0].clock(), "periodic");
        assert_eq!(c[0].config().flags, TW_CONFIG_PERIODIC);
        assert_eq!(c[5].clock(), "tickless");
        assert_eq!(c[5].load(), "many");
        assert_eq!(c[5].config().flags, 0);
    }

    #[test]
    fn the_rate_is_the_difference_over_the_interval() {
        let row = WakeupRow {
            clock: "tickless".into(),
            ..WakeupRow::default()
        };
        let a = tw_stats {
            wakeups: 10,
            ticks: 5,
            ..tw_stats::default()
        };
        let b = tw_stats {
            wakeups: 30,
            ticks: 9,
            skipped: 100,
            ..a
        };
        let r = rate(row.clone(), &a, &b, 2.0, true);
        assert_eq!((r.wakeups, r.wakeups_per_s, r.ticks), (20, Some(10.0), 4));
        assert_eq!(r.skipped, 100);
        assert!(r.note.is_empty());
        assert!(rate(row, &a, &b, 2.0, false).note.contains("TICKLESS"));
    }
}
