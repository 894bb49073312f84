// SPDX-License-Identifier: GPL-2.0

//! results.md: the run's numbers as markdown tables (n down, curves across; each cell the
//! median of the point's repeats and their range), and its notes.

use crate::method::FAR_HI;
use crate::method::FAR_LO;
use crate::method::PAIR;
use crate::method::RESET_MIN;
use crate::method::RESET_SPREAD;
use crate::records::MemoryRow;
use crate::records::Row;
use crate::records::Spread;
use crate::records::TickRow;
use crate::records::WakeupRow;
use crate::records::STOPPED;
use crate::run::Results;
use crate::summary::pairs_at;
use crate::summary::ratio_text;
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

/// A median and its range: `496 (480–510)`, or the median alone for one repeat.
pub fn fmt_spread(s: &Spread) -> String {
    if s.count > 1 && s.max > s.min {
        format!("{} ({}–{})", fmt_ns(s.median), fmt_ns(s.min), fmt_ns(s.max))
    } else {
        fmt_ns(s.median)
    }
}

/// The cell of a point: the spread of its values, else why it has none.
fn cell<'a>(
    values: impl Iterator<Item = Option<f64>>,
    notes: impl Iterator<Item = &'a str>,
) -> String {
    if let Some(s) = Spread::of(values.flatten()) {
        return fmt_spread(&s);
    }
    match notes.filter(|n| !n.is_empty()).last() {
        Some(STOPPED) => "stopped".into(),
        Some(n) => n.split(':').next().unwrap_or("").to_string(),
        None => String::new(),
    }
}

/// The table of one measure.
pub fn fig9_table(rows: &[Row], measure: &str) -> String {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.measure == measure).collect();
    let cols = order(rows.iter().map(|r| r.curve.as_str()));
    let ns = all_n(rows.iter().map(|r| r.n));
    table(&cols, &ns, |c, n| {
        let mine = || rows.iter().filter(move |r| r.curve == c && r.n == n);
        cell(mine().map(|r| r.ns_per_op), mine().map(|r| r.note.as_str()))
    })
}

fn tick_table(rows: &[TickRow]) -> String {
    let cols = order(rows.iter().map(|r| r.curve.as_str()));
    let ns = all_n(rows.iter().map(|r| r.n));
    table(&cols, &ns, |c, n| {
        let mine = || rows.iter().filter(move |r| r.curve == c && r.n == n);
        cell(
            mine().map(|r| r.ns_per_tick),
            mine().map(|r| r.note.as_str()),
        )
    })
}

/// The longest hold of the instance's lock in any bench of each curve, in µs.
pub fn hold_table(rows: &[Row]) -> String {
    let mut o = String::from("| curve | longest hold, µs | at n |\n|---|---:|---:|\n");
    for c in order(rows.iter().map(|r| r.curve.as_str())) {
        let longest = rows
            .iter()
            .filter(|r| r.curve == c)
            .filter_map(|r| r.max_hold_ns.map(|h| (h, r.n)))
            .max();
        if let Some((h, n)) = longest {
            let _ = writeln!(o, "| {c} | {:.1} | {n} |", h as f64 / 1000.0);
        }
    }
    o
}

/// Wakeups per second, one line per scheme and clock, one column per load.
pub fn wakeup_table(rows: &[WakeupRow]) -> String {
    let mut o = String::from("| scheme | clock | idle | one callout | 1000 callouts |\n");
    o.push_str("|---:|---|---:|---:|---:|\n");
    let mut lines: Vec<(u32, &str)> = Vec::new();
    for r in rows {
        if !lines.contains(&(r.scheme, r.clock.as_str())) {
            lines.push((r.scheme, r.clock.as_str()));
        }
    }
    for (scheme, clock) in lines {
        let cells: Vec<String> = ["idle", "one", "many"]
            .iter()
            .map(|load| {
                let r = rows
                    .iter()
                    .find(|r| r.scheme == scheme && r.clock == clock && r.load == *load);
                match r {
                    Some(WakeupRow {
                        wakeups_per_s: Some(v),
                        ..
                    }) => format!("{v:.1}"),
                    Some(r) => r.note.split(':').next().unwrap_or("").to_string(),
                    None => String::new(),
                }
            })
            .collect();
        let _ = writeln!(o, "| {scheme} | {clock} | {} |", cells.join(" | "));
    }
    o
}

fn memory_table(rows: &[MemoryRow]) -> String {
    let cols = order(rows.iter().map(|r| r.curve.as_str()));
    let ns = all_n(rows.iter().map(|r| r.n));
    table(&cols, &ns, |c, n| {
        rows.iter()
            .find(|r| r.curve == c && r.n == n)
            .map(|r| format!("{:.1}", r.bytes_per_callout))
            .unwrap_or_default()
    })
}

