/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-report-pcs.c: the report's samples by PC, for outputs that keep addresses
 * (`--pprof`): the distinct code addresses of the kept samples (locations) and the
 * samples alike by their locations, process, thread, name and cgroup.
 *
 * PUBLIC INTERFACES
 *   tools_pcs_loc(), tools_pcs_add(), tools_pcs_free() (tools-report.h)
 *
 * IMPLEMENTATION NOTES
 *   A location is (image, link address looked up, return address or not, function):
 *   the image and link address of report_model__locate(), so a library's PC is one
 *   location whatever process mapped it where; a PC in no image keeps the PC itself
 *   and its function (the kernel through its symbol file, a JIT function, [unknown]).
 *   A return address is looked up at PC - 1 (the call) and kept apart from the same
 *   address sampled as a leaf.  Ids start at 1 (pprof's location ids).
 *
 *   A sample key is (event, pid, tid, thread name, cgroup, CPU (with --sort cpu, else
 *   -1), locations leaf first); its
 *   weight is summed as the report's counts are (TOOLS_REP_W_ONE a sample at the
 *   event's first period).  Keys live in one arena, found by an open-addressing
 *   index of their offsets (util_index); both tables grow by doubling.  What they hold is bounded
 *   by the distinct samples of the log, as the report's call trees are.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hwpmcd/common.h"
#include "tools-report.h"

static uint64_t loc_hash(const struct report_image *img, uint64_t addr, uint32_t func, bool ret)
{
	return util_mix64(addr * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)img ^
			  ((uint64_t)func << 1 | ret) * 31);
}

static uint64_t loc_hash_of(const void *ctx, uint32_t id)
{
	const struct tools_rep_loc *l = &((const struct tools_rep_pcs *)ctx)->loc[id - 1];

	return loc_hash(l->img, l->addr, l->key_func, l->ret);
}

uint32_t tools_pcs_loc(struct tools_rep_pcs *t, struct report_image *img, uint64_t addr,
		       uint32_t func, bool ret)
{
	struct tools_rep_loc *l, *nl;
	uint32_t key = img ? 0 : func; /* in an image, (image, address) decide the function */
	size_t s;

	if (util_index_reserve(&t->lidx, t->nloc + 1, 4096, loc_hash_of, t) < 0)
		return 0;
	for (s = util_index_first(&t->lidx, loc_hash(img, addr, key, ret)); t->lidx.slot[s];
	     s = util_index_next(&t->lidx, s)) {
		l = &t->loc[t->lidx.slot[s] - 1];
		if (l->img == img && l->addr == addr && l->key_func == key && l->ret == ret)
			return t->lidx.slot[s];
	}
	if (t->nloc >= UINT32_MAX - 1)
		return 0;
	nl = util_grow(t->loc, &t->loccap, t->nloc + 1, sizeof(*nl));
	if (!nl)
		return 0;
	t->loc = nl;
	l = &t->loc[t->nloc];
	memset(l, 0, sizeof(*l));
	l->img = img;
	l->addr = addr;
	l->key_func = key;
	l->func = func;
	l->ret = ret;
	t->lidx.slot[s] = (uint32_t)++t->nloc;
	return (uint32_t)t->nloc;
}

static size_t ps_size(uint32_t n)
{
	return (sizeof(struct tools_rep_pcsample) + n * sizeof(uint32_t) + 7) & ~(size_t)7;
}

static uint64_t ps_hash(uint32_t ev, int32_t pid, int32_t tid, uint32_t comm, uint32_t cg,
			const uint32_t *locs, uint32_t n)
{
	uint64_t h = util_mix64((uint64_t)ev << 32 ^ (uint32_t)pid ^ (uint64_t)(uint32_t)tid << 17 ^
				(uint64_t)comm * 0x9e3779b97f4a7c15ull ^ (uint64_t)cg << 40 ^ n);

	for (uint32_t i = 0; i < n; i++)
		h = util_mix64(h ^ locs[i]);
	return h;
}

/* A PC sample's hash, by its id (arena offset / 8 + 1). */
static uint64_t ps_hash_of(const void *ctx, uint32_t id)
{
	const struct tools_rep_pcs *t = ctx;

	return ((const struct tools_rep_pcsample *)(t->arena + ((size_t)id - 1) * 8))->hash;
}

int tools_pcs_add(struct tools_rep_pcs *t, uint32_t ev, int32_t pid, int32_t tid, uint32_t comm,
		  uint32_t cg, int32_t cpu, const uint32_t *locs, uint32_t n, uint64_t w)
{
	uint64_t h = ps_hash(ev, pid, tid, comm, cg, locs, n) ^ (uint32_t)cpu;
	struct tools_rep_pcsample *x;
	size_t s, need = ps_size(n);

	if (util_index_reserve(&t->sidx, t->n + 1, 4096, ps_hash_of, t) < 0)
		return -ENOMEM;
	for (s = util_index_first(&t->sidx, h); t->sidx.slot[s]; s = util_index_next(&t->sidx, s)) {
		x = (struct tools_rep_pcsample *)(t->arena + ((size_t)t->sidx.slot[s] - 1) * 8);
		if (x->hash == h && x->ev == ev && x->pid == pid && x->tid == tid &&
		    x->comm == comm && x->cgroup == cg && x->cpu == cpu && x->n == n &&
		    memcmp(x->locs, locs, n * sizeof(*locs)) == 0) {
			x->w = x->w + w < x->w ? UINT64_MAX : x->w + w;
			return 0;
		}
	}
	/* offsets / 8 + 1 fit the index's 32 bits up to 32 GiB of arena */
	if ((t->len + need) / 8 >= UINT32_MAX - 1)
		return -E2BIG;
	if (t->len + need > t->cap) {
		size_t cap = t->cap ? t->cap : (size_t)64 << 10;
		uint8_t *a;

		while (cap < t->len + need)
			cap *= 2;
		a = realloc(t->arena, cap);
		if (!a)
			return -ENOMEM;
		t->arena = a;
		t->cap = cap;
	}
	x = (struct tools_rep_pcsample *)(t->arena + t->len);
	memset(x, 0, sizeof(*x));
	x->hash = h;
	x->w = w;
	x->ev = ev;
	x->pid = pid;
	x->tid = tid;
	x->comm = comm;
	x->cgroup = cg;
	x->cpu = cpu;
	x->n = n;
	memcpy(x->locs, locs, n * sizeof(*locs));
	t->sidx.slot[s] = (uint32_t)(t->len / 8 + 1);
	t->len += need;
	t->n++;
	return 0;
}

const struct tools_rep_pcsample *tools_pcs_next(const struct tools_rep_pcs *t, size_t *off)
{
	const struct tools_rep_pcsample *x;

	if (*off >= t->len)
		return NULL;
	x = (const struct tools_rep_pcsample *)(t->arena + *off);
	*off += ps_size(x->n);
	return x;
}

void tools_pcs_free(struct tools_rep_pcs *t)
{
	free(t->loc);
	util_index_free(&t->lidx);
	free(t->arena);
	util_index_free(&t->sidx);
	memset(t, 0, sizeof(*t));
}
