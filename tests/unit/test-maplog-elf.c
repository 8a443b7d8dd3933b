/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-maplog-elf.c: Check suite for src/maplog/maplog-elf.c (the MAP_IN pl_start rule
 * of pmclog-format.md 11.5, ELF info) and src/maplog/maplog-procmaps.c (/proc/PID/maps).
 *
 * The rule is proven against real files: main() builds, into a temporary directory,
 * executables and shared libraries from tests/data/elf/ with GNU ld and LLD layouts.
 * Executables are run and print the run-time address of a known function and their
 * /proc/self/maps; shared libraries are dlopen()ed by this process, which reads its
 * own /proc/self/maps.  The first executable mapping of the object gives pl_start,
 * and pmcstat's arithmetic (link address = run-time address - (pl_start - V)) must
 * then give the function's st_value from .symtab.  A case whose compiler or linker is
 * not installed is skipped with a message on stderr; a build that fails with the tool
 * present is a test failure.
 */
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hwpmcd/common.h"
#include "hwpmcd/maplog-elf.h"
#include "hwpmcd/maplog-proc.h"

#if defined(TEST_DATA_DIR)
#define ELF_SRC_DIR TEST_DATA_DIR "/elf"
#elif defined(TEST_SRC_DIR)
#define ELF_SRC_DIR TEST_SRC_DIR "/data/elf"
#else
#error "define TEST_DATA_DIR (tests/data) or TEST_SRC_DIR (tests)"
#endif

/* Known build ids, passed to the linkers as --build-id=0x... */
#define ID20 "0123456789abcdef0123456789abcdef01234567"
#define ID16 "00112233445566778899aabbccddeeff"
#define ID32 "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

#define OUT_MAX (256 * 1024)

enum obj_id {
	OBJ_GNU_PIE,
	OBJ_GNU_NOPIE,
	OBJ_GNU_CLASSIC,
	OBJ_GNU_LIB,
	OBJ_LLD_PIE,
	OBJ_LLD_NOPIE,
	OBJ_LLD_LIB,
	OBJ_GNU_STATIC,
	OBJ_FREE32,
	OBJ_MAX
};

enum obj_state {
	OBJ_NOT_BUILT = 0,
	OBJ_BUILT,
	OBJ_SKIPPED,
	OBJ_FAILED,
	OBJ_STATE_MAX
};

struct obj {
	const char *name;  /* file name in the temporary directory */
	const char *src;   /* file name in tests/data/elf */
	const char *cc;	   /* compiler driver */
	const char *flags; /* space-separated driver flags */
	bool lld;	   /* needs ld.lld */
	bool lib;	   /* dlopen() it instead of running it */
	uint16_t e_type;
	const char *fn; /* function resolved through the rule */
	enum obj_state state;
	char why[256];
	char path[512];
};

#define PROG(nm, drv, fl, use_lld, type)                                                      \
	{ .name = (nm), .src = "elf-prog.c", .cc = (drv), .flags = (fl), .lld = (use_lld),  \
	  .e_type = (type), .fn = "maplog_test_prog_fn" }
#define LIB(nm, drv, fl, use_lld)                                                             \
	{ .name = (nm), .src = "elf-lib.c", .cc = (drv), .flags = (fl), .lld = (use_lld),   \
	  .lib = true, .e_type = ET_DYN, .fn = "maplog_test_lib_fn" }

static struct obj objs[OBJ_MAX] = {
	[OBJ_GNU_PIE] = PROG("gnu-pie", "gcc", "-O1 -g0 -fPIE -pie -Wl,--build-id=0x" ID20, false,
			     ET_DYN),
	[OBJ_GNU_NOPIE] = PROG("gnu-nopie", "gcc", "-O1 -g0 -fno-pie -no-pie -Wl,--build-id=none",
			       false, ET_EXEC),
	[OBJ_GNU_CLASSIC] = PROG("gnu-classic", "gcc",
				 "-O1 -g0 -fno-pie -no-pie -Wl,-z,noseparate-code", false, ET_EXEC),
	[OBJ_GNU_LIB] = LIB("gnu-lib.so", "gcc", "-O1 -g0 -fPIC -shared -Wl,--build-id=0x" ID16,
			    false),
	[OBJ_LLD_PIE] = PROG("lld-pie", "clang",
			     "-O1 -g0 -fPIE -pie -fuse-ld=lld -Wl,-z,noseparate-code "
			     "-Wl,--build-id=0x" ID32,
			     true, ET_DYN),
	[OBJ_LLD_NOPIE] = PROG("lld-nopie", "clang",
			       "-O1 -g0 -fno-pie -no-pie -fuse-ld=lld -Wl,-z,noseparate-code", true,
			       ET_EXEC),
	[OBJ_LLD_LIB] = LIB("lld-lib.so", "clang",
			    "-O1 -g0 -fPIC -shared -fuse-ld=lld -Wl,-z,noseparate-code", true),
	[OBJ_GNU_STATIC] = PROG("gnu-static", "gcc", "-O1 -g0 -static -Wl,--build-id=none", false,
				ET_EXEC),
	[OBJ_FREE32] = { .name = "free32",
			 .src = "elf-free32.c",
			 .cc = "clang",
			 .flags = "--target=i386-linux-gnu -O1 -g0 -ffreestanding -fno-pic "
				  "-fno-pie -nostdlib -static -fuse-ld=lld -Wl,-e,_start "
				  "-Wl,-z,noseparate-code -Wl,--build-id=0x" ID20,
			 .lld = true,
			 .e_type = ET_EXEC,
			 .fn = "maplog_test_free32_fn" },
};

/* Short enough that every path made from it fits in PATH_MAX. */
static char tmpdir[256];

/* ---- helpers: tools, processes, files ---------------------------------------------- */

static bool have_tool(const char *name)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		if (n > 0 && snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, name) <
				     (int)sizeof(buf) &&
		    access(buf, X_OK) == 0)
			return true;
		path += n;
		if (*path == ':')
			path++;
	}
	return false;
}

/*
 * Run @argv (argv[0] searched in PATH).  The child's stdout goes to @out (at most
 * @outsize - 1 bytes, NUL-terminated) or, if @out is NULL, like its stderr to the file
 * @logpath.  Returns the exit status, or -1 if it did not exit normally.
 */
