/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pmclog-format.h: the on-disk layout of FreeBSD's pmclog records.
 *
 * PUBLIC INTERFACES
 *   PLOG_* constants (FreeBSD's values, not Linux's), enum plog_type, and one
 *   packed struct plog_fmt_<type> per current-format record type.
 *
 * IMPLEMENTATION NOTES
 *   This is the one pinned pmclog ABI of the project: the current (FreeBSD 12.0+)
 *   16-byte-header format with PMC_VERSION 0x0A000000, as specified in
 *   docs/pmclog-format.md sections 3 to 6.  The structs describe byte layouts
 *   only: the encoder and decoder in src/pmclog read and write each field at
 *   offsetof() with explicit little-endian conversion, so host byte order and
 *   alignment never leak into a file.  Every size and every field offset below is
 *   pinned by a _Static_assert, copied from the tables of the format document.
 *   Records start at any 4-byte offset; 64-bit fields sit at 8-byte offsets from
 *   the start of their record.
 */
#ifndef HWPMCD_PMCLOG_FORMAT_H
#define HWPMCD_PMCLOG_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define PLOG_PACKED __attribute__((packed))

/* FreeBSD constants (pmclog-format.md 3.2); the Linux values differ. */
#define PLOG_PATH_MAX 1024		/* path field, NUL included */
#define PLOG_MAXCOMLEN 19		/* command/thread name: 19 chars + NUL */
#define PLOG_NAME_MAX 64		/* PMCALLOCATEDYN event name field */
#define PLOG_CPUID_LEN 64		/* INITIALIZE cpuid field */
#define PLOG_CALLCHAIN_DEPTH_MAX 512	/* most PCs in one CALLCHAIN */
#define PLOG_RECORD_MAX 4128		/* sizeof(union pmclog_entry): longest record */
#define PLOG_HEADER_SIZE 16

#define PLOG_VERSION 0x0A000000u	/* PMC_VERSION written by us */
#define PLOG_VERSION_MAJOR(v) (((v) >> 24) & 0xffu)
#define PLOG_MAGIC 0xEEu

/* pl_header packing: magic in bits 31..24, type in 23..16, length in 15..0. */
#define PLOG_HEADER(type, len) ((PLOG_MAGIC << 24) | ((uint32_t)(type) << 16) | ((uint32_t)(len)))
#define PLOG_HEADER_MAGIC(h) (((h) >> 24) & 0xffu)
#define PLOG_HEADER_TYPE(h) (((h) >> 16) & 0xffu)
#define PLOG_HEADER_LENGTH(h) ((h) & 0xffffu)

/* Record type numbers of the current format (pmclog-format.md 4); 0 and 4 are unused. */
enum plog_type {
	PLOG_TYPE_CLOSELOG = 1,
	PLOG_TYPE_DROPNOTIFY = 2,
	PLOG_TYPE_INITIALIZE = 3,
	PLOG_TYPE_PMCALLOCATE = 5,
	PLOG_TYPE_PMCATTACH = 6,
	PLOG_TYPE_PMCDETACH = 7,
	PLOG_TYPE_PROCCSW = 8,
	PLOG_TYPE_PROCEXEC = 9,
	PLOG_TYPE_PROCEXIT = 10,
	PLOG_TYPE_PROCFORK = 11,
	PLOG_TYPE_SYSEXIT = 12,
	PLOG_TYPE_USERDATA = 13,
	PLOG_TYPE_MAP_IN = 14,
	PLOG_TYPE_MAP_OUT = 15,
	PLOG_TYPE_CALLCHAIN = 16,
	PLOG_TYPE_PMCALLOCATEDYN = 17,
	PLOG_TYPE_THR_CREATE = 18,
	PLOG_TYPE_THR_EXIT = 19,
	PLOG_TYPE_PROC_CREATE = 20,
	PLOG_TYPE_MAX
};

/* CPU types (pmclog-format.md 6.2): the one a Linux host writes. */
#define PLOG_CPU_GENERIC 0x400u

/* PMC flags (pl_flags of PMCALLOCATE/PMCALLOCATEDYN, pmclog-format.md 6.4). */
#define PLOG_F_DESCENDANTS 0x00000002u
#define PLOG_F_LOG_PROCCSW 0x00000004u
#define PLOG_F_LOG_PROCEXIT 0x00000008u
#define PLOG_F_CALLCHAIN 0x00000080u
#define PLOG_F_USERCALLCHAIN 0x00000100u
#define PLOG_F_EV_PMU 0x00000200u
#define PLOG_F_ATTACHED_TO_OWNER 0x00010000u
#define PLOG_F_NEEDS_LOGFILE 0x00020000u
#define PLOG_F_ATTACH_DONE 0x00040000u

