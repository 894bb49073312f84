// SPDX-License-Identifier: GPL-2.0

//! Host-side root of the `wheel` crate.
//!
//! Everything of substance lives in [`wheel`] (the directory `src/wheel/`), which the kernel
//! module compiles in as its own `wheel` module through `#[path]`. Only this file and
//! `src/model.rs` are host-only: this one makes the crate `no_std`, and, with the `std`
//! feature, supplies [`HostStorage`] and the reference [`model`] the tests drive every scheme
//! against.

#![no_std]
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(any(test, feature = "std"))]
extern crate std;

#[allow(clippy::module_inception)]
pub mod wheel;

pub use wheel::*;

#[cfg(any(test, feature = "std"))]
pub mod model;

/// [`Storage`] backed by `std::vec::Vec`, for host tests and benchmarks.
#[cfg(any(test, feature = "std"))]
pub struct HostStorage;

#[cfg(any(test, feature = "std"))]
impl Storage for HostStorage {
    type Buf<T> = std::vec::Vec<T>;

    fn alloc<T>(len: usize, mut init: impl FnMut(usize) -> T) -> Result<Self::Buf<T>, Error> {
        let mut v = std::vec::Vec::new();
        v.try_reserve_exact(len).map_err(|_| Error::NoMemory)?;
        v.extend((0..len).map(&mut init));
        Ok(v)
    }
}
