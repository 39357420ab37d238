// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of the selftests' own helpers (lbr_test_util.h), with no module:
 * `make check` runs them on the host (suite helpers).
 */
#include "kselftest_harness.h"
#include "lbr_test_util.h"
#include "lbr_test_filter.h"

/*
 * The helpers say what went wrong: crafted buffers through parse() and a
 * pipe through drain() (no module needed).  A helper that only returned -1
 * once left a failing stress test unexplained.
 */
static int craft_stack(char *buf, int n, unsigned int nr_entries,
		       unsigned int nr_stack)
{
	struct lbr_snap_record h = {
		.version = LBR_SNAP_ABI_VERSION,
		.hdr_size = sizeof(h),
		.entry_size = sizeof(struct lbr_snap_branch),
		.nr_entries = nr_entries,
		.nr_stack = nr_stack,
		.retval = -22,
	};
	__u64 frame;
	int i, off = 0;
	unsigned int j;

	h.size = h.hdr_size + nr_entries * h.entry_size + nr_stack * 8;
	for (i = 0; i < n; i++) {
		memset(buf + off, 0, h.size);
		memcpy(buf + off, &h, sizeof(h));
		/* entries 0xee, frames 0x1000 + j */
		memset(buf + off + h.hdr_size, 0xee, nr_entries * h.entry_size);
		for (j = 0; j < nr_stack; j++) {
			frame = 0x1000 + j;
			memcpy(buf + off + h.size - (nr_stack - j) * 8, &frame, 8);
		}
		off += h.size;
	}
	return off;
}

static int craft(char *buf, int n, unsigned int nr_entries)
{
	return craft_stack(buf, n, nr_entries, 0);
}

