/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_PRINT_H
#define LBR_SNAP_PRINT_H

#include <stdio.h>

#include "ksym.h"
#include "record.h"

void print_rec_text(FILE *f, const struct rec *r, const struct ksyms *ks);
void print_rec_json(FILE *f, const struct rec *r, const struct ksyms *ks);

#endif /* LBR_SNAP_PRINT_H */
