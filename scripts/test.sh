#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run every test of rust_timerwheel, from a fresh clone on a Debian 12 machine (as root).
#
#   scripts/test.sh [--help]
#
# Steps, each timed:
#   setup     scripts/setup.sh: the pinned toolchain, QEMU, virtme-ng, the kernel source
#   wheel     cargo fmt --check, clippy and `cargo test` of the kernel-free algorithms
#   kernel    scripts/build-kernel.sh debug (cached; ~12 min from scratch)
#   module    make CLIPPY=1 against the debug kernel: must build with no warning
#   vm        in a virtme-ng guest on the debug kernel (KASAN, lockdep, kmemleak): the
#             kselftest selftests/timerwheel.sh (module lifecycle + KUnit + ioctl tests), then a
#             scan of the guest's dmesg for any checker report
#
# Ends with a line "N passed, N failed" over the steps; exit status 0 only if all passed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

case "${1:-}" in
-h | --help)
	sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'
	exit 0
	;;
"") ;;
*)
	log "unknown argument '$1' (see --help)"
	exit 2
	;;
esac

passed=0
failed=0
results=()
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
		results+=("ok   $name (${dt}s)")
	else
		failed=$((failed + 1))
		results+=("FAIL $name (${dt}s, exit $rc)")
	fi
	return "$rc"
}

wheel_tests() {
	(cd "$TW_TOP/wheel" &&
		cargo fmt --check &&
		cargo clippy --quiet --all-targets -- -D warnings &&
		cargo test --quiet)
}

# The module must build warning-free (the kernel's own lints plus clippy).
module_build() {
	local kdir out
	kdir=$("$here/build-kernel.sh" --print-dir debug) || return 1
	make -s -C "$TW_TOP" KDIR="$kdir" clean >/dev/null 2>&1
	out=$(make -C "$TW_TOP" KDIR="$kdir" CLIPPY=1 2>&1)
	local rc=$?
	printf '%s\n' "$out"
	[ "$rc" = 0 ] || return "$rc"
	if grep -qE '^(warning|error)(\[|:)' <<<"$out"; then
		log "the module build printed warnings"
		return 1
	fi
	make -s -C "$TW_TOP/selftests" KSFT_DIR="$TW_CACHE/src/$(basename "$(ls /usr/src/linux-source-*.tar.xz | sort -V | tail -n 1)" .tar.xz)/tools/testing/selftests"
}

vm_tests() {
	local ksft
	ksft=$(ls -d "$TW_CACHE"/src/linux-source-*/tools/testing/selftests | sort -V | tail -n 1)
	"$here/vm-run.sh" --kernel debug --timeout 1500 --out "$TW_TOP/results/vm-test" -- \
		env KSFT_DIR="$ksft" selftests/timerwheel.sh
}

if [ "$(id -u)" = 0 ]; then
	step setup "$here/setup.sh" || { log "setup failed: nothing else can run"; }
else
	log "not root: skipping setup.sh (it needs apt); assuming the toolchain is installed"
fi
if [ "$failed" = 0 ]; then
	step wheel wheel_tests
	step kernel "$here/build-kernel.sh" debug &&
		step module module_build &&
		step vm vm_tests
fi

log "=== summary ($(($(date +%s) - t_all))s)"
printf '%s\n' "${results[@]}" >&2
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
