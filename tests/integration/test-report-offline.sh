#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# `hwpmc report` on hand-made logs, as a user runs it (no daemon, no root):
# a log in FreeBSD's own MAP_IN convention, hostile logs (missing images, a
# FIFO, a directory and /dev/zero as images, PCs in no mapping, 512-PC chains,
# unannounced events, control bytes in names), every truncation of a log and
# corrupted copies, and bad arguments.  Nothing may crash or hang; every PC is
# counted.
# usage: test-report-offline.sh BUILD_DIR SRC_DIR   (HWPMC_VALGRIND=path: memcheck)
set -uo pipefail
build=$1 src=$2
hwpmc_bin=$build/src/tools/hwpmc
corpus=$build/tests/workloads/corpus/hwpmc-corpus-pie
mk=$src/tests/integration/mkpmclog.py
tmp=$(mktemp -d)
dpid= # the debuginfod server of the debuginfod cases
trap '[[ -n $dpid ]] && kill $dpid 2> /dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "not ok - $1"; }
hwpmc() {
	if [[ -n "${HWPMC_VALGRIND:-}" ]]; then
		# --vgdb=no: no gdbserver FIFOs in /tmp (a --confine'd report cannot remove them)
		timeout 300 "$HWPMC_VALGRIND" --quiet --vgdb=no --error-exitcode=99 --leak-check=full \
			--errors-for-leak-kinds=definite,indirect "$hwpmc_bin" "$@"
	else
		timeout 60 "$hwpmc_bin" "$@"
	fi
}
# field JSON_FILE PYTHON_EXPR: evaluate EXPR with j = the parsed report
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
# a report's header with its wrapped lines joined again (continuations begin "#   ")
unwrap() { sed -e ':a' -e 'N' -e '$!ba' -e 's/\n#   / /g'; }

# 1. FreeBSD's convention: MAP_IN start = the first executable mapping's start.
python3 "$mk" freebsd "$corpus" "$tmp/fbsd.pmclog" > /dev/null
hwpmc report --json "$tmp/fbsd.pmclog" > "$tmp/fbsd.json" 2> "$tmp/err"; rc=$?
if [[ $rc == 0 && ! -s "$tmp/err" ]]; then
	top=$(field "$tmp/fbsd.json" "j['events'][0]['top'][0]['function'], j['events'][0]['top'][0]['self']")
	[[ "$top" == "c_leaf 1000" ]] && ok "freebsd layout: the hottest function is c_leaf (1000)" ||
		bad "freebsd layout: top is '$top'"
	chain=$(field "$tmp/fbsd.json" "' '.join([n['function'] for n in [j['events'][0]['callgraph'][0]] for _ in [0]] + \
		[c['function'] for c in [j['events'][0]['callgraph'][0]['callers'][0]]] + \
		[c['function'] for c in [j['events'][0]['callgraph'][0]['callers'][0]['callers'][0]]])")
	[[ "$chain" == "c_leaf c_inner c_middle" ]] && ok "freebsd layout: callers of c_leaf are c_inner < c_middle" ||
		bad "freebsd layout: callgraph is '$chain'"
	unres=$(field "$tmp/fbsd.json" "j['header']['pcs_unknown'] + j['header']['pcs_nosym']")
	[[ "$unres" == 0 ]] && ok "freebsd layout: all 5000 PCs resolve" || bad "freebsd layout: $unres unresolved"
else
	bad "freebsd layout: report exit $rc: $(head -3 "$tmp/err")"
fi
# The other rule on the same log must misplace it: proves the rule is applied.
hwpmc report --json --map-rule hwpmcd-1 "$tmp/fbsd.pmclog" > "$tmp/fbsd-v.json" 2>/dev/null
top=$(field "$tmp/fbsd-v.json" "j['events'][0]['top'][0]['function']")
[[ "$top" != c_leaf ]] && ok "freebsd layout read with --map-rule hwpmcd-1 is misplaced ($top)" ||
	bad "--map-rule hwpmcd-1 changed nothing"
grep -q "MAP_IN rule freebsd (a FreeBSD log)" <(hwpmc report -v "$tmp/fbsd.pmclog") &&
	ok "the header names the MAP_IN rule and why" || bad "no MAP_IN rule in the header"

# hwpmcd's logs: with the rule mark (FreeBSD main's rule), and as hwpmcd wrote them
# before the mark (V = 0 for a PIE); each is read by its rule without being told,
# and the other rule misplaces it.
for kind in hwpmcd:freebsd hwpmcd1:hwpmcd-1; do
	mode=${kind%%:*} rule=${kind#*:} other=$([[ ${kind#*:} == freebsd ]] && echo hwpmcd-1 || echo freebsd)
	python3 "$mk" "$mode" "$corpus" "$tmp/$mode.pmclog" > /dev/null
	hwpmc report --json "$tmp/$mode.pmclog" > "$tmp/$mode.json" 2> "$tmp/err"
	top=$(field "$tmp/$mode.json" "j['events'][0]['top'][0]['function'], j['events'][0]['top'][0]['self'], j['header']['pcs_unknown'] + j['header']['pcs_nosym']")
	[[ "$top" == "c_leaf 1000 0" ]] && ok "$mode log: read by the $rule rule unasked (top $top)" ||
		bad "$mode log: top '$top' $(head -2 "$tmp/err")"
	grep -q "MAP_IN rule $rule (" <(hwpmc report -v "$tmp/$mode.pmclog") &&
		ok "$mode log: the header says $rule" || bad "$mode log: header: $(hwpmc report -v "$tmp/$mode.pmclog" | grep 'MAP_IN rule')"
	hwpmc report --json --map-rule "$other" "$tmp/$mode.pmclog" > "$tmp/$mode-o.json" 2>/dev/null
	top=$(field "$tmp/$mode-o.json" "j['events'][0]['top'][0]['function']")
	[[ "$top" != c_leaf ]] && ok "$mode log read with --map-rule $other is misplaced ($top)" ||
		bad "$mode log: --map-rule $other changed nothing"
done

# C++ names are demangled (libiberty's cplus_demangle_v3), here libstdc++'s own symbols.
libstdcxx=$(ldconfig -p | awk '/libstdc\+\+\.so\.6 .*x86-64/ { print $NF; exit }')
if [[ -n "$libstdcxx" ]]; then
	python3 "$mk" cxx "$libstdcxx" _ZNSt13runtime_errorC1EPKc "$tmp/cxx.pmclog" > /dev/null
	hwpmc report --json "$tmp/cxx.pmclog" > "$tmp/cxx.json"
	got=$(field "$tmp/cxx.json" "j['events'][0]['top'][0]['function']")
	[[ "$got" == "std::runtime_error::runtime_error(char const*)" ]] &&
		ok "C++: _ZNSt13runtime_errorC1EPKc prints as $got" || bad "C++: '$got'"
else
	bad "no libstdc++.so.6 found for the demangling check"
fi

# The exports, read back by their real consumers (go tool pprof, callgrind_annotate):
# the same functions and counts as the report (tests/integration/check_exports.py).
export_check() { # NAME JSON ARGS...: fold check_exports.py's lines into ours
	local name=$1 json=$2 line rc
	shift 2
	python3 "$src/tests/integration/check_exports.py" "$json" "$@" > "$tmp/exp.out" 2>&1; rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "$name: ${line#ok - }" ;;
		"not ok - "*) bad "$name: ${line#not ok - }" ;;
		"# "*) echo "$line" ;;
		esac
	done < "$tmp/exp.out"
	[[ $rc == 0 ]] || grep -q "^not ok" "$tmp/exp.out" || bad "$name: check_exports.py exit $rc: $(tail -3 "$tmp/exp.out")"
}
hwpmc report --pprof "$tmp/fbsd.pb.gz" --calltree "$tmp/fbsd.cg" --gprof "$tmp/fbsd.gmon" \
	"$tmp/fbsd.pmclog" 2> "$tmp/fbsd.said"; rc=$?
[[ $rc == 0 ]] && grep -q "wrote the pprof profile" "$tmp/fbsd.said" &&
	grep -q "wrote the callgrind file" "$tmp/fbsd.said" && grep -q "^hwpmc: gprof " "$tmp/fbsd.said" &&
	ok "--pprof, --calltree and --gprof write their files" ||
	bad "--pprof --calltree --gprof: exit $rc: $(head -3 "$tmp/fbsd.said")"
