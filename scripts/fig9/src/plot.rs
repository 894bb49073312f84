// SPDX-License-Identifier: GPL-2.0

//! Log-log line charts as SVG, in the manner of the paper's Figure 9: x the outstanding
//! callouts, y the cost, one labelled line with markers per curve, a legend, grid lines at
//! decades. Plain string building; no dependencies.
//!
//! n = 0 has no place on a log axis: points with x or y at or below 0 are left out of the
//! drawing (they stay in the CSV), and the caption says so.

use crate::csv::Row;
use crate::csv::TickRow;
use std::fmt::Write as _;

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 620.0;
const LEFT: f64 = 90.0;
const RIGHT: f64 = 260.0; // the legend lives here
const TOP: f64 = 80.0;
const BOTTOM: f64 = 100.0;

/// Distinct colours (Okabe-Ito, then a few more), cycled.
const PALETTE: [&str; 11] = [
    "#000000", "#e69f00", "#56b4e9", "#009e73", "#0072b2", "#d55e00", "#cc79a7", "#7f7f7f",
    "#8c564b", "#bcbd22", "#9467bd",
];

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    /// Dashed: the old (timeout) interface.
    pub dashed: bool,
    pub points: Vec<(f64, f64)>,
}

/// A whole chart.
#[derive(Clone, Debug, Default)]
pub struct Figure {
    pub title: String,
    pub subtitle: String,
    pub x_label: String,
    pub y_label: String,
    pub caption: Vec<String>,
    pub series: Vec<Series>,
}

/// Decade bounds `[lo, hi]` (powers of ten, as exponents) covering `values`.
fn decades(values: impl Iterator<Item = f64>) -> (i32, i32) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| *v > 0.0 && v.is_finite()) {
        lo = lo.min(v.log10());
        hi = hi.max(v.log10());
    }
    if !lo.is_finite() {
        return (0, 1);
    }
    let (lo, hi) = (lo.floor() as i32, hi.ceil() as i32);
    if hi > lo {
        (lo, hi)
    } else {
        (lo, lo + 1)
    }
}

/// A count at a decade: 1, 10, 100, 1k … 1M.
pub fn count_label(exp: i32) -> String {
    match exp {
        i32::MIN..=-1 => format!("1e{exp}"),
        0..=2 => 10u64.pow(exp as u32).to_string(),
        3..=5 => format!("{}k", 10u64.pow(exp as u32 - 3)),
        6..=8 => format!("{}M", 10u64.pow(exp as u32 - 6)),
        _ => format!("1e{exp}"),
    }
}

/// A duration in ns at a decade: 1 ns … 100 ns, 1 µs … 1 s, 10 s.
pub fn ns_label(exp: i32) -> String {
    const UNITS: [&str; 4] = ["ns", "µs", "ms", "s"];
    if exp < 0 {
        return format!("1e{exp} ns");
    }
    let unit = (exp / 3).min(3);
    let mantissa = 10u64.pow((exp - 3 * unit) as u32);
    format!("{mantissa} {}", UNITS[unit as usize])
}

/// Text safe inside SVG.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Maps data to the plot area.
struct Axes {
    x: (i32, i32),
    y: (i32, i32),
}

impl Axes {
    fn plot_w() -> f64 {
        WIDTH - LEFT - RIGHT
    }

    fn plot_h() -> f64 {
        HEIGHT - TOP - BOTTOM
    }

    fn px(&self, x: f64) -> f64 {
        let t = (x.log10() - self.x.0 as f64) / (self.x.1 - self.x.0) as f64;
        LEFT + t * Self::plot_w()
    }

    fn py(&self, y: f64) -> f64 {
        let t = (y.log10() - self.y.0 as f64) / (self.y.1 - self.y.0) as f64;
        TOP + Self::plot_h() - t * Self::plot_h()
    }
}

/// The points of `s` that a log-log chart can show.
fn drawable(s: &Series) -> impl Iterator<Item = (f64, f64)> + '_ {
    s.points
        .iter()
        .copied()
        .filter(|(x, y)| *x > 0.0 && *y > 0.0 && x.is_finite() && y.is_finite())
}

