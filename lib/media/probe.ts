/**
 * ffprobe on a local file: container, duration, bit rate, tags and the first video and audio
 * streams (attached pictures such as cover art are not video). Capped in time; the file is
 * opened with the safe input options of run-tool.ts (no network, no playlists).
 */
import { fileTypeFromBuffer } from 'file-type';
import { ffprobeBinary, runTool, SAFE_INPUT, ToolError, type ToolPaths } from './run-tool.js';

export interface ProbeVideoStream {
  codec: string;
  width?: number;
  height?: number;
  frameRate?: number;
  bitRate?: number;
  duration?: number;
}
export interface ProbeAudioStream {
  codec: string;
  sampleRate?: number;
  channels?: number;
  bitRate?: number;
  duration?: number;
}

export interface ProbeResult {
  /** ffprobe's format name, e.g. `mov,mp4,m4a,3gp,3g2,mj2`. */
  formatName: string;
  duration?: number;
  bitRate?: number;
  /** Format and stream tags, keys lower-cased (format tags win). */
  tags: Record<string, string>;
  video?: ProbeVideoStream;
  audio?: ProbeAudioStream;
  /** An embedded picture stream (cover art) is present. */
  hasAttachedPicture: boolean;
}

interface RawStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  bit_rate?: string;
  duration?: string;
  sample_rate?: string;
  channels?: number;
  disposition?: { attached_pic?: number };
  tags?: Record<string, string>;
}
interface RawProbe {
  format?: { format_name?: string; duration?: string; bit_rate?: string; tags?: Record<string, string> };
  streams?: RawStream[];
}

/** A tag's value, cleaned (no NULs, trimmed, at most 500 characters); undefined when empty. */
export function tag(tags: Record<string, string>, name: string): string | undefined {
  const t = tags[name]?.replace(/\u0000/g, '').trim();
  return t ? t.slice(0, 500) : undefined;
}

export async function probeFile(file: string, options: { timeoutMs: number; signal?: AbortSignal } & ToolPaths): Promise<ProbeResult> {
  const { stdout } = await runTool(
    await ffprobeBinary(options.ffprobePath),
    ['-v', 'error', ...SAFE_INPUT, '-print_format', 'json', '-show_format', '-show_streams', '-i', file],
    { timeoutMs: options.timeoutMs, signal: options.signal, maxStdoutBytes: 4 * 1024 * 1024 },
  );
  let raw: RawProbe;
  try {
    raw = JSON.parse(stdout.toString('utf8')) as RawProbe;
  } catch {
    throw new ToolError('ffprobe printed no readable JSON');
  }
  return parseProbe(raw);
}

function parseProbe(raw: RawProbe): ProbeResult {
  const streams = raw.streams ?? [];
  const tags: Record<string, string> = {};
  for (const s of streams) for (const [k, v] of Object.entries(s.tags ?? {})) tags[k.toLowerCase()] ??= v;
  for (const [k, v] of Object.entries(raw.format?.tags ?? {})) tags[k.toLowerCase()] = v;

  const v = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const a = streams.find((s) => s.codec_type === 'audio');
  return {
    formatName: raw.format?.format_name ?? 'unknown',
    duration: positive(raw.format?.duration) ?? positive(v?.duration) ?? positive(a?.duration),
    bitRate: positive(raw.format?.bit_rate),
    tags,
    video: v && {
      codec: v.codec_name ?? 'unknown',
      width: v.width || undefined,
      height: v.height || undefined,
      frameRate: rate(v.avg_frame_rate) ?? rate(v.r_frame_rate),
      bitRate: positive(v.bit_rate),
      duration: positive(v.duration),
    },
    audio: a && {
      codec: a.codec_name ?? 'unknown',
      sampleRate: positive(a.sample_rate),
      channels: a.channels || undefined,
      bitRate: positive(a.bit_rate),
      duration: positive(a.duration),
    },
    hasAttachedPicture: streams.some((s) => s.codec_type === 'video' && !!s.disposition?.attached_pic),
  };
}

function positive(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const n = Number(s);
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/** `30000/1001` -> 29.97 (rounded to 3 decimals); `0/0` -> undefined. */
function rate(s: string | undefined): number | undefined {
  if (!s) return undefined;
  const [num, den] = s.split('/').map(Number);
  const r = den ? num / den : num;
  return Number.isFinite(r) && r > 0 && r < 10_000 ? Math.round(r * 1000) / 1000 : undefined;
}

/** The media type and extension the bytes say (file-type), when they say. */
export async function sniffMedia(bytes: Buffer): Promise<{ ext: string; mime: string } | undefined> {
  try {
    return await fileTypeFromBuffer(bytes.subarray(0, 64 * 1024));
  } catch {
    return undefined;
  }
}

/** A short container name (`mp4`, `webm`, `mov`, `mp3`, `m4a` ...): sniffed from the bytes, else ffprobe's first name. */
export async function containerName(bytes: Buffer, formatName: string | undefined): Promise<string | undefined> {
  const t = await sniffMedia(bytes);
  if (t?.ext) return t.ext;
  const first = formatName?.split(',')[0];
  return first && first !== 'unknown' ? first : undefined;
}
