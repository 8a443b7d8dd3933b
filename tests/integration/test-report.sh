#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Golden reports of recorded logs, as a user makes them: the real hwpmcd on a
# temporary socket, `hwpmc record` of known workloads (the corpus chain without
# frame pointers, -g; C++; a kernel-heavy dd), then `hwpmc report` in every
# output: the hottest function and its caller chain must be right in --top,
# --callgraph, --folded (counts sum to the samples) and --json; every filter
# must select exactly the samples it names (counted independently from
# `hwpmc dump --json`); symbols must come from --symfs, from a debug file found
# by build id, and from the kernel symbols saved beside the log.
# Needs root (perf_event_open): 77 otherwise.
# usage: test-report.sh BUILD_DIR SRC_DIR   (HWPMC_WRAPPER="valgrind ..." wraps the report)
set -uo pipefail
build=$1 src=$2
hwpmcd=$build/src/daemon/hwpmcd hwpmc_bin=$build/src/tools/hwpmc
corpus=$build/tests/workloads/corpus
. "$src/tests/integration/harness.sh"
harness_init "perf_event_open of a command"
report() { ${HWPMC_WRAPPER:-} "$hwpmc_bin" report "$@"; }
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }

NOTIFY_SOCKET= "$hwpmcd" --socket "$sock" --state-dir "$tmp/state" --foreground 2> "$tmp/daemon.log" &
dpid=$!
for _ in $(seq 200); do [[ -S "$sock" ]] && break; sleep 0.05; done
[[ -S "$sock" ]] && ok "daemon listening" || { bad "no control socket"; cat "$tmp/daemon.log"; exit 1; }

rec() { # rec LOG ARGS... -- CMD
	local log=$1; shift
	"$hwpmc_bin" record -o "$log" "$@" > /dev/null 2> "$log.rec" ||
		{ bad "record $*: $(tail -3 "$log.rec")"; return 1; }
}

# 1. The corpus chain, no frame pointers, dwarf unwinding.
chain=$tmp/chain.pmclog
rec "$chain" -g -F 999 -- "$corpus/hwpmc-corpus-pie" chain 1.5
"$hwpmc_bin" dump --json "$chain" > "$tmp/chain.dump"
comm=hwpmc-corpus-pi # 15 bytes of comm

report --top --limit 0 --comm $comm "$chain" > "$tmp/top.txt" 2> "$tmp/err"
first=$(grep -v '^#' "$tmp/top.txt" | awk 'NF >= 5 { print $4, $1; exit }')
[[ ${first% *} == c_leaf ]] && awk -v p="${first#* }" 'BEGIN { exit !(p >= 90) }' &&
	ok "--top: the hottest function is c_leaf ($first%)" || bad "--top: first row '$first'"
for f in c_inner c_middle c_outer main; do
	t=$(grep -v '^#' "$tmp/top.txt" | awk -v f=$f '$4 == f { print $2; exit }')
	awk -v p="${t:-0}" 'BEGIN { exit !(p >= 95) }' && ok "--top: $f total $t%" || bad "--top: $f total '${t:-none}'"
done
[[ ! -s "$tmp/err" ]] && ok "--top: nothing on stderr" || bad "--top stderr: $(head -2 "$tmp/err")"

report --callgraph --comm $comm "$chain" > "$tmp/graph.txt"
got=$(sed -n '/^@ /,$p' "$tmp/graph.txt" | grep -v '^@\|^$' | head -5 | awk '{ print $3 }' | tr '\n' ' ')
[[ "$got" == "c_leaf c_inner c_middle c_outer main " ]] &&
	ok "--callgraph: c_leaf, callers c_inner < c_middle < c_outer < main" || bad "--callgraph: '$got'"
lead=$(sed -n '/^@ /,$p' "$tmp/graph.txt" | grep -v '^@\|^$' | sed -n 2p | sed 's/[^ ].*//' | wc -c)
[[ $lead -gt 1 ]] && ok "--callgraph: callers are indented" || bad "--callgraph: no indentation"

# The default call graph of a command is dwarf (bench/callgraph-default-bench.sh): the
# same chain recorded with no -g is complete, and no warning about [unknown] frames.
rec "$tmp/dflt.pmclog" -F 999 -- "$corpus/hwpmc-corpus-pie" chain 1
report --callgraph --comm $comm "$tmp/dflt.pmclog" > "$tmp/dflt.txt" 2> "$tmp/dflt.err"
got=$(sed -n '/^@ /,$p' "$tmp/dflt.txt" | grep -v '^@\|^$' | head -5 | awk '{ print $3 }' | tr '\n' ' ')
[[ "$got" == "c_leaf c_inner c_middle c_outer main " ]] && ! grep "warning.*\[unknown\] frame" "$tmp/dflt.err" "$tmp/dflt.txt" > /dev/null &&
	ok "record with no -g: a command's stacks are unwound (dwarf): c_leaf < c_inner < c_middle < c_outer < main" ||
	bad "record with no -g: '$got' $(grep -h "warning.*\[unknown\] frame" "$tmp/dflt.err" "$tmp/dflt.txt" | head -2)"

