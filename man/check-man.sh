#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Every man page renders with man -l and groff warns about nothing; the pages
# agree with the programs:
#   --hwpmc BIN          every command `hwpmc --help` lists has its own .SS in hwpmc.1
#   --config-source FILE every key of the daemon's config table (daemon-config.c)
#                        is an entry of hwpmcd.conf.5
# and every reference to one of our pages (hwpmc*(1|5|7|8)) names a page given.
# usage: check-man.sh [--hwpmc BIN] [--config-source FILE] PAGE...
set -euo pipefail
command -v man > /dev/null || { echo "man is not installed: skipping"; exit 77; }
hwpmc='' config_src=''
while [[ $# -gt 0 ]]; do
	case $1 in
	--hwpmc) hwpmc=$2; shift 2 ;;
	--config-source) config_src=$2; shift 2 ;;
	*) break ;;
	esac
done
fail=0
page_of() { # NAME SECTION: the page given for it, if any
	local p
	for p in "${pages[@]}"; do
		[[ $(basename "$p") == "$1.$2" ]] && { echo "$p"; return 0; }
	done
	return 1
}
pages=("$@")

for page in "${pages[@]}"; do
	err=$(MANWIDTH=80 man --warnings=all -l "$page" 2>&1 > /dev/null) || true
	out=$(MANWIDTH=80 man -l "$page" 2> /dev/null | wc -l) || true
	if [[ -n "$err" || $out -lt 10 ]]; then
		echo "check-man: $page: $out lines; warnings: $err"
		fail=1
	fi
	# References such as ".BR hwpmcd\-protocol (7)" to pages of ours.
	while read -r name sec; do
		name=${name//\\-/-}
		if ! page_of "$name" "$sec" > /dev/null; then
			echo "check-man: $page: refers to $name($sec), which is not among the pages"
			fail=1
		fi
	done < <(grep -oE '^\.BR? hwpmc[a-z.\\-]* \(?[1578]\)' "$page" |
		sed -E 's/^\.BR? ([^ ]*) \(?([1578])\)/\1 \2/' | sort -u)
done

# Each hwpmc command as a subsection: ".SS record", or ".SS status, sessions".
if [[ -n $hwpmc ]]; then
	hwpmc1=$(page_of hwpmc 1) || { echo "check-man: no hwpmc.1 given"; exit 1; }
	cmds=$("$hwpmc" --help | sed -n 's/^  \([a-z][a-z-]*\)  .*/\1/p')
	if [[ -z $cmds ]]; then
		echo "check-man: '$hwpmc --help' lists no commands"
		fail=1
	fi
	sections=$(sed -n 's/^\.SS "\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$hwpmc1" | tr ',' '\n' |
		sed 's/^ *//; s/ *$//')
	for c in $cmds; do
		if ! grep -qx "$c" <<< "$sections"; then
			echo "check-man: hwpmc.1 has no subsection for 'hwpmc $c' (hwpmc --help lists it)"
			fail=1
		fi
	done
	[[ $fail == 0 ]] && echo "check-man: hwpmc.1 covers the commands:" $cmds
fi

# Each configuration key as an entry: ".BR key " (type; default ...)"".
if [[ -n $config_src ]]; then
	conf5=$(page_of hwpmcd.conf 5) || { echo "check-man: no hwpmcd.conf.5 given"; exit 1; }
	if [[ -r $config_src ]]; then
		keys=$(sed -nE 's/^\s*(U32|STR)\(([a-z_]+),.*/\2/p; s/^\s*\{ "([a-z_]+)", K_.*/\1/p' \
			"$config_src" | sort -u)
		for k in $keys; do
			if ! grep -qE "^\.BR $k " "$conf5"; then
				echo "check-man: hwpmcd.conf.5 does not document key '$k' ($config_src has it)"
				fail=1
			fi
		done
		echo "check-man: hwpmcd.conf.5 documents the $(wc -w <<< "$keys") keys of $(basename "$config_src")"
	else
		echo "check-man: $config_src is gone: key check skipped"
	fi
fi

[[ $fail == 0 ]] && echo "check-man: $# pages render without warnings"
exit $fail
