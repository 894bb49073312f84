// SPDX-License-Identifier: GPL-2.0

//! `/dev/timerwheel` through rustix's ioctl(2): one small method per command, each returning
//! `io::Result` with the errno of a failed call. The request numbers are rustix's `_IOC`
//! encoding of the header's directions, numbers and structures (checked against the header by
//! the build). The only `unsafe` of the tool is here.

use crate::uapi_defs::*;
use rustix::ioctl::ioctl;
use rustix::ioctl::opcode;
use rustix::ioctl::Getter;
use rustix::ioctl::Opcode;
use rustix::ioctl::Setter;
use rustix::ioctl::Updater;
use std::fs::File;
use std::fs::OpenOptions;
use std::io;

const MAGIC: u8 = TW_IOC_MAGIC as u8;
const _: () = assert!(TW_IOC_MAGIC <= u8::MAX as u32);

pub const TW_IOC_INFO: Opcode = opcode::read::<tw_info>(MAGIC, 0x00);
pub const TW_IOC_CONFIGURE: Opcode = opcode::write::<tw_config>(MAGIC, 0x01);
pub const TW_IOC_SETCALLOUT: Opcode = opcode::read_write::<tw_set>(MAGIC, 0x02);
pub const TW_IOC_UNSETCALLOUT: Opcode = opcode::write::<u64>(MAGIC, 0x03);
pub const TW_IOC_TIMEOUT: Opcode = opcode::read_write::<tw_timeout>(MAGIC, 0x04);
pub const TW_IOC_UNTIMEOUT: Opcode = opcode::write::<tw_untimeout>(MAGIC, 0x05);
pub const TW_IOC_ADVANCE: Opcode = opcode::write::<u64>(MAGIC, 0x06);
pub const TW_IOC_BATCH: Opcode = opcode::write::<tw_batch>(MAGIC, 0x07);
pub const TW_IOC_STATS: Opcode = opcode::read::<tw_stats>(MAGIC, 0x08);
pub const TW_IOC_BENCH: Opcode = opcode::read_write::<tw_bench>(MAGIC, 0x09);
pub const TW_IOC_RESET: Opcode = opcode::write::<tw_reset>(MAGIC, 0x0a);
pub const TW_IOC_QUERY: Opcode = opcode::read_write::<tw_query>(MAGIC, 0x0b);
pub const TW_IOC_BENCH_PAIR: Opcode = opcode::read_write::<tw_bench_pair>(MAGIC, 0x0c);

/// The commands of one callout instance: an open file of the device ([`Device`]), or a fake
/// of one in the tests.
pub trait Instance {
    /// TW_IOC_INFO.
    fn info(&self) -> io::Result<tw_info>;
    /// TW_IOC_CONFIGURE.
    fn configure(&self, config: &tw_config) -> io::Result<()>;
    /// TW_IOC_SETCALLOUT: the new callout's handle.
    fn setcallout(&self, ticks: u64, cookie: u64) -> io::Result<u64>;
    /// TW_IOC_UNSETCALLOUT.
    fn unsetcallout(&self, handle: u64) -> io::Result<()>;
    /// TW_IOC_RESET: moves `handle` to `ticks` from now, in place.
    fn reset(&self, handle: u64, ticks: u64) -> io::Result<()>;
    /// TW_IOC_TIMEOUT: the new callout's handle.
    fn timeout(&self, func: u64, arg: u64, ticks: u64) -> io::Result<u64>;
    /// TW_IOC_UNTIMEOUT.
    fn untimeout(&self, func: u64, arg: u64) -> io::Result<()>;
    /// TW_IOC_BATCH over `ops` in chunks of at most TW_MAX_BATCH; each op's `result` (and
    /// `handle`) is written back. The call fails only if a whole chunk does.
    fn batch(&self, ops: &mut [tw_op]) -> io::Result<()>;
    /// TW_IOC_STATS.
    fn stats(&self) -> io::Result<tw_stats>;
    /// TW_IOC_BENCH: the request with `elapsed_ns` and `max_hold_ns` filled in.
    fn bench(&self, request: &tw_bench) -> io::Result<tw_bench>;
    /// TW_IOC_BENCH_PAIR: the request with both halves' `elapsed_ns` and the instance's
    /// `max_hold_ns` filled in.
    fn bench_pair(&self, request: &tw_bench_pair) -> io::Result<tw_bench_pair>;
}

/// Opens a fresh, unconfigured instance.
pub type Opener<'a> = dyn Fn() -> io::Result<Box<dyn Instance>> + 'a;

/// One open file description of the device: one callout instance in the module.
pub struct Device {
    file: File,
}

