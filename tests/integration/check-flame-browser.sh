#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
#
# check-flame-browser.sh SVG OUTDIR FUNC: render a flame graph of `hwpmc report --flame`
# (src/tools/tools-flame.c) in headless Chromium and check that its script works.
#
#   1. the SVG parses as XML and has frames;
#   2. a screenshot is not blank, has many colours and no search highlight;
#   3. FILE#s=FUNC (--dump-dom): "Matched: X%" equals the union of the drawn samples of
#      the frames whose name matches the regex FUNC (each sample once), every matching
#      frame and no other is highlighted, and "Reset Search" is shown;
#   4. a screenshot of FILE#s=FUNC has highlight-coloured (rgb(230,0,230)) pixels;
#   5. FILE#z=FUNC (--dump-dom): the widest frame named exactly FUNC spans the full 1180 px,
#      its ancestors are full width and dimmed, its descendants are shown inside it, every
#      other frame is hidden, and "Reset Zoom" is shown; a screenshot of it is not blank.
#
# A headless browser cannot click, so the script's URL fragments stand in for clicks.
# Screenshots, dumped DOMs and chromium.log are left in OUTDIR.  Prints TAP lines; exits
# 0 if all passed, 1 if any failed, 2 on bad usage, 77 (skip) without /usr/bin/chromium
# (or $CHROMIUM) or python3.  Runs as root too (--no-sandbox); each Chromium run is
# limited to 60 s.  Generate a test SVG with:
#   FLAME_TEST_SVG=/tmp/flame.svg build/tests/test-tools-flame
#   tests/integration/check-flame-browser.sh /tmp/flame.svg /tmp/flame-out do_work
set -u

if [[ $# != 3 ]]; then
	echo "usage: $0 SVG OUTDIR FUNC" >&2
	exit 2
fi
svg=$1
outdir=$2
func=$3
here=$(cd "$(dirname "$0")" && pwd)
chromium=${CHROMIUM:-/usr/bin/chromium}

if [[ ! -x $chromium ]]; then
	echo "1..0 # SKIP $chromium is not installed (apt-get install chromium)"
	exit 77
fi
if ! command -v python3 > /dev/null; then
	echo "1..0 # SKIP python3 is not installed"
	exit 77
fi
if [[ ! -r $svg ]]; then
	echo "not ok - cannot read '$svg'"
	exit 1
fi
mkdir -p "$outdir" || exit 1
svg_abs=$(realpath "$svg")
profile=$(mktemp -d "$outdir/chromium-profile.XXXXXX") || exit 1
trap 'rm -rf "$profile"' EXIT
: > "$outdir/chromium.log"

ntests=0
nfailed=0
ok() {
	ntests=$((ntests + 1))
	echo "ok - $*"
}
not_ok() {
	ntests=$((ntests + 1))
	nfailed=$((nfailed + 1))
	echo "not ok - $*"
}
# check DESCRIPTION COMMAND...: one TAP line, the command's output as diagnostics.
check() {
	local what=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	if [[ $rc == 0 ]]; then
		ok "$what${out:+ ($(echo "$out" | tail -1))}"
	else
		not_ok "$what"
		[[ -n $out ]] && echo "$out" | sed 's/^/# /'
	fi
	return $rc
}

# chrome ARGS... URL: one headless run with a throw-away profile and a hard time limit.
chrome() {
	timeout -k 5 60 "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
		--no-default-browser-check --disable-extensions --disable-sync \
		--disable-background-networking --disable-component-update --mute-audio \
		--hide-scrollbars --user-data-dir="$profile" --virtual-time-budget=5000 \
		"$@" 2>> "$outdir/chromium.log"
}
# screenshot PNG URL
screenshot() {
	rm -f "$1"
	chrome --window-size=1200,800 --screenshot="$1" "$2" > /dev/null || return 1
	[[ -s $1 ]]
}
# dump DOM URL: the DOM once the script has run (virtual time lets it finish).
dump() {
	chrome --dump-dom "$2" > "$1" || return 1
	[[ -s $1 ]]
}

url_quote() {
	python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=sys.argv[2]))' \
		"$1" "$2"
}
url="file://$(url_quote "$svg_abs" /)"
frag=$(url_quote "$func" "")

# --- 1: the document itself ---------------------------------------------------------
check "svg is well-formed XML with frames" python3 - "$svg_abs" << 'EOF'
import sys
import xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
frames = [g for g in root.iter('{http://www.w3.org/2000/svg}g') if g.get('class') == 'f']
if not frames:
    sys.exit('no frames (a graph without samples?)')
print('%d frames' % len(frames))
EOF

# --- 2: plain screenshot ------------------------------------------------------------
if screenshot "$outdir/flame.png" "$url"; then
	check "screenshot is not blank and has no highlight" python3 "$here/check_png.py" \
		"$outdir/flame.png" --min-colours 20 --min-changed 0.05 \
		--colour 230,0,230 --max-pixels 0
else
	not_ok "screenshot of $svg (see $outdir/chromium.log)"
fi

# --- 3: search by URL fragment, in the DOM --------------------------------------------
# A Python regex stands in for the script's JavaScript one: use a FUNC both read alike.
if dump "$outdir/search.dom" "$url#s=$frag"; then
	check "#s=$func: highlighted frames and Matched: in the DOM" \
		python3 - "$svg_abs" "$outdir/search.dom" "$func" << 'EOF'
