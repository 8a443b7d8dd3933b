/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report-sym.h: the function symbols of an ELF image or of a kernel symbol file,
 * sorted once and looked up by binary search (module report).
 * PUBLIC INTERFACES
 *   struct report_sym          one function: link-time start, size, raw name, module
 *   struct report_sym_opts     where to look for images and their debug files
 *   struct report_symtab       the functions of one image (or of the kernel)
 *   report_symtab__open()      an image by the path a log names (symfs, build id, debuglink)
 *   report_symtab__kallsyms()  a /proc/kallsyms-format file
 *   report_symtab__lookup(), __find(), __nsyms(), __info(), __source(), __free()
 *   struct report_debug_memo   what one report learnt of debug files and debuginfod
 *   report_debug_memo__new(), __free(), __stats()
 *   report_open_regular()      open a file only if it is a regular one
 * IMPLEMENTATION NOTES
 *   An image is opened once, its functions copied out (start, size, offset of the
 *   name in one string pool) and the ELF file closed again, so thousands of
 *   images cost only their function tables.  Functions are STT_FUNC and
 *   STT_GNU_IFUNC symbols with a section and a non-zero value, and labels: STT_NOTYPE
 *   symbols in an allocated executable section that holds them (assembly entry
 *   points such as ld.so's _start; not hidden or internal ones, nor '$' mapping
 *   symbols), from .symtab (of the image, or else of its separate debug file) merged
 *   with .dynsym; aliases at one address keep one name (a typed function before a
 *   label, then global before weak before local, then the shorter, then the first in
 *   byte order), so results do not depend on table order.
 *   Separate debug files: <symfs><debugdir>/.build-id/xx/rest.debug for the
 *   image's GNU build id, then .gnu_debuglink's name in the image's directory,
 *   its .debug/ subdirectory and <debugdir>/<image directory>/ (gdb's order), then
 *   (opts->debuginfod) the debuginfod servers of $DEBUGINFOD_URLS by build id.  A
 *   debug file is used only if it is the image's: when both have a GNU build id, the
 *   build ids decide (no file is read for a CRC); only when one of them has none is
 *   the .gnu_debuglink CRC-32 computed (zlib's crc32()), and only of a regular file
 *   of at most opts->crc_max bytes (REPORT_DEBUG_CRC_MAX, by st_size: a sparse file
 *   counts its holes) within the report's REPORT_DEBUG_CRC_BUDGET; a candidate over
 *   either is skipped and said once.  With opts->memo, what a candidate path turned
 *   out to be (unusable, its build id, its CRC) and which build ids and servers
 *   debuginfod failed for are remembered, so that no failure is paid twice in one
 *   report.  Names are raw (mangled): demangling belongs to the
 *   report, which demangles only what it prints.  Files are hostile data: every
 *   offset, size and count is checked; a corrupt symbol table gives -ENOEXEC,
 *   never a crash.  A symtab is immutable after it is built: any number of
 *   threads may look up in it.
 */
#ifndef HWPMCD_REPORT_SYM_H
#define HWPMCD_REPORT_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hwpmcd/maplog-elf.h"

/* One function.  Borrowed from its symtab: valid until report_symtab__free(). */
struct report_sym {
	uint64_t start;	    /* link-time address (kallsyms: run-time address) */
	uint64_t size;	    /* bytes as in the file; 0 if unknown (see report_symtab__lookup()) */
	const char *name;   /* raw symbol name as in the file, never NULL or empty */
	const char *module; /* kallsyms: the module in brackets ("ext4"), NULL for the kernel;
			       ELF: NULL */
};

/*
 * The largest debug file whose .gnu_debuglink CRC is computed (by st_size, holes
 * included).  A CRC is needed only where the debug file or its image has no build
 * id, and real debug files of that kind are far smaller.  Reading a sparse file of
 * this size and its CRC took 5 s on a busy 2-CPU VM (zlib's crc32() alone: 2 GB/s),
 * where a sparse terabyte once held a report for 387 s.
 */
#define REPORT_DEBUG_CRC_MAX ((uint64_t)2 << 30)
/*
 * The most bytes all the CRCs of one report (one memo) read, whatever the number of
 * images: four files at the cap, some 20 s on that VM at worst.
 */
#define REPORT_DEBUG_CRC_BUDGET ((uint64_t)8 << 30)

struct report_debug_memo;

struct report_sym_opts {
	const char *symfs;    /* a root to find images and debug files under; NULL or "": "/" */
	const char *debugdir; /* global debug directory; NULL: "/usr/lib/debug" */
	/*
	 * When neither the image nor a local debug file has a .symtab, ask the
	 * debuginfod servers of $DEBUGINFOD_URLS for the debug file of its build id
	 * (libdebuginfod, cached in its client cache); nothing without the variable.
	 */
	bool debuginfod;
	/*
	 * What the lookups of one report share (report_debug_memo__new()); NULL:
	 * nothing is remembered from one image to the next, and no CRC budget.
	 */
	struct report_debug_memo *memo;
	/* The largest file a debuglink CRC is computed of; 0: REPORT_DEBUG_CRC_MAX. */
	uint64_t crc_max;
};

/* What the debug-file lookups with one memo did (report_debug_memo__stats()). */
struct report_debug_stats {
	uint64_t opened;	     /* debug-file candidates opened (each found a regular file) */
	uint64_t skipped;	     /* candidates not opened again: the memo knew them wanting */
	uint64_t by_build_id;	     /* debuglink candidates decided by the build ids alone */
	uint64_t crc_files;	     /* debug files whose CRC was computed */
	uint64_t crc_bytes;	     /* the bytes read for those CRCs */
	uint64_t over_cap;	     /* candidates needing a CRC over crc_max or the budget */
	uint64_t debuginfod_asked;   /* lookups sent to the debuginfod servers */
	uint64_t debuginfod_skipped; /* not sent: the servers had failed, or the build id
					was asked for before without a usable answer */
};

/* Where a symtab's functions came from (report_symtab__source()). */
enum report_sym_source {
	REPORT_SYM_SYMTAB = 0,	 /* the image's own .symtab (with .dynsym merged) */
	REPORT_SYM_DEBUG_BUILDID, /* a debug file found by build id */
	REPORT_SYM_DEBUG_LINK,	 /* a debug file found by .gnu_debuglink */
	REPORT_SYM_DEBUGINFOD,	 /* a debug file a debuginfod server gave for the build id */
	REPORT_SYM_DYNSYM,	 /* only .dynsym (a stripped image without debug file) */
	REPORT_SYM_NONE,	 /* the image has no function symbols at all */
	REPORT_SYM_KALLSYMS,	 /* a kallsyms file */
	REPORT_SYM_PERFMAP,	 /* a JIT's /tmp/perf-PID.map */
	REPORT_SYM_SOURCE_MAX
};

struct report_symtab;

/*
 * report_symtab__open: open the image @path (as a log names it: absolute, looked
 * up as <symfs>@path) and read its maplog_elf_info (report_symtab__info()) and its
 * functions, from its own tables or a separate debug file (see above).  @opts may
 * be NULL (defaults).  Returns 0 and a new symtab (the caller frees it with
 * report_symtab__free()), also for an image with no functions (source
 * REPORT_SYM_NONE, 0 functions); or -ENOENT / -EACCES / another open(2) error
 * (file not found), -ENOEXEC (not ELF, or corrupt headers or tables), -E2BIG (more
 * PT_LOADs than maplog_elf_info holds), -ENOMEM.  Any thread.
 */
int report_symtab__open(const char *path, const struct report_sym_opts *opts,
			struct report_symtab **ret_t);

/*
 * report_symtab__kallsyms: read a file in /proc/kallsyms format ("ADDR TYPE NAME
 * [MODULE]" lines); text symbols (t, T, w, W) are kept.  Returns 0 and a new
 * symtab (source REPORT_SYM_KALLSYMS; its __info() is all zero), or -ENOENT (no
 * such file), -ENODATA (no text symbol with a non-zero address: kptr_restrict
 * hid them), -EPROTO (a malformed line: hostile input is refused, not guessed),
 * -ENOMEM.
 */
int report_symtab__kallsyms(const char *path, struct report_symtab **ret_t);

/*
 * report_symtab__perfmap: read a JIT's symbol map in perf's format ("START SIZE
 * NAME" lines, hex, run-time addresses; V8's --perf-basic-prof, the JVM's
 * perf-map-agent, Python 3.12's -X perf).  With @owner_check the file must be owned
 * by the caller's real uid or by root, as perf requires (another user could plant
 * one for a pid of yours): -EPERM otherwise.  Lines that are not of that form (a
 * line the JIT was still writing) are skipped and counted in *@ret_bad (may be
 * NULL).  Returns 0 and a new symtab (source REPORT_SYM_PERFMAP), or -ENOENT /
 * another open(2) error, -ENOEXEC (not a regular file), -E2BIG (over 256 MiB),
 * -ENODATA (no symbol), -ENOMEM.  Where entries overlap (code the JIT moved), the
 * lookup rule of report_symtab__lookup() holds.
 */
int report_symtab__perfmap(const char *path, bool owner_check, size_t *ret_bad,
			   struct report_symtab **ret_t);

void report_symtab__free(struct report_symtab *t);

/*
 * report_debug_memo__new: an empty memo for the report_symtab__open() calls of one
 * report (report_sym_opts.memo).  It keeps, per debug-file candidate path, whether
 * the file is of no use to any image (missing, not regular, not ELF, corrupt, no
 * .symtab) or else its build id, its CRC once computed and whether it is over the
 * CRC cap; the build ids the debuginfod servers had no usable file for; whether the
 * servers failed at the connection level (not asked again); and the CRC budget.  At
 * most 65536 entries: beyond that nothing more is remembered (more work, never
 * another result).  Returns 0 and the memo (freed by report_debug_memo__free()), or
 * -ENOMEM.  A memo may be shared by calls on several threads (a mutex guards it,
 * never held across a read or a download).
 */
int report_debug_memo__new(struct report_debug_memo **ret_memo);
void report_debug_memo__free(struct report_debug_memo *memo);

/* report_debug_memo__stats: the counters so far (all zero for a NULL memo).  Any thread. */
void report_debug_memo__stats(struct report_debug_memo *memo, struct report_debug_stats *ret);

/*
 * report_symtab__lookup: the function holding link-time address @addr, or NULL.
 * A function with a size holds [start, start + size); where sized functions nest
 * or overlap, the one with the greatest start wins.  A sized function always wins
 * over one of size 0.  A function of size 0 holds what no sized function covers,
 * from its start up to the next function's start (sized or not), and never past the
 * end of the executable section that holds it; the last one holds up to that end.
 * Where no section is known (kallsyms; an ELF symbol in no executable section) it
 * holds up to the next start, and the last one 4096 bytes.  Borrowed result.
 * O(log n), no allocation.  Any thread.
 */
const struct report_sym *report_symtab__lookup(const struct report_symtab *t, uint64_t addr);

/* report_symtab__find: the first function named @name (exact raw name), or NULL. O(n). */
const struct report_sym *report_symtab__find(const struct report_symtab *t, const char *name);

size_t report_symtab__nsyms(const struct report_symtab *t);

/* report_symtab__sym: the @i-th function (0 .. nsyms-1) in address order, or NULL. */
const struct report_sym *report_symtab__sym(const struct report_symtab *t, size_t i);

/* report_symtab__info: the ELF facts of the image itself (not of its debug file). */
const struct maplog_elf_info *report_symtab__info(const struct report_symtab *t);

enum report_sym_source report_symtab__source(const struct report_symtab *t);

/* report_symtab__debug_path: the debug file the functions came from, or NULL. */
const char *report_symtab__debug_path(const struct report_symtab *t);

/*
 * report_open_regular: open @path read-only if it is a regular file, without ever
 * opening anything else (a device or FIFO named by a hostile log or debuglink:
 * -ENOEXEC, nothing done to it): util_open_read() with UTIL_OPEN_REGULAR, so through
 * the broker of a confined report (common-open.h).  Returns the fd (O_CLOEXEC; the
 * caller closes it) with the file's size in *ret_size (if not NULL), or a negative
 * errno.  Any thread.
 */
int report_open_regular(const char *path, uint64_t *ret_size);

/*
 * report_sym_source_name: "symtab", "debug-buildid", "debuglink", "debuginfod", "dynsym",
 * "none", "kallsyms", "perf-map".
 */
const char *report_sym_source_name(enum report_sym_source s);

/*
 * report_demangle: the name of an Itanium-ABI C++ symbol ("_Z...") as c++filt prints
 * it, or of a Rust symbol (v0 "_R...", or legacy) as perf prints it, without crate
 * disambiguators and hash (libiberty), in a malloc'd string; NULL for other names
 * or a malformed one.
 */
char *report_demangle(const char *name);

#endif /* HWPMCD_REPORT_SYM_H */
