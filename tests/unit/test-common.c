/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-common.c: Check suite for src/common (logging, fd and string helpers).
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "hwpmcd/files.h"
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

START_TEST(test_suggest)
{
	struct util_suggest sg = { NULL, 0 };
	char longer[UTIL_SUGGEST_LEN_MAX + 2];

	ck_assert_uint_eq(util_edit_distance("kitten", "sitting"), 3);
	ck_assert_uint_eq(util_edit_distance("Freq", "freq"), 0); /* case is ignored */
	ck_assert_uint_eq(util_edit_distance("", "abc"), 3);
	memset(longer, 'a', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	ck_assert_uint_eq(util_edit_distance(longer, "a"), UINT_MAX);
	/* the closest plausible typo wins; far or short candidates are not offered */
	util_suggest_consider(&sg, "cpu-clok", "task-clock");
	util_suggest_consider(&sg, "cpu-clok", "cpu-clock");
	util_suggest_consider(&sg, "cpu-clok", "cycles");
	ck_assert_str_eq(sg.best, "cpu-clock");
	ck_assert_uint_eq(sg.dist, 1);
	sg = (struct util_suggest){ NULL, 0 };
	util_suggest_consider(&sg, "ab", "xy"); /* 2 edits of a 2-letter name: no */
	util_suggest_consider(&sg, "same", "same");  /* the word itself: no */
	ck_assert_ptr_null(sg.best);
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

/* The names util_output_open() takes for the caller's own descriptors, and no other. */
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
/* util_index: ids found by their keys across growths; colliding hashes probe on. */
static uint64_t idx_keys[5000];

static uint64_t idx_hash(const void *ctx, uint32_t id)
{
	(void)ctx;
	return idx_keys[id - 1] % 97; /* many collisions on purpose */
}

static uint32_t idx_find(struct util_index *x, uint64_t key, bool add, uint32_t *n)
{
	size_t s;

	if (add)
		ck_assert_int_eq(util_index_reserve(x, *n + 1, 16, idx_hash, NULL), 0);
	for (s = util_index_first(x, key % 97); x->slot[s]; s = util_index_next(x, s))
		if (idx_keys[x->slot[s] - 1] == key)
			return x->slot[s];
	if (!add)
		return 0;
	idx_keys[*n] = key;
	x->slot[s] = ++*n;
	return *n;
}

START_TEST(test_index)
{
	struct util_index x = { 0 };
	uint32_t n = 0;

	for (uint64_t k = 0; k < 5000; k++)
		ck_assert_uint_eq(idx_find(&x, k * 7919 + 3, true, &n), k + 1);
	ck_assert_uint_eq(n, 5000);
	ck_assert_uint_ge(x.cap, 2 * 5000); /* the load stays at most one half */
	for (uint64_t k = 0; k < 5000; k++)
		ck_assert_uint_eq(idx_find(&x, k * 7919 + 3, false, &n), k + 1);
	ck_assert_uint_eq(idx_find(&x, 5, false, &n), 0);
	util_index_clear(&x);
	ck_assert_uint_eq(idx_find(&x, 3, false, &n), 0);
	util_index_free(&x);
	ck_assert_ptr_null(x.slot);
}
END_TEST

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

/* Read the whole small file @p into @buf (NUL-terminated); its length or -1. */
static int slurp(const char *p, char *buf, size_t size)
{
	int fd = open(p, O_RDONLY | O_CLOEXEC), n;

	if (fd < 0)
		return -1;
	n = (int)read(fd, buf, size - 1);
	close(fd);
	if (n >= 0)
		buf[n] = '\0';
	return n;
}

/* Write @text into a new file @p (mode 0600). */
static void put(const char *p, const char *text)
{
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* util_output_open: every trick a user can plant where a recorder (maybe root) writes. */
START_TEST(test_output_open)
{
	char dir[] = "/tmp/hwpmc-test-out.XXXXXX", p[128], q[400], b[64], err[512];
	struct util_output o;
	struct stat st;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* A new file: written under a temporary name, in place at the commit, mode 0600. */
	snprintf(p, sizeof(p), "%s/log", dir);
	ck_assert_int_eq(util_output_open(p, 0, &o, err, sizeof(err)), 0);
	ck_assert_str_ne(o.tmp, "");
	ck_assert_int_eq(write(o.fd, "abc", 3), 3);
	ck_assert_int_eq(stat(p, &st), -1); /* not there before the commit */
	ck_assert_int_eq(fcntl(o.fd, F_GETFL) & O_NONBLOCK, 0);
	ck_assert_int_ne(fcntl(o.fd, F_GETFD) & FD_CLOEXEC, 0);
	ck_assert_int_eq(util_output__commit(&o), 0);
	util_output__close(&o);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(slurp(p, b, sizeof(b)), 3);
	/* Again, abandoned (a refused run): the old file stays whole, no temporary left. */
	ck_assert_int_eq(util_output_open(p, 0640, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(write(o.fd, "new", 3), 3);
	snprintf(q, sizeof(q), "%s/%s", dir, o.tmp);
	util_output__abandon(&o);
	ck_assert_int_eq(slurp(p, b, sizeof(b)), 3);
	ck_assert_str_eq(b, "abc");
	ck_assert_int_eq(stat(q, &st), -1);
	/* Again, committed with another mode: replaced. */
	ck_assert_int_eq(util_output_open(p, 0640, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(write(o.fd, "xy", 2), 2);
	ck_assert_int_eq(util_output__commit(&o), 0);
	util_output__close(&o);
	ck_assert_int_eq(slurp(p, b, sizeof(b)), 2);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0640 & ~umask(022));
	/* A symbolic link to a victim: refused, the victim untouched. */
	snprintf(q, sizeof(q), "%s/victim", dir);
	put(q, "secret");
	snprintf(p, sizeof(p), "%s/link", dir);
	ck_assert_int_eq(symlink(q, p), 0);
	ck_assert_int_eq(util_output_open(p, 0, &o, err, sizeof(err)), -ELOOP);
	ck_assert_ptr_nonnull(strstr(err, "symbolic link"));
	/* A hard link to it: the name is replaced, never the victim's bytes. */
	snprintf(p, sizeof(p), "%s/hard", dir);
	ck_assert_int_eq(link(q, p), 0);
	ck_assert_int_eq(util_output_open(p, 0, &o, err, sizeof(err)), 0);
	ck_assert_int_eq(write(o.fd, "mine", 4), 4);
	ck_assert_int_eq(util_output__commit(&o), 0);
	util_output__close(&o);
	ck_assert_int_eq(slurp(q, b, sizeof(b)), 6);
	ck_assert_str_eq(b, "secret");
	ck_assert_int_eq(slurp(p, b, sizeof(b)), 4);
	/* Another user's file (needs root to make one): refused, untouched. */
	if (geteuid() == 0) {
		snprintf(p, sizeof(p), "%s/theirs", dir);
		put(p, "x");
		ck_assert_int_eq(chown(p, 65534, 65534), 0);
		ck_assert_int_eq(util_output_open(p, 0, &o, err, sizeof(err)), -EPERM);
		ck_assert_int_eq(slurp(p, b, sizeof(b)), 1);
		unlink(p);
	}
	/* Our FIFO: written in place; its reader is waited for (one opens it a moment later). */
	snprintf(p, sizeof(p), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(p, 0600), 0);
	{
		pid_t rd = fork();
		int status;

		ck_assert_int_ge(rd, 0);
		if (rd == 0) {
			char c[8];
			int r;

			usleep(200000);
			r = open(p, O_RDONLY | O_CLOEXEC);
			_exit(r >= 0 && read(r, c, sizeof(c)) == 1 ? 0 : 1);
		}
		ck_assert_int_eq(util_output_open(p, 0, &o, err, sizeof(err)), 0);
		ck_assert_str_eq(o.tmp, "");
		ck_assert_int_eq(fcntl(o.fd, F_GETFL) & O_NONBLOCK, 0);
		ck_assert_int_eq(write(o.fd, "f", 1), 1);
		ck_assert_int_eq(util_output__commit(&o), 0);
		util_output__close(&o);
		ck_assert_int_eq(waitpid(rd, &status, 0), rd);
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	/* Another user's FIFO nobody reads: refused at once, never waited for. */
	if (geteuid() == 0) {
		ck_assert_int_eq(chown(p, 65534, 65534), 0);
		ck_assert_int_eq(util_output_open(p, 0, &o, err, sizeof(err)), -EPERM);
	}
	unlink(p);
	/* A directory: refused; /dev/null (a character device): written in place. */
	snprintf(p, sizeof(p), "%s/sub", dir);
	ck_assert_int_eq(mkdir(p, 0700), 0);
	ck_assert_int_eq(util_output_open(p, 0, &o, err, sizeof(err)), -EINVAL);
	rmdir(p);
	ck_assert_int_eq(util_output_open("/dev/null", 0, &o, err, sizeof(err)), 0);
	ck_assert_str_eq(o.tmp, "");
	util_output__abandon(&o);
	ck_assert_int_eq(stat("/dev/null", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));
	/* Our own descriptors by name (links, but nobody else's): a pipe, say. */
	{
		int pp[2];
		char name[64];

		ck_assert_int_eq(pipe2(pp, O_CLOEXEC), 0);
		snprintf(name, sizeof(name), "/dev/fd/%d", pp[1]);
		ck_assert_int_eq(util_output_open(name, 0, &o, err, sizeof(err)), 0);
		ck_assert_int_eq(write(o.fd, "x", 1), 1);
		util_output__abandon(&o);
		snprintf(name, sizeof(name), "/proc/self/fd/%d", pp[0]);
		ck_assert_int_eq(util_output_open(name, 0, &o, err, sizeof(err)), -EBADF);
		close(pp[0]);
		close(pp[1]);
	}
	/* Names that are no file. */
	ck_assert_int_eq(util_output_open("/tmp/", 0, &o, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(util_output_open("..", 0, &o, err, sizeof(err)), -EINVAL);
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

/* The directories files are made in: whose, who else may write them, sticky or not. */
START_TEST(test_dir_rules)
{
	char dir[] = "/tmp/hwpmc-test-dirs.XXXXXX", p[160], q[160], err[512];
	struct util_dir d, sub;
	struct stat st;
	int fd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* Ours, 0700: private. */
	ck_assert_int_eq(util_dir__open(dir, true, &d, err, sizeof(err)), 0);
	ck_assert(!d.shared);
	/* A new file: O_EXCL (a second create fails), 0600. */
	fd = util_file_create(&d, "a", 0, 0);
	ck_assert_int_ge(fd, 0);
	close(fd);
	ck_assert_int_eq(util_file_create(&d, "a", 0, 0), -EEXIST);
	ck_assert_int_eq(util_file_create(&d, "../a", 0, 0), -EINVAL);
	ck_assert_int_eq(util_file_create(&d, "x/y", 0, 0), -EINVAL);
	snprintf(p, sizeof(p), "%s/a", dir);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	/* A new directory of ours, 0700; a name taken, whatever it is: EEXIST. */
	ck_assert_int_eq(util_dir__make(&d, "sub", 0, &sub), 0);
	ck_assert_int_eq(util_dir__make(&d, "a", 0, &sub), -EEXIST);
	snprintf(q, sizeof(q), "%s/victim", dir);
	ck_assert_int_eq(symlink("/tmp", q), 0);
	ck_assert_int_eq(util_dir__make(&d, "victim", 0, &sub), -EEXIST);
	unlink(q);
	/* Appending: to our file; never through a link, to a FIFO, or to a hard link. */
	fd = util_file_append(&sub, "m", 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "1", 1), 1);
	close(fd);
	fd = util_file_append(&sub, "m", 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "2", 1), 1);
	close(fd);
	snprintf(p, sizeof(p), "%s/sub/m", dir);
	ck_assert_int_eq(stat(p, &st), 0);
	ck_assert_int_eq(st.st_size, 2);
	snprintf(q, sizeof(q), "%s/sub/h", dir);
	ck_assert_int_eq(link(p, q), 0);
	ck_assert_int_eq(util_file_append(&sub, "m", 0), -EPERM);
	unlink(q);
	ck_assert_int_eq(symlink(p, q), 0);
	ck_assert_int_lt(util_file_append(&sub, "h", 0), 0);
	unlink(q);
	ck_assert_int_eq(mkfifo(q, 0600), 0);
	ck_assert_int_lt(util_file_append(&sub, "h", 0), 0); /* O_NONBLOCK: ENXIO, never waits */
	unlink(q);
	/* A directory of ours replaces an old one of ours (emptied first). */
	{
		struct util_dir nd;

		ck_assert_int_eq(util_dir__make(&d, ".new", 0, &nd), 0);
		fd = util_file_create(&nd, "n", 0, 0);
		ck_assert_int_ge(fd, 0);
		close(fd);
		util_dir__close(&nd);
		ck_assert_int_eq(util_dir_commit(&d, ".new", "sub"), 0);
		snprintf(p, sizeof(p), "%s/sub/n", dir);
		ck_assert_int_eq(stat(p, &st), 0);
		snprintf(p, sizeof(p), "%s/sub/m", dir);
		ck_assert_int_eq(stat(p, &st), -1);
	}
	util_dir__close(&sub);
	/* A file's commit never replaces a link, a FIFO or a directory. */
	fd = util_file_create(&d, "t", 0, 0);
	close(fd);
	snprintf(p, sizeof(p), "%s/l", dir);
	ck_assert_int_eq(symlink("/etc/passwd", p), 0);
	ck_assert_int_eq(util_file_commit(&d, "t", "l"), -ELOOP);
	ck_assert_int_eq(util_file_commit(&d, "t", "sub"), -EINVAL);
	ck_assert_int_eq(util_file_commit(&d, "t", "fresh"), 0);
	unlink(p);
	util_dir__close(&d);
	/* Writable by others and not sticky: refused; sticky: shared (new files only). */
	ck_assert_int_eq(chmod(dir, 0777), 0);
	ck_assert_int_eq(util_dir__open(dir, false, &d, err, sizeof(err)), -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "not sticky"));
	ck_assert_int_eq(chmod(dir, 01777), 0);
	ck_assert_int_eq(util_dir__open(dir, true, &d, err, sizeof(err)), -EPERM);
	ck_assert_int_eq(util_dir__open(dir, false, &d, err, sizeof(err)), 0);
	ck_assert(d.shared);
	ck_assert_int_eq(util_file_append(&d, "m", 0), -EPERM);
	util_dir__close(&d);
	/* Another user's directory (root makes one): refused, even 0755. */
	if (geteuid() == 0) {
		ck_assert_int_eq(chmod(dir, 0755), 0);
		ck_assert_int_eq(chown(dir, 65534, 65534), 0);
		ck_assert_int_eq(util_dir__open(dir, false, &d, err, sizeof(err)), -EPERM);
		ck_assert_ptr_nonnull(strstr(err, "another user"));
		ck_assert_int_eq(chown(dir, 0, 0), 0);
	}
	ck_assert_int_eq(chmod(dir, 0700), 0);
	ck_assert_int_eq(util_dir__open(dir, false, &d, err, sizeof(err)), 0);
	ck_assert_int_eq(util_dir_remove(&d, "sub"), 0);
	ck_assert_int_eq(util_file_remove(&d, "a"), 0);
	ck_assert_int_eq(util_file_remove(&d, "fresh"), 0);
	util_dir__close(&d);
	ck_assert_int_eq(util_dir__open("/nonexistent-hwpmc", false, &d, err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(rmdir(dir), 0);
	/* Modes. */
	{
		mode_t m;

		ck_assert_int_eq(util_parse_mode("0644", &m), 0);
		ck_assert_int_eq(m, 0644);
		ck_assert_int_eq(util_parse_mode("600", &m), 0);
		ck_assert_int_eq(util_parse_mode("0444", &m), -EINVAL);
		ck_assert_int_eq(util_parse_mode("4755", &m), -EINVAL);
		ck_assert_int_eq(util_parse_mode("0x1a4", &m), -EINVAL);
		ck_assert_int_eq(util_parse_mode("", &m), -EINVAL);
	}
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
	tcase_add_test(tc, test_index);
	tcase_add_test(tc, test_escape);
	tcase_add_test(tc, test_suggest);
	tcase_add_test(tc, test_parse_u64);
	tcase_add_test(tc, test_write_all);
	tcase_add_test(tc, test_output_open);
	tcase_add_test(tc, test_dir_rules);
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
