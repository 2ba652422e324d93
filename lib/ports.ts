/**
 * The ports: the small interfaces through which the pipeline talks to the outside. Each has a
 * local adapter (lib/adapters/local) and an AWS adapter (lib/adapters/aws); only functions/
 * choose which. Nothing else in lib/ imports an AWS SDK.
 */
import type { RouteState } from './fetch/proxy-route.js';
import type { JobInput, JobKind, JobResult } from './jobs/kinds.js';

export interface PutOptions {
  contentType: string;
  /** Defaults to a long-lived immutable policy for content-addressed assets. */
  cacheControl?: string;
  /**
   * Small facts kept with the object, which `head` returns (S3 user metadata: lower-case names,
   * ASCII values, 2 KB in all): an image's manifest on its `original` (lib/media/images.ts).
   */
  metadata?: Record<string, string>;
  /** The put returns only once the object is where every reader finds it (a store writing behind, the local one, waits for this one). */
  durable?: boolean;
}

/** What `head` tells of a stored object. */
export interface BlobHead {
  metadata: Record<string, string>;
}

/** Where assets (rendered images, text versions) and job results are stored. */
export interface BlobStore {
  put(key: string, body: Buffer | string, options: PutOptions): Promise<void>;
  has(key: string): Promise<boolean>;
  /** The object's metadata (PutOptions.metadata; empty when it has none), or undefined when there is no such object. One HEAD on S3. */
  head(key: string): Promise<BlobHead | undefined>;
  get(key: string): Promise<Buffer | undefined>;
  /** The public address of an asset key (CloudFront or the local server's /assets/). */
  publicUrl(key: string): string;
  /**
   * A put whose bytes are still being made (an image's WebP encodes): from now on the key is
   * there to this store's readers, who wait for the bytes, so its address may go out in a record
   * at once. Only a store that can hold a read does it (the local server's, writing behind:
   * lib/adapters/local/fs-blob-store.ts); S3 cannot (a reader through CloudFront would get a
   * 404), so there the object is put once made. Its file is written once `made` is there and,
   * when given, once `after` settled (a manifest after the sizes it names); readers do not wait
   * for `after`. Resolves once written; `made` failing: logged, and the key is what it was before
   * (as a failed write behind).
   */
  putLater?(key: string, made: Promise<BlobToPut>, after?: Promise<unknown>): Promise<void>;
  /** The keys under `prefix`, in no set order: for small private indexes (a key's open batches, lib/batch/store.ts). One LIST per 1,000 on S3. */
  list?(prefix: string): Promise<string[]>;
  /** Removes the object; a missing one is no error. */
  delete?(key: string): Promise<void>;
}

/** The bytes and options of a put (BlobStore.putLater). */
export interface BlobToPut {
  body: Buffer | string;
  options: PutOptions;
}

export const IMMUTABLE_CACHE = 'public, max-age=31536000, immutable';

export interface Job<K extends JobKind = JobKind> {
  /** Unique within a request; also names the result object. */
  id: string;
  kind: K;
  input: JobInput<K>;
}

/** How a job ended: its kind's result, or why there is none (failed, or past the deadline). */
export type JobOutcome<K extends JobKind = JobKind> =
  | { [P in K]: { id: string; kind: P; ok: true; result: JobResult<P>; ms: number; parts?: JobParts } }[K]
  | { id: string; ok: false; error: string; ms: number };

/**
 * The durations of a job's parts, in ms, as it marked them (JobContext.mark): an image job's
 * `download`, `render` and `store`. Server-Timing reports them under the job's phase (lib/timing.ts).
 */
export type JobParts = Record<string, number>;

export interface RunOptions {
  requestId: string;
  /** Epoch milliseconds after which unfinished jobs are reported as failed (left out of the record). */
  deadline: number;
  /**
   * The preview's route (lib/fetch/proxy-route.ts): the jobs' fetches send the hosts it put on the
   * proxy through the proxy too. In process the state itself; on AWS its hint travels with the job.
   */
  route?: RouteState;
  /**
   * The caller goes without these jobs' outcome for now (the page's content, when the record needs
   * neither its excerpt nor its reading time): a runner whose jobs share the process's cores and
   * that parks such work (the local server's: lib/jobs/idle-work.ts) may run them only when the
   * process is idle, or when this key is asked for (the page's digest: its versions' addresses),
   * and answers PARKED for each at once. Other runners run them as usual.
   */
  idleKey?: string;
}

/** The outcome error of a job parked until the process is idle (RunOptions.idleKey). */
export const PARKED = 'parked until idle';

/** Runs heavy jobs (image renditions, media probes, ...) and waits for them, up to a deadline. */
export interface JobRunner {
  /** The outcome of every job, by job id, typed by the kinds asked for. */
  run<K extends JobKind>(jobs: Job<K>[], options: RunOptions): Promise<Map<string, JobOutcome<K>>>;
  /**
   * True when the jobs run on this machine's cores, beside the requests (the local runner); false
   * or absent when they run elsewhere (worker Lambdas). Work the record may not need is then held
   * back so it does not take the cores from the rest: the screenshot starts once the rest of the
   * record is ready (lib/page/describe-page.ts).
   */
  readonly sharesCpu?: boolean;
}

/** Checks bearer keys. */
export interface KeyStore {
  /** True when the key is one of the current keys (a store fed by a KeyHashSource may fetch them first). */
  verify(presentedKey: string): Promise<boolean>;
}

/**
 * Key digests that can change without a redeploy (an SSM parameter, a Secrets Manager secret):
 * the current SHA-256 hex digests, which the source may cache for its own max age.
 */
export interface KeyHashSource {
  hashes(): Promise<readonly string[]>;
}

/** A message to put on a WorkQueue. */
export interface QueueMessage<T> {
  /**
   * Unique within the queue. Locally a message sent again under an id still queued replaces it; SQS
   * may hold both: the handlers make a second delivery do nothing twice (lib/batch/work.ts).
   */
  id: string;
  /** Whose work it is (an API key's id): the queue takes turns between groups, so one group's backlog never holds another's back. */
  group: string;
  body: T;
  /** Not handed out before this many ms from now. */
  delayMs?: number;
}

/** A message as its handler gets it: `attempt` is 1 on the first delivery. */
export interface ReceivedMessage<T> extends QueueMessage<T> {
  attempt: number;
}

/** What a handler did with a message: done (it leaves the queue), or to be handed out again after `retryInMs`. */
export type MessageOutcome = 'done' | { retryInMs: number };

/** Handles one message. A handler that throws has its message handed out again later (at least once). */
export type QueueHandler<T> = (message: ReceivedMessage<T>) => Promise<MessageOutcome>;

/**
 * A durable queue of work (a batch's previews, webhook deliveries): a message sent is handed to
 * the queue's handler at least once, after a crash too. Locally a directory of the data dir
 * (lib/adapters/local/file-queue.ts); on AWS an SQS queue (lib/adapters/aws/sqs-work-queue.ts).
 */
export interface WorkQueue<T> {
  send(messages: readonly QueueMessage<T>[]): Promise<void>;
}
