/**
 * Prices as shop pages print them (Amazon, Etsy), in every store's locale: `$1,234.56`, `1.234,56 €`,
 * `€149,00`, `£8.99`, `¥1,280`, `R$ 1.299,90`, `1 234,56 zł`, `CHF 1'234.50`, `₹1,23,456.00`.
 * The currency follows from the symbol or code, and where a symbol is ambiguous (`$`, `kr`, `¥`)
 * from the store's country: the public suffix of its host (`co.uk`, `de`), here called its TLD.
 */

/** The currency of each store country, by its host's public suffix (Amazon's country stores). */
export const TLD_CURRENCY: Record<string, string> = {
  com: 'USD',
  ca: 'CAD',
  'com.mx': 'MXN',
  'com.br': 'BRL',
  'co.uk': 'GBP',
  de: 'EUR',
  fr: 'EUR',
  it: 'EUR',
  es: 'EUR',
  nl: 'EUR',
  'com.be': 'EUR',
  ie: 'EUR',
  at: 'EUR',
  se: 'SEK',
  pl: 'PLN',
  'com.tr': 'TRY',
  ae: 'AED',
  sa: 'SAR',
  eg: 'EGP',
  in: 'INR',
  'co.jp': 'JPY',
  jp: 'JPY',
  cn: 'CNY',
  'com.au': 'AUD',
  sg: 'SGD',
  'co.za': 'ZAR',
  ch: 'CHF',
  'com.ng': 'NGN',
  cl: 'CLP',
  'com.co': 'COP',
};

/** Store countries that write `1.234,56` (comma decimal). */
const COMMA_DECIMAL = new Set(['de', 'fr', 'it', 'es', 'nl', 'com.be', 'at', 'se', 'pl', 'com.tr', 'com.br', 'eg', 'cl', 'com.co']);

const SYMBOLS: [RegExp, string | ((tld: string) => string)][] = [
  [/R\$/, 'BRL'],
  [/C\$|CA\$|CDN\$/, 'CAD'],
  [/A\$|AU\$/, 'AUD'],
  [/S\$|SG\$/, 'SGD'],
  [/MX\$/, 'MXN'],
  [/US\$/, 'USD'],
  [/€/, 'EUR'],
  [/£/, 'GBP'],
  [/₹/, 'INR'],
  [/₺/, 'TRY'],
  [/zł/i, 'PLN'],
  [/₩/, 'KRW'],
  [/₽/, 'RUB'],
  [/₪/, 'ILS'],
  [/฿/, 'THB'],
  [/\bAED\b|د\.إ/, 'AED'],
  [/\bSAR\b|ر\.س/, 'SAR'],
  [/\bEGP\b|ج\.م/, 'EGP'],
  [/\bCHF\b/, 'CHF'],
  [/\bTL\b/, 'TRY'],
  [/\bkr\b|\bSEK\b/i, (t) => (t === 'se' ? 'SEK' : 'SEK')],
  [/¥|￥|円/, (t) => (t === 'cn' ? 'CNY' : 'JPY')],
  [/\$/, (t) => (['com.mx', 'ca', 'com.au', 'sg', 'com.br', 'cl', 'com.co'].includes(t) ? TLD_CURRENCY[t] : 'USD')],
];

const CODES = /\b(USD|EUR|GBP|JPY|CAD|AUD|MXN|BRL|INR|SEK|PLN|TRY|AED|SAR|EGP|SGD|CNY|CHF|ZAR|NZD|DKK|NOK|CZK|HUF|KRW|RUB|ILS|THB)\b/;

export interface Price {
  price: number;
  currency?: string;
}

/** A locale number: the last separator followed by 1-2 digits is the decimal point, unless told otherwise. */
export function parseLocaleNumber(raw: string, commaDecimal?: boolean): number | undefined {
  const s = raw.replace(/[\s\u00a0\u202f']/g, '');
  if (!/^\d[\d.,]*$/.test(s)) return undefined;
  const lastDot = s.lastIndexOf('.');
  const lastComma = s.lastIndexOf(',');
  let decimal: string | undefined;
  if (lastDot >= 0 && lastComma >= 0) decimal = lastDot > lastComma ? '.' : ',';
  else {
    const sep = lastDot >= 0 ? '.' : lastComma >= 0 ? ',' : undefined;
    if (sep) {
      const after = s.length - s.lastIndexOf(sep) - 1;
      const count = s.split(sep).length - 1;
      if (count > 1)
        decimal = undefined; // 1.234.567 / 1,234,567: thousands
      else if (after === 3)
        decimal = commaDecimal === undefined ? undefined : commaDecimal === (sep === ',') ? sep : undefined; // 1.234 (de) / 1,234 (com)
      else decimal = sep;
    }
  }
  const thousands = decimal === '.' ? /,/g : decimal === ',' ? /\./g : /[.,]/g;
  let t = s.replace(thousands, '');
  if (decimal === ',') t = t.replace(',', '.');
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

/** A price in a store country's locale, with its currency (symbol or code, else the country's). */
export function parsePrice(raw: string | undefined, tld = 'com'): Price | undefined {
  if (!raw) return undefined;
  const text = raw.replace(/\u00a0|\u202f/g, ' ').trim();
  // A range ("$10.99 - $19.99"): the low end.
  const first = /(\d[\d.,\s']*\d|\d)/.exec(text);
  if (!first) return undefined;
  const price = parseLocaleNumber(first[1].trim(), COMMA_DECIMAL.has(tld));
  if (price === undefined) return undefined;
  let currency: string | undefined = CODES.exec(text)?.[1];
  if (!currency) {
    for (const [re, cur] of SYMBOLS) {
      if (re.test(text)) {
        currency = typeof cur === 'string' ? cur : cur(tld);
        break;
      }
    }
  }
  return { price, currency: currency ?? TLD_CURRENCY[tld] };
}
