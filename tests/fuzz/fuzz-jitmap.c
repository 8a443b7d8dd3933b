/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fuzz-jitmap.c: libFuzzer harness for the JIT maps (perf-PID.map) that users'
 * processes write and root's daemon and recorder copy (maplog-jit.c), and that
 * reports read (report-sym.c).
 *
 * IMPLEMENTATION NOTES
 *   The input's first byte chooses the room of the copy (0..255 x 64 bytes, 0:
 *   1 MiB) and its second where a hole of 1 MiB goes in the file (0..255 x 16
 *   bytes into the rest, 255: none); the rest is the map's bytes, written to a
 *   temporary file around that hole (a sparse file, as a hostile user makes).
 *   maplog_jit_copy() copies it into a second file.  Invariants: the copy is at
 *   most the room, it is whole lines each ending in '\n', every one of them
 *   maplog_jit_parse_line() takes, no more bytes were read than the file's data
 *   (the hole is never read), and the copy again copies to itself unchanged, with
 *   no bad line.  Then the report's reader builds a symbol table of the copy and
 *   of the original (report_symtab__perfmap()).  Whatever fails aborts.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwpmcd/maplog-jit.h"
#include "hwpmcd/report-sym.h"

#define HOLE (1 << 20)

static char dir[] = "/tmp/fuzz-jitmap.XXXXXX";
static char in_path[64], out_path[64], again_path[64];

static char *slurp(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, len = 0, n;

	if (!f)
		abort();
	do {
		if (len + 65536 > cap) {
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap + 1);
			if (!buf)
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n);
	fclose(f);
	buf[len] = '\0';
	*ret_len = len;
	return buf;
}

static int copy(const char *from, const char *to, uint64_t room, struct maplog_jit_copied *cp)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out, r;

	if (in < 0)
		abort();
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		abort();
	r = maplog_jit_copy(in, out, room, cp);
	close(in);
	close(out);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct maplog_jit_copied cp, cp2;
	struct report_symtab *t = NULL;
	uint64_t room;
	size_t hole_at, len, len2;
	char *got, *got2;
	int fd;

	static bool ready;

	if (!ready) {
		if (!mkdtemp(dir))
			abort();
		ready = true;
		snprintf(in_path, sizeof(in_path), "%s/in", dir);
		snprintf(out_path, sizeof(out_path), "%s/out", dir);
		snprintf(again_path, sizeof(again_path), "%s/again", dir);
	}
	if (size < 2)
		return 0;
	room = data[0] ? (uint64_t)data[0] * 64 : 1u << 20;
	hole_at = data[1] == 255 ? SIZE_MAX : (size_t)data[1] * 16;
	data += 2;
	size -= 2;
	fd = open(in_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	if (hole_at >= size) {
		if (size && write(fd, data, size) != (ssize_t)size)
			abort();
	} else {
		if ((hole_at && write(fd, data, hole_at) != (ssize_t)hole_at) ||
		    pwrite(fd, data + hole_at, size - hole_at, (off_t)hole_at + HOLE) !=
			    (ssize_t)(size - hole_at))
			abort();
	}
	close(fd);
	if (copy(in_path, out_path, room, &cp) < 0)
		abort();
	got = slurp(out_path, &len);
	if (len != cp.written || len > room)
		abort();
	/* Data is read in file system blocks around the input's bytes, never the hole. */
	if (cp.read > size + 2 * 65536)
		abort();
	for (size_t o = 0; o < len;) {
		char *nl = memchr(got + o, '\n', len - o);
		uint64_t s, z;
		size_t name;

		if (!nl || !maplog_jit_parse_line(got + o, (size_t)(nl - got - o), &s, &z, &name))
			abort();
		o = (size_t)(nl - got) + 1;
	}
	if (copy(out_path, again_path, room, &cp2) < 0 || cp2.bad_lines || cp2.truncated)
		abort();
	got2 = slurp(again_path, &len2);
	if (len2 != len || memcmp(got, got2, len) != 0)
		abort();
	free(got);
	free(got2);
	if (report_symtab__perfmap(out_path, false, NULL, &t) == 0)
		report_symtab__free(t);
	t = NULL;
	if (report_symtab__perfmap(in_path, false, NULL, &t) == 0)
		report_symtab__free(t);
	return 0;
}
