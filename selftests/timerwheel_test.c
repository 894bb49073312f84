// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl tests of /dev/timerwheel (rust_timerwheel), kselftest_harness style.
 *
 * Module-level tests are plain TESTs; the callout facility is tested once per backend through
 * FIXTURE_VARIANT(instance), one variant per scheme of the paper. Run by timerwheel.sh with the
 * module loaded; every test skips when the device node is missing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "timerwheel.h"

#define BAD_PTR ((void *)8)

static int open_dev(struct __test_metadata *_metadata)
{
	int fd = open(TW_DEVICE, O_RDWR);

	if (fd < 0 && errno == ENOENT)
		SKIP(return -1, TW_DEVICE " is missing: is rust_timerwheel loaded?");
	ASSERT_LE(0, fd) TH_LOG("open " TW_DEVICE ": %s", strerror(errno));
	return fd;
}

static __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* xorshift64*: reproducible random numbers. */
static __u64 rnd(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static int set_callout(int fd, __u64 ticks, __u64 cookie, __u64 *handle)
{
	struct tw_set s = { .ticks = ticks, .cookie = cookie };
	int ret = ioctl(fd, TW_IOC_SETCALLOUT, &s);

	if (!ret && handle)
		*handle = s.handle;
	return ret;
}

static int unset_callout(int fd, __u64 handle)
{
	return ioctl(fd, TW_IOC_UNSETCALLOUT, &handle);
}

static int advance(int fd, __u64 n)
{
	return ioctl(fd, TW_IOC_ADVANCE, &n);
}

static int get_stats(int fd, struct tw_stats *st)
{
	return ioctl(fd, TW_IOC_STATS, st);
}

/* Reads every record there is, without blocking; returns how many. */
static int drain(int fd, struct tw_fired *out, int max)
{
	int flags = fcntl(fd, F_GETFL), n = 0;

	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	while (n < max) {
		ssize_t r = read(fd, out + n, (max - n) * sizeof(*out));

		if (r <= 0)
			break;
		n += r / sizeof(*out);
	}
	fcntl(fd, F_SETFL, flags);
	return n;
}

/* ---- The module ---------------------------------------------------------------------------- */

TEST(info_reports_version_tick_and_schemes)
{
	struct tw_info info;
	int fd = open_dev(_metadata);

	if (fd < 0)
		return;
	memset(&info, 0xff, sizeof(info));
	ASSERT_EQ(0, ioctl(fd, TW_IOC_INFO, &info));
	EXPECT_EQ(TW_VERSION, info.version);
	EXPECT_LE(TW_MIN_TICK_NS, info.tick_ns);
	EXPECT_GE(TW_MAX_TICK_NS, info.tick_ns);
	EXPECT_EQ(0xfe, info.schemes); /* schemes 1..7 */
	close(fd);
}

TEST(heartbeat_ticks_advance)
{
	struct tw_info a, b;
	__u64 t0, t1, expect;
	int fd = open_dev(_metadata);

	if (fd < 0)
		return;
	t0 = now_ns();
	ASSERT_EQ(0, ioctl(fd, TW_IOC_INFO, &a));
	usleep(200 * 1000);
	ASSERT_EQ(0, ioctl(fd, TW_IOC_INFO, &b));
	t1 = now_ns();
	expect = (t1 - t0) / a.tick_ns;
	/* The count follows the clock: at least half the periods elapsed, at most all plus one. */
	EXPECT_LE(a.ticks + expect / 2, b.ticks);
	EXPECT_GE(a.ticks + expect + 1, b.ticks);
	close(fd);
}

TEST(unknown_commands_are_enotty)
{
	int fd = open_dev(_metadata);

	if (fd < 0)
		return;
	EXPECT_EQ(-1, ioctl(fd, _IO(TW_IOC_MAGIC, 0x7f), 0));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IOR('x', 0x00, struct tw_info), 0));
	EXPECT_EQ(ENOTTY, errno);
	/* A known number with the wrong size is another command. */
	EXPECT_EQ(-1, ioctl(fd, _IOR(TW_IOC_MAGIC, 0x00, __u64), 0));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

