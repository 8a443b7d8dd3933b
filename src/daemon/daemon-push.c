/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-push.c: an always-on profile's closed files sent to a profiling backend
 * (a profile's push_url: a Grafana Pyroscope server or anything that speaks its
 * HTTP ingest API).
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   daemon_push_start(), daemon_push_stop(), daemon_push_enqueue(),
 *   daemon_push_status(), daemon_push_check()
 *
 * IMPLEMENTATION NOTES
 *   One thread for the daemon.  A profile's worker queues each file it closed
 *   (daemon_push_enqueue(): a malloc and a mutex, never more, so the sampling
 *   path never waits for the network); the thread takes the due file whose time
 *   came first, turns it into the profile sent and POSTs it through libcurl:
 *
 *     POST URL/ingest?name=APP.cpu{LABELS}&from=S&until=S&format=pprof|folded
 *          &spyName=hwpmcd&sampleRate=HZ
 *
 *   (pprof as the multipart/form-data part "profile", as Pyroscope's SDKs send
 *   it; folded as a text/plain body).  The profile is made by `hwpmc report
 *   --confine --broker-fd 3 --pprof /dev/fd/1 FILE` (or --folded) in a child
 *   process: symbols come from the very code users run (FILE.kallsyms beside it
 *   included), a crash or a hang on a hostile ELF file never takes the daemon
 *   with it (the child is killed after DAEMON_PUSH_REPORT_TIMEOUT_S), and what it
 *   prints is read through a pipe up to DAEMON_PUSH_BODY_MAX.  The child parses
 *   users' ELF files, so it runs as user nobody (the daemon, root, forks, drops
 *   its groups, gid and uid, and execs: no capability survives), with nothing but
 *   descriptors 0 to 3, and opens no file itself: a broker thread of this daemon
 *   (daemon-broker.c) answers its requests on descriptor 3 with what the log
 *   names.  Root without CAP_KILL (the service) may not signal a process of
 *   nobody's, so the push thread takes nobody's effective uid for the kill
 *   (kill_report()).  Every limit is counted, never silent:
 *
 *     sent      files the server accepted (2xx);
 *     retries   attempts that failed and were tried again: a connection error,
 *               a timeout, HTTP 408, 429 or 5xx; DAEMON_PUSH_ATTEMPTS tries per
 *               file, 1, 2, 4, 8 and 16 s apart (other files go on meanwhile),
 *               the profile made once and kept for them (DAEMON_PUSH_HELD_MAX in
 *               all; beyond, made again), so a dead server costs no reports;
 *     failed    files given up: out of tries, another HTTP status (the server
 *               refused it: a mistake of configuration), a report that failed;
 *     dropped   files never tried to the end: the queue was full (the profile's
 *               oldest goes: DAEMON_PUSH_QUEUE_PROFILE_MAX of a profile,
 *               DAEMON_PUSH_QUEUE_MAX in all), retention deleted the file first,
 *               or the daemon stopped (at a stop, files tried before are given up
 *               and the others get DAEMON_PUSH_DRAIN_S).
 *
 *   The last error is kept per profile for `hwpmc profiles`.  The files stay on
 *   disk under retention whatever happens to their push.  Counters are kept per
 *   profile name, so that they survive a reload of the profile.
 */
/* libcurl's functions are called through the table below: no type-checking macros. */
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon-int.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"

/*
 * libcurl, loaded (dlopen) at the first profile with a push_url rather than linked:
 * it brings some thirty libraries (TLS, Kerberos, LDAP, SSH, HTTP/2...) that a
 * daemon which never pushes need not map, start with, or show in every
 * system-wide profile it takes of itself.
 */
#define CURL_FUNCS(X)                                                                              \
	X(global_init)                                                                             \
	X(global_cleanup)                                                                          \
	X(easy_init)                                                                               \
	X(easy_cleanup)                                                                            \
	X(easy_reset)                                                                              \
	X(easy_setopt)                                                                             \
	X(easy_perform)                                                                            \
	X(easy_getinfo)                                                                            \
	X(easy_strerror)                                                                           \
	X(free)                                                                                    \
	X(slist_append)                                                                            \
	X(slist_free_all)                                                                          \
	X(mime_init)                                                                               \
	X(mime_addpart)                                                                            \
	X(mime_name)                                                                               \
	X(mime_filename)                                                                           \
	X(mime_type)                                                                               \
	X(mime_data)                                                                               \
	X(mime_free)                                                                               \
	X(url)                                                                                     \
	X(url_set)                                                                                 \
	X(url_get)                                                                                 \
	X(url_cleanup)                                                                             \
	X(url_strerror)

static struct {
	pthread_once_t once;
	bool ok;
	char why[200]; /* what failed, when !ok */
#define CU_MEMBER(f) __typeof__(curl_##f) *f;
	CURL_FUNCS(CU_MEMBER)
#undef CU_MEMBER
} cu = { .once = PTHREAD_ONCE_INIT };

static void curl_lib_load_once(void)
{
	void *h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(cu.why, sizeof(cu.why), "libcurl cannot be loaded (%s): install libcurl4",
			 dlerror());
		return;
	}
