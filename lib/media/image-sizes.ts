import { ASSET_METADATA } from '../asset-metadata.js';
import { assetKey } from '../storage-keys.js';

/**
 * The sizes every hosted image is rendered in: the one place they are defined (design.md,
 * "Image sizes"). `box` is the square a rendition must fit in; `original` keeps the source's own
 * size. A rendition is never larger than the source (no upscaling).
 */
export const IMAGE_SIZES = [
  { name: 'thumbnail', box: 320 },
  { name: 'medium', box: 640 },
  { name: 'large', box: 1280 },
  { name: 'original', box: undefined },
] as const;

export type ImageSizeName = (typeof IMAGE_SIZES)[number]['name'];

export const IMAGE_SIZE_NAMES: readonly ImageSizeName[] = IMAGE_SIZES.map((s) => s.name);

/** The output format of every rendition (alpha is kept; animated sources stay animated in `original`). */
const RENDITION_FORMAT = 'webp' as const;
export const RENDITION_CONTENT_TYPE = 'image/webp';

/** The content-addressed key of one rendition: `assets/<sha256 of source bytes>/<size>.webp`. */
export function renditionKey(sourceSha256: string, size: ImageSizeName): string {
  return assetKey(sourceSha256, `${size}.${RENDITION_FORMAT}`);
}

/**
 * A rendition other than `original` (which carries the manifest) is stored with its dimensions as
 * metadata, so one HEAD finds a stored one ready to use: a page's content image finds the `medium`
 * the record's image job made of the same source (lib/page/page-images.ts).
 */
const RENDITION_SIZE_METADATA = ASSET_METADATA.size;

export function renditionSizeMetadata(size: { width: number; height: number }): Record<string, string> {
  return { [RENDITION_SIZE_METADATA]: `${size.width}x${size.height}` };
}

/** The dimensions a rendition was stored with, or undefined (none, or not readable). */
export function readRenditionSize(metadata: Record<string, string> | undefined): { width: number; height: number } | undefined {
  const m = /^(\d{1,6})x(\d{1,6})$/.exec(metadata?.[RENDITION_SIZE_METADATA] ?? '');
  if (!m) return undefined;
  const width = Number(m[1]);
  const height = Number(m[2]);
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** The dimensions of a `width` x `height` image scaled to fit in `box` x `box`, never enlarged. */
export function fitWithin(width: number, height: number, box: number | undefined): { width: number; height: number } {
  if (box === undefined || (width <= box && height <= box)) return { width, height };
  const scale = Math.min(box / width, box / height);
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)) };
}
