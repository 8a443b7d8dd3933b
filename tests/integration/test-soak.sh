#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# A soak of two always-on profiles under process churn for SOAK_SECONDS (default
# 150), rotating every 10 s: "all" keeps every file (so that its samples can be
# counted), "kept" is bounded by retain_bytes.  Afterwards:
#   - the daemon's RSS after warm-up grew by at most 4 MiB, its threads by at most
#     one, its fds at rest (the fewest of a few looks) not at all, and its fds at
#     any look by at most what it holds for a moment (rotations, a merge round's
#     ELF files, a JIT map).  Warm-up is a state, not a
#     time: it lasts until both profiles have rotated WARM_ROTATIONS (3) times
#     (each rotation is 10 s of the same workload however slow the machine), and
#     the soak then lasts at least 3 more rotations of "all", beyond SOAK_SECONDS
#     if need be (at most 3 x SOAK_SECONDS in all)
#   - every rotated file is whole (INITIALIZE .. CLOSELOG) and reads alone
#   - the callchains of all of "all"'s files are exactly the samples its session
#     counted, and it lost none at rotation (the kernel's own losses are counted
#     apart and allowed)
#   - "kept"'s closed files fit in its retain_bytes
# Judged by state and content only, never by how fast the machine is: the number
# of rotations is whatever the time gave (at least 3 are required).  Nor by what
# else runs: the workload runs in a cgroup of its own and both profiles keep only
# its samples (scope = cgroup:), so the images the daemon's unwinder caches are
# the workload's, not those of whatever other tests start meanwhile (with them, a
# dwarf profile's cache of up to unwind_cache_mb grew past the 4 MiB bound while
# another suite ran).  Where no cgroup can be made, the profiles sample every CPU
# and the RSS bound is not judged (said so).
# Needs root: exits 77 (skip) otherwise.
# usage: test-soak.sh BUILD_DIR SRC_DIR
set -uo pipefail
build=$1 src=$2
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc
demo=$build/tests/workloads/hwpmc-demo
secs=${SOAK_SECONDS:-150}
. "$src/tests/integration/harness.sh"
harness_init "system-wide perf_event_open"
cgroot=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts) cg= scope=
[[ -n "$cgroot" ]] && mkdir "$cgroot/hwpmcd-soak-$$" 2> /dev/null && cg=$cgroot/hwpmcd-soak-$$ &&
	scope="scope = cgroup:/hwpmcd-soak-$$"
cg_cleanup() {
	kill $(jobs -p) 2> /dev/null
	wait 2> /dev/null
	if [[ -n "$cg" ]]; then
		for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cg" 2> /dev/null && break; sleep 0.2; done
	fi
}
trap 'cg_cleanup; harness_cleanup' EXIT

pdir=$tmp/profiles.d state=$tmp/state
mkdir -p "$pdir"
cat > "$pdir/all.conf" <<EOF
$scope
events = cpu-clock
freq = 99
callgraph = dwarf
rotate_seconds = 10
retain_bytes = 1G
EOF
cat > "$pdir/kept.conf" <<EOF
$scope
events = task-clock
freq = 49
callgraph = fp
rotate_seconds = 10
rotate_bytes = 64K
retain_bytes = 256K
EOF
"$hwpmcd" --config /dev/null --socket "$sock" --state-dir "$state" --profiles-dir "$pdir" \
	--foreground 2> "$tmp/daemon.log" &
dpid=$!
for _ in $(seq 150); do "$hwpmc" sessions > /dev/null 2>&1 && break; sleep 0.2; done
for _ in $(seq 150); do
	"$hwpmc" profiles > "$tmp/p.txt" 2>&1
	grep -q "^all .*running" "$tmp/p.txt" && grep -q "^kept .*running" "$tmp/p.txt" && break
	sleep 0.2
done
grep -q "^all .*running" "$tmp/p.txt" && grep -q "^kept .*running" "$tmp/p.txt" && ok "both profiles run" ||
	{ bad "profiles: $(cat "$tmp/p.txt")"; cat "$tmp/daemon.log"; exit 1; }

# The churn: a new short-lived process every 10 ms or so, and the demo's threads, in
# the cgroup of the profiles' scope.
incg() { [[ -z "$cg" ]] || echo "$BASHPID" > "$cg/cgroup.procs"; }
(incg && exec "$demo" $((secs + 20)) --threads > /dev/null) &
(incg && while :; do /bin/sh -c 'exec /bin/true'; sleep 0.01; done) &
[[ -n "$cg" ]] && echo "# the workload runs in $cg; the profiles keep its samples only" ||
	echo "# no cgroup of the test's own (cgroup v2 at '$cgroot'): the profiles sample every CPU"

