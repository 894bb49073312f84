#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fail if a guest's kernel log shows a checker report.
#
#   scripts/check-dmesg.sh DMESG [KMEMLEAK]
#
# Looks for KASAN reports, lockdep splats, WARNINGs, BUGs (incl. sleeping in atomic context),
# Oopses, panics, the lockup detectors' reports (soft lockup, hard LOCKUP, hung task, RCU
# stall), kCFI failures, hardened usercopy's, list debugging's and debug objects' reports, the
# OOM killer, failed KUnit cases, and (in DMESG or in the contents of
# /sys/kernel/debug/kmemleak saved as KMEMLEAK) kmemleak reports, and kmemleak disabling itself
# (on an internal error, such as running out of its object pool: the leaks after it would go
# unseen). Prints what it found, each line with its kind.
#
# Exit status: 0 when clean, 1 on any report or a missing log, 2 on bad usage.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

case "${1:-}" in
-h | --help)
	usage
	exit 0
	;;
"") bad_usage "no kernel log given" ;;
esac
[ $# -le 2 ] || bad_usage "too many arguments"
for arg in "$@"; do
	case "$arg" in
	-*) bad_usage "unknown option '$arg'" ;;
	esac
done
dmesg=$1
leaks=${2:-}
[ -f "$dmesg" ] || {
	echo "check-dmesg: no kernel log at $dmesg" >&2
	exit 1
}
# A scan not saved (a kernel without kmemleak) is no report; one that is not a file is an error.
if [ -n "$leaks" ] && [ -e "$leaks" ] && [ ! -f "$leaks" ]; then
	echo "check-dmesg: the kmemleak scan $leaks is not a file" >&2
	exit 1
fi

# KIND|extended regexp, matched against each line without its timestamp. The lockup detectors'
# formats are those of kernel/watchdog.c (pr_fmt "watchdog: "), kernel/hung_task.c and
# kernel/rcu/tree_stall.h, tree_exp.h (pr_fmt "rcu: ").
patterns=(
	'soft lockup|BUG: soft lockup - CPU#[0-9]+ stuck for'
	'hard lockup|Watchdog detected hard LOCKUP on cpu'
	'hard lockup|Hard LOCKUP'
	'hung task|INFO: task .* blocked.* for more than [0-9]+ seconds'
	'RCU stall|INFO: [a-z_]+ detected (expedited )?stalls'
	'RCU stall|INFO: [a-z_]+ self-detected stall on CPU'
	'RCU stall|[a-z_]+ kthread starved for [0-9]+ jiffies'
	'RCU stall|[a-z_]+ kthread timer wakeup didn.t happen'
	'KASAN|BUG: KASAN: '
	'BUG|BUG: '                                 # sleeping in atomic, NULL deref, bad page...
	'WARNING|WARNING: '                         # WARN_ON and every lockdep splat
	'BUG|kernel BUG at'
	'Oops|Oops'
	'GPF|general protection fault'
	'panic|Kernel panic'
	'Rust panic|panicked at '                   # the kernel crate's panic handler, before its BUG()
	'kmemleak|unreferenced object 0x'
	'kmemleak off|kmemleak: Kernel memory leak detector disabled' # out of its pool: no more checks
	'UBSAN|UBSAN: '
	'CFI|CFI failure at '                       # kCFI: an indirect call to a function of another type
	'usercopy|usercopy: Kernel memory (exposure|overwrite) attempt'
	'list corruption|list_[a-z_]+ corruption'   # CONFIG_DEBUG_LIST
	'ODEBUG|ODEBUG: .*object: '                 # debug objects: a timer or work freed active, say
	'OOM killer|invoked oom-killer'             # the module refuses what would take the last memory
	'KUnit|^[[:space:]]*# .*: not ok '          # a failed KUnit case (nested KTAP in dmesg)
	'KUnit|^[[:space:]]*not ok [0-9]'
)

found=0
text=$(sed 's/^\[[ 0-9.]*\] //' "$dmesg")
hits=
for p in "${patterns[@]}"; do
	kind=${p%%|*}
	re=${p#*|}
	while IFS= read -r line; do
		[ -n "$line" ] && hits+="$kind: $line"$'\n'
	done < <(grep -E -n -- "$re" <<<"$text" | head -n 5)
done
if [ -n "$hits" ]; then
	echo "check-dmesg: the guest kernel log has reports:" >&2
	printf '%s' "$hits" | sort -s -t: -k2,2n -u | head -n 30 >&2
	found=1
fi
if [ -n "$leaks" ] && [ -s "$leaks" ]; then
	echo "check-dmesg: kmemleak reports unreferenced objects:" >&2
	head -n 30 "$leaks" >&2
	found=1
fi
if [ "$found" = 0 ]; then
	# The kinds looked for, each once, in the order of the patterns.
	kinds=$(printf '%s\n' "${patterns[@]%%|*}" | awk '!seen[$0]++' | paste -sd, - | sed 's/,/, /g')
	echo "check-dmesg: clean ($(wc -l <"$dmesg") lines: no report of $kinds)" >&2
fi
exit "$found"
