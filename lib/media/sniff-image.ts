/**
 * The real format of image bytes, from their magic numbers (never from the URL's extension or
 * the Content-Type header, which lie often enough).
 */
export type ImageFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'heif' | 'tiff' | 'bmp' | 'ico' | 'svg';

const ascii = (b: Uint8Array, at: number, len: number) => Buffer.from(b.subarray(at, at + len)).toString('latin1');

export function sniffImageFormat(bytes: Uint8Array): ImageFormat | undefined {
  const b = bytes;
  if (b.length < 4) return undefined;
  if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'jpeg';
  if (b[0] === 0x89 && ascii(b, 1, 3) === 'PNG' && b[4] === 0x0d && b[5] === 0x0a) return 'png';
  if (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a') return 'gif';
  if (ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 4) === 'WEBP') return 'webp';
  if (ascii(b, 4, 4) === 'ftyp') {
    const brands = ascii(b, 8, Math.min(64, b.length - 8));
    if (/avif|avis/.test(brands)) return 'avif';
    if (/hei[cx]|hev[cx]|mif1|msf1/.test(brands)) return 'heif';
    return undefined;
  }
  if ((b[0] === 0x49 && b[1] === 0x49 && b[2] === 0x2a && b[3] === 0) || (b[0] === 0x4d && b[1] === 0x4d && b[2] === 0 && b[3] === 0x2a)) return 'tiff';
  if (b[0] === 0x42 && b[1] === 0x4d && b.length >= 26) return 'bmp';
  // ICO: reserved 0, type 1 (icon) or 2 (cursor), at least one entry.
  if (b.length >= 22 && b[0] === 0 && b[1] === 0 && (b[2] === 1 || b[2] === 2) && b[3] === 0 && (b[4] | (b[5] << 8)) > 0) return 'ico';
  if (looksLikeSvg(b)) return 'svg';
  return undefined;
}

function looksLikeSvg(b: Uint8Array): boolean {
  let head = Buffer.from(b.subarray(0, 4096)).toString('utf8');
  head = head.replace(/^\uFEFF/, '');
  // Skip the XML declaration, comments, processing instructions and a doctype before the root element.
  head = head.replace(/^\s*(<\?[\s\S]*?\?>\s*|<!--[\s\S]*?-->\s*|<!DOCTYPE[^>[]*(\[[\s\S]*?\])?\s*>\s*)*/i, '');
  return /^<svg[\s>]/i.test(head) || /^<[A-Za-z_][\w.-]*:svg[\s>]/.test(head);
}
