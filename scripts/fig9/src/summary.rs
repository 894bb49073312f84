// SPDX-License-Identifier: GPL-2.0

//! The numbers the closing note needs, from fig9.csv: how flat the wheels are (cost at a large n
//! over cost at a small n), what a reset in place saves over cancel + start, how scheme 7 compares
//! with the kernel's own timers (and schemes 6 and 7 with `timer_list`, scheme 7 with hrtimer, in
//! the pairs of TW_IOC_BENCH_PAIR, rows of measure `pair`), how the traditional BSD list grows (its
//! slope on log-log: 1 is linear), the longest lock hold of each curve, and (from wakeups.csv) how
//! often an instance wakes with nothing to do.
//!
//! A ratio is taken repeat by repeat (repeat i of one point over repeat i of the other: measured
//! side by side, interleaved) and reported as the median of those ratios with their range. The
//! flatness compares one curve at two n, which the sweep reaches minutes apart: `fig9 run`
//! measures the key curves' repeat i at the two n of the pair back to back (rows with
//! `paired_n`), and the flatness is taken over those pairs wherever the CSV has them; the
//! summary says which lines rest on repeats measured apart (files from before the pairs, or
//! other n).

use crate::method::pair_note;
use crate::method::PAIR;
use crate::method::PAIRS;
use crate::records::point;
use crate::records::Row;
use crate::records::Spread;
use crate::records::WakeupRow;
use crate::records::STOPPED;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Curves whose flatness is reported.
pub const FLAT_CURVES: [&str; 6] = [
    "scheme6-setcallout",
    "scheme6-timeout",
    "scheme6-mod",
    "scheme7-setcallout",
    "scheme7-timeout",
    "scheme7-mod",
];
/// Reset in place against cancel + start of the same structure.
pub const MOD_PAIRS: [(&str, &str); 3] = [
    ("scheme6-mod", "scheme6-setcallout"),
    ("scheme7-mod", "scheme7-setcallout"),
    ("linux-timer_list-mod", "linux-timer_list"),
];
/// The curve compared with Linux.
pub const OURS: &str = "scheme7-setcallout";
pub const LINUX: [&str; 2] = ["linux-timer_list", "linux-hrtimer"];
/// Scheme 7's reset in place, compared with Linux's `mod_timer` in place and with hrtimer.
pub const OURS_MOD: &str = "scheme7-mod";
pub const LINUX_MOD: [&str; 2] = ["linux-timer_list-mod", "linux-hrtimer"];
pub const BASELINE: &str = "bsd-traditional";
/// The baseline's slope is fitted over points with at least this n (below, the fixed cost of
/// a reset hides the walk).
pub const SLOPE_MIN_N: u64 = 100;

/// One curve at one n, by repeat.
fn repeats(rows: &[Row], curve: &str, measure: &str, n: u64) -> BTreeMap<u32, f64> {
    rows.iter()
        .filter(|r| r.curve == curve && r.measure == measure && r.n == n)
        .filter_map(|r| r.ns_per_op.map(|v| (r.repeat, v)))
        .collect()
}

/// One curve at one n, by repeat: only the repeats measured back to back with n = `other`.
fn paired(rows: &[Row], curve: &str, measure: &str, n: u64, other: u64) -> BTreeMap<u32, f64> {
    rows.iter()
        .filter(|r| r.curve == curve && r.measure == measure && r.n == n)
        .filter(|r| r.paired_n == Some(other))
        .filter_map(|r| r.ns_per_op.map(|v| (r.repeat, v)))
        .collect()
}

/// One curve at one n in the pairs measured with `other`, by repeat.
fn in_pair(rows: &[Row], curve: &str, other: &str, n: u64) -> BTreeMap<u32, f64> {
    let note = pair_note(other);
    rows.iter()
        .filter(|r| r.curve == curve && r.measure == PAIR && r.n == n && r.note == note)
        .filter_map(|r| r.ns_per_op.map(|v| (r.repeat, v)))
        .collect()
}

/// `a / b` repeat by repeat, over the repeats both have.
pub fn ratio(a: &BTreeMap<u32, f64>, b: &BTreeMap<u32, f64>) -> Option<Spread> {
    Spread::of(a.iter().filter_map(|(rep, x)| b.get(rep).map(|y| x / y)))
}

