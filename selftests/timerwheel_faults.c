// SPDX-License-Identifier: GPL-2.0
/*
 * The module when memory runs out, tested as syzkaller tests the kernel: each call below is made
 * again and again with the Nth allocation its thread makes in the kernel failing, for N = 1, 2,
 * ... until the call makes fewer than N (/proc/thread-self/fail-nth; CONFIG_FAULT_INJECTION
 * with CONFIG_FAILSLAB and CONFIG_FAIL_PAGE_ALLOC, every allocation that may sleep included,
 * the kernel's on the call's behalf as much as the module's); then again with every allocation
 * from the Nth on failing (make-it-fail), memory gone for good. A call a fault fails must fail
 * with ENOMEM and leave the file as it was and usable; one that goes on without the allocation
 * (a fallback) must do all it does without it. The guest's KASAN, debug objects and kmemleak
 * (scripts/test.sh scans its log) see an error path that uses what it freed, frees a timer
 * still armed, or frees nothing.
 *
 *   open       opening the device: an instance made whole or not at all (tw_info.instances)
 *   configure  CONFIGURE of each scheme, and the defaults a first SETCALLOUT, TIMEOUT or batch
 *              configures: the file stays unconfigured, and configures and fires after
 *   batch      a batch's copy of its operations: no operation run, no callout lost or moved
 *   bench      the benches of Linux's timers (timer_list and hrtimer, alone and in a pair with
 *              an instance bench): the timers made so far taken down, the next bench runs
 *
 * Skips where the kernel has no fault injection. Nothing depends on the machine's speed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "tw_util.h"

/* More fault sites than any call below reaches: a loop that gets here never ends. */
#define MAX_SITES 20000

#define DEBUGFS "/sys/kernel/debug"

/*
 * The fault injection settings the tests need, and the values they set: allocations that may
 * sleep fail too (GFP_KERNEL: by default only atomic ones do), single pages too (by default only
 * larger ones), every cache, no report of each fault in the kernel's log, and, for the threads
 * that ask (/proc/thread-self/make-it-fail), every allocation once fail-nth has counted down.
 * Set in this order and restored in the reverse one, so that no other task meets a fault on the
 * way: the task filter is on before the probability is raised, and stays on until it is back.
 */
static const struct {
	const char *path, *value;
} knobs[] = {
	{ DEBUGFS "/failslab/ignore-gfp-wait", "N" },
	{ DEBUGFS "/failslab/cache-filter", "N" },
	{ DEBUGFS "/failslab/verbose", "0" },
	{ DEBUGFS "/failslab/task-filter", "Y" },
	{ DEBUGFS "/failslab/probability", "100" },
	{ DEBUGFS "/failslab/interval", "1" },
	{ DEBUGFS "/failslab/times", "-1" },
	{ DEBUGFS "/failslab/space", "0" },
	{ DEBUGFS "/fail_page_alloc/ignore-gfp-wait", "N" },
	{ DEBUGFS "/fail_page_alloc/min-order", "0" },
	{ DEBUGFS "/fail_page_alloc/verbose", "0" },
	{ DEBUGFS "/fail_page_alloc/task-filter", "Y" },
	{ DEBUGFS "/fail_page_alloc/probability", "100" },
	{ DEBUGFS "/fail_page_alloc/interval", "1" },
	{ DEBUGFS "/fail_page_alloc/times", "-1" },
	{ DEBUGFS "/fail_page_alloc/space", "0" },
};
#define N_KNOBS (sizeof(knobs) / sizeof(knobs[0]))

/*
 * The fault injection of a test: `nth` and `all` are this thread's fail-nth and make-it-fail,
 * `saved` the settings it found and `set` how many of them it changed (restored by the
 * teardown), `fd` the test's file of the device.
 */
struct faults {
	int nth, all;
	int fd;
	size_t set;
	char saved[N_KNOBS][32];
};

