/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-flame.c: the interactive SVG flame graph of `hwpmc report --flame` (module tools).
 *
 * PUBLIC INTERFACES
 *   tools_flame_write()   see tools-flame.h
 *
 * IMPLEMENTATION NOTES
 *   The document is 1200 px wide with 10 px margins, so frames share 1180 px.  The root
 *   is the bottom row and each callee sits one 16 px row above its caller.  Children are
 *   sorted by name, then image, then samples (largest first), then kind, so the output
 *   depends only on the tree and never on the order the caller built it in.  Colours
 *   come from an FNV-1a hash of the name's bytes: warm hues for user code, blue-green
 *   for the kernel, green for processes, grey for unknown frames; the search highlight
 *   (magenta, rgb(230,0,230)) is outside every family.
 *
 *   The tree is walked twice with an explicit stack (no recursion, so a hostile chain of
 *   any depth cannot overflow the C stack).  The first walk finds the drawn depth, the
 *   frames too narrow to draw and the frames that had to be clamped; the SVG header
 *   needs all three before the first frame is written.  The second walk writes a flat
 *   list of frames in pre-order (the root first).
 *
 *   Geometry is integer arithmetic in tenths of a pixel (a 128-bit multiply where the
 *   compiler has one), so the output is identical on every host and in every locale:
 *   no floating-point value is ever printed.  A child gets at most what is left of its
 *   parent's width after its earlier siblings ("clamped"), so no frame is drawn outside
 *   its parent.  A frame narrower than 0.1 px of the full width is not drawn and neither
 *   is anything above it; the notice line under the subtitle says how many frames that
 *   hid and how many samples they held, and how many frames were clamped.
 *
 *   Each frame is <g class="f" data-f=NAME data-n=SAMPLES data-w=DRAWN data-o=OFFSET
 *   data-d=DEPTH>, holding a <title>, a <rect> and (if wide enough) a <text> label.
 *   data-n is the node's own sample count, the one the title shows; data-w is the width
 *   it was drawn with (data-n unless clamped) and data-o the samples left of it, both on
 *   the root's scale, so data-o / root's data-w is the frame's x fraction and the script
 *   can re-lay-out exactly.  The script (at the end of the document, so it runs once
 *   every frame exists) implements hover details, click-to-zoom, regex search with
 *   a "Matched: X%" that counts nested matches once, and the URL fragments #z=NAME and
 *   #s=REGEX (URL-decoded, joined with '&').
 *
 *   Names come from hostile binaries.  Before it is written a name becomes valid UTF-8
 *   that XML accepts: every control byte, C1 control, U+FFFE/U+FFFF and every byte of
 *   an invalid, overlong or surrogate sequence is shown as "\xNN", and a name longer
 *   than FLAME_NAME_MAX bytes is cut and ends in "..".  The XML specials &<>"' are then
 *   written as entities.
 *
 *   Every write's result is checked; the first failure makes the rest no-ops and the
 *   function returns -EIO after flushing @out (a buffered stream reports a full disk
 *   only when flushed).
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tools-flame.h"

#define FLAME_WIDTH    1200
#define FLAME_PAD      10
#define FLAME_FRAMES_W (FLAME_WIDTH - 2 * FLAME_PAD)
#define FLAME_TENTHS   ((uint64_t)FLAME_FRAMES_W * 10) /* frame area, tenths of a px */
#define FLAME_ROW      16
#define FLAME_RECT_H   15
#define FLAME_BOTTOM   34   /* below the root row: the details line */
#define FLAME_CHAR_T   70   /* a label character, tenths of a px (7 px at 12 px) */
#define FLAME_LABEL_T  60   /* label padding inside a frame, tenths of a px */
#define FLAME_NAME_MAX 2048 /* bytes of a sanitized name before it is cut */
#define FLAME_HILITE   "rgb(230,0,230)"

struct flame_buf {
	char *p;
	size_t len;
	size_t cap;
};

/* One frame on the walk's stack: its sorted children and how far the walk got. */
struct flame_level {
	const struct tools_flame_node *node;
	const struct tools_flame_node **kids; /* sorted copy of node->children, owned */
	size_t nkids;
	size_t next;   /* index in kids of the next child to visit */
	uint64_t o;    /* left edge, samples from the root's left edge */
	uint64_t w;    /* drawn width in samples (clamped) */
	uint64_t used; /* samples of w given to children so far */
};

