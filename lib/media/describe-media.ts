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
import type { Audio, DocumentInfo, LinkRecord, LinkType, TextInfo, Video } from '../contract/link.js';
import { decodeText } from '../fetch/charset.js';
import { header } from '../fetch/headers.js';
import type { FetchResult } from '../fetch/types.js';
import type { JobKind, JobResult, MediaJobInput } from '../jobs/kinds.js';
import { acceptedLanguage, detectLanguage } from '../language/detect.js';
import type { BlobStore, Job, JobRunner, RunOptions } from '../ports.js';
import { fileNameOf } from './media-fetch.js';
import { isPdf, pdfFacts } from './pdf-facts.js';
import { countText, firstHeadingLine, leadSentences, readingMinutes, scaleCounts, storeRawText } from './text.js';

export const MEDIA_LINK_TYPES: ReadonlySet<LinkType> = new Set(['VIDEO', 'AUDIO', 'DOCUMENT', 'TEXT']);

export interface MediaPorts {
  config: Config;
  blobs: BlobStore;
  jobs: JobRunner;
}

/** Record fields for a VIDEO, AUDIO, DOCUMENT or TEXT link; `{}` for other types. */
export async function describeMedia(type: LinkType, res: FetchResult, ports: MediaPorts, options: RunOptions): Promise<Partial<LinkRecord>> {
  if (!MEDIA_LINK_TYPES.has(type) || res.status < 200 || res.status >= 300) return {};
  const name = fileNameOf(res.finalUrl, header(res.headers, 'content-disposition'));
  if (type === 'TEXT') return describeText(res, name, ports.blobs);

  const input: MediaJobInput = {
    url: res.finalUrl,
    declaredSize: res.declaredSize,
    contentType: header(res.headers, 'content-type'),
    lastModified: header(res.headers, 'last-modified'),
    fetchedAt: new Date().toISOString(),
    name,
  };
  // The main fetch's bytes are reused when they are the whole file (no second download).
  const limit = type === 'DOCUMENT' ? ports.config.maxMediaBytes : Math.min(ports.config.mediaProbeBytes, ports.config.maxMediaBytes);
  if (!res.truncated && res.body.length > 0 && res.body.length <= limit) input.bytesBase64 = res.body.toString('base64');

  // Without a result the record keeps its type; the title falls back to the file name (finalize).
  if (type === 'VIDEO') return videoFields((await jobResult({ id: 'video', kind: 'video', input }, ports.jobs, options))?.video);
  if (type === 'AUDIO') return audioFields((await jobResult({ id: 'audio', kind: 'audio', input }, ports.jobs, options))?.audio);
  const document = (await jobResult({ id: 'document', kind: 'document', input }, ports.jobs, options))?.document;
  if (document) return documentFields(document);
  // A PDF whose job failed or missed the deadline (a 100k-page document, pdf.js stuck) still
  // gets what the bytes say cheaply: its page objects, encryption and a title from the file name.
  if (!isPdf(res.body)) return {};
  const known: DocumentInfo = { title: name ?? 'Untitled document', ...pdfFacts(res.body), type: 'pdf' };
  return { document: known, title: known.title };
}

/** The job's result, or undefined when it failed or came after the deadline. */
async function jobResult<K extends JobKind>(job: Job<K>, jobs: JobRunner, options: RunOptions): Promise<JobResult<K> | undefined> {
  const outcome = (await jobs.run([job], options)).get(job.id);
  return outcome?.ok ? outcome.result : undefined;
}

function videoFields(video: Video | undefined): Partial<LinkRecord> {
  if (!video) return {};
  const out: Partial<LinkRecord> = { video };
  if (video.title) out.title = video.title;
  if (video.image) out.image = video.image;
  return out;
}

function audioFields(audio: Audio | undefined): Partial<LinkRecord> {
  if (!audio) return {};
  const out: Partial<LinkRecord> = { audio };
  if (audio.title) out.title = audio.title;
  const by = [audio.artist, audio.album].filter(Boolean).join(' · ');
  if (by) out.description = by;
  if (audio.albumArtwork) out.image = audio.albumArtwork;
  return out;
}

function documentFields(document: DocumentInfo): Partial<LinkRecord> {
  const out: Partial<LinkRecord> = { document, title: document.title };
  if (document.description) out.description = document.description;
  if (document.language) out.language = document.language;
  if (document.image) out.image = document.image;
  return out;
}

/** TEXT: size, reading time, the raw text as an asset, the language, and a title from the first line or the file name. */
async function describeText(res: FetchResult, name: string | undefined, blobs: BlobStore): Promise<Partial<LinkRecord>> {
  const contentType = header(res.headers, 'content-type');
  const { text } = decodeText(res.body, contentType);
  const clean = text.replace(/\u0000/g, '');
  const textInfo: TextInfo = {
    size: res.declaredSize ?? res.body.length,
    estimatedReadingTime: readingMinutes(countText(clean)),
  };
  const out: Partial<LinkRecord> = { text: textInfo };
  if (res.truncated && res.declaredSize && res.body.length > 0) {
    // Only a prefix was read: the reading time is scaled to the whole.
    textInfo.estimatedReadingTime = readingMinutes(scaleCounts(countText(clean), res.declaredSize / res.body.length));
  }
  if (clean.trim()) textInfo.rawTextUrl = await storeRawText(clean, blobs);
  const structured = /json|csv|tab-separated/i.test(contentType ?? '');
  const heading = structured ? undefined : firstHeadingLine(clean);
  const title = heading ?? name;
  if (title) out.title = title;
  if (!structured) {
    const description = leadSentences(clean, heading);
    if (description) out.description = description;
    const language = acceptedLanguage(await detectLanguage(clean.slice(0, 5000)));
    if (language) out.language = language;
  }
  return out;
}