/* Puts back the first `f->set` settings, the last changed first. */
static void restore_knobs(struct faults *f)
{
	while (f->set > 0) {
		f->set--;
		write_text(knobs[f->set].path, f->saved[f->set]);
	}
}

/* Sets fault injection up for this thread; SKIPs where the kernel has none. */
static void faults_setup(struct __test_metadata *_metadata, struct faults *f)
{
	const char *path;
	size_t i;
	int err;

	f->fd = -1;
	f->all = -1;
	f->set = 0;
	f->nth = open("/proc/thread-self/fail-nth", O_RDWR);
	if (f->nth < 0 && errno == ENOENT)
		TW_SKIP(return, "no /proc/thread-self/fail-nth: a kernel without CONFIG_FAULT_INJECTION");
	ASSERT_LE(0, f->nth) TH_LOG("fail-nth: %s", strerror(errno));
	f->all = open("/proc/thread-self/make-it-fail", O_RDWR);
	ASSERT_LE(0, f->all) TH_LOG("make-it-fail: %s", strerror(errno));
	if (access(knobs[0].path, F_OK))
		mount("none", DEBUGFS, "debugfs", 0, NULL);
	for (i = 0; i < N_KNOBS; i++)
		if (read_text(knobs[i].path, f->saved[i], sizeof(f->saved[i])))
			TW_SKIP(return, "no %s: a kernel without CONFIG_FAILSLAB, CONFIG_FAIL_PAGE_ALLOC"
				" or CONFIG_FAULT_INJECTION_DEBUG_FS", knobs[i].path);
	/* There, fail-nth counts every copy from and to user space too, and fails one. */
	if (!access(DEBUGFS "/fail_usercopy", F_OK))
		TW_SKIP(return, "a kernel with CONFIG_FAULT_INJECTION_USERCOPY: fail-nth would fail"
			" the calls' copies of their arguments");
	/*
	 * Every page of the process present from now on, so that no page fault of its own (whose
	 * allocation a fault armed for a call could fail) comes between arming a fault and the call.
	 */
	ASSERT_EQ(0, mlockall(MCL_CURRENT | MCL_FUTURE)) TH_LOG("mlockall: %s", strerror(errno));
	f->fd = tw_open(_metadata);
	if (f->fd < 0)
		return;
	/* Last: the teardown, which restores them, does not run after a failed setup. */
	for (i = 0; i < N_KNOBS; i++, f->set++) {
		if (!write_text(knobs[i].path, knobs[i].value))
			continue;
		err = errno;
		path = knobs[i].path;
		restore_knobs(f);
		ASSERT_TRUE(false) TH_LOG("%s: %s", path, strerror(err));
	}
}

static void faults_teardown(struct faults *f)
{
	/* Disarmed first: an ASSERT may end a test while a fault is armed. */
	if (f->all >= 0) {
		if (pwrite(f->all, "0", 1, 0) != 1)
			perror("make-it-fail");
		close(f->all);
	}
	if (f->nth >= 0) {
		if (pwrite(f->nth, "0", 1, 0) != 1)
			perror("fail-nth");
		close(f->nth);
	}
	restore_knobs(f);
	if (f->fd >= 0)
		close(f->fd);
}

/* One call made with faults from its Nth fault site. */
struct attempt {
	bool reached; /* the call reached the site: it failed there, or went on without it */
	unsigned int left; /* else how many sites short of it the call ended */
	int ret, err;
};

/*
 * Makes `call(ctx)` (0, or -1 with errno) with the nth fault site this thread reaches from now
 * failing, and with `from`, every later one too; disarms the faults if the call did not reach
 * the nth. A single fault fails few calls of the module: the kernel crate's `KVVec` retries a
 * failed allocation once (`kvrealloc` falls back to `kvmalloc`), so only a second fault fails
 * it; every fault from the Nth on is memory running out for good.
 */
