// SPDX-License-Identifier: GPL-2.0

//! The storage every scheme shares: a fixed array of timer entries, a free list, the clock and
//! the due queue.
//!
//! Entries are addressed by `u32` index and linked into intrusive doubly-linked lists (wheel
//! slots, the ordered list, the due queue) through their `prev`/`next` fields, so that a
//! [`Handle`] reaches its entry, and unlinks it, in O(1) without a search. A [`List`] is just
//! a head and a tail index; it lives in the scheme (one per slot), the links live here.
//!
//! Each entry carries a generation, bumped whenever it is freed. A handle names an index and
//! the generation it was issued with, so a handle to a timer that fired or was stopped (and
//! whose entry may since have been reused) is recognised as stale instead of cancelling
//! somebody else's timer.
//!
//! The entry's list tag ([`Entry::list`]) says where it is: [`FREE`], [`QUEUED`] (on the due
//! queue), [`PLACING`] (on no list while a bounded walk looks for its place), or a number of
//! the scheme's choosing (the list it is on), so that `stop` knows which list to unlink it
//! from. The entries of a list handed whole to the due queue ([`Arena::queue_whole`]) keep
//! their tag there, which with the tick they were due on says queued. The tag and the 40-bit
//! generation share one word: 24 bits of tag, which is why a scheme's own tags stay below
//! [`PLACING`], and why capacity is at most [`MAX_CAPACITY`].

use super::{Config, Error, Expired, Handle, Storage, Work, MAX_INTERVAL};

/// The null index.
pub const NIL: u32 = u32::MAX;
/// Bits of the list tag in [`Entry`]'s packed word.
const TAG_BITS: u32 = 24;
/// Mask of the list tag.
const TAG_MASK: u64 = (1 << TAG_BITS) - 1;
/// The tag of a free entry.
pub const FREE: u32 = TAG_MASK as u32;
/// The tag of an entry on the due queue.
pub const QUEUED: u32 = FREE - 1;
/// The tag of an entry whose place a bounded walk is still looking for (schemes 2 and 5).
pub const PLACING: u32 = FREE - 2;
/// No tag: no entry's tag, which has 24 bits, is ever this.
const NO_TAG: u32 = u32::MAX;
/// The most entries an arena holds: indices fit a handle's 24 bits with room to spare.
pub const MAX_CAPACITY: u32 = 1 << 22;
/// Generations are 40 bits, never 0 (so that no handle is 0, and a handle of generation 0 is
/// always stale).
const GENERATION_MASK: u64 = (1 << 40) - 1;

/// One timer.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    /// The request id given at start.
    pub id: u64,
    /// The absolute tick the timer is due on.
    pub deadline: u64,
    /// Previous entry on the same list, or [`NIL`].
    pub prev: u32,
    /// Next entry on the same list (or on the free list), or [`NIL`].
    pub next: u32,
    /// The generation (bits 24..64, bumped on every free; see [`Handle`]) and the list tag
    /// (bits 0..24: [`FREE`], [`QUEUED`], [`PLACING`], or a scheme-defined list number).
    tag: u64,
}

impl Entry {
    /// Where the entry is: [`FREE`], [`QUEUED`], [`PLACING`], or a scheme-defined list number.
    pub const fn list(&self) -> u32 {
        (self.tag & TAG_MASK) as u32
    }

    /// The generation handles to this entry carry.
    pub const fn generation(&self) -> u64 {
        self.tag >> TAG_BITS
    }

    /// Tags the entry as being on list `list`.
    fn set_list(&mut self, list: u32) {
        self.tag = (self.tag & !TAG_MASK) | u64::from(list);
    }

    /// Frees the entry: tags it [`FREE`] under the next generation.
    fn bump(&mut self) {
        // From 2^40 - 1 to 1, skipping 0, without a branch.
        let next = self.generation().wrapping_add(1);
        let generation = (next & GENERATION_MASK) | (next >> 40);
        self.tag = (generation << TAG_BITS) | u64::from(FREE);
    }
}

/// An intrusive list of entries: head and tail index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct List {
    /// First entry, or [`NIL`].
    pub head: u32,
    /// Last entry, or [`NIL`].
    pub tail: u32,
}

impl List {
    /// The empty list.
    pub const EMPTY: List = List {
        head: NIL,
        tail: NIL,
    };

