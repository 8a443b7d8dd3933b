/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind-elf.c: the ELF image cache of the unwinder: open, check, map, parse, evict.
 *
 * PUBLIC INTERFACES
 *   unwind_images_init(), unwind_images_exit(), unwind_images_get(),
 *   unwind_images_forget_pid(), unwind_image_parse(), unwind_image_bias(),
 *   unwind_image_read(), unwind_image_vaddr_off(), unwind_ctx__image_info(),
 *   unwind_ctx__close_files()
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
 *   on a flush) allows a new attempt.  A file that is not a usable ELF image is
 *   remembered per (dev, inode) for every pid.
 *
 *   Only what unwinding reads is copied, in chunks of UNWIND_CHUNK bytes read with
 *   pread(2) on first use: the ELF and program headers, the section headers and
 *   names, the parts of .eh_frame_hdr's search table and of .eh_frame that lookups
 *   touch, and the code bytes an epilogue check reads.  That is a few percent of a
 *   file (a 2 MiB libc costs tens of KiB), so a file larger than the budget is
 *   unwound too, and an always-on profile's cache does not thrash (it copied whole
 *   files until issue 14's soak bench showed a 32 MiB cache evicting one big binary
 *   per sample).  Copies, never a mapping of the file: a file truncated in place
 *   while mapped makes a read of its lost pages raise SIGBUS, and any user who owns
 *   a library that a session unwinds through could kill the daemon so
 *   (test-faults.sh); a pread that comes back short instead marks the image gone
 *   (its reads fail, the walk ends UNWIND_REPLACED).  The image keeps its
 *   descriptor until unwind_ctx__close_files() (the daemon calls it after every
 *   merge round, so that it holds no file open on a file system someone wants to
 *   unmount), at most UNWIND_FDS_MAX per context (least recently used closed
 *   first); an image without one reopens the file through the last mapping that
 *   used it, checked against dev/inode and size like the first open, at most once
 *   per sample.  A file is a regular file (maplog_open_mapped()
 *   refuses anything else), so a read does not wait on a pipe or a terminal.
 *
 *   The headers are parsed here, not with libelf: libelf wants either the whole
 *   file in memory (elf_memory) or a descriptor it reads with no bound from the
 *   file's size (ELF_C_READ, where a hostile extended section count sizes its
 *   tables).  The ELF identification must be ELFCLASS64, little-endian, x86-64;
 *   the program header table must lie in the file (at most PHDR_MAX entries), the
 *   section header table too (at most UNWIND_SHDR_MAX), and each section name is
 *   read within .shstrtab.  .eh_frame_hdr is found through PT_GNU_EH_FRAME
 *   (present even when section headers are stripped), else through its section,
 *   and is used only when its search table has the one encoding libunwind's remote
 *   table lookup understands (datarel sdata4 pairs) and lies wholly inside the
 *   file.  Every read of file bytes goes through image_copy(), which checks the
 *   range against the file size.
 *
 *   The vDSO is the same image for every process on one kernel, so the daemon's
 *   own (maplog_vdso_self()) is copied
 *   once and serves every "[vdso]" mapping, loaded at that mapping's start.  A
 *   daemon without one (under valgrind) reads it from a sampled process's
 *   "[vdso]" mapping (process_vm_readv), at most VDSO_TRIES times.
 *
 *   Budget: elf_bytes counts the chunks held.  A new chunk that takes it over the
 *   budget evicts least recently used images the current sample does not use;
 *   if that is not enough, chunks of the images in use are dropped (every read
 *   copies out of a chunk, so none is referenced after its read).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

static void evict_lru(struct unwind_ctx *u);

