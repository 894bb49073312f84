// SPDX-License-Identifier: GPL-2.0

//! One open file of `/dev/timerwheel`: the instance, its lock discipline, and its file
//! operations (ioctl, read, poll, fdinfo).
//!
//! # Holds
//!
//! Every access to the state goes through [`Core::hold`]: the spinlock (interrupts masked) is
//! taken with a [`Work`] budget of `hold_work` entries, and whatever the operation has not
//! finished when the budget is spent continues in a later hold, after the lock has been
//! released (and, in process context, after a look at pending signals). Each hold that did
//! work is counted, with its work and its duration, in the statistics.
//!
//! Operations that may span holds take the instance's *slow* right first ([`Core::slow`]), so
//! that one at a time walks: a start or reschedule on schemes 2 and 5, whose placement may walk
//! a sorted list, a batch, an `untimeout` walk, `TW_IOC_ADVANCE` and the instance benches. Its
//! holders release the spinlock between holds, but not the right; a caller waiting for it
//! sleeps interruptibly (EINTR), however long the holder's bench or ADVANCE runs. A start or
//! reschedule on the other schemes is one hold, and runs between any two of theirs.

use kernel::{
    alloc::{
        flags::GFP_KERNEL_ACCOUNT,
        KVVec, //
    },
    fs::{
        file::flags::O_NONBLOCK,
        File,
        Kiocb, //
    },
    impl_has_hr_timer,
    ioctl::_IOC_SIZE,
    iov::IovIterDest,
    miscdevice::{
        MiscDevice,
        MiscDeviceRegistration, //
    },
    new_condvar, new_mutex, new_spinlock_irq,
    prelude::*,
    seq_file::SeqFile,
    seq_print,
    sync::{
        atomic::ordering,
        poll::PollCondVarBox,
        Arc,
        CondVar,
        Mutex,
        SpinLockIrq,
        SpinLockIrqGuard, //
    },
    time::{
        hrtimer::{
            AbsoluteSoftMode,
            ArcHrTimerHandle,
            HrTimer,
            HrTimerPointer, //
        },
        Instant,
        Monotonic, //
    },
    transmute::AsBytes,
    uaccess::{
        UserPtr,
        UserSlice,
        UserSliceReader,
        UserSliceWriter, //
    },
};

use crate::{
    params::{
        user_sized,
        Params, //
    },
    ring::Ring,
    state::{
        check_set,
        check_timeout,
        op_configures,
        op_places,
        State,
        RECORD, //
    },
    uapi::*,
    wheel::{
        Handle,
        Scheme,
        SchemeKind,
        Work,
        MAX_SEARCH_WORDS, //
    },
};

/// The most one step of work can cost once started, so that a hold stops taking new steps
/// this far below `hold_work` and still never exceeds it: a heap sift over 2^22 timers (22
/// swaps) for a stop and again for a start, a search of a wheel's occupancy bitmap (at most
/// [`MAX_SEARCH_WORDS`] words), or one list or slot step of the others. Loops check the budget
/// before each step and every step, once begun, runs to its end; a start's catch-up of the real
/// clock begins steps only while this much is left after them
/// ([`State::catch_up`](crate::state::State)).
pub(crate) const STEP_MARGIN: usize = 48;
const _: () = assert!(STEP_MARGIN > MAX_SEARCH_WORDS);

/// `IOCB_NOWAIT` of `include/linux/fs.h`, which bindgen leaves out (its definition casts):
/// `RWF_NOWAIT` of the uapi's `linux/fs.h`, whose value is ABI.
const IOCB_NOWAIT: core::ffi::c_int = 0x8;

/// `FMODE_NOWAIT` of `include/linux/fs.h`, which bindgen leaves out (its definition casts): a
/// file whose reads honour `IOCB_NOWAIT`. Not ABI: Kbuild sets `tw_fmode_nowait` only where the
/// tree defines it as this value.
#[cfg(tw_fmode_nowait)]
const FMODE_NOWAIT: kernel::bindings::fmode_t = 1 << 27;

/// What an instance's clock shares with its file operations.
#[pin_data]
pub(crate) struct Core {
    /// The real clock.
    #[pin]
    timer: HrTimer<Self>,
    #[pin]
    pub(crate) state: SpinLockIrq<State>,
    /// Signalled when records are added to the ring; poll waits on it too. Boxed, so that a
    /// close waits for no RCU grace period: the box is freed after one (`kfree_rcu`), once
    /// epoll has let go of it, where a `PollCondVar` of its own would make every close wait for
    /// one (`synchronize_rcu`), tens of milliseconds on a debug kernel.
    pub(crate) readable: PollCondVarBox,
    /// Signalled when the slow right (`State::slow_busy`) is given back.
    #[pin]
    slow_free: CondVar,
    /// The most entries of work under one hold of `state` (the `hold_work` parameter).
    hold_work: usize,
}

impl_has_hr_timer! {
    impl HasHrTimer<Self> for Core {
        mode: AbsoluteSoftMode<Monotonic>, field: self.timer
    }
}

/// The slow right of an instance, given back when dropped.
pub(crate) struct Slow<'a> {
    core: &'a Core,
}