#define CU_LOAD(f)                                                                                 \
	if (!(*(void **)&cu.f = dlsym(h, "curl_" #f))) {                                           \
		snprintf(cu.why, sizeof(cu.why), "libcurl.so.4 has no curl_" #f);                  \
		return;                                                                            \
	}
	CURL_FUNCS(CU_LOAD)
#undef CU_LOAD
	if (cu.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		snprintf(cu.why, sizeof(cu.why), "curl_global_init failed");
		return;
	}
	cu.ok = true; /* loaded for the daemon's life */
}

/* libcurl's table, loaded once: true, or false with @err set. */
static bool curl_lib(char *err, size_t errsize)
{
	pthread_once(&cu.once, curl_lib_load_once);
	if (!cu.ok && err)
		snprintf(err, errsize, "%s", cu.why);
	return cu.ok;
}

#define curl_global_cleanup (*cu.global_cleanup)
#define curl_easy_init (*cu.easy_init)
#define curl_easy_cleanup (*cu.easy_cleanup)
#define curl_easy_reset (*cu.easy_reset)
#undef curl_easy_setopt /* curl.h's three-argument check */
#define curl_easy_setopt (*cu.easy_setopt)
#define curl_easy_perform (*cu.easy_perform)
#undef curl_easy_getinfo
#define curl_easy_getinfo (*cu.easy_getinfo)
#define curl_easy_strerror (*cu.easy_strerror)
#define curl_free (*cu.free)
#define curl_slist_append (*cu.slist_append)
#define curl_slist_free_all (*cu.slist_free_all)
#define curl_mime_init (*cu.mime_init)
#define curl_mime_addpart (*cu.mime_addpart)
#define curl_mime_name (*cu.mime_name)
#define curl_mime_filename (*cu.mime_filename)
#define curl_mime_type (*cu.mime_type)
#define curl_mime_data (*cu.mime_data)
#define curl_mime_free (*cu.mime_free)
#define curl_url (*cu.url)
#define curl_url_set (*cu.url_set)
#define curl_url_get (*cu.url_get)
#define curl_url_cleanup (*cu.url_cleanup)
#define curl_url_strerror (*cu.url_strerror)

struct buf {
	char *p;
	size_t len, cap;
};

struct push_job {
	char profile[DAEMON_PROFILE_NAME_MAX];
	char url[DAEMON_PUSH_URL_MAX];
	char app[DAEMON_PROFILE_NAME_MAX];
	char labels[DAEMON_PUSH_LABELS_MAX];
	bool folded;
	uint32_t rate_hz; /* sampleRate: the rate the file began with (0: by period) */
	char path[720];
	int64_t from, until;
	unsigned attempts;
	int64_t due_ms;
	uint64_t seq; /* queue order: the oldest of equal due times first */
	/* The profile made for an attempt that failed to send it: the next tries reuse it. */
	struct buf body;
};

struct push_stats {
	char profile[DAEMON_PROFILE_NAME_MAX]; /* "": a free slot */
	uint64_t sent, failed, dropped, retries, bytes;
	uint64_t cpu_ns; /* made and sent: the report children's and the push thread's CPU */
	int64_t last_sent; /* Unix seconds of the last accepted file */
	char last_error[320];
};

/* The outcome of one attempt. */
enum { PUSH_OK, PUSH_RETRY, PUSH_FAIL, PUSH_GONE };

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool started, stop;
	int64_t drain_until_ms;
	pthread_t thr;
	struct push_job *q[DAEMON_PUSH_QUEUE_MAX];
	size_t n;
	uint64_t seq;
	struct push_stats st[2 * DAEMON_PROFILES_MAX];
	size_t held; /* bytes of the queued jobs' bodies: at most DAEMON_PUSH_HELD_MAX */
	char hwpmc[512];
	char self[512]; /* this daemon's binary: `hwpmcd --push-broker FILE` */
	/* The daemon is root: the report runs as P.uid, P.gid (nobody's), never as root. */
	bool drop;
	uid_t uid;
	gid_t gid;
} P = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Profile @name's counters (lock held); a free slot, or one with nothing queued, is taken. */
static struct push_stats *stats_of(const char *name)
{
	struct push_stats *free_slot = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(P.st); i++) {
		if (!strcmp(P.st[i].profile, name))
			return &P.st[i];
		if (!free_slot && !P.st[i].profile[0])
			free_slot = &P.st[i];
	}
	if (!free_slot) {
		/* More names than slots (reloads that renamed profiles): reuse an idle one. */
		for (size_t i = 0; i < ARRAY_SIZE(P.st) && !free_slot; i++) {
			bool queued = false;

			for (size_t k = 0; k < P.n; k++)
				queued |= !strcmp(P.q[k]->profile, P.st[i].profile);
			if (!queued)
				free_slot = &P.st[i];
		}
		if (!free_slot)
			free_slot = &P.st[0];
	}
	memset(free_slot, 0, sizeof(*free_slot));
	snprintf(free_slot->profile, sizeof(free_slot->profile), "%s", name);
	return free_slot;
}

