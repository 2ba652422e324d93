/**
 * A hostile upstream on loopback: every case must come back as a 200 record (ok:false or partial
 * data) or a 400, never as a 5xx or a crash, and stopped by its own cap (the fetch timeout, the
 * byte cap, the redirect cap, the parse's character, time and nesting caps) before the request's
 * time budget ran out: the preview log line carries no `outOfTime`. How long each case takes is
 * measured in `npm run bench` (test/bench/hostile.bench.ts), never asserted here.
 */
import net from 'node:net';
import zlib from 'node:zlib';
import iconv from 'iconv-lite';
import { PAGE_LIMITS, type PageData } from '../../lib/extract/page-data';
import { parsePage } from '../../lib/extract/parse-page';
import { type FixtureServer, startFixtureServer } from '../helpers/fixture-server';
import { createTestHandler, recordingLog, type TestHandler } from '../helpers/service';

let site: FixtureServer;
let raw: net.Server;
let rawPort: number;
let svc: TestHandler;
const log = recordingLog();
const MB = 1024 * 1024;
const json = (o: unknown) => JSON.stringify(o);

/** A raw TCP server for responses node:http would refuse to produce. */
const rawRoutes: Record<string, (socket: net.Socket) => void> = {
  '/slowloris-headers': (s) => {
    const text = 'HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n';
    let i = 0;
    const t = setInterval(() => {
      if (s.destroyed || i >= text.length) {
        clearInterval(t);
        return;
      }
      s.write(text[i++]);
    }, 150);
    s.on('close', () => clearInterval(t));
  },
  '/length-lie-short': (s) => {
    s.end('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html><title>Short body</title>');
  },
  '/length-10gb': (s) => {
    s.write('HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10737418240\r\n\r\n<html><head><title>Ten gigabytes</title></head><body>');
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const pump = () => {
      while (!s.destroyed && s.write(chunk)) {
        /* fill */
      }
    };
    s.on('drain', pump);
    pump();
    s.on('error', () => {});
  },
  '/garbage-status': (s) => {
    s.end('HTTP/1.1 2OO OK\r\n\r\nnot http');
  },
};

beforeAll(async () => {
  raw = net.createServer((socket) => {
    socket.on('error', () => {});
    socket.once('data', (d) => {
      const path = /^[A-Z]+ (\S+)/.exec(d.toString())?.[1] ?? '/';
      (rawRoutes[path] ?? ((s: net.Socket) => s.end('HTTP/1.1 404 Not Found\r\n\r\n')))(socket);
    });
  });
  await new Promise<void>((r) => raw.listen(0, '127.0.0.1', r));
  rawPort = (raw.address() as net.AddressInfo).port;

  const bomb = Buffer.alloc(50 * MB, 0x20);
  site = await startFixtureServer({
    '/trickle': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html><head><title>Trickled</title>');
      const t = setInterval(() => res.write(' '), 100);
      res.on('close', () => clearInterval(t));
    },
    '/endless': (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.write('<html><head><title>Endless</title></head><body>');
      const chunk = Buffer.alloc(64 * 1024, 0x62);
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) {
          /* fill */
        }
      };
      res.on('drain', pump);
      pump();
    },
    '/gzip-bomb': {
      headers: { 'content-encoding': 'gzip' },
      body: zlib.gzipSync(Buffer.concat([Buffer.from('<html><head><title>Gzip bomb</title></head><body>'), bomb])),
    },
    '/br-bomb': { headers: { 'content-encoding': 'br' }, body: zlib.brotliCompressSync(Buffer.concat([Buffer.from('<title>Brotli bomb</title>'), bomb])) },
    '/deflate-bomb': { headers: { 'content-encoding': 'deflate' }, body: zlib.deflateSync(Buffer.concat([Buffer.from('<title>Deflate bomb</title>'), bomb])) },
    '/html-20mb': { body: `<html><head><title>Twenty</title></head><body>${'<p>lorem ipsum dolor</p>'.repeat(Math.ceil((20 * MB) / 24))}</body></html>` },
    '/nested': { body: `<html><head><title>Nested</title></head><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>` },
    '/nested-unclosed': { body: `<html><head><title>Unclosed</title></head><body>${'<div><span><b>'.repeat(60_000)}</body></html>` },
    '/huge-attribute': { body: `<html><head><title>Attr</title><meta property="og:description" content="${'x'.repeat(5 * MB)}"></head></html>` },
    '/meta-flood': { body: `<html><head><title>Metas</title>${'<meta name="keywords" content="a,b,c">'.repeat(200_000)}</head></html>` },
    '/invalid-utf8': {
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: Buffer.concat([Buffer.from('<html><head><title>Caf'), Buffer.from([0xe9, 0xff, 0xfe, 0xc3]), Buffer.from(' ok</title></head></html>')]),
    },
    '/lying-charset': {
      headers: { 'content-type': 'text/html; charset=utf-8' },
      body: iconv.encode('<html><head><meta charset="windows-1251"><title>Привет мир</title></head></html>', 'windows-1251'),
    },
    '/r-data': { status: 302, headers: { location: 'data:text/html,<title>x</title>' } },
    '/r-ftp': { status: 302, headers: { location: 'ftp://127.0.0.1/' } },
    '/r-file': { status: 302, headers: { location: 'file:///etc/passwd' } },
    '/r-gopher': { status: 302, headers: { location: 'gopher://127.0.0.1:70/_x' } },
    '/loop': { status: 302, headers: { location: '/loop' } },
  });
  for (let i = 0; i < 50; i++) site.route(`/chain${i}`, { status: 301, headers: { location: `/chain${i + 1}` } });
  svc = createTestHandler({ config: { fetchTimeoutMs: 1500, maxPageBytes: 2 * MB }, log });
});

