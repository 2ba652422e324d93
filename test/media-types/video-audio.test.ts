/**
 * VIDEO and AUDIO links end to end: fixtures made with the npm ffmpeg binary, served from the
 * loopback fixture server with and without Range support, previewed through the real local server.
 * Every field of the spec's Video and Audio objects is checked against the real file.
 */
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import * as fx from './fixtures';
import { expectImageSet, fetchAsset, ISO_DATE, preview, type Server, startServer } from './helpers';

let fixture: FixtureServer;
/** The main fetch reads only 16 KiB, so every media job fetches the link itself (Range or bounded). */
let server: Server;
/** Tight caps: a 64 KiB probe prefix and 20 s of decoding. */
let capped: Server;
const files: Record<string, Buffer> = {};

beforeAll(async () => {
  const cover = await fx.coverPng();
  [files.mp4, files.mp4Tail, files.webm, files.mp3, files.wav, files.m4a, files.longWav, files.bigMp4, files.bigMp4Tail] = await Promise.all([
    fx.mp4({ seconds: 4 }),
    fx.mp4({ seconds: 4, faststart: false }),
    fx.webm({ seconds: 2 }),
    fx.mp3({ seconds: 3, cover }),
    fx.wav({ seconds: 2 }),
    fx.m4a({ seconds: 2 }),
    fx.wav({ seconds: 600, silent: true }),
    fx.mp4({ seconds: 20, width: 640, height: 360, bitrate: '400k' }),
    fx.mp4({ seconds: 20, width: 640, height: 360, bitrate: '400k', faststart: false }),
  ]);
  fixture = await startFixtureServer({
    '/media/clip.mp4': fx.serveBytes(files.mp4, 'video/mp4'),
    '/plain/clip.mp4': fx.serveBytes(files.mp4, 'video/mp4', { range: false }),
    '/media/tail-moov.mp4': fx.serveBytes(files.mp4Tail, 'video/mp4', { range: false }),
    '/media/loop.webm': fx.serveBytes(files.webm, 'video/webm'),
    '/media/song.mp3': fx.serveBytes(files.mp3, 'application/octet-stream'),
    '/plain/song.mp3': fx.serveBytes(files.mp3, 'audio/mpeg', { range: false }),
    '/media/tone.wav': fx.serveBytes(files.wav, 'audio/wav', { headers: { 'last-modified': 'Tue, 02 Jan 2024 03:04:05 GMT' } }),
    '/media/undated.wav': fx.serveBytes(files.wav, 'audio/wav'),
    '/media/tone.m4a': fx.serveBytes(files.m4a, 'audio/mp4'),
    '/media/silence.wav': fx.serveBytes(files.longWav, 'audio/wav'),
    '/media/big.mp4': fx.serveBytes(files.bigMp4, 'video/mp4'),
    '/media/big-tail.mp4': fx.serveBytes(files.bigMp4Tail, 'video/mp4'),
    '/plain/big-tail.mp4': fx.serveBytes(files.bigMp4Tail, 'video/mp4', { range: false }),
    '/broken/truncated.mp4': fx.serveBytes(files.mp4Tail.subarray(0, Math.floor(files.mp4Tail.length / 2)), 'video/mp4'),
    '/broken/cut-faststart.mp4': fx.serveBytes(files.mp4.subarray(0, Math.floor(files.mp4.length * 0.6)), 'video/mp4'),
    '/broken/noise.mp4': fx.serveBytes(Buffer.alloc(50_000, 7), 'video/mp4'),
  });
  server = await startServer({ maxPageBytes: 16 * 1024 });
  capped = await startServer({ maxPageBytes: 16 * 1024, mediaProbeBytes: 256 * 1024, mediaMaxDurationSeconds: 20 });
}, 120_000);

afterAll(async () => {
  await server?.close();
  server?.cleanup();
  await capped?.close();
  capped?.cleanup();
  await fixture?.close();
});

