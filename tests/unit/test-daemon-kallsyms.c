/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-daemon-kallsyms.c: Check suite for src/daemon/daemon-kallsyms.c: the
 * kernel PC set, the kallsyms table, the compact selection and the rewrite.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "daemon-int.h"

/* A small /proc/kallsyms: unsorted, with data symbols, aliases, a module, junk. */
static const char sample[] =
	"ffffffff81000000 T srso_alias_untrain_ret\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81000000 T _text\n"
	"ffffffff81000100 T entry_SYSCALL_64\n"
	"ffffffff81000200 t syscall_return_via_sysret\n"
	"ffffffff82000000 D some_data\n"
	"ffffffff81000400 W weak_one\n"
	"ffffffff81000300 T do_syscall_64\n"
	"ffffffff81000300 t do_syscall_64_alias\n"
	"not a line\n"
	"ffffffff81000500 x bad_type\n"
	"ffffffff81000600\n"
	"ffffffff81000700 T \n"
	"ffffffff83000000 b bss_thing\n"
	"ffffffff81000800 T _etext\n"
	"ffffffffc0001000 t ext4_fill_super\t[ext4]\n"
	"ffffffffc0001200 t ext4_put_super\t[ext4]\n"
	"ffffffffc0000800 T ext4_init\t[ext4]";	/* no final newline */

static struct daemon_ksyms *parse(const char *text)
{
	struct daemon_ksyms *k = NULL;
	char *buf = strdup(text);

	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(daemon_ksyms__parse_take(buf, strlen(text), &k), 0);
	return k;
}

static const char *line(const struct daemon_ksyms *k, size_t i, char *out, size_t outsize)
{
	snprintf(out, outsize, "%.*s", (int)k->sym[i].len, k->text + k->sym[i].off);
	return out;
}

START_TEST(test_parse_sorts_text_symbols)
{
	struct daemon_ksyms *k = parse(sample);
	char b[128];

	ck_assert_uint_eq(k->n, 12);
	/* Sorted by address, aliases in the kernel's order, lines verbatim. */
	ck_assert_str_eq(line(k, 0, b, sizeof(b)), "ffffffff81000000 T srso_alias_untrain_ret");
	ck_assert_str_eq(line(k, 1, b, sizeof(b)), "ffffffff81000000 T _stext");
	ck_assert_str_eq(line(k, 2, b, sizeof(b)), "ffffffff81000000 T _text");
	ck_assert_str_eq(line(k, 3, b, sizeof(b)), "ffffffff81000100 T entry_SYSCALL_64");
	ck_assert_str_eq(line(k, 5, b, sizeof(b)), "ffffffff81000300 T do_syscall_64");
	ck_assert_str_eq(line(k, 6, b, sizeof(b)), "ffffffff81000300 t do_syscall_64_alias");
	ck_assert_str_eq(line(k, 7, b, sizeof(b)), "ffffffff81000400 W weak_one");
	ck_assert_str_eq(line(k, 8, b, sizeof(b)), "ffffffff81000800 T _etext");
	ck_assert_str_eq(line(k, 9, b, sizeof(b)), "ffffffffc0000800 T ext4_init\t[ext4]");
	ck_assert_str_eq(line(k, 11, b, sizeof(b)), "ffffffffc0001200 t ext4_put_super\t[ext4]");
	for (size_t i = 1; i < k->n; i++)
		ck_assert_uint_le(k->sym[i - 1].addr, k->sym[i].addr);
	daemon_ksyms__free(k);
}
END_TEST

START_TEST(test_parse_hidden_addresses)
{
	struct daemon_ksyms *k = NULL;
	char *buf = strdup("0000000000000000 T _stext\n0000000000000000 t foo\n"
			   "ffffffff81000000 D data_is_not_text\n");

	ck_assert_int_eq(daemon_ksyms__parse_take(buf, strlen(buf), &k), -ENODATA);
	ck_assert_ptr_null(k);
	buf = strdup("");
	ck_assert_int_eq(daemon_ksyms__parse_take(buf, 0, &k), -ENODATA);
	ck_assert_int_eq(daemon_ksyms__read("/nonexistent/kallsyms", &k), -ENOENT);
	ck_assert_int_eq(daemon_ksyms_probe("/nonexistent/kallsyms"), -ENOENT);
}
END_TEST

