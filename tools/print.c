// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: print one record as text or as a JSON line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "branch.h"
#include "json.h"
#include "path.h"
#include "srcline.h"
#include "print.h"
#include "util.h"

#define NSEC_PER_SEC	1000000000ull
#define NSEC_PER_USEC	1000ull

/*
 * Branch lists printed lately, whole: the text of a record's branches in
 * one format.  In a storm most records took the same path, and a hit is
 * one write of that text where a miss formats 32 branches and looks up
 * 64 symbols; a reader that keeps up with the kernel has to print at
 * the rate the kernel captures.  Keyed on the entries as read and on
 * everything else the text depends on (@x): beyond them it depends on
 * the symbols and source lines of their addresses, which do not change
 * while the tool runs (srclines_open() finds the debug files once, at
 * the start).  A list is kept the second time it is seen (a miss then
 * prints into memory first): where no two records took the same path,
 * a miss costs a compare and a copy of the key.
 */
#define LIST_MEMO_NR	8

struct list_key {
	const unsigned char *ent;	/* the record's entries, as read */
	size_t len;
	unsigned int x[5];
};

struct list_memo {
	unsigned char *ent;
	size_t len;
	unsigned int x[5];
	char *text;			/* NULL: seen once, not kept */
	size_t tlen;
};

struct list_memos {
	struct list_memo m[LIST_MEMO_NR];	/* kept */
	struct list_memo seen[LIST_MEMO_NR];	/* seen once */
	unsigned int next, next_seen;
};

static struct list_memos json_lists, text_lists, json_stacks, text_stacks;

static void list_key_init(struct list_key *k, const struct rec *r,
			  unsigned int x0, unsigned int x1, unsigned int x2)
{
	const struct lbr_snap_record *h = &r->hdr;

	k->ent = r->raw + h->hdr_size;
	k->len = (size_t)h->nr_entries * h->entry_size;
	memset(k->x, 0, sizeof(k->x));
	k->x[0] = h->entry_size;
	k->x[1] = h->nr_entries;
	k->x[2] = x0;
	k->x[3] = x1;
	k->x[4] = x2;
}

/* A call stack's key: its frames as read. */
static void stack_key_init(struct list_key *k, const struct rec *r)
{
	k->ent = rec_stack_bytes(r);
	k->len = (size_t)r->hdr.nr_stack * 8;
	memset(k->x, 0, sizeof(k->x));
	k->x[0] = r->hdr.nr_stack;
}

static bool list_key_match(const struct list_memo *m,
			   const struct list_key *k)
{
	return m->ent && m->len == k->len &&
	       !memcmp(m->x, k->x, sizeof(m->x)) &&
	       !memcmp(m->ent, k->ent, k->len);
}

static void list_key_copy(struct list_memo *m, const struct list_key *k)
{
	m->ent = xrealloc(m->ent, k->len ? k->len : 1);
	memcpy(m->ent, k->ent, k->len);
	m->len = k->len;
	memcpy(m->x, k->x, sizeof(m->x));
}

/*
 * Whether @k's list is to be kept once printed: seen before.  If not, it
 * is remembered as seen, in place of the oldest.
 */
static bool list_memo_seen(struct list_memos *ms, const struct list_key *k)
{
	unsigned int i;

	for (i = 0; i < LIST_MEMO_NR; i++)
		if (list_key_match(&ms->seen[i], k))
			return true;
	list_key_copy(&ms->seen[ms->next_seen++ % LIST_MEMO_NR], k);
	return false;
}

/*
 * Write a kept list's text (some 10 KB for 32 JSON branches) to @f in
 * COPY_PIECE pieces, which fwrite() copies without rep movsb.  In the lab
 * guest, replaying a storm of 30,000 records as JSON took 1.6 to 2.0 s of
 * user time with whole copies, 0.9 to 1.2 s in pieces (0.6 to 1.0 s with
 * rep movsb turned off by GLIBC_TUNABLES).
 */
static void memo_write(FILE *f, const char *text, size_t len)
{
	while (len) {
		size_t n = len < COPY_PIECE ? len : COPY_PIECE;

		fwrite(text, 1, n, f);
		text += n;
		len -= n;
	}
}

/* Write the text memoised for @k to @f; false if there is none. */
static bool list_memo_put(FILE *f, struct list_memos *ms,
			  const struct list_key *k)
{
	unsigned int i;

	for (i = 0; i < LIST_MEMO_NR; i++) {
		const struct list_memo *m = &ms->m[i];

		if (m->text && list_key_match(m, k)) {
			memo_write(f, m->text, m->tlen);
			return true;
		}
	}
	return false;
}

/*
 * Keep @text, @tlen bytes that @k printed (open_memstream()'s buffer,
 * taken over), in place of the oldest, and write it to @f.
 */
