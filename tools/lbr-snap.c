// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: user-space front end of the lbr_snap kernel module.
 *
 * Streams the Last Branch Records the module captures when probed kernel
 * functions return, symbolized with /proc/kallsyms, as text or JSON Lines,
 * and wraps the module's ioctls (info, stats, flush).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lbr_snap.h>

#include "btf.h"
#include "control.h"
#include "device.h"
#include "info.h"
#include "recording.h"
#include "json.h"
#include "ksym.h"
#include "lbrfilter.h"
#include "out.h"
#include "pattern.h"
#include "record.h"
#include "report.h"
#include "selftest.h"
#include "srcline.h"
#include "stream.h"
#include "trace.h"
#include "util.h"
#include "why_rec.h"

#define KALLSYMS	"/proc/kallsyms"

/* tools/Makefile passes LBR_SNAP_VERSION of src/lbr_snap.h. */
#ifndef LBR_SNAP_TOOL_VERSION
#define LBR_SNAP_TOOL_VERSION	"unknown"
#endif

enum cmd {
	CMD_STREAM, CMD_INFO, CMD_STATS, CMD_FLUSH, CMD_REPORT, CMD_TRACE,
	CMD_SPEC, CMD_ADD, CMD_DEL, CMD_CAPTURE, CMD_RECORD, CMD_FILTER,
	CMD_WHY, CMD_SELFTEST,
};

#define MAX_WORDS	256	/* command words before "--" or trace's CMD */

/* Options given, to check they apply to the command. */
#define OPT_READ	(1u << 0)	/* -n, --nonblock */
#define OPT_SYMS	(1u << 1)	/* --kallsyms */
#define OPT_TRIM	(1u << 2)	/* --full, --only-target */
#define OPT_TRACE	(1u << 3)	/* -e, --all, --all-tasks, --lbr */
#define OPT_OUTPUT	(1u << 4)	/* -o */
#define OPT_INPUT	(1u << 5)	/* -i */
#define OPT_DEVICE	(1u << 6)	/* -d */
#define OPT_KSYMFILE	(1u << 7)	/* --kallsyms */
#define OPT_TASK	(1u << 8)	/* --pid, --tgid, --comm */
#define OPT_DRY_RUN	(1u << 9)	/* --dry-run */
#define OPT_ALLOW	(1u << 10)	/* -a */
#define OPT_WHY		(1u << 11)	/* -p, --duration */

struct opts {
	enum cmd cmd;
	const char *device;
	const char *kallsyms;
	const char *vmlinux;	/* -k */
	const char *output;	/* -o */
	const char *input;	/* -i */
	char *rec_header;	/* -i's header, for record (recording.h) */
	unsigned long long count;
	bool json;
	bool nonblock;
	unsigned int given;	/* OPT_* */
	struct print_opts po;
	struct trace_opts trace;
	const char *allow[TRACE_MAX_SPECS - 1];	/* why -a, or its layers */
	unsigned int nr_allow;
	bool why_layers;	/* why's default -a */
	bool why_replay;	/* why -i */
	char **args;		/* spec, add, del, capture: the words */
	bool version;		/* --version */
	bool dry_run;		/* --dry-run */
	struct task_match task;	/* --pid, --tgid, --comm */
	char *words[MAX_WORDS + 1];	/* the command and its words */
	int nr_words;
};

