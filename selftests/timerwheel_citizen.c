// SPDX-License-Identifier: GPL-2.0
/*
 * The module as a kernel citizen: the clock and the locks (uapi v4), kselftest_harness style.
 *
 *   hostile    the worst geometries the uapi accepts, on the real clock at TW_MIN_TICK_NS,
 *              while another instance and a shell command work: bounded holds, overruns
 *   idle       tickless: no hrtimer while nothing is outstanding; a far callout costs at most
 *              two wakeups and fires on time, never early, also after idling; a thousand far
 *              callouts cost none; cancelling or pushing back the next callout costs none
 *              (one variant per scheme, and scheme 5 on 256 slots, every one busy with
 *              callouts more than a turn away)
 *   readers    several readers of one file, a record wakes one blocked reader (and each the
 *              next while records are left), a reader blocked across close and signals,
 *              O_NONBLOCK beside a blocked reader, a long read ended early by signals;
 *              instances beyond the machine's memory, made one after another or by 32
 *              threads at once, fail with ENOMEM, killing nothing
 *   hotplug    the real clock fires every callout once, never early, while a CPU goes offline
 *              and online again and again (one variant per scheme)
 *   poll       poll and epoll (level and edge) readiness, and io_uring's reads (one variant per
 *              scheme)
 *   interrupt  a signal ends BATCH, BENCH and ADVANCE on a slow geometry promptly, and the
 *              Linux baselines' BENCH while their timers are made, and once they are made
 *              without waiting for their teardown (the next bench waits for that, answering
 *              signals; the bound a fraction of the same timers' bench); it undoes a RESET, and
 *              loses no callout of a batch of resets; a set and a reset on schemes 1 and 6
 *              wait for no ADVANCE, nor do bad arguments beside it, nor bad resets beside a
 *              batch on schemes 2 and 5; a batch whose results cannot be written back leaves
 *              no callout behind
 *   citizen    failed first calls leave an instance unconfigured, and so does a signal during
 *              the CONFIGURE of the largest instance (EINTR); untimeout of thousands of
 *              duplicates in bounded holds, and while another thread resets one of them;
 *              fdinfo; reset in place, ranges and queries (one variant per scheme)
 *   arming     a callout a long batch sets fires while the batch runs (the idle variants);
 *              calls on an instance whose clock is behind wake it once a period at most
 *
 * Needs the module loaded; every test skips when /dev/timerwheel is missing. No bound below
 * depends on the machine's speed: the work is sized in entries (seconds under an emulator),
 * the time bounds are seconds where microseconds are expected, and every measured time is
 * printed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/io_uring.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tw_util.h"

#define MS 1000000ULL
/*
 * The longest a call may take to answer where it should take microseconds: long enough for an
 * emulated guest (TCG, KASAN, lockdep) on a loaded host, whose vCPUs may stall for seconds, to
 * meet it; what it catches is a call that does not answer at all until its whole work is done
 * (minutes here). The bounds that do not depend on speed are counted in entries (max_hold_work).
 */
#define PROMPT_NS (30000 * MS)

/* Waits (up to PROMPT_NS) for `ok`; returns it. */
#define WAIT_FOR(ok)                                                  \
	({                                                            \
		__u64 t0_ = now_ns();                                 \
		while (!(ok) && now_ns() - t0_ < PROMPT_NS)           \
			usleep(1000);                                 \
		(ok);                                                 \
	})

static __u32 features(struct __test_metadata *_metadata, int fd)
{
	struct tw_info info;

	ASSERT_EQ(0, get_info(fd, &info));
	return info.features;
}

static void on_signal(int sig)
{
	(void)sig;
}

/* A handler without SA_RESTART, so that a blocked call returns EINTR. */
static int catch_signal(int sig)
{
	struct sigaction sa = { .sa_handler = on_signal };

	return sigaction(sig, &sa, NULL);
}

/* Sends `sig` to `target` again and again until `done`: a signal is pending at every moment. */
struct flood {
	pthread_t target;
	int sig;
	atomic_int done;
	atomic_ulong sent;
};

static void *flooder(void *arg)
{
	struct flood *f = arg;

	while (!atomic_load(&f->done)) {
		pthread_kill(f->target, f->sig);
		atomic_fetch_add(&f->sent, 1);
	}
	return NULL;
}

/*
 * Starts a flooder in *t, and returns once it has sent its first signal: a call made after it is
 * under way has signals coming (0, or an errno of pthread_create()).
 */
static int start_flood(pthread_t *t, struct flood *f)
{
	int err = pthread_create(t, NULL, flooder, f);

	while (!err && !atomic_load(&f->sent))
		sched_yield();
	return err;
}

/* The value of `key` in the file at `path` of "key: value" or "key:\tvalue" lines, or -1. */
static long long key_value(const char *path, const char *key)
{
	char line[256];
	size_t len = strlen(key);
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ':')
			v = strtoll(line + len + 1, NULL, 0);
	fclose(f);
	return v;
}

/*
 * CONFIGURE `c`, or with `fewest`, with the fewest slots the scheme accepts (a wheel of 1, 2,
 * 4... slots, left in c->slots). Returns 0 or -1 as the ioctl does.
 */
static int configure_slots(struct __test_metadata *_metadata, int fd, struct tw_config *c,
			   int fewest)
{
	if (!fewest)
		return ioctl(fd, TW_IOC_CONFIGURE, c);
	for (c->slots = 1; c->slots <= TW_MAX_SLOTS; c->slots <<= 1) {
		if (!ioctl(fd, TW_IOC_CONFIGURE, c))
			return 0;
		EXPECT_EQ(EINVAL, errno) TH_LOG("slots %u: %s", c->slots, strerror(errno));
	}
	return -1;
}

/*
 * Fills `fd` with `n` callouts, the i-th due `far - i * step` ticks from now: each the earliest
 * so far, as long as the clock advances less than `step` ticks between two of them (on the
 * real clock, choose a step no stall can reach: were the clock to outrun the steps, the
 * deadlines would ascend and every start of a sorted list would walk all of it).
 */
static void fill_descending(struct __test_metadata *_metadata, int fd, __u64 n, __u64 far,
			    __u64 step)
{
	enum { CHUNK = TW_MAX_BATCH };
	struct tw_op *ops = calloc(CHUNK, sizeof(*ops));
	struct tw_batch b = { .ops = (uintptr_t)ops };
	__u64 k, i;

	ASSERT_TRUE(ops != NULL);
	for (k = 0; k < n; k += b.count) {
		b.count = n - k < CHUNK ? n - k : CHUNK;
		for (i = 0; i < b.count; i++)
			ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = far - (k + i) * step,
						 .b = k + i };
		ASSERT_EQ(0, ioctl(fd, TW_IOC_BATCH, &b)) TH_LOG("batch at %llu: %s", k,
								   strerror(errno));
		for (i = 0; i < b.count; i++) {
			ASSERT_EQ(0, ops[i].result) TH_LOG("op %llu", k + i);
		}
	}
	free(ops);
}

/* ---- Hostile geometry on the real clock ---------------------------------------------------- */

/*
 * Each variant is a configuration the uapi accepts and that costs the instance the most work:
 *
 *   scheme1_max         scheme 1 at TW_MAX_CAPACITY_SCHEME1: every tick decrements every counter
 *   scheme2_1e6         the sorted list with 10^6 callouts (the fill descends: each new callout
 *                       is the earliest, placed at the head in O(1); ascending deadlines would
 *                       walk the whole list each time, O(n^2) in all)
 *   scheme5_min_slots   the hashed wheel with sorted lists, as few slots as it accepts: one
 *                       sorted list (filled descending, as scheme 2)
 *   scheme6_min_slots   the hashed wheel with unsorted lists, as few slots as it accepts: every
 *                       tick visits the one slot that holds all 10^6 callouts
 *
 * all at the shortest period, TW_MIN_TICK_NS, and periodic (TW_CONFIG_PERIODIC: every tick's
 * bookkeeping runs; a tickless instance would sleep until its far deadlines). The deadlines are
 * far away: nothing fires. The bookkeeping of one tick of schemes 1 and 6 here visits 65536 or
 * 10^6 entries, more than one hrtimer callback may do (a few holds of hold_work entries), so
 * it spans several periods on any machine and their overruns must be counted; schemes 2 and 5
 * tick in O(1).
 */
FIXTURE(hostile)
{
	int fd, other;
};

FIXTURE_VARIANT(hostile)
{
	__u32 scheme;
	__u32 capacity;
	int min_slots; /* find the fewest slots CONFIGURE accepts */
	int expect_overruns;
};

FIXTURE_VARIANT_ADD(hostile, scheme1_max) {
	.scheme = 1, .capacity = TW_MAX_CAPACITY_SCHEME1, .expect_overruns = 1,
};
FIXTURE_VARIANT_ADD(hostile, scheme2_1e6) { .scheme = 2, .capacity = 1000000 };
FIXTURE_VARIANT_ADD(hostile, scheme5_min_slots) {
	.scheme = 5, .capacity = 1000000, .min_slots = 1,
};
FIXTURE_VARIANT_ADD(hostile, scheme6_min_slots) {
	.scheme = 6, .capacity = 1000000, .min_slots = 1, .expect_overruns = 1,
};

FIXTURE_SETUP(hostile)
{
	self->other = -1;
	self->fd = tw_open(_metadata);
	if (self->fd >= 0)
		self->other = tw_open(_metadata);
}

FIXTURE_TEARDOWN(hostile)
{
	__u64 t0 = now_ns();

	if (self->fd >= 0)
		close(self->fd);
	if (self->other >= 0)
		close(self->other);
	TH_LOG("close with everything outstanding: %llu ms", (now_ns() - t0) / MS);
}

struct other_fd {
	int fd;
	atomic_int stop;
	__u64 rounds, max_ns, errors;
	int first_errno;
	const char *first_op;
};

static void other_fd_error(struct other_fd *o, const char *op)
{
	if (!o->errors++) {
		o->first_errno = errno;
		o->first_op = op;
	}
}

/* The second instance: set, unset and stats in a loop, timing each call. */
static void *other_fd_loop(void *arg)
{
	struct other_fd *o = arg;
	struct tw_stats st;
	__u64 h;

	while (!atomic_load(&o->stop)) {
		__u64 t0 = now_ns(), dt;

		/* Far enough (about 12 days) that the callout is still there to unset. */
		if (set_callout(o->fd, 1ULL << 30, o->rounds, &h))
			other_fd_error(o, "set");
		else if (unset_callout(o->fd, h))
			other_fd_error(o, "unset");
		if (get_stats(o->fd, &st))
			other_fd_error(o, "stats");
		dt = now_ns() - t0;
		o->max_ns = dt > o->max_ns ? dt : o->max_ns;
		__atomic_fetch_add(&o->rounds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

TEST_F_TIMEOUT(hostile, other_work_goes_on_and_holds_stay_bounded, 900)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_REAL,
			       .capacity = variant->capacity, .tick_ns = TW_MIN_TICK_NS,
			       .flags = TW_CONFIG_PERIODIC };
	struct other_fd o = { .fd = self->other };
	struct tw_config oc = { .scheme = TW_SCHEME_HIERARCHICAL, .clock = TW_CLOCK_REAL };
	struct tw_stats st, ost;
	struct tw_info info;
	__u64 t0, t_cfg, t_fill, t_cmd, t_end, rounds_before;
	pthread_t t;
	int ret;

	if (self->fd < 0 || self->other < 0)
		return;
	ASSERT_EQ(0, get_info(self->fd, &info));
	/* The clock starts inside CONFIGURE: tick k comes no sooner than k periods after t_cfg. */
	t_cfg = now_ns();
	ASSERT_EQ(0, configure_slots(_metadata, self->fd, &c, variant->min_slots))
		TH_LOG("configure: %s", strerror(errno));
	if (variant->min_slots)
		TH_LOG("scheme %u takes %u slot(s) at the fewest", c.scheme, c.slots);
	ASSERT_EQ(0, ioctl(self->other, TW_IOC_CONFIGURE, &oc));
	ASSERT_EQ(0, pthread_create(&t, NULL, other_fd_loop, &o));

	/*
	 * Far enough that nothing fires (2^50 periods of 100 us are millions of years), 2^20
	 * ticks (105 s) apart: the clock cannot pass one callout's deadline before the next.
	 */
	t0 = now_ns();
	fill_descending(_metadata, self->fd, variant->capacity, 1ULL << 50, 1ULL << 20);
	t_fill = now_ns() - t0;

	/*
	 * With everything outstanding and the clock running: the other fd, and a shell. The other
	 * fd's rounds go on: one more within PROMPT_NS (a round takes microseconds).
	 */
	rounds_before = __atomic_load_n(&o.rounds, __ATOMIC_RELAXED);
	t0 = now_ns();
	ret = system("cat /proc/self/stat >/dev/null && sleep 2");
	t_cmd = now_ns() - t0;
	EXPECT_EQ(0, ret) TH_LOG("the shell command failed: %d", ret);
	EXPECT_TRUE(WAIT_FOR(__atomic_load_n(&o.rounds, __ATOMIC_RELAXED) > rounds_before))
		TH_LOG("the other fd made no progress");

	atomic_store(&o.stop, 1);
	pthread_join(t, NULL);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	t_end = now_ns();
	ASSERT_EQ(0, get_stats(self->other, &ost));

	TH_LOG("fill of %u: %llu ms; shell command: %llu ms; other fd: %llu rounds, slowest %llu us, "
	       "%llu errors", variant->capacity, t_fill / MS, t_cmd / MS, o.rounds,
	       o.max_ns / 1000, o.errors);
	TH_LOG("instance: now %llu, ticks %llu, skipped %llu, wakeups %llu, overruns %llu, holds "
	       "%llu, max_hold_work %llu (limit %u), max_hold_ns %llu",
	       st.now, st.ticks, st.skipped, st.wakeups, st.overruns, st.holds, st.max_hold_work,
	       info.hold_work, st.max_hold_ns);

	EXPECT_EQ(variant->capacity, st.outstanding);
	EXPECT_EQ(0, st.fired);
	/* Behind the real clock under overload, never ahead of it. */
	EXPECT_GE((t_end - t_cfg) / TW_MIN_TICK_NS + 1, st.now)
		TH_LOG("the instance stands on tick %llu after %llu periods", st.now,
		       (t_end - t_cfg) / TW_MIN_TICK_NS);
	EXPECT_EQ(0, o.errors) TH_LOG("first: %s, %s", o.first_op, strerror(o.first_errno));
	EXPECT_GT(PROMPT_NS, o.max_ns) TH_LOG("the other fd waited %llu ms", o.max_ns / MS);
	EXPECT_GE(info.hold_work, st.max_hold_work);
	EXPECT_GE(info.hold_work, ost.max_hold_work);
	EXPECT_LT(0, st.holds);
	/*
	 * The clock's catch-up does not hold up the fill: a start leaves it to the callback while
	 * that is behind, so a batch sets many callouts a hold. Of the instance's holds, the
	 * callback's are at most five a wakeup (CALLBACK_HOLDS and a search); the rest, the
	 * fill's, stay under one for every two callouts.
	 */
	EXPECT_GT(variant->capacity / 2 + 5 * st.wakeups, st.holds)
		TH_LOG("%llu holds for %u callouts and %llu wakeups", st.holds, variant->capacity,
		       st.wakeups);
	if (variant->expect_overruns)
		EXPECT_LT(0, st.overruns) TH_LOG("a tick that cannot fit in a period must overrun");
}

/* ---- Idle: the tickless clock ---------------------------------------------------------------- */

/*
 * One callout IDLE_TICKS periods of 1 ms ahead costs at most two wakeups of the instance's
 * hrtimer, whatever the scheme: one for its tick, one of slack. Scheme 4 gets a MaxInterval
 * beyond it, scheme 5 enough slots for it to lie within one turn; scheme 6 keeps the default
 * 256, 39 turns short of it, which its next work sees through the bounds of its groups of 64
 * slots (wheel/src/wheel/scheme6.rs). Scheme 1, whose paper tick decrements every counter,
 * keeps a lower bound of its earliest deadline for the tickless clock (scheme1.rs); scheme 7
 * sleeps until the first busy list's lowest tick and migrates there. max_wakeups is per
 * variant so that a scheme that cannot skip says so here: 0 would allow one per period.
 */
#define IDLE_TICKS 10000

FIXTURE(clock)
{
	int fd;
};

FIXTURE_VARIANT(clock)
{
	__u32 scheme;
	__u32 slots;
	__u64 max_wakeups; /* for one callout IDLE_TICKS ahead; 0: one per period */
};

FIXTURE_VARIANT_ADD(clock, scheme1_straightforward) { .scheme = 1, .max_wakeups = 2 };
FIXTURE_VARIANT_ADD(clock, scheme2_ordered_list) { .scheme = 2, .max_wakeups = 2 };
FIXTURE_VARIANT_ADD(clock, scheme3_heap) { .scheme = 3, .max_wakeups = 2 };
FIXTURE_VARIANT_ADD(clock, scheme4_basic_wheel) {
	.scheme = 4, .slots = 16384, .max_wakeups = 2,
};
FIXTURE_VARIANT_ADD(clock, scheme5_hashed_sorted) {
	.scheme = 5, .slots = 16384, .max_wakeups = 2,
};
/* 256 slots: a thousand far callouts fill every slot, more than a turn away, more busy slots
 * than a hold's search for the next tick looks at. */
FIXTURE_VARIANT_ADD(clock, scheme5_256_slots) { .scheme = 5, .slots = 256, .max_wakeups = 2 };
FIXTURE_VARIANT_ADD(clock, scheme6_hashed_unsorted) { .scheme = 6, .max_wakeups = 2 };
FIXTURE_VARIANT_ADD(clock, scheme7_hierarchical) { .scheme = 7, .max_wakeups = 2 };

FIXTURE_SETUP(clock)
{
	self->fd = tw_open(_metadata);
	if (self->fd >= 0 && !(features(_metadata, self->fd) & TW_FEATURE_TICKLESS))
		TW_SKIP(return, "the module's clock is not tickless (no TW_FEATURE_TICKLESS)");
}

FIXTURE_TEARDOWN(clock)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int query(int fd, __u64 handle, struct tw_query *q)
{
	*q = (struct tw_query){ .handle = handle };
	return ioctl(fd, TW_IOC_QUERY, q);
}

static int configure_real(int fd, __u32 scheme, __u32 slots, __u64 tick_ns)
{
	struct tw_config c = { .scheme = scheme, .clock = TW_CLOCK_REAL, .slots = slots,
			       .tick_ns = tick_ns, .capacity = 1024 };

	return ioctl(fd, TW_IOC_CONFIGURE, &c);
}

TEST_F_TIMEOUT(clock, nothing_outstanding_arms_no_hrtimer, 60)
{
	struct tw_stats st;
	struct tw_set *req;
	__u64 h;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_real(self->fd, variant->scheme, variant->slots, 1 * MS));
	usleep(1000 * 1000);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.wakeups) TH_LOG("an idle instance woke %llu times in 1 s", st.wakeups);
	/* The same after its only callout is cancelled: the timer armed for it is cancelled too. */
	ASSERT_EQ(0, set_callout(self->fd, 500, 1, &h));
	if (unset_callout(self->fd, h)) {
		ASSERT_EQ(ENOENT, errno) TH_LOG("unset: %s", strerror(errno));
		ASSERT_EQ(0, get_stats(self->fd, &st));
		ASSERT_EQ(1, st.fired) TH_LOG("the unset found no callout, and none fired");
		TW_SKIP(return, "the guest stalled 500 ms between a set and its unset: it fired "
			"first");
	}
	usleep(1000 * 1000);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.wakeups) TH_LOG("woke %llu times with nothing outstanding", st.wakeups);
	EXPECT_EQ(0, st.fired);
	/*
	 * And after a set whose handle could not be written back (EFAULT: the request is read
	 * from a page the kernel may not write): nothing is left outstanding, and no timer armed.
	 */
	req = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(req != MAP_FAILED);
	*req = (struct tw_set){ .ticks = 500, .cookie = 2 };
	ASSERT_EQ(0, mprotect(req, 4096, PROT_READ));
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_SETCALLOUT, req));
	EXPECT_EQ(EFAULT, errno);
	usleep(1000 * 1000);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.outstanding);
	EXPECT_EQ(0, st.wakeups) TH_LOG("woke %llu times after a set that failed", st.wakeups);
	EXPECT_EQ(0, st.fired);
	munmap(req, 4096);
}

TEST_F_TIMEOUT(clock, one_far_callout_costs_few_wakeups_and_fires_on_time, 120)
{
	struct tw_fired rec;
	struct tw_stats st;
	__u64 t0, t, due_ns, bound;

	if (self->fd < 0)
		return;
	/* The clock starts inside CONFIGURE: tick d comes no sooner than d ms after t0. */
	t0 = now_ns();
	ASSERT_EQ(0, configure_real(self->fd, variant->scheme, variant->slots, 1 * MS));
	ASSERT_EQ(0, set_callout(self->fd, IDLE_TICKS, 7, NULL));
	alarm(IDLE_TICKS / 1000 + 60);
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec))) TH_LOG("read: %s",
									   strerror(errno));
	t = now_ns();
	alarm(0);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	due_ns = rec.deadline * MS;
	TH_LOG("deadline tick %llu processed on tick %llu; read %lld us after the deadline; "
	       "%llu wakeups, %llu ticks run, %llu skipped",
	       rec.deadline, rec.fired, (long long)(t - t0 - due_ns) / 1000, st.wakeups, st.ticks,
	       st.skipped);
	EXPECT_EQ(7, rec.cookie);
	EXPECT_LE(IDLE_TICKS, rec.deadline);
	EXPECT_LE(rec.deadline, rec.fired); /* a late wakeup may process it on a later tick */
	EXPECT_LE(due_ns, t - t0) TH_LOG("fired early");
	EXPECT_GT(due_ns + PROMPT_NS, t - t0) TH_LOG("fired %llu ms late", (t - t0 - due_ns) / MS);
	bound = variant->max_wakeups ? variant->max_wakeups : (t - t0) / MS + 1;
	EXPECT_GE(bound, st.wakeups);
	EXPECT_LE(1, st.wakeups);
}

/*
 * The hrtimer is armed for the very tick a callout is due on: on a 100 ms clock, a callout a
 * few ticks ahead is processed on its deadline tick, not the next, unless the wakeup came a
 * whole tick late. Tried up to TRIES times, once on time is enough; a try whose wakeup came a
 * period late or more (the guest stalled: tw_stats.overruns grew) does not count, and a test
 * whose every try stalled is skipped. Armed a tick late, the callout is never on time, and its
 * wakeup is: no overrun. And QUERY's `now` is the real clock's tick, which goes on while the
 * instance idles with nothing due soon (the scheme's own tick stays where its last wakeup left
 * it).
 */
TEST_F_TIMEOUT(clock, a_callout_is_processed_on_the_tick_it_is_due, 120)
{
	enum { TRIES = 5, MAX_TRIES = 15, AHEAD = 3, FAR = 1000 };
	struct tw_query q0, q;
	struct tw_fired rec;
	struct tw_stats st;
	int i, counted = 0, on_time = 0;
	__u64 h, overruns;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_real(self->fd, variant->scheme, variant->slots, 100 * MS));
	for (i = 0; i < MAX_TRIES && counted < TRIES && !on_time; i++) {
		ASSERT_EQ(0, get_stats(self->fd, &st));
		overruns = st.overruns;
		ASSERT_EQ(0, set_callout(self->fd, AHEAD, i, NULL));
		alarm(60);
		ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)))
			TH_LOG("read: %s", strerror(errno));
		alarm(0);
		ASSERT_EQ(0, get_stats(self->fd, &st));
		EXPECT_EQ(i, rec.cookie);
		EXPECT_LE(rec.deadline, rec.fired) TH_LOG("processed before its tick");
		TH_LOG("try %d: deadline tick %llu processed on tick %llu, %llu periods overrun",
		       i + 1, rec.deadline, rec.fired, st.overruns - overruns);
		on_time = rec.fired == rec.deadline;
		if (on_time || st.overruns == overruns)
			counted++;
	}
	if (!counted)
		TW_SKIP(return, "the guest stalled past the tick on each of %d tries", i);
	EXPECT_TRUE(on_time) TH_LOG("none of %d callouts woken for on time processed on its tick",
				    counted);

	ASSERT_EQ(0, set_callout(self->fd, FAR, 99, &h));
	ASSERT_EQ(0, query(self->fd, h, &q0));
	usleep(500 * 1000);
	ASSERT_EQ(0, query(self->fd, h, &q));
	EXPECT_EQ(1, q.pending);
	EXPECT_EQ(q0.deadline, q.deadline);
	EXPECT_LE(q0.now + 4, q.now) TH_LOG("now %llu, 500 ms after %llu", q.now, q0.now);
}

/*
 * The callout the hrtimer is armed for goes, and another is left IDLE_TICKS periods ahead:
 * cancelled (by handle, by key, in a batch) or pushed back past the other. The timer is armed
 * again for the next, and does not wake for the one gone: most timeouts are cancelled long
 * before they are due. Each near callout is due 300 periods after it is set; each step sleeps
 * 500 ms after its cancel, past that tick. Scheme 7 leaves a callout pushed back on its list,
 * put off, for the list's migration to file it (the paper's reset stays a store or two): the
 * search for the next tick looks at what the list holds, so the migration costs no wakeup.
 * The near callouts set by handle have a companion set with them SLOT_TURNS turns of a 256-slot
 * wheel later, on their slot in scheme 6 (and scheme 5 with 256 slots), which so stays busy:
 * scheme 6 keeps that slot's bound, and raises it when the callout the timer is armed for goes.
 * The one set by key has none: its slot empties.
 */
#define NEAR_TICKS 300
#define SLOT_TURNS 40

/*
 * Runs the n operations of ops in one batch; 0 if all succeeded, else -1 with errno (the first
 * failed operation's).
 */
static int run_batch(int fd, struct tw_op *ops, int n)
{
	struct tw_batch b = { .ops = (__u64)(uintptr_t)ops, .count = n };
	int i;

	if (ioctl(fd, TW_IOC_BATCH, &b))
		return -1;
	for (i = 0; i < n; i++) {
		if (ops[i].result) {
			errno = -ops[i].result;
			return -1;
		}
	}
	return 0;
}

