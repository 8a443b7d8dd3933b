#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A raw hwpmcd protocol client for tests: what a hostile or careless client can send.

usage: ctl_req.py SOCKET REQUEST_JSON [--fd PATH:MODE]... [--wait S]
       ctl_req.py SOCKET --conns N [--hold S]
       ctl_req.py SOCKET --idle S

REQUEST_JSON is sent as one line; each --fd opens PATH (MODE w: O_WRONLY|O_CREAT|O_TRUNC,
r: O_RDONLY, path: O_PATH; pty: a new pty's slave, PATH ignored, whose master is
never read) in this process, with its credentials, and passes it with
SCM_RIGHTS.  The reply line is printed; with --wait the connection is held S seconds
(a session lives as long as its client) and every event line that arrives is printed.
--conns opens N connections at once and prints, per connection, "ok" or the refusal
that came (one line each).  --idle connects, sends nothing, and prints what the
daemon sends within S seconds and whether it closed the connection.
"""
import json
import os
import socket
import sys
import time


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def read_line(s, timeout):
    s.settimeout(timeout)
    buf = b""
    try:
        while b"\n" not in buf:
            d = s.recv(65536)
            if not d:
                return buf.decode() if buf else None
            buf += d
    except socket.timeout:
        return buf.decode() if buf else ""
    return buf.split(b"\n", 1)[0].decode()


def main():
    args = sys.argv[1:]
    path = args.pop(0)
    if args and args[0] == "--conns":
        n = int(args[1])
        hold = float(args[3]) if len(args) > 3 and args[2] == "--hold" else 1.0
        conns = [connect(path) for _ in range(n)]
        for i, s in enumerate(conns):
            try:
                s.sendall(b'{"id": %d, "cmd": "hello"}\n' % i)
            except OSError:
                pass  # refused at accept: its error line is already there to read
        for s in conns:
            line = read_line(s, 3)
            r = json.loads(line) if line else {}
            print("ok" if r.get("ok") else "refused " + json.dumps(r.get("error")))
        time.sleep(hold)
        return 0
    if args and args[0] == "--idle":
        s = connect(path)
        t0 = time.monotonic()
        got = read_line(s, float(args[1]))
        closed = False
        if got:
            s.settimeout(2)
            try:
                closed = s.recv(1) == b""
            except socket.timeout:
                pass
        print(json.dumps({"after": round(time.monotonic() - t0, 1), "got": got,
                          "closed": closed}))
        return 0
    req = args.pop(0)
    fds, wait, held = [], 0.0, []
    while args:
        a = args.pop(0)
        if a == "--fd":
            p, mode = args.pop(0).rsplit(":", 1)
            if mode == "pty":  # a pty's slave; its master is kept open and never read
                master, slave = os.openpty()
                held.append(master)
                fds.append(slave)
                continue
            flags = {"w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "r": os.O_RDONLY,
                     "path": os.O_PATH}[mode]
            fds.append(os.open(p, flags, 0o644))
        elif a == "--wait":
            wait = float(args.pop(0))
        else:
            print("ctl_req.py: unknown option " + a, file=sys.stderr)
            return 2
    s = connect(path)
    data = (req + "\n").encode()
    if fds:
        s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                            b"".join(fd.to_bytes(4, sys.byteorder) for fd in fds))])
    else:
        s.sendall(data)
    for fd in fds:
        os.close(fd)
    print(read_line(s, 10), flush=True)
    end = time.monotonic() + wait
    while time.monotonic() < end:
        line = read_line(s, max(0.05, end - time.monotonic()))
        if line is None:
            break
        if line:
            print(line, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