/// The module's resets over Linux's as measured in pairs (TW_IOC_BENCH_PAIR), at every n the
/// run has pairs at: each half's median ns and range, and their ratio repeat by repeat.
fn pair_table(rows: &[Row]) -> String {
    let ns = all_n(rows.iter().filter(|r| r.measure == PAIR).map(|r| r.n));
    let mut o = String::from(
        "| pair | the module, ns | Linux, ns | ratio, median [range] |\n|---|---:|---:|---:|\n",
    );
    for c in pairs_at(rows, &ns) {
        let spread = |s: Option<Spread>| s.as_ref().map(fmt_spread).unwrap_or_default();
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            c.label,
            spread(c.a),
            spread(c.b),
            ratio_text(c.ratio)
        );
    }
    o
}

/// The whole of results.md; `setup` describes the run (options, device).
pub fn results_md(r: &Results, wakeups: &[WakeupRow], setup: &str) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# Figure 9 on /dev/timerwheel\n");
    let _ = writeln!(
        o,
        "Method (Varghese & Lauck, section VII.A): n callouts at random times far in the future \
         ([{FAR_LO}, {FAR_HI}) ticks, manual clock: nothing fires), then one more callout reset \
         again and again to a random time farther than all of them ([{RESET_MIN}, {}) ticks). \
         A reset is a cancel plus a start: unsetcallout + setcallout, or untimeout + timeout; \
         the `-mod` curves reset in place (TW_IOC_RESET; Linux: mod_timer on the pending timer). \
         Each cell is the median of the point's repeats (each a mean ns per reset) and, in \
         parentheses, their range.\n",
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
        "\n## Reset cost, ioctl measure (userspace: a cancel and a start ioctl per reset; -mod: one TW_IOC_RESET), ns\n"
    );
    o.push_str(&fig9_table(&r.fig9, "ioctl"));
    if r.fig9.iter().any(|row| row.measure == PAIR) {
        let _ = writeln!(
            o,
            "\n## The module against Linux in pairs (TW_IOC_BENCH_PAIR: each millisecond of the \
             module's resets followed at once by as many of Linux's), kernel measure\n"
        );
        o.push_str(&pair_table(&r.fig9));
    }
    let _ = writeln!(
        o,
        "\n## Per-tick bookkeeping (TW_BENCH_TICK, nothing due), ns per tick\n"
    );
    o.push_str(&tick_table(&r.tick));
    let _ = writeln!(
        o,
        "\n## Memory, bytes per callout: the module's TW_IOC_STATS memory_bytes / capacity; \
         linux-timer_list and linux-hrtimer: sizeof(struct timer_list) and sizeof(struct hrtimer) \
         in the running kernel (TW_IOC_INFO), whatever n\n"
    );
    o.push_str(&memory_table(&r.memory));
    let _ = writeln!(
        o,
        "\n## Longest hold of the instance's lock in a bench (TW_IOC_BENCH max_hold_ns)\n"
    );
    o.push_str(&hold_table(&r.fig9));
    if !wakeups.is_empty() {
        let _ = writeln!(
            o,
            "\n## Wakeups per second on the real clock (1 ms tick; callouts 10 s and more away)\n"
        );
        o.push_str(&wakeup_table(wakeups));
    }
    let _ = writeln!(o, "\n## Notes\n");
    let _ = writeln!(
        o,
        "- n = 0 is in the tables and the CSV, but not in the figures (a log axis has no 0)."
    );
    let _ = writeln!(
        o,
        "- \"stopped\": the point did not fit the time budget; the curve was not run at larger n."
    );
    if let Some((lo, hi)) = pair_of(&r.fig9) {
        let _ = writeln!(
            o,
            "- The key curves (schemes 6 and 7, Linux) at n = {lo} were measured when the sweep \
             reached n = {hi}, each repeat just before the same repeat at n = {hi} (fig9.csv's \
             paired_n): their cost at n = {hi} over their cost at n = {lo} compares repeats \
             measured seconds apart, not minutes."
        );
    }
    for note in &r.notes {
        let _ = writeln!(o, "- {note}");
    }
    o
}