/*
 * Sets a near callout, NEAR_TICKS ahead, in one batch after its companion, SLOT_TURNS turns of
 * 256 slots later; 0, or -1 with errno.
 */
static int set_near(int fd, __u64 cookie, __u64 *handle)
{
	struct tw_op ops[2] = {
		{ .op = TW_OP_SET, .a = NEAR_TICKS + SLOT_TURNS * 256, .b = cookie + 100 },
		{ .op = TW_OP_SET, .a = NEAR_TICKS, .b = cookie },
	};

	if (run_batch(fd, ops, 2))
		return -1;
	*handle = ops[1].handle;
	return 0;
}

/*
 * Sleeps past a near callout's tick and reads the statistics; false if the guest stalled so
 * long that the callout left, IDLE_TICKS periods after t0 at the soonest, may have come due.
 */
static bool after_the_tick(struct __test_metadata *_metadata, int fd, __u64 t0,
			   struct tw_stats *st)
{
	usleep(500 * 1000);
	if (get_stats(fd, st)) {
		TH_LOG("stats: %s", strerror(errno));
		memset(st, 0xff, sizeof(*st));
	}
	return now_ns() - t0 < IDLE_TICKS * MS;
}

/*
 * Whether the ring holds the expiry record of the callout `handle` names, processed on time: on
 * its deadline or later, and with the real clock at its deadline or past it. A callout that
 * fires early fails the test rather than pass for a stall.
 */
static bool fired_first(struct __test_metadata *_metadata, int fd, __u64 handle)
{
	struct tw_query q = { 0 }; /* handle 0: the real clock's tick alone */
	struct tw_fired rec[64];
	int i, n = drain(fd, rec, 64);

	for (i = 0; i < n; i++) {
		if (rec[i].handle != handle)
			continue;
		if (ioctl(fd, TW_IOC_QUERY, &q)) {
			TH_LOG("query: %s", strerror(errno));
			return false;
		}
		if (rec[i].fired < rec[i].deadline || q.now < rec[i].deadline) {
			TH_LOG("fired early: due on tick %llu, processed on %llu, the real clock at %llu",
			       rec[i].deadline, rec[i].fired, q.now);
			return false;
		}
		return true;
	}
	TH_LOG("ENOENT, but the callout did not fire");
	return false;
}

/*
 * A cancel or a reset of the callout `handle` names failed with `err`: skipped as stalled if it
 * fired first, on time (ENOENT, and its record in the ring), else failed.
 */
#define SKIP_IF_FIRED_FIRST(err, handle, fmt, ...)                                             \
	do {                                                                                   \
		int err_ = (err);                                                              \
                                                                                               \
		ASSERT_EQ(ENOENT, err_) TH_LOG("%s", strerror(err_));                          \
		ASSERT_TRUE(fired_first(_metadata, self->fd, handle));                         \
		TW_SKIP(return, fmt, ##__VA_ARGS__);                                           \
	} while (0)

#define EXPECT_WAKEUPS(allowed, steps, what)                                                   \
	do {                                                                                   \
		if (!after_the_tick(_metadata, self->fd, t0, &st))                             \
			TW_SKIP(return, "the guest stalled: the callout left may have come "   \
				"due");                                                        \
		EXPECT_EQ(0, st.fired) TH_LOG("%s: %llu fired", what, st.fired);               \
		EXPECT_GE(allowed, st.wakeups)                                                 \
			TH_LOG("%s: woke %llu times for nothing in %d steps", what,            \
			       st.wakeups, steps);                                             \
	} while (0)

TEST_F_TIMEOUT(clock, cancelling_the_next_callout_costs_no_wakeup, 60)
{
	struct tw_untimeout ut = { .func = 0xc0ffee, .arg = 1 };
	struct tw_timeout to = { .func = 0xc0ffee, .arg = 1, .ticks = NEAR_TICKS };
	struct tw_reset rs;
	struct tw_stats st;
	struct tw_op op;
	struct tw_batch b = { .ops = (__u64)(uintptr_t)&op, .count = 1 };
	__u64 t0, h;

	if (self->fd < 0)
		return;
	t0 = now_ns();
	ASSERT_EQ(0, configure_real(self->fd, variant->scheme, variant->slots, 1 * MS));
	ASSERT_EQ(0, set_callout(self->fd, IDLE_TICKS, 1, NULL));

	ASSERT_EQ(0, set_near(self->fd, 2, &h));
	if (unset_callout(self->fd, h))
		SKIP_IF_FIRED_FIRST(errno, h, "the guest stalled %d ms between a set and its "
				    "unset: it fired first", NEAR_TICKS);
	EXPECT_WAKEUPS(0, 1, "unset");

	ASSERT_EQ(0, set_near(self->fd, 3, &h));
	rs = (struct tw_reset){ .handle = h, .ticks = IDLE_TICKS + 5000 };
	if (ioctl(self->fd, TW_IOC_RESET, &rs))
		SKIP_IF_FIRED_FIRST(errno, h, "the guest stalled %d ms between a set and its "
				    "reset: it fired first", NEAR_TICKS);
	EXPECT_WAKEUPS(0, 2, "reset to a later tick");

	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_TIMEOUT, &to));
	if (ioctl(self->fd, TW_IOC_UNTIMEOUT, &ut))
		SKIP_IF_FIRED_FIRST(errno, to.handle, "the guest stalled %d ms between a timeout "
				    "and its untimeout: it fired first", NEAR_TICKS);
	EXPECT_WAKEUPS(0, 3, "untimeout");

	ASSERT_EQ(0, set_near(self->fd, 4, &h));
	op = (struct tw_op){ .op = TW_OP_UNSET, .handle = h };
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
	if (op.result)
		SKIP_IF_FIRED_FIRST(-op.result, h, "the guest stalled %d ms between a set and its "
				    "unset: it fired first", NEAR_TICKS);
	EXPECT_WAKEUPS(0, 4, "unset in a batch");
}

/*
 * A callout cancelled while another is next, its slot left busy by a companion, costs no wakeup
 * once that other has fired: the callback arms the timer again for the next callout there is,
 * not for the bound the cancelled one left (scheme 6 walks the slot first). The first must fire
 * within PROMPT_NS; a guest that stalls until the companion may have come due skips.
 */
TEST_F_TIMEOUT(clock, a_callout_cancelled_behind_the_next_costs_no_wakeup, 60)
{
	struct tw_op ops[3] = {
		{ .op = TW_OP_SET, .a = 2 * NEAR_TICKS + SLOT_TURNS * 256, .b = 3 },
		{ .op = TW_OP_SET, .a = 2 * NEAR_TICKS, .b = 2 },
		{ .op = TW_OP_SET, .a = NEAR_TICKS, .b = 1 },
	};
	struct tw_batch b = { .ops = (__u64)(uintptr_t)ops, .count = 3 };
	struct tw_stats st;
	__u64 t0;

	if (self->fd < 0)
		return;
	t0 = now_ns();
	ASSERT_EQ(0, configure_real(self->fd, variant->scheme, variant->slots, 1 * MS));
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
	ASSERT_EQ(0, ops[0].result | ops[1].result | ops[2].result);
	if (unset_callout(self->fd, ops[1].handle))
		SKIP_IF_FIRED_FIRST(errno, ops[1].handle, "the guest stalled %d ms between a set "
				    "and its unset: it fired first", 2 * NEAR_TICKS);
	/* Past both near ticks: the first fires, and nothing wakes for the second. */
	usleep(3 * NEAR_TICKS * 1000);
	/* A stalled guest's callback may still be on its way: it has PROMPT_NS. */
	while (!get_stats(self->fd, &st) && !st.fired && now_ns() - t0 < PROMPT_NS)
		usleep(100 * 1000);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	ASSERT_LE(1, st.fired) TH_LOG("the first callout did not fire");
	if (now_ns() - t0 >= SLOT_TURNS * 256 * MS)
		TW_SKIP(return, "the guest stalled: the companion may have come due");
	EXPECT_EQ(1, st.fired) TH_LOG("%llu fired", st.fired);
	EXPECT_GE(1, st.wakeups) TH_LOG("woke %llu times to fire one callout", st.wakeups);
}

/*
 * As cancelling_the_next_callout_costs_no_wakeup, with FAR_COMPANIONS companions on the near
 * callout's slot of a 256-slot wheel, where there was one: a hashed slot mixes the callouts of
 * many turns, and a near timeout among far ones is the common case. Scheme 6 walks the slot when
 * the callout the hrtimer is armed for goes, if it holds at most wheel::TIGHTEN_LIMIT (64)
 * callouts, and arms the timer for the far ones, not for the bound the near one left; the other
 * schemes keep the far callouts elsewhere. The clock's period is 10 ms, so that a batch of the
 * near callout and its companions rarely spans two ticks (one that does is made again): the near
 * callout is due FAR_NEAR_TICKS (300 ms) ahead, its companions FAR_TURNS to FAR_TURNS + 15 turns
 * later (more than 10 s, and within scheme 4's MaxInterval). Each step's companions are unset
 * after it (none is the next callout: no wakeup either), so that scheme 1 keeps at most 64
 * pending, which it looks at again on a cancel.
 */
#define FAR_COMPANIONS 48
#define FAR_PERIOD_MS 10
#define FAR_NEAR_TICKS 30
#define FAR_TURNS 4

/* Unsets the first n callouts whose handles ops holds, in one batch; 0, or -1 with errno. */
static int unset_ops(int fd, struct tw_op *ops, int n)
{
	int i;

	for (i = 0; i < n; i++)
		ops[i] = (struct tw_op){ .op = TW_OP_UNSET, .handle = ops[i].handle };
	return run_batch(fd, ops, n);
}

/*
 * Sets the n companions in ops and then the near callout, due in ticks, by handle, or by key
 * (0xc0ffee, key) if key is not 0, in one batch, their handles left in ops (the near callout's
 * last): 1 once every companion is pending and, by same(near, d), placed with the near callout,
 * due on near; else 0, all of them unset again (the companions first: the near callout then
 * leaves its slot empty), where the real clock has left tick `since` (when the caller chose
 * ticks) by the end, or -2 where it has not (no tick passed to explain it); -1 with errno.
 */
static int set_placed(int fd, __u64 key, __u64 ticks, struct tw_op *ops, int n,
		      bool (*same)(__u64, __u64), __u64 since)
{
	struct tw_query q;
	int i, placed = 0;

	ops[n] = key ? (struct tw_op){ .op = TW_OP_TIMEOUT, .a = 0xc0ffee, .b = key, .c = ticks }
		     : (struct tw_op){ .op = TW_OP_SET, .a = ticks, .b = 1 };
	if (run_batch(fd, ops, n + 1))
		return -1;
	q = (struct tw_query){ .handle = ops[n].handle };
	if (ioctl(fd, TW_IOC_QUERY, &q))
		return -1;
	for (i = 0; i < n; i++) {
		struct tw_query c = { .handle = ops[i].handle };

		if (ioctl(fd, TW_IOC_QUERY, &c))
			return -1;
		placed += c.pending && same(q.deadline, c.deadline);
	}
	if (placed == n)
		return 1;
	if (q.now == since)
		return -2;
	return unset_ops(fd, ops, n + 1) ? -1 : 0;
}

/* Whether a callout due on tick d is on the slot of one due on near, of a 256-slot wheel. */
static bool on_its_slot(__u64 near, __u64 d)
{
	return (d - near) % 256 == 0;
}

/*
 * Sets FAR_COMPANIONS companions and then the near callout, by handle, or by key (0xc0ffee, key)
 * if key is not 0, in one batch, their handles left in ops: 1 once every companion is on the
 * near callout's slot, 0 if ticks passed during each of the batches tried, -1 with errno (-2 as
 * set_placed()).
 */
static int set_near_among_far(int fd, __u64 key, struct tw_op *ops)
{
	struct tw_query q;
	int i, try, set;

	for (try = 0; try < 10; try++) {
		/* The real clock's tick, whatever the handle names. */
		q = (struct tw_query){ 0 };
		if (ioctl(fd, TW_IOC_QUERY, &q))
			return -1;
		for (i = 0; i < FAR_COMPANIONS; i++)
			ops[i] = (struct tw_op){
				.op = TW_OP_SET,
				.a = FAR_NEAR_TICKS + (FAR_TURNS + i % 16) * 256,
				.b = 100 + i,
			};
		set = set_placed(fd, key, FAR_NEAR_TICKS, ops, FAR_COMPANIONS, on_its_slot,
				 q.now);
		if (set)
			return set;
	}
	return 0;
}

/*
 * Runs set, a call of set_near_among_far or set_near_on_list with its companions: fails the test
 * on an error, or a batch placed apart though no tick passed, and skips it as stalled when ticks
 * passed during each of its batches.
 */
#define SET_NEAR(set, companions)                                                              \
	do {                                                                                   \
		int placed = (set);                                                            \
                                                                                               \
		ASSERT_NE(-2, placed) TH_LOG("placed apart, no tick passed");                 \
		ASSERT_LE(0, placed) TH_LOG("set: %s", strerror(errno));                       \
		if (!placed)                                                                   \
			TW_SKIP(return, "the guest stalled: a tick of %d ms passed during "    \
				"each of ten batches of %d sets", FAR_PERIOD_MS,               \
				(companions) + 1);                                             \
	} while (0)

TEST_F_TIMEOUT(clock, cancelling_the_next_callout_among_far_ones_on_its_slot_costs_no_wakeup, 60)
{
	struct tw_untimeout ut = { .func = 0xc0ffee, .arg = 3 };
	struct tw_op ops[FAR_COMPANIONS + 1];
	struct tw_reset rs;
	struct tw_stats st;
	__u64 t0;

	if (self->fd < 0)
		return;
	t0 = now_ns();
	ASSERT_EQ(0, configure_real(self->fd, variant->scheme, variant->slots, FAR_PERIOD_MS * MS));

	SET_NEAR(set_near_among_far(self->fd, 0, ops), FAR_COMPANIONS);
	if (unset_callout(self->fd, ops[FAR_COMPANIONS].handle))
		SKIP_IF_FIRED_FIRST(errno, ops[FAR_COMPANIONS].handle, "the guest stalled %d ms "
				    "between a set and its unset: it fired first",
				    FAR_NEAR_TICKS * FAR_PERIOD_MS);
	EXPECT_WAKEUPS(0, 1, "unset");
	ASSERT_EQ(0, unset_ops(self->fd, ops, FAR_COMPANIONS)) TH_LOG("%s", strerror(errno));

	SET_NEAR(set_near_among_far(self->fd, 0, ops), FAR_COMPANIONS);
	rs = (struct tw_reset){ .handle = ops[FAR_COMPANIONS].handle, .ticks = IDLE_TICKS + 5000 };
	if (ioctl(self->fd, TW_IOC_RESET, &rs))
		SKIP_IF_FIRED_FIRST(errno, rs.handle, "the guest stalled %d ms between a set and "
				    "its reset: it fired first", FAR_NEAR_TICKS * FAR_PERIOD_MS);
	EXPECT_WAKEUPS(0, 2, "reset to a later tick");
	ASSERT_EQ(0, unset_ops(self->fd, ops, FAR_COMPANIONS)) TH_LOG("%s", strerror(errno));

	SET_NEAR(set_near_among_far(self->fd, 3, ops), FAR_COMPANIONS);
	if (ioctl(self->fd, TW_IOC_UNTIMEOUT, &ut))
		SKIP_IF_FIRED_FIRST(errno, ops[FAR_COMPANIONS].handle, "the guest stalled %d ms "
				    "between a timeout and its untimeout: it fired first",
				    FAR_NEAR_TICKS * FAR_PERIOD_MS);
	EXPECT_WAKEUPS(0, 3, "untimeout");
}

/*
 * As cancelling_the_next_callout_costs_no_wakeup, with the near callout above scheme 7's level 0
 * and LIST_COMPANIONS companions after it on its list: the first block of LIST_BLOCK (64) ticks
 * that starts at least LIST_BLOCK + 2 ticks ahead holds them all, the near callout at its start.
 * A list above level 0 holds a stretch of time, and a near timeout among later ones is the common
 * case there. Scheme 7 walks the list when the callout the hrtimer is armed for goes, if it holds
 * at most wheel::TIGHTEN_LIMIT (64) callouts (more than it looks at when it searches for the next
 * tick), and arms the timer for the companions, not for the bound the near one left; the other
 * schemes keep the companions elsewhere, or their next work exact. Each step's companions are
 * unset after it in one batch, in the order they are due, which in scheme 6 empties their group of
 * 64 slots: its bound goes with them, however many of the cancels the hold's budget left it low
 * for, and a callout set there later wakes nothing early. The clock's period is 10 ms: the near
 * callout is 0.66 to 1.3 s ahead, its companions 30 to 53 ticks after it, which leaves a stalled
 * guest 300 ms before they come due (else the step is skipped).
 */
#define LIST_COMPANIONS 24
#define LIST_BLOCK 64
#define LIST_GAP 30

/* Whether a callout due on tick d is in the block of LIST_BLOCK ticks of one due on near. */
static bool in_its_block(__u64 near, __u64 d)
{
	return d / LIST_BLOCK == near / LIST_BLOCK;
}

/*
 * Sets LIST_COMPANIONS companions and then the near callout, by handle, or by key (0xc0ffee,
 * key) if key is not 0, in one batch, their handles left in ops (the near callout's last);
 * *near_ns is a time by which the near callout's tick has come, *due_ns one before which no
 * companion's can. 1 once all are in one block of LIST_BLOCK ticks, 0 if ticks passed during
 * each of the batches tried, -1 with errno (-2 as set_placed()).
 */
static int set_near_on_list(int fd, __u64 key, struct tw_op *ops, __u64 *near_ns, __u64 *due_ns)
{
	const __u64 period = FAR_PERIOD_MS * MS;
	struct tw_query q;
	__u64 a, t0;
	int i, try, set;

	for (try = 0; try < 10; try++) {
		/* The real clock's tick, whatever the handle names. */
		q = (struct tw_query){ 0 };
		if (ioctl(fd, TW_IOC_QUERY, &q))
			return -1;
		a = (q.now + 2 * LIST_BLOCK + 1) / LIST_BLOCK * LIST_BLOCK - q.now;
		for (i = 0; i < LIST_COMPANIONS; i++)
			ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = a + LIST_GAP + i, .b = 100 + i };
		t0 = now_ns();
		set = set_placed(fd, key, a, ops, LIST_COMPANIONS, in_its_block, q.now);
		*near_ns = now_ns() + (a + 1) * period;
		*due_ns = t0 + (a + LIST_GAP - 1) * period;
		if (set)
			return set;
	}
	return 0;
}

/*
 * Sleeps past the near callout's tick, reads the statistics and unsets the companions: false if
 * the guest stalled so long that a companion may have come due first.
 */
static bool before_the_companions(struct __test_metadata *_metadata, int fd, struct tw_op *ops,
				  __u64 near_ns, __u64 due_ns, struct tw_stats *st)
{
	__u64 t = now_ns();

	if (t < near_ns)
		usleep((near_ns - t) / 1000 + 20 * 1000);
	if (get_stats(fd, st)) {
		TH_LOG("stats: %s", strerror(errno));
		memset(st, 0xff, sizeof(*st));
	}
	return now_ns() < due_ns && !unset_ops(fd, ops, LIST_COMPANIONS);
}

#define EXPECT_NO_WAKEUP_ON_LIST(steps, what)                                                  \
	do {                                                                                   \
		if (!before_the_companions(_metadata, self->fd, ops, near_ns, due_ns, &st))    \
			TW_SKIP(return, "the guest stalled: the companions may have come "     \
				"due");                                                        \
		EXPECT_EQ(0, st.fired) TH_LOG("%s: %llu fired", what, st.fired);               \
		EXPECT_EQ(0, st.wakeups)                                                       \
			TH_LOG("%s: woke %llu times for nothing in %d steps", what,            \
			       st.wakeups, steps);                                             \
	} while (0)

TEST_F_TIMEOUT(clock, cancelling_the_next_callout_among_later_ones_on_its_list_costs_no_wakeup, 60)
{
	struct tw_untimeout ut = { .func = 0xc0ffee, .arg = 3 };
	struct tw_op ops[LIST_COMPANIONS + 1];
	__u64 near_ns, due_ns;
	struct tw_reset rs;
	struct tw_stats st;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_real(self->fd, variant->scheme, variant->slots, FAR_PERIOD_MS * MS));

	SET_NEAR(set_near_on_list(self->fd, 0, ops, &near_ns, &due_ns), LIST_COMPANIONS);
	if (unset_callout(self->fd, ops[LIST_COMPANIONS].handle))
		SKIP_IF_FIRED_FIRST(errno, ops[LIST_COMPANIONS].handle, "the guest stalled past "
				    "the near callout's tick before its unset");
	EXPECT_NO_WAKEUP_ON_LIST(1, "unset");

	SET_NEAR(set_near_on_list(self->fd, 0, ops, &near_ns, &due_ns), LIST_COMPANIONS);
	rs = (struct tw_reset){ .handle = ops[LIST_COMPANIONS].handle, .ticks = IDLE_TICKS };
	if (ioctl(self->fd, TW_IOC_RESET, &rs))
		SKIP_IF_FIRED_FIRST(errno, rs.handle, "the guest stalled past the near callout's "
				    "tick before its reset");
	EXPECT_NO_WAKEUP_ON_LIST(2, "reset to a later tick");
	ASSERT_EQ(0, unset_callout(self->fd, ops[LIST_COMPANIONS].handle));

	SET_NEAR(set_near_on_list(self->fd, 3, ops, &near_ns, &due_ns), LIST_COMPANIONS);
	if (ioctl(self->fd, TW_IOC_UNTIMEOUT, &ut))
		SKIP_IF_FIRED_FIRST(errno, ops[LIST_COMPANIONS].handle, "the guest stalled past "
				    "the near callout's tick before its untimeout");
	EXPECT_NO_WAKEUP_ON_LIST(3, "untimeout");
}

/*
 * A thousand callouts, one a period from IDLE_TICKS periods ahead on, cost no wakeup in the
 * second after they are set (one of slack, as above): the next work of every scheme is the
 * first deadline, or a bound no sooner than a second away. Scheme 6's default 256 slots are
 * all busy, every timer 39 turns ahead: its next work reads four group bounds, where looking
 * at busy slots one by one under the lock would stop short and wake the clock to look on. A
 * guest that stalls until the first of them may have come due skips.
 */
TEST_F_TIMEOUT(clock, many_far_callouts_cost_no_wakeup, 60)
{
	struct tw_stats st;
	__u64 i, t0;

	if (self->fd < 0)
		return;
	t0 = now_ns();
	ASSERT_EQ(0, configure_real(self->fd, variant->scheme, variant->slots, 1 * MS));
	for (i = 0; i < 1000; i++) {
		ASSERT_EQ(0, set_callout(self->fd, IDLE_TICKS + i, i, NULL))
			TH_LOG("callout %llu: %s", i, strerror(errno));
	}
	usleep(1000 * 1000);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	if (now_ns() - t0 >= IDLE_TICKS * MS)
		TW_SKIP(return, "the guest stalled: the first callout may have come due");
	EXPECT_GE(1, st.wakeups) TH_LOG("1000 callouts %d ms and more away woke it %llu times "
					"in 1 s", IDLE_TICKS, st.wakeups);
	EXPECT_EQ(0, st.fired);
}

/*
 * A callout set on an instance that has been idle for a while counts from now, not from the
 * tick the instance last ran.
 */
TEST_F_TIMEOUT(clock, a_callout_set_after_idling_is_not_early, 60)
{
	struct tw_fired rec;
	__u64 t_cfg, t_set, t;

	if (self->fd < 0)
		return;
	/* The clock starts inside CONFIGURE: tick k comes no sooner than k ms after t_cfg. */
	t_cfg = now_ns();
	ASSERT_EQ(0, configure_real(self->fd, variant->scheme, variant->slots, 1 * MS));
	usleep(1000 * 1000);
	t_set = now_ns();
	ASSERT_EQ(0, set_callout(self->fd, 300, 1, NULL));
	alarm(60);
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	t = now_ns();
	alarm(0);
	TH_LOG("300 ticks set after 1 s idle: read %llu us later (deadline tick %llu, fired %llu)",
	       (t - t_set) / 1000, rec.deadline, rec.fired);
	/* Due 300 ticks after the tick the clock stood on at the set, which began at most a
	 * period before it: at least 299 periods later, and on a tick of its own. */
	EXPECT_LE(1300, rec.deadline) TH_LOG("counted from a tick before the set");
	EXPECT_LE(rec.deadline * MS, t - t_cfg) TH_LOG("fired before its tick");
	EXPECT_LE(299 * MS, t - t_set) TH_LOG("fired early");
}

/* ---- Readers -------------------------------------------------------------------------------- */

struct reader {
	int fd;
	__u64 sentinel; /* cookies from here on end the reader */
	__u64 *seen; /* per cookie below sentinel, counted atomically */
	__u64 records, last_errno;
	int chunk; /* records per read() */
	atomic_int done;
};

static void *read_until_sentinel(void *arg)
{
	struct reader *r = arg;
	struct tw_fired rec[8];
	int i, end = 0;

	while (!end) {
		ssize_t n = read(r->fd, rec, r->chunk * sizeof(rec[0]));

		if (n < 0) {
			r->last_errno = errno;
			break;
		}
		for (i = 0; i < n / (ssize_t)sizeof(rec[0]); i++) {
			r->records++;
			if (rec[i].cookie >= r->sentinel)
				end = 1;
			else
				__atomic_fetch_add(&r->seen[rec[i].cookie], 1, __ATOMIC_RELAXED);
		}
	}
	atomic_store(&r->done, 1);
	return NULL;
}

TW_FD_FIXTURE_PER_SCHEME(readers)

static int configure_manual(int fd, __u32 scheme, __u32 slots, __u32 capacity)
{
	struct tw_config c = { .scheme = scheme, .clock = TW_CLOCK_MANUAL, .slots = slots,
			       .capacity = capacity, .ring = 1 << 16, .budget = 1 << 16 };

	return ioctl(fd, TW_IOC_CONFIGURE, &c);
}

