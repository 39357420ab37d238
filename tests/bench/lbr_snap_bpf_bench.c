// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own path beside lbr_snap's, for `make bench`: a BPF fexit
 * program on FUNC whose first act is bpf_get_branch_snapshot() (the seed's
 * system, kernel >= 5.16), with perf keeping LBR on through one
 * branch-stack event per CPU, as retsnoop does.  After each of N calls of
 * FUNC it reads the snapshot and counts the entries after the traced
 * function's return landed in the BPF trampoline: the same measure as
 * lbr_snap's probe_entries.  Prints, as tests/bench/guest.sh does for the
 * two hooks,
 *   BENCH func=F hook=bpf records=N min=A median=B max=C no_return=R
 * or "records=0 why=..." when the kernel refuses something.
 *
 * And, for make bench's cost table, the anchor of what a hook costs:
 *   lbr_snap_bpf_bench hold FUNC
 * attaches an empty BPF fexit program to FUNC (it returns 0 and does
 * nothing else, as retsnoop's least would), prints "HELD func=F" and
 * keeps it attached until it is killed; or "HOLD func=F why=..." and
 * exits 1 when the kernel refuses.
 *
 * usage: lbr_snap_bpf_bench FUNC N openat|testdev [RETFUNC...]
 *   openat:  each call is an open() of a file that does not exist
 *            (do_sys_openat2);
 *   testdev: each call is "int -22 1" to /dev/lbr_snap_test
 *            (lbr_test_int, which returns through lbr_test_fail).
 *   RETFUNC: other functions whose RET is FUNC's return (a tail call).
 *
 * The program is raw instructions (no clang needed): the snapshot buffer
 * is an array map's value, addressed with BPF_PSEUDO_MAP_VALUE so that no
 * helper call comes before the snapshot.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#define MAX_ENTRIES	32
#define MAX_FUNCS	4

struct snap {
	struct perf_branch_entry e[MAX_ENTRIES];
	__s64 bytes;		/* bpf_get_branch_snapshot()'s return */
	__u64 pid_tgid;		/* whose call (after the snapshot) */
};

struct range {
	unsigned long long start, end;
};

static const char *func;

static void none(const char *why)
{
	printf("BENCH func=%s hook=bpf records=0 why=%s\n", func, why);
	exit(0);
}

/* @sym is @prefix followed by digits only (bpf_trampoline_<key>). */
static bool prefix_digits(const char *sym, const char *prefix)
{
	size_t n = strlen(prefix);

	return !strncmp(sym, prefix, n) && sym[n] &&
	       strspn(sym + n, "0123456789") == strlen(sym + n);
}

/*
 * [start, end) of the first symbol named @name (or, with @prefix, named
 * @name and digits) in /proc/kallsyms: end is the next symbol's start.
 */
static bool ksym_range(const char *name, bool prefix, struct range *r)
{
	unsigned long long a, best = ~0ULL;
	char line[512], sym[256], t;
	FILE *f = fopen("/proc/kallsyms", "r");

	r->start = 0;
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &t, sym) == 3 && !r->start &&
		    (prefix ? prefix_digits(sym, name) : !strcmp(sym, name)))
			r->start = a;
	rewind(f);
	while (r->start && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx", &a) == 1 && a > r->start && a < best)
			best = a;
	fclose(f);
	r->end = best;
	return r->start && r->start < r->end;
}

static bool in(const struct range *r, unsigned long long a)
{
	return r->start && a >= r->start && a < r->end;
}

/*
 * Entries after the traced function's return, as lbr_snap counts
 * probe_entries: what is newer than the branch that lands in the BPF
 * trampoline (@tramp), lbr_snap's ret_site.  The return starts at the
 * newest entry leaving one of @fn; through a return thunk it takes a few
 * more branches (a JMP to the thunk, its RET; SRSO's a CALL too) before
 * one lands in the trampoline.  Entries are newest first.  -1 if the
 * return is not among them.
 */
static int probe_entries(const struct snap *s, const struct range *fn,
			 int nfn, const struct range *tramp)
{
	int n = s->bytes / sizeof(s->e[0]), i, j, k;

	if (n > MAX_ENTRIES)
		n = MAX_ENTRIES;
	for (i = 0; i < n; i++)
		for (j = 0; j < nfn; j++) {
			if (!in(&fn[j], s->e[i].from))
				continue;
			for (k = i; k >= 0 && k > i - 4; k--)
				if (in(tramp, s->e[k].to))
					return k;
			return -1;
		}
	return -1;
}

/*
 * One pinned cycles event per online CPU with a kernel branch stack: perf
 * keeps LBR on (and reads it, which bpf_get_branch_snapshot() needs).
 */
