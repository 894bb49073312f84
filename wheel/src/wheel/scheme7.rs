// SPDX-License-Identifier: GPL-2.0

//! Scheme 7 (section VI.B of the paper, Figures 7 and 8): hierarchical timing wheels, with
//! timers migrating (cascading) from coarse levels to fine ones as the clock approaches them.
//!
//! # Geometry
//!
//! The paper's example clock has digits of seconds, minutes, hours and days, one array of lists
//! per digit. Ours has `LVL_DEPTH` levels of `2^LVL_BITS` = 64 slots: the digits of the tick
//! counter in base 64, each a 6-bit field. Level `l` has slots of `64^l` ticks:
//!
//! | level    | ticks per slot | range             | at HZ=1000       |
//! |----------|----------------|-------------------|------------------|
//! | 0        | 1              | 64                | 64 ms            |
//! | 1        | 64             | 4 096             | 4 s              |
//! | 2        | 4 096          | 262 144           | 4 min            |
//! | 3        | 2^18           | 2^24              | 4.6 h            |
//! | 4        | 2^24           | 2^30              | 12 days          |
//! | 5        | 2^30           | 2^36              | 2.2 years        |
//! | overflow | —              | `MAX_INTERVAL`    | 292 million years |
//!
//! # Placement
//!
//! A timer goes in the level of the *highest digit in which its deadline differs from now*,
//! in the slot named by that digit of the deadline; the lower digits are the paper's
//! "remainder". In Figure 7, 11 d 10 h 24 min 30 s plus 50 min 45 s is 11 d 11 h 15 min 15 s:
//! days agree, hours differ, so the timer goes in hour slot 11. With 6-bit digits the highest
//! differing digit is the leading-zero count of `now ^ deadline`, divided by 6.
//!
//! Why that is exact: the deadline agrees with now above digit `l` and is later, so its digit
//! `l` is ahead of the level's pointer. The pointer reaches that slot on the first tick whose
//! lower digits are all zero and whose digit `l` is the deadline's: the deadline with its lower
//! digits cleared, which is not after the deadline. There the timer is filed again; what is
//! left is below `64^l`, so it drops to a lower level (the paper's migration), or is due if
//! nothing is left. At level 0 the slot is reached on the deadline itself. A timer is queued
//! only when the clock equals its deadline: never early, never late.
//!
//! One exception, below the top: a timer due within level 0's turn (1 to 63 ticks ahead) goes
//! on level 0, in the slot of the deadline's lowest digit, whatever the digits above say. Level
//! 0's pointer moves a slot a tick, so it reaches that slot on the deadline itself, in its next
//! turn if the slot is behind it; the paper's rule would put a timer that crosses a multiple of
//! 64, however near, on level 1, to migrate at the crossing (the paper's "if the minutes
//! remaining were zero, we could go directly to the second array", taken one step on). This
//! spares most short timers their migration: Ratas' pace timers, 10 ticks, crossed one in 6.4.
//! A timer filed above level 0 earlier stays there as the clock comes within level 0's turn of
//! it, until its list's cascade, so a level-0 slot behind the pointer may hold timers due
//! after some on level 1: [`Scheme::next_work`] and [`Scheme::next_expiry`] then look at both.
//!
//! The top level has no higher digit to compare, so it is a ring: its pointer next visits the
//! slot `k` ahead of it `k` top slots from now, so a deadline 1 to 64 top slots ahead goes in
//! slot `digit + k` modulo 64 (for `k = 64`, the slot under the pointer, visited again a full
//! turn on). Farther deadlines wait in the *overflow list*, a one-slot level above the top,
//! cascaded each time the top pointer moves on (every `2^30` ticks): whatever is then at most
//! 64 top slots ahead drops into the top level.
//!
//! Modular ticks need nothing special: every level's digit is a bit field of the tick and 2^64
//! is a multiple of each level's range, so the counter rolling over from `u64::MAX` to 0 is one
//! more carry, turning every level at once. A deadline past the roll-over differs from now in
//! bit 63 and lands in the top ring, which handles it like any deadline in the next top slot.
//!
//! # Cost
//!
//! | routine     | cost          | note                                                       |
//! |-------------|---------------|------------------------------------------------------------|
//! | start       | O(1)          | a leading-zero count, a shift and a mask; set a bit        |
//! | stop        | O(1)          | unlink; clear the bit if the slot empties                  |
//! | reschedule  | O(1)          | a new deadline in place if it names the same slot or is later (the entry is *put off*: its list's cascade files it again), else unlink and file |
//! | tick        | O(1) amort.   | a timer migrates at most once per level; the overflow list is rescanned every `2^30` ticks |
//! | next work   | O(levels)     | the lowest busy level's first busy slot: its lower bound; within a budget, exact (a walk of the lists whose first entry is not on their bound) |
//! | next expiry | O(1) + a slot | trailing-zero counts find the earliest slot; exactness costs a walk of that slot (above level 0), or of the overflow list if every level is empty; `Unknown` while entries are put off |
//!
//! # Bounded ticks and the tickless clock
//!
//! A tick's bookkeeping is a sequence of steps, each one entry: the migrations out of the slot
//! under each turning level's pointer, coarse to fine, and the walk of the overflow list after
//! the top level's. Cut short by its work budget, the tick resumes at the step it stopped at:
//! a cascade takes the head of its slot until the slot is empty (an entry filed back onto it,
//! a full top turn away, ends it, since everything behind it came later still), and the
//! overflow walk keeps a cursor that moves on when its entry leaves.
//!
//! A tickless clock needs bookkeeping only on the ticks on which a pointer moves onto a busy
//! slot (or the top pointer moves with the overflow list busy): the first of them is O(levels)
//! away through the occupancy words, and the clock jumps there, migrating on the way as it
//! passes. Each list also keeps a lower bound of its deadlines, lowered as timers are filed,
//! so [`Scheme::next_work`] is the bound of the first busy list (which, by the placement rule,
//! holds the earliest timers, but for a level-0 slot in level 0's next turn, when the first
//! busy list above level 0 is looked at too): a lone timer a week away is one wakeup, its
//! migrations done by the advance that wakeup makes. A stop or move keeps O(1) and leaves the
//! bound alone, so it stays low when the earliest timer on its list goes, and a timer put off
//! stays on a list whose bound is its old deadline: [`Scheme::next_work_within`] looks at what
//! the lists hold, within its budget (a list of at most [`super::LIST_LOOK_LIMIT`]), and a
//! caller about to arm a clock for the answer, or that has cancelled or pushed back the timer
//! its clock is armed for, asks [`Scheme::tighten_within`] to walk the list next work names
//! (one above level 0 of at most [`super::TIGHTEN_LIMIT`], the one a stop or move last left
//! busy) and make its bound exact, so that it does not wake for either.
//!
//! The commonest such tick, with timers a few ticks apart, turns level 0 alone onto a busy
//! slot whose entries are all due: [`Scheme::advance`] takes it whole, handing the slot to the
//! due queue in one splice (a tag write per entry, within the budget), without the general
//! cascade.
//!
//! # Ranges
//!
//! A timer given a range of ticks ([`Scheme::start_range`]) is due on the last boundary of
//! the coarsest slots the range holds one of: a deadline with every digit below level `l` zero
//! drops from its level-`l` slot straight to the due queue when the pointer reaches it, never
//! migrating (and timers with slack gather on the same ticks).
//!
//! Timers with equal deadlines may pop in any order.

use super::arena::{Arena, Cut, List, NIL};
use super::slots::Slots;
use super::{Advanced, Clock, Config, Error, NextExpiry, Scheme, SchemeKind, Storage, Work};

/// Bits of the tick counter per level: 64 slots, so that a level's occupancy is one `u64` and
/// its digit a shift and a mask. Being a power of two is what makes the level a leading-zero
/// count, and what makes the digits roll over cleanly at 2^64.
const LVL_BITS: u32 = 6;

/// Levels. Six cover `2^36` ticks before the overflow list; at most `64 / LVL_BITS` = 10, so
/// that the top digit is a whole bit field of the tick.
const LVL_DEPTH: usize = 6;

/// Slots per level.
const LVL_SIZE: usize = 1 << LVL_BITS;

/// Mask of a level's digit.
const LVL_MASK: u64 = LVL_SIZE as u64 - 1;

/// Words of the occupancy bitmap a wheel has at most: one a level, and the overflow list's.
const MAX_WORDS: usize = 64 / LVL_BITS as usize + 1;

/// The tag bit of an entry put off (see [`Hierarchical::retime`]), beside its list's index.
const PUT_OFF: u32 = 1 << 20;

/// The shape of a hierarchy of wheels: level `l` has `radix(l)` slots of `span(l)` ticks, with
/// `span(0) = 1` and `span(l + 1) = span(l) * radix(l)` — the digits of a mixed-radix clock,
/// lowest first (seconds, minutes, hours, days in Figure 7). The placement helpers below are
/// written against this, so that the paper's example runs through the code the wheel uses.
trait Shape {
    /// Number of levels.
    fn depth(&self) -> usize;

    /// Slots of `level`.
    fn radix(&self, level: usize) -> u64;

    /// Ticks per slot of `level`.
    fn span(&self, level: usize) -> u64;

    /// The level of the highest digit in which `now` and the deadline `rem` ticks later
    /// differ, capped at the top level.
    fn level_for(&self, now: u64, rem: u64) -> usize {
        level_by_digits(self, now, rem)
    }
}

/// [`Shape::level_for`] by trying each level in turn: the lowest `l` whose current
/// `span(l + 1)`-tick window still holds the deadline.
fn level_by_digits<G: Shape + ?Sized>(shape: &G, now: u64, rem: u64) -> usize {
    let top = shape.depth() - 1;
    (0..top)
        .find(|&l| {
            let window = shape.span(l + 1);
            (now % window)
                .checked_add(rem)
                .is_some_and(|end| end < window)
        })
        .unwrap_or(top)
}

/// Where a timer goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Place {
    /// Nothing is left to wait: it is due now.
    Due,
    /// On `slot` of `level`.
    Slot {
        /// The level.
        level: usize,
        /// The slot.
        slot: usize,
    },
    /// Beyond the top level's ring.
    Overflow,
}

