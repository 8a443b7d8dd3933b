/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-dump.c: `hwpmc dump FILE|-`, a record-by-record listing of a pmclog.
 *
 * PUBLIC INTERFACES
 *   tools_dump_main(), tools_dump_usage()
 *
 * IMPLEMENTATION NOTES
 *   The file is streamed through the incremental reader in 64 KiB reads, so a
 *   pipe (`-`) and a log that is still being written work the same way and memory
 *   stays flat.  Each record is printed as soon as it is decoded; if the log turns
 *   out malformed later, what came before it has been printed and the error names
 *   the offset of the bad record.  Strings from the log are hostile: they are
 *   escaped before they reach the terminal or the JSON encoder (which refuses
 *   invalid UTF-8).  Addresses are JSON strings ("0x..."): kernel addresses do
 *   not fit jansson's signed 64-bit integers.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/log.h"
#include "hwpmcd/pmclog.h"
#include "tools-int.h"


struct dump_ctx {
	const char *name; /* file name for messages */
	bool json;
	bool summary_only;
	uint64_t counts[PLOG_TYPE_MAX];
	uint64_t nrecords;
	uint64_t bytes;
	bool version_warned;
};

void tools_dump_usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmc dump [--json] [--summary] [--lenient] FILE|-\n"
		"\n"
		"Print every record of a pmclog file (FreeBSD 12+ format, as written by\n"
		"hwpmcd or by FreeBSD's hwpmc) one line each, like 'pmcstat -R FILE': the byte\n"
		"offset, the record type, the time stamp and every field.  CALLCHAIN program\n"
		"counters follow their record, one '...' line each.  A summary line with the\n"
		"count of each record type ends the listing.  '-' reads standard input.\n"
		"\n"
		"  --json      one JSON object per record and a last {\"summary\": ...} object;\n"
		"              addresses are \"0x...\" strings\n"
		"  --summary   print only the summary\n"
		"  --lenient   skip records of unknown types (counted) instead of failing\n"
		"  -h, --help  this text\n"
		"\n"
		"Exit status: 0 for a complete log (it ends with CLOSELOG); also 0, with a\n"
		"warning on stderr, for a log without CLOSELOG or with a torn final record\n"
		"(a writer that stopped mid-record); 1 for a malformed log, reported as\n"
		"'hwpmc: FILE: offset N: what is wrong' after the records before it; 2 for\n"
		"bad usage.\n"
		"\n"
		"Examples:\n"
		"  hwpmc dump /var/lib/hwpmcd/session.pmclog | less\n"
		"  hwpmc dump --json run.pmclog | jq 'select(.type == \"callchain\")'\n");
}

static const char *pmc_flag_names(uint32_t flags, char *out, size_t outsize)
{
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ PLOG_F_DESCENDANTS, "DESCENDANTS" },
		{ PLOG_F_LOG_PROCCSW, "LOG_PROCCSW" },
		{ PLOG_F_LOG_PROCEXIT, "LOG_PROCEXIT" },
		{ PLOG_F_CALLCHAIN, "CALLCHAIN" },
		{ PLOG_F_USERCALLCHAIN, "USERCALLCHAIN" },
		{ PLOG_F_EV_PMU, "EV_PMU" },
		{ PLOG_F_ATTACHED_TO_OWNER, "ATTACHED_TO_OWNER" },
		{ PLOG_F_NEEDS_LOGFILE, "NEEDS_LOGFILE" },
		{ PLOG_F_ATTACH_DONE, "ATTACH_DONE" },
	};
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if (!(flags & names[i].bit))
			continue;
		o += (size_t)snprintf(out + o, outsize - o, "%s%s", o ? "|" : "", names[i].name);
		if (o >= outsize)
			break;
	}
	return out;
}

