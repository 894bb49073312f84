/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kselftests of /dev/timerwheel: opening the device (SKIP when the module
 * is not loaded), small text files, the monotonic clock, a reproducible random generator and its
 * seed, and one small wrapper per ioctl. Include after kselftest_harness.h.
 */
#ifndef TW_UTIL_H
#define TW_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "timerwheel.h"

/*
 * SKIP(statement, fmt, ...) that keeps a failure: the harness's SKIP() sets the test's exit code
 * to KSFT_SKIP, over the KSFT_FAIL an earlier EXPECT_*() left, and so reports a test that failed
 * as skipped. Once the test has failed, this only logs the reason and runs `statement`.
 */
#define TW_SKIP(statement, fmt, ...)                                                          \
	do {                                                                                  \
		if (_metadata->exit_code == KSFT_FAIL) {                                      \
			TH_LOG("not skipped, failed already: " fmt, ##__VA_ARGS__);           \
			statement;                                                            \
		} else {                                                                      \
			SKIP(statement, fmt, ##__VA_ARGS__);                                  \
		}                                                                             \
	} while (0)

/* Opens a new instance; SKIPs the test (returning -1) when the device node is missing. */
static inline int tw_open(struct __test_metadata *_metadata)
{
	int fd = open(TW_DEVICE, O_RDWR);

	if (fd < 0 && errno == ENOENT)
		TW_SKIP(return -1, TW_DEVICE " is missing: is rust_timerwheel loaded?");
	ASSERT_LE(0, fd) TH_LOG("open " TW_DEVICE ": %s", strerror(errno));
	return fd;
}

/*
 * The whole program SKIPs (KSFT_SKIP, exit 4: "1..0 # SKIP ...") where the device cannot be
 * opened at all, so that a run without the module is reported as skipped rather than as every
 * test passing; listing the tests (-l) or their options (-h) needs no device.
 */
static inline void tw_require_device(int argc, char **argv)
{
	int i, fd;

	for (i = 1; i < argc; i++)
		if (!strcmp(argv[i], "-l") || !strcmp(argv[i], "-h"))
			return;
	fd = open(TW_DEVICE, O_RDWR);
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (errno == ENOENT || errno == ENODEV || errno == ENXIO)
		ksft_exit_skip(TW_DEVICE " is missing: is rust_timerwheel loaded?\n");
	if (errno == EACCES || errno == EPERM)
		ksft_exit_skip(TW_DEVICE ": %s: the tests need root\n", strerror(errno));
}

/* TEST_HARNESS_MAIN, SKIPping as a whole without the device (tw_require_device()). */
#define TW_HARNESS_MAIN                                    \
	int main(int argc, char **argv)                    \
	{                                                  \
		tw_require_device(argc, argv);             \
		return test_harness_run(argc, argv);       \
	}

/* Reads a small text file (at most len - 1 bytes) into buf; 0, or -1 on failure. */
static inline int read_text(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return 0;
}

/* Writes `v` to the file at `path` (sysfs, procfs, debugfs); 0, or -1 with errno set. */
static inline int write_text(const char *path, const char *v)
{
	ssize_t len = (ssize_t)strlen(v), n;
	int fd, err;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, v, len);
	err = errno;
	close(fd);
	errno = n < 0 ? err : EIO;
	return n == len ? 0 : -1;
}

static inline __u64 now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* xorshift64*: reproducible random numbers. */
static inline __u64 rnd(__u64 *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/*
 * The seed of a randomised test: `fixed`, unless the environment's TW_SEED names another (a C
 * integer: decimal, hex after 0x, octal after a leading 0), which the test then logs, so that a
 * run can draw other calls than CI's and a failure among them can be repeated. A TW_SEED that is
 * not a number, or is 0 (rnd() would draw nothing but 0), fails the test; tw_variant_seed() keeps
 * the seed it mixes off 0.
 */
static inline __u64 tw_seed(struct __test_metadata *_metadata, __u64 fixed)
{
	const char *env = getenv("TW_SEED");
	unsigned long long seed;
	char *end;

	if (!env || !*env)
		return fixed;
	errno = 0;
	seed = strtoull(env, &end, 0);
	ASSERT_TRUE(!errno && !*end && *env != '-' && seed)
		TH_LOG("TW_SEED=%s is not a number other than 0", env);
	TH_LOG("seed %#llx, from TW_SEED", seed);
	return seed;
}

/* tw_seed() for one variant of a per-scheme fixture: the scheme mixed in, kept off 0. */
static inline __u64 tw_variant_seed(struct __test_metadata *_metadata, __u64 fixed, __u32 scheme)
{
	return (tw_seed(_metadata, fixed) ^ scheme) ?: 1;
}

static inline int set_callout(int fd, __u64 ticks, __u64 cookie, __u64 *handle)
{
	struct tw_set s = { .ticks = ticks, .cookie = cookie };
	int ret = ioctl(fd, TW_IOC_SETCALLOUT, &s);

	if (!ret && handle)
		*handle = s.handle;
	return ret;
}

static inline int unset_callout(int fd, __u64 handle)
{
	return ioctl(fd, TW_IOC_UNSETCALLOUT, &handle);
}

static inline int advance(int fd, __u64 n)
{
	return ioctl(fd, TW_IOC_ADVANCE, &n);
}

static inline int get_stats(int fd, struct tw_stats *st)
{
	return ioctl(fd, TW_IOC_STATS, st);
}

static inline int get_info(int fd, struct tw_info *info)
{
	return ioctl(fd, TW_IOC_INFO, info);
}

/*
 * The most entries one hold of an instance's lock may visit: TW_HOLD_WORK, or the module's
 * hold_work parameter.
 */
static inline __u64 hold_work_of(int fd)
{
	struct tw_info info;

	return get_info(fd, &info) ? TW_HOLD_WORK : info.hold_work;
}

/*
 * A signal sent to a call once it is under way, and the holds it did after: a check that a long
 * call answers signals, which does not depend on the machine's speed. Another thread reads the
 * holds done so far (the call starts only then: `ready`), waits until the call has done `after`
 * holds of work more (tw_stats.holds: a manual-clock instance does no other), sends the calling
 * thread `sig` (whose handler the caller installed, without SA_RESTART), and notes the holds
 * done by then; after the call, `holds_after` is how many more it did. A call that looks at
 * signals between its holds does one or two more (the one under way, one to undo or end); one
 * that ignores them goes on to its end. With `protect` set, the kicker makes that page read-only
 * instead of sending a signal (`sent` says whether mprotect succeeded).
 */
struct tw_kick {
	int fd, sig;
	__u64 after;
	void *protect;
	pthread_t target;
	atomic_int ready, done, sent;
	__u64 holds_at_signal, holds_after;
};

static void *tw_kicker(void *arg)
{
	struct tw_kick *k = arg;
	struct tw_stats st;
	__u64 first;

	if (get_stats(k->fd, &st)) {
		atomic_store(&k->ready, 1);
		return NULL;
	}
	first = st.holds;
	/* The baseline read: the call may start (tw_kicked_ioctl() waits for this). */
	atomic_store(&k->ready, 1);
	while (!atomic_load(&k->done)) {
		if (get_stats(k->fd, &st))
			return NULL;
		if (st.holds >= first + k->after) {
			int done = 1;

			if (k->protect)
				done = !mprotect(k->protect, 4096, PROT_READ);
			else
				pthread_kill(k->target, k->sig);
			/* Read after the signal is pending: the holds from here on came after it. */
			if (!get_stats(k->fd, &st))
				k->holds_at_signal = st.holds;
			atomic_store(&k->sent, done);
			return NULL;
		}
		usleep(100);
	}
	return NULL;
}

/* ioctl(k->fd, cmd, arg) with a kicker (see struct tw_kick); its result, errno kept. */
static inline int tw_kicked_ioctl(struct tw_kick *k, unsigned long cmd, void *arg)
{
	struct tw_stats st;
	pthread_t t;
	int ret, err;

	k->target = pthread_self();
	atomic_store(&k->ready, 0);
	atomic_store(&k->done, 0);
	atomic_store(&k->sent, 0);
	k->holds_after = 0;
	if (pthread_create(&t, NULL, tw_kicker, k))
		return -1;
	/* Started only once the kicker has its baseline, however late it was scheduled. */
	while (!atomic_load(&k->ready))
		usleep(100);
	ret = ioctl(k->fd, cmd, arg);
	err = errno;
	atomic_store(&k->done, 1);
	pthread_join(t, NULL);
	if (atomic_load(&k->sent) && !get_stats(k->fd, &st))
		k->holds_after = st.holds - k->holds_at_signal;
	errno = err;
	return ret;
}

/* The most holds a call that answers signals does once one is pending (see struct tw_kick). */
#define TW_HOLDS_PAST_A_SIGNAL 4

/* Reads every record there is, without blocking; returns how many. */
static inline int drain(int fd, struct tw_fired *out, int max)
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

/*
 * The variant of fixture `f`, the scheme and its slots (schemes 5 and 6: M; scheme 4:
 * MaxInterval), and one variant per scheme of the paper: hashed wheels of 64 slots (the tests'
 * intervals go round them many times) and scheme 4's MaxInterval of 4096 ticks (longer than
 * every interval the tests draw).
 */
#define TW_VARIANT_PER_SCHEME(f)                                                            \
	FIXTURE_VARIANT(f)                                                                  \
	{                                                                                   \
		__u32 scheme;                                                               \
		__u32 slots;                                                                \
	};                                                                                  \
	FIXTURE_VARIANT_ADD(f, scheme1_straightforward) { .scheme = 1 };                    \
	FIXTURE_VARIANT_ADD(f, scheme2_ordered_list) { .scheme = 2 };                       \
	FIXTURE_VARIANT_ADD(f, scheme3_heap) { .scheme = 3 };                               \
	FIXTURE_VARIANT_ADD(f, scheme4_basic_wheel) { .scheme = 4, .slots = 4096 };         \
	FIXTURE_VARIANT_ADD(f, scheme5_hashed_sorted) { .scheme = 5, .slots = 64 };         \
	FIXTURE_VARIANT_ADD(f, scheme6_hashed_unsorted) { .scheme = 6, .slots = 64 };       \
	FIXTURE_VARIANT_ADD(f, scheme7_hierarchical) { .scheme = 7 }

/*
 * Fixture `f`, an open file of the device for each test (`self->fd`, closed after it), with a
 * variant per scheme (TW_VARIANT_PER_SCHEME).
 */
#define TW_FD_FIXTURE_PER_SCHEME(f)                                                         \
	FIXTURE(f)                                                                          \
	{                                                                                   \
		int fd;                                                                     \
	};                                                                                  \
	TW_VARIANT_PER_SCHEME(f);                                                           \
	FIXTURE_SETUP(f)                                                                    \
	{                                                                                   \
		self->fd = tw_open(_metadata);                                              \
	}                                                                                   \
	FIXTURE_TEARDOWN(f)                                                                 \
	{                                                                                   \
		if (self->fd >= 0)                                                          \
			close(self->fd);                                                    \
	}

#endif /* TW_UTIL_H */
