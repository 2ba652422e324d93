/**
 * The decoder caps, directly: wall time and abort kill the child process, decoding stops at the
 * duration cap, a playlist cannot make ffmpeg open anything, the Flate budget spots a bomb, and
 * file names come from Content-Disposition or the URL. The decoders here would run forever (a
 * live `-re` source): that they return at all, with the cap's own error, is the check; how long
 * they take is in `npm run bench`, never asserted.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { buildFetcher } from '../../functions/wiring';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { computeWaveform } from '../../lib/media/audio';
import { fileNameOf } from '../../lib/media/media-fetch';
import { describePdf, withinInflateBudget } from '../../lib/media/pdf';
import { probeFile } from '../../lib/media/probe';
import { ffmpegBinary, runTool, ToolError } from '../../lib/media/run-tool';
import { countWords, firstHeadingLine, leadSentences, readingMinutes } from '../../lib/media/text';
import { startFixtureServer } from '../helpers/fixture-server';
import { testConfig } from '../helpers/service';
import * as fx from './fixtures';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'linklens-caps-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('a decoder running past its time cap is killed and reported as timed out', async () => {
  // An endless live source: only the 300 ms cap can end it.
  const err = await runTool(await ffmpegBinary(), ['-v', 'error', '-re', '-f', 'lavfi', '-i', 'sine=frequency=440', '-f', 'null', '-'], {
    timeoutMs: 300,
  }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ToolError);
  expect((err as ToolError).timedOut).toBe(true);
  expect((err as ToolError).transient).toBe(true);
});

test('an aborted job kills its decoder', async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 200);
  // The abort, not the 10 s cap, ended it: the error is the abort's, not a timeout.
  const err = await runTool(await ffmpegBinary(), ['-v', 'error', '-re', '-f', 'lavfi', '-i', 'sine=frequency=440', '-f', 'null', '-'], {
    timeoutMs: 10_000,
    signal: controller.signal,
  }).catch((e: unknown) => e);
  expect((err as Error).message).toBe('aborted');
  expect((err as ToolError).timedOut).not.toBe(true);
  expect((err as ToolError).transient).toBe(true);
});

test('the waveform decodes at most maxSeconds: a tone then silence looks loud throughout when capped at the tone', async () => {
  const tone = await fx.ffmpegMake(
    [
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=300:duration=1:sample_rate=8000',
      '-f',
      'lavfi',
      '-t',
      '1',
      '-i',
      'anullsrc=r=8000:cl=mono',
      '-filter_complex',
      '[0:a][1:a]concat=n=2:v=0:a=1',
      '-ac',
      '1',
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
    ],
    'x.wav',
  );
  const file = path.join(dir, 'tone-then-silence.wav');
  await writeFile(file, tone);
  const full = (await computeWaveform(file, { maxSeconds: 60, timeoutMs: 5000 }))!;
  expect(full).toHaveLength(100);
  expect(Math.min(...full.slice(0, 45))).toBeGreaterThan(0.05);
  expect(Math.max(...full.slice(55))).toBe(0);
  const capped = (await computeWaveform(file, { maxSeconds: 1, timeoutMs: 5000 }))!;
  expect(Math.min(...capped)).toBeGreaterThan(0.05);
});

test('a playlist cannot make the decoders open a URL or another file', async () => {
  const fixture = await startFixtureServer({ '/secret.mp3': { headers: { 'content-type': 'audio/mpeg' }, body: await fx.mp3({ seconds: 1 }) } });
  try {
    const playlist = path.join(dir, 'list.bin');
    await writeFile(playlist, `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n${fixture.url('/secret.mp3')}\n#EXTINF:1,\n/etc/hostname\n#EXT-X-ENDLIST\n`);
    await expect(probeFile(playlist, { timeoutMs: 5000 })).rejects.toBeInstanceOf(ToolError);
    const concat = path.join(dir, 'concat.bin');
    await writeFile(concat, `ffconcat version 1.0\nfile '${fixture.url('/secret.mp3')}'\n`);
    await expect(probeFile(concat, { timeoutMs: 5000 })).rejects.toBeInstanceOf(ToolError);
    expect(fixture.requests).toHaveLength(0);
  } finally {
    await fixture.close();
  }
});

test('the Flate budget passes ordinary PDFs and stops a bomb', () => {
  expect(withinInflateBudget(fx.makePdf({ pages: fx.proseDocument(2) }), 1024 * 1024)).toBe(true);
  const bomb = Buffer.concat([
    Buffer.from('%PDF-1.4\n1 0 obj\n<< /Filter /FlateDecode /Length 1 >>\nstream\n'),
    deflateSync(Buffer.alloc(8 * 1024 * 1024)),
    Buffer.from('\nendstream\nendobj\n'),
  ]);
  expect(withinInflateBudget(bomb, 1024 * 1024)).toBe(false);
  expect(withinInflateBudget(bomb, 16 * 1024 * 1024)).toBe(true);
});

test('hostile: a small PDF that keeps pdf.js busy is stopped at the decode cap in its worker thread; the event loop stays free', async () => {
  const bytes = fx.heavyContentPdf(1_500_000);
  expect(bytes.length).toBeLessThan(300 * 1024);
  const config = testConfig({ mediaDecodeTimeoutMs: 1500 });
  const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
  // Ticks of a timer while pdf.js works: on the main thread it held the event loop for over two
  // minutes (no tick at all until it was done).
  let ticks = 0;
  const tick = setInterval(() => {
    ticks++;
  }, 25);
  try {
    const r = await describePdf(bytes, 'heavy.pdf', { fetch: buildFetcher(config), blobs, config }, { complete: true });
    const ticksDuringDecode = ticks;
    // The event loop stayed free: the timer kept firing while the worker thread decoded.
    expect(ticksDuringDecode).toBeGreaterThanOrEqual(5);
    // pdf.js read the document's structure before the cap; its text and renders did not finish.
    expect(r.document).toMatchObject({ title: 'heavy.pdf', pageCount: 1, isEncrypted: false, type: 'pdf' });
    expect(r.document.rawTextUrl).toBeUndefined();
  } finally {
    clearInterval(tick);
    config.cleanup();
  }
}, 30_000);

test('file names: Content-Disposition (RFC 5987 and plain), else the decoded last path segment', () => {
  expect(fileNameOf('http://x/a/b.pdf', "attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf")).toBe('résumé.pdf');
  expect(fileNameOf('http://x/a/b.pdf', 'attachment; filename="../../etc/report.pdf"')).toBe('report.pdf');
  expect(fileNameOf('http://x/a/my%20clip.mp4')).toBe('my clip.mp4');
  expect(fileNameOf('http://x/')).toBeUndefined();
});

test('text facts: words (CJK counted per character), reading minutes, heading line, lead sentences', () => {
  expect(countWords('one two three')).toBe(3);
  expect(countWords('日本語の文章')).toBe(6);
  expect(readingMinutes(0)).toBe(0);
  expect(readingMinutes(1)).toBe(1);
  expect(readingMinutes(231)).toBe(2);
  expect(firstHeadingLine('\n\n## Release notes\nbody')).toBe('Release notes');
  expect(firstHeadingLine('{"a":1}')).toBeUndefined();
  expect(leadSentences('Title\nShort. This sentence has enough words to count. And so does this second one here.', 'Title')).toBe(
    'This sentence has enough words to count. And so does this second one here.',
  );
});
