#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The unwinding correctness corpus (issue 4), as a user records it: the real
# hwpmcd on a temporary socket, `hwpmc record -g -- WORKLOAD` for each corpus
# workload (no frame pointers anywhere), the log read back with `hwpmc dump`,
# every chain symbolized and compared with the known chain (check_chains.py),
# and the daemon's own unwind accounting (record's summary) checked too.
# Needs root (perf_event_open of a command with kernel callchains): 77 otherwise.
# usage: test-unwind.sh BUILD_DIR SRC_DIR   (HWPMCD_WRAPPER="valgrind ..." wraps the daemon;
#        UNWIND_TEST_ONLY="chain-pie signal ..." runs only those; UNWIND_TEST_SECONDS per workload)
set -uo pipefail
build=$1 src=$2
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc
corpus=$build/tests/workloads/corpus
check=$src/tests/integration/check_chains.py
. "$src/tests/integration/harness.sh"
harness_init "perf_event_open with kernel callchains"
secs=${UNWIND_TEST_SECONDS:-1.5}

NOTIFY_SOCKET= ${HWPMCD_WRAPPER:-} "$hwpmcd" --socket "$sock" --state-dir "$tmp/state" --foreground 2> "$tmp/daemon.log" &
dpid=$!
for _ in $(seq 200); do [[ -S "$sock" ]] && break; sleep 0.05; done
if [[ -S "$sock" ]]; then ok "daemon listening"; else bad "no control socket"; cat "$tmp/daemon.log"; exit 1; fi

# unwind_stat SUMMARY FIELD: a count from record's "hwpmc: unwind: ..." line.
unwind_stat() { sed -n 's/^hwpmc: unwind: //p' "$1" | grep -o "[0-9]* $2\b" | head -1 | cut -d' ' -f1; }