static int run(char *const argv[], const char *logpath, char *out, size_t outsize)
{
	int p[2] = { -1, -1 };
	size_t used = 0;
	pid_t pid;
	int status;

	if (out && pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(logpath ? logpath : "/dev/null",
			      O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

		if (fd < 0 || dup2(fd, 2) < 0 || dup2(out ? p[1] : fd, 1) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	if (out) {
		close(p[1]);
		for (;;) {
			ssize_t n = read(p[0], out + used, outsize - 1 - used);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			used += (size_t)n;
			if (used == outsize - 1)
				break;
		}
		out[used] = '\0';
		close(p[0]);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void build_one(struct obj *o)
{
	char flags[512];
	char cc[32];
	char src[PATH_MAX];
	char log[PATH_MAX];
	char *argv[32];
	size_t argc = 0;
	int st;

	if (!have_tool(o->cc) || (o->lld && !have_tool("ld.lld"))) {
		o->state = OBJ_SKIPPED;
		snprintf(o->why, sizeof(o->why), "'%s' not found in PATH",
			 have_tool(o->cc) ? "ld.lld" : o->cc);
		return;
	}
	snprintf(o->path, sizeof(o->path), "%s/%s", tmpdir, o->name);
	snprintf(src, sizeof(src), "%s/%s", ELF_SRC_DIR, o->src);
	snprintf(log, sizeof(log), "%s/%s.log", tmpdir, o->name);
	snprintf(flags, sizeof(flags), "%s", o->flags);
	snprintf(cc, sizeof(cc), "%s", o->cc);
	argv[argc++] = cc;
	for (char *tok = strtok(flags, " "); tok && argc < ARRAY_SIZE(argv) - 4;
	     tok = strtok(NULL, " "))
		argv[argc++] = tok;
	argv[argc++] = (char *)"-o";
	argv[argc++] = o->path;
	argv[argc++] = src;
	argv[argc] = NULL;
	st = run(argv, log, NULL, 0);
	if (st != 0) {
		FILE *f = fopen(log, "r");
		size_t n = 0;

		o->state = OBJ_FAILED;
		n = (size_t)snprintf(o->why, sizeof(o->why), "'%s' exited with %d: ", o->cc, st);
		if (f) {
			n += fread(o->why + n, 1, sizeof(o->why) - 1 - n, f);
			fclose(f);
		}
		o->why[n] = '\0';
		return;
	}
	o->state = OBJ_BUILT;
}

static void build_all(void)
{
	char *p;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-maplog-elf-XXXXXX");
	p = mkdtemp(tmpdir);
	if (!p) {
		for (size_t i = 0; i < OBJ_MAX; i++) {
			objs[i].state = OBJ_FAILED;
			snprintf(objs[i].why, sizeof(objs[i].why), "mkdtemp: %s", strerror(errno));
		}
		return;
	}
	/* Map entries name the canonical path; make the directory canonical too. */
	p = realpath(tmpdir, NULL);
	if (p) {
		snprintf(tmpdir, sizeof(tmpdir), "%s", p);
		free(p);
	}
	for (size_t i = 0; i < OBJ_MAX; i++)
		build_one(&objs[i]);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_all(void)
{
	if (tmpdir[0])
		(void)nftw(tmpdir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Returns the object if it is built; NULL (after printing why) if its tools are missing. */
static struct obj *need_obj(enum obj_id id)
{
	struct obj *o = &objs[id];

	/*
	 * scripts/bootstrap installs gcc, clang and lld, so a missing tool is a broken
	 * test machine: fail and say so rather than pass without checking.
	 */
	ck_assert_msg(o->state != OBJ_SKIPPED, "%s cannot be built: %s (run scripts/bootstrap)",
		      o->name, o->why);
	ck_assert_msg(o->state == OBJ_BUILT, "building %s failed: %s", o->name, o->why);
	return o;
}

static uint64_t pagesize(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* st_value of the symbol @name in the .symtab of @path, read with libelf. */
static uint64_t symtab_value(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	uint64_t value = 0;
	bool found = false;
	Elf *elf;
	int fd;

	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;

		ck_assert_ptr_nonnull(gelf_getshdr(scn, &sh));
		if (sh.sh_type != SHT_SYMTAB || sh.sh_entsize == 0)
			continue;
		data = elf_getdata(scn, NULL);
		ck_assert_ptr_nonnull(data);
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			ck_assert_ptr_nonnull(gelf_getsym(data, (int)i, &sym));
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0 && GELF_ST_TYPE(sym.st_info) == STT_FUNC) {
				value = sym.st_value;
				found = true;
				break;
			}
		}
	}
	elf_end(elf);
	close(fd);
	ck_assert_msg(found, "%s: no STT_FUNC '%s' in .symtab", path, name);
	return value;
}

static bool read_file(const char *path, char *buf, size_t size)
{
	size_t used = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	used = fread(buf, 1, size - 1, f);
	buf[used] = '\0';
	fclose(f);
	return used < size - 1;
}

/*
 * Parse every line of the maps text @maps (each must parse) and return the first
 * executable mapping of @path in *ret.  Fails the test if there is none.
 */
static void first_exec_mapping(const char *maps, const char *path, struct maplog_maps_entry *ret)
{
	static struct maplog_maps_entry e;
	bool found = false;
	const char *line = maps;

	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[MAPLOG_MAPS_PATH_MAX + 256];

		ck_assert_uint_lt(len, sizeof(buf));
		memcpy(buf, line, len);
		buf[len] = '\0';
		ck_assert_msg(maplog_maps_parse_line(buf, &e) == 0, "cannot parse '%s'", buf);
		if (!found && e.x && e.kind == MAPLOG_MAP_FILE && strcmp(e.path, path) == 0) {
			*ret = e;
			found = true;
		}
		line += len + (nl ? 1 : 0);
	}
	ck_assert_msg(found, "no executable mapping of %s in:\n%s", path, maps);
}

/*
 * The heart of the suite: compute pl_start for the executable mapping @m of @o (its
 * function is at run-time address @runtime) through every API and check pmcstat's
 * arithmetic against .symtab.  Returns pl_start; *ret_info gets the ELF info.
 */
static uint64_t verify(const struct obj *o, const struct maplog_maps_entry *m, uint64_t runtime,
		       struct maplog_elf_info *ret_info)
{
	static struct maplog_elf_info info, info2;
	uint64_t pl = 1, bias = 1, pl2 = 2, bias2 = 2, link;
	Elf *elf;
	int fd;

	fd = open(o->path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(maplog_elf_info_fd(fd, &info), 0);
	ck_assert_uint_eq(info.e_type, o->e_type);
	ck_assert(info.has_exec_section);
	ck_assert_int_eq(maplog_elf_info_pl_start(&info, m->start, m->pgoff, pagesize(), true, &pl,
						  &bias),
			 0);

	/* The fd and Elf-handle entry points agree with the cached-info one. */
	ck_assert_int_eq(maplog_elf_pl_start(fd, m->start, m->pgoff, pagesize(), true, &pl2,
					     &bias2),
			 0);
	ck_assert_uint_eq(pl2, pl);
	ck_assert_uint_eq(bias2, bias);
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	pl2 = bias2 = 0;
	ck_assert_int_eq(maplog_elf_pl_start_elf(elf, m->start, m->pgoff, pagesize(), true, &pl2,
						 NULL),
			 0);
	ck_assert_uint_eq(pl2, pl);
	ck_assert_int_eq(maplog_elf_info_elf(elf, &info2), 0);
	ck_assert_int_eq(memcmp(&info, &info2, sizeof(info)), 0);
	elf_end(elf);
	close(fd);

	/* pmcstat: link address = pc - (pl_start - V). */
	link = runtime - (pl - info.v);
	ck_assert_msg(link == symtab_value(o->path, o->fn),
		      "%s: pc 0x%llx - (pl_start 0x%llx - V 0x%llx) = 0x%llx, st_value 0x%llx",
		      o->name, (unsigned long long)runtime, (unsigned long long)pl,
		      (unsigned long long)info.v, (unsigned long long)link,
		      (unsigned long long)symtab_value(o->path, o->fn));
	ck_assert_uint_eq(pl - info.v, bias);
	/* The PC lies in the range pmcstat gives the image: [pi_start, pi_end) + bias. */
	ck_assert_uint_ge(runtime, info.exec_start + bias);
	ck_assert_uint_lt(runtime, info.exec_end + bias);
	if (info.e_type == ET_EXEC)
		ck_assert_uint_eq(bias, 0);
	else
		ck_assert_uint_eq(bias % pagesize(), 0);
	*ret_info = info;
	return pl;
}

/* Run executable @o, returning its function's address and its first exec mapping. */
static void run_exec(struct obj *o, uint64_t *ret_fn, struct maplog_maps_entry *ret_m)
{
	static char out[OUT_MAX];
	char *argv[] = { o->path, NULL };
	unsigned long long fn;
	char log[PATH_MAX];

	ck_assert(!o->lib);
	snprintf(log, sizeof(log), "%s/%s.run.log", tmpdir, o->name);
	ck_assert_int_eq(run(argv, log, out, sizeof(out)), 0);
	ck_assert_msg(sscanf(out, "fn 0x%llx\n", &fn) == 1, "%s printed '%.80s'", o->name, out);
	first_exec_mapping(strchr(out, '\n') + 1, o->path, ret_m);
	*ret_fn = fn;
}

/* dlopen() shared object @o in this process; its function and first exec mapping. */
static void *open_lib(const struct obj *o, uint64_t *ret_fn, struct maplog_maps_entry *ret_m)
{
	static char maps[OUT_MAX];
	void *h, *fn;

	ck_assert(o->lib);
	h = dlopen(o->path, RTLD_NOW | RTLD_LOCAL);
	ck_assert_msg(h != NULL, "dlopen %s: %s", o->path, dlerror());
	fn = dlsym(h, o->fn);
	ck_assert_ptr_nonnull(fn);
	ck_assert(read_file("/proc/self/maps", maps, sizeof(maps)));
	first_exec_mapping(maps, o->path, ret_m);
	*ret_fn = (uint64_t)(uintptr_t)fn;
	return h;
}

/* ---- the rule on real files ------------------------------------------------------- */

/*
 * What FreeBSD main's rule means for a real file: V is the first executable
 * PT_LOAD's p_vaddr & -p_align, and pl_start is where that lands at run time, the
 * start of the first executable mapping (what FreeBSD's kernel writes), whatever
 * the linker's layout.  All these objects use 4 KiB alignment.
 */
static void assert_freebsd_rule(const struct maplog_elf_info *info,
				const struct maplog_maps_entry *m, uint64_t pl)
{
	size_t i;

	for (i = 0; i < info->n_load && !(info->load[i].p_flags & PF_X); i++)
		;
	ck_assert_uint_lt(i, info->n_load);
	ck_assert_uint_eq(info->v, info->load[i].p_vaddr & -info->load[i].p_align);
	ck_assert_uint_eq(info->load[i].p_align, pagesize());
	ck_assert_uint_eq(pl, m->start);
}

START_TEST(test_real_gnu_pie)
{
	struct obj *o = need_obj(OBJ_GNU_PIE);
	struct maplog_maps_entry m;
	struct maplog_elf_info info;
	uint64_t fn, pl;

	if (!o)
		return;
	run_exec(o, &fn, &m);
	pl = verify(o, &m, fn, &info);
	assert_freebsd_rule(&info, &m, pl);
	/* GNU ld: the text segment has p_vaddr == p_offset and starts a page of its own. */
	ck_assert_uint_eq(info.v, m.pgoff);
	ck_assert_uint_ne(info.v, 0);
}
END_TEST

START_TEST(test_real_gnu_nopie)
{
	struct obj *o = need_obj(OBJ_GNU_NOPIE);
	struct maplog_maps_entry m;
	struct maplog_elf_info info;
	uint64_t fn, pl, x;

	if (!o)
		return;
	run_exec(o, &fn, &m);
	pl = verify(o, &m, fn, &info);
	/*
	 * Modern GNU layout: the first PT_LOAD is read-only, the text segment starts at a
	 * page of its own (0x401000 on x86-64), and that is V and pl_start: bias 0.  (The
	 * rule before FreeBSD main took V = 0 here, and pmcstat then misplaced the file.)
	 */
	assert_freebsd_rule(&info, &m, pl);
#if defined(__x86_64__)
	ck_assert_uint_eq(pl, 0x401000);
#endif
	/* The same mapping one page higher cannot be this ET_EXEC: bias would not be 0. */
	ck_assert_int_eq(maplog_elf_info_pl_start(&info, m.start + pagesize(), m.pgoff, pagesize(),
						  true, &x, NULL),
			 -EINVAL);
}
END_TEST

START_TEST(test_real_gnu_classic)
{
	struct obj *o = need_obj(OBJ_GNU_CLASSIC);
	struct maplog_maps_entry m;
	struct maplog_elf_info info;
	uint64_t fn, pl;

	if (!o)
		return;
	run_exec(o, &fn, &m);
	pl = verify(o, &m, fn, &info);
	/* Classic layout: text at file offset 0, V = its p_vaddr = the mapping's start. */
	ck_assert_uint_eq(m.pgoff, 0);
	assert_freebsd_rule(&info, &m, pl);
#if defined(__x86_64__)
	ck_assert_uint_eq(info.v, 0x400000);
#endif
}
END_TEST

START_TEST(test_real_gnu_lib)
{
	struct obj *o = need_obj(OBJ_GNU_LIB);
	struct maplog_maps_entry m;
	struct maplog_elf_info info;
	uint64_t fn, pl;
	void *h;

	if (!o)
		return;
	h = open_lib(o, &fn, &m);
	pl = verify(o, &m, fn, &info);
	assert_freebsd_rule(&info, &m, pl);
	ck_assert_uint_eq(info.v, m.pgoff);
	ck_assert_int_eq(dlclose(h), 0);
}
END_TEST

START_TEST(test_real_lld_pie)
{
	struct obj *o = need_obj(OBJ_LLD_PIE);
	struct maplog_maps_entry m;
	struct maplog_elf_info info;
	uint64_t fn, pl;

	if (!o)
		return;
	run_exec(o, &fn, &m);
	pl = verify(o, &m, fn, &info);
	/*
	 * LLD packs the segments: the text starts in file page 0 but one page up in
	 * memory, so the load bias (where link address 0 is) is below the executable
	 * mapping, and pl_start is the mapping's start all the same.
	 */
	ck_assert_uint_eq(m.pgoff, 0);
	assert_freebsd_rule(&info, &m, pl);
	ck_assert_uint_ne(info.v, 0);
}
END_TEST

START_TEST(test_real_lld_nopie)
{
	struct obj *o = need_obj(OBJ_LLD_NOPIE);
	struct maplog_maps_entry m;
	struct maplog_elf_info info;
	uint64_t fn, pl;

	if (!o)
		return;
	run_exec(o, &fn, &m);
	pl = verify(o, &m, fn, &info);
	/* The text's page in memory is V: bias 0. */
	ck_assert_uint_eq(m.pgoff, 0);
	assert_freebsd_rule(&info, &m, pl);
	ck_assert_uint_eq(info.v, m.start);
}
END_TEST

START_TEST(test_real_lld_lib)
{
	struct obj *o = need_obj(OBJ_LLD_LIB);
	struct maplog_maps_entry m;
	struct maplog_elf_info info;
	uint64_t fn, pl, x;
	void *h;

	if (!o)
		return;
	h = open_lib(o, &fn, &m);
	pl = verify(o, &m, fn, &info);
	ck_assert_uint_eq(m.pgoff, 0);
	assert_freebsd_rule(&info, &m, pl);
	/*
	 * Without the exec preference the read-only headers segment, which also starts in
	 * file page 0, would be taken for this mapping and the bias would be one page too
	 * high.  A non-executable query for the same mapping shows that.
	 */
	ck_assert_int_eq(maplog_elf_info_pl_start(&info, m.start, m.pgoff, pagesize(), false, &x,
						  NULL),
			 0);
	ck_assert_uint_ne(x, pl);
	ck_assert_int_eq(dlclose(h), 0);
}
END_TEST

START_TEST(test_real_gnu_static)
{
	struct obj *o = need_obj(OBJ_GNU_STATIC);
	struct maplog_maps_entry m;
	struct maplog_elf_info info;
	uint64_t fn, pl;

	if (!o)
		return;
	run_exec(o, &fn, &m);
	pl = verify(o, &m, fn, &info);
	assert_freebsd_rule(&info, &m, pl);
#if defined(__x86_64__)
	ck_assert_uint_eq(pl, 0x401000);
#endif
}
END_TEST

/* ---- ELF info: build ids, executable sections, 32-bit ----------------------------- */

static void info_of(const struct obj *o, struct maplog_elf_info *ret)
{
	int fd = open(o->path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(maplog_elf_info_fd(fd, ret), 0);
	close(fd);
}

static void hex_to_bytes(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
		out[i] = (uint8_t)v;
	}
}

START_TEST(test_info_build_id)
{
	static struct maplog_elf_info info;
	uint8_t want[20];
	struct obj *o;

	if ((o = need_obj(OBJ_GNU_PIE))) {
		info_of(o, &info);
		hex_to_bytes(ID20, want, 20);
		ck_assert_uint_eq(info.build_id_len, 20);
		ck_assert_mem_eq(info.build_id, want, 20);
	}
	if ((o = need_obj(OBJ_GNU_LIB))) {
		info_of(o, &info);
		hex_to_bytes(ID16, want, 16);
		ck_assert_uint_eq(info.build_id_len, 16);
		ck_assert_mem_eq(info.build_id, want, 16);
	}
	if ((o = need_obj(OBJ_GNU_NOPIE))) {
		info_of(o, &info);
		ck_assert_uint_eq(info.build_id_len, 0); /* --build-id=none */
	}
	if ((o = need_obj(OBJ_LLD_PIE))) {
		info_of(o, &info);
		ck_assert_uint_eq(info.build_id_len, 0); /* 32 bytes: ignored, as the kernel does */
	}
}
END_TEST

START_TEST(test_info_exec_range)
{
	static struct maplog_elf_info info;

	for (size_t i = 0; i < OBJ_MAX; i++) {
		struct obj *o = need_obj((enum obj_id)i);
		uint64_t v;

		if (!o)
			continue;
		info_of(o, &info);
		ck_assert(info.has_exec_section);
		ck_assert_uint_lt(info.exec_start, info.exec_end);
		v = symtab_value(o->path, o->fn);
		ck_assert_uint_ge(v, info.exec_start);
		ck_assert_uint_lt(v, info.exec_end);
		ck_assert_uint_ge(info.n_load, 1);
		ck_assert_uint_le(info.n_load, MAPLOG_ELF_MAX_LOADS);
	}
}
END_TEST

START_TEST(test_info_elf32)
{
	static struct maplog_elf_info info;
	struct obj *o = need_obj(OBJ_FREE32);
	const struct maplog_phdr *text = NULL;
	uint8_t want[20];
	uint64_t pl = 0, bias = 1;

	if (!o)
		return;
	info_of(o, &info);
	ck_assert_uint_eq(info.e_type, ET_EXEC);
	hex_to_bytes(ID20, want, 20);
	ck_assert_uint_eq(info.build_id_len, 20);
	ck_assert_mem_eq(info.build_id, want, 20);
	for (size_t i = 0; i < info.n_load; i++)
		if (info.load[i].p_flags & PF_X)
			text = &info.load[i];
	ck_assert_ptr_nonnull(text);
	/* LLD packs the text into file page 0, so it gives V. */
	ck_assert_uint_eq(info.v, text->p_vaddr & ~(uint64_t)0xfff);
	ck_assert_int_eq(maplog_elf_info_pl_start(&info, info.v, 0, 4096, true, &pl, &bias), 0);
	ck_assert_uint_eq(bias, 0);
	ck_assert_uint_eq(pl, info.v);
}
END_TEST

/* ---- hostile files ---------------------------------------------------------------- */

static bool slurp(const char *path, uint8_t **ret_buf, size_t *ret_len)
{
	struct stat st;
	uint8_t *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	buf = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	close(fd);
	*ret_buf = buf;
	*ret_len = (size_t)st.st_size;
	return true;
}

static int scratch_fd(const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	return fd;
}

static void put_file(int fd, const void *buf, size_t len)
{
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	ck_assert_int_eq(pwrite(fd, buf, len, 0), (ssize_t)len);
}

/* Both libelf entry points on @fd: any result but a crash, from a known set. */
static int probe(int fd)
{
	static struct maplog_elf_info info;
	uint64_t pl, bias;
	int r1, r2;

	r1 = maplog_elf_info_fd(fd, &info);
	ck_assert_msg(r1 == 0 || r1 == -ENOEXEC || r1 == -E2BIG, "info: %d", r1);
	r2 = maplog_elf_pl_start(fd, 0x7f0000001000ull, 0x1000, 4096, true, &pl, &bias);
	ck_assert_msg(r2 == 0 || r2 == -ENOEXEC || r2 == -E2BIG || r2 == -ENOENT || r2 == -EINVAL,
		      "pl_start: %d", r2);
	r2 = maplog_elf_pl_start(fd, 0x7f0000000000ull, 0, 4096, true, &pl, &bias);
	ck_assert_msg(r2 == 0 || r2 == -ENOEXEC || r2 == -E2BIG || r2 == -ENOENT || r2 == -EINVAL,
		      "pl_start: %d", r2);
	return r1;
}

START_TEST(test_hostile_truncated)
{
	struct obj *o = need_obj(OBJ_GNU_PIE);
	uint8_t *buf;
	size_t len, hdr_end, sh_end;
	Elf64_Ehdr eh;
	int fd;

	if (!o)
		return;
	ck_assert(slurp(o->path, &buf, &len));
	ck_assert_uint_ge(len, sizeof(eh));
	memcpy(&eh, buf, sizeof(eh));
	hdr_end = eh.e_phoff + (size_t)eh.e_phnum * eh.e_phentsize;
	sh_end = eh.e_shoff + (size_t)eh.e_shnum * eh.e_shentsize;
	ck_assert_uint_eq(sh_end, len); /* GNU ld puts the section headers last */
	fd = scratch_fd("truncated");
	put_file(fd, buf, len);
	ck_assert_int_eq(probe(fd), 0);
	/* Shrink the file step by step: every prefix up to 2 KiB, then every 97th. */
	for (size_t n = len; n-- > 0;) {
		int r;

		if (n > 2048 && (len - n) % 97 != 0)
			continue;
		ck_assert_int_eq(ftruncate(fd, (off_t)n), 0);
		r = probe(fd);
		/* A cut program or section header table is corrupt, not a smaller table. */
		if (n < hdr_end || n < sh_end)
			ck_assert_msg(r == -ENOEXEC, "prefix %zu: %d", n, r);
	}
	close(fd);
	free(buf);
}
END_TEST

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	/* xorshift64: deterministic, so a failure is reproducible. */
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

START_TEST(test_hostile_mutated)
{
	struct obj *o = need_obj(OBJ_GNU_LIB);
	uint8_t *buf, *mut;
	size_t len;
	int fd;

	if (!o)
		return;
	ck_assert(slurp(o->path, &buf, &len));
	mut = malloc(len);
	ck_assert_ptr_nonnull(mut);
	fd = scratch_fd("mutated");
	for (int iter = 0; iter < 300; iter++) {
		size_t nflip = 1 + rng() % 8;

		memcpy(mut, buf, len);
		for (size_t k = 0; k < nflip; k++) {
			/* Mostly the headers at the front and the section table at the end. */
			size_t at = (rng() & 1) ? rng() % (len < 1024 ? len : 1024)
						: len - 1 - rng() % (len < 2048 ? len : 2048);

			mut[at] = (uint8_t)rng();
		}
		put_file(fd, mut, len);
		(void)probe(fd);
	}
	close(fd);
	free(mut);
	free(buf);
}
END_TEST

START_TEST(test_hostile_garbage)
{
	uint8_t junk[4096];
	struct maplog_elf_info info;
	uint64_t pl;
	int fd, p[2];

	fd = scratch_fd("garbage");
	put_file(fd, "", 0);
	ck_assert_int_eq(probe(fd), -ENOEXEC);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rng();
	put_file(fd, junk, sizeof(junk));
	ck_assert_int_eq(probe(fd), -ENOEXEC);
	memcpy(junk, ELFMAG, SELFMAG);
	for (int iter = 0; iter < 50; iter++) {
		for (size_t i = SELFMAG; i < sizeof(junk); i++)
			junk[i] = (uint8_t)rng();
		junk[EI_CLASS] = (uint8_t)(1 + iter % 2);
		junk[EI_DATA] = (uint8_t)(1 + (iter / 2) % 2);
		junk[EI_VERSION] = EV_CURRENT;
		put_file(fd, junk, 64 + (size_t)iter * 80);
		(void)probe(fd);
	}
	put_file(fd, "not an elf file at all\n", 23);
	ck_assert_int_eq(probe(fd), -ENOEXEC);
	close(fd);

	/* Not regular files, and not files. */
	fd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(maplog_elf_info_fd(fd, &info), -ENOEXEC);
	close(fd);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(maplog_elf_pl_start(p[0], 0, 0, 4096, true, &pl, NULL), -ENOEXEC);
	close(p[0]);
	close(p[1]);
	ck_assert_int_eq(maplog_elf_info_fd(-1, &info), -EBADF);
	ck_assert_int_eq(maplog_elf_info_elf(NULL, &info), -EINVAL);
	ck_assert_int_eq(maplog_elf_pl_start_elf(NULL, 0, 0, 4096, true, &pl, NULL), -EINVAL);
}
END_TEST

/*
 * Hand-edited copies of a real file: section headers removed (build id then comes
 * from PT_NOTE; no executable section), PT_NOTE removed (build id from the section),
 * and extended section/program header counts that claim billions of entries.
 */
START_TEST(test_hostile_edited)
{
	static struct maplog_elf_info info;
	struct obj *o = need_obj(OBJ_GNU_PIE);
	uint8_t *buf, *ed, want[20];
	Elf64_Ehdr eh;
	Elf64_Shdr sh0;
	size_t len;
	bool had_note = false;
	uint64_t pl, pl0;
	int fd;

	if (!o)
		return;
	ck_assert(slurp(o->path, &buf, &len));
	memcpy(&eh, buf, sizeof(eh));
	ck_assert_uint_eq(buf[EI_CLASS], ELFCLASS64);
	ck_assert_uint_le(eh.e_shoff + sizeof(sh0), len);
	ed = malloc(len);
	ck_assert_ptr_nonnull(ed);
	fd = scratch_fd("edited");
	hex_to_bytes(ID20, want, 20);
	put_file(fd, buf, len);
	ck_assert_int_eq(maplog_elf_pl_start(fd, 0x7f0000000000ull, 0, 4096, false, &pl0, NULL), 0);

	/* No section headers at all. */
	memcpy(ed, buf, len);
	{
		Elf64_Ehdr e = eh;

		e.e_shoff = 0;
		e.e_shnum = 0;
		e.e_shstrndx = SHN_UNDEF;
		memcpy(ed, &e, sizeof(e));
	}
	put_file(fd, ed, len);
	ck_assert_int_eq(maplog_elf_info_fd(fd, &info), 0);
	ck_assert(!info.has_exec_section);
	ck_assert_uint_eq(info.exec_start, 0);
	ck_assert_uint_eq(info.exec_end, 0);
	ck_assert_uint_eq(info.build_id_len, 20);
	ck_assert_mem_eq(info.build_id, want, 20);
	ck_assert_int_eq(maplog_elf_pl_start(fd, 0x7f0000000000ull, 0, 4096, false, &pl, NULL), 0);
	ck_assert_uint_eq(pl, pl0);

	/* No PT_NOTE: the build id comes from .note.gnu.build-id. */
	memcpy(ed, buf, len);
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		size_t at = eh.e_phoff + i * sizeof(ph);

		memcpy(&ph, ed + at, sizeof(ph));
		if (ph.p_type == PT_NOTE) {
			ph.p_type = PT_NULL;
			had_note = true;
		}
		memcpy(ed + at, &ph, sizeof(ph));
	}
	ck_assert(had_note);
	put_file(fd, ed, len);
	ck_assert_int_eq(maplog_elf_info_fd(fd, &info), 0);
	ck_assert(info.has_exec_section);
	ck_assert_uint_eq(info.build_id_len, 20);
	ck_assert_mem_eq(info.build_id, want, 20);

	/* e_shnum 0: the count is in section 0's sh_size, here absurd. */
	memcpy(ed, buf, len);
	{
		Elf64_Ehdr e = eh;

		e.e_shnum = 0;
		memcpy(ed, &e, sizeof(e));
		memcpy(&sh0, ed + e.e_shoff, sizeof(sh0));
		sh0.sh_size = UINT64_MAX;
		memcpy(ed + e.e_shoff, &sh0, sizeof(sh0));
	}
	put_file(fd, ed, len);
	(void)probe(fd);
	sh0.sh_size = 0xffffffffu;
	memcpy(ed + eh.e_shoff, &sh0, sizeof(sh0));
	put_file(fd, ed, len);
	(void)probe(fd);

	/* e_phnum PN_XNUM: the count is in section 0's sh_info, here absurd. */
	memcpy(ed, buf, len);
	{
		Elf64_Ehdr e = eh;

		e.e_phnum = PN_XNUM;
		memcpy(ed, &e, sizeof(e));
		memcpy(&sh0, ed + e.e_shoff, sizeof(sh0));
		sh0.sh_info = 0xfffffff0u;
		memcpy(ed + e.e_shoff, &sh0, sizeof(sh0));
	}
	put_file(fd, ed, len);
	ck_assert_int_eq(probe(fd), -ENOEXEC);

	/* A PT_LOAD whose file range wraps around. */
	memcpy(ed, buf, len);
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		size_t at = eh.e_phoff + i * sizeof(ph);

		memcpy(&ph, ed + at, sizeof(ph));
		if (ph.p_type == PT_LOAD) {
			ph.p_offset = UINT64_MAX - 0xf;
			memcpy(ed + at, &ph, sizeof(ph));
			break;
		}
	}
	put_file(fd, ed, len);
	ck_assert_int_eq(probe(fd), -ENOEXEC);

	close(fd);
	free(ed);
	free(buf);
}
END_TEST

/* ---- the rule on hand-made program header tables ---------------------------------- */

#define LOAD(off, va, sz, fl, al)                                                            \
	{ .p_type = PT_LOAD, .p_flags = (fl), .p_offset = (off), .p_vaddr = (va),          \
	  .p_filesz = (sz), .p_memsz = (sz), .p_align = (al) }

static const struct maplog_phdr gnu_pie[] = {
	{ .p_type = PT_PHDR, .p_flags = PF_R, .p_offset = 0x40, .p_vaddr = 0x40 },
	LOAD(0x0, 0x0, 0x730, PF_R, 0x1000),
	LOAD(0x1000, 0x1000, 0x219, PF_R | PF_X, 0x1000),
	LOAD(0x2000, 0x2000, 0x124, PF_R, 0x1000),
	LOAD(0x2dd0, 0x3dd0, 0x268, PF_R | PF_W, 0x1000),
};

static const struct maplog_phdr lld_pie[] = {
	LOAD(0x0, 0x0, 0x7ec, PF_R, 0x1000),
	LOAD(0x7f0, 0x17f0, 0x250, PF_R | PF_X, 0x1000),
	LOAD(0xa40, 0x2a40, 0x1f0, PF_R | PF_W, 0x1000),
	LOAD(0xc30, 0x3c30, 0x58, PF_R | PF_W, 0x1000),
};

static const struct maplog_phdr gnu_exec[] = {
	LOAD(0x0, 0x400000, 0x610, PF_R, 0x1000),
	LOAD(0x1000, 0x401000, 0x209, PF_R | PF_X, 0x1000),
	LOAD(0x2000, 0x402000, 0x11c, PF_R, 0x1000),
	LOAD(0x2df8, 0x403df8, 0x240, PF_R | PF_W, 0x1000),
};

static const struct maplog_phdr classic_exec[] = {
	LOAD(0x0, 0x400000, 0x8c4, PF_R | PF_X, 0x1000),
	LOAD(0xdf8, 0x401df8, 0x240, PF_R | PF_W, 0x1000),
};

START_TEST(test_rule_dyn)
{
	uint64_t pl = 0, bias = 0;

	/* GNU PIE: text mapped at A from offset 0x1000; V = 0x1000: pl_start = A. */
	ck_assert_uint_eq(maplog_pl_start_v(ET_DYN, gnu_pie, ARRAY_SIZE(gnu_pie)), 0x1000);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, gnu_pie, ARRAY_SIZE(gnu_pie),
						    0x555555555000ull, 0x1000, 4096, true, &pl,
						    &bias),
			 0);
	ck_assert_uint_eq(bias, 0x555555554000ull);
	ck_assert_uint_eq(pl, 0x555555555000ull);
	/* Every other mapping of the GNU layout gives the same bias, so the same pl_start. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, gnu_pie, ARRAY_SIZE(gnu_pie),
						    0x555555554000ull, 0, 4096, false, &pl, NULL),
			 0);
	ck_assert_uint_eq(pl, 0x555555555000ull);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, gnu_pie, ARRAY_SIZE(gnu_pie),
						    0x555555556000ull, 0x2000, 4096, false, &pl,
						    NULL),
			 0);
	ck_assert_uint_eq(pl, 0x555555555000ull);

	/*
	 * LLD: the text is in file page 0 but one page up; the exec mapping picks it.
	 * V = 0x17f0 & -0x1000 = 0x1000: pl_start is that mapping's start.
	 */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, lld_pie, ARRAY_SIZE(lld_pie),
						    0x7f0000001000ull, 0, 4096, true, &pl, &bias),
			 0);
	ck_assert_uint_eq(bias, 0x7f0000000000ull);
	ck_assert_uint_eq(pl, 0x7f0000001000ull);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, lld_pie, ARRAY_SIZE(lld_pie),
						    0x7f0000000000ull, 0, 4096, false, &pl, &bias),
			 0);
	ck_assert_uint_eq(bias, 0x7f0000000000ull);
	ck_assert_uint_eq(pl, 0x7f0000001000ull);

	/* A library mapped below its link address: the bias wraps, pmcstat's sum does too. */
	{
		const struct maplog_phdr pre[] = {
			LOAD(0x0, 0x7f0000000000ull, 0x2000, PF_R | PF_X, 0x1000),
		};

		ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, pre, 1, 0x10000, 0, 4096, true,
							    &pl, &bias),
				 0);
		ck_assert_uint_eq(bias + 0x7f0000000000ull, 0x10000);
		ck_assert_uint_eq(pl, 0x10000);
	}

	/* 64 KiB pages. */
	{
		const struct maplog_phdr arm[] = {
			LOAD(0x0, 0x0, 0x800, PF_R, 0x10000),
			LOAD(0x10000, 0x10000, 0x400, PF_R | PF_X, 0x10000),
		};

		ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, arm, 2, 0xffff80010000ull,
							    0x10000, 0x10000, true, &pl, &bias),
				 0);
		ck_assert_uint_eq(bias, 0xffff80000000ull);
		ck_assert_uint_eq(pl, 0xffff80010000ull);
	}
}
END_TEST

