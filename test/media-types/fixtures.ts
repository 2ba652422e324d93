/**
 * Media and document fixtures made by the tests themselves: audio and video with the ffmpeg
 * binary from npm (lavfi test sources), PDFs written by hand (optionally RC4-encrypted with a user
 * password, or with a decompression bomb), and a fixture-server route with or without Range.
 */
import { execFile } from 'node:child_process';
import { createCipheriv, createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import type http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { ffmpegBinary } from '../../lib/media/run-tool';

/** Runs ffmpeg with `args` (output file name last, relative to a temp dir) and returns the output bytes. */
export async function ffmpegMake(args: string[], outName: string): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'linklens-fixture-'));
  try {
    const out = path.join(dir, outName);
    const bin = await ffmpegBinary();
    await new Promise<void>((resolve, reject) => {
      execFile(bin, ['-v', 'error', '-nostdin', '-y', ...args, out], { maxBuffer: 16 * 1024 * 1024 }, (err, _stdout, stderr) =>
        err ? reject(new Error(`ffmpeg: ${stderr || err.message}`)) : resolve(),
      );
    });
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** An H.264/AAC MP4 (moov at the front unless faststart is false) with title/artist tags. */
export function mp4({
  seconds = 4,
  width = 320,
  height = 240,
  fps = 25,
  faststart = true,
  bitrate,
}: {
  seconds?: number;
  width?: number;
  height?: number;
  fps?: number;
  faststart?: boolean;
  bitrate?: string;
} = {}): Promise<Buffer> {
  return ffmpegMake(
    [
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=${width}x${height}:rate=${fps}:duration=${seconds}`,
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=440:duration=${seconds}`,
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
      ...(bitrate ? ['-b:v', bitrate, '-maxrate', bitrate, '-bufsize', bitrate] : []),
      '-c:a',
      'aac',
      '-shortest',
      '-metadata',
      'title=Test Pattern',
      '-metadata',
      'artist=Jane Director',
      ...(faststart ? ['-movflags', '+faststart'] : []),
      '-f',
      'mp4',
    ],
    'out.mp4',
  );
}

/** A VP8/Vorbis WebM without audio when `audio` is false. */
export function webm({ seconds = 2, audio = false } = {}): Promise<Buffer> {
  return ffmpegMake(
    [
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=160x120:rate=10:duration=${seconds}`,
      ...(audio ? ['-f', 'lavfi', '-i', `sine=frequency=300:duration=${seconds}`, '-c:a', 'libvorbis'] : []),
      '-c:v',
      'libvpx',
      '-b:v',
      '200k',
      '-f',
      'webm',
    ],
    'out.webm',
  );
}

/** A 1-second 200x200 PNG used as cover art. */
export function coverPng(): Promise<Buffer> {
  return ffmpegMake(['-f', 'lavfi', '-i', 'color=c=red:size=200x200:duration=1', '-frames:v', '1', '-f', 'image2', '-c:v', 'png'], 'cover.png');
}

/** An MP3 with ID3v2 title/artist/album/date and, with `cover`, an embedded front cover. */
export async function mp3({
  seconds = 3,
  cover,
  bitrate = '128k',
  date = '2021-05-04',
}: {
  seconds?: number;
  cover?: Buffer;
  bitrate?: string;
  date?: string;
} = {}): Promise<Buffer> {
  const dir = await mkdtemp(path.join(tmpdir(), 'linklens-cover-'));
  try {
    const inputs = ['-f', 'lavfi', '-i', `sine=frequency=440:duration=${seconds}:sample_rate=44100`];
    const maps = ['-map', '0:a'];
    if (cover) {
      const coverFile = path.join(dir, 'cover.png');
      await import('node:fs/promises').then((fs) => fs.writeFile(coverFile, cover));
      inputs.push('-i', coverFile);
      maps.push('-map', '1:v', '-c:v', 'png', '-metadata:s:v', 'title=Album cover', '-metadata:s:v', 'comment=Cover (front)');
    }
    return await ffmpegMake(
      [
        ...inputs,
        ...maps,
        '-c:a',
        'libmp3lame',
        '-b:a',
        bitrate,
        '-id3v2_version',
        '4',
        '-metadata',
        'title=Sine Song',
        '-metadata',
        'artist=The Oscillators',
        '-metadata',
        'album=Test Tones',
        '-metadata',
        `date=${date}`,
        '-f',
        'mp3',
      ],
      'out.mp3',
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A PCM WAV (mono 8 kHz by default): a tone, or silence. No tags. */
export function wav({ seconds = 2, silent = false, rate = 8000 } = {}): Promise<Buffer> {
  const src = silent ? `anullsrc=r=${rate}:cl=mono` : `sine=frequency=300:sample_rate=${rate}`;
  return ffmpegMake(['-f', 'lavfi', '-t', String(seconds), '-i', src, '-c:a', 'pcm_s16le', '-ac', '1', '-f', 'wav'], 'out.wav');
}

/** An AAC M4A with title/artist/album tags. */
export function m4a({ seconds = 2 } = {}): Promise<Buffer> {
  return ffmpegMake(
    [
      '-f',
      'lavfi',
      '-i',
      `sine=frequency=660:duration=${seconds}:sample_rate=44100`,
      '-c:a',
      'aac',
      '-b:a',
      '96k',
      '-metadata',
      'title=Tone in M4A',
      '-metadata',
      'artist=AAC Band',
      '-metadata',
      'album=Containers',
      '-f',
      'ipod',
    ],
    'out.m4a',
  );
}

// ---------------------------------------------------------------------------------------------
// PDF by hand

export interface PdfOptions {
  pages: string[][];
  title?: string;
  author?: string;
  /** D:YYYYMMDDHHmmSSZ */
  modDate?: string;
  /** RC4-40 encryption with this user password (an empty string: anyone can open it). */
  userPassword?: string;
  /** Adds a Flate stream that inflates to this many zero bytes (a bomb). */
  bombBytes?: number;
}

const PAD = Buffer.from('28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A', 'hex');

function rc4(key: Buffer, data: Buffer): Buffer {
  try {
    const c = createCipheriv('rc4', key, null);
    return Buffer.concat([c.update(data), c.final()]);
  } catch {
    const s = Array.from({ length: 256 }, (_, i) => i);
    for (let i = 0, j = 0; i < 256; i++) {
      j = (j + s[i] + key[i % key.length]) & 255;
      [s[i], s[j]] = [s[j], s[i]];
    }
    const out = Buffer.alloc(data.length);
    for (let n = 0, i = 0, j = 0; n < data.length; n++) {
      i = (i + 1) & 255;
      j = (j + s[i]) & 255;
      [s[i], s[j]] = [s[j], s[i]];
      out[n] = data[n] ^ s[(s[i] + s[j]) & 255];
    }
    return out;
  }
}

const md5 = (...parts: Buffer[]) => createHash('md5').update(Buffer.concat(parts)).digest();
const padPw = (pw: string) => Buffer.concat([Buffer.from(pw, 'latin1'), PAD]).subarray(0, 32);
const pdfString = (s: string) => `(${s.replace(/([\\()])/g, '\\$1')})`;

/** A PDF with one Helvetica text line per entry of each page; Info title/author/date; optional encryption or bomb. */
export function makePdf(options: PdfOptions): Buffer {
  const objects: { dict: string; stream?: Buffer }[] = [];
  const add = (dict: string, stream?: Buffer) => objects.push({ dict, stream });
  const n = options.pages.length;
  // 1 catalog, 2 pages, 3 font, 4 info, then per page: page, content
  add('<< /Type /Catalog /Pages 2 0 R >>');
  const kids = options.pages.map((_, i) => `${5 + i * 2} 0 R`).join(' ');
  add(`<< /Type /Pages /Kids [${kids}] /Count ${n} >>`);
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const info: string[] = [];
  if (options.title) info.push(`/Title ${pdfString(options.title)}`);
  if (options.author) info.push(`/Author ${pdfString(options.author)}`);
  if (options.modDate) info.push(`/ModDate ${pdfString(options.modDate)}`);
  add(`<< ${info.join(' ')} /Producer (linklens tests) >>`);
  options.pages.forEach((lines, i) => {
    add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> /Contents ${6 + i * 2} 0 R >>`);
    const ops = lines.map((l, k) => `BT /F1 ${k === 0 && i === 0 ? 20 : 11} Tf 50 ${790 - k * 18} Td ${pdfString(l)} Tj ET`).join('\n');
    add('<< >>', Buffer.from(ops, 'latin1'));
  });
  if (options.bombBytes) add('<< /Filter /FlateDecode >>', deflateSync(Buffer.alloc(options.bombBytes), { level: 9 }));

  const id = createHash('md5').update(JSON.stringify(options.pages)).digest();
  let encryptRef = '';
  let objectKey: ((num: number) => Buffer) | undefined;
  let encryptDict = '';
  if (options.userPassword !== undefined) {
    const P = -44;
    const pBytes = Buffer.alloc(4);
    pBytes.writeInt32LE(P);
    const ownerKey = md5(padPw('owner-secret')).subarray(0, 5);
    const O = rc4(ownerKey, padPw(options.userPassword));
    const key = md5(padPw(options.userPassword), O, pBytes, id).subarray(0, 5);
    const U = rc4(key, PAD);
    objectKey = (num) => md5(key, Buffer.from([num & 255, (num >> 8) & 255, (num >> 16) & 255, 0, 0])).subarray(0, 10);
    encryptDict = `<< /Filter /Standard /V 1 /R 2 /O <${O.toString('hex')}> /U <${U.toString('hex')}> /P ${P} >>`;
  }

  const chunks: Buffer[] = [Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let offset = chunks[0].length;
  const offsets: number[] = [];
  const push = (b: Buffer) => {
    chunks.push(b);
    offset += b.length;
  };
  objects.forEach((o, i) => {
    const num = i + 1;
    offsets.push(offset);
    let dict = o.dict;
    let stream = o.stream;
    if (objectKey) {
      const k = objectKey(num);
      dict = dict.replace(/\((?:[^()\\]|\\.)*\)/g, (lit) => `<${rc4(k, Buffer.from(lit.slice(1, -1).replace(/\\(.)/g, '$1'), 'latin1')).toString('hex')}>`);
      if (stream) stream = rc4(k, stream);
    }
    if (stream) {
      dict = dict.replace(/>>\s*$/, ` /Length ${stream.length} >>`);
      push(Buffer.concat([Buffer.from(`${num} 0 obj\n${dict}\nstream\n`, 'latin1'), stream, Buffer.from('\nendstream\nendobj\n', 'latin1')]));
    } else {
      push(Buffer.from(`${num} 0 obj\n${dict}\nendobj\n`, 'latin1'));
    }
  });
  if (encryptDict) {
    offsets.push(offset);
    const num = objects.length + 1;
    push(Buffer.from(`${num} 0 obj\n${encryptDict}\nendobj\n`, 'latin1'));
    encryptRef = ` /Encrypt ${num} 0 R`;
  }
  const xrefAt = offset;
  const count = offsets.length + 1;
  const xref = ['xref', `0 ${count}`, '0000000000 65535 f ', ...offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n `)].join('\n');
  push(
    Buffer.from(
      `${xref}\ntrailer\n<< /Size ${count} /Root 1 0 R /Info 4 0 R${encryptRef} /ID [<${id.toString('hex')}> <${id.toString('hex')}>] >>\nstartxref\n${xrefAt}\n%%EOF\n`,
      'latin1',
    ),
  );
  return Buffer.concat(chunks);
}

const LOREM = [
  'The quick brown fox jumps over the lazy dog near the river bank.',
  'Every page of this report describes measurements taken in the field during the spring.',
  'Readers should note that the figures are preliminary and will be revised next quarter.',
  'Water levels rose steadily while temperatures stayed close to the seasonal average.',
];

/** `count` pages of English prose, the first line of page 1 a heading. */
export function proseDocument(count: number, heading = 'Field Report on River Levels'): string[][] {
  return Array.from({ length: count }, (_, i) => [...(i === 0 ? [heading] : []), ...Array.from({ length: 30 }, (_, k) => LOREM[(i + k) % LOREM.length])]);
}

/**
 * A PDF from page descriptions: its MediaBox (points), its content stream (Flate), and image
 * XObjects (JPEG bytes, DCTDecode) named /Im0, /Im1 ... for the content to draw; Helvetica is /F1.
 */
export function pdfWithPages(pages: { box: [number, number]; content: string; images?: { jpeg: Buffer; width: number; height: number }[] }[]): Buffer {
  const objs: Buffer[] = [];
  const add = (b: Buffer | string) => {
    objs.push(Buffer.isBuffer(b) ? b : Buffer.from(b, 'latin1'));
    return objs.length;
  };
  const stream = (dict: string, data: Buffer) =>
    Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add('PAGES');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const kids: number[] = [];
  for (const p of pages) {
    const xobjects = (p.images ?? []).map(
      (img, i) =>
        `/Im${i} ${add(stream(`/Type /XObject /Subtype /Image /Width ${img.width} /Height ${img.height} /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /DCTDecode`, img.jpeg))} 0 R`,
    );
    const content = add(stream('/Filter /FlateDecode', deflateSync(Buffer.from(p.content, 'latin1'))));
    kids.push(
      add(
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${p.box[0]} ${p.box[1]}] /Contents ${content} 0 R /Resources << /Font << /F1 ${font} 0 R >> /XObject << ${xobjects.join(' ')} >> >> >>`,
      ),
    );
  }
  objs[1] = Buffer.from(`<< /Type /Pages /Kids [${kids.map((k) => `${k} 0 R`).join(' ')}] /Count ${kids.length} >>`);
  return serializePdf(objs);
}

