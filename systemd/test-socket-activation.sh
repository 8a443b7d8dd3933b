#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# The real hwpmcd started the way hwpmcd.service starts it: the listening socket
# passed as fd 3 with LISTEN_FDS=1, LISTEN_PID=<its pid>, LISTEN_FDNAMES, and
# NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID pointing at a datagram socket of
# this test.  Checks: clients work over the passed socket (status, record, dump),
# the daemon never binds a socket of its own then, READY=1, WATCHDOG=1 at least
# twice in 3 s with WATCHDOG_USEC=2 s (hwpmcd.service has WatchdogSec=30s: a
# daemon that does not ping is killed), STOPPING=1 and exit 0 on SIGTERM, every
# notification from the main pid (NotifyAccess=main), the passed socket left in
# place; a LISTEN_PID of another process ignored; fd 3 that is no listening
# socket refused; the example configuration accepted.
# systemd-socket-activate(1) passes the socket when it is installed (it starts
# the daemon at the first connection, as systemd does); a python3 wrapper that
# binds, listens, dup2()s to fd 3, sets the variables and execs does it too.
# Needs root (system-wide perf_event_open): exits 77 otherwise.
# usage: test-socket-activation.sh BUILD_DIR SRC_DIR
set -euo pipefail
build=$1 src=$2
hwpmcd=$build/src/daemon/hwpmcd hwpmc=$build/src/tools/hwpmc
# shellcheck source=../tests/integration/harness.sh disable=SC2154 # tmp, sock: harness_init
. "$src/tests/integration/harness.sh"
harness_init "system-wide perf_event_open"
command -v python3 > /dev/null || { echo "skip: python3 is not installed"; exit 77; }
# Numbered TAP lines; the harness's counters.
ok() { pass=$((pass + 1)); echo "ok $((pass + fail)) - $1"; }
bad() { fail=$((fail + 1)); echo "not ok $((pass + fail)) - $1"; }
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill -9 "$p" 2> /dev/null || true
		wait "$p" 2> /dev/null || true
	done
	harness_cleanup
}
trap cleanup EXIT

# wait_for FILE REGEX SECONDS: poll with a deadline (never an unbounded sleep loop).
wait_for() {
	local end=$((SECONDS + $3))
	while ((SECONDS < end)); do
		grep -qE "$2" "$1" 2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}
# wait_exit PID SECONDS: the exit status of our child PID, or 124 at the deadline.
wait_exit() {
	local end=$((SECONDS + $2))
	while ((SECONDS < end)); do
		if ! kill -0 "$1" 2> /dev/null; then
			wait "$1" && return 0 || return $?
		fi
		sleep 0.1
	done
	return 124
}

# The sd_notify end of systemd: one line per datagram, "SECONDS PID MESSAGE" with
# the sender's pid from SCM_CREDENTIALS (what NotifyAccess=main looks at) and
# SECONDS the wall clock, comparable with date +%s.%N here.
notify_listen() { # PATH LOG
	python3 - "$1" "$2" <<'PY' &
import os, socket, struct, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
s.settimeout(1)
out = open(sys.argv[2], "a", buffering=1)
t0 = time.monotonic()
while time.monotonic() - t0 < 50:                   # never outlive the test
    try:
        msg, anc, _, _ = s.recvmsg(4096, socket.CMSG_SPACE(12))
    except socket.timeout:
        continue
    pid = -1
    for level, kind, data in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
            pid = struct.unpack("iII", data[:12])[0]
    for m in msg.decode(errors="replace").split("\n"):
        if m:
            out.write("%.3f %d %s\n" % (time.time(), pid, m))
PY
	pids+=($!)
	local end=$((SECONDS + 10))
	while [[ ! -S $1 ]] && ((SECONDS < end)); do sleep 0.05; done
}