/// A comparison: `a` over `b`, each with its spread, and their ratio.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    pub label: String,
    pub a: Option<Spread>,
    pub b: Option<Spread>,
    pub ratio: Option<Spread>,
    /// Whether each repeat of `a` and the same repeat of `b` were measured back to back (one
    /// curve at two n: the key pair of `fig9 run`).
    pub back_to_back: bool,
}

impl Compared {
    fn new(rows: &[Row], label: String, a: (&str, u64), b: (&str, u64), measure: &str) -> Self {
        let ra = repeats(rows, a.0, measure, a.1);
        let rb = repeats(rows, b.0, measure, b.1);
        Compared {
            label,
            a: point(rows, a.0, measure, a.1),
            b: point(rows, b.0, measure, b.1),
            ratio: ratio(&ra, &rb),
            back_to_back: false,
        }
    }

    /// `a` over `b` at `n` as measured in pairs.
    fn in_pairs(rows: &[Row], a: &str, b: &str, n: u64) -> Self {
        let ra = in_pair(rows, a, b, n);
        let rb = in_pair(rows, b, a, n);
        Compared {
            label: format!("n={n} {a} / {b}"),
            ratio: ratio(&ra, &rb),
            a: Spread::of(ra.into_values()),
            b: Spread::of(rb.into_values()),
            back_to_back: false,
        }
    }

    /// The flatness of `curve`: its cost at `large` over its cost at `small`, repeat by repeat,
    /// over the repeats measured back to back at the two n if there are any, else over all.
    fn flatness(rows: &[Row], curve: &str, large: u64, small: u64, measure: &str) -> Self {
        let ra = paired(rows, curve, measure, large, small);
        let rb = paired(rows, curve, measure, small, large);
        match ratio(&ra, &rb) {
            Some(r) => Compared {
                label: curve.to_string(),
                a: Spread::of(ra.into_values()),
                b: Spread::of(rb.into_values()),
                ratio: Some(r),
                back_to_back: true,
            },
            None => Compared::new(
                rows,
                curve.to_string(),
                (curve, large),
                (curve, small),
                measure,
            ),
        }
    }
}

/// A least-squares line through log10 n, log10 cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Slope {
    pub slope: f64,
    pub points: usize,
    pub first_n: u64,
    pub last_n: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub measure: String,
    pub small_n: u64,
    pub large_n: u64,
    /// Cost at large n over cost at small n.
    pub flatness: Vec<Compared>,
    /// Reset in place over cancel + start, at both n.
    pub in_place: Vec<Compared>,
    /// Scheme 7 over each Linux timer, at both n.
    pub vs_linux: Vec<Compared>,
    /// The module's curve over Linux's, measured in pairs ([`PAIRS`]), at both n; only in the
    /// kernel measure's summary, whose benches they are.
    pub in_pairs: Vec<Compared>,
    pub baseline: Option<Slope>,
    pub baseline_stopped_at: Option<u64>,
    /// The longest lock hold of each curve, in ns, and its n.
    pub holds: Vec<(String, u64, u64)>,
}

/// The slope of the least-squares line through `pts`; None without two distinct x.
pub fn fit_slope(pts: &[(f64, f64)]) -> Option<f64> {
    let k = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / k;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / k;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    if pts.len() < 2 || sxx <= 0.0 {
        None
    } else {
        Some(sxy / sxx)
    }
}

/// The baseline's log-log slope over the medians of its points with n ≥ [`SLOPE_MIN_N`].
fn baseline_slope(rows: &[Row], measure: &str) -> Option<Slope> {
    let mut ns: Vec<u64> = rows
        .iter()
        .filter(|r| r.curve == BASELINE && r.measure == measure && r.n >= SLOPE_MIN_N)
        .map(|r| r.n)
        .collect();
    ns.sort_unstable();
    ns.dedup();
    let pts: Vec<(u64, f64)> = ns
        .into_iter()
        .filter_map(|n| point(rows, BASELINE, measure, n).map(|s| (n, s.median)))
        .filter(|p| p.1 > 0.0)
        .collect();
    let logs: Vec<(f64, f64)> = pts
        .iter()
        .map(|&(n, v)| ((n as f64).log10(), v.log10()))
        .collect();
    Some(Slope {
        slope: fit_slope(&logs)?,
        points: pts.len(),
        first_n: pts.first()?.0,
        last_n: pts.last()?.0,
    })
}