struct flame_ctx {
	FILE *out; /* NULL in the measuring walk */
	int err;   /* first write error (-EIO), then every write is skipped */
	uint64_t total;
	uint64_t min_w; /* a frame narrower than this many samples is not drawn */
	uint64_t top;	/* y of the top row */
	uint64_t max_depth;
	uint64_t omitted;
	uint64_t omitted_samples;
	uint64_t clamped;
	struct flame_level *levels;
	size_t nlevels;
	size_t cap_levels;
	const struct tools_flame_node **todo; /* flame_count()'s stack */
	size_t cap_todo;
	struct flame_buf name;
	struct flame_buf image;
};

static const char flame_style[] =
	"<style type=\"text/css\"><![CDATA[\n"
	"text { font-family: Verdana, 'DejaVu Sans', sans-serif; font-size: 12px; fill: #000; }\n"
	"#title { font-size: 17px; text-anchor: middle; }\n"
	".sub { text-anchor: middle; fill: #444; }\n"
	".btn { cursor: pointer; fill: #0645ad; }\n"
	".btn:hover { text-decoration: underline; }\n"
	"g.f { cursor: pointer; }\n"
	"g.f:hover > rect { stroke: #000; stroke-width: 0.5; }\n"
	"g.f > text { pointer-events: none; }\n"
	"g.m > rect { fill: " FLAME_HILITE "; }\n"
	"g.a { opacity: 0.5; }\n"
	".h { display: none; }\n"
	"]]></style>\n";

/*
 * The script: plain ECMAScript 5 plus Array.from, no ']]' pair anywhere (it sits in a
 * CDATA section).  X0, W and TW must match FLAME_PAD, FLAME_FRAMES_W and FLAME_TENTHS;
 * the label rule must match flame_label().
 */
