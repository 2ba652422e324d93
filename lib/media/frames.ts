/**
 * Video frames with ffmpeg, from a local file: one still per timestamp (a fast seek, then one
 * frame), and a short, small preview clip. A timestamp that cannot be decoded (past the end of a
 * truncated download) simply yields no frame.
 *
 * Memory: one decoder at a time, on one thread, and no frame over `maxPixels` (ffmpeg's
 * -max_pixels refuses it before allocating): several inputs in one run each start frame threads
 * of their own, and on the worker's one vCPU extra threads buy no time. What one decode takes:
 * lib/jobs/memory.ts `videoDecodeMb`.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fitWithin } from './image-sizes.js';
import { ffmpegBinary, runTool, SAFE_INPUT, ToolError, type ToolPaths } from './run-tool.js';

export interface FrameOptions extends ToolPaths {
  /** Time cap of all the frames together (grabFrames), or of the clip. */
  timeoutMs: number;
  signal?: AbortSignal;
  /** Where the frames are written (a temporary directory the caller removes). */
  dir: string;
  /** Frames larger than this (width x height) are not decoded. */
  maxPixels?: number;
}

/** Decoder options put before `-i`: one thread, and the pixel cap. */
function decoderOptions(options: FrameOptions): string[] {
  return ['-threads', '1', ...(options.maxPixels ? ['-max_pixels', String(Math.floor(options.maxPixels))] : [])];
}

/** The timestamps (seconds, 3 decimals) of the poster (10% in) and `count` snapshots spread over `[0, span]`. */
export function frameTimestamps(span: number, count: number): { poster: number; snapshots: number[] } {
  const r = (t: number) => Math.round(t * 1000) / 1000;
  const poster = r(span * 0.1);
  const snapshots = Array.from({ length: count }, (_, i) => r((span * (i + 0.5)) / count));
  return { poster, snapshots };
}

/**
 * Grabs one JPEG frame at each timestamp, one ffmpeg run after the other, all within
 * `options.timeoutMs`; the result is aligned with `timestamps`, undefined where none decoded (or
 * the time ran out: the first timestamp, the poster, is grabbed first).
 */
export async function grabFrames(file: string, timestamps: number[], options: FrameOptions): Promise<(Buffer | undefined)[]> {
  const frames: (Buffer | undefined)[] = timestamps.map(() => undefined);
  const until = Date.now() + options.timeoutMs;
  for (let i = 0; i < timestamps.length; i++) {
    const left = until - Date.now();
    if (left <= 0 || options.signal?.aborted) break;
    const out = path.join(options.dir, `frame-${i}.jpg`);
    const args = [
      '-v',
      'error',
      '-nostdin',
      '-y',
      ...decoderOptions(options),
      ...SAFE_INPUT,
      '-ss',
      String(timestamps[i]),
      '-i',
      file,
      '-map',
      '0:V:0?',
      '-frames:v',
      '1',
      '-an',
      '-sn',
      '-threads',
      '1',
      '-c:v',
      'mjpeg',
      '-q:v',
      '2',
      '-pix_fmt',
      'yuvj420p',
      '-f',
      'image2',
      out,
    ];
    const run = await runTool(await ffmpegBinary(options.ffmpegPath), args, {
      timeoutMs: left,
      signal: options.signal,
      allowFailure: true,
      maxStdoutBytes: 1024 * 1024,
    }).catch((err: unknown) => {
      if (err instanceof ToolError) return undefined; // timed out or aborted: no more frames
      throw err;
    });
    if (!run) break;
    const size = await stat(out).then(
      (st) => st.size,
      () => 0,
    );
    if (size > 0) frames[i] = await readFile(out);
  }
  return frames;
}

/** The preview clip: at most this many seconds, fitting in a CLIP_BOX square, H.264 without sound. */
const CLIP_SECONDS = 3;
const CLIP_BOX = 320;

export interface Clip {
  mp4: Buffer;
  width: number;
  height: number;
}

/** A short, small, silent MP4 starting at `start`; undefined when it cannot be made. */
export async function makeClip(file: string, start: number, source: { width: number; height: number }, options: FrameOptions): Promise<Clip | undefined> {
  const fit = fitWithin(source.width, source.height, CLIP_BOX);
  const width = Math.max(2, fit.width - (fit.width % 2));
  const height = Math.max(2, fit.height - (fit.height % 2));
  const out = path.join(options.dir, 'clip.mp4');
  const args = [
    '-v',
    'error',
    '-nostdin',
    '-y',
    ...decoderOptions(options),
    ...SAFE_INPUT,
    '-ss',
    String(start),
    '-t',
    String(CLIP_SECONDS),
    '-i',
    file,
    '-map',
    '0:V:0',
    '-an',
    '-sn',
    '-vf',
    `scale=${width}:${height},fps=15`,
    '-threads',
    '1',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '30',
    '-pix_fmt',
    'yuv420p',
    '-profile:v',
    'baseline',
    '-movflags',
    '+faststart',
    '-f',
    'mp4',
    out,
  ];
  const res = await runTool(await ffmpegBinary(options.ffmpegPath), args, {
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    allowFailure: true,
    maxStdoutBytes: 1024 * 1024,
  });
  const mp4 = await readFile(out).catch(() => undefined);
  if (res.code !== 0 || !mp4 || mp4.length < 64) return undefined;
  return { mp4, width, height };
}
