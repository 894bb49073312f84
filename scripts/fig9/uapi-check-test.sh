#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The uapi check of build.rs must fail the build when the header and include/uapi/timerwheel.rs
# disagree, or the header and the module's requests (glue/uapi.rs). Builds fig9 (cargo check)
# against changed copies of the header (TW_UAPI_HEADER) or of glue/uapi.rs (TW_UAPI_GLUE), and
# expects each to fail with the check's message; then against the tree's own, which must pass.
# Nothing in the tree is changed.
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
glue=$here/../../glue/uapi.rs
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

# check NAME EXPECT SED [glue]: the header (or glue/uapi.rs) edited by SED must fail to build
# with EXPECT in the output (EXPECT empty: the build must pass).
check() {
	local name=$1 expect=$2 edit=$3 file=$header var=TW_UAPI_HEADER copy out rc
	if [ "${4:-}" = glue ]; then
		file=$glue
		var=TW_UAPI_GLUE
	fi
	copy=$tmp/$name.${file##*.}
	sed -e "$edit" "$file" >"$copy"
	if [ -n "$edit" ] && cmp -s "$copy" "$file"; then
		echo "FAIL $name: the edit changed nothing"
		failed=$((failed + 1))
		return
	fi
	out=$(env "$var=$copy" cargo check --quiet --manifest-path "$here/Cargo.toml" 2>&1)
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
check module-number "TW_IOC_QUERY: timerwheel.h and the module's glue/uapi.rs disagree" \
	's/_IOWR::<tw_query>(TW_IOC_MAGIC, 0x0b)/_IOWR::<tw_query>(TW_IOC_MAGIC, 0x1b)/' glue
check module-direction "TW_IOC_ADVANCE: timerwheel.h and the module's glue/uapi.rs disagree" \
	's/_IOW::<u64>(TW_IOC_MAGIC, 0x06)/_IOR::<u64>(TW_IOC_MAGIC, 0x06)/' glue
check module-type "TW_IOC_STATS: timerwheel.h and the module's glue/uapi.rs disagree" \
	's/_IOR::<tw_stats>(TW_IOC_MAGIC, 0x08)/_IOR::<tw_info>(TW_IOC_MAGIC, 0x08)/' glue
check module-missing "the header defines TW_IOC_BENCH_PAIR, the module does not" \
	'/^pub(crate) const TW_IOC_BENCH_PAIR:/d' glue
check module-extra "the module defines TW_IOC_EXTRA, the header does not" \
	's/^pub(crate) const TW_IOC_QUERY: .*$/&\npub(crate) const TW_IOC_EXTRA: u32 = _IO(TW_IOC_MAGIC, 0x0d);/' glue
check header "" ""

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
