// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap why: for each system call of a command that failed, the hooked
 * functions that returned its error, outermost first, the deepest of them
 * (the origin) and the branch in it that led to its error return.
 *
 * trace.c runs the command under the module's tree filter, which records
 * only the returns of the command's tasks and numbers their system calls
 * (LBR_SNAP_REC_SYSCALL).  Records come here as they are read, in time
 * order (why_add()).  A thread's records of one system call wait, until
 * the record of an entry function (by default the system call's own,
 * __x64_sys_*) returning an error in the same system call closes it: one
 * failure.  A system call that ends without one (it succeeded, or its
 * entry function is not hooked) lets its records go when the thread's
 * next one comes; they are counted.  Without the tree filter (a module
 * before it), a thread's records since its previous entry record make one
 * failure, which may then hold errors that earlier system calls handled.
 *
 * The origin is the first record of the failure with the system call's
 * error value: the deepest hooked function that returned it.  In its LBR
 * the decision is the newest branch inside the function, other than its
 * return, that goes from the function to the function: the last branch
 * that led to the error return.
 *
 * Of each kind of failure (entry function and error), the first
 * WHY_KEEP_PER_KIND are kept; the others are counted, and said.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errname.h"
#include "json.h"
#include "print.h"
#include "srcline.h"
#include "util.h"
#include "why.h"

#define WHY_KEEP_PER_KIND	8
#define WHY_PENDING_MAX		4096	/* records of one system call */
#define WHY_GAPS_MAX		4096	/* drops of records remembered */

/* A record kept: its header, and its bytes. */
struct wrec {
	struct rec r;
	unsigned char *raw;
};

/*
 * A thread's records of its system call now, or (@out) those it made
 * outside system calls since its last entry record there: a page fault's,
 * an entry function's that runs in no system call.
 */
struct wtask {
	__u32 pid;
	bool out;
	__u32 seq;
	__u64 begun_ns;
	struct wrec *v;
	size_t nr, cap;
};

struct wfail {
	struct wrec *chain;	/* oldest first; the entry record last */
	size_t nr;
	size_t origin;		/* index in @chain */
	long long err;
	__u64 from_ns, to_ns;	/* when it ran */
	bool lossy;		/* the module dropped records meanwhile */
};

struct wkind {
	unsigned long long func;
	long long err;
	unsigned long long seen;
};

struct why {
	const struct ksyms *ks;
	bool json;
	bool tree;		/* records carry their system call */
	struct wtask *tasks;
	size_t nr_tasks;
	struct wfail *fails;
	size_t nr_fails, cap_fails;
	struct wkind *kinds;
	size_t nr_kinds;
	unsigned long long unkept;	/* failures past WHY_KEEP_PER_KIND */
	unsigned long long handled;	/* records of calls that succeeded */
	unsigned long long overflow;	/* past WHY_PENDING_MAX */
	unsigned long long outside;	/* not in a system call */
	unsigned long long lossy;	/* failures with records dropped */
	/*
	 * Where records were lost: from a CPU's record before a drop to its
	 * record after it (LBR_SNAP_REC_AFTER_DROP), in time.  A failure
	 * whose system call overlaps one may have lost its own, whichever
	 * CPU it ran on (a task moves).  Past WHY_GAPS_MAX, all may have.
	 */
	struct { __u64 from, to; } *gaps;
	size_t nr_gaps, cap_gaps;
	bool gaps_full;
	__u64 *cpu_ts;		/* each CPU's last record */
	size_t nr_cpu_ts;
	const unsigned long long *hooked;	/* why_hooked() */
	size_t nr_hooked;
	unsigned int stack_max;
};

static const char *syscall_of(const char *name);

struct why *why_new(const struct ksyms *ks, bool json)
{
	struct why *w = xrealloc(NULL, sizeof(*w));

	memset(w, 0, sizeof(*w));
	w->ks = ks;
	w->json = json;
	w->tree = true;
	return w;
}

