// SPDX-License-Identifier: GPL-2.0
/*
 * lbr_snap_test, the capture path out of reach: neither kprobes nor
 * ftrace can hook what runs once LBR is frozen.
 */

/*
 * Everything the capture path runs once LBR is frozen, down to the raw
 * copy (lbr_capture() is inline in the hooks, lbr_ret_handler and
 * lbr_fexit_capture), and the decoder read() runs on it: no kprobe may be
 * put on it (the
 * kprobe blacklist) and ftrace cannot trace it (no fentry, so absent from
 * available_filter_functions).  Either would add branches before the
 * read, or recurse.
 */
TEST_F_TIMEOUT(cap, capture_path_neither_probed_nor_traced, 120)
{
	/* As the source marks them (tests/vm/build.sh's lbr_nokprobe.h). */
	static const char *const path[] = { LBR_NOKPROBE_FUNCS };
	static const char *const must[] = {
		"lbr_ret_handler", "lbr_capture_record", "lbr_hw_read_raw",
		"lbr_fexit_exit_lbr",
	};
	char line[512], name[256];
	bool black[ARRAY_SIZE(path)] = { false };
	unsigned int i, j;
	FILE *f;

	/* The list is the source's, not an empty one. */
	for (j = 0; j < ARRAY_SIZE(must); j++) {
		for (i = 0; i < ARRAY_SIZE(path); i++)
			if (!strcmp(path[i], must[j]))
				break;
		EXPECT_GT(ARRAY_SIZE(path), i) TH_LOG("%s not in the list", must[j]);
	}
	cap_load(_metadata, self, variant, "targets=lbr_test_int", O_NONBLOCK);
	f = fopen("/sys/kernel/debug/kprobes/blacklist", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %255s", name) != 1)
			continue;
		for (i = 0; i < ARRAY_SIZE(path); i++)
			black[i] |= !strcmp(name, path[i]);
	}
	fclose(f);
	for (i = 0; i < ARRAY_SIZE(path); i++) {
		EXPECT_TRUE(black[i]) TH_LOG("%s: kprobes allowed", path[i]);
		EXPECT_FALSE(ftrace_can_trace(path[i]))
			TH_LOG("%s: ftrace can trace it", path[i]);
	}
}
