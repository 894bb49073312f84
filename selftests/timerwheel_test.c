// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl tests of /dev/timerwheel (rust_timerwheel, uapi v4), kselftest_harness style.
 *
 * Module-level tests are plain TESTs; the callout facility is tested once per backend through
 * FIXTURE_VARIANT(instance), one variant per scheme of the paper. Needs the module loaded
 * (make run_tests in a guest, see the Makefile); every test skips when the device node is
 * missing. Tests that may take longer than the harness' 30 s default under an emulator say so
 * with TEST_F_TIMEOUT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tw_util.h"

#define BAD_PTR ((void *)8)

/* Every command of the uapi (TW_VERSION 4). */
static const unsigned long all_cmds[] = {
	TW_IOC_INFO,  TW_IOC_CONFIGURE, TW_IOC_SETCALLOUT, TW_IOC_UNSETCALLOUT,
	TW_IOC_TIMEOUT, TW_IOC_UNTIMEOUT, TW_IOC_ADVANCE,  TW_IOC_BATCH,
	TW_IOC_STATS, TW_IOC_BENCH,	TW_IOC_RESET,	   TW_IOC_QUERY,
	TW_IOC_BENCH_PAIR,
};
#define N_CMDS (sizeof(all_cmds) / sizeof(all_cmds[0]))

/* ---- The module ---------------------------------------------------------------------------- */

TEST(info_reports_version_schemes_limits_and_timer_sizes)
{
	struct tw_info info;
	int fd = tw_open(_metadata);

	if (fd < 0)
		return;
	memset(&info, 0xff, sizeof(info));
	ASSERT_EQ(0, ioctl(fd, TW_IOC_INFO, &info));
	EXPECT_EQ(TW_VERSION, info.version);
	EXPECT_EQ(0xfe, info.schemes); /* schemes 1..7 */
	EXPECT_EQ(0, info.features & ~(__u32)(TW_FEATURE_POLL | TW_FEATURE_TICKLESS |
					     TW_FEATURE_RANGE | TW_FEATURE_NO_OOM_KILL |
					     TW_FEATURE_NOWAIT))
		TH_LOG("unknown feature bits %#x", info.features);
	/*
	 * Every build has the tickless clock and ranges (poll and the no-OOM flag depend on the
	 * kernel's patches): the tests that need them skip without them, so losing them fails here.
	 */
	EXPECT_EQ(TW_FEATURE_TICKLESS | TW_FEATURE_RANGE,
		  info.features & (TW_FEATURE_TICKLESS | TW_FEATURE_RANGE))
		TH_LOG("features %#x", info.features);
	/* TW_HOLD_WORK unless the module was loaded with another hold_work. */
	EXPECT_LT(0, info.hold_work);
	TH_LOG("features %#x, hold_work %u, %llu instances, up %llu ms", info.features,
	       info.hold_work, info.instances, info.uptime_ns / 1000000);
	EXPECT_LE(1, info.instances);
	/*
	 * Linux's timers as the running kernel lays them out (fig9's memory table): a timer_list
	 * is 40 bytes and an hrtimer 80 on x86-64 without lock debugging. The 0xff filling
	 * above fails these unless the module wrote them.
	 */
	TH_LOG("sizeof(struct timer_list) %u, sizeof(struct hrtimer) %u", info.timer_list_bytes,
	       info.hrtimer_bytes);
	EXPECT_LE(32, info.timer_list_bytes);
	EXPECT_GE(128, info.timer_list_bytes);
	EXPECT_LE(48, info.hrtimer_bytes);
	EXPECT_GE(256, info.hrtimer_bytes);
	/*
	 * The default period, the module's tick_us in ns: TW_DEFAULT_TICK_NS unless the module
	 * was loaded with another. timerwheel.sh, which loads it so, names the tick_us it loaded
	 * in TW_EXPECT_TICK_US.
	 */
	TH_LOG("default tick %llu ns", info.tick_ns);
	EXPECT_LE(TW_MIN_TICK_NS, info.tick_ns);
	EXPECT_GE(TW_MAX_TICK_NS, info.tick_ns);
	EXPECT_EQ(0, info.tick_ns % 1000);
	if (getenv("TW_EXPECT_TICK_US"))
		EXPECT_EQ(strtoull(getenv("TW_EXPECT_TICK_US"), NULL, 10) * 1000, info.tick_ns);
	close(fd);
}

TEST(info_counts_instances_and_uptime)
{
	struct tw_info a, b, c;
	__u64 t0, t1;
	int fd = tw_open(_metadata), fd2;

	if (fd < 0)
		return;
	t0 = now_ns();
	ASSERT_EQ(0, ioctl(fd, TW_IOC_INFO, &a));
	usleep(200 * 1000);
	fd2 = tw_open(_metadata);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, ioctl(fd, TW_IOC_INFO, &b));
	t1 = now_ns();
	close(fd2);
	ASSERT_EQ(0, ioctl(fd, TW_IOC_INFO, &c));
	/* Other programs may hold instances too: count relative to ours. */
	EXPECT_EQ(a.instances + 1, b.instances);
	EXPECT_EQ(a.instances, c.instances);
	/* The module's uptime follows the monotonic clock. */
	EXPECT_LE(a.uptime_ns + 200 * 1000000ULL, b.uptime_ns);
	EXPECT_GE(a.uptime_ns + (t1 - t0), b.uptime_ns);
	close(fd);
}

TEST(unknown_commands_are_enotty)
{
	int fd = tw_open(_metadata);

	if (fd < 0)
		return;
	EXPECT_EQ(-1, ioctl(fd, _IO(TW_IOC_MAGIC, 0x7f), 0));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IOR('x', 0x00, struct tw_info), 0));
	EXPECT_EQ(ENOTTY, errno);
	/* A known number with the wrong size, or the wrong direction, is another command. */
	EXPECT_EQ(-1, ioctl(fd, _IOR(TW_IOC_MAGIC, 0x00, __u64), 0));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IOW(TW_IOC_MAGIC, 0x00, struct tw_info), 0));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

TEST(bad_pointers_are_efault)
{
	struct tw_batch b = { .count = 1 };
	struct tw_stats st;
	unsigned int i;
	int fd = tw_open(_metadata);

	if (fd < 0)
		return;
	for (i = 0; i < N_CMDS; i++) {
		EXPECT_EQ(-1, ioctl(fd, all_cmds[i], BAD_PTR)) TH_LOG("cmd %#lx", all_cmds[i]);
		EXPECT_EQ(EFAULT, errno) TH_LOG("cmd %#lx", all_cmds[i]);
	}
	/* A bad pointer inside the argument: nothing runs. */
	b.ops = (uintptr_t)BAD_PTR;
	EXPECT_EQ(-1, ioctl(fd, TW_IOC_BATCH, &b));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(0, st.started);
	close(fd);
}

/* A batch the module refuses whole with EFAULT, having started nothing. */
static void expect_batch_refused(struct __test_metadata *_metadata, int fd, struct tw_batch *b)
{
	struct tw_stats st;

	EXPECT_EQ(-1, ioctl(fd, TW_IOC_BATCH, b));
	EXPECT_EQ(EFAULT, errno);
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(0, st.started);
	EXPECT_EQ(0, st.outstanding);
}

/* A batch of sets that runs, every one of them, leaving `outstanding` callouts. */
static void expect_batch_runs(struct __test_metadata *_metadata, int fd, struct tw_batch *b,
			      __u64 outstanding)
{
	struct tw_op *ops = (struct tw_op *)(uintptr_t)b->ops;
	struct tw_stats st;
	__u32 i;

	EXPECT_EQ(0, ioctl(fd, TW_IOC_BATCH, b)) TH_LOG("%s", strerror(errno));
	for (i = 0; i < b->count; i++) {
		EXPECT_EQ(0, ops[i].result) TH_LOG("op %u", i);
	}
	ASSERT_EQ(0, get_stats(fd, &st));
	EXPECT_EQ(outstanding, st.outstanding);
}

