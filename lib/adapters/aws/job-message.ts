/**
 * The wire format between the preview function and the worker: one SQS message per job, and one
 * S3 object per job result. Both are versioned JSON, so a preview and a worker of different
 * deployments can tell whether they understand each other.
 *
 *   message  {version: 1, requestId, jobId, kind, input | inputKey, deadline, route?, replyTo?}
 *   result   {version: 1, requestId, jobId, kind, ok, result | error, ms, finishedAt}: a message to
 *            `replyTo` (the preview container's reply queue, lib/adapters/aws/reply-queue.ts), or,
 *            without one or when too large for a message, the object jobs/<requestId>/<jobId>.json
 *            (then the reply says `resultKey`)
 *
 * Buffers in inputs and results survive the trip (`{"$base64": "..."}`). An input too large for an
 * SQS message is stored beside its result (`jobs/<requestId>/<jobId>.input.json`) and referenced.
 */
import type { RouteHint } from '../../fetch/proxy-route.js';
import type { JobKind } from '../../jobs/kinds.js';
import type { JobParts } from '../../ports.js';
import { inputKey } from '../../storage-keys.js';

export const JOB_MESSAGE_VERSION = 1;

/** SQS's limit on one message and on the sum of a batch's messages. */
export const SQS_MAX_MESSAGE_BYTES = 1024 * 1024;

export interface JobMessage {
  version: typeof JOB_MESSAGE_VERSION;
  requestId: string;
  jobId: string;
  kind: JobKind;
  /** The job input, or absent when it is stored at `inputKey`. */
  input?: unknown;
  inputKey?: string;
  /** Epoch milliseconds after which nobody waits for this job any more: the worker drops it. */
  deadline: number;
  /** The hosts the preview sent through the proxy (lib/fetch/proxy-route.ts): the job's fetches to them go there too. */
  route?: RouteHint;
  /** The preview container's reply queue: the result goes there (else only to S3, where the preview polls). */
  replyTo?: string;
}

export type JobResultObject = {
  version: typeof JOB_MESSAGE_VERSION;
  requestId: string;
  jobId: string;
  kind: string;
  ms: number;
  finishedAt: string;
} & ({ ok: true; result: unknown; parts?: JobParts } | { ok: false; error: string });

/** JSON with binary data kept as base64 (`{"$base64": "..."}`) instead of arrays of numbers. */
export function encodeJson(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, v) {
    const raw = key === '' ? value : this[key];
    if (raw instanceof Uint8Array) return { $base64: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString('base64') };
    return v;
  });
}

export function decodeJson<T = unknown>(text: string): T {
  return JSON.parse(text, (_key, v) => {
    if (v && typeof v === 'object' && !Array.isArray(v) && typeof v.$base64 === 'string' && Object.keys(v).length === 1)
      return Buffer.from(v.$base64, 'base64');
    return v;
  }) as T;
}

export class InvalidJobMessage extends Error {}

/** Parses and checks a message body; throws InvalidJobMessage for anything this worker cannot handle. */
export function parseJobMessage(body: string): JobMessage {
  let m: Record<string, unknown>;
  try {
    m = decodeJson(body);
  } catch {
    throw new InvalidJobMessage('message body is not JSON');
  }
  if (!m || typeof m !== 'object') throw new InvalidJobMessage('message body is not an object');
  if (m.version !== JOB_MESSAGE_VERSION) throw new InvalidJobMessage(`unsupported message version ${JSON.stringify(m.version)}`);
  for (const f of ['requestId', 'jobId', 'kind'] as const) {
    if (typeof m[f] !== 'string' || !(m[f] as string)) throw new InvalidJobMessage(`message field ${f} must be a non-empty string`);
  }
  if (typeof m.deadline !== 'number' || !Number.isFinite(m.deadline)) throw new InvalidJobMessage('message field deadline must be epoch milliseconds');
  if (!('input' in m) && typeof m.inputKey !== 'string') throw new InvalidJobMessage('message has neither input nor inputKey');
  const route = m.route as { proxyHosts?: unknown } | undefined;
  if (route !== undefined && (typeof route !== 'object' || !Array.isArray(route?.proxyHosts) || !route.proxyHosts.every((h) => typeof h === 'string'))) {
    throw new InvalidJobMessage('message field route must be {proxyHosts: string[]}');
  }
  if (m.replyTo !== undefined && typeof m.replyTo !== 'string') throw new InvalidJobMessage('message field replyTo must be a queue URL');
  if (typeof m.inputKey === 'string' && m.inputKey !== inputKey(m.requestId as string, m.jobId as string)) {
    throw new InvalidJobMessage('message inputKey does not belong to its job');
  }
  return m as unknown as JobMessage;
}

export function parseJobResult(text: string): JobResultObject | undefined {
  try {
    const r = decodeJson<JobResultObject>(text);
    if (r && r.version === JOB_MESSAGE_VERSION && typeof r.ok === 'boolean') return r;
  } catch {
    /* a torn or foreign object: treat as not there */
  }
  return undefined;
}