static void format_time(int64_t sec, int64_t nsec, char *out, size_t outsize)
{
	struct tm tm;
	time_t t = (time_t)sec;

	if (nsec < 0 || nsec >= 1000000000 || !gmtime_r(&t, &tm) || tm.tm_year > 8099) {
		snprintf(out, outsize, "%" PRId64 ".%09" PRId64 "(invalid)", sec, nsec);
		return;
	}
	snprintf(out, outsize, "%04d-%02d-%02dT%02d:%02d:%02d.%09" PRId64 "Z", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, nsec);
}

static const char *esc(const char *s, char *out, size_t outsize)
{
	return util_escape(s, strlen(s), out, outsize);
}

static void print_text(const struct plog_record *rec)
{
	char s1[4 * PLOG_PATH_MAX + 8], fl[160];
	const char *name = plog_type_name(rec->type);

	printf("%10" PRIu64 " %-11s tsc=%" PRIu64, rec->offset, name, rec->tsc);
	switch (rec->type) {
	case PLOG_TYPE_CLOSELOG:
	case PLOG_TYPE_DROPNOTIFY:
		break;
	case PLOG_TYPE_INITIALIZE: {
		const char *cpu = plog_cpu_name(rec->u.initialize.cpu);

		format_time(rec->u.initialize.ts_sec, rec->u.initialize.ts_nsec, fl, sizeof(fl));
		printf(" version=0x%08" PRIx32 " cpu=0x%" PRIx32 "(%s) tsc_freq=%" PRIu64
		       " time=%s cpuid=\"%s\"",
		       rec->u.initialize.version, rec->u.initialize.cpu, cpu ? cpu : "unknown",
		       rec->u.initialize.tsc_freq, fl, esc(rec->u.initialize.cpuid, s1, sizeof(s1)));
		break;
	}
	case PLOG_TYPE_PMCALLOCATE:
		printf(" pmcid=0x%08" PRIx32 " event=0x%" PRIx32 " flags=0x%" PRIx32 "(%s) rate=%" PRIu64,
		       rec->u.pmcallocate.pmcid, rec->u.pmcallocate.event, rec->u.pmcallocate.flags,
		       pmc_flag_names(rec->u.pmcallocate.flags, fl, sizeof(fl)),
		       rec->u.pmcallocate.rate);
		break;
	case PLOG_TYPE_PMCALLOCATEDYN:
		printf(" pmcid=0x%08" PRIx32 " event=0x%" PRIx32 " flags=0x%" PRIx32 "(%s) name=\"%s\"%s",
		       rec->u.pmcallocatedyn.pmcid, rec->u.pmcallocatedyn.event,
		       rec->u.pmcallocatedyn.flags,
		       pmc_flag_names(rec->u.pmcallocatedyn.flags, fl, sizeof(fl)),
		       esc(rec->u.pmcallocatedyn.evname, s1, sizeof(s1)),
		       rec->u.pmcallocatedyn.name_at_40 ? " (name read at offset 40: FreeBSD soft PMC)"
							: "");
		break;
	case PLOG_TYPE_PMCATTACH:
		printf(" pmcid=0x%08" PRIx32 " pid=%" PRId32 " path=\"%s\"", rec->u.pmcattach.pmcid,
		       rec->u.pmcattach.pid, esc(rec->u.pmcattach.path, s1, sizeof(s1)));
		break;
	case PLOG_TYPE_PMCDETACH:
		printf(" pmcid=0x%08" PRIx32 " pid=%" PRId32, rec->u.pmcdetach.pmcid,
		       rec->u.pmcdetach.pid);
		break;
	case PLOG_TYPE_PROCCSW:
		printf(" pmcid=0x%08" PRIx32 " pid=%" PRId32 " tid=%" PRId32 " value=%" PRIu64,
		       rec->u.proccsw.pmcid, rec->u.proccsw.pid, rec->u.proccsw.tid,
		       rec->u.proccsw.value);
		break;
	case PLOG_TYPE_PROCEXEC:
		printf(" pid=%" PRId32 " pmcid=0x%08" PRIx32 " base=0x%" PRIx64 " dyn=0x%" PRIx64
		       " path=\"%s\"",
		       rec->u.procexec.pid, rec->u.procexec.pmcid, rec->u.procexec.base,
		       rec->u.procexec.dyn, esc(rec->u.procexec.path, s1, sizeof(s1)));
		break;
	case PLOG_TYPE_PROCEXIT:
		printf(" pmcid=0x%08" PRIx32 " pid=%" PRId32 " value=%" PRIu64, rec->u.procexit.pmcid,
		       rec->u.procexit.pid, rec->u.procexit.value);
		break;
	case PLOG_TYPE_PROCFORK:
		printf(" oldpid=%" PRId32 " newpid=%" PRId32, rec->u.procfork.oldpid,
		       rec->u.procfork.newpid);
		break;
	case PLOG_TYPE_SYSEXIT:
		printf(" pid=%" PRId32, rec->u.sysexit.pid);
		break;
	case PLOG_TYPE_USERDATA: {
		/* hwpmcd's marks begin with a tag word (pmclog-format.md 11.8-11.13): named. */
		uint32_t w = rec->u.userdata.userdata;
		const char *tag = (w & PLOG_USERDATA_HWPMCD_MASK) == PLOG_USERDATA_HWPMCD_RULE
					  ? "hwpmcd MAP_IN rule mark (11.8)"
				  : w == PLOG_USERDATA_HWPMCD_RATE   ? "hwpmcd rate mark (11.9)"
				  : w == PLOG_USERDATA_HWPMCD_FILTER ? "hwpmcd filter mark (11.10)"
				  : w == PLOG_USERDATA_HWPMCD_BUILDID ? "hwpmcd build id mark (11.11)"
				  : w == PLOG_USERDATA_HWPMCD_CGROUP ? "hwpmcd cgroup mark (11.12)"
				  : w == PLOG_USERDATA_HWPMCD_SAMPLING ? "hwpmcd sampling mark (11.13)"
								     : NULL;

		printf(" userdata=0x%08" PRIx32 "%s%s%s", w, tag ? " (" : "", tag ? tag : "",
		       tag ? ")" : "");
		break;
	}
	case PLOG_TYPE_MAP_IN:
		printf(" pid=%" PRId32 " start=0x%" PRIx64 " path=\"%s\"", rec->u.map_in.pid,
		       rec->u.map_in.start, esc(rec->u.map_in.path, s1, sizeof(s1)));
		break;
	case PLOG_TYPE_MAP_OUT:
		printf(" pid=%" PRId32 " start=0x%" PRIx64 " end=0x%" PRIx64 "%s", rec->u.map_out.pid,
		       rec->u.map_out.start, rec->u.map_out.end,
		       rec->u.map_out.start >= rec->u.map_out.end ? " (empty range: pmcstat aborts)"
								   : "");
		break;
	case PLOG_TYPE_CALLCHAIN: {
		uint32_t f = PLOG_CC_FLAGS(rec->u.callchain.cpuflags);

		printf(" pid=%" PRId32 " tid=%" PRId32 " pmcid=0x%08" PRIx32 " cpu=%" PRIu32
		       " mode=%c flags=0x%" PRIx32 "%s%s npc=%" PRIu32 "\n",
		       rec->u.callchain.pid, rec->u.callchain.tid, rec->u.callchain.pmcid,
		       (uint32_t)PLOG_CC_CPU(rec->u.callchain.cpuflags),
		       (f & PLOG_CC_F_USERSPACE) ? 'u' : 's', f,
		       (f & PLOG_CC_F_USERSPACE) ? "(USERSPACE)" : "",
		       (f & PLOG_CC_F_MULTIPART) ? "(MULTIPART)" : "", rec->u.callchain.npc);
		for (uint32_t i = 0; i < rec->u.callchain.npc; i++)
			printf("%22s 0x%016" PRIx64 "\n", "...", rec->u.callchain.pc[i]);
		return;
	}
	case PLOG_TYPE_THR_CREATE:
		printf(" tid=%" PRId32 " pid=%" PRId32 " flags=0x%" PRIx32 "%s name=\"%s\"",
		       rec->u.thr_create.tid, rec->u.thr_create.pid, rec->u.thr_create.flags,
		       (rec->u.thr_create.flags & PLOG_P_KPROC) ? "(KPROC)" : "",
		       esc(rec->u.thr_create.name, s1, sizeof(s1)));
		break;
	case PLOG_TYPE_THR_EXIT:
		printf(" tid=%" PRId32, rec->u.thr_exit.tid);
		break;
	case PLOG_TYPE_PROC_CREATE:
		printf(" pid=%" PRId32 " flags=0x%" PRIx32 "%s name=\"%s\"", rec->u.proc_create.pid,
		       rec->u.proc_create.flags,
		       (rec->u.proc_create.flags & PLOG_P_KPROC) ? "(KPROC)" : "",
		       esc(rec->u.proc_create.name, s1, sizeof(s1)));
		break;
	default:
		break;
	}
	putchar('\n');
}

