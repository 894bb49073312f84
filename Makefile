# SPDX-License-Identifier: GPL-2.0
#
# Builds rust_timerwheel.ko against the test kernel that scripts/build-kernel.sh caches, or
# against any Rust-enabled kernel tree given as KDIR:
#
#   make                      # against $(TW_CACHE)/build-debug
#   make KDIR=/path/to/linux  # against another tree (built with the same LLVM)
#   make CLIPPY=1             # the same, linted by clippy
#   make MO=DIR               # objects and the .ko in DIR instead of here
#   make TW_ALIGN_FUNCTIONS=1 # every function on a 4 KiB boundary (benchmarks under TCG)
#   make clean

TW_CACHE ?= $(or $(XDG_CACHE_HOME),$(HOME)/.cache)/rust_timerwheel
KDIR ?= $(TW_CACHE)/build-debug
LLVM ?= -19

all: modules

modules clean:
	@test -f $(KDIR)/Makefile || { echo "no kernel tree at KDIR=$(KDIR): run scripts/build-kernel.sh, or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR) $(if $(MO),MO=$(MO)) LLVM=$(LLVM) $@

.PHONY: all modules clean
