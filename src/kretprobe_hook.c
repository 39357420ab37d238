// SPDX-License-Identifier: GPL-2.0
/*
 * Targets: parsing targets=, kretprobe registration, and the return handler
 * that freezes LBR and writes a record.
 */
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/irqflags.h>
#include <linux/kallsyms.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/ring_buffer.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>

#include "lbr_snap.h"

/* The targets, in the order they were added; ids are never reused. */
static DEFINE_MUTEX(lbr_targets_lock);
static struct lbr_target *lbr_targets[LBR_SNAP_MAX_TARGETS];
static unsigned int lbr_nr_targets;
static u32 lbr_next_id;

/*
 * Where a probed function's RET lands: the kretprobe (rethook) trampoline.
 * By the time the handler runs regs->ip already holds the real return
 * address, and the trampoline's symbol is not exported, so
 * lbr_find_ret_site() learns it once.
 */
static unsigned long lbr_ret_site __read_mostly;

static const char * const lbr_ret_type_names[] = {
	[LBR_SNAP_RET_INT] = "int",
	[LBR_SNAP_RET_LONG] = "long",
	[LBR_SNAP_RET_PTR] = "ptr",
	[LBR_SNAP_RET_BOOL] = "bool",
};

/* The return value, sign-extended from the declared width. */
static __always_inline s64 lbr_retval(u8 type, unsigned long ax)
{
	switch (type) {
	case LBR_SNAP_RET_INT:
		return (s32)ax;
	case LBR_SNAP_RET_BOOL:
		return (u8)ax != 0;
	default:
		return (s64)ax;
	}
}

/* errors mode: a negative errno, NULL or ERR_PTR, or false. */
static __always_inline bool lbr_is_error(u8 type, s64 ret)
{
	switch (type) {
	case LBR_SNAP_RET_PTR:
		return !ret || IS_ERR_VALUE((unsigned long)ret);
	case LBR_SNAP_RET_BOOL:
		return !ret;
	default:
		return ret < 0 && ret >= -MAX_ERRNO;
	}
}

/*
 * The body shared by both handlers.  @frozen is a constant in each caller,
 * so the "none" handler carries no MSR access at all.  Interrupts stay off
 * from just after the freeze to the commit: the LBR read must not be
 * disturbed and the per-CPU counters need no atomics.
 */
static __always_inline void lbr_capture(struct kretprobe_instance *ri,
					struct pt_regs *regs, bool frozen,
					u64 ctl)
{
	struct lbr_target *t = container_of(lbr_get_kretprobe(ri),
					    struct lbr_target, rp);
	s64 ret = lbr_retval(t->ret_type, regs_return_value(regs));
	struct lbr_snap_branch *br;
	struct ring_buffer_event *ev;
	struct lbr_snap_record *rec;
	struct lbr_counters *c;
	unsigned long flags;
	unsigned int nr = 0;
	bool found;

	local_irq_save(flags);
	c = this_cpu_ptr(t->counters);
	c->hits++;
	if (!READ_ONCE(lbr_capture_all) && !lbr_is_error(t->ret_type, ret)) {
		c->filtered++;
		goto out_unfreeze;
	}

	ev = ring_buffer_lock_reserve(lbr_rb, sizeof(*rec) +
				      lbr_hw.depth * sizeof(*br));
	if (!ev) {
		c->dropped++;
		goto out_unfreeze;
	}
	rec = ring_buffer_event_data(ev);
	br = (struct lbr_snap_branch *)(rec + 1);
	if (frozen) {
		nr = lbr_hw_read(br);
		lbr_hw_unfreeze(ctl);
	}

	memset(rec, 0, sizeof(*rec));
	rec->size = sizeof(*rec) + nr * sizeof(*br);
	rec->version = LBR_SNAP_ABI_VERSION;
	rec->hdr_size = sizeof(*rec);
	rec->entry_size = sizeof(*br);
	rec->nr_entries = nr;
	rec->ts_ns = ktime_get_mono_fast_ns();
	rec->cpu = smp_processor_id();
	rec->pid = current->pid;
	rec->tgid = current->tgid;
	rec->target_id = t->id;
	rec->func_addr = t->start;
	rec->caller = lbr_kretprobe_retaddr(ri);
	rec->retval = ret;
	rec->ret_type = t->ret_type;
	rec->backend = lbr_hw.backend;
	rec->lbr_format = lbr_hw.fmt.format;
	if (frozen) {
		rec->probe_entries = lbr_probe_entries(br, nr, lbr_ret_site,
						       &found);
		if (!found)
			rec->flags |= LBR_SNAP_REC_NO_RETURN;
	} else {
		rec->flags |= LBR_SNAP_REC_NO_LBR;
	}
	memcpy(rec->comm, current->comm, sizeof(rec->comm));
	rec->comm[sizeof(rec->comm) - 1] = '\0';

	lbr_rb_unlock_commit(lbr_rb, ev);
	c->captured++;
	local_irq_restore(flags);
	lbr_records_committed();
	return;

out_unfreeze:
	if (frozen)
		lbr_hw_unfreeze(ctl);
	local_irq_restore(flags);
}