/* R readers of one file, records fired while they block: each record is read exactly once. */
static void many_readers(struct __test_metadata *_metadata, int fd,
			 const FIXTURE_VARIANT(readers) *v, int nreaders)
{
	enum { N = 20000, SPAN = 1000 };
	struct reader r[4];
	pthread_t t[4];
	__u64 *seen = calloc(N, sizeof(*seen)), total = 0, sentinels = 0, k, t0;
	struct tw_fired rest[8];
	struct tw_stats st;
	int i, exited, left;

	ASSERT_TRUE(seen != NULL);
	ASSERT_EQ(0, configure_manual(fd, v->scheme, v->slots, N + 64));
	for (k = 0; k < N; k++) {
		ASSERT_EQ(0, set_callout(fd, 1 + k % SPAN, k, NULL));
	}
	for (i = 0; i < nreaders; i++) {
		r[i] = (struct reader){ .fd = fd, .sentinel = N, .seen = seen, .chunk = 1 + i * 2 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, read_until_sentinel, &r[i]));
	}
	for (k = 0; k < SPAN; k++) {
		ASSERT_EQ(0, advance(fd, 1));
		if (k % 64 == 0)
			usleep(1000); /* let the readers block again now and then */
	}
	/* Wait for every record to be taken, then end each reader with a sentinel. */
	for (k = 0; k < 60000; k++) {
		ASSERT_EQ(0, get_stats(fd, &st));
		if (!st.ring_used)
			break;
		usleep(1000);
	}
	EXPECT_EQ(0, st.ring_used);
	/* The readers have PROMPT_NS to take their sentinels and exit. */
	t0 = now_ns();
	for (;;) {
		for (exited = 0, i = 0; i < nreaders; i++)
			exited += atomic_load(&r[i].done);
		if (exited == nreaders || now_ns() - t0 >= PROMPT_NS)
			break;
		ASSERT_EQ(0, get_stats(fd, &st));
		if (!st.ring_used) {
			for (i = exited; i < nreaders; i++, sentinels++) {
				ASSERT_EQ(0, set_callout(fd, 1, N + sentinels, NULL));
			}
			ASSERT_EQ(0, advance(fd, 1));
		}
		usleep(10000);
	}
	ASSERT_EQ(nreaders, exited) TH_LOG("readers still blocked after their sentinels");
	for (i = 0; i < nreaders; i++) {
		pthread_join(t[i], NULL);
		EXPECT_EQ(0, r[i].last_errno);
		total += r[i].records;
		TH_LOG("reader %d (%d per read): %llu records", i, r[i].chunk, r[i].records);
	}
	/*
	 * A reader that had taken its sentinel but not yet said so was sent another: what no
	 * reader took is left in the ring, sentinels only.
	 */
	left = drain(fd, rest, 8);
	for (i = 0; i < left; i++) {
		EXPECT_LE(N, rest[i].cookie) TH_LOG("record %llu left unread", rest[i].cookie);
	}
	total += left;
	for (k = 0; k < N; k++) {
		__u64 times = seen[k];

		ASSERT_EQ(1, times) TH_LOG("cookie %llu read %llu times", k, times);
	}
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(0, st.ring_drops);
	EXPECT_EQ(st.fired, total);
	EXPECT_EQ(N + sentinels, total);
	free(seen);
}

TEST_F_TIMEOUT(readers, two_readers_get_every_record_once, 300)
{
	if (self->fd < 0)
		return;
	many_readers(_metadata, self->fd, variant, 2);
}

TEST_F_TIMEOUT(readers, four_readers_get_every_record_once, 300)
{
	if (self->fd < 0)
		return;
	many_readers(_metadata, self->fd, variant, 4);
}

/* A thread blocked in read(2), timed. */
struct blocked {
	int fd;
	_Atomic pid_t tid;
	ssize_t ret;
	int err;
	__u64 t_end;
	atomic_int done;
};

static void *blocked_read(void *arg)
{
	struct blocked *b = arg;
	struct tw_fired rec;

	atomic_store(&b->tid, gettid());
	b->ret = read(b->fd, &rec, sizeof(rec));
	b->err = errno;
	b->t_end = now_ns();
	atomic_store(&b->done, 1);
	return NULL;
}

/*
 * Whether thread `tid` is asleep in system call `nr`: /proc/.../syscall names the call only
 * while the thread is not running.
 */
static int asleep_in(pid_t tid, long nr)
{
	char path[64], text[64], want[16];

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	snprintf(want, sizeof(want), "%ld ", nr);
	return tid && !read_text(path, text, sizeof(text)) && !strncmp(text, want, strlen(want));
}

/*
 * Waits (up to PROMPT_NS) until the reader sleeps in read(2). A fixed sleep would not do: a
 * loaded, emulated guest may not have run the thread yet.
 */
static int wait_blocked(struct blocked *b)
{
	__u64 t0 = now_ns();

	while (now_ns() - t0 < PROMPT_NS && !atomic_load(&b->done)) {
		if (asleep_in(atomic_load(&b->tid), SYS_read))
			return 1;
		usleep(1000);
	}
	return 0;
}

/* Waits up to `ns` for the reader to return. */
static int wait_done(struct blocked *b, __u64 ns)
{
	__u64 t0 = now_ns();

	while (!atomic_load(&b->done) && now_ns() - t0 < ns)
		usleep(1000);
	return atomic_load(&b->done);
}

/*
 * These concern the file and its ring, not the scheme: they run on the default scheme, each
 * with a fresh file, a thread blocked in read(2), and a probe file for TW_IOC_INFO.
 *
 * close(2) of a file another thread is blocked reading does not end that read (the read holds
 * its own reference to the file; release runs when the last one goes): close must return
 * promptly all the same, and a signal then ends the read, after which the instance is gone.
 */
FIXTURE(file)
{
	int fd, probe;
};

FIXTURE_SETUP(file)
{
	self->probe = -1;
	self->fd = tw_open(_metadata);
	if (self->fd >= 0)
		self->probe = tw_open(_metadata);
}

FIXTURE_TEARDOWN(file)
{
	if (self->fd >= 0)
		close(self->fd);
	if (self->probe >= 0)
		close(self->probe);
}

TEST_F_TIMEOUT(file, blocked_reader_and_close_by_another_thread, 120)
{
	struct blocked b = { 0 };
	struct tw_info before, after;
	pthread_t t;
	__u64 t0, t_close, t_sig;
	int fd = self->fd, probe = self->probe;

	if (fd < 0 || probe < 0)
		return;
	self->fd = -1; /* closed by the test */
	ASSERT_EQ(0, catch_signal(SIGUSR1));
	ASSERT_EQ(0, configure_manual(fd, 0, 0, 16));
	ASSERT_EQ(0, set_callout(fd, 1000, 1, NULL)); /* outstanding, never due */
	ASSERT_EQ(0, get_info(probe, &before));
	b.fd = fd;
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_read, &b));
	ASSERT_TRUE(wait_blocked(&b)) TH_LOG("the reader is not asleep in read(2): %s",
					     atomic_load(&b.done) ? "it returned" : "not yet");
	t0 = now_ns();
	EXPECT_EQ(0, close(fd));
	t_close = now_ns() - t0;
	EXPECT_GT(PROMPT_NS, t_close);
	if (!wait_done(&b, 200 * MS)) {
		t0 = now_ns();
		pthread_kill(t, SIGUSR1);
		ASSERT_TRUE(wait_done(&b, PROMPT_NS)) TH_LOG("the reader did not return");
		t_sig = b.t_end - t0;
		EXPECT_EQ(-1, b.ret);
		EXPECT_EQ(EINTR, b.err);
		TH_LOG("close: %llu us; the read ended %llu us after the signal", t_close / 1000,
		       t_sig / 1000);
	} else {
		TH_LOG("close: %llu us; the read ended with %zd (%s)", t_close / 1000, b.ret,
		       strerror(b.err));
		EXPECT_EQ(-1, b.ret);
	}
	pthread_join(t, NULL);
	/* The last reference is gone: the instance is released. */
	ASSERT_EQ(0, get_info(probe, &after));
	EXPECT_EQ(before.instances - 1, after.instances);
}

TEST_F_TIMEOUT(file, blocked_reader_and_a_signal_get_eintr, 120)
{
	struct blocked b = { 0 };
	pthread_t t;
	__u64 t0;
	int fd = self->fd;

	if (fd < 0)
		return;
	ASSERT_EQ(0, catch_signal(SIGUSR1));
	ASSERT_EQ(0, configure_manual(fd, 0, 0, 16));
	b.fd = fd;
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_read, &b));
	ASSERT_TRUE(wait_blocked(&b));
	t0 = now_ns();
	pthread_kill(t, SIGUSR1);
	ASSERT_TRUE(wait_done(&b, PROMPT_NS)) TH_LOG("the reader did not return");
	pthread_join(t, NULL);
	EXPECT_EQ(-1, b.ret);
	EXPECT_EQ(EINTR, b.err);
	TH_LOG("the read ended %llu us after the signal", (b.t_end - t0) / 1000);
}

/*
 * read(2) of a full ring of 64 Ki records is a long call. Under a stream of signals it returns
 * early with the whole records it has delivered (never EINTR once one is out: the reader slows
 * down, never stops), and loses none: the reads that follow get the rest, each record once and
 * oldest first, and the ring ends empty without a drop. The old read took the whole ring in one
 * call, whatever the signals. The reads start once the flooder has sent a signal; should it
 * still send none while any read runs (descheduled meanwhile), the test skips.
 */
TEST_F_TIMEOUT(file, a_signal_ends_a_long_read_early_and_loses_no_record, 300)
{
	enum { N = 1 << 16, TICKS = 16 };
	struct tw_fired *buf = calloc(N, sizeof(*buf));
	unsigned char *seen = calloc(N, 1);
	struct flood f = { .target = pthread_self(), .sig = SIGUSR1 };
	__u64 total = 0, reads = 0, short_reads = 0, eintr = 0, last = 0, signalled = 0, k;
	struct tw_stats st;
	pthread_t t_flood;
	int fd = self->fd;

	if (fd < 0)
		return;
	ASSERT_TRUE(buf != NULL);
	ASSERT_TRUE(seen != NULL);
	ASSERT_EQ(0, catch_signal(SIGUSR1));
	ASSERT_EQ(0, configure_manual(fd, 0, 0, N));
	for (k = 0; k < N; k++) {
		ASSERT_EQ(0, set_callout(fd, 1 + k % TICKS, k, NULL));
	}
	ASSERT_EQ(0, advance(fd, TICKS));
	ASSERT_EQ(0, get_stats(fd, &st));
	ASSERT_EQ(N, st.ring_used);

	ASSERT_EQ(0, start_flood(&t_flood, &f));
	while (total < N && reads < 2 * N) {
		unsigned long before = atomic_load(&f.sent);
		ssize_t r = read(fd, buf, (N - total) * sizeof(*buf));
		unsigned long during = atomic_load(&f.sent) - before;
		__u64 n, i;

		/* Two signals sent: the second, at least, once the read was under way. */
		signalled += during >= 2;
		reads++;
		if (r < 0) {
			if (errno != EINTR)
				break;
			eintr++;
			continue;
		}
		if (r == 0 || r % sizeof(*buf))
			break;
		n = r / sizeof(*buf);
		short_reads += n < N - total;
		for (i = 0; i < n; i++) {
			__u64 c = buf[i].cookie;

			if (c >= N || seen[c] || buf[i].deadline < last)
				break;
			seen[c] = 1;
			last = buf[i].deadline;
		}
		total += i;
		if (i < n)
			break;
	}
	atomic_store(&f.done, 1);
	pthread_join(t_flood, NULL);
	TH_LOG("%llu records in %llu reads under %lu signals: %llu short, %llu EINTR, %llu "
	       "signalled", total, reads, atomic_load(&f.sent), short_reads, eintr, signalled);
	EXPECT_EQ(N, total) TH_LOG("a read failed, or a record was lost, repeated or out of order");
	EXPECT_EQ(0, eintr);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(0, st.ring_used);
	EXPECT_EQ(0, st.ring_drops);
	EXPECT_EQ(N, st.fired);
	free(buf);
	free(seen);
	if (!short_reads && !signalled)
		TW_SKIP(return, "no signal was sent while a read ran: not slow enough here");
	EXPECT_LT(0, short_reads) TH_LOG("no read answered the signals: each took the whole ring");
}

/* A counter of a file of "name value" lines (/proc/vmstat, memory.events), or -1 if none. */
static long long counter(const char *path, const char *name)
{
	FILE *f = fopen(path, "r");
	char key[64];
	long long v, found = -1;

	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2) {
		if (!strcmp(key, name)) {
			found = v;
			break;
		}
	}
	fclose(f);
	return found;
}

/* A counter of /proc/vmstat, or -1 if there is none by that name. */
static long long vmstat(const char *name)
{
	return counter("/proc/vmstat", name);
}

/* The largest geometry the uapi accepts: scheme 7, TW_MAX_CAPACITY callouts, TW_MAX_RING. */
static const struct tw_config largest = { .scheme = 7, .clock = TW_CLOCK_MANUAL,
					  .capacity = TW_MAX_CAPACITY, .ring = TW_MAX_RING };

/*
 * Configures the largest geometry on `fd`, which tells the size of each (in st). Returns 0, or
 * -1 with the test skipped where /proc/vmstat has no oom_kill counter or the machine's memory
 * holds `most` instances or more.
 */
static int largest_first(struct __test_metadata *_metadata, int fd, long long most,
			 struct tw_stats *st)
{
	long long ram = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);

	if (vmstat("oom_kill") < 0)
		TW_SKIP(return -1, "no oom_kill counter in /proc/vmstat");
	ASSERT_EQ(0, ioctl(fd, TW_IOC_CONFIGURE, &largest)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, get_stats(fd, st));
	ASSERT_LT(0, st->memory_bytes);
	if (ram / (long long)st->memory_bytes >= most)
		TW_SKIP(return -1, "%lld MiB of memory hold more than %lld instances of %llu MiB",
			ram >> 20, most, st->memory_bytes >> 20);
	return 0;
}

/*
 * Instances of the largest geometry (scheme 7, TW_MAX_CAPACITY callouts with the legacy tables,
 * TW_MAX_RING records), made on one file after another until the machine's memory cannot hold
 * another: that CONFIGURE fails with ENOMEM, and the OOM killer never runs (oom_kill in
 * /proc/vmstat stays as it was; before, it killed other processes, the guest's shell first).
 * This process lives on to see it, and once the files are closed the largest instance can be
 * made again. The number of instances depends on the machine's memory, not its speed.
 */
TEST_F_TIMEOUT(file, instances_beyond_the_memory_fail_with_enomem_and_kill_nothing, 900)
{
	enum { MAX_FILES = 64 };
	long long ram = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	long long oom_before = vmstat("oom_kill"), oom_after;
	int fds[MAX_FILES], n = 0, ret = 0, err = 0, i;
	struct tw_stats st;
	__u64 t0, t = 0;

	if (self->fd < 0 || largest_first(_metadata, self->fd, MAX_FILES - 1, &st))
		return;
	while (n < MAX_FILES) {
		fds[n] = tw_open(_metadata);
		ASSERT_LE(0, fds[n]);
		t0 = now_ns();
		ret = ioctl(fds[n], TW_IOC_CONFIGURE, &largest);
		err = errno;
		t = now_ns() - t0;
		n++;
		if (ret)
			break;
	}
	oom_after = vmstat("oom_kill");
	TH_LOG("%d instances of %llu MiB on %lld MiB of memory, then %s after %llu ms; OOM kills %lld",
	       n, st.memory_bytes >> 20, ram >> 20, ret ? strerror(err) : "configured", t / MS,
	       oom_after - oom_before);
	EXPECT_EQ(-1, ret) TH_LOG("%d instances of the largest geometry all made", n);
	EXPECT_EQ(ENOMEM, err);
	EXPECT_EQ(oom_before, oom_after) TH_LOG("the OOM killer ran");
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(self->fd);
	self->fd = tw_open(_metadata);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(0, ioctl(self->fd, TW_IOC_CONFIGURE, &largest)) TH_LOG("%s", strerror(errno));
}

/* Writes `v` to file `name` of directory `dir` (a cgroup's, a CPU's); 0, or -1 with errno set. */
static int write_at(const char *dir, const char *name, const char *v)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return write_text(path, v);
}

/*
 * Where the cgroup v2 hierarchy is mounted, mounting it on /sys/fs/cgroup if it is nowhere (a
 * bare guest's init mounts none; `*mounted` then says so, for the caller to unmount it); NULL
 * where the kernel has no cgroup v2 (no CONFIG_CGROUPS).
 */
static const char *cgroup2_root(bool *mounted)
{
	static char root[256];
	char dev[64], dir[256], type[64];
	FILE *f = fopen("/proc/self/mounts", "r");

	*mounted = false;
	while (f && fscanf(f, "%63s %255s %63s %*[^\n]", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			fclose(f);
			snprintf(root, sizeof(root), "%s", dir);
			return root;
		}
	}
	if (f)
		fclose(f);
	if (mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL))
		return NULL;
	*mounted = true;
	return "/sys/fs/cgroup";
}

/*
 * Writes 16 KiB of stack below the caller's frame, so that the calls it makes next fault in no
 * page of stack of their own.
 */
static void __attribute__((noinline)) touch_stack(void)
{
	volatile char below[16384];
	size_t i;

	for (i = 0; i < sizeof(below); i += 512)
		below[i] = 0;
}

/* What the child of the memory cgroup test reports, by step. */
enum cgroup_step { CG_JOINED, CG_SMALL, CG_LARGEST, CG_STEPS };

/*
 * An instance of the largest geometry, configured by a process in a memory cgroup that has far
 * less left than it takes (memory.max 64 MiB against some 290): the CONFIGURE fails with
 * ENOMEM, and the OOM killer, the cgroup's or the system's, kills nothing (oom_kill in the
 * cgroup's memory.events stays 0, in /proc/vmstat as it was). The storage is charged to the
 * caller's cgroup; without __GFP_RETRY_MAYFAIL the charge of a vmalloc'ed page beyond the limit
 * sends the cgroup's OOM killer, which kills the caller, the only process there, inside its
 * CONFIGURE. The same process first makes a small instance, so that it is the limit that
 * refuses the large one.
 *
 * The child reports each step's errno in a shared page, then stops itself until the parent has
 * read them and the counts and lifted the limit; before it joins the cgroup it has touched all
 * the memory it writes until then, and made the calls it makes (nothing to fault in, no page
 * for a pipe). On a kernel with KASAN on vmalloc'ed memory, the shadow of a vmalloc area is
 * charged to the caller's cgroup as well, and freed only when the kernel purges its lazily freed
 * areas, a second or so later: for that while the cgroup stays full after the ENOMEM, and any
 * page the child took would have the cgroup's OOM killer run. Skipped where the kernel has no
 * memory cgroups, or the module lacks TW_FEATURE_NO_OOM_KILL (a kernel crate without the flag:
 * scripts/kernel-patches/).
 */
TEST_F_TIMEOUT(file, an_instance_beyond_its_memory_cgroup_fails_with_enomem_and_kills_nothing,
	       300)
{
	static const char *const step[CG_STEPS] = { "joining the cgroup", "the small instance",
						    "the largest instance" };
	const struct tw_config small = { .scheme = 7, .clock = TW_CLOCK_MANUAL };
	long long oom_before = vmstat("oom_kill"), kills = -1, oom_all = -1;
	char cg[300], events[320], me[32];
	int status, fd, fd2, i, *err;
	const char *root;
	bool mounted;
	pid_t pid;

	if (self->fd < 0)
		return;
	if (!(features(_metadata, self->fd) & TW_FEATURE_NO_OOM_KILL))
		TW_SKIP(return, "the module has no TW_FEATURE_NO_OOM_KILL (a kernel crate without "
			"__GFP_RETRY_MAYFAIL: see scripts/kernel-patches/)");
	root = cgroup2_root(&mounted);
	if (!root)
		TW_SKIP(return, "no cgroup v2 hierarchy (the kernel has no CONFIG_CGROUPS): %s",
			strerror(errno));
	if (write_at(root, "cgroup.subtree_control", "+memory")) {
		if (mounted)
			umount("/sys/fs/cgroup");
		TW_SKIP(return, "no memory controller (the kernel has no CONFIG_MEMCG): %s",
			strerror(errno));
	}
	snprintf(cg, sizeof(cg), "%s/timerwheel-memcg-%d", root, (int)getpid());
	snprintf(events, sizeof(events), "%s/memory.events", cg);
	ASSERT_EQ(0, mkdir(cg, 0755)) TH_LOG("mkdir %s: %s", cg, strerror(errno));
	ASSERT_EQ(0, write_at(cg, "memory.max", "67108864")) TH_LOG("%s", strerror(errno));
	/* No swap to spill into either, where swap is accounted. */
	write_at(cg, "memory.swap.max", "0");
	err = mmap(NULL, CG_STEPS * sizeof(*err), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(err != MAP_FAILED);
	for (i = 0; i < CG_STEPS; i++)
		err[i] = -1;
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Touched first: the stack, the shared page, errno, and the calls made below. */
		touch_stack();
		for (i = 0; i < CG_STEPS; i++)
			err[i] = -1;
		errno = 0;
		snprintf(me, sizeof(me), "%d", (int)getpid());
		if (kill(getpid(), 0))
			_exit(1);
		err[CG_JOINED] = write_at(cg, "cgroup.procs", me) ? errno : 0;
		fd = open(TW_DEVICE, O_RDWR | O_CLOEXEC);
		fd2 = open(TW_DEVICE, O_RDWR | O_CLOEXEC);
		err[CG_SMALL] = fd < 0 || fd2 < 0 || ioctl(fd2, TW_IOC_CONFIGURE, &small) ? errno : 0;
		err[CG_LARGEST] = ioctl(fd, TW_IOC_CONFIGURE, &largest) ? errno : 0;
		/* Until the parent has lifted the limit. */
		kill(getpid(), SIGSTOP);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	if (WIFSTOPPED(status)) {
		kills = counter(events, "oom_kill");
		oom_all = vmstat("oom_kill") - oom_before;
		EXPECT_EQ(0, write_at(cg, "memory.max", "max")) TH_LOG("%s", strerror(errno));
		EXPECT_EQ(0, kill(pid, SIGCONT));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		TH_LOG("memory.max 64 MiB: %s %s, %s %s, %s %s; OOM kills %lld in the cgroup, %lld "
		       "in all", step[0], strerror(err[0]), step[1], strerror(err[1]), step[2],
		       strerror(err[2]), kills, oom_all);
		for (i = 0; i < CG_LARGEST; i++) {
			EXPECT_EQ(0, err[i]) TH_LOG("%s: %s", step[i], strerror(err[i]));
		}
		EXPECT_EQ(ENOMEM, err[CG_LARGEST])
			TH_LOG("the largest instance: %s", err[CG_LARGEST] ? strerror(err[CG_LARGEST]) :
									"configured beyond the limit");
	} else {
		kills = counter(events, "oom_kill");
		oom_all = vmstat("oom_kill") - oom_before;
		TH_LOG("memory.max 64 MiB: the child ended in its CONFIGUREs (%s %d, after %s); OOM "
		       "kills %lld in the cgroup, %lld in all",
		       WIFSIGNALED(status) ? "killed by signal" : "exit status",
		       WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
		       err[CG_SMALL] < 0 ? "joining the cgroup" : "the small instance", kills, oom_all);
	}
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("status %#x", status);
	EXPECT_EQ(0, kills) TH_LOG("the cgroup's OOM killer ran");
	EXPECT_EQ(0, oom_all) TH_LOG("the OOM killer ran");
	munmap(err, CG_STEPS * sizeof(*err));
	EXPECT_EQ(0, rmdir(cg)) TH_LOG("rmdir %s: %s", cg, strerror(errno));
	if (mounted)
		EXPECT_EQ(0, umount("/sys/fs/cgroup")) TH_LOG("%s", strerror(errno));
}

/* The most files each of the threads making instances of the largest geometry opens. */
#define MAKER_FILES 16

/* One of the threads making instances of the largest geometry at once. */
struct maker {
	pthread_t t;
	const struct tw_config *c;
	pthread_barrier_t *start;
	int fds[MAKER_FILES], n, ret, err;
};

/* Makes instances on new files, from when all threads are ready, until a CONFIGURE fails. */
static void *make_instances(void *arg)
{
	struct maker *m = arg;

	pthread_barrier_wait(m->start);
	while (m->n < MAKER_FILES) {
		m->fds[m->n] = open(TW_DEVICE, O_RDWR);
		if (m->fds[m->n] < 0) {
			m->ret = -1;
			m->err = errno;
			break;
		}
		m->ret = ioctl(m->fds[m->n], TW_IOC_CONFIGURE, m->c);
		m->err = errno;
		m->n++;
		if (m->ret)
			break;
	}
	return NULL;
}

/*
 * The same made at once by 32 threads, each on files of its own, all starting together: the
 * memory one CONFIGURE is granted counts as taken for the others while it is being made, and the
 * grants under way together stay within half the memory available, so that however the threads
 * meet, each ends with ENOMEM and the OOM killer never runs (before, every thread could be
 * granted half of the same memory available at once; then, each grant within half of what the
 * others left, the threads took nearly all of it between them, and the OOM killer ran once
 * KASAN also checked vmalloc'ed memory, whose shadow the grants did not count).
 */
TEST_F_TIMEOUT(file, instances_made_at_once_beyond_the_memory_fail_with_enomem_and_kill_nothing,
	       900)
{
	enum { T = 32 };
	long long ram = (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
	long long oom_before = vmstat("oom_kill"), oom_after;
	static struct maker m[T];
	pthread_barrier_t start;
	struct tw_stats st;
	int i, k, made = 0;

	if (self->fd < 0 || largest_first(_metadata, self->fd, T * MAKER_FILES, &st))
		return;
	ASSERT_EQ(0, pthread_barrier_init(&start, NULL, T));
	for (i = 0; i < T; i++) {
		m[i] = (struct maker){ .c = &largest, .start = &start };
		ASSERT_EQ(0, pthread_create(&m[i].t, NULL, make_instances, &m[i]));
	}
	for (i = 0; i < T; i++)
		pthread_join(m[i].t, NULL);
	pthread_barrier_destroy(&start);
	oom_after = vmstat("oom_kill");
	for (i = 0; i < T; i++) {
		k = m[i].n - !!m[i].ret; /* the instances thread i made */
		made += k;
		if (k)
			TH_LOG("thread %d: %d instances, then %s", i, k,
			       m[i].ret ? strerror(m[i].err) : "configured");
		EXPECT_EQ(-1, m[i].ret) TH_LOG("thread %d made all its instances", i);
		EXPECT_EQ(ENOMEM, m[i].err) TH_LOG("thread %d", i);
	}
	TH_LOG("%d instances of %llu MiB at once on %lld MiB of memory; OOM kills %lld", made + 1,
	       st.memory_bytes >> 20, ram >> 20, oom_after - oom_before);
	EXPECT_EQ(oom_before, oom_after) TH_LOG("the OOM killer ran");
	for (i = 0; i < T; i++)
		for (k = 0; k < m[i].n; k++)
			if (m[i].fds[k] >= 0)
				close(m[i].fds[k]);
}

TEST_F_TIMEOUT(file, nonblocking_read_beside_a_blocked_reader_gets_eagain, 120)
{
	struct blocked b = { 0 };
	struct tw_fired rec;
	pthread_t t;
	__u64 t0;
	int fd = self->fd, flags;

	if (fd < 0)
		return;
	ASSERT_EQ(0, configure_manual(fd, 0, 0, 16));
	b.fd = fd;
	ASSERT_EQ(0, pthread_create(&t, NULL, blocked_read, &b));
	ASSERT_TRUE(wait_blocked(&b));
	flags = fcntl(fd, F_GETFL);
	ASSERT_EQ(0, fcntl(fd, F_SETFL, flags | O_NONBLOCK));
	t0 = now_ns();
	EXPECT_EQ(-1, read(fd, &rec, sizeof(rec)));
	EXPECT_EQ(EAGAIN, errno);
	EXPECT_GT(PROMPT_NS, now_ns() - t0);
	ASSERT_EQ(0, fcntl(fd, F_SETFL, flags));
	/* The blocked reader is still there, and gets the next record. */
	EXPECT_EQ(0, atomic_load(&b.done));
	ASSERT_EQ(0, set_callout(fd, 1, 99, NULL));
	ASSERT_EQ(0, advance(fd, 1));
	ASSERT_TRUE(wait_done(&b, PROMPT_NS));
	pthread_join(t, NULL);
	EXPECT_EQ(sizeof(rec), b.ret);
}

/* The voluntary context switches of thread `tid` so far, or -1. */
static long long voluntary_switches(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", tid);
	return key_value(path, "voluntary_ctxt_switches");
}

/*
 * A record wakes one of the readers blocked on the ring, not all of them: waking all would walk
 * the whole wait queue with interrupts masked (in the hrtimer's callback, on the real clock), and
 * every reader but one would find the ring empty and sleep again. The readers that did not get
 * the record must not have run: each is asleep in read(2) again, its count of voluntary context
 * switches what it was before (a reader woken for nothing sleeps again, and counts one more).
 * Then records for all the others come at once, one notification for them: each reader that
 * takes one and leaves some behind wakes the next, and all return.
 */
TEST_F_TIMEOUT(file, a_record_wakes_one_blocked_reader_and_each_the_next, 120)
{
	enum { R = 8 };
	struct blocked b[R] = { 0 };
	long long before[R], after;
	pthread_t t[R];
	int fd = self->fd, i, first = -1, woken = 0, done;
	__u64 t0;

	if (fd < 0)
		return;
	ASSERT_EQ(0, configure_manual(fd, 0, 0, 64));
	for (i = 0; i < R; i++) {
		b[i].fd = fd;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, blocked_read, &b[i]));
	}
	for (i = 0; i < R; i++) {
		ASSERT_TRUE(wait_blocked(&b[i])) TH_LOG("reader %d is not asleep in read(2)", i);
	}
	for (i = 0; i < R; i++) {
		before[i] = voluntary_switches(atomic_load(&b[i].tid));
		ASSERT_LE(0, before[i]);
	}
	ASSERT_EQ(0, set_callout(fd, 1, 1, NULL));
	ASSERT_EQ(0, advance(fd, 1));
	/* The reader that got it returns; the others are asleep in read(2) again, or never woke. */
	t0 = now_ns();
	while (first < 0 && now_ns() - t0 < PROMPT_NS) {
		for (i = 0; i < R; i++)
			if (atomic_load(&b[i].done))
				first = i;
		usleep(1000);
	}
	ASSERT_LE(0, first) TH_LOG("no reader returned with the record");
	EXPECT_EQ(sizeof(struct tw_fired), b[first].ret);
	for (i = 0; i < R; i++) {
		if (i == first)
			continue;
		ASSERT_TRUE(wait_blocked(&b[i])) TH_LOG("reader %d is not asleep in read(2)", i);
		after = voluntary_switches(atomic_load(&b[i].tid));
		ASSERT_LE(0, after);
		woken += after != before[i];
	}
	TH_LOG("one record: reader %d read it, %d of the other %d were woken", first, woken, R - 1);
	EXPECT_EQ(0, woken);
	/* A record each for the rest, fired on one tick. */
	for (i = 0; i < R - 1; i++) {
		ASSERT_EQ(0, set_callout(fd, 1, 2 + i, NULL));
	}
	ASSERT_EQ(0, advance(fd, 1));
	for (done = 0, i = 0; i < R; i++) {
		done += wait_done(&b[i], PROMPT_NS);
		EXPECT_EQ(sizeof(struct tw_fired), b[i].ret) TH_LOG("reader %d: %s", i,
								    strerror(b[i].err));
	}
	ASSERT_EQ(R, done) TH_LOG("readers still blocked with records in the ring");
	for (i = 0; i < R; i++)
		pthread_join(t[i], NULL);
}

