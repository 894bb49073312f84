#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test of rust_timerwheel, from a fresh clone on a Debian 12 machine (as root).
#
#   scripts/test.sh [--help]
#
# Steps, each timed:
#   setup     scripts/setup.sh: the pinned toolchain, QEMU, virtme-ng, shellcheck, the kernel
#             source
#   scripts   shellcheck of every shell script; scripts/check-dmesg.sh against sample kernel
#             logs: each checker's report (KASAN, lockdep, WARNING, BUG, Oops, soft and hard
#             lockup, hung task, RCU stall, CFI, usercopy, list corruption, debug objects, OOM
#             killer, kmemleak, failed KUnit) must fail it, a clean log must pass
#   wheel     cargo fmt --check, clippy, `cargo test` (doc tests included) and `cargo doc`
#             (warnings denied) of the kernel-free algorithms
#   fig9-tool cargo fmt --check, clippy and `cargo test` of the Figure 9 tool (scripts/fig9),
#             and its uapi-check-test.sh (the build must fail when the header and its Rust
#             twin, or the header and the module's ioctl requests, differ)
#   kernel    scripts/build-kernel.sh debug and perf (cached; 8-25 min each from scratch on 2
#             cores), at most one of them from scratch in a run, so that a run on a new machine
#             fits in CI's time: the debug kernel, which the guest boots, always; the perf
#             kernel once the debug kernel was in the cache when the run began (scripts/run.sh
#             builds it too)
#   module    rustfmt --check of the glue with the kernel's .rustfmt.toml; rust_timerwheel.ko
#             with CLIPPY=1 against the debug kernel and against the perf kernel (into the
#             cache): any warning (rustc, clippy, objtool, modpost) fails the step; the build
#             against the perf kernel, when it is not in the cache, is skipped, and the summary
#             says so; the build for benchmarks under TCG (TW_ALIGN_FUNCTIONS=1) against the
#             debug kernel, every function of it on a 4 KiB boundary; the selftests built with
#             the kernel's kselftest lib.mk
#   vm        in a virtme-ng guest on the debug kernel (KASAN with vmalloc, lockdep, kmemleak, debug
#             objects on timers, works and frees, lockup and stall detectors, vmap stacks, kCFI,
#             hardened usercopy, list, preemption and irq-flag debugging, memory cgroups, fault
#             injection, Rust's overflow checks and debug assertions): insmod, `make -C selftests
#             run_tests` (timerwheel_test, timerwheel_citizen, timerwheel_faults,
#             timerwheel_compat.sh: timerwheel_test as a 32-bit program, then timerwheel.sh:
#             load, KUnit, unload): each program's top-level KTAP result ok and not "# SKIP",
#             its Totals line present with fail:0 error:0, and no test skipped but for the
#             machine's speed (every skip printed with its reason; see check_ktap); then the
#             scan of the guest's dmesg for any checker report
#   fig9      the Figure 9 benchmark as a smoke test: scripts/run.sh --quick on the debug kernel,
#             then a check of what the tool reports: every curve it measured has positive
#             costs, every point it did not measure says why (fig9.csv, tick.csv, memory.csv,
#             wakeups.csv), the key points (schemes 6, 7 and Linux at n = 1000) are measured,
#             scheme 7's against Linux's timer_list and hrtimer in pairs too
#             (TW_IOC_BENCH_PAIR), and the figures parse and name in their legends the curves
#             measured (no timing is asserted)
#
# A step whose prerequisite failed (every step after a failed setup; module after kernel, vm and
# fig9 after module) is not run, and is listed and counted as failed: "not run: PREREQ failed".
#
# Ends with a line "N passed, N failed" over the steps, after the checks skipped within them, if
# any; exit status 0 only if all passed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

no_arguments "$@"

passed=0
failed=0
results=()
skipped=() # checks a step skipped, with the reason
declare -A outcome=() # step name -> ok or FAIL
t_all=$(date +%s)

# step NAME COMMAND...: runs COMMAND, records pass/fail and its time.
step() {
	local name=$1 t0 rc
	shift
	log "=== $name"
	t0=$(date +%s)
	"$@"
	rc=$?
	local dt=$(($(date +%s) - t0))
	if [ "$rc" = 0 ]; then
		passed=$((passed + 1))
		outcome[$name]=ok
		results+=("ok   $name (${dt}s)")
	else
		failed=$((failed + 1))
		outcome[$name]=FAIL
		results+=("FAIL $name (${dt}s, exit $rc)")
	fi
	return "$rc"
}

