// SPDX-License-Identifier: GPL-2.0

//! The three result tables as CSV: writing, reading back (for `plot` and `summary`), and the
//! typed rows. Fields are quoted only when they hold a comma, a quote or a newline.

use std::fmt::Write as _;

pub const FIG9_HEADER: [&str; 7] = [
    "curve",
    "interface",
    "measure",
    "n",
    "ns_per_op",
    "iterations",
    "note",
];
pub const TICK_HEADER: [&str; 5] = ["curve", "n", "ns_per_tick", "ticks", "note"];
pub const MEMORY_HEADER: [&str; 5] = [
    "curve",
    "n",
    "capacity",
    "memory_bytes",
    "bytes_per_callout",
];

/// Note of the row that ends a curve at the time budget.
pub const STOPPED: &str = "stopped: budget exceeded";

/// One row of fig9.csv: one curve, one measure, one n. `ns_per_op` is empty where the point
/// was not measured, and `note` says why.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub curve: String,
    pub interface: String,
    /// "kernel" (TW_IOC_BENCH) or "ioctl" (timed from userspace).
    pub measure: String,
    pub n: u64,
    pub ns_per_op: Option<f64>,
    pub iterations: u64,
    pub note: String,
}

/// One row of tick.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct TickRow {
    pub curve: String,
    pub n: u64,
    pub ns_per_tick: Option<f64>,
    pub ticks: u64,
    pub note: String,
}

/// One row of memory.csv.
#[derive(Clone, Debug, PartialEq)]
pub struct MemoryRow {
    pub curve: String,
    pub n: u64,
    pub capacity: u64,
    pub memory_bytes: u64,
}

impl MemoryRow {
    pub fn bytes_per_callout(&self) -> f64 {
        self.memory_bytes as f64 / self.capacity.max(1) as f64
    }
}

/// A CSV file: its header and its records.
pub struct Table {
    pub header: Vec<String>,
    pub records: Vec<Vec<String>>,
}

/// `field`, quoted if it must be.
fn quote(field: &str) -> String {
    if field.contains([',', '"', '\n']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// A float with enough digits for a nanosecond figure, or nothing.
fn float(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_default()
}

/// A CSV text of `header` and `records`.
pub fn render(header: &[&str], records: &[Vec<String>]) -> String {
    let mut out = header.join(",");
    out.push('\n');
    for r in records {
        let fields: Vec<String> = r.iter().map(|f| quote(f)).collect();
        let _ = writeln!(out, "{}", fields.join(","));
    }
    out
}

/// A row of one of the CSV files: the file's header, and the row's fields in its order.
pub trait Record {
    const HEADER: &'static [&'static str];
    fn fields(&self) -> Vec<String>;
}

impl Record for Row {
    const HEADER: &'static [&'static str] = &FIG9_HEADER;
    fn fields(&self) -> Vec<String> {
        vec![
            self.curve.clone(),
            self.interface.clone(),
            self.measure.clone(),
            self.n.to_string(),
            float(self.ns_per_op),
            self.iterations.to_string(),
            self.note.clone(),
        ]
    }
}

impl Record for TickRow {
    const HEADER: &'static [&'static str] = &TICK_HEADER;
    fn fields(&self) -> Vec<String> {
        vec![
            self.curve.clone(),
            self.n.to_string(),
            float(self.ns_per_tick),
            self.ticks.to_string(),
            self.note.clone(),
        ]
    }
}

impl Record for MemoryRow {
    const HEADER: &'static [&'static str] = &MEMORY_HEADER;
    fn fields(&self) -> Vec<String> {
        vec![
            self.curve.clone(),
            self.n.to_string(),
            self.capacity.to_string(),
            self.memory_bytes.to_string(),
            format!("{:.1}", self.bytes_per_callout()),
        ]
    }
}

/// The CSV text of `rows`, header first.
pub fn render_rows<R: Record>(rows: &[R]) -> String {
    let records: Vec<Vec<String>> = rows.iter().map(R::fields).collect();
    render(R::HEADER, &records)
}

/// Splits one CSV line into fields (quotes as written by [`render`]).
fn split(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    fields.push(cur);
    fields
}