void why_no_tree(struct why *w)
{
	w->tree = false;
}

void why_hooked(struct why *w, const unsigned long long *addrs, size_t nr,
		unsigned int stack_max)
{
	w->hooked = addrs;
	w->nr_hooked = nr;
	w->stack_max = stack_max;
}

/*
 * @r's depth among the hooked functions: how many calls of them its call
 * stack is inside (0, the outermost hooked call), or -1 without a stack.
 * A hooked call shows in the stack as the frames of its function: where
 * it called the next one (none if that was a tail call), then, under
 * fexit, lbr_snap_fexit's trampoline and the function's fentry call's
 * return, at most 9 bytes in (ENDBR and the call), which ends that call's
 * frames.  *@cut: the stack holds as many frames as the module keeps, and
 * hooked calls further out may not be among them.
 */
static int depth_of(const struct why *w, const struct rec *r, bool *cut)
{
	unsigned int i, n = r->hdr.nr_stack;
	unsigned long long prev = 0;
	bool prev_ended = true;
	int depth = 0;

	*cut = false;
	if (!n || !w->nr_hooked)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned long long off, a = rec_stack(r, i), fn;
		const char *mod = ksyms_module(w->ks, a);

		if (mod && !strcmp(mod, "lbr_snap_fexit"))
			continue;
		if (!ksyms_name(w->ks, a, &off))
			off = 0x10;	/* its own, unknown function */
		fn = a - off;
		if ((fn != prev || prev_ended) &&
		    bsearch(&fn, w->hooked, w->nr_hooked, sizeof(fn), cmp_ull))
			depth++;
		prev = fn;
		prev_ended = off <= 9;
	}
	*cut = w->stack_max && n >= w->stack_max;
	return depth;
}

static void wrec_copy(struct wrec *d, const struct rec *r)
{
	d->raw = xrealloc(NULL, r->hdr.size);
	memcpy(d->raw, r->raw, r->hdr.size);
	d->r.hdr = r->hdr;
	d->r.raw = d->raw;
}

static void task_drop(struct why *w, struct wtask *t, bool count)
{
	size_t i;

	for (i = 0; i < t->nr; i++)
		free(t->v[i].raw);
	if (count && t->out)
		w->outside += t->nr;
	else if (count)
		w->handled += t->nr;
	t->nr = 0;
}

static struct wtask *task_of(struct why *w, __u32 pid, bool out)
{
	struct wtask *t;
	size_t i;

