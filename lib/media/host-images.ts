/**
 * Hosting the images of a record: every image source becomes an `image` job for the JobRunner,
 * all run concurrently under the record's deadline. A failed, broken or late image is left out;
 * it never fails the record.
 *
 * Other parts of the pipeline (media, documents, platforms) host their images with `hostImage`
 * (one) or `hostImageList` (many, in one fan-out), and put `toImageSet(...)` or the MediaImage in
 * their objects.
 */
import type { Icon, ImageSet, MediaImage } from '../contract/link.js';
import type { IconCandidate } from '../extract/icons.js';
import type { HostedImage, ImageJobInput } from '../jobs/kinds.js';
import type { Job, JobOutcome, JobRunner, RunOptions } from '../ports.js';
import { cssColorToHex } from './css-color.js';

export interface ImageSources {
  /** A remote image to host as the record's `image`. */
  image?: { url: string };
  /** Bytes already fetched (an IMAGE link) to host as the record's `image`. */
  imageBytes?: Buffer;
  icons?: IconCandidate[];
  backgroundColor?: string;
}

export interface HostedImages {
  image?: ImageSet;
  icon?: Icon;
}

/** A source of one image: a URL (downloaded through the guarded fetcher) or bytes already fetched. */
export type ImageSource = { url: string } | { bytes: Buffer };

export type HostOptions = RunOptions;

/** At most this many icon candidates are tried (concurrently; the first in order that decodes wins). */
const MAX_ICON_CANDIDATES = 3;

function imageJob(id: string, source: ImageSource): Job<'image'> {
  const input: ImageJobInput = 'bytes' in source ? { bytesBase64: source.bytes.toString('base64') } : { url: source.url };
  return { id, kind: 'image', input };
}

function hostedFrom(outcome: JobOutcome<'image'> | undefined): HostedImage | undefined {
  return outcome?.ok ? outcome.result.image : undefined;
}

/** The MediaImage part of a hosted image (what the spec's objects carry). */
function toMediaImage(h: HostedImage): MediaImage {
  return {
    width: h.width,
    height: h.height,
    size: h.size,
    format: h.format,
    hasAlphaChannel: h.hasAlphaChannel,
    thumbnail: h.thumbnail,
    medium: h.medium,
    large: h.large,
    original: h.original,
  };
}

export function toImageSet(image: ImageSet): ImageSet {
  return { thumbnail: image.thumbnail, medium: image.medium, large: image.large, original: image.original };
}

/** Hosts many images in one concurrent fan-out; each result is undefined when that image could not be hosted in time. */
export async function hostImageList(sources: ImageSource[], jobs: JobRunner, options: HostOptions): Promise<(MediaImage | undefined)[]> {
  if (sources.length === 0) return [];
  const list = sources.map((s, i) => imageJob(`image-${i}`, s));
  const outcomes = await jobs.run(list, options);
  return list.map((job) => {
    const h = hostedFrom(outcomes.get(job.id));
    return h ? toMediaImage(h) : undefined;
  });
}

/** Hosts one image: its MediaImage (four sizes, source size/format/alpha), or undefined. */
export async function hostImage(source: ImageSource, jobs: JobRunner, options: HostOptions): Promise<MediaImage | undefined> {
  return (await hostImageList([source], jobs, options))[0];
}

/** The record's `image` and `icon`, fanned out together. */
export async function hostImages(sources: ImageSources, jobs: JobRunner, options: HostOptions): Promise<HostedImages> {
  const list: Job<'image'>[] = [];
  if (sources.imageBytes?.length) list.push(imageJob('image', { bytes: sources.imageBytes }));
  else if (sources.image?.url) list.push(imageJob('image', { url: sources.image.url }));
  const seen = new Set<string>();
  const icons = (sources.icons ?? []).filter((c) => c.url && !seen.has(c.url) && seen.add(c.url)).slice(0, MAX_ICON_CANDIDATES);
  list.push(...icons.map((c, i) => imageJob(`icon-${i}`, { url: c.url })));
  if (list.length === 0) return {};

  const outcomes = await jobs.run(list, options);
  const out: HostedImages = {};
  const image = hostedFrom(outcomes.get('image'));
  if (image) out.image = toImageSet(image);
  for (let i = 0; i < icons.length; i++) {
    const icon = hostedFrom(outcomes.get(`icon-${i}`));
    if (!icon) continue;
    out.icon = {
      width: icon.width,
      height: icon.height,
      backgroundColor: cssColorToHex(sources.backgroundColor) ?? icon.edgeColor,
      url: icon.original.url,
    };
    break;
  }
  return out;
}
