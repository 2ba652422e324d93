import { buildFetcher } from '../../functions/wiring';
import { FsBlobStore } from '../../lib/adapters/local/fs-blob-store';
import { InlineJobRunner } from '../../lib/adapters/local/inline-job-runner';
import type { IconCandidate } from '../../lib/extract/icons';
import { cssColorToHex } from '../../lib/media/css-color';
import { hostImage, hostImageList, hostImages } from '../../lib/media/host-images';
import { iconBackgroundColor } from '../../lib/media/icon-background';
import { fitWithin, IMAGE_SIZES, renditionKey } from '../../lib/media/image-sizes';
import { sniffImageFormat } from '../../lib/media/sniff-image';
import { sanitizeSvg, UnsafeSvgError } from '../../lib/media/svg-safety';
import type { Job, JobRunner } from '../../lib/ports';
import { testConfig } from '../helpers/service';
import * as fx from './fixtures';

test('the sizes live in one place: 320, 640, 1280 boxes and the original', () => {
  expect(IMAGE_SIZES.map((s) => [s.name, s.box])).toEqual([
    ['thumbnail', 320],
    ['medium', 640],
    ['large', 1280],
    ['original', undefined],
  ]);
  expect(renditionKey('ab'.repeat(32), 'medium')).toBe(`assets/${'ab'.repeat(32)}/medium.webp`);
  expect(fitWithin(4000, 3000, 320)).toEqual({ width: 320, height: 240 });
  expect(fitWithin(100, 3000, 640)).toEqual({ width: 21, height: 640 });
  expect(fitWithin(200, 100, 1280)).toEqual({ width: 200, height: 100 }); // never upscaled
});

test('formats are sniffed from magic bytes', async () => {
  expect(sniffImageFormat(await fx.jpeg(4, 4))).toBe('jpeg');
  expect(sniffImageFormat(await fx.png(4, 4))).toBe('png');
  expect(sniffImageFormat(await fx.animatedGif(4, 4))).toBe('gif');
  expect(sniffImageFormat(await fx.webp(4, 4))).toBe('webp');
  expect(sniffImageFormat(fx.ico([{ width: 4, height: 4, bytes: fx.icoBitmap(4, 4, [0, 0, 0, 255]) }]))).toBe('ico');
  expect(sniffImageFormat(Buffer.from('\uFEFF<?xml version="1.0"?><!-- x --><svg xmlns="http://www.w3.org/2000/svg"/>'))).toBe('svg');
  expect(sniffImageFormat(Buffer.from('<!doctype html><html><svg></svg></html>'))).toBeUndefined();
  expect(sniffImageFormat(Buffer.from('GIF'))).toBeUndefined();
});

test('SVG sanitizing removes every external reference and keeps internal ones', () => {
  const out = sanitizeSvg(
    fx.svg(
      [
        '<image href="http://evil.test/a.png"/>',
        "<image xlink:href='https://evil.test/b.png'/>",
        '<use href="other.svg#x"/><use href="#local"/>',
        '<image href="data:image/png;base64,AAAA"/><image href="data:image/svg+xml;base64,AAAA"/>',
        '<rect fill="url(http://evil.test/c.svg#p)" stroke="url(#grad)"/>',
        '<style>@import url(http://evil.test/d.css); .a { fill: url( "file:///etc/e" ) }</style>',
        '<image href="&#104;ttp://evil.test/f.png"/>',
        '<?xml-stylesheet href="http://evil.test/g.css"?>',
      ].join(''),
    ),
  ).toString('utf8');
  expect(out).not.toMatch(/evil\.test|file:|other\.svg|svg\+xml|xml-stylesheet/);
  expect(out).toContain('href="#local"');
  expect(out).toContain('url(#grad)');
  expect(out).toContain('data:image/png;base64,AAAA');
  expect(() => sanitizeSvg(Buffer.from('<!DOCTYPE svg [<!ENTITY a "aaaa">]><svg/>'))).toThrow(UnsafeSvgError);
  expect(() => sanitizeSvg(fx.svg('<style>rect { fill: \\75 rl(http://evil.test/) }</style>'))).toThrow(UnsafeSvgError);
});

test('CSS colours become hex', () => {
  expect(cssColorToHex('#FF0000')).toBe('#ff0000');
  expect(cssColorToHex('#abc')).toBe('#aabbcc');
  expect(cssColorToHex('#11223380')).toBe('#11223380');
  expect(cssColorToHex('#112233ff')).toBe('#112233');
  expect(cssColorToHex('rebeccapurple')).toBe('#663399');
  expect(cssColorToHex('rgb(255, 128, 0)')).toBe('#ff8000');
  expect(cssColorToHex('rgb(100% 0% 0% / 50%)')).toBe('#ff000080');
  expect(cssColorToHex('hsl(120, 100%, 25%)')).toBe('#008000');
  expect(cssColorToHex('not-a-colour')).toBeUndefined();
  expect(cssColorToHex(undefined)).toBeUndefined();
});