impl Device {
    /// Opens `path` read-write: a fresh, unconfigured instance.
    pub fn open(path: &str) -> io::Result<Device> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        Ok(Device { file })
    }

    /// An [`Opener`] of `path`.
    pub fn opener(path: &str) -> impl Fn() -> io::Result<Box<dyn Instance>> + '_ {
        move || Ok(Box::new(Device::open(path)?) as Box<dyn Instance>)
    }

    /// A request that reads a `T` from the kernel.
    fn get<const OP: Opcode, T>(&self) -> io::Result<T> {
        // SAFETY: every `OP` above is `_IOR` of exactly `T` (the build checks each against the
        // header), so the kernel writes one `T`, a `#[repr(C)]` plain-data structure.
        Ok(unsafe { ioctl(&self.file, Getter::<OP, T>::new()) }?)
    }

    /// A request that passes a `T` to the kernel.
    fn set<const OP: Opcode, T>(&self, value: T) -> io::Result<()> {
        // SAFETY: every `OP` above is `_IOW` of exactly `T`: the kernel reads one `T`.
        Ok(unsafe { ioctl(&self.file, Setter::<OP, T>::new(value)) }?)
    }

    /// A request that reads a `T` and writes it back.
    fn update<const OP: Opcode, T>(&self, value: &mut T) -> io::Result<()> {
        // SAFETY: every `OP` above is `_IOWR` of exactly `T`: the kernel reads and writes one
        // `T`, which `value` borrows exclusively for the call.
        Ok(unsafe { ioctl(&self.file, Updater::<OP, T>::new(value)) }?)
    }
}

impl Instance for Device {
    fn info(&self) -> io::Result<tw_info> {
        self.get::<TW_IOC_INFO, tw_info>()
    }

    fn configure(&self, config: &tw_config) -> io::Result<()> {
        self.set::<TW_IOC_CONFIGURE, _>(*config)
    }

    fn setcallout(&self, ticks: u64, cookie: u64) -> io::Result<u64> {
        let mut s = tw_set {
            ticks,
            cookie,
            ..tw_set::default()
        };
        self.update::<TW_IOC_SETCALLOUT, _>(&mut s)?;
        Ok(s.handle)
    }

    fn unsetcallout(&self, handle: u64) -> io::Result<()> {
        self.set::<TW_IOC_UNSETCALLOUT, u64>(handle)
    }

    fn reset(&self, handle: u64, ticks: u64) -> io::Result<()> {
        let r = tw_reset {
            handle,
            ticks,
            latest: 0,
        };
        self.set::<TW_IOC_RESET, _>(r)
    }

    fn timeout(&self, func: u64, arg: u64, ticks: u64) -> io::Result<u64> {
        let mut t = tw_timeout {
            func,
            arg,
            ticks,
            ..tw_timeout::default()
        };
        self.update::<TW_IOC_TIMEOUT, _>(&mut t)?;
        Ok(t.handle)
    }

    fn untimeout(&self, func: u64, arg: u64) -> io::Result<()> {
        self.set::<TW_IOC_UNTIMEOUT, _>(tw_untimeout { func, arg })
    }

    fn batch(&self, ops: &mut [tw_op]) -> io::Result<()> {
        for chunk in ops.chunks_mut(TW_MAX_BATCH as usize) {
            batch_to_end(chunk, |ops| {
                let b = tw_batch {
                    ops: ops.as_mut_ptr() as u64,
                    count: ops.len() as u32,
                    reserved: 0,
                };
                // `b.ops` points into `ops`, which stays borrowed, alive and unaliased until
                // the call returns; the kernel writes at most `count` ops back.
                self.set::<TW_IOC_BATCH, _>(b)
            })?;
        }
        Ok(())
    }

    fn stats(&self) -> io::Result<tw_stats> {
        self.get::<TW_IOC_STATS, tw_stats>()
    }

    fn bench(&self, request: &tw_bench) -> io::Result<tw_bench> {
        let call = || {
            let mut b = *request;
            self.update::<TW_IOC_BENCH, _>(&mut b).map(|()| b)
        };
        // The ticks a TW_BENCH_TICK ran before a signal stay run, and their expiries are
        // processed: its EINTR stands (the turnover measure starts again on a fresh instance).
        match request.kind {
            TW_BENCH_TICK => call(),
            _ => again_if_interrupted(call),
        }
    }

    fn bench_pair(&self, request: &tw_bench_pair) -> io::Result<tw_bench_pair> {
        again_if_interrupted(|| {
            let mut p = *request;
            self.update::<TW_IOC_BENCH_PAIR, _>(&mut p).map(|()| p)
        })
    }
}

/// How many times in a row a call ended by a signal is made again before its EINTR stands.
const INTERRUPTIONS: u32 = 100;

/// Makes `call` again while it fails with EINTR, up to [`INTERRUPTIONS`] times. The module
/// ends a bench or a batch with EINTR on any signal, a stop and a continue among them (job
/// control, a debugger's attach, the freezer), and a bench of resets, the instance's or
/// Linux's, leaves nothing behind. This tool catches no signal, so that a sweep stopped and
/// continued goes on where it was.
pub fn again_if_interrupted<T>(mut call: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let mut tries = 0;
    loop {
        match call() {
            Err(e) if e.kind() == io::ErrorKind::Interrupted && tries < INTERRUPTIONS => tries += 1,
            r => return r,
        }
    }
}

