// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: print one record as text or as a JSON line.
 */
#include <string.h>

#include "json.h"
#include "print.h"
#include "util.h"

#define NSEC_PER_SEC	1000000000ull
#define NSEC_PER_USEC	1000ull

/*
 * Print the character at @p, @n bytes left, of a comm, which may hold any
 * bytes: control characters and bytes that are not UTF-8 become \xXX, to
 * keep them off the terminal.  Returns the character's length.
 */
static size_t put_comm_char(FILE *f, const unsigned char *p, size_t n)
{
	size_t len = utf8_seq_len(p, n);

	if (len)
		fwrite(p, 1, len, f);
	else if (*p >= 0x20 && *p < 0x7f)
		fputc(*p, f);
	else
		fprintf(f, "\\x%02x", *p);
	return len ? len : 1;
}

static void put_comm(FILE *f, const char *comm)
{
	const unsigned char *p = (const unsigned char *)comm;
	size_t i = 0, n = strnlen(comm, LBR_SNAP_COMM_LEN);

	while (i < n)
		i += put_comm_char(f, p + i, n - i);
}

static void print_header(FILE *f, const struct lbr_snap_record *h,
			 const struct ksyms *ks)
{
	char func[KSYM_BUF_LEN], ret[64];

	ksyms_func(ks, h->func_addr, func, sizeof(func));
	rec_format_ret(h, ret, sizeof(ret));
	fprintf(f, "%llu.%06llu cpu%u ", h->ts_ns / NSEC_PER_SEC,
		h->ts_ns % NSEC_PER_SEC / NSEC_PER_USEC, h->cpu);
	put_comm(f, h->comm);
	fprintf(f, "[%u] %s() = %s\n", h->tgid, func, ret);
}

/*
 * TIME cpuN COMM[PID] FUNC() = RET, then the branches oldest first, then
 * notes on probe-path entries and missing LBR.
 */
void print_rec_text(FILE *f, const struct rec *r, const struct ksyms *ks)
{
	const struct lbr_snap_record *h = &r->hdr;
	char from[KSYM_BUF_LEN], to[KSYM_BUF_LEN];
	struct lbr_snap_branch b;
	unsigned int i;

	print_header(f, h, ks);
	for (i = 0; i < h->nr_entries; i++) {
		rec_branch(r, i, &b);
		ksyms_format(ks, b.from, from, sizeof(from));
		ksyms_format(ks, b.to, to, sizeof(to));
		fprintf(f, "  [#%u] %s -> %s%s\n", i, from, to,
			b.flags & LBR_SNAP_BR_MISPRED ? " (mispredicted)" : "");
	}
	if (h->probe_entries)
		fprintf(f, "  (%u newest %s made by the probe path)\n",
			h->probe_entries,
			h->probe_entries == 1 ? "entry" : "entries");
	if (h->flags & LBR_SNAP_REC_NO_LBR)
		fprintf(f, "  (no LBR on this machine: backend %s)\n",
			backend_name(h->backend));
}

/* "key":"sym+0xoff", or "key":null for an address without a symbol. */
static void json_sym(FILE *f, const char *key, const struct ksyms *ks,
		     unsigned long long addr, bool func)
{
	char buf[KSYM_BUF_LEN];
	bool found;

	if (func)
		found = ksyms_func(ks, addr, buf, sizeof(buf));
	else
		found = ksyms_format(ks, addr, buf, sizeof(buf));
	fprintf(f, "\"%s\":", key);
	if (found)
		json_str(f, buf, sizeof(buf));
	else
		fputs("null", f);
}

static void json_branch(FILE *f, const struct rec *r, unsigned int i,
			const struct ksyms *ks)
{
	struct lbr_snap_branch b;

	rec_branch(r, i, &b);
	fputs(i ? ",{\"from\":" : "{\"from\":", f);
	json_hex(f, b.from);
	fputs(",\"to\":", f);
	json_hex(f, b.to);
	fputc(',', f);
	json_sym(f, "from_sym", ks, b.from, false);
	fputc(',', f);
	json_sym(f, "to_sym", ks, b.to, false);
	fprintf(f, ",\"mispred\":%s,\"flags\":%u,\"cycles\":%u,\"type\":%u}",
		b.flags & LBR_SNAP_BR_MISPRED ? "true" : "false", b.flags,
		b.cycles, b.type);
}

static void json_errno(FILE *f, const struct lbr_snap_record *h)
{
	const char *err = rec_errno(h);

	fputs(",\"errno\":", f);
	if (err)
		json_str(f, err, strlen(err));
	else
		fputs("null", f);
}

/* One JSON object per line; see --help for the keys. */
void print_rec_json(FILE *f, const struct rec *r, const struct ksyms *ks)
{
	const struct lbr_snap_record *h = &r->hdr;
	unsigned int i;

	fprintf(f, "{\"ts\":%llu,\"cpu\":%u,\"pid\":%u,\"tid\":%u,\"comm\":",
		h->ts_ns, h->cpu, h->tgid, h->pid);
	json_str(f, h->comm, LBR_SNAP_COMM_LEN);
	fputc(',', f);
	json_sym(f, "func", ks, h->func_addr, true);
	fputs(",\"func_addr\":", f);
	json_hex(f, h->func_addr);
	fprintf(f, ",\"retval\":%lld", h->retval);
	json_errno(f, h);
	fprintf(f, ",\"ret_type\":\"%s\",\"probe_entries\":%u,\"flags\":%u",
		ret_type_name(h->ret_type), h->probe_entries, h->flags);
	fprintf(f, ",\"backend\":\"%s\",\"target_id\":%u,\"caller\":",
		backend_name(h->backend), h->target_id);
	json_hex(f, h->caller);
	fputc(',', f);
	json_sym(f, "caller_sym", ks, h->caller, false);
	fputs(",\"branches\":[", f);
	for (i = 0; i < h->nr_entries; i++)
		json_branch(f, r, i, ks);
	fputs("]}\n", f);
}
