#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Hand-made pmclog files for the report tests (docs/pmclog-format.md sections 3 and 5).

usage: mkpmclog.py freebsd BINARY OUT     a log in FreeBSD's own conventions: cpu type
                                          INTEL_SKYLAKE, MAP_IN start = the start of the
                                          image's first executable mapping (as FreeBSD's
                                          kernel writes it), 1000 samples of the corpus
                                          chain c_leaf < c_inner < c_middle < c_outer < main
       mkpmclog.py hwpmcd BINARY OUT      a log as hwpmcd writes it: cpu type GENERIC, the
                                          USERDATA mark of FreeBSD main's MAP_IN rule,
                                          MAP_IN start = bias + V, 1000 corpus chains
       mkpmclog.py hwpmcd1 BINARY OUT     the same as hwpmcd wrote it before the mark:
                                          MAP_IN start = the load bias (V = 0 for a PIE)
       mkpmclog.py cxx LIBRARY SYMBOL OUT 100 samples in the (mangled) SYMBOL of LIBRARY
       mkpmclog.py hostile BINARY FIFO OUT  valid records with hostile content: images that
                                          do not exist, a FIFO, a directory and /dev/zero
                                          as images, PCs in no mapping, 512-PC chains, a
                                          sample of an unannounced pmcid, names with
                                          control bytes
       mkpmclog.py forks BINARY OUT       5,000 MAP_INs of BINARY in one process, then 5,000
                                          PROCFORKs of it, one corpus chain per child (the
                                          report's model once took 804 MB for this)
       mkpmclog.py manymaps BINARY OUT    80,000 MAP_INs in one process in descending
                                          address order, MAP_OUTs of every odd one and of a
                                          block of 1,000, samples in kept and cut ones
       mkpmclog.py filters BINARY OUT     filter marks (pmclog-format.md 11.10) good and
                                          bad: a repeat, a control byte, a length past
                                          4 KiB, a mark cut short by a sample
       mkpmclog.py buildid BINARY OUT     build id marks (pmclog-format.md 11.11): process
                                          100 maps BINARY under its own id (100 corpus
                                          chains); process 101 maps BINARY's path under
                                          another id (100 chains: another build, unnamed);
                                          a mark cut short by a PROC_CREATE is dropped
       mkpmclog.py cgroups BINARY OUT     cgroup marks (pmclog-format.md 11.12): process 100
                                          in /a.slice/web.service (40 chains), moved to
                                          /a.slice/db.service (30); 101 a PROCFORK child of
                                          100 (20: its parent's); 102 said in
                                          /a.slice/web.service?x (a control byte: '?'); a
                                          mark cut short, one with a length past 4 KiB and
                                          one of an unknown pid are dropped; 103 says none
       mkpmclog.py remap BINARY OUT       the same chain sampled 50 times in no mapping,
                                          60 times once BINARY is mapped there, 70 times
                                          after a MAP_OUT of it: samples alike must be
                                          resolved by the mappings of their time
       mkpmclog.py twoimages BINARY COPY OUT  process 100 runs BINARY (30 corpus chains),
                                          process 101 COPY, a file of the same base name
                                          elsewhere (20): two images of one name
       mkpmclog.py images OUT BINARY...   process 100 + i runs the i-th BINARY (copies of
                                          the corpus, at their own paths): 20 corpus
                                          chains each, a log naming several images
       mkpmclog.py rates BINARY OUT       a budgeted profile's rates (pmclog-format.md 11.9,
                                          11.13): cpu-clock by frequency following the rate
                                          marks, 100 corpus chains at each of 100, 25 and
                                          50 Hz (leaf c_leaf, c_inner, c_middle); task-clock
                                          by period 1000000 (the marks leave it); cycles
                                          with no sampling mark (an earlier hwpmcd: it
                                          follows the marks); marks cut short, of no event
                                          and of an unknown kind are dropped
       mkpmclog.py jit DIR OUT            process 4242 with no image, sampled in JIT code:
                                          DIR/perf-4242.map names two functions (one
                                          with spaces), has a malformed and a cut-off
                                          line; 30 samples in each, 10 in no function
       mkpmclog.py jitreuse DIR OUT       process 4243's JIT reused an address:
                                          DIR/perf-4243.map has JS:oldFn and later
                                          JS:newFn there (perf-4243.map.times); 25
                                          samples before newFn appeared, 30 after
Prints the expected counts as 'key value' lines on standard output.
"""
import struct
import subprocess
import sys

PMCID = 0xFFF00F00
EXIT_OK = 0


def rec(rtype, body, tsc=0):
    body = body + b"\0" * (-len(body) % 4)
    length = 16 + len(body)
    return struct.pack("<IIQ", 0xEE << 24 | rtype << 16 | length, 0, tsc) + body


def initialize(cpu, cpuid=b"GenuineIntel-6-85-4"):
    return rec(3, struct.pack("<IIQqq", 0x0A000000, cpu, 1000000000, 1764750000, 0) +
               cpuid.ljust(64, b"\0"))


def allocdyn(pmcid, name):
    return rec(17, struct.pack("<IIII", pmcid, 0, 0x80, 0) + name.ljust(64, b"\0"))


def proc_create(pid, name):
    return rec(20, struct.pack("<iI", pid, 0) + name[:19].ljust(20, b"\0"))


def map_in(pid, start, path):
    return rec(14, struct.pack("<iIQ", pid, 0, start) + path + b"\0")


def callchain(pid, tid, pcs, user=True, cpu=0, pmcid=PMCID, tsc=0):
    return rec(16, struct.pack("<iiII", pid, tid, pmcid, cpu << 16 | (1 if user else 0)) +
               b"".join(struct.pack("<Q", pc) for pc in pcs), tsc)


def procfork(oldpid, newpid):
    return rec(11, struct.pack("<ii", oldpid, newpid))


def map_out(pid, start, end):
    return rec(15, struct.pack("<iIQQ", pid, 0, start, end))


def closelog():
    return rec(1, b"")


def elf_exec_vaddr(path):
    """p_vaddr of the first PF_X PT_LOAD, and whether the file is ET_DYN."""
    data = open(path, "rb").read()
    e_type, = struct.unpack_from("<H", data, 16)
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for i in range(phnum):
        p_type, p_flags, _, p_vaddr = struct.unpack_from("<IIQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_flags & 1:
            return p_vaddr, e_type == 3
    sys.exit("mkpmclog: %s has no executable PT_LOAD" % path)


def symbols(path):
    out = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "tT":
            syms[f[2]] = int(f[0], 16)
    return syms


CHAIN = ["c_leaf", "c_inner", "c_middle", "c_outer", "main"]


def chain_pcs(syms, bias):
    # The leaf PC inside c_leaf; callers' return addresses a few bytes into each.
    return [bias + syms[n] + (2 if k == 0 else 5) for k, n in enumerate(CHAIN)]


def freebsd(binary, out):
    vaddr, dyn = elf_exec_vaddr(binary)
    syms = symbols(binary)
    bias = 0x10000000 if dyn else 0
    start = bias + (vaddr & ~0xFFF)  # FreeBSD: where the first executable mapping starts
    b = [initialize(0x8B), allocdyn(PMCID, b"INST_RETIRED.ANY"), proc_create(100, b"corpus")]
    b.append(map_in(100, start, binary.encode()))
    for i in range(1000):
        b.append(callchain(100, 100001, chain_pcs(syms, bias), tsc=1000 + i))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples 1000")


def userdata(word):
    return rec(13, struct.pack("<II", word, 0))


HWPMCD_RULE_FREEBSD = 0x48575201  # pmclog-format.md 11.8


def hwpmcd(binary, out, marked):
    """A Linux log of hwpmcd: with the rule mark (pl_start = bias + V, V of FreeBSD
    main: the first PF_X segment), or as hwpmcd wrote before it (V = 0 for ET_DYN)."""
    vaddr, dyn = elf_exec_vaddr(binary)
    syms = symbols(binary)
    bias = 0x555500000000 if dyn else 0
    start = bias + (vaddr & ~0xFFF) if marked else bias
    b = [initialize(0x400)] + ([userdata(HWPMCD_RULE_FREEBSD)] if marked else [])
    b += [allocdyn(PMCID, b"cpu-clock"), proc_create(100, b"corpus"),
          map_in(100, start, binary.encode())]
    for i in range(1000):
        b.append(callchain(100, 100, chain_pcs(syms, bias), tsc=1000 + i))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples 1000")


HWPMCD_RATE = 0x48575301  # pmclog-format.md 11.9
HWPMCD_SAMPLING = 0x48575305  # pmclog-format.md 11.13
SAMPLING_PERIOD, SAMPLING_FREQ, SAMPLING_F_RATE = 1, 2, 0x100


def sampling(pmcid, kind, value, tsc=0):
    return b"".join(rec(13, struct.pack("<II", w, 0), tsc) for w in
                    (HWPMCD_SAMPLING, pmcid, kind, value & 0xFFFFFFFF, value >> 32))


def rates(binary, out):
    vaddr, dyn = elf_exec_vaddr(binary)
    syms = symbols(binary)
    bias = 0x555500000000 if dyn else 0
    clock, task, cyc = PMCID, PMCID + 1, PMCID + 2
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), userdata(HWPMCD_RATE), userdata(100),
         allocdyn(clock, b"cpu-clock"), sampling(clock, SAMPLING_FREQ | SAMPLING_F_RATE, 100),
         allocdyn(task, b"task-clock"), sampling(task, SAMPLING_PERIOD, 1000000),
         allocdyn(cyc, b"cycles"), proc_create(100, b"corpus"),
         map_in(100, bias + (vaddr & ~0xFFF), binary.encode())]
    pcs = chain_pcs(syms, bias)
    tsc = 1000
    for phase, hz in enumerate((100, 25, 50)):
        if phase:
            b += [userdata(HWPMCD_RATE), userdata(hz)]
        if phase == 2:
            # cut short by a sample, of no event, of an unknown kind: all dropped
            b += [userdata(HWPMCD_SAMPLING), userdata(clock), userdata(SAMPLING_PERIOD)]
            b.append(callchain(100, 100, pcs[2:], pmcid=clock, tsc=tsc))
            b += [sampling(PMCID + 9, SAMPLING_PERIOD, 7), sampling(clock, 7, 7),
                  sampling(clock, SAMPLING_FREQ, 0)]
        for i in range(100 - (phase == 2)):
            for pmcid in (clock, task, cyc):
                b.append(callchain(100, 100, pcs[phase:], pmcid=pmcid, tsc=tsc))
            tsc += 1
        if phase == 2:
            for pmcid in (task, cyc):
                b.append(callchain(100, 100, pcs[phase:], pmcid=pmcid, tsc=tsc))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    # weights relative to the first rate: 100 Hz / 25 Hz = 4, 100 Hz / 50 Hz = 2
    print("weighted c_leaf 100 c_inner 400 c_middle 200")
    print("counted c_leaf 100 c_inner 100 c_middle 100")


def hostile(binary, fifo, out):
    syms = symbols(binary)
    vaddr, dyn = elf_exec_vaddr(binary)
    bias = 0x5500000000 if dyn else 0
    b = [initialize(0x400, b"hostile"), allocdyn(PMCID, b"cpu-clock"),
         proc_create(7, b"evil\x1b[31mname\n"), map_in(7, bias, binary.encode()),
         map_in(7, 0x7f0000000000, b"/nonexistent/libgone.so"),
         map_in(7, 0x7e0000000000, fifo.encode()),
         map_in(7, 0x7d0000000000, b"/"),
         map_in(7, 0x7c0000000000, b"/dev/zero"),
         map_in(-1, 0x1234000, b"vmlinux")]  # a KASLR slide of no boot here
    n = 0
    counts = {"gone": 0, "nomap": 0, "deep": 0, "unannounced": 0, "good": 0}
    for i in range(50):  # in an image that does not exist: gone+0x...
        b.append(callchain(7, 7, [0x7f0000001000 + 16 * i]))
        counts["gone"] += 1
    for i in range(50):  # in no mapping at all
        b.append(callchain(7, 7, [0x1000 + i, 0x2000]))
        counts["nomap"] += 1
    for d in range(3):  # 512-PC chains: the known chain, then 507 PCs in no mapping
        b.append(callchain(7, 7, chain_pcs(syms, bias) + [0x3000 + k for k in range(507)]))
        counts["deep"] += 1
    for i in range(10):  # the fifo, the directory, /dev/zero
        b.append(callchain(7, 7, [0x7e0000000100, 0x7d0000000100, 0x7c0000000100]))
    for i in range(5):  # a pmcid nobody announced: counted, not reported
        b.append(callchain(7, 7, [bias + syms["c_leaf"]], pmcid=0x1234))
        counts["unannounced"] += 1
    for i in range(100):
        b.append(callchain(7, 7, chain_pcs(syms, bias)))
        counts["good"] += 1
    # kernel-mode samples with kernel PCs and no kernel symbols
    for i in range(7):
        b.append(callchain(7, 7, [0xffffffff81001000 + i, 0xffffffff81002000] +
                           chain_pcs(syms, bias), user=False))
    counts["kernel"] = 7
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    for k, v in counts.items():
        print(k, v)
    print("samples", sum(counts.values()) + 10)


def cxx(lib, symbol, out):
    """100 samples at a mangled .dynsym function of a shared library."""
    out_nm = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True,
                            text=True, check=True).stdout
    addr = next(int(l.split()[0], 16) for l in out_nm.splitlines() if l.split()[-1].split('@')[0] == symbol)
    bias = 0x7f1000000000
    b = [initialize(0x400), allocdyn(PMCID, b"cpu-clock"), proc_create(9, b"cxx"),
         map_in(9, bias, lib.encode())]
    for i in range(100):
        b.append(callchain(9, 9, [bias + addr + 1]))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples 100")


HWPMCD_FILTER = 0x48575302  # pmclog-format.md 11.10


def filter_mark(text, tsc, length=None):
    """The filter mark: the word, the text's length, the text 4 bytes a word."""
    words = [HWPMCD_FILTER, len(text) if length is None else length]
    words += [struct.unpack("<I", (text[i:i + 4] + b"\0\0\0")[:4])[0] for i in range(0, len(text), 4)]
    return [rec(13, struct.pack("<II", w, 0), tsc) for w in words]


def filters(binary, out):
    """Filter marks good and bad, between samples: the report keeps 'pid=1', 'a?b'
    (a control byte shown as '?'), 'uid=0' and 'uid=1' .. 'uid=12'; a repeat is no
    change, a length past 4 KiB and a mark cut short by a sample are dropped."""
    vaddr, _ = elf_exec_vaddr(binary)
    syms = symbols(binary)
    base = 0x555500000000
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock"),
         proc_create(100, b"corpus"), map_in(100, base + (vaddr & ~0xFFF), binary.encode())]
    b += filter_mark(b"pid=1", 1000)
    b.append(callchain(100, 100, chain_pcs(syms, base), tsc=1001))
    b += filter_mark(b"pid=1", 1002)
    b += filter_mark(b"a\x01b", 2000)
    b += filter_mark(b"x" * 8, 2500, length=0xFFFFFFFF)
    b += filter_mark(b"comm=cut-short", 2600)[:3]
    b.append(callchain(100, 100, chain_pcs(syms, base), tsc=2601))
    b += filter_mark(b"uid=0", 3000)
    b.append(callchain(100, 100, chain_pcs(syms, base), tsc=3001))
    for i in range(1, 13):  # 15 in all: the text header shows 6, "... 3 more ...", 6
        b += filter_mark(b"uid=%d" % i, 3000 + 10 * i)
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples 3")


