/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * filter-prog.c: load the BPF sample filter and keep its maps (include/hwpmcd/filter.h).
 *
 * PUBLIC INTERFACES
 *   filt__new(), filt__free(), filt__prog_fd(), filt__set(), filt__stats(),
 *   filt_spec_kinds()
 *
 * IMPLEMENTATION NOTES
 *   The program and its maps come from the skeleton bpftool generated from
 *   filter.bpf.c at build time (filter.skel.h).  A replacement fills the
 *   generation that is not live (after deleting what an earlier filter left in
 *   it: nothing has read that generation since the flip before last), writes its
 *   kinds into cfg.flags[next] while cfg.gen still names the old one, and then
 *   stores cfg.gen: the program reads gen once per sample, so each sample sees one
 *   whole filter.  libbpf's messages go to the debug log, and the last one is
 *   kept for the error a failed load returns (the verifier's reason).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwpmcd/filter.h"
#include "hwpmcd/log.h"

#ifdef HWPMCD_HAVE_BPF
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "filter-bpf.h"
/* bpftool's generated code casts const away; it is not ours to change. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "filter.skel.h"
#pragma GCC diagnostic pop

_Static_assert(FILT_VALUES_MAX == FILT_MAX_VALUES, "filter.h and filter-bpf.h disagree");
_Static_assert(FILT_COMM_BYTES == sizeof(((struct filt_bpf_keycomm *)0)->comm),
	       "filter.h and filter-bpf.h disagree on comm");

struct filt {
	struct hwpmcd_filter *skel;
	uint32_t gen; /* the live generation */
	int ncpus;    /* possible CPUs: the per-CPU counts' width */
};

static __thread char libbpf_last[256];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[sizeof(libbpf_last)];
	size_t n;

	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	while (n > 0 && line[n - 1] == '\n')
		line[--n] = '\0';
	if (n > 0 && level <= LIBBPF_WARN)
		snprintf(libbpf_last, sizeof(libbpf_last), "%s", line);
	log_debug("libbpf: %s", line);
	return 0;
}

int filt__new(struct filt **ret_f, char *err, size_t errlen)
{
	struct filt *f = calloc(1, sizeof(*f));
	int r;

	if (!f) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	libbpf_set_print(libbpf_print);
	libbpf_last[0] = '\0';
	f->ncpus = libbpf_num_possible_cpus();
	if (f->ncpus <= 0) {
		r = f->ncpus < 0 ? f->ncpus : -EINVAL;
		snprintf(err, errlen, "cannot count the possible CPUs: %s", strerror(-r));
		goto err;
	}
	f->skel = hwpmcd_filter__open();
	if (!f->skel) {
		r = -errno;
		snprintf(err, errlen, "cannot open the BPF filter program: %s", strerror(-r));
		goto err;
	}
	r = hwpmcd_filter__load(f->skel);
	if (r == -ENOSYS) {
		/* No bpf(2) at all: a kernel without CONFIG_BPF_SYSCALL, or a seccomp policy. */
		snprintf(err, errlen, "this system has no bpf(2) (ENOSYS), so no in-kernel sample "
			 "filters: record without a filter, or name the processes with -p PID");
		r = -EOPNOTSUPP;
		goto err;
	}
	if (r == -EPERM) {
		snprintf(err, errlen, "the kernel does not let hwpmcd load BPF programs (EPERM: "
			 "CAP_BPF and CAP_PERFMON are needed, and a lockdown or seccomp policy can "
			 "forbid bpf(2)): record without a filter, or name the processes with -p PID");
		goto err;
	}
	if (r < 0) {
		snprintf(err, errlen, "the kernel refused the BPF filter program: %s%s%s",
			 strerror(-r), libbpf_last[0] ? ": " : "", libbpf_last);
		goto err;
	}
	*ret_f = f;
	return 0;
err:
	filt__free(f);
	return r;
}

void filt__free(struct filt *f)
{
	if (!f)
		return;
	hwpmcd_filter__destroy(f->skel);
	free(f);
}

int filt__prog_fd(const struct filt *f)
{
	return bpf_program__fd(f->skel->progs.hwpmcd_filter);
}

/* Delete every key of generation @gen from @map (keys start with their __u32 gen). */
static int clear_gen(struct bpf_map *map, size_t key_size, uint32_t gen)
{
	static __thread unsigned char keys[2 * FILT_MAX_VALUES][sizeof(struct filt_bpf_keycomm)];
	size_t n = 0;

	/* The map holds at most 2 * FILT_MAX_VALUES keys: collect them, then delete. */
	while (n < 2 * FILT_MAX_VALUES &&
	       bpf_map__get_next_key(map, n ? keys[n - 1] : NULL, keys[n], key_size) == 0)
		n++;
	for (size_t i = 0; i < n; i++) {
		uint32_t g;
		int r;

		memcpy(&g, keys[i], sizeof(g));
		if (g != gen)
			continue;
		r = bpf_map__delete_elem(map, keys[i], key_size, 0);
		if (r < 0 && r != -ENOENT)
			return r;
	}
	return 0;
}

static int put(struct bpf_map *map, const void *key, size_t key_size)
{
	const uint8_t one = 1;

	return bpf_map__update_elem(map, key, key_size, &one, sizeof(one), BPF_ANY);
}