static json_t *jhex(uint64_t v)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	return json_string(b);
}

static json_t *jstr(const char *s)
{
	char b[4 * PLOG_PATH_MAX + 8];

	return json_string(util_escape(s, strlen(s), b, sizeof(b)));
}

static int print_json(const struct plog_record *rec)
{
	json_t *o = json_object();
	char *line;

	if (!o)
		return -ENOMEM;
	json_object_set_new(o, "offset", json_integer((json_int_t)rec->offset));
	json_object_set_new(o, "type", json_string(plog_type_name(rec->type)));
	json_object_set_new(o, "length", json_integer(rec->length));
	json_object_set_new(o, "tsc", json_integer((json_int_t)rec->tsc));
	switch (rec->type) {
	case PLOG_TYPE_INITIALIZE: {
		const char *cpu = plog_cpu_name(rec->u.initialize.cpu);

		json_object_set_new(o, "version", json_integer(rec->u.initialize.version));
		json_object_set_new(o, "cpu", json_integer(rec->u.initialize.cpu));
		json_object_set_new(o, "cpu_name", cpu ? json_string(cpu) : json_null());
		json_object_set_new(o, "tsc_freq", json_integer((json_int_t)rec->u.initialize.tsc_freq));
		json_object_set_new(o, "ts_sec", json_integer(rec->u.initialize.ts_sec));
		json_object_set_new(o, "ts_nsec", json_integer(rec->u.initialize.ts_nsec));
		json_object_set_new(o, "cpuid", jstr(rec->u.initialize.cpuid));
		break;
	}
	case PLOG_TYPE_PMCALLOCATE:
		json_object_set_new(o, "pmcid", json_integer(rec->u.pmcallocate.pmcid));
		json_object_set_new(o, "event", json_integer(rec->u.pmcallocate.event));
		json_object_set_new(o, "flags", json_integer(rec->u.pmcallocate.flags));
		json_object_set_new(o, "rate", json_integer((json_int_t)rec->u.pmcallocate.rate));
		break;
	case PLOG_TYPE_PMCALLOCATEDYN:
		json_object_set_new(o, "pmcid", json_integer(rec->u.pmcallocatedyn.pmcid));
		json_object_set_new(o, "event", json_integer(rec->u.pmcallocatedyn.event));
		json_object_set_new(o, "flags", json_integer(rec->u.pmcallocatedyn.flags));
		json_object_set_new(o, "name", jstr(rec->u.pmcallocatedyn.evname));
		if (rec->u.pmcallocatedyn.name_at_40)
			json_object_set_new(o, "name_at_offset_40", json_true());
		break;
	case PLOG_TYPE_PMCATTACH:
		json_object_set_new(o, "pmcid", json_integer(rec->u.pmcattach.pmcid));
		json_object_set_new(o, "pid", json_integer(rec->u.pmcattach.pid));
		json_object_set_new(o, "path", jstr(rec->u.pmcattach.path));
		break;
	case PLOG_TYPE_PMCDETACH:
		json_object_set_new(o, "pmcid", json_integer(rec->u.pmcdetach.pmcid));
		json_object_set_new(o, "pid", json_integer(rec->u.pmcdetach.pid));
		break;
	case PLOG_TYPE_PROCCSW:
		json_object_set_new(o, "pmcid", json_integer(rec->u.proccsw.pmcid));
		json_object_set_new(o, "pid", json_integer(rec->u.proccsw.pid));
		json_object_set_new(o, "tid", json_integer(rec->u.proccsw.tid));
		json_object_set_new(o, "value", json_integer((json_int_t)rec->u.proccsw.value));
		break;
	case PLOG_TYPE_PROCEXEC:
		json_object_set_new(o, "pid", json_integer(rec->u.procexec.pid));
		json_object_set_new(o, "pmcid", json_integer(rec->u.procexec.pmcid));
		json_object_set_new(o, "base", jhex(rec->u.procexec.base));
		json_object_set_new(o, "dyn", jhex(rec->u.procexec.dyn));
		json_object_set_new(o, "path", jstr(rec->u.procexec.path));
		break;
	case PLOG_TYPE_PROCEXIT:
		json_object_set_new(o, "pmcid", json_integer(rec->u.procexit.pmcid));
		json_object_set_new(o, "pid", json_integer(rec->u.procexit.pid));
		json_object_set_new(o, "value", json_integer((json_int_t)rec->u.procexit.value));
		break;
	case PLOG_TYPE_PROCFORK:
		json_object_set_new(o, "oldpid", json_integer(rec->u.procfork.oldpid));
		json_object_set_new(o, "newpid", json_integer(rec->u.procfork.newpid));
		break;
	case PLOG_TYPE_SYSEXIT:
		json_object_set_new(o, "pid", json_integer(rec->u.sysexit.pid));
		break;
	case PLOG_TYPE_USERDATA:
		json_object_set_new(o, "userdata", json_integer(rec->u.userdata.userdata));
		break;
	case PLOG_TYPE_MAP_IN:
		json_object_set_new(o, "pid", json_integer(rec->u.map_in.pid));
		json_object_set_new(o, "start", jhex(rec->u.map_in.start));
		json_object_set_new(o, "path", jstr(rec->u.map_in.path));
		break;
	case PLOG_TYPE_MAP_OUT:
		json_object_set_new(o, "pid", json_integer(rec->u.map_out.pid));
		json_object_set_new(o, "start", jhex(rec->u.map_out.start));
		json_object_set_new(o, "end", jhex(rec->u.map_out.end));
		break;
	case PLOG_TYPE_CALLCHAIN: {
		json_t *pcs = json_array();

		json_object_set_new(o, "pid", json_integer(rec->u.callchain.pid));
		json_object_set_new(o, "tid", json_integer(rec->u.callchain.tid));
		json_object_set_new(o, "pmcid", json_integer(rec->u.callchain.pmcid));
		json_object_set_new(o, "cpu", json_integer(PLOG_CC_CPU(rec->u.callchain.cpuflags)));
		json_object_set_new(o, "flags", json_integer(PLOG_CC_FLAGS(rec->u.callchain.cpuflags)));
		json_object_set_new(o, "user",
				    json_boolean(rec->u.callchain.cpuflags & PLOG_CC_F_USERSPACE));
		for (uint32_t i = 0; pcs && i < rec->u.callchain.npc; i++)
			json_array_append_new(pcs, jhex(rec->u.callchain.pc[i]));
		json_object_set_new(o, "pc", pcs ? pcs : json_null());
		break;
	}
	case PLOG_TYPE_THR_CREATE:
		json_object_set_new(o, "tid", json_integer(rec->u.thr_create.tid));
		json_object_set_new(o, "pid", json_integer(rec->u.thr_create.pid));
		json_object_set_new(o, "flags", json_integer(rec->u.thr_create.flags));
		json_object_set_new(o, "name", jstr(rec->u.thr_create.name));
		break;
	case PLOG_TYPE_THR_EXIT:
		json_object_set_new(o, "tid", json_integer(rec->u.thr_exit.tid));
		break;
	case PLOG_TYPE_PROC_CREATE:
		json_object_set_new(o, "pid", json_integer(rec->u.proc_create.pid));
		json_object_set_new(o, "flags", json_integer(rec->u.proc_create.flags));
		json_object_set_new(o, "name", jstr(rec->u.proc_create.name));
		break;
	default:
		break;
	}
	line = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!line)
		return -ENOMEM;
	puts(line);
	free(line);
	return 0;
}

