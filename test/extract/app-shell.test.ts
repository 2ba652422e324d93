/**
 * The `auto` render rule (lib/extract/app-shell.ts) on the shells the real frameworks' starters
 * build (their index.html as `npm run build` writes it, hashes shortened), and on pages it must
 * leave alone: a page with good static metadata, a server-rendered app, a plain page with text.
 */
import { appShellReason } from '../../lib/extract/app-shell';
import { pageFields, readPage } from '../../lib/extract/extract-page';
import type { FetchResult } from '../../lib/fetch/types';

/** The rule as the pipeline asks it: the page read, its fields found by the rules. */
function reason(html: string, url = 'https://app.example/'): string | undefined {
  const res: FetchResult = {
    url,
    finalUrl: url,
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8' },
    body: Buffer.from(html),
    truncated: false,
    trail: [url],
  };
  const read = readPage(res, 'text/html; charset=utf-8');
  return appShellReason(read.page, pageFields(read));
}

const SHELLS: Record<string, string> = {
  'React (create-react-app)': `<!doctype html><html lang="en"><head><meta charset="utf-8"/><link rel="icon" href="/favicon.ico"/><meta name="viewport" content="width=device-width,initial-scale=1"/><meta name="theme-color" content="#000000"/><meta name="description" content="Web site created using create-react-app"/><link rel="apple-touch-icon" href="/logo192.png"/><link rel="manifest" href="/manifest.json"/><title>React App</title><script defer="defer" src="/static/js/main.8a1b2c3d.js"></script><link href="/static/css/main.f855e6bc.css" rel="stylesheet"></head><body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div></body></html>`,
  'React (Vite)': `<!doctype html><html lang="en"><head><meta charset="UTF-8" /><link rel="icon" type="image/svg+xml" href="/vite.svg" /><meta name="viewport" content="width=device-width, initial-scale=1.0" /><title>Vite + React + TS</title><script type="module" crossorigin src="/assets/index-DiwrgTda.js"></script><link rel="stylesheet" crossorigin href="/assets/index-D8b4DHJx.css"></head><body><div id="root"></div></body></html>`,
  'Vue (Vite)': `<!DOCTYPE html><html lang=""><head><meta charset="UTF-8"><link rel="icon" href="/favicon.ico"><meta name="viewport" content="width=device-width, initial-scale=1.0"><title>Vite App</title><script type="module" crossorigin src="/assets/index-BWzWqBjM.js"></script><link rel="stylesheet" crossorigin href="/assets/index-CFz5Wp4x.css"></head><body><div id="app"></div></body></html>`,
  'Vue (Vue CLI)': `<!DOCTYPE html><html lang=""><head><meta charset="utf-8"><meta http-equiv="X-UA-Compatible" content="IE=edge"><meta name="viewport" content="width=device-width,initial-scale=1"><link rel="icon" href="/favicon.ico"><title>shop-front</title><script defer="defer" src="/js/chunk-vendors.3c1e6d2a.js"></script><script defer="defer" src="/js/app.7b2c3f9e.js"></script><link href="/css/app.2cf79ad6.css" rel="preload" as="style"></head><body><noscript><strong>We're sorry but shop-front doesn't work properly without JavaScript enabled. Please enable it to continue.</strong></noscript><div id="app"></div></body></html>`,
  Angular: `<!doctype html><html lang="en" data-beasties-container><head><meta charset="utf-8"><title>Dashboard</title><base href="/"><meta name="viewport" content="width=device-width, initial-scale=1"><link rel="icon" type="image/x-icon" href="favicon.ico"><link rel="stylesheet" href="styles-5INURTSO.css"></head><body><app-root></app-root><script src="polyfills-FFHMD2TL.js" type="module"></script><script src="main-4ZQ7T2KA.js" type="module"></script></body></html>`,
  'Next.js (client-only, static export)': `<!DOCTYPE html><html><head><meta charset="utf-8"/><meta name="viewport" content="width=device-width"/><meta name="next-head-count" content="2"/><noscript data-n-css=""></noscript><script defer="" nomodule="" src="/_next/static/chunks/polyfills-78c92fac7aa8fdd8.js"></script><script src="/_next/static/chunks/webpack-8fa1640cc84ba8fe.js" defer=""></script><script src="/_next/static/chunks/framework-ca706bf673a13738.js" defer=""></script><script src="/_next/static/chunks/main-0c8a0e7dc0a2e3a4.js" defer=""></script><script src="/_next/static/chunks/pages/index-1b3a9f1e2c2b1a9d.js" defer=""></script></head><body><div id="__next"></div><script id="__NEXT_DATA__" type="application/json">{"props":{"pageProps":{}},"page":"/","query":{},"buildId":"abc123","nextExport":true,"autoExport":true,"isFallback":false,"scriptLoader":[]}</script></body></html>`,
  'Flutter web': `<!DOCTYPE html><html><head><base href="/"><meta charset="UTF-8"><meta content="IE=Edge" http-equiv="X-UA-Compatible"><meta name="description" content="A new Flutter project."><meta name="mobile-web-app-capable" content="yes"><meta name="apple-mobile-web-app-status-bar-style" content="black"><meta name="apple-mobile-web-app-title" content="trail_log"><link rel="apple-touch-icon" href="icons/Icon-192.png"><link rel="icon" type="image/png" href="favicon.png"/><title>trail_log</title><link rel="manifest" href="manifest.json"></head><body><script src="flutter_bootstrap.js" async></script></body></html>`,
};

test.each(Object.entries(SHELLS))('%s: an app shell, rendered', (_name, html) => {
  expect(reason(html)).toEqual(expect.any(String));
});

test('the reasons name what was seen', () => {
  expect(reason(SHELLS['React (create-react-app)'])).toBe('empty #root with scripts');
  expect(reason(SHELLS.Angular)).toBe('empty app-root with scripts');
  expect(reason(SHELLS['Flutter web'])).toBe("a framework's loader script");
});

describe('left alone', () => {
  test('a shell with good static metadata (og:title, a real description): never rendered', () => {
    const withMeta = SHELLS['React (Vite)'].replace(
      '</head>',
      '<meta property="og:title" content="Trail log"><meta name="description" content="Where we walked this year."></head>',
    );
    expect(reason(withMeta)).toBeUndefined();
    expect(reason(SHELLS['React (create-react-app)'].replace('Web site created using create-react-app', 'Plan your next hike.'))).toBeUndefined();
  });

  test('a server-rendered app: the mount element holds the page', () => {
    const ssr = SHELLS['Next.js (client-only, static export)'].replace(
      '<div id="__next"></div>',
      `<div id="__next"><main><h1>River levels</h1><p>${'The river rose two metres overnight after the storm. '.repeat(8)}</p></main></div>`,
    );
    expect(reason(ssr)).toBeUndefined();
  });

  test('a plain page with text and no metadata, and one with no scripts at all', () => {
    expect(
      reason(`<html><head><title>Notes</title><script src="/a.js"></script></head><body><p>${'Plain words of a plain page. '.repeat(12)}</p></body></html>`),
    ).toBeUndefined();
    expect(reason('<html><head><title>React App</title></head><body><div id="root"></div></body></html>')).toBeUndefined();
  });
});
