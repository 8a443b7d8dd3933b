/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-main.c: hwpmcd: main loop, control socket, clients, configuration.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   main()
 *   daemon_cfg, daemon_epfd, daemon_sessions, daemon_nsessions,
 *   daemon_next_session_id, daemon_shutting_down    main's state, shared by its files
 *   daemon_mono_ns()                                the loop's clock
 *   daemon_client_rearm()                           read the clients paused for closes again
 *
 * IMPLEMENTATION NOTES
 *   One epoll loop in the main thread serves the listening socket, every client,
 *   the signalfd (SIGTERM/SIGINT end the daemon; every session is closed with
 *   CLOSELOG first) and each session's done eventfd (a session that ended by
 *   itself, e.g. on ENOSPC, is reported to its client with an event line).
 *   Requests are NDJSON lines of at most CTL_MESSAGE_MAX bytes; a longer line
 *   gets an error reply and is skipped to its newline, the connection lives on.
 *   Output fds arrive with SCM_RIGHTS and wait in the client's fd queue until the
 *   `start` request that consumes them (fds no request took are closed:
 *   daemon-clientfd.c); the daemon never opens a client-named path.  Every
 *   client is judged once, at accept, from SO_PEERCRED + SO_PEERGROUPS (admin or
 *   not, daemon-auth.c); its requests are daemon-cmd.c's.  The loop wakes at
 *   least every second (or at half the watchdog interval) to send WATCHDOG=1 and
 *   to drop idle clients.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "daemon-ctl.h"
#include "daemon-int.h"
#include "hwpmcd/files.h"
#include "hwpmcd/common.h"
#include "hwpmcd/ctl-protocol.h"
#include "hwpmcd/log.h"

#define HWPMCD_CONFIG_DEFAULT "/etc/hwpmcd/hwpmcd.conf"

struct daemon_config daemon_cfg;
int daemon_epfd = -1;
static int listen_fd = -1;
/*
 * accept4() failed for want of fds or memory: the listening socket is disarmed
 * until then (daemon_mono_ns), or the level-triggered loop would retry it without pause.
 */
static uint64_t accept_paused_until;
static uint64_t accept_warned_at;
#define ACCEPT_PAUSE_NS 200000000ull
bool daemon_shutting_down; /* SIGTERM: every session is being closed */
static bool listen_owned; /* we created the socket file (not socket activation) */
static struct daemon_client *clients;
static size_t nclients;
struct session *daemon_sessions[DAEMON_SESSIONS_MAX];
size_t daemon_nsessions;
int daemon_next_session_id = 1;
static bool arg_foreground;
static bool arg_check_config;
static const char *arg_config;
static const char *arg_socket;
static const char *arg_state_dir;
static const char *arg_profiles_dir;

/* epoll tags: pointers to these mark what an event is for. */
static char tag_listen, tag_signal, tag_closer;

/* ---- systemd: notification, watchdog, the journal (libsystemd) ---- */

static void notify(const char *msg)
{
	/* No $NOTIFY_SOCKET: not under systemd (or a test's harness), nothing to do. */
	(void)sd_notify(0, msg);
}

/* $WATCHDOG_USEC when it is meant for us ($WATCHDOG_PID unset or ours), else 0. */
static uint64_t watchdog_usec(void)
{
	uint64_t usec = 0;

	return sd_watchdog_enabled(0, &usec) > 0 ? usec : 0;
}

/*
 * Under systemd ($JOURNAL_STREAM names our stderr) every log line goes to the
 * journal with structured fields: PRIORITY, and from the context that starts a
 * message (STYLE.md 6) HWPMCD_SESSION for "session N: ...", HWPMCD_PROFILE for
 * "profile NAME: ..." and HWPMCD_UID for "uid N: ...", so that
 * `journalctl HWPMCD_PROFILE=web` shows one profile's story.  A journal that
 * refuses the entry gets the line on stderr as before.
 */
