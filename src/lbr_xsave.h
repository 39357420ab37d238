/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How a capture reads the frozen LBR: one XSAVES of the Arch LBR state
 * component where it works, the MSRs otherwise (lbr_xsave.c).
 */
#ifndef LBR_XSAVE_H
#define LBR_XSAVE_H

#include <linux/types.h>

int lbr_xsave_parse(const char *how);
int lbr_xsave_start(void);
void lbr_xsave_stop(void);
bool lbr_xsave_used(void);
void lbr_xsave_report(void);
const char *lbr_xsave_reason(void);
unsigned int lbr_read_frozen(u64 *msr, unsigned int depth, u32 *tos);

#endif /* LBR_XSAVE_H */