static const char usage[] =
"Usage: lbr-snap [OPTIONS] [info | stats | flush | report]\n"
"       lbr-snap [-v] [-k VMLINUX] spec SYM[%type][/N][@hook]...\n"
"       lbr-snap [OPTIONS] trace -e SYM[%type] [-e ...] [--] CMD [ARGS]\n"
"       lbr-snap [-v] trace --dry-run -e SYM[%type] [-e ...]\n"
"       lbr-snap [-k VMLINUX] why [-e PAT]... [-a PAT]... [--lbr KINDS] [--json]\n"
"                [--duration S] [-o FILE] {[--] CMD [ARGS] | -p PID}\n"
"       lbr-snap [-k VMLINUX] [--json] why -i FILE\n"
"       lbr-snap add [--dry-run] SYM[%type][/N][@hook][=-ERR,...]... | del SYM...\n"
"       lbr-snap capture errors|all | filter [pid=N] [tgid=N] [comm=NAME] [lbr=KINDS] | filter off\n"
"       lbr-snap [-d DEV] [--kallsyms PATH] [-n N] [--nonblock] record -o FILE\n"
"       lbr-snap [OPTIONS] -i FILE [report]\n"
"       lbr-snap [-n N] [--nonblock] -i FILE record -o FILE\n"
"       lbr-snap [--json] selftest\n"
"       lbr-snap --version\n"
"\n"
"Print the Last Branch Records the lbr_snap kernel module captures when the\n"
"functions it probes return.\n"
"\n"
"Commands:\n"
"  (none)               stream the records until interrupted: a header line\n"
"                       per captured return, then its branches, oldest first\n"
"  info                 print the module's configuration (LBR backend...)\n"
"  stats                print the counters of each target, then the read\n"
"                       and flushed totals\n"
"  flush                discard the records buffered in the module\n"
"  report               read records like streaming (to the end, -n,\n"
"                       --nonblock or SIGINT), then print how many distinct\n"
"                       branch paths led to each (function, return value)\n"
"                       and how often each was taken\n"
"  trace [--] CMD [ARGS]  attach the -e targets (loading the module if\n"
"                       needed), run CMD, print the records of CMD and its\n"
"                       descendants until it exits, detach; exits with\n"
"                       CMD's status.  Needs root (CAP_SYS_ADMIN).  trace's\n"
"                       options end at CMD: \"trace -e X ls -l\" runs ls -l.\n"
"                       It says on stderr what it attached and, at the\n"
"                       end, how many records it printed, each target's\n"
"                       returns while CMD ran (captured, filtered,\n"
"                       dropped), and why there were none\n"
"  why [--] CMD [ARGS]  which kernel function made each failing system call\n"
"                       of CMD (and its descendants) fail, and the branch\n"
"                       in it that led to the error: hooks every system\n"
"                       call (-e, default __x64_sys_*) and the functions\n"
"                       they may call (-a; default: with a vmlinux's\n"
"                       DWARF, those of fs, mm, kernel, ipc, security,\n"
"                       block, io_uring and net, as many as fexit's room\n"
"                       takes; without, every one), runs CMD under the\n"
"                       module's tree filter, and prints per failure the\n"
"                       functions that returned its error, outermost first,\n"
"                       the origin (the deepest, * in the list) with the\n"
"                       source line of its last branch, and its LBR\n"
"                       (--lbr, default any).  --json: one object per\n"
"                       failure.  Exits with CMD's status; needs root\n"
"  selftest             what lbr_snap does on this machine, as a report to\n"
"                       attach to a bug: loads the module in each mode it\n"
"                       can (raw, perf; Arch LBR read by XSAVES and by\n"
"                       RDMSR), says what it found, makes open() fail on\n"
"                       every CPU under each hook (fexit, kretprobe) and\n"
"                       checks the records, and times a hooked return in\n"
"                       TSC cycles beside the module's MSR accesses; then\n"
"                       unloads it.  A module already loaded is only\n"
"                       described.  Exits 1 if a check failed.  Needs root\n"
"  add SPEC...          attach each SYM[%type][/N][@hook] (completed from\n"
"                       BTF as spec does) to the loaded module, saying its\n"
"                       id and hook; a SPEC that fails does not stop the\n"
"                       others, but a bad pattern stops them all.  Needs\n"
"                       CAP_SYS_ADMIN\n"
"  del SYM...           detach each target (by name; %type/N@hook ignored);\n"
"                       its records already taken stay readable\n"
"  capture errors|all   capture error returns only (the default), or every\n"
"                       return\n"
"  filter pid=N tgid=N comm=NAME | off  the module records only the\n"
"                       returns of the task that matches every field\n"
"                       given (thread id, process id, comm); off: all\n"
"  filter lbr=KINDS     what LBR records from now on, without a reload:\n"
"                       perf's names any, any_call, any_return, cond,\n"
"                       call, ind_call, ind_jump (or jcc, rel_call, ret,\n"
"                       ind_jmp, rel_jmp, far), comma-separated, with\n"
"                       kernel (the default) or user; any_return keeps the\n"
"                       last returns only, reaching far further back\n"
"  record -o FILE       write the records, read like streaming, to FILE\n"
"                       (mode 0600) after what symbolizes them elsewhere:\n"
"                       kallsyms, the kernel release and build ID, the\n"
"                       modules with their addresses and build IDs; then\n"
"                       -i FILE prints them on any machine.  From -i FILE,\n"
"                       that recording's release, build IDs, modules and\n"
"                       kallsyms are kept, not this machine's\n"
"  spec SYM...          print each SYM[%type][/N][@hook] completed from the\n"
"                       kernel's BTF (the return type, and the argument\n"
"                       count /N, informative), as targets= takes\n"
"                       it; trace does the same with its -e targets; a\n"
"                       pattern, each function it matches that can be\n"
"                       attached\n"
"\n"
"Options:\n"
"  -d, --device PATH    use PATH instead of " LBR_SNAP_DEVICE "; a regular\n"
"                       file or a pipe holding records is replayed, without\n"
"                       the ABI version check\n"
"      --json           JSON output: an object per record (JSON Lines), one\n"
"                       object for info and stats\n"
"  -n, --count N        stop after N records\n"
"      --nonblock       print the records already buffered, then exit\n"
"      --kallsyms PATH  read symbols from PATH instead of " KALLSYMS "\n"
"  -i, --input FILE     replay a recording (record -o, why -o): its records with\n"
"                       its own symbols, never this machine's; with -k, a\n"
"                       vmlinux whose build ID is not the recorded one is\n"
"                       named on stderr; -v says where it was recorded\n"
"  -o, --output FILE    record: the file to write; why: also record the run\n"
"                       into FILE, whose answer why -i FILE gives again\n"
"  -k, --vmlinux PATH   vmlinux with debug info for source lines (default:\n"
"                       the first usable of /boot/vmlinux-RELEASE,\n"
"                       /lib/modules/RELEASE/build/vmlinux,\n"
"                       /usr/lib/debug/boot/vmlinux-RELEASE,\n"
"                       /usr/lib/debug/lib/modules/RELEASE/vmlinux)\n"
"  -v, --verbose        say on stderr which vmlinux and module files give\n"
"                       source lines, or where they were looked for; show\n"
"                       an interrupt's entries one by one, not folded\n"
"      --full           also show the probe-path entries (hidden by default)\n"
"      --only-target    cut the entries before the first one inside the\n"
"                       target function\n"
"      --pid N, --tgid N, --comm NAME  print (and report) only the records\n"
"                       of that thread, process or comm, as filter does in\n"
"                       the module\n"
"  -e, --event SYM[%type][/N][@hook]  trace: a function to probe, as in\n"
"                       targets=; BTF supplies %type and /N when missing\n"
"      --all            trace: capture every return, not only errors, while\n"
"                       CMD runs (the previous capture mode is put back)\n"
"      --all-tasks      trace: print the records of every process\n"
"      --lbr KINDS      trace: what LBR records while CMD runs, as\n"
"                       filter lbr=KINDS takes it (the previous filter is\n"
"                       put back); --lbr=any_return reaches furthest back\n"
"  -a, --allow PAT      why: a function (or pattern) to hook inside the\n"
"                       entry functions\n"
"  -p, --process PID    why: watch this running process (its threads and\n"
"                       every task it creates) instead of running CMD\n"
"      --duration S     why: stop after S seconds (CMD gets SIGTERM)\n"
"      --dry-run        trace, add: print each function the targets match,\n"
"                       \"attach SPEC [MODULE]\" or \"refuse NAME: WHY\",\n"
"                       attach nothing (trace needs no CMD); exit 0 if one\n"
"                       at least can be attached\n"
"  -h, --help           print this help\n"
"      --version        print this tool's version and ABI version, and the\n"
"                       loaded module's (GET_INFO on the -d device)\n"
"-n and --nonblock apply to streaming, report and record, --kallsyms to\n"
"these, trace, spec and add, -k and -v to all of them but record, -i to\n"
"streaming, report and record, -o to record, --full and --only-target to\n"
"streaming and trace, --pid, --tgid and --comm to streaming and report, -e,\n"
"--all, --all-tasks and --lbr to trace, --dry-run to trace and add, --json\n"
"to all but flush, record and the target commands.\n"
"\n"
"Targets by pattern: where spec, add and trace -e take SYM, it may be a\n"
"shell glob (vfs_*), with a module scope after a space ('* [ext4]',\n"
"'vfs_* [vmlinux]'), or :PATH, the functions defined in vmlinux's source\n"
"files whose path in the kernel tree matches the glob PATH (:fs/namei.c,\n"
"':kernel/bpf/*.c'; from vmlinux's DWARF: -k, or as for source lines, of\n"
"the running kernel's build ID).  A function matched is attached if it is\n"
"a text symbol of kallsyms, ftrace can hook it (available_filter_functions,\n"
"so it needs root), it is neither lbr_snap's own nor on its capture path,\n"
"it is the first function of its name (the module hooks by name), and its\n"
"type from BTF is one the hook and the capture mode take (not void under\n"
"capture errors); else it is refused, with why: -v or --dry-run lists them.\n"
"A pattern that matches nothing or only refused functions, or more matches\n"
"than the module takes, is an error, and nothing is attached.  Over the 64\n"
"targets the module takes one by one, add and trace attach the functions of\n"
"vmlinux by fexit in batches.\n"
"\n"
"Text output of a record, then a blank line:\n"
"  TIME cpuN COMM[PID] FUNC() = RET\n"
"    call stack (the caller first):                     with stack_depth=\n"
"      CALLER_SYM+0xoff\n"
"      ...\n"
"    returned to CALLER_SYM+0xoff; N branches, #0 (oldest) to #N-1 (newest)\n"
"    [#0] from_sym+0xoff -> to_sym+0xoff [module] (mispredicted)\n"
"    [interrupt: N entries, #A to #B: ENTRY \u2026 IRET, back to SYM+0xoff (-v unfolds)]\n"
"    ...\n"
"    ... N probe-path entries hidden (--full shows them)\n"
"    (N newest entries made by the probe path)          with --full\n"
"    ... N entries before FUNC() cut (--only-target)\n"
"    (no LBR on this machine: backend none)\n"
"A stack frame is a return address; its file:line is the call's.\n"
"TIME is CLOCK_MONOTONIC in seconds.microseconds, PID the process id.\n"
"With debug info (a vmlinux; a module's MOD.ko under\n"
"/usr/lib/debug/lib/modules/RELEASE, else under /lib/modules/RELEASE, also\n"
".ko.xz, .ko.zst, .ko.gz; only with the live /proc/kallsyms, -k or\n"
"LBR_SNAP_ROOT, and if built with libdw) each address is followed by\n"
"(file:line), and functions inlined there by lines\n"
"        from: inlined FUNC() called at file:line\n"
"An interrupt inside a record (its entries from the branch into its entry\n"
"point to its IRET, by branch type and symbols) is folded into one line\n"
"unless -v; an exception is not.\n"
"Branches are numbered from #0, the oldest; the arrows of a record are in\n"
"one column.  A file is relative to its compilation directory (the\n"
"kernel's build tree) when inside it, else to its module's source root\n"
"(a module built out of tree: the directory its units have in common);\n"
"JSON has it whole.  RET follows the return type\n"
"declared for the target: int and long as -ENOENT or a decimal number, ptr\n"
"as NULL, ERR_PTR(-ENOMEM) or hex, bool as true or false.  Addresses below\n"
"every kernel text symbol print as raw hex, all of them when kallsyms\n"
"cannot be read or hides addresses (kernel.kptr_restrict).\n"
"\n"
"JSON keys of a record:\n"
"  ts (ns), ts_sec and ts_nsec (ts exactly, for readers whose numbers are\n"
"  doubles: ts passes 2^53 after 104 days), cpu, pid (process id),\n"
"  tid (thread id), comm, func, func_addr,\n"
"  retval (null for void), errno (name, or null if no error),\n"
"  duration_ns (null when the record does not say when the call came in),\n"
"  ret_type\n"
"  (int, long, ptr, bool, void), probe_entries, flags, backend, hook\n"
"  (kretprobe or fexit),\n"
"  target_id, caller, caller_sym,\n"
"  stack: [{addr, sym, file, line, inline}]: the call stack, the caller\n"
"  first, [] without one (stack_depth=0, or flags has 16: the unwinder\n"
"  did not reach the caller),\n"
"  branches: [{from, to, from_sym, to_sym, mispred, flags, cycles, type,\n"
"  type_name (perf's: COND, UNCOND, IND, CALL, IND_CALL, RET; a far one\n"
"  IRQ, ERET, SYSCALL or SYSRET; N/A), probe, before_target, interrupt\n"
"  (an interrupt's entry, which text folds), from_file,\n"
"  from_line, to_file, to_line,\n"
"  from_inline, to_inline: [{func, call_file, call_line}]}]: every entry;\n"
"  file and line are null without debug info, probe is true for the\n"
"  entries the probe path made, before_target for those --only-target\n"
"  cuts.\n"
"Addresses are hex strings, symbols null when unknown.\n"
"\n"
"report, text: per (function, return value), most frequent first:\n"
"  N distinct paths led to RET from FUNC; the most common (C\u00d7) ends in SYM\n"
"    C\u00d7 path 1 of N:\n"
"      called from CALLER_SYM+0xoff\n"
"        ...\n"
"      [#0] from_sym+0xoff -> to_sym+0xoff\n"
"A path is the call stack and the (from, to) sequence without the\n"
"probe-path entries and the entries before the target function; it ends\n"
"in the source of its last branch outside the return thunks.\n"
"report --json, one object a line:\n"
"  func, func_addr, ret_type, retval, ret, errno, count, nr_paths,\n"
"  paths: [{count, ends_in, stack: [{addr, sym, file, line, inline}],\n"
"  branches: [{from, to, from_sym, to_sym, from_file, from_line,\n"
"  from_inline, to_file, to_line, to_inline}]}]\n"
"report, text too, has the source lines a record has.\n"
"\n"
"LBR_SNAP_ROOT=DIR in the environment puts DIR before every path where\n"
"debug files are looked for (and /proc/modules, for -v's list), and where\n"
"patterns are resolved (/proc/kallsyms, /sys/kernel/tracing, /sys/kernel/btf,\n"
"/sys/kernel/notes).\n"
"Records caused by lbr-snap itself are not shown when reading the device.\n"
"SIGINT and SIGTERM end the stream cleanly: what was read is still\n"
"printed; a second SIGINT or SIGTERM stops that too and says how many\n"
"records were not printed.  trace passes SIGINT, SIGTERM and SIGHUP on\n"
"to CMD and detaches when it exits; one that comes before CMD runs\n"
"means CMD never does.\n"
"\n"
"Exit status:\n"
"  0  success, also when stopped by SIGINT or SIGTERM\n"
"  1  error, or info, stats or flush on a file, which has no ioctls\n"
"  2  bad command line\n"
"  3  device not found: the lbr_snap module is not loaded\n"
"  4  permission denied: needs CAP_PERFMON to read, CAP_SYS_ADMIN to change\n"
"  5  the module's ABI version is not the one this tool was built for\n"
"  6  corrupt record stream\n"
"trace exits with CMD's exit status (128 + signal if a signal killed it),\n"
"except, as env(1) and timeout(1) do:\n"
"  125  trace itself failed (bad command line, no permission, no module,\n"
"       a target that cannot be attached, an error reading records); the\n"
"       reason is on stderr\n"
"  126  CMD was found but could not be run\n"
"  127  CMD was not found\n"
"add, del, capture: 0 if every change was made, else the code of the first\n"
"failure (1, 3, 4 or 5 as above).\n";

