#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The uapi check of build.rs must fail the build when the header and include/uapi/timerwheel.rs
# disagree. Builds fig9 (cargo check) against changed copies of the header, through
# TW_UAPI_HEADER, and expects each to fail with the check's message; then against the header
# itself, which must pass. Nothing in the tree is changed.
#
#   scripts/fig9/uapi-check-test.sh [--help]
#
# Prints "N passed, N failed"; exits 0 only if every case behaved.
set -uo pipefail

case "${1:-}" in
-h | --help)
	sed -n '4,11s/^# \{0,1\}//p' "$0"
	exit 0
	;;
"") ;;
*)
	echo "uapi-check-test.sh: takes no arguments (--help)" >&2
	exit 2
	;;
esac

here=$(cd "$(dirname "$0")" && pwd)
header=$here/../../include/uapi/timerwheel.h
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

# check NAME EXPECT SED: the header edited by SED must fail to build with EXPECT in the output
# (EXPECT empty: the build must pass).
check() {
	local name=$1 expect=$2 edit=$3 copy=$tmp/$1.h out rc
	sed -e "$edit" "$header" >"$copy"
	if [ -n "$edit" ] && cmp -s "$copy" "$header"; then
		echo "FAIL $name: the edit changed nothing"
		failed=$((failed + 1))
		return
	fi
	out=$(TW_UAPI_HEADER=$copy cargo check --quiet --manifest-path "$here/Cargo.toml" 2>&1)
	rc=$?
	if [ -z "$expect" ] && [ "$rc" = 0 ]; then
		echo "ok   $name: builds"
		passed=$((passed + 1))
	elif [ -n "$expect" ] && [ "$rc" != 0 ] && grep -qF -- "$expect" <<<"$out"; then
		echo "ok   $name: the build fails: $(grep -m1 -F -- "$expect" <<<"$out" | sed 's/^ *//')"
		passed=$((passed + 1))
	else
		echo "FAIL $name: exit $rc, expected ${expect:-success}"
		printf '%s\n' "$out" | tail -n 20
		failed=$((failed + 1))
	fi
}

check constant "TW_MAX_BATCH: timerwheel.h and timerwheel.rs disagree" \
	's/^#define TW_MAX_BATCH 65536$/#define TW_MAX_BATCH 65535/'
check field-size "tw_batch" \
	's/^\t__u32 count;$/\t__u64 count;/'
check field-order "struct tw_reset: the header's fields" \
	'/^struct tw_reset {$/,/^};$/{s/^\t__u64 handle;$/\t__u64 TMP;/;s/^\t__u64 ticks;$/\t__u64 handle;/;s/^\t__u64 TMP;$/\t__u64 ticks;/}'
check new-constant "the header defines TW_NEW_LIMIT, the Rust twin does not" \
	's/^#define TW_MAX_BATCH 65536$/&\n#define TW_NEW_LIMIT 7/'
check new-struct "the header has struct tw_extra, the Rust twin does not" \
	's/^struct tw_info {$/struct tw_extra { __u64 x; };\n&/'
check ioctl-number "TW_IOC_BATCH (rustix's opcode): timerwheel.h and timerwheel.rs disagree" \
	's/^#define TW_IOC_BATCH _IOW(TW_IOC_MAGIC, 0x07,/#define TW_IOC_BATCH _IOW(TW_IOC_MAGIC, 0x17,/'
check ioctl-direction "TW_IOC_RESET (rustix's opcode)" \
	's/^#define TW_IOC_RESET _IOW(/#define TW_IOC_RESET _IOWR(/'
check header "" ""

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