static void set_error(struct push_stats *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_error(struct push_stats *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(st->last_error, sizeof(st->last_error), fmt, ap);
	va_end(ap);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

/* Take q[i] out of the queue (lock held); the job is the caller's. */
static struct push_job *take(size_t i)
{
	struct push_job *j = P.q[i];

	memmove(&P.q[i], &P.q[i + 1], (P.n - i - 1) * sizeof(P.q[0]));
	P.n--;
	return j;
}

/* Free @j and what it holds (lock held). */
static void job_free(struct push_job *j)
{
	P.held -= j->body.len;
	free(j->body.p);
	free(j);
}

/*
 * Queue @j (lock held).  When the profile has its share queued, or the queue is
 * full, the profile's oldest file is dropped to make room (counted); a profile
 * with nothing queued and a full queue loses @j itself.
 */
static void enqueue_locked(struct push_job *j)
{
	struct push_stats *st = stats_of(j->profile);
	size_t mine = 0, oldest = SIZE_MAX;

	for (size_t i = 0; i < P.n; i++) {
		if (strcmp(P.q[i]->profile, j->profile) != 0)
			continue;
		mine++;
		if (oldest == SIZE_MAX || P.q[i]->seq < P.q[oldest]->seq)
			oldest = i;
	}
	if (mine >= DAEMON_PUSH_QUEUE_PROFILE_MAX || P.n >= DAEMON_PUSH_QUEUE_MAX) {
		struct push_job *victim = oldest != SIZE_MAX ? take(oldest) : j;

		st->dropped++;
		set_error(st, "queue full: '%s' was not sent (the server takes longer than the "
			  "profile's rotation)", base_name(victim->path));
		log_warn("profile %s: push: %s", j->profile, st->last_error);
		job_free(victim);
		if (victim == j)
			return;
	}
	P.q[P.n++] = j;
	pthread_cond_signal(&P.cond);
}

void daemon_push_enqueue(const struct daemon_profile *def, const char *path, int64_t from,
			 int64_t until, uint32_t rate_hz)
{
	struct push_job *j;

	if (!def->push_url[0])
		return;
	j = calloc(1, sizeof(*j));
	pthread_mutex_lock(&P.lock);
	if (!j || !P.started || P.stop) {
		struct push_stats *st = stats_of(def->name);

		st->dropped++;
		set_error(st, "'%s' was not queued: %s", base_name(path),
			  !j ? "out of memory" : "the push thread is not running");
		pthread_mutex_unlock(&P.lock);
		free(j);
		return;
	}
	snprintf(j->profile, sizeof(j->profile), "%s", def->name);
	snprintf(j->url, sizeof(j->url), "%s", def->push_url);
	snprintf(j->app, sizeof(j->app), "%s", def->push_name[0] ? def->push_name : def->name);
	snprintf(j->labels, sizeof(j->labels), "%s", def->push_labels);
	j->folded = def->push_folded;
	j->rate_hz = rate_hz;
	snprintf(j->path, sizeof(j->path), "%s", path);
	j->from = from;
	j->until = until > from ? until : from + 1;
	j->due_ms = util_mono_ms();
	j->seq = P.seq++;
	enqueue_locked(j);
	pthread_mutex_unlock(&P.lock);
}

/* ---- the profile: `hwpmc report` in a child ---- */

static int buf_add(struct buf *b, const char *d, size_t n, size_t max)
{
	if (b->len + n > max)
		return -EFBIG;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 65536;
		char *np;

		while (cap < b->len + n)
			cap *= 2;
		np = realloc(b->p, cap);
		if (!np)
			return -ENOMEM;
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
	return 0;
}

static bool stopping(void)
{
	bool s;

	pthread_mutex_lock(&P.lock);
	s = P.stop && util_mono_ms() >= P.drain_until_ms;
	pthread_mutex_unlock(&P.lock);
	return s;
}

/* The last non-empty line of @s (what hwpmc said last: its error), cut to @size. */
static void last_line(const char *s, size_t len, char *out, size_t size)
{
	size_t e = len, b;

	while (e && (s[e - 1] == '\n' || s[e - 1] == '\r'))
		e--;
	b = e;
	while (b && s[b - 1] != '\n')
		b--;
	snprintf(out, size, "%.*s", (int)(e - b), s + b);
	for (char *c = out; *c; c++)
		if ((unsigned char)*c < ' ' || (unsigned char)*c == 0x7f)
			*c = '?';
}

/* How the report child is started (make_profile() fills it, spawn() uses it). */
struct spawn {
	char *const *argv;
	char *const *envp;
	int exe;		/* O_PATH of argv[0], opened by root */
	int fd0, fd1, fd2, fd3; /* its 0 to 3 */
	int status;		/* written the errno of a failure before exec */
	/* all of these >= 10 and close-on-exec (F_DUPFD_CLOEXEC) */
	int maxfd;		/* without close_range(2): close 4 to this */
	bool drop;		/* become P.uid, P.gid (the daemon is root) */
	bool groups;		/* the daemon has supplementary groups to drop */
};

/*
 * The forked child, until exec: async-signal-safe calls only (the daemon has
 * threads), raw system calls for the ids (one thread here: no glibc broadcast).
 */
static void spawn_child(const struct spawn *s)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	static const int sigs[] = { SIGPIPE, SIGTERM, SIGINT, SIGHUP };
	sigset_t none;
	int e;

	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		(void)sigaction(sigs[i], &dfl, NULL);
	/* Its uid and gid: nobody's, its groups none; no capability survives the exec. */
	if (s->drop && ((s->groups && syscall(SYS_setgroups, 0, NULL) < 0) ||
			syscall(SYS_setresgid, P.gid, P.gid, P.gid) < 0 ||
			syscall(SYS_setresuid, P.uid, P.uid, P.uid) < 0))
		goto fail;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		goto fail;
	/* Below the daemon's own work; a sandbox that refuses it (@resources) leaves it be. */
	(void)setpriority(PRIO_PROCESS, 0, 10);
	/* 4 and 5, the binary and the status pipe, close at exec (O_CLOEXEC). */
	if (dup2(s->fd0, 0) < 0 || dup2(s->fd1, 1) < 0 || dup2(s->fd2, 2) < 0 ||
	    dup2(s->fd3, 3) < 0 || dup3(s->exe, 4, O_CLOEXEC) < 0 ||
	    dup3(s->status, 5, O_CLOEXEC) < 0)
		goto fail;
	/*
	 * Nothing but 0 to 3 after the exec: libcurl's sockets (and whatever the
	 * daemon was started with) are not all close-on-exec.
	 */
	if (syscall(SYS_close_range, 6u, ~0u, 0) < 0)
		for (int fd = 6; fd < s->maxfd; fd++)
			(void)close(fd);
	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	/*
	 * The binary root opened: nobody need not reach its directory (a build tree
	 * in a private home).  A script cannot run from a close-on-exec descriptor
	 * (ENOENT), and valgrind before 3.20 does not know execveat (ENOSYS): by its
	 * path then.
	 */
	syscall(SYS_execveat, 4, "", s->argv, s->envp, AT_EMPTY_PATH);
	if (errno == ENOENT || errno == ENOSYS)
		execve(s->argv[0], s->argv, s->envp);
	e = errno;
	(void)!write(5, &e, sizeof(e));
	_exit(127);
fail:
	e = errno;
	(void)!write(s->status, &e, sizeof(e));
	_exit(127);
}

/*
 * Kill the report child @pid.  Root without CAP_KILL (hwpmcd.service) may not
 * signal a process of user nobody: this thread alone then takes nobody's
 * effective uid for the kill (a raw setresuid(2) is per thread), and takes uid 0
 * back (its real and saved uid, so no capability is needed for that).
 */
static void kill_report(pid_t pid)
{
	if (kill(pid, SIGKILL) == 0 || errno != EPERM || !P.drop)
		return;
	if (syscall(SYS_setresuid, -1, P.uid, -1) == 0) {
		(void)kill(pid, SIGKILL);
		if (syscall(SYS_setresuid, -1, 0, -1) < 0)
			log_error("push: cannot take uid 0 back after killing a report: %s",
				  strerror(errno));
	}
}

/*
 * Start @argv (argv[0] opened by root, O_PATH) with @fds as its descriptors 0 to
 * 3 and nothing else, as nobody with @drop: its pid, or -errno (it failed
 * before its exec, and was waited for).
 */
static pid_t spawn(char *const *argv, char *const *envp, const int fds[4], bool drop)
{
	int hi[6] = { -1, -1, -1, -1, -1, -1 }, spipe[2] = { -1, -1 }, e = 0, k;
	struct rlimit rl;
	struct spawn sp;
	pid_t pid = -1;

	if (pipe2(spipe, O_CLOEXEC) < 0)
		return -errno;
	/* All above 9, so that the child's dup2()s to 0..5 never overwrite a source. */
	if ((k = open(argv[0], O_PATH | O_CLOEXEC)) < 0) {
		e = -errno;
		goto out;
	}
	hi[4] = fcntl(k, F_DUPFD_CLOEXEC, 10);
	close(k);
	for (k = 0; k < 4 && hi[4] >= 0; k++)
		if ((hi[k] = fcntl(fds[k], F_DUPFD_CLOEXEC, 10)) < 0)
			break;
	if (hi[4] < 0 || k < 4 || (hi[5] = fcntl(spipe[1], F_DUPFD_CLOEXEC, 10)) < 0) {
		e = -errno;
		goto out;
	}
	sp = (struct spawn){ .argv = argv,
			     .envp = envp,
			     .exe = hi[4],
			     .fd0 = hi[0],
			     .fd1 = hi[1],
			     .fd2 = hi[2],
			     .fd3 = hi[3],
			     .status = hi[5],
			     .drop = drop,
			     .groups = drop && getgroups(0, NULL) > 0 };
	sp.maxfd = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1u << 20 ? (int)rl.rlim_cur
										: 1 << 20;
	pid = fork();
	if (pid == 0)
		spawn_child(&sp); /* never returns */
	if (pid < 0) {
		e = -errno;
		goto out;
	}
	close(spipe[1]);
	spipe[1] = -1;
	for (k = 0; k < 6; k++) {
		close(hi[k]);
		hi[k] = -1;
	}
	{
		int ce = 0;
		ssize_t n;

		do
			n = read(spipe[0], &ce, sizeof(ce));
		while (n < 0 && errno == EINTR);
		if (n == (ssize_t)sizeof(ce)) { /* it failed before its exec */
			e = -ce;
			(void)wait4(pid, NULL, 0, NULL);
		}
	}
out:
	for (k = 0; k < 6; k++)
		if (hi[k] >= 0)
			close(hi[k]);
	for (k = 0; k < 2; k++)
		if (spipe[k] >= 0)
			close(spipe[k]);
	return e < 0 ? e : pid;
}

/* The user and system CPU time of @ru, in ns. */
static uint64_t rusage_ns(const struct rusage *ru)
{
	return (uint64_t)ru->ru_utime.tv_sec * 1000000000ull + (uint64_t)ru->ru_utime.tv_usec * 1000 +
	       (uint64_t)ru->ru_stime.tv_sec * 1000000000ull + (uint64_t)ru->ru_stime.tv_usec * 1000;
}

/*
 * The broker @bpid, once the report has ended: it sees the report's end of the
 * socket close and exits; one that is still in a call after DAEMON_BROKER_END_MS
 * (a file system that does not answer) is killed.  Its CPU into *@ret_cpu_ns.
 */
static void end_broker(pid_t bpid, bool kill_now, const char *path, uint64_t *ret_cpu_ns)
{
	int pfd = (int)syscall(SYS_pidfd_open, bpid, 0), st = 0;
	struct rusage ru = { 0 };

	if (!kill_now && pfd >= 0) {
		struct pollfd pf = { pfd, POLLIN, 0 };

		if (poll(&pf, 1, DAEMON_BROKER_END_MS) == 0) {
			log_warn("push: the broker of '%s' is still in a call %d s after its report "
				 "ended (a FUSE or network file system that does not answer?): "
				 "killed",
				 path, DAEMON_BROKER_END_MS / 1000);
			kill_now = true;
		}
	}
	if (kill_now)
		(void)kill(bpid, SIGKILL);
	if (wait4(bpid, &st, 0, &ru) == bpid)
		*ret_cpu_ns += rusage_ns(&ru);
	if (pfd >= 0)
		close(pfd);
}

/*
 * Run `hwpmc report` on @j's file; its output into @out.  PUSH_OK, or
 * PUSH_FAIL / PUSH_RETRY (stopping) with @err said.
 */
static int make_profile(const struct push_job *j, struct buf *out, char *err, size_t errsize,
			uint64_t *ret_cpu_ns)
{
	static char a_report[] = "report", a_conf[] = "--confine", a_broker[] = "--broker-fd",
		    a_3[] = "3", a_nodi[] = "--no-debuginfod", a_jit[] = "--jit-maps",
		    a_pprof[] = "--pprof", a_folded[] = "--folded", a_fd1[] = "/dev/fd/1",
		    a_nolines[] = "--pprof-no-lines",
		    a_end[] = "--", a_push_broker[] = "--push-broker";
	char path[sizeof(j->path)], jit[sizeof(j->path) + 8], *argv[16], *bargv[4];
	size_t na = 0;
	static char e_path[] = "PATH=/usr/bin:/bin", e_lc[] = "LC_ALL=C";
	char *envp[] = { e_path, e_lc, NULL };
	int opipe[2] = { -1, -1 }, epipe[2] = { -1, -1 }, bs[2] = { -1, -1 };
	int pidfd = -1, status = 0, ret = PUSH_FAIL, devnull = -1;
	struct rusage ru = { 0 };
	struct buf eb = { 0 };
	struct stat st;
	int64_t deadline = util_mono_ms() + DAEMON_PUSH_REPORT_TIMEOUT_S * 1000ll;
	bool exited = false, killed = false;
	pid_t pid = -1, bpid = -1;

	/*
	 * hwpmc report --confine --broker-fd 3 --no-debuginfod [--jit-maps FILE.jit]
	 * --pprof /dev/fd/1 -- FILE (--folded prints to stdout), as user nobody: it
	 * parses users' ELF files, so it keeps no privilege, opens no file itself and
	 * asks for each a broker, `hwpmcd --push-broker FILE`, root with
	 * CAP_DAC_READ_SEARCH alone, which opens only what FILE names (daemon-broker.c;
	 * docs/security.md).  FILE.jit is named when it is there: nobody could not look
	 * into the profile's directory.
	 */
	snprintf(path, sizeof(path), "%s", j->path);
	snprintf(jit, sizeof(jit), "%s.jit", j->path);
	argv[na++] = P.hwpmc;
	argv[na++] = a_report;
	argv[na++] = a_conf;
	argv[na++] = a_broker;
	argv[na++] = a_3;
	argv[na++] = a_nodi;
	if (stat(jit, &st) == 0 && S_ISDIR(st.st_mode)) {
		argv[na++] = a_jit;
		argv[na++] = jit;
	}
	if (j->folded) {
		argv[na++] = a_folded;
	} else {
		/* a push every rotation: functions by PC, no image's DWARF read each time */
		argv[na++] = a_nolines;
		argv[na++] = a_pprof;
		argv[na++] = a_fd1;
	}
	argv[na++] = a_end;
	argv[na++] = path;
	argv[na] = NULL;
	bargv[0] = P.self;
	bargv[1] = a_push_broker;
	bargv[2] = path;
	bargv[3] = NULL;
	if (!P.self[0]) {
		snprintf(err, errsize, "the daemon's own binary is unknown (/proc/self/exe): no "
			 "broker for the report");
		return PUSH_FAIL;
	}
	if (pipe2(opipe, O_CLOEXEC) < 0 || pipe2(epipe, O_CLOEXEC) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, bs) < 0 ||
	    (devnull = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0) {
		snprintf(err, errsize, "pipe: %s", strerror(errno));
		goto out;
	}
	/* The broker: root with CAP_DAC_READ_SEARCH alone; its messages to the daemon's. */
	{
		const int fds[4] = { devnull, devnull, STDERR_FILENO, bs[0] };

		bpid = spawn(bargv, envp, fds, false);
	}
	close(bs[0]);
	bs[0] = -1;
	if (bpid < 0) {
		snprintf(err, errsize, "cannot run the broker '%.200s --push-broker': %s", P.self,
			 strerror((int)-bpid));
		goto out;
	}
	/* The report: nobody, the broker's socket its descriptor 3. */
	{
		const int fds[4] = { devnull, opipe[1], epipe[1], bs[1] };

		pid = spawn(argv, envp, fds, P.drop);
	}
	close(opipe[1]);
	close(epipe[1]);
	close(bs[1]); /* the broker sees its end of file when the report ends */
	opipe[1] = epipe[1] = bs[1] = -1;
	if (pid < 0) {
		int r = (int)-pid;

		snprintf(err, errsize, "cannot run '%.200s' as uid %u: %s%s", P.hwpmc,
			 (unsigned)(P.drop ? P.uid : geteuid()), strerror(r),
			 r == EPERM && P.drop ? " (the daemon needs CAP_SETUID and CAP_SETGID: "
						"hwpmcd.service)"
					      : " (hwpmcd.conf: hwpmc)");
		goto out;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	(void)fcntl(opipe[0], F_SETFL, O_NONBLOCK);
	(void)fcntl(epipe[0], F_SETFL, O_NONBLOCK);
	while (opipe[0] >= 0 || epipe[0] >= 0 || !exited) {
		struct pollfd pf[3] = { { opipe[0], POLLIN, 0 }, { epipe[0], POLLIN, 0 },
					{ exited ? -1 : pidfd, POLLIN, 0 } };
		char chunk[65536];

		if (exited && util_mono_ms() >= deadline)
			break; /* a grandchild holds the pipes open: what came is what there is */
		if (!killed && !exited && (util_mono_ms() >= deadline || stopping())) {
			if (util_mono_ms() >= deadline)
				snprintf(err, errsize, "hwpmc report took over %d s: killed",
					 DAEMON_PUSH_REPORT_TIMEOUT_S);
			else
				snprintf(err, errsize, "the daemon stopped");
			ret = util_mono_ms() >= deadline ? PUSH_FAIL : PUSH_RETRY;
			kill_report(pid);
			killed = true;
		}
		if (pidfd < 0 && !exited) {
			/* No pidfd (an old kernel): look for the exit every round. */
			if (wait4(pid, &status, WNOHANG, &ru) == pid)
				exited = true;
		}
		(void)poll(pf, 3, 200);
		for (int k = 0; k < 2; k++) {
			int *fd = k == 0 ? &opipe[0] : &epipe[0];
			ssize_t n;

			if (*fd < 0 || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(*fd, chunk, sizeof(chunk));
			if (n > 0) {
				if (k == 1) {
					(void)buf_add(&eb, chunk, (size_t)n, 4096);
				} else if (!killed && buf_add(out, chunk, (size_t)n,
							      DAEMON_PUSH_BODY_MAX) < 0) {
					snprintf(err, errsize, "the profile is over %u MiB: not sent "
						 "(rotate the profile more often)",
						 DAEMON_PUSH_BODY_MAX >> 20);
					kill_report(pid);
					killed = true;
				}
			} else if (n == 0 || errno != EAGAIN) {
				close(*fd);
				*fd = -1;
			}
		}
		if (!exited && pidfd >= 0 && (pf[2].revents & POLLIN) &&
		    wait4(pid, &status, WNOHANG, &ru) == pid)
			exited = true;
		if (!exited && killed && opipe[0] < 0 && epipe[0] < 0 &&
		    wait4(pid, &status, 0, &ru) == pid)
			exited = true;
	}
	if (exited) /* what the report cost: the profile's CPU budget counts it */
		*ret_cpu_ns += rusage_ns(&ru);
	if (!killed) {
		if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && out->len) {
			ret = PUSH_OK;
		} else {
			char said[256];

			last_line(eb.p ? eb.p : "", eb.len, said, sizeof(said));
			if (WIFSIGNALED(status))
				snprintf(err, errsize, "hwpmc report died of signal %d%s%s",
					 WTERMSIG(status), said[0] ? ": " : "", said);
			else
				snprintf(err, errsize, "hwpmc report %s: %s",
					 out->len || WEXITSTATUS(status) ? "failed" : "printed nothing",
					 said[0] ? said : "(it said nothing)");
		}
	}
out:
	for (int k = 0; k < 2; k++) {
		if (opipe[k] >= 0)
			close(opipe[k]);
		if (epipe[k] >= 0)
			close(epipe[k]);
		if (bs[k] >= 0)
			close(bs[k]);
	}
	if (devnull >= 0)
		close(devnull);
	if (pidfd >= 0)
		close(pidfd);
	/* The report has ended (or never ran): so does its broker, or it is killed. */
	if (bpid > 0)
		end_broker(bpid, killed || pid < 0, j->path, ret_cpu_ns);
	free(eb.p);
	return ret;
}

/* ---- the request ---- */

static size_t reply_body(char *d, size_t size, size_t n, void *ctx)
{
	(void)buf_add(ctx, d, size * n, 1024); /* the first KiB: the server's error message */
	return size * n;
}

static int xfer_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)ctx, (void)dt, (void)dn, (void)ut, (void)un;
	return stopping() ? 1 : 0;
}

