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
  /** The sources that could not be hosted for a lasting reason of their own (ImageJobResult.lasting): another try soon would fail again. */
  failed?: { image?: true; icon?: true };
}

/** A source of one image: a URL (downloaded through the guarded fetcher) or bytes already fetched. */
export type ImageSource = { url: string } | { bytes: Buffer };

export type HostOptions = RunOptions;

/** At most this many icon candidates are tried, in order, in one job (the first that can be hosted wins: ImageJobInput.alternatives). */
const MAX_ICON_CANDIDATES = 3;

/**
 * The sizes an icon is rendered in: the record's `icon` is one URL, the `original` (its edge
 * colour comes from that rendition). Its thumbnail, medium and large would be PUTs nobody reads.
 */
const ICON_SIZES: readonly ImageSizeName[] = ['original'];

function imageJob(id: string, source: ImageSource, sizes?: readonly ImageSizeName[], alternatives?: string[]): Job<'image'> {
  const input: ImageJobInput = 'bytes' in source ? { bytesBase64: source.bytes.toString('base64') } : { url: source.url };
  if (sizes) input.sizes = [...sizes];
  if (alternatives?.length) input.alternatives = alternatives;
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
  return { width: h.width, height: h.height, size: h.size, format: h.format, hasAlphaChannel: h.hasAlphaChannel, ...toImageSet(h) };
}

/** The ImageSet part of a hosted image or a MediaImage: the four sizes, and the placeholders and the alt text when it has them. */
export function toImageSet(image: ImageSet): ImageSet {
  const { dominantColor, blurhash, alt } = image;
  return {
    thumbnail: image.thumbnail,
    medium: image.medium,
    large: image.large,
    original: image.original,
    ...(dominantColor !== undefined ? { dominantColor } : {}),
    ...(blurhash !== undefined ? { blurhash } : {}),
    ...(alt !== undefined ? { alt } : {}),
  };
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

/**
 * The record's `image` and `icon`, in one fan-out: the image's job, and one job for the icon that
 * tries its candidates in order (the first that can be hosted wins; most pages' first candidate is
 * their icon, so the others are rarely downloaded, and a failed one costs no queue round trip).
 */
export async function hostImages(sources: ImageSources, jobs: JobRunner, options: HostOptions): Promise<HostedImages> {
  const image: Job<'image'> | undefined = sources.imageBytes?.length
    ? imageJob('image', { bytes: sources.imageBytes })
    : sources.image?.url
      ? imageJob('image', { url: sources.image.url })
      : undefined;
  const seen = new Set<string>();
  const icons = (sources.icons ?? []).filter((c) => c.url && !seen.has(c.url) && seen.add(c.url)).slice(0, MAX_ICON_CANDIDATES);
  const icon =
    icons.length > 0
      ? imageJob(
          'icon',
          { url: icons[0].url },
          ICON_SIZES,
          icons.slice(1).map((c) => c.url),
        )
      : undefined;
  if (!image && !icon) return {};

  const outcomes = await jobs.run([...(image ? [image] : []), ...(icon ? [icon] : [])], options);
  const hostedImage = hostedFrom(outcomes.get('image'));
  const hostedIcon = hostedFrom(outcomes.get('icon'));
  const out: HostedImages = {};
  const lasting = (o: JobOutcome<'image'> | undefined) => o?.ok === true && o.result.lasting === true;
  if (lasting(outcomes.get('image'))) out.failed = { image: true };
  if (lasting(outcomes.get('icon'))) out.failed = { ...out.failed, icon: true };
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
