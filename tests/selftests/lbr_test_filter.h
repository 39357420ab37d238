/* SPDX-License-Identifier: GPL-2.0 */
/*
 * LBR_TESTS for the kselftest binaries built on kselftest_harness.h
 * (included before this).
 */
#ifndef LBR_TEST_FILTER_H
#define LBR_TEST_FILTER_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lbr_test_agnostic.h"

/*
 * Does @name contain one of the words of @want, separated by blanks or
 * commas (a kernel command line passes no blank in a value)?
 */
static inline bool test_wanted(const char *want, const char *name)
{
	char word[128];
	int n;

	for (;;) {
		want += strspn(want, " \t\n,");
		if (sscanf(want, "%127[^ \t\n,]%n", word, &n) != 1)
			return false;
		if (strstr(name, word))
			return true;
		want += n;
	}
}

/*
 * The harness's SKIP() marks the test passed (6.1's kselftest_harness.h,
 * which the build takes): after a failed EXPECT it reported a skip, and the
 * failure was lost.  Here a SKIP() once the test has failed keeps the
 * failure, says why it stopped, and runs @statement.
 */
#undef SKIP
#define SKIP(statement, fmt, ...) do { \
	snprintf(_metadata->results->reason, \
		 sizeof(_metadata->results->reason), fmt, ##__VA_ARGS__); \
	if (!_metadata->passed) { \
		TH_LOG("stopped after a failure, not skipped: %s", \
		       _metadata->results->reason); \
		_metadata->results->reason[0] = '\0'; \
		statement; \
		break; \
	} \
	if (TH_LOG_ENABLED) \
		fprintf(TH_LOG_STREAM, "#      SKIP      %s\n", \
			_metadata->results->reason); \
	_metadata->passed = 1; \
	_metadata->skip = 1; \
	_metadata->trigger = 0; \
	statement; \
} while (0)

/*
 * A test named crafted_* fails on purpose, to show that the harness
 * reports what it should (helpers: crafted_skip_after_failure): it runs
 * only when LBR_TESTS names it.
 */
static inline bool test_kept(const char *want, const char *name)
{
	bool crafted = !strncmp(name, "crafted_", 8);

	if (!want || !*want)
		return !crafted;
	return test_wanted(want, name) && (!crafted || strstr(want, "crafted_"));
}

/* Is @fixture.@name one of lbr_agnostic_tests? */
static inline bool test_agnostic(const char *fixture, const char *name)
{
	size_t n = strlen(fixture);
	unsigned int i;

	for (i = 0; i < sizeof(lbr_agnostic_tests) / sizeof(lbr_agnostic_tests[0]); i++)
		if (!strncmp(lbr_agnostic_tests[i], fixture, n) &&
		    lbr_agnostic_tests[i][n] == '.' &&
		    !strcmp(lbr_agnostic_tests[i] + n + 1, name))
			return true;
	return false;
}

/*
 * LBR_TESTS="word ..." (or "word,..."): run only the tests whose name contains one of the
 * words (both variants of a fixture's test), for a suite that needs only
 * those on a CPU of its own; the plan counts only them.  Naming no test
 * is a failure, not an empty pass.  LBR_TESTS_LBR_ONLY=1 leaves out the
 * tests of lbr_test_agnostic.h (a lab CPU whose kernel another boot
 * runs them on).  The 6.1 harness
 * has no -t option, so the lists are cut here before it runs.
 */
static inline unsigned int filter_tests(const char *want)
{
	const char *lbr_only = getenv("LBR_TESTS_LBR_ONLY");
	bool drop_agnostic = lbr_only && !strcmp(lbr_only, "1");
	struct __fixture_metadata *f;
	unsigned int kept = 0;

	for (f = __fixture_list; f; f = f->next) {
		struct __test_metadata *t, *next, *head = NULL, *tail = NULL;

		for (t = f->tests; t; t = next) {
			next = t->next;
			if (!test_kept(want, t->name) ||
			    (drop_agnostic && test_agnostic(f->name, t->name)))
				continue;
			t->next = NULL;
			if (head) {
				tail->next = t;
				t->prev = tail;
				head->prev = t;
			} else {
				head = t;
				t->prev = t;
			}
			tail = t;
			kept++;
		}
		f->tests = head;
	}
	return kept;
}

/* The harness's main, with LBR_TESTS applied first. */
#define LBR_TESTS_MAIN \
	int main(int argc, char **argv) \
	{ \
		const char *want = getenv("LBR_TESTS"); \
		\
		if (!filter_tests(want) && want && *want) { \
			printf("TAP version 13\n1..1\nnot ok 1 LBR_TESTS=\"%s\" names no test\n", \
			       want); \
			return 1; \
		} \
		return test_harness_run(argc, argv); \
	}

#endif /* LBR_TEST_FILTER_H */