function expectVideoFromMp4(r: any, size: number): void {
  expect(r.ok).toBe(true);
  expect(r.type).toBe('VIDEO');
  const v = r.video;
  expect(v.duration).toBeCloseTo(4, 0);
  expect(v.size).toBe(size);
  expect(v.frameRate).toBe(25);
  expect(v.videoCodec).toBe('h264');
  expect(v.hasAudio).toBe(true);
  expect(v.width).toBe(320);
  expect(v.height).toBe(240);
  expect(v.format).toBe('mp4');
  expect(v.bitRate).toBeGreaterThan(10_000);
  expect(v.name).toBe('clip.mp4');
  expect(v.title).toBe('Test Pattern');
  expect(v.author).toBe('Jane Director');
  expectImageSet(v.image, { width: 320, height: 240 });
  expect(v.snapshots).toHaveLength(4);
  const stamps = v.snapshots.map((s: any) => s.timestamp);
  expect(stamps).toEqual([...stamps].sort((a: number, b: number) => a - b));
  expect(stamps[0]).toBeGreaterThan(0);
  expect(stamps[3]).toBeLessThan(4);
  for (const s of v.snapshots) expectImageSet(s.image, { width: 320, height: 240 });
  // Different moments of a moving test pattern: different images.
  expect(new Set(v.snapshots.map((s: any) => s.image.original.url)).size).toBe(4);
  expect(v.video.thumbnail).toEqual({ width: 320, height: 240, url: expect.stringMatching(/\/assets\/[0-9a-f]{64}\/preview\.mp4$/) });
  expect(r.title).toBe('Test Pattern');
  expect(r.image).toEqual(v.image);
  expect(r.size).toBe(size);
}

