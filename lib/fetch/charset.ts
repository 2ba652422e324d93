/**
 * Decoding fetched bytes to text: BOM, then the Content-Type charset, then `<meta charset>` /
 * http-equiv in the first bytes (the WHATWG sniffing algorithm, from encoding-sniffer), then
 * statistical detection (chardet) when nothing is declared. iconv-lite decodes the legacy
 * charsets (Shift_JIS, EUC-JP, GBK, windows-125x, ISO-8859-x ...).
 */
import chardet from 'chardet';
import { getEncoding } from 'encoding-sniffer';
import iconv from 'iconv-lite';

const NOT_DECLARED = 'x-not-declared';

export function charsetFromContentType(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '');
  return m?.[1];
}

/** The encoding of an HTML or text body, as a label iconv-lite understands. */
export function detectEncoding(bytes: Uint8Array, contentType?: string): string {
  const declared = charsetFromContentType(contentType);
  const transport = declared && iconv.encodingExists(declared) ? declared : undefined;
  let enc: string;
  try {
    enc = getEncoding(bytes, { transportLayerEncodingLabel: transport, defaultEncoding: NOT_DECLARED, maxBytes: 4096 });
  } catch {
    enc = NOT_DECLARED;
  }
  if (enc.toLowerCase() === NOT_DECLARED) {
    const sample = bytes.subarray(0, 64 * 1024);
    const guess = chardet.detect(sample);
    enc = guess && iconv.encodingExists(guess) ? guess : 'utf-8';
    // chardet reports plain ASCII as ISO-8859-1; UTF-8 is the safer superset.
    if (/^(ascii|iso-8859-1)$/i.test(enc) && isValidUtf8(sample)) enc = 'utf-8';
  }
  return iconv.encodingExists(enc) ? enc : 'utf-8';
}

function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

export function decodeText(bytes: Uint8Array, contentType?: string): { text: string; encoding: string } {
  const encoding = detectEncoding(bytes, contentType);
  const text = iconv.decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), encoding, { stripBOM: true });
  return { text, encoding };
}