static void list_memo_add(FILE *f, struct list_memos *ms,
			  const struct list_key *k, char *text, size_t tlen)
{
	struct list_memo *m = &ms->m[ms->next++ % LIST_MEMO_NR];

	memo_write(f, text, tlen);
	free(m->text);
	list_key_copy(m, k);
	m->text = text;
	m->tlen = tlen;
}

/* Print a record's branch list: @fn(@f, @arg), or from memory as above. */
static void list_print(FILE *f, struct list_memos *ms,
		       const struct list_key *k,
		       void (*fn)(FILE *f, const void *arg), const void *arg)
{
	char *text = NULL;
	size_t tlen = 0;
	FILE *m;

	if (list_memo_put(f, ms, k))
		return;
	if (!list_memo_seen(ms, k)) {
		fn(f, arg);
		return;
	}
	m = open_memstream(&text, &tlen);
	if (!m)
		oom();
	fn(m, arg);
	if (fclose(m))
		oom();
	list_memo_add(f, ms, k, text, tlen);
}

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

/* "U.UUU us", a duration in microseconds to the nanosecond. */
void put_duration(FILE *f, unsigned long long ns)
{
	char buf[32], *p = uint_buf(buf, ns / NSEC_PER_USEC);
	unsigned int frac = ns % NSEC_PER_USEC;

	*p++ = '.';
	*p++ = '0' + frac / 100;
	*p++ = '0' + frac / 10 % 10;
	*p++ = '0' + frac % 10;
	memcpy(p, " us", 3);
	fwrite(buf, 1, p + 3 - buf, f);
}

/*
 * "S.UUUUUU cpuN comm[tgid] func() = ret (D us)", the duration when the
 * record has it, without printf (a storm).
 */
static void print_header(FILE *f, const struct lbr_snap_record *h,
			 const struct ksyms *ks)
{
	char func[KSYM_BUF_LEN], ret[64], buf[2 * 24 + 8], *p = buf;
	unsigned long long us = h->ts_ns % NSEC_PER_SEC / NSEC_PER_USEC;
	unsigned long long dur;
	int i;

	ksyms_func(ks, h->func_addr, func, sizeof(func));
	rec_format_ret(h, ret, sizeof(ret));
	p = uint_buf(p, h->ts_ns / NSEC_PER_SEC);
	*p++ = '.';
	for (i = 5; i >= 0; i--, us /= 10)
		p[i] = '0' + us % 10;
	p += 6;
	memcpy(p, " cpu", 4);
	p += 4;
	p = uint_buf(p, h->cpu);
	*p++ = ' ';
	fwrite(buf, 1, p - buf, f);
	put_comm(f, h->comm);
	fputc('[', f);
	put_uint(f, h->tgid);
	fputs("] ", f);
	fputs(func, f);
	fputs("() = ", f);
	fputs(ret, f);
	if (rec_duration(h, &dur)) {
		fputs(" (", f);
		put_duration(f, dur);
		fputc(')', f);
	}
	fputc('\n', f);
}

/* @path less @dir and its '/', if it lies inside @dir; else NULL. */
static const char *strip_dir(const char *path, const char *dir)
{
	size_t n = dir ? strlen(dir) : 0;

	if (n && !strncmp(path, dir, n) && path[n] == '/')
		return path + n + 1;
	return NULL;
}

/*
 * A source path for text output: relative to the tree it was compiled
 * in (the compilation unit's directory, kept by srclines in @loc) when it
 * lies inside it; else relative to its module's source tree (an
 * out-of-tree module's, built in the kernel's tree), when inside that;
 * as the path as given otherwise.
 */
static const char *rel_path(const struct srcloc *loc, const char *path)
{
	const char *rel = strip_dir(path, loc->comp_dir);

	if (!rel)
		rel = strip_dir(path, loc->src_root);
	return rel ? rel : path;
}

static const char *src_path(const struct srcloc *loc)
{
	return rel_path(loc, loc->file);
}

const char *srcloc_path(const struct srcloc *loc)
{
	return src_path(loc);
}

/*
 * "sym+0xoff", then " (file:line)" of @line_addr when the debug info
 * knows it, padded with spaces to @width columns; returns the columns it
 * took.  NULL @f only measures.
 */
static int put_addr_line(FILE *f, const struct ksyms *ks,
			 unsigned long long addr, unsigned long long line_addr,
			 struct srcloc *loc, int width)
{
	bool found;
	size_t len;
	const char *sym = ksyms_sym(ks, addr, &len, &found);
	int n = len;

