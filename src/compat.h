/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences lbr_snap builds across (5.10 to 7.2).
 *
 * Every entry names the kernel where the API changed.  Keep version checks
 * here and nowhere else; the rest of the module uses the lbr_* names below.
 */
#ifndef LBR_SNAP_COMPAT_H
#define LBR_SNAP_COMPAT_H

#include <linux/version.h>
#include <linux/kprobes.h>
#include <asm/msr.h>

/*
 * Raw MSR access for the capture path: always inline, no tracepoint and no
 * paravirt call, so no branch precedes the freeze.  A fault is fixed up by
 * the exception table (EX_TYPE_RDMSR / EX_TYPE_WRMSR) and warns once.
 * __rdmsr()/__wrmsr() exist since 5.9 (commit "x86/msr: Add
 * __rdmsr()/__wrmsr() as noinstr primitives").
 */
static __always_inline u64 lbr_rdmsr(u32 msr)
{
	return __rdmsr(msr);
}

static __always_inline void lbr_wrmsr(u32 msr, u64 val)
{
	__wrmsr(msr, (u32)val, (u32)(val >> 32));
}

/* rdmsrl_safe()/wrmsrl_safe() became rdmsrq_safe()/wrmsrq_safe() in 6.16. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 16, 0)
#define lbr_rdmsr_safe(msr, p)	rdmsrq_safe(msr, p)
#define lbr_wrmsr_safe(msr, v)	wrmsrq_safe(msr, v)
#else
#define lbr_rdmsr_safe(msr, p)	rdmsrl_safe(msr, p)
#define lbr_wrmsr_safe(msr, v)	wrmsrl_safe(msr, v)
#endif

/*
 * kretprobe_instance lost ->rp in 5.11 (get_kretprobe()) and ->ret_addr when
 * kretprobes moved onto rethook in 5.18 (get_kretprobe_retaddr()).
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(5, 18, 0)
#define lbr_kretprobe_retaddr(ri)	get_kretprobe_retaddr(ri)
#else
#define lbr_kretprobe_retaddr(ri)	((unsigned long)(ri)->ret_addr)
#endif
#if LINUX_VERSION_CODE < KERNEL_VERSION(5, 11, 0)
#define lbr_get_kretprobe(ri)		((ri)->rp)
#else
#define lbr_get_kretprobe(ri)		get_kretprobe(ri)
#endif

/*
 * x86_perf_get_lbr() is EXPORT_SYMBOL_GPL up to 6.12 (checked 6.1, 6.12)
 * and exported to KVM only later (7.2 checked); it is only a cross-check.
 */
#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 13, 0)
#define LBR_HAVE_X86_PERF_GET_LBR	1
#else
#define LBR_HAVE_X86_PERF_GET_LBR	0
#endif

#endif /* LBR_SNAP_COMPAT_H */