START_TEST(test_rule_exec)
{
	uint64_t pl = 7, bias = 7;

	/* Modern GNU ET_EXEC: the first PF_X segment is at 0x401000: V = pl_start = 0x401000. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_EXEC, gnu_exec, ARRAY_SIZE(gnu_exec),
						    0x401000, 0x1000, 4096, true, &pl, &bias),
			 0);
	ck_assert_uint_eq(bias, 0);
	ck_assert_uint_eq(pl, 0x401000);
	/* Classic layout: V = 0x400000. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_EXEC, classic_exec,
						    ARRAY_SIZE(classic_exec), 0x400000, 0, 4096,
						    true, &pl, &bias),
			 0);
	ck_assert_uint_eq(bias, 0);
	ck_assert_uint_eq(pl, 0x400000);
	/* The same table as ET_DYN: the same V, for ET_DYN as for ET_EXEC. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, classic_exec, ARRAY_SIZE(classic_exec),
						    0x400000, 0, 4096, true, &pl, &bias),
			 0);
	ck_assert_uint_eq(bias, 0);
	ck_assert_uint_eq(pl, 0x400000);
	/* ET_REL (kernel modules): V = 0. */
	ck_assert_uint_eq(maplog_pl_start_v(ET_REL, classic_exec, ARRAY_SIZE(classic_exec)), 0);
	/* No executable segment at all: V = 0. */
	ck_assert_uint_eq(maplog_pl_start_v(ET_EXEC, gnu_exec, 1), 0);
	/* p_align 0 makes the mask 0 in pmcstat: V = 0. */
	{
		const struct maplog_phdr a0[] = {
			LOAD(0x0, 0x400000, 0x1000, PF_R | PF_X, 0),
		};

		ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_EXEC, a0, 1, 0x400000, 0, 4096, true,
							    &pl, NULL),
				 0);
		ck_assert_uint_eq(pl, 0);
	}
	/* p_align 2 MiB, text at file offset 0x200000 (like vmlinux): V = 0xffffffff81000000. */
	{
		const struct maplog_phdr k[] = {
			LOAD(0x200000, 0xffffffff81000000ull, 0x100000, PF_R | PF_X, 0x200000),
		};

		ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_EXEC, k, 1, 0xffffffff81000000ull,
							    0x200000, 4096, true, &pl, NULL),
				 0);
		ck_assert_uint_eq(pl, 0xffffffff81000000ull);
	}
	/* p_align larger than a page and a text segment not on it: V rounds down to it. */
	{
		const struct maplog_phdr big[] = {
			LOAD(0x0, 0x400000, 0x800, PF_R, 0x200000),
			LOAD(0x1000, 0x401000, 0x800, PF_R | PF_X, 0x200000),
		};

		ck_assert_uint_eq(maplog_pl_start_v(ET_EXEC, big, 2), 0x400000);
	}
}
END_TEST