/// The chart as an SVG document.
pub fn render_svg(fig: &Figure) -> String {
    let axes = Axes {
        x: decades(fig.series.iter().flat_map(drawable).map(|p| p.0)),
        y: decades(fig.series.iter().flat_map(drawable).map(|p| p.1)),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="Helvetica, Arial, sans-serif" font-size="13">"#
    );
    out.push_str(r#"<rect width="100%" height="100%" fill="white"/>"#);
    out.push('\n');
    titles(&mut out, fig);
    grid(&mut out, &axes);
    for (i, s) in fig.series.iter().enumerate() {
        series(&mut out, &axes, s, i);
    }
    legend(&mut out, fig);
    caption(&mut out, fig);
    out.push_str("</svg>\n");
    out
}

fn titles(out: &mut String, fig: &Figure) {
    let mid = LEFT + Axes::plot_w() / 2.0;
    let _ = writeln!(
        out,
        r#"<text x="{mid}" y="30" text-anchor="middle" font-size="18" font-weight="bold">{}</text>"#,
        escape(&fig.title)
    );
    let _ = writeln!(
        out,
        r##"<text x="{mid}" y="54" text-anchor="middle" font-size="13" fill="#444">{}</text>"##,
        escape(&fig.subtitle)
    );
    let _ = writeln!(
        out,
        r#"<text x="{mid}" y="{}" text-anchor="middle">{}</text>"#,
        TOP + Axes::plot_h() + 42.0,
        escape(&fig.x_label)
    );
    let ymid = TOP + Axes::plot_h() / 2.0;
    let _ = writeln!(
        out,
        r#"<text x="20" y="{ymid}" text-anchor="middle" transform="rotate(-90 20 {ymid})">{}</text>"#,
        escape(&fig.y_label)
    );
}

/// Frame, decade grid lines with labels, and lighter lines at 2..9 of each decade.
fn grid(out: &mut String, a: &Axes) {
    let (x0, x1, y0, y1) = (LEFT, LEFT + Axes::plot_w(), TOP, TOP + Axes::plot_h());
    for e in a.x.0..=a.x.1 {
        let x = a.px(10f64.powi(e));
        let _ = writeln!(
            out,
            r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{y1}" stroke="#ccc"/><text x="{x:.1}" y="{}" text-anchor="middle">{}</text>"##,
            y1 + 18.0,
            count_label(e)
        );
        minor(out, e, a.x.1, |m| {
            let x = a.px(m);
            format!(r##"<line x1="{x:.1}" y1="{y0}" x2="{x:.1}" y2="{y1}" stroke="#eee"/>"##)
        });
    }
    for e in a.y.0..=a.y.1 {
        let y = a.py(10f64.powi(e));
        let _ = writeln!(
            out,
            r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#ccc"/><text x="{}" y="{:.1}" text-anchor="end">{}</text>"##,
            x0 - 6.0,
            y + 4.0,
            escape(&ns_label(e))
        );
        minor(out, e, a.y.1, |m| {
            let y = a.py(m);
            format!(r##"<line x1="{x0}" y1="{y:.1}" x2="{x1}" y2="{y:.1}" stroke="#eee"/>"##)
        });
    }
    let _ = writeln!(
        out,
        r#"<rect x="{x0}" y="{y0}" width="{}" height="{}" fill="none" stroke="black"/>"#,
        Axes::plot_w(),
        Axes::plot_h()
    );
}

/// The minor grid of decade `e` (none past the last decade).
fn minor(out: &mut String, e: i32, last: i32, line: impl Fn(f64) -> String) {
    if e < last {
        for m in 2..10 {
            out.push_str(&line(m as f64 * 10f64.powi(e)));
            out.push('\n');
        }
    }
}

/// Marker `shape` of size 4.5 at (x, y), as an SVG element.
fn marker(shape: usize, x: f64, y: f64, colour: &str) -> String {
    let r = 4.5;
    let fill = format!(r#"class="marker" fill="{colour}" stroke="{colour}""#);
    match shape % 6 {
        0 => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" {fill}/>"#),
        1 => format!(
            r#"<rect x="{:.1}" y="{:.1}" width="{}" height="{}" {fill}/>"#,
            x - r,
            y - r,
            2.0 * r,
            2.0 * r
        ),
        2 => polygon(&[(x, y - r), (x + r, y + r), (x - r, y + r)], &fill),
        3 => polygon(&[(x, y - r), (x + r, y), (x, y + r), (x - r, y)], &fill),
        4 => polygon(&[(x - r, y - r), (x + r, y - r), (x, y + r)], &fill),
        _ => format!(
            r#"<circle cx="{x:.1}" cy="{y:.1}" r="{r}" class="marker" fill="white" stroke="{colour}" stroke-width="2"/>"#
        ),
    }
}

fn polygon(pts: &[(f64, f64)], attrs: &str) -> String {
    let p: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    format!(r#"<polygon points="{}" {attrs}/>"#, p.join(" "))
}

fn dash(s: &Series) -> &'static str {
    if s.dashed {
        r#" stroke-dasharray="7 4""#
    } else {
        ""
    }
}

/// One curve: a polyline (even of one point) and its markers, grouped and titled.
fn series(out: &mut String, a: &Axes, s: &Series, i: usize) {
    let colour = PALETTE[i % PALETTE.len()];
    let pts: Vec<(f64, f64)> = drawable(s).map(|(x, y)| (a.px(x), a.py(y))).collect();
    let coords: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
    let _ = writeln!(
        out,
        r#"<g class="series"><title>{}</title>"#,
        escape(&s.label)
    );
    let _ = writeln!(
        out,
        r#"<polyline fill="none" stroke="{colour}" stroke-width="2"{} points="{}"/>"#,
        dash(s),
        coords.join(" ")
    );
    for (x, y) in pts {
        out.push_str(&marker(i, x, y, colour));
        out.push('\n');
    }
    out.push_str("</g>\n");
}

fn legend(out: &mut String, fig: &Figure) {
    let x = WIDTH - RIGHT + 20.0;
    for (i, s) in fig.series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let y = TOP + 10.0 + 22.0 * i as f64;
        let _ = writeln!(
            out,
            r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="2"{}/>"#,
            x + 36.0,
            dash(s)
        );
        out.push_str(&marker(i, x + 18.0, y, colour));
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}">{}</text>"#,
            x + 44.0,
            y + 4.5,
            escape(&s.label)
        );
    }
}

fn caption(out: &mut String, fig: &Figure) {
    for (i, line) in fig.caption.iter().enumerate() {
        let _ = writeln!(
            out,
            r##"<text x="{LEFT}" y="{}" font-size="12" fill="#444">{}</text>"##,
            HEIGHT - BOTTOM + 62.0 + 16.0 * i as f64,
            escape(line)
        );
    }
}

/// Points of a curve, in n order, as (n, value).
fn points(mut pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    pts.sort_by(|a, b| a.0.total_cmp(&b.0));
    pts
}

/// Curve names in first-appearance order.
fn curve_order<'a>(names: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for n in names {
        if !order.iter().any(|o| o == n) {
            order.push(n.to_string());
        }
    }
    order
}

