// Preloaded with `node --require` by test/client/cli-and-client.test.ts: prints to stderr
// `LOADED <specifier>` for each bare specifier the process loads, by require (CommonJS, at exit)
// or import (ESM, from the resolve hook, at once). The test reduces them to package names.
const fs = require('node:fs');
const Module = require('node:module');

const seen = new Set();
const load = Module._load;
Module._load = function (request, ...rest) {
  seen.add(request);
  return load.call(this, request, ...rest);
};
Module.register(
  `data:text/javascript,${encodeURIComponent("import { writeSync } from 'node:fs'; export async function resolve(s, c, next) { if (!/^(\\.|\\/|node:|file:|data:)/.test(s)) writeSync(2, 'LOADED ' + s + '\\n'); return next(s, c); }")}`,
);
process.on('exit', () => {
  for (const s of seen) if (!/^(\.|\/|node:)/.test(s)) fs.writeSync(2, `LOADED ${s}\n`);
});
