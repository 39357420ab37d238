/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions lbr_snap refuses as targets (targets.c), shared with the
 * tool's pattern resolver (tools/pattern.c), which refuses them up front:
 * one list, so the two cannot drift.  Plain initializers, no kernel or
 * libc type.
 */
#ifndef LBR_OWN_NAMES_H
#define LBR_OWN_NAMES_H

/*
 * The capture path's, by prefix; with arch_irq_work_raise and the
 * self-IPI senders lbr_db_check_soon()'s irq_work_queue() reaches.
 */
#define LBR_OWN_PATH_PREFIXES						\
	"irq_work_", "ktime_get_mono_fast", "__ktime_get_fast", "read_tsc", \
	"native_sched_clock", "kretprobe_", "rethook_", "arch_rethook_", \
	"arch_irq_work_raise", "__irq_work_queue_local",		\
	"apic_send_IPI_self", "x2apic_send_IPI_self",			\
	"default_send_IPI_self"

/* The unwinder's (call_stack.c, with stack_depth=), by exact name. */
#define LBR_UNWIND_NAMES						\
	"stack_trace_save", "stack_trace_consume_entry",		\
	"stack_trace_consume_entry_nosched", "arch_stack_walk",	\
	"__unwind_start", "unwind_next_frame", "unwind_get_return_address", \
	"unwind_get_return_address_ptr", "orc_find", "__orc_find",	\
	"orc_module_find", "orc_ftrace_find", "kernel_text_address",	\
	"__kernel_text_address", "core_kernel_text", "get_stack_info",	\
	"get_stack_info_noinstr", "stack_access_ok", "deref_stack_reg", \
	"deref_stack_regs", "deref_stack_iret_regs",			\
	"is_module_text_address", "__module_address",			\
	"__module_text_address", "mod_find", "is_ftrace_trampoline",	\
	"ftrace_ops_trampoline", "ftrace_graph_ret_addr",		\
	"is_bpf_text_address", "bpf_ksym_find", "is_kprobe_insn_slot",	\
	"is_kprobe_optinsn_slot", "__is_insn_slot_addr"

/*
 * Functions that never return, which fexit refuses (fexit_hook.c): the
 * ones the BPF verifier refuses fexit on (noreturn_deny in
 * kernel/bpf/verifier.c), the other noreturn functions a task can exit
 * through (tools/objtool/noreturns.h).
 */
#define LBR_NORETURN_NAMES						\
	"__x64_sys_exit", "__x64_sys_exit_group", "__ia32_sys_exit",	\
	"__ia32_sys_exit_group", "do_exit", "do_group_exit", "do_task_dead", \
	"make_task_dead", "rewind_stack_and_make_dead", "kthread_exit",	\
	"kthread_complete_and_exit", "__module_put_and_kthread_exit",	\
	"panic", "vpanic", "nmi_panic_self_stop", "panic_smp_self_stop", \
	"__stack_chk_fail", "__fortify_panic", "usercopy_abort",	\
	"machine_real_restart", "stop_this_cpu", "cpu_startup_entry",	\
	"cpu_bringup_and_idle"

/*
 * Where an offline CPU's idle task stays (arch/x86/kernel/smpboot.c and
 * below), which no hook takes (target_spec.c).
 */
#define LBR_OFFLINE_CPU_NAMES						\
	"do_idle", "arch_cpu_idle_dead", "play_dead", "native_play_dead", \
	"mwait_play_dead", "hlt_play_dead", "cpuidle_play_dead",	\
	"acpi_idle_play_dead", "intel_idle_enter_dead", "xen_pv_play_dead"

#endif /* LBR_OWN_NAMES_H */
