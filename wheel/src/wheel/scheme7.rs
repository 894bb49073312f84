// SPDX-License-Identifier: GPL-2.0

//! Scheme 7: placeholder until implemented (see scheme2.rs for the pattern).

use super::{Config, Error, Expired, Handle, NextExpiry, Scheme, SchemeKind, Storage};

/// Scheme 7.
pub struct Hierarchical<S: Storage>(core::marker::PhantomData<S>);

impl<S: Storage> Hierarchical<S> {
    /// Not implemented yet.
    pub fn new(_config: &Config) -> Result<Self, Error> {
        Err(Error::Config)
    }
}

impl<S: Storage> Scheme for Hierarchical<S> {
    fn start(&mut self, _interval: u64, _id: u64) -> Result<Handle, Error> {
        unimplemented!()
    }
    fn stop(&mut self, _handle: Handle) -> Result<u64, Error> {
        unimplemented!()
    }
    fn tick(&mut self) -> usize {
        unimplemented!()
    }
    fn pop_expired(&mut self) -> Option<Expired> {
        unimplemented!()
    }
    fn now(&self) -> u64 {
        unimplemented!()
    }
    fn len(&self) -> usize {
        unimplemented!()
    }
    fn queued(&self) -> usize {
        unimplemented!()
    }
    fn capacity(&self) -> usize {
        unimplemented!()
    }
    fn next_expiry(&self) -> NextExpiry {
        unimplemented!()
    }
    fn memory_bytes(&self) -> usize {
        unimplemented!()
    }
    fn kind(&self) -> SchemeKind {
        unimplemented!()
    }
}
