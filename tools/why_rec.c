// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap why -o FILE and why -i FILE: a why run's records, kept as a
 * recording (recording.h) with what why needs besides them to put them
 * together again, so that the run's answer can be had later, or on a
 * machine with the debug info, from the file alone.  Its header lines,
 * before kallsyms:
 *
 *   why-stack-depth N      GET_INFO's stack_depth: a stack this long is cut
 *   why-tree 0|1           the tree filter followed the command
 *   why-hooked ADDR        per function hooked (hex), to count depths
 *   why-entry ADDR         per entry function, a hooked one too
 *
 * The records are the command's, as the device gave them, in the order
 * why read them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ksym.h"
#include "stream.h"
#include "util.h"
#include "why.h"
#include "why_rec.h"

/* Lines as "why-hooked ffffffff81234567\n": 11 + 16 + 1 at most. */
#define ADDR_LINE	32

/**
 * why_rec_lines - the header lines of a why recording
 * @wr: what the run knew
 *
 * Return: the lines, newline-terminated, to free().
 */
char *why_rec_lines(const struct why_rec *wr)
{
	size_t i, len = 64 + (wr->nr_hooked + wr->nr_entry) * ADDR_LINE;
	char *s = xrealloc(NULL, len), *p = s;

	p += sprintf(p, "why-stack-depth %u\nwhy-tree %d\n", wr->stack_max,
		     wr->tree);
	for (i = 0; i < wr->nr_hooked; i++)
		p += sprintf(p, "why-hooked %llx\n", wr->hooked[i]);
	for (i = 0; i < wr->nr_entry; i++)
		p += sprintf(p, "why-entry %llx\n", wr->entry[i]);
	return s;
}

/* At most this many why-hooked and why-entry lines (6.1 hooks 7,600). */
#define WHY_REC_MAX_ADDRS	(1u << 20)

/*
 * An address line's value (1 to 16 lowercase hex digits, not 0) into @v,
 * grown as needed; false if bad.
 */
static bool add_addr(const char *val, unsigned long long **v, size_t *nr,
		     size_t *cap)
{
	size_t len = strlen(val);
	unsigned long long a;

	if (!len || len > 16 || strspn(val, "0123456789abcdef") != len ||
	    *nr >= WHY_REC_MAX_ADDRS)
		return false;
	a = strtoull(val, NULL, 16);
	if (!a)
		return false;
	if (*nr == *cap) {
		*cap = *cap ? 2 * *cap : 256;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*nr)++] = a;
	return true;
}

/**
 * why_rec_parse - what a recording's header says of its why run
 * @header: recording_open()'s header lines
 * @wr: filled; its arrays sorted, to free() with why_rec_free()
 *
 * Return: 0, -ENOENT if the recording is not of a why run, or -EINVAL
 * if its why lines are bad.
 */
int why_rec_parse(const char *header, struct why_rec *wr)
{
	size_t cap_h = 0, cap_e = 0;
	const char *p, *nl;
	bool seen = false;
	char line[128];

	memset(wr, 0, sizeof(*wr));
	wr->tree = true;
	for (p = header; p && *p; p = nl ? nl + 1 : NULL) {
		size_t n;

		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		if (strncmp(p, "why-", 4))
			continue;
		if (n >= sizeof(line))
			goto bad;
		memcpy(line, p, n);
		line[n] = '\0';
		if (!strncmp(line, "why-hooked ", 11)) {
			if (!add_addr(line + 11, &wr->hooked, &wr->nr_hooked,
				      &cap_h))
				goto bad;
		} else if (!strncmp(line, "why-entry ", 10)) {
			if (!add_addr(line + 10, &wr->entry, &wr->nr_entry,
				      &cap_e))
				goto bad;
		} else if (!strncmp(line, "why-stack-depth ", 16)) {
			const char *d = line + 16;

			/* GET_INFO's stack_depth: 0 to 4,096, in digits. */
			if (!*d || strlen(d) > 4 ||
			    strspn(d, "0123456789") != strlen(d))
				goto bad;
			wr->stack_max = strtoul(d, NULL, 10);
			if (wr->stack_max > 4096)
				goto bad;
			seen = true;
		} else if (!strcmp(line, "why-tree 0")) {
			wr->tree = false;
		} else if (strcmp(line, "why-tree 1")) {
			continue;	/* a line of a later version */
		}
	}
	if (!seen) {
		why_rec_free(wr);
		return -ENOENT;
	}
	if (wr->nr_hooked)
		qsort(wr->hooked, wr->nr_hooked, sizeof(*wr->hooked), cmp_ull);
	if (wr->nr_entry)
		qsort(wr->entry, wr->nr_entry, sizeof(*wr->entry), cmp_ull);
	return 0;
bad:
	why_rec_free(wr);
	return -EINVAL;
}

/* Free what why_rec_parse() filled. */
void why_rec_free(struct why_rec *wr)
{
	free(wr->hooked);
	free(wr->entry);
	wr->hooked = wr->entry = NULL;
	wr->nr_hooked = wr->nr_entry = 0;
}

/* Whether @addr is one of the run's entry functions. */
bool why_rec_is_entry(const struct why_rec *wr, unsigned long long addr)
{
	return wr->nr_entry && bsearch(&addr, wr->entry, wr->nr_entry,
				       sizeof(addr), cmp_ull);
}

struct replay {
	struct why *why;
	const struct why_rec *wr;
	unsigned long long nr;
};

static bool replay_record(const struct rec *r, void *arg)
{
	struct replay *rp = arg;

	rp->nr++;
	why_add(rp->why, r, why_rec_is_entry(rp->wr, r->hdr.func_addr));
	return true;
}

/**
 * why_replay - why's answer from a recording of a why run (why -i)
 * @fd: recording_open()'s descriptor, at the first record
 * @o: the recording and how to print
 *
 * Return: 0, or -exit code said on stderr.
 */
int why_replay(int fd, const struct why_replay_opts *o)
{
	struct stream_opts so = { .path = o->path, .handle = replay_record };
	struct ksyms ks = { 0 };
	struct replay rp = { 0 };
	struct why_rec wr;
	int ret;

	ret = why_rec_parse(o->header, &wr);
	if (ret) {
		pr_err("%s: %s", o->path, ret == -ENOENT ?
		       "not a recording of why (why -o writes one; record -o's replay with stream or report -i)" :
		       "a bad why-* header line");
		return -EXIT_CORRUPT;
	}
	stdout_buffered();
	ksyms_load(&ks, o->kallsyms);
	ksyms_load_lines(&ks, o->kallsyms, o->vmlinux);
	rp.why = why_new(&ks, o->json);
	rp.wr = &wr;
	if (!wr.tree)
		why_no_tree(rp.why);
	why_hooked(rp.why, wr.hooked, wr.nr_hooked, wr.stack_max);
	so.ks = &ks;
	so.arg = &rp;
	ret = stream_records(fd, &so);
	if (why_report(rp.why, stdout) == 0)
		pr_err("why: no failing system call in %s (%llu records)",
		       o->path, rp.nr);
	why_free(rp.why);
	ksyms_free(&ks);
	why_rec_free(&wr);
	return ret;
}