/// The slot of `level` under its pointer on tick `now`: digit `level` of `now`.
fn digit(shape: &impl Shape, now: u64, level: usize) -> u64 {
    now / shape.span(level) % shape.radix(level)
}

/// How many times `level`'s pointer moves between `now` and `rem` ticks later; `None` if that
/// is past the end of the counter (only possible for a shape whose top span is near 2^64).
fn slots_ahead(shape: &impl Shape, now: u64, rem: u64, level: usize) -> Option<u64> {
    let span = shape.span(level);
    (now % span).checked_add(rem).map(|end| end / span)
}

/// Whether tick `now` moves `level`'s pointer on: the step onto it from the tick before rolls
/// all the lower digits over.
#[cfg(test)]
fn turns(shape: &impl Shape, now: u64, level: usize) -> bool {
    slots_ahead(shape, now.wrapping_sub(1), 1, level) == Some(1)
}

/// Where a timer due `rem` ticks after `now` goes. Within a turn of the lowest level (the
/// pointer's own slot excluded), below the top: the lowest level, in the slot `rem` steps
/// ahead of its pointer, which moves a slot a tick and so reaches it on the deadline whatever
/// the digits above say. Otherwise [`place_by_digits`].
fn place(shape: &impl Shape, now: u64, rem: u64) -> Place {
    let radix = shape.radix(0);
    if shape.depth() > 1 && rem != 0 && rem < radix {
        let slot = (digit(shape, now, 0) + rem) % radix;
        return Place::Slot {
            level: 0,
            slot: slot as usize,
        };
    }
    place_by_digits(shape, now, rem)
}

/// Where the paper files a timer due `rem` ticks after `now`: the level of the highest digit
/// that differs, in the slot as many steps ahead of that level's pointer as the pointer will
/// move before the deadline. Below the top this is the deadline's digit; the top is a ring and
/// holds at most one turn.
fn place_by_digits(shape: &impl Shape, now: u64, rem: u64) -> Place {
    if rem == 0 {
        return Place::Due;
    }
    let level = shape.level_for(now, rem);
    let radix = shape.radix(level);
    match slots_ahead(shape, now, rem, level) {
        Some(ahead) if ahead <= radix => Place::Slot {
            level,
            slot: ((digit(shape, now, level) + ahead) % radix) as usize,
        },
        _ => Place::Overflow,
    }
}

/// The first occupied slot at or after `from`, in the order a pointer visits them (wrapping
/// round); `occupied` must not be zero.
fn next_occupied(occupied: u64, from: usize) -> usize {
    debug_assert!(occupied != 0, "no occupied slot to find");
    let ahead = occupied.rotate_right(from as u32).trailing_zeros() as usize;
    (from + ahead) & LVL_MASK as usize
}

/// The wheel's own shape: `DEPTH` levels of 64 slots.
struct Pow2<const DEPTH: usize>;

impl<const DEPTH: usize> Shape for Pow2<DEPTH> {
    fn depth(&self) -> usize {
        DEPTH
    }

    fn radix(&self, _level: usize) -> u64 {
        LVL_SIZE as u64
    }

    fn span(&self, level: usize) -> u64 {
        1 << (LVL_BITS as usize * level)
    }

    fn level_for(&self, now: u64, rem: u64) -> usize {
        // The bits in which now and the deadline differ. Level 0's are or-ed in so that a
        // deadline differing only there (or, in a caller's mistake, not at all) is level 0.
        let differ = (now ^ now.wrapping_add(rem)) | LVL_MASK;
        let msb = u64::BITS - 1 - differ.leading_zeros();
        ((msb / LVL_BITS) as usize).min(DEPTH - 1)
    }
}

/// Hierarchical timing wheels with an overflow list.
///
/// `DEPTH` is the number of levels, `LVL_DEPTH` (6) unless chosen otherwise; tests use fewer, so
/// that a few thousand ticks reach the overflow list. It must be in `1..=10`.
///
/// # Invariants
///
/// - After every complete tick, each pending entry is on the list that `place` names for its
///   deadline seen from `now`, or, above level 0, on the one `place_by_digits` names (filed
///   before the clock came within level 0's turn of it), with `Entry::list` that list's index
///   in `slots`: `level * 64 + slot`, or `DEPTH * 64` for the overflow list; or it is *put
///   off*: on a list below the top level whose first tick comes before its deadline, tagged
///   with that list's index and `PUT_OFF`, and counted in `put_off`. In particular, below the
///   top level the slot under the pointer is empty, every entry not put off on a level above 0
///   is due before every entry on a higher one, every entry on level 0 in its current turn
///   before every entry above, and everything in the wheel before everything on the overflow
///   list. While a tick is half done, the lists still to be cascaded (`levels_left`, the
///   overflow list from `ov_at`) may hold entries that belong elsewhere, and nothing else does.
/// - Every deadline on a non-empty list `k` is at or after its bound `bound(k)` (counted from
///   now), and the bound comes before the end of the span of list `k` (for a list below the
///   top, the next list its level's pointer reaches), so that the first busy list's bound, and
///   when that list is on level 0 in its next turn the first busy list's above level 0 too, is
///   a lower bound of every deadline. The bound is `low[k]`, except for a level-0 list below
///   the top, whose bound is the tick its pointer next moves onto it (`low[k]` unused).
#[repr(C)]
pub struct Hierarchical<S: Storage, const DEPTH: usize = LVL_DEPTH> {
    /// First, as in every scheme: see [`super::AnyScheme`].
    pub(super) arena: Arena<S>,
    /// The slots, level by level, with their occupancy (one 64-bit word per level), and last
    /// the overflow list, beyond the top level's turn, at [`Self::OVERFLOW`].
    slots: Slots<S>,
    /// A lower bound of the deadlines on each list (but level 0's, below the top: see
    /// [`Self::bound`]).
    low: S::Buf<u64>,
    /// Levels whose pointer slot the current tick has still to cascade: `levels_left - 1`
    /// down to 0.
    levels_left: usize,
    /// Whether the current tick walks the overflow list (after the top level, before the
    /// others), and the next entry it looks at, or [`NIL`].
    ov_walk: bool,
    ov_at: u32,
    /// The list the last stop or move off a list, or new deadline on one, left busy, whose
    /// bound may so be low: the one [`Scheme::tighten_within`] walks. [`NIL`] once walked.
    loose: u32,
    /// The least deadline the overflow walk has left on the list.
    ov_min: u64,
    /// Entries put off by [`Self::retime`] and not filed again since (tagged [`PUT_OFF`]).
    put_off: usize,
    /// Below the top, each level-0 list's entries and those of them put off, so that a tick
    /// whose list holds none put off hands it to the due queue whole, without a walk
    /// ([`Arena::queue_whole`]). Held in place rather than allocated: the compiler then knows
    /// its length, and the index of a level-0 list, below it, needs no bounds check.
    level0: [Level0; LVL_SIZE],
}

/// What [`Hierarchical`] counts of a level-0 list below the top.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Level0 {
    /// Entries on the list.
    entries: u32,
    /// Those of them put off there.
    put_off: u32,
}

impl<S: Storage, const DEPTH: usize> Hierarchical<S, DEPTH> {
    /// Index of the overflow list in `slots`.
    const OVERFLOW: usize = DEPTH * LVL_SIZE;
    /// Index of the top level's first slot: the lists below it may hold entries put off.
    const TOP: usize = (DEPTH - 1) * LVL_SIZE;

    /// An empty wheel for `config.capacity` timers, its clock at `config.start`.
    pub fn new(config: &Config) -> Result<Self, Error> {
        if DEPTH == 0 || DEPTH * LVL_BITS as usize > u64::BITS as usize {
            return Err(Error::Config);
        }
        let arena = Arena::new(config)?;
        let never = arena.never();
        Ok(Hierarchical {
            arena,
            slots: Slots::new(Self::OVERFLOW as u32 + 1)?,
            low: S::alloc(Self::OVERFLOW + 1, |_| 0)?,
            levels_left: 0,
            ov_walk: false,
            ov_at: NIL,
            loose: NIL,
            ov_min: never,
            put_off: 0,
            level0: [Level0::default(); LVL_SIZE],
        })
    }

    /// The list `place` names for a timer due `rem` ticks from now, or `None` if it is due.
    ///
    /// Below the top level, by bit operations alone: within level 0's turn, the deadline's
    /// lowest digit; beyond it, the level is the highest differing digit and the slot that
    /// digit of the deadline (`place` proves them the same); the top level's ring and the
    /// overflow list go through `place` itself.
    #[inline(always)]
    fn list_for(&self, rem: u64) -> Option<usize> {
        debug_assert!(rem < super::MAX_INTERVAL, "filed {rem} ticks late");
        if rem == 0 {
            return None;
        }
        let now = self.arena.now();
        let deadline = now.wrapping_add(rem);
        // Within level 0's turn: its slot is the deadline's lowest digit.
        if DEPTH > 1 && rem < LVL_SIZE as u64 {
            return Some((deadline & LVL_MASK) as usize);
        }
        let differ = (now ^ deadline) | LVL_MASK;
        let level = ((u64::BITS - 1 - differ.leading_zeros()) / LVL_BITS) as usize;
        if level + 1 < DEPTH {
            let slot = (deadline >> (LVL_BITS as usize * level)) & LVL_MASK;
            return Some(level * LVL_SIZE + slot as usize);
        }
        self.list_on_top(now, rem)
    }

    /// [`Self::list_for`] for a deadline whose highest differing digit is the top level's.
    #[cold]
    fn list_on_top(&self, now: u64, rem: u64) -> Option<usize> {
        match place(&Pow2::<DEPTH>, now, rem) {
            Place::Due => None,
            Place::Slot { level, slot } => Some(level * LVL_SIZE + slot),
            Place::Overflow => Some(Self::OVERFLOW),
        }
    }

    /// The list entry `idx` belongs on now, or `None` if it is due.
    fn list_of(&self, idx: u32) -> Option<usize> {
        self.list_for(self.arena.remaining(self.arena.entry(idx).deadline))
    }

    arena_moves!(arena);

