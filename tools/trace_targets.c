// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap trace's targets: attached one by one (LBR_SNAP_IOC_ADD_TARGET)
 * or, past the module's own 64, in batches (LBR_SNAP_IOC_ADD_TARGETS, as
 * add does), detached by name or by id; their counters over the command's
 * run (GET_STATS), and what trace says of them as the command starts and
 * once it has ended.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "control.h"
#include "device.h"
#include "pattern.h"
#include "record.h"
#include "trace_int.h"
#include "util.h"

static int target_ctl(struct tracer *tr, unsigned long req, const char *spec,
		      unsigned int *hook)
{
	struct lbr_snap_target_ctl ctl = { 0 };
	int ret;

	snprintf(ctl.spec, sizeof(ctl.spec), "%s", spec);
	if (req == LBR_SNAP_IOC_DEL_TARGET)
		ctl.spec[strcspn(ctl.spec, "%/@=")] = '\0';
	ret = ioctl(tr->fd, req, &ctl);
	if (!ret && hook)
		*hook = ctl.hook;
	return ret;
}

/* The entries of the batch's targets trace attached (ids), or of all. */
static struct lbr_snap_target_entry *batch_entries(const struct tracer *tr,
						   bool added, size_t *n)
{
	struct lbr_snap_target_entry *e;
	size_t i;

	e = xrealloc(NULL, (tr->nr ? tr->nr : 1) * sizeof(*e));
	*n = 0;
	for (i = 0; i < tr->nr; i++) {
		const struct tgt *g = &tr->tg[i];

		if (!g->batch || (added && !g->added))
			continue;
		memset(&e[*n], 0, sizeof(*e));
		snprintf(e[*n].spec, sizeof(e[*n].spec), "%s", g->spec);
		e[*n].addr = g->addr;
		e[(*n)++].id = g->id;
	}
	return e;
}

/*
 * why on a kernel without ftrace direct calls, which fexit needs: the
 * entry functions alone, by kretprobe (their "@fexit" taken off, and
 * LBR_SNAP_BATCH_FALLBACK), the others not attached.  Returns 0 or -exit
 * code.
 */
static int why_without_fexit(struct tracer *tr)
{
	struct lbr_snap_target_entry *e;
	size_t i, j, n = 0, through;
	struct tgt **of;
	char *at;

	e = xrealloc(NULL, (tr->nr ? tr->nr : 1) * sizeof(*e));
	of = xrealloc(NULL, (tr->nr ? tr->nr : 1) * sizeof(*of));
	for (i = 0; i < tr->nr; i++) {
		struct tgt *g = &tr->tg[i];

		if (!g->batch || g->arg >= tr->t->nr_entry)
			continue;
		memset(&e[n], 0, sizeof(*e));
		snprintf(e[n].spec, sizeof(e[n].spec), "%s", g->spec);
		at = strstr(e[n].spec, "@fexit");
		if (at)
			*at = '\0';
		e[n].addr = g->addr;
		of[n++] = g;
	}
	pr_err("this kernel has no ftrace direct calls (CONFIG_DYNAMIC_FTRACE_WITH_DIRECT_CALLS), which why's fexit hook needs: it falls back to kretprobes on the %zu entry functions alone, so each failure's origin is its system call's own function and the last branches before its return (a kretprobe's path takes some of them)",
	       n);
	if (n && control_batch(tr->fd, LBR_SNAP_IOC_ADD_TARGETS, e, n,
			       LBR_SNAP_BATCH_SKIP | LBR_SNAP_BATCH_FALLBACK,
			       tr->stop, &through)) {
		pr_err("ADD_TARGETS: %s", strerror(errno));
		free(of);
		free(e);
		return errno == EINTR ? -(128 + *tr->stop) :
		       errno == EPERM ? -EXIT_PERM : -EXIT_ERROR;
	}
	for (j = 0; j < n && j < through; j++) {
		if (e[j].error)
			continue;
		of[j]->added = true;
		of[j]->id = e[j].id;
		of[j]->hook = e[j].hook;
		tr->nr_batch++;
	}
	free(of);
	free(e);
	return 0;
}

