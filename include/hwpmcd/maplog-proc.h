/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog-proc.h: parser of /proc/PID/maps lines (module maplog).
 *
 * PUBLIC INTERFACES
 *   enum maplog_map_kind       what a mapping is backed by
 *   struct maplog_maps_entry   one parsed line
 *   maplog_maps_parse_line()   parse one line
 *
 * IMPLEMENTATION NOTES
 *   The kernel (show_map_vma) prints "start-end perms offset major:minor inode", then,
 *   if the mapping has a name, spaces up to a fixed column and the name, which is
 *   everything up to the end of the line: a path may contain spaces.  Addresses, the
 *   offset and the device numbers are hex, the inode decimal.  The parser is strict
 *   about the fixed fields (their text is hostile; nothing is assumed about their
 *   widths beyond what fits in the field type) and takes the name as it is after the
 *   padding, which therefore cannot be told from a name that starts with a space (a
 *   file path always starts with '/').  The kernel writes a newline in a path as the
 *   four characters "\012"; they are not decoded, as a file name may contain them too.
 *
 *   A " (deleted)" suffix is stripped and reported in `deleted`; a file really named
 *   "x (deleted)" cannot be told apart, as with every /proc reader.  The kind follows
 *   the conventions perf uses: no name, "[anon:...]", "[anon_shmem:...]" and the
 *   deleted shared-anonymous names "/dev/zero", "/SYSV...", "/anon_hugepage" are
 *   MAPLOG_MAP_ANON; a deleted "/memfd:..." is MAPLOG_MAP_MEMFD; "[vdso]" and
 *   "[vsyscall]" have their own kinds; any other name that does not start with '/'
 *   ("[heap]", "[stack]", "[vvar]", "anon_inode:[perf_event]", ...) is
 *   MAPLOG_MAP_SPECIAL; the rest are files.
 *
 *   The parser is thread-safe (no shared state).
 */
#ifndef HWPMCD_MAPLOG_PROC_H
#define HWPMCD_MAPLOG_PROC_H

#include <stdbool.h>
#include <stdint.h>

/* Size of struct maplog_maps_entry's path buffer, NUL included (Linux PATH_MAX). */
#define MAPLOG_MAPS_PATH_MAX 4096

enum maplog_map_kind {
	MAPLOG_MAP_FILE = 0, /* a file; pmcstat can be given it in a MAP_IN */
	MAPLOG_MAP_ANON,     /* anonymous memory, named or not (JIT code lives here) */
	MAPLOG_MAP_VDSO,     /* [vdso] */
	MAPLOG_MAP_VSYSCALL, /* [vsyscall] */
	MAPLOG_MAP_SPECIAL,  /* [heap], [stack], [vvar], anon_inode:..., ... */
	MAPLOG_MAP_MEMFD,    /* "/memfd:NAME (deleted)" */
	MAPLOG_MAP_MAX
};

struct maplog_maps_entry {
	uint64_t start; /* first byte */
	uint64_t end;	/* one past the last byte; start < end */
	uint64_t pgoff; /* file offset of start, in bytes */
	uint32_t dev_major;
	uint32_t dev_minor;
	uint64_t inode;
	bool r, w, x;
	bool shared;  /* 's' (MAP_SHARED) rather than 'p' */
	bool deleted; /* the name ended in " (deleted)", which is stripped from path */
	enum maplog_map_kind kind;
	char path[MAPLOG_MAPS_PATH_MAX]; /* the name, NUL-terminated; "" if none */
};

/*
 * maplog_maps_parse_line: parse one line of /proc/PID/maps (NUL-terminated; one final
 * '\n' is allowed).  Returns 0 and fills *ret_entry; -EINVAL for a malformed line
 * (bad or overflowing number, bad permissions, start >= end, missing field, junk
 * between the fields); -ENAMETOOLONG if the name, " (deleted)" stripped, does not fit
 * in path[].  *ret_entry is not touched on failure.
 */
int maplog_maps_parse_line(const char *line, struct maplog_maps_entry *ret_entry);

#endif /* HWPMCD_MAPLOG_PROC_H */
