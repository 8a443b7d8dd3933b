// SPDX-License-Identifier: (BSD-2-Clause OR GPL-2.0-only)
/*
 * filter.bpf.c: the in-kernel sample filter, a BPF program of type perf_event.
 *
 * PUBLIC INTERFACES
 *   hwpmcd_filter   attached to every counter of a session (PERF_EVENT_IOC_SET_BPF):
 *                   returns 0 to drop a sample before the kernel writes it (and
 *                   its stack snapshot) to the ring
 *   maps            cfg, tgids, uids, cgroups, comms, counts (filter-bpf.c fills
 *                   them; include/hwpmcd/filter.h describes the semantics)
 *
 * IMPLEMENTATION NOTES
 *   Runs in the overflow handler, in the context of the interrupted task: the
 *   bpf_get_current_*() helpers describe the sampled task.  Every key is tagged
 *   with a generation (0 or 1); cfg.gen says which one is live.  User space fills
 *   the other generation and then flips cfg.gen with one aligned 32-bit store, so a
 *   sample sees either the old filter or the new one, never a mix.  Keys present
 *   AND across kinds, OR within one kind.  A cgroup matches when it is the task's
 *   cgroup or one of its ancestors (bpf_get_current_ancestor_cgroup_id(), level 0
 *   being the root), so a unit's or a container's sub-cgroups count as inside.
 *   counts[0] counts kept samples, counts[1] dropped ones, per CPU.
 *   The owner check (FILT_F_OWNER) reads the task's credentials and its mm's
 *   dumpability with CO-RE (struct layouts relocated against the running
 *   kernel's BTF): the real, effective and saved uid must all be the owner's, the
 *   three gids the owner's gid (a setgid program is not the user's) and
 *   the mm dumpable by its user (SUID_DUMP_USER), as for ptrace_may_access() in
 *   read mode; a kernel thread (no mm) never passes.  mm->flags is an unsigned
 *   long before Linux 6.18 and a one-word bitmap (mm_flags_t) since: either way
 *   the dumpability is the low two bits of its first word.
 *   Licensed BSD-2-Clause OR GPL-2.0: the kernel gives GPL-only helpers only to
 *   GPL-compatible programs.
 */
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>

#include "filter-bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct filt_bpf_cfg);
} cfg SEC(".maps");

/* The values of one kind, tagged with their generation: a set (the value is unused). */
#define FILT_SET(name, key_type)                                                                   \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_HASH);                                                   \
		__uint(max_entries, 2 * FILT_MAX_VALUES);                                          \
		__type(key, key_type);                                                             \
		__type(value, __u8);                                                               \
	} name SEC(".maps")

FILT_SET(tgids, struct filt_bpf_key32);
FILT_SET(uids, struct filt_bpf_key32);
FILT_SET(cgroups, struct filt_bpf_key64);
FILT_SET(comms, struct filt_bpf_keycomm);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

/* The kernel's layouts, as far as the owner check reads them (CO-RE relocates each field). */
typedef struct {
	__u32 val;
} kuid_t;

typedef struct {
	__u32 val;
} kgid_t;

struct cred {
	kuid_t uid;
	kgid_t gid;
	kuid_t suid;
	kgid_t sgid;
	kuid_t euid;
	kgid_t egid;
} __attribute__((preserve_access_index));

struct mm_struct___word {
	unsigned long flags;
} __attribute__((preserve_access_index));

struct mm_flags___bitmap {
	unsigned long __mm_flags[1];
};

struct mm_struct___bitmap {
	struct mm_flags___bitmap flags;
} __attribute__((preserve_access_index));

struct task_struct {
	void *mm;
	const struct cred *cred;
} __attribute__((preserve_access_index));

/* The mm's dumpability bits (MMF_DUMPABLE_MASK) and SUID_DUMP_USER. */
#define FILT_DUMPABLE_MASK 3ul
#define FILT_SUID_DUMP_USER 1ul

static __always_inline int owner_ok(__u32 owner, __u32 gid)
{
	struct task_struct *t = (struct task_struct *)bpf_get_current_task();
	const struct cred *cr = BPF_CORE_READ(t, cred);
	void *mm = BPF_CORE_READ(t, mm);
	unsigned long off, flags = 0;

	if (!mm || !cr || BPF_CORE_READ(cr, uid.val) != owner ||
	    BPF_CORE_READ(cr, euid.val) != owner || BPF_CORE_READ(cr, suid.val) != owner ||
	    BPF_CORE_READ(cr, gid.val) != gid || BPF_CORE_READ(cr, egid.val) != gid ||
	    BPF_CORE_READ(cr, sgid.val) != gid)
		return 0;
	if (bpf_core_field_exists(struct mm_struct___bitmap, flags))
		off = bpf_core_field_offset(struct mm_struct___bitmap, flags);
	else
		off = bpf_core_field_offset(struct mm_struct___word, flags);
	if (bpf_probe_read_kernel(&flags, sizeof(flags), (char *)mm + off) < 0)
		return 0;
	return (flags & FILT_DUMPABLE_MASK) == FILT_SUID_DUMP_USER;
}

static __always_inline int in_cgroups(__u32 gen)
{
	for (int level = 0; level < FILT_CGROUP_LEVELS; level++) {
		struct filt_bpf_key64 k = { .gen = gen };

		k.v = bpf_get_current_ancestor_cgroup_id(level);
		if (k.v == 0)
			return 0; /* deeper than the task's own cgroup */
		if (bpf_map_lookup_elem(&cgroups, &k))
			return 1;
	}
	return 0;
}

SEC("perf_event")
int hwpmcd_filter(struct bpf_perf_event_data *ctx)
{
	struct filt_bpf_cfg *c;
	__u32 zero = 0, gen, flags, idx;
	__u64 *n;
	int keep = 1;

	(void)ctx;
	c = bpf_map_lookup_elem(&cfg, &zero);
	if (!c)
		return 1;
	gen = c->gen & 1;
	flags = gen ? c->flags[1] : c->flags[0];
	if (flags & FILT_F_TGID) {
		struct filt_bpf_key32 k = { .gen = gen, .v = bpf_get_current_pid_tgid() >> 32 };

		keep = bpf_map_lookup_elem(&tgids, &k) != 0;
	}
	if (keep && (flags & FILT_F_UID)) {
		struct filt_bpf_key32 k = { .gen = gen, .v = (__u32)bpf_get_current_uid_gid() };

		keep = bpf_map_lookup_elem(&uids, &k) != 0;
	}
	if (keep && (flags & FILT_F_COMM)) {
		struct filt_bpf_keycomm k = { .gen = gen };

		bpf_get_current_comm(k.comm, sizeof(k.comm));
		keep = bpf_map_lookup_elem(&comms, &k) != 0;
	}
	if (keep && (flags & FILT_F_CGROUP))
		keep = in_cgroups(gen);
	if (keep && (flags & FILT_F_OWNER))
		keep = gen ? owner_ok(c->owner[1], c->owner_gid[1])
			   : owner_ok(c->owner[0], c->owner_gid[0]);
	idx = keep ? 0 : 1;
	n = bpf_map_lookup_elem(&counts, &idx);
	if (n)
		(*n)++;
	return keep;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