static const char flame_script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"(function () {\n"
	"'use strict';\n"
	"var X0 = 10, TW = 11800, NS = 'http://www.w3.org/2000/svg', doc = document;\n"
	"var details = doc.getElementById('details'), matched = doc.getElementById('matched');\n"
	"var unzoomBtn = doc.getElementById('unzoom'), searchBtn = doc.getElementById('search');\n"
	"var unsearchBtn = doc.getElementById('unsearch');\n"
	"var gs = doc.getElementsByClassName('f'), frames = [], byG = new Map(), i;\n"
	"for (i = 0; i < gs.length; i++) {\n"
	"\tvar g = gs[i], t = g.getElementsByTagName('title')[0].textContent;\n"
	"\tvar k = t.lastIndexOf(' \\u2014 ');\n"
	"\tvar f = { g: g, rect: g.getElementsByTagName('rect')[0],\n"
	"\t\ttext: g.getElementsByTagName('text')[0] || null,\n"
	"\t\tname: g.getAttribute('data-f'), label: k >= 0 ? t.substring(0, k) : t,\n"
	"\t\tns: g.getAttribute('data-n'), n: Number(g.getAttribute('data-n')),\n"
	"\t\tw: Number(g.getAttribute('data-w')), o: Number(g.getAttribute('data-o')),\n"
	"\t\td: Number(g.getAttribute('data-d')) };\n"
	"\tframes.push(f);\n"
	"\tbyG.set(g, f);\n"
	"}\n"
	"if (!frames.length)\n"
	"\treturn;\n"
	"var root = frames[0], R = root.n > 0 ? root.n : 1, zoomed = null, searching = null;\n"
	"function pct(n) { return (n * 100 / R).toFixed(2); }\n"
	"function tenths(t) { return (t / 10).toFixed(1); }\n"
	"function mark(el, c, on) { if (on) el.classList.add(c); else el.classList.remove(c); }\n"
	"function place(f, x0, x1) {\n"
	"\tvar wt = x1 - x0, nch = wt > 60 ? Math.floor((wt - 60) / 70) : 0;\n"
	"\tvar cs = Array.from(f.name), s = '';\n"
	"\tf.rect.setAttribute('x', tenths(X0 * 10 + x0));\n"
	"\tf.rect.setAttribute('width', tenths(wt));\n"
	"\tif (cs.length <= nch)\n"
	"\t\ts = f.name;\n"
	"\telse if (nch >= 3)\n"
	"\t\ts = cs.slice(0, nch - 2).join('') + '..';\n"
	"\tif (!f.text) {\n"
	"\t\tif (!s)\n"
	"\t\t\treturn;\n"
	"\t\tf.text = doc.createElementNS(NS, 'text');\n"
	"\t\tf.text.setAttribute('y', String(Number(f.rect.getAttribute('y')) + 11));\n"
	"\t\tf.g.appendChild(f.text);\n"
	"\t}\n"
	"\tf.text.setAttribute('x', tenths(X0 * 10 + x0 + 30));\n"
	"\tf.text.textContent = s;\n"
	"}\n"
	"function zoom(z) {\n"
	"\tfor (var j = 0; j < frames.length; j++) {\n"
	"\t\tvar f = frames[j];\n"
	"\t\tvar anc = f.d < z.d && f.o <= z.o && f.o + f.w >= z.o + z.w;\n"
	"\t\tvar inside = f.d >= z.d && f.o >= z.o && f.o + f.w <= z.o + z.w;\n"
	"\t\tmark(f.g, 'h', !anc && !inside);\n"
	"\t\tmark(f.g, 'a', anc);\n"
	"\t\tmark(f.g, 'z', f === z && z !== root);\n"
	"\t\tif (anc)\n"
	"\t\t\tplace(f, 0, TW);\n"
	"\t\telse if (inside)\n"
	"\t\t\tplace(f, Math.round((f.o - z.o) * TW / z.w),\n"
	"\t\t\t      Math.round((f.o + f.w - z.o) * TW / z.w));\n"
	"\t}\n"
	"\tzoomed = z === root ? null : z;\n"
	"\tmark(unzoomBtn, 'h', !zoomed);\n"
	"}\n"
	"function search(re) {\n"
	"\tvar hits = [], total = 0, end = -1, j, f;\n"
	"\tfor (j = 0; j < frames.length; j++) {\n"
	"\t\tf = frames[j];\n"
	"\t\tvar m = re !== null && re.test(f.name);\n"
	"\t\tmark(f.g, 'm', m);\n"
	"\t\tif (m)\n"
	"\t\t\thits.push(f);\n"
	"\t}\n"
	"\t/* Frames nest or are disjoint: a union of intervals counts each sample once. */\n"
	"\thits.sort(function (a, b) { return a.o - b.o || b.w - a.w; });\n"
	"\tfor (j = 0; j < hits.length; j++) {\n"
	"\t\tf = hits[j];\n"
	"\t\tif (f.o >= end) {\n"
	"\t\t\ttotal += f.w;\n"
	"\t\t\tend = f.o + f.w;\n"
	"\t\t} else if (f.o + f.w > end) {\n"
	"\t\t\ttotal += f.o + f.w - end;\n"
	"\t\t\tend = f.o + f.w;\n"
	"\t\t}\n"
	"\t}\n"
	"\tsearching = re;\n"
	"\tmatched.textContent = re !== null ? 'Matched: ' + pct(total) + '%' : '';\n"
	"\tmark(unsearchBtn, 'h', re === null);\n"
	"}\n"
	"function searchFor(s) {\n"
	"\tvar re;\n"
	"\ttry {\n"
	"\t\tre = new RegExp(s);\n"
	"\t} catch (e) {\n"
	"\t\tdetails.textContent = 'Invalid regular expression: ' + s;\n"
	"\t\treturn;\n"
	"\t}\n"
	"\tsearch(re);\n"
	"}\n"
	"function ask() {\n"
	"\tvar s = window.prompt('Search for (regular expression):',\n"
	"\t\t\t      searching !== null ? searching.source : '');\n"
	"\tif (s !== null)\n"
	"\t\tsearchFor(s);\n"
	"}\n"
	"function frameOf(el) {\n"
	"\tfor (; el && el !== doc.documentElement; el = el.parentNode) {\n"
	"\t\tvar f = byG.get(el);\n"
	"\t\tif (f)\n"
	"\t\t\treturn f;\n"
	"\t}\n"
	"\treturn null;\n"
	"}\n"
	"doc.addEventListener('mouseover', function (e) {\n"
	"\tvar f = frameOf(e.target);\n"
	"\tif (f)\n"
	"\t\tdetails.textContent = 'Function: ' + f.label + ', ' + f.ns + ' samples (' +\n"
	"\t\t\tpct(f.n) + '%)';\n"
	"});\n"
	"doc.addEventListener('mouseout', function (e) {\n"
	"\tif (frameOf(e.target))\n"
	"\t\tdetails.textContent = ' ';\n"
	"});\n"
	"doc.addEventListener('click', function (e) {\n"
	"\tvar f = frameOf(e.target);\n"
	"\tif (f)\n"
	"\t\tzoom(f);\n"
	"\telse if (e.target === unzoomBtn)\n"
	"\t\tzoom(root);\n"
	"\telse if (e.target === searchBtn)\n"
	"\t\task();\n"
	"\telse if (e.target === unsearchBtn)\n"
	"\t\tsearch(null);\n"
	"});\n"
	"window.addEventListener('keydown', function (e) {\n"
	"\tif ((e.ctrlKey || e.metaKey) && (e.key === 'f' || e.key === 'F' || e.keyCode === 70)) "
	"{\n"
	"\t\te.preventDefault();\n"
	"\t\task();\n"
	"\t}\n"
	"});\n"
	"/* #z=NAME zooms into the widest frame called NAME, #s=REGEX searches; '&' joins. */\n"
	"function fragment() {\n"
	"\tvar h = location.hash.replace(/^#/, ''), parts = h ? h.split('&') : [];\n"
	"\tvar zname = null, sre = null, best = null, j;\n"
	"\tfor (j = 0; j < parts.length; j++) {\n"
	"\t\tvar eq = parts[j].indexOf('=');\n"
	"\t\tif (eq < 0)\n"
	"\t\t\tcontinue;\n"
	"\t\tvar key = parts[j].substring(0, eq), v = parts[j].substring(eq + 1);\n"
	"\t\ttry {\n"
	"\t\t\tv = decodeURIComponent(v);\n"
	"\t\t} catch (e) {\n"
	"\t\t\t/* not %-encoded: use it as it is */\n"
	"\t\t}\n"
	"\t\tif (key === 'z')\n"
	"\t\t\tzname = v;\n"
	"\t\telse if (key === 's')\n"
	"\t\t\tsre = v;\n"
	"\t}\n"
	"\tfor (j = 0; zname !== null && j < frames.length; j++) {\n"
	"\t\tif (frames[j].name === zname && (best === null || frames[j].w > best.w))\n"
	"\t\t\tbest = frames[j];\n"
	"\t}\n"
	"\tif (best !== null)\n"
	"\t\tzoom(best);\n"
	"\telse if (zoomed !== null)\n"
	"\t\tzoom(root);\n"
	"\tif (sre !== null)\n"
	"\t\tsearchFor(sre);\n"
	"\telse if (searching !== null)\n"
	"\t\tsearch(null);\n"
	"}\n"
	"window.addEventListener('hashchange', fragment);\n"
	"fragment();\n"
	"})();\n"
	"]]></script>\n";

