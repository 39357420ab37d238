// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap report: aggregate the records by (function, return value) and,
 * within each, count the identical paths: the same call stack (from the
 * target's caller out, when the records have one) and the same branches.
 *
 * A record's path is the sequence of (from, to) of its entries without the
 * probe-path entries and without those before the first entry inside the
 * target function (see path.c), so that the kretprobe machinery, which is
 * the same every time, does not split otherwise identical paths.  Groups
 * and paths are kept in arrays searched linearly: a few dozen distinct
 * paths per group is the expected case.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "path.h"
#include "print.h"
#include "report.h"
#include "srcline.h"
#include "util.h"

struct edge {
	unsigned long long from, to;
};

struct path {
	unsigned long long count;
	unsigned long long seq;		/* order of first appearance */
	unsigned int nr;
	struct edge *edges;
	unsigned int nr_stack;
	unsigned long long *stack;	/* the caller first */
};

struct group {
	struct lbr_snap_record hdr;	/* first record: func, retval, type */
	unsigned long long count;
	unsigned long long seq;
	struct path *paths;
	size_t nr, cap;
};

struct report {
	const struct stream_opts *o;
	struct group *groups;
	size_t nr, cap;
	unsigned long long seq;
	struct edge edges[LBR_SNAP_MAX_ENTRIES];	/* scratch */
	unsigned long long stack[LBR_SNAP_MAX_STACK];	/* scratch */
};

static bool same_group(const struct group *g, const struct lbr_snap_record *h)
{
	return g->hdr.func_addr == h->func_addr &&
	       g->hdr.retval == h->retval && g->hdr.ret_type == h->ret_type;
}

static struct group *find_group(struct report *rp,
				const struct lbr_snap_record *h)
{
	struct group *g;
	size_t i;

	for (i = 0; i < rp->nr; i++)
		if (same_group(&rp->groups[i], h))
			return &rp->groups[i];
	if (rp->nr == rp->cap) {
		rp->cap = rp->cap ? 2 * rp->cap : 16;
		rp->groups = xrealloc(rp->groups, rp->cap * sizeof(*rp->groups));
	}
	g = &rp->groups[rp->nr++];
	memset(g, 0, sizeof(*g));
	g->hdr = *h;
	g->seq = rp->seq;
	return g;
}

static struct path *find_path(struct report *rp, struct group *g,
			      unsigned int nr, unsigned int nr_stack)
{
	size_t bytes = nr * sizeof(struct edge);
	size_t sbytes = nr_stack * sizeof(*rp->stack);
	struct path *p;
	size_t i;

	for (i = 0; i < g->nr; i++) {
		p = &g->paths[i];
		if (p->nr == nr && p->nr_stack == nr_stack &&
		    !memcmp(p->edges, rp->edges, bytes) &&
		    !memcmp(p->stack, rp->stack, sbytes))
			return p;
	}
	if (g->nr == g->cap) {
		g->cap = g->cap ? 2 * g->cap : 8;
		g->paths = xrealloc(g->paths, g->cap * sizeof(*g->paths));
	}
	p = &g->paths[g->nr++];
	p->count = 0;
	p->seq = rp->seq;
	p->nr = nr;
	p->edges = xrealloc(NULL, bytes ? bytes : 1);
	memcpy(p->edges, rp->edges, bytes);
	p->nr_stack = nr_stack;
	p->stack = xrealloc(NULL, sbytes ? sbytes : 1);
	memcpy(p->stack, rp->stack, sbytes);
	return p;
}

/* stream_opts.handle: count one record. */
static bool report_add(const struct rec *r, void *arg)
{
	struct report *rp = arg;
	struct lbr_snap_branch b;
	struct rec_span sp;
	struct group *g;
	unsigned int i, n = 0;

	rec_span(r, rp->o->ks, &sp);
	for (i = sp.target; i < sp.probe && n < LBR_SNAP_MAX_ENTRIES; i++) {
		rec_branch(r, i, &b);
		rp->edges[n].from = b.from;
		rp->edges[n++].to = b.to;
	}
	for (i = 0; i < r->hdr.nr_stack; i++)
		rp->stack[i] = rec_stack(r, i);
	g = find_group(rp, &r->hdr);
	g->count++;
	find_path(rp, g, n, r->hdr.nr_stack)->count++;
	rp->seq++;
	return true;
}

static int cmp_path(const void *a, const void *b)
{
	const struct path *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void sort_report(struct report *rp)
{
	size_t i;

	if (!rp->nr)
		return;		/* qsort() takes no NULL, even for none */
	qsort(rp->groups, rp->nr, sizeof(*rp->groups), cmp_group);
	for (i = 0; i < rp->nr; i++)
		qsort(rp->groups[i].paths, rp->groups[i].nr,
		      sizeof(struct path), cmp_path);
}

static bool is_thunk(const char *sym)
{
	const char *t = strstr(sym, "_thunk");

	return t && t < sym + strcspn(sym, "+");
}

/*
 * Where a path ends: the source of its last branch, skipping the return
 * thunks (__x86_return_thunk, its_return_thunk...) the return went through.
 */
static void path_end(const struct path *p, const struct ksyms *ks,
		     char *buf, size_t len)
{
	unsigned int i = p->nr;

	if (!i) {
		snprintf(buf, len, "(no branches)");
		return;
	}
	while (i--) {
		ksyms_format(ks, p->edges[i].from, buf, len);
		if (!is_thunk(buf))
			return;
	}
	ksyms_format(ks, p->edges[p->nr - 1].from, buf, len);
}

/*
 * A path's call stack and branches, with their source lines and inlined
 * functions as a record shows them, when there is debug info: a frame's
 * line is its call's (the return address less one).
 */
static void print_path_text(const struct path *p, size_t n, size_t nr,
			    const struct ksyms *ks)
{
	struct srcloc from, to;
	unsigned int i;

	printf("  %llu\u00d7 path %zu of %zu%s\n", p->count, n, nr,
	       p->nr ? ":" : ": no branches");
	for (i = 0; i < p->nr_stack; i++) {
		fputs(i ? "      " : "    called from ", stdout);
		print_addr_line(stdout, ks, p->stack[i], p->stack[i] - 1, &from);
		putchar('\n');
		print_inlines(stdout, 8, "", &from);
	}
	for (i = 0; i < p->nr; i++) {
		printf("    [#%u] ", i);
		print_addr_line(stdout, ks, p->edges[i].from, p->edges[i].from,
				&from);
		fputs(" -> ", stdout);
		print_addr_line(stdout, ks, p->edges[i].to, p->edges[i].to, &to);
		putchar('\n');
		print_inlines(stdout, 10, "from", &from);
		print_inlines(stdout, 10, "to", &to);
	}
}

static void print_group_text(const struct group *g, const struct ksyms *ks)
{
	char func[KSYM_BUF_LEN], ret[64], end[KSYM_BUF_LEN];
	size_t i;

	ksyms_func(ks, g->hdr.func_addr, func, sizeof(func));
	rec_format_ret(&g->hdr, ret, sizeof(ret));
	path_end(&g->paths[0], ks, end, sizeof(end));
	printf("%zu distinct %s led to %s from %s; the most common (%llu\u00d7) ends in %s\n",
	       g->nr, g->nr == 1 ? "path" : "paths", ret, func,
	       g->paths[0].count, end);
	for (i = 0; i < g->nr; i++)
		print_path_text(&g->paths[i], i + 1, g->nr, ks);
}

static void json_sym_key(const char *key, const struct ksyms *ks,
			 unsigned long long addr)
{
	char buf[KSYM_BUF_LEN];

	printf(",\"%s\":", key);
	if (ksyms_format(ks, addr, buf, sizeof(buf)))
		json_str(stdout, buf, sizeof(buf));
	else
		fputs("null", stdout);
}

static void print_path_json(const struct path *p, const struct ksyms *ks)
{
	char end[KSYM_BUF_LEN];
	unsigned int i;

	path_end(p, ks, end, sizeof(end));
	printf("{\"count\":%llu,\"ends_in\":", p->count);
	json_str(stdout, end, sizeof(end));
	fputs(",\"stack\":[", stdout);
	for (i = 0; i < p->nr_stack; i++) {
		fputs(i ? ",{\"addr\":" : "{\"addr\":", stdout);
		json_hex(stdout, p->stack[i]);
		json_sym_key("sym", ks, p->stack[i]);
		json_srcloc(stdout, "", ks, p->stack[i] - 1);
		putchar('}');
	}
	fputs("],\"branches\":[", stdout);
	for (i = 0; i < p->nr; i++) {
		fputs(i ? ",{\"from\":" : "{\"from\":", stdout);
		json_hex(stdout, p->edges[i].from);
		fputs(",\"to\":", stdout);
		json_hex(stdout, p->edges[i].to);
		json_sym_key("from_sym", ks, p->edges[i].from);
		json_sym_key("to_sym", ks, p->edges[i].to);
		json_srcloc(stdout, "from", ks, p->edges[i].from);
		json_srcloc(stdout, "to", ks, p->edges[i].to);
		putchar('}');
	}
	fputs("]}", stdout);
}

/* One JSON object per (function, return value), one a line. */
static void print_group_json(const struct group *g, const struct ksyms *ks)
{
	const char *err = rec_errno(&g->hdr);
	char func[KSYM_BUF_LEN], ret[64];
	size_t i;

	fputs("{\"func\":", stdout);
	if (ksyms_func(ks, g->hdr.func_addr, func, sizeof(func)))
		json_str(stdout, func, sizeof(func));
	else
		fputs("null", stdout);
	fputs(",\"func_addr\":", stdout);
	json_hex(stdout, g->hdr.func_addr);
	rec_format_ret(&g->hdr, ret, sizeof(ret));
	printf(",\"ret_type\":\"%s\",\"retval\":",
	       ret_type_name(g->hdr.ret_type));
	if (g->hdr.ret_type == LBR_SNAP_RET_VOID)
		fputs("null", stdout);
	else
		printf("%lld", g->hdr.retval);
	fputs(",\"ret\":", stdout);
	json_str(stdout, ret, sizeof(ret));
	fputs(",\"errno\":", stdout);
	if (err)
		json_str(stdout, err, strlen(err));
	else
		fputs("null", stdout);
	printf(",\"count\":%llu,\"nr_paths\":%zu,\"paths\":[", g->count, g->nr);
	for (i = 0; i < g->nr; i++) {
		if (i)
			putchar(',');
		print_path_json(&g->paths[i], ks);
	}
	fputs("]}\n", stdout);
}

static void print_report(const struct report *rp)
{
	const struct ksyms *ks = rp->o->ks;
	size_t i;

	for (i = 0; i < rp->nr; i++) {
		if (rp->o->json) {
			print_group_json(&rp->groups[i], ks);
			continue;
		}
		if (i)
			putchar('\n');
		print_group_text(&rp->groups[i], ks);
	}
}

static void free_report(struct report *rp)
{
	size_t i, j;

	for (i = 0; i < rp->nr; i++) {
		for (j = 0; j < rp->groups[i].nr; j++) {
			free(rp->groups[i].paths[j].edges);
			free(rp->groups[i].paths[j].stack);
		}
		free(rp->groups[i].paths);
	}
	free(rp->groups);
}

/*
 * Read records from @fd as streaming does (to the end, -n, --nonblock or
 * SIGINT/SIGTERM), then print the report.  Returns 0 or -exit code; what
 * was read before a corrupt record is still reported.
 */
int report_records(int fd, const struct stream_opts *o)
{
	struct stream_opts so = *o;
	struct report rp = { .o = &so };
	int ret;

	so.handle = report_add;
	so.arg = &rp;
	ret = stream_records(fd, &so);
	sort_report(&rp);
	print_report(&rp);
	free_report(&rp);
	return ret;
}