TEST(bad_pointers_are_efault)
{
	unsigned long cmds[] = { TW_IOC_INFO,	  TW_IOC_CONFIGURE, TW_IOC_SETCALLOUT,
				 TW_IOC_UNSETCALLOUT, TW_IOC_TIMEOUT,   TW_IOC_UNTIMEOUT,
				 TW_IOC_ADVANCE,  TW_IOC_BATCH,	    TW_IOC_STATS,
				 TW_IOC_BENCH };
	struct tw_batch b = { .count = 1 };
	struct tw_stats st;
	unsigned int i;
	int fd = open_dev(_metadata);

	if (fd < 0)
		return;
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		EXPECT_EQ(-1, ioctl(fd, cmds[i], BAD_PTR)) TH_LOG("cmd %#lx", cmds[i]);
		EXPECT_EQ(EFAULT, errno) TH_LOG("cmd %#lx", cmds[i]);
	}
	/* A bad pointer inside the argument: nothing runs. */
	b.ops = (uintptr_t)BAD_PTR;
	EXPECT_EQ(-1, ioctl(fd, TW_IOC_BATCH, &b));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(0, st.started);
	close(fd);
}

/* ---- One instance per backend ---------------------------------------------------------------- */

FIXTURE(instance)
{
	int fd;
	__u64 seed;
};

FIXTURE_VARIANT(instance)
{
	__u32 scheme;
	__u32 slots; /* schemes 5, 6: M; scheme 4: MaxInterval */
};

FIXTURE_VARIANT_ADD(instance, scheme1_straightforward) { .scheme = 1 };
FIXTURE_VARIANT_ADD(instance, scheme2_ordered_list) { .scheme = 2 };
FIXTURE_VARIANT_ADD(instance, scheme3_heap) { .scheme = 3 };
FIXTURE_VARIANT_ADD(instance, scheme4_basic_wheel) { .scheme = 4, .slots = 4096 };
FIXTURE_VARIANT_ADD(instance, scheme5_hashed_sorted) { .scheme = 5, .slots = 64 };
FIXTURE_VARIANT_ADD(instance, scheme6_hashed_unsorted) { .scheme = 6, .slots = 64 };
FIXTURE_VARIANT_ADD(instance, scheme7_hierarchical) { .scheme = 7 };

/* Intervals the tests draw from: within every backend's range (scheme 4: 4096). */
#define MAX_TICKS 3000

FIXTURE_SETUP(instance)
{
	self->fd = open_dev(_metadata);
	self->seed = 0x9e3779b97f4a7c15ULL ^ variant->scheme;
}

FIXTURE_TEARDOWN(instance)
{
	if (self->fd >= 0)
		close(self->fd);
}

static int configure(int fd, const FIXTURE_VARIANT(instance) *v, __u32 clock, __u32 capacity,
		     __u64 start)
{
	struct tw_config c = {
		.scheme = v->scheme,
		.clock = clock,
		.capacity = capacity,
		.slots = v->slots,
		.start_tick = start,
		.ring = 65536,
		.budget = 65536,
	};

	return ioctl(fd, TW_IOC_CONFIGURE, &c);
}

/* Manual clock, near 2^32 so that no 32-bit wrap bug can hide. */
#define START (0xffffffffULL - 1000)

TEST_F(instance, every_callout_fires_once_on_its_tick_in_order)
{
	enum { N = 500 };
	static __u64 due[N];
	static int seen[N];
	struct tw_fired rec[N];
	__u64 tick = START, last = 0, max = 0;
	int i, got = 0;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, N, START));
	for (i = 0; i < N; i++) {
		__u64 t = 1 + rnd(&self->seed) % (i % 10 ? MAX_TICKS : 3); /* bursts too */

		ASSERT_EQ(0, set_callout(self->fd, t, i, NULL));
		due[i] = START + t;
		max = t > max ? t : max;
	}
	memset(seen, 0, sizeof(seen));
	while (tick < START + max) {
		int n;

		ASSERT_EQ(0, advance(self->fd, 1));
		tick++;
		n = drain(self->fd, rec, N);
		for (i = 0; i < n; i++) {
			ASSERT_LT(rec[i].cookie, N);
			EXPECT_EQ(TW_ORIGIN_CALLOUT, rec[i].origin);
			EXPECT_EQ(due[rec[i].cookie], rec[i].deadline);
			EXPECT_EQ(tick, rec[i].fired) TH_LOG("cookie %llu", rec[i].cookie);
			EXPECT_LE(last, rec[i].fired);
			last = rec[i].fired;
			seen[rec[i].cookie]++;
		}
		got += n;
	}
	EXPECT_EQ(N, got);
	for (i = 0; i < N; i++)
		EXPECT_EQ(1, seen[i]) TH_LOG("cookie %d", i);
}