report --json --comm $comm "$chain" > "$tmp/chain.json"
reported=$(field "$tmp/chain.json" "j['header']['reported']")
want=$(python3 -c "
import json,sys
procs={}; n=0
for line in open(sys.argv[1]):
    r=json.loads(line)
    if r.get('type')=='proc-create': procs[r['pid']]=r['name']
    elif r.get('type')=='callchain' and procs.get(r['pid'])==sys.argv[2]: n+=1
print(n)" "$tmp/chain.dump" $comm)
[[ "$reported" == "$want" && $want -gt 100 ]] && ok "--json: $reported samples of $comm, as many as the log holds" ||
	bad "--json: reported $reported, the log has $want"
got=$(field "$tmp/chain.json" "' '.join([j['events'][0]['top'][0]['function']] + [c['function'] for c in [j['events'][0]['callgraph'][0]['callers'][0]]])")
[[ "$got" == "c_leaf c_inner" ]] && ok "--json: top c_leaf, its caller c_inner" || bad "--json: '$got'"

report --folded --comm $comm "$chain" > "$tmp/chain.folded"
sum=$(awk '{ s += $NF } END { print s }' "$tmp/chain.folded")
[[ "$sum" == "$reported" ]] && ok "--folded: counts sum to the $reported samples" || bad "--folded: sum $sum of $reported"
heavy=$(sort -k2 -n -t' ' "$tmp/chain.folded" | awk '{ print $NF, $0 }' | sort -n | tail -1 | cut -d' ' -f2-)
[[ "$heavy" == "$comm;"*"main;c_outer;c_middle;c_inner;c_leaf "* ]] &&
	ok "--folded: the heaviest stack is $comm;...;main;c_outer;c_middle;c_inner;c_leaf" || bad "--folded: '$heavy'"

# 2. Filters select exactly what they say (counted from the dump).
count() { # count PYTHON_CONDITION_ON_r : callchains of the log matching
	python3 -c "
import json,sys
n=0; t0=None
for line in open(sys.argv[1]):
    r=json.loads(line)
    if t0 is None and 'tsc' in r: t0=int(r['tsc'])
    if r.get('type')=='callchain':
        t=(int(r['tsc'])-t0)/1e9
        if $1: n+=1
print(n)" "$tmp/chain.dump"
}
reported_of() { report --json "$@" "$chain" > "$tmp/f.json" 2>/dev/null; field "$tmp/f.json" "j['header']['reported']"; }
pid=$(python3 -c "
import json,sys
for line in open(sys.argv[1]):
    r=json.loads(line)
    if r.get('type')=='proc-create' and r['name']==sys.argv[2]: print(r['pid']); break" "$tmp/chain.dump" $comm)
check_filter() { # NAME REPORT_ARGS CONDITION
	local got want
	got=$(reported_of $2) want=$(count "$3")
	[[ "$got" == "$want" ]] && ok "filter $1: $got samples" || bad "filter $1: report $got, log $want"
}
check_filter "--pid $pid" "--pid $pid" "r['pid']==$pid"
tid=$(count "False" > /dev/null; python3 -c "
import json,sys
for line in open(sys.argv[1]):
    r=json.loads(line)
    if r.get('type')=='callchain' and r['pid']==$pid: print(r['tid']); break" "$tmp/chain.dump")
check_filter "--tid $tid" "--tid $tid" "r['tid']==$tid"
check_filter "--cpu 0" "--cpu 0" "r['cpu']==0"
check_filter "--cpu 1" "--cpu 1" "r['cpu']==1"
check_filter "--cpu 0-1" "--cpu 0-1" "r['cpu'] in (0,1)"
check_filter "--since 0.5" "--since 0.5" "t>=0.5"
check_filter "--until 0.5" "--until 0.5" "t<=0.5"
check_filter "--since 0.3 --until 0.9" "--since 0.3 --until 0.9" "0.3<=t<=0.9"
check_filter "--event cpu-clock" "--event cpu-clock" "True"
check_filter "--user" "--user" "any(int(p,16) < 0xffff800000000000 for p in r['pc'])"
check_filter "--kernel" "--kernel" "not r['user']"
report --event no-such-event "$chain" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 1 ]] && grep -q "no event named 'no-such-event'" "$tmp/err" &&
	ok "--event of an event not in the log: exit 1, named" || bad "--event no-such-event: exit $rc, '$(head -1 "$tmp/err")'"
report --callers c_middle "$chain" > "$tmp/callers.txt"
got=$(grep -v '^#\|^@\|^$' "$tmp/callers.txt" | head -3 | awk '{ print $3 }' | tr '\n' ' ')
[[ "$got" == "c_middle c_outer main " ]] && ok "--callers c_middle: c_outer < main" || bad "--callers: '$got'"
report --callees c_middle "$chain" > "$tmp/callees.txt"
got=$(grep -v '^#\|^@\|^$' "$tmp/callees.txt" | head -3 | awk '{ print $3 }' | tr '\n' ' ')
[[ "$got" == "c_middle c_inner c_leaf " ]] && ok "--callees c_middle: c_inner > c_leaf" || bad "--callees: '$got'"

# 2b. --sort KEYS and --children on a log of three processes (sh and two corpus
#     chains): rows against the dump's own counts per pid, tid and cpu, against the top
#     list per function; the children tree's totals against the top list's
#     (check_sort.py).
multi=$tmp/multi.pmclog
rec "$multi" -g -F 999 -- sh -c "'$corpus/hwpmc-corpus-pie' chain 0.4 & '$corpus/hwpmc-corpus-nopie' chain 0.4; wait"
"$hwpmc_bin" dump --json "$multi" > "$tmp/multi.dump"
python3 "$src/tests/integration/check_sort.py" "$hwpmc_bin" "$multi" "$tmp/multi.dump" > "$tmp/sort.log" 2>&1 ||
	grep -q "not ok" "$tmp/sort.log" || bad "check_sort.py: $(tail -2 "$tmp/sort.log")"
fold "--sort/--children" < "$tmp/sort.log"
report --sort comm --limit 0 "$multi" > "$tmp/sort-comm.txt" 2> /dev/null
got=$(grep -v '^#' "$tmp/sort-comm.txt" | awk 'NF == 4 { print $4 }' | sort | tr '\n' ' ')
[[ "$got" == "hwpmc-corpus-no hwpmc-corpus-pi "* ]] && ok "--sort comm: a row per program ($got)" ||
	bad "--sort comm: '$got'"
report --children --comm $comm --depth 0 "$chain" > "$tmp/children.txt" 2> /dev/null
got=$(grep -v '^#\|^$' "$tmp/children.txt" | grep -A4 ' main @ ' | awk '{ print $4 }' | tr '\n' ' ')
[[ "$got" == "main c_outer c_middle c_inner c_leaf " ]] &&
	ok "--children: main > c_outer > c_middle > c_inner > c_leaf, caller first" ||
	bad "--children: '$got'"
a=$(report --sort srcline --limit 1 "$chain" 2> /dev/null | grep -v '^#' | awk 'NF { print $4; exit }')
b=$(report --top --srcline --limit 1 "$chain" 2> /dev/null | grep -v '^#' | awk 'NF { print $4, $5; exit }')
[[ "$a" == corpus.c:[0-9]* && "$b" == "c_leaf $a" ]] &&
	ok "--sort srcline: the hottest line is c_leaf's ($a), as --srcline says" ||
	bad "--sort srcline: '$a', --srcline: '$b'"
report --sort bogus "$chain" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 2 ]] && grep -q "unknown key 'bogus' (keys: comm, pid" "$tmp/err" &&
	ok "--sort bogus: exit 2, the keys listed" || bad "--sort bogus: exit $rc, '$(head -1 "$tmp/err")'"