/* round(a * b / c) for c > 0, saturated at UINT64_MAX. */
static uint64_t flame_muldiv(uint64_t a, uint64_t b, uint64_t c)
{
#ifdef __SIZEOF_INT128__
	__extension__ typedef unsigned __int128 flame_u128;
	flame_u128 p = (flame_u128)a * b + c / 2;

	p /= c;
	return p > UINT64_MAX ? UINT64_MAX : (uint64_t)p;
#else
	long double p = (long double)a * b / c + 0.5L;

	return p >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)p;
#endif
}

static void flame_put(struct flame_ctx *c, const char *s, size_t n)
{
	if (c->err || !c->out || n == 0)
		return;
	if (fwrite(s, 1, n, c->out) != n)
		c->err = -EIO;
}

static void flame_puts(struct flame_ctx *c, const char *s)
{
	flame_put(c, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void flame_printf(struct flame_ctx *c, const char *fmt,
							       ...)
{
	va_list ap;
	int r;

	if (c->err || !c->out)
		return;
	va_start(ap, fmt);
	r = vfprintf(c->out, fmt, ap);
	va_end(ap);
	if (r < 0)
		c->err = -EIO;
}

/* Write @n bytes of @s (already valid UTF-8 without controls) with &<>"' as entities. */
static void flame_put_esc(struct flame_ctx *c, const char *s, size_t n)
{
	size_t i, run = 0;

	for (i = 0; i < n; i++) {
		const char *ent;

		switch (s[i]) {
		case '&':
			ent = "&amp;";
			break;
		case '<':
			ent = "&lt;";
			break;
		case '>':
			ent = "&gt;";
			break;
		case '"':
			ent = "&quot;";
			break;
		case '\'':
			ent = "&apos;";
			break;
		default:
			continue;
		}
		flame_put(c, s + run, i - run);
		flame_puts(c, ent);
		run = i + 1;
	}
	flame_put(c, s + run, n - run);
}

static int flame_buf_reserve(struct flame_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->cap - b->len > more)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap - b->len <= more)
		cap *= 2;
	p = realloc(b->p, cap);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = cap;
	return 0;
}