TEST_F(instance, unset_callouts_never_fire)
{
	enum { N = 200 };
	__u64 h[N];
	struct tw_fired rec[N];
	int i, n;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, N, START));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, set_callout(self->fd, 1 + i % 50, i, &h[i]));
	/* Stop the odd ones, some after they are due but before they are processed. */
	ASSERT_EQ(0, advance(self->fd, 10));
	n = drain(self->fd, rec, N);
	for (i = 0; i < n; i++)
		EXPECT_EQ(0, rec[i].cookie % 2 == 1 && rec[i].deadline > START + 10);
	for (i = 1; i < N; i += 2) {
		if ((__u64)(i % 50) + 1 > 10) {
			EXPECT_EQ(0, unset_callout(self->fd, h[i])) TH_LOG("cookie %d", i);
			/* A second unset: stale. */
			EXPECT_EQ(-1, unset_callout(self->fd, h[i]));
			EXPECT_EQ(ENOENT, errno);
		}
	}
	ASSERT_EQ(0, advance(self->fd, 100));
	n = drain(self->fd, rec, N);
	for (i = 0; i < n; i++)
		EXPECT_FALSE(rec[i].cookie % 2 == 1 && rec[i].deadline > START + 10)
			TH_LOG("unset callout %llu fired", rec[i].cookie);
	/* A fired handle is stale too. */
	EXPECT_EQ(-1, unset_callout(self->fd, h[0]));
	EXPECT_EQ(ENOENT, errno);
}

TEST_F(instance, rearm_from_the_ring_reader)
{
	struct tw_fired rec;
	__u64 expect = START;
	int round;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 4, START));
	ASSERT_EQ(0, set_callout(self->fd, 7, 42, NULL));
	for (round = 0; round < 20; round++) {
		expect += 7;
		ASSERT_EQ(0, advance(self->fd, 7));
		ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
		EXPECT_EQ(42, rec.cookie);
		EXPECT_EQ(expect, rec.fired);
		ASSERT_EQ(0, set_callout(self->fd, 7, 42, NULL));
	}
}

TEST_F(instance, legacy_interface_finds_func_arg)
{
	struct tw_timeout t = { .func = 0xf00, .arg = 1, .ticks = 5 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 1 };
	struct tw_fired rec[8];
	int n, i;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 8, START));
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_TIMEOUT, &t));
	t.arg = 2;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_TIMEOUT, &t));
	t.func = 0xbaa;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_TIMEOUT, &t));
	EXPECT_EQ(0, ioctl(self->fd, TW_IOC_UNTIMEOUT, &u));
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_UNTIMEOUT, &u));
	EXPECT_EQ(ENOENT, errno);
	ASSERT_EQ(0, advance(self->fd, 5));
	n = drain(self->fd, rec, 8);
	ASSERT_EQ(2, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(TW_ORIGIN_LEGACY, rec[i].origin);
		EXPECT_EQ(2, rec[i].arg);
		EXPECT_EQ(START + 5, rec[i].fired);
	}
}

