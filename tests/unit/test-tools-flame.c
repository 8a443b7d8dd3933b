/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test-tools-flame.c: Check suite for src/tools/tools-flame.c (the SVG flame graph).
 *
 * Trees are built in memory and written to open_memstream() buffers, and the documents
 * are checked at the parse level: a small XML checker (tags balanced and properly
 * nested, attributes quoted, only the five entities, valid UTF-8, no control bytes),
 * the exact <title> of frames, geometry attributes, escaping of hostile names,
 * byte-identical output whatever the children's order, the notice about frames too
 * narrow to draw, a root without samples, deep chains, huge fan-out, clamping, -EIO
 * from failing streams and -ENOMEM from a child array too large to copy.
 *
 * If FLAME_TEST_SVG is set, main() also writes the 1000-frame sample tree there, for
 * tests/integration/check-flame-browser.sh (search it for "do_work").
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwpmcd/log.h"
#include "tools-flame.h"

#define EM_DASH "\xe2\x80\x94"

/*
 * Check's ck_assert() records a mark point (a write to its pipe) each time it passes;
 * the per-byte checkers below use this instead, to stay fast.
 */
#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

/* Every node a test creates, freed by tn_free_all(). */
static struct tools_flame_node **tn_all;
static size_t tn_count, tn_cap;

static struct tools_flame_node *tn_new(const char *name, const char *image, uint64_t samples,
				       enum tools_flame_kind kind)
{
	struct tools_flame_node *n = calloc(1, sizeof(*n));

	REQUIRE(n != NULL, "out of memory");
	n->name = name;
	n->image = image;
	n->samples = samples;
	n->kind = kind;
	if (tn_count == tn_cap) {
		tn_cap = tn_cap ? tn_cap * 2 : 256;
		tn_all = realloc(tn_all, tn_cap * sizeof(*tn_all));
		REQUIRE(tn_all != NULL, "out of memory");
	}
	tn_all[tn_count++] = n;
	return n;
}

static struct tools_flame_node *tn_add(struct tools_flame_node *parent, const char *name,
				       const char *image, uint64_t samples,
				       enum tools_flame_kind kind)
{
	struct tools_flame_node *n = tn_new(name, image, samples, kind);

	/* Capacity doubles at every power of two (valgrind's realloc always copies). */
	if ((parent->nchildren & (parent->nchildren - 1)) == 0) {
		size_t cap = parent->nchildren ? parent->nchildren * 2 : 1;

		parent->children = realloc(parent->children, cap * sizeof(*parent->children));
		REQUIRE(parent->children != NULL, "out of memory");
	}
	parent->children[parent->nchildren++] = n;
	return n;
}

static void tn_free_all(void)
{
	size_t i;

	for (i = 0; i < tn_count; i++) {
		free(tn_all[i]->children);
		free(tn_all[i]);
	}
	free(tn_all);
	tn_all = NULL;
	tn_count = tn_cap = 0;
}

/* Write @root's graph into a heap string (NUL terminated); the test owns it. */
static char *write_svg(const struct tools_flame_node *root, const char *title, const char *subtitle,
		       size_t *ret_len)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	ck_assert_ptr_nonnull(f);
	r = tools_flame_write(f, root, title, subtitle);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(r, 0);
	ck_assert_uint_eq(strlen(buf), len);
	if (ret_len)
		*ret_len = len;
	return buf;
}

/* Occurrences of @needle; a plain scan (ASan's strstr() measures the whole haystack). */
static size_t count_str(const char *s, const char *needle)
{
	size_t n = 0, k = strlen(needle);

	for (; *s; s++) {
		if (*s == needle[0] && strncmp(s, needle, k) == 0)
			n++;
	}
	return n;
}

/* Valid UTF-8 (shortest form, no surrogates, <= U+10FFFF) without controls but \t \n. */
static void check_utf8(const unsigned char *s, size_t len)
{
	size_t i = 0, n, j;
	uint32_t cp;

	while (i < len) {
		unsigned char b = s[i];

		if (b < 0x80) {
			REQUIRE(b >= 0x20 || b == '\n' || b == '\t', "control byte 0x%02x at %zu",
				b, i);
			REQUIRE(b != 0x7f, "DEL at %zu", i);
			i++;
			continue;
		}
		if ((b & 0xe0) == 0xc0) {
			n = 2;
			cp = b & 0x1f;
		} else if ((b & 0xf0) == 0xe0) {
			n = 3;
			cp = b & 0x0f;
		} else if ((b & 0xf8) == 0xf0) {
			n = 4;
			cp = b & 0x07;
		} else {
			ck_abort_msg("bad UTF-8 lead byte 0x%02x at %zu", b, i);
		}
		REQUIRE(i + n <= len, "truncated UTF-8 at %zu", i);
		for (j = 1; j < n; j++) {
			REQUIRE((s[i + j] & 0xc0) == 0x80, "bad continuation at %zu", i + j);
			cp = cp << 6 | (s[i + j] & 0x3f);
		}
		REQUIRE((n == 2 && cp >= 0x80) || (n == 3 && cp >= 0x800) ||
				(n == 4 && cp >= 0x10000),
			"overlong UTF-8 at %zu", i);
		REQUIRE(cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) && cp != 0xfffe &&
				cp != 0xffff,
			"code point U+%X not allowed in XML at %zu", cp, i);
		i += n;
	}
}

