// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl tests of /dev/timerwheel (rust_timerwheel), kselftest_harness style.
 *
 * Run by timerwheel.sh with the module loaded; skips when the device node is missing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "timerwheel.h"

static int open_dev(struct __test_metadata *_metadata)
{
	int fd = open(TW_DEVICE, O_RDWR);

	if (fd < 0 && errno == ENOENT)
		SKIP(return -1, TW_DEVICE " is missing: is rust_timerwheel loaded?");
	ASSERT_LE(0, fd) TH_LOG("open " TW_DEVICE ": %s", strerror(errno));
	return fd;
}

TEST(info_reports_version_and_tick)
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
	close(fd);
}

TEST(heartbeat_ticks_advance)
{
	struct tw_info a, b;
	struct timespec t0, t1;
	uint64_t expect;
	int fd = open_dev(_metadata);

	if (fd < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ASSERT_EQ(0, ioctl(fd, TW_IOC_INFO, &a));
	usleep(200 * 1000);
	ASSERT_EQ(0, ioctl(fd, TW_IOC_INFO, &b));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	expect = ((t1.tv_sec - t0.tv_sec) * 1000000000ULL + t1.tv_nsec - t0.tv_nsec) / a.tick_ns;
	/* The count follows the clock: at least half the periods elapsed, at most all plus one. */
	EXPECT_LE(a.ticks + expect / 2, b.ticks);
	EXPECT_GE(a.ticks + expect + 1, b.ticks);
	close(fd);
}

TEST(unknown_command_is_enotty)
{
	int fd = open_dev(_metadata);

	if (fd < 0)
		return;
	EXPECT_EQ(-1, ioctl(fd, _IO(TW_IOC_MAGIC, 0x7f), 0));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(fd, _IOR('x', 0x00, struct tw_info), 0));
	EXPECT_EQ(ENOTTY, errno);
	close(fd);
}

TEST(info_bad_pointer_is_efault)
{
	int fd = open_dev(_metadata);

	if (fd < 0)
		return;
	EXPECT_EQ(-1, ioctl(fd, TW_IOC_INFO, (void *)8));
	EXPECT_EQ(EFAULT, errno);
	close(fd);
}

TEST_HARNESS_MAIN
