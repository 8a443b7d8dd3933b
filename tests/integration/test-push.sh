#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Always-on profiles' push_url as a fleet runs it: the real hwpmcd sends each
# rotated file to a Pyroscope-compatible ingest endpoint, here a local receiver
# (push_receiver.py on 127.0.0.1) that decodes what it gets as Pyroscope does.
#   - pprof: multipart "profile" part, gzip pprof; `go tool pprof` reads what was
#     received and gives the same functions and counts as `hwpmc report` of the
#     very file it was made of (check_exports.py); the query names the application
#     with its labels, the file's span and the format;
#   - folded: the body is `hwpmc report --folded` of its file, byte for byte;
#   - retries: the receiver answers 503 twice; the file still arrives, counted;
#   - refusal: an HTTP 400 gives the file up at once, with the server's message;
#   - a dead endpoint: retries, then files dropped from the bounded queue, all
#     counted, while the profile goes on rotating (the sampling path never waits);
#   - bad push_* keys are refused with their line; SIGTERM sends what is queued.
# Nothing depends on the machine's speed: every wait is for a state, with a deadline.
# Needs root (system-wide perf_event_open): exits 77 (skip) otherwise.
# usage: test-push.sh BUILD_DIR SRC_DIR   (HWPMCD_WRAPPER="valgrind ..." wraps the daemon)
set -uo pipefail
build=$1 src=$2
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc
demo=$build/tests/workloads/hwpmc-demo
. "$src/tests/integration/harness.sh"
harness_init "system-wide perf_event_open"
trap 'kill $(jobs -p) 2> /dev/null; harness_cleanup' EXIT

# pjq NAME PYTHON-EXPR: EXPR on profile NAME's push object (u) of `hwpmc profiles --json`.
pjq() {
	"$hwpmc" profiles --json 2> /dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
p = next((x for x in d["profiles"] if x["name"] == sys.argv[1]), None)
u = (p or {}).get("status", {}).get("profile", {}).get("push", {})
print(eval(sys.argv[2]))' "$1" "$2" 2> /dev/null
}
pnum() { local v; v=$(pjq "$1" "$2"); echo "${v:-0}"; }
# recv PYTHON-EXPR: EXPR over the receiver's records (rs: a list of dicts).
recv() {
	python3 -c '
import json, sys
rs = [json.loads(l) for l in open(sys.argv[1])] if __import__("os").path.exists(sys.argv[1]) else []
print(eval(sys.argv[2]))' "$rdir/requests.jsonl" "$1"
}

rdir=$tmp/recv
mkdir -p "$rdir"
python3 "$src/tests/integration/push_receiver.py" "$rdir" --fail-first 2 &
wait_for 20 '[[ -s "$rdir/port" ]]' || { bad "the receiver did not start"; exit 1; }
port=$(cat "$rdir/port")
# A port nobody listens on: bound, never listened to, so nothing else takes it.
python3 -c 'import socket, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1], flush=True); time.sleep(3600)' > "$tmp/deadport" &
wait_for 20 '[[ -s "$tmp/deadport" ]]'
deadport=$(cat "$tmp/deadport")

cat > "$tmp/hwpmcd.conf" <<EOF
hwpmc = $hwpmc
EOF
pdir=$tmp/profiles.d state=$tmp/state
mkdir -p "$pdir"
common="events = cpu-clock
callgraph = fp
rotate_seconds = 1
retain_bytes = 1G"
printf '%s\nfreq = 199\npush_url = http://127.0.0.1:%s\npush_labels = env=ci,host=test-1\n' \
	"$common" "$port" > "$pdir/pp.conf"
printf '%s\nfreq = 99\npush_url = http://127.0.0.1:%s/\npush_format = folded\npush_name = foldapp\ncpu_budget_percent = 100\n' \
	"$common" "$port" > "$pdir/fold.conf"
printf '%s\nfreq = 49\npush_url = http://127.0.0.1:%s\npush_name = rejected\n' \
	"$common" "$port" > "$pdir/rej.conf"
printf '%s\nfreq = 49\npush_url = http://127.0.0.1:%s\n' "$common" "$deadport" > "$pdir/dead.conf"