/* ---- CPU hotplug ----------------------------------------------------------------------------- */

/*
 * The real clock while a CPU goes offline and online again and again: the instance's hrtimer
 * migrates with the CPU that had it, and every callout still fires once, on its tick or later,
 * never early. Skipped where no CPU can go offline (one CPU, or a kernel without hotplug).
 */
#define CPU1 "/sys/devices/system/cpu/cpu1"
#define CPU1_ONLINE CPU1 "/online"

/* Writes "0" or "1" to CPU1_ONLINE; 0, or -1 on failure. */
static int cpu1_online(int on)
{
	return write_at(CPU1, "online", on ? "1" : "0");
}

struct toggler {
	atomic_int done;
	int toggles, failures;
};

/* Takes CPU 1 offline and online again every 20 ms until `done`, and leaves it online. */
static void *toggle_cpu1(void *arg)
{
	struct toggler *t = arg;

	while (!atomic_load(&t->done)) {
		if (cpu1_online(t->toggles & 1))
			t->failures++;
		t->toggles++;
		usleep(20000);
	}
	if (cpu1_online(1))
		t->failures++;
	return NULL;
}

FIXTURE(hotplug)
{
	int fd;
	struct toggler tg;
	pthread_t t;
	bool toggling;
};

TW_VARIANT_PER_SCHEME(hotplug);

FIXTURE_SETUP(hotplug)
{
	memset(&self->tg, 0, sizeof(self->tg));
	self->toggling = false;
	self->fd = tw_open(_metadata);
}

/* Also after a failed assertion: the toggling stops, and CPU 1 is left online. */
FIXTURE_TEARDOWN(hotplug)
{
	if (self->toggling) {
		atomic_store(&self->tg.done, 1);
		pthread_join(self->t, NULL);
	}
	if (self->fd >= 0) {
		cpu1_online(1);
		close(self->fd);
	}
}

TEST_F_TIMEOUT(hotplug, callouts_fire_once_never_early_while_a_cpu_comes_and_goes, 300)
{
	enum { N = 2000, SPAN = 1500 };
	static struct tw_fired rec[N];
	static unsigned char seen[N];
	struct toggler *tg = &self->tg;
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_REAL,
			       .slots = variant->slots, .tick_ns = 1000000, .capacity = N };
	struct tw_stats st;
	int i, got = 0;
	__u64 t0;

	if (self->fd < 0)
		return;
	if (access(CPU1_ONLINE, W_OK) || cpu1_online(0))
		TW_SKIP(return, "CPU 1 cannot go offline here");
	ASSERT_EQ(0, cpu1_online(1));
	memset(seen, 0, sizeof(seen));
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_CONFIGURE, &c)) TH_LOG("%s", strerror(errno));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 1 + i * 7 % SPAN, i, NULL));
	}
	ASSERT_EQ(0, pthread_create(&self->t, NULL, toggle_cpu1, tg));
	self->toggling = true;
	while (got < N) {
		struct pollfd p = { .fd = self->fd, .events = POLLIN };
		ssize_t r;
		int k;

		t0 = now_ns();
		while (!poll(&p, 1, 100) && now_ns() - t0 < PROMPT_NS)
			;
		if (!(p.revents & POLLIN))
			break;
		r = read(self->fd, rec, sizeof(rec));
		if (r <= 0)
			break;
		for (k = 0; k < (int)(r / sizeof(rec[0])); k++) {
			__u64 c = rec[k].cookie;

			EXPECT_LE(rec[k].deadline, rec[k].fired) TH_LOG("callout %llu early", c);
			ASSERT_GT(N, c);
			EXPECT_EQ(0, seen[c]) TH_LOG("callout %llu fired twice", c);
			seen[c] = 1;
		}
		got += r / sizeof(rec[0]);
	}
	atomic_store(&tg->done, 1);
	pthread_join(self->t, NULL);
	self->toggling = false;
	ASSERT_EQ(0, get_stats(self->fd, &st));
	TH_LOG("%d of %d fired while CPU 1 went off and on %d times; %llu wakeups, %llu overruns",
	       got, N, tg->toggles, st.wakeups, st.overruns);
	EXPECT_EQ(0, tg->failures);
	EXPECT_EQ(N, got) TH_LOG("callouts lost: the clock stopped with its CPU?");
	EXPECT_EQ(N, st.fired);
	EXPECT_EQ(0, st.outstanding);
}

/* ---- poll and epoll ------------------------------------------------------------------------- */

FIXTURE(readiness)
{
	int fd;
};

TW_VARIANT_PER_SCHEME(readiness);

FIXTURE_SETUP(readiness)
{
	self->fd = tw_open(_metadata);
	if (self->fd >= 0 && !(features(_metadata, self->fd) & TW_FEATURE_POLL))
		TW_SKIP(return, "the module is not pollable (no TW_FEATURE_POLL: kernel without "
			"poll for Rust misc devices)");
}

FIXTURE_TEARDOWN(readiness)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

static int epoll_ready(int ep)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, 0);
}

TEST_F(readiness, poll_is_readable_exactly_while_a_record_waits)
{
	struct tw_fired rec;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_manual(self->fd, variant->scheme, variant->slots, 16));
	EXPECT_FALSE(readable(self->fd));
	ASSERT_EQ(0, set_callout(self->fd, 5, 1, NULL));
	ASSERT_EQ(0, advance(self->fd, 4));
	EXPECT_FALSE(readable(self->fd)) TH_LOG("readable before the callout fired");
	ASSERT_EQ(0, advance(self->fd, 1));
	EXPECT_TRUE(readable(self->fd)) TH_LOG("not readable after the callout fired");
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	EXPECT_FALSE(readable(self->fd)) TH_LOG("readable after the record was read");
	/* Two records: readable until both are read. */
	ASSERT_EQ(0, set_callout(self->fd, 1, 2, NULL));
	ASSERT_EQ(0, set_callout(self->fd, 1, 3, NULL));
	ASSERT_EQ(0, advance(self->fd, 1));
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	EXPECT_TRUE(readable(self->fd));
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	EXPECT_FALSE(readable(self->fd));
}

TEST_F(readiness, epoll_level_triggered)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct tw_fired rec;
	int ep;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_manual(self->fd, variant->scheme, variant->slots, 16));
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	EXPECT_EQ(0, epoll_ready(ep));
	ASSERT_EQ(0, set_callout(self->fd, 3, 1, NULL));
	ASSERT_EQ(0, advance(self->fd, 2));
	EXPECT_EQ(0, epoll_ready(ep)) TH_LOG("EPOLLIN before the callout fired");
	ASSERT_EQ(0, advance(self->fd, 1));
	EXPECT_EQ(1, epoll_ready(ep));
	EXPECT_EQ(1, epoll_ready(ep)) TH_LOG("level-triggered: still ready until read");
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	EXPECT_EQ(0, epoll_ready(ep)) TH_LOG("EPOLLIN after the record was read");
	close(ep);
}

TEST_F(readiness, epoll_edge_triggered)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET };
	struct tw_fired rec[4];
	int ep;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_manual(self->fd, variant->scheme, variant->slots, 16));
	ep = epoll_create1(0);
	ASSERT_LE(0, ep);
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, self->fd, &ev));
	EXPECT_EQ(0, epoll_ready(ep));
	ASSERT_EQ(0, set_callout(self->fd, 3, 1, NULL));
	ASSERT_EQ(0, set_callout(self->fd, 6, 2, NULL));
	ASSERT_EQ(0, advance(self->fd, 2));
	EXPECT_EQ(0, epoll_ready(ep)) TH_LOG("EPOLLIN before the callout fired");
	ASSERT_EQ(0, advance(self->fd, 1));
	EXPECT_EQ(1, epoll_ready(ep)) TH_LOG("no edge when the first record came");
	EXPECT_EQ(0, epoll_ready(ep)) TH_LOG("edge-triggered: one event per edge");
	/* A new record is a new edge, read or not. */
	ASSERT_EQ(0, advance(self->fd, 3));
	EXPECT_EQ(1, epoll_ready(ep)) TH_LOG("no edge when the second record came");
	EXPECT_EQ(2, drain(self->fd, rec, 4));
	EXPECT_EQ(0, epoll_ready(ep));
	close(ep);
}

/*
 * The real clock wakes a poll(2) that waits: not before the deadline. The period is named, not
 * left to the module's tick_us, so that the test takes as long whatever the module was loaded
 * with.
 */
TEST_F_TIMEOUT(readiness, poll_waits_for_the_real_clock, 60)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_REAL,
			       .slots = variant->slots, .tick_ns = 1 * MS, .capacity = 16 };
	struct pollfd p;
	struct tw_fired rec;
	__u64 t0, t;

	if (self->fd < 0)
		return;
	t0 = now_ns();
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	ASSERT_EQ(0, set_callout(self->fd, 200, 5, NULL));
	p = (struct pollfd){ .fd = self->fd, .events = POLLIN };
	ASSERT_EQ(1, poll(&p, 1, 30000));
	t = now_ns();
	EXPECT_TRUE(p.revents & POLLIN);
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	EXPECT_LE(rec.deadline * MS, t - t0) TH_LOG("poll woke before the deadline");
	TH_LOG("poll woke %lld us after the deadline", (long long)(t - t0 - rec.deadline * MS) / 1000);
}

/* ---- io_uring ----------------------------------------------------------------------------- */

/* A ring of a few entries, through the raw system calls (no liburing needed). */
struct uring {
	int fd;
	void *sq, *cq;
	size_t sq_len, cq_len, sqes_len;
	struct io_uring_sqe *sqes;
	unsigned int *sq_tail, *sq_mask, *sq_array, *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
};

static void uring_exit(struct uring *r)
{
	if (r->sqes && r->sqes != MAP_FAILED)
		munmap(r->sqes, r->sqes_len);
	if (r->cq && r->cq != MAP_FAILED)
		munmap(r->cq, r->cq_len);
	if (r->sq && r->sq != MAP_FAILED)
		munmap(r->sq, r->sq_len);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
}

/* 0, or -1 with errno set. */
static int uring_init(struct uring *r)
{
	struct io_uring_params p;
	int prot = PROT_READ | PROT_WRITE, flags = MAP_SHARED | MAP_POPULATE;

	memset(r, 0, sizeof(*r));
	memset(&p, 0, sizeof(p));
	r->fd = syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -1;
	r->sq_len = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	r->cq_len = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_len = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sq = mmap(NULL, r->sq_len, prot, flags, r->fd, IORING_OFF_SQ_RING);
	r->cq = mmap(NULL, r->cq_len, prot, flags, r->fd, IORING_OFF_CQ_RING);
	r->sqes = mmap(NULL, r->sqes_len, prot, flags, r->fd, IORING_OFF_SQES);
	if (r->sq == MAP_FAILED || r->cq == MAP_FAILED || r->sqes == MAP_FAILED) {
		uring_exit(r);
		return -1;
	}
	r->sq_tail = (void *)((char *)r->sq + p.sq_off.tail);
	r->sq_mask = (void *)((char *)r->sq + p.sq_off.ring_mask);
	r->sq_array = (void *)((char *)r->sq + p.sq_off.array);
	r->cq_head = (void *)((char *)r->cq + p.cq_off.head);
	r->cq_tail = (void *)((char *)r->cq + p.cq_off.tail);
	r->cq_mask = (void *)((char *)r->cq + p.cq_off.ring_mask);
	r->cqes = (void *)((char *)r->cq + p.cq_off.cqes);
	return 0;
}

/* Submits a read of len bytes of fd into buf, tagged data: 1 (submitted), or -1. */
static int uring_read(struct uring *r, int fd, void *buf, unsigned int len, __u64 data)
{
	unsigned int tail = *r->sq_tail, i = tail & *r->sq_mask;
	struct io_uring_sqe *e = &r->sqes[i];

	memset(e, 0, sizeof(*e));
	e->opcode = IORING_OP_READ;
	e->fd = fd;
	e->addr = (unsigned long)buf;
	e->len = len;
	e->off = -1; /* the file's position, which the device ignores */
	e->user_data = data;
	r->sq_array[i] = i;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
	return syscall(__NR_io_uring_enter, r->fd, 1, 0, 0, NULL, 0);
}

/* Takes a completion into *cqe, waiting for one if `wait`: 1, 0 (none, not waiting), or -1. */
static int uring_complete(struct uring *r, bool wait, struct io_uring_cqe *cqe)
{
	unsigned int head = *r->cq_head;

	while (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE)) {
		if (!wait)
			return 0;
		if (syscall(__NR_io_uring_enter, r->fd, 0, 1, IORING_ENTER_GETEVENTS, NULL, 0) < 0 &&
		    errno != EINTR)
			return -1;
	}
	*cqe = r->cqes[head & *r->cq_mask];
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return 1;
}

/*
 * io_uring reads the device as a reader expects: a read submitted while no record waits neither
 * completes (no EAGAIN leaks out of io_uring's attempt that must not wait, which polls instead)
 * nor holds the submitting call; it completes with the record once its callout fires. A read
 * still waiting when its file is closed and its ring torn down is let go of: the instance is
 * released (io_uring's teardown runs on a workqueue: its release is waited for, up to
 * PROMPT_NS).
 */
TEST_F_TIMEOUT(readiness, io_uring_reads_a_record_when_it_comes_and_lets_go_of_a_waiting_read, 60)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_REAL,
			       .slots = variant->slots, .tick_ns = 1 * MS, .capacity = 16 };
	struct tw_fired rec[2];
	struct io_uring_cqe cqe;
	struct tw_info before, info;
	struct uring r;
	int fd2;

	if (self->fd < 0)
		return;
	if (uring_init(&r))
		TW_SKIP(return, "no io_uring: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	ASSERT_EQ(1, uring_read(&r, self->fd, rec, sizeof(rec), 1)) TH_LOG("%s", strerror(errno));
	/* Nothing to read: the read waits (no completion can come before the callout is set). */
	ASSERT_EQ(0, uring_complete(&r, false, &cqe))
		TH_LOG("completed with %d (%s) before any callout", cqe.res, strerror(-cqe.res));
	ASSERT_EQ(0, set_callout(self->fd, 20, 77, NULL));
	ASSERT_EQ(1, uring_complete(&r, true, &cqe)) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(1, cqe.user_data);
	ASSERT_EQ((int)sizeof(rec[0]), cqe.res) TH_LOG("res %d (%s)", cqe.res, strerror(-cqe.res));
	EXPECT_EQ(77, rec[0].cookie);
	EXPECT_EQ(TW_ORIGIN_CALLOUT, rec[0].origin);

	/* A read left waiting on a file closed, and its ring torn down: the instance goes. */
	ASSERT_EQ(0, get_info(self->fd, &before));
	fd2 = tw_open(_metadata);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, configure_real(fd2, variant->scheme, variant->slots, 1 * MS));
	ASSERT_EQ(1, uring_read(&r, fd2, rec, sizeof(rec), 2));
	ASSERT_EQ(0, uring_complete(&r, false, &cqe));
	close(fd2);
	ASSERT_EQ(0, get_info(self->fd, &info));
	EXPECT_EQ(before.instances + 1, info.instances) TH_LOG("the waiting read holds the file");
	uring_exit(&r);
	WAIT_FOR(!get_info(self->fd, &info) && info.instances == before.instances);
	ASSERT_EQ(0, get_info(self->fd, &info));
	EXPECT_EQ(before.instances, info.instances) TH_LOG("the instance not released in 30 s");
}

/* ---- A signal ends long ioctls --------------------------------------------------------------- */

static volatile __u64 signal_at;

static void note_signal(int sig)
{
	(void)sig;
	signal_at = now_ns();
}

/*
 * Runs ioctl(fd, cmd, arg) with SIGALRM due after `after_ms`; returns the ioctl's result, and
 * in *late_ns how long after the signal was due it ended, or 0 if the signal did not come
 * while the ioctl ran (it ended first, or the signal came before it began). The handler runs
 * only on the way back to user space, so the time it notes says that the signal came, not
 * when: the time is measured from when the timer was due.
 */
static int interrupted_ioctl(struct __test_metadata *_metadata, int fd, unsigned long cmd,
			     void *arg, int after_ms, __u64 *late_ns)
{
	struct sigaction sa = { .sa_handler = note_signal }; /* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_sec = after_ms / 1000,
					      .tv_usec = after_ms % 1000 * 1000 } };
	__u64 t0, due, began, t;
	int ret, err;

	signal_at = 0;
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	t0 = now_ns();
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	due = t0 + after_ms * MS;
	began = now_ns();
	ret = ioctl(fd, cmd, arg);
	err = errno;
	t = now_ns();
	*late_ns = 0;
	if (!signal_at || signal_at < began) {
		TH_LOG("the ioctl ran %llu ms; the signal %s", (t - began) / MS,
		       signal_at ? "came before it began" : "had not come when it ended");
		errno = err;
		return ret;
	}
	*late_ns = t > due ? t - due : 1;
	TH_LOG("the ioctl ran %llu ms and ended %llu us after the signal was due",
	       (t - began) / MS, *late_ns / 1000);
	EXPECT_GT(PROMPT_NS, *late_ns) TH_LOG("the signal took %llu ms to end it", *late_ns / MS);
	errno = err;
	return ret;
}

/*
 * Skips the test unless what was to interrupt the ioctl `came` while it ran (`why` not); an
 * ioctl it did not interrupt must have succeeded (returned `ret` 0; else `err` says why), as
 * every call these tests interrupt does when it runs to its end.
 */
#define SKIP_IF_NOT_SLOW(came, ret, err, why)                                              \
	do {                                                                               \
		int err_ = (err);                                                          \
                                                                                           \
		if (!(came)) {                                                             \
			ASSERT_EQ(0, ret)                                                  \
				TH_LOG("not interrupted, it failed: %s", strerror(err_));  \
			TW_SKIP(return, why ": not slow enough here");                     \
		}                                                                          \
	} while (0)

/*
 * The signal did not come while the ioctl ran: it ended first (the geometry was not slow
 * enough here), or, after a stall, the signal came before it began.
 */
#define SKIP_IF_UNSIGNALLED(late, ret, err)                                                \
	SKIP_IF_NOT_SLOW(late, ret, err, "the ioctl ended before the signal, or the signal "   \
			 "came before it began")

/*
 * Slow starts: the sorted lists (scheme 2, and scheme 5 with its fewest slots) filled with n
 * callouts, then asked for callouts later than all of them, each of which walks all n.
 */
FIXTURE(slow_start)
{
	int fd;
};

FIXTURE_VARIANT(slow_start)
{
	__u32 scheme;
	int min_slots;
};

FIXTURE_VARIANT_ADD(slow_start, scheme2_ordered_list) { .scheme = 2 };
FIXTURE_VARIANT_ADD(slow_start, scheme5_min_slots) { .scheme = 5, .min_slots = 1 };

#define SLOW_N 100000

#define SLOW_FAR (1ULL << 30)

FIXTURE_SETUP(slow_start)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_MANUAL,
			       .capacity = 2 * SLOW_N };

	self->fd = tw_open(_metadata);
	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_slots(_metadata, self->fd, &c, variant->min_slots))
		TH_LOG("configure: %s", strerror(errno));
	fill_descending(_metadata, self->fd, SLOW_N, SLOW_FAR, 1);
}

FIXTURE_TEARDOWN(slow_start)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(slow_start, a_signal_ends_a_batch, 300)
{
	enum { OPS = TW_MAX_BATCH };
	struct tw_op *ops = calloc(OPS, sizeof(*ops));
	struct tw_batch b = { .ops = (uintptr_t)ops, .count = OPS };
	struct tw_stats st;
	__u64 late, i, ran = 0;
	int ret, err;

	if (self->fd < 0)
		return;
	ASSERT_TRUE(ops != NULL);
	for (i = 0; i < OPS; i++) /* later than all: each walks the whole list */
		ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = SLOW_FAR + 1 + i, .b = i,
					 .result = 1 };
	ret = interrupted_ioctl(_metadata, self->fd, TW_IOC_BATCH, &b, 200, &late);
	err = errno;
	SKIP_IF_UNSIGNALLED(late, ret, err);
	ASSERT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err);
	/* A prefix ran; the rest were not run and say so. */
	while (ran < OPS && ops[ran].result == 0)
		ran++;
	for (i = ran; i < OPS; i++) {
		ASSERT_EQ(-EINTR, ops[i].result) TH_LOG("op %llu", i);
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(SLOW_N + ran, st.outstanding);
	EXPECT_GE(hold_work_of(self->fd), st.max_hold_work);
	TH_LOG("%llu of %u operations ran; longest hold %llu entries, %llu us", ran, OPS,
	       st.max_hold_work, st.max_hold_ns / 1000);
	free(ops);
}

