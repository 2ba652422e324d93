/**
 * What the raw bytes of a PDF say without parsing it (no pdf.js, no sharp): used before pdf.js
 * runs and when it cannot (encrypted, corrupt, a bomb, a job that missed the deadline). Kept apart
 * from pdf.ts so the preview bundle can use it without the rendering code.
 */
export function isPdf(bytes: Buffer): boolean {
  return bytes.subarray(0, 1024).includes('%PDF-');
}

/** Page objects counted in the raw bytes (`/Type /Page`, not `/Pages`). */
function countPageObjects(bytes: Buffer): number {
  const s = bytes.toString('latin1');
  return s.match(/\/Type\s*\/Page(?![a-zA-Z])/g)?.length ?? 0;
}

/** The largest `/Count` of a page tree node: the page count even when only a prefix was read. */
function declaredPageCount(bytes: Buffer): number {
  const s = bytes.toString('latin1');
  let max = 0;
  for (const m of s.matchAll(/\/Type\s*\/Pages\b[^>]{0,200}?\/Count\s+(\d{1,9})|\/Count\s+(\d{1,9})[^>]{0,200}?\/Type\s*\/Pages\b/g)) {
    max = Math.max(max, Number(m[1] ?? m[2]));
  }
  return max;
}

export function pdfFacts(bytes: Buffer): { pageCount: number; isEncrypted: boolean } {
  return { pageCount: declaredPageCount(bytes) || countPageObjects(bytes), isEncrypted: bytes.includes('/Encrypt') };
}