/*
 * Length of the character XML may show at @s, or 0 if the byte at @s must be shown as
 * "\xNN": a C0 or C1 control, DEL, U+FFFE, U+FFFF, or a byte that starts no valid,
 * shortest-form, non-surrogate UTF-8 sequence.  Stops at the first bad continuation
 * byte, so it never reads past the terminating NUL.
 */
static size_t flame_utf8_len(const unsigned char *s)
{
	uint32_t cp;
	size_t n, i;

	if (s[0] < 0x80)
		return s[0] >= 0x20 && s[0] != 0x7f ? 1 : 0;
	if (s[0] >= 0xc2 && s[0] <= 0xdf) {
		n = 2;
		cp = s[0] & 0x1f;
	} else if (s[0] >= 0xe0 && s[0] <= 0xef) {
		n = 3;
		cp = s[0] & 0x0f;
	} else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		n = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	if ((cp >= 0xd800 && cp <= 0xdfff) || cp < 0xa0 || cp == 0xfffe || cp == 0xffff)
		return 0;
	return n;
}

/*
 * Copy @s (NULL: "") into @b as displayable UTF-8 (see the notes at the top), NUL
 * terminated, and set *ret_chars to its length in characters.
 */
static int flame_sanitize(struct flame_buf *b, const char *s, size_t *ret_chars)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t chars = 0;
	int r;

	b->len = 0;
	for (; *p; chars++) {
		size_t n = flame_utf8_len(p);

		r = flame_buf_reserve(b, 8);
		if (r < 0)
			return r;
		if (b->len >= FLAME_NAME_MAX) {
			memcpy(b->p + b->len, "..", 2);
			b->len += 2;
			chars += 2;
			break;
		}
		if (n == 0) {
			b->p[b->len++] = '\\';
			b->p[b->len++] = 'x';
			b->p[b->len++] = hex[*p >> 4];
			b->p[b->len++] = hex[*p & 0xf];
			chars += 3;
			p++;
		} else {
			memcpy(b->p + b->len, p, n);
			b->len += n;
			p += n;
		}
	}
	r = flame_buf_reserve(b, 1);
	if (r < 0)
		return r;
	b->p[b->len] = '\0';
	*ret_chars = chars;
	return 0;
}

/* Sanitize @s into the name buffer and write it escaped. */
static int flame_put_text(struct flame_ctx *c, const char *s)
{
	size_t chars;
	int r;

	r = flame_sanitize(&c->name, s, &chars);
	if (r < 0)
		return r;
	flame_put_esc(c, c->name.p, c->name.len);
	return 0;
}

/* Byte length of the first @chars characters of the valid UTF-8 string @s. */
static size_t flame_prefix(const char *s, size_t chars)
{
	size_t i = 0;

	for (; s[i] && chars > 0; chars--) {
		i++;
		while ((s[i] & 0xc0) == 0x80)
			i++;
	}
	return i;
}

static void flame_colour(const struct tools_flame_node *n, unsigned rgb[3])
{
	const unsigned char *p = (const unsigned char *)(n->name ? n->name : "");
	uint32_t h = 2166136261u;
	unsigned v1, v2, v3;

	for (; *p; p++)
		h = (h ^ *p) * 16777619u;
	v1 = h & 0xff;
	v2 = (h >> 8) & 0xff;
	v3 = (h >> 16) & 0xff;
	if (n->diff) {
		/* red grew, blue shrank, pale unchanged; the depth of colour by the change */
		double a = n->level < 0 ? -n->level : n->level;
		unsigned fade = (unsigned)(235 - 200 * (a > 1 ? 1 : a));

		rgb[0] = n->level > 0 ? 255 : fade;
		rgb[1] = fade;
		rgb[2] = n->level < 0 ? 255 : fade;
		if (n->level == 0)
			rgb[0] = rgb[1] = rgb[2] = 228 + 20 * v1 / 255;
		return;
	}
	switch (n->kind) {
	case TOOLS_FLAME_USER:
		rgb[0] = 205 + 50 * v1 / 255;
		rgb[1] = 230 * v2 / 255;
		rgb[2] = 55 * v3 / 255;
		break;
	case TOOLS_FLAME_KERNEL:
		rgb[0] = 40 + 60 * v1 / 255;
		rgb[1] = 150 + 70 * v2 / 255;
		rgb[2] = 180 + 70 * v3 / 255;
		break;
	case TOOLS_FLAME_PROCESS:
		rgb[0] = 90 + 50 * v1 / 255;
		rgb[1] = 190 + 50 * v2 / 255;
		rgb[2] = 60 + 40 * v3 / 255;
		break;
	default:
		rgb[0] = rgb[1] = rgb[2] = 160 + 50 * v1 / 255;
		break;
	}
}