import re
import sys
import xml.etree.ElementTree as E
NS = '{http://www.w3.org/2000/svg}'
orig = E.parse(sys.argv[1]).getroot()
dom = E.fromstring(open(sys.argv[2], encoding='utf-8').read())
rx = re.compile(sys.argv[3])
def frames(root):
    return [g for g in root.iter(NS + 'g') if 'f' in (g.get('class') or '').split()]
def by_id(root, i):
    for el in root.iter():
        if el.get('id') == i:
            return el
    sys.exit('no element id=%s in the DOM' % i)
of, df = frames(orig), frames(dom)
if len(of) != len(df):
    sys.exit('%d frames in the SVG, %d in the DOM' % (len(of), len(df)))
total = int(of[0].get('data-n'))
hits = sorted((int(g.get('data-o')), int(g.get('data-w')))
              for g in of if rx.search(g.get('data-f')))
if not hits:
    sys.exit('no frame matches %r: pick another FUNC' % sys.argv[3])
union, end = 0, -1
for o, w in hits:
    if o >= end:
        union, end = union + w, o + w
    elif o + w > end:
        union, end = union + o + w - end, o + w
want = 100.0 * union / total
got = (by_id(dom, 'matched').text or '').strip()
m = re.fullmatch(r'Matched: (\d+\.\d\d)%', got)
if not m or abs(float(m.group(1)) - want) > 0.011:
    sys.exit('matched text %r, want Matched: %.2f%%' % (got, want))
for g in df:
    lit = 'm' in g.get('class').split()
    if lit != bool(rx.search(g.get('data-f'))):
        sys.exit('frame %r: highlighted=%s' % (g.get('data-f'), lit))
if 'h' in (by_id(dom, 'unsearch').get('class') or '').split():
    sys.exit('Reset Search is hidden')
naive = sum(w for o, w in hits) * 100.0 / total
print('%s, %d frames highlighted (nested matches would give %.2f%%)' % (got, len(hits), naive))
EOF
else
	not_ok "#s=$func: dump the DOM (see $outdir/chromium.log)"
fi

# --- 4: search, in the pixels ---------------------------------------------------------
if screenshot "$outdir/search.png" "$url#s=$frag"; then
	check "#s=$func: screenshot shows the highlight colour" python3 "$here/check_png.py" \
		"$outdir/search.png" --min-colours 20 --colour 230,0,230 --min-pixels 50
else
	not_ok "#s=$func: screenshot (see $outdir/chromium.log)"
fi

# --- 5: zoom by URL fragment ------------------------------------------------------------
if dump "$outdir/zoom.dom" "$url#z=$frag"; then
	check "#z=$func: zoomed frame is full width, the rest laid out around it" \
		python3 - "$svg_abs" "$outdir/zoom.dom" "$func" << 'EOF'
import sys
import xml.etree.ElementTree as E
NS = '{http://www.w3.org/2000/svg}'
dom = E.fromstring(open(sys.argv[2], encoding='utf-8').read())
name = sys.argv[3]
fr = [g for g in dom.iter(NS + 'g') if 'f' in (g.get('class') or '').split()]
def num(g, a):
    return int(g.get(a))
def rect(g):
    r = g.find(NS + 'rect')
    return float(r.get('x')), float(r.get('width'))
def cls(g):
    return (g.get('class') or '').split()
named = [g for g in fr if g.get('data-f') == name]
if not named:
    sys.exit('no frame named %r' % name)
z = max(named, key=lambda g: num(g, 'data-w'))  # max() keeps the first of equals
zo, zw, zd = num(z, 'data-o'), num(z, 'data-w'), num(z, 'data-d')
if zd > 0 and 'z' not in cls(z):
    sys.exit('the widest %r frame is not marked zoomed' % name)
if rect(z) != (10.0, 1180.0):
    sys.exit('zoomed frame at x=%s width=%s, want 10.0 1180.0' % rect(z))
shown = 0
for g in fr:
    o, w, d = num(g, 'data-o'), num(g, 'data-w'), num(g, 'data-d')
    x, wd = rect(g)
    if d < zd and o <= zo and o + w >= zo + zw:
        if 'a' not in cls(g) or (x, wd) != (10.0, 1180.0):
            sys.exit('ancestor %r not dimmed at full width' % g.get('data-f'))
    elif d >= zd and o >= zo and o + w <= zo + zw:
        want = round((o + w - zo) * 11800 / zw) - round((o - zo) * 11800 / zw)
        if 'h' in cls(g) or x < 10.0 - 1e-6 or x + wd > 1190.0 + 1e-6 or \
                abs(wd * 10 - want) > 1.01:
            sys.exit('descendant %r at x=%s width=%s' % (g.get('data-f'), x, wd))
        shown += 1
    elif 'h' not in cls(g):
        sys.exit('frame %r outside the zoom is not hidden' % g.get('data-f'))
for el in dom.iter():
    if el.get('id') == 'unzoom' and 'h' in (el.get('class') or '').split():
        sys.exit('Reset Zoom is hidden')
print('depth %d, %d of %d frames in the zoomed subtree' % (zd, shown, len(fr)))
EOF
else
	not_ok "#z=$func: dump the DOM (see $outdir/chromium.log)"
fi
if screenshot "$outdir/zoom.png" "$url#z=$frag"; then
	check "#z=$func: screenshot is not blank" python3 "$here/check_png.py" \
		"$outdir/zoom.png" --min-colours 10 --min-changed 0.05
else
	not_ok "#z=$func: screenshot (see $outdir/chromium.log)"
fi

echo "1..$ntests"
if [[ $nfailed != 0 ]]; then
	echo "# $nfailed of $ntests failed; output in $outdir"
	exit 1
fi
exit 0