    /// The last tick of the range on a boundary of the coarsest slots the range holds one of:
    /// a timer due there drops from its first slot straight to the due queue, never migrating,
    /// and one pushed back into the range again and again stays put for longest (see
    /// [`Scheme::reschedule`]).
    fn choose(&self, earliest: u64, latest: u64) -> Result<u64, Error> {
        if earliest == latest {
            return Ok(earliest);
        }
        for level in (1..DEPTH).rev() {
            let span = Pow2::<DEPTH>.span(level);
            let boundary = latest & !(span - 1);
            if boundary.wrapping_sub(earliest) <= latest.wrapping_sub(earliest) {
                return Ok(boundary);
            }
        }
        Ok(latest)
    }

    /// Links entry `idx`, on no list, where its deadline belongs from now, or queues it.
    #[inline(always)]
    fn file(&mut self, idx: u32, deadline: u64, _work: &mut Work) {
        match self.list_for(self.arena.remaining(deadline)) {
            None => self.arena.queue(idx),
            Some(list) => self.link_at(list, idx, deadline),
        }
    }

    /// List `list`: `level * 64 + slot`, or [`Self::OVERFLOW`].
    fn list(&self, list: usize) -> &List {
        self.slots.list(list as u32)
    }

    /// The overflow list.
    fn overflow(&self) -> &List {
        self.list(Self::OVERFLOW)
    }

    /// The occupancy of `level`: bit `s` for slot `s`.
    fn occupied(&self, level: usize) -> u64 {
        self.slots.word(level)
    }

    /// Appends entry `idx` to list `list`.
    #[inline(always)]
    fn link(&mut self, list: usize, idx: u32) {
        self.link_at(list, idx, self.arena.entry(idx).deadline);
    }

    /// [`Self::link`] of an entry due on `deadline`.
    #[inline(always)]
    fn link_at(&mut self, list: usize, idx: u32, deadline: u64) {
        // INVARIANT: the tag is the list's index.
        let empty = self
            .slots
            .push_back(&mut self.arena, list as u32, list as u32, idx);
        if Self::level0_below_top(list) {
            self.level0[list].entries += 1;
        }
        self.lower_from(list, deadline, empty);
    }

    /// Whether list `list` is a level-0 slot below the top: one that keeps no bound of its own
    /// (its tick is one, see [`Self::bound`]) and whose entries are counted in `level0`.
    #[inline(always)]
    fn level0_below_top(list: usize) -> bool {
        DEPTH > 1 && list < LVL_SIZE
    }

    /// The first tick of the list after list `list` on its level, below the top: the end of
    /// `list`'s span, which its bound comes before.
    fn next_reach(&self, list: usize) -> u64 {
        self.reach(list)
            .wrapping_add(Pow2::<DEPTH>.span(list / LVL_SIZE))
    }

    /// Lowers the bound of list `list` to `deadline`, and the overflow walk's for that list.
    #[inline(always)]
    fn lower(&mut self, list: usize, deadline: u64) {
        self.lower_from(list, deadline, false);
    }

    /// [`Self::lower`], or sets the bound if the list is `empty`. A level-0 list below the top
    /// keeps none: its own tick is its bound (see [`Self::bound`]).
    #[inline(always)]
    fn lower_from(&mut self, list: usize, deadline: u64, empty: bool) {
        if Self::level0_below_top(list) {
            return;
        }
        let now = self.arena.now();
        let low = &mut self.low[list];
        if empty || deadline.wrapping_sub(now) < low.wrapping_sub(now) {
            *low = deadline;
        }
        if list == Self::OVERFLOW && self.ov_walk {
            self.ov_min = self.arena.sooner(self.ov_min, deadline);
        }
    }

    /// The list pending entry `idx` is on, and whether it was put off there (see
    /// [`Self::retime`]).
    #[inline(always)]
    fn list_of_entry(&self, idx: u32) -> (usize, bool) {
        let tag = self.arena.entry(idx).list();
        ((tag & !PUT_OFF) as usize, tag & PUT_OFF != 0)
    }

    /// Unlinks pending entry `idx` from its list, for a stop or a move: the list, if left busy,
    /// may so have its bound low, and is the one [`Scheme::tighten_within`] looks at.
    #[inline(always)]
    fn unlink(&mut self, idx: u32, _work: &mut Work) {
        self.loose = self.take_off(idx) as u32;
    }

    /// Takes pending entry `idx` off its list, clearing the slot's bit if it empties; the list.
    /// A tick's migrations call it, which leave the list they empty without a bound to raise.
    #[inline(always)]
    fn take_off(&mut self, idx: u32) -> usize {
        if self.ov_at == idx {
            self.ov_at = self.arena.next(idx);
        }
        let (list, put_off) = self.list_of_entry(idx);
        self.put_off -= usize::from(put_off);
        if Self::level0_below_top(list) {
            let counts = &mut self.level0[list];
            counts.entries -= 1;
            counts.put_off -= u32::from(put_off);
        }
        self.slots.unlink(&mut self.arena, list as u32, idx);
        list
    }

    /// Counts an entry on list `list` put off there (`true`), or no longer put off (`false`).
    #[inline(always)]
    fn count_put_off(&mut self, list: usize, on: bool) {
        match on {
            true => self.put_off += 1,
            false => self.put_off -= 1,
        }
        if Self::level0_below_top(list) {
            match on {
                true => self.level0[list].put_off += 1,
                false => self.level0[list].put_off -= 1,
            }
        }
    }

    /// A new deadline not before the tick on which the pointer reaches the entry's list, below
    /// the top level, leaves the entry where it is: the cascade of that list files it where the
    /// deadline belongs, as it files every timer there. A deadline beyond the list's own span
    /// makes the entry *put off* (the paper's reset, always farther out, is this case, and so
    /// is Ratas' idle timer; Linux's wheel, which never cascades, must move the timer). Any
    /// other deadline: the same list, or one unlink and one link, the list found once.
    #[inline(always)]
    fn retime(&mut self, idx: u32, deadline: u64, work: &mut Work) -> bool {
        let (list, put_off) = self.list_of_entry(idx);
        if list < Self::TOP {
            let shift = LVL_BITS as usize * (list / LVL_SIZE);
            let reach = self.reach(list);
            let (rem, from) = (self.arena.remaining(deadline), self.arena.remaining(reach));
            if rem >= from {
                let beyond = rem - from >= 1 << shift;
                if beyond != put_off {
                    self.count_put_off(list, beyond);
                    let tag = list as u32 | if beyond { PUT_OFF } else { 0 };
                    self.arena.retag(idx, tag);
                }
                self.arena.entry_mut(idx).deadline = deadline;
                self.lower(list, deadline);
                self.loose = list as u32;
                return true;
            }
        }
        match self.list_for(self.arena.remaining(deadline)) {
            // While a tick is half done, the top list under the pointer may be the one its
            // cascade has still to empty, and the timer one it has not reached yet: kept in
            // place, it would end that cascade early (see [`Self::cascade`]), leaving the rest
            // a turn late. It goes to the list's end, as a start there would.
            Some(to) if to == list && !(self.arena.ticking() && list >= Self::TOP) => {
                if put_off {
                    self.count_put_off(list, false);
                    self.arena.retag(idx, list as u32);
                }
                self.arena.entry_mut(idx).deadline = deadline;
                self.lower(list, deadline);
                self.loose = list as u32;
            }
            Some(to) => {
                self.unlink(idx, work);
                self.arena.entry_mut(idx).deadline = deadline;
                self.link(to, idx);
            }
            None => return false,
        }
        true
    }

    /// The tick on which its level's pointer next moves onto list `list`, below the top. On
    /// level 0, the next tick whose lowest digit is the slot (now itself for the pointer's own
    /// slot, while a tick is half done); above it, now's digits above the level, the slot's, and
    /// zeros below (a slot there behind its pointer holds nothing: see [`place`]).
    #[inline(always)]
    fn reach(&self, list: usize) -> u64 {
        debug_assert!(
            list < Self::TOP,
            "list {list} is on the top level or beyond"
        );
        let now = self.arena.now();
        if list < LVL_SIZE {
            return now.wrapping_add((list as u64).wrapping_sub(now) & LVL_MASK);
        }
        let shift = LVL_BITS as usize * (list / LVL_SIZE);
        (now & !((LVL_SIZE as u64) << shift).wrapping_sub(1))
            | (((list % LVL_SIZE) as u64) << shift)
    }

    /// The highest level whose pointer tick `now` moves on: a level turns when every digit
    /// below it rolls over to 0.
    fn highest_turning(now: u64) -> usize {
        ((now.trailing_zeros() / LVL_BITS) as usize).min(DEPTH - 1)
    }

    fn enter(&mut self, tick: u64, _clock: Clock) {
        self.arena.begin_tick(tick);
        // Coarse to fine, as in the paper, though any order would do: a drained timer is
        // filed afresh from now, so none lands in a slot still to be drained on this tick,
        // except one a full top turn away, which goes back where it came from.
        let top = Self::highest_turning(tick);
        // Only level 0 moves on, onto an empty slot: a tick with nothing to do (most periodic
        // ticks are), finished without the cascade.
        let idle = top == 0 && DEPTH > 1 && self.occupied(0) & (1 << (tick & LVL_MASK)) == 0;
        self.levels_left = if idle { 0 } else { top + 1 };
        self.ov_walk = false;
    }

    /// [`Scheme::advance`]'s commonest tickless step, taken whole: the next tick with
    /// bookkeeping is a busy level-0 slot before level 1 next turns, not past `target`. No
    /// other level turns on it, so its bookkeeping is that slot's cascade, and when every entry
    /// on the slot is due (none put off) and the budget holds them all, the slot goes to the
    /// due queue in one splice and the tick is done. Otherwise the tick is entered and left to
    /// `advance`, as is every other case (`None`).
    #[inline(always)]
    fn quick(&mut self, target: u64, clock: Clock, work: &mut Work) -> Option<Advanced> {
        if DEPTH < 2 || clock != Clock::Tickless || self.arena.ticking() {
            return None;
        }
        let tick = self.next_level0()?;
        if tick.wrapping_sub(self.arena.now()) > target.wrapping_sub(self.arena.now()) {
            return None;
        }
        // What `next_busy` charges for finding it.
        work.spend(1);
        self.arena.begin_tick(tick);
        self.ov_walk = false;
        let list = (tick & LVL_MASK) as u32;
        let moved = self.queue_level0(list, work, true);
        if self.slots.list(list).is_empty() {
            // INVARIANT: the slot under the pointer is empty, and nothing else turned.
            self.levels_left = 0;
            self.arena.end_tick();
            return Some(Advanced::Due);
        }
        // Entries put off there, or more than the budget: the cascade goes on as usual, in
        // this call if the budget has room left after the first step.
        self.levels_left = 1;
        match moved > 0 && work.is_spent() {
            true => Some(Advanced::OutOfWork),
            false => None,
        }
    }