struct ksyms_job {
	struct ksyms *ks;
	const struct opts *o;
	int done;
};

static void *ksyms_job_run(void *arg)
{
	struct ksyms_job *j = arg;

	ksyms_load(j->ks, j->o->kallsyms);
	ksyms_load_lines(j->ks, j->o->kallsyms, j->o->vmlinux);
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Read ahead of printing no more than this while the symbols load. */
#define PRELOAD_MAX	(64 * 1024 * 1024)

/*
 * Load the symbols, and with @drain keep reading @fd meanwhile, into
 * *@pre: the kernel writes /proc/kallsyms line by line, most of a second
 * in a slow guest, and a burst that comes in that time would overflow
 * the module's buffer (some 400 records a CPU by default).
 */
static void load_symbols(struct ksyms *ks, const struct opts *o, int fd,
			 bool drain, unsigned char **pre, size_t *pre_len)
{
	struct ksyms_job j = { .ks = ks, .o = o };
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t cap = 0;
	pthread_t th;
	ssize_t n;

	*pre = NULL;
	*pre_len = 0;
	if (!drain || pthread_create(&th, NULL, ksyms_job_run, &j)) {
		ksyms_job_run(&j);
		return;
	}
	while (!__atomic_load_n(&j.done, __ATOMIC_ACQUIRE)) {
		if (poll(&pfd, 1, 10) != 1 || !(pfd.revents & POLLIN) ||
		    *pre_len > PRELOAD_MAX)
			continue;
		/* Room for many records: the device gives whole ones. */
		if (cap - *pre_len < 64 * LBR_SNAP_RECORD_MAX) {
			cap = cap ? 2 * cap : 1024 * 1024;
			*pre = xrealloc(*pre, cap);
		}
		n = read(fd, *pre + *pre_len, cap - *pre_len);
		if (n > 0)
			*pre_len += n;
		else if (n < 0 && errno != EAGAIN && errno != EINTR)
			break;	/* shows again at the stream's read */
	}
	pthread_join(th, NULL);
}

/*
 * @drain: a stream of the live device; its records are read while the
 * symbols load (not with -n, which would take records it does not print
 * away from other readers).
 */
static int read_records(int fd, const struct opts *o,
			int (*fn)(int fd, const struct stream_opts *so),
			bool drain)
{
	struct stream_opts so = {
		.path = o->device, .max = o->count, .json = o->json,
		.po = o->po, .task = o->task,
	};
	struct lbr_snap_info info;
	unsigned char *pre;
	struct ksyms ks;
	int ret;

	stdout_buffered();
	ret = get_info(fd, o->device, &info);
	if (ret < 0)
		return ret;
	/*
	 * On the live device, leave out what lbr-snap itself causes (its
	 * symbol and debug-info lookups open files that may not exist).
	 */
	if (ret == 0)
		so.self = getpid();
	load_symbols(&ks, o, fd, drain && ret == 0 && !o->count, &pre,
		     &so.pre_len);
	so.pre = pre;
	so.ks = &ks;
	ret = fn(fd, &so);
	free(pre);
	ksyms_free(&ks);
	return ret;
}

static int cmd_stream(int fd, const struct opts *o)
{
	return read_records(fd, o, stream_records, true);
}

static int cmd_report(int fd, const struct opts *o)
{
	return read_records(fd, o, report_records, false);
}

static int cmd_record(int fd, const struct opts *o)
{
	struct recording_opts ro = {
		.out = o->output, .device = o->device,
		.kallsyms = o->kallsyms, .max = o->count,
		.header = o->rec_header,
	};
	struct lbr_snap_info info;
	int ret = get_info(fd, o->device, &info);

	if (ret < 0)
		return ret;
	ro.live = ret == 0;
	return recording_write(fd, &ro);
}

static int cmd_info(int fd, const struct opts *o)
{
	struct lbr_snap_info info;
	int ret = get_device_info(fd, o->device, &info);

	if (ret)
		return ret;
	if (o->json)
		info_print_json(&info);
	else
		info_print_text(&info);
	return 0;
}

static int name_width(const struct lbr_snap_target_stats *ts, unsigned int nr)
{
	int w = 4;	/* "name" */
	unsigned int i;

	for (i = 0; i < nr; i++) {
		int len = strnlen(ts[i].name, sizeof(ts[i].name));

		if (len > w)
			w = len;
	}
	return w;
}

static void print_target_text(const struct lbr_snap_target_stats *t, int w)
{
	printf("%3u %-*.*s 0x%016llx %-4s %-9s", t->id, w, (int)sizeof(t->name),
	       t->name, t->func_addr, ret_type_name(t->ret_type),
	       hook_name(t->hook));
	printf(" %10llu %10llu %10llu %10llu %10llu %10llu %8lld %10llu\n",
	       t->hits, t->captured, t->filtered, t->dropped, t->missed,
	       t->recursion, t->inflight, t->lbr_off);
}

static void print_stats_text(const struct lbr_snap_stats *st,
			     const struct lbr_snap_target_stats *ts,
			     unsigned int nr)
{
	int w = name_width(ts, nr);
	unsigned int i;

	printf("%3s %-*s %-18s %-4s %-9s %10s %10s %10s %10s %10s %10s %8s %10s\n",
	       "id", w, "name", "addr", "type", "hook", "hits", "captured",
	       "filtered", "dropped", "missed", "recursion", "inflight",
	       "lbr_off");
	for (i = 0; i < nr; i++)
		print_target_text(&ts[i], w);
	printf("read: %llu\nflushed: %llu\n", st->read, st->flushed);
	for (i = 0; i < nr; i++)
		print_target_hint(stdout, "hint: ", &ts[i]);
}

static void print_target_json(const struct lbr_snap_target_stats *t)
{
	printf("{\"id\":%u,\"name\":", t->id);
	json_str(stdout, t->name, sizeof(t->name));
	fputs(",\"func_addr\":", stdout);
	json_hex(stdout, t->func_addr);
	printf(",\"ret_type\":\"%s\",\"hits\":%llu,\"captured\":%llu",
	       ret_type_name(t->ret_type), t->hits, t->captured);
	printf(",\"filtered\":%llu,\"dropped\":%llu,\"missed\":%llu",
	       t->filtered, t->dropped, t->missed);
	printf(",\"hook\":\"%s\",\"nr_args\":%d", hook_name(t->hook),
	       t->nr_args);
	printf(",\"recursion\":%llu,\"inflight\":%lld,\"lbr_off\":%llu",
	       t->recursion, t->inflight, t->lbr_off);
	printf(",\"gone\":%s}",
	       t->state & LBR_SNAP_TARGET_GONE ? "true" : "false");
}

static void print_stats_json(const struct lbr_snap_stats *st,
			     const struct lbr_snap_target_stats *ts,
			     unsigned int nr)
{
	unsigned int i;

	fputs("{\"targets\":[", stdout);
	for (i = 0; i < nr; i++) {
		if (i)
			putchar(',');
		print_target_json(&ts[i]);
	}
	printf("],\"read\":%llu,\"flushed\":%llu}\n", st->read, st->flushed);
}

static int cmd_stats(int fd, const struct opts *o)
{
	struct lbr_snap_target_stats *ts;
	struct lbr_snap_stats st;
	struct lbr_snap_info info;
	size_t nr;
	int ret = get_device_info(fd, o->device, &info);

	if (ret)
		return ret;
	/* Every target, a batch's thousands too. */
	ts = get_all_stats(fd, info.nr_targets, &st, &nr);
	if (!ts)
		return ioctl_error(o->device, "GET_STATS");
	if (o->json)
		print_stats_json(&st, ts, nr);
	else
		print_stats_text(&st, ts, nr);
	free(ts);
	return 0;
}

static int cmd_flush(int fd, const struct opts *o)
{
	struct lbr_snap_info info;
	int ret = get_device_info(fd, o->device, &info);

	if (ret)
		return ret;
	if (ioctl(fd, LBR_SNAP_IOC_FLUSH) < 0)
		return ioctl_error(o->device, "FLUSH");
	return 0;
}

/* One target's spec: commas only in its errno list (SYM=-ERR,-ERR). */
static bool one_spec(const char *spec)
{
	const char *comma = strchr(spec, ','), *eq = strchr(spec, '=');

	return !comma || (eq && eq < comma);
}

/*
 * Is @name a function of the running kernel's, vmlinux or a module's, as
 * /proc/kallsyms lists it (text symbols; names are there without root)?
 * True where kallsyms cannot be read: the module will say.  Not through
 * ksyms_load(), which is for addresses: it keeps none where they read 0
 * (kernel.kptr_restrict), and the names are all this needs.
 */
static bool kallsyms_has_func(const char *name)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[600], sym[512], type;
	bool found = false;

	if (!f)
		return true;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%*s %c %511s", &type, sym) == 2 &&
			(type == 't' || type == 'T') && !strcmp(sym, name);
	fclose(f);
	return found;
}

