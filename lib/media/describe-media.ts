/**
 * VIDEO, AUDIO, DOCUMENT and TEXT links: what the pipeline adds to the record for each. The heavy
 * part (download, ffprobe/ffmpeg, pdf.js, rendering frames and pages) is one job per link, run by
 * the JobRunner under the record's deadline (on AWS in the worker). TEXT is light and done here:
 * the main fetch already holds the text (up to LINKPREVIEW_MAX_PAGE_BYTES).
 *
 * Whatever fails or comes late is left out: the record keeps its type, a title from the file name,
 * and `ok` as the fetch said.
 */
import type { Config } from '../config.js';
import type { LinkRecord, LinkType } from '../contract/link.js';
import { decodeText } from '../fetch/charset.js';
import type { FetchResult } from '../fetch/safe-fetch.js';
import { detectLanguage } from '../language/detect.js';
import type { BlobStore, Job, JobRunner, RunOptions } from '../ports.js';
import type { AudioJobResult } from './audio-job.js';
import { fileNameOf, type MediaJobInput } from './media-fetch.js';
import type { DocumentJobResult } from './pdf.js';
import { isPdf, pdfFacts } from './pdf-facts.js';
import { countText, firstHeadingLine, leadSentences, readingMinutes, scaleCounts, storeRawText } from './text.js';
import type { VideoJobResult } from './video.js';

export const MEDIA_LINK_TYPES: ReadonlySet<LinkType> = new Set(['VIDEO', 'AUDIO', 'DOCUMENT', 'TEXT']);

export interface MediaPorts {
  config: Config;
  blobs: BlobStore;
  jobs: JobRunner;
}

/** Record fields for a VIDEO, AUDIO, DOCUMENT or TEXT link; `{}` for other types. */
export async function describeMedia(type: LinkType, res: FetchResult, ports: MediaPorts, options: RunOptions): Promise<Partial<LinkRecord>> {
  if (!MEDIA_LINK_TYPES.has(type) || res.status < 200 || res.status >= 300) return {};
  const name = fileNameOf(res.finalUrl, header(res, 'content-disposition'));
  if (type === 'TEXT') return describeText(res, name, ports.blobs);

  const input: MediaJobInput = {
    url: res.finalUrl,
    declaredSize: res.declaredSize,
    contentType: header(res, 'content-type'),
    lastModified: header(res, 'last-modified'),
    fetchedAt: new Date().toISOString(),
    name,
  };
  // The main fetch's bytes are reused when they are the whole file (no second download).
  const limit = type === 'DOCUMENT' ? ports.config.maxMediaBytes : Math.min(ports.config.mediaProbeBytes, ports.config.maxMediaBytes);
  if (!res.truncated && res.body.length > 0 && res.body.length <= limit) input.bytesBase64 = res.body.toString('base64');

  const kind = type === 'VIDEO' ? 'video' : type === 'AUDIO' ? 'audio' : 'document';
  const job = { id: kind, kind, input } as Job;
  const outcome = (await ports.jobs.run([job], options)).get(kind);
  // Without a result the record keeps its type; the title falls back to the file name (finalize).
  const out: Partial<LinkRecord> = {};
  if (!outcome?.ok || (kind === 'document' && !(outcome.result as DocumentJobResult).document)) {
    // A PDF whose job failed or missed the deadline (a 100k-page document, pdf.js stuck) still
    // gets what the bytes say cheaply: its page objects, encryption and a title from the file name.
    if (kind === 'document' && isPdf(res.body)) {
      out.document = { title: name ?? 'Untitled document', ...pdfFacts(res.body), type: 'pdf' };
      out.title = out.document.title;
    }
    return out;
  }

  if (kind === 'video') {
    const r = outcome.result as VideoJobResult;
    if (!r.video) return out;
    out.video = r.video;
    if (r.video.title) out.title = r.video.title;
    if (r.video.image) out.image = r.video.image;
  } else if (kind === 'audio') {
    const r = outcome.result as AudioJobResult;
    if (!r.audio) return out;
    out.audio = r.audio;
    if (r.audio.title) out.title = r.audio.title;
    const by = [r.audio.artist, r.audio.album].filter(Boolean).join(' · ');
    if (by) out.description = by;
    if (r.audio.albumArtwork) out.image = r.audio.albumArtwork;
  } else {
    const r = outcome.result as DocumentJobResult;
    if (!r.document) return out;
    out.document = r.document;
    out.title = r.document.title;
    if (r.document.description) out.description = r.document.description;
    if (r.document.language) out.language = r.document.language;
    if (r.document.image) out.image = r.document.image;
  }
  return out;
}

/** TEXT: size, reading time, the raw text as an asset, the language, and a title from the first line or the file name. */
async function describeText(res: FetchResult, name: string | undefined, blobs: BlobStore): Promise<Partial<LinkRecord>> {
  const contentType = header(res, 'content-type');
  const { text } = decodeText(res.body, contentType);
  const clean = text.replace(/\u0000/g, '');
  const out: Partial<LinkRecord> = {
    text: {
      size: res.declaredSize ?? res.body.length,
      estimatedReadingTime: readingMinutes(countText(clean)),
    },
  };
  if (res.truncated && res.declaredSize && res.body.length > 0) {
    // Only a prefix was read: the reading time is scaled to the whole.
    out.text!.estimatedReadingTime = readingMinutes(scaleCounts(countText(clean), res.declaredSize / res.body.length));
  }
  if (clean.trim()) out.text!.rawTextUrl = await storeRawText(clean, blobs);
  const structured = /json|csv|tab-separated/i.test(contentType ?? '');
  const heading = structured ? undefined : firstHeadingLine(clean);
  const title = heading ?? name;
  if (title) out.title = title;
  if (!structured) {
    const description = leadSentences(clean, heading);
    if (description) out.description = description;
    const language = (await detectLanguage(clean.slice(0, 5000)))?.language;
    if (language) out.language = language;
  }
  return out;
}

function header(res: FetchResult, name: string): string | undefined {
  const v = res.headers[name];
  return Array.isArray(v) ? v[0] : v;
}
