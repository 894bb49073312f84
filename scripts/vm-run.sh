#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a command inside a virtme-ng guest booted on the project's test kernel.
#
#   scripts/vm-run.sh [options] -- COMMAND [ARG...]
#
#   --kernel debug|perf  which cached kernel to boot (default debug; built if missing)
#   --timeout SECONDS    kill the guest after this long (default 900)
#   --boot-timeout SECONDS
#                        a guest that has not started COMMAND this long after QEMU was started
#                        is taken as hung in boot, killed and booted again, once (default 300;
#                        a boot takes 30-60 s under TCG)
#   --out DIR            where the guest's dmesg and the run's files go (default results/vm)
#   --cpus N             guest CPUs (default 2)
#   --memory SIZE        guest memory (default 3G)
#   --no-check           do not fail on a checker report in the guest's dmesg
#
# The guest sees the host's root read-only, with the repository at the same path, and runs
# COMMAND from the repository's top as root; its output also goes to DIR/output.txt as it runs.
# DIR is writable from the guest. After COMMAND, the guest runs a kmemleak scan and saves its
# dmesg as DIR/dmesg.txt, which scripts/check-dmesg.sh then scans on the host for every checker's
# report (its --help lists them; the debug kernel boots with watchdog_thresh=5).
#
# Exit status: COMMAND's, or 1 when the dmesg check fails, 124 on timeout (a second boot that
# hangs included), 2 on bad usage (before anything is built or booted).
#
# KVM is used only when a short probe boot under KVM works (the result is cached per QEMU and
# kernel); otherwise the guest runs under TCG. Set TW_ACCEL=kvm or TW_ACCEL=tcg to skip the probe.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

flavour=debug
timeout_s=900
boot_timeout_s=300
out=$TW_TOP/results/vm
cpus=2
memory=3G
check=1
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help)
		usage
		exit 0
		;;
	--kernel) value "$@"; flavour=$2; shift 2 ;;
	--timeout) value "$@"; timeout_s=$2; shift 2 ;;
	--boot-timeout) value "$@"; boot_timeout_s=$2; shift 2 ;;
	--out) value "$@"; out=$2; shift 2 ;;
	--cpus) value "$@"; cpus=$2; shift 2 ;;
	--memory) value "$@"; memory=$2; shift 2 ;;
	--no-check) check=0; shift ;;
	--) shift; break ;;
	*) bad_usage "unknown option '$1'" ;;
	esac
