/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Finding a kernel function by name, for both modules: lbr_snap_fexit
 * exports it, lbr_snap uses it for its targets.
 */
#ifndef LBR_SNAP_FUNC_LOOKUP_H
#define LBR_SNAP_FUNC_LOOKUP_H

int lbr_func_lookup(const char *name, unsigned long *start,
		    unsigned long *size);

#endif /* LBR_SNAP_FUNC_LOOKUP_H */