[[ $(head -c 2 "$tmp/fbsd.pb.gz" | od -An -tx1 | tr -d ' ') == 1f8b ]] && ok "--pprof: gzip" || bad "--pprof: not gzip"
hwpmc report --json --limit 0 "$tmp/fbsd.pmclog" > "$tmp/fbsd-all.json" 2> /dev/null
# pprof's locations carry their DWARF inline frames: compared with --inline's report
hwpmc report --json --inline --limit 0 "$tmp/fbsd.pmclog" > "$tmp/fbsd-inl.json" 2> /dev/null
export_check "freebsd layout" "$tmp/fbsd-all.json" --calltree "$tmp/fbsd.cg" --gprof "$tmp/fbsd.said" \
	--json "$tmp/fbsd-inl.json" --pprof "$tmp/fbsd.pb.gz" --list "c_leaf:corpus.c:spin(n, sink)"

# debuginfod: a stripped image whose debug file only a debuginfod server has (a local
# one, started here on 127.0.0.1).  Its functions resolve through the server by build
# id, then from the client cache with the server gone; --no-debuginfod stays offline.
if command -v debuginfod > /dev/null && command -v objcopy > /dev/null; then
	mkdir -p "$tmp/di/srv"
	cp "$corpus" "$tmp/di/prog"
	python3 "$mk" freebsd "$tmp/di/prog" "$tmp/di/log.pmclog" > /dev/null
	objcopy --only-keep-debug "$tmp/di/prog" "$tmp/di/srv/prog.debug"
	strip -s "$tmp/di/prog"
	bid=$(readelf -n "$tmp/di/prog" | awk '/Build ID/ { print $3 }')
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	debuginfod -F "$tmp/di/srv" -p "$port" -d "$tmp/di/db.sqlite" > "$tmp/di/srv.log" 2>&1 &
	dpid=$!
	served=no
	for _ in $(seq 300); do
		python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=2)' \
			"http://127.0.0.1:$port/buildid/$bid/debuginfo" 2> /dev/null && { served=yes; break; }
		sleep 0.2
	done
	[[ $served == yes ]] && ok "debuginfod: a local server serves the debug file of build id $bid" ||
		bad "debuginfod: the local server never served $bid: $(tail -3 "$tmp/di/srv.log")"
	top_of() { field "$1" "j['events'][0]['top'][0]['function']"; }
	hwpmc report --json --no-debuginfod "$tmp/di/log.pmclog" > "$tmp/di/off.json" 2> /dev/null
	[[ $(top_of "$tmp/di/off.json") == prog+0x* ]] &&
		ok "debuginfod: stripped, --no-debuginfod: $(top_of "$tmp/di/off.json")" ||
		bad "debuginfod: --no-debuginfod resolved '$(top_of "$tmp/di/off.json")'"
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/di/cache \
		hwpmc report --json "$tmp/di/log.pmclog" > "$tmp/di/on.json" 2> "$tmp/di/on.err"
	[[ $(top_of "$tmp/di/on.json") == c_leaf ]] && grep -q "asking debuginfod" "$tmp/di/on.err" &&
		ok "debuginfod: the server's debug file names c_leaf, and the report said it asked" ||
		bad "debuginfod: top '$(top_of "$tmp/di/on.json")', $(head -3 "$tmp/di/on.err")"
	kill "$dpid"; wait "$dpid" 2> /dev/null; dpid=
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/di/cache \
		hwpmc report --json "$tmp/di/log.pmclog" > "$tmp/di/cached.json" 2> /dev/null
	[[ $(top_of "$tmp/di/cached.json") == c_leaf ]] && ok "debuginfod: the server gone, the cache answers" ||
		bad "debuginfod: cached top '$(top_of "$tmp/di/cached.json")'"
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/di/cache \
		hwpmc report --json --srcline "$tmp/di/log.pmclog" > "$tmp/di/lines.json" 2> /dev/null
	[[ $(top_of "$tmp/di/lines.json") =~ ^c_leaf\ corpus\.c:[0-9]+$ ]] &&
		ok "debuginfod: --srcline reads the lines of the fetched debug file: $(top_of "$tmp/di/lines.json")" ||
		bad "debuginfod: --srcline top '$(top_of "$tmp/di/lines.json")'"
	DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$tmp/di/cache2 \
		hwpmc report --json "$tmp/di/log.pmclog" > "$tmp/di/gone.json" 2> "$tmp/di/gone.err"; rc=$?
	[[ $rc == 0 && $(top_of "$tmp/di/gone.json") == prog+0x* ]] && grep -q "no debug file" "$tmp/di/gone.err" &&
		ok "debuginfod: no server and no cache: the report goes on, and says so" ||
		bad "debuginfod: unreachable server: exit $rc, $(head -3 "$tmp/di/gone.err")"
else
	echo "# debuginfod or objcopy missing (scripts/bootstrap installs them): the debuginfod cases skipped"
fi