describe('VIDEO', () => {
  test('MP4 with audio, server with Range: every Video field, poster, snapshots and a playable preview clip', async () => {
    const seen = fixture.requests.length;
    const r = await preview(server, fixture.url('/media/clip.mp4'));
    expectVideoFromMp4(r, files.mp4.length);
    const ranged = fixture.requests.slice(seen).filter((q) => q.url === '/media/clip.mp4' && q.headers.range);
    expect(ranged.length).toBeGreaterThan(0);
    const clip = await fetchAsset(r.video.video.thumbnail.url);
    expect(clip.status).toBe(200);
    expect(clip.type).toBe('video/mp4');
    expect(clip.body.subarray(4, 8).toString('latin1')).toBe('ftyp');
    const poster = await fetchAsset(r.video.image.medium.url);
    expect(poster.type).toBe('image/webp');
  });

  test('MP4 from a server without Range support: the bounded download gives the same facts', async () => {
    const r = await preview(server, fixture.url('/plain/clip.mp4'));
    expectVideoFromMp4(r, files.mp4.length);
  });

  test('MP4 with its index at the end (no faststart) still probes when the whole file fits', async () => {
    const r = await preview(server, fixture.url('/media/tail-moov.mp4'));
    expect(r.video.duration).toBeCloseTo(4, 0);
    expect(r.video.videoCodec).toBe('h264');
    expect(r.video.snapshots).toHaveLength(4);
  });

  test('WebM without sound: vp8, hasAudio false, format webm', async () => {
    const r = await preview(server, fixture.url('/media/loop.webm'));
    expect(r.type).toBe('VIDEO');
    expect(r.video).toMatchObject({
      videoCodec: 'vp8',
      hasAudio: false,
      format: 'webm',
      width: 160,
      height: 120,
      frameRate: 10,
      size: files.webm.length,
      name: 'loop.webm',
    });
    expect(r.video.duration).toBeCloseTo(2, 0);
    expectImageSet(r.video.image, { width: 160, height: 120 });
    expect(r.video.snapshots.length).toBeGreaterThanOrEqual(3);
    expect(r.title).toBe('loop.webm');
  });

  test('a large MP4 is described from a Range prefix: total size from Content-Range, frames only from the prefix', async () => {
    const seen = fixture.requests.length;
    const r = await preview(capped, fixture.url('/media/big.mp4'));
    expect(files.bigMp4.length).toBeGreaterThan(4 * 256 * 1024);
    expect(r.video.size).toBe(files.bigMp4.length);
    expect(r.video.duration).toBeCloseTo(20, 0);
    expect(r.video.width).toBe(640);
    expect(r.video.bitRate).toBeGreaterThan(100_000);
    const fraction = (256 * 1024) / files.bigMp4.length;
    // Snapshots are taken, and only from the prefix that was fetched.
    expect(r.video.snapshots.length).toBeGreaterThan(0);
    for (const s of r.video.snapshots) expect(s.timestamp).toBeLessThanOrEqual(20 * fraction + 0.01);
    expectImageSet(r.video.image, { width: 640, height: 360 });
    const ranges = fixture.requests
      .slice(seen)
      .filter((q) => q.url === '/media/big.mp4')
      .map((q) => q.headers.range)
      .filter(Boolean);
    expect(ranges).toContain(`bytes=0-${256 * 1024 - 1}`);
  });

  test('a large MP4 with its index at the end (no faststart): the index is read with a second Range request from the end', async () => {
    const seen = fixture.requests.length;
    const r = await preview(capped, fixture.url('/media/big-tail.mp4'));
    expect(files.bigMp4Tail.length).toBeGreaterThan(4 * 256 * 1024);
    expect(r.video).toMatchObject({ size: files.bigMp4Tail.length, width: 640, height: 360, videoCodec: 'h264', hasAudio: true });
    expect(r.video.duration).toBeCloseTo(20, 0);
    expectImageSet(r.video.image, { width: 640, height: 360 });
    const ranges = fixture.requests
      .slice(seen)
      .filter((q) => q.url === '/media/big-tail.mp4')
      .map((q) => String(q.headers.range ?? ''));
    expect(ranges).toContain(`bytes=0-${256 * 1024 - 1}`);
    const tail = ranges.map((x) => /^bytes=(\d+)-(\d+)$/.exec(x)).find((m) => m && Number(m[1]) > 0);
    expect(tail).toBeDefined();
    expect(Number(tail![2])).toBe(files.bigMp4Tail.length - 1);
    expect(files.bigMp4Tail.subarray(Number(tail![1]) + 4, Number(tail![1]) + 8).toString('latin1')).toBe('moov');
  });

  test('the same file from a server without Range support: the prefix cannot be probed, the record stays a VIDEO', async () => {
    const r = await preview(capped, fixture.url('/plain/big-tail.mp4'));
    expect(r).toMatchObject({ ok: true, type: 'VIDEO', title: 'big-tail.mp4' });
    expect(r.video).toBeUndefined();
  });

  test('hostile: a truncated MP4 with its index at the end is ok with type VIDEO, no video object', async () => {
    const r = await preview(server, fixture.url('/broken/truncated.mp4'));
    expect(r.ok).toBe(true);
    expect(r.type).toBe('VIDEO');
    expect(r.video).toBeUndefined();
    expect(r.title).toBe('truncated.mp4');
  });

  test('hostile: an MP4 cut at 60% with its index in front keeps the header facts and the frames that decode', async () => {
    const r = await preview(server, fixture.url('/broken/cut-faststart.mp4'));
    expect(r.ok).toBe(true);
    expect(r.video.duration).toBeCloseTo(4, 0);
    expect(r.video.videoCodec).toBe('h264');
    expect(r.video.size).toBe(Math.floor(files.mp4.length * 0.6));
  });

  test('hostile: noise labelled video/mp4 gives a record, never a crash', async () => {
    const r = await preview(server, fixture.url('/broken/noise.mp4'));
    expect(r.ok).toBe(true);
    expect(r.video).toBeUndefined();
  });
});

