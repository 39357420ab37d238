/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_TOOL_INFO_H
#define LBR_SNAP_TOOL_INFO_H

#include <lbr_snap.h>

/* lbr-snap info's output of @info, from GET_INFO. */
void info_print_text(const struct lbr_snap_info *info);
void info_print_json(const struct lbr_snap_info *info);

#endif
