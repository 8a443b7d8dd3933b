#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# hwpmc report over several logs read as one profile (rotated profiles, issue 14):
# three recordings of a known workload (software event cpu-clock, the real hwpmcd
# on a private socket) in one directory, named against their time order. The
# report of the directory must count exactly the sum of the files' samples, take
# the files in INITIALIZE order, cut at the right file with absolute --since and
# --until, keep everything with --since -1h and refuse an empty window, read a
# torn last file up to its last whole record, refuse bad times, and resolve the
# same function in every file by that file's own mappings. Counts are compared
# with `hwpmc dump --json` and per-file reports, never with thresholds.
# Needs root (perf_event_open): 77 otherwise.
# usage: test-report-multi.sh BUILD_DIR SRC_DIR
set -uo pipefail
build=$1 src=$2
hwpmcd=$build/src/daemon/hwpmcd hwpmc_bin=$build/src/tools/hwpmc
corpus=$build/tests/workloads/corpus
. "$src/tests/integration/harness.sh"
harness_init "perf_event_open of a command"
report() { "$hwpmc_bin" report "$@"; }
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"; }
reported() { report --json "$@" > "$tmp/r.json" 2> "$tmp/r.err" && field "$tmp/r.json" "j['header']['reported']"; }

NOTIFY_SOCKET= "$hwpmcd" --socket "$sock" --state-dir "$tmp/state" --foreground 2> "$tmp/daemon.log" &
dpid=$!
for _ in $(seq 200); do [[ -S "$sock" ]] && break; sleep 0.05; done
[[ -S "$sock" ]] && ok "daemon listening" || { bad "no control socket"; cat "$tmp/daemon.log"; exit 1; }

# Three recordings, each of its own copy of the program (other paths, other load
# addresses), named c, a, b in time order. The pauses only put a whole second of
# the wall clock between two files, for the absolute --since/--until below.
dir=$tmp/profiles
mkdir -p "$dir" "$tmp/bin"
i=0
for name in c a b; do
	cp "$corpus/hwpmc-corpus-pie" "$tmp/bin/prog-$name"
	"$hwpmc_bin" record -o "$dir/$name.pmclog" -F 499 -- "$tmp/bin/prog-$name" chain 0.4 \
		> /dev/null 2> "$tmp/rec-$name.err" || bad "record $name: $(tail -2 "$tmp/rec-$name.err")"
	i=$((i + 1))
	[[ $i -lt 3 ]] && sleep 1.2
done
echo "not a log" > "$dir/notes.txt"
for name in c a b; do
	"$hwpmc_bin" dump --json "$dir/$name.pmclog" > "$tmp/$name.dump" || bad "dump $name"
done
# samples, INITIALIZE wall ns, last record wall ns of a dump
facts() {
	python3 -c "
import json,sys
n=0; start=None; t0=None; last=0
for line in open(sys.argv[1]):
    r=json.loads(line)
    if r.get('type')=='initlog': start=r['ts_sec']*10**9+r['ts_nsec']; t0=r['tsc']
    if r.get('type')=='callchain': n+=1
    if 'tsc' in r and t0 is not None: last=max(last, start+r['tsc']-t0)
print(n, start, last)" "$1"
}
read -r nc sc lc < <(facts "$tmp/c.dump")
read -r na sa la < <(facts "$tmp/a.dump")
read -r nb sb lb < <(facts "$tmp/b.dump")
[[ $nc -gt 0 && $na -gt 0 && $nb -gt 0 ]] && ok "three recordings: $nc, $na, $nb samples" ||
	bad "recordings: $nc, $na, $nb samples"
[[ $sc -lt $sa && $sa -lt $sb ]] && ok "recorded in the order c, a, b" || bad "INITIALIZE times $sc $sa $sb"

# 1. The directory is the sum of its files, in time order.
sum=$((nc + na + nb))
per=0
for name in c a b; do per=$((per + $(reported "$dir/$name.pmclog"))); done
[[ $per == "$sum" ]] && ok "per-file reports count the dumps' $sum samples" || bad "per-file reports: $per of $sum"
got=$(reported "$dir")
[[ "$got" == "$sum" ]] && ok "report DIR: $got samples, the sum of the files" || bad "report DIR: $got, want $sum ($(head -2 "$tmp/r.err"))"
order=$(field "$tmp/r.json" "' '.join(f.split('/')[-1] for f in j['header']['files'])")
[[ "$order" == "c.pmclog a.pmclog b.pmclog" ]] && ok "files taken in INITIALIZE order, not by name: $order" ||
	bad "file order: '$order'"