/*
 * A batch whose array can be read but not written (a read-only mapping) runs nothing: were it
 * run, the handles of the callouts it set could not be written back, and those callouts would
 * hold the capacity, unnamed, until the file closes.
 */
TEST(a_batch_that_cannot_write_its_results_runs_nothing)
{
	struct tw_batch b = { .count = 4 };
	struct tw_op *ops;
	int i, fd = tw_open(_metadata);

	if (fd < 0)
		return;
	ops = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(ops != MAP_FAILED);
	for (i = 0; i < 4; i++)
		ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = 100 + i, .b = i, .result = 1 };
	ASSERT_EQ(0, mprotect(ops, 4096, PROT_READ));
	b.ops = (uintptr_t)ops;
	expect_batch_refused(_metadata, fd, &b);
	/* Writable again, the same batch runs. */
	ASSERT_EQ(0, mprotect(ops, 4096, PROT_READ | PROT_WRITE));
	expect_batch_runs(_metadata, fd, &b, 4);
	munmap(ops, 4096);
	close(fd);
}

/*
 * A batch whose array runs into a page that cannot be read runs nothing either, not even the
 * operations before that page: the whole array is read before any runs.
 */
TEST(a_batch_whose_array_runs_into_an_unreadable_page_runs_nothing)
{
	struct tw_batch b = { .count = 4 };
	struct tw_op *ops;
	char *pages;
	int i, fd = tw_open(_metadata);

	if (fd < 0)
		return;
	pages = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(pages != MAP_FAILED);
	/* Three operations at the end of the first page; the fourth crosses into the second. */
	ops = (struct tw_op *)(pages + 4096 - 3 * sizeof(*ops) - 8);
	for (i = 0; i < 3; i++)
		ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = 100 + i, .b = i, .result = 1 };
	ASSERT_EQ(0, mprotect(pages + 4096, 4096, PROT_NONE));
	b.ops = (uintptr_t)ops;
	expect_batch_refused(_metadata, fd, &b);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(1, ops[i].result) TH_LOG("op %d was written", i);
	}
	/* The three within the readable page run. */
	b.count = 3;
	expect_batch_runs(_metadata, fd, &b, 3);
	munmap(pages, 8192);
	close(fd);
}

/* ---- One instance per backend ---------------------------------------------------------------- */

FIXTURE(instance)
{
	int fd;
	__u64 seed;
};

TW_VARIANT_PER_SCHEME(instance);

/* Intervals the tests draw from: within every backend's range (scheme 4: 4096). */
#define MAX_TICKS 3000

FIXTURE_SETUP(instance)
{
	self->fd = tw_open(_metadata);
	self->seed = tw_variant_seed(_metadata, 0x9e3779b97f4a7c15ULL, variant->scheme);
}

FIXTURE_TEARDOWN(instance)
{
	if (self->fd >= 0)
		close(self->fd);
}

/* A tick_ns of 0 takes the module's tick_us, whatever the module was loaded with. */
static int configure_tick(int fd, const FIXTURE_VARIANT(instance) *v, __u32 clock,
			  __u32 capacity, __u64 start, __u32 flags, __u64 tick_ns)
{
	struct tw_config c = {
		.scheme = v->scheme,
		.clock = clock,
		.capacity = capacity,
		.slots = v->slots,
		.tick_ns = tick_ns,
		.start_tick = start,
		.ring = 65536,
		.budget = 65536,
		.flags = flags,
	};

	return ioctl(fd, TW_IOC_CONFIGURE, &c);
}

static int configure_flags(int fd, const FIXTURE_VARIANT(instance) *v, __u32 clock,
			   __u32 capacity, __u64 start, __u32 flags)
{
	return configure_tick(fd, v, clock, capacity, start, flags, 0);
}

static int configure(int fd, const FIXTURE_VARIANT(instance) *v, __u32 clock, __u32 capacity,
		     __u64 start)
{
	return configure_flags(fd, v, clock, capacity, start, 0);
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
	for (i = 0; i < N; i++) {
		EXPECT_EQ(1, seen[i]) TH_LOG("cookie %d", i);
	}
}

TEST_F(instance, unset_callouts_never_fire)
{
	enum { N = 200 };
	__u64 h[N];
	struct tw_fired rec[N];
	int i, n, seen[N] = { 0 };

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, N, START));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 1 + i % 50, i, &h[i]));
	}
	/* Stop the odd ones, some after they are due but before they are processed. */
	ASSERT_EQ(0, advance(self->fd, 10));
	/* Ten ticks: the callouts due on them (i % 50 < 10) fired, and only they. */
	n = drain(self->fd, rec, N);
	EXPECT_EQ(N / 50 * 10, n);
	for (i = 0; i < n; i++) {
		ASSERT_LT(rec[i].cookie, N);
		EXPECT_GT(10, rec[i].cookie % 50) TH_LOG("cookie %llu fired early", rec[i].cookie);
		seen[rec[i].cookie]++;
	}
	for (i = 1; i < N; i += 2) {
		if ((__u64)(i % 50) + 1 > 10) {
			EXPECT_EQ(0, unset_callout(self->fd, h[i])) TH_LOG("cookie %d", i);
			/* A second unset: stale. */
			EXPECT_EQ(-1, unset_callout(self->fd, h[i]));
			EXPECT_EQ(ENOENT, errno);
		}
	}
	ASSERT_EQ(0, advance(self->fd, 100));
	/* The rest: the even ones of i % 50 >= 10; the odd ones were unset. */
	n = drain(self->fd, rec, N);
	EXPECT_EQ(N / 50 * 20, n);
	for (i = 0; i < n; i++) {
		ASSERT_LT(rec[i].cookie, N);
		EXPECT_FALSE(rec[i].cookie % 2 == 1 && rec[i].deadline > START + 10)
			TH_LOG("unset callout %llu fired", rec[i].cookie);
		seen[rec[i].cookie]++;
	}
	for (i = 0; i < N; i++) {
		EXPECT_EQ(i % 2 == 0 || i % 50 < 10, seen[i]) TH_LOG("cookie %d", i);
	}
	/* A fired handle is stale too. */
	EXPECT_EQ(-1, unset_callout(self->fd, h[0]));
	EXPECT_EQ(ENOENT, errno);
}

/*
 * A handle names a callout of the file that issued it. Given to another file, configured alike
 * and holding a callout in the same place, every call naming it answers ENOENT there, and that
 * file's callouts fire as set.
 */
TEST_F(instance, a_handle_from_another_file_is_stale_there)
{
	enum { N = 8 };
	__u64 mine[N], theirs[N];
	struct tw_fired rec[N];
	int other, fd, f, i, n;

	if (self->fd < 0)
		return;
	other = tw_open(_metadata);
	ASSERT_LE(0, other);
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, N, START));
	ASSERT_EQ(0, configure(other, variant, TW_CLOCK_MANUAL, N, START));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 10 + i, i, &mine[i]));
		ASSERT_EQ(0, set_callout(other, 10 + i, i, &theirs[i]));
	}
	for (i = 0; i < N; i++) {
		struct tw_reset reset = { .handle = theirs[i], .ticks = 1 };
		struct tw_query q = { .handle = theirs[i] };
		struct tw_op ops[2] = {
			{ .op = TW_OP_UNSET, .handle = theirs[i] },
			{ .op = TW_OP_MOD, .a = 1, .handle = theirs[i] },
		};
		struct tw_batch b = { .ops = (uintptr_t)ops, .count = 2 };

		EXPECT_NE(mine[i], theirs[i]);
		EXPECT_EQ(-1, unset_callout(self->fd, theirs[i]));
		EXPECT_EQ(ENOENT, errno);
		EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_RESET, &reset));
		EXPECT_EQ(ENOENT, errno);
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_QUERY, &q));
		EXPECT_EQ(0, q.pending);
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
		EXPECT_EQ(-ENOENT, ops[0].result);
		EXPECT_EQ(-ENOENT, ops[1].result);
	}
	/* Nothing moved: every callout of both files fires on its own tick. */
	for (f = 0; f < 2; f++) {
		fd = f ? other : self->fd;
		ASSERT_EQ(0, advance(fd, 10 + N));
		n = drain(fd, rec, N);
		EXPECT_EQ(N, n);
		for (i = 0; i < n; i++) {
			EXPECT_EQ(START + 10 + rec[i].cookie, rec[i].fired)
				TH_LOG("file %d, cookie %llu", f, rec[i].cookie);
		}
	}
	close(other);
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

