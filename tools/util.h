/* SPDX-License-Identifier: GPL-2.0 */
/*
 * lbr-snap: exit codes and small helpers shared by the tool's files.
 */
#ifndef LBR_SNAP_UTIL_H
#define LBR_SNAP_UTIL_H

#include <stddef.h>

/* Exit codes; --help documents them. */
enum {
	EXIT_ERROR	= 1,	/* I/O error, input that is not the device */
	EXIT_USAGE	= 2,	/* bad command line */
	EXIT_NODEV	= 3,	/* no device: module not loaded */
	EXIT_PERM	= 4,	/* permission denied */
	EXIT_ABI	= 5,	/* module speaks another ABI version */
	EXIT_CORRUPT	= 6,	/* corrupt record stream */
	/*
	 * trace's own failures, its command line included, as env(1) and
	 * timeout(1) have it: the rest are CMD's (126 and 127 too, when
	 * CMD cannot be run or is not found).
	 */
	EXIT_TRACE	= 125,
};

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define __printf(a, b)	__attribute__((format(printf, a, b)))
#define __noreturn	__attribute__((noreturn))

__printf(1, 2) void pr_err(const char *fmt, ...);
/* Say so and exit: memory ran out. */
__noreturn void oom(void);
void *xrealloc(void *ptr, size_t size);
/* qsort() and bsearch() order of unsigned long long */
int cmp_ull(const void *a, const void *b);

/*
 * Blocks copied in bulk (a chunk of records, a kept branch list) go in
 * pieces below glibc's x86_rep_movsb_threshold (2 KiB without AVX, up to
 * 16 KiB with AVX512), above which memcpy() uses rep movsb: QEMU's TCG
 * runs that one byte at a time (print.c, memo_write(), has figures).  On
 * real CPUs either copy is as fast.
 */
#define COPY_PIECE	1920
void copy_pieces(void *dst, const void *src, size_t n);
void stdout_buffered(void);
size_t utf8_seq_len(const unsigned char *s, size_t n);

#endif /* LBR_SNAP_UTIL_H */
