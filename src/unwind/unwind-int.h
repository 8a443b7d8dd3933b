/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * unwind-int.h: private interfaces of the unwind module (src/unwind and its test only).
 *
 * PUBLIC INTERFACES
 *   struct unwind_image        one parsed, mapped ELF file (or the vDSO copy)
 *   struct unwind_ctx          the context behind include/hwpmcd/unwind.h
 *   unwind_images_*()          the image cache (unwind-elf.c)
 *   unwind_image_*()           address translation and reads inside one image
 *   unwind_ctx__image_info()   what the cache knows about a mapping's file (tests)
 *
 * IMPLEMENTATION NOTES
 *   An image is one ELF file (by dev/inode) and what the unwinder needs from its
 *   headers: the PT_LOAD table (to turn a link-time address into a file offset),
 *   the .eh_frame_hdr binary search table and whether the file only has
 *   .debug_frame.  Of the file's bytes it holds only the chunks (UNWIND_CHUNK
 *   bytes each) that were read: the headers, the parts of .eh_frame_hdr and
 *   .eh_frame that lookups touched, a few code bytes for epilogue checks.  They
 *   are read on first use with pread(2) from a descriptor the image keeps (at most
 *   UNWIND_FDS_MAX per context; an image whose descriptor was closed reopens the
 *   file, checked against its dev/inode, through the last mapping that used it).
 *   Images live in a hash table keyed by (dev, inode) and on an LRU list; an image
 *   whose stamp equals the context's sample serial is in use by the sample being
 *   unwound and is never evicted, so pointers to it stay valid until
 *   unwind_ctx__unwind() returns.  Its chunks may be dropped at any time: no
 *   pointer into a chunk outlives the read that copies from it.  Only
 *   libunwind-free code is declared here; the libunwind state is private to
 *   unwind-step.c.
 */
#ifndef HWPMCD_UNWIND_INT_H
#define HWPMCD_UNWIND_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hwpmcd/unwind.h"

/* One PT_LOAD: the bytes [offset, offset + filesz) of the file appear at vaddr. */
struct unwind_load {
	uint64_t vaddr, offset, filesz;
	bool exec; /* PF_X: what an executable mapping of its first file page maps */
};

/* The bytes [idx * UNWIND_CHUNK, idx * UNWIND_CHUNK + len) of a file, copied. */
struct unwind_chunk {
	uint64_t idx;
	uint8_t *data;
	uint32_t len; /* UNWIND_CHUNK, or less for the file's last chunk */
};

#define UNWIND_CHUNK (16u << 10)

struct unwind_image {
	uint64_t dev, inode;
	uint64_t size;	    /* of the file (or the vDSO copy) */
	uint8_t *mem;	    /* the vDSO: every byte, on the heap, never evicted; NULL for a file */
	int fd;		    /* file: open while cached (-1: closed to stay within UNWIND_FDS_MAX) */
	bool gone;	    /* file: a read found it shorter or unreadable: no more reads */
	uint64_t reopen_serial; /* the sample whose reopen failed: not tried again in it */
	/* The last mapping that used the file, to reopen it. */
	int32_t src_pid;
	uint64_t src_start, src_end;
	char *src_path;
	struct unwind_chunk *chunks; /* sorted by idx */
	uint32_t nchunks, chunk_cap, last; /* last: index of the chunk read last */
	uint64_t held;			   /* bytes of the chunks (counted in elf_bytes) */
	uint16_t e_type; /* ET_EXEC or ET_DYN */
	uint64_t e_entry; /* link-time entry point (0: none) */
	uint32_t nloads;
	struct unwind_load *loads;
	bool has_hdr;	      /* a usable .eh_frame_hdr search table */
	uint64_t hdr_vaddr;   /* link-time address of .eh_frame_hdr (libunwind's segbase) */
	uint64_t table_vaddr; /* link-time address of its table of (initial_loc, fde) pairs */
	uint64_t fde_count;
	/*
	 * Without .eh_frame_hdr (static glibc links): our own search table built from
	 * .eh_frame, in the same (int32 initial_loc, int32 fde) form relative to
	 * hdr_vaddr, which is then .eh_frame's address.  libunwind reads it through the
	 * accessors at the synthetic address UNWIND_OWN_TABLE_ADDR (table_vaddr).
	 */
	int32_t *own_table;
	/*
	 * glibc's _init and _fini (crti.o + crtn.o: [endbr64] sub $8,%rsp ... add
	 * $8,%rsp; ret) have no CFI: their .init and .fini sections, when they have
	 * that shape, unwound by it (fallback_step()).  body: the offset past the sub.
	 */
	struct unwind_stub {
		uint64_t vaddr, size;
		uint32_t body;
	} stubs[2];
	uint32_t nstubs;
	bool has_eh_frame;    /* an .eh_frame section (informative) */
	bool has_debug_frame; /* a .debug_frame section: without has_hdr, unusable here */
	/* cache */
	struct unwind_image *hnext;
	struct unwind_image *lru_prev, *lru_next;
	uint64_t stamp; /* sample serial of the last use */
};

/*
 * A file that could not be used for a process: not retried until a flush of the pid.
 * A failure that is the file's own (larger than the budget, not an ELF image we can
 * use) holds for every process: pid UNWIND_NEG_ANY_PID, never flushed by a pid.
 */
