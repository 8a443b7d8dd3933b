// SPDX-License-Identifier: BSD-2-Clause
// jit-hot.js: JavaScript the V8 JIT compiles, for hwpmc report's JIT maps
// (node --perf-basic-prof writes /tmp/perf-PID.map).
// usage: node --perf-basic-prof jit-hot.js [CPU_SECONDS]
//   hwpmcJitOuter -> hwpmcJitHot, until the process has used CPU_SECONDS (default
//   1) of CPU time, however busy the machine is.
'use strict';

function hwpmcJitHot(n, seed) {
	let x = seed | 0;
	for (let i = 0; i < n; i++)
		x = (Math.imul(x, 31) + i) ^ (x >>> 7);
	return x;
}

function hwpmcJitOuter(seed) {
	let x = seed;
	for (let k = 0; k < 100; k++)
		x = hwpmcJitHot(10000, x);
	return x;
}

const want = (parseFloat(process.argv[2]) || 1) * 1e6; // microseconds of CPU
let x = 1;
for (;;) {
	const u = process.cpuUsage();
	if (u.user + u.system >= want)
		break;
	x = hwpmcJitOuter(x);
}
console.log('jit ' + x);