	if (f)
		fwrite(sym, 1, len, f);
	if (srclines_lookup(ks->lines, ks, line_addr, loc))
		n += f ? fprintf(f, " (%s:%d)", src_path(loc), loc->line) :
			 snprintf(NULL, 0, " (%s:%d)", src_path(loc),
				  loc->line);
	for (; f && n < width; n++)
		fputc(' ', f);
	return n;
}

/* put_addr_line() for other printers (report): no padding. */
void print_addr_line(FILE *f, const struct ksyms *ks, unsigned long long addr,
		     unsigned long long line_addr, struct srcloc *loc)
{
	put_addr_line(f, ks, addr, line_addr, loc, 0);
}

/* put_addr_line() of @addr's own line */
static int put_addr(FILE *f, const struct ksyms *ks, unsigned long long addr,
		    struct srcloc *loc, int width)
{
	return put_addr_line(f, ks, addr, addr, loc, width);
}

/* The functions inlined at @loc, a line each, after @indent spaces. */
void print_inlines(FILE *f, int indent, const char *side,
		   const struct srcloc *loc)
{
	const struct src_inline *in;
	unsigned int i;

	for (i = 0; i < loc->nr_inline; i++) {
		in = &loc->inl[i];
		fprintf(f, "%*s%s%sinlined %s() called at %s:%d\n", indent, "",
			side, *side ? ": " : "", in->func ? in->func : "?",
			in->call_file ? rel_path(loc, in->call_file) : "?",
			in->call_line);
	}
}

static void put_inlines(FILE *f, const char *side, const struct srcloc *loc)
{
	print_inlines(f, 8, side, loc);
}