/*
 * preadv2(2) with RWF_NOWAIT on a file that may block (no O_NONBLOCK): EAGAIN at once on an
 * empty ring, as on a pipe, and the records once there are some; not EOPNOTSUPP, which a file
 * without FMODE_NOWAIT gives.
 */
TEST_F(instance, a_read_that_must_not_wait_returns_eagain_or_the_records)
{
	struct tw_fired rec[2];
	struct iovec iov = { .iov_base = rec, .iov_len = sizeof(rec) };
	struct tw_info info;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_INFO, &info));
	if (!(info.features & TW_FEATURE_NOWAIT))
		TW_SKIP(return, "the module has no TW_FEATURE_NOWAIT (a kernel whose FMODE_NOWAIT "
			"Kbuild does not know)");
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 4, START));
	ASSERT_EQ(0, fcntl(self->fd, F_GETFL) & O_NONBLOCK);
	EXPECT_EQ(-1, preadv2(self->fd, &iov, 1, -1, RWF_NOWAIT));
	EXPECT_EQ(EAGAIN, errno) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, set_callout(self->fd, 3, 42, NULL));
	ASSERT_EQ(0, advance(self->fd, 3));
	ASSERT_EQ(sizeof(rec[0]), preadv2(self->fd, &iov, 1, -1, RWF_NOWAIT))
		TH_LOG("%s", strerror(errno));
	EXPECT_EQ(42, rec[0].cookie);
	EXPECT_EQ(START + 3, rec[0].fired);
	EXPECT_EQ(-1, preadv2(self->fd, &iov, 1, -1, RWF_NOWAIT));
	EXPECT_EQ(EAGAIN, errno) TH_LOG("%s", strerror(errno));
}

TEST_F(instance, legacy_interface_finds_func_arg)
{
	struct tw_timeout t = { .func = 0xf00, .arg = 1, .ticks = 5 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 1 };
	struct tw_fired rec[8];
	struct tw_stats st;
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
	/* Three started, one stopped: a failed untimeout counts nothing. */
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(3, st.started);
	EXPECT_EQ(1, st.stopped);
	EXPECT_EQ(2, st.outstanding);
	ASSERT_EQ(0, advance(self->fd, 5));
	n = drain(self->fd, rec, 8);
	ASSERT_EQ(2, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(TW_ORIGIN_LEGACY, rec[i].origin);
		EXPECT_EQ(2, rec[i].arg);
		EXPECT_EQ(START + 5, rec[i].fired);
	}
}

/*
 * An instance configured TW_CONFIG_HANDLES_ONLY has no table for the legacy interface: a
 * timeout fails with EINVAL, alone, in a batch and as a bench, and no callout has a key.
 */
TEST_F(instance, handles_only_refuses_the_legacy_interface)
{
	struct tw_timeout t = { .func = 0xf00, .arg = 1, .ticks = 5 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 1 };
	struct tw_op op = { .op = TW_OP_TIMEOUT, .a = 0xf00, .b = 1, .c = 5 };
	struct tw_batch batch = { .ops = (uintptr_t)&op, .count = 1 };
	struct tw_bench bench = { .kind = TW_BENCH_TIMEOUT, .iterations = 1, .min_ticks = 10,
				  .spread = 10 };
	struct tw_stats st;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure_flags(self->fd, variant, TW_CLOCK_MANUAL, 8, START,
				     TW_CONFIG_HANDLES_ONLY));
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_TIMEOUT, &t));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &batch));
	EXPECT_EQ(-EINVAL, op.result);
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH, &bench));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_UNTIMEOUT, &u));
	EXPECT_EQ(ENOENT, errno);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.outstanding);
	EXPECT_EQ(0, set_callout(self->fd, 5, 1, NULL));
}

TEST_F(instance, documented_errnos)
{
	struct tw_config c = { .scheme = variant->scheme, .clock = TW_CLOCK_MANUAL };
	struct tw_set range = { .ticks = 10, .latest = 9 };
	struct tw_timeout nofunc = { .func = 0, .arg = 1, .ticks = 5 };
	struct tw_reset reset = { .ticks = 5 };
	struct tw_query query = { .reserved = 1 };
	struct tw_op op = { .op = TW_OP_SET, .a = 10 };
	struct tw_batch batch = { .ops = (uintptr_t)&op, .count = 1, .reserved = 1 };
	struct tw_fired rec;
	struct tw_stats st;
	__u64 h, h2, n;
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
	c.tick_ns = TW_MAX_TICK_NS + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.tick_ns = 0;
	c.capacity = TW_MAX_CAPACITY + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.capacity = 0;
	c.slots = TW_MAX_SLOTS + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.slots = variant->slots;
	if (variant->scheme == 5 || variant->scheme == 6) {
		c.capacity = 0;
		c.slots = 100;
		EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
		EXPECT_EQ(EINVAL, errno);
		c.slots = variant->slots;
	}
	if (variant->scheme == 1) {
		c.capacity = TW_MAX_CAPACITY_SCHEME1 + 1;
		EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
		EXPECT_EQ(EINVAL, errno);
	}
	c.capacity = 0;
	c.budget = TW_MAX_BUDGET + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.budget = 0;
	c.ring = TW_MAX_RING + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.ring = 0;
	c.flags = 1U << 31;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.flags = 0;
	c.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);

	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 2, START));
	/* Configure after use. */
	EXPECT_EQ(-1, configure(self->fd, variant, TW_CLOCK_MANUAL, 2, START));
	EXPECT_EQ(EBUSY, errno);
	/* A bad configuration after use: its arguments are checked first, EINVAL, not EBUSY. */
	c.reserved = 0;
	c.scheme = 6;
	c.slots = 100;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.scheme = 8;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_CONFIGURE, &c));
	EXPECT_EQ(EINVAL, errno);
	c.scheme = variant->scheme;
	c.slots = variant->slots;
	/* Bad intervals. */
	EXPECT_EQ(-1, set_callout(self->fd, 0, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, set_callout(self->fd, TW_MAX_TICKS + 1, 0, NULL));
	EXPECT_EQ(EINVAL, errno);
	/* Ranges: latest below ticks, or beyond the limit. */
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_SETCALLOUT, &range));
	EXPECT_EQ(EINVAL, errno);
	range.latest = TW_MAX_TICKS + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_SETCALLOUT, &range));
	EXPECT_EQ(EINVAL, errno);
	/* The legacy interface: func 0 is not a function. */
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_TIMEOUT, &nofunc));
	EXPECT_EQ(EINVAL, errno);
	if (variant->scheme == 4) {
		EXPECT_EQ(-1, set_callout(self->fd, variant->slots + 1, 0, NULL));
		EXPECT_EQ(ERANGE, errno);
	}
	/* A batch with reserved not 0 runs nothing. */
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BATCH, &batch));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, op.result);
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.outstanding);
	/* A full table. */
	ASSERT_EQ(0, set_callout(self->fd, 10, 1, &h));
	ASSERT_EQ(0, set_callout(self->fd, 10, 2, &h2));
	EXPECT_EQ(-1, set_callout(self->fd, 10, 3, NULL));
	EXPECT_EQ(ENOSPC, errno);
	/* A reset to a bad interval leaves its callout where it was. */
	reset.handle = h2;
	reset.ticks = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_RESET, &reset));
	EXPECT_EQ(EINVAL, errno);
	reset.ticks = 10;
	reset.latest = 9;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_RESET, &reset));
	EXPECT_EQ(EINVAL, errno);
	reset.latest = 0;
	reset.ticks = TW_MAX_TICKS + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_RESET, &reset));
	EXPECT_EQ(EINVAL, errno);
	if (variant->scheme == 4) {
		reset.ticks = variant->slots + 1;
		EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_RESET, &reset));
		EXPECT_EQ(ERANGE, errno);
	}
	query = (struct tw_query){ .handle = h2 };
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_QUERY, &query));
	EXPECT_EQ(1, query.pending);
	EXPECT_EQ(START + 10, query.deadline);
	query.reserved = 1;
	reset.ticks = 5;
	/* Stale and never-issued handles. */
	EXPECT_EQ(0, unset_callout(self->fd, h));
	EXPECT_EQ(-1, unset_callout(self->fd, h));
	EXPECT_EQ(ENOENT, errno);
	EXPECT_EQ(-1, unset_callout(self->fd, 0xdeadbeefdeadbeefULL));
	EXPECT_EQ(ENOENT, errno);
	reset.handle = h;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_RESET, &reset));
	EXPECT_EQ(ENOENT, errno);
	query.handle = h;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_QUERY, &query));
	EXPECT_EQ(EINVAL, errno);
	/* Advance: 0 and too many. */
	n = 0;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_ADVANCE, &n));
	EXPECT_EQ(EINVAL, errno);
	n = TW_MAX_ADVANCE + 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_ADVANCE, &n));
	EXPECT_EQ(EINVAL, errno);
	/* read: too small a buffer, or none, nothing there without blocking. */
	EXPECT_EQ(-1, read(self->fd, small, sizeof(small)));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, read(self->fd, small, 0));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, fcntl(self->fd, F_SETFL, O_NONBLOCK));
	EXPECT_EQ(-1, read(self->fd, &rec, sizeof(rec)));
	EXPECT_EQ(EAGAIN, errno);
	/* A stream, as a pipe is: no position to seek or to read at. */
	EXPECT_EQ(-1, lseek(self->fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);
	EXPECT_EQ(-1, pread(self->fd, &rec, sizeof(rec), 0));
	EXPECT_EQ(ESPIPE, errno);
	EXPECT_EQ(-1, pwrite(self->fd, &rec, sizeof(rec), 0));
	EXPECT_EQ(ESPIPE, errno);
}

