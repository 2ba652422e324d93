/**
 * The local WorkQueue (lib/adapters/local/file-queue.ts): fair turns between groups, messages that
 * survive a process that stopped in the middle, retries, and the gate that holds it back. What is
 * asserted is what the queue decides (the order it hands messages out in), never how fast.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FileQueue } from '../../../lib/adapters/local/file-queue';
import type { MessageOutcome, ReceivedMessage } from '../../../lib/ports';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'file-queue-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A handler whose messages finish only when the test says; `started` lists them in order. */
function heldHandler() {
  const started: string[] = [];
  const waiting: (() => void)[] = [];
  let onStart = () => {};
  const handler = (m: ReceivedMessage<unknown>) =>
    new Promise<MessageOutcome>((resolve) => {
      started.push(m.id);
      waiting.push(() => resolve('done'));
      onStart();
    });
  return {
    handler,
    started,
    /** Finishes the oldest running message, and waits for the next to start (`last`: none is left, nothing to wait for). */
    async finishOne(last = false): Promise<void> {
      const next = new Promise<void>((resolve) => {
        onStart = resolve;
      });
      waiting.shift()?.();
      if (!last) await next;
    },
  };
}

const msgs = (group: string, n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ id: `${group}-${from + i}`, group, body: {} }));

test("one key's 1,000 queued messages hold another key's single one back by the message already running only", async () => {
  const h = heldHandler();
  const q = new FileQueue({ dir, lanes: 1, handler: h.handler });
  await q.start();
  await q.send(msgs('a', 1000));
  expect(h.started).toEqual(['a-0']);
  await q.send(msgs('b', 1));
  await h.finishOne();
  expect(h.started).toEqual(['a-0', 'b-0']);
  await h.finishOne();
  expect(h.started).toEqual(['a-0', 'b-0', 'a-1']);
  expect(q.size).toBe(999); // a-1 running, a-2..a-999 queued: none of b's left
  void q.close(); // a message is still held: the queue stops handing out, and is not waited for
});

test('a key that keeps sending one message at a time takes turns with the others, never ahead of them', async () => {
  const h = heldHandler();
  const q = new FileQueue({ dir, lanes: 1, handler: h.handler });
  await q.start();
  await q.send(msgs('a', 5));
  for (let i = 0; i < 4; i++) {
    await q.send(msgs('b', 1, i));
    await h.finishOne();
  }
  expect(h.started).toEqual(['a-0', 'b-0', 'a-1', 'b-1', 'a-2']);
  void q.close(); // a message is still held: the queue stops handing out, and is not waited for
});

test('messages left by a process that stopped in the middle are handed out when the next one starts (one still being handled too)', async () => {
  const first = heldHandler();
  const q1 = new FileQueue({ dir, lanes: 1, handler: first.handler });
  await q1.start();
  await q1.send(msgs('a', 3));
  expect(first.started).toEqual(['a-0']);
  // The process "dies": nothing more is handed out, and a-0 never finished. A write cut off before its rename is left too.
  await Promise.race([q1.close(), Promise.resolve()]);
  writeFileSync(path.join(dir, 'a-9.json.123.7.tmp'), '{"id":"a-9"');
  const seen: ReceivedMessage<unknown>[] = [];
  const q2 = new FileQueue({
    dir,
    lanes: 1,
    handler: async (m) => {
      seen.push(m);
      return 'done';
    },
  });
  await q2.start();
  await q2.whenEmpty();
  expect(seen.map((m) => m.id)).toEqual(['a-0', 'a-1', 'a-2']);
  expect(readdirSync(dir)).toEqual([]);
  await q2.close();
});

test('a retry is handed out again with its attempt counted, a handler that throws is retried, and done removes the file', async () => {
  const seen: string[] = [];
  const q = new FileQueue<{ n: number }>({
    dir,
    lanes: 2,
    errorBackoffMs: 1,
    handler: async (m) => {
      seen.push(`${m.id}#${m.attempt}`);
      if (m.id === 'r' && m.attempt < 3) return { retryInMs: 1 };
      if (m.id === 't' && m.attempt < 2) throw new Error('boom');
      return 'done';
    },
  });
  await q.start();
  await q.send([
    { id: 'r', group: 'g', body: { n: 1 } },
    { id: 't', group: 'g', body: { n: 2 } },
  ]);
  await q.whenEmpty();
  expect(seen.filter((s) => s.startsWith('r'))).toEqual(['r#1', 'r#2', 'r#3']);
  expect(seen.filter((s) => s.startsWith('t'))).toEqual(['t#1', 't#2']);
  expect(readdirSync(dir)).toEqual([]);
  await q.close();
});

test('a message sent again under an id still queued replaces it (one delivery, the last body)', async () => {
  const h = heldHandler();
  const bodies: unknown[] = [];
  const q = new FileQueue<{ v: number }>({
    dir,
    lanes: 1,
    handler: async (m) => {
      bodies.push(m.body);
      return h.handler(m);
    },
  });
  await q.start();
  await q.send([{ id: 'first', group: 'g', body: { v: 0 } }]);
  await q.send([{ id: 'x', group: 'g', body: { v: 1 } }]);
  await q.send([{ id: 'x', group: 'g', body: { v: 2 } }]);
  expect(q.size).toBe(2);
  await h.finishOne();
  await h.finishOne(true);
  await q.whenEmpty();
  expect(bodies).toEqual([{ v: 0 }, { v: 2 }]);
  await q.close();
});

test('while mayStart says no, nothing starts; once it says yes, the queue starts by itself', async () => {
  let open = false;
  const seen: string[] = [];
  const q = new FileQueue({
    dir,
    lanes: 1,
    recheckMs: 5,
    mayStart: () => open,
    handler: async (m) => {
      seen.push(m.id);
      return 'done';
    },
  });
  await q.start();
  await q.send(msgs('a', 2));
  await new Promise((r) => setTimeout(r, 30));
  expect(seen).toEqual([]);
  open = true;
  await q.whenEmpty();
  expect(seen).toEqual(['a-0', 'a-1']);
  await q.close();
});

test('an id that could leave the directory is refused', async () => {
  const q = new FileQueue({ dir, lanes: 1, handler: async () => 'done' });
  await q.start();
  await expect(q.send([{ id: '../escape', group: 'g', body: {} }])).rejects.toThrow('not allowed');
  await q.close();
});
