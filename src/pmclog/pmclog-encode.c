/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pmclog-encode.c: validation and encoding of one record, and the name tables.
 *
 * PUBLIC INTERFACES
 *   plog_encode(), plog_type_name(), plog_type_symbol(), plog_type_min_length(),
 *   plog_cpu_name(), plog_status_name(), plog_error_kind_name()
 *
 * IMPLEMENTATION NOTES
 *   plog_encode() checks everything first and only then writes, so a refused
 *   record leaves the output buffer untouched.  Fields are stored at the offsets
 *   of the packed structs in pmclog-format.h, in little-endian order, and every
 *   byte that is not a field (pads, spare, string tails) is written as zero.
 */
#include <errno.h>
#include <string.h>

#include "hwpmcd/common.h"
#include "hwpmcd/pmclog.h"
#include "pmclog-int.h"

struct plog_type_info {
	const char *name;   /* pmcstat -R spelling */
	const char *symbol; /* FreeBSD PMCLOG_TYPE_ suffix */
	uint32_t min_length;
	uint32_t string_at; /* offset of a trailing path, 0 if none */
};

static const struct plog_type_info plog_types[PLOG_TYPE_MAX] = {
	[PLOG_TYPE_CLOSELOG] = { "closelog", "CLOSELOG", sizeof(struct plog_fmt_closelog), 0 },
	[PLOG_TYPE_DROPNOTIFY] = { "drop", "DROPNOTIFY", sizeof(struct plog_fmt_dropnotify), 0 },
	[PLOG_TYPE_INITIALIZE] = { "initlog", "INITIALIZE", sizeof(struct plog_fmt_initialize), 0 },
	[PLOG_TYPE_PMCALLOCATE] = { "allocate", "PMCALLOCATE", sizeof(struct plog_fmt_pmcallocate),
				    0 },
	/* Path-carrying types need at least the NUL, rounded up to 4. */
	[PLOG_TYPE_PMCATTACH] = { "attach", "PMCATTACH", sizeof(struct plog_fmt_pmcattach) + 4,
				  offsetof(struct plog_fmt_pmcattach, pl_pathname) },
	[PLOG_TYPE_PMCDETACH] = { "detach", "PMCDETACH", sizeof(struct plog_fmt_pmcdetach), 0 },
	[PLOG_TYPE_PROCCSW] = { "csw", "PROCCSW", sizeof(struct plog_fmt_proccsw), 0 },
	[PLOG_TYPE_PROCEXEC] = { "exec", "PROCEXEC", sizeof(struct plog_fmt_procexec) + 4,
				 offsetof(struct plog_fmt_procexec, pl_pathname) },
	[PLOG_TYPE_PROCEXIT] = { "exitvalue", "PROCEXIT", sizeof(struct plog_fmt_procexit), 0 },
	[PLOG_TYPE_PROCFORK] = { "fork", "PROCFORK", sizeof(struct plog_fmt_procfork), 0 },
	[PLOG_TYPE_SYSEXIT] = { "exit", "SYSEXIT", sizeof(struct plog_fmt_sysexit), 0 },
	[PLOG_TYPE_USERDATA] = { "userdata", "USERDATA", sizeof(struct plog_fmt_userdata), 0 },
	[PLOG_TYPE_MAP_IN] = { "map-in", "MAP_IN", sizeof(struct plog_fmt_map_in) + 4,
			       offsetof(struct plog_fmt_map_in, pl_pathname) },
	[PLOG_TYPE_MAP_OUT] = { "map-out", "MAP_OUT", sizeof(struct plog_fmt_map_out), 0 },
	[PLOG_TYPE_CALLCHAIN] = { "callchain", "CALLCHAIN", sizeof(struct plog_fmt_callchain) + 8,
				  0 },
	[PLOG_TYPE_PMCALLOCATEDYN] = { "allocatedyn", "PMCALLOCATEDYN",
				       sizeof(struct plog_fmt_pmcallocatedyn), 0 },
	[PLOG_TYPE_THR_CREATE] = { "thr-create", "THR_CREATE", sizeof(struct plog_fmt_thr_create),
				   0 },
	[PLOG_TYPE_THR_EXIT] = { "thr-exit", "THR_EXIT", sizeof(struct plog_fmt_thr_exit), 0 },
	[PLOG_TYPE_PROC_CREATE] = { "proc-create", "PROC_CREATE",
				    sizeof(struct plog_fmt_proc_create), 0 },
};

