/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog-elf.c: ELF program headers, build id, executable sections and the MAP_IN
 * pl_start rule.
 *
 * PUBLIC INTERFACES
 *   maplog_pl_start_v(), maplog_pl_start_from_phdrs(), maplog_elf_info_fd(), maplog_elf_info_elf(),
 *   maplog_elf_info_pl_start(), maplog_elf_pl_start(), maplog_elf_pl_start_elf()
 *   (see include/hwpmcd/maplog-elf.h)
 *
 * IMPLEMENTATION NOTES
 *   The rule itself (pmclog-format.md 11.5) lives in maplog_pl_start_from_phdrs(),
 *   which works on a plain table so that it can be tested with hand-made tables; the
 *   libelf functions only copy the PT_LOADs out of the file and call it.  V
 *   (maplog_pl_start_v()) is computed exactly as FreeBSD main's libpmcstat computes
 *   pi_vaddr, unsigned masks included: a p_align of 0 gives the mask 0, so such a
 *   first PF_X segment gives V = 0.
 *
 *   Files are opened with ELF_C_READ, not ELF_C_READ_MMAP: libelf then reads with
 *   pread(2) what it needs, so a file that is truncated while we read it (a library
 *   being replaced) gives a read error instead of a SIGBUS.  libelf checks its tables
 *   against the file size, but it shortens (program headers) or drops (section
 *   headers) a table cut off by the end of the file without an error, so the counts
 *   it returns are compared with the ELF header's.  The program header count is capped
 *   and notes larger than NOTE_MAX_BYTES are skipped, so a hostile count or size can
 *   never make us allocate much memory.  The functions taking a caller's Elf handle
 *   apply the same checks, whatever mode the handle was opened in.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hwpmcd/maplog-elf.h"

/* Real objects have a handful of program headers; 4096 bounds what libelf allocates. */
#define PHDR_MAX 4096
/* Build id notes are tiny; a larger note area is skipped rather than read. */
#define NOTE_MAX_BYTES (1u << 20)

static bool is_pow2(uint64_t x)
{
	return x != 0 && (x & (x - 1)) == 0;
}

uint64_t maplog_pl_start_v(uint16_t e_type, const struct maplog_phdr *ph, size_t n)
{
	if (e_type != ET_EXEC && e_type != ET_DYN)
		return 0;
	/* The first executable segment, as FreeBSD main's pmcstat takes pi_vaddr. */
	for (size_t i = 0; i < n; i++) {
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X))
			return ph[i].p_vaddr & -ph[i].p_align;
	}
	return 0;
}

/* A PT_LOAD whose file or address range wraps around is corrupt. */
static int check_loads(const struct maplog_phdr *ph, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t end;

		if (ph[i].p_type != PT_LOAD)
			continue;
		if (__builtin_add_overflow(ph[i].p_offset, ph[i].p_filesz, &end) ||
		    __builtin_add_overflow(ph[i].p_vaddr, ph[i].p_memsz, &end))
			return -ENOEXEC;
	}
	return 0;
}

/*
 * The PT_LOAD holding file offset @pgoff: floor(p_offset) <= pgoff < p_offset + p_filesz.
 * Prefer the first one whose PF_X matches @exec (several segments share a file page in
 * LLD's layout, see maplog-elf.h), else take the first match.
 */
static const struct maplog_phdr *find_segment(const struct maplog_phdr *ph, size_t n,
					      uint64_t pgoff, uint64_t pagesize, bool exec)
{
	const struct maplog_phdr *first = NULL;

	for (size_t i = 0; i < n; i++) {
		const struct maplog_phdr *p = &ph[i];

		if (p->p_type != PT_LOAD || p->p_filesz == 0)
			continue;
		if ((p->p_offset & ~(pagesize - 1)) > pgoff)
			continue;
		/* check_loads() made p_offset + p_filesz safe to compute. */
		if (pgoff >= p->p_offset + p->p_filesz)
			continue;
		if (!!(p->p_flags & PF_X) == exec)
			return p;
		if (!first)
			first = p;
	}
	return first;
}

int maplog_pl_start_from_phdrs(uint16_t e_type, const struct maplog_phdr *ph, size_t n,
			       uint64_t addr, uint64_t pgoff, uint64_t pagesize, bool exec,
			       uint64_t *ret_pl_start, uint64_t *ret_bias)
{
	const struct maplog_phdr *seg;
	uint64_t bias;
	int r;

	if (!is_pow2(pagesize) || (addr & (pagesize - 1)) || (pgoff & (pagesize - 1)))
		return -EINVAL;
	if (n > 0 && !ph)
		return -EINVAL;
	if (e_type != ET_EXEC && e_type != ET_DYN && e_type != ET_REL)
		return -ENOEXEC;
	r = check_loads(ph, n);
	if (r < 0)
		return r;
	seg = find_segment(ph, n, pgoff, pagesize, exec);
	if (!seg)
		return -ENOENT;
	/* Run-time address minus link-time address of the byte at file offset pgoff. */
	bias = addr - (pgoff + seg->p_vaddr - seg->p_offset);
	/* A non-PIE executable runs where it was linked; anything else is the wrong file. */
	if (e_type == ET_EXEC && bias != 0)
		return -EINVAL;
	if (bias & (pagesize - 1))
		return -EINVAL;
	*ret_pl_start = bias + maplog_pl_start_v(e_type, ph, n);
	if (ret_bias)
		*ret_bias = bias;
	return 0;
}