# A hostile debug link (docs/security.md): a stripped library whose .gnu_debuglink
# names a sparse file of a terabyte that has no build id (so only its CRC could
# match).  The report, run as a user (nobody, when the test is root), reads none of
# it (the CRC cap goes by st_size), says so, and names the library's functions
# from .dynsym.  Before, it read the whole terabyte for the CRC, a byte at a time.
if command -v objcopy > /dev/null && command -v strip > /dev/null; then
	dl=$tmp/dl
	mkdir -p "$dl"
	cp "$build/tests/workloads/corpus/libhwpmc-corpus.so" "$dl/libdl.so"
	objcopy --only-keep-debug "$dl/libdl.so" "$dl/full.debug"
	objcopy --remove-section=.note.gnu.build-id "$dl/full.debug" "$dl/huge.debug"
	strip -s "$dl/libdl.so"
	objcopy --add-gnu-debuglink="$dl/huge.debug" "$dl/libdl.so"
	truncate -s 1T "$dl/huge.debug"
	python3 "$mk" cxx "$dl/libdl.so" lib_mid "$dl/log.pmclog" > /dev/null
	as_user=()
	if [[ $(id -u) == 0 ]]; then
		chmod 711 "$tmp"
		chmod 755 "$dl"
		chmod 644 "$dl"/*
		as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
	fi
	"${as_user[@]}" timeout 120 "$hwpmc_bin" report --json --no-debuginfod "$dl/log.pmclog" \
		> "$dl/out.json" 2> "$dl/err"; rc=$?
	got=$([[ -s $dl/out.json ]] && field "$dl/out.json" "j['events'][0]['top'][0]['function'], j['events'][0]['top'][0]['self']")
	[[ $rc == 0 && $got == "lib_mid 100" && $(stat -c %s "$dl/huge.debug") == 1099511627776 ]] &&
		grep -q "huge.debug': 1099511627776 bytes, more than the 2048 MiB whose debuglink CRC is checked: not used" "$dl/err" &&
		ok "a debuglink to a sparse 1 TiB file (no build id), as a user: not read, said, lib_mid named from .dynsym" ||
		bad "a debuglink to a sparse 1 TiB file: exit $rc, top '$got': $(head -3 "$dl/err")"
else
	echo "# objcopy or strip missing: the hostile debug link case skipped"
fi

# Offline debuginfod (docs/security.md): $DEBUGINFOD_URLS at a closed port
# (127.0.0.1:1) and a log of 4 stripped images of 4 build ids without local debug
# files.  The servers are asked once, and said to be given up, not once per image:
# one connect(2) in all (libdebuginfod's own retries off here, which it makes per
# query).  Before, each image asked again.
if command -v strace > /dev/null && command -v strip > /dev/null; then
	off=$tmp/off
	mkdir -p "$off"
	imgs=("$off/prog1" "$off/prog2" "$off/prog3" "$off/prog4")
	# Copies of the corpus, each of another build id (its last byte).
	python3 -c '
import subprocess, sys
out = subprocess.run(["readelf", "-n", sys.argv[1]], capture_output=True, text=True, check=True).stdout
bid = bytes.fromhex(next(l.split()[-1] for l in out.splitlines() if "Build ID" in l))
d = open(sys.argv[1], "rb").read()
assert d.count(bid) == 1
for i, p in enumerate(sys.argv[2:], 1):
    open(p, "wb").write(d.replace(bid, bid[:-1] + bytes([bid[-1] ^ i])))' "$corpus" "${imgs[@]}"
	python3 "$mk" images "$off/log.pmclog" "${imgs[@]}" > /dev/null
	for f in "${imgs[@]}"; do strip -s "$f"; done
	nbid=$(for f in "${imgs[@]}"; do readelf -n "$f" | awk '/Build ID/ { print $3 }'; done | sort -u | wc -l)
	# (LeakSanitizer cannot run under ptrace: off for this run of an ASan build.)
	DEBUGINFOD_URLS=http://127.0.0.1:1 DEBUGINFOD_CACHE_PATH=$off/cache DEBUGINFOD_RETRY_LIMIT=0 \
		ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 timeout 120 strace -f -e trace=connect -o "$off/strace" "$hwpmc_bin" report --json \
		"$off/log.pmclog" > "$off/out.json" 2> "$off/err"; rc=$?
	conns=$(grep -c 'sin_port=htons(1),' "$off/strace")
	asks=$(grep -c "asking debuginfod (http://127.0.0.1:1)" "$off/err")
	said=$(grep -c "'http://127.0.0.1:1': Connection refused; the servers are not asked again in this report" "$off/err")
	got=$([[ -s $off/out.json ]] && field "$off/out.json" "j['header']['images_read'], j['header']['pcs_nosym']")
	[[ $rc == 0 && $nbid == 4 && $got == "4 400" && $conns == 1 && $asks == 1 && $said == 1 ]] &&
		ok "debuginfod at a closed port, 4 images of 4 build ids: asked once (1 connect), given up once, said once" ||
		bad "debuginfod at a closed port: exit $rc, $nbid build ids, images/unnamed PCs '$got', $conns connects, $asks asks, said $said: $(head -3 "$off/err")"
else
	echo "# strace or strip missing: the offline debuginfod case skipped"
fi

# Inline frames and source lines (--inline --srcline), instruction by instruction
# against llvm-symbolizer (tests/integration/check_inline.py): the -O2 -g workload
# with functions that exist only inlined, the C++ corpus, and without valgrind the
# corpus PIE, the static corpus (glibc without DWARF) and hwpmcd itself (-O2 -g).
inline_check() { # BINARY [--any]
	local wrap=
	[[ -n "${HWPMC_VALGRIND:-}" ]] && wrap="$HWPMC_VALGRIND --quiet --error-exitcode=99 \
--leak-check=full --errors-for-leak-kinds=definite,indirect"
	HWPMC_WRAPPER=$wrap python3 "$src/tests/integration/check_inline.py" "$hwpmc_bin" "$1" "$tmp" "${@:2}" \
		> "$tmp/inl.out" 2>&1; local rc=$?
	sed -n 's/^ok /ok - --inline --srcline: /p; s/^BAD /not ok - --inline --srcline: /p' "$tmp/inl.out"
	pass=$((pass + $(grep -c '^ok ' "$tmp/inl.out"))); fail=$((fail + $(grep -c '^BAD ' "$tmp/inl.out")))
	[[ $rc == 0 ]] || grep -q '^BAD ' "$tmp/inl.out" || bad "check_inline.py $1: exit $rc: $(tail -3 "$tmp/inl.out")"
}
if [[ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]]; then
	inline_check "$build/tests/workloads/corpus/hwpmc-corpus-inline"
	[[ -x "$build/tests/workloads/corpus/hwpmc-corpus-cxx" ]] &&
		inline_check "$build/tests/workloads/corpus/hwpmc-corpus-cxx"
	if [[ -z "${HWPMC_VALGRIND:-}" ]]; then
		inline_check "$corpus"
		inline_check "$build/tests/workloads/corpus/hwpmc-corpus-static"
		inline_check "$build/src/daemon/hwpmcd" --any
	fi
else
	bad "llvm-symbolizer (llvm-14) missing: scripts/bootstrap installs it"
fi

# Build id marks (pmclog-format.md 11.11): the file at a MAP_IN's path is used only if
# it is the build the log names; a mark that another record interrupts is dropped.
python3 "$mk" buildid "$corpus" "$tmp/bid.pmclog" > /dev/null
hwpmc report --json --limit 0 "$tmp/bid.pmclog" > "$tmp/bid.json" 2> /dev/null
got=$(field "$tmp/bid.json" "sorted((t['function'], t['self']) for t in j['events'][0]['top'] if t['self']), j['header']['images_other_build'], j['header']['images']")
# (the unnamed PC's offset is the build's layout: any, but in this image)
[[ $got =~ ^\[\(\'c_leaf\',\ 100\),\ \(\'hwpmc-corpus-pie\+0x[0-9a-f]+\',\ 100\)\]\ 1\ 2$ ]] &&
	ok "build id marks: the right build resolves, another build's PCs stay unnamed (and a cut mark is dropped)" ||
	bad "build id marks: $got"

# Images are read only for processes with samples (a system-wide log names every
# image of every process): of 4 images, the sampled processes' 2 (one inherited at a
# fork from a process without samples, unreadable), and the PCs resolve as ever.
python3 "$mk" idle "$corpus" "$build/tests/workloads/corpus/hwpmc-corpus-static" "$tmp/idle.pmclog" > /dev/null
hwpmc report --json --limit 0 "$tmp/idle.pmclog" > "$tmp/idle.json" 2> /dev/null
got=$(field "$tmp/idle.json" "j['header']['images'], j['header']['images_read'], j['header']['images_unreadable'], sorted((t['function'], t['self']) for t in j['events'][0]['top'] if t['self'])")
[[ $got == "4 2 1 [('c_leaf', 200)]" ]] &&
	ok "images of processes without samples are not read (4 in the log, 2 read, 1 of them unreadable)" ||
	bad "images of processes without samples: $got"

# Cgroup marks (pmclog-format.md 11.12): where each process ran, a move, a PROCFORK
# child in its parent's, a control byte shown as '?'; cut, over-long and pid-less marks
# dropped; --cgroup keeps a cgroup and what is below it (by path component).
python3 "$mk" cgroups "$corpus" "$tmp/cg.pmclog" > /dev/null
hwpmc report --json "$tmp/cg.pmclog" > "$tmp/cg.json" 2> /dev/null
got=$(field "$tmp/cg.json" "[(c['path'], c['samples']) for c in j['header']['cgroups']]")
[[ $got == "[('/a.slice/web.service', 60), ('/a.slice/db.service', 30), ('/a.slice/web.service?x', 10)]" ]] &&
	ok "cgroup marks: samples by cgroup (a move, a fork, a control byte; bad marks dropped)" ||
	bad "cgroup marks: $got"
hwpmc report -v --top "$tmp/cg.pmclog" 2> /dev/null | grep "^# cgroups: 3 with samples, 3 in the log: /a.slice/web.service 60, /a.slice/db.service 30, /a.slice/web.service?x 10$" > /dev/null &&
	ok "cgroup marks: the header's '# cgroups:' line" || bad "cgroup marks: header: $(hwpmc report --top "$tmp/cg.pmclog" 2>&1 | grep cgroups)"
cgs=
for c in /a.slice /a.slice/web.service /a.slice/web.service/ /a.slice/db.service,/a.slice/web.service?x / /a; do
	cgs+="$(hwpmc report --json --cgroup "$c" "$tmp/cg.pmclog" 2> /dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["header"]["reported"])') "
done
[[ $cgs == "100 60 60 40 100 0 " ]] && ok "--cgroup: a path keeps itself and what is below it, by component ($cgs)" ||
	bad "--cgroup: $cgs"
# pprof: each sample's cgroup is a label (Pyroscope and pprof -tagfocus select by it).
hwpmc report --pprof "$tmp/cg.pb.gz" "$tmp/cg.pmclog" 2> /dev/null
hwpmc report --json --inline "$tmp/cg.pmclog" > "$tmp/cg-inl.json" 2> /dev/null
export_check "cgroup marks pprof" "$tmp/cg-inl.json" --pprof "$tmp/cg.pb.gz"
hwpmc report --cgroup a.slice "$tmp/cg.pmclog" > /dev/null 2> "$tmp/cg.err"
rc=$?
[[ $rc != 0 ]] && grep -q "is not a cgroup path" "$tmp/cg.err" && ok "--cgroup: a relative path is refused, said why" ||
	bad "--cgroup a.slice: $(cat "$tmp/cg.err")"

# Weights (pmclog-format.md 11.13): a budget's rate marks change cpu-clock's frequency
# (and a marked-less event's, as an earlier hwpmcd wrote them); every output counts a
# sample by its period, in samples of the first; task-clock's fixed period counts.
python3 "$mk" rates "$corpus" "$tmp/rates.pmclog" > "$tmp/rates.want"
hwpmc report --json --limit 0 "$tmp/rates.pmclog" > "$tmp/rates.json" 2> /dev/null
self_of() { field "$tmp/rates.json" "' '.join('%s %d' % (f, t) for e in j['events'] if e['event'] == '$1' for f in ('c_leaf', 'c_inner', 'c_middle') for t in [next(x['self'] for x in e['top'] if x['function'] == f)])"; }
want_w=$(sed -n 's/^weighted //p' "$tmp/rates.want") want_c=$(sed -n 's/^counted //p' "$tmp/rates.want")
got="$(self_of cpu-clock) / $(self_of cycles) / $(self_of task-clock)"
[[ $got == "$want_w / $want_w / $want_c" ]] &&
	ok "weights: self counts by period (cpu-clock and an unmarked event follow the rate marks, task-clock's period does not): $got" ||
	bad "weights: got $got, want $want_w / $want_w / $want_c"
got=$(field "$tmp/rates.json" "[(e['event'], e['samples'], e['sampled'], e['sampling']['weighted']) for e in j['events']]")
[[ $got == "[('cpu-clock', 700, 300, True), ('task-clock', 300, 300, False), ('cycles', 700, 300, True)]" ]] &&
	ok "weights: JSON samples weighted, sampled counted" || bad "weights: JSON events: $got"
hwpmc report --top "$tmp/rates.pmclog" 2> /dev/null | grep "^# cpu-clock: 300 samples taken at 25 Hz to 100 Hz, counted by their period: 700 samples at 100 Hz$" > /dev/null &&
	ok "weights: the header says the samples were weighted, and from which rates" ||
	bad "weights: header: $(hwpmc report --top "$tmp/rates.pmclog" 2>&1 | grep -m2 'cpu-clock')"
hwpmc report --folded --event cpu-clock "$tmp/rates.pmclog" > "$tmp/rates.folded" 2> /dev/null
got=$(awk '{ n += $NF } END { print n }' "$tmp/rates.folded")
[[ $got == 700 ]] && ok "weights: --folded sums to the weighted 700" || bad "weights: --folded sums to $got: $(cat "$tmp/rates.folded")"
hwpmc report --json --limit 0 --event cpu-clock "$tmp/rates.pmclog" > "$tmp/rates-clock.json" 2> /dev/null
hwpmc report --event cpu-clock --pprof "$tmp/rates.pb.gz" --calltree "$tmp/rates.cg" \
	--gprof "$tmp/rates.gmon" "$tmp/rates.pmclog" 2> "$tmp/rates.said"
hwpmc report --json --inline --limit 0 --event cpu-clock "$tmp/rates.pmclog" > "$tmp/rates-inl.json" 2> /dev/null
export_check "weights" "$tmp/rates-clock.json" --calltree "$tmp/rates.cg" --gprof "$tmp/rates.said" \
	--json "$tmp/rates-inl.json" --pprof "$tmp/rates.pb.gz"
# --callers/--callees of a name no sample has: a close name, or one that contains it.
got=$(hwpmc report --callers c_lef --event cpu-clock "$tmp/rates.pmclog" 2> /dev/null | tail -1)
[[ $got == "@ cpu-clock: no sample has 'c_lef' in its chain; did you mean 'c_leaf'?" ]] &&
	ok "--callers: a typo gets the close name" || bad "--callers c_lef: $got"
got=$(hwpmc report --callees orpu --event cpu-clock "$tmp/rates.pmclog" 2> /dev/null | tail -1)
[[ $got == "@ cpu-clock: no sample has 'orpu' in its chain" ]] && ok "--callees: no name is made up for a word far from all" ||
	bad "--callees orpu: $got"
got=$(hwpmc report --callers middl --event cpu-clock "$tmp/rates.pmclog" 2> /dev/null | tail -1)
[[ $got == "@ cpu-clock: no sample has 'middl' in its chain; 'c_middle' contains it (the most sampled function that does)" ]] &&
	ok "--callers: part of a name gets the function that contains it" || bad "--callers middl: $got"

# JIT maps (perf-PID.map, --jit-maps): a process with no image, sampled in JIT code.
mkdir -p "$tmp/jit/maps" "$tmp/jit/fifo"
python3 "$mk" jit "$tmp/jit/maps" "$tmp/jit/j.pmclog" > /dev/null
jit_json() { hwpmc report --json --limit 0 "$@" > "$tmp/jit/out.json" 2> "$tmp/jit/err" &&
	field "$tmp/jit/out.json" "sorted((t['function'], t['image'], t['self'], t['total']) for t in j['events'][0]['top']), j['header']['pcs_jit'], j['header']['pcs_unknown']"; }
want="[('JS:*hotLoop /srv/app.js:10:3', '[jit]', 30, 30), ('LazyCompile:~handle request /srv/app.js:42', '[jit]', 30, 60), ('[unknown]', '[unknown]', 10, 10)] 90 10"
got=$(jit_json --jit-maps "$tmp/jit/maps" "$tmp/jit/j.pmclog")
[[ $got == "$want" ]] && ok "--jit-maps: JIT PCs named by perf-PID.map (a name with spaces; a malformed and a cut-off line skipped)" ||
	bad "--jit-maps: $got"
hwpmc report -v --jit-maps "$tmp/jit/maps" "$tmp/jit/j.pmclog" 2> /dev/null | grep "^# JIT: 90 PCs named by 1 perf-PID.map files .*, 2 malformed lines skipped" > /dev/null &&
	hwpmc report --jit-maps "$tmp/jit/maps" "$tmp/jit/j.pmclog" 2> /dev/null | unwrap | grep "^# JIT: 90 PCs named by 1 perf-PID.map files (.*), 2 malformed lines skipped$" > /dev/null &&
	ok "--jit-maps: the header counts the named PCs and the skipped lines (and -v)" ||
	bad "--jit-maps: header: $(hwpmc report --jit-maps "$tmp/jit/maps" "$tmp/jit/j.pmclog" 2>&1 | grep JIT)"
cp -r "$tmp/jit/maps" "$tmp/jit/j.pmclog.jit"
got=$(jit_json "$tmp/jit/j.pmclog")
[[ $got == "$want" ]] && ok "JIT maps: LOG.jit/ beside the log is read by default" || bad "LOG.jit default: $got"
rm -rf "$tmp/jit/j.pmclog.jit"
mkfifo "$tmp/jit/fifo/perf-4242.map"
got=$(timeout 30 "$hwpmc_bin" report --json --jit-maps "$tmp/jit/fifo" "$tmp/jit/j.pmclog" 2> /dev/null |
	python3 -c "import json,sys; j=json.load(sys.stdin); print(j['header']['pcs_jit'], j['header']['pcs_unknown'])")
[[ $got == "0 100" ]] && ok "JIT maps: a FIFO named perf-PID.map is never opened (all 100 PCs [unknown])" ||
	bad "JIT map FIFO: '$got'"
if [[ $(id -u) == 0 ]]; then
	chown 65534 "$tmp/jit/maps/perf-4242.map"
	got=$(jit_json --jit-maps "$tmp/jit/maps" "$tmp/jit/j.pmclog")
	[[ ${got##*] } == "0 100" ]] && grep -q "not owned by you or root: ignored" "$tmp/jit/err" &&
		ok "JIT maps: a map owned by another user is ignored, and said (as perf)" ||
		bad "JIT map of another user: $got; $(head -2 "$tmp/jit/err")"
	chown 0 "$tmp/jit/maps/perf-4242.map"
fi
# Code space a JIT reused: perf-PID.map.times says when each line appeared, and a
# sample is named by the entry current at its time (without the times, by the last).
mkdir -p "$tmp/jitr"
python3 "$mk" jitreuse "$tmp/jitr" "$tmp/jitr/r.pmclog" > "$tmp/jitr/want"
jitr() { hwpmc report --json --limit 0 --jit-maps "$tmp/jitr" "$tmp/jitr/r.pmclog" 2> /dev/null |
	python3 -c 'import json,sys; t={x["function"]: x["self"] for x in json.load(sys.stdin)["events"][0]["top"]}; print("old %s new %s other %s" % (t.get("JS:oldFn /srv/a.js:1", 0), t.get("JS:newFn /srv/b.js:2", 0), t.get("JS:other /srv/a.js:9", 0)))'; }
got=$(jitr)
[[ $got == "$(cat "$tmp/jitr/want")" ]] &&
	hwpmc report -v --top --jit-maps "$tmp/jitr" "$tmp/jitr/r.pmclog" 2> /dev/null | grep "^# JIT: .* 1 with the times of their lines (perf-PID.map.times), 55 PCs of reused code" > /dev/null &&
	ok "JIT code space reused: each sample named by the entry of its time ($got)" ||
	bad "JIT reused: got '$got', want '$(cat "$tmp/jitr/want")'"
mv "$tmp/jitr/perf-4243.map.times" "$tmp/jitr/times.away"
got=$(jitr)
[[ $got == "old 0 new 55 other 7" ]] && ok "JIT map without times: the last entry names an address ($got)" ||
	bad "JIT map without times: $got"
printf '1\n' > "$tmp/jitr/perf-4243.map.times"
got=$(jitr)
[[ $got == "old 0 new 55 other 7" ]] && ok "JIT times not line for line with the map: ignored ($got)" ||
	bad "JIT times of another map: $got"

# 2. Hostile content in valid records.
mkfifo "$tmp/fifo"
python3 "$mk" hostile "$corpus" "$tmp/fifo" "$tmp/hostile.pmclog" > "$tmp/hostile.want"
want() { sed -n "s/^$1 //p" "$tmp/hostile.want"; }
hwpmc report --json --min-percent 0 "$tmp/hostile.pmclog" > "$tmp/hostile.json" 2> "$tmp/err"; rc=$?
[[ $rc == 0 ]] && ok "hostile: report exit 0" || bad "hostile: exit $rc: $(head -3 "$tmp/err")"
got=$(field "$tmp/hostile.json" "j['header']['samples'], j['header']['reported']")
[[ "$got" == "$(want samples) $(( $(want samples) - $(want unannounced) ))" ]] &&
	ok "hostile: every sample counted ($got)" || bad "hostile: samples/reported '$got'"
got=$(field "$tmp/hostile.json" "[t['self'] for t in j['events'][0]['top'] if t['function'].startswith('libgone.so+0x')].__len__()")
[[ "$got" == 50 ]] && ok "hostile: PCs in a missing image print as image+0xoffset (50 distinct)" ||
	bad "hostile: $got image+0x entries for the missing image"
got=$(field "$tmp/hostile.json" "sum(t['self'] for t in j['events'][0]['top'] if t['function'] == '[unknown]')")
[[ "$got" == 50 ]] && ok "hostile: PCs in no mapping are [unknown] (50)" ||
	bad "hostile: [unknown] self is $got"
got=$(field "$tmp/hostile.json" "j['header']['pcs_unknown']")
# 50 leaves + 50 second PCs + 3 x 507 deep PCs = 1621
[[ "$got" == 1621 ]] && ok "hostile: 1621 PCs counted in no mapping" || bad "hostile: pcs_unknown $got"
got=$(field "$tmp/hostile.json" "sum(t['self'] for t in j['events'][0]['top'] if t['function'] == 'fifo+0x100')")
[[ "$got" == 10 ]] && ok "hostile: a FIFO named as an image is not opened for reading, its PCs are fifo+0x100" ||
	bad "hostile: fifo+0x100 self $got"
got=$(field "$tmp/hostile.json" "sum(t['self'] for t in j['events'][0]['top'] if t['function'].startswith('[kernel]+0x'))")
[[ "$got" == 7 ]] && ok "hostile: kernel PCs without kernel symbols are [kernel]+0xaddress" ||
	bad "hostile: [kernel]+0x self $got"
grep -q "another boot" <(hwpmc report "$tmp/hostile.pmclog" 2>&1) && ok "hostile: /proc/kallsyms of another boot is refused, and said" ||
	bad "hostile: no note on /proc/kallsyms"
got=$(field "$tmp/hostile.json" "sum(t['self'] for t in j['events'][0]['top'] if t['function'] == 'c_leaf')")
[[ "$got" == $(( $(want good) + $(want deep) )) ]] &&
	ok "hostile: the good chains still resolve (c_leaf $got)" || bad "hostile: c_leaf self $got"
got=$(field "$tmp/hostile.json" "j['header']['images_unreadable']")
[[ "$got" -ge 4 ]] && ok "hostile: unreadable images counted ($got)" || bad "hostile: images_unreadable $got"
hwpmc report --callgraph --min-percent 0 --depth 0 "$tmp/hostile.pmclog" > "$tmp/hostile.txt" 2>&1
if LC_ALL=C grep -q $'\x1b' "$tmp/hostile.txt"; then bad "hostile: a raw escape byte reached the output"
else ok "hostile: control bytes in names are escaped"; fi
grep -q 'evil\\x1b\[31mname' <(hwpmc report --folded "$tmp/hostile.pmclog") &&
	ok "hostile: the escaped process name leads the folded stacks" || bad "hostile: comm not in folded output"
python3 -c 'import xml.etree.ElementTree as E,sys; E.parse(sys.argv[1])' <(hwpmc report --flame /dev/stdout "$tmp/hostile.pmclog" 2>/dev/null) 2>/dev/null &&
	ok "hostile: the flame graph is valid XML" || bad "hostile: flame graph not XML"

# A device or FIFO named as an image is never opened for reading (opening a
# watchdog device arms it): only O_PATH opens of them may be seen.
if command -v strace > /dev/null; then
	strace -f -e trace=open,openat -o "$tmp/strace" "$hwpmc_bin" report "$tmp/hostile.pmclog" > /dev/null 2>&1
	if grep -E "\"(/dev/zero|$tmp/fifo)\"" "$tmp/strace" | grep -v O_PATH > /dev/null; then
		bad "hostile: a device or FIFO was opened: $(grep -E '/dev/zero|fifo' "$tmp/strace" | grep -v O_PATH | head -2)"
	elif grep -q '"/dev/zero", O_RDONLY|O_CLOEXEC|O_PATH' "$tmp/strace"; then
		ok "hostile: /dev/zero and the FIFO are looked at with O_PATH only, never opened"
	else
		bad "hostile: no O_PATH look at /dev/zero seen: $(grep -c . "$tmp/strace") syscalls traced"
	fi
else
	echo "# strace is not installed: the device-open check is skipped"
fi

# Filter marks (pmclog-format.md 11.10), good and hostile: the header says which
# filter held from when; a repeat is no change, a control byte is shown as '?', a
# length past 4 KiB and a mark cut short by a sample are dropped.
python3 "$mk" filters "$corpus" "$tmp/filt.pmclog" > /dev/null
hwpmc report -v "$tmp/filt.pmclog" > "$tmp/filt.txt" 2> "$tmp/err"; rc=$?
hdr=$(grep "^# filter" "$tmp/filt.txt")
want="# filter (in the kernel, 15 values): 'pid=1' from T, 'a?b' from T, 'uid=0' from T, 'uid=1' from T, 'uid=2' from T, 'uid=3' from T ... 3 more ..., 'uid=7' from T, 'uid=8' from T, 'uid=9' from T, 'uid=10' from T, 'uid=11' from T, 'uid=12' from T"
[[ $rc == 0 && "$(sed 's/from [0-9T:.Z-]*/from T/g' <<< "$hdr")" == "$want" ]] &&
	ok "filter marks, good and hostile (15: the first 6 and the last 6 shown): $hdr" ||
	bad "filter marks: exit $rc, '$hdr': $(head -3 "$tmp/err")"
