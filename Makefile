# SPDX-License-Identifier: GPL-2.0
#
# lbr_snap: `make` builds lbr_snap.ko and tools/lbr-snap.
#   KDIR=...   kernel build tree (default: running kernel's, else the newest
#              installed headers)
#   make check                     full test suite in QEMU guests
#   make vm-run SCRIPT=file.sh     boot the test guest and run a script
#   make demo                      show captures in the guest

KVER ?= $(shell uname -r)
ifeq ($(origin KDIR),undefined)
KDIR := /lib/modules/$(KVER)/build
ifeq ($(wildcard $(KDIR)/Makefile),)
KDIR := $(lastword $(sort $(wildcard /lib/modules/*/build)))
$(info lbr_snap: no headers for the running kernel $(KVER); using $(KDIR))
endif
endif

PWD_ := $(CURDIR)

.PHONY: all module tools clean check vm-run demo style \
	install dkms-install dkms-uninstall

all: module tools

module:
	$(MAKE) -C $(KDIR) M=$(PWD_) modules

tools:
	$(MAKE) -C tools

install: module
	$(MAKE) -C $(KDIR) M=$(PWD_) modules_install
	depmod -a $(notdir $(patsubst %/build,%,$(KDIR)))

clean:
	$(MAKE) -C $(KDIR) M=$(PWD_) clean
	$(MAKE) -C tools clean

check:
	tests/run-all.sh

vm-run:
	@test -n "$(SCRIPT)" || { echo "usage: make vm-run SCRIPT=path/to/script.sh [CPU=stock] [SMP=2]"; exit 2; }
	@tests/vm/run-vm.sh --smp $(or $(SMP),2) --cpu $(or $(CPU),stock) --script $(SCRIPT)

demo:
	@tests/vm/run-vm.sh --smp 2 --cpu $(or $(CPU),stock) --script tests/demo.sh
