/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind-elf.c: the ELF image cache of the unwinder: open, check, map, parse, evict.
 *
 * PUBLIC INTERFACES
 *   unwind_images_init(), unwind_images_exit(), unwind_images_get(),
 *   unwind_images_forget_pid(), unwind_image_parse(), unwind_image_bias(),
 *   unwind_image_read(), unwind_image_vaddr_off(), unwind_ctx__image_info()
 *   (see src/unwind/unwind-int.h)
 *
 * IMPLEMENTATION NOTES
 *   A file is opened through /proc/PID/map_files/START-END when the mapping still
 *   exists with exactly those bounds (that link reaches the mapped inode even when
 *   the path was replaced or deleted), else through /proc/PID/root/PATH (the
 *   process's view of the file system).  Either way fstat() must give the device
 *   and inode of the mapping, or the file is refused with -ESTALE: unwinding with
 *   another build of a library would produce confident garbage.  A refused or
 *   unreadable file is remembered per (dev, inode, pid), so a process whose file is
 *   gone costs one attempt, not one per sample; unwind_images_forget_pid() (called
 *   on a flush) allows a new attempt.  A file larger than the whole budget is
 *   refused from its fstat() size before anything is copied, and that and a file
 *   that is not a usable ELF image are remembered per (dev, inode) for every pid.
 *
 *   The whole file is copied once into anonymous memory (then PROT_READ) and the
 *   descriptor closed.  libelf
 *   reads it through elf_memory() only after the ELF identification has been
 *   checked to be ELFCLASS64, little-endian, x86-64: libelf then never converts in
 *   place, so the read-only mapping is never written.  The program header table is
 *   bounds-checked against the file before libelf walks it.  .eh_frame_hdr is found
 *   through PT_GNU_EH_FRAME (present even when section headers are stripped), else
 *   through its section, and is used only when its search table has the one
 *   encoding libunwind's remote table lookup understands (datarel sdata4 pairs)
 *   and lies wholly inside the file.  Every read of file bytes goes through
 *   unwind_image_read(), which checks the offset against the file size.
 *
 *   A copy, not a mapping of the file: a file truncated in place while mapped
 *   makes a read of its lost pages raise SIGBUS, and any user who owns a library
 *   that a session unwinds through could kill the daemon so (test-faults.sh).
 *   A file that shrinks while it is copied is refused (-ESTALE) like a changed one.
 *
 *   The vDSO is the same image for every process on one kernel, so the daemon's
 *   own (maplog_vdso_self()) is copied
 *   once and serves every "[vdso]" mapping, loaded at that mapping's start.  A
 *   daemon without one (under valgrind) reads it from a sampled process's
 *   "[vdso]" mapping (process_vm_readv), at most VDSO_TRIES times.
 *
 *   Eviction runs when an image is added: least recently used images go until the
 *   mapped bytes fit the budget, skipping those the current sample already uses.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hwpmcd/maplog.h"
#include "unwind-int.h"

/* Real objects have a handful of program headers; this bounds a hostile table. */
#define PHDR_MAX 4096
/* x86-64 pages: a mapping's pgoff is a multiple of this. */
#define PAGE_BYTES 4096u
/* Larger vDSO images do not exist; the bound keeps a strange maps line harmless. */
#define VDSO_MAX_BYTES (64u << 10)
/* Reads of a sampled process's [vdso] before giving up (each may find it gone). */
#define VDSO_TRIES 16

/* .eh_frame_hdr pointer encodings (DWARF for x86-64 / LSB; libunwind's dwarf.h is private). */
#define DW_EH_PE_absptr	  0x00
#define DW_EH_PE_udata2	  0x02
#define DW_EH_PE_udata4	  0x03
#define DW_EH_PE_udata8	  0x04
#define DW_EH_PE_sdata2	  0x0a
#define DW_EH_PE_sdata4	  0x0b
#define DW_EH_PE_sdata8	  0x0c
#define DW_EH_PE_pcrel	  0x10
#define DW_EH_PE_datarel  0x30
#define DW_EH_PE_aligned  0x50
#define DW_EH_PE_indirect 0x80
#define DW_EH_PE_omit	  0xff

static unsigned int hash_id(uint64_t dev, uint64_t inode)
{
	uint64_t h = (inode ^ (dev * 0x9e3779b97f4a7c15ULL)) * 0xff51afd7ed558ccdULL;

	return (unsigned int)(h >> 56) % UNWIND_HASH_SIZE;
}

bool unwind_image_read(const struct unwind_image *img, uint64_t off, uint64_t *ret_val)
{
	uint64_t v = 0;
	size_t n;

	if (off >= img->size)
		return false;
	n = img->size - off < sizeof(v) ? (size_t)(img->size - off) : sizeof(v);
	memcpy(&v, img->data + off, n);
	*ret_val = v;
	return true;
}

bool unwind_image_vaddr_off(const struct unwind_image *img, uint64_t vaddr, uint64_t *ret_off)
{
	for (uint32_t i = 0; i < img->nloads; i++) {
		const struct unwind_load *l = &img->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*ret_off = l->offset + (vaddr - l->vaddr);
			return true;
		}
	}
	return false;
}