// ---------------------------------------------------------------------------------------------
// Serving

/** A route serving `body` with Content-Length, honouring `Range: bytes=a-b` when `range` is true. */
export function serveBytes(body: Buffer, contentType: string, { range = true, headers = {} }: { range?: boolean; headers?: Record<string, string> } = {}) {
  return (req: http.IncomingMessage, res: http.ServerResponse) => {
    const m = range ? /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '') : null;
    const base = { 'content-type': contentType, ...headers, ...(range ? { 'accept-ranges': 'bytes' } : {}) };
    if (m) {
      const start = Number(m[1]);
      const end = Math.min(m[2] ? Number(m[2]) : body.length - 1, body.length - 1);
      if (start >= body.length) {
        res.writeHead(416, { ...base, 'content-range': `bytes */${body.length}` });
        res.end();
        return;
      }
      const part = body.subarray(start, end + 1);
      res.writeHead(206, { ...base, 'content-length': String(part.length), 'content-range': `bytes ${start}-${end}/${body.length}` });
      res.end(part);
      return;
    }
    res.writeHead(200, { ...base, 'content-length': String(body.length) });
    res.end(body);
  };
}

/**
 * A one-page PDF whose content stream repeats a text line `lines` times: a few hundred KB on the
 * wire that keep pdf.js busy for minutes (the Flate budget allows it; the worker's time cap stops it).
 */
export function heavyContentPdf(lines: number): Buffer {
  const ops = Buffer.from(`BT /F1 12 Tf 72 712 Td ${'(word word word word word) Tj 0 -1 Td '.repeat(lines)}ET`, 'latin1');
  const content = deflateSync(ops, { level: 9 });
  const objs: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>'),
    Buffer.concat([Buffer.from(`<< /Length ${content.length} /Filter /FlateDecode >>\nstream\n`), content, Buffer.from('\nendstream')]),
    Buffer.from('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'),
  ];
  return serializePdf(objs);
}

/** Objects 1..n (object 1 the catalog) as a PDF file with its xref table and trailer. */
function serializePdf(objs: Buffer[]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n')];
  const offsets: number[] = [];
  let length = parts[0].length;
  objs.forEach((o, i) => {
    offsets.push(length);
    const b = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`), o, Buffer.from('\nendobj\n')]);
    parts.push(b);
    length += b.length;
  });
  const xref = `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(Buffer.from(`${xref}trailer\n<< /Size ${objs.length + 1} /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`));
  return Buffer.concat(parts);
}