    /// The first tick after now on which level 0's pointer moves onto a busy slot before
    /// level 1 next turns (no other level turns on it), if there is one. Needs `DEPTH > 1`.
    fn next_level0(&self) -> Option<u64> {
        let now = self.arena.now();
        // The busy level-0 slots after the pointer's, up to the end of the level's turn.
        let ahead = self.occupied(0) & (u64::MAX << (now & LVL_MASK) << 1);
        (ahead != 0).then(|| (now & !LVL_MASK) | u64::from(ahead.trailing_zeros()))
    }

    /// Below the top, a level-0 slot holds one deadline, the tick its pointer moves onto:
    /// every entry on it is due but those put off there. Hands the run of due ones at the
    /// front of level-0 list `list`, the pointer's, to the due queue in one splice, within
    /// `work` (at least one entry if `first`). Returns how many.
    ///
    /// When none is put off there, the due queue is empty and the budget holds them all, the
    /// list goes whole, its entries not visited ([`Arena::queue_whole`]): nothing due now is
    /// filed under its tag again, as a timer filed on this tick lands on another level-0 slot,
    /// or on the due queue.
    #[inline(always)]
    fn queue_level0(&mut self, list: u32, work: &mut Work, first: bool) -> usize {
        let now = self.arena.now();
        let limit = match first {
            true => work.left().max(1),
            false => work.left(),
        };
        let counts = self.level0[list as usize];
        let moved = match counts.entries as usize {
            n if n != 0 && counts.put_off == 0 && self.arena.next_due() == NIL && n <= limit => {
                self.slots.queue_whole(&mut self.arena, list, n);
                n
            }
            _ => self
                .slots
                .queue_front(&mut self.arena, list, limit, |_, e| {
                    debug_assert!(e.list() & PUT_OFF != 0 || e.deadline == now);
                    e.list() & PUT_OFF == 0
                }),
        };
        self.level0[list as usize].entries -= moved as u32;
        work.spend(moved);
        moved
    }

    fn run_tick(&mut self, work: &mut Work) -> bool {
        let mut first = true;
        loop {
            if self.ov_walk {
                if !self.walk_overflow(work, &mut first) {
                    return false;
                }
                self.ov_walk = false;
                self.low[Self::OVERFLOW] = self.ov_min;
            }
            if self.levels_left == 0 {
                return true;
            }
            let level = self.levels_left - 1;
            if !self.cascade(level, work, &mut first) {
                return false;
            }
            self.levels_left = level;
            if level == DEPTH - 1 && !self.overflow().is_empty() {
                self.ov_walk = true;
                self.ov_at = self.overflow().head;
                self.ov_min = self.arena.never();
            }
        }
    }

    /// Empties the slot `level`'s pointer is on: its timers migrate down a level or more, or
    /// are due. A timer filed back onto it (a full top turn away, started or moved since the
    /// tick began, and so linked at its end: see [`Self::retime`]) ends the cascade: everything
    /// after it came later still, and is due a turn from now at the earliest, the list's bound
    /// from then on. `false` if `work` ran out first.
    fn cascade(&mut self, level: usize, work: &mut Work, first: &mut bool) -> bool {
        let slot = ((self.arena.now() >> (LVL_BITS as usize * level)) & LVL_MASK) as usize;
        let list = level * LVL_SIZE + slot;
        loop {
            if level == 0 && DEPTH > 1 {
                let moved = self.queue_level0(list as u32, work, *first);
                *first &= moved == 0;
            }
            let head = self.list(list).head;
            if head == NIL {
                return true;
            }
            let to = self.list_of(head);
            if to == Some(list) {
                // Only the top level's ring files a timer under its own pointer.
                debug_assert_eq!(level, DEPTH - 1, "a timer filed back below the top");
                let span = Pow2::<DEPTH>.span(level);
                self.low[list] = self.arena.now().wrapping_add(span << LVL_BITS);
                return true;
            }
            if work.is_spent() && !*first {
                return false;
            }
            *first = false;
            work.spend(1);
            self.take_off(head);
            match to {
                None => self.arena.queue(head),
                Some(to) => self.link(to, head),
            }
        }
    }

    /// Walks the overflow list, moving what is now within the top level's turn into it.
    /// `false` if `work` ran out first.
    fn walk_overflow(&mut self, work: &mut Work, first: &mut bool) -> bool {
        while self.ov_at != NIL {
            if work.is_spent() && !*first {
                return false;
            }
            *first = false;
            let at = self.ov_at;
            self.ov_at = self.arena.next(at);
            work.spend(1);
            match self.list_of(at) {
                Some(to) if to == Self::OVERFLOW => {
                    let deadline = self.arena.entry(at).deadline;
                    self.ov_min = self.arena.sooner(self.ov_min, deadline);
                }
                to => {
                    self.take_off(at);
                    match to {
                        None => self.arena.queue(at),
                        Some(to) => self.link(to, at),
                    }
                }
            }
        }
        true
    }

    /// The first tick after now on which a pointer moves onto a busy slot, or the top
    /// pointer moves with the overflow list busy: O(levels).
    fn next_busy(&self, work: &mut Work) -> Option<u64> {
        work.spend(1);
        let now = self.arena.now();
        // A busy level-0 slot reached before level 1 next turns comes first: every other
        // level's pointer moves on a multiple of 64.
        if DEPTH > 1 {
            if let Some(tick) = self.next_level0() {
                return Some(tick);
            }
        }
        let mut best: Option<u64> = None;
        for level in 0..DEPTH {
            if self.occupied(level) == 0 {
                continue;
            }
            let span = Pow2::<DEPTH>.span(level);
            let at = digit(&Pow2::<DEPTH>, now, level) as usize;
            let slot = next_occupied(self.occupied(level), (at + 1) % LVL_SIZE);
            // 1..=64 pointer moves: the pointer's own slot is a whole turn away.
            let ahead = ((slot + LVL_SIZE - at - 1) % LVL_SIZE + 1) as u64;
            let tick = (now & !(span - 1)).wrapping_add(ahead.wrapping_mul(span));
            best = Some(best.map_or(tick, |b| self.arena.sooner(b, tick)));
        }
        if !self.overflow().is_empty() {
            // The top pointer's next move walks the overflow list; but no move before the one
            // that brings its bound within the top level's turn moves anything off it.
            let span = Pow2::<DEPTH>.span(DEPTH - 1);
            let next_move = (now & !(span - 1)).wrapping_add(span);
            let near = self.low[Self::OVERFLOW].wrapping_sub(span << LVL_BITS) & !(span - 1);
            let ahead = near.wrapping_sub(now);
            let tick = match ahead > next_move.wrapping_sub(now) && ahead < super::MAX_INTERVAL {
                true => near,
                false => next_move,
            };
            best = Some(best.map_or(tick, |b| self.arena.sooner(b, tick)));
        }
        best
    }

    /// The first busy list in deadline order among the levels of `levels` (bit `l` for level
    /// `l`, bit `DEPTH` for the overflow list): the first busy slot after the pointer of the
    /// lowest busy level there, else the overflow list.
    fn first_busy(&self, levels: u64) -> Option<usize> {
        self.first_busy_of(self.slots.busy_words() & levels, |level| {
            self.occupied(level)
        })
    }

    /// [`Self::first_busy`] over an occupancy given as `busy`, a bit for each busy word, and
    /// `word`, the words.
    #[inline(always)]
    fn first_busy_of(&self, busy: u64, word: impl Fn(usize) -> u64) -> Option<usize> {
        // A level is a word of the occupancy bitmap, and the overflow list the first bit of
        // the word after the top's: the lowest busy word is the first busy level, if any.
        if busy == 0 {
            return None;
        }
        let level = busy.trailing_zeros() as usize;
        if level == DEPTH {
            return Some(Self::OVERFLOW);
        }
        let from = (digit(&Pow2::<DEPTH>, self.arena.now(), level) as usize + 1) % LVL_SIZE;
        Some(level * LVL_SIZE + next_occupied(word(level), from))
    }

    /// A lower bound of the deadlines on busy list `list`, after a complete tick. Below the
    /// top, the entries of a level-0 slot are due on the tick the pointer next moves onto it
    /// (or later, put off there): that tick is the bound, so none is kept. Every other list
    /// keeps its bound in `low`.
    fn bound(&self, list: usize) -> u64 {
        match Self::level0_below_top(list) {
            true => self.reach(list),
            false => self.low[list],
        }
    }

    /// The busy lists that may hold the earliest timer, after a complete tick: the first busy
    /// list, and, when that is a level-0 slot in level 0's next turn (at or behind its
    /// pointer), the first busy list above level 0 as well. Those level-0 timers are due after
    /// level 1 next turns, and a timer filed above level 0 before the clock came within level
    /// 0's turn of it, waiting there for its list's cascade, may be due before them (see
    /// [`place`]). `None` if every list is empty.
    fn first_lists(&self) -> Option<(usize, Option<usize>)> {
        let first = self.first_busy(u64::MAX)?;
        Some((first, self.above(first, |levels| self.first_busy(levels))))
    }

    /// The second list of [`Self::first_lists`], `first` the first, found by `first_busy`.
    #[inline(always)]
    fn above(&self, first: usize, first_busy: impl Fn(u64) -> Option<usize>) -> Option<usize> {
        let next_turn =
            DEPTH > 1 && first < LVL_SIZE && first as u64 <= self.arena.now() & LVL_MASK;
        next_turn.then(|| first_busy(!1)).flatten()
    }

