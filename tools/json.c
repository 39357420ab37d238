// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: JSON string output.
 *
 * Strings such as a task's comm may hold any bytes.  Valid UTF-8 is copied,
 * quotes and backslashes are escaped, and control characters as well as
 * bytes that are not valid UTF-8 become \u00XX, so every line is valid JSON.
 *
 * These run a dozen times per branch of every record: runs of plain
 * characters go out in one fwrite(), numbers without printf().
 */
#include <stdbool.h>
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

/* Printable ASCII that needs no escape. */
static bool is_plain(unsigned char c)
{
	return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
}

/* json_str() of @n bytes at @s into @p, JSON_STR_MAX(@n) bytes of room. */
char *json_str_buf(char *p, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, len;

	*p++ = '"';
	while (i < n) {
		if (is_plain(u[i])) {
			*p++ = u[i++];
			continue;
		}
		len = utf8_seq_len(u + i, n - i);
		if (len) {
			memcpy(p, u + i, len);
			p += len;
			i += len;
		} else if (u[i] == '"' || u[i] == '\\') {
			*p++ = '\\';
			*p++ = u[i++];
		} else {
			memcpy(p, "\\u00", 4);
			p[4] = hex[u[i] >> 4];
			p[5] = hex[u[i++] & 15];
			p += 6;
		}
	}
	*p++ = '"';
	return p;
}

/* Print the string @s, at most @max bytes or up to its NUL, JSON-quoted. */
void json_str(FILE *f, const char *s, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0, run, n = strnlen(s, max);

	fputc('"', f);
	while (i < n) {
		for (run = i; run < n && is_plain(p[run]); run++)
			;
		if (run > i) {
			fwrite(p + i, 1, run - i, f);
			i = run;
		} else {
			i += put_char(f, p + i, n - i);
		}
	}
	fputc('"', f);
}

/* json_hex() into @p, JSON_HEX_LEN bytes. */
char *json_hex_buf(char *p, unsigned long long v)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	memcpy(p, "\"0x", 3);
	for (i = 18; i >= 3; i--, v >>= 4)
		p[i] = digits[v & 15];
	p[19] = '"';
	return p + JSON_HEX_LEN;
}

/* 64-bit values do not survive JSON numbers: print them as hex strings. */
void json_hex(FILE *f, unsigned long long v)
{
	char buf[JSON_HEX_LEN];

	fwrite(buf, 1, json_hex_buf(buf, v) - buf, f);
}

/* sprintf(@p, "%llu", @v), without the NUL: at most 20 bytes. */
char *uint_buf(char *p, unsigned long long v)
{
	char buf[20];
	int i = sizeof(buf);

	do {
		buf[--i] = '0' + v % 10;
		v /= 10;
	} while (v);
	memcpy(p, buf + i, sizeof(buf) - i);
	return p + sizeof(buf) - i;
}

/* printf("%llu", @v) */
void put_uint(FILE *f, unsigned long long v)
{
	char buf[20];

	fwrite(buf, 1, uint_buf(buf, v) - buf, f);
}

/* printf("%lld", @v) */
void put_int(FILE *f, long long v)
{
	if (v < 0) {
		fputc('-', f);
		put_uint(f, -(unsigned long long)v);
	} else {
		put_uint(f, v);
	}
}
