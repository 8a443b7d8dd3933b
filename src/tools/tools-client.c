/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-client.c: the hwpmc commands that talk to the daemon.
 *
 * PUBLIC INTERFACES
 *   tools_record_main(), tools_status_main(), tools_stop_main(), tools_events_main()
 *   and their usage functions.
 *
 * IMPLEMENTATION NOTES
 *   `hwpmc record` opens the output itself (so the file is created with the
 *   user's rights and the daemon never opens a client-named path) and passes the
 *   fd with SCM_RIGHTS on the start request.  For `-- CMD` it forks the command
 *   first and holds it on a pipe until the daemon has armed the counters on it
 *   with enable_on_exec; then the child execs and counting starts.  The recording
 *   ends on Ctrl-C, after -d seconds, when the command exits (for -p: when
 *   every target has exited or is a zombie), or when the daemon reports that the
 *   session ended (a full disk, say).  A session that ended in state "error" (its
 *   message and errno are printed, even with -q), a lost connection to the
 *   daemon, or a failed stop make `record` exit 1.
 *
 *   Kernel symbols: `record -o FILE` also creates FILE.kallsyms (or
 *   --kallsyms-out's file) the same way and passes it as the second fd with
 *   "kallsyms": "fd"; the daemon fills it with /proc/kallsyms's text symbols and
 *   compacts it at the end.  When the daemon says the session gets none (user
 *   mode only, addresses hidden), the empty file is removed again.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/ctl-protocol.h"
#include "hwpmcd/files.h"
#include "hwpmcd/log.h"
#include "hwpmcd/maplog-jit.h"
#include "hwpmcd/maplog.h"
#include "tools-int.h"

struct conn {
	int fd;
	char buf[CTL_MESSAGE_MAX + 1];
	size_t len;
	json_int_t next_id;
	json_t *pending_event; /* an event line read while waiting for a reply */
};

static const char *socket_path(const char *arg)
{
	const char *env = getenv(CTL_SOCKET_ENV);

	return arg ? arg : env && *env ? env : CTL_SOCKET_DEFAULT;
}

static int conn_open(struct conn *c, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int r;

	memset(c, 0, sizeof(*c));
	c->next_id = 1;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_error("socket path '%s' is too long", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path));
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		log_error("cannot reach the daemon at %s: %s%s", path, strerror(-r),
			  r == -ENOENT || r == -ECONNREFUSED
				  ? " (is hwpmcd running? start it, or pass --socket / set HWPMCD_SOCKET)"
				  : r == -EACCES ? " (are you in the daemon's group?)" : "");
		close(c->fd);
		c->fd = -1;
		return r;
	}
	return 0;
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	json_decref(c->pending_event);
	c->pending_event = NULL;
}

#define CONN_FDS_MAX 2

/* Send a request (consumes @args), with the @nfds fds @fds attached (in order). */
static int conn_send(struct conn *c, const char *cmd, json_t *args, const int *fds, size_t nfds,
		     json_int_t *ret_id)
{
	json_t *req = json_pack("{s:I,s:s,s:o}", "id", c->next_id, "cmd", cmd, "args",
				args ? args : json_object());
	char *s = req ? json_dumps(req, JSON_COMPACT) : NULL;
	char cbuf[CMSG_SPACE(sizeof(int) * CONN_FDS_MAX)];
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	size_t n;
	ssize_t k;

	json_decref(req);
	if (!s)
		return -ENOMEM;
	n = strlen(s);
	s[n] = '\n';
	iov.iov_base = s;
	iov.iov_len = n + 1;
	if (nfds > CONN_FDS_MAX) {
		free(s);
		return -E2BIG;
	}
	if (nfds > 0) {
		struct cmsghdr *cm;

		memset(cbuf, 0, sizeof(cbuf));
		mh.msg_control = cbuf;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
		memcpy(CMSG_DATA(cm), fds, sizeof(int) * nfds);
	}
	k = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
	free(s);
	if (k < 0 || (size_t)k != n + 1)
		return k < 0 ? -errno : -EIO;
	*ret_id = c->next_id++;
	return 0;
}

/* Read one JSON line, waiting on @pfd[0] (the socket) and the other @pfd at most @timeout_ms. */
static int conn_read_line_poll(struct conn *c, int timeout_ms, struct pollfd *pfd, size_t npfd,
			       json_t **ret)
{
	for (;;) {
		char *nl = memchr(c->buf, '\n', c->len);
		ssize_t n;
		int k;

		if (nl) {
			size_t line = (size_t)(nl - c->buf);
			json_t *j = json_loadb(c->buf, line, 0, NULL);

			memmove(c->buf, nl + 1, c->len - line - 1);
			c->len -= line + 1;
			if (!j)
				return -EPROTO;
			*ret = j;
			return 1;
		}
		if (c->len == CTL_MESSAGE_MAX)
			return -EMSGSIZE;
		k = poll(pfd, npfd, timeout_ms);
		if (k < 0)
			return errno == EINTR ? 0 : -errno;
		if (k == 0 || !(pfd[0].revents & (POLLIN | POLLHUP | POLLERR)))
			return 0;
		n = read(c->fd, c->buf + c->len, CTL_MESSAGE_MAX - c->len);
		if (n < 0)
			return errno == EINTR ? 0 : -errno;
		if (n == 0)
			return -ECONNRESET;
		c->len += (size_t)n;
	}
}

/*
 * Read one JSON line, waiting at most @timeout_ms (-1: forever).  0 on timeout,
 * or when one of the @nwake fds in @wake (pidfds of the profiled processes) is
 * readable: the caller looks at them at once instead of at its next tick.
 */
static int conn_read_line_or(struct conn *c, int timeout_ms, const int *wake, size_t nwake,
			     json_t **ret)
{
	struct pollfd one, *pfd = &one;
	int r;

	if (nwake > 0) {
		pfd = calloc(nwake + 1, sizeof(*pfd));
		if (!pfd)
			return -ENOMEM;
	}
	pfd[0] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
	for (size_t i = 0; i < nwake; i++)
		pfd[1 + i] = (struct pollfd){ .fd = wake[i], .events = POLLIN };
	r = conn_read_line_poll(c, timeout_ms, pfd, nwake + 1, ret);
	if (pfd != &one)
		free(pfd);
	return r;
}

static int conn_read_line(struct conn *c, int timeout_ms, json_t **ret)
{
	return conn_read_line_or(c, timeout_ms, NULL, 0, ret);
}

/* A request with @nfds fds and its reply (events that arrive meanwhile are kept). */
static int conn_call_fds(struct conn *c, const char *cmd, json_t *args, const int *fds,
			 size_t nfds, json_t **ret_rep)
{
	json_int_t id = -1;
	int r = conn_send(c, cmd, args, fds, nfds, &id);

	if (r < 0) {
		log_error("sending '%s' to the daemon: %s", cmd, strerror(-r));
		return r;
	}
	for (;;) {
		json_t *j = NULL;

		r = conn_read_line(c, -1, &j);
		if (r < 0) {
			log_error("reading the daemon's reply: %s", strerror(-r));
			return r;
		}
		if (r == 0)
			continue;
		if (json_object_get(j, "event")) {
			json_decref(c->pending_event);
			c->pending_event = j;
			continue;
		}
		if (json_integer_value(json_object_get(j, "id")) != id) {
			json_decref(j);
			continue;
		}
		*ret_rep = j;
		return 0;
	}
}

/* A request without fds and its reply. */
static int conn_call(struct conn *c, const char *cmd, json_t *args, json_t **ret_rep)
{
	return conn_call_fds(c, cmd, args, NULL, 0, ret_rep);
}

/* Print the error of a failed reply; returns TOOLS_EXIT_FAIL. */
static int reply_failed(const json_t *rep, const char *what)
{
	json_t *e = json_object_get(rep, "error");

	log_error("%s: %s (%s)", what, json_string_value(json_object_get(e, "message")),
		  json_string_value(json_object_get(e, "errno")));
	return TOOLS_EXIT_FAIL;
}

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

static json_int_t jint(const json_t *o, const char *path1, const char *path2)
{
	const json_t *v = json_object_get(o, path1);

	if (path2)
		v = json_object_get(v, path2);
	return json_integer_value(v);
}

