/**
 * A GitHub repository (CODEHOST_REPOSITORY, `codehostRepository`) from the REST API, key-less (60 requests
 * an hour per address) or with GITHUB_TOKEN (5,000 an hour). One preview costs five requests:
 * the repository, its languages, and three `per_page=1` lists whose Link header `rel="last"`
 * page number is the count (contributors, commits, open pull requests). When the API is
 * rate-limited (403/429) or unreachable, the repository's HTML page is read instead.
 */
import type { CodehostRepository } from '../../contract/link.js';
import { extractPage } from '../../extract/extract-page.js';
import { header } from '../../fetch/headers.js';
import type { FetchResult } from '../../fetch/types.js';
import { toImageSet } from '../../media/host-images.js';
import { parseCount } from '../shared/counts.js';
import { isoDate } from '../shared/dates.js';
import { fetchPage, fetchSource, optional } from '../shared/fetch.js';
import { platformObjectId } from '../shared/ids.js';
import { at, type Json, num, parseJson, str } from '../shared/json.js';
import type { PlatformPreview } from '../types.js';
import linguist from './linguist-colors.json';
import type { Ctx } from './settings.js';

function repositoryObjectId(ownId: string | number): number {
  return platformObjectId('codehost', 'repository', ownId);
}

function ownerObjectId(ownId: string | number): number {
  return platformObjectId('codehost', 'user', ownId);
}

function languageColor(name: string): string {
  return (linguist.colors as Record<string, string>)[name] ?? linguist.fallback;
}

/** Language byte counts -> `{name, color, percentage}` (one decimal), largest first. */
export function languageShares(bytes: Record<string, unknown>): { name: string; color: string; percentage: number }[] {
  const entries = Object.entries(bytes).filter((e): e is [string, number] => typeof e[1] === 'number' && e[1] > 0);
  const total = entries.reduce((s, [, n]) => s + n, 0);
  if (!total) return [];
  return entries.sort((a, b) => b[1] - a[1]).map(([name, n]) => ({ name, color: languageColor(name), percentage: Math.round((n / total) * 1000) / 10 }));
}

/** The count a `per_page=1` list stands for: the page number of its `rel="last"` link, else the items on the only page. */
export function countFromLink(link: string | string[] | undefined, itemsOnPage: number): number {
  const header = Array.isArray(link) ? link.join(', ') : link;
  if (header) {
    for (const part of header.split(',')) {
      const m = /<([^>]+)>\s*;\s*rel="?last"?/.exec(part);
      if (!m) continue;
      try {
        const page = Number(new URL(m[1], 'https://api.github.com/').searchParams.get('page'));
        if (Number.isInteger(page) && page > 0) return page;
      } catch {
        /* a bad link: fall through */
      }
    }
  }
  return itemsOnPage;
}

interface ApiAnswer {
  status: number;
  json?: unknown;
  res?: FetchResult;
  /** The API refused for its rate limit (403 with x-ratelimit-remaining 0, or 429), or could not be reached. */
  limited: boolean;
}

