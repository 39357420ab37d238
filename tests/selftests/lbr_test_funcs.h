/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The functions of vmlinux a batch (LBR_SNAP_IOC_ADD_TARGETS) can name,
 * with their addresses: for the batch kselftests and make bench's attach
 * line (tests/bench/lbr_snap_attach_bench.c).
 */
#ifndef LBR_TEST_FUNCS_H
#define LBR_TEST_FUNCS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbr_snap.h"

/* A function of vmlinux that ftrace can hook, and its entry. */
struct func {
	char name[LBR_SNAP_NAME_LEN];
	unsigned long long addr;
	int btf_id;		/* the caller's, 0 here */
};

static inline int func_by_name(const void *a, const void *b)
{
	return strcmp(((const struct func *)a)->name,
		      ((const struct func *)b)->name);
}

/*
 * The functions of vmlinux in available_filter_functions whose name one
 * symbol of kallsyms has (a name twice there is ambiguous by name), with
 * that symbol's address; those @want(name, @priv) accepts, each once.
 * Sorted by name; NULL if kallsyms or tracefs cannot be read.
 */
static inline struct func *vmlinux_funcs(size_t *nr,
					 bool (*want)(const char *, void *),
					 void *priv)
{
	FILE *kf = fopen("/proc/kallsyms", "r");
	FILE *af = fopen("/sys/kernel/tracing/available_filter_functions", "r");
	struct func *ks = NULL, *out = NULL, key, *f;
	size_t nk = 0, room = 0, n = 0, i;
	char line[512], name[256], type;
	unsigned long long addr;

	if (!af)
		af = fopen("/sys/kernel/debug/tracing/available_filter_functions",
			   "r");
	*nr = 0;
	if (!kf || !af)
		goto out;
	while (fgets(line, sizeof(line), kf)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    (type != 't' && type != 'T') || strchr(line, '[') ||
		    strlen(name) >= LBR_SNAP_NAME_LEN)
			continue;
		if (nk == room) {
			room = room ? 2 * room : 65536;
			ks = realloc(ks, room * sizeof(*ks));
			if (!ks)
				goto out;
		}
		memset(&ks[nk], 0, sizeof(ks[nk]));
		strcpy(ks[nk].name, name);
		ks[nk++].addr = addr;
	}
	qsort(ks, nk, sizeof(*ks), func_by_name);
	out = calloc(nk ? nk : 1, sizeof(*out));
	if (!out)
		goto out;
	while (fgets(line, sizeof(line), af)) {
		if (strchr(line, '[') || sscanf(line, "%255s", name) != 1 ||
		    strlen(name) >= LBR_SNAP_NAME_LEN || !want(name, priv))
			continue;
		strcpy(key.name, name);
		f = bsearch(&key, ks, nk, sizeof(*ks), func_by_name);
		if (!f || (f > ks && !strcmp(f[-1].name, name)) ||
		    (f + 1 < ks + nk && !strcmp(f[1].name, name)))
			continue;
		out[n++] = *f;
	}
	qsort(out, n, sizeof(*out), func_by_name);
	/* A name listed twice in available_filter_functions: once. */
	for (i = 1, *nr = n ? 1 : 0; i < n; i++)
		if (strcmp(out[i].name, out[*nr - 1].name))
			out[(*nr)++] = out[i];
out:
	if (kf)
		fclose(kf);
	if (af)
		fclose(af);
	free(ks);
	return out;
}

#endif /* LBR_TEST_FUNCS_H */
