/**
 * One hop's HTTP exchange on node:http and node:https (lib/fetch/hop-request.ts reads it): the
 * request on the hop's agents with the guarded lookup, one timer for the hop's whole time, the
 * caller's abort signal, and the body decompressed (gzip, deflate, br) as it streams, so the byte
 * cap counts decompressed bytes. It does what got.stream did for the fetcher (redirects, retries
 * and cookies were never got's here), without got's per-request machinery (options normalised
 * and merged, hooks, a timer per phase, a stream wrapped around the response): about a
 * millisecond of every fetch on loopback, a fifth of a page's fetch.
 * Errors are node's own (ECONNREFUSED, ECONNRESET, the TLS codes, the guard's LinkNotAllowedError
 * from the lookup); the time cap is a TimeoutError (ETIMEDOUT) and the caller's abort an AbortError,
 * as got named them (lib/fetch/fetch-failure.ts classifies them).
 */
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { PassThrough, type Readable, Transform } from 'node:stream';
import zlib from 'node:zlib';

/** zstd where this Node decodes it (22.15 and later). */
const ZSTD = 'createZstdDecompress' in zlib;
/** The encodings asked for and decoded: what got asked for. */
const ENCODINGS = ['gzip', 'deflate', 'br', ...(ZSTD ? ['zstd'] : [])];
const ACCEPT_ENCODING = ENCODINGS.join(', ');

export interface HopResponse {
  statusCode: number;
  /** The response's headers; a decoded body's without content-encoding and content-length (they were the encoded body's). */
  headers: IncomingHttpHeaders;
  body: Readable;
}

export interface HopExchange {
  response: Promise<HopResponse>;
  /** Ends the exchange: the request and its socket, the timer, the abort listener (always called, however it ended). */
  destroy(): void;
}

export interface HopExchangeOptions {
  method: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  agents: { http: http.Agent; https: https.Agent };
  lookup: LookupFunction;
  timeoutMs: number;
  signal?: AbortSignal;
}

/** `connecting`: the agent had not given the request its connection yet (a proxy's tunnel still being opened). */
const timeoutError = (ms: number, connecting: boolean) =>
  Object.assign(new Error(`Timeout awaiting the response for ${ms}ms`), { name: 'TimeoutError', code: 'ETIMEDOUT', connecting });
const abortError = () => Object.assign(new Error('This operation was aborted'), { name: 'AbortError', code: 'ERR_ABORTED' });

/** Sends the request; `response` settles with the answer's head, or the error that ended the exchange first. */
export function openExchange(url: URL, options: HopExchangeOptions): HopExchange {
  let settle: { ok: (r: HopResponse) => void; fail: (err: Error) => void } | undefined;
  const response = new Promise<HopResponse>((ok, fail) => {
    settle = { ok, fail };
  });
  let body: Readable | undefined;
  let req: http.ClientRequest | undefined;
  let ended = false;
  let timer: NodeJS.Timeout | undefined;
  const end = (err?: Error) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    if (err) settle?.fail(err);
    body?.destroy(err);
    req?.destroy();
  };
  const onAbort = () => end(abortError());
  if (options.signal?.aborted) {
    end(abortError());
    return { response, destroy: () => end() };
  }
  options.signal?.addEventListener('abort', onAbort, { once: true });
  const secure = url.protocol === 'https:';
  const headers: Record<string, string> = {};
  // Header names case-insensitively, the last one given winning (as got merged them).
  for (const [name, value] of Object.entries(options.headers)) headers[name.toLowerCase()] = value;
  headers['accept-encoding'] ??= ACCEPT_ENCODING;
  req = (secure ? https : http).request(url, {
    method: options.method,
    headers,
    agent: secure ? options.agents.https : options.agents.http,
    lookup: options.lookup,
  });
  timer = setTimeout(() => end(timeoutError(options.timeoutMs, !req?.socket)), options.timeoutMs);
  req.on('error', (err) => end(err));
  req.on('response', (res) => {
    if (ended) return void res.destroy();
    const decoded = decodedBody(res, options.method);
    body = decoded.body;
    // Whoever reads the body gets its error; until then it must not go unhandled.
    body.on('error', () => undefined);
    settle?.ok({ statusCode: res.statusCode ?? 0, headers: decoded.headers, body });
  });
  req.end(options.body);
  return { response, destroy: () => end() };
}

/** The body as sent, or decoded when it is encoded and may have a body (not a HEAD's, 1xx, 204, 205 or 304). */
function decodedBody(res: IncomingMessage, method: string): { headers: IncomingHttpHeaders; body: Readable } {
  const status = res.statusCode ?? 0;
  const noBody = method === 'HEAD' || (status >= 100 && status < 200) || status === 204 || status === 205 || status === 304;
  const encoding = (res.headers['content-encoding'] ?? '').toLowerCase();
  if (noBody || !ENCODINGS.includes(encoding)) return { headers: res.headers, body: res };
  const { 'content-encoding': _encoding, 'content-length': _length, ...headers } = res.headers;
  const out = new PassThrough();
  let empty = true;
  // The decoder is chosen on the first chunk (raw deflate or zlib-wrapped); an empty body is an empty body.
  const first = new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (empty) {
        empty = false;
        const decoder = decoderFor(encoding, chunk);
        decoder.once('error', (err) => out.destroy(err));
        first.pipe(decoder).pipe(out);
      }
      done(null, chunk);
    },
    flush(done) {
      if (empty) out.end();
      done();
    },
  });
  // A body cut off (ECONNRESET) reaches the reader after what was decoded of it.
  res.on('error', (err) => out.destroy(err));
  res.pipe(first);
  return { headers, body: out };
}

function decoderFor(encoding: string, chunk: Buffer): Transform {
  if (encoding === 'zstd') return (zlib as unknown as { createZstdDecompress: () => Transform }).createZstdDecompress();
  if (encoding === 'br') return zlib.createBrotliDecompress();
  if (encoding === 'deflate' && chunk.length > 0 && (chunk[0] & 0x08) === 0) return zlib.createInflateRaw();
  return zlib.createUnzip();
}
