// SPDX-License-Identifier: GPL-2.0

//! The result tables, one serde record type per CSV file (fig9.csv, tick.csv, memory.csv,
//! wakeups.csv), read and written with the `csv` crate; and the [`Spread`] of a point's
//! repeats that the tables, figures and summary show.
//!
//! Columns added since the first published run (`repeat`, `max_hold_ns`, `paired_n`) come last
//! and default when absent, so the CSV files in doc/ still read.
//!
//! A file is read only if every record is one `fig9 run` could have written ([`Check`]): costs
//! finite and not negative, and in fig9.csv one of the [`MEASURES`]. The set of measures is
//! closed: every table, figure and ratio selects its rows by measure, so a row of any other
//! would be left out of all of them without a word.

use crate::method::PAIR;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde::Serialize;
use serde::Serializer;
use std::io;
use std::io::Write;
use std::marker::PhantomData;
use std::path::Path;

/// Note of the row that ends a curve at the time budget.
pub const STOPPED: &str = "stopped: budget exceeded";

/// One row of fig9.csv: one repeat of one curve, one measure, one n. `ns_per_op` is empty
/// where the point was not measured, and `note` says why.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub curve: String,
    pub interface: String,
    /// "kernel" (TW_IOC_BENCH), "ioctl" (timed from userspace) or "pair" (TW_IOC_BENCH_PAIR:
    /// a module's curve and Linux's, alternated in one call; `method::PAIRS`).
    pub measure: String,
    pub n: u64,
    #[serde(serialize_with = "three_decimals")]
    pub ns_per_op: Option<f64>,
    pub iterations: u64,
    pub note: String,
    /// Which of the point's repeats (0 in files from before repeats).
    #[serde(default)]
    pub repeat: u32,
    /// The longest hold of the instance's lock in the bench (instance benches only).
    #[serde(default)]
    pub max_hold_ns: Option<u64>,
    /// The other n this repeat was measured back to back with (the key curves at the two n of
    /// `method::key_pair`: repeat i at one, then repeat i at the other); empty otherwise.
    #[serde(default)]
    pub paired_n: Option<u64>,
}

/// The measures of fig9.csv: "kernel", "ioctl" and "pair".
pub const MEASURES: [&str; 3] = ["kernel", "ioctl", PAIR];

/// What [`parse`] asks of a record beyond the types of its columns.
pub trait Check {
    /// Why the record cannot be one `fig9 run` wrote, if it cannot.
    fn check(&self) -> Result<(), String>;
}

/// A cost, a size or a rate of column `column`: finite and not negative, if there is one.
fn amount(column: &str, value: Option<f64>) -> Result<(), String> {
    match value {
        Some(v) if !v.is_finite() || v < 0.0 => {
            Err(format!("{column} is {v}: not a finite value >= 0"))
        }
        _ => Ok(()),
    }
}

impl Check for Row {
    fn check(&self) -> Result<(), String> {
        if !MEASURES.contains(&self.measure.as_str()) {
            return Err(format!(
                "unknown measure '{}' (measures: {})",
                self.measure,
                MEASURES.join(", ")
            ));
        }
        amount("ns_per_op", self.ns_per_op)
    }
}

impl Check for TickRow {
    fn check(&self) -> Result<(), String> {
        amount("ns_per_tick", self.ns_per_tick)
    }
}

impl Check for MemoryRow {
    fn check(&self) -> Result<(), String> {
        amount("bytes_per_callout", Some(self.bytes_per_callout))
    }
}

impl Check for WakeupRow {
    fn check(&self) -> Result<(), String> {
        amount("seconds", Some(self.seconds))?;
        amount("wakeups_per_s", self.wakeups_per_s)
    }
}

/// One row of tick.csv.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TickRow {
    pub curve: String,
    pub n: u64,
    #[serde(serialize_with = "three_decimals")]
    pub ns_per_tick: Option<f64>,
    pub ticks: u64,
    pub note: String,
    #[serde(default)]
    pub repeat: u32,
}

/// One row of memory.csv.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MemoryRow {
    pub curve: String,
    pub n: u64,
    pub capacity: u64,
    pub memory_bytes: u64,
    #[serde(serialize_with = "one_decimal")]
    pub bytes_per_callout: f64,
}

impl MemoryRow {
    pub fn new(curve: &str, n: u64, capacity: u64, memory_bytes: u64) -> MemoryRow {
        MemoryRow {
            curve: curve.into(),
            n,
            capacity,
            memory_bytes,
            bytes_per_callout: memory_bytes as f64 / capacity.max(1) as f64,
        }
    }

