/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * common-open.h: opening the files a report reads, by itself or through a broker
 * (module common).
 *
 * PUBLIC INTERFACES
 *   util_open_read()          open an input for reading: the one way the report does
 *   util_open_fn, util_open_set_hook(), util_open_use_broker()   route every
 *                             util_open_read() elsewhere (to a broker)
 *   util_broker_ask(), util_broker_recv(), util_broker_reply()   the broker's protocol
 *
 * IMPLEMENTATION NOTES
 *   hwpmcd's push runs `hwpmc report --confine --broker-fd N` as user nobody under a
 *   seccomp filter that refuses open(2) and openat(2) altogether: the report asks
 *   the daemon for each file instead (docs/security.md, "Under systemd"), and the
 *   daemon opens only what the log names.  So every input the report opens (logs,
 *   their side files, ELF images, debug files, JIT maps, /proc files) goes through
 *   util_open_read(), and a hook set before the report starts sends the path to
 *   the broker.
 *
 *   The protocol, over an AF_UNIX SOCK_SEQPACKET socket pair (one message per
 *   request and per answer, so neither side ever parses a stream):
 *     request  "HWB1" then the path's bytes (no NUL), 1 to UTIL_BROKER_PATH_MAX - 1
 *              of them;
 *     answer   a 32-bit native-endian errno: 0 with exactly one descriptor in an
 *              SCM_RIGHTS message (open for reading), or a negative errno alone.
 *   The client waits for each answer before the next request: one request at a
 *   time, so an answer is always the last request's.
 */
#ifndef HWPMCD_COMMON_OPEN_H
#define HWPMCD_COMMON_OPEN_H

#include <stddef.h>
#include <stdint.h>

/* util_open_read() flags: only a regular file (-ENOEXEC otherwise, never opened). */
#define UTIL_OPEN_REGULAR 0x1u

/* Longest path a broker request carries, its NUL included. */
#define UTIL_BROKER_PATH_MAX 4096

/*
 * util_open_fn: what util_open_read() calls instead of opening @path itself: an
 * fd open for reading (the caller's), or a negative errno.  @flags are
 * util_open_read()'s; @ctx is the hook's.
 */
typedef int util_open_fn(const char *path, unsigned flags, void *ctx);

/*
 * util_open_set_hook: route every later util_open_read() to @fn (NULL: open files
 * again).  Set once, before any thread that opens files starts (the report has
 * one thread).
 */
void util_open_set_hook(util_open_fn *fn, void *ctx);

/*
 * util_open_use_broker: util_open_set_hook() with the hook that asks the broker at
 * the other end of @sock (util_broker_ask()); @sock stays the caller's.
 */
void util_open_use_broker(int sock);

/*
 * util_open_read: open @path for reading (O_RDONLY, O_CLOEXEC, O_NOCTTY).  With
 * UTIL_OPEN_REGULAR, anything but a regular file is refused with -ENOEXEC without
 * being opened for reading (an open(2) of a device can act, a FIFO blocks): the
 * path is opened O_PATH, looked at, and only a regular file is opened again through
 * /proc/self/fd/N (the same inode even if the path is swapped meanwhile); without
 * /proc, an O_NONBLOCK open whose fstat() must show the same inode.  Without the
 * flag the path is opened as it is (a log may be a FIFO, or a directory the caller
 * looks at).  With a hook set (util_open_set_hook()), the hook opens it instead,
 * and the result is checked the same way.
 * Returns the fd (the caller's) with *@ret_size (if not NULL) set to the size of a
 * regular file (0 for anything else), or a negative errno.  Thread-safe; the
 * broker's hook sends one request at a time.
 */
int util_open_read(const char *path, unsigned flags, uint64_t *ret_size);

/*
 * util_broker_ask: the client side: send @path to the broker at the other end of
 * @sock and wait for its answer.  Returns the fd it sent (O_CLOEXEC, the caller's),
 * the broker's negative errno, -ENAMETOOLONG, -EPIPE if the broker is gone, or
 * -EPROTO for an answer that is not one.  Not thread-safe alone (util_open_read()
 * serialises its calls).
 */
int util_broker_ask(int sock, const char *path);

/*
 * util_broker_recv: the broker side: wait for the next request on @sock; its path,
 * NUL-terminated, into @path (@size bytes, at least UTIL_BROKER_PATH_MAX).
 * Descriptors a client sends along are closed unread.  Returns 1 with a request, 0
 * when the client has gone (end of file), -EPROTO for a message that is no
 * request (to be answered all the same), or another negative errno (the socket
 * failed).  One thread per socket.
 */
int util_broker_recv(int sock, char *path, size_t size);

/*
 * util_broker_reply: the broker side: answer the last request on @sock with @fd if
 * it is >= 0 (sent, still the caller's to close), else with the negative errno
 * @fd.  Returns 0 or a negative errno (-EPIPE: the client has gone).
 */
int util_broker_reply(int sock, int fd);

#endif /* HWPMCD_COMMON_OPEN_H */