    /// Whether the list has no entry.
    pub const fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

impl Default for List {
    fn default() -> Self {
        List::EMPTY
    }
}

/// Why [`Arena::earliest_of_few`] stopped before the end of its list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// The budget ran out: a call with more may finish the walk.
    Spent,
    /// The list holds more than the limit: no call will walk it.
    TooLong,
}

/// Entries, free list, clock and due queue.
///
/// # Invariants
///
/// - Every entry is on exactly one list: the free list (`list == FREE`), the due queue
///   (`list == QUEUED`, or a list handed over whole: below), or one scheme list (any other
///   value).
/// - `len` counts the entries not on the free list; `queued` those on the due queue.
/// - An entry is on the due queue exactly when it is tagged [`QUEUED`], or tagged `whole_tag`
///   and due on `whole_tick`: from the last list [`Arena::queue_whole`] handed over, until the
///   due queue empties (after which the clock may come round to that tick again, 2^64 ticks
///   on, and a scheme file an entry due on it). No entry on a scheme's list is due on a tick
///   already entered while the queue holds such a list (a scheme queues what falls due), so
///   none there is both.
/// - `ticking` is set from [`Arena::begin_tick`] to [`Arena::end_tick`]: the tick `now` is
///   entered but its bookkeeping is not complete. `tick_queued` counts the entries queued since
///   it was entered.
pub struct Arena<S: Storage> {
    entries: S::Buf<Entry>,
    free: u32,
    due: List,
    now: u64,
    len: usize,
    queued: usize,
    ticking: bool,
    /// A `u32` (capacity is at most [`MAX_CAPACITY`]) so that its update beside `queued` is
    /// not made one 16-byte load and store: that load waits for the two 8-byte stores before
    /// it (no store forwarding).
    tick_queued: u32,
    /// The tag of the list [`Arena::queue_whole`] last handed over ([`NO_TAG`] before the
    /// first), and the tick its entries were due on.
    whole_tag: u32,
    whole_tick: u64,
}

impl<S: Storage> Arena<S> {
    /// An arena for `config.capacity` timers with the clock at `config.start`.
    pub fn new(config: &Config) -> Result<Self, Error> {
        let cap = config.capacity;
        if cap == 0 || cap > MAX_CAPACITY {
            return Err(Error::Config);
        }
        let generation = match config.generation & GENERATION_MASK {
            0 => 1,
            g => g,
        };
        let entries = S::alloc(cap as usize, |i| Entry {
            id: 0,
            deadline: 0,
            prev: NIL,
            next: if i + 1 < cap as usize {
                i as u32 + 1
            } else {
                NIL
            },
            tag: (generation << TAG_BITS) | u64::from(FREE),
        })?;
        Ok(Arena {
            entries,
            free: 0,
            due: List::EMPTY,
            now: config.start,
            len: 0,
            queued: 0,
            ticking: false,
            tick_queued: 0,
            whole_tag: NO_TAG,
            whole_tick: 0,
        })
    }

    /// Enters tick `tick` (any tick after now): the clock moves there, and its bookkeeping is
    /// in progress until [`Arena::end_tick`].
    pub fn begin_tick(&mut self, tick: u64) {
        debug_assert!(!self.ticking, "tick {} entered twice", self.now);
        self.now = tick;
        self.ticking = true;
        self.tick_queued = 0;
    }

    /// Marks the bookkeeping of the current tick complete.
    pub fn end_tick(&mut self) {
        self.ticking = false;
    }

    /// Whether the current tick's bookkeeping is in progress.
    pub fn ticking(&self) -> bool {
        self.ticking
    }

    /// The tick under way, if one is: the next work of every scheme while it is.
    pub fn tick_under_way(&self) -> Option<u64> {
        self.ticking.then_some(self.now)
    }

    /// Entries queued since the current tick was entered.
    pub fn tick_queued(&self) -> usize {
        self.tick_queued as usize
    }

    /// Validates a range of intervals, `earliest..=latest`, and returns it as absolute ticks.
    #[inline]
    pub fn range(&self, earliest: u64, latest: u64) -> Result<(u64, u64), Error> {
        super::check_interval(earliest, latest)?;
        Ok((
            self.now.wrapping_add(earliest),
            self.now.wrapping_add(latest),
        ))
    }

    /// Whether outstanding entry `idx` is due `earliest..=latest` ticks from now, the range
    /// valid: a reschedule into the range leaves it where it is. Never true of a queued entry,
    /// due now (0 ticks left, and `earliest` is at least 1).
    #[inline(always)]
    pub fn due_within(&self, idx: u32, earliest: u64, latest: u64) -> bool {
        let left = self.remaining(self.entries[idx as usize].deadline);
        earliest != 0 && earliest <= left && left <= latest && latest < MAX_INTERVAL
    }

