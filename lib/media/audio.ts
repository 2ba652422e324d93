/**
 * Audio: tags and the embedded picture with music-metadata (from bytes), and a waveform of about
 * 100 peaks computed from audio decoded by ffmpeg (mono, 4 kHz, 16-bit PCM streamed from stdout,
 * so memory stays flat however long the file). Decoding stops at `maxSeconds` and at the time cap.
 */
import { parseBuffer } from 'music-metadata';
import { ffmpegBinary, runTool, SAFE_INPUT, type ToolPaths } from './run-tool.js';

export interface AudioTags {
  title?: string;
  artist?: string;
  album?: string;
  /** The tagged date (ISO date-time), when the tags carry one. */
  date?: string;
  picture?: { data: Buffer; format: string };
  /** What music-metadata measured (used when ffprobe could not). */
  codec?: string;
  container?: string;
  duration?: number;
  bitRate?: number;
  sampleRate?: number;
  channels?: number;
}

/**
 * Reads tags from the bytes; `totalSize` lets a prefix still give the right duration for CBR files.
 * The parser is chosen by the sniffed extension (`ext`), else music-metadata sniffs the bytes itself.
 */
export async function readAudioTags(bytes: Buffer, options: { ext?: string; totalSize?: number }): Promise<AudioTags> {
  const fileInfo = { path: options.ext ? `audio.${options.ext}` : undefined, size: options.totalSize ?? bytes.length };
  const meta = await parseBuffer(bytes, fileInfo, { duration: false, skipPostHeaders: true });
  const c = meta.common;
  const f = meta.format;
  const pic = c.picture?.find((p) => /front/i.test(p.type ?? '')) ?? c.picture?.[0];
  return {
    title: nonEmpty(c.title),
    artist: nonEmpty(c.artist) ?? nonEmpty(c.artists?.join(', ')),
    album: nonEmpty(c.album),
    date: tagDate(c.date ?? c.originaldate ?? (c.year ? String(c.year) : undefined)),
    picture: pic?.data?.length ? { data: Buffer.from(pic.data), format: pic.format } : undefined,
    codec: nonEmpty(f.codec),
    container: nonEmpty(f.container),
    duration: f.duration && Number.isFinite(f.duration) ? f.duration : undefined,
    bitRate: f.bitrate && Number.isFinite(f.bitrate) ? Math.round(f.bitrate) : undefined,
    sampleRate: f.sampleRate,
    channels: f.numberOfChannels,
  };
}

function nonEmpty(s: string | undefined): string | undefined {
  const t = s?.replace(/\u0000/g, '').trim();
  return t ? t.slice(0, 500) : undefined;
}

/** A tag date (`2021`, `2021-05`, `2021-05-04`, `2021-05-04T10:00:00Z`, `2021-05-04 10:00:00`) as ISO date-time. */
export function tagDate(s: string | undefined): string | undefined {
  if (!s) return undefined;
  const t = s.trim();
  let m = /^(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?$/.exec(t);
  if (m) {
    const [y, mo, d] = [Number(m[1]), Number(m[2] ?? 1), Number(m[3] ?? 1)];
    if (y < 1000 || mo < 1 || mo > 12 || d < 1 || d > 31) return undefined;
    return new Date(Date.UTC(y, mo - 1, d)).toISOString();
  }
  m = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?$/.exec(t);
  if (m) {
    const d = new Date(`${m[1]}T${m[2]}${m[3] ?? 'Z'}`);
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  }
  return undefined;
}

/** The waveform's resolution. */
const WAVEFORM_POINTS = 100;
const DECODE_RATE = 4000;
/** Peaks are kept per block of this many samples (10 ms), then folded into WAVEFORM_POINTS. */
const BLOCK = 40;

export interface WaveformOptions extends ToolPaths {
  maxSeconds: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * About WAVEFORM_POINTS peak values in 0..1 (1 = full scale) over the decoded part of the file.
 * Undefined when nothing decodes.
 */
export async function computeWaveform(file: string, options: WaveformOptions): Promise<number[] | undefined> {
  const blocks: number[] = [];
  let peak = 0;
  let inBlock = 0;
  let carry: Buffer | undefined;
  const onStdout = (chunk: Buffer) => {
    let buf = carry ? Buffer.concat([carry, chunk]) : chunk;
    carry = undefined;
    const even = buf.length - (buf.length % 2);
    if (even < buf.length) carry = buf.subarray(even);
    buf = buf.subarray(0, even);
    for (let i = 0; i < buf.length; i += 2) {
      const v = Math.abs(buf.readInt16LE(i));
      if (v > peak) peak = v;
      if (++inBlock === BLOCK) {
        blocks.push(peak);
        peak = 0;
        inBlock = 0;
      }
    }
  };
  const args = [
    '-v',
    'error',
    '-nostdin',
    ...SAFE_INPUT,
    '-t',
    String(options.maxSeconds),
    '-i',
    file,
    '-map',
    '0:a:0',
    '-vn',
    '-sn',
    '-ac',
    '1',
    '-ar',
    String(DECODE_RATE),
    '-f',
    's16le',
    '-acodec',
    'pcm_s16le',
    'pipe:1',
  ];
  // A broken tail (a truncated download) still leaves the part that decoded.
  await runTool(await ffmpegBinary(options.ffmpegPath), args, { timeoutMs: options.timeoutMs, signal: options.signal, onStdout, allowFailure: true });
  if (inBlock > 0) blocks.push(peak);
  if (blocks.length === 0) return undefined;
  return foldPeaks(blocks, WAVEFORM_POINTS);
}

/** Folds block peaks (0..32768) into `points` values in 0..1 (3 decimals); fewer when there are fewer blocks. */
function foldPeaks(blocks: number[], points: number): number[] {
  const n = Math.min(points, blocks.length);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const from = Math.floor((i * blocks.length) / n);
    const to = Math.max(from + 1, Math.floor(((i + 1) * blocks.length) / n));
    let m = 0;
    for (let j = from; j < to; j++) if (blocks[j] > m) m = blocks[j];
    out.push(Math.round(Math.min(1, m / 32768) * 1000) / 1000);
  }
  return out;
}
