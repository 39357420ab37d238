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

/* The two hex digits of every byte. */
static const char hex_pairs[] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/* json_hex() into @p, JSON_HEX_LEN bytes: a byte, two digits, a turn. */
char *json_hex_buf(char *p, unsigned long long v)
{
	int i;

	memcpy(p, "\"0x", 3);
	for (i = 17; i >= 3; i -= 2, v >>= 8)
		memcpy(p + i, hex_pairs + 2 * (v & 0xff), 2);
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

void json_opt_str(FILE *f, const char *s)
{
	if (s)
		json_str(f, s, strlen(s));
	else
		fputs("null", f);
}