/*
 * A batch of resets (TW_OP_RESET: an unset, then a set later than all, which walks the list)
 * cut short by a signal loses no callout: each operation that ran has its old callout gone and
 * its new one pending, on its deadline; each that did not run says -EINTR and left its old
 * callout pending. The signal lands in a set's walk (where the batch spends its time), after
 * its unset.
 */
TEST_F_TIMEOUT(slow_start, a_signal_in_a_batch_of_resets_loses_no_callout, 300)
{
	enum { OPS = 4096 };
	struct tw_op *ops = calloc(OPS, sizeof(*ops));
	__u64 *old = calloc(OPS, sizeof(*old));
	struct tw_batch b = { .ops = (uintptr_t)ops, .count = OPS };
	struct tw_stats st;
	struct tw_query q;
	__u64 late, i, ran = 0;
	int ret, err;

	if (self->fd < 0)
		return;
	ASSERT_TRUE(ops != NULL);
	ASSERT_TRUE(old != NULL);
	/* OPS callouts more, each earlier than all: placed at the head, no walk. */
	for (i = 0; i < OPS; i++)
		ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = SLOW_FAR - SLOW_N - i,
					 .b = SLOW_N + i };
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b)) TH_LOG("%s", strerror(errno));
	for (i = 0; i < OPS; i++) {
		ASSERT_EQ(0, ops[i].result) TH_LOG("set %llu", i);
		old[i] = ops[i].handle;
		ops[i] = (struct tw_op){ .op = TW_OP_RESET, .handle = old[i],
					 .a = SLOW_FAR + 1 + i, .b = i, .result = 1 };
	}
	ret = interrupted_ioctl(_metadata, self->fd, TW_IOC_BATCH, &b, 200, &late);
	err = errno;
	SKIP_IF_UNSIGNALLED(late, ret, err);
	ASSERT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err);
	while (ran < OPS && ops[ran].result == 0)
		ran++;
	for (i = 0; i < OPS; i++) {
		q = (struct tw_query){ .handle = old[i] };
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_QUERY, &q));
		ASSERT_EQ(i >= ran, q.pending)
			TH_LOG("reset %llu (%llu ran, result %d): old callout pending %u", i, ran,
			       ops[i].result, q.pending);
		if (i >= ran) {
			ASSERT_EQ(-EINTR, ops[i].result) TH_LOG("reset %llu", i);
			continue;
		}
		q = (struct tw_query){ .handle = ops[i].handle };
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_QUERY, &q));
		ASSERT_EQ(1, q.pending) TH_LOG("reset %llu: new callout", i);
		EXPECT_EQ(SLOW_FAR + 1 + i, q.deadline - q.now) TH_LOG("reset %llu", i);
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(SLOW_N + OPS, st.outstanding);
	EXPECT_GE(hold_work_of(self->fd), st.max_hold_work);
	TH_LOG("%llu of %u resets ran", ran, OPS);
	free(old);
	free(ops);
}

/*
 * A call waiting for another's long operation on the same file has done nothing yet: a signal
 * whose handler was installed with SA_RESTART restarts it (the wait ends with ERESTARTSYS), and
 * it runs once the long operation ends. Here a set, or a batch of one set, waits for a long
 * batch; a third thread sends the waiting thread a signal (SA_RESTART) while it waits, then ends
 * the long batch with another.
 */
/* An ioctl run by a thread of its own: `done` once it has returned `ret`, with errno `err`. */
struct bg_ioctl {
	int fd;
	unsigned long cmd;
	void *arg;
	pthread_t thread;
	atomic_int done;
	int ret, err;
};

static void *run_bg_ioctl(void *arg)
{
	struct bg_ioctl *c = arg;

	c->ret = ioctl(c->fd, c->cmd, c->arg);
	c->err = errno;
	atomic_store(&c->done, 1);
	return NULL;
}

struct long_call {
	struct bg_ioctl batch;
	pthread_t waiter;
	_Atomic pid_t waiter_tid;
	atomic_int restarts;
};

static struct long_call *restarting;

static void note_restart(int sig)
{
	(void)sig;
	atomic_fetch_add(&restarting->restarts, 1);
}

static void *kick(void *arg)
{
	struct long_call *l = arg;

	/* The waiter asleep in its ioctl: a signal with SA_RESTART; it restarts and waits again. */
	if (WAIT_FOR(asleep_in(atomic_load(&l->waiter_tid), SYS_ioctl))) {
		pthread_kill(l->waiter, SIGUSR1);
		if (WAIT_FOR(atomic_load(&l->restarts) > 0))
			WAIT_FOR(asleep_in(atomic_load(&l->waiter_tid), SYS_ioctl));
	}
	/* Then the batch ends, on a signal without SA_RESTART. */
	pthread_kill(l->batch.thread, SIGUSR2);
	return NULL;
}

/* The waiting call: a set, alone or as the one operation of a batch. */
static int set_waiting(int fd, int batch, __u64 *h)
{
	struct tw_op op = { .op = TW_OP_SET, .a = SLOW_FAR + 1, .b = 1 };
	struct tw_batch b = { .ops = (uintptr_t)&op, .count = 1 };

	if (!batch)
		return set_callout(fd, SLOW_FAR + 1, 1, h);
	if (ioctl(fd, TW_IOC_BATCH, &b))
		return -1;
	*h = op.handle;
	errno = -op.result;
	return op.result ? -1 : 0;
}

static void waiting_call_restarts(struct __test_metadata *_metadata, int fd, int batch)
{
	struct sigaction sa = { .sa_handler = note_restart, .sa_flags = SA_RESTART };
	struct tw_op *ops = calloc(TW_MAX_BATCH, sizeof(*ops));
	struct tw_batch b = { .ops = (uintptr_t)ops, .count = TW_MAX_BATCH };
	struct long_call l = { .batch = { .fd = fd, .cmd = TW_IOC_BATCH, .arg = &b } };
	struct tw_stats st;
	pthread_t kicker;
	__u64 h, i;
	int ret, err;

	ASSERT_TRUE(ops != NULL);
	for (i = 0; i < TW_MAX_BATCH; i++) /* later than all: each walks the whole list */
		ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = SLOW_FAR + 1 + i, .b = i };
	restarting = &l;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, catch_signal(SIGUSR2));
	l.waiter = pthread_self();
	atomic_store(&l.waiter_tid, gettid());
	ASSERT_EQ(0, pthread_create(&l.batch.thread, NULL, run_bg_ioctl, &l.batch));
	/* The batch has set a callout: it holds the instance's slow right. */
	ASSERT_TRUE(WAIT_FOR(!get_stats(fd, &st) && st.outstanding > SLOW_N));
	ASSERT_EQ(0, pthread_create(&kicker, NULL, kick, &l));
	ret = set_waiting(fd, batch, &h);
	err = errno;
	pthread_join(kicker, NULL);
	pthread_join(l.batch.thread, NULL);
	if (!l.batch.ret)
		TW_SKIP(return, "the batch ended before the signal: not slow enough");
	EXPECT_EQ(EINTR, l.batch.err);
	EXPECT_EQ(1, atomic_load(&l.restarts)) TH_LOG("the waiting call saw no signal");
	EXPECT_EQ(0, ret) TH_LOG("the waiting %s: %s", batch ? "batch" : "set", strerror(err));
	free(ops);
}

TEST_F_TIMEOUT(slow_start, a_call_waiting_for_a_long_one_restarts_with_sa_restart, 300)
{
	if (self->fd < 0)
		return;
	waiting_call_restarts(_metadata, self->fd, 0);
}

TEST_F_TIMEOUT(slow_start, a_batch_waiting_for_a_long_one_restarts_with_sa_restart, 300)
{
	if (self->fd < 0)
		return;
	waiting_call_restarts(_metadata, self->fd, 1);
}

/*
 * A signal ends a bench of the instance's resets, and a pair of them with Linux's timer_list
 * (TW_IOC_BENCH_PAIR), each walking the list over many holds: EINTR, and nothing of either
 * left behind.
 */
TEST_F_TIMEOUT(slow_start, a_signal_ends_a_bench, 300)
{
	struct tw_bench b = { .kind = TW_BENCH_SETCALLOUT, .iterations = TW_MAX_BENCH_ITERATIONS,
			      .min_ticks = SLOW_FAR + 1, .spread = 1000, .seed = 1 };
	struct tw_bench_pair p = {
		.instance = { .kind = TW_BENCH_MOD, .iterations = TW_MAX_BENCH_ITERATIONS,
			      .min_ticks = SLOW_FAR + 1, .spread = 1000, .seed = 1 },
		.baseline = { .kind = TW_BENCH_TIMER_LIST_MOD, .n = 1000,
			      .iterations = TW_MAX_BENCH_ITERATIONS,
			      .min_ticks = TW_MIN_BASELINE_TICKS, .spread = 1000, .seed = 2 },
	};
	const struct {
		unsigned long request;
		void *arg;
	} calls[] = { { TW_IOC_BENCH, &b }, { TW_IOC_BENCH_PAIR, &p } };
	struct tw_stats st;
	__u64 late;
	unsigned int i;
	int ret, err;

	if (self->fd < 0)
		return;
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		TH_LOG("request %#lx", calls[i].request);
		ret = interrupted_ioctl(_metadata, self->fd, calls[i].request, calls[i].arg, 200,
					&late);
		err = errno;
		SKIP_IF_UNSIGNALLED(late, ret, err);
		ASSERT_EQ(-1, ret);
		EXPECT_EQ(EINTR, err);
		/* Nothing of the bench is left behind. */
		ASSERT_EQ(0, get_stats(self->fd, &st));
		EXPECT_EQ(SLOW_N, st.outstanding);
		EXPECT_GE(hold_work_of(self->fd), st.max_hold_work);
	}
	/* A short pair runs as usual (its resets ahead of every callout: no long walks). */
	p.instance.min_ticks = 2;
	p.instance.iterations = p.baseline.iterations = 100;
	EXPECT_EQ(0, ioctl(self->fd, TW_IOC_BENCH_PAIR, &p)) TH_LOG("%s", strerror(errno));
	EXPECT_LT(0, p.instance.elapsed_ns);
	EXPECT_LT(0, p.baseline.elapsed_ns);
}

/*
 * The Linux baselines of TW_IOC_BENCH make, initialise and arm TW_MAX_CAPACITY kernel timers
 * before their first reset: a signal ends each of those steps between two chunks (EINTR), once
 * the timers made so far are taken down again.
 */
TEST_F_TIMEOUT(file, a_signal_ends_a_bench_of_linux_timers_while_they_are_made, 600)
{
	static const __u32 kinds[] = { TW_BENCH_TIMER_LIST, TW_BENCH_HRTIMER };
	__u64 late;
	unsigned int k;
	int ret, err;

	if (self->fd < 0)
		return;
	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		struct tw_bench b = { .kind = kinds[k], .n = TW_MAX_CAPACITY, .iterations = 1,
				      .min_ticks = TW_MIN_BASELINE_TICKS, .spread = 1000,
				      .seed = 1 };

		TH_LOG("bench kind %u", kinds[k]);
		ret = interrupted_ioctl(_metadata, self->fd, TW_IOC_BENCH, &b, 200, &late);
		err = errno;
		SKIP_IF_UNSIGNALLED(late, ret, err);
		ASSERT_EQ(-1, ret);
		EXPECT_EQ(EINTR, err);
		/* Nothing is left behind: a small bench of the same kind runs as usual. */
		b.n = 1000;
		b.iterations = 1000;
		EXPECT_EQ(0, ioctl(self->fd, TW_IOC_BENCH, &b)) TH_LOG("%s", strerror(errno));
		EXPECT_LT(0, b.elapsed_ns);
	}
}

/*
 * Once the timers of a Linux baseline are made and armed, taking them down takes about as long
 * again, and on a signal the module leaves that to a workqueue of its own: the signal ends the
 * bench at once, however many timers it had, and the next bench waits until they are gone,
 * answering signals meanwhile. The times are compared with the same machine's: the quicker of
 * two benches of the same timers, made and taken down, sets the scale; the signal comes well
 * after that many are made again, and ends the bench within a quarter of it (a teardown done
 * before returning takes more than that), or within half a second where the scale is short (a
 * fast machine, whose scheduler may stall the caller for that long). A guest stalled at the wrong
 * moment gets three tries.
 * 2^18 timers are enough for that, as every time is a fraction of the scale: the scale is
 * about 30 s on the debug kernel under emulation, where 2^20 timers made the test take nine
 * minutes of the kselftests' half hour.
 */
TEST_F_TIMEOUT(file, a_signal_ends_a_bench_of_linux_timers_without_waiting_for_their_teardown, 900)
{
	struct tw_bench b = { .kind = TW_BENCH_TIMER_LIST, .n = 1 << 18, .iterations = 1,
			      .min_ticks = TW_MIN_BASELINE_TICKS, .spread = 1000, .seed = 1 };
	struct tw_bench small = b;
	__u64 t0, t, scale = ~0ULL, late = ~0ULL, l, limit;
	int i, ret, err, waits = 0;

	if (self->fd < 0)
		return;
	for (i = 0; i < 2; i++) {
		t0 = now_ns();
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BENCH, &b)) TH_LOG("%s", strerror(errno));
		t = now_ns() - t0;
		scale = t < scale ? t : scale;
	}
	TH_LOG("%llu timers made, one reset, all taken down: %llu ms", (unsigned long long)b.n,
	       scale / MS);
	b.iterations = TW_MAX_BENCH_ITERATIONS;
	small.n = 1000;
	small.iterations = 1000;
	limit = scale / 4 > 500 * MS ? scale / 4 : 500 * MS;
	for (i = 0; i < 3 && late >= limit; i++) {
		ret = interrupted_ioctl(_metadata, self->fd, TW_IOC_BENCH, &b, 2 * scale / MS, &l);
		err = errno;
		SKIP_IF_UNSIGNALLED(l, ret, err);
		/*
		 * A signal during the resets ends the bench (EINTR); one once its results are out
		 * (a run quicker than the scale measured, say), during the teardown, is delivered
		 * on return (0). The teardown goes to the queue either way.
		 */
		if (ret) {
			ASSERT_EQ(-1, ret);
			ASSERT_EQ(EINTR, err);
		}
		late = l < late ? l : late;
		/*
		 * The next bench waits for the teardown, and a signal ends the wait. Once one has,
		 * the bench runs without a signal, to its end however long it takes here (the
		 * test's timeout catches a teardown that never ends).
		 */
		ret = interrupted_ioctl(_metadata, self->fd, TW_IOC_BENCH, &small, 200, &l);
		if (ret) {
			ASSERT_EQ(EINTR, errno);
			waits++;
			ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BENCH, &small))
				TH_LOG("%s", strerror(errno));
		}
		EXPECT_LT(0, small.elapsed_ns);
	}
	TH_LOG("%d signals ended a wait for a teardown", waits);
	EXPECT_GT(limit, late) TH_LOG("the signal took %llu ms to end the bench", late / MS);
}

/*
 * Slow ticks: scheme 1, and scheme 6 with its fewest slots, filled with n callouts, and periodic
 * (no idle tick is skipped): every tick visits all n.
 */
FIXTURE(slow_tick)
{
	int fd;
};

FIXTURE_VARIANT(slow_tick)
{
	__u32 scheme;
	int min_slots;
	__u32 n;
};

/* n callouts, and room for one more (a start beside a long ADVANCE). */
FIXTURE_VARIANT_ADD(slow_tick, scheme1_straightforward) {
	.scheme = 1, .n = TW_MAX_CAPACITY_SCHEME1 - 1,
};
FIXTURE_VARIANT_ADD(slow_tick, scheme6_min_slots) { .scheme = 6, .min_slots = 1, .n = 100000 };

FIXTURE_SETUP(slow_tick)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_MANUAL,
			       .capacity = variant->n + 1, .flags = TW_CONFIG_PERIODIC };

	self->fd = tw_open(_metadata);
	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_slots(_metadata, self->fd, &c, variant->min_slots))
		TH_LOG("configure: %s", strerror(errno));
	fill_descending(_metadata, self->fd, variant->n, SLOW_FAR, 1);
}

FIXTURE_TEARDOWN(slow_tick)
{
	if (self->fd >= 0)
		close(self->fd);
}

TEST_F_TIMEOUT(slow_tick, a_signal_ends_an_advance, 300)
{
	__u64 n = TW_MAX_ADVANCE, late;
	struct tw_stats st;
	int ret, err;

	if (self->fd < 0)
		return;
	ret = interrupted_ioctl(_metadata, self->fd, TW_IOC_ADVANCE, &n, 200, &late);
	err = errno;
	SKIP_IF_UNSIGNALLED(late, ret, err);
	ASSERT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_GT(TW_MAX_ADVANCE, st.ticks);
	EXPECT_EQ(variant->n, st.outstanding);
	EXPECT_GE(hold_work_of(self->fd), st.max_hold_work);
	TH_LOG("%llu ticks ran; longest hold %llu entries, %llu us", st.ticks, st.max_hold_work,
	       st.max_hold_ns / 1000);
}

/*
 * An ADVANCE that would run for hours (each of its ticks visits every callout), in a thread; or
 * another long call made the same way (a batch).
 */
struct long_advance {
	struct bg_ioctl advance;
	atomic_int calls_done;
	atomic_int watchdog; /* the calls beside it had not returned after PROMPT_NS */
};

static void *end_long_advance(void *arg)
{
	struct long_advance *a = arg;

	if (!WAIT_FOR(atomic_load(&a->calls_done)))
		atomic_store(&a->watchdog, 1);
	pthread_kill(a->advance.thread, SIGUSR2);
	return NULL;
}

/*
 * Starts `a`'s ADVANCE in a thread, waits until it has ticked (it then holds the instance's slow
 * right), and starts `ender`, which ends it once the calls beside it are done, or after
 * PROMPT_NS.
 */
static void begin_long_advance(struct __test_metadata *_metadata, int fd, struct long_advance *a,
			       pthread_t *ender)
{
	struct tw_stats st;

	ASSERT_EQ(0, catch_signal(SIGUSR2));
	ASSERT_EQ(0, pthread_create(&a->advance.thread, NULL, run_bg_ioctl, &a->advance));
	ASSERT_TRUE(WAIT_FOR(atomic_load(&a->advance.done) || (!get_stats(fd, &st) && st.ticks)));
	ASSERT_EQ(0, pthread_create(ender, NULL, end_long_advance, a));
}

/*
 * Whether the ADVANCE still ran when the calls beside it returned, and the watchdog had not ended
 * it (calls that waited for it return once it ends, perhaps before its thread says it has); then
 * ends it.
 */
static int finish_long_advance(struct long_advance *a, pthread_t ender)
{
	int during = !atomic_load(&a->advance.done);

	atomic_store(&a->calls_done, 1);
	pthread_join(ender, NULL);
	pthread_join(a->advance.thread, NULL);
	return during && !atomic_load(&a->watchdog);
}

/*
 * A start or reset on a scheme that places a callout within one hold (all but schemes 2 and 5)
 * waits for no long operation on the same file: here a set and a reset of the callout it made
 * return while an ADVANCE runs (it would run for hours: each of its ticks visits every callout),
 * which a signal then ends. Should they wait for it, a watchdog ends the ADVANCE after
 * PROMPT_NS and they return after it.
 */
TEST_F_TIMEOUT(slow_tick, a_set_and_a_reset_wait_for_no_advance, 300)
{
	__u64 n = TW_MAX_ADVANCE;
	struct long_advance a = { .advance = { .fd = self->fd, .cmd = TW_IOC_ADVANCE, .arg = &n } };
	struct tw_reset reset = { .ticks = SLOW_FAR + 2 };
	struct tw_stats st;
	int set, moved, during;
	pthread_t ender;
	__u64 h = 0, t0, took;

	if (self->fd < 0)
		return;
	begin_long_advance(_metadata, self->fd, &a, &ender);
	t0 = now_ns();
	set = set_callout(self->fd, SLOW_FAR + 1, 1, &h);
	reset.handle = h;
	moved = ioctl(self->fd, TW_IOC_RESET, &reset);
	took = now_ns() - t0;
	during = finish_long_advance(&a, ender);
	if (!a.advance.ret)
		TW_SKIP(return, "the ADVANCE ended by itself: not slow enough here");
	EXPECT_EQ(EINTR, a.advance.err);
	EXPECT_EQ(0, set);
	EXPECT_EQ(0, moved);
	EXPECT_TRUE(during) TH_LOG("the set and the reset waited for the ADVANCE");
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(variant->n + 1, st.outstanding);
	EXPECT_EQ(0, unset_callout(self->fd, h));
	TH_LOG("set and reset in %llu us, beside an ADVANCE at tick %llu", took / 1000, st.ticks);
}

/*
 * Bad arguments fail at once, with their own errno, beside a long operation on the same file:
 * an ADVANCE of no ticks or of too many, an untimeout of function 0 (no callout can have it),
 * a bench of no known kind. Should they wait for the ADVANCE, a watchdog ends it after
 * PROMPT_NS, and they return after it.
 */
TEST_F_TIMEOUT(slow_tick, bad_arguments_fail_at_once_beside_an_advance, 300)
{
	__u64 n = TW_MAX_ADVANCE, none = 0, over = TW_MAX_ADVANCE + 1;
	struct long_advance a = { .advance = { .fd = self->fd, .cmd = TW_IOC_ADVANCE, .arg = &n } };
	struct tw_untimeout u = { .func = 0, .arg = 1 };
	struct tw_bench b = { .kind = 99, .iterations = 1, .min_ticks = 2, .spread = 1 };
	int e_none, e_over, e_untimeout, e_bench, during;
	struct tw_stats st;
	pthread_t ender;
	__u64 t0, took;

	if (self->fd < 0)
		return;
	begin_long_advance(_metadata, self->fd, &a, &ender);
	t0 = now_ns();
	e_none = ioctl(self->fd, TW_IOC_ADVANCE, &none) ? errno : 0;
	e_over = ioctl(self->fd, TW_IOC_ADVANCE, &over) ? errno : 0;
	e_untimeout = ioctl(self->fd, TW_IOC_UNTIMEOUT, &u) ? errno : 0;
	e_bench = ioctl(self->fd, TW_IOC_BENCH, &b) ? errno : 0;
	took = now_ns() - t0;
	during = finish_long_advance(&a, ender);
	if (!a.advance.ret)
		TW_SKIP(return, "the ADVANCE ended by itself: not slow enough here");
	EXPECT_EQ(EINTR, a.advance.err);
	EXPECT_EQ(EINVAL, e_none) TH_LOG("ADVANCE of 0: %s", strerror(e_none));
	EXPECT_EQ(EINVAL, e_over) TH_LOG("ADVANCE beyond TW_MAX_ADVANCE: %s", strerror(e_over));
	EXPECT_EQ(ENOENT, e_untimeout) TH_LOG("untimeout of function 0: %s", strerror(e_untimeout));
	EXPECT_EQ(EINVAL, e_bench) TH_LOG("bench of kind 99: %s", strerror(e_bench));
	EXPECT_TRUE(during) TH_LOG("the calls waited for the ADVANCE");
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(variant->n, st.outstanding);
	TH_LOG("four bad calls in %llu us, beside an ADVANCE at tick %llu", took / 1000, st.ticks);
}

/* A call in a thread that says which thread it is, so that asleep_in() can watch it. */
struct watched_ioctl {
	struct bg_ioctl call;
	_Atomic pid_t tid;
};

static void *run_watched_ioctl(void *arg)
{
	struct watched_ioctl *w = arg;

	atomic_store(&w->tid, gettid());
	return run_bg_ioctl(&w->call);
}

/*
 * A batch whose results cannot be written back (its array made read-only after the batch read
 * it) fails with EFAULT and leaves no callout behind whose handle its caller may not have: its
 * set is cancelled again, as a single TW_IOC_SETCALLOUT's is. The batch waits for a long
 * ADVANCE on the same file while the array is protected, so that it has read and checked the
 * array before, and runs after. Its first operation, an unset, shows that it ran (a batch that
 * found its array read-only at once would run nothing, and leave as many callouts). A batch
 * that does not wait returns before the array is protected, and fails the test; a guest that
 * stalls so long that the watchdog ends the ADVANCE, perhaps before the array is protected,
 * skips it.
 */
TEST_F_TIMEOUT(slow_tick, a_batch_whose_results_cannot_be_written_back_leaves_nothing, 300)
{
	__u64 n = TW_MAX_ADVANCE, first;
	struct long_advance a = { .advance = { .fd = self->fd, .cmd = TW_IOC_ADVANCE, .arg = &n } };
	struct watched_ioctl b = { .call = { .fd = self->fd, .cmd = TW_IOC_BATCH } };
	struct tw_batch batch = { .count = 2 };
	struct tw_query q = { 0 };
	struct tw_stats st;
	struct tw_op *op;
	int waited, during;
	pthread_t ender;

	if (self->fd < 0)
		return;
	/* The instance full: the batch's set has room once its unset has run. */
	ASSERT_EQ(0, set_callout(self->fd, SLOW_FAR + 1, 1, &first));
	op = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(op != MAP_FAILED);
	op[0] = (struct tw_op){ .op = TW_OP_UNSET, .handle = first };
	op[1] = (struct tw_op){ .op = TW_OP_SET, .a = SLOW_FAR + 1, .b = 2 };
	batch.ops = (uintptr_t)op;
	b.call.arg = &batch;
	begin_long_advance(_metadata, self->fd, &a, &ender);
	ASSERT_EQ(0, pthread_create(&b.call.thread, NULL, run_watched_ioctl, &b));
	waited = WAIT_FOR(asleep_in(atomic_load(&b.tid), SYS_ioctl) || atomic_load(&b.call.done));
	ASSERT_EQ(0, mprotect(op, 4096, PROT_READ));
	during = finish_long_advance(&a, ender);
	pthread_join(b.call.thread, NULL);
	munmap(op, 4096);
	if (!a.advance.ret)
		TW_SKIP(return, "the ADVANCE ended by itself: not slow enough here");
	if (!during)
		TW_SKIP(return, "the guest stalled: the watchdog ended the ADVANCE after %llu s, "
			"perhaps before the array was protected", PROMPT_NS / (1000 * MS));
	if (!waited)
		TW_SKIP(return, "the guest stalled: the batch was not seen waiting for the ADVANCE "
			"in %llu s", PROMPT_NS / (1000 * MS));
	ASSERT_EQ(-1, b.call.ret) TH_LOG("the batch did not wait for the ADVANCE");
	EXPECT_EQ(EFAULT, b.call.err) TH_LOG("batch: %s", strerror(b.call.err));
	q.handle = first;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_QUERY, &q));
	if (q.pending)
		TW_SKIP(return, "the guest stalled: the batch ran nothing, its array read-only "
			"before it read it (asleep in the ioctl before its wait)");
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(variant->n, st.outstanding) TH_LOG("the batch's set was left behind");
	EXPECT_EQ(variant->n + 1, st.started);
	EXPECT_EQ(1, st.stopped);
}