if command -v go > /dev/null; then
	report --sort cpu --pprof "$tmp/cpu.pb.gz" "$multi" 2> /dev/null &&
		go tool pprof -sample_index=samples -tags "$tmp/cpu.pb.gz" > "$tmp/tags.txt" 2>&1
	want=$(python3 -c "
import json,sys,collections
c=collections.Counter(r['cpu'] for r in map(json.loads, open(sys.argv[1])) if r.get('type') == 'callchain')
print(' '.join('%d:%d' % (n, k) for k, n in sorted(c.items())))" "$tmp/multi.dump")
	got=$(awk '/^ cpu:/ { on = 1; next } /^ [a-z]+:/ { on = 0 } on && NF >= 3 { printf "%d:%s\n", $1, $NF }' "$tmp/tags.txt" |
		sort -t: -k2 -n | tr '\n' ' ')
	[[ "$got" == "$want " ]] && ok "--sort cpu --pprof: go tool pprof -tags counts each cpu label as the log ($got)" ||
		bad "--sort cpu --pprof: tags '$got', log '$want'; $(head -3 "$tmp/tags.txt")"
fi

# 2c. hwpmc script: every sample in perf script's layout, read by speedscope's own
#     importer (npm speedscope, fetched by scripts/bootstrap) with the report's counts
#     per function (check_script.js); FlameGraph's reader wants the same layout.
"$hwpmc_bin" script "$multi" > "$tmp/multi.perf" 2> "$tmp/script.err" &&
	report --json --limit 0 "$multi" > "$tmp/multi.json" 2> /dev/null
blocks=$(grep -c '^[^	].* [0-9]*/[0-9]* *\[[0-9]\{3\}\] [0-9]*\.[0-9]\{6\}: *[0-9]* cpu-clock: $' "$tmp/multi.perf")
want=$(field "$tmp/multi.json" "j['header']['reported']")
[[ "$blocks" == "$want" ]] && grep -q "report of 1 file" "$tmp/script.err" &&
	ok "script: a block per sample ($blocks), perf's header layout; the coverage on stderr" ||
	bad "script: $blocks blocks of $want samples; $(head -2 "$tmp/script.err")"
bundle=$(ls "${HWPMC_NODE_MODULES:-/var/lib/hwpmc-tests/node_modules}"/speedscope/dist/release/speedscope-*.js 2> /dev/null | head -1)
if command -v node > /dev/null && [[ -n "$bundle" ]]; then
	node "$src/tests/integration/check_script.js" "$bundle" "$tmp/multi.perf" "$tmp/multi.json" > "$tmp/ss.log" 2>&1; rc=$?
	if [[ $rc == 77 ]]; then echo "# speedscope check skipped: $(tail -1 "$tmp/ss.log")"
	else fold speedscope < "$tmp/ss.log"; [[ $rc == 0 ]] || grep -q "not ok" "$tmp/ss.log" || bad "check_script.js exit $rc: $(tail -2 "$tmp/ss.log")"; fi
else
	echo "# node or the npm package speedscope (scripts/bootstrap fetches it) is missing: its importer check skipped"
fi
"$hwpmc_bin" script --callgraph "$multi" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 2 ]] && grep -q "script: writes the samples alone" "$tmp/err" &&
	ok "script --callgraph: exit 2, said" || bad "script --callgraph: exit $rc, '$(head -1 "$tmp/err")'"

# 2d. hwpmc diff: the chain log against a recording of the same program whose hot
#     path is another (signal: m_spin, no c_leaf): every row's counts are the two
#     reports', c_leaf falls by its whole share, m_spin grows by its whole share, a log
#     against itself changes nothing, and --flame colours m_spin red (check_diff.py).
rec "$tmp/sig.pmclog" -g -F 999 -- "$corpus/hwpmc-corpus-pie" signal 0.6
python3 "$src/tests/integration/check_diff.py" "$hwpmc_bin" "$chain" "$tmp/sig.pmclog" c_leaf m_spin \
	"$tmp/diff.svg" > "$tmp/diff.log" 2>&1 || grep -q "not ok" "$tmp/diff.log" ||
	bad "check_diff.py: $(tail -2 "$tmp/diff.log")"
fold diff < "$tmp/diff.log"
"$hwpmc_bin" diff "$chain" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 2 ]] && grep -q "diff: give two profiles, BASE and NEW" "$tmp/err" &&
	ok "diff with one profile: exit 2, said" || bad "diff with one profile: exit $rc, '$(head -1 "$tmp/err")'"

# 2e. hwpmc annotate c_leaf (one tight loop: spin() inlined): its samples are the
#     report's, >= 90% on the loop's instructions (found in the disassembly), the
#     hottest line a line of the loop, marked with its text (check_annotate.py).
python3 "$src/tests/integration/check_annotate.py" "$hwpmc_bin" "$chain" c_leaf > "$tmp/ann.log" 2>&1 ||
	grep -q "not ok" "$tmp/ann.log" || bad "check_annotate.py: $(tail -2 "$tmp/ann.log")"
fold annotate < "$tmp/ann.log"
"$hwpmc_bin" annotate no_such_function "$chain" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 1 ]] && grep -q "no sample of cpu-clock has 'no_such_function' as its leaf function" "$tmp/err" &&
	ok "annotate of a function with no sample: exit 1, said" || bad "annotate no_such_function: exit $rc, '$(head -1 "$tmp/err")'"

# 3. The flame graph: valid XML holding the chain.
report --flame "$tmp/chain.svg" --comm $comm "$chain" 2> "$tmp/err"
python3 -c 'import xml.etree.ElementTree as E,sys; E.parse(sys.argv[1])' "$tmp/chain.svg" &&
	grep -q ">c_leaf" "$tmp/chain.svg" && ok "--flame: valid SVG with c_leaf" || bad "--flame: $(head -2 "$tmp/err")"
