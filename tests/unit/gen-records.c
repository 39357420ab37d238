// SPDX-License-Identifier: GPL-2.0
/*
 * Write synthetic /dev/lbr_snap record streams for the lbr-snap tests.
 *
 *   gen-records MODE > FILE
 *
 * MODE "stream" is a stream of valid records covering every return type,
 * variable numbers of entries, records written with a bigger header and
 * entries than this ABI knows, with older 16-byte entries, of a newer ABI
 * version (to be skipped), without LBR, and with odd comm bytes.  The other
 * modes write one valid record followed by a broken one.  MODE "paths" is
 * a known mix of error paths for lbr-snap report (see gen_paths()).  The
 * addresses match tests/unit/kallsyms.txt.
 *
 *   gen-records kallsyms NSYMS > FILE
 *   gen-records bulk NRECS NSYMS > FILE
 *
 * are for benchmarks: a kallsyms the size of a real kernel's (NSYMS lines,
 * text, data and module symbols mixed, about 150000 in a distribution
 * kernel), and NRECS records of a storm of failing opens that symbolize
 * against it: 32 entries each, most of them along a few hot paths as in a
 * real storm, the rest anywhere in the kernel text, the newest two in the
 * lbr_snap module, and one of 4 call stacks of 10 frames (every ninth none).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lbr_snap.h>

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define JUNK		0xee	/* fills fields the tool must not read */
#define TEXT		0xffffffff81000000ull
#define DO_OPEN		0xffffffff81001000ull	/* do_sys_openat2 */
#define GETNAME		0xffffffff81001200ull	/* getname_flags */
#define WEAK_FN		0xffffffff81001800ull
#define SYS_OPEN	0xffffffff81002000ull	/* __x64_sys_openat */
#define SYSCALL		0xffffffff81002800ull	/* do_syscall_64 */
#define ENTRY		0xffffffff81002c00ull	/* entry_SYSCALL_64_after_hwframe */
#define KMALLOC		0xffffffff81004000ull	/* kmalloc_trace */
#define WEAK_SMALL	0xffffffff81005000ull
#define TRAMP		0xffffffff81005800ull	/* __kretprobe_trampoline */
#define THUNK		0xffffffff81005c00ull	/* __x86_return_thunk */
#define UNSORTED	0xffffffff81000800ull	/* unsorted_late */
#define HANDLER		0xffffffffc0100000ull	/* lbr_snap_ret_handler */
#define EXT4_OPEN	0xffffffffc0200000ull	/* ext4_file_open [ext4] */
/* Interrupt and exception entry, in irq-kallsyms.txt only (run.sh). */
#define ASM_SYSVEC	0xffffffff81007000ull	/* asm_sysvec_apic_timer_interrupt */
#define SYSVEC		0xffffffff81007100ull	/* sysvec_apic_timer_interrupt */
#define IRQ_ENTER	0xffffffff81007200ull	/* irq_enter_rcu */
#define IRQ_EXIT	0xffffffff81007300ull	/* irq_exit_rcu */
#define IRET		0xffffffff81007400ull	/* native_irq_return_iret */
#define ASM_PF		0xffffffff81007500ull	/* asm_exc_page_fault */
#define EXC_PF		0xffffffff81007600ull	/* exc_page_fault */

struct layout {
	unsigned int hdr_size;		/* 0: sizeof(struct lbr_snap_record) */
	unsigned int entry_size;	/* 0: sizeof(struct lbr_snap_branch) */
	unsigned int version;		/* 0: LBR_SNAP_ABI_VERSION */
};

static const struct layout native;

static unsigned long long ts_ns = 12000000000ull;

/* A record header with the fields most records share. */
static struct lbr_snap_record hdr(const char *comm, unsigned long long func,
				  unsigned int ret_type, long long retval)
{
	struct lbr_snap_record h = {
		.ts_ns = ts_ns, .cpu = 1, .pid = 123, .tgid = 123,
		.func_addr = func, .caller = SYS_OPEN + 0x55,
		.retval = retval, .ret_type = ret_type,
		.backend = LBR_SNAP_BACKEND_INTEL, .lbr_format = 5,
	};

	ts_ns += 250000000ull;
	memcpy(h.comm, comm, strnlen(comm, sizeof(h.comm)));
	return h;
}

/*
 * Write @h, its @nr entries laid out as @l says and @nr_stack frames of
 * @stack after them, extra bytes junk.
 */
static void emit_stack(struct lbr_snap_record h,
		       const struct lbr_snap_branch *br, unsigned int nr,
		       const struct layout *l, const unsigned long long *stack,
		       unsigned int nr_stack)
{
	unsigned int hs = l->hdr_size ? l->hdr_size : sizeof(h);
	unsigned int es = l->entry_size ? l->entry_size : sizeof(*br);
	unsigned int size = hs + nr * es + nr_stack * 8, i;
	unsigned char *buf = malloc(size);

	memset(buf, JUNK, size);
	h.size = size;
	h.version = l->version ? l->version : LBR_SNAP_ABI_VERSION;
	h.hdr_size = hs;
	h.entry_size = es;
	h.nr_entries = nr;
	h.nr_stack = nr_stack;
	memcpy(buf, &h, sizeof(h) < hs ? sizeof(h) : hs);
	for (i = 0; i < nr; i++)
		memcpy(buf + hs + i * es, &br[i],
		       sizeof(*br) < es ? sizeof(*br) : es);
	if (nr_stack)
		memcpy(buf + hs + nr * es, stack, nr_stack * 8);
	fwrite(buf, 1, size, stdout);
	free(buf);
}

static void emit(struct lbr_snap_record h, const struct lbr_snap_branch *br,
		 unsigned int nr, const struct layout *l)
{
	emit_stack(h, br, nr, l, NULL, 0);
}

static void emit_plain(struct lbr_snap_record h)
{
	emit(h, NULL, 0, &native);
}

#define BR(f, t, fl, ty)	{ .from = (f), .to = (t), .flags = (fl), .type = (ty) }

/* Weak and late-listed symbols; ts 0.999999 tests truncation to us. */
static void rec_success(void)
{
	struct lbr_snap_record h = hdr("init", WEAK_FN, LBR_SNAP_RET_INT, 0);
	struct lbr_snap_branch br[] = {
		BR(WEAK_FN + 0x8, WEAK_SMALL + 0x2, 0, LBR_SNAP_BT_CALL),
		BR(WEAK_SMALL + 0x10, UNSORTED + 0x4, 0, LBR_SNAP_BT_JMP),
	};

	h.ts_ns = 999999999;
	h.cpu = 0;
	h.tgid = 1;
	h.pid = 1;
	emit(h, br, 2, &native);
}

