/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-filter.c: the in-kernel sample filter (src/filter) on real counters.
 *
 * IMPLEMENTATION NOTES
 *   Each case starts busy child processes that differ in one property (process,
 *   uid, command name, cgroup), opens system-wide cpu-clock counters on every
 *   online CPU through the collector, attaches the filter and sets a spec, and
 *   reads the rings until the filter has kept and dropped enough samples (or a
 *   generous deadline passes: the counts, not the time, decide).  Every sample
 *   that reached a ring must belong to a process the filter keeps: samples are
 *   judged by what they are, never by how many there are.  Needs root (BPF and
 *   system-wide counters) and a kernel that loads the program: 77 otherwise, with
 *   the reason.  Built without BPF, the one case checks filt__new()'s refusal.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/collector.h"
#include "hwpmcd/filter.h"

#define MAX_CPUS 64
#define CHILDREN 3
/* Samples the filter must have kept and dropped before a case looks at the result. */
#define WANT 20
#define DEADLINE_S 60

struct rig {
	struct coll_event_spec ev;
	struct coll_config cfg;
	struct coll_cpu *cpus[MAX_CPUS];
	size_t ncpus;
	struct filt *f;
	pid_t kids[CHILDREN];
	uint64_t seen[CHILDREN]; /* samples in the rings, per child */
	uint64_t others;	 /* samples of any other process */
};

static char g_cgroup[512]; /* a cgroup the cgroup case made, removed at the end */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Credentials for child @kid (the owner case): nonzero exits the child.  NULL:
 * setuid(uid) alone.
 */
static int (*g_creds)(int kid);

/* A child that spins until killed, as @name, with uid @uid (0: stays root). */
static pid_t spinner(const char *name, uid_t uid, int kid, int ready_fd)
{
	pid_t p = fork();

	ck_assert_int_ge(p, 0);
	if (p == 0) {
		volatile unsigned long x = 0;

		prctl(PR_SET_NAME, name);
		if (g_creds ? g_creds(kid) != 0 : uid && setuid(uid) < 0)
			_exit(2);
		if (write(ready_fd, "r", 1) != 1)
			_exit(3);
		for (;;)
			x++;
	}
	return p;
}

static void rig_start(struct rig *r, const char *const names[CHILDREN],
		      const uid_t uids[CHILDREN])
{
	char err[512];
	int cpus[MAX_CPUS], fds[2], rc;

	memset(r, 0, sizeof(*r));
	/* The program first: loading it (BTF parsing) is slow under valgrind with spinners. */
	rc = filt__new(&r->f, err, sizeof(err));
	ck_assert_msg(rc == 0, "filt__new: %s", err);
	ck_assert_int_eq(pipe(fds), 0);
	for (int i = 0; i < CHILDREN; i++)
		r->kids[i] = spinner(names[i], uids ? uids[i] : 0, i, fds[1]);
	for (int i = 0; i < CHILDREN; i++) {
		char c;

		ck_assert_int_eq(read(fds[0], &c, 1), 1);
	}
	close(fds[0]);
	close(fds[1]);
	ck_assert_int_eq(coll_event_parse("cpu-clock", NULL, &r->ev, err, sizeof(err)), 0);
	r->cfg.events = &r->ev;
	r->cfg.nevents = 1;
	r->cfg.callgraph = COLL_CG_NONE;
	r->cfg.depth = 1;
	r->cfg.ring_pages = 64;
	r->cfg.freq = 997;
	ck_assert_int_eq(coll_online_cpus(cpus, MAX_CPUS, &r->ncpus), 0);
	for (size_t i = 0; i < r->ncpus; i++) {
		rc = coll_cpu__open(&r->cfg, cpus[i], NULL, 0, err, sizeof(err), &r->cpus[i]);
		ck_assert_msg(rc == 0, "coll_cpu__open: %s", err);
		ck_assert_int_eq(coll_cpu__set_bpf(r->cpus[i], filt__prog_fd(r->f)), 0);
	}
}

static void rig_enable(struct rig *r)
{
	for (size_t i = 0; i < r->ncpus; i++)
		ck_assert_int_eq(coll_cpu__enable(r->cpus[i]), 0);
}