# corpus NAME WORKLOAD COMM EXPECT CHECK_ARGS... -- CMD...: record CMD with -g, check its chains.
#   EXPECT: "complete" (>= 99% of unwinds reach the outermost frame), "complete-exec"
#   (the same, with no-stack unwinds inside execve() judged apart), or "truncated".
corpus() {
	local name=$1 workload=$2 comm=$3 expect=$4; shift 4
	[[ -n "${UNWIND_TEST_ONLY:-}" && " $UNWIND_TEST_ONLY " != *" $name "* ]] && return
	local cargs=()
	while [[ $1 != -- ]]; do cargs+=("$1"); shift; done
	shift
	local log=$tmp/$name.pmclog
	"$hwpmc" record -g -F 999 -o "$log" -- "$@" > /dev/null 2> "$tmp/$name.rec"; local rc=$?
	grep -E '^hwpmc: (recorded|unwind:)' "$tmp/$name.rec" | sed 's/^/# /'
	if [[ $rc != 0 ]]; then bad "$name: record exit $rc: $(tail -3 "$tmp/$name.rec")"; return; fi
	"$hwpmc" dump --json "$log" > "$tmp/$name.json" 2> "$tmp/err"
	if [[ -s "$tmp/err" ]]; then bad "$name: dump: $(cat "$tmp/err")"; return; fi
	fold "$name" <<< "$(python3 "$check" "$tmp/$name.json" "$workload" "$comm" "${cargs[@]}" 2>&1)"
	local complete truncated samples
	complete=$(unwind_stat "$tmp/$name.rec" complete)
	truncated=$(unwind_stat "$tmp/$name.rec" truncated)
	samples=$(sed -n 's/^hwpmc: \([0-9][0-9]*\) samples.*/\1/p' "$tmp/$name.rec" | head -1)
	if [[ -z "$complete" || -z "$truncated" ]]; then
		bad "$name: no unwind accounting in record's summary: $(cat "$tmp/$name.rec")"; return
	fi
	local unwound=$(( complete + truncated + $(unwind_stat "$tmp/$name.rec" no-info) +
		$(unwind_stat "$tmp/$name.rec" no-map) + $(unwind_stat "$tmp/$name.rec" replaced) +
		$(unwind_stat "$tmp/$name.rec" error) + $(unwind_stat "$tmp/$name.rec" no-stack) +
		$(unwind_stat "$tmp/$name.rec" below-sp) ))
	if [[ $expect == complete ]]; then
		# no-stack: the kernel copied no byte of user stack (a kernel-mode sample
		# inside the exec that starts the command, or of a task that is exiting).
		# How many there are is the machine's speed, not the unwinder's: they are
		# no unwind to judge, as in the storm below.
		local nostack=$(unwind_stat "$tmp/$name.rec" no-stack)
		(( unwound > nostack && complete * 100 >= (unwound - nostack) * 99 )) &&
			ok "$name: the daemon counts $complete of $((unwound - nostack)) unwinds complete (+$nostack no-stack)" ||
			bad "$name: only $complete of $((unwound - nostack)) unwinds complete (+$nostack no-stack)"
	elif [[ $expect == complete-exec ]]; then
		# A fork+exec storm.  A kernel-mode sample inside execve() after the kernel
		# replaced the address space has the old image's user registers but no stack
		# (the kernel copies none: no-stack, as perf's unwinder gets none either); the
		# old image's mappings stay in the model and the log until the new image
		# runs, so its user PC is the old libc's execve (check_chains.py judges those
		# samples one by one through the kernel symbols).  They are judged apart;
		# every other unwind must be complete as for the others, and a user PC in
		# no mapping (no-map) is a defect: at most 0.5%.
		local nomap=$(unwind_stat "$tmp/$name.rec" no-map) nostack=$(unwind_stat "$tmp/$name.rec" no-stack)
		(( unwound > nostack && complete * 100 >= (unwound - nostack) * 99 )) &&
			ok "$name: the daemon counts $complete of $((unwound - nostack)) unwinds complete (+$nostack no-stack)" ||
			bad "$name: only $complete of $((unwound - nostack)) unwinds complete (+$nostack no-stack)"
		(( nomap <= 2 || nomap * 200 <= unwound )) && ok "$name: $nomap of $unwound unwinds found no mapping (at most 0.5%)" ||
			bad "$name: $nomap of $unwound unwinds found no mapping (more than 0.5%)"
	else
		(( truncated > 0 )) && ok "$name: the daemon counts $truncated unwinds truncated by the snapshot" ||
			bad "$name: no unwind counted as truncated ($complete complete)"
	fi
}

for kind in pie nopie static; do
	corpus "chain-$kind" chain "hwpmc-corpus-$kind" complete -- "$corpus/hwpmc-corpus-$kind" chain "$secs"
done
corpus shlib shlib hwpmc-corpus-pie complete -- "$corpus/hwpmc-corpus-pie" shlib "$secs"
corpus dlopen dlopen hwpmc-corpus-pie complete -- "$corpus/hwpmc-corpus-pie" dlopen "$secs"
corpus threads threads hwpmc-corpus-pie complete -- "$corpus/hwpmc-corpus-pie" threads "$secs"
corpus signal signal hwpmc-corpus-pie complete -- "$corpus/hwpmc-corpus-pie" signal "$secs"
corpus threads-static threads hwpmc-corpus-static complete -- "$corpus/hwpmc-corpus-static" threads "$secs"
if [[ -x "$corpus/hwpmc-corpus-cxx" ]]; then
	corpus cxx cxx hwpmc-corpus-cxx complete -- "$corpus/hwpmc-corpus-cxx" "$secs"
else
	echo "# no C++ compiler: the exceptions workload was not built"