/// Parses a CSV text; every record must have the header's width.
pub fn parse(text: &str) -> Result<Table, String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header = split(lines.next().ok_or("empty CSV")?);
    let mut records = Vec::new();
    for (i, line) in lines.enumerate() {
        let r = split(line);
        if r.len() != header.len() {
            return Err(format!(
                "record {}: {} fields, the header has {}",
                i + 1,
                r.len(),
                header.len()
            ));
        }
        records.push(r);
    }
    Ok(Table { header, records })
}

impl Table {
    /// True if the header is exactly `names`.
    pub fn is(&self, names: &[&str]) -> bool {
        self.header
            .iter()
            .map(String::as_str)
            .eq(names.iter().copied())
    }

    fn expect(&self, names: &[&str]) -> Result<(), String> {
        if self.is(names) {
            Ok(())
        } else {
            Err(format!(
                "unexpected header '{}', wanted '{}'",
                self.header.join(","),
                names.join(",")
            ))
        }
    }
}

fn num<T: std::str::FromStr>(s: &str, what: &str) -> Result<T, String> {
    s.trim().parse().map_err(|_| format!("bad {what} '{s}'"))
}

fn opt_float(s: &str) -> Result<Option<f64>, String> {
    if s.trim().is_empty() {
        Ok(None)
    } else {
        num(s, "number").map(Some)
    }
}

pub fn fig9_rows(t: &Table) -> Result<Vec<Row>, String> {
    t.expect(&FIG9_HEADER)?;
    t.records
        .iter()
        .map(|r| {
            Ok(Row {
                curve: r[0].clone(),
                interface: r[1].clone(),
                measure: r[2].clone(),
                n: num(&r[3], "n")?,
                ns_per_op: opt_float(&r[4])?,
                iterations: num(&r[5], "iterations")?,
                note: r[6].clone(),
            })
        })
        .collect()
}

pub fn tick_rows(t: &Table) -> Result<Vec<TickRow>, String> {
    t.expect(&TICK_HEADER)?;
    t.records
        .iter()
        .map(|r| {
            Ok(TickRow {
                curve: r[0].clone(),
                n: num(&r[1], "n")?,
                ns_per_tick: opt_float(&r[2])?,
                ticks: num(&r[3], "ticks")?,
                note: r[4].clone(),
            })
        })
        .collect()
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
            iterations: 7,
            note: note.into(),
        }
    }

    #[test]
    fn fig9_rows_survive_a_round_trip() {
        let rows = vec![
            row("scheme6-setcallout", 0, Some(95.125), ""),
            row("bsd-traditional", 300_000, None, STOPPED),
            row("x", 1, Some(1.0), "a note, with a comma and \"quotes\""),
        ];
        let text = render_rows(&rows);
        assert!(text.starts_with("curve,interface,measure,n,ns_per_op,iterations,note\n"));
        let back = fig9_rows(&parse(&text).unwrap()).unwrap();
        assert_eq!(back, rows);
    }

    #[test]
    fn tick_rows_survive_a_round_trip() {
        let rows = vec![TickRow {
            curve: "scheme7-setcallout".into(),
            n: 1000,
            ns_per_tick: Some(12.5),
            ticks: 262_144,
            note: String::new(),
        }];
        assert_eq!(
            tick_rows(&parse(&render_rows(&rows)).unwrap()).unwrap(),
            rows
        );
    }

    #[test]
    fn a_wrong_header_or_width_is_an_error() {
        let t = parse("a,b\n1,2\n").unwrap();
        assert!(fig9_rows(&t).is_err());
        assert!(parse("a,b\n1,2,3\n").is_err());
        assert!(parse("").is_err());
    }

    #[test]
    fn memory_rows_divide_by_capacity() {
        let m = MemoryRow {
            curve: "c".into(),
            n: 100,
            capacity: 128,
            memory_bytes: 12_800,
        };
        assert_eq!(m.bytes_per_callout(), 100.0);
        assert!(render_rows(&[m]).ends_with("c,100,128,12800,100.0\n"));
    }
}