static struct attempt fail_nth(struct __test_metadata *_metadata, const struct faults *f,
			       unsigned int n, bool from, int (*call)(void *), void *ctx)
{
	struct attempt a;
	char buf[16] = { 0 };
	int len = snprintf(buf, sizeof(buf), "%u", n);

	ASSERT_EQ(len, pwrite(f->nth, buf, len, 0)) TH_LOG("fail-nth %u: %s", n, strerror(errno));
	if (from)
		ASSERT_EQ(1, pwrite(f->all, "1", 1, 0)) TH_LOG("make-it-fail: %s", strerror(errno));
	a.ret = call(ctx);
	a.err = errno;
	if (from)
		ASSERT_EQ(1, pwrite(f->all, "0", 1, 0)) TH_LOG("make-it-fail: %s", strerror(errno));
	memset(buf, 0, sizeof(buf));
	ASSERT_LT(0, pread(f->nth, buf, sizeof(buf) - 1, 0)) TH_LOG("fail-nth: %s", strerror(errno));
	/* 0: the fault was injected; else the sites still to come before it. */
	a.left = strtoul(buf, NULL, 10);
	a.reached = a.left == 0;
	if (!a.reached)
		ASSERT_EQ(1, pwrite(f->nth, "0", 1, 0));
	return a;
}

/*
 * A call tried under faults: `prepare` runs before each attempt and `check` after it (told
 * whether the call failed), both with no fault armed.
 */
struct trial {
	const char *what;
	void (*prepare)(struct __test_metadata *_metadata, void *ctx);
	int (*call)(void *ctx);
	void (*check)(struct __test_metadata *_metadata, void *ctx, bool failed);
};

/*
 * Makes `t`'s call with its Nth fault site failing, for N = 1, 2, ... until it reaches fewer,
 * and then with every site from the Nth on failing, likewise: each attempt succeeds, or fails
 * with ENOMEM where a fault came; every call here allocates, so that some fail once everything
 * from a fault on fails. A call without faults, first, counts its sites: the count moves from
 * one call to the next (a new slab, vmalloc's and KASAN's pages, kmemleak's and debug objects'
 * own), and the sweep goes at least that far, so that a call that makes fewer once does not end
 * it before its last sites.
 */
static void under_faults(struct __test_metadata *_metadata, const struct faults *f,
			 const struct trial *t, void *ctx)
{
	const unsigned int probe = 1U << 30;
	unsigned int n, sites, failed;
	struct attempt a;
	__u64 t0;
	int from;

	for (from = 0; from < 2; from++) {
		failed = 0;
		t0 = now_ns();
		if (t->prepare)
			t->prepare(_metadata, ctx);
		a = fail_nth(_metadata, f, probe, false, t->call, ctx);
		ASSERT_FALSE(a.reached);
		ASSERT_EQ(0, a.ret) TH_LOG("%s without a fault: %s", t->what, strerror(a.err));
		t->check(_metadata, ctx, false);
		sites = probe - a.left;
		ASSERT_LT(0, sites) TH_LOG("%s reached no fault site", t->what);
		for (n = 1; n < MAX_SITES; n++) {
			if (t->prepare)
				t->prepare(_metadata, ctx);
			a = fail_nth(_metadata, f, n, from, t->call, ctx);
			EXPECT_TRUE(!a.ret || (a.reached && a.err == ENOMEM))
				TH_LOG("%s with site %u%s failing: %d, %s", t->what, n,
				       from ? " and all after" : "", a.ret, strerror(a.err));
			failed += a.ret != 0;
			t->check(_metadata, ctx, a.ret != 0);
			if (!a.reached && n > sites)
				break;
		}
		ASSERT_GT(MAX_SITES, n);
		if (from)
			EXPECT_LT(0, failed) TH_LOG("no %s failed: no fault was injected", t->what);
		TH_LOG("%s, %s: %u fault sites (%u without faults), %u of them failed it (%llu ms)",
		       t->what,
		       from ? "every allocation from the Nth on failing" : "the Nth allocation failing",
		       n - 1, sites, failed, (now_ns() - t0) / 1000000);
	}
}

