/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_STREAM_H
#define LBR_SNAP_STREAM_H

#include <stdbool.h>

#include "ksym.h"

struct stream_opts {
	const char *path;		/* for messages */
	const struct ksyms *ks;
	unsigned long long max;		/* stop after this many records, 0: never */
	bool json;
};

int stream_records(int fd, const struct stream_opts *o);

#endif /* LBR_SNAP_STREAM_H */