/* The position of chunk @idx in img->chunks, or where it would go (*ret_found false). */
static uint32_t chunk_pos(const struct unwind_image *img, uint64_t idx, bool *ret_found)
{
	uint32_t lo = 0, hi = img->nchunks;

	if (img->last < img->nchunks && img->chunks[img->last].idx == idx) {
		*ret_found = true;
		return img->last;
	}
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (img->chunks[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	*ret_found = lo < img->nchunks && img->chunks[lo].idx == idx;
	return lo;
}

/* Free @img's chunks, all but chunk @keep (UINT64_MAX: none kept); returns how many. */
static uint32_t chunks_free(struct unwind_ctx *u, struct unwind_image *img, uint64_t keep)
{
	uint32_t k = 0, n = img->nchunks;

	for (uint32_t j = 0; j < n; j++) {
		if (img->chunks[j].idx == keep) {
			img->chunks[k++] = img->chunks[j];
			continue;
		}
		free(img->chunks[j].data);
		img->held -= img->chunks[j].len;
		u->stats.elf_bytes -= img->chunks[j].len;
	}
	img->nchunks = k;
	img->last = 0;
	return n - k;
}

static void image_close_fd(struct unwind_ctx *u, struct unwind_image *img)
{
	if (img->fd >= 0) {
		(void)close(img->fd);
		img->fd = -1;
		u->nfds--;
	}
}

/* Close descriptors of the least recently used images until one more fits. */
static void fds_make_room(struct unwind_ctx *u)
{
	for (struct unwind_image *i = u->lru_tail; i && u->nfds >= UNWIND_FDS_MAX; i = i->lru_prev)
		image_close_fd(u, i);
}

/*
 * A descriptor of @img's file: its own, or the file reopened through the last
 * mapping that used it (same dev/inode and size, or the image is gone).  -1 when
 * there is none now.
 */
static int image_fd(struct unwind_ctx *u, struct unwind_image *img)
{
	uint64_t size = 0;
	int fd;

	if (img->fd >= 0 || img->gone || !img->src_path || img->reopen_serial == u->serial)
		return img->fd;
	fd = maplog_open_mapped(img->src_pid, img->src_start, img->src_end, img->src_path,
				img->dev, img->inode, &size);
	if (fd < 0) {
		/* Gone for that process; a later sample may come through another one. */
		img->reopen_serial = u->serial;
		return -1;
	}
	if (size != img->size) {
		/* Rewritten in place since we read its headers: nothing more of it is read. */
		(void)close(fd);
		img->gone = true;
		return -1;
	}
	fds_make_room(u);
	img->fd = fd;
	u->nfds++;
	return fd;
}

/*
 * Keep the budget after a chunk was added to @img: evict images the current
 * sample does not use, then drop chunks of those it does, all but @img's chunk
 * @keep.
 */
static void budget_keep(struct unwind_ctx *u, struct unwind_image *img, uint64_t keep)
{
	if (u->stats.elf_bytes <= u->budget)
		return;
	evict_lru(u);
	for (struct unwind_image *i = u->lru_tail; i && u->stats.elf_bytes > u->budget;
	     i = i->lru_prev)
		u->stats.elf_dropped += chunks_free(u, i, i == img ? keep : UINT64_MAX);
}

/* Chunk @idx of @img, read from the file if it is not held; NULL if it cannot be. */
static const struct unwind_chunk *chunk_get(struct unwind_ctx *u, struct unwind_image *img,
					    uint64_t idx)
{
	uint64_t off = idx * UNWIND_CHUNK;
	struct unwind_chunk c;
	bool found;
	uint32_t pos = chunk_pos(img, idx, &found), len;
	int fd;

	if (found) {
		img->last = pos;
		return &img->chunks[pos];
	}
	fd = image_fd(u, img);
	if (fd < 0)
		return NULL;
	len = img->size - off < UNWIND_CHUNK ? (uint32_t)(img->size - off) : UNWIND_CHUNK;
	if (img->nchunks == img->chunk_cap) {
		uint32_t cap = img->chunk_cap ? 2 * img->chunk_cap : 8;
		struct unwind_chunk *nc = realloc(img->chunks, cap * sizeof(*nc));

		if (!nc)
			return NULL;
		img->chunks = nc;
		img->chunk_cap = cap;
	}
	c = (struct unwind_chunk){ .idx = idx, .len = len, .data = malloc(len) };
	if (!c.data)
		return NULL;
	for (uint32_t got = 0; got < len;) {
		ssize_t n = pread(fd, c.data + got, len - got, (off_t)(off + got));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			/* Shorter than when it was opened, or unreadable: changed under us. */
			free(c.data);
			img->gone = true;
			return NULL;
		}
		got += (uint32_t)n;
	}
	u->stats.elf_reads++;
	memmove(&img->chunks[pos + 1], &img->chunks[pos],
		(img->nchunks - pos) * sizeof(img->chunks[0]));
	img->chunks[pos] = c;
	img->nchunks++;
	img->held += len;
	u->stats.elf_bytes += len;
	budget_keep(u, img, idx);
	/* The budget may have moved it (never dropped it): find it again. */
	pos = chunk_pos(img, idx, &found);
	img->last = pos;
	return &img->chunks[pos];
}

/* The @len bytes at file offset @off (all inside the file) into @dst; false if unreadable. */
static bool image_copy(struct unwind_ctx *u, struct unwind_image *img, uint64_t off, uint64_t len,
		       void *dst)
{
	uint8_t *d = dst;

	if (off > img->size || len > img->size - off)
		return false;
	if (img->mem) {
		memcpy(d, img->mem + off, len);
		return true;
	}
	while (len > 0) {
		const struct unwind_chunk *c = chunk_get(u, img, off / UNWIND_CHUNK);
		uint64_t in = off % UNWIND_CHUNK, n;

		if (!c || in >= c->len)
			return false;
		n = c->len - in < len ? c->len - in : len;
		memcpy(d, c->data + in, n);
		d += n;
		off += n;
		len -= n;
	}
	return true;
}

bool unwind_image_read(struct unwind_ctx *u, struct unwind_image *img, uint64_t off,
		       uint64_t *ret_val)
{
	uint64_t v = 0;

	if (off >= img->size)
		return false;
	if (!image_copy(u, img, off, img->size - off < sizeof(v) ? img->size - off : sizeof(v), &v))
		return false;
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

	/*
	 * An ET_EXEC is loaded at its link address (bias 0), which the rule below gives
	 * too; but its code can be mapped a second time elsewhere (remapped code, as node
	 * maps its builtins), and that mapping has a bias of its own.
	 */
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
	if (!seg) {
		*ret_bias = 0;
		return img->e_type == ET_EXEC;
	}
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
static void parse_eh_frame_hdr(struct unwind_ctx *u, struct unwind_image *img, uint64_t vaddr,
			       uint64_t len)
{
	uint8_t p[4 + 8 + 8]; /* the header: 4 bytes, then at most two 8-byte fields */
	uint64_t off, pos, count;
	int ptr_sz, cnt_sz;

	if (len < 4 || !unwind_image_vaddr_off(img, vaddr, &off) || off > img->size ||
	    len > img->size - off)
		return;
	memset(p, 0, sizeof(p));
	if (!image_copy(u, img, off, len < sizeof(p) ? len : sizeof(p), p))
		return;
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

/* The FDE pointer encoding of the CIE at offset @cie of @buf ('R' augmentation, else absptr). */
static bool cie_fde_encoding(const uint8_t *buf, uint64_t cie, uint64_t end, uint8_t *ret_enc)
{
	struct bytes b = { buf, cie, end };
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
 * first entry it cannot parse (what came before stays usable).  The section is
 * copied whole for the walk; one larger than the budget is not indexed.  Returns
 * -ENOMEM or 0.
 */
static int build_own_table(struct unwind_ctx *u, struct unwind_image *img, uint64_t vaddr,
			   uint64_t len)
{
	uint64_t off, end, pos, n = 0, cap = 0, last_cie = UINT64_MAX;
	uint8_t enc = 0, *buf;
	int32_t *t = NULL;

	if (!unwind_image_vaddr_off(img, vaddr, &off) || off > img->size || len > img->size - off)
		return 0;
	if (len > (u->budget > UNWIND_IMAGE_FLOOR ? u->budget : UNWIND_IMAGE_FLOOR)) {
		u->stats.elf_too_big++;
		return 0;
	}
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	if (!image_copy(u, img, off, len, buf)) {
		free(buf);
		return 0;
	}
	end = len;
	for (pos = 0; end - pos >= 8;) {
		struct bytes b = { buf, pos, end };
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
			if (id > b.pos - 4)
				break;
			cie = b.pos - 4 - id;
			if (cie != last_cie) {
				if (!cie_fde_encoding(buf, cie, end, &enc))
					break;
				last_cie = cie;
			}
			b.end = next;
			if (!get_ptr(&b, enc, vaddr, &pc_begin) || !get_ptr(&b, enc & 0x0f, 0, &pc_range))
				break;
			if (pc_range != 0 && pc_begin - vaddr + 0x80000000ULL <= 0xffffffffULL &&
			    pos <= 0x7fffffffULL) {
				if (n == cap) {
					int32_t *nt;

					cap = cap ? 2 * cap : 256;
					nt = realloc(t, cap * 2 * sizeof(*t));
					if (!nt) {
						free(t);
						free(buf);
						return -ENOMEM;
					}
					t = nt;
				}
				t[2 * n] = (int32_t)(int64_t)(pc_begin - vaddr);
				t[2 * n + 1] = (int32_t)pos;
				n++;
			}
		}
		pos = next;
	}
	free(buf);
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

/*
 * The name at @off of the section name table [@tab, @tab + @tab_len) into @name
 * (@len bytes with its NUL: longer names, which we never look for, read as "").
 */
static void section_name(struct unwind_ctx *u, struct unwind_image *img, uint64_t tab,
			 uint64_t tab_len, uint64_t off, char *name, size_t len)
{
	size_t n = off < tab_len ? (tab_len - off < len ? (size_t)(tab_len - off) : len) : 0;

	if (n == 0 || !image_copy(u, img, tab + off, n, name) || !memchr(name, '\0', n))
		name[0] = '\0';
}

/* The longest .init or .fini read for the shape of glibc's (23 bytes, 27 with endbr64). */
#define STUB_MAX 64

/*
 * A .init or .fini section of glibc's shape (crti.o's prologue, crtn.o's
 * epilogue, calls between): [endbr64] sub $8,%rsp ... add $8,%rsp; ret.  Noted
 * in img->stubs; anything else is not.
 */
static void note_stub(struct unwind_ctx *u, struct unwind_image *img, const Elf64_Shdr *sh)
{
	static const uint8_t endbr[4] = { 0xf3, 0x0f, 0x1e, 0xfa };
	static const uint8_t sub8[4] = { 0x48, 0x83, 0xec, 0x08 };
	static const uint8_t tail[5] = { 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	uint8_t b[STUB_MAX];
	uint32_t off = 0;

	if (img->nstubs >= 2 || sh->sh_type != SHT_PROGBITS ||
	    (sh->sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) != (SHF_ALLOC | SHF_EXECINSTR) ||
	    sh->sh_size < sizeof(sub8) + sizeof(tail) || sh->sh_size > STUB_MAX ||
	    !image_copy(u, img, sh->sh_offset, sh->sh_size, b))
		return;
	if (memcmp(b, endbr, sizeof(endbr)) == 0)
		off = sizeof(endbr);
	if (sh->sh_size < off + sizeof(sub8) + sizeof(tail) || memcmp(b + off, sub8, sizeof(sub8)) != 0 ||
	    memcmp(b + sh->sh_size - sizeof(tail), tail, sizeof(tail)) != 0)
		return;
	img->stubs[img->nstubs].vaddr = sh->sh_addr;
	img->stubs[img->nstubs].size = sh->sh_size;
	img->stubs[img->nstubs].body = off + (uint32_t)sizeof(sub8);
	img->nstubs++;
}

/*
 * The sections we need, by name: .eh_frame_hdr, .eh_frame and .debug_frame, and
 * .init and .fini for note_stub().  A
 * table outside the file, too large, or whose names are unreadable is no table
 * (stripped section headers are normal: PT_GNU_EH_FRAME still finds the hdr).
 */
static void scan_sections(struct unwind_ctx *u, struct unwind_image *img, const Elf64_Ehdr *eh,
			  bool *ret_hdr_found, uint64_t *ret_hdr_vaddr, uint64_t *ret_hdr_len,
			  uint64_t *ret_eh_vaddr, uint64_t *ret_eh_len)
{
	Elf64_Shdr sh0, str, sh;
	uint64_t shnum = eh->e_shnum, strndx = eh->e_shstrndx;

	if (eh->e_shoff == 0 || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !image_copy(u, img, eh->e_shoff, sizeof(sh0), &sh0))
		return;
	if (shnum == 0)
		shnum = sh0.sh_size; /* more than SHN_LORESERVE sections: the count is here */
	if (strndx == SHN_XINDEX)
		strndx = sh0.sh_link;
	if (shnum == 0 || shnum > UNWIND_SHDR_MAX || strndx >= shnum ||
	    shnum * sizeof(sh) > img->size - eh->e_shoff ||
	    !image_copy(u, img, eh->e_shoff + strndx * sizeof(str), sizeof(str), &str) ||
	    str.sh_type == SHT_NOBITS || str.sh_offset > img->size ||
	    str.sh_size > img->size - str.sh_offset)
		return;
	for (uint64_t i = 1; i < shnum; i++) {
		char name[16]; /* ".eh_frame_hdr", ".debug_frame" and ".eh_frame" fit */

		if (!image_copy(u, img, eh->e_shoff + i * sizeof(sh), sizeof(sh), &sh))
			return;
		section_name(u, img, str.sh_offset, str.sh_size, sh.sh_name, name, sizeof(name));
		if (strcmp(name, ".eh_frame_hdr") == 0) {
			if (sh.sh_type == SHT_PROGBITS && (sh.sh_flags & SHF_ALLOC)) {
				*ret_hdr_found = true;
				*ret_hdr_vaddr = sh.sh_addr;
				*ret_hdr_len = sh.sh_size;
			}
		} else if (strcmp(name, ".eh_frame") == 0) {
			if (sh.sh_type != SHT_NOBITS) {
				img->has_eh_frame = true;
				if (sh.sh_flags & SHF_ALLOC) {
					*ret_eh_vaddr = sh.sh_addr;
					*ret_eh_len = sh.sh_size;
				}
			}
		} else if (strcmp(name, ".debug_frame") == 0) {
			if (sh.sh_type != SHT_NOBITS)
				img->has_debug_frame = true;
		} else if (strcmp(name, ".init") == 0 || strcmp(name, ".fini") == 0) {
			note_stub(u, img, &sh);
		}
	}
}

int unwind_image_parse(struct unwind_ctx *u, struct unwind_image *img)
{
	Elf64_Ehdr eh;
	Elf64_Phdr *ph;
	size_t nloads = 0;
	bool hdr_seg = false, hdr_sec = false;
	uint64_t seg_vaddr = 0, seg_len = 0, sec_vaddr = 0, sec_len = 0, eh_vaddr = 0, eh_len = 0;
	int r;

	if (img->size < sizeof(eh) || !image_copy(u, img, 0, sizeof(eh), &eh))
		return img->gone ? -ESTALE : -ENOEXEC;
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

	ph = calloc(eh.e_phnum, sizeof(*ph));
	if (!ph)
		return -ENOMEM;
	if (!image_copy(u, img, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(*ph), ph)) {
		r = img->gone ? -ESTALE : -ENOEXEC;
		goto out;
	}
	r = -ENOEXEC;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz > 0 && ph[i].p_offset < img->size)
			nloads++;
	}
	if (nloads == 0)
		goto out;
	img->loads = calloc(nloads, sizeof(*img->loads));
	if (!img->loads) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD && ph[i].p_filesz > 0 && ph[i].p_offset < img->size) {
			struct unwind_load *l = &img->loads[img->nloads++];

			l->vaddr = ph[i].p_vaddr;
			l->offset = ph[i].p_offset;
			l->exec = (ph[i].p_flags & PF_X) != 0;
			/* A segment cut off by the end of the file has only the bytes present. */
			l->filesz = ph[i].p_filesz < img->size - ph[i].p_offset
					    ? ph[i].p_filesz
					    : img->size - ph[i].p_offset;
		} else if (ph[i].p_type == PT_GNU_EH_FRAME && !hdr_seg) {
			hdr_seg = true;
			seg_vaddr = ph[i].p_vaddr;
			seg_len = ph[i].p_filesz;
		}
	}
	scan_sections(u, img, &eh, &hdr_sec, &sec_vaddr, &sec_len, &eh_vaddr, &eh_len);
	if (hdr_seg)
		parse_eh_frame_hdr(u, img, seg_vaddr, seg_len);
	if (!img->has_hdr && hdr_sec)
		parse_eh_frame_hdr(u, img, sec_vaddr, sec_len);
	r = 0;
	if (!img->has_hdr && eh_len > 0)
		r = build_own_table(u, img, eh_vaddr, eh_len);
	if (r == 0 && img->gone)
		r = -ESTALE; /* it shrank while we read it: what we parsed is not the mapped file */
out:
	free(ph);
	return r;
}

static void image_free(struct unwind_ctx *u, struct unwind_image *img)
{
	if (!img)
		return;
	(void)chunks_free(u, img, UINT64_MAX);
	free(img->chunks);
	image_close_fd(u, img);
	free(img->src_path);
	free(img->mem);
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

/* Drop @img from the cache (the hash, the LRU list) and free it. */
static void image_evict(struct unwind_ctx *u, struct unwind_image *img)
{
	lru_unlink(u, img);
	hash_unlink(u, img);
	u->stats.elf_evicted++;
	image_free(u, img);
}

/* Evict until the held bytes fit the budget, never images the current sample uses. */
static void evict_lru(struct unwind_ctx *u)
{
	struct unwind_image *img = u->lru_tail;

	while (img && u->stats.elf_bytes > u->budget) {
		struct unwind_image *prev = img->lru_prev;

		if (img->stamp != u->serial)
			image_evict(u, img);
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

/* Note @m (of process @pid) as the mapping to reopen @img's file through. */
static int image_source(struct unwind_image *img, int32_t pid, const struct maplog_map *m)
{
	img->src_pid = pid;
	img->src_start = m->start;
	img->src_end = m->end;
	if (!img->src_path || strcmp(img->src_path, m->path) != 0) {
		char *p = strdup(m->path);

		if (!p)
			return -ENOMEM;
		free(img->src_path);
		img->src_path = p;
	}
	return 0;
}

/*
 * Open, check and parse the file of @m (reading its headers only); returns 0 with
 * *ret_img or -errno.  The image keeps the descriptor.
 */
static int image_open(struct unwind_ctx *u, int32_t pid, const struct maplog_map *m,
		      struct unwind_image **ret_img)
{
	struct unwind_image *img;
	uint64_t size = 0;
	int fd, r;

	/* maplog's open: map_files or root, checked against the mapping's identity. */
	fd = maplog_open_mapped(pid, m->start, m->end, m->path, m->dev, m->inode, &size);
	if (fd < 0)
		return fd;
	img = calloc(1, sizeof(*img));
	if (!img) {
		(void)close(fd);
		return -ENOMEM;
	}
	fds_make_room(u);
	img->fd = fd;
	u->nfds++;
	img->size = size;
	img->dev = m->dev;
	img->inode = m->inode;
	r = image_source(img, pid, m);
	if (r == 0)
		r = unwind_image_parse(u, img);
	if (r < 0) {
		image_free(u, img);
		return r;
	}
	*ret_img = img;
	return 0;
}

/* An image of @size bytes on the heap, its bytes still to be filled; NULL: no memory. */
static struct unwind_image *heap_image(size_t size)
{
	struct unwind_image *img = calloc(1, sizeof(*img));

	if (!img)
		return NULL;
	img->fd = -1;
	img->size = size;
	img->mem = malloc(size);
	if (!img->mem) {
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
	local = (struct iovec){ .iov_base = img->mem, .iov_len = img->size };
	remote = (struct iovec){ .iov_base = (void *)(uintptr_t)m->start, .iov_len = img->size };
	if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)img->size ||
	    unwind_image_parse(u, img) < 0) {
		image_free(u, img);
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
			if (img->gone) {
				/*
				 * It shrank after it was opened: refused like a replaced
				 * file, and remembered for this process until its mappings
				 * change (then it is opened again, whatever it is by then).
				 */
				if (img->stamp != u->serial) {
					image_evict(u, img);
					neg_add(u, m->dev, m->inode, procpid, -ESTALE);
				}
				return -ESTALE;
			}
			if (img != u->lru_head) {
				lru_unlink(u, img);
				lru_push_head(u, img);
			}
			/* Once a sample: the mapping a reopen would go through (if no memory, the old one). */
			if (img->stamp != u->serial)
				(void)image_source(img, procpid, m);
			img->stamp = u->serial;
			*ret_img = img;
			return 0;
		}
	}
	neg = neg_find(u, m->dev, m->inode, procpid);
	if (neg)
		return neg->err;

	r = image_open(u, procpid, m, &img);
	if (r < 0) {
		/*
		 * Out of memory is transient; everything else is remembered: for every
		 * process if it is the file's own property (its contents), else for
		 * this one (gone, unreadable, replaced in its view).
		 */
		if (r == -ENOEXEC)
			neg_add(u, m->dev, m->inode, UNWIND_NEG_ANY_PID, r);
		else if (r != -ENOMEM && r != -EMFILE && r != -ENFILE)
			neg_add(u, m->dev, m->inode, procpid, r);
		return r;
	}
	img->stamp = u->serial;
	img->hnext = u->hash[h];
	u->hash[h] = img;
	lru_push_head(u, img);
	evict_lru(u);
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
	memcpy(img->mem, base, size);
	if (unwind_image_parse(u, img) < 0) {
		/* Without a parsable vDSO, "[vdso]" PCs are simply frames without info. */
		image_free(u, img);
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

		image_free(u, img);
		img = next;
	}
	u->lru_head = u->lru_tail = NULL;
	memset(u->hash, 0, sizeof(u->hash));
	image_free(u, u->vdso);
	u->vdso = NULL;
}

void unwind_ctx__close_files(struct unwind_ctx *u)
{
	if (!u)
		return;
	for (struct unwind_image *img = u->lru_head; img; img = img->lru_next)
		image_close_fd(u, img);
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