/// The longest hold of each curve that reports one, in curve order.
fn holds(rows: &[Row]) -> Vec<(String, u64, u64)> {
    let mut out: Vec<(String, u64, u64)> = Vec::new();
    for r in rows {
        let Some(h) = r.max_hold_ns else { continue };
        match out.iter_mut().find(|(c, _, _)| *c == r.curve) {
            Some(e) if h > e.1 => *e = (r.curve.clone(), h, r.n),
            Some(_) => {}
            None => out.push((r.curve.clone(), h, r.n)),
        }
    }
    out
}

/// The comparisons of [`PAIRS`] at each of `ns`, as measured in pairs: those with a ratio.
pub fn pairs_at(rows: &[Row], ns: &[u64]) -> Vec<Compared> {
    let mut out = Vec::new();
    for &n in ns {
        for (a, b) in PAIRS {
            out.push(Compared::in_pairs(rows, a, b, n));
        }
    }
    out.retain(|c| c.ratio.is_some());
    out
}

pub fn summarize(rows: &[Row], measure: &str, small_n: u64, large_n: u64) -> Summary {
    let flatness = FLAT_CURVES
        .iter()
        .map(|c| Compared::flatness(rows, c, large_n, small_n, measure))
        .collect();
    let mut in_place = Vec::new();
    let mut vs_linux = Vec::new();
    for n in [small_n, large_n] {
        for (a, b) in MOD_PAIRS {
            let label = format!("n={n} {a} / {b}");
            in_place.push(Compared::new(rows, label, (a, n), (b, n), measure));
        }
        for l in LINUX {
            let label = format!("n={n} {OURS} / {l}");
            vs_linux.push(Compared::new(rows, label, (OURS, n), (l, n), measure));
        }
        for l in LINUX_MOD {
            let label = format!("n={n} {OURS_MOD} / {l}");
            vs_linux.push(Compared::new(rows, label, (OURS_MOD, n), (l, n), measure));
        }
    }
    let mut in_pairs = Vec::new();
    if measure == "kernel" {
        in_pairs = pairs_at(rows, &[small_n, large_n]);
    }
    let baseline_stopped_at = rows
        .iter()
        .find(|r| r.curve == BASELINE && r.measure == measure && r.note.starts_with(STOPPED))
        .map(|r| r.n);
    Summary {
        measure: measure.to_string(),
        small_n,
        large_n,
        flatness,
        in_place,
        vs_linux,
        in_pairs,
        baseline: baseline_slope(rows, measure),
        baseline_stopped_at,
        holds: holds(rows),
    }
}

fn ns(v: Option<Spread>) -> String {
    v.map(|s| format!("{:.1} ns", s.median))
        .unwrap_or_else(|| "n/a".into())
}

/// `1.25 [1.10–1.40]`: the median ratio and its range over the repeats.
pub fn ratio_text(v: Option<Spread>) -> String {
    match v {
        Some(s) if s.count > 1 => format!("{:.2} [{:.2}–{:.2}]", s.median, s.min, s.max),
        Some(s) => format!("{:.2}", s.median),
        None => "n/a".into(),
    }
}

fn compared(o: &mut String, c: &Compared, note: &str) {
    let _ = writeln!(
        o,
        "  {:<48} {:>12} / {:>12}   ratio {}{note}",
        c.label,
        ns(c.a),
        ns(c.b),
        ratio_text(c.ratio)
    );
}