/// What each measure means, for the subtitle.
pub fn measure_text(measure: &str) -> &'static str {
    match measure {
        "kernel" => "measure: kernel (TW_IOC_BENCH: the reset loop timed inside the kernel)",
        "ioctl" => "measure: ioctl (timed in userspace: two system calls per reset)",
        _ => "measure: unknown",
    }
}

/// The Figure 9 chart of one measure from fig9.csv rows.
pub fn fig9_figure(rows: &[Row], measure: &str, title: &str) -> Figure {
    let rows: Vec<&Row> = rows.iter().filter(|r| r.measure == measure).collect();
    let series = curve_order(rows.iter().map(|r| r.curve.as_str()))
        .into_iter()
        .map(|name| {
            let mine = rows.iter().filter(|r| r.curve == name);
            Series {
                dashed: rows
                    .iter()
                    .any(|r| r.curve == name && r.interface == "timeout"),
                points: points(
                    mine.filter_map(|r| r.ns_per_op.map(|v| (r.n as f64, v)))
                        .collect(),
                ),
                label: name,
            }
        })
        .collect();
    Figure {
        title: title.to_string(),
        subtitle: format!("{}; ns per reset (cancel + start)", measure_text(measure)),
        x_label: "outstanding callouts n".into(),
        y_label: "time per reset".into(),
        caption: vec![
            "n = 0 is measured and in the CSV but cannot sit on a log axis: it is not drawn.".into(),
            "Dashed: the old interface (timeout/untimeout, hashed). A line that ends early stopped at the time budget".into(),
            "or at a scheme's capacity limit (see results.md).".into(),
        ],
        series,
    }
}