# after PREREQ NAME COMMAND...: step NAME COMMAND..., unless the step PREREQ failed (or was not
# run, itself for want of its own): then NAME is not run, and recorded and counted as failed,
# "not run: PREREQ failed". A PREREQ never attempted (setup, when not root) does not hold it back.
after() {
	local prereq=$1 name=$2
	shift
	if [ "${outcome[$prereq]:-}" = FAIL ]; then
		log "=== $name: not run: $prereq failed"
		failed=$((failed + 1))
		outcome[$name]=FAIL
		results+=("FAIL $name (not run: $prereq failed)")
		return 1
	fi
	step "$@"
}

# ---- scripts --------------------------------------------------------------------------------

shell_scripts() {
	(cd "$TW_TOP" && shellcheck -x scripts/*.sh scripts/*/*.sh selftests/*.sh .ci/run)
}

# Lines as the kernel prints them (kernel/watchdog.c, kernel/hung_task.c, kernel/rcu/
# tree_stall.h and tree_exp.h, KASAN, lockdep, kernel/cfi.c, mm/usercopy.c, lib/list_debug.c,
# lib/debugobjects.c, mm/oom_kill.c, kmemleak, KUnit), each of which must fail check-dmesg.sh;
# and lines of a clean boot that must not.
dmesg_reports=(
	'watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [timerwheel_cit:345]'
	'watchdog: CPU0: Watchdog detected hard LOCKUP on cpu 1'
	'Kernel panic - not syncing: Hard LOCKUP'
	'INFO: task kworker/u4:2:57 blocked for more than 20 seconds.'
	'INFO: task timerwheel_test:301 blocked in I/O wait for more than 20 seconds.'
	'rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'
	'rcu: INFO: rcu_sched self-detected stall on CPU'
	'rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: { 1-... } 21003 jiffies s: 85 root: 0x2/.'
	'rcu: rcu_preempt kthread starved for 10499 jiffies! g1337 f0x0 RCU_GP_WAIT_FQS(5) ->state=0x0 ->cpu=1'
	'BUG: KASAN: slab-use-after-free in rust_timerwheel::ring::push+0x42/0x80 [rust_timerwheel]'
	'WARNING: possible circular locking dependency detected'
	'WARNING: CPU: 1 PID: 301 at kernel/time/hrtimer.c:1277 hrtimer_start_range_ns+0x1/0x2'
	'BUG: sleeping function called from invalid context at kernel/locking/mutex.c:580'
	'Oops: general protection fault, probably for non-canonical address 0xdffffc0000000000: 0000 [#1] SMP KASAN'
	'rust_kernel: panicked at glue/state.rs:72:38:'
	'CFI failure at hrtimer_run_softirq+0x1a/0x40 (target: rust_timerwheel::clock::run+0x0/0x2c0 [rust_timerwheel]; expected type: 0x4a9f1d2e)'
	"usercopy: Kernel memory exposure attempt detected from SLUB object 'kmalloc-64' (offset 0, size 128)!"
	'list_del corruption. prev->next should be ffff888012345678, but was ffff888087654321. (prev=ffff888011111111)'
	'ODEBUG: free active (active state 0) object: ffff888012345678 object type: hrtimer hint: 0x0'
	'ODEBUG: Out of memory. ODEBUG disabled'
	'timerwheel_citi invoked oom-killer: gfp_mask=0x402cc2(GFP_KERNEL_ACCOUNT|__GFP_HIGHMEM|__GFP_NOWARN), order=0, oom_score_adj=0'
	'unreferenced object 0xffff888012345678 (size 64):'
	'kmemleak: Kernel memory leak detector disabled'
	'    not ok 3 ring_drops_are_counted'
	'    # rust_timerwheel: not ok 2 instance_tests'
)
dmesg_clean=(
	'Linux version 7.3.4 (root@host) (Debian clang version 19.1.7) #1 SMP PREEMPT_DYNAMIC'
	'rcu: Hierarchical RCU implementation.'
	'rcu: 	RCU CPU stall warnings timeout set to 20 (rcu_cpu_stall_timeout).'
	'watchdog: CPU1: Enabled buddy hardlockup detector'
	'    ok 1 ring_drops_are_counted'
	'    # rust_timerwheel: pass:12 fail:0 skip:0 total:12'
	'# Totals: pass:12 fail:0 skip:0'
	'rust_timerwheel: loaded, /dev/timerwheel'
)

# A log of the clean lines with timestamps, and LINE (if any) among them.
sample_log() {
	local i=0 line
	for line in "${dmesg_clean[@]}"; do
		i=$((i + 1))
		printf '[%5d.%06d] %s\n' "$i" "$((i * 1237 % 1000000))" "$line"
		[ "$i" = 4 ] && [ $# -gt 0 ] && printf '[%5d.%06d] %s\n' "$i" 999999 "$1"
	done
}

check_dmesg_selftest() {
	local tmp line bad=0
	tmp=$(mktemp -d)
	sample_log >"$tmp/clean.txt"
	if ! "$here/check-dmesg.sh" "$tmp/clean.txt" 2>"$tmp/err"; then
		log "check-dmesg.sh fails a clean log:"
		cat "$tmp/err" >&2
		bad=1
	fi
	for line in "${dmesg_reports[@]}"; do
		sample_log "$line" >"$tmp/report.txt"
		if "$here/check-dmesg.sh" "$tmp/report.txt" 2>/dev/null; then
			log "check-dmesg.sh misses: $line"
			bad=1
		fi
	done
	# kmemleak's own file, and a missing log.
	printf 'unreferenced object 0xffff8880 (size 32):\n  comm "insmod", pid 1\n' >"$tmp/leaks.txt"
	"$here/check-dmesg.sh" "$tmp/clean.txt" "$tmp/leaks.txt" 2>/dev/null && {
		log "check-dmesg.sh misses a kmemleak report file"
		bad=1
	}
	"$here/check-dmesg.sh" "$tmp/none.txt" 2>/dev/null && {
		log "check-dmesg.sh passes a missing log"
		bad=1
	}
	rm -rf "$tmp"
	[ "$bad" = 0 ] && log "check-dmesg.sh: catches ${#dmesg_reports[@]} sample reports and a kmemleak file, passes a clean log"
	return "$bad"
}

scripts_tests() {
	local rc=0
	shell_scripts || rc=1
	check_dmesg_selftest || rc=1
	return "$rc"
}

# ---- host tests -------------------------------------------------------------------------------

wheel_tests() {
	(cd "$TW_TOP/wheel" &&
		cargo fmt --check &&
		cargo clippy --quiet --all-targets -- -D warnings &&
		cargo test --quiet &&
		RUSTDOCFLAGS='-D warnings' cargo doc --quiet --no-deps)
}

fig9_tool_tests() {
	(cd "$TW_TOP/scripts/fig9" &&
		export CARGO_TARGET_DIR=$TW_CACHE/target-fig9 &&
		cargo fmt --check &&
		cargo clippy --quiet --all-targets -- -D warnings &&
		cargo test --quiet &&
		./uapi-check-test.sh)
}

# ---- kernels and module ----------------------------------------------------------------------

# Both kernels, but at most one from scratch: a new machine builds the debug kernel alone (the
# two took 47 minutes of a 90-minute run on one), and the perf kernel comes with the next run.
kernels() {
	if ! "$here/build-kernel.sh" --cached debug; then
		"$here/build-kernel.sh" debug || return 1
		"$here/build-kernel.sh" --cached perf ||
			log "the perf kernel waits for the next run: this one built the debug kernel"
		return 0
	fi
	"$here/build-kernel.sh" debug && "$here/build-kernel.sh" perf
}

# module_against FLAVOUR: rust_timerwheel.ko with CLIPPY=1 against that kernel, warning-free:
# rustc and clippy ("warning:"), objtool ("x.o: warning: objtool: ..."), modpost ("WARNING:").
module_against() {
	local flavour=$1 out rc
	out=$(build_module "$flavour" CLIPPY=1 2>&1)
	rc=$?
	printf '%s\n' "$out" >&2
	[ "$rc" = 0 ] || return "$rc"
	if grep -qiE '(^|[[:space:]:])(warning|error)(\[[^]]*\])?:' <<<"$out"; then
		log "the module build against the $flavour kernel printed warnings"
		return 1
	fi
	log "rust_timerwheel.ko against the $flavour kernel: no warning"
}

# The build for benchmarks under TCG (make TW_ALIGN_FUNCTIONS=1, scripts/run.sh
# --align-functions), against the debug kernel into a directory of its own: every function of the
# module's Rust (symbols _R...) on a 4 KiB boundary.
aligned_build() {
	local mo funcs off
	mo=$(TW_MODULE_DIR=$TW_CACHE/module-debug-aligned build_module debug TW_ALIGN_FUNCTIONS=1) || return 1
	# The kernel build's own nm (LLVM=-19, from setup.sh's llvm-19), not binutils'.
	funcs=$(llvm-nm-19 "$mo/rust_timerwheel.ko" | awk '$2 ~ /^[tT]$/ && $3 ~ /^_R/' | wc -l)
	off=$(llvm-nm-19 "$mo/rust_timerwheel.ko" | awk '$2 ~ /^[tT]$/ && $3 ~ /^_R/ && $1 !~ /000$/')
	if [ "$funcs" = 0 ] || [ -n "$off" ]; then
		log "TW_ALIGN_FUNCTIONS=1: $funcs functions, these off a 4 KiB boundary:"
		printf '%s\n' "$off" | head -20 >&2
		return 1
	fi
	log "TW_ALIGN_FUNCTIONS=1: all $funcs functions on a 4 KiB boundary"
}

# The module must be formatted as the kernel formats Rust and build warning-free against both
# kernels; the selftests build with the kernel's lib.mk.
module_build() {
	rustfmt --edition 2021 --config-path "$(kernel_src)/.rustfmt.toml" --check "$TW_TOP/rust_timerwheel.rs" || return 1
	aligned_build || return 1
	module_against debug || return 1
	if "$here/build-kernel.sh" --cached perf; then
		module_against perf || return 1
	else
		skipped+=("skip module: rust_timerwheel.ko against the perf kernel (not in the cache yet)")
		log "${skipped[-1]}"
	fi
	make -s -C "$TW_TOP/selftests" KDIR_SRC="$(kernel_src)"
}

# ---- the guest -------------------------------------------------------------------------------

# The test programs `make run_tests` runs (selftests/Makefile), in order.
ktap_programs=(timerwheel_test timerwheel_citizen timerwheel_faults timerwheel_compat.sh timerwheel.sh)

# Skips allowed in the vm step: those that depend on the machine's speed, never on a missing
# feature. A test must not depend on how fast the machine is, so a fast (KVM) or a stalled guest
# may skip these; every other SKIP( of selftests/*.c (no TW_FEATURE_TICKLESS, _POLL or _RANGE,
# /dev/timerwheel missing...) and of timerwheel.sh means a feature missing from the project's
# own test kernel, and fails. An
# extended regex matched against the skip's line, whose reason it holds:
#   "not slow enough"            citizen: SKIP_IF_UNSIGNALLED (the ioctl ended before the
#                                signal, or the signal came before it began), the reset, batch
#                                or ADVANCE that ended before a signal could be sent, a read or
#                                CONFIGURE during which the flooder sent no signal, a call that
#                                ended before a stop, or the freeze of its cgroup, came while it
#                                ran;
#                                timerwheel_test: 2^20 ticks advanced before a signal could be
#                                sent
#   "the guest stalled"          citizen: a stall of 500 ms between a set and its unset, a tick
#                                passing during each of ten batches of 49 sets, callouts that
#                                may have come due meanwhile, a watchdog that had to end a long
#                                call; timerwheel_test: the real clock lagging more than half
#                                scheme 4's wheel
ktap_speed_skips='not slow enough|the guest stalled'

# check_ktap OUTPUT: the KTAP of `make run_tests`. Each program of ktap_programs must have a
# top-level result "ok N selftests: DIR: PROG" without a directive (the runner counts a program
# that exits 4 as ok, "# SKIP"), and a "Totals" line with fail:0 and error:0 (the harness counts
# a skipped test as passed, and its program as ok, even if every test skipped). Every skipped
# test is printed with its reason; only those matching ktap_speed_skips pass, and their number
# must be the Totals' skip count. No other top-level result may appear.
check_ktap() {
	local output=$1 prog block top totals skips line n_skip bad=0
	if [ ! -s "$output" ]; then
		log "no kselftest output in $output"
		return 1
	fi
	grep -E '^(not )?ok [0-9]+ selftests: ' "$output" >&2
	if [ "$(grep -cE '^(not )?ok [0-9]+ selftests: ' "$output")" != "${#ktap_programs[@]}" ]; then
		log "expected ${#ktap_programs[@]} kselftest results (${ktap_programs[*]})," \
			"got $(grep -cE '^(not )?ok [0-9]+ selftests: ' "$output")"
		bad=1
	fi
	for prog in "${ktap_programs[@]}"; do
		# PROG's lines: from the runner's "# selftests: DIR: PROG" to its top-level result.
		block=$(awk -v p=": $prog" '
			!on && /^# selftests: / && substr($0, length($0) - length(p) + 1) == p { on = 1 }
			on { print }
			on && /^(not )?ok [0-9]+ selftests: / { exit }' "$output")
		top=$(grep -E '^(not )?ok [0-9]+ selftests: ' <<<"$block")
		totals=$(grep -E '^# # Totals: ' <<<"$block" | tail -n 1)
		skips=$(grep -E '^# [^#].*# SKIP' <<<"$block")
		[ -n "$totals" ] && printf '%s: %s\n' "$prog" "${totals#\# \# }" >&2
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			if grep -qE "$ktap_speed_skips" <<<"$line"; then
				log "$prog: allowed skip (depends on the machine's speed): ${line#\# }"
			else
				log "$prog: skip not allowed (a missing feature?): ${line#\# }"
				bad=1
			fi
		done <<<"$skips"
		if [ -z "$top" ]; then
			log "$prog: no top-level result"
			bad=1
		elif ! grep -qE "^ok [0-9]+ selftests: .*: ${prog//./\\.}\$" <<<"$top"; then
			log "$prog: not passed: $top"
			bad=1
		fi
		if [ -z "$totals" ]; then
			log "$prog: no '# Totals:' line"
			bad=1
			continue
		fi
		if ! grep -qE ' fail:0 .* error:0$' <<<"$totals"; then
			log "$prog: failures or errors: ${totals#\# \# }"
			bad=1
		fi
		n_skip=$(grep -cE '^# ok [0-9]+ .*# SKIP' <<<"$block")
		if ! grep -qE " skip:$n_skip " <<<"$totals"; then
			log "$prog: $n_skip skipped tests found, but ${totals#\# \# }"
			bad=1
		fi
	done
	[ "$bad" = 0 ] && log "kselftests: ${#ktap_programs[@]} programs ok, no failure, no skip but for speed"
	return "$bad"
}

vm_tests() {
	local out=$TW_TOP/results/vm-test ko=$TW_CACHE/module-debug/rust_timerwheel.ko rc
	# shellcheck disable=SC2016 # expanded by the guest's bash
	"$here/vm-run.sh" --kernel debug --timeout 3600 --out "$out" -- \
		bash -c 'insmod "$1" || exit 1
			make -s -C selftests run_tests KDIR_SRC="$2" KSELFTEST_TIMERWHEEL_SH_ARGS="$1"
			rc=$?
			if grep -q "^rust_timerwheel " /proc/modules; then rmmod rust_timerwheel; fi
			exit $rc' _ "$ko" "$(kernel_src)"
	rc=$?
	check_ktap "$out/output.txt" || rc=1
	return "$rc"
}

# ---- fig9 ------------------------------------------------------------------------------------

# The smoke run of the main job. What is checked is what the tool reports: every row either has
# a positive cost or a note saying why it has none, every curve has at least one measured point,
# and the points the README's comparison rests on (schemes 6 and 7, Linux's timer_list and
# hrtimer, in-kernel, at n = 1000) are measured whatever the time budget stopped, scheme 7's
# against Linux's timer_list and hrtimer in pairs too (TW_IOC_BENCH_PAIR). Timings are not
# judged.
fig9_smoke() {
	local out=$TW_TOP/results/fig9-smoke
	rm -rf "$out"
	"$here/run.sh" --quick --kernel debug --out "$out" || return 1
	python3 - "$out" <<'PY'
import csv, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/fig9.csv")))
need = {"curve", "interface", "measure", "n", "ns_per_op", "iterations", "note"}
assert rows and need <= set(rows[0]), f"fig9.csv columns: {list(rows[0]) if rows else None}"
curves = sorted({r["curve"] for r in rows})
measured = {}
for r in rows:
    if r["ns_per_op"]:
        assert float(r["ns_per_op"]) > 0, f"not a positive cost: {r}"
        measured.setdefault(r["curve"], set()).add((r["measure"], int(r["n"])))
    else:
        assert r["note"].strip(), f"a point neither measured nor noted: {r}"
        assert not r["note"].startswith("error"), f"the tool reports an error: {r}"
unmeasured = [c for c in curves if c not in measured]
assert not unmeasured, f"curves the tool reports but never measured: {unmeasured}"
key = [c for c in curves if c.startswith(("scheme6-", "scheme7-", "linux-"))]
for prefix in ("scheme6-", "scheme7-", "linux-timer_list", "linux-hrtimer"):
    assert any(c.startswith(prefix) for c in key), f"no {prefix}* curve in fig9.csv: {curves}"
missing = [c for c in key if ("kernel", 1000) not in measured[c]]
assert not missing, f"key points not measured at n=1000 (kernel): {missing}"
pairs = {(r["curve"], r["note"]) for r in rows if r["measure"] == "pair" and r["n"] == "1000" and r["ns_per_op"]}
for ours, linux in (("scheme7-mod", "linux-timer_list-mod"), ("scheme7-setcallout", "linux-timer_list"),
                    ("scheme7-mod", "linux-hrtimer")):
    for half in ((ours, f"with {linux}"), (linux, f"with {ours}")):
        assert half in pairs, f"no TW_IOC_BENCH_PAIR row {half} at n=1000: {sorted(pairs)}"
for name in ("tick.csv", "memory.csv", "wakeups.csv"):
    for r in csv.DictReader(open(f"{out}/{name}")):
        values = [v for k, v in r.items() if k not in ("note", "repeat") and v == ""]
        assert not values or r.get("note", "").strip(), f"{name}: a row neither measured nor noted: {r}"
# The rows the README's tables of them rest on are there, and measured: the cost of a tick of
# schemes 6 and 7 with 1,000 callouts, their bytes a callout and Linux's at n = 1000, and their
# wakeups a second, tickless, idle and with callouts pending.
def measured_rows(name, key, value):
    return {key(r) for r in csv.DictReader(open(f"{out}/{name}")) if r[value]}
tick = measured_rows("tick.csv", lambda r: (r["curve"], r["n"]), "ns_per_tick")
memory = measured_rows("memory.csv", lambda r: (r["curve"], r["n"]), "bytes_per_callout")
wakeups = measured_rows("wakeups.csv", lambda r: (r["scheme"], r["clock"], r["load"]), "wakeups_per_s")
for want, got, name in (
        ({("scheme6", "1000"), ("scheme7", "1000")}, tick, "tick.csv"),
        ({(c, "1000") for c in ("scheme6-setcallout", "scheme7-setcallout", "linux-timer_list")}, memory, "memory.csv"),
        ({(s, "tickless", l) for s in ("6", "7") for l in ("idle", "one", "many")}, wakeups, "wakeups.csv")):
    assert want <= got, f"{name}: rows not measured: {sorted(want - got)}"
# Each figure names in its legend every curve measured for it (the axes are polylines too: a
# chart without a curve has some).
tick_curves = {c for c, _ in tick}
for svg, want in (("fig9.svg", {c for c, ms in measured.items() if any(m == "kernel" for m, _ in ms)}),
                  ("fig9-ioctl.svg", {c for c, ms in measured.items() if any(m == "ioctl" for m, _ in ms)}),
                  ("tick.svg", tick_curves)):
    root = ET.parse(f"{out}/{svg}").getroot()
    lines = root.findall(".//{http://www.w3.org/2000/svg}polyline")
    assert root.tag.endswith("svg") and lines, f"{svg}: no curves"
    texts = {(t.text or "").strip() for t in root.iter("{http://www.w3.org/2000/svg}text")}
    assert want and want <= texts, f"{svg}: curves measured but not in its legend: {sorted(want - texts)}"
stopped = sum(1 for r in rows if not r["ns_per_op"])
print(f"fig9 smoke: {len(rows)} rows, {len(curves)} curves all measured, "
      f"{stopped} points noted unmeasured, key points of {len(key)} curves at n=1000 "
      f"({len(pairs)} halves of pairs), 3 figures parse and name their curves; tick, memory and wakeup rows "
      f"of schemes 6 and 7 measured")
PY
}

if [ "$(id -u)" = 0 ]; then
	step setup "$here/setup.sh"
else
	log "not root: skipping setup.sh (it needs apt); assuming the toolchain is installed"
fi
# Each step after the one it needs: one not run for that reason is listed and counted as failed.
after setup scripts scripts_tests
after setup wheel wheel_tests
after setup fig9-tool fig9_tool_tests
after setup kernel kernels
after kernel module module_build
after module vm vm_tests
after module fig9 fig9_smoke

log "=== summary ($(($(date +%s) - t_all))s)"
printf '%s\n' "${results[@]}" "${skipped[@]}" >&2
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