/// The summary as text for the closing note.
pub fn render(s: &Summary) -> String {
    let mut o = String::new();
    let (a, b) = (s.small_n, s.large_n);
    let _ = writeln!(o, "Figure 9 summary, measure: {}", s.measure);
    let _ = writeln!(
        o,
        "(medians over the repeats; ratios taken repeat by repeat: median [min–max])"
    );
    let _ = writeln!(o, "\nflatness: cost at n={b} / cost at n={a} (1.00 = flat)");
    let paired = s.flatness.iter().any(|f| f.back_to_back);
    let apart = s
        .flatness
        .iter()
        .any(|f| f.ratio.is_some() && !f.back_to_back);
    if paired {
        let _ = writeln!(
            o,
            "(each ratio over repeat i at both n, measured back to back: seconds apart)"
        );
    } else if apart {
        let _ = writeln!(
            o,
            "(repeat i at each n from two points of the sweep, minutes apart: a change of the \
             machine's speed between them shows here)"
        );
    }
    for f in &s.flatness {
        let apart = paired && f.ratio.is_some() && !f.back_to_back;
        compared(&mut o, f, if apart { "   not back to back" } else { "" });
    }
    let _ = writeln!(o, "\nreset in place / cancel + start");
    for c in &s.in_place {
        compared(&mut o, c, "");
    }
    let _ = writeln!(o, "\nscheme 7 vs Linux timers");
    for c in &s.vs_linux {
        compared(&mut o, c, "");
    }
    if !s.in_pairs.is_empty() {
        let _ = writeln!(
            o,
            "\nthe module vs Linux timers, measured in pairs (TW_IOC_BENCH_PAIR: each \
             millisecond of the module's resets followed at once by as many of Linux's)"
        );
        for c in &s.in_pairs {
            compared(&mut o, c, "");
        }
    }
    let _ = writeln!(o, "\n{BASELINE}: log-log slope (1.00 = linear in n)");
    match &s.baseline {
        Some(sl) => {
            let _ = writeln!(
                o,
                "  slope {:.2} over {} points, n = {}..{}",
                sl.slope, sl.points, sl.first_n, sl.last_n
            );
        }
        None => {
            let _ = writeln!(
                o,
                "  n/a (fewer than two measured points with n >= {SLOPE_MIN_N})"
            );
        }
    }
    if let Some(n) = s.baseline_stopped_at {
        let _ = writeln!(o, "  stopped at n={n}: budget exceeded");
    }
    if !s.holds.is_empty() {
        let _ = writeln!(o, "\nlongest hold of the instance's lock (TW_IOC_BENCH)");
        for (c, h, n) in &s.holds {
            let _ = writeln!(o, "  {c:<24} {:>10.1} µs at n={n}", *h as f64 / 1000.0);
        }
    }
    o
}