/* The typical capture: an error return, probe-path entries at the end. */
static void rec_openat(void)
{
	struct lbr_snap_record h = hdr("cat", DO_OPEN, LBR_SNAP_RET_INT, -2);
	struct lbr_snap_branch br[] = {
		BR(SYS_OPEN + 0x4a, DO_OPEN, 0, LBR_SNAP_BT_CALL),
		BR(DO_OPEN + 0x30, GETNAME, 0, LBR_SNAP_BT_CALL),
		BR(GETNAME + 0x88, DO_OPEN + 0x35, LBR_SNAP_BR_MISPRED,
		   LBR_SNAP_BT_RET),
		BR(DO_OPEN + 0x60, DO_OPEN + 0x160,
		   LBR_SNAP_BR_PREDICTED | LBR_SNAP_BR_CYCLES, LBR_SNAP_BT_JCC),
		BR(DO_OPEN + 0xc2, TRAMP, 0, LBR_SNAP_BT_RET),
		BR(TRAMP + 0x20, HANDLER + 0x10, 0, LBR_SNAP_BT_IND_CALL),
	};

	h.ts_ns = 12345678901ull;
	h.entry_ns = h.ts_ns - 4321;	/* called 4.321 us before */
	br[3].cycles = 12;
	h.probe_entries = 2;
	emit(h, br, 6, &native);
}

/* A module function returning long, from a thread (tid != pid). */
static void rec_module(void)
{
	struct lbr_snap_record h = hdr("worker", EXT4_OPEN, LBR_SNAP_RET_LONG,
				       -524);
	struct lbr_snap_branch br[] = {
		BR(EXT4_OPEN + 0x20, EXT4_OPEN + 0x500, 0, LBR_SNAP_BT_JCC),
	};

	h.cpu = 0;
	h.tgid = 400;
	h.pid = 401;
	h.probe_entries = 1;
	emit(h, br, 1, &native);
}

/* Header and entries larger than this ABI's: the tool must skip the rest. */
static void rec_bigger_layout(void)
{
	static const struct layout big = {
		.hdr_size = sizeof(struct lbr_snap_record) + 24,
		.entry_size = sizeof(struct lbr_snap_branch) + 8,
	};
	struct lbr_snap_record h = hdr("big", KMALLOC, LBR_SNAP_RET_PTR, -12);
	struct lbr_snap_branch br[] = {
		BR(KMALLOC + 0x10, KMALLOC + 0x40, 0, LBR_SNAP_BT_JCC),
		BR(KMALLOC + 0x44, GETNAME + 0x8, LBR_SNAP_BR_MISPRED,
		   LBR_SNAP_BT_CALL),
		BR(GETNAME + 0x20, KMALLOC + 0x49, 0, LBR_SNAP_BT_RET),
	};

	emit(h, br, 3, &big);
}

/*
 * Entries of an older 16-byte layout (from, to): the flags must read as 0.
 * The odd addresses would show as mispredicted if the tool read 24 bytes.
 */
static void rec_older_entries(void)
{
	static const struct layout old = { .entry_size = 16 };
	struct lbr_snap_record h = hdr("old", GETNAME, LBR_SNAP_RET_INT, -14);
	struct lbr_snap_branch br[] = {
		BR(GETNAME + 0x1, GETNAME + 0x11, 0, 0),
		BR(GETNAME + 0x21, GETNAME + 0x31, 0, 0),
		BR(GETNAME + 0x41, DO_OPEN + 0x51, 0, 0),
	};

	emit(h, br, 3, &old);
}

/* A record of the next ABI version: skipped with a warning. */
static void rec_newer(void)
{
	static const struct layout v2 = {
		.version = LBR_SNAP_ABI_VERSION + 1,
		.hdr_size = sizeof(struct lbr_snap_record) + 16,
	};
	struct lbr_snap_record h = hdr("newer", DO_OPEN, LBR_SNAP_RET_INT, -1);
	struct lbr_snap_branch br[] = {
		BR(DO_OPEN + 0x1, DO_OPEN + 0x2, 0, 0),
	};

	emit(h, br, 1, &v2);
}

static void rec_no_lbr(void)
{
	struct lbr_snap_record h = hdr("ls", DO_OPEN, LBR_SNAP_RET_INT, -13);

	h.flags = LBR_SNAP_REC_NO_LBR;
	h.backend = LBR_SNAP_BACKEND_NONE;
	h.lbr_format = 0;
	emit_plain(h);
}

/*
 * The record notes: the freeze found LBR off, and LBR was recording again
 * when the read ended; then a record without entries from a CPU lbr_snap
 * read no LBR from, on a machine with LBR.
 */
static void gen_notes(void)
{
	struct lbr_snap_record h = hdr("ls", DO_OPEN, LBR_SNAP_RET_INT, -13);
	struct lbr_snap_branch br[] = {
		BR(DO_OPEN + 0x10, DO_OPEN + 0x20, 0, 0),
	};

	h.flags = LBR_SNAP_REC_WAS_OFF | LBR_SNAP_REC_RAN_AGAIN;
	emit(h, br, 1, &native);
	h = hdr("ls", DO_OPEN, LBR_SNAP_RET_INT, -13);
	h.flags = LBR_SNAP_REC_NO_LBR;
	emit_plain(h);
}

/* Every rendering of a return value, without entries. */
static void rec_returns(void)
{
	static const struct {
		unsigned int type;
		long long retval;
	} rets[] = {
		{ LBR_SNAP_RET_PTR, 0 },
		{ LBR_SNAP_RET_PTR, -0x777fedcba988ll },	/* 0xffff888012345678 */
		{ LBR_SNAP_RET_BOOL, 1 },
		{ LBR_SNAP_RET_BOOL, 0 },
		{ LBR_SNAP_RET_INT, -600 },		/* no name: decimal */
		{ LBR_SNAP_RET_LONG, -4096 },		/* not an error */
		{ LBR_SNAP_RET_INT, 42 },
		{ LBR_SNAP_RET_INT, -512 },		/* ERESTARTSYS */
		{ LBR_SNAP_RET_LONG, -133 },		/* EHWPOISON */
		{ LBR_SNAP_RET_LONG, -4095 },		/* unnamed error */
		{ LBR_SNAP_RET_PTR, -600 },
		{ LBR_SNAP_RET_VOID, 0 },		/* no value, no errno */
		{ 7, -22 },				/* unknown type */
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rets); i++)
		emit_plain(hdr("ret", KMALLOC, rets[i].type, rets[i].retval));
}

