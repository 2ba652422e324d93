/** `npm start`: the local server with the embedded defaults. */
import { ConfigError, configWarnings } from '../lib/config.js';
import { openGuardWarning } from '../lib/fetch/address-guard.js';
import { startLocalServer } from './local-server.js';

startLocalServer()
  .then((s) => {
    const how = s.keyGenerated ? `generated key (set LINKPREVIEW_API_KEYS to choose your own): ${s.apiKey}` : 'a key from LINKPREVIEW_API_KEYS';
    process.stdout.write(`linklens listening on ${s.url} — POST / with "Authorization: Bearer <key>", ${how}\n`);
    // LINKPREVIEW_ALLOW_LOOPBACK / LINKPREVIEW_ALLOW_PRIVATE_NETWORKS: say what the SSRF guard lets through.
    const opened = openGuardWarning(s.deps.config);
    if (opened) s.deps.log.warn(opened);
    // A former host list (LINKPREVIEW_PROXY_HOSTS, LINKPREVIEW_RENDER_HOSTS): the host rules to write instead.
    for (const line of configWarnings(process.env)) s.deps.log.warn(line);
    const stop = () => {
      s.close().then(() => process.exit(0));
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  })
  .catch((err) => {
    process.stderr.write(`${err instanceof ConfigError ? err.message : (err as Error).stack}\n`);
    process.exit(1);
  });