/* The ingest URL of @j: push_url's path ending in /ingest, and the query. */
static CURLU *ingest_url(const struct push_job *j, char *err, size_t errsize)
{
	CURLU *u = curl_url();
	char *path = NULL, q[1024];
	CURLUcode c;

	if (!u) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	c = curl_url_set(u, CURLUPART_URL, j->url, 0);
	if (c == CURLUE_OK)
		c = curl_url_get(u, CURLUPART_PATH, &path, 0);
	if (c == CURLUE_OK) {
		size_t l = strlen(path);
		char np[DAEMON_PUSH_URL_MAX + 16];

		while (l && path[l - 1] == '/')
			l--;
		if (l < 7 || strncmp(path + l - 7, "/ingest", 7) != 0) {
			snprintf(np, sizeof(np), "%.*s/ingest", (int)l, path);
			c = curl_url_set(u, CURLUPART_PATH, np, 0);
		}
	}
	curl_free(path);
	/* Each "key=value" is appended with its value URL-encoded by libcurl. */
	snprintf(q, sizeof(q), "name=%s.cpu{%s}", j->app, j->labels);
	if (c == CURLUE_OK)
		c = curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY | CURLU_URLENCODE);
	snprintf(q, sizeof(q), "from=%" PRId64, j->from);
	if (c == CURLUE_OK)
		c = curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY | CURLU_URLENCODE);
	snprintf(q, sizeof(q), "until=%" PRId64, j->until);
	if (c == CURLUE_OK)
		c = curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY | CURLU_URLENCODE);
	snprintf(q, sizeof(q), "format=%s", j->folded ? "folded" : "pprof");
	if (c == CURLUE_OK)
		c = curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY | CURLU_URLENCODE);
	if (c == CURLUE_OK)
		c = curl_url_set(u, CURLUPART_QUERY, "spyName=hwpmcd", CURLU_APPENDQUERY);
	if (j->rate_hz) {
		snprintf(q, sizeof(q), "sampleRate=%" PRIu32, j->rate_hz);
		if (c == CURLUE_OK)
			c = curl_url_set(u, CURLUPART_QUERY, q, CURLU_APPENDQUERY);
	}
	if (c != CURLUE_OK) {
		snprintf(err, errsize, "push_url '%.200s': %s", j->url, curl_url_strerror(c));
		curl_url_cleanup(u);
		return NULL;
	}
	return u;
}

