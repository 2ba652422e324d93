/**
 * A fetcher's connection agents for the direct route, with their TLS session cache: no pooled
 * socket (the guard's lookup runs on every connection), TLS sessions resumed per host
 * (`connectionAgents` says why that keeps the SSRF guarantees). Through the proxy, a request takes
 * its own tunnel instead (lib/fetch/proxy-tunnel.ts).
 */
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

/** Sessions kept per fetcher (one per host, port and server name; the oldest goes first). */
const MAX_CACHED_TLS_SESSIONS = 256;

/**
 * A fetcher's agents. keepAlive stays off: every request opens a new TCP connection through the
 * guarded lookup (a pooled socket would skip it), so the address checked is the address connected to.
 * What is shared is TLS state only: one secure context (the default CA store, NODE_EXTRA_CA_CERTS
 * included), built once instead of once per connection, and the https agent's session cache, keyed
 * by host, port and server name, so a later request to the same host (the page, then its image,
 * icons, manifest, oEmbed) resumes the session with an abbreviated handshake. A resumed session skips
 * the certificate and host name checks: they passed when the session was made (Node hands a session
 * to the agent only once they have), and only a server holding that session's secret can resume it.
 */
export function connectionAgents(): { http: http.Agent; https: https.Agent } {
  return {
    http: new http.Agent({ keepAlive: false }),
    https: new https.Agent({ keepAlive: false, maxCachedSessions: MAX_CACHED_TLS_SESSIONS, secureContext: tls.createSecureContext() }),
  };
}