if [[ -x "$src/tests/integration/check-flame-browser.sh" ]]; then
	bash "$src/tests/integration/check-flame-browser.sh" "$tmp/chain.svg" "$tmp/browser" c_leaf > "$tmp/browser.log" 2>&1; rc=$?
	if [[ $rc == 77 ]]; then echo "# browser check skipped: $(tail -1 "$tmp/browser.log")"
	else fold browser < "$tmp/browser.log"; [[ $rc == 0 ]] || bad "browser check exit $rc"; fi
fi

# 4. C++ throwing through frames: the chain holds, no name is left mangled
#    (demangling itself: test-report-offline.sh, on libstdc++'s own symbols).
rec "$tmp/cxx.pmclog" -g -F 999 -- "$corpus/hwpmc-corpus-cxx" 1
report --callgraph --min-percent 0 "$tmp/cxx.pmclog" > "$tmp/cxx.txt"
got=$(sed -n '/^@ /,$p' "$tmp/cxx.txt" | grep -v '^@\|^$' | head -4 | awk '{ print $3 }' | tr '\n' ' ')
[[ "$got" == "x_burn x_thrower x_mid x_outer " ]] && ok "C++: x_burn < x_thrower < x_mid < x_outer" || bad "C++: '$got'"
grep -v '^#' "$tmp/cxx.txt" | grep ' _Z[A-Za-z0-9_]* @' > /dev/null && bad "C++: a mangled name is printed" ||
	ok "C++: no mangled name printed"

# The pprof, callgrind and gprof exports of the chain and the C++ logs (demangled names
# with spaces and colons, the kernel's functions): go tool pprof, callgrind_annotate and
# gprof give the report's functions and counts (tests/integration/check_exports.py).
for p in chain cxx; do
	lg=$tmp/$p.pmclog
	[[ $p == chain ]] && lg=$chain
	report --pprof "$tmp/$p.pb.gz" --calltree "$tmp/$p.cg" --gprof "$tmp/$p.gmon" "$lg" \
		2> "$tmp/$p.said" || { bad "$p --pprof --calltree --gprof: $(head -3 "$tmp/$p.said")"; continue; }
	"$hwpmc_bin" report --json --limit 0 "$lg" > "$tmp/$p-all.json" 2> /dev/null
	# pprof has a location per PC with its DWARF lines and inline frames: --inline's report
	"$hwpmc_bin" report --json --inline --limit 0 "$lg" > "$tmp/$p-inl.json" 2> /dev/null
	# the chain's hot loop is spin() inlined in c_leaf: its source line, its instructions
	more=()
	[[ $p == chain ]] && more=(--list "spin:corpus.c:6364136223846793005ull" --disasm c_leaf)
	python3 "$src/tests/integration/check_exports.py" "$tmp/$p-all.json" \
		--calltree "$tmp/$p.cg" --gprof "$tmp/$p.said" \
		--json "$tmp/$p-inl.json" --pprof "$tmp/$p.pb.gz" "${more[@]}" > "$tmp/exp.out" 2>&1; rc=$?
	while IFS= read -r line; do
		case $line in
		"ok - "*) ok "$p: ${line#ok - }" ;;
		"not ok - "*) bad "$p: ${line#not ok - }" ;;
		"# "*) echo "$line" ;;
		esac
	done < "$tmp/exp.out"
	[[ $rc == 0 ]] || grep -q "^not ok" "$tmp/exp.out" || bad "$p: check_exports.py exit $rc"
done

# 4a. Rust: v0 ("_R...") and legacy ("_ZN...17h<hash>E") names demangled as perf prints
#     them (no crate disambiguator, no hash) in the JSON and folded outputs, and no
#     mangled Rust name anywhere.  The program is built here by the rustc found
#     (rustup's or a distribution's), as no Rust is a dependency of the build.
rustc_bin=$(command -v rustc || ls "${HOME:-/root}"/.cargo/bin/rustc /root/.cargo/bin/rustc 2> /dev/null | head -1)
if [[ -z "$rustc_bin" ]]; then
	echo "# rustc not found: Rust names checked on real symbols' strings only (unit-report-sym test_demangle)"
else
	for m in v0 legacy; do
		rbin=$tmp/hwpmc-rust-$m
		# Stable rustc takes "v0" but not "legacy", its default for a program's own code.
		mflag=(-C symbol-mangling-version=v0)
		[[ $m == legacy ]] && mflag=()
		if ! "$rustc_bin" -O -g -C force-frame-pointers=yes "${mflag[@]}" \
			--crate-name hwpmc_rust -o "$rbin" "$src/tests/workloads/corpus/corpus-rust.rs" \
			> "$tmp/rustc.err" 2>&1; then
			echo "# rustc ${mflag[*]} failed ($(head -1 "$tmp/rustc.err")): Rust $m not checked"
			continue
		fi
		if [[ $m == legacy ]] && ! nm "$rbin" | grep ' _ZN10hwpmc_rust5outer5Thing4spin17h[0-9a-f]\{16\}E$' > /dev/null; then
			echo "# this rustc's default mangling is not legacy: Rust legacy not checked"
			continue
		fi
		rec "$tmp/rust-$m.pmclog" -g -F 999 -- "$rbin" 1
		"$hwpmc_bin" report --json --limit 0 "$tmp/rust-$m.pmclog" > "$tmp/rust-$m.json" 2> /dev/null
		"$hwpmc_bin" report --folded "$tmp/rust-$m.pmclog" > "$tmp/rust-$m.folded" 2> /dev/null
		want='hwpmc_rust::outer::Thing::spin'
		[[ $m == v0 ]] && want='<hwpmc_rust::outer::Thing>::spin'
		got=$(python3 - "$tmp/rust-$m.json" "$tmp/rust-$m.folded" "$rbin" "$want" << 'PY'
import json, re, sys
j = json.load(open(sys.argv[1]))
mangled = re.compile(r"^_R[A-Za-z0-9_]+$|^_ZN.*17h[0-9a-f]{16}E")
names = [t["function"] for e in j["events"] for t in e["top"]]
frames = [f for line in open(sys.argv[2]) for f in line.rsplit(" ", 1)[0].split(";")]
raw = sorted({n for n in names + frames if mangled.match(n)})
spin = sum(t["self"] for e in j["events"] for t in e["top"]
           if t["function"] == sys.argv[4] and t["image"] == sys.argv[3])
print("mangled=%d spin=%d folded=%d %s" % (len(raw), spin,
      sum(f == sys.argv[4] for f in frames), raw[:2]))
PY
)
		[[ "$got" == "mangled=0 spin="[1-9]*" folded="[1-9]* ]] &&
			ok "Rust $m names demangled as perf prints them: $want ($got)" ||
			bad "Rust $m names: $got"
	done
