/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * maplog-int.h: what the files of module maplog share (private).
 * PUBLIC INTERFACES (module-internal)
 *   maplog_open_path_nofollow()
 */
#ifndef HWPMCD_MAPLOG_INT_H
#define HWPMCD_MAPLOG_INT_H

#include <stdbool.h>

/*
 * maplog_open_path_nofollow (maplog-model.c): an O_PATH fd of the absolute @path:
 * relative to @dirfd as its root if @in_root, else from our root (@dirfd AT_FDCWD);
 * no symbolic link is followed anywhere in it, nor any /proc magic link (openat2,
 * or by hand where the kernel or valgrind lacks it).  An O_PATH open reads nothing
 * and opens no device or FIFO.  Returns the fd or a negative errno.
 */
int maplog_open_path_nofollow(int dirfd, const char *path, bool in_root);

#endif /* HWPMCD_MAPLOG_INT_H */