impl Drop for Slow<'_> {
    fn drop(&mut self) {
        self.core.state.lock().slow_busy = false;
        // One waiter (they wait exclusively): waking them all would walk the whole queue with
        // interrupts masked, and all but one would sleep again. One that leaves on a signal
        // instead passes the wake-up on (`Core::slow`).
        self.core.slow_free.notify_one();
    }
}

impl Core {
    /// Takes the right to run an operation that spans holds, waiting interruptibly while
    /// another has it. A signal ends the wait with ERESTARTSYS: nothing is done yet, so the
    /// call restarts after a handler installed with SA_RESTART (or a stop and a continue, or
    /// the freezer), and fails with EINTR otherwise.
    pub(crate) fn slow(&self) -> Result<Slow<'_>> {
        self.slow_locked(self.state.lock())
    }

    /// [`Core::slow`] for a start or reset: taken only where its placement may walk across
    /// holds (`State::places_in_walks`: schemes 2 and 5, or nothing configured yet), else
    /// `None` at once. One hold of the lock decides and takes it.
    pub(crate) fn slow_for_placement(&self) -> Result<Option<Slow<'_>>> {
        let st = self.state.lock();
        match st.places_in_walks() {
            true => self.slow_locked(st).map(Some),
            false => Ok(None),
        }
    }

    /// [`Core::slow`] with the lock already held.
    fn slow_locked<'a>(&'a self, mut st: SpinLockIrqGuard<'a, State>) -> Result<Slow<'a>> {
        while st.slow_busy {
            if self.slow_free.wait_interruptible(&mut st) {
                // The wake-up of a right given back may have come to this waiter: the next
                // one has it, should the right still be free.
                let free = !st.slow_busy;
                drop(st);
                if free {
                    self.slow_free.notify_one();
                }
                return Err(ERESTARTSYS);
            }
        }
        st.slow_busy = true;
        Ok(Slow { core: self })
    }

    /// Runs `f` under one hold of the state lock with a budget of `hold_work` entries (less
    /// [`STEP_MARGIN`], the most the last step may overshoot), and
    /// counts the hold in the statistics if it did work. Returns `f`'s result and the hold's
    /// duration in nanoseconds.
    pub(crate) fn hold_timed<R>(&self, f: impl FnOnce(&mut State, &mut Work) -> R) -> (R, u64) {
        let mut st = self.state.lock();
        let start = Instant::<Monotonic>::now();
        let mut work = Work::new(self.hold_work - STEP_MARGIN);
        let r = f(&mut st, &mut work);
        let ns = start.elapsed().as_nanos().max(0) as u64;
        if work.done() > 0 {
            let s = &mut st.stats;
            s.holds += 1;
            s.max_hold_work = s.max_hold_work.max(work.done() as u64);
            s.max_hold_ns = s.max_hold_ns.max(ns);
        }
        let wake = core::mem::take(&mut st.wake);
        drop(st);
        // Every poller and one reader (readers wait exclusively), woken once the lock is
        // released; a reader that leaves records in the ring wakes the next (`Instance::read`).
        if wake {
            self.readable.notify_one();
        }
        (r, ns)
    }

    /// [`Core::hold_timed`] without the duration.
    pub(crate) fn hold<R>(&self, f: impl FnOnce(&mut State, &mut Work) -> R) -> R {
        self.hold_timed(f).0
    }
}

/// One open file of `/dev/timerwheel`.
///
/// Fields are dropped in declaration order: the clock handle first (cancelling the hrtimer and
/// waiting for a running callback), then the core with all its storage.
#[pin_data]
pub(crate) struct Instance {
    /// The real clock's hrtimer handle, once started. Its mutex also serialises configuration
    /// and arming.
    #[pin]
    clock: Mutex<Option<ArcHrTimerHandle<Core>>>,
    pub(crate) core: Arc<Core>,
}

/// How a long call that a signal ends before it has done anything returns: a start whose
/// placement is cancelled, a reset undone, an `untimeout` that cancelled nothing, a
/// configuration that made nothing. ERESTARTNOHAND, as `poll(2)` returns it: where no handler
/// runs (a stop and a continue, a debugger's attach, the freezer, task work) the call starts
/// again as if nothing had come between, and a handler ends it with EINTR, `SA_RESTART` or
/// not, since a call that starts over under a stream of handled signals (a profiler's
/// `SIGPROF`, say) might never end. An `untimeout` started again goes on with its walk
/// ([`State::keep_untimeout`]); a start or reset on schemes 2 and 5 goes on after the last
/// entry its walk had passed, which the crate keeps as a hint when a placement is given up. The
/// calls that have done something by then end with EINTR whatever the signal: an ADVANCE, a
/// batch, a bench.
pub(crate) const UNDONE: Error = ERESTARTNOHAND;

/// Whether the current task has a signal pending.
pub(crate) fn signalled() -> bool {
    kernel::current!().signal_pending()
}

