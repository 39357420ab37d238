// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: the LBR filter's words.  perf's names stand for the sets of
 * kinds perf maps them onto in LBR_SELECT (arch/x86/events/intel/lbr.c,
 * hsw_lbr_sel_map).  The module's lbr_filter= takes the same kinds, but
 * its privilege word comes first and its "any" there is both privileges;
 * here "any" is every kind, as in perf -j, and kernel/user go anywhere.
 */
#include <stdio.h>
#include <string.h>

#include "lbrfilter.h"
#include "util.h"

#define K(x)	LBR_SNAP_KIND_##x

/* Largest sets first: lbr_filter_name() takes them greedily. */
static const struct {
	const char *name;
	unsigned int kinds;
} sets[] = {
	{ "any", LBR_SNAP_KIND_ALL },
	{ "any_call", K(REL_CALL) | K(IND_CALL) | K(FAR) },
	{ "any_return", K(RET) | K(FAR) },
	{ "cond", K(JCC) },
	{ "call", K(REL_CALL) },
	{ "ind_call", K(IND_CALL) },
	{ "ind_jump", K(IND_JMP) },
	/* lbr_snap's own, for the kinds perf has no name for alone. */
	{ "jcc", K(JCC) },
	{ "rel_call", K(REL_CALL) },
	{ "ret", K(RET) },
	{ "ind_jmp", K(IND_JMP) },
	{ "rel_jmp", K(REL_JMP) },
	{ "far", K(FAR) },
};

int lbr_filter_parse(const char *spec, struct lbr_snap_lbr_filter *f,
		     char *why, size_t len)
{
	const char *p = spec, *end;
	size_t n, i;

	memset(f, 0, sizeof(*f));
	do {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if ((n == 6 && !strncmp(p, "kernel", n)) ||
		    (n == 1 && *p == 'k')) {
			f->cpl |= LBR_SNAP_LBR_KERNEL;
		} else if ((n == 4 && !strncmp(p, "user", n)) ||
			   (n == 1 && *p == 'u')) {
			f->cpl |= LBR_SNAP_LBR_USER;
		} else {
			for (i = 0; i < ARRAY_SIZE(sets); i++)
				if (strlen(sets[i].name) == n &&
				    !strncmp(p, sets[i].name, n))
					break;
			if (i == ARRAY_SIZE(sets)) {
				snprintf(why, len, "'%.*s' is not a kind of branch: use any, any_call, any_return, cond, call, ind_call, ind_jump (perf's names), jcc, rel_call, ret, ind_jmp, rel_jmp, far, and kernel or user",
					 (int)n, p);
				return -1;
			}
			f->kinds |= sets[i].kinds;
		}
		p = end + 1;
	} while (end);
	/* A privilege word alone: every kind, as lbr_filter=kernel has it. */
	if (!f->kinds && f->cpl)
		f->kinds = LBR_SNAP_KIND_ALL;
	if (!f->kinds) {
		snprintf(why, len, "'%s' names no kind of branch (any: every kind)",
			 spec);
		return -1;
	}
	if (!f->cpl)
		f->cpl = LBR_SNAP_LBR_KERNEL;
	return 0;
}

void lbr_filter_name(unsigned int cpl, unsigned int kinds, char *buf,
		     size_t len)
{
	unsigned int left = kinds;
	size_t i, at = 0;

	buf[0] = '\0';
	if (cpl & LBR_SNAP_LBR_KERNEL)
		at += snprintf(buf + at, len - at, "kernel");
	if ((cpl & LBR_SNAP_LBR_USER) && at < len)
		at += snprintf(buf + at, len - at, "%suser", at ? "," : "");
	/* A set only where all its kinds are there and one is still left. */
	for (i = 0; i < ARRAY_SIZE(sets) && at < len; i++) {
		if ((kinds & sets[i].kinds) != sets[i].kinds ||
		    !(left & sets[i].kinds))
			continue;
		at += snprintf(buf + at, len - at, "%s%s", at ? "," : "",
			       sets[i].name);
		left &= ~sets[i].kinds;
	}
}