test('an icon background: the opaque edge colour, else a colour that contrasts with the icon', () => {
  const tile = (edge: number[], centre: number[], size = 8) => {
    const px = new Uint8Array(size * size * 4);
    for (let y = 0; y < size; y++)
      for (let x = 0; x < size; x++) {
        const onEdge = x === 0 || y === 0 || x === size - 1 || y === size - 1;
        px.set(onEdge ? edge : centre, (y * size + x) * 4);
      }
    return px;
  };
  expect(iconBackgroundColor(tile([0x33, 0x66, 0x99, 255], [255, 255, 255, 255]), 8, 8)).toBe('#336699');
  expect(iconBackgroundColor(tile([0, 0, 0, 0], [20, 20, 20, 255]), 8, 8)).toBe('#ffffff'); // dark glyph on transparent
  expect(iconBackgroundColor(tile([0, 0, 0, 0], [250, 250, 250, 255]), 8, 8)).toBe('#000000'); // light glyph on transparent
});

test('hostImage / hostImageList: MediaImages for other parts of the pipeline, undefined for what fails', async () => {
  const config = testConfig();
  try {
    const blobs = new FsBlobStore(config.dataDir, () => 'http://assets.test');
    const jobs = new InlineJobRunner({ fetch: buildFetcher(config), blobs, config }, 2);
    const options = { requestId: 'r', deadline: Date.now() + 5000 };
    const png = await fx.pngWithAlpha(900, 300);
    const [a, b] = await hostImageList([{ bytes: png }, { bytes: Buffer.from('broken') }], jobs, options);
    expect(b).toBeUndefined();
    expect(a).toEqual({
      width: 900,
      height: 300,
      size: png.length,
      format: 'png',
      hasAlphaChannel: true,
      thumbnail: { width: 320, height: 107, url: expect.stringMatching(/^http:\/\/assets\.test\/assets\/[0-9a-f]{64}\/thumbnail\.webp$/) },
      medium: { width: 640, height: 213, url: expect.any(String) },
      large: { width: 900, height: 300, url: expect.any(String) },
      original: { width: 900, height: 300, url: expect.any(String) },
      dominantColor: expect.stringMatching(/^#[0-9a-f]{6}$/),
      blurhash: expect.any(String),
    });
    expect(await hostImage({ bytes: png }, jobs, options)).toEqual(a);
    expect(await hostImageList([], jobs, options)).toEqual([]);
  } finally {
    config.cleanup();
  }
});

describe('hostImages: the icon candidates', () => {
  /** Hosted in `sizes` (all four by default), as the image job does. */
  const hosted = (n: number, sizes?: string[]) => ({
    width: n,
    height: n,
    size: 10,
    format: 'png',
    hasAlphaChannel: true,
    ...Object.fromEntries((sizes ?? ['thumbnail', 'medium', 'large', 'original']).map((s) => [s, { width: n, height: n, url: `${s[0]}${n}` }])),
    sha256: 'x',
    animated: false,
    edgeColor: '#000000',
    reused: false,
  });
  /**
   * A runner that logs each run's jobs (their URL, alternatives and sizes) and hosts as the image
   * job does: the first of a job's URL and alternatives that is not /bad, at the size in its URL.
   */
  function fakeRunner(sharesCpu: boolean | undefined) {
    const runs: { url?: string; alternatives?: string[]; sizes?: string[] }[][] = [];
    const runner: JobRunner = {
      sharesCpu,
      run: (async (jobs: Job<'image'>[]) => {
        runs.push(jobs.map((j) => ({ url: j.input.url, alternatives: j.input.alternatives, sizes: j.input.sizes })));
        return new Map(
          jobs.map((j) => {
            const url = [j.input.url ?? '', ...(j.input.alternatives ?? [])].find((u) => !u.endsWith('/bad'));
            return [
              j.id,
              url === undefined
                ? { id: j.id, ok: false, error: 'broken', ms: 1 }
                : { id: j.id, kind: 'image', ok: true, result: { image: hosted(Number(url.split('/').pop()), j.input.sizes) }, ms: 1 },
            ];
          }),
        );
      }) as JobRunner['run'],
    };
    return { runner, runs };
  }
  const icons = ['https://a.example/bad', 'https://a.example/48', 'https://a.example/16'].map((url) => ({ url }) as IconCandidate);
  const options = { requestId: 'r', deadline: Date.now() + 60_000 };

  test.each([true, undefined])(
    'sharesCpu %s: the image and one icon job (its candidates in order, `original` only) in one run; the first that hosts wins',
    async (sharesCpu) => {
      const { runner, runs } = fakeRunner(sharesCpu);
      const out = await hostImages({ image: { url: 'https://a.example/1200' }, icons }, runner, options);
      expect(out.icon).toEqual({ width: 48, height: 48, backgroundColor: '#000000', url: 'o48' });
      expect(out.image).toEqual({ thumbnail: expect.anything(), medium: expect.anything(), large: expect.anything(), original: expect.anything() });
      expect(out.image?.original.url).toBe('o1200');
      expect(runs).toEqual([
        [
          { url: 'https://a.example/1200', alternatives: undefined, sizes: undefined },
          { url: 'https://a.example/bad', alternatives: ['https://a.example/48', 'https://a.example/16'], sizes: ['original'] },
        ],
      ]);
    },
  );
});