static const struct plog_type_info *type_info(uint32_t type)
{
	if (type >= PLOG_TYPE_MAX || !plog_types[type].name)
		return NULL;
	return &plog_types[type];
}

const char *plog_type_name(uint32_t type)
{
	const struct plog_type_info *ti = type_info(type);

	return ti ? ti->name : NULL;
}

const char *plog_type_symbol(uint32_t type)
{
	const struct plog_type_info *ti = type_info(type);

	return ti ? ti->symbol : NULL;
}

uint32_t plog_type_min_length(uint32_t type)
{
	const struct plog_type_info *ti = type_info(type);

	return ti ? ti->min_length : 0;
}

uint32_t plog_type_string_offset(uint32_t type)
{
	const struct plog_type_info *ti = type_info(type);

	return ti ? ti->string_at : 0;
}

static const struct {
	uint32_t cpu;
	const char *name;
} plog_cpus[] = {
	{ 0x01, "AMD_K8" },
	{ 0x87, "INTEL_CORE" },
	{ 0x88, "INTEL_CORE2" },
	{ 0x89, "INTEL_CORE2EXTREME" },
	{ 0x8A, "INTEL_ATOM" },
	{ 0x8B, "INTEL_COREI7" },
	{ 0x8C, "INTEL_WESTMERE" },
	{ 0x8D, "INTEL_SANDYBRIDGE" },
	{ 0x8E, "INTEL_IVYBRIDGE" },
	{ 0x8F, "INTEL_SANDYBRIDGE_XEON" },
	{ 0x90, "INTEL_IVYBRIDGE_XEON" },
	{ 0x91, "INTEL_HASWELL" },
	{ 0x92, "INTEL_ATOM_SILVERMONT" },
	{ 0x93, "INTEL_NEHALEM_EX" },
	{ 0x94, "INTEL_WESTMERE_EX" },
	{ 0x95, "INTEL_HASWELL_XEON" },
	{ 0x96, "INTEL_BROADWELL" },
	{ 0x97, "INTEL_BROADWELL_XEON" },
	{ 0x98, "INTEL_SKYLAKE" },
	{ 0x99, "INTEL_SKYLAKE_XEON" },
	{ 0x9A, "INTEL_ATOM_GOLDMONT" },
	{ 0x9B, "INTEL_ICELAKE" },
	{ 0x9C, "INTEL_ICELAKE_XEON" },
	{ 0x9D, "INTEL_ALDERLAKE" },
	{ 0x9E, "INTEL_ATOM_GOLDMONT_P" },
	{ 0x9F, "INTEL_ATOM_TREMONT" },
	{ 0x300, "PPC_7450" },
	{ 0x340, "PPC_E500" },
	{ 0x380, "PPC_970" },
	{ 0x390, "PPC_POWER8" },
	{ 0x400, "GENERIC" },
	{ 0x500, "ARMV7_CORTEX_A5" },
	{ 0x501, "ARMV7_CORTEX_A7" },
	{ 0x502, "ARMV7_CORTEX_A8" },
	{ 0x503, "ARMV7_CORTEX_A9" },
	{ 0x504, "ARMV7_CORTEX_A15" },
	{ 0x505, "ARMV7_CORTEX_A17" },
	{ 0x600, "ARMV8_CORTEX_A53" },
	{ 0x601, "ARMV8_CORTEX_A57" },
	{ 0x602, "ARMV8_CORTEX_A76" },
};

const char *plog_cpu_name(uint32_t cpu)
{
	for (size_t i = 0; i < ARRAY_SIZE(plog_cpus); i++)
		if (plog_cpus[i].cpu == cpu)
			return plog_cpus[i].name;
	return NULL;
}

const char *plog_status_name(enum plog_status status)
{
	static const char *const names[PLOG_STATUS_MAX] = {
		[PLOG_STATUS_NEED_DATA] = "incomplete input",
		[PLOG_STATUS_COMPLETE] = "complete",
		[PLOG_STATUS_NO_CLOSELOG] = "no closelog",
		[PLOG_STATUS_TORN] = "torn final record",
		[PLOG_STATUS_ERROR] = "malformed",
	};

	if ((unsigned)status >= PLOG_STATUS_MAX)
		return "unknown status";
	return names[status];
}

