#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A Pyroscope-compatible ingest endpoint for test-push.sh, on 127.0.0.1.

usage: push_receiver.py OUT_DIR [--fail-first N]

Listens on an ephemeral port and writes it to OUT_DIR/port.  Every request is
decoded as Pyroscope decodes it and recorded as one JSON line in
OUT_DIR/requests.jsonl: method, path, query, content type, status sent back,
and for each body what it holds.  A POST /ingest with format=pprof must be a
multipart/form-data request whose part "profile" is a gzip-compressed pprof
Profile: it is gunzipped and walked field by field (wire types checked, the
samples counted) and saved as OUT_DIR/N.pb.gz for `go tool pprof`.  format=folded
must be text lines "STACK COUNT": they are parsed, counted and saved as
OUT_DIR/N.folded.  Anything malformed is answered 400 with the reason (and
recorded), as a server would.  The first N well-formed requests are answered 503
(--fail-first), and any request whose application name starts with "reject" is
answered 400, so that the daemon's retries and its refusals can be tested.
"""
import gzip
import json
import os
import sys
import threading
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, HTTPServer
from urllib.parse import parse_qs, urlsplit

OUT = sys.argv[1]
FAIL_FIRST = int(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[2] == "--fail-first" else 0
lock = threading.Lock()
state = {"n": 0, "failed": 0}


def varint(b, i):
    v = s = 0
    while True:
        if i >= len(b):
            raise ValueError("truncated varint")
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i
        if s > 63:
            raise ValueError("varint too long")


def walk_pprof(b):
    """Counts of each top-level field of a Profile message; ValueError if malformed."""
    counts = {}
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            _, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                raise ValueError("field %d runs past the end" % field)
            i += n
        elif wt == 1:
            i += 8
        elif wt == 5:
            i += 4
        else:
            raise ValueError("wire type %d" % wt)
        counts[field] = counts.get(field, 0) + 1
    if i != len(b):
        raise ValueError("trailing bytes")
    return counts


class Handler(BaseHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def reply(self, code, text, rec):
        rec["status"] = code
        rec["said"] = text
        # Recorded before the client hears the answer: a file the daemon counts as
        # sent is always in requests.jsonl already.
        with open(os.path.join(OUT, "requests.jsonl"), "a") as f:
            f.write(json.dumps(rec) + "\n")
        body = text.encode() + b"\n"
        self.send_response(code)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        self.reply(404, "only POST /ingest", {"method": "GET", "path": self.path})

    def do_POST(self):
        u = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query, keep_blank_values=True).items()}
        ctype = self.headers.get("Content-Type", "")
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            state["n"] += 1
            n = state["n"]
        rec = {"n": n, "method": "POST", "path": u.path, "query": q, "content_type": ctype,
               "bytes": len(body), "agent": self.headers.get("User-Agent", "")}
        if u.path != "/ingest":
            return self.reply(404, "no such endpoint " + u.path, rec)
        for k in ("name", "from", "until"):
            if k not in q:
                return self.reply(400, "missing " + k, rec)
        try:
            if int(q["from"]) > int(q["until"]):
                return self.reply(400, "from is after until", rec)
        except ValueError:
            return self.reply(400, "from/until are not Unix seconds", rec)
        fmt = q.get("format", "folded")
        try:
            if fmt == "pprof":
                if not ctype.startswith("multipart/form-data"):
                    raise ValueError("pprof wants multipart/form-data, got " + ctype)
                msg = BytesParser(policy=HTTP).parsebytes(
                    b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
                parts = {p.get_param("name", header="content-disposition"): p
                         for p in msg.iter_parts()}
                if "profile" not in parts:
                    raise ValueError("no 'profile' part")
                data = parts["profile"].get_payload(decode=True)
                counts = walk_pprof(gzip.decompress(data))
                rec["samples"] = counts.get(2, 0)
                rec["sample_types"] = counts.get(1, 0)
                rec["strings"] = counts.get(6, 0)
                saved = os.path.join(OUT, "%d.pb.gz" % n)
                with open(saved, "wb") as f:
                    f.write(data)
            elif fmt == "folded":
                total = 0
                lines = body.decode().splitlines()
                for line in lines:
                    stack, _, count = line.rpartition(" ")
                    if not stack or not count.isdigit():
                        raise ValueError("not 'STACK COUNT': %r" % line[:80])
                    total += int(count)
                rec["stacks"] = len(lines)
                rec["samples"] = total
                saved = os.path.join(OUT, "%d.folded" % n)
                with open(saved, "wb") as f:
                    f.write(body)
            else:
                raise ValueError("unknown format " + fmt)
        except (ValueError, OSError, EOFError, UnicodeDecodeError) as e:
            return self.reply(400, "cannot decode the body: %s" % e, rec)
        rec["saved"] = saved
        if q["name"].startswith("reject"):
            return self.reply(400, "application %s is not allowed here" % q["name"], rec)
        with lock:
            fail = state["failed"] < FAIL_FIRST
            state["failed"] += fail
        if fail:
            return self.reply(503, "busy, try again", rec)
        return self.reply(200, "ok", rec)


srv = HTTPServer(("127.0.0.1", 0), Handler)
with open(os.path.join(OUT, "port.tmp"), "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(os.path.join(OUT, "port.tmp"), os.path.join(OUT, "port"))
srv.serve_forever()
