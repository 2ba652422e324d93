/**
 * The local WorkQueue (lib/ports.ts): one JSON file per message in a directory of the data dir,
 * handed to its handler by this process, a few at a time (`lanes`).
 *
 * - **Durable:** a message is a file (written aside, then renamed into place) from the moment
 *   `send` resolves until its handler is done with it; a process killed at any point (`kill -9`)
 *   finds every message not done in the directory when it starts again, and hands it out again
 *   (at least once).
 * - **Fair:** messages are handed out in turns between groups (API keys), in order within one: a
 *   group with 10,000 messages queued holds another's single message back by at most the messages
 *   already being handled.
 * - **Retries:** a handler answers when to hand a message out again (`retryInMs`: the webhook
 *   schedule); one that throws has it handed out again after a backoff.
 * - **Second to the callers waiting:** `mayStart` (the local server: no interactive preview waits
 *   for a slot) is asked before each message starts; while it says no, the queue looks again soon.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { errorFields, type Log } from '../../log.js';
import type { MessageOutcome, QueueHandler, QueueMessage, WorkQueue } from '../../ports.js';

export interface FileQueueOptions<T> {
  /** The queue's directory (created when missing). */
  dir: string;
  handler: QueueHandler<T>;
  /** Messages handled at once. */
  lanes: number;
  /** A message whose handler threw is handed out again after this many ms, doubled at each attempt (default 1 s), at most `maxBackoffMs` (default 5 min). */
  errorBackoffMs?: number;
  maxBackoffMs?: number;
  /** Asked before each message starts; while false, none starts (and the queue asks again every `recheckMs`, default 25 ms). */
  mayStart?: () => boolean;
  recheckMs?: number;
  log?: Log;
  now?: () => number;
}

/** A message as its file holds it. */
interface Stored<T> extends QueueMessage<T> {
  /** Deliveries so far (the next is attempt + 1). */
  attempt: number;
  /** Epoch ms before which it is not handed out. */
  notBefore: number;
  /** Its place in the order of sends (within a group, messages go out in this order). */
  seq: number;
}

const SAFE_ID = /^[A-Za-z0-9_.-]{1,200}$/;

export class FileQueue<T> implements WorkQueue<T> {
  private readonly stored = new Map<string, Stored<T>>();
  private readonly ready = new Map<string, Stored<T>[]>();
  /** Messages waiting for their time (notBefore). */
  private readonly later = new Set<Stored<T>>();
  /** When each group last had a message started (its turn): the ready group served longest ago goes next. */
  private readonly served = new Map<string, number>();
  private turn = 0;
  private readonly running = new Map<string, Promise<void>>();
  /** Messages sent again while being handled: kept (not removed) once their handler is done. */
  private readonly again = new Map<string, Stored<T>>();
  private seq = 0;
  private timer?: NodeJS.Timeout;
  private timerAt = Number.POSITIVE_INFINITY;
  private started = false;
  private stopped = false;
  private readonly emptyWaiters: (() => void)[] = [];
  private readonly now: () => number;

  constructor(private readonly options: FileQueueOptions<T>) {
    this.now = options.now ?? Date.now;
  }

  /** Reads the messages left in the directory (those of a process that stopped, or was killed) and starts handing them out. */
  async start(): Promise<void> {
    await fs.mkdir(this.options.dir, { recursive: true });
    const names = await fs.readdir(this.options.dir);
    const found: Stored<T>[] = [];
    for (const name of names) {
      const file = path.join(this.options.dir, name);
      if (!name.endsWith('.json')) {
        await fs.rm(file, { force: true }); // a write cut off before its rename
        continue;
      }
      try {
        found.push(JSON.parse(await fs.readFile(file, 'utf8')) as Stored<T>);
      } catch (err) {
        this.options.log?.error('queue message unreadable, set aside', { file, ...errorFields(err) });
        await fs.rename(file, `${file}.unreadable`).catch(() => undefined);
      }
    }
    found.sort((a, b) => a.seq - b.seq);
    for (const m of found) {
      this.seq = Math.max(this.seq, m.seq + 1);
      this.track(m);
    }
    this.started = true;
    this.pump();
  }

  async send(messages: readonly QueueMessage<T>[]): Promise<void> {
    const at = this.now();
    await Promise.all(
      messages.map(async (m) => {
        if (!SAFE_ID.test(m.id)) throw new Error(`queue message id not allowed: ${m.id.slice(0, 60)}`);
        const known = this.stored.get(m.id);
        const message: Stored<T> = { id: m.id, group: m.group, body: m.body, attempt: 0, notBefore: at + (m.delayMs ?? 0), seq: this.seq++ };
        await this.write(message);
        if (this.running.has(m.id)) this.again.set(m.id, message);
        else if (known) Object.assign(known, { body: m.body, notBefore: message.notBefore, attempt: 0 });
        else this.track(message);
      }),
    );
    this.pump();
  }

  /** Messages not done (queued, waiting for a retry, or being handled). */
  get size(): number {
    return this.stored.size;
  }

  /** Resolves once no message is left (tests; a message waiting for its retry counts). */
  whenEmpty(): Promise<void> {
    if (this.stored.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptyWaiters.push(resolve));
  }

