/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_DEVICE_H
#define LBR_SNAP_DEVICE_H

#include <lbr_snap.h>

/* Returned by get_info() for input that is not the device. */
#define NOT_DEVICE	1

int open_device(const char *path, int flags);
int ioctl_error(const char *path, const char *name);
int get_info(int fd, const char *path, struct lbr_snap_info *info);
int get_device_info(int fd, const char *path, struct lbr_snap_info *info);

#endif /* LBR_SNAP_DEVICE_H */