done
[ $# -gt 0 ] || bad_usage "no command given"
kernel_flavour "$flavour"
for v in "$timeout_s" "$boot_timeout_s"; do
	is_count "$v" || bad_usage "not a number of seconds (at most 9 digits): '$v'"
done
is_count "$cpus" || bad_usage "--cpus takes a positive number, not '$cpus'"
# As virtme-ng passes it to QEMU: MiB, or with a suffix K, M or G (virtme-ng appends an M to any
# other).
[[ $memory =~ ^[1-9][0-9]*[KMG]?$ ]] ||
	bad_usage "--memory takes a size such as 3G, 512M or 4096 (MiB), not '$memory'"
guest_safe_paths "$out"
command -v vng >/dev/null || die "virtme-ng is missing: run scripts/setup.sh"

kdir=$("$here/build-kernel.sh" --print-dir "$flavour")
mkdir -p "$out"
out=$(cd "$out" && pwd)
clean_out() {
	rm -f "$out/dmesg.txt" "$out/rc" "$out/kmemleak.txt" "$out/output.txt" "$out/started" \
		"$out/kvm-probe.txt"
}
clean_out

# Kernel command line: no5lvl, because under TCG QEMU offers LA57 and the KASAN kernel then
# reports a wild access in an interrupt taken during early boot (identify_cpu), before any
# module exists; kunit.enable/autorun, because allnoconfig leaves KUnit's defaults off and the
# module's KUnit suites must run when it is loaded.
vng_base=(vng --run "$kdir" --cpus "$cpus" --memory "$memory" --disable-microvm
	--append no5lvl --append kunit.enable=1 --append kunit.autorun=1
	--rwdir "$out" --cwd "$TW_TOP")
# The debug kernel's lockup detectors (scripts/config/debug.config). watchdog_thresh=5: a CPU
# that spins with interrupts masked is reported as a hard LOCKUP after about 5 s (the buddy
# detector: each CPU watches another, so it needs at least 2 guest CPUs), and one that does not
# schedule as a soft lockup after 2 x 5 = 10 s. The default, 10 (20 s for a soft lockup), would
# let a test that holds a CPU for 15 s pass; a smaller value would report the ordinary stalls of
# an emulated (TCG) guest under KASAN, whose timer interrupts can arrive late by a second or
# more. Hung tasks (20 s) and RCU stalls (20 s) come from the configuration; nothing here
# disables them, and a report does not panic: scripts/check-dmesg.sh fails on it afterwards.
if [ "$flavour" = debug ]; then
	vng_base+=(--append watchdog_thresh=5)
	[ "$cpus" -ge 2 ] || log "warning: with $cpus CPU the buddy hard-lockup detector has no buddy"
fi

# The guest (or the KVM probe's) runs in the background of this script: if the script is
# stopped, so is the guest. timeout runs it in a process group of its own, which a Ctrl-C at the
# terminal does not reach, and passes a TERM on to all of it.
guest_pid=
trap '[ -z "$guest_pid" ] || kill -TERM "$guest_pid" 2>/dev/null' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Decide KVM or TCG (sets mode): KVM must actually boot a guest, not just exist.
accel() {
	if [ -n "${TW_ACCEL:-}" ]; then
		mode=$TW_ACCEL
		return
	fi
	if [ ! -w /dev/kvm ]; then
		mode=tcg
		return
	fi
	local stamp probe=$out/kvm-probe.txt
	stamp=$TW_CACHE/kvm-probe-$(qemu-system-x86_64 --version | head -n 1 | tr -cd '0-9.')-$(cat "$kdir/.tw-key")
	if [ ! -f "$stamp" ]; then
		log "probing KVM with a short boot"
		timeout --kill-after=5 60 "${vng_base[@]}" --exec 'echo tw-kvm-probe-ok' </dev/null >"$probe" 2>&1 &
		guest_pid=$!
		wait "$guest_pid" || true
		guest_pid=
		if grep -q tw-kvm-probe-ok "$probe"; then
			echo kvm >"$stamp"
		else
			echo tcg >"$stamp"
		fi
		rm -f "$probe"
	fi
	mode=$(cat "$stamp")
}

accel
extra=()
[ "$mode" = kvm ] || extra=(--disable-kvm)
echo "$mode" >"$out/accel"

# The guest side: run the command, keep its status, scan for leaks, save dmesg. The script is
# written for the guest's shell, so its variables stay unexpanded here.
guest=$out/guest.sh
# shellcheck disable=SC2016
{
	echo 'set +e'
	printf ': > %q\n' "$out/started"
	printf 'cd %q\n' "$TW_TOP"
	printf '{ %s; } 2>&1 | tee %q\n' "$(printf '%q ' "$@")" "$out/output.txt"
	echo 'rc=${PIPESTATUS[0]}'
	echo 'mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug 2>/dev/null'
	echo 'if [ -w /sys/kernel/debug/kmemleak ]; then'
	echo '  sleep 6; echo scan > /sys/kernel/debug/kmemleak; echo scan > /sys/kernel/debug/kmemleak'
	printf '  cat /sys/kernel/debug/kmemleak > %q\n' "$out/kmemleak.txt"
	echo 'fi'
	printf 'dmesg > %q\n' "$out/dmesg.txt"
	printf 'echo $rc > %q\n' "$out/rc"
	echo 'exit $rc'
} >"$guest"

# One boot: the guest runs until COMMAND and the checks are done or the timeout kills it. A
# guest that never starts COMMAND (seen once in many boots of the debug kernel under TCG: no
# console output, QEMU spinning) is killed after the boot timeout; boot_rc is then 125.
boot() {
	local start pid
	log "booting the $flavour kernel under $mode ($cpus CPUs, $memory), timeout ${timeout_s}s"
	start=$(date +%s)
	# Through a pipe: QEMU opens the console it is given as a file with O_TRUNC, which would
	# empty a log file our caller redirected stdout to. timeout runs the guest in a process
	# group of its own and passes a TERM on to all of it.
	timeout --kill-after=10 "$timeout_s" "${vng_base[@]}" "${extra[@]}" --exec "bash $guest" \
		</dev/null > >(cat) 2>&1 &
	pid=$!
	guest_pid=$pid
	hung=0
	while [ ! -e "$out/started" ] && kill -0 "$pid" 2>/dev/null; do
		if [ $(($(date +%s) - start)) -ge "$boot_timeout_s" ]; then
			log "the guest has not started its command ${boot_timeout_s}s after boot began: killing it"
			hung=1
			kill -TERM "$pid" 2>/dev/null || true
			break
		fi
		sleep 1
	done
	set +e
	wait "$pid"
	boot_rc=$?
	set -e
	guest_pid=
	log "guest finished after $(($(date +%s) - start)) s"
	[ "$hung" = 0 ] || boot_rc=125
}

boot
if [ "$boot_rc" = 125 ]; then
	log "booting once more"
	clean_out
	boot
	if [ "$boot_rc" = 125 ]; then
		log "the guest hung in boot twice"
		exit 124
	fi
fi
vng_rc=$boot_rc

if [ "$vng_rc" = 124 ] || [ "$vng_rc" = 137 ]; then
	log "the guest timed out after ${timeout_s}s"
	exit 124
fi
[ -f "$out/rc" ] || die "the guest did not finish its command (vng exited $vng_rc); see the console output above"
rc=$(cat "$out/rc")
if [ "$check" = 1 ]; then
	"$here/check-dmesg.sh" "$out/dmesg.txt" "$out/kmemleak.txt" || rc=1
	# The debug kernel has kmemleak: a guest that saved no scan of it has been checked for none.
	if [ "$flavour" = debug ] && [ ! -f "$out/kmemleak.txt" ]; then
		log "the debug guest saved no kmemleak scan"
		rc=1
	fi
fi
exit "$rc"
