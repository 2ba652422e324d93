/**
 * The CPU pool's thread entry when the service runs from its TypeScript sources (Jest, tsx): a
 * worker thread gets neither Jest's transform nor, always, tsx's hooks, so it registers tsx
 * (a dev dependency) and loads the task module. Built code (dist/, the Lambda bundle) loads
 * cpu-worker.mjs instead (lib/jobs/cpu-pool.ts CPU_WORKER_FILE).
 */
'use strict';
require('tsx/cjs/api').register();
module.exports = require('./cpu-worker.ts');