/*
 * PMCALLOCATE pl_event codes that every FreeBSD libpmc names, whatever the CPU type
 * (pmclog-format.md 5.3): its reader fails on a code it cannot name.
 */
#define PLOG_EV_TSC_TSC 0x1000u

/*
 * hwpmcd's USERDATA word (pmclog-format.md 11.8), right after INITIALIZE: "HWR" and
 * a version of the MAP_IN pl_start rule; 1 = FreeBSD main's rule (11.5).  A log
 * without it, of CPU type GENERIC and hwpmcd's PMC ids, is of an earlier hwpmcd.
 */
#define PLOG_USERDATA_HWPMCD_MASK 0xffffff00u
#define PLOG_USERDATA_HWPMCD_RULE 0x48575200u
#define PLOG_USERDATA_HWPMCD_RULE_FREEBSD (PLOG_USERDATA_HWPMCD_RULE | 1u)
/*
 * A change of the sampling rate by a profile's CPU budget (pmclog-format.md 11.9):
 * this word, then a second USERDATA whose word is the new rate in Hz, both with
 * the time of the change.
 */
#define PLOG_USERDATA_HWPMCD_RATE 0x48575301u
/*
 * The session's in-kernel sample filter (pmclog-format.md 11.10): this word, then
 * one whose value is the length N of the filter's text in bytes, then (N + 3) / 4
 * words holding the text, little-endian, zero-padded; all with the time the filter
 * took effect.  N = 0: no filter (every sample kept) from then on.
 */
#define PLOG_USERDATA_HWPMCD_FILTER 0x48575302u
/*
 * The GNU build id of the file of the MAP_IN that follows (pmclog-format.md 11.11):
 * this word, then one whose value is the id's length N in bytes (1..20), then
 * (N + 3) / 4 words holding its bytes, little-endian, zero-padded; all with the
 * MAP_IN's time.  Holds for that path until another id is said for it.
 */
#define PLOG_USERDATA_HWPMCD_BUILDID 0x48575303u
/*
 * The cgroup a process runs in from then on (pmclog-format.md 11.12): this word,
 * then one whose value is the length N in bytes (5..4100) of what follows, then
 * (N + 3) / 4 words holding its bytes, little-endian, zero-padded: the pid (4
 * bytes, little-endian), then the cgroup v2 path (no NUL).  A PROCFORK child has
 * its parent's.
 */
#define PLOG_USERDATA_HWPMCD_CGROUP 0x48575304u
#define PLOG_CGROUP_PATH_MAX 4096
/*
 * How an event samples (pmclog-format.md 11.13), right after its PMCALLOCATEDYN and
 * with its time: this word, then the event's PMC id, then a word whose bits 7..0
 * are PLOG_SAMPLING_PERIOD (a sample every VALUE events) or PLOG_SAMPLING_FREQ
 * (VALUE samples a second) and whose bit 8 (PLOG_SAMPLING_F_RATE) says that the
 * rate marks (11.9) set VALUE from then on, then VALUE's low and high 32 bits.
 */
#define PLOG_USERDATA_HWPMCD_SAMPLING 0x48575305u
/*
 * Samples lost (pmclog-format.md 11.14): this word, then one whose value is how many
 * (1..2^32-1; more are said in several marks), both with the time of the
 * DROPNOTIFY they follow, or of the end of a run of samples the writer dropped.
 */
#define PLOG_USERDATA_HWPMCD_LOST 0x48575306u
#define PLOG_SAMPLING_PERIOD 1u
#define PLOG_SAMPLING_FREQ 2u
#define PLOG_SAMPLING_KIND_MASK 0xffu
#define PLOG_SAMPLING_F_RATE 0x100u

/* CALLCHAIN pl_cpuflags: CPU in bits 31..16, flags in 15..0. */
#define PLOG_CC_F_USERSPACE 0x0001u
#define PLOG_CC_F_MULTIPART 0x0002u
#define PLOG_CC_CPUFLAGS(cpu, flags) (((uint32_t)(cpu) << 16) | ((uint32_t)(flags) & 0xffffu))
#define PLOG_CC_CPU(cpuflags) ((cpuflags) >> 16)
#define PLOG_CC_FLAGS(cpuflags) ((cpuflags) & 0xffffu)