stat_of() { echo "$(awk '/^VmRSS:/ {print $2}' /proc/$dpid/status) $(ls /proc/$dpid/fd | wc -l) $(awk '/^Threads:/ {print $2}' /proc/$dpid/status)"; }
# rotations of both profiles: "ALL KEPT"
rotations() {
	"$hwpmc" profiles --json 2> /dev/null | python3 -c 'import json,sys
r = {p["name"]: p.get("status", {}).get("profile", {}).get("rotations", 0) for p in json.load(sys.stdin)["profiles"]}
print(r.get("all", 0), r.get("kept", 0))' 2> /dev/null || echo "0 0"
}
# The daemon's fds at rest: the fewest of 8 looks 0.3 s apart.  A rotation holds a
# file and a JIT-map directory more for a moment, and "kept" rotates about once a
# second: a single look may land on one (or two, both profiles at once); a leak
# raises the fewest.
fd_floor() {
	local i n m=1000000
	for i in 1 2 3 4 5 6 7 8; do
		n=$(ls /proc/$dpid/fd | wc -l)
		((n < m)) && m=$n
		sleep 0.3
	done
	echo "$m"
}
t0=$SECONDS
wrss=0 wfds=0 wthr=0 mrss=0 mfds=0 mthr=0 wfloor=0
warm_rot=${WARM_ROTATIONS:-3} warmed=0 rot_warm=0 rall=0
while ((SECONDS - t0 < 3 * secs)); do
	sleep 2
	read -r rall rkept <<< "$(rotations)"
	if ((!warmed && rall >= warm_rot && rkept >= warm_rot)); then
		warmed=1 rot_warm=$rall wfloor=$(fd_floor)
		echo "# warm after $((SECONDS - t0)) s: $rall and $rkept rotations; $wfloor fds at rest"
	fi
	((warmed && SECONDS - t0 >= secs && rall >= rot_warm + 3)) && break
	read -r rss fds thr <<< "$(stat_of)"
	if ((!warmed)); then
		((rss > wrss)) && wrss=$rss
		((fds > wfds)) && wfds=$fds
		((thr > wthr)) && wthr=$thr
	else
		((rss > mrss)) && mrss=$rss
		((fds > mfds)) && mfds=$fds
		((thr > mthr)) && mthr=$thr
	fi
done
echo "# RSS KiB: warm-up max $wrss, after $mrss; fds $wfds then $mfds; threads $wthr then $mthr"
((warmed && rall >= rot_warm + 3)) && ok "warm-up ($warm_rot rotations each) then $((rall - rot_warm)) rotations of all" ||
	bad "the soak ended before warm-up and 3 rotations after it (all: $rall rotations, warm at $rot_warm)"
if [[ -z "$cg" ]]; then
	echo "# RSS not judged (max $wrss KiB, then $mrss KiB): the profiles saw every process of the machine"
else
	((mrss <= wrss + 4096)) && ok "RSS flat after warm-up (max $wrss KiB, then $mrss KiB)" || bad "RSS grew from $wrss to $mrss KiB"
fi
efloor=$(fd_floor)
((efloor <= wfloor)) && ok "fds at rest flat ($wfloor after warm-up, $efloor at the end)" ||
	bad "fds at rest grew from $wfloor to $efloor"
# Any look: at most what the daemon holds for a moment above its fds at rest: both
# profiles' rotations at once (a file and a JIT-map directory each), the dwarf
# session's ELF files during a merge round (UNWIND_FDS_MAX, closed at its end), and
# the JIT thread's map or maplog's /proc file being read (2).  A look that lands in
# a merge round sees some of the ELF files, however many the machine's speed puts
# there: the bound is the design's, not the warm-up's largest look.
ufds=$(sed -n 's/^#define UNWIND_FDS_MAX \([0-9]*\).*/\1/p' "$src/include/hwpmcd/unwind.h")
bound=$((wfloor + 4 + ${ufds:-16} + 2))
((mfds <= bound)) && ok "fds bounded (at rest $wfloor, at most $bound held for a moment; looks: $wfds during warm-up, then at most $mfds)" ||
	bad "fds grew from $wfloor at rest to $mfds (more than $bound)"
((mthr <= wthr + 1)) && ok "threads flat ($wthr, then at most $mthr)" || bad "threads grew from $wthr to $mthr"

sid=$("$hwpmc" profiles --json | python3 -c 'import json,sys; print(next(p["status"]["session"] for p in json.load(sys.stdin)["profiles"] if p["name"] == "all"))')
"$hwpmc" stop "$sid" > "$tmp/stop.out" 2>&1
samples=$(sed -n 's/.*: \([0-9]*\) samples, \([0-9]*\) lost.*/\1/p' "$tmp/stop.out")
kill -TERM $dpid; wait $dpid; rc=$?; dpid=
[[ $rc == 0 ]] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit $rc"

for p in all kept; do
	n=0 broken=0
	for f in "$state/profiles/$p"/*.pmclog; do
		n=$((n + 1))
		"$hwpmc" dump --summary "$f" > "$tmp/s" 2>&1
		grep -q "; complete$" "$tmp/s" || { broken=$((broken + 1)); echo "# $f: $(tail -1 "$tmp/s")"; }
	done
	[[ $broken == 0 ]] && ok "$p: each of its $n files is whole" || bad "$p: $broken of $n files are not whole"
done
nall=$(ls "$state/profiles/all"/*.pmclog | wc -l)
((nall >= 4)) && ok "all: $((nall - 1)) rotations" || bad "all: only $nall files"
sum=0
for f in "$state/profiles/all"/*.pmclog; do
	c=$("$hwpmc" dump --summary "$f" | grep -o 'callchain [0-9]*' | awk '{print $2}')
	sum=$((sum + ${c:-0}))
done
[[ -n "$samples" && $sum == "$samples" ]] && ok "all: $sum callchains in $nall files = the $samples samples counted: none lost at rotation" ||
	bad "all: files hold $sum callchains, the session counted '$samples'"
kept=0
newest=$(ls -t "$state/profiles/kept"/*.pmclog | head -1)
for f in "$state/profiles/kept"/*; do
	[[ "$f" == "$newest"* ]] && continue
	kept=$((kept + $(stat -c %s "$f")))
done
((kept <= 256 * 1024)) && ok "kept: its closed files take $kept bytes, within retain_bytes 256K" || bad "kept: $kept bytes kept"
grep -q "retention deleted" "$tmp/daemon.log" && ok "kept: retention deleted files" || bad "kept: retention never ran"

echo "# $pass passed, $fail failed"
[[ $fail == 0 ]]