# activate SOCKET_PATH PROG ARGS...: what systemd does for hwpmcd.socket: bind,
# listen, the socket as fd 3, LISTEN_FDS=1, LISTEN_PID=getpid() (exec keeps the
# pid), LISTEN_FDNAMES, WATCHDOG_PID when WATCHDOG_USEC is set; then exec.
# Run it in the background only (`activate ... &`): it execs, so $! is the daemon.
activate() {
	exec python3 - "$@" <<'PY'
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o660); s.listen(64)
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)                 # SD_LISTEN_FDS_START
os.set_inheritable(3, True)                # python's sockets are O_CLOEXEC
os.environ.update(LISTEN_FDS="1", LISTEN_PID=str(os.getpid()), LISTEN_FDNAMES="control")
if "WATCHDOG_USEC" in os.environ:
    os.environ["WATCHDOG_PID"] = str(os.getpid())
os.execv(sys.argv[2], sys.argv[2:])
PY
}

# 1. Socket activation as hwpmcd.socket does it.
notify_listen "$tmp/notify" "$tmp/notify.log"
mkdir "$tmp/state"
export NOTIFY_SOCKET=$tmp/notify WATCHDOG_USEC=2000000
if command -v systemd-socket-activate > /dev/null; then
	how=systemd-socket-activate
	# exec keeps the pid: WATCHDOG_PID=$$ and LISTEN_PID are the daemon's.
	bash -c 'export WATCHDOG_PID=$$; exec systemd-socket-activate -l "$0" --fdname=control \
		-E NOTIFY_SOCKET -E WATCHDOG_USEC -E WATCHDOG_PID "$@"' "$sock" \
		"$hwpmcd" --foreground --state-dir "$tmp/state" --socket "$tmp/own-socket" \
		2> "$tmp/daemon.log" &
else
	how="python3 wrapper"
	activate "$sock" "$hwpmcd" --foreground --state-dir "$tmp/state" \
		--socket "$tmp/own-socket" 2> "$tmp/daemon.log" &
fi
dpid=$!
end=$((SECONDS + 10))
while [[ ! -S $sock ]] && ((SECONDS < end)); do sleep 0.05; done

if timeout 10 "$hwpmc" status --socket "$sock" > "$tmp/status.out" 2>&1; then
	ok "$how: hwpmc status over the passed socket"
else
	bad "$how: hwpmc status failed: $(cat "$tmp/status.out" "$tmp/daemon.log")"
fi
if wait_for "$tmp/notify.log" " $dpid READY=1\$" 10; then
	ok "READY=1 from the main pid $dpid"
	t_ready=$(awk '/ READY=1$/ { print $1; exit }' "$tmp/notify.log")
else
	bad "no READY=1 from pid $dpid within 10 s: $(cat "$tmp/notify.log")"
	t_ready=0
fi
[[ ! -e $tmp/own-socket ]] && ok "no socket of its own (--socket ignored with LISTEN_FDS)" ||
	bad "the daemon bound $tmp/own-socket besides the passed socket"

if timeout 20 "$hwpmc" record --socket "$sock" -q -a -d 1 -o "$tmp/sa.pmclog" > "$tmp/rec.out" 2>&1; then
	ok "hwpmc record -a -d 1 over the passed socket"
else
	bad "hwpmc record failed: $(cat "$tmp/rec.out")"
fi
if "$hwpmc" dump --summary "$tmp/sa.pmclog" > "$tmp/dump.out" 2>&1 &&
	grep -q callchain "$tmp/dump.out" && grep -q closelog "$tmp/dump.out"; then
	ok "hwpmc dump reads the log: $(head -c 200 "$tmp/dump.out" | tr '\n' ' ')"
else
	bad "hwpmc dump: $(cat "$tmp/dump.out")"
fi

# The watchdog: at least two pings in the 3 s after READY=1 (every 1 s at half of
# WATCHDOG_USEC).  The record above took part of that window already.
left=$(awk -v t="$t_ready" -v now="$(date +%s.%N)" 'BEGIN { d = t + 3.2 - now; print (d > 0 ? d : 0) }')
sleep "$left"
nwd=$(awk -v t="$t_ready" '$1 > t && $1 <= t + 3 && $3 == "WATCHDOG=1"' "$tmp/notify.log" | wc -l)
if ((nwd >= 2)); then
	ok "WATCHDOG=1 $nwd times in the 3 s after READY=1 (WATCHDOG_USEC=2000000, WATCHDOG_PID=$dpid)"
