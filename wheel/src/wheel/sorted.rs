// SPDX-License-Identifier: GPL-2.0

//! The bounded placement of the sorted schemes (2 and 5): a start that walks a sorted list
//! stops when its work budget is spent and leaves its timer *placing*; the walk resumes where
//! it stopped ([`Arena::walk_sorted`]), and whatever leaves the list meanwhile moves the cursor
//! on. Each scheme says only which list is walked and how a placed timer is linked.

use super::arena::Arena;
use super::{Storage, Work};

/// The timer looking for its place, if any: its entry (tagged `PLACING`, on no list) and the
/// first entry of the list not yet compared with it (or `NIL`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Placing(Option<(u32, u32)>);

impl Placing {
    /// Nothing placing.
    pub(super) const NONE: Placing = Placing(None);

    /// Whether a timer is placing.
    pub(super) fn is_some(&self) -> bool {
        self.0.is_some()
    }

    /// Starts placing entry `idx`, on no list, from entry `at` (its list's head) on.
    pub(super) fn begin<S: Storage>(&mut self, arena: &mut Arena<S>, idx: u32, at: u32) {
        arena.set_placing(idx);
        self.0 = Some((idx, at));
    }

    /// Continues the walk within `work`. Once the place is found the placement ends, and the
    /// entry comes back with the one it goes before (or `NIL`); `None` while the walk goes on,
    /// or when nothing is placing.
    pub(super) fn walk<S: Storage>(
        &mut self,
        arena: &Arena<S>,
        work: &mut Work,
    ) -> Option<(u32, u32)> {
        let (idx, at) = self.0?;
        match arena.walk_sorted(idx, at, work) {
            Ok(before) => {
                self.0 = None;
                Some((idx, before))
            }
            Err(at) => {
                self.0 = Some((idx, at));
                None
            }
        }
    }

    /// Entry `idx` is leaving its list, or is the placing one: `true` in that case, the
    /// placement ending; else the cursor moves off it.
    pub(super) fn forget<S: Storage>(&mut self, arena: &Arena<S>, idx: u32) -> bool {
        match &mut self.0 {
            Some((placing, _)) if *placing == idx => {
                self.0 = None;
                true
            }
            _ => {
                self.step_past(idx, arena.next(idx));
                false
            }
        }
    }

    /// Entry `idx`, followed by `next`, is leaving the list walked: a cursor on it moves on.
    pub(super) fn step_past(&mut self, idx: u32, next: u32) {
        if let Some((_, at)) = &mut self.0 {
            if *at == idx {
                *at = next;
            }
        }
    }

    /// The placing entry, if it is due now: the placement ends, for the caller to queue it
    /// (first, so that no tick ends, nor a call returns, with a timer due and placing).
    pub(super) fn take_due<S: Storage>(&mut self, arena: &Arena<S>) -> Option<u32> {
        let (idx, _) = self.0?;
        if arena.entry(idx).deadline != arena.now() {
            return None;
        }
        self.0 = None;
        Some(idx)
    }

    /// The deadline of the placing entry, if any.
    pub(super) fn deadline<S: Storage>(&self, arena: &Arena<S>) -> Option<u64> {
        self.0.map(|(idx, _)| arena.entry(idx).deadline)
    }
}