bool unwind_image_bias(const struct unwind_image *img, const struct maplog_map *m,
		       uint64_t *ret_bias)
{
	const struct unwind_load *seg = NULL;

	if (img->e_type == ET_EXEC) {
		*ret_bias = 0;
		return true;
	}
	/*
	 * The mapping starts at the page that holds the start of some PT_LOAD's file
	 * bytes, or inside them; p_vaddr - p_offset is a multiple of the page size,
	 * so start - pgoff - (p_vaddr - p_offset) is the load bias exactly.
	 *
	 * LLD packs segments without page-aligning their offsets, so the read-only
	 * headers segment and the text segment of a small object both hold file page
	 * 0, with p_vaddr - p_offset differing by a page: the first match would give
	 * a bias one page off for the text mapping (every PC of an LLD-linked PIE or
	 * library looked up at the wrong address).  A maplog_map is an executable
	 * mapping, so the first matching PF_X segment is the one mapped, as in
	 * maplog-elf.c's find_segment(); without one, the first match.
	 */
	for (uint32_t i = 0; i < img->nloads; i++) {
		const struct unwind_load *l = &img->loads[i];

		if ((l->offset & ~(uint64_t)(PAGE_BYTES - 1)) <= m->pgoff &&
		    m->pgoff < l->offset + l->filesz) {
			if (l->exec) {
				seg = l;
				break;
			}
			if (!seg)
				seg = l;
		}
	}
	if (!seg)
		return false;
	*ret_bias = m->start - m->pgoff - (seg->vaddr - seg->offset);
	return true;
}

/* Size in bytes of a fixed-size pointer encoding, or -1 for what we do not accept. */
static int enc_size(uint8_t enc)
{
	if (enc & DW_EH_PE_indirect || (enc & 0x70) == DW_EH_PE_aligned)
		return -1;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_udata2:
	case DW_EH_PE_sdata2:
		return 2;
	default:
		return -1; /* uleb128/sleb128 and reserved values */
	}
}

/*
 * The value of a fixed-size encoding at @p (enc_size(@enc) bytes, which the caller
 * has checked are there), signed ones sign-extended; the 0x70 bits are not applied.
 */
static uint64_t decode_fixed(const uint8_t *p, uint8_t enc)
{
	int16_t s16;
	int32_t s32;
	uint16_t u16;
	uint32_t u32;
	uint64_t v;

	switch (enc & 0x0f) {
	case DW_EH_PE_udata2:
		memcpy(&u16, p, 2);
		return u16;
	case DW_EH_PE_sdata2:
		memcpy(&s16, p, 2);
		return (uint64_t)(int64_t)s16;
	case DW_EH_PE_udata4:
		memcpy(&u32, p, 4);
		return u32;
	case DW_EH_PE_sdata4:
		memcpy(&s32, p, 4);
		return (uint64_t)(int64_t)s32;
	default: /* absptr, udata8, sdata8 */
		memcpy(&v, p, 8);
		return v;
	}
}

