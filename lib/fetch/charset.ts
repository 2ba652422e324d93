/**
 * Decoding fetched bytes to text: BOM, then the Content-Type charset, then `<meta charset>` /
 * http-equiv in the first bytes (the WHATWG sniffing algorithm, from encoding-sniffer), then
 * statistical detection (chardet) when nothing is declared. iconv-lite decodes the legacy
 * charsets (Shift_JIS, EUC-JP, GBK, windows-125x, ISO-8859-x ...).
 */
import chardet from 'chardet';
import { ResultType, Sniffer } from 'encoding-sniffer/sniffer';
import iconv from 'iconv-lite';

/** How far into the body a `<meta charset>` is looked for (the WHATWG prescan reads 1024; real pages put it later). */
const META_PRESCAN_BYTES = 4096;

function charsetFromContentType(contentType: string | undefined): string | undefined {
  const m = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType ?? '');
  return m?.[1];
}

/**
 * The encoding of an HTML or text body, as a label iconv-lite understands: BOM, then the
 * Content-Type charset, then `<meta charset>` / http-equiv / the XML declaration in the first
 * bytes (encoding-sniffer's WHATWG prescan), then detection: valid UTF-8 is UTF-8, else chardet.
 * A UTF-8 header over bytes that are not UTF-8 is not believed.
 */
export function detectEncoding(bytes: Uint8Array, contentType?: string): string {
  const declared = charsetFromContentType(contentType);
  const transport = declared && iconv.encodingExists(declared) ? declared : undefined;
  let enc = sniff(bytes, transport);
  // A header that says UTF-8 over bytes that are not UTF-8 is a lie (a common server default):
  // fall back to what the document itself declares, then to detection.
  if (enc && transport && /^utf-?8$/i.test(enc) && !isValidUtf8(bytes.subarray(0, 64 * 1024))) {
    enc = sniff(bytes, undefined);
    if (enc && /^utf-?8$/i.test(enc)) enc = undefined;
  }
  if (!enc) {
    const sample = bytes.subarray(0, 64 * 1024);
    if (isValidUtf8(sample)) return 'utf-8';
    const guess = chardet.detect(sample);
    enc = guess && iconv.encodingExists(guess) ? guess : 'windows-1252';
    // Browsers decode ISO-8859-1 as its superset windows-1252 (curly quotes, euro sign).
    if (/^(ascii|iso-8859-1)$/i.test(enc)) enc = 'windows-1252';
  }
  return iconv.encodingExists(enc) ? enc : 'utf-8';
}

function sniff(bytes: Uint8Array, transport: string | undefined): string | undefined {
  try {
    const sniffer = new Sniffer({ maxBytes: META_PRESCAN_BYTES, transportLayerEncodingLabel: transport });
    sniffer.write(bytes.subarray(0, META_PRESCAN_BYTES));
    return sniffer.resultType !== ResultType.DEFAULT ? sniffer.encoding : undefined;
  } catch {
    return undefined;
  }
}

function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    // stream: a sample cut inside a multi-byte character at its end is still UTF-8.
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
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