# ---- bad push keys: refused with their line ---------------------------------------
mkdir -p "$tmp/bad.d"
printf 'push_url = ftp://example.org\n' > "$tmp/bad.d/b1.conf"
printf 'push_url = http://x\npush_labels = env=ci,env=prod\n' > "$tmp/bad.d/b2.conf"
printf 'push_labels = a=b\n' > "$tmp/bad.d/b3.conf"
printf 'push_url = http://x\npush_format = json\n' > "$tmp/bad.d/b4.conf"
"$hwpmcd" --config "$tmp/hwpmcd.conf" --profiles-dir "$tmp/bad.d" --check-config > "$tmp/cc.out" 2>&1
rc=$?
if [[ $rc == 1 ]] && grep -q "b1.conf:1: push_url = 'ftp://example.org' is not an http" "$tmp/cc.out" &&
	grep -q "b2.conf:2: push_labels = 'env=ci,env=prod' is not" "$tmp/cc.out" &&
	grep -q "b3.conf:1: push_labels is set, but push_url is not" "$tmp/cc.out" &&
	grep -q "b4.conf:2: push_format = 'json' is not pprof or folded" "$tmp/cc.out"; then
	ok "--check-config refuses bad push keys at their lines"
else
	bad "--check-config (exit $rc): $(cat "$tmp/cc.out")"
fi

# ---- libcurl only for a daemon that pushes ---------------------------------------
# Loaded at the first profile with a push_url (daemon-push.c): a daemon without one
# maps none of its thirty libraries.  Not under a wrapper (valgrind maps its own).
if [[ -z ${HWPMCD_WRAPPER:-} ]]; then
	mkdir -p "$tmp/none.d"
	"$hwpmcd" --config "$tmp/hwpmcd.conf" --socket "$tmp/none.sock" --state-dir "$tmp/none-state" \
		--profiles-dir "$tmp/none.d" --foreground 2> "$tmp/none.log" &
	npid=$!
	if wait_for 30 'HWPMCD_SOCKET=$tmp/none.sock "$hwpmc" sessions > /dev/null 2>&1'; then
		! grep -q libcurl "/proc/$npid/maps" && ok "a daemon without push_url maps no libcurl" ||
			bad "a daemon without push_url maps libcurl: $(grep -c '\.so' "/proc/$npid/maps") mappings of libraries"
	else
		bad "the daemon without profiles did not answer: $(tail -3 "$tmp/none.log")"
	fi
	kill "$npid" 2> /dev/null
	wait "$npid" 2> /dev/null
fi

# ---- the daemon pushes ----------------------------------------------------------
"$demo" 600 > /dev/null &
# A program in a directory only root may enter ($tmp is 0700 too): the push's report
# runs as nobody, and gets its image (and library) from the daemon's broker only.
ro=$tmp/rootonly
mkdir -m 700 "$ro"
cp "$demo" "$ro/hwpmc-demo-ro" && cp "$build/tests/workloads/libhwpmc-demo.so" "$ro/"
"$ro/hwpmc-demo-ro" 600 > /dev/null &
${HWPMCD_WRAPPER:-} "$hwpmcd" --config "$tmp/hwpmcd.conf" --socket "$sock" --state-dir "$state" \
	--profiles-dir "$pdir" --foreground 2> "$tmp/daemon.log" &
dpid=$!
wait_for 30 '"$hwpmc" sessions > /dev/null 2>&1' && ok "daemon up" || { bad "daemon did not answer"; cat "$tmp/daemon.log"; exit 1; }
if [[ -z ${HWPMCD_WRAPPER:-} ]]; then
	grep -q libcurl "/proc/$dpid/maps" && ok "a daemon with push_url profiles has loaded libcurl" ||
		bad "no libcurl in the pushing daemon's mappings"
fi
if wait_for 240 '(( $(pnum pp "u[\"sent\"]") >= 3 && $(pnum fold "u[\"sent\"]") >= 3 && $(pnum rej "u[\"failed\"]") >= 1 && $(pnum dead "u[\"dropped\"]") >= 1 ))'; then
	ok "pp and fold sent 3 files each, rej was refused, dead dropped files"
