/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * tools-flame.h: the interactive SVG flame graph of `hwpmc report --flame` (module tools,
 * private to src/tools).
 * PUBLIC INTERFACES
 *   struct tools_flame_node   one frame of the root-first call tree
 *   tools_flame_write()       write a self-contained SVG of a tree
 */
#ifndef HWPMCD_TOOLS_FLAME_H
#define HWPMCD_TOOLS_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* How a frame is coloured. */
enum tools_flame_kind {
	TOOLS_FLAME_USER = 0, /* a user-space function */
	TOOLS_FLAME_KERNEL,   /* a kernel or module function */
	TOOLS_FLAME_PROCESS,  /* the process (comm) level just under the root */
	TOOLS_FLAME_UNKNOWN,  /* an unresolved address ("[unknown]", "image+0x1234") */
	TOOLS_FLAME_KIND_MAX
};

/*
 * One frame: its callees are its children.  Owned by the caller; tools_flame_write()
 * only reads the tree.  The root is the "all" frame.
 */
struct tools_flame_node {
	const char *name;  /* as printed (demangled), any bytes: escaped by the writer */
	const char *image; /* the image's path or name, or NULL */
	uint64_t samples;  /* inclusive: this frame and everything it called */
	enum tools_flame_kind kind;
	/* a differential graph (hwpmc diff --flame): its share's change, in points, and
	   that change over the largest one (-1..1: blue shrank .. red grew) */
	bool diff;
	double delta, level;
	size_t nchildren;
	struct tools_flame_node **children; /* any order: the writer sorts by name */
};

/*
 * tools_flame_write: write to @out an SVG document of @root's tree, @title above it
 * (escaped; NULL: "Flame Graph") and @subtitle below the title (NULL: none).  The
 * document needs nothing outside itself (no script or font from the network).
 * Returns 0, -EIO if writing @out failed, or -ENOMEM.  Single-threaded.
 */
int tools_flame_write(FILE *out, const struct tools_flame_node *root, const char *title,
		      const char *subtitle);

#endif /* HWPMCD_TOOLS_FLAME_H */
