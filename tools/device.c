// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: open /dev/lbr_snap, check its ABI version, report ioctl errors.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>

#include "device.h"
#include "util.h"

int open_device(const char *path, int flags)
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
		pr_err("%s: permission denied: reading needs CAP_PERFMON (or root) and read permission on the device; flush and targets need CAP_SYS_ADMIN",
		       path);
		return -EXIT_PERM;
	default:
		pr_err("%s: %s", path, strerror(errno));
		return -EXIT_ERROR;
	}
}

int ioctl_error(const char *path, const char *name)
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
int get_info(int fd, const char *path, struct lbr_snap_info *info)
{
	struct stat st;
	int ret;

	memset(info, 0, sizeof(*info));
	/* A module before cpu_types knows only the first ABI's size. */
	ret = ioctl(fd, LBR_SNAP_IOC_GET_INFO, info);
	if (ret < 0 && errno == ENOTTY) {
		memset(info, 0, sizeof(*info));
		ret = ioctl(fd, _IOR(LBR_SNAP_IOC_MAGIC, 1,
				     char[LBR_SNAP_INFO_SIZE_V1]), info);
	}
	if (ret < 0) {
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
int get_device_info(int fd, const char *path, struct lbr_snap_info *info)
{
	int ret = get_info(fd, path, info);

	if (ret == NOT_DEVICE) {
		pr_err("%s: not an lbr_snap device", path);
		return -EXIT_ERROR;
	}
	return ret;
}

struct lbr_snap_target_stats *get_all_stats(int fd, size_t hint,
					    struct lbr_snap_stats *st,
					    size_t *nr)
{
	struct lbr_snap_target_stats *ts = NULL;
	size_t cap = hint + LBR_SNAP_MAX_TARGETS;
	int tries;

	/* Targets come and go: again if more came than room. */
	for (tries = 0; tries < 3; tries++) {
		ts = xrealloc(ts, cap * sizeof(*ts));
		memset(ts, 0, cap * sizeof(*ts));
		memset(st, 0, sizeof(*st));
		st->nr = cap;
		st->entry_size = sizeof(*ts);
		st->stats_ptr = (uintptr_t)ts;
		if (ioctl(fd, LBR_SNAP_IOC_GET_STATS, st) < 0) {
			free(ts);
			return NULL;
		}
		if (st->nr <= cap) {
			*nr = st->nr;
			return ts;
		}
		cap = st->nr + LBR_SNAP_MAX_TARGETS;
	}
	free(ts);
	errno = EAGAIN;
	return NULL;
}