    /// Of two ticks not before now, the one nearer.
    pub fn sooner(&self, a: u64, b: u64) -> u64 {
        if self.remaining(a) <= self.remaining(b) {
            a
        } else {
            b
        }
    }

    /// The nearest deadline on `list`, [`Arena::never`] if it is empty: a walk of the whole
    /// list.
    pub fn earliest(&self, list: &List) -> u64 {
        // Cannot fail: no limit and no budget.
        self.earliest_of_few(list, usize::MAX, &mut Work::unlimited())
            .unwrap_or(self.never())
    }

    /// [`Arena::earliest`] of a `list` of at most `limit` entries, within `work`, a unit an
    /// entry; or why the walk stopped first: the budget ran out ([`Cut::Spent`], looked at
    /// first) or the list is longer ([`Cut::TooLong`]).
    pub fn earliest_of_few(&self, list: &List, limit: usize, work: &mut Work) -> Result<u64, Cut> {
        let mut at = list.head;
        let mut best = self.never();
        let mut seen = 0;
        while at != NIL {
            if work.is_spent() {
                return Err(Cut::Spent);
            }
            if seen == limit {
                return Err(Cut::TooLong);
            }
            seen += 1;
            work.spend(1);
            best = self.sooner(best, self.entries[at as usize].deadline);
            at = self.next(at);
        }
        Ok(best)
    }

    /// "No deadline": a tick as far off as a deadline can be, for seeding minima.
    pub fn never(&self) -> u64 {
        self.now.wrapping_add(MAX_INTERVAL)
    }

    /// The current tick.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// The deadline of a timer started now with `interval`, if the interval is valid.
    pub fn deadline(&self, interval: u64) -> Result<u64, Error> {
        if interval == 0 || interval >= MAX_INTERVAL {
            return Err(Error::Interval);
        }
        Ok(self.now.wrapping_add(interval))
    }

    /// Ticks from now until `deadline` (modulo 2^64).
    pub fn remaining(&self, deadline: u64) -> u64 {
        deadline.wrapping_sub(self.now)
    }

    /// The bounded walk of a sorted list (schemes 2 and 5): from entry `at` on, steps past
    /// every entry due no later than entry `idx`, spending one unit of `work` per entry and at
    /// least one step in all. `Ok` with the first entry due later (or [`NIL`]): `idx` goes
    /// before it. `Err` with the first entry not yet compared when the budget runs out.
    pub fn walk_sorted(&self, idx: u32, mut at: u32, work: &mut Work) -> Result<u32, u32> {
        let left = self.remaining(self.entries[idx as usize].deadline);
        let mut first = true;
        while at != NIL && self.remaining(self.entries[at as usize].deadline) <= left {
            if work.is_spent() && !first {
                return Err(at);
            }
            first = false;
            work.spend(1);
            at = self.next(at);
        }
        Ok(at)
    }

    /// The bounded, resumable walk of a tick over an unsorted list (scheme 1's one list,
    /// scheme 6's slot): from entry `*walk` on, queues every entry due now, taken off its list
    /// by `unlink`, and lowers `*min` to the deadline of each other, spending one unit of
    /// `work` per entry and at least one step in all. `true` once the end is reached; else
    /// `*walk` is the first entry not yet visited.
    pub fn walk_due(
        &mut self,
        walk: &mut u32,
        min: &mut u64,
        work: &mut Work,
        mut unlink: impl FnMut(&mut Self, u32),
    ) -> bool {
        let now = self.now;
        let mut first = true;
        while *walk != NIL {
            if work.is_spent() && !first {
                return false;
            }
            first = false;
            let at = *walk;
            // Step first: a due entry leaves the list.
            *walk = self.next(at);
            work.spend(1);
            let deadline = self.entries[at as usize].deadline;
            if deadline == now {
                unlink(self, at);
                self.queue(at);
            } else {
                *min = self.sooner(*min, deadline);
            }
        }
        true
    }

    /// Entries in use: pending plus queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no entry is in use.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries on the due queue.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Entries in use and not queued.
    pub fn pending(&self) -> usize {
        self.len - self.queued
    }

    /// The fixed capacity.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Bytes allocated for the entries.
    pub fn memory_bytes(&self) -> usize {
        self.entries.len() * core::mem::size_of::<Entry>()
    }