void trace_detach(struct tracer *tr)
{
	struct lbr_snap_target_entry *e;
	size_t i, n, through;

	e = batch_entries(tr, true, &n);
	if (n && control_batch(tr->fd, LBR_SNAP_IOC_DEL_TARGETS, e, n, 0,
			       NULL, &through) && errno != ENOENT)
		pr_err("DEL_TARGETS: %s: %zu targets stay attached (lbr-snap stats lists them)",
		       strerror(errno), n - through);
	free(e);
	for (i = 0; i < tr->nr; i++) {
		struct tgt *g = &tr->tg[i];

		if (!g->added)
			continue;
		if (!g->batch &&
		    target_ctl(tr, LBR_SNAP_IOC_DEL_TARGET, g->spec, NULL))
			pr_err("DEL_TARGET %s: %s", g->spec, strerror(errno));
		g->added = false;
	}
}

/*
 * The batch's targets, CONTROL_CHUNK at a time: those already targets are
 * used and left alone, as one by one; any other refusal undoes it all
 * (teardown()).  Returns 0 or -exit code.
 */
static int attach_batch(struct tracer *tr)
{
	struct lbr_snap_target_entry *e;
	size_t i, j, n, through, existed = 0, refused = 0;
	const char *first = NULL;
	int ret = 0, err = 0;

	e = batch_entries(tr, false, &n);
	if (!n) {
		free(e);
		return 0;
	}
	/*
	 * why hooks what fexit takes, no more: a kretprobe's path puts
	 * its own entries in every record of the functions it calls.
	 */
	if (control_batch(tr->fd, LBR_SNAP_IOC_ADD_TARGETS, e, n,
			  LBR_SNAP_BATCH_SKIP | (tr->t->why ? CONTROL_FIT :
						 LBR_SNAP_BATCH_FALLBACK),
			  tr->stop, &through)) {
		err = errno;
		if (err == EOPNOTSUPP && tr->t->why) {
			free(e);
			return why_without_fexit(tr);
		}
		if (err == EINTR)
			ret = -(128 + *tr->stop);
		else if (err == E2BIG)
			pr_err("ADD_TARGETS: too many targets: more than the module's %d, or than this kernel's ftrace takes as direct calls (see the kernel log)",
			       LBR_SNAP_MAX_ALL_TARGETS);
		else
			pr_err("ADD_TARGETS: %s", strerror(err));
		ret = ret ? ret : err == EPERM ? -EXIT_PERM : -EXIT_ERROR;
		err = 0;
	}
	for (i = 0, j = 0; i < tr->nr && j < through; i++) {
		struct tgt *g = &tr->tg[i];

		if (!g->batch)
			continue;
		if (!e[j].error) {
			g->added = true;
			g->id = e[j].id;
			g->hook = e[j].hook;
			tr->nr_batch++;
		} else if (e[j].error == -EEXIST) {
			g->existed = true;
			existed++;
		} else if (!refused++) {
			first = g->spec;
			err = -e[j].error;
		}
		j++;
	}
	if (existed)
		pr_err("%zu of the %zu functions %s: using %s, leaving %s attached",
		       existed, n, existed == 1 ?
		       "is a target already (or an alias of one)" :
		       "are targets already (or aliases of some)",
		       existed == 1 ? "it" : "them",
		       existed == 1 ? "it" : "them");
	if (refused && !ret && tr->t->why) {
		/* why takes what fits: it says how many did not. */
		pr_err("%zu of the %zu functions not attached (%s for the first, %s: the kernel log says why)",
		       refused, n, strerror(err), first);
	} else if (refused && !ret) {
		if (refused > 1)
			pr_err("ADD_TARGETS %s: %s, and %zu more refused (the kernel log says why): nothing attached",
			       first, strerror(err), refused - 1);
		else
			pr_err("ADD_TARGETS %s: %s (the kernel log says why): nothing attached",
			       first, strerror(err));
		ret = -EXIT_ERROR;
	}
	free(e);
	return ret;
}

int trace_attach(struct tracer *tr)
{
	const char *spec;
	size_t i;

	for (i = 0; i < tr->nr; i++) {
		struct tgt *g = &tr->tg[i];

		if (g->batch || g->loaded)
			continue;
		spec = g->spec;
		if (!target_ctl(tr, LBR_SNAP_IOC_ADD_TARGET, spec, &g->hook)) {
			g->added = true;
		} else if (errno == EEXIST) {
			g->existed = true;
			pr_err("%s: already a target (or an alias of one): using it, leaving it attached",
			       spec);
		} else {
			pr_err("ADD_TARGET %s: %s", spec, strerror(errno));
			return errno == EPERM ? -EXIT_PERM : -EXIT_ERROR;
		}
	}
	return attach_batch(tr);
}