    /// n timers of `size` bytes each: Linux's, which live in their users' structures and cost
    /// their size per timer whatever n (the kernel's per-CPU bases aside).
    pub fn per_timer(curve: &str, n: u64, size: u64) -> MemoryRow {
        MemoryRow {
            curve: curve.into(),
            n,
            capacity: n,
            memory_bytes: n * size,
            bytes_per_callout: size as f64,
        }
    }
}

/// One row of wakeups.csv: how often an instance on the real clock woke in a wall-clock interval.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct WakeupRow {
    pub scheme: u32,
    /// "periodic" (TW_CONFIG_PERIODIC) or "tickless".
    pub clock: String,
    /// "idle", "one" (one callout 10 s away) or "many" (1000, 10 ms apart from 10 s on).
    pub load: String,
    pub callouts: u64,
    #[serde(serialize_with = "three_decimals_f")]
    pub seconds: f64,
    pub wakeups: u64,
    #[serde(serialize_with = "three_decimals")]
    pub wakeups_per_s: Option<f64>,
    pub ticks: u64,
    pub skipped: u64,
    pub note: String,
}

fn three_decimals<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(x) => s.serialize_str(&format!("{x:.3}")),
        None => s.serialize_none(),
    }
}

fn three_decimals_f<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{v:.3}"))
}

fn one_decimal<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{v:.1}"))
}

/// The CSV text of `rows`, header first (also when there are none).
pub fn render<T: Serialize + Default>(rows: &[T]) -> Result<String, String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if rows.is_empty() {
        // The header comes with the first record: take it from a default one.
        w.serialize(T::default()).map_err(|e| e.to_string())?;
    }
    for r in rows {
        w.serialize(r).map_err(|e| e.to_string())?;
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    let text = String::from_utf8(bytes).map_err(|e| e.to_string())?;
    Ok(match rows.is_empty() {
        true => text.lines().next().unwrap_or_default().to_string() + "\n",
        false => text,
    })
}

/// The records of a CSV text, each checked ([`Check`]); an error if there are none.
pub fn parse<T: DeserializeOwned + Check>(text: &str) -> Result<Vec<T>, String> {
    let rows = parse_rows(text)?;
    if rows.is_empty() {
        return Err("no records".into());
    }
    Ok(rows)
}

/// The records of a CSV text, each checked ([`Check`]); none is no error (a header alone is
/// what `fig9 run` writes where it measured nothing of the kind, as wakeups.csv with
/// `--wakeup-ms 0`).
pub fn parse_rows<T: DeserializeOwned + Check>(text: &str) -> Result<Vec<T>, String> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .enumerate()
        .map(|(i, r)| {
            r.map_err(|e| e.to_string())
                .and_then(|r: T| r.check().map(|()| r))
                .map_err(|e| format!("record {}: {e}", i + 1))
        })
        .collect()
}

/// The records of the CSV file at `path` ([`parse`]: at least one).
pub fn read<T: DeserializeOwned + Check>(path: &Path) -> Result<Vec<T>, String> {
    read_with(path, parse)
}

/// The records of the CSV file at `path`, perhaps none ([`parse_rows`]).
pub fn read_rows<T: DeserializeOwned + Check>(path: &Path) -> Result<Vec<T>, String> {
    read_with(path, parse_rows)
}

fn read_with<T>(path: &Path, parse: fn(&str) -> Result<Vec<T>, String>) -> Result<Vec<T>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The column names of a CSV text.
pub fn header(text: &str) -> Result<Vec<String>, String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().map_err(|e| e.to_string())?;
    Ok(h.iter().map(String::from).collect())
}

/// A CSV file written as its records come: the header at once, then each batch of records,
/// flushed to the writer at once ([`Appender::append`]). The text is [`render`]'s of all the
/// records appended.
pub struct Appender<W: Write, T> {
    w: csv::Writer<W>,
    rows: PhantomData<fn(&T)>,
}

impl<W: Write, T: Serialize + Default> Appender<W, T> {
    /// Writes the header to `w`.
    pub fn new(mut w: W) -> io::Result<Appender<W, T>> {
        w.write_all(render::<T>(&[]).map_err(io::Error::other)?.as_bytes())?;
        w.flush()?;
        Ok(Appender {
            w: csv::WriterBuilder::new().has_headers(false).from_writer(w),
            rows: PhantomData,
        })
    }

    /// Writes `rows` and flushes them to the writer.
    pub fn append(&mut self, rows: &[T]) -> io::Result<()> {
        for r in rows {
            self.w.serialize(r)?;
        }
        self.w.flush()
    }

    /// The writer, everything appended flushed to it.
    pub fn get_ref(&self) -> &W {
        self.w.get_ref()
    }
}

