// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap info: what the module says of itself (GET_INFO), as text or
 * JSON, and what the tool adds of the machine around it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lbr_snap.h>
#include "info.h"
#include "json.h"
#include "lbrfilter.h"
#include "record.h"

static const char *capture_name(unsigned int capture)
{
	switch (capture) {
	case LBR_SNAP_CAPTURE_ERRORS:
		return "errors";
	case LBR_SNAP_CAPTURE_ALL:
		return "all";
	default:
		return "unknown";
	}
}

/* The module names its backend; fall back to our names if it did not. */
static const char *info_backend(const struct lbr_snap_info *info)
{
	if (info->backend_name[0])
		return info->backend_name;
	return backend_name(info->backend);
}

/* How the module's captures read LBR (struct lbr_snap_info.lbr_read). */
static const char *read_name(unsigned int how)
{
	switch (how) {
	case LBR_SNAP_READ_MSR:
		return "msr";
	case LBR_SNAP_READ_XSAVES:
		return "xsaves";
	default:
		return "unknown";
	}
}

static const char *core_type_name(unsigned int type)
{
	switch (type) {
	case 0:
		return "not hybrid";
	case 0x40:
		return "P-core";
	case 0x20:
		return "E-core";
	default:
		return "unknown";
	}
}

/*
 * "kvm_intel" where KVM is present and LBR is Arch LBR, else NULL: KVM
 * does not clear IA32_LBR_CTL around a guest's run, so the records of
 * such a host may hold its guests' branches (docs/design.md, KVM).  With
 * legacy LBR a guest runs with its own DEBUGCTL, loaded at VM entry, and
 * VM exit clears it: the host records nothing of a guest that does not
 * use LBR itself.  Read under LBR_SNAP_ROOT, as the tool's other files of
 * the machine.
 */
static const char *kvm_host(const struct lbr_snap_info *info)
{
	const char *root = getenv("LBR_SNAP_ROOT");
	char path[PATH_MAX];

	if (info->backend != LBR_SNAP_BACKEND_ARCH)
		return NULL;
	snprintf(path, sizeof(path), "%s/sys/module/kvm_intel",
		 root ? root : "");
	return access(path, F_OK) ? NULL : "kvm_intel";
}

void info_print_text(const struct lbr_snap_info *info)
{
	const char *kvm;
	char name[128];
	unsigned int i;

	printf("abi_version: %u\n", info->abi_version);
	printf("backend: %.*s\n", (int)sizeof(info->backend_name),
	       info_backend(info));
	printf("lbr_format: %u\n", info->lbr_format);
	printf("lbr_depth: %u\n", info->lbr_depth);
	printf("mode: %.*s\n", (int)sizeof(info->mode), info->mode);
	printf("lbr_read: %s\n", read_name(info->lbr_read));
	printf("nr_cpus: %u\n", info->nr_cpus);
	printf("buffer_kb: %u\n", info->buffer_kb);
	printf("nr_targets: %u\n", info->nr_targets);
	printf("nr_batch_targets: %u\n", info->nr_batch_targets);
	printf("capture: %s\n", capture_name(info->capture));
	printf("stack_depth: %u\n", info->stack_depth);
	if (info->lbr_kinds) {
		lbr_filter_name(info->lbr_cpl, info->lbr_kinds, name,
				sizeof(name));
		printf("lbr_filter: %s\n", name);
	}
	printf("reason: %.*s\n", (int)sizeof(info->reason), info->reason);
	printf("version: %.*s\n", (int)sizeof(info->version), info->version);
	for (i = 0; i < info->nr_cpu_types && i < LBR_SNAP_MAX_CPU_TYPES; i++) {
		const struct lbr_snap_cpu_type *t = &info->cpu_types[i];

		printf("cpu_type: cpus %.*s (%s, %u): %s, format %u, depth %u\n",
		       (int)sizeof(t->cpus), t->cpus,
		       core_type_name(t->core_type), t->nr_cpus,
		       backend_name(t->backend), t->lbr_format, t->lbr_depth);
	}
	if (info->hypervisor[0])
		printf("hypervisor: %.*s\n", (int)sizeof(info->hypervisor),
		       info->hypervisor);
	if (info->hypervisor[0] && info->backend != LBR_SNAP_BACKEND_NONE &&
	    !strncmp(info->mode, "raw", sizeof(info->mode)))
		printf("in_guest: in mode=raw each capture reads and writes the LBR control MSR (msr_accesses), a VM exit each where the hypervisor traps them (KVM does); mode=perf leaves LBR to the hypervisor's LBR virtualisation\n");
	kvm = kvm_host(info);
	if (kvm)
		printf("kvm_host: %s is present and KVM leaves Arch LBR on in its guests' runs: records may hold a guest's branches, marked \"(not this kernel's text)\" where their addresses cannot be this kernel's\n",
		       kvm);
	/* CPUs whose LBR failed its check (modules before it check none). */
	if (info->nr_cpus_failed)
		printf("cpus_failed: %u (cpus %.*s): %.*s\n",
		       info->nr_cpus_failed, (int)sizeof(info->cpus_failed),
		       info->cpus_failed, (int)sizeof(info->cpu_failure),
		       info->cpu_failure);
	if (info->nr_cpus_perf_off)
		printf("cpus_perf_off: %u (cpus %.*s): perf does not run lbr_snap's event there now: LBR is off, records say WAS_OFF (or NO_LBR where perf created none)\n",
		       info->nr_cpus_perf_off,
		       (int)sizeof(info->cpus_perf_off), info->cpus_perf_off);
	/* 0 from modules before them, and without LBR. */
	if (info->capture_msrs)
		printf("msr_accesses: %u a recorded return, %u one filtered after the freeze, 0 a success an fexit trampoline lets go\n",
		       info->capture_msrs, info->filtered_msrs);
}

