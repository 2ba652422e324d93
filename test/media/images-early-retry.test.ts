/**
 * The image job that answered before its encodes (test/media/images-early.test.ts): an encode that
 * fails after the record went out is rendered once more from the source's bytes, so the addresses
 * the record named still answer, with the bytes the first render would have stored.
 */
import { buildFetcher } from '../../functions/wiring';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import type { JobContext } from '../../lib/jobs/context';
import type { HostedImage } from '../../lib/jobs/kinds';
import { IMAGE_SIZE_NAMES } from '../../lib/media/image-sizes';
import { runImageJob } from '../../lib/media/images';
import * as render from '../../lib/media/render-image';
import { testConfig } from '../helpers/service';
import * as fx from './fixtures';

jest.mock('../../lib/media/render-image', () => {
  const actual = jest.requireActual('../../lib/media/render-image');
  return { ...actual, startRender: jest.fn(actual.startRender) };
});
const actual: typeof render = jest.requireActual('../../lib/media/render-image');

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

function store(writeBehind: boolean, failures: string[] = []) {
  const config = testConfig();
  cleanups.push(config.cleanup);
  const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test', { writeBehind, onWriteError: (key) => failures.push(key) });
  const ctx: JobContext = { fetch: buildFetcher(config), blobs, config };
  return { ctx, blobs };
}

test('an encode that fails after the answer is rendered once more: every address answers with the bytes the job that waits stores', async () => {
  const bytes = await fx.jpeg(1600, 1000);
  const failures: string[] = [];
  const early = store(true, failures);
  let failed = 0;
  jest.mocked(render.startRender).mockImplementationOnce(async (...args) => {
    const started = await actual.startRender(...args);
    return {
      ...started,
      done: started.done.then(() => {
        failed++;
        throw new Error('the encoder ran out of memory');
      }),
    };
  });
  const image = (await runImageJob({ bytesBase64: bytes.toString('base64') }, early.ctx)).image as HostedImage;
  expect(image.sha256).toMatch(/^[0-9a-f]{64}$/);
  const got = await Promise.all(IMAGE_SIZE_NAMES.map((n) => early.blobs.get(`assets/${image.sha256}/${n}.webp`)));
  expect(failed).toBe(1);
  await early.blobs.flush();
  expect(failures).toEqual([]);

  const waiting = store(false);
  await runImageJob({ bytesBase64: bytes.toString('base64') }, waiting.ctx);
  for (const [i, n] of IMAGE_SIZE_NAMES.entries()) {
    expect(got[i]).toEqual(await waiting.blobs.get(`assets/${image.sha256}/${n}.webp`));
    expect(await new FsBlobStore(early.blobs.root, () => '').head(`assets/${image.sha256}/${n}.webp`)).toEqual(
      await waiting.blobs.head(`assets/${image.sha256}/${n}.webp`),
    );
  }
});