/* Decode the fde_count field: an absolute unsigned count.  False if unusable. */
static bool read_count(const uint8_t *p, uint8_t enc, uint64_t *ret_count)
{
	uint64_t v;

	if ((enc & 0x70) != 0 || enc_size(enc) < 0)
		return false; /* a count relative to something is meaningless */
	v = decode_fixed(p, enc);
	if ((enc & 0x08) && (int64_t)v < 0)
		return false; /* a negative sdata count */
	*ret_count = v;
	return true;
}

/*
 * Parse the .eh_frame_hdr at link-time address @vaddr, @len bytes long, and set
 * has_hdr, table_vaddr and fde_count when it holds a usable search table.
 */
static void parse_eh_frame_hdr(struct unwind_image *img, uint64_t vaddr, uint64_t len)
{
	const uint8_t *p;
	uint64_t off, pos, count;
	int ptr_sz, cnt_sz;

	if (len < 4 || !unwind_image_vaddr_off(img, vaddr, &off) || off > img->size ||
	    len > img->size - off)
		return;
	p = img->data + off;
	if (p[0] != 1 || p[2] == DW_EH_PE_omit)
		return;
	/* libunwind's remote lookup reads (int32 initial_loc, int32 fde) pairs relative to hdr. */
	if (p[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return;
	ptr_sz = p[1] == DW_EH_PE_omit ? 0 : enc_size(p[1]);
	cnt_sz = enc_size(p[2]);
	if (ptr_sz < 0 || cnt_sz < 0)
		return;
	pos = 4 + (uint64_t)ptr_sz;
	if (pos + (uint64_t)cnt_sz > len || !read_count(p + pos, p[2], &count))
		return;
	pos += (uint64_t)cnt_sz;
	if (count == 0 || count > (len - pos) / 8)
		return;
	img->has_hdr = true;
	img->hdr_vaddr = vaddr;
	img->table_vaddr = vaddr + pos;
	img->fde_count = count;
}

/* A cursor over bytes of the file, for .eh_frame: every read is bounds-checked. */
struct bytes {
	const uint8_t *p;
	uint64_t pos, end; /* file offsets */
};

static bool get_u8(struct bytes *b, uint8_t *ret)
{
	if (b->pos >= b->end)
		return false;
	*ret = b->p[b->pos++];
	return true;
}

static bool get_fixed(struct bytes *b, void *dst, unsigned int n)
{
	if (b->pos > b->end || b->end - b->pos < n)
		return false;
	memcpy(dst, b->p + b->pos, n);
	b->pos += n;
	return true;
}

static bool get_uleb(struct bytes *b, uint64_t *ret)
{
	uint64_t v = 0;
	uint8_t c;

	for (unsigned int shift = 0; shift < 64; shift += 7) {
		if (!get_u8(b, &c))
			return false;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80)) {
			*ret = v;
			return true;
		}
	}
	return false;
}

/* A ULEB128 or SLEB128 whose value is not needed. */
static bool skip_leb(struct bytes *b)
{
	uint64_t v;

	return get_uleb(b, &v);
}

/*
 * An encoded pointer at the cursor (whose file offset @off_to_vaddr maps to a
 * link-time address by adding it): absolute or pc-relative, 2, 4 or 8 bytes.
 */
static bool get_ptr(struct bytes *b, uint8_t enc, uint64_t off_to_vaddr, uint64_t *ret)
{
	uint64_t field = b->pos + off_to_vaddr, v;
	int n = enc_size(enc);

	if (n < 0 || ((enc & 0x70) != 0 && (enc & 0x70) != DW_EH_PE_pcrel) || b->pos > b->end ||
	    b->end - b->pos < (uint64_t)n)
		return false;
	v = decode_fixed(b->p + b->pos, enc);
	b->pos += (uint64_t)n;
	*ret = (enc & 0x70) == DW_EH_PE_pcrel ? field + v : v;
	return true;
}