/* comm bytes that need escaping; func_addr inside a function. */
static void rec_odd_comm(void)
{
	struct lbr_snap_record h = hdr("a\"b\\c\x01\x7f\xc3\xa9\xff", DO_OPEN + 0x10,
				       LBR_SNAP_RET_INT, 0);

	emit_plain(h);
}

/*
 * A comm filling all 16 bytes without NUL; func and a branch source below
 * the first symbol; a target at an address two symbols share (the first
 * listed wins).
 */
static void rec_unknown(void)
{
	struct lbr_snap_record h = hdr("abcdefghijklmnop", 0x1000,
				       LBR_SNAP_RET_INT, -22);
	struct lbr_snap_branch br[] = {
		BR(0x00007f0000001234ull, TEXT, 0, LBR_SNAP_BT_FAR),
	};

	h.caller = 0x2000;
	emit(h, br, 1, &native);
}

/*
 * The call stack of a failing open, under a bigger header and entries
 * (the stack is after the entries, wherever they end); then a record
 * whose unwinder did not reach the caller.
 */
static void rec_stack(void)
{
	static const struct layout big = {
		.hdr_size = sizeof(struct lbr_snap_record) + 16,
		.entry_size = sizeof(struct lbr_snap_branch) + 8,
	};
	static const unsigned long long stack[] = {
		SYS_OPEN + 0x55, SYSCALL + 0x3b, ENTRY + 0x63,
	};
	struct lbr_snap_record h = hdr("ls", DO_OPEN, LBR_SNAP_RET_INT, -2);
	struct lbr_snap_branch br[] = {
		BR(DO_OPEN + 0x60, DO_OPEN + 0x160, 0, LBR_SNAP_BT_JCC),
		BR(DO_OPEN + 0x1c2, THUNK, 0, LBR_SNAP_BT_JMP),
	};

	emit_stack(h, br, 2, &big, stack, ARRAY_SIZE(stack));
	h = hdr("ls", DO_OPEN, LBR_SNAP_RET_INT, -2);
	h.flags = LBR_SNAP_REC_NO_STACK;
	emit(h, br, 2, &native);
}

static void gen_stream(void)
{
	rec_success();
	rec_openat();
	rec_module();
	rec_bigger_layout();
	rec_older_entries();
	rec_newer();
	rec_no_lbr();
	rec_returns();
	rec_odd_comm();
	rec_unknown();
	rec_stack();
}

/*
 * The paths of do_sys_openat2's error returns: each record is some entries
 * before the function (which differ from record to record), the path, and
 * probe-path entries (1 or 2 of them), so only trimming both ends makes the
 * same paths count as one.
 */
static const struct lbr_snap_branch path_a[] = {
	BR(SYS_OPEN + 0x4a, DO_OPEN, 0, LBR_SNAP_BT_CALL),
	BR(DO_OPEN + 0x30, GETNAME, 0, LBR_SNAP_BT_CALL),
	BR(GETNAME + 0x88, DO_OPEN + 0x35, 0, LBR_SNAP_BT_RET),
	BR(DO_OPEN + 0x60, DO_OPEN + 0x160, 0, LBR_SNAP_BT_JCC),
	BR(DO_OPEN + 0x1c2, THUNK, 0, LBR_SNAP_BT_JMP),
	BR(THUNK, TRAMP, 0, LBR_SNAP_BT_RET),
};

static const struct lbr_snap_branch path_b[] = {
	BR(SYS_OPEN + 0x4a, DO_OPEN, 0, LBR_SNAP_BT_CALL),
	BR(DO_OPEN + 0x60, DO_OPEN + 0x80, 0, LBR_SNAP_BT_JCC),
	BR(DO_OPEN + 0x90, DO_OPEN + 0x1b0, 0, LBR_SNAP_BT_JCC),
	BR(DO_OPEN + 0x1c2, THUNK, 0, LBR_SNAP_BT_JMP),
	BR(THUNK, TRAMP, 0, LBR_SNAP_BT_RET),
};

/* A path inside kmalloc_trace, which returns without a thunk. */
static const struct lbr_snap_branch path_c[] = {
	BR(KMALLOC + 0x10, KMALLOC + 0x40, 0, LBR_SNAP_BT_JCC),
	BR(KMALLOC + 0x4c, TRAMP, 0, LBR_SNAP_BT_RET),
};

/* Record @n of @func returning @retval through @path, from @stack. */
static void emit_path_stack(unsigned long long func, unsigned int type,
			    long long retval, const struct lbr_snap_branch *path,
			    unsigned int len, unsigned int n,
			    const unsigned long long *stack,
			    unsigned int nr_stack)
{
	struct lbr_snap_record h = hdr("paths", func, type, retval);
	struct lbr_snap_branch br[LBR_SNAP_MAX_ENTRIES];
	unsigned int nr = 0, pre = n % 3, probe = 1 + n % 2, i;

	for (i = 0; i < pre; i++)
		br[nr++] = (struct lbr_snap_branch)BR(WEAK_FN + 0x10 * n + i,
						      WEAK_SMALL + i, 0, 0);
	memcpy(br + nr, path, len * sizeof(*path));
	nr += len;
	for (i = 0; i < probe; i++)
		br[nr++] = (struct lbr_snap_branch)BR(TRAMP + 0x20 + n,
						      HANDLER + 0x10 * i, 0, 0);
	h.probe_entries = probe;
	h.tgid = 1000 + n;
	h.pid = h.tgid;
	emit_stack(h, br, nr, &native, stack, nr_stack);
}

static void emit_path(unsigned long long func, unsigned int type,
		      long long retval, const struct lbr_snap_branch *path,
		      unsigned int len, unsigned int n)
{
	emit_path_stack(func, type, retval, path, len, n, NULL, 0);
}

/*
 * One branch path from two call stacks and from none, for lbr-snap
 * report: do_sys_openat2() = -ENOENT through path A from stack S1 3x,
 * from S2 2x (its second frame differs), without a stack 1x.
 */
