#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fail if a guest's kernel log shows a checker report.
#
#   scripts/check-dmesg.sh DMESG [KMEMLEAK]
#
# Looks for KASAN reports, lockdep splats, WARNINGs, BUGs (incl. sleeping in atomic context),
# Oopses, panics, hung tasks, RCU stalls, failed KUnit cases, and (in DMESG or in the contents
# of /sys/kernel/debug/kmemleak saved as KMEMLEAK) kmemleak reports. Prints what it found.
set -uo pipefail

[ $# -ge 1 ] && [ "$1" != -h ] && [ "$1" != --help ] || {
	sed -n '3,10p' "$0" | sed 's/^# \{0,1\}//'
	[ $# -ge 1 ]
	exit $?
}
dmesg=$1
leaks=${2:-}
[ -f "$dmesg" ] || {
	echo "check-dmesg: no kernel log at $dmesg" >&2
	exit 1
}

patterns=(
	'BUG: '                                 # KASAN ("BUG: KASAN:"), sleeping in atomic, NULL deref
	'WARNING: '                             # WARN_ON and every lockdep splat
	'kernel BUG at'
	'Oops'
	'general protection fault'
	'Kernel panic'
	'INFO: task .* blocked for more than'
	'rcu: INFO: .* detected stalls'
	'unreferenced object 0x'                # kmemleak
	'UBSAN: '
	'^[[:space:]]*# .*: not ok '            # a failed KUnit case (nested KTAP in dmesg)
	'^[[:space:]]*not ok [0-9]'
)
re=$(IFS='|'; echo "${patterns[*]}")
found=0
hits=$(sed 's/^\[[ 0-9.]*\] //' "$dmesg" | grep -E -n "$re" | head -n 20)
if [ -n "$hits" ]; then
	echo "check-dmesg: the guest kernel log has reports:" >&2
	echo "$hits" >&2
	found=1
fi
if [ -n "$leaks" ] && [ -s "$leaks" ]; then
	echo "check-dmesg: kmemleak reports unreferenced objects:" >&2
	head -n 30 "$leaks" >&2
	found=1
fi
[ "$found" = 0 ] && echo "check-dmesg: clean ($(wc -l <"$dmesg") lines: no KASAN, lockdep, WARNING, BUG, Oops or kmemleak report)" >&2
exit "$found"