/* The kernel symbols line of a summary: which file, and what it holds. */
static void print_ks_summary(FILE *out, json_t *st, const char *ks_file)
{
	json_t *k = json_object_get(st, "kallsyms");
	const char *state = json_string_value(json_object_get(k, "state"));
	const char *note = json_string_value(json_object_get(k, "note"));

	if (!ks_file || !k || !state || strcmp(state, "none") == 0)
		return;
	if (strcmp(state, "compact") == 0)
		fprintf(out,
			"hwpmc: kernel symbols: %s: %" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
			" symbols (%.1f kB of %.2f MB) for %" JSON_INTEGER_FORMAT " kernel PCs\n",
			ks_file, jint(k, "symbols", NULL), jint(k, "full_symbols", NULL),
			(double)jint(k, "bytes", NULL) / 1e3,
			(double)jint(k, "full_bytes", NULL) / 1e6, jint(k, "pcs", NULL));
	else if (strcmp(state, "full") == 0)
		fprintf(out, "hwpmc: kernel symbols: %s: all %" JSON_INTEGER_FORMAT
			" symbols (%.2f MB)%s%s\n", ks_file, jint(k, "symbols", NULL),
			(double)jint(k, "bytes", NULL) / 1e6, note ? ": " : "", note ? note : "");
	else
		fprintf(out, "hwpmc: kernel symbols: %s: %s%s%s\n", ks_file, state,
			note ? ": " : "", note ? note : "");
}

/* The error of a failed session (state "error"), if any: 1 if printed. */
static int print_failure(FILE *out, json_t *st)
{
	json_t *e = json_object_get(st, "error");

	if (!e)
		return 0;
	fprintf(out, "hwpmc: the session failed: %s (%s)\n",
		json_string_value(json_object_get(e, "message")),
		json_string_value(json_object_get(e, "errno")));
	return 1;
}

/*
 * More than 1% of the samples lost (the rings overflowed before the daemon read
 * them): a warning with the share and what to do, for the numbers of such a
 * recording are not to be trusted as they are (-q, errors only, leaves it out).
 */
static void warn_loss(json_t *st)
{
	json_t *stats = json_object_get(st, "stats");
	json_int_t samples = jint(stats, "samples", NULL), lost = jint(stats, "lost", NULL);

	if (lost <= 0 || (double)lost <= TOOLS_LOSS_WARN * (double)(samples + lost))
		return;
	log_warn("%.1f%% of the samples were lost (%" JSON_INTEGER_FORMAT " of %" JSON_INTEGER_FORMAT
		 "): the kernel's rings filled faster than the daemon emptied them, and the "
		 "shares in this log lean towards what ran when they did not; " TOOLS_LOSS_ADVICE,
		 100.0 * (double)lost / (double)(samples + lost), lost, samples + lost);
}

static void print_summary(FILE *out, json_t *st, const char *file, const char *ks_file)
{
	json_t *stats = json_object_get(st, "stats"), *recs = json_object_get(st, "records");
	json_int_t samples = jint(stats, "samples", NULL), bytes = jint(stats, "bytes", NULL);
	const char *key;
	json_t *v;

	fprintf(out,
		"hwpmc: recorded %.2f s: %" JSON_INTEGER_FORMAT " samples, %" JSON_INTEGER_FORMAT
		" lost, %" JSON_INTEGER_FORMAT " throttled, %.2f MB (%.1f bytes/sample) to %s; "
		"daemon CPU %.3f s\n",
		json_real_value(json_object_get(st, "seconds")), samples, jint(stats, "lost", NULL),
		jint(stats, "throttled", NULL), (double)bytes / 1e6,
		samples ? (double)bytes / (double)samples : 0.0, file,
		json_real_value(json_object_get(stats, "cpu_seconds")));
	if (json_object_get(stats, "unwind")) {
		json_t *u = json_object_get(stats, "unwind");

		fprintf(out,
			"hwpmc: unwind: %" JSON_INTEGER_FORMAT " complete, %" JSON_INTEGER_FORMAT
			" truncated, %" JSON_INTEGER_FORMAT " no-info, %" JSON_INTEGER_FORMAT
			" no-map, %" JSON_INTEGER_FORMAT " replaced, %" JSON_INTEGER_FORMAT
			" error, %" JSON_INTEGER_FORMAT " no-regs, %" JSON_INTEGER_FORMAT
			" depth, %" JSON_INTEGER_FORMAT " no-stack, %" JSON_INTEGER_FORMAT
			" below-sp (%" JSON_INTEGER_FORMAT " fp steps, %" JSON_INTEGER_FORMAT
			" frameless leaves, %" JSON_INTEGER_FORMAT
			" epilogue registers, %" JSON_INTEGER_FORMAT " ELF images, %" JSON_INTEGER_FORMAT
			" tables built from .eh_frame)\n",
			jint(u, "complete", NULL), jint(u, "truncated", NULL), jint(u, "no-info", NULL),
			jint(u, "no-map", NULL), jint(u, "replaced", NULL), jint(u, "error", NULL),
			jint(u, "no-regs", NULL), jint(u, "depth", NULL), jint(u, "no-stack", NULL),
			jint(u, "below-sp", NULL), jint(u, "fp_steps", NULL), jint(u, "fp_frameless", NULL),
			jint(u, "epilogue_regs", NULL), jint(u, "elf_opened", NULL),
			jint(u, "own_tables", NULL));
		if (jint(u, "elf_too_big", NULL) > 0)
			fprintf(out,
				"hwpmc: note: %" JSON_INTEGER_FORMAT " files had an .eh_frame without "
				".eh_frame_hdr larger than the daemon's unwind cache (unwind_cache_mb): "
				"their frames are no-info\n",
				jint(u, "elf_too_big", NULL));
	}
	if (json_is_object(json_object_get(stats, "filter"))) {
		json_t *fo = json_object_get(stats, "filter");

		fprintf(out, "hwpmc: filter %s: the kernel kept %" JSON_INTEGER_FORMAT
			" samples and dropped %" JSON_INTEGER_FORMAT "\n",
			json_string_value(json_object_get(fo, "text")) ?: "(none)",
			jint(fo, "kept", NULL), jint(fo, "dropped", NULL));
	}
	if (jint(stats, "adopted", NULL) + jint(stats, "adopt_refused", NULL) +
		    jint(stats, "adopt_deferred", NULL) >
	    0)
		fprintf(out,
			"hwpmc: processes first met in a sample (their fork among lost records): %" JSON_INTEGER_FORMAT
			" scanned into the log, %" JSON_INTEGER_FORMAT
			" not (gone, pid reused, exec'd since, or not yours), %" JSON_INTEGER_FORMAT
			" samples past the %d scans a second\n",
			jint(stats, "adopted", NULL), jint(stats, "adopt_refused", NULL),
			jint(stats, "adopt_deferred", NULL), MAPLOG_ADOPT_PER_SECOND);
	if (json_object_size(recs)) {
		fprintf(out, "hwpmc: records:");
		json_object_foreach(recs, key, v)
			fprintf(out, " %s %" JSON_INTEGER_FORMAT, key, json_integer_value(v));
		fputc('\n', out);
	}
	print_failure(out, st);
	print_ks_summary(out, st, ks_file);
	if (json_object_get(st, "note"))
		fprintf(out, "hwpmc: note: %s\n", json_string_value(json_object_get(st, "note")));
}

/*
 * Whether a -p target still runs: a zombie (killed, not yet reaped by its parent)
 * samples nothing more, so it counts as gone.
 */