/*
 * The targets @args name, patterns resolved (pattern.c), into @l, for
 * spec, add and trace: @capture_all if trace --all, else the loaded
 * module's capture mode; *@attached gets its number of targets outside
 * batches, which the 64 it takes one by one bound.  To
 * @attach, they must fit in the module.  With --dry-run, exact names
 * too, and the list is printed.
 * Return: 0, or the exit code.
 */
static int expand_targets(const struct opts *o, char **args, bool capture_all,
			  bool attach, struct pat_list *l,
			  unsigned int *attached)
{
	struct pat_opts po = {
		.kallsyms = o->given & OPT_KSYMFILE ? o->kallsyms : NULL,
		.vmlinux = o->vmlinux,
		.capture_all = capture_all,
		.resolve_exact = o->dry_run,
		.verbose = srclines_verbose,
		.errno_only = o->trace.why,
		.lenient = o->why_layers,
	};
	struct lbr_snap_info info;
	int fd, ret;

	*attached = 0;
	fd = open(o->device, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		if (!ioctl(fd, LBR_SNAP_IOC_GET_INFO, &info)) {
			po.capture_all |= info.capture == LBR_SNAP_CAPTURE_ALL;
			*attached = info.nr_targets > info.nr_batch_targets ?
				    info.nr_targets - info.nr_batch_targets : 0;
		}
		close(fd);
	}
	ret = pat_expand(args, &po, l);
	if (ret || !o->dry_run)
		return ret || !attach ? ret : pat_check_room(l, *attached);
	ret = attach ? pat_check_room(l, *attached) : 0;
	pat_print(stdout, l);
	if (l->nr_batch)
		pr_err("dry run: %zu to attach (%zu in a batch), %zu refused (capture %s); nothing attached",
		       l->nr_ok, l->nr_batch, l->nr - l->nr_ok,
		       po.capture_all ? "all" : "errors");
	else
		pr_err("dry run: %zu to attach, %zu refused (capture %s); nothing attached",
		       l->nr_ok, l->nr - l->nr_ok,
		       po.capture_all ? "all" : "errors");
	return l->nr_ok && !ret ? 0 : EXIT_ERROR;
}

