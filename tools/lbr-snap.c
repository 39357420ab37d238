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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lbr_snap.h>

#include "json.h"
#include "ksym.h"
#include "record.h"
#include "stream.h"
#include "util.h"

#define KALLSYMS	"/proc/kallsyms"

enum cmd { CMD_STREAM, CMD_INFO, CMD_STATS, CMD_FLUSH };

struct opts {
	enum cmd cmd;
	const char *device;
	const char *kallsyms;
	unsigned long long count;
	bool json;
	bool nonblock;
	bool stream_only;	/* an option only streaming takes was given */
};

static const char usage[] =
"Usage: lbr-snap [OPTIONS] [info | stats | flush]\n"
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
"  -h, --help           print this help\n"
"-n, --nonblock and --kallsyms apply to streaming only, --json not to flush.\n"
"\n"
"Text output of a record:\n"
"  TIME cpuN COMM[PID] FUNC() = RET\n"
"    [#0] from_sym+0xoff -> to_sym+0xoff [module] (mispredicted)\n"
"    ...\n"
"    (N newest entries made by the probe path)\n"
"    (no LBR on this machine: backend none)\n"
"TIME is CLOCK_MONOTONIC in seconds.microseconds, PID the process id.\n"
"Branches are numbered from #0, the oldest.  RET follows the return type\n"
"declared for the target: int and long as -ENOENT or a decimal number, ptr\n"
"as NULL, ERR_PTR(-ENOMEM) or hex, bool as true or false.  Addresses below\n"
"every kernel text symbol print as raw hex, all of them when kallsyms\n"
"cannot be read or hides addresses (kernel.kptr_restrict).\n"
"\n"
"JSON keys of a record:\n"
"  ts (ns), cpu, pid (process id), tid (thread id), comm, func, func_addr,\n"
"  retval, errno (name, or null if no error), ret_type (int, long, ptr,\n"
"  bool), probe_entries, flags, backend, target_id, caller, caller_sym,\n"
"  branches: [{from, to, from_sym, to_sym, mispred, flags, cycles, type}]\n"
"Addresses are hex strings, symbols null when unknown.\n"
"\n"
"SIGINT and SIGTERM end the stream cleanly.\n"
"\n"
"Exit status:\n"
"  0  success, also when stopped by SIGINT or SIGTERM\n"
"  1  error, or info, stats or flush on a file, which has no ioctls\n"
"  2  bad command line\n"
"  3  device not found: the lbr_snap module is not loaded\n"
"  4  permission denied: needs root (CAP_SYS_ADMIN)\n"
"  5  the module's ABI version is not the one this tool was built for\n"
"  6  corrupt record stream\n";

/* Returned by get_info() for input that is not the device. */
#define NOT_DEVICE	1

static int open_device(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	switch (errno) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		pr_err("%s not found: is the lbr_snap module loaded? (modprobe lbr_snap targets=...)",
		       path);
		return -EXIT_NODEV;
	case EACCES:
	case EPERM:
		pr_err("%s: permission denied: needs root (CAP_SYS_ADMIN) or read permission on the device",
		       path);
		return -EXIT_PERM;
	default:
		pr_err("%s: %s", path, strerror(errno));
		return -EXIT_ERROR;
	}
}

static int ioctl_error(const char *path, const char *name)
{
	bool perm = errno == EPERM || errno == EACCES;

	pr_err("%s: %s: %s%s", path, name, strerror(errno),
	       perm ? ": needs root (CAP_SYS_ADMIN)" : "");
	return perm ? -EXIT_PERM : -EXIT_ERROR;
}

/*
 * Read the module's info and check its ABI version.  A regular file or pipe
 * replaying records has no ioctls (ENOTTY): NOT_DEVICE tells the caller.
 * Returns 0, NOT_DEVICE or -exit code.
 */
static int get_info(int fd, const char *path, struct lbr_snap_info *info)
{
	struct stat st;

	memset(info, 0, sizeof(*info));
	if (ioctl(fd, LBR_SNAP_IOC_GET_INFO, info) < 0) {
		if (errno != ENOTTY)
			return ioctl_error(path, "GET_INFO");
		if (fstat(fd, &st) == 0 && !S_ISCHR(st.st_mode))
			return NOT_DEVICE;
		pr_err("%s: not an lbr_snap device, or its module speaks another ABI version",
		       path);
		return -EXIT_ABI;
	}
	if (info->abi_version != LBR_SNAP_ABI_VERSION) {
		pr_err("%s: module ABI version %u, but this tool speaks version %u: use the lbr-snap built with the module",
		       path, info->abi_version, LBR_SNAP_ABI_VERSION);
		return -EXIT_ABI;
	}
	return 0;
}

