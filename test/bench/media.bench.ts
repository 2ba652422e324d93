/**
 * `npm run bench -- media`: median times of the media work on inputs generated here:
 *  - a 10 MB MP4 (1280x720 H.264 + AAC): ffprobe, the poster and 4 snapshots (one ffmpeg run), each
 *    frame rendered to the four WebP sizes;
 *  - a 5 MB MP3 (320 kb/s): ffprobe + tags, and the waveform (decode + peaks);
 *  - a 20-page PDF: info, text of every page, and 3 page renders (pdf.js), each to the four sizes.
 * No network and no storage: the decoders read a temporary file or the bytes.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { computeWaveform, readAudioTags } from '../../lib/media/audio.js';
import { frameTimestamps, grabFrames } from '../../lib/media/frames.js';
import { PDF_RENDER_WIDTH, runPdfWorker } from '../../lib/media/pdf.js';
import { probeFile } from '../../lib/media/probe.js';
import { renderImage } from '../../lib/media/render-image.js';
import { ffmpegMake, makePdf, proseDocument } from '../media-types/fixtures.js';
import { median, timeRuns } from './bench.js';

const MAX_PIXELS = 50_000_000;
const TOOL = { timeoutMs: 60_000 };

export async function run(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  const dir = await mkdtemp(path.join(tmpdir(), 'linklens-bench-'));
  try {
    // 40 s at 2 Mb/s video + 128 kb/s audio: about 10 MB.
    const mp4 = await ffmpegMake(
      [
        '-f',
        'lavfi',
        '-i',
        'testsrc2=size=1280x720:rate=30:duration=40',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:duration=40',
        '-c:v',
        'libx264',
        '-preset',
        'ultrafast',
        '-b:v',
        '2000k',
        '-maxrate',
        '2000k',
        '-bufsize',
        '4000k',
        '-pix_fmt',
        'yuv420p',
        '-c:a',
        'aac',
        '-b:a',
        '128k',
        '-shortest',
        '-movflags',
        '+faststart',
        '-f',
        'mp4',
      ],
      'bench.mp4',
    );
    // 125 s at 320 kb/s: about 5 MB.
    const mp3 = await ffmpegMake(
      ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=125:sample_rate=44100', '-ac', '2', '-c:a', 'libmp3lame', '-b:a', '320k', '-f', 'mp3'],
      'bench.mp3',
    );
    const pdf = makePdf({ pages: proseDocument(20), title: 'Bench Document', author: 'Bench' });
    const mp4File = path.join(dir, 'bench.mp4');
    const mp3File = path.join(dir, 'bench.mp3');
    await writeFile(mp4File, mp4);
    await writeFile(mp3File, mp3);
    process.stdout.write(
      `inputs: MP4 ${(mp4.length / 1e6).toFixed(1)} MB, MP3 ${(mp3.length / 1e6).toFixed(1)} MB, PDF 20 pages ${(pdf.length / 1024).toFixed(0)} KiB; runs = ${runs}\n`,
    );

    const video = async () => {
      const probe = await probeFile(mp4File, TOOL);
      const { poster, snapshots } = frameTimestamps(probe.duration!, 4);
      const frames = await grabFrames(mp4File, [poster, ...snapshots], { ...TOOL, dir });
      await Promise.all(frames.map((f) => renderImage(f!, { maxPixels: MAX_PIXELS })));
    };
    const audio = async () => {
      await Promise.all([probeFile(mp3File, TOOL), readAudioTags(mp3, { ext: 'mp3' })]);
      await computeWaveform(mp3File, { ...TOOL, maxSeconds: 3600 });
    };
    const document = async () => {
      // The document job's own path: pdf.js in its worker thread (start-up included), then the renders to four sizes.
      const run = await runPdfWorker(pdf, { readPages: 200, renderPages: 3, renderWidth: PDF_RENDER_WIDTH, maxTextChars: 2_000_000 }, 60_000);
      if (!run.info || !run.text || run.shots?.length !== 3) throw new Error('the PDF worker did not finish');
      await Promise.all(run.shots.map((p) => renderImage(Buffer.from(p.data), { maxPixels: MAX_PIXELS })));
    };
    const row = async (label: string, fn: () => Promise<unknown>) => {
      const times = await timeRuns(runs, fn);
      process.stdout.write(`${label.padEnd(62)} median ${median(times).toFixed(0)} ms (min ${Math.min(...times).toFixed(0)})\n`);
    };
    await row('10 MB MP4: probe + poster + 4 snapshots (4 WebP sizes each)', video);
    await row('5 MB MP3: probe + tags + waveform', audio);
    await row('20-page PDF: info + text + 3 page renders (4 WebP sizes each)', document);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
