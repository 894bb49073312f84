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
#   module    rustfmt --check of the glue with the kernel's .rustfmt.toml, then rust_timerwheel.ko
#             with CLIPPY=1 against the debug kernel (into the cache): no warning; the selftests
#   vm        in a virtme-ng guest on the debug kernel (KASAN, lockdep, kmemleak): the
#             kselftest selftests/timerwheel.sh (module lifecycle + KUnit + ioctl tests), then a
#             scan of the guest's dmesg for any checker report
#   fig9      the Figure 9 benchmark as a smoke test: scripts/run.sh --quick on the debug kernel,
#             then a check that it wrote a valid CSV and figure (no timing is asserted)
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

# The module must be formatted as the kernel formats Rust, and build warning-free (the kernel's
# own lints plus clippy).
module_build() {
	local out rc
	rustfmt --edition 2021 --config-path "$(kernel_src)/.rustfmt.toml" --check "$TW_TOP/rust_timerwheel.rs" || return 1
	out=$(build_module debug CLIPPY=1 2>&1)
	rc=$?
	printf '%s\n' "$out" >&2
	[ "$rc" = 0 ] || return "$rc"
	if grep -qE '^(warning|error)(\[|:)' <<<"$out"; then
		log "the module build printed warnings"
		return 1
	fi
	make -s -C "$TW_TOP/selftests" KSFT_DIR="$(kernel_src)/tools/testing/selftests"
}

vm_tests() {
	"$here/vm-run.sh" --kernel debug --timeout 1500 --out "$TW_TOP/results/vm-test" -- \
		env KSFT_DIR="$(kernel_src)/tools/testing/selftests" selftests/timerwheel.sh "$TW_CACHE/module-debug/rust_timerwheel.ko"
}

# The smoke run of the main job: the outputs must exist and parse; timings are not judged.
fig9_smoke() {
	local out=$TW_TOP/results/fig9-smoke
	rm -rf "$out"
	"$here/run.sh" --quick --kernel debug --out "$out" || return 1
	python3 - "$out" <<'PY'
import csv, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
rows = list(csv.DictReader(open(f"{out}/fig9.csv")))
need = {"curve", "interface", "measure", "n", "ns_per_op", "iterations", "note"}
assert need <= set(rows[0]), f"fig9.csv columns: {list(rows[0])}"
curves = {r["curve"] for r in rows if r["ns_per_op"]}
assert len(curves) >= 11, f"fig9.csv has {len(curves)} curves: {sorted(curves)}"
assert all(float(r["ns_per_op"]) > 0 for r in rows if r["ns_per_op"]), "a cost is not positive"
for svg in ("fig9.svg", "fig9-ioctl.svg", "tick.svg"):
    root = ET.parse(f"{out}/{svg}").getroot()
    lines = root.findall(".//{http://www.w3.org/2000/svg}polyline")
    assert root.tag.endswith("svg") and lines, f"{svg}: no curves"
print(f"fig9 smoke: {len(rows)} rows, {len(curves)} curves, 3 figures parse")
PY
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
	step fig9 fig9_smoke
fi

log "=== summary ($(($(date +%s) - t_all))s)"
printf '%s\n' "${results[@]}" >&2
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