/* The name of spec @spec: up to its %type, /N, @hook or =errors. */
static int spec_name_len(const char *spec)
{
	return strcspn(spec, "%/@=");
}

static int by_id(const void *a, const void *b)
{
	const struct lbr_snap_target_stats *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_name(const void *a, const void *b)
{
	const struct lbr_snap_target_stats *const *x = a, *const *y = b;

	return strncmp((*x)->name, (*y)->name, sizeof((*x)->name));
}

/* Every target's counters (GET_STATS), by id; NULL if it fails. */
static struct lbr_snap_target_stats *get_stats(const struct tracer *tr,
					       size_t *nr)
{
	struct lbr_snap_target_stats *ts;
	struct lbr_snap_stats st;

	ts = get_all_stats(tr->fd, tr->nr, &st, nr);
	if (!ts) {
		pr_err("GET_STATS: %s: no counters", errno == EAGAIN ?
		       "targets kept coming faster than read" :
		       strerror(errno));
		return NULL;
	}
	qsort(ts, *nr, sizeof(*ts), by_id);
	return ts;
}

/*
 * Each target's counters now, from GET_STATS: a batch's that trace
 * attached by id, the others by name.  @found[i] is false for one the
 * module does not list (or when GET_STATS fails).
 */
static void read_counters(struct tracer *tr,
			  struct lbr_snap_target_stats *out, bool *found)
{
	struct lbr_snap_target_stats key, *ts, **names, **hit, *p;
	size_t i, nr = 0;

	for (i = 0; i < tr->nr; i++)
		found[i] = false;
	ts = get_stats(tr, &nr);
	if (!ts)
		return;
	names = xrealloc(NULL, (nr ? nr : 1) * sizeof(*names));
	for (i = 0; i < nr; i++)
		names[i] = &ts[i];
	qsort(names, nr, sizeof(*names), by_name);
	for (i = 0; i < tr->nr; i++) {
		const struct tgt *g = &tr->tg[i];

		memset(&key, 0, sizeof(key));
		if (g->batch && g->added) {
			key.id = g->id;
			p = bsearch(&key, ts, nr, sizeof(*ts), by_id);
		} else {
			snprintf(key.name, sizeof(key.name), "%.*s",
				 spec_name_len(g->spec), g->spec);
			p = &key;
			hit = bsearch(&p, names, nr, sizeof(*names), by_name);
			p = hit ? *hit : NULL;
		}
		if (p) {
			out[i] = *p;
			found[i] = true;
		}
	}
	free(names);
	free(ts);
}

/* How many targets came of -e number @arg; *@one: the last of them. */
static size_t of_arg(const struct tracer *tr, unsigned int arg, size_t *one)
{
	size_t i, n = 0;

	for (i = 0; i < tr->nr; i++)
		if (tr->tg[i].arg == arg) {
			*one = i;
			n++;
		}
	return n;
}

/* One target, as trace_say_attached() names it. */
static void say_target(const struct tracer *tr, size_t i)
{
	const struct tgt *g = &tr->tg[i];

	fputs(g->spec, stderr);
	if (g->added)
		fprintf(stderr, " (%s)", hook_name(g->hook));
	else if (g->found)
		fprintf(stderr, " (%s%s)", hook_name(g->before.hook),
			g->existed ? ", a target already" : "");
	else if (g->existed)
		fputs(" (a target already)", stderr);
}

/*
 * On stderr, once the targets are attached and the command about to run:
 * "lbr-snap: attached foo (kretprobe), bar%ptr (fexit); running CMD"; with
 * more than LIST_MAX, a pattern's functions are counted, not named:
 * ":fs/namei.c (97 functions, 2 targets already)".
 */
void trace_say_attached(const struct tracer *tr)
{
	const struct trace_opts *t = tr->t;
	size_t i, j, n, one = 0, existed;
	unsigned int a;

	fprintf(stderr, "lbr-snap: %s ", tr->loaded ?
		"loaded lbr_snap with" : "attached");
	if (tr->nr <= LIST_MAX) {
		for (i = 0; i < tr->nr; i++) {
			fputs(i ? ", " : "", stderr);
			say_target(tr, i);
		}
	}
	for (a = 0, i = 0; tr->nr > LIST_MAX && a < t->nr_specs; a++) {
		/* "!PAT" left its functions out: said at its resolution. */
		if (t->specs[a][0] == '!')
			continue;
		fputs(i++ ? ", " : "", stderr);
		n = of_arg(tr, a, &one);
		if (n == 1 && !strncmp(t->specs[a], tr->tg[one].spec,
				       spec_name_len(tr->tg[one].spec))) {
			say_target(tr, one);
			continue;
		}
		for (j = 0, existed = 0; j < tr->nr; j++)
			existed += tr->tg[j].arg == a && tr->tg[j].existed;
		fprintf(stderr, "%s (%zu %s", t->specs[a], n,
			n == 1 ? "function" : "functions");
		if (existed)
			fprintf(stderr, ", %zu %s already", existed,
				existed == 1 ? "a target" : "targets");
		fputc(')', stderr);
	}
	fprintf(stderr, "%s%s%s",
		t->capture_all ? ", capturing every return" : "",
		t->lbr ? ", LBR filter " : "", t->lbr ? t->lbr : "");
	/* why says how long its thousands took. */
	if (t->why)
		fprintf(stderr, " in %.1f s", tr->setup_ns / 1e9);
	if (t->pid)
		fprintf(stderr, "; watching process %d%s\n", (int)t->pid,
			t->duration ? "" : " until it exits or ^C");
	else
		fprintf(stderr, "; running %s\n", t->argv[0]);
}

static unsigned long long delta(unsigned long long now,
				unsigned long long then)
{
	return now >= then ? now - then : now;
}

/* @d, the counters now, made those of the command's run. */
static void since(struct lbr_snap_target_stats *d, const struct tgt *g)
{
	if (!g->found)
		return;
	d->hits = delta(d->hits, g->before.hits);
	d->captured = delta(d->captured, g->before.captured);
	d->filtered = delta(d->filtered, g->before.filtered);
	d->dropped = delta(d->dropped, g->before.dropped);
	d->missed = delta(d->missed, g->before.missed);
}

/* "NAME (hook): N returns: C captured, F filtered, D dropped[, M missed]" */
static void say_counters(const char *prefix, const char *name,
			 const char *hook, const struct lbr_snap_target_stats *d)
{
	fprintf(stderr, "%s%s (%s): %llu %s: %llu captured, %llu filtered, %llu dropped",
		prefix, name, hook, d->hits, d->hits == 1 ? "return" : "returns",
		d->captured, d->filtered, d->dropped);
	if (d->missed)
		fprintf(stderr, ", %llu missed by kretprobes", d->missed);
	fputc('\n', stderr);
}

/*
 * With more than LIST_MAX targets: each -e's counters summed over its
 * functions, then the functions that captured or dropped, LIST_CAPTURED
 * at most.
 */
static void say_many(const struct tracer *tr,
		     const struct lbr_snap_target_stats *now, const bool *found)
{
	const struct trace_opts *t = tr->t;
	struct lbr_snap_target_stats sum;
	size_t i, n, listed = 0, more = 0, missing = 0;
	unsigned int a, hook;
	char what[PAT_MAX_LEN + 64];
	bool mixed;

	for (a = 0; a < t->nr_specs; a++) {
		memset(&sum, 0, sizeof(sum));
		hook = UINT_MAX;
		mixed = false;
		for (i = 0, n = 0; i < tr->nr; i++) {
			if (tr->tg[i].arg != a || !found[i])
				continue;
			n++;
			sum.hits += now[i].hits;
			sum.captured += now[i].captured;
			sum.filtered += now[i].filtered;
			sum.dropped += now[i].dropped;
			sum.missed += now[i].missed;
			mixed |= hook != UINT_MAX && hook != now[i].hook;
			hook = now[i].hook;
		}
		if (!n)
			continue;
		snprintf(what, sizeof(what), "-e %s: %zu %s", t->specs[a], n,
			 n == 1 ? "function" : "functions");
		say_counters("lbr-snap: ", what,
			     mixed ? "hooks of both kinds" : hook_name(hook),
			     &sum);
	}
	for (i = 0; i < tr->nr; i++) {
		missing += !found[i];
		if (!found[i] || !(now[i].captured || now[i].dropped))
			continue;
		if (listed++ < LIST_CAPTURED)
			say_counters("lbr-snap:   ", tr->tg[i].spec,
				     hook_name(now[i].hook), &now[i]);
		else
			more++;
	}
	if (more)
		fprintf(stderr, "lbr-snap:   and %zu more functions that captured or dropped (lbr-snap stats lists each while attached)\n",
			more);
	if (missing)
		fprintf(stderr, "lbr-snap: %zu %s not listed by the module: no counters\n",
			missing, missing == 1 ? "target" : "targets");
}

/*
 * On stderr, after the command, while the targets are still attached
 * (their counters go with them): how many records were printed, each
 * target's counters over the command's run (returns seen, captured,
 * filtered, dropped), or each -e's with many, why there may be no
 * records, and stats' hints.
 */
void trace_say_summary(struct tracer *tr)
{
	size_t i, room = tr->nr ? tr->nr : 1;
	struct lbr_snap_target_stats *now = xrealloc(NULL, room * sizeof(*now));
	unsigned long long hits = 0, captured = 0, filtered = 0, dropped = 0;
	bool *found = xrealloc(NULL, room * sizeof(*found));
	const struct trace_opts *t = tr->t;

	read_counters(tr, now, found);
	fprintf(stderr, "lbr-snap: %s: %llu %s %s", t->why ? "why" : "trace",
		tr->printed, tr->printed == 1 ? "record" : "records",
		t->why ? "read" : "printed");
	if (tr->others)
		fprintf(stderr, " (%llu of other processes not: --all-tasks prints them)",
			tr->others);
	fputc('\n', stderr);
	for (i = 0; i < tr->nr; i++) {
		if (!found[i]) {
			if (tr->nr <= LIST_MAX)
				fprintf(stderr, "lbr-snap: %s: not listed by the module: no counters\n",
					tr->tg[i].spec);
			continue;
		}
		since(&now[i], &tr->tg[i]);
		if (tr->nr <= LIST_MAX)
			say_counters("lbr-snap: ", tr->tg[i].spec,
				     hook_name(now[i].hook), &now[i]);
		hits += now[i].hits;
		captured += now[i].captured;
		filtered += now[i].filtered;
		dropped += now[i].dropped;
	}
	if (tr->nr > LIST_MAX)
		say_many(tr, now, found);
	if (dropped)
		fprintf(stderr, "lbr-snap: %llu %s dropped: the module's buffer was full (buffer_kb=)\n",
			dropped, dropped == 1 ? "record" : "records");
	if (!tr->printed) {
		if (captured)
			fprintf(stderr, "lbr-snap: no records of %s: the %llu captured were other processes' (--all-tasks prints them)\n",
				t->pid ? "the process" : t->argv[0], captured);
		else if (filtered && filtered == hits)
			fprintf(stderr, "lbr-snap: no records: every return was filtered%s\n",
				t->capture_all ? "" :
				" (capture errors: --all records every return)");
		else if (!hits && tr->nr_batch && !t->capture_all)
			fprintf(stderr, "lbr-snap: no records: no error return was seen (a batch's targets count their errors only under capture errors)\n");
		else
			fprintf(stderr, "lbr-snap: no records: %s\n",
				hits ? "none of the returns was captured" :
				"no target was hit while it ran");
	}
	/* Of many, most have no hits or filter successes: only the gone. */
	for (i = 0; i < tr->nr; i++)
		if (found[i] && (tr->nr <= LIST_MAX ||
				 now[i].state & LBR_SNAP_TARGET_GONE))
			print_target_hint(stderr, "lbr-snap: hint: ", &now[i]);
	free(found);
	free(now);
}

/* Each target's counters as the command starts. */
void trace_read_before(struct tracer *tr)
{
	size_t i, room = tr->nr ? tr->nr : 1;
	struct lbr_snap_target_stats *now = xrealloc(NULL, room * sizeof(*now));
	bool *found = xrealloc(NULL, room * sizeof(*found));

	read_counters(tr, now, found);
	for (i = 0; i < tr->nr; i++) {
		tr->tg[i].before = now[i];
		tr->tg[i].found = found[i];
	}
	free(found);
	free(now);
}