/** One API call; one that cannot be reached counts as limited (the HTML page is read instead). */
async function api(path: string, ctx: Ctx): Promise<ApiAnswer> {
  const headers: Record<string, string> = { accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' };
  const { token, apiUrl } = ctx.settings;
  if (token) headers.authorization = `Bearer ${token}`;
  const answer = await optional(() => fetchSource(`${apiUrl}${path}`, ctx, headers));
  if (!answer) return { status: 0, limited: true };
  const { status, res, text } = answer;
  const remaining = header(res.headers, 'x-ratelimit-remaining');
  const limited = status === 429 || (status === 403 && (remaining === '0' || /rate limit/i.test(res.body.toString('utf8', 0, 2000))));
  return { status, res, json: parseJson(text), limited };
}

export async function extractRepository(owner: string, repo: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const base = `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`;
  const main = await api(base, ctx);
  // Rate-limited, unreachable, failing, or an answer that is not the API's JSON (a proxy or block page): the HTML page.
  const apiJson = /json/i.test((main.res && header(main.res.headers, 'content-type')) ?? '');
  if (main.limited || main.status >= 500 || !apiJson) return fromHtml(owner, repo, ctx);
  const r = main.json as Json | undefined;
  if (!r || typeof r !== 'object' || main.status !== 200) return undefined; // 404 (missing or private) and the like: the generic preview says so

  const fullName = str(r.full_name) ?? `${owner}/${repo}`;
  const path = `/repos/${fullName.split('/').map(encodeURIComponent).join('/')}`;
  const [languages, contributors, commits, pulls] = await Promise.all([
    api(`${path}/languages`, ctx),
    api(`${path}/contributors?per_page=1&anon=true`, ctx),
    api(`${path}/commits?per_page=1`, ctx),
    api(`${path}/pulls?state=open&per_page=1`, ctx),
  ]);
  const o = (r.owner ?? {}) as Json;
  const obj: CodehostRepository = { id: repositoryObjectId(num(r.id) ?? fullName.toLowerCase()) };
  obj.name = str(r.name) ?? repo;
  if (str(o.login)) obj.owner = { id: ownerObjectId(num(o.id) ?? String(o.login).toLowerCase()), username: String(o.login) };
  const description = str(r.description);
  if (description) obj.description = description;
  if (num(r.stargazers_count) !== undefined) obj.starsCount = num(r.stargazers_count);
  // watchers_count is the stargazers again; subscribers_count is who watches.
  if (num(r.subscribers_count) !== undefined) obj.watchersCount = num(r.subscribers_count);
  if (num(r.forks_count) !== undefined) obj.forksCount = num(r.forks_count);
  if (contributors.status === 200 && Array.isArray(contributors.json))
    obj.contributorsCount = countFromLink(contributors.res?.headers.link, contributors.json.length);
  else if (contributors.status === 204) obj.contributorsCount = 0;
  if (commits.status === 200 && Array.isArray(commits.json)) {
    obj.commitsCount = countFromLink(commits.res?.headers.link, commits.json.length);
    const date = isoDate(at(commits.json, 0, 'commit', 'committer', 'date'));
    if (date) obj.lastCommitDate = date;
  } else if (commits.status === 409) obj.commitsCount = 0; // an empty repository
  let openPulls: number | undefined;
  if (pulls.status === 200 && Array.isArray(pulls.json)) openPulls = countFromLink(pulls.res?.headers.link, pulls.json.length);
  if (openPulls !== undefined) obj.pullRequestsCount = openPulls;
  // open_issues_count counts open pull requests too.
  const openIssues = num(r.open_issues_count);
  if (openIssues !== undefined && openPulls !== undefined) obj.issuesCount = Math.max(0, openIssues - openPulls);
  else if (openIssues !== undefined && r.has_issues === false) obj.issuesCount = 0;
  if (languages.status === 200 && languages.json && typeof languages.json === 'object') obj.languages = languageShares(languages.json as Json);
  else if (str(r.language)) obj.languages = [{ name: String(r.language), color: languageColor(String(r.language)), percentage: 100 }];
  obj.topics = Array.isArray(r.topics) ? r.topics.filter((t): t is string => typeof t === 'string') : [];
  const pushed = isoDate(r.pushed_at);
  if (!obj.lastCommitDate && pushed) obj.lastCommitDate = pushed;

  const avatar = await ctx.hostImage(str(o.avatar_url));
  return {
    type: 'CODEHOST_REPOSITORY',
    ok: true,
    status: 200,
    title: description ? `${fullName}: ${description}` : fullName,
    description: description ?? '',
    ...(avatar ? { image: toImageSet(avatar) } : {}),
    fields: { codehostRepository: obj },
  };
}

// The HTML page, when the API is rate-limited or unreachable.

function attr(html: string, re: RegExp): string | undefined {
  const m = re.exec(html);
  return m ? m[1] : undefined;
}

function count(html: string, ...res: RegExp[]): number | undefined {
  for (const re of res) {
    const v = attr(html, re);
    const n = v ? parseCount(v.replace(/,/g, '')) : undefined;
    if (n !== undefined) return n;
  }
  return undefined;
}

/** What a repository page shows, read with patterns of the current and the older page layouts. */
function parseRepositoryHtml(
  html: string,
): Omit<CodehostRepository, 'id' | 'owner'> & { repositoryId?: string; ownerId?: string; ownerLogin?: string; nwo?: string } {
  const meta = (name: string) => attr(html, new RegExp(`<meta[^>]+name="${name}"[^>]+(?:content|value)="([^"]*)"`, 'i'));
  const nwo = meta('octolytics-dimension-repository_nwo');
  const out: ReturnType<typeof parseRepositoryHtml> = {
    repositoryId: meta('octolytics-dimension-repository_id'),
    ownerId: meta('octolytics-dimension-user_id'),
    ownerLogin: meta('octolytics-dimension-user_login'),
    nwo,
  };
  const starsCount = count(
    html,
    /id="repo-stars-counter-star"[^>]*title="([\d,]+)"/,
    /aria-label="([\d,]+) users? starred this repository"/,
    /\/stargazers"[^>]*>\s*(?:<[^>]+>\s*)*([\d,.]+[kKmM]?)\s*</,
  );
  const forksCount = count(
    html,
    /id="repo-network-counter"[^>]*title="([\d,]+)"/,
    /aria-label="([\d,]+) users? forked this repository"/,
    /\/(?:network\/members|forks)"[^>]*>\s*(?:<[^>]+>\s*)*([\d,.]+[kKmM]?)\s*</,
  );
  const watchersCount = count(
    html,
    /<strong>([\d,.]+[kKmM]?)<\/strong>\s*watching/,
    /aria-label="([\d,]+) users? (?:are )?watching this repository"/,
    /\/watchers"[^>]*>\s*(?:<[^>]+>\s*)*([\d,.]+[kKmM]?)\s*</,
  );
  const issuesCount = count(html, /id="issues-repo-tab-count"[^>]*title="([\d,]+)"/, /\/issues"[^>]*>[\s\S]{0,300}?class="Counter"[^>]*>([\d,]+)</);
  const pullRequestsCount = count(html, /id="pull-requests-repo-tab-count"[^>]*title="([\d,]+)"/, /\/pulls"[^>]*>[\s\S]{0,300}?class="Counter"[^>]*>([\d,]+)</);
  const commitsCount = count(
    html,
    /<strong>([\d,]+)<\/strong>\s*(?:<[^>]+>\s*)*commits?\b/i,
    />\s*([\d,]+) Commits?\s*</,
    /<span class="num text-emphasized">\s*([\d,]+)\s*<\/span>\s*commits?/i,
  );
  const contributorsCount = count(
    html,
    /\/graphs\/contributors"[^>]*>[\s\S]{0,200}?class="Counter[^"]*"[^>]*(?:title="([\d,]+)")?/,
    /\/graphs\/contributors"[^>]*>[\s\S]{0,200}?class="Counter[^"]*"[^>]*>([\d,]+)</,
    /<span class="num text-emphasized">\s*([\d,]+)\s*<\/span>\s*contributors?/i,
  );
  if (starsCount !== undefined) out.starsCount = starsCount;
  if (forksCount !== undefined) out.forksCount = forksCount;
  if (watchersCount !== undefined) out.watchersCount = watchersCount;
  if (issuesCount !== undefined) out.issuesCount = issuesCount;
  if (pullRequestsCount !== undefined) out.pullRequestsCount = pullRequestsCount;
  if (commitsCount !== undefined) out.commitsCount = commitsCount;
  if (contributorsCount !== undefined) out.contributorsCount = contributorsCount;
  const topics = [...html.matchAll(/class="topic-tag[^"]*"[^>]*>\s*([^<]+?)\s*</g)].map((m) => m[1].trim());
  out.topics = [...new Set(topics)];
  const langs: { name: string; color: string; percentage: number }[] = [];
  for (const m of html.matchAll(
    /<span class="color-fg-default text-bold mr-1">([^<]+)<\/span>\s*<span>([\d.]+)%<\/span>|<span class="lang">([^<]+)<\/span>\s*<span class="percent">([\d.]+)%<\/span>/g,
  )) {
    const name = (m[1] ?? m[3]).trim();
    if (!langs.some((l) => l.name === name)) langs.push({ name, color: languageColor(name), percentage: Number(m[2] ?? m[4]) });
  }
  if (langs.length) out.languages = langs;
  const date = isoDate(attr(html, /<relative-time[^>]+datetime="([^"]+)"/));
  if (date) out.lastCommitDate = date;
  return out;
}

async function fromHtml(owner: string, repo: string, ctx: Ctx): Promise<PlatformPreview | undefined> {
  const res = await fetchPage(`${ctx.settings.baseUrl}/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}`, ctx, { 'user-agent': ctx.config.userAgent });
  if (res.status !== 200) return undefined;
  const html = res.body.toString('utf8');
  const parsed = parseRepositoryHtml(html);
  // Not a repository page (a login wall, a rate-limit page): the generic preview.
  if (!parsed.nwo && !parsed.repositoryId && parsed.starsCount === undefined) return undefined;
  const page = await extractPage(res, header(res.headers, 'content-type'), { fetch: ctx.fetch, config: ctx.config });
  const fullName = parsed.nwo ?? `${owner}/${repo}`;
  const { repositoryId, ownerId, ownerLogin, nwo: _nwo, ...fields } = parsed;
  const login = ownerLogin ?? fullName.split('/')[0];
  const obj: CodehostRepository = {
    id: repositoryObjectId(repositoryId ? Number(repositoryId) : fullName.toLowerCase()),
    name: fullName.split('/')[1] ?? repo,
    owner: { id: ownerObjectId(ownerId ? Number(ownerId) : login.toLowerCase()), username: login },
  };
  const description = page.description?.replace(new RegExp(`\\s*-\\s*${escapeRe(fullName)}.*$`), '').trim();
  if (description) obj.description = description;
  Object.assign(obj, fields);
  return {
    type: 'CODEHOST_REPOSITORY',
    ok: true,
    status: res.status,
    title: page.title ?? fullName,
    description: description ?? page.description ?? '',
    ...(page.language ? { language: page.language } : {}),
    ...(page.image?.url ? { imageSource: page.image.url } : {}),
    icons: page.icons,
    fields: { codehostRepository: obj },
  };
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
