/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind-step.c: libunwind remote unwinding of one sample over its stack snapshot.
 *
 * PUBLIC INTERFACES
 *   unwind_ctx__new(), unwind_ctx__free(), unwind_ctx__unwind(), unwind_ctx__flush(),
 *   unwind_ctx__stats(), unwind_outcome_name()  (see include/hwpmcd/unwind.h)
 *
 * IMPLEMENTATION NOTES
 *   libunwind's remote interface is driven by our accessors, which receive a
 *   struct walk (the sample being unwound, on the caller's stack) as their
 *   argument.  access_reg serves the sampled registers, translated from perf's
 *   order to UNW_X86_64_*.  access_mem serves the stack snapshot [SP, SP +
 *   dyn_size) and otherwise the bytes of the file behind the model's mapping of
 *   the address (file offset = addr - start + pgoff), bounds-checked against the
 *   file size.  The files this sample already resolved a PC in are also read
 *   through their PT_LOAD tables before the model is asked: the collector records
 *   only executable mappings, but .eh_frame_hdr and .eh_frame usually sit in the
 *   read-only segment next to them, and this saves a callback per byte of table
 *   that libunwind reads.  Anything else fails and records why: just past a full
 *   snapshot (within 1 MiB) is UNWIND_TRUNCATED, a file whose identity changed is
 *   UNWIND_REPLACED, the rest UNWIND_NO_MAP.
 *
 *   find_proc_info looks the PC up in the image's .eh_frame_hdr table with
 *   libunwind's exported but undeclared _Ux86_64_dwarf_search_unwind_table
 *   (declared here as Linux perf declares it) and a UNW_INFO_FORMAT_REMOTE_TABLE
 *   descriptor in the target's address space.  It never returns -UNW_ENOINFO:
 *   that code makes libunwind guess a frame on its own (its RBP heuristic sets
 *   the new CFA to the old one plus 16 and reports a failed guess as the end of
 *   the stack), which would pass guesses off as complete unwinds.  Instead it
 *   stops the step and flags the walk, and the walk does the fallback itself:
 *   a sigreturn trampoline without CFI (musl's) is stepped through the ucontext
 *   at SP, any other PC without info by one frame-pointer step whose saved RBP
 *   and return address must lie in the snapshot (counted in fp_steps); from the
 *   leaf only if the call before that return address can reach the leaf, else by
 *   [RSP] (a leaf without a frame: fp_frameless) or not at all (fp_refused), so
 *   that no edge is printed that the binary cannot make (leaf_frame_check()).  The
 *   cursor is then restarted on the recovered registers; the first lookup for a
 *   return address reached that way uses PC - 1, as libunwind does for callers.
 *   .debug_frame is not used: dwarf_find_debug_frame is not exported by this
 *   libunwind, so objects that have only .debug_frame take the frame-pointer step.
 *
 *   Each walk checks that SP strictly grows from frame to frame (every call
 *   pushes a return address), which bounds the walk on hostile stacks together
 *   with @max.  One step is bounded too: libunwind 1.6.2 evaluates the DWARF
 *   expressions of a file's CFI with no limit on backward DW_OP_skip/DW_OP_bra,
 *   so an expression that branches to itself loops forever, and any user can
 *   put one in a library a session unwinds through.  It reads every opcode
 *   through access_mem, so a step that makes more than STEP_READS_MAX reads
 *   (real steps make about 80) is taken as such a loop: every further read of
 *   the step fails, libunwind returns the error, and the walk ends with
 *   UNWIND_ERROR.  libunwind 1.6.2 also takes a CIE's return-address column as
 *   an index into its 17 per-frame register locations without a check: column
 *   17 gives garbage PCs that differ between its cached and uncached paths, 100
 *   a stack address of the daemon as a PC, a ULEB128 column of 2^21 a SIGSEGV.
 *   So before libunwind parses an FDE, find_proc_info looks the FDE and its CIE
 *   up itself, as libunwind will and through the same reads (cie_column_ok()),
 *   and an FDE whose CIE names a column libunwind does not have is treated as
 *   no unwind info.  libunwind's per-IP cache is used (UNW_CACHE_GLOBAL, about 4x),
 *   with one address space per recent pid: the cache is keyed by IP only, and
 *   the same IP means different code in different processes.  unwind_ctx__flush()
 *   flushes a pid's space when its mappings change; a slot reused for another
 *   pid is flushed too.  libunwind's global cache takes a lock, and this build of
 *   libunwind blocks signals around it with sigprocmask(2), twice per frame
 *   (UNW_CACHE_PER_THREAD, lock-free, is not compiled into it and falls back to
 *   the global cache); unwind-sigmask.c makes those calls free in a thread that
 *   blocks every signal, which took the daemon from about 150k to about 500k
 *   unwound samples per second here.
 */
#include <errno.h>
#include <libunwind.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind-int.h"

/* Not in libunwind's public headers, exported by libunwind-x86_64 (perf declares it so). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);

/* Address spaces kept for recent pids (each holds libunwind's per-IP cache). */
#define ASPACE_MAX 32
/* Images one sample may resolve PCs in, for reads outside the model's mappings. */
#define RECENT_MAX 8
/* Mappings whose unwind tables an address space's cache may hold rules from. */
#define SEEN_MAX 32
/* Entry code this long without unwind info is still the process's first frame. */
#define ENTRY_SPAN 64
/* A read this far past a full snapshot means the snapshot was too small. */
#define TRUNC_SLACK (1u << 20)
/*
 * Reads of the target one step may make (see IMPLEMENTATION NOTES): about 400
 * times what a real step needs, so CFA programs of unusual length still unwind,
 * while a looping DWARF expression costs one sample a millisecond or so.
 */
#define STEP_READS_MAX (1u << 15)
/* DWARF registers libunwind 1.6.2 keeps per x86-64 frame (its DWARF_NUM_PRESERVED_REGS). */
#define DWARF_REGS 17
/* A CIE augmentation string or LEB128 longer than this is refused (see cie_column_ok()). */
#define CIE_AUG_MAX 64
#define LEB_MAX	    10
/* A read this far below SP is a stack slot under SP, not a stray address. */
#define BELOW_SP_SPAN (64u << 10)
/* Callee-saved registers whose slots an epilogue may have popped already. */
#define EPILOGUE_REGS 6
/* UNW_X86_64_RAX .. UNW_X86_64_RIP */
#define NREGS 17

/* perf's regs[] index (mask 0xff0fff) for each UNW_X86_64_* register number. */
static const uint8_t perf_index[NREGS] = {
	[UNW_X86_64_RAX] = 0,  [UNW_X86_64_RDX] = 3,  [UNW_X86_64_RCX] = 2,  [UNW_X86_64_RBX] = 1,
	[UNW_X86_64_RSI] = 4,  [UNW_X86_64_RDI] = 5,  [UNW_X86_64_RBP] = 6,  [UNW_X86_64_RSP] = 7,
	[UNW_X86_64_R8] = 12,  [UNW_X86_64_R9] = 13,  [UNW_X86_64_R10] = 14, [UNW_X86_64_R11] = 15,
	[UNW_X86_64_R12] = 16, [UNW_X86_64_R13] = 17, [UNW_X86_64_R14] = 18, [UNW_X86_64_R15] = 19,
	[UNW_X86_64_RIP] = 8,
};
#define PERF_REG_IP 8
#define PERF_REG_SP 7

/* struct sigcontext (uc_mcontext) order: r8..r15 di si bp bx dx ax cx sp ip, for UNW_* */
static const uint8_t sigctx_unw[NREGS] = {
	UNW_X86_64_R8,	UNW_X86_64_R9,	UNW_X86_64_R10, UNW_X86_64_R11, UNW_X86_64_R12,
	UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15, UNW_X86_64_RDI, UNW_X86_64_RSI,
	UNW_X86_64_RBP, UNW_X86_64_RBX, UNW_X86_64_RDX, UNW_X86_64_RAX, UNW_X86_64_RCX,
	UNW_X86_64_RSP, UNW_X86_64_RIP,
};
/* offsetof(ucontext_t, uc_mcontext) on x86-64: uc_flags, uc_link, stack_t (24 bytes). */
#define UC_MCONTEXT_OFF 40

/*
 * libunwind's cache keeps, for a cached IP, the addresses of DWARF expressions in
 * the image's .eh_frame (a signal trampoline's CFI is all expressions) and reads
 * them again on every later step, without asking find_proc_info: so an address
 * space remembers the mappings it found unwind info in (seen[]), and a read that
 * nothing else serves is tried through their images.  When seen[] is full the
 * cache is flushed with it, so every cached rule comes from a mapping in seen[].
 */
struct unwind_aspace {
	unw_addr_space_t as;
	int32_t pid;
	bool used;
	uint64_t last;
	struct maplog_map seen[SEEN_MAX];
	unsigned int nseen;
};

struct recent {
	struct unwind_image *img;
	uint64_t bias;
};

/* One sample being unwound: libunwind's accessor argument, on the caller's stack. */
struct walk {
	struct unwind_ctx *u;
	int32_t pid;
	const uint8_t *stack;
	uint64_t sp, dyn; /* the snapshot is [sp, sp + dyn) */
	bool full;	  /* dyn == requested size: the kernel had more stack to give */
	bool no_stack;	  /* a snapshot was asked for, and the kernel copied nothing */
	/*
	 * Slots below SP whose values are the live registers (see epilogue_note()):
	 * after the pops of an epilogue, the CFI still places the restored registers
	 * in their old slots, which are under SP now and in no snapshot.
	 */
	uint64_t popped_addr[EPILOGUE_REGS], popped_val[EPILOGUE_REGS];
	unsigned int npopped;
	uint64_t reg[NREGS];
	uint32_t reads; /* walk_read() calls of this step, at most STEP_READS_MAX */
	const struct maplog_map *last_map;
	struct unwind_aspace *asp;
	const uint8_t *own_table; /* the own search table find_proc_info is searching */
	uint64_t own_len;
	struct recent recent[RECENT_MAX];
	unsigned int nrecent;
	/* per step */
	bool failed;
	enum unwind_outcome fail; /* the first reason of this step */
	bool want_fallback;	  /* find_proc_info had no table for the PC */
	bool adjust;		  /* look adjust_ip up as adjust_ip - 1 (a return address) */
	uint64_t adjust_ip;
};

static void walk_fail(struct walk *w, enum unwind_outcome o)
{
	if (!w->failed) {
		w->failed = true;
		w->fail = o;
	}
}

static bool snap_read(const struct walk *w, uint64_t addr, uint64_t *ret_val)
{
	if (w->dyn < 8 || addr < w->sp || addr - w->sp > w->dyn - 8)
		return false;
	memcpy(ret_val, w->stack + (addr - w->sp), 8);
	return true;
}

/* A read outside the snapshot that just missed its end, when the kernel had more. */
static bool past_full_snapshot(const struct walk *w, uint64_t addr)
{
	return w->full && addr >= w->sp && addr - w->sp < w->dyn + TRUNC_SLACK;
}

/*
 * Why a read at @addr that nothing could serve failed, judged by where it lies
 * relative to the snapshot: just past a full one (truncated), in the part the
 * kernel could not copy at all (no-stack), below the stack pointer (below-sp,
 * e.g. CFI that reads a slot under SP), or elsewhere (no-map).
 */
static enum unwind_outcome stack_miss(const struct walk *w, uint64_t addr)
{
	if (past_full_snapshot(w, addr))
		return UNWIND_TRUNCATED;
	if (w->no_stack && addr >= w->sp && addr - w->sp < TRUNC_SLACK)
		return UNWIND_NO_STACK;
	if (addr < w->sp && w->sp - addr <= BELOW_SP_SPAN)
		return UNWIND_BELOW_SP;
	return UNWIND_NO_MAP;
}

static const struct maplog_map *walk_find_map(struct walk *w, uint64_t addr)
{
	const struct maplog_map *m = w->last_map;

	if (m && addr >= m->start && addr < m->end)
		return m;
	m = w->u->find_map(w->u->find_ctx, w->pid, addr);
	/* A model that answers with a mapping not holding addr is treated as no answer. */
	if (!m || addr < m->start || addr >= m->end)
		return NULL;
	w->last_map = m;
	return m;
}

static void walk_note_image(struct walk *w, struct unwind_image *img, uint64_t bias)
{
	for (unsigned int i = 0; i < w->nrecent; i++) {
		if (w->recent[i].img == img && w->recent[i].bias == bias)
			return;
	}
	if (w->nrecent < RECENT_MAX) {
		w->recent[w->nrecent].img = img;
		w->recent[w->nrecent].bias = bias;
		w->nrecent++;
	}
}

/* Read through the model's mapping @m: file offset = addr - start + pgoff. */
static int map_read(struct walk *w, const struct maplog_map *m, uint64_t addr, uint64_t *ret_val)
{
	struct unwind_image *img;
	int r;

	r = unwind_images_get(w->u, w->pid, m, &img);
	if (r < 0)
		return r;
	if (unwind_image_read(w->u, img, addr - m->start + m->pgoff, ret_val))
		return 0;
	return img->gone ? -ESTALE : -ERANGE; /* gone: it shrank since it was opened */
}

/* Drop what libunwind cached for @a, and with it the mappings its rules came from. */
static void aspace_flush(struct unwind_aspace *a)
{
	unw_flush_cache(a->as, 0, 0);
	a->nseen = 0;
}

/* Remember that the cache of @a may now hold rules from the tables of mapping @m. */
static void aspace_note(struct unwind_aspace *a, const struct maplog_map *m)
{
	for (unsigned int i = 0; i < a->nseen; i++) {
		if (a->seen[i].start == m->start && a->seen[i].dev == m->dev &&
		    a->seen[i].inode == m->inode)
			return;
	}
	if (a->nseen == SEEN_MAX)
		aspace_flush(a);
	a->seen[a->nseen++] = *m;
}

/* A read of unwind tables that libunwind's cache points into (see struct unwind_aspace). */
static bool seen_read(struct walk *w, uint64_t addr, uint64_t *ret_val)
{
	for (unsigned int i = 0; i < w->asp->nseen; i++) {
		const struct maplog_map *m = &w->asp->seen[i];
		struct unwind_image *img;
		uint64_t bias, off;

		if (unwind_images_get(w->u, w->pid, m, &img) < 0 || !unwind_image_bias(img, m, &bias))
			continue;
		if (unwind_image_vaddr_off(img, addr - bias, &off) &&
		    unwind_image_read(w->u, img, off, ret_val)) {
			walk_note_image(w, img, bias);
			return true;
		}
	}
	return false;
}

/* The 8 bytes at @addr of the sampled process, or false with the reason recorded. */
static bool walk_read(struct walk *w, uint64_t addr, uint64_t *ret_val)
{
	const struct maplog_map *m = w->last_map;
	int r = -ENODATA;

	/* A step this long is libunwind looping in a hostile DWARF expression. */
	if (w->reads == STEP_READS_MAX) {
		walk_fail(w, UNWIND_ERROR);
		return false;
	}
	w->reads++;
	if (snap_read(w, addr, ret_val))
		return true;
	for (unsigned int i = 0; i < w->npopped; i++) {
		if (w->popped_addr[i] == addr) {
			*ret_val = w->popped_val[i];
			return true;
		}
	}
	if (addr >= UNWIND_OWN_TABLE_ADDR && w->own_table) {
		/* The image's own search table (see struct unwind_image), zero-padded. */
		uint64_t off = addr - UNWIND_OWN_TABLE_ADDR;

		if (off < w->own_len) {
			*ret_val = 0;
			memcpy(ret_val, w->own_table + off,
			       w->own_len - off < 8 ? w->own_len - off : 8);
			return true;
		}
	}
	if (m && addr >= m->start && addr < m->end) {
		r = map_read(w, m, addr, ret_val);
		if (r == 0)
			return true;
	}
	/*
	 * The images this sample resolved PCs in, through their PT_LOADs, before asking
	 * the model: their .eh_frame_hdr and .eh_frame usually sit in a read-only
	 * segment that a model of executable mappings does not have.
	 */
	for (unsigned int i = 0; r != -ESTALE && i < w->nrecent; i++) {
		uint64_t off;

		if (unwind_image_vaddr_off(w->recent[i].img, addr - w->recent[i].bias, &off) &&
		    unwind_image_read(w->u, w->recent[i].img, off, ret_val))
			return true;
		if (w->recent[i].img->gone)
			r = -ESTALE; /* it shrank since it was opened */
	}
	if (r != -ESTALE) {
		m = walk_find_map(w, addr);
		if (m) {
			r = map_read(w, m, addr, ret_val);
			if (r == 0)
				return true;
		}
	}
	if (r != -ESTALE && seen_read(w, addr, ret_val))
		return true;
	if (r == -ESTALE)
		walk_fail(w, UNWIND_REPLACED);
	else
		walk_fail(w, stack_miss(w, addr));
	return false;
}

/*
 * A reader of target bytes that reads as libunwind's remote accessors do: each byte
 * through the aligned 8-byte word that holds it.  After a failed read it reads zeros
 * and ok stays false.
 */
struct probe {
	struct walk *w;
	uint64_t addr;
	bool ok;
};

static uint8_t probe_u8(struct probe *p)
{
	uint64_t word;
	unsigned int shift = 8 * (unsigned int)(p->addr & 7);

	if (!p->ok || !walk_read(p->w, p->addr & ~(uint64_t)7, &word)) {
		p->ok = false;
		return 0;
	}
	p->addr++;
	return (uint8_t)(word >> shift);
}

/* @n (at most 8) bytes, little-endian. */
static uint64_t probe_le(struct probe *p, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)probe_u8(p) << (8 * i);
	return v;
}

/* An unsigned or signed LEB128 (only the unsigned value is kept); false if too long. */
static bool probe_leb(struct probe *p, uint64_t *ret_v)
{
	uint64_t v = 0;
	uint8_t c;

	for (unsigned int i = 0; i < LEB_MAX; i++) {
		c = probe_u8(p);
		v |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80) || !p->ok) {
			*ret_v = v;
			return true;
		}
	}
	return false;
}