fi

# 4b. Inline frames and source lines of a recorded -O2 -g program whose hot functions
# exist only inlined (corpus-inline.c, .h): every inl_mix frame must sit inside
# inl_step at the line of its call, inside inl_outer at the line of that call, under
# main, and be at a line of inl_mix's body; without --inline those functions never
# appear.  Judged per sample, not by counts (the pprof profile is checked by
# go tool pprof as above).
inl=$tmp/inline.pmclog
rec "$inl" -g -F 999 -- "$corpus/hwpmc-corpus-inline" 1
mark() { grep -n "$1" "$src/tests/workloads/corpus/corpus-inline.$2" | cut -d: -f1; }
report --inline --srcline --folded "$inl" > "$tmp/inl.folded" 2> /dev/null
report --srcline --folded "$inl" > "$tmp/inl-noinl.folded" 2> /dev/null
python3 - "$tmp/inl.folded" "$tmp/inl-noinl.folded" "$(mark INL-MIX-BEGIN h)" "$(mark INL-MIX-END h)" \
	"$(mark INL-CALL-MIX h)" "$(mark INL-CALL-STEP c)" > "$tmp/inl.out" <<'EOF'
import re, sys
folded, noinl, lo, hi, call_mix, call_step = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
mix = wrong = 0
for line in open(folded):
    stack, n = line.rsplit(" ", 1)
    fr = stack.split(";")
    for i, f in enumerate(fr):
        if not f.startswith("inl_mix "):
            continue
        m = re.fullmatch(r"inl_mix corpus-inline\.h:(\d+)", f)
        ok = (m and lo <= int(m.group(1)) <= hi and i >= 3 and
              fr[i - 1] == "inl_step corpus-inline.h:%d" % call_mix and
              fr[i - 2] == "inl_outer corpus-inline.c:%d" % call_step and
              fr[i - 3].startswith("main corpus-inline.c:"))
        mix += int(n) if ok else 0
        if not ok:
            wrong += int(n)
            print("# wrong: " + line.strip())
print("mix %d wrong %d" % (mix, wrong))
leak = sum(int(l.rsplit(" ", 1)[1]) for l in open(noinl) if re.search(r"(^|;)inl_(mix|step)\b", l))
outer = sum(int(l.rsplit(" ", 1)[1]) for l in open(noinl) if re.search(r";inl_outer corpus-inline\.c:\d+", l))
print("noinline_leak %d outer_lined %d" % (leak, outer))
EOF
got=$(grep -v '^#' "$tmp/inl.out" | tr '\n' ' ')
[[ $got =~ ^mix\ ([0-9]+)\ wrong\ 0\  ]] && (( ${BASH_REMATCH[1]} > 0 )) &&
	ok "--inline --srcline: every inl_mix sample is inl_mix (body line) < inl_step:$(mark INL-CALL-MIX h) < inl_outer:$(mark INL-CALL-STEP c) < main ($got)" ||
	{ bad "--inline --srcline: $got"; grep '^#' "$tmp/inl.out" | head -5; }
[[ $got =~ noinline_leak\ 0\ outer_lined\ ([0-9]+) ]] && (( ${BASH_REMATCH[1]} > 0 )) &&
	ok "--srcline alone: no inlined function is a frame, inl_outer has its lines" ||
	bad "--srcline alone: $got"
report --inline --srcline --pprof "$tmp/inl.pb.gz" "$inl" 2> /dev/null &&
	"$hwpmc_bin" report --inline --srcline --json --limit 0 "$inl" > "$tmp/inl-all.json" 2> /dev/null &&
	python3 "$src/tests/integration/check_exports.py" "$tmp/inl-all.json" --srcline \
		--pprof "$tmp/inl.pb.gz" > "$tmp/exp.out" 2>&1
while IFS= read -r line; do
	case $line in
	"ok - "*) ok "inline pprof: ${line#ok - }" ;;
	"not ok - "*) bad "inline pprof: ${line#not ok - }" ;;
	"# "*) echo "$line" ;;
	esac
done < "$tmp/exp.out"

# One source function that ran inlined (in twice_direct) and out of line (through a
# pointer), at one line: under --srcline both copies print "inl_twice
# corpus-inline.h:L", and the report makes them one function, as pprof -lines does.
python3 - "$tmp/inl.folded" "$tmp/inl-all.json" "$(mark INL-TWICE h)" > "$tmp/twice.out" <<'EOF'
import json, sys
folded, js, line = sys.argv[1], sys.argv[2], int(sys.argv[3])
me = "inl_twice corpus-inline.h:%d" % line
inlined = outl = 0
for l in open(folded):
    stack, n = l.rsplit(" ", 1)
    fr = stack.split(";")
    if fr[-1] != me:
        continue
    if len(fr) > 1 and fr[-2].startswith("twice_direct "):
        inlined += int(n)
    else:
        outl += int(n)
rows = [t for t in json.load(open(js))["events"][0]["top"] if t["function"] == me]
print("inlined %d out_of_line %d rows %d self %s" % (inlined, outl, len(rows),
      rows[0]["self"] if len(rows) == 1 else [r["self"] for r in rows]))
EOF
got=$(cat "$tmp/twice.out")
[[ $got =~ ^inlined\ ([0-9]+)\ out_of_line\ ([0-9]+)\ rows\ 1\ self\ ([0-9]+)$ ]] &&
	(( BASH_REMATCH[1] > 0 && BASH_REMATCH[2] > 0 &&
	   BASH_REMATCH[3] == BASH_REMATCH[1] + BASH_REMATCH[2] )) &&
	ok "--inline --srcline: inl_twice inlined and out of line at one line is one function ($got)" ||
	bad "--inline --srcline: inl_twice inlined and out of line: $got"