/// The median of a point's repeats, with their least and greatest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub count: usize,
}

impl Spread {
    /// The spread of `values`; `None` if there are none.
    pub fn of(values: impl IntoIterator<Item = f64>) -> Option<Spread> {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        let (&min, &max) = (v.first()?, v.last()?);
        let mid = v.len() / 2;
        let median = if v.len() % 2 == 1 {
            v[mid]
        } else {
            (v[mid - 1] + v[mid]) / 2.0
        };
        Some(Spread {
            median,
            min,
            max,
            count: v.len(),
        })
    }
}

/// The spread of the measured repeats of `curve`/`measure` at `n`.
pub fn point(rows: &[Row], curve: &str, measure: &str, n: u64) -> Option<Spread> {
    Spread::of(
        rows.iter()
            .filter(|r| r.curve == curve && r.measure == measure && r.n == n)
            .filter_map(|r| r.ns_per_op),
    )
}

/// A kernel-measure row of the setcallout interface, for tests.
#[cfg(test)]
pub(crate) fn test_row(curve: &str, n: u64, ns: Option<f64>, note: &str) -> Row {
    Row {
        curve: curve.into(),
        interface: "setcallout".into(),
        measure: "kernel".into(),
        n,
        ns_per_op: ns,
        iterations: 3,
        note: note.into(),
        ..Row::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(curve: &str, n: u64, ns: Option<f64>, note: &str) -> Row {
        Row {
            repeat: 2,
            max_hold_ns: Some(1500),
            ..test_row(curve, n, ns, note)
        }
    }

    #[test]
    fn fig9_rows_survive_a_round_trip() {
        let rows = vec![
            row("scheme6-setcallout", 0, Some(95.125), ""),
            row("bsd-traditional", 300_000, None, STOPPED),
            row("x", 1, Some(1.0), "a note, with a comma and \"quotes\""),
            Row {
                paired_n: Some(1_000_000),
                ..row("scheme7-setcallout", 1000, Some(284.5), "")
            },
        ];
        let text = render(&rows).unwrap();
        assert!(text.starts_with(
            "curve,interface,measure,n,ns_per_op,iterations,note,repeat,max_hold_ns,paired_n\n"
        ));
        assert_eq!(parse::<Row>(&text).unwrap(), rows);
    }

    #[test]
    fn the_published_csv_files_still_read() {
        let doc = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../doc");
        let rows: Vec<Row> = read(&doc.join("fig9.csv")).unwrap();
        assert!(rows.len() > 100);
        // The published run measured every point several times, each repeat on its own row.
        assert!(rows.iter().any(|r| r.repeat > 0));
        // It paired the key curves' points: their rows at the two n name each other.
        assert!(rows
            .iter()
            .any(|r| r.n == 1000 && r.paired_n == Some(1_000_000)));
        assert!(rows
            .iter()
            .any(|r| r.n == 1_000_000 && r.paired_n == Some(1000)));
        assert!(point(&rows, "scheme7-setcallout", "kernel", 1000).is_some());
        let ticks: Vec<TickRow> = read(&doc.join("tick.csv")).unwrap();
        assert!(ticks.iter().any(|t| t.curve == "scheme6-turnover"));
        let memory: Vec<MemoryRow> = read(&doc.join("memory.csv")).unwrap();
        assert!(memory.iter().all(|m| m.bytes_per_callout > 0.0));
    }

    #[test]
    fn a_csv_from_before_the_added_columns_still_reads() {
        let old = "curve,interface,measure,n,ns_per_op,iterations,note\n\
                   scheme7-setcallout,setcallout,kernel,1000,284.000,10,\n";
        let rows: Vec<Row> = parse(old).unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].ns_per_op, Some(284.0));
        assert_eq!(
            (rows[0].repeat, rows[0].max_hold_ns, rows[0].paired_n),
            (0, None, None)
        );
    }

    #[test]
    fn tick_and_memory_rows_render_their_header() {
        let text = render::<TickRow>(&[]).unwrap();
        assert_eq!(text, "curve,n,ns_per_tick,ticks,note,repeat\n");
        assert!(header(&text).unwrap().contains(&"ns_per_tick".to_string()));
        let m = MemoryRow::new("c", 100, 128, 12_800);
        assert_eq!(m.bytes_per_callout, 100.0);
        assert!(render(&[m]).unwrap().ends_with("c,100,128,12800,100.0\n"));
        let l = MemoryRow::per_timer("linux-timer_list", 1000, 40);
        assert_eq!((l.capacity, l.memory_bytes), (1000, 40_000));
        assert!(render(&[l])
            .unwrap()
            .ends_with("linux-timer_list,1000,1000,40000,40.0\n"));
        // At n = 0 the size still shows.
        assert_eq!(MemoryRow::per_timer("l", 0, 64).bytes_per_callout, 64.0);
    }

    #[test]
    fn a_bad_record_is_an_error() {
        assert!(parse::<Row>("curve,n\nx,1\n").is_err());
        let e = parse::<TickRow>("curve,n,ns_per_tick,ticks,note\na,1,fast,3,\n").unwrap_err();
        assert!(e.starts_with("record 1:"), "{e}");
    }

    const HEADER: &str = "curve,interface,measure,n,ns_per_op,iterations,note\n";

    #[test]
    fn a_file_without_records_is_an_error() {
        assert_eq!(parse::<Row>(""), Err("no records".to_string()));
        assert_eq!(parse::<Row>(HEADER), Err("no records".to_string()));
        let tick = render::<TickRow>(&[]).unwrap();
        assert_eq!(parse::<TickRow>(&tick), Err("no records".to_string()));
        // Where none is no error: a header alone reads as no rows.
        assert_eq!(
            parse_rows::<WakeupRow>(&render::<WakeupRow>(&[]).unwrap()),
            Ok(vec![])
        );
    }

    #[test]
    fn a_cost_that_no_measure_gives_is_an_error() {
        let good = "a,setcallout,kernel,10,95.000,3,\n";
        for bad in ["-5", "NaN", "inf", "-inf", "infinity", "-0.001"] {
            let text = format!("{HEADER}{good}{good}a,setcallout,kernel,10,{bad},3,\n");
            let e = parse::<Row>(&text).unwrap_err();
            assert!(e.starts_with("record 3: ns_per_op is "), "{bad}: {e}");
        }
        // Zero and empty (not measured) are fine.
        let text =
            format!("{HEADER}{good}a,setcallout,kernel,10,0,3,\nb,setcallout,ioctl,0,,0,x\n");
        assert_eq!(parse::<Row>(&text).unwrap().len(), 3);
        let e = parse::<TickRow>("curve,n,ns_per_tick,ticks,note\nscheme6,1,-1.0,3,\n");
        assert!(e.unwrap_err().starts_with("record 1: ns_per_tick is -1"));
        let wakeups =
            "scheme,clock,load,callouts,seconds,wakeups,wakeups_per_s,ticks,skipped,note\n\
                       6,periodic,idle,0,2.0,10,NaN,0,0,\n";
        assert!(parse::<WakeupRow>(wakeups).is_err());
        let memory = "curve,n,capacity,memory_bytes,bytes_per_callout\nc,1,1,1,inf\n";
        assert!(parse::<MemoryRow>(memory).is_err());
    }

    #[test]
    fn a_measure_fig9_run_does_not_write_is_an_error() {
        for m in MEASURES {
            let text = format!("{HEADER}a,setcallout,{m},10,95.000,3,\n");
            assert!(parse::<Row>(&text).is_ok(), "{m}");
        }
        let text = format!("{HEADER}a,setcallout,kernel,1,1,1,\na,setcallout,wall,1,1,1,\n");
        let e = parse::<Row>(&text).unwrap_err();
        assert_eq!(
            e,
            "record 2: unknown measure 'wall' (measures: kernel, ioctl, pair)"
        );
        assert!(parse::<Row>(&format!("{HEADER}a,setcallout,Kernel,1,1,1,\n")).is_err());
    }

    #[test]
    fn appended_records_are_the_rendered_file() {
        let rows: Vec<Row> = (0..5)
            .map(|i| {
                row(
                    "c",
                    i,
                    Some(i as f64 + 0.5),
                    if i == 2 { "a, \"note\"" } else { "" },
                )
            })
            .collect();
        let mut a = Appender::<Vec<u8>, Row>::new(Vec::new()).unwrap();
        assert_eq!(a.get_ref(), render::<Row>(&[]).unwrap().as_bytes());
        a.append(&rows[..2]).unwrap();
        a.append(&[]).unwrap();
        a.append(&rows[2..]).unwrap();
        let text = String::from_utf8(a.get_ref().clone()).unwrap();
        assert_eq!(text, render(&rows).unwrap());
        assert_eq!(parse::<Row>(&text).unwrap(), rows);
    }

    #[test]
    fn spread_is_median_min_max() {
        let s = Spread::of([5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.count), (3.0, 1.0, 5.0, 3));
        assert_eq!(Spread::of([1.0, 2.0, 4.0, 10.0]).unwrap().median, 3.0);
        assert_eq!(Spread::of([]), None);
    }
}