static void on_alarm(int sig)
{
	(void)sig;
}

TEST_F(instance, advance_is_interruptible_and_keeps_the_ticks_it_ran)
{
	struct sigaction sa = { .sa_handler = on_alarm }; /* no SA_RESTART */
	struct tw_kick k = { .fd = self->fd, .sig = SIGALRM, .after = 2 };
	struct tw_stats st;
	__u64 n = TW_MAX_ADVANCE;
	int ret, err, i;

	if (self->fd < 0)
		return;
	/*
	 * Periodic: a tickless instance skips idle ticks at once; and callouts outstanding, due
	 * at the far end, so that every tick has bookkeeping to do.
	 */
	ASSERT_EQ(0, configure_flags(self->fd, variant, TW_CLOCK_MANUAL, 16, START,
				     TW_CONFIG_PERIODIC));
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, set_callout(self->fd, variant->scheme == 4 ? variant->slots - i :
								       2 * TW_MAX_ADVANCE - i,
					 i, NULL));
	}
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ret = tw_kicked_ioctl(&k, TW_IOC_ADVANCE, &n);
	err = errno;
	ASSERT_EQ(0, get_stats(self->fd, &st));
	/* Sent once the call was under way: it ran on past it only if it ignored it. */
	ASSERT_GE(TW_HOLDS_PAST_A_SIGNAL, k.holds_after)
		TH_LOG("the advance ran %llu holds past a pending signal", k.holds_after);
	if (ret == 0)
		TW_SKIP(return, "2^20 ticks ran before a signal could be sent: not slow enough");
	EXPECT_EQ(EINTR, err);
	EXPECT_LT(0, st.ticks);
	EXPECT_GT(TW_MAX_ADVANCE, st.ticks);
	EXPECT_EQ(0, st.skipped);
	EXPECT_EQ(START + st.ticks, st.now);
	EXPECT_EQ(TW_CONFIG_PERIODIC, st.flags);
}

TEST_F(instance, tickless_advance_skips_idle_ticks)
{
	struct tw_fired rec;
	struct tw_stats st;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 16, START));
	ASSERT_EQ(0, set_callout(self->fd, 3000, 5, NULL));
	ASSERT_EQ(0, advance(self->fd, 3000));
	ASSERT_EQ(sizeof(rec), read(self->fd, &rec, sizeof(rec)));
	EXPECT_EQ(START + 3000, rec.fired);
	EXPECT_EQ(START + 3000, rec.deadline);
	ASSERT_EQ(0, advance(self->fd, TW_MAX_ADVANCE)); /* nothing outstanding */
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(START + 3000 + TW_MAX_ADVANCE, st.now);
	/* Every tick was either run (ticks: "ticks of bookkeeping run") or skipped. */
	EXPECT_EQ(3000 + TW_MAX_ADVANCE, st.ticks + st.skipped)
		TH_LOG("ticks %llu + skipped %llu are not the %llu ticks advanced", st.ticks,
		       st.skipped, 3000 + TW_MAX_ADVANCE);
	EXPECT_LT(0, st.skipped);
	EXPECT_EQ(0, st.flags);
	EXPECT_EQ(0, st.wakeups); /* the manual clock arms no hrtimer */
}

TEST_F(instance, instance_benches_need_a_configured_manual_clock)
{
	struct tw_bench b = { .kind = TW_BENCH_SETCALLOUT, .iterations = 100, .min_ticks = 1000,
			      .spread = 1000, .seed = 1 };
	int fd2;

	if (self->fd < 0)
		return;
	/* Unconfigured: EINVAL, and the instance stays unconfigured. */
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH, &b));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 16, START));
	b.elapsed_ns = 0;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BENCH, &b)) TH_LOG("bench: %s", strerror(errno));
	EXPECT_LT(0, b.elapsed_ns);
	EXPECT_LT(0, b.max_hold_ns);
	EXPECT_GE(b.elapsed_ns, b.max_hold_ns);
	b.kind = TW_BENCH_MOD;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BENCH, &b)) TH_LOG("bench mod: %s", strerror(errno));
	b.kind = TW_BENCH_SETCALLOUT;
	b.n = 1; /* must be 0 for an instance bench */
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH, &b));
	EXPECT_EQ(EINVAL, errno);
	/* A real-clock instance: EINVAL. */
	fd2 = tw_open(_metadata);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, configure(fd2, variant, TW_CLOCK_REAL, 16, 0));
	b.n = 0;
	EXPECT_EQ(-1, ioctl(fd2, TW_IOC_BENCH, &b));
	EXPECT_EQ(EINVAL, errno);
	close(fd2);
	/* The kernel's timers near enough to fire during the bench: EINVAL. */
	b.kind = TW_BENCH_HRTIMER;
	b.n = 1000;
	b.min_ticks = TW_MIN_BASELINE_TICKS - 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH, &b));
	EXPECT_EQ(EINVAL, errno);
	b.kind = TW_BENCH_TIMER_LIST;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH, &b));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * Runs pair `p` (its outputs cleared first): true when it succeeds with both halves timed, the
 * instance's longest hold within its time and none reported for Linux's half.
 */
static bool pair_times_both(struct __test_metadata *_metadata, int fd, struct tw_bench_pair *p)
{
	p->instance.elapsed_ns = p->instance.max_hold_ns = 0;
	p->baseline.elapsed_ns = p->baseline.max_hold_ns = 0;
	if (ioctl(fd, TW_IOC_BENCH_PAIR, p)) {
		TH_LOG("pair of kinds %u and %u: %s", p->instance.kind, p->baseline.kind,
		       strerror(errno));
		return false;
	}
	EXPECT_LT(0, p->instance.elapsed_ns);
	EXPECT_LT(0, p->instance.max_hold_ns);
	EXPECT_GE(p->instance.elapsed_ns, p->instance.max_hold_ns);
	EXPECT_LT(0, p->baseline.elapsed_ns);
	EXPECT_EQ(0, p->baseline.max_hold_ns);
	return true;
}