# 4c. JIT code: node --perf-basic-prof writes /tmp/perf-PID.map; hwpmc record keeps it
# open while node runs and saves it as LOG.jit/perf-PID.map when node exits (here the
# shell removes the /tmp file as soon as node has exited, before the report); the
# report names the JavaScript functions of PCs in no image by it ([jit]), and
# frame-pointer call chains go through the JIT frames (V8 keeps frame pointers) down
# to node::Start: counted per sample.
if command -v node > /dev/null; then
	jit=$tmp/jit.pmclog js_file=$(realpath "$src/tests/workloads/jit-hot.js")
	t0=$(date +%s%N)
	rec "$jit" -F 999 -- sh -c "cd '$tmp' && node --perf-basic-prof '$js_file' 2 & p=\$!; wait \$p; rm -f /tmp/perf-\$p.map; sleep 1"
	t1=$(date +%s%N)
	jpid=$("$hwpmc_bin" dump --json "$jit" | python3 -c "
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    if r.get('type') == 'proc-create' and r.get('name', '').startswith('node'):
        print(r['pid']); break")
	[[ -n $jpid && -s $tmp/jit.pmclog.jit/perf-$jpid.map && ! -e /tmp/perf-$jpid.map ]] &&
		grep -q "JIT maps: 1 processes' perf-PID.map saved in $tmp/jit.pmclog.jit/" "$jit.rec" &&
		ok "record: node's perf-$jpid.map saved beside the log though it was removed from /tmp at node's exit" ||
		bad "record: no saved JIT map for node ($jpid): $(ls "$tmp/jit.pmclog.jit" 2>&1 | head -2); $(tail -2 "$jit.rec")"
	# Beside it, when each of its lines appeared (wall-clock ns, line for line, within
	# the recording; a sample of reused code space is named by the entry of its time).
	got=$(python3 - "$tmp/jit.pmclog.jit/perf-$jpid.map" "$t0" "$t1" << 'PY'
import sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
try:
    times = [int(l) for l in open(sys.argv[1] + ".times")]
except (OSError, ValueError) as e:
    print("no times: %s" % e)
    sys.exit()
within = all(int(sys.argv[2]) <= t <= int(sys.argv[3]) for t in times)
print("lines %d times %d sorted %s within %s" % (len(lines), len(times), times == sorted(times), within))
PY
)
	n=$(wc -l < "$tmp/jit.pmclog.jit/perf-$jpid.map")
	[[ $got == "lines $n times $n sorted True within True" && $n -gt 0 ]] &&
		ok "record: perf-$jpid.map.times beside the map, a time per line, in order ($got)" ||
		bad "record: JIT map times: $got"
	report --json --limit 0 "$jit" > "$tmp/jit.json" 2> /dev/null
	# Node 20 maps its own file a second time (its embedded builtins, at another file
	# offset): that placement has a MAP_IN of its own, its builtins are named, and
	# [unknown] leaves (6.4% of node's samples without it) are at most a stray PC (JIT
	# code no perf map names): under 1% of node's samples.
	node_bin=$(readlink -f "$(command -v node)")
	if node -e 'process.exit(require("fs").readFileSync("/proc/self/maps", "utf8").split("\n").filter(l => / r-xp / .test(l) && l.endsWith(process.argv[1])).length > 1 ? 0 : 1)' "$node_bin"; then
		got=$(python3 - "$tmp/jit.json" "$node_bin" "$jit" "$hwpmc_bin" << 'PY'
import json, subprocess, sys
j = json.load(open(sys.argv[1]))
dump = subprocess.run([sys.argv[4], "dump", "--json", sys.argv[3]], capture_output=True, text=True).stdout
pids = {}
for l in dump.splitlines():
    r = json.loads(l)
    if r.get("type") == "map-in" and r.get("path") == sys.argv[2]:
        pids[r["pid"]] = pids.get(r["pid"], 0) + 1
top = j["events"][0]["top"]
builtins = sum(t["self"] for t in top if t["function"].startswith("Builtins_"))
unknown = sum(t["self"] for t in top if t["function"] == "[unknown]")
print("placements %d builtins %d unknown %d of %d" % (max(pids.values(), default=0), builtins,
      unknown, j["events"][0]["samples"]))
PY
)
		[[ $got =~ ^placements\ ([0-9]+)\ builtins\ ([0-9]+)\ unknown\ ([0-9]+)\ of\ ([0-9]+)$ ]] &&
			(( BASH_REMATCH[1] >= 2 && BASH_REMATCH[2] > 0 && BASH_REMATCH[3] * 100 < BASH_REMATCH[4] )) &&
			ok "node: its remapped builtins are a placement of their own, named (Builtins_*), [unknown] leaves under 1% ($got)" ||
			bad "node's remapped builtins: $got"
	else
		echo "# this node maps its file once: no remapped builtins to check"
	fi
	got=$(field "$tmp/jit.json" "j['header']['pcs_jit'], sorted(t['function'].split(' ')[0] for t in j['events'][0]['top'] if t['image'] == '[jit]' and 'hwpmcJit' in t['function'])[:2]")
	[[ $got =~ ^[1-9][0-9]*\ .*hwpmcJit ]] &&
		ok "node --perf-basic-prof: JavaScript functions named from LOG.jit ($got)" ||
		bad "node JIT: pcs_jit and JS functions: '$got'"
	report --folded "$jit" 2> /dev/null | python3 -c "
import re, sys
js = through = 0
for line in sys.stdin:
    stack, n = line.rsplit(' ', 1)
    fr = stack.split(';')
    at = [i for i, f in enumerate(fr) if re.match(r'JS:\S*hwpmcJit', f)]
    if at:
        js += int(n)
        through += int(n) if any(f.startswith('node::Start(') for f in fr[:at[0]]) else 0
print(js, through)" > "$tmp/jit.count"
	read -r js through < "$tmp/jit.count"
	(( js > 0 && through * 2 > js )) &&
		ok "node JIT: $through of $js samples in JavaScript unwound through the JIT frames to node::Start (frame pointers)" ||
		bad "node JIT: $through of $js JavaScript samples reach node::Start"
	# A detached session (hwpmc start) has no client to save the maps: the daemon does,
	# beside its log in the state directory, on a thread of the session's own.
	"$hwpmc_bin" start -a -F 999 > "$tmp/start.out" 2>&1
	sid=$(sed -n 's/^session \([0-9]*\): recording into .*/\1/p' "$tmp/start.out")
	slog=$(sed -n 's/^session [0-9]*: recording into \(.*\)$/\1/p' "$tmp/start.out")
	(cd "$tmp" || exit; node --perf-basic-prof "$js_file" 2 & p=$!; wait $p; rm -f /tmp/perf-$p.map; echo $p > "$tmp/node.pid")
	"$hwpmc_bin" stop "$sid" > /dev/null 2>&1
	npid=$(cat "$tmp/node.pid")
	report --json --limit 0 "$slog" > "$tmp/sjit.json" 2> /dev/null
	got=$(field "$tmp/sjit.json" "j['header']['pcs_jit'], len([t for t in j['events'][0]['top'] if t['image'] == '[jit]' and 'hwpmcJit' in t['function']])")
	[[ -n $sid && -s $slog.jit/perf-$npid.map && $got =~ ^[1-9][0-9]*\ [1-9] ]] &&
		ok "hwpmc start: the daemon saved node's map beside the detached log; JavaScript named ($got)" ||
		bad "hwpmc start: JIT map $slog.jit/perf-$npid.map: $(ls "$slog.jit" 2>&1 | head -2); report: $got; $(cat "$tmp/start.out")"
	grep -q "session $sid: JIT maps: [1-9][0-9]* saved" "$tmp/daemon.log" &&
		ok "the journal counts the detached session's JIT maps" || bad "no JIT maps line for session $sid"
	rm -f "$tmp"/isolate-*.log
else
	bad "node is missing (scripts/bootstrap installs nodejs): the JIT case cannot run"
fi
# Planted maps are not saved: a user's process whose /tmp/perf-PID.map is a symbolic
# link to /etc/shadow, and one whose map belongs to another user (anyone can write to
# /tmp), recorded system-wide by root.
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 & p1=$!
setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 & p2=$!
ln -s /etc/shadow "/tmp/perf-$p1.map"
echo "7f0000000000 10 planted" > "/tmp/perf-$p2.map"
chown 2:2 "/tmp/perf-$p2.map"
rec "$tmp/plant.pmclog" -a -d 1.5
[[ ! -e $tmp/plant.pmclog.jit/perf-$p1.map && ! -e $tmp/plant.pmclog.jit/perf-$p2.map ]] &&
	grep -q "not owned by their process's user or root" "$tmp/plant.pmclog.rec" &&
	ok "record -a: a map that links to /etc/shadow and one of another user are not saved, and said" ||
	bad "record -a: planted maps: $(ls "$tmp/plant.pmclog.jit" 2>&1 | head -3); $(tail -2 "$tmp/plant.pmclog.rec")"
kill $p1 $p2 2> /dev/null; wait $p1 $p2 2> /dev/null
rm -f "/tmp/perf-$p1.map" "/tmp/perf-$p2.map"

# 5. Symbols from --symfs and from a debug file found by build id.
mkdir -p "$tmp/bin" "$tmp/symfs$tmp/bin" "$tmp/debug"
cp "$corpus/hwpmc-corpus-pie" "$tmp/bin/prog"
rec "$tmp/moved.pmclog" -g -F 999 -- "$tmp/bin/prog" chain 0.5
mv "$tmp/bin/prog" "$tmp/symfs$tmp/bin/prog"
report --json "$tmp/moved.pmclog" > "$tmp/m.json"
got=$(field "$tmp/m.json" "j['events'][0]['top'][0]['function']")
[[ "$got" == prog+0x* ]] && ok "a binary gone from its path prints as prog+0xoffset ($got)" || bad "moved: top '$got'"
report --json --symfs "$tmp/symfs" "$tmp/moved.pmclog" > "$tmp/m.json"
got=$(field "$tmp/m.json" "j['events'][0]['top'][0]['function']")
[[ "$got" == c_leaf ]] && ok "--symfs: found under the root, c_leaf" || bad "--symfs: top '$got'"
cp "$corpus/hwpmc-corpus-pie" "$tmp/bin/stripped"
bid=$(readelf -n "$tmp/bin/stripped" | sed -n 's/.*Build ID: //p')
mkdir -p "$tmp/debug/.build-id/${bid:0:2}"
objcopy --only-keep-debug "$tmp/bin/stripped" "$tmp/debug/.build-id/${bid:0:2}/${bid:2}.debug"
objcopy --strip-all "$tmp/bin/stripped"
rec "$tmp/stripped.pmclog" -g -F 999 -- "$tmp/bin/stripped" chain 0.5
report --json "$tmp/stripped.pmclog" > "$tmp/s.json"
got=$(field "$tmp/s.json" "j['events'][0]['top'][0]['function']")
[[ "$got" != c_leaf ]] && ok "stripped binary without its debug file: no c_leaf ($got)" || bad "stripped: c_leaf without debug file?"
report --json --debug-dir "$tmp/debug" "$tmp/stripped.pmclog" > "$tmp/s.json"
got=$(field "$tmp/s.json" "j['events'][0]['top'][0]['function']")
[[ "$got" == c_leaf ]] && ok "--debug-dir: the debug file found by build id gives c_leaf" || bad "debug by build id: top '$got'"
report --json --srcline --debug-dir "$tmp/debug" "$tmp/stripped.pmclog" > "$tmp/s.json"
got=$(field "$tmp/s.json" "j['events'][0]['top'][0]['function']")
[[ "$got" =~ ^c_leaf\ corpus\.c:[0-9]+$ ]] && ok "--srcline: the lines of the debug file found by build id ($got)" ||
	bad "--srcline with the debug file: top '$got'"

# 5b. A container: a process in its own mount namespace and root (unshare --root) runs
# a static program at a path where the host has another file.  The log says the build
# id of each MAP_IN's file (pmclog-format.md 11.11), so the report never names the
# container's PCs by the host's file; it finds the right one under --symfs (the
# container's root) or by build id in a debug directory.  As a container runtime does,
# the process first moves into a cgroup of its own (made here, where cgroup v2 is
# mounted), then execs: the log says the cgroup (11.12) and --cgroup selects it.
ctr=$tmp/ctr
mkdir -p "$ctr$tmp/app" "$tmp/app" "$tmp/ctrdbg"
cp "$corpus/hwpmc-corpus-static" "$ctr$tmp/app/prog"
cp "$corpus/hwpmc-corpus-pie" "$tmp/app/prog" # the host's file at that path: another build
cg2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts) cgname=hwpmcd-test-$$ cgmade=
[[ -n "$cg2" ]] && mkdir "$cg2/$cgname" 2> /dev/null && cgmade=$cg2/$cgname
if [[ -n "$cgmade" ]]; then
	rec "$tmp/ctr.pmclog" -g -F 999 -- sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' sh "$cgmade" \
		unshare --mount --root="$ctr" "$tmp/app/prog" chain 1