static void journal_hook(int prio, const char *msg, void *userdata)
{
	char field[96] = "";
	const char *rest;
	unsigned long v;
	int n = 0, r;

	(void)userdata;
	if (sscanf(msg, "session %lu:%n", &v, &n) == 1 && n > 0)
		snprintf(field, sizeof(field), "HWPMCD_SESSION=%lu", v);
	else if (strncmp(msg, "profile ", 8) == 0 && (rest = strchr(msg + 8, ':')) &&
		 rest - (msg + 8) < DAEMON_PROFILE_NAME_MAX && !memchr(msg + 8, ' ', (size_t)(rest - (msg + 8))))
		snprintf(field, sizeof(field), "HWPMCD_PROFILE=%.*s", (int)(rest - (msg + 8)), msg + 8);
	else if (sscanf(msg, "uid %lu:%n", &v, &n) == 1 && n > 0)
		snprintf(field, sizeof(field), "HWPMCD_UID=%lu", v);
	if (field[0])
		r = sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio, "%s", field,
				    "SYSLOG_IDENTIFIER=hwpmcd", NULL);
	else
		r = sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", prio,
				    "SYSLOG_IDENTIFIER=hwpmcd", NULL);
	if (r < 0)
		fprintf(stderr, "<%d>%s\n", prio, msg);
}

/* Is our stderr the journal's stream ($JOURNAL_STREAM = "DEV:INODE")? */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 && fstat(STDERR_FILENO, &st) == 0 &&
	       (unsigned long long)st.st_dev == dev && (unsigned long long)st.st_ino == ino;
}

/* ---- the loop's clock ---- */

uint64_t daemon_mono_ns(void)
{
	return util_now_ns(CLOCK_MONOTONIC);
}

/* ---- clients ---- */

static void client_free(struct daemon_client *c)
{
	struct daemon_client **pp;

	/*
	 * Its sessions end with it (each log gets its CLOSELOG, on the worker); no
	 * reply or event is owed to it any more.
	 */
	for (size_t i = 0; i < daemon_nsessions; i++) {
		struct session *s = daemon_sessions[i];

		if (s->owner == c && s->ended) {
			session_remove(s);
			i--;
			continue;
		}
		if (s->owner == c) {
			log_info("session %d: its client went away; closing the session", s->id);
			s->owner = NULL;
			s->orphan = true;
			session__request_stop(s);
		}
		if (s->start_client == c)
			s->start_client = NULL;
		if (s->stop_client == c)
			s->stop_client = NULL;
		pthread_mutex_lock(&s->filt_lock);
		if (s->filt_req_client == c)
			s->filt_req_client = NULL; /* the worker's answer, when it comes, is dropped */
		pthread_mutex_unlock(&s->filt_lock);
	}
	for (pp = &clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	for (size_t i = 0; i < c->nfds; i++)
		daemon_fd_release(c->fds[i], c->who.uid);
	(void)epoll_ctl(daemon_epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->buf);
	free(c);
	nclients--;
}

/* The admin group's gid now ((gid_t)-1 if it does not exist: then only root). */
static gid_t admin_gid(void)
{
	struct group gr, *res = NULL;
	char buf[16384];

	if (getgrnam_r(daemon_cfg.admin_group, &gr, buf, sizeof(buf), &res) != 0 || !res)
		return (gid_t)-1;
	return res->gr_gid;
}

/* A refusal for a connection we do not keep: one error line, then close. */
static void refuse_connection(int fd, int err, const char *msg)
{
	daemon_send_line(fd, daemon_error_json(-1, err, msg));
	close(fd);
}

static void client_accept(void)
{
	int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	struct ucred cred;
	socklen_t len = sizeof(cred);
	gid_t groups[256];
	socklen_t glen = sizeof(groups);
	size_t ngroups = 0, mine = 0;
	struct daemon_client *c;
	struct epoll_event e = { .events = EPOLLIN };
	char msg[256];
	bool admin;

	if (fd < 0) {
		int err = errno;

		if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
			struct epoll_event off = { .events = 0, .data.ptr = &tag_listen };
			uint64_t now = daemon_mono_ns();

			(void)epoll_ctl(daemon_epfd, EPOLL_CTL_MOD, listen_fd, &off);
			accept_paused_until = now + ACCEPT_PAUSE_NS;
			if (!accept_warned_at || now - accept_warned_at >= 10000000000ull) {
				log_warn("cannot accept connections: %s; pausing accept for 0.2 s at a "
					 "time until fds or memory are free again", strerror(err));
				accept_warned_at = now;
			}
		}
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		refuse_connection(fd, -EPROTO, "cannot read the peer's credentials");
		return;
	}
	/* The groups the client had when it connected: what it is, not what it could be. */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0)
		ngroups = glen / sizeof(gid_t);
	admin = daemon_auth_admin(cred.uid, cred.gid, groups, ngroups, admin_gid());
	for (c = clients; c; c = c->next)
		mine += c->who.uid == cred.uid;
	if (nclients >= daemon_cfg.max_clients) {
		snprintf(msg, sizeof(msg), "too many clients: the daemon serves %zu, its maximum "
			 "(max_clients)", nclients);
		refuse_connection(fd, -EBUSY, msg);
		return;
	}
	if (!admin && mine >= daemon_cfg.user_max_clients) {
		snprintf(msg, sizeof(msg), "too many clients of uid %u: %zu connections, the most for "
			 "users outside group '%s' (user_max_clients)", (unsigned)cred.uid, mine,
			 daemon_cfg.admin_group);
		refuse_connection(fd, -EBUSY, msg);
		return;
	}
	c = calloc(1, sizeof(*c));
	if (!c || !(c->buf = malloc(CTL_MESSAGE_MAX + 1))) {
		free(c);
		refuse_connection(fd, -ENOMEM, "out of memory");
		return;
	}
	c->fd = fd;
	c->who.uid = cred.uid;
	c->who.gid = cred.gid;
	c->who.pid = cred.pid;
	c->who.admin = admin;
	c->last_ns = daemon_mono_ns();
	c->next = clients;
	clients = c;
	nclients++;
	e.data.ptr = c;
	(void)epoll_ctl(daemon_epfd, EPOLL_CTL_ADD, fd, &e);
}

