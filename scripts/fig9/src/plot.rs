// SPDX-License-Identifier: GPL-2.0

//! Log-log line charts as SVG (plotters), in the manner of the paper's Figure 9: x the
//! outstanding callouts, y the cost, one line with markers per curve through the medians of
//! its repeats, a bar from their least to their greatest, a legend beside the plot, grid lines
//! at decades and lighter ones between.
//!
//! n = 0 has no place on a log axis: points with x or y at or below 0 are left out of the
//! drawing (they stay in the CSV), and the caption says so.

use crate::records::Row;
use crate::records::Spread;
use crate::records::TickRow;
use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::HPos;
use plotters::style::text_anchor::Pos;
use plotters::style::text_anchor::VPos;

const WIDTH: u32 = 900;
const HEIGHT: u32 = 620;
const LEFT: i32 = 90;
const RIGHT: i32 = 260; // the legend lives here
const TOP: i32 = 80;
const BOTTOM: i32 = 100;
/// Room for the tick labels and the axis description, inside the margins above.
const X_LABELS: i32 = 50;
const Y_LABELS: i32 = 80;
const FONT: &str = "Helvetica, Arial, sans-serif";

/// Distinct colours (Okabe-Ito, then more), cycled.
const PALETTE: [RGBColor; 14] = [
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0xe6, 0x9f, 0x00),
    RGBColor(0x56, 0xb4, 0xe9),
    RGBColor(0x00, 0x9e, 0x73),
    RGBColor(0x00, 0x72, 0xb2),
    RGBColor(0xd5, 0x5e, 0x00),
    RGBColor(0xcc, 0x79, 0xa7),
    RGBColor(0x7f, 0x7f, 0x7f),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xbc, 0xbd, 0x22),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x17, 0xbe, 0xcf),
    RGBColor(0xa6, 0x0d, 0x2a),
    RGBColor(0x2c, 0xa0, 0x2c),
];

/// One line of a chart: (n, spread of the repeats) per point.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    pub label: String,
    /// Dashed: the old (timeout) interface.
    pub dashed: bool,
    pub points: Vec<(f64, Spread)>,
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

impl Figure {
    /// Whether the chart would draw no point: every curve unmeasured, or none at all.
    pub fn is_blank(&self) -> bool {
        self.series.iter().all(|s| drawable(s).next().is_none())
    }
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

/// The points of `s` that a log-log chart can show.
fn drawable(s: &Series) -> impl Iterator<Item = (f64, Spread)> + '_ {
    s.points
        .iter()
        .copied()
        .filter(|(x, y)| *x > 0.0 && y.median > 0.0 && x.is_finite() && y.median.is_finite())
}

/// A log axis over decades `lo..=hi`: labels at the decades, light lines at 2..9 of each.
fn log_axis((lo, hi): (i32, i32)) -> WithKeyPoints<LogCoord<f64>> {
    let at = |e: i32| 10f64.powi(e);
    let minor = (lo..hi).flat_map(move |e| (2..10).map(move |m| f64::from(m) * at(e)));
    (at(lo)..at(hi))
        .log_scale()
        .with_key_points((lo..=hi).map(at).collect::<Vec<_>>())
        .with_light_points(minor)
}

/// The decade exponent of a key point.
fn exponent(v: f64) -> i32 {
    v.log10().round() as i32
}

/// A font of `size` px: plotters takes sizes in points of 1/1.24 px.
fn font(size: f64) -> FontDesc<'static> {
    (FONT, size * 1.24).into_font()
}

fn text_style(size: f64, colour: RGBColor, pos: Pos) -> TextStyle<'static> {
    font(size).color(&colour).pos(pos)
}

fn centre() -> Pos {
    Pos::new(HPos::Center, VPos::Center)
}

fn left_middle() -> Pos {
    Pos::new(HPos::Left, VPos::Center)
}

