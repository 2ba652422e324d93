// The URL rule on a corpus replay (issue 41): every URL a record names answers 200 with the same
// bytes right after the record and again later, and a page version's <img> sources are hosted by
// linklens. Runs inside the replay harness's sandbox (../shared/eval/sandbox.sh), against a
// service started there (see docs/benchmarks.md, "The URL rule on the replay"):
//
//   node scripts/url-rule-replay.mjs BASE KEY CORPUS_DIR OUT.json [--limit=N]
//
// For each case, one at a time: POST the link, then GET every URL of the record on the service's
// own base, all at once (a page version not stored yet is held by the server until it is). At the
// end, every URL again. Prints the counts and every URL that broke the rule; exits 1 if any did.
import { createHash } from 'node:crypto';
import fs from 'node:fs';

const [base, key, corpus, out] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
const limit = Number(process.argv.find((a) => a.startsWith('--limit='))?.slice(8) ?? Number.POSITIVE_INFINITY);
if (!base || !key || !corpus || !out) {
  console.error('usage: node scripts/url-rule-replay.mjs BASE KEY CORPUS_DIR OUT.json [--limit=N]');
  process.exit(2);
}
const { loadCases, selectReplayCase } = await import(new URL('../../shared/eval/lib/corpus.mjs', import.meta.url).href);
const origin = new URL(base).origin;

/** Every string in the record that is a URL on the service's own origin. */
function ownUrls(record) {
  const found = new Set();
  const walk = (v) => {
    if (typeof v === 'string' && v.startsWith(`${origin}/`)) found.add(v);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk(record);
  return [...found].sort();
}

async function get(url) {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
    const body = Buffer.from(await res.arrayBuffer());
    return { status: res.status, sha: createHash('sha256').update(body).digest('hex'), body, type: res.headers.get('content-type') ?? '' };
  } catch (err) {
    return { status: 0, error: String(err) };
  }
}

const cases = loadCases(corpus)
  .filter((c) => c.url && c.bodyPath)
  .slice(0, limit);
const seen = new Map(); // url -> first answer's sha
const broken = [];
let records = 0;
let named = 0;
let withReadingTime = 0;
let versions = 0;
let versionImages = 0;
for (const c of cases) {
  await selectReplayCase(c.id);
  let record;
  try {
    const r = await fetch(base, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ link: c.url }),
      signal: AbortSignal.timeout(30_000),
    });
    record = await r.json();
  } catch (err) {
    broken.push({ case: c.id, url: c.url, what: `preview failed: ${err}` });
    continue;
  }
  records++;
  if (record.page?.htmlUrl) named++;
  if (record.page?.estimatedReadingTimeInMinutes !== undefined) withReadingTime++;
  const urls = ownUrls(record);
  const answers = await Promise.all(urls.map(get));
  for (const [i, a] of answers.entries()) {
    const url = urls[i];
    if (a.status !== 200) broken.push({ case: c.id, url, what: `first GET ${a.status} ${a.error ?? ''}` });
    else if (seen.has(url) && seen.get(url).sha !== a.sha) broken.push({ case: c.id, url, what: 'first GET: other bytes than before' });
    else seen.set(url, { sha: a.sha, case: c.id });
    if (a.status === 200 && /\/page\.html$/.test(url)) {
      versions++;
      const srcs = [...a.body.toString('utf8').matchAll(/<img\b[^>]*\bsrc="([^"]*)"/g)].map((m) => m[1]);
      versionImages += srcs.length;
      for (const src of srcs) if (!src.startsWith(`${origin}/assets/`)) broken.push({ case: c.id, url, what: `img not hosted by linklens: ${src}` });
    }
  }
}
// Later: every URL again, the same bytes.
let again = 0;
for (const [url, first] of seen) {
  const a = await get(url);
  again++;
  if (a.status !== 200) broken.push({ case: first.case, url, what: `later GET ${a.status}` });
  else if (a.sha !== first.sha) broken.push({ case: first.case, url, what: 'later GET: other bytes' });
}
const summary = {
  cases: cases.length,
  records,
  namedVersions: named,
  withReadingTime,
  urls: seen.size,
  askedAgain: again,
  pageVersionsHtml: versions,
  imagesInVersions: versionImages,
  broken,
};
fs.writeFileSync(out, JSON.stringify(summary, null, 1));
console.log(JSON.stringify({ ...summary, broken: broken.length }));
for (const b of broken.slice(0, 30)) console.log('BROKEN', JSON.stringify(b));
process.exit(broken.length ? 1 : 0);