function expectMp3(r: any): void {
  expect(r.ok).toBe(true);
  expect(r.type).toBe('AUDIO');
  const a = r.audio;
  expect(a.duration).toBeCloseTo(3, 0);
  expect(a.creationDate).toBe('2021-05-04T00:00:00.000Z');
  expect(a.size).toBe(files.mp3.length);
  expect(a.bitRate).toBe(128_000);
  expect(a.audioCodec).toBe('mp3');
  expect(a.format).toBe('mp3');
  expect(a.title).toBe('Sine Song');
  expect(a.artist).toBe('The Oscillators');
  expect(a.album).toBe('Test Tones');
  expect(a.sampleRate).toBe(44_100);
  expect(a.channels).toBe(1);
  expect(a.waveform).toHaveLength(100);
  for (const p of a.waveform) {
    expect(p).toBeGreaterThanOrEqual(0);
    expect(p).toBeLessThanOrEqual(1);
  }
  // ffmpeg's sine source has an amplitude of 1/8 of full scale.
  expect(Math.max(...a.waveform)).toBeCloseTo(0.125, 1);
  expectImageSet(a.albumArtwork, { width: 200, height: 200 });
  expect(r.title).toBe('Sine Song');
  expect(r.description).toBe('The Oscillators · Test Tones');
  expect(r.image).toEqual(a.albumArtwork);
}

describe('AUDIO', () => {
  test('MP3 with ID3 tags and cover art, labelled octet-stream (magic bytes classify it), with Range', async () => {
    expectMp3(await preview(server, fixture.url('/media/song.mp3')));
  });

  test('MP3 from a server without Range support', async () => {
    expectMp3(await preview(server, fixture.url('/plain/song.mp3')));
  });

  test('WAV without tags: codec, format, rate, channels; creationDate from Last-Modified', async () => {
    const r = await preview(server, fixture.url('/media/tone.wav'));
    expect(r.audio).toMatchObject({ audioCodec: 'pcm_s16le', format: 'wav', sampleRate: 8000, channels: 1, size: files.wav.length, bitRate: 128_000 });
    expect(r.audio.duration).toBeCloseTo(2, 1);
    expect(r.audio.creationDate).toBe('2024-01-02T03:04:05.000Z');
    expect(r.audio.waveform).toHaveLength(100);
    expect(r.audio.albumArtwork).toBeUndefined();
    expect(r.title).toBe('tone.wav');
  });

  test('WAV without tags or Last-Modified: creationDate is the time of fetching', async () => {
    const before = Date.now();
    const r = await preview(server, fixture.url('/media/undated.wav'));
    expect(r.audio.creationDate).toMatch(ISO_DATE);
    const t = Date.parse(r.audio.creationDate);
    expect(t).toBeGreaterThanOrEqual(before - 1000);
    expect(t).toBeLessThanOrEqual(Date.now() + 1000);
  });

  test('M4A: AAC with tags', async () => {
    const r = await preview(server, fixture.url('/media/tone.m4a'));
    expect(r.type).toBe('AUDIO');
    expect(r.audio).toMatchObject({
      audioCodec: 'aac',
      format: 'm4a',
      title: 'Tone in M4A',
      artist: 'AAC Band',
      album: 'Containers',
      sampleRate: 44_100,
      channels: 1,
    });
    expect(r.audio.duration).toBeCloseTo(2, 0);
    expect(r.audio.bitRate).toBeGreaterThan(50_000);
    expect(r.audio.creationDate).toMatch(ISO_DATE);
    expect(r.audio.waveform.length).toBe(100);
  });

  test('hostile: 10 minutes of silent WAV with a 256 KiB prefix and a 20 s decode cap: full duration, flat waveform', async () => {
    // The waveform is there, so its job finished before the record deadline (a late job is left out).
    const r = await preview(capped, fixture.url('/media/silence.wav'));
    expect(r.ok).toBe(true);
    expect(r.audio.duration).toBeCloseTo(600, 0);
    expect(r.audio.size).toBe(files.longWav.length);
    expect(r.audio.waveform.length).toBeGreaterThan(0);
    expect(Math.max(...r.audio.waveform)).toBe(0);
  });
});
