/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A kernel function's entry and size, by name, for both modules (the do_exit
 * lookup of lbr_snap_fexit, the targets of lbr_snap).  In a header, not
 * exported: an export would give every module a name-to-address lookup,
 * which kallsyms_lookup_name() stopped being in 5.7.
 *
 * kallsyms_lookup_name() is not exported to modules; a kprobe that is
 * never armed resolves the name and refuses what must not be probed (the
 * kprobe blacklist, noinstr code), and kallsyms gives the function's
 * extent.
 */
#ifndef LBR_SNAP_FUNC_LOOKUP_H
#define LBR_SNAP_FUNC_LOOKUP_H

#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/string.h>

/*
 * "name+0xoff/0xsize [mod]" for @addr: the probe may sit past an ENDBR.
 * Apart from lbr_func_lookup(): a symbol buffer and a struct kprobe in one
 * frame pass the 1024 bytes W=1 allows on a KASAN kernel.
 */
static noinline int __maybe_unused
lbr_func_extent(unsigned long addr, unsigned long *start, unsigned long *size)
{
	char buf[KSYM_SYMBOL_LEN];
	unsigned long off, len;
	char *p;

	sprint_symbol(buf, addr);
	p = strrchr(buf, '+');
	if (!p || sscanf(p, "+%lx/%lx", &off, &len) != 2 || off > addr)
		return -ENODATA;
	*start = addr - off;
	*size = len;
	return 0;
}

/**
 * lbr_func_lookup - find the function @name
 * @name: a symbol name
 * @start: its entry
 * @size: its size in bytes
 *
 * Return: 0; -ENOENT for an unknown symbol, another error from
 * register_kprobe() for one kprobes refuse, or -ENODATA when kallsyms
 * does not say where the function begins.
 */
static inline int lbr_func_lookup(const char *name, unsigned long *start,
				  unsigned long *size)
{
	struct kprobe kp = {
		.symbol_name = name,
		.flags = KPROBE_FLAG_DISABLED,
	};
	unsigned long addr;
	int ret;

	ret = register_kprobe(&kp);
	if (ret)
		return ret;
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	return lbr_func_extent(addr, start, size);
}

#endif /* LBR_SNAP_FUNC_LOOKUP_H */