SLOT = 0x100000  # one MAP_IN every MiB: the corpus binary's text is far smaller


def forks(binary, out):
    vaddr, _ = elf_exec_vaddr(binary)
    syms = symbols(binary)
    base = 0x555500000000
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock"),
         proc_create(100, b"corpus")]
    b += [map_in(100, base + i * SLOT + (vaddr & ~0xFFF), binary.encode()) for i in range(5000)]
    b += [procfork(100, 200000 + i) for i in range(5000)]
    for i in range(5000):
        b.append(callchain(200000 + i, 200000 + i, chain_pcs(syms, base + i * SLOT), tsc=1000 + i))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples 5000")


def manymaps(binary, out):
    vaddr, _ = elf_exec_vaddr(binary)
    syms = symbols(binary)
    base, n = 0x555500000000, 80000
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock"),
         proc_create(100, b"corpus")]
    b += [map_in(100, base + i * SLOT + (vaddr & ~0xFFF), binary.encode())
          for i in range(n - 1, -1, -1)]
    b += [map_out(100, base + i * SLOT, base + (i + 1) * SLOT) for i in range(1, n, 2)]
    b.append(map_out(100, base + 1000 * SLOT, base + 2000 * SLOT))
    kept = [i for i in range(0, n, 800)]                  # even, outside the block
    cut = [i for i in range(1, n, 800)] + list(range(1000, 2000, 10))
    kept = [i for i in kept if not 1000 <= i < 2000]
    for k, i in enumerate(kept + cut):
        b.append(callchain(100, 100, chain_pcs(syms, base + i * SLOT), tsc=1000 + k))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples %d" % (len(kept) + len(cut)))
    print("resolved %d" % len(kept))
    print("unknown_pcs %d" % (len(cut) * len(CHAIN)))


