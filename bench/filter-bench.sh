#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# What the in-kernel sample filter costs and saves, side by side with perf in one
# run.  A "service" (the demo workload, one thread) runs in a cgroup this bench
# makes (hwpmcd-bench.slice/svc-PID.service); BURNERS busy loops run outside it,
# so most of the machine's samples are not the service's.  Each recorder samples
# every CPU with cpu-clock at FREQ Hz and dwarf call chains of 8 KiB snapshots
# for SECONDS:
#   hwpmc  unfiltered     every sample crosses the ring and is unwound
#   hwpmc  --unit         the BPF program keeps the service's samples only
#   perf   unfiltered     perf record -a
#   perf   -G             perf record -a -G (the kernel's per-cgroup counters)
# Printed per run: samples that reached user space, ring bytes (perf: perf.data;
# hwpmcd: those samples times their record size, header, registers and snapshot),
# the recorder's CPU seconds (hwpmcd: the daemon's own accounting of the session;
# perf: utime+stime of perf record) and the log's bytes.  The filter's own cost:
# run_time_ns / run_cnt of the program (kernel.bpf_stats_enabled, set for the run
# and restored), per sample it saw, kept or dropped.
# usage: bench/filter-bench.sh [BUILD_DIR] [SECONDS] [FREQ] [BURNERS]  (root; perf, bpftool)
set -euo pipefail
build=${1:-build} secs=${2:-10} freq=${3:-999} burners=${4:-6}
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc demo=$build/tests/workloads/hwpmc-demo
stack=8192
command -v perf > /dev/null || { echo "bench: perf is not installed (apt-get install linux-perf)"; exit 1; }
bpftool=$(command -v bpftool || echo /usr/sbin/bpftool)
[[ -x $bpftool ]] || { echo "bench: bpftool is not installed"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "bench: needs root"; exit 1; }
root=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/self/mounts)
[[ -n "$root" ]] || { echo "bench: no cgroup v2 hierarchy is mounted"; exit 1; }
unit=svc-$$.service
slice=$root/hwpmcd-bench.slice
cg=$slice/$unit
tmp=$(mktemp -d)
sock=$tmp/control
export HWPMCD_SOCKET=$sock
stats_was=$(cat /proc/sys/kernel/bpf_stats_enabled)
kids=()
cleanup() {
	kill "${kids[@]}" 2> /dev/null || true
	wait "${kids[@]}" 2> /dev/null || true
	kill "$dpid" 2> /dev/null || true
	wait "$dpid" 2> /dev/null || true
	echo "$stats_was" > /proc/sys/kernel/bpf_stats_enabled
	rmdir "$cg" "$slice" 2> /dev/null || true
	rm -rf "$tmp"
}
"$hwpmcd" --config /dev/null --socket "$sock" --state-dir "$tmp/state" --foreground 2> "$tmp/daemon.log" &
dpid=$!
trap cleanup EXIT
for _ in $(seq 100); do "$hwpmc" status > /dev/null 2>&1 && break; sleep 0.1; done

mkdir -p "$cg"
"$demo" 100000 > /dev/null &
svc=$!
kids+=($svc)
echo "$svc" > "$cg/cgroup.procs"
for _ in $(seq "$burners"); do
	sh -c 'while :; do :; done' &
	kids+=($!)
done
sleep 0.5
echo 1 > /proc/sys/kernel/bpf_stats_enabled

# A sample record in the ring: header 8, ip 8, pid/tid 8, time 8, cpu 8, period 8,
# callchain 8 + 8 per entry (about 8 kernel PCs), regs 8 + 17 x 8, stack 8 + stack + 8.
rec_bytes=$((8 + 8 + 8 + 8 + 8 + 8 + 8 + 64 + 8 + 136 + 8 + stack + 8))

