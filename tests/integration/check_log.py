#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Check a pmclog recorded from the demo workload, as pmcstat would read it.

usage: check_log.py DUMP_JSON [--comm NAME] [--only-tree] [--min-share F] [--expect-drop]
       [--expect-threads N] [--expect-children N]

DUMP_JSON is the output of `hwpmc dump --json`.  Checks the stream rules of
pmclog-format.md (INITIALIZE first, CLOSELOG last, non-decreasing time stamps,
every CALLCHAIN pmcid allocated before use, the workload's PROC_CREATE and the
MAP_IN of the sampled object before its first sample), then resolves the user PCs
of the workload's samples through its MAP_INs and the ELF symbols (nm), using
pmcstat's arithmetic (link address = pc - (pl_start - V), V of FreeBSD main's rule:
elfrule.py), and requires the hot functions for at least --min-share of them.
Prints one 'ok - ...' or 'not ok - ...' line per check and exits non-zero on failure.
"""
import bisect
import json
import subprocess
import sys

from elfrule import bias

HOT = {"hot_leaf", "lib_hot_loop"}
results = []


def check(ok, what):
    results.append(ok)
    print(("ok - " if ok else "not ok - ") + what)


def symbols(path, cache={}):
    if path not in cache:
        out = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True,
                             text=True).stdout
        syms = []
        for line in out.splitlines():
            f = line.split()
            if len(f) == 4 and f[2] in "tTwW":
                syms.append((int(f[0], 16), int(f[1], 16), f[3].split(".")[0]))
        syms.sort()
        cache[path] = syms
    return cache[path]


def resolve(path, link):
    syms = symbols(path)
    i = bisect.bisect_right([s[0] for s in syms], link) - 1
    if i >= 0 and syms[i][0] <= link < syms[i][0] + max(syms[i][1], 1):
        return syms[i][2]
    return None


def main():
    args = sys.argv[1:]
    dump = args[0]
    opt = {"--comm": "hwpmc-demo", "--min-share": "0.95"}
    flags = set()
    i = 1
    while i < len(args):
        if args[i] in ("--comm", "--min-share", "--expect-threads", "--expect-children"):
            opt[args[i]] = args[i + 1]
            i += 2
        else:
            flags.add(args[i])
            i += 1
    recs = [json.loads(line) for line in open(dump)]
    summary = recs.pop()["summary"]
    check(summary["status"] == "complete", "log is complete (%s)" % summary["status"])
    check(recs[0]["type"] == "initlog", "INITIALIZE is the first record")
    check(recs[-1]["type"] == "closelog", "CLOSELOG is the last record")
    tscs = [r["tsc"] for r in recs]
    check(all(a <= b for a, b in zip(tscs, tscs[1:])), "time stamps never decrease")
    pmcids, bad_pmcid = set(), 0
    procs, maps = {}, {}
    first_sample, map_before, proc_before = {}, True, True
    samples = []
    for r in recs:
        t = r["type"]
        if t in ("allocatedyn", "allocate"):
            pmcids.add(r["pmcid"])
        elif t == "proc-create":
            procs[r["pid"]] = r["name"]
        elif t == "map-in":
            # (load bias, path): the rule of the log's mark, FreeBSD main's (11.5).
            maps.setdefault(r["pid"], []).append((bias(r["path"], int(r["start"], 16)), r["path"]))
        elif t == "map-out":
            if r["start"] == "0x0" and r["end"] == "0xffffffffffffffff":
                maps.pop(r["pid"], None)
        elif t == "fork":
            maps[r["newpid"]] = list(maps.get(r["oldpid"], []))
        elif t == "callchain":
            if r["pmcid"] not in pmcids:
                bad_pmcid += 1
            if procs.get(r["pid"]) == opt["--comm"]:
                samples.append((r, list(maps.get(r["pid"], []))))
            elif r["pid"] not in procs and r["pid"] != 0 and "--only-tree" in flags:
                pass
    check(bad_pmcid == 0, "every CALLCHAIN pmcid was allocated before use (%d bad)" % bad_pmcid)
    check(len(samples) > 0, "the workload '%s' was sampled (%d samples)" % (opt["--comm"], len(samples)))
    if "--only-tree" in flags:
        others = [r for r in recs if r["type"] == "callchain" and procs.get(r["pid"]) != opt["--comm"]]
        check(not others, "only the workload's process tree was sampled (%d others)" % len(others))
    user = [(r, m) for r, m in samples if r["user"]]
    hot = chains_to_run = reach_main = unresolved = 0
    for r, m in user:
        pc = int(r["pc"][0], 16)
        # The MAP_IN whose object holds pc: the highest load bias <= pc.
        cands = sorted(x for x in m if x[0] <= pc)
        name = None
        if cands:
            start, path = cands[-1]
            name = resolve(path, pc - start)
        if name is None:
            unresolved += 1
            continue
        if name in HOT:
            hot += 1
            names = []
            for p in r["pc"][1:]:
                p = int(p, 16)
                c2 = sorted(x for x in m if x[0] <= p)
                names.append(resolve(c2[-1][1], p - c2[-1][0]) if c2 else None)
            if "run" in names:
                chains_to_run += 1
            if "main" in names:
                reach_main += 1
    share = hot / len(user) if user else 0
    check(share >= float(opt["--min-share"]),
          "%.1f%% of %d user samples resolve to %s through MAP_IN + ELF symbols (%d unresolved)"
          % (100 * share, len(user), "/".join(sorted(HOT)), unresolved))
    check(hot and chains_to_run / hot >= 0.9,
          "fp call chains of the hot samples reach run(): %d of %d" % (chains_to_run, hot))
    check(reach_main > 0, "some fp call chains reach main(): %d" % reach_main)
    if "--expect-drop" in flags:
        drops = sum(1 for r in recs if r["type"] == "drop")
        check(drops > 0, "DROPNOTIFY records present (%d)" % drops)
    if "--expect-threads" in opt:
        tids = {r["tid"] for r, _ in samples}
        check(len(tids) >= int(opt["--expect-threads"]), "samples from %d threads" % len(tids))
    if "--expect-children" in opt:
        pids = {r["pid"] for r, _ in samples}
        check(len(pids) >= 1 + int(opt["--expect-children"]), "samples from %d processes" % len(pids))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
