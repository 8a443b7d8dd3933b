#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Checks every #include of src/ against the module table of docs/STYLE.md 1:
# which project headers a module may include, which foreign ABIs it may touch,
# and that no module includes another module's private -int.h.
set -uo pipefail
root=$1
fail=0

# Project headers each module may include (beyond common's log.h, common.h, files.h,
# common-open.h and its own).
declare -A allowed=(
	[common]="log.h common.h"
	[pmclog]="pmclog.h pmclog-format.h"
	[collector]="collector.h collector-event.h record.h"
	[maplog]="maplog.h maplog-elf.h maplog-proc.h maplog-jit.h record.h"
	[report]="report.h report-sym.h report-dwarf.h maplog-elf.h maplog-jit.h pmclog.h pmclog-format.h"
	[unwind]="unwind.h record.h maplog.h"
	[filter]="filter.h"
	[tools]="pmclog.h pmclog-format.h maplog.h maplog-elf.h maplog-jit.h report.h report-sym.h report-dwarf.h record.h ctl-protocol.h"
	[daemon]="*"
)
# Foreign headers that only some modules may include.
declare -A owner=(
	["linux/perf_event.h"]="collector"
	["libunwind"]="unwind"
	["jansson.h"]="daemon tools"
	["libelf.h"]="maplog unwind report"
	["gelf.h"]="maplog unwind report"
	["elfutils/libdw.h"]="report"
	["dwarf.h"]="report"
	["curl/curl.h"]="daemon"
	["seccomp.h"]="tools"
	["capstone/"]="tools"
	["zlib.h"]="report tools"
	["systemd/"]="daemon"
	["bpf/"]="filter"
	["linux/bpf"]="filter"
)

include_re='^#include [<"]([^>"]*)[>"]'
for dir in "$root"/src/*/; do
	mod=$(basename "$dir")
	if [[ -z "${allowed[$mod]+x}" ]]; then
		echo "check-includes: src/$mod is not in the module table of STYLE.md"
		fail=1
		continue
	fi
	for f in "$dir"*.[ch]; do
		[[ -e "$f" ]] || continue
		while IFS= read -r line; do
			# A regular expression of bash's own: a sed per line was a fork per
			# #include, 17 s on a quiet machine and past the test's timeout on a busy one.
			[[ $line =~ $include_re ]] || continue
			inc=${BASH_REMATCH[1]}
			rel=${f#"$root"/}
			case "$inc" in
			hwpmcd/*)
				h=${inc#hwpmcd/}
				if [[ "$h" == log.h || "$h" == common.h || "$h" == files.h ||
					"$h" == common-open.h || "${allowed[$mod]}" == "*" ]]; then
					continue
				fi
				if [[ " ${allowed[$mod]} " != *" $h "* ]]; then
					echo "check-includes: $rel: module $mod may not include <$inc>"
					fail=1
				fi
				;;
			*-int.h)
				if [[ ! -e "$dir$inc" ]]; then
					echo "check-includes: $rel: includes another module's private $inc"
					fail=1
				fi
				;;
			*)
				for key in "${!owner[@]}"; do
					if [[ "$inc" == "$key"* && " ${owner[$key]} " != *" $mod "* ]]; then
						echo "check-includes: $rel: <$inc> belongs to ${owner[$key]}, not $mod"
						fail=1
					fi
				done
				;;
			esac
		done < <(grep '^#include' "$f")
	done
done
# Public headers include only other public headers and libc.
for f in "$root"/include/hwpmcd/*.h; do
	if grep -n '^#include "' "$f" | grep -v '"hwpmcd/' ; then
		echo "check-includes: ${f#"$root"/}: public headers include only hwpmcd/ and libc headers"
		fail=1
	fi
done
# One module creates every file and directory (files.h, src/common/common-files.c):
# no other source file may call what creates, links or renames one.
create_re='(O_CREAT|[^_a-z](mkdir|mkdirat|creat|link|linkat|symlink|symlinkat|rename|renameat|renameat2|mkfifo|mknod)[[:space:]]*\()'
while IFS= read -r hit; do
	echo "check-includes: ${hit#"$root"/}: files are created only through files.h (src/common/common-files.c)"
	fail=1
done < <(grep -nE "$create_re" "$root"/src/*/*.c | grep -v '^[^:]*/common-files\.c:' |
	grep -vE '^[^:]*:[0-9]+:[[:space:]]*(\*|/\*)' | grep -v 'SCMP_SYS(' | grep -v 'files\.h-exempt')
[[ $fail == 0 ]] && echo "check-includes: every #include follows the module table"
exit $fail