/// Offers the CPU in a long call, between two of its steps, with no lock held: C's
/// `cond_resched()`. A kernel that preempts only where the code offers to (`preempt=none` or
/// `voluntary`: in this kernel, on the architectures without lazy preemption, such as arm and
/// um) would otherwise see an ADVANCE, a batch or a bench that runs for seconds keep its CPU,
/// and report a soft lockup.
pub(crate) fn cond_resched() {
    // The debugging check of a sleep in atomic context, and the scheduling point of
    // `preempt=voluntary`.
    kernel::task::might_sleep();
    // `cond_resched()` is a C macro without a Rust abstraction in the kernel crate; the function
    // it calls, `__cond_resched`, exists where preemption may be off (a kernel built without
    // it, or choosing it at boot or run time: PREEMPT_DYNAMIC). A kernel that always preempts
    // has neither, and needs neither.
    #[cfg(any(not(CONFIG_PREEMPTION), CONFIG_PREEMPT_DYNAMIC))]
    // SAFETY: `__cond_resched` may be called wherever sleeping is allowed: every caller runs in
    // process context (a system call, or a KUnit case) and holds no lock: between two holds of
    // the instance's, or where none is taken (making storage, the Linux baseline benches).
    unsafe {
        kernel::bindings::__cond_resched()
    };
}

/// Between two holds of a long call, or two chunks of an instance's storage: offers the CPU
/// ([`cond_resched`]), then tells whether a signal is pending (the call then ends: EINTR, or a
/// read with the records it has delivered).
pub(crate) fn between_holds() -> bool {
    cond_resched();
    signalled()
}

impl Instance {
    /// Installs the storage and clock for `params`; EBUSY if already configured.
    fn configure(&self, params: Params) -> Result {
        if self.core.state.lock().configured.is_some() {
            return Err(EBUSY);
        }
        // Allocate in process context, outside every lock: a large instance takes a while, and
        // the file's other callers (which take `clock` to arm) must not wait uninterruptibly.
        // A signal ends it between two chunks ([`UNDONE`]), nothing configured; memory that is not
        // there ends it at once (ENOMEM, `params::reserve`).
        let undone = |e| if e == EINTR { UNDONE } else { e };
        let callouts = params.callouts().map_err(undone)?;
        let ring = Ring::new(params.ring).map_err(undone)?;
        let clock = self.clock.lock();
        let old = {
            let mut st = self.core.state.lock();
            // Configured meanwhile: this storage is freed on return, after the locks.
            if st.configured.is_some() {
                return Err(EBUSY);
            }
            st.install(callouts, params, ring)
        };
        drop(old);
        drop(clock);
        // A periodic real clock ticks from the start; a tickless one waits for work.
        self.arm();
        Ok(())
    }

    /// Configures the defaults if nothing is configured yet (the first start on a fresh file).
    /// Callers check first what of their arguments can be checked without the instance: a call
    /// that fails on them configures nothing, and a later TW_IOC_CONFIGURE still may.
    fn ensure_configured(&self) -> Result {
        if self.core.state.lock().configured.is_some() {
            return Ok(());
        }
        match self.configure(Params::from_uapi(
            &tw_config::default(),
            crate::default_tick_ns(),
        )?) {
            // Somebody configured it meanwhile: fine.
            Err(e) if e == EBUSY => Ok(()),
            r => r,
        }
    }

    /// Arms the real clock's hrtimer for the next tick with work, if it is not armed for it
    /// (see `clock.rs`): armed later, it would be late; armed earlier (the callout it was armed
    /// for cancelled or pushed back), it would wake for nothing. Cancels it once nothing is left
    /// to wake for (the last callout cancelled).
    pub(crate) fn arm(&self) {
        if !self.core.hold(|st, work| st.armed_well(work)) {
            self.rearm();
        }
    }

    /// [`Instance::arm`] once the timer is known not to be armed as it should: cancels it and
    /// arms it afresh for the next tick with work, if any.
    fn rearm(&self) {
        let mut clock = self.clock.lock();
        // Cancel, waiting for a running callback: from here on nothing else arms the timer.
        drop(clock.take());
        let when = self.core.hold(|st, work| {
            st.tighten(work);
            let next = st.next_arm(work);
            st.armed = next;
            let time = st.configured.as_ref().map(|c| c.time);
            next.zip(time).map(|(t, time)| time.time_of(t))
        });
        if let Some(when) = when {
            *clock = Some(self.core.clone().start(when));
        }
    }

