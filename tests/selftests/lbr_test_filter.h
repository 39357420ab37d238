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
 * LBR_TESTS="word ..." (or "word,..."): run only the tests whose name contains one of the
 * words (both variants of a fixture's test), for a suite that needs only
 * those on a CPU of its own; the plan counts only them.  Naming no test
 * is a failure, not an empty pass.  The 6.1 harness
 * has no -t option, so the lists are cut here before it runs.
 */
static inline unsigned int filter_tests(const char *want)
{
	struct __fixture_metadata *f;
	unsigned int kept = 0;

	for (f = __fixture_list; f; f = f->next) {
		struct __test_metadata *t, *next, *head = NULL, *tail = NULL;

		for (t = f->tests; t; t = next) {
			next = t->next;
			if (!test_wanted(want, t->name))
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
		if (want && *want && !filter_tests(want)) { \
			printf("TAP version 13\n1..1\nnot ok 1 LBR_TESTS=\"%s\" names no test\n", \
			       want); \
			return 1; \
		} \
		return test_harness_run(argc, argv); \
	}

#endif /* LBR_TEST_FILTER_H */