const char *plog_error_kind_name(enum plog_error_kind kind)
{
	static const char *const names[PLOG_ERR_MAX] = {
		[PLOG_ERR_NONE] = "no error",
		[PLOG_ERR_BAD_MAGIC] = "bad magic",
		[PLOG_ERR_BAD_LENGTH] = "bad length",
		[PLOG_ERR_UNKNOWN_TYPE] = "unknown type",
		[PLOG_ERR_BAD_STRING] = "bad string",
		[PLOG_ERR_OLD_FORMAT] = "old format",
	};

	if ((unsigned)kind >= PLOG_ERR_MAX)
		return "unknown error";
	return names[kind];
}

/* A PMCALLOCATEDYN name must print and serve as a pmcstat -g directory name. */
static int check_evname(const char *name)
{
	size_t n = strnlen(name, PLOG_NAME_MAX);

	if (n == 0)
		return -EINVAL;
	if (n >= PLOG_NAME_MAX)
		return -ENAMETOOLONG;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c <= ' ' || c > '~' || c == '/')
			return -EINVAL;
	}
	return 0;
}

static int check_path(const char *path, size_t *ret_len)
{
	size_t n;

	if (!path || !*path)
		return -EINVAL;
	n = strnlen(path, PLOG_PATH_MAX);
	if (n >= PLOG_PATH_MAX)
		return -ENAMETOOLONG;
	*ret_len = n;
	return 0;
}

static int check_fixed_string(const char *s, size_t field)
{
	return strnlen(s, field) < field ? 0 : -ENAMETOOLONG;
}

/* Copy a NUL-terminated string of known length into a zeroed field. */
static void put_string(uint8_t *dst, const char *s, size_t len)
{
	memcpy(dst, s, len);
}

static uint32_t roundup4(size_t n)
{
	return (uint32_t)((n + 3) & ~(size_t)3);
}