/* get_info() for commands that need the device itself. */
static int get_device_info(int fd, const char *path, struct lbr_snap_info *info)
{
	int ret = get_info(fd, path, info);

	if (ret == NOT_DEVICE) {
		pr_err("%s: not an lbr_snap device", path);
		return -EXIT_ERROR;
	}
	return ret;
}

static int cmd_stream(int fd, const struct opts *o)
{
	struct stream_opts so = {
		.path = o->device, .max = o->count, .json = o->json,
	};
	struct lbr_snap_info info;
	struct ksyms ks;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = get_info(fd, o->device, &info);
	if (ret < 0)
		return ret;
	ksyms_load(&ks, o->kallsyms);
	so.ks = &ks;
	ret = stream_records(fd, &so);
	ksyms_free(&ks);
	return ret;
}

static const char *capture_name(unsigned int capture)
{
	switch (capture) {
	case LBR_SNAP_CAPTURE_ERRORS:
		return "errors";
	case LBR_SNAP_CAPTURE_ALL:
		return "all";
	default:
		return "unknown";
	}
}

/* The module names its backend; fall back to our names if it did not. */
static const char *info_backend(const struct lbr_snap_info *info)
{
	if (info->backend_name[0])
		return info->backend_name;
	return backend_name(info->backend);
}

static void print_info_text(const struct lbr_snap_info *info)
{
	printf("abi_version: %u\n", info->abi_version);
	printf("backend: %.*s\n", (int)sizeof(info->backend_name),
	       info_backend(info));
	printf("lbr_format: %u\n", info->lbr_format);
	printf("lbr_depth: %u\n", info->lbr_depth);
	printf("mode: %.*s\n", (int)sizeof(info->mode), info->mode);
	printf("nr_cpus: %u\n", info->nr_cpus);
	printf("buffer_kb: %u\n", info->buffer_kb);
	printf("nr_targets: %u\n", info->nr_targets);
	printf("capture: %s\n", capture_name(info->capture));
	printf("reason: %.*s\n", (int)sizeof(info->reason), info->reason);
	printf("version: %.*s\n", (int)sizeof(info->version), info->version);
}

static void print_info_json(const struct lbr_snap_info *info)
{
	printf("{\"abi_version\":%u,\"backend\":", info->abi_version);
	json_str(stdout, info_backend(info), sizeof(info->backend_name));
	printf(",\"lbr_format\":%u,\"lbr_depth\":%u",
	       info->lbr_format, info->lbr_depth);
	fputs(",\"mode\":", stdout);
	json_str(stdout, info->mode, sizeof(info->mode));
	printf(",\"nr_cpus\":%u", info->nr_cpus);
	printf(",\"buffer_kb\":%u,\"nr_targets\":%u,\"capture\":\"%s\"",
	       info->buffer_kb, info->nr_targets, capture_name(info->capture));
	fputs(",\"reason\":", stdout);
	json_str(stdout, info->reason, sizeof(info->reason));
	fputs(",\"version\":", stdout);
	json_str(stdout, info->version, sizeof(info->version));
	fputs("}\n", stdout);
}

static int cmd_info(int fd, const struct opts *o)
{
	struct lbr_snap_info info;
	int ret = get_device_info(fd, o->device, &info);

	if (ret)
		return ret;
	if (o->json)
		print_info_json(&info);
	else
		print_info_text(&info);
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
	printf("%3u %-*.*s 0x%016llx %-4s", t->id, w, (int)sizeof(t->name),
	       t->name, t->func_addr, ret_type_name(t->ret_type));
	printf(" %10llu %10llu %10llu %10llu %10llu\n", t->hits, t->captured,
	       t->filtered, t->dropped, t->missed);
}

static void print_stats_text(const struct lbr_snap_stats *st,
			     const struct lbr_snap_target_stats *ts,
			     unsigned int nr)
{
	int w = name_width(ts, nr);
	unsigned int i;

	printf("%3s %-*s %-18s %-4s %10s %10s %10s %10s %10s\n", "id", w,
	       "name", "addr", "type", "hits", "captured", "filtered",
	       "dropped", "missed");
	for (i = 0; i < nr; i++)
		print_target_text(&ts[i], w);
	printf("read: %llu\nflushed: %llu\n", st->read, st->flushed);
}

