// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: split a record's entries into what led to the target function,
 * the function's own path, and the probe machinery's entries.
 *
 * The target function's range is [func_addr, next kallsyms symbol); without
 * symbols it is the entry address alone.
 */
#include "path.h"

static bool in_range(unsigned long long a, unsigned long long start,
		     unsigned long long end)
{
	return a >= start && a < end;
}

void rec_span(const struct rec *r, const struct ksyms *ks,
	      struct rec_span *sp)
{
	const struct lbr_snap_record *h = &r->hdr;
	unsigned long long start = h->func_addr, end;
	struct lbr_snap_branch b;
	unsigned int i;

	sp->nr = h->nr_entries;
	sp->probe = h->probe_entries < sp->nr ? sp->nr - h->probe_entries : 0;
	sp->target = 0;
	sp->found = false;
	end = ksyms_func_end(ks, start);
	if (end <= start)
		end = start + 1;
	for (i = 0; i < sp->probe; i++) {
		rec_from_to(r, i, &b);
		if (in_range(b.from, start, end) || in_range(b.to, start, end)) {
			sp->target = i;
			sp->found = true;
			return;
		}
	}
}
