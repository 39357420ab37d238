// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: JSON string output.
 *
 * Strings such as a task's comm may hold any bytes.  Valid UTF-8 is copied,
 * quotes and backslashes are escaped, and control characters as well as
 * bytes that are not valid UTF-8 become \u00XX, so every line is valid JSON.
 */
#include <string.h>

#include "json.h"
#include "util.h"

/* Print the character at @p, @n bytes left, escaped; returns its length. */
static size_t put_char(FILE *f, const unsigned char *p, size_t n)
{
	size_t len = utf8_seq_len(p, n);

	if (len)
		fwrite(p, 1, len, f);
	else if (*p == '"' || *p == '\\')
		fprintf(f, "\\%c", *p);
	else if (*p >= 0x20 && *p < 0x7f)
		fputc(*p, f);
	else
		fprintf(f, "\\u%04x", *p);
	return len ? len : 1;
}

/* Print the string @s, at most @max bytes or up to its NUL, JSON-quoted. */
void json_str(FILE *f, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, n = strnlen(s, max);

	fputc('"', f);
	while (i < n)
		i += put_char(f, p + i, n - i);
	fputc('"', f);
}

/* 64-bit values do not survive JSON numbers: print them as hex strings. */
void json_hex(FILE *f, unsigned long long v)
{
	fprintf(f, "\"0x%016llx\"", v);
}
