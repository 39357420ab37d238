/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_SELFTEST_H
#define LBR_SNAP_SELFTEST_H

#include <stdbool.h>

/*
 * lbr-snap selftest: what lbr_snap does on this machine, as a report
 * (JSON with @json).  Returns 0 (nothing failed; no LBR is no failure),
 * 1 (something did: the report says what), or an exit code of util.h.
 */
int selftest_run(const char *kallsyms, bool json);

#endif /* LBR_SNAP_SELFTEST_H */