hwpmc report --json "$tmp/filt.pmclog" > "$tmp/filt.json" 2> "$tmp/err"
got=$(field "$tmp/filt.json" "' '.join(f['filter'] for f in j['header']['filters'])")
[[ $got == "pid=1 a?b uid=0 $(echo uid={1..12})" ]] && ok "filter marks in --json's header, all 15: $got" ||
	bad "filter marks, --json: '$got'"

# 3. Every truncation of a log and corrupted copies: a report, never a crash.
log=$tmp/fbsd.pmclog size=$(stat -c %s "$log") crashes=0 runs=0
for cut in $(python3 -c "import random; r=random.Random(5); print(' '.join(str(x) for x in sorted(set([0,1,15,16,17,111,112,113] + [r.randrange($size) for _ in range(40)]))))"); do
	head -c "$cut" "$log" > "$tmp/cut.pmclog"
	hwpmc report --callgraph "$tmp/cut.pmclog" > /dev/null 2> "$tmp/err"; rc=$?
	runs=$((runs + 1))
	(( rc > 1 )) && { crashes=$((crashes + 1)); echo "# cut at $cut: exit $rc $(head -2 "$tmp/err")"; }
done
[[ $crashes == 0 ]] && ok "truncated logs: $runs cuts, each reported with exit 0 or 1" || bad "truncated: $crashes of $runs crashed"
# What is not a log says so, with exit 1: an empty file, another kind of file, a
# perf.data (by its magic); and with no path the report reads ./hwpmc.pmclog, as
# record writes it by default (perf report's perf.data).
: > "$tmp/zero.pmclog"
cp /etc/passwd "$tmp/text.pmclog"
{ printf 'PERFILE2'; head -c 200 /dev/zero; } > "$tmp/perf.data"
for c in "zero.pmclog:empty (0 bytes): not a pmclog log" \
	"text.pmclog:not a pmclog log: bad magic" "perf.data:a perf.data file, not a pmclog log: 'perf report -i' reads it"; do
	hwpmc report "$tmp/${c%%:*}" > "$tmp/out" 2> "$tmp/err"; rc=$?
	[[ $rc == 1 && ! -s "$tmp/out" ]] && grep -qF "${c#*:}" "$tmp/err" &&
		ok "report of ${c%%:*}: exit 1, '${c#*:}'" || bad "report of ${c%%:*}: exit $rc, '$(head -1 "$tmp/err")'"