/* The FDE pointer encoding of the CIE at file offset @cie ('R' augmentation, else absptr). */
static bool cie_fde_encoding(const struct unwind_image *img, uint64_t cie, uint64_t end,
			     uint8_t *ret_enc)
{
	struct bytes b = { img->data, cie, end };
	uint32_t len32, id;
	uint8_t version, c, enc = DW_EH_PE_absptr;
	char aug[16];
	unsigned int naug = 0;
	uint64_t auglen, v;

	if (!get_fixed(&b, &len32, 4) || len32 == 0 || len32 == 0xffffffffu)
		return false;
	if (len32 < b.end - b.pos)
		b.end = b.pos + len32;
	if (!get_fixed(&b, &id, 4) || id != 0 || !get_u8(&b, &version))
		return false;
	do {
		if (!get_u8(&b, &c) || naug == sizeof(aug))
			return false;
		aug[naug++] = (char)c;
	} while (c);
	if (strstr(aug, "eh"))
		return false; /* the pre-3.0 GCC layout */
	if (!skip_leb(&b) || !skip_leb(&b)) /* code and data alignment */
		return false;
	if (version == 1 ? !get_u8(&b, &c) : !skip_leb(&b)) /* return address column */
		return false;
	if (aug[0] != 'z') {
		*ret_enc = enc;
		return aug[0] == '\0';
	}
	if (!get_uleb(&b, &auglen))
		return false;
	for (unsigned int i = 1; aug[i]; i++) {
		switch (aug[i]) {
		case 'R':
			if (!get_u8(&b, &enc))
				return false;
			break;
		case 'P':
			if (!get_u8(&b, &c) || !get_ptr(&b, c & 0x7f, 0, &v))
				return false;
			break;
		case 'L':
			if (!get_u8(&b, &c))
				return false;
			break;
		case 'S':
		case 'B':
		case 'G':
			break;
		default:
			return false;
		}
	}
	*ret_enc = enc;
	return true;
}

static int cmp_entry(const void *a, const void *b)
{
	int32_t x = ((const int32_t *)a)[0], y = ((const int32_t *)b)[0];

	return (x > y) - (x < y);
}

/*
 * Build img->own_table from the .eh_frame at link-time address @vaddr, @len bytes:
 * one (initial_loc, fde) pair per FDE, relative to @vaddr, sorted.  Stops at the
 * first entry it cannot parse (what came before stays usable).  -ENOMEM or 0.
 */
static int build_own_table(struct unwind_image *img, uint64_t vaddr, uint64_t len)
{
	uint64_t off, end, pos, n = 0, cap = 0, last_cie = UINT64_MAX;
	uint8_t enc = 0;
	int32_t *t = NULL;

	if (!unwind_image_vaddr_off(img, vaddr, &off) || off > img->size || len > img->size - off)
		return 0;
	end = off + len;
	for (pos = off; end - pos >= 8;) {
		struct bytes b = { img->data, pos, end };
		uint32_t len32, id;
		uint64_t next, cie, pc_begin, pc_range;

		if (!get_fixed(&b, &len32, 4) || len32 == 0 || len32 == 0xffffffffu ||
		    len32 > end - b.pos)
			break; /* the terminator, 64-bit entries (never in .eh_frame), or garbage */
		next = b.pos + len32;
		if (!get_fixed(&b, &id, 4))
			break;
		if (id != 0) {
			/* An FDE: its CIE is id bytes before the id field. */
			if (id > b.pos - 4 - off)
				break;
			cie = b.pos - 4 - id;
			if (cie != last_cie) {
				if (!cie_fde_encoding(img, cie, end, &enc))
					break;
				last_cie = cie;
			}
			b.end = next;
			if (!get_ptr(&b, enc, vaddr - off, &pc_begin) ||
			    !get_ptr(&b, enc & 0x0f, 0, &pc_range))
				break;
			if (pc_range != 0 && pc_begin - vaddr + 0x80000000ULL <= 0xffffffffULL &&
			    pos - off <= 0x7fffffffULL) {
				if (n == cap) {
					int32_t *nt;

					cap = cap ? 2 * cap : 256;
					nt = realloc(t, cap * 2 * sizeof(*t));
					if (!nt) {
						free(t);
						return -ENOMEM;
					}
					t = nt;
				}
				t[2 * n] = (int32_t)(int64_t)(pc_begin - vaddr);
				t[2 * n + 1] = (int32_t)(pos - off);
				n++;
			}
		}
		pos = next;
	}
	if (n == 0) {
		free(t);
		return 0;
	}
	qsort(t, n, 2 * sizeof(*t), cmp_entry);
	img->own_table = t;
	img->has_hdr = true;
	img->hdr_vaddr = vaddr;
	img->table_vaddr = UNWIND_OWN_TABLE_ADDR;
	img->fde_count = n;
	return 0;
}

