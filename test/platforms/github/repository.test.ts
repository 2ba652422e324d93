/** GitHub (platform `codehost`), its repositories (CODEHOST_REPOSITORY): URL forms, the REST API, the counts and the HTML fallback. */
import { stableId } from '../../../lib/ids';
import { matchGithub } from '../../../lib/platforms/github/index';
import { countFromLink, languageShares } from '../../../lib/platforms/github/repository';
import { image, json, page, startWorld, type World } from '../harness';

// The platform's sources on hosts of their own (the harness maps every host onto the fixture
// server): they answer under /<host>/..., apart from the generic fetch of the same link.
const SOURCES = { LINKPREVIEW_GITHUB_API_URL: 'https://gh-api', LINKPREVIEW_GITHUB_BASE_URL: 'https://gh' };

const REPO = {
  id: 424242,
  node_id: 'R_x',
  name: 'paper-kite',
  full_name: 'skyfolk/paper-kite',
  private: false,
  owner: { login: 'skyfolk', id: 9001, avatar_url: '', type: 'Organization' },
  html_url: 'https://github.com/skyfolk/paper-kite',
  description: 'Fold, glue and fly: a paper kite toolkit',
  fork: false,
  pushed_at: '2024-02-03T04:05:06Z',
  stargazers_count: 1530,
  watchers_count: 1530,
  subscribers_count: 42,
  language: 'TypeScript',
  has_issues: true,
  forks_count: 77,
  open_issues_count: 19,
  topics: ['kites', 'paper', 'origami'],
  default_branch: 'main',
};

function repoRoutes(w: World, headers: Record<string, string> = {}) {
  const api = '/gh-api/repos/skyfolk/paper-kite';
  const link = (path: string, last: number) =>
    `<https://api.github.com/repositories/424242/${path}&page=2>; rel="next", <https://api.github.com/repositories/424242/${path}&page=${last}>; rel="last"`;
  w.server.route(api, json({ ...REPO, owner: { ...REPO.owner, avatar_url: `${w.origin}/img/org.png` } }, 200, headers));
  w.server.route(`${api}/languages`, json({ TypeScript: 9000, CSS: 700, Shell: 300, Frobnicate: 0 }));
  w.server.route(`${api}/contributors?per_page=1&anon=true`, json([{ login: 'a' }], 200, { link: link('contributors?per_page=1&anon=true', 31) }));
  w.server.route(
    `${api}/commits?per_page=1`,
    json([{ sha: 'abc', commit: { committer: { date: '2024-02-01T10:00:00Z' } } }], 200, { link: link('commits?per_page=1', 1234) }),
  );
  w.server.route(`${api}/pulls?state=open&per_page=1`, json([{ number: 9 }], 200, { link: link('pulls?state=open&per_page=1', 5) }));
}

describe('codehost matcher: one test per URL form', () => {
  it.each([
    ['https://github.com/skyfolk/paper-kite'],
    ['https://www.github.com/skyfolk/paper-kite/'],
    ['https://github.com/skyfolk/paper-kite.git'],
    ['https://github.com/skyfolk/paper-kite/tree/main/src'],
    ['https://github.com/skyfolk/paper-kite/blob/main/README.md#L10'],
    ['https://github.com/skyfolk/paper-kite/issues'],
    ['https://github.com/skyfolk/paper-kite/issues/12'],
    ['https://github.com/skyfolk/paper-kite/pull/9/files'],
  ])('%s', (link) => {
    expect(matchGithub(new URL(link))).toEqual({ kind: 'repository', ids: { owner: 'skyfolk', repo: 'paper-kite' } });
  });
  it.each([
    'https://github.com/skyfolk',
    'https://github.com/settings/profile',
    'https://github.com/orgs/skyfolk/people',
    'https://github.com/',
    'https://gist.github.com/skyfolk/abc',
    'https://github.com/topics/kites',
  ])('does not match %s', (link) => expect(matchGithub(new URL(link))).toBeUndefined());
});

