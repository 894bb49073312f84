#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build (or reuse) a Rust-enabled test kernel from Debian's linux-source package.
#
#   scripts/build-kernel.sh [--print-dir | --cached] [debug|perf]
#
#   debug  (default) the test kernel: KASAN (vmalloc included), lockdep, kmemleak, debug
#          objects (timers, works, frees), KUnit, the soft/hard-lockup, hung-task and RCU-stall
#          detectors, vmap stacks, kCFI, hardened usercopy, list, preemption and irq-flag
#          debugging, memory cgroups, fault injection (failslab, fail_page_alloc, fail-nth),
#          32-bit processes (IA32 emulation), and Rust's overflow checks and debug assertions
#   perf   the benchmark kernel: no debug instrumentation
#
# The source is unpacked once into $TW_CACHE/src and patched with scripts/kernel-patches/*.patch;
# each flavour builds into its own output directory $TW_CACHE/build-FLAVOUR, configured from
# scripts/config/base.config + scripts/config/FLAVOUR.config over allnoconfig. The build is
# reused while the kernel version, the patches, the fragments and the toolchain are unchanged
# (a key stored beside it). Every line of the fragments is checked against the resulting
# .config: allnoconfig silently drops options whose dependencies are off.
#
# With --print-dir, the build directory is printed on stdout (everything else goes to stderr).
# With --cached, nothing is built: the exit status says whether the cache holds the flavour's
# build, current (0), or not (1). Bad usage (two flavours, or both options) exits 2.
#
# A build prints the compiler's and make's own messages, but not a line per file: a line a
# minute says how far it is.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

print_dir=0
cached_only=0
flavour=
for arg in "$@"; do
	case "$arg" in
	-h | --help)
		usage
		exit 0
		;;
	--print-dir) print_dir=1 ;;
	--cached) cached_only=1 ;;
	debug | perf)
		[ -z "$flavour" ] || [ "$flavour" = "$arg" ] || bad_usage "two kernels given: $flavour and $arg"
		flavour=$arg
		;;
	*) bad_usage "unknown argument '$arg'" ;;
	esac
done
# --cached builds nothing and prints nothing.
[ "$print_dir" = 0 ] || [ "$cached_only" = 0 ] || bad_usage "--print-dir and --cached exclude each other"
flavour=${flavour:-debug}

tarball=$(kernel_tarball || true)
[ -n "$tarball" ] || die "no /usr/src/linux-source-*.tar.xz: run scripts/setup.sh first"
pkg=$(basename "$tarball" .tar.xz)
pkgver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || echo unknown)
src=$(kernel_src)
out=$TW_CACHE/build-$flavour
fragment=$out.fragment

# The patches carried in scripts/kernel-patches/ (upstream-style, applied with -p1 in order).
patches=("$TW_TOP"/scripts/kernel-patches/*.patch)
srcver="$pkgver $(cat "${patches[@]}" | sha256sum | cut -c1-16)"

# The fragments, and the key of a build from them.
fragments() {
	cat "$TW_TOP/scripts/config/base.config" "$TW_TOP/scripts/config/$flavour.config"
}
key=$(
	{
		echo "$srcver"
		fragments
		rustc --version
		bindgen --version
		"clang$LLVM" --version | head -n 1
	} | sha256sum | cut -c1-16
)
cached() {
	[ "$(cat "$out/.tw-key" 2>/dev/null)" = "$key" ] && [ -f "$out/arch/x86/boot/bzImage" ]
}
if [ "$cached_only" = 1 ]; then
	cached
	exit
fi

mkdir -p "$TW_CACHE/src"
# One lock per flavour, so that a guest can boot one kernel while the other builds; the source
# is unpacked under a lock of its own.
exec 9>"$TW_CACHE/.lock-$flavour"
flock 9

# Unpack and patch the source once per package version and patch set.
(
	flock 8
	if [ "$(cat "$src/.tw-pkgver" 2>/dev/null)" != "$srcver" ]; then
		log "unpacking $tarball ($pkgver)"
		rm -rf "$src"
		tar -C "$TW_CACHE/src" -xf "$tarball"
		for p in "${patches[@]}"; do
			log "applying $(basename "$p")"
			patch -s -p1 -d "$src" <"$p"
		done
		echo "$srcver" >"$src/.tw-pkgver"
	fi
) 8>"$TW_CACHE/.lock-src"

fragments >"$fragment.new"

# kbuild_progress FLAVOUR: make's output, less Kbuild's line per step ("  CC      kernel/fork.o":
# thousands of them from scratch), which it counts instead, printing a line a minute with the
# count and the latest step. Every other line (compiler and objtool warnings and errors, make's
# own) passes through.
kbuild_progress() {
	local line n=0 step=() t0=$SECONDS next=$((SECONDS + 60))
	while IFS= read -r line || [ -n "$line" ]; do
		if [[ $line =~ ^\ \ [A-Z][A-Z0-9_]+(\ [A-Z]|\ \[M\])?\ +[^\ ] ]]; then
			n=$((n + 1))
			if [ "$SECONDS" -ge "$next" ]; then
				read -r -a step <<<"$line"
				log "$1 kernel: $(((SECONDS - t0) / 60)) min, $n steps, now at ${step[*]}"
				next=$((SECONDS + 60))
			fi
		else
			printf '%s\n' "$line"
		fi
	done
}

# Every "CONFIG_X=v" must appear as such, every "# CONFIG_X is not set" must not be set.
check_fragment() {
	local line name missing=0
	while IFS= read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF "$line" "$out/.config" || {
				log "fragment option missing from .config: $line (have: $(grep -E "^(# )?${line%%=*}[= ]" "$out/.config" || echo unset))"
				missing=1
			}
			;;
		"# CONFIG_"*" is not set")
			name=${line#\# }
			name=${name%% *}
			if grep -q "^$name=" "$out/.config"; then
				log "fragment says $name is not set, but .config has $(grep "^$name=" "$out/.config")"
				missing=1
			fi
			;;
		esac
	done <"$fragment.new"
	[ "$missing" = 0 ] || die "the $flavour kernel configuration does not match scripts/config/*.config (see above)"
}

if cached; then
	log "reusing cached $flavour kernel in $out (key $key)"
else
	start=$(date +%s)
	log "building the $flavour kernel in $out (key $key); from scratch this takes 8-25 minutes on 2 cores"
	rm -rf "$out"
	mkdir -p "$out"
	mv "$fragment.new" "$fragment"
	cp "$fragment" "$fragment.new"
	make -s -C "$src" O="$out" LLVM="$LLVM" KCONFIG_ALLCONFIG="$fragment" allnoconfig >&2
	check_fragment
	make -s -C "$src" O="$out" LLVM="$LLVM" rustavailable >&2 ||
		die "the kernel says Rust is not available with this toolchain: run scripts/setup.sh"
	make -C "$src" O="$out" LLVM="$LLVM" -j"$(($(nproc) + 1))" 2>&1 | kbuild_progress "$flavour" >&2
	echo "$key" >"$out/.tw-key"
	log "built the $flavour kernel in $(($(date +%s) - start)) s"
fi
check_fragment
rm -f "$fragment.new"
[ "$print_dir" = 0 ] || echo "$out"
