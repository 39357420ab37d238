// SPDX-License-Identifier: GPL-2.0
/*
 * Unit test of src/ret_class.h: the fexit trampolines' quiet test, its own
 * instructions (ret_quiet_test.S), lets a return go exactly when the
 * capture's filter, lbr_is_error() of lbr_retval(), would filter it, for
 * every return type, both capture modes, with and without an errno
 * list.  An error that the test let go would be a record lost; a
 * success it kept costs MSR accesses.  And a change of capture mode may
 * change the limit alone (fexit_slots.c writes nothing else).
 */
#include <stdio.h>
#include <stdlib.h>

#include "ret_class.h"

int ret_quiet(u64 ax, const struct lbr_ret_quiet *q);

/* 5 types x 4 modes, 5 mode changes, the unknown type */
#define RET_CLASS_TESTS	26

static int nr_test, nr_fail;

static const char *const type_names[] = {
	"int", "long", "ptr", "bool", "void",
};

/*
 * What the capture may record, as capture.h and capture.c decide it by
 * the value: every return under capture=all, errors only under errors or
 * with an errno list (which then picks among the errors).
 */
static int recorded(u8 type, int capture_all, int errno_list, u64 ax)
{
	if (capture_all && !errno_list)
		return 1;
	if (type == LBR_SNAP_RET_VOID)
		return 0;
	return lbr_is_error(type, lbr_retval(type, ax));
}

static u64 next_random(u64 *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Every value below for @type in one mode: one TAP line. */
static void check_type(u8 type, int capture_all, int errno_list)
{
	struct lbr_ret_quiet q = lbr_ret_quiet_for(type, capture_all,
						   errno_list);
	static const u64 highs[] = {
		0, 0xffffffff00000000ull, 0x12345678ull << 32,
		0x8000000000000000ull, 0x00000001ull << 32,
	};
	u64 seed = 0x9e3779b97f4a7c15ull, ax, bad = 0, n = 0;
	char mode[64];
	unsigned int h, lowbyte;
	s64 v;
	int i;

	snprintf(mode, sizeof(mode), "%s%s",
		 capture_all ? "capture=all" : "capture=errors",
		 errno_list ? ", an errno list" : "");
#define ONE(x)								\
	do {								\
		ax = (x);						\
		n++;							\
		if (ret_quiet(ax, &q) ==				\
		    recorded(type, capture_all, errno_list, ax) && !bad++) \
			printf("# %s, %s: %#llx %s\n", type_names[type], \
			       mode, (unsigned long long)ax,		\
			       recorded(type, capture_all, errno_list, ax) ? \
			       "may be recorded, and the test lets it go" : \
			       "is not recorded, and the test keeps it"); \
	} while (0)

	for (h = 0; h < sizeof(highs) / sizeof(highs[0]); h++) {
		/* Around 0 and the errno range, in 32 and 64 bits. */
		for (v = -70000; v <= 70000; v++) {
			ONE(highs[h] | (u32)v);
			ONE((u64)v + highs[h]);
		}
		for (i = 0; i <= 32; i++) {
			ONE(highs[h] | (u32)(0x80000000u >> (i & 31)));
			ONE(highs[h] | (0xffffffffu - i));
		}
		/* A bool's low byte, with anything above it. */
		for (lowbyte = 0; lowbyte < 256; lowbyte++)
			ONE(highs[h] | (0xabcd00u | lowbyte));
	}
	for (i = 0; i < 64; i++) {
		ONE(1ull << i);
		ONE(~(1ull << i));
		ONE(-(s64)MAX_ERRNO - 1 + i);
	}
	for (i = 0; i < 1000000; i++)
		ONE(next_random(&seed));
	nr_test++;
	if (bad)
		nr_fail++;
	printf("%s %d - %s, %s: %llu of %llu values told apart from the capture's filter\n",
	       bad ? "not ok" : "ok", nr_test, type_names[type], mode,
	       (unsigned long long)bad, (unsigned long long)n);
#undef ONE
}

/*
 * A change of capture mode rewrites the limit alone (one store), which is
 * safe only if the other fields do not depend on the mode.
 */
static void check_mode_change(u8 type)
{
	struct lbr_ret_quiet e = lbr_ret_quiet_for(type, 0, 0);
	struct lbr_ret_quiet a = lbr_ret_quiet_for(type, 1, 0);
	struct lbr_ret_quiet l = lbr_ret_quiet_for(type, 1, 1);
	int ok = e.bias == a.bias && e.shift == a.shift &&
		 e.bias == l.bias && e.shift == l.shift && !a.limit;

	nr_test++;
	if (!ok)
		nr_fail++;
	printf("%s %d - %s: capture=errors and all differ in the limit alone (bias %#llx/%#llx, shift %llu/%llu, all's limit %#llx)\n",
	       ok ? "ok" : "not ok", nr_test, type_names[type],
	       (unsigned long long)e.bias, (unsigned long long)a.bias,
	       (unsigned long long)e.shift, (unsigned long long)a.shift,
	       (unsigned long long)a.limit);
}

int main(void)
{
	struct lbr_ret_quiet unknown = lbr_ret_quiet_for(LBR_SNAP_RET_VOID + 1,
							 0, 0);
	int capture_all, errno_list;
	u8 type;

	printf("TAP version 13\n1..%d\n", RET_CLASS_TESTS);
	for (capture_all = 0; capture_all <= 1; capture_all++)
		for (errno_list = 0; errno_list <= 1; errno_list++)
			for (type = LBR_SNAP_RET_INT; type <= LBR_SNAP_RET_VOID;
			     type++)
				check_type(type, capture_all, errno_list);
	for (type = LBR_SNAP_RET_INT; type <= LBR_SNAP_RET_VOID; type++)
		check_mode_change(type);
	nr_test++;
	if (unknown.limit)
		nr_fail++;
	printf("%s %d - a return type it does not know lets nothing go (limit %#llx)\n",
	       unknown.limit ? "not ok" : "ok", nr_test,
	       (unsigned long long)unknown.limit);
	printf("# Totals: pass:%d fail:%d skip:0\n", nr_test - nr_fail,
	       nr_fail);
	return nr_fail ? 1 : 0;
}