describe('codehost helpers', () => {
  it('languages: percentages of bytes, one decimal, linguist colours, unknown -> fallback colour', () => {
    expect(languageShares({ TypeScript: 9000, CSS: 700, Shell: 300, Frobnicate: 0, Brainwave: 1 })).toEqual([
      { name: 'TypeScript', color: '#3178c6', percentage: 90 },
      { name: 'CSS', color: '#663399', percentage: 7 },
      { name: 'Shell', color: '#89e051', percentage: 3 },
      { name: 'Brainwave', color: '#ededed', percentage: 0 },
    ]);
  });
  it('Link header rel="last" page is the count; without one, the items on the page', () => {
    expect(countFromLink('<https://api.github.com/x?per_page=1&page=2>; rel="next", <https://api.github.com/x?per_page=1&page=87>; rel="last"', 1)).toBe(87);
    expect(countFromLink(undefined, 1)).toBe(1);
    expect(countFromLink(undefined, 0)).toBe(0);
  });
});

describe('codehost repository from the REST API', () => {
  let w: World;
  let r: any;
  beforeAll(async () => {
    w = await startWorld({ env: { ...SOURCES, GITHUB_TOKEN: 'ghp_test' } });
    repoRoutes(w);
    w.server.route('/img/org.png', await image(50, 50));
    r = await w.preview('https://github.com/skyfolk/paper-kite/blob/main/README.md');
  });
  afterAll(() => w.close());

  it('does not guess a language from one short sentence (detection must be reliable)', () => {
    expect(r.language).toBeUndefined();
  });
  it('is a CODEHOST_REPOSITORY with title, description and image', () => {
    expect(r).toMatchObject({ siteName: 'GitHub', themeColor: '#1e2327', author: { name: 'skyfolk', url: 'https://github.com/skyfolk' } });
    expect(r).toMatchObject({
      ok: true,
      type: 'CODEHOST_REPOSITORY',
      status: 200,
      title: 'skyfolk/paper-kite: Fold, glue and fly: a paper kite toolkit',
      description: 'Fold, glue and fly: a paper kite toolkit',
    });
    expect(r.image.original.url).toMatch(/^http:\/\/assets\.test\//);
  });
  it('sends the token and the API version', () => {
    const req = w.server.requests.find((x) => x.url === '/gh-api/repos/skyfolk/paper-kite')!;
    expect(req.headers.authorization).toBe('Bearer ghp_test');
    expect(req.headers['x-github-api-version']).toBe('2022-11-28');
  });
  it.each([
    ['id', stableId('codehost:repository:424242')],
    ['name', 'paper-kite'],
    ['owner', { id: stableId('codehost:user:9001'), username: 'skyfolk' }],
    ['description', 'Fold, glue and fly: a paper kite toolkit'],
    ['starsCount', 1530],
    ['forksCount', 77],
    ['watchersCount', 42],
    ['issuesCount', 14],
    ['pullRequestsCount', 5],
    ['contributorsCount', 31],
    ['commitsCount', 1234],
    ['topics', ['kites', 'paper', 'origami']],
    ['lastCommitDate', '2024-02-01T10:00:00.000Z'],
    [
      'languages',
      [
        { name: 'TypeScript', color: '#3178c6', percentage: 90 },
        { name: 'CSS', color: '#663399', percentage: 7 },
        { name: 'Shell', color: '#89e051', percentage: 3 },
      ],
    ],
  ])('codehostRepository.%s', (field, value) => {
    expect(r.codehostRepository[field]).toEqual(value);
  });
});

const HTML_PAGE = `<!DOCTYPE html><html lang="en"><head><title>GitHub - skyfolk/paper-kite: Fold, glue and fly</title>
<meta name="octolytics-dimension-user_id" content="9001"><meta name="octolytics-dimension-user_login" content="skyfolk">
<meta name="octolytics-dimension-repository_id" content="424242"><meta name="octolytics-dimension-repository_nwo" content="skyfolk/paper-kite">
<meta property="og:title" content="skyfolk/paper-kite: Fold, glue and fly"><meta property="og:description" content="Fold, glue and fly - skyfolk/paper-kite">
</head><body>
<span id="issues-repo-tab-count" title="14" class="Counter">14</span><span id="pull-requests-repo-tab-count" title="5" class="Counter">5</span>
<a class="topic-tag topic-tag-link" href="/topics/kites">kites</a><a class="topic-tag topic-tag-link" href="/topics/paper">paper</a>
<span class="d-none d-sm-inline"><strong>1,234</strong> <span aria-label="Commits on main">commits</span></span>
<relative-time datetime="2024-02-01T10:00:00Z" class="no-wrap">Feb 1, 2024</relative-time>
<strong>42</strong> watching <span id="repo-stars-counter-star" title="1,530" class="Counter">1.5k</span>
<span id="repo-network-counter" title="77" class="Counter">77</span>
<a href="/skyfolk/paper-kite/graphs/contributors" class="Link--primary no-underline">Contributors <span title="31" class="Counter">31</span></a>
<span class="color-fg-default text-bold mr-1">TypeScript</span> <span>90.0%</span>
<span class="color-fg-default text-bold mr-1">CSS</span> <span>7.0%</span>
</body></html>`;

describe('codehost fallbacks', () => {
  let w: World;
  afterEach(() => w.close());

  it.each([
    ['403 rate limit', 403, { 'x-ratelimit-remaining': '0' }],
    ['429', 429, {}],
  ])('%s on the API: the repository is read from the HTML page', async (_name, status, headers) => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/gh-api/repos/skyfolk/paper-kite', json({ message: 'API rate limit exceeded for 127.0.0.1.' }, status, headers));
    w.server.route('/gh/skyfolk/paper-kite', page(HTML_PAGE));
    const r = await w.preview('https://github.com/skyfolk/paper-kite');
    expect(r).toMatchObject({ ok: true, type: 'CODEHOST_REPOSITORY', title: 'skyfolk/paper-kite: Fold, glue and fly', description: 'Fold, glue and fly' });
    expect(r.codehostRepository).toMatchObject({
      id: stableId('codehost:repository:424242'),
      name: 'paper-kite',
      owner: { id: stableId('codehost:user:9001'), username: 'skyfolk' },
      starsCount: 1530,
      forksCount: 77,
      watchersCount: 42,
      issuesCount: 14,
      pullRequestsCount: 5,
      commitsCount: 1234,
      contributorsCount: 31,
      topics: ['kites', 'paper'],
      lastCommitDate: '2024-02-01T10:00:00.000Z',
      languages: [
        { name: 'TypeScript', color: '#3178c6', percentage: 90 },
        { name: 'CSS', color: '#663399', percentage: 7 },
      ],
    });
  });

  it('rate-limited API and a page that is not a repository: the generic preview', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/gh-api/repos/skyfolk/paper-kite', json({ message: 'rate limit' }, 429));
    w.server.route('/gh/skyfolk/paper-kite', page('<html><head><title>Too many requests</title></head></html>', 429));
    w.server.route('/github.com/skyfolk/paper-kite', page('<html><head><title>Too many requests</title></head></html>', 429));
    const r = await w.preview('https://github.com/skyfolk/paper-kite');
    expect(r).toMatchObject({ ok: false, type: 'PAGE', status: 429 });
  });

  it('a repository that does not exist (404): the generic preview, ok:false', async () => {
    w = await startWorld({ env: SOURCES });
    w.server.route('/gh-api/repos/skyfolk/nothing', json({ message: 'Not Found' }, 404));
    w.server.route('/github.com/skyfolk/nothing', page('<html><head><title>Page not found · GitHub</title></head></html>', 404));
    const r = await w.preview('https://github.com/skyfolk/nothing');
    expect(r).toMatchObject({ ok: false, type: 'PAGE', status: 404 });
  });

  it('an empty repository: no commits (409), no contributors (204)', async () => {
    w = await startWorld({ env: SOURCES });
    const api = '/gh-api/repos/skyfolk/empty';
    w.server.route(api, json({ ...REPO, name: 'empty', full_name: 'skyfolk/empty', open_issues_count: 0, topics: [] }));
    w.server.route(`${api}/languages`, json({}));
    w.server.route(`${api}/contributors?per_page=1&anon=true`, { status: 204, body: '' });
    w.server.route(`${api}/commits?per_page=1`, json({ message: 'Git Repository is empty.' }, 409));
    w.server.route(`${api}/pulls?state=open&per_page=1`, json([]));
    const r = await w.preview('https://github.com/skyfolk/empty');
    expect(r.codehostRepository).toMatchObject({ commitsCount: 0, contributorsCount: 0, pullRequestsCount: 0, issuesCount: 0, languages: [], topics: [] });
  });
});
