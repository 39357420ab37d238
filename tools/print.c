// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: print one record as text or as a JSON line.
 */
#include <string.h>

#include "json.h"
#include "path.h"
#include "srcline.h"
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

/* "sym+0xoff", then " (file:line)" when the debug info knows it. */
static void put_addr(FILE *f, const struct ksyms *ks, unsigned long long addr,
		     struct srcloc *loc)
{
	bool found;
	size_t len;
	const char *sym = ksyms_sym(ks, addr, &len, &found);

	fwrite(sym, 1, len, f);
	if (srclines_lookup(ks->lines, ks, addr, loc))
		fprintf(f, " (%s:%d)", loc->file, loc->line);
}

static void put_inlines(FILE *f, const char *side, const struct srcloc *loc)
{
	const struct src_inline *in;
	unsigned int i;

	for (i = 0; i < loc->nr_inline; i++) {
		in = &loc->inl[i];
		fprintf(f, "        %s: inlined %s() called at %s:%d\n", side,
			in->func ? in->func : "?",
			in->call_file ? in->call_file : "?", in->call_line);
	}
}

static void print_branch(FILE *f, const struct rec *r, unsigned int i,
			 const struct ksyms *ks)
{
	struct srcloc from, to;
	struct lbr_snap_branch b;

	rec_branch(r, i, &b);
	fprintf(f, "  [#%u] ", i);
	put_addr(f, ks, b.from, &from);
	fputs(" -> ", f);
	put_addr(f, ks, b.to, &to);
	fprintf(f, "%s\n", b.flags & LBR_SNAP_BR_MISPRED ? " (mispredicted)" : "");
	put_inlines(f, "from", &from);
	put_inlines(f, "to", &to);
}

static const char *entries(unsigned int n)
{
	return n == 1 ? "entry" : "entries";
}

/* The note on the probe-path entries: shown with --full, else hidden. */
static void print_probe_note(FILE *f, const struct lbr_snap_record *h,
			     unsigned int hidden)
{
	if (hidden)
		fprintf(f, "  ... %u probe-path %s hidden (--full shows them)\n",
			hidden, entries(hidden));
	else if (h->probe_entries)
		fprintf(f, "  (%u newest %s made by the probe path)\n",
			h->probe_entries, entries(h->probe_entries));
}

static void print_cut_note(FILE *f, const struct lbr_snap_record *h,
			   const struct ksyms *ks, unsigned int cut)
{
	char func[KSYM_BUF_LEN];

	ksyms_func(ks, h->func_addr, func, sizeof(func));
	fprintf(f, "  ... %u %s before %s() cut (--only-target)\n", cut,
		entries(cut), func);
}

/*
 * TIME cpuN COMM[PID] FUNC() = RET, then the branches oldest first (minus
 * the probe path unless --full, minus those before the target function
 * with --only-target), then notes on what was left out and missing LBR.
 */
void print_rec_text(FILE *f, const struct rec *r, const struct ksyms *ks,
		    const struct print_opts *po)
{
	const struct lbr_snap_record *h = &r->hdr;
	unsigned int i, first = 0, last = h->nr_entries;
	struct rec_span sp;

	print_header(f, h, ks);
	rec_span(r, ks, &sp);
	if (po->only_target)
		first = sp.target;
	if (!po->full)
		last = sp.probe;
	if (first)
		print_cut_note(f, h, ks, first);
	for (i = first; i < last; i++)
		print_branch(f, r, i, ks);
	print_probe_note(f, h, h->nr_entries - last);
	if (h->flags & LBR_SNAP_REC_NO_LBR)
		fprintf(f, "  (no LBR on this machine: backend %s)\n",
			backend_name(h->backend));
	if (h->flags & LBR_SNAP_REC_WAS_OFF)
		fprintf(f, "  (LBR was already off when this return froze it: the branches may be older)\n");
}

/* "key":"sym+0xoff", or "key":null for an address without a symbol. */
static void json_sym(FILE *f, const char *key, const struct ksyms *ks,
		     unsigned long long addr, bool func)
{
	char buf[KSYM_BUF_LEN];
	const char *sym = buf;
	size_t len = sizeof(buf);
	bool found;

	if (func)
		found = ksyms_func(ks, addr, buf, sizeof(buf));
	else
		sym = ksyms_sym(ks, addr, &len, &found);
	fprintf(f, "\"%s\":", key);
	if (found)
		json_str(f, sym, len);
	else
		fputs("null", f);
}

static void json_opt_str(FILE *f, const char *s)
{
	if (s)
		json_str(f, s, strlen(s));
	else
		fputs("null", f);
}

/* ,"side_file":...,"side_line":...,"side_inline":[...] */
static void json_srcloc(FILE *f, const char *side, const struct ksyms *ks,
			unsigned long long addr)
{
	const struct src_inline *in;
	struct srcloc loc;
	unsigned int i;

	srclines_lookup(ks->lines, ks, addr, &loc);
	fprintf(f, ",\"%s_file\":", side);
	json_opt_str(f, loc.file);
	if (loc.file)
		fprintf(f, ",\"%s_line\":%d", side, loc.line);
	else
		fprintf(f, ",\"%s_line\":null", side);
	fprintf(f, ",\"%s_inline\":[", side);
	for (i = 0; i < loc.nr_inline; i++) {
		in = &loc.inl[i];
		fputs(i ? ",{\"func\":" : "{\"func\":", f);
		json_opt_str(f, in->func);
		fputs(",\"call_file\":", f);
		json_opt_str(f, in->call_file);
		fprintf(f, ",\"call_line\":%d}", in->call_line);
	}
	fputc(']', f);
}

static void json_branch(FILE *f, const struct rec *r, unsigned int i,
			const struct ksyms *ks, const struct rec_span *sp)
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
	fprintf(f, ",\"mispred\":%s,\"flags\":%u,\"cycles\":%u,\"type\":%u",
		b.flags & LBR_SNAP_BR_MISPRED ? "true" : "false", b.flags,
		b.cycles, b.type);
	fprintf(f, ",\"probe\":%s,\"before_target\":%s",
		i >= sp->probe ? "true" : "false",
		i < sp->target ? "true" : "false");
	json_srcloc(f, "from", ks, b.from);
	json_srcloc(f, "to", ks, b.to);
	fputc('}', f);
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
	struct rec_span sp;
	unsigned int i;

	rec_span(r, ks, &sp);
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
	fprintf(f, ",\"backend\":\"%s\",\"hook\":\"%s\",\"target_id\":%u",
		backend_name(h->backend), hook_name(h->hook), h->target_id);
	fputs(",\"caller\":", f);
	json_hex(f, h->caller);
	fputc(',', f);
	json_sym(f, "caller_sym", ks, h->caller, false);
	fputs(",\"branches\":[", f);
	for (i = 0; i < h->nr_entries; i++)
		json_branch(f, r, i, ks, &sp);
	fputs("]}\n", f);
}
