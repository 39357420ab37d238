// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap: check and decode the records read from /dev/lbr_snap.
 *
 * Records are read by the sizes they carry, not by this tool's struct sizes:
 * a newer header or entry has fields appended that are skipped, an older,
 * shorter entry is zero-extended.
 */
#include <stdio.h>
#include <string.h>

#include "errname.h"
#include "record.h"
#include "util.h"

/* The least header a writer has: LBR_SNAP_RECORD_SIZE_V1 (rec_load()). */
#define HDR_SIZE	((size_t)LBR_SNAP_RECORD_SIZE_V1)

/* Check the size field alone, which is all that is needed to skip a record. */
enum rec_check rec_check_size(unsigned int size, char *why, size_t len)
{
	if (size < HDR_SIZE) {
		snprintf(why, len, "size %u is smaller than the header (%zu)",
			 size, HDR_SIZE);
		return REC_CORRUPT;
	}
	if (size > REC_SIZE_LIMIT) {
		snprintf(why, len, "size %u is above the limit of %d",
			 size, REC_SIZE_LIMIT);
		return REC_CORRUPT;
	}
	return REC_OK;
}

/* Check a whole record; rec_check_size() passed already. */
enum rec_check rec_check(const struct rec *r, char *why, size_t len)
{
	const struct lbr_snap_record *h = &r->hdr;
	unsigned long long end;

	if (!h->version) {
		snprintf(why, len, "version 0");
		return REC_CORRUPT;
	}
	if (h->version > LBR_SNAP_ABI_VERSION)
		return REC_NEWER;
	if (h->hdr_size < HDR_SIZE || h->hdr_size > h->size) {
		snprintf(why, len, "hdr_size %u is outside %zu..%u",
			 h->hdr_size, HDR_SIZE, h->size);
		return REC_CORRUPT;
	}
	end = h->hdr_size + (unsigned long long)h->nr_entries * h->entry_size;
	if (end > h->size) {
		snprintf(why, len, "%u entries of %u bytes at %u overrun size %u",
			 h->nr_entries, h->entry_size, h->hdr_size, h->size);
		return REC_CORRUPT;
	}
	if (h->nr_stack > LBR_SNAP_MAX_STACK ||
	    end + h->nr_stack * 8ull > h->size) {
		snprintf(why, len, "a stack of %u frames at %llu overruns size %u (at most %d frames)",
			 h->nr_stack, end, h->size, LBR_SNAP_MAX_STACK);
		return REC_CORRUPT;
	}
	return REC_OK;
}

/*
 * @r's header from @raw, whose size field rec_check_size() passed: what
 * an older writer's header lacks (past its hdr_size) reads as 0.
 */
void rec_load(struct rec *r, const unsigned char *raw)
{
	unsigned int size, n;

	memcpy(&size, raw, sizeof(size));
	n = size < sizeof(r->hdr) ? size : sizeof(r->hdr);
	r->raw = raw;
	memset(&r->hdr, 0, sizeof(r->hdr));
	memcpy(&r->hdr, raw, n);
	if (r->hdr.hdr_size < n)
		memset((char *)&r->hdr + r->hdr.hdr_size, 0,
		       sizeof(r->hdr) - r->hdr.hdr_size);
}

/* Frame @i of the call stack, [0] the caller; rec_check() passed. */
unsigned long long rec_stack(const struct rec *r, unsigned int i)
{
	unsigned long long a;

	memcpy(&a, rec_stack_bytes(r) + (size_t)i * sizeof(a), sizeof(a));
	return a;
}

/* Copy entry @i into @b, zero-filling fields the writer did not have. */
void rec_branch(const struct rec *r, unsigned int i, struct lbr_snap_branch *b)
{
	size_t n = r->hdr.entry_size;

	if (n > sizeof(*b))
		n = sizeof(*b);
	memset(b, 0, sizeof(*b));
	memcpy(b, r->raw + r->hdr.hdr_size + (size_t)i * r->hdr.entry_size, n);
}

const char *ret_type_name(unsigned int type)
{
	static const char *const names[] = {
		[LBR_SNAP_RET_INT]	= "int",
		[LBR_SNAP_RET_LONG]	= "long",
		[LBR_SNAP_RET_PTR]	= "ptr",
		[LBR_SNAP_RET_BOOL]	= "bool",
		[LBR_SNAP_RET_VOID]	= "void",
	};

	return type < ARRAY_SIZE(names) ? names[type] : "unknown";
}

const char *hook_name(unsigned int hook)
{
	return hook == LBR_SNAP_HOOK_FEXIT ? "fexit" : "kretprobe";
}

const char *backend_name(unsigned int backend)
{
	static const char *const names[] = {
		[LBR_SNAP_BACKEND_NONE]		= "none",
		[LBR_SNAP_BACKEND_INTEL]	= "intel",
		[LBR_SNAP_BACKEND_ARCH]		= "arch",
		[LBR_SNAP_BACKEND_AMD]		= "amd",
	};

	return backend < ARRAY_SIZE(names) ? names[backend] : "unknown";
}

static bool is_err_value(long long v)
{
	return v >= -MAX_ERRNO && v <= -1;
}

static bool has_errno(const struct lbr_snap_record *h)
{
	switch (h->ret_type) {
	case LBR_SNAP_RET_INT:
	case LBR_SNAP_RET_LONG:
	case LBR_SNAP_RET_PTR:
		return is_err_value(h->retval);
	default:
		return false;
	}
}

/* Name of the error the function returned ("ENOENT"), or NULL. */
const char *rec_errno(const struct lbr_snap_record *h)
{
	return has_errno(h) ? errno_name(-h->retval) : NULL;
}

bool rec_duration(const struct lbr_snap_record *h, unsigned long long *ns)
{
	if (!h->entry_ns || h->entry_ns > h->ts_ns)
		return false;
	*ns = h->ts_ns - h->entry_ns;
	return true;
}

/* "-ENOENT", "42", "NULL", "ERR_PTR(-ENOMEM)", "0xffff...", "true"... */
void rec_format_ret(const struct lbr_snap_record *h, char *buf, size_t len)
{
	const char *err = rec_errno(h);
	char num[24];
	size_t n;

	/* A storm prints "-ENOENT" for every record: no printf for it. */
	if (err && h->ret_type != LBR_SNAP_RET_PTR &&
	    (n = strlen(err)) + 2 <= len) {
		buf[0] = '-';
		memcpy(buf + 1, err, n + 1);
		return;
	}
	if (err)
		snprintf(num, sizeof(num), "-%s", err);
	else
		snprintf(num, sizeof(num), "%lld", h->retval);

	switch (h->ret_type) {
	case LBR_SNAP_RET_PTR:
		if (has_errno(h))
			snprintf(buf, len, "ERR_PTR(%s)", num);
		else if (!h->retval)
			snprintf(buf, len, "NULL");
		else
			snprintf(buf, len, "0x%016llx", (unsigned long long)h->retval);
		break;
	case LBR_SNAP_RET_BOOL:
		snprintf(buf, len, "%s", h->retval ? "true" : "false");
		break;
	case LBR_SNAP_RET_VOID:
		snprintf(buf, len, "void");
		break;
	default:
		snprintf(buf, len, "%s", num);
		break;
	}
}