static bool pid_alive(pid_t pid)
{
	char path[64], buf[512], *rp;
	ssize_t n;
	int fd;

	if (kill(pid, 0) < 0 && errno != EPERM)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	/* "PID (COMM) S ...": the state follows the last ')' (COMM may hold one). */
	rp = strrchr(buf, ')');
	return !(rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X'));
}

/*
 * The processes `record` waits for, each with a pidfd that becomes readable when
 * it exits, so that the recording ends when the target does, not at the next
 * once-a-second tick.  A pid whose pidfd cannot be had (already gone: ESRCH)
 * counts as exited; one with a pidfd that fired is reaped from the set (a
 * readable pidfd stays readable) and counts as exited from then on.
 */
struct watch {
	pid_t *pids;   /* every process watched */
	bool *gone;    /* per pid: its pidfd fired, or it could not be had because it is gone */
	int *fds;      /* the pidfds still open (n of them), for poll */
	pid_t *fdpids; /* the pid of each fds[i] */
	size_t n, npids, cap;
};

/* Room for @n pids; 0 or -ENOMEM (then watch_alive() asks /proc about every pid). */
static int watch_init(struct watch *w, size_t n)
{
	w->pids = calloc(n, sizeof(*w->pids));
	w->gone = calloc(n, sizeof(*w->gone));
	w->fds = calloc(n, sizeof(*w->fds));
	w->fdpids = calloc(n, sizeof(*w->fdpids));
	w->cap = n;
	return w->pids && w->gone && w->fds && w->fdpids ? 0 : -ENOMEM;
}

static void watch_add(struct watch *w, pid_t pid)
{
	int fd;

	if (w->npids == w->cap || !w->pids || !w->gone || !w->fds || !w->fdpids)
		return;
	w->pids[w->npids] = pid;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	w->gone[w->npids++] = fd < 0 && errno == ESRCH;
	if (fd >= 0) {
		w->fds[w->n] = fd;
		w->fdpids[w->n++] = pid;
	}
}

/* Close the pidfds that fired (their processes exited) and mark those pids gone. */
static void watch_reap(struct watch *w)
{
	for (size_t i = 0; i < w->n;) {
		struct pollfd pfd = { .fd = w->fds[i], .events = POLLIN };

		if (poll(&pfd, 1, 0) != 1) {
			i++;
			continue;
		}
		for (size_t j = 0; j < w->npids; j++)
			if (w->pids[j] == w->fdpids[i])
				w->gone[j] = true;
		close(w->fds[i]);
		w->fds[i] = w->fds[w->n - 1];
		w->fdpids[i] = w->fdpids[w->n - 1];
		w->n--;
	}
}

/* Whether @pid still runs: its pidfd has not fired (or, without one, /proc says so). */
static bool watch_alive(const struct watch *w, pid_t pid)
{
	for (size_t j = 0; j < w->npids; j++) {
		if (w->pids[j] != pid)
			continue;
		if (w->gone[j])
			return false;
		for (size_t i = 0; i < w->n; i++)
			if (w->fdpids[i] == pid)
				return true;
	}
	return pid_alive(pid);
}

static void watch_exit(struct watch *w)
{
	for (size_t i = 0; i < w->n; i++)
		close(w->fds[i]);
	free(w->pids);
	free(w->gone);
	free(w->fds);
	free(w->fdpids);
	memset(w, 0, sizeof(*w));
}

/*
 * The kernel's vDSO image beside the log (LOG.vdso), so that the report can name
 * the functions of "[vdso]" mappings: ours is every 64-bit process's on this
 * kernel.  A machine without one (valgrind) writes nothing; a failure is a note.
 */
/* NAME.vdso in @d beside the log NAME (@out as the user named it): best effort. */
static void write_vdso_beside(const struct util_dir *d, const char *name, const char *out,
			      mode_t mode)
{
	char vname[UTIL_TEMP_NAME_MAX + 8], tmp[UTIL_TEMP_NAME_MAX];
	int fd, r;

	snprintf(vname, sizeof(vname), "%s.vdso", name);
	fd = util_file_create_temp(d, vname, mode, 0, tmp); /* -ENAMETOOLONG past NAME_MAX */
	if (fd < 0) {
		r = fd;
	} else {
		r = maplog_vdso_write(fd);
		if (close(fd) < 0 && r == 0)
			r = -errno;
		if (r == 0)
			r = util_file_commit(d, tmp, vname);
		if (r < 0)
			(void)util_file_remove(d, tmp);
	}
	if (r < 0 && r != -ENOENT)
		fprintf(stderr, "hwpmc: note: no vDSO image beside the log (%s.vdso: %s)\n", out,
			util_files_strerror(r));
}

void tools_record_usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmc record [-a | -C CPUS | -p PIDS] [-e EVENT]... [-F HZ | -c PERIOD]\n"
		"                    [-g | --call-graph none|fp|dwarf[,BYTES]] [--depth N]\n"
		"                    [--ring-pages N] [-d SECONDS] [-o FILE] [-q]\n"
		"                    [-G CGROUP] [--unit UNIT] [-u USER] [--filter-pid PIDS]\n"
		"                    [--comm NAME]\n"
		"                    [--no-kallsyms | --kallsyms-out FILE] [-- CMD ARGS...]\n"
		"\n"
		"Record samples through the hwpmcd daemon into a pmclog file.  Without a\n"
		"target it samples every CPU (-a); with -- CMD it starts CMD and samples it\n"
		"and everything it starts.  Stops on Ctrl-C, after -d SECONDS, or when CMD exits.\n"
		"Users outside the daemon's admin group (root and group hwpmc by default) may\n"
		"record only their own processes (-p PID, -- CMD, or all of them with -u USER,\n"
		"their own name: the daemon keeps only processes they could ptrace), in user\n"
		"mode only.\n"
		"\n"
		"  -e, --event EV      event(s), comma-separated or repeated (default cpu-clock):\n"
		"                      cpu-clock, task-clock, cycles, instructions, rHEX,\n"
		"                      pmu/term=val,.../ with :u or :k; 'hwpmc events' lists them\n"
		"  -F, --freq HZ       samples per second per CPU (default %d)\n"
		"  -c, --count N       sample every N events instead\n"
		"  -a, --all-cpus      every CPU (the default without -p or CMD)\n"
		"  -C, --cpu LIST      only these CPUs: 0,2-3\n"
		"  -p, --pid PIDS      these processes (and their new threads and children);\n"
		"                      recording stops when they have all exited\n"
		"  -g                  --call-graph dwarf\n"
		"      --call-graph M  none, fp (the kernel walks frame pointers: the default\n"
		"                      with -a or -C; they end early in code built without\n"
		"                      them, as most distributions' is) or dwarf[,BYTES] (user\n"
		"                      stack snapshot of BYTES, default %d, the kernel's\n"
		"                      largest: complete stacks; the default for -p and CMD)\n"
		"      --depth N       most frames per sample, 1..%d (default %d)\n"
		"      --ring-pages N  ring pages per CPU, a power of two\n"
		"Filters (in the kernel, before a sample is copied: BPF; repeat a filter for\n"
		"OR, combine different ones for AND):\n"
		"  -G, --cgroup PATH   tasks in this cgroup v2 group or below it\n"
		"                      (e.g. system.slice/nginx.service)\n"
		"      --unit UNIT     tasks of this systemd unit (its cgroup)\n"
		"  -u, --uid USER      tasks whose real uid is USER (a name or a number)\n"
		"      --filter-pid P  tasks of these processes (a list; unlike -p, no\n"
		"                      per-process counters: system-wide, with no inheritance)\n"
		"      --comm NAME     tasks whose command name is NAME (15 bytes at most)\n"
		"  -d, --duration S    stop after S seconds\n"
		"  -o, --output FILE   the log (default hwpmc.pmclog; '-' for standard output)\n"
		"      --no-kallsyms   no FILE.kallsyms (the kernel symbols the report needs,\n"
		"                      written beside the log by default)\n"
		"      --kallsyms-out F the kernel symbols into F instead of FILE.kallsyms (the\n"
		"                      only way to get them with -o -)\n"
		"                      (FILE.vdso, the kernel's vDSO image, is written beside\n"
		"                      the log too, for the report to name [vdso] frames)\n"
		"      --no-jit-maps   do not save the JIT symbol maps (/tmp/perf-PID.map of\n"
		"                      node --perf-basic-prof, the JVM's perf-map-agent, python\n"
		"                      -X perf) of the recorded processes into FILE.jit/, where\n"
		"                      hwpmc report finds them after the processes are gone\n"
		"  -q, --quiet         no progress line and no summary\n"
		"      --socket PATH   the daemon's socket (default $%s or %s)\n"
		"\n"
		"Examples:\n"
		"  hwpmc record -a -d 5 -o all.pmclog\n"
		"  hwpmc record -e cpu-clock -F 4000 -g -- ./my-program --its-args\n"
		"  hwpmc record -a -g --unit nginx.service -d 30 -o nginx.pmclog\n"
		"  hwpmc record -u $USER -g -d 10 -o mine.pmclog   (any user: all of their own)\n"
		"  hwpmc dump --summary all.pmclog\n",
		1000, 65528, 512, 128, CTL_SOCKET_ENV, CTL_SOCKET_DEFAULT);
}

static int parse_list(const char *s, long max, json_t *arr)
{
	char *dup = strdup(s), *tok, *save = NULL;
	int r = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *dash = strchr(tok, '-'), *end;
		long lo = strtol(tok, &end, 10), hi = lo;

		if (end == tok || (dash ? end != dash : *end)) {
			r = -EINVAL;
			break;
		}
		if (dash) {
			hi = strtol(dash + 1, &end, 10);
			if (*end || end == dash + 1) {
				r = -EINVAL;
				break;
			}
		}
		if (lo < 0 || hi < lo || hi > max || hi - lo > 65536) {
			r = -EINVAL;
			break;
		}
		for (long c = lo; c <= hi; c++)
			json_array_append_new(arr, json_integer(c));
	}
	free(dup);
	return r;
}