/// Wakeups per second, for the closing note.
pub fn render_wakeups(rows: &[WakeupRow]) -> String {
    let mut o = String::from("\nwakeups per second on the real clock (1 ms tick)\n");
    for r in rows {
        let v = r
            .wakeups_per_s
            .map_or_else(|| r.note.clone(), |v| format!("{v:9.1}"));
        let _ = writeln!(
            o,
            "  scheme {} {:<8} {:<5} ({:>4} callouts) {v}",
            r.scheme, r.clock, r.load, r.callouts
        );
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(curve: &str, n: u64, ns: Option<f64>, note: &str) -> Row {
        Row {
            curve: curve.into(),
            interface: "x".into(),
            measure: "kernel".into(),
            n,
            ns_per_op: ns,
            iterations: 5,
            note: note.into(),
            ..Row::default()
        }
    }

    #[test]
    fn pairs_compare_each_linux_row_with_its_own_partner() {
        let mut rows = Vec::new();
        for rep in 0..3 {
            for (curve, note, ns) in [
                ("scheme7-mod", "with linux-timer_list-mod", 60.0),
                ("linux-timer_list-mod", "with scheme7-mod", 200.0),
                ("scheme6-mod", "with linux-timer_list-mod", 80.0),
                ("linux-timer_list-mod", "with scheme6-mod", 100.0),
                // The unpaired kernel measure is not read for the pairs.
                ("linux-timer_list-mod", "", 1.0),
            ] {
                let measure = if note.is_empty() { "kernel" } else { PAIR };
                rows.push(Row {
                    measure: measure.into(),
                    repeat: rep,
                    ..row(curve, 1000, Some(ns + f64::from(rep)), note)
                });
            }
        }
        let s = summarize(&rows, "kernel", 1000, 1_000_000);
        let got: Vec<(&str, f64)> = s
            .in_pairs
            .iter()
            .map(|c| (c.label.as_str(), c.ratio.unwrap().median))
            .collect();
        assert_eq!(
            got,
            [
                ("n=1000 scheme7-mod / linux-timer_list-mod", 61.0 / 201.0),
                ("n=1000 scheme6-mod / linux-timer_list-mod", 81.0 / 101.0),
            ]
        );
        assert!(render(&s).contains("measured in pairs"));
        // Not in the ioctl measure's summary: the pairs are kernel benches.
        assert!(summarize(&rows, "ioctl", 1000, 1_000_000)
            .in_pairs
            .is_empty());
    }

    fn synthetic() -> Vec<Row> {
        let mut rows = Vec::new();
        for n in [0u64, 1, 10, 100, 1000, 10_000, 100_000, 1_000_000] {
            rows.push(row("scheme6-setcallout", n, Some(100.0), ""));
            rows.push(row(
                "scheme7-setcallout",
                n,
                Some(if n >= 1_000_000 { 150.0 } else { 120.0 }),
                "",
            ));
            rows.push(row("scheme7-mod", n, Some(60.0), ""));
            rows.push(row("linux-timer_list", n, Some(60.0), ""));
            rows.push(row("linux-hrtimer", n, Some(240.0), ""));
            // A pure power law n^1 for n >= 100, a fixed cost below.
            let base = if n >= 100 { 3.0 * n as f64 } else { 80.0 };
            if n <= 100_000 {
                rows.push(row(BASELINE, n, Some(base), ""));
            }
        }
        rows.push(row(BASELINE, 1_000_000, None, STOPPED));
        rows
    }

    #[test]
    fn slope_of_a_power_law() {
        let pts: Vec<(f64, f64)> = (0..5).map(|i| (i as f64, 2.0 * i as f64 + 1.0)).collect();
        assert!((fit_slope(&pts).unwrap() - 2.0).abs() < 1e-12);
        assert_eq!(fit_slope(&[(1.0, 1.0)]), None);
        assert_eq!(fit_slope(&[(1.0, 1.0), (1.0, 2.0)]), None);
        assert_eq!(fit_slope(&[]), None);
    }

    fn median(c: &Compared) -> Option<f64> {
        c.ratio.map(|s| s.median)
    }

    #[test]
    fn summary_ratios_and_slope() {
        let s = summarize(&synthetic(), "kernel", 1000, 1_000_000);
        assert_eq!(median(&s.flatness[0]), Some(1.0));
        assert_eq!(s.flatness[3].label, "scheme7-setcallout");
        assert_eq!(median(&s.flatness[3]), Some(1.25));
        assert_eq!(median(&s.flatness[1]), None, "no scheme6-timeout rows");
        assert!(
            s.flatness.iter().all(|f| !f.back_to_back),
            "no pairs in the rows"
        );
        // n = 1e6: scheme 7 at 150 against timer_list 60 and hrtimer 240.
        assert_eq!(
            s.vs_linux[4].label,
            "n=1000000 scheme7-setcallout / linux-timer_list"
        );
        assert_eq!(median(&s.vs_linux[4]), Some(2.5));
        assert_eq!(median(&s.vs_linux[5]), Some(0.625));
        // Reset in place against Linux's: the synthetic sweep has no scheme7-mod.
        assert_eq!(
            s.vs_linux[6].label,
            "n=1000000 scheme7-mod / linux-timer_list-mod"
        );
        assert_eq!(median(&s.vs_linux[6]), None);
        assert_eq!(median(&s.in_place[1]), Some(0.5), "{:?}", s.in_place[1]);
        let sl = s.baseline.clone().unwrap();
        assert!((sl.slope - 1.0).abs() < 1e-9, "slope {}", sl.slope);
        assert_eq!((sl.points, sl.first_n, sl.last_n), (4, 100, 100_000));
        assert_eq!(s.baseline_stopped_at, Some(1_000_000));
        let text = render(&s);
        assert!(text.contains("ratio 1.25"));
        assert!(text.contains("two points of the sweep, minutes apart"));
        assert!(!text.contains("back to back"));
        assert!(text.contains("slope 1.00 over 4 points"));
        assert!(text.contains("stopped at n=1000000"));
        assert!(text.contains("n/a"));
    }

    #[test]
    fn ratios_are_taken_repeat_by_repeat() {
        let mut rows = Vec::new();
        for (rep, (a, b)) in [(100.0, 50.0), (300.0, 100.0), (110.0, 100.0)]
            .into_iter()
            .enumerate()
        {
            let mut x = row("scheme7-setcallout", 1000, Some(a), "");
            let mut y = row("linux-timer_list", 1000, Some(b), "");
            x.repeat = rep as u32;
            y.repeat = rep as u32;
            x.max_hold_ns = Some(1000 * (rep as u64 + 1));
            rows.extend([x, y]);
        }
        let s = summarize(&rows, "kernel", 1000, 1_000_000);
        let r = s.vs_linux[0].ratio.unwrap();
        assert_eq!((r.median, r.min, r.max, r.count), (2.0, 1.1, 3.0, 3));
        assert_eq!(s.vs_linux[0].a.unwrap().median, 110.0);
        assert!(render(&s).contains("ratio 2.00 [1.10–3.00]"));
        assert_eq!(s.holds, vec![("scheme7-setcallout".into(), 3000, 1000)]);
    }

    /// A machine that changes speed between repeats: repeat i of scheme 7 at both n measured
    /// back to back, in one mode; scheme 6 at each n in its own point of the sweep, n = 1e3 in
    /// the slow mode throughout, n = 1e6 in the fast one.
    fn drifting() -> Vec<Row> {
        let slow = 1.6;
        let mode = [1.0, slow, slow, 1.0, slow];
        let mut rows = Vec::new();
        for (rep, m) in mode.into_iter().enumerate() {
            let rep = rep as u32;
            for (n, other, cost) in [(1000, 1_000_000, 100.0), (1_000_000, 1000, 110.0)] {
                rows.push(Row {
                    repeat: rep,
                    paired_n: Some(other),
                    ..row("scheme7-setcallout", n, Some(cost * m), "")
                });
            }
            for (n, cost) in [(1000, 100.0 * slow), (1_000_000, 110.0)] {
                rows.push(Row {
                    repeat: rep,
                    ..row("scheme6-setcallout", n, Some(cost), "")
                });
            }
        }
        // Scheme 7 at n = 1e3 again, from a point of the sweep minutes earlier, in the slow
        // mode: not the repeats its n = 1e6 ones were measured with.
        for rep in 0..5 {
            rows.push(Row {
                repeat: rep,
                ..row("scheme7-setcallout", 1000, Some(100.0 * slow), "")
            });
        }
        rows
    }

    #[test]
    fn the_flatness_is_taken_over_the_repeats_measured_back_to_back() {
        let s = summarize(&drifting(), "kernel", 1000, 1_000_000);
        let f7 = &s.flatness[3];
        assert_eq!(f7.label, "scheme7-setcallout");
        assert!(f7.back_to_back);
        let r = f7.ratio.unwrap();
        assert!(
            (r.min - 1.1).abs() < 1e-9 && (r.max - 1.1).abs() < 1e-9,
            "{r:?}"
        );
        assert_eq!(r.count, 5, "one ratio per pair");
        assert_eq!(
            f7.b.unwrap().count,
            5,
            "the cost at n = 1e3 is the paired repeats'"
        );
        // Scheme 6's two n were measured apart: the slow mode at one end shows as a slope.
        let f6 = &s.flatness[0];
        assert!(!f6.back_to_back);
        assert!((median(f6).unwrap() - 1.1 / 1.6).abs() < 1e-9, "{f6:?}");
        let text = render(&s);
        assert!(text.contains("measured back to back"), "{text}");
        let line = |c: &str| text.lines().find(|l| l.contains(c)).unwrap().to_string();
        assert!(line("scheme7-setcallout").contains("ratio 1.10 [1.10–1.10]"));
        assert!(!line("scheme7-setcallout").contains("not back to back"));
        assert!(line("scheme6-setcallout").ends_with("not back to back"));
        let s = summarize(&drifting(), "kernel", 1_000_000, 1000);
        assert!(s.flatness[3].back_to_back, "either way round");
        // Another n than the pair's: its repeats were measured apart, and are said to be.
        let mut rows = drifting();
        rows.extend((0..5).map(|rep| Row {
            repeat: rep,
            ..row("scheme7-setcallout", 300_000, Some(105.0), "")
        }));
        let s = summarize(&rows, "kernel", 1000, 300_000);
        assert!(s.flatness[3].ratio.is_some() && !s.flatness[3].back_to_back);
    }

    #[test]
    fn the_published_csv_still_summarizes() {
        let doc = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../doc/fig9.csv");
        let rows: Vec<Row> = crate::records::read(&doc).unwrap();
        let s = summarize(&rows, "kernel", 1000, 1_000_000);
        assert!(median(&s.flatness[0]).is_some());
        // Its key points are paired: the flatness comes from repeats measured back to back.
        assert!(s.flatness.iter().all(|f| f.back_to_back));
        assert!(render(&s).contains("measured back to back: seconds apart"));
        assert!(median(&s.vs_linux[0]).is_some());
        assert!(s.baseline.is_some());
    }

    #[test]
    fn another_measure_sees_nothing() {
        let s = summarize(&synthetic(), "ioctl", 1000, 1_000_000);
        assert!(s.flatness.iter().all(|f| f.ratio.is_none()));
        assert_eq!(s.baseline, None);
    }
}