    /// Runs a start or reschedule `op` (which returns the handle it placed), finishing a
    /// placement that walks across holds (schemes 2 and 5) with the lock released in between;
    /// then arms the clock for it (whether it needs to is read in the operation's last hold). A
    /// signal during the walk cancels a start ([`UNDONE`], or EINTR if it fired meanwhile); it
    /// undoes a reschedule ([`UNDONE`], the callout back where it was, as it was, or due at once
    /// if its old deadline has come meanwhile). Should a scheme refuse the undo, the reschedule
    /// is finished instead.
    fn start_op(
        &self,
        is_start: bool,
        op: impl FnOnce(&mut State, &mut Work) -> Result<Handle>,
    ) -> Result<Handle> {
        // Only a placement that walks across holds needs the slow right, which keeps other
        // walks out meanwhile; the other schemes place a callout within one hold, as the
        // real clock's ticks run between any two, so their starts and resets wait for no long
        // operation on the file. The scheme is fixed once configured.
        let _slow = self.core.slow_for_placement()?;
        let (h, mut placing, mut armed_well) = self.core.hold(|st, work| {
            let r = op(st, work);
            let placing = st.placing();
            (r, placing, !placing && st.armed_well(work))
        });
        let h = h?;
        let mut undo = true;
        while placing {
            if between_holds() && undo {
                match is_start {
                    // One that fired meanwhile (its record is in the ring) has done something.
                    true => return Err(if self.cancel_new(h) { UNDONE } else { EINTR }),
                    false if self.core.hold(|st, _| st.abandon_reset()) => {
                        // Back on its old deadline, which the clock may since be armed past.
                        self.arm();
                        return Err(UNDONE);
                    }
                    // Refused: the reset goes on to its end.
                    false => undo = false,
                }
            }
            (placing, armed_well) = self.core.hold(|st, work| {
                let placed = st.place(work);
                (!placed, placed && st.armed_well(work))
            });
        }
        if !armed_well {
            self.rearm();
        }
        Ok(h)
    }

    fn ioctl_configure(&self, mut r: UserSliceReader) -> Result {
        let c: tw_config = r.read()?;
        self.configure(Params::from_uapi(&c, crate::default_tick_ns())?)
    }

    fn ioctl_set(&self, arg: usize, len: usize) -> Result {
        let mut req: tw_set = user_at(arg, len).reader().read()?;
        check_set(req.ticks, req.latest)?;
        let mut w = writable(arg, len, &req)?;
        self.ensure_configured()?;
        let h = self.start_op(true, |st, work| {
            st.set(req.ticks, req.latest, req.cookie, work)
        })?;
        req.handle = h.to_raw();
        self.write_back(&mut w, &req, h)
    }

    fn ioctl_timeout(&self, arg: usize, len: usize) -> Result {
        let mut req: tw_timeout = user_at(arg, len).reader().read()?;
        check_timeout(req.func, req.ticks, req.latest)?;
        let mut w = writable(arg, len, &req)?;
        self.ensure_configured()?;
        let h = self.start_op(true, |st, work| {
            st.timeout(req.func, req.arg, req.ticks, req.latest, work)
        })?;
        req.handle = h.to_raw();
        self.write_back(&mut w, &req, h)
    }

    /// Writes a new callout's handle back; if that fails (the request made read-only since
    /// [`writable`] found it writable), the callout is cancelled again, so
    /// that a bad pointer leaves nothing behind that its caller cannot name, and the clock,
    /// armed for it, is armed again for what is left (if anything). A callout that fired first
    /// (the real clock, or an ADVANCE from another thread) is not cancelled: its record is in
    /// the ring already.
    fn write_back<T: AsBytes>(&self, w: &mut UserSliceWriter, v: &T, h: Handle) -> Result {
        w.write(v).inspect_err(|_| {
            self.cancel_new(h);
        })
    }

    /// Cancels new callout `h` again (nothing if it fired meanwhile), and arms the clock for
    /// what is left: it may have been armed for `h` (a callback's search counts a callout
    /// still being placed, too).
    fn cancel_new(&self, h: Handle) -> bool {
        let cancelled = self.core.hold(|st, work| st.cancel_new(h, work));
        self.arm();
        cancelled
    }

    fn ioctl_unset(&self, mut r: UserSliceReader) -> Result {
        let h = Handle::from_raw(r.read()?);
        let early = self.core.hold(|st, work| st.unset_checking_arm(h, work))?;
        if early {
            self.rearm();
        }
        Ok(())
    }

    /// `untimeout`: the walk of a long hash chain (duplicates, or keys sharing a bucket) goes
    /// on over as many holds as it takes, and stops on a signal, cancelling nothing
    /// ([`UNDONE`]). Its walk is kept: the call made again goes on where it stopped
    /// ([`State::keep_untimeout`]), so that every time it runs it gets a hold further, unless
    /// a legacy callout of its key is armed, a sorted list's reset undone or the walk sent back
    /// to the chain's head in between.
    fn ioctl_untimeout(&self, mut r: UserSliceReader) -> Result {
        let req: tw_untimeout = r.read()?;
        // No user's key has function 0: not found, without waiting for the file.
        if req.func == 0 {
            return Err(ENOENT);
        }
        let _slow = self.core.slow()?;
        let task = kernel::current!().pid();
        let mut first = true;
        loop {
            let done = self.core.hold(|st, work| {
                if core::mem::take(&mut first) {
                    st.resume_untimeout(task, req.func, req.arg);
                }
                st.untimeout_checking_arm(req.func, req.arg, work)
            })?;
            if let Some(early) = done {
                if early {
                    self.rearm();
                }
                return Ok(());
            }
            if between_holds() {
                self.core
                    .hold(|st, _| st.keep_untimeout(task, req.func, req.arg));
                return Err(UNDONE);
            }
        }
    }

    fn ioctl_reset(&self, mut r: UserSliceReader) -> Result {
        let req: tw_reset = r.read()?;
        // A bad interval fails at once, before the call may wait for another long operation.
        check_set(req.ticks, req.latest)?;
        let h = Handle::from_raw(req.handle);
        self.start_op(false, |st, work| {
            st.reset(h, req.ticks, req.latest, work).map(|()| h)
        })
        .map(|_| ())
    }