TEST_F(instance, documented_errnos)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_MANUAL };
	struct tw_fired rec;
	__u64 h, n;
	char small[8];

	if (self->fd < 0)
		return;
	/* Bad configurations leave the instance unconfigured. */
	c.scheme = 8;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.scheme = variant->scheme;
	c.clock = 7;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.clock = TW_CLOCK_REAL;
	c.tick_ns = 10;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.tick_ns = 0;
	c.capacity = TW_MAX_CAPACITY + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	if (variant->scheme == 5 || variant->scheme == 6) {
		c.capacity = 0;
		c.slots = 100;
		EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
		EXPECT_EQ(EINVAL, errno);
	}

	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 2, START));
	/* Configure after use. */
	EXPECT_EQ(-1, configure(self->fd, variant, TW_CLOCK_MANUAL, 2, START));
	EXPECT_EQ(EBUSY, errno);
	/* Bad intervals. */
	EXPECT_EQ(-1, set_callout(self->fd, 0, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, set_callout(self->fd, TW_MAX_TICKS + 1, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
	if (variant->scheme == 4) {
		EXPECT_EQ(-1, set_callout(self->fd, variant->slots + 1, 0, NULL));
		EXPECT_EQ(ERANGE, errno);
	}
	/* A full table. */
	ASSERT_EQ(0, set_callout(self->fd, 10, 1, &h));
	ASSERT_EQ(0, set_callout(self->fd, 10, 2, NULL));
	EXPECT_EQ(-1, set_callout(self->fd, 10, 3, NULL));
	EXPECT_EQ(ENOSPC, errno);
	/* Stale and never-issued handles. */
	EXPECT_EQ(0, unset_callout(self->fd, h));
	EXPECT_EQ(-1, unset_callout(self->fd, h));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, unset_callout(self->fd, 0xdeadbeefdeadbeefULL));
	EXPECT_EQ(ENOENT, errno);
	/* Advance: 0 and too many. */
	n = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_ADVANCE, &n));
	EXPECT_EQ(EINVAL, errno);
	n = TW_MAX_ADVANCE + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_ADVANCE, &n));
	EXPECT_EQ(EINVAL, errno);
	/* read: too small a buffer, nothing there without blocking. */
	EXPECT_EQ(-1, read(self->fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, read(self->fd, &rec, sizeof(rec)));
	EXPECT_EQ(EAGAIN, errno);
}

static void on_alarm(int sig)
{
	(void)sig;
}

TEST_F(instance, advance_is_interruptible_and_keeps_the_ticks_it_ran)
{
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	struct itimerval it = { .it_value = { .tv_usec = 2000 } };
	struct tw_stats st;
	__u64 n = TW_MAX_ADVANCE;
	int ret, err;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 16, START));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	ret = ioctl(self->fd, TW_IOC_ADVANCE, &n);
	err = errno;
	ASSERT_EQ(0, get_stats(self->fd, &st));
	if (ret == 0)
		SKIP(return, "2^20 ticks ran in under 2 ms: no signal arrived in time");
	EXPECT_EQ(EINTR, err);
	EXPECT_LT(0, st.ticks);
	EXPECT_GT(TW_MAX_ADVANCE, st.ticks);
	EXPECT_EQ(START + st.ticks, st.now);
}

TEST_F(instance, advance_needs_the_manual_clock)
{
	__u64 n = 1;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_REAL, 16, 0));
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_ADVANCE, &n));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(instance, batches_run_every_op_and_report_each_result)
{
	enum { N = 1000 };
	static struct tw_op ops[N + 2];
	struct tw_batch b = { .ops = (uintptr_t)ops, .count = N + 2 };
	struct tw_stats st;
	int i;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, N, START));
	for (i = 0; i < N; i++)
		ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = 1 + i % MAX_TICKS, .b = i };
	ops[N] = (struct tw_op){ .op = TW_OP_SET, .a = 5 }; /* full: ENOSPC */
	ops[N + 1] = (struct tw_op){ .op = 99 }; /* unknown: EINVAL */
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, ops[i].result) TH_LOG("op %d", i);
	EXPECT_EQ(-ENOSPC, ops[N].result);
	EXPECT_EQ(-EINVAL, ops[N + 1].result);
	/* Unset every second one by handle, reset the others. */
	for (i = 0; i < N; i++)
		ops[i] = (struct tw_op){ .op = i % 2 ? TW_OP_UNSET : TW_OP_RESET,
					 .handle = ops[i].handle, .a = 2, .b = i };
	b.count = N;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, ops[i].result) TH_LOG("op %d", i);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(N / 2, st.outstanding);
	EXPECT_EQ(N + N / 2, st.started);
	EXPECT_EQ(N, st.stopped);
	b.count = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BATCH, &b));
	EXPECT_EQ(EINVAL, errno);
	b.count = TW_MAX_BATCH + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BATCH, &b));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(instance, budget_carries_over_and_full_ring_drops_are_counted)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_MANUAL,
			       .capacity = 64, .slots = variant->slots, .ring = 8, .budget = 4 };
	struct tw_fired rec[16];
	struct tw_stats st;
	int i;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, set_callout(self->fd, 3, i, NULL));
	ASSERT_EQ(0, advance(self->fd, 3));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(4, st.fired);
	EXPECT_EQ(6, st.queued);
	EXPECT_EQ(4, st.max_tick_work);
	ASSERT_EQ(0, advance(self->fd, 2));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(10, st.fired);
	EXPECT_EQ(0, st.queued);
	EXPECT_EQ(6 + 2, st.carried);
	EXPECT_EQ(2, st.ring_drops);
	EXPECT_EQ(8, st.ring_used);
	EXPECT_EQ(8, drain(self->fd, rec, 16));
	EXPECT_EQ(4, st.lateness[0]); /* on time */
	EXPECT_EQ(4, st.lateness[1]); /* one tick late */
	EXPECT_EQ(2, st.lateness[2]); /* two */
}