START_TEST(test_rule_multi_exec)
{
	uint64_t pl = 0, bias = 0;
	/* Two PF_X segments sharing file page 0 (LLD packing): V comes from the first one. */
	const struct maplog_phdr two[] = {
		LOAD(0x0, 0x400000, 0xf0, PF_R, 0x1000),
		LOAD(0x100, 0x401100, 0x200, PF_R | PF_X, 0x1000),
		LOAD(0x300, 0x402300, 0x200, PF_R | PF_X, 0x1000),
	};
	/* Two PF_X segments on pages of their own: the first gives V. */
	const struct maplog_phdr apart[] = {
		LOAD(0x0, 0x400000, 0x800, PF_R | PF_X, 0x1000),
		LOAD(0x1000, 0x401000, 0x800, PF_R, 0x1000),
		LOAD(0x2000, 0x402000, 0x800, PF_R | PF_X, 0x1000),
	};
	const struct maplog_phdr dyn[] = {
		LOAD(0x0, 0x0, 0x800, PF_R, 0x1000),
		LOAD(0x1000, 0x1000, 0x800, PF_R | PF_X, 0x1000),
		LOAD(0x2000, 0x3000, 0x800, PF_R | PF_X, 0x1000),
	};

	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_EXEC, two, 3, 0x401000, 0, 4096, true, &pl,
						    &bias),
			 0);
	ck_assert_uint_eq(bias, 0);
	ck_assert_uint_eq(pl, 0x401000);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_EXEC, apart, 3, 0x402000, 0x2000, 4096,
						    true, &pl, &bias),
			 0);
	ck_assert_uint_eq(bias, 0);
	ck_assert_uint_eq(pl, 0x400000);
	/* ET_DYN: the second executable segment gives the same pl_start as the first. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, dyn, 3, 0x7f0000001000ull, 0x1000,
						    4096, true, &pl, &bias),
			 0);
	ck_assert_uint_eq(pl, 0x7f0000001000ull);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, dyn, 3, 0x7f0000003000ull, 0x2000,
						    4096, true, &pl, &bias),
			 0);
	ck_assert_uint_eq(pl, 0x7f0000001000ull);
	/* A mapping in the middle of a segment (a split VMA). */
	{
		const struct maplog_phdr big[] = {
			LOAD(0x1000, 0x1000, 0x5000, PF_R | PF_X, 0x1000),
		};

		ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, big, 1, 0x7f0000004000ull,
							    0x4000, 4096, true, &pl, NULL),
				 0);
		ck_assert_uint_eq(pl, 0x7f0000001000ull);
	}
}
END_TEST