/// The two n whose repeats were measured back to back, if any rows were.
fn pair_of(rows: &[Row]) -> Option<(u64, u64)> {
    let ns = rows.iter().filter(|r| r.paired_n.is_some()).map(|r| r.n);
    Some((ns.clone().min()?, ns.max()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::records::test_row as row;

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

    #[test]
    fn repeats_show_as_median_and_range() {
        let mut rows: Vec<Row> = [500.0, 480.0, 510.0]
            .iter()
            .map(|&v| row("a", 1000, Some(v), ""))
            .collect();
        rows[1].max_hold_ns = Some(12_500);
        let t = fig9_table(&rows, "kernel");
        assert_eq!(t.lines().nth(2), Some("| 1000 | 500 (480–510) |"));
        let h = hold_table(&rows);
        assert!(h.contains("| a | 12.5 | 1000 |"), "{h}");
    }

    #[test]
    fn linux_sizes_stand_beside_the_schemes_in_the_memory_table() {
        let rows = [
            MemoryRow::new("scheme6-setcallout", 0, 1024, 40_960),
            MemoryRow::per_timer("linux-timer_list", 0, 40),
            MemoryRow::per_timer("linux-hrtimer", 0, 80),
            MemoryRow::new("scheme6-setcallout", 1000, 2048, 65_536),
            MemoryRow::per_timer("linux-timer_list", 1000, 40),
            MemoryRow::per_timer("linux-hrtimer", 1000, 80),
        ];
        let t = memory_table(&rows);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines[0],
            "| n | scheme6-setcallout | linux-timer_list | linux-hrtimer |"
        );
        assert_eq!(lines[2], "| 0 | 40.0 | 40.0 | 80.0 |");
        assert_eq!(lines[3], "| 1000 | 32.0 | 40.0 | 80.0 |");
        let md = results_md(
            &Results {
                memory: rows.to_vec(),
                ..Results::default()
            },
            &[],
            "",
        );
        assert!(md.contains("sizeof(struct timer_list)"), "{md}");
        assert!(md.contains(&t), "{md}");
    }

    #[test]
    fn the_pairs_have_a_table_of_their_own() {
        let mut res = Results {
            fig9: vec![row("scheme7-mod", 1000, Some(1.0), "")],
            ..Results::default()
        };
        assert!(!results_md(&res, &[], "").contains("in pairs"));
        for rep in 0..3 {
            for (curve, note, ns) in [
                ("scheme7-mod", "with linux-hrtimer", 100.0),
                ("linux-hrtimer", "with scheme7-mod", 400.0),
                ("scheme7-mod", "with linux-timer_list-mod", 150.0),
                ("linux-timer_list-mod", "with scheme7-mod", 300.0),
            ] {
                res.fig9.push(Row {
                    measure: PAIR.into(),
                    repeat: rep,
                    ..row(curve, 1_000_000, Some(ns + f64::from(rep)), note)
                });
            }
        }
        let md = results_md(&res, &[], "");
        assert!(md.contains("## The module against Linux in pairs"), "{md}");
        // Each module row over its own partner's, in the order of PAIRS.
        let mod_timer = "| n=1000000 scheme7-mod / linux-timer_list-mod | 151 (150–152) | \
                         301 (300–302) | 0.50 [0.50–0.50] |";
        let hrtimer = "| n=1000000 scheme7-mod / linux-hrtimer | 101 (100–102) | 401 (400–402) \
                       | 0.25 [0.25–0.25] |";
        let (a, b) = (md.find(mod_timer), md.find(hrtimer));
        assert!(a.is_some() && b.is_some() && a < b, "{md}");
    }

    #[test]
    fn the_notes_say_which_n_were_measured_back_to_back() {
        let paired = |n, other| Row {
            paired_n: Some(other),
            ..row("scheme7-setcallout", n, Some(100.0), "")
        };
        let mut res = Results {
            fig9: vec![
                row("a", 1000, Some(1.0), ""),
                row("a", 1_000_000, Some(1.0), ""),
            ],
            ..Results::default()
        };
        assert!(!results_md(&res, &[], "").contains("back to back"));
        res.fig9
            .extend([paired(1000, 1_000_000), paired(1_000_000, 1000)]);
        let md = results_md(&res, &[], "");
        assert!(
            md.contains("at n = 1000 were measured when the sweep reached n = 1000000"),
            "{md}"
        );
    }

    #[test]
    fn wakeups_by_scheme_clock_and_load() {
        let w = |clock: &str, load: &str, v: f64| WakeupRow {
            scheme: 7,
            clock: clock.into(),
            load: load.into(),
            wakeups_per_s: Some(v),
            ..WakeupRow::default()
        };
        let rows = [
            w("periodic", "idle", 1000.0),
            w("periodic", "one", 999.5),
            w("tickless", "idle", 0.0),
        ];
        let t = wakeup_table(&rows);
        assert!(t.contains("| 7 | periodic | 1000.0 | 999.5 |  |"), "{t}");
        assert!(t.contains("| 7 | tickless | 0.0 |  |  |"), "{t}");
    }
}
