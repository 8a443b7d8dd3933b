/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * report-dwarf.h: the inline chain and source line of a code address, from the
 * DWARF of an image or its debug file (module report; elfutils' libdw).
 * PUBLIC INTERFACES
 *   struct report_dwarf_frame   one level of an inline chain: function, file, line
 *   struct report_dwarf         the DWARF of one file
 *   report_dwarf__open(), __frames(), __stats(), __free()
 *   report_dwarf_load()          load libdw now, before a confinement forbids it
 * IMPLEMENTATION NOTES
 *   The file is read into memory once (libelf ELF_C_READ, then ELF_C_FDREAD: no
 *   mapping that a truncated file could turn into SIGBUS) and its fd closed, so
 *   any number of images can be open at once.  At open, the address ranges of
 *   every compilation unit are indexed (one pass over the unit headers); at the
 *   first address inside a unit, the ranges of that unit's functions
 *   (DW_TAG_subprogram, also inside namespaces and classes) are indexed: the per-CU
 *   cache.  A lookup is then two binary searches and a descent through the
 *   inlined subroutines and lexical blocks of one function, plus libdw's own
 *   line-table search (read once per unit).  Nesting deeper than
 *   REPORT_DWARF_DEPTH_MAX levels is cut there (a hostile file cannot make it
 *   recurse without bound).  Files are hostile: libdw checks what it reads; a
 *   file without usable DWARF gives -ENODATA at open.  Source paths relative to
 *   a unit's compilation directory are joined to it (kept once per file).  One
 *   thread uses a report_dwarf (libdw's lazily read tables are not locked here).
 */
#ifndef HWPMCD_REPORT_DWARF_H
#define HWPMCD_REPORT_DWARF_H

#include <stddef.h>
#include <stdint.h>

/* The deepest inline nesting a lookup follows. */
#define REPORT_DWARF_DEPTH_MAX 64

/*
 * One level of an inline chain.  Strings are borrowed from the report_dwarf and
 * valid until report_dwarf__free().
 */
struct report_dwarf_frame {
	const char *name; /* the linkage name if DWARF gives one, else the name; NULL: none */
	const char *file; /* the source file of @line (absolute if DWARF allows), or NULL */
	uint32_t line;	  /* 0: unknown */
};

struct report_dwarf;

/*
 * report_dwarf_load: load libdw (dlopen) now rather than at the first
 * report_dwarf__open(): `hwpmc report --confine` does it before its seccomp
 * filter, which refuses executable mappings.  0, or -ENOTSUP (warned once) if
 * libdw cannot be loaded.  Main thread, before any other report_dwarf call.
 */
int report_dwarf_load(void);

/*
 * report_dwarf__open: read the DWARF of the ELF file @path (opened only if it is a
 * regular file).  Returns 0 and a new report_dwarf, or -ENOENT / -EACCES / another
 * open(2) error, -ENOEXEC (not ELF), -ENODATA (no DWARF, or no unit with addresses),
 * -ENOMEM.
 */
int report_dwarf__open(const char *path, struct report_dwarf **ret_d);

/*
 * report_dwarf__frames: the inline chain at link-time address @addr, innermost
 * first: out[0] is the function whose code @addr is, with the line-table line of
 * @addr; each next entry is the function it was inlined into, with the line of the
 * call (DW_AT_call_file/line); the last is the out-of-line function (the
 * DW_TAG_subprogram).  Writes at most @max entries (the innermost ones) and
 * returns how many levels there are (more than @max: the caller counts the cut),
 * or 0 when no unit of the DWARF holds @addr.  Code of a unit that no function
 * DIE describes (compiler-made: GCC's sanitizer constructors) is one frame with
 * a NULL name and its line-table line.
 */
size_t report_dwarf__frames(struct report_dwarf *d, uint64_t addr,
			    struct report_dwarf_frame *out, size_t max);

/* report_dwarf__stats: units in the file, and units whose functions were indexed. */
void report_dwarf__stats(const struct report_dwarf *d, size_t *ret_units, size_t *ret_indexed);

void report_dwarf__free(struct report_dwarf *d);

#endif /* HWPMCD_REPORT_DWARF_H */