done
mkdir "$tmp/cwd"
cp "$log" "$tmp/cwd/hwpmc.pmclog"
(cd "$tmp/cwd" && hwpmc report --json) > "$tmp/dflt.json" 2> "$tmp/err"; rc=$?
hwpmc report --json "$log" > "$tmp/named.json" 2> /dev/null
[[ $rc == 0 ]] && [[ "$(field "$tmp/dflt.json" "j['events']")" == "$(field "$tmp/named.json" "j['events']")" ]] &&
	ok "report with no path reads ./hwpmc.pmclog" || bad "report with no path: exit $rc, '$(head -1 "$tmp/err")'"
rm "$tmp/cwd/hwpmc.pmclog"
(cd "$tmp/cwd" && hwpmc report) > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 2 ]] && grep -q "no hwpmc.pmclog here" "$tmp/err" &&
	ok "report with no path and no ./hwpmc.pmclog: exit 2, said" || bad "no path, no log: exit $rc, '$(head -1 "$tmp/err")'"
head -c $((size - 7)) "$log" > "$tmp/torn.pmclog"
hwpmc report "$tmp/torn.pmclog" > "$tmp/torn.txt" 2>&1
grep -q "torn" "$tmp/torn.txt" && ok "a torn log says so in the header" || bad "torn log not named"
crashes=0
for seed in $(seq 1 30); do
	python3 -c "