static void rig_stop(struct rig *r)
{
	for (int i = 0; i < CHILDREN; i++) {
		kill(r->kids[i], SIGKILL);
		waitpid(r->kids[i], NULL, 0);
	}
	for (size_t i = 0; i < r->ncpus; i++)
		coll_cpu__free(r->cpus[i]);
	filt__free(r->f);
}

/*
 * Read every ring once; @check(child index or -1, sample time, arg) judges each
 * sample (false: the case fails with the sample's pid).
 */
static void rig_drain(struct rig *r, bool (*check)(int kid, uint64_t t, void *arg), void *arg)
{
	for (size_t i = 0; i < r->ncpus; i++) {
		struct rec rec;

		(void)coll_cpu__snapshot(r->cpus[i]);
		while (coll_cpu__peek(r->cpus[i], &rec) == 1) {
			if (rec.type == REC_SAMPLE) {
				int kid = -1;

				for (int k = 0; k < CHILDREN; k++)
					if ((pid_t)rec.pid == r->kids[k])
						kid = k;
				if (kid >= 0)
					r->seen[kid]++;
				else
					r->others++;
				ck_assert_msg(check(kid, rec.time, arg),
					      "a sample of pid %u (children %d %d %d) passed the filter",
					      rec.pid, r->kids[0], r->kids[1], r->kids[2]);
			}
			coll_cpu__advance(r->cpus[i]);
		}
		coll_cpu__release(r->cpus[i]);
	}
}

/* Drain until the filter kept and dropped WANT samples each (or the deadline). */
static void rig_run(struct rig *r, bool (*check)(int kid, uint64_t t, void *arg), void *arg,
		    uint64_t want_kept)
{
	uint64_t end = now_ns() + (uint64_t)DEADLINE_S * 1000000000ull;
	struct filt_stats st;

	for (;;) {
		usleep(20000);
		rig_drain(r, check, arg);
		ck_assert_int_eq(filt__stats(r->f, &st), 0);
		if ((st.kept >= want_kept && st.dropped >= WANT) || now_ns() > end)
			break;
	}
	ck_assert_uint_ge(st.kept, want_kept);
	ck_assert_uint_ge(st.dropped, WANT);
}

/* @arg: the index of the only child whose samples may pass. */
static bool only_kid(int kid, uint64_t t, void *arg)
{
	(void)t;
	return kid == *(const int *)arg;
}

/*
 * Filter by @s, run until the filter kept and dropped enough, every sample being of
 * child @kid (and at least one of them reaching the rings), then stop.
 */
static void rig_expect_only(struct rig *r, const struct filt_spec *s, int kid)
{
	ck_assert_int_eq(filt__set(r->f, s), 0);
	rig_enable(r);
	rig_run(r, only_kid, &kid, WANT);
	ck_assert_uint_ge(r->seen[kid], 1);
	rig_stop(r);
}

static bool anything(int kid, uint64_t t, void *arg)
{
	(void)kid;
	(void)t;
	(void)arg;
	return true;
}

static bool nothing(int kid, uint64_t t, void *arg)
{
	(void)kid;
	(void)t;
	(void)arg;
	return false;
}

/*
 * The children's uid and gid: one no account has, so that no other process on
 * the machine (a test running as nobody beside this one) is ever that user's and
 * passes a filter by uid.
 */
#define TUID 1999999

static const char *const g_names[CHILDREN] = { "hwpmc-filt-a", "hwpmc-filt-b", "hwpmc-filt-c" };

START_TEST(test_by_process)
{
	struct rig r;
	struct filt_spec s = { 0 };

	rig_start(&r, g_names, NULL);
	s.tgids[s.ntgids++] = r.kids[0];
	rig_expect_only(&r, &s, 0);
}
END_TEST

START_TEST(test_by_uid_and_comm)
{
	static const uid_t uids[CHILDREN] = { 0, TUID, TUID };
	struct rig r;
	struct filt_spec s = { 0 };

	/* uid TUID alone keeps children 1 and 2; with the name of 1, only 1 (AND). */
	rig_start(&r, g_names, uids);
	s.uids[s.nuids++] = TUID;
	s.uids[s.nuids++] = 4242; /* OR within a kind */
	snprintf(s.comms[s.ncomms++], FILT_COMM_BYTES, "%s", g_names[1]);
	snprintf(s.comms[s.ncomms++], FILT_COMM_BYTES, "%s", g_names[0]);
	rig_expect_only(&r, &s, 1);
}
END_TEST

