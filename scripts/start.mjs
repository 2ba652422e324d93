// `npm start`: the local server, compiled (dist/start-local.js); dist/ is built first when missing or stale.
import { ensureBuilt } from './build.mjs';

await ensureBuilt();
await import('../dist/start-local.js');