static bool any_pattern(char *const *args)
{
	for (; *args; args++)
		if (pat_is_pattern(*args))
			return true;
	return false;
}

/* spec: complete each SYM from BTF, one line each; notes to stderr. */
static int cmd_spec(const struct opts *o)
{
	char out[LBR_SNAP_NAME_LEN + 8], why[128], name[LBR_SNAP_NAME_LEN];
	struct pat_list l = { 0 };
	char **args = o->args, *one[2] = { NULL, NULL };
	unsigned int attached;
	size_t nlen, i, from;
	int ret = 0, err;

	for (; *args; args++) {
		if (pat_is_pattern(*args)) {
			one[0] = *args;
			from = l.nr;
			err = expand_targets(o, one, false, false, &l, &attached);
			for (i = from; i < l.nr; i++)
				if (!l.m[i].why)
					printf("%s\n", l.m[i].spec);
			if (err && ret != EXIT_USAGE)
				ret = err;
			continue;
		}
		if (!one_spec(*args) ||
		    btf_complete_spec(*args, out, sizeof(out), why, sizeof(why))) {
			pr_err("bad target: %s", *args);
			ret = EXIT_USAGE;
			continue;
		}
		nlen = strcspn(*args, "%/@=");
		snprintf(name, sizeof(name), "%.*s", (int)nlen, *args);
		/* No BTF of its own, and not a function of this kernel. */
		if (!strncmp(why, "no BTF for ", 11) && !kallsyms_has_func(name)) {
			pr_err("%s: no such function in /proc/kallsyms", name);
			if (ret != EXIT_USAGE)
				ret = EXIT_ERROR;
			continue;
		}
		if (why[0])
			pr_err("%s: %s", out, why);
		printf("%s\n", out);
	}
	pat_list_free(&l);
	return ret;
}

/*
 * add: patterns resolved first, and nothing attached if any is bad or the
 * matches are more than the module takes.
 */
static int cmd_add(const struct opts *o)
{
	struct pat_list l = { 0 };
	unsigned long long *addrs;
	unsigned int attached;
	char **specs, **many;
	size_t i, n = 0, nm = 0;
	int ret;

	if (!o->dry_run && !any_pattern(o->args))
		return control_add(o->device, o->args);
	ret = expand_targets(o, o->args, false, true, &l, &attached);
	if (ret || o->dry_run) {
		pat_list_free(&l);
		return ret;
	}
	specs = xrealloc(NULL, (l.nr_ok + 1) * sizeof(*specs));
	many = xrealloc(NULL, (l.nr_ok + 1) * sizeof(*many));
	addrs = xrealloc(NULL, (l.nr_ok + 1) * sizeof(*addrs));
	/*
	 * What the module's own targets take goes one by one, as ever;
	 * more goes in a batch: the functions of vmlinux, with their
	 * addresses, for fexit (src/targets.c).
	 */
	for (i = 0; i < l.nr; i++) {
		struct pat_match *m = &l.m[i];

		if (m->why)
			continue;
		if (m->batch) {
			addrs[nm] = m->addr;
			many[nm++] = m->spec;
		} else {
			specs[n++] = m->spec;
		}
	}
	specs[n] = NULL;
	if (nm)
		ret = control_add_batch(o->device, many, addrs, nm);
	if (!ret && n)
		ret = control_add(o->device, specs);
	free(addrs);
	free(many);
	free(specs);
	pat_list_free(&l);
	return ret;
}

/*
 * trace: the -e patterns resolved into @l, and the functions trace
 * attaches into @t->targets (pointing into @l).  Returns 0 to go on, 1
 * after --dry-run's list, or -exit code.
 */
static int trace_targets(struct opts *o, struct pat_list *l)
{
	struct trace_opts *t = &o->trace;
	char *args[TRACE_MAX_SPECS + 1];
	struct trace_target *tg;
	unsigned int attached;
	size_t i, n = 0;
	int ret;

	memcpy(args, t->specs, t->nr_specs * sizeof(*args));
	args[t->nr_specs] = NULL;
	if (!o->dry_run && !any_pattern(args))
		return 0;
	ret = expand_targets(o, args, t->capture_all, true, l, &attached);
	if (ret)
		return -ret;
	if (o->dry_run)
		return 1;
	tg = xrealloc(NULL, (l->nr_ok ? l->nr_ok : 1) * sizeof(*tg));
	for (i = 0; i < l->nr; i++) {
		const struct pat_match *m = &l->m[i];

		if (m->why)
			continue;
		tg[n++] = (struct trace_target){
			.spec = m->spec, .addr = m->addr, .arg = m->arg,
			.batch = m->batch,
		};
	}
	t->targets = tg;
	t->nr_targets = n;
	return 0;
}

static int usage_error(const char *msg, const char *arg)
{
	if (msg)
		pr_err("%s%s", msg, arg);
	fputs("Try 'lbr-snap --help' for more information.\n", stderr);
	return EXIT_USAGE;
}

static int parse_count(const char *arg, unsigned long long *count)
{
	char *end;

	errno = 0;
	*count = strtoull(arg, &end, 10);
	if (*arg < '0' || *arg > '9' || *end || errno || !*count)
		return usage_error("-n needs a positive number, not ", arg);
	return 0;
}

/* Which commands take the options of each OPT_* bit. */
static const struct {
	unsigned int opt;
	unsigned int cmds;	/* 1 << CMD_* */
	const char *msg;
} opt_rules[] = {
	{ OPT_READ, 1u << CMD_STREAM | 1u << CMD_REPORT | 1u << CMD_RECORD,
	  "-n and --nonblock only apply to streaming, report and record" },
	{ OPT_SYMS, 1u << CMD_STREAM | 1u << CMD_REPORT | 1u << CMD_TRACE |
		    1u << CMD_RECORD | 1u << CMD_SPEC | 1u << CMD_ADD |
		    1u << CMD_WHY,
	  "--kallsyms, -k and -v only apply to streaming, report, record, trace, why, spec and add" },
	{ OPT_TRIM, 1u << CMD_STREAM | 1u << CMD_TRACE,
	  "--full and --only-target only apply to streaming and trace" },
	{ OPT_TRACE, 1u << CMD_TRACE | 1u << CMD_WHY,
	  "-e, --all, --all-tasks and --lbr only apply to trace (-e and --lbr to why)" },
	{ OPT_ALLOW, 1u << CMD_WHY, "-a only applies to why" },
	{ OPT_WHY, 1u << CMD_WHY, "-p and --duration only apply to why" },
	{ OPT_OUTPUT, 1u << CMD_RECORD | 1u << CMD_WHY,
	  "-o only applies to record and why" },
	{ OPT_INPUT, 1u << CMD_STREAM | 1u << CMD_REPORT | 1u << CMD_RECORD |
		     1u << CMD_WHY,
	  "-i only applies to streaming, report, record and why" },
	{ OPT_DRY_RUN, 1u << CMD_TRACE | 1u << CMD_ADD,
	  "--dry-run only applies to trace and add" },
	{ OPT_TASK, 1u << CMD_STREAM | 1u << CMD_REPORT,
	  "--pid, --tgid and --comm only apply to streaming and report (the module's own: lbr-snap filter)" },
};

static int check_opts(const struct opts *o)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(opt_rules); i++)
		if ((o->given & opt_rules[i].opt) &&
		    !(opt_rules[i].cmds & (1u << o->cmd)))
			return usage_error(opt_rules[i].msg, "");
	if (o->cmd == CMD_RECORD && !o->output)
		return usage_error("record needs -o FILE", "");
	if ((o->given & OPT_INPUT) && (o->given & OPT_DEVICE))
		return usage_error("-i replays a recording: not with -d", "");
	if ((o->given & OPT_INPUT) && (o->given & OPT_KSYMFILE))
		return usage_error("-i brings its own symbols: not with --kallsyms", "");
	if (o->cmd == CMD_RECORD && (o->vmlinux || srclines_verbose))
		return usage_error("-k and -v do not apply to record", "");
	if (o->json && (o->cmd == CMD_FLUSH || o->cmd == CMD_ADD ||
			o->cmd == CMD_DEL || o->cmd == CMD_CAPTURE ||
			o->cmd == CMD_RECORD || o->cmd == CMD_FILTER))
		return usage_error("--json does not apply to ", o->words[0]);
	return 0;
}