/*
 * Whether the FDE libunwind's remote table lookup will take for @look in @di has a
 * CIE whose return-address column libunwind can index (see IMPLEMENTATION NOTES).
 * The lookup is libunwind 1.6.2's: a binary search over the (int32 start, int32
 * fde) pairs for the last start <= (int32)(look - segbase), the FDE at segbase +
 * fde, its CIE at its CIE pointer field minus the pointer (32- or 64-bit DWARF), and
 * in the CIE: length, id, version, augmentation string, code and data alignment,
 * then the column (a byte in version 1, else a ULEB128).  The reads are libunwind's
 * own, in its order, and the walk's read state is restored afterwards, so that
 * libunwind sees exactly the bytes checked here.  True when a read fails (libunwind
 * fails on the same read) or the lookup finds nothing; false for a bad column, an
 * overlong field, or an "FDE" that is a CIE (libunwind would then use a proc info
 * it never filled in).
 */
static bool cie_column_ok(struct walk *w, const unw_dyn_info_t *di, uint64_t look)
{
	const struct maplog_map *last_map = w->last_map;
	unsigned int nrecent = w->nrecent;
	bool failed = w->failed;
	enum unwind_outcome fail = w->fail;
	struct probe p = { .w = w, .ok = true };
	uint64_t segbase = di->u.rti.segbase, lo = 0, hi, mid, fde, cie, len, v, col = 0;
	int32_t rel = (int32_t)(look - segbase);
	uint8_t version;
	bool ok = true;

	hi = di->u.rti.table_len * sizeof(unw_word_t) / 8;
	while (p.ok && lo < hi) {
		mid = (lo + hi) / 2;
		p.addr = di->u.rti.table_data + mid * 8;
		if (rel < (int32_t)(uint32_t)probe_le(&p, 4))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!p.ok || hi == 0)
		goto out;
	p.addr = di->u.rti.table_data + (hi - 1) * 8 + 4;
	fde = segbase + (uint64_t)(int64_t)(int32_t)(uint32_t)probe_le(&p, 4);
	p.addr = fde;
	len = probe_le(&p, 4);
	if (!p.ok || len == 0)
		goto out; /* libunwind: no info */
	if (len != 0xffffffffu) {
		v = p.addr;
		cie = v - (uint64_t)(int64_t)(int32_t)(uint32_t)probe_le(&p, 4);
	} else {
		(void)probe_le(&p, 8);
		v = p.addr;
		cie = v - probe_le(&p, 8);
	}
	if (p.ok && cie == v) {
		ok = false; /* a CIE id where the FDE's CIE pointer belongs */
		goto out;
	}
	p.addr = cie;
	len = probe_le(&p, 4);
	if (len == 0xffffffffu) { /* 64-bit DWARF: the length and the id in 8 bytes each */
		(void)probe_le(&p, 8);
		(void)probe_le(&p, 8);
	} else {
		(void)probe_le(&p, 4); /* the id */
	}
	version = probe_u8(&p);
	for (unsigned int n = 0; probe_u8(&p) != 0 && p.ok; n++) {
		if (n == CIE_AUG_MAX) {
			ok = false;
			goto out;
		}
	}
	if (!probe_leb(&p, &v) || !probe_leb(&p, &v)) { /* code and data alignment */
		ok = false;
		goto out;
	}
	if (version == 1) {
		col = probe_u8(&p);
	} else if (!probe_leb(&p, &col)) {
		ok = false;
		goto out;
	}
	ok = !p.ok || col < DWARF_REGS;
out:
	w->last_map = last_map;
	w->nrecent = nrecent;
	w->failed = failed;
	w->fail = fail;
	return ok;
}