/*
 * Clients that own no session and sent no complete request for
 * client_idle_timeout seconds are disconnected (a slow-loris guard: each holds
 * a 64 KiB buffer and a slot of max_clients).
 */
static void clients_expire(uint64_t now)
{
	struct daemon_client *c, *next;

	if (!daemon_cfg.client_idle_timeout)
		return;
	for (c = clients; c; c = next) {
		bool owns = false;

		next = c->next;
		for (size_t i = 0; i < daemon_nsessions; i++)
			owns |= daemon_sessions[i]->owner == c;
		if (!owns &&
		    now - c->last_ns > (uint64_t)daemon_cfg.client_idle_timeout * 1000000000ull) {
			log_info("uid %u (pid %d): idle for %u s; disconnecting", (unsigned)c->who.uid,
				 (int)c->who.pid, daemon_cfg.client_idle_timeout);
			daemon_client_send(c,
					   json_pack("{s:s,s:s}", "event", "disconnect", "reason",
						     "idle for client_idle_timeout seconds"));
			client_free(c);
		}
	}
}

static bool client_has_line(const struct daemon_client *c)
{
	return memchr(c->buf, '\n', c->len) != NULL;
}

/* Reading a paused client again once its uid's closes are under the bound. */
void daemon_client_rearm(void)
{
	for (struct daemon_client *c = clients; c; c = c->next) {
		struct epoll_event e = { .events = EPOLLIN, .data.ptr = c };

		if (c->paused && !daemon_closing_over(c->who.uid)) {
			c->paused = false;
			(void)epoll_ctl(daemon_epfd, EPOLL_CTL_MOD, c->fd, &e);
		}
	}
}

/*
 * Input from @c, or (when it has a complete line already) none; then at most one
 * request handled.  May free @c (EOF).
 */
