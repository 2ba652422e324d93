/**
 * Hosting the images of a record: every image source becomes a job for the JobRunner, run
 * concurrently under the record's deadline. A failed or late image is left out.
 * (The image issue implements the `image` job kind; until then nothing is hosted.)
 */
import type { Icon, ImageSet } from '../contract/link.js';
import type { IconCandidate } from '../extract/extract-page.js';
import type { JobRunner } from '../ports.js';

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

export async function hostImages(_sources: ImageSources, _jobs: JobRunner, _options: { requestId: string; deadline: number }): Promise<HostedImages> {
  return {};
}
