/**
 * Video frames with ffmpeg, from a local file: several stills in one ffmpeg run (one input per
 * timestamp, each opened with a fast seek), and a short, small preview clip. A timestamp that
 * cannot be decoded (past the end of a truncated download) simply yields no frame.
 */
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { fitWithin } from './image-sizes.js';
import { ffmpegBinary, runTool, SAFE_INPUT } from './run-tool.js';

export interface FrameOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Where the frames are written (a temporary directory the caller removes). */
  dir: string;
}

/** The timestamps (seconds, 3 decimals) of the poster (10% in) and `count` snapshots spread over `[0, span]`. */
export function frameTimestamps(span: number, count: number): { poster: number; snapshots: number[] } {
  const r = (t: number) => Math.round(t * 1000) / 1000;
  const poster = r(span * 0.1);
  const snapshots = Array.from({ length: count }, (_, i) => r((span * (i + 0.5)) / count));
  return { poster, snapshots };
}

/** Grabs one JPEG frame at each timestamp; the result is aligned with `timestamps`, undefined where none decoded. */
export async function grabFrames(file: string, timestamps: number[], options: FrameOptions): Promise<(Buffer | undefined)[]> {
  if (timestamps.length === 0) return [];
  const args = ['-v', 'error', '-nostdin', '-y'];
  for (const t of timestamps) args.push(...SAFE_INPUT, '-ss', String(t), '-i', file);
  const outputs = timestamps.map((_, i) => path.join(options.dir, `frame-${i}.jpg`));
  timestamps.forEach((_, i) => {
    args.push('-map', `${i}:V:0?`, '-frames:v', '1', '-an', '-sn', '-c:v', 'mjpeg', '-q:v', '2', '-pix_fmt', 'yuvj420p', '-f', 'image2', outputs[i]);
  });
  await runTool(await ffmpegBinary(), args, { timeoutMs: options.timeoutMs, signal: options.signal, allowFailure: true, maxStdoutBytes: 1024 * 1024 });
  return Promise.all(outputs.map(async (out) => {
    const size = await stat(out).then((s) => s.size, () => 0);
    return size > 0 ? readFile(out) : undefined;
  }));
}

/** The preview clip: at most this many seconds, fitting in a CLIP_BOX square, H.264 without sound. */
export const CLIP_SECONDS = 3;
export const CLIP_BOX = 320;

export interface Clip { mp4: Buffer; width: number; height: number }

/** A short, small, silent MP4 starting at `start`; undefined when it cannot be made. */
export async function makeClip(file: string, start: number, source: { width: number; height: number }, options: FrameOptions): Promise<Clip | undefined> {
  const fit = fitWithin(source.width, source.height, CLIP_BOX);
  const width = Math.max(2, fit.width - (fit.width % 2));
  const height = Math.max(2, fit.height - (fit.height % 2));
  const out = path.join(options.dir, 'clip.mp4');
  const args = [
    '-v', 'error', '-nostdin', '-y', ...SAFE_INPUT, '-ss', String(start), '-t', String(CLIP_SECONDS), '-i', file,
    '-map', '0:V:0', '-an', '-sn', '-vf', `scale=${width}:${height},fps=15`, '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '30',
    '-pix_fmt', 'yuv420p', '-profile:v', 'baseline', '-movflags', '+faststart', '-f', 'mp4', out,
  ];
  const res = await runTool(await ffmpegBinary(), args, { timeoutMs: options.timeoutMs, signal: options.signal, allowFailure: true, maxStdoutBytes: 1024 * 1024 });
  const mp4 = await readFile(out).catch(() => undefined);
  if (res.code !== 0 || !mp4 || mp4.length < 64) return undefined;
  return { mp4, width, height };
}