static void client_read(struct daemon_client *c)
{
	char cbuf[CMSG_SPACE(sizeof(int) * DAEMON_CLIENT_MAX_FDS)];
	struct iovec iov = { .iov_base = c->buf + c->len, .iov_len = CTL_MESSAGE_MAX - c->len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;
	char *nl;

	if (!client_has_line(c)) {
		if (daemon_closing_over(c->who.uid)) {
			/* Its fds wait to be closed: take no more until they are. */
			struct epoll_event off = { .events = 0, .data.ptr = c };

			c->paused = true;
			(void)epoll_ctl(daemon_epfd, EPOLL_CTL_MOD, c->fd, &off);
			return;
		}
		n = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		for (cm = CMSG_FIRSTHDR(&mh); n > 0 && cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
				size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
				int *fds = (int *)(void *)CMSG_DATA(cm);

				for (size_t i = 0; i < k; i++) {
					if (c->nfds < DAEMON_CLIENT_MAX_FDS)
						c->fds[c->nfds++] = fds[i];
					else
						daemon_fd_release(fds[i], c->who.uid);
				}
			}
		}
		if (n <= 0) {
			client_free(c);
			return;
		}
		c->len += (size_t)n;
	}
	if ((nl = memchr(c->buf, '\n', c->len))) {
		size_t line = (size_t)(nl - c->buf);

		c->last_ns = daemon_mono_ns();
		if (c->discarding)
			c->discarding = false;
		else if (line > 0)
			daemon_handle_line(c, c->buf, line);
		/*
		 * daemon_handle_line may not free the client: clients are freed only on
		 * read EOF.
		 */
		memmove(c->buf, nl + 1, c->len - line - 1);
		c->len -= line + 1;
	}
	if (c->len == 0 && c->nfds) {
		/* fds that came with requests that did not take them (protocol.md) */
		daemon_client_drop_fds(c);
	}
	if (c->len == CTL_MESSAGE_MAX && !client_has_line(c)) {
		if (!c->discarding)
			daemon_reply_error(c, -1, -EMSGSIZE,
					   "message longer than %d bytes; skipped",
					   CTL_MESSAGE_MAX);
		c->discarding = true;
		c->len = 0;
	}
	c->ready = client_has_line(c);
}

/* ---- setup ---- */

/*
 * The fd budget: the soft RLIMIT_NOFILE raised to the hard one, then 256 fds,
 * nine per client (its socket and DAEMON_CLIENT_MAX_FDS) kept for main and
 * UNWIND_FDS_MAX per session for its unwinder's ELF files, so that the
 * sessions' perf fds can never take the daemon to EMFILE.
 */
static void fd_limits(void)
{
	struct rlimit rl;
	uint64_t keep = 256 + (uint64_t)daemon_cfg.max_clients * (DAEMON_CLIENT_MAX_FDS + 1) +
			(uint64_t)daemon_cfg.max_sessions * UNWIND_FDS_MAX,
		 avail = 0;
	uint64_t max = daemon_cfg.max_perf_fds;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		if (rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			(void)setrlimit(RLIMIT_NOFILE, &rl);
			(void)getrlimit(RLIMIT_NOFILE, &rl);
		}
		avail = rl.rlim_cur > keep ? rl.rlim_cur - keep : 0;
	}
	if (!max) {
		max = avail;
	} else if (max > avail) {
		log_warn("max_perf_fds = %" PRIu64 " is more than the fd limit leaves (%" PRIu64
			 "); using %" PRIu64, max, avail, avail);
		max = avail;
	}
	if (!max)
		log_warn("the fd limit (RLIMIT_NOFILE) leaves no fds for sessions; raise it "
			 "(LimitNOFILE=) or lower max_clients");
	session_budget_set(max, daemon_cfg.user_max_perf_fds);
	log_info("perf fds: at most %" PRIu64 " for all sessions, %u per user", max,
		 daemon_cfg.user_max_perf_fds);
}