TEST_F(instance, pair_benches_alternate_the_instance_and_linux_timers)
{
	struct tw_bench_pair p = {
		.instance = { .kind = TW_BENCH_MOD, .iterations = 1000, .min_ticks = 1000,
			      .spread = 1000, .seed = 1 },
		.baseline = { .kind = TW_BENCH_TIMER_LIST_MOD, .n = 100, .iterations = 1000,
			      .min_ticks = TW_MIN_BASELINE_TICKS, .spread = 1000, .seed = 2 },
	};
	struct tw_bench_pair bad, hr;
	struct tw_stats st;
	int fd2;

	if (self->fd < 0)
		return;
	/* Unconfigured: EINVAL, and the instance stays unconfigured. */
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH_PAIR, &p));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 16, START));
	/* Reset in place against mod_timer in place, then against hrtimer_cancel + start. */
	ASSERT_TRUE(pair_times_both(_metadata, self->fd, &p));
	hr = p;
	hr.baseline.kind = TW_BENCH_HRTIMER;
	ASSERT_TRUE(pair_times_both(_metadata, self->fd, &hr));
	/* Cancel + start against timer_delete + mod_timer. */
	p.instance.kind = TW_BENCH_SETCALLOUT;
	p.baseline.kind = TW_BENCH_TIMER_LIST;
	ASSERT_TRUE(pair_times_both(_metadata, self->fd, &p));
	/* Nothing of the benches is left behind. */
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.outstanding);
	/* Iterations that differ, a kind of neither half, either half invalid: EINVAL. */
	bad = p;
	bad.baseline.iterations++;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH_PAIR, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = p;
	bad.instance.kind = TW_BENCH_TICK;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH_PAIR, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = p;
	bad.baseline.kind = TW_BENCH_TICK;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH_PAIR, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = p;
	bad.baseline = p.instance;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH_PAIR, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = p;
	bad.baseline.min_ticks = TW_MIN_BASELINE_TICKS - 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH_PAIR, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = p;
	bad.instance.n = 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH_PAIR, &bad));
	EXPECT_EQ(EINVAL, errno);
	bad = p;
	bad.baseline.reserved = 1;
	EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_BENCH_PAIR, &bad));
	EXPECT_EQ(EINVAL, errno);
	/* A real-clock instance: EINVAL. */
	fd2 = tw_open(_metadata);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, configure(fd2, variant, TW_CLOCK_REAL, 16, 0));
	EXPECT_EQ(-1, ioctl(fd2, TW_IOC_BENCH_PAIR, &p));
	EXPECT_EQ(EINVAL, errno);
	close(fd2);
}

TEST_F(instance, instance_benches_time_resets_whose_placement_spans_holds)
{
	struct tw_bench b = { .kind = TW_BENCH_SETCALLOUT, .iterations = 8, .min_ticks = 2000,
			      .spread = 1000, .seed = 1 };
	__u64 w, i;

	if (self->fd < 0)
		return;
	w = hold_work_of(self->fd);
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 4 * w, START));
	/*
	 * 3 W callouts due before every time the bench draws (2,000 ticks on), whatever W: on
	 * scheme 2's sorted list, each start of the bench's callout walks past them all, over
	 * several holds.
	 */
	for (i = 0; i < 3 * w; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 10 + i % 1990, i, NULL));
	}
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BENCH, &b)) TH_LOG("bench: %s", strerror(errno));
	/* Only the holds that arm the bench's own callout go untimed, not the resets'. */
	EXPECT_LT(0, b.elapsed_ns);
	EXPECT_LT(0, b.max_hold_ns);
	EXPECT_GE(b.elapsed_ns, b.max_hold_ns);
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
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, ops[i].result) TH_LOG("op %d", i);
	}
	EXPECT_EQ(-ENOSPC, ops[N].result);
	EXPECT_EQ(-EINVAL, ops[N + 1].result);
	/* Unset every second one by handle, reset the others. */
	for (i = 0; i < N; i++)
		ops[i] = (struct tw_op){ .op = i % 2 ? TW_OP_UNSET : TW_OP_RESET,
					 .handle = ops[i].handle, .a = 2, .b = i };
	b.count = N;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, ops[i].result) TH_LOG("op %d", i);
	}
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

/*
 * TW_OP_RESET checks its new interval before it cancels: a reset whose set would fail (EINVAL
 * for 0 or above TW_MAX_TICKS, ERANGE beyond scheme 4's MaxInterval) leaves its callout as it
 * was, handle and deadline, and the callout fires as first set. Each case is a batch of its own,
 * so that each fails alone where the reset cancels first.
 */
TEST_F(instance, a_batch_reset_that_cannot_set_keeps_its_callout)
{
	const __u64 bad[] = { 0, TW_MAX_TICKS + 1, (__u64)variant->slots + 1 };
	const int err[] = { EINVAL, EINVAL, ERANGE };
	unsigned int i, cases = variant->scheme == 4 ? 3 : 2;
	struct tw_op op;
	struct tw_batch b = { .ops = (uintptr_t)&op, .count = 1 };
	struct tw_query q;
	struct tw_stats st;
	struct tw_fired rec[2];
	__u64 h;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 4, START));
	ASSERT_EQ(0, set_callout(self->fd, 10, 42, &h));
	for (i = 0; i < cases; i++) {
		op = (struct tw_op){ .op = TW_OP_RESET, .handle = h, .a = bad[i], .b = 7 };
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
		EXPECT_EQ(-err[i], op.result) TH_LOG("reset to %llu ticks", bad[i]);
		EXPECT_EQ(h, op.handle) TH_LOG("reset to %llu ticks", bad[i]);
		q = (struct tw_query){ .handle = h };
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_QUERY, &q));
		EXPECT_EQ(1, q.pending) TH_LOG("reset to %llu ticks cancelled the callout", bad[i]);
		EXPECT_EQ(START + 10, q.deadline);
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(1, st.started);
	EXPECT_EQ(0, st.stopped);
	EXPECT_EQ(1, st.outstanding);
	ASSERT_EQ(0, advance(self->fd, 10));
	ASSERT_EQ(1, drain(self->fd, rec, 2));
	EXPECT_EQ(h, rec[0].handle);
	EXPECT_EQ(42, rec[0].cookie);
	EXPECT_EQ(START + 10, rec[0].fired);
}

/*
 * A start that fails on its arguments configures nothing, and neither does a batch without a
 * start the defaults could take (its operations fail as on an empty instance): TW_IOC_CONFIGURE
 * still works afterwards. A batch with one good start configures the defaults and runs every
 * operation.
 */
