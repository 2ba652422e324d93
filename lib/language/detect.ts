/**
 * Statistical language detection with cld3-asm (Google's CLD3 compiled to WebAssembly).
 * The module is loaded once per process, lazily, and the identifier reused for every page.
 */
import { loadModule } from 'cld3-asm';
import { createConsoleLogger, errorFields, type Log } from '../log.js';

export interface Detection {
  /** Short BCP-47 primary subtag (`en`, `ja`, `zh`, `he` ...). */
  language: string;
  probability: number;
  reliable: boolean;
}

interface Identifier {
  findLanguage(text: string): { language: string; probability: number; is_reliable: boolean };
}

let identifier: Promise<Identifier | undefined> | undefined;
let log: Log = createConsoleLogger('error');

/** Where the one load failure is reported (the Lambdas pass their Powertools logger). */
export function setLanguageDetectorLog(to: Log): void {
  log = to;
}

function getIdentifier(): Promise<Identifier | undefined> {
  identifier ??= loadModule()
    .then((factory) => factory.create(0, 1000) as unknown as Identifier)
    .catch((err: unknown) => {
      // Loud, once per process: every record would silently miss its language otherwise (as it does
      // on Lambda when a bundle inlines cld3-asm's loader).
      log.error('language detection is unavailable: cld3-asm failed to load; records get no detected language', { ...errorFields(err), component: 'language' });
      return undefined;
    });
  return identifier;
}

/** cld3 still uses a few deprecated codes; transliterated variants (`ja-Latn`) say nothing about the page's language. */
const RENAMED: Record<string, string> = { iw: 'he', jw: 'jv', in: 'id', mo: 'ro' };

/** Text to detect: at most this many characters (cld3 looks at the first 1000 bytes it is given). */
const SAMPLE_CHARS = 1200;

export async function detectLanguage(text: string): Promise<Detection | undefined> {
  const sample = text
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, SAMPLE_CHARS);
  if (sample.replace(/[\s\d\p{P}\p{S}]/gu, '').length < 20) return undefined;
  const id = await getIdentifier();
  if (!id) return undefined;
  let r: { language: string; probability: number; is_reliable: boolean };
  try {
    r = id.findLanguage(sample);
  } catch {
    return undefined;
  }
  if (!r?.language || r.language === 'und' || /-latn$/i.test(r.language)) return undefined;
  const language = RENAMED[r.language] ?? r.language.toLowerCase();
  return { language, probability: r.probability, reliable: r.is_reliable };
}

/**
 * The language of a detection when it is sure enough to go on a record: cld3 calls it reliable,
 * or gives it a probability of at least 0.7. `strict`, for a few words (a post's title and
 * description, where cld3 is often sure and wrong): reliable and at least 0.9.
 */
export function acceptedLanguage(detection: Detection | undefined, options: { strict?: boolean } = {}): string | undefined {
  if (!detection) return undefined;
  const sure = options.strict ? detection.reliable && detection.probability >= 0.9 : detection.reliable || detection.probability >= 0.7;
  return sure ? detection.language : undefined;
}
