/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * rust_timerwheel: the BSD callout facility of Varghese & Lauck on /dev/timerwheel.
 *
 * Every open file description of /dev/timerwheel owns one callout instance: a timer scheme
 * (the paper's scheme number), a clock that ticks it, and a ring of expiry records that read(2)
 * returns. Configure it with TW_IOC_CONFIGURE before its first use, or the first
 * TW_IOC_SETCALLOUT or TW_IOC_TIMEOUT whose arguments are valid, or the first TW_IOC_BATCH with
 * such a start among its operations, configures the defaults. A call that fails on its
 * arguments configures nothing: TW_IOC_CONFIGURE still works after it. Closing the file
 * cancels everything it holds.
 *
 * The file is pollable: EPOLLIN (POLLIN) while an expiry record is ready to read(2), where the
 * kernel has poll for Rust misc devices (TW_FEATURE_POLL in struct tw_info).
 *
 * The clock is tickless by default: the instance's hrtimer is armed only for the next tick that
 * has work (an expiry, or bookkeeping such as a migration between levels), and not at all while
 * nothing is outstanding; idle ticks are skipped at no cost per tick. TW_CONFIG_PERIODIC asks
 * for the paper's tick on every period instead.
 *
 * Bounded work: the instance's lock (taken with interrupts masked) is never held for more than
 * W entries visited or moved (the module's hold_work parameter, TW_HOLD_WORK by default,
 * reported in struct tw_info): per-tick bookkeeping, expiry processing, catch-up after a late
 * tick, the walk of a sorted list (schemes 2 and 5) and every ioctl proceed in such chunks,
 * releasing the lock in between. A real-clock tick whose work does not fit continues in the
 * next hrtimer callback; callouts then fire late, never early, and the lateness histogram,
 * overruns and max_hold_* in struct tw_stats show it. Long ioctls end at a chunk boundary when
 * a signal is pending (EINTR). A call still waiting for another long operation on the same file
 * to end has done nothing: after a handler installed with SA_RESTART it is restarted instead. A
 * long call that a signal ends before it has done anything (a placement on schemes 2 and 5, an
 * UNTIMEOUT walk, a CONFIGURE) starts again as if nothing had come between where no handler
 * runs (a stop and a continue, a debugger's attach, the freezer), as poll(2) does; a handler
 * ends it with EINTR, SA_RESTART or not, since a call started over under a stream of handled
 * signals might never end. Started over, a set or reset counts its ticks from then, a reset
 * finds its callout fired if it came due meanwhile (ENOENT), and a CONFIGURE may find the
 * memory the one given up made still being freed (ENOMEM); an UNTIMEOUT goes on with the walk
 * it had made (see TW_IOC_UNTIMEOUT), and a set or reset on schemes 2 and 5 goes on after the
 * last callout its walk had passed, if that is still on the list it walks and due no later (the
 * list is sorted, so the place found is the one a walk from the head would find), so that a
 * stream of such stops alone cannot keep them from ending (on scheme 5, a set or reset made
 * again a tick later on the real clock hashes to another slot, and walks its list anew).
 * ADVANCE, BATCH and the benches, which have done something by then, end with EINTR whatever
 * the signal.
 *
 * 32-bit processes on a 64-bit kernel use this header as it is: every structure has the same
 * layout, and every ioctl the same number, in both ABIs (fixed-width fields, the 64-bit ones
 * 8-byte aligned, user pointers carried in __u64 fields, as u64_to_user_ptr reads them).
 *
 * Statistics are also shown as "key: value" lines in /proc/PID/fdinfo/FD, after the kernel's
 * own (pos, flags, mnt_id, ino): every field of struct tw_stats, by its name, but the lateness
 * histogram (TW_IOC_STATS has it) and flags, shown as config_flags (the kernel's flags line is the
 * file's open flags).
 *
 * All structures have fixed-width fields and no implicit padding. Every ioctl returns 0 or -1
 * with errno set; the errors each command can return are listed beside it. Common to all:
 *   EFAULT  the argument pointer (or a pointer inside the argument) is bad
 *   ENOTTY  unknown command
 */
#ifndef _UAPI_TIMERWHEEL_H
#define _UAPI_TIMERWHEEL_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define TW_VERSION 4
#define TW_DEVICE "/dev/timerwheel"
#define TW_IOC_MAGIC 0xB9

/* Backends: the scheme numbers of the paper. */
#define TW_SCHEME_STRAIGHTFORWARD 1 /* unordered list, O(n) tick */
#define TW_SCHEME_ORDERED_LIST 2 /* traditional BSD callout list, O(n) start */
#define TW_SCHEME_HEAP 3 /* binary heap, O(log n) */
#define TW_SCHEME_BASIC_WHEEL 4 /* one slot per tick up to MaxInterval */
#define TW_SCHEME_HASHED_SORTED 5 /* hashed wheel, sorted lists */
#define TW_SCHEME_HASHED_UNSORTED 6 /* hashed wheel, unsorted lists */
#define TW_SCHEME_HIERARCHICAL 7 /* hierarchical wheels */

/* Clocks. */
#define TW_CLOCK_REAL 0 /* an hrtimer ticks the instance */
#define TW_CLOCK_MANUAL 1 /* only TW_IOC_ADVANCE ticks it: deterministic tests */

/* struct tw_config.flags */
#define TW_CONFIG_PERIODIC (1U << 0) /* run every tick's bookkeeping, never skip idle ticks */
/* Handles only: no side table for the legacy interface (TW_IOC_TIMEOUT and TW_OP_TIMEOUT fail
 * with EINVAL), and 32 bytes of storage per callout in schemes 4 to 7. */
#define TW_CONFIG_HANDLES_ONLY (1U << 1)

/* Limits and defaults (a 0 in struct tw_config selects the default). */
#define TW_DEFAULT_SCHEME TW_SCHEME_HASHED_UNSORTED
#define TW_DEFAULT_CAPACITY 65536
#define TW_MAX_CAPACITY (1U << 22)
#define TW_MAX_CAPACITY_SCHEME1 65536 /* scheme 1 walks every timer on every tick */
#define TW_DEFAULT_SLOTS 256
#define TW_MAX_SLOTS (1U << 24)
#define TW_DEFAULT_TICK_NS 1000000ULL /* 1 ms */
#define TW_MIN_TICK_NS 100000ULL /* 100 us */
#define TW_MAX_TICK_NS 1000000000ULL /* 1 s */
#define TW_DEFAULT_RING 4096
#define TW_MAX_RING (1U << 20)
#define TW_DEFAULT_BUDGET 1024
#define TW_MAX_BUDGET 65536
#define TW_HOLD_WORK 256 /* default W: most entries visited or moved under one hold of the lock */
#define TW_MAX_BATCH 65536
#define TW_MAX_ADVANCE (1ULL << 20)
#define TW_MAX_TICKS ((1ULL << 63) - 1)
#define TW_LATENESS_BUCKETS 16

/* struct tw_info.features */
#define TW_FEATURE_POLL (1U << 0) /* poll/select/epoll report EPOLLIN */
#define TW_FEATURE_TICKLESS (1U << 1) /* the real clock skips idle ticks (unless periodic) */
#define TW_FEATURE_RANGE (1U << 2) /* ranges in tw_set/tw_timeout, TW_IOC_RESET, TW_IOC_QUERY */
/* Memory whose size a call chooses (an instance's storage, a batch's copy, a bench's timers) that
 * it is refused fails it with ENOMEM, in a memory cgroup too: the OOM killer, the system's or the
 * cgroup's, is never sent to make room for it. */
#define TW_FEATURE_NO_OOM_KILL (1U << 3)
/* preadv2(2) with RWF_NOWAIT reads without waiting (the file has FMODE_NOWAIT); without it the
 * call fails with EOPNOTSUPP. */
#define TW_FEATURE_NOWAIT (1U << 4)

/*
 * TW_IOC_INFO: the module, not the instance. Needs no timer: the module arms none of its own.
 * Errors: EFAULT.
 */
struct tw_info {
	__u32 version; /* TW_VERSION */
	__u32 schemes; /* bit n set: scheme n is available */
	__u32 features; /* TW_FEATURE_* */
	__u32 hold_work; /* W of this module (its hold_work parameter) */
	__u64 instances; /* open files of the device now */
	__u64 uptime_ns; /* monotonic time since the module was loaded */
	__u32 timer_list_bytes; /* sizeof(struct timer_list) in the running kernel */
	__u32 hrtimer_bytes; /* sizeof(struct hrtimer) */
	__u64 tick_ns; /* the real clock's period for tw_config.tick_ns 0 (the module's tick_us) */
};

/*
 * TW_IOC_CONFIGURE: choose the instance's backend, geometry and clock. Only before first use.
 * Errors: EINVAL  a value out of range: scheme unknown, clock unknown, capacity above
 *                 TW_MAX_CAPACITY (scheme 1: TW_MAX_CAPACITY_SCHEME1), slots above
 *                 TW_MAX_SLOTS or (schemes 5 and 6) not a power of two, tick_ns outside
 *                 [TW_MIN_TICK_NS, TW_MAX_TICK_NS], ring above TW_MAX_RING, budget above
 *                 TW_MAX_BUDGET, an unknown flag, reserved not 0
 *         EBUSY   the instance was already configured or used (a configuration with a value
 *                 out of range is EINVAL then too: the values are checked first)
 *         ENOMEM  the storage could not be allocated (the caller's memory cgroup has not
 *                 that much left, say), or one of its buffers would take, with the buffers
 *                 other calls are still making, more than half the memory available
 *                 (MemAvailable): nothing is configured
 *         EINTR   a signal caught by a handler arrived while the storage was being made (only
 *                 when capacity, slots or ring is above 65536): nothing is configured, the
 *                 call may be repeated (a stop and a continue restart it)
 */
struct tw_config {
	__u32 scheme; /* TW_SCHEME_*; 0: TW_DEFAULT_SCHEME */
	__u32 clock; /* TW_CLOCK_* */
	__u32 capacity; /* most callouts outstanding at once; 0: TW_DEFAULT_CAPACITY */
	__u32 slots; /* schemes 5, 6: wheel size M; scheme 4: MaxInterval; 0: TW_DEFAULT_SLOTS */
	__u64 tick_ns; /* real clock period; 0: the module's tick_us (TW_DEFAULT_TICK_NS by default) */
	__u64 start_tick; /* the tick counter's first value */
	__u32 ring; /* expiry records buffered for read(2); 0: TW_DEFAULT_RING */
	__u32 budget; /* most expiries processed per tick, the rest carried over; 0: TW_DEFAULT_BUDGET */
	__u32 flags; /* TW_CONFIG_* */
	__u32 reserved; /* must be 0 */
};

/*
 * TW_IOC_SETCALLOUT: a callout due `ticks` ticks from now, returning its handle. With `latest` not
 * 0, it may fire on any tick in [ticks, latest] ticks from now, and the structure picks the
 * cheapest (scheme 7: the last boundary of the coarsest slots inside the range; scheme 4: the
 * latest tick within MaxInterval; the others: the latest tick); it never fires outside it.
 * On the real clock, "now" is the tick real time has reached: an instance running behind
 * (overload: its ticks' work did not fit in time) adds the ticks it is behind, its lag, to
 * ticks and latest, and the limits below (TW_MAX_TICKS, MaxInterval) apply to ticks + lag.
 * The request is written back unchanged before anything is done: one the handle cannot be
 * written to (a read-only mapping) fails with EFAULT, nothing set and nothing configured. If the
 * write of the handle fails all the same (the request unmapped or protected meanwhile), the
 * callout is cancelled again: nothing is left behind, unless it fired first (on the real clock,
 * or by a TW_IOC_ADVANCE from another thread): its expiry record is then in the ring, as any
 * fired callout's. The defaults a first call configured stay configured then: another thread
 * may be using them already.
 * Errors: EINVAL  ticks is 0 or above TW_MAX_TICKS, latest not 0 and below ticks or above
 *                 TW_MAX_TICKS (real clock: ticks + lag or latest + lag above it)
 *         ERANGE  ticks is beyond scheme 4's MaxInterval (real clock: ticks + lag)
 *         ENOSPC  capacity callouts are outstanding
 *         ENOMEM  the instance was not configured, and its default storage could not be
 *                 allocated
 *         EINTR   a signal caught by a handler arrived during a long placement (schemes 2 and
 *                 5; a stop and a continue restart the call), or while this call waited for
 *                 another long operation on the same file to end (BATCH, ADVANCE, BENCH, a
 *                 long placement or untimeout walk; only on schemes 2 and 5: on the others a
 *                 set takes one step, between any two of such an operation's, and waits for
 *                 none); nothing was set (but for a callout whose tick came during its
 *                 placement, on the real clock: it fired, and its expiry record, with a handle
 *                 no call returned, is in the ring; EINTR then, whatever the signal)
 */
struct tw_set {
	__u64 ticks;
	__u64 cookie; /* returned in the expiry record */
	__u64 handle; /* out */
	__u64 latest; /* 0: exactly `ticks`; else the last tick of the range */
};

/*
 * TW_IOC_UNSETCALLOUT: cancels the callout `handle` names (from TW_IOC_SETCALLOUT or
 * TW_IOC_TIMEOUT). On an instance not configured yet it configures nothing. A handle names a
 * callout of the file that issued it: every instance numbers its handles from a start of its own,
 * so that one given to another file is stale there (the starts lie far apart: for two files
 * configured within 1,000 configurations of each other, the module's, one would have to reuse an
 * entry 4.9 * 10^8 times to issue a handle the other issued, or will).
 * Errors: ENOENT  the handle is stale: the callout fired, was cancelled, never existed, or is
 *                 another file's
 */

/*
 * TW_IOC_RESET: mod_timer: moves the pending callout `handle` names to `ticks` ticks from now (or
 * the range [ticks, latest]), keeping its handle and cookie. O(1) in schemes 1, 4, 6 and 7, O(log
 * n) in 3; on the sorted lists of schemes 2 and 5 a deadline that leaves its place walks the list
 * as a start does (O(n), O(n/M) on average in 5: see EINTR below). Nothing moves when the new
 * deadline lands where the callout already is, or when the callout is already due inside the new
 * range (a callout pushed back with slack, again and again, stays put while its deadline is
 * acceptable). A callout already due but not yet processed (its tick was reached, but the per-tick
 * budget carried its expiry over, or the ADVANCE that reached it was cut short) is re-armed too,
 * and leaves the due queue. On the real clock the call first brings the instance up to real time,
 * processing what is due as far as one hold's work and the per-tick budget allow: a callout whose
 * deadline has passed normally fires then (its expiry record goes to the ring) and the call fails
 * with ENOENT; only one the budget carries over, or one not reached yet under overload, is
 * re-armed.
 * Errors: as TW_IOC_SETCALLOUT (but ENOSPC and ENOMEM), and
 *         ENOENT  the handle is stale
 *         EINTR   a signal caught by a handler arrived during a long placement (schemes 2 and
 *                 5; a stop and a continue restart the call): the callout is back where it
 *                 was, with its old deadline (if that deadline came during the placement, it
 *                 is due at once, and fires with it, late); or while the call
 *                 waited for another long operation on the same file (schemes 2 and 5 only,
 *                 as for TW_IOC_SETCALLOUT, or an instance not configured yet, which may be
 *                 configured with either meanwhile): nothing moved
 */
struct tw_reset {
	__u64 handle;
	__u64 ticks;
	__u64 latest; /* 0: exactly `ticks`; else the last tick of the range */
};

/*
 * TW_IOC_QUERY: whether the callout `handle` names is outstanding, and its deadline.
 * Errors: EINVAL  reserved not 0
 */
struct tw_query {
	__u64 handle;
	__u32 pending; /* out: 1 if outstanding (pending or expired, not yet processed), else 0 */
	__u32 reserved; /* must be 0 */
	__u64 deadline; /* out: the tick it is due on (0 when not pending) */
	__u64 now; /* out: the current tick: on the real clock, the tick real time has reached,
		    * which tw_stats.now, the tick the scheme stands on, reaches only when there
		    * is work (the clock is tickless) */
};

/*
 * TW_IOC_TIMEOUT: the legacy interface, timeout(func, arg, ticks); (func, arg) are opaque, but
 * func is a function and cannot be 0.
 * Errors: as TW_IOC_SETCALLOUT, and EINVAL for func 0 or on a TW_CONFIG_HANDLES_ONLY instance.
 */
struct tw_timeout {
	__u64 func;
	__u64 arg;
	__u64 ticks;
	__u64 handle; /* out */
	__u64 latest; /* 0: exactly `ticks`; else the last tick of the range */
};

/*
 * TW_IOC_UNTIMEOUT: untimeout(func, arg), found through a hash table on (func, arg). With several
 * callouts of the same (func, arg), the one due first is cancelled (as BSD's walk of its sorted
 * list did); among those due on the same tick, the one set first. The walk of a long hash chain
 * (many duplicates) goes on over several holds of the instance's lock, each of at most hold_work
 * entries; callouts set meanwhile are not looked at. The walk starts again from the chain's head
 * once: when the match it would cancel fires or is cancelled, or a TW_IOC_RESET (from another
 * thread) moves one of its matches. After that it goes on, and a match reset meanwhile is compared
 * at its new deadline with the best so far; should the best fire and nothing after it match, the
 * walk goes back to the head a last time and cancels the first match it meets there (set meanwhile
 * or not), so that neither firings nor another thread's resets or new callouts can keep it walking:
 * it ends within three walks of the chain. A walk a signal cuts short on its first pass of the
 * chain (it had not gone back to the head) is kept: the same thread's next UNTIMEOUT of the same
 * (func, arg) goes on where it stopped, if no TW_IOC_TIMEOUT (or TW_OP_TIMEOUT) of that (func, arg)
 * succeeded on the file since the walk began, no reset of a sorted list's callout was undone, and
 * no TW_IOC_BATCH, no bench of the instance's resets (TW_IOC_BENCH or TW_IOC_BENCH_PAIR of kind
 * TW_BENCH_SETCALLOUT, TW_BENCH_TIMEOUT or TW_BENCH_MOD) and no other thread's TW_IOC_UNTIMEOUT ran
 * on the file meanwhile; callouts of other keys, on its chain or not, do not stop it. That is how a
 * call started again after a stop and a continue, the freezer or task work ends however often they
 * come; a call made anew after a handler ran finds what a walk from the chain's head would, as no
 * new match can be on the chain.
 * Any other call starts from the head.
 * Errors: ENOENT  no outstanding callout has this (func, arg); after a walk over several holds,
 *                 every one it looked at fired (or was cancelled) before it could cancel it,
 *                 callouts set behind it meanwhile being left alone
 *         EINTR   a signal caught by a handler came during a long walk (a stop and a
 *                 continue restart the call), or while the call waited for another long
 *                 operation on the same file: nothing was cancelled
 */
struct tw_untimeout {
	__u64 func;
	__u64 arg;
};

/*
 * TW_IOC_ADVANCE: runs `*(__u64 *)arg` ticks of bookkeeping and expiry processing now, skipping
 * idle ticks at no cost unless the instance is TW_CONFIG_PERIODIC. On an instance not
 * configured yet it configures nothing.
 * Errors: EINVAL  the instance has the real clock or is not configured, or the count is 0 or
 *                 above TW_MAX_ADVANCE (at once, beside another long operation on the same
 *                 file, but on an instance not configured yet, which may be meanwhile)
 *         EINTR   a signal arrived; the ticks already run stay run; or while the call waited
 *                 for another long operation on the same file to end: no tick was run
 */

/* One operation of a batch: the fields each op reads, and what it writes. */
#define TW_OP_SET 1 /* a: ticks, b: cookie -> handle */
#define TW_OP_UNSET 2 /* handle */
#define TW_OP_TIMEOUT 3 /* a: func, b: arg, c: ticks -> handle */
#define TW_OP_UNTIMEOUT 4 /* a: func, b: arg */
/*
 * TW_OP_RESET checks its new interval before it cancels: a reset whose set would fail (EINVAL,
 * ERANGE, as TW_OP_SET's) leaves its callout as it was, with its handle and deadline. On the real
 * clock the instance is first brought up to real time, as for TW_IOC_RESET: a callout whose
 * deadline has passed fires then (its record goes to the ring) and the reset fails with ENOENT.
 */
#define TW_OP_RESET 5 /* handle, a: ticks, b: cookie: unset then set -> handle */
#define TW_OP_MOD 6 /* handle, a: ticks, b: latest (0: exactly a): TW_IOC_RESET, handle kept */
struct tw_op {
	__u32 op; /* TW_OP_* */
	__s32 result; /* out: 0 or a negative errno of the single-call ioctl (EINVAL: bad op) */
	__u64 a;
	__u64 b;
	__u64 c;
	__u64 handle; /* in (UNSET, RESET) and out (SET, TIMEOUT, RESET) */
};

/*
 * TW_IOC_BATCH: runs `count` operations from the array at `ops`, writing each one's result
 * back; one failed operation does not stop the others. A callout an operation starts or moves
 * fires on its tick while the rest of the batch still runs (the real clock is armed for it
 * between the batch's chunks where it was armed later).
 * On an instance not configured yet, a batch configures the defaults only if one of its
 * operations is a TW_OP_SET or TW_OP_TIMEOUT with valid arguments (ticks in [1, TW_MAX_TICKS],
 * func not 0). Otherwise no operation could succeed on the defaults: each fails as it would on
 * an empty instance (EINVAL for bad arguments or an unknown op; else ENOENT, every callout an
 * operation names by handle or key being stale), and the instance stays unconfigured.
 * Errors: EINVAL  count is 0 or above TW_MAX_BATCH, or reserved is not 0
 *         EFAULT  ops is bad, or not writable (the array is written back unchanged before
 *                 any operation runs): no operation was run; or the results could not be
 *                 written back afterwards (the array unmapped or protected meanwhile; part of
 *                 it may have been written): the operations ran, but every callout a
 *                 TW_OP_SET, TW_OP_TIMEOUT or TW_OP_RESET made anew, whose handle the caller
 *                 may not have, was cancelled again (a reset's old callout with it), as
 *                 TW_IOC_SETCALLOUT's is; one that fired first has its record in the ring.
 *                 EFAULT then takes the place of EINTR, should a signal have cut the batch
 *                 short too.
 *         ENOMEM  the operations could not be copied in, or the instance was not configured
 *                 and its default storage could not be allocated: no operation was run
 *         EINTR   a signal arrived while it ran: the operations run so far keep their results,
 *                 written back; the others have result -EINTR and were not run (a TW_OP_MOD
 *                 cut short in its placement has -EINTR and is undone, as TW_IOC_RESET; a
 *                 TW_OP_RESET whose set is still placing, its old callout already cancelled,
 *                 is placed to the end first, and keeps its result and new handle; a
 *                 TW_OP_SET or TW_OP_TIMEOUT cut short in its placement has -EINTR and is
 *                 cancelled, but for a callout whose tick came during its placement, on the
 *                 real clock, which fired: its record, with the handle written back in its
 *                 operation, is in the ring, as for TW_IOC_SETCALLOUT); or while
 *                 it waited for another long operation on the same file to end: none was run,
 *                 and the array is left as it was given
 */
struct tw_batch {
	__u64 ops; /* user pointer to struct tw_op[count] */
	__u32 count;
	__u32 reserved; /* must be 0 */
};

/*
 * TW_IOC_STATS: counters of the instance since it was configured.
 * Errors: EFAULT.
 */
struct tw_stats {
	__u64 outstanding; /* pending + queued */
	__u64 started; /* set and timeout calls that succeeded */
	__u64 stopped; /* unset and untimeout calls that succeeded */
	__u64 fired; /* expiry records produced (delivered or dropped) */
	__u64 ticks; /* ticks of bookkeeping run */
	__u64 now; /* the tick the scheme stands on (see tw_query.now) */
	__u64 overruns; /* real clock: periods the hrtimer missed and caught up */
	__u64 carried; /* expiries left for a later tick because the budget ran out */
	__u64 queued; /* expired, not yet processed (carried) now */
	__u64 ring_drops; /* expiry records lost because the ring was full */
	__u64 ring_used; /* records waiting to be read */
	__u64 max_tick_work; /* most expiries processed by one tick */
	__u64 memory_bytes; /* storage allocated for the instance */
	__u64 scheme; /* TW_SCHEME_* in use (0: not configured yet) */
	__u64 flags; /* TW_CONFIG_* in use */
	__u64 wakeups; /* real clock: hrtimer callbacks run */
	__u64 skipped; /* idle ticks skipped without bookkeeping */
	__u64 holds; /* holds of the instance's lock that did work */
	__u64 max_hold_work; /* most entries visited or moved under one hold (<= W) */
	__u64 max_hold_ns; /* longest hold that did work, in ns */
	/* lateness[0]: fired on its tick; [i]: late by [2^(i-1), 2^i) ticks; last: or more */
	__u64 lateness[TW_LATENESS_BUCKETS];
};

/*
 * read(2) returns whole records, oldest first: blocks (interruptibly) until at least one is there,
 * or fails with EAGAIN under O_NONBLOCK, in preadv2(2) with RWF_NOWAIT (TW_FEATURE_NOWAIT), and in
 * io_uring's attempt that must not wait (which then polls). A signal caught by a handler ends the
 * wait with EINTR (a handler installed with SA_RESTART restarts the read instead). A read that has
 * delivered records ends early on a signal and returns them, never EINTR (as read(2) of /dev/zero
 * does): a long read answers signals, and a stream of them never stops a reader. A buffer smaller
 * than one record: EINVAL (but a readv(2) of no bytes at all returns 0, as the VFS answers it
 * without asking the device). A buffer that faults ends the read with the records delivered before
 * it, or EFAULT if none was; the records it took and could not deliver go back to the head of the
 * ring, ahead of newer ones, as far as there is room (the ring may have filled meanwhile: what does
 * not fit is lost, counted in tw_stats.ring_drops). The file is a stream, as a pipe is: it has no
 * position, and lseek(2), pread(2) and pwrite(2) fail with ESPIPE.
 */
#define TW_ORIGIN_CALLOUT 1 /* TW_IOC_SETCALLOUT: cookie */
#define TW_ORIGIN_LEGACY 2 /* TW_IOC_TIMEOUT: func, arg */
struct tw_fired {
	__u64 handle;
	__u64 cookie; /* the cookie, or func */
	__u64 arg; /* arg, or 0 */
	__u64 deadline; /* the tick it was due on */
	__u64 fired; /* the tick it was processed on */
	__u32 origin; /* TW_ORIGIN_* */
	__u32 reserved;
};

/*
 * TW_IOC_BENCH: times `iterations` repetitions of one operation inside the kernel, with the
 * kernel's monotonic clock, so that the cost of a data structure is not hidden under the cost of
 * a system call. The paper's method (section VII.A): with n timers outstanding at random times
 * far in the future, one more timer is repeatedly reset to a random time farther away than all
 * of them; a reset is a cancel plus a start.
 *
 *   TW_BENCH_SETCALLOUT  unsetcallout + setcallout on this instance, under its lock
 *   TW_BENCH_TIMEOUT     untimeout + timeout on this instance, under its lock
 *   TW_BENCH_TIMER_LIST  timer_delete + mod_timer of a timer_list, with n others pending
 *   TW_BENCH_HRTIMER     hrtimer_cancel + hrtimer_start, with n other hrtimers pending
 *   TW_BENCH_TICK        per-tick bookkeeping: `iterations` ticks of this instance (manual clock)
 *
 * For the first two and TW_BENCH_TICK, the n are the instance's outstanding callouts (set them
 * up with TW_IOC_BATCH) and `n` must be 0. For the kernel's timers, the module creates n timers
 * due at random in [min_ticks / 2, min_ticks) ticks (1 tick = 1 ms; timer_list: jiffies) and
 * takes them down before returning; a signal (EINTR, or, once the results are out, delivered
 * on return) leaves the rest of that to a workqueue of the module's own, so that the call
 * returns at once however many it made. Every bench first waits until the timers of earlier
 * ones are gone (a signal ends that wait, nothing done: EINTR, or a restart under SA_RESTART),
 * so that their teardown does not run beside its measurement. New deadlines of the reset
 * timer are drawn from [min_ticks, min_ticks + spread), min_ticks at least
 * TW_MIN_BASELINE_TICKS: the n timers are then 2^19 ticks (8.7 minutes at 1 ms) away or more,
 * and nothing fires during a bench.
 *
 *   TW_BENCH_MOD         the same reset in place: TW_IOC_RESET on one handle, under its lock
 *   TW_BENCH_TIMER_LIST_MOD  mod_timer of the pending timer_list (Linux's reset in place)
 *
 * The instance benches need a configured manual-clock instance (so that nothing ticks it
 * meanwhile: a concurrent TW_IOC_ADVANCE on the same file waits for the bench). Their loop runs
 * in holds of at most W entries of work, and only the time under the lock is
 * counted.
 *
 * Errors: EINVAL  kind unknown, iterations 0 or above TW_MAX_BENCH_ITERATIONS, n above
 *                 TW_MAX_CAPACITY (or not 0 where it must be), min_ticks below 2 (for the
 *                 kernel's timers, below TW_MIN_BASELINE_TICKS), spread 0, min_ticks + spread
 *                 above TW_MAX_BENCH_TICKS (for timer_list, also above the kernel's
 *                 MAX_JIFFY_OFFSET, which is below it on a 32-bit kernel only), an instance
 *                 bench on a real-clock or unconfigured
 *                 instance, TW_BENCH_TIMEOUT on a TW_CONFIG_HANDLES_ONLY instance, reserved
 *                 not 0
 *         ERANGE  a deadline drawn for the reset timer is beyond scheme 4's MaxInterval: the
 *                 draws decide, so it is certain when min_ticks is beyond it, and depends on
 *                 the seed when only min_ticks + spread - 1 is (keep that within MaxInterval);
 *                 the bench stops at that draw, its timer cancelled
 *         ENOSPC  the instance is full (no room for the reset timer)
 *         ENOENT  another call on the same file cancelled the bench's own callout, by its
 *                 handle, while the bench ran
 *         ENOMEM  the n kernel timers could not be allocated, or would take, with the buffers
 *                 other calls are still making, more than half the memory available
 *         EINTR   a signal arrived; nothing of a reset bench is left behind (its timer is
 *                 cancelled); the ticks a TW_BENCH_TICK ran stay run, and the expiries they
 *                 processed are in the ring
 */
#define TW_BENCH_SETCALLOUT 1
#define TW_BENCH_TIMEOUT 2
#define TW_BENCH_TIMER_LIST 3
#define TW_BENCH_HRTIMER 4
#define TW_BENCH_TICK 5
#define TW_BENCH_MOD 6
#define TW_BENCH_TIMER_LIST_MOD 7
#define TW_MAX_BENCH_ITERATIONS (1ULL << 24)
#define TW_MAX_BENCH_TICKS (1ULL << 40)
#define TW_MIN_BASELINE_TICKS (1ULL << 20) /* min_ticks of the kernel's timers: none fires */
struct tw_bench {
	__u32 kind; /* TW_BENCH_* */
	__u32 reserved; /* must be 0 */
	__u64 n; /* TIMER_LIST, HRTIMER: other timers pending; else 0 */
	__u64 iterations; /* resets (or ticks) to time */
	__u64 min_ticks; /* reset deadlines from [min_ticks, min_ticks + spread) ticks ahead */
	__u64 spread; /* at most TW_MAX_BENCH_TICKS, as is min_ticks + spread */
	__u64 seed; /* for the random deadlines */
	__u64 elapsed_ns; /* out: total time of the timed loop */
	__u64 max_hold_ns; /* out: longest single hold of the lock in the loop (instance benches) */
};

/*
 * TW_IOC_BENCH_PAIR: an instance bench and a bench of Linux's timers in one call, alternated, so
 * that their ratio holds however the machine's speed moves. Under emulation it moves by up to 2x
 * from one second to the next, for Linux's timers as for the module's: two benches made seconds
 * apart compare moments of the machine as much as timers, while here each millisecond or so of this
 * instance's resets (in holds, as TW_IOC_BENCH makes them) is followed at once by as many resets of
 * Linux's timer, and the two times are summed apart. `instance` is TW_BENCH_SETCALLOUT,
 * TW_BENCH_TIMEOUT or TW_BENCH_MOD on this instance, `baseline` TW_BENCH_TIMER_LIST,
 * TW_BENCH_TIMER_LIST_MOD or TW_BENCH_HRTIMER, each as for TW_IOC_BENCH, with the same
 * iterations; the n timers of `baseline` are made first. Each half's elapsed_ns is written back,
 * and the instance's max_hold_ns.
 * Errors: as TW_IOC_BENCH for either half; EINVAL also for another kind in either, or
 *         iterations that differ
 */
struct tw_bench_pair {
	struct tw_bench instance;
	struct tw_bench baseline;
};

#define TW_IOC_INFO _IOR(TW_IOC_MAGIC, 0x00, struct tw_info)
#define TW_IOC_CONFIGURE _IOW(TW_IOC_MAGIC, 0x01, struct tw_config)
#define TW_IOC_SETCALLOUT _IOWR(TW_IOC_MAGIC, 0x02, struct tw_set)
#define TW_IOC_UNSETCALLOUT _IOW(TW_IOC_MAGIC, 0x03, __u64)
#define TW_IOC_TIMEOUT _IOWR(TW_IOC_MAGIC, 0x04, struct tw_timeout)
#define TW_IOC_UNTIMEOUT _IOW(TW_IOC_MAGIC, 0x05, struct tw_untimeout)
#define TW_IOC_ADVANCE _IOW(TW_IOC_MAGIC, 0x06, __u64)
#define TW_IOC_BATCH _IOW(TW_IOC_MAGIC, 0x07, struct tw_batch)
#define TW_IOC_STATS _IOR(TW_IOC_MAGIC, 0x08, struct tw_stats)
#define TW_IOC_BENCH _IOWR(TW_IOC_MAGIC, 0x09, struct tw_bench)
#define TW_IOC_RESET _IOW(TW_IOC_MAGIC, 0x0a, struct tw_reset)
#define TW_IOC_QUERY _IOWR(TW_IOC_MAGIC, 0x0b, struct tw_query)
#define TW_IOC_BENCH_PAIR _IOWR(TW_IOC_MAGIC, 0x0c, struct tw_bench_pair)

#endif /* _UAPI_TIMERWHEEL_H */
