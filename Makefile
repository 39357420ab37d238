# SPDX-License-Identifier: GPL-2.0
#
# lbr_snap: `make` builds lbr_snap.ko and tools/lbr-snap.
#   KDIR=...   kernel build tree (default: running kernel's, else the newest
#              installed headers)
#   make deb                       Debian packages lbr-snap-dkms and lbr-snap
#                                  in build/deb/ (debian/; DEB_DIR=...)
#   make check                     full test suite in QEMU guests
#   make check-fresh               make demo and make check in a new Debian 12
#   make check-mass                10,000 functions attached under a debug kernel
#   make vm-run SCRIPT=file.sh [CPU=stock|lbr-legacy|lbr-arch|lbr-legacy-pmu|lbr-arch-pmu|lbr-arch-xsaves|lbr-legacy-pmu3|lbr-amd|lbr-amd-nopmu] [SMP=2]
#                                  boot the test guest and run a script
#   make demo [CPU=lbr-legacy]     show captures in the guest
#   make demo-trace [CPU=lbr-legacy]  where cat's ENOENT comes from, with
#                                  the -dbg vmlinux's source lines
#   make demo-why [CPU=] [GUEST_KVER=]  lbr-snap why of two failing commands

KVER ?= $(shell uname -r)
ifeq ($(origin KDIR),undefined)
KDIR := /lib/modules/$(KVER)/build
ifeq ($(wildcard $(KDIR)/Makefile),)
KDIR := $(lastword $(sort $(wildcard /lib/modules/*/build)))
KDIR_NOTE := no headers for the running kernel $(KVER); using $(or $(KDIR),none)
endif
endif

PWD_ := $(CURDIR)

.PHONY: all module tools clean check check-host vm-run demo style \
	install install-tools dkms-source dkms-install dkms-uninstall deb

all: module tools

module:
	@$(if $(KDIR_NOTE),echo "lbr_snap: $(KDIR_NOTE)")
	@test -f "$(KDIR)/Makefile" || { echo "lbr_snap: no kernel headers: install linux-headers-$(KVER), or pass KDIR=" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(PWD_) modules

tools:
	$(MAKE) -C tools

# make install: the module (modules_install and depmod for KDIR's kernel;
# fails without kernel headers, before anything is installed), then
# install-tools.  make install-tools [DESTDIR=...] [PREFIX=/usr/local]:
# lbr-snap in SBINDIR, lbr-snap(8) and lbr_snap(4) in MANDIR, the bash
# completion in BASHCOMPDIR; needs no kernel headers.
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions

install: module install-tools
	$(MAKE) -C $(KDIR) M=$(PWD_) modules_install
	depmod -a $(notdir $(patsubst %/build,%,$(KDIR)))

install-tools: tools
	install -D -m 0755 tools/lbr-snap $(DESTDIR)$(SBINDIR)/lbr-snap
	install -D -m 0644 dist/man/lbr-snap.8 $(DESTDIR)$(MANDIR)/man8/lbr-snap.8
	install -D -m 0644 dist/man/lbr_snap.4 $(DESTDIR)$(MANDIR)/man4/lbr_snap.4
	install -D -m 0644 dist/bash-completion/lbr-snap \
		$(DESTDIR)$(BASHCOMPDIR)/lbr-snap

# The module's own kbuild products, in the top directory and src/ only:
# the names kbuild's clean finds (the kernel's top-level Makefile, target
# clean), without its find over the whole M tree, which takes the modules
# of the guest kernels cached in .cache/ (tests/vm/kernel.sh) and of
# build/ with it.  Needs no kernel headers.  tests/make-clean.sh checks it.
clean:
	find $(PWD_) $(PWD_)/src -maxdepth 1 -type f \( -name '*.[aios]' \
		-o -name '*.ko' -o -name '*.mod' -o -name '*.mod.c' \
		-o -name '.*.cmd' -o -name '.*.d' -o -name '*.o.d' -o -name '*.dwo' \
		-o -name '*.su' -o -name '*.symtypes' -o -name '.*.tmp' \
		-o -name modules.order -o -name Module.symvers \) -delete
	$(MAKE) -C tools clean

check:
	tests/run-all.sh

# The kselftests on this machine's running kernel (root; loads modules).
check-host:
	tests/check-host.sh

vm-run:
	@test -n "$(SCRIPT)" || { echo "usage: make vm-run SCRIPT=path/to/script.sh [CPU=stock] [SMP=2]"; exit 2; }
	@tests/vm/run-vm.sh --smp $(or $(SMP),2) --cpu $(or $(CPU),stock) --script $(SCRIPT)

# CPU=stock|lbr-legacy|lbr-arch|lbr-legacy-pmu|lbr-arch-pmu|lbr-arch-xsaves|lbr-legacy-pmu3|lbr-amd|lbr-amd-nopmu:
# the guest's CPU; the lbr-* ones are the LBR
# lab's (tests/lbr-lab), built on first use.  make demo defaults to
# lbr-legacy so that real branches show on any machine.
demo:
	@tests/vm/run-vm.sh --smp 2 --cpu $(or $(CPU),lbr-legacy) --script tests/demo.sh

# make demo-trace [CPU=lbr-legacy]: lbr-snap trace of all of fs/namei.c in
# the guest, with source lines from the kernel's -dbg vmlinux (downloaded
# once, some 860 MB: tests/vm/dbg-vmlinux.sh).  Not part of make check.
.PHONY: demo-trace
demo-trace:
	@tests/vm/run-vm.sh --smp 2 --cpu $(or $(CPU),lbr-legacy) \
		--files "$$(tests/vm/dbg-vmlinux.sh)" --script tests/demo-trace.sh

# make demo-why [CPU=lbr-legacy] [GUEST_KVER=...]: lbr-snap why of a
# missing file and of a bad perf_event_open() attr, with the -dbg
# vmlinux's source lines (downloaded once: tests/vm/dbg-vmlinux.sh).  Not
# part of make check.
.PHONY: demo-why
demo-why:
	@tests/vm/run-vm.sh --smp 2 --cpu $(or $(CPU),lbr-legacy) \
		$(if $(GUEST_KVER),--kver $(GUEST_KVER)) \
		--files "$$(tests/vm/dbg-vmlinux.sh $(GUEST_KVER))" \
		--script tests/demo-why.sh

# make check-fresh: make demo, then make check, in a minimal Debian 12 root
# debootstrapped anew, from a clean clone of HEAD, with no cache (60 to 90
# minutes on 2 cores).  Run it whenever a dependency or an install step changes
# (tests/fresh/check-fresh.sh).  Not part of make check.
.PHONY: check-fresh
check-fresh:
	@tests/fresh/check-fresh.sh

# make check-mass: 10,000 functions attached at once, made to capture and
# detached, under a debug kernel with networking and ext4 besides make
# check's checkers (tests/vm/mass-check.sh; the kernel is built once, and
# cached, as make check's debug kernel is).  Not part of make check.
.PHONY: check-mass
check-mass:
	@tests/vm/mass-check.sh

# make bench: probe_entries of the kretprobe and fexit hooks and of a BPF
# bpf_get_branch_snapshot() program side by side, on both LBR lab CPUs with
# the lab PMU, with and without mitigations (tests/bench/bench.sh); then
# the cost table (guest instructions a return costs, against an ftrace
# kretprobe event) and the reader line (lbr-snap against cat trace_pipe
# in a storm), with their goals (tests/bench/cost.sh).
.PHONY: bench
bench:
	@tests/bench/bench.sh

# make bench-why: the why cost and why origin lines alone
# (tests/bench/why.sh).
.PHONY: bench-why
bench-why:
	@tests/bench/why.sh

# make bench-cost: the cost table and the reader line alone.
.PHONY: bench-cost
bench-cost:
	@tests/bench/cost.sh

# make bench-reader: records per second lbr-snap drains, text and --json,
# from a file and a FIFO, on the host without the module: a synthetic storm
# symbolized against a kallsyms the size of a real kernel's
# (tests/bench/reader-host.sh).
.PHONY: bench-reader
bench-reader:
	@tests/bench/reader-host.sh

# make matrix [RELEASES="bullseye bookworm trixie sid"]: W=1 builds of
# lbr_snap.ko and the test target against Debian's headers of each release
# (tests/matrix/matrix.sh; cached under $LBR_SNAP_CACHE or .cache).
.PHONY: matrix
matrix:
	@tests/matrix/matrix.sh $(RELEASES)

# make dkms-install [KVER=...]: copy the module sources to
# /usr/src/lbr_snap-VERSION (VERSION is LBR_SNAP_VERSION of src/lbr_snap.h),
# then dkms add, build and install for KVER (default: the running kernel).
# DKMS_STEPS="add build" stops before installing.  make dkms-uninstall
# removes the module from DKMS for every kernel and deletes the sources.
LBR_VERSION = $(shell sed -n 's/^\#define LBR_SNAP_VERSION[ \t]*"\(.*\)"/\1/p' $(CURDIR)/src/lbr_snap.h)
DKMS_SRC = /usr/src/lbr_snap-$(LBR_VERSION)
DKMS_STEPS ?= add build install

# make dkms-source [DESTDIR=...]: that copy alone, for a package
# (debian/rules) or a chroot (tests/dkms/check.sh): the one list of what
# DKMS builds from.
dkms-source:
	@test -n "$(LBR_VERSION)" || { echo "no LBR_SNAP_VERSION in src/lbr_snap.h"; exit 1; }
	rm -rf $(DESTDIR)$(DKMS_SRC)
	install -d $(DESTDIR)$(DKMS_SRC)/src $(DESTDIR)$(DKMS_SRC)/include
	install -m 0644 Makefile Kbuild $(DESTDIR)$(DKMS_SRC)/
	install -m 0644 src/*.c src/*.h src/*.S $(DESTDIR)$(DKMS_SRC)/src/
	install -m 0644 include/*.h $(DESTDIR)$(DKMS_SRC)/include/
	sed 's/#MODULE_VERSION#/$(LBR_VERSION)/' dkms.conf >$(DESTDIR)$(DKMS_SRC)/dkms.conf

dkms-install:
	@test -n "$(LBR_VERSION)" || { echo "no LBR_SNAP_VERSION in src/lbr_snap.h"; exit 1; }
	@test -f /lib/modules/$(KVER)/build/Makefile || { \
		echo "no headers for $(KVER) in /lib/modules/$(KVER)/build; pass KVER=, one of:"; \
		ls /lib/modules; exit 1; }
	$(MAKE) -s dkms-source DESTDIR=
	@set -e; for step in $(DKMS_STEPS); do \
		if [ $$step = add ] && dkms status -m lbr_snap -v $(LBR_VERSION) | grep -q .; then \
			echo "lbr_snap/$(LBR_VERSION) already added to DKMS"; continue; fi; \
		k="-k $(KVER)"; [ $$step = add ] && k=; \
		echo "dkms $$step lbr_snap/$(LBR_VERSION) $$k"; \
		dkms $$step lbr_snap/$(LBR_VERSION) $$k; \
	done

dkms-uninstall:
	@test -n "$(LBR_VERSION)" || { echo "no LBR_SNAP_VERSION in src/lbr_snap.h"; exit 1; }
	-dkms remove lbr_snap/$(LBR_VERSION) --all
	rm -rf $(DKMS_SRC)

# make deb [DEB_DIR=build/deb]: the Debian packages lbr-snap-dkms (the
# module's sources for DKMS, as make dkms-source copies them) and lbr-snap
# (make install-tools into /usr, the udev rule), built with
# dpkg-buildpackage from debian/ in a copy of the tree in DEB_DIR, so that
# nothing of the build lands in the tree or beside it.  The version is
# LBR_SNAP_VERSION: the copy's debian/changelog is written from it.  Installs
# the deb group of tests/deps/packages first (root, if any is missing).
# tests/deb/roundtrip.sh installs the .debs in a Debian 12 root.
DEB_DIR ?= $(CURDIR)/build/deb
DEB_TREE = $(DEB_DIR)/lbr-snap-$(LBR_VERSION)
deb:
	@test -n "$(LBR_VERSION)" || { echo "no LBR_SNAP_VERSION in src/lbr_snap.h"; exit 1; }
	tests/deps/install.sh deb
	rm -rf $(DEB_DIR)
	mkdir -p $(DEB_TREE)
	cp -r Makefile Kbuild dkms.conf src include tools dist debian $(DEB_TREE)/
	{ echo "lbr-snap ($(LBR_VERSION)) unstable; urgency=medium"; echo; \
	  echo "  * lbr_snap $(LBR_VERSION) (LBR_SNAP_VERSION of src/lbr_snap.h)."; echo; \
	  echo " -- $$(sed -n 's/^Maintainer: //p' debian/control)  $$(git log -1 --format=%cD 2>/dev/null || date -R)"; \
	} >$(DEB_TREE)/debian/changelog
	cd $(DEB_TREE) && dpkg-buildpackage -b --no-sign
	rm -rf $(DEB_TREE)
	@ls $(DEB_DIR)/*.deb