/*
 * The return handler when LBR is on.  The freeze is the first thing it
 * executes: notrace keeps __fentry__ out, and lbr_hw_freeze() is inline
 * RDMSR/AND/WRMSR, so no branch the user wants is overwritten by ours.
 */
static int notrace lbr_ret_handler(struct kretprobe_instance *ri,
				   struct pt_regs *regs)
{
	u64 ctl = lbr_hw_freeze();

	lbr_capture(ri, regs, true, ctl);
	return 0;
}
NOKPROBE_SYMBOL(lbr_ret_handler);

/* The return handler of the "none" backend: records without branches. */
static int notrace lbr_ret_handler_nolbr(struct kretprobe_instance *ri,
					 struct pt_regs *regs)
{
	lbr_capture(ri, regs, false, 0);
	return 0;
}
NOKPROBE_SYMBOL(lbr_ret_handler_nolbr);

/* Returns the address it will return to: the trampoline once probed. */
static noinline unsigned long lbr_ret_site_probe(void)
{
	return (unsigned long)__builtin_return_address(0);
}

static int lbr_ret_site_nop(struct kretprobe_instance *ri,
			    struct pt_regs *regs)
{
	return 0;
}

/*
 * Probe lbr_ret_site_probe() with a kretprobe and call it: the return
 * address it sees is the one every kretprobe installs.
 */
static void lbr_find_ret_site(void)
{
	struct kretprobe rp = {
		.kp.addr = (kprobe_opcode_t *)lbr_ret_site_probe,
		.handler = lbr_ret_site_nop,
		.maxactive = 1,
	};
	unsigned long site;

	if (register_kretprobe(&rp)) {
		pr_warn("cannot find the kretprobe trampoline: probe_entries unknown\n");
		return;
	}
	site = lbr_ret_site_probe();
	unregister_kretprobe(&rp);
	if (!within_module(site, THIS_MODULE))
		lbr_ret_site = site;
}

/*
 * Functions the capture path runs through.  A kretprobe on them could only
 * ever count misses (kprobes do not nest), so refuse them up front.
 */
static const char * const lbr_own_path_prefixes[] = {
	"ring_buffer_", "rb_", "__rb_", "trace_recursive_", "irq_work_",
	"ktime_get_mono_fast", "__ktime_get_fast", "read_tsc",
	"native_sched_clock", "kretprobe_", "rethook_", "arch_rethook_",
};

static bool lbr_on_own_path(const struct lbr_target *t)
{
	unsigned int i;

	if (within_module(t->start, THIS_MODULE))
		return true;
	for (i = 0; i < ARRAY_SIZE(lbr_own_path_prefixes); i++)
		if (!strncmp(t->name, lbr_own_path_prefixes[i],
			     strlen(lbr_own_path_prefixes[i])))
			return true;
	return false;
}

/*
 * The function's entry from "name+0xoff/0xsize [mod]": the probe may sit
 * past an ENDBR, so kp.addr is not always the entry.
 */
static int lbr_target_entry(struct lbr_target *t)
{
	unsigned long addr = (unsigned long)t->rp.kp.addr, off, size;
	char buf[KSYM_SYMBOL_LEN];
	char *p;

	sprint_symbol(buf, addr);
	p = strrchr(buf, '+');
	if (!p || sscanf(p, "+%lx/%lx", &off, &size) != 2 || off > addr)
		return -ENOENT;
	t->start = addr - off;
	return 0;
}

static int lbr_parse_one(char *tok, struct lbr_target *t)
{
	char *type = strchr(tok, '%');
	unsigned int i;

	if (type) {
		*type++ = '\0';
		for (i = 0; i < ARRAY_SIZE(lbr_ret_type_names); i++)
			if (!strcmp(type, lbr_ret_type_names[i]))
				break;
		if (i == ARRAY_SIZE(lbr_ret_type_names)) {
			pr_err("target '%s': unknown return type '%s' (int, long, ptr, bool)\n",
			       tok, type);
			return -EINVAL;
		}
		t->ret_type = i;
	}
	if (!*tok) {
		pr_err("targets: empty symbol name\n");
		return -EINVAL;
	}
	if (strlen(tok) >= LBR_SNAP_NAME_LEN) {
		pr_err("target '%.32s...': name longer than %d characters\n",
		       tok, LBR_SNAP_NAME_LEN - 1);
		return -ENAMETOOLONG;
	}
	strscpy(t->name, tok, sizeof(t->name));
	return 0;
}