static void gen_stack_paths(void)
{
	static const unsigned long long s1[] = {
		SYS_OPEN + 0x55, SYSCALL + 0x3b, ENTRY + 0x63,
	};
	static const unsigned long long s2[] = {
		SYS_OPEN + 0x55, SYSCALL + 0x48, ENTRY + 0x63,
	};
	static const char mix[] = "1212n1";
	unsigned int i;

	for (i = 0; mix[i]; i++)
		emit_path_stack(DO_OPEN, LBR_SNAP_RET_INT, -2, path_a,
				ARRAY_SIZE(path_a), i,
				mix[i] == '1' ? s1 : s2,
				mix[i] == 'n' ? 0 : ARRAY_SIZE(s1));
}

/*
 * The mix lbr-snap report must count exactly:
 *   do_sys_openat2() = -ENOENT: path A 5x, path B 3x
 *   do_sys_openat2() = -EACCES: path B 2x
 *   kmalloc_trace() = NULL: path C 4x; = ERR_PTR(-ENOMEM): path C 1x
 *   ext4_file_open() = -EIO: 1x without LBR
 * interleaved, so that groups and paths are not seen in order.
 */
static void gen_paths(void)
{
	static const struct {
		char path;
		unsigned long long func;
		unsigned int type;
		long long retval;
	} mix[] = {
		{ 'b', DO_OPEN, LBR_SNAP_RET_INT, -2 },
		{ 'c', KMALLOC, LBR_SNAP_RET_PTR, 0 },
		{ 'a', DO_OPEN, LBR_SNAP_RET_INT, -2 },
		{ 'b', DO_OPEN, LBR_SNAP_RET_INT, -13 },
		{ 'a', DO_OPEN, LBR_SNAP_RET_INT, -2 },
		{ 'c', KMALLOC, LBR_SNAP_RET_PTR, -12 },
		{ 'n', EXT4_OPEN, LBR_SNAP_RET_INT, -5 },
		{ 'a', DO_OPEN, LBR_SNAP_RET_INT, -2 },
		{ 'c', KMALLOC, LBR_SNAP_RET_PTR, 0 },
		{ 'b', DO_OPEN, LBR_SNAP_RET_INT, -2 },
		{ 'c', KMALLOC, LBR_SNAP_RET_PTR, 0 },
		{ 'a', DO_OPEN, LBR_SNAP_RET_INT, -2 },
		{ 'b', DO_OPEN, LBR_SNAP_RET_INT, -13 },
		{ 'b', DO_OPEN, LBR_SNAP_RET_INT, -2 },
		{ 'c', KMALLOC, LBR_SNAP_RET_PTR, 0 },
		{ 'a', DO_OPEN, LBR_SNAP_RET_INT, -2 },
	};
	struct lbr_snap_record h;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(mix); i++) {
		switch (mix[i].path) {
		case 'a':
			emit_path(mix[i].func, mix[i].type, mix[i].retval,
				  path_a, ARRAY_SIZE(path_a), i);
			break;
		case 'b':
			emit_path(mix[i].func, mix[i].type, mix[i].retval,
				  path_b, ARRAY_SIZE(path_b), i);
			break;
		case 'c':
			emit_path(mix[i].func, mix[i].type, mix[i].retval,
				  path_c, ARRAY_SIZE(path_c), i);
			break;
		default:
			h = hdr("paths", mix[i].func, mix[i].type, mix[i].retval);
			h.flags = LBR_SNAP_REC_NO_LBR;
			h.backend = LBR_SNAP_BACKEND_NONE;
			emit_plain(h);
			break;
		}
	}
}

#define HS	sizeof(struct lbr_snap_record)

/* Broken records, each written after a good one: @bytes of the header. */
static const struct broken {
	const char *mode;
	unsigned int size, hdr_size, entry_size, nr, version, bytes;
	unsigned int nr_stack;
} broken[] = {
	{ "small-size",		40,	 HS,	  24, 0, 1, 40, 0 },
	{ "bad-hdr-size",	HS + 24, HS + 32, 24, 1, 1, HS + 24, 0 },
	{ "overrun",		HS + 48, HS,	  24, 3, 1, HS + 48, 0 },
	{ "version0",		HS,	 HS,	  24, 0, 0, HS, 0 },
	{ "truncated",		HS + 24, HS,	  24, 1, 1, HS + 10, 0 },
	/* 1 entry and a stack of 4 frames do not fit in 48 bytes */
	{ "stack-overrun",	HS + 48, HS,	  24, 1, 1, HS + 48, 4 },
};

static void gen_broken(const struct broken *b)
{
	unsigned char buf[HS + 64] = { 0 };
	struct lbr_snap_record h;

	rec_no_lbr();
	h = hdr("bad", DO_OPEN, LBR_SNAP_RET_INT, -2);
	h.size = b->size;
	h.version = b->version;
	h.hdr_size = b->hdr_size;
	h.entry_size = b->entry_size;
	h.nr_entries = b->nr;
	h.nr_stack = b->nr_stack;
	memcpy(buf, &h, sizeof(h));
	fwrite(buf, 1, b->bytes, stdout);
}

/* The benchmark's symbols: a fixed pseudo-random sequence (xorshift). */
static unsigned long long rnd_state = 88172645463325252ull;

static unsigned long long rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

#define BULK_TEXT	0xffffffff81000000ull
#define BULK_MODS	0xffffffffc0000000ull
#define BULK_NR_MODS	40
#define BULK_ENTRIES	32
#define BULK_PATHS	16
#define BULK_STACK	10	/* frames of a record's call stack */

struct bulk_sym {
	unsigned long long addr;
	char type;
	unsigned int mod;	/* 0: vmlinux, else module number */
};

static struct bulk_sym *bulk_syms;
static unsigned int bulk_nr;

/*
 * @n symbols: 95% vmlinux (two thirds text, 16..1024 bytes apart), then
 * BULK_NR_MODS modules, module 1 being lbr_snap.  Index 0 is _text.
 */
static void bulk_make_syms(unsigned int n)
{
	static const char types[] = "tttTTtTtdDrbtTtW";
	unsigned long long addr = BULK_TEXT;
	unsigned int i, nr_vmlinux = n - n / 20;

	if (n < 1000) {
		fprintf(stderr, "gen-records: NSYMS must be 1000 or more\n");
		exit(2);
	}
	bulk_syms = calloc(n, sizeof(*bulk_syms));
	if (!bulk_syms)
		exit(1);
	bulk_nr = n;
	for (i = 0; i < n; i++) {
		if (i == nr_vmlinux)
			addr = BULK_MODS;
		bulk_syms[i].addr = addr;
		bulk_syms[i].type = i > 1 ? types[rnd() % 16] : 'T';
		if (i >= nr_vmlinux)
			bulk_syms[i].mod = 1 + (i - nr_vmlinux) * BULK_NR_MODS /
					   (n - nr_vmlinux);
		addr += 16 * (1 + rnd() % 64);
	}
}