  /** Stops handing out messages, and waits for those being handled (their files stay until done: a restart hands out the rest). */
  async close(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await Promise.allSettled([...this.running.values()]);
  }

  private track(m: Stored<T>): void {
    this.stored.set(m.id, m);
    this.requeue(m);
  }

  private makeReady(m: Stored<T>): void {
    const line = this.ready.get(m.group);
    if (line) {
      // In the order of sends: a retry goes back to its place (a new message, to the end).
      const at = line[line.length - 1].seq < m.seq ? -1 : line.findIndex((x) => x.seq > m.seq);
      line.splice(at < 0 ? line.length : at, 0, m);
    } else {
      this.ready.set(m.group, [m]);
    }
  }

  /**
   * The next message: the first of the ready group that was served longest ago (never, first). A
   * key that submits one link while another has thousands queued waits only for the messages
   * already running; and a key that keeps sending one at a time cannot starve the others, as its
   * own last turn is the most recent.
   */
  private next(): Stored<T> | undefined {
    let group: string | undefined;
    let oldest = Number.POSITIVE_INFINITY;
    for (const g of this.ready.keys()) {
      const at = this.served.get(g) ?? -1;
      if (at < oldest) [group, oldest] = [g, at];
    }
    if (group === undefined) return undefined;
    const line = this.ready.get(group) ?? [];
    const m = line.shift();
    if (line.length === 0) this.ready.delete(group);
    this.served.set(group, this.turn++);
    if (this.served.size > 10_000) for (const g of this.served.keys()) if (!this.ready.has(g)) this.served.delete(g);
    return m;
  }

  private pump(): void {
    if (!this.started || this.stopped) return;
    this.promoteDue();
    while (this.running.size < this.options.lanes && this.ready.size) {
      if (this.options.mayStart && !this.options.mayStart()) {
        this.wake(this.now() + (this.options.recheckMs ?? 25));
        return;
      }
      const m = this.next();
      if (m) this.running.set(m.id, this.handle(m));
    }
  }

  /** Messages whose time has come go to their group's line; the timer is set for the next one. */
  private promoteDue(): void {
    const now = this.now();
    let nextAt = Number.POSITIVE_INFINITY;
    for (const m of this.later) {
      if (m.notBefore <= now) {
        this.later.delete(m);
        this.makeReady(m);
      } else nextAt = Math.min(nextAt, m.notBefore);
    }
    if (nextAt < Number.POSITIVE_INFINITY) this.wake(nextAt);
  }

  private wake(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timerAt = Number.POSITIVE_INFINITY;
        this.pump();
      },
      Math.max(0, Math.min(at - this.now(), 2 ** 31 - 1)),
    );
    this.timer.unref();
  }

  private async handle(m: Stored<T>): Promise<void> {
    const attempt = m.attempt + 1;
    let outcome: MessageOutcome;
    try {
      outcome = await this.options.handler({ id: m.id, group: m.group, body: m.body, attempt });
    } catch (err) {
      const base = this.options.errorBackoffMs ?? 1000;
      const retryInMs = Math.min(base * 2 ** (attempt - 1), this.options.maxBackoffMs ?? 300_000);
      this.options.log?.warn('queue message failed, handed out again later', { id: m.id, attempt, retryInMs, ...errorFields(err) });
      outcome = { retryInMs };
    }
    try {
      await this.settle(m, attempt, outcome);
    } catch (err) {
      // The file is as it was: a restart hands the message out again.
      this.options.log?.error('queue message could not be settled', { id: m.id, ...errorFields(err) });
    }
    this.running.delete(m.id);
    this.pump();
  }

  private async settle(m: Stored<T>, attempt: number, outcome: MessageOutcome): Promise<void> {
    const resent = this.again.get(m.id);
    this.again.delete(m.id);
    if (resent) {
      Object.assign(m, { body: resent.body, attempt: 0, notBefore: resent.notBefore, seq: resent.seq });
      this.requeue(m);
      return;
    }
    if (outcome === 'done') {
      await fs.rm(this.file(m.id), { force: true });
      this.forget(m);
      return;
    }
    m.attempt = attempt;
    m.notBefore = this.now() + Math.max(0, outcome.retryInMs);
    await this.write(m);
    this.requeue(m);
  }

  private requeue(m: Stored<T>): void {
    if (m.notBefore <= this.now()) this.makeReady(m);
    else {
      this.later.add(m);
      this.wake(m.notBefore);
    }
  }

  private forget(m: Stored<T>): void {
    this.stored.delete(m.id);
    if (this.stored.size === 0) for (const resolve of this.emptyWaiters.splice(0)) resolve();
  }

  private file(id: string): string {
    return path.join(this.options.dir, `${id}.json`);
  }

  private async write(m: Stored<T>): Promise<void> {
    const file = this.file(m.id);
    const tmp = `${file}.${process.pid}.${m.seq}.tmp`;
    await fs.mkdir(this.options.dir, { recursive: true });
    await fs.writeFile(tmp, JSON.stringify(m));
    await fs.rename(tmp, file);
  }
}