static void print_summary(const struct dump_ctx *c, const char *status, uint64_t bad_offset,
			  bool have_bad)
{
	if (c->json) {
		json_t *o = json_object(), *s = json_object(), *types = json_object();
		char *line;

		for (uint32_t t = 0; t < PLOG_TYPE_MAX; t++)
			if (c->counts[t])
				json_object_set_new(types, plog_type_name(t),
						    json_integer((json_int_t)c->counts[t]));
		json_object_set_new(s, "records", json_integer((json_int_t)c->nrecords));
		json_object_set_new(s, "bytes", json_integer((json_int_t)c->bytes));
		json_object_set_new(s, "types", types);
		json_object_set_new(s, "status", json_string(status));
		if (have_bad)
			json_object_set_new(s, "error_offset", json_integer((json_int_t)bad_offset));
		json_object_set_new(o, "summary", s);
		line = json_dumps(o, JSON_COMPACT);
		json_decref(o);
		if (line)
			puts(line);
		free(line);
		return;
	}
	const char *sep = "; ";

	printf("summary: %" PRIu64 " records, %" PRIu64 " bytes", c->nrecords, c->bytes);
	for (uint32_t t = 0; t < PLOG_TYPE_MAX; t++) {
		if (!c->counts[t])
			continue;
		printf("%s%s %" PRIu64, sep, plog_type_name(t), c->counts[t]);
		sep = ", ";
	}
	printf("; %s\n", status);
}