    /// [`Scheme::next_work`] made exact where a list's bound is not (a timer put off on the
    /// list, or the earliest on it stopped or moved), within `work`. The lists are looked at in
    /// the order of their bounds, as [`Self::first_lists`] finds them among those not looked at
    /// yet (that order holds for any part of the wheel, since every deadline stays at or after
    /// its list's bound); each costs a unit when its first entry is on its bound, else a unit
    /// and one for each of its entries. The look ends when the next bound is no sooner than the
    /// earliest deadline found, which is the answer; cut short by `work`, or by a list of more
    /// than [`super::LIST_LOOK_LIMIT`] entries not on its bound, the answer is the bound it
    /// stopped at, still a lower bound.
    fn exact_next_work(&self, work: &mut Work) -> Option<u64> {
        let mut words = [0; MAX_WORDS];
        for (level, w) in words.iter_mut().enumerate().take(DEPTH + 1) {
            *w = self.occupied(level);
        }
        let mut best: Option<u64> = None;
        loop {
            let busy = |levels: u64| {
                let busy = (0..=DEPTH).fold(0, |b, l| b | u64::from(words[l] != 0) << l);
                self.first_busy_of(busy & levels, |level| words[level])
            };
            let Some(first) = busy(u64::MAX) else {
                return best;
            };
            let list = match self.above(first, busy) {
                Some(above)
                    if self.arena.remaining(self.bound(above))
                        < self.arena.remaining(self.bound(first)) =>
                {
                    above
                }
                _ => first,
            };
            let bound = self.bound(list);
            if best.is_some_and(|b| self.arena.remaining(b) <= self.arena.remaining(bound)) {
                return best;
            }
            if work.is_spent() {
                return Some(bound);
            }
            work.spend(1);
            let earliest = match self.arena.entry(self.list(list).head).deadline {
                head if head == bound => head,
                _ => match self
                    .arena
                    .earliest_of_few(self.list(list), super::LIST_LOOK_LIMIT, work)
                {
                    Ok(earliest) => earliest,
                    Err(_) => return Some(bound),
                },
            };
            best = Some(best.map_or(earliest, |b| self.arena.sooner(b, earliest)));
            words[list / LVL_SIZE] &= !(1 << (list % LVL_SIZE));
        }
    }

    /// [`Scheme::next_work`] past a busy level-0 slot in this turn: the bound of the first
    /// busy list, or of the one above it, whichever is sooner.
    #[inline(never)]
    fn next_work_from_lists(&self) -> Option<u64> {
        let (first, above) = self.first_lists()?;
        let bound = self.bound(first);
        Some(above.map_or(bound, |above| self.arena.sooner(bound, self.bound(above))))
    }
}

impl<S: Storage, const DEPTH: usize> Scheme for Hierarchical<S, DEPTH> {
    arena_delegates!(arena, quick: quick);

    // Inlined, its commonest answer: the rest is `next_work_from_lists`, out of line, so that a
    // caller asking on every tick of a busy clock makes no call for it.
    #[inline]
    fn next_work(&self) -> Option<u64> {
        if self.arena.ticking() {
            return Some(self.arena.now());
        }
        // By the placement rule the first busy list holds the earliest timers, but for a
        // level-0 slot in level 0's next turn. A busy clock's commonest answer first: a busy
        // level-0 slot in this turn, whose bound is its own tick.
        if DEPTH > 1 {
            if let Some(tick) = self.next_level0() {
                return Some(tick);
            }
        }
        self.next_work_from_lists()
    }

    fn next_work_within(&self, work: &mut Work) -> Option<u64> {
        work.spend(1);
        match self.arena.ticking() {
            true => Some(self.arena.now()),
            false => self.exact_next_work(work),
        }
    }

    /// When next work is the bound of the list the last stop or move left busy (`loose`), and the
    /// list keeps a bound of its own (one above level 0, or on a wheel of one level) that its first
    /// entry is not on, the bound is made the list's earliest deadline: a walk of the list, a unit
    /// an entry, if it holds at most [`super::TIGHTEN_LIMIT`] entries (else the bound stays, still
    /// a lower bound, and the list is not walked again until another stop or move leaves a list
    /// busy) and `work` has a unit for each (else the bound stays, and the next call walks the list
    /// again). Below the top, the bound stays before the next list of its level, the first tick of
    /// which, less one, is the bound of a list whose entries are all put off past it. A level-0
    /// list below the top keeps no bound (its tick is one): [`Scheme::next_work_within`] looks at
    /// what a short one holds instead. Not while a tick is half done.
    fn tighten_within(&mut self, work: &mut Work) {
        if self.arena.ticking() || self.loose == NIL {
            return;
        }
        let list = self.loose as usize;
        // A level-0 list below the top keeps no bound in `low` to raise.
        if Self::level0_below_top(list) {
            return;
        }
        let (l, bound) = (*self.list(list), self.low[list]);
        if l.is_empty() || self.next_work() != Some(bound) {
            return;
        }
        if self.arena.entry(l.head).deadline == bound {
            self.loose = NIL;
            return;
        }
        let earliest = match self.arena.earliest_of_few(&l, super::TIGHTEN_LIMIT, work) {
            // Walked again on the next call.
            Err(Cut::Spent) => return,
            Err(Cut::TooLong) => {
                self.loose = NIL;
                return;
            }
            Ok(earliest) => earliest,
        };
        self.loose = NIL;
        self.low[list] = match list < Self::TOP {
            true => {
                let last = self.next_reach(list).wrapping_sub(1);
                match self.arena.remaining(earliest) > self.arena.remaining(last) {
                    true => last,
                    false => earliest,
                }
            }
            false => earliest,
        };
    }

    fn next_expiry(&self) -> NextExpiry {
        // An entry put off may be due after timers on later lists: no cheap answer then.
        if self.put_off > 0 {
            return NextExpiry::Unknown;
        }
        // A level-0 slot holds one deadline; a higher one a range, hence the walk.
        let deadline = |list: usize| match list < LVL_SIZE {
            true => self.arena.entry(self.list(list).head).deadline,
            false => self.arena.earliest(self.list(list)),
        };
        let Some((first, above)) = self.first_lists() else {
            return NextExpiry::Idle;
        };
        let at = deadline(first);
        NextExpiry::At(above.map_or(at, |above| self.arena.sooner(at, deadline(above))))
    }

    fn memory_bytes(&self) -> usize {
        self.arena.memory_bytes()
            + self.slots.memory_bytes()
            + self.low.len() * core::mem::size_of::<u64>()
            + core::mem::size_of_val(&self.level0)
    }

    fn kind(&self) -> SchemeKind {
        SchemeKind::Hierarchical
    }
}

#[cfg(test)]
mod tests {
    use super::super::MAX_INTERVAL;
    use super::*;
    use crate::model::{self, check_against, Band, Foresight, Profile};
    use crate::wheel::rng::Rng;
    use crate::Handle;
    use crate::HostStorage;
    use std::vec::Vec;