/* PROC_CREATE/THR_CREATE pl_flags: FreeBSD p_flag P_KPROC (a kernel process). */
#define PLOG_P_KPROC 0x4u

/* PMC ids (pmclog-format.md 6.5 and 11.2). */
#define PLOG_PMCID_INVALID 0xFFFFFFFFu
#define PLOG_PMCID_SOFT_ANYCPU(index) (0xFFF00F00u + (uint32_t)(index))

/* MAP_IN/MAP_OUT pid of the kernel. */
#define PLOG_PID_KERNEL (-1)

struct plog_fmt_header {
	uint32_t pl_header;
	uint32_t pl_spare;
	uint64_t pl_tsc;
} PLOG_PACKED;

struct plog_fmt_initialize {
	struct plog_fmt_header pl_hdr;
	uint32_t pl_version;
	uint32_t pl_cpu;
	uint64_t pl_tsc_freq;
	int64_t pl_ts_sec;
	int64_t pl_ts_nsec;
	char pl_cpuid[PLOG_CPUID_LEN];
} PLOG_PACKED;

/* CLOSELOG and DROPNOTIFY are a bare header. */
struct plog_fmt_closelog {
	struct plog_fmt_header pl_hdr;
} PLOG_PACKED;

struct plog_fmt_dropnotify {
	struct plog_fmt_header pl_hdr;
} PLOG_PACKED;

struct plog_fmt_pmcallocate {
	struct plog_fmt_header pl_hdr;
	uint32_t pl_pmcid;
	uint32_t pl_event;
	uint32_t pl_flags;
	uint32_t pl_pad;
	uint64_t pl_rate;
} PLOG_PACKED;

struct plog_fmt_pmcattach {
	struct plog_fmt_header pl_hdr;
	uint32_t pl_pmcid;
	int32_t pl_pid;
	char pl_pathname[]; /* NUL-terminated, padded to 4 */
} PLOG_PACKED;

struct plog_fmt_pmcdetach {
	struct plog_fmt_header pl_hdr;
	uint32_t pl_pmcid;
	int32_t pl_pid;
} PLOG_PACKED;

struct plog_fmt_proccsw {
	struct plog_fmt_header pl_hdr;
	uint64_t pl_value;
	uint32_t pl_pmcid;
	int32_t pl_pid;
	int32_t pl_tid;
	uint32_t pl_pad;
} PLOG_PACKED;

/* The V10 layout; 0x09 readers expect the path at offset 32 (docs 5.8). */
struct plog_fmt_procexec {
	struct plog_fmt_header pl_hdr;
	int32_t pl_pid;
	uint32_t pl_pmcid;
	uint64_t pl_base;
	uint64_t pl_dyn;
	char pl_pathname[];
} PLOG_PACKED;

struct plog_fmt_procexit {
	struct plog_fmt_header pl_hdr;
	uint32_t pl_pmcid;
	int32_t pl_pid;
	uint64_t pl_value;
} PLOG_PACKED;

struct plog_fmt_procfork {
	struct plog_fmt_header pl_hdr;
	int32_t pl_oldpid;
	int32_t pl_newpid;
} PLOG_PACKED;

struct plog_fmt_sysexit {
	struct plog_fmt_header pl_hdr;
	int32_t pl_pid;
	uint32_t pl_pad;
} PLOG_PACKED;

struct plog_fmt_userdata {
	struct plog_fmt_header pl_hdr;
	uint32_t pl_userdata;
	uint32_t pl_pad;
} PLOG_PACKED;

struct plog_fmt_map_in {
	struct plog_fmt_header pl_hdr;
	int32_t pl_pid;
	uint32_t pl_pad;
	uint64_t pl_start;
	char pl_pathname[];
} PLOG_PACKED;

struct plog_fmt_map_out {
	struct plog_fmt_header pl_hdr;
	int32_t pl_pid;
	uint32_t pl_pad;
	uint64_t pl_start;
	uint64_t pl_end;
} PLOG_PACKED;

struct plog_fmt_callchain {
	struct plog_fmt_header pl_hdr;
	int32_t pl_pid;
	int32_t pl_tid;
	uint32_t pl_pmcid;
	uint32_t pl_cpuflags;
	uint64_t pl_pc[]; /* 1..512 PCs, innermost first */
} PLOG_PACKED;

