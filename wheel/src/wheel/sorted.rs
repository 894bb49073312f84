// SPDX-License-Identifier: GPL-2.0

//! The bounded placement of the sorted schemes (2 and 5): a start that walks a sorted list
//! stops when its work budget is spent and leaves its timer *placing*; the walk resumes where
//! it stopped ([`Arena::walk_sorted`]), and whatever leaves the list meanwhile moves the cursor
//! on. Each scheme says only which list is walked and how a placed timer is linked.
//!
//! A reschedule that walks keeps its way back: the deadline it had and the entry it followed,
//! kept on that entry's predecessor as entries leave. [`Placing::put_back`] uses them, so
//! that a caller cut short (a signal) can put the timer back where it was, unchanged.
//!
//! A placement that ends before its place is found (its timer stopped, or put back) leaves a
//! *hint*: the handle of the last entry its walk had passed. The next placement (only the next)
//! starts after that entry instead of at the head, if the entry is still on the list it walks
//! and due no later than the timer placed: the list is sorted, so every entry before it is due
//! no later either, and the walk from the head would have passed them all. The place found is
//! the same; only the entries compared again are spared. A caller that gives up a start or a
//! reschedule and makes it again (a call a signal cut short, started over) so goes on where it
//! stopped, however often it is cut short. The hint is checked when taken up, never kept up to
//! date: a stale handle, an entry moved to another list or due later, and the walk starts at the
//! head.

use super::arena::{Arena, NIL};
use super::{Handle, Storage, Work};

/// The timer looking for its place, if any: its entry (tagged `PLACING`, on no list) and the
/// first entry of the list not yet compared with it (or `NIL`); for a reschedule, its way back;
/// the hint the last placement given up left for the next (see the module's documentation).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Placing(Option<(u32, u32)>, Option<Back>, Option<Handle>);

/// Where a rescheduled timer was: the deadline it had, and the entry it came after on its list
/// then (or `NIL`: it was first), or that entry's predecessor once it left.
#[derive(Clone, Copy, Debug)]
pub(super) struct Back {
    pub(super) deadline: u64,
    pub(super) after: u32,
}

/// How [`Placing::put_back`] gives a timer back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum PutBack {
    /// Entry `.0` goes before entry `.1` (or last: `NIL`) on the list it was on.
    Before(u32, u32),
    /// Entry `.0` is due: its old deadline came while it walked.
    Due(u32),
}

impl Placing {
    /// Nothing placing, and no hint.
    pub(super) const NONE: Placing = Placing(None, None, None);

    /// Whether a timer is placing.
    pub(super) fn is_some(&self) -> bool {
        self.0.is_some()
    }

    /// Starts placing entry `idx`, on no list, from entry `head` (its list's head) on, or after the
    /// hint, taken, if it is still valid for it: `on_list` tells whether an entry is on the list
    /// `head` starts. `back` for a reschedule, where it was.
    pub(super) fn begin<S: Storage>(
        &mut self,
        arena: &mut Arena<S>,
        idx: u32,
        head: u32,
        back: Option<Back>,
        on_list: impl FnOnce(&Arena<S>, u32) -> bool,
    ) {
        // First: a rescheduled entry, unlinked, still has its list's tag, and must not pass for
        // its own hint.
        arena.set_placing(idx);
        let left = arena.remaining(arena.entry(idx).deadline);
        let at = match self.2.take().map(|h| arena.resolve(h)) {
            // INVARIANT: on the list (so not `idx`, tagged placing), due no later, so every entry
            // before it is too.
            Some(Ok(after))
                if on_list(arena, after)
                    && arena.remaining(arena.entry(after).deadline) <= left =>
            {
                arena.next(after)
            }
            _ => head,
        };
        self.0 = Some((idx, at));
        self.1 = back;
    }

    /// Ends the placement before its place is found, leaving the hint: the entry before the
    /// cursor, which the walk has passed (none if the cursor is on the head, or past the end:
    /// rare, the entries it stood on having left).
    fn give_up<S: Storage>(&mut self, arena: &Arena<S>) {
        let passed = match self.0 {
            Some((_, at)) if at != NIL => arena.prev(at),
            _ => NIL,
        };
        let hint = (passed != NIL).then(|| arena.handle(passed));
        *self = Placing(None, None, hint);
    }

    /// Keeps the way back of the placing timer, should a reschedule be walking: for one taken
    /// off the due queue, whose filing began as a start's, its old deadline, due.
    pub(super) fn keep_due_back(&mut self, deadline: u64) {
        if self.is_some() {
            self.1 = Some(Back {
                deadline,
                after: NIL,
            });
        }
    }

    /// Ends a reschedule's placement by putting its timer back, with the deadline it had: if
    /// that deadline is still ahead and still sorts between the neighbours it had (`head` gives
    /// the head of the list for a deadline, the one it was on), the entry comes back with the
    /// entry it goes before there, for the scheme to link it; if the deadline has come while it
    /// walked, the entry comes back due, for the scheme to queue it (late, never early, as
    /// it would have fired had it never been rescheduled). Else `None` and nothing changes
    /// (nothing placing, a start, or its place taken).
    pub(super) fn put_back<S: Storage>(
        &mut self,
        arena: &mut Arena<S>,
        head: impl FnOnce(u64) -> u32,
    ) -> Option<PutBack> {
        let ((idx, _), back) = (self.0?, self.1?);
        let remaining = |idx: u32| arena.remaining(arena.entry(idx).deadline);
        let left = arena.remaining(back.deadline);
        if left == 0 || left >= super::MAX_INTERVAL {
            self.give_up(arena);
            arena.entry_mut(idx).deadline = back.deadline;
            return Some(PutBack::Due(idx));
        }
        let at = match back.after {
            NIL => head(back.deadline),
            after => arena.next(after),
        };
        let fits = (back.after == NIL || remaining(back.after) <= left)
            && (at == NIL || left <= remaining(at));
        if !fits {
            return None;
        }
        self.give_up(arena);
        arena.entry_mut(idx).deadline = back.deadline;
        Some(PutBack::Before(idx, at))
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
                *self = Placing::NONE;
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
        match self.0 {
            Some((placing, _)) if placing == idx => {
                self.give_up(arena);
                true
            }
            _ => {
                self.leave(idx, arena.next(idx), arena.prev(idx));
                false
            }
        }
    }

    /// Entry `idx`, followed by `next`, is leaving its list from the front: a cursor on it
    /// moves on, and a way back after it now starts at the list's head.
    pub(super) fn step_past(&mut self, idx: u32, next: u32) {
        self.leave(idx, next, NIL);
    }

    /// Entry `idx`, between `prev` and `next`, is leaving its list: a cursor on it moves on
    /// to `next`, a way back after it to `prev`.
    fn leave(&mut self, idx: u32, next: u32, prev: u32) {
        if let Some((_, at)) = &mut self.0 {
            if *at == idx {
                *at = next;
            }
        }
        if let Some(back) = &mut self.1 {
            if back.after == idx {
                back.after = prev;
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
        *self = Placing::NONE;
        Some(idx)
    }

    /// The deadline of the placing entry, if any.
    pub(super) fn deadline<S: Storage>(&self, arena: &Arena<S>) -> Option<u64> {
        self.0.map(|(idx, _)| arena.entry(idx).deadline)
    }
}