    /// A mixed-radix shape, for the paper's clock.
    struct Mixed(&'static [u64]);

    impl Shape for Mixed {
        fn depth(&self) -> usize {
            self.0.len()
        }
        fn radix(&self, level: usize) -> u64 {
            self.0[level]
        }
        fn span(&self, level: usize) -> u64 {
            self.0[..level].iter().product()
        }
    }

    /// Figure 7's clock: seconds, minutes, hours, days.
    const FIG7: Mixed = Mixed(&[60, 60, 24, 100]);

    fn dhms(d: u64, h: u64, m: u64, s: u64) -> u64 {
        ((d * 24 + h) * 60 + m) * 60 + s
    }

    /// The first tick after `from` on which `level`'s pointer moves onto `slot`.
    fn reached(shape: &impl Shape, from: u64, level: usize, slot: usize) -> u64 {
        let mut t = from + 1;
        while !(turns(shape, t, level) && digit(shape, t, level) == slot as u64) {
            t += 1;
        }
        t
    }

    const W: Pow2<LVL_DEPTH> = Pow2;

    #[test]
    fn figures_7_and_8_worked_example() {
        let now = dhms(11, 10, 24, 30);
        let deadline = now + dhms(0, 0, 50, 45);
        assert_eq!(deadline, dhms(11, 11, 15, 15));
        // Figure 7: the hour array, one element ahead of the hour pointer (10); the remainder,
        // 15 min 15 s, is what the deadline holds below the hour digit.
        assert_eq!(digit(&FIG7, now, 2), 10);
        assert_eq!(slots_ahead(&FIG7, now, deadline - now, 2), Some(1));
        assert_eq!(
            place(&FIG7, now, deadline - now),
            Place::Slot { level: 2, slot: 11 }
        );
        assert_eq!(deadline % FIG7.span(2), dhms(0, 0, 15, 15));
        // The hour pointer reaches 11 at 11 d 11 h; Figure 8: minute array, 15 after the
        // minute pointer (0).
        let t = reached(&FIG7, now, 2, 11);
        assert_eq!(t, dhms(11, 11, 0, 0));
        assert_eq!(digit(&FIG7, t, 1), 0);
        assert_eq!(
            place(&FIG7, t, deadline - t),
            Place::Slot { level: 1, slot: 15 }
        );
        // The minute pointer reaches 15; the timer moves to the seconds array, 15 s on.
        let t = reached(&FIG7, t, 1, 15);
        assert_eq!(t, dhms(11, 11, 15, 0));
        assert_eq!(
            place(&FIG7, t, deadline - t),
            Place::Slot { level: 0, slot: 15 }
        );
        // Fifteen seconds later it expires.
        let t = reached(&FIG7, t, 0, 15);
        assert_eq!(t, deadline);
        assert_eq!(place(&FIG7, t, 0), Place::Due);
        // The day array does not change during the example.
        assert_eq!(digit(&FIG7, now, 3), digit(&FIG7, deadline, 3));
    }

    #[test]
    fn zero_minutes_remaining_go_straight_to_seconds() {
        let now = dhms(11, 10, 24, 30);
        let deadline = dhms(11, 11, 0, 15);
        assert_eq!(
            place(&FIG7, now, deadline - now),
            Place::Slot { level: 2, slot: 11 }
        );
        let t = reached(&FIG7, now, 2, 11);
        assert_eq!(
            place(&FIG7, t, deadline - t),
            Place::Slot { level: 0, slot: 15 }
        );
    }

    #[test]
    fn top_level_is_a_ring_then_overflow() {
        // Day 99 plus two days: day slot 1, next time round.
        let now = dhms(99, 5, 0, 0);
        assert_eq!(
            place(&FIG7, now, dhms(2, 0, 0, 0)),
            Place::Slot { level: 3, slot: 1 }
        );
        // 100 pointer moves is a full turn, onto the current slot; 101 is too far.
        let to_midnight = dhms(0, 19, 0, 0);
        let full = to_midnight + dhms(99, 0, 0, 0);
        assert_eq!(place(&FIG7, now, full), Place::Slot { level: 3, slot: 99 });
        assert_eq!(place(&FIG7, now, full + dhms(1, 0, 0, 0)), Place::Overflow);
    }

    /// The bit-operation fast paths against the shape-generic definitions they stand for.
    #[test]
    fn fast_placement_and_turns_match_the_definitions() {
        fn check<const D: usize>(rng: &mut Rng) {
            let mut w = wheel::<D>(0);
            for _ in 0..20_000 {
                let now = match rng.within(0, 4) {
                    0 => u64::MAX - rng.within(0, 1 << 20),
                    1 => rng.next_u64() & !((1 << (6 * rng.within(0, 10))) - 1),
                    _ => rng.next_u64(),
                };
                w.arena.begin_tick(now);
                w.arena.end_tick();
                let rem = match rng.within(0, 3) {
                    0 => rng.within(0, 1 << 13),
                    1 => rng.within(0, MAX_INTERVAL),
                    _ => 1 << rng.within(0, 63),
                };
                let want = match place(&Pow2::<D>, now, rem) {
                    Place::Due => None,
                    Place::Slot { level, slot } => Some(level * LVL_SIZE + slot),
                    Place::Overflow => Some(D * LVL_SIZE),
                };
                assert_eq!(w.list_for(rem), want, "D {D} now {now:#x} rem {rem:#x}");
                let turning = (1..D)
                    .take_while(|&l| turns(&Pow2::<D>, now, l))
                    .last()
                    .unwrap_or(0);
                assert_eq!(
                    Wheel::<D>::highest_turning(now),
                    turning,
                    "D {D} now {now:#x}"
                );
            }
        }
        let mut rng = Rng::new(77);
        check::<1>(&mut rng);
        check::<2>(&mut rng);
        check::<4>(&mut rng);
        check::<LVL_DEPTH>(&mut rng);
        check::<10>(&mut rng);
    }

    #[test]
    fn level_is_the_highest_differing_digit() {
        assert_eq!(W.level_for(0, 1), 0);
        assert_eq!(W.level_for(0, 63), 0);
        assert_eq!(W.level_for(0, 64), 1);
        assert_eq!(W.level_for(63, 1), 1);
        assert_eq!(W.level_for(64, 4095 - 64), 1);
        assert_eq!(W.level_for(0, 1 << 30), 5);
        assert_eq!(W.level_for(0, 1 << 40), 5);
        // Across the roll-over: bit 63 differs; capped at the top.
        assert_eq!(W.level_for(u64::MAX, 1), 5);
    }

    #[test]
    fn level_by_leading_zeros_matches_digit_scan() {
        let mut rng = Rng::new(7);
        for _ in 0..100_000 {
            let now = rng.next_u64();
            let rem = 1 + rng.next_u64() % (MAX_INTERVAL - 1);
            let rem = rem >> rng.within(0, 63);
            let rem = rem.max(1);
            assert_eq!(
                W.level_for(now, rem),
                level_by_digits(&W, now, rem),
                "{now} {rem}"
            );
            let w2 = Pow2::<2>;
            assert_eq!(w2.level_for(now, rem), level_by_digits(&w2, now, rem));
            let w10 = Pow2::<10>;
            assert_eq!(w10.level_for(now, rem), level_by_digits(&w10, now, rem));
        }
    }

    #[test]
    fn digits_and_turns() {
        assert_eq!(digit(&W, 64 * 3 + 5, 0), 5);
        assert_eq!(digit(&W, 64 * 3 + 5, 1), 3);
        assert!(turns(&W, 4096, 2));
        assert!(!turns(&W, 4097, 1));
        // The roll-over turns every level, onto slot 0.
        assert!((0..LVL_DEPTH).all(|l| turns(&W, 0, l) && digit(&W, 0, l) == 0));
        assert_eq!(digit(&W, u64::MAX, 5), 63);
    }

    #[test]
    fn slots_ahead_counts_pointer_moves() {
        assert_eq!(slots_ahead(&W, 63, 1, 1), Some(1));
        assert_eq!(slots_ahead(&W, 62, 1, 1), Some(0));
        assert_eq!(slots_ahead(&W, 0, 64 * 64, 1), Some(64));
        assert_eq!(slots_ahead(&FIG7, 1, u64::MAX, 1), None);
    }

    #[test]
    fn next_occupied_wraps() {
        assert_eq!(next_occupied(0b1000_0010, 0), 1);
        assert_eq!(next_occupied(0b1000_0010, 2), 7);
        assert_eq!(next_occupied(0b1000_0010, 8), 1);
        assert_eq!(next_occupied(1 << 63, 63), 63);
        assert_eq!(next_occupied(1, 63), 0);
    }

    type Wheel<const D: usize> = Hierarchical<HostStorage, D>;

    fn wheel<const D: usize>(start: u64) -> Wheel<D> {
        Hierarchical::new(&Config {
            capacity: 512,
            slots: 0,
            start,
            ..Default::default()
        })
        .unwrap()
    }

    /// Where `handle`'s entry is: `(level, slot)`, level `D` for overflow.
    fn whereabouts<const D: usize>(w: &Wheel<D>, h: Handle) -> (usize, usize) {
        let (list, _) = w.list_of_entry(h.index());
        (list / LVL_SIZE, list % LVL_SIZE)
    }

    /// Checks the type invariants.
    fn assert_placed<const D: usize>(w: &Wheel<D>) {
        let now = w.arena.now();
        let mut put_off_seen = 0;
        for list in 0..=Wheel::<D>::OVERFLOW {
            let l = w.list(list);
            if list < Wheel::<D>::OVERFLOW {
                let bit = w.occupied(list / LVL_SIZE) >> (list % LVL_SIZE) & 1;
                assert_eq!(bit == 1, !l.is_empty(), "bitmap of list {list} at {now}");
            }
            // A list that keeps a bound: at or before its deadlines, and below the top, before
            // the next list of its level.
            let keeps_bound = !l.is_empty() && !Wheel::<D>::level0_below_top(list);
            let bound = keeps_bound.then(|| w.low[list]);
            if let Some(bound) = bound.filter(|_| list < Wheel::<D>::TOP) {
                let next = w.next_reach(list);
                assert!(
                    w.arena.remaining(bound) < w.arena.remaining(next),
                    "bound {bound} of list {list} not before {next} at {now}"
                );
            }
            let mut at = l.head;
            let mut counted = Level0::default();
            while at != NIL {
                let e = w.arena.entry(at);
                let (on, put_off) = w.list_of_entry(at);
                assert_eq!(on, list);
                if let Some(bound) = bound {
                    assert!(
                        w.arena.remaining(e.deadline) >= w.arena.remaining(bound),
                        "entry {at} due {} before the bound {bound} of list {list} at {now}",
                        e.deadline
                    );
                }
                assert!(
                    !w.arena.is_queued(at),
                    "entry {at} on list {list} reads as queued"
                );
                counted.entries += 1;
                counted.put_off += u32::from(put_off);
                let rem = w.arena.remaining(e.deadline);
                let want = |place: Place| match place {
                    Place::Slot { level, slot } => level * LVL_SIZE + slot,
                    Place::Overflow => Wheel::<D>::OVERFLOW,
                    Place::Due => panic!("due entry {at} pending at {now}"),
                };
                let (by_rule, by_digits) = (
                    want(place(&Pow2::<D>, now, rem)),
                    want(place_by_digits(&Pow2::<D>, now, rem)),
                );
                if put_off {
                    put_off_seen += 1;
                    // Put off: on a list below the top that the pointer reaches first.
                    assert!(list < Wheel::<D>::TOP, "entry {at} put off on list {list}");
                } else {
                    // Or filed above level 0 before the clock came within its turn, and
                    // waiting there for its list's cascade: where the digits put it.
                    assert!(
                        list == by_rule || list == by_digits,
                        "entry {at} due {} misplaced on list {list} at {now}",
                        e.deadline
                    );
                }
                at = w.arena.next(at);
            }
            if D > 1 && list < LVL_SIZE {
                assert_eq!(
                    w.level0[list], counted,
                    "counts of level-0 list {list} at {now}"
                );
            }
        }
        assert_eq!(put_off_seen, w.put_off, "entries put off at {now}");
        // The due queue, lists handed over whole included: every entry on it reads as queued.
        let (mut at, mut queued) = (w.arena.next_due(), 0);
        while at != NIL {
            assert!(
                w.arena.is_queued(at),
                "entry {at} on the due queue at {now}"
            );
            queued += 1;
            at = w.arena.next(at);
        }
        assert_eq!(queued, w.arena.queued(), "entries queued at {now}");
    }

    /// A later deadline leaves the timer where it is, put off; the cascade of its list files it
    /// where it belongs, and it fires on the new deadline; an earlier one moves it at once.
    #[test]
    fn later_deadlines_are_put_off_and_fire_exactly() {
        let mut w = wheel::<LVL_DEPTH>(0);
        let mut work = Work::unlimited();
        let h = w.start(100, 1).unwrap();
        assert_eq!(whereabouts(&w, h), (1, 1));
        w.reschedule_within(h, 5000, 5000, &mut work).unwrap();
        assert_eq!((whereabouts(&w, h), w.put_off), ((1, 1), 1));
        assert_eq!(w.deadline(h), Some(5000));
        assert_eq!(w.next_expiry(), NextExpiry::Unknown);
        assert_placed(&w);
        // Later again: stays, counted once; earlier: moves at once, filed where it belongs.
        w.reschedule_within(h, 6000, 6000, &mut work).unwrap();
        assert_eq!((whereabouts(&w, h), w.put_off), ((1, 1), 1));
        w.reschedule_within(h, 30, 30, &mut work).unwrap();
        assert_eq!((whereabouts(&w, h), w.put_off), ((0, 30), 0));
        w.reschedule_within(h, 7000, 7000, &mut work).unwrap();
        assert_eq!((whereabouts(&w, h), w.put_off), ((0, 30), 1));
        let mut fired = None;
        while fired.is_none() {
            w.tick();
            assert_placed(&w);
            fired = w.pop_expired().map(|e| (w.now(), e.id));
        }
        assert_eq!((fired, w.put_off), (Some((7000, 1)), 0));
        assert_eq!(w.next_expiry(), NextExpiry::Idle);
    }

    #[test]
    fn timer_migrates_down_and_fires_on_time() {
        let mut w = wheel::<LVL_DEPTH>(0);
        let deadline = 3 * 4096 + 5 * 64 + 7;
        let h = w.start(deadline, 42).unwrap();
        assert_eq!(whereabouts(&w, h), (2, 3));
        assert_eq!(w.next_expiry(), NextExpiry::At(deadline));
        let mut seen = Vec::new();
        while w.now() != deadline - 1 {
            assert_eq!(w.tick(), 0);
            if seen.last() != Some(&whereabouts(&w, h)) {
                seen.push(whereabouts(&w, h));
            }
        }
        assert_eq!(seen, [(2, 3), (1, 5), (0, 7)]);
        assert_eq!(w.tick(), 1);
        let e = w.pop_expired().unwrap();
        assert_eq!((e.id, e.deadline, e.handle), (42, deadline, h));
        assert_eq!(w.next_expiry(), NextExpiry::Idle);
    }

    #[test]
    fn deadline_past_rollover_fires_exactly() {
        let start = u64::MAX - 1000;
        let mut w = wheel::<LVL_DEPTH>(start);
        w.start(2000, 1).unwrap();
        w.start(1001, 2).unwrap();
        w.start(1000, 3).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(u64::MAX));
        let mut fired = Vec::new();
        for _ in 0..2000 {
            w.tick();
            assert_placed(&w);
            while let Some(e) = w.pop_expired() {
                assert_eq!(e.deadline, w.now());
                fired.push((e.id, e.deadline));
            }
        }
        assert_eq!(fired, [(3, u64::MAX), (2, 0), (1, 999)]);
    }