static void lbr_target_free(struct lbr_target *t)
{
	free_percpu(t->counters);
	kfree(t);
}

static struct lbr_target *lbr_target_new(char *tok)
{
	struct lbr_target *t = kzalloc(sizeof(*t), GFP_KERNEL);
	unsigned int i;
	int ret;

	if (!t)
		return ERR_PTR(-ENOMEM);
	ret = lbr_parse_one(tok, t);
	for (i = 0; !ret && i < lbr_nr_targets; i++) {
		if (!strcmp(lbr_targets[i]->name, t->name)) {
			pr_err("target '%s': listed twice\n", t->name);
			ret = -EEXIST;
		}
	}
	if (!ret) {
		t->counters = alloc_percpu(struct lbr_counters);
		if (!t->counters)
			ret = -ENOMEM;
	}
	if (ret) {
		lbr_target_free(t);
		return ERR_PTR(ret);
	}
	return t;
}

static int lbr_target_register(struct lbr_target *t)
{
	unsigned int i;
	int ret;

	t->rp.kp.symbol_name = t->name;
	/* Armed only once every target is known to be good. */
	t->rp.kp.flags = KPROBE_FLAG_DISABLED;
	t->rp.handler = lbr_hw.backend == LBR_SNAP_BACKEND_NONE ?
			lbr_ret_handler_nolbr : lbr_ret_handler;
	t->rp.maxactive = max_t(int, 64, 4 * num_possible_cpus());

	ret = register_kretprobe(&t->rp);
	if (ret) {
		pr_err("target '%s': %s (%d)\n", t->name,
		       ret == -ENOENT ? "unknown symbol" :
		       "kretprobes refuse this function", ret);
		return ret;
	}
	ret = lbr_target_entry(t);
	if (ret) {
		pr_err("target '%s': cannot find the function's entry\n",
		       t->name);
	} else if (lbr_on_own_path(t)) {
		pr_err("target '%s': on lbr_snap's own capture path\n",
		       t->name);
		ret = -EPERM;
	}
	for (i = 0; !ret && i < lbr_nr_targets; i++) {
		if (lbr_targets[i]->start == t->start) {
			pr_err("target '%s': same function as '%s'\n",
			       t->name, lbr_targets[i]->name);
			ret = -EEXIST;
		}
	}
	if (ret)
		unregister_kretprobe(&t->rp);
	return ret;
}

static unsigned int lbr_count_tokens(const char *s)
{
	unsigned int n = 1;

	while ((s = strchr(s, ',')) != NULL) {
		n++;
		s++;
	}
	return n;
}

static void lbr_target_announce(struct lbr_target *t)
{
	pr_info("target %u: %s%%%s at %pS\n", t->id, t->name,
		lbr_ret_type_names[t->ret_type], (void *)t->start);
}

/**
 * lbr_targets_register - register every target of a targets= string
 * @spec: "sym[%type],sym[%type],..."
 *
 * All or nothing: on any error nothing stays registered and one line naming
 * the culprit is logged.
 */
int lbr_targets_register(const char *spec)
{
	char *buf, *cur, *tok;
	struct lbr_target *t;
	unsigned int i;
	int ret = 0;

	if (!spec || !*spec) {
		pr_err("no targets: load with targets=sym[%%type],...\n");
		return -EINVAL;
	}
	buf = kstrdup(spec, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	if (!lbr_ret_site)
		lbr_find_ret_site();

	cur = strim(buf);
	if (lbr_count_tokens(cur) > LBR_SNAP_MAX_TARGETS) {
		pr_err("targets: more than %d targets\n", LBR_SNAP_MAX_TARGETS);
		kfree(buf);
		return -E2BIG;
	}
	mutex_lock(&lbr_targets_lock);
	while ((tok = strsep(&cur, ",")) != NULL) {
		t = lbr_target_new(strim(tok));
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			break;
		}
		ret = lbr_target_register(t);
		if (ret) {
			lbr_target_free(t);
			break;
		}
		t->id = lbr_next_id++;
		lbr_targets[lbr_nr_targets++] = t;
	}
	mutex_unlock(&lbr_targets_lock);
	kfree(buf);

	if (ret) {
		lbr_targets_unregister();
		return ret;
	}
	for (i = 0; i < lbr_nr_targets; i++) {
		enable_kretprobe(&lbr_targets[i]->rp);
		lbr_target_announce(lbr_targets[i]);
	}
	return 0;
}