/*
 * The owner check: child 0 is wholly uid TUID and dumpable (what that user may
 * ptrace); child 1 is wholly TUID but not dumpable (as a setuid program is, or
 * one that said so); child 2 has real and effective uid TUID but saved uid 0
 * (it could become root again).  Only child 0 may pass, and no root process.
 */
static int owner_creds(int kid)
{
	uid_t saved = kid == 2 ? 0 : TUID;

	if (setresgid(TUID, TUID, TUID) < 0 || setresuid(TUID, TUID, saved) < 0)
		return -1;
	/* A change of credentials made the mm non-dumpable (fs.suid_dumpable): set it. */
	return prctl(PR_SET_DUMPABLE, kid == 1 ? 0 : 1, 0, 0, 0);
}

START_TEST(test_owner_only)
{
	struct rig r;
	struct filt_spec s = { 0 };

	g_creds = owner_creds;
	rig_start(&r, g_names, NULL);
	g_creds = NULL;
	s.owner_only = true;
	s.owner = TUID;
	s.owner_gid = TUID;
	rig_expect_only(&r, &s, 0);
}
END_TEST

/*
 * The owner check's gids: child 0 is wholly TUID:TUID and dumpable; child 1 has
 * saved gid 0, child 2 real gid 0 (a setgid program's, or one that kept a group it
 * could return to), both dumpable.  As ptrace would, only child 0 passes.
 */