/* getopt codes of long options without a short one (record, start, filter). */
enum {
	OPT_CALL_GRAPH = 1000,
	OPT_UNIT,
	OPT_FILTER_PID,
	OPT_COMM,
	OPT_CLEAR,
	OPT_NO_JIT,
	OPT_MODE,
};

/*
 * JIT maps beside the log (FILE.jit/perf-PID.map): hwpmc record keeps the
 * perf-PID.map of each recorded process open while it runs (maplog-jit.h) and
 * copies it at its exit and at the end, so that the report names JIT code even
 * when the file is gone.  It runs as the user: it reads only what the user may.
 */
struct jit_save {
	struct maplog_jit *j;
	const struct util_dir *parent; /* the log's directory (borrowed) */
	struct util_dir dir;
	char *name, *dir_path; /* NAME.jit in parent, and as the user named it */
	struct timespec last;
};

static void jit_poll(struct jit_save *js);

/*
 * A new directory of ours replaces the log's NAME.jit (an older one of ours: its
 * maps are of another recording); one of another user's there stays as it is,
 * and then no map is saved.
 */
static void jit_begin(struct jit_save *js, const struct util_output *log, const char *out,
		      json_t *pids)
{
	struct maplog_jit_opts o = { 0 };
	char tmp[UTIL_TEMP_NAME_MAX];
	pid_t *targets = NULL;
	size_t k;
	json_t *pv;
	int r;

	if (asprintf(&js->name, "%s.jit", log->name) < 0 || asprintf(&js->dir_path, "%s.jit", out) < 0)
		return;
	snprintf(tmp, sizeof(tmp), ".%s.new", js->name);
	js->parent = &log->dir;
	(void)util_dir_remove(js->parent, tmp); /* a run killed before it renamed its own */
	r = util_dir__make(js->parent, tmp, 0, &js->dir);
	if (r == 0 && (r = util_dir_commit(js->parent, tmp, js->name)) < 0) {
		util_dir__close(&js->dir);
		(void)util_dir_remove(js->parent, tmp);
	}
	if (r < 0) {
		log_warn("record: %s: %s: JIT maps are not saved", js->dir_path,
			 r == -EPERM ? "another user's directory is there" : util_files_strerror(r));
		return;
	}
	if (pids && json_array_size(pids)) {
		targets = calloc(json_array_size(pids), sizeof(*targets));
		if (!targets)
			return;
		json_array_foreach(pids, k, pv)
			targets[k] = (pid_t)json_integer_value(pv);
		o.pids = targets;
		o.npids = json_array_size(pids);
	}
	r = maplog_jit__new(&js->dir, &o, &js->j);
	free(targets);
	if (r == 0)
		jit_poll(js);
}

/* At most twice a second: a walk of /proc. */
static void jit_poll(struct jit_save *js)
{
	struct timespec now;

	if (!js->j)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (js->last.tv_sec &&
	    (now.tv_sec - js->last.tv_sec) * 1000 + (now.tv_nsec - js->last.tv_nsec) / 1000000 < 500)
		return;
	js->last = now;
	(void)maplog_jit__poll(js->j);
}

static void jit_end(struct jit_save *js, bool quiet)
{
	struct maplog_jit_stats st = { 0 };

	if (js->j) {
		(void)maplog_jit__finish(js->j);
		maplog_jit__stats(js->j, &st);
		maplog_jit__free(js->j);
		js->j = NULL;
		if (st.saved && !quiet)
			fprintf(stderr, "hwpmc: JIT maps: %" PRIu64 " processes' perf-PID.map saved in "
				"%s/ (%.1f kB)\n", st.saved, js->dir_path, (double)st.bytes / 1e3);
		if (st.refused)
			log_warn("record: JIT maps: %" PRIu64 " not owned by their process's user or "
				 "root: not saved", st.refused);
		if (st.over_open || st.truncated)
			log_warn("record: JIT maps: %" PRIu64 " not kept (more than 256 open at once), "
				 "%" PRIu64 " cut at 256 MiB (or 1 GiB in all)", st.over_open, st.truncated);
		if (st.errors)
			log_warn("record: JIT maps: %" PRIu64 " could not be saved: %s", st.errors,
				 strerror(st.last_error));
	}
	if (js->dir.fd >= 0) {
		util_dir__close(&js->dir);
		if (st.saved == 0)
			(void)util_dir_remove(js->parent, js->name); /* no empty directory beside the log */
	}
	free(js->name);
	free(js->dir_path);
	js->name = js->dir_path = NULL;
}

/* Add @v (stolen) to the array @key of the filter object @f. */
static void filter_add(json_t *f, const char *key, json_t *v)
{
	json_t *a = json_object_get(f, key);

	if (!a) {
		a = json_array();
		json_object_set_new(f, key, a);
	}
	json_array_append_new(a, v);
}

/* A user name or a numeric uid: the uid, or -1. */
static json_int_t tools_uid(const char *s)
{
	struct passwd pw, *res = NULL;
	char buf[4096];
	uint64_t v;

	if (getpwnam_r(s, &pw, buf, sizeof(buf), &res) == 0 && res)
		return (json_int_t)res->pw_uid;
	if (util_parse_u64(s, &v) == 0 && v < UINT32_MAX)
		return (json_int_t)v;
	return -1;
}

/*
 * A filter option of record and filter (getopt codes 'G', 'u', OPT_UNIT,
 * OPT_FILTER_PID, OPT_COMM) added to @filter; -1 with an error naming @cmd.
 */
static int filter_option(int opt, const char *arg, json_t *filter, const char *cmd)
{
	json_int_t uid;
	json_t *l;

	switch (opt) {
	case 'u':
		uid = tools_uid(arg);
		if (uid < 0) {
			log_error("%s: -u '%s' is neither a user on this system nor a uid", cmd, arg);
			return -1;
		}
		filter_add(filter, "uid", json_integer(uid));
		return 0;
	case OPT_FILTER_PID:
		l = json_array();
		if (parse_list(arg, INT32_MAX, l) < 0 || json_array_size(l) == 0) {
			log_error("%s: --filter-pid '%s' is not a list of pids such as 1234,5678",
				  cmd, arg);
			json_decref(l);
			return -1;
		}
		for (size_t i = 0; i < json_array_size(l); i++)
			filter_add(filter, "pid", json_incref(json_array_get(l, i)));
		json_decref(l);
		return 0;
	default: /* 'G', OPT_UNIT, OPT_COMM */
		filter_add(filter, opt == 'G' ? "cgroup" : opt == OPT_UNIT ? "unit" : "comm",
			   json_string(arg));
		return 0;
	}
}

