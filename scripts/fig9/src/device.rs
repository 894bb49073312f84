// SPDX-License-Identifier: GPL-2.0

//! `/dev/timerwheel` through ioctl(2): one small method per command, each returning
//! `io::Result` with the errno of a failed call. The only `unsafe` of the tool is here.

use crate::uapi::*;
use std::fs::File;
use std::fs::OpenOptions;
use std::io;
use std::mem::size_of;
use std::os::fd::AsRawFd;

extern "C" {
    /// ioctl(2) of the C library: `int ioctl(int fd, unsigned long request, ...)`.
    fn ioctl(fd: i32, request: u64, ...) -> i32;
}

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

    /// Issues `request` with a pointer to `arg`.
    fn call<T>(&self, request: u64, arg: &mut T) -> io::Result<()> {
        // The size a request encodes is the size the kernel copies to or from `arg`.
        assert_eq!(
            ioc_size(request),
            size_of::<T>(),
            "request {request:#x} does not take a {}",
            std::any::type_name::<T>()
        );
        // SAFETY: the fd is open for the life of `self.file`; `arg` is a live, exclusive
        // `#[repr(C)]` value of exactly the size the request encodes (checked above), so the
        // kernel reads and writes only memory we own. No pointer in it outlives this call.
        let rc = unsafe { ioctl(self.file.as_raw_fd(), request, arg as *mut T) };
        if rc < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// TW_IOC_INFO.
    pub fn info(&self) -> io::Result<TwInfo> {
        let mut info = TwInfo::default();
        self.call(TW_IOC_INFO, &mut info)?;
        Ok(info)
    }

    /// TW_IOC_CONFIGURE.
    pub fn configure(&self, config: &TwConfig) -> io::Result<()> {
        let mut c = *config;
        self.call(TW_IOC_CONFIGURE, &mut c)
    }

    /// TW_IOC_SETCALLOUT: the new callout's handle.
    pub fn setcallout(&self, ticks: u64, cookie: u64) -> io::Result<u64> {
        let mut s = TwSet {
            ticks,
            cookie,
            handle: 0,
        };
        self.call(TW_IOC_SETCALLOUT, &mut s)?;
        Ok(s.handle)
    }

    /// TW_IOC_UNSETCALLOUT.
    pub fn unsetcallout(&self, handle: u64) -> io::Result<()> {
        let mut h = handle;
        self.call(TW_IOC_UNSETCALLOUT, &mut h)
    }

    /// TW_IOC_TIMEOUT: the new callout's handle.
    pub fn timeout(&self, func: u64, arg: u64, ticks: u64) -> io::Result<u64> {
        let mut t = TwTimeout {
            func,
            arg,
            ticks,
            handle: 0,
        };
        self.call(TW_IOC_TIMEOUT, &mut t)?;
        Ok(t.handle)
    }

    /// TW_IOC_UNTIMEOUT.
    pub fn untimeout(&self, func: u64, arg: u64) -> io::Result<()> {
        let mut u = TwUntimeout { func, arg };
        self.call(TW_IOC_UNTIMEOUT, &mut u)
    }

    /// TW_IOC_BATCH over `ops` in chunks of at most TW_MAX_BATCH; each op's `result` (and
    /// `handle`) is written back. The call fails only if a whole chunk does.
    pub fn batch(&self, ops: &mut [TwOp]) -> io::Result<()> {
        for chunk in ops.chunks_mut(TW_MAX_BATCH) {
            let mut b = TwBatch {
                ops: chunk.as_mut_ptr() as u64,
                count: chunk.len() as u32,
                reserved: 0,
            };
            // `b.ops` points into `chunk`, which stays borrowed, alive and unaliased until
            // `call` returns; the kernel writes at most `count` ops back.
            self.call(TW_IOC_BATCH, &mut b)?;
        }
        Ok(())
    }

    /// TW_IOC_STATS.
    pub fn stats(&self) -> io::Result<TwStats> {
        let mut s = TwStats::default();
        self.call(TW_IOC_STATS, &mut s)?;
        Ok(s)
    }

    /// TW_IOC_BENCH: the request with `elapsed_ns` filled in.
    pub fn bench(&self, request: &TwBench) -> io::Result<TwBench> {
        let mut b = *request;
        self.call(TW_IOC_BENCH, &mut b)?;
        Ok(b)
    }
}
