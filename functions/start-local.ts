/** `npm start`: the local server with the embedded defaults. */
import { ConfigError } from '../lib/config.js';
import { startLocalServer } from './local-server.js';

startLocalServer()
  .then((s) => {
    const how = s.keyGenerated ? `generated key (set LINKPREVIEW_API_KEYS to choose your own): ${s.apiKey}` : 'a key from LINKPREVIEW_API_KEYS';
    process.stdout.write(`linklens listening on ${s.url} — POST / with "Authorization: Bearer <key>", ${how}\n`);
    const stop = () => { s.close().then(() => process.exit(0)); };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  })
  .catch((err) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : (err as Error).stack}\n`);
    process.exit(1);
  });