import random,sys
d=bytearray(open(sys.argv[1],'rb').read()); r=random.Random(int(sys.argv[3]))
for _ in range(8): d[r.randrange(len(d))]=r.randrange(256)
open(sys.argv[2],'wb').write(d)" "$log" "$tmp/bad.pmclog" "$seed"
	hwpmc report --top --callgraph "$tmp/bad.pmclog" > /dev/null 2> "$tmp/err"; rc=$?
	(( rc > 1 )) && { crashes=$((crashes + 1)); echo "# seed $seed: exit $rc $(head -2 "$tmp/err")"; }
done
[[ $crashes == 0 ]] && ok "corrupted logs: 30 copies with 8 random bytes each, no crash" || bad "corrupted: $crashes crashed"

# 4. Bad arguments: a clear message and exit 2, before the log is read.
check_usage() { # NAME EXPECTED_TEXT ARGS...
	local name=$1 text=$2; shift 2
	hwpmc report "$@" > /dev/null 2> "$tmp/err"; local rc=$?
	[[ $rc == 2 ]] && grep -q -- "$text" "$tmp/err" && ok "usage: $name" ||
		bad "usage: $name: exit $rc, '$(head -2 "$tmp/err")'"
}
check_usage "no file" "no log file" --top
check_usage "standard input with a file" "is read alone" - "$log"
check_usage "bad pid" "'x' is not a process" --pid x "$log"
check_usage "bad cpu range" "is not a CPU or range" --cpu 3-1 "$log"
check_usage "bad depth" "is not a whole number" --depth -1 "$log"
check_usage "until before since" "is before --since" --since 2 --until 1 "$log"
check_usage "folded with top" "writes standard output alone" --folded --top "$log"
check_usage "pprof without a file" "requires an argument" "$log" --pprof
check_usage "calltree without a file" "requires an argument" "$log" --calltree
check_usage "gprof without a directory" "requires an argument" "$log" --gprof
check_usage "kernel and user" "exclude each other" --kernel --user "$log"
check_usage "gprof with inline" "drop --inline" --inline --gprof "$tmp/g" "$log"
check_usage "bad map rule" "is not auto, freebsd or hwpmcd-1" --map-rule x "$log"
hwpmc report /nonexistent.pmclog > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 1 ]] && grep -q "No such file" "$tmp/err" && ok "a missing log: exit 1 with the reason" || bad "missing log: exit $rc"
hwpmc report --help > "$tmp/help.txt"
grep -q -- "--callgraph" "$tmp/help.txt" && ok "--help lists the outputs" || bad "--help"
hwpmc report - < "$tmp/fbsd.pmclog" > "$tmp/stdin.txt"
grep -q "c_leaf" "$tmp/stdin.txt" && ok "'-' reads standard input" || bad "stdin"

# Hostile process models (issue 13, item 8): 5,000 MAP_INs then 5,000 PROCFORKs (the
# children share their parent's range tree: the copying model took 804 MB and 161 s),
# and 80,000 MAP_INs in one process in descending order, cut by MAP_OUTs (linear
# cuts took 19 s).  Judged by what the report says and, for the forks, by its peak
# memory (without valgrind), not by time.
python3 "$mk" forks "$corpus" "$tmp/forks.pmclog" > /dev/null
if [[ -z "${HWPMC_VALGRIND:-}" ]]; then
	/usr/bin/time -f '%M' -o "$tmp/forks.rss" "$hwpmc_bin" report --json "$tmp/forks.pmclog" > "$tmp/forks.json" 2> "$tmp/err"
	rss=$(tail -1 "$tmp/forks.rss")
	(( rss < 100000 )) && ok "5,000 forks of a process with 5,000 MAP_INs: peak RSS $((rss / 1024)) MB (bound 100)" ||
		bad "5,000 forks: peak RSS $((rss / 1024)) MB"
else
	hwpmc report --json "$tmp/forks.pmclog" > "$tmp/forks.json" 2> "$tmp/err"
fi
got=$(field "$tmp/forks.json" "[t['self'] for t in j['events'][0]['top'] if t['function'] == 'c_leaf'], j['header']['pcs_unknown']")
[[ $got == "[5000] 0" ]] && ok "5,000 forks: every child's sample resolves through the shared ranges ($got)" ||
	bad "5,000 forks: c_leaf self and unknown PCs: $got; $(head -3 "$tmp/err")"
python3 "$mk" manymaps "$corpus" "$tmp/many.pmclog" > "$tmp/many.want"
hwpmc report --json "$tmp/many.pmclog" > "$tmp/many.json" 2> "$tmp/err"
want="[$(sed -n 's/^resolved //p' "$tmp/many.want")] $(sed -n 's/^unknown_pcs //p' "$tmp/many.want")"
got=$(field "$tmp/many.json" "[t['self'] for t in j['events'][0]['top'] if t['function'] == 'c_leaf'], j['header']['pcs_unknown']")
[[ $got == "$want" ]] && ok "80,000 MAP_INs in descending order, every other one cut: kept resolve, cut do not ($got)" ||
	bad "80,000 MAP_INs: got $got, want $want; $(head -3 "$tmp/err")"

# Samples alike (the same PCs) are resolved once per run of samples: a MAP_IN or a
# MAP_OUT between them changes what they resolve to.
python3 "$mk" remap "$corpus" "$tmp/remap.pmclog" > "$tmp/remap.want"
hwpmc report --json "$tmp/remap.pmclog" > "$tmp/remap.json" 2> "$tmp/err"
want="$(sed -n 's/^samples //p' "$tmp/remap.want") [$(sed -n 's/^resolved //p' "$tmp/remap.want")] $(sed -n 's/^unknown_pcs //p' "$tmp/remap.want")"
got=$(field "$tmp/remap.json" "j['events'][0]['samples'], [t['self'] for t in j['events'][0]['top'] if t['function'] == 'c_leaf'], j['header']['pcs_unknown']")
[[ $got == "$want" ]] && ok "one chain in no mapping, mapped, unmapped: resolved by the mappings of its time ($got)" ||
	bad "remapped chain: got $got, want $want; $(head -3 "$tmp/err")"
