/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kselftests that never look at the LBR: no backend, no branch
 * entry, no control MSR, no mode or PMU (tests/selftests/agnostic.py
 * checks each body, and the helpers it calls, for those).  What they test
 * does not change from one lab CPU to another of the same kernel, so
 * make check runs them once per kernel and per capture mode (on 6.1 the
 * stock CPU, lbr-legacy-pmu and the debug kernel on lbr-legacy; 5.10,
 * 6.12, 7.2), and the other lab CPUs of 6.1 run the rest only
 * (LBR_TESTS_LBR_ONLY=1).
 */
#ifndef LBR_TEST_AGNOSTIC_H
#define LBR_TEST_AGNOSTIC_H

static const char *const lbr_agnostic_tests[] = {
	"load.no_targets",
	"load.unknown_symbol",
	"load.all_or_nothing",
	"load.kprobes_refuse",
	"load.own_capture_path",
	"load.duplicate",
	"load.name_too_long",
	"load.too_many_targets",
	"load.buffer_larger_than_memory_refused",
	"load.wakeup_mark_below_a_full_ring",
	"cap.errors_mode_counts",
	"cap.all_mode_counts",
	"cap.int_sign_extension",
	"cap.ptr_type",
	"cap.bool_type",
	"cap.read_small_buffer_einval",
	"cap.read_whole_records",
	"cap.nonblock_eagain",
	"cap.blocking_read_waits",
	"cap.poll_and_epoll",
	"cap.poll_wakes_at_the_mark",
	"cap.merged_in_time_order_all_cpus",
	"cap.concurrent_readers_whole_and_unique",
	"cap.overflow_is_counted_exactly",
	"cap.flush_discards_and_counts",
	"cap.runtime_add_remove_and_capture_mode",
	"cap.void_target_needs_capture_all",
	"cap.errno_list_records_only_those",
	"cap.control_needs_the_opener_privileged",
	"fexit.arg_count_needed_without_btf_or_falls_back",
	"fexit.stack_arguments_intact_whatever_n",
	"fexit.more_stack_arguments_than_the_copy",
	"fexit.variadic_seq_printf_leaks_nothing",
	"fexit.rmmod_with_a_call_inside",
	"fexit.kthread_exits_inside",
	"fexit.cpu_dies_inside",
	"fexit.exit_probe_counts_only_calls_that_never_return",
	"fexit.btf_types_and_register_arguments",
	"fexit.btf_read_from_a_chroot",
	"fexit.caller_under_function_graph",
	"fexit.noreturn_refused",
	"fexit.target_module_goes_while_hooked",
	"fexit.target_module_goes_then_added_again",
	"fexit.delete_while_sleeping_then_readd",
	"fexit.drain_waits_for_idle_and_rcu_idle_code",
	"fexit.busy_when_bpf_has_the_function",
	"lost.failed_detach_keeps_the_trampoline",
};

#endif /* LBR_TEST_AGNOSTIC_H */
