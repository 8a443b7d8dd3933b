#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Short libFuzzer run of a harness, seeded from the test data; fails on any
# crash, sanitizer report or differential mismatch, and prints the executions.
# usage: smoke.sh FUZZER DATA_DIR SECONDS
set -euo pipefail
fuzzer=$(realpath "$1") data=$(realpath "$2") secs=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
cp "$data"/*.pmclog "$work/corpus/"
# The hex golden files, as bytes.
for f in "$data"/*.hex; do
	grep -v '^#' "$f" | sed -e 's/^[0-9a-f]*: //' -e 's/  .*//' | xxd -r -p > "$work/corpus/$(basename "$f" .hex)"
done
cd "$work"
if ! "$fuzzer" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
	corpus > fuzz.log 2>&1; then
	tail -60 fuzz.log
	echo "fuzz smoke: FAILED (crash or sanitizer report above)"
	exit 1
fi
runs=$(sed -n 's/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\1 \2/p' fuzz.log)
cov=$(grep -o 'cov: [0-9]*' fuzz.log | tail -1)
echo "fuzz smoke: $(basename "$fuzzer"): ${runs% *} executions in ${runs#* } s, $cov, corpus $(ls corpus | wc -l) inputs, no crash"
