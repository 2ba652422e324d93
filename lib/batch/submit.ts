/**
 * `POST /previews`: the body read into a batch (BatchMeta). The body is refused whole (400) when
 * it is not a batch; each link is checked as `POST /` checks its body, and a link that fails is
 * refused alone (its item `failed`, with the `errorCode` `POST /` would give). The callback URL is
 * a link like any other: its scheme, port and host, the host rules and every address its host
 * resolves to are checked now (and again at every delivery, by the guarded fetcher).
 */
import { isIP } from 'node:net';
import * as v from 'valibot';
import { MAX_LINK_LENGTH, validatePreviewRequest } from '../contract/request.js';
import { BadRequestError, LinkPreviewError } from '../errors.js';
import { checkUrl, classifyAddress, type GuardPolicy, type Resolver } from '../fetch/address-guard.js';
import type { HostRules } from '../fetch/host-rules.js';
import { newBatchId } from './store.js';
import { type BatchMeta, type ItemSpec, MAX_BATCH_LINKS } from './types.js';

/** What the callback URL is checked against: the fetcher's own guard policy, resolver and host rules. */
export interface CallbackGuard {
  policy: GuardPolicy;
  resolver: Resolver;
  rules?: HostRules;
}

export interface SubmitContext {
  keyId: string;
  ttlDays: number;
  guard: CallbackGuard;
  now?: () => number;
}

const MAX_CALLBACK_LENGTH = 2048;

/** The batch a body describes (not yet stored), or a 400 naming what is wrong with it. */
export async function readBatch(body: unknown, context: SubmitContext): Promise<BatchMeta> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequestError('BODY_INVALID', 'The request body must be an object with a "links" array.');
  }
  const { links, callbackUrl } = body as { links?: unknown; callbackUrl?: unknown };
  if (links === undefined || links === null || (Array.isArray(links) && links.length === 0)) {
    throw new BadRequestError('LINKS_REQUIRED', 'links is required: an array of 1 to 100 links.', { field: 'links' });
  }
  if (!Array.isArray(links)) throw new BadRequestError('LINKS_INVALID', 'links must be an array of links.', { field: 'links' });
  if (links.length > MAX_BATCH_LINKS) {
    throw new BadRequestError('BATCH_TOO_LARGE', `A batch holds at most ${MAX_BATCH_LINKS} links; this one has ${links.length}.`, { field: 'links' });
  }
  const callback = callbackUrl === undefined || callbackUrl === null ? undefined : await checkCallbackUrl(callbackUrl, context.guard);
  const id = newBatchId();
  const now = (context.now ?? Date.now)();
  return {
    id,
    keyId: context.keyId,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + context.ttlDays * 86_400_000).toISOString(),
    ...(callback ? { callbackUrl: callback } : {}),
    items: links.map((item, index) => itemSpec(id, index, item)),
  };
}

/** One link of the batch: a string (the link) or an object (the body `POST /` takes). */
function itemSpec(batchId: string, index: number, item: unknown): ItemSpec {
  const id = `${batchId}.${index}`;
  const shown = typeof item === 'string' ? item : typeof (item as { link?: unknown })?.link === 'string' ? (item as { link: string }).link : '';
  const link = shown.slice(0, MAX_LINK_LENGTH);
  try {
    const body = typeof item === 'string' ? { link: item } : item;
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw new BadRequestError('LINK_INVALID', 'Each item of links is a link, or an object with a "link" field as POST / takes.');
    }
    const request = validatePreviewRequest(body);
    return { id, index, link: request.link, request };
  } catch (err) {
    if (!(err instanceof LinkPreviewError)) throw err;
    return { id, index, link, error: { errorCode: err.errorCode, message: err.message } };
  }
}

const CallbackSchema = v.pipe(
  v.string('CALLBACK_URL_INVALID:callbackUrl must be a string'),
  v.trim(),
  v.maxLength(MAX_CALLBACK_LENGTH, `CALLBACK_URL_INVALID:callbackUrl must be at most ${MAX_CALLBACK_LENGTH} characters`),
  v.url('CALLBACK_URL_INVALID:callbackUrl is not a valid URL'),
  v.check((s) => /^https?:\/\//i.test(s), 'CALLBACK_URL_INVALID:callbackUrl must be an http or https URL'),
  v.check((s) => !new URL(s).username && !new URL(s).password, 'CALLBACK_URL_INVALID:callbackUrl must not hold credentials'),
);

/**
 * The callback URL, checked as the guard checks a link, before anything is queued: on its face
 * (scheme, port, an IP literal, a local name), against the host rules (`deny`), and by the
 * addresses its host resolves to now. What DNS answered is never told, only that it is not allowed.
 */
export async function checkCallbackUrl(raw: unknown, guard: CallbackGuard): Promise<string> {
  const parsed = v.safeParse(CallbackSchema, raw, { abortPipeEarly: true });
  if (!parsed.success) {
    const [code, message] = parsed.issues[0].message.split(/:(.*)/s);
    throw new BadRequestError(code, message, { field: 'callbackUrl' });
  }
  const url = new URL(parsed.output);
  const refuse = (why: string) => new BadRequestError('CALLBACK_URL_NOT_ALLOWED', `The callback URL is not allowed: ${why}.`, { field: 'callbackUrl' });
  const face = checkUrl(url, guard.policy);
  if (!face.allowed) throw refuse(face.reason);
  const rule = guard.rules?.denies(url);
  if (rule) throw refuse(`a host rule (${rule.pattern}=deny) refuses it`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (!isIP(host)) {
    const addresses = await guard.resolver(host).catch(() => []);
    if (addresses.length === 0)
      throw new BadRequestError('CALLBACK_URL_UNRESOLVED', `The callback URL's host ${host} does not resolve.`, { field: 'callbackUrl' });
    if (addresses.some((a) => !classifyAddress(a.address, guard.policy).allowed)) throw refuse(`its host ${host} resolves to an address that is not allowed`);
  }
  return url.href;
}
