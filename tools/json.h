/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_JSON_H
#define LBR_SNAP_JSON_H

#include <stddef.h>
#include <stdio.h>

void json_str(FILE *f, const char *s, size_t max);
/* json_str() of a string, or null for NULL. */
void json_opt_str(FILE *f, const char *s);
void json_hex(FILE *f, unsigned long long v);
void put_uint(FILE *f, unsigned long long v);
void put_int(FILE *f, long long v);

/* The same into a buffer, which must have room; they return its new end. */
#define JSON_STR_MAX(n)	(6 * (n) + 2)	/* json_str_buf() of @n bytes */
#define JSON_HEX_LEN	20
char *json_str_buf(char *p, const char *s, size_t n);
char *json_hex_buf(char *p, unsigned long long v);
char *uint_buf(char *p, unsigned long long v);

#endif /* LBR_SNAP_JSON_H */