int tools_record_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "cpu", required_argument, NULL, 'C' },
		{ "pid", required_argument, NULL, 'p' },
		{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
		{ "cgroup", required_argument, NULL, 'G' },
		{ "unit", required_argument, NULL, OPT_UNIT },
		{ "uid", required_argument, NULL, 'u' },
		{ "filter-pid", required_argument, NULL, OPT_FILTER_PID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "depth", required_argument, NULL, 'D' },
		{ "ring-pages", required_argument, NULL, 'R' },
		{ "duration", required_argument, NULL, 'd' },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "socket", required_argument, NULL, 'S' },
		{ "no-kallsyms", no_argument, NULL, 'K' },
		{ "kallsyms-out", required_argument, NULL, 'O' },
		{ "no-jit-maps", no_argument, NULL, OPT_NO_JIT },
		{ "mode", required_argument, NULL, OPT_MODE },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct jit_save jit = { .dir = UTIL_DIR_NONE };
	bool no_jit = false;
	json_t *args = json_object(), *events = json_array(), *rep = NULL, *cpus = NULL, *pids = NULL;
	json_t *filter = json_object();
	const char *out = TOOLS_DEFAULT_LOG, *sock = NULL, *ks_out = NULL;
	char *ks_name = NULL, err[1024];
	const char *which = out; /* the output a commit failed for */
	bool no_ks = false;
	struct util_output log_o = { .fd = -1, .dir = UTIL_DIR_NONE };
	struct util_output ks_o = { .fd = -1, .dir = UTIL_DIR_NONE };
	mode_t mode = 0;
	double duration = 0;
	bool quiet = false;
	int opt, r, ret = TOOLS_EXIT_FAIL, hold[2] = { -1, -1 }, status = 0;
	pid_t child = -1;
	struct conn c = { .fd = -1 };
	json_int_t session = -1;
	uint64_t v;
	struct timespec t0, now;
	bool child_done = false, tty = isatty(STDERR_FILENO), targets_gone = false;
	bool failed = false; /* the session ended by itself in state "error" */
	struct sigaction sa = { .sa_handler = on_signal };
	struct watch watch = { 0 };

	bool detach = strcmp(argv[0], "start") == 0;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "+e:F:c:aC:p:gd:o:qhG:u:", opts, NULL)) != -1) {
		if (detach && (opt == 'd' || opt == 'o' || opt == 'q' || opt == 'O')) {
			log_error("start: %s%c does not apply to a detached session (it writes into the "
				  "daemon's state directory until 'hwpmc stop ID')",
				  opt == 'O' ? "--kallsyms-out" : "-", opt == 'O' ? ' ' : opt);
			goto usage;
		}
		switch (opt) {
		case 'e':
			json_array_append_new(events, json_string(optarg));
			break;
		case 'F':
		case 'c':
		case 'D':
		case 'R':
			if (util_parse_u64(optarg, &v) < 0 || v == 0 || v > INT64_MAX) {
				log_error("record: -%c '%s' must be a positive integer", opt == 'D' ? 'D' : opt, optarg);
				goto usage;
			}
			json_object_set_new(args, opt == 'F' ? "freq" : opt == 'c' ? "period"
						  : opt == 'D' ? "depth" : "ring_pages",
					    json_integer((json_int_t)v));
			break;
		case 'a':
			break;
		case 'C':
			cpus = cpus ? cpus : json_array();
			if (parse_list(optarg, 65535, cpus) < 0) {
				log_error("record: -C '%s' is not a CPU list such as 0,2-3", optarg);
				goto usage;
			}
			break;
		case 'p':
			pids = pids ? pids : json_array();
			if (parse_list(optarg, INT32_MAX, pids) < 0) {
				log_error("record: -p '%s' is not a list of pids such as 1234,5678", optarg);
				goto usage;
			}
			break;
		case 'g':
			json_object_set_new(args, "callgraph", json_string("dwarf"));
			break;
		case 'G':
		case 'u':
		case OPT_UNIT:
		case OPT_FILTER_PID:
		case OPT_COMM:
			if (filter_option(opt, optarg, filter, "record") < 0)
				goto usage;
			break;
		case OPT_CALL_GRAPH: {
			char *comma = strchr(optarg, ',');

			if (comma) {
				*comma = '\0';
				if (strcmp(optarg, "dwarf") != 0 || util_parse_u64(comma + 1, &v) < 0) {
					log_error("record: --call-graph takes none, fp or dwarf[,BYTES]");
					goto usage;
				}
				json_object_set_new(args, "stack_bytes", json_integer((json_int_t)v));
			}
			json_object_set_new(args, "callgraph", json_string(optarg));
			break;
		}
		case 'd': {
			char *end;

			duration = strtod(optarg, &end);
			if (*end || duration <= 0) {
				log_error("record: -d '%s' must be a positive number of seconds", optarg);
				goto usage;
			}
			break;
		}
		case 'o':
			out = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'S':
			sock = optarg;
			break;
		case 'K':
			no_ks = true;
			break;
		case OPT_NO_JIT:
			no_jit = true;
			break;
		case OPT_MODE:
			if (util_parse_mode(optarg, &mode) < 0) {
				log_error("record: --mode '%s' must be an octal mode such as 0640 (the "
					  "owner's read and write bits set)", optarg);
				goto usage;
			}
			break;
		case 'O':
			ks_out = optarg;
			break;
		case 'h':
			if (detach)
				tools_start_usage(stdout);
			else
				tools_record_usage(stdout);
			ret = TOOLS_EXIT_OK;
			goto done;
		default:
			goto usage;
		}
	}
	if (no_ks && ks_out) {
		log_error("record: give --no-kallsyms or --kallsyms-out, not both");
		goto usage;
	}
	if (json_object_size(filter))
		json_object_set(args, "filter", filter);
	if (detach) {
		if (optind < argc) {
			log_error("start: a detached session cannot run a command; use 'hwpmc record "
				  "-- CMD'");
			goto usage;
		}
		if (pids)
			json_object_set(args, "pids", pids);
		if (json_array_size(events))
			json_object_set(args, "events", events);
		if (cpus)
			json_object_set(args, "cpus", cpus);
		json_object_set_new(args, "output", json_string("state"));
		if (no_ks)
			json_object_set_new(args, "kallsyms", json_string("none"));
		if (no_jit)
			json_object_set_new(args, "jit_maps", json_false());
		if (conn_open(&c, socket_path(sock)) < 0 ||
		    conn_call(&c, "start", json_incref(args), &rep) < 0)
			goto done;
		if (!json_is_true(json_object_get(rep, "ok"))) {
			ret = reply_failed(rep, "start");
			goto done;
		}
		printf("session %" JSON_INTEGER_FORMAT ": recording into %s\n"
		       "stop it with 'hwpmc stop %" JSON_INTEGER_FORMAT "'\n",
		       json_integer_value(json_object_get(rep, "session")),
		       json_string_value(json_object_get(rep, "path")),
		       json_integer_value(json_object_get(rep, "session")));
		if (json_is_true(json_object_get(rep, "kallsyms")))
			printf("kernel symbols into %s\n",
			       json_string_value(json_object_get(rep, "kallsyms_path")));
		else if (json_object_get(rep, "kallsyms"))
			fprintf(stderr, "hwpmc: note: no kernel symbols: %s\n",
				json_string_value(json_object_get(rep, "kallsyms_reason")));
		ret = TOOLS_EXIT_OK;
		goto done;
	}
	if (optind < argc && pids) {
		log_error("record: give -p PIDS or -- CMD, not both");
		goto usage;
	}
	/*
	 * A program's profile unwinds its stacks by default (bench/callgraph-default-bench.sh:
	 * Debian's binaries have no frame pointers, and fp chains reached their start in 0%
	 * of xz's samples and 5% of python3's, dwarf in 100% and 96%, at the same cost
	 * to the program within noise and 144 against 43 bytes a sample).  A whole
	 * machine keeps frame pointers: snapshots of every CPU's stacks at -F rates.
	 */
	if (!json_object_get(args, "callgraph") && (optind < argc || pids))
		json_object_set_new(args, "callgraph", json_string("dwarf"));
	if (json_array_size(events))
		json_object_set(args, "events", events);
	if (cpus)
		json_object_set(args, "cpus", cpus);
	json_object_set_new(args, "output", json_string("fd"));

	/* Reach the daemon first: a failed start should not leave an empty log behind. */
	if (conn_open(&c, socket_path(sock)) < 0)
		goto done;
	if (strcmp(out, "-") == 0) {
		if (isatty(STDOUT_FILENO)) {
			log_error("record: refusing to write a binary log to a terminal; use -o FILE");
			goto done;
		}
		log_o.fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		if (log_o.fd < 0) {
			log_error("record: standard output: %s", strerror(errno));
			goto done;
		}
	} else if (util_output_open(out, mode, &log_o, err, sizeof(err)) < 0) {
		/* A new file under a temporary name: the old log stays until the daemon accepts. */
		log_error("record: %s", err);
		goto done;
	}
	if (!no_ks && (ks_out || log_o.tmp[0])) {
		/* The kernel symbols beside a log file of its own (docs/protocol.md), made like it. */
		if (ks_out)
			ks_name = strdup(ks_out);
		else if (asprintf(&ks_name, "%s.kallsyms", out) < 0)
			ks_name = NULL;
		if (!ks_name) {
			log_error("record: out of memory");
			goto done;
		}
		if (util_output_open(ks_name, mode, &ks_o, err, sizeof(err)) < 0) {
			log_error("record: %s", err);
			goto done;
		}
		json_object_set_new(args, "kallsyms", json_string("fd"));
	}

	if (optind < argc) {
		/* The command waits on a pipe until the counters are armed on it. */
		if (pipe2(hold, O_CLOEXEC) < 0) {
			log_error("record: pipe: %s", strerror(errno));
			goto done;
		}
		child = fork();
		if (child < 0) {
			log_error("record: fork: %s", strerror(errno));
			goto done;
		}
		if (child == 0) {
			char b;

			close(hold[1]);
			if (read(hold[0], &b, 1) != 1)
				_exit(127);
			execvp(argv[optind], argv + optind);
			fprintf(stderr, "hwpmc: %s: %s\n", argv[optind], strerror(errno));
			_exit(127);
		}
		close(hold[0]);
		hold[0] = -1;
		pids = pids ? pids : json_array();
		json_array_append_new(pids, json_integer(child));
		json_object_set_new(args, "command", json_true());
	}
	if (pids)
		json_object_set(args, "pids", pids);

	{
		int fds[2] = { log_o.fd, ks_o.fd };

		if (conn_call_fds(&c, "start", json_incref(args), fds, ks_o.fd >= 0 ? 2 : 1, &rep) < 0)
			goto done;
	}
	if (!json_is_true(json_object_get(rep, "ok"))) {
		/* Nothing was recorded: the old log (if any) stays as it was, no new file. */
		ret = reply_failed(rep, "record");
		goto done;
	}
	session = json_integer_value(json_object_get(rep, "session"));
	r = util_output__commit(&log_o);
	if (r == 0 && (r = util_output__commit(&ks_o)) < 0)
		which = ks_name;
	if (r < 0) {
		/* Another file was put in the way since it was looked at: no log to show. */
		json_t *srep = NULL;

		log_error("record: %s: %s; stopping", which, util_files_strerror(r));
		if (conn_call(&c, "stop", json_pack("{s:I}", "session", session), &srep) == 0)
			json_decref(srep);
		session = -1;
		goto done;
	}
	close(log_o.fd);
	log_o.fd = -1;
	if (ks_name && !json_is_true(json_object_get(rep, "kallsyms"))) {
		/* The session cannot use kernel symbols (the reply says why): no (old) file left. */
		const char *why = json_string_value(json_object_get(rep, "kallsyms_reason"));

		if (ks_o.dir.fd >= 0)
			(void)util_file_remove(&ks_o.dir, ks_o.name);
		fprintf(stderr, "hwpmc: note: no kernel symbols (%s removed): %s\n", ks_name,
			why ? why : "the daemon did not take the file");
		free(ks_name);
		ks_name = NULL;
	}
	util_output__close(&ks_o);
	if (log_o.dir.fd >= 0)
		write_vdso_beside(&log_o.dir, log_o.name, out, mode);
	if (log_o.dir.fd >= 0 && !no_jit)
		jit_begin(&jit, &log_o, out, pids);
	json_decref(rep);
	rep = NULL;
	if (child > 0) {
		if (write(hold[1], "g", 1) != 1)
			log_error("record: cannot release the command: %s", strerror(errno));
		close(hold[1]);
		hold[1] = -1;
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (pids && watch_init(&watch, json_array_size(pids)) == 0) {
		size_t k;
		json_t *pv;

		/* With a command, pids holds just the child. */
		json_array_foreach(pids, k, pv)
			watch_add(&watch, (pid_t)json_integer_value(pv));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		json_t *ev = c.pending_event;
		double el;

		int wait_ms = 1000;

		c.pending_event = NULL;
		if (duration > 0) {
			/* Wake up at the end of -d, not at the next whole second. */
			clock_gettime(CLOCK_MONOTONIC, &now);
			el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
			if ((duration - el) * 1000 < wait_ms)
				wait_ms = (duration - el) > 0 ? (int)((duration - el) * 1000) + 1 : 0;
		}
		if (!ev && conn_read_line_or(&c, wait_ms, watch.fds, watch.n, &ev) < 0) {
			log_error("record: lost the connection to the daemon (it stopped or crashed); "
				  "the log ends with what it wrote: check it with 'hwpmc dump'");
			goto done;
		}
		if (ev && json_object_get(ev, "event")) {
			/* The session ended by itself (an output error, say). */
			json_t *st = json_object_get(ev, "status");

			if (tty && !quiet)
				fputc('\n', stderr);
			if (!quiet)
				print_summary(stderr, st, out, ks_name);
			else
				(void)print_failure(stderr, st);
			warn_loss(st);
			failed = json_object_get(st, "error") != NULL;
			json_decref(ev);
			break;
		}
		json_decref(ev);
		jit_poll(&jit);
		/* A target's pidfd said it exited: look now, not at the next tick. */
		watch_reap(&watch);
		if (child > 0 && !child_done && waitpid(child, &status, WNOHANG) == child)
			child_done = true;
		if (child < 0 && pids && !targets_gone) {
			/* -p: like perf record -p, stop once every target process has exited. */
			size_t k, alive = 0;
			json_t *pv;

			json_array_foreach(pids, k, pv)
				alive += watch_alive(&watch, (pid_t)json_integer_value(pv));
			targets_gone = alive == 0;
		}
		clock_gettime(CLOCK_MONOTONIC, &now);
		el = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
		if (got_signal || child_done || targets_gone || (duration > 0 && el >= duration)) {
			if (child > 0 && !child_done && got_signal)
				(void)kill(child, SIGTERM);
			if (conn_call(&c, "stop", json_pack("{s:I}", "session", session), &rep) < 0)
				goto done;
			if (tty && !quiet)
				fputc('\n', stderr);
			if (!json_is_true(json_object_get(rep, "ok"))) {
				ret = reply_failed(rep, "record: stop");
				goto done;
			}
			if (!quiet)
				print_summary(stderr, json_object_get(rep, "status"), out, ks_name);
			else
				(void)print_failure(stderr, json_object_get(rep, "status"));
			warn_loss(json_object_get(rep, "status"));
			break;
		}
		if (tty && !quiet) {
			json_t *st = NULL;

			if (conn_call(&c, "status", json_pack("{s:I}", "session", session), &st) == 0) {
				json_t *s0 = json_array_get(json_object_get(st, "sessions"), 0);
				json_t *stats = json_object_get(s0, "stats");

				fprintf(stderr, "\rrecording: %.1f s, %" JSON_INTEGER_FORMAT
					" samples, %" JSON_INTEGER_FORMAT " lost, %.2f MB   ",
					el, jint(stats, "samples", NULL), jint(stats, "lost", NULL),
					(double)jint(stats, "bytes", NULL) / 1e6);
			}
			json_decref(st);
		}
	}
	ret = TOOLS_EXIT_OK;
	if (failed || (rep && json_object_get(json_object_get(rep, "status"), "error")))
		ret = TOOLS_EXIT_FAIL;
	if (child > 0) {
		if (!child_done && waitpid(child, &status, 0) == child)
			child_done = true;
		if (child_done && ret == TOOLS_EXIT_OK)
			ret = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	goto done;
usage:
	fprintf(stderr, "Try 'hwpmc record --help'.\n");
	ret = TOOLS_EXIT_USAGE;
done:
	jit_end(&jit, quiet);
	if (child > 0 && !child_done && session < 0) {
		(void)kill(child, SIGKILL);
		(void)waitpid(child, NULL, 0);
	}
	if (hold[0] >= 0)
		close(hold[0]);
	if (hold[1] >= 0)
		close(hold[1]);
	util_output__abandon(&ks_o);
	util_output__abandon(&log_o);
	free(ks_name);
	conn_close(&c);
	json_decref(rep);
	json_decref(args);
	json_decref(events);
	json_decref(filter);
	json_decref(cpus);
	json_decref(pids);
	watch_exit(&watch);
	return ret;
}

void tools_start_usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmc start [-a | -C CPUS | -p PIDS] [-e EVENT]... [-F HZ | -c PERIOD]\n"
		"                   [-g | --call-graph MODE] [--depth N] [--ring-pages N]\n"
		"\n"
		"Start a detached (continuous) session: the daemon writes it into a new file in\n"
		"its state directory (/var/lib/hwpmcd by default) and keeps it running after\n"
		"this command returns, until 'hwpmc stop ID'.  Root and the daemon's admin\n"
		"group (hwpmcd.conf admin_group, default hwpmc) only.  The options are those\n"
		"of 'hwpmc record' (see 'hwpmc record --help'); -o, -d, -q, --kallsyms-out and\n"
		"-- CMD do not apply.  The kernel symbols go beside the log (LOG.kallsyms)\n"
		"unless --no-kallsyms.\n");
}

