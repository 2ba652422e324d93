/**
 * Hosting the media of the platforms' posts and products (X, Instagram, TikTok, Amazon, Etsy):
 * images hosted as MediaImage (four sizes, through the image job) and videos probed as the spec's Video (the video job of lib/media/video.ts: ffprobe on a prefix
 * of the MP4, poster and snapshots). A video that cannot be probed in time is represented by its
 * hosted poster image, never by invented Video fields.
 */
import type { ImageSet, MediaImage, Video } from '../../contract/link.js';
import { toImageSet } from '../../media/host-images.js';
import { fileNameOf } from '../../media/media-fetch.js';
import type { PlatformContext } from '../types.js';

/** At most this many media items per post are hosted (a carousel can have 20). */
const MAX_MEDIA_ITEMS = 8;

export interface MediaSource {
  kind: 'image' | 'video';
  /** The image, or the video's poster. */
  image?: string;
  /** The video file (the best MP4 variant). */
  video?: string;
  title?: string;
  author?: string;
  /** The platform's own description of the image (X's alt text, Instagram's accessibility caption). */
  alt?: string;
}

/** Hosts every item concurrently; an item whose image and video both fail is left out. */
export async function hostMedia(items: MediaSource[], ctx: PlatformContext): Promise<(MediaImage | Video)[]> {
  const list = items.slice(0, MAX_MEDIA_ITEMS);
  const out = await Promise.all(
    list.map(async (m, i) => {
      const [hosted, video] = await Promise.all([
        ctx.hostImage(m.image),
        m.kind === 'video' && m.video ? probeVideo(m.video, ctx, `video-${i}`) : Promise.resolve(undefined),
      ]);
      const alt = m.alt?.trim().slice(0, 1000);
      const poster = hosted && alt ? { ...hosted, alt } : hosted;
      if (video) {
        if (poster) video.image = toImageSet(poster);
        if (m.title && !video.title) video.title = m.title;
        if (m.author && !video.author) video.author = m.author;
        return video;
      }
      return poster;
    }),
  );
  return out.filter((x): x is MediaImage | Video => x !== undefined);
}

/**
 * Hosts a list of image URLs, one by one through `ctx.hostImage`: duplicates and empty entries
 * dropped, at most MAX_MEDIA_ITEMS, the ones that fail left out (ClipsVideo, RetailerProduct and
 * MarketplaceProduct carry MediaImage lists). Not lib/media/host-images.ts's `hostImages`, which
 * hosts a record's top-level image and icon.
 */
export async function hostImageUrls(urls: (string | undefined)[], ctx: PlatformContext): Promise<MediaImage[]> {
  const uniq = [...new Set(urls.filter((u): u is string => !!u))].slice(0, MAX_MEDIA_ITEMS);
  const out = await Promise.all(uniq.map((u) => ctx.hostImage(u)));
  return out.filter((x): x is MediaImage => x !== undefined);
}

/** The video job on a URL: the spec's Video, or undefined when it cannot be probed before the deadline. */
async function probeVideo(url: string, ctx: PlatformContext, id = 'video'): Promise<Video | undefined> {
  const input = { url, fetchedAt: new Date().toISOString(), contentType: 'video/mp4', name: fileNameOf(url) };
  try {
    const outcome = (await ctx.jobs.run([{ id, kind: 'video', input }], { requestId: ctx.requestId, deadline: ctx.deadline })).get(id);
    return outcome?.ok ? outcome.result.video : undefined;
  } catch {
    return undefined;
  }
}

/** The top-level ImageSet of a record from its first hosted medium (a MediaImage, or a Video's poster). */
export function firstImageSet(media: (MediaImage | Video)[]): ImageSet | undefined {
  for (const m of media) {
    if ('thumbnail' in m && 'original' in m) return toImageSet(m as MediaImage);
    const v = m as Video;
    if (v.image) return toImageSet(v.image);
  }
  return undefined;
}