TEST_F(instance, real_clock_fires_1000_callouts_over_1s_never_early)
{
	enum { N = 1000 };
	static struct tw_fired rec[N];
	struct tw_stats st;
	__u64 t0, late = 0;
	int i, got = 0;

	if (self->fd < 0)
		return;
	/* The clock starts inside TW_IOC_CONFIGURE: tick d comes no sooner than d ms after t0. */
	t0 = now_ns();
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_REAL, N, 0));
	for (i = 0; i < N; i++)
		ASSERT_EQ(0, set_callout(self->fd, 1 + i, i, NULL));
	alarm(60);
	while (got < N) {
		ssize_t r = read(self->fd, rec + got, (N - got) * sizeof(rec[0]));
		__u64 t = now_ns();
		int k;

		ASSERT_LT(0, r) TH_LOG("read: %s", strerror(errno));
		for (k = got; k < got + (int)(r / sizeof(rec[0])); k++) {
			/* Tick d is processed no earlier than d periods after the clock started. */
			EXPECT_LE(rec[k].deadline * 1000000ULL, t - t0)
				TH_LOG("callout %llu seen early", rec[k].cookie);
			EXPECT_LE(rec[k].deadline, rec[k].fired);
		}
		got += r / sizeof(rec[0]);
	}
	alarm(0);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(N, st.fired);
	for (i = 1; i < TW_LATENESS_BUCKETS; i++)
		late += st.lateness[i];
	EXPECT_EQ(N, st.lateness[0] + late);
	TH_LOG("lateness: %llu on time, %llu late; %llu overruns", st.lateness[0], late,
	       st.overruns);
}

/* ---- Concurrency ----------------------------------------------------------------------------- */

struct worker {
	int fd;
	__u64 seed, started, stopped;
	int ops;
};

static void *churn(void *arg)
{
	struct worker *w = arg;
	__u64 h[64] = { 0 };
	int i;

	for (i = 0; i < w->ops; i++) {
		__u64 *slot = &h[rnd(&w->seed) % 64];

		if (*slot && !unset_callout(w->fd, *slot))
			w->stopped++;
		if (!set_callout(w->fd, 1 + rnd(&w->seed) % 20, i, slot))
			w->started++;
		else
			*slot = 0;
	}
	return NULL;
}

/* fired + cancelled + outstanding = started, exactly, with the real clock running. */
static void check_conservation(struct __test_metadata *_metadata, int fd, __u64 started,
			       __u64 stopped)
{
	struct tw_stats st;

	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(started, st.started);
	EXPECT_EQ(stopped, st.stopped);
	EXPECT_EQ(st.started, st.fired + st.stopped + st.outstanding)
		TH_LOG("started %llu fired %llu stopped %llu outstanding %llu", st.started, st.fired,
		       st.stopped, st.outstanding);
}

TEST_F(instance, four_threads_on_one_fd)
{
	struct worker w[4];
	pthread_t t[4];
	__u64 started = 0, stopped = 0;
	int i;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_REAL, 4096, 0));
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ .fd = self->fd, .seed = 17 + i, .ops = 5000 };
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn, &w[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		started += w[i].started;
		stopped += w[i].stopped;
	}
	check_conservation(_metadata, self->fd, started, stopped);
}