#define UNWIND_NEG_ANY_PID (-1)
struct unwind_neg {
	uint64_t dev, inode;
	int32_t pid;
	bool used;
	int err; /* -ESTALE: replaced on disk; other negative errno: unreadable or not usable */
};

/* Where libunwind sees an image's own search table: not a canonical x86-64 address. */
#define UNWIND_OWN_TABLE_ADDR 0xfff0000000000000ULL

/*
 * An .eh_frame without .eh_frame_hdr larger than the budget is not indexed, nor
 * one larger than this when the budget is smaller (16 MiB: the smallest
 * unwind_cache_mb the daemon accepts; the tests' tiny budgets only make images
 * evict each other).
 */
#define UNWIND_IMAGE_FLOOR (16u << 20)

/* Section headers read at most: real objects have tens; this bounds a hostile table. */
#define UNWIND_SHDR_MAX 65535

#define UNWIND_HASH_SIZE 256
#define UNWIND_NEG_MAX	 64

struct unwind_aspace; /* unwind-step.c: one libunwind address space per recent pid */

struct unwind_ctx {
	unwind_find_map_fn find_map;
	void *find_ctx;
	size_t budget;
	uint64_t serial; /* incremented per sample; images used by it carry it as stamp */
	struct unwind_stats stats;
	struct unwind_image *hash[UNWIND_HASH_SIZE];
	struct unwind_image *lru_head, *lru_tail; /* head: most recently used */
	struct unwind_image *vdso;		  /* NULL if this process has no vDSO */
	unsigned int vdso_tries; /* reads of a sampled process's [vdso] when we have none */
	unsigned int nfds; /* images holding a descriptor (<= UNWIND_FDS_MAX) */
	struct unwind_neg neg[UNWIND_NEG_MAX];
	unsigned int neg_next;
	struct unwind_aspace *aspaces;
	unsigned int naspaces;
	uint64_t aspace_clock;
};

/* unwind-elf.c */

/*
 * unwind_images_init: load the vDSO of this process into u->vdso (NULL if there is
 * none or it cannot be parsed).  Returns 0 or -ENOMEM.
 */
int unwind_images_init(struct unwind_ctx *u);
/* unwind_images_exit: unmap and free every image, the vDSO copy included. */
void unwind_images_exit(struct unwind_ctx *u);

/*
 * unwind_images_get: the image backing mapping @m of process @pid, opened, checked
 * and parsed on first use and stamped with the current serial.  Returns 0 with
 * *ret_img set; -ENODATA for a mapping that has no file (anonymous, [stack], a
 * "[vdso]" when this process has no vDSO);
 * -ESTALE when the file found has another dev/inode than @m (replaced on disk);
 * another negative errno when the file cannot be opened, mapped or parsed.  Failures
 * are remembered per (dev, inode, pid) until unwind_images_forget_pid().
 */
int unwind_images_get(struct unwind_ctx *u, int32_t pid, const struct maplog_map *m,
		      struct unwind_image **ret_img);
/* unwind_images_forget_pid: drop the remembered failures of @pid. */
void unwind_images_forget_pid(struct unwind_ctx *u, int32_t pid);

/*
 * unwind_image_parse: fill the header fields of @img from its bytes (img->mem, or
 * the file read through img->fd).  Returns 0, -ENOEXEC (not a usable x86-64 ELF),
 * -ESTALE (the file shrank while read) or -ENOMEM.  Hostile input safe.
 */
int unwind_image_parse(struct unwind_ctx *u, struct unwind_image *img);

/*
 * unwind_image_bias: the run-time minus link-time address difference of @img when
 * it is mapped as @m (0 for ET_EXEC).  Returns false when no PT_LOAD holds m->pgoff.
 */
bool unwind_image_bias(const struct unwind_image *img, const struct maplog_map *m,
		       uint64_t *ret_bias);

/*
 * unwind_image_read: the 8 bytes at file offset @off; bytes past the end of the
 * file read as zero, as they do in the last page of a mapping.  A chunk not held
 * yet is read from the file (and the budget kept by evicting images the current
 * sample does not use, then dropping chunks).  False if @off is not inside the
 * file, or the file cannot be read (img->gone: it shrank or failed).
 */
bool unwind_image_read(struct unwind_ctx *u, struct unwind_image *img, uint64_t off,
		       uint64_t *ret_val);

/*
 * unwind_image_vaddr_off: the file offset of link-time address @vaddr, through the
 * PT_LOAD that holds it in its file-backed part.  False if none does.
 */
bool unwind_image_vaddr_off(const struct unwind_image *img, uint64_t vaddr, uint64_t *ret_off);

/* For tests: what the cache holds for a mapping's file. */
struct unwind_image_info {
	uint16_t e_type;
	size_t size;
	bool has_hdr, has_eh_frame, has_debug_frame, is_vdso;
	bool own_table; /* has_hdr through a table built from .eh_frame */
	uint64_t fde_count;
	uint64_t bias; /* for the mapping asked about */
};

/*
 * unwind_ctx__image_info: open (or find) the image of mapping @m of process @pid
 * and describe it.  Returns 0 or the negative errno of unwind_images_get().
 */
int unwind_ctx__image_info(struct unwind_ctx *u, int32_t pid, const struct maplog_map *m,
			   struct unwind_image_info *ret_info);

#endif /* HWPMCD_UNWIND_INT_H */