/*
 * The number of program headers of @elf, checked against the number the ELF header
 * declares.  libelf quietly shortens a table that does not fit in the file to the
 * entries that do; a file cut short there is corrupt, not an object with fewer
 * segments.  The declared count is e_phnum, or for PN_XNUM section 0's sh_info.
 */
static int phdr_count(Elf *elf, const GElf_Ehdr *eh, size_t *ret_n)
{
	uint64_t declared = eh->e_phnum;
	size_t n;

	if (eh->e_phnum == PN_XNUM) {
		GElf_Shdr sh0;
		Elf_Scn *scn0 = elf_getscn(elf, 0);

		if (!scn0 || gelf_getshdr(scn0, &sh0) != &sh0)
			return -ENOEXEC;
		declared = sh0.sh_info;
	}
	if (elf_getphdrnum(elf, &n) != 0 || n != declared || n > PHDR_MAX)
		return -ENOEXEC;
	*ret_n = n;
	return 0;
}

/*
 * The same check for the section header table, which libelf drops entirely when it
 * does not fit.  With e_shoff 0 there is no table; with e_shnum 0 the count is in
 * section 0's sh_size, which libelf has then read and checked itself.
 */
static int check_shdr_count(Elf *elf, const GElf_Ehdr *eh)
{
	size_t n;

	if (elf_getshdrnum(elf, &n) != 0)
		return -ENOEXEC;
	if (eh->e_shoff == 0)
		return 0;
	if (eh->e_shnum != 0 ? n != eh->e_shnum : n == 0)
		return -ENOEXEC;
	return 0;
}

/*
 * Copy the ELF type and the PT_LOADs of @elf into @info (only e_type, v, n_load and
 * load[] are written).
 */
static int read_loads(Elf *elf, struct maplog_elf_info *info)
{
	GElf_Ehdr eh;
	size_t phnum;
	int r;

	if (elf_kind(elf) != ELF_K_ELF)
		return -ENOEXEC;
	if (gelf_getehdr(elf, &eh) != &eh)
		return -ENOEXEC;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN && eh.e_type != ET_REL)
		return -ENOEXEC;
	r = phdr_count(elf, &eh, &phnum);
	if (r < 0)
		return r;
	info->e_type = eh.e_type;
	info->n_load = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		struct maplog_phdr *p;

		if (gelf_getphdr(elf, (int)i, &ph) != &ph)
			return -ENOEXEC;
		if (ph.p_type != PT_LOAD)
			continue;
		if (info->n_load == MAPLOG_ELF_MAX_LOADS)
			return -E2BIG;
		p = &info->load[info->n_load++];
		p->p_type = ph.p_type;
		p->p_flags = ph.p_flags;
		p->p_offset = ph.p_offset;
		p->p_vaddr = ph.p_vaddr;
		p->p_filesz = ph.p_filesz;
		p->p_memsz = ph.p_memsz;
		p->p_align = ph.p_align;
	}
	r = check_loads(info->load, info->n_load);
	if (r < 0)
		return r;
	info->v = maplog_pl_start_v(info->e_type, info->load, info->n_load);
	return 0;
}

/*
 * Look for a GNU build id note in @data.  Returns true (and fills @info) if one is found.
 * gelf_getnote() checks every name and descriptor size against d_size.  Like the
 * kernel's build_id_parse(), ids that are empty or longer than 20 bytes are skipped.
 */
static bool scan_notes(Elf_Data *data, struct maplog_elf_info *info)
{
	size_t off = 0;
	size_t next;
	size_t name_off;
	size_t desc_off;
	GElf_Nhdr nh;

	while (off < data->d_size &&
	       (next = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const uint8_t *p = data->d_buf;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == sizeof(ELF_NOTE_GNU) &&
		    memcmp(p + name_off, ELF_NOTE_GNU, sizeof(ELF_NOTE_GNU)) == 0 &&
		    nh.n_descsz > 0 && nh.n_descsz <= MAPLOG_BUILD_ID_MAX) {
			memcpy(info->build_id, p + desc_off, nh.n_descsz);
			info->build_id_len = nh.n_descsz;
			return true;
		}
		off = next;
	}
	return false;
}

/* The build id from the PT_NOTE segments.  Unreadable note areas are skipped. */
static void read_build_id_phdrs(Elf *elf, struct maplog_elf_info *info)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum) != 0 || phnum > PHDR_MAX)
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		Elf_Data *data;

		if (gelf_getphdr(elf, (int)i, &ph) != &ph)
			return;
		if (ph.p_type != PT_NOTE || ph.p_filesz == 0 || ph.p_filesz > NOTE_MAX_BYTES ||
		    ph.p_offset > INT64_MAX)
			continue;
		/* libelf checks p_offset + p_filesz against the file size. */
		data = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
					    ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
		if (data && scan_notes(data, info))
			return;
	}
}

