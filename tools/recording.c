// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap record -o FILE, and -i FILE: recordings that replay on another
 * machine.  The records hold raw kernel addresses; symbolizing them needs
 * the recording machine's kallsyms, so the recording carries it (and the
 * kernel's and modules' build IDs, to tell a mismatched vmlinux), and a
 * replay reads symbols from it, never from the machine it runs on.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "recording.h"
#include "srcline.h"
#include "stream.h"
#include "util.h"

/* The whole of @path, NUL-terminated, in *@buf; its length or -errno. */
static long slurp(const char *path, char **buf)
{
	size_t cap = 1 << 20, len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	*buf = NULL;
	if (fd < 0)
		return -errno;
	*buf = xrealloc(NULL, cap);
	while ((n = read(fd, *buf + len, cap - len - 1)) > 0) {
		len += n;
		if (cap - len < 2)
			*buf = xrealloc(*buf, cap *= 2);
	}
	n = n < 0 ? -errno : (long)len;
	close(fd);
	(*buf)[len] = '\0';
	return n;
}

/* The GNU build ID in the ELF notes at @p (@len bytes), as hex; or false. */
static bool note_build_id(const unsigned char *p, size_t len, char *hex,
			  size_t hexlen)
{
	size_t off = 0, i;

	while (off + sizeof(Elf64_Nhdr) <= len) {
		Elf64_Nhdr nh;
		size_t name, desc;

		memcpy(&nh, p + off, sizeof(nh));
		name = off + sizeof(nh);
		desc = name + ((nh.n_namesz + 3) & ~3u);
		if (desc > len || nh.n_descsz > len - desc)
			return false;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(p + name, "GNU", 4) && nh.n_descsz &&
		    2 * nh.n_descsz < hexlen) {
			for (i = 0; i < nh.n_descsz; i++)
				sprintf(hex + 2 * i, "%02x", p[desc + i]);
			return true;
		}
		off = desc + ((nh.n_descsz + 3) & ~3u);
	}
	return false;
}

/* The build ID in a file of bare ELF notes (/sys/kernel/notes), or "-". */
void notes_build_id(const char *path, char *hex, size_t len)
{
	char *buf;
	long n = slurp(path, &buf);

	if (n <= 0 || !note_build_id((unsigned char *)buf, n, hex, len))
		snprintf(hex, len, "-");
	free(buf);
}

/**
 * elf_build_id - the GNU build ID of the ELF file @path, as hex
 * Return: 0, or -1 if it has none or is no 64-bit ELF file.
 */
int elf_build_id(const char *path, char *hex, unsigned long len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	unsigned int i;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(sh))
		goto out;
	for (i = 0; i < eh.e_shnum && ret; i++) {
		unsigned char *p;

		if (pread(fd, &sh, sizeof(sh), eh.e_shoff + i * sizeof(sh)) !=
		    sizeof(sh))
			break;
		if (sh.sh_type != SHT_NOTE || sh.sh_size > 1 << 20)
			continue;
		p = xrealloc(NULL, sh.sh_size);
		if (pread(fd, p, sh.sh_size, sh.sh_offset) == (ssize_t)sh.sh_size &&
		    note_build_id(p, sh.sh_size, hex, len))
			ret = 0;
		free(p);
	}
out:
	close(fd);
	return ret;
}

/* One "module NAME ADDR BUILD-ID" line per line of /proc/modules. */
static void write_modules(FILE *f)
{
	char *buf, *line, *save = NULL;
	char name[64], addr[32], path[128], id[129];

	if (slurp("/proc/modules", &buf) < 0) {
		free(buf);
		return;
	}
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		/* name size refcount deps state address [taints] */
		if (sscanf(line, "%63s %*s %*s %*s %*s %31s", name, addr) != 2)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/module/%s/notes/.note.gnu.build-id", name);
		notes_build_id(path, id, sizeof(id));
		fprintf(f, "module %s %s %s\n", name, addr, id);
	}
	free(buf);
}

/* Does kallsyms text @ks give real addresses (not kptr_restrict's 0s)? */
static bool has_addresses(const char *ks)
{
	const char *p;

	for (p = ks; *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : "")
		if (strtoull(p, NULL, 16))
			return true;
	return false;
}