int plog_encode(const struct plog_record *rec, uint8_t *buf)
{
	const struct plog_type_info *ti = type_info(rec->type);
	size_t slen = 0;
	uint32_t len;
	int r;

	if (!ti)
		return -EINVAL;

	/* Validate first: nothing is written for a refused record. */
	len = ti->min_length;
	switch (rec->type) {
	case PLOG_TYPE_INITIALIZE:
		r = check_fixed_string(rec->u.initialize.cpuid, PLOG_CPUID_LEN);
		if (r < 0)
			return r;
		if (rec->u.initialize.ts_nsec < 0 || rec->u.initialize.ts_nsec >= 1000000000)
			return -EINVAL;
		break;
	case PLOG_TYPE_PMCALLOCATE:
		if (rec->u.pmcallocate.pmcid == PLOG_PMCID_INVALID)
			return -EINVAL;
		break;
	case PLOG_TYPE_PMCALLOCATEDYN:
		if (rec->u.pmcallocatedyn.pmcid == PLOG_PMCID_INVALID)
			return -EINVAL;
		r = check_evname(rec->u.pmcallocatedyn.evname);
		if (r < 0)
			return r;
		break;
	case PLOG_TYPE_PMCATTACH:
		r = check_path(rec->u.pmcattach.path, &slen);
		if (r < 0)
			return r;
		len = roundup4(ti->string_at + slen + 1);
		break;
	case PLOG_TYPE_PROCEXEC:
		r = check_path(rec->u.procexec.path, &slen);
		if (r < 0)
			return r;
		len = roundup4(ti->string_at + slen + 1);
		break;
	case PLOG_TYPE_MAP_IN:
		r = check_path(rec->u.map_in.path, &slen);
		if (r < 0)
			return r;
		len = roundup4(ti->string_at + slen + 1);
		break;
	case PLOG_TYPE_MAP_OUT:
		/* pmcstat asserts start < end. */
		if (rec->u.map_out.start >= rec->u.map_out.end)
			return -EINVAL;
		break;
	case PLOG_TYPE_CALLCHAIN:
		if (rec->u.callchain.npc == 0 || !rec->u.callchain.pc)
			return -EINVAL;
		if (rec->u.callchain.npc > PLOG_CALLCHAIN_DEPTH_MAX)
			return -E2BIG;
		if (PLOG_CC_FLAGS(rec->u.callchain.cpuflags) & ~PLOG_CC_F_USERSPACE)
			return -EINVAL; /* MULTIPART and undefined flags */
		if (rec->u.callchain.pmcid == PLOG_PMCID_INVALID)
			return -EINVAL;
		len = (uint32_t)(sizeof(struct plog_fmt_callchain) + 8 * rec->u.callchain.npc);
		break;
	case PLOG_TYPE_THR_CREATE:
		r = check_fixed_string(rec->u.thr_create.name, PLOG_MAXCOMLEN + 1);
		if (r < 0)
			return r;
		break;
	case PLOG_TYPE_PROC_CREATE:
		r = check_fixed_string(rec->u.proc_create.name, PLOG_MAXCOMLEN + 1);
		if (r < 0)
			return r;
		break;
	default:
		break;
	}
	if (len > PLOG_RECORD_MAX)
		return -E2BIG; /* cannot happen with the checks above; kept as a guard */

	memset(buf, 0, len);
	util_put_le32(buf + offsetof(struct plog_fmt_header, pl_header),
		      PLOG_HEADER(rec->type, len));
	util_put_le64(buf + offsetof(struct plog_fmt_header, pl_tsc), rec->tsc);

#define P32(s, f, v) util_put_le32(buf + offsetof(struct s, f), (uint32_t)(v))
#define P64(s, f, v) util_put_le64(buf + offsetof(struct s, f), (uint64_t)(v))
	switch (rec->type) {
	case PLOG_TYPE_CLOSELOG:
	case PLOG_TYPE_DROPNOTIFY:
		break;
	case PLOG_TYPE_INITIALIZE:
		P32(plog_fmt_initialize, pl_version, rec->u.initialize.version);
		P32(plog_fmt_initialize, pl_cpu, rec->u.initialize.cpu);
		P64(plog_fmt_initialize, pl_tsc_freq, rec->u.initialize.tsc_freq);
		P64(plog_fmt_initialize, pl_ts_sec, rec->u.initialize.ts_sec);
		P64(plog_fmt_initialize, pl_ts_nsec, rec->u.initialize.ts_nsec);
		put_string(buf + offsetof(struct plog_fmt_initialize, pl_cpuid),
			   rec->u.initialize.cpuid, strlen(rec->u.initialize.cpuid));
		break;
	case PLOG_TYPE_PMCALLOCATE:
		P32(plog_fmt_pmcallocate, pl_pmcid, rec->u.pmcallocate.pmcid);
		P32(plog_fmt_pmcallocate, pl_event, rec->u.pmcallocate.event);
		P32(plog_fmt_pmcallocate, pl_flags, rec->u.pmcallocate.flags);
		P64(plog_fmt_pmcallocate, pl_rate, rec->u.pmcallocate.rate);
		break;
	case PLOG_TYPE_PMCATTACH:
		P32(plog_fmt_pmcattach, pl_pmcid, rec->u.pmcattach.pmcid);
		P32(plog_fmt_pmcattach, pl_pid, rec->u.pmcattach.pid);
		put_string(buf + ti->string_at, rec->u.pmcattach.path, slen);
		break;
	case PLOG_TYPE_PMCDETACH:
		P32(plog_fmt_pmcdetach, pl_pmcid, rec->u.pmcdetach.pmcid);
		P32(plog_fmt_pmcdetach, pl_pid, rec->u.pmcdetach.pid);
		break;
	case PLOG_TYPE_PROCCSW:
		P64(plog_fmt_proccsw, pl_value, rec->u.proccsw.value);
		P32(plog_fmt_proccsw, pl_pmcid, rec->u.proccsw.pmcid);
		P32(plog_fmt_proccsw, pl_pid, rec->u.proccsw.pid);
		P32(plog_fmt_proccsw, pl_tid, rec->u.proccsw.tid);
		break;
	case PLOG_TYPE_PROCEXEC:
		P32(plog_fmt_procexec, pl_pid, rec->u.procexec.pid);
		P32(plog_fmt_procexec, pl_pmcid, rec->u.procexec.pmcid);
		P64(plog_fmt_procexec, pl_base, rec->u.procexec.base);
		P64(plog_fmt_procexec, pl_dyn, rec->u.procexec.dyn);
		put_string(buf + ti->string_at, rec->u.procexec.path, slen);
		break;
	case PLOG_TYPE_PROCEXIT:
		P32(plog_fmt_procexit, pl_pmcid, rec->u.procexit.pmcid);
		P32(plog_fmt_procexit, pl_pid, rec->u.procexit.pid);
		P64(plog_fmt_procexit, pl_value, rec->u.procexit.value);
		break;
	case PLOG_TYPE_PROCFORK:
		P32(plog_fmt_procfork, pl_oldpid, rec->u.procfork.oldpid);
		P32(plog_fmt_procfork, pl_newpid, rec->u.procfork.newpid);
		break;
	case PLOG_TYPE_SYSEXIT:
		P32(plog_fmt_sysexit, pl_pid, rec->u.sysexit.pid);
		break;
	case PLOG_TYPE_USERDATA:
		P32(plog_fmt_userdata, pl_userdata, rec->u.userdata.userdata);
		break;
	case PLOG_TYPE_MAP_IN:
		P32(plog_fmt_map_in, pl_pid, rec->u.map_in.pid);
		P64(plog_fmt_map_in, pl_start, rec->u.map_in.start);
		put_string(buf + ti->string_at, rec->u.map_in.path, slen);
		break;
	case PLOG_TYPE_MAP_OUT:
		P32(plog_fmt_map_out, pl_pid, rec->u.map_out.pid);
		P64(plog_fmt_map_out, pl_start, rec->u.map_out.start);
		P64(plog_fmt_map_out, pl_end, rec->u.map_out.end);
		break;
	case PLOG_TYPE_CALLCHAIN: {
		uint8_t *pc = buf + offsetof(struct plog_fmt_callchain, pl_pc);

		P32(plog_fmt_callchain, pl_pid, rec->u.callchain.pid);
		P32(plog_fmt_callchain, pl_tid, rec->u.callchain.tid);
		P32(plog_fmt_callchain, pl_pmcid, rec->u.callchain.pmcid);
		P32(plog_fmt_callchain, pl_cpuflags, rec->u.callchain.cpuflags);
		for (uint32_t i = 0; i < rec->u.callchain.npc; i++)
			util_put_le64(pc + 8 * i, rec->u.callchain.pc[i]);
		break;
	}
	case PLOG_TYPE_PMCALLOCATEDYN:
		P32(plog_fmt_pmcallocatedyn, pl_pmcid, rec->u.pmcallocatedyn.pmcid);
		P32(plog_fmt_pmcallocatedyn, pl_event, rec->u.pmcallocatedyn.event);
		P32(plog_fmt_pmcallocatedyn, pl_flags, rec->u.pmcallocatedyn.flags);
		put_string(buf + offsetof(struct plog_fmt_pmcallocatedyn, pl_evname),
			   rec->u.pmcallocatedyn.evname, strlen(rec->u.pmcallocatedyn.evname));
		break;
	case PLOG_TYPE_THR_CREATE:
		P32(plog_fmt_thr_create, pl_tid, rec->u.thr_create.tid);
		P32(plog_fmt_thr_create, pl_pid, rec->u.thr_create.pid);
		P32(plog_fmt_thr_create, pl_flags, rec->u.thr_create.flags);
		put_string(buf + offsetof(struct plog_fmt_thr_create, pl_tdname),
			   rec->u.thr_create.name, strlen(rec->u.thr_create.name));
		break;
	case PLOG_TYPE_THR_EXIT:
		P32(plog_fmt_thr_exit, pl_tid, rec->u.thr_exit.tid);
		break;
	case PLOG_TYPE_PROC_CREATE:
		P32(plog_fmt_proc_create, pl_pid, rec->u.proc_create.pid);
		P32(plog_fmt_proc_create, pl_flags, rec->u.proc_create.flags);
		put_string(buf + offsetof(struct plog_fmt_proc_create, pl_pcomm),
			   rec->u.proc_create.name, strlen(rec->u.proc_create.name));
		break;
	default:
		break;
	}
#undef P32
#undef P64
	return (int)len;
}