run_hwpmc() { # NAME [FILTER ARGS...]: a detached session for SECONDS
	local name=$1 sid out s c b k d rt rc
	shift
	out=$("$hwpmc" start -a -F "$freq" -e cpu-clock --call-graph "dwarf,$stack" --no-kallsyms "$@" 2>&1)
	sid=$(sed -n 's/^session \([0-9]*\): recording.*/\1/p' <<< "$out")
	[[ -n "$sid" ]] || { echo "bench: $name: $out"; exit 1; }
	sleep "$secs"
	# The program's own accounting, while it is still attached (asked in both runs,
	# so that both last as long).
	rt=$("$bpftool" prog show name hwpmcd_filter --json 2> /dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)
p = p[0] if isinstance(p, list) else p
print(p.get("run_time_ns", 0), p.get("run_cnt", 0))' 2> /dev/null || true)
	"$hwpmc" stop "$sid" > "$tmp/$name.err" 2>&1
	s=$(sed -n 's/.*s: \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$tmp/$name.err")
	c=$(sed -n 's/.*daemon CPU \([0-9.]*\) s.*/\1/p' "$tmp/$name.err")
	b=$(sed -n 's/.*lost, [0-9]* throttled, \([0-9.]*\) MB.*/\1/p' "$tmp/$name.err")
	k=$(sed -n 's/.*the kernel kept \([0-9]*\) samples and dropped \([0-9]*\).*/\1 \2/p' "$tmp/$name.err")
	echo "$name ${s:-0} ${c:-0} ${b:-0} ${k:-- -} ${rt:-- -}"
}

run_perf() { # NAME [PERF ARGS...]
	local name=$1 s c b
	shift
	/usr/bin/time -f "%U %S" -o "$tmp/$name.time" perf record -q -a -F "$freq" -e cpu-clock \
		"$@" --call-graph "dwarf,$stack" -o "$tmp/$name.data" -- sleep "$secs" 2> "$tmp/$name.err" ||
		{ echo "bench: $name: $(tail -3 "$tmp/$name.err")"; exit 1; }
	s=$(perf report -i "$tmp/$name.data" --stats 2> /dev/null | awk '/SAMPLE events:/ {print $3; exit}')
	c=$(awk '{printf "%.3f", $1 + $2}' "$tmp/$name.time")
	b=$(awk -v n="$(stat -c %s "$tmp/$name.data")" 'BEGIN {printf "%.2f", n / 1e6}')
	echo "$name ${s:-0} $c $b - - - -"
}

echo "# filter bench: cpu-clock ${freq} Hz on every CPU, dwarf ${stack} B snapshots, ${secs} s each;"
echo "# the service (pid $svc, cgroup ${cg#$root/}) and $burners burners outside it on $(nproc) CPUs"
{
	run_hwpmc hwpmc-all
	run_hwpmc hwpmc-unit --unit "$unit"
	run_perf perf-all
	run_perf perf-G -G "${cg#$root/}"
} > "$tmp/rows"

python3 - "$tmp/rows" "$rec_bytes" "$secs" <<'EOF'
import sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    rows[f[0]] = f[1:]
rec, secs = int(sys.argv[2]), float(sys.argv[3])
print("%-11s %12s %14s %10s %10s %12s %12s" % ("run", "samples", "ring MB", "CPU s",
                                                "log MB", "kept", "dropped"))
for name in ("hwpmc-all", "hwpmc-unit", "perf-all", "perf-G"):
    s, c, b, kept, dropped = rows[name][:5]
    ring = (float(b) if name.startswith("perf") else int(s) * rec / 1e6)
    print("%-11s %12s %14.2f %10s %10s %12s %12s" % (name, s, ring, c, b, kept, dropped))
rt, cnt = rows["hwpmc-unit"][5:7]
if rt != "-" and int(cnt):
    print("BPF filter: %d runs, %.0f ns per sample seen (run_time_ns %s)" % (int(cnt), int(rt) / int(cnt), rt))
else:
    print("BPF filter: no run statistics (kernel.bpf_stats_enabled, bpftool)")
hu, hf, pa, pg = (float(rows[n][1]) for n in ("hwpmc-all", "hwpmc-unit", "perf-all", "perf-G"))
print("CPU: hwpmc filtered / unfiltered %.3f; perf -G / unfiltered %.3f; hwpmc filtered / perf -G %.3f"
      % (hf / hu if hu else 0, pg / pa if pa else 0, hf / pg if pg else 0))
EOF