/* Its lines between the first and kallsyms, at most. */
#define RECORDING_HEADER_MAX	(64u << 20)

struct recording {
	FILE *f;
	const char *path;
	bool created;		/* this run made the file */
	bool started;		/* its header is written: what it held is gone */
	off_t good;		/* the end of its last whole record */
};

/**
 * recording_create - open @path to write a recording into
 * @path: only ever a regular file of the user's, never through a symlink
 *
 * A file that exists is left as it is until recording_header() writes.
 * Says why on stderr when it cannot.  Return: the writer, or NULL.
 */
struct recording *recording_create(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
		      O_CLOEXEC, 0600);
	struct recording *w = NULL;
	bool created = fd >= 0;
	struct stat st;
	FILE *f = NULL;

	/* Not a FIFO without a reader: O_NONBLOCK, and only a file is taken. */
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
			st.st_uid != geteuid()))
		errno = EPERM;
	else if (fd >= 0)
		f = fdopen(fd, "w");
	if (!f) {
		pr_err("%s: %s%s", path, strerror(errno), errno == EPERM ?
		       " (lbr-snap writes only a regular file of its own)" : "");
		if (fd >= 0)
			close(fd);
		if (created)
			unlink(path);
		return NULL;
	}
	w = xrealloc(NULL, sizeof(*w));
	*w = (struct recording){ .f = f, .path = path, .created = created };
	return w;
}

/**
 * recording_header - write a recording's header, up to its first record
 * @w: from recording_create()
 * @kallsyms: the symbols to embed
 * @header: the lines after the first, up to kallsyms (release, build-id,
 *	modules), or NULL for this machine's: a recording made of one (-i)
 *	is stamped with where it was made
 * @extra: more lines before kallsyms (newline-terminated), or NULL
 *
 * The file becomes mode 0600 (it holds the kernel's addresses) and what
 * it held goes, once the symbols are read.  Return: 0 or -exit code,
 * said on stderr.
 */
int recording_header(struct recording *w, const char *kallsyms,
		     const char *header, const char *extra)
{
	FILE *f = w->f;
	struct utsname u;
	char id[129], *ks;
	long n;

	n = slurp(kallsyms, &ks);
	if (n < 0) {
		pr_err("%s: %s", kallsyms, strerror(-n));
		free(ks);
		return -EXIT_ERROR;
	}
	if (!has_addresses(ks)) {
		pr_err("%s: no addresses (kernel.kptr_restrict): run as root, or set kernel.kptr_restrict=0, to record",
		       kallsyms);
		free(ks);
		return -EXIT_PERM;
	}
	if (fchmod(fileno(f), 0600) || ftruncate(fileno(f), 0)) {
		pr_err("%s: %s", w->path, strerror(errno));
		free(ks);
		return -EXIT_ERROR;
	}
	w->started = true;
	fputs(RECORDING_MAGIC, f);
	if (header) {
		fputs(header, f);
	} else {
		uname(&u);
		notes_build_id("/sys/kernel/notes", id, sizeof(id));
		fprintf(f, "release %s\nbuild-id %s\n", u.release, id);
		write_modules(f);
	}
	if (extra)
		fputs(extra, f);
	fprintf(f, "kallsyms %ld\n", n);
	fwrite(ks, 1, n, f);
	fputs("records\n", f);
	free(ks);
	if (fflush(f) || ferror(f)) {
		pr_err("%s: %s", w->path, strerror(errno));
		return -EXIT_ERROR;
	}
	w->good = ftello(f);
	if (w->good < 0) {
		pr_err("%s: %s", w->path, strerror(errno));
		return -EXIT_ERROR;
	}
	return 0;
}

/*
 * One record as the device gave it, written at once: 0, or -errno with
 * the file cut back to its last whole record (a recording still).
 */
int recording_put(struct recording *w, const struct rec *r)
{
	const char *p = (const char *)r->raw;
	size_t left = r->hdr.size;
	ssize_t n;
	int err;

	while (left) {
		n = write(fileno(w->f), p, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : EIO;
			if (ftruncate(fileno(w->f), w->good))
				err = errno;
			return -err;
		}
		p += n;
		left -= n;
	}
	w->good += r->hdr.size;
	return 0;
}

