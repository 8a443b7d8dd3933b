/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * daemon-reply.c: what the daemon sends its clients: one JSON object a line,
 * replies, errors and events alike.
 *
 * PUBLIC INTERFACES (daemon-internal, daemon-int.h)
 *   daemon_send_line(), daemon_client_send()     a line to an fd, to a client
 *   daemon_reply_ok(), daemon_reply_error()      {"id", "ok"}, and its error form
 *   daemon_error_json(), daemon_errno_name()     the error object, the errno's name
 *
 * IMPLEMENTATION NOTES
 *   Main's alone.  A line goes out with one send(MSG_DONTWAIT): a client that
 *   does not read its replies may lose them, but never blocks the main loop.  An
 *   error carries its errno by name (docs/protocol.md), EIO for one the table
 *   does not know.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "daemon-int.h"

/* One message line to @fd (consumes @msg). */
void daemon_send_line(int fd, json_t *msg)
{
	char *s = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	size_t n;

	json_decref(msg);
	if (!s)
		return;
	n = strlen(s);
	s[n] = '\n';
	/* A client that does not read its replies may lose them, never block us. */
	(void)send(fd, s, n + 1, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(s);
}

void daemon_client_send(struct daemon_client *c, json_t *msg)
{
	daemon_send_line(c->fd, msg);
}

json_t *daemon_reply_ok(json_int_t id)
{
	json_t *r = json_object();

	json_object_set_new(r, "id", json_integer(id));
	json_object_set_new(r, "ok", json_true());
	return r;
}

const char *daemon_errno_name(int err)
{
	switch (-err) {
	case EINVAL: return "EINVAL";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ESRCH: return "ESRCH";
	case E2BIG: return "E2BIG";
	case EMFILE: return "EMFILE";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case ERANGE: return "ERANGE";
	case EPROTO: return "EPROTO";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENOSPC: return "ENOSPC";
	case EPIPE: return "EPIPE";
	case EBADF: return "EBADF";
	case EMSGSIZE: return "EMSGSIZE";
	case ENAMETOOLONG: return "ENAMETOOLONG";
	case ETIMEDOUT: return "ETIMEDOUT";
	case ENOBUFS: return "ENOBUFS";
	case EFBIG: return "EFBIG";
	case ENOTSOCK: return "ENOTSOCK";
	case ESTALE: return "ESTALE";
	case ECANCELED: return "ECANCELED";
	case EALREADY: return "EALREADY";
	case EAGAIN: return "EAGAIN";
	default: return "EIO";
	}
}

/* {"id", "ok": false, "error": {"errno", "message"}}; @id < 0: "id": null. */
json_t *daemon_error_json(json_int_t id, int err, const char *msg)
{
	json_t *r = json_object(), *e = json_object();

	json_object_set_new(r, "id", id >= 0 ? json_integer(id) : json_null());
	json_object_set_new(r, "ok", json_false());
	json_object_set_new(e, "errno", json_string(daemon_errno_name(err)));
	json_object_set_new(e, "message", json_string(msg));
	json_object_set_new(r, "error", e);
	return r;
}

void daemon_reply_error(struct daemon_client *c, json_int_t id, int err, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	daemon_client_send(c, daemon_error_json(id, err, msg));
}
