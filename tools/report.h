/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_REPORT_H
#define LBR_SNAP_REPORT_H

#include <stdbool.h>

#include "ksym.h"
#include "stream.h"

int report_records(int fd, const struct stream_opts *o);

#endif /* LBR_SNAP_REPORT_H */