struct plog_fmt_pmcallocatedyn {
	struct plog_fmt_header pl_hdr;
	uint32_t pl_pmcid;
	uint32_t pl_event;
	uint32_t pl_flags;
	uint32_t pl_pad;
	char pl_evname[PLOG_NAME_MAX];
} PLOG_PACKED;

struct plog_fmt_thr_create {
	struct plog_fmt_header pl_hdr;
	int32_t pl_tid;
	int32_t pl_pid;
	uint32_t pl_flags;
	uint32_t pl_pad;
	char pl_tdname[PLOG_MAXCOMLEN + 1];
} PLOG_PACKED;

struct plog_fmt_thr_exit {
	struct plog_fmt_header pl_hdr;
	int32_t pl_tid;
	uint32_t pl_pad;
} PLOG_PACKED;

struct plog_fmt_proc_create {
	struct plog_fmt_header pl_hdr;
	int32_t pl_pid;
	uint32_t pl_flags;
	char pl_pcomm[PLOG_MAXCOMLEN + 1];
} PLOG_PACKED;

/* Sizes (pmclog-format.md section 4, "fixed size (current)"). */
_Static_assert(sizeof(struct plog_fmt_header) == 16, "header");
_Static_assert(sizeof(struct plog_fmt_initialize) == 112, "INITIALIZE");
_Static_assert(sizeof(struct plog_fmt_closelog) == 16, "CLOSELOG");
_Static_assert(sizeof(struct plog_fmt_dropnotify) == 16, "DROPNOTIFY");
_Static_assert(sizeof(struct plog_fmt_pmcallocate) == 40, "PMCALLOCATE");
_Static_assert(sizeof(struct plog_fmt_pmcattach) == 24, "PMCATTACH");
_Static_assert(sizeof(struct plog_fmt_pmcdetach) == 24, "PMCDETACH");
_Static_assert(sizeof(struct plog_fmt_proccsw) == 40, "PROCCSW");
_Static_assert(sizeof(struct plog_fmt_procexec) == 40, "PROCEXEC");
_Static_assert(sizeof(struct plog_fmt_procexit) == 32, "PROCEXIT");
_Static_assert(sizeof(struct plog_fmt_procfork) == 24, "PROCFORK");
_Static_assert(sizeof(struct plog_fmt_sysexit) == 24, "SYSEXIT");
_Static_assert(sizeof(struct plog_fmt_userdata) == 24, "USERDATA");
_Static_assert(sizeof(struct plog_fmt_map_in) == 32, "MAP_IN");
_Static_assert(sizeof(struct plog_fmt_map_out) == 40, "MAP_OUT");
_Static_assert(sizeof(struct plog_fmt_callchain) == 32, "CALLCHAIN");
_Static_assert(sizeof(struct plog_fmt_pmcallocatedyn) == 96, "PMCALLOCATEDYN");
_Static_assert(sizeof(struct plog_fmt_thr_create) == 52, "THR_CREATE");
_Static_assert(sizeof(struct plog_fmt_thr_exit) == 24, "THR_EXIT");
_Static_assert(sizeof(struct plog_fmt_proc_create) == 44, "PROC_CREATE");

