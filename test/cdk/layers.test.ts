/**
 * The layers' asset hashes (what decides whether `cdk deploy` rebuilds and uploads a layer) follow
 * the layer's contents and the code that builds it, not only package versions; and the browser
 * layer's Chromium is the one the shipped playwright-core was released for.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { browserLayerHash, browserPackageVersion } from '../../cdk/constructs/browser-layer';
import { PROJECT_ROOT } from '../../cdk/constructs/bundling';
import { fingerprint } from '../../cdk/constructs/package-closure';
import { layerHashes } from '../../layers/build-layers';

let root: string;
beforeAll(() => {
  root = mkdtempSync(path.join(tmpdir(), 'linklens-layer-hash-'));
  copyFileSync(path.join(PROJECT_ROOT, 'package-lock.json'), path.join(root, 'package-lock.json'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const editLock = (edit: (packages: Record<string, any>) => void) => {
  const lock = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'package-lock.json'), 'utf8'));
  edit(lock.packages);
  writeFileSync(path.join(root, 'package-lock.json'), JSON.stringify(lock, null, 1));
};

test("a changed package inside a layer changes that layer's hash, and only that one", () => {
  const before = { ...layerHashes(root), chromium: browserLayerHash(root) };
  // Same version, other bytes (a republished or patched tarball): the integrity differs.
  editLock((p) => {
    p['node_modules/@img/sharp-libvips-linux-x64'].integrity = 'sha512-changed';
  });
  const after = { ...layerHashes(root), chromium: browserLayerHash(root) };
  expect(after.sharp).not.toBe(before.sharp);
  expect(after.ffmpeg).toBe(before.ffmpeg);
  expect(after.chromium).toBe(before.chromium);

  editLock((p) => {
    p['node_modules/@ffprobe-installer/linux-x64'].integrity = 'sha512-other';
  });
  expect(layerHashes(root).ffmpeg).not.toBe(before.ffmpeg);
  editLock((p) => {
    p['node_modules/tar-fs'].version = '9.9.9';
  }); // a dependency of @sparticuz/chromium
  expect(browserLayerHash(root)).not.toBe(before.chromium);
});

test('a changed build script changes the hash', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'linklens-build-script-'));
  try {
    const script = path.join(dir, 'build-layers.ts');
    writeFileSync(script, 'chmodSync(target, 0o755);');
    const a = fingerprint([script], ['sharp', 'same packages']);
    writeFileSync(script, 'chmodSync(target, 0o744);');
    expect(fingerprint([script], ['sharp', 'same packages'])).not.toBe(a);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the browser layer's Chromium major is the one playwright-core expects", () => {
  const browsers = JSON.parse(readFileSync(path.join(PROJECT_ROOT, 'node_modules', 'playwright-core', 'browsers.json'), 'utf8')) as {
    browsers: { name: string; browserVersion: string }[];
  };
  const expected = browsers.browsers.find((b) => b.name === 'chromium')!.browserVersion.split('.')[0];
  expect(browserPackageVersion().split('.')[0]).toBe(expected);
});