void tools_status_usage(FILE *out)
{
	fprintf(out, "usage: hwpmc status [ID] [--json] [--socket PATH]\n"
		     "       hwpmc sessions [--json] [--socket PATH]\n"
		     "\n"
		     "Show the daemon's sessions (yours, or all for root): state, samples, lost,\n"
		     "throttled, bytes written and, for ended sessions, records by type and per-CPU\n"
		     "counts.  --json prints the daemon's reply as it is.\n");
}

int tools_status_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL;
	bool json = false;
	json_t *args = json_object(), *rep = NULL, *s;
	struct conn c = { .fd = -1 };
	int opt, ret = TOOLS_EXIT_FAIL;
	size_t i;
	uint64_t id;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = true; break;
		case 'S': sock = optarg; break;
		case 'h': tools_status_usage(stdout); json_decref(args); return TOOLS_EXIT_OK;
		default: json_decref(args); tools_status_usage(stderr); return TOOLS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		if (strcmp(argv[0], "status") != 0 || optind + 1 != argc ||
		    util_parse_u64(argv[optind], &id) < 0) {
			json_decref(args);
			tools_status_usage(stderr);
			return TOOLS_EXIT_USAGE;
		}
		json_object_set_new(args, "session", json_integer((json_int_t)id));
	}
	if (conn_open(&c, socket_path(sock)) < 0) {
		json_decref(args);
		return TOOLS_EXIT_FAIL;
	}
	if (conn_call(&c, "status", args, &rep) < 0)
		goto out;
	if (!json_is_true(json_object_get(rep, "ok"))) {
		ret = reply_failed(rep, "status");
		goto out;
	}
	if (json) {
		char *t = json_dumps(rep, JSON_INDENT(2));

		puts(t ? t : "{}");
		free(t);
	} else {
		printf("%-8s %-6s %-9s %9s %12s %8s %10s %12s\n", "SESSION", "UID", "STATE",
		       "SECONDS", "SAMPLES", "LOST", "THROTTLED", "BYTES");
		json_array_foreach(json_object_get(rep, "sessions"), i, s) {
			json_t *st = json_object_get(s, "stats");

			printf("%-8" JSON_INTEGER_FORMAT " %-6" JSON_INTEGER_FORMAT " %-9s %9.1f %12"
			       JSON_INTEGER_FORMAT " %8" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT
			       " %12" JSON_INTEGER_FORMAT "\n",
			       jint(s, "session", NULL), jint(s, "uid", NULL),
			       json_string_value(json_object_get(s, "state")),
			       json_real_value(json_object_get(s, "seconds")), jint(st, "samples", NULL),
			       jint(st, "lost", NULL), jint(st, "throttled", NULL),
			       jint(st, "bytes", NULL));
			if (json_object_get(s, "error"))
				printf("         error: %s\n",
				       json_string_value(json_object_get(json_object_get(s, "error"),
									 "message")));
		}
	}
	ret = TOOLS_EXIT_OK;
