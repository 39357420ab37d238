/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_ERRNAME_H
#define LBR_SNAP_ERRNAME_H

/* Kernel error values are -MAX_ERRNO..-1, as in IS_ERR_VALUE(). */
#define MAX_ERRNO	4095

const char *errno_name(long long err);

#endif /* LBR_SNAP_ERRNAME_H */
