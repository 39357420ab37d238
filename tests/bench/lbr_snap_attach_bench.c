// SPDX-License-Identifier: GPL-2.0
/*
 * make bench's attach line: how long lbr_snap takes to attach N functions
 * and to detach them, beside what the kernel's own way takes, an empty
 * BPF fexit program on each (one program and one link per function, as
 * retsnoop's fentry mode clones them), in the same boot, one after the
 * other, on the same functions.
 *
 * The functions: those of vmlinux BTF returning an int, a long or a
 * pointer (what can fail), with at most six arguments, all scalars (what
 * both can hook), that ftrace can hook (available_filter_functions), one
 * symbol of their name in kallsyms; N of them spread over that list.
 * Prints
 *   attach n=N lbr_snap_s=A bpf_s=B ratio=A/B lbr_snap_detach_s=C
 *          bpf_detach_s=D lbr_snap_n=X bpf_n=Y candidates=M
 *          lbr_snap_kretprobes=K
 * where X and Y are how many each attached (each refuses a few the other
 * takes), K how many of lbr_snap's took kretprobes (past the direct
 * calls 6.1's ftrace takes), or "attach n=N why=..." when something is
 * missing.
 *
 * usage: lbr_snap_attach_bench N [CMD]
 * (lbr_snap loaded, /dev/lbr_snap writable, root.)
 *
 * With CMD, no BPF: the candidates take any arguments; lbr_snap's N (all
 * there are, if fewer) stay attached while "sh -c CMD" runs under the
 * tree filter (it makes them fail and reads the records), then are
 * detached, and
 *   hold n=N lbr_snap_n=X lbr_snap_kretprobes=K cmd_status=S attach_s=A
 *        detach_s=D candidates=M
 * is printed: tests/guest/mass-attach.sh, under the debug kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "lbr_snap.h"
#include "../selftests/lbr_test_funcs.h"

#define CHUNK	2000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void why(unsigned long n, const char *what)
{
	printf("attach n=%lu why=%s\n", n, what);
	exit(0);
}

/* @id with typedefs and qualifiers skipped. */
static const struct btf_type *skip_mods(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = btf__type_by_id(btf, id);

	while (t && (btf_is_typedef(t) || btf_is_mod(t)))
		t = btf__type_by_id(btf, t->type);
	return t;
}

static bool scalar(const struct btf *btf, __u32 id)
{
	const struct btf_type *t = skip_mods(btf, id);

	return t && (btf_is_int(t) || btf_is_ptr(t) || btf_is_enum(t));
}

/* With a CMD: no BPF program, so any arguments lbr_snap takes. */
static bool hold;

/* Returns what can fail, takes at most six scalar arguments. */
static bool wanted(const struct btf *btf, const struct btf_type *fn)
{
	const struct btf_type *proto = btf__type_by_id(btf, fn->type), *r;
	const struct btf_param *p;
	int i;

	if (!proto || !btf_is_func_proto(proto) || btf_vlen(proto) > 6)
		return false;
	r = skip_mods(btf, proto->type);
	if (!r || !(btf_is_ptr(r) ||
		    (btf_is_int(r) && (btf_int_encoding(r) & BTF_INT_SIGNED) &&
		     r->size >= 4)))
		return false;
	p = btf_params(proto);
	for (i = 0; !hold && i < btf_vlen(proto); i++)
		if (!p[i].type || !scalar(btf, p[i].type))
			return false;
	return true;
}

/* vmlinux_funcs()'s @want: a FUNC of BTF that wanted() takes. */
static bool typed(const char *name, void *priv)
{
	struct btf *btf = priv;
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);

	return id > 0 && wanted(btf, btf__type_by_id(btf, id));
}

/* The candidates, sorted by name, with their BTF ids. */
static struct func *candidates(size_t *nr)
{
	struct btf *btf = btf__load_vmlinux_btf();
	struct func *f;
	size_t i;

	if (!btf || libbpf_get_error(btf))
		return NULL;
	f = vmlinux_funcs(nr, typed, btf);
	for (i = 0; f && i < *nr; i++)
		f[i].btf_id = btf__find_by_name_kind(btf, f[i].name,
						     BTF_KIND_FUNC);
	btf__free(btf);
	return f;
}

static int targets_ioc(int fd, unsigned long cmd,
		       struct lbr_snap_target_entry *e, size_t n, __u32 flags,
		       __u32 *done)
{
	struct lbr_snap_targets t = {
		.entries_ptr = (unsigned long)e, .nr = n,
		.entry_size = sizeof(*e), .flags = flags,
	};
	int ret = ioctl(fd, cmd, &t) ? -errno : 0;

	*done = t.done;
	return ret;
}

/* Detach those of @e[0..@n) that were attached; how many remain, or -1. */
static int detach(int fd, struct lbr_snap_target_entry *e, size_t n)
{
	size_t i, k, m = 0;
	__u32 done;
	int ret = 0;

	for (i = 0; i < n; i++)
		if (!e[i].error)
			e[m++].id = e[i].id;
	for (i = 0; i < m; i += k) {
		k = m - i < CHUNK ? m - i : CHUNK;
		if (targets_ioc(fd, LBR_SNAP_IOC_DEL_TARGETS, e + i, k, 0,
				&done))
			ret = -1;
	}
	return ret;
}