START_TEST(test_rule_errors)
{
	uint64_t pl = 7, bias = 7;
	const struct maplog_phdr bss_only[] = {
		LOAD(0x1234, 0x1234, 0, PF_R | PF_W, 0x1000),
	};
	const struct maplog_phdr misaligned[] = {
		LOAD(0x1000, 0x1800, 0x1000, PF_R | PF_X, 0x1000),
	};
	const struct maplog_phdr wrap[] = {
		LOAD(UINT64_MAX - 0xfff, 0x0, 0x2000, PF_R | PF_X, 0x1000),
	};
	const struct maplog_phdr wrap_va[] = {
		LOAD(0x0, UINT64_MAX - 0xfff, 0x2000, PF_R | PF_X, 0x1000),
	};
	const struct maplog_phdr no_load[] = {
		{ .p_type = PT_NOTE, .p_offset = 0, .p_filesz = 0x1000 },
	};

	/* No segment holds the offset. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, gnu_pie, ARRAY_SIZE(gnu_pie),
						    0x7f0000000000ull, 0x5000, 4096, true, &pl,
						    &bias),
			 -ENOENT);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, NULL, 0, 0x1000, 0, 4096, true, &pl,
						    &bias),
			 -ENOENT);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, no_load, 1, 0x1000, 0, 4096, true, &pl,
						    &bias),
			 -ENOENT);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, bss_only, 1, 0x1000, 0x1000, 4096,
						    false, &pl, &bias),
			 -ENOENT);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_REL, NULL, 0, 0x1000, 0, 4096, true, &pl,
						    &bias),
			 -ENOENT);
	/* ET_DYN with a bias that is not page aligned. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, misaligned, 1, 0x10000, 0x1000, 4096,
						    true, &pl, &bias),
			 -EINVAL);
	/* ET_EXEC not at its link address: the wrong file, or not this mapping. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_EXEC, gnu_exec, ARRAY_SIZE(gnu_exec),
						    0x501000, 0x1000, 4096, true, &pl, &bias),
			 -EINVAL);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_EXEC, gnu_exec, ARRAY_SIZE(gnu_exec),
						    0x402000, 0x1000, 4096, true, &pl, &bias),
			 -EINVAL);
	/* Bad arguments. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, gnu_pie, ARRAY_SIZE(gnu_pie), 0x1000,
						    0x1000, 0, true, &pl, &bias),
			 -EINVAL);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, gnu_pie, ARRAY_SIZE(gnu_pie), 0x1000,
						    0x1000, 3000, true, &pl, &bias),
			 -EINVAL);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, gnu_pie, ARRAY_SIZE(gnu_pie), 0x1800,
						    0x1000, 4096, true, &pl, &bias),
			 -EINVAL);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, gnu_pie, ARRAY_SIZE(gnu_pie), 0x1000,
						    0x1100, 4096, true, &pl, &bias),
			 -EINVAL);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, NULL, 3, 0x1000, 0x1000, 4096, true,
						    &pl, &bias),
			 -EINVAL);
	/* Not a mappable type, and corrupt tables. */
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_CORE, gnu_pie, ARRAY_SIZE(gnu_pie), 0x1000,
						    0x1000, 4096, true, &pl, &bias),
			 -ENOEXEC);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, wrap, 1, 0x1000, 0, 4096, true, &pl,
						    &bias),
			 -ENOEXEC);
	ck_assert_int_eq(maplog_pl_start_from_phdrs(ET_DYN, wrap_va, 1, 0x1000, 0, 4096, true, &pl,
						    &bias),
			 -ENOEXEC);
	/* Outputs are written only on success. */
	ck_assert_uint_eq(pl, 7);
	ck_assert_uint_eq(bias, 7);
	/* Cached info with a corrupt count. */
	{
		static struct maplog_elf_info info;

		info.e_type = ET_DYN;
		info.n_load = MAPLOG_ELF_MAX_LOADS + 1;
		ck_assert_int_eq(maplog_elf_info_pl_start(&info, 0, 0, 4096, true, &pl, NULL),
				 -EINVAL);
		ck_assert_int_eq(maplog_elf_info_pl_start(NULL, 0, 0, 4096, true, &pl, NULL),
				 -EINVAL);
	}
}
END_TEST

