#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kselftest for rust_timerwheel: loads the module, runs the ioctl tests of timerwheel_test
# against /dev/timerwheel, and unloads it. KTAP output; exit 4 (skip) when it cannot run.
#
#   selftests/timerwheel.sh [MODULE.ko]     (default: ../rust_timerwheel.ko beside this folder)
#
# KSFT_DIR: a kernel tree's tools/testing/selftests, for ktap_helpers.sh.
DIR="$(dirname "$(readlink -f "$0")")"
KO=${1:-$DIR/../rust_timerwheel.ko}

KTAP_HELPERS="${KSFT_DIR:-$DIR/..}/kselftest/ktap_helpers.sh"
if [ -e "$KTAP_HELPERS" ]; then
	source "$KTAP_HELPERS"
else
	echo "1..0 # SKIP $KTAP_HELPERS not found (set KSFT_DIR)"
	exit 4
fi

ktap_print_header
if [ "$(id -u)" != 0 ]; then
	ktap_skip_all "must be run as root"
	exit "$KSFT_SKIP"
fi
if [ ! -f "$KO" ]; then
	ktap_skip_all "no module at $KO (run make)"
	exit "$KSFT_SKIP"
fi
if [ ! -x "$DIR/timerwheel_test" ]; then
	ktap_skip_all "no $DIR/timerwheel_test (run make -C selftests)"
	exit "$KSFT_SKIP"
fi
if grep -q '^rust_timerwheel ' /proc/modules; then
	ktap_skip_all "rust_timerwheel is already loaded"
	exit "$KSFT_SKIP"
fi

ktap_set_plan 7

# 1. insmod with a bad parameter fails cleanly and leaves nothing behind.
if ! insmod "$KO" tick_us=5 2>/dev/null && ! grep -q '^rust_timerwheel ' /proc/modules; then
	ktap_test_pass "insmod refuses tick_us=5"
else
	rmmod rust_timerwheel 2>/dev/null
	ktap_test_fail "insmod refuses tick_us=5"
fi

# 2. insmod creates the device node.
if insmod "$KO" && [ -c /dev/timerwheel ]; then
	ktap_test_pass "insmod creates /dev/timerwheel"
else
	ktap_test_fail "insmod creates /dev/timerwheel"
	ktap_finished
	exit "$KSFT_FAIL"
fi

# 3. The module's KUnit suite runs at insmod (when KUnit is enabled) and passes.
kunit=$(dmesg | grep -a '# rust_timerwheel: pass:' | tail -n 1)
if [ -z "$kunit" ]; then
	ktap_test_skip "KUnit suite rust_timerwheel did not run (boot with kunit.enable=1 kunit.autorun=1)"
elif grep -q ' fail:0 ' <<<"$kunit"; then
	ktap_test_pass "KUnit suite rust_timerwheel:${kunit#*rust_timerwheel:}"
else
	ktap_test_fail "KUnit suite rust_timerwheel:${kunit#*rust_timerwheel:}"
fi

# 4. modinfo fields.
fields=$(modinfo -F description "$KO")$(modinfo -F license "$KO")$(modinfo -F parm "$KO")
if [ -n "$(modinfo -F description "$KO")" ] && [ "$(modinfo -F license "$KO")" = GPL ] &&
	modinfo -F parm "$KO" | grep -q '^tick_us:'; then
	ktap_test_pass "modinfo has description, license and tick_us"
else
	ktap_test_fail "modinfo has description, license and tick_us (got: $fields)"
fi

# 5. The ioctl tests, nested KTAP.
stdbuf -oL -eL "$DIR/timerwheel_test" 2>&1 | sed -u "s/^/  /"
if [ "${PIPESTATUS[0]}" = 0 ]; then
	ktap_test_pass "timerwheel_test"
else
	ktap_test_fail "timerwheel_test"
fi

# 6. rmmod removes the module and its node, with no fd open.
if rmmod rust_timerwheel && [ ! -e /dev/timerwheel ]; then
	ktap_test_pass "rmmod removes the module and /dev/timerwheel"
else
	ktap_test_fail "rmmod removes the module and /dev/timerwheel"
fi

# 7. A second load and unload after the first works (no state left behind).
if insmod "$KO" tick_us=500 && [ -c /dev/timerwheel ] && rmmod rust_timerwheel; then
	ktap_test_pass "reload with tick_us=500"
else
	ktap_test_fail "reload with tick_us=500"
fi

ktap_finished
