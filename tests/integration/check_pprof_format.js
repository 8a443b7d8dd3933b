// SPDX-License-Identifier: BSD-2-Clause
// Decode a gzip-compressed pprof profile with the npm package pprof-format (an
// independent decoder: no protobuf library, no Go) and print what check_exports.py
// compares with the report, as one JSON object.  Every reference must resolve:
// the samples' location ids, the locations' mapping and function ids, and every
// string index; what does not is listed under "errors".
// usage: NODE_PATH=DIR node check_pprof_format.js PROFILE.pb.gz
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require('pprof-format');

const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(process.argv[2])));
const strs = p.stringTable.strings;
const errors = [];
const str = (i, what) => {
  const n = Number(i);
  if (!(n >= 0 && n < strs.length)) {
    errors.push(`${what}: string ${n} of ${strs.length}`);
    return '';
  }
  return strs[n];
};
const maps = new Map(p.mapping.map((m) => [Number(m.id), m]));
const funcs = new Map(p.function.map((f) => [Number(f.id), f]));
const locs = new Map(p.location.map((l) => [Number(l.id), l]));
if (strs[0] !== '') errors.push('string 0 is not ""');
for (const f of p.function) {
  str(f.name, `function ${f.id} name`);
  str(f.systemName, `function ${f.id} system name`);
  str(f.filename, `function ${f.id} file`);
}
let inlined = 0;
for (const l of p.location) {
  if (Number(l.mappingId) !== 0 && !maps.has(Number(l.mappingId)))
    errors.push(`location ${l.id}: no mapping ${l.mappingId}`);
  for (const ln of l.line)
    if (!funcs.has(Number(ln.functionId)))
      errors.push(`location ${l.id}: no function ${ln.functionId}`);
  if (l.line.length > 1) inlined++;
}
const types = p.sampleType.map((t) => `${str(t.type, 'type')}/${str(t.unit, 'unit')}`);
const sums = types.map(() => 0);
const labelled = { comm: 0, pid: 0, tid: 0 };
let idle = 0;
for (const s of p.sample) {
  for (const id of s.locationId)
    if (!locs.has(Number(id))) errors.push(`a sample: no location ${id}`);
  if (s.value.length !== types.length) errors.push(`a sample has ${s.value.length} values`);
  s.value.forEach((v, i) => { sums[i] += Number(v); });
  const keys = new Set(s.label.map((l) => str(l.key, 'label key')));
  if (s.label.some((l) => str(l.key, 'label key') === 'comm' && str(l.str, 'label') === '[idle]'))
    idle++;
  for (const k of Object.keys(labelled)) labelled[k] += keys.has(k) ? 1 : 0;
}
const first = p.mapping.length ? str(p.mapping[0].filename, 'mapping 0') : '';
console.log(JSON.stringify({
  types,
  period_type: p.periodType ? `${str(p.periodType.type, 'period')}/${str(p.periodType.unit, 'period')}` : '',
  period: Number(p.period),
  default_type: str(p.defaultSampleType, 'default type'),
  samples: p.sample.length,
  sums,
  labelled,
  idle,
  locations: p.location.length,
  inlined,
  first_mapping: first,
  errors: errors.slice(0, 5),
  nerrors: errors.length,
}));
