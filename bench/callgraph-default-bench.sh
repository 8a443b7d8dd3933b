#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What `hwpmc record -- PROG` should do by default (issue 33, item 4), measured on
# Debian's own binaries, which are built without frame pointers: xz compressing, and
# python3 running a loop.  Side by side in one run, each mode on a fresh run of the
# program, at 999 Hz:
#   - hwpmc --call-graph fp (the kernel walks frame pointers), hwpmc --call-graph
#     dwarf (stack snapshots unwound by the daemon), perf record (its default: no
#     call chain) and perf record -g (frame pointers)
#   - the program's wall time (best of RUNS) against its time unprofiled: the cost a
#     profiled program pays
#   - bytes per sample of the output (perf: perf.data; hwpmc: the log)
#   - complete stacks: the share of samples whose chain reaches __libc_start_main
#     (hwpmc report --folded), and the share with an [unknown] frame
#   - the daemon's CPU per 1000 samples (its own accounting)
# usage: bench/callgraph-default-bench.sh [BUILD_DIR] [RUNS]      (root; needs perf)
set -euo pipefail
build=${1:-build} runs=${2:-3}
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc
[[ $(id -u) == 0 ]] || { echo "bench: skipped: needs root"; exit 77; }
command -v perf > /dev/null || { echo "bench: skipped: perf is not installed"; exit 77; }
command -v xz > /dev/null && command -v python3 > /dev/null || { echo "bench: skipped: needs xz and python3"; exit 77; }
tmp=$(mktemp -d)
sock=$tmp/control
export HWPMCD_SOCKET=$sock
"$hwpmcd" --socket "$sock" --state-dir "$tmp/state" --foreground 2> "$tmp/daemon.log" &
dpid=$!
trap 'kill $dpid 2>/dev/null; wait $dpid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do "$hwpmc" status > /dev/null 2>&1 && break; sleep 0.1; done
# xz's input: 24 MB of the system's libraries (compressible, the same every run)
cat /usr/lib/x86_64-linux-gnu/*.so* 2> /dev/null | head -c 24000000 > "$tmp/input" || true
xz_cmd=(xz -6 -T1 -c "$tmp/input")
py_cmd=(python3 -c 'import json
d = [{"k": i, "v": str(i) * 3} for i in range(2000)]
for _ in range(300):
    s = json.dumps(d); json.loads(s); sorted(d, key=lambda x: x["v"])')
calc() { python3 -c "import sys; print(format(eval(sys.argv[2]), sys.argv[1]))" "$1" "$2"; }
now() { date +%s.%N; }

# best wall time of RUNS runs of: "$@" (its output to /dev/null)
best() {
	local b=
	for _ in $(seq "$runs"); do
		local t0 t1 d
		t0=$(now)
		"$@" > /dev/null 2>&1 || true
		t1=$(now)
		d=$(calc .3f "$t1 - $t0")
		if [[ -z $b ]] || awk -v a="$d" -v b="$b" 'BEGIN { exit !(a < b) }'; then b=$d; fi
	done
	echo "$b"
}

hrec() { # MODE CMD...: one hwpmc record run
	local mode=$1; shift
	"$hwpmc" record -F 999 --call-graph "$mode" -o "$tmp/h.pmclog" -- "$@" > /dev/null 2> "$tmp/h.err"
}
prec() { # ARGS -- CMD...: one perf record run
	local a=()
	while [[ $1 != -- ]]; do a+=("$1"); shift; done
	shift
	perf record -q -F 999 "${a[@]}" -o "$tmp/p.data" -- "$@" > /dev/null 2> "$tmp/p.err"
}
# complete / unknown shares of the last hwpmc log, from --folded
shares() {
	"$hwpmc" report --folded "$tmp/h.pmclog" 2> /dev/null | python3 -c '
import sys
tot = full = unk = 0
for l in sys.stdin:
    stack, n = l.rsplit(" ", 1)
    fr, n = stack.split(";")[1:], int(n)
    user = [f for f in fr if not f.startswith("[k]")]
    tot += n
    # reaches the C library start (xz is stripped: its _start has no name)
    full += n if "__libc_start_main" in user or (user and user[0] == "_start") else 0
    unk += n if any(f == "[unknown]" for f in fr) else 0
print("%.1f %.1f" % (100.0 * full / max(tot, 1), 100.0 * unk / max(tot, 1)))'
}

printf "%-8s %-22s %9s %9s %9s %9s %11s %10s\n" workload mode "wall-s" "overhead" samples "B/sample" "complete%" "unknown%"
for w in xz py; do
	if [[ $w == xz ]]; then cmd=("${xz_cmd[@]}"); else cmd=("${py_cmd[@]}"); fi
	base=$(best "${cmd[@]}")
	printf "%-8s %-22s %9s %9s\n" "$w" "unprofiled" "$base" "-"
	for mode in fp dwarf; do
		t=$(best hrec "$mode" "${cmd[@]}")
		s=$(sed -n 's/^hwpmc: recorded .*s: \([0-9]*\) samples,.*/\1/p' "$tmp/h.err" | head -1)
		b=$(stat -c %s "$tmp/h.pmclog")
		read -r full unk < <(shares)
		cpu=$(sed -n 's/.*daemon CPU \([0-9.]*\) s.*/\1/p' "$tmp/h.err")
		printf "%-8s %-22s %9s %8s%% %9s %9s %10s%% %9s%%   daemon CPU %s s/1000 samples\n" "$w" \
			"hwpmc --call-graph $mode" "$t" "$(calc .1f "100 * ($t / $base - 1)")" "${s:-?}" \
			"$(calc .0f "$b / max(${s:-1}, 1)")" "$full" "$unk" \
			"$(calc .4f "${cpu:-0} * 1000 / max(${s:-1}, 1)")"
	done
	for spec in "perf record|" "perf record -g|-g"; do
		label=${spec%%|*} opt=${spec#*|}
		# shellcheck disable=SC2086
		t=$(best prec $opt -- "${cmd[@]}")
		s=$(perf report -i "$tmp/p.data" --stats 2> /dev/null | awk '/^ *SAMPLE events:/ {print $3; exit}')
		b=$(stat -c %s "$tmp/p.data")
		printf "%-8s %-22s %9s %8s%% %9s %9s %11s %10s\n" "$w" "$label" "$t" \
			"$(calc .1f "100 * ($t / $base - 1)")" "${s:-?}" "$(calc .0f "$b / max(${s:-1}, 1)")" \
			"$([[ -z $opt ]] && echo "no stacks" || echo "-")" "-"
	done
done