    /// Takes a free entry for a timer `(id, deadline)`, not yet on any scheme list. It keeps
    /// its [`FREE`] tag until the scheme files it, which sets the tag (linking it, queuing it,
    /// or [`Arena::retag`] for a scheme that keeps it on no list), before anything looks at it:
    /// a tag written here would be written again at once, and the narrow store a constant tag
    /// compiles to stalls the wide load of the write that follows (no store forwarding).
    ///
    /// Always inlined: a few loads and stores on every start, which the kernel's build of
    /// `AnyScheme::start_range` otherwise left out of line as the code around it changed, a
    /// call and a return on every start (Figure 9's cancel + start 1.33× dearer under TCG).
    ///
    /// Returns the entry's index and the handle naming it, made from the same read of the
    /// entry: asked for apart, after the stores here, the entry would be looked up again.
    #[inline(always)]
    pub fn alloc(&mut self, id: u64, deadline: u64) -> Result<(u32, Handle), Error> {
        let idx = self.free;
        if idx == NIL {
            return Err(Error::Full);
        }
        let e = &mut self.entries[idx as usize];
        let handle = Handle::new(idx, e.generation());
        self.free = e.next;
        e.id = id;
        e.deadline = deadline;
        e.prev = NIL;
        e.next = NIL;
        self.len += 1;
        Ok((idx, handle))
    }

    /// The handle naming entry `idx` as it is now.
    pub fn handle(&self, idx: u32) -> Handle {
        Handle::new(idx, self.entries[idx as usize].generation())
    }

    /// The entry a handle names, if it is still outstanding.
    #[inline]
    pub fn resolve(&self, handle: Handle) -> Result<u32, Error> {
        let idx = handle.index();
        // One comparison for both conditions: with the handle's generation taken off, the
        // packed word is the list tag, below `FREE` unless the entry is free, exactly when the
        // generations agree; any other generation leaves a difference of at least 2^24, or
        // wraps round.
        let issued = handle.generation() << TAG_BITS;
        match self.entries.get(idx as usize) {
            Some(e) if e.tag.wrapping_sub(issued) < u64::from(FREE) => Ok(idx),
            _ => Err(Error::Stale),
        }
    }

    /// The deadline of the entry at `idx`, if it is outstanding.
    pub fn deadline_at(&self, idx: u32) -> Option<u64> {
        match self.entries.get(idx as usize) {
            Some(e) if e.list() != FREE => Some(e.deadline),
            _ => None,
        }
    }

    /// The deadline of the outstanding timer `handle` names, if it is still outstanding.
    pub fn deadline_of(&self, handle: Handle) -> Option<u64> {
        let idx = self.resolve(handle).ok()?;
        Some(self.entries[idx as usize].deadline)
    }

    /// The request id of the timer `handle` names, if it is still outstanding.
    pub fn id_of(&self, handle: Handle) -> Option<u64> {
        let idx = self.resolve(handle).ok()?;
        Some(self.entries[idx as usize].id)
    }

    /// The handle of entry `idx`, if it is in use.
    pub fn outstanding(&self, idx: u32) -> Option<Handle> {
        match self.entries.get(idx as usize) {
            Some(e) if e.list() != FREE => Some(self.handle(idx)),
            _ => None,
        }
    }

    /// Entry `idx`.
    pub fn entry(&self, idx: u32) -> &Entry {
        &self.entries[idx as usize]
    }

    /// Entry `idx`, mutably.
    pub fn entry_mut(&mut self, idx: u32) -> &mut Entry {
        &mut self.entries[idx as usize]
    }

    /// Whether entry `idx` is on the due queue.
    #[inline(always)]
    pub fn is_queued(&self, idx: u32) -> bool {
        let e = &self.entries[idx as usize];
        let tag = e.list();
        tag == QUEUED || (tag == self.whole_tag && e.deadline == self.whole_tick)
    }

    /// Tags entry `idx`, on a scheme's list, `tag` (another of the scheme's own tags).
    pub fn retag(&mut self, idx: u32, tag: u32) {
        debug_assert!(tag < PLACING, "tag {tag} is not a scheme's");
        self.entries[idx as usize].set_list(tag);
    }

    /// Tags entry `idx`, on no list, as [`PLACING`].
    pub fn set_placing(&mut self, idx: u32) {
        self.entries[idx as usize].set_list(PLACING);
    }

