/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog-elf.h: the ELF facts maplog needs about a mapped image, and the MAP_IN
 * pl_start rule (module maplog).
 *
 * PUBLIC INTERFACES
 *   struct maplog_phdr             one program header, host byte order, 64-bit fields
 *   maplog_pl_start_v()            V of the pl_start rule (FreeBSD main's pi_vaddr)
 *   maplog_pl_start_from_phdrs()   the pl_start rule of pmclog-format.md 11.5, no libelf
 *   struct maplog_elf_info         ELF type, V, PT_LOADs, executable-section range, build id
 *   maplog_elf_info_fd(), maplog_elf_info_elf(), maplog_elf_info_mem()   fill a
 *                                  struct maplog_elf_info
 *   maplog_elf_info_pl_start()     the rule applied to a (cached) struct maplog_elf_info
 *   maplog_elf_pl_start(), maplog_elf_pl_start_elf()   the rule applied to a file
 *
 * IMPLEMENTATION NOTES
 *   pmcstat places an image at run time with `pl_start - V` as its load bias, where V
 *   is its pi_vaddr (pmclog-format.md 10.2).  So a writer must send pl_start = bias +
 *   V, and this header is the one place that computes it (the daemon's MAP_INs and
 *   the report's placing of images both call maplog_pl_start_v()).  The rule of
 *   FreeBSD main's pmcstat, for a mapping of file F at run-time address A with
 *   page-aligned file offset O:
 *
 *     seg  = the PT_LOAD with floor(p_offset, pagesize) <= O < p_offset + p_filesz
 *     bias = A - (O + seg.p_vaddr - seg.p_offset)
 *     V    = p_vaddr & -p_align of the first PT_LOAD with PF_X, for ET_EXEC and ET_DYN
 *            alike (0 if there is none, and for ET_REL)
 *     pl_start = bias + V; ET_EXEC needs bias 0, ET_DYN and ET_REL a page-aligned bias
 *
 *   So pl_start is the run-time start of the first executable segment (rounded down
 *   to its alignment), which is also what FreeBSD's kernel writes.
 *
 *   One refinement is needed to make `seg` unique.  LLD packs segments into the file
 *   without page-aligning their offsets, so the read-only headers segment, the text
 *   segment and the RELRO segment of a small object all start in file page 0, and
 *   every one of its mappings has O = 0.  The functions therefore take @exec (the
 *   mapping has PROT_EXEC): among the matching PT_LOADs they take the first one whose
 *   PF_X agrees with @exec, and only if none agrees the first matching one.  For the
 *   first executable mapping of an object, which is what MAP_IN is built from, this
 *   is exact.  PT_LOADs with p_filesz 0 are never matched: nothing of the file is
 *   mapped for them.
 *
 *   All arithmetic is modulo 2^64, as in pmcstat; a library mapped below its link
 *   address has a "negative" bias, which is fine.  32-bit ELF objects are supported
 *   (gelf widens them); big-endian objects too.  The program header tables and notes
 *   of the file are hostile data: the libelf functions check every count, offset and
 *   size and return -ENOEXEC for anything truncated or inconsistent.
 *
 *   Every function is thread-safe: there is no shared state, and an Elf handle passed
 *   in is only read (libelf allows one thread per Elf handle at a time).
 */
#ifndef HWPMCD_MAPLOG_ELF_H
#define HWPMCD_MAPLOG_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The libelf handle; libelf.h declares it as `typedef struct Elf Elf`. */
struct Elf;

/* At most this many PT_LOADs are kept in struct maplog_elf_info (-E2BIG beyond). */
#define MAPLOG_ELF_MAX_LOADS 32
/* Longest GNU build id kept; like the kernel's MMAP2 build ids, longer ones are ignored. */
#define MAPLOG_BUILD_ID_MAX 20

/* One program header (the fields of Elf64_Phdr the rule needs), in host byte order. */
struct maplog_phdr {
	uint32_t p_type;  /* PT_LOAD, ...; other types are ignored */
	uint32_t p_flags; /* PF_X, PF_W, PF_R */
	uint64_t p_offset;
	uint64_t p_vaddr;
	uint64_t p_filesz;
	uint64_t p_memsz;
	uint64_t p_align;
};

/*
 * What maplog keeps per image, so that pl_start can be computed again for every process
 * that maps the image without reading the file again.
 */
struct maplog_elf_info {
	uint16_t e_type; /* ET_EXEC, ET_DYN or ET_REL */
	uint64_t v;	 /* V of the rule (pmcstat's pi_vaddr) */
	/*
	 * Whether any section has SHF_EXECINSTR, and the lowest start and highest end
	 * address of those sections as linked (pmcstat's pi_start and pi_end; both 0 when
	 * has_exec_section is false).  pmcstat asserts when it maps an image without one,
	 * so a writer must not send a MAP_IN for such an image.
	 */
	bool has_exec_section;
	uint64_t exec_start;
	uint64_t exec_end;
	size_t n_load; /* PT_LOAD entries in load[], in program header order */
	struct maplog_phdr load[MAPLOG_ELF_MAX_LOADS];
	size_t build_id_len; /* 0: no GNU build id note (or one longer than 20 bytes) */
	uint8_t build_id[MAPLOG_BUILD_ID_MAX];
};

/*
 * maplog_pl_start_v: V of the rule above for an ELF object of type @e_type with the
 * program header table @ph (@n entries; only PT_LOAD entries are used): the
 * p_vaddr & -p_align of the first PT_LOAD with PF_X for ET_EXEC and ET_DYN, else 0.
 * Pure; any thread.
 */
uint64_t maplog_pl_start_v(uint16_t e_type, const struct maplog_phdr *ph, size_t n);

/*
 * maplog_pl_start_from_phdrs: apply the rule above to the program header table @ph
 * (@n entries; only PT_LOAD entries are used) of an ELF object of type @e_type, mapped
 * at run-time address @addr from file offset @pgoff with page size @pagesize; @exec is
 * true when the mapping is executable.  Does not use libelf and reads nothing but @ph.
 *
 * Returns 0 and sets *ret_pl_start to the MAP_IN pl_start and *ret_bias (if @ret_bias
 * is not NULL) to the load bias (run-time minus link-time address).  Returns -EINVAL
 * if @pagesize is not a power of two, @addr or @pgoff is not page aligned, or the bias
 * fails its check (ET_EXEC: not 0; otherwise: not page aligned), which means that the
 * file is not the one mapped or that the mapping is not of this segment; -ENOENT if
 * no PT_LOAD holds file offset @pgoff; -ENOEXEC if @e_type is not ET_EXEC, ET_DYN or
 * ET_REL or a PT_LOAD's offset or address range overflows 64 bits.
 */
int maplog_pl_start_from_phdrs(uint16_t e_type, const struct maplog_phdr *ph, size_t n,
			       uint64_t addr, uint64_t pgoff, uint64_t pagesize, bool exec,
			       uint64_t *ret_pl_start, uint64_t *ret_bias);

/*
 * maplog_elf_info_fd: read the ELF header, the PT_LOADs, the GNU build id (from PT_NOTE
 * segments, else from SHT_NOTE sections) and the SHF_EXECINSTR sections of the file
 * open on @fd.  The fd is borrowed and only read with pread(2), so its file offset is
 * unchanged.  Returns 0 and fills *ret_info; -ENOEXEC if the file is not an ELF object
 * of type ET_EXEC, ET_DYN or ET_REL, or is truncated or corrupt; -E2BIG if it has more
 * than MAPLOG_ELF_MAX_LOADS PT_LOADs; -ENOMEM; another negative errno if fstat fails.
 */
int maplog_elf_info_fd(int fd, struct maplog_elf_info *ret_info);

/*
 * maplog_elf_info_elf: as maplog_elf_info_fd, for an ELF handle the caller opened with
 * elf_begin() and still owns (prefer ELF_C_READ: with ELF_C_READ_MMAP a file truncated
 * while it is read raises SIGBUS).  Returns -EINVAL for a NULL handle.
 */
int maplog_elf_info_elf(struct Elf *elf, struct maplog_elf_info *ret_info);

/*
 * maplog_elf_info_mem: as maplog_elf_info_fd, for the @size bytes of an image in
 * memory at @image (read only: libelf works on a private copy).  -ENOMEM too.
 */
int maplog_elf_info_mem(const void *image, size_t size, struct maplog_elf_info *ret_info);

/*
 * maplog_elf_info_pl_start: maplog_pl_start_from_phdrs() on the PT_LOADs kept in
 * @info.  Same return values.
 */
int maplog_elf_info_pl_start(const struct maplog_elf_info *info, uint64_t addr, uint64_t pgoff,
			     uint64_t pagesize, bool exec, uint64_t *ret_pl_start,
			     uint64_t *ret_bias);

/*
 * maplog_elf_pl_start: read only the ELF header and program headers of the file open
 * on @fd (borrowed, read with pread(2)) and apply the rule.  Return values as for
 * maplog_pl_start_from_phdrs() and maplog_elf_info_fd().
 */
int maplog_elf_pl_start(int fd, uint64_t addr, uint64_t pgoff, uint64_t pagesize, bool exec,
			uint64_t *ret_pl_start, uint64_t *ret_bias);

/* maplog_elf_pl_start_elf: as maplog_elf_pl_start, for a caller-owned ELF handle. */
int maplog_elf_pl_start_elf(struct Elf *elf, uint64_t addr, uint64_t pgoff, uint64_t pagesize,
			    bool exec, uint64_t *ret_pl_start, uint64_t *ret_bias);

#endif /* HWPMCD_MAPLOG_ELF_H */