TEST_F(instance, calls_failing_on_their_arguments_configure_nothing)
{
	struct tw_set sets[] = {
		{ .ticks = 0 },
		{ .ticks = TW_MAX_TICKS + 1 },
		{ .ticks = 10, .latest = 9 },
		{ .ticks = 10, .latest = TW_MAX_TICKS + 1 },
	};
	struct tw_timeout timeouts[] = {
		{ .func = 0, .arg = 1, .ticks = 5 },
		{ .func = 0xf00, .arg = 1, .ticks = 0 },
		{ .func = 0xf00, .arg = 1, .ticks = 10, .latest = 9 },
	};
	struct tw_op ops[] = {
		{ .op = TW_OP_SET, .a = 0 },
		{ .op = TW_OP_SET, .a = TW_MAX_TICKS + 1 },
		{ .op = TW_OP_TIMEOUT, .a = 0, .b = 1, .c = 5 },
		{ .op = TW_OP_TIMEOUT, .a = 0xf00, .b = 1, .c = 0 },
		{ .op = TW_OP_UNSET, .handle = 1 },
		{ .op = TW_OP_UNTIMEOUT, .a = 0xf00, .b = 1 },
		{ .op = TW_OP_RESET, .handle = 1, .a = 5 },
		{ .op = TW_OP_MOD, .handle = 1, .a = 5 },
		{ .op = 99, .a = 5 },
	};
	const int err[] = { EINVAL, EINVAL, EINVAL, EINVAL, ENOENT, ENOENT, ENOENT, ENOENT, EINVAL };
	const unsigned int n_ops = sizeof(ops) / sizeof(ops[0]);
	struct tw_batch b = { .ops = (uintptr_t)ops, .count = n_ops };
	struct tw_stats st;
	unsigned int i;
	int fd2;

	if (self->fd < 0)
		return;
	for (i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_SETCALLOUT, &sets[i])) TH_LOG("set %u", i);
		EXPECT_EQ(EINVAL, errno) TH_LOG("set %u", i);
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.scheme) TH_LOG("a failed SETCALLOUT configured the defaults");
	for (i = 0; i < sizeof(timeouts) / sizeof(timeouts[0]); i++) {
		EXPECT_EQ(-1, ioctl(self->fd, TW_IOC_TIMEOUT, &timeouts[i])) TH_LOG("timeout %u", i);
		EXPECT_EQ(EINVAL, errno) TH_LOG("timeout %u", i);
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.scheme) TH_LOG("a failed TIMEOUT configured the defaults");
	for (i = 0; i < n_ops; i++)
		ops[i].result = 1;
	ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
	for (i = 0; i < n_ops; i++) {
		EXPECT_EQ(-err[i], ops[i].result) TH_LOG("op %u", i);
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(0, st.scheme) TH_LOG("a batch of failing operations configured the defaults");
	EXPECT_EQ(0, st.started);
	EXPECT_EQ(0, configure(self->fd, variant, TW_CLOCK_MANUAL, 16, START))
		TH_LOG("CONFIGURE after failed first calls: %s", strerror(errno));
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(variant->scheme, st.scheme);

	/* The same batch with one good start on a fresh file: the defaults, and every op run. */
	fd2 = tw_open(_metadata);
	ASSERT_LE(0, fd2);
	ops[0] = (struct tw_op){ .op = TW_OP_SET, .a = 1000, .b = 1 };
	for (i = 1; i < n_ops; i++)
		ops[i].result = 1;
	ASSERT_EQ(0, ioctl(fd2, TW_IOC_BATCH, &b));
	EXPECT_EQ(0, ops[0].result);
	for (i = 1; i < n_ops; i++) {
		EXPECT_EQ(-err[i], ops[i].result) TH_LOG("op %u", i);
	}
	ASSERT_EQ(0, get_stats(fd2, &st));
	EXPECT_EQ(TW_DEFAULT_SCHEME, st.scheme);
	EXPECT_EQ(1, st.started);
	EXPECT_EQ(-1, configure(fd2, variant, TW_CLOCK_MANUAL, 16, START));
	EXPECT_EQ(EBUSY, errno);
	close(fd2);
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
	for (i = 0; i < 10; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 3, i, NULL));
	}
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

TEST_F_TIMEOUT(instance, real_clock_fires_1000_callouts_over_1s_never_early, 120)
{
	enum { N = 1000 };
	static struct tw_fired rec[N];
	struct tw_stats st;
	__u64 t0, late = 0;
	int i, got = 0;

	if (self->fd < 0)
		return;
	/*
	 * The clock starts inside TW_IOC_CONFIGURE: tick d comes no sooner than d ms after t0. The
	 * period is named, not left to the module's tick_us, so that the test takes a second
	 * whatever the module was loaded with.
	 */
	t0 = now_ns();
	ASSERT_EQ(0, configure_tick(self->fd, variant, TW_CLOCK_REAL, N, 0, 0, 1000000));
	for (i = 0; i < N; i++) {
		ASSERT_EQ(0, set_callout(self->fd, 1 + i, i, NULL));
	}
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

TEST_F_TIMEOUT(instance, real_clock_default_period_is_the_one_info_reports, 60)
{
	struct tw_fired rec;
	struct tw_info info;
	__u64 t0, t;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, get_info(self->fd, &info));
	/* tick_ns 0: the module's tick_us, which TW_IOC_INFO reports. */
	t0 = now_ns();
	ASSERT_EQ(0, configure_tick(self->fd, variant, TW_CLOCK_REAL, 16, 0, 0, 0));
	ASSERT_EQ(0, set_callout(self->fd, 2, 1, NULL));
	alarm(30);
	ASSERT_EQ((ssize_t)sizeof(rec), read(self->fd, &rec, sizeof(rec)))
		TH_LOG("read: %s", strerror(errno));
	t = now_ns() - t0;
	alarm(0);
	/* Tick d is processed no earlier than d of the periods reported after the clock started. */
	EXPECT_LE(2, rec.deadline);
	EXPECT_LE(rec.deadline * info.tick_ns, t)
		TH_LOG("tick %llu of %llu ns seen after %llu ns", rec.deadline, info.tick_ns, t);
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

TEST_F_TIMEOUT(instance, four_threads_on_one_fd, 300)
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

TEST_F_TIMEOUT(instance, four_fds_in_parallel, 300)
{
	struct worker w[4];
	pthread_t t[4];
	int i;

	if (self->fd < 0)
		return;
	for (i = 0; i < 4; i++) {
		w[i] = (struct worker){ .fd = tw_open(_metadata), .seed = 99 + i, .ops = 5000 };
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

/*
 * 100k callouts (scheme 1: its limit), then close. The deadlines descend, far away: schemes 2
 * and 5 walk their sorted list from the head past every earlier deadline, so each new callout,
 * the earliest so far, is placed in O(1) and the fill takes seconds under an emulator, where
 * ascending ones would cost O(n^2) list steps. Scheme 4 cannot hold far deadlines: its own wrap
 * within half its MaxInterval (they fire meanwhile; the ring drops what is not read), so that
 * the clock's lag, which the limit counts too (TW_IOC_SETCALLOUT), takes them beyond it only
 * after a stall of seconds (ERANGE: skipped).
 */
TEST_F_TIMEOUT(instance, close_with_many_outstanding, 600)
{
	enum { N = 100000, CHUNK = 10000 };
	static struct tw_op ops[CHUNK];
	struct tw_batch b = { .ops = (uintptr_t)ops, .count = CHUNK };
	__u32 cap = variant->scheme == 1 ? TW_MAX_CAPACITY_SCHEME1 : N;
	struct tw_stats st;
	struct tw_query q;
	__u64 t0 = now_ns();
	int i, k;

	if (self->fd < 0)
		return;
	ASSERT_EQ(0, configure(self->fd, variant, TW_CLOCK_REAL, cap, 0));
	for (k = 0; k < (int)cap; k += CHUNK) {
		/* The tick the scheme stands on before the batch, for scheme 4's lag below. */
		ASSERT_EQ(0, get_stats(self->fd, &st));
		b.count = cap - k < CHUNK ? cap - k : CHUNK;
		for (i = 0; i < (int)b.count; i++) {
			__u64 idx = k + i;
			__u64 t = variant->scheme == 4 ? 1 + idx % (variant->slots / 2) :
							 (1ULL << 30) - idx;

			ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = t, .b = idx };
		}
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_BATCH, &b));
		q = (struct tw_query){ 0 };
		ASSERT_EQ(0, ioctl(self->fd, TW_IOC_QUERY, &q)) TH_LOG("%s", strerror(errno));
		for (i = 0; i < (int)b.count; i++) {
			if (variant->scheme == 4 && ops[i].result == -ERANGE) {
				/*
				 * ERANGE: ticks + lag beyond MaxInterval. The lag, the real tick
				 * less the scheme's, was at most the real tick after the batch
				 * less the scheme's before it.
				 */
				ASSERT_LT(variant->slots - ops[i].a, q.now - st.now)
					TH_LOG("ERANGE for %llu ticks, the clock at most %llu "
					       "behind", ops[i].a, q.now - st.now);
				TW_SKIP(return, "the guest stalled: the clock lagged more than "
					"%llu ticks", variant->slots - ops[i].a);
			}
			ASSERT_EQ(0, ops[i].result);
		}
	}
	ASSERT_EQ(0, get_stats(self->fd, &st));
	EXPECT_EQ(cap, st.started);
	EXPECT_GE(hold_work_of(self->fd), st.max_hold_work);
	TH_LOG("%u callouts set in %llu ms; longest hold %llu entries, %llu ns", cap,
	       (now_ns() - t0) / 1000000, st.max_hold_work, st.max_hold_ns);
	/* The teardown closes the fd with them all outstanding; timerwheel.sh then unloads. */
}