static int acc_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			      int need_unwind_info, void *arg)
{
	struct walk *w = arg;
	const struct maplog_map *m;
	struct unwind_image *img;
	unw_dyn_info_t di;
	uint64_t look = ip, bias;
	int r;

	if (w->adjust && ip == w->adjust_ip && ip > 0)
		look = ip - 1;
	m = walk_find_map(w, look);
	if (!m) {
		walk_fail(w, UNWIND_NO_MAP);
		return -UNW_ESTOPUNWIND;
	}
	r = unwind_images_get(w->u, w->pid, m, &img);
	if (r == -ENODATA) {
		/* Executable memory without a file (JIT): only frame pointers can help. */
		w->want_fallback = true;
		return -UNW_ESTOPUNWIND;
	}
	if (r == -ESTALE) {
		walk_fail(w, UNWIND_REPLACED);
		return -UNW_ESTOPUNWIND;
	}
	if (r < 0 || !unwind_image_bias(img, m, &bias)) {
		/* The file is gone, unreadable, not ELF, or does not fit the mapping. */
		walk_fail(w, UNWIND_NO_INFO);
		return -UNW_ESTOPUNWIND;
	}
	walk_note_image(w, img, bias);
	if (!img->has_hdr) {
		w->want_fallback = true;
		return -UNW_ESTOPUNWIND;
	}
	aspace_note(w->asp, m);
	memset(&di, 0, sizeof(di));
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.u.rti.segbase = img->hdr_vaddr + bias;
	di.u.rti.table_data = img->own_table ? UNWIND_OWN_TABLE_ADDR : img->table_vaddr + bias;
	/* 8-byte (initial_loc, fde) pairs, counted in words as libunwind wants. */
	di.u.rti.table_len = img->fde_count * 8 / sizeof(unw_word_t);
	w->own_table = (const uint8_t *)img->own_table;
	w->own_len = img->own_table ? img->fde_count * 8 : 0;
	if (!cie_column_ok(w, &di, look) && !img->gone) {
		/* A CIE libunwind would index its registers out of bounds with: no info. */
		w->own_table = NULL;
		w->want_fallback = true;
		return -UNW_ESTOPUNWIND;
	}
	r = UNW_OBJ(dwarf_search_unwind_table)(as, look, &di, pi, need_unwind_info, arg);
	w->own_table = NULL;
	if (img->gone) {
		/* Its tables could not be read: the file shrank since it was opened. */
		walk_fail(w, UNWIND_REPLACED);
		return -UNW_ESTOPUNWIND;
	}
	if (r == -UNW_ENOINFO) {
		w->want_fallback = true;
		return -UNW_ESTOPUNWIND;
	}
	if (r < 0) {
		walk_fail(w, UNWIND_ERROR); /* kept only if no read failure came first */
		return -UNW_ESTOPUNWIND;
	}
	return 0;
}

