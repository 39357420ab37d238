/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_DEVICE_H
#define LBR_SNAP_DEVICE_H

#include <stddef.h>

#include <lbr_snap.h>

/* Returned by get_info() for input that is not the device. */
#define NOT_DEVICE	1

int open_device(const char *path, int flags);
int ioctl_error(const char *path, const char *name);
int get_info(int fd, const char *path, struct lbr_snap_info *info);
int get_device_info(int fd, const char *path, struct lbr_snap_info *info);

/*
 * Every target's counters (LBR_SNAP_IOC_GET_STATS), room for at least
 * @hint, grown to what the module lists; @st gets the header (read,
 * flushed), *@nr the number.  NULL and errno on failure (EAGAIN:
 * targets kept coming faster than three reads).
 */
struct lbr_snap_target_stats *get_all_stats(int fd, size_t hint,
					    struct lbr_snap_stats *st,
					    size_t *nr);

#endif /* LBR_SNAP_DEVICE_H */
