/**
 * The browser's decisions without a browser: how many lanes a machine gets, the browser worker's
 * memory, which process the memory watch kills, how a page's CPU time adds up, and the launch's
 * command line (one feature list, the heap cap).
 */
import { AWS_BROWSER_LANES, BROWSER_BASE_MB, browserLanes, browserWorkerMemoryMb, pageHeapMb, singleProcessCapMb } from '../../lib/browser/lanes';
import { overCap, privateMb } from '../../lib/browser/memory-watch';
import { CpuMeter } from '../../lib/browser/page-watch';
import { CHROMIUM_ARGS, chromiumArgs, PLAYWRIGHT_DISABLED_FEATURES, QUIET_FEATURES } from '../../lib/browser/switches';
import { LAMBDA_MB_PER_VCPU } from '../../lib/core-settings';
import { WORKER_BASE_MB, WORKER_HEADROOM_MB } from '../../lib/jobs/memory';

describe('lanes', () => {
  const auto = { browserConcurrency: 'auto' as const, browserPageMb: 512 };

  test('a set count wins over the machine', () => {
    expect(browserLanes({ ...auto, browserConcurrency: 3 }, { memoryMb: 1024, cores: 1 })).toBe(3);
  });

  // Two a core, the memory permitting: lanes beyond the cores share them (lib/browser/page-lanes.ts).
  test.each([
    ['this machine: 24 GB, 2 cores', 24_105, 2, 4],
    ['4 GB, 8 cores: memory decides', 4096, 8, 1],
    ['64 GB, 16 cores: memory decides', 65_536, 16, 31],
    ['64 GB, 8 cores: two a core', 65_536, 8, 16],
    ['8 GB, 1 core: two on a single core', 8192, 1, 2],
    ['1 GB: at least one', 1024, 4, 1],
  ])('auto, %s', (_, memoryMb, cores, lanes) => {
    expect(browserLanes(auto, { memoryMb, cores })).toBe(lanes);
  });

  test('a larger page cap means fewer lanes', () => {
    const machine = { memoryMb: 8192, cores: 8 };
    expect(browserLanes({ ...auto, browserPageMb: 256 }, machine)).toBeGreaterThan(browserLanes({ ...auto, browserPageMb: 1024 }, machine));
  });

  test("the browser worker's memory: the worker, Chromium and its lanes' pages, at least a vCPU", () => {
    expect(browserWorkerMemoryMb(512)).toBe(LAMBDA_MB_PER_VCPU);
    expect(browserWorkerMemoryMb(2048)).toBe(WORKER_BASE_MB + WORKER_HEADROOM_MB + BROWSER_BASE_MB + 2048);
    expect(browserWorkerMemoryMb(1024, 2)).toBe(WORKER_BASE_MB + WORKER_HEADROOM_MB + BROWSER_BASE_MB + 2 * 1024);
    expect(AWS_BROWSER_LANES).toBe(1);
    expect(pageHeapMb(512)).toBe(256);
    expect(singleProcessCapMb(512, 1)).toBe(BROWSER_BASE_MB + 512);
  });
});

describe('the memory watch', () => {
  const limits = { pageMb: 512, singleProcessMb: 812 };

  test('a renderer past the page cap is the one killed; the browser and GPU processes are not capped by it', () => {
    const sample = [
      { type: 'browser', pid: 10, mb: 900 },
      { type: 'GPU', pid: 11, mb: 700 },
      { type: 'renderer', pid: 12, mb: 40 },
      { type: 'renderer', pid: 13, mb: 530.4 },
    ];
    expect(overCap(sample, limits)).toEqual({ what: 'renderer', pid: 13, mb: 530, capMb: 512 });
    expect(overCap(sample.slice(0, 3), limits)).toBeUndefined();
  });

  test('a single-process browser (its renderer listed under its own pid) is capped as a whole', () => {
    const single = (mb: number) => [
      { type: 'browser', pid: 20, mb },
      { type: 'renderer', pid: 20, mb },
    ];
    expect(overCap(single(600), limits)).toBeUndefined();
    expect(overCap(single(851), limits)).toEqual({ what: 'browser', pid: 20, mb: 851, capMb: 812 });
  });

  test("a process's private memory from /proc, or nothing when it cannot be read", () => {
    const status = 'Name:\tchromium\nVmRSS:\t  900000 kB\nRssAnon:\t  524288 kB\nRssFile:\t 100 kB\n';
    expect(privateMb(1, () => status)).toBe(512);
    expect(privateMb(1, () => 'Name:\tx\n')).toBeUndefined();
    expect(
      privateMb(1, () => {
        throw new Error('ENOENT');
      }),
    ).toBeUndefined();
  });
});

test("a page's CPU time: from the first reading on; a new renderer (a lower reading) counts from zero", () => {
  const meter = new CpuMeter();
  expect(meter.add(5)).toBe(0); // before the load: not the page's
  expect(meter.add(5.5)).toBe(500);
  expect(meter.add(0.25)).toBe(750); // a cross-site navigation's new renderer
  expect(meter.add(1.25)).toBe(1750);
});

describe("the launch's command line", () => {
  const layer = [
    '--single-process',
    '--disable-features=AudioServiceOutOfProcess,site-per-process',
    '--enable-features=SharedArrayBuffer',
    '--js-flags=--jitless',
  ];
  const args = chromiumArgs(layer, { heapMb: 256 });

  test('one --disable-features, last, with every list in it: playwright-core’s, the layer’s and ours', () => {
    const lists = args.filter((a) => a.startsWith('--disable-features='));
    expect(lists).toHaveLength(1);
    expect(args.at(-2)).toBe(lists[0]);
    const names = lists[0].slice('--disable-features='.length).split(',');
    for (const f of [...PLAYWRIGHT_DISABLED_FEATURES, 'AudioServiceOutOfProcess', 'site-per-process', ...QUIET_FEATURES]) expect(names).toContain(f);
    expect(new Set(names).size).toBe(names.length);
  });

  test('one --enable-features with playwright-core’s and the layer’s; the heap cap replaces any other --js-flags', () => {
    expect(args.filter((a) => a.startsWith('--enable-features='))).toEqual(['--enable-features=CDPScreenshotNewSurface,SharedArrayBuffer']);
    expect(args.filter((a) => a.startsWith('--js-flags='))).toEqual(['--js-flags=--max-old-space-size=256']);
    expect(args).toContain('--single-process');
    for (const flag of CHROMIUM_ARGS) expect(args).toContain(flag);
  });
});