/* What trace and why take of the common options, and CMD. */
static void trace_common(struct opts *o, char **cmd)
{
	struct trace_opts *t = &o->trace;

	t->argv = cmd;
	t->device = o->device;
	t->kallsyms = o->kallsyms;
	t->vmlinux = o->vmlinux;
	t->json = o->json;
	t->po = o->po;
}

static int parse_trace(struct opts *o, char **cmd)
{
	struct trace_opts *t = &o->trace;

	if (!t->nr_specs)
		return usage_error("trace needs at least one -e SYM[%type]", "");
	if ((!cmd || !*cmd) && !o->dry_run)
		return usage_error("trace needs a command: trace -e SYM [--] CMD [ARGS]", "");
	trace_common(o, cmd);
	return 0;
}

/* Whether a vmlinux is where source lines look for one. */
static bool vmlinux_found(char *buf, size_t len)
{
	unsigned int i;

	for (i = 0; srclines_vmlinux_path(i, buf, len); i++)
		if (!access(buf, R_OK))
			return true;
	return false;
}

/*
 * why: its entry functions first (-e, by default every system call's
 * own), then the functions it may hook inside them (-a, by default every
 * one whose return can carry an error), in trace's options.
 */
static int parse_why(struct opts *o, char **cmd)
{
	/*
	 * Where DWARF says which file each function is in, the layers a
	 * system call goes through, in this order, as fexit's room allows
	 * (on 6.1, some 7,600 functions; the rest are refused and counted):
	 * the top of each subsystem, the kernel's subsystems (BPF, perf,
	 * the scheduler, time, cgroups), the socket layer's core and its
	 * protocols every machine has (IPv4, Unix, netlink, packet), then
	 * the rest.  Left out: what decides no system call's error, or only
	 * an allocation's (allocators, reclaim, interrupts, RCU, locking,
	 * printk, DMA, power, the kernel's own tracing and entry, the
	 * network's data path and its BPF helpers), whose failures reach a
	 * system call as the error of a caller that is hooked, and whose
	 * hooks, run the most often, would cost every task most.  Else
	 * every function, in kallsyms' order.
	 */
	static const char *const layers[] = {
		":fs/*", ":mm/*", ":kernel/*", ":ipc/*", ":security/*",
		":net/*", ":kernel/*/*", ":net/core/*", ":net/ipv4/*",
		":net/unix/*", ":net/netlink/*", ":net/packet/*", ":fs/*/*",
		":security/*/*", ":block/*", ":io_uring/*", ":net/*/*",
		"!:mm/slub.c", "!:mm/slab_common.c", "!:mm/page_alloc.c",
		"!:mm/vmscan.c", "!:mm/compaction.c", "!:mm/memblock.c",
		"!:mm/percpu*.c", "!:mm/vmalloc.c", "!:mm/list_lru.c",
		"!:mm/workingset.c", "!:mm/mm_init.c", "!:mm/sparse*.c",
		"!:mm/vmstat.c", "!:mm/backing-dev.c", "!:mm/z*.c",
		"!:mm/khugepaged.c", "!:mm/page_*.c", "!:mm/memory-failure.c",
		"!:mm/mempool.c", "!:mm/dmapool.c", "!:mm/early_ioremap.c",
		"!:mm/kfence/*", "!:mm/kasan/*", "!:kernel/workqueue.c",
		"!:kernel/softirq.c", "!:kernel/smp.c", "!:kernel/irq_work.c",
		"!:kernel/stop_machine.c", "!:kernel/irq/*", "!:kernel/rcu/*",
		"!:kernel/locking/*", "!:kernel/printk/*", "!:kernel/dma/*",
		"!:kernel/power/*", "!:kernel/trace/*", "!:kernel/entry/*",
		"!:net/core/skbuff.c", "!:net/core/dev.c", "!:net/core/filter.c",
		"!:net/core/neighbour.c", "!:net/core/flow_dissector.c",
		"!:net/core/gro*.c", "!:net/core/page_pool*.c", "!:net/core/xdp.c",
		"!:net/core/netpoll.c", "!:net/core/drop_monitor.c",
		"!:net/core/dst*.c", "!:net/ipv4/ip_input.c",
		"!:net/ipv4/ip_forward.c", "!:net/ipv4/ip_fragment.c",
		"!:net/ipv4/tcp_input.c", "!:net/ipv4/tcp_output.c",
		"!:net/ipv4/tcp_timer.c", "!:net/ipv4/*offload.c",
		"!:net/ipv4/inetpeer.c",
	};
	/* With the entry pattern, in trace's specs. */
	_Static_assert(ARRAY_SIZE(layers) < TRACE_MAX_SPECS,
		       "why's layers do not fit in trace's specs");
	/* x86-64's wrappers take the registers: one argument, whatever BTF. */
	static const char *const entry = "__x64_sys_*%long/1@fexit";
	static const char *const allow = "*";
	struct trace_opts *t = &o->trace;
	unsigned int i;
	char path[4096];

	if (t->capture_all || t->all_tasks)
		return usage_error("--all and --all-tasks do not apply to why", "");
	if (o->input) {
		/* The run's own targets and settings are in the recording. */
		if (o->given & (OPT_TRACE | OPT_ALLOW | OPT_WHY | OPT_OUTPUT) ||
		    (cmd && *cmd))
			return usage_error("why -i replays a why -o recording: no command, -p, --duration, -e, -a, --lbr or -o with it", "");
		o->why_replay = true;
		return 0;
	}
	if (t->pid && cmd && *cmd)
		return usage_error("why takes a command or -p PID, not both", "");
	if (!t->pid && (!cmd || !*cmd))
		return usage_error("why needs a command or -p PID: why [-e PAT] [-a PAT] [-o FILE] {[--] CMD [ARGS] | -p PID}, or why -i FILE", "");
	if (!t->nr_specs)
		t->specs[t->nr_specs++] = entry;
	t->nr_entry = t->nr_specs;
	if (!o->nr_allow && (o->vmlinux ||
			     (srclines_built_in && vmlinux_found(path, sizeof(path))))) {
		for (i = 0; i < ARRAY_SIZE(layers); i++)
			o->allow[o->nr_allow++] = layers[i];
		o->why_layers = true;
	}
	if (!o->nr_allow)
		o->allow[o->nr_allow++] = allow;
	/* 64 -e and 64 -a at most, or the layers (asserted above). */
	for (i = 0; i < o->nr_allow; i++)
		t->specs[t->nr_specs++] = o->allow[i];
	if (!t->lbr) {
		t->lbr = "any";
		t->lbr_default = true;
		lbr_filter_parse(t->lbr, &t->lbr_filter, NULL, 0);
	}
	t->why = true;
	t->output = o->output;
	trace_common(o, cmd);
	return 0;
}

/* The words after the command: how many each command takes. */
static int check_words(const struct opts *o)
{
	int n = o->nr_words - 1;

	switch (o->cmd) {
	case CMD_SPEC:
	case CMD_ADD:
	case CMD_DEL:
		if (!n)
			return usage_error(o->cmd == CMD_DEL ?
					   "del needs at least one SYM" :
					   o->cmd == CMD_ADD ?
					   "add needs at least one SYM[%type][/N][@hook]" :
					   "spec needs at least one SYM", "");
		return 0;
	case CMD_CAPTURE:
		if (n != 1 || (strcmp(o->words[1], "errors") &&
			       strcmp(o->words[1], "all")))
			return usage_error("capture needs one mode, errors or all", "");
		return 0;
	case CMD_FILTER:
		if (!n)
			return usage_error("filter needs pid=N, tgid=N, comm=NAME, off or lbr=KINDS", "");
		return 0;
	default:
		if (n > 0)
			return usage_error("too many arguments: ", o->words[1]);
		return 0;
	}
}

