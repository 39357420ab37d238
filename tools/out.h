/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbr-snap: stdout written by a thread of its own while records stream.
 */
#ifndef LBR_SNAP_OUT_H
#define LBR_SNAP_OUT_H

#include <stdbool.h>
#include <stddef.h>

/* Hand stdout's buffer to the writer once this much is in it. */
#define OUT_HANDOFF	(512 * 1024)

void out_start(void);
void out_flush(void);
void out_sync(void);
size_t out_pending(void);
int out_stop(void);
bool out_failed(void);

#endif /* LBR_SNAP_OUT_H */
