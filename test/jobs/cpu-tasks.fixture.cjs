/**
 * Tasks for test/jobs/cpu-pool.test.ts: plain CommonJS, so a pool thread loads them as they are.
 * `spin` marks that it started, keeps its thread busy for `ms` (a CPU loop, no I/O), then marks
 * that it finished: a thread stopped in the loop never writes `finished`.
 */
'use strict';
const fs = require('node:fs');

exports.spin = ({ ms, started, finished }) => {
  fs.writeFileSync(started, 'started');
  const end = Date.now() + ms;
  let n = 0;
  while (Date.now() < end) n++;
  fs.writeFileSync(finished, String(n));
  return 'finished';
};

exports.echo = (value) => value;