def remap(binary, out):
    vaddr, _ = elf_exec_vaddr(binary)
    syms = symbols(binary)
    bias = 0x555500000000
    start = bias + (vaddr & ~0xFFF)
    pcs = chain_pcs(syms, bias)
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock"),
         proc_create(100, b"corpus")]
    b += [callchain(100, 100, pcs, tsc=1000 + i) for i in range(50)]
    b.append(map_in(100, start, binary.encode()))
    b += [callchain(100, 100, pcs, tsc=2000 + i) for i in range(60)]
    b.append(map_out(100, bias, bias + (1 << 32)))
    b += [callchain(100, 100, pcs, tsc=3000 + i) for i in range(70)]
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples 180")
    print("resolved 60")
    print("unknown_pcs %d" % ((50 + 70) * len(CHAIN)))


def twoimages(binary, copy, out):
    vaddr, _ = elf_exec_vaddr(binary)
    syms = symbols(binary)
    bias = 0x555500000000
    start = bias + (vaddr & ~0xFFF)
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock"),
         proc_create(100, b"corpus"), map_in(100, start, binary.encode()),
         proc_create(101, b"corpus"), map_in(101, start, copy.encode())]
    b += [callchain(100, 100, chain_pcs(syms, bias), tsc=1000 + i) for i in range(30)]
    b += [callchain(101, 101, chain_pcs(syms, bias), tsc=2000 + i) for i in range(20)]
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples 50")