/* POST @body to @j's server.  PUSH_OK, PUSH_RETRY or PUSH_FAIL with @err said. */
static int post(CURL *h, const struct push_job *j, const struct buf *body, char *err,
		size_t errsize)
{
	char ebuf[CURL_ERROR_SIZE] = "", ua[64];
	struct curl_slist *hdr = NULL;
	curl_mime *mime = NULL;
	struct buf reply = { 0 };
	CURLU *u = ingest_url(j, err, errsize);
	long code = 0;
	CURLcode c;
	int ret;

	if (!u)
		return PUSH_FAIL;
	curl_easy_reset(h);
	snprintf(ua, sizeof(ua), "hwpmcd/%s", HWPMCD_VERSION);
	curl_easy_setopt(h, CURLOPT_CURLU, u);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, (long)DAEMON_PUSH_HTTP_TIMEOUT_S);
	curl_easy_setopt(h, CURLOPT_USERAGENT, ua);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, reply_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &reply);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, xfer_progress);
	if (j->folded) {
		hdr = curl_slist_append(NULL, "Content-Type: text/plain");
		curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body->p);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body->len);
	} else {
		curl_mimepart *part;

		mime = curl_mime_init(h);
		part = mime ? curl_mime_addpart(mime) : NULL;
		if (!part || curl_mime_name(part, "profile") != CURLE_OK ||
		    curl_mime_filename(part, "profile.pb.gz") != CURLE_OK ||
		    curl_mime_type(part, "application/octet-stream") != CURLE_OK ||
		    curl_mime_data(part, body->p, body->len) != CURLE_OK) {
			snprintf(err, errsize, "out of memory");
			ret = PUSH_RETRY;
			goto out;
		}
		curl_easy_setopt(h, CURLOPT_MIMEPOST, mime);
	}
	c = curl_easy_perform(h);
	if (c != CURLE_OK) {
		snprintf(err, errsize, "%s", ebuf[0] ? ebuf : curl_easy_strerror(c));
		/* A URL or protocol curl refuses is not going to get better. */
		ret = c == CURLE_URL_MALFORMAT || c == CURLE_UNSUPPORTED_PROTOCOL ||
		      c == CURLE_NOT_BUILT_IN ? PUSH_FAIL : PUSH_RETRY;
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300) {
		ret = PUSH_OK;
	} else {
		char said[200];

		last_line(reply.p ? reply.p : "", reply.len, said, sizeof(said));
		snprintf(err, errsize, "HTTP %ld from the server%s%s", code, said[0] ? ": " : "",
			 said);
		ret = code == 408 || code == 429 || code >= 500 ? PUSH_RETRY : PUSH_FAIL;
	}
