#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kselftest for rust_timerwheel's load and unload: insmod, the KUnit suite it runs, modinfo, an
# open file holding the module, rmmod, loads at the bounds of both parameters (with the harness
# tests that depend on them), a reload. KTAP output; exit 4 (skip) when it cannot run.
#
#   selftests/timerwheel.sh [--help | MODULE.ko]
#       (MODULE.ko by default: ../rust_timerwheel.ko beside this folder)
#
# Run by `make run_tests` after the harness tests (which need the module loaded), with the
# module as KSELFTEST_TIMERWHEEL_SH_ARGS. If the module is loaded when it starts, it first
# unloads it (which also proves the tests before it left no file open) and loads it again at
# the end: it leaves the module as it found it.
#
# KSFT_DIR: a kernel tree's tools/testing/selftests, for ktap_helpers.sh (default: the runner's
# BASE_DIR, then ../ beside this folder as in a kernel tree).
DIR="$(dirname "$(readlink -f "$0")")"
case "${1:-}" in
-h | --help)
	sed -n '4,17s/^# \{0,1\}//p' "$0"
	exit 0
	;;
esac
KO=${1:-$DIR/../rust_timerwheel.ko}

KTAP_HELPERS="${KSFT_DIR:-${BASE_DIR:-$DIR/..}}/kselftest/ktap_helpers.sh"
if [ -e "$KTAP_HELPERS" ]; then
	# shellcheck source=/dev/null
	source "$KTAP_HELPERS"
else
	echo "1..0 # SKIP $KTAP_HELPERS not found (set KSFT_DIR)"
	exit 4
fi

loaded() {
	grep -q '^rust_timerwheel ' /proc/modules
}