    fn ioctl_query(&self, user: UserSlice) -> Result {
        let (mut r, mut w) = user.reader_writer();
        let mut q: tw_query = r.read()?;
        if q.reserved != 0 {
            return Err(EINVAL);
        }
        self.core.state.lock().query(&mut q);
        w.write(&q)
    }

    fn ioctl_advance(&self, mut r: UserSliceReader) -> Result {
        let n: u64 = r.read()?;
        // A bad count fails at once, and so does an instance on the real clock (a configuration
        // never changes); one not configured yet may be by the time no other long operation
        // runs, and the clock is read again then.
        let real = |st: &State| st.params().is_some_and(|p| p.clock != TW_CLOCK_MANUAL);
        if !(1..=TW_MAX_ADVANCE).contains(&n) || real(&self.core.state.lock()) {
            return Err(EINVAL);
        }
        let _slow = self.core.slow()?;
        let target = {
            let st = self.core.state.lock();
            match &st.configured {
                Some(c) if c.params.clock == TW_CLOCK_MANUAL => {
                    c.callouts.scheme().now().wrapping_add(n)
                }
                _ => return Err(EINVAL),
            }
        };
        loop {
            let done = self.core.hold(|st, work| st.run_to(target, None, work));
            if done {
                return Ok(());
            }
            if between_holds() {
                return Err(EINTR);
            }
        }
    }

    fn ioctl_batch(&self, mut r: UserSliceReader) -> Result {
        let b: tw_batch = r.read()?;
        if b.count == 0 || b.count > TW_MAX_BATCH || b.reserved != 0 {
            return Err(EINVAL);
        }
        let count = b.count as usize;
        // An address a 32-bit kernel cannot hold is no user address.
        let addr = usize::try_from(b.ops).map_err(|_| EFAULT)?;
        let len = count * core::mem::size_of::<tw_op>();
        let (mut r, mut w) = user_at(addr, len).reader_writer();
        // Read every operation once, before running any: a bad pointer runs nothing. The copy
        // is sized by the caller (up to TW_MAX_BATCH operations): charged to its memory cgroup.
        // One copy of the whole array: 65,536 copies of one operation each took some 0.25 s in
        // an emulated debug guest, with no look at pending signals.
        let mut ops = KVVec::from_elem(tw_op::default(), count, user_sized())?;
        r.read_slice(ops.as_mut_slice().as_bytes_mut())?;
        // And write them back as they are: an array the results cannot be written to (a
        // read-only mapping) runs nothing either, rather than callouts whose handles are lost.
        user_at(addr, len).writer().write_slice(ops.as_bytes())?;
        // A batch waiting for another's long operation has done nothing: a signal then
        // restarts it (ERESTARTSYS), as every other call waiting so.
        let slow = self.core.slow()?;
        // The defaults are configured for a batch with a start they can take; any other fails
        // alike without them, on an instance left unconfigured (see `op_configures`).
        if ops.iter().any(op_configures) {
            self.ensure_configured()?;
        }
        let interrupted = self.run_batch(&slow, &mut ops);
        self.arm();
        drop(slow);
        if let Err(e) = w.write_slice(ops.as_bytes()) {
            self.cancel_batch(&ops);
            return Err(e);
        }
        if interrupted {
            Err(EINTR)
        } else {
            Ok(())
        }
    }

    /// The results of a batch could not be written back (its array unmapped or protected since
    /// it was read, or written in part): the callouts it started anew, whose handles its caller
    /// may not have, are cancelled again, as a single call's are ([`Self::write_back`]), a
    /// reset's too (its old callout is cancelled already). A hold cancels as many as its work
    /// allows; the rest follow in the next, whatever signal comes, so that none is left behind.
    ///
    /// Each operation looked at under the lock is a unit of the hold's work, whether it made a
    /// callout or not: a batch of one set and 65,535 unsets would otherwise be scanned in one
    /// hold.
    fn cancel_batch(&self, ops: &[tw_op]) {
        let mut next = 0;
        while next < ops.len() {
            self.core.hold(|st, work| {
                while next < ops.len() && !work.is_spent() {
                    let op = &ops[next];
                    next += 1;
                    match op.result == 0 && matches!(op.op, TW_OP_SET | TW_OP_TIMEOUT | TW_OP_RESET)
                    {
                        true => {
                            st.cancel_new(Handle::from_raw(op.handle), work);
                        }
                        false => work.spend(1),
                    }
                }
            });
            cond_resched();
        }
        self.arm();
    }

