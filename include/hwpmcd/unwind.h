/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind.h: post hoc user-stack unwinding of one sample into PCs (module unwind).
 *
 * PUBLIC INTERFACES
 *   unwind_find_map_fn   the caller's model of a process's mappings (struct maplog_map)
 *   enum unwind_outcome, unwind_outcome_name()
 *   struct unwind_stats
 *   struct unwind_ctx: unwind_ctx__new(), __free(), __unwind(), __flush(), __close_files(),
 *   __stats()
 *   unwind_block_all_signals()
 *   UNWIND_REGS_USER_MASK, UNWIND_NR_REGS, UNWIND_REGS_ABI_64, UNWIND_ELF_BUDGET_DEFAULT,
 *   UNWIND_FDS_MAX
 *
 * IMPLEMENTATION NOTES
 *   The unwinder turns the REGS_USER + STACK_USER snapshot of one x86-64 sample
 *   (struct rec_sample) into user PCs, innermost first, with libunwind's remote
 *   interface.  Memory reads are served from the stack snapshot or from the bytes
 *   of the ELF file that backs the address; nothing is read from the live process.
 *   ELF images are opened once, checked against the mapping's device and inode,
 *   mmapped read-only, cached by (dev, inode) across processes and evicted LRU
 *   under a byte budget.  A partial unwind is a result: the PCs found so far plus
 *   an outcome saying why the walk stopped.  The daemon counts outcomes; this
 *   module never logs above debug level.
 *
 *   One thread (the pipeline's) owns a struct unwind_ctx and makes every call on
 *   it, the find_map callback included.
 */
#ifndef HWPMCD_UNWIND_H
#define HWPMCD_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "hwpmcd/maplog.h"
#include "hwpmcd/record.h"

/*
 * The sample_regs_user mask the unwinder understands (perf's x86 enum: AX..SS and
 * R8..R15, without the segment registers DS ES FS GS).  rec_sample.regs[] then
 * holds UNWIND_NR_REGS values: AX BX CX DX SI DI BP SP IP FLAGS CS SS R8..R15.
 */
#define UNWIND_REGS_USER_MASK 0xff0fffULL
#define UNWIND_NR_REGS	      20
/* rec_sample.regs_abi of a 64-bit task (PERF_SAMPLE_REGS_ABI_64); 0 means no registers. */
#define UNWIND_REGS_ABI_64 2
/* Descriptors of ELF files one unwinder keeps open at most (for the daemon's fd budget). */
#define UNWIND_FDS_MAX 16

/* The ELF cache budget used when unwind_ctx__new() is given 0. */
#define UNWIND_ELF_BUDGET_DEFAULT ((size_t)256 << 20)

/*
 * Find the mapping that holds @addr in process @pid, or NULL (the session passes
 * maplog__find_map(); struct maplog_map is the one model of a mapping).  Called by the
 * unwinder, on the caller's thread, during unwind_ctx__unwind() only.  The returned
 * mapping and its path are borrowed and must stay valid until that call returns.
 */
typedef const struct maplog_map *(*unwind_find_map_fn)(void *ctx, int32_t pid, uint64_t addr);

enum unwind_outcome {
	UNWIND_COMPLETE = 0, /* reached the outermost frame */
	UNWIND_TRUNCATED, /* ran out of snapshot: the kernel's dyn_size equals the requested size */
	UNWIND_NO_INFO,	  /* no unwind info for a PC, and no frame-pointer step either */
	UNWIND_NO_MAP,	  /* a PC or a read in no known mapping (or past the valid stack) */
	UNWIND_REPLACED,  /* the file's dev/inode no longer match the mapping: never unwound */
	UNWIND_ERROR,	  /* libunwind failed otherwise, or a register set we cannot use */
	UNWIND_NO_REGS,	  /* no user registers (kernel thread) */
	UNWIND_DEPTH,	  /* stopped at the caller's max */
	/*
	 * The kernel copied no byte of the user stack (dyn_size 0): a kernel-mode
	 * sample inside execve() after the old address space was replaced (the
	 * session passes such a sample's snapshot as empty when the kernel copied
	 * the new address space's bytes: maplog__sample()), or of a task whose
	 * address space is gone (exit).  Only the sampled IP is known.
	 */
	UNWIND_NO_STACK,
	/* unwind info reads memory below the stack pointer, which no snapshot holds */
	UNWIND_BELOW_SP,
	UNWIND_OUTCOME_MAX
};

struct unwind_stats {
	uint64_t samples;		       /* unwind_ctx__unwind() calls that got a result */
	uint64_t outcomes[UNWIND_OUTCOME_MAX]; /* samples by outcome */
	uint64_t fp_steps;		       /* frame-pointer fallbacks taken */
	/* of leaves without unwind info: [RSP] taken (no frame), or neither return address */
	uint64_t fp_frameless, fp_refused;
	uint64_t epilogue_regs; /* registers read live: popped by an epilogue, slot under SP */
	uint64_t own_tables;		       /* search tables built from .eh_frame (no hdr) */
	uint64_t elf_opened;		       /* images opened and parsed */
	uint64_t elf_evicted;		       /* images dropped by the byte budget */
	/* .eh_frame without .eh_frame_hdr larger than the budget (and 16 MiB): not indexed */
	uint64_t elf_too_big;
	uint64_t elf_bytes;		       /* bytes of files held now (the chunks read) */
	uint64_t elf_reads;		       /* chunks read from files (pread) */
	uint64_t elf_dropped; /* chunks dropped to keep the budget while every image was in use */
};

struct unwind_ctx;

/*
 * unwind_ctx__new: an unwinder whose ELF cache holds at most @elf_budget_bytes of
 * file bytes (0: UNWIND_ELF_BUDGET_DEFAULT): only the chunks of each file that
 * unwinding read (headers, the parts of the unwind tables lookups touched, code
 * bytes), so a file larger than the budget is unwound too.  The budget is exceeded
 * by at most one chunk.  @find_map and
 * @find_ctx are borrowed for the life of the context.  It reads this process's own
 * vDSO once, for every "[vdso]" mapping.  Returns 0 with *ret_ctx set, -EINVAL (no
 * find_map or ret_ctx) or -ENOMEM.  The caller owns the context (unwind_ctx__free())
 * and gives it to the one thread that will use it.
 */
int unwind_ctx__new(size_t elf_budget_bytes, unwind_find_map_fn find_map, void *find_ctx,
		    struct unwind_ctx **ret_ctx);

/*
 * unwind_ctx__free: free every image (closing its descriptor) and @u (owner thread).
 * NULL is accepted.
 */
void unwind_ctx__free(struct unwind_ctx *u);

/*
 * unwind_ctx__unwind: unwind one sample of process @pid.  Writes at most @max user
 * PCs to @pcs, innermost first (pcs[0] is the sampled user IP, then return
 * addresses), returns how many (>= 0) and sets *ret_outcome to why the walk
 * stopped; a partial unwind is a result, not an error.  @s and its stack are
 * borrowed for the call only and never copied.  Only 64-bit tasks are unwound:
 * regs_abi 0 or an nr_regs other than UNWIND_NR_REGS give 0 PCs and UNWIND_NO_REGS;
 * another ABI (a 32-bit task) gives the sampled IP and UNWIND_ERROR.  The first sample that needs
 * an ELF file opens it and reads its headers; a sample that needs a part of a file
 * not read before reads it (UNWIND_CHUNK bytes); other samples allocate nothing and
 * make no syscalls of their own (libunwind 1.6.2 itself calls rt_sigprocmask around its
 * cache lock, twice per frame).  Returns -EINVAL only for a programming error (a
 * NULL @u, @s or @ret_outcome, or NULL @pcs with @max > 0), leaving *ret_outcome
 * alone.  Owner thread only; @find_map is called from inside.
 */
int unwind_ctx__unwind(struct unwind_ctx *u, int32_t pid, const struct rec_sample *s, uint64_t *pcs,
		       uint32_t max, enum unwind_outcome *ret_outcome);

/*
 * unwind_ctx__flush: the mappings of process @pid changed (mmap, munmap, exec):
 * drop libunwind's cached procedure info for it and forget the files that could
 * not be opened for it, so that they are tried again.  Cached ELF images stay:
 * they are keyed by file identity, which a remapping does not change.  Owner thread.
 */
void unwind_ctx__flush(struct unwind_ctx *u, int32_t pid);

/*
 * unwind_ctx__close_files: close the descriptors of the files the image cache holds
 * open (their images and chunks stay; a file is reopened, checked against its
 * dev/inode, when a part not read yet is needed).  For a caller that goes idle, so
 * that it keeps no file open on a file system someone may want to unmount.  Owner
 * thread.
 */
void unwind_ctx__close_files(struct unwind_ctx *u);

/*
 * unwind_block_all_signals: block every signal in the calling thread for good and
 * let libunwind's signal masking around its cache lock skip its system calls
 * there (unwind-sigmask.c).  For threads that unwind and take no signals (the
 * session worker).  Returns 0 or a negative errno.
 */
int unwind_block_all_signals(void);

/*
 * unwind_ctx__stats: counters since unwind_ctx__new() (elf_bytes: file bytes held now,
 * the vDSO copy not included); borrowed, valid while @u lives, read on the owner thread.
 */
const struct unwind_stats *unwind_ctx__stats(const struct unwind_ctx *u);

/* unwind_outcome_name: a static lowercase name ("complete", "no-info", ...), "?" if unknown;
 * any thread. */
const char *unwind_outcome_name(enum unwind_outcome o);

#endif /* HWPMCD_UNWIND_H */