span=$(field "$tmp/r.json" "j['header']['time_span']['start'] + ' ' + j['header']['time_span']['end']")
[[ "$span" == 20*Z\ 20*Z ]] && ok "--json time_span: $span" || bad "--json time_span: '$span'"
got=$(reported "$dir/b.pmclog" "$dir/c.pmclog" "$dir/a.pmclog")
order=$(field "$tmp/r.json" "' '.join(f.split('/')[-1] for f in j['header']['files'])")
[[ "$got" == "$sum" && "$order" == "c.pmclog a.pmclog b.pmclog" ]] &&
	ok "files as arguments: time order whatever the argument order" || bad "files as arguments: $got, '$order'"
report -v --top "$dir" > "$tmp/top.txt" 2> "$tmp/err"
grep -q "^# covers: 3 files ($dir/c.pmclog .. $dir/b.pmclog), $sum samples from 20.*Z to 20.*Z$" "$tmp/top.txt" &&
	ok "--top header names the files, the span and the samples" || bad "--top header: $(grep covers "$tmp/top.txt")"
grep -q "^# hwpmc report of 3 files" "$tmp/top.txt" && ok "--top header: 3 files" || bad "--top: $(head -1 "$tmp/top.txt")"
report --callgraph "$dir" > "$tmp/graph.txt" 2> /dev/null
grep -q "^# covers: 3 files" "$tmp/graph.txt" && ok "--callgraph header names the files" || bad "--callgraph header"
report --folded "$dir" > "$tmp/folded" 2> "$tmp/folded.err"
fsum=$(awk '{ s += $NF } END { print s }' "$tmp/folded")
[[ "$fsum" == "$sum" ]] && ! grep -qv ' [0-9]*$' "$tmp/folded" &&
	ok "--folded: pure stacks summing to $sum" || bad "--folded: sum $fsum"
grep -q "^hwpmc: report of 3 files .*, $sum samples from" "$tmp/folded.err" &&
	ok "--folded: the coverage line on stderr" || bad "--folded stderr: '$(head -2 "$tmp/folded.err")'"
report --flame "$tmp/f.svg" "$dir" 2> /dev/null
grep -q "3 files (.*), $sum samples from 20" "$tmp/f.svg" && ok "--flame: the subtitle names the span" ||
	bad "--flame subtitle"

# 2. The same function in every file, each resolved by its own file's mappings.
leaf=0
for name in c a b; do
	report --json --limit 0 "$dir/$name.pmclog" > "$tmp/$name.json"
	n=$(field "$tmp/$name.json" "sum(t['self'] for t in j['events'][0]['top'] if t['function']=='c_leaf')")
	[[ $n -gt 0 ]] || bad "file $name: no c_leaf"
	leaf=$((leaf + n))
done
report --json --limit 0 "$dir" > "$tmp/all.json"
got=$(field "$tmp/all.json" "sum(t['self'] for t in j['events'][0]['top'] if t['function']=='c_leaf')")
rows=$(field "$tmp/all.json" "len([t for t in j['events'][0]['top'] if t['function']=='c_leaf'])")
[[ "$got" == "$leaf" ]] && ok "c_leaf of three images at three addresses: $got samples, the files' sum" ||
	bad "c_leaf: $got, files $leaf"
[[ "$rows" == 3 ]] && ok "c_leaf: one row per image (prog-c, prog-a, prog-b)" || bad "c_leaf rows: $rows"
nev=$(field "$tmp/all.json" "len(j['events'])")
[[ "$nev" == 1 ]] && ok "events merged by name across files" || bad "$nev events"

# 3. Time windows: absolute cuts between files, relative, empty.
iso() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
cut1=$(( (lc / 1000000000) + 1 )) cut2=$(( (la / 1000000000) + 1 ))
[[ $((cut1 * 1000000000)) -lt $sa && $((cut2 * 1000000000)) -lt $sb ]] ||
	bad "no whole second between the files ($lc $sa, $la $sb)"
got=$(reported --since "$(iso $cut1)" "$dir")
[[ "$got" == $((na + nb)) ]] && ok "--since $(iso $cut1): files a and b, $got samples" || bad "--since cut1: $got, want $((na + nb))"
n=$(field "$tmp/r.json" "len(j['header']['files'])")
skipped=$(field "$tmp/r.json" "j['header']['files_skipped']")
[[ "$n" == 2 && "$skipped" == 1 ]] && ok "--since: the file before the window is not read" || bad "--since: $n read, $skipped skipped"
got=$(reported --until "$(iso $cut1)" "$dir")
[[ "$got" == "$nc" ]] && ok "--until $(iso $cut1): file c, $got samples" || bad "--until cut1: $got, want $nc"
got=$(reported --since "$(iso $cut1)" --until "$(iso $cut2)" "$dir")
[[ "$got" == "$na" ]] && ok "--since/--until around file a: $got samples" || bad "window a: $got, want $na"
local_cut=$(date -d "@$cut2" '+%Y-%m-%d %H:%M:%S')
got=$(reported --since "$local_cut" "$dir")
[[ "$got" == "$nb" ]] && ok "--since '$local_cut' (local time): file b, $got samples" || bad "local --since: $got, want $nb"
got=$(reported --since -1h "$dir")
[[ "$got" == "$sum" ]] && ok "--since -1h keeps all $sum samples" || bad "--since -1h: $got"
report --since -0s "$dir" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 1 ]] && grep -q "no file has samples in the window --since -0s" "$tmp/err" &&
	ok "--since -0s: exit 1, no file in the window" || bad "--since -0s: exit $rc, '$(head -1 "$tmp/err")'"
