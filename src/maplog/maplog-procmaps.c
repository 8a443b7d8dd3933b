/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog-procmaps.c: parser of /proc/PID/maps lines.
 *
 * PUBLIC INTERFACES
 *   maplog_maps_parse_line() (see include/hwpmcd/maplog-proc.h)
 *   maplog_vdso_self(), maplog_vdso_v(), maplog_vdso_write() (see include/hwpmcd/maplog.h)
 *
 * IMPLEMENTATION NOTES
 *   The fixed fields are parsed by hand rather than with sscanf() or strtoull(),
 *   which accept leading blanks, signs and "0x" prefixes and saturate on overflow:
 *   a line that is not exactly what the kernel writes must be refused, not guessed
 *   at.  Every number must have at least one digit and fit in its field type.  The
 *   line is parsed into a local entry and copied out only on success, so the caller's
 *   entry is never left half-written.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/maplog-elf.h"
#include "hwpmcd/maplog-proc.h"
#include "hwpmcd/maplog.h"

/* A vDSO is a few pages; a [vdso] mapping larger than this is not one we read. */
#define VDSO_MAX_BYTES (1u << 20)

#define DELETED_SUFFIX " (deleted)"

/* Parse hex digits at *@pp up to @max; advance *@pp past them.  0 or -EINVAL. */
static int parse_hex(const char **pp, uint64_t max, uint64_t *ret_v)
{
	const char *p = *pp;
	uint64_t v = 0;
	int d;

	if (util_hex_digit(*p) < 0)
		return -EINVAL;
	while ((d = util_hex_digit(*p)) >= 0) {
		if (v > (max - (uint64_t)d) / 16)
			return -EINVAL;
		v = v * 16 + (uint64_t)d;
		p++;
	}
	*pp = p;
	*ret_v = v;
	return 0;
}

/* Parse decimal digits at *@pp; advance *@pp past them.  0 or -EINVAL. */
static int parse_dec(const char **pp, uint64_t *ret_v)
{
	const char *p = *pp;
	uint64_t v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		uint64_t d = (uint64_t)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -EINVAL;
		v = v * 10 + d;
		p++;
	}
	*pp = p;
	*ret_v = v;
	return 0;
}

/* Consume the character @c at *@pp.  0 or -EINVAL. */
static int expect(const char **pp, char c)
{
	if (**pp != c)
		return -EINVAL;
	(*pp)++;
	return 0;
}