# Runs the harness program $1 with -t for each test named after it, printing its output; true
# only if it exits 0, every test named ran (in some fixture or variant) and passed, and none was
# skipped (the harness runs nothing for a name that matches no test, and exits 0 on a skip too);
# status 4 (KSFT_SKIP) if one was skipped, 1 otherwise.
run_named() {
	local prog=$1 name out rc args=()
	shift
	for name; do
		args+=(-t "$name")
	done
	out=$("$DIR/$prog" "${args[@]}" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	[ "$rc" = 0 ] || return 1
	if grep -q ' # SKIP' <<<"$out"; then
		echo "# $prog: a test was skipped"
		return 4
	fi
	for name; do
		if ! grep -Eq "^ok [0-9]+ [^ ]*\\.$name( #  .*)?\$" <<<"$out"; then
			echo "# $prog: no test $name passed (none ran?)"
			return 1
		fi
	done
}

ktap_print_header
if [ "$(id -u)" != 0 ]; then
	ktap_skip_all "must be run as root"
	exit "$KSFT_SKIP"
fi
if [ ! -f "$KO" ]; then
	ktap_skip_all "no module at $KO (run make, or pass the module's path)"
	exit "$KSFT_SKIP"
fi

was_loaded=0
loaded && was_loaded=1
ktap_set_plan 11

# 1. The module loaded before us unloads: every file of the tests before is closed.
if [ "$was_loaded" = 0 ]; then
	ktap_test_skip "rmmod of the module loaded before (it was not loaded)"
elif rmmod rust_timerwheel && ! loaded; then
	ktap_test_pass "rmmod of the module loaded before"
else
	ktap_test_fail "rmmod of the module loaded before (still in use?)"
	ktap_finished
	exit "$KSFT_FAIL"
fi

# 2. insmod with a bad parameter fails cleanly and leaves nothing behind (if it has one).
if ! modinfo -F parm "$KO" | grep -q '^tick_us:'; then
	ktap_test_skip "insmod refuses a bad parameter (the module has no tick_us)"
elif ! insmod "$KO" tick_us=5 2>/dev/null && ! loaded; then
	ktap_test_pass "insmod refuses tick_us=5"
else
	rmmod rust_timerwheel 2>/dev/null
	ktap_test_fail "insmod refuses tick_us=5"
fi

# 2b. ... and a hold_work too small for a whole search for next work in one hold.
if ! insmod "$KO" hold_work=64 2>/dev/null && ! loaded; then
	ktap_test_pass "insmod refuses hold_work=64"
else
	rmmod rust_timerwheel 2>/dev/null
	ktap_test_fail "insmod refuses hold_work=64"
fi

# 3. insmod creates the device node. A mark in the kernel's log first: check 4 reads the KUnit
# lines of this load only, after it, not those an earlier load left in the log.
kunit_mark="timerwheel.sh $$: insmod at $(date +%s.%N)"
echo "<7>$kunit_mark" >/dev/kmsg
if insmod "$KO" && [ -c /dev/timerwheel ]; then
	ktap_test_pass "insmod creates /dev/timerwheel"
else
	ktap_test_fail "insmod creates /dev/timerwheel"
	ktap_finished
	exit "$KSFT_FAIL"
fi

# 4. The module's KUnit suites run at insmod (when KUnit is enabled) and pass: their result
# lines after the mark of check 3, one for each of the module's suites (a suite missing from the
# build fails too), each with no case failed and none skipped.
kunit_suites="params ring state uapi"
kunit_lines=$(dmesg | awk -v m="$kunit_mark" 'on; index($0, m) { on = 1 }' |
	grep -a '# rust_timerwheel[a-z_]*: pass:')
kunit_bad=
for suite in $kunit_suites; do
	line=$(grep -a "# rust_timerwheel_$suite: pass:" <<<"$kunit_lines" | tail -n 1)
	if [ -z "$line" ]; then
		kunit_bad="rust_timerwheel_$suite did not report"
	elif ! grep -q ' fail:0 skip:0 ' <<<"$line"; then
		kunit_bad="${line#*# }"
	fi
	[ -z "$kunit_bad" ] || break
done
if ! dmesg | grep -qaF "$kunit_mark"; then
	ktap_test_fail "KUnit suite: the mark written to /dev/kmsg is not in the kernel's log"
elif [ -z "$kunit_lines" ]; then
	ktap_test_skip "KUnit suite rust_timerwheel did not run (boot with kunit.enable=1 kunit.autorun=1)"
elif [ -z "$kunit_bad" ]; then
	ktap_test_pass "KUnit suites: $(wc -w <<<"$kunit_suites") passed, none skipped"
else
	ktap_test_fail "KUnit suite: $kunit_bad"
fi

# 5. modinfo fields.
description=$(modinfo -F description "$KO")
license=$(modinfo -F license "$KO")
if [ -n "$description" ] && [ "$license" = GPL ]; then
	ktap_test_pass "modinfo has a description and license GPL"
else
	ktap_test_fail "modinfo has a description and license GPL (got '$description', '$license')"
fi

# 6. An open file holds the module: rmmod fails, and the node stays.
exec 3<>/dev/timerwheel
if ! rmmod rust_timerwheel 2>/dev/null && loaded && [ -c /dev/timerwheel ]; then
	ktap_test_pass "rmmod refuses while a file is open"
else
	ktap_test_fail "rmmod refuses while a file is open"
fi
exec 3>&-

# 7. rmmod removes the module and its node, with no file open.
if loaded && rmmod rust_timerwheel && [ ! -e /dev/timerwheel ]; then
	ktap_test_pass "rmmod removes the module and /dev/timerwheel"
else
	ktap_test_fail "rmmod removes the module and /dev/timerwheel"
fi

# 7b. The bounds of both parameters load, and the harness tests whose work depends on them pass
# there: TW_IOC_INFO reports the tick_us loaded (a Rust module's parameters do not show in
# sysfs) and an instance that takes it ticks at that period, those that time the real clock
# name their period, and those that scale with W stay within the other limits (scheme 4's
# MaxInterval).
for params in "tick_us=100 hold_work=4096" "tick_us=1000000 hold_work=192"; do
	what="insmod $params: TW_IOC_INFO reports its tick, the tests of the real clock's period and of W pass"
	if [ ! -x "$DIR/timerwheel_test" ] || [ ! -x "$DIR/timerwheel_citizen" ]; then
		ktap_test_skip "$what (the harness tests are not built)"
		continue
	fi
	# shellcheck disable=SC2086 # two parameters
	if ! insmod "$KO" $params || [ ! -c /dev/timerwheel ]; then
		loaded && rmmod rust_timerwheel
		ktap_test_fail "$what (insmod failed)"
		continue
	fi
	tick_us=${params#tick_us=}
	tick_us=${tick_us%% *}
	out=$(TW_EXPECT_TICK_US=$tick_us run_named timerwheel_test \
		info_reports_version_schemes_limits_and_timer_sizes \
		real_clock_default_period_is_the_one_info_reports \
		real_clock_fires_1000_callouts_over_1s_never_early \
		instance_benches_time_resets_whose_placement_spans_holds &&
		run_named timerwheel_citizen poll_waits_for_the_real_clock)
	rc=$?
	if ! rmmod rust_timerwheel; then
		ktap_test_fail "$what (rmmod failed)"
	elif [ "$rc" = 0 ]; then
		ktap_test_pass "$what"
	elif [ "$rc" = 4 ]; then
		ktap_test_skip "$what ($(grep -m 1 -o ' # SKIP .*' <<<"$out" | sed 's/^ # SKIP *//'))"
	else
		printf '%s\n' "$out" | grep -E '^(not ok|# .*(Expected|Test failed|SKIP|skipped|none ran))' |
			head -n 20 | sed 's/^/# /'
		ktap_test_fail "$what"
	fi
done

# 8. A second load and unload works (no state left behind); leave it as we found it.
if insmod "$KO" && [ -c /dev/timerwheel ] && { [ "$was_loaded" = 1 ] || rmmod rust_timerwheel; }; then
	ktap_test_pass "reload"
else
	ktap_test_fail "reload"
fi

ktap_finished