/// The chart as an SVG document.
pub fn render_svg(fig: &Figure) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT)).into_drawing_area();
        draw(&root, fig).map_err(|e| format!("plot: {e}"))?;
        root.present().map_err(|e| format!("plot: {e}"))?;
    }
    Ok(svg)
}

/// Runs `$body` with `$m` bound to a function from a point (data or pixel coordinates) to
/// marker `$shape` there: filled circle, square, triangle, diamond, inverted triangle, ring.
/// (A macro: each shape is its own element type, and plotters draws only `'static` dynamic
/// elements.)
macro_rules! with_marker {
    ($shape:expr, $colour:expr, |$m:ident| $body:expr) => {{
        let fill = $colour.filled();
        let r = 4;
        match $shape % 6 {
            0 => {
                let $m = |at| EmptyElement::at(at) + Circle::new((0, 0), r, fill);
                $body
            }
            1 => {
                let $m = |at| EmptyElement::at(at) + Rectangle::new([(-r, -r), (r, r)], fill);
                $body
            }
            2 => {
                let $m = |at| {
                    EmptyElement::at(at)
                        + Polygon::new(vec![(0, -r - 1), (r + 1, r), (-r - 1, r)], fill)
                };
                $body
            }
            3 => {
                let $m = |at| {
                    EmptyElement::at(at)
                        + Polygon::new(vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)], fill)
                };
                $body
            }
            4 => {
                let $m = |at| {
                    EmptyElement::at(at)
                        + Polygon::new(vec![(-r - 1, -r), (r + 1, -r), (0, r + 1)], fill)
                };
                $body
            }
            _ => {
                let $m = |at| {
                    EmptyElement::at(at)
                        + Circle::new((0, 0), r, WHITE.filled())
                        + Circle::new((0, 0), r, $colour.stroke_width(2))
                };
                $body
            }
        }
    }};
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type DrawResult<'a> =
    Result<(), DrawingAreaErrorKind<<SVGBackend<'a> as DrawingBackend>::ErrorType>>;

fn draw<'a>(root: &Area<'a>, fig: &Figure) -> DrawResult<'a> {
    root.fill(&WHITE)?;
    titles(root, fig)?;
    let points = || fig.series.iter().flat_map(drawable);
    let x = decades(points().map(|p| p.0));
    let y = decades(points().flat_map(|p| [p.1.min, p.1.max]));
    let mut chart = ChartBuilder::on(root)
        .margin_top(TOP)
        .margin_right(RIGHT)
        .margin_left(LEFT - Y_LABELS)
        .margin_bottom(BOTTOM - X_LABELS)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(log_axis(x), log_axis(y))?;
    chart
        .configure_mesh()
        .x_desc(fig.x_label.as_str())
        .y_desc(fig.y_label.as_str())
        .x_label_formatter(&|v| count_label(exponent(*v)))
        .y_label_formatter(&|v| ns_label(exponent(*v)))
        .label_style(font(13.0))
        .axis_desc_style(font(13.0))
        .bold_line_style(RGBColor(0xcc, 0xcc, 0xcc))
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .axis_style(BLACK)
        .draw()?;
    let frame = chart.plotting_area().get_pixel_range();
    root.draw(&Rectangle::new(
        [
            (frame.0.start, frame.1.start),
            (frame.0.end - 1, frame.1.end - 1),
        ],
        BLACK.stroke_width(1),
    ))?;
    for (i, s) in fig.series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let line = colour.stroke_width(2);
        let pts: Vec<(f64, f64)> = drawable(s).map(|(x, y)| (x, y.median)).collect();
        if s.dashed {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 7, 4, line))?;
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), line))?;
        }
        let spread = drawable(s).filter(|(_, y)| y.max > y.min);
        chart.draw_series(spread.map(|(x, y)| {
            ErrorBar::new_vertical(x, y.min, y.median, y.max, colour.stroke_width(1), 6)
        }))?;
        with_marker!(i, colour, |m| chart.draw_series(pts.iter().map(|&p| m(p))))?;
    }
    legend(root, fig)?;
    Ok(())
}