/* CONFIGUREs a manual-clock instance of `capacity` callouts. */
static int configure(int fd, __u32 scheme, __u32 slots, __u32 capacity)
{
	struct tw_config c = { .scheme = scheme, .clock = TW_CLOCK_MANUAL, .slots = slots,
			       .capacity = capacity, .ring = 64 };

	return ioctl(fd, TW_IOC_CONFIGURE, &c);
}

/*
 * Sets a callout and a timeout, advances to the callout, reads its record and untimeouts the
 * timeout: the instance works.
 */
static void fires(struct __test_metadata *_metadata, int fd)
{
	struct tw_timeout t = { .func = 0xf00, .arg = 7, .ticks = 20 };
	struct tw_untimeout u = { .func = 0xf00, .arg = 7 };
	struct tw_fired rec[4];
	__u64 h;

	ASSERT_EQ(0, set_callout(fd, 3, 0xc0ffee, &h)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, ioctl(fd, TW_IOC_TIMEOUT, &t)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(0, advance(fd, 3)) TH_LOG("%s", strerror(errno));
	ASSERT_EQ(1, drain(fd, rec, 4));
	EXPECT_EQ(h, rec[0].handle);
	EXPECT_EQ(0xc0ffee, rec[0].cookie);
	EXPECT_EQ(0, ioctl(fd, TW_IOC_UNTIMEOUT, &u)) TH_LOG("%s", strerror(errno));
}

/* Whether `fd` is configured, and with no storage when it is not. */
static bool configured(struct __test_metadata *_metadata, int fd)
{
	struct tw_stats st;

	ASSERT_EQ(0, get_stats(fd, &st));
	if (!st.scheme) {
		EXPECT_EQ(0, st.memory_bytes);
		EXPECT_EQ(0, st.started);
	}
	return st.scheme != 0;
}

/* ---- The device ----------------------------------------------------------------------------- */

FIXTURE(device)
{
	struct faults f;
};

FIXTURE_SETUP(device)
{
	faults_setup(_metadata, &self->f);
}

FIXTURE_TEARDOWN(device)
{
	faults_teardown(&self->f);
}

static __u64 instances(struct __test_metadata *_metadata, int fd)
{
	struct tw_info info;

	ASSERT_EQ(0, get_info(fd, &info));
	return info.instances;
}

/* An open: `fd` the file it opened, `base` a file held open, `before` the instances then. */
struct open_ctx {
	int fd, base;
	__u64 before;
};

static int open_call(void *ctx)
{
	struct open_ctx *o = ctx;

	o->fd = open(TW_DEVICE, O_RDWR);
	return o->fd < 0 ? -1 : 0;
}

static void open_check(struct __test_metadata *_metadata, void *ctx, bool failed)
{
	struct open_ctx *o = ctx;

	EXPECT_EQ(o->before + !failed, instances(_metadata, o->base));
	if (failed)
		return;
	ASSERT_EQ(0, configure(o->fd, 0, 0, 16)) TH_LOG("%s", strerror(errno));
	fires(_metadata, o->fd);
	close(o->fd);
}

TEST_F_TIMEOUT(device, an_open_that_cannot_allocate_makes_no_instance, 600)
{
	const struct trial t = { .what = "open", .call = open_call, .check = open_check };
	struct open_ctx o = { .base = self->f.fd };

	if (self->f.fd < 0)
		return;
	o.before = instances(_metadata, self->f.fd);
	under_faults(_metadata, &self->f, &t, &o);
	EXPECT_EQ(o.before, instances(_metadata, self->f.fd));
}

/* An ioctl on `fd`: `cmd` with `arg`, and what the trial needs beside. */
struct call {
	int fd;
	unsigned long cmd;
	void *arg;
	void *data;
};

static int ioctl_call(void *ctx)
{
	struct call *c = ctx;

	return ioctl(c->fd, c->cmd, c->arg);
}

/* Ticks ahead on the real clock that no stall of the guest reaches: 35 years of 1 ms. */
#define FAR (1ULL << 40)

/* A first start on a fresh file: SETCALLOUT or TIMEOUT. */
struct first_ctx {
	struct tw_set s;
	struct tw_timeout t;
};

static void first_prepare(struct __test_metadata *_metadata, void *ctx)
{
	struct call *c = ctx;
	struct first_ctx *x = c->data;

	c->fd = tw_open(_metadata);
	x->s = (struct tw_set){ .ticks = FAR, .cookie = 1 };
	x->t = (struct tw_timeout){ .func = 0xf00, .arg = 1, .ticks = FAR };
}

static void first_check(struct __test_metadata *_metadata, void *ctx, bool failed)
{
	struct call *c = ctx;
	struct first_ctx *x = c->data;
	struct tw_stats st;

	if (failed) {
		EXPECT_FALSE(configured(_metadata, c->fd));
		EXPECT_EQ(0, configure(c->fd, 0, 0, 16)) TH_LOG("%s", strerror(errno));
		fires(_metadata, c->fd);
	} else {
		ASSERT_EQ(0, get_stats(c->fd, &st));
		EXPECT_EQ(TW_DEFAULT_SCHEME, st.scheme);
		EXPECT_EQ(1, st.outstanding);
		EXPECT_EQ(0, unset_callout(c->fd, c->cmd == TW_IOC_SETCALLOUT ? x->s.handle
									    : x->t.handle))
			TH_LOG("%s", strerror(errno));
	}
	close(c->fd);
}

/*
 * The first SETCALLOUT or TIMEOUT on a fresh file configures the defaults (the real clock, 64 Ki
 * callouts).
 */
TEST_F_TIMEOUT(device, a_first_start_that_cannot_allocate_configures_nothing, 600)
{
	struct first_ctx x;
	struct call c = { .data = &x };
	const struct trial set = { .what = "SETCALLOUT", .prepare = first_prepare,
				   .call = ioctl_call, .check = first_check };
	const struct trial timeout = { .what = "TIMEOUT", .prepare = first_prepare,
				       .call = ioctl_call, .check = first_check };

	if (self->f.fd < 0)
		return;
	c.cmd = TW_IOC_SETCALLOUT;
	c.arg = &x.s;
	under_faults(_metadata, &self->f, &set, &c);
	c.cmd = TW_IOC_TIMEOUT;
	c.arg = &x.t;
	under_faults(_metadata, &self->f, &timeout, &c);
}

/*
 * A batch of `count` operations on K callouts: each of them moved in place, the rest new
 * callouts. Its copy is kmalloc'ed (64 operations: one page at most) or, failing that,
 * vmalloc'ed (2048: 80 KiB). On a fresh file (`fresh`), a batch of new callouts, which
 * configures the defaults first.
 */
enum { K = 32, UNTOUCHED = 0x5a5a };

struct batch_ctx {
	struct tw_op *ops;
	struct tw_batch b;
	bool fresh;
	__u64 h[K];
};

static void batch_prepare(struct __test_metadata *_metadata, void *ctx)
{
	struct call *c = ctx;
	struct batch_ctx *x = c->data;
	__u32 i, count = x->b.count;

	c->fd = tw_open(_metadata);
	if (x->fresh) {
		for (i = 0; i < count; i++)
			x->ops[i] = (struct tw_op){ .op = TW_OP_SET, .a = FAR, .b = i,
						    .result = UNTOUCHED };
		return;
	}
	ASSERT_EQ(0, configure(c->fd, 0, 0, count + K)) TH_LOG("%s", strerror(errno));
	for (i = 0; i < K; i++) {
		ASSERT_EQ(0, set_callout(c->fd, 100 + i, i, &x->h[i]));
	}
	for (i = 0; i < count; i++)
		x->ops[i] = i < K ? (struct tw_op){ .op = TW_OP_MOD, .handle = x->h[i], .a = 1000 + i,
						    .result = UNTOUCHED }
				  : (struct tw_op){ .op = TW_OP_SET, .a = 500 + i, .b = i,
						    .result = UNTOUCHED };
}

static void batch_check(struct __test_metadata *_metadata, void *ctx, bool failed)
{
	struct call *c = ctx;
	struct batch_ctx *x = c->data;
	__u32 i, count = x->b.count;
	struct tw_stats st;
	struct tw_query q;

	if (x->fresh) {
		for (i = 0; i < count; i++) {
			ASSERT_EQ(failed ? UNTOUCHED : 0, x->ops[i].result) TH_LOG("op %u", i);
		}
		ASSERT_EQ(!failed, configured(_metadata, c->fd));
		ASSERT_EQ(0, get_stats(c->fd, &st));
		EXPECT_EQ(failed ? 0 : count, st.outstanding);
		close(c->fd);
		return;
	}
	ASSERT_EQ(0, get_stats(c->fd, &st));
	if (failed) {
		/* No operation run: nothing written back, no callout set, moved or lost. */
		for (i = 0; i < count; i++) {
			ASSERT_EQ(UNTOUCHED, x->ops[i].result) TH_LOG("op %u", i);
		}
		EXPECT_EQ(K, st.outstanding);
		EXPECT_EQ(K, st.started);
	} else {
		for (i = 0; i < count; i++) {
			ASSERT_EQ(0, x->ops[i].result) TH_LOG("op %u", i);
		}
		EXPECT_EQ(count, st.outstanding);
	}
	for (i = 0; i < K; i++) {
		q = (struct tw_query){ .handle = x->h[i] };
		ASSERT_EQ(0, ioctl(c->fd, TW_IOC_QUERY, &q));
		EXPECT_EQ(1, q.pending);
		EXPECT_EQ((failed ? 100 : 1000) + i, q.deadline) TH_LOG("callout %u", i);
	}
	close(c->fd);
}

TEST_F_TIMEOUT(device, a_batch_that_cannot_allocate_runs_nothing, 600)
{
	const struct trial t = { .what = "BATCH", .prepare = batch_prepare, .call = ioctl_call,
				 .check = batch_check };
	struct batch_ctx x;
	struct call c = { .cmd = TW_IOC_BATCH, .arg = &x.b, .data = &x };
	static const struct {
		__u32 count;
		bool fresh;
	} batches[] = { { 64, false }, { 2048, false }, { 64, true } };
	size_t i;

	if (self->f.fd < 0)
		return;
	for (i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
		x.ops = calloc(batches[i].count, sizeof(*x.ops));
		ASSERT_TRUE(x.ops != NULL);
		x.b = (struct tw_batch){ .ops = (uintptr_t)x.ops, .count = batches[i].count };
		x.fresh = batches[i].fresh;
		TH_LOG("a batch of %u operations%s", x.b.count,
		       x.fresh ? " on a fresh file, which configures it" : "");
		under_faults(_metadata, &self->f, &t, &c);
		free(x.ops);
	}
}

/*
 * A bench of Linux timers (n of them made, then taken down), alone or in a pair with an instance
 * bench: after one a fault failed, the timers it made are taken down and the same bench runs.
 */
struct bench_ctx {
	struct tw_bench linux_timers, instance, b;
	struct tw_bench_pair p;
};

static void bench_prepare(struct __test_metadata *_metadata, void *ctx)
{
	struct call *c = ctx;
	struct bench_ctx *x = c->data;

	(void)_metadata;
	x->b = x->linux_timers;
	x->p = (struct tw_bench_pair){ .instance = x->instance, .baseline = x->linux_timers };
}

static void bench_check(struct __test_metadata *_metadata, void *ctx, bool failed)
{
	struct call *c = ctx;

	if (!failed)
		return;
	bench_prepare(_metadata, ctx);
	EXPECT_EQ(0, ioctl_call(c)) TH_LOG("the same bench after: %s", strerror(errno));
}

TEST_F_TIMEOUT(device, a_bench_whose_timers_cannot_be_allocated_takes_them_down, 900)
{
	const struct trial t = { .what = "BENCH", .prepare = bench_prepare, .call = ioctl_call,
				 .check = bench_check };
	static const __u32 kinds[] = { TW_BENCH_TIMER_LIST, TW_BENCH_HRTIMER };
	struct bench_ctx x = {
		.instance = { .kind = TW_BENCH_SETCALLOUT, .iterations = 16, .min_ticks = 1000,
			      .spread = 1000, .seed = 2 },
	};
	struct call c = { .data = &x };
	size_t i;
	int pair;

	if (self->f.fd < 0)
		return;
	ASSERT_EQ(0, configure(self->f.fd, 0, 0, 16)) TH_LOG("%s", strerror(errno));
	c.fd = self->f.fd;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		for (pair = 0; pair < 2; pair++) {
			/* Two of the module's pieces of 128 timers. */
			x.linux_timers = (struct tw_bench){ .kind = kinds[i], .n = 130,
							    .iterations = 16,
							    .min_ticks = TW_MIN_BASELINE_TICKS,
							    .spread = 1000, .seed = 1 };
			c.cmd = pair ? TW_IOC_BENCH_PAIR : TW_IOC_BENCH;
			c.arg = pair ? (void *)&x.p : (void *)&x.b;
			TH_LOG("kind %u%s", kinds[i], pair ? ", in a pair" : "");
			under_faults(_metadata, &self->f, &t, &c);
		}
	}
}