/*
 * Starts `a`'s batch in a thread, waits until it has set a callout (more than `before` are
 * outstanding: it then holds the instance's slow right), and starts `ender`, as
 * begin_long_advance() does.
 */
static void begin_long_batch(struct __test_metadata *_metadata, int fd, struct long_advance *a,
			     pthread_t *ender, __u64 before)
{
	struct tw_stats st;

	ASSERT_EQ(0, catch_signal(SIGUSR2));
	ASSERT_EQ(0, pthread_create(&a->advance.thread, NULL, run_bg_ioctl, &a->advance));
	ASSERT_TRUE(WAIT_FOR(atomic_load(&a->advance.done) ||
			     (!get_stats(fd, &st) && st.outstanding > before)));
	ASSERT_EQ(0, pthread_create(ender, NULL, end_long_advance, a));
}

/*
 * begin_long_batch() of a batch `b` of TW_MAX_BATCH sets later than all `before` callouts
 * outstanding (each walks the whole list), the first due `far` ticks from now; `a` runs it.
 * Returns its operations, for end_walking_batch() to free.
 */
static struct tw_op *begin_walking_batch(struct __test_metadata *_metadata, int fd,
					 struct long_advance *a, struct tw_batch *b,
					 pthread_t *ender, __u64 far, __u64 before)
{
	struct tw_op *ops = calloc(TW_MAX_BATCH, sizeof(*ops));
	__u64 i;

	if (!ops)
		return NULL;
	for (i = 0; i < TW_MAX_BATCH; i++)
		ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = far + i, .b = i };
	*b = (struct tw_batch){ .ops = (uintptr_t)ops, .count = TW_MAX_BATCH };
	*a = (struct long_advance){ .advance = { .fd = fd, .cmd = TW_IOC_BATCH, .arg = b } };
	begin_long_batch(_metadata, fd, a, ender, before);
	return ops;
}

/*
 * Whether the batch begin_walking_batch() began, `before` callouts outstanding when it began,
 * still runs: not all its sets are done. Read through TW_IOC_STATS, which waits for no long
 * operation, at the moment asked, not from the batch thread's flag, which it sets only after its
 * ioctl has returned (calls that waited for the batch may see it not yet set).
 */
static bool batch_running(int fd, __u64 before)
{
	struct tw_stats st;

	return !get_stats(fd, &st) && st.outstanding < before + TW_MAX_BATCH;
}

/*
 * finish_long_advance() of a batch begin_walking_batch() began (whether it ran during the calls
 * is batch_running()'s to say).
 */
static void end_walking_batch(struct long_advance *a, pthread_t ender, struct tw_op *ops)
{
	finish_long_advance(a, ender);
	free(ops);
}

/*
 * A reset to a bad interval fails at once, with EINVAL, beside a long batch on the same file, on
 * the schemes whose resets may walk and otherwise wait for it (2 and 5): should it wait, the
 * watchdog of long_advance (here ending the batch) stops the batch after PROMPT_NS, and the
 * resets return after it. The callout they name stays where it was.
 */
TEST_F_TIMEOUT(slow_start, a_bad_reset_fails_at_once_beside_a_batch, 300)
{
	struct tw_reset zero = { .ticks = 0 }, inverted = { .ticks = 10, .latest = 9 };
	struct tw_query q = { 0 };
	int e_zero, e_inverted, ran, ended;
	struct long_advance a;
	struct tw_batch b;
	struct tw_op *ops;
	pthread_t ender;
	__u64 h, t0, took;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, set_callout(self->fd, SLOW_FAR + 1, 1, &h));
	zero.handle = inverted.handle = q.handle = h;
	ops = begin_walking_batch(_metadata, self->fd, &a, &b, &ender, SLOW_FAR + 2, SLOW_N + 1);
	ASSERT_TRUE(ops != NULL);
	ran = batch_running(self->fd, SLOW_N + 1);
	t0 = now_ns();
	e_zero = ioctl(self->fd, TW_IOC_RESET, &zero) ? errno : 0;
	e_inverted = ioctl(self->fd, TW_IOC_RESET, &inverted) ? errno : 0;
	took = now_ns() - t0;
	ended = !batch_running(self->fd, SLOW_N + 1);
	end_walking_batch(&a, ender, ops);
	/* Resets that waited for a batch that then ended by itself fail too: they end after it. */
	if (!ran)
		TW_SKIP(return, "the batch ended before the resets: not slow enough here");
	if (a.advance.ret) {
		EXPECT_EQ(EINTR, a.advance.err);
	}
	EXPECT_EQ(EINVAL, e_zero) TH_LOG("reset to 0 ticks: %s", strerror(e_zero));
	EXPECT_EQ(EINVAL, e_inverted) TH_LOG("reset to [10, 9]: %s", strerror(e_inverted));
	EXPECT_FALSE(ended || atomic_load(&a.watchdog)) TH_LOG("the resets waited for the batch");
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_QUERY, &q));
	EXPECT_EQ(1, q.pending);
	EXPECT_EQ(SLOW_FAR + 1, q.deadline);
	TH_LOG("two bad resets in %llu us, beside a batch", took / 1000);
}

/*
 * The same sorted list on the real clock, its callouts far enough apart that no stall of the
 * machine can make their deadlines ascend (fill_descending()).
 */
FIXTURE(slow_real)
{
	int fd;
};

#define REAL_FAR (1ULL << 40)
#define REAL_STEP (1ULL << 20)

FIXTURE_SETUP(slow_real)
{
	struct tw_config c = { .scheme = TW_SCHEME_ORDERED_LIST, .clock = TW_CLOCK_REAL,
			       .capacity = 2 * SLOW_N };

	self->fd = tw_open(_metadata);
	if (self->fd < 0)
		return;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_CONFIGURE, &c)) TH_LOG("configure: %s", strerror(errno));
	fill_descending(_metadata, self->fd, SLOW_N, REAL_FAR, REAL_STEP);
}

FIXTURE_TEARDOWN(slow_real)
{
	if (self->fd >= 0)
		close(self->fd);
}

/*
 * An ADVANCE on an instance the real clock ticks fails at once, with EINVAL, beside a long batch
 * on the same file: should it wait, the watchdog of long_advance ends the batch after PROMPT_NS,
 * and the ADVANCEs return after it. They run no tick.
 */
TEST_F_TIMEOUT(slow_real, an_advance_fails_at_once_beside_a_batch, 300)
{
	__u64 one = 1, most = TW_MAX_ADVANCE, t0, took;
	int e_one, e_most, ran, ended;
	struct long_advance a;
	struct tw_batch b;
	struct tw_op *ops;
	pthread_t ender;

	if (self->fd < 0)
		return;
	ops = begin_walking_batch(_metadata, self->fd, &a, &b, &ender, REAL_FAR + 1, SLOW_N);
	ASSERT_TRUE(ops != NULL);
	ran = batch_running(self->fd, SLOW_N);
	t0 = now_ns();
	e_one = ioctl(self->fd, TW_IOC_ADVANCE, &one) ? errno : 0;
	e_most = ioctl(self->fd, TW_IOC_ADVANCE, &most) ? errno : 0;
	took = now_ns() - t0;
	ended = !batch_running(self->fd, SLOW_N);
	end_walking_batch(&a, ender, ops);
	/* ADVANCEs that waited for a batch that then ended by itself fail too: they end after it. */
	if (!ran)
		TW_SKIP(return, "the batch ended before the ADVANCEs: not slow enough here");
	if (a.advance.ret) {
		EXPECT_EQ(EINTR, a.advance.err);
	}
	EXPECT_EQ(EINVAL, e_one) TH_LOG("ADVANCE of 1 on the real clock: %s", strerror(e_one));
	EXPECT_EQ(EINVAL, e_most) TH_LOG("ADVANCE of TW_MAX_ADVANCE on the real clock: %s",
					 strerror(e_most));
	EXPECT_FALSE(ended || atomic_load(&a.watchdog)) TH_LOG("the ADVANCEs waited for the batch");
	TH_LOG("two ADVANCEs in %llu us, beside a batch", took / 1000);
}

/* ---- An instance's state through the file ---------------------------------------------------- */

TW_FD_FIXTURE_PER_SCHEME(instance)

#define START 1000

TEST_F(instance, failed_first_calls_leave_it_unconfigured)
{
	struct tw_bench bench = { .kind = TW_BENCH_SETCALLOUT, .iterations = 1, .min_ticks = 10,
				  .spread = 10 };
	struct tw_timeout *tmo;
	struct tw_stats st;
	struct tw_set *set;
	void *req;
	int fd2;

	if (self->fd < 0)
		return;
	/* ADVANCE on a fresh file: EINVAL (not configured), and it configures nothing. */
	EXPECT_EQ(-1, advance(self->fd, 1));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.scheme);
	EXPECT_EQ(0, configure_manual(self->fd, variant->scheme, variant->slots, 16))
		TH_LOG("CONFIGURE after a failed ADVANCE: %s", strerror(errno));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(variant->scheme, st.scheme);

	/* UNSETCALLOUT and an instance bench on a fresh file: the same. */
	fd2 = tw_open(_metadata);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-1, unset_callout(fd2, 1));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, ioctl(fd2, TW_IOC_BENCH, &bench));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, get_stats(fd2, &st));
	EXPECT_EQ(0, st.scheme);
	EXPECT_EQ(0, configure_manual(fd2, variant->scheme, variant->slots, 16))
		TH_LOG("CONFIGURE after a failed UNSETCALLOUT: %s", strerror(errno));
	close(fd2);

	/*
	 * SETCALLOUT and TIMEOUT with valid arguments in a page the kernel may not write (the
	 * handle cannot be written back) on a fresh file: EFAULT, and the same.
	 */
	req = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(req != MAP_FAILED);
	set = req;
	*set = (struct tw_set){ .ticks = 5, .cookie = 1 };
	tmo = (struct tw_timeout *)(set + 1);
	*tmo = (struct tw_timeout){ .func = 0xf00, .arg = 1, .ticks = 5 };
	ASSERT_EQ(0, mprotect(req, 4096, PROT_READ));
	fd2 = tw_open(_metadata);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-1, ioctl(fd2, TW_IOC_SETCALLOUT, set));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, ioctl(fd2, TW_IOC_TIMEOUT, tmo));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, get_stats(fd2, &st));
	EXPECT_EQ(0, st.scheme);
	EXPECT_EQ(0, st.started);
	EXPECT_EQ(0, configure_manual(fd2, variant->scheme, variant->slots, 16))
		TH_LOG("CONFIGURE after a SETCALLOUT that could not write back: %s", strerror(errno));
	close(fd2);
	munmap(req, 4096);
}

/* The value of `key` in /proc/self/fdinfo/FD, or -1. */
static long long fdinfo_value(int fd, const char *key)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return key_value(path, key);
}

/*
 * Configures a manual instance of n + 16 callouts and sets n timeouts of (0xf00, 1), the newest
 * due first (handle h[i] on tick n + 50 - i): each start is O(1) on the sorted lists of schemes 2
 * and 5.
 */
static void timeout_duplicates(struct __test_metadata *_metadata, int fd, __u32 scheme,
			       __u32 slots, int n, __u64 *h)
{
	struct tw_timeout t = { .func = 0xf00, .arg = 1 };
	int i;

	ASSERT_EQ(0, configure_manual(fd, scheme, slots, n + 16));
	for (i = 0; i < n; i++) {
		t.ticks = n + 50 - i;
		ASSERT_EQ(0, ioctl(fd, TW_IOC_TIMEOUT, &t)) TH_LOG("timeout %d: %s", i,
								 strerror(errno));
		h[i] = t.handle;
	}
}

/*
 * untimeout() of one of many callouts with the same (func, arg) walks their hash chain in holds
 * of at most hold_work entries: thousands of duplicates take several holds, none longer than
 * the bound, and the one cancelled is still the one due first.
 */
TEST_F_TIMEOUT(instance, untimeout_walks_duplicates_in_bounded_holds, 120)
{
	enum { N = 4000 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 1 };
	struct tw_stats before, after;
	__u64 h[N], first, second, hold_work;

	if (self->fd < 0)
		return;
	timeout_duplicates(_metadata, self->fd, variant->scheme, variant->slots, N, h);
	first = h[N - 1];
	second = h[N - 2];
	hold_work = hold_work_of(self->fd);
	ASSERT_EQ(0, get_stats(self->fd, &before));
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_UNTIMEOUT, &u)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, get_stats(self->fd, &after));
	TH_LOG("%d duplicates: untimeout took %llu holds, the longest %llu entries (limit %llu)",
	       N, after.holds - before.holds, after.max_hold_work, hold_work);
	EXPECT_LE(N / hold_work, after.holds - before.holds);
	EXPECT_GE(hold_work, after.max_hold_work);
	EXPECT_EQ(-1, unset_callout(self->fd, first));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(N - 1, after.outstanding);
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_UNTIMEOUT, &u));
	EXPECT_EQ(-1, unset_callout(self->fd, second));
	EXPECT_EQ(ENOENT, errno);
}

struct resetter {
	int fd;
	__u64 handle, base;
	atomic_int stop;
	atomic_ulong done;
	atomic_int err;
};

/* Pins the calling thread to `cpu` where the machine has two CPUs or more; best effort. */
static void pin_to(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/* Resets one callout again and again, to one of two ticks in turn, until told to stop. */
static void *reset_until_stopped(void *arg)
{
	struct resetter *r = arg;
	struct tw_reset rs = { .handle = r->handle };

	pin_to(1);
	while (!atomic_load(&r->stop)) {
		rs.ticks = r->base + (atomic_load(&r->done) & 1);
		if (ioctl(r->fd, TW_IOC_RESET, &rs)) {
			atomic_store(&r->err, errno);
			break;
		}
		atomic_fetch_add(&r->done, 1);
	}
	return NULL;
}

/*
 * untimeout() of one of thousands of duplicates while another thread, on another CPU, resets one
 * of them, the oldest, again and again between the walk's holds: the walk ends and cancels the
 * one due first, and the reset one is still there. The walk goes back to the chain's head at most
 * once, whatever the resets (the crate's tests interleave them deterministically); going back on
 * every reset, it ended only when a run of holds happened to come without one between them: after
 * 16-98 ms on schemes 1, 3, 4, 6 and 7 in one run under an emulator, 0.6-2.4 ms now, the
 * resetter's own ioctls being slower than a hold. Until resets came during a walk, up to ten
 * times, a new duplicate due first each time. On schemes 2 and 5, whose resets may walk a sorted
 * list over several holds, a reset waits for the untimeout to end instead, and the resets counted
 * meanwhile came before or after its walk.
 */
TEST_F_TIMEOUT(instance, untimeout_ends_while_another_thread_resets_a_duplicate, 300)
{
	enum { N = 4000, ATTEMPTS = 10 };
	/* A new duplicate due first, on tick 1: the manual clock stays at 0. */
	struct tw_timeout t = { .func = 0xf00, .arg = 1, .ticks = 1 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 1 };
	/* Reset to later than every other, within scheme 4's 4096 slots. */
	struct resetter r = { .fd = self->fd, .base = N + 60 };
	bool waits = variant->scheme == 2 || variant->scheme == 5;
	unsigned long before, during = 0;
	__u64 h[N], first, t0, took;
	pthread_t thread;
	int attempt, ret, err;

	if (self->fd < 0)
		return;
	/* The newest due first (on tick 51), the oldest last (on tick N + 50). */
	timeout_duplicates(_metadata, self->fd, variant->scheme, variant->slots, N, h);
	first = h[N - 1];
	r.handle = h[0];
	pin_to(0);
	for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
		atomic_store(&r.stop, 0);
		atomic_store(&r.done, 0);
		ASSERT_EQ(0, pthread_create(&thread, NULL, reset_until_stopped, &r));
		/* The resetter under way first. */
		while (!atomic_load(&r.done) && !atomic_load(&r.err))
			sched_yield();
		before = atomic_load(&r.done);
		t0 = now_ns();
		ret = ioctl(self->fd, TW_IOC_UNTIMEOUT, &u) ? errno : 0;
		took = now_ns() - t0;
		during = atomic_load(&r.done) - before;
		atomic_store(&r.stop, 1);
		pthread_join(thread, NULL);
		err = atomic_load(&r.err);
		ASSERT_EQ(0, err) TH_LOG("reset: %s", strerror(err));
		ASSERT_EQ(0, ret) TH_LOG("untimeout: %s", strerror(ret));
		TH_LOG("untimeout of %d duplicates took %llu us, %lu resets of the oldest meanwhile",
		       N, took / 1000, during);
		/* The one due first is gone. */
		EXPECT_EQ(-1, unset_callout(self->fd, first));
		EXPECT_EQ(ENOENT, errno);
		if (waits || during)
			break;
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_TIMEOUT, &t)) TH_LOG("%s", strerror(errno));
		first = t.handle;
	}
	/* The oldest, reset to later, is still there. */
	EXPECT_EQ(0, unset_callout(self->fd, r.handle));
	if (!waits && !during)
		TW_SKIP(return, "no reset came during %d walks: not slow enough here", ATTEMPTS);
}

/*
 * The largest instance the uapi accepts for `scheme` (44 to 550 MiB: TW_MAX_CAPACITY callouts with
 * the legacy tables, TW_MAX_SLOTS slots where the scheme has them, TW_MAX_RING records), on the
 * manual clock.
 */
static struct tw_config largest_config(__u32 scheme)
{
	bool wheel = scheme >= 4 && scheme <= 6;

	return (struct tw_config){
		.scheme = scheme,
		.clock = TW_CLOCK_MANUAL,
		.capacity = scheme == 1 ? TW_MAX_CAPACITY_SCHEME1 : TW_MAX_CAPACITY,
		.slots = wheel ? TW_MAX_SLOTS : 0,
		.ring = TW_MAX_RING,
	};
}

/* The instance on `fd` is configured with `scheme`, and a callout set on it fires. */
static void expect_configured_and_firing(struct __test_metadata *_metadata, int fd, __u32 scheme)
{
	struct tw_stats st;

	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(scheme, st.scheme);
	ASSERT_EQ(0, set_callout(fd, 3, 7, NULL));
	ASSERT_EQ(0, advance(fd, 3));
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(1, st.fired);
}

/*
 * CONFIGURE of the largest instance the uapi accepts (44 to 550 MiB: TW_MAX_CAPACITY callouts with
 * the legacy tables, TW_MAX_SLOTS slots where the scheme has them, TW_MAX_RING records) takes
 * seconds in an emulated debug guest. Under a stream of signals it ends with EINTR, whatever the
 * machine's speed: a signal is pending whenever the module looks, between two chunks of the
 * storage (the call starts once the flooder has sent a signal; should it send none while the
 * call runs, descheduled meanwhile, the test skips). Nothing is left behind: the instance is
 * still unconfigured, a CONFIGURE without signals then works, and the guest's kmemleak scan
 * finds nothing.
 */
TEST_F_TIMEOUT(instance, a_signal_ends_the_configuration_of_the_largest_instance, 300)
{
	struct tw_config c = largest_config(variant->scheme);
	struct flood f = { .target = pthread_self(), .sig = SIGUSR1 };
	struct tw_stats st;
	unsigned long sent;
	__u64 t0, t;
	pthread_t t_flood;
	int ret, err;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, catch_signal(SIGUSR1));
	ASSERT_EQ(0, start_flood(&t_flood, &f));
	sent = atomic_load(&f.sent);
	t0 = now_ns();
	ret = ioctl(self->fd, TW_IOC_CONFIGURE, &c);
	err = errno;
	t = now_ns();
	sent = atomic_load(&f.sent) - sent;
	atomic_store(&f.done, 1);
	pthread_join(t_flood, NULL);
	TH_LOG("CONFIGURE under %lu signals (%lu while it ran): %s after %llu ms",
	       atomic_load(&f.sent), sent, ret ? strerror(err) : "configured", (t - t0) / MS);
	/* Two signals sent while it ran: the second, at least, once it was under way. */
	if (!ret && sent < 2)
		TW_SKIP(return, "no signal was sent while the CONFIGURE ran: not slow enough here");
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err);
	EXPECT_GT(PROMPT_NS, t - t0);

	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.scheme) TH_LOG("the interrupted CONFIGURE left the instance configured");
	ASSERT_EQ(0, configure_manual(self->fd, variant->scheme, variant->slots, 16))
		TH_LOG("CONFIGURE after the interrupted one: %s", strerror(errno));
	expect_configured_and_firing(_metadata, self->fd, variant->scheme);
}

/*
 * Every line of /proc/PID/fdinfo/FD after the kernel's own but the lateness histogram: a field of
 * struct tw_stats, flags as config_flags (the kernel's flags line is the file's open flags).
 */
#define STATS_FIELD(f) { #f, offsetof(struct tw_stats, f) }
static const struct {
	const char *key;
	size_t off;
} fdinfo_fields[] = {
	STATS_FIELD(scheme),
	{ "config_flags", offsetof(struct tw_stats, flags) },
	STATS_FIELD(outstanding),
	STATS_FIELD(started),	   STATS_FIELD(stopped),       STATS_FIELD(fired),
	STATS_FIELD(now),	   STATS_FIELD(ticks),	       STATS_FIELD(skipped),
	STATS_FIELD(wakeups),	   STATS_FIELD(overruns),      STATS_FIELD(carried),
	STATS_FIELD(queued),	   STATS_FIELD(ring_used),     STATS_FIELD(ring_drops),
	STATS_FIELD(holds),	   STATS_FIELD(max_hold_work), STATS_FIELD(max_hold_ns),
	STATS_FIELD(max_tick_work), STATS_FIELD(memory_bytes),
};

/* Whether a key shows on two lines of /proc/self/fdinfo/FD (1), or not (0); -1 if unreadable. */
static int fdinfo_duplicate_key(int fd)
{
	char path[64], line[256], keys[64][64];
	int n = 0, i, dup = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (!dup && n < 64 && fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!colon || colon - line >= (long)sizeof(keys[0]))
			continue;
		*colon = '\0';
		for (i = 0; i < n; i++)
			if (!strcmp(keys[i], line)) {
				ksft_print_msg("'%s:' twice in %s\n", line, path);
				dup = 1;
			}
		strcpy(keys[n++], line);
	}
	fclose(f);
	return dup;
}

/* The statistics below differ pairwise (else the caller's setup needs mending). */
static void expect_stats_differ(struct __test_metadata *_metadata, const struct tw_stats *st)
{
	const struct {
		const char *name;
		__u64 value;
	} v[] = {
		{ "outstanding", st->outstanding }, { "started", st->started },
		{ "stopped", st->stopped },	    { "fired", st->fired },
		{ "carried", st->carried },	    { "queued", st->queued },
		{ "ring_used", st->ring_used },	    { "ring_drops", st->ring_drops },
		{ "wakeups", st->wakeups },
	};
	unsigned int i, j, n = sizeof(v) / sizeof(v[0]);

	for (i = 0; i < n; i++) {
		for (j = i + 1; j < n; j++) {
			EXPECT_NE(v[i].value, v[j].value)
				TH_LOG("%s and %s are both %llu", v[i].name, v[j].name,
				       v[i].value);
		}
	}
}

/*
 * Every fdinfo line shows its own field. The statistics a line could show in another's place
 * unseen, were the two alike, are made to differ first: a per-tick budget of 2 and a ring of 4
 * leave expiries carried and queued and records dropped, some callouts are cancelled, and one
 * record is read. (wakeups and overruns, both 0 on the manual clock, are the exception.)
 */
TEST_F(instance, fdinfo_shows_the_statistics)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_MANUAL,
			       .slots = variant->slots, .capacity = 32, .ring = 4, .budget = 2 };
	struct tw_fired rec;
	struct tw_stats st;
	unsigned int i;
	__u64 h;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_CONFIGURE, &c)) TH_LOG("%s", strerror(errno));
	for (i = 0; i < 7; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 2, i, NULL));
	}
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 50 + i, 10 + i, NULL));
		ASSERT_EQ(0, set_callout(self->fd, 60, 20 + i, &h));
		ASSERT_EQ(0, unset_callout(self->fd, h));
	}
	ASSERT_EQ(0, advance(self->fd, 2));
	ASSERT_EQ(0, advance(self->fd, 1));
	ASSERT_EQ(0, advance(self->fd, 1));
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	expect_stats_differ(_metadata, &st);
	/* Nothing runs on the manual clock between the two: every line is its field's value. */
	for (i = 0; i < sizeof(fdinfo_fields) / sizeof(fdinfo_fields[0]); i++) {
		const char *key = fdinfo_fields[i].key;
		__u64 want;

		memcpy(&want, (const char *)&st + fdinfo_fields[i].off, sizeof(want));
		EXPECT_EQ((long long)want, fdinfo_value(self->fd, key)) TH_LOG("'%s:'", key);
	}
	/* Each key once: a parser keeping the first of two would read another value. */
	EXPECT_EQ(0, fdinfo_duplicate_key(self->fd));
	EXPECT_EQ(4 + st.queued, fdinfo_value(self->fd, "outstanding"));
	EXPECT_EQ(3, fdinfo_value(self->fd, "ring_used"));
	EXPECT_EQ(4, fdinfo_value(self->fd, "stopped"));
	EXPECT_EQ(variant->scheme, fdinfo_value(self->fd, "scheme"));
	EXPECT_EQ(0, fdinfo_value(self->fd, "wakeups")); /* the manual clock */
	EXPECT_EQ((long long)st.max_hold_work, fdinfo_value(self->fd, "max_hold_work"));
	EXPECT_GE((long long)hold_work_of(self->fd), fdinfo_value(self->fd, "max_hold_work"));
}

static int reset(int fd, __u64 handle, __u64 ticks, __u64 latest)
{
	struct tw_reset r = { .handle = handle, .ticks = ticks, .latest = latest };

	return ioctl(fd, TW_IOC_RESET, &r);
}

