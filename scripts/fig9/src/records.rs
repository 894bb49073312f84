// SPDX-License-Identifier: GPL-2.0

//! The result tables, one serde record type per CSV file (fig9.csv, tick.csv, memory.csv,
//! wakeups.csv), read and written with the `csv` crate; and the [`Spread`] of a point's
//! repeats that the tables, figures and summary show.
//!
//! Columns added since the first published run (`repeat`, `max_hold_ns`, `paired_n`) come last
//! and default when absent, so the CSV files in doc/ still read.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde::Serialize;
use serde::Serializer;
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

/// The records of a CSV text.
pub fn parse<T: DeserializeOwned>(text: &str) -> Result<Vec<T>, String> {
    csv::Reader::from_reader(text.as_bytes())
        .deserialize()
        .enumerate()
        .map(|(i, r)| r.map_err(|e| format!("record {}: {e}", i + 1)))
        .collect()
}

/// The records of the CSV file at `path`.
pub fn read<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The column names of a CSV text.
pub fn header(text: &str) -> Result<Vec<String>, String> {
    let mut r = csv::Reader::from_reader(text.as_bytes());
    let h = r.headers().map_err(|e| e.to_string())?;
    Ok(h.iter().map(String::from).collect())
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

    #[test]
    fn spread_is_median_min_max() {
        let s = Spread::of([5.0, 1.0, 3.0]).unwrap();
        assert_eq!((s.median, s.min, s.max, s.count), (3.0, 1.0, 5.0, 3));
        assert_eq!(Spread::of([1.0, 2.0, 4.0, 10.0]).unwrap().median, 3.0);
        assert_eq!(Spread::of([]), None);
    }
}