static int digits(unsigned int v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* Append @n bytes of @s at @p; returns the new end. */
static char *cat(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

/* cat() of a string literal */
#define CAT(p, lit)	cat((p), (lit), sizeof(lit) - 1)

/* An entry that cannot be this kernel's (ksyms_foreign()), said so. */
#define FOREIGN_NOTE	" (not this kernel's text)"

static bool branch_foreign(const struct ksyms *ks,
			   const struct lbr_snap_branch *b)
{
	return ksyms_foreign(ks, b->from) || ksyms_foreign(ks, b->to);
}

/*
 * "[#N] from -> to": the index padded to @iw digits, the source to @fw
 * columns, so that the arrows of a record line up.
 */
static void print_branch(FILE *f, const struct rec *r, unsigned int i,
			 const struct ksyms *ks, int iw, int fw)
{
	char buf[2 * KSYM_BUF_LEN + 64], *p = buf;
	struct srcloc from, to;
	struct lbr_snap_branch b;
	const char *sym;
	bool found;
	size_t len;
	int n;

	rec_branch(r, i, &b);
	if (!ks->lines && fw < KSYM_BUF_LEN) {
		/* No debug info: the line put together, one write. */
		p = CAT(p, "  [#");
		p = uint_buf(p, i);
		*p++ = ']';
		*p++ = ' ';
		for (n = digits(i); n < iw && n < 8; n++)
			*p++ = ' ';
		sym = ksyms_sym(ks, b.from, &len, &found);
		p = cat(p, sym, len);
		for (n = len; n < fw; n++)
			*p++ = ' ';
		p = CAT(p, " -> ");
		sym = ksyms_sym(ks, b.to, &len, &found);
		p = cat(p, sym, len);
		if (b.flags & LBR_SNAP_BR_MISPRED)
			p = CAT(p, " (mispredicted)");
		if (branch_foreign(ks, &b))
			p = CAT(p, FOREIGN_NOTE);
		*p++ = '\n';
		fwrite(buf, 1, p - buf, f);
		return;
	}
	fputs("  [#", f);
	put_uint(f, i);
	fputs("] ", f);
	for (n = digits(i); n < iw; n++)
		fputc(' ', f);
	put_addr(f, ks, b.from, &from, fw);
	fputs(" -> ", f);
	put_addr(f, ks, b.to, &to, 0);
	if (b.flags & LBR_SNAP_BR_MISPRED)
		fputs(" (mispredicted)", f);
	if (branch_foreign(ks, &b))
		fputs(FOREIGN_NOTE, f);
	fputc('\n', f);
	put_inlines(f, "from", &from);
	put_inlines(f, "to", &to);
}

/* The widest source text of entries @first to @last. */
static int from_width(const struct rec *r, const struct ksyms *ks,
		      unsigned int first, unsigned int last)
{
	struct lbr_snap_branch b;
	struct srcloc loc;
	unsigned int i;
	int w = 0, n;

	for (i = first; i < last; i++) {
		rec_branch(r, i, &b);
		n = put_addr(NULL, ks, b.from, &loc, 0);
		if (n > w)
			w = n;
	}
	return w;
}

/*
 * The line under the header: where the function returned to, and how
 * the branches are numbered.
 */
static void print_caller(FILE *f, const struct lbr_snap_record *h,
			 const struct ksyms *ks)
{
	struct srcloc loc;

	fputs("  returned to ", f);
	put_addr(f, ks, h->caller, &loc, 0);
	if (h->nr_entries > 1) {
		fputs("; ", f);
		put_uint(f, h->nr_entries);
		fputs(" branches, #0 (oldest) to #", f);
		put_uint(f, h->nr_entries - 1);
		fputs(" (newest)\n", f);
	} else
		fputs(h->nr_entries ? "; 1 branch, #0\n" : "; no branches\n", f);
}

static const char *entries(unsigned int n)
{
	return n == 1 ? "entry" : "entries";
}

/* The note on the probe-path entries: shown with --full, else hidden. */
static void print_probe_note(FILE *f, const struct lbr_snap_record *h,
			     unsigned int hidden)
{
	if (hidden) {
		fputs("  ... ", f);
		put_uint(f, hidden);
		fputs(" probe-path ", f);
		fputs(entries(hidden), f);
		fputs(" hidden (--full shows them)\n", f);
	} else if (h->probe_entries)
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

/* A record's call stack, for list_print(). */
struct stack_arg {
	const struct rec *r;
	const struct ksyms *ks;
};

/* The call stack, a frame a line, from the target's caller outwards. */
static void print_text_stack(FILE *f, const void *arg)
{
	const struct stack_arg *ts = arg;
	const struct src_inline *in;
	struct srcloc loc;
	unsigned int i, j;

	fputs("  call stack (the caller first):\n", f);
	for (i = 0; i < ts->r->hdr.nr_stack; i++) {
		/*
		 * A return address, with the line of the call before it (the
		 * address less one, as the kernel's own stack dumps have it).
		 */
		fputs("    ", f);
		put_addr_line(f, ts->ks, rec_stack(ts->r, i),
			      rec_stack(ts->r, i) - 1, &loc, 0);
		fputc('\n', f);
		for (j = 0; j < loc.nr_inline; j++) {
			in = &loc.inl[j];
			fprintf(f, "      inlined %s() called at %s:%d\n",
				in->func ? in->func : "?",
				in->call_file ?
				rel_path(&loc, in->call_file) : "?",
				in->call_line);
		}
	}
}

/*
 * TIME cpuN COMM[PID] FUNC() = RET, the caller and the numbering, then
 * the branches oldest first, their arrows aligned (minus
 * the probe path unless --full, minus those before the target function
 * with --only-target), then notes on what was left out and missing LBR.
 */
/* A record's branches from @first to @last, a line each. */
struct text_list {
	const struct rec *r;
	const struct ksyms *ks;
	unsigned int first, last;
	int iw;
	bool unfold;			/* -v: interrupts, hooks entry by entry */
};

/* The function @addr is in, bare, or its hex. */
static const char *func_name(const struct ksyms *ks, unsigned long long addr,
			     char *buf, size_t len)
{
	unsigned long long off;
	const char *name = ksyms_name(ks, addr, &off);

	if (name)
		return name;
	snprintf(buf, len, "0x%016llx", addr);
	return buf;
}

/*
 * An interrupt's entries in one line: "[interrupt: 9 entries, #2 to #10:
 * asm_sysvec_apic_timer_interrupt … native_irq_return_iret, back to
 * getname_flags+0x10 (-v unfolds)]", from the function it entered to
 * the one its IRET left, and where it returned.  One whose entry came
 * before the first entry starts at that entry's source.
 */
static void print_fold(FILE *f, const struct text_list *tl,
		       const struct irq_fold *fo)
{
	char a[32], b[32];
	struct lbr_snap_branch in, out;
	unsigned int n = fo->last - fo->first + 1;
	const char *sym;
	bool found;
	size_t len;

	rec_from_to(tl->r, fo->first, &in);
	rec_from_to(tl->r, fo->last, &out);
	fprintf(f, "  [interrupt%s: %u entries, #%u to #%u: %s \u2026 %s, back to ",
		fo->headless ? ", its start not recorded" : "", n, fo->first,
		fo->last,
		fo->headless ? func_name(tl->ks, in.from, a, sizeof(a)) :
			       func_name(tl->ks, in.to, a, sizeof(a)),
		func_name(tl->ks, out.from, b, sizeof(b)));
	sym = ksyms_sym(tl->ks, out.to, &len, &found);
	fwrite(sym, 1, len, f);
	fputs(" (-v unfolds)]\n", f);
}

/*
 * A nested hooked call's trampoline entries in one line: "[lbr_snap's
 * hook: 5 entries, #3 to #7, walk_component+0x0 back to
 * walk_component+0x5 (-v unfolds)]".
 */
static void print_hook_fold(FILE *f, const struct text_list *tl,
			    const struct hook_fold *fo)
{
	struct lbr_snap_branch in, out;
	const char *sym;
	bool found;
	size_t len;

	rec_from_to(tl->r, fo->first, &in);
	rec_from_to(tl->r, fo->last, &out);
	fprintf(f, "  [lbr_snap's hook%s: %u entries, #%u to #%u, ",
		fo->headless ? ", its start not recorded" : "",
		fo->last - fo->first + 1, fo->first, fo->last);
	sym = ksyms_sym(tl->ks, in.from, &len, &found);
	fwrite(sym, 1, len, f);
	fputs(" back to ", f);
	sym = ksyms_sym(tl->ks, out.to, &len, &found);
	fwrite(sym, 1, len, f);
	fputs(" (-v unfolds)]\n", f);
}

/* The entry after a fold that starts at @i, or @i if none does. */
static unsigned int fold_at(unsigned int i, const struct irq_fold *irq,
			    unsigned int nr_irq, unsigned int *ki,
			    const struct hook_fold *hook, unsigned int nr_hook,
			    unsigned int *kh, int *kind)
{
	while (*ki < nr_irq && irq[*ki].first < i)
		(*ki)++;
	while (*kh < nr_hook && hook[*kh].first < i)
		(*kh)++;
	*kind = 0;
	if (*ki < nr_irq && irq[*ki].first == i) {
		*kind = 1;
		return irq[*ki].last + 1;
	}
	if (*kh < nr_hook && hook[*kh].first == i) {
		*kind = 2;
		return hook[*kh].last + 1;
	}
	return i;
}

static void print_text_list(FILE *f, const void *arg)
{
	const struct text_list *tl = arg;
	struct irq_fold folds[IRQ_FOLDS_MAX];
	struct hook_fold hooks[HOOK_FOLDS_MAX];
	unsigned int i, next, ki = 0, kh = 0, nr = 0, nh = 0;
	int fw = 0, w, kind;

	if (!tl->unfold) {
		nr = irq_folds(tl->r, tl->ks, tl->first, tl->last, folds);
		nh = hook_folds(tl->r, tl->ks, tl->first, tl->last, hooks);
	}
	/* The arrows of the entries shown in one column. */
	for (i = tl->first; i < tl->last; i++) {
		next = fold_at(i, folds, nr, &ki, hooks, nh, &kh, &kind);
		if (kind) {
			i = next - 1;
			continue;
		}
		w = from_width(tl->r, tl->ks, i, i + 1);
		if (w > fw)
			fw = w;
	}
	ki = kh = 0;
	for (i = tl->first; i < tl->last; i++) {
		next = fold_at(i, folds, nr, &ki, hooks, nh, &kh, &kind);
		if (kind == 1)
			print_fold(f, tl, &folds[ki]);
		else if (kind == 2)
			print_hook_fold(f, tl, &hooks[kh]);
		if (kind) {
			i = next - 1;
			continue;
		}
		print_branch(f, tl->r, i, tl->ks, tl->iw, fw);
	}
}

void print_rec_text(FILE *f, const struct rec *r, const struct ksyms *ks,
		    const struct print_opts *po)
{
	const struct lbr_snap_record *h = &r->hdr;
	unsigned int first = 0, last = h->nr_entries;
	struct stack_arg ts = { r, ks };
	struct text_list tl;
	struct rec_span sp;
	struct list_key k;

	print_header(f, h, ks);
	if (h->nr_stack) {
		stack_key_init(&k, r);
		list_print(f, &text_stacks, &k, print_text_stack, &ts);
	} else if (h->flags & LBR_SNAP_REC_NO_STACK) {
		fputs("  (no call stack: the unwinder did not reach the caller)\n",
		      f);
	}
	print_caller(f, h, ks);
	rec_span(r, ks, &sp);
	if (po->only_target)
		first = sp.target;
	if (!po->full)
		last = sp.probe;
	if (first)
		print_cut_note(f, h, ks, first);
	tl = (struct text_list){ r, ks, first, last,
				 last ? digits(last - 1) : 1, po->unfold };
	list_key_init(&k, r, first, last, po->unfold ? 2 : 0);
	list_print(f, &text_lists, &k, print_text_list, &tl);
	print_probe_note(f, h, h->nr_entries - last);
	if ((h->flags & LBR_SNAP_REC_NO_LBR) &&
	    h->backend == LBR_SNAP_BACKEND_NONE)
		fprintf(f, "  (no LBR on this machine: backend %s)\n",
			backend_name(h->backend));
	else if (h->flags & LBR_SNAP_REC_NO_LBR)
		fprintf(f, "  (no LBR read on cpu%u: going offline or online, or perf gave it no LBR)\n",
			h->cpu);
	if (h->flags & LBR_SNAP_REC_WAS_OFF)
		fprintf(f, "  (LBR was already off when this return froze it: the branches may be older)\n");
	if (h->flags & LBR_SNAP_REC_RAN_AGAIN)
		fprintf(f, "  (LBR was recording again when the read ended: some branches may be lbr_snap's own)\n");
	if (h->flags & LBR_SNAP_REC_AFTER_DROP)
		fprintf(f, "  (cpu%u dropped records before this one: its buffer was full, buffer_kb=)\n",
			h->cpu);
	if ((h->flags & LBR_SNAP_REC_RET_FILTERED) && h->nr_entries)
		fprintf(f, "  (the LBR filter leaves returns out: the function's own return is not among the branches%s)\n",
			h->hook == LBR_SNAP_HOOK_KRETPROBE ?
			", and the newest may be the kretprobe's" : "");
	fputc('\n', f);	/* a blank line between records */
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
	fputc('"', f);
	fputs(key, f);
	fputs("\":", f);
	if (found)
		json_str(f, sym, len);
	else
		fputs("null", f);
}


/* ,"side_name":, or ,"name": for side "" */
static void json_side_key(FILE *f, const char *side, const char *name)
{
	fputs(",\"", f);
	if (*side) {
		fputs(side, f);
		fputc('_', f);
	}
	fputs(name, f);
	fputs("\":", f);
}

/* Without debug info: the same keys each time, in one piece. */
static void json_no_srcloc(FILE *f, const char *side)
{
	char buf[80], *p = buf;
	size_t n = strlen(side);

	p = CAT(p, ",\"");
	if (n) {
		p = cat(p, side, n);
		*p++ = '_';
	}
	p = CAT(p, "file\":null,\"");
	if (n) {
		p = cat(p, side, n);
		*p++ = '_';
	}
	p = CAT(p, "line\":null,\"");
	if (n) {
		p = cat(p, side, n);
		*p++ = '_';
	}
	p = CAT(p, "inline\":[]");
	fwrite(buf, 1, p - buf, f);
}

/*
 * ,"side_file":...,"side_line":...,"side_inline":[...] (no "side_" for
 * side "")
 */
void json_srcloc(FILE *f, const char *side, const struct ksyms *ks,
		 unsigned long long addr)
{
	const struct src_inline *in;
	struct srcloc loc;
	unsigned int i;

	if (!srclines_lookup(ks->lines, ks, addr, &loc) && !loc.nr_inline) {
		json_no_srcloc(f, side);
		return;
	}
	json_side_key(f, side, "file");
	json_opt_str(f, loc.file);
	json_side_key(f, side, "line");
	if (loc.file)
		put_int(f, loc.line);
	else
		fputs("null", f);
	json_side_key(f, side, "inline");
	fputc('[', f);
	for (i = 0; i < loc.nr_inline; i++) {
		in = &loc.inl[i];
		fputs(i ? ",{\"func\":" : "{\"func\":", f);
		json_opt_str(f, in->func);
		fputs(",\"call_file\":", f);
		json_opt_str(f, in->call_file);
		fputs(",\"call_line\":", f);
		put_int(f, in->call_line);
		fputc('}', f);
	}
	fputc(']', f);
}

/* @key then the JSON string of @addr's symbol, or null, into @p. */
static char *json_sym_buf(char *p, const char *key, size_t key_len,
			  const struct ksyms *ks, unsigned long long addr)
{
	bool found, plain;
	size_t len;
	const char *sym = ksyms_sym_plain(ks, addr, &len, &found, &plain);

	p = cat(p, key, key_len);
	if (!found)
		return CAT(p, "null");
	if (!plain)
		return json_str_buf(p, sym, len);
	*p++ = '"';
	p = cat(p, sym, len);
	*p++ = '"';
	return p;
}

static char *bool_buf(char *p, bool v)
{
	return v ? CAT(p, "true") : CAT(p, "false");
}

/*
 * The branch's keys up to its source lines are put together in a buffer
 * and written at once: printed key by key, stdio calls were most of the
 * time --json took.
 */
/*
 * Branch objects printed lately, whole: a storm prints the same few
 * hundred branches over and over, and a hit is one copy.  Only without
 * debug info, where an object depends on nothing but the branch and its
 * place (before the target, on the probe path) and the symbols.
 */
#define MEMO_BITS	12
#define MEMO_TEXT	512

struct branch_memo {
	struct lbr_snap_branch b;
	bool probe, before, irq;
	unsigned short len;		/* 0: unused */
	char text[MEMO_TEXT];		/* the object, no leading comma */
};

static struct branch_memo *branch_memo;

static struct branch_memo *memo_slot(const struct lbr_snap_branch *b,
				     bool probe, bool before, bool irq)
{
	unsigned long long h = b->from * 0x9e3779b97f4a7c15ull ^
			       b->to * 0xc2b2ae3d27d4eb4full ^
			       ((unsigned long long)b->flags << 32 |
				(unsigned long long)b->cycles << 8 | b->type) ^
			       (irq << 2 | probe << 1 | before);

	if (!branch_memo)
		branch_memo = xrealloc(NULL, sizeof(*branch_memo) << MEMO_BITS);
	if (!h)
		h = 1;
	return &branch_memo[(h * 0x9e3779b97f4a7c15ull) >> (64 - MEMO_BITS)];
}

static bool memo_match(const struct branch_memo *m,
		       const struct lbr_snap_branch *b, bool probe, bool before,
		       bool irq)
{
	return m->len && m->b.from == b->from && m->b.to == b->to &&
	       m->b.flags == b->flags && m->b.cycles == b->cycles &&
	       m->b.type == b->type && m->probe == probe &&
	       m->before == before && m->irq == irq;
}

static void json_branch(FILE *f, const struct rec *r, unsigned int i,
			const struct ksyms *ks, const struct rec_span *sp,
			bool irq)
{
	char buf[320 + 2 * JSON_STR_MAX(KSYM_BUF_LEN)], *p = buf, *obj;
	bool probe = i >= sp->probe, before = i < sp->target;
	struct lbr_snap_branch b;
	struct branch_memo *m = NULL;
	const char *tn;

	rec_branch(r, i, &b);
	if (i)
		*p++ = ',';
	if (!ks->lines) {
		m = memo_slot(&b, probe, before, irq);
		if (memo_match(m, &b, probe, before, irq)) {
			p = cat(p, m->text, m->len);
			fwrite(buf, 1, p - buf, f);
			return;
		}
	}
	obj = p;
	p = CAT(p, "{\"from\":");
	p = json_hex_buf(p, b.from);
	p = CAT(p, ",\"to\":");
	p = json_hex_buf(p, b.to);
	p = json_sym_buf(p, ",\"from_sym\":", sizeof(",\"from_sym\":") - 1, ks,
			 b.from);
	p = json_sym_buf(p, ",\"to_sym\":", sizeof(",\"to_sym\":") - 1, ks,
			 b.to);
	p = CAT(p, ",\"mispred\":");
	p = bool_buf(p, b.flags & LBR_SNAP_BR_MISPRED);
	p = CAT(p, ",\"flags\":");
	p = uint_buf(p, b.flags);
	p = CAT(p, ",\"cycles\":");
	p = uint_buf(p, b.cycles);
	p = CAT(p, ",\"type\":");
	p = uint_buf(p, b.type);
	p = CAT(p, ",\"type_name\":\"");
	tn = branch_type_name(&b, ks);
	p = cat(p, tn, strlen(tn));
	*p++ = '"';
	p = CAT(p, ",\"probe\":");
	p = bool_buf(p, probe);
	p = CAT(p, ",\"before_target\":");
	p = bool_buf(p, before);
	p = CAT(p, ",\"interrupt\":");
	p = bool_buf(p, irq);
	if (m) {
		/* No debug info: the same keys each time, in the one write. */
		p = CAT(p, ",\"from_file\":null,\"from_line\":null,\"from_inline\":[],\"to_file\":null,\"to_line\":null,\"to_inline\":[],\"foreign\":");
		p = bool_buf(p, branch_foreign(ks, &b));
		*p++ = '}';
		fwrite(buf, 1, p - buf, f);
		if (p - obj <= MEMO_TEXT) {
			m->b = b;
			m->probe = probe;
			m->before = before;
			m->irq = irq;
			m->len = p - obj;
			memcpy(m->text, obj, m->len);
		}
		return;
	}
	fwrite(buf, 1, p - buf, f);
	json_srcloc(f, "from", ks, b.from);
	json_srcloc(f, "to", ks, b.to);
	fputs(branch_foreign(ks, &b) ? ",\"foreign\":true}" : ",\"foreign\":false}", f);
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

/*
 * The call stack's frames, JSON objects separated by commas:
 * {"addr":...,"sym":...,"file":...,"line":...,"inline":[...]}, the source
 * of the call before the return address.
 */
static void print_json_stack(FILE *f, const void *arg)
{
	const struct stack_arg *sa = arg;
	const struct ksyms *ks = sa->ks;
	unsigned long long a;
	unsigned int i;

	for (i = 0; i < sa->r->hdr.nr_stack; i++) {
		a = rec_stack(sa->r, i);
		fputs(i ? ",{\"addr\":" : "{\"addr\":", f);
		json_hex(f, a);
		fputc(',', f);
		json_sym(f, "sym", ks, a, false);
		json_srcloc(f, "", ks, a - 1);
		fputc('}', f);
	}
}

/* Every branch of a record, JSON objects separated by commas. */
struct json_list {
	const struct rec *r;
	const struct ksyms *ks;
	const struct rec_span *sp;
};

static void print_json_list(FILE *f, const void *arg)
{
	const struct json_list *jl = arg;
	unsigned int nr = jl->r->hdr.nr_entries, i, k = 0, n;
	struct irq_fold folds[IRQ_FOLDS_MAX];

	/* Every entry, those of an interrupt marked. */
	n = irq_folds(jl->r, jl->ks, 0, nr, folds);
	for (i = 0; i < nr; i++) {
		while (k < n && folds[k].last < i)
			k++;
		json_branch(f, jl->r, i, jl->ks, jl->sp,
			    k < n && i >= folds[k].first);
	}
}

/* One JSON object per line; see --help for the keys. */
void print_rec_json(FILE *f, const struct rec *r, const struct ksyms *ks)
{
	const struct lbr_snap_record *h = &r->hdr;
	struct stack_arg sa = { r, ks };
	struct json_list jl;
	struct rec_span sp;
	struct list_key k;
	unsigned long long dur;

	/* 6 numbers, the keys and an escaped comm: well under 512. */
	char buf[512], *p = buf;

	rec_span(r, ks, &sp);
	/*
	 * ts_sec and ts_nsec hold ts exactly for readers whose JSON numbers
	 * are doubles: ts passes 2^53 after 104 days of uptime.  Numbers
	 * without printf(), which took a tenth of --json's time.
	 */
	p = CAT(p, "{\"ts\":");
	p = uint_buf(p, h->ts_ns);
	p = CAT(p, ",\"ts_sec\":");
	p = uint_buf(p, h->ts_ns / NSEC_PER_SEC);
	p = CAT(p, ",\"ts_nsec\":");
	p = uint_buf(p, h->ts_ns % NSEC_PER_SEC);
	p = CAT(p, ",\"cpu\":");
	p = uint_buf(p, h->cpu);
	p = CAT(p, ",\"pid\":");
	p = uint_buf(p, h->tgid);
	p = CAT(p, ",\"tid\":");
	p = uint_buf(p, h->pid);
	p = CAT(p, ",\"comm\":");
	p = json_str_buf(p, h->comm, strnlen(h->comm, LBR_SNAP_COMM_LEN));
	fwrite(buf, 1, p - buf, f);
	fputc(',', f);
	json_sym(f, "func", ks, h->func_addr, true);
	fputs(",\"func_addr\":", f);
	json_hex(f, h->func_addr);
	fputs(",\"retval\":", f);
	if (h->ret_type == LBR_SNAP_RET_VOID)
		fputs("null", f);	/* a void function returns nothing */
	else
		put_int(f, h->retval);
	json_errno(f, h);
	p = buf;
	p = CAT(p, ",\"ret_type\":\"");
	p = cat(p, ret_type_name(h->ret_type), strlen(ret_type_name(h->ret_type)));
	p = CAT(p, "\",\"probe_entries\":");
	p = uint_buf(p, h->probe_entries);
	p = CAT(p, ",\"flags\":");
	p = uint_buf(p, h->flags);
	p = CAT(p, ",\"backend\":\"");
	p = cat(p, backend_name(h->backend), strlen(backend_name(h->backend)));
	p = CAT(p, "\",\"hook\":\"");
	p = cat(p, hook_name(h->hook), strlen(hook_name(h->hook)));
	p = CAT(p, "\",\"target_id\":");
	p = uint_buf(p, h->target_id);
	fwrite(buf, 1, p - buf, f);
	fputs(",\"caller\":", f);
	json_hex(f, h->caller);
	fputc(',', f);
	json_sym(f, "caller_sym", ks, h->caller, false);
	fputs(",\"stack\":[", f);
	if (h->nr_stack) {
		stack_key_init(&k, r);
		list_print(f, &json_stacks, &k, print_json_stack, &sa);
	}
	fputs("],\"branches\":[", f);
	jl = (struct json_list){ r, ks, &sp };
	list_key_init(&k, r, sp.probe, sp.target, 1);
	list_print(f, &json_lists, &k, print_json_list, &jl);
	/* Keys added to the ABI's record come last: old readers' order holds. */
	fputs("],\"duration_ns\":", f);
	if (rec_duration(h, &dur))
		put_uint(f, dur);
	else
		fputs("null", f);
	fputs("}\n", f);
}
