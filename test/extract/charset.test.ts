import iconv from 'iconv-lite';
import { decodeText, detectEncoding } from '../../lib/fetch/charset';
import { extract } from './helpers';

// Each fixture is built here with iconv-lite's encoder: the page says what it is in the way noted.
const SAMPLES: { charset: string; title: string; text: string }[] = [
  { charset: 'Shift_JIS', title: '阿部寛のホームページ', text: '日本語のページです。カタカナとひらがなと漢字が混ざっています。' },
  { charset: 'EUC-JP', title: '東京の天気予報', text: '今日は晴れのち曇り、夜は雨が降るでしょう。気温は二十度です。' },
  { charset: 'GBK', title: '中文网页标题', text: '这是一个用简体中文写的网页，用来测试字符集的解码是否正确。' },
  { charset: 'GB2312', title: '新闻中心', text: '今天的新闻非常重要，请大家仔细阅读并转告朋友们。' },
  { charset: 'windows-1251', title: 'Новости дня', text: 'Съешь же ещё этих мягких французских булок, да выпей чаю.' },
  { charset: 'windows-1252', title: 'Café “Crème” – déjà vu', text: 'Les élèves ont mangé des crêpes à la française, naïvement.' },
  { charset: 'ISO-8859-1', title: 'Straße und Größe', text: 'Übermäßig schöne Grüße aus München, sagte der Bäcker.' },
  { charset: 'ISO-8859-2', title: 'Zażółć gęślą jaźń', text: 'Pchnąć w tę łódź jeża lub ośm skrzyń fig, powiedział żółw.' },
  { charset: 'ISO-8859-5', title: 'Привет мир', text: 'Это простой текст на русском языке для проверки.' },
  { charset: 'ISO-8859-7', title: 'Καλημέρα κόσμε', text: 'Ξεσκεπάζω την ψυχοφθόρα βδελυγμία, είπε ο δάσκαλος.' },
  { charset: 'ISO-8859-15', title: 'Prix en € et œuvres', text: 'Le cœur de l’œuvre coûte dix euros, ça va.' },
];

const doc = (title: string, text: string, metaCharset?: string) =>
  `<!doctype html><html><head>${metaCharset ? `<meta charset="${metaCharset}">` : ''}<title>${title}</title></head><body><p>${text}</p></body></html>`;

describe('charset decoding', () => {
  it.each(SAMPLES)('$charset declared in Content-Type decodes correctly', async ({ charset, title, text }) => {
    const bytes = iconv.encode(doc(title, text), charset);
    const r = await extract(bytes, { headers: { 'content-type': `text/html; charset=${charset}` } });
    expect(r.title).toBe(title);
    expect(r.description).toBe(text.length >= 60 ? text : undefined);
  });

  it.each(SAMPLES)('$charset declared only in <meta charset> decodes correctly', async ({ charset, title, text }) => {
    const bytes = iconv.encode(doc(title, text, charset), charset);
    const r = await extract(bytes, { headers: { 'content-type': 'text/html' } });
    expect(r.title).toBe(title);
  });

  it('reads the http-equiv form of the declaration', () => {
    const html = `<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"><title>阿部寛</title></head></html>`;
    const { text } = decodeText(iconv.encode(html, 'Shift_JIS'), 'text/html');
    expect(text).toContain('<title>阿部寛</title>');
  });

  // Undeclared: chardet needs ordinary prose, as real pages have.
  const PROSE: Record<string, string> = {
    Shift_JIS: '東京都は今日、新しい交通計画を発表しました。市民の皆さんの意見を聞きながら、来年から順番に実施する予定です。',
    'EUC-JP': '東京都は今日、新しい交通計画を発表しました。市民の皆さんの意見を聞きながら、来年から順番に実施する予定です。',
    GBK: '北京市政府今天发布了新的交通规划，计划从明年开始分阶段实施，并将广泛听取市民的意见和建议。',
    'windows-1251': 'В Москве прошла встреча министров иностранных дел. Стороны обсудили вопросы сотрудничества в области экономики, культуры и образования.',
  };
  it.each(Object.keys(PROSE))('detects undeclared %s from the bytes', (charset) => {
    const long = `<html><head><title>${PROSE[charset].slice(0, 10)}</title></head><body><p>${PROSE[charset]}</p><p>${PROSE[charset]}</p></body></html>`;
    const { text, encoding } = decodeText(iconv.encode(long, charset), 'text/html');
    expect(text).toContain(PROSE[charset]);
    expect(iconv.encodingExists(encoding)).toBe(true);
  });

  it('lets a BOM win over a wrong Content-Type charset', () => {
    const bytes = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<title>Ünïcödé</title>', 'utf8')]);
    expect(detectEncoding(bytes, 'text/html; charset=iso-8859-1').toLowerCase()).toBe('utf-8');
    expect(decodeText(bytes, 'text/html; charset=iso-8859-1').text).toBe('<title>Ünïcödé</title>');
  });

  it('lets the Content-Type charset win over <meta charset>', () => {
    const bytes = iconv.encode('<meta charset="utf-8"><title>Новости</title>', 'windows-1251');
    expect(decodeText(bytes, 'text/html; charset=windows-1251').text).toContain('Новости');
  });

  it('falls back to UTF-8 for plain ASCII', () => {
    expect(detectEncoding(Buffer.from('<title>plain</title>'), 'text/html').toLowerCase()).toBe('utf-8');
  });

  it('decodes a multi-byte character split across parser chunks', async () => {
    // 64 KiB chunk boundary falls inside a 2-byte Shift_JIS character when the prefix has odd length.
    const filler = 'a'.repeat(64 * 1024 - 1);
    const html = `<html><head><title>日本</title></head><body><!--${filler}--><p>${'漢字のテキストです。'.repeat(10)}</p></body></html>`;
    const r = await extract(iconv.encode(html, 'Shift_JIS'), { headers: { 'content-type': 'text/html; charset=Shift_JIS' } });
    expect(r.description).toBe('漢字のテキストです。'.repeat(10));
  });
});