/**
 * lbr_target_add - add one target at run time
 * @spec: "sym[%type]", validated as targets= is
 * @id: the new target's id
 */
int lbr_target_add(const char *spec, u32 *id)
{
	char buf[LBR_SNAP_NAME_LEN + 8];
	struct lbr_target *t;
	int ret;

	if (strscpy(buf, spec, sizeof(buf)) < 0) {
		pr_err("target '%.32s...': name longer than %d characters\n",
		       spec, LBR_SNAP_NAME_LEN - 1);
		return -ENAMETOOLONG;
	}
	if (strchr(buf, ',')) {
		pr_err("target '%s': one target at a time\n", buf);
		return -EINVAL;
	}
	mutex_lock(&lbr_targets_lock);
	if (lbr_nr_targets == LBR_SNAP_MAX_TARGETS) {
		pr_err("targets: more than %d targets\n", LBR_SNAP_MAX_TARGETS);
		ret = -E2BIG;
		goto out;
	}
	t = lbr_target_new(strim(buf));
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		goto out;
	}
	ret = lbr_target_register(t);
	if (ret) {
		lbr_target_free(t);
		goto out;
	}
	t->id = lbr_next_id++;
	lbr_targets[lbr_nr_targets++] = t;
	enable_kretprobe(&t->rp);
	lbr_target_announce(t);
	*id = t->id;
out:
	mutex_unlock(&lbr_targets_lock);
	return ret;
}

/* Remove the target named @name; records already taken stay readable. */
int lbr_target_del(const char *name)
{
	struct lbr_target *t = NULL;
	unsigned int i;

	mutex_lock(&lbr_targets_lock);
	for (i = 0; i < lbr_nr_targets; i++) {
		if (!strcmp(lbr_targets[i]->name, name)) {
			t = lbr_targets[i];
			break;
		}
	}
	if (!t) {
		mutex_unlock(&lbr_targets_lock);
		return -ENOENT;
	}
	/* Waits for running handlers (synchronize_rcu() inside). */
	unregister_kretprobe(&t->rp);
	for (; i + 1 < lbr_nr_targets; i++)
		lbr_targets[i] = lbr_targets[i + 1];
	lbr_targets[--lbr_nr_targets] = NULL;
	mutex_unlock(&lbr_targets_lock);

	pr_info("target %u: %s removed (missed %d)\n", t->id, t->name,
		t->rp.nmissed);
	lbr_target_free(t);
	return 0;
}

void lbr_targets_unregister(void)
{
	struct kretprobe *rps[LBR_SNAP_MAX_TARGETS];
	unsigned int i;

	mutex_lock(&lbr_targets_lock);
	if (lbr_nr_targets) {
		for (i = 0; i < lbr_nr_targets; i++)
			rps[i] = &lbr_targets[i]->rp;
		unregister_kretprobes(rps, lbr_nr_targets);
		/* Handlers run with preemption off: let the last ones finish. */
		synchronize_rcu();
		for (i = 0; i < lbr_nr_targets; i++) {
			lbr_target_free(lbr_targets[i]);
			lbr_targets[i] = NULL;
		}
		lbr_nr_targets = 0;
	}
	mutex_unlock(&lbr_targets_lock);
}

unsigned int lbr_targets_count(void)
{
	return READ_ONCE(lbr_nr_targets);
}

static void lbr_target_stats(const struct lbr_target *t,
			     struct lbr_snap_target_stats *st)
{
	int cpu;

	memset(st, 0, sizeof(*st));
	strscpy(st->name, t->name, sizeof(st->name));
	st->func_addr = t->start;
	st->id = t->id;
	st->ret_type = t->ret_type;
	for_each_possible_cpu(cpu) {
		const struct lbr_counters *c = per_cpu_ptr(t->counters, cpu);

		st->hits += READ_ONCE(c->hits);
		st->captured += READ_ONCE(c->captured);
		st->filtered += READ_ONCE(c->filtered);
		st->dropped += READ_ONCE(c->dropped);
	}
	st->missed = t->rp.nmissed + t->rp.kp.nmissed;
}

/**
 * lbr_targets_stats - the counters of every target
 * @st: room for LBR_SNAP_MAX_TARGETS entries
 * Return: the number of targets.
 */
unsigned int lbr_targets_stats(struct lbr_snap_target_stats *st)
{
	unsigned int i, n;

	mutex_lock(&lbr_targets_lock);
	n = lbr_nr_targets;
	for (i = 0; i < n; i++)
		lbr_target_stats(lbr_targets[i], &st[i]);
	mutex_unlock(&lbr_targets_lock);
	return n;
}
