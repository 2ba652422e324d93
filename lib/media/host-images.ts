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
import type { ImageSizeName } from './image-sizes.js';

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

/** At most this many icon candidates are tried (the first in order that can be hosted wins: `firstIcon`). */
const MAX_ICON_CANDIDATES = 3;

/**
 * The sizes an icon is rendered in: the record's `icon` is one URL, the `original` (its edge
 * colour comes from that rendition). Its thumbnail, medium and large would be PUTs nobody reads.
 */
const ICON_SIZES: readonly ImageSizeName[] = ['original'];

function imageJob(id: string, source: ImageSource, sizes?: readonly ImageSizeName[]): Job<'image'> {
  const input: ImageJobInput = 'bytes' in source ? { bytesBase64: source.bytes.toString('base64') } : { url: source.url };
  if (sizes) input.sizes = [...sizes];
  return { id, kind: 'image', input };
}

function hostedFrom(outcome: JobOutcome<'image'> | undefined): HostedImage | undefined {
  return outcome?.ok ? outcome.result.image : undefined;
}

/** A hosted image with all four sizes (a job asked for no `sizes` has them). */
export function hasAllSizes(h: HostedImage | undefined): h is HostedImage & ImageSet {
  return !!(h?.thumbnail && h.medium && h.large && h.original);
}

/** The MediaImage part of a hosted image (what the spec's objects carry). */
function toMediaImage(h: HostedImage & ImageSet): MediaImage {
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
    return hasAllSizes(h) ? toMediaImage(h) : undefined;
  });
}

/** Hosts one image: its MediaImage (four sizes, source size/format/alpha), or undefined. */
export async function hostImage(source: ImageSource, jobs: JobRunner, options: HostOptions): Promise<MediaImage | undefined> {
  return (await hostImageList([source], jobs, options))[0];
}

/** The record's `image` and `icon`: in one fan-out, or with the icon candidates one at a time where the jobs share the cores (`firstIcon`). */
export async function hostImages(sources: ImageSources, jobs: JobRunner, options: HostOptions): Promise<HostedImages> {
  const image: Job<'image'> | undefined = sources.imageBytes?.length
    ? imageJob('image', { bytes: sources.imageBytes })
    : sources.image?.url
      ? imageJob('image', { url: sources.image.url })
      : undefined;
  const seen = new Set<string>();
  const icons = (sources.icons ?? []).filter((c) => c.url && !seen.has(c.url) && seen.add(c.url)).slice(0, MAX_ICON_CANDIDATES);
  const iconJobs = icons.map((c, i) => imageJob(`icon-${i}`, { url: c.url }, ICON_SIZES));
  if (!image && iconJobs.length === 0) return {};

  const [hostedImage, hostedIcon] = jobs.sharesCpu
    ? await Promise.all([image && hostedOne(image, jobs, options), firstIcon(iconJobs, jobs, options)])
    : await jobs
        .run([...(image ? [image] : []), ...iconJobs], options)
        .then((o) => [hostedFrom(o.get('image')), iconJobs.map((c) => hostedFrom(o.get(c.id))).find((h) => h?.original !== undefined)]);
  const out: HostedImages = {};
  if (hasAllSizes(hostedImage)) out.image = toImageSet(hostedImage);
  if (hostedIcon?.original) {
    out.icon = {
      width: hostedIcon.width,
      height: hostedIcon.height,
      backgroundColor: cssColorToHex(sources.backgroundColor) ?? hostedIcon.edgeColor,
      url: hostedIcon.original.url,
    };
  }
  return out;
}

/** One job's hosted image, or undefined. */
async function hostedOne(job: Job<'image'>, jobs: JobRunner, options: HostOptions): Promise<HostedImage | undefined> {
  return hostedFrom((await jobs.run([job], options)).get(job.id));
}

/**
 * The first icon candidate, in order, that can be hosted. Where the jobs share this machine's
 * cores (`JobRunner.sharesCpu`, the local server) a candidate is tried only when the one before it
 * failed: most pages' first candidate is their icon, and the others' downloads and renders would
 * take CPU from the rest of the record. Where the jobs run elsewhere (worker Lambdas) all are
 * submitted at once with the image (hostImages), so a failed candidate costs no queue round trip.
 */
async function firstIcon(candidates: Job<'image'>[], jobs: JobRunner, options: HostOptions): Promise<HostedImage | undefined> {
  for (const candidate of candidates) {
    if (Date.now() >= options.deadline) break;
    const hosted = await hostedOne(candidate, jobs, options);
    if (hosted?.original) return hosted;
  }
  return undefined;
}