    /// Takes entry `idx` off the due queue, leaving it on no list (to be re-armed).
    pub fn unqueue(&mut self, idx: u32) {
        self.unlink_due(idx);
        // Not free, not queued, as from `alloc`.
        self.entries[idx as usize].set_list(0);
    }

    /// Unlinks entry `idx`, queued, from the due queue.
    #[inline(always)]
    fn unlink_due(&mut self, idx: u32) {
        let mut due = self.due;
        self.unlink(&mut due, idx);
        self.due = due;
        self.queued -= 1;
        if due.head == NIL {
            self.whole_tag = NO_TAG;
        }
    }

    /// Frees entry `idx`: on the due queue if `queued` (what [`Arena::is_queued`] says of it,
    /// which the caller has asked already, to unlink it from a list of its own if it was not),
    /// unlinked from it here; otherwise on no list. Returns its request id.
    #[inline(always)]
    pub fn release(&mut self, idx: u32, queued: bool) -> u64 {
        if queued {
            self.unlink_due(idx);
        }
        free_in(&mut self.entries, &mut self.free, &mut self.len, idx)
    }

    /// Appends entry `idx`, on no list, to the due queue.
    #[inline]
    pub fn queue(&mut self, idx: u32) {
        let mut due = self.due;
        self.push_back(&mut due, QUEUED, idx);
        self.due = due;
        self.count_queued(1);
    }

    /// Counts `n` entries just put on the due queue, on the tick under way.
    #[inline(always)]
    fn count_queued(&mut self, n: usize) {
        self.queued += n;
        self.tick_queued += n as u32;
    }

    /// The empty due queue takes the whole of `list`, which is left empty.
    #[inline(always)]
    fn adopt(&mut self, list: &mut List) {
        debug_assert!(self.due.head == NIL, "the due queue is not empty");
        self.due = *list;
        *list = List::EMPTY;
    }

    /// Moves the entries at the front of `list` onto the end of the due queue in one splice:
    /// at most `limit` of them, stopping before the first that `due` (given its index and the
    /// entry) refuses. Each is retagged [`QUEUED`] on the way and keeps its links to the next.
    /// Returns how many moved.
    ///
    /// This is [`Arena::queue`] for a whole run of a list, at one tag write per entry instead
    /// of an unlink and a link.
    pub fn queue_front(
        &mut self,
        list: &mut List,
        limit: usize,
        mut due: impl FnMut(u32, &Entry) -> bool,
    ) -> usize {
        let first = list.head;
        let (mut last, mut at, mut n) = (NIL, first, 0);
        while at != NIL && n < limit {
            let e = &mut self.entries[at as usize];
            if !due(at, e) {
                break;
            }
            e.set_list(QUEUED);
            last = at;
            at = e.next;
            n += 1;
        }
        if n == 0 {
            return 0;
        }
        self.count_queued(n);
        if at == NIL && self.due.head == NIL {
            // The whole list becomes the due queue.
            self.adopt(list);
            return n;
        }
        // Cut the list after `last`...
        list.head = at;
        match at {
            NIL => list.tail = NIL,
            _ => self.entries[at as usize].prev = NIL,
        }
        // ... and hang `first..=last` on the due queue.
        let tail = self.due.tail;
        self.entries[first as usize].prev = tail;
        match tail {
            NIL => self.due.head = first,
            _ => self.entries[tail as usize].next = first,
        }
        self.entries[last as usize].next = NIL;
        self.due.tail = last;
        n
    }

    /// Hands the whole of `list`, its `n` entries all due now and all tagged `tag` (a scheme's),
    /// to the empty due queue in one step, without visiting them. They keep their tag: an
    /// entry tagged `tag` and due now reads as queued from then on ([`Arena::is_queued`]), which
    /// is sound because a scheme files no entry due now on its lists: it queues it.
    ///
    /// [`Arena::queue_front`] for a list whose length the scheme keeps and whose entries are all
    /// due: it spares the walk that touches each fired entry first, a loop whose end, the
    /// length of the tick's run, no branch predictor knows.
    #[inline]
    pub fn queue_whole(&mut self, list: &mut List, n: usize, tag: u32) {
        debug_assert!(tag < PLACING, "tag {tag} is not a scheme's");
        self.adopt(list);
        self.count_queued(n);
        self.whole_tag = tag;
        self.whole_tick = self.now;
    }

    /// The tag and the tick of the last list [`Arena::queue_whole`] handed over, if any (tests).
    #[cfg(test)]
    pub(crate) fn whole_tick(&self) -> Option<(u32, u64)> {
        (self.whole_tag != NO_TAG).then_some((self.whole_tag, self.whole_tick))
    }