else
	rec "$tmp/ctr.pmclog" -g -F 999 -- unshare --mount --root="$ctr" "$tmp/app/prog" chain 1
fi
ctr_top() { report --json "$@" "$tmp/ctr.pmclog" 2> /dev/null > "$tmp/ctr.json" &&
	field "$tmp/ctr.json" "j['events'][0]['top'][0]['function'], j['header']['images_other_build'], j['header']['images_by_build_id']"; }
got=$(ctr_top)
[[ $got =~ ^prog\+0x[0-9a-f]+\ 1\ 0$ ]] &&
	ok "container: the host's file at the container's path is another build: not used ($got)" ||
	bad "container: without help: $got"
got=$(ctr_top --symfs "$ctr")
# (the vDSO's saved copy, pmclog-format.md 11.15, is not under ROOT: LOG.vdso has its id)
[[ $got == "c_leaf 0 1" ]] && ok "container: --symfs ROOT: c_leaf (the vDSO by build id beside the log)" ||
	bad "container: --symfs: $got"
bid=$(readelf -n "$ctr$tmp/app/prog" | sed -n 's/.*Build ID: //p')
mkdir -p "$tmp/ctrdbg/.build-id/${bid:0:2}"
cp "$ctr$tmp/app/prog" "$tmp/ctrdbg/.build-id/${bid:0:2}/${bid:2}.debug"
got=$(ctr_top --debug-dir "$tmp/ctrdbg")
[[ $got == "c_leaf 0 1" ]] && ok "container: found by build id in --debug-dir: c_leaf" ||
	bad "container: by build id: $got"