static int lbr_on_every_cpu(void)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_HARDWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_HW_CPU_CYCLES,
		.sample_period = 1ULL << 62,
		.sample_type = PERF_SAMPLE_BRANCH_STACK,
		.branch_sample_type = PERF_SAMPLE_BRANCH_KERNEL |
				      PERF_SAMPLE_BRANCH_ANY,
		.exclude_hv = 1,
		.pinned = 1,
	};
	long cpu, ncpu = sysconf(_SC_NPROCESSORS_CONF), ok = 0;

	for (cpu = 0; cpu < ncpu; cpu++) {
		if (syscall(SYS_perf_event_open, &attr, -1, cpu, -1, 0) >= 0)
			ok++;
		else if (errno != ENODEV)	/* ENODEV: offline */
			return -1;
	}
	return ok ? 0 : -1;
}

/* "sym+0xoff" of @a into @buf, from /proc/kallsyms (the nearest below). */
static const char *sym(unsigned long long a, char *buf, size_t len)
{
	unsigned long long x, best = 0;
	char line[512], name[256], t;
	FILE *f = fopen("/proc/kallsyms", "r");

	snprintf(buf, len, "%#llx", a);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &x, &t, name) == 3 &&
		    x <= a && x > best) {
			best = x;
			snprintf(buf, len, "%s+%#llx", name, a - x);
		}
	if (f)
		fclose(f);
	return buf;
}

/*
 * The first snapshot's return (with none, its oldest entry) and what came
 * after it, newest last.
 */
static void show_path(const struct snap *s, int landing, const char *what)
{
	char f[300], t[300];
	int i;

	/* The map's size, as probe_entries() bounds it. */
	if (landing >= MAX_ENTRIES)
		landing = MAX_ENTRIES - 1;
	for (i = landing; i >= 0; i--)
		printf("# BENCH-PATH func=%s hook=bpf %s %s -> %s\n", func,
		       i == landing ? what : "wasted ",
		       sym(s->e[i].from, f, sizeof(f)),
		       sym(s->e[i].to, t, sizeof(t)));
}