fn titles<'a>(root: &Area<'a>, fig: &Figure) -> DrawResult<'a> {
    let mid = LEFT + (WIDTH as i32 - LEFT - RIGHT) / 2;
    let title = font(18.0)
        .style(FontStyle::Bold)
        .color(&BLACK)
        .pos(centre());
    root.draw(&Text::new(fig.title.clone(), (mid, 30), title))?;
    let grey = RGBColor(0x44, 0x44, 0x44);
    root.draw(&Text::new(
        fig.subtitle.clone(),
        (mid, 54),
        text_style(13.0, grey, centre()),
    ))?;
    for (i, line) in fig.caption.iter().enumerate() {
        let y = HEIGHT as i32 - BOTTOM + 58 + 16 * i as i32;
        root.draw(&Text::new(
            line.clone(),
            (LEFT, y),
            text_style(12.0, grey, left_middle()),
        ))?;
    }
    Ok(())
}

/// The legend, beside the plot: each curve's line, marker and name.
fn legend<'a>(root: &Area<'a>, fig: &Figure) -> DrawResult<'a> {
    let x = WIDTH as i32 - RIGHT + 20;
    for (i, s) in fig.series.iter().enumerate() {
        let colour = PALETTE[i % PALETTE.len()];
        let y = TOP + 10 + 22 * i as i32;
        let line = colour.stroke_width(2);
        if s.dashed {
            for x0 in (x..x + 36).step_by(11) {
                root.draw(&PathElement::new(
                    vec![(x0, y), ((x0 + 7).min(x + 36), y)],
                    line,
                ))?;
            }
        } else {
            root.draw(&PathElement::new(vec![(x, y), (x + 36, y)], line))?;
        }
        with_marker!(i, colour, |m| root.draw(&m((x + 18, y))))?;
        root.draw(&Text::new(
            s.label.clone(),
            (x + 44, y),
            text_style(13.0, BLACK, left_middle()),
        ))?;
    }
    Ok(())
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

/// The points of a curve, in n order: the spread of each n's values.
fn points(values: impl Iterator<Item = (u64, f64)>) -> Vec<(f64, Spread)> {
    let mut by_n: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
    for (n, v) in values {
        by_n.entry(n).or_default().push(v);
    }
    by_n.into_iter()
        .filter_map(|(n, v)| Spread::of(v).map(|s| (n as f64, s)))
        .collect()
}