/**
 * recording_close - finish a recording
 * @w: from recording_create()
 * @keep: false when the run failed before any record: the file is
 *	removed if this run made it or began to write it; one it found and
 *	did not touch is left as it was
 *
 * Return: 0, or -exit code said on stderr.
 */
int recording_close(struct recording *w, bool keep)
{
	int ret = 0;

	if (fclose(w->f) && keep) {
		pr_err("%s: %s", w->path, strerror(errno));
		ret = -EXIT_ERROR;
	}
	if (!keep && (w->created || w->started))
		unlink(w->path);
	free(w);
	return ret;
}

/* The output failing is the end: the device's reads are destructive. */
static const char *write_path;

static bool write_raw(const struct rec *r, void *arg)
{
	FILE *f = arg;

	errno = 0;
	if (fwrite(r->raw, r->hdr.size, 1, f) != 1 || ferror(f)) {
		pr_err("%s: %s", write_path, strerror(errno ? errno : EIO));
		exit(EXIT_ERROR);
	}
	return true;
}

/**
 * recording_write - record what @fd gives into @o->out
 * @fd: the device (or a file of records)
 * @o: what to record, and where
 *
 * Return: 0 or -exit code.
 */
int recording_write(int fd, const struct recording_opts *o)
{
	struct stream_opts so = {
		.path = o->device, .max = o->max, .handle = write_raw,
		.self = o->live ? getpid() : 0,
	};
	struct recording *w;
	int ret, c;

	w = recording_create(o->out);
	if (!w)
		return -EXIT_ERROR;
	ret = recording_header(w, o->kallsyms, o->header, NULL);
	if (ret) {
		recording_close(w, false);
		return ret;
	}
	write_path = o->out;
	so.arg = w->f;
	ret = stream_records(fd, &so);
	c = recording_close(w, true);
	return ret ? ret : c;
}

static int bad_recording(const char *path, const char *why)
{
	pr_err("%s: not an lbr-snap recording: %s", path, why);
	return -EXIT_CORRUPT;
}

/* A header value shown to the user: printable ASCII, no blanks. */
static bool printable(const char *s)
{
	for (; *s; s++)
		if (*s <= ' ' || *s > '~')
			return false;
	return true;
}

/* One header line into @line (NUL-terminated, no newline); false at EOF. */
static bool header_line(FILE *f, char *line, size_t len)
{
	size_t n;

	if (!fgets(line, len, f))
		return false;
	n = strlen(line);
	if (!n || line[n - 1] != '\n')
		return false;		/* too long, or cut */
	line[n - 1] = '\0';
	return true;
}

/**
 * recording_open - open a recording to replay it
 * @path: the recording (a regular file or a pipe)
 * @vmlinux: -k, checked against the recorded build ID; or NULL
 * @verbose: say where it was recorded
 * @kallsyms: set to a path holding the recorded kallsyms
 * @len: its size
 * @header: if not NULL, set to the header's lines between the first and
 *	the kallsyms line, newlines included (to free()), for a recording
 *	made of this one
 *
 * Return: a descriptor at the first record, or -exit code.
 */
