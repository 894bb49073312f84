# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared settings for the scripts: sourced, never run.
#
# TW_CACHE holds everything built or installed outside the repository: the kernel trees, the
# virtme-ng venv, guest logs of the last run. Override it to keep several caches apart.

TW_CACHE=${TW_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rust_timerwheel}
TW_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# The toolchain the kernel is built with (see scripts/setup.sh for where each comes from).
export LLVM=${LLVM:--19}
export LIBCLANG_PATH=${LIBCLANG_PATH:-/usr/lib/llvm-19/lib}
export RUST_LIB_SRC=${RUST_LIB_SRC:-/usr/lib/rustlib/src/rust/library}
export PATH="$HOME/.cargo/bin:$TW_CACHE/venv/bin:$PATH"

# The newest Debian linux-source tarball, and where build-kernel.sh unpacks it.
kernel_tarball() {
	local t
	for t in /usr/src/linux-source-*.tar.xz; do
		[ -e "$t" ] && echo "$t"
	done | sort -V | tail -n 1
}
kernel_src() {
	echo "$TW_CACHE/src/$(basename "$(kernel_tarball)" .tar.xz)"
}

# usage: prints the calling script's header, the comment block after its shebang and SPDX line
# up to the first line that is not a comment, without the leading "# ". Every script's --help.
usage() {
	awk 'NR == 1 && /^#!/ { next }
	     /^# SPDX-License-Identifier:/ { next }
	     /^# shellcheck / { next }
	     !/^#/ { exit }
	     { sub(/^# ?/, ""); print }' "$0" | sed '/./,$!d'
}

# no_arguments "$@": for a script that takes none but --help, which prints its usage and exits
# 0; anything else exits 2 with a message.
no_arguments() {
	case "${1:-}" in
	-h | --help)
		usage
		exit 0
		;;
	"") ;;
	*)
		log "unknown argument '$1' (see --help)"
		exit 2
		;;
	esac
}

log() {
	printf '[%s] %s\n' "$(basename "$0")" "$*" >&2
}

die() {
	printf '[%s] error: %s\n' "$(basename "$0")" "$*" >&2
	exit 1
}

# bad_usage MESSAGE: a usage error, found before any work: exits 2.
bad_usage() {
	printf '[%s] error: %s (see --help)\n' "$(basename "$0")" "$*" >&2
	exit 2
}

# value OPTION [VALUE...], with the arguments from OPTION on: an option's value must follow it
# (another option in its place, `--out --quick`, is a usage error too).
value() {
	if [ $# -lt 2 ] || [ -z "$2" ]; then
		bad_usage "$1 needs a value"
	fi
	case "$2" in
	--*) bad_usage "$1 needs a value, not the option '$2'" ;;
	esac
}

# is_count VALUE: whether VALUE is a positive whole number of at most nine digits, which the
# shell's arithmetic and every tool's option take (a longer one would fail later, in a guest).
is_count() {
	[[ $1 =~ ^[1-9][0-9]{0,8}$ ]]
}

# kernel_flavour NAME: NAME must be a kernel the project builds (debug or perf), else bad usage.
kernel_flavour() {
	case "$1" in
	debug | perf) ;;
	*) bad_usage "--kernel takes debug or perf, not '$1'" ;;
	esac
}

# guest_safe_paths OUT: virtme-ng (vm-run.sh) pastes the output directory OUT, the repository and
# the kernel's build directory (in the cache) unquoted into a shell command line: a path it would
# split or expand is refused, OUT as bad usage.
guest_safe_paths() {
	local unsafe=$'[][[:space:]\'"`\\$&;|<>()*?=]' abs p
	case "$1" in
	/*) abs=$1 ;;
	*) abs=$PWD/$1 ;;
	esac
	[[ ! $abs =~ $unsafe ]] ||
		bad_usage "--out: virtme-ng cannot take a path with spaces or shell metacharacters: '$1'"
	for p in "$TW_TOP" "$TW_CACHE"; do
		[[ ! $p =~ $unsafe ]] ||
			die "virtme-ng cannot take a path with spaces or shell metacharacters: '$p'"
	done
}

# build_module FLAVOUR [MAKE ARGS...]: rust_timerwheel.ko against the cached FLAVOUR kernel, into
# $TW_CACHE/module-FLAVOUR, or $TW_MODULE_DIR if set (printed on stdout), from scratch. Kbuild
# builds an external module out of tree only when the tree holds no objects of its own, so an
# in-tree build is cleaned.
build_module() {
	local flavour=$1 kdir mo
	shift
	kdir=$("$TW_TOP/scripts/build-kernel.sh" --print-dir "$flavour") || return 1
	mo=${TW_MODULE_DIR:-$TW_CACHE/module-$flavour}
	mkdir -p "$mo"
	make -s -C "$TW_TOP" KDIR="$kdir" clean >/dev/null 2>&1
	make -s -C "$TW_TOP" KDIR="$kdir" MO="$mo" clean >/dev/null 2>&1
	make -C "$TW_TOP" KDIR="$kdir" MO="$mo" "$@" >&2 || return 1
	echo "$mo"
}