HWPMCD_BUILDID = 0x48575303  # pmclog-format.md 11.11


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True,
                         check=True).stdout
    return bytes.fromhex(next(l.split()[-1] for l in out.splitlines() if "Build ID" in l))


def bytes_mark(tag, data, tsc=0, length=None):
    """A run of USERDATA: @tag, the length of @data (or @length), @data in words."""
    words = [tag, len(data) if length is None else length]
    words += [struct.unpack("<I", (data[i:i + 4] + b"\0\0\0")[:4])[0] for i in range(0, len(data), 4)]
    return [rec(13, struct.pack("<II", w, 0), tsc) for w in words]


def buildid_mark(bid, tsc=0):
    return bytes_mark(HWPMCD_BUILDID, bid, tsc)


def linux_placed(binary):
    """(symbols, load bias, MAP_IN pl_start) of @binary in a marked hwpmcd log."""
    vaddr, dyn = elf_exec_vaddr(binary)
    bias = 0x555500000000 if dyn else 0
    return symbols(binary), bias, bias + (vaddr & ~0xFFF)


def samples_of(b, pids, syms, bias, out, n=100):
    """@n samples of each pid (its own tid) with the corpus chain, CLOSELOG, written."""
    for i in range(n):
        for pid in pids:
            b.append(callchain(pid, pid, chain_pcs(syms, bias), tsc=1000 + i))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples %d" % (n * len(pids)))


