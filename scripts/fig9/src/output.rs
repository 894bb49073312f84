// SPDX-License-Identifier: GPL-2.0

//! The files `fig9` writes: each whole or not at all ([`write_atomic`]), never over the file it
//! reads ([`same_file`]), and `fig9 run`'s CSV files as they grow ([`Journal`]).

use crate::records::Appender;
use crate::records::MemoryRow;
use crate::records::Row;
use crate::records::TickRow;
use crate::run::Sink;
use std::fs;
use std::fs::File;
use std::io;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::path::PathBuf;

/// Writes `bytes` to `path` whole: to a temporary file beside it, synced, then renamed over
/// it, so that `path` holds its old contents or the new ones, never a part. Through a symbolic
/// link, the file it names is replaced.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let path = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let written = File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, &path)
    });
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Checks that [`write_atomic`] could write `path`, before the work whose result goes there: a
/// directory, or a file beside which no temporary file can be made, fails.
pub fn check_writable(path: &Path) -> io::Result<()> {
    let path = fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            "is a directory",
        ));
    }
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.{}.check", std::process::id()));
    File::create(&tmp)?;
    fs::remove_file(&tmp)
}

/// Whether `a` and `b` are the same file: the same device and inode, after symbolic links (so
/// hard links too). False when either does not exist.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// The name a CSV file of `fig9 run` has while the run goes on: fig9.csv.partial.
pub fn partial_name(name: &str) -> String {
    format!("{name}.partial")
}

/// One growing CSV file: its final path, and the writer of its partial one.
struct Growing<T> {
    path: PathBuf,
    partial: PathBuf,
    w: Appender<File, T>,
}

impl<T: serde::Serialize + Default> Growing<T> {
    fn create(dir: &Path, name: &str) -> io::Result<Growing<T>> {
        let partial = dir.join(partial_name(name));
        Ok(Growing {
            path: dir.join(name),
            w: Appender::new(File::create(&partial).map_err(|e| at(&partial, e))?)
                .map_err(|e| at(&partial, e))?,
            partial,
        })
    }

    fn append(&mut self, rows: &[T]) -> io::Result<()> {
        match rows {
            [] => Ok(()),
            rows => self.w.append(rows).map_err(|e| at(&self.partial, e)),
        }
    }

    fn sync(&self) -> io::Result<()> {
        self.w
            .get_ref()
            .sync_data()
            .map_err(|e| at(&self.partial, e))
    }

    /// Renamed into place, synced first.
    fn finish(&self) -> io::Result<()> {
        self.sync()?;
        fs::rename(&self.partial, &self.path).map_err(|e| at(&self.path, e))
    }

    /// The final file: the partial one renamed if it is `whole` and that works, else `rows`
    /// written anew and the partial one removed.
    fn settle(self, rows: &[T], whole: bool) -> Result<(), String> {
        if !(whole && self.finish().is_ok()) {
            let text = crate::records::render(rows)?;
            write_atomic(&self.path, text.as_bytes())
                .map_err(|e| format!("{}: {e}", self.path.display()))?;
            let _ = fs::remove_file(&self.partial);
        }
        say!("fig9: wrote {}", self.path.display());
        Ok(())
    }
}