/* ---- /proc/PID/maps parser -------------------------------------------------------- */

static struct maplog_maps_entry ent;

static void parse_ok(const char *line)
{
	memset(&ent, 0x5a, sizeof(ent));
	ck_assert_msg(maplog_maps_parse_line(line, &ent) == 0, "cannot parse '%s'", line);
}

START_TEST(test_maps_file)
{
	parse_ok("55d0c6a00000-55d0c6a21000 r-xp 00001000 08:01 1234567                    "
		 "/usr/bin/true\n");
	ck_assert_uint_eq(ent.start, 0x55d0c6a00000ull);
	ck_assert_uint_eq(ent.end, 0x55d0c6a21000ull);
	ck_assert_uint_eq(ent.pgoff, 0x1000);
	ck_assert_uint_eq(ent.dev_major, 8);
	ck_assert_uint_eq(ent.dev_minor, 1);
	ck_assert_uint_eq(ent.inode, 1234567);
	ck_assert(ent.r && !ent.w && ent.x && !ent.shared && !ent.deleted);
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_FILE);
	ck_assert_str_eq(ent.path, "/usr/bin/true");

	/* Spaces inside the path, and a path that ends in spaces, are kept. */
	parse_ok("7f0000000000-7f0000001000 rw-s 00000000 fd:1a 42                         "
		 "/tmp/my dir/lib  with spaces.so  ");
	ck_assert_str_eq(ent.path, "/tmp/my dir/lib  with spaces.so  ");
	ck_assert(ent.r && ent.w && !ent.x && ent.shared);
	ck_assert_uint_eq(ent.dev_major, 0xfd);
	ck_assert_uint_eq(ent.dev_minor, 0x1a);

	/* Wide device numbers, a 64-bit offset, no padding at all, no newline. */
	parse_ok("1000-2000 ---p ffffffffff000000 103:abcde 18446744073709551615 /x");
	ck_assert_uint_eq(ent.pgoff, 0xffffffffff000000ull);
	ck_assert_uint_eq(ent.dev_major, 0x103);
	ck_assert_uint_eq(ent.dev_minor, 0xabcde);
	ck_assert_uint_eq(ent.inode, UINT64_MAX);
	ck_assert(!ent.r && !ent.w && !ent.x);
	ck_assert_str_eq(ent.path, "/x");

	/* (deleted) is stripped once; a real file named /memfd:x is a file. */
	parse_ok("1000-2000 r-xp 00000000 08:01 7  /tmp/a (deleted) (deleted)\n");
	ck_assert(ent.deleted);
	ck_assert_str_eq(ent.path, "/tmp/a (deleted)");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_FILE);
	parse_ok("1000-2000 r-xp 00000000 08:01 7  /memfd:x\n");
	ck_assert(!ent.deleted);
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_FILE);
	/* The kernel's escape for a newline in a name is kept as it is. */
	parse_ok("1000-2000 r-xp 00000000 08:01 7  /tmp/a\\012b\n");
	ck_assert_str_eq(ent.path, "/tmp/a\\012b");
}
END_TEST