/* The section flags we need, by name, through libelf (which bounds-checks names). */
static void scan_sections(Elf *e, struct unwind_image *img, bool *ret_hdr_found,
			  uint64_t *ret_hdr_vaddr, uint64_t *ret_hdr_len, uint64_t *ret_eh_vaddr,
			  uint64_t *ret_eh_len)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (strcmp(name, ".eh_frame_hdr") == 0 && sh.sh_type == SHT_PROGBITS &&
		    (sh.sh_flags & SHF_ALLOC)) {
			*ret_hdr_found = true;
			*ret_hdr_vaddr = sh.sh_addr;
			*ret_hdr_len = sh.sh_size;
		} else if (strcmp(name, ".eh_frame") == 0 && sh.sh_type != SHT_NOBITS) {
			img->has_eh_frame = true;
			if (sh.sh_flags & SHF_ALLOC) {
				*ret_eh_vaddr = sh.sh_addr;
				*ret_eh_len = sh.sh_size;
			}
		} else if (strcmp(name, ".debug_frame") == 0 && sh.sh_type != SHT_NOBITS) {
			img->has_debug_frame = true;
		}
	}
}

int unwind_image_parse(struct unwind_image *img)
{
	Elf64_Ehdr eh;
	Elf *e;
	size_t phnum, nloads = 0;
	bool hdr_seg = false, hdr_sec = false;
	uint64_t seg_vaddr = 0, seg_len = 0, sec_vaddr = 0, sec_len = 0, eh_vaddr = 0, eh_len = 0;
	int r = -ENOEXEC;

	if (img->size < sizeof(eh))
		return -ENOEXEC;
	memcpy(&eh, img->data, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_ident[EI_VERSION] != EV_CURRENT ||
	    eh.e_machine != EM_X86_64 || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN))
		return -ENOEXEC;
	if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > PHDR_MAX ||
	    eh.e_phoff > img->size ||
	    (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > img->size - eh.e_phoff)
		return -ENOEXEC;
	img->e_type = eh.e_type;
	img->e_entry = eh.e_entry;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -ENOEXEC;
	e = elf_memory((char *)img->data, img->size);
	if (!e)
		return -ENOEXEC;
	if (elf_kind(e) != ELF_K_ELF || elf_getphdrnum(e, &phnum) != 0 || phnum != eh.e_phnum)
		goto out;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph))
			goto out;
		if (ph.p_type == PT_LOAD && ph.p_filesz > 0 && ph.p_offset < img->size)
			nloads++;
	}
	if (nloads == 0)
		goto out;
	img->loads = calloc(nloads, sizeof(*img->loads));
	if (!img->loads) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph))
			goto out;
		if (ph.p_type == PT_LOAD && ph.p_filesz > 0 && ph.p_offset < img->size &&
		    img->nloads < nloads) {
			struct unwind_load *l = &img->loads[img->nloads++];

			l->vaddr = ph.p_vaddr;
			l->offset = ph.p_offset;
			l->exec = (ph.p_flags & PF_X) != 0;
			/* A segment cut off by the end of the file has only the bytes present. */
			l->filesz = ph.p_filesz < img->size - ph.p_offset ? ph.p_filesz
									  : img->size - ph.p_offset;
		} else if (ph.p_type == PT_GNU_EH_FRAME && !hdr_seg) {
			hdr_seg = true;
			seg_vaddr = ph.p_vaddr;
			seg_len = ph.p_filesz;
		}
	}
	scan_sections(e, img, &hdr_sec, &sec_vaddr, &sec_len, &eh_vaddr, &eh_len);
	if (hdr_seg)
		parse_eh_frame_hdr(img, seg_vaddr, seg_len);
	if (!img->has_hdr && hdr_sec)
		parse_eh_frame_hdr(img, sec_vaddr, sec_len);
	r = 0;
	if (!img->has_hdr && eh_len > 0)
		r = build_own_table(img, eh_vaddr, eh_len);
