#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The cost of an always-on profile over a long run, beside perf's own always-on
# mode in the same window: a profile "soak" (system-wide, FREQ Hz, dwarf call
# graphs, rotated every ROTATE s, retained to RETAIN bytes) in hwpmcd, and
# `perf record -a -F FREQ --call-graph dwarf --switch-output=ROTATEs
# --switch-max-files=N` at the same time, on a machine kept busy by a
# process-churn workload (short-lived processes) and the demo's two threads.
# Every 10 s: each recorder's RSS, fds and threads.  At the end:
#   - RSS at warm-up (the first minute), its maximum and its last value; the growth
#   - CPU seconds of each recorder and samples written (hwpmcd: the profile's
#     files; perf: its SAMPLE records), bytes on disk, rotations
# The issue's goal for hwpmcd is RSS <= 64 MiB at 49 Hz dwarf for an hour.
# usage: bench/profile-soak-bench.sh [BUILD_DIR] [SECONDS] [FREQ] [ROTATE]  (root; needs perf)
set -euo pipefail
build=${1:-build} secs=${2:-3600} freq=${3:-49} rotate=${4:-60}
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc demo=$build/tests/workloads/hwpmc-demo
command -v perf > /dev/null || { echo "bench: perf is not installed (apt-get install linux-perf)"; exit 1; }
[[ $(id -u) == 0 ]] || { echo "bench: needs root"; exit 1; }
tmp=$(mktemp -d)
sock=$tmp/control
export HWPMCD_SOCKET=$sock
mkdir -p "$tmp/profiles.d" "$tmp/perf"
cat > "$tmp/profiles.d/soak.conf" <<EOF
events = cpu-clock
freq = $freq
callgraph = dwarf
rotate_seconds = $rotate
retain_bytes = 512M
EOF
"$hwpmcd" --config /dev/null --socket "$sock" --state-dir "$tmp/state" \
	--profiles-dir "$tmp/profiles.d" --foreground 2> "$tmp/daemon.log" &
dpid=$!
pids=()
trap 'kill ${pids[@]} 2> /dev/null; kill -INT $ppid 2> /dev/null; wait $ppid 2> /dev/null; kill $dpid 2> /dev/null; wait $dpid 2> /dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do "$hwpmc" status > /dev/null 2>&1 && break; sleep 0.1; done
(cd "$tmp/perf" && exec perf record -q -a -F "$freq" --call-graph dwarf \
	--switch-output="${rotate}s" --switch-max-files=$((512 * 1024 * 1024 / (freq * 2 * 8500 * rotate) + 1)) \
	-o perf.data > /dev/null 2>&1) &
ppid=$!

# The load: the demo's two threads, and a new short-lived process every ~20 ms.
"$demo" $((secs + 30)) --threads > /dev/null &
pids+=($!)
(while :; do /bin/true; sleep 0.02; done) &
pids+=($!)

stat_of() { # PID -> "rss_kib fds threads"
	echo "$(awk '/^VmRSS:/ {print $2}' /proc/$1/status) $(ls /proc/$1/fd | wc -l) $(awk '/^Threads:/ {print $2}' /proc/$1/status)"
}
cpu_of() { awk '{print ($14 + $15) / 100}' /proc/$1/stat; }
perf_pid() { pgrep -P $ppid perf || echo $ppid; }

echo "# t(s)  hwpmcd: rss KiB fds threads | perf: rss KiB fds threads"
t0=$SECONDS warm_h=0 warm_p=0 max_h=0 max_p=0
while ((SECONDS - t0 < secs)); do
	sleep 10
	read -r rh fh th <<< "$(stat_of $dpid)"
	pp=$(perf_pid)
	read -r rp fp tp <<< "$(stat_of "$pp" 2> /dev/null || echo "0 0 0")"
	t=$((SECONDS - t0))
	printf "%6d  %8d %4d %3d | %8d %4d %3d\n" $t "$rh" "$fh" "$th" "${rp:-0}" "${fp:-0}" "${tp:-0}"
	((t <= 60)) && { warm_h=$rh; warm_p=${rp:-0}; }
	((rh > max_h)) && max_h=$rh
	((${rp:-0} > max_p)) && max_p=${rp:-0}
done
cpu_h=$(cpu_of $dpid) pp=$(perf_pid) cpu_p=$(cpu_of "$pp")
"$hwpmc" profiles > "$tmp/profiles.txt" 2>&1 || true
"$hwpmc" status --json > "$tmp/status.json" 2>&1 || true
kill -INT $ppid; wait $ppid 2> /dev/null || true
kill -TERM $dpid; wait $dpid 2> /dev/null || true
dpid=$$ # nothing left to kill
samples_h=0
for f in "$tmp"/state/profiles/soak/*.pmclog; do
	n=$("$hwpmc" dump --summary "$f" 2> /dev/null | grep -o 'callchain [0-9]*' | awk '{print $2}')
	samples_h=$((samples_h + ${n:-0}))
done
bytes_h=$(du -sb "$tmp/state/profiles/soak" | awk '{print $1}')
nf_h=$(ls "$tmp"/state/profiles/soak/*.pmclog | wc -l)
samples_p=0
for f in "$tmp"/perf/perf.data*; do
	n=$(perf report -i "$f" --stats 2> /dev/null | awk '/^ *SAMPLE events:/ {print $3; exit}')
	samples_p=$((samples_p + ${n:-0}))
done
bytes_p=$(du -sb "$tmp/perf" | awk '{print $1}')
nf_p=$(ls "$tmp"/perf/perf.data* | wc -l)
cat "$tmp/profiles.txt"
# The unwinder's cache: images opened and evicted, 16 KiB chunks read and held.
python3 -c '
import json, sys
for s in json.load(open(sys.argv[1])).get("sessions", []):
    u = s.get("stats", {}).get("unwind")
    if u:
        print("unwind cache: images opened %d, evicted %d; chunks read %d, dropped %d; held %d KiB; "
              "outcomes: %s" % (u["elf_opened"], u["elf_evicted"], u.get("elf_reads", 0),
              u.get("elf_dropped", 0), u["elf_bytes"] // 1024,
              ", ".join("%s %d" % (k, u[k]) for k in ("complete", "truncated", "no-info", "no-map", "error") if k in u)))
' "$tmp/status.json" 2> /dev/null || true
echo
echo "# $secs s, $freq Hz, dwarf, every CPU, rotated every $rotate s; samples in the files still kept"
printf "%-8s %10s %10s %10s %10s %10s %12s %12s %8s\n" recorder "warm KiB" "max KiB" "last KiB" growth "CPU s" samples "disk bytes" files
printf "%-8s %10d %10d %10d %10d %10s %12d %12d %8d\n" hwpmcd "$warm_h" "$max_h" "$rh" $((rh - warm_h)) "$cpu_h" "$samples_h" "$bytes_h" "$nf_h"
printf "%-8s %10d %10d %10d %10d %10s %12d %12d %8d\n" perf "$warm_p" "$max_p" "${rp:-0}" $((${rp:-0} - warm_p)) "$cpu_p" "$samples_p" "$bytes_p" "$nf_p"
awk -v a="$max_h" -v b="$max_p" -v c="$cpu_h" -v d="$cpu_p" 'BEGIN {
	printf "ratio hwpmcd/perf: max RSS %.2f, CPU %.2f\n", b ? a / b : 0, d ? c / d : 0 }'
((max_h <= 65536)) && echo "hwpmcd max RSS $max_h KiB: within the 64 MiB goal" || echo "hwpmcd max RSS $max_h KiB: ABOVE the 64 MiB goal"