/* ---- Random ioctls --------------------------------------------------------------------------- */

/* After a storm of calls, the module still works: a fresh instance fires a callout on time. */
static void the_module_still_works(struct __test_metadata *_metadata, __u32 scheme)
{
	struct tw_config c = { .scheme = scheme, .clock = TW_CLOCK_MANUAL };
	struct tw_fired rec;
	int fd = tw_open(_metadata);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, TW_IOC_CONFIGURE, &c));
	ASSERT_EQ(0, set_callout(fd, 3, 77, NULL));
	ASSERT_EQ(0, advance(fd, 3));
	ASSERT_EQ(sizeof(rec), read(fd, &rec, sizeof(rec)));
	EXPECT_EQ(77, rec.cookie);
	EXPECT_EQ(3, rec.fired);
	close(fd);
}

/* The module-level tests that need more than the harness' default 30 s: TEST_F_TIMEOUT. */
FIXTURE(module) {};
FIXTURE_SETUP(module) {}
FIXTURE_TEARDOWN(module) {}

TEST_F_TIMEOUT(module, random_ioctls_then_basic_use, 600)
{
	enum { CALLS = 100000 };
	__u64 seed = tw_seed(_metadata, 0x5eed), *buf;
	char *unmapped;
	int fd = tw_open(_metadata), i, ok = 0;

	if (fd < 0)
		return;
	buf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(buf != MAP_FAILED);
	unmapped = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_TRUE(unmapped != MAP_FAILED);
	for (i = 0; i < CALLS; i++) {
		__u64 r = rnd(&seed);
		unsigned long cmd;
		void *arg;
		int k;

		switch (r % 4) {
		case 0: /* a random number in our magic; sizes to 255 (tw_bench_pair: 128) */
			cmd = _IOC(r >> 8 & 3, TW_IOC_MAGIC, r >> 16 & 0x1f, r >> 24 & 0xff);
			break;
		case 1: /* fully random */
			cmd = r >> 32;
			break;
		default: /* a real command */
			cmd = all_cmds[(r >> 8) % N_CMDS];
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

	the_module_still_works(_metadata, 7);
}

/* ---- Random valid calls from threads, a forked child and signals ----------------------------- */

/*
 * Calls with arguments drawn mostly valid, on instances configured at random, by three threads
 * sharing the file, a forked child sharing it too, and signals interrupting them: every call
 * either succeeds or fails with one of the documented errnos, no callout is ever processed
 * before its deadline, and a fresh instance still fires afterwards. The kernel's checkers
 * (KASAN, lockdep, kmemleak, the lockup detectors) watch the rest, through the guest's dmesg.
 * Each thread makes a fixed number of calls, drawn from the seed alone (the pauses between the
 * signals draw from a generator of their own), so that a slow machine only takes longer, and a
 * seed makes the same calls again.
 */
enum { STRESS_SESSIONS = 6, STRESS_THREADS = 3, STRESS_CALLS = 1500, STRESS_CHILD_CALLS = 500 };

struct stresser {
	int fd, calls;
	__u64 seed, handles[64];
	atomic_int done;
	/* The first call that broke the rules, for the test to report. */
	int bad_errno, bad_call;
	__u64 early; /* records processed before their deadline */
	__u64 ok, failed;
	struct tw_op ops[256];
};

/* A deadline in ticks: now and then 0 or beyond every limit, mostly near, sometimes far. */
static __u64 stress_ticks(__u64 *s)
{
	switch (rnd(s) % 6) {
	case 0:
		return rnd(s) % 4;
	case 1:
		return rnd(s) >> (rnd(s) % 64);
	case 2:
		return 1 + rnd(s) % 1000000;
	default:
		return 1 + rnd(s) % 300;
	}
}

/* The last tick of a range for `ticks`: mostly none, else near it, now and then anything. */
static __u64 stress_latest(__u64 *s, __u64 ticks)
{
	switch (rnd(s) % 6) {
	case 0:
		return ticks + rnd(s) % 100;
	case 1:
		return rnd(s);
	default:
		return 0;
	}
}

/* One call drawn at random; its number (for the report) and result, errno kept. */
static int stress_call(struct stresser *w, int *call)
{
	__u64 *s = &w->seed, *h = &w->handles[rnd(s) % 64];
	int fd = w->fd, ret, i;

	*call = rnd(s) % 14;
	switch (*call) {
	case 0:
	case 1: {
		struct tw_set a = { .ticks = stress_ticks(s), .cookie = rnd(s) };

		a.latest = stress_latest(s, a.ticks);
		ret = ioctl(fd, TW_IOC_SETCALLOUT, &a);
		if (!ret)
			*h = a.handle;
		return ret;
	}
	case 2: {
		__u64 x = rnd(s) % 4 ? *h : rnd(s);

		return ioctl(fd, TW_IOC_UNSETCALLOUT, &x);
	}
	case 3:
	case 4: {
		struct tw_reset a = { .handle = *h, .ticks = stress_ticks(s) };

		a.latest = stress_latest(s, a.ticks);
		return ioctl(fd, TW_IOC_RESET, &a);
	}
	case 5: {
		struct tw_query q = { .handle = *h };

		return ioctl(fd, TW_IOC_QUERY, &q);
	}
	case 6: {
		struct tw_timeout a = { .func = rnd(s) % 5, .arg = rnd(s) % 3 };

		a.ticks = stress_ticks(s);

		a.latest = stress_latest(s, a.ticks);
		ret = ioctl(fd, TW_IOC_TIMEOUT, &a);
		if (!ret)
			*h = a.handle;
		return ret;
	}
	case 7: {
		struct tw_untimeout a = { .func = rnd(s) % 5, .arg = rnd(s) % 3 };

		return ioctl(fd, TW_IOC_UNTIMEOUT, &a);
	}
	case 8: {
		__u64 n = rnd(s) % 8 ? rnd(s) % 2000 : rnd(s) % (TW_MAX_ADVANCE + 2);

		return ioctl(fd, TW_IOC_ADVANCE, &n);
	}
	case 9: {
		struct tw_batch b = { .ops = (uintptr_t)w->ops, .count = rnd(s) % 256 };

		for (i = 0; i < (int)b.count; i++) {
			struct tw_op *op = &w->ops[i];

			op->op = 1 + rnd(s) % 7; /* 7: not an op */
			op->a = op->op == TW_OP_TIMEOUT || op->op == TW_OP_UNTIMEOUT ? rnd(s) % 5 :
										stress_ticks(s);
			op->b = op->op == TW_OP_MOD ? stress_latest(s, op->a) : rnd(s) % 3;
			op->c = stress_ticks(s);
			op->handle = w->handles[rnd(s) % 64];
		}
		ret = ioctl(fd, TW_IOC_BATCH, &b);
		for (i = 0; !ret && i < (int)b.count; i++)
			if (!w->ops[i].result && w->ops[i].op != TW_OP_UNSET &&
			    w->ops[i].op != TW_OP_UNTIMEOUT)
				w->handles[rnd(s) % 64] = w->ops[i].handle;
		return ret;
	}
	case 10: {
		struct tw_fired rec[16];
		ssize_t n = read(fd, rec, sizeof(rec));

		for (i = 0; i < n / (ssize_t)sizeof(rec[0]); i++)
			if (rec[i].fired < rec[i].deadline)
				w->early++;
		return n < 0 ? -1 : 0;
	}
	case 11: {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		return poll(&p, 1, rnd(s) % 5) < 0 ? -1 : 0;
	}
	case 12: {
		/* Small, so that a session stays short on a slow machine. */
		struct tw_bench b = { .kind = 1 + rnd(s) % 8, .n = rnd(s) % 200,
				      .iterations = rnd(s) % 200, .spread = 1 + rnd(s) % 10000,
				      .seed = rnd(s) };
		struct tw_bench_pair p;

		b.min_ticks = rnd(s) % 2 ? TW_MIN_BASELINE_TICKS : rnd(s) % 1000;
		if (rnd(s) % 2)
			return ioctl(fd, TW_IOC_BENCH, &b);
		/* This bench beside one of Linux's timers, in a pair: mostly a valid one. */
		p.instance = b;
		p.instance.n = rnd(s) % 4 ? 0 : b.n;
		p.baseline = b;
		p.baseline.kind = (int[]){ TW_BENCH_TIMER_LIST, TW_BENCH_TIMER_LIST_MOD,
					   TW_BENCH_HRTIMER }[rnd(s) % 3];
		if (rnd(s) % 4 == 0)
			p.baseline.kind = 1 + rnd(s) % 8;
		p.baseline.min_ticks = rnd(s) % 4 ? TW_MIN_BASELINE_TICKS : b.min_ticks;
		p.baseline.iterations += rnd(s) % 8 == 0;
		return ioctl(fd, TW_IOC_BENCH_PAIR, &p);
	}
	default: {
		struct tw_stats st;

		return ioctl(fd, TW_IOC_STATS, &st);
	}
	}
}

/* Whether `err` is one of the errnos the header documents for stress_call()'s call `call`. */
static int stress_documented(int call, int err)
{
	switch (call) {
	case 0: /* SETCALLOUT */
	case 1:
	case 6: /* TIMEOUT (EINVAL also for func 0, or on a handles-only instance) */
		return err == EINVAL || err == ERANGE || err == ENOSPC || err == EINTR;
	case 2: /* UNSETCALLOUT */
		return err == ENOENT;
	case 3: /* RESET */
	case 4:
		return err == EINVAL || err == ERANGE || err == ENOENT || err == EINTR;
	case 7: /* UNTIMEOUT */
		return err == ENOENT || err == EINTR;
	case 8: /* ADVANCE */
		return err == EINVAL || err == EINTR;
	case 9: /* BATCH: a count of 0; each operation's own errno is in its result */
		return err == EINVAL || err == ENOMEM || err == EINTR;
	case 10: /* read(2), O_NONBLOCK */
		return err == EAGAIN;
	case 11: /* poll(2) */
		return err == EINTR;
	case 12: /* BENCH, BENCH_PAIR */
		return err == EINVAL || err == ERANGE || err == ENOSPC || err == ENOENT ||
		       err == ENOMEM || err == EINTR;
	default: /* QUERY, STATS: nothing to refuse */
		return 0;
	}
}

static void stress_calls(struct stresser *w, int calls)
{
	int i, call;

	for (i = 0; i < calls; i++) {
		if (!stress_call(w, &call)) {
			w->ok++;
			continue;
		}
		w->failed++;
		if (!stress_documented(call, errno) && !w->bad_errno) {
			w->bad_errno = errno;
			w->bad_call = call;
		}
	}
}

static void *stresser_run(void *arg)
{
	struct stresser *w = arg;

	stress_calls(w, w->calls);
	atomic_store(&w->done, 1);
	return NULL;
}

static void stress_signal(int sig)
{
	(void)sig;
}

TEST_F_TIMEOUT(module, random_valid_calls_from_threads_a_child_and_signals, 600)
{
	struct sigaction sa = { .sa_handler = stress_signal }, old;
	static struct stresser w[STRESS_THREADS];
	__u64 seed = tw_seed(_metadata, 0xca11), ok = 0, failed = 0;
	int session, i, fd, status;

	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, &old)); /* no SA_RESTART: calls see EINTR */
	for (session = 0; session < STRESS_SESSIONS; session++) {
		struct tw_config c = {
			.scheme = 1 + rnd(&seed) % 7,
			.clock = rnd(&seed) % 3 ? TW_CLOCK_REAL : TW_CLOCK_MANUAL,
			.capacity = 1 + rnd(&seed) % 2000,
			.slots = rnd(&seed) % 2 ? 1U << rnd(&seed) % 11 : 0, /* M: a power of two */
			.tick_ns = TW_MIN_TICK_NS + rnd(&seed) % 2000000,
			.start_tick = rnd(&seed) % 2 ? rnd(&seed) : 0,
			.ring = 1 + rnd(&seed) % 64,
			.budget = 1 + rnd(&seed) % 64,
			.flags = rnd(&seed) % 4,
		};
		pthread_t t[STRESS_THREADS];
		int running = STRESS_THREADS, child_running = 1;
		/*
		 * The pauses' own generator: how many pauses a session takes depends on the
		 * machine's speed, and must not change what the next sessions draw.
		 */
		__u64 pauses = rnd(&seed) | 1;
		pid_t child, r;

		fd = tw_open(_metadata);
		if (fd < 0)
			return;
		ASSERT_EQ(0, fcntl(fd, F_SETFL, O_NONBLOCK));
		ASSERT_EQ(0, ioctl(fd, TW_IOC_CONFIGURE, &c))
			TH_LOG("scheme %u clock %u: %s", c.scheme, c.clock, strerror(errno));
		for (i = 0; i < STRESS_THREADS; i++) {
			memset(&w[i], 0, sizeof(w[i]));
			w[i].fd = fd;
			w[i].calls = STRESS_CALLS;
			w[i].seed = rnd(&seed) | 1;
			ASSERT_EQ(0, pthread_create(&t[i], NULL, stresser_run, &w[i]));
		}
		child = fork();
		ASSERT_LE(0, child);
		if (child == 0) {
			struct stresser *k = &w[0]; /* the child's copy */

			memset(k, 0, sizeof(*k));
			k->fd = fd;
			k->seed = rnd(&seed) | 1;
			stress_calls(k, STRESS_CHILD_CALLS);
			_exit(k->bad_errno || k->early ? 1 : 0);
		}
		/*
		 * Interrupt the threads and the child now and then until they are done: a long
		 * ADVANCE (up to TW_MAX_ADVANCE ticks) ends on a signal, in the child too.
		 */
		while (running || child_running) {
			usleep(1000 + rnd(&pauses) % 5000);
			running = 0;
			for (i = 0; i < STRESS_THREADS; i++)
				if (!atomic_load(&w[i].done)) {
					pthread_kill(t[i], SIGUSR1);
					running++;
				}
			if (child_running) {
				r = waitpid(child, &status, WNOHANG);
				ASSERT_LE(0, r);
				if (r == child)
					child_running = 0;
				else
					kill(child, SIGUSR1);
			}
		}
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("session %d: the child broke a rule (status %#x)", session, status);
		for (i = 0; i < STRESS_THREADS; i++) {
			ASSERT_EQ(0, pthread_join(t[i], NULL));
			EXPECT_EQ(0, w[i].bad_errno)
				TH_LOG("session %d (scheme %u, clock %u): call %d failed with %s",
				       session, c.scheme, c.clock, w[i].bad_call,
				       strerror(w[i].bad_errno));
			EXPECT_EQ(0, w[i].early)
				TH_LOG("session %d: %llu records processed before their deadline",
				       session, w[i].early);
			ok += w[i].ok;
			failed += w[i].failed;
		}
		close(fd);
	}
	ASSERT_EQ(0, sigaction(SIGUSR1, &old, NULL));
	TH_LOG("%llu calls succeeded, %llu failed as documented", ok, failed);
	EXPECT_LT(0, ok);

	the_module_still_works(_metadata, 6);
}

TW_HARNESS_MAIN