static void note_record(struct dump_ctx *c, const struct plog_record *rec)
{
	c->counts[rec->type]++;
	c->nrecords++;
	c->bytes += rec->length;
	if (rec->type == PLOG_TYPE_INITIALIZE && !c->version_warned &&
	    PLOG_VERSION_MAJOR(rec->u.initialize.version) != PLOG_VERSION_MAJOR(PLOG_VERSION)) {
		c->version_warned = true;
		log_warn("%s: offset %" PRIu64 ": log version 0x%08" PRIx32
			 " differs from 0x%08x in its major number; fields may be misread",
			 c->name, rec->offset, rec->u.initialize.version, PLOG_VERSION);
	}
}

/* Drain decoded records; returns 0, -EPROTO for a malformed log, -ENOMEM. */
static int drain(struct dump_ctx *c, struct plog_reader *r)
{
	struct plog_record rec;
	int k;

	while ((k = plog_reader__next(r, &rec)) > 0) {
		note_record(c, &rec);
		if (c->summary_only)
			continue;
		if (c->json) {
			if (print_json(&rec) < 0)
				return -ENOMEM;
		} else {
			print_text(&rec);
		}
	}
	return k;
}

int tools_dump_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "summary", no_argument, NULL, 's' },
		{ "lenient", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct dump_ctx c = { 0 };
	struct plog_reader *r = NULL;
	unsigned rflags = 0;
	int fd = -1, opt, ret = TOOLS_EXIT_FAIL, k;
	const char *path;
	char status[160];
	const struct plog_error *e;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			c.json = true;
			break;
		case 's':
			c.summary_only = true;
			break;
		case 'l':
			rflags |= PLOG_READER_SKIP_UNKNOWN;
			break;
		case 'h':
			tools_dump_usage(stdout);
			return TOOLS_EXIT_OK;
		default:
			fprintf(stderr, "Try 'hwpmc dump --help'.\n");
			return TOOLS_EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		log_error("dump: expected one FILE (or '-' for standard input), got %d; "
			  "try 'hwpmc dump --help'", argc - optind);
		return TOOLS_EXIT_USAGE;
	}
	path = argv[optind];
	c.name = strcmp(path, "-") == 0 ? "<stdin>" : path;
	if (strcmp(path, "-") == 0) {
		fd = STDIN_FILENO;
	} else {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			log_error("%s: %s", path, strerror(errno));
			return TOOLS_EXIT_FAIL;
		}
	}
	if (plog_reader__new(rflags, &r) < 0) {
		log_error("out of memory");
		goto out;
	}

	for (;;) {
		void *space;
		ssize_t n;

		/* Into the reader's own buffer: one copy, read(2)'s (tools-int.h). */
		if (plog_reader__space(r, TOOLS_LOG_READ_CHUNK, &space) < 0) {
			log_error("%s: out of memory", c.name);
			goto out;
		}
		n = util_read_some(fd, space, TOOLS_LOG_READ_CHUNK);
		if (n < 0) {
			log_error("%s: read error at offset %" PRIu64 ": %s", c.name,
				  plog_reader__offset(r) + plog_reader__trailing(r), strerror((int)-n));
			(void)drain(&c, r);
			goto out;
		}
		if (n == 0)
			break;
		if (plog_reader__commit(r, (size_t)n) < 0) {
			log_error("%s: out of memory", c.name);
			goto out;
		}
		k = drain(&c, r);
		if (k == -EPROTO)
			break;
		if (k < 0) {
			log_error("%s: out of memory", c.name);
			goto out;
		}
	}
	plog_reader__finish(r);
	k = drain(&c, r);
	if (k < 0 && k != -EPROTO) {
		log_error("%s: out of memory", c.name);
		goto out;
	}

	e = plog_reader__error(r);
	switch (plog_reader__status(r)) {
	case PLOG_STATUS_COMPLETE:
		print_summary(&c, "complete", 0, false);
		if (plog_reader__trailing(r))
			log_warn("%s: %" PRIu64 " bytes after CLOSELOG at offset %" PRIu64
				 " are ignored, as FreeBSD's reader ignores them",
				 c.name, plog_reader__trailing(r), plog_reader__offset(r));
		ret = TOOLS_EXIT_OK;
		break;
	case PLOG_STATUS_NO_CLOSELOG:
		print_summary(&c, "no closelog", 0, false);
		if (c.nrecords == 0)
			log_warn("%s: empty log: no records at all", c.name);
		else
			log_warn("%s: offset %" PRIu64 ": the log ends without a CLOSELOG record "
				 "(still being written, or its writer stopped); all %" PRIu64
				 " records are whole",
				 c.name, plog_reader__offset(r), c.nrecords);
		ret = TOOLS_EXIT_OK;
		break;
	case PLOG_STATUS_TORN:
		print_summary(&c, "torn final record", plog_reader__offset(r), true);
		log_warn("%s: offset %" PRIu64 ": torn final record (%" PRIu64
			 " bytes, the log ends inside it); the %" PRIu64 " records before it are whole",
			 c.name, plog_reader__offset(r), plog_reader__trailing(r), c.nrecords);
		ret = TOOLS_EXIT_OK;
		break;
	case PLOG_STATUS_ERROR:
		snprintf(status, sizeof(status), "malformed (%s)", plog_error_kind_name(e->kind));
		print_summary(&c, status, e->offset, true);
		log_error("%s: offset %" PRIu64 ": %s", c.name, e->offset, e->message);
		ret = TOOLS_EXIT_FAIL;
		break;
	default:
		log_error("%s: internal error: reader status '%s' at end of input", c.name,
			  plog_status_name(plog_reader__status(r)));
		break;
	}
	if (plog_reader__skipped(r))
		log_warn("%s: %" PRIu64 " records of unknown types were skipped (--lenient)",
			 c.name, plog_reader__skipped(r));
out:
	if (fflush(stdout) != 0 || ferror(stdout)) {
		log_error("standard output: write error: %s", strerror(errno));
		ret = TOOLS_EXIT_FAIL;
	}
	plog_reader__free(r);
	if (fd > STDIN_FILENO)
		close(fd);
	return ret;
}
