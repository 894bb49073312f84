// SPDX-License-Identifier: GPL-2.0

//! results.md: the run's numbers as markdown tables (n down, curves across), and its notes.

use crate::csv::MemoryRow;
use crate::csv::Row;
use crate::csv::TickRow;
use crate::csv::STOPPED;
use crate::method::FAR_HI;
use crate::method::FAR_LO;
use crate::method::RESET_MIN;
use crate::method::RESET_SPREAD;
use crate::run::Results;
use std::fmt::Write as _;

/// A cost in ns with three significant digits or so.
pub fn fmt_ns(v: f64) -> String {
    if v < 10.0 {
        format!("{v:.2}")
    } else if v < 100.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// Names in first-appearance order.
fn order<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for n in names {
        if !out.iter().any(|o| o == n) {
            out.push(n.into());
        }
    }
    out
}

/// A markdown table: one line per n, one column per curve.
fn table(cols: &[String], ns: &[u64], cell: impl Fn(&str, u64) -> String) -> String {
    let mut o = format!("| n | {} |\n", cols.join(" | "));
    let _ = writeln!(o, "|---:|{}", "---:|".repeat(cols.len()));
    for &n in ns {
        let cells: Vec<String> = cols.iter().map(|c| cell(c, n)).collect();
        let _ = writeln!(o, "| {n} | {} |", cells.join(" | "));
    }
    o
}

fn all_n(ns: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut v: Vec<u64> = ns.collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The cell of a fig9 row: its cost, or why it has none.
fn cell_of(r: Option<&Row>) -> String {
    match r {
        None => String::new(),
        Some(Row {
            ns_per_op: Some(v), ..
        }) => fmt_ns(*v),
        Some(r) if r.note == STOPPED => "stopped".into(),
        Some(r) => r.note.split(':').next().unwrap_or("").to_string(),
    }
}

/// The table of one measure.
pub fn fig9_table(rows: &[Row], measure: &str) -> String {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.measure == measure).collect();
    let cols = order(rows.iter().map(|r| r.curve.as_str()));
    let ns = all_n(rows.iter().map(|r| r.n));
    table(&cols, &ns, |c, n| {
        cell_of(rows.iter().copied().find(|r| r.curve == c && r.n == n))
    })
}

fn tick_table(rows: &[TickRow]) -> String {
    let cols = order(rows.iter().map(|r| r.curve.as_str()));
    let ns = all_n(rows.iter().map(|r| r.n));
    table(&cols, &ns, |c, n| {
        match rows.iter().find(|r| r.curve == c && r.n == n) {
            Some(TickRow {
                ns_per_tick: Some(v),
                ..
            }) => fmt_ns(*v),
            Some(r) => r.note.split(':').next().unwrap_or("").to_string(),
            None => String::new(),
        }
    })
}

fn memory_table(rows: &[MemoryRow]) -> String {
    let cols = order(rows.iter().map(|r| r.curve.as_str()));
    let ns = all_n(rows.iter().map(|r| r.n));
    table(&cols, &ns, |c, n| {
        rows.iter()
            .find(|r| r.curve == c && r.n == n)
            .map(|r| format!("{:.1}", r.bytes_per_callout()))
            .unwrap_or_default()
    })
}

/// The whole of results.md; `setup` describes the run (options, device).
pub fn results_md(r: &Results, setup: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Figure 9 on /dev/timerwheel\n");
    let _ = writeln!(
        o,
        "Method (Varghese & Lauck, section VII.A): n callouts at random times far in the future \
         ([{FAR_LO}, {FAR_HI}) ticks, manual clock: nothing fires), then one more callout reset \
         again and again to a random time farther than all of them ([{RESET_MIN}, {}) ticks). \
         A reset is a cancel plus a start: unsetcallout + setcallout, or untimeout + timeout. \
         Costs are mean ns per reset.\n",
        RESET_MIN + RESET_SPREAD
    );
    let _ = writeln!(o, "{setup}\n");
    let _ = writeln!(
        o,
        "## Reset cost, kernel measure (TW_IOC_BENCH, timed inside the kernel), ns\n"
    );
    o.push_str(&fig9_table(&r.fig9, "kernel"));
    let _ = writeln!(
        o,
        "\n## Reset cost, ioctl measure (userspace: two system calls per reset), ns\n"
    );
    o.push_str(&fig9_table(&r.fig9, "ioctl"));
    let _ = writeln!(
        o,
        "\n## Per-tick bookkeeping (TW_BENCH_TICK, nothing due), ns per tick\n"
    );
    o.push_str(&tick_table(&r.tick));
    let _ = writeln!(
        o,
        "\n## Memory: TW_IOC_STATS memory_bytes / capacity, bytes per callout\n"
    );
    o.push_str(&memory_table(&r.memory));
    let _ = writeln!(o, "\n## Notes\n");
    let _ = writeln!(
        o,
        "- n = 0 is in the tables and the CSV, but not in the figures (a log axis has no 0)."
    );
    let _ = writeln!(
        o,
        "- \"stopped\": the point did not fit the time budget; the curve was not run at larger n."
    );
    for note in &r.notes {
        let _ = writeln!(o, "- {note}");
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(curve: &str, n: u64, ns: Option<f64>, note: &str) -> Row {
        Row {
            curve: curve.into(),
            interface: "setcallout".into(),
            measure: "kernel".into(),
            n,
            ns_per_op: ns,
            iterations: 3,
            note: note.into(),
        }
    }

    #[test]
    fn cost_formatting() {
        assert_eq!(fmt_ns(4.256), "4.26");
        assert_eq!(fmt_ns(95.123), "95.1");
        assert_eq!(fmt_ns(123_456.7), "123457");
    }

    #[test]
    fn the_table_has_n_down_and_curves_across() {
        let rows = vec![
            row("a", 0, Some(90.0), ""),
            row("b", 0, Some(1000.0), ""),
            row("a", 10, Some(91.0), ""),
            row("b", 10, None, STOPPED),
            row(
                "c",
                10,
                None,
                "skipped: capacity 100 beyond scheme 1's limit 64",
            ),
        ];
        let t = fig9_table(&rows, "kernel");
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "| n | a | b | c |");
        assert_eq!(lines[1], "|---:|---:|---:|---:|");
        assert_eq!(lines[2], "| 0 | 90.0 | 1000 |  |");
        assert_eq!(lines[3], "| 10 | 91.0 | stopped | skipped |");
        assert_eq!(fig9_table(&rows, "ioctl").lines().count(), 2);
    }
}
