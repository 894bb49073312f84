#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The main job: reproduce Figure 9 of Varghese & Lauck on Linux.
#
#   scripts/run.sh [--quick] [--kernel perf|debug] [--out DIR] [--timeout SECONDS]
#                  [--budget-ms MS] [--align-functions]
#
#   --quick     a small sweep (n up to 1e4, short points): a smoke test, a few minutes
#   --kernel    which cached kernel to boot (default perf: no KASAN, lockdep or kmemleak, whose
#               instrumentation would distort the timings; debug is for smoke tests only)
#   --out DIR   where the results go (default results/fig9)
#   --timeout   bound on the guest (default 2400 s; --quick: 900 s)
#   --budget-ms time allowed per point before an O(n) curve stops (default 10000; --quick: 500)
#   --align-functions
#               build the module with every function on a 4 KiB boundary (make
#               TW_ALIGN_FUNCTIONS=1): under TCG a jump across a page is not chained, so the same
#               code costs up to 1.5x more where the linker happens to split it across two
#               (doc/fig9-runs.md); aligned, a function shorter than a page keeps its cost
#               whatever changes elsewhere in the module
#
# The options are checked before anything is built: bad usage exits 2.
#
# Steps: the setup (as root), the kernel (cached after the first run), rust_timerwheel.ko built
# against it (into the cache, not the tree), the fig9 tool; then, in a virtme-ng guest, insmod
# and `fig9 run`. Results: DIR/fig9.csv, tick.csv, memory.csv, wakeups.csv, results.md, fig9.svg
# (in-kernel cost per reset), fig9-ioctl.svg (per ioctl from user space), tick.svg; the summary
# the paper's claims are checked against is printed at the end and saved as DIR/summary.txt. A
# run that fails (a point's error, the guest's dmesg) leaves what it wrote and no summary.txt,
# not the summary of an earlier run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

quick=()
align=()
flavour=perf
out=$TW_TOP/results/fig9
timeout_s=
budget=
while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help)
		usage
		exit 0
		;;
	--quick) quick=(--quick); shift ;;
	--kernel) value "$@"; flavour=$2; shift 2 ;;
	--out) value "$@"; out=$2; shift 2 ;;
	--timeout) value "$@"; timeout_s=$2; shift 2 ;;
	--budget-ms) value "$@"; budget=$2; shift 2 ;;
	--align-functions) align=(TW_ALIGN_FUNCTIONS=1); shift ;;
	*) bad_usage "unknown option '$1'" ;;
	esac
done
kernel_flavour "$flavour"
[ -z "$timeout_s" ] || is_count "$timeout_s" ||
	bad_usage "--timeout takes a positive number of seconds (at most 9 digits), not '$timeout_s'"
[ -z "$budget" ] || is_count "$budget" ||
	bad_usage "--budget-ms takes a positive number of milliseconds (at most 9 digits), not '$budget'"
# Paths virtme-ng would split or expand are refused now, not after the builds.
guest_safe_paths "$out"
[ -n "$timeout_s" ] || timeout_s=$([ ${#quick[@]} -gt 0 ] && echo 900 || echo 2400)
[ -n "$budget" ] || budget=$([ ${#quick[@]} -gt 0 ] && echo 500 || echo 10000)
mkdir -p "$out"
out=$(cd "$out" && pwd)

t0=$(date +%s)
if [ "$(id -u)" = 0 ]; then
	"$here/setup.sh"
else
	log "not root: skipping setup.sh (it needs apt); assuming the toolchain is installed"
fi
kdir=$("$here/build-kernel.sh" --print-dir "$flavour")
log "building rust_timerwheel.ko against the $flavour kernel ${align[*]}"
mo=$(build_module "$flavour" "${align[@]}")

log "building the fig9 tool"
# Into the cache, whatever CARGO_TARGET_DIR the caller has: the guest runs it from there.
CARGO_TARGET_DIR=$TW_CACHE/target-fig9 cargo build --quiet --release --manifest-path "$TW_TOP/scripts/fig9/Cargo.toml"
fig9=$TW_CACHE/target-fig9/release/fig9

log "running the sweep in a guest (${quick[*]:-full})"
rm -f "$out/summary.txt"
rc=0
# The values reach the guest's shell as arguments, not pasted into its command.
# shellcheck disable=SC2016 # expanded by the guest's sh
"$here/vm-run.sh" --kernel "$flavour" --timeout "$timeout_s" --out "$out" -- \
	sh -c 'mo=$1 fig9=$2; shift 2
		insmod "$mo/rust_timerwheel.ko" && "$fig9" run "$@"; rc=$?; rmmod rust_timerwheel; exit $rc' \
	_ "$mo" "$fig9" "${quick[@]}" --budget-ms "$budget" --out "$out" || rc=$?
[ "$rc" = 0 ] || die "the sweep failed (exit $rc, see above): $out keeps what it wrote, no summary"

accel=$(cat "$out/accel")
{
	echo "Figure 9 run of $(date -u +%Y-%m-%d): kernel $flavour ($(basename "$kdir")), guest under $accel,"
	echo "host: $(nproc) CPUs, $(awk '/model name/ { $1 = $2 = $3 = ""; print; exit }' /proc/cpuinfo | sed 's/^ *//')"
	if [ ${#align[@]} -gt 0 ]; then
		echo "module: every function on a 4 KiB boundary (--align-functions)"
	else
		echo "module: as make builds it by default (functions where the linker puts them)"
	fi
	echo
	# The large n of the ratios: the sweep's last (1e4 with --quick).
	large=()
	[ ${#quick[@]} -gt 0 ] && large=(--large 10000)
	"$fig9" summary --csv "$out/fig9.csv" "${large[@]}"
} | tee "$out/summary.txt"
log "done in $(($(date +%s) - t0)) s: $out/fig9.svg, $out/results.md, $out/summary.txt"