out:
	curl_easy_setopt(h, CURLOPT_CURLU, NULL);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h, CURLOPT_MIMEPOST, NULL);
	curl_mime_free(mime);
	curl_slist_free_all(hdr);
	curl_url_cleanup(u);
	free(reply.p);
	return ret;
}

/*
 * One attempt at @j: the profile made (unless an attempt before kept it), then sent.
 * *ret_cpu_ns: the CPU it took (the report child's, and this thread's).
 */
static int push_one(CURL *h, struct push_job *j, uint64_t *ret_bytes, char *err,
		    size_t errsize, uint64_t *ret_cpu_ns)
{
	uint64_t t0;
	struct stat st;
	int r = PUSH_OK;

	*ret_bytes = 0;
	*ret_cpu_ns = 0;
	t0 = util_now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (!j->body.p) {
		if (stat(j->path, &st) < 0) {
			snprintf(err, errsize, "'%.120s' is gone (retention deleted it before it was "
				 "sent: retain more, or rotate less often)", base_name(j->path));
			return PUSH_GONE;
		}
		r = make_profile(j, &j->body, err, errsize, ret_cpu_ns);
	}
	if (r == PUSH_OK)
		r = post(h, j, &j->body, err, errsize);
	*ret_bytes = j->body.len;
	*ret_cpu_ns += util_now_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	return r;
}

