/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kselftests of /dev/timerwheel: opening the device (SKIP when the module
 * is not loaded), the monotonic clock, a reproducible random generator, and one small wrapper
 * per ioctl. Include after kselftest_harness.h.
 */
#ifndef TW_UTIL_H
#define TW_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "timerwheel.h"

/* Opens a new instance; SKIPs the test (returning -1) when the device node is missing. */
static inline int tw_open(struct __test_metadata *_metadata)
{
	int fd = open(TW_DEVICE, O_RDWR);

	if (fd < 0 && errno == ENOENT)
		SKIP(return -1, TW_DEVICE " is missing: is rust_timerwheel loaded?");
	ASSERT_LE(0, fd) TH_LOG("open " TW_DEVICE ": %s", strerror(errno));
	return fd;
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
 * One variant per scheme of the paper, for a fixture whose variant has `scheme` and `slots`:
 * hashed wheels of 64 slots (the tests' intervals go round them many times) and scheme 4's
 * MaxInterval of 4096 ticks (longer than every interval the tests draw).
 */
#define TW_VARIANT_PER_SCHEME(f)                                                            \
	FIXTURE_VARIANT_ADD(f, scheme1_straightforward) { .scheme = 1 };                     \
	FIXTURE_VARIANT_ADD(f, scheme2_ordered_list) { .scheme = 2 };                        \
	FIXTURE_VARIANT_ADD(f, scheme3_heap) { .scheme = 3 };                                \
	FIXTURE_VARIANT_ADD(f, scheme4_basic_wheel) { .scheme = 4, .slots = 4096 };          \
	FIXTURE_VARIANT_ADD(f, scheme5_hashed_sorted) { .scheme = 5, .slots = 64 };          \
	FIXTURE_VARIANT_ADD(f, scheme6_hashed_unsorted) { .scheme = 6, .slots = 64 };        \
	FIXTURE_VARIANT_ADD(f, scheme7_hierarchical) { .scheme = 7 }

#endif /* TW_UTIL_H */
