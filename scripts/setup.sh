#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install everything rust_timerwheel needs on a Debian 12 (bookworm) machine, versions pinned.
#
# Idempotent: a second run checks what is there and changes nothing. Needs root (apt).
#
#   scripts/setup.sh [--help]
#
# What it installs, and why each piece:
#   - bookworm:  clang/lld/llvm 19 + libclang (the kernel's Rust needs LLVM >= 17 and, with
#                KASAN, a clang-built kernel), the kernel build dependencies, busybox for
#                virtme-ng's initramfs, shellcheck for the scripts' lint step in test.sh,
#                gcc-multilib for the 32-bit build of a kselftest (timerwheel_compat.sh);
#   - bookworm-backports: QEMU 10 (matches the machine's qemu-utils);
#   - trixie-backports: Debian's linux-source-7.3 (the kernel we build) and rust-src, the Rust
#                std sources that must match `rustc --version` exactly;
#   - crates.io: bindgen-cli, and the crates of the host tools (cargo fetch, so that later
#                builds need no registry);   PyPI: virtme-ng (in a venv under the cache directory).
#
# Extra Debian suites reuse the mirror of the machine's own apt configuration and are pinned at
# priority 100, so only the packages named here come from them. A suite that no longer offers a
# pinned version (a backports suite may keep only its newest) gets that suite's newest instead,
# with a warning; rust-src's must still be the version of `rustc`. A dpkg run cut short earlier
# is finished first, and an install that fails on stale package lists is tried again after
# `apt-get update`.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=scripts/lib.sh
. "$here/lib.sh"

no_arguments "$@"

# Pinned versions. The kernel, the Rust std sources and the compiler move together: change them
# in one commit, and the kernel cache key (scripts/lib.sh) follows. Each extra suite's package
# names its suite, from which alone it is taken.
LINUX_SOURCE_PKG=linux-source-7.3
LINUX_SOURCE_VER=7.3.4-1~bpo13+1
RUST_SRC_VER=1.95.0+dfsg1-2~bpo13+1
QEMU_VER=1:10.0.2+ds-2+deb13u1~bpo12+1
QEMU_SUITE=bookworm-backports
LINUX_SOURCE_SUITE=trixie-backports
RUST_SRC_SUITE=trixie-backports
LLVM_VER=19
BINDGEN_VER=0.73.2
VIRTME_NG_VER=1.42

BOOKWORM_PKGS=(
	"clang-$LLVM_VER" "lld-$LLVM_VER" "llvm-$LLVM_VER" "libclang-$LLVM_VER-dev"
	flex bison bc libelf-dev libssl-dev cpio xz-utils make python3-venv busybox-static
	kmod patch shellcheck gcc-multilib
)

need_root() {
	[ "$(id -u)" = 0 ] || die "setup needs root for apt-get (run it as root or with sudo)"
}

# Add bookworm-backports, trixie and trixie-backports from the mirror the machine already uses.
add_suites() {
	local src=/etc/apt/sources.list.d/debian.sources list=/etc/apt/sources.list.d/rust-timerwheel.sources
	local pin=/etc/apt/preferences.d/rust-timerwheel uris
	if [ -f "$src" ]; then
		uris=$(awk '/^URIs:/ { print $2; exit }' "$src")
	else
		uris=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
	fi
	[ -n "$uris" ] || die "cannot find the Debian mirror in the machine's apt configuration"
	local want
	want=$(printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports trixie trixie-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' "$uris")
	local pinwant
	pinwant=$(printf 'Package: *\nPin: release n=trixie\nPin-Priority: 100\n\nPackage: *\nPin: release n=trixie-backports\nPin-Priority: 100\n\nPackage: *\nPin: release n=bookworm-backports\nPin-Priority: 100\n')
	local changed=0
	if [ "$(cat "$list" 2>/dev/null)" != "$want" ]; then
		printf '%s\n' "$want" >"$list"
		changed=1
	fi
	if [ "$(cat "$pin" 2>/dev/null)" != "$pinwant" ]; then
		printf '%s\n' "$pinwant" >"$pin"
		changed=1
	fi
	local stamp=/var/lib/apt/lists/.rust-timerwheel-updated
	if [ "$changed" = 1 ] || [ ! -f "$stamp" ]; then
		refresh_lists
		touch "$stamp"
	fi
}

lists_fresh=0

# Re-reads the package lists, once a run.
refresh_lists() {
	[ "$lists_fresh" = 0 ] || return 0
	log "apt-get update"
	apt-get update -qq
	lists_fresh=1
}

# The versions of package $1 that suite $2 offers, newest first.
suite_versions() {
	apt-cache madison "$1" 2>/dev/null | awk -F' *[|] *' -v s=" $2/" 'index($3, s) { print $2 }'
}

# pick_version PKG PINNED SUITE [PREFIX]: the version of PKG to install, which must start with
# PREFIX. PINNED where it does and is installed or SUITE offers it (after one refresh of the
# lists); else, with a warning, the newest SUITE offers that starts with PREFIX. Dies when there
# is none.
pick_version() {
	local pkg=$1 pinned=$2 suite=$3 prefix=${4:-} v
	if [ "${pinned#"$prefix"}" != "$pinned" ] || [ -z "$prefix" ]; then
		if installed "$pkg=$pinned"; then
			echo "$pinned"
			return 0
		fi
		if ! suite_versions "$pkg" "$suite" | grep -qxF -- "$pinned"; then
			refresh_lists
		fi
		if suite_versions "$pkg" "$suite" | grep -qxF -- "$pinned"; then
			echo "$pinned"
			return 0
		fi
	fi
	v=$(suite_versions "$pkg" "$suite" | awk -v p="$prefix" 'index($0, p) == 1 { print; exit }')
	[ -n "$v" ] || die "$suite offers no $pkg${prefix:+ of version $prefix*} (pinned: $pinned)"
	log "warning: installing $pkg $v from $suite in place of the pinned $pinned"
	echo "$v"
}

# Succeeds when every "name=version" or "name" argument is installed (at that version).
installed() {
	local p name ver have
	for p in "$@"; do
		name=${p%%=*}
		have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null || true)
		case "$have" in
		"install ok installed "*) ;;
		*) return 1 ;;
		esac
		if [ "$name" != "$p" ]; then
			ver=${p#*=}
			[ "${have#install ok installed }" = "$ver" ] || return 1
		fi
	done
}