else
	bad "push counters: pp $(pjq pp u) fold $(pjq fold u) rej $(pjq rej u) dead $(pjq dead u)"
fi
# What the pushes cost is counted, and a budget charges it to its profile.
[[ $(pjq pp 'u["cpu_seconds"] > 0') == True && $(pjq fold 'u["cpu_seconds"] > 0') == True ]] &&
	ok "push CPU counted (pp $(pjq pp 'u["cpu_seconds"]') s, fold $(pjq fold 'u["cpu_seconds"]') s)" ||
	bad "push cpu_seconds: pp $(pjq pp u) fold $(pjq fold u)"
[[ $(pjq fold 'p["status"]["profile"]["budget"]["side_percent"] > 0') == True ]] &&
	ok "fold's budget charges its pushes: side_percent $(pjq fold 'p["status"]["profile"]["budget"]["side_percent"]')" ||
	bad "fold's budget: $(pjq fold 'p["status"]["profile"].get("budget")')"

"$hwpmc" profiles > "$tmp/prof.txt" 2> /dev/null
grep -Eq "push http://127.0.0.1:$port \(pprof\): [1-9][0-9]* sent \([0-9.]+[KMG]?\), [0-9]+ queued, [0-9]+ retries, [0-9]+ failed, [0-9]+ dropped; [0-9]+\.[0-9]{2} s of CPU$" "$tmp/prof.txt" &&
	grep -q "push: last error: " "$tmp/prof.txt" &&
	ok "hwpmc profiles shows each profile's push and its last error" || bad "table: $(cat "$tmp/prof.txt")"

# The queries: the application, its labels, the span, the format.
q=$(recv '" ".join(sorted({r["query"].get("name", "") for r in rs}))')
[[ "$q" == "foldapp.cpu{} pp.cpu{env=ci,host=test-1} rejected.cpu{}" ]] && ok "names: $q" || bad "names: $q"
[[ $(recv 'all(r["path"] == "/ingest" and r["query"].get("spyName") == "hwpmcd" and int(r["query"]["from"]) < int(r["query"]["until"]) and r["agent"].startswith("hwpmcd/") for r in rs)') == True ]] &&
	ok "every request: POST /ingest, spyName, from < until, User-Agent" || bad "requests: $(head -c 2000 "$rdir/requests.jsonl")"
[[ $(recv 'all((r["query"]["format"] == "folded") == r["query"]["name"].startswith("foldapp") and r["query"].get("sampleRate") == {"p": "199", "f": "99", "r": "49"}[r["query"]["name"][0]] for r in rs)') == True ]] &&
	ok "format and sampleRate per profile" || bad "formats: $(recv '[(r["query"]["name"], r["query"]["format"], r["query"].get("sampleRate")) for r in rs]')"