    /// Runs a batch in holds, with the instance's slow right; returns whether a signal cut it
    /// short (the operations not run say -EINTR).
    fn run_batch(&self, _slow: &Slow<'_>, ops: &mut [tw_op]) -> bool {
        let mut next = 0;
        // A walk kept for a single `untimeout` is not the batch's to go on with: the first hold
        // drops it (so does a signal before it).
        let mut first = true;
        // The operation whose placement is still walking, if any.
        let mut placing: Option<usize> = None;
        // A signal came: no operation starts after the one placing ends.
        let mut stopping = false;
        while next < ops.len() || placing.is_some() {
            if between_holds() && !stopping {
                stopping = true;
                if let Some(i) = placing {
                    match ops[i].op {
                        // A start cut short leaves nothing.
                        TW_OP_SET | TW_OP_TIMEOUT => {
                            let h = Handle::from_raw(ops[i].handle);
                            self.core.hold(|st, work| st.cancel_new(h, work));
                            ops[i].result = EINTR.to_errno();
                            placing = None;
                        }
                        // Its old callout is cancelled already: the new one is placed to the
                        // end (a walk bounded by the callouts outstanding) and keeps its
                        // result, so that the callout is not lost.
                        TW_OP_RESET => {}
                        // A reschedule goes back where it was (due at once if its old deadline
                        // has come); if refused, it is placed to the end.
                        _ => {
                            if self.core.hold(|st, _| st.abandon_reset()) {
                                ops[i].result = EINTR.to_errno();
                                placing = None;
                            }
                        }
                    }
                }
            }
            if stopping && placing.is_none() {
                // An untimeout cut short cancels nothing.
                self.core.hold(|st, _| st.abandon_untimeout());
                for op in &mut ops[next..] {
                    op.result = EINTR.to_errno();
                }
                return true;
            }
            let late = self.core.hold(|st, work| {
                if core::mem::take(&mut first) {
                    st.abandon_untimeout();
                }
                // The earliest tick a callout started or moved in this hold is due on.
                let mut due = None;
                'ops: {
                    if let Some(i) = placing {
                        if !st.place(work) {
                            break 'ops;
                        }
                        placing = None;
                        due = st.earliest_due(due, Handle::from_raw(ops[i].handle));
                        if stopping {
                            break 'ops;
                        }
                    }
                    while next < ops.len() && !work.is_spent() {
                        let op = &mut ops[next];
                        if !st.run_op(op, work) {
                            // An untimeout's walk: the same operation goes on in the next hold.
                            break 'ops;
                        }
                        next += 1;
                        if st.placing() {
                            placing = Some(next - 1);
                            break 'ops;
                        }
                        if op.result == 0 && op_places(op) {
                            due = st.earliest_due(due, Handle::from_raw(op.handle));
                        }
                    }
                }
                due.is_some_and(|d| st.armed_late(d, work))
            });
            // The rest of the batch may hold the file for long: a callout it has started or
            // moved before the tick the real clock is armed for must not wait for its end.
            if late {
                self.rearm();
            }
        }
        // Every operation ran (a signal that came during the last one's placement, finished,
        // is delivered on the way out).
        false
    }

    fn ioctl_stats(&self, mut w: UserSliceWriter) -> Result {
        let s = self.core.state.lock().snapshot();
        w.write(&s)
    }

    /// `read(2)`: whole records, oldest first; blocks (interruptibly) until there is one, and ends
    /// early, with what it has delivered, on a signal.
    fn read(&self, nonblock: bool, iov: &mut IovIterDest<'_>) -> Result<usize> {
        /// Records moved out of the ring per hold: the copy to user space happens outside it.
        const CHUNK: usize = 16;
        let want = iov.len() / RECORD;
        if want == 0 {
            return Err(EINVAL);
        }
        let mut buf = [tw_fired::default(); CHUNK];
        let mut total = 0;
        // Whether this reader saw records left in the ring when it last held the lock.
        let mut more = false;
        while total < want {
            let n = {
                let mut st = self.core.state.lock();
                if total == 0 {
                    while st.ring.is_empty() {
                        if nonblock {
                            return Err(EAGAIN);
                        }
                        if self.core.readable.wait_interruptible(&mut st) {
                            // The wake-up of a record may have come to this reader: the next
                            // one has it, should the record still be there.
                            let more = !st.ring.is_empty();
                            drop(st);
                            if more {
                                self.core.readable.notify_one();
                            }
                            return Err(ERESTARTSYS);
                        }
                    }
                }
                let n = st.ring.take(&mut buf[..CHUNK.min(want - total)]);
                more = !st.ring.is_empty();
                n
            };
            if n == 0 {
                break;
            }
            let mut copied = 0;
            while copied < n && iov.copy_to_iter(buf[copied].as_bytes()) == RECORD {
                copied += 1;
            }
            total += copied;
            if copied < n {
                // The copy faulted: the records not delivered go back for another reader.
                let mut st = self.core.state.lock();
                let lost = st.ring.put_back(&buf[copied..n]);
                st.stats.ring_drops += lost as u64;
                more = !st.ring.is_empty();
                break;
            }
            // A read of a million records is a long call too: it offers the CPU between chunks,
            // and a signal ends it with the records already delivered, as `read(2)` of
            // `/dev/zero` ends (never EINTR once a record is out: a stream of signals slows a
            // reader down, never stops it).
            if total < want && between_holds() {
                break;
            }
        }
        // Readers wait exclusively and a notification wakes one: a reader that leaves records in
        // the ring, however it leaves, wakes the next (another may have gone to sleep on the ring
        // this one emptied, before records were put back or came).
        if more {
            self.core.readable.notify_one();
        }
        if total == 0 {
            return Err(EFAULT);
        }
        Ok(total * RECORD)
    }
}

