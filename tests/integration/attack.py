#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Load a hostile client puts on hwpmcd, and root's view of it, for the security tests.

usage: attack.py probe SOCKET SECONDS
       attack.py flood SOCKET SECONDS --conns N --req JSON [--fd PATH:MODE] [--depth K]

probe: root's `status`, ten times a second on one connection and once a second on
a new one, for SECONDS; prints one JSON line {"asked", "answered", "max_s",
"over_1s"}: how long the slowest answer took, and how many took more than 1 s
(a request still unanswered at the end counts as one that took until then).

flood: N connections, each keeping K requests (default 16) in flight for
SECONDS: REQUEST_JSON with "id" set per request; with --fd each request carries
PATH (opened once, MODE w: O_WRONLY|O_CREAT, r: O_RDONLY) with SCM_RIGHTS.  A
start that succeeds is stopped at once.  Prints one JSON line {"sent",
"replies", "ok", "errors": {ERRNO: count}, "messages": {ERRNO: one message}}.
"""
import array
import json
import os
import selectors
import socket
import sys
import time


def lines_of(state, data):
    state["buf"] += data
    out = []
    while b"\n" in state["buf"]:
        line, state["buf"] = state["buf"].split(b"\n", 1)
        out.append(json.loads(line))
    return out


def probe(path, secs):
    asked = answered = over = 0
    worst = 0.0
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    end = time.monotonic() + secs
    next_new = time.monotonic()
    i = 0
    while time.monotonic() < end:
        conn = s
        if time.monotonic() >= next_new:
            conn = socket.socket(socket.AF_UNIX)
            conn.settimeout(max(1.0, end - time.monotonic() + 5))
            conn.connect(path)
            next_new = time.monotonic() + 1
        i += 1
        t0 = time.monotonic()
        conn.sendall(b'{"id": %d, "cmd": "status"}\n' % i)
        asked += 1
        conn.settimeout(max(1.0, end - t0 + 5))
        buf = b""
        try:
            while True:
                d = conn.recv(1 << 20)
                if not d:
                    break
                buf += d
                # The reply to this request (a status reply holds no event lines).
                if b"\n" in buf:
                    r = json.loads(buf.split(b"\n", 1)[0])
                    if r.get("id") == i:
                        answered += 1
                        break
                    buf = buf.split(b"\n", 1)[1]
        except socket.timeout:
            pass
        dt = time.monotonic() - t0
        worst = max(worst, dt)
        over += dt > 1.0
        if conn is not s:
            conn.close()
        time.sleep(0.1)
    print(json.dumps({"asked": asked, "answered": answered, "max_s": round(worst, 3),
                      "over_1s": over}), flush=True)


def flood(path, secs, nconns, req, fdspec, depth):
    sel = selectors.DefaultSelector()
    conns = []
    for _ in range(nconns):
        try:
            c = socket.socket(socket.AF_UNIX)
            c.connect(path)
            c.setblocking(False)
        except OSError:
            continue
        st = {"sock": c, "buf": b"", "inflight": 0}
        conns.append(st)
        sel.register(c, selectors.EVENT_READ, st)
    sent = replies = ok = 0
    errors, messages = {}, {}
    nid = 0
    end = time.monotonic() + secs

    # One fd, opened once and sent with every request (each arrives as a new fd of
    # the daemon's); never closed here: on a stuck FUSE mount the close would wait.
    the_fd = None
    if fdspec:
        p, mode = fdspec.rsplit(":", 1)
        the_fd = os.open(p, os.O_WRONLY | os.O_CREAT if mode == "w" else os.O_RDONLY, 0o644)

    def send(st, line, with_fd):
        fds = [the_fd] if with_fd and the_fd is not None else []
        try:
            anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))] if fds else []
            st["sock"].sendmsg([line], anc)
            return True
        except (BlockingIOError, OSError):
            return False

    while time.monotonic() < end and conns:
        for st in conns:
            while st["inflight"] < depth and time.monotonic() < end:
                nid += 1
                r = dict(req)
                r["id"] = nid
                if not send(st, (json.dumps(r) + "\n").encode(), True):
                    break
                st["inflight"] += 1
                sent += 1
        for key, _ in sel.select(timeout=0.2):
            st = key.data
            try:
                d = st["sock"].recv(1 << 20)
            except BlockingIOError:
                continue
            except OSError:
                d = b""
            if not d:
                sel.unregister(st["sock"])
                conns.remove(st)
                continue
            for m in lines_of(st, d):
                if "event" in m:
                    continue
                if m.get("id", -1) is None or m.get("id", -1) < 0:
                    continue
                if m.get("stopping"):
                    continue
                replies += 1
                st["inflight"] -= 1
                if m.get("ok"):
                    ok += 1
                    if "session" in m and isinstance(m["session"], int):
                        send(st, b'{"id": -5, "cmd": "stop", "args": {"session": %d}}\n'
                             % m["session"], False)
                else:
                    e = m["error"]["errno"]
                    errors[e] = errors.get(e, 0) + 1
                    messages.setdefault(e, m["error"]["message"])
    print(json.dumps({"sent": sent, "replies": replies, "ok": ok, "errors": errors,
                      "messages": messages}), flush=True)


def main():
    a = sys.argv[1:]
    if len(a) >= 3 and a[0] == "probe":
        probe(a[1], float(a[2]))
        return
    if len(a) >= 3 and a[0] == "flood":
        path, secs = a[1], float(a[2])
        opts = {"--conns": "4", "--req": None, "--fd": None, "--depth": "16"}
        rest = a[3:]
        while rest:
            k = rest.pop(0)
            if k not in opts or not rest:
                sys.exit(__doc__)
            opts[k] = rest.pop(0)
        if not opts["--req"]:
            sys.exit(__doc__)
        flood(path, secs, int(opts["--conns"]), json.loads(opts["--req"]), opts["--fd"],
              int(opts["--depth"]))
        return
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