/* "12.34": @n per cent of the root, to two places. */
static void flame_pct(const struct flame_ctx *c, uint64_t n, char buf[32])
{
	uint64_t h = flame_muldiv(n, 10000, c->total);

	(void)snprintf(buf, 32, "%" PRIu64 ".%02u", h / 100, (unsigned)(h % 100));
}

/* Write one frame: @o and @w on the root's scale, @depth 0 for the root. */
static int flame_frame(struct flame_ctx *c, const struct tools_flame_node *n, uint64_t o,
		       uint64_t w, uint64_t depth)
{
	uint64_t x0, x1, wt, y, nch;
	size_t chars;
	unsigned rgb[3];
	char pct[32];
	int r;

	if (!c->out || c->err)
		return 0;
	x0 = flame_muldiv(o, FLAME_TENTHS, c->total);
	x1 = flame_muldiv(o + w, FLAME_TENTHS, c->total);
	wt = x1 - x0;
	y = c->top + (c->max_depth - depth) * FLAME_ROW;
	r = flame_sanitize(&c->name, n->name, &chars);
	if (r < 0)
		return r;
	flame_colour(n, rgb);
	flame_pct(c, n->samples, pct);

	flame_puts(c, "<g class=\"f\" data-f=\"");
	flame_put_esc(c, c->name.p, c->name.len);
	flame_printf(c,
		     "\" data-n=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-o=\"%" PRIu64
		     "\" data-d=\"%" PRIu64 "\"><title>",
		     n->samples, w, o, depth);
	flame_put_esc(c, c->name.p, c->name.len);
	if (n->image && n->image[0]) {
		size_t ichars;

		r = flame_sanitize(&c->image, n->image, &ichars);
		if (r < 0)
			return r;
		flame_puts(c, " (");
		flame_put_esc(c, c->image.p, c->image.len);
		flame_puts(c, ")");
	}
	if (n->diff)
		flame_printf(c, " \xe2\x80\x94 %+.2f points", n->delta);
	flame_printf(c,
		     " \xe2\x80\x94 %" PRIu64 " samples, %s%%</title><rect x=\"%" PRIu64
		     ".%u\" y=\"%" PRIu64 "\" width=\"%" PRIu64 ".%u\" height=\"%d\" "
		     "fill=\"rgb(%u,%u,%u)\"/>",
		     n->samples, pct, (FLAME_PAD * 10 + x0) / 10, (unsigned)(x0 % 10), y, wt / 10,
		     (unsigned)(wt % 10), FLAME_RECT_H, rgb[0], rgb[1], rgb[2]);

	/* The label rule; the script's place() repeats it after a zoom. */
	nch = wt > FLAME_LABEL_T ? (wt - FLAME_LABEL_T) / FLAME_CHAR_T : 0;
	if (chars <= nch || nch >= 3) {
		size_t len = chars <= nch ? c->name.len : flame_prefix(c->name.p, nch - 2);
		uint64_t tx = FLAME_PAD * 10 + x0 + 30;

		if (len > 0) {
			flame_printf(c, "<text x=\"%" PRIu64 ".%u\" y=\"%" PRIu64 "\">", tx / 10,
				     (unsigned)(tx % 10), y + 11);
			flame_put_esc(c, c->name.p, len);
			flame_puts(c, chars <= nch ? "</text>" : "..</text>");
		}
	}
	flame_puts(c, "</g>\n");
	return 0;
}

static int flame_kid_cmp(const void *pa, const void *pb)
{
	const struct tools_flame_node *a = *(const struct tools_flame_node *const *)pa;
	const struct tools_flame_node *b = *(const struct tools_flame_node *const *)pb;
	int r;

	r = strcmp(a->name ? a->name : "", b->name ? b->name : "");
	if (r)
		return r;
	if (!a->image != !b->image)
		return a->image ? 1 : -1;
	if (a->image) {
		r = strcmp(a->image, b->image);
		if (r)
			return r;
	}
	if (a->samples != b->samples)
		return a->samples > b->samples ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return 0;
}

