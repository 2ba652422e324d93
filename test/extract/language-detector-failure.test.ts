/**
 * When cld3-asm cannot load (as when a bundle inlined its WebAssembly loader), detection returns
 * nothing, and says so once, loudly, instead of in silence.
 */
jest.mock('cld3-asm', () => ({ loadModule: () => Promise.reject(new Error('Cannot find module nanoid')) }));

import { detectLanguage, setLanguageDetectorLog } from '../../lib/language/detect';

test('a detector that cannot load logs one error and detects nothing', async () => {
  const errors: [string, Record<string, unknown> | undefined][] = [];
  setLanguageDetectorLog({ debug() {}, info() {}, warn() {}, error: (m, e) => errors.push([m, e]) });
  const text = 'The council announced a new transport plan on Tuesday, which experts say will change daily life.';
  await expect(detectLanguage(text)).resolves.toBeUndefined();
  await expect(detectLanguage(text)).resolves.toBeUndefined();
  expect(errors).toHaveLength(1);
  expect(errors[0][0]).toMatch(/language detection is unavailable/);
  expect(JSON.stringify(errors[0][1])).toContain('Cannot find module nanoid');
});
