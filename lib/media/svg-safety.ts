/**
 * Makes SVG bytes safe to rasterize: nothing in them may make the renderer load anything.
 * librsvg already refuses most external loads for in-memory input, but the guard must not depend
 * on that, so before sharp sees the SVG:
 *  - a document type with entity declarations (XXE, billion laughs) is refused outright;
 *  - any other DOCTYPE and every processing instruction but the XML declaration
 *    (`<?xml-stylesheet?>`) is removed;
 *  - every `href` / `xlink:href` / `src` that is not a same-document reference (`#id`) or an
 *    inline raster image (`data:image/png|jpeg|gif|webp`) is removed (<image>, <use>, <feImage>,
 *    <a>, <script>, xi:include ...);
 *  - character references are decoded first, and CSS escapes are refused, so neither can hide a URL;
 *  - every CSS `url(...)` that is not `url(#id)` becomes `none`, and `@import` rules are dropped.
 */
import { ExpectedFailure } from '../errors.js';

export class UnsafeSvgError extends ExpectedFailure {}

const SAFE_REF = /^\s*(#|data:image\/(png|jpeg|gif|webp);)/i;

export function sanitizeSvg(bytes: Uint8Array): Buffer {
  let text = Buffer.from(bytes)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  if (/<!ENTITY/i.test(text)) throw new UnsafeSvgError('SVG declares entities');
  // Character references could spell `url(` or `http:` past the patterns below: decode those that
  // are not markup-significant (same meaning in XML). CSS escapes (`\75 rl(`) are refused.
  text = text.replace(/&#(x[0-9a-f]+|\d+);/gi, (ref, code: string) => {
    const cp = code[0].toLowerCase() === 'x' ? parseInt(code.slice(1), 16) : parseInt(code, 10);
    return cp >= 0x20 && cp < 0x7f && !'<>&"\''.includes(String.fromCharCode(cp)) ? String.fromCharCode(cp) : ref;
  });
  if (/\\[0-9a-z]/i.test(text)) throw new UnsafeSvgError('SVG contains CSS escapes');
  text = text.replace(/<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>/gi, '');
  text = text.replace(/<\?(?!xml\s)[\s\S]*?\?>/gi, '');
  // Attribute references (quoted values only: unquoted attributes are not XML and fail to parse anyway).
  text = text.replace(/(\s)((?:[A-Za-z_][\w.-]*:)?(?:href|src))\s*=\s*("[^"]*"|'[^']*')/gi, (whole, space: string, _name: string, quoted: string) =>
    SAFE_REF.test(quoted.slice(1, -1)) ? whole : space,
  );
  // CSS in style attributes, <style> elements and presentation attributes (fill="url(...)").
  text = text.replace(/url\(\s*(['"]?)([^)]*?)\1\s*\)/gi, (whole, _q: string, target: string) => (target.trim().startsWith('#') ? whole : 'none'));
  text = text.replace(/@import[^;]*;?/gi, '');
  return Buffer.from(text, 'utf8');
}