/// What each measure means, for the subtitle.
pub fn measure_text(measure: &str) -> &'static str {
    match measure {
        "kernel" => "measure: kernel (TW_IOC_BENCH: the reset loop timed inside the kernel)",
        "ioctl" => "measure: ioctl (timed in userspace: system calls per reset)",
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
                points: points(mine.filter_map(|r| r.ns_per_op.map(|v| (r.n, v)))),
                label: name,
            }
        })
        .collect();
    Figure {
        title: title.to_string(),
        subtitle: format!("{}; ns per reset", measure_text(measure)),
        x_label: "outstanding callouts n".into(),
        y_label: "time per reset".into(),
        caption: vec![
            "Median of the repeats, bar from least to greatest. n = 0 is in the CSV, not on the log axis.".into(),
            "Dashed: the old interface (timeout/untimeout, hashed); -mod: reset in place. A line that ends early".into(),
            "stopped at the time budget or at a scheme's capacity limit (see results.md).".into(),
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
                    .filter_map(|r| r.ns_per_tick.map(|v| (r.n, v))),
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
            "Median of the repeats, bar from least to greatest. n = 0 is in the CSV, not on the log axis."
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
            ..Row::default()
        }
    }

    /// A synthetic fig9.csv: a linear baseline, two flat curves, an ioctl row.
    fn synthetic() -> Vec<Row> {
        let mut rows = Vec::new();
        for n in [0u64, 1, 10, 100, 1000, 10_000] {
            let lin = 50.0 + 2.0 * n as f64;
            rows.push(row("bsd-traditional", "timeout", "kernel", n, Some(lin)));
            for v in [85.0, 90.0, 99.0] {
                rows.push(row(
                    "scheme6-setcallout",
                    "setcallout",
                    "kernel",
                    n,
                    Some(v),
                ));
            }
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
    fn svg_has_a_line_and_a_legend_entry_per_curve() {
        let fig = fig9_figure(&synthetic(), "kernel", "Figure 9 & co <test>");
        assert_eq!(fig.series.len(), 3);
        let svg = render_svg(&fig).unwrap();
        assert!(svg.starts_with("<svg "));
        assert!(svg.trim_end().ends_with("</svg>"));
        // A solid curve is one polyline, and so is its legend line; dashes are several.
        assert!(svg.matches("<polyline").count() >= 2 * 3);
        for label in ["bsd-traditional", "scheme6-setcallout", "scheme7-timeout"] {
            assert!(
                svg.contains(&format!("{label}\n</text>")),
                "legend has {label}"
            );
        }
        assert!(
            svg.contains("Figure 9 &amp; co &lt;test&gt;"),
            "title escaped"
        );
        assert!(svg.contains("measure: kernel"));
        for label in ["1k", "10k", "10 ns", "1 µs"] {
            assert!(
                svg.contains(&format!(">\n{label}\n</text>")),
                "axis label {label}"
            );
        }
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }

    #[test]
    fn n_zero_and_unmeasured_points_are_not_drawn() {
        let fig = fig9_figure(&synthetic(), "kernel", "t");
        let base = &fig.series[0];
        assert_eq!(base.label, "bsd-traditional");
        assert!(base.dashed);
        assert_eq!(base.points.len(), 6, "n = 30000 was not measured");
        assert_eq!(drawable(base).count(), 5, "n = 0 is off the log axis");
    }

    #[test]
    fn repeats_become_a_median_and_a_bar() {
        let fig = fig9_figure(&synthetic(), "kernel", "t");
        let s6 = &fig.series[1];
        assert_eq!(s6.points.len(), 6);
        let (n, s) = s6.points[4];
        assert_eq!((n, s.median, s.min, s.max), (1000.0, 90.0, 85.0, 99.0));
        let with_bars = render_svg(&fig).unwrap();
        let one = fig9_figure(
            &synthetic()
                .into_iter()
                .filter(|r| r.ns_per_op != Some(85.0) && r.ns_per_op != Some(99.0))
                .collect::<Vec<_>>(),
            "kernel",
            "t",
        );
        let without = render_svg(&one).unwrap();
        // Each of the 5 drawable points has a bar of 3 lines (stem and two whiskers).
        let lines = |s: &str| s.matches("<line").count();
        assert_eq!(lines(&with_bars) - lines(&without), 5 * 3);
    }

    #[test]
    fn the_ioctl_figure_only_has_ioctl_rows() {
        let fig = fig9_figure(&synthetic(), "ioctl", "t");
        assert_eq!(fig.series.len(), 1);
        assert!(fig.subtitle.contains("ioctl"));
    }

    #[test]
    fn an_empty_figure_still_renders() {
        let svg = render_svg(&fig9_figure(&[], "kernel", "empty")).unwrap();
        assert!(svg.starts_with("<svg ") && svg.contains("</svg>"));
    }

    #[test]
    fn the_tick_figure_has_a_line_per_scheme() {
        let rows: Vec<TickRow> = [("scheme6", 1.0), ("scheme7", 2.0)]
            .iter()
            .flat_map(|&(c, k)| {
                [0u64, 10, 1000].map(|n| TickRow {
                    curve: c.into(),
                    n,
                    ns_per_tick: Some(k * (n as f64 + 10.0)),
                    ticks: 1000,
                    ..TickRow::default()
                })
            })
            .collect();
        let fig = tick_figure(&rows, "ticks");
        assert_eq!(fig.series.len(), 2);
        let svg = render_svg(&fig).unwrap();
        assert!(svg.contains("TW_BENCH_TICK"));
        assert!(svg.contains("scheme7\n</text>"));
    }
}