    #[test]
    fn overflow_drops_into_top_ring_as_top_pointer_moves() {
        // Two levels: the top (level 1) has slots of 64 ticks; 64 of them is 4096 ticks.
        let mut w = wheel::<2>(10);
        let near = w.start(4096, 1).unwrap();
        let far = w.start(4096 + 64, 2).unwrap();
        assert_eq!(whereabouts(&w, near), (1, 0));
        assert_eq!(whereabouts(&w, far), (2, 0));
        assert_eq!(w.next_expiry(), NextExpiry::At(4106));
        for _ in 0..54 {
            w.tick();
        }
        assert_eq!(w.now(), 64);
        assert_eq!(whereabouts(&w, far), (1, 1));
        assert_eq!(w.stop(near), Ok(1));
        assert_eq!(w.next_expiry(), NextExpiry::At(4096 + 64 + 10));
        while w.tick() == 0 {}
        assert_eq!(w.now(), 4096 + 64 + 10);
        assert_eq!(w.pop_expired().map(|e| e.id), Some(2));
    }

    /// A tickless step onto a level-0 slot that holds nothing put off hands the slot to the due
    /// queue whole: its entries read as queued (stop takes them off the due queue, reschedule
    /// re-arms them), and the slot's next turn, filed while some are still queued, does not.
    /// A level-0 slot handed to the due queue whole, and the clock come round 2^64 ticks to
    /// its tick again in tickless jumps: a timer filed on that slot, due on that tick, is
    /// pending, not queued, and stops as one.
    #[test]
    fn a_slot_handed_over_whole_reads_as_queued_no_more_once_the_clock_comes_round() {
        let mut w = wheel::<LVL_DEPTH>(0);
        w.start(5, 1).unwrap();
        assert_eq!(
            w.advance(5, Clock::Tickless, &mut Work::unlimited()),
            Advanced::Due
        );
        assert_eq!(w.pop_expired().map(|e| e.deadline), Some(5));
        for to in [1 << 63, u64::MAX - 1] {
            assert_eq!(
                w.advance(to, Clock::Tickless, &mut Work::unlimited()),
                Advanced::Reached
            );
        }
        let h = w.start(7, 2).unwrap();
        assert_eq!((w.deadline(h), w.queued(), w.len()), (Some(5), 0, 1));
        assert_eq!(whereabouts(&w, h), (0, 5));
        assert_eq!(w.stop(h), Ok(2));
        assert_eq!((w.queued(), w.len()), (0, 0));
        assert_placed(&w);
    }

    #[test]
    fn a_whole_level0_slot_stopped_to_its_last_entry_leaves_no_tag_behind() {
        let mut w = wheel::<LVL_DEPTH>(0);
        let hs: Vec<Handle> = (0..3).map(|id| w.start(5, id).unwrap()).collect();
        assert_eq!(
            w.advance(100, Clock::Tickless, &mut Work::unlimited()),
            Advanced::Due
        );
        assert_eq!(w.arena.whole_tick(), Some((5, 5)));
        for (id, h) in hs.into_iter().enumerate() {
            assert_eq!(w.stop(h), Ok(id as u64));
        }
        // The due queue emptied by stops, as by pops: no entry reads as queued by its tag.
        assert_eq!((w.queued(), w.arena.whole_tick()), (0, None));
        assert_placed(&w);
    }

    #[test]
    fn a_whole_level0_slot_goes_to_the_due_queue_at_once() {
        let mut w = wheel::<LVL_DEPTH>(0);
        let mut work = Work::unlimited();
        let hs: Vec<Handle> = (0..4).map(|id| w.start(5, id).unwrap()).collect();
        assert_eq!(
            w.level0[5],
            Level0 {
                entries: 4,
                put_off: 0
            }
        );
        assert_eq!(w.advance(100, Clock::Tickless, &mut work), Advanced::Due);
        assert_eq!((w.now(), w.queued(), w.level0[5].entries), (5, 4, 0));
        assert_eq!(w.arena.whole_tick(), Some((5, 5)));
        assert_eq!(w.occupied(0), 0);
        assert_placed(&w);
        // Stopped on the due queue, and re-armed from it.
        assert_eq!(w.stop(hs[1]), Ok(1));
        w.reschedule(hs[2], 64, 64).unwrap();
        assert_eq!((w.queued(), w.deadline(hs[2])), (2, Some(69)));
        assert_eq!(whereabouts(&w, hs[2]), (1, 1));
        assert_placed(&w);
        // The clock moves on with two still queued; the slot's next turn is filed under the
        // same tag, pending.
        assert_eq!(w.advance(6, Clock::Tickless, &mut work), Advanced::Reached);
        let late = w.start(63, 9).unwrap();
        assert_eq!(whereabouts(&w, late), (0, 5));
        assert_placed(&w);
        assert_eq!(w.stop(late), Ok(9));
        let popped: Vec<u64> = core::iter::from_fn(|| w.pop_expired().map(|e| e.id)).collect();
        assert_eq!(popped, [0, 3]);
        assert_placed(&w);
        // A slot with an entry put off there is walked as before: the due one goes, the other
        // stays.
        let a = w.start(10, 20).unwrap();
        let b = w.start(10, 21).unwrap();
        w.reschedule(b, 30, 30).unwrap();
        assert_eq!(
            w.level0[16],
            Level0 {
                entries: 2,
                put_off: 1
            }
        );
        assert_eq!(w.advance(100, Clock::Tickless, &mut work), Advanced::Due);
        assert_eq!((w.now(), w.queued()), (16, 1));
        assert_eq!(w.pop_expired().map(|e| (e.id, e.handle)), Some((20, a)));
        assert_placed(&w);
        assert_eq!(
            w.level0[16],
            Level0 {
                entries: 0,
                put_off: 0
            }
        );
    }

    /// A near timer among later ones on its list above level 0, cancelled or pushed back before
    /// it is due (a timeout, the commonest): the tightening its caller asks for walks the list,
    /// up to [`crate::TIGHTEN_LIMIT`] entries, and next work moves on to the earliest left, so
    /// that the clock wakes once, when it is due; a busier list keeps its bound, a lower bound
    /// still, and costs one wakeup more.
    #[test]
    fn cancelling_a_near_timer_among_later_ones_on_its_list_moves_next_work_on() {
        // Lists of levels 1, 2, 3 and 5 (the top), the overflow list, and a clock started near
        // 2^64.
        let cases = [
            (0, 129, 20),
            (0, 5000, 2000),
            (0, 300_000, 100_000),
            (0, 1 << 31, 1000),
            (0, 1 << 37, 1000),
            (u64::MAX - 9, 5000, 2000),
        ];
        for (start, near, gap) in cases {
            for left in [1, 9, crate::TIGHTEN_LIMIT - 1, crate::TIGHTEN_LIMIT] {
                // Stopped; pushed back past the others; pushed back past the list's span
                // (put off there, below the top).
                for how in 0..3 {
                    let mut w = wheel::<LVL_DEPTH>(start);
                    for k in 0..left as u64 {
                        w.start(near + gap, k).unwrap();
                    }
                    let h = w.start(near, 1000).unwrap();
                    let (level, slot) = whereabouts(&w, h);
                    assert!(level > 0, "{near}: on level 0");
                    assert_eq!(w.next_work(), Some(start.wrapping_add(near)));
                    match how {
                        0 => drop(w.stop(h).unwrap()),
                        1 => w.reschedule(h, near + gap + 1, near + gap + 1).unwrap(),
                        _ => w.reschedule(h, near << 2, near << 2).unwrap(),
                    }
                    let l = *w.list(level * LVL_SIZE + slot);
                    let on_list = core::iter::successors(Some(l.head), |&at| {
                        Some(w.arena.next(at)).filter(|&n| n != NIL)
                    })
                    .count();
                    let wakeups = if on_list > crate::TIGHTEN_LIMIT { 2 } else { 1 };
                    let mut work = Work::new(256);
                    w.tighten_within(&mut work);
                    // The search, and the walk of the list.
                    assert!(
                        work.done() <= 1 + on_list,
                        "{} units for {on_list}",
                        work.done()
                    );
                    assert_placed(&w);
                    let (at, k) = (start.wrapping_add(near + gap), (near, left, how));
                    if wakeups == 1 {
                        assert_eq!(w.next_work(), Some(at), "{k:?}");
                    }
                    assert_eq!(model::wakeups_until_due(&mut w), wakeups, "{k:?}");
                    assert_eq!(w.pop_expired().map(|e| e.deadline), Some(at), "{k:?}");
                    assert_placed(&w);
                }
            }
        }
        // Below the top, a list whose entries are all put off past its span keeps a bound
        // before the next list of its level: its last tick.
        let mut w = wheel::<LVL_DEPTH>(0);
        let later: Vec<_> = (0..20).map(|k| w.start(5000 + k, k).unwrap()).collect();
        let near = w.start(4500, 1000).unwrap();
        for h in later {
            w.reschedule(h, 20_000, 20_000).unwrap();
        }
        w.stop(near).unwrap();
        w.tighten_within(&mut Work::new(256));
        assert_placed(&w);
        assert_eq!(w.next_work(), Some(2 * 4096 - 1));
        assert_eq!(model::wakeups_until_due(&mut w), 2);
        assert_eq!(w.pop_expired().map(|e| e.deadline), Some(20_000));
    }