static void *push_main(void *arg)
{
	CURL *h = NULL; /* made at the first file to send: libcurl is loaded then */

	(void)arg;
	pthread_mutex_lock(&P.lock);
	for (;;) {
		int64_t now = util_mono_ms(), wait = -1;
		size_t best = SIZE_MAX;
		struct push_job *j;
		struct push_stats *st;
		char err[sizeof(st->last_error)] = "";
		uint64_t bytes = 0, cpu = 0;
		int r;

		if (P.stop && (!P.n || now >= P.drain_until_ms))
			break;
		if (P.stop) {
			/* Shutting down: first tries only; a server that failed once is not waited for. */
			for (size_t i = 0; i < P.n;) {
				if (!P.q[i]->attempts) {
					i++;
					continue;
				}
				j = take(i);
				st = stats_of(j->profile);
				st->dropped++;
				set_error(st, "%.120s: not sent: the daemon stopped before its next try",
					  base_name(j->path));
				job_free(j);
			}
			if (!P.n)
				break;
		}
		for (size_t i = 0; i < P.n; i++) {
			if (P.q[i]->due_ms > now) {
				int64_t w = P.q[i]->due_ms - now;

				wait = wait < 0 || w < wait ? w : wait;
				continue;
			}
			if (best == SIZE_MAX || P.q[i]->due_ms < P.q[best]->due_ms ||
			    (P.q[i]->due_ms == P.q[best]->due_ms && P.q[i]->seq < P.q[best]->seq))
				best = i;
		}
		if (best == SIZE_MAX) {
			struct timespec ts;

			if (P.stop)
				wait = wait < 0 || wait > P.drain_until_ms - now ? P.drain_until_ms - now
										 : wait;
			if (wait < 0) {
				pthread_cond_wait(&P.cond, &P.lock);
				continue;
			}
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += wait / 1000;
			ts.tv_nsec += (wait % 1000) * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&P.cond, &P.lock, &ts);
			continue;
		}
		j = take(best);
		P.held -= j->body.len; /* the job's own while it is out of the queue */
		pthread_mutex_unlock(&P.lock);
		if (!h && curl_lib(err, sizeof(err)) && !(h = curl_easy_init()))
			snprintf(err, sizeof(err), "libcurl: no handle (out of memory)");
		r = h ? push_one(h, j, &bytes, err, sizeof(err), &cpu) : PUSH_RETRY;
		pthread_mutex_lock(&P.lock);
		st = stats_of(j->profile);
		st->cpu_ns += cpu;
		j->attempts++;
		P.held += j->body.len;
		if (r == PUSH_OK) {
			st->sent++;
			st->bytes += bytes;
			st->last_sent = (int64_t)time(NULL);
			job_free(j);
			continue;
		}
		set_error(st, "%.120s: %s", base_name(j->path), err);
		if (r == PUSH_RETRY && j->attempts < DAEMON_PUSH_ATTEMPTS && !P.stop) {
			st->retries++;
			j->due_ms = util_mono_ms() + (1000ll << (j->attempts - 1));
			if (P.held > DAEMON_PUSH_HELD_MAX) {
				/* Too much waiting in memory: made again at the next try. */
				P.held -= j->body.len;
				free(j->body.p);
				j->body = (struct buf){ 0 };
			}
			enqueue_locked(j);
			continue;
		}
		if (r == PUSH_GONE || (r == PUSH_RETRY && P.stop))
			st->dropped++;
		else
			st->failed++;
		log_warn("profile %s: push of '%s' given up after %u tries: %s", j->profile,
			 j->path, j->attempts, err);
		job_free(j);
	}
	if (P.n)
		log_warn("push: %zu files not sent: the daemon stopped (they stay in the profiles' "
			 "directories)", P.n);
	while (P.n) {
		struct push_job *j = take(0);

		stats_of(j->profile)->dropped++;
		job_free(j);
	}
	pthread_mutex_unlock(&P.lock);
	if (h)
		curl_easy_cleanup(h);
	return NULL;
}