/// `e`, saying which file.
fn at(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

struct Files {
    fig9: Growing<Row>,
    tick: Growing<TickRow>,
    memory: Growing<MemoryRow>,
}

/// fig9.csv, tick.csv and memory.csv of `fig9 run` in DIR, written as the sweep measures: each
/// as NAME.partial (fig9.csv.partial), the rows added as soon as they are final and flushed,
/// synced after each n; renamed to NAME when the run ends. A run cut short (interrupted, killed
/// with its guest) leaves its rows so far in the partial files, and the files of an earlier run
/// under the final names as they were.
pub struct Journal {
    dir: PathBuf,
    files: Option<Files>,
    /// A write failed: the final files are written from memory, the partial ones removed.
    failed: bool,
}

impl Journal {
    pub fn new(dir: &Path) -> Journal {
        Journal {
            dir: dir.to_path_buf(),
            files: None,
            failed: false,
        }
    }

    /// The final files from `fig9`, `tick` and `memory`, the rows of the whole run: the partial
    /// files renamed, or, where writing one failed, the rows written anew from memory.
    pub fn finish(
        self,
        fig9: &[Row],
        tick: &[TickRow],
        memory: &[MemoryRow],
    ) -> Result<(), String> {
        let files = self.files.ok_or("the run's files were never created")?;
        let whole = !self.failed;
        files.fig9.settle(fig9, whole)?;
        files.tick.settle(tick, whole)?;
        files.memory.settle(memory, whole)
    }

    fn write(&mut self, fig9: &[Row], tick: &[TickRow], memory: &[MemoryRow]) -> io::Result<()> {
        let Some(f) = self.files.as_mut().filter(|_| !self.failed) else {
            return Ok(());
        };
        f.fig9.append(fig9)?;
        f.tick.append(tick)?;
        f.memory.append(memory)
    }
}

impl Sink for Journal {
    /// Creates DIR (and what is missing above it) and the partial files. On failure, removes
    /// what it created: DIR is made only for a run that measures.
    fn begin(&mut self) -> Result<(), String> {
        let missing: Vec<PathBuf> = self
            .dir
            .ancestors()
            .filter(|d| !d.as_os_str().is_empty() && !d.exists())
            .map(Path::to_path_buf)
            .collect();
        let created = fs::create_dir_all(&self.dir)
            .map_err(|e| at(&self.dir, e))
            .and_then(|()| {
                Ok(Files {
                    fig9: Growing::create(&self.dir, "fig9.csv")?,
                    tick: Growing::create(&self.dir, "tick.csv")?,
                    memory: Growing::create(&self.dir, "memory.csv")?,
                })
            });
        match created {
            Ok(files) => {
                say!("fig9: writing {} as it goes", files.fig9.partial.display());
                self.files = Some(files);
                Ok(())
            }
            Err(e) => {
                for name in ["fig9.csv", "tick.csv", "memory.csv"] {
                    let _ = fs::remove_file(self.dir.join(partial_name(name)));
                }
                // Deepest first; a directory something else put a file in stays.
                for d in &missing {
                    let _ = fs::remove_dir(d);
                }
                Err(e.to_string())
            }
        }
    }

    fn rows(&mut self, fig9: &[Row], tick: &[TickRow], memory: &[MemoryRow]) -> io::Result<()> {
        let r = self.write(fig9, tick, memory);
        self.failed |= r.is_err();
        r
    }

    fn sync(&mut self) -> io::Result<()> {
        let Some(f) = self.files.as_ref().filter(|_| !self.failed) else {
            return Ok(());
        };
        let r = f.fig9.sync().and(f.tick.sync()).and(f.memory.sync());
        self.failed |= r.is_err();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records;

    /// An empty directory of its own for test `name`.
    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fig9-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn same_file_sees_through_links_and_spellings() {
        let d = scratch("same");
        let (a, b) = (d.join("a.csv"), d.join("b.csv"));
        fs::write(&a, "x").unwrap();
        fs::write(&b, "x").unwrap();
        assert!(same_file(&a, &a));
        assert!(same_file(&a, &d.join(".").join("a.csv")));
        assert!(!same_file(&a, &b), "same contents, other file");
        std::os::unix::fs::symlink(&a, d.join("link")).unwrap();
        assert!(same_file(&a, &d.join("link")));
        fs::hard_link(&a, d.join("hard")).unwrap();
        assert!(same_file(&d.join("hard"), &a));
        assert!(!same_file(&a, &d.join("nothing")));
        assert!(!same_file(&d.join("nothing"), &d.join("nothing")));
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn write_atomic_replaces_the_file_and_leaves_nothing_else() {
        let d = scratch("atomic");
        let f = d.join("fig9.svg");
        write_atomic(&f, b"one").unwrap();
        write_atomic(&f, b"two").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "two");
        // Through a link, the file it names.
        std::os::unix::fs::symlink("fig9.svg", d.join("link.svg")).unwrap();
        write_atomic(&d.join("link.svg"), b"three").unwrap();
        assert_eq!(fs::read_to_string(&f).unwrap(), "three");
        assert!(fs::symlink_metadata(d.join("link.svg"))
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(names(&d), ["fig9.svg", "link.svg"]);
        assert!(write_atomic(&d.join("no/such/dir.svg"), b"x").is_err());
        assert_eq!(names(&d), ["fig9.svg", "link.svg"]);
        fs::remove_dir_all(&d).unwrap();
    }

    fn rows(n: u64) -> (Vec<Row>, Vec<TickRow>, Vec<MemoryRow>) {
        let fig9 = (0..n)
            .map(|i| records::test_row("c", i, Some(1.5), ""))
            .collect();
        let tick = vec![TickRow {
            curve: "scheme7".into(),
            n,
            ns_per_tick: Some(50.0),
            ..TickRow::default()
        }];
        (fig9, tick, vec![MemoryRow::new("c", n, 128, 1280)])
    }

    #[test]
    fn the_journal_grows_partial_files_and_renames_them_at_the_end() {
        let d = scratch("journal");
        let out = d.join("a/b");
        let mut j = Journal::new(&out);
        j.begin().unwrap();
        assert_eq!(
            names(&out),
            ["fig9.csv.partial", "memory.csv.partial", "tick.csv.partial"]
        );
        let (fig9, tick, memory) = rows(4);
        j.rows(&fig9[..1], &[], &memory).unwrap();
        j.rows(&fig9[1..], &tick, &[]).unwrap();
        j.sync().unwrap();
        // Cut short here, the rows so far are in the partial files.
        let partial = fs::read_to_string(out.join("fig9.csv.partial")).unwrap();
        assert_eq!(records::parse::<Row>(&partial).unwrap(), fig9);
        j.finish(&fig9, &tick, &memory).unwrap();
        assert_eq!(names(&out), ["fig9.csv", "memory.csv", "tick.csv"]);
        let read = |name: &str| fs::read_to_string(out.join(name)).unwrap();
        assert_eq!(read("fig9.csv"), records::render(&fig9).unwrap());
        assert_eq!(read("tick.csv"), records::render(&tick).unwrap());
        assert_eq!(read("memory.csv"), records::render(&memory).unwrap());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_sweep_cut_short_leaves_its_rows_in_the_partial_files() {
        use crate::method::Curve;
        use crate::run;
        let d = scratch("cut");
        let world = crate::fake::World::new(|_, _, _| Ok(100));
        let inner = world.opener();
        // The sweep dies at its 12th instance: the second of n = 1000 (one open for
        // TW_IOC_INFO, then three instances an n).
        let opened = std::cell::Cell::new(0);
        let open = || {
            opened.set(opened.get() + 1);
            assert!(opened.get() < 12, "killed");
            inner()
        };
        let setup = run::Setup {
            quick: true,
            budget: std::time::Duration::from_secs(60),
            max_n: 1000,
            device: "fake".into(),
            slots: 4096,
            seed: 1,
            repeats: 2,
            curves: ["scheme7-mod", "scheme1-setcallout", "linux-timer_list"]
                .iter()
                .map(|c| Curve::by_name(c).unwrap())
                .collect(),
        };
        let mut journal = Journal::new(&d);
        let cut = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run::run(&setup, &open, &mut journal)
        }));
        assert!(cut.is_err());
        drop(journal);
        assert_eq!(
            names(&d),
            ["fig9.csv.partial", "memory.csv.partial", "tick.csv.partial"]
        );
        let text = fs::read_to_string(d.join("fig9.csv.partial")).unwrap();
        let rows: Vec<Row> = records::parse(&text).unwrap();
        // Every repeat of n = 0: both measures of the two curves of the module, Linux's one.
        let at_0 = rows.iter().filter(|r| r.n == 0 && r.ns_per_op.is_some());
        assert_eq!(at_0.count(), 2 * (2 + 2 + 1), "{rows:?}");
        // And of n = 10 and 100; nothing of n = 1000, where it died.
        let ns: std::collections::BTreeSet<u64> = rows.iter().map(|r| r.n).collect();
        assert_eq!(ns.into_iter().collect::<Vec<_>>(), [0, 10, 100]);
        let memory = fs::read_to_string(d.join("memory.csv.partial")).unwrap();
        assert!(!records::parse::<MemoryRow>(&memory).unwrap().is_empty());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_journal_that_failed_writes_the_final_files_from_memory() {
        let d = scratch("failed");
        let mut j = Journal::new(&d);
        j.begin().unwrap();
        let (fig9, tick, memory) = rows(3);
        j.rows(&fig9[..1], &[], &[]).unwrap();
        // As after a full disk: the partial files lack rows.
        j.failed = true;
        j.rows(&fig9[1..], &tick, &memory).unwrap();
        j.finish(&fig9, &tick, &memory).unwrap();
        assert_eq!(names(&d), ["fig9.csv", "memory.csv", "tick.csv"]);
        let text = fs::read_to_string(d.join("fig9.csv")).unwrap();
        assert_eq!(text, records::render(&fig9).unwrap());
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn a_journal_that_cannot_begin_leaves_no_directory() {
        let d = scratch("nojournal");
        // A file where a directory of the path should be: nothing can be made below it.
        fs::write(d.join("file"), "").unwrap();
        let mut j = Journal::new(&d.join("file/out"));
        assert!(j.begin().unwrap_err().contains("file/out"));
        // DIR can be made, its files cannot (their paths are longer than PATH_MAX, 4096): the
        // directories made for them go again.
        let mut out = d.join("new");
        while out.as_os_str().len() < 4080 {
            out.push("d".repeat(200.min(4080 - out.as_os_str().len()).max(1)));
        }
        assert!(out.as_os_str().len() < 4096);
        let e = Journal::new(&out).begin().unwrap_err();
        assert!(e.contains("fig9.csv.partial"), "{e}");
        assert_eq!(names(&d), ["file"]);
        fs::remove_dir_all(&d).unwrap();
    }
}