/// The argument of an ioctl: `len` bytes at user address `arg`.
fn user_at(arg: usize, len: usize) -> UserSlice {
    UserSlice::new(UserPtr::from_addr(arg), len)
}

/// A writer for the result of a call that starts a callout, once `req`, read from there, has
/// been written back unchanged: a request the handle cannot be written to (a read-only mapping)
/// fails with EFAULT before anything is set or configured, as a batch whose array cannot be
/// written runs nothing.
fn writable<T: AsBytes>(arg: usize, len: usize, req: &T) -> Result<UserSliceWriter> {
    user_at(arg, len).writer().write(req)?;
    Ok(user_at(arg, len).writer())
}

/// `TW_IOC_INFO`.
fn ioctl_info(mut w: UserSliceWriter) -> Result {
    let poll = if cfg!(tw_misc_poll) {
        TW_FEATURE_POLL
    } else {
        0
    };
    let no_oom_kill = if cfg!(tw_gfp_retry_mayfail) {
        TW_FEATURE_NO_OOM_KILL
    } else {
        0
    };
    let nowait = if cfg!(tw_fmode_nowait) {
        TW_FEATURE_NOWAIT
    } else {
        0
    };
    let info = tw_info {
        version: TW_VERSION,
        schemes: SchemeKind::ALL.iter().fold(0, |m, k| m | 1 << (*k as u32)),
        features: poll | no_oom_kill | nowait | TW_FEATURE_TICKLESS | TW_FEATURE_RANGE,
        hold_work: crate::hold_work() as u32,
        instances: crate::INSTANCES.load(ordering::Relaxed),
        uptime_ns: crate::uptime_ns(),
        // There is no Rust abstraction for `timer_list` in this kernel (glue/baselines.rs calls
        // its C API through `bindings`): its size, and the hrtimer's beside it, come from the
        // bindings generated for the running kernel's configuration.
        timer_list_bytes: core::mem::size_of::<kernel::bindings::timer_list>() as u32,
        hrtimer_bytes: core::mem::size_of::<kernel::bindings::hrtimer>() as u32,
        tick_ns: crate::default_tick_ns(),
    };
    w.write(&info)
}

