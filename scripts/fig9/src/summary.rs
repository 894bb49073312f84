// SPDX-License-Identifier: GPL-2.0

//! The numbers the closing note needs, from fig9.csv: how flat the wheels are (cost at a large
//! n over cost at a small n), how scheme 7 compares with the kernel's own timers, and how the
//! traditional BSD list grows (its slope on log-log: 1 is linear).

use crate::csv::Row;
use crate::csv::STOPPED;
use std::fmt::Write as _;

/// Curves whose flatness is reported.
pub const FLAT_CURVES: [&str; 4] = [
    "scheme6-setcallout",
    "scheme6-timeout",
    "scheme7-setcallout",
    "scheme7-timeout",
];
/// The curve compared with Linux.
pub const OURS: &str = "scheme7-setcallout";
pub const BASELINE: &str = "bsd-traditional";
/// The baseline's slope is fitted over points with at least this n (below, the fixed cost of
/// a reset hides the walk).
pub const SLOPE_MIN_N: u64 = 100;

/// Cost of `curve` at a small and a large n.
#[derive(Clone, Debug, PartialEq)]
pub struct Flatness {
    pub curve: String,
    pub small: Option<f64>,
    pub large: Option<f64>,
}

impl Flatness {
    /// large / small: 1 is perfectly flat.
    pub fn ratio(&self) -> Option<f64> {
        Some(self.large? / self.small?)
    }
}

/// Scheme 7 against Linux at one n.
#[derive(Clone, Debug, PartialEq)]
pub struct VsLinux {
    pub n: u64,
    pub ours: Option<f64>,
    pub timer_list: Option<f64>,
    pub hrtimer: Option<f64>,
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
    pub flatness: Vec<Flatness>,
    pub vs_linux: Vec<VsLinux>,
    pub baseline: Option<Slope>,
    pub baseline_stopped_at: Option<u64>,
}

/// The measured cost of `curve` at `n`, if there is one.
pub fn value(rows: &[Row], curve: &str, measure: &str, n: u64) -> Option<f64> {
    rows.iter()
        .find(|r| r.curve == curve && r.measure == measure && r.n == n)
        .and_then(|r| r.ns_per_op)
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

/// The baseline's log-log slope over its measured points with n ≥ [`SLOPE_MIN_N`].
fn baseline_slope(rows: &[Row], measure: &str) -> Option<Slope> {
    let mut pts: Vec<(u64, f64)> = rows
        .iter()
        .filter(|r| r.curve == BASELINE && r.measure == measure && r.n >= SLOPE_MIN_N)
        .filter_map(|r| r.ns_per_op.filter(|v| *v > 0.0).map(|v| (r.n, v)))
        .collect();
    pts.sort_by_key(|p| p.0);
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

pub fn summarize(rows: &[Row], measure: &str, small_n: u64, large_n: u64) -> Summary {
    let flatness = FLAT_CURVES
        .iter()
        .map(|c| Flatness {
            curve: c.to_string(),
            small: value(rows, c, measure, small_n),
            large: value(rows, c, measure, large_n),
        })
        .collect();
    let vs_linux = [small_n, large_n]
        .iter()
        .map(|&n| VsLinux {
            n,
            ours: value(rows, OURS, measure, n),
            timer_list: value(rows, "linux-timer_list", measure, n),
            hrtimer: value(rows, "linux-hrtimer", measure, n),
        })
        .collect();
    let baseline_stopped_at = rows
        .iter()
        .find(|r| r.curve == BASELINE && r.measure == measure && r.note.starts_with(STOPPED))
        .map(|r| r.n);
    Summary {
        measure: measure.to_string(),
        small_n,
        large_n,
        flatness,
        vs_linux,
        baseline: baseline_slope(rows, measure),
        baseline_stopped_at,
    }
}

fn ns(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1} ns"))
        .unwrap_or_else(|| "n/a".into())
}

fn ratio(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "n/a".into())
}

fn div(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    Some(a? / b?)
}

/// The summary as text for the closing note.
pub fn render(s: &Summary) -> String {
    let mut o = String::new();
    let (a, b) = (s.small_n, s.large_n);
    let _ = writeln!(o, "Figure 9 summary, measure: {}", s.measure);
    let _ = writeln!(o, "\nflatness: cost at n={b} / cost at n={a} (1.00 = flat)");
    for f in &s.flatness {
        let _ = writeln!(
            o,
            "  {:<20} {:>12} -> {:>12}   ratio {}",
            f.curve,
            ns(f.small),
            ns(f.large),
            ratio(f.ratio())
        );
    }
    let _ = writeln!(o, "\n{OURS} vs Linux timers (ratio = {OURS} / linux)");
    for v in &s.vs_linux {
        let _ = writeln!(
            o,
            "  n={:<8} {OURS} {}; timer_list {} (ratio {}); hrtimer {} (ratio {})",
            v.n,
            ns(v.ours),
            ns(v.timer_list),
            ratio(div(v.ours, v.timer_list)),
            ns(v.hrtimer),
            ratio(div(v.ours, v.hrtimer))
        );
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
        }
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

    #[test]
    fn summary_ratios_and_slope() {
        let s = summarize(&synthetic(), "kernel", 1000, 1_000_000);
        assert_eq!(s.flatness[0].ratio(), Some(1.0));
        assert_eq!(s.flatness[2].curve, "scheme7-setcallout");
        assert_eq!(s.flatness[2].ratio(), Some(1.25));
        assert_eq!(s.flatness[1].ratio(), None, "no scheme6-timeout rows");
        let v = &s.vs_linux[1];
        assert_eq!(div(v.ours, v.timer_list), Some(2.5));
        assert_eq!(div(v.ours, v.hrtimer), Some(0.625));
        let sl = s.baseline.clone().unwrap();
        assert!((sl.slope - 1.0).abs() < 1e-9, "slope {}", sl.slope);
        assert_eq!((sl.points, sl.first_n, sl.last_n), (4, 100, 100_000));
        assert_eq!(s.baseline_stopped_at, Some(1_000_000));
        let text = render(&s);
        assert!(text.contains("ratio 1.25"));
        assert!(text.contains("slope 1.00 over 4 points"));
        assert!(text.contains("stopped at n=1000000"));
        assert!(text.contains("n/a"));
    }

    #[test]
    fn another_measure_sees_nothing() {
        let s = summarize(&synthetic(), "ioctl", 1000, 1_000_000);
        assert!(s.flatness.iter().all(|f| f.ratio().is_none()));
        assert_eq!(s.baseline, None);
    }
}