out:
	elf_end(e);
	return r;
}

static void image_free(struct unwind_image *img)
{
	if (!img)
		return;
	if (img->heap)
		free(img->data);
	else if (img->data)
		(void)munmap(img->data, img->size);
	free(img->loads);
	free(img->own_table);
	free(img);
}

static void lru_unlink(struct unwind_ctx *u, struct unwind_image *img)
{
	if (img->lru_prev)
		img->lru_prev->lru_next = img->lru_next;
	else
		u->lru_head = img->lru_next;
	if (img->lru_next)
		img->lru_next->lru_prev = img->lru_prev;
	else
		u->lru_tail = img->lru_prev;
	img->lru_prev = img->lru_next = NULL;
}

static void lru_push_head(struct unwind_ctx *u, struct unwind_image *img)
{
	img->lru_prev = NULL;
	img->lru_next = u->lru_head;
	if (u->lru_head)
		u->lru_head->lru_prev = img;
	else
		u->lru_tail = img;
	u->lru_head = img;
}

static void hash_unlink(struct unwind_ctx *u, struct unwind_image *img)
{
	struct unwind_image **pp = &u->hash[hash_id(img->dev, img->inode)];

	while (*pp && *pp != img)
		pp = &(*pp)->hnext;
	if (*pp)
		*pp = img->hnext;
	img->hnext = NULL;
}

/* Make room for @need more bytes, never touching images the current sample uses. */
static void evict_for(struct unwind_ctx *u, uint64_t need)
{
	struct unwind_image *img = u->lru_tail;

	while (img && u->stats.elf_bytes + need > u->budget) {
		struct unwind_image *prev = img->lru_prev;

		if (img->stamp != u->serial) {
			lru_unlink(u, img);
			hash_unlink(u, img);
			u->stats.elf_bytes -= img->size;
			u->stats.elf_evicted++;
			image_free(img);
		}
		img = prev;
	}
}

static struct unwind_neg *neg_find(struct unwind_ctx *u, uint64_t dev, uint64_t inode, int32_t pid)
{
	for (unsigned int i = 0; i < UNWIND_NEG_MAX; i++) {
		struct unwind_neg *n = &u->neg[i];

		if (n->used && n->dev == dev && n->inode == inode &&
		    (n->pid == pid || n->pid == UNWIND_NEG_ANY_PID))
			return n;
	}
	return NULL;
}

static void neg_add(struct unwind_ctx *u, uint64_t dev, uint64_t inode, int32_t pid, int err)
{
	struct unwind_neg *n = &u->neg[u->neg_next];

	/* Round robin: the oldest failure is retried first, which is what we want. */
	u->neg_next = (u->neg_next + 1) % UNWIND_NEG_MAX;
	n->used = true;
	n->dev = dev;
	n->inode = inode;
	n->pid = pid;
	n->err = err;
}

void unwind_images_forget_pid(struct unwind_ctx *u, int32_t pid)
{
	for (unsigned int i = 0; i < UNWIND_NEG_MAX; i++) {
		if (u->neg[i].used && u->neg[i].pid == pid)
			u->neg[i].used = false;
	}
}