out:
	json_decref(rep);
	conn_close(&c);
	return ret;
}

void tools_profiles_usage(FILE *out)
{
	fprintf(out, "usage: hwpmc profiles [reload] [--json] [--socket PATH]\n"
		     "\n"
		     "List the daemon's always-on profiles (root and the admin group): each one's\n"
		     "state (running, paused on a full disk, waiting, stopped, disabled, error),\n"
		     "the file being written, the bytes and files on disk, samples, loss, the\n"
		     "effective sampling rate and the CPU its session used.  'reload' first\n"
		     "reads the profiles directory again (as SIGHUP does): new and changed\n"
		     "profiles start, removed and disabled ones stop, unchanged ones run on; a\n"
		     "refused file is reported with its line and exits 1.  A profile is a file\n"
		     "/etc/hwpmcd/profiles.d/NAME.conf (hwpmcd.conf(5), PROFILES).  Read what\n"
		     "one wrote with 'hwpmc report --since -15min STATE_DIR/profiles/NAME/'.\n");
}

/* Bytes as a short human figure: 123, 4.5K, 67.1M, 1.2G. */
static const char *human_bytes(uint64_t b, char *buf, size_t size)
{
	static const char units[] = "KMGT";
	double v = (double)b;
	int u = -1;

	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%" PRIu64, b);
	else
		snprintf(buf, size, "%.1f%c", v, units[u]);
	return buf;
}

int tools_profiles_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock = NULL;
	bool json = false, reload = false;
	json_t *rep = NULL, *pr, *problems;
	struct conn c = { .fd = -1 };
	int opt, ret = TOOLS_EXIT_FAIL;
	size_t i;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = true; break;
		case 'S': sock = optarg; break;
		case 'h': tools_profiles_usage(stdout); return TOOLS_EXIT_OK;
		default: tools_profiles_usage(stderr); return TOOLS_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		if (optind + 1 != argc || strcmp(argv[optind], "reload") != 0) {
			log_error("profiles: unknown argument '%s' (only 'reload')", argv[optind]);
			tools_profiles_usage(stderr);
			return TOOLS_EXIT_USAGE;
		}
		reload = true;
	}
	if (conn_open(&c, socket_path(sock)) < 0)
		return TOOLS_EXIT_FAIL;
	if (conn_call(&c, "profiles", reload ? json_pack("{s:b}", "reload", 1) : json_object(),
		      &rep) < 0)
		goto out;
	if (!json_is_true(json_object_get(rep, "ok"))) {
		ret = reply_failed(rep, "profiles");
		goto out;
	}
	problems = json_object_get(rep, "problems");
	if (json) {
		char *t = json_dumps(rep, JSON_INDENT(2));

		puts(t ? t : "{}");
		free(t);
	} else {
		printf("%s: %zu profiles\n", json_string_value(json_object_get(rep, "dir")),
		       json_array_size(json_object_get(rep, "profiles")));
		printf("%-16s %-9s %8s %6s %10s %8s %9s %6s  %s\n", "PROFILE", "STATE", "DISK",
		       "FILES", "SAMPLES", "LOST", "RATE/s", "CPU%", "FILE");
		json_array_foreach(json_object_get(rep, "profiles"), i, pr) {
			json_t *st = json_object_get(pr, "status");
			json_t *stats = json_object_get(st, "stats"), *pf = json_object_get(st, "profile");
			double secs = json_real_value(json_object_get(st, "seconds"));
			double cpu = json_real_value(json_object_get(stats, "cpu_seconds"));
			const char *file = json_string_value(json_object_get(pf, "file"));
			const char *note = json_string_value(json_object_get(pr, "note"));
			const char *pnote = json_string_value(json_object_get(pf, "note"));
			char b[32];

			printf("%-16s %-9s %8s %6" JSON_INTEGER_FORMAT " %10" JSON_INTEGER_FORMAT
			       " %8" JSON_INTEGER_FORMAT " %9.1f %6.2f  %s\n",
			       json_string_value(json_object_get(pr, "name")),
			       json_string_value(json_object_get(pr, "state")),
			       human_bytes((uint64_t)jint(pf, "disk_bytes", NULL), b, sizeof(b)),
			       jint(pf, "disk_files", NULL), jint(stats, "samples", NULL),
			       jint(stats, "lost", NULL),
			       secs > 0 ? (double)jint(stats, "samples", NULL) / secs : 0.0,
			       secs > 0 && ncpu > 0 ? 100.0 * cpu / secs / (double)ncpu : 0.0,
			       file && *file ? file : "-");
			if (pnote)
				printf("%-16s   %s\n", "", pnote);
			if (json_object_get(pf, "budget")) {
				json_t *bu = json_object_get(pf, "budget");

				printf("%-16s   budget %" JSON_INTEGER_FORMAT "%%: %" JSON_INTEGER_FORMAT
				       " Hz of %" JSON_INTEGER_FORMAT " (a sample costs %.1f us; the "
				       "last window used %.2f%%, JIT maps and pushes %.2f%% of it), %"
				       JSON_INTEGER_FORMAT " changes\n", "",
				       jint(bu, "percent", NULL), jint(bu, "rate_hz", NULL),
				       jint(bu, "max_hz", NULL),
				       (double)jint(bu, "sample_cost_ns", NULL) / 1000.0,
				       json_real_value(json_object_get(bu, "used_percent")),
				       json_real_value(json_object_get(bu, "side_percent")),
				       jint(bu, "rate_changes", NULL));
			}
			if (json_object_get(pf, "push")) {
				json_t *pu = json_object_get(pf, "push");
				const char *le = json_string_value(json_object_get(pu, "last_error"));

				printf("%-16s   push %s (%s): %" JSON_INTEGER_FORMAT " sent (%s), %"
				       JSON_INTEGER_FORMAT " queued, %" JSON_INTEGER_FORMAT " retries, %"
				       JSON_INTEGER_FORMAT " failed, %" JSON_INTEGER_FORMAT " dropped; "
				       "%.2f s of CPU\n",
				       "", json_string_value(json_object_get(pu, "url")),
				       json_string_value(json_object_get(pu, "format")),
				       jint(pu, "sent", NULL),
				       human_bytes((uint64_t)jint(pu, "bytes", NULL), b, sizeof(b)),
				       jint(pu, "queued", NULL), jint(pu, "retries", NULL),
				       jint(pu, "failed", NULL), jint(pu, "dropped", NULL),
				       json_real_value(json_object_get(pu, "cpu_seconds")));
				if (le)
					printf("%-16s   push: last error: %s\n", "", le);
			}
			if (note)
				printf("%-16s   %s\n", "", note);
		}
	}
	if (problems) {
		fprintf(stderr, "refused profile files:\n%s\n", json_string_value(problems));
		if (reload)
			goto out; /* exit 1: what was asked for is not all in effect */
	}
	ret = TOOLS_EXIT_OK;