    /// The tightening after a cancel cut short by its budget leaves the list's bound low, and
    /// the next tightening, with budget enough, walks the list again: one wakeup, when due.
    #[test]
    fn a_tightening_cut_short_by_its_budget_is_made_by_the_next() {
        let mut w = wheel::<LVL_DEPTH>(0);
        for k in 0..40 {
            w.start(7000, k).unwrap();
        }
        let near = w.start(5000, 1000).unwrap();
        w.stop(near).unwrap();
        for budget in [1, 2, 20] {
            w.tighten_within(&mut Work::new(budget));
            assert_eq!(w.next_work(), Some(5000), "a budget of {budget}");
            assert_placed(&w);
        }
        w.tighten_within(&mut Work::new(256));
        assert_eq!(w.next_work(), Some(7000));
        assert_placed(&w);
        assert_eq!(model::wakeups_until_due(&mut w), 1);
        assert_eq!(w.pop_expired().map(|e| e.deadline), Some(7000));
    }

    #[test]
    fn stop_clears_occupancy_and_works_once_queued() {
        let mut w = wheel::<LVL_DEPTH>(0);
        let a = w.start(100, 1).unwrap();
        let b = w.start(100, 2).unwrap();
        assert_eq!(w.occupied(1), 1 << 1);
        assert_eq!(w.stop(a), Ok(1));
        assert_eq!(w.occupied(1), 1 << 1);
        assert_eq!(w.stop(b), Ok(2));
        assert!((0..LVL_DEPTH).all(|l| w.occupied(l) == 0));
        assert_eq!(w.stop(b), Err(Error::Stale));
        let c = w.start(1, 3).unwrap();
        assert_eq!(w.tick(), 1);
        assert_eq!(w.stop(c), Ok(3));
        assert_eq!(w.pop_expired(), None);
        assert!(w.is_empty());
    }

    #[test]
    fn next_expiry_walks_one_slot_for_exactness() {
        let mut w = wheel::<LVL_DEPTH>(0);
        w.start(64 * 5 + 9, 1).unwrap();
        w.start(64 * 5 + 3, 2).unwrap();
        w.start(64 * 7, 3).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(64 * 5 + 3));
        w.start(1 << 50, 4).unwrap();
        assert_eq!(w.next_expiry(), NextExpiry::At(64 * 5 + 3));
    }

    #[test]
    fn bad_depth_is_refused() {
        let c = Config::default();
        assert!(matches!(
            Hierarchical::<HostStorage, 0>::new(&c),
            Err(Error::Config)
        ));
        assert!(matches!(
            Hierarchical::<HostStorage, 11>::new(&c),
            Err(Error::Config)
        ));
        assert!(Hierarchical::<HostStorage, 10>::new(&c).is_ok());
    }

    /// Leaves tick `t`, on which the top level turns onto a busy slot, half done: its cascade
    /// has moved the first timer of that slot and no more.
    fn half_done_on_the_top(w: &mut Wheel<LVL_DEPTH>, t: u64) {
        loop {
            let r = w.advance(t, Clock::Tickless, &mut Work::new(1));
            if w.now() == t && r == Advanced::OutOfWork && w.arena.ticking() {
                return;
            }
            assert!(w.now() != t || r != Advanced::Due, "tick {t} done at once");
        }
    }

    /// Every timer fired as the clock runs from next work to next work, from a complete tick,
    /// by id and tick, each step checked: next work after now, and no later than the earliest
    /// deadline.
    fn run_out(w: &mut Wheel<LVL_DEPTH>, deadlines: &[(u64, u64)]) -> Vec<(u64, u64)> {
        let mut fired = Vec::new();
        while let Some(next) = w.next_work() {
            let ahead = next.wrapping_sub(w.now());
            let earliest = deadlines
                .iter()
                .filter(|(id, _)| !fired.iter().any(|(f, _)| f == id))
                .map(|(_, d)| d.wrapping_sub(w.now()))
                .min()
                .unwrap();
            assert!(
                (1..=earliest).contains(&ahead),
                "next work {ahead} ticks ahead of {}, the earliest deadline {earliest}",
                w.now()
            );
            w.advance(next, Clock::Tickless, &mut Work::unlimited());
            while let Some(e) = w.pop_expired() {
                fired.push((e.id, w.now()));
            }
        }
        fired
    }

    /// A timer moved, while the tick on which the top level turns onto its slot is half done,
    /// to a deadline a full turn away, on that same slot: it goes to the end of the list the
    /// cascade is emptying, and every timer behind it still leaves the slot on that tick.
    /// Kept in place at the head, it ended the cascade there, and the timer behind it fired a
    /// turn (2^36 ticks) late.
    #[test]
    fn a_timer_moved_a_turn_on_during_the_top_cascade_strands_none() {
        let mut w = wheel::<LVL_DEPTH>(0);
        let (t, turn) = (1 << 30, 1 << 36);
        w.start(t + 5, 0).unwrap();
        let b = w.start(t + 7, 1).unwrap();
        w.start(t + 9, 2).unwrap();
        half_done_on_the_top(&mut w, t);
        w.reschedule(b, turn, turn).unwrap();
        w.advance(t, Clock::Tickless, &mut Work::unlimited());
        assert!(!w.arena.ticking());
        let fired = run_out(&mut w, &[(0, t + 5), (1, t + turn), (2, t + 9)]);
        assert_eq!(fired, [(0, t + 5), (2, t + 9), (1, t + turn)]);
    }

    /// A timer started a full turn away while that tick is half done lands on the slot under
    /// the top pointer, behind the timers the cascade has still to move; once the cascade
    /// reaches it, the slot's bound is a turn on, not the tick just gone, so that next work
    /// after the tick is a tick to come (it named a tick gone, 2^64 - 2 ticks ahead).
    #[test]
    fn a_timer_started_a_turn_on_during_the_top_cascade_keeps_next_work_ahead() {
        let mut w = wheel::<LVL_DEPTH>(0);
        let (t, turn) = (1 << 30, 1 << 36);
        w.start(t + 5, 0).unwrap();
        w.start(t + 7, 1).unwrap();
        half_done_on_the_top(&mut w, t);
        w.start(turn, 2).unwrap();
        w.advance(t, Clock::Tickless, &mut Work::unlimited());
        assert!(!w.arena.ticking());
        let fired = run_out(&mut w, &[(0, t + 5), (1, t + 7), (2, t + turn)]);
        assert_eq!(fired, [(0, t + 5), (1, t + 7), (2, t + turn)]);
    }

    /// Intervals that reach every level, the top ring and the overflow list of wheels with
    /// few levels, and land on whole turns of a two-level wheel.
    const PROFILE: Profile = Profile {
        intervals: &[
            (14, Band::Upto(64)),
            (8, Band::Upto(5000)),
            (7, Band::Upto(20_000)),
            (1, Band::Upto(1 << 40)),
            (1, Band::Longest),
            (1, Band::Turns(4096)),
        ],
        range: None,
        // Exact but while entries are put off (see `retime`).
        foresight: Foresight::Partial,
        check_every: 64,
        reach: 1 << 34,
        tiny_budgets: false,
    };

    /// Runs the model on a `D`-level wheel started at `start`, its tickless jumps crossing a
    /// few turns of the top level at most (each turn is a step with the overflow list busy),
    /// with `tiny_budgets` if asked (see [`Profile`]).
    fn against_model<const D: usize>(start: u64, seed: u64, ops: u64, tiny_budgets: bool) {
        let profile = Profile {
            reach: 1 << (LVL_BITS as usize * D + 2).min(34),
            tiny_budgets,
            ..PROFILE
        };
        check_against(
            &mut wheel::<D>(start),
            seed,
            ops,
            &profile,
            assert_placed::<D>,
        );
    }

    #[test]
    fn random_ops_match_model() {
        against_model::<LVL_DEPTH>(0, 1, 200_000, false);
        against_model::<LVL_DEPTH>(u64::MAX - 1000, 2, 200_000, false);
        against_model::<LVL_DEPTH>((1 << 32) - 20_000, 3, 100_000, false);
        against_model::<LVL_DEPTH>((5 << 30) - 3000, 4, 100_000, false);
    }

    #[test]
    fn random_ops_match_model_through_overflow() {
        against_model::<1>(u64::MAX - 5000, 5, 100_000, false);
        against_model::<2>(0, 6, 200_000, false);
        against_model::<2>(u64::MAX - 30_000, 7, 200_000, false);
        against_model::<3>(u64::MAX - 100, 8, 100_000, false);
    }

    /// The same with budgets of 1 to 3 units on nearly every call: the ticks on which the top
    /// level turns are left half done most of the time, and timers are started and moved onto
    /// the slot under its pointer, a full turn on, meanwhile (see [`Hierarchical::cascade`]).
    #[test]
    fn random_ops_match_model_with_ticks_half_done() {
        against_model::<1>(u64::MAX - 5000, 9, 200_000, true);
        against_model::<1>(0, 10, 200_000, true);
        against_model::<2>(0, 11, 200_000, true);
        against_model::<2>(u64::MAX - 30_000, 12, 200_000, true);
        against_model::<3>(u64::MAX - 100, 13, 200_000, true);
    }
}