report --since 2099-01-01T00:00:00Z "$dir/c.pmclog" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 1 ]] && grep -q "no file has samples in the window" "$tmp/err" &&
	ok "a future --since on one file: exit 1, said" || bad "future --since: exit $rc, '$(head -1 "$tmp/err")'"
report --until 2000-01-01T00:00:00Z "$dir" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 1 ]] && grep -q "no file has samples in the window" "$tmp/err" &&
	ok "a past --until: exit 1, said" || bad "past --until: exit $rc, '$(head -1 "$tmp/err")'"
got=$(reported --since 0 "$dir")
[[ "$got" == "$sum" ]] && ok "--since 0 (seconds from the start) keeps all" || bad "--since 0: $got"
for t in yesterday -5 2026-13-01T00:00Z 25:00 "2026-12-05 20:15 +2"; do
	report --since "$t" "$dir" > /dev/null 2> "$tmp/err"; rc=$?
	[[ $rc == 2 ]] && grep -q -- "--since: '$t' is not a time: give seconds from the start of the log" "$tmp/err" &&
		ok "--since '$t' refused with the accepted forms" || bad "--since '$t': exit $rc, '$(head -1 "$tmp/err")'"
done
report --until 1x "$dir" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 2 ]] && grep -q -- "--until: '1x' is not a time" "$tmp/err" && ok "--until '1x' refused" || bad "--until 1x: exit $rc"

# 4. A torn last file (the one being written): read up to its last whole record.
torn=$tmp/torn
mkdir -p "$torn"
cp "$dir"/*.pmclog "$torn/"
cut=$(python3 -c "
import json,sys
recs=[json.loads(l) for l in open(sys.argv[1]) if '\"offset\"' in l]
cc=[r for r in recs if r.get('type')=='callchain']
r=cc[len(cc)//2]
print(r['offset'] + r['length'] // 2)" "$tmp/b.dump")
truncate -s "$cut" "$torn/b.pmclog"
"$hwpmc_bin" dump --json --lenient "$torn/b.pmclog" > "$tmp/torn.dump" 2> /dev/null
read -r nt _ _ < <(facts "$tmp/torn.dump")
[[ $nt -gt 0 && $nt -lt $nb ]] || bad "torn file: $nt of $nb samples in the dump"
got=$(reported "$torn")
[[ "$got" == $((nc + na + nt)) ]] && ok "torn last file: $got samples, up to its last whole record" ||
	bad "torn: $got, want $((nc + na + nt))"
grep -q "torn" "$tmp/r.err" && ok "torn last file: said on stderr" || bad "torn: '$(head -2 "$tmp/r.err")'"
status=$(field "$tmp/r.json" "j['header']['status']")
[[ "$status" == *"1 torn"* ]] && ok "torn last file: the status says so ($status)" || bad "torn status: '$status'"

# 5. Single files and standard input as before; empty directories refused.
got=$(report --json - < "$dir/a.pmclog" | python3 -c "import json,sys; print(json.load(sys.stdin)['header']['reported'])")
[[ "$got" == "$na" ]] && ok "standard input: $got samples" || bad "stdin: $got, want $na"
mkdir -p "$tmp/empty"
report "$tmp/empty" > /dev/null 2> "$tmp/err"; rc=$?
[[ $rc == 1 ]] && grep -q "no \*.pmclog file in this directory" "$tmp/err" && ok "empty directory: exit 1, said" ||
	bad "empty directory: exit $rc, '$(head -1 "$tmp/err")'"
: > "$torn/z-new.pmclog"
got=$(reported "$torn")
[[ "$got" == $((nc + na + nt)) ]] && grep -q "z-new.pmclog: no INITIALIZE record.*, ignoring" "$tmp/r.err" &&
	ok "an empty file just created is ignored, with a warning" || bad "empty file: $got, '$(head -2 "$tmp/r.err")'"

kill -TERM "$dpid"; wait "$dpid"; rc=$?; dpid=
[[ $rc == 0 ]] && ok "daemon exit 0 on SIGTERM" || bad "daemon exit $rc"
echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