static int owner_gids(int kid)
{
	gid_t r = kid == 2 ? 0 : TUID, sv = kid == 1 ? 0 : TUID;

	if (setresgid(r, TUID, sv) < 0 || setresuid(TUID, TUID, TUID) < 0)
		return -1;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

START_TEST(test_owner_gid)
{
	struct rig r;
	struct filt_spec s = { 0 };

	g_creds = owner_gids;
	rig_start(&r, g_names, NULL);
	g_creds = NULL;
	s.owner_only = true;
	s.owner = TUID;
	s.owner_gid = TUID;
	rig_expect_only(&r, &s, 0);
}
END_TEST

/* Where cgroup v2 is mounted (/sys/fs/cgroup, or /sys/fs/cgroup/unified in the hybrid layout). */
static bool cgroup2_root(char *buf, size_t len)
{
	char dev[256], dir[256], type[64];
	FILE *f = fopen("/proc/self/mounts", "re");
	bool found = false;

	if (!f)
		return false;
	while (!found && fscanf(f, "%255s %255s %63s %*[^\n]", dev, dir, type) == 3) {
		if (strcmp(type, "cgroup2") == 0) {
			snprintf(buf, len, "%s", dir);
			found = true;
		}
	}
	fclose(f);
	return found;
}

START_TEST(test_by_cgroup)
{
	char root[256];
	char sub[600], procs[640], pid[32];
	struct rig r;
	struct filt_spec s = { 0 };
	struct stat st;
	int fd;

	if (!cgroup2_root(root, sizeof(root))) {
		fprintf(stderr, "# cgroup case skipped: no cgroup2 mount in /proc/self/mounts\n");
		return;
	}
	snprintf(g_cgroup, sizeof(g_cgroup), "%s/hwpmcd-test-filter-%d", root, (int)getpid());
	if (mkdir(g_cgroup, 0755) < 0) {
		fprintf(stderr, "# cgroup case skipped: cannot make %s: %s\n", g_cgroup, strerror(errno));
		g_cgroup[0] = '\0';
		return;
	}
	/* Child 0 lives in a sub-cgroup: the filter names its parent. */
	snprintf(sub, sizeof(sub), "%s/inner", g_cgroup);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_eq(stat(g_cgroup, &st), 0);
	rig_start(&r, g_names, NULL);
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", sub);
	fd = open(procs, O_WRONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	snprintf(pid, sizeof(pid), "%d", (int)r.kids[0]);
	ck_assert_int_eq(write(fd, pid, strlen(pid)), (ssize_t)strlen(pid));
	close(fd);
	s.cgroups[s.ncgroups++] = st.st_ino;
	rig_expect_only(&r, &s, 0);
	ck_assert_int_eq(rmdir(sub), 0);
	ck_assert_int_eq(rmdir(g_cgroup), 0);
	g_cgroup[0] = '\0';
}
END_TEST

struct switch_arg {
	uint64_t t0, t1; /* the replacement began and ended */
};

/* Before the replacement only child 0, after it only child 1, in between either. */
static bool switched(int kid, uint64_t t, void *arg)
{
	const struct switch_arg *a = arg;

	if (t < a->t0)
		return kid == 0;
	if (t > a->t1)
		return kid == 1;
	return kid == 0 || kid == 1;
}

START_TEST(test_replace_while_running)
{
	struct switch_arg a = { UINT64_MAX, UINT64_MAX };
	struct filt_stats st0;
	struct rig r;
	struct filt_spec s = { 0 };

	rig_start(&r, g_names, NULL);
	s.tgids[s.ntgids++] = r.kids[0];
	ck_assert_int_eq(filt__set(r.f, &s), 0);
	rig_enable(&r);
	rig_run(&r, switched, &a, WANT);
	ck_assert_uint_ge(r.seen[0], 1);
	ck_assert_int_eq(filt__stats(r.f, &st0), 0);
	s.tgids[0] = r.kids[1];
	a.t0 = now_ns();
	ck_assert_int_eq(filt__set(r.f, &s), 0);
	a.t1 = now_ns();
	rig_run(&r, switched, &a, st0.kept + WANT);
	ck_assert_uint_ge(r.seen[1], 1);
	/*
	 * An empty filter keeps everything: child 2, which no filter kept before (so
	 * none of its samples was in a ring), now has samples there.  Judged by the
	 * samples, not by the drop counter, which a program interrupted mid-run on a
	 * descheduled vCPU could still raise after the flip.
	 */
	memset(&s, 0, sizeof(s));
	ck_assert_int_eq(filt__set(r.f, &s), 0);
	for (uint64_t end = now_ns() + (uint64_t)DEADLINE_S * 1000000000ull;
	     r.seen[2] == 0 && now_ns() < end;) {
		usleep(20000);
		rig_drain(&r, anything, NULL);
	}
	ck_assert_uint_ge(r.seen[2], 1);
	rig_stop(&r);
}
END_TEST

START_TEST(test_drop_all_and_limits)
{
	struct rig r;
	struct filt_spec s = { 0 };

	/* A process and a uid that no task combines: every sample is dropped. */
	rig_start(&r, g_names, NULL);
	s.tgids[s.ntgids++] = r.kids[0];
	s.uids[s.nuids++] = 4242;
	ck_assert_int_eq(filt__set(r.f, &s), 0);
	rig_enable(&r);
	rig_run(&r, nothing, NULL, 0);
	/* Too many values: refused, and the filter in place stays. */
	s.ntgids = FILT_VALUES_MAX + 1;
	ck_assert_int_eq(filt__set(r.f, &s), -EINVAL);
	rig_drain(&r, nothing, NULL);
	rig_stop(&r);
}
END_TEST

static Suite *filter_suite(void)
{
	Suite *s = suite_create("filter");
	TCase *tc = tcase_create("bpf");

	tcase_set_timeout(tc, 4 * DEADLINE_S);
	tcase_add_test(tc, test_by_process);
	tcase_add_test(tc, test_by_uid_and_comm);
	tcase_add_test(tc, test_owner_only);
	tcase_add_test(tc, test_owner_gid);
	tcase_add_test(tc, test_by_cgroup);
	tcase_add_test(tc, test_replace_while_running);
	tcase_add_test(tc, test_drop_all_and_limits);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	struct filt *f = NULL;
	char err[512];
	SRunner *sr;
	int r, failed;

	r = filt__new(&f, err, sizeof(err));
#ifndef HWPMCD_HAVE_BPF
	/* The fallback, which is this build's test: a refusal that says why. */
	if (r != -EOPNOTSUPP || !strstr(err, "built without BPF")) {
		fprintf(stderr, "filt__new without BPF: %d: %s\n", r, err);
		return 1;
	}
	printf("ok - built without BPF, filt__new refuses: %s\n1 passed, 0 failed\n", err);
	return 0;
#endif
	if (geteuid() != 0) {
		fprintf(stderr, "# skipped: BPF programs and system-wide counters need root\n");
		return 77;
	}
	if (r < 0) {
		fprintf(stderr, "# skipped: this kernel does not load the filter: %s\n", err);
		return 77;
	}
	filt__free(f);
	sr = srunner_create(filter_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (g_cgroup[0])
		rmdir(g_cgroup);
	return failed ? 1 : 0;
}
