// SPDX-License-Identifier: GPL-2.0
/*
 * Check tools/errname.c: the names of 1..133 against glibc's
 * strerrorname_np(), and the kernel-internal ones the tool adds.
 * Prints the first mismatch and exits 1.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "errname.h"

static int expect(long long err, const char *want)
{
	const char *got = errno_name(err);

	if (got == want || (got && want && !strcmp(got, want)))
		return 0;
	printf("errno_name(%lld) = %s, expected %s\n", err, got ? got : "NULL",
	       want ? want : "NULL");
	return 1;
}

int main(void)
{
	int err;

	for (err = 1; err <= 133; err++)
		if (expect(err, strerrorname_np(err)))
			return 1;
	return expect(0, NULL) || expect(134, NULL) || expect(-1, NULL) ||
	       expect(511, NULL) || expect(512, "ERESTARTSYS") ||
	       expect(516, "ERESTART_RESTARTBLOCK") ||
	       expect(517, "EPROBE_DEFER") || expect(520, NULL) ||
	       expect(524, "ENOTSUPP") || expect(530, "ERECALLCONFLICT") ||
	       expect(531, "ENOGRACE") || expect(532, NULL);
}