/// The `MiscDevice` implementation; `$($extra)*` adds the hooks the kernel may lack.
macro_rules! misc_device {
    ($($extra:item)*) => {
        #[vtable]
        impl MiscDevice for Instance {
            type Ptr = Pin<KBox<Self>>;

            fn open(file: &File, _misc: &MiscDeviceRegistration<Self>) -> Result<Pin<KBox<Self>>> {
                // An instance's memory is charged to the memory cgroup of the process that
                // opens it, as its storage is (`params::user_sized`); all but its poll wait
                // queue, some 100 bytes the kernel crate's `PollCondVarBox::new` allocates with
                // GFP_KERNEL and takes no flags for.
                let readable = PollCondVarBox::new(
                    kernel::c_str!("timerwheel_readable"),
                    kernel::static_lock_class!(),
                )?;
                let core = Arc::pin_init(
                    try_pin_init!(Core {
                        timer <- HrTimer::new(),
                        state <- new_spinlock_irq!(State::new(), "timerwheel_state"),
                        readable,
                        slow_free <- new_condvar!("timerwheel_slow_free"),
                        hold_work: crate::hold_work(),
                    }),
                    GFP_KERNEL_ACCOUNT,
                )?;
                let me = KBox::try_pin_init(
                    try_pin_init!(Instance {
                        clock <- new_mutex!(None, "timerwheel_clock"),
                        core,
                    }),
                    GFP_KERNEL_ACCOUNT,
                )?;
                // A stream of records, as a pipe is: no file position, and pread(2), pwrite(2)
                // and lseek(2) fail with ESPIPE rather than ignore an offset. C's
                // `stream_open()`; the kernel crate's miscdevice calls `generic_file_open` only,
                // and has no call for it. And, as a pipe's, reads that honour `IOCB_NOWAIT`
                // (`read_iter`), which `FMODE_NOWAIT` says: preadv2(2) with `RWF_NOWAIT` then
                // returns EAGAIN rather than wait, where without it the call fails (EOPNOTSUPP).
                let raw = file.as_ptr();
                // SAFETY: `raw` is the file being opened, valid for this call, and no other
                // thread has it yet (its descriptor is installed after `open` returns), so its
                // `f_mode` may change; its `f_inode` is set before `open` is called.
                unsafe {
                    kernel::bindings::stream_open((*raw).f_inode, raw);
                    #[cfg(tw_fmode_nowait)]
                    {
                        (*raw).f_mode |= FMODE_NOWAIT;
                    }
                }
                crate::INSTANCES.add(1, ordering::Relaxed);
                Ok(me)
            }

            fn release(device: Self::Ptr, _file: &File) {
                drop(device);
                crate::INSTANCES.fetch_sub(1u64, ordering::Relaxed);
            }

            // No `compat_ioctl`: the kernel crate then installs `compat_ptr_ioctl`, which passes
            // a 32-bit process's calls here with the pointer widened. Every structure of the uapi
            // has one layout, and so one ioctl number, in both ABIs (fixed-width fields, the 64-bit
            // ones 8-byte aligned, user pointers as `__u64`); `selftests/timerwheel_compat.sh`
            // runs the facility's kselftest as a 32-bit program.
            fn ioctl(me: Pin<&Instance>, _file: &File, cmd: u32, arg: usize) -> Result<isize> {
                let user = user_at(arg, _IOC_SIZE(cmd));
                match cmd {
                    TW_IOC_INFO => ioctl_info(user.writer()),
                    TW_IOC_CONFIGURE => me.ioctl_configure(user.reader()),
                    TW_IOC_SETCALLOUT => me.ioctl_set(arg, _IOC_SIZE(cmd)),
                    TW_IOC_UNSETCALLOUT => me.ioctl_unset(user.reader()),
                    TW_IOC_TIMEOUT => me.ioctl_timeout(arg, _IOC_SIZE(cmd)),
                    TW_IOC_UNTIMEOUT => me.ioctl_untimeout(user.reader()),
                    TW_IOC_ADVANCE => me.ioctl_advance(user.reader()),
                    TW_IOC_BATCH => me.ioctl_batch(user.reader()),
                    TW_IOC_STATS => me.ioctl_stats(user.writer()),
                    TW_IOC_BENCH => me.ioctl_bench(user),
                    TW_IOC_BENCH_PAIR => me.ioctl_bench_pair(user),
                    TW_IOC_RESET => me.ioctl_reset(user.reader()),
                    TW_IOC_QUERY => me.ioctl_query(user),
                    _ => Err(ENOTTY),
                }
                .map(|()| 0)
            }

            fn read_iter(kiocb: Kiocb<'_, Self::Ptr>, iov: &mut IovIterDest<'_>) -> Result<usize> {
                // The `Kiocb` abstraction does not expose the file, and its flags (O_NONBLOCK,
                // changeable by fcntl) must be read now: READ_ONCE of `f_flags`, as the kernel
                // crate's own `File::flags` does.
                //
                // SAFETY: `kiocb.as_raw()` is the live kiocb of this read; its `ki_filp` is the
                // file being read, which the VFS holds a reference to for the whole call, so both
                // pointers are valid here, and `f_flags` is a plain integer read whole.
                let flags = unsafe {
                    core::ptr::addr_of!((*(*kiocb.as_raw()).ki_filp).f_flags).read_volatile()
                };
                // SAFETY: `kiocb.as_raw()` is the live kiocb of this read, which its issuer set up
                // before the call and does not change during it.
                let ki_flags = unsafe { (*kiocb.as_raw()).ki_flags };
                // A read that must not wait: the file's O_NONBLOCK, or the kiocb's IOCB_NOWAIT
                // (preadv2(2) with RWF_NOWAIT, and io_uring's first attempt, which on EAGAIN
                // waits for poll instead of a sleep here).
                let nonblock = flags & O_NONBLOCK != 0 || ki_flags & IOCB_NOWAIT != 0;
                kiocb.file().read(nonblock, iov)
            }

            fn show_fdinfo(me: Pin<&Instance>, m: &SeqFile, _file: &File) {
                let s = me.core.state.lock().snapshot();
                // `flags` as `config_flags`: the kernel's own lines before these have a `flags`,
                // the file's open flags.
                let fields = [
                    ("scheme", s.scheme),
                    ("config_flags", s.flags),
                    ("outstanding", s.outstanding),
                    ("started", s.started),
                    ("stopped", s.stopped),
                    ("fired", s.fired),
                    ("now", s.now),
                    ("ticks", s.ticks),
                    ("skipped", s.skipped),
                    ("wakeups", s.wakeups),
                    ("overruns", s.overruns),
                    ("carried", s.carried),
                    ("queued", s.queued),
                    ("ring_used", s.ring_used),
                    ("ring_drops", s.ring_drops),
                    ("holds", s.holds),
                    ("max_hold_work", s.max_hold_work),
                    ("max_hold_ns", s.max_hold_ns),
                    ("max_tick_work", s.max_tick_work),
                    ("memory_bytes", s.memory_bytes),
                ];
                for (k, v) in fields {
                    seq_print!(m, "{}: {}\n", k, v);
                }
            }

            $($extra)*
        }
    };
}

// Poll for Rust misc devices is a kernel patch of this project (scripts/kernel-patches/);
// Kbuild sets `tw_misc_poll` where the kernel has it. Without it the file has no poll hook:
// poll and select see it as always readable, as any file without one, and `epoll_ctl` refuses
// it (EPERM).
#[cfg(tw_misc_poll)]
misc_device! {
    fn poll(me: Pin<&Instance>, file: &File, table: &kernel::sync::poll::PollTable<'_>) -> u32 {
        table.register_wait(file, &me.core.readable);
        if me.core.state.lock().ring.is_empty() {
            0
        } else {
            kernel::bindings::POLLIN | kernel::bindings::POLLRDNORM
        }
    }
}

#[cfg(not(tw_misc_poll))]
misc_device! {}