def buildid(binary, out):
    syms, bias, start = linux_placed(binary)
    bid = build_id(binary)
    other = bytes(reversed(bid))
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock"),
         proc_create(100, b"right")]
    b += buildid_mark(bid) + [map_in(100, start, binary.encode())]
    b.append(proc_create(101, b"other"))
    # A mark another record interrupts is no mark: 101's MAP_IN below has the other id.
    b += buildid_mark(bid)[:3] + [proc_create(102, b"cut")]
    b += buildid_mark(other) + [map_in(101, start, binary.encode())]
    samples_of(b, (100, 101), syms, bias, out)


def idle(binary, other, out):
    """Processes without samples: their images are never read.  100 is sampled;
    200 maps two images and has no sample; 300 (no sample) maps an image and forks
    301, which is sampled: 301's ranges are its parent's, so that image is read."""
    syms, bias, start = linux_placed(binary)
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock"),
         proc_create(100, b"busy"), map_in(100, start, binary.encode()),
         proc_create(200, b"idle"), map_in(200, start, other.encode()),
         map_in(200, 0x7f0000000000, b"/nonexistent/idle.so"),
         proc_create(300, b"parent"), map_in(300, 0x7f0000000000, b"/nonexistent/parent.so"),
         procfork(300, 301), map_in(301, start, binary.encode())]
    samples_of(b, (100, 301), syms, bias, out)


