/**
 * Running the ffprobe and ffmpeg binaries shipped in npm (@ffprobe-installer, @ffmpeg-installer).
 * Every run is capped: wall time (the child is killed with SIGKILL), bytes of stdout kept, and it
 * stops when the job's AbortSignal fires. Inputs are always local files or stdin, never a URL:
 * `-protocol_whitelist file,pipe` stops a crafted file (a playlist, a concat list) from making the
 * decoder open the network, and DEMUXERS stops it from opening other files through playlists.
 */
import { spawn } from 'node:child_process';
import { ExpectedFailure, required } from '../errors.js';

/**
 * The installer packages are CommonJS and are required lazily: only a process that decodes needs
 * them, and a Lambda layer's binary (a configured path) needs no installer at all.
 */
function installerPath(pkg: '@ffmpeg-installer/ffmpeg' | '@ffprobe-installer/ffprobe'): string {
  return (require(pkg) as { path: string }).path;
}

/** Path of the ffmpeg binary: the configured one (LINKPREVIEW_FFMPEG_PATH, e.g. a Lambda layer's /opt/bin/ffmpeg), else the npm package's. */
export async function ffmpegBinary(configured?: string): Promise<string> {
  return configured || installerPath('@ffmpeg-installer/ffmpeg');
}

/** Path of the ffprobe binary: the configured one (LINKPREVIEW_FFPROBE_PATH), else the npm package's. */
export async function ffprobeBinary(configured?: string): Promise<string> {
  return configured || installerPath('@ffprobe-installer/ffprobe');
}

/** The configured decoder binaries (Config's ffmpegPath and ffprobePath; empty: the npm packages'). */
export interface ToolPaths {
  ffmpegPath?: string;
  ffprobePath?: string;
}

/**
 * The demuxers a downloaded file may be opened with. Playlist and list formats (hls, dash, concat,
 * ffconcat, image2 patterns, tee ...) are left out: they would open other files.
 */
const DEMUXERS = [
  'mov',
  'mp4',
  'm4a',
  '3gp',
  'matroska',
  'webm',
  'avi',
  'flv',
  'mpegts',
  'mpeg',
  'mpegvideo',
  'm4v',
  'ogg',
  'mp3',
  'wav',
  'w64',
  'flac',
  'aac',
  'asf',
  'aiff',
  'amr',
  'ac3',
  'eac3',
  'dts',
  'caf',
  'au',
  'wv',
  'ape',
  'mpc',
  'mpc8',
  'tta',
  'h264',
  'hevc',
  'ivf',
  'rm',
  'nut',
  'mxf',
  'mjpeg',
  'gif',
  'opus',
  'dsf',
  'vqf',
  'voc',
  'xwma',
  'truehd',
  'mlp',
  'obu',
].join(',');

/** Input options put before every `-i`: no network, no playlists. */
export const SAFE_INPUT = ['-protocol_whitelist', 'file,pipe', '-format_whitelist', DEMUXERS];

/** A decoder that failed, timed out or was stopped; the last two are transient. */
export class ToolError extends ExpectedFailure {
  constructor(
    message: string,
    readonly stderr = '',
    readonly timedOut = false,
    aborted = false,
  ) {
    super(message, { transient: timedOut || aborted });
  }
}

export interface RunToolOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Bytes of stdout kept; more is an error (or, with onStdout, not kept at all). */
  maxStdoutBytes?: number;
  /** Streams stdout to the caller instead of buffering it. */
  onStdout?: (chunk: Buffer) => void;
  stdin?: Buffer;
  /** Accept a non-zero exit (ffmpeg reports broken inputs that way after writing what it could). */
  allowFailure?: boolean;
}

export interface ToolResult {
  stdout: Buffer;
  stderr: string;
  code: number | null;
}

export function runTool(binary: string, args: string[], options: RunToolOptions): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    if (options.signal?.aborted) {
      reject(new ToolError('aborted', '', false, true));
      return;
    }
    const child = spawn(binary, args, { stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'], windowsHide: true });
    const chunks: Buffer[] = [];
    let bytes = 0;
    let stderr = '';
    let settled = false;
    let killedFor: 'timeout' | 'abort' | 'stdout' | undefined;
    const maxStdout = options.maxStdoutBytes ?? 64 * 1024 * 1024;

    const kill = (why: typeof killedFor) => {
      if (killedFor) return;
      killedFor = why;
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill('timeout'), options.timeoutMs);
    const onAbort = () => kill('abort');
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const done = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      fn();
    };

    required(child.stdout, 'the stdout pipe').on('data', (chunk: Buffer) => {
      if (options.onStdout) {
        options.onStdout(chunk);
        return;
      }
      bytes += chunk.length;
      if (bytes > maxStdout) {
        kill('stdout');
        return;
      }
      chunks.push(chunk);
    });
    required(child.stderr, 'the stderr pipe').on('data', (chunk: Buffer) => {
      if (stderr.length < 8192) stderr += chunk.toString('utf8');
    });
    child.on('error', (err) => done(() => reject(new ToolError(`could not run ${binary}: ${err.message}`))));
    child.on('close', (code) =>
      done(() => {
        if (killedFor === 'timeout') return reject(new ToolError(`decoder timed out after ${options.timeoutMs} ms`, stderr, true));
        if (killedFor === 'abort') return reject(new ToolError('aborted', stderr, false, true));
        if (killedFor === 'stdout') return reject(new ToolError(`decoder output larger than ${maxStdout} bytes`, stderr));
        if (code !== 0 && !options.allowFailure) return reject(new ToolError(`decoder failed (exit ${code}): ${lastLine(stderr)}`, stderr));
        resolve({ stdout: Buffer.concat(chunks), stderr, code });
      }),
    );
    if (options.stdin) {
      const stdin = required(child.stdin, 'the stdin pipe');
      stdin.on('error', () => {
        /* the child may exit before reading everything */
      });
      stdin.end(options.stdin);
    }
  });
}

function lastLine(s: string): string {
  return s.trim().split('\n').pop()?.slice(0, 300) ?? '';
}
