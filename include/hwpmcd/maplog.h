/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog.h: the process/thread/mapping model of a session and its bookkeeping.
 *
 * PUBLIC INTERFACES
 *   struct maplog_ops   where the bookkeeping goes (the daemon writes it as pmclog)
 *   struct maplog_map   one executable mapping of a process, as the model knows it
 *   struct maplog       the model: which objects each process has announced and
 *                       where its executable mappings are
 *   maplog__new(), __free(), __scan_kernel(), __scan_procs(), __replay(), __record(),
 *   __sample(), __find_map(), __stats(), maplog_open_mapped(), maplog_kernel_slide(),
 *   maplog_vdso_self(), maplog_vdso_v(), maplog_vdso_write(), maplog_vdso_set_path(),
 *   maplog_vdso_path()
 *
 * IMPLEMENTATION NOTES
 *   maplog turns what /proc shows at session start and the side-band records of
 *   the kernel (MMAP2, COMM, FORK, EXIT) into the bookkeeping of pmclog-format.md
 *   11.1: PROC_CREATE, THR_CREATE, MAP_IN, MAP_OUT, PROCFORK, SYSEXIT, THR_EXIT,
 *   through the callbacks of maplog_ops, so that it needs no pmclog code.  An
 *   object is announced once per process (keyed by device and inode, so a
 *   second executable segment of the same file adds nothing).  An exec keeps the
 *   old image's ranges, in the model and in the log, until the process shows that
 *   it runs the new image (maplog__sample(), a fork): the samples taken while
 *   the kernel loads the new image still carry the old image's user registers.
 *   Then one MAP_OUT per old object removes them; a new mapping over an old
 *   object removes that object alone.  MAP_IN pl_start follows the one
 *   rule of 11.5 (maplog-elf.h), computed from the file opened through
 *   /proc/PID/map_files/ (or /proc/PID/root/PATH), whose device and inode must
 *   match the mapping's; a file that cannot be opened or does not match falls
 *   back to the mapping's start, which the rule gives whenever the executable
 *   segment's p_align is the page size (counted in the stats).
 *
 *   Beside the bookkeeping, the model keeps each process's executable mappings
 *   (file-backed, [vdso] and anonymous) as sorted, non-overlapping address ranges
 *   for the unwinder (maplog__find_map()): an MMAP2 over an existing range trims
 *   or splits it, a fork copies the parent's ranges, exec and exit drop them.
 *   Paths are interned, one copy each, valid until the next record: when they
 *   grow past twice what live ranges held at the last compaction (and 1 MiB), the
 *   table keeps only the paths live ranges hold, so a machine that runs programs
 *   from ever new paths does not grow it without bound.  One thread (the session's) uses
 *   a maplog.
 */
#ifndef HWPMCD_MAPLOG_H
#define HWPMCD_MAPLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "hwpmcd/record.h"

#define MAPLOG_PID_KERNEL (-1)
#define MAPLOG_F_KPROC 0x4u

/* Each callback returns 0 or a negative errno, which stops the operation and is returned. */
struct maplog_ops {
	int (*proc_create)(void *ctx, uint64_t time, int32_t pid, uint32_t flags, const char *name);
	int (*thr_create)(void *ctx, uint64_t time, int32_t tid, int32_t pid, uint32_t flags,
			  const char *name);
	int (*map_in)(void *ctx, uint64_t time, int32_t pid, uint64_t start, const char *path);
	int (*map_out)(void *ctx, uint64_t time, int32_t pid, uint64_t start, uint64_t end);
	int (*procfork)(void *ctx, uint64_t time, int32_t oldpid, int32_t newpid);
	int (*sysexit)(void *ctx, uint64_t time, int32_t pid);
	int (*thr_exit)(void *ctx, uint64_t time, int32_t tid);
	/*
	 * Optional (NULL: not called): the executable ranges of @pid changed (a new
	 * range, exec, exit), so whatever was derived from them (the unwinder's
	 * caches) must be dropped.  No return value: it cannot fail.
	 */
	void (*maps_changed)(void *ctx, int32_t pid);
	/*
	 * Optional (NULL: every process): may process @pid, found by
	 * maplog__scan_procs() (a listed pid or a descendant of one), enter the log?
	 * One that may not is skipped: no PROC_CREATE, THR_CREATE or MAP_IN of it,
	 * and it stays out of the model (its descendants are asked for themselves).
	 */
	bool (*may_scan)(void *ctx, int32_t pid);
	/*
	 * Optional (NULL: open(2) as the caller is): open /proc/@pid/maps read-only
	 * for a scan, in a way that proves the process may enter the log: the daemon
	 * opens it with its user's credentials, so that the kernel's own ptrace
	 * check (the process is that user's and dumpable) and its hold on the
	 * address space whose maps the fd reads happen in one step, which an exec
	 * cannot split.  A scan calls it before it reads anything of the process
	 * but its name, and again after everything (the name read twice): what it
	 * read enters the model only if both opens succeeded and the name is the
	 * same.  The fd, or -errno (-EACCES/-EPERM: refused, -ENOENT/-ESRCH: gone).
	 */
	int (*open_maps)(void *ctx, int32_t pid);
	/*
	 * Optional (NULL: not called): the file of the MAP_IN that follows has GNU
	 * build id @id (@len bytes, 1..20), at the same time.  Said before a MAP_IN of
	 * a file whenever it is not what was last said for that path in this log
	 * (per path, so a reader keeps the last id per path; since __replay() starts a
	 * new log, it says it again): a container's file at a path the host also has
	 * is told apart (pmclog-format.md 11.11).
	 */
	int (*build_id)(void *ctx, uint64_t time, const uint8_t *id, size_t len);
	/*
	 * Optional (NULL: not called): process @pid runs in cgroup @path (its cgroup
	 * v2 path, "0::" of /proc/PID/cgroup, e.g. "/system.slice/docker-ID.scope"),
	 * from @time on: said after its PROC_CREATE at a scan or a replay, and after
	 * an exec's when the cgroup is not the one said for it before (a container
	 * runtime moves its child into the container's cgroup, then execs).  A child
	 * is in its parent's cgroup (PROCFORK) and is not said again (pmclog-format.md
	 * 11.12).
	 */
	int (*cgroup)(void *ctx, uint64_t time, int32_t pid, const char *path);
};

/* One executable mapping of a process (the unwinder's view of its address space). */
struct maplog_map {
	uint64_t start, end, pgoff; /* run-time range [start, end) and file offset of start */
	uint64_t dev, inode;	    /* identity of the file (makedev(maj, min), ino); 0 if none */
	const char *path; /* as in /proc/PID/maps, " (deleted)" stripped; "[vdso]"; "//anon" */
	int32_t pid;	  /* whose /proc/PID/ opens the file (<= 0: the caller's pid) */
	uint64_t time;	  /* of the record that mapped it (the scan's time for a scanned one) */
};

struct maplog_stats {
	uint64_t processes;	 /* PROC_CREATE written */
	uint64_t threads;	 /* THR_CREATE written */
	uint64_t map_in;
	uint64_t map_out;
	uint64_t elf_fallback;	 /* pl_start without the file (unreadable, replaced) */
	uint64_t scan_refused;	 /* processes in scope that ops->may_scan kept out of the log */
	uint64_t path_too_long;	 /* MAP_IN skipped: path of 1024 bytes or more */
	uint64_t anon_exec;	 /* executable anonymous/JIT/memfd mappings: no MAP_IN */
	uint64_t remapped;	 /* MAP_INs of a file's second placement (remapped code) */
	uint64_t remap_overlap;	 /* ... not written: it would meet another object's ranges */
	uint64_t tracked;	 /* processes in the model now (exited ones are forgotten) */
	uint64_t unvouched;	 /* gated: samples whose process the model could not vouch for */
	uint64_t path_bytes;	 /* interned paths now (compacted: about the live ones) */
	uint64_t path_compactions;
	uint64_t cgroups;	 /* distinct cgroup paths the model holds */
	uint64_t cgroups_over;	 /* processes whose cgroup was not said: MAPLOG_CGROUPS_MAX */
	uint64_t adopted;	 /* processes first met in a sample, scanned (maplog__adopt) */
	uint64_t adopt_refused;	 /* ... not scanned: gone, reused pid, exec'd, or refused */
	uint64_t adopt_deferred; /* ... not tried then: the second's attempts were spent */
};

/* The distinct cgroup paths a maplog keeps (ops->cgroup); beyond, a process's is not said. */
#define MAPLOG_CGROUPS_MAX 4096

struct maplog;

/* maplog__new: @ops and @ctx are borrowed for the life of the maplog.  0 or -ENOMEM. */
int maplog__new(const struct maplog_ops *ops, void *ctx, struct maplog **ret_m);
void maplog__free(struct maplog *m);

/*
 * maplog__gate: from now on (call it before the first scan) the model still
 * follows every process, but writes a process's bookkeeping only for samples it
 * is told were taken of a process the log may show (maplog__vouch()): a user's
 * system-wide session, whose in-kernel filter keeps only samples of the user's
 * own, ptrace-able processes, while the kernel's side-band records of every
 * process reach the rings.  See maplog__vouch().
 */
void maplog__gate(struct maplog *m);

/*
 * maplog__vouch: in a gated maplog, a sample of @pid taken at @taken passed the
 * owner check in the kernel at that time.  If the model's process @pid is the
 * one that ran at @taken (no fork, exec or scan of that pid after @taken), what
 * the log does not show of it yet is written at @at (>= @taken, the log's time
 * order): PROC_CREATE, then a MAP_IN per object mapped by @taken.  Otherwise
 * nothing (counted in stats.unvouched).  A shown process's exec writes MAP_OUTs of
 * what was shown and hides it again, its exit writes SYSEXIT; nothing else of it
 * is written (no THR_CREATE, PROCFORK, THR_EXIT).  1 if the model's @pid is the
 * sample's (what it says of the process may be used, e.g. to unwind), 0 if not,
 * or the callback's -errno.  Not gated: 1, nothing written.
 */
int maplog__vouch(struct maplog *m, int32_t pid, uint64_t taken, uint64_t at);

/*
 * maplog__forget_all: a gated maplog after a loss of records (side-band records
 * may be missing, so no process of the model is known to be what it says): every
 * process leaves the model (SYSEXIT at @time for those shown).  A scan
 * (maplog__scan_procs()) brings the live ones back, with nothing older than the
 * scan's time applied to them.  0 or the callback's -errno.
 */
int maplog__forget_all(struct maplog *m, uint64_t time);

/*
 * maplog__scan_kernel: MAP_IN pid -1 for the kernel ("vmlinux", pl_start = the KASLR
 * slide + V(vmlinux), V = 0xffffffff81000000 on x86-64: the run-time _text) and every module with a readable .text address.  @procfs and
 * @sysfs are roots (NULL: "/proc", "/sys").  Returns 0 or a negative errno.
 */
int maplog__scan_kernel(struct maplog *m, uint64_t time, const char *procfs, const char *sysfs);

/*
 * maplog__scan_procs: PROC_CREATE, THR_CREATE and MAP_IN for the processes in
 * scope: all of /proc when @npids is 0, else those pids (and, with @children,
 * their descendants), each only if ops->may_scan allows it.  Processes that vanish
 * during the scan are skipped.
 */
int maplog__scan_procs(struct maplog *m, uint64_t time, const pid_t *pids, size_t npids,
		       bool children);

/*
 * maplog__adopt: a sample of @pid, with user IP @user_ip, taken at @time, in a
 * maplog that is not gated: if the model does not know @pid (its PROCFORK was among
 * lost records, say), scan it as maplog__scan_procs() would (PROC_CREATE, THR_CREATE,
 * MAP_IN at @time) if the process at that pid now is the sample's: it began by
 * @time (within a clock tick) and @user_ip lies in one of its executable mappings
 * (a process that has exec'd since fails this, so its new image is not put under
 * the old one's samples); and ops->may_scan allows it.  Nothing for pid 0, a
 * @user_ip of 0 (a later sample may have one), a known pid, or a gated maplog.
 * Bounded: MAPLOG_ADOPT_PER_SECOND scans a second (of sample time), and a refused
 * pid is not tried again for a second.  1 if adopted, 0 if not, or the callback's
 * -errno.
 */
#define MAPLOG_ADOPT_PER_SECOND 20
int maplog__adopt(struct maplog *m, uint64_t time, int32_t pid, uint64_t user_ip);

/*
 * maplog__replay: the bookkeeping of the whole model again, as a new log needs
 * it at its start (a rotated file must read alone): for every process in the
 * model a PROC_CREATE, then one MAP_IN per object it has mapped (an exec still
 * pending: the old image's too), with the pl_start of the rule, all at @time.
 * Threads are not tracked, so no THR_CREATE.  Changes nothing in the model.
 * Returns 0, -ENOMEM or the callback's negative errno.
 */
int maplog__replay(struct maplog *m, uint64_t time);
/* maplog__record: apply one side-band record (MMAP, COMM, FORK, EXIT); samples are ignored. */
int maplog__record(struct maplog *m, const struct rec *r);

/*
 * maplog__sample: a sample of process @pid was taken in user mode (@user_mode) or
 * in the kernel with user IP @user_ip (0: unknown).  While an exec of @pid is
 * pending, a sample that shows the new image running (user mode, or a user IP
 * outside the old image) ends it: MAP_OUT for each object of the old image.
 * Call it for every sample, before the sample's PCs are resolved.  Returns 1 for
 * a kernel-mode sample inside such an exec (user IP in the old image, or
 * unknown): the address space it ran in is gone, so the sample's user stack
 * snapshot and the kernel's user frames are not its own; only its user IP
 * counts.  Otherwise 0, or the callback's negative errno.
 */
int maplog__sample(struct maplog *m, uint64_t time, int32_t pid, bool user_mode, uint64_t user_ip);

/*
 * maplog__find_map: the executable mapping of process @pid that holds @addr, or
 * NULL (unknown process or no such mapping); while an exec is pending, the old
 * image's ranges answer what the new image's do not.  The result is borrowed: valid
 * until the next call that changes the model (maplog__record(), __sample(),
 * __scan_procs()); its
 * path stays valid until maplog__free().  No allocation, no syscall.
 */
const struct maplog_map *maplog__find_map(const struct maplog *m, int32_t pid, uint64_t addr);

const struct maplog_stats *maplog__stats(const struct maplog *m);

/*
 * maplog_open_mapped: open the file behind a mapping of process @pid: through
 * /proc/PID/map_files/START-END (works for deleted and replaced files and inside
 * containers), else @path inside /proc/PID/root, else (the process has exited)
 * @path in the daemon's own file system; by name, no symbolic link is followed
 * anywhere in the path (openat2 RESOLVE_NO_SYMLINKS, RESOLVE_IN_ROOT).  Every
 * candidate is opened O_PATH first and opened for reading only once it is known
 * to be the mapping's file: -ESTALE if its st_dev/st_ino differ from @dev
 * (makedev()) and @inode, -ENOEXEC if it is not a non-empty regular file, so a
 * FIFO or a device a user put at that name is never opened.  Returns the fd (the
 * caller closes it; O_CLOEXEC) with its size in *ret_size (if not NULL), or a
 * negative errno.  Any thread.
 */
int maplog_open_mapped(int32_t pid, uint64_t start, uint64_t end, const char *path, uint64_t dev,
		       uint64_t inode, uint64_t *ret_size);

/*
 * maplog_vdso_self: this process's vDSO image, which is the kernel's and the same
 * in every 64-bit process on this kernel: its address (borrowed, valid for the
 * life of the process) and size (its [vdso] mapping in /proc/self/maps).  0, or
 * -ENOENT (no vDSO, as under valgrind), or an fopen(3) error.  Any thread.
 */
int maplog_vdso_self(const void **ret_image, size_t *ret_size);

/*
 * maplog_vdso_v: V of the MAP_IN rule (maplog-elf.h) for that vDSO image, so that
 * a "[vdso]" mapping at A gets pl_start = A + V (V is 0 for x86-64's).  0, or
 * maplog_vdso_self()'s errors, or maplog_elf_info_mem()'s (-ENOEXEC: not an ELF image).
 */
int maplog_vdso_v(uint64_t *ret_v);

/*
 * maplog_vdso_write: write that vDSO image to @fd, so that a reader can name
 * "[vdso]" PCs (LOG.vdso beside a log; the caller makes the file: files.h).  0 or
 * a negative errno (-ENOENT: no vDSO, nothing written).
 */
int maplog_vdso_write(int fd);

/*
 * maplog_vdso_set_path: name the vDSO in every MAP_IN written from now on by @path, a
 * copy of this kernel's vDSO image that the caller saved there (pmclog-format.md
 * 11.15), with the build id mark of @id (@idlen bytes, at most MAPLOG_BUILD_ID_MAX);
 * NULL: "[vdso]", the default.  Process-wide: call it before any model writes
 * (hwpmcd at start-up).  0 or -ENAMETOOLONG / -EINVAL.
 */
int maplog_vdso_set_path(const char *path, const uint8_t *id, size_t idlen);
/* The vDSO's MAP_IN path ("[vdso]" unless set) and its build id (*@ret_idlen 0: none). */
const char *maplog_vdso_path(const uint8_t **ret_id, size_t *ret_idlen);

/*
 * maplog_kernel_slide: run-time _stext from @procfs/kallsyms minus the link-time
 * _stext of an x86-64 kernel (0xffffffff81000000).  0 or -ENOENT (no _stext, or
 * kallsyms shows zeros: kptr_restrict).
 */
int maplog_kernel_slide(const char *procfs, uint64_t *ret_slide);

#endif /* HWPMCD_MAPLOG_H */