	for (i = 0; i < w->nr_tasks; i++)
		if (w->tasks[i].pid == pid && w->tasks[i].out == out)
			return &w->tasks[i];
	w->tasks = xrealloc(w->tasks, (w->nr_tasks + 1) * sizeof(*w->tasks));
	t = &w->tasks[w->nr_tasks++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->out = out;
	return t;
}

/* An errno, as a function returns it: int, long, or ERR_PTR(). */
static bool is_errno(const struct lbr_snap_record *h)
{
	return h->ret_type != LBR_SNAP_RET_BOOL &&
	       h->ret_type != LBR_SNAP_RET_VOID &&
	       h->retval < 0 && h->retval >= -4095;
}

/* Whether this failure's kind has had its fill; counts it either way. */
static bool kind_full(struct why *w, const struct lbr_snap_record *h)
{
	size_t i;

	for (i = 0; i < w->nr_kinds; i++) {
		struct wkind *k = &w->kinds[i];

		if (k->func == h->func_addr && k->err == h->retval)
			return ++k->seen > WHY_KEEP_PER_KIND;
	}
	w->kinds = xrealloc(w->kinds, (w->nr_kinds + 1) * sizeof(*w->kinds));
	w->kinds[w->nr_kinds++] = (struct wkind){
		.func = h->func_addr, .err = h->retval, .seen = 1,
	};
	return false;
}

/* Whether records may have been lost between @from and @to. */
static bool lost_in(const struct why *w, __u64 from, __u64 to)
{
	size_t i;

	if (w->gaps_full)
		return true;
	for (i = 0; i < w->nr_gaps; i++)
		if (w->gaps[i].from <= to && w->gaps[i].to >= from)
			return true;
	return false;
}

/* Note @h's CPU's gap, if it dropped records before @h. */
static void note_gap(struct why *w, const struct lbr_snap_record *h)
{
	size_t n = w->nr_cpu_ts;

	/* A record's CPU is below the kernel's nr_cpu_ids. */
	if (h->cpu >= 1u << 16)
		return;
	if (h->cpu >= n) {
		w->nr_cpu_ts = h->cpu + 1;
		w->cpu_ts = xrealloc(w->cpu_ts, w->nr_cpu_ts * sizeof(*w->cpu_ts));
		memset(w->cpu_ts + n, 0, (w->nr_cpu_ts - n) * sizeof(*w->cpu_ts));
	}
	if (h->flags & LBR_SNAP_REC_AFTER_DROP) {
		if (w->nr_gaps == WHY_GAPS_MAX) {
			w->gaps_full = true;
		} else {
			if (w->nr_gaps == w->cap_gaps) {
				w->cap_gaps = w->cap_gaps ? 2 * w->cap_gaps : 16;
				w->gaps = xrealloc(w->gaps, w->cap_gaps *
						   sizeof(*w->gaps));
			}
			w->gaps[w->nr_gaps].from = w->cpu_ts[h->cpu];
			w->gaps[w->nr_gaps++].to = h->ts_ns;
		}
	}
	w->cpu_ts[h->cpu] = h->ts_ns;
}

/* The entry record @r closes thread @t's system call: a failure. */
static void close_call(struct why *w, struct wtask *t, const struct rec *r)
{
	struct wfail *f;
	size_t i;

	if (!is_errno(&r->hdr)) {
		task_drop(w, t, true);
		return;
	}
	if (kind_full(w, &r->hdr)) {
		w->unkept++;
		task_drop(w, t, false);
		return;
	}
	if (w->nr_fails == w->cap_fails) {
		w->cap_fails = w->cap_fails ? 2 * w->cap_fails : 16;
		w->fails = xrealloc(w->fails, w->cap_fails * sizeof(*w->fails));
	}
	f = &w->fails[w->nr_fails++];
	f->chain = xrealloc(NULL, (t->nr + 1) * sizeof(*f->chain));
	f->err = r->hdr.retval;
	f->nr = 0;
	f->origin = SIZE_MAX;
	/*
	 * The errors only: a pointer's NULL is success to many callers
	 * (walk_component(), lookup_fast()).
	 */
	for (i = 0; i < t->nr; i++) {
		if (!is_errno(&t->v[i].r.hdr)) {
			free(t->v[i].raw);
			continue;
		}
		if (f->origin == SIZE_MAX && t->v[i].r.hdr.retval == f->err)
			f->origin = f->nr;
		f->chain[f->nr++] = t->v[i];
	}
	wrec_copy(&f->chain[f->nr++], r);
	if (f->origin == SIZE_MAX)
		f->origin = f->nr - 1;
	/* Judged at the report: a later record may show a drop in it. */
	if (w->tree && (r->hdr.flags & LBR_SNAP_REC_SYSCALL))
		f->from_ns = r->hdr.syscall_ns;
	else if (r->hdr.entry_ns && r->hdr.entry_ns < f->chain[0].r.hdr.ts_ns)
		f->from_ns = r->hdr.entry_ns;
	else
		f->from_ns = f->chain[0].r.hdr.ts_ns;
	f->to_ns = r->hdr.ts_ns;
	t->nr = 0;
}

static bool same_call(const struct wtask *t, const struct lbr_snap_record *h)
{
	return t->seq == h->syscall_seq && t->begun_ns == h->syscall_ns;
}

void why_add(struct why *w, const struct rec *r, bool entry)
{
	const struct lbr_snap_record *h = &r->hdr;
	bool out = w->tree && !(h->flags & LBR_SNAP_REC_SYSCALL);
	struct wtask *t = task_of(w, h->pid, out);

	note_gap(w, h);
	/*
	 * Outside system calls, a thread's records wait for an entry
	 * function's there (-e), which closes them as a system call's
	 * does; or are counted as outside when the next ones come past
	 * WHY_PENDING_MAX, or at the end.
	 */
	if (out && !entry && t->nr == WHY_PENDING_MAX)
		task_drop(w, t, true);
	/*
	 * A system call's own function outside a numbered system call: one
	 * begun before the tree filter took the task.  Not a failure of its
	 * own (it would say "not in a system call"): counted, as before.
	 */
	if (out && entry && syscall_of(ksyms_name(w->ks, h->func_addr,
						  &(unsigned long long){ 0 }))) {
		task_drop(w, t, true);
		w->outside++;
		return;
	}
	if (w->tree && !out) {
		if (!same_call(t, h)) {
			task_drop(w, t, true);
			t->seq = h->syscall_seq;
			t->begun_ns = h->syscall_ns;
		}
	}
	if (entry) {
		close_call(w, t, r);
		return;
	}
	if (t->nr == WHY_PENDING_MAX) {
		/* The oldest are kept: the origin is among them. */
		w->overflow++;
		return;
	}
	if (t->nr == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 32;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	wrec_copy(&t->v[t->nr++], r);
}

/* What follows a system call wrapper's prefix in @name, or NULL. */
static const char *syscall_of(const char *name)
{
	static const char *const prefixes[] = {
		"__x64_sys_", "__ia32_sys_", "__ia32_compat_sys_",
		"__x64_compat_sys_", "__se_sys_", "__do_sys_",
	};
	size_t i, n;

	for (i = 0; name && i < ARRAY_SIZE(prefixes); i++) {
		n = strlen(prefixes[i]);
		if (!strncmp(name, prefixes[i], n))
			return name + n;
	}
	return NULL;
}

/* "openat" of __x64_sys_openat; else the entry function's name. */
static const char *call_name(const struct why *w, const struct wfail *f,
			     char *buf, size_t len)
{
	const struct wrec *e = &f->chain[f->nr - 1];
	unsigned long long off;
	const char *name = ksyms_name(w->ks, e->r.hdr.func_addr, &off);

	if (!name)
		snprintf(buf, len, "%#llx", (unsigned long long)e->r.hdr.func_addr);
	else
		snprintf(buf, len, "%s", syscall_of(name) ? syscall_of(name) : name);
	return buf;
}

static bool in_func(unsigned long long a, unsigned long long lo,
		    unsigned long long hi)
{
	return a >= lo && a < hi;
}

/*
 * A branch within one function whose name has @call's (a system call's
 * own body, __do_sys_CALL, __sys_CALL...), not lbr_snap's.
 */
static bool own_jump(const struct why *w, const struct lbr_snap_branch *b,
		     const char *call)
{
	const char *name, *mod = ksyms_module(w->ks, b->from);
	unsigned long long lo, hi;

	name = ksyms_name(w->ks, b->from, &lo);
	if (!name || !strstr(name, call) ||
	    (mod && !strncmp(mod, "lbr_snap", 8)))
		return false;
	lo = b->from - lo;
	hi = ksyms_func_end(w->ks, lo);
	return hi && in_func(b->to, lo, hi);
}

/*
 * The branch of the origin's record that led to its error return: the
 * newest one from the function into the function, its return aside (and
 * the calls out of it, and what they did).  Where there is none and the
 * origin is a system call's wrapper, the newest jump within a function
 * named after the system call: its __do_sys_ body, which decided.  Else
 * nothing: a jump elsewhere may be a clean-up's (kfree()).  Returns its
 * index, or -1.
 */
static int decision(const struct why *w, const struct rec *r)
{
	const struct lbr_snap_record *h = &r->hdr;
	unsigned long long lo = h->func_addr;
	unsigned long long hi = ksyms_func_end(w->ks, lo), off;
	unsigned int n = h->nr_entries, i;
	struct lbr_snap_branch b;
	const char *call;

	if (h->flags & LBR_SNAP_REC_NO_RETURN)
		return -1;
	n -= h->probe_entries < n ? h->probe_entries : n;
	for (i = n; hi && i-- > 0;) {
		rec_from_to(r, i, &b);
		if (in_func(b.from, lo, hi) && in_func(b.to, lo, hi))
			return i;
	}
	call = syscall_of(ksyms_name(w->ks, lo, &off));
	for (i = n; call && i-- > 0;) {
		rec_from_to(r, i, &b);
		if (own_jump(w, &b, call))
			return i;
	}
	return -1;
}

static bool src_of(const struct why *w, unsigned long long addr,
		   struct srcloc *loc)
{
	return w->ks->lines && srclines_lookup(w->ks->lines, w->ks, addr, loc) &&
	       loc->file;
}

static void text_ret(FILE *o, const struct lbr_snap_record *h)
{
	char ret[64];

	rec_format_ret(h, ret, sizeof(ret));
	fprintf(o, "%s", ret);
}

static void print_text(const struct why *w, const struct wfail *f, FILE *o)
{
	const struct wrec *e = &f->chain[f->nr - 1];
	const struct wrec *org = &f->chain[f->origin];
	const char *err = errno_name(-f->err);
	struct srcloc loc;
	char name[KSYM_BUF_LEN], cn[128];
	size_t i;
	int d;

	fprintf(o, "%s() = %lld (%s%s%s)  %.*s[%u] tid %u",
		call_name(w, f, cn, sizeof(cn)), f->err, err ? err : "",
		err ? ": " : "", strerror((int)-f->err),
		LBR_SNAP_COMM_LEN, e->r.hdr.comm, e->r.hdr.tgid,
		e->r.hdr.pid);
	if (e->r.hdr.flags & LBR_SNAP_REC_SYSCALL)
		fprintf(o, ", syscall %d, %.3f ms", e->r.hdr.syscall_nr,
			(e->r.hdr.ts_ns - e->r.hdr.syscall_ns) / 1e6);
	else if (w->tree)
		fputs(", not in a system call", o);
	fputs("\n  error chain, outermost first:\n", o);
	for (i = f->nr; i-- > 0;) {
		const struct lbr_snap_record *h = &f->chain[i].r.hdr;
		unsigned long long dur;
		bool cut;
		int depth = depth_of(w, &f->chain[i].r, &cut);

		ksyms_func(w->ks, h->func_addr, name, sizeof(name));
		/* Indented by its depth among the hooked functions. */
		fprintf(o, "    %s%*s%s() = ", i == f->origin ? "* " : "  ",
			depth > 0 ? 2 * (depth < 20 ? depth : 20) : 0, "",
			name);
		text_ret(o, h);
		if (rec_duration(h, &dur)) {
			fputs("  ", o);
			put_duration(o, dur);
		}
		/* Where the next one in was called from, when known. */
		if (i && src_of(w, f->chain[i - 1].r.hdr.caller, &loc) &&
		    in_func(f->chain[i - 1].r.hdr.caller, h->func_addr,
			    ksyms_func_end(w->ks, h->func_addr)))
			fprintf(o, "  %s:%d", srcloc_path(&loc), loc.line);
		fputc('\n', o);
	}
	d = decision(w, &org->r);
	fputs("  origin: ", o);
	if (d >= 0) {
		struct lbr_snap_branch b;

		rec_from_to(&org->r, d, &b);
		print_addr_line(o, w->ks, b.from, b.from, &loc);
		fputc('\n', o);
	} else {
		ksyms_func(w->ks, org->r.hdr.func_addr, name, sizeof(name));
		fprintf(o, "%s (no branch of it in its LBR)\n", name);
	}
	if (f->lossy)
		fputs("  (the module dropped records while it ran, a buffer full: the origin may be deeper)\n",
		      o);
	print_rec_text(o, &org->r, w->ks, &(struct print_opts){ 0 });
	fputc('\n', o);
}

static void json_origin(const struct why *w, const struct wfail *f, FILE *o)
{
	const struct wrec *org = &f->chain[f->origin];
	unsigned long long off = 0;
	struct lbr_snap_branch b;
	struct srcloc loc;
	const char *fn;
	int d = decision(w, &org->r);

	/* The function the branch is in: the origin's, or one under it. */
	if (d >= 0)
		rec_from_to(&org->r, d, &b);
	fputs("\"origin\":{\"func\":", o);
	fn = ksyms_name(w->ks, d >= 0 ? b.from : org->r.hdr.func_addr, &off);
	json_opt_str(o, fn);
	fputs(",\"off\":", o);
	if (d < 0) {
		fputs("null,\"file\":null,\"line\":null,\"branch\":null", o);
	} else {
		put_uint(o, off);
		if (src_of(w, b.from, &loc)) {
			fputs(",\"file\":", o);
			json_opt_str(o, srcloc_path(&loc));
			fputs(",\"line\":", o);
			put_int(o, loc.line);
		} else {
			fputs(",\"file\":null,\"line\":null", o);
		}
		fprintf(o, ",\"branch\":%d", d);
	}
	/* The function whose return the origin's record caught. */
	fputs(",\"hooked\":", o);
	json_opt_str(o, ksyms_name(w->ks, org->r.hdr.func_addr, &off));
	fputc('}', o);
}

static void print_json(const struct why *w, const struct wfail *f, FILE *o)
{
	const struct wrec *e = &f->chain[f->nr - 1];
	const char *err = errno_name(-f->err);
	unsigned long long dur;
	char cn[128], *rec;
	size_t i, len;
	FILE *m;

	fputs("{\"syscall\":", o);
	call_name(w, f, cn, sizeof(cn));
	json_str(o, cn, strlen(cn));
	fputs(",\"nr\":", o);
	if (e->r.hdr.flags & LBR_SNAP_REC_SYSCALL)
		put_int(o, e->r.hdr.syscall_nr);
	else
		fputs("null", o);
	fputs(",\"retval\":", o);
	put_int(o, f->err);
	fputs(",\"errno\":", o);
	json_opt_str(o, err);
	fputs(",\"pid\":", o);
	put_uint(o, e->r.hdr.tgid);
	fputs(",\"tid\":", o);
	put_uint(o, e->r.hdr.pid);
	fputs(",\"comm\":", o);
	json_str(o, e->r.hdr.comm, strnlen(e->r.hdr.comm, LBR_SNAP_COMM_LEN));
	/* The system call's, else the entry function's own. */
	fputs(",\"duration_ns\":", o);
	if (e->r.hdr.flags & LBR_SNAP_REC_SYSCALL)
		put_uint(o, e->r.hdr.ts_ns - e->r.hdr.syscall_ns);
	else if (rec_duration(&e->r.hdr, &dur))
		put_uint(o, dur);
	else
		fputs("null", o);
	fputs(",\"chain\":[", o);
	for (i = f->nr; i-- > 0;) {
		const struct lbr_snap_record *h = &f->chain[i].r.hdr;
		unsigned long long off;
		const char *fn = ksyms_name(w->ks, h->func_addr, &off);
		bool cut;
		int depth;

		fputs(i + 1 == f->nr ? "{\"func\":" : ",{\"func\":", o);
		json_opt_str(o, fn);
		fputs(",\"retval\":", o);
		put_int(o, h->retval);
		fputs(",\"ts\":", o);
		put_uint(o, h->ts_ns);
		fputs(",\"duration_ns\":", o);
		if (rec_duration(h, &dur))
			put_uint(o, dur);
		else
			fputs("null", o);
		depth = depth_of(w, &f->chain[i].r, &cut);
		fputs(",\"depth\":", o);
		if (depth >= 0)
			put_int(o, depth);
		else
			fputs("null", o);
		fprintf(o, ",\"depth_cut\":%s}", cut ? "true" : "false");
	}
	fprintf(o, "],\"records_dropped\":%s,", f->lossy ? "true" : "false");
	json_origin(w, f, o);
	/* The origin's record, as streaming prints it. */
	m = open_memstream(&rec, &len);
	if (m) {
		print_rec_json(m, &f->chain[f->origin].r, w->ks);
		fclose(m);
		while (len && rec[len - 1] == '\n')
			len--;
		fputs(",\"record\":", o);
		fwrite(rec, 1, len, o);
		free(rec);
	}
	fputs("}\n", o);
}

/* Origins in the kernel without a source line: how to have them, once. */
static void say_no_lines(const struct why *w)
{
	struct srcloc loc;
	size_t i;

	for (i = 0; i < w->nr_fails; i++) {
		unsigned long long a = w->fails[i].chain[w->fails[i].origin].r.hdr.func_addr;

		if (!ksyms_in_module(w->ks, a) && !src_of(w, a, &loc))
			break;
	}
	if (i == w->nr_fails)
		return;
	if (!srclines_built_in)
		pr_err("why: this lbr-snap is built without libdw: origins get a function and offset, no source line");
	else if (srclines_replay)
		pr_err("why: no source lines for the kernel's origins: -k gives a vmlinux with the recorded kernel's debug info (Debian's linux-image-RELEASE-dbg)");
	else
		pr_err("why: no source lines for the kernel's origins: its debug info gives them (Debian's linux-image-RELEASE-dbg, or -k VMLINUX; -v says where lbr-snap looked)");
}

/* Print each failure; the counts go to stderr.  Returns how many. */
size_t why_report(struct why *w, FILE *o)
{
	size_t i;

	for (i = 0; i < w->nr_fails; i++) {
		w->fails[i].lossy = lost_in(w, w->fails[i].from_ns,
					    w->fails[i].to_ns);
		w->lossy += w->fails[i].lossy;
	}
	for (i = 0; i < w->nr_fails; i++) {
		if (w->json)
			print_json(w, &w->fails[i], o);
		else
			print_text(w, &w->fails[i], o);
	}
	for (i = 0; i < w->nr_tasks; i++)
		task_drop(w, &w->tasks[i], true);
	if (w->unkept)
		pr_err("why: %llu more failures of kinds already shown %d times were not kept",
		       w->unkept, WHY_KEEP_PER_KIND);
	if (w->overflow)
		pr_err("why: %llu records past %d in one system call were not kept (the oldest are)",
		       w->overflow, WHY_PENDING_MAX);
	if (w->handled)
		pr_err("why: %llu errors inside system calls that did not fail (handled, or of an entry function not hooked)",
		       w->handled);
	if (w->outside)
		pr_err("why: %llu errors outside system calls (interrupts, faults, kernel threads' work)",
		       w->outside);
	if (w->lossy)
		pr_err("why: %llu failures had records dropped while they ran (the module's buffer was full): their origin may be deeper than shown",
		       w->lossy);
	say_no_lines(w);
	return w->nr_fails;
}

void why_free(struct why *w)
{
	size_t i, j;

	if (!w)
		return;
	for (i = 0; i < w->nr_fails; i++) {
		for (j = 0; j < w->fails[i].nr; j++)
			free(w->fails[i].chain[j].raw);
		free(w->fails[i].chain);
	}
	for (i = 0; i < w->nr_tasks; i++) {
		task_drop(w, &w->tasks[i], false);
		free(w->tasks[i].v);
	}
	free(w->tasks);
	free(w->fails);
	free(w->kinds);
	free(w->gaps);
	free(w->cpu_ts);
	free(w);
}