if [[ -n "$cgmade" ]]; then
	# Every sample of the container's program is in its cgroup, and only those are.
	report --json --symfs "$ctr" "$tmp/ctr.pmclog" > "$tmp/ctr.json" 2> /dev/null
	cgs=$(field "$tmp/ctr.json" "[(c['path'], c['samples']) for c in j['header'].get('cgroups', []) if c['path'] == '/$cgname']")
	report --json --symfs "$ctr" --comm prog "$tmp/ctr.pmclog" > "$tmp/ctr-prog.json" 2> /dev/null
	report --json --symfs "$ctr" --cgroup "/$cgname" "$tmp/ctr.pmclog" > "$tmp/ctr-cg.json" 2> /dev/null
	nprog=$(field "$tmp/ctr-prog.json" "j['header']['reported']")
	ncg=$(field "$tmp/ctr-cg.json" "j['header']['reported']")
	top=$(field "$tmp/ctr-cg.json" "j['events'][0]['top'][0]['function']")
	[[ $cgs == "[('/$cgname', $ncg)]" && $ncg -ge $nprog && $nprog -gt 0 && $top == c_leaf ]] &&
		ok "container: the log says its cgroup; --cgroup /$cgname keeps its $ncg samples (prog's $nprog), top c_leaf" ||
		bad "container cgroup: header $cgs, --cgroup $ncg, --comm prog $nprog, top $top"
	rmdir "$cgmade" 2> /dev/null
else
	echo "# no cgroup v2 mount to make a cgroup in: the container's cgroup is not checked"
fi

# 6. The kernel: symbols saved beside the log, else /proc/kallsyms of this boot.
rec "$tmp/dd.pmclog" -F 999 -- dd if=/dev/zero of=/dev/null bs=1M count=4000
if [[ -s "$tmp/dd.pmclog.kallsyms" ]]; then
	report --top --kernel --limit 0 "$tmp/dd.pmclog" > "$tmp/k.txt"
	grep -q "^# kernel symbols: $tmp/dd.pmclog.kallsyms" "$tmp/k.txt" && ok "kernel symbols from FILE.kallsyms" ||
		bad "kernel symbols: $(grep 'kernel symbols' "$tmp/k.txt")"
	kfun=$(grep -v '^#' "$tmp/k.txt" | awk 'NF >= 5 { print $4, $5; exit }')
	[[ "$kfun" == *"[kernel.kallsyms]" && "$kfun" != "[kernel]+"* ]] &&
		ok "--kernel: the hottest kernel function is named ($kfun)" || bad "--kernel: '$kfun'"
	if grep -v '^#' "$tmp/k.txt" | awk 'NF >= 5' | grep -v "\[kernel.kallsyms\]\|\[[a-z0-9_]*\]$" > /dev/null; then
		bad "--kernel shows user images"
	else ok "--kernel shows only kernel images"; fi
	mv "$tmp/dd.pmclog.kallsyms" "$tmp/saved.kallsyms"
	report --top "$tmp/dd.pmclog" > "$tmp/k2.txt"
	grep -q "/proc/kallsyms (same boot)" "$tmp/k2.txt" && ok "without FILE.kallsyms: /proc/kallsyms of this boot" ||
		bad "no same-boot kallsyms: $(grep 'kernel symbols' "$tmp/k2.txt")"
	report --top --kallsyms "$tmp/saved.kallsyms" "$tmp/dd.pmclog" > "$tmp/k3.txt"
	grep -q "^# kernel symbols: $tmp/saved.kallsyms" "$tmp/k3.txt" && ok "--kallsyms FILE is used" || bad "--kallsyms"
	report --top --user --limit 0 "$tmp/dd.pmclog" > "$tmp/u.txt"
	grep -v '^#' "$tmp/u.txt" | awk 'NF >= 5' | grep "\[kernel.kallsyms\]" > /dev/null && bad "--user shows kernel functions" ||
		ok "--user shows no kernel function"
else
	bad "record wrote no FILE.kallsyms: $(cat "$tmp/dd.pmclog.rec")"
fi

kill -TERM "$dpid"; wait "$dpid"; rc=$?; dpid=
[[ $rc == 0 ]] && ok "daemon exit 0 on SIGTERM" || bad "daemon exit $rc"
echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