/*
 * Open, check, copy and parse the file of @m; returns 0 with *ret_img or -errno
 * (-EFBIG: larger than @max_size, found before a byte is read).
 */
static int image_open(int32_t pid, const struct maplog_map *m, uint64_t max_size,
		      struct unwind_image **ret_img)
{
	struct unwind_image *img;
	uint64_t size = 0;
	void *map;
	int fd, r;

	/* maplog's open: map_files or root, checked against the mapping's identity. */
	fd = maplog_open_mapped(pid, m->start, m->end, m->path, m->dev, m->inode, &size);
	if (fd < 0)
		return fd;
	if (size > SIZE_MAX) {
		r = -ENOEXEC;
		goto err_close;
	}
	if (size > max_size) {
		/*
		 * It could never fit the budget: refused before any copy, or one page
		 * of a sparse 8 GiB file mapped by a user would make the daemon copy
		 * 8 GiB (issue 13, item 4).
		 */
		r = -EFBIG;
		goto err_close;
	}
	/*
	 * A private copy, not a mapping of the file: a file truncated under a
	 * mapping raises SIGBUS at the next read of a lost page, and any user who
	 * owns a library a session unwinds through could kill the daemon that way.
	 * The copy costs the file's size in memory, which the budget counts anyway.
	 */
	map = size ? mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;
	if (map == MAP_FAILED) {
		r = size ? -errno : -ENOEXEC;
		goto err_close;
	}
	for (size_t got = 0; got < (size_t)size;) {
		ssize_t n = pread(fd, (char *)map + got, (size_t)size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* Shorter than it was a moment ago: changed under us. */
			r = n < 0 ? -errno : -ESTALE;
			(void)munmap(map, (size_t)size);
			goto err_close;
		}
		got += (size_t)n;
	}
	(void)mprotect(map, (size_t)size, PROT_READ);
	(void)close(fd);
	img = calloc(1, sizeof(*img));
	if (!img) {
		(void)munmap(map, (size_t)size);
		return -ENOMEM;
	}
	img->data = map;
	img->size = (size_t)size;
	img->dev = m->dev;
	img->inode = m->inode;
	r = unwind_image_parse(img);
	if (r < 0) {
		image_free(img);
		return r;
	}
	*ret_img = img;
	return 0;

err_close:
	(void)close(fd);
	return r;
}

/* An image of @size bytes on the heap, its bytes still to be filled; NULL: no memory. */
static struct unwind_image *heap_image(size_t size)
{
	struct unwind_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	img->heap = true;
	img->size = size;
	img->data = malloc(size);
	if (!img->data) {
		free(img);
		return NULL;
	}
	return img;
}

/*
 * The vDSO image from a sampled process's "[vdso]" mapping @m, for an unwinder
 * whose own process has none (the daemon under valgrind): the kernel's image, the
 * same in every 64-bit process.  Read with process_vm_readv(); the copy is
 * parsed as hostile data like any file.  Leaves u->vdso NULL on any failure.
 */
static void vdso_from(struct unwind_ctx *u, int32_t pid, const struct maplog_map *m)
{
	struct unwind_image *img;
	struct iovec local, remote;

	if (m->end <= m->start || m->end - m->start > VDSO_MAX_BYTES)
		return;
	img = heap_image((size_t)(m->end - m->start));
	if (!img)
		return;
	local = (struct iovec){ .iov_base = img->data, .iov_len = img->size };
	remote = (struct iovec){ .iov_base = (void *)(uintptr_t)m->start, .iov_len = img->size };
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)img->size ||
	    unwind_image_parse(img) < 0) {
		image_free(img);
		return;
	}
	u->vdso = img;
}

int unwind_images_get(struct unwind_ctx *u, int32_t pid, const struct maplog_map *m,
		      struct unwind_image **ret_img)
{
	int32_t procpid = m->pid > 0 ? m->pid : pid;
	struct unwind_image *img;
	struct unwind_neg *neg;
	unsigned int h;
	int r;