static void gen_kallsyms(void)
{
	const struct bulk_sym *s;
	unsigned int i;

	for (i = 0; i < bulk_nr; i++) {
		s = &bulk_syms[i];
		if (!i)
			printf("%016llx T _text\n", s->addr);
		else if (!s->mod)
			printf("%016llx %c kernel_function_%u\n", s->addr,
			       s->type, i);
		else if (s->mod == 1)
			printf("%016llx %c lbr_snap_fn_%u\t[lbr_snap]\n",
			       s->addr, s->type, i);
		else
			printf("%016llx %c mod%u_function_%u\t[mod%u]\n",
			       s->addr, s->type, s->mod, i, s->mod);
	}
}

/* An address inside a random text symbol of module @mod (0: vmlinux). */
static unsigned long long bulk_addr(unsigned int mod)
{
	const struct bulk_sym *s;

	do {
		s = &bulk_syms[rnd() % bulk_nr];
	} while (s->mod != mod || (s->type != 't' && s->type != 'T'));
	return s->addr + rnd() % 16;
}

static void gen_bulk(unsigned long long nr)
{
	static struct lbr_snap_branch paths[BULK_PATHS][BULK_ENTRIES];
	/* A few call stacks, as a storm from a few callers has. */
	static unsigned long long stacks[4][BULK_STACK];
	struct lbr_snap_branch br[BULK_ENTRIES];
	struct lbr_snap_record h;
	unsigned long long n;
	unsigned int i, p, s;

	for (p = 0; p < BULK_PATHS; p++) {
		for (i = 0; i < BULK_ENTRIES; i++) {
			paths[p][i].from = bulk_addr(i < BULK_ENTRIES - 2 ? 0 : 1);
			paths[p][i].to = bulk_addr(i < BULK_ENTRIES - 2 ? 0 : 1);
			paths[p][i].type = LBR_SNAP_BT_JCC;
		}
	}
	for (s = 0; s < ARRAY_SIZE(stacks); s++)
		for (i = 0; i < BULK_STACK; i++)
			stacks[s][i] = bulk_addr(0);
	for (n = 0; n < nr; n++) {
		h = hdr("storm", DO_OPEN, LBR_SNAP_RET_INT, -2);
		h.func_addr = bulk_syms[1].addr;
		s = rnd() % ARRAY_SIZE(stacks);
		h.caller = stacks[s][0];
		h.cpu = n % 2;
		h.tgid = 2000 + n % 7;
		h.pid = h.tgid;
		h.probe_entries = 2;
		memcpy(br, paths[rnd() % BULK_PATHS], sizeof(br));
		/* A quarter of the entries leave the hot paths. */
		for (i = 0; i < BULK_ENTRIES - 2; i++) {
			if (rnd() % 4)
				continue;
			br[i].from = bulk_addr(0);
			br[i].to = bulk_addr(0);
		}
		if (n % 5 == 0)
			br[n % BULK_ENTRIES].flags = LBR_SNAP_BR_MISPRED;
		/* Every ninth record without its stack (NO_STACK). */
		if (n % 9 == 8) {
			h.flags = LBR_SNAP_REC_NO_STACK;
			emit(h, br, BULK_ENTRIES, &native);
		} else {
			emit_stack(h, br, BULK_ENTRIES, &native, stacks[s],
				   BULK_STACK);
		}
	}
}

/*
 * Records whose entries are the same bytes but whose text is not: a
 * different probe_entries, function (where the target's branches
 * start), entry size or count.  lbr-snap prints a branch list it printed
 * before from memory; each of these must be printed on its own terms.
 */
static void gen_memo(void)
{
	static const struct layout old16 = { .entry_size = 16 };
	struct lbr_snap_branch br[] = {
		BR(SYS_OPEN + 0x10, DO_OPEN, 0, LBR_SNAP_BT_CALL),
		BR(DO_OPEN + 0x20, GETNAME, 0, LBR_SNAP_BT_CALL),
		BR(GETNAME + 0x30, KMALLOC, 0, LBR_SNAP_BT_CALL),
		BR(KMALLOC + 0x8, GETNAME + 0x35, LBR_SNAP_BR_MISPRED,
		   LBR_SNAP_BT_RET),
		BR(GETNAME + 0x40, DO_OPEN + 0x25, 0, LBR_SNAP_BT_RET),
		BR(DO_OPEN + 0x30, TRAMP, 0, LBR_SNAP_BT_RET),
		BR(TRAMP + 0x10, TRAMP + 0x40, 0, LBR_SNAP_BT_JMP),
	};
	static const unsigned long long funcs[] = { DO_OPEN, GETNAME };
	static const unsigned int probes[] = { 2, 2, 0, 1, 2 };
	unsigned int f, p;

	for (f = 0; f < 2; f++) {
		for (p = 0; p < 5; p++) {
			struct lbr_snap_record h = hdr("memo", funcs[f],
						       LBR_SNAP_RET_INT, -2);

			h.probe_entries = probes[p];
			emit(h, br, ARRAY_SIZE(br) - (p == 4), &native);
		}
		emit(hdr("memo", funcs[f], LBR_SNAP_RET_INT, -2), br,
		     ARRAY_SIZE(br), &old16);
	}
}

/*
 * Timestamps past 2^53 ns (104 days of uptime), which a JSON number read
 * as a double does not hold: 2^53 + 1 and the largest __u64.
 */
static void gen_bigts(void)
{
	struct lbr_snap_record h = hdr("late", DO_OPEN, LBR_SNAP_RET_INT, -2);

	h.ts_ns = (1ull << 53) + 1;
	emit_plain(h);
	h.ts_ns = ~0ull;
	emit_plain(h);
}

/*
 * Interrupts inside records (gen-records irq, with irq-kallsyms.txt): a
 * timer interrupt in getname_flags, as Arch LBR types them (FAR into the
 * entry point and out of the IRET) and as legacy LBR (no types); one
 * whose entry was pushed out of the LBR; a page fault, which is the
 * path's own; a timer interrupt inside a page fault; and a near jump
 * into the entry point, which no interrupt is.
 */