fi
# The vDSO, unwound through its CFI: its MAP_INs name the copy hwpmcd saved at start-up
# (STATE/vdso/BUILDID/linux-vdso.so.1, pmclog-format.md 11.15), which check_chains.py
# opens as pmcstat would, with no alias; the report names the leaf from it, and from
# LOG.vdso (by the build id the MAP_IN is marked with) where that copy is not.  A
# daemon without a vDSO (under valgrind) writes "[vdso]": LOG.vdso stands for it.
corpus vdso vdso hwpmc-corpus-pie complete --alias "[vdso]=$tmp/vdso.pmclog.vdso" -- \
	"$corpus/hwpmc-corpus-pie" vdso "$secs"
if [[ -z "${UNWIND_TEST_ONLY:-}" || " $UNWIND_TEST_ONLY " == *" vdso "* ]]; then
	vpaths=$(python3 -c '
import json, sys
seen = set()
for l in open(sys.argv[1]):
    r = json.loads(l)
    p = r.get("path", "")
    if r.get("type") == "map-in" and (p == "[vdso]" or p.endswith("/linux-vdso.so.1")):
        seen.add(p)
print(" ".join(sorted(seen)))' "$tmp/vdso.json")
	vid=$(readelf -n "$tmp/vdso.pmclog.vdso" 2> /dev/null | sed -n 's/.*Build ID: //p')
	vname=linux-vdso.so.1 wheres="state beside"
	if [[ $vpaths == "[vdso]" && -n ${HWPMCD_WRAPPER:-} ]]; then
		echo "# the daemon runs without a vDSO (${HWPMCD_WRAPPER%% *}): its MAP_INs say [vdso], LOG.vdso stands for it"
		vname="[vdso]" wheres=beside
	else
		vpath=$vpaths
		[[ -n $vpath && $vpath == "$tmp/state/vdso/$vid/linux-vdso.so.1" ]] && cmp -s "$vpath" "$tmp/vdso.pmclog.vdso" &&
			[[ $(stat -c %a "$vpath") == 600 ]] &&
			ok "vdso: the MAP_IN names the saved vDSO image (state/vdso/$vid/linux-vdso.so.1, 0600, the bytes of LOG.vdso)" ||
			bad "vdso: MAP_IN paths '$vpaths', want $tmp/state/vdso/$vid/linux-vdso.so.1 (LOG.vdso's build id '$vid')"
	fi
	for where in $wheres; do
		[[ $where == beside && $vname != "[vdso]" ]] && mv "$vpath" "$vpath.away"
		"$hwpmc" report --top "$tmp/vdso.pmclog" > "$tmp/vdso.top" 2> "$tmp/vdso.report.err"
		[[ $where == beside && $vname != "[vdso]" ]] && mv "$vpath.away" "$vpath"
		vtop=$(awk -v n="$vname" '$NF == n && $3 > 0 && $4 !~ /[+]0x/ {print $4 " " $3; exit}' "$tmp/vdso.top")
		vunk=$(grep -v '^#' "$tmp/vdso.top" | grep -c '\[unknown\]')
		[[ -n $vtop && $vunk == 0 ]] && ok "vdso: hwpmc report names the vDSO's function from the image $([[ $where == state ]] && echo "the MAP_IN names" || echo "beside the log") ($vtop samples in $vname) and no [unknown]" ||
			bad "vdso ($where): report: '$vtop' in $vname, $vunk [unknown] lines: $(head -20 "$tmp/vdso.top"; cat "$tmp/vdso.report.err")"
	done
fi
# Code run from a second mapping of the program's file (node's builtins): its own MAP_IN
# and the MAP_OUTs of the rest of that placement let check_chains.py (pmcstat's rules)
# and the report name r_leaf there; none of its samples is [unknown].
for kind in pie nopie static; do
	corpus "remap-$kind" remap "hwpmc-corpus-$kind" complete -- "$corpus/hwpmc-corpus-$kind" remap "$secs"
	if [[ -z "${UNWIND_TEST_ONLY:-}" || " $UNWIND_TEST_ONLY " == *" remap-$kind "* ]]; then
		"$hwpmc" report --top "$tmp/remap-$kind.pmclog" > "$tmp/remap.top" 2> "$tmp/remap.err"
		rl=$(awk '$4 == "r_leaf" {print $3; exit}' "$tmp/remap.top")
		runk=$(grep -v '^#' "$tmp/remap.top" | grep -c '\[unknown\]')
		nin=$(grep -c "\"type\":\"map-in\".*hwpmc-corpus-$kind\"" "$tmp/remap-$kind.json")
		[[ -n $rl && $rl -gt 0 && $runk == 0 && $nin -ge 2 ]] &&
			ok "remap-$kind: the report names r_leaf in the second mapping ($rl samples; $nin MAP_INs of the program) and no [unknown]" ||
			bad "remap-$kind: r_leaf '$rl', $runk [unknown] lines, $nin MAP_INs of the program: $(head -20 "$tmp/remap.top"; cat "$tmp/remap.err")"
	fi
done
# A leaf without CFI and without a frame, under a caller without CFI that keeps one
# (corpus-fp.c): the frame-pointer step from the leaf would return into the caller's
# caller; the step is taken only where the call before the return address can reach
# the leaf, else by [RSP] (the daemon counts those).
corpus frameless frameless hwpmc-corpus-pie complete -- "$corpus/hwpmc-corpus-pie" frameless "$secs"
# Samples on a ret after pop %rbp, the caller found through rbp (corpus-fp.c).
corpus epilogue epilogue hwpmc-corpus-pie complete -- "$corpus/hwpmc-corpus-pie" epilogue "$secs"
# Frames of 5.5 and 5 KB (sqlite3's shell, bzip2): complete with the default snapshot.
corpus bigframe bigframe hwpmc-corpus-pie complete -- "$corpus/hwpmc-corpus-pie" bigframe "$secs"
corpus recursion recursion hwpmc-corpus-pie truncated --truncated -- "$corpus/hwpmc-corpus-pie" recursion "$secs"
corpus storm storm hwpmc-corpus-pie complete-exec --kallsyms "$tmp/storm.pmclog.kallsyms" -- \
	"$corpus/hwpmc-corpus-pie" storm 1000
# The storm without address space randomisation (as gdb runs programs, or setarch
# -R): each new image lands on the old one's executable, loader and vDSO while the
# exec's samples still show the old libc's execve, and the kernel copies the new
# stack at the old stack pointer.  The same checks hold: the old libc stays in
# the log until the new image runs, and those samples keep their user IP alone.
if setarch -R true 2> /dev/null; then
	corpus storm-norand storm hwpmc-corpus-pie complete-exec \
		--kallsyms "$tmp/storm-norand.pmclog.kallsyms" -- setarch -R "$corpus/hwpmc-corpus-pie" storm 300
else
	echo "# setarch -R does not work here: the storm without randomisation was not run"
fi

# A binary deleted while it runs: unwound through /proc/PID/map_files, symbolized from a copy.
cp "$corpus/hwpmc-corpus-pie" "$tmp/doomed"
corpus deleted chain doomed complete --alias "$tmp/doomed=$corpus/hwpmc-corpus-pie" -- \
	bash -c '"$1" chain "$2" & sleep 0.3; rm -f "$1"; wait' - "$tmp/doomed" "$secs"
if [[ -z "${UNWIND_TEST_ONLY:-}" || " $UNWIND_TEST_ONLY " == *" deleted "* ]]; then
	[[ ! -e "$tmp/doomed" ]] && ok "deleted: the binary was gone while it ran" || bad "deleted: still there"
fi

kill -TERM "$dpid"; wait "$dpid"; rc=$?; dpid=
[[ $rc == 0 ]] && ok "daemon exit 0 on SIGTERM" || { bad "daemon exit $rc"; tail -20 "$tmp/daemon.log"; }
if grep -q "ERROR SUMMARY: [1-9]" "$tmp/daemon.log"; then bad "valgrind errors in the daemon"; grep -A20 "Invalid\|uninit" "$tmp/daemon.log" | head -40; fi
echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