/* @cmd: trace's CMD and its arguments, or NULL. */
static int parse_cmd(struct opts *o, char **cmd)
{
	static const char *const names[] = {
		[CMD_INFO] = "info", [CMD_STATS] = "stats", [CMD_FLUSH] = "flush",
		[CMD_REPORT] = "report", [CMD_TRACE] = "trace",
		[CMD_SPEC] = "spec", [CMD_ADD] = "add", [CMD_DEL] = "del",
		[CMD_CAPTURE] = "capture", [CMD_RECORD] = "record",
		[CMD_FILTER] = "filter", [CMD_WHY] = "why",
		[CMD_SELFTEST] = "selftest",
	};
	unsigned int i;
	int ret;

	if (o->nr_words) {
		for (i = CMD_INFO; i < ARRAY_SIZE(names); i++) {
			if (!strcmp(o->words[0], names[i])) {
				o->cmd = i;
				break;
			}
		}
		if (o->cmd == CMD_STREAM)
			return usage_error("unknown command: ", o->words[0]);
	}
	ret = check_opts(o);
	if (ret)
		return ret;
	if (o->cmd == CMD_TRACE)
		return parse_trace(o, cmd);
	if (o->cmd == CMD_WHY)
		return parse_why(o, cmd);
	ret = check_words(o);
	o->args = o->words + 1;
	return ret;
}

static int add_spec(struct trace_opts *t, const char *spec)
{
	if (!*spec || !one_spec(spec) ||
	    strlen(spec) >= (pat_is_pattern(spec) ? PAT_MAX_LEN :
			     sizeof(((struct lbr_snap_target_ctl *)0)->spec)))
		return usage_error("-e needs SYM[%type][/N][@hook], not ", spec);
	if (t->nr_specs == LBR_SNAP_MAX_TARGETS)
		return usage_error("too many -e (at most 64): ", spec);
	t->specs[t->nr_specs++] = spec;
	return 0;
}

enum {
	OPT_JSON = 256, OPT_NONBLOCK, OPT_KALLSYMS, OPT_FULL, OPT_ONLY_TARGET,
	OPT_ALL, OPT_ALL_TASKS, OPT_PID, OPT_TGID, OPT_COMM, OPT_LBR,
	OPT_DRY_RUN_ID, OPT_DURATION,
};

static const struct option longopts[] = {
	{ "device",	 required_argument,	NULL, 'd' },
	{ "count",	 required_argument,	NULL, 'n' },
	{ "json",	 no_argument,		NULL, OPT_JSON },
	{ "nonblock",	 no_argument,		NULL, OPT_NONBLOCK },
	{ "kallsyms",	 required_argument,	NULL, OPT_KALLSYMS },
	{ "vmlinux",	 required_argument,	NULL, 'k' },
	{ "full",	 no_argument,		NULL, OPT_FULL },
	{ "only-target", no_argument,		NULL, OPT_ONLY_TARGET },
	{ "event",	 required_argument,	NULL, 'e' },
	{ "allow",	 required_argument,	NULL, 'a' },
	{ "process",	 required_argument,	NULL, 'p' },
	{ "duration",	 required_argument,	NULL, OPT_DURATION },
	{ "input",	 required_argument,	NULL, 'i' },
	{ "output",	 required_argument,	NULL, 'o' },
	{ "all",	 no_argument,		NULL, OPT_ALL },
	{ "all-tasks",	 no_argument,		NULL, OPT_ALL_TASKS },
	{ "lbr",	 required_argument,	NULL, OPT_LBR },
	{ "dry-run",	 no_argument,		NULL, OPT_DRY_RUN_ID },
	{ "pid",	 required_argument,	NULL, OPT_PID },
	{ "tgid",	 required_argument,	NULL, OPT_TGID },
	{ "comm",	 required_argument,	NULL, OPT_COMM },
	{ "help",	 no_argument,		NULL, 'h' },
	{ "version",	 no_argument,		NULL, 'V' },
	{ "verbose",	 no_argument,		NULL, 'v' },
	{ }
};

/* One option; returns 0 or the exit code. */
static int parse_opt(int c, struct opts *o)
{
	char why[300];

	switch (c) {
	case 'd':
		o->device = optarg;
		o->given |= OPT_DEVICE;
		return 0;
	case 'i':
		o->input = optarg;
		o->given |= OPT_INPUT;
		return 0;
	case 'o':
		o->output = optarg;
		o->given |= OPT_OUTPUT;
		return 0;
	case 'n':
		o->given |= OPT_READ;
		return parse_count(optarg, &o->count);
	case OPT_JSON:
		o->json = true;
		return 0;
	case OPT_NONBLOCK:
		o->nonblock = true;
		o->given |= OPT_READ;
		return 0;
	case OPT_KALLSYMS:
		o->kallsyms = optarg;
		o->given |= OPT_SYMS | OPT_KSYMFILE;
		return 0;
	case 'k':
		o->vmlinux = optarg;
		o->given |= OPT_SYMS;
		return 0;
	case 'v':
		srclines_verbose = true;
		o->po.unfold = true;
		o->given |= OPT_SYMS;
		return 0;
	case OPT_FULL:
		o->po.full = true;
		o->given |= OPT_TRIM;
		return 0;
	case OPT_ONLY_TARGET:
		o->po.only_target = true;
		o->given |= OPT_TRIM;
		return 0;
	case 'e':
		o->given |= OPT_TRACE;
		return add_spec(&o->trace, optarg);
	case 'a':
		o->given |= OPT_ALLOW;
		if (!*optarg || !one_spec(optarg) || strlen(optarg) >= PAT_MAX_LEN)
			return usage_error("-a needs SYM or a pattern, not ", optarg);
		if (o->nr_allow == LBR_SNAP_MAX_TARGETS)
			return usage_error("too many -a (at most 64): ", optarg);
		o->allow[o->nr_allow++] = optarg;
		return 0;
	case 'p':
	case OPT_DURATION: {
		unsigned long v;
		char *end;

		o->given |= OPT_WHY;
		errno = 0;
		v = strtoul(optarg, &end, 10);
		if (errno || *end || !*optarg || *optarg == '-' || !v ||
		    v > (c == 'p' ? 0x3fffffffUL : 0xffffffUL))
			return usage_error(c == 'p' ? "-p needs a process id, not " :
					   "--duration needs whole seconds (1 or more), not ",
					   optarg);
		if (c == 'p')
			o->trace.pid = v;
		else
			o->trace.duration = v;
		return 0;
	}
	case OPT_ALL:
		o->trace.capture_all = true;
		o->given |= OPT_TRACE;
		return 0;
	case OPT_ALL_TASKS:
		o->trace.all_tasks = true;
		o->given |= OPT_TRACE;
		return 0;
	case OPT_LBR:
		o->given |= OPT_TRACE;
		o->trace.lbr = optarg;
		if (lbr_filter_parse(optarg, &o->trace.lbr_filter, why,
				     sizeof(why)))
			return usage_error("--lbr: ", why);
		return 0;
	case OPT_DRY_RUN_ID:
		o->dry_run = true;
		o->given |= OPT_DRY_RUN;
		return 0;
	case OPT_PID:
	case OPT_TGID:
	case OPT_COMM:
		o->given |= OPT_TASK;
		return parse_task_opt(c == OPT_PID ? "pid" :
				      c == OPT_TGID ? "tgid" : "comm",
				      optarg, &o->task) ?
		       usage_error("--pid and --tgid need an id, --comm a name of at most 15 bytes, not ", optarg) :
		       0;
	default:
		return usage_error(NULL, NULL);
	}
}