out:
	json_decref(rep);
	conn_close(&c);
	return ret;
}

void tools_stop_usage(FILE *out)
{
	fprintf(out, "usage: hwpmc stop ID [--socket PATH]\n"
		     "\n"
		     "Stop session ID: its log is flushed and closed with CLOSELOG.\n");
}

int tools_stop_main(int argc, char **argv)
{
	const char *sock = NULL;
	struct conn c = { .fd = -1 };
	json_t *rep = NULL;
	uint64_t id;
	int ret = TOOLS_EXIT_FAIL, i = 1;

	if (argc >= 2 && strcmp(argv[1], "--help") == 0) {
		tools_stop_usage(stdout);
		return TOOLS_EXIT_OK;
	}
	if (argc >= 3 && strcmp(argv[1], "--socket") == 0) {
		sock = argv[2];
		i = 3;
	}
	if (argc - i != 1 || util_parse_u64(argv[i], &id) < 0) {
		tools_stop_usage(stderr);
		return TOOLS_EXIT_USAGE;
	}
	if (conn_open(&c, socket_path(sock)) < 0)
		return TOOLS_EXIT_FAIL;
	if (conn_call(&c, "stop", json_pack("{s:I}", "session", (json_int_t)id), &rep) == 0) {
		if (json_is_true(json_object_get(rep, "ok"))) {
			json_t *st = json_object_get(rep, "status");
			const char *where = json_string_value(json_object_get(st, "path"));

			print_summary(stdout, st, where ? where : "its client's output",
				      json_string_value(json_object_get(st, "kallsyms_path")));
			ret = TOOLS_EXIT_OK;
		} else {
			ret = reply_failed(rep, "stop");
		}
	}
	json_decref(rep);
	conn_close(&c);
	return ret;
}

void tools_filter_usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmc filter ID [-G CGROUP] [--unit UNIT] [-u USER] [--filter-pid PIDS]\n"
		"                       [--comm NAME] [--clear] [--socket PATH]\n"
		"\n"
		"Replace the in-kernel sample filter of running session ID (yours, or any for\n"
		"root) without stopping it: the kernel applies the new filter to every sample\n"
		"from now on, all at once, and the log records when it changed.  The filter\n"
		"options are those of 'hwpmc record' (repeat one for OR, combine different ones\n"
		"for AND); --clear keeps every sample.  The session must have been started\n"
		"with a filter.\n"
		"\n"
		"Example:\n"
		"  hwpmc start -a -g --unit web.service && hwpmc filter 1 --unit db.service\n");
}

int tools_filter_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'G' },
		{ "unit", required_argument, NULL, OPT_UNIT },
		{ "uid", required_argument, NULL, 'u' },
		{ "filter-pid", required_argument, NULL, OPT_FILTER_PID },
		{ "comm", required_argument, NULL, OPT_COMM },
		{ "clear", no_argument, NULL, OPT_CLEAR },
		{ "socket", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	json_t *filter = json_object(), *rep = NULL;
	const char *sock = NULL;
	struct conn c = { .fd = -1 };
	bool clear = false;
	uint64_t id;
	int opt, ret = TOOLS_EXIT_USAGE;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "G:u:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'G':
		case 'u':
		case OPT_UNIT:
		case OPT_FILTER_PID:
		case OPT_COMM:
			if (filter_option(opt, optarg, filter, "filter") < 0)
				goto usage;
			break;
		case OPT_CLEAR:
			clear = true;
			break;
		case 'S':
			sock = optarg;
			break;
		case 'h':
			tools_filter_usage(stdout);
			ret = TOOLS_EXIT_OK;
			goto done;
		default:
			goto usage;
		}
	}
	if (optind + 1 != argc || util_parse_u64(argv[optind], &id) < 0 || id > INT32_MAX) {
		log_error("filter: give one session ID (hwpmc sessions lists them)");
		goto usage;
	}
	if (clear == (json_object_size(filter) > 0)) {
		log_error("filter: give filter options, or --clear to keep every sample");
		goto usage;
	}
	ret = TOOLS_EXIT_FAIL;
	if (conn_open(&c, socket_path(sock)) < 0)
		goto done;
	if (conn_call(&c, CTL_CMD_FILTER,
		      json_pack("{s:I,s:O}", "session", (json_int_t)id, "filter", filter), &rep) < 0)
		goto done;
	if (!json_is_true(json_object_get(rep, "ok"))) {
		ret = reply_failed(rep, "filter");
		goto done;
	}
	{
		const char *t = json_string_value(json_object_get(rep, "filter"));

		printf("session %" PRIu64 ": filter now %s\n", id,
		       t && t[0] ? t : "(none: every sample kept)");
	}
	ret = TOOLS_EXIT_OK;
	goto done;
usage:
	tools_filter_usage(stderr);
done:
	json_decref(rep);
	json_decref(filter);
	conn_close(&c);
	return ret;
}

void tools_events_usage(FILE *out)
{
	fprintf(out, "usage: hwpmc events [--json] [--socket PATH]\n"
		     "\n"
		     "List what -e accepts on the daemon's machine: the generic hardware and\n"
		     "software events, and every PMU with its format terms and event aliases.\n");
}

int tools_events_main(int argc, char **argv)
{
	const char *sock = NULL;
	struct conn c = { .fd = -1 };
	json_t *rep = NULL, *p, *v;
	bool json = false;
	int ret = TOOLS_EXIT_FAIL;
	size_t i;
	const char *k;

	for (int a = 1; a < argc; a++) {
		if (strcmp(argv[a], "--json") == 0)
			json = true;
		else if (strcmp(argv[a], "--socket") == 0 && a + 1 < argc)
			sock = argv[++a];
		else if (strcmp(argv[a], "--help") == 0) {
			tools_events_usage(stdout);
			return TOOLS_EXIT_OK;
		} else {
			tools_events_usage(stderr);
			return TOOLS_EXIT_USAGE;
		}
	}
	if (conn_open(&c, socket_path(sock)) < 0)
		return TOOLS_EXIT_FAIL;
	if (conn_call(&c, "events", NULL, &rep) < 0)
		goto out;
	if (!json_is_true(json_object_get(rep, "ok"))) {
		ret = reply_failed(rep, "events");
		goto out;
	}
	if (json) {
		char *t = json_dumps(rep, JSON_INDENT(2));

		puts(t ? t : "{}");
		free(t);
		ret = TOOLS_EXIT_OK;
		goto out;
	}
	printf("Generic events (perf's names):\n ");
	json_array_foreach(json_object_get(rep, "generic"), i, v)
		printf(" %s", json_string_value(v));
	printf("\n  rHEX            a raw event code, e.g. r01c2\n");
	printf("\nPMUs (use as pmu/term=value,.../ or pmu/alias/):\n");
	json_array_foreach(json_object_get(rep, "pmus"), i, p) {
		printf("  %s (type %" JSON_INTEGER_FORMAT ")\n", json_string_value(json_object_get(p, "name")),
		       jint(p, "type", NULL));
		json_object_foreach(json_object_get(p, "formats"), k, v)
			printf("    term  %-20s %s\n", k, json_string_value(v));
		json_object_foreach(json_object_get(p, "aliases"), k, v)
			printf("    alias %-20s %s\n", k, json_string_value(v));
	}
	printf("\nMax sample rate: %" JSON_INTEGER_FORMAT " Hz (kernel.perf_event_max_sample_rate)\n",
	       jint(rep, "max_sample_rate", NULL));
	ret = TOOLS_EXIT_OK;
out:
	json_decref(rep);
	conn_close(&c);
	return ret;
}