TEST_F(instance, four_fds_in_parallel)
{
	struct worker w[4];
	pthread_t t[4];
	int i;

	if (self->fd < 0)
		return;
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ .fd = open_dev(_metadata), .seed = 99 + i, .ops = 5000 };
		ASSERT_LE(0, w[i].fd);
		ASSERT_EQ(0, configure(w[i].fd, variant, TW_CLOCK_REAL, 1024, 0));
		ASSERT_EQ(0, pthread_create(&t[i], NULL, churn, &w[i]));
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		check_conservation(_metadata, w[i].fd, w[i].started, w[i].stopped);
		close(w[i].fd);
	}
}

TEST_F(instance, close_with_many_outstanding)
{
	enum { N = 100000, CHUNK = 10000 };
	static struct tw_op ops[CHUNK];
	struct tw_batch b = { .ops = (uintptr_t)ops, .count = CHUNK };
	__u32 cap = variant->scheme == 1 ? TW_MAX_CAPACITY_SCHEME1 : N;
	int i, k;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_REAL, cap, 0));
	for (k = 0; k < (int)cap; k += CHUNK) {
		b.count = cap - k < CHUNK ? cap - k : CHUNK;
		for (i = 0; i < (int)b.count; i++)
			ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = 1 + (k + i) % 2000, .b = i };
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
		for (i = 0; i < (int)b.count; i++)
			ASSERT_EQ(0, ops[i].result);
	}
	/* The teardown closes the fd with them all outstanding; timerwheel.sh then unloads. */
}

/* ---- Random ioctls --------------------------------------------------------------------------- */

TEST(random_ioctls_then_basic_use)
{
	unsigned long cmds[] = { TW_IOC_INFO,	  TW_IOC_CONFIGURE, TW_IOC_SETCALLOUT,
				 TW_IOC_UNSETCALLOUT, TW_IOC_TIMEOUT,   TW_IOC_UNTIMEOUT,
				 TW_IOC_ADVANCE,  TW_IOC_BATCH,	    TW_IOC_STATS,
				 TW_IOC_BENCH };
	enum { CALLS = 100000 };
	__u64 seed = 0x5eed, *buf;
	char *unmapped;
	int fd = open_dev(_metadata), i, ok = 0;

	if (fd < 0)
		return;
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, unmapped);
	for (i = 0; i < CALLS; i++) {
		__u64 r = rnd(&seed);
		unsigned long cmd;
		void *arg;
		int k;

		switch (r % 4) {
		case 0: /* a random number in our magic */
			cmd = _IOC(r >> 8 & 3, TW_IOC_MAGIC, r >> 16 & 0x1f, r >> 24 & 0x7f);
			break;
		case 1: /* fully random */
			cmd = r >> 32;
			break;
		default: /* a real command */
			cmd = cmds[(r >> 8) % (sizeof(cmds) / sizeof(cmds[0]))];
		}
		switch (r >> 40 & 7) {
		case 0:
			arg = NULL;
			break;
		case 1:
			arg = unmapped;
			break;
		case 2:
			arg = (void *)0xffff888000000000ULL; /* kernel memory */
			break;
		case 3: /* small numbers in every field */
			for (k = 0; k < 512; k++)
				buf[k] = rnd(&seed) % 8;
			arg = buf;
			break;
		default: /* random bytes, with a pointer field pointing at them now and then */
			for (k = 0; k < 512; k++)
				buf[k] = rnd(&seed);
			if (r & 1)
				buf[0] = (uintptr_t)buf;
			arg = (char *)buf + (r >> 50) % 64;
		}
		if (ioctl(fd, cmd, arg) == 0)
			ok++;
	}
	TH_LOG("%d of %d random ioctls succeeded", ok, CALLS);
	close(fd);
	munmap(buf, 4096);
	munmap(unmapped, 4096);

	/* The module still works: a fresh instance fires a callout on time. */
	fd = open_dev(_metadata);
	{
		struct tw_config c = { .scheme = 7, .clock = TW_CLOCK_MANUAL };
		struct tw_fired rec;

		ASSERT_EQ(0, ioctl(fd, TW_IOC_CONFIGURE, &c));
		ASSERT_EQ(0, set_callout(fd, 3, 77, NULL));
		ASSERT_EQ(0, advance(fd, 3));
		ASSERT_EQ(sizeof(rec), read(fd, &rec, sizeof(rec)));
		EXPECT_EQ(77, rec.cookie);
		EXPECT_EQ(3, rec.fired);
	}
	close(fd);
}

TEST_HARNESS_MAIN