static void gen_irq_rec(const struct lbr_snap_branch *br, unsigned int nr,
			bool untyped)
{
	struct lbr_snap_record h = hdr("irq", DO_OPEN, LBR_SNAP_RET_INT, -2);
	struct lbr_snap_branch b[32];
	unsigned int i;

	for (i = 0; i < nr; i++) {
		b[i] = br[i];
		if (untyped)
			b[i].type = LBR_SNAP_BT_UNKNOWN;
	}
	h.probe_entries = 1;
	h.backend = untyped ? LBR_SNAP_BACKEND_INTEL : LBR_SNAP_BACKEND_ARCH;
	emit(h, b, nr, &native);
}

static void gen_irq(void)
{
	static const struct lbr_snap_branch timer[] = {
		BR(SYS_OPEN + 0x4a, DO_OPEN, 0, LBR_SNAP_BT_CALL),
		BR(DO_OPEN + 0x30, GETNAME, 0, LBR_SNAP_BT_CALL),
		BR(GETNAME + 0x10, ASM_SYSVEC, 0, LBR_SNAP_BT_FAR),
		BR(ASM_SYSVEC + 0x20, SYSVEC, 0, LBR_SNAP_BT_CALL),
		BR(SYSVEC + 0x10, IRQ_ENTER, 0, LBR_SNAP_BT_CALL),
		BR(IRQ_ENTER + 0x30, SYSVEC + 0x15, 0, LBR_SNAP_BT_RET),
		BR(SYSVEC + 0x40, IRQ_EXIT, 0, LBR_SNAP_BT_CALL),
		BR(IRQ_EXIT + 0x20, SYSVEC + 0x45, 0, LBR_SNAP_BT_RET),
		BR(SYSVEC + 0x50, ASM_SYSVEC + 0x25, 0, LBR_SNAP_BT_RET),
		BR(ASM_SYSVEC + 0x30, IRET, 0, LBR_SNAP_BT_JMP),
		BR(IRET, GETNAME + 0x10, 0, LBR_SNAP_BT_FAR),
		BR(GETNAME + 0x88, DO_OPEN + 0x35, 0, LBR_SNAP_BT_RET),
		BR(DO_OPEN + 0x1c2, THUNK, 0, LBR_SNAP_BT_JMP),
		BR(THUNK, TRAMP, 0, LBR_SNAP_BT_RET),
	};
	static const struct lbr_snap_branch headless[] = {
		BR(SYSVEC + 0x40, IRQ_EXIT, 0, LBR_SNAP_BT_CALL),
		BR(IRQ_EXIT + 0x20, SYSVEC + 0x45, 0, LBR_SNAP_BT_RET),
		BR(SYSVEC + 0x50, ASM_SYSVEC + 0x25, 0, LBR_SNAP_BT_RET),
		BR(ASM_SYSVEC + 0x30, IRET, 0, LBR_SNAP_BT_JMP),
		BR(IRET, DO_OPEN, 0, LBR_SNAP_BT_FAR),
		BR(DO_OPEN + 0x1c2, THUNK, 0, LBR_SNAP_BT_JMP),
		BR(THUNK, TRAMP, 0, LBR_SNAP_BT_RET),
	};
	static const struct lbr_snap_branch fault[] = {
		BR(DO_OPEN + 0x30, GETNAME, 0, LBR_SNAP_BT_CALL),
		BR(GETNAME + 0x10, ASM_PF, 0, LBR_SNAP_BT_FAR),
		BR(ASM_PF + 0x20, EXC_PF, 0, LBR_SNAP_BT_CALL),
		BR(EXC_PF + 0x30, ASM_PF + 0x25, 0, LBR_SNAP_BT_RET),
		BR(ASM_PF + 0x30, IRET, 0, LBR_SNAP_BT_JMP),
		BR(IRET, GETNAME + 0x10, 0, LBR_SNAP_BT_FAR),
		BR(GETNAME + 0x88, DO_OPEN + 0x35, 0, LBR_SNAP_BT_RET),
		BR(THUNK, TRAMP, 0, LBR_SNAP_BT_RET),
	};
	static const struct lbr_snap_branch nested[] = {
		BR(GETNAME + 0x10, ASM_PF, 0, LBR_SNAP_BT_FAR),
		BR(ASM_PF + 0x20, EXC_PF, 0, LBR_SNAP_BT_CALL),
		BR(EXC_PF + 0x8, ASM_SYSVEC, 0, LBR_SNAP_BT_FAR),
		BR(ASM_SYSVEC + 0x20, SYSVEC, 0, LBR_SNAP_BT_CALL),
		BR(SYSVEC + 0x50, ASM_SYSVEC + 0x25, 0, LBR_SNAP_BT_RET),
		BR(ASM_SYSVEC + 0x30, IRET, 0, LBR_SNAP_BT_JMP),
		BR(IRET, EXC_PF + 0x8, 0, LBR_SNAP_BT_FAR),
		BR(EXC_PF + 0x30, ASM_PF + 0x25, 0, LBR_SNAP_BT_RET),
		BR(ASM_PF + 0x30, IRET, 0, LBR_SNAP_BT_JMP),
		BR(IRET, GETNAME + 0x10, 0, LBR_SNAP_BT_FAR),
		BR(GETNAME + 0x88, DO_OPEN + 0x35, 0, LBR_SNAP_BT_RET),
		BR(THUNK, TRAMP, 0, LBR_SNAP_BT_RET),
	};
	struct lbr_snap_branch near[ARRAY_SIZE(timer)];

	gen_irq_rec(timer, ARRAY_SIZE(timer), false);
	gen_irq_rec(timer, ARRAY_SIZE(timer), true);
	gen_irq_rec(headless, ARRAY_SIZE(headless), false);
	gen_irq_rec(fault, ARRAY_SIZE(fault), false);
	gen_irq_rec(nested, ARRAY_SIZE(nested), false);
	memcpy(near, timer, sizeof(near));
	near[2].type = LBR_SNAP_BT_JMP;
	near[10].type = LBR_SNAP_BT_JMP;
	gen_irq_rec(near, ARRAY_SIZE(near), false);
}

/* lbr_snap_fexit's trampoline and the rest call, in hook-kallsyms.txt. */
#define FX		0xffffffffc0400000ull	/* lbr_fexit_lbr_4 */
#define FX_REST		0xffffffffc0400100ull	/* lbr_fexit_call_rest */
#define CAPTURE		0xffffffffc0500000ull	/* lbr_capture_record [lbr_snap] */