void info_print_json(const struct lbr_snap_info *info)
{
	char name[128];
	unsigned int i;

	printf("{\"abi_version\":%u,\"backend\":", info->abi_version);
	json_str(stdout, info_backend(info), sizeof(info->backend_name));
	printf(",\"lbr_format\":%u,\"lbr_depth\":%u",
	       info->lbr_format, info->lbr_depth);
	fputs(",\"mode\":", stdout);
	json_str(stdout, info->mode, sizeof(info->mode));
	printf(",\"lbr_read\":\"%s\"", read_name(info->lbr_read));
	printf(",\"nr_cpus\":%u", info->nr_cpus);
	printf(",\"buffer_kb\":%u,\"nr_targets\":%u,\"nr_batch_targets\":%u,\"capture\":\"%s\"",
	       info->buffer_kb, info->nr_targets, info->nr_batch_targets,
	       capture_name(info->capture));
	printf(",\"stack_depth\":%u", info->stack_depth);
	/* Modules before it say nothing of their filter: null. */
	fputs(",\"lbr_filter\":", stdout);
	if (info->lbr_kinds) {
		lbr_filter_name(info->lbr_cpl, info->lbr_kinds, name,
				sizeof(name));
		json_str(stdout, name, sizeof(name));
	} else {
		fputs("null", stdout);
	}
	fputs(",\"reason\":", stdout);
	json_str(stdout, info->reason, sizeof(info->reason));
	fputs(",\"version\":", stdout);
	json_str(stdout, info->version, sizeof(info->version));
	fputs(",\"cpu_types\":[", stdout);
	for (i = 0; i < info->nr_cpu_types && i < LBR_SNAP_MAX_CPU_TYPES; i++) {
		const struct lbr_snap_cpu_type *t = &info->cpu_types[i];

		printf("%s{\"core_type\":\"%s\",\"cpus\":", i ? "," : "",
		       core_type_name(t->core_type));
		json_str(stdout, t->cpus, sizeof(t->cpus));
		printf(",\"nr_cpus\":%u,\"backend\":\"%s\",\"lbr_format\":%u,\"lbr_depth\":%u}",
		       t->nr_cpus, backend_name(t->backend), t->lbr_format,
		       t->lbr_depth);
	}
	printf("],\"cpus_failed\":{\"nr\":%u,\"cpus\":",
	       info->nr_cpus_failed);
	json_str(stdout, info->cpus_failed, sizeof(info->cpus_failed));
	fputs(",\"reason\":", stdout);
	json_str(stdout, info->cpu_failure, sizeof(info->cpu_failure));
	/* "" from bare metal and from modules before it alike. */
	fputs("},\"hypervisor\":", stdout);
	json_str(stdout, info->hypervisor, sizeof(info->hypervisor));
	printf(",\"capture_msrs\":%u,\"filtered_msrs\":%u",
	       info->capture_msrs, info->filtered_msrs);
	printf(",\"cpus_perf_off\":{\"nr\":%u,\"cpus\":",
	       info->nr_cpus_perf_off);
	json_str(stdout, info->cpus_perf_off, sizeof(info->cpus_perf_off));
	/* Keys added later come last. */
	fputs("},\"kvm_host\":", stdout);
	json_opt_str(stdout, kvm_host(info));
	fputs("}\n", stdout);
}