/*
 * lbr_snap: attach and detach @f; the seconds each took, how many.  With
 * @cmd, run it in between, this process and what it starts followed by
 * the tree filter from before the first attach (their records alone, not
 * every task's); its wait status in *@status.
 * Whatever happens, nothing stays attached that this attached.
 */
static int lbr_snap_run(const struct func *f, size_t n, double *att,
			double *det, unsigned int *kretprobes,
			const char *cmd, int *status)
{
	struct lbr_snap_target_entry *e = calloc(n, sizeof(*e));
	int fd = open(LBR_SNAP_DEVICE, O_RDWR | O_CLOEXEC);
	struct lbr_snap_filter tree = {
		.flags = LBR_SNAP_FILTER_TREE, .tgid = getpid(),
	};
	struct lbr_snap_filter off = { 0 };
	int ret = -1;
	size_t i, k;
	__u32 done, added = 0;
	double t0;

	if (!e || fd < 0)
		goto out;
	for (i = 0; i < n; i++) {
		snprintf(e[i].spec, sizeof(e[i].spec), "%s", f[i].name);
		e[i].addr = f[i].addr;
	}
	if (cmd && ioctl(fd, LBR_SNAP_IOC_SET_FILTER, &tree))
		goto out;
	t0 = now_s();
	for (i = 0; i < n; i += k) {
		k = n - i < CHUNK ? n - i : CHUNK;
		/* 6.1 takes some 7,680 by fexit: kretprobes past them. */
		if (targets_ioc(fd, LBR_SNAP_IOC_ADD_TARGETS, e + i, k,
				LBR_SNAP_BATCH_SKIP | LBR_SNAP_BATCH_FALLBACK,
				&done)) {
			detach(fd, e, i);
			goto out;
		}
		added += done;
	}
	*att = now_s() - t0;
	for (i = 0; i < n; i++)
		if (!e[i].error)
			*kretprobes += e[i].hook == LBR_SNAP_HOOK_KRETPROBE;
	if (cmd)
		*status = system(cmd);
	t0 = now_s();
	if (!detach(fd, e, n))
		ret = added;
	*det = now_s() - t0;
out:
	if (cmd && fd >= 0)
		ioctl(fd, LBR_SNAP_IOC_SET_FILTER, &off);
	if (fd >= 0)
		close(fd);
	free(e);
	return ret;
}

/* An empty fexit program and its link on each of @f, then all closed. */
static int bpf_run(const struct func *f, size_t n, double *att, double *det)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int *fds = calloc(2 * n, sizeof(*fds));
	size_t i, nfd = 0;
	int attached = 0;
	double t0;

	if (!fds)
		return -1;
	t0 = now_s();
	for (i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_prog_load_opts, o,
			    .expected_attach_type = BPF_TRACE_FEXIT,
			    .attach_btf_id = f[i].btf_id);
		int prog, link;

		prog = bpf_prog_load(BPF_PROG_TYPE_TRACING, "lbr_attach",
				     "GPL", insns, 2, &o);
		if (prog < 0)
			continue;
		link = bpf_raw_tracepoint_open(NULL, prog);
		fds[nfd++] = prog;
		if (link < 0)
			continue;
		fds[nfd++] = link;
		attached++;
	}
	*att = now_s() - t0;
	t0 = now_s();
	for (i = 0; i < nfd; i++)
		close(fds[i]);
	*det = now_s() - t0;
	free(fds);
	return attached;
}

int main(int argc, char **argv)
{
	unsigned long want = argc > 1 ? strtoul(argv[1], NULL, 0) : 10000;
	struct rlimit rl = { 1 << 20, 1 << 20 };
	double la = 0, ld = 0, ba = 0, bd = 0;
	unsigned int kr = 0;
	int status = -1;
	struct func *f;
	size_t nf, i;
	int ln, bn;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (setrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max = 65536;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	hold = argc > 2;
	f = candidates(&nf);
	if (!f)
		why(want, "no-btf-kallsyms-or-tracefs");
	/* A kernel with fewer (the debug kernel's small config): all. */
	if (hold && nf < want)
		want = nf;
	if (nf < want) {
		printf("attach n=%lu why=fewer-candidates candidates=%zu\n",
		       want, nf);
		return 0;
	}
	/* Spread over the kernel, not its first names only. */
	for (i = 0; i < want; i++)
		f[i] = f[i * (nf / want)];
	ln = lbr_snap_run(f, want, &la, &ld, &kr, argc > 2 ? argv[2] : NULL,
			  &status);
	if (ln < 0)
		why(want, "lbr_snap-refused-a-batch-or-its-removal");
	if (argc > 2) {
		printf("hold n=%lu lbr_snap_n=%d lbr_snap_kretprobes=%u cmd_status=%d attach_s=%.2f detach_s=%.2f candidates=%zu\n",
		       want, ln, kr,
		       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
		       la, ld, nf);
		return 0;
	}
	bn = bpf_run(f, want, &ba, &bd);
	if (bn < 0)
		why(want, "no-memory");
	printf("attach n=%lu lbr_snap_s=%.2f bpf_s=%.2f ratio=%.2f lbr_snap_detach_s=%.2f bpf_detach_s=%.2f lbr_snap_n=%d bpf_n=%d candidates=%zu lbr_snap_kretprobes=%u\n",
	       want, la, ba, ba > 0 ? la / ba : 0.0, ld, bd, ln, bn, nf, kr);
	return 0;
}