/*
 * A hooked function called inside the path (gen-records hook, with
 * hook-kallsyms.txt): getname_flags, hooked, called by do_sys_openat2:
 * its entry through the trampoline (5 entries, the return thunk's
 * included), its body, its return through it (3), and at the end the
 * record's own return into a trampoline, which is not a nested call;
 * then a record that begins in the capture of a nested call's error.
 */
static void gen_hook(void)
{
	struct lbr_snap_record h = hdr("hook", DO_OPEN, LBR_SNAP_RET_INT, -2);
	static const struct lbr_snap_branch br[] = {
		BR(DO_OPEN + 0x30, GETNAME, 0, LBR_SNAP_BT_CALL),
		BR(GETNAME, FX, 0, LBR_SNAP_BT_CALL),
		BR(FX + 0x1d, FX + 0x43, 0, LBR_SNAP_BT_JCC),
		BR(FX + 0x43, FX_REST, 0, LBR_SNAP_BT_CALL),
		BR(FX_REST + 0x3, THUNK, 0, LBR_SNAP_BT_JMP),
		BR(THUNK, GETNAME + 0x5, 0, LBR_SNAP_BT_RET),
		BR(GETNAME + 0x20, GETNAME + 0x40, 0, LBR_SNAP_BT_JCC),
		BR(GETNAME + 0x88, THUNK, 0, LBR_SNAP_BT_JMP),
		BR(THUNK, FX + 0x48, 0, LBR_SNAP_BT_RET),
		BR(FX + 0x60, THUNK, 0, LBR_SNAP_BT_JMP),
		BR(THUNK, DO_OPEN + 0x35, 0, LBR_SNAP_BT_RET),
		BR(DO_OPEN + 0x1c2, THUNK, 0, LBR_SNAP_BT_JMP),
		BR(THUNK, FX + 0x48, 0, LBR_SNAP_BT_RET),
	};

	/*
	 * The end of a nested call's capture, its start pushed out, with a
	 * call of a kernel function in it.
	 */
	static const struct lbr_snap_branch tail[] = {
		BR(THUNK, CAPTURE + 0x3f2, 0, LBR_SNAP_BT_RET),
		BR(CAPTURE + 0x486, CAPTURE + 0x48d, 0, LBR_SNAP_BT_JCC),
		BR(CAPTURE + 0x4e3, KMALLOC, 0, LBR_SNAP_BT_CALL),
		BR(KMALLOC + 0x4c, THUNK, 0, LBR_SNAP_BT_JMP),
		BR(THUNK, CAPTURE + 0x4e8, 0, LBR_SNAP_BT_RET),
		BR(CAPTURE + 0x4f6, FX + 0x50, 0, LBR_SNAP_BT_RET),
		BR(FX + 0x60, THUNK, 0, LBR_SNAP_BT_JMP),
		BR(THUNK, DO_OPEN + 0x35, 0, LBR_SNAP_BT_RET),
		BR(DO_OPEN + 0x1c2, THUNK, 0, LBR_SNAP_BT_JMP),
		BR(THUNK, FX + 0x48, 0, LBR_SNAP_BT_RET),
	};

	h.backend = LBR_SNAP_BACKEND_ARCH;
	h.hook = LBR_SNAP_HOOK_FEXIT;
	emit(h, br, ARRAY_SIZE(br), &native);
	emit(h, tail, ARRAY_SIZE(tail), &native);
}

/* One record whose one branch goes from @addr to @addr. */
static void gen_addr(unsigned long long addr)
{
	struct lbr_snap_record h = hdr("addr", DO_OPEN, LBR_SNAP_RET_INT, -2);
	struct lbr_snap_branch br[] = { BR(addr, addr, 0, LBR_SNAP_BT_JMP) };

	emit(h, br, 1, &native);
}

/*
 * lbr-snap why's input (tests/unit/cases/why.sh, its own kallsyms):
 * thread 300's records, later than any command start, in three system
 * calls of the tree filter and one outside them.
 */
#define W_SYS_OPEN	0xffffffff81010000ull	/* __x64_sys_openat */
#define W_WALK		0xffffffff81010100ull	/* walk_component */
#define W_STEP		0xffffffff81010200ull	/* step_into */
#define W_LOOKUP	0xffffffff81010300ull	/* lookup_fast */
#define W_SYS_TFD	0xffffffff81010400ull	/* __x64_sys_timerfd_create */
#define W_DO_TFD	0xffffffff81010500ull	/* __do_sys_timerfd_create */
#define W_KFREE		0xffffffff81010600ull	/* kfree */
#define W_DO_OPEN	0xffffffff81010700ull	/* do_sys_openat2 */
#define W_FAULT		0xffffffff81010800ull	/* handle_mm_fault */
#define W_TRAMP		0xffffffffc0003000ull	/* lbr_fexit_lbr_7 */
#define W_TS		(1ull << 62)

static struct lbr_snap_record why_rec(unsigned long long func,
				      unsigned int type, long long ret,
				      unsigned int seq, int nr)
{
	struct lbr_snap_record h = hdr("whycmd", func, type, ret);

	h.pid = h.tgid = 300;
	h.ts_ns = W_TS + ts_ns;
	if (seq) {
		h.flags |= LBR_SNAP_REC_SYSCALL;
		h.syscall_seq = seq;
		h.syscall_nr = nr;
		h.syscall_ns = W_TS + seq * 1000000ull;
	}
	return h;
}

/* A record of thread @tid (of whycmd's), outside system calls. */
static struct lbr_snap_record why_thread_rec(unsigned long long func,
					     unsigned int type,
					     long long ret, int tid)
{
	struct lbr_snap_record h = why_rec(func, type, ret, 0, 0);

	h.pid = tid;
	return h;
}