static void print_target_json(const struct lbr_snap_target_stats *t)
{
	printf("{\"id\":%u,\"name\":", t->id);
	json_str(stdout, t->name, sizeof(t->name));
	fputs(",\"func_addr\":", stdout);
	json_hex(stdout, t->func_addr);
	printf(",\"ret_type\":\"%s\",\"hits\":%llu,\"captured\":%llu",
	       ret_type_name(t->ret_type), t->hits, t->captured);
	printf(",\"filtered\":%llu,\"dropped\":%llu,\"missed\":%llu}",
	       t->filtered, t->dropped, t->missed);
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
	struct lbr_snap_target_stats ts[LBR_SNAP_MAX_TARGETS] = { 0 };
	struct lbr_snap_stats st = {
		.nr = LBR_SNAP_MAX_TARGETS, .stats_ptr = (uintptr_t)ts,
	};
	struct lbr_snap_info info;
	unsigned int nr;
	int ret = get_device_info(fd, o->device, &info);

	if (ret)
		return ret;
	if (ioctl(fd, LBR_SNAP_IOC_GET_STATS, &st) < 0)
		return ioctl_error(o->device, "GET_STATS");
	nr = st.nr < LBR_SNAP_MAX_TARGETS ? st.nr : LBR_SNAP_MAX_TARGETS;
	if (o->json)
		print_stats_json(&st, ts, nr);
	else
		print_stats_text(&st, ts, nr);
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

static int parse_cmd(int argc, char **argv, struct opts *o)
{
	static const char *const names[] = {
		[CMD_INFO] = "info", [CMD_STATS] = "stats", [CMD_FLUSH] = "flush",
	};
	unsigned int i;

	if (optind == argc)
		return 0;
	if (optind + 1 < argc)
		return usage_error("too many arguments: ", argv[optind + 1]);
	for (i = CMD_INFO; i < ARRAY_SIZE(names); i++) {
		if (!strcmp(argv[optind], names[i])) {
			o->cmd = i;
			break;
		}
	}
	if (o->cmd == CMD_STREAM)
		return usage_error("unknown command: ", argv[optind]);
	if (o->stream_only)
		return usage_error("-n, --nonblock and --kallsyms only apply to streaming", "");
	if (o->json && o->cmd == CMD_FLUSH)
		return usage_error("--json does not apply to flush", "");
	return 0;
}

enum { OPT_JSON = 256, OPT_NONBLOCK, OPT_KALLSYMS };

/* Returns 0 to go on, or the exit code (0 after --help). */
static int parse_args(int argc, char **argv, struct opts *o, bool *done)
{
	static const struct option longopts[] = {
		{ "device",	required_argument,	NULL, 'd' },
		{ "count",	required_argument,	NULL, 'n' },
		{ "json",	no_argument,		NULL, OPT_JSON },
		{ "nonblock",	no_argument,		NULL, OPT_NONBLOCK },
		{ "kallsyms",	required_argument,	NULL, OPT_KALLSYMS },
		{ "help",	no_argument,		NULL, 'h' },
		{ }
	};
	int c, ret;

	while ((c = getopt_long(argc, argv, "d:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->device = optarg;
			break;
		case 'n':
			ret = parse_count(optarg, &o->count);
			if (ret)
				return ret;
			o->stream_only = true;
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case OPT_NONBLOCK:
			o->nonblock = true;
			o->stream_only = true;
			break;
		case OPT_KALLSYMS:
			o->kallsyms = optarg;
			o->stream_only = true;
			break;
		case 'h':
			fputs(usage, stdout);
			*done = true;
			return 0;
		default:
			return usage_error(NULL, NULL);
		}
	}
	return parse_cmd(argc, argv, o);
}

int main(int argc, char **argv)
{
	static int (*const cmds[])(int fd, const struct opts *o) = {
		[CMD_STREAM] = cmd_stream, [CMD_INFO] = cmd_info,
		[CMD_STATS] = cmd_stats, [CMD_FLUSH] = cmd_flush,
	};
	struct opts o = { .device = LBR_SNAP_DEVICE, .kallsyms = KALLSYMS };
	bool done = false;
	int fd, ret;

	ret = parse_args(argc, argv, &o, &done);
	if (ret || done)
		return ret;
	fd = open_device(o.device, O_RDONLY | (o.nonblock ? O_NONBLOCK : 0));
	if (fd < 0)
		return -fd;
	ret = -cmds[o.cmd](fd, &o);
	close(fd);
	if (fflush(stdout) || ferror(stdout)) {
		pr_err("write error on stdout");
		return EXIT_ERROR;
	}
	return ret;
}