int recording_open(const char *path, const char *vmlinux, bool verbose,
		   char *kallsyms, unsigned long len, char **header)
{
	char line[512], release[256] = "?", id[129] = "-", vid[129], *end;
	unsigned long long size = 0, off;
	size_t n, hlen = 0, hcap = 0;
	bool have_size = false;
	char *hdr = NULL;
	struct stat st;
	int fd, ks;
	FILE *f;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		pr_err("%s: %s", path, strerror(errno));
		return -EXIT_ERROR;
	}
	/* Not the device: its reads would consume records. */
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
		close(fd);
		pr_err("%s: not a file or a pipe: -i replays a recording (record -o)",
		       path);
		return -EXIT_USAGE;
	}
	/*
	 * Unbuffered: what stdio reads is what the descriptor has consumed,
	 * so after the header it stands at the first record, on a pipe too.
	 */
	f = fdopen(fd, "r");
	if (!f) {
		pr_err("%s: %s", path, strerror(errno));
		close(fd);
		return -EXIT_ERROR;
	}
	setvbuf(f, NULL, _IONBF, 0);
	hdr = xrealloc(NULL, hcap = 256);
	*hdr = '\0';
	if (!header_line(f, line, sizeof(line)) ||
	    strcmp(line, "lbr-snap recording 1")) {
		free(hdr);
		fclose(f);
		return bad_recording(path, "no 'lbr-snap recording 1' line");
	}
	/* Lines it does not know are skipped: fields may be added. */
	while (!have_size && header_line(f, line, sizeof(line))) {
		if (!strncmp(line, "release ", 8)) {
			snprintf(release, sizeof(release), "%.255s", line + 8);
		} else if (!strncmp(line, "build-id ", 9)) {
			snprintf(id, sizeof(id), "%.128s", line + 9);
		} else if (!strncmp(line, "kallsyms ", 9)) {
			errno = 0;
			size = strtoull(line + 9, &end, 10);
			if (errno || *end || end == line + 9 ||
			    (S_ISREG(st.st_mode) && size > (unsigned long long)st.st_size)) {
				free(hdr);
				fclose(f);
				return bad_recording(path, "a bad kallsyms size");
			}
			have_size = true;
		}
		if (!have_size) {
			n = strlen(line);
			/* A million why-* lines at most come to 32 MiB. */
			if (hlen + n > RECORDING_HEADER_MAX) {
				free(hdr);
				fclose(f);
				return bad_recording(path, "a header over 64 MiB");
			}
			if (hlen + n + 2 > hcap) {
				hcap = 2 * hcap + n + 256;
				hdr = xrealloc(hdr, hcap);
			}
			memcpy(hdr + hlen, line, n);
			hdr[hlen + n] = '\n';
			hlen += n + 1;
			hdr[hlen] = '\0';
		}
	}
	if (!have_size) {
		bool io = ferror(f);

		free(hdr);
		if (io)
			pr_err("%s: %s", path, strerror(errno));
		fclose(f);
		return io ? -EXIT_ERROR : bad_recording(path, "no kallsyms section");
	}
	if (!printable(release) || strlen(id) % 2 ||
	    strspn(id, "0123456789abcdef") != strlen(id) || !*id)
		snprintf(id, sizeof(id), "-");
	if (!printable(release))
		snprintf(release, sizeof(release), "?");
	/*
	 * The symbols, where ksyms_load() opens them by name: a memfd that
	 * stays open while lbr-snap runs (so /proc must be mounted).
	 */
	ks = memfd_create("lbr-snap-kallsyms", MFD_CLOEXEC);
	if (ks < 0) {
		pr_err("memfd_create: %s", strerror(errno));
		free(hdr);
		fclose(f);
		return -EXIT_ERROR;
	}
	for (off = 0; off < size; off += n) {
		n = fread(line, 1, size - off < sizeof(line) ?
			  size - off : sizeof(line), f);
		if (!n || write(ks, line, n) != (ssize_t)n)
			break;
	}
	if (off < size || !header_line(f, line, sizeof(line)) ||
	    strcmp(line, "records")) {
		bool io = ferror(f);

		if (io)
			pr_err("%s: %s", path, strerror(errno));
		free(hdr);
		close(ks);
		fclose(f);
		return io ? -EXIT_ERROR :
		       bad_recording(path, "no records line after kallsyms");
	}
	snprintf(kallsyms, len, "/proc/self/fd/%d", ks);
	if (verbose)
		pr_err("%s: recorded on %s, kernel build ID %s", path, release,
		       id);
	if (vmlinux && strcmp(id, "-")) {
		if (elf_build_id(vmlinux, vid, sizeof(vid)))
			pr_err("%s: its build ID cannot be read (compressed, or no ELF file?): not checked against the recorded kernel's (%s)",
			       vmlinux, id);
		else if (strcmp(id, vid))
			pr_err("%s: build ID %s, not the recorded kernel's (%s): its source lines may be wrong",
			       vmlinux, vid, id);
	}
	srclines_replay = true;
	/* The records start here: a descriptor of its own. */
	fd = dup(fd);
	fclose(f);
	if (fd < 0) {
		pr_err("%s: %s", path, strerror(errno));
		free(hdr);
		close(ks);
		return -EXIT_ERROR;
	}
	if (header)
		*header = hdr;
	else
		free(hdr);
	return fd;
}
