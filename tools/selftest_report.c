// SPDX-License-Identifier: GPL-2.0
/*
 * lbr-snap selftest's report: as text, or as one JSON object
 * (dist/man/lbr-snap.8 says what each part is).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "selftest_int.h"

#ifndef LBR_SNAP_TOOL_VERSION
#define LBR_SNAP_TOOL_VERSION	"unknown"
#endif

/* /proc/cpuinfo's value of @key for the first CPU, or "". */
static void cpuinfo(const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	size_t klen = strlen(key);
	char line[512], *v;

	*out = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen))
			continue;
		v = line + klen;
		v += strspn(v, " \t");
		if (*v != ':')
			continue;
		v += 1 + (v[1] == ' ');
		v[strcspn(v, "\n")] = '\0';
		snprintf(out, len, "%s", v);
		break;
	}
	fclose(f);
}

static const char *read_name(unsigned int r)
{
	return r == LBR_SNAP_READ_XSAVES ? "xsaves" : "msr";
}

static void print_time_json(const char *key, const struct st_time *t,
			    const struct st_time *base)
{
	printf("\"%s\":{\"cycles\":%.0f,\"base_cycles\":%.0f,\"added_cycles\":%.0f,\"cpu_msr_accesses\":",
	       key, t->cycles, base->cycles, t->cycles - base->cycles);
	if (t->msrs >= 0 && base->msrs >= 0)
		printf("%.2f}", t->msrs - base->msrs);
	else
		fputs("null}", stdout);
}

static void print_info_json(const struct lbr_snap_info *i)
{
	printf("{\"backend\":");
	json_str(stdout, i->backend_name, sizeof(i->backend_name));
	printf(",\"mode\":");
	json_str(stdout, i->mode, sizeof(i->mode));
	printf(",\"lbr_format\":%u,\"lbr_depth\":%u,\"lbr_read\":\"%s\",\"reason\":",
	       i->lbr_format, i->lbr_depth, read_name(i->lbr_read));
	json_str(stdout, i->reason, sizeof(i->reason));
	printf(",\"hypervisor\":");
	json_str(stdout, i->hypervisor, sizeof(i->hypervisor));
	printf(",\"cpus_failed\":{\"nr\":%u,\"cpus\":", i->nr_cpus_failed);
	json_str(stdout, i->cpus_failed, sizeof(i->cpus_failed));
	fputs(",\"reason\":", stdout);
	json_str(stdout, i->cpu_failure, sizeof(i->cpu_failure));
	printf("},\"capture_msrs\":%u,\"filtered_msrs\":%u,\"cpus_perf_off\":{\"nr\":%u,\"cpus\":",
	       i->capture_msrs, i->filtered_msrs, i->nr_cpus_perf_off);
	json_str(stdout, i->cpus_perf_off, sizeof(i->cpus_perf_off));
	fputs("},\"version\":", stdout);
	json_str(stdout, i->version, sizeof(i->version));
	putchar('}');
}

/* What a record leaves of the path to the return: none if none had room. */
static unsigned int user_entries(const struct st_config *c,
				 const struct st_cpu *sc)
{
	if (!st_with_room(sc) || c->info.lbr_depth <= sc->hook_entries)
		return 0;
	return c->info.lbr_depth - sc->hook_entries;
}

