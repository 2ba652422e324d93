/**
 * Hosting an image produced inside a worker job (a video frame, album art, a PDF page render):
 * the image job's own function is called directly with the bytes (no nested job), so the
 * renditions, keys and dedupe are exactly those of every other hosted image.
 */
import type { ImageSet } from '../contract/link.js';
import type { JobContext } from '../jobs/context.js';
import { hasAllSizes, toImageSet } from './host-images.js';
import { runImageJob } from './images.js';

/** The four sizes of `bytes` as an ImageSet, or undefined when the image cannot be hosted. */
export async function hostImageBytes(bytes: Buffer, ctx: JobContext): Promise<ImageSet | undefined> {
  if (bytes.length === 0 || bytes.length > ctx.config.maxImageBytes) return undefined;
  const r = await runImageJob({ bytesBase64: bytes.toString('base64') }, ctx);
  return hasAllSizes(r.image) ? toImageSet(r.image) : undefined;
}