int filt__set(struct filt *f, const struct filt_spec *s)
{
	struct hwpmcd_filter *k = f->skel;
	struct filt_bpf_cfg c;
	uint32_t next = f->gen ^ 1, zero = 0, flags = 0;
	int r;

	if (s->ntgids > FILT_MAX_VALUES || s->nuids > FILT_MAX_VALUES ||
	    s->ncomms > FILT_MAX_VALUES || s->ncgroups > FILT_MAX_VALUES)
		return -EINVAL;
	if ((r = clear_gen(k->maps.tgids, sizeof(struct filt_bpf_key32), next)) < 0 ||
	    (r = clear_gen(k->maps.uids, sizeof(struct filt_bpf_key32), next)) < 0 ||
	    (r = clear_gen(k->maps.comms, sizeof(struct filt_bpf_keycomm), next)) < 0 ||
	    (r = clear_gen(k->maps.cgroups, sizeof(struct filt_bpf_key64), next)) < 0)
		return r;
	for (uint32_t i = 0; i < s->ntgids; i++) {
		struct filt_bpf_key32 key = { .gen = next, .v = (uint32_t)s->tgids[i] };

		if ((r = put(k->maps.tgids, &key, sizeof(key))) < 0)
			return r;
	}
	for (uint32_t i = 0; i < s->nuids; i++) {
		struct filt_bpf_key32 key = { .gen = next, .v = s->uids[i] };

		if ((r = put(k->maps.uids, &key, sizeof(key))) < 0)
			return r;
	}
	for (uint32_t i = 0; i < s->ncomms; i++) {
		struct filt_bpf_keycomm key = { .gen = next };

		/* NUL-padded as bpf_get_current_comm() writes it; the last byte stays NUL. */
		strncpy(key.comm, s->comms[i], sizeof(key.comm) - 1);
		if ((r = put(k->maps.comms, &key, sizeof(key))) < 0)
			return r;
	}
	for (uint32_t i = 0; i < s->ncgroups; i++) {
		struct filt_bpf_key64 key = { .gen = next, .v = s->cgroups[i] };

		if ((r = put(k->maps.cgroups, &key, sizeof(key))) < 0)
			return r;
	}
	flags |= s->ntgids ? FILT_F_TGID : 0;
	flags |= s->nuids ? FILT_F_UID : 0;
	flags |= s->ncomms ? FILT_F_COMM : 0;
	flags |= s->ncgroups ? FILT_F_CGROUP : 0;
	flags |= s->owner_only ? FILT_F_OWNER : 0;
	/* The next generation's kinds while the live one is still f->gen, then the flip. */
	r = bpf_map__lookup_elem(k->maps.cfg, &zero, sizeof(zero), &c, sizeof(c), 0);
	if (r < 0)
		return r;
	c.flags[next] = flags;
	c.owner[next] = s->owner;
	c.owner_gid[next] = s->owner_gid;
	if ((r = bpf_map__update_elem(k->maps.cfg, &zero, sizeof(zero), &c, sizeof(c), BPF_ANY)) < 0)
		return r;
	c.gen = next;
	if ((r = bpf_map__update_elem(k->maps.cfg, &zero, sizeof(zero), &c, sizeof(c), BPF_ANY)) < 0)
		return r;
	f->gen = next;
	return 0;
}

int filt__stats(const struct filt *f, struct filt_stats *ret)
{
	uint64_t v[1024];
	int r;

	memset(ret, 0, sizeof(*ret));
	if (f->ncpus > 1024)
		return -E2BIG;
	for (uint32_t idx = 0; idx < 2; idx++) {
		uint64_t sum = 0;

		/* Valgrind knows that BPF_MAP_LOOKUP_ELEM writes one value, not one per CPU. */
		memset(v, 0, sizeof(v[0]) * (size_t)f->ncpus);
		r = bpf_map__lookup_elem(f->skel->maps.counts, &idx, sizeof(idx), v,
					 sizeof(v[0]) * (size_t)f->ncpus, 0);
		if (r < 0)
			return r;
		for (int i = 0; i < f->ncpus; i++)
			sum += v[i];
		if (idx == 0)
			ret->kept = sum;
		else
			ret->dropped = sum;
	}
	return 0;
}

#else /* !HWPMCD_HAVE_BPF */

struct filt {
	int unused;
};

int filt__new(struct filt **ret_f, char *err, size_t errlen)
{
	(void)ret_f;
	snprintf(err, errlen, "this hwpmcd was built without BPF sample filters (clang, bpftool "
		 "or libbpf-dev were missing when it was built)");
	return -EOPNOTSUPP;
}

void filt__free(struct filt *f)
{
	(void)f;
}

int filt__prog_fd(const struct filt *f)
{
	(void)f;
	return -1;
}

int filt__set(struct filt *f, const struct filt_spec *s)
{
	(void)f;
	(void)s;
	return -EOPNOTSUPP;
}

int filt__stats(const struct filt *f, struct filt_stats *ret)
{
	(void)f;
	memset(ret, 0, sizeof(*ret));
	return -EOPNOTSUPP;
}
#endif

unsigned int filt_spec_kinds(const struct filt_spec *s)
{
	return (s->ntgids > 0) + (s->nuids > 0) + (s->ncomms > 0) + (s->ncgroups > 0) +
	       s->owner_only;
}