static void gen_why(void)
{
	/* step_into: a jump inside it, then its return. */
	struct lbr_snap_branch step[] = {
		BR(W_LOOKUP + 0x20, W_STEP + 0x10, 0, 0),
		BR(W_STEP + 0x30, W_STEP + 0x80, 0, 0),
		BR(W_STEP + 0x90, W_WALK + 0x40, 0, 0),
	};
	/* The wrapper: a jump in its body, then kfree()'s, then the return. */
	struct lbr_snap_branch tfd[] = {
		BR(W_DO_TFD + 0x10, W_DO_TFD + 0x40, 0, 0),
		BR(W_DO_TFD + 0x48, W_KFREE, 0, 0),
		BR(W_KFREE + 0x8, W_KFREE + 0x20, 0, 0),
		BR(W_KFREE + 0x28, W_DO_TFD + 0x4d, 0, 0),
		BR(W_DO_TFD + 0x60, W_SYS_TFD + 0x20, 0, 0),
		BR(W_SYS_TFD + 0x30, SYSCALL + 0x10, 0, 0),
	};
	struct lbr_snap_branch ret[] = {
		BR(W_WALK + 0x50, W_SYS_OPEN + 0x10, 0, 0),
	};
	struct lbr_snap_branch lookup[] = {
		BR(W_LOOKUP + 0x10, W_LOOKUP + 0x20, 0, 0),
		BR(W_LOOKUP + 0x28, W_WALK + 0x44, 0, 0),
	};
	/*
	 * Call stacks as under fexit: a hooked call's call site, then its
	 * trampoline and its fentry call's return (+0x5), one call; only
	 * the last two after a tail call (__x64_sys_openat's here): depth
	 * 2, 1 and 0.
	 */
	static const unsigned long long st_step[] = {
		W_WALK + 0x40, W_TRAMP + 0x75, W_WALK + 0x5, W_TRAMP + 0x75,
		W_SYS_OPEN + 0x5, SYSCALL + 0x10,
	};
	static const unsigned long long st_walk[] = {
		W_TRAMP + 0x75, W_SYS_OPEN + 0x5, SYSCALL + 0x10,
	};
	static const unsigned long long st_sys[] = { SYSCALL + 0x10 };
	struct lbr_snap_record h;

	/*
	 * openat(), seq 1: a NULL, the origin, its caller, the wrapper;
	 * each called when (entry_ns) the one before was.
	 */
	emit(why_rec(W_LOOKUP, LBR_SNAP_RET_PTR, 0, 1, 257), ret, 1, &native);
	h = why_rec(W_STEP, LBR_SNAP_RET_PTR, -2, 1, 257);
	h.entry_ns = h.ts_ns - 1500;
	emit_stack(h, step, 3, &native, st_step, ARRAY_SIZE(st_step));
	h = why_rec(W_WALK, LBR_SNAP_RET_PTR, -2, 1, 257);
	h.entry_ns = h.ts_ns - 250002000;
	emit_stack(h, ret, 1, &native, st_walk, ARRAY_SIZE(st_walk));
	h = why_rec(W_SYS_OPEN, LBR_SNAP_RET_LONG, -2, 1, 257);
	h.entry_ns = h.ts_ns - 500004000;
	emit_stack(h, ret, 1, &native, st_sys, ARRAY_SIZE(st_sys));
	/* seq 2 succeeded: its error was handled. */
	emit(why_rec(W_DO_OPEN, LBR_SNAP_RET_LONG, -13, 2, 257), ret, 1,
	     &native);
	/* An error outside any system call. */
	emit(why_rec(W_STEP, LBR_SNAP_RET_PTR, -2, 0, 0), step, 3, &native);
	/*
	 * timerfd_create(), seq 3: the wrapper alone decided, in its body;
	 * its CPU had dropped records before it.
	 */
	h = why_rec(W_SYS_TFD, LBR_SNAP_RET_LONG, -22, 3, 283);
	h.flags |= LBR_SNAP_REC_AFTER_DROP;
	emit(h, tfd, 6, &native);
	/*
	 * Thread 301, outside system calls: an entry function there (-e
	 * handle_mm_fault) closes its errors before it; lookup_fast()'s is
	 * the origin.
	 */
	emit(why_thread_rec(W_LOOKUP, LBR_SNAP_RET_PTR, -14, 301), lookup, 2,
	     &native);
	h = why_thread_rec(W_FAULT, LBR_SNAP_RET_INT, -14, 301);
	h.entry_ns = h.ts_ns - 300000000;
	emit(h, ret, 1, &native);
	/*
	 * Thread 302: a system call begun before the filter took it, not
	 * numbered: its wrapper's error closes no failure, both counted
	 * as outside.
	 */
	emit(why_thread_rec(W_STEP, LBR_SNAP_RET_PTR, -2, 302), step, 3,
	     &native);
	emit(why_thread_rec(W_SYS_OPEN, LBR_SNAP_RET_LONG, -2, 302), ret, 1,
	     &native);
}

int main(int argc, char **argv)
{
	const char *mode = argc >= 2 ? argv[1] : "";
	unsigned int i;

	if (argc == 3 && !strcmp(mode, "kallsyms")) {
		bulk_make_syms(strtoul(argv[2], NULL, 0));
		gen_kallsyms();
		return 0;
	}
	if (argc == 4 && !strcmp(mode, "bulk")) {
		bulk_make_syms(strtoul(argv[3], NULL, 0));
		gen_bulk(strtoull(argv[2], NULL, 0));
		return 0;
	}
	if (argc == 3 && !strcmp(mode, "addr")) {
		gen_addr(strtoull(argv[2], NULL, 0));
		return 0;
	}
	if (argc != 2)
		mode = "";

	if (!strcmp(mode, "stream")) {
		gen_stream();
		return 0;
	}
	if (!strcmp(mode, "paths")) {
		gen_paths();
		return 0;
	}
	if (!strcmp(mode, "stackpaths")) {
		gen_stack_paths();
		return 0;
	}
	if (!strcmp(mode, "notes")) {
		gen_notes();
		return 0;
	}
	if (!strcmp(mode, "memo")) {
		gen_memo();
		return 0;
	}
	if (!strcmp(mode, "bigts")) {
		gen_bigts();
		return 0;
	}
	if (!strcmp(mode, "irq")) {
		gen_irq();
		return 0;
	}
	if (!strcmp(mode, "hook")) {
		gen_hook();
		return 0;
	}
	if (!strcmp(mode, "why")) {
		gen_why();
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(broken); i++) {
		if (!strcmp(mode, broken[i].mode)) {
			gen_broken(&broken[i]);
			return 0;
		}
	}
	fprintf(stderr, "usage: gen-records stream|paths|notes|memo|%s|...\n"
		"       gen-records kallsyms NSYMS\n"
		"       gen-records bulk NRECS NSYMS\n"
		"       gen-records addr ADDR\n", broken[0].mode);
	return 2;
}