# Beyond 5% of samples with an [unknown] frame the report says why that may be (frame
# pointers, JIT code) and what to do, on stderr and in the header; the JSON counts them.
nunk=$(( $(sed -n 's/^samples //p' "$tmp/remap.want") - $(sed -n 's/^resolved //p' "$tmp/remap.want") ))
got=$(field "$tmp/remap.json" "j['header']['samples_unknown']")
hwpmc report --top "$tmp/remap.pmclog" > "$tmp/remap.top" 2> /dev/null
[[ $got == "$nunk" ]] && grep "^hwpmc: warning: .*remap.pmclog: 66.7% of the samples have an \[unknown\] frame; frame-pointer chains .*record with -g (--call-graph dwarf).*--jit-maps" "$tmp/err" > /dev/null &&
	grep "^# warning: 66.7% of the samples have an \[unknown\] frame: frame-pointer chains" "$tmp/remap.top" > /dev/null &&
	ok "[unknown] frames in 66.7% of the samples: said with the advice to use -g, on stderr and in the header; JSON samples_unknown $got" ||
	bad "[unknown] warning: samples_unknown $got (want $nunk), stderr: $(head -2 "$tmp/err"), header: $(grep -m1 warning "$tmp/remap.top")"

# --gprof: two images of one base name get NAME.gmon and NAME.2.gmon, each its own
# samples (gprof reads them: self samples as "seconds" at 1/s).
mkdir -p "$tmp/copy"
cp "$corpus" "$tmp/copy/"
python3 "$mk" twoimages "$corpus" "$tmp/copy/$(basename "$corpus")" "$tmp/two.pmclog" > /dev/null
hwpmc report --gprof "$tmp/two.gmon" "$tmp/two.pmclog" > /dev/null 2> "$tmp/two.said"
b=$(basename "$corpus")
if grep -q "^hwpmc: gprof $corpus $tmp/two.gmon/$b.gmon\$" "$tmp/two.said" &&
	grep -q "^hwpmc: gprof $tmp/copy/$b $tmp/two.gmon/$b.2.gmon\$" "$tmp/two.said"; then
	ok "--gprof: two images named $b: $b.gmon and $b.2.gmon"
else
	bad "--gprof of two images of one name: $(cat "$tmp/two.said")"
fi
if command -v gprof > /dev/null; then
	g1=$(gprof -b -p "$corpus" "$tmp/two.gmon/$b.gmon" 2> /dev/null | awk '$NF == "c_leaf" {print $2}')
	g2=$(gprof -b -p "$tmp/copy/$b" "$tmp/two.gmon/$b.2.gmon" 2> /dev/null | awk '$NF == "c_leaf" {print $2}')
	[[ $g1 == 30.00 && $g2 == 20.00 ]] && ok "gprof reads each: c_leaf $g1 and $g2 samples" ||
		bad "gprof: c_leaf '$g1' and '$g2' (want 30.00 and 20.00)"
fi

# The huge-page heap changes where memory comes from, not what is reported.
HWPMC_HUGEPAGES=0 hwpmc report --json "$tmp/remap.pmclog" > "$tmp/remap-nohp.json" 2> "$tmp/err"
cmp -s "$tmp/remap.json" "$tmp/remap-nohp.json" && ok "HWPMC_HUGEPAGES=0: the same report" ||
	bad "HWPMC_HUGEPAGES=0 changed the report: $(diff "$tmp/remap.json" "$tmp/remap-nohp.json" | head -3)"

# --confine (hwpmcd's pushes): no privilege but reading files, taken before any
# input is read.  The report waits on a FIFO the test holds open (no data yet),
# so its credentials are looked at while it runs, whatever the machine's speed:
# once it is blocked in read(2) of its standard input (/proc/PID/syscall), it has
# confined itself.
# confined_status WRAPPER...: the report's Uid, CapPrm, CapEff, CapInh, CapAmb,
# Groups, NoNewPrivs and Seccomp (2: a filter, tools-confine.c) once it reads fd 0
# (or after 30 s); its output in $tmp/conf.out.
confined_status() {
	local p st='' i
	rm -f "$tmp/conf.fifo"
	mkfifo "$tmp/conf.fifo"
	exec 3<> "$tmp/conf.fifo"
	"$@" "$hwpmc_bin" report --confine --top - < "$tmp/conf.fifo" > "$tmp/conf.out" 2>&1 &
	p=$!
	for ((i = 0; i < 600; i++)); do
		# "0 0x0 ...": read(2) (x86-64 call 0) of fd 0
		if [[ $(readlink "/proc/$p/exe") == *hwpmc && $(cut -d' ' -f1,2 "/proc/$p/syscall" 2> /dev/null) == "0 0x0" ]]; then
			st=$(cat "/proc/$p/status" 2> /dev/null)
			break
		fi
		sleep 0.05
	done
	cat "$tmp/priv/c.pmclog" >&3
	exec 3>&-
	wait "$p"
	awk '/^(Uid|Gid|CapPrm|CapEff|CapInh|CapAmb|NoNewPrivs|Seccomp):/ {printf "%s %s ", $1, $2} /^Groups:/ {printf "Groups:%s ", $2}' <<< "$st"
}
mkdir -m 700 "$tmp/priv"
cp "$tmp/hostile.pmclog" "$tmp/priv/c.pmclog" # it has kernel PCs
printf 'ffffffff81000000 T _stext\n' > "$tmp/priv/c.pmclog.kallsyms"
chmod 600 "$tmp/priv/c.pmclog" "$tmp/priv/c.pmclog.kallsyms"
hwpmc report --top "$tmp/priv/c.pmclog" > "$tmp/conf-free.txt" 2> "$tmp/conf-free.err"
hwpmc report --confine --top "$tmp/priv/c.pmclog" > "$tmp/conf-file.txt" 2> "$tmp/conf-file.err"; rc=$?
[[ $rc == 0 ]] && cmp -s "$tmp/conf-free.txt" "$tmp/conf-file.txt" &&
	ok "--confine: the same report of a log in a directory only its owner enters (with its FILE.kallsyms)" ||
	bad "--confine: exit $rc, another report: $(diff "$tmp/conf-free.txt" "$tmp/conf-file.txt" | head -4; head -3 "$tmp/conf-file.err")"
# Its filter refuses opening a file for writing: file outputs name a descriptor.
hwpmc report --confine --pprof "$tmp/conf.pb.gz" "$tmp/priv/c.pmclog" > /dev/null 2> "$tmp/conf-out.err"; rc=$?
[[ $rc == 2 && ! -e $tmp/conf.pb.gz ]] && grep -q "confine writes no file (--pprof .*name a descriptor" "$tmp/conf-out.err" &&
	ok "--confine --pprof FILE: refused before reading, saying to name a descriptor" ||
	bad "--confine --pprof FILE: exit $rc: $(head -2 "$tmp/conf-out.err")"
hwpmc report --confine --gprof "$tmp/conf-gmon" "$tmp/priv/c.pmclog" > /dev/null 2> "$tmp/conf-out.err"; rc=$?
[[ $rc == 2 && ! -e $tmp/conf-gmon ]] && grep -q "gprof writes a directory" "$tmp/conf-out.err" &&
	ok "--confine --gprof DIR: refused" || bad "--confine --gprof DIR: exit $rc: $(head -2 "$tmp/conf-out.err")"
# --broker-fd (hwpmcd's push) goes with --confine, and names a SOCK_SEQPACKET socket.
hwpmc report --broker-fd 0 --top "$tmp/priv/c.pmclog" < /dev/null > /dev/null 2> "$tmp/conf-out.err"; rc=$?
[[ $rc == 2 ]] && grep -q "broker-fd goes with --confine" "$tmp/conf-out.err" &&
	ok "--broker-fd without --confine: refused" || bad "--broker-fd without --confine: exit $rc: $(head -2 "$tmp/conf-out.err")"
hwpmc report --confine --broker-fd 0 --top "$tmp/priv/c.pmclog" < /dev/null > /dev/null 2> "$tmp/conf-out.err"; rc=$?
[[ $rc == 2 ]] && grep -q "broker-fd 0: not a SOCK_SEQPACKET socket" "$tmp/conf-out.err" &&
	ok "--confine --broker-fd on a file: refused before confining" ||
	bad "--confine --broker-fd on a file: exit $rc: $(head -2 "$tmp/conf-out.err")"