afterAll(async () => {
  await site.close();
  raw.close();
  svc.cleanup();
});

/** The request and its `preview` log line (outOfTime is set when the time budget cut the record). */
async function preview(link: string) {
  const before = log.lines.length;
  const res = await svc.post(json({ link }));
  const logged = log.lines.slice(before).find((l) => l.message === 'preview')?.extra ?? {};
  return { res, logged };
}

test.each([
  ['/trickle', 'Trickled'],
  ['/endless', 'Endless'],
  ['/gzip-bomb', 'Gzip bomb'],
  ['/br-bomb', 'Brotli bomb'],
  ['/deflate-bomb', 'Deflate bomb'],
  ['/html-20mb', 'Twenty'],
  ['/nested', 'Nested'],
  ['/nested-unclosed', 'Unclosed'],
  ['/huge-attribute', 'Attr'],
  ['/meta-flood', 'Metas'],
])(
  '%s: a bounded, partial record with the title that arrived, cut by its own caps before the budget',
  async (route, title) => {
    const { res, logged } = await preview(site.url(route));
    expect(res.statusCode).toBe(200);
    expect(res.json.title).toBe(title);
    expect(res.json.status).toBe(200);
    expect(logged).toMatchObject({ ok: true, status: 200 });
    expect(logged.outOfTime).toBeUndefined();
  },
  20_000,
);

test.each([
  [
    'nested 100,000 deep',
    `<html><head><title>Nested</title><meta name="description" content="Before the nesting"></head><body>${'<div>'.repeat(100_000)}deep${'</div>'.repeat(100_000)}</body></html>`,
  ],
  [
    'unclosed 180,000 deep',
    `<html><head><title>Unclosed</title><meta name="description" content="Before the nesting"></head><body>${'<div><span><b>'.repeat(60_000)}</body></html>`,
  ],
])('the extraction parse stops at the nesting cap (%s): the head is read, the rest is cut short', (_name, page) => {
  // Without the cap each tag costs time in proportion to the depth (htmlparser2's stack), and the
  // parse ran seconds past its time budget inside one 64 KB chunk. The time budget is lifted
  // here, so only the nesting cap can cut the parse short.
  const parseMs = PAGE_LIMITS.parseMs;
  PAGE_LIMITS.parseMs = Number.POSITIVE_INFINITY;
  let data: PageData;
  try {
    data = parsePage(page);
  } finally {
    PAGE_LIMITS.parseMs = parseMs;
  }
  expect(data.cutShort).toBe(true);
  expect(data.title).toBe(page.includes('Unclosed') ? 'Unclosed' : 'Nested');
  expect(data.metas).toContainEqual(expect.objectContaining({ name: 'description', content: 'Before the nesting' }));
  expect(data.text).not.toContain('deep');
});