/* The LBR entries perf reads (x86 PMU caps/branches), 0 if unknown. */
static int lbr_depth(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/cpu/caps/branches", "r");
	int n = 0;

	if (f) {
		if (fscanf(f, "%d", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

/* hold FUNC: an empty fexit program on FUNC until killed. */
static int hold(const char *name)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct btf *btf = btf__load_vmlinux_btf();
	int id, prog, link;

	if (!btf || libbpf_get_error(btf)) {
		printf("HOLD func=%s why=no-kernel-btf\n", name);
		return 1;
	}
	id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	btf__free(btf);
	if (id <= 0) {
		printf("HOLD func=%s why=no-btf-for-function\n", name);
		return 1;
	}
	{
		LIBBPF_OPTS(bpf_prog_load_opts, o,
			    .expected_attach_type = BPF_TRACE_FEXIT,
			    .attach_btf_id = id);

		prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "lbr_bench_empty",
				     "GPL", insns,
				     sizeof(insns) / sizeof(insns[0]), &o);
	}
	if (prog < 0) {
		printf("HOLD func=%s why=program-refused\n", name);
		return 1;
	}
	link = bpf_raw_tracepoint_open(NULL, prog);
	if (link < 0) {
		printf("HOLD func=%s why=attach-refused\n", name);
		return 1;
	}
	printf("HELD func=%s\n", name);
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	struct range fn[MAX_FUNCS], tramp;
	int n, i, nfn = 0, prog, link, map, key = 0, *v, nv = 0, nr = 0;
	int none_snap = 0, other = 0, partial = 0, depth = lbr_depth();
	struct snap s, zero = { 0 };
	const char *how;
	struct btf *btf;
	int id;

	if (argc == 3 && !strcmp(argv[1], "hold"))
		return hold(argv[2]);
	if (argc < 4 || argc > 4 + MAX_FUNCS - 1) {
		fprintf(stderr, "usage: %s FUNC N openat|testdev [RETFUNC...]\n",
			argv[0]);
		return 2;
	}
	func = argv[1];
	n = atoi(argv[2]);
	how = argv[3];
	v = calloc(n > 0 ? n : 1, sizeof(*v));
	if (!v)
		return 1;
	for (i = 0; i < argc - 3; i++) {
		const char *name = i ? argv[3 + i] : func;

		if (!ksym_range(name, false, &fn[nfn++]))
			none("not-in-kallsyms");
	}

	btf = btf__load_vmlinux_btf();
	if (!btf || libbpf_get_error(btf))
		none("no-kernel-btf");
	id = btf__find_by_name_kind(btf, func, BTF_KIND_FUNC);
	btf__free(btf);
	if (id <= 0)
		none("no-btf-for-function");	/* a module's: no BTF of ours */
	if (lbr_on_every_cpu())
		none("perf-has-no-lbr");

	map = bpf_map_create(BPF_MAP_TYPE_ARRAY, "lbr_bench", sizeof(key),
			     sizeof(s), 1, NULL);
	if (map < 0)
		none("no-array-map");
	{
		const struct bpf_insn insns[] = {
			/* r6 = &value (BPF_PSEUDO_MAP_VALUE, offset 0) */
			{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_6,
			  .src_reg = BPF_PSEUDO_MAP_VALUE, .imm = map },
			{ .imm = 0 },
			/* bpf_get_branch_snapshot(r6, sizeof(entries), 0) */
			{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1,
			  .src_reg = BPF_REG_6 },
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2,
			  .imm = sizeof(s.e) },
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3 },
			{ .code = BPF_JMP | BPF_CALL,
			  .imm = BPF_FUNC_get_branch_snapshot },
			/* value.bytes = r0; r6 survives calls */
			{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_6,
			  .src_reg = BPF_REG_0, .off = sizeof(s.e) },
			/* value.pid_tgid = bpf_get_current_pid_tgid() */
			{ .code = BPF_JMP | BPF_CALL,
			  .imm = BPF_FUNC_get_current_pid_tgid },
			{ .code = BPF_STX | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_6,
			  .src_reg = BPF_REG_0, .off = sizeof(s.e) + 8 },
			{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
			{ .code = BPF_JMP | BPF_EXIT },
		};
		LIBBPF_OPTS(bpf_prog_load_opts, o,
			    .expected_attach_type = BPF_TRACE_FEXIT,
			    .attach_btf_id = id);

		prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "lbr_bench", "GPL",
				     insns, sizeof(insns) / sizeof(insns[0]),
				     &o);
	}
	if (prog < 0)
		none("program-refused");
	link = bpf_raw_tracepoint_open(NULL, prog);
	if (link < 0)
		none("attach-refused");
	/* The kernel lists it as bpf_trampoline_<key> (the only one here). */
	if (!ksym_range("bpf_trampoline_", true, &tramp))
		none("no-trampoline-in-kallsyms");

	for (i = 0; i < n; i++) {
		int fd;

		bpf_map_update_elem(map, &key, &zero, BPF_ANY);
		if (!strcmp(how, "openat")) {
			fd = open("/lbr-bench-no-such-file", O_RDONLY);
			if (fd >= 0)
				close(fd);
		} else {
			fd = open("/dev/lbr_snap_test", O_WRONLY);
			if (fd < 0 || write(fd, "int -22 1", 9) != 9)
				none("no-test-device");
			close(fd);
		}
		if (bpf_map_lookup_elem(map, &key, &s) || !s.pid_tgid) {
			none_snap++;	/* the program did not run */
			continue;
		}
		if ((__u32)s.pid_tgid != (__u32)syscall(SYS_gettid)) {
			other++;	/* another task's call came last */
			continue;
		}
		if (s.bytes <= 0) {
			none_snap++;	/* the helper failed, or no LBR */
			continue;
		}
		id = probe_entries(&s, fn, nfn, &tramp);
		if (id < 0) {
			/* The first: what took the whole snapshot. */
			if (!nr++ && !nv)
				show_path(&s, s.bytes / (int)sizeof(s.e[0]) - 1,
					  "(no return)");
			/* Only a snapshot of the whole LBR was pushed out. */
			partial += depth <= 0 ||
				   s.bytes / (int)sizeof(s.e[0]) < depth;
			continue;
		}
		if (!nv)
			show_path(&s, id, "return ");
		v[nv++] = id;
	}
	close(link);
	close(prog);
	if (none_snap || other)
		printf("# BENCH func=%s hook=bpf: %d calls without a snapshot, %d overwritten by another task's\n",
		       func, none_snap, other);
	if (!nv) {
		/*
		 * Snapshots, none with the return: the path took them whole
		 * if each holds all of perf's LBR entries; "no-return"
		 * otherwise, which the bench does not take for a reason.
		 */
		printf("BENCH func=%s hook=bpf records=0 no_return=%d why=%s\n",
		       func, nr, !nr ? "no-snapshot" :
		       partial ? "no-return" : "return-pushed-out");
		return 0;
	}
	qsort(v, nv, sizeof(*v), cmp);
	printf("BENCH func=%s hook=bpf records=%d min=%d median=%d max=%d no_return=%d\n",
	       func, nv, v[0], v[nv / 2], v[nv - 1], nr);
	return 0;
}