def images(out, binaries):
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock")]
    placed = []
    for i, binary in enumerate(binaries):
        syms, bias, start = linux_placed(binary)
        b += [proc_create(100 + i, b"corpus"), map_in(100 + i, start, binary.encode())]
        placed.append((100 + i, syms, bias))
    for k in range(20):
        for pid, syms, bias in placed:
            b.append(callchain(pid, pid, chain_pcs(syms, bias), tsc=1000 + k))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples %d" % (20 * len(binaries)))


HWPMCD_CGROUP = 0x48575304  # pmclog-format.md 11.12


def cgroup_mark(pid, path, tsc=0, length=None):
    return bytes_mark(HWPMCD_CGROUP, struct.pack("<i", pid) + path, tsc, length)


def cgroups(binary, out):
    vaddr, dyn = elf_exec_vaddr(binary)
    syms = symbols(binary)
    bias = 0x555500000000 if dyn else 0
    start = bias + (vaddr & ~0xFFF)
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock")]
    for pid in (100, 102, 103):
        b += [proc_create(pid, b"p%d" % pid), map_in(pid, start, binary.encode())]
    b += cgroup_mark(100, b"/a.slice/web.service")
    b += cgroup_mark(102, b"/a.slice/web.service\x01x")
    b += cgroup_mark(103, b"/never")[:4] + [proc_create(104, b"cut")]  # cut short: dropped
    b += cgroup_mark(103, b"/too-long", length=5000)  # a length past 4 KiB: dropped
    b += cgroup_mark(999, b"/nobody")  # no such process: said, but of no one
    t = 1000
    for i in range(40):
        b.append(callchain(100, 100, chain_pcs(syms, bias), tsc=t))
        t += 1
    b.append(procfork(100, 101))
    b += cgroup_mark(100, b"/a.slice/db.service", tsc=t)
    for i in range(30):
        b.append(callchain(100, 100, chain_pcs(syms, bias), tsc=t))
        t += 1
    for pid, n in ((101, 20), (102, 10), (103, 5)):
        for i in range(n):
            b.append(callchain(pid, pid, chain_pcs(syms, bias), tsc=t))
            t += 1
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples 105")