static void write_tmp(char *path, const char *text)
{
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

START_TEST(test_probe)
{
	char hidden[] = "/tmp/test-daemon-kallsyms-XXXXXX", shown[] = "/tmp/test-daemon-kallsyms-XXXXXX";

	/* The main thread's cheap question: are addresses shown at all? */
	write_tmp(hidden, "0000000000000000 A fixed_percpu_data\n0000000000000000 T _stext\n"
			  "0000000000000000 t foo\t[ext4]\n");
	write_tmp(shown, "0000000000000000 A fixed_percpu_data\nffffffff81000000 T _stext\n");
	ck_assert_int_eq(daemon_ksyms_probe(hidden), -ENODATA);
	ck_assert_int_eq(daemon_ksyms_probe(shown), 0);
	unlink(hidden);
	unlink(shown);
}
END_TEST

static char *compact(const struct daemon_ksyms *k, const uint64_t *pcs, size_t n, size_t *ret_n)
{
	char *buf = NULL, *s;
	size_t len = 0;

	ck_assert_int_eq(daemon_ksyms__compact(k, pcs, n, &buf, &len, ret_n), 0);
	s = malloc(len + 1);
	ck_assert_ptr_nonnull(s);
	memcpy(s, buf, len);
	s[len] = '\0';
	free(buf);
	return s;
}

START_TEST(test_compact_selection)
{
	struct daemon_ksyms *k = parse(sample);
	size_t n;
	char *s;

	/* No PC: only the three boot markers. */
	s = compact(k, NULL, 0, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(s, "ffffffff81000000 T _stext\n"
			    "ffffffff81000000 T _text\n"
			    "ffffffff81000800 T _etext\n");
	free(s);

	/* A PC inside do_syscall_64: its whole alias group and the next symbol. */
	s = compact(k, (uint64_t[]){ 0xffffffff81000310 }, 1, &n);
	ck_assert_str_eq(s, "ffffffff81000000 T _stext\n"
			    "ffffffff81000000 T _text\n"
			    "ffffffff81000300 T do_syscall_64\n"
			    "ffffffff81000300 t do_syscall_64_alias\n"
			    "ffffffff81000400 W weak_one\n"
			    "ffffffff81000800 T _etext\n");
	ck_assert_uint_eq(n, 6);
	free(s);

	/*
	 * A return address right at a symbol's start also keeps the caller (PC - 1);
	 * the group at the first address comes whole; a PC in the last symbol has
	 * no next one; a PC below every symbol adds nothing.  Order does not matter.
	 */
	s = compact(k, (uint64_t[]){ 0xffffffffc0001300, 0xffffffff81000200, 0xffffffff81000004,
				     0xffff800000000000 }, 4, &n);
	ck_assert_str_eq(s, "ffffffff81000000 T srso_alias_untrain_ret\n"
			    "ffffffff81000000 T _stext\n"
			    "ffffffff81000000 T _text\n"
			    "ffffffff81000100 T entry_SYSCALL_64\n"
			    "ffffffff81000200 t syscall_return_via_sysret\n"
			    "ffffffff81000300 T do_syscall_64\n"
			    "ffffffff81000300 t do_syscall_64_alias\n"
			    "ffffffff81000800 T _etext\n"
			    "ffffffffc0001200 t ext4_put_super\t[ext4]\n");
	free(s);
	daemon_ksyms__free(k);
}
END_TEST

START_TEST(test_pcset)
{
	struct daemon_pcset s;
	size_t n;

	ck_assert_int_eq(daemon_pcset__init(&s, 10000), 0);
	ck_assert_int_eq(daemon_pcset__add(&s, 0xffffffff81000010), 1);
	ck_assert_int_eq(daemon_pcset__add(&s, 0xffffffff81000010), 0);
	ck_assert_int_eq(daemon_pcset__add(&s, 0), 0);
	/* Past the first capacity: the set doubles and stays exact. */
	for (uint64_t i = 0; i < 9999; i++)
		ck_assert_int_eq(daemon_pcset__add(&s, 0xffffffff90000000 - i * 16), 1);
	ck_assert_uint_eq(s.n, 10000);
	ck_assert(!s.full);
	ck_assert_int_eq(daemon_pcset__add(&s, 0xffffffff81000010), 0);
	/* Full: further PCs are counted, not kept. */
	ck_assert_int_eq(daemon_pcset__add(&s, 0xffffffffa0000000), -E2BIG);
	ck_assert(s.full);
	ck_assert_int_eq(daemon_pcset__add(&s, 0xffffffffa0000010), -E2BIG);
	ck_assert_uint_eq(s.refused, 2);
	n = daemon_pcset__sort(&s);
	ck_assert_uint_eq(n, 10000);
	for (size_t i = 1; i < n; i++)
		ck_assert_uint_lt(s.slot[i - 1], s.slot[i]);
	ck_assert_uint_eq(s.slot[0], 0xffffffff81000010);
	daemon_pcset__exit(&s);
}
END_TEST

static size_t slurp(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	return (size_t)n;
}

START_TEST(test_write_and_rewrite)
{
	struct daemon_ksyms *k = parse(sample);
	char path[] = "/tmp/test-daemon-kallsyms-XXXXXX", got[4096], *small;
	int fd = mkstemp(path), afd, pfd[2];
	size_t n;

	ck_assert_int_ge(fd, 0);
	ck_assert(daemon_ksyms_rewritable(fd));
	ck_assert_int_eq(daemon_ksyms__write_all(k, fd), 0);
	ck_assert_uint_eq(slurp(fd, got, sizeof(got)), k->full_bytes);
	ck_assert(strncmp(got, "ffffffff81000000 T srso_alias_untrain_ret\n", 42) == 0);
	ck_assert(!daemon_ksyms_rewritable(fd)); /* no longer at offset 0 */

	small = compact(k, (uint64_t[]){ 0xffffffff81000150 }, 1, &n);
	ck_assert_int_eq(daemon_ksyms_rewrite(fd, small, strlen(small)), 0);
	ck_assert_uint_eq(slurp(fd, got, sizeof(got)), strlen(small));
	ck_assert_str_eq(got, small);
	ck_assert_str_eq(got, "ffffffff81000000 T _stext\n"
			      "ffffffff81000000 T _text\n"
			      "ffffffff81000100 T entry_SYSCALL_64\n"
			      "ffffffff81000200 t syscall_return_via_sysret\n"
			      "ffffffff81000800 T _etext\n");
	free(small);

	/* O_APPEND or a pipe cannot be rewritten in place. */
	afd = open(path, O_WRONLY | O_APPEND | O_TRUNC | O_CLOEXEC);
	ck_assert_int_ge(afd, 0);
	ck_assert(!daemon_ksyms_rewritable(afd));
	close(afd);
	ck_assert_int_eq(pipe2(pfd, O_CLOEXEC), 0);
	ck_assert(!daemon_ksyms_rewritable(pfd[1]));
	close(pfd[0]);
	close(pfd[1]);
	close(fd);
	unlink(path);
	daemon_ksyms__free(k);
}
END_TEST

START_TEST(test_read_proc_kallsyms)
{
	struct daemon_ksyms *k = NULL;
	int r = daemon_ksyms__read("/proc/kallsyms", &k);
	size_t unsorted = 0;

	/* Unprivileged or kptr_restrict: zeros; otherwise a sorted table with _stext. */
	if (r == -ENODATA || r == -ENOENT || r == -EACCES)
		return;
	ck_assert_int_eq(r, 0);
	ck_assert_uint_gt(k->n, 0);
	for (size_t i = 1; i < k->n; i++)
		unsorted += k->sym[i - 1].addr > k->sym[i].addr;
	ck_assert_uint_eq(unsorted, 0);
	daemon_ksyms__free(k);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("daemon-kallsyms");
	TCase *tc = tcase_create("kallsyms");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_parse_sorts_text_symbols);
	tcase_add_test(tc, test_parse_hidden_addresses);
	tcase_add_test(tc, test_probe);
	tcase_add_test(tc, test_compact_selection);
	tcase_add_test(tc, test_pcset);
	tcase_add_test(tc, test_write_and_rewrite);
	tcase_add_test(tc, test_read_proc_kallsyms);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
