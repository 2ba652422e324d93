/**
 * The page's language: the first declared value that parses (`<html lang>`, og:locale,
 * Content-Language, JSON-LD inLanguage, meta language), then cld3 detection of the page text.
 * Detection also overrules a declaration that is clearly wrong: a different writing system
 * (a CMS default `en` on a Japanese article), or a confident detection on plenty of text.
 */
import { acceptedLanguage, type Detection, detectLanguage } from '../language/detect.js';

/** `en-US` / `en_us` -> `en-US`; `x-default`, `und` and garbage -> undefined. Region kept only when declared. */
export function normalizeLanguage(tag: string | undefined): string | undefined {
  if (!tag) return undefined;
  const m = /^\s*([a-z]{2,3})(?:[-_]([a-z]{4}))?(?:[-_]([a-z]{2}|\d{3}))?(?![a-z])/i.exec(tag.trim());
  if (!m) return undefined;
  let lang = m[1].toLowerCase();
  if (lang === 'und' || lang === 'mul' || lang === 'zxx' || lang === 'xx') return undefined;
  lang = ({ iw: 'he', ji: 'yi', in: 'id', jw: 'jv' } as Record<string, string>)[lang] ?? lang;
  // Three-letter codes that have a two-letter form.
  lang =
    (
      {
        eng: 'en',
        jpn: 'ja',
        deu: 'de',
        ger: 'de',
        fra: 'fr',
        fre: 'fr',
        spa: 'es',
        ita: 'it',
        por: 'pt',
        rus: 'ru',
        zho: 'zh',
        chi: 'zh',
        kor: 'ko',
        nld: 'nl',
        dut: 'nl',
        pol: 'pl',
        tur: 'tr',
        ara: 'ar',
      } as Record<string, string>
    )[lang] ?? lang;
  const region = m[3];
  return region ? `${lang}-${region.toUpperCase()}` : lang;
}

const SCRIPT_OF: [RegExp, string][] = [
  [/^(ja)$/, 'Jpan'],
  [/^(zh|yue)$/, 'Hani'],
  [/^ko$/, 'Hang'],
  [/^(ru|uk|be|bg|sr|mk|kk|ky|mn|tg)$/, 'Cyrl'],
  [/^(ar|fa|ur|ps|sd|ug)$/, 'Arab'],
  [/^(he|yi)$/, 'Hebr'],
  [/^(el)$/, 'Grek'],
  [/^(hi|mr|ne|sa)$/, 'Deva'],
  [/^th$/, 'Thai'],
  [/^(ka)$/, 'Geor'],
  [/^(hy)$/, 'Armn'],
  [/^(bn|as)$/, 'Beng'],
  [/^ta$/, 'Taml'],
  [/^te$/, 'Telu'],
  [/^(km)$/, 'Khmr'],
  [/^(lo)$/, 'Laoo'],
  [/^(my)$/, 'Mymr'],
  [/^(am|ti)$/, 'Ethi'],
  [/^(gu)$/, 'Gujr'],
  [/^(pa)$/, 'Guru'],
  [/^(kn)$/, 'Knda'],
  [/^(ml)$/, 'Mlym'],
  [/^(si)$/, 'Sinh'],
];
const scriptOf = (lang: string) => SCRIPT_OF.find(([re]) => re.test(lang))?.[1] ?? 'Latn';
const primary = (tag: string) => tag.split('-')[0];

/** Does detection overrule the declared language? */
function overrules(declared: string, detected: Detection, textChars: number): boolean {
  const d = primary(declared);
  if (d === detected.language) return false;
  if (!detected.reliable) return false;
  // Chinese and Japanese share Han characters: only kana makes a page Japanese, so leave zh/ja to the declaration.
  if ((d === 'zh' && detected.language === 'ja') || (d === 'ja' && detected.language === 'zh')) return false;
  if (scriptOf(d) !== scriptOf(detected.language)) return detected.probability >= 0.9 && textChars >= 80;
  // Same script (en vs de): the declaration stands; a page in a Latin-script language often declares its UI language.
  return false;
}

export interface LanguageInput {
  declared: string[];
  /** Visible page text (title and description first). */
  text: string;
}

export async function resolveLanguage(input: LanguageInput): Promise<{ language?: string; source: string }> {
  let declared: string | undefined;
  for (const d of input.declared) {
    declared = normalizeLanguage(d);
    if (declared) break;
  }
  const detected = await detectLanguage(input.text);
  if (declared) {
    if (detected && overrules(declared, detected, input.text.length)) return { language: detected.language, source: 'detected (overrules declared)' };
    return { language: declared, source: 'declared' };
  }
  const language = acceptedLanguage(detected);
  return language ? { language, source: 'detected' } : { language: undefined, source: 'none' };
}