/* SKIPs the test (from its body: SKIP returns from the function it is in). */
#define NEED_RANGES(fd)                                                        \
	do {                                                                   \
		if (!(features(_metadata, fd) & TW_FEATURE_RANGE))             \
			TW_SKIP(return, "the module has no TW_FEATURE_RANGE"); \
	} while (0)

TEST_F(instance, reset_moves_the_deadline_and_keeps_the_handle)
{
	struct tw_fired rec[4];
	struct tw_query q;
	__u64 h, h2;

	if (self->fd < 0)
		return;
	NEED_RANGES(self->fd);
	ASSERT_EQ(0, configure_manual(self->fd, variant->scheme, variant->slots, 16));
	ASSERT_EQ(0, advance(self->fd, START));
	/* Earlier. */
	ASSERT_EQ(0, set_callout(self->fd, 100, 7, &h));
	ASSERT_EQ(0, reset(self->fd, h, 50, 0));
	ASSERT_EQ(0, query(self->fd, h, &q));
	EXPECT_EQ(1, q.pending);
	EXPECT_EQ(START + 50, q.deadline);
	ASSERT_EQ(0, advance(self->fd, 50));
	ASSERT_EQ(1, drain(self->fd, rec, 4));
	EXPECT_EQ(h, rec[0].handle);
	EXPECT_EQ(7, rec[0].cookie);
	EXPECT_EQ(START + 50, rec[0].deadline);
	EXPECT_EQ(START + 50, rec[0].fired);
	ASSERT_EQ(0, advance(self->fd, 100));
	EXPECT_EQ(0, drain(self->fd, rec, 4)) TH_LOG("the old deadline fired too");
	/* Later, and to the same tick (nothing moves). */
	ASSERT_EQ(0, set_callout(self->fd, 10, 8, &h2));
	ASSERT_EQ(0, reset(self->fd, h2, 200, 0));
	ASSERT_EQ(0, reset(self->fd, h2, 200, 0));
	ASSERT_EQ(0, advance(self->fd, 10));
	EXPECT_EQ(0, drain(self->fd, rec, 4)) TH_LOG("the old deadline fired");
	ASSERT_EQ(0, advance(self->fd, 190));
	ASSERT_EQ(1, drain(self->fd, rec, 4));
	EXPECT_EQ(h2, rec[0].handle);
	EXPECT_EQ(START + 150 + 10 + 190, rec[0].fired);
	/* Fired: stale. */
	EXPECT_EQ(-1, reset(self->fd, h2, 5, 0));
	EXPECT_EQ(ENOENT, errno);
}

/*
 * Callouts reset again and again, earlier and later, exactly and with ranges, while the clock
 * moves on in random steps: each fires exactly once, on the deadline of its last reset (the
 * one TW_IOC_QUERY reported), never on one it had before. Scheme 7 leaves a timer pushed later
 * where it is and lets the cascade file it; this is where that must not show.
 */
TEST_F(instance, resets_back_and_forth_fire_once_on_the_last_deadline)
{
	enum { N = 200, ROUNDS = 40 };
	__u64 h[N], due[N], seed = tw_variant_seed(_metadata, 0x7e5e7, variant->scheme);
	struct tw_fired rec[N];
	int fired[N] = { 0 }, i, k, n, r, left = N;
	struct tw_query q;

	if (self->fd < 0)
		return;
	NEED_RANGES(self->fd);
	ASSERT_EQ(0, configure_manual(self->fd, variant->scheme, variant->slots, N));
	ASSERT_EQ(0, advance(self->fd, START));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 1 + rnd(&seed) % 3000, i, &h[i]));
		ASSERT_EQ(0, query(self->fd, h[i], &q));
		due[i] = q.deadline;
	}
	for (r = 0; left > 0; r++) {
		ASSERT_GT(ROUNDS + 20, r) TH_LOG("%d callouts never fired", left);
		ASSERT_EQ(0, advance(self->fd, 1 + rnd(&seed) % (r < ROUNDS ? 300 : 3000)));
		n = drain(self->fd, rec, N);
		for (k = 0; k < n; k++) {
			__u64 c = rec[k].cookie;

			ASSERT_GT(N, c);
			EXPECT_EQ(0, fired[c]) TH_LOG("cookie %llu fired twice", c);
			EXPECT_EQ(due[c], rec[k].deadline) TH_LOG("cookie %llu", c);
			EXPECT_EQ(due[c], rec[k].fired) TH_LOG("cookie %llu", c);
			fired[c]++;
			left--;
		}
		for (i = 0; r < ROUNDS && i < N; i++) {
			__u64 t = 1 + rnd(&seed) % 3000, span = rnd(&seed) % 4 ? 0 : rnd(&seed) % 1000;

			if (fired[i] || rnd(&seed) % 3 == 0)
				continue;
			ASSERT_EQ(0, reset(self->fd, h[i], t, span ? t + span : 0))
				TH_LOG("reset %d: %s", i, strerror(errno));
			ASSERT_EQ(0, query(self->fd, h[i], &q));
			ASSERT_EQ(1, q.pending);
			EXPECT_LE(q.now + t, q.deadline);
			EXPECT_GE(q.now + t + span, q.deadline);
			due[i] = q.deadline;
		}
	}
	for (i = 0; i < N; i++) {
		EXPECT_EQ(1, fired[i]) TH_LOG("cookie %d", i);
	}
}

TEST_F(instance, batch_mod_keeps_the_handles)
{
	enum { N = 64 };
	struct tw_op ops[N];
	struct tw_batch b = { .ops = (uintptr_t)ops, .count = N };
	struct tw_fired rec[N];
	__u64 h[N];
	int i, n;

	if (self->fd < 0)
		return;
	NEED_RANGES(self->fd);
	ASSERT_EQ(0, configure_manual(self->fd, variant->scheme, variant->slots, N));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 500, i, &h[i]));
	}
	for (i = 0; i < N; i++)
		ops[i] = (struct tw_op){ .op = TW_OP_MOD, .handle = h[i], .a = 1 + i };
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
	for (i = 0; i < N; i++) {
		EXPECT_EQ(0, ops[i].result) TH_LOG("op %d", i);
		EXPECT_EQ(h[i], ops[i].handle) TH_LOG("op %d", i);
	}
	ASSERT_EQ(0, advance(self->fd, N));
	n = drain(self->fd, rec, N);
	ASSERT_EQ(N, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(h[rec[i].cookie], rec[i].handle);
		EXPECT_EQ(1 + rec[i].cookie, rec[i].deadline);
	}
	ASSERT_EQ(0, advance(self->fd, 500));
	EXPECT_EQ(0, drain(self->fd, rec, N));
}

TEST_F(instance, ranges_fire_within_them_and_query_reports_the_deadline)
{
	enum { N = 300 };
	__u64 h[N], lo[N], hi[N], max = 0;
	__u64 seed = tw_variant_seed(_metadata, 0x5eed, variant->scheme);
	struct tw_fired rec[N];
	struct tw_query q;
	struct tw_stats st;
	int i, n, got = 0;

	if (self->fd < 0)
		return;
	NEED_RANGES(self->fd);
	ASSERT_EQ(0, configure_manual(self->fd, variant->scheme, variant->slots, N));
	ASSERT_EQ(0, advance(self->fd, START));
	for (i = 0; i < N; i++) {
		__u64 t = 1 + rnd(&seed) % 2000, span = rnd(&seed) % 1000;
		struct tw_set s = { .ticks = t, .latest = t + span, .cookie = i };

		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_SETCALLOUT, &s)) TH_LOG("[%llu, %llu]: %s",
									      t, t + span,
									      strerror(errno));
		h[i] = s.handle;
		lo[i] = START + t;
		hi[i] = START + t + span;
		max = hi[i] > max ? hi[i] : max;
		ASSERT_EQ(0, query(self->fd, h[i], &q));
		EXPECT_EQ(1, q.pending);
		EXPECT_EQ(START, q.now);
		EXPECT_LE(lo[i], q.deadline);
		EXPECT_GE(hi[i], q.deadline);
	}
	while (got < N) {
		ASSERT_EQ(0, get_stats(self->fd, &st));
		ASSERT_GE(max, st.now) TH_LOG("%d callouts never fired", N - got);
		ASSERT_EQ(0, advance(self->fd, 1));
		n = drain(self->fd, rec, N);
		for (i = 0; i < n; i++) {
			__u64 c = rec[i].cookie;

			ASSERT_GT(N, c);
			EXPECT_LE(lo[c], rec[i].fired) TH_LOG("cookie %llu before its range", c);
			EXPECT_GE(hi[c], rec[i].fired) TH_LOG("cookie %llu after its range", c);
			EXPECT_EQ(rec[i].deadline, rec[i].fired);
			/* Processed: the handle is stale, and says so. */
			ASSERT_EQ(0, query(self->fd, h[c], &q));
			EXPECT_EQ(0, q.pending);
			EXPECT_EQ(0, q.deadline);
		}
		got += n;
	}
	/* A handle never issued. */
	ASSERT_EQ(0, query(self->fd, 0xdeadbeefdeadbeefULL, &q));
	EXPECT_EQ(0, q.pending);
}

/*
 * A reset cut short by a signal while it walks a sorted list (to later than all SLOW_N) undoes
 * itself: EINTR, and the callout is where it was, with its deadline, and fires there; the next
 * reset works.
 */
TEST_F_TIMEOUT(slow_start, a_signal_undoes_a_reset, 300)
{
	/* The walk of SLOW_N entries takes hundreds of holds: the signal comes after two. */
	struct tw_kick k = { .fd = self->fd, .sig = SIGALRM, .after = 2 };
	struct sigaction sa = { .sa_handler = note_signal }; /* no SA_RESTART */
	struct tw_reset r = { .ticks = SLOW_FAR + 1 };
	struct tw_fired rec[2];
	struct tw_query q;
	__u64 h;
	int ret, err;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, set_callout(self->fd, 5, 77, &h)); /* due first: at the head */
	r.handle = h;
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ret = tw_kicked_ioctl(&k, TW_IOC_RESET, &r);
	err = errno;
	/* Sent once the walk was under way: it ran on past it only if it ignored it. */
	ASSERT_GE(TW_HOLDS_PAST_A_SIGNAL, k.holds_after)
		TH_LOG("the reset ran %llu holds past a pending signal", k.holds_after);
	if (ret == 0)
		TW_SKIP(return, "the reset ended before a signal could be sent: not slow enough");
	ASSERT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err) TH_LOG("%s", strerror(err));
	ASSERT_EQ(0, query(self->fd, h, &q));
	EXPECT_EQ(1, q.pending);
	EXPECT_EQ(5, q.deadline - q.now) TH_LOG("deadline %llu, now %llu", q.deadline, q.now);
	ASSERT_EQ(0, advance(self->fd, 5));
	ASSERT_EQ(1, drain(self->fd, rec, 2));
	EXPECT_EQ(77, rec[0].cookie);
	EXPECT_EQ(q.deadline, rec[0].deadline);
	/* Nothing is left placing: a reset of another callout goes through. */
	ASSERT_EQ(0, set_callout(self->fd, 5, 78, &h));
	r = (struct tw_reset){ .handle = h, .ticks = 9 };
	EXPECT_EQ(0, ioctl(self->fd, TW_IOC_RESET, &r)) TH_LOG("%s", strerror(errno));
}

/* ---- A stop and a continue restart a long call that has done nothing ------------------------ */

/* A system call a child process makes, in memory the parent shares. */
struct child_call {
	atomic_int began, ended;
	long ret;
	int err;
	__u64 arg[64]; /* the ioctl's argument, or read(2)'s buffer */
};

/*
 * Forks a child that joins cgroup directory `cgroup` (unless NULL), then makes ioctl(fd, cmd,
 * arg), or, where cmd is 0, read(2) of `size` bytes, into c->arg (`size` bytes of `arg` copied
 * there first). *c is shared memory (munmap it); returns the child's pid. The child is killed
 * when the test's process ends, stopped or frozen as it may be, should the test end early.
 */
static pid_t child_call(struct child_call **cp, const char *cgroup, int fd, unsigned long cmd,
			const void *arg, size_t size)
{
	struct child_call *c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE,
				    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char me[32];
	pid_t pid, parent = getpid();

	*cp = c;
	if (c == MAP_FAILED || size > sizeof(c->arg))
		return -1;
	if (arg)
		memcpy(c->arg, arg, size);
	pid = fork();
	if (pid)
		return pid;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != parent)
		_exit(3);
	snprintf(me, sizeof(me), "%d", (int)getpid());
	if (cgroup && write_at(cgroup, "cgroup.procs", me))
		_exit(2);
	atomic_store(&c->began, 1);
	c->ret = cmd ? ioctl(fd, cmd, c->arg) : read(fd, c->arg, size);
	c->err = errno;
	atomic_store(&c->ended, 1);
	_exit(0);
}

/*
 * Whether process `pid`, not running, is in system call `nr`, or stopped (or frozen) on its way
 * out of it: /proc/PID/syscall.
 */
static int held_in(pid_t pid, long nr)
{
	char path[64], text[64], want[16];

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	snprintf(want, sizeof(want), "%ld ", nr);
	return !read_text(path, text, sizeof(text)) && !strncmp(text, want, strlen(want));
}

/*
 * Sets n timeouts of (func, arg), in batches, the first due `ticks` from now and each next one a
 * tick earlier (at the head of a sorted list, no walk): the last set is due first. Returns its
 * handle.
 */
static __u64 set_duplicates(struct __test_metadata *_metadata, int fd, __u64 func, __u64 arg,
			    __u64 n, __u64 ticks)
{
	enum { OPS = TW_MAX_BATCH };
	struct tw_op *ops = calloc(OPS, sizeof(*ops));
	struct tw_batch b = { .ops = (uintptr_t)ops };
	__u64 k, i, last = 0;

	if (!ops)
		return 0;
	for (k = 0; k < n; k += b.count) {
		b.count = n - k < OPS ? n - k : OPS;
		for (i = 0; i < b.count; i++)
			ops[i] = (struct tw_op){ .op = TW_OP_TIMEOUT, .a = func, .b = arg,
						 .c = ticks - (k + i) };
		if (ioctl(fd, TW_IOC_BATCH, &b)) {
			TH_LOG("batch at %llu: %s", k, strerror(errno));
			break;
		}
		for (i = 0; i < b.count; i++)
			if (ops[i].result)
				TH_LOG("timeout %llu: %s", k + i, strerror(-ops[i].result));
		last = ops[b.count - 1].result ? 0 : ops[b.count - 1].handle;
	}
	free(ops);
	return last;
}

/*
 * Makes ioctl(fd, cmd, arg) in a child process (child_call: a stop stops a whole process), and
 * stops and continues the child, until `stops` of the stops came while the call ran (the child
 * stopped on its way out of the ioctl, which had not returned) or it ended: `gap_us` after it
 * began and again `gap_us` after each continue or, where `step` is not 0, each time the file has
 * taken `step` holds more (tw_stats.holds: a manual-clock instance takes no other). No handler
 * runs, as under job control, a debugger's attach or the freezer. `meanwhile`, unless NULL,
 * runs while the child is stopped. Returns the child's call (munmap it), with in *landed the
 * stops that came while the call ran and, where `step` is not 0, in *took the holds it took
 * (those `meanwhile` took not counted).
 */
static struct child_call *stopped_every(struct __test_metadata *_metadata, int fd,
					unsigned long cmd, const void *arg, int gap_us, int step,
					int stops, int *landed, __u64 *took,
					void (*meanwhile)(struct __test_metadata *, int))
{
	struct tw_stats st = { 0 };
	__u64 base, mark, others = 0;
	struct child_call *c;
	int status = -1;
	pid_t pid;

	if (step)
		ASSERT_EQ(0, get_stats(fd, &st));
	base = mark = st.holds;
	pid = child_call(&c, NULL, fd, cmd, arg, _IOC_SIZE(cmd));
	ASSERT_LE(0, pid);
	*landed = 0;
	WAIT_FOR(atomic_load(&c->began));
	while (*landed < stops && !atomic_load(&c->ended)) {
		if (!step) {
			usleep(gap_us);
		} else {
			ASSERT_EQ(0, get_stats(fd, &st));
			if (st.holds < mark + step) {
				usleep(50);
				continue;
			}
		}
		ASSERT_EQ(0, kill(pid, SIGSTOP));
		ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
		if (!WIFSTOPPED(status))
			break; /* it ended and exited first */
		if (!atomic_load(&c->ended) && held_in(pid, SYS_ioctl))
			(*landed)++;
		if (step)
			ASSERT_EQ(0, get_stats(fd, &st));
		mark = st.holds;
		if (meanwhile) {
			meanwhile(_metadata, fd);
			if (step)
				ASSERT_EQ(0, get_stats(fd, &st));
			others += st.holds - mark;
			mark = st.holds;
		}
		ASSERT_EQ(0, kill(pid, SIGCONT));
	}
	if (!WIFEXITED(status))
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("status %#x", status);
	ASSERT_EQ(1, atomic_load(&c->ended));
	if (step) {
		ASSERT_EQ(0, get_stats(fd, &st));
		*took = st.holds - base - others;
	}
	return c;
}

/*
 * stopped_every() `gap_us` apart: returns the call's result, with errno and *arg as the call
 * left them, and in *landed the stops that came while it ran.
 */
static int stopped_ioctl(struct __test_metadata *_metadata, int fd, unsigned long cmd, void *arg,
			 int gap_us, int stops, int *landed)
{
	struct child_call *c = stopped_every(_metadata, fd, cmd, arg, gap_us, 0, stops, landed,
					     NULL, NULL);
	int ret = c->ret, err = c->err;

	memcpy(arg, c->arg, _IOC_SIZE(cmd));
	munmap(c, sizeof(*c));
	TH_LOG("%d of the stops came while the ioctl ran: it returned %d (%s)", *landed, ret,
	       ret ? strerror(err) : "no error");
	errno = err;
	return ret;
}

#define SKIP_IF_NOT_STOPPED(landed, ret)                                                   \
	SKIP_IF_NOT_SLOW(landed, ret, errno, "the ioctl ended before a stop came while it ran")

/*
 * A set and a timeout whose handle cannot be written back, their request made read-only while
 * their placement walks the sorted list (after its first holds: the request was found writable
 * before), fail with EFAULT and leave no callout behind whose handle their caller does not
 * have: it is cancelled again, and not counted as started. A kicker thread kept off the CPU
 * until the placement has ended protects the request too late; the callout set then is
 * cancelled and the call made again, a few times, before the test is skipped.
 */
TEST_F_TIMEOUT(slow_start, a_start_whose_handle_cannot_be_written_back_leaves_nothing, 300)
{
	enum { TRIES = 4 };
	const unsigned long cmds[] = { TW_IOC_SETCALLOUT, TW_IOC_TIMEOUT };
	struct tw_kick k = { .fd = self->fd, .after = 2 };
	struct tw_stats before, st;
	unsigned int i, try;
	int ret, err;
	__u64 h;

	if (self->fd < 0)
		return;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		for (try = 1;; try++) {
			k.protect = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			ASSERT_TRUE(k.protect != MAP_FAILED);
			/* Later than all: the placement walks the whole list. */
			if (cmds[i] == TW_IOC_SETCALLOUT)
				*(struct tw_set *)k.protect = (struct tw_set){
					.ticks = SLOW_FAR + 1, .cookie = 5 };
			else
				*(struct tw_timeout *)k.protect = (struct tw_timeout){
					.func = 0xf00, .arg = 1, .ticks = SLOW_FAR + 1 };
			ASSERT_EQ(0, get_stats(self->fd, &before));
			ret = tw_kicked_ioctl(&k, cmds[i], k.protect);
			err = errno;
			h = cmds[i] == TW_IOC_SETCALLOUT ? ((struct tw_set *)k.protect)->handle
							 : ((struct tw_timeout *)k.protect)->handle;
			munmap(k.protect, 4096);
			TH_LOG("request %#lx, try %u: %s; it returned %d (%s)", cmds[i], try,
			       atomic_load(&k.sent) ? "protected" : "not protected", ret,
			       ret ? strerror(err) : "no error");
			if (ret || try == TRIES)
				break;
			/* Placed before its request was protected: taken out, and made again. */
			ASSERT_EQ(0, unset_callout(self->fd, h));
		}
		SKIP_IF_NOT_SLOW(ret, ret, err, "the placement ended before its request was "
				 "protected");
		ASSERT_EQ(-1, ret);
		EXPECT_EQ(EFAULT, err);
		EXPECT_EQ(1, atomic_load(&k.sent));
		ASSERT_EQ(0, get_stats(self->fd, &st));
		EXPECT_EQ(before.outstanding, st.outstanding) TH_LOG("the new callout was left behind");
		EXPECT_EQ(SLOW_N, st.outstanding);
		EXPECT_EQ(before.started, st.started);
		EXPECT_EQ(before.stopped, st.stopped);
	}
}

/*
 * A stop and a continue (job control, a debugger's attach; the freezer alike) while a long
 * placement walks the sorted list, and while a long untimeout walks its hash chain, do not end
 * the call as a handled signal does (EINTR: a_signal_undoes_a_reset and others): it had done
 * nothing yet, and starts again. One callout is set, one moved, one cancelled, each once.
 */
TEST_F_TIMEOUT(slow_start, a_stop_and_a_continue_restart_a_long_set_reset_and_untimeout, 600)
{
	enum { DUPLICATES = SLOW_N - 16 };
	struct tw_set s = { .ticks = SLOW_FAR + 1, .cookie = 7 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 1 };
	struct tw_reset r;
	struct tw_stats st;
	struct tw_query q;
	int landed, ret;
	__u64 first;

	if (self->fd < 0)
		return;
	/* A start later than all: it walks the whole list. */
	ret = stopped_ioctl(_metadata, self->fd, TW_IOC_SETCALLOUT, &s, 2000, 2, &landed);
	SKIP_IF_NOT_STOPPED(landed, ret);
	ASSERT_EQ(0, ret) TH_LOG("the set: %s", strerror(errno));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(SLOW_N + 1, st.outstanding);
	EXPECT_EQ(SLOW_N + 1, st.started);
	ASSERT_EQ(0, query(self->fd, s.handle, &q));
	EXPECT_EQ(1, q.pending);
	EXPECT_EQ(SLOW_FAR + 1, q.deadline - q.now);

	/* To the head, then later than all again: the second reset walks the whole list. */
	r = (struct tw_reset){ .handle = s.handle, .ticks = 1 };
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_RESET, &r)) TH_LOG("%s", strerror(errno));
	r.ticks = SLOW_FAR + 2;
	ret = stopped_ioctl(_metadata, self->fd, TW_IOC_RESET, &r, 2000, 2, &landed);
	SKIP_IF_NOT_STOPPED(landed, ret);
	ASSERT_EQ(0, ret) TH_LOG("the reset: %s", strerror(errno));
	ASSERT_EQ(0, query(self->fd, s.handle, &q));
	EXPECT_EQ(1, q.pending);
	EXPECT_EQ(SLOW_FAR + 2, q.deadline - q.now);

	/* Duplicates of one key, each due before all: the untimeout that cancels the one due
	 * first walks the whole chain. */
	first = set_duplicates(_metadata, self->fd, u.func, u.arg, DUPLICATES, SLOW_FAR - SLOW_N);
	ASSERT_NE(0, first);
	ret = stopped_ioctl(_metadata, self->fd, TW_IOC_UNTIMEOUT, &u, 2000, 2, &landed);
	SKIP_IF_NOT_STOPPED(landed, ret);
	ASSERT_EQ(0, ret) TH_LOG("the untimeout: %s", strerror(errno));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(SLOW_N + DUPLICATES, st.outstanding);
	EXPECT_EQ(1, st.stopped);
	ASSERT_EQ(0, query(self->fd, first, &q));
	EXPECT_EQ(0, q.pending) TH_LOG("the duplicate due first is still there");
}

/*
 * A stream of stops and continues faster than a long placement does not keep it from ending:
 * the set or reset, made again each time, goes on after the last entry its walk had passed.
 * The child making it is stopped each time it has done STEP holds more, STOPS times. It then
 * takes no more than PER_STOP holds more for each stop than the same placement made without
 * one: the undo of what it had done (the callout set so far cancelled, or the reset undone) and
 * the clock armed again for what is left. A walk started over from the list's head at every
 * stop would take STEP more for each, and a stop every STEP holds would keep it walking for
 * ever. A placement that ends before a stop lands (the test's process scheduled late) is made
 * again, up to ATTEMPTS times.
 */
static void placement_under_stops(struct __test_metadata *_metadata, int fd, unsigned long cmd)
{
	enum { STOPS = 10, STEP = 8, PER_STOP = 2, ATTEMPTS = 8 };
	struct tw_set s = { .ticks = 1, .cookie = 7 };
	struct tw_reset r = { .ticks = SLOW_FAR + 1 };
	struct child_call *c = NULL;
	__u64 base, alone, took = 0;
	int landed = 0, made = 0;
	struct tw_stats st;
	struct tw_query q;

	/* Without a stop: the holds a placement later than all takes, set or reset. */
	if (cmd == TW_IOC_RESET) {
		/* Due first: its reset walks the whole list. */
		ASSERT_EQ(0, ioctl(fd, TW_IOC_SETCALLOUT, &s)) TH_LOG("%s", strerror(errno));
		r.handle = s.handle;
	} else {
		s.ticks = SLOW_FAR + 1;
	}
	ASSERT_EQ(0, get_stats(fd, &st));
	base = st.holds;
	ASSERT_EQ(0, ioctl(fd, cmd, cmd == TW_IOC_RESET ? (void *)&r : (void *)&s))
		TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, get_stats(fd, &st));
	alone = st.holds - base;

	/* Stopped every STEP holds, later than all again. */
	r.ticks = s.ticks = SLOW_FAR + 2;
	while (!landed && made < ATTEMPTS) {
		if (c)
			munmap(c, sizeof(*c));
		if (cmd == TW_IOC_RESET) {
			/* Back to the head, for the reset to walk the list again. */
			struct tw_reset head = { .handle = r.handle, .ticks = 1 };

			ASSERT_EQ(0, ioctl(fd, TW_IOC_RESET, &head)) TH_LOG("%s", strerror(errno));
		}
		c = stopped_every(_metadata, fd, cmd, cmd == TW_IOC_RESET ? (void *)&r : (void *)&s,
				  0, STEP, STOPS, &landed, &took, NULL);
		made++;
		EXPECT_EQ(0, c->ret) TH_LOG("call %d: %s", made, strerror(c->err));
		if (!c->ret) {
			/* Placed as asked, whatever stopped it. */
			__u64 h = cmd == TW_IOC_RESET ? r.handle : ((struct tw_set *)c->arg)->handle;

			ASSERT_EQ(0, query(fd, h, &q));
			EXPECT_EQ(1, q.pending);
			EXPECT_EQ(SLOW_FAR + 2, q.deadline - q.now);
		}
	}
	TH_LOG("%d stops came while call %d of %d ran; %llu holds, %llu without a stop; it "
	       "returned %ld (%s)", landed, made, ATTEMPTS, took, alone, c->ret,
	       c->ret ? strerror(c->err) : "no error");
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(SLOW_N + (cmd == TW_IOC_RESET ? 1 : 1 + made), st.outstanding);
	EXPECT_EQ(0, st.stopped);
	SKIP_IF_NOT_SLOW(landed, c->ret, c->err, "every placement ended before a stop came");
	EXPECT_GE(alone + PER_STOP * landed, took) TH_LOG("the walk started over after a stop");
	munmap(c, sizeof(*c));
}