/// The per-tick bookkeeping chart from tick.csv rows.
pub fn tick_figure(rows: &[TickRow], title: &str) -> Figure {
    let series = curve_order(rows.iter().map(|r| r.curve.as_str()))
        .into_iter()
        .map(|name| Series {
            dashed: false,
            points: points(
                rows.iter()
                    .filter(|r| r.curve == name)
                    .filter_map(|r| r.ns_per_tick.map(|v| (r.n as f64, v)))
                    .collect(),
            ),
            label: name,
        })
        .collect();
    Figure {
        title: title.to_string(),
        subtitle:
            "measure: kernel (TW_BENCH_TICK); ns per tick: nothing due, or over a whole turnover"
                .into(),
        x_label: "outstanding callouts n".into(),
        y_label: "time per tick".into(),
        caption: vec![
            "n = 0 is measured and in the CSV but cannot sit on a log axis: it is not drawn."
                .into(),
        ],
        series,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(curve: &str, interface: &str, measure: &str, n: u64, ns: Option<f64>) -> Row {
        Row {
            curve: curve.into(),
            interface: interface.into(),
            measure: measure.into(),
            n,
            ns_per_op: ns,
            iterations: 10,
            note: String::new(),
        }
    }

    /// A synthetic fig9.csv: a linear baseline, two flat curves, an ioctl row.
    fn synthetic() -> Vec<Row> {
        let mut rows = Vec::new();
        for n in [0u64, 1, 10, 100, 1000, 10_000] {
            let lin = 50.0 + 2.0 * n as f64;
            rows.push(row("bsd-traditional", "timeout", "kernel", n, Some(lin)));
            rows.push(row(
                "scheme6-setcallout",
                "setcallout",
                "kernel",
                n,
                Some(90.0),
            ));
            rows.push(row("scheme7-timeout", "timeout", "kernel", n, Some(120.0)));
        }
        rows.push(row("bsd-traditional", "timeout", "kernel", 30_000, None));
        rows.push(row(
            "scheme6-setcallout",
            "setcallout",
            "ioctl",
            10,
            Some(700.0),
        ));
        rows
    }

    #[test]
    fn labels_at_decades() {
        assert_eq!(count_label(0), "1");
        assert_eq!(count_label(3), "1k");
        assert_eq!(count_label(5), "100k");
        assert_eq!(count_label(6), "1M");
        assert_eq!(ns_label(1), "10 ns");
        assert_eq!(ns_label(3), "1 µs");
        assert_eq!(ns_label(8), "100 ms");
        assert_eq!(ns_label(10), "10 s");
    }

    #[test]
    fn decades_cover_the_data() {
        assert_eq!(decades([1.0, 10_000.0].into_iter()), (0, 4));
        assert_eq!(decades([95.0, 97.0].into_iter()), (1, 2));
        assert_eq!(decades([100.0].into_iter()), (2, 3));
        assert_eq!(decades([0.0, -1.0].into_iter()), (0, 1));
    }

    #[test]
    fn svg_is_well_formed_with_one_polyline_per_curve() {
        let fig = fig9_figure(&synthetic(), "kernel", "Figure 9 & co <test>");
        assert_eq!(fig.series.len(), 3);
        let svg = render_svg(&fig);
        assert!(svg.starts_with("<svg "));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 3);
        assert_eq!(svg.matches("<path").count(), 0);
        for label in ["bsd-traditional", "scheme6-setcallout", "scheme7-timeout"] {
            assert!(
                svg.contains(&format!(">{label}</text>")),
                "legend has {label}"
            );
        }
        assert!(
            svg.contains("Figure 9 &amp; co &lt;test&gt;"),
            "title escaped"
        );
        assert!(svg.contains("measure: kernel"));
        assert!(svg.contains(">1k</text>") && svg.contains(">10k</text>"));
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
        // Every opened element is closed: as many '<' as '>' and tags balanced for g/svg.
        assert_eq!(svg.matches('<').count(), svg.matches('>').count());
        assert_eq!(svg.matches("<g ").count(), svg.matches("</g>").count());
    }

    #[test]
    fn n_zero_and_unmeasured_points_are_not_drawn() {
        let fig = fig9_figure(&synthetic(), "kernel", "t");
        let base = &fig.series[0];
        assert_eq!(base.label, "bsd-traditional");
        assert!(base.dashed);
        assert_eq!(base.points.len(), 6, "n = 30000 was not measured");
        assert_eq!(drawable(base).count(), 5, "n = 0 is off the log axis");
        let svg = render_svg(&fig);
        // 5 + 5 + 5 markers in the plot, one per curve in the legend.
        assert_eq!(svg.matches(r#"class="marker""#).count(), 15 + 3);
    }

    #[test]
    fn the_ioctl_figure_only_has_ioctl_rows() {
        let fig = fig9_figure(&synthetic(), "ioctl", "t");
        assert_eq!(fig.series.len(), 1);
        assert!(fig.subtitle.contains("ioctl"));
    }

    #[test]
    fn an_empty_figure_still_renders() {
        let svg = render_svg(&fig9_figure(&[], "kernel", "empty"));
        assert!(svg.starts_with("<svg ") && svg.contains("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 0);
    }

    #[test]
    fn the_tick_figure_has_a_line_per_scheme() {
        let rows: Vec<TickRow> = [("scheme6-setcallout", 1.0), ("scheme7-setcallout", 2.0)]
            .iter()
            .flat_map(|&(c, k)| {
                [0u64, 10, 1000].map(|n| TickRow {
                    curve: c.into(),
                    n,
                    ns_per_tick: Some(k * (n as f64 + 10.0)),
                    ticks: 1000,
                    note: String::new(),
                })
            })
            .collect();
        let svg = render_svg(&tick_figure(&rows, "ticks"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("TW_BENCH_TICK"));
    }
}