START_TEST(test_maps_special)
{
	parse_ok("7ffd23fc1000-7ffd23fe2000 rw-p 00000000 00:00 0                          "
		 "[stack]\n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_SPECIAL);
	ck_assert_str_eq(ent.path, "[stack]");
	ck_assert_uint_eq(ent.inode, 0);
	parse_ok("5629810dc000-5629810fd000 rw-p 00000000 00:00 0      [heap]");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_SPECIAL);
	parse_ok("7fe3fd7a9000-7fe3fd7ad000 r--p 00000000 00:00 0      [vvar]\n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_SPECIAL);
	parse_ok("7fe3fd7af000-7fe3fd7b1000 r-xp 00000000 00:00 0                          "
		 "[vdso]\n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_VDSO);
	ck_assert(ent.x);
	parse_ok("ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  "
		 "[vsyscall]\n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_VSYSCALL);
	ck_assert_uint_eq(ent.start, 0xffffffffff600000ull);
	parse_ok("7f00a0000000-7f00a0010000 rw-s 00000000 00:0e 1045 anon_inode:[perf_event]\n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_SPECIAL);
	ck_assert_str_eq(ent.path, "anon_inode:[perf_event]");

	/* Anonymous: no name (with and without the kernel's trailing space), or named. */
	parse_ok("7fe3fd5b7000-7fe3fd5ba000 rw-p 00000000 00:00 0 \n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_ANON);
	ck_assert_str_eq(ent.path, "");
	ck_assert(!ent.deleted);
	parse_ok("7fe3fd5b7000-7fe3fd5ba000 rwxp 00000000 00:00 0");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_ANON);
	ck_assert(ent.x);
	parse_ok("7fe3fd5b7000-7fe3fd5ba000 rwxp 00000000 00:00 0   [anon:v8 jit code]\n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_ANON);
	ck_assert_str_eq(ent.path, "[anon:v8 jit code]");
	parse_ok("7f0000000000-7f0000100000 rw-s 00000000 00:01 2048 /dev/zero (deleted)\n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_ANON);
	ck_assert(ent.deleted && ent.shared);
	ck_assert_str_eq(ent.path, "/dev/zero");
	parse_ok("7f0000000000-7f0000100000 rw-s 00000000 00:01 32769 /SYSV00000000 (deleted)\n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_ANON);

	/* memfd: kind MEMFD, "(deleted)" stripped and flagged. */
	parse_ok("7f1234560000-7f1234570000 r-xs 00000000 00:01 77                         "
		 "/memfd:my jit (deleted)\n");
	ck_assert_int_eq(ent.kind, MAPLOG_MAP_MEMFD);
	ck_assert(ent.deleted);
	ck_assert_str_eq(ent.path, "/memfd:my jit");
}
END_TEST

START_TEST(test_maps_malformed)
{
	static const char *const bad[] = {
		"",
		"\n",
		"garbage",
		"1000 r-xp 00000000 08:01 7 /x",		   /* no end address */
		"1000-2000 r-xp 00000000 08:01",		   /* no inode */
		"1000-2000 r-xp 00000000 08:01 ",		   /* no inode */
		"1000-2000 r-xp 00000000 0801 7 /x",		   /* device without ':' */
		"1000-2000 r-xq 00000000 08:01 7 /x",		   /* bad sharing flag */
		"1000-2000 x-rp 00000000 08:01 7 /x",		   /* permissions out of order */
		"1000-2000 r-x 00000000 08:01 7 /x",		   /* three permissions */
		"2000-1000 r-xp 00000000 08:01 7 /x",		   /* start > end */
		"1000-1000 r-xp 00000000 08:01 7 /x",		   /* empty */
		"10000000000000000-10000000000000001 r-xp 0 0:0 0", /* address overflow */
		"1000-2000 r-xp 00000000 100000000:01 7 /x",	   /* major overflow */
		"1000-2000 r-xp 00000000 08:01 18446744073709551616 /x", /* inode overflow */
		"1000-2000 r-xp 00000000 08:01 12a /x",		   /* junk after the inode */
		"1000-2000 r-xp 00000000 08:01 7/x",		   /* no space before the path */
		" 1000-2000 r-xp 00000000 08:01 7 /x",		   /* leading space */
		"0x1000-0x2000 r-xp 00000000 08:01 7 /x",	   /* 0x prefix */
		"1000-2000  r-xp 00000000 08:01 7 /x",		   /* double space */
		"1000-2000 r-xp -0000001 08:01 7 /x",		   /* sign */
		"1000-2000 r-xp 00000000 08:01 7 /x\n/y",	   /* two lines */
	};
	static char longline[MAPLOG_MAPS_PATH_MAX + 64];
	size_t n;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		memset(&ent, 0x5a, sizeof(ent));
		ck_assert_msg(maplog_maps_parse_line(bad[i], &ent) == -EINVAL, "accepted '%s'",
			      bad[i]);
		ck_assert_uint_eq(((unsigned char *)&ent)[0], 0x5a); /* untouched */
	}
	ck_assert_int_eq(maplog_maps_parse_line(NULL, &ent), -EINVAL);

	/* The longest path that fits, with and without " (deleted)", then one more byte. */
	n = (size_t)snprintf(longline, sizeof(longline), "1000-2000 r-xp 00000000 08:01 7 /");
	memset(longline + n, 'a', MAPLOG_MAPS_PATH_MAX - 2);
	longline[n + MAPLOG_MAPS_PATH_MAX - 2] = '\0';
	parse_ok(longline);
	ck_assert_uint_eq(strlen(ent.path), MAPLOG_MAPS_PATH_MAX - 1);
	strcat(longline, " (deleted)\n");
	parse_ok(longline);
	ck_assert(ent.deleted);
	ck_assert_uint_eq(strlen(ent.path), MAPLOG_MAPS_PATH_MAX - 1);
	longline[n + MAPLOG_MAPS_PATH_MAX - 2] = 'a';
	longline[n + MAPLOG_MAPS_PATH_MAX - 1] = '\0';
	ck_assert_int_eq(maplog_maps_parse_line(longline, &ent), -ENAMETOOLONG);
}
END_TEST

START_TEST(test_maps_self)
{
	static char maps[OUT_MAX];
	char exe[PATH_MAX];
	ssize_t n;
	const char *line = maps;
	bool found_exe = false;
	int lines = 0;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	ck_assert(read_file("/proc/self/maps", maps, sizeof(maps)));
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char buf[MAPLOG_MAPS_PATH_MAX + 256];

		ck_assert_uint_lt(len, sizeof(buf));
		memcpy(buf, line, len);
		buf[len] = '\0';
		parse_ok(buf);
		if (strcmp(ent.path, exe) == 0 && ent.kind == MAPLOG_MAP_FILE)
			found_exe = true;
		lines++;
		line += len + (nl ? 1 : 0);
	}
	ck_assert_int_gt(lines, 3);
	ck_assert(found_exe);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("maplog-elf");
	TCase *tc_rule = tcase_create("rule");
	TCase *tc_real = tcase_create("real-elf");
	TCase *tc_info = tcase_create("elf-info");
	TCase *tc_hostile = tcase_create("hostile");
	TCase *tc_maps = tcase_create("maps");
	SRunner *sr;
	int failed;

	tcase_add_test(tc_rule, test_rule_dyn);
	tcase_add_test(tc_rule, test_rule_exec);
	tcase_add_test(tc_rule, test_rule_multi_exec);
	tcase_add_test(tc_rule, test_rule_errors);
	suite_add_tcase(s, tc_rule);

	tcase_add_test(tc_real, test_real_gnu_pie);
	tcase_add_test(tc_real, test_real_gnu_nopie);
	tcase_add_test(tc_real, test_real_gnu_classic);
	tcase_add_test(tc_real, test_real_gnu_lib);
	tcase_add_test(tc_real, test_real_lld_pie);
	tcase_add_test(tc_real, test_real_lld_nopie);
	tcase_add_test(tc_real, test_real_lld_lib);
	tcase_add_test(tc_real, test_real_gnu_static);
	tcase_set_timeout(tc_real, 60);
	suite_add_tcase(s, tc_real);

	tcase_add_test(tc_info, test_info_build_id);
	tcase_add_test(tc_info, test_info_exec_range);
	tcase_add_test(tc_info, test_info_elf32);
	suite_add_tcase(s, tc_info);

	tcase_add_test(tc_hostile, test_hostile_truncated);
	tcase_add_test(tc_hostile, test_hostile_mutated);
	tcase_add_test(tc_hostile, test_hostile_garbage);
	tcase_add_test(tc_hostile, test_hostile_edited);
	tcase_set_timeout(tc_hostile, 120);
	suite_add_tcase(s, tc_hostile);

	tcase_add_test(tc_maps, test_maps_file);
	tcase_add_test(tc_maps, test_maps_special);
	tcase_add_test(tc_maps, test_maps_malformed);
	tcase_add_test(tc_maps, test_maps_self);
	suite_add_tcase(s, tc_maps);

	/* The test objects are built once, before any test runs, and removed at the end. */
	build_all();
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_all();
	return failed ? 1 : 0;
}