    /// The entry [`Arena::pop_due`] takes next, or [`NIL`].
    #[inline(always)]
    pub fn next_due(&self) -> u32 {
        self.due.head
    }

    /// Takes the oldest entry off the due queue and frees it.
    #[inline(always)]
    pub fn pop_due(&mut self) -> Option<Expired> {
        let idx = self.due.head;
        if idx == NIL {
            return None;
        }
        // The entries as one slice, read once: through `self`, the compiler would read the
        // buffer's address and length again after each store to an entry.
        let Arena {
            entries,
            free,
            due,
            len,
            queued,
            whole_tag,
            ..
        } = self;
        let entries = &mut **entries;
        let e = entries[idx as usize];
        let (handle, deadline, next) = (Handle::new(idx, e.generation()), e.deadline, e.next);
        // The head leaves the queue, and with the last entry any list handed over whole.
        due.head = next;
        match next {
            NIL => (due.tail, *whole_tag) = (NIL, NO_TAG),
            _ => entries[next as usize].prev = NIL,
        }
        *queued -= 1;
        let id = free_in(entries, free, len, idx);
        Some(Expired {
            handle,
            id,
            deadline,
        })
    }

    /// Appends entry `idx`, on no list, to `list`, tagging it `tag`. Returns whether `list`
    /// was empty.
    #[inline]
    pub fn push_back(&mut self, list: &mut List, tag: u32, idx: u32) -> bool {
        let tail = list.tail;
        {
            let e = &mut self.entries[idx as usize];
            e.prev = tail;
            e.next = NIL;
            e.set_list(tag);
        }
        let empty = tail == NIL;
        if empty {
            list.head = idx;
        } else {
            self.entries[tail as usize].next = idx;
        }
        list.tail = idx;
        empty
    }

    /// Inserts entry `idx`, on no list, before entry `at` of `list` (at the end if `at` is
    /// [`NIL`]), tagging it `tag`.
    pub fn insert_before(&mut self, list: &mut List, tag: u32, at: u32, idx: u32) {
        if at == NIL {
            self.push_back(list, tag, idx);
            return;
        }
        let prev = self.entries[at as usize].prev;
        {
            let e = &mut self.entries[idx as usize];
            e.prev = prev;
            e.next = at;
            e.set_list(tag);
        }
        self.entries[at as usize].prev = idx;
        if prev == NIL {
            list.head = idx;
        } else {
            self.entries[prev as usize].next = idx;
        }
    }

    /// Unlinks entry `idx` from `list`, the list it is on. Its `list` tag is left for the
    /// caller to overwrite, and its links too: whatever takes it next (a list, the due queue,
    /// the free list) sets both.
    #[inline]
    pub fn unlink(&mut self, list: &mut List, idx: u32) {
        let Entry { prev, next, .. } = self.entries[idx as usize];
        if prev == NIL {
            list.head = next;
        } else {
            self.entries[prev as usize].next = next;
        }
        if next == NIL {
            list.tail = prev;
        } else {
            self.entries[next as usize].prev = prev;
        }
    }

    /// The entry after `idx` on its list, or [`NIL`].
    pub fn next(&self, idx: u32) -> u32 {
        self.entries[idx as usize].next
    }

    /// The entry before `idx` on its list, or [`NIL`].
    pub fn prev(&self, idx: u32) -> u32 {
        self.entries[idx as usize].prev
    }
}

