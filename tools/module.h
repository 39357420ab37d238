/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbr-snap: loading and unloading the module, for trace, why and selftest.
 */
#ifndef LBR_SNAP_MODULE_H
#define LBR_SNAP_MODULE_H

#include <stdbool.h>

/* CAP_SYS_ADMIN in the effective set (root, if capget() fails). */
bool has_cap_sys_admin(void);
/* Run a command (modprobe) and wait; returns its exit status, or -1. */
int module_run(char *const argv[]);
/*
 * rmmod lbr_snap, then, if @and_fexit, its dependency lbr_snap_fexit:
 * each error said on stderr, none returned.
 */
void module_unload(bool and_fexit);

#endif /* LBR_SNAP_MODULE_H */
