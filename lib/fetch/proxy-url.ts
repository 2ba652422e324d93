/**
 * The proxy's address as configured (LINKPREVIEW_PROXY_URL, or the secret that holds it on AWS):
 * `http(s)://[user[:password]@]host[:port]`. Parsed here, with no other import, so the settings
 * (lib/core-settings.ts) validate it the same way the tunnel reads it. No message here repeats the
 * value: it may hold credentials.
 */

export interface ProxyEndpoint {
  protocol: 'http:' | 'https:';
  host: string;
  port: number;
  /** `Basic …` when the URL carries a user (and password). */
  authorization?: string;
  /** `scheme://host:port`: how logs and errors name the proxy (no credentials). */
  label: string;
}

/** Parses `http(s)://[user[:password]@]host[:port]`; the error names neither the value nor its credentials. */
export function parseProxyUrl(text: string): ProxyEndpoint {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    throw new TypeError('the proxy URL is not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError('the proxy URL must be http:// or https://');
  if (!url.hostname) throw new TypeError('the proxy URL has no host');
  if ((url.pathname && url.pathname !== '/') || url.search || url.hash) throw new TypeError('the proxy URL must have no path, query or fragment');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const user = decodeURIComponent(url.username);
  const authorization = user ? `Basic ${Buffer.from(`${user}:${decodeURIComponent(url.password)}`).toString('base64')}` : undefined;
  const shown = host.includes(':') ? `[${host}]` : host;
  return { protocol: url.protocol, host, port, ...(authorization ? { authorization } : {}), label: `${url.protocol}//${shown}:${port}` };
}