def jit(d, out):
    """A JIT's map (perf-PID.map) and a log whose PCs are only in its code."""
    base = 0x7F0000000000
    open("%s/perf-4242.map" % d, "w").write(
        "%x 100 JS:*hotLoop /srv/app.js:10:3\n" % (base + 0x1000) +
        "not a line\n" +
        "0x%x 0x80 LazyCompile:~handle request /srv/app.js:42\n" % (base + 0x2000) +
        "%x" % (base + 0x4000))
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock"),
         proc_create(4242, b"node")]
    for i in range(30):
        b.append(callchain(4242, 4242, [base + 0x1010 + i, base + 0x2040], tsc=1000 + i))
    for i in range(30):
        b.append(callchain(4242, 4242, [base + 0x2010], tsc=2000 + i))
    for i in range(10):
        b.append(callchain(4242, 4242, [base + 0x3000], tsc=3000 + i))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("samples 70")


def jitreuse(d, out):
    """A JIT that reused code space: perf-4243.map has two entries at one address, the
    second appeared later (perf-4243.map.times, wall-clock ns line for line)."""
    base, t0 = 0x7F0000000000, 1764750000 * 10**9  # INITIALIZE's wall clock, tsc 0
    open("%s/perf-4243.map" % d, "w").write(
        "%x 100 JS:oldFn /srv/a.js:1\n" % base + "%x 40 JS:other /srv/a.js:9\n" % (base + 0x800) +
        "%x 100 JS:newFn /srv/b.js:2\n" % base)
    open("%s/perf-4243.map.times" % d, "w").write(
        "%d\n%d\n%d\n" % (t0 + 1000000, t0 + 1000000, t0 + 5000000))
    b = [initialize(0x400), userdata(HWPMCD_RULE_FREEBSD), allocdyn(PMCID, b"cpu-clock"),
         proc_create(4243, b"node")]
    # before any entry appeared (the first to appear), between the two, after the second
    for i in range(5):
        b.append(callchain(4243, 4243, [base + 0x10], tsc=500000 + i))
    for i in range(20):
        b.append(callchain(4243, 4243, [base + 0x10], tsc=2000000 + i))
    for i in range(30):
        b.append(callchain(4243, 4243, [base + 0x10], tsc=8000000 + i))
    for i in range(7):
        b.append(callchain(4243, 4243, [base + 0x810], tsc=9000000 + i))
    b.append(closelog())
    open(out, "wb").write(b"".join(b))
    print("old 25 new 30 other 7")


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "images":
        images(sys.argv[2], sys.argv[3:])
        sys.exit(EXIT_OK)
    if len(sys.argv) == 5 and sys.argv[1] == "idle":
        sys.exit(idle(sys.argv[2], sys.argv[3], sys.argv[4]))
    if len(sys.argv) == 4 and sys.argv[1] == "buildid":
        buildid(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "cgroups":
        cgroups(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "jit":
        jit(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "jitreuse":
        jitreuse(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "forks":
        forks(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "filters":
        filters(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 5 and sys.argv[1] == "twoimages":
        twoimages(sys.argv[2], sys.argv[3], sys.argv[4])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "rates":
        rates(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "remap":
        remap(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "manymaps":
        manymaps(sys.argv[2], sys.argv[3])
        sys.exit(0)
    if len(sys.argv) == 4 and sys.argv[1] == "freebsd":
        freebsd(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 5 and sys.argv[1] == "cxx":
        cxx(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] in ("hwpmcd", "hwpmcd1"):
        hwpmcd(sys.argv[2], sys.argv[3], sys.argv[1] == "hwpmcd")
    elif len(sys.argv) == 5 and sys.argv[1] == "hostile":
        hostile(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        sys.exit(__doc__)