# apt_install [-t SUITE] PKG[=VER]...: with -t, dependencies may come from SUITE as well.
apt_install() {
	local target=()
	if [ "$1" = -t ]; then
		target=(-t "$2")
		shift 2
	fi
	if installed "$@"; then
		return 0
	fi
	log "apt-get install ${target[*]} $*"
	if ! apt_get_install "${target[@]}" "$@"; then
		[ "$lists_fresh" = 0 ] || die "apt-get install ${target[*]} $* failed"
		log "apt-get install failed: trying once more on fresh package lists"
		refresh_lists
		apt_get_install "${target[@]}" "$@"
	fi
}

apt_get_install() {
	# A line a package set up, as progress: a fresh machine takes minutes here.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$@" |
		awk '/^Setting up / { print "  " $3; fflush() }'
}

# Finishes a dpkg run that was cut short (a killed install), which apt-get install refuses to
# go past; it does nothing when there is none.
finish_dpkg() {
	if [ -n "$(dpkg --audit 2>/dev/null)" ]; then
		log "dpkg --configure -a (an earlier install was cut short)"
		DEBIAN_FRONTEND=noninteractive dpkg --configure -a
	fi
}

# The kernel needs the std sources of the very compiler it uses: rust-src of `rustc`'s version.
install_rust_src() {
	local rustc_ver deb_ver ver
	rustc_ver=$(rustc --version | awk '{ print $2 }')
	deb_ver=${RUST_SRC_VER%%+*}
	if [ "$rustc_ver" != "$deb_ver" ]; then
		log "warning: rustc is $rustc_ver, not the pinned $deb_ver: looking for its rust-src"
	fi
	ver=$(pick_version rust-src "$RUST_SRC_VER" "$RUST_SRC_SUITE" "$rustc_ver+")
	apt_install "rust-src=$ver"
	[ -f "$RUST_LIB_SRC/core/src/lib.rs" ] || die "rust-src is installed but $RUST_LIB_SRC/core/src/lib.rs is missing"
}

install_bindgen() {
	local have
	have=$(bindgen --version 2>/dev/null | awk '{ print $2 }' || true)
	[ "$have" = "$BINDGEN_VER" ] && return 0
	log "cargo install bindgen-cli $BINDGEN_VER"
	# Without --quiet: its "Compiling" lines are the progress of minutes of building.
	cargo install --locked bindgen-cli --version "$BINDGEN_VER"
}

install_virtme_ng() {
	local venv=$TW_CACHE/venv
	if [ -x "$venv/bin/vng" ] && [ "$("$venv/bin/pip" show virtme-ng 2>/dev/null | awk '/^Version:/ { print $2 }')" = "$VIRTME_NG_VER" ]; then
		return 0
	fi
	log "pip install virtme-ng==$VIRTME_NG_VER into $venv"
	mkdir -p "$TW_CACHE"
	python3 -m venv "$venv"
	"$venv/bin/pip" install --progress-bar off "virtme-ng==$VIRTME_NG_VER"
}

# The crates of the host tools (wheel-bench, fig9), as their lock files pin them, into cargo's
# cache: later builds need no registry.
fetch_crates() {
	local manifest
	for manifest in "$TW_TOP/wheel/Cargo.toml" "$TW_TOP/scripts/fig9/Cargo.toml"; do
		cargo fetch --quiet --locked --manifest-path "$manifest"
	done
}

main() {
	local qemu_ver source_ver
	command -v rustc >/dev/null || die "no rustc on PATH: install Rust (rustup) first"
	command -v cargo >/dev/null || die "no cargo on PATH"
	need_root
	finish_dpkg
	add_suites
	apt_install "${BOOKWORM_PKGS[@]}"
	# (Each version is picked into a variable of its own, where set -e sees a failure.)
	qemu_ver=$(pick_version qemu-system-x86 "$QEMU_VER" "$QEMU_SUITE")
	apt_install -t "$QEMU_SUITE" "qemu-system-x86=$qemu_ver"
	source_ver=$(pick_version "$LINUX_SOURCE_PKG" "$LINUX_SOURCE_VER" "$LINUX_SOURCE_SUITE")
	apt_install "$LINUX_SOURCE_PKG=$source_ver"
	install_rust_src
	install_bindgen
	install_virtme_ng
	fetch_crates
	log "setup complete: rustc $(rustc --version | awk '{ print $2 }'), bindgen $BINDGEN_VER, clang $LLVM_VER, QEMU ${qemu_ver#*:}, virtme-ng $VIRTME_NG_VER"
}

main