/* Push @n, drawn at @o with width @w, with a sorted copy of its non-NULL children. */
static int flame_push(struct flame_ctx *c, const struct tools_flame_node *n, uint64_t o, uint64_t w)
{
	struct flame_level *l;
	size_t i;

	if (c->nlevels == c->cap_levels) {
		size_t cap = c->cap_levels ? c->cap_levels * 2 : 64;
		struct flame_level *p = reallocarray(c->levels, cap, sizeof(*p));

		if (!p)
			return -ENOMEM;
		c->levels = p;
		c->cap_levels = cap;
	}
	l = &c->levels[c->nlevels];
	*l = (struct flame_level){ .node = n, .o = o, .w = w };
	if (n->nchildren > 0 && n->children) {
		/* Checked here, not by the allocator: sanitizers abort on a size that wraps. */
		if (n->nchildren > SIZE_MAX / sizeof(*l->kids))
			return -ENOMEM;
		l->kids = malloc(n->nchildren * sizeof(*l->kids));
		if (!l->kids)
			return -ENOMEM;
		for (i = 0; i < n->nchildren; i++) {
			if (n->children[i])
				l->kids[l->nkids++] = n->children[i];
		}
		qsort(l->kids, l->nkids, sizeof(*l->kids), flame_kid_cmp);
	}
	c->nlevels++;
	return 0;
}

/* Add to c->omitted the frames of @n's subtree (none of them is drawn). */
static int flame_count(struct flame_ctx *c, const struct tools_flame_node *n)
{
	size_t ntodo = 0, i;

	if (c->cap_todo == 0) {
		c->todo = reallocarray(NULL, 64, sizeof(*c->todo));
		if (!c->todo)
			return -ENOMEM;
		c->cap_todo = 64;
	}
	c->todo[ntodo++] = n;
	while (ntodo > 0) {
		n = c->todo[--ntodo];
		c->omitted++;
		if (!n->children)
			continue;
		for (i = 0; i < n->nchildren; i++) {
			if (!n->children[i])
				continue;
			if (ntodo == c->cap_todo) {
				const struct tools_flame_node **p;

				p = reallocarray(c->todo, c->cap_todo * 2, sizeof(*p));
				if (!p)
					return -ENOMEM;
				c->todo = p;
				c->cap_todo *= 2;
			}
			c->todo[ntodo++] = n->children[i];
		}
	}
	return 0;
}

/* Visit every frame of @root's tree in pre-order, writing those wide enough to draw. */
static int flame_walk(struct flame_ctx *c, const struct tools_flame_node *root)
{
	int r;

	c->omitted = c->omitted_samples = c->clamped = 0;
	r = flame_frame(c, root, 0, c->total, 0);
	if (r < 0)
		goto out;
	r = flame_push(c, root, 0, c->total);
	while (r == 0 && c->nlevels > 0 && !c->err) {
		struct flame_level *l = &c->levels[c->nlevels - 1];
		const struct tools_flame_node *k;
		uint64_t w, o, depth;

		if (l->next == l->nkids) {
			free(l->kids);
			c->nlevels--;
			continue;
		}
		k = l->kids[l->next++];
		w = k->samples < l->w - l->used ? k->samples : l->w - l->used;
		if (w < k->samples)
			c->clamped++;
		o = l->o + l->used;
		l->used += w;
		if (w < c->min_w) {
			c->omitted_samples += w;
			r = flame_count(c, k);
			continue;
		}
		depth = c->nlevels;
		if (!c->out && depth > c->max_depth)
			c->max_depth = depth;
		r = flame_frame(c, k, o, w, depth);
		if (r == 0)
			r = flame_push(c, k, o, w);
	}
out:
	while (c->nlevels > 0)
		free(c->levels[--c->nlevels].kids);
	return r;
}

