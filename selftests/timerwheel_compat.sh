#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# kselftest for rust_timerwheel's 32-bit ABI: timerwheel_test, built as a 32-bit program
# (timerwheel_test_32), run whole. Its ioctls reach the module through the compat path
# (compat_ptr_ioctl), its records come through read(2) of a 32-bit process. KTAP output (the
# harness's); exit 4 (skip) when no 32-bit build was made or the kernel runs no 32-bit program.
#
#   selftests/timerwheel_compat.sh [--help | HARNESS-OPTIONS...]
#       (HARNESS-OPTIONS as timerwheel_test takes them: -l, -t NAME, -f FIXTURE, -v VARIANT)
#
# Run by `make run_tests` after the harness tests, with the module loaded.
DIR="$(dirname "$(readlink -f "$0")")"
case "${1:-}" in
-h | --help)
	sed -n '4,12s/^# \{0,1\}//p' "$0"
	exit 0
	;;
esac
PROG=$DIR/timerwheel_test_32

if [ ! -x "$PROG" ]; then
	echo "1..0 # SKIP no 32-bit build of timerwheel_test (no gcc -m32 -static: gcc-multilib)"
	exit 4
fi
# A kernel without IA32 emulation (or booted with ia32_emulation=0) cannot execute it: the
# shell reports ENOEXEC as 126.
"$PROG" -l >/dev/null 2>&1
if [ $? = 126 ]; then
	echo "1..0 # SKIP this kernel runs no 32-bit program (CONFIG_IA32_EMULATION)"
	exit 4
fi
exec "$PROG" "$@"
