#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# Builds the fuzz-debuglink seeds into OUT_DIR (the input format is in
# tests/fuzz/fuzz-debuglink.c: a header byte of where the debug file goes and
# the CRC cap, the image's length, the image, the debug file).  A small program
# with a build id, its debug file, and stripped images linked to debug files
# with and without a build id, so that every way of deciding is seeded: by the
# .build-id path, by equal build ids, by the CRC (right and wrong), over a small
# cap (and sparse past it), and an image with its own .symtab.  Touches STAMP
# last.
# usage: debuglink-seeds.sh OUT_DIR [STAMP [CC]]
set -euo pipefail
out=$1 stamp=${2:-} cc=${3:-cc}
mkdir -p "$out"
out=$(realpath "$out")
[ -n "$stamp" ] && stamp=$(realpath -m "$stamp")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
cat > seed.c <<'C'
volatile int sink;
__attribute__((noinline)) int seed_leaf(int x) { sink += x; return x * 3; }
__attribute__((noinline)) int seed_mid(int x) { return seed_leaf(x + 1) + 1; }
__attribute__((noinline)) static int seed_local(int x) { return seed_mid(x) ^ 5; }
int main(int argc, char **argv) { (void)argv; return seed_local(argc); }
C
"$cc" -O1 -g -fno-inline -Wl,--build-id -o prog seed.c
mkdir a b c
objcopy --only-keep-debug prog a/prog.debug             # with the build id
objcopy --remove-section=.note.gnu.build-id a/prog.debug b/prog.debug # without one
cp b/prog.debug c/prog.debug && printf 'x' >> c/prog.debug # another CRC
strip -s -o stripped prog
objcopy --remove-section=.note.gnu.build-id stripped stripped-noid
objcopy --add-gnu-debuglink=a/prog.debug stripped linked-a
objcopy --add-gnu-debuglink=b/prog.debug stripped linked-b
objcopy --add-gnu-debuglink=a/prog.debug stripped-noid linked-noid

# seed NAME FLAGS IMAGE DEBUG: the header (FLAGS, IMAGE's length, little-endian), then both.
seed() {
	local n
	n=$(stat -c %s "$3")
	printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x\\x%02x' "$2" $((n & 255)) $((n >> 8 & 255)) \
		$((n >> 16 & 255)) $((n >> 24 & 255)))" > "$out/$1"
	cat "$3" "$4" >> "$out/$1"
}
# bits 0-1 place (0 .build-id, 1 image dir, 2 .debug/, 3 debugdir/imagedir), 2 copy,
# 3 sparse past the cap, 4-7 cap 2^(6+n)
seed buildid 0x00 stripped a/prog.debug
seed buildid-noid-debug 0x00 stripped b/prog.debug
seed link-same-id 0x01 linked-a a/prog.debug
seed link-crc 0x01 linked-b b/prog.debug
seed link-crc-dotdebug-copy 0x06 linked-b b/prog.debug
seed link-crc-debugdir 0x03 linked-b b/prog.debug
seed link-image-noid 0x07 linked-noid a/prog.debug
seed link-crc-wrong 0x01 linked-b c/prog.debug
seed link-crc-over-cap 0x41 linked-b b/prog.debug
seed link-crc-sparse 0xe9 linked-b b/prog.debug
seed link-crc-under-cap 0xa5 linked-b b/prog.debug
seed own-symtab 0x01 prog a/prog.debug
n=$(find "$out" -maxdepth 1 -type f | wc -l)
[ -n "$stamp" ] && echo "$n seeds" > "$stamp"
exit 0
