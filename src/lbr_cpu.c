// SPDX-License-Identifier: GPL-2.0
/*
 * LBR per CPU type: what each CPU has, and whether lbr_snap can work with
 * the mix.  Pure functions of what the CPUs reported (lbr_cpu.h), built into
 * the module and into the user-space unit test.
 *
 * The rule: every CPU must have the backend lbr_snap chose and, for legacy
 * LBR, the same format (the decoder and the record's lbr_format are one per
 * module).  Depths may differ: each CPU reads, and in mode=raw programs,
 * its own.  Arch LBR's optional fields (CPUID.0x1c:ECX: mispredict, cycles,
 * branch type) may differ too: a CPU without one reads it as 0.
 */
#ifdef __KERNEL__
#include <linux/bitops.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>
#else
#include <errno.h>
#include <stdio.h>
#include <string.h>
#define fls(x)	((x) ? 32 - __builtin_clz(x) : 0)
#endif

#include "lbr_cpu.h"

const char *lbr_core_type_name(u8 type)
{
	switch (type) {
	case 0:
		return "not hybrid";
	case LBR_CORE_TYPE_CORE:
		return "P-core";
	case LBR_CORE_TYPE_ATOM:
		return "E-core";
	default:
		return "unknown core type";
	}
}

/**
 * lbr_cpu_kind_of - what one CPU has for a backend
 * @id: what the CPU reported
 * @backend: the backend lbr_snap chose (enum lbr_snap_backend)
 * @legacy_depth: legacy LBR's depth, from the model table (one model per
 *	package: hybrid parts share family and model)
 * @k: the result
 */
void lbr_cpu_kind_of(const struct lbr_cpu_id *id, unsigned int backend,
		     unsigned int legacy_depth, struct lbr_cpu_kind *k)
{
	memset(k, 0, sizeof(*k));
	k->seen = true;
	if (id->cpuid7_edx & LBR_CPUID7_EDX_HYBRID)
		k->core_type = id->cpuid1a_eax >> 24;
	switch (backend) {
	case LBR_SNAP_BACKEND_ARCH:
		/* Depth mask bit n means depth 8 * (n + 1); use the deepest. */
		if (!(id->cpuid7_edx & LBR_CPUID7_EDX_ARCH_LBR) ||
		    !(id->cpuid1c_eax & 0xff))
			return;
		k->depth = fls(id->cpuid1c_eax & 0xff) * 8;
		break;
	case LBR_SNAP_BACKEND_INTEL:
		if (!id->perf_caps_ok || !legacy_depth)
			return;
		k->format = id->perf_caps & 0x3f;
		k->depth = legacy_depth;
		break;
	case LBR_SNAP_BACKEND_AMD:
		/* LbrExtV2 parts are not hybrid: one depth for all. */
		k->depth = legacy_depth;
		break;
	default:
		return;
	}
	k->backend = backend;
}

static bool lbr_kind_same(const struct lbr_cpu_kind *a,
			  const struct lbr_cpu_kind *b)
{
	return a->core_type == b->core_type && a->backend == b->backend &&
	       a->format == b->format && a->depth == b->depth;
}

/* A CPU list being written, "0-3,8": where its last run starts. */
struct lbr_cpulist {
	int last;
	int start;
	size_t at;
};

/* Append @cpu (CPUs come in increasing order) to @s, as far as it fits. */
static void lbr_cpulist_add(char *s, size_t len, unsigned int cpu,
			    struct lbr_cpulist *l)
{
	size_t n;

	if (l->last >= 0 && cpu == (unsigned int)l->last + 1) {
		snprintf(s + l->at, len - l->at, "%d-%u", l->start, cpu);
	} else {
		n = strnlen(s, len);
		if (n)
			snprintf(s + n, len - n, ",");
		n = strnlen(s, len);
		l->at = n;
		l->start = cpu;
		snprintf(s + n, len - n, "%u", cpu);
	}
	l->last = cpu;
}

/**
 * lbr_cpu_groups - group CPUs of the same kind
 * @k: one kind per CPU number (unseen CPUs are left out)
 * @n: CPU numbers in @k
 * @g: room for @max groups, in order of their first CPU
 * @max: the room in @g
 * Return: the number of groups (CPUs of kinds past @max are left out).
 */
unsigned int lbr_cpu_groups(const struct lbr_cpu_kind *k, unsigned int n,
			    struct lbr_cpu_group *g, unsigned int max)
{
	struct lbr_cpulist l[8];
	unsigned int cpu, i, nr = 0;

	if (max > 8)
		max = 8;
	for (cpu = 0; cpu < n; cpu++) {
		if (!k[cpu].seen)
			continue;
		for (i = 0; i < nr; i++)
			if (lbr_kind_same(&g[i].kind, &k[cpu]))
				break;
		if (i == nr) {
			if (nr == max)
				continue;
			memset(&g[nr], 0, sizeof(g[nr]));
			g[nr].kind = k[cpu];
			l[nr].last = -1;
			l[nr].start = -1;
			l[nr].at = 0;
			nr++;
		}
		g[i].nr++;
		lbr_cpulist_add(g[i].cpus, sizeof(g[i].cpus), cpu, &l[i]);
	}
	return nr;
}

static int lbr_group_desc(char *s, size_t len, const struct lbr_cpu_group *g)
{
	const struct lbr_cpu_kind *k = &g->kind;

	if (k->backend == LBR_SNAP_BACKEND_NONE)
		return snprintf(s, len, "CPU %s (%s): no such LBR", g->cpus,
				lbr_core_type_name(k->core_type));
	if (k->backend == LBR_SNAP_BACKEND_INTEL)
		return snprintf(s, len, "CPU %s (%s): format %u, depth %u",
				g->cpus, lbr_core_type_name(k->core_type),
				k->format, k->depth);
	return snprintf(s, len, "CPU %s (%s): depth %u", g->cpus,
			lbr_core_type_name(k->core_type), k->depth);
}

/**
 * lbr_cpu_check - can lbr_snap work with these CPUs?
 * @k: one kind per CPU number
 * @n: CPU numbers in @k
 * @why: for a refusal, what differs, naming the CPUs of each kind
 * @len: the room in @why
 * Return: 0, or -ENODEV with @why set.
 */
int lbr_cpu_check(const struct lbr_cpu_kind *k, unsigned int n,
		  char *why, unsigned int len)
{
	struct lbr_cpu_group g[8];
	unsigned int i, nr = lbr_cpu_groups(k, n, g, 8);
	bool ok = nr > 0;
	size_t at;

	for (i = 0; i < nr; i++)
		if (g[i].kind.backend == LBR_SNAP_BACKEND_NONE ||
		    g[i].kind.backend != g[0].kind.backend ||
		    g[i].kind.format != g[0].kind.format)
			ok = false;
	if (ok)
		return 0;
	at = snprintf(why, len, "CPUs differ: ");
	for (i = 0; i < nr && at < len; i++) {
		at += lbr_group_desc(why + at, len - at, &g[i]);
		if (i + 1 < nr && at < len)
			at += snprintf(why + at, len - at, "; ");
	}
	return -ENODEV;
}
