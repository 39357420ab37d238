/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_WHY_REC_H
#define LBR_SNAP_WHY_REC_H

#include <stdbool.h>
#include <stddef.h>

/* What a why run knew besides its records (why_rec.c). */
struct why_rec {
	unsigned long long *hooked;	/* sorted */
	size_t nr_hooked;
	unsigned long long *entry;	/* sorted */
	size_t nr_entry;
	unsigned int stack_max;
	bool tree;
};

struct why_replay_opts {
	const char *path;		/* -i, for messages */
	const char *kallsyms;		/* the recording's */
	const char *vmlinux;		/* -k, or NULL */
	const char *header;		/* recording_open()'s */
	bool json;
};

char *why_rec_lines(const struct why_rec *wr);
int why_rec_parse(const char *header, struct why_rec *wr);
void why_rec_free(struct why_rec *wr);
bool why_rec_is_entry(const struct why_rec *wr, unsigned long long addr);
int why_replay(int fd, const struct why_replay_opts *o);

#endif /* LBR_SNAP_WHY_REC_H */