static void flame_header(struct flame_ctx *c, uint64_t height)
{
	flame_puts(c, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n");
	flame_printf(c,
		     "<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		     "height=\"%" PRIu64 "\" viewBox=\"0 0 %d %" PRIu64 "\">\n",
		     FLAME_WIDTH, height, FLAME_WIDTH, height);
	flame_puts(c, flame_style);
	flame_printf(
		c, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%" PRIu64 "\" fill=\"#f8f8f4\"/>\n",
		FLAME_WIDTH, height);
}

/* Write the title and the subtitle; *ret_y is the y of the last line written. */
static int flame_titles(struct flame_ctx *c, const char *title, const char *subtitle,
			uint64_t *ret_y)
{
	uint64_t y = 24;
	int r;

	flame_printf(c, "<text id=\"title\" x=\"%d\" y=\"%" PRIu64 "\">", FLAME_WIDTH / 2, y);
	r = flame_put_text(c, title ? title : "Flame Graph");
	if (r < 0)
		return r;
	flame_puts(c, "</text>\n");
	if (subtitle) {
		y += 20;
		flame_printf(c, "<text id=\"subtitle\" class=\"sub\" x=\"%d\" y=\"%" PRIu64 "\">",
			     FLAME_WIDTH / 2, y);
		r = flame_put_text(c, subtitle);
		if (r < 0)
			return r;
		flame_puts(c, "</text>\n");
	}
	*ret_y = y;
	return 0;
}

/* The document for a root without samples: nothing to draw, and it says so. */
static int flame_write_empty(struct flame_ctx *c, const char *title, const char *subtitle)
{
	uint64_t y;
	int r;

	flame_header(c, 120);
	r = flame_titles(c, title, subtitle, &y);
	if (r < 0)
		return r;
	flame_printf(c,
		     "<text id=\"notice\" class=\"sub\" x=\"%d\" y=\"%" PRIu64 "\">no samples"
		     "</text>\n</svg>\n",
		     FLAME_WIDTH / 2, y + 40);
	return 0;
}

static void flame_ctx_exit(struct flame_ctx *c)
{
	while (c->nlevels > 0)
		free(c->levels[--c->nlevels].kids);
	free(c->levels);
	free(c->todo);
	free(c->name.p);
	free(c->image.p);
}

int tools_flame_write(FILE *out, const struct tools_flame_node *root, const char *title,
		      const char *subtitle)
{
	struct flame_ctx c = { 0 };
	uint64_t y, height, omitted, omitted_samples, clamped;
	char pct[32];
	int r;

	assert(out);
	if (!root || root->samples == 0) {
		c.out = out;
		r = flame_write_empty(&c, title, subtitle);
		goto out;
	}
	c.total = root->samples;
	/* w * 1180 px / total < 0.1 px, for integers: w < ceil(total / 11800). */
	c.min_w = c.total / FLAME_TENTHS + (c.total % FLAME_TENTHS != 0);

	r = flame_walk(&c, root);
	if (r < 0)
		goto out;
	omitted = c.omitted;
	omitted_samples = c.omitted_samples;
	clamped = c.clamped;

	c.out = out;
	y = 24 + (subtitle ? 20 : 0) + (omitted || clamped ? 18 : 0);
	c.top = y + 14;
	height = c.top + (c.max_depth + 1) * FLAME_ROW + FLAME_BOTTOM;
	flame_header(&c, height);
	r = flame_titles(&c, title, subtitle, &y);
	if (r < 0)
		goto out;
	if (omitted || clamped) {
		y += 18;
		flame_printf(&c, "<text id=\"notice\" class=\"sub\" x=\"%d\" y=\"%" PRIu64 "\">",
			     FLAME_WIDTH / 2, y);
		if (omitted) {
			flame_pct(&c, omitted_samples, pct);
			flame_printf(&c,
				     "%" PRIu64 " frames narrower than 0.1 px not drawn (%" PRIu64
				     " samples, %s%%)",
				     omitted, omitted_samples, pct);
		}
		if (clamped)
			flame_printf(&c, "%s%" PRIu64 " frames clamped to their parent's width",
				     omitted ? "; " : "", clamped);
		flame_puts(&c, "</text>\n");
	}
	flame_printf(&c,
		     "<text id=\"unzoom\" class=\"btn h\" x=\"%d\" y=\"24\">Reset Zoom</text>\n"
		     "<text id=\"search\" class=\"btn\" x=\"%d\" y=\"24\" "
		     "style=\"text-anchor: end\">Search</text>\n"
		     "<text id=\"unsearch\" class=\"btn h\" x=\"%d\" y=\"24\" "
		     "style=\"text-anchor: end\">Reset Search</text>\n"
		     "<g id=\"frames\">\n",
		     FLAME_PAD, FLAME_WIDTH - FLAME_PAD, FLAME_WIDTH - FLAME_PAD - 60);

	r = flame_walk(&c, root);
	if (r < 0)
		goto out;
	flame_printf(&c,
		     "</g>\n<text id=\"details\" x=\"%d\" y=\"%" PRIu64 "\"> </text>\n"
		     "<text id=\"matched\" x=\"%d\" y=\"%" PRIu64 "\" "
		     "style=\"text-anchor: end\"></text>\n",
		     FLAME_PAD, height - 12, FLAME_WIDTH - FLAME_PAD, height - 12);
	flame_puts(&c, flame_script);
	flame_puts(&c, "</svg>\n");
out:
	if (fflush(out) != 0 || ferror(out))
		c.err = -EIO;
	flame_ctx_exit(&c);
	if (r < 0)
		return r;
	return c.err;
}