/// Runs `ops` through `call` (one TW_IOC_BATCH) to their end: a batch a signal cut short wrote
/// back the results of the operations it ran, and -EINTR for each it did not run (or ran and
/// undid), from the first of which it is made again, up to [`INTERRUPTIONS`] times in a row
/// without an operation run. (On the real clock a set that fired during its placement says
/// -EINTR too, and would be set again; the sweep batches on the real clock only on schemes 6
/// and 7, whose placements do not walk.)
fn batch_to_end(
    ops: &mut [tw_op],
    mut call: impl FnMut(&mut [tw_op]) -> io::Result<()>,
) -> io::Result<()> {
    let eintr = -rustix::io::Errno::INTR.raw_os_error();
    let mut from = 0;
    let mut tries = 0;
    loop {
        match call(&mut ops[from..]) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted && tries < INTERRUPTIONS => {
                tries += 1;
                match ops[from..].iter().position(|op| op.result == eintr) {
                    Some(0) => {}
                    Some(i) => {
                        from += i;
                        tries = 0;
                    }
                    None => return Err(e),
                }
            }
            r => return r,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interrupted() -> io::Error {
        io::Error::from(rustix::io::Errno::INTR)
    }

    #[test]
    fn a_call_ended_by_a_signal_is_made_again_and_other_errors_stand() {
        let mut calls = 0;
        let r = again_if_interrupted(|| {
            calls += 1;
            if calls < 3 {
                Err(interrupted())
            } else {
                Ok(calls)
            }
        });
        assert_eq!(r.unwrap(), 3);
        let mut calls = 0;
        let r: io::Result<()> = again_if_interrupted(|| {
            calls += 1;
            Err(io::Error::from(rustix::io::Errno::NOENT))
        });
        assert_eq!(r.unwrap_err().raw_os_error(), Some(2));
        assert_eq!(calls, 1);
        // A signal every time: the EINTR stands in the end.
        let mut calls = 0;
        let r: io::Result<()> = again_if_interrupted(|| {
            calls += 1;
            Err(interrupted())
        });
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::Interrupted);
        assert_eq!(calls, INTERRUPTIONS + 1);
    }

    #[test]
    fn a_batch_cut_short_is_made_again_from_its_first_operation_not_run() {
        let eintr = -rustix::io::Errno::INTR.raw_os_error();
        let mut ops: Vec<tw_op> = (0..10)
            .map(|i| tw_op {
                op: TW_OP_SET,
                a: i,
                result: 1,
                ..tw_op::default()
            })
            .collect();
        let mut seen = Vec::new();
        batch_to_end(&mut ops, |ops| {
            seen.push(ops.iter().map(|op| op.a).collect::<Vec<_>>());
            // The first call runs three (the second failing on its own), the next two.
            let ran = match seen.len() {
                1 => 3,
                2 => 2,
                _ => ops.len(),
            };
            for (i, op) in ops.iter_mut().enumerate() {
                op.result = if i >= ran {
                    eintr
                } else if op.a == 1 {
                    -22
                } else {
                    0
                };
            }
            match ran < ops.len() {
                true => Err(interrupted()),
                false => Ok(()),
            }
        })
        .unwrap();
        assert_eq!(
            seen,
            [
                (0..10).collect::<Vec<_>>(),
                (3..10).collect(),
                (5..10).collect()
            ]
        );
        let results: Vec<i32> = ops.iter().map(|op| op.result).collect();
        assert_eq!(results, [0, -22, 0, 0, 0, 0, 0, 0, 0, 0]);
        // EINTR with no operation left to run stands.
        let r = batch_to_end(&mut ops, |_| Err(interrupted()));
        assert_eq!(r.unwrap_err().kind(), io::ErrorKind::Interrupted);
        // Interruptions are counted in a row: one operation a call, more calls than that.
        let mut ops = vec![tw_op::default(); INTERRUPTIONS as usize * 2];
        let mut calls = 0;
        batch_to_end(&mut ops, |ops| {
            calls += 1;
            ops[0].result = 0;
            for op in &mut ops[1..] {
                op.result = eintr;
            }
            match ops.len() {
                1 => Ok(()),
                _ => Err(interrupted()),
            }
        })
        .unwrap();
        assert_eq!(calls, INTERRUPTIONS * 2);
        assert!(ops.iter().all(|op| op.result == 0));
    }

    #[test]
    fn request_numbers_are_the_x86_64_encoding_of_the_header() {
        // Printed by a C program including include/uapi/timerwheel.h (x86-64); the build
        // compares every request with clang's value of the header's own macro.
        assert_eq!(TW_IOC_INFO as u64, 0x8030_B900);
        assert_eq!(TW_IOC_CONFIGURE as u64, 0x4030_B901);
        assert_eq!(TW_IOC_UNSETCALLOUT as u64, 0x4008_B903);
        assert_eq!(TW_IOC_BENCH as u64, 0xC040_B909);
        assert_eq!(TW_IOC_QUERY as u64, 0xC020_B90B);
        assert_eq!(TW_IOC_BENCH_PAIR as u64, 0xC080_B90C);
    }
}
