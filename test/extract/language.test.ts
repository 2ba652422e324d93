import { normalizeLanguage } from '../../lib/extract/language';
import { extract, page } from './helpers';

const JA =
  '東京都は今日、新しい交通計画を発表しました。市民の皆さんの意見を聞きながら、来年から順番に実施する予定です。関係者によると、計画には新しい路線の建設も含まれています。';
const DE =
  'Die Stadtverwaltung hat heute einen neuen Verkehrsplan vorgestellt. Die Bürgerinnen und Bürger sollen in den kommenden Wochen ihre Meinung dazu äußern können, bevor der Stadtrat entscheidet.';

describe('language', () => {
  it('normalizes to a short BCP-47 code, keeping a declared region', () => {
    expect(normalizeLanguage('en')).toBe('en');
    expect(normalizeLanguage('EN_us')).toBe('en-US');
    expect(normalizeLanguage('pt-BR')).toBe('pt-BR');
    expect(normalizeLanguage('zh-Hant-TW')).toBe('zh-TW');
    expect(normalizeLanguage('x-default')).toBeUndefined();
    expect(normalizeLanguage('und')).toBeUndefined();
  });

  it('takes <html lang>, then og:locale, then Content-Language, then JSON-LD inLanguage', async () => {
    const text = `<p>${DE}</p>`;
    expect((await extract(page('<meta property="og:locale" content="fr_FR">', text, ' lang="de-AT"'))).language).toBe('de-AT');
    expect((await extract(page('<meta property="og:locale" content="de_DE">', text))).language).toBe('de-DE');
    expect((await extract(page('', text), { headers: { 'content-language': 'de' } })).language).toBe('de');
    expect((await extract(page('<script type="application/ld+json">{"@type":"Article","headline":"x","inLanguage":"de"}</script>', text))).language).toBe('de');
  });

  it('detects the language of the page text with cld3 when nothing is declared', async () => {
    const r = await extract(page('<title>交通計画</title>', `<p>${JA}</p>`));
    expect(r.language).toBe('ja');
    expect(r.sources.language).toBe('detected');
    expect((await extract(page('', `<p>${DE}</p>`))).language).toBe('de');
  });

  it('overrules a clearly wrong declaration (a CMS default en on a Japanese article)', async () => {
    const r = await extract(page('<title>交通計画について</title>', `<p>${JA}</p>`, ' lang="en"'));
    expect(r.language).toBe('ja');
  });

  it('keeps a declaration in the same script (an English UI over German text is not "clearly wrong")', async () => {
    expect((await extract(page('', `<p>${DE}</p>`, ' lang="en"'))).language).toBe('en');
  });
});
