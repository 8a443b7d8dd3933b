#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# Protocol-level stress of a running hwpmcd (test-faults.sh, check 5), speaking
# docs/protocol.md directly:
#   faults_cycles.py SOCKET PID cycles N      N start/stop cycles, each start with
#                                             "output": "fd" and an fd (SCM_RIGHTS)
#   faults_cycles.py SOCKET PID clients N     4 rounds of N concurrent clients: hello,
#                                             status, events, then start+stop (at most
#                                             8 sessions at once: max_sessions is 16)
# Every reply is checked (ok true, the id echoed, the session ids consistent).
# FAULTS_RSS_RULES=0 (a sanitizer build) turns the VmRSS rules into notes.
# Prints "ok - ..."/"not ok - ..." lines and "# ..." notes; exits 1 on a failure.
import array, json, os, socket, sys, threading, time

path, dpid, mode, count = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])


class Client:
    def __init__(self):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # A blocking connect waits for room in the listen backlog (64) as hwpmc's
        # does; with a timeout set, Python's connect would fail with EAGAIN instead.
        self.s.connect(path)
        self.s.settimeout(20)
        self.buf = b""
        self.next_id = 1

    def call(self, cmd, args=None, fds=()):
        rid = self.next_id
        self.next_id += 1
        req = {"id": rid, "cmd": cmd}
        if args is not None:
            req["args"] = args
        data = (json.dumps(req) + "\n").encode()
        if fds:
            self.s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
        else:
            self.s.sendall(data)
        while True:
            while b"\n" not in self.buf:
                chunk = self.s.recv(1 << 20)
                if not chunk:
                    raise RuntimeError("%s: connection closed" % cmd)
                self.buf += chunk
            line, self.buf = self.buf.split(b"\n", 1)
            rep = json.loads(line)
            if "event" in rep:
                continue
            if rep.get("id") != rid:
                raise RuntimeError("%s: reply id %r, sent %d" % (cmd, rep.get("id"), rid))
            return rep

    def close(self):
        self.s.close()


def must(rep, what):
    if rep.get("ok") is not True:
        raise RuntimeError("%s: %r" % (what, rep))
    return rep


def start_stop(c, out_fd):
    rep = must(c.call("start", {"output": "fd", "events": ["cpu-clock"], "freq": 100,
                                 "callgraph": "none", "ring_pages": 4}, [out_fd]), "start")
    sid = rep["session"]
    rep = must(c.call("stop", {"session": sid}), "stop")
    st = rep["status"]
    if st["session"] != sid or st["state"] != "done":
        raise RuntimeError("stop of %d: status %r" % (sid, st))
    return sid


def proc_counts():
    with open("/proc/%d/status" % dpid) as f:
        rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    return len(os.listdir("/proc/%d/fd" % dpid)), rss, len(os.listdir("/proc/%d/task" % dpid))


failed = False
# Under ASan the freed memory sits in its quarantine: RSS says nothing about leaks
# there (LeakSanitizer does), so the RSS rules become notes.
rss_rules = os.environ.get("FAULTS_RSS_RULES", "1") == "1"


def report(good, text):
    global failed
    print(("ok - " if good else "not ok - ") + text, flush=True)
    failed |= not good


def report_rss(good, text):
    if rss_rules:
        report(good, text)
    else:
        print("# (not checked under a sanitizer) " + text, flush=True)


devnull = os.open("/dev/null", os.O_WRONLY | os.O_CLOEXEC)
if mode == "cycles":
    c = Client()
    # Warm-up: the allocator's arenas, the ELF caches and the like reach their size.
    for _ in range(50):
        start_stop(c, devnull)
    fd0, rss0, thr0 = proc_counts()
    t0 = time.monotonic()
    ids = set()
    err = None
    try:
        for i in range(count):
            ids.add(start_stop(c, devnull))
    except Exception as e:  # noqa: BLE001 - reported as a failed check
        err = e
    dt = time.monotonic() - t0
    fd1, rss1, thr1 = proc_counts()
    report(err is None and len(ids) == count,
           "%d start/stop cycles with an fd each: every reply ok, ids echoed, %d distinct sessions "
           "(%.1f s, %.1f ms a cycle)%s" % (count, len(ids), dt, dt * 1000 / count,
                                             ": %s" % err if err else ""))
    report(fd1 == fd0, "no fd leak: %d fds before, %d after" % (fd0, fd1))
    report(thr1 == thr0, "no thread leak: %d threads before, %d after" % (thr0, thr1))
    # Rule: after 50 warm-up cycles, at most 2 MiB more resident memory.
    report_rss(rss1 - rss0 < 2048, "no memory growth: VmRSS %d kB before, %d kB after "
           "(rule: < 2048 kB growth after 50 warm-up cycles)" % (rss0, rss1))
    c.close()
elif mode == "clients":
    def round_of_clients():
        barrier = threading.Barrier(count)
        gate = threading.Semaphore(8)
        errors = []
        done = []

        def one(k):
            try:
                c = Client()
                barrier.wait(timeout=30)  # all connected at once
                r = must(c.call("hello"), "hello")
                assert r["version"] == 1, r
                must(c.call("status"), "status")
                r = must(c.call("events"), "events")
                assert "cpu-clock" in r["generic"], r
                with gate:
                    start_stop(c, devnull)
                must(c.call("hello"), "hello after stop")
                c.close()
                done.append(k)
            except Exception as e:  # noqa: BLE001 - collected and reported
                errors.append("client %d: %s" % (k, e))
                try:
                    barrier.abort()
                except Exception:  # noqa: BLE001
                    pass

        th = [threading.Thread(target=one, args=(k,)) for k in range(count)]
        t0 = time.monotonic()
        for t in th:
            t.start()
        for t in th:
            t.join(120)
        time.sleep(0.3)  # the daemon frees the closed clients
        return errors, len(done), time.monotonic() - t0

    # Rounds 1-2 warm up (client buffers, each worker thread's malloc arena: a high
    # water mark of 8 concurrent sessions), rounds 3-4 are measured.
    fd0, rss0, thr0 = proc_counts()
    errors, ndone = [], 0
    rss = [rss0]
    times = []
    for _ in range(4):
        e, n, dt = round_of_clients()
        errors += e
        ndone += n
        times.append("%.1f" % dt)
        rss.append(proc_counts()[1])
    fd2, _, thr2 = proc_counts()
    report(not errors and ndone == 4 * count,
           "4 rounds of %d concurrent clients: hello/status/events and a start+stop each, every "
           "reply ok (%s s)%s" % (count, ", ".join(times),
                                  ": " + "; ".join(errors[:3]) if errors else ""))
    report(fd2 == fd0 and thr2 == thr0, "after the clients: %d fds (%d before), %d threads (%d before)"
           % (fd2, fd0, thr2, thr0))
    report_rss(rss[4] - rss[2] < 4096, "clients: VmRSS %s kB at the start and after each round "
               "(rule: rounds 3 and 4, %d clients and sessions, add < 4096 kB)"
               % (" / ".join(str(x) for x in rss), 2 * count))
sys.exit(1 if failed else 0)