TEST(helpers_say_why)
{
	static char buf[8 * LBR_SNAP_RECORD_MAX];
	static struct rec recs[80];
	struct lbr_snap_record *h = (void *)buf;
	int len, p[2], n;

	len = craft(buf, 3, 2);
	ASSERT_EQ(3, parse(buf, len, recs, 64)) TH_LOG("%s", lbr_why);
	EXPECT_EQ(-1, parse(buf, len, recs, 2));
	EXPECT_NE(NULL, strstr(lbr_why, "record 2 at offset")) TH_LOG("%s", lbr_why);
	EXPECT_NE(NULL, strstr(lbr_why, "no room, the caller has 2")) TH_LOG("%s", lbr_why);

	h->version = LBR_SNAP_ABI_VERSION + 1;
	EXPECT_EQ(-1, parse(buf, len, recs, 64));
	EXPECT_NE(NULL, strstr(lbr_why, "record 0 at offset 0: version")) TH_LOG("%s", lbr_why);
	h->version = LBR_SNAP_ABI_VERSION;
	h->size += 1;
	EXPECT_EQ(-1, parse(buf, len, recs, 64));
	EXPECT_NE(NULL, strstr(lbr_why, "size")) TH_LOG("%s", lbr_why);
	h->size -= 1;
	h->nr_entries = LBR_SNAP_MAX_ENTRIES + 1;
	EXPECT_EQ(-1, parse(buf, len, recs, 64));
	EXPECT_NE(NULL, strstr(lbr_why, "nr_entries")) TH_LOG("%s", lbr_why);
	h->nr_entries = 2;
	EXPECT_EQ(-1, parse(buf, len - 1, recs, 64));
	EXPECT_NE(NULL, strstr(lbr_why, "record 2")) TH_LOG("%s", lbr_why);
	EXPECT_EQ(-1, parse(buf, 10, recs, 64));
	EXPECT_NE(NULL, strstr(lbr_why, "a header is")) TH_LOG("%s", lbr_why);

	/* A call stack after the entries lands in rec.stack, whole. */
	len = craft_stack(buf, 2, 3, 5);
	ASSERT_EQ(2, parse(buf, len, recs, 64)) TH_LOG("%s", lbr_why);
	EXPECT_EQ(5, recs[1].h.nr_stack);
	EXPECT_EQ(0x1000, recs[1].stack[0]);
	EXPECT_EQ(0x1004, recs[1].stack[4]);
	EXPECT_EQ(0xeeeeeeeeeeeeeeeeull, recs[1].br[2].to);
	h->nr_stack = LBR_SNAP_MAX_STACK + 1;
	EXPECT_EQ(-1, parse(buf, len, recs, 64));
	EXPECT_NE(NULL, strstr(lbr_why, "nr_stack")) TH_LOG("%s", lbr_why);
	h->nr_stack = 4;
	EXPECT_EQ(-1, parse(buf, len, recs, 64));
	EXPECT_NE(NULL, strstr(lbr_why, "* 8")) TH_LOG("%s", lbr_why);

	/* drain() on a pipe: records, then EAGAIN; a torn one; a bad fd. */
	ASSERT_EQ(0, pipe2(p, O_NONBLOCK));
	len = craft(buf, 5, 0);
	ASSERT_EQ(len, write(p[1], buf, len));
	EXPECT_EQ(5, drain(p[0], recs, 64)) TH_LOG("%s", lbr_why);
	EXPECT_FALSE(lbr_drain_full);
	len = craft(buf, 1, 1);
	ASSERT_EQ(len - 3, write(p[1], buf, len - 3));
	EXPECT_EQ(-1, drain(p[0], recs, 64));
	EXPECT_NE(NULL, strstr(lbr_why, "read 1 of")) TH_LOG("%s", lbr_why);
	EXPECT_NE(NULL, strstr(lbr_why, "size")) TH_LOG("%s", lbr_why);
	EXPECT_EQ(-1, drain(p[1], recs, 64));
	EXPECT_NE(NULL, strstr(lbr_why, "errno 9")) TH_LOG("%s", lbr_why);

	/*
	 * A producer as fast as the reader: drain() stops once its array
	 * cannot take a full read() more, keeping every record it read.
	 */
	len = craft(buf, 40, 0);
	ASSERT_EQ(len, write(p[1], buf, len));
	n = drain(p[0], recs, 70);
	EXPECT_FALSE(lbr_drain_full);
	EXPECT_EQ(40, n) TH_LOG("%s", lbr_why);
	ASSERT_EQ(len, write(p[1], buf, len));
	n = drain(p[0], recs, 30);
	EXPECT_TRUE(lbr_drain_full);
	EXPECT_LT(0, n);
	EXPECT_GE(30, n);
	EXPECT_NE(NULL, strstr(lbr_why, "drain stopped")) TH_LOG("%s", lbr_why);
	EXPECT_EQ(40 - n, drain(p[0], recs, 64)) TH_LOG("%s", lbr_why);
	close(p[0]);
	close(p[1]);
}

/*
 * LBR_TESTS: words separated by blanks or commas (a kernel command line
 * gives a guest no blank in a value), each a part of a test's name.
 */
TEST(tests_filter_words)
{
	EXPECT_TRUE(test_wanted("pmi", "return_inside_the_pmi_freeze"));
	EXPECT_TRUE(test_wanted("mode_perf,pmi_in", "pmi_in_the_frozen_window"));
	EXPECT_TRUE(test_wanted("mode_perf pmi_in", "pmi_in_the_frozen_window"));
	EXPECT_TRUE(test_wanted(",,a, b ,c", "xcx"));
	EXPECT_FALSE(test_wanted("mode_perf,pmi_in", "mode_raw"));
	EXPECT_FALSE(test_wanted("mode_perf,pmi_in", "pmi_at"));
	EXPECT_FALSE(test_wanted("", "anything"));
	EXPECT_FALSE(test_wanted(" , ", "anything"));
}

/*
 * Fails on purpose (run only when LBR_TESTS names it; make check's
 * helpers suite does, and wants "not ok"): a SKIP() after a failed
 * EXPECT must not turn the failure into a skip (lbr_test_filter.h).
 */
TEST(crafted_skip_after_failure)
{
	EXPECT_EQ(-19, -22);
	SKIP(return, "a skip after the failure");
}

LBR_TESTS_MAIN
