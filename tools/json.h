/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_JSON_H
#define LBR_SNAP_JSON_H

#include <stddef.h>
#include <stdio.h>

void json_str(FILE *f, const char *s, size_t max);
void json_hex(FILE *f, unsigned long long v);

#endif /* LBR_SNAP_JSON_H */