# Retries: the receiver's first two answers were 503; pp or fold tried again and got through.
retries=$(( $(pnum pp 'u["retries"]') + $(pnum fold 'u["retries"]') ))
n503=$(recv 'sum(r["status"] == 503 for r in rs)')
[[ $n503 == 2 && $retries -ge 2 ]] && ok "two 503 answers, $retries retries counted" || bad "503s $n503, retries $retries"
# Every file the server took is counted sent, and no more.
for p in pp:pp fold:foldapp; do
	name=${p%%:*} app=${p#*:}
	# The receiver records a file before it answers, and one file is in flight at
	# most: at any time sent <= taken <= sent + 1.  So, looking at sent, taken, sent:
	s1=$(pnum "$name" 'u["sent"]')
	got=$(recv "sum(r['status'] == 200 and r['query']['name'].startswith('$app.') for r in rs)")
	s2=$(pnum "$name" 'u["sent"]')
	(( s1 <= got && got <= s2 + 1 && s1 > 0 )) && ok "$name: $s1..$s2 sent, the server took $got" ||
		bad "$name: $s1..$s2 sent, the server took $got"
done
# A refusal is given up at once (no retry), with the server's reason.
[[ $(pnum rej 'u["retries"]') == 0 ]] && grep -q "profile rej: push of .* given up after 1 tries: HTTP 400 from the server: application rejected.cpu{} is not allowed" "$tmp/daemon.log" &&
	ok "rej: HTTP 400 given up without retries, the server's message in the journal" || bad "rej: $(pjq rej u)"
# A dead endpoint: retried, then dropped from its bounded queue; its profile still rotates.
# Its turn comes after the files queued before it, later on a slow machine: waited for.
wait_for 240 '(( $(pnum dead "u[\"retries\"]") >= 1 ))'
dead_files=$(pnum dead 'p["status"]["profile"]["files"]' 2> /dev/null)
files0=$("$hwpmc" profiles --json | python3 -c 'import json,sys; print(next(p for p in json.load(sys.stdin)["profiles"] if p["name"] == "dead")["status"]["profile"]["files"])')
pjq dead 'u["last_error"]' | grep -Eqi "connect|refused|queue full" && (( $(pnum dead 'u["retries"]') >= 1 )) &&
	(( $(pnum dead 'u["queued"]') <= 8 )) &&
	ok "dead: retries $(pnum dead 'u["retries"]'), dropped $(pnum dead 'u["dropped"]'), queued $(pnum dead 'u["queued"]') (at most 8)" ||
	bad "dead: $(pjq dead u)"
wait_for 60 '(( $("$hwpmc" profiles --json | python3 -c "import json,sys; print(next(p for p in json.load(sys.stdin)[\"profiles\"] if p[\"name\"] == \"dead\")[\"status\"][\"profile\"][\"files\"])") > files0 + 2 ))' &&
	ok "dead goes on rotating while its pushes fail (${dead_files:-?} -> more files)" || bad "dead stopped rotating at $files0 files"

# ---- what arrived, read by its consumers -------------------------------------------
# pprof: `go tool pprof` on what the server got, against `hwpmc report` of the file it
# came from (the one whose name has the request's `from` as its UTC stamp).
# Two files may start in one second (rotations bunched on a busy machine): STAMP.pmclog
# and STAMP-N.pmclog; the profile is checked against the one it matches, else the first.
# (fold reads from a redirection, not a pipe: its counts must reach this shell.)
checked=0
for n in $(recv '" ".join(str(r["n"]) for r in rs if r["status"] == 200 and r["query"]["format"] == "pprof")'); do
	from=$(recv "next(r['query']['from'] for r in rs if r['n'] == $n)")
	stamp=$(date -u -d "@$from" +%Y%m%dT%H%M%SZ)
	seen=
	for f in "$state/profiles/pp/pp-$stamp.pmclog" "$state/profiles/pp/pp-$stamp"-[0-9]*.pmclog; do
		[[ -e "$f" ]] || continue
		# a push's pprof has no DWARF lines (--pprof-no-lines): the plain report's functions
		"$hwpmc" report --json "$f" > "$tmp/r$n.json" 2> /dev/null || continue
		# A system-wide file samples other tests' programs, which they delete: the push
		# named their functions, this later report cannot.  Such a file is not compared.
		gone=$(python3 -c "
import json, os, re, sys
j = json.load(open(sys.argv[1]))
print(' '.join(sorted({t['image'] for e in j['events'] for t in e['top']
                       if t['image'].startswith('/') and not os.path.exists(t['image'])
                       and re.search(r'\+0x[0-9a-f]+$', t['function'])}))[:200])" "$tmp/r$n.json")
		if [[ -n $gone ]]; then
			echo "# pprof #$n ($(basename "$f")): not compared, it has samples of images deleted since: $gone"
			continue
		fi
		python3 "$src/tests/integration/check_exports.py" "$tmp/r$n.json" --pprof "$rdir/$n.pb.gz" \
			> "$tmp/exp$n.out" 2>&1
		[[ -z $seen ]] && { seen=$f; cp "$tmp/exp$n.out" "$tmp/exp$n.first"; }
		grep -q "^not ok" "$tmp/exp$n.out" || { seen=$f; cp "$tmp/exp$n.out" "$tmp/exp$n.first"; break; }
	done
	[[ -n $seen ]] || continue
	fold "pprof #$n ($(basename "$seen"))" < "$tmp/exp$n.first"
	checked=$((checked + 1))
	((checked >= 2)) && break
done
((checked >= 1)) && ok "$checked received pprof profiles read by go tool pprof" || bad "no pprof request matched a file"
# folded: the body is the report's own --folded output of its file.
# folded_same N...: of the received folded bodies N, how many are (same) and are not
# (diff) `hwpmc report --folded` of the fold file their request's `from` names.
# Two files may start in one second (a reload ends a session and starts the next):
# the second is STAMP-1.pmclog, and a body is the report of one of them.
folded_same() {
	local n from f stamp hit seen
	same=0 diff=0
	for n in "$@"; do
		from=$(recv "next(r['query']['from'] for r in rs if r['n'] == $n)")
		stamp=$(date -u -d "@$from" +%Y%m%dT%H%M%SZ)
		hit= seen=
		for f in "$state/profiles/fold/fold-$stamp.pmclog" "$state/profiles/fold/fold-$stamp"-[0-9]*.pmclog; do
			[[ -e "$f" ]] || continue
			seen=$f
			"$hwpmc" report --folded "$f" > "$tmp/now.folded" 2> /dev/null
			cmp -s "$tmp/now.folded" "$rdir/$n.folded" && { hit=$f; break; }
		done
		[[ -n $seen ]] || continue # retention took it
		if [[ -n $hit ]]; then
			same=$((same + 1))
		else
			diff=$((diff + 1))
			# what differs, for whoever reads a failure: < the report now, > the body
			echo "# body $n is the report of no fold-$stamp*.pmclog now; of $(basename "$seen"):"
			diff "$tmp/now.folded" "$rdir/$n.folded" | grep '^[<>]' | head -4 | cut -c1-300 | sed 's/^/#   /'
		fi
	done
}
folded_same $(recv '" ".join(str(r["n"]) for r in rs if r["status"] == 200 and r["query"]["format"] == "folded")')
((same >= 1 && diff == 0)) && ok "folded: $same bodies are hwpmc report --folded of their files" ||
	bad "folded: $same the same, $diff different"
# ---- JIT maps of a profile, pushed ------------------------------------------------
# The daemon keeps node's JIT map and copies it beside each file before that file is
# pushed (FILE.jit/), so the server gets JavaScript names.  rej, dead and pp go first
# (their queues would be ahead of fold's files), so that the push thread has only the
# files queued before and fold's to make, and fold
# rotates every 20 s from now on: however slow a push is here (a busy machine,
# valgrind's daemon, ASan), a file of fold's is not dropped before 8 more of fold's
# come (160 s), so the file with node's samples is pushed.
rm "$pdir/rej.conf" "$pdir/dead.conf" "$pdir/pp.conf"
sed -i 's/^rotate_seconds = 1$/rotate_seconds = 20/' "$pdir/fold.conf"
"$hwpmc" profiles reload > /dev/null 2>&1
wait_for 60 '[[ "$(pjq dead "p")" == None && "$(pjq rej "p")" == None && "$(pjq pp "p")" == None ]]' ||
	bad "rej, dead and pp still listed after reload"
wait_for 60 '[[ "$(pjq fold "p and p[\"rotate_seconds\"] == 20 and p[\"state\"]")" == running ]]' ||
	bad "fold did not run again with rotate_seconds = 20: $(pjq fold p)"
node_ok=
if command -v node > /dev/null; then
	(cd "$tmp" || exit; node --perf-basic-prof "$src/tests/workloads/jit-hot.js" 3 & p=$!; wait $p
		rm -f /tmp/perf-$p.map "$tmp"/isolate-*.log; echo done > "$tmp/node.done") &
	node_ok=yes
fi
if [[ -n $node_ok ]]; then
	wait_for 120 '[[ -e "$tmp/node.done" ]]' || bad "node did not end"
	# The file of node's last samples is pushed after the next rotation (20 s), and
	# the files queued before it.
	if wait_for 360 'grep -qs "JS:[^;]*hwpmcJit" "$rdir"/*.folded'; then
		n=$(grep -ls "JS:[^;]*hwpmcJit" "$rdir"/*.folded | wc -l)
		ok "node's JavaScript functions reached the server by name ($n folded bodies)"
		# Each is its file's report with the maps beside it: copied before the push.
		folded_same $(grep -ls "JS:[^;]*hwpmcJit" "$rdir"/*.folded | xargs -n1 basename | sed 's/\.folded$//')
		((same >= 1 && diff == 0)) && ok "those bodies are their files' reports, JIT maps included ($same)" ||
			bad "JIT bodies: $same as their files' reports, $diff not"
	else
		bad "no pushed body names node's JavaScript: $(ls "$state"/profiles/fold/*.jit 2>&1 | head -3)"
		# what to look at: fold's files, what reached the server of them, fold's status
		echo "# fold's files: $(cd "$state/profiles/fold" 2> /dev/null && ls -- *.pmclog | tr '\n' ' ')"
		echo "# fold's bodies received (from, JS names): $(recv '" ".join("%s:%s" % (__import__("time").strftime("%H%M%S", __import__("time").gmtime(r["query"]["from"])), __import__("os").system("grep -qs JS: " + sys.argv[1].rsplit("/", 1)[0] + "/%d.folded" % r["n"]) == 0) for r in rs if r["status"] == 200 and r["query"]["name"].startswith("foldapp."))')"
		echo "# fold's push status: $(pjq fold u)"
	fi
	ls "$state"/profiles/fold/*.pmclog.jit/perf-*.map > /dev/null 2>&1 &&
		ok "the profile's files have their JIT maps beside them (FILE.jit/)" || bad "no FILE.jit/perf-PID.map"
else
	echo "# node is not installed (scripts/bootstrap installs nodejs): JIT maps of profiles not checked"
fi
# The program only root may reach is named in what was pushed (its functions, by the
# report as nobody); the bodies are their files' reports by root, as checked above.
if wait_for 120 'grep -qs "^hwpmc-demo-ro;.*hot_leaf" "$rdir"/*.folded'; then
	ok "a program in a directory only root may enter: its functions pushed by name ($(grep -ls "^hwpmc-demo-ro;.*hot_leaf" "$rdir"/*.folded | wc -l) bodies)"
else
	bad "no pushed body names hwpmc-demo-ro's functions: $(grep -hs "^hwpmc-demo-ro;" "$rdir"/*.folded | head -2)"
fi
samples=$(recv 'min(r.get("samples", 0) for r in rs if r["status"] == 200)')
((samples > 0)) && ok "every accepted body holds samples (at least $samples)" || bad "an accepted body without samples"

# ---- SIGTERM: what is queued is sent, then the daemon exits 0 ----------------------
before=$(recv 'sum(r["status"] == 200 for r in rs)')
kill -TERM "$dpid"
wait "$dpid"
rc=$?
dpid=
after=$(recv 'sum(r["status"] == 200 for r in rs)')
[[ $rc == 0 ]] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit $rc: $(tail -5 "$tmp/daemon.log")"
((after > before)) && ok "the last files went out at shutdown ($before -> $after accepted)" ||
	bad "nothing sent at shutdown ($before -> $after)"
grep -q "push of .* given up after 1 tries: HTTP 400" "$tmp/daemon.log" && ok "the journal says which files were given up" ||
	bad "no 'given up' line in the daemon's log"

# ---- the push's report: nobody, no capability, a seccomp filter, descriptors 0-3 ----
# A daemon whose `hwpmc` is a wrapper that runs the real report (as the push starts
# it: user nobody, descriptors 0-3, the broker on 3) on a FIFO this test holds
# instead of its FILE: the report confines itself, then waits for its log in
# read(2), and is looked at in /proc meanwhile, whatever the machine's speed.
# (Landlock shows nowhere in /proc: unit-tools-confine checks that layer.)
hold=$(mktemp -d /tmp/hwpmc-push-hold.XXXXXX) # nobody must reach the wrapper: not in $tmp
trap 'kill $(jobs -p) 2> /dev/null; rm -rf "$hold"; harness_cleanup' EXIT
chmod 755 "$hold"
mkfifo -m 644 "$hold/log.fifo"
cp "$hwpmc" "$hold/hwpmc-real" # the build tree may be closed to nobody
printf '#!/bin/bash\n# The push child (user nobody): the real report, its FILE read from a FIFO instead.\nexec %q "${@:1:$#-1}" - < %q\n' \
	"$hold/hwpmc-real" "$hold/log.fifo" > "$hold/hwpmc"
chmod 755 "$hold/hwpmc" "$hold/hwpmc-real"
mkdir -p "$tmp/hold.d"
printf 'hwpmc = %s\n' "$hold/hwpmc" > "$tmp/hold.conf"
printf '%s\nfreq = 49\npush_url = http://127.0.0.1:%s\npush_format = folded\npush_name = holdapp\n' \
	"$common" "$port" > "$tmp/hold.d/hold.conf"
exec 5<> "$hold/log.fifo" # a writer, so that the wrapper's open does not wait
"$hwpmcd" --config "$tmp/hold.conf" --socket "$tmp/hold.sock" --state-dir "$tmp/hold-state" \
	--profiles-dir "$tmp/hold.d" --foreground 2> "$tmp/hold.log" &
hpid=$!
# held: the pid of the hold daemon's report once it waits in read(2) of fd 0 (x86-64 call 0).
held() {
	local p
	for p in $(pgrep -P "$hpid" 2> /dev/null); do
		if [[ $(readlink "/proc/$p/exe") == "$hold/hwpmc-real" &&
			$(cut -d' ' -f1,2 "/proc/$p/syscall" 2> /dev/null) == "0 0x0" ]]; then
			echo "$p"
			return 0
		fi
	done
	return 1
}
if wait_for 300 'held > /dev/null'; then
	rp=$(held)
	st=$(awk '/^(Uid|Gid)/ {printf "%s %s %s %s %s ", $1, $2, $3, $4, $5}
		/^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs|Seccomp):/ {printf "%s %s ", $1, $2}
		/^Groups:/ {printf "Groups:%s ", $2}' "/proc/$rp/status")
	[[ $st == "Uid: 65534 65534 65534 65534 Gid: 65534 65534 65534 65534 Groups: CapInh: 0000000000000000 CapPrm: 0000000000000000 CapEff: 0000000000000000 CapAmb: 0000000000000000 NoNewPrivs: 1 Seccomp: 2 " ]] &&
		ok "the push's report: user nobody, no capability, no new privileges, a seccomp filter" ||
		bad "the push's report: $st"
	[[ $(stat -c %u "/proc/$rp/status") == 0 ]] && ok "the push's report is not dumpable (its /proc files are root's)" ||
		bad "the push's report is dumpable: /proc/$rp/status is uid $(stat -c %u "/proc/$rp/status")'s"
	fds=$(ls "/proc/$rp/fd" | sort -n | paste -sd' ')
	[[ $fds == "0 1 2 3" && $(stat -L -c %F "/proc/$rp/fd/3") == socket ]] &&
		ok "the push's report holds descriptors 0-3 only, 3 the broker's socket" || bad "the push's report holds: $fds"
	cmd=$(tr '\0' ' ' < "/proc/$rp/cmdline")
	[[ $cmd == *" report --confine --broker-fd 3 --no-debuginfod "* ]] && ok "its command: ${cmd:0:160}" ||
		bad "its command: $cmd"
	cat "$(ls "$state"/profiles/fold/*.pmclog | head -1)" >&5
	exec 5>&-
	if wait_for 60 '(( $(recv "sum(r[\"status\"] == 200 and r[\"query\"][\"name\"].startswith(\"holdapp.\") for r in rs)") >= 1 ))'; then
		ok "then its profile was pushed"
	else
		bad "the held report's profile did not arrive: $(tail -3 "$tmp/hold.log")"
	fi
else
	bad "no report of the hold daemon waited for its log: $(tail -5 "$tmp/hold.log")"
	exec 5>&-
fi
kill -TERM "$hpid"
wait "$hpid"

echo "# $pass passed, $fail failed"
[[ $fail == 0 ]]