	if (!m->path)
		return -ENODATA;
	if (strcmp(m->path, "[vdso]") == 0) {
		if (!u->vdso && u->vdso_tries < VDSO_TRIES) {
			u->vdso_tries++;
			vdso_from(u, procpid, m);
		}
		if (!u->vdso)
			return -ENODATA;
		u->vdso->stamp = u->serial;
		*ret_img = u->vdso;
		return 0;
	}
	/* Anonymous memory, [stack], [heap], memfd names: no file to read. */
	if (m->path[0] != '/' || m->inode == 0)
		return -ENODATA;

	h = hash_id(m->dev, m->inode);
	for (img = u->hash[h]; img; img = img->hnext) {
		if (img->dev == m->dev && img->inode == m->inode) {
			if (img != u->lru_head) {
				lru_unlink(u, img);
				lru_push_head(u, img);
			}
			img->stamp = u->serial;
			*ret_img = img;
			return 0;
		}
	}
	neg = neg_find(u, m->dev, m->inode, procpid);
	if (neg)
		return neg->err;

	r = image_open(procpid, m, u->budget > UNWIND_IMAGE_FLOOR ? u->budget : UNWIND_IMAGE_FLOOR,
		       &img);
	if (r < 0) {
		/*
		 * Out of memory is transient; everything else is remembered: for every
		 * process if it is the file's own property (its size, its contents),
		 * else for this one (gone, unreadable, replaced in its view).
		 */
		if (r == -EFBIG)
			u->stats.elf_too_big++;
		if (r == -EFBIG || r == -ENOEXEC)
			neg_add(u, m->dev, m->inode, UNWIND_NEG_ANY_PID, r);
		else if (r != -ENOMEM && r != -EMFILE && r != -ENFILE)
			neg_add(u, m->dev, m->inode, procpid, r);
		return r;
	}
	evict_for(u, img->size);
	img->stamp = u->serial;
	img->hnext = u->hash[h];
	u->hash[h] = img;
	lru_push_head(u, img);
	u->stats.elf_bytes += img->size;
	u->stats.elf_opened++;
	if (img->own_table)
		u->stats.own_tables++;
	*ret_img = img;
	return 0;
}

int unwind_images_init(struct unwind_ctx *u)
{
	const void *base;
	struct unwind_image *img;
	size_t size;

	u->vdso = NULL;
	if (maplog_vdso_self(&base, &size) < 0)
		return 0;
	img = heap_image(size);
	if (!img)
		return -ENOMEM;
	memcpy(img->data, base, size);
	if (unwind_image_parse(img) < 0) {
		/* Without a parsable vDSO, "[vdso]" PCs are simply frames without info. */
		image_free(img);
		return 0;
	}
	u->vdso = img;
	return 0;
}

void unwind_images_exit(struct unwind_ctx *u)
{
	struct unwind_image *img = u->lru_head;

	while (img) {
		struct unwind_image *next = img->lru_next;

		image_free(img);
		img = next;
	}
	u->lru_head = u->lru_tail = NULL;
	memset(u->hash, 0, sizeof(u->hash));
	u->stats.elf_bytes = 0;
	image_free(u->vdso);
	u->vdso = NULL;
}

int unwind_ctx__image_info(struct unwind_ctx *u, int32_t pid, const struct maplog_map *m,
			   struct unwind_image_info *ret_info)
{
	struct unwind_image_info info;
	struct unwind_image *img;
	int r;

	u->serial++;
	r = unwind_images_get(u, pid, m, &img);
	if (r < 0)
		return r;
	memset(&info, 0, sizeof(info));
	info.e_type = img->e_type;
	info.size = img->size;
	info.has_hdr = img->has_hdr;
	info.own_table = img->own_table != NULL;
	info.has_eh_frame = img->has_eh_frame;
	info.has_debug_frame = img->has_debug_frame;
	info.is_vdso = img == u->vdso;
	info.fde_count = img->fde_count;
	if (!unwind_image_bias(img, m, &info.bias))
		return -ENOEXEC;
	*ret_info = info;
	return 0;
}