static int setup_socket(void)
{
	char tmp[sizeof(daemon_cfg.socket_path) + 24];
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, r, n;

	/* Socket activation: $LISTEN_FDS/$LISTEN_PID for us (unset here, not inherited). */
	n = sd_listen_fds(1);
	if (n < 0)
		return log_error_errno(n, "socket activation ($LISTEN_FDS)");
	if (n > 0) {
		fd = SD_LISTEN_FDS_START;
		if (n > 1)
			log_warn("socket activation passed %d fds; using the first, ignoring the "
				 "rest", n);
		if (sd_is_socket_unix(fd, SOCK_STREAM, 1, NULL, 0) <= 0)
			return log_error_errno(-ENOTSOCK, "LISTEN_FDS=%d: fd %d is not a listening "
					       "socket (AF_UNIX, SOCK_STREAM)", n, fd);
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		listen_fd = fd;
		return 0;
	}
	/*
	 * Bound under a temporary name, given its mode, group and backlog, and only
	 * then renamed into place: a client that sees the path can connect (no
	 * ECONNREFUSED window while the group is looked up) and can never find it
	 * with a mode wider than configured.
	 */
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", daemon_cfg.socket_path, (int)getpid());
	if (strlen(tmp) >= sizeof(sa.sun_path))
		return log_error_errno(-ENAMETOOLONG, "socket path '%s'", daemon_cfg.socket_path);
	memcpy(sa.sun_path, tmp, strlen(tmp));
	{
		char dir[sizeof(daemon_cfg.socket_path)], *slash;

		snprintf(dir, sizeof(dir), "%s", daemon_cfg.socket_path);
		slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			char err[512];

			/* Made if missing, in its checked parent (files.h); bind() says the rest. */
			*slash = '\0';
			(void)util_dir_ensure(dir, 0755, NULL, err, sizeof(err));
		}
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return log_error_errno(-errno, "socket");
	(void)unlink(tmp);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		close(fd);
		return log_error_errno(r, "bind '%s'", tmp);
	}
	(void)chmod(tmp, daemon_cfg.socket_mode);
	{
		/* The admin group may connect through a 0660 socket (as hwpmcd.socket's SocketGroup). */
		gid_t g = admin_gid();

		if (g != (gid_t)-1 && chown(tmp, (uid_t)-1, g) < 0)
			log_warn("cannot give the socket '%s' to group '%s': %s",
				 daemon_cfg.socket_path, daemon_cfg.admin_group, strerror(errno));
	}
	/* A socket's name, not a file's (files.h-exempt: bind(2) made it, the config names it). */
	if (listen(fd, SOMAXCONN) < 0 || rename(tmp, daemon_cfg.socket_path) < 0) { /* files.h-exempt */
		r = -errno;
		(void)unlink(tmp);
		close(fd);
		return log_error_errno(r, "listen on '%s'", daemon_cfg.socket_path);
	}
	listen_fd = fd;
	listen_owned = true;
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: hwpmcd [--socket PATH] [--config FILE] [--state-dir DIR]\n"
		"              [--profiles-dir DIR] [--foreground] [--check-config]\n"
		"\n"
		"The hwpmcd profiling daemon: samples CPUs or processes with perf_event_open\n"
		"for its clients ('hwpmc record', 'hwpmc status', ...) and writes FreeBSD\n"
		"pmclog streams to the fds they pass.  It runs as root, normally under\n"
		"systemd (socket activation supported).\n"
		"\n"
		"  --socket PATH   control socket (default %s, or 'socket' in the config)\n"
		"  --config FILE   configuration (default /etc/hwpmcd/hwpmcd.conf, optional)\n"
		"  --state-dir DIR where detached sessions ('hwpmc start') write (default\n"
		"                  /var/lib/hwpmcd, or 'state_dir' in the config)\n"
		"  --profiles-dir DIR  always-on profiles, one NAME.conf each (default\n"
		"                  %s); each writes rotated logs under\n"
		"                  STATE_DIR/profiles/NAME/ (hwpmcd.conf(5), PROFILES); SIGHUP\n"
		"                  or 'hwpmc profiles reload' reads them again\n"
		"  --foreground    plain log lines on stderr instead of journald priorities\n"
		"  --check-config  read the configuration and every profile, print their\n"
		"                  problems, and exit (0: all good; the daemon refuses to start\n"
		"                  on a bad configuration, and runs every good profile)\n"
		"  -h, --help      this text;  --version  the version\n",
		CTL_SOCKET_DEFAULT, DAEMON_PROFILES_DIR_DEFAULT);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, 'D' },
		{ "profiles-dir", required_argument, NULL, 'P' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct epoll_event e;
	sigset_t mask;
	int opt, sfd, r, tick_ms;
	bool running = true;
	uint64_t wd_usec, wd_last = 0, idle_last = 0;

	/* A push's broker (daemon-push.c starts it): not the daemon; not in --help. */
	if (argc == 3 && strcmp(argv[1], "--push-broker") == 0)
		return daemon_broker_main(argv[2]);
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': arg_socket = optarg; break;
		case 'c': arg_config = optarg; break;
		case 'D': arg_state_dir = optarg; break;
		case 'P': arg_profiles_dir = optarg; break;
		case 'f': arg_foreground = true; break;
		case 'C': arg_check_config = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("hwpmcd %s\n", HWPMCD_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}
	log_open("hwpmcd", arg_foreground || isatty(STDERR_FILENO) ? LOG_TARGET_PLAIN
								     : LOG_TARGET_JOURNAL);
	if (!arg_foreground && stderr_is_journal())
		log_set_hook(journal_hook, NULL);
	daemon_config_defaults(&daemon_cfg);
	{
		char err[4096];
		const char *path = arg_config ? arg_config : HWPMCD_CONFIG_DEFAULT;

		r = daemon_config_load(&daemon_cfg, path, arg_config != NULL, err, sizeof(err));
		if (r < 0) {
			/* Every problem, one per line; a half-applied security config is no start. */
			for (char *l = err, *nl; l && *l; l = nl) {
				nl = strchr(l, '\n');
				if (nl)
					*nl++ = '\0';
				log_error("config: %s", l);
			}
			log_error("config '%s' has problems; not starting (see hwpmcd.conf(5))", path);
			return 1;
		}
		if (arg_profiles_dir) {
			if (arg_profiles_dir[0] != '/' ||
			    strlen(arg_profiles_dir) >= sizeof(daemon_profiles_dir) - 80) {
				log_error("--profiles-dir '%s' must be an absolute path of under "
					  "%zu bytes",
					  arg_profiles_dir, sizeof(daemon_profiles_dir) - 80);
				return 2;
			}
			snprintf(daemon_profiles_dir, sizeof(daemon_profiles_dir), "%s",
				 arg_profiles_dir);
		}
		if (arg_check_config) {
			struct daemon_profile *defs = calloc(DAEMON_PROFILES_MAX, sizeof(*defs));
			size_t n = 0;
			int k;

			printf("%s: ok\n", path);
			if (!defs)
				return 1;
			k = daemon_profile_load_dir(daemon_profiles_dir, &daemon_cfg,
						    coll_max_sample_rate(), coll_max_stack(), defs,
						    DAEMON_PROFILES_MAX, &n, err, sizeof(err));
			for (size_t i = 0; i < n; i++)
				printf("%s/%s.conf: ok%s\n", daemon_profiles_dir, defs[i].name,
				       defs[i].enabled ? "" : " (enabled = no)");
			if (k)
				fprintf(stderr, "%s\n", err);
			free(defs);
			return k ? 1 : 0;
		}
	}
	if (arg_socket) {
		if (strlen(arg_socket) >= sizeof(daemon_cfg.socket_path)) {
			log_error("--socket '%s' is too long", arg_socket);
			return 2;
		}
		snprintf(daemon_cfg.socket_path, sizeof(daemon_cfg.socket_path), "%s", arg_socket);
	}
	if (arg_state_dir) {
		if (arg_state_dir[0] != '/' || strlen(arg_state_dir) >= sizeof(daemon_cfg.state_dir) - 64) {
			log_error("--state-dir '%s' must be an absolute path", arg_state_dir);
			return 2;
		}
		snprintf(daemon_cfg.state_dir, sizeof(daemon_cfg.state_dir), "%s", arg_state_dir);
	}
	/* First, so that a passed socket is still fd 3 (no fd of ours has taken it). */
	if (setup_socket() < 0)
		return 1;
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	/* Blocked before any thread starts, so only the signalfd sees them. */
	pthread_sigmask(SIG_BLOCK, &mask, NULL);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	daemon_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || daemon_epfd < 0) {
		log_error("signalfd/epoll: %s", strerror(errno));
		return 1;
	}
	e.events = EPOLLIN;
	e.data.ptr = &tag_listen;
	epoll_ctl(daemon_epfd, EPOLL_CTL_ADD, listen_fd, &e);
	e.data.ptr = &tag_signal;
	epoll_ctl(daemon_epfd, EPOLL_CTL_ADD, sfd, &e);
	daemon_closer_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (daemon_closer_efd < 0) {
		log_error("eventfd: %s", strerror(errno));
		return 1;
	}
	e.data.ptr = &tag_closer;
	epoll_ctl(daemon_epfd, EPOLL_CTL_ADD, daemon_closer_efd, &e);
	fd_limits();
	log_info("listening on %s",
		 listen_owned ? daemon_cfg.socket_path : "the socket systemd passed");
	notify("READY=1\nSTATUS=listening");
	/* Profiles' push_url: the thread idles until a file is queued. */
	if ((r = daemon_push_start(daemon_cfg.hwpmc)) < 0)
		log_warn("push: cannot start its thread (%s): profiles' push_url is not served",
			 strerror(-r));
	/* The vDSO as a file for pmcstat, before any session writes a MAP_IN. */
	daemon_vdso_publish();
	/* The always-on profiles: a bad file is logged and left out, the rest run. */
	(void)daemon_profiles_load();
	wd_usec = watchdog_usec();
	tick_ms = wd_usec ? (int)MIN((uint64_t)1000, wd_usec / 2000) : 1000;
	if (tick_ms < 1)
		tick_ms = 1;

	while (running) {
		struct epoll_event evs[32];
		int wait_ms = tick_ms, n;
		uint64_t now = daemon_mono_ns();

		if (accept_paused_until) {
			if (now >= accept_paused_until) {
				struct epoll_event on = { .events = EPOLLIN, .data.ptr = &tag_listen };

				(void)epoll_ctl(daemon_epfd, EPOLL_CTL_MOD, listen_fd, &on);
				accept_paused_until = 0;
			} else {
				wait_ms = (int)MIN((uint64_t)tick_ms,
						   (accept_paused_until - now) / 1000000 + 1);
			}
		}
		for (struct daemon_client *c = clients; c; c = c->next)
			if (c->ready)
				wait_ms = 0;
		n = epoll_wait(daemon_epfd, evs, 32, wait_ms);
		now = daemon_mono_ns();

		if (wd_usec && now - wd_last >= wd_usec * 500) {
			/* Half the interval: the loop is alive (a stuck session stop is not). */
			notify("WATCHDOG=1");
			wd_last = now;
		}
		if (now - idle_last >= 1000000000ull) {
			clients_expire(now);
			daemon_sessions_check_stops(now);
			idle_last = now;
		}

		if (n < 0 && errno != EINTR) {
			log_error("epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < n; i++) {
			void *ptr = evs[i].data.ptr;
			bool is_session = false;

			if (ptr == &tag_listen) {
				client_accept();
				continue;
			}
			if (ptr == &tag_closer) {
				daemon_closer_event();
				continue;
			}
			if (ptr == &tag_signal) {
				struct signalfd_siginfo si;

				while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
					if (si.ssi_signo != SIGHUP) {
						running = false;
					} else if (running) {
						log_info("profiles: SIGHUP: reloading '%s'",
							 daemon_profiles_dir);
						(void)daemon_profiles_load();
					}
				}
				continue;
			}
			for (size_t k = 0; k < daemon_nsessions; k++)
				is_session |= (void *)daemon_sessions[k] == ptr;
			if (is_session) {
				session_event(ptr);
				continue;
			}
			/* A client: it may have been freed by an earlier event of this batch. */
			for (struct daemon_client *c = clients; c; c = c->next) {
				if ((void *)c == ptr) {
					c->ready = false; /* its one request of this turn */
					client_read(c);
					break;
				}
			}
		}
		/* The clients with more requests waiting: one each, round after round. */
		for (struct daemon_client *c = clients, *next; c; c = next) {
			next = c->next;
			if (c->ready && !c->paused)
				client_read(c);
		}
	}
	notify("STOPPING=1\nSTATUS=closing sessions");
	log_info("shutting down: closing %zu sessions", daemon_nsessions);
	daemon_shutting_down = true;
	for (size_t i = 0; i < daemon_nsessions; i++) {
		if (daemon_sessions[i]->ended) {
			/* Ended by itself before: its owner hears of the shutdown, nothing waits. */
			session_tell_end(daemon_sessions[i--], "the daemon is shutting down", true);
			continue;
		}
		session__request_stop(daemon_sessions[i]);
	}
	{
		/* Every worker drains and ends by itself; one that cannot is left behind. */
		uint64_t deadline = daemon_mono_ns() + SESSION_STOP_REPLY_MS * 1000000ull;

		while (daemon_nsessions && daemon_mono_ns() < deadline) {
			struct epoll_event evs[32];
			int n = epoll_wait(daemon_epfd, evs, 32, 100);

			for (int i = 0; i < n; i++)
				for (size_t k = 0; k < daemon_nsessions; k++)
					if ((void *)daemon_sessions[k] == evs[i].data.ptr) {
						session_event(daemon_sessions[k]);
						break;
					}
		}
		for (size_t i = 0; i < daemon_nsessions; i++)
			log_warn("session %d: its worker has not ended; exiting without it",
				 daemon_sessions[i]->id);
	}
	/* The profiles' last files are queued now: sent within DAEMON_PUSH_DRAIN_S. */
	daemon_push_stop();
	while (clients)
		client_free(clients);
	if (listen_owned)
		(void)unlink(daemon_cfg.socket_path);
	close(listen_fd);
	close(sfd);
	close(daemon_epfd);
	json_decref(daemon_events_cache);
	r = 0;
	return r;
}