/// Frees entry `idx` of `entries`, on no list: it goes on the free list that starts at `*free`
/// under the next generation, and `*len` counts it gone. Returns its request id. On the arena's
/// fields taken apart, so that [`Arena::pop_due`] can free on the slice it has read.
#[inline(always)]
fn free_in(entries: &mut [Entry], free: &mut u32, len: &mut usize, idx: u32) -> u64 {
    let e = &mut entries[idx as usize];
    e.bump();
    e.prev = NIL;
    e.next = *free;
    *free = idx;
    *len -= 1;
    e.id
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::HostStorage;

    fn arena(cap: u32) -> Arena<HostStorage> {
        Arena::new(&Config {
            capacity: cap,
            slots: 1,
            start: 0,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn an_entry_is_four_words_and_a_handle_one() {
        assert_eq!(core::mem::size_of::<Entry>(), 32);
        assert_eq!(core::mem::size_of::<Option<Handle>>(), 8);
    }

    #[test]
    fn handles_go_stale_when_freed() {
        let mut a = arena(2);
        let (i, h) = a.alloc(7, 3).unwrap();
        // Allocated, not yet filed: no handle names it.
        assert_eq!(a.resolve(h), Err(Error::Stale));
        a.retag(i, 0);
        // Filed, the handle `alloc` gave names it.
        assert_eq!(a.handle(i), h);
        assert_eq!(a.resolve(h), Ok(i));
        assert_eq!(a.release(i, a.is_queued(i)), 7);
        assert_eq!(a.resolve(h), Err(Error::Stale));
        // The entry is reused with a new generation: the old handle stays stale.
        let (j, hj) = a.alloc(8, 4).unwrap();
        a.retag(j, 0);
        assert_eq!(j, i);
        assert_eq!(a.resolve(h), Err(Error::Stale));
        assert_eq!(a.resolve(hj), Ok(j));
        // Only its own generation names it: not the one before or after, nor the highest.
        let g = a.entry(j).generation();
        for other in [g - 1, g + 1, GENERATION_MASK] {
            assert_eq!(a.resolve(Handle::new(j, other)), Err(Error::Stale));
        }
        assert_eq!(a.resolve(Handle::new(99, 0)), Err(Error::Stale));
        assert_eq!(a.resolve(Handle::new(0, 0)), Err(Error::Stale));
        assert_eq!(a.resolve(Handle::from_raw(0)), Err(Error::Stale));
        assert_eq!(a.resolve(Handle::from_raw(u64::MAX)), Err(Error::Stale));
    }

    #[test]
    fn generations_wrap_past_zero() {
        let mut e = Entry {
            id: 0,
            deadline: 0,
            prev: NIL,
            next: NIL,
            tag: (GENERATION_MASK << TAG_BITS) | 5,
        };
        assert_eq!((e.generation(), e.list()), (GENERATION_MASK, 5));
        e.bump();
        assert_eq!((e.generation(), e.list()), (1, FREE));
        e.set_list(PLACING);
        assert_eq!((e.generation(), e.list()), (1, PLACING));
    }

    #[test]
    fn arenas_started_at_other_generations_issue_other_handles() {
        let start = |generation| {
            let mut a = Arena::<HostStorage>::new(&Config {
                capacity: 2,
                generation,
                ..Default::default()
            })
            .unwrap();
            let i = a.alloc(1, 1).unwrap().0;
            a.retag(i, 0);
            a
        };
        let (a, b) = (start(1), start(1 << 39));
        let (ha, hb) = (a.handle(0), b.handle(0));
        assert_ne!(ha, hb);
        assert_eq!((a.resolve(ha), b.resolve(hb)), (Ok(0), Ok(0)));
        assert_eq!(
            (a.resolve(hb), b.resolve(ha)),
            (Err(Error::Stale), Err(Error::Stale))
        );
        // Generation 0 is never issued, and only the low 40 bits count.
        assert_eq!(start(0).handle(0), ha);
        assert_eq!(start(1 << 40).handle(0), ha);
        // An arena started at the last generation wraps past 0 on the first free.
        let mut c = start(GENERATION_MASK);
        assert_eq!(c.handle(0).generation(), GENERATION_MASK);
        c.release(0, c.is_queued(0));
        assert_eq!(c.entry(0).generation(), 1);
    }

    #[test]
    fn capacity_is_bounded() {
        let new = |capacity| {
            Arena::<HostStorage>::new(&Config {
                capacity,
                slots: 1,
                start: 0,
                ..Default::default()
            })
        };
        assert!(new(0).is_err());
        assert!(new(MAX_CAPACITY + 1).is_err());
        assert!(new(3).is_ok());
    }

    #[test]
    fn full_arena_refuses_and_recovers() {
        let mut a = arena(2);
        let i = a.alloc(1, 1).unwrap().0;
        a.alloc(2, 1).unwrap();
        assert_eq!(a.alloc(3, 1), Err(Error::Full));
        assert_eq!(a.len(), 2);
        a.release(i, a.is_queued(i));
        assert!(a.alloc(3, 1).is_ok());
    }

    #[test]
    fn lists_link_and_unlink() {
        let mut a = arena(4);
        let mut l = List::EMPTY;
        let ids: [u32; 3] = core::array::from_fn(|k| a.alloc(k as u64, 0).unwrap().0);
        for &i in &ids {
            a.push_back(&mut l, 5, i);
        }
        a.unlink(&mut l, ids[1]);
        assert_eq!(l.head, ids[0]);
        assert_eq!(a.next(ids[0]), ids[2]);
        assert_eq!(l.tail, ids[2]);
        a.insert_before(&mut l, 5, ids[0], ids[1]);
        assert_eq!(l.head, ids[1]);
        a.unlink(&mut l, ids[2]);
        a.unlink(&mut l, ids[0]);
        a.unlink(&mut l, ids[1]);
        assert!(l.is_empty());
        assert_eq!(l.tail, NIL);
    }

    #[test]
    fn due_queue_is_fifo_and_stop_removes_from_it() {
        let mut a = arena(3);
        let i: [u32; 3] = core::array::from_fn(|k| a.alloc(k as u64, 9).unwrap().0);
        for &x in &i {
            a.queue(x);
        }
        a.release(i[1], a.is_queued(i[1]));
        assert_eq!(a.queued(), 2);
        assert_eq!(a.pop_due().map(|e| e.id), Some(0));
        assert_eq!(a.pop_due().map(|e| e.id), Some(2));
        assert_eq!(a.pop_due(), None);
        assert!(a.is_empty());
    }

    #[test]
    fn queue_front_splices_a_run_onto_the_due_queue() {
        let mut a = arena(6);
        let i: [u32; 6] = core::array::from_fn(|k| a.alloc(k as u64, 9).unwrap().0);
        a.queue(i[0]);
        let mut l = List::EMPTY;
        for &x in &i[1..] {
            a.push_back(&mut l, 5, x);
        }
        a.retag(i[4], 6);
        // Limited to two: 1 and 2 move, after 0.
        assert_eq!(a.queue_front(&mut l, 2, |_, e| e.list() == 5), 2);
        assert_eq!((l.head, a.prev(i[3])), (i[3], NIL));
        assert_eq!((a.queued(), a.tick_queued()), (3, 3));
        // 3 moves; 4 is refused, and stays with 5 behind it.
        assert_eq!(a.queue_front(&mut l, usize::MAX, |_, e| e.list() == 5), 1);
        assert_eq!(a.queue_front(&mut l, usize::MAX, |_, e| e.list() == 5), 0);
        assert_eq!((l.head, l.tail), (i[4], i[5]));
        a.unlink(&mut l, i[4]);
        assert_eq!(a.queue_front(&mut l, usize::MAX, |_, e| e.list() == 5), 1);
        assert!(l.is_empty() && l.tail == NIL);
        // Every moved entry is queued, and pops in order; stop takes one off the queue.
        assert!(a.is_queued(i[5]) && !a.is_queued(i[4]));
        a.release(i[2], a.is_queued(i[2]));
        let popped: std::vec::Vec<u64> =
            core::iter::from_fn(|| a.pop_due().map(|e| e.id)).collect();
        assert_eq!(popped, [0, 1, 3, 5]);
        assert_eq!(a.queued(), 0);
    }

    #[test]
    fn queue_front_hands_a_whole_list_to_an_empty_due_queue() {
        let mut a = arena(4);
        let mut l = List::EMPTY;
        for k in 0..3 {
            let i = a.alloc(k, 9).unwrap().0;
            a.push_back(&mut l, 5, i);
        }
        assert_eq!(a.queue_front(&mut l, usize::MAX, |_, _| true), 3);
        assert!(l.is_empty() && l.tail == NIL);
        // The queue takes more behind them.
        let i = a.alloc(3, 9).unwrap().0;
        a.queue(i);
        let popped: std::vec::Vec<u64> =
            core::iter::from_fn(|| a.pop_due().map(|e| e.id)).collect();
        assert_eq!(popped, [0, 1, 2, 3]);
        assert!(a.is_empty() && a.queued() == 0);
    }

    #[test]
    fn intervals_are_validated_and_wrap() {
        let mut a = Arena::<HostStorage>::new(&Config {
            capacity: 1,
            slots: 1,
            start: u64::MAX,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(a.deadline(0), Err(Error::Interval));
        assert_eq!(a.deadline(MAX_INTERVAL), Err(Error::Interval));
        assert_eq!(a.deadline(2), Ok(1));
        a.begin_tick(0);
        a.end_tick();
        assert_eq!(a.remaining(5), 5);
        assert_eq!(a.range(1, 0), Err(Error::Interval));
        assert_eq!(a.range(0, 5), Err(Error::Interval));
        assert_eq!(a.range(2, 3), Ok((2, 3)));
    }
}