static void acc_put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* dwarf_search_unwind_table's unwind_info comes from libunwind's own pool. */
	(void)as;
	(void)pi;
	(void)arg;
}

static int acc_get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	(void)as;
	(void)dilap;
	(void)arg;
	return -UNW_ENOINFO;
}

static int acc_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
			  void *arg)
{
	uint64_t v;

	(void)as;
	if (write)
		return -UNW_EREADONLYREG;
	if (!walk_read(arg, addr, &v))
		return -UNW_EINVAL;
	*valp = v;
	return 0;
}

static int acc_access_reg(unw_addr_space_t as, unw_regnum_t regnum, unw_word_t *valp, int write,
			  void *arg)
{
	const struct walk *w = arg;

	(void)as;
	if (write)
		return -UNW_EREADONLYREG;
	if (regnum < 0 || regnum >= NREGS)
		return -UNW_EBADREG;
	*valp = w->reg[regnum];
	return 0;
}

static int acc_access_fpreg(unw_addr_space_t as, unw_regnum_t regnum, unw_fpreg_t *fpvalp,
			    int write, void *arg)
{
	(void)as;
	(void)regnum;
	(void)fpvalp;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int acc_resume(unw_addr_space_t as, unw_cursor_t *cp, void *arg)
{
	(void)as;
	(void)cp;
	(void)arg;
	return -UNW_EINVAL;
}

static int acc_get_proc_name(unw_addr_space_t as, unw_word_t addr, char *bufp, size_t buf_len,
			     unw_word_t *offp, void *arg)
{
	(void)as;
	(void)addr;
	(void)bufp;
	(void)buf_len;
	(void)offp;
	(void)arg;
	return -UNW_EINVAL;
}

/* Not const: unw_create_addr_space() takes a non-const pointer (and copies it). */
static unw_accessors_t accessors = {
	.find_proc_info = acc_find_proc_info,
	.put_unwind_info = acc_put_unwind_info,
	.get_dyn_info_list_addr = acc_get_dyn_info_list_addr,
	.access_mem = acc_access_mem,
	.access_reg = acc_access_reg,
	.access_fpreg = acc_access_fpreg,
	.resume = acc_resume,
	.get_proc_name = acc_get_proc_name,
};

static struct unwind_aspace *aspace_get(struct unwind_ctx *u, int32_t pid)
{
	struct unwind_aspace *victim = NULL;

	for (unsigned int i = 0; i < u->naspaces; i++) {
		struct unwind_aspace *a = &u->aspaces[i];

		if (a->used && a->pid == pid) {
			a->last = ++u->aspace_clock;
			return a;
		}
		if (!victim || !a->used || (victim->used && a->last < victim->last))
			victim = a;
	}
	if (!victim)
		return NULL;
	if (!victim->as) {
		victim->as = unw_create_addr_space(&accessors, 0);
		if (!victim->as)
			return NULL;
		(void)unw_set_caching_policy(victim->as, UNW_CACHE_GLOBAL);
	} else {
		/* The cached rules belong to the previous pid's code. */
		aspace_flush(victim);
	}
	victim->used = true;
	victim->pid = pid;
	victim->last = ++u->aspace_clock;
	return victim;
}

/* Read a register of the cursor's frame, 0 when libunwind does not know it. */
static uint64_t cursor_reg(unw_cursor_t *c, int regnum)
{
	unw_word_t v;

	return unw_get_reg(c, regnum, &v) == 0 ? v : 0;
}

/* mov $15, %rax; syscall: the rt_sigreturn trampoline (glibc's and musl's __restore_rt). */
static bool is_sigreturn(struct walk *w, uint64_t ip)
{
	uint64_t w0, w1;

	return walk_read(w, ip, &w0) && walk_read(w, ip + 8, &w1) && w0 == 0x0f0000000fc0c748ULL &&
	       (w1 & 0xff) == 0x05;
}

/* The image mapped at @ip and its load bias, if it has a file (or is the vDSO) that fits. */
static struct unwind_image *image_at(struct walk *w, uint64_t ip, uint64_t *ret_bias)
{
	const struct maplog_map *m = walk_find_map(w, ip);
	struct unwind_image *img;

	if (!m || unwind_images_get(w->u, w->pid, m, &img) < 0 || !unwind_image_bias(img, m, ret_bias))
		return NULL;
	return img;
}

/*
 * Whether @ip is in the first bytes after its object's ELF entry point.  The
 * dynamic linker's _start (call _dl_start, then jump to the program) has no CFI in
 * glibc, unlike the program's own _start, whose CFI marks the end of the stack:
 * a frame there is where the process began, so the walk is complete.
 */
static bool at_entry(struct walk *w, uint64_t ip)
{
	uint64_t bias;
	struct unwind_image *img = image_at(w, ip, &bias);

	if (!img || img->e_entry == 0)
		return false;
	return ip >= img->e_entry + bias && ip - (img->e_entry + bias) <= ENTRY_SPAN;
}

/*
 * Whether @ip lies in a _init or _fini of glibc's shape (unwind_image.stubs): then
 * *@ret_cfa is its frame's CFA, SP + 8 before the sub and at the ret, SP + 16
 * between (a return address there is after a call, so never on the sub or ret).
 */
static bool stub_cfa(struct walk *w, uint64_t ip, uint64_t sp, uint64_t *ret_cfa)
{
	uint64_t bias;
	struct unwind_image *img = image_at(w, ip, &bias);

	for (uint32_t i = 0; img && i < img->nstubs; i++) {
		const struct unwind_stub *st = &img->stubs[i];
		uint64_t off = ip - bias - st->vaddr;

		if (ip - bias < st->vaddr || off >= st->size)
			continue;
		*ret_cfa = sp + (off < st->body || off == st->size - 1 ? 8 : 16);
		return true;
	}
	return false;
}

/* The call instruction that ends at a return address (call_before()). */
enum call_kind {
	CALL_NONE = 0, /* no call ends there, or its bytes cannot be read */
	CALL_DIRECT,   /* call rel32: its target is known */
	CALL_INDIRECT  /* call through a register or memory (FF /2): any target */
};

/*
 * What call ends just before @ret, read from the code (a file's mapping; JIT code
 * has no bytes here: CALL_NONE).  CALL_DIRECT sets *@ret_target.
 */
static enum call_kind call_before(struct walk *w, uint64_t ret, uint64_t *ret_target)
{
	struct probe p = { .w = w, .addr = ret - 8, .ok = ret >= 8 };
	uint8_t b[8];
	bool failed = w->failed;
	enum unwind_outcome fail = w->fail;

	for (int i = 0; i < 8; i++)
		b[i] = probe_u8(&p);
	/* a probe, not a step: its failure is no outcome */
	w->failed = failed;
	w->fail = fail;
	if (!p.ok)
		return CALL_NONE;
	if (b[3] == 0xe8) { /* e8 rel32 */
		int32_t rel;

		memcpy(&rel, b + 4, 4);
		*ret_target = ret + (uint64_t)(int64_t)rel;
		return CALL_DIRECT;
	}
	/*
	 * ff /2 ending at ret: an optional REX prefix, ff, a ModRM with reg 2, then
	 * what the ModRM asks for (a SIB byte, an 8- or 32-bit displacement).
	 */
	for (int len = 2; len <= 8; len++) {
		int at = 8 - len, k = at;
		uint8_t modrm, mod, rm;
		int need;

		if ((b[k] & 0xf0) == 0x40 && k + 1 < 8)
			k++; /* REX */
		if (b[k] != 0xff || k + 1 >= 8)
			continue;
		modrm = b[k + 1];
		mod = modrm >> 6;
		rm = modrm & 7;
		if (((modrm >> 3) & 7) != 2)
			continue;
		need = 2; /* ff, ModRM */
		if (mod != 3 && rm == 4)
			need++; /* SIB */
		if (mod == 1)
			need += 1;
		else if (mod == 2 || (mod == 0 && rm == 5))
			need += 4;
		else if (mod == 0 && rm == 4 && k + 2 < 8 && (b[k + 2] & 7) == 5)
			need += 4; /* SIB with no base: disp32 */
		if (k - at + need == len)
			return CALL_INDIRECT;
	}
	return CALL_NONE;
}

/*
 * The leaf frame has no unwind table and its caller is found by frame pointer: but a
 * leaf that keeps no frame (JIT code, hand-written assembly) leaves RBP its caller's,
 * and [RBP + 8] is then the return address into the caller's caller: the caller
 * would be skipped, an edge the binary cannot make.  [RSP] is then the return
 * address.  So the step by RBP is taken only if the call before its return address
 * can reach the leaf: an indirect call, or a direct one whose target is at or
 * below the leaf's PC and no farther from it than the target of a call before
 * [RSP] (the leaf's own entry, when the leaf keeps no frame).  Otherwise [RSP] is
 * taken if a call that can reach the leaf precedes it, else the walk ends.
 * Returns 1 with *@ret_ra set to [RSP] (the frameless case), 0 for the step by
 * RBP, -1 to end the walk.
 */
static int leaf_frame_check(struct walk *w, uint64_t ip, uint64_t sp, uint64_t ra_bp,
			    uint64_t *ret_ra)
{
	uint64_t t_bp = 0, t_sp = 0, ra_sp = 0;
	enum call_kind k_bp = call_before(w, ra_bp, &t_bp), k_sp = CALL_NONE;
	bool sp_ok, bp_ok;

	if (snap_read(w, sp, &ra_sp) && ra_sp != 0 && ra_sp != ra_bp)
		k_sp = call_before(w, ra_sp, &t_sp);
	sp_ok = k_sp == CALL_INDIRECT || (k_sp == CALL_DIRECT && t_sp <= ip);
	bp_ok = k_bp == CALL_INDIRECT ||
		(k_bp == CALL_DIRECT && t_bp <= ip && !(k_sp == CALL_DIRECT && sp_ok && t_bp < t_sp));
	if (k_bp == CALL_NONE && k_sp == CALL_NONE)
		return 0; /* no code to judge by (JIT): as before */
	if (bp_ok)
		return 0;
	if (sp_ok) {
		*ret_ra = ra_sp;
		return 1;
	}
	return -1;
}

/*
 * The frame at the cursor has no unwind table.  Recover its caller's registers
 * into w->reg from the snapshot and restart the cursor there: through the
 * ucontext if the PC is a sigreturn trampoline, by the known shape of glibc's
 * _init and _fini, else by one frame-pointer step (none at an entry point:
 * UNWIND_COMPLETE).
 * Returns UNWIND_OUTCOME_MAX on success, else the outcome that ends the walk.
 */
static enum unwind_outcome fallback_step(struct walk *w, unw_addr_space_t as, unw_cursor_t *c,
					 bool leaf)
{
	uint64_t ip = cursor_reg(c, UNW_REG_IP), sp = cursor_reg(c, UNW_X86_64_RSP);
	uint64_t bp = cursor_reg(c, UNW_X86_64_RBP), saved_bp, ret, cfa;
	uint64_t regs[NREGS];

	if (is_sigreturn(w, ip)) {
		/* The handler returned into the trampoline: SP points at the ucontext. */
		for (unsigned int i = 0; i < NREGS; i++) {
			if (!snap_read(w, sp + UC_MCONTEXT_OFF + 8 * (uint64_t)i,
				       &regs[sigctx_unw[i]]))
				return past_full_snapshot(w, sp + UC_MCONTEXT_OFF + 8 * (uint64_t)i)
					       ? UNWIND_TRUNCATED
					       : UNWIND_NO_INFO;
		}
		if (regs[UNW_X86_64_RIP] == 0)
			return UNWIND_NO_MAP;
		/* Execution resumes at the saved IP itself: no PC - 1 lookup. */
		w->adjust = false;
	} else if (at_entry(w, ip)) {
		return UNWIND_COMPLETE;
	} else if (stub_cfa(w, ip, sp, &cfa)) {
		/* Only SP moves in them: every other register is the caller's already. */
		if (!snap_read(w, cfa - 8, &ret))
			return stack_miss(w, cfa - 8);
		if (ret == 0)
			return UNWIND_NO_INFO;
		for (unsigned int i = 0; i < NREGS; i++)
			regs[i] = cursor_reg(c, (int)i);
		regs[UNW_X86_64_RSP] = cfa;
		regs[UNW_X86_64_RIP] = ret;
		w->adjust = true;
		w->adjust_ip = ret;
	} else {
		int lf = 0;

		/* A frame pointer must point into this frame's part of the snapshot. */
		if (bp & 7 || bp < sp)
			return UNWIND_NO_INFO;
		if (!snap_read(w, bp, &saved_bp) || !snap_read(w, bp + 8, &ret))
			return past_full_snapshot(w, bp) ? UNWIND_TRUNCATED : UNWIND_NO_INFO;
		if (ret == 0)
			return UNWIND_NO_INFO;
		if (leaf && (lf = leaf_frame_check(w, ip, sp, ret, &ret)) < 0) {
			w->u->stats.fp_refused++;
			return UNWIND_NO_INFO; /* neither return address can follow the leaf */
		}
		if (lf > 0) {
			/* A leaf without a frame: its caller's registers are all live. */
			for (unsigned int i = 0; i < NREGS; i++)
				regs[i] = cursor_reg(c, (int)i);
			regs[UNW_X86_64_RSP] = sp + 8;
			regs[UNW_X86_64_RIP] = ret;
			w->adjust = true;
			w->adjust_ip = ret;
			w->u->stats.fp_frameless++;
			memcpy(w->reg, regs, sizeof(regs));
			return unw_init_remote(c, as, w) < 0 ? UNWIND_ERROR : UNWIND_OUTCOME_MAX;
		}
		memset(regs, 0, sizeof(regs));
		/* Callee-saved registers the function may not have touched: best effort. */
		regs[UNW_X86_64_RBX] = cursor_reg(c, UNW_X86_64_RBX);
		regs[UNW_X86_64_R12] = cursor_reg(c, UNW_X86_64_R12);
		regs[UNW_X86_64_R13] = cursor_reg(c, UNW_X86_64_R13);
		regs[UNW_X86_64_R14] = cursor_reg(c, UNW_X86_64_R14);
		regs[UNW_X86_64_R15] = cursor_reg(c, UNW_X86_64_R15);
		regs[UNW_X86_64_RBP] = saved_bp;
		regs[UNW_X86_64_RSP] = bp + 16;
		regs[UNW_X86_64_RIP] = ret;
		w->adjust = true;
		w->adjust_ip = ret;
		w->u->stats.fp_steps++;
	}
	memcpy(w->reg, regs, sizeof(regs));
	if (unw_init_remote(c, as, w) < 0)
		return UNWIND_ERROR;
	return UNWIND_OUTCOME_MAX;
}

/*
 * Whether the code at @ip ends an epilogue: nothing but pops of callee-saved
 * registers (rbx, rbp, r12..r15), then a return.  Read from the image.
 */
static bool at_epilogue_end(struct walk *w, uint64_t ip)
{
	uint8_t code[16];
	uint64_t a, b;

	if (!walk_read(w, ip, &a) || !walk_read(w, ip + 8, &b)) {
		w->failed = false; /* a probe, not a step: its failure is no outcome */
		return false;
	}
	memcpy(code, &a, 8);
	memcpy(code + 8, &b, 8);
	for (size_t i = 0; i < sizeof(code); i++) {
		uint8_t op = code[i];

		if (op == 0x5b || op == 0x5d) /* pop %rbx, pop %rbp */
			continue;
		if (op == 0x41 && i + 1 < sizeof(code) && code[i + 1] >= 0x5c && code[i + 1] <= 0x5f) {
			i++; /* pop %r12 .. %r15 */
			continue;
		}
		if (op == 0xf3 && i + 1 < sizeof(code) && code[i + 1] == 0xc3)
			return true; /* repz ret */
		return op == 0xc3 || op == 0xc2; /* ret, ret imm16 */
	}
	return false;
}

/*
 * After the first step: a sample taken in an epilogue, after some pops and
 * before the return, has the popped registers' save slots below SP (the CFI still
 * names them: GCC emits no .cfi_restore there), and a caller that needs one of
 * them (its CFA is rbp + 16, say) would read under SP.  The values in those slots
 * are the live registers, just popped: serve such reads from the sample's
 * registers.  Only at the end of an epilogue (pops, then ret), where nothing can
 * have changed a popped register since: elsewhere a slot under SP may be a
 * red-zone save whose register has changed since, and the read fails as it
 * should.
 */
static void epilogue_note(struct walk *w, unw_cursor_t *c, const uint64_t *live, uint64_t sp0)
{
	static const int regs[EPILOGUE_REGS] = { UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
						 UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15 };
	bool checked = false;

	for (unsigned int i = 0; i < EPILOGUE_REGS; i++) {
		unw_save_loc_t loc;

		if (unw_get_save_loc(c, regs[i], &loc) < 0 || loc.type != UNW_SLT_MEMORY ||
		    loc.u.addr >= sp0 || sp0 - loc.u.addr > 8 * EPILOGUE_REGS)
			continue;
		if (!checked) {
			if (!at_epilogue_end(w, live[UNW_X86_64_RIP]))
				return;
			checked = true;
		}
		w->popped_addr[w->npopped] = loc.u.addr;
		w->popped_val[w->npopped++] = live[regs[i]];
		w->u->stats.epilogue_regs++;
	}
}

static enum unwind_outcome walk_run(struct walk *w, unw_addr_space_t as, uint64_t *pcs,
				    uint32_t max, uint32_t *n)
{
	unw_cursor_t c;
	uint64_t sp = w->reg[UNW_X86_64_RSP], live[NREGS];
	bool first = true;

	memcpy(live, w->reg, sizeof(live));

	/* libunwind's per-IP cache marks free slots with IP 0: never look 0 up. */
	if (w->reg[UNW_X86_64_RIP] == 0)
		return UNWIND_NO_MAP;
	if (unw_init_remote(&c, as, w) < 0)
		return UNWIND_ERROR;
	for (;;) {
		bool adjusting = w->adjust;
		uint64_t ip, nsp;
		int r;

		w->failed = false;
		w->want_fallback = false;
		w->reads = 0;
		r = unw_step(&c);
		if (adjusting)
			w->adjust = false;
		if (r < 0 && w->want_fallback && !w->failed) {
			enum unwind_outcome o = fallback_step(w, as, &c, first);

			if (o != UNWIND_OUTCOME_MAX)
				return o;
			r = 1;
		}
		if (r < 0)
			return w->failed ? w->fail : UNWIND_ERROR;
		if (r == 0)
			return UNWIND_COMPLETE;
		if (first) {
			first = false;
			epilogue_note(w, &c, live, w->sp);
		}
		ip = cursor_reg(&c, UNW_REG_IP);
		nsp = cursor_reg(&c, UNW_X86_64_RSP);
		/*
		 * A return address of 0 is the end of the stack (a thread's or process's
		 * first frame), never a frame: nothing runs in page 0.
		 */
		if (ip == 0)
			return UNWIND_COMPLETE;
		/* Every caller's frame is above its callee's: anything else is a loop. */
		if (nsp <= sp)
			return UNWIND_ERROR;
		sp = nsp;
		if (*n == max)
			return UNWIND_DEPTH;
		pcs[(*n)++] = ip;
	}
}

int unwind_ctx__unwind(struct unwind_ctx *u, int32_t pid, const struct rec_sample *s, uint64_t *pcs,
		       uint32_t max, enum unwind_outcome *ret_outcome)
{
	enum unwind_outcome o;
	struct walk w;
	uint32_t n = 0;

	if (!u || !s || !ret_outcome || (!pcs && max > 0))
		return -EINVAL;
	u->serial++;
	if (s->regs_abi == 0 || s->nr_regs != UNWIND_NR_REGS) {
		o = UNWIND_NO_REGS;
		goto out;
	}
	if (max == 0) {
		o = UNWIND_DEPTH;
		goto out;
	}
	pcs[n++] = s->regs[PERF_REG_IP];
	if (s->regs_abi != UNWIND_REGS_ABI_64) {
		o = UNWIND_ERROR; /* a 32-bit task: x86-64 rules do not apply */
		goto out;
	}
	if (max == 1) {
		o = UNWIND_DEPTH;
		goto out;
	}
	memset(&w, 0, sizeof(w));
	w.u = u;
	w.pid = pid;
	for (unsigned int i = 0; i < NREGS; i++)
		w.reg[i] = s->regs[perf_index[i]];
	w.sp = s->regs[PERF_REG_SP];
	if (s->stack) {
		w.stack = s->stack;
		/* The kernel never reports more valid bytes than it copied; clamp if it did. */
		w.dyn = s->stack_dyn_size < s->stack_size ? s->stack_dyn_size : s->stack_size;
		w.full = s->stack_dyn_size >= s->stack_size;
		w.no_stack = s->stack_size > 0 && w.dyn == 0;
	} else {
		w.full = true; /* no snapshot: every stack read runs out of it */
	}
	/* A snapshot that would wrap around the address space is unusable. */
	if (w.sp + w.dyn < w.sp)
		w.dyn = 0;
	w.asp = aspace_get(u, pid);
	if (!w.asp) {
		o = UNWIND_ERROR;
		goto out;
	}
	o = walk_run(&w, w.asp->as, pcs, max, &n);
out:
	u->stats.samples++;
	u->stats.outcomes[o]++;
	*ret_outcome = o;
	return (int)n;
}

int unwind_ctx__new(size_t elf_budget_bytes, unwind_find_map_fn find_map, void *find_ctx,
		    struct unwind_ctx **ret_ctx)
{
	struct unwind_ctx *u;
	int r;

	if (!find_map || !ret_ctx)
		return -EINVAL;
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->find_map = find_map;
	u->find_ctx = find_ctx;
	u->budget = elf_budget_bytes ? elf_budget_bytes : UNWIND_ELF_BUDGET_DEFAULT;
	u->aspaces = calloc(ASPACE_MAX, sizeof(*u->aspaces));
	if (!u->aspaces) {
		r = -ENOMEM;
		goto err;
	}
	u->naspaces = ASPACE_MAX;
	r = unwind_images_init(u);
	if (r < 0)
		goto err;
	*ret_ctx = u;
	return 0;
err:
	unwind_ctx__free(u);
	return r;
}

void unwind_ctx__free(struct unwind_ctx *u)
{
	if (!u)
		return;
	for (unsigned int i = 0; u->aspaces && i < u->naspaces; i++) {
		if (u->aspaces[i].as)
			unw_destroy_addr_space(u->aspaces[i].as);
	}
	free(u->aspaces);
	unwind_images_exit(u);
	free(u);
}

void unwind_ctx__flush(struct unwind_ctx *u, int32_t pid)
{
	if (!u)
		return;
	for (unsigned int i = 0; i < u->naspaces; i++) {
		if (u->aspaces[i].used && u->aspaces[i].pid == pid)
			aspace_flush(&u->aspaces[i]);
	}
	unwind_images_forget_pid(u, pid);
}

const struct unwind_stats *unwind_ctx__stats(const struct unwind_ctx *u)
{
	return &u->stats;
}

const char *unwind_outcome_name(enum unwind_outcome o)
{
	static const char *const names[UNWIND_OUTCOME_MAX] = {
		[UNWIND_COMPLETE] = "complete", [UNWIND_TRUNCATED] = "truncated",
		[UNWIND_NO_INFO] = "no-info",	[UNWIND_NO_MAP] = "no-map",
		[UNWIND_REPLACED] = "replaced", [UNWIND_ERROR] = "error",
		[UNWIND_NO_REGS] = "no-regs",	[UNWIND_DEPTH] = "depth",
		[UNWIND_NO_STACK] = "no-stack", [UNWIND_BELOW_SP] = "below-sp",
	};

	if ((unsigned int)o >= UNWIND_OUTCOME_MAX)
		return "?";
	return names[o];
}
