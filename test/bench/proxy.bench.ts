/**
 * `npm run bench -- proxy`: what the proxy route costs a preview, on loopback, through the real
 * handler (local adapters, screenshots off) and a real forward proxy (test/helpers/forward-proxy.ts):
 *  - direct, no proxy configured (the baseline of the same run);
 *  - direct, a proxy configured in `fallback` mode but not needed (the answer is checked for a wall,
 *    and the walled-host memo is read);
 *  - a walled page, wall then proxy, with the memo off (every preview pays both round trips);
 *  - a walled page whose host is remembered (the memo on): the proxy first, one round trip;
 *  - `always`: the proxy for every request.
 * Each line gives the preview's total and its `fetch` phase (Server-Timing), medians and p90, and
 * the requests one preview made of the site and of the proxy.
 */
import type http from 'node:http';
import { buildLocalDeps } from '../../functions/wiring.js';
import type { Config } from '../../lib/config.js';
import type { Resolver } from '../../lib/fetch/address-guard.js';
import { createApiHandler } from '../../lib/http/api-handler.js';
import { WALLS, walled } from '../fetch/wall-fixtures.js';
import { html, startFixtureServer } from '../helpers/fixture-server.js';
import { startForwardProxy, viaProxy } from '../helpers/forward-proxy.js';
import { httpApiEvent, silentLog, TEST_KEY, testConfig } from '../helpers/service.js';
import { median } from './bench.js';

const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];

const p90 = (v: number[]) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * 0.9))];
const phase = (timing: string, name: string) => Number(new RegExp(`(?:^|, )${name};dur=([0-9.]+)`).exec(timing)?.[1] ?? Number.NaN);

export async function run(): Promise<void> {
  const runs = Number(process.env.BENCH_RUNS ?? 40);
  const wall = WALLS.find((w) => w.kind === 'cloudflare-challenge')!;
  const site = await startFixtureServer();
  const proxy = await startForwardProxy({ credentials: 'bench:bench' });
  let siteRequests = 0;
  const page = html('<title>A page</title><meta name="description" content="Its description.">', `<p>${'Words. '.repeat(200)}</p>`);
  const answer = (_q: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(page);
  };
  site.route('/open', (req, res) => {
    siteRequests++;
    answer(req, res);
  });
  site.route(wall.path, (req, res) => {
    siteRequests++;
    walled(wall, viaProxy, answer)(req, res);
  });

  const cases: [string, string, Partial<Config>][] = [
    ['direct, no proxy configured', '/open', {}],
    ['direct, proxy configured (fallback), not needed', '/open', { proxyUrl: proxy.url('bench:bench'), proxyMode: 'fallback' }],
    ['walled, wall then proxy (memo off)', wall.path, { proxyUrl: proxy.url('bench:bench'), proxyMode: 'fallback', proxyMemoTtlMs: 0 }],
    ['walled, host remembered: proxy first', wall.path, { proxyUrl: proxy.url('bench:bench'), proxyMode: 'fallback' }],
    ['always through the proxy', '/open', { proxyUrl: proxy.url('bench:bench'), proxyMode: 'always' }],
    // The baseline again, last: the first case also pays the process's warm-up.
    ['direct, no proxy configured (again)', '/open', {}],
  ];
  try {
    for (const [name, path, overrides] of cases) {
      const config = testConfig({ ...overrides });
      const handler = createApiHandler(buildLocalDeps({ config, log: silentLog, baseUrl: () => 'http://assets.test', resolver }));
      const link = `http://${wall.host}:${site.port}${path}`;
      const preview = async () => {
        const event = httpApiEvent({ authorization: `Bearer ${TEST_KEY}`, 'content-type': 'application/json' }, Buffer.from(JSON.stringify({ link })));
        const out = (await handler(event, { awsRequestId: 'bench' })) as { statusCode: number; headers: Record<string, string>; body: string };
        if (!JSON.parse(out.body).ok) throw new Error(`${name}: the record is not ok`);
        return out.headers;
      };
      await preview(); // warm-up; with the memo on, this preview is the one that meets the wall
      const totals: number[] = [];
      const fetches: number[] = [];
      siteRequests = 0;
      proxy.log.length = 0;
      let route = '';
      for (let i = 0; i < runs; i++) {
        const headers = await preview();
        totals.push(phase(headers['server-timing'], 'total'));
        fetches.push(phase(headers['server-timing'], 'fetch'));
        route = headers['x-linklens-route'];
      }
      process.stdout.write(
        `${name} (route ${route}): total p50 ${median(totals).toFixed(1)} / p90 ${p90(totals).toFixed(1)} ms, fetch p50 ${median(fetches).toFixed(1)} / p90 ${p90(fetches).toFixed(1)} ms; per preview ${(siteRequests / runs).toFixed(1)} site requests, ${(proxy.log.length / runs).toFixed(1)} proxy tunnels\n`,
      );
      config.cleanup();
    }
  } finally {
    await site.close();
    await proxy.close();
  }
}