static void print_hook_json(const struct st_config *c, int h)
{
	const struct st_hook *hk = &c->hooks[h];
	unsigned int i;

	printf("{\"hook\":\"%s\",\"error\":", st_hook_names[h]);
	json_opt_str(stdout, hk->error[0] ? hk->error : NULL);
	fputs(",\"cpus\":[", stdout);
	for (i = 0; i < hk->nr_cpus; i++) {
		const struct st_cpu *sc = &hk->cpus[i];

		printf("%s{\"cpu\":%d,\"verdict\":\"%s\",\"records\":%u,\"no_lbr\":%u,\"was_off\":%u,\"no_return\":%u,\"no_room\":%u,\"hook_entries\":%u,\"user_entries\":%u,\"refused\":%s}",
		       i ? "," : "", sc->cpu, sc->verdict, sc->records,
		       sc->no_lbr, sc->was_off, sc->no_return, sc->no_room,
		       sc->hook_entries, user_entries(c, sc),
		       sc->refused ? "true" : "false");
	}
	fputs("],\"cost\":", stdout);
	if (hk->cost_done) {
		printf("{\"cpu\":%d,", hk->cost.cpu);
		print_time_json("recorded", &hk->cost.fail, &c->base_fail);
		putchar(',');
		print_time_json("filtered", &hk->cost.ok, &c->base_ok);
		printf(",\"module_msr_accesses\":{\"recorded\":%u,\"filtered\":%u}}",
		       c->info.capture_msrs,
		       h == ST_FEXIT ? 0 : c->info.filtered_msrs);
	} else {
		fputs("null", stdout);
	}
	putchar('}');
}

/* The first CPU's identity, as /proc/cpuinfo gives it. */
struct cpu_id {
	char vendor[64], family[16], model[16], stepping[16], name[128];
};

static void cpu_id_read(struct cpu_id *id)
{
	cpuinfo("vendor_id", id->vendor, sizeof(id->vendor));
	cpuinfo("cpu family", id->family, sizeof(id->family));
	cpuinfo("model", id->model, sizeof(id->model));
	cpuinfo("stepping", id->stepping, sizeof(id->stepping));
	cpuinfo("model name", id->name, sizeof(id->name));
}

void st_print_json(const struct st *s, const struct utsname *u,
		       const char *verdict)
{
	struct cpu_id id;
	unsigned int i;
	int h;

	cpu_id_read(&id);
	printf("{\"selftest\":1,\"tool_version\":\"%s\",\"kernel\":",
	       LBR_SNAP_TOOL_VERSION);
	json_str(stdout, u->release, sizeof(u->release));
	fputs(",\"machine\":", stdout);
	json_str(stdout, u->machine, sizeof(u->machine));
	fputs(",\"cpu\":{\"vendor\":", stdout);
	json_str(stdout, id.vendor, sizeof(id.vendor));
	printf(",\"family\":%ld,\"model\":%ld,\"stepping\":%ld,\"name\":",
	       strtol(id.family, NULL, 0), strtol(id.model, NULL, 0),
	       strtol(id.stepping, NULL, 0));
	json_str(stdout, id.name, sizeof(id.name));
	printf(",\"online\":%u,\"not_allowed\":%u},\"was_loaded\":%s",
	       s->nr_cpus + s->nr_not_allowed, s->nr_not_allowed,
	       s->was_loaded ? "true" : "false");
	if (s->was_loaded) {
		fputs(",\"loaded\":", stdout);
		print_info_json(&s->loaded_info);
	}
	fputs(",\"configs\":[", stdout);
	for (i = 0; i < s->nr_configs; i++) {
		const struct st_config *c = &s->configs[i];

		printf("%s{\"mode\":\"%s\",\"lbr_read\":\"%s\",\"error\":",
		       i ? "," : "", c->mode, c->read);
		json_opt_str(stdout, c->error[0] ? c->error : NULL);
		fputs(",\"info\":", stdout);
		if (c->have_info)
			print_info_json(&c->info);
		else
			fputs("null", stdout);
		fputs(",\"hooks\":[", stdout);
		for (h = 0; h < ST_HOOKS && c->have_info; h++) {
			if (h)
				putchar(',');
			print_hook_json(c, h);
		}
		fputs("]}", stdout);
	}
	printf("],\"verdict\":\"%s\",\"problems\":[", verdict);
	for (i = 0; i < s->nr_problems; i++) {
		if (i)
			putchar(',');
		json_str(stdout, s->problems[i], sizeof(s->problems[i]));
	}
	fputs("]}\n", stdout);
}