static size_t check_entity(const char *s, size_t i)
{
	static const char *const ents[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" };
	size_t k;

	for (k = 0; k < sizeof(ents) / sizeof(ents[0]); k++) {
		if (strncmp(s + i, ents[k], strlen(ents[k])) == 0)
			return i + strlen(ents[k]);
	}
	ck_abort_msg("bad entity at %zu: '%.10s'", i, s + i);
	return 0;
}

static int is_name_char(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       ch == '-' || ch == '_' || ch == ':' || ch == '.';
}

/*
 * A small well-formedness check: one root element, every tag closed in order,
 * attributes quoted, entities known, CDATA only inside an element.  Returns the number
 * of elements.
 */
static size_t check_xml(const char *s, size_t len)
{
	const char *stack[64];
	size_t slen[64], sp = 0, i = 0, elements = 0;
	int roots = 0;

	check_utf8((const unsigned char *)s, len);
	REQUIRE(strncmp(s, "<?xml ", 6) == 0, "no XML declaration");
	while (i < len) {
		const char *end;

		if (s[i] == '&') {
			REQUIRE(sp > 0, "text outside the root at %zu", i);
			i = check_entity(s, i);
			continue;
		}
		if (s[i] != '<') {
			REQUIRE(sp > 0 || s[i] == '\n' || s[i] == ' ',
				"text outside the root at %zu", i);
			i++;
			continue;
		}
		if (strncmp(s + i, "<?", 2) == 0) {
			end = strstr(s + i, "?>");
			REQUIRE(end != NULL, "unterminated markup at %zu", i);
			i = (size_t)(end - s) + 2;
		} else if (strncmp(s + i, "<![CDATA[", 9) == 0) {
			REQUIRE(sp > 0, "CDATA outside an element at %zu", i);
			end = strstr(s + i, "]]>");
			REQUIRE(end != NULL, "unterminated markup at %zu", i);
			i = (size_t)(end - s) + 3;
		} else if (strncmp(s + i, "<!--", 4) == 0) {
			end = strstr(s + i, "-->");
			REQUIRE(end != NULL, "unterminated markup at %zu", i);
			i = (size_t)(end - s) + 3;
		} else if (s[i + 1] == '/') {
			size_t k = i + 2;

			while (is_name_char(s[k]))
				k++;
			REQUIRE(s[k] == '>', "bad end tag at %zu", i);
			REQUIRE(sp > 0, "end tag without a start at %zu", i);
			REQUIRE(slen[sp - 1] == k - i - 2 &&
					strncmp(stack[sp - 1], s + i + 2, slen[sp - 1]) == 0,
				"end tag '%.*s' closes '%.*s' at %zu", (int)(k - i - 2), s + i + 2,
				(int)slen[sp - 1], stack[sp - 1], i);
			sp--;
			i = k + 1;
		} else {
			size_t k = i + 1, name = i + 1, nlen;

			while (is_name_char(s[k]))
				k++;
			nlen = k - name;
			REQUIRE(nlen > 0, "bad start tag at %zu", i);
			REQUIRE(sp > 0 || roots == 0, "second root element at %zu", i);
			elements++;
			for (;;) {
				size_t a;

				while (s[k] == ' ' || s[k] == '\n')
					k++;
				if (s[k] == '/' && s[k + 1] == '>') {
					k += 2;
					if (sp == 0)
						roots++;
					break;
				}
				if (s[k] == '>') {
					REQUIRE(sp < 64, "elements nested too deep at %zu", k);
					if (sp == 0)
						roots++;
					stack[sp] = s + name;
					slen[sp++] = nlen;
					k++;
					break;
				}
				a = k;
				while (is_name_char(s[k]))
					k++;
				REQUIRE(k > a && s[k] == '=' && s[k + 1] == '"',
					"bad attribute at %zu", k);
				k += 2;
				while (s[k] != '"') {
					REQUIRE(s[k] != '<' && s[k] != '\0',
						"bad attribute value at %zu", k);
					if (s[k] == '&')
						k = check_entity(s, k);
					else
						k++;
				}
				k++;
				REQUIRE(s[k] == ' ' || s[k] == '>' || s[k] == '/',
					"attributes not separated at %zu", k);
			}
			i = k;
		}
	}
	REQUIRE(sp == 0, "%zu elements left open", sp);
	REQUIRE(roots == 1, "%d root elements", roots);
	return elements;
}

/* The attribute @attr of the frame whose <title> starts with @title_prefix, as a number. */
static double frame_attr(const char *svg, const char *title_prefix, const char *attr)
{
	char want[512], key[64];
	const char *t, *g, *end, *a;

	snprintf(want, sizeof(want), "<title>%s", title_prefix);
	t = strstr(svg, want);
	ck_assert_msg(t != NULL, "no frame '%s'", title_prefix);
	for (g = t; g > svg && strncmp(g, "<g ", 3) != 0; g--)
		;
	end = strstr(t, "</g>");
	ck_assert_ptr_nonnull(end);
	snprintf(key, sizeof(key), " %s=\"", attr);
	a = strstr(g, key);
	ck_assert_msg(a != NULL && a < end, "frame '%s' has no %s", title_prefix, attr);
	return strtod(a + strlen(key), NULL);
}

/* Whether the frame whose title starts with @title_prefix has a label, copied to @buf. */
static int frame_label(const char *svg, const char *title_prefix, char *buf, size_t size)
{
	char want[512];
	const char *t, *end, *x, *close;

	snprintf(want, sizeof(want), "<title>%s", title_prefix);
	t = strstr(svg, want);
	ck_assert_msg(t != NULL, "no frame '%s'", title_prefix);
	end = strstr(t, "</g>");
	x = strstr(t, "<text ");
	if (!x || x > end)
		return 0;
	x = strchr(x, '>') + 1;
	close = strstr(x, "</text>");
	snprintf(buf, size, "%.*s", (int)(close - x), x);
	return 1;
}

/*
 * all 1000
 *   app 900 (process)
 *     main 800
 *       compute 500
 *         do_work 300
 *           do_work 200
 *         long_function_name 30
 *         tiny 3
 *       read 200 (libc)
 *         sys_read 150 (kernel)
 *     [unknown] 50
 *   kworker/0:1 100 (process)
 *     worker_thread 100 (kernel)
 */
static struct tools_flame_node *basic_tree(void)
{
	struct tools_flame_node *root = tn_new("all", NULL, 1000, TOOLS_FLAME_PROCESS);
	struct tools_flame_node *app, *main_fn, *compute, *w, *rd, *kw;

	app = tn_add(root, "app", NULL, 900, TOOLS_FLAME_PROCESS);
	main_fn = tn_add(app, "main", "/usr/bin/app", 800, TOOLS_FLAME_USER);
	compute = tn_add(main_fn, "compute", "/usr/bin/app", 500, TOOLS_FLAME_USER);
	w = tn_add(compute, "do_work", "/usr/bin/app", 300, TOOLS_FLAME_USER);
	tn_add(w, "do_work", "/usr/bin/app", 200, TOOLS_FLAME_USER);
	tn_add(compute, "long_function_name", "/usr/bin/app", 30, TOOLS_FLAME_USER);
	tn_add(compute, "tiny", "/usr/bin/app", 3, TOOLS_FLAME_USER);
	rd = tn_add(main_fn, "read", "/lib/libc.so.6", 200, TOOLS_FLAME_USER);
	tn_add(rd, "sys_read", "[kernel.kallsyms]", 150, TOOLS_FLAME_KERNEL);
	tn_add(app, "[unknown]", NULL, 50, TOOLS_FLAME_UNKNOWN);
	kw = tn_add(root, "kworker/0:1", NULL, 100, TOOLS_FLAME_PROCESS);
	tn_add(kw, "worker_thread", "[kernel.kallsyms]", 100, TOOLS_FLAME_KERNEL);
	return root;
}

static uint32_t lcg_state;

static uint32_t lcg(void)
{
	lcg_state = lcg_state * 1103515245u + 12345u;
	return lcg_state >> 8;
}

/*
 * A random (but fixed: seeded) recursive tree of @n frames under "all" with three
 * processes, "do_work" nested in itself under app, and consistent inclusive counts.
 */
static struct tools_flame_node *big_tree(size_t n)
{
	static const char *const names[] = {
		"main",
		"compute",
		"do_work",
		"parse_input",
		"hash_lookup",
		"memcpy",
		"malloc",
		"free",
		"_int_malloc",
		"std::vector<int>::push_back",
		"render",
		"update_state",
		"sys_read",
		"sys_write",
		"__x64_sys_futex",
		"schedule",
		"[unknown]",
		"libfoo.so+0x1234",
		"qsort",
		"strcmp",
		"inflate",
		"deflate",
		"operator new(unsigned long)",
		"json_parse",
		"encode_frame",
		"tcp_sendmsg",
		"do_syscall_64",
		"entry_SYSCALL_64",
		"page_fault",
		"worker_loop",
	};
	struct tools_flame_node **nodes, **parent;
	struct tools_flame_node *root;
	size_t i, count;

	REQUIRE(n >= 7, "tree too small");
	nodes = calloc(n, sizeof(*nodes));
	parent = calloc(n, sizeof(*parent));
	REQUIRE(nodes && parent, "out of memory");
	lcg_state = 12345;
	root = nodes[0] = tn_new("all", NULL, 0, TOOLS_FLAME_PROCESS);
	nodes[1] = tn_add(root, "app", NULL, 0, TOOLS_FLAME_PROCESS);
	nodes[2] = tn_add(root, "db", NULL, 0, TOOLS_FLAME_PROCESS);
	nodes[3] = tn_add(root, "kworker/1:2", NULL, 0, TOOLS_FLAME_PROCESS);
	nodes[4] = tn_add(nodes[1], "do_work", "/usr/bin/app", 0, TOOLS_FLAME_USER);
	nodes[5] = tn_add(nodes[4], "do_work", "/usr/bin/app", 0, TOOLS_FLAME_USER);
	nodes[6] = tn_add(nodes[5], "compute", "/usr/bin/app", 0, TOOLS_FLAME_USER);
	parent[1] = parent[2] = parent[3] = root;
	parent[4] = nodes[1];
	parent[5] = nodes[4];
	parent[6] = nodes[5];
	for (count = 7; count < n; count++) {
		struct tools_flame_node *p = nodes[1 + lcg() % (count - 1)];
		const char *name = names[lcg() % (sizeof(names) / sizeof(names[0]))];
		enum tools_flame_kind kind = TOOLS_FLAME_USER;
		const char *image = "/usr/bin/app";

		if (strncmp(name, "sys_", 4) == 0 || strncmp(name, "__x64", 5) == 0 ||
		    strcmp(name, "schedule") == 0 || strcmp(name, "tcp_sendmsg") == 0 ||
		    strcmp(name, "do_syscall_64") == 0 || strncmp(name, "entry_", 6) == 0 ||
		    strcmp(name, "page_fault") == 0) {
			kind = TOOLS_FLAME_KERNEL;
			image = "[kernel.kallsyms]";
		} else if (name[0] == '[' || strstr(name, "+0x")) {
			kind = TOOLS_FLAME_UNKNOWN;
			image = NULL;
		}
		nodes[count] = tn_add(p, name, image, 0, kind);
		parent[count] = p;
	}
	/* Children come after their parents: sum the counts from the last frame back. */
	for (i = n; i-- > 0;) {
		nodes[i]->samples += nodes[i]->nchildren == 0 ? 30 + lcg() % 70 : lcg() % 20;
		if (parent[i])
			parent[i]->samples += nodes[i]->samples;
	}
	free(nodes);
	free(parent);
	return root;
}

static void reverse_children(struct tools_flame_node *root)
{
	size_t i, j;

	(void)root;
	for (i = 0; i < tn_count; i++) {
		struct tools_flame_node *n = tn_all[i];

		for (j = 0; j < n->nchildren / 2; j++) {
			struct tools_flame_node *t = n->children[j];

			n->children[j] = n->children[n->nchildren - 1 - j];
			n->children[n->nchildren - 1 - j] = t;
		}
	}
}

START_TEST(test_basic_titles)
{
	struct tools_flame_node *root = basic_tree();
	char label[256];
	size_t len;
	char *svg = write_svg(root, NULL, "unit test", &len);
	size_t elements = check_xml(svg, len);

	ck_assert_uint_gt(elements, 40);
	ck_assert_uint_eq(count_str(svg, "<g class=\"f\""), 13);
	ck_assert_uint_eq(count_str(svg, "<g "), count_str(svg, "</g>"));
	ck_assert_uint_eq(count_str(svg, "<title>"), 13);
	ck_assert_ptr_nonnull(
		strstr(svg, "<text id=\"title\" x=\"600\" y=\"24\">Flame Graph</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">unit test</text>"));
	ck_assert_ptr_null(strstr(svg, "id=\"notice\""));
	ck_assert_ptr_nonnull(strstr(svg, "<title>all " EM_DASH " 1000 samples, 100.00%</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>app " EM_DASH " 900 samples, 90.00%</title>"));
	ck_assert_ptr_nonnull(
		strstr(svg, "<title>main (/usr/bin/app) " EM_DASH " 800 samples, 80.00%</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>do_work (/usr/bin/app) " EM_DASH
					  " 200 samples, 20.00%</title>"));
	ck_assert_ptr_nonnull(
		strstr(svg, "<title>tiny (/usr/bin/app) " EM_DASH " 3 samples, 0.30%</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>sys_read ([kernel.kallsyms]) " EM_DASH
					  " 150 samples, 15.00%</title>"));
	ck_assert_ptr_nonnull(
		strstr(svg, "<title>[unknown] " EM_DASH " 50 samples, 5.00%</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>worker_thread ([kernel.kallsyms]) " EM_DASH
					  " 100 samples, 10.00%</title>"));

	/* Geometry: the root spans 1180 px at the bottom; callees sit above. */
	ck_assert_double_eq(frame_attr(svg, "all ", "data-d"), 0);
	ck_assert_double_eq(frame_attr(svg, "sys_read ", "data-d"), 4);
	ck_assert_double_eq(frame_attr(svg, "all ", "x"), 10.0);
	ck_assert_double_eq(frame_attr(svg, "all ", "width"), 1180.0);
	ck_assert_double_eq(frame_attr(svg, "app ", "width"), 1062.0);
	ck_assert_double_eq(frame_attr(svg, "kworker/0:1 ", "x"), 10.0 + 1062.0);
	ck_assert_double_eq(frame_attr(svg, "kworker/0:1 ", "data-o"), 900);
	ck_assert_double_eq(frame_attr(svg, "all ", "y") - frame_attr(svg, "app ", "y"), 16);
	ck_assert_double_eq(frame_attr(svg, "app ", "y") - frame_attr(svg, "main ", "y"), 16);
	ck_assert_double_eq(frame_attr(svg, "do_work (/usr/bin/app) " EM_DASH " 200", "y"), 58);
	ck_assert_double_eq(frame_attr(svg, "sys_read ", "y"), 74);
	ck_assert_ptr_nonnull(strstr(svg, "height=\"188\"")); /* 58 + 6 rows + 34 */

	/* Labels: whole, cut with "..", or none at all. */
	ck_assert(frame_label(svg, "compute ", label, sizeof(label)));
	ck_assert_str_eq(label, "compute");
	ck_assert(frame_label(svg, "long_function_name ", label, sizeof(label)));
	ck_assert_str_eq(label, "lo.."); /* 35.4 px: 4 characters */
	ck_assert(!frame_label(svg, "tiny ", label, sizeof(label)));

	/* Colour families. */
	{
		const char *t = strstr(svg, "<title>sys_read ");
		unsigned r, g, b;

		ck_assert_int_eq(
			sscanf(strstr(t, "fill=\"rgb("), "fill=\"rgb(%u,%u,%u)", &r, &g, &b), 3);
		ck_assert(r <= 100 && g >= 150 && b >= 180);
		t = strstr(svg, "<title>main ");
		ck_assert_int_eq(
			sscanf(strstr(t, "fill=\"rgb("), "fill=\"rgb(%u,%u,%u)", &r, &g, &b), 3);
		ck_assert(r >= 205 && b <= 55);
		t = strstr(svg, "<title>[unknown] ");
		ck_assert_int_eq(
			sscanf(strstr(t, "fill=\"rgb("), "fill=\"rgb(%u,%u,%u)", &r, &g, &b), 3);
		ck_assert(r == g && g == b);
		ck_assert_ptr_null(strstr(svg, "fill=\"rgb(230,0,230)\""));
	}

	/* Self-contained: inline style and script, nothing fetched. */
	ck_assert_ptr_nonnull(strstr(svg, "<style type=\"text/css\"><![CDATA["));
	ck_assert_ptr_nonnull(strstr(svg, "<script type=\"text/ecmascript\"><![CDATA["));
	ck_assert_ptr_null(strstr(svg, "href"));
	ck_assert_ptr_null(strstr(svg, "@import"));
	ck_assert_ptr_null(strstr(svg, "url("));
	ck_assert_uint_eq(count_str(svg, "http"), 2); /* the SVG namespace, also in the script */
	ck_assert_uint_eq(count_str(svg, "http://www.w3.org/2000/svg"), 2);
	free(svg);
	tn_free_all();
}
END_TEST

START_TEST(test_escape_hostile)
{
	static const char *const hostile[] = {
		"<a&b>\"'",
		"\x01"
		"ctl\x1b",
		"bad\xff\xfe",
		"over\xc0\xaf",
		"sur\xed\xa0\x80",
		"trunc\xe2\x82",
		"ok\xc3\xbc",
		"c1\xc2\x85",
		"nonchar\xef\xbf\xbe",
		"fire\xf0\x9f\x94\xa5",
		"big\xf4\x90\x80\x80",
		"",
		"tab\there",
		"]]>",
	};
	struct tools_flame_node *root = tn_new("all", NULL, 1400, TOOLS_FLAME_PROCESS);
	char *longname = malloc(10001);
	size_t i, len;
	char *svg;

	ck_assert_ptr_nonnull(longname);
	memset(longname, 'x', 10000);
	longname[10000] = '\0';
	for (i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++)
		tn_add(root, hostile[i], "/tmp/<evil>&\"img\"\x7f", 90, TOOLS_FLAME_USER);
	tn_add(root, NULL, NULL, 50, TOOLS_FLAME_UNKNOWN);
	tn_add(root, longname, NULL, 10, TOOLS_FLAME_USER);
	svg = write_svg(root, "t<i>&t\x02le\xff", "sub\"'\x1f", &len);
	(void)check_xml(svg, len);
	ck_assert_uint_eq(count_str(svg, "<g class=\"f\""), 17);
	ck_assert_ptr_nonnull(strstr(svg, ">t&lt;i&gt;&amp;t\\x02le\\xff</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">sub&quot;&apos;\\x1f</text>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>&lt;a&amp;b&gt;&quot;&apos; (/tmp/&lt;evil&gt;"
					  "&amp;&quot;img&quot;\\x7f) " EM_DASH " 90 samples"));
	ck_assert_ptr_nonnull(strstr(svg, "data-f=\"&lt;a&amp;b&gt;&quot;&apos;\""));
	ck_assert_ptr_nonnull(strstr(svg, "<title>\\x01ctl\\x1b "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>bad\\xff\\xfe "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>over\\xc0\\xaf "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>sur\\xed\\xa0\\x80 "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>trunc\\xe2\\x82 "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>ok\xc3\xbc "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>c1\\xc2\\x85 "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>nonchar\\xef\\xbf\\xbe "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>fire\xf0\x9f\x94\xa5 "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>big\\xf4\\x90\\x80\\x80 "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>tab\\x09here "));
	ck_assert_ptr_nonnull(strstr(svg, "<title>]]&gt; "));
	/* Empty and NULL names: two frames with empty names. */
	ck_assert_uint_eq(count_str(svg, "data-f=\"\""), 2);
	/* A 10000-byte name is cut at 2048 bytes and ends in "..". */
	{
		char *want = malloc(2048 + 32);

		ck_assert_ptr_nonnull(want);
		memcpy(want, "<title>", 7);
		memset(want + 7, 'x', 2048);
		strcpy(want + 7 + 2048, ".. " EM_DASH " 10 samples");
		ck_assert_ptr_nonnull(strstr(svg, want));
		free(want);
	}
	free(svg);
	free(longname);
	tn_free_all();
}
END_TEST

START_TEST(test_deterministic)
{
	struct tools_flame_node *root = big_tree(1000);
	size_t la, lb, lc;
	char *a = write_svg(root, "big", NULL, &la);
	char *b = write_svg(root, "big", NULL, &lb);
	char *c;

	(void)check_xml(a, la);
	ck_assert_uint_eq(la, lb);
	ck_assert(memcmp(a, b, la) == 0);
	ck_assert_uint_eq(count_str(a, "<g class=\"f\""), 1000);
	ck_assert_ptr_null(strstr(a, "id=\"notice\""));
	reverse_children(root);
	c = write_svg(root, "big", NULL, &lc);
	ck_assert_uint_eq(la, lc);
	ck_assert(memcmp(a, c, la) == 0);
	free(a);
	free(b);
	free(c);
	tn_free_all();
}
END_TEST

START_TEST(test_sorted)
{
	struct tools_flame_node *root = tn_new("all", NULL, 100, TOOLS_FLAME_PROCESS);
	const char *pb, *pa1, *pa2, *pc;
	char *svg;

	tn_add(root, "b", NULL, 10, TOOLS_FLAME_USER);
	tn_add(root, "a", "/z", 10, TOOLS_FLAME_USER);
	tn_add(root, "c", NULL, 10, TOOLS_FLAME_USER);
	tn_add(root, "a", "/y", 10, TOOLS_FLAME_USER);
	svg = write_svg(root, NULL, NULL, NULL);
	pa1 = strstr(svg, "<title>a (/y)");
	pa2 = strstr(svg, "<title>a (/z)");
	pb = strstr(svg, "<title>b ");
	pc = strstr(svg, "<title>c ");
	ck_assert(pa1 && pa2 && pb && pc);
	ck_assert(pa1 < pa2 && pa2 < pb && pb < pc);
	ck_assert_double_eq(frame_attr(svg, "a (/y)", "data-o"), 0);
	ck_assert_double_eq(frame_attr(svg, "c ", "data-o"), 30);
	ck_assert_double_eq(frame_attr(svg, "c ", "x"), 10 + 354.0);
	free(svg);
	tn_free_all();
}
END_TEST

START_TEST(test_omitted)
{
	struct tools_flame_node *root = tn_new("all", NULL, 1000000, TOOLS_FLAME_PROCESS);
	struct tools_flame_node *big, *t;
	static char names[1000][16];
	size_t i, len;
	char *svg;

	big = tn_add(root, "big", NULL, 900000, TOOLS_FLAME_USER);
	tn_add(big, "inner", NULL, 100000, TOOLS_FLAME_USER);
	for (i = 0; i < 1000; i++) {
		snprintf(names[i], sizeof(names[i]), "tiny%04zu", i);
		t = tn_add(root, names[i], NULL, 10, TOOLS_FLAME_USER);
		if (i == 500) {
			tn_add(t, "above_tiny", NULL, 5, TOOLS_FLAME_USER);
			tn_add(t, "above_tiny2", NULL, 5, TOOLS_FLAME_USER);
		}
	}
	/* 0.1 px of 1180 px is 84.7 samples of 1000000: 85 is drawn, 84 is not. */
	tn_add(root, "edge85", NULL, 85, TOOLS_FLAME_USER);
	tn_add(root, "edge84", NULL, 84, TOOLS_FLAME_USER);
	svg = write_svg(root, NULL, NULL, &len);
	(void)check_xml(svg, len);
	ck_assert_uint_eq(count_str(svg, "<g class=\"f\""), 4);
	ck_assert_ptr_nonnull(strstr(svg, "<title>edge85 "));
	ck_assert_ptr_null(strstr(svg, "<title>edge84 "));
	ck_assert_ptr_null(strstr(svg, "tiny0"));
	ck_assert_double_eq(frame_attr(svg, "edge85 ", "width"), 0.1);
	ck_assert_ptr_nonnull(strstr(
		svg, ">1003 frames narrower than 0.1 px not drawn (10084 samples, 1.01%)</text>"));
	free(svg);
	tn_free_all();
}
END_TEST

START_TEST(test_zero_samples)
{
	struct tools_flame_node *root = tn_new("all", NULL, 0, TOOLS_FLAME_PROCESS);
	size_t len;
	char *svg;

	tn_add(root, "ghost", NULL, 0, TOOLS_FLAME_USER);
	svg = write_svg(root, NULL, "nothing here", &len);
	(void)check_xml(svg, len);
	ck_assert_ptr_nonnull(strstr(svg, ">no samples</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">Flame Graph</text>"));
	ck_assert_ptr_nonnull(strstr(svg, ">nothing here</text>"));
	ck_assert_ptr_null(strstr(svg, "<g "));
	ck_assert_ptr_null(strstr(svg, "ghost"));
	free(svg);
	svg = write_svg(NULL, NULL, NULL, &len);
	(void)check_xml(svg, len);
	ck_assert_ptr_nonnull(strstr(svg, ">no samples</text>"));
	free(svg);
	tn_free_all();
}
END_TEST

static void deep_chain(size_t depth)
{
	struct tools_flame_node *root = tn_new("all", NULL, 1000, TOOLS_FLAME_PROCESS);
	struct tools_flame_node *n = root;
	char want[128], *svg;
	size_t i, len;

	for (i = 1; i <= depth; i++)
		n = tn_add(n, i % 2 ? "recurse" : "recurse2", "/bin/deep", 1000, TOOLS_FLAME_USER);
	svg = write_svg(root, NULL, NULL, &len);
	(void)check_xml(svg, len);
	ck_assert_uint_eq(count_str(svg, "<g class=\"f\""), depth + 1);
	snprintf(want, sizeof(want), "height=\"%zu\"", 38 + (depth + 1) * 16 + 34);
	ck_assert_ptr_nonnull(strstr(svg, want));
	snprintf(want, sizeof(want), "data-d=\"%zu\"><title>", depth);
	ck_assert_ptr_nonnull(strstr(svg, want));
	snprintf(want, sizeof(want), "<rect x=\"10.0\" y=\"%zu\" width=\"1180.0\"",
		 38 + depth * 16);
	ck_assert_ptr_nonnull(strstr(svg, want)); /* the root, at the bottom */
	ck_assert_ptr_nonnull(strstr(svg, "y=\"38\" width=\"1180.0\"")); /* the top frame */
	free(svg);
	tn_free_all();
}

START_TEST(test_deep)
{
	deep_chain(600);
	deep_chain(1000);
}
END_TEST

START_TEST(test_deeper)
{
	/* Deep enough that a recursive writer would need a large stack. */
	deep_chain(20000);
}
END_TEST

START_TEST(test_fanout)
{
	struct tools_flame_node *root = tn_new("all", NULL, 100000, TOOLS_FLAME_PROCESS);
	size_t i, len;
	char *svg;

	/* 100000 frames of 0.0118 px: none drawn, all counted. */
	for (i = 0; i < 100000; i++)
		tn_add(root, "leaf", NULL, 1, TOOLS_FLAME_USER);
	svg = write_svg(root, NULL, NULL, &len);
	(void)check_xml(svg, len);
	ck_assert_uint_eq(count_str(svg, "<g class=\"f\""), 1);
	ck_assert_ptr_nonnull(strstr(
		svg, ">100000 frames narrower than 0.1 px not drawn (100000 samples, 100.00%)<"));
	free(svg);
	tn_free_all();

	/* 5000 frames of 0.236 px: all drawn. */
	root = tn_new("all", NULL, 5000, TOOLS_FLAME_PROCESS);
	for (i = 0; i < 5000; i++)
		tn_add(root, "leaf", NULL, 1, TOOLS_FLAME_USER);
	svg = write_svg(root, NULL, NULL, &len);
	(void)check_xml(svg, len);
	ck_assert_uint_eq(count_str(svg, "<g class=\"f\""), 5001);
	ck_assert_ptr_null(strstr(svg, "id=\"notice\""));
	free(svg);
	tn_free_all();
}
END_TEST

START_TEST(test_clamp)
{
	struct tools_flame_node *root = tn_new("all", NULL, 100, TOOLS_FLAME_PROCESS);
	struct tools_flame_node *b;
	size_t len;
	char *svg;

	tn_add(root, "a", NULL, 80, TOOLS_FLAME_USER);
	b = tn_add(root, "b", NULL, 50, TOOLS_FLAME_USER);
	tn_add(b, "c", NULL, 50, TOOLS_FLAME_USER);
	tn_add(root, "d", NULL, 10, TOOLS_FLAME_USER);
	svg = write_svg(root, NULL, NULL, &len);
	(void)check_xml(svg, len);
	ck_assert_uint_eq(count_str(svg, "<g class=\"f\""), 4);
	/* b keeps its own count in the title but is drawn in the 20 samples left. */
	ck_assert_ptr_nonnull(strstr(svg, "<title>b " EM_DASH " 50 samples, 50.00%</title>"));
	ck_assert_double_eq(frame_attr(svg, "b ", "data-w"), 20);
	ck_assert_double_eq(frame_attr(svg, "b ", "x"), 10 + 944.0);
	ck_assert_double_eq(frame_attr(svg, "b ", "width"), 236.0);
	ck_assert_double_eq(frame_attr(svg, "c ", "x"), 10 + 944.0);
	ck_assert_double_eq(frame_attr(svg, "c ", "width"), 236.0);
	ck_assert_ptr_null(strstr(svg, "<title>d "));
	ck_assert_ptr_nonnull(strstr(svg, ">1 frames narrower than 0.1 px not drawn (0 samples, "
					  "0.00%); 3 frames clamped to their parent's width<"));
	free(svg);
	tn_free_all();
}
END_TEST

static int write_to(FILE *f, const struct tools_flame_node *root)
{
	int r = tools_flame_write(f, root, "t", "s");

	(void)fclose(f);
	return r;
}

START_TEST(test_eio)
{
	struct tools_flame_node *root = basic_tree();
	struct tools_flame_node *zero = tn_new("all", NULL, 0, TOOLS_FLAME_PROCESS);
	char small[64];
	FILE *f;

	/* Unbuffered: the first write fails. */
	f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(setvbuf(f, NULL, _IONBF, 0), 0);
	ck_assert_int_eq(write_to(f, root), -EIO);
	/* Buffered: the failure shows only when the buffer is flushed. */
	f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(write_to(f, root), -EIO);
	f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(write_to(f, zero), -EIO);
	/* A memory stream too small for the document. */
	f = fmemopen(small, sizeof(small), "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(write_to(f, root), -EIO);
	f = fmemopen(small, sizeof(small), "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(write_to(f, zero), -EIO);
	tn_free_all();
}
END_TEST

START_TEST(test_enomem)
{
	struct tools_flame_node *root = basic_tree();
	struct tools_flame_node *leaf =
		tn_add(root->children[0]->children[0], "bad", NULL, 10, TOOLS_FLAME_USER);
	struct tools_flame_node *fake = leaf;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	/* A child array no allocation can copy, three levels up: the walk fails there. */
	leaf->nchildren = SIZE_MAX / 2;
	leaf->children = &fake;
	f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(tools_flame_write(f, root, NULL, NULL), -ENOMEM);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_uint_eq(len, 0); /* found in the measuring walk, before any output */
	free(buf);
	leaf->nchildren = 0;
	leaf->children = NULL;
	tn_free_all();
}
END_TEST

static void log_hook(int prio, const char *msg, void *userdata)
{
	(void)userdata;
	if (prio <= LOG_PRIO_ERR) {
		fprintf(stderr, "unexpected error message: %s\n", msg);
		abort();
	}
}

/* The sample for the browser check: the 1000-frame tree, written to FLAME_TEST_SVG. */
static int write_sample(const char *path)
{
	struct tools_flame_node *root = big_tree(1000);
	FILE *f = fopen(path, "we");
	int r;

	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		return -1;
	}
	r = tools_flame_write(f, root, "hwpmc test flame graph",
			      "1000 frames; search do_work (it calls itself)");
	if (fclose(f) != 0 && r == 0)
		r = -EIO;
	tn_free_all();
	if (r < 0)
		fprintf(stderr, "%s: %s\n", path, strerror(-r));
	return r;
}

static Suite *flame_suite(void)
{
	Suite *s = suite_create("tools-flame");
	TCase *tc;

	tc = tcase_create("document");
	tcase_add_test(tc, test_basic_titles);
	tcase_add_test(tc, test_sorted);
	tcase_add_test(tc, test_deterministic);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_test(tc, test_escape_hostile);
	tcase_add_test(tc, test_clamp);
	suite_add_tcase(s, tc);

	tc = tcase_create("edges");
	tcase_set_timeout(tc, 120); /* under valgrind */
	tcase_add_test(tc, test_omitted);
	tcase_add_test(tc, test_zero_samples);
	tcase_add_test(tc, test_deep);
	tcase_add_test(tc, test_deeper);
	tcase_add_test(tc, test_fanout);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_test(tc, test_eio);
	tcase_add_test(tc, test_enomem);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *sample = getenv("FLAME_TEST_SVG");
	SRunner *sr;
	int failed;

	log_set_hook(log_hook, NULL);
	if (sample && sample[0] && write_sample(sample) < 0)
		return 1;
	sr = srunner_create(flame_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