TEST_F_TIMEOUT(slow_start, stops_faster_than_a_set_walk_do_not_keep_it_from_ending, 300)
{
	if (self->fd >= 0)
		placement_under_stops(_metadata, self->fd, TW_IOC_SETCALLOUT);
}

TEST_F_TIMEOUT(slow_start, stops_faster_than_a_reset_walk_do_not_keep_it_from_ending, 300)
{
	if (self->fd >= 0)
		placement_under_stops(_metadata, self->fd, TW_IOC_RESET);
}

/*
 * A stop and a continue while the storage of the largest instance is made restart the
 * CONFIGURE, which had configured nothing yet: it ends with the instance configured, where a
 * handled signal ends it with EINTR (a_signal_ends_the_configuration_of_the_largest_instance).
 * One stop: the storage a CONFIGURE gives up is freed behind it, and a second restart in a row
 * could find the memory it needs still taken.
 */
TEST_F_TIMEOUT(instance, a_stop_and_a_continue_restart_the_configuration_of_the_largest_instance,
	       300)
{
	struct tw_config c = largest_config(variant->scheme);
	int landed, ret;

	if (self->fd < 0)
		return;
	ret = stopped_ioctl(_metadata, self->fd, TW_IOC_CONFIGURE, &c, 20000, 1, &landed);
	SKIP_IF_NOT_STOPPED(landed, ret);
	ASSERT_EQ(0, ret) TH_LOG("the CONFIGURE: %s", strerror(errno));
	expect_configured_and_firing(_metadata, self->fd, variant->scheme);
}

/* ---- The cgroup freezer ------------------------------------------------------------------- */

struct freezer {
	char cg[512];
	bool mounted;
};

/*
 * Makes a cgroup to freeze processes in; 0, -1 where the kernel has no cgroup v2 freezer (no
 * CONFIG_CGROUPS: the caller skips), or -2 where the cgroup could not be made.
 */
static int freezer_make(struct __test_metadata *_metadata, struct freezer *fz)
{
	const char *root = cgroup2_root(&fz->mounted);
	char path[600];

	if (!root)
		return -1;
	snprintf(fz->cg, sizeof(fz->cg), "%s/timerwheel-freezer-%d", root, (int)getpid());
	if (mkdir(fz->cg, 0755)) {
		TH_LOG("mkdir %s: %s", fz->cg, strerror(errno));
		return -2;
	}
	snprintf(path, sizeof(path), "%s/cgroup.freeze", fz->cg);
	if (access(path, W_OK)) {
		rmdir(fz->cg);
		return -1;
	}
	return 0;
}

/* Freezes (1) or thaws (0) the cgroup and waits (up to PROMPT_NS) until cgroup.events says so. */
static int freezer_set(struct freezer *fz, int frozen)
{
	char events[600];

	snprintf(events, sizeof(events), "%s/cgroup.events", fz->cg);
	if (write_at(fz->cg, "cgroup.freeze", frozen ? "1" : "0"))
		return -1;
	return WAIT_FOR(counter(events, "frozen") == frozen) ? 0 : -1;
}

static void freezer_remove(struct __test_metadata *_metadata, struct freezer *fz)
{
	EXPECT_EQ(0, rmdir(fz->cg)) TH_LOG("rmdir %s: %s", fz->cg, strerror(errno));
	if (fz->mounted)
		EXPECT_EQ(0, umount("/sys/fs/cgroup")) TH_LOG("%s", strerror(errno));
}

#define SKIP_IF_NO_FREEZER(fz)                                                             \
	do {                                                                               \
		int made_ = freezer_make(_metadata, (fz));                                 \
		if (made_ == -1)                                                           \
			TW_SKIP(return, "no cgroup v2 freezer (the kernel has no "         \
				"CONFIG_CGROUPS, or none before 5.2)");                    \
		ASSERT_EQ(0, made_);                                                       \
	} while (0)

/*
 * The cgroup v2 freezer (cgroup.freeze; the system's freezer, at suspend, stops tasks alike)
 * freezes a process waiting in read(2) for a record, since the wait is interruptible:
 * cgroup.events says frozen. A record that comes meanwhile waits in the ring, unread; thawed,
 * the read starts again and returns it.
 */
TEST_F_TIMEOUT(file, a_reader_waiting_in_a_frozen_cgroup_freezes_and_thawed_reads_its_record, 120)
{
	struct child_call *r;
	struct tw_fired rec;
	struct freezer fz;
	int status;
	pid_t pid;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_manual(self->fd, 0, 0, 16));
	ASSERT_EQ(0, set_callout(self->fd, 5, 42, NULL));
	SKIP_IF_NO_FREEZER(&fz);
	pid = child_call(&r, fz.cg, self->fd, 0, NULL, sizeof(rec));
	ASSERT_LE(0, pid);
	EXPECT_TRUE(WAIT_FOR(atomic_load(&r->began) && held_in(pid, SYS_read)))
		TH_LOG("the reader did not wait in read(2)");
	EXPECT_EQ(0, freezer_set(&fz, 1)) TH_LOG("the waiting reader did not freeze");
	/* No ASSERT until thawed: a test that ends early leaves its frozen child to be killed. */
	EXPECT_EQ(0, advance(self->fd, 5));
	usleep(100000);
	EXPECT_EQ(0, atomic_load(&r->ended)) TH_LOG("a frozen reader read");
	EXPECT_EQ(0, freezer_set(&fz, 0)) TH_LOG("the reader did not thaw");
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("status %#x", status);
	EXPECT_EQ((long)sizeof(rec), r->ret) TH_LOG("the read: %s", strerror(r->err));
	memcpy(&rec, r->arg, sizeof(rec));
	EXPECT_EQ(42, rec.cookie);
	munmap(r, sizeof(*r));
	freezer_remove(_metadata, &fz);
}

/*
 * A process frozen with its cgroup during a long untimeout walk (thousands of duplicates of its
 * key) is held on its way out of the ioctl, the walk having cancelled nothing; thawed, the call
 * starts again and cancels the duplicate due first, once: the freezer is no signal to end it
 * with EINTR on. A walk that ends before a freeze lands is made again, on the duplicates left,
 * up to ATTEMPTS times: each of those must have cancelled the duplicate due first, once.
 */
TEST_F_TIMEOUT(file, an_untimeout_walk_frozen_with_its_cgroup_goes_on_thawed, 300)
{
	enum { DUPLICATES = 100000, ATTEMPTS = 8 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 1 };
	__u64 due[ATTEMPTS]; /* the duplicates due first, in their order */
	struct child_call *c = NULL;
	struct freezer fz;
	struct tw_stats st;
	struct tw_query q;
	bool failed = false;
	int status, held = 0, made = 0, i;
	pid_t pid;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_manual(self->fd, 0, 0, DUPLICATES + 16));
	ASSERT_NE(0, set_duplicates(_metadata, self->fd, u.func, u.arg, DUPLICATES - ATTEMPTS,
				    DUPLICATES + 50));
	/* The rest due sooner, one at a time, for their handles: due[i] in 51 + i ticks. */
	for (i = ATTEMPTS - 1; i >= 0; i--) {
		due[i] = set_duplicates(_metadata, self->fd, u.func, u.arg, 1, 51 + i);
		ASSERT_NE(0, due[i]);
	}
	SKIP_IF_NO_FREEZER(&fz);
	while (!held && !failed && made < ATTEMPTS) {
		if (c)
			munmap(c, sizeof(*c));
		pid = child_call(&c, fz.cg, self->fd, TW_IOC_UNTIMEOUT, &u, sizeof(u));
		ASSERT_LE(0, pid);
		made++;
		WAIT_FOR(atomic_load(&c->began));
		/* Frozen and thawed again and again until a freeze comes while it walks, or it ends. */
		while (!held && !failed && !atomic_load(&c->ended)) {
			if (freezer_set(&fz, 1)) {
				TH_LOG("the walking process did not freeze");
				failed = true;
			}
			held = !atomic_load(&c->ended) && held_in(pid, SYS_ioctl);
			if (freezer_set(&fz, 0)) {
				TH_LOG("the walking process did not thaw");
				failed = true;
			}
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status)) TH_LOG("status %#x", status);
		/* Each call cancels the duplicate due first of those left, frozen or not. */
		EXPECT_EQ(0, c->ret) TH_LOG("untimeout %d: %s", made, strerror(c->err));
		ASSERT_EQ(0, query(self->fd, due[made - 1], &q));
		EXPECT_EQ(0, q.pending) TH_LOG("untimeout %d left the duplicate due first", made);
	}
	EXPECT_FALSE(failed);
	freezer_remove(_metadata, &fz);
	TH_LOG("%s in untimeout %d of %d; it returned %ld (%s)",
	       held ? "frozen in the walk" : "every walk had ended when the freeze came", made,
	       ATTEMPTS, c->ret, c->ret ? strerror(c->err) : "no error");
	/* Once each: no call cancelled a second duplicate, whether it started again or not. */
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(DUPLICATES - made, st.outstanding);
	EXPECT_EQ(made, st.stopped);
	if (made < ATTEMPTS) {
		ASSERT_EQ(0, query(self->fd, due[made], &q));
		EXPECT_EQ(1, q.pending) TH_LOG("the duplicate due next was cancelled too");
	}
	SKIP_IF_NOT_SLOW(held, c->ret, c->err, "every untimeout ended before the freeze came");
	munmap(c, sizeof(*c));
}

/*
 * A signal caught by a handler ends a long untimeout walk with EINTR, nothing cancelled. The
 * call made again then cancels what a walk from the chain's head would: a callout of the key
 * set meanwhile, due before all, is looked at (the walk the signal cut short is not taken up
 * once a legacy callout was started), and with nothing set meanwhile the duplicate due first.
 */
TEST_F_TIMEOUT(file, an_untimeout_a_signal_ends_cancels_nothing_and_the_next_sees_all, 300)
{
	enum { DUPLICATES = 100000 };
	struct sigaction sa = { .sa_handler = note_signal }; /* no SA_RESTART */
	struct tw_kick k = { .fd = self->fd, .sig = SIGALRM, .after = 2 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 1 };
	struct tw_timeout t = { .func = 0xf00, .arg = 1, .ticks = 10 };
	struct tw_stats st;
	struct tw_query q;
	int ret, err, round;
	__u64 first;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_manual(self->fd, 0, 0, DUPLICATES + 16));
	first = set_duplicates(_metadata, self->fd, u.func, u.arg, DUPLICATES, DUPLICATES + 50);
	ASSERT_NE(0, first);
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	for (round = 0; round < 2; round++) {
		ret = tw_kicked_ioctl(&k, TW_IOC_UNTIMEOUT, &u);
		err = errno;
		/*
		 * A kicker kept off the CPU between the holds it waited for and its signal may send
		 * it after the walk has ended: no hold came after it. A walk that went on past the
		 * signal took some.
		 */
		SKIP_IF_NOT_SLOW(atomic_load(&k.sent) && (ret || k.holds_after), ret, err,
				 "the untimeout ended before the signal was sent");
		ASSERT_EQ(-1, ret);
		EXPECT_EQ(EINTR, err);
		EXPECT_GE(TW_HOLDS_PAST_A_SIGNAL, k.holds_after);
		ASSERT_EQ(0, get_stats(self->fd, &st));
		EXPECT_EQ(DUPLICATES, st.outstanding);
		EXPECT_EQ(round, st.stopped) TH_LOG("the untimeout a signal ended cancelled one");
		if (round == 0) {
			/* Due before every duplicate, and at the chain's head, behind the walk. */
			ASSERT_EQ(0, ioctl(self->fd, TW_IOC_TIMEOUT, &t)) TH_LOG("%s", strerror(errno));
			ASSERT_EQ(0, ioctl(self->fd, TW_IOC_UNTIMEOUT, &u)) TH_LOG("%s", strerror(errno));
			ASSERT_EQ(0, query(self->fd, t.handle, &q));
			EXPECT_EQ(0, q.pending) TH_LOG("the callout set since the signal was passed over");
		} else {
			ASSERT_EQ(0, ioctl(self->fd, TW_IOC_UNTIMEOUT, &u)) TH_LOG("%s", strerror(errno));
		}
		ASSERT_EQ(0, query(self->fd, first, &q));
		EXPECT_EQ(round == 0, q.pending) TH_LOG("round %d: the duplicate due first", round);
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(DUPLICATES - 1, st.outstanding);
	EXPECT_EQ(2, st.stopped);
}

static int others_set;

/* While an untimeout's caller is stopped: a callout of another key than the one it cancels. */
static void set_another_key(struct __test_metadata *_metadata, int fd)
{
	struct tw_timeout t = { .func = 0xf01, .arg = 1, .ticks = 10 };

	ASSERT_EQ(0, ioctl(fd, TW_IOC_TIMEOUT, &t)) TH_LOG("%s", strerror(errno));
	others_set++;
}

/*
 * A stream of stops and continues faster than a long untimeout walk does not keep it from ending:
 * the call, made again each time, goes on where its walk stopped, though a callout of another key
 * is set each time it is stopped (on its chain or not, it is no match). The child making it is
 * stopped each time it has done STEP holds more (tw_stats.holds: a manual-clock instance does no
 * other), STOPS times. It then takes no more holds than an untimeout of the same chain made
 * without a stop; a walk started over from the chain's head at every stop would take STEP more for
 * each, and a stop every STEP holds would keep it walking for ever. A walk that ends before a stop
 * lands (the test's process scheduled late) is made again, on the duplicates left, up to ATTEMPTS
 * times.
 */
TEST_F_TIMEOUT(file, stops_faster_than_an_untimeout_walk_do_not_keep_it_from_ending, 300)
{
	enum { DUPLICATES = 200000, STOPS = 10, STEP = 4, ATTEMPTS = 8 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 1 };
	__u64 due[1 + ATTEMPTS], base, alone, took = 0;
	struct child_call *c = NULL;
	int landed = 0, made = 0, i;
	struct tw_stats st;
	struct tw_query q;

	if (self->fd < 0)
		return;
	others_set = 0;
	ASSERT_EQ(0, configure_manual(self->fd, 0, 0, DUPLICATES + 64));
	ASSERT_NE(0, set_duplicates(_metadata, self->fd, u.func, u.arg, DUPLICATES - 1 - ATTEMPTS,
				    DUPLICATES + 50));
	/* The ones due first, for their handles: due[i] in 51 + i ticks. */
	for (i = ATTEMPTS; i >= 0; i--) {
		due[i] = set_duplicates(_metadata, self->fd, u.func, u.arg, 1, 51 + i);
		ASSERT_NE(0, due[i]);
	}

	/* Without a stop: the holds a walk of the chain takes. */
	ASSERT_EQ(0, get_stats(self->fd, &st));
	base = st.holds;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_UNTIMEOUT, &u)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	alone = st.holds - base;
	ASSERT_EQ(0, query(self->fd, due[0], &q));
	EXPECT_EQ(0, q.pending) TH_LOG("the duplicate due first is still there");

	/* Stopped every STEP holds. */
	while (!landed && made < ATTEMPTS) {
		if (c)
			munmap(c, sizeof(*c));
		c = stopped_every(_metadata, self->fd, TW_IOC_UNTIMEOUT, &u, 0, STEP, STOPS,
				  &landed, &took, set_another_key);
		made++;
		/* Each call cancels the duplicate due first of those left, stopped or not. */
		EXPECT_EQ(0, c->ret) TH_LOG("untimeout %d: %s", made, strerror(c->err));
		ASSERT_EQ(0, query(self->fd, due[made], &q));
		EXPECT_EQ(0, q.pending) TH_LOG("untimeout %d left the duplicate due first", made);
	}
	TH_LOG("%d stops came while untimeout %d of %d ran, %d callouts of another key set; %llu "
	       "holds, %llu without a stop; it returned %ld (%s)", landed, made, ATTEMPTS,
	       others_set, took, alone, c->ret, c->ret ? strerror(c->err) : "no error");
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(DUPLICATES - 1 - made + others_set, st.outstanding);
	EXPECT_EQ(1 + made, st.stopped);
	SKIP_IF_NOT_SLOW(landed, c->ret, c->err, "every untimeout ended before a stop came");
	EXPECT_GE(alone + 1, took) TH_LOG("the walk started over after a stop");
	munmap(c, sizeof(*c));
}

/* ---- The real clock's arming under a long batch, and behind ------------------------------ */

/*
 * A batch arms the real clock between its holds for a callout it has started due before the
 * tick the clock is armed for: the rest of the batch may hold the file for long. Here a batch
 * sets a callout one tick ahead, then untimeouts TW_MAX_BATCH - 1 of BATCH_DUPLICATES
 * duplicates, each walking their whole chain (billions of entries in all: seconds on hardware,
 * far longer under an emulator). The callout fires, and a reader reads it, while the batch
 * still runs; the reader then ends the batch with SIGUSR1. Armed only at the batch's end, the
 * callout would wait for it: a watchdog ends the batch with SIGALRM after PROMPT_NS, or it ends
 * by itself, either way before the record. The duplicates are far, on a 10 ms clock (2^30 ticks;
 * within the wheel of scheme 4, which spans its slots, 82 to 123 s: a quarter of it short of its
 * end, which the clock's lag counts in), so nothing else wakes the clock meanwhile; they
 * descend, so that each start of a sorted list (schemes 2 and 5) is at its head; the one set
 * first walks no list either, due before all of them.
 */
#define BATCH_DUPLICATES (TW_MAX_CAPACITY_SCHEME1 - 16)
#define BATCH_COOKIE 0xba7c4

static atomic_int first_signal;

static void note_first_signal(int sig)
{
	int none = 0;

	atomic_compare_exchange_strong(&first_signal, &none, sig);
}

struct batch_reader {
	int fd;
	pthread_t batcher;
	atomic_int batch_done, read_done;
	ssize_t ret;
	struct tw_fired rec;
};

/* Reads one record, then ends the batch. */
static void *read_then_end_the_batch(void *arg)
{
	struct batch_reader *r = arg;

	r->ret = read(r->fd, &r->rec, sizeof(r->rec));
	atomic_store(&r->read_done, 1);
	if (!atomic_load(&r->batch_done))
		pthread_kill(r->batcher, SIGUSR1);
	return NULL;
}

/* Ends the batch after PROMPT_NS, unless the reader has. */
static void *batch_watchdog(void *arg)
{
	struct batch_reader *r = arg;

	if (!WAIT_FOR(atomic_load(&r->read_done) || atomic_load(&r->batch_done)))
		pthread_kill(r->batcher, SIGALRM);
	return NULL;
}

TEST_F_TIMEOUT(clock, a_callout_a_long_batch_sets_fires_while_it_runs, 300)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_REAL,
			       .slots = variant->slots, .tick_ns = 10 * MS,
			       .capacity = TW_MAX_CAPACITY_SCHEME1 };
	struct batch_reader r = { .fd = self->fd, .batcher = pthread_self() };
	struct sigaction sa = { .sa_handler = note_first_signal }; /* no SA_RESTART */
	struct tw_batch b = { .count = TW_MAX_BATCH };
	pthread_t reader, watchdog;
	struct tw_op *ops;
	int i, ret, err, ran;
	__u64 t0, took;

	if (self->fd < 0)
		return;
	ops = calloc(TW_MAX_BATCH, sizeof(*ops));
	ASSERT_TRUE(ops != NULL);
	b.ops = (uintptr_t)ops;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_CONFIGURE, &c)) TH_LOG("%s", strerror(errno));
	for (i = 0; i < BATCH_DUPLICATES; i++) {
		__u64 ticks = variant->scheme == 4 ?
				      variant->slots * 3 / 4 - i % (variant->slots / 4) :
				      (1ULL << 30) - i;

		ops[i] = (struct tw_op){ .op = TW_OP_TIMEOUT, .a = 0xf00, .b = 1, .c = ticks };
	}
	ASSERT_EQ(0, run_batch(self->fd, ops, BATCH_DUPLICATES)) TH_LOG("%s", strerror(errno));

	ops[0] = (struct tw_op){ .op = TW_OP_SET, .a = 1, .b = BATCH_COOKIE };
	for (i = 1; i < TW_MAX_BATCH; i++)
		ops[i] = (struct tw_op){ .op = TW_OP_UNTIMEOUT, .a = 0xf00, .b = 1 };
	atomic_store(&first_signal, 0);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, pthread_create(&reader, NULL, read_then_end_the_batch, &r));
	ASSERT_EQ(0, pthread_create(&watchdog, NULL, batch_watchdog, &r));
	t0 = now_ns();
	ret = ioctl(self->fd, TW_IOC_BATCH, &b);
	err = errno;
	took = now_ns() - t0;
	atomic_store(&r.batch_done, 1);
	pthread_join(watchdog, NULL);
	/* Armed at the batch's end at the latest: the reader gets the record then. */
	pthread_join(reader, NULL);
	for (ran = 1; ran < TW_MAX_BATCH && !ops[ran].result; ran++)
		;
	TH_LOG("the batch ran %d untimeouts in %llu ms and ended %s", ran - 1, took / MS,
	       ret ? strerror(err) : "by itself");
	EXPECT_EQ(SIGUSR1, atomic_load(&first_signal))
		TH_LOG("the callout set first was not read while the batch ran (%s)",
		       atomic_load(&first_signal) == SIGALRM ? "the watchdog ended it" :
							       "it ended by itself");
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(EINTR, err);
	EXPECT_EQ(0, ops[0].result);
	ASSERT_EQ(sizeof(r.rec), r.ret) TH_LOG("read: %s", strerror(errno));
	EXPECT_EQ(BATCH_COOKIE, r.rec.cookie);
	EXPECT_EQ(ops[0].handle, r.rec.handle);
	EXPECT_LE(r.rec.deadline, r.rec.fired);
	free(ops);
}

/*
 * Behind: the slow ticks' geometry on a second file, on the periodic real clock: every tick
 * visits tens of thousands of callouts, more than a callback may do, so that each callback
 * leaves the rest to the next period. Sets, resets and batches on it leave the catch-up to the
 * callback, armed for the next period: they do not wake it again, whatever their number, so the
 * instance wakes at most once a period. (Arming it again from a call for the tick after the one
 * the scheme stands on would arm it in the past: a wakeup at once on every call.)
 */
#define BEHIND_TICK_NS (10 * MS)
#define BEHIND_ROUNDS 100

TEST_F_TIMEOUT(slow_tick, calls_on_a_real_clock_behind_wake_it_once_a_period_at_most, 600)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_REAL,
			       .capacity = variant->n + 1, .tick_ns = BEHIND_TICK_NS,
			       .flags = TW_CONFIG_PERIODIC };
	struct tw_stats st, before, after;
	struct tw_op op;
	__u64 t_cfg, t1, t2, h, periods, wakeups;
	int fd, i;

	if (self->fd < 0)
		return;
	fd = tw_open(_metadata);
	ASSERT_LE(0, fd);
	t_cfg = now_ns();
	ASSERT_EQ(0, configure_slots(_metadata, fd, &c, variant->min_slots))
		TH_LOG("configure: %s", strerror(errno));
	fill_descending(_metadata, fd, variant->n, 1ULL << 50, 1ULL << 20);
	/* Behind: the clock's tick stays short of the real one by more than a period. */
	ASSERT_TRUE(WAIT_FOR(!get_stats(fd, &st) &&
			     st.now + 2 < (now_ns() - t_cfg) / BEHIND_TICK_NS))
		TH_LOG("the instance kept up: tick %llu after %llu periods", st.now,
		       (now_ns() - t_cfg) / BEHIND_TICK_NS);

	t1 = now_ns();
	ASSERT_EQ(0, get_stats(fd, &before));
	for (i = 0; i < BEHIND_ROUNDS; i++) {
		ASSERT_EQ(0, set_callout(fd, 1ULL << 40, i, &h)) TH_LOG("%s", strerror(errno));
		ASSERT_EQ(0, reset(fd, h, (1ULL << 40) + 1, 0)) TH_LOG("%s", strerror(errno));
		op = (struct tw_op){ .op = TW_OP_UNSET, .handle = h };
		ASSERT_EQ(0, run_batch(fd, &op, 1)) TH_LOG("%s", strerror(errno));
	}
	ASSERT_EQ(0, get_stats(fd, &after));
	t2 = now_ns();

	periods = (t2 - t1) / BEHIND_TICK_NS;
	wakeups = after.wakeups - before.wakeups;
	TH_LOG("%d rounds of a set, a reset and a batch in %llu ms (%llu periods): %llu wakeups; "
	       "the clock at tick %llu after %llu periods", BEHIND_ROUNDS, (t2 - t1) / MS, periods,
	       wakeups, after.now, (t2 - t_cfg) / BEHIND_TICK_NS);
	EXPECT_GE(periods + 2, wakeups);
	/* Still behind at the end: the rounds ran against an instance behind throughout. */
	EXPECT_GT((t2 - t_cfg) / BEHIND_TICK_NS, after.now + 2);
	EXPECT_EQ(variant->n, after.outstanding);
	close(fd);
}

TW_HARNESS_MAIN