int daemon_push_start(const char *hwpmc)
{
	pthread_condattr_t ca;
	int r;

	if (P.started)
		return 0;
	snprintf(P.hwpmc, sizeof(P.hwpmc), "%s", hwpmc);
	{
		ssize_t n = readlink("/proc/self/exe", P.self, sizeof(P.self) - 1);

		P.self[n > 0 ? n : 0] = '\0';
		if (n <= 0)
			log_warn("push: /proc/self/exe: %s: profiles will not be pushed",
				 strerror(errno));
	}
	P.drop = geteuid() == 0;
	if (P.drop) {
		const struct passwd *pw = getpwnam("nobody");

		P.uid = pw ? pw->pw_uid : 65534;
		P.gid = pw ? pw->pw_gid : 65534;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&P.cond, &ca);
	pthread_condattr_destroy(&ca);
	P.stop = false;
	r = pthread_create(&P.thr, NULL, push_main, NULL);
	if (r != 0) {
		pthread_cond_destroy(&P.cond);
		return -r;
	}
	(void)pthread_setname_np(P.thr, "hwpmcd-push");
	pthread_mutex_lock(&P.lock);
	P.started = true;
	pthread_mutex_unlock(&P.lock);
	return 0;
}

void daemon_push_stop(void)
{
	if (!P.started)
		return;
	pthread_mutex_lock(&P.lock);
	P.stop = true;
	P.drain_until_ms = util_mono_ms() + DAEMON_PUSH_DRAIN_S * 1000ll;
	if (P.n)
		log_info("push: sending %zu queued files (for at most %d s)", P.n,
			 DAEMON_PUSH_DRAIN_S);
	pthread_cond_signal(&P.cond);
	pthread_mutex_unlock(&P.lock);
	pthread_join(P.thr, NULL);
	pthread_mutex_lock(&P.lock);
	P.started = false;
	pthread_mutex_unlock(&P.lock);
	pthread_cond_destroy(&P.cond);
	if (cu.ok)
		curl_global_cleanup();
}

json_t *daemon_push_status(const char *name)
{
	json_t *o;
	size_t queued = 0;

	pthread_mutex_lock(&P.lock);
	for (size_t i = 0; i < P.n; i++)
		queued += !strcmp(P.q[i]->profile, name);
	{
		const struct push_stats *st = stats_of(name);

		o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:f}", "queued", (json_int_t)queued, "sent",
			      (json_int_t)st->sent, "failed", (json_int_t)st->failed, "dropped",
			      (json_int_t)st->dropped, "retries", (json_int_t)st->retries,
			      "bytes", (json_int_t)st->bytes, "cpu_seconds",
			      (double)st->cpu_ns / 1e9);
		if (o && st->last_sent)
			json_object_set_new(o, "last_sent", json_integer(st->last_sent));
		if (o && st->last_error[0])
			json_object_set_new(o, "last_error", json_string(st->last_error));
	}
	pthread_mutex_unlock(&P.lock);
	return o;
}

uint64_t daemon_push_cpu_ns(const char *name)
{
	uint64_t ns = 0;

	pthread_mutex_lock(&P.lock);
	for (size_t i = 0; i < ARRAY_SIZE(P.st); i++)
		if (!strcmp(P.st[i].profile, name))
			ns = P.st[i].cpu_ns;
	pthread_mutex_unlock(&P.lock);
	return ns;
}

int daemon_push_check(const char *url, char *msg, size_t size)
{
	int fd;

	/* Loaded here, at the first profile that pushes (a config load, once), if it can be. */
	if (!curl_lib(msg, size))
		return -ELIBACC;
	fd = socket(strchr(url, '[') ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	snprintf(msg, size, "push_url needs the network, and the daemon cannot open an IP "
		 "socket (%s): hwpmcd.service runs without network unless a drop-in opens it "
		 "for the push (hwpmcd.conf(5), PUSH)", strerror(errno));
	return -errno;
}