/*
 * Walk the section headers: pmcstat's pi_start/pi_end over the SHF_EXECINSTR sections,
 * and (if the program headers had none) the build id from an SHT_NOTE section.
 */
static int read_sections(Elf *elf, struct maplog_elf_info *info)
{
	Elf_Scn *scn = NULL;
	uint64_t lo = UINT64_MAX;
	uint64_t hi = 0;
	GElf_Ehdr eh;
	int r;

	if (gelf_getehdr(elf, &eh) != &eh)
		return -ENOEXEC;
	r = check_shdr_count(elf, &eh);
	if (r < 0)
		return r;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		uint64_t end;

		if (gelf_getshdr(scn, &sh) != &sh)
			return -ENOEXEC;
		if (sh.sh_flags & SHF_EXECINSTR) {
			if (__builtin_add_overflow(sh.sh_addr, sh.sh_size, &end))
				return -ENOEXEC;
			if (sh.sh_addr < lo)
				lo = sh.sh_addr;
			if (end > hi)
				hi = end;
			info->has_exec_section = true;
		}
		if (sh.sh_type == SHT_NOTE && info->build_id_len == 0 && sh.sh_size > 0 &&
		    sh.sh_size <= NOTE_MAX_BYTES) {
			Elf_Data *data = elf_getdata(scn, NULL);

			if (data && data->d_buf)
				(void)scan_notes(data, info);
		}
	}
	if (info->has_exec_section) {
		info->exec_start = lo;
		info->exec_end = hi;
	}
	return 0;
}

int maplog_elf_info_elf(struct Elf *elf, struct maplog_elf_info *ret_info)
{
	struct maplog_elf_info info;
	int r;

	if (!elf)
		return -EINVAL;
	memset(&info, 0, sizeof(info));
	r = read_loads(elf, &info);
	if (r < 0)
		return r;
	read_build_id_phdrs(elf, &info);
	r = read_sections(elf, &info);
	if (r < 0)
		return r;
	*ret_info = info;
	return 0;
}

/* Open @fd with libelf for reading.  On success the caller calls elf_end(*ret_elf). */
static int elf_open_fd(int fd, Elf **ret_elf)
{
	struct stat st;
	Elf *elf;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -ENOEXEC;
	/* elf_version() only records the version; calling it every time is harmless. */
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOTSUP;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOEXEC;
	*ret_elf = elf;
	return 0;
}

int maplog_elf_info_mem(const void *image, size_t size, struct maplog_elf_info *ret_info)
{
	/* elf_memory() may convert in place: give it a copy, never the caller's bytes. */
	char *copy = size ? malloc(size) : NULL;
	Elf *elf;
	int r;

	if (!copy)
		return size ? -ENOMEM : -ENOEXEC;
	memcpy(copy, image, size);
	if (elf_version(EV_CURRENT) == EV_NONE) {
		free(copy);
		return -ENOTSUP;
	}
	elf = elf_memory(copy, size);
	r = elf ? maplog_elf_info_elf(elf, ret_info) : -ENOEXEC;
	if (elf)
		(void)elf_end(elf);
	free(copy);
	return r;
}

int maplog_elf_info_fd(int fd, struct maplog_elf_info *ret_info)
{
	Elf *elf;
	int r;

	r = elf_open_fd(fd, &elf);
	if (r < 0)
		return r;
	r = maplog_elf_info_elf(elf, ret_info);
	(void)elf_end(elf);
	return r;
}

int maplog_elf_info_pl_start(const struct maplog_elf_info *info, uint64_t addr, uint64_t pgoff,
			     uint64_t pagesize, bool exec, uint64_t *ret_pl_start,
			     uint64_t *ret_bias)
{
	if (!info || info->n_load > MAPLOG_ELF_MAX_LOADS)
		return -EINVAL;
	return maplog_pl_start_from_phdrs(info->e_type, info->load, info->n_load, addr, pgoff,
					  pagesize, exec, ret_pl_start, ret_bias);
}

int maplog_elf_pl_start_elf(struct Elf *elf, uint64_t addr, uint64_t pgoff, uint64_t pagesize,
			    bool exec, uint64_t *ret_pl_start, uint64_t *ret_bias)
{
	struct maplog_elf_info info;
	int r;

	if (!elf)
		return -EINVAL;
	r = read_loads(elf, &info);
	if (r < 0)
		return r;
	return maplog_pl_start_from_phdrs(info.e_type, info.load, info.n_load, addr, pgoff,
					  pagesize, exec, ret_pl_start, ret_bias);
}

int maplog_elf_pl_start(int fd, uint64_t addr, uint64_t pgoff, uint64_t pagesize, bool exec,
			uint64_t *ret_pl_start, uint64_t *ret_bias)
{
	Elf *elf;
	int r;

	r = elf_open_fd(fd, &elf);
	if (r < 0)
		return r;
	r = maplog_elf_pl_start_elf(elf, addr, pgoff, pagesize, exec, ret_pl_start, ret_bias);
	(void)elf_end(elf);
	return r;
}
