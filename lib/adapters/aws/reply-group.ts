/**
 * The replies of one request's jobs in one worker invocation, sent together. A preview waits for
 * its card's jobs (a page's image and icon: lib/preview/preview-link.ts), so a card reply that is ready before
 * its siblings helps nobody until the last of them is. The preview sends its jobs in one
 * SendMessageBatch, and the event source mapping hands them to one invocation: there each card
 * reply is held until every card job of its request in the invocation has its own, and then they
 * all go out as one SendMessageBatch (MessageBatcher, beside this file), which the preview's one
 * long-polled ReceiveMessage takes at once. Three jobs then cost one send and one receive, not
 * three of each.
 *
 * An extra (a job the record does not wait for beyond its card: the page's content, a
 * screenshot; its kind's `priority`, lib/jobs/specs.ts) never holds the card's replies: ready
 * while they are held, it goes out with them; ready after them, on its own.
 *
 * A held reply never waits for a sibling past its own deadline less HOLD_MARGIN_MS: a sibling
 * still running then (a slow download) does not cost the preview the replies that are ready. A job
 * that ends without a reply (a duplicate, expired, or an infrastructure failure SQS retries)
 * leaves its group, so the others do not wait for it.
 */
import type { MessageBatcher } from './message-batcher.js';

/** A reply is sent at the latest this long before its job's deadline, whatever its siblings do. */
export const HOLD_MARGIN_MS = 2000;

interface Held {
  body: string;
  label: string;
  resolve(): void;
  reject(err: Error): void;
}

interface Group {
  queueUrl: string;
  /** The group's card jobs that have not yet replied or left. */
  open: number;
  held: Held[];
  /** Epoch ms: the earliest time a held reply must go out. */
  sendBy: number;
  timer?: NodeJS.Timeout;
}

/** One job's place in its group: it replies once, or leaves once. */
export interface ReplyMember {
  /** The job's reply: resolves once it is queued (with its siblings'), rejects with why it was not. */
  reply(body: string, label: string, deadline: number): Promise<void>;
  /** The job ends without a reply: its siblings no longer wait for it. */
  leave(): void;
}

export class ReplyGroups {
  private readonly groups = new Map<string, Group>();

  constructor(
    private readonly batcher: Pick<MessageBatcher, 'send'>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * A job of `requestId` that will reply to `queueUrl` (every job of the invocation joins before any
   * replies): a card job (the default), or an `extra` that holds no sibling's reply.
   */
  join(queueUrl: string, requestId: string, priority: 'card' | 'extra' = 'card'): ReplyMember {
    const key = groupKey(queueUrl, requestId);
    const g = this.groups.get(key) ?? { queueUrl, open: 0, held: [], sendBy: Number.POSITIVE_INFINITY };
    const card = priority === 'card';
    if (card) g.open++;
    this.groups.set(key, g);
    let done = false;
    return {
      reply: (body, label, deadline) => {
        if (done) return Promise.reject(new Error('replied or left already'));
        done = true;
        return new Promise<void>((resolve, reject) => {
          g.held.push({ body, label, resolve, reject });
          if (card) g.open--;
          g.sendBy = Math.min(g.sendBy, deadline - HOLD_MARGIN_MS);
          this.settle(key, g);
        });
      },
      leave: () => {
        if (done) return;
        done = true;
        if (!card) return;
        g.open--;
        this.settle(key, g);
      },
    };
  }

  /** Sends what is held when nothing else is awaited, or when the first held reply must go. */
  private settle(key: string, g: Group): void {
    if (g.timer) clearTimeout(g.timer);
    g.timer = undefined;
    const wait = g.sendBy - this.now();
    if (g.open <= 0 || wait <= 0) this.flush(key, g);
    else if (g.held.length) g.timer = setTimeout(() => this.flush(key, g), wait);
  }

  private flush(key: string, g: Group): void {
    if (g.timer) clearTimeout(g.timer);
    g.timer = undefined;
    const held = g.held;
    g.held = [];
    g.sendBy = Number.POSITIVE_INFINITY;
    if (g.open <= 0) this.groups.delete(key);
    // In one turn: the batcher puts them in one SendMessageBatch.
    for (const h of held) this.batcher.send(g.queueUrl, h.body, h.label).then(h.resolve, h.reject);
  }
}

const groupKey = (queueUrl: string, requestId: string) => `${queueUrl}\n${requestId}`;