hwpmc report --pprof "$tmp/conf-free.pb.gz" "$tmp/priv/c.pmclog" 2> /dev/null
hwpmc report --confine --pprof /dev/stdout "$tmp/priv/c.pmclog" > "$tmp/conf.pb.gz" 2> "$tmp/conf-out.err"; rc=$?
[[ $rc == 0 ]] && cmp -s "$tmp/conf.pb.gz" "$tmp/conf-free.pb.gz" &&
	ok "--confine --pprof /dev/stdout: the same profile as without --confine" ||
	bad "--confine --pprof /dev/stdout: exit $rc: $(head -2 "$tmp/conf-out.err")"
got=$(confined_status)
if [[ $(id -u) == 0 ]]; then
	[[ $got == "Uid: 65534 Gid: 65534 Groups: CapInh: 0000000000000000 CapPrm: 0000000000000004 CapEff: 0000000000000004 CapAmb: 0000000000000000 NoNewPrivs: 1 Seccomp: 2 " ]] &&
		ok "--confine as root: user nobody, only CAP_DAC_READ_SEARCH, no new privileges, a seccomp filter" ||
		bad "--confine as root: $got"
	grep -q "reported" "$tmp/conf.out" && ok "--confine as root: the report of standard input" ||
		bad "--confine as root: $(head -3 "$tmp/conf.out")"
	# hwpmcd.service's SystemCallFilter= refuses seccomp(2) (EPERM): libseccomp then
	# installs the filter with prctl(2), which it allows.
	got=$(NO_BPF_NR=317 NO_BPF_ERRNO=EPERM confined_status "$build/tests/no-bpf")
	[[ $got == *"NoNewPrivs: 1 Seccomp: 2 " ]] &&
		ok "--confine where seccomp(2) is refused, as under hwpmcd.service: a filter all the same" ||
		bad "--confine where seccomp(2) is refused: $got; $(head -3 "$tmp/conf.out")"
	if command -v setpriv > /dev/null; then
		# As under hwpmcd.service: no CAP_SETUID/CAP_SETGID to become nobody with.
		got=$(confined_status setpriv --bounding-set -setuid,-setgid)
		[[ $got == "Uid: 0 Gid: 0 Groups: CapInh: 0000000000000000 CapPrm: 0000000000000004 CapEff: 0000000000000004 CapAmb: 0000000000000000 NoNewPrivs: 1 Seccomp: 2 " ]] &&
			ok "--confine without CAP_SETUID (the service's sandbox): uid 0 with only CAP_DAC_READ_SEARCH, a seccomp filter" ||
			bad "--confine without CAP_SETUID: $got"
	fi
else
	[[ $got == *"CapEff: 0000000000000000 "*"NoNewPrivs: 1 Seccomp: 2 " ]] &&
		ok "--confine as a user: no capability, no new privileges, a seccomp filter" ||
		bad "--confine as a user: $got"
fi

# Every string a log controls is escaped on output (issue 32, finding 9): the
# INITIALIZE cpuid and the names of a directory's files reach the terminal
# escaped, as function and process names do.
mkdir "$tmp/esc"
python3 - "$mk" "$corpus" "$tmp/esc" << 'EOF2'
import os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import mkpmclog as m
corpus, d = sys.argv[2], sys.argv[3]
m.freebsd(corpus, d + "/plain.pmclog")
data = open(d + "/plain.pmclog", "rb").read()
init = m.initialize(0x8B)
hostile = m.initialize(0x8B, cpuid=b"\x1b]0;pwned\x07\x1b[2J")
assert data.startswith(init)
open(d + "/b\x1b[31mred\x07.pmclog", "wb").write(hostile + data[len(init):])
EOF2
rm -f "$tmp/esc/plain.pmclog"
cp "$tmp/esc/"*.pmclog "$tmp/esc-one.pmclog"
for args in "$tmp/esc" "--json $tmp/esc" "-v $tmp/esc-one.pmclog" "-v --top $tmp/esc-one.pmclog" "dump $tmp/esc-one.pmclog"; do
	set -- $args
	if [[ $1 == dump ]]; then shift; hwpmc dump "$@" > "$tmp/esc.out" 2>&1
	else hwpmc report "$@" > "$tmp/esc.out" 2>&1; fi
	if grep -q $'[\x01-\x08\x0b-\x1f\x7f]' "$tmp/esc.out"; then
		bad "control bytes of a log reach the terminal (${args%% *}): $(grep -a $'[\x1b\x07]' "$tmp/esc.out" | head -2 | cat -v)"
	elif ! grep -q 'x1b' "$tmp/esc.out"; then
		bad "the hostile strings are not shown at all (${args%% *}): $(head -3 "$tmp/esc.out")"
	else
		ok "a log's cpuid and file names are printed escaped (${args%% *} ${2:+...})"
	fi
done

# The header fits 100 columns (the details are -v's), whatever the log: budget rates,
# filters, cgroups, hostile names; its lines wrap at a comma or blank, a longer word
# (a path) is not cut.
wide=
for l in rates filt cg fbsd; do
	hwpmc report --top --limit 3 "$tmp/$l.pmclog" 2> /dev/null |
		awk -v l=$l '/^$/ { exit } length($0) > 100 && index(substr($0, 5), " ") { print l ": " $0 }' >> "$tmp/wide"
done
[[ ! -s "$tmp/wide" ]] && ok "the header's lines fit 100 columns (4 logs)" || bad "header lines over 100 columns: $(head -3 "$tmp/wide")"
hwpmc report -v --top --limit 3 "$tmp/rates.pmclog" 2> /dev/null | grep "^# rate (set by the profile's CPU budget, 3 values): 100 Hz from .*, 25 Hz from .*, 50 Hz from .*Z$" > /dev/null &&
	ok "-v: the header's lines whole" || bad "-v: $(hwpmc report -v "$tmp/rates.pmclog" 2>&1 | grep '# rate')"

# On a terminal (a pty made by script(1)): a name longer than its column is cut with
# "..." so that the image column stays; the top list and its header fit the
# terminal's height (one row left for the prompt).  Two images of one base name are
# told apart by their paths, on a terminal or not.
python3 "$mk" twoimages "$corpus" "$tmp/copy/$(basename "$corpus")" "$tmp/two2.pmclog" > /dev/null
got=$(hwpmc report --top "$tmp/two2.pmclog" 2> /dev/null | awk '$4 == "c_leaf" { print $5 }' | sort | tr '\n' ' ')
[[ $got == "$corpus $tmp/copy/$(basename "$corpus") " || $got == "$tmp/copy/$(basename "$corpus") $corpus " ]] &&
	ok "two images of one base name are printed by their paths" || bad "two images of one name: '$got'"
if command -v script > /dev/null && [[ -n "${libstdcxx:-}" ]]; then
	tty_report() { # ROWS COLS ARGS...: the report on a pty of that size, as a user sees it
		local rows=$1 cols=$2
		shift 2
		script -qec "stty rows $rows cols $cols; $(printf '%q ' "$hwpmc_bin" report "$@")" /dev/null | tr -d '\r'
	}
	got=$(tty_report 24 80 --top "$tmp/cxx.pmclog" | tail -1)
	[[ $got =~ ^" 100.00  100.00        100  std::runtime_error::runtime_er...  libstdc++.so.6"$ ]] &&
		ok "terminal: a long name is cut with '...', the image stays in its column" || bad "terminal: '$got'"
	mkdir -p "$tmp/im"
	for i in 1 2 3 4; do cp "$corpus" "$tmp/im/p$i"; done
	python3 "$mk" images "$tmp/im/log.pmclog" "$tmp/im/p1" "$tmp/im/p2" "$tmp/im/p3" "$tmp/im/p4" > /dev/null
	imgs4=$tmp/im/log.pmclog # 20 functions
	for rows in 18 24 40; do
		tty_report "$rows" 80 --top "$imgs4" > "$tmp/tty.out"
		used=$(awk '{ n += int((length($0) + 79) / 80) + (length($0) == 0) } END { print n }' "$tmp/tty.out")
		more=$(grep -c '^# \.\.\. [0-9]* more functions' "$tmp/tty.out")
		((used <= rows - 1 && (more == 1 || rows == 40))) && ok "terminal of $rows rows: the top list fits with its header ($used rows)" ||
			bad "terminal of $rows rows: $used rows used: $(head -3 "$tmp/tty.out")"
	done
else
	echo "# script(1) or libstdc++ missing: the terminal checks are not run"
fi

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
