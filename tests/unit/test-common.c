/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-common.c: Check suite for src/common (logging, fd and string helpers).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwpmcd/common-open.h"
#include "hwpmcd/common.h"
#include "hwpmcd/log.h"

static char last_msg[1200];
static int last_prio = -1;

static void hook(int prio, const char *msg, void *userdata)
{
	(void)userdata;
	last_prio = prio;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

START_TEST(test_log_errno_and_levels)
{
	int r;

	log_set_hook(hook, NULL);
	log_set_level(LOG_PRIO_INFO);
	errno = EBADF;
	r = log_error_errno(-ENOSPC, "cpu %d: write failed", 3);
	ck_assert_int_eq(r, -ENOSPC);
	ck_assert_int_eq(errno, EBADF); /* preserved */
	ck_assert_int_eq(last_prio, LOG_PRIO_ERR);
	ck_assert_str_eq(last_msg, "cpu 3: write failed: No space left on device");
	last_prio = -1;
	log_debug("not shown");
	ck_assert_int_eq(last_prio, -1);
	log_set_level(LOG_PRIO_DEBUG);
	log_debug("shown %s", "now");
	ck_assert_int_eq(last_prio, LOG_PRIO_DEBUG);
	ck_assert_str_eq(last_msg, "shown now");
	log_set_hook(NULL, NULL);
}
END_TEST

START_TEST(test_le_helpers)
{
	uint8_t b[12] = { 0 };

	util_put_le32(b + 1, 0x11223344);
	ck_assert_uint_eq(b[1], 0x44);
	ck_assert_uint_eq(b[4], 0x11);
	ck_assert_uint_eq(util_le32(b + 1), 0x11223344);
	util_put_le64(b + 3, 0x0102030405060708ull);
	ck_assert_uint_eq(b[3], 0x08);
	ck_assert_uint_eq(b[10], 0x01);
	ck_assert_uint_eq(util_le64(b + 3), 0x0102030405060708ull);
}
END_TEST

START_TEST(test_escape)
{
	char out[64];

	ck_assert_str_eq(util_escape("a\"b\\c\n\x01\xff", 8, out, sizeof(out)),
			 "a\\\"b\\\\c\\n\\x01\\xff");
	/* Truncation is marked and never splits an escape. */
	ck_assert_str_eq(util_escape("abcdefghij", 10, out, 8), "abcd...");
	ck_assert_str_eq(util_escape("\x01\x02\x03", 3, out, 9), "\\x01...");
	ck_assert_str_eq(util_escape("", 0, out, 1), "");
}
END_TEST

START_TEST(test_parse_u64)
{
	uint64_t v = 7;

	ck_assert_int_eq(util_parse_u64("123", &v), 0);
	ck_assert_uint_eq(v, 123);
	ck_assert_int_eq(util_parse_u64("0x1F", &v), 0);
	ck_assert_uint_eq(v, 31);
	ck_assert_int_eq(util_parse_u64("010", &v), 0);
	ck_assert_uint_eq(v, 10); /* decimal, not octal */
	ck_assert_int_eq(util_parse_u64("18446744073709551615", &v), 0);
	ck_assert_uint_eq(v, UINT64_MAX);
	ck_assert_int_eq(util_parse_u64("18446744073709551616", &v), -ERANGE);
	ck_assert_int_eq(util_parse_u64("-1", &v), -EINVAL);
	ck_assert_int_eq(util_parse_u64("12x", &v), -EINVAL);
	ck_assert_int_eq(util_parse_u64("", &v), -EINVAL);
	ck_assert_int_eq(util_parse_u64("0x", &v), -EINVAL);
}
END_TEST

START_TEST(test_write_all)
{
	int p[2];
	size_t done = 99;
	char buf[8];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(util_write_all(p[1], "hello", 5, &done), 0);
	ck_assert_uint_eq(done, 5);
	ck_assert_int_eq(util_read_some(p[0], buf, sizeof(buf)), 5);
	close(p[0]);
	close(p[1]);
	p[0] = open("/dev/full", O_WRONLY | O_CLOEXEC);
	ck_assert_int_eq(util_write_all(p[0], "x", 1, &done), -ENOSPC);
	ck_assert_uint_eq(done, 0);
	close(p[0]);
}
END_TEST

/* Resident pages of [p, p + len) (mincore). */
static size_t resident(void *p, size_t len)
{
	unsigned char v[64];
	size_t n = 0;

	ck_assert_uint_le(len / 4096, sizeof(v));
	ck_assert_int_eq(mincore(p, len, v), 0);
	for (size_t i = 0; i < len / 4096; i++)
		n += v[i] & 1;
	return n;
}

/* The names util_open_output() takes for the caller's own descriptors, and no other. */
START_TEST(test_own_fd_name)
{
	static const struct {
		const char *path;
		int fd;
	} c[] = {
		{ "/dev/stdout", 1 },	    { "/dev/stderr", 2 },
		{ "/dev/fd/0", 0 },	    { "/dev/fd/7", 7 },
		{ "/proc/self/fd/12", 12 }, { "/dev/fd/", -1 },
		{ "/dev/fd/1x", -1 },	    { "/dev/fd/-1", -1 },
		{ "/dev/fd/ 1", -1 },	    { "/dev/fd/99999999", -1 },
		{ "/proc/1/fd/1", -1 },	    { "/dev/stdin", -1 },
		{ "out.pb.gz", -1 },	    { "", -1 },
		{ "/dev/fd/1/x", -1 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(c); i++)
		ck_assert_msg(util_own_fd_name(c[i].path) == c[i].fd, "%s: %d, not %d", c[i].path,
			      util_own_fd_name(c[i].path), c[i].fd);
}
END_TEST

/* util_prefault faults in whole pages only, and nothing under UTIL_PREFAULT_MIN. */
START_TEST(test_prefault)
{
	size_t len = 64 * 4096;
	uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ck_assert_ptr_ne(p, MAP_FAILED);
	ck_assert_uint_eq(resident(p, len), 0);
	util_prefault(p, UTIL_PREFAULT_MIN - 1);
	ck_assert_uint_eq(resident(p, len), 0);
	util_prefault(NULL, len);
	if (madvise(p + 63 * 4096, 4096, MADV_POPULATE_WRITE) != 0) {
		/* Linux before 5.14: util_prefault() is a no-op, as it says. */
		ck_assert_int_eq(errno, EINVAL);
		munmap(p, len);
		return;
	}
	ck_assert_uint_eq(resident(p, len), 1);
	/* From the middle of page 1 to the middle of page 40: pages 2..39 */
	util_prefault(p + 4096 + 100, 39 * 4096);
	ck_assert_uint_eq(resident(p, len), 38 + 1);
	ck_assert_uint_eq(resident(p + 2 * 4096, 38 * 4096), 38);
	ck_assert_uint_eq(p[2 * 4096], 0); /* zero-filled, as any fresh page */
	munmap(p, len);
}
END_TEST

/* util_open_output: every trick a user can plant where a recorder (maybe root) writes. */
START_TEST(test_open_output)
{
	char dir[] = "/tmp/hwpmc-test-out.XXXXXX", p[128], q[128];
	bool made = false;
	struct stat st;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* A new file: created; again: reused and truncated, not created. */
	snprintf(p, sizeof(p), "%s/log", dir);
	fd = util_open_output(p, 0600, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert(made);
	ck_assert_int_eq(write(fd, "abc", 3), 3);
	close(fd);
	fd = util_open_output(p, 0600, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert(!made);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_eq(st.st_size, 0);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
	/* A symbolic link to a victim: refused, the victim untouched. */
	snprintf(q, sizeof(q), "%s/victim", dir);
	fd = open(q, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_eq(write(fd, "secret", 6), 6);
	close(fd);
	snprintf(p, sizeof(p), "%s/link", dir);
	ck_assert_int_eq(symlink(q, p), 0);
	ck_assert_int_eq(util_open_output(p, 0600, &made), -ELOOP);
	/* A hard link to it: refused. */
	snprintf(p, sizeof(p), "%s/hard", dir);
	ck_assert_int_eq(link(q, p), 0);
	ck_assert_int_eq(util_open_output(p, 0600, &made), -EPERM);
	ck_assert_int_eq(stat(q, &st), 0);
	ck_assert_int_eq(st.st_size, 6);
	/* Another user's file (needs root to make one). */
	if (geteuid() == 0) {
		snprintf(p, sizeof(p), "%s/theirs", dir);
		fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0666);
		ck_assert_int_eq(write(fd, "x", 1), 1);
		ck_assert_int_eq(fchown(fd, 65534, 65534), 0);
		close(fd);
		ck_assert_int_eq(util_open_output(p, 0600, &made), -EPERM);
		ck_assert_int_eq(stat(p, &st), 0);
		ck_assert_int_eq(st.st_size, 1);
		unlink(p);
	}
	/* Our FIFO: its reader is waited for (one opens it a moment later). */
	snprintf(p, sizeof(p), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	{
		pid_t rd = fork();

		ck_assert_int_ge(rd, 0);
		if (rd == 0) {
			char b[8];
			int r;

			usleep(200000);
			r = open(p, O_RDONLY | O_CLOEXEC);
			_exit(r >= 0 && read(r, b, sizeof(b)) == 1 ? 0 : 1);
		}
		fd = util_open_output(p, 0600, &made);
		ck_assert_int_ge(fd, 0);
		ck_assert(!made);
		ck_assert_int_eq(write(fd, "f", 1), 1);
		close(fd);
		ck_assert_int_eq(waitpid(rd, &fd, 0), rd);
		ck_assert(WIFEXITED(fd) && WEXITSTATUS(fd) == 0);
	}
	/* Another user's FIFO nobody reads: refused at once, never waited for. */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(p, 65534, 65534), 0);
		ck_assert_int_eq(util_open_output(p, 0600, &made), -EPERM);
	}
	unlink(p);
	/* A directory: refused; /dev/null (a character device): taken. */
	snprintf(p, sizeof(p), "%s/sub", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_lt(util_open_output(p, 0600, &made), 0);
	rmdir(p);
	fd = util_open_output("/dev/null", 0600, &made);
	ck_assert_int_ge(fd, 0);
	ck_assert(!made);
	close(fd);
	/* Our own descriptors by name (links, but nobody else's): a pipe, say. */
	{
		int pp[2], d;
		char name[64];

		ck_assert_int_eq(pipe2(pp, O_CLOEXEC), 0);
		snprintf(name, sizeof(name), "/dev/fd/%d", pp[1]);
		d = util_open_output(name, 0600, &made);
		ck_assert_int_ge(d, 0);
		ck_assert_int_eq(write(d, "x", 1), 1);
		close(d);
		snprintf(name, sizeof(name), "/proc/self/fd/%d", pp[0]);
		ck_assert_int_eq(util_open_output(name, 0600, &made), -EBADF); /* the read end */
		ck_assert_int_eq(util_open_output("/dev/fd/12x", 0600, &made), -ENOENT);
		close(pp[0]);
		close(pp[1]);
	}
	ck_assert_str_eq(util_output_strerror(-ELOOP),
			 "a symbolic link: refusing to write through it");
	snprintf(p, sizeof(p), "%s/link", dir);
	unlink(p);
	snprintf(p, sizeof(p), "%s/hard", dir);
	unlink(p);
	unlink(q);
	snprintf(p, sizeof(p), "%s/log", dir);
	unlink(p);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* util_open_read by itself: a regular file, and what UTIL_OPEN_REGULAR refuses. */
START_TEST(test_open_read)
{
	char dir[] = "/tmp/test-common-open.XXXXXX", p[128], b[8];
	uint64_t size = 99;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/f", dir);
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "abc", 3), 3);
	close(fd);
	fd = util_open_read(p, UTIL_OPEN_REGULAR, &size);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(size, 3);
	ck_assert_int_eq(read(fd, b, sizeof(b)), 3);
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
	ck_assert_int_eq(util_open_read(dir, UTIL_OPEN_REGULAR, NULL), -ENOEXEC);
	ck_assert_int_eq(util_open_read("/dev/null", UTIL_OPEN_REGULAR, NULL), -ENOEXEC);
	/* A FIFO with no writer: refused without blocking; opened as it is without the flag. */
	snprintf(p, sizeof(p), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	ck_assert_int_eq(util_open_read(p, UTIL_OPEN_REGULAR, NULL), -ENOEXEC);
	unlink(p);
	fd = util_open_read(dir, 0, &size); /* a directory, for a caller that looks */
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(size, 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/none", dir);
	ck_assert_int_eq(util_open_read(p, 0, NULL), -ENOENT);
	snprintf(p, sizeof(p), "%s/f", dir);
	unlink(p);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* A broker that answers "/ok" with an open file, anything else with EACCES. */
static void *broker_main(void *arg)
{
	int sock = *(int *)arg, r;
	char path[UTIL_BROKER_PATH_MAX];

	while ((r = util_broker_recv(sock, path, sizeof(path))) != 0) {
		int fd = r == 1 && strcmp(path, "/ok") == 0 ? open("/proc/self/exe", O_RDONLY | O_CLOEXEC)
							    : (r == -EPROTO ? -EINVAL : -EACCES);

		if (r < 0 && r != -EPROTO)
			break;
		(void)util_broker_reply(sock, fd);
		if (fd >= 0)
			close(fd);
	}
	close(sock);
	return NULL;
}

/* The broker's protocol, and util_open_read() routed to it. */
START_TEST(test_open_broker)
{
	char big[UTIL_BROKER_PATH_MAX + 8], b[4];
	int sp[2], fd, open_before, n;
	pthread_t t;
	uint64_t size = 0;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	ck_assert_int_eq(pthread_create(&t, NULL, broker_main, &sp[1]), 0);
	fd = util_broker_ask(sp[0], "/ok");
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(read(fd, b, 4), 4);
	ck_assert_int_eq(memcmp(b, "\177ELF", 4), 0);
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0); /* MSG_CMSG_CLOEXEC */
	close(fd);
	ck_assert_int_eq(util_broker_ask(sp[0], "/etc/shadow"), -EACCES);
	memset(big, 'a', sizeof(big));
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(util_broker_ask(sp[0], big), -ENAMETOOLONG);
	ck_assert_int_eq(util_broker_ask(sp[0], ""), -ENOENT);
	/* Not a request: answered all the same, and the next request still works. */
	ck_assert_int_eq(send(sp[0], "XXXX/ok", 7, 0), 7);
	{
		int32_t err = 0;

		ck_assert_int_eq(recv(sp[0], &err, sizeof(err), 0), (ssize_t)sizeof(err));
		ck_assert_int_eq(err, -EINVAL);
	}
	/* util_open_read() through the hook: checked as a regular file, sized. */
	util_open_use_broker(sp[0]);
	fd = util_open_read("/ok", UTIL_OPEN_REGULAR, &size);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_gt(size, 4);
	close(fd);
	ck_assert_int_eq(util_open_read("/tmp", 0, NULL), -EACCES);
	/* Descriptors sent along with a request are closed by the broker, unread. */
	open_before = 0;
	for (n = 0; n < 64; n++)
		open_before += fcntl(n, F_GETFD) >= 0;
	{
		union {
			char buf[CMSG_SPACE(sizeof(int))];
			struct cmsghdr align;
		} ctl;
		char req[] = "HWB1/ok";
		struct iovec iov = { .iov_base = req, .iov_len = 7 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
				    .msg_controllen = sizeof(ctl.buf) };
		struct cmsghdr *c;
		int dfd = open("/dev/null", O_RDONLY | O_CLOEXEC), got;

		memset(ctl.buf, 0, sizeof(ctl.buf));
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &dfd, sizeof(dfd));
		ck_assert_int_eq(sendmsg(sp[0], &m, 0), 7);
		close(dfd);
		/* The answer, read by hand: one descriptor, the broker's file. */
		{
			int32_t err = -1;
			struct iovec riov = { .iov_base = &err, .iov_len = sizeof(err) };
			struct msghdr rm = { .msg_iov = &riov, .msg_iovlen = 1,
					     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };

			ck_assert_int_eq(recvmsg(sp[0], &rm, MSG_CMSG_CLOEXEC), (ssize_t)sizeof(err));
			ck_assert_int_eq(err, 0);
			c = CMSG_FIRSTHDR(&rm);
			ck_assert_ptr_nonnull(c);
			memcpy(&got, CMSG_DATA(c), sizeof(got));
			ck_assert_int_eq(read(got, b, 4), 4);
			ck_assert_int_eq(memcmp(b, "\177ELF", 4), 0);
			close(got);
		}
		ck_assert_int_eq(util_open_read("/etc/passwd", 0, NULL), -EACCES);
	}
	for (n = 0; n < 64; n++)
		open_before -= fcntl(n, F_GETFD) >= 0;
	ck_assert_int_eq(open_before, 0);
	util_open_set_hook(NULL, NULL);
	close(sp[0]);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	/* The broker gone: -EPIPE, not a hang. */
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp), 0);
	close(sp[1]);
	ck_assert_int_eq(util_broker_ask(sp[0], "/ok"), -EPIPE);
	close(sp[0]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("common");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_log_errno_and_levels);
	tcase_add_test(tc, test_le_helpers);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_parse_u64);
	tcase_add_test(tc, test_write_all);
	tcase_add_test(tc, test_open_output);
	tcase_add_test(tc, test_own_fd_name);
	tcase_add_test(tc, test_prefault);
	tcase_add_test(tc, test_open_read);
	tcase_add_test(tc, test_open_broker);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
