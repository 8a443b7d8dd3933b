// SPDX-License-Identifier: BSD-2-Clause
// Read `hwpmc script` output with speedscope's own perf-script importer (the npm
// package speedscope, whose release is one browser bundle: its importer is found in
// the bundle by its code and run in a node vm, the rest of the app left unstarted),
// and compare what it parsed with `hwpmc report --json --limit 0` of the same log:
// the samples, and per function (name and image as speedscope keys them) the samples
// it is the leaf of and those it is anywhere in.  speedscope drops a "+0xOFFSET"
// suffix, so functions without a symbol (IMAGE+0xOFFSET) are compared per image.
// Prints "ok - ..." / "not ok - ..." lines; exit 77 when the bundle is not the one
// this knows how to enter.
// usage: node check_script.js SPEEDSCOPE_BUNDLE.js SCRIPT.txt REPORT.json
'use strict';
const fs = require('fs');
const vm = require('vm');

let src = fs.readFileSync(process.argv[2], 'utf8');
const text = fs.readFileSync(process.argv[3], 'utf8');
const rep = JSON.parse(fs.readFileSync(process.argv[4], 'utf8'));

// The importer: the function after the event parser (it ends "return n.stack.reverse(),n}"),
// and the lazy module initializer that follows it (its classes: the profile builder).
const imp = /return n\.stack\.reverse\(\),n\}function (\w+)\(t\)\{let e=new Map/.exec(src);
const init = imp && /\}var (\w+)=re\(\(\)=>\{"use strict";/.exec(src.slice(imp.index));
if (!imp || !init) {
  console.log('# speedscope bundle: its perf importer not found (another version?)');
  process.exit(77);
}
src = src.replace('"use strict";(()=>{',
  `"use strict";(()=>{globalThis.__perf=(t)=>(${init[1]}(),${imp[1]}(t));`);
const quiet = { log() {}, error() {}, warn() {}, info() {} };
const ctx = { console: quiet };
ctx.globalThis = ctx.window = ctx.self = ctx;
try {
  vm.runInNewContext(src, ctx);
} catch (e) {
  // the app needs a document; the importer is defined before that
}
if (typeof ctx.__perf !== 'function') {
  console.log('# speedscope bundle: importer not reachable');
  process.exit(77);
}

let fails = 0;
const check = (cond, what) => {
  console.log(`${cond ? 'ok' : 'not ok'} - ${what}`);
  if (!cond) fails++;
};

// Every sample speedscope takes, counted: each stack as its parser made it (root first).
const stacks = [];
const builders = new Set();
const tf = {
  splitLines() { return text.split('\n')[Symbol.iterator](); },
  firstChunk() { return text.slice(0, 4096); },
};
let group = null;
try {
  // the builder's method is wrapped on its prototype when the first profile is made
  const orig = {};
  const probe = ctx.__perf({ splitLines() { return ['x 1/1 [000] 1.000000: 1 e: ', '\t1 f (g)', '']
    [Symbol.iterator](); }, firstChunk() { return ''; } });
  const proto = Object.getPrototypeOf(probe.profiles[0]);
  orig.ts = proto.appendSampleWithTimestamp;
  proto.appendSampleWithTimestamp = function (stack, t) {
    builders.add(this);
    stacks.push(stack);
    return orig.ts.call(this, stack, t);
  };
  group = ctx.__perf(tf);
} catch (e) {
  check(false, `speedscope's importer failed: ${String(e).slice(0, 200)}`);
  process.exit(1);
}

const ev = rep.events[0];
check(group && stacks.length === ev.samples,
  `speedscope read ${stacks.length} samples in ${group ? group.profiles.length : 0} ` +
  `profiles (a thread each); the report has ${ev.samples}`);

const norm = (name) => name.replace(/\+0x[\da-f]+$/, '');
const key = (name, file) => `${norm(name)} (${file})`;
const selfS = new Map(), totS = new Map();
for (const st of stacks) {
  if (!st.length) continue;
  const leaf = st[st.length - 1];
  const lk = key(leaf.name.startsWith('??? (') ? '[unknown]' : leaf.name, leaf.file);
  selfS.set(lk, (selfS.get(lk) || 0) + 1);
  const seen = new Set(st.map((f) => key(f.name.startsWith('??? (') ? '[unknown]' : f.name, f.file)));
  for (const k of seen) totS.set(k, (totS.get(k) || 0) + 1);
}
const selfR = new Map(), totR = new Map(), nosym = new Set();
for (const t of ev.top) {
  const file = t.image === '' ? '[unknown]' : t.image;
  const k = key(t.function, file);
  if (norm(t.function) !== t.function) nosym.add(k);
  selfR.set(k, (selfR.get(k) || 0) + t.self);
  if (t.self || t.total) totR.set(k, (totR.get(k) || 0) + t.total);
}
const diff = [];
for (const k of new Set([...selfS.keys(), ...selfR.keys()]))
  if ((selfS.get(k) || 0) !== (selfR.get(k) || 0))
    diff.push(`${k}: speedscope ${selfS.get(k) || 0}, report ${selfR.get(k) || 0}`);
check(diff.length === 0,
  `each of ${selfR.size} functions is the leaf of as many samples in speedscope as in the report` +
  (diff.length ? `: ${diff.slice(0, 4).join('; ')}` : ''));
const tdiff = [];
for (const [k, v] of totR)
  if (!nosym.has(k) && (totS.get(k) || 0) !== v)
    tdiff.push(`${k}: speedscope ${totS.get(k) || 0}, report ${v}`);
check(tdiff.length === 0,
  `each function with a symbol is in as many samples' stacks in speedscope as its total` +
  (tdiff.length ? `: ${tdiff.slice(0, 4).join('; ')}` : ''));
process.exit(fails ? 1 : 0);
