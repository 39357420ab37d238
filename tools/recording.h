/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LBR_SNAP_RECORDING_H
#define LBR_SNAP_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "record.h"

/*
 * A recording (lbr-snap record -o FILE): the records this tool reads, as
 * the device gave them, after what symbolizes them on another machine.
 * Its text header:
 *
 *   lbr-snap recording 1
 *   release RELEASE                  uname -r of the recording machine
 *   build-id HEX|-                   the kernel's (/sys/kernel/notes)
 *   module NAME ADDR BUILD-ID|-      per loaded module (/proc/modules)
 *   kallsyms BYTES                   then BYTES of kallsyms text
 *   records                          then the records, to the end
 *
 * A reader skips header lines it does not know (why -o adds its own,
 * why_rec.c), and a recording made of one (record -i) keeps them.
 */
#define RECORDING_MAGIC		"lbr-snap recording 1\n"

struct recording_opts {
	const char *out;		/* -o */
	const char *device;
	const char *kallsyms;		/* what to embed */
	unsigned long long max;		/* -n, 0: until interrupted */
	bool live;			/* leave out lbr-snap's own records */
	/*
	 * The header lines to write after the first one, up to kallsyms
	 * (release, build-id, modules), or NULL for this machine's: a
	 * recording made from one (-i) is stamped with where it was made.
	 */
	const char *header;
};

int recording_write(int fd, const struct recording_opts *o);
/* A recording being written (recording.c); record -o's and why -o's. */
struct recording;

struct recording *recording_create(const char *path);
int recording_header(struct recording *w, const char *kallsyms,
		     const char *header, const char *extra);
int recording_put(struct recording *w, const struct rec *r);
int recording_close(struct recording *w, bool keep);
int recording_open(const char *path, const char *vmlinux, bool verbose,
		   char *kallsyms, unsigned long len, char **header);
int elf_build_id(const char *path, char *hex, unsigned long len);
void notes_build_id(const char *path, char *hex, size_t len);

#endif /* LBR_SNAP_RECORDING_H */