test('nesting below the cap is parsed to the end', () => {
  const data = parsePage(
    `<html><head><title>Shallow</title></head><body>${'<div>'.repeat(500)}<p>deep enough</p>${'</div>'.repeat(500)}<p>after</p></body></html>`,
  );
  expect(data.cutShort).toBeUndefined();
  expect(data.paragraphs).toEqual(['deep enough', 'after']);
});

test('a 5 MB attribute is not copied into the record', async () => {
  const { res } = await preview(site.url('/huge-attribute'));
  expect(JSON.stringify(res.json).length).toBeLessThan(100_000);
});

test('a redirect loop and 50 redirects: ok:false with the status seen, stopped by the redirect cap', async () => {
  for (const route of ['/loop', '/chain0']) {
    const before = site.requests.length;
    const { res, logged } = await preview(site.url(route));
    expect(res.statusCode).toBe(200);
    expect(res.json).toMatchObject({ ok: false });
    expect([301, 302]).toContain(res.json.status);
    expect(res.json.redirectionTrail.length).toBeLessThanOrEqual(11);
    // The cap, not the budget, stopped it: at most 11 requests, and the budget never ran out.
    expect(site.requests.length - before).toBeLessThanOrEqual(11);
    expect(logged.outOfTime).toBeUndefined();
  }
});

test.each(['/r-data', '/r-ftp', '/r-file', '/r-gopher'])('a redirect to another scheme (%s) is 400 LINK_NOT_ALLOWED', async (route) => {
  const { res } = await preview(site.url(route));
  expect(res.statusCode).toBe(400);
  expect(res.json.errorCode).toBe('LINK_NOT_ALLOWED');
});

test('slowloris headers: ok:false, status 0, a TIMEOUT of the fetch cap (not the budget)', async () => {
  const { res, logged } = await preview(`http://127.0.0.1:${rawPort}/slowloris-headers`);
  expect(res.statusCode).toBe(200);
  expect(res.json).toMatchObject({ ok: false, status: 0 });
  expect(res.headers['x-linklens-upstream-error']).toBe('TIMEOUT');
  expect(logged.outOfTime).toBeUndefined();
});

test('a Content-Length longer than the body: what arrived is used', async () => {
  const { res } = await preview(`http://127.0.0.1:${rawPort}/length-lie-short`);
  expect(res.statusCode).toBe(200);
  expect(res.json.title).toBe('Short body');
});

test('a 10 GB Content-Length: read up to the cap, size reported as declared', async () => {
  const { res, logged } = await preview(`http://127.0.0.1:${rawPort}/length-10gb`);
  expect(res.statusCode).toBe(200);
  expect(res.json.title).toBe('Ten gigabytes');
  expect(res.json.size).toBe(10737418240);
  expect(logged.outOfTime).toBeUndefined();
});

test('a response that is not HTTP: ok:false, never a 5xx', async () => {
  const { res } = await preview(`http://127.0.0.1:${rawPort}/garbage-status`);
  expect(res.statusCode).toBe(200);
  expect(res.json.ok).toBe(false);
});

test('invalid UTF-8 decodes with replacement characters, not a crash', async () => {
  const { res } = await preview(site.url('/invalid-utf8'));
  expect(res.statusCode).toBe(200);
  expect(res.json.title).toMatch(/^Caf.+ ok$/);
});

test('a charset declaration that lies: the header says UTF-8, the bytes are windows-1251', async () => {
  const { res } = await preview(site.url('/lying-charset'));
  expect(res.statusCode).toBe(200);
  // Per WHATWG, the header wins over <meta>; the bytes are not valid UTF-8, so detection must step in.
  expect(res.json.title).toBe('Привет мир');
});