static int add_word(struct opts *o, char *word)
{
	if (o->nr_words == MAX_WORDS)
		return usage_error("too many arguments: ", word);
	o->words[o->nr_words++] = word;
	return 0;
}

/* trace and why: their options end at CMD. */
static bool is_trace(const struct opts *o)
{
	return o->nr_words && (!strcmp(o->words[0], "trace") ||
			       !strcmp(o->words[0], "why"));
}

/*
 * Options may come before and after the command word, as they always
 * could; trace's options stop at the first word after "trace" that is not
 * an option (its CMD), or at "--".  Returns 0 to go on, or the exit code
 * (0 after --help).
 */
static int parse_args(int argc, char **argv, struct opts *o, bool *done)
{
	char **cmd = NULL;
	int c, ret;

	while (optind < argc) {
		if (!strcmp(argv[optind], "--")) {
			optind++;
			if (is_trace(o)) {
				cmd = argv + optind;
				break;
			}
			for (; optind < argc; optind++) {
				ret = add_word(o, argv[optind]);
				if (ret)
					return ret;
			}
			break;
		}
		c = getopt_long(argc, argv, "+d:n:e:a:p:i:k:o:hv", longopts, NULL);
		if (c == -1) {
			if (optind >= argc)
				break;
			/* A word: the command, its argument, or trace's CMD. */
			if (is_trace(o)) {
				cmd = argv + optind;
				break;
			}
			ret = add_word(o, argv[optind++]);
			if (ret)
				return ret;
			continue;
		}
		if (c == 'h') {
			fputs(usage, stdout);
			printf("\nSource lines: %s.\n", srclines_built_in ?
			       "built in (libdw)" : "not built in (no libdw)");
			printf("BTF specs: %s.\n", btf_built_in ?
			       "built in (libbpf)" : "not built in (no libbpf)");
			*done = true;
			return 0;
		}
		if (c == 'V') {
			o->version = true;
			continue;
		}
		ret = parse_opt(c, o);
		if (ret)
			return ret;
	}
	if (o->version) {
		*done = true;
		return 0;
	}
	o->words[o->nr_words] = NULL;
	return parse_cmd(o, cmd);
}

/*
 * --version: this tool's version and ABI, then the module's from GET_INFO
 * when the device is there (or why not).  Always exits 0.
 */
static int print_version(const char *path)
{
	struct lbr_snap_info info = { 0 };
	int fd;

	printf("lbr-snap %s (ABI version %u; source lines: %s; BTF specs: %s)\n",
	       LBR_SNAP_TOOL_VERSION, LBR_SNAP_ABI_VERSION,
	       srclines_built_in ? "libdw" : "no", btf_built_in ? "libbpf" : "no");
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		printf("lbr_snap module: %s: %s%s\n", path, strerror(errno),
		       errno == ENOENT ? " (not loaded)" : "");
		return 0;
	}
	if (ioctl(fd, LBR_SNAP_IOC_GET_INFO, &info) < 0)
		printf("lbr_snap module: %s: GET_INFO: %s%s\n", path,
		       strerror(errno),
		       errno == ENOTTY ? " (not an lbr_snap device)" : "");
	else
		printf("lbr_snap module %.*s (ABI version %u%s) at %s\n",
		       (int)sizeof(info.version),
		       info.version[0] ? info.version : "unknown",
		       info.abi_version,
		       info.abi_version == LBR_SNAP_ABI_VERSION ? "" :
		       ", not this tool's: use the lbr-snap built with it",
		       path);
	close(fd);
	return 0;
}

static int finish(int ret)
{
	if (fflush(stdout) || ferror(stdout) || out_failed()) {
		pr_err("write error on stdout");
		return EXIT_ERROR;
	}
	return ret;
}

/* why -i: the answer of a why -o run from its recording alone. */
static int why_replay_file(struct opts *o)
{
	struct why_replay_opts ro = {
		.path = o->input, .vmlinux = o->vmlinux, .json = o->json,
	};
	char kallsyms[64], *header = NULL;
	int fd, ret;

	fd = recording_open(o->input, o->vmlinux, srclines_verbose, kallsyms,
			    sizeof(kallsyms), &header);
	if (fd < 0)
		return -fd;
	ro.kallsyms = kallsyms;
	ro.header = header;
	ret = -why_replay(fd, &ro);
	close(fd);
	free(header);
	return ret;
}

/*
 * Whether the command line is trace's: its word before any "--" (a bad
 * command line may stop the parser before it).
 */
static bool names_trace(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "trace") || !strcmp(argv[i], "why"))
			return true;
	return false;
}

/*
 * trace exits with CMD's status, 128 + signal if one killed CMD or came
 * before it ran, or EXIT_TRACE when trace itself failed.
 */
static int trace_exit(int ret)
{
	if (ret >= 0)
		return ret;
	return -ret >= 128 ? -ret : EXIT_TRACE;
}

int main(int argc, char **argv)
{
	static int (*const cmds[])(int fd, const struct opts *o) = {
		[CMD_STREAM] = cmd_stream, [CMD_INFO] = cmd_info,
		[CMD_STATS] = cmd_stats, [CMD_FLUSH] = cmd_flush,
		[CMD_REPORT] = cmd_report, [CMD_RECORD] = cmd_record,
	};
	struct opts o = { .device = LBR_SNAP_DEVICE, .kallsyms = KALLSYMS };
	struct pat_list pats = { 0 };
	char replay_kallsyms[64];
	bool done = false;
	int fd, ret;

	ret = parse_args(argc, argv, &o, &done);
	if (!ret && o.version)
		return finish(print_version(o.device));
	if (ret == EXIT_USAGE && names_trace(argc, argv))
		return EXIT_TRACE;
	if (ret || done)
		return ret;
	if (o.why_replay)
		return finish(why_replay_file(&o));
	if (o.cmd == CMD_TRACE || o.cmd == CMD_WHY) {
		ret = trace_targets(&o, &pats);
		if (!ret)
			ret = trace_exit(trace_run(&o.trace));
		else
			ret = ret > 0 ? 0 : trace_exit(ret);
		free((void *)o.trace.targets);
		pat_list_free(&pats);
		return finish(0) ? EXIT_TRACE : ret;
	}
	if (o.cmd == CMD_SPEC)
		return finish(cmd_spec(&o));
	if (o.cmd == CMD_SELFTEST)
		return finish(selftest_run(o.kallsyms, o.json));
	if (o.cmd == CMD_ADD)
		return finish(cmd_add(&o));
	if (o.cmd == CMD_DEL)
		return finish(control_del(o.device, o.args));
	if (o.cmd == CMD_CAPTURE)
		return finish(control_capture(o.device, o.args[0]));
	if (o.cmd == CMD_FILTER)
		return finish(control_filter(o.device, o.args));
	if (o.input) {
		fd = recording_open(o.input, o.vmlinux, srclines_verbose,
				    replay_kallsyms, sizeof(replay_kallsyms),
				    &o.rec_header);
		if (fd < 0)
			return finish(-fd);
		o.device = o.input;
		o.kallsyms = replay_kallsyms;
		ret = -cmds[o.cmd](fd, &o);
		close(fd);
		free(o.rec_header);
		return finish(ret);
	}
	/* FLUSH needs a descriptor opened for writing (and CAP_SYS_ADMIN). */
	fd = open_device(o.device, (o.cmd == CMD_FLUSH ? O_RDWR : O_RDONLY) |
			 (o.nonblock ? O_NONBLOCK : 0));
	if (fd < 0)
		return -fd;
	ret = -cmds[o.cmd](fd, &o);
	close(fd);
	return finish(ret);
}
