/**
 * Nothing lost: the local server (`npm start`, functions/start-local.ts, in a process of its own)
 * killed with SIGKILL in the middle of a batch of 200 links, then started again on the same data
 * dir, finishes it: every item done, and every webhook delivered and verified by `standardwebhooks`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { type Receiver, startReceiver } from './receiver';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const KEY = 'kill-test-key-0123456789';
const LINKS = 200;
const root = path.resolve(__dirname, '../..');

let site: FixtureServer;
let receiver: Receiver;
let dataDir: string;
beforeAll(async () => {
  site = await startFixtureServer();
  for (let i = 0; i < LINKS; i++) {
    site.route(`/item/${i}`, async (_req, res) => {
      // A little time each, so that the kill lands in the middle of the batch.
      await new Promise((r) => setTimeout(r, 15));
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<html><head><title>Item ${i}</title><meta name="description" content="Link number ${i} of the batch."></head></html>`);
    });
  }
  receiver = await startReceiver(SECRET);
  dataDir = mkdtempSync(path.join(tmpdir(), 'linklens-kill-'));
});
afterAll(async () => {
  await Promise.all([site.close(), receiver.close()]);
  rmSync(dataDir, { recursive: true, force: true });
});

/** `npm start` on a free port, with the test's data dir; resolves with its URL once it prints its line. */
async function start(): Promise<{ child: ChildProcess; url: string }> {
  // node itself with tsx's loader (tsx's CLI runs the server in a child process of its own, which a SIGKILL of the CLI would not reach).
  const child = spawn(process.execPath, ['--import', 'tsx', 'functions/start-local.ts'], {
    cwd: root,
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: '0',
      LINKPREVIEW_API_KEYS: KEY,
      LINKPREVIEW_ALLOW_LOOPBACK: 'true',
      LINKPREVIEW_LOG_LEVEL: 'silent',
      LINKPREVIEW_DATA_DIR: dataDir,
      LINKPREVIEW_WEBHOOK_SECRETS: SECRET,
      LINKPREVIEW_WEBHOOK_RETRIES: '50ms,50ms,50ms',
      LINKPREVIEW_SCREENSHOTS: 'off',
      LINKPREVIEW_RENDER: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (d) => {
      out += d;
      if (out.includes('\n')) resolve(out);
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  return { child, url: (/http:\/\/127\.0\.0\.1:\d+/.exec(line) as RegExpExecArray)[0] };
}

test('a server killed (SIGKILL) in the middle of a batch of 200 finishes it after a restart: all done, all delivered', async () => {
  const first = await start();
  const batchIds: string[] = [];
  try {
    for (let b = 0; b < LINKS / 100; b++) {
      const links = Array.from({ length: 100 }, (_, i) => site.url(`/item/${b * 100 + i}`));
      const res = await fetch(`${first.url}/previews`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ links, callbackUrl: receiver.url }),
      });
      expect(res.status).toBe(202);
      batchIds.push(((await res.json()) as { batchId: string }).batchId);
    }
    // Some are delivered, most are not: the kill.
    await receiver.until((d) => d.filter((x) => x.event?.type === 'preview.completed').length >= 20);
  } finally {
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
  }
  const deliveredBefore = new Set(receiver.deliveries.map((d) => d.id)).size;
  expect(deliveredBefore).toBeLessThan(LINKS);

  const second = await start();
  try {
    const wanted = [...batchIds.flatMap((id) => Array.from({ length: 100 }, (_, i) => `msg_${id}_${i}`)), ...batchIds.map((id) => `msg_${id}_batch`)];
    await receiver.until(() => {
      const seen = receiver.byId();
      return wanted.every((id) => seen.get(id)?.some((d) => d.answered < 300));
    });
    expect(receiver.deliveries.every((d) => d.verified)).toBe(true);
    for (const id of batchIds) {
      const res = await fetch(`${second.url}/previews/${id}`, { headers: { authorization: `Bearer ${KEY}` } });
      const batch = (await res.json()) as { state: string; counts: Record<string, number>; items: { index: number; record?: { title?: string } }[] };
      expect(batch.state).toBe('done');
      expect(batch.counts).toEqual({ queued: 0, running: 0, done: 100, failed: 0 });
      const offset = id === batchIds[0] ? 0 : 100;
      expect(batch.items.every((i) => i.record?.title === `Item ${offset + i.index}`)).toBe(true);
    }
    // Each item's webhook carried its own record.
    const item = receiver.byId().get(`msg_${batchIds[1]}_99`)?.[0].event;
    expect(item?.data.item.record.title).toBe('Item 199');
  } finally {
    const exited = new Promise((resolve) => second.child.once('exit', resolve));
    second.child.kill('SIGTERM');
    await exited;
  }
}, 180_000);