/* One permission character: @yes, or '-'. */
static int parse_perm(const char **pp, char yes, bool *ret_v)
{
	char c = **pp;

	if (c != yes && c != '-')
		return -EINVAL;
	*ret_v = c == yes;
	(*pp)++;
	return 0;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static enum maplog_map_kind classify(const char *path, bool deleted)
{
	if (path[0] == '\0')
		return MAPLOG_MAP_ANON;
	if (path[0] != '/') {
		if (strcmp(path, "[vdso]") == 0)
			return MAPLOG_MAP_VDSO;
		if (strcmp(path, "[vsyscall]") == 0)
			return MAPLOG_MAP_VSYSCALL;
		/* Anonymous memory named with prctl(PR_SET_VMA_ANON_NAME). */
		if (has_prefix(path, "[anon:") || has_prefix(path, "[anon_shmem:"))
			return MAPLOG_MAP_ANON;
		return MAPLOG_MAP_SPECIAL;
	}
	/*
	 * Unlinked-at-birth shmem files: a memfd, MAP_SHARED|MAP_ANONYMOUS memory (shown as
	 * /dev/zero), SysV shared memory and hugetlb anonymous memory.  A file on disk with
	 * one of these names is not deleted, so it stays a file.
	 */
	if (deleted) {
		if (has_prefix(path, "/memfd:"))
			return MAPLOG_MAP_MEMFD;
		if (strcmp(path, "/dev/zero") == 0 || has_prefix(path, "/SYSV") ||
		    strcmp(path, "/anon_hugepage") == 0)
			return MAPLOG_MAP_ANON;
	}
	return MAPLOG_MAP_FILE;
}

int maplog_maps_parse_line(const char *line, struct maplog_maps_entry *ret_entry)
{
	struct maplog_maps_entry e;
	const char *p = line;
	uint64_t v;
	size_t len;
	int r;

	if (!line)
		return -EINVAL;
	memset(&e, 0, sizeof(e));

	r = parse_hex(&p, UINT64_MAX, &e.start);
	if (r == 0)
		r = expect(&p, '-');
	if (r == 0)
		r = parse_hex(&p, UINT64_MAX, &e.end);
	if (r == 0)
		r = expect(&p, ' ');
	if (r == 0)
		r = parse_perm(&p, 'r', &e.r);
	if (r == 0)
		r = parse_perm(&p, 'w', &e.w);
	if (r == 0)
		r = parse_perm(&p, 'x', &e.x);
	if (r < 0)
		return r;
	if (*p != 's' && *p != 'p')
		return -EINVAL;
	e.shared = *p++ == 's';
	r = expect(&p, ' ');
	if (r == 0)
		r = parse_hex(&p, UINT64_MAX, &e.pgoff);
	if (r == 0)
		r = expect(&p, ' ');
	if (r == 0)
		r = parse_hex(&p, UINT32_MAX, &v);
	if (r < 0)
		return r;
	e.dev_major = (uint32_t)v;
	r = expect(&p, ':');
	if (r == 0)
		r = parse_hex(&p, UINT32_MAX, &v);
	if (r < 0)
		return r;
	e.dev_minor = (uint32_t)v;
	r = expect(&p, ' ');
	if (r == 0)
		r = parse_dec(&p, &e.inode);
	if (r < 0)
		return r;
	if (e.start >= e.end)
		return -EINVAL;

	/* After the inode: end of line, or at least one space, the padding and the name. */
	if (*p != '\0' && *p != '\n' && *p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	len = strlen(p);
	if (len > 0 && p[len - 1] == '\n')
		len--;
	if (memchr(p, '\n', len))
		return -EINVAL;
	if (len >= strlen(DELETED_SUFFIX) &&
	    memcmp(p + len - strlen(DELETED_SUFFIX), DELETED_SUFFIX, strlen(DELETED_SUFFIX)) == 0) {
		len -= strlen(DELETED_SUFFIX);
		e.deleted = true;
	}
	if (len >= sizeof(e.path))
		return -ENAMETOOLONG;
	memcpy(e.path, p, len);
	e.path[len] = '\0';
	e.kind = classify(e.path, e.deleted);
	*ret_entry = e;
	return 0;
}

int maplog_vdso_self(const void **ret_image, size_t *ret_size)
{
	uint64_t base = getauxval(AT_SYSINFO_EHDR);
	FILE *f;
	char *line = NULL;
	size_t cap = 0, size = 0;

	if (base == 0)
		return -ENOENT; /* valgrind gives its client none */
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		uint64_t start, end;

		if (!strstr(line, "[vdso]"))
			continue;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &start, &end) == 2 && start == base &&
		    end > start && end - start <= VDSO_MAX_BYTES)
			size = (size_t)(end - start);
		break;
	}
	free(line);
	(void)fclose(f);
	if (size == 0)
		return -ENOENT;
	*ret_image = (const void *)(uintptr_t)base;
	*ret_size = size;
	return 0;
}

int maplog_vdso_v(uint64_t *ret_v)
{
	struct maplog_elf_info info;
	const void *img;
	size_t size;
	int r = maplog_vdso_self(&img, &size);

	if (r < 0)
		return r;
	r = maplog_elf_info_mem(img, size, &info);
	if (r < 0)
		return r;
	*ret_v = info.v;
	return 0;
}

/* The vDSO's MAP_IN path and build id (maplog_vdso_set_path()); a MAP_IN takes 1023 bytes. */
static char vdso_path[1024] = "[vdso]";
static uint8_t vdso_id[MAPLOG_BUILD_ID_MAX];
static size_t vdso_idlen;

int maplog_vdso_set_path(const char *path, const uint8_t *id, size_t idlen)
{
	if (!path) {
		snprintf(vdso_path, sizeof(vdso_path), "[vdso]");
		vdso_idlen = 0;
		return 0;
	}
	if (path[0] != '/' || idlen > sizeof(vdso_id))
		return -EINVAL;
	if (strlen(path) >= sizeof(vdso_path))
		return -ENAMETOOLONG;
	snprintf(vdso_path, sizeof(vdso_path), "%s", path);
	memcpy(vdso_id, id, idlen);
	vdso_idlen = idlen;
	return 0;
}

const char *maplog_vdso_path(const uint8_t **ret_id, size_t *ret_idlen)
{
	*ret_id = vdso_id;
	*ret_idlen = vdso_idlen;
	return vdso_path;
}

int maplog_vdso_write(int fd)
{
	const void *img;
	size_t size;
	int r = maplog_vdso_self(&img, &size);

	return r < 0 ? r : util_write_all(fd, img, size, NULL);
}
