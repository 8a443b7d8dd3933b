/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ctl-protocol.h: the control protocol's names and limits (docs/protocol.md).
 *
 * PUBLIC INTERFACES
 *   CTL_* constants shared by hwpmcd and hwpmc.
 *
 * IMPLEMENTATION NOTES
 *   Newline-delimited JSON over a Unix stream socket.  A request is
 *   {"id": N, "cmd": NAME, "args": {...}}; a reply {"id": N, "ok": true, ...} or
 *   {"id": N, "ok": false, "error": {"errno": "EINVAL", "message": "..."}}.  The
 *   daemon may also send {"event": NAME, ...} lines (no id), e.g. when a session
 *   ends by itself.  Output fds travel with the request that needs them
 *   (SCM_RIGHTS on the same sendmsg).
 */
#ifndef HWPMCD_CTL_PROTOCOL_H
#define HWPMCD_CTL_PROTOCOL_H

#define CTL_PROTOCOL_VERSION 1
#define CTL_MESSAGE_MAX 65536
#define CTL_SOCKET_DEFAULT "/run/hwpmcd/control"
#define CTL_SOCKET_ENV "HWPMCD_SOCKET"

#define CTL_CMD_HELLO "hello"
#define CTL_CMD_EVENTS "events"
#define CTL_CMD_START "start"
#define CTL_CMD_STOP "stop"
#define CTL_CMD_STATUS "status"
#define CTL_CMD_SESSIONS "sessions"
#define CTL_CMD_PROFILES "profiles"
#define CTL_CMD_FILTER "filter"

#define CTL_EVENT_SESSION_END "session-end"

#endif /* HWPMCD_CTL_PROTOCOL_H */