else
	bad "WATCHDOG=1 $nwd times in the 3 s after READY=1 with WATCHDOG_USEC=2000000 WATCHDOG_PID=$dpid (needs >= 2; hwpmcd.service's WatchdogSec=30s kills a daemon that never pings)"
fi

mainpid=$dpid
kill -TERM "$dpid"
rc=0
wait_exit "$dpid" 10 || rc=$?
[[ $rc == 0 ]] && ok "SIGTERM: exit 0" || bad "SIGTERM: exit $rc: $(tail -3 "$tmp/daemon.log")"
dpid=
wait_for "$tmp/notify.log" " STOPPING=1\$" 3 && ok "STOPPING=1 on SIGTERM" ||
	bad "no STOPPING=1 on SIGTERM: $(cat "$tmp/notify.log")"
others=$(awk -v p="$mainpid" '$2 != p' "$tmp/notify.log" | head -3)
[[ -z $others ]] && ok "every notification came from the main pid (NotifyAccess=main)" ||
	bad "notifications from other pids: $others"
[[ -S $sock ]] && ok "the passed socket is left in place (it belongs to systemd)" ||
	bad "the daemon removed the passed socket $sock"

# 2. A LISTEN_PID of another process: not ours, so the daemon binds --socket.
unset WATCHDOG_USEC
LISTEN_FDS=1 LISTEN_PID=1 "$hwpmcd" --foreground --socket "$tmp/own" --state-dir "$tmp/state" \
	3< /dev/null 2> "$tmp/d2.log" &
dpid=$!
end=$((SECONDS + 10))
while [[ ! -S $tmp/own ]] && ((SECONDS < end)) && kill -0 "$dpid" 2> /dev/null; do sleep 0.05; done
if timeout 10 "$hwpmc" status --socket "$tmp/own" > /dev/null 2>&1; then
	ok "LISTEN_PID of another process: ignored, the daemon listens on --socket"
else
	bad "LISTEN_PID=1: $(cat "$tmp/d2.log")"
fi
kill -TERM "$dpid" 2> /dev/null || true; wait_exit "$dpid" 10 || true; dpid=

# 3. LISTEN_FDS for us but fd 3 is no listening socket: refuse, do not hang.
rc=0
bash -c 'export LISTEN_FDS=1 LISTEN_PID=$$; exec "$@"' sh "$hwpmcd" --foreground \
	--socket "$tmp/own3" --state-dir "$tmp/state" 3< /dev/null 2> "$tmp/d3.log" &
dpid=$!
wait_exit "$dpid" 10 || rc=$?
dpid=
if [[ $rc != 0 && $rc != 124 ]] && grep -q "not a listening socket" "$tmp/d3.log"; then
	ok "fd 3 not a listening socket: exit $rc, '$(grep -m1 -o 'fd 3 is not.*' "$tmp/d3.log")'"
else
	bad "fd 3 = /dev/null with LISTEN_FDS=1: exit $rc: $(cat "$tmp/d3.log")"
fi

# 4. The example configuration with every key set to its documented default.
sed -n 's/^#\([a-z_]* = .*\)$/\1/p' "$src/systemd/hwpmcd.conf.example" |
	grep -v '^socket' > "$tmp/example.conf"
activate "$tmp/sock4" "$hwpmcd" --foreground --config "$tmp/example.conf" \
	--state-dir "$tmp/state" 2> "$tmp/d4.log" &
dpid=$!
end=$((SECONDS + 10))
while [[ ! -S $tmp/sock4 ]] && ((SECONDS < end)); do sleep 0.05; done
if timeout 10 "$hwpmc" status --socket "$tmp/sock4" > /dev/null 2>&1 && ! grep -qi 'warn\|unknown\|error' "$tmp/d4.log"; then
	ok "python3 wrapper + hwpmcd.conf.example with its $(wc -l < "$tmp/example.conf") keys at their defaults: accepted, no warning"
else
	bad "example configuration: $(cat "$tmp/d4.log")"
fi
kill -TERM "$dpid" 2> /dev/null || true; wait_exit "$dpid" 10 || true; dpid=

echo "$pass passed, $fail failed"
[[ $fail == 0 ]]