static void print_info_text(const char *prefix, const struct lbr_snap_info *i)
{
	printf("%s%.*s", prefix, (int)sizeof(i->backend_name), i->backend_name);
	if (i->backend != LBR_SNAP_BACKEND_NONE)
		printf(", format %u, depth %u, read by %s", i->lbr_format,
		       i->lbr_depth, read_name(i->lbr_read));
	printf(" (%.*s)\n", (int)sizeof(i->reason), i->reason);
	if (i->nr_cpus_failed)
		printf("  cpus refused: %.*s: %.*s\n",
		       (int)sizeof(i->cpus_failed), i->cpus_failed,
		       (int)sizeof(i->cpu_failure), i->cpu_failure);
	if (i->nr_cpus_perf_off)
		printf("  cpus where perf does not run lbr_snap's event: %.*s\n",
		       (int)sizeof(i->cpus_perf_off), i->cpus_perf_off);
	if (i->capture_msrs)
		printf("  MSR accesses: %u a recorded return, %u a kretprobe's filtered one\n",
		       i->capture_msrs, i->filtered_msrs);
}

static void print_hook_text(const struct st_config *c, int h)
{
	const struct st_hook *hk = &c->hooks[h];
	unsigned int i;

	if (hk->error[0]) {
		printf("  %s: %s\n", st_hook_names[h], hk->error);
		return;
	}
	for (i = 0; i < hk->nr_cpus; i++) {
		const struct st_cpu *sc = &hk->cpus[i];

		printf("  %s, cpu %d: %s: %u records", st_hook_names[h],
		       sc->cpu, sc->verdict, sc->records);
		if (!sc->no_lbr && sc->records)
			printf(", the hook's entries %u, the user's %u",
			       sc->hook_entries, user_entries(c, sc));
		putchar('\n');
	}
	if (!hk->cost_done)
		return;
	printf("  %s, cpu %d: open() %+.0f TSC cycles recorded, %+.0f filtered",
	       st_hook_names[h], hk->cost.cpu,
	       hk->cost.fail.cycles - c->base_fail.cycles,
	       hk->cost.ok.cycles - c->base_ok.cycles);
	if (hk->cost.fail.msrs >= 0 && c->base_fail.msrs >= 0)
		printf("; the CPU counted %.2f and %.2f MSR accesses",
		       hk->cost.fail.msrs - c->base_fail.msrs,
		       hk->cost.ok.msrs - c->base_ok.msrs);
	putchar('\n');
}

void st_print_text(const struct st *s, const struct utsname *u,
		       const char *verdict)
{
	struct cpu_id id;
	unsigned int i;
	int h;

	cpu_id_read(&id);
	printf("lbr-snap selftest %s on %s (%s)\n", LBR_SNAP_TOOL_VERSION,
	       u->release, u->machine);
	printf("cpu: %s, family %s model %s stepping %s, %u online\n", id.name,
	       id.family, id.model, id.stepping, s->nr_cpus + s->nr_not_allowed);
	if (s->nr_not_allowed)
		printf("  not tested: %u online CPUs outside this task's affinity\n",
		       s->nr_not_allowed);
	if (s->was_loaded) {
		print_info_text("lbr_snap was loaded: ", &s->loaded_info);
		puts("  not tested: its records are its reader's (rmmod lbr_snap, then run the selftest)");
	}
	for (i = 0; i < s->nr_configs; i++) {
		const struct st_config *c = &s->configs[i];

		printf("mode=%s lbr_read=%s: ", c->mode, c->read);
		if (!c->have_info) {
			printf("%s\n", c->error);
			continue;
		}
		print_info_text("", &c->info);
		if (c->info.hypervisor[0] && !i)
			printf("  hypervisor: %.*s\n",
			       (int)sizeof(c->info.hypervisor),
			       c->info.hypervisor);
		for (h = 0; h < ST_HOOKS; h++)
			print_hook_text(c, h);
	}
	for (i = 0; i < s->nr_problems; i++)
		printf("problem: %s\n", s->problems[i]);
	printf("verdict: %s\n", verdict);
}