/* Field offsets (pmclog-format.md 3.1 and 5.1 to 5.9). */
#define PLOG_OFF(s, f, o) _Static_assert(offsetof(struct s, f) == (o), #s "." #f)
PLOG_OFF(plog_fmt_header, pl_header, 0);
PLOG_OFF(plog_fmt_header, pl_spare, 4);
PLOG_OFF(plog_fmt_header, pl_tsc, 8);
PLOG_OFF(plog_fmt_initialize, pl_version, 16);
PLOG_OFF(plog_fmt_initialize, pl_cpu, 20);
PLOG_OFF(plog_fmt_initialize, pl_tsc_freq, 24);
PLOG_OFF(plog_fmt_initialize, pl_ts_sec, 32);
PLOG_OFF(plog_fmt_initialize, pl_ts_nsec, 40);
PLOG_OFF(plog_fmt_initialize, pl_cpuid, 48);
PLOG_OFF(plog_fmt_pmcallocate, pl_pmcid, 16);
PLOG_OFF(plog_fmt_pmcallocate, pl_event, 20);
PLOG_OFF(plog_fmt_pmcallocate, pl_flags, 24);
PLOG_OFF(plog_fmt_pmcallocate, pl_pad, 28);
PLOG_OFF(plog_fmt_pmcallocate, pl_rate, 32);
PLOG_OFF(plog_fmt_pmcattach, pl_pmcid, 16);
PLOG_OFF(plog_fmt_pmcattach, pl_pid, 20);
PLOG_OFF(plog_fmt_pmcattach, pl_pathname, 24);
PLOG_OFF(plog_fmt_pmcdetach, pl_pmcid, 16);
PLOG_OFF(plog_fmt_pmcdetach, pl_pid, 20);
PLOG_OFF(plog_fmt_proccsw, pl_value, 16);
PLOG_OFF(plog_fmt_proccsw, pl_pmcid, 24);
PLOG_OFF(plog_fmt_proccsw, pl_pid, 28);
PLOG_OFF(plog_fmt_proccsw, pl_tid, 32);
PLOG_OFF(plog_fmt_proccsw, pl_pad, 36);
PLOG_OFF(plog_fmt_procexec, pl_pid, 16);
PLOG_OFF(plog_fmt_procexec, pl_pmcid, 20);
PLOG_OFF(plog_fmt_procexec, pl_base, 24);
PLOG_OFF(plog_fmt_procexec, pl_dyn, 32);
PLOG_OFF(plog_fmt_procexec, pl_pathname, 40);
PLOG_OFF(plog_fmt_procexit, pl_pmcid, 16);
PLOG_OFF(plog_fmt_procexit, pl_pid, 20);
PLOG_OFF(plog_fmt_procexit, pl_value, 24);
PLOG_OFF(plog_fmt_procfork, pl_oldpid, 16);
PLOG_OFF(plog_fmt_procfork, pl_newpid, 20);
PLOG_OFF(plog_fmt_sysexit, pl_pid, 16);
PLOG_OFF(plog_fmt_userdata, pl_userdata, 16);
PLOG_OFF(plog_fmt_map_in, pl_pid, 16);
PLOG_OFF(plog_fmt_map_in, pl_pad, 20);
PLOG_OFF(plog_fmt_map_in, pl_start, 24);
PLOG_OFF(plog_fmt_map_in, pl_pathname, 32);
PLOG_OFF(plog_fmt_map_out, pl_pid, 16);
PLOG_OFF(plog_fmt_map_out, pl_start, 24);
PLOG_OFF(plog_fmt_map_out, pl_end, 32);
PLOG_OFF(plog_fmt_callchain, pl_pid, 16);
PLOG_OFF(plog_fmt_callchain, pl_tid, 20);
PLOG_OFF(plog_fmt_callchain, pl_pmcid, 24);
PLOG_OFF(plog_fmt_callchain, pl_cpuflags, 28);
PLOG_OFF(plog_fmt_callchain, pl_pc, 32);
PLOG_OFF(plog_fmt_pmcallocatedyn, pl_pmcid, 16);
PLOG_OFF(plog_fmt_pmcallocatedyn, pl_event, 20);
PLOG_OFF(plog_fmt_pmcallocatedyn, pl_flags, 24);
PLOG_OFF(plog_fmt_pmcallocatedyn, pl_pad, 28);
PLOG_OFF(plog_fmt_pmcallocatedyn, pl_evname, 32);
PLOG_OFF(plog_fmt_thr_create, pl_tid, 16);
PLOG_OFF(plog_fmt_thr_create, pl_pid, 20);
PLOG_OFF(plog_fmt_thr_create, pl_flags, 24);
PLOG_OFF(plog_fmt_thr_create, pl_pad, 28);
PLOG_OFF(plog_fmt_thr_create, pl_tdname, 32);
PLOG_OFF(plog_fmt_thr_exit, pl_tid, 16);
PLOG_OFF(plog_fmt_proc_create, pl_pid, 16);
PLOG_OFF(plog_fmt_proc_create, pl_flags, 20);
PLOG_OFF(plog_fmt_proc_create, pl_pcomm, 24);
#undef PLOG_OFF

/* The longest record is a CALLCHAIN with the most PCs. */
_Static_assert(sizeof(struct plog_fmt_callchain) + 8 * PLOG_CALLCHAIN_DEPTH_MAX == PLOG_RECORD_MAX,
	       "record max");

#endif /* HWPMCD_PMCLOG_FORMAT_H */