/* ---- Each scheme ---------------------------------------------------------------------------- */

FIXTURE(scheme)
{
	struct faults f;
};

TW_VARIANT_PER_SCHEME(scheme);

FIXTURE_SETUP(scheme)
{
	faults_setup(_metadata, &self->f);
}

FIXTURE_TEARDOWN(scheme)
{
	faults_teardown(&self->f);
}

static void configure_prepare(struct __test_metadata *_metadata, void *ctx)
{
	struct call *c = ctx;

	c->fd = tw_open(_metadata);
}

static void configure_check(struct __test_metadata *_metadata, void *ctx, bool failed)
{
	struct call *c = ctx;
	const struct tw_config *cfg = c->arg;
	struct tw_stats st;

	if (failed) {
		EXPECT_FALSE(configured(_metadata, c->fd));
		ASSERT_EQ(0, ioctl_call(c)) TH_LOG("CONFIGURE after: %s", strerror(errno));
	}
	ASSERT_EQ(0, get_stats(c->fd, &st));
	EXPECT_EQ(cfg->scheme, st.scheme);
	EXPECT_LT(0, st.memory_bytes);
	fires(_metadata, c->fd);
	close(c->fd);
}

/*
 * CONFIGURE of 16 callouts (buffers within a page, kmalloc'ed) and of 4096 (larger: kmalloc'ed
 * or, failing that, vmalloc'ed).
 */
TEST_F_TIMEOUT(scheme, a_configuration_that_cannot_allocate_leaves_the_file_unconfigured, 300)
{
	const struct trial t = { .what = "CONFIGURE", .prepare = configure_prepare,
				 .call = ioctl_call, .check = configure_check };
	static const __u32 capacities[] = { 16, 4096 };
	struct tw_config cfg;
	struct call c = { .cmd = TW_IOC_CONFIGURE, .arg = &cfg };
	size_t i;

	if (self->f.fd < 0)
		return;
	for (i = 0; i < sizeof(capacities) / sizeof(capacities[0]); i++) {
		cfg = (struct tw_config){ .scheme = variant->scheme, .clock = TW_CLOCK_MANUAL,
					  .slots = variant->slots, .capacity = capacities[i],
					  .ring = 64 };
		TH_LOG("capacity %u", capacities[i]);
		under_faults(_metadata, &self->f, &t, &c);
	}
}

TW_HARNESS_MAIN
